//! Recovery by an intervention (docs/measures.md §11): does a run under another sampling policy
//! (the intervention protocol) fix the terminal regressions of the primary grid, and what
//! does it break?

use super::grid::ModelGrid;
use super::mcq::{Intervention, McqItems};
use super::pct;
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

/// Recovery of one model's MCQ grid by the intervention protocol (docs/measures.md §11);
/// `None` when no grid item has an intervention cell.
pub fn compute(
    m: &ResponseMatrix,
    protocol: u32,
    mg: &ModelGrid,
    items: &McqItems,
) -> Option<Intervention> {
    let g = &mg.grid;
    let (k, top) = (g.k(), g.top?);
    let (mut n, mut terminal, mut recovered, mut top_correct, mut broken) = (0, 0, 0, 0, 0);
    let (mut sum_int, mut sum_top) = (0i64, 0i64);
    for (i, &item) in g.items.iter().enumerate() {
        let Some(cell) = intervention_cell(m, protocol, mg.model, item) else {
            continue;
        };
        n += 1;
        let y_int = m.cell_value.get(cell as usize) == 1.0;
        let y_top = items.y[i * k + top] == 1;
        sum_int += i64::from(y_int);
        sum_top += i64::from(y_top);
        if items.terminal[i] {
            terminal += 1;
            recovered += usize::from(y_int);
        }
        if y_top {
            top_correct += 1;
            broken += usize::from(!y_int);
        }
    }
    if n == 0 {
        return None;
    }
    Some(Intervention {
        items_with_intervention: n,
        terminal_regressions: terminal,
        recovered,
        recovery_rate: pct(recovered, terminal),
        top_correct_items: top_correct,
        broken,
        broken_rate: pct(broken, top_correct),
        accuracy_intervention: 100.0 * sum_int as f64 / n as f64,
        accuracy_top: 100.0 * sum_top as f64 / n as f64,
        accuracy_delta: 100.0 * (sum_int - sum_top) as f64 / n as f64,
    })
}
