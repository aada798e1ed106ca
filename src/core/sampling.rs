//! Frame sampling policies (docs/formats.md §4): which frame indices of a video with `T` frames a
//! configuration with `N` frames sees, reproducing each evaluation harness exactly.
//!
//! Every policy function mirrors its harness's arithmetic step by step (binary64 in the
//! harness's order, Python `int()` truncation, round half to even where the harness uses
//! `np.round` or Python `round`), because a frame off by one is a different frame: the frame
//! view must show what the model saw, not an approximation. Where a harness would crash or
//! index outside the video (an empty video, a zero-frame budget), the function returns no
//! frames instead; each such case is documented on the function. The values are checked
//! against the harnesses' own formulas in `tests/data/sampling_vectors.jsonl`, written by
//! `tests/reference/sampling_vectors.py`.

use serde::Deserialize;

/// The most indices one sample may hold. A budget or an `fps` rate taken from input data could
/// ask for billions of frames; no harness samples more than a few thousand, so anything above
/// this is a data error, reported instead of allocated.
pub const MAX_INDICES: u64 = 1 << 24;

/// How one configuration sampled its frames (`dataset.json` → `configs`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ConfigSampling {
    /// The sampling policy's name (`uniform`, `nested`, ...).
    pub policy: String,
    /// The largest budget of a `nested` grid.
    #[serde(default)]
    pub base: Option<u64>,
    /// Sampling rate of an `fps` policy.
    #[serde(default)]
    pub fps: Option<f64>,
    /// True when the policy is a guess (an importer inferred it from a model wrapper),
    /// so its frames are `assumed`, not `reproduced`.
    #[serde(default)]
    pub inferred: bool,
}

/// The sampling policies docs/formats.md §4 defines.
pub const POLICIES: [&str; 7] = [
    "linspace",
    "interior",
    "fps",
    "segment_mid",
    "uniform_round",
    "dense_start",
    "nested",
];

/// A frame sampling policy (docs/formats.md §4), as named in `dataset.json` → `configs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    /// `np.linspace(0, T-1, N, dtype=int)` (lmms-eval and most model wrappers).
    Linspace,
    /// VLMEvalKit `nframe` mode: `N` frames strictly inside the video.
    Interior,
    /// VLMEvalKit `fps` mode: one frame every `video_fps / fps` frames; the count follows from
    /// the video's duration, not from the configuration's `frames`.
    Fps {
        /// Target sampling rate, in frames per second of video.
        fps: f64,
    },
    /// InternVL / MVBench: the middle of `N` equal segments.
    SegmentMid,
    /// docs/measures.md §15: rounded (half to even) uniform positions over the whole video.
    UniformRound,
    /// docs/measures.md §15: rounded uniform positions over the first third of the video.
    DenseStart,
    /// The controlled intervention: every `base / N`-th frame of the `base`-frame linspace
    /// grid, so that lower budgets' frames are kept at every higher budget.
    Nested {
        /// The largest budget of the grid.
        base: u64,
    },
}

impl Policy {
    /// The policy of a configuration in `dataset.json`. Unknown names, `nested` without a
    /// positive `base` and `fps` without a positive, finite `fps` are errors, since no frame
    /// could be computed from them.
    pub fn from_config(c: &ConfigSampling) -> Result<Policy, String> {
        match c.policy.as_str() {
            "linspace" => Ok(Policy::Linspace),
            "interior" => Ok(Policy::Interior),
            "segment_mid" => Ok(Policy::SegmentMid),
            "uniform_round" => Ok(Policy::UniformRound),
            "dense_start" => Ok(Policy::DenseStart),
            "fps" => match c.fps {
                Some(fps) if fps.is_finite() && fps > 0.0 => Ok(Policy::Fps { fps }),
                Some(fps) => Err(format!(
                    "policy \"fps\" needs a positive sampling rate \"fps\", found {fps}"
                )),
                None => Err(
                    "policy \"fps\" needs \"fps\" (the sampling rate in frames per second)".into(),
                ),
            },
            "nested" => match c.base {
                Some(0) => Err("policy \"nested\" needs a positive \"base\", found 0".into()),
                Some(base) => Ok(Policy::Nested { base }),
                None => Err("policy \"nested\" needs \"base\" (the largest budget)".into()),
            },
            other => Err(format!(
                "unknown policy {other:?}; known policies: {}",
                POLICIES.join(", ")
            )),
        }
    }

    /// The policy's name as written in `dataset.json`.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Linspace => "linspace",
            Policy::Interior => "interior",
            Policy::Fps { .. } => "fps",
            Policy::SegmentMid => "segment_mid",
            Policy::UniformRound => "uniform_round",
            Policy::DenseStart => "dense_start",
            Policy::Nested { .. } => "nested",
        }
    }
}

/// The frame indices `policy` samples from a video of `t` frames for a configuration of `n`
/// frames, as its harness would (duplicates kept where the harness repeats a frame).
/// `video_fps` is the video's frame rate, needed by [`Policy::Fps`] only, which ignores `n`.
/// Errors: a budget above [`MAX_INDICES`], a missing or invalid `video_fps` for `fps`, a
/// `nested` budget that does not divide the base.
pub fn indices(
    policy: &Policy,
    t: u64,
    n: u64,
    video_fps: Option<f64>,
) -> Result<Vec<u64>, String> {
    if let Policy::Fps { fps: rate } = policy {
        let Some(vfps) = video_fps else {
            return Err("policy \"fps\" needs the video's frame rate (fps in items.jsonl)".into());
        };
        return fps(t, vfps, *rate);
    }
    if n > MAX_INDICES {
        return Err(format!(
            "a budget of {n} frames is more than the {MAX_INDICES} frames a sample may hold"
        ));
    }
    Ok(match policy {
        Policy::Linspace => linspace(t, n),
        Policy::Interior => interior(t, n),
        Policy::SegmentMid => segment_mid(t, n),
        Policy::UniformRound => uniform_round(t, n),
        Policy::DenseStart => dense_start(t, n),
        Policy::Nested { base } => nested(t, n, *base)?,
        // Handled above, before the budget check that does not apply to it.
        Policy::Fps { .. } => Vec::new(),
    })
}

/// The step of `np.linspace(0, T-1, N)`, as numpy computes it: `float(T-1) / (N-1)`.
/// Only for `t >= 1` and `n >= 2`.
fn linspace_step(t: u64, n: u64) -> f64 {
    (t - 1) as f64 / (n - 1) as f64
}

/// Element `i` of `np.linspace(0, T-1, N, dtype=int)` given its step; only for `t >= 1`,
/// `n >= 2`, `i < n`. numpy writes `stop` over the last element (so it is `T-1` even when
/// `i * step` rounds below it) and floors the others.
fn linspace_at(t: u64, n: u64, step: f64, i: u64) -> u64 {
    if i == n - 1 {
        t - 1
    } else {
        (i as f64 * step).floor() as u64
    }
}

/// `linspace` (lmms-eval and most model wrappers): `np.linspace(0, T-1, N, dtype=int)`, i.e.
/// `floor(i * ((T-1)/(N-1)))` in binary64 with the last index forced to `T-1`; `N = 1`
/// gives `[0]`. With `N > T` indices repeat, as numpy's do (`T = 1` gives `N` zeros).
/// `N = 0` gives nothing; so does `T = 0`, where numpy would return negative indices of a
/// video that has no frames.
pub fn linspace(t: u64, n: u64) -> Vec<u64> {
    if n == 0 || t == 0 {
        return Vec::new();
    }
    if n == 1 {
        return vec![0];
    }
    let step = linspace_step(t, n);
    (0..n).map(|i| linspace_at(t, n, step, i)).collect()
}

/// `interior` (VLMEvalKit `nframe` mode): `step = T / (N+1)` in binary64, then `int(i * step)`
/// for `i = 1..=N`, so neither the first nor the last frame is taken. With `N > T` the
/// truncation repeats indices (`T = 1` gives `N` zeros), kept as the harness keeps them.
/// `N = 0` gives nothing; `T = 0` gives nothing, where the formula would give index 0 of a
/// video that has no frames.
pub fn interior(t: u64, n: u64) -> Vec<u64> {
    if n == 0 || t == 0 {
        return Vec::new();
    }
    // `n + 1` cannot overflow in f64; in u64 it could for n = u64::MAX.
    let step = t as f64 / (n as f64 + 1.0);
    (1..=n).map(|i| (i as f64 * step) as u64).collect()
}

/// `fps` (VLMEvalKit `fps` mode): `total_duration = T / video_fps`,
/// `required = int(total_duration * fps)`, `step = video_fps / fps`, then `int(i * step)` for
/// `i` in `0..required`, each in binary64 in that order. The count follows from the duration:
/// `T = 0` or a video shorter than one sampling period gives nothing. With `fps > video_fps`
/// the step is below 1 and indices repeat, as the harness's do. Errors: a rate that is not a
/// positive finite number (the harness would divide by zero), or more than [`MAX_INDICES`]
/// frames.
pub fn fps(t: u64, video_fps: f64, fps: f64) -> Result<Vec<u64>, String> {
    if !(video_fps.is_finite() && video_fps > 0.0) {
        return Err(format!(
            "the video's frame rate must be a positive number, found {video_fps}"
        ));
    }
    if !(fps.is_finite() && fps > 0.0) {
        return Err(format!(
            "the sampling rate of policy \"fps\" must be a positive number, found {fps}"
        ));
    }
    let total_duration = t as f64 / video_fps;
    let required = total_duration * fps;
    // Checked as a float, before the saturating cast, so an absurd rate is reported rather
    // than silently capped (the rates are positive and finite, so `required` is not NaN).
    if required >= (MAX_INDICES + 1) as f64 {
        return Err(format!(
            "sampling {t} frames at {video_fps} fps at a rate of {fps} fps would take {required:.0} frames, more than the {MAX_INDICES} a sample may hold"
        ));
    }
    let required = required as u64;
    let step = video_fps / fps;
    Ok((0..required).map(|i| (i as f64 * step) as u64).collect())
}

/// `segment_mid` (InternVL, MVBench `get_index` without a time bound): `start = 0`,
/// `end = T-1`, `seg = float(T-1) / N`, index `int(seg/2 + np.round(seg*i))` for `i` in
/// `0..N`, `np.round` rounding half to even. `T = 1` gives `N` zeros and `N > T` repeats
/// indices, as the harness does. `N = 0` gives nothing where the harness would divide by
/// zero; `T = 0` gives nothing where it would produce negative indices. (InternVL also caps
/// `end` at `round(100000 * video_fps)`, which matters only for videos over 27 hours; not
/// reproduced.)
pub fn segment_mid(t: u64, n: u64) -> Vec<u64> {
    if n == 0 || t == 0 {
        return Vec::new();
    }
    let seg = (t - 1) as f64 / n as f64;
    // `0 + seg/2` first, then the rounded offset: the harness's left-to-right order.
    (0..n)
        .map(|i| (seg / 2.0 + (seg * i as f64).round_ties_even()) as u64)
        .collect()
}

/// `i * num / den` rounded half to even as docs/measures.md §15 computes it: the product is an
/// exact integer (u128, so it cannot overflow), then one binary64 division. Exact like Python's
/// `round(i * num / den)` while the product is below 2^53 (T·N below about 9·10^15).
fn round_ratio(i: u64, num: u64, den: u64) -> u64 {
    let product = i as u128 * num as u128;
    (product as f64 / den as f64).round_ties_even() as u64
}

/// `uniform_round` (docs/measures.md §15): `N = 0` gives nothing (text-only), `N >= T` all frames
/// `0..T` (so `T = 0` gives nothing), `N = 1` gives `[0]`; otherwise the sorted set of
/// `min(T-1, round_half_even(i * (T-1) / (N-1)))` for `i` in `0..N`: exactly `N` distinct
/// indices from `0` to `T-1`.
pub fn uniform_round(t: u64, n: u64) -> Vec<u64> {
    if let Some(special) = section_15_special(t, n) {
        return special;
    }
    let mut v: Vec<u64> = (0..n)
        .map(|i| round_ratio(i, t - 1, n - 1).min(t - 1))
        .collect();
    // The step exceeds 1, so the values are already distinct and sorted; the set is taken
    // anyway because docs/measures.md §15 defines the result as one.
    v.sort_unstable();
    v.dedup();
    v
}

/// `dense_start` (docs/measures.md §15): the same special cases as [`uniform_round`]; otherwise,
/// with `E = max(N-1, floor((T-1)/3))`, the sorted set of `min(E, round_half_even(i * E / (N-1)))`
/// for `i` in `0..N`: `N` distinct indices covering the first third of the video (or the first
/// `N` frames when the third is shorter than the budget).
pub fn dense_start(t: u64, n: u64) -> Vec<u64> {
    if let Some(special) = section_15_special(t, n) {
        return special;
    }
    let e = (n - 1).max((t - 1) / 3);
    let mut v: Vec<u64> = (0..n).map(|i| round_ratio(i, e, n - 1).min(e)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The special cases docs/measures.md §15 gives both of its policies, in its order: `N = 0`,
/// `N >= T`, `N = 1`. `None` leaves `2 <= N < T` to the formula.
fn section_15_special(t: u64, n: u64) -> Option<Vec<u64>> {
    if n == 0 {
        Some(Vec::new())
    } else if n >= t {
        Some((0..t).collect())
    } else if n == 1 {
        Some(vec![0])
    } else {
        None
    }
}

/// `nested` (the controlled sampling intervention): the base grid `G = linspace(T, base)`,
/// of which the `N`-frame configuration takes every `(base/N)`-th element starting at the
/// first, so every lower budget's frames are kept at every higher one. `N = base` is `G`
/// itself; `N = 0` gives nothing (text-only); `T = 0` gives nothing, and `T < base` repeats
/// indices as `linspace` does. Errors: `N > base` or `base % N != 0`, for which no such subset
/// exists. Only the taken elements of `G` are computed, so a large `base` costs nothing.
pub fn nested(t: u64, n: u64, base: u64) -> Result<Vec<u64>, String> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if n > base {
        return Err(format!(
            "policy \"nested\": a budget of {n} frames exceeds the base grid of {base}"
        ));
    }
    if !base.is_multiple_of(n) {
        return Err(format!(
            "policy \"nested\": a budget of {n} frames does not divide the base grid of {base}"
        ));
    }
    if t == 0 {
        return Ok(Vec::new());
    }
    if base == 1 {
        return Ok(vec![0]);
    }
    let k = base / n;
    let step = linspace_step(t, base);
    Ok((0..n).map(|j| linspace_at(t, base, step, j * k)).collect())
}

/// Left endpoints of `N` equal segments, `floor(i * T / N)` for `i` in `0..N`, in exact
/// integer arithmetic: the uniform grid that starts at the first frame and never reaches the
/// last. `N = 0` or `T = 0` gives nothing; `N > T` repeats indices.
pub fn left_endpoint(t: u64, n: u64) -> Vec<u64> {
    if n == 0 || t == 0 {
        return Vec::new();
    }
    (0..n)
        .map(|i| (u128::from(i) * u128::from(t) / u128::from(n)) as u64)
        .collect()
}

/// Midpoints of `N` equal segments, `floor((i + 1/2) * T / N)` for `i` in `0..N`, in exact
/// integer arithmetic (`floor((2i + 1) * T / (2N))`). `N = 0` or `T = 0` gives nothing; `N > T`
/// repeats indices.
pub fn midpoint(t: u64, n: u64) -> Vec<u64> {
    if n == 0 || t == 0 {
        return Vec::new();
    }
    (0..n)
        .map(|i| ((2 * u128::from(i) + 1) * u128::from(t) / (2 * u128::from(n))) as u64)
        .collect()
}

/// One frame a second, then `N` of those by `linspace`: the frames at whole seconds
/// `floor(k * video_fps)` for `k` in `0..K`, `K = floor(T / video_fps)` (at least 1 when
/// `T > 0`), of which the positions `linspace(K, N)` are taken. Errors: a frame rate that is
/// not a positive finite number, or a video of fewer seconds than `N` (the positions would
/// repeat).
pub fn fps_then_linspace(t: u64, video_fps: f64, n: u64) -> Result<Vec<u64>, String> {
    if !(video_fps.is_finite() && video_fps > 0.0) {
        return Err(format!(
            "the video's frame rate must be a positive number, found {video_fps}"
        ));
    }
    if n == 0 || t == 0 {
        return Ok(Vec::new());
    }
    let seconds = ((t as f64 / video_fps) as u64).max(1);
    if seconds < n {
        return Err(format!(
            "the video has {seconds} whole seconds, fewer than the {n} frames asked"
        ));
    }
    Ok(linspace(seconds, n)
        .into_iter()
        .map(|k| ((k as f64 * video_fps) as u64).min(t - 1))
        .collect())
}

/// The distinct indices of a sample, sorted: what a budget actually showed the model.
pub fn frame_set(mut idx: Vec<u64>) -> Vec<u64> {
    idx.sort_unstable();
    idx.dedup();
    idx
}

/// What changed between the frames of a lower budget and those of a higher one, over the
/// distinct indices, each list sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transition {
    /// Frames both budgets showed.
    pub kept: Vec<u64>,
    /// Frames the lower budget showed and the higher one did not.
    pub dropped: Vec<u64>,
    /// Frames the higher budget showed and the lower one did not.
    pub added: Vec<u64>,
}

/// The [`Transition`] from `lower` to `higher` (indices in any order, duplicates allowed).
/// Sampling sets are generally not nested, so frames can be dropped as well as added.
pub fn transition(lower: &[u64], higher: &[u64]) -> Transition {
    let lo = frame_set(lower.to_vec());
    let hi = frame_set(higher.to_vec());
    let mut out = Transition::default();
    let (mut a, mut b) = (0, 0);
    // A merge of the two sorted sets.
    while a < lo.len() || b < hi.len() {
        match (lo.get(a), hi.get(b)) {
            (Some(&x), Some(&y)) if x == y => {
                out.kept.push(x);
                a += 1;
                b += 1;
            }
            (Some(&x), Some(&y)) if x < y => {
                out.dropped.push(x);
                a += 1;
            }
            (Some(_), Some(&y)) => {
                out.added.push(y);
                b += 1;
            }
            (Some(&x), None) => {
                out.dropped.push(x);
                a += 1;
            }
            (None, Some(&y)) => {
                out.added.push(y);
                b += 1;
            }
            (None, None) => break,
        }
    }
    out
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
        assert!(linspace(0, 4).is_empty());
    }

    #[test]
    fn the_deployed_uniform_samplers_by_hand() {
        // T = 100, N = 4: segments of 25 frames.
        assert_eq!(left_endpoint(100, 4), [0, 25, 50, 75]);
        assert_eq!(midpoint(100, 4), [12, 37, 62, 87]);
        // Not a multiple: floor(i*10/3) and floor((2i+1)*10/6).
        assert_eq!(left_endpoint(10, 3), [0, 3, 6]);
        assert_eq!(midpoint(10, 3), [1, 5, 8]);
        assert!(left_endpoint(0, 3).is_empty() && midpoint(7, 0).is_empty());
        // Exact where binary64 would not be: T near 2^63.
        let t = (1u64 << 63) + 1;
        assert_eq!(left_endpoint(t, 2), [0, (1u64 << 62)]);
        // 300 frames at 30 fps: seconds 0..10 at frames 0, 30, .., 270; linspace(10, 4)
        // takes seconds 0, 3, 6, 9.
        assert_eq!(fps_then_linspace(300, 30.0, 4).unwrap(), [0, 90, 180, 270]);
        // 29.97 fps: second k is frame floor(k * 29.97).
        assert_eq!(fps_then_linspace(300, 29.97, 2).unwrap(), [0, 269]);
        assert!(fps_then_linspace(90, 30.0, 4).is_err());
        assert!(fps_then_linspace(90, 0.0, 1).is_err());
    }

    #[test]
    fn harness_formulas_by_hand() {
        // step = 10/5 = 2: [2, 4, 6, 8]
        assert_eq!(interior(10, 4), [2, 4, 6, 8]);
        assert_eq!(interior(1, 3), [0, 0, 0]);
        assert!(interior(0, 3).is_empty() && interior(5, 0).is_empty());
        // 90 frames at 30 fps for 3 s, 1 fps: [0, 30, 60]
        assert_eq!(fps(90, 30.0, 1.0).expect("valid"), [0, 30, 60]);
        assert!(fps(29, 30.0, 1.0).expect("valid").is_empty());
        assert_eq!(fps(2, 1.0, 2.0).expect("valid"), [0, 0, 1, 1]);
        // seg = 9/4 = 2.25: 1.125 + round(0, 2.25, 4.5, 6.75) = 1.125 + (0, 2, 4, 7)
        assert_eq!(segment_mid(10, 4), [1, 3, 5, 8]);
        assert_eq!(segment_mid(1, 2), [0, 0]);
        assert!(segment_mid(0, 2).is_empty() && segment_mid(5, 0).is_empty());
    }

    #[test]
    fn fps_rejects_bad_rates() {
        for (vfps, rate) in [
            (0.0, 1.0),
            (-30.0, 1.0),
            (f64::NAN, 1.0),
            (30.0, 0.0),
            (30.0, f64::INFINITY),
        ] {
            assert!(fps(100, vfps, rate).is_err(), "{vfps} {rate}");
        }
        let e = fps(u64::MAX, f64::MIN_POSITIVE, 1.0).expect_err("absurd count");
        assert!(e.contains("more than"), "{e}");
        let e = indices(&Policy::Fps { fps: 1.0 }, 100, 8, None).expect_err("no video fps");
        assert!(e.contains("frame rate"), "{e}");
        let e = indices(&Policy::Linspace, 100, u64::MAX, None).expect_err("huge budget");
        assert!(e.contains("more than"), "{e}");
    }

    #[test]
    fn section_15_examples() {
        assert_eq!(uniform_round(11, 5), [0, 2, 5, 8, 10]);
        assert_eq!(uniform_round(100, 4), [0, 33, 66, 99]);
        assert_eq!(uniform_round(8, 16), (0..8).collect::<Vec<u64>>());
        // Half to even: 2.5 -> 2, 7.5 -> 8 (the T = 11, N = 5 example above).
        assert!(uniform_round(10, 0).is_empty());
        assert!(uniform_round(0, 3).is_empty());
        assert_eq!(uniform_round(10, 1), [0]);
        assert_eq!(uniform_round(1, 1), [0]);
        assert_eq!(uniform_round(5, 5), [0, 1, 2, 3, 4]);
        // E = max(3, floor(99/3) = 33): 0, 11, 22, 33
        assert_eq!(dense_start(100, 4), [0, 11, 22, 33]);
        // E = max(4, floor(10/3) = 3) = 4: the first five frames
        assert_eq!(dense_start(11, 5), [0, 1, 2, 3, 4]);
        // E = max(2, 30) = 30, 30/4 = 7.5 -> 8, 15, 22.5 -> 22, 30
        assert_eq!(dense_start(91, 5), [0, 8, 15, 22, 30]);
        assert_eq!(dense_start(8, 16), (0..8).collect::<Vec<u64>>());
        assert_eq!(dense_start(10, 1), [0]);
        assert!(dense_start(10, 0).is_empty());
        // Distinct and exactly N, including both ends, for every 2 <= N < T.
        for t in 3..60 {
            for n in 2..t {
                let v = uniform_round(t, n);
                assert_eq!(v.len() as u64, n, "T={t} N={n}");
                assert_eq!((v[0], v[v.len() - 1]), (0, t - 1));
                assert_eq!(dense_start(t, n).len() as u64, n, "T={t} N={n}");
            }
        }
        // No overflow in the exact product.
        assert_eq!(uniform_round(u64::MAX, 2), [0, u64::MAX - 1]);
    }

    #[test]
    fn nested_budgets_are_nested() {
        let g = linspace(1000, 64);
        assert_eq!(nested(1000, 64, 64).expect("valid"), g);
        let mut lower: Vec<u64> = Vec::new();
        for n in [1, 2, 4, 8, 16, 32, 64] {
            let v = nested(1000, n, 64).expect("valid");
            assert_eq!(v.len() as u64, n);
            let tr = transition(&lower, &v);
            assert!(tr.dropped.is_empty(), "N={n} drops {:?}", tr.dropped);
            lower = v;
        }
        assert_eq!(
            nested(1000, 4, 64).expect("valid"),
            [g[0], g[16], g[32], g[48]]
        );
        assert!(nested(1000, 0, 64).expect("valid").is_empty());
        assert!(nested(0, 4, 64).expect("valid").is_empty());
        assert_eq!(nested(1, 2, 4).expect("valid"), [0, 0]);
        assert_eq!(nested(100, 1, 1).expect("valid"), [0]);
        let e = nested(100, 48, 64).expect_err("48 does not divide 64");
        assert!(e.contains("does not divide"), "{e}");
        let e = nested(100, 128, 64).expect_err("above the base");
        assert!(e.contains("exceeds"), "{e}");
        // A huge base is not materialised.
        assert_eq!(nested(10, 2, 1 << 62).expect("valid").len(), 2);
    }

    #[test]
    fn transition_kept_dropped_added() {
        let t = transition(&[0, 33, 66, 99], &[0, 20, 40, 60, 80, 99]);
        assert_eq!(t.kept, [0, 99]);
        assert_eq!(t.dropped, [33, 66]);
        assert_eq!(t.added, [20, 40, 60, 80]);
        // Unsorted input with duplicates counts distinct frames.
        let t = transition(&[5, 0, 0, 5], &[5, 7, 7]);
        assert_eq!((t.kept, t.dropped, t.added), (vec![5], vec![0], vec![7]));
        assert_eq!(transition(&[], &[]), Transition::default());
        let t = transition(&[], &[1, 2]);
        assert_eq!((t.kept.len(), t.dropped.len(), t.added), (0, 0, vec![1, 2]));
        let t = transition(&[3, 4], &[]);
        assert_eq!(t.dropped, [3, 4]);
    }

    fn sampling(policy: &str, base: Option<u64>, fps: Option<f64>) -> ConfigSampling {
        ConfigSampling {
            policy: policy.into(),
            base,
            fps,
            inferred: false,
        }
    }

    #[test]
    fn policy_from_config() {
        for name in POLICIES {
            let p = Policy::from_config(&sampling(name, Some(64), Some(1.0))).expect(name);
            assert_eq!(p.name(), name);
        }
        assert_eq!(
            Policy::from_config(&sampling("nested", Some(128), None)),
            Ok(Policy::Nested { base: 128 })
        );
        let e = Policy::from_config(&sampling("random", None, None)).expect_err("unknown");
        assert!(
            e.contains("unknown policy \"random\"") && e.contains("linspace"),
            "{e}"
        );
        let e = Policy::from_config(&sampling("nested", None, None)).expect_err("no base");
        assert!(e.contains("\"base\""), "{e}");
        let e = Policy::from_config(&sampling("nested", Some(0), None)).expect_err("base 0");
        assert!(e.contains("positive"), "{e}");
        let e = Policy::from_config(&sampling("fps", None, None)).expect_err("no fps");
        assert!(e.contains("\"fps\""), "{e}");
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = Policy::from_config(&sampling("fps", None, Some(bad))).expect_err("bad fps");
            assert!(e.contains("positive"), "{e}");
        }
    }
}
