//! Frame sampling policies (FORMATS.md §4): which frame indices of a video with `T` frames a
//! configuration with `N` frames sees, reproducing each evaluation harness exactly.

/// `linspace` (lmms-eval and most model wrappers): `np.linspace(0, T-1, N, dtype=int)`, i.e.
/// `floor(i * ((T-1)/(N-1)))` in binary64 with the last index forced to `T-1`; `N = 1`
/// gives `[0]`. With `N > T` indices repeat, as numpy's do.
pub fn linspace(t: u64, n: u64) -> Vec<u64> {
    if n == 0 || t == 0 {
        return Vec::new();
    }
    if n == 1 {
        return vec![0];
    }
    let step = (t - 1) as f64 / (n - 1) as f64;
    let mut v: Vec<u64> = (0..n).map(|i| (i as f64 * step).floor() as u64).collect();
    v[n as usize - 1] = t - 1;
    v
}

/// The distinct indices of a sample, sorted: what a budget actually showed the model.
pub fn frame_set(mut idx: Vec<u64>) -> Vec<u64> {
    idx.sort_unstable();
    idx.dedup();
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linspace_matches_numpy() {
        // np.linspace(0, 63, 16, dtype=int)
        assert_eq!(
            linspace(64, 16),
            [0, 4, 8, 12, 16, 21, 25, 29, 33, 37, 42, 46, 50, 54, 58, 63]
        );
        // np.linspace(0, 99, 4, dtype=int)
        assert_eq!(linspace(100, 4), [0, 33, 66, 99]);
        assert_eq!(linspace(5, 1), [0]);
        assert_eq!(linspace(1, 3), [0, 0, 0]);
        assert_eq!(frame_set(linspace(3, 5)), [0, 1, 2]);
        assert!(linspace(10, 0).is_empty());
    }
}
