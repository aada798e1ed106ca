//! Percentile bootstrap over items (docs/measures.md §9), with the SplitMix64 generator so that
//! every implementation draws the same resamples.

use rustc_hash::FxHashMap;

use super::Interval;

/// SplitMix64, as docs/measures.md §9 writes it.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose state starts at `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Hyndman-Fan type 7 percentile of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let b = sorted.len();
    let h = (b - 1) as f64 * p;
    let f = h.floor();
    let fi = f as usize;
    if fi + 1 >= b {
        return sorted[b - 1];
    }
    sorted[fi] + (h - f) * (sorted[fi + 1] - sorted[fi])
}

/// The 2.5 % / 97.5 % interval of bootstrap values.
pub fn interval(mut values: Vec<f64>) -> Interval {
    values.sort_by(f64::total_cmp);
    Interval {
        lo: percentile(&values, 0.025),
        hi: percentile(&values, 0.975),
    }
}

/// The intervals of an MCQ bootstrap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct McqIntervals {
    /// Interval of the headroom, the best configuration chosen again in each resample.
    pub headroom: Interval,
    /// Interval of the visual confusion (harmful item) rate.
    pub harmful_rate: Interval,
    /// Not in the report JSON of docs/measures.md §12; the readable report shows it beside the
    /// terminal rate.
    pub terminal_rate: Interval,
}

/// A grid's items grouped into clusters (docs/measures.md §16.6): the items of one video,
/// clusters in the order of their first item.
#[derive(Debug, Clone, Default)]
pub struct Clusters {
    /// Where each cluster's items start in `items` (one more entry than clusters).
    start: Vec<usize>,
    /// Grid item indices, cluster by cluster, each in item order.
    items: Vec<u32>,
}

impl Clusters {
    /// The clusters of grid items whose keys are `keys` (a cluster id, or `None` for an
    /// item that is a cluster of its own).
    pub fn of(keys: &[Option<u32>]) -> Clusters {
        let mut id_of: FxHashMap<u32, usize> = FxHashMap::default();
        let mut members: Vec<Vec<u32>> = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let c = match key {
                Some(k) => *id_of.entry(*k).or_insert_with(|| {
                    members.push(Vec::new());
                    members.len() - 1
                }),
                None => {
                    members.push(Vec::new());
                    members.len() - 1
                }
            };
            members[c].push(i as u32);
        }
        let mut start = vec![0];
        let mut items = Vec::with_capacity(keys.len());
        for m in members {
            items.extend(m);
            start.push(items.len());
        }
        Clusters { start, items }
    }

    /// How many clusters there are (`G`).
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    /// True without clusters.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The grid items of cluster `g`.
    pub fn items(&self, g: usize) -> &[u32] {
        &self.items[self.start[g]..self.start[g + 1]]
    }

    /// Draws one resample: `G` clusters (or `n` items without clusters), with
    /// replacement; calls `take` with each item drawn and returns how many were.
    fn draw(
        clusters: Option<&Clusters>,
        n: usize,
        rng: &mut SplitMix64,
        mut take: impl FnMut(usize),
    ) -> usize {
        match clusters {
            None => {
                for _ in 0..n {
                    take((rng.next_u64() % n as u64) as usize);
                }
                n
            }
            Some(c) => {
                let g = c.len() as u64;
                let mut drawn = 0;
                for _ in 0..g {
                    let items = c.items((rng.next_u64() % g) as usize);
                    items.iter().for_each(|&i| take(i as usize));
                    drawn += items.len();
                }
                drawn
            }
        }
    }
}

/// MCQ bootstrap over items: [`mcq_clustered`] without clusters.
pub fn mcq(
    y: &[u8],
    k: usize,
    harmful: &[bool],
    terminal: &[bool],
    b: usize,
    seed: u64,
) -> Option<McqIntervals> {
    mcq_clustered(y, k, harmful, terminal, b, seed, None)
}

/// MCQ bootstrap: headroom, harmful-rate and terminal-rate intervals, resampling items, or
/// the `clusters` of items when given (each rate then over the items drawn). Every
/// statistic depends on an item only through its 0/1 row (the harmful flag is a function of
/// the row on a fixed grid), so resamples count rows by pattern instead of re-adding whole
/// rows: same integers, less work.
pub fn mcq_clustered(
    y: &[u8],
    k: usize,
    harmful: &[bool],
    terminal: &[bool],
    b: usize,
    seed: u64,
    clusters: Option<&Clusters>,
) -> Option<McqIntervals> {
    let n = harmful.len();
    if b == 0 || n == 0 {
        return None;
    }
    let mut class_of = Vec::with_capacity(n);
    let mut classes: Vec<(&[u8], bool, bool, bool)> = Vec::new();
    let mut ids: FxHashMap<&[u8], u32> = FxHashMap::default();
    for (i, row) in y.chunks_exact(k).enumerate() {
        let id = *ids.entry(row).or_insert_with(|| {
            classes.push((row, row.contains(&1), harmful[i], terminal[i]));
            (classes.len() - 1) as u32
        });
        class_of.push(id);
    }
    // The best configuration of a resample only needs the largest column sum, and two
    // configurations equal on every pattern have equal sums: sum one configuration of each
    // distinct column (a grid of a million configurations over one item has two).
    let p = classes.len();
    let mut columns = vec![0u8; k * p];
    for (c, &(row, ..)) in classes.iter().enumerate() {
        for (col, &v) in row.iter().enumerate() {
            columns[col * p + c] = v;
        }
    }
    let mut seen: rustc_hash::FxHashSet<&[u8]> = Default::default();
    let distinct: Vec<usize> = columns
        .chunks_exact(p)
        .enumerate()
        .filter(|(_, col)| seen.insert(col))
        .map(|(i, _)| i)
        .collect();
    drop(seen);
    let d = distinct.len();
    let reduced: Vec<u8> = classes
        .iter()
        .flat_map(|&(row, ..)| distinct.iter().map(move |&col| row[col]))
        .collect();
    drop(columns);
    let mut rng = SplitMix64::new(seed);
    let mut counts = vec![0u64; classes.len()];
    let mut sums = vec![0u64; d];
    let mut headroom = Vec::with_capacity(b);
    let mut harmful_rate = Vec::with_capacity(b);
    let mut terminal_rate = Vec::with_capacity(b);
    for _ in 0..b {
        counts.iter_mut().for_each(|c| *c = 0);
        let n = Clusters::draw(clusters, n, &mut rng, |idx| {
            counts[class_of[idx] as usize] += 1;
        });
        sums.iter_mut().for_each(|s| *s = 0);
        let (mut oracle, mut harm, mut term) = (0u64, 0u64, 0u64);
        for ((&(_, orc, h, t), row), &c) in classes.iter().zip(reduced.chunks_exact(d)).zip(&counts)
        {
            if c == 0 {
                continue;
            }
            for (s, &v) in sums.iter_mut().zip(row) {
                *s += c * u64::from(v);
            }
            oracle += c * u64::from(orc);
            harm += c * u64::from(h);
            term += c * u64::from(t);
        }
        let best = sums.iter().copied().max().unwrap_or(0);
        headroom.push(100.0 * (oracle - best) as f64 / n as f64);
        harmful_rate.push(100.0 * harm as f64 / n as f64);
        terminal_rate.push(100.0 * term as f64 / n as f64);
    }
    Some(McqIntervals {
        headroom: interval(headroom),
        harmful_rate: interval(harmful_rate),
        terminal_rate: interval(terminal_rate),
    })
}

/// Open-task bootstrap: (oracle gap, regression rate) intervals, resampling items, or the
/// `clusters` of items when given. Sums run in draw order, as the formula is written.
pub fn open(
    s: &[f64],
    k: usize,
    regression: &[bool],
    b: usize,
    seed: u64,
    clusters: Option<&Clusters>,
) -> Option<(Interval, Interval)> {
    let n = regression.len();
    if b == 0 || n == 0 {
        return None;
    }
    let row_max: Vec<f64> = s
        .chunks_exact(k)
        .map(|r| r.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        .collect();
    let mut rng = SplitMix64::new(seed);
    let mut sums = vec![0.0f64; k];
    let mut gap = Vec::with_capacity(b);
    let mut rate = Vec::with_capacity(b);
    for _ in 0..b {
        sums.iter_mut().for_each(|x| *x = 0.0);
        let mut max_sum = 0.0f64;
        let mut reg = 0u64;
        let n = Clusters::draw(clusters, n, &mut rng, |idx| {
            for (acc, &v) in sums.iter_mut().zip(&s[idx * k..(idx + 1) * k]) {
                *acc += v;
            }
            max_sum += row_max[idx];
            reg += u64::from(regression[idx]);
        });
        let best = sums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        gap.push((max_sum - best) / n as f64);
        rate.push(100.0 * reg as f64 / n as f64);
    }
    Some((interval(gap), interval(rate)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_check_values() {
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn type7_percentiles_match_numpy() {
        // numpy.percentile([1, 2, 3, 4], [2.5, 97.5]) = [1.075, 3.925]
        let v = [1.0, 2.0, 3.0, 4.0];
        assert!((percentile(&v, 0.025) - 1.075).abs() < 1e-12);
        assert!((percentile(&v, 0.975) - 3.925).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 0.975), 7.0);
    }
}
