//! The confidence cascade (docs/measures.md §6): answer at the cheapest stage whose confidence
//! clears a threshold τ, escalate otherwise; sweep τ and pick the cheapest threshold that
//! is as accurate as always using the last stage.

use rustc_hash::FxHashMap;
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

use super::grid::{ModelGrid, Name};
use crate::core::matrix::ResponseMatrix;

/// Number of thresholds of the sweep: τ = j / 100 for j = 0..=100.
pub const TAU_STEPS: usize = 101;

/// The cascade's baseline: always answering with the last stage.
#[derive(Debug, Clone, Serialize)]
pub struct Baseline {
    /// The last stage's configuration.
    pub config: String,
    /// Items right at the last stage.
    pub correct: usize,
    /// Accuracy (percent) at the last stage.
    pub accuracy: f64,
    /// Frames per item: the last stage's frame cost.
    pub mean_cost: f64,
}

/// The threshold chosen: the cheapest τ at least as right as the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct Selected {
    /// The confidence threshold.
    pub tau: f64,
    /// Items right at their stop stage.
    pub correct: usize,
    /// Accuracy (percent) at the stop stages.
    pub accuracy: f64,
    /// Frames per item when a stage reuses the frames of the one before.
    pub mean_shared_cost: f64,
    /// Frames per item when every stage visited runs from scratch.
    pub mean_no_share_cost: f64,
    /// `100 · (1 − mean_shared_cost / g_m)`; `None` when the last stage costs no frames.
    pub cost_reduction_pct: Option<f64>,
    /// Items stopping at each stage.
    pub stop_counts: Vec<usize>,
}

/// One threshold of the sweep `τ = j / 100`.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    /// The confidence threshold.
    pub tau: f64,
    /// Items right at their stop stage.
    pub correct: usize,
    /// Accuracy (percent) at the stop stages.
    pub accuracy: f64,
    /// Shared-cost frames over all items (an integer, which the selection compares).
    pub shared_cost_total: u64,
    /// Frames per item when a stage reuses the frames of the one before.
    pub mean_shared_cost: f64,
    /// Frames per item when every stage visited runs from scratch.
    pub mean_no_share_cost: f64,
    /// Items stopping at each stage.
    pub stop_counts: StopCounts,
}

/// Items stopping at each stage at one τ, kept as the stages that hold any: an item stops
/// at one stage, so a sweep row has at most `n` non-zero counts however many stages there
/// are (101 dense rows over a million stages would be 800 MB). Serialised as the full array
/// of docs/measures.md §12.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StopCounts {
    m: usize,
    /// `(stage, count)`, stages ascending, counts non-zero.
    nonzero: Vec<(usize, usize)>,
}

impl StopCounts {
    /// The number of stages.
    pub fn len(&self) -> usize {
        self.m
    }

    /// True for a cascade of no stages.
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// Every stage's count, stage by stage.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let mut next = self.nonzero.iter().peekable();
        (0..self.m).map(move |j| match next.peek() {
            Some(&&(stage, count)) if stage == j => {
                next.next();
                count
            }
            _ => 0,
        })
    }

    /// Every stage's count as the dense array the report writes.
    pub fn to_vec(&self) -> Vec<usize> {
        self.iter().collect()
    }
}

impl Serialize for StopCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.m))?;
        for c in self.iter() {
            seq.serialize_element(&c)?;
        }
        seq.end()
    }
}

/// CASCADE of docs/measures.md §12.
#[derive(Debug, Clone, Serialize)]
pub struct Cascade {
    /// The stage configurations, in the order they are tried.
    pub stages: Vec<Name>,
    /// Frame cost of each stage.
    pub stage_frames: Vec<u64>,
    /// Always answering with the last stage.
    pub baseline: Baseline,
    /// The threshold chosen; `None` when no τ is as right as the baseline.
    pub selected: Option<Selected>,
    /// Every threshold of the sweep; left out of a report that asks for it to be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Vec<SweepRow>>,
}

/// POOLED of docs/measures.md §12: the cascade over every (model, item) of a joint grid.
#[derive(Debug, Clone, Serialize)]
pub struct Pooled {
    /// (model, item) pairs pooled.
    pub n: usize,
    /// The cascade over those pairs, with one τ for all.
    #[serde(flatten)]
    pub cascade: Cascade,
}

/// What a cascade needs of the items: per item and stage, the confidence (missing = 0) and
/// the 0/1 value.
#[derive(Debug, Clone, Default)]
pub struct StageData {
    /// Number of stages.
    pub m: usize,
    /// `conf[i * m + j]`: confidence of item `i` at stage `j` (0 when missing).
    pub conf: Vec<f64>,
    /// `y[i * m + j]`: 0/1 value of item `i` at stage `j`.
    pub y: Vec<u8>,
    /// Whether any item carries a confidence on a stage before the last.
    pub any_confidence: bool,
}

impl StageData {
    /// Number of items.
    pub fn n(&self) -> usize {
        self.y.len().checked_div(self.m).unwrap_or(0)
    }

    /// Whether the cascade is defined (docs/measures.md §6): two stages or more, an item, and a
    /// confidence on a stage before the last.
    pub fn defined(&self) -> bool {
        self.m >= 2 && self.any_confidence && self.n() > 0
    }

    /// Adds another model's items (with the same stages), for the pooled cascade.
    pub fn append(&mut self, other: &StageData) {
        self.m = other.m;
        self.conf.extend_from_slice(&other.conf);
        self.y.extend_from_slice(&other.y);
        self.any_confidence |= other.any_confidence;
    }
}

/// The stage columns of a model's grid: the `cascade_stages` parameter (`None` if one is not
/// in the grid) or the visual ladder.
pub fn stage_columns(
    m: &ResponseMatrix,
    mg: &ModelGrid,
    stages: Option<&[String]>,
) -> Option<Vec<usize>> {
    let g = &mg.grid;
    match stages {
        Some(names) => names
            .iter()
            .map(|n| g.configs.iter().position(|&c| *m.config(c).name == **n))
            .collect(),
        None => Some(
            g.ladder()
                .into_iter()
                .filter(|&c| g.frames(m, c) > 0)
                .collect(),
        ),
    }
}

/// The confidences and values of a model's grid items at the stage columns `cols`.
pub fn stage_data(m: &ResponseMatrix, mg: &ModelGrid, cols: &[usize]) -> StageData {
    let k = mg.grid.k();
    let s = cols.len();
    // The cells stage by stage, then their values and confidences in one pass each.
    let cells: Vec<u32> = mg
        .cells
        .chunks_exact(k)
        .flat_map(|row| cols.iter().map(|&c| row[c]))
        .collect();
    let mut conf = m.cell_confidence.map_at(&cells, |x| x);
    let y = m.cell_value.map_at(&cells, |v| u8::from(v == 1.0));
    drop(cells);
    // A confidence counts where it can stop the cascade: at any stage but the last.
    let any_confidence = conf
        .iter()
        .enumerate()
        .any(|(i, x)| !x.is_nan() && i % s + 1 < s);
    for x in &mut conf {
        if x.is_nan() {
            *x = 0.0;
        }
    }
    StageData {
        m: s,
        conf,
        y,
        any_confidence,
    }
}

/// The last τ step `j` (τ = j / 100, computed as a division, as docs/measures.md §6 says) that a
/// confidence clears (`conf >= τ`), or `None` if it clears none.
fn last_step_cleared(conf: f64) -> Option<usize> {
    let tau = |j: usize| j as f64 / 100.0;
    if conf.is_nan() || conf < tau(0) {
        return None;
    }
    let mut j = ((conf * 100.0).floor().max(0.0) as usize).min(TAU_STEPS - 1);
    while j + 1 < TAU_STEPS && conf >= tau(j + 1) {
        j += 1;
    }
    while j > 0 && conf < tau(j) {
        j -= 1;
    }
    Some(j)
}

/// Differences of the stop counts by τ step and stage (or, accumulated, the counts of one
/// step in row 0).
enum StopDiffs {
    /// `d[step * m + stage]`.
    Dense {
        m: usize,
        d: Vec<i64>,
    },
    Sparse(Vec<FxHashMap<usize, i64>>),
}

impl StopDiffs {
    /// Dense up to this many stages (an array of 101 x 1024 counts).
    const DENSE_STAGES: usize = 1024;

    fn new(m: usize) -> Self {
        if m <= Self::DENSE_STAGES {
            StopDiffs::Dense {
                m,
                d: vec![0; (TAU_STEPS + 1) * m],
            }
        } else {
            StopDiffs::Sparse(vec![FxHashMap::default(); TAU_STEPS + 1])
        }
    }

    fn add(&mut self, step: usize, stage: usize, v: i64) {
        match self {
            StopDiffs::Dense { m, d } => d[step * *m + stage] += v,
            StopDiffs::Sparse(d) => *d[step].entry(stage).or_default() += v,
        }
    }

    /// Adds step `j` of `diffs` to the running counts (kept in step 0) and returns the
    /// non-zero ones, stages ascending.
    fn accumulate(&mut self, diffs: &StopDiffs, j: usize) -> Vec<(usize, usize)> {
        match (self, diffs) {
            (StopDiffs::Dense { m, d }, StopDiffs::Dense { d: from, .. }) => {
                let m = *m;
                for (s, &x) in d[..m].iter_mut().zip(&from[j * m..(j + 1) * m]) {
                    *s += x;
                }
                (0..m)
                    .filter(|&st| d[st] != 0)
                    .map(|st| (st, d[st] as usize))
                    .collect()
            }
            (StopDiffs::Sparse(d), StopDiffs::Sparse(from)) => {
                let counts = &mut d[0];
                for (&stage, &x) in &from[j] {
                    let c = counts.entry(stage).or_default();
                    *c += x;
                    if *c == 0 {
                        counts.remove(&stage);
                    }
                }
                let mut v: Vec<(usize, usize)> =
                    counts.iter().map(|(&st, &c)| (st, c as usize)).collect();
                v.sort_unstable();
                v
            }
            _ => unreachable!("the counts and their differences share a kind"),
        }
    }
}

/// Runs the sweep and the selection. `None` when the cascade is undefined (fewer than two
/// stages, or no confidence on any stage before the last).
pub fn cascade(
    data: &StageData,
    stage_names: Vec<Name>,
    stage_frames: Vec<u64>,
    with_sweep: bool,
) -> Option<Cascade> {
    let m = data.m;
    let n = data.n();
    if !data.defined() {
        return None;
    }
    // Cost of stopping at stage j: shared pays only the extra frames of each escalation.
    let mut shared = vec![0u64; m];
    let mut no_share = vec![0u64; m];
    for j in 0..m {
        let g = stage_frames[j];
        shared[j] = if j == 0 {
            g
        } else {
            shared[j - 1] + g.saturating_sub(stage_frames[j - 1])
        };
        no_share[j] = if j == 0 { g } else { no_share[j - 1] + g };
    }
    let g_m = stage_frames[m - 1];
    let correct_base: usize = data.y.chunks_exact(m).map(|r| usize::from(r[m - 1])).sum();
    let nf = n as f64;

    // An item stops at the first stage whose confidence clears τ, so as τ rises its stop
    // moves only later: each stage holds the item over a range of τ steps. Adding those
    // ranges into difference arrays gives the whole sweep in O(items x stages). The stop
    // counts' differences are a steps x stages array for few stages; for many, a map per τ
    // step of the stages that have any (an item adds at most 101 ranges), since a million
    // stages would make that array 800 MB.
    let mut d_stop = StopDiffs::new(m);
    let mut d_correct = vec![0i64; TAU_STEPS + 1];
    let mut d_shared = vec![0i64; TAU_STEPS + 1];
    let mut d_no_share = vec![0i64; TAU_STEPS + 1];
    let mut add = |stage: usize, y: u8, from: usize, to: usize| {
        // τ steps from..=to stop at `stage`.
        d_stop.add(from, stage, 1);
        d_stop.add(to + 1, stage, -1);
        for (d, v) in [
            (&mut d_correct, i64::from(y)),
            (&mut d_shared, shared[stage] as i64),
            (&mut d_no_share, no_share[stage] as i64),
        ] {
            d[from] += v;
            d[to + 1] -= v;
        }
    };
    for (conf, y) in data.conf.chunks_exact(m).zip(data.y.chunks_exact(m)) {
        // `next` is the first τ step not yet assigned to an earlier stage.
        let mut next = 0usize;
        for j in 0..m - 1 {
            let reach = last_step_cleared(conf[j]);
            if let Some(r) = reach
                && r >= next
            {
                add(j, y[j], next, r);
                next = r + 1;
            }
        }
        if next < TAU_STEPS {
            add(m - 1, y[m - 1], next, TAU_STEPS - 1);
        }
    }
    let mut rows = Vec::with_capacity(TAU_STEPS);
    let (mut correct, mut shared_total, mut no_share_total) = (0i64, 0i64, 0i64);
    let mut stops = StopDiffs::new(m);
    for j in 0..TAU_STEPS {
        correct += d_correct[j];
        shared_total += d_shared[j];
        no_share_total += d_no_share[j];
        let nonzero = stops.accumulate(&d_stop, j);
        let (correct, shared_total) = (correct as usize, shared_total as u64);
        rows.push(SweepRow {
            tau: j as f64 / 100.0,
            correct,
            accuracy: 100.0 * correct as f64 / nf,
            shared_cost_total: shared_total,
            mean_shared_cost: shared_total as f64 / nf,
            mean_no_share_cost: no_share_total as f64 / nf,
            stop_counts: StopCounts { m, nonzero },
        });
    }

    // Cheapest qualifying τ; ties to more correct answers, then to the smaller τ.
    let selected = rows
        .iter()
        .filter(|r| r.correct >= correct_base)
        .min_by(|a, b| {
            a.shared_cost_total
                .cmp(&b.shared_cost_total)
                .then(b.correct.cmp(&a.correct))
                .then(a.tau.total_cmp(&b.tau))
        })
        .map(|r| Selected {
            tau: r.tau,
            correct: r.correct,
            accuracy: r.accuracy,
            mean_shared_cost: r.mean_shared_cost,
            mean_no_share_cost: r.mean_no_share_cost,
            cost_reduction_pct: (g_m != 0).then(|| 100.0 * (1.0 - r.mean_shared_cost / g_m as f64)),
            stop_counts: r.stop_counts.to_vec(),
        });

    Some(Cascade {
        baseline: Baseline {
            config: stage_names[m - 1].to_string(),
            correct: correct_base,
            accuracy: 100.0 * correct_base as f64 / nf,
            mean_cost: g_m as f64,
        },
        stages: stage_names,
        stage_frames,
        selected,
        sweep: with_sweep.then_some(rows),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::analysis::bootstrap::SplitMix64;

    /// The policy of docs/measures.md §6 applied literally, τ by τ and item by item.
    fn literal(data: &StageData, frames: &[u64]) -> Vec<(usize, u64, Vec<usize>)> {
        let m = data.m;
        (0..TAU_STEPS)
            .map(|j| {
                let tau = j as f64 / 100.0;
                let mut stops = vec![0; m];
                let (mut correct, mut shared) = (0, 0u64);
                for (conf, y) in data.conf.chunks_exact(m).zip(data.y.chunks_exact(m)) {
                    let stop = conf[..m - 1]
                        .iter()
                        .position(|&c| c >= tau)
                        .unwrap_or(m - 1);
                    stops[stop] += 1;
                    correct += usize::from(y[stop]);
                    shared += frames[0]
                        + (1..=stop)
                            .map(|s| frames[s].saturating_sub(frames[s - 1]))
                            .sum::<u64>();
                }
                (correct, shared, stops)
            })
            .collect()
    }

    /// A model's grid as stage data: values and confidences row by row, stage by stage in
    /// the order given, missing confidences as 0; a confidence on the last stage alone
    /// cannot stop a cascade, so it is not "any confidence".
    #[test]
    fn stage_data_takes_each_items_stages_in_order() {
        use crate::core::analysis::grid::{Selection, build_grids};
        use crate::core::analysis::{AnalysisKey, Params, Scope};
        use crate::core::matrix::{MatrixBuilder, Task};
        let data = |conf_at: &[(&str, u64, f64)]| {
            let mut lines = Vec::new();
            for item in ["q0", "q1"] {
                for f in [8u64, 16, 32] {
                    let gold = if (f == 16) == (item == "q0") {
                        "A"
                    } else {
                        "B"
                    };
                    let conf = conf_at
                        .iter()
                        .find(|c| c.0 == item && c.1 == f)
                        .map_or(String::new(), |c| format!(r#","confidence":{}"#, c.2));
                    lines.push(format!(
                        r#"{{"model":"M","benchmark":"b","item_id":"{item}","config":"{f}f","frames":{f},"pred":"A","gold":"{gold}"{conf}}}"#
                    ));
                }
            }
            let mut b = MatrixBuilder::new();
            let file = b.add_file(std::path::Path::new("t.jsonl"));
            crate::core::load::cells::read_cells(lines.join("\n").as_bytes(), None, &mut b, &file)
                .expect("io");
            let m = b.finish().expect("valid").0;
            let key = AnalysisKey {
                protocol: 0,
                task: Task::Mcq,
                scope: Scope::All,
            };
            let params = Params::default();
            let grids = build_grids(&Selection::new(&m, key, &params), &params);
            // Stages 32f then 8f: grid columns 2 and 0.
            stage_data(&m, &grids.models[0], &[2, 0])
        };
        let d = data(&[("q0", 8, 0.25), ("q1", 8, 0.75)]);
        assert_eq!(d.m, 2);
        assert_eq!(d.y, [0, 0, 1, 1]);
        assert_eq!(d.conf, [0.0, 0.25, 0.0, 0.75]);
        assert!(!d.any_confidence, "8f is the last stage");
        let d = data(&[("q1", 32, 0.5)]);
        assert_eq!(d.conf, [0.0, 0.0, 0.5, 0.0]);
        assert!(d.any_confidence, "32f is the first stage");
    }

    #[test]
    fn sweep_matches_the_literal_policy() {
        let mut rng = SplitMix64::new(9);
        for m in 2..6 {
            let n = 300;
            let mut data = StageData {
                m,
                any_confidence: true,
                ..Default::default()
            };
            for _ in 0..n * m {
                // Two-decimal confidences hit the τ grid exactly; others fall between.
                let r = rng.next_u64() % 1000;
                data.conf.push(if r.is_multiple_of(3) {
                    (r % 101) as f64 / 100.0
                } else {
                    r as f64 / 999.0
                });
                data.y.push((rng.next_u64() % 2) as u8);
            }
            let frames: Vec<u64> = (0..m as u64)
                .map(|j| [8, 4, 16, 16, 64][j as usize])
                .collect();
            let names = (0..m)
                .map(|j| Name::from(format!("s{j}").as_str()))
                .collect();
            let c = cascade(&data, names, frames.clone(), true).expect("cascade");
            let want = literal(&data, &frames);
            for (row, (correct, shared, stops)) in c.sweep.expect("sweep").iter().zip(want) {
                assert_eq!(
                    (
                        row.correct,
                        row.shared_cost_total,
                        &row.stop_counts.to_vec()
                    ),
                    (correct, shared, &stops),
                    "τ = {}",
                    row.tau
                );
            }
        }
        assert_eq!(last_step_cleared(0.57), Some(57));
        assert_eq!(last_step_cleared(0.0), Some(0));
        assert_eq!(last_step_cleared(1.0), Some(100));
        assert_eq!(last_step_cleared(0.569999), Some(56));
    }

    #[test]
    fn many_stages_keep_stop_counts_by_stage() {
        // More stages than StopDiffs::DENSE_STAGES: the sparse differences, same sweep.
        let mut rng = SplitMix64::new(11);
        let (m, n) = (StopDiffs::DENSE_STAGES + 77, 40);
        let mut data = StageData {
            m,
            any_confidence: true,
            ..Default::default()
        };
        for _ in 0..n * m {
            // Mostly low confidences, so items travel far along the stages.
            let r = rng.next_u64() % 10_000;
            data.conf.push(if r < 9_990 {
                0.0
            } else {
                (r % 101) as f64 / 100.0
            });
            data.y.push((rng.next_u64() % 2) as u8);
        }
        let frames: Vec<u64> = (1..=m as u64).collect();
        let names = (0..m)
            .map(|j| Name::from(format!("s{j}").as_str()))
            .collect();
        let c = cascade(&data, names, frames.clone(), true).expect("cascade");
        let want = literal(&data, &frames);
        for (row, (correct, shared, stops)) in c.sweep.expect("sweep").iter().zip(want) {
            assert_eq!(row.stop_counts.len(), m);
            assert_eq!(
                (row.correct, row.shared_cost_total, row.stop_counts.to_vec()),
                (correct, shared, stops),
                "τ = {}",
                row.tau
            );
        }
    }
}
