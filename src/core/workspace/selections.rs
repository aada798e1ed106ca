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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selections_of_a_regression_and_a_stable_item() {
        let (_dir, ds, report) = super::super::tests::tiny_report();
        let m = &ds.matrix;
        let a = &report.analyses[0];
        let mg = &a.grids.models[0];
        let Metrics::Mcq(x) = &a.metrics[0] else {
            panic!("an MCQ analysis");
        };
        let k = mg.grid.k();
        let ids = |rows: Vec<usize>| -> Vec<String> {
            rows.iter()
                .map(|&r| m.item(mg.grid.items[r]).id.to_string())
                .collect()
        };
        let names: Vec<&str> = budget_order(m, a)
            .iter()
            .map(|&c| &*m.config(c).name)
            .collect();
        assert_eq!(names, vec!["4f", "8f"]);
        let ladder = mg.grid.ladder();
        assert_eq!(ladder.len(), 2);
        assert_eq!(
            ids(churn_rows(x, &ladder, k, 0, 0)),
            vec!["q2"],
            "stable right"
        );
        assert_eq!(ids(churn_rows(x, &ladder, k, 0, 1)), Vec::<String>::new());
        assert_eq!(ids(churn_rows(x, &ladder, k, 0, 2)), vec!["q1"], "lost");
        assert_eq!(ids(churn_rows(x, &ladder, k, 1, 2)), Vec::<String>::new());
        assert_eq!(ids(class_rows(x, Class::AlwaysCorrect)), vec!["q2"]);
        assert_eq!(ids(class_rows(x, Class::MonotonicDecreasing)), vec!["q1"]);
        let (lo, hi) = (ladder[0], ladder[1]);
        assert_eq!(ids(right_wrong_rows(x, k, lo, hi)), vec!["q1"]);
        assert_eq!(ids(right_wrong_rows(x, k, hi, lo)), Vec::<String>::new());
        // One protocol and task, two scopes (all benchmarks pooled, and b alone).
        assert_eq!(next_analysis(&report.analyses, 0, Axis::Protocol), 0);
        assert_eq!(next_analysis(&report.analyses, 0, Axis::Task), 0);
        assert_eq!(next_analysis(&report.analyses, 0, Axis::Scope), 1);
        assert_eq!(next_analysis(&report.analyses, 1, Axis::Scope), 0);
        // Against itself, no item is harmful under one protocol only.
        assert_eq!(one_protocol_only(a, 0, a), Some(Vec::new()));
    }
}
