//! The audit queue: every (model, benchmark, item) of a protocol's benchmark-scope analyses,
//! with its trajectory and harmful transitions, ranked worst first (terminal regressions,
//! then by number of harmful pairs).

use crate::core::analysis::grid::Scope;
use crate::core::analysis::mcq::Class;
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
    /// at the lower budget, wrong (worse) at the higher one.
    pub pairs: Vec<(usize, usize)>,
    pub terminal: bool,
}

impl QueueRow {
    pub fn harmful(&self) -> bool {
        !self.pairs.is_empty()
    }
}

/// The ranked queue of one protocol.
pub fn queue(report: &Report, protocol: u32, kind: QueueKind) -> Vec<QueueRow> {
    let mut rows = Vec::new();
    for (ai, a) in report.analyses.iter().enumerate() {
        if a.key.protocol != protocol || a.key.scope == Scope::All {
            continue;
        }
        for (mi, (mg, x)) in a.grids.models.iter().zip(&a.metrics).enumerate() {
            let g = &mg.grid;
            let k = g.k();
            let pairs = g.comparable_pairs();
            for (i, &item) in g.items.iter().enumerate() {
                let (class, harmful, terminal) = match x {
                    Metrics::Mcq(x) => {
                        let row = x.items.row(i, k);
                        let h: Vec<(usize, usize)> = pairs
                            .iter()
                            .copied()
                            .filter(|&(a, b)| row[a] == 1 && row[b] == 0)
                            .collect();
                        (Some(x.items.class[i]), h, x.items.terminal[i])
                    }
                    Metrics::Open(x) => {
                        let row = x.items.row(i, k);
                        let h: Vec<(usize, usize)> = pairs
                            .iter()
                            .copied()
                            .filter(|&(a, b)| row[a] - row[b] > x.delta)
                            .collect();
                        (None, h, x.items.terminal[i])
                    }
                };
                let keep = match kind {
                    QueueKind::Harmful => !harmful.is_empty(),
                    QueueKind::Terminal => terminal,
                    QueueKind::All => true,
                };
                if keep {
                    rows.push(QueueRow {
                        analysis: ai,
                        model_index: mi,
                        row: i,
                        model: mg.model,
                        item,
                        task: a.key.task,
                        class,
                        pairs: harmful,
                        terminal,
                    });
                }
            }
        }
    }
    // Worst first; then model, then item order, so the queue is stable.
    rows.sort_by(|a, b| {
        b.terminal
            .cmp(&a.terminal)
            .then(b.pairs.len().cmp(&a.pairs.len()))
            .then(a.model.cmp(&b.model))
            .then(a.item.cmp(&b.item))
    });
    rows
}
