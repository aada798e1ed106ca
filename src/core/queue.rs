//! The audit queue: every (model, benchmark, item) of a protocol's benchmark-scope analyses,
//! with its trajectory and harmful transitions, ranked worst first: terminal regressions,
//! then items wrong with no video before those a text-only configuration got right, then
//! by the share of the item's comparable pairs that are harmful (a count of pairs
//! grows with K², so it would favour the models with more configurations), then by the
//! number of harmful pairs.
//!
//! Each row counts all of its item's harmful transitions but lists at most
//! [`MAX_LISTED_PAIRS`] of them (the first in grid order of the lower configuration, then
//! the higher): an item of a million configurations can have 10^11.
//!
//! [`audited_transition`] chooses the transition an item is audited on by default: the step
//! where its answer flips (see [`flip_step`]).

use crate::core::analysis::grid::Scope;
use crate::core::analysis::mcq::Class;
pub use crate::core::analysis::noise::Harm;
pub use crate::core::analysis::pairs::HarmfulTransition;
use crate::core::analysis::pairs::MAX_LISTED_PAIRS;
use crate::core::analysis::{Metrics, Report};
use crate::core::matrix::Task;

/// Which items a queue holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// Items with a harmful transition (MCQ) or a δ-regression (open).
    Harmful,
    /// Items with a terminal regression.
    Terminal,
    /// Every item of the grids.
    All,
}

/// One (model, item) of the queue. Indices point into the report, so the full grid and
/// measures stay one lookup away.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    /// Index of the analysis in `Report::analyses`.
    pub analysis: u32,
    /// Index of the model in that analysis's `grids.models`.
    pub model_index: u32,
    /// Row of the item in that model's grid.
    pub row: u32,
    /// The model's id in the matrix.
    pub model: u32,
    /// The item's id in the matrix.
    pub item: u32,
    /// The task of the analysis.
    pub task: Task,
    /// `None` for open-ended items.
    pub class: Option<Class>,
    /// Harmful transitions as grid columns: right (or better by more than δ) at the lower
    /// budget, wrong (worse) at the higher one. At most [`MAX_LISTED_PAIRS`] of them, the
    /// first in grid order; `harmful_pairs` counts them all. Boxed, so a row whose
    /// transitions are not listed (the TUI's million rows) holds one pointer.
    pub transitions: Option<Box<Vec<HarmfulTransition>>>,
    /// The number of harmful transitions of the item, listed or not.
    pub harmful_pairs: u64,
    /// Whether the item is a terminal regression.
    pub terminal: bool,
    /// Whether its harm survives the replicates; `None` for an item without harm, an
    /// open-ended one, or a model with no replicate in the grid.
    pub harm: Option<Harm>,
}

impl QueueRow {
    /// True when the item has a harmful transition (or a δ-regression).
    pub fn harmful(&self) -> bool {
        self.harmful_pairs > 0
    }

    /// The transitions listed in `transitions` (none when they were not listed).
    pub fn listed(&self) -> &[HarmfulTransition] {
        self.transitions.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Whether `transitions` lists fewer transitions than the item has.
    pub fn truncated(&self) -> bool {
        (self.listed().len() as u64) < self.harmful_pairs
    }

    /// The indices as `usize`: analysis, model in its grids, row in the model's grid.
    pub fn at(&self) -> (usize, usize, usize) {
        (
            self.analysis as usize,
            self.model_index as usize,
            self.row as usize,
        )
    }
}

/// Whether `t` (grid columns, any two) is a harmful transition of a queue row's item,
/// listed or not.
pub fn is_harmful_pair(report: &Report, row: &QueueRow, t: HarmfulTransition) -> bool {
    let (a, b) = (t.lower, t.higher);
    let an = &report.analyses[row.analysis as usize];
    let g = &an.grids.models[row.model_index as usize].grid;
    let k = g.k();
    if a >= k || b >= k || !g.lower(a, b) {
        return false;
    }
    match &an.metrics[row.model_index as usize] {
        Metrics::Mcq(x) => {
            let r = x.items.row(row.row as usize, k);
            r[a] == 1 && r[b] == 0
        }
        Metrics::Open(x) => {
            let r = x.items.row(row.row as usize, k);
            r[a] - r[b] > x.delta
        }
    }
}

/// The transition a queue row's item is audited on by default: its [`flip_step`], else
/// its first listed harmful transition. `None` only when it has none.
pub fn audited_transition(report: &Report, row: &QueueRow) -> Option<HarmfulTransition> {
    let g = &report
        .analyses
        .get(row.analysis as usize)?
        .grids
        .models
        .get(row.model_index as usize)?
        .grid;
    let (values, delta, frames) = row_scores(report, row)?;
    // Visual ladder configurations first, then visual variants, then zero-frame ones.
    let preference = |c: usize| -> u8 {
        match (frames.get(c).copied().unwrap_or(0) > 0, g.is_variant[c]) {
            (false, _) => 0,
            (true, true) => 1,
            (true, false) => 2,
        }
    };
    flip_step(&values, delta, &g.budgets, preference, g.top)
        .or_else(|| list_pairs(report, row).first().copied())
}

/// The step where an item's answer flips: a harmful transition `(a, b)` (right, or better by
/// more than `delta`, at `a`; wrong at `b`; `a ≺ b`) between adjacent comparison budgets.
///
/// * A terminal regression (wrong at `top`) takes the step into its final wrong run: `a` the
///   highest-budget configuration below `top` that is right, `b` the first wrong one above it.
/// * Otherwise the highest-budget step of the item that flips from right to wrong.
/// * A zero-frame `a` (text-only right, video wrong) is taken only when no step of the item
///   starts from a visual configuration, that is, when text-only is the only right answer
///   on such a step.
///
/// Within a run of equal budgets `a` is the configuration `preference` ranks highest
/// (ties: the earlier in grid order) and `b` the first in grid order. `s` and `budgets` are
/// in grid order; `None` when no step between adjacent budgets is harmful (an open-ended item
/// whose δ-regression spans several budgets).
pub fn flip_step(
    s: &[f64],
    delta: f64,
    budgets: &[f64],
    preference: impl Fn(usize) -> u8,
    top: Option<usize>,
) -> Option<HarmfulTransition> {
    let k = s.len().min(budgets.len());
    let mut cols: Vec<usize> = (0..k).collect();
    // Stable, so equal budgets stay in grid order.
    cols.sort_by(|&a, &b| budgets[a].total_cmp(&budgets[b]));
    let runs: Vec<&[usize]> = cols.chunk_by(|&a, &b| budgets[a] == budgets[b]).collect();
    let visual = |c: usize| preference(c) > 0;
    // The preferred `a` of a run among those `worse` regresses against.
    let pick = |run: &[usize], worse: &dyn Fn(f64) -> bool| -> Option<usize> {
        let mut best: Option<usize> = None;
        for &a in run {
            if worse(s[a]) && best.is_none_or(|x| preference(a) > preference(x)) {
                best = Some(a);
            }
        }
        best
    };
    let first_worse = |a: usize, run: &[usize]| run.iter().copied().find(|&b| s[a] - s[b] > delta);

    let terminal = top.filter(|&t| t < k).and_then(|t| {
        let below = runs
            .iter()
            .take_while(|r| budgets[r[0]] < budgets[t])
            .count();
        let (ra, a) = (0..below)
            .rev()
            .find_map(|r| pick(runs[r], &|x| x - s[t] > delta).map(|a| (r, a)))?;
        let b = runs[ra + 1..].iter().find_map(|run| first_worse(a, run))?;
        Some(HarmfulTransition::new(a, b))
    });
    let mut last = None;
    let mut last_visual = None;
    for w in runs.windows(2) {
        let lowest = w[1].iter().map(|&b| s[b]).fold(f64::INFINITY, f64::min);
        let Some(a) = pick(w[0], &|x| x - lowest > delta) else {
            continue;
        };
        let Some(b) = first_worse(a, w[1]) else {
            continue;
        };
        last = Some(HarmfulTransition::new(a, b));
        if visual(a) {
            last_visual = last;
        }
    }
    terminal
        .filter(|t| visual(t.lower))
        .or(last_visual)
        .or(terminal)
        .or(last)
}

/// The ranked queue of one protocol, each row listing its harmful transitions.
pub fn queue(report: &Report, protocol: u32, kind: QueueKind) -> Vec<QueueRow> {
    let mut rows = queue_unlisted(report, protocol, kind);
    for r in &mut rows {
        r.transitions = Some(Box::new(list_pairs(report, r)));
    }
    rows
}

/// A queue row's trajectory as scores in grid order (an MCQ row as 0/1, with δ = 0: right
/// then wrong is 1 − 0 > 0), its δ, and the frames of its grid's configurations.
fn row_scores<'r>(report: &'r Report, row: &QueueRow) -> Option<(Vec<f64>, f64, &'r [u64])> {
    let an = report.analyses.get(row.analysis as usize)?;
    let k = an.grids.models.get(row.model_index as usize)?.grid.k();
    Some(match an.metrics.get(row.model_index as usize)? {
        Metrics::Mcq(x) => (
            x.items
                .row(row.row as usize, k)
                .iter()
                .map(|&v| f64::from(v))
                .collect(),
            0.0,
            &x.grid.frames,
        ),
        Metrics::Open(x) => (
            x.items.row(row.row as usize, k).to_vec(),
            x.delta,
            &x.grid.frames,
        ),
    })
}

/// The harmful transitions of a queue row's item, as `QueueRow::transitions` lists them:
/// the first [`MAX_LISTED_PAIRS`] in grid order.
pub fn list_pairs(report: &Report, row: &QueueRow) -> Vec<HarmfulTransition> {
    if row.harmful_pairs == 0 {
        return Vec::new();
    }
    let Some((values, delta, _)) = row_scores(report, row) else {
        return Vec::new();
    };
    let g = &report.analyses[row.analysis as usize].grids.models[row.model_index as usize].grid;
    g.budget_order.list(&values, delta, MAX_LISTED_PAIRS)
}

/// The ranked queue of one protocol with `transitions` left empty (each row's count is there;
/// [`list_pairs`] lists one row's transitions when they are needed). A queue of a million
/// rows keeps no lists it does not show.
pub fn queue_unlisted(report: &Report, protocol: u32, kind: QueueKind) -> Vec<QueueRow> {
    // Each row with its grid's number of comparable pairs, for the ranking.
    let mut rows: Vec<(QueueRow, (u64, bool))> = Vec::new();
    for (ai, a) in report.analyses.iter().enumerate() {
        if a.key.protocol != protocol || a.key.scope == Scope::All {
            continue;
        }
        for (mi, (mg, x)) in a.grids.models.iter().zip(a.metrics.iter()).enumerate() {
            let g = &mg.grid;
            let k = g.k();
            let order = &g.budget_order;
            let comparable = order.comparable_pairs();
            for (i, &item) in g.items.iter().enumerate() {
                let (class, has_harmful, terminal) = match x {
                    Metrics::Mcq(x) => (
                        Some(x.items.class[i]),
                        x.items.harmful_pairs[i] > 0,
                        x.items.terminal[i],
                    ),
                    Metrics::Open(x) => (None, x.items.has_regression[i], x.items.terminal[i]),
                };
                let keep = match kind {
                    QueueKind::Harmful => has_harmful,
                    QueueKind::Terminal => terminal,
                    QueueKind::All => true,
                };
                if !keep {
                    continue;
                }
                let harm = match x {
                    Metrics::Mcq(x) if has_harmful => {
                        x.replicates.as_ref().map(|r| Harm::of(&r.items, i))
                    }
                    _ => None,
                };
                // Counted from the budget order.
                let count = match x {
                    Metrics::Mcq(x) => x.items.harmful_pairs[i],
                    Metrics::Open(x) if has_harmful => {
                        order.count_regressions(x.items.row(i, k), x.delta)
                    }
                    Metrics::Open(_) => 0,
                };
                // Right with no video at all: the answer needs no frame, so its flips are
                // the least about vision; ranked after the others of its class.
                let text_only_right = match x {
                    Metrics::Mcq(x) => x
                        .items
                        .row(i, k)
                        .iter()
                        .zip(&x.grid.frames)
                        .any(|(&v, &frames)| frames == 0 && v > 0),
                    Metrics::Open(_) => false,
                };
                rows.push((
                    QueueRow {
                        analysis: ai as u32,
                        model_index: mi as u32,
                        row: i as u32,
                        model: mg.model,
                        item,
                        task: a.key.task,
                        class,
                        transitions: None,
                        harmful_pairs: count,
                        terminal,
                        harm,
                    },
                    (comparable, text_only_right),
                ));
            }
        }
    }
    // Worst first: terminal, then items wrong with no video before those right with none
    // (an item answered without frames says least about what frames do), then the harmful
    // share `h / c` compared exactly as `h_a · c_b` against `h_b · c_a`, then the count;
    // then model, then item order; the row's place in the report breaks what ties remain,
    // so the unstable sort gives the order a stable one would.
    rows.sort_unstable_by(|(a, (ca, ta)), (b, (cb, tb))| {
        let share = |x: &QueueRow, c: &u64| u128::from(x.harmful_pairs) * u128::from(*c);
        b.terminal
            .cmp(&a.terminal)
            .then(ta.cmp(tb))
            .then(share(b, ca).cmp(&share(a, cb)))
            .then(b.harmful_pairs.cmp(&a.harmful_pairs))
            .then(a.model.cmp(&b.model))
            .then(a.item.cmp(&b.item))
            .then(a.analysis.cmp(&b.analysis))
            .then(a.model_index.cmp(&b.model_index))
            .then(a.row.cmp(&b.row))
    });
    rows.into_iter().map(|(r, _)| r).collect()
}

/// The order of the queue before it was ranked by harmful share, kept as a sort key:
/// terminal regressions first, then by the number of harmful pairs, then model and item.
pub fn by_harmful_pairs(a: &QueueRow, b: &QueueRow) -> std::cmp::Ordering {
    b.terminal
        .cmp(&a.terminal)
        .then(b.harmful_pairs.cmp(&a.harmful_pairs))
        .then(a.model.cmp(&b.model))
        .then(a.item.cmp(&b.item))
}

#[cfg(test)]
mod tests {
    use super::{HarmfulTransition, flip_step};

    fn t(lower: usize, higher: usize) -> HarmfulTransition {
        HarmfulTransition::new(lower, higher)
    }

    /// docs/measures.md §13.1's grid: textonly, 8f, 16f, 32f (top), textonly zero-frame.
    fn step(pattern: &str) -> Option<HarmfulTransition> {
        let s: Vec<f64> = pattern.bytes().map(|b| f64::from(b - b'0')).collect();
        flip_step(
            &s,
            0.0,
            &[0.0, 8.0, 16.0, 32.0],
            |c| u8::from(c > 0) * 2,
            Some(3),
        )
    }

    #[test]
    fn a_terminal_regression_takes_the_step_into_its_final_wrong_run() {
        assert_eq!(
            step("1110"),
            Some(t(2, 3)),
            "q4: 16f -> 32f, not textonly -> 32f"
        );
        assert_eq!(
            step("1010"),
            Some(t(2, 3)),
            "q7: 16f -> 32f, not textonly -> 8f"
        );
        assert_eq!(
            step("0100"),
            Some(t(1, 2)),
            "8f -> 16f, the first of the wrong run"
        );
        assert_eq!(step("1100"), Some(t(1, 2)));
    }

    #[test]
    fn other_items_take_their_highest_flip_and_text_only_only_when_alone() {
        assert_eq!(step("0101"), Some(t(1, 2)), "q3");
        assert_eq!(step("1101"), Some(t(1, 2)));
        assert_eq!(
            step("1000"),
            Some(t(0, 1)),
            "text-only is the only right answer"
        );
        assert_eq!(
            step("1011"),
            Some(t(0, 1)),
            "no step starts from a visual budget"
        );
        assert_eq!(step("0011"), None, "no harmful step");
        assert_eq!(
            flip_step(
                &[1.0, 0.0, 1.0, 0.0, 1.0],
                0.0,
                &[0.0, 8.0, 16.0, 32.0, 64.0],
                |c| u8::from(c > 0),
                Some(4)
            ),
            Some(t(2, 3)),
            "the highest of two flips"
        );
    }

    #[test]
    fn equal_budgets_and_variants() {
        // docs/measures.md §13.2 (variant_budget own): textonly, 16f, 32f, 32f-b (top), 16f-hr.
        let budgets = [0.0, 16.0, 32.0, 32.0, 16.0];
        let prefer = |c: usize| match c {
            0 => 0,
            4 => 1,
            _ => 2,
        };
        let r1 = [0.0, 1.0, 1.0, 0.0, 1.0];
        assert_eq!(
            flip_step(&r1, 0.0, &budgets, prefer, Some(3)),
            Some(t(1, 3)),
            "16f (ladder before variant) -> 32f-b (32f is right and not lower than 32f-b)"
        );
        let r2 = [1.0, 1.0, 0.0, 1.0, 1.0];
        assert_eq!(
            flip_step(&r2, 0.0, &budgets, prefer, Some(3)),
            Some(t(1, 2))
        );
        // A δ-regression that spans budgets has no adjacent step.
        assert_eq!(
            flip_step(&[60.0, 55.0, 45.0], 10.0, &[1.0, 2.0, 3.0], |_| 2, None),
            None
        );
        assert_eq!(flip_step(&[], 0.0, &[], |_| 2, None), None);
    }
}
