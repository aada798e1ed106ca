//! The audit queue: every (model, benchmark, item) of a protocol's benchmark-scope analyses,
//! with its trajectory and harmful transitions, ranked worst first (terminal regressions,
//! then by number of harmful pairs).
//!
//! Each row counts all of its item's harmful transitions but lists at most
//! [`MAX_LISTED_PAIRS`] of them (the first in grid order of the lower configuration, then
//! the higher): an item of a million configurations can have 10^11.

use crate::core::analysis::grid::Scope;
use crate::core::analysis::mcq::Class;
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
    All,
}

/// One (model, item) of the queue. Indices point into the report, so the full grid and
/// measures stay one lookup away.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    /// Index of the analysis in `Report::analyses`.
    pub analysis: usize,
    /// Index of the model in that analysis's `grids.models`.
    pub model_index: usize,
    /// Row of the item in that model's grid.
    pub row: usize,
    pub model: u32,
    pub item: u32,
    pub task: Task,
    /// `None` for open-ended items.
    pub class: Option<Class>,
    /// Harmful transitions `(lower, higher)` as grid columns: right (or better by more than δ)
    /// at the lower budget, wrong (worse) at the higher one. At most [`MAX_LISTED_PAIRS`]
    /// of them, the first in grid order; `harmful_pairs` counts them all.
    pub pairs: Vec<(usize, usize)>,
    /// The number of harmful transitions of the item, listed or not.
    pub harmful_pairs: u64,
    pub terminal: bool,
}

impl QueueRow {
    pub fn harmful(&self) -> bool {
        self.harmful_pairs > 0
    }

    /// Whether `pairs` lists fewer transitions than the item has.
    pub fn truncated(&self) -> bool {
        (self.pairs.len() as u64) < self.harmful_pairs
    }
}

/// Whether `(a, b)` (grid columns) is a harmful transition of a queue row's item, listed or
/// not.
pub fn is_harmful_pair(report: &Report, row: &QueueRow, a: usize, b: usize) -> bool {
    let an = &report.analyses[row.analysis];
    let g = &an.grids.models[row.model_index].grid;
    let k = g.k();
    if a >= k || b >= k || !g.lower(a, b) {
        return false;
    }
    match &an.metrics[row.model_index] {
        Metrics::Mcq(x) => {
            let r = x.items.row(row.row, k);
            r[a] == 1 && r[b] == 0
        }
        Metrics::Open(x) => {
            let r = x.items.row(row.row, k);
            r[a] - r[b] > x.delta
        }
    }
}

/// The ranked queue of one protocol, each row listing its harmful transitions.
pub fn queue(report: &Report, protocol: u32, kind: QueueKind) -> Vec<QueueRow> {
    let mut rows = queue_unlisted(report, protocol, kind);
    for r in &mut rows {
        r.pairs = list_pairs(report, r);
    }
    rows
}

/// The harmful transitions of a queue row's item, as `QueueRow::pairs` lists them: the
/// first [`MAX_LISTED_PAIRS`] in grid order.
pub fn list_pairs(report: &Report, row: &QueueRow) -> Vec<(usize, usize)> {
    if row.harmful_pairs == 0 {
        return Vec::new();
    }
    let a = &report.analyses[row.analysis];
    let g = &a.grids.models[row.model_index].grid;
    let k = g.k();
    // An MCQ row is listed as scores 0/1 with δ = 0 (right then wrong is 1 − 0 > 0).
    let (values, delta): (Vec<f64>, f64) = match &a.metrics[row.model_index] {
        Metrics::Mcq(x) => (
            x.items
                .row(row.row, k)
                .iter()
                .map(|&v| f64::from(v))
                .collect(),
            0.0,
        ),
        Metrics::Open(x) => (x.items.row(row.row, k).to_vec(), x.delta),
    };
    g.budget_order.list(&values, delta, MAX_LISTED_PAIRS)
}

/// The ranked queue of one protocol with `pairs` left empty (each row's count is there;
/// [`list_pairs`] lists one row's transitions when they are needed). A queue of a million
/// rows keeps no lists it does not show.
pub fn queue_unlisted(report: &Report, protocol: u32, kind: QueueKind) -> Vec<QueueRow> {
    let mut rows = Vec::new();
    for (ai, a) in report.analyses.iter().enumerate() {
        if a.key.protocol != protocol || a.key.scope == Scope::All {
            continue;
        }
        for (mi, (mg, x)) in a.grids.models.iter().zip(&a.metrics).enumerate() {
            let g = &mg.grid;
            let k = g.k();
            let order = &g.budget_order;
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
                // Counted from the budget order.
                let count = match x {
                    Metrics::Mcq(x) => x.items.harmful_pairs[i],
                    Metrics::Open(x) if has_harmful => {
                        order.count_regressions(x.items.row(i, k), x.delta)
                    }
                    Metrics::Open(_) => 0,
                };
                rows.push(QueueRow {
                    analysis: ai,
                    model_index: mi,
                    row: i,
                    model: mg.model,
                    item,
                    task: a.key.task,
                    class,
                    pairs: Vec::new(),
                    harmful_pairs: count,
                    terminal,
                });
            }
        }
    }
    // Worst first; then model, then item order, so the queue is stable.
    rows.sort_by(|a, b| {
        b.terminal
            .cmp(&a.terminal)
            .then(b.harmful_pairs.cmp(&a.harmful_pairs))
            .then(a.model.cmp(&b.model))
            .then(a.item.cmp(&b.item))
    });
    rows
}
