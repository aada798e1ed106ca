//! Recovery by an intervention (docs/measures.md §11): does a run under another sampling policy
//! (the intervention protocol) fix the terminal regressions of the primary grid, and what
//! does it break?

use super::bootstrap::{SplitMix64, interval};
use super::grid::ModelGrid;
use super::mcq::{
    Intervention, McqItems, RecoveryBootstrap, StrategyRecovery, TransitionRecovery, Transitions,
};
use super::params::Params;
use super::{Interval, pct};
use crate::core::matrix::{ResponseMatrix, Task};

/// The intervention cell of (model, item): the valid MCQ cell of the intervention protocol
/// with the largest (budget, config).
pub fn intervention_cell(m: &ResponseMatrix, protocol: u32, model: u32, item: u32) -> Option<u32> {
    if m.item_task(item) != Task::Mcq {
        return None;
    }
    let group = m.group(protocol, model);
    let start = group.partition_point(|&c| m.cell_item.get(c as usize) < item);
    let end = group.partition_point(|&c| m.cell_item.get(c as usize) <= item);
    group[start..end]
        .iter()
        .copied()
        .filter(|&c| m.is_valid(c))
        // Config ids of a protocol are in name order, so (budget, id) is (budget, config).
        .max_by(|&a, &b| {
            let (ca, cb) = (m.cell_config.get(a as usize), m.cell_config.get(b as usize));
            m.config(ca)
                .budget
                .total_cmp(&m.config(cb).budget)
                .then(ca.cmp(&cb))
        })
}

/// The configuration an intervention cell re-ran: its own, or `CONFIG` of a
/// `CONFIG@Nf` (the run of `CONFIG` given `N` planned frames, docs/intervention.md §6).
pub fn rerun_config(name: &str) -> &str {
    match name.rsplit_once('@') {
        Some((base, n))
            if !base.is_empty()
                && n.strip_suffix('f')
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) =>
        {
            base
        }
        _ => name,
    }
}

/// One grid item that has an intervention cell of the top configuration: its answers under
/// the intervention and at the top configuration, and whether it is a terminal regression.
#[derive(Debug, Clone, Copy)]
struct Outcome {
    y_int: bool,
    y_top: bool,
    terminal: bool,
}

/// The cells of intervention protocol `protocol` for grid item `item` of model `model`,
/// split by what they re-ran: the top configuration's (or a configuration not in the grid,
/// an intervention protocol made by hand), the one with the largest (budget, config); and,
/// for each other column `c` of the grid, the one with the largest (budget, config) among
/// those that re-ran `c`.
fn cells_by_rerun(
    m: &ResponseMatrix,
    protocol: u32,
    mg: &ModelGrid,
    item: u32,
) -> (Option<u32>, Vec<(usize, u32)>) {
    let g = &mg.grid;
    let group = m.group(protocol, mg.model);
    let start = group.partition_point(|&c| m.cell_item.get(c as usize) < item);
    let end = group.partition_point(|&c| m.cell_item.get(c as usize) <= item);
    let column = |cell: u32| {
        let name = &*m.config(m.cell_config.get(cell as usize)).name;
        let base = rerun_config(name);
        g.configs
            .iter()
            .position(|&c| &*m.config(c).name == base)
            .filter(|&c| Some(c) != g.top)
    };
    let larger = |a: u32, b: u32| {
        let (ca, cb) = (m.cell_config.get(a as usize), m.cell_config.get(b as usize));
        m.config(ca)
            .budget
            .total_cmp(&m.config(cb).budget)
            .then(ca.cmp(&cb))
    };
    let mut top: Option<u32> = None;
    let mut below: Vec<(usize, u32)> = Vec::new();
    for &cell in &group[start..end] {
        if !m.is_valid(cell) || m.item_task(item) != Task::Mcq {
            continue;
        }
        let slot = match column(cell) {
            None => &mut top,
            Some(c) => match below.iter().position(|x| x.0 == c) {
                Some(j) => {
                    let held = below[j].1;
                    if larger(cell, held).is_gt() {
                        below[j].1 = cell;
                    }
                    continue;
                }
                None => {
                    below.push((c, cell));
                    continue;
                }
            },
        };
        if slot.is_none_or(|held| larger(cell, held).is_gt()) {
            *slot = Some(cell);
        }
    }
    below.sort_unstable();
    (top, below)
}

/// A harmful transition into a configuration below the top that was re-run: the column,
/// and whether the re-run is right.
#[derive(Debug, Clone, Copy)]
struct TransitionOutcome {
    column: usize,
    y_int: bool,
}

/// The outcomes of the grid items that have a cell of intervention protocol `protocol`:
/// those of the top's re-runs, and those of the re-runs of a configuration below the top
/// where the item went wrong after being right at a lower budget (an audited transition).
fn outcomes(
    m: &ResponseMatrix,
    protocol: u32,
    mg: &ModelGrid,
    items: &McqItems,
) -> (Vec<Outcome>, Vec<TransitionOutcome>) {
    let g = &mg.grid;
    let (k, Some(top)) = (g.k(), g.top) else {
        return (Vec::new(), Vec::new());
    };
    let mut at_top = Vec::new();
    let mut below = Vec::new();
    for (i, &item) in g.items.iter().enumerate() {
        let (top_cell, lower_cells) = cells_by_rerun(m, protocol, mg, item);
        if let Some(cell) = top_cell {
            at_top.push(Outcome {
                y_int: m.cell_value.get(cell as usize) == 1.0,
                y_top: items.y[i * k + top] == 1,
                terminal: items.terminal[i],
            });
        }
        let row = items.row(i, k);
        for (c, cell) in lower_cells {
            let harmful = row[c] == 0 && (0..k).any(|a| row[a] == 1 && g.budgets[a] < g.budgets[c]);
            if harmful {
                below.push(TransitionOutcome {
                    column: c,
                    y_int: m.cell_value.get(cell as usize) == 1.0,
                });
            }
        }
    }
    (at_top, below)
}

/// The measures of §11 over some outcomes of the top's re-runs (each counted as often as it
/// is drawn), without the transitions below the top.
fn summarise<'a>(drawn: impl Iterator<Item = &'a Outcome>) -> Intervention {
    let (mut n, mut terminal, mut recovered, mut top_correct, mut broken) = (0, 0, 0, 0, 0);
    let (mut sum_int, mut sum_top) = (0i64, 0i64);
    for o in drawn {
        n += 1;
        sum_int += i64::from(o.y_int);
        sum_top += i64::from(o.y_top);
        if o.terminal {
            terminal += 1;
            recovered += usize::from(o.y_int);
        }
        if o.y_top {
            top_correct += 1;
            broken += usize::from(!o.y_int);
        }
    }
    let acc = |sum: i64| (n != 0).then(|| 100.0 * sum as f64 / n as f64);
    Intervention {
        items_with_intervention: n,
        terminal_regressions: terminal,
        recovered,
        recovery_rate: pct(recovered, terminal),
        top_correct_items: top_correct,
        broken,
        broken_rate: pct(broken, top_correct),
        accuracy_intervention: acc(sum_int),
        accuracy_top: acc(sum_top),
        accuracy_delta: acc(sum_int - sum_top),
    }
}

/// The recovery of the transitions below the top (docs/measures.md §11).
fn transitions(below: &[TransitionOutcome], mg: &ModelGrid) -> Transitions {
    let mut by: Vec<TransitionRecovery> = Vec::new();
    for o in below {
        let config = mg.grid.names[o.column].0.to_string();
        let at = match by.iter().position(|t| t.config == config) {
            Some(j) => &mut by[j],
            None => {
                by.push(TransitionRecovery {
                    config,
                    regressions: 0,
                    recovered: 0,
                    recovery_rate: None,
                });
                by.last_mut().expect("just pushed")
            }
        };
        at.regressions += 1;
        at.recovered += usize::from(o.y_int);
    }
    for t in &mut by {
        t.recovery_rate = pct(t.recovered, t.regressions);
    }
    let (n, k) = (below.len(), below.iter().filter(|o| o.y_int).count());
    Transitions {
        transition_regressions: n,
        transition_recovered: k,
        transition_recovery_rate: pct(k, n),
        transition_recovery_rate_wilson: wilson(k, n),
        transitions: by,
    }
}

/// The recovery of one model's MCQ grid by every intervention protocol of the data, in
/// protocol name order (the intervention protocol before its strategies).
pub fn per_protocol(
    m: &ResponseMatrix,
    params: &Params,
    mg: &ModelGrid,
    items: &McqItems,
) -> Vec<StrategyRecovery> {
    let mut protocols: Vec<(u32, &str, Option<&str>)> = (0..m.protocols.len() as u32)
        .filter_map(|p| {
            let name = m.protocols.name(p);
            params
                .intervention_strategy(name)
                .map(|strategy| (p, name, strategy))
        })
        .collect();
    protocols.sort_by_key(|&(_, name, _)| name);
    protocols
        .into_iter()
        .filter_map(|(p, name, strategy)| {
            let (drawn, below) = outcomes(m, p, mg, items);
            if drawn.is_empty() && below.is_empty() {
                return None;
            }
            let recovery = summarise(drawn.iter());
            Some(StrategyRecovery {
                protocol: name.into(),
                strategy: strategy.map(str::to_string),
                recovery_rate_wilson: wilson(recovery.recovered, recovery.terminal_regressions),
                below: transitions(&below, mg),
                recovery,
                bootstrap: resample(&drawn, params.bootstrap_b, params.seed),
            })
        })
        .collect()
}

/// Wilson's 95% score interval of `k` successes in `n` trials, in percent (`None` when
/// `n = 0`): unlike a percentile bootstrap it does not collapse to a point at 0 of n or n of
/// n, which a plan's few terminal regressions often give (9 of 9 is 70.1 to 100).
pub fn wilson(k: usize, n: usize) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    const Z: f64 = 1.959_963_984_540_054;
    let (k, n) = (k.min(n) as f64, n as f64);
    let p = k / n;
    let z2 = Z * Z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        lo: (100.0 * (centre - half)).max(0.0),
        hi: (100.0 * (centre + half)).min(100.0),
    })
}

/// The percentile intervals of the recovery rate and the accuracy delta, `b` resamples of
/// the outcomes drawn with a fresh SplitMix64 seeded with `seed`.
fn resample(drawn: &[Outcome], b: usize, seed: u64) -> Option<RecoveryBootstrap> {
    let n = drawn.len();
    if b == 0 || n == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut rates = Vec::with_capacity(b);
    let mut deltas = Vec::with_capacity(b);
    for _ in 0..b {
        let x = summarise((0..n).map(|_| &drawn[(rng.next_u64() % n as u64) as usize]));
        rates.extend(x.recovery_rate);
        deltas.extend(x.accuracy_delta);
    }
    Some(RecoveryBootstrap {
        b,
        seed,
        recovery_rate: (!rates.is_empty()).then(|| interval(rates)),
        accuracy_delta: interval(deltas),
    })
}

#[cfg(test)]
mod tests {
    use super::{rerun_config, wilson};

    #[test]
    fn a_cell_names_the_configuration_it_re_ran() {
        assert_eq!(rerun_config("16f@8f"), "16f");
        assert_eq!(rerun_config("a@b@12f"), "a@b");
        for own in ["16f", "32f-int", "x@f", "@8f", "x@8", "x@8g"] {
            assert_eq!(rerun_config(own), own);
        }
    }

    #[test]
    fn wilson_intervals_by_hand() {
        let w = |k, n| {
            wilson(k, n).map(|i| {
                (
                    (i.lo * 100.0).round() / 100.0,
                    (i.hi * 100.0).round() / 100.0,
                )
            })
        };
        // 9 of 9: not [100, 100] as a percentile bootstrap gives.
        assert_eq!(w(9, 9), Some((70.09, 100.0)));
        assert_eq!(w(0, 10), Some((0.0, 27.75)));
        assert_eq!(w(5, 10), Some((23.66, 76.34)));
        assert_eq!(w(0, 0), None);
    }
}
