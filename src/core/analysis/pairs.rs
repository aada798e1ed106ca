//! Comparable pairs of a grid (docs/measures.md §2.5), counted without building them.
//!
//! `a ≺ b` iff `b(a) < b(b)`: with the columns sorted by comparison budget into runs of equal
//! budgets, the configurations lower than `b` are exactly those of the runs before `b`'s.
//! So the number of comparable pairs, of harmful transitions (§3.5), of prior-fallback
//! pairs (§4.2) and whether an item has a δ-regression (§5) are one pass over that order
//! per item (O(K), after one O(K log K) sort per grid), and the number of δ-regression
//! pairs is O(K log K) per item. A grid of K configurations has up to K(K−1)/2 comparable
//! pairs (5·10^11 for a million); none of them is ever materialised.
//!
//! What must be per pair is bounded: a list of pairs (the audit queue's harmful
//! transitions of an item) holds at most [`MAX_LISTED_PAIRS`], beside the count of all of
//! them, and the K x K complementarity matrices (§3.8, §5) are computed only for grids of at
//! most [`MAX_MATRIX_CONFIGS`] configurations.

/// The most harmful transitions listed per item (the audit queue, `frameaudit list`); the
/// count beside the list is always the full one.
pub const MAX_LISTED_PAIRS: usize = 1000;

/// The most configurations for which the K x K complementarity matrices are computed and
/// reported; above it they are `null` in the report, with an `omitted` note.
pub const MAX_MATRIX_CONFIGS: usize = 1000;

/// A harmful transition of an item: right at grid column `lower`, wrong at the higher budget
/// `higher` (docs/measures.md §3.5); for an open-ended item, better by more than δ at `lower`
/// than at `higher` (a δ-regression pair, §5). Ordered by `lower`, then `higher`: grid order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HarmfulTransition {
    /// The grid column of the lower comparison budget, where the item was right.
    pub lower: usize,
    /// The grid column of the higher comparison budget, where the item was wrong.
    pub higher: usize,
}

impl HarmfulTransition {
    /// The transition from grid column `lower` to grid column `higher`.
    pub const fn new(lower: usize, higher: usize) -> Self {
        HarmfulTransition { lower, higher }
    }
}

/// The columns of a grid in comparison-budget order (ties in grid order), in runs of equal
/// budgets, and the stretches of grid order along which budgets do not decrease.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BudgetOrder {
    budgets: Vec<f64>,
    cols: Vec<usize>,
    /// `cols[runs[r]..runs[r + 1]]` is the `r`-th run of equal budgets.
    runs: Vec<usize>,
    /// Grid columns `segments[s]..segments[s + 1]` have non-decreasing budgets: the ladder
    /// and the variants of a grid (§2.5), so two stretches in practice.
    segments: Vec<usize>,
}

impl BudgetOrder {
    /// The order of comparison budgets `b(c)` given in grid order. Budgets are finite
    /// numbers (the loaders read them from JSON numbers and integer frame counts).
    pub fn new(budgets: &[f64]) -> Self {
        debug_assert!(budgets.iter().all(|b| b.is_finite()));
        let mut cols: Vec<usize> = (0..budgets.len()).collect();
        // Stable, so ties stay in grid order.
        cols.sort_by(|&a, &b| {
            budgets[a]
                .partial_cmp(&budgets[b])
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut runs = vec![0];
        for i in 1..cols.len() {
            if budgets[cols[i - 1]] < budgets[cols[i]] {
                runs.push(i);
            }
        }
        if !cols.is_empty() {
            runs.push(cols.len());
        }
        let mut segments = vec![0];
        for i in 1..budgets.len() {
            if budgets[i] < budgets[i - 1] {
                segments.push(i);
            }
        }
        segments.push(budgets.len());
        BudgetOrder {
            budgets: budgets.to_vec(),
            cols,
            runs,
            segments,
        }
    }

    /// The runs of equal budgets, lowest budget first.
    fn runs(&self) -> impl Iterator<Item = &[usize]> + '_ {
        self.runs.windows(2).map(|w| &self.cols[w[0]..w[1]])
    }

    /// `comparable_pairs = #{(a, b) : a ≺ b}`.
    pub fn comparable_pairs(&self) -> u64 {
        let mut before = 0u64;
        let mut total = 0u64;
        for run in self.runs() {
            total += before * run.len() as u64;
            before += run.len() as u64;
        }
        total
    }

    /// `#{(a, b) : a ≺ b, lo(a), hi(b)}`, e.g. harmful transitions with `lo` "right" and `hi`
    /// "wrong".
    pub fn count(&self, lo: impl Fn(usize) -> bool, hi: impl Fn(usize) -> bool) -> u64 {
        let mut before = 0u64;
        let mut total = 0u64;
        for run in self.runs() {
            let mut here = 0u64;
            for &c in run {
                if hi(c) {
                    total += before;
                }
                here += u64::from(lo(c));
            }
            before += here;
        }
        total
    }

    /// Whether some `a ≺ b` has `s[a] − s[b] > δ` (a δ-regression, §5). As `x − s[b]` never
    /// decreases with `x` in floating point, that is `max_{a ≺ b} s[a] − s[b] > δ`.
    pub fn regresses(&self, s: &[f64], delta: f64) -> bool {
        let mut max: Option<f64> = None;
        for run in self.runs() {
            if let Some(m) = max
                && run.iter().any(|&b| m - s[b] > delta)
            {
                return true;
            }
            let run_max = run.iter().map(|&c| s[c]).fold(f64::NEG_INFINITY, f64::max);
            max = Some(max.map_or(run_max, |m| m.max(run_max)));
        }
        false
    }

    /// `#{(a, b) : a ≺ b, s[a] − s[b] > δ}`: for each `b`, the values `x` with `x − s[b] > δ`
    /// are the values above a threshold, so a Fenwick tree over the ranks of the values of
    /// the lower runs counts them.
    pub fn count_regressions(&self, s: &[f64], delta: f64) -> u64 {
        let mut values: Vec<f64> = s.to_vec();
        values.sort_by(f64::total_cmp);
        values.dedup_by(|a, b| a == b);
        let mut tree = vec![0u64; values.len() + 1];
        let mut inserted = 0u64;
        let mut total = 0u64;
        for run in self.runs() {
            for &b in run {
                // Ranks below `r` do not regress against `b`, ranks from `r` on do.
                let r = values.partition_point(|&x| x - s[b] <= delta);
                let mut below = 0u64;
                let mut i = r;
                while i > 0 {
                    below += tree[i];
                    i &= i - 1;
                }
                total += inserted - below;
            }
            for &a in run {
                let mut i = values.partition_point(|&x| x < s[a]) + 1;
                while i < tree.len() {
                    tree[i] += 1;
                    i += i & i.wrapping_neg();
                }
                inserted += 1;
            }
        }
        total
    }

    /// The first `cap` pairs `(a, b)` with `a ≺ b` and `s[a] − s[b] > δ`, in grid order of
    /// `a` then `b` (MCQ harmful transitions: `s` the 0/1 values, `δ = 0`). Along each stretch
    /// of non-decreasing budgets the columns above `b(a)` are a suffix, and a minimum tree
    /// over `s` finds the next regressing column of a suffix in O(log K), so the list costs
    /// O((K + cap) log K) however many pairs there are.
    pub fn list(&self, s: &[f64], delta: f64, cap: usize) -> Vec<HarmfulTransition> {
        let k = s.len();
        let mut out = Vec::new();
        if cap == 0 || k < 2 {
            return out;
        }
        let tree = MinTree::new(s);
        for (a, &sa) in s.iter().enumerate() {
            let regresses = |x: f64| sa - x > delta;
            for w in self.segments.windows(2) {
                let (lo, hi) = (w[0], w[1]);
                let above = self.budgets[lo..hi].partition_point(|&x| x <= self.budgets[a]);
                let mut from = lo + above;
                while let Some(b) = tree.first(from, hi, &regresses) {
                    out.push(HarmfulTransition::new(a, b));
                    if out.len() == cap {
                        return out;
                    }
                    from = b + 1;
                }
            }
        }
        out
    }
}

/// Minimum segment tree over values, padded with +∞.
struct MinTree {
    size: usize,
    t: Vec<f64>,
}

impl MinTree {
    fn new(s: &[f64]) -> Self {
        let size = s.len().next_power_of_two();
        let mut t = vec![f64::INFINITY; 2 * size];
        t[size..size + s.len()].copy_from_slice(s);
        for i in (1..size).rev() {
            t[i] = t[2 * i].min(t[2 * i + 1]);
        }
        MinTree { size, t }
    }

    /// The first position in `from..to` whose value satisfies `pred`, for a `pred` that holds
    /// for every value below one that satisfies it (so a subtree has a match only if its
    /// minimum does).
    fn first(&self, from: usize, to: usize, pred: &impl Fn(f64) -> bool) -> Option<usize> {
        self.descend(1, 0, self.size, from, to, pred)
    }

    fn descend(
        &self,
        node: usize,
        lo: usize,
        hi: usize,
        from: usize,
        to: usize,
        pred: &impl Fn(f64) -> bool,
    ) -> Option<usize> {
        if hi <= from || to <= lo || !pred(self.t[node]) {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = (lo + hi) / 2;
        self.descend(2 * node, lo, mid, from, to, pred)
            .or_else(|| self.descend(2 * node + 1, mid, hi, from, to, pred))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every pair of the definition, as the code before this module built them.
    fn brute(budgets: &[f64], s: &[f64], delta: f64) -> Vec<HarmfulTransition> {
        let k = budgets.len();
        let mut v = Vec::new();
        for a in 0..k {
            for b in 0..k {
                if budgets[a] < budgets[b] && s[a] - s[b] > delta {
                    v.push(HarmfulTransition::new(a, b));
                }
            }
        }
        v
    }

    /// Budgets in grid order: a ladder sorted by budget, then variants sorted by budget.
    fn grid_budgets() -> impl Strategy<Value = Vec<f64>> {
        (
            proptest::collection::vec(0u8..6, 0..9),
            proptest::collection::vec(0u8..6, 0..5),
        )
            .prop_map(|(mut ladder, mut variants)| {
                ladder.sort_unstable();
                variants.sort_unstable();
                ladder
                    .into_iter()
                    .chain(variants)
                    .map(|b| f64::from(b) * 4.0)
                    .collect()
            })
    }

    fn grid_and_values(
        values: impl Strategy<Value = f64> + Clone,
    ) -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
        grid_budgets().prop_flat_map(move |b| {
            let k = b.len();
            (Just(b), proptest::collection::vec(values.clone(), k))
        })
    }

    proptest! {
        #[test]
        fn mcq_counts_and_lists_match_the_pairs((budgets, y) in grid_and_values(
            prop_oneof![Just(0.0), Just(1.0)]
        )) {
            let order = BudgetOrder::new(&budgets);
            let all = brute(&budgets, &vec![1.0; budgets.len()], -1.0);
            let harmful = brute(&budgets, &y, 0.0);
            prop_assert_eq!(order.comparable_pairs(), all.len() as u64);
            prop_assert_eq!(
                order.count(|a| y[a] == 1.0, |b| y[b] == 0.0),
                harmful.len() as u64
            );
            prop_assert_eq!(order.count_regressions(&y, 0.0), harmful.len() as u64);
            prop_assert_eq!(order.regresses(&y, 0.0), !harmful.is_empty());
            prop_assert_eq!(order.list(&y, 0.0, usize::MAX), harmful.clone());
            for cap in [0, 1, 3] {
                let want: Vec<_> = harmful.iter().copied().take(cap).collect();
                prop_assert_eq!(order.list(&y, 0.0, cap), want);
            }
        }

        #[test]
        fn open_counts_and_lists_match_the_pairs(
            (budgets, s) in grid_and_values(
                prop_oneof![(0u8..=10).prop_map(|v| f64::from(v) * 10.0), 0.0..100.0f64]
            ),
            delta in prop_oneof![Just(0.0), Just(10.0), 0.0..30.0f64],
        ) {
            let order = BudgetOrder::new(&budgets);
            let pairs = brute(&budgets, &s, delta);
            prop_assert_eq!(order.count_regressions(&s, delta), pairs.len() as u64);
            prop_assert_eq!(order.regresses(&s, delta), !pairs.is_empty());
            prop_assert_eq!(order.list(&s, delta, usize::MAX), pairs.clone());
            let want: Vec<_> = pairs.iter().copied().take(2).collect();
            prop_assert_eq!(order.list(&s, delta, 2), want);
        }

        /// Any budgets in any order (not only grid order) count the same.
        #[test]
        fn unsorted_budgets_count_the_same(
            (budgets, y) in (1usize..10).prop_flat_map(|k| (
                proptest::collection::vec((0u8..5).prop_map(f64::from), k),
                proptest::collection::vec(prop_oneof![Just(0.0), Just(1.0)], k),
            ))
        ) {
            let order = BudgetOrder::new(&budgets);
            let harmful = brute(&budgets, &y, 0.0);
            prop_assert_eq!(order.count(|a| y[a] == 1.0, |b| y[b] == 0.0), harmful.len() as u64);
            prop_assert_eq!(order.list(&y, 0.0, usize::MAX), harmful);
        }
    }

    #[test]
    fn a_million_configurations_count_in_closed_form() {
        // Budgets 1, 1, 2, 2, ...: pairs of equal budgets are incomparable.
        let k = 1_000_000usize;
        let budgets: Vec<f64> = (0..k).map(|i| (i / 2 + 1) as f64).collect();
        let order = BudgetOrder::new(&budgets);
        let k = k as u64;
        assert_eq!(order.comparable_pairs(), k * (k - 1) / 2 - k / 2);
        // Right everywhere below the middle, wrong from it on: every lower half x upper half.
        let y: Vec<f64> = (0..k).map(|i| f64::from(u8::from(i < k / 2))).collect();
        let harmful = (k / 2) * (k / 2);
        assert_eq!(order.count(|a| y[a] == 1.0, |b| y[b] == 0.0), harmful);
        assert_eq!(order.count_regressions(&y, 0.0), harmful);
        let listed = order.list(&y, 0.0, MAX_LISTED_PAIRS);
        assert_eq!(listed.len(), MAX_LISTED_PAIRS);
        assert_eq!(listed[0], HarmfulTransition::new(0, k as usize / 2));
        assert_eq!(listed[999], HarmfulTransition::new(0, k as usize / 2 + 999));
    }
}
