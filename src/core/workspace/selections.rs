//! What a researcher's choice on a view designates, computed from the analysis alone: the
//! items of a churn part, a class or a complementarity cell, the items harmful under one
//! protocol only, and the analyses and configurations the views step through.

use crate::core::analysis::grid::Scope;
use crate::core::analysis::mcq::{Class, McqMetrics};
use crate::core::analysis::{Analysis, Metrics};
use crate::core::matrix::ResponseMatrix;

/// The configurations of an analysis's grids (every model's), ordered by budget.
pub fn budget_order(m: &ResponseMatrix, a: &Analysis) -> Vec<u32> {
    let mut configs: Vec<u32> = a
        .grids
        .models
        .iter()
        .flat_map(|mg| mg.grid.configs.iter().copied())
        .collect();
    configs.sort_unstable();
    configs.dedup();
    configs.sort_by(|&x, &y| {
        m.config(x)
            .budget
            .partial_cmp(&m.config(y).budget)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(x.cmp(&y))
    });
    configs
}

/// The next analysis of the report that differs from `from` in one respect (protocol, task
/// or scope), keeping the others where such an analysis exists.
pub fn next_analysis(analyses: &[Analysis], from: usize, axis: Axis) -> usize {
    let Some(cur) = analyses.get(from).map(|a| a.key) else {
        return from;
    };
    let n = analyses.len();
    let fits = |j: usize, strict: bool| {
        let k = analyses[j].key;
        match axis {
            Axis::Protocol => {
                k.protocol != cur.protocol
                    && (!strict || (k.task == cur.task && k.scope == cur.scope))
            }
            Axis::Task => {
                k.protocol == cur.protocol
                    && k.task != cur.task
                    && (!strict || k.scope == Scope::All)
            }
            Axis::Scope => k.protocol == cur.protocol && k.task == cur.task && k.scope != cur.scope,
        }
    };
    for strict in [true, false] {
        if let Some(j) = (1..n).map(|d| (from + d) % n).find(|&j| fits(j, strict)) {
            return j;
        }
    }
    from
}

/// What `next_analysis` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// The scoring protocol.
    Protocol,
    /// The task (MCQ or open-ended).
    Task,
    /// The benchmark scope (pooled or one benchmark).
    Scope,
}

/// The rows of a model's items that a churn bar part holds: at ladder step `step`, right or
/// wrong before and after as `CHURN_PARTS` orders them (stable right, gained, lost, stable
/// wrong).
pub fn churn_rows(
    x: &McqMetrics,
    ladder: &[usize],
    k: usize,
    step: usize,
    part: usize,
) -> Vec<usize> {
    let (Some(&a), Some(&b)) = (ladder.get(step), ladder.get(step + 1)) else {
        return Vec::new();
    };
    let want = match part {
        0 => (1, 1),
        1 => (0, 1),
        2 => (1, 0),
        _ => (0, 0),
    };
    (0..x.items.class.len())
        .filter(|&i| {
            let r = x.items.row(i, k);
            (r[a], r[b]) == want
        })
        .collect()
}

/// Rows of a class.
pub fn class_rows(x: &McqMetrics, c: Class) -> Vec<usize> {
    (0..x.items.class.len())
        .filter(|&i| x.items.class[i] == c)
        .collect()
}

/// Rows right at column `a` and wrong at column `b`.
pub fn right_wrong_rows(x: &McqMetrics, k: usize, a: usize, b: usize) -> Vec<usize> {
    (0..x.items.class.len())
        .filter(|&i| {
            let r = x.items.row(i, k);
            r[a] == 1 && r[b] == 0
        })
        .collect()
}

/// Items of a model harmful under exactly one of two analyses, over the items both have:
/// `(item, harmful under a)`.
pub fn one_protocol_only(a: &Analysis, model: usize, other: &Analysis) -> Option<Vec<(u32, bool)>> {
    let mg = a.grids.models.get(model)?;
    let Metrics::Mcq(x) = a.metrics.get(model)? else {
        return None;
    };
    let (mg_b, xb) = other.model(mg.model)?;
    let Metrics::Mcq(xb) = xb else { return None };
    let mut out = Vec::new();
    for (i, &item) in mg.grid.items.iter().enumerate() {
        let Ok(j) = mg_b.grid.items.binary_search(&item) else {
            continue;
        };
        let (a, b) = (x.items.harmful_pairs[i] > 0, xb.items.harmful_pairs[j] > 0);
        if a != b {
            out.push((item, a));
        }
    }
    Some(out)
}
