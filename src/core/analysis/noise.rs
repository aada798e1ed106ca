//! The noise floor of one model's multiple-choice grid (docs/measures.md §16.2-16.4): how
//! often an answer flips under a nuisance alone (replicates of the grid's cells), each ladder
//! edge's negative flips against that floor with an exact test, and the items harmful under
//! every replicate. The false-discovery pass over an analysis's edges is [`fdr`].

use std::collections::BTreeMap;

use serde::Serialize;

use super::exact::{bh_q, fisher_greater_p};
use super::grid::{ModelGrid, Name};
use super::{Metrics, pct};
use crate::core::column::Ids;
use crate::core::matrix::{Replicates, ResponseMatrix};

/// Replicate pairs over a set of (item, configuration, replicate) and how they disagree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Floor {
    /// Replicate pairs: a grid cell and one replicate of it.
    pub pairs: usize,
    /// Pairs whose replicate's value differs from the cell's.
    pub disagree: usize,
    /// Pairs right in the cell, wrong in the replicate.
    pub neg: usize,
    /// Pairs wrong in the cell, right in the replicate.
    pub pos: usize,
    /// Percent of the pairs that disagree.
    pub disagreement_rate: Option<f64>,
    /// Percent of the pairs that turn wrong: the negative-flip floor.
    pub negative_flip_floor: Option<f64>,
}

impl Floor {
    fn merge(&mut self, o: &Floor) {
        self.pairs += o.pairs;
        self.neg += o.neg;
        self.pos += o.pos;
    }

    /// The rates, once the counts are in.
    fn rated(mut self) -> Floor {
        self.disagree = self.neg + self.pos;
        self.disagreement_rate = pct(self.disagree, self.pairs);
        self.negative_flip_floor = pct(self.neg, self.pairs);
        self
    }
}

/// The floor over every pair, per nuisance and per grid configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Floors {
    /// Every pair.
    pub all: Floor,
    /// Per selected nuisance with a pair in the grid, by name.
    pub by_nuisance: BTreeMap<String, Floor>,
    /// Per grid configuration, in grid order (every nuisance selected pooled).
    pub per_config: Vec<Floor>,
}

/// A ladder edge's negative flips against the floor of its two configurations.
#[derive(Debug, Clone, Serialize)]
pub struct Edge {
    /// The lower configuration.
    pub from: Name,
    /// The higher configuration.
    pub to: Name,
    /// Grid items.
    pub n: usize,
    /// Items right at `from`, wrong at `to`.
    pub correct_to_wrong: usize,
    /// Items wrong at `from`, right at `to`.
    pub wrong_to_correct: usize,
    /// Percent of items turning wrong on the edge.
    pub observed_nfr: f64,
    /// The negative-flip floor of the edge's two configurations, pooled.
    pub floor_nfr: Option<f64>,
    /// `observed_nfr − floor_nfr`, in points.
    pub excess_nfr: Option<f64>,
    /// Fisher's one-sided p of the edge's negative flips against the floor's.
    pub excess_p: Option<f64>,
    /// Its Benjamini–Hochberg q within the analysis.
    pub excess_q: Option<f64>,
    /// Whether `excess_q ≤ alpha`.
    pub beyond_noise: bool,
}

/// Items harmful under every replicate (§16.4).
#[derive(Debug, Clone, Serialize)]
pub struct Stable {
    /// Items with at least two outcomes at every grid configuration.
    pub replicated_items: usize,
    /// Those harmful on the canonical cells.
    pub harmful_replicated: usize,
    /// Those of them harmful under every replicate.
    pub stable_harmful_replicated: usize,
    /// Percent of the replicated harmful items whose harm does not survive the replicates.
    pub lottery_rate: Option<f64>,
    /// Grid items with a stable harmful transition.
    pub stable_harmful_items: usize,
    /// Percent of grid items with a stable harmful transition.
    pub stable_harmful_rate: Option<f64>,
    /// Grid items with a stable harmful transition to the top configuration.
    pub stable_terminal_items: usize,
}

/// Whether an item's harm survives its replicates (docs/measures.md §16.4): the same
/// configurations measured again under a nuisance (a re-run, the sampling grid shifted).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Harm {
    /// A harmful transition holds under every replicate: right at the lower budget and
    /// wrong at the higher one in every outcome, with at least two outcomes at each.
    Stable,
    /// Too few replicates to tell: some configuration has its canonical answer alone, and
    /// no transition is stable.
    Unjudged,
    /// Replicated at every configuration, and no harmful transition holds under every
    /// replicate: the flip may be noise.
    Lottery,
}

impl Harm {
    /// Every kind, in the order a queue sorted by it shows them.
    pub const ALL: [Harm; 3] = [Harm::Stable, Harm::Unjudged, Harm::Lottery];

    /// A mark that reads without colour: full for a harm that holds, hollow for one that
    /// may be noise, a dot for one not yet judged.
    pub fn glyph(self) -> &'static str {
        match self {
            Harm::Stable => "●",
            Harm::Unjudged => "·",
            Harm::Lottery => "○",
        }
    }

    /// Its name (as an audit file writes it).
    pub fn label(self) -> &'static str {
        match self {
            Harm::Stable => "stable",
            Harm::Unjudged => "unjudged",
            Harm::Lottery => "lottery",
        }
    }
    /// The kind of item `i` of a model's grid by its outcomes, for an item with harm.
    pub fn of(items: &ItemOutcomes, i: usize) -> Harm {
        if items.stable_harmful[i] {
            Harm::Stable
        } else if items.min_outcomes[i] >= 2 {
            Harm::Lottery
        } else {
            Harm::Unjudged
        }
    }
}

/// Per grid item: the fewest outcomes at any configuration, and whether the harm is stable.
#[derive(Debug, Clone, Default)]
pub struct ItemOutcomes {
    /// `min_k |O[i][k]|`: 1 where some configuration has no replicate.
    pub min_outcomes: Vec<u32>,
    /// Whether the item has a stable harmful transition.
    pub stable_harmful: Vec<bool>,
}

/// The `replicates` block of a model's MCQ metrics.
#[derive(Debug, Clone, Serialize)]
pub struct Replicated {
    /// The nuisances whose replicates count, sorted.
    pub nuisances: Vec<String>,
    /// The false-discovery level of `beyond_noise`.
    pub alpha: f64,
    /// The floor.
    pub floor: Floors,
    /// Every churn edge against the floor, in ladder order.
    pub edges: Vec<Edge>,
    /// Items harmful under every replicate.
    pub stable: Stable,
    /// Per-item outcomes, for the export and the queue.
    #[serde(skip)]
    pub items: ItemOutcomes,
}

/// The nuisances a run selects: by name, sorted; and by id of `m.replicates.names`.
pub fn selection(m: &ResponseMatrix, wanted: Option<&[String]>) -> (Vec<String>, Vec<bool>) {
    let r = &m.replicates;
    let mut names: Vec<String> = match wanted {
        None => r
            .nuisances
            .iter()
            .map(|&n| r.names.name(n).to_string())
            .collect(),
        Some(w) => w.to_vec(),
    };
    names.sort();
    names.dedup();
    let mut selected = vec![false; r.names.len()];
    for n in &names {
        if let Some(id) = r.names.get(n) {
            selected[id as usize] = true;
        }
    }
    (names, selected)
}

/// What the floor is set against: a grid's canonical measures (§3).
pub struct Canonical<'a> {
    /// `y[i * k + c]`, the grid's 0/1 values.
    pub y: &'a [u8],
    /// Harmful pairs per grid item (§3.5).
    pub harmful_pairs: &'a [u64],
    /// The churn edges in ladder order: from, to, `correct_to_wrong`, `wrong_to_correct`.
    pub churn: Vec<(Name, Name, usize, usize)>,
}

/// The replicate measures of a model's grid; `None` when the grid has no replicate pair
/// of a selected nuisance. The q-values are left for [`fdr`].
pub fn compute(
    m: &ResponseMatrix,
    mg: &ModelGrid,
    x: &Canonical<'_>,
    (names, selected): (&[String], &[bool]),
    alpha: f64,
) -> Option<Replicated> {
    let reps = &m.replicates;
    if reps.cells.is_empty() {
        return None;
    }
    let g = &mg.grid;
    let (n, k) = (g.n(), g.k());
    if n == 0 || k == 0 {
        return None;
    }
    let y = x.y;
    // The selected nuisances, each a slot; the pairs counted per (configuration, slot,
    // cell's value, replicate's value), one add a pair, and made floors after.
    const NO_SLOT: usize = usize::MAX;
    let mut slot_of = vec![NO_SLOT; selected.len()];
    let mut slot_ids: Vec<u32> = Vec::new();
    for (id, _) in selected.iter().enumerate().filter(|(_, s)| **s) {
        slot_of[id] = slot_ids.len();
        slot_ids.push(id as u32);
    }
    let slots = slot_ids.len();
    let mut tally = vec![0usize; k * slots * 4];
    let mut items = ItemOutcomes {
        min_outcomes: vec![u32::MAX; n],
        stable_harmful: vec![false; n],
    };
    let top = g.top.unwrap_or(k - 1);
    let (mut stable_right, mut stable_wrong) = (vec![false; k], vec![false; k]);
    let mut stable = Stable {
        replicated_items: 0,
        harmful_replicated: 0,
        stable_harmful_replicated: 0,
        lottery_rate: None,
        stable_harmful_items: 0,
        stable_harmful_rate: None,
        stable_terminal_items: 0,
    };
    let on_item = |i: usize, outcomes: &[u32], ones: &[u32]| {
        for c in 0..k {
            stable_right[c] = outcomes[c] >= 2 && ones[c] == outcomes[c];
            stable_wrong[c] = outcomes[c] >= 2 && ones[c] == 0;
        }
        items.min_outcomes[i] = outcomes.iter().copied().min().unwrap_or(u32::MAX);
        // Stable harm needs a configuration stably right and one stably wrong.
        let harmful = stable_right.contains(&true)
            && stable_wrong.contains(&true)
            && g.budget_order
                .count(|a| stable_right[a], |b| stable_wrong[b])
                > 0;
        items.stable_harmful[i] = harmful;
        stable.stable_harmful_items += usize::from(harmful);
        stable.stable_terminal_items +=
            usize::from(stable_wrong[top] && (0..k).any(|a| g.lower(a, top) && stable_right[a]));
        if items.min_outcomes[i] >= 2 {
            stable.replicated_items += 1;
            if x.harmful_pairs[i] > 0 {
                stable.harmful_replicated += 1;
                stable.stable_harmful_replicated += usize::from(harmful);
            }
        }
    };
    let walk = Walk {
        reps,
        cells: &mg.cells[..n * k],
        y,
        k,
        slots,
    };
    // Each replicate's outcome as the floor counts it: (slot, right), or none (no value,
    // or a nuisance not selected). Read from the columns' own bytes when both are a byte
    // wide, the usual case (a few nuisances, values 0 and 1): a table per byte, no
    // dispatch per replicate; else by id.
    let (codes, table, raw) = reps.cells.value.parts();
    let class = |v: f64| (!v.is_nan()).then_some(usize::from(v == 1.0));
    match (raw, codes, &reps.cells.nuisance) {
        (None, Ids::U8(values), Ids::U8(nuisances)) => {
            // A stored byte is the id + 1 (0 for none).
            let slot_of_byte: [usize; 256] = std::array::from_fn(|b| {
                b.checked_sub(1)
                    .and_then(|id| slot_of.get(id).copied())
                    .unwrap_or(NO_SLOT)
            });
            let class_of_byte: [Option<usize>; 256] = std::array::from_fn(|b| {
                b.checked_sub(1)
                    .and_then(|code| table.get(code).copied())
                    .and_then(class)
            });
            walk.run(
                &mut tally,
                |j| {
                    let slot = slot_of_byte[usize::from(nuisances[j])];
                    let w = class_of_byte[usize::from(values[j])]?;
                    (slot != NO_SLOT).then_some((slot, w))
                },
                on_item,
            );
        }
        _ => {
            let cols = &reps.cells;
            walk.run(
                &mut tally,
                |j| {
                    let slot = slot_of
                        .get(cols.nuisance.get(j) as usize)
                        .copied()
                        .unwrap_or(NO_SLOT);
                    let w = class(cols.value.get(j))?;
                    (slot != NO_SLOT).then_some((slot, w))
                },
                on_item,
            );
        }
    }
    // The floor of the pairs of `tally` entries `at` (each the four counts of one
    // configuration and slot).
    let floor = |at: &mut dyn Iterator<Item = usize>| {
        let mut f = Floor::default();
        for t in at {
            let n = &tally[t * 4..t * 4 + 4];
            f.pairs += n.iter().sum::<usize>();
            f.neg += n[2];
            f.pos += n[1];
        }
        f
    };
    let per_config: Vec<Floor> = (0..k)
        .map(|c| floor(&mut (c * slots..(c + 1) * slots)))
        .collect();
    let by_nuisance = slot_ids
        .iter()
        .enumerate()
        .map(|(slot, &id)| (id, floor(&mut (0..k).map(|c| c * slots + slot))))
        .filter(|(_, f)| f.pairs > 0);
    let mut all = Floor::default();
    for f in &per_config {
        all.merge(f);
    }
    if all.pairs == 0 {
        return None;
    }
    stable.lottery_rate = pct(
        stable.harmful_replicated - stable.stable_harmful_replicated,
        stable.harmful_replicated,
    );
    stable.stable_harmful_rate = pct(stable.stable_harmful_items, n);

    let ladder = g.ladder();
    let edges = ladder
        .windows(2)
        .zip(&x.churn)
        .map(|(w, (from, to, bad, good))| {
            let (a, b) = (&per_config[w[0]], &per_config[w[1]]);
            let (pairs, neg) = (a.pairs + b.pairs, a.neg + b.neg);
            let bad = *bad;
            let observed_nfr = 100.0 * bad as f64 / n as f64;
            let floor_nfr = pct(neg, pairs);
            Edge {
                from: from.clone(),
                to: to.clone(),
                n,
                correct_to_wrong: bad,
                wrong_to_correct: *good,
                observed_nfr,
                floor_nfr,
                excess_nfr: floor_nfr.map(|f| observed_nfr - f),
                excess_p: fisher_greater_p(bad as u64, n as u64, neg as u64, pairs as u64),
                excess_q: None,
                beyond_noise: false,
            }
        })
        .collect();
    let mut by_name: BTreeMap<String, Floor> = BTreeMap::new();
    for (id, f) in by_nuisance {
        by_name.insert(reps.names.name(id).to_string(), f.rated());
    }
    Some(Replicated {
        nuisances: names.to_vec(),
        alpha,
        floor: Floors {
            all: all.rated(),
            by_nuisance: by_name,
            per_config: per_config.into_iter().map(Floor::rated).collect(),
        },
        edges,
        stable,
        items,
    })
}

/// One pass of [`compute`] over a grid's cells and their replicates.
struct Walk<'a> {
    reps: &'a Replicates,
    /// The grid's cells, `k` an item.
    cells: &'a [u32],
    y: &'a [u8],
    k: usize,
    slots: usize,
}

impl Walk<'_> {
    /// Counts each pair into `tally` by (configuration, slot, cell's value, replicate's
    /// value), `outcome` giving replicate `j`'s slot and value (or none: it does not
    /// count), and gives each item its outcomes and right ones per configuration, its
    /// own cell's included.
    #[inline]
    fn run(
        &self,
        tally: &mut [usize],
        outcome: impl Fn(usize) -> Option<(usize, usize)>,
        mut on_item: impl FnMut(usize, &[u32], &[u32]),
    ) {
        let k = self.k;
        let (mut outcomes, mut ones) = (vec![0u32; k], vec![0u32; k]);
        for (i, (cells, y)) in self
            .cells
            .chunks_exact(k)
            .zip(self.y.chunks_exact(k))
            .enumerate()
        {
            for c in 0..k {
                let v = y[c];
                let (mut o, mut right) = (1u32, u32::from(v));
                for j in self.reps.range_of(cells[c]) {
                    let Some((slot, w)) = outcome(j) else {
                        continue;
                    };
                    tally[(c * self.slots + slot) * 4 + usize::from(v == 1) * 2 + w] += 1;
                    o += 1;
                    right += w as u32;
                }
                outcomes[c] = o;
                ones[c] = right;
            }
            on_item(i, &outcomes, &ones);
        }
    }
}

/// The false-discovery pass of §16.3 over one analysis's models (`models[i]` the model id
/// of `metrics[i]`): every churn entry's `mcnemar_q`, every edge's `excess_q` and
/// `beyond_noise`, each family ranked by (p, model, edge).
pub fn fdr(models: &[u32], metrics: &mut [Metrics], alpha: f64) {
    let mut mcnemar = Vec::new();
    let mut excess = Vec::new();
    for (&model, x) in models.iter().zip(metrics.iter()) {
        let Metrics::Mcq(x) = x else { continue };
        for (j, c) in x.churn.iter().enumerate() {
            mcnemar.push((Some(c.mcnemar_p), (model, j)));
        }
        if let Some(r) = &x.replicates {
            for (j, e) in r.edges.iter().enumerate() {
                excess.push((e.excess_p, (model, j)));
            }
        }
    }
    let (mut mq, mut eq) = (bh_q(&mcnemar).into_iter(), bh_q(&excess).into_iter());
    for x in metrics.iter_mut() {
        let Metrics::Mcq(x) = x else { continue };
        for c in &mut x.churn {
            c.mcnemar_q = mq.next().flatten().unwrap_or(1.0);
        }
        if let Some(r) = &mut x.replicates {
            for e in &mut r.edges {
                e.excess_q = eq.next().flatten();
                e.beyond_noise = e.excess_q.is_some_and(|q| q <= alpha);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::core::analysis::params::Params;
    use crate::core::column::Floats;

    fn report(m: &ResponseMatrix) -> String {
        let params = Params {
            bootstrap_b: 0,
            ..Params::default()
        };
        let mut out = Vec::new();
        crate::core::analysis::run(m, &params, None)
            .write_json(m, &mut out, false)
            .expect("json");
        String::from_utf8(out).expect("utf8")
    }

    /// The floor read from byte-wide columns (the table per byte) and from any other
    /// width (by id) is the same: the demo's replicates with their nuisances and values
    /// widened to four bytes a replicate give the same report.
    #[test]
    fn the_floor_is_the_same_whatever_the_width_of_the_columns() {
        let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo");
        let mut m = crate::core::dataset::load_dataset(&demo, None)
            .expect("the demo loads")
            .matrix;
        let narrow = report(&m);
        assert!(
            narrow.contains("\"negative_flip_floor\""),
            "the demo has a floor"
        );
        let cols = &mut m.replicates.cells;
        assert!(matches!(cols.nuisance, Ids::U8(_)), "the demo's are a byte");
        let wide = |ids: &Ids| Ids::U32(ids.iter().map(|id| id.wrapping_add(1)).collect());
        cols.nuisance = wide(&cols.nuisance);
        let (codes, table, raw) = cols.value.parts();
        assert!(raw.is_none());
        cols.value = Floats::from_parts(wide(codes), table.to_vec(), None).expect("codes");
        assert!(matches!(cols.nuisance, Ids::U32(_)));
        assert_eq!(report(&m), narrow);
    }
}
