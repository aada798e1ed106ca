//! Multiple-choice trajectory measures of one model on one grid (docs/measures.md §3-4): the curve,
//! best fixed configuration, oracle and headroom, patterns and classes, harmful transitions,
//! churn, terminal regressions, complementarity, text overwrite and prior fallback.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use serde::Serialize;

use super::cascade::Cascade;
use super::grid::{GridJson, GridSpec, ModelGrid, Name};
use super::pairs::MAX_MATRIX_CONFIGS;
use super::{Interval, OrderedCounts, pct};
use crate::core::matrix::{NO_TEXT, ResponseMatrix};

/// Trajectory class (docs/measures.md §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Right under every configuration.
    AlwaysCorrect,
    /// Wrong under every configuration.
    AlwaysWrong,
    /// Wrong, then right from some budget on (`0…01…1`).
    MonotonicIncreasing,
    /// Right, then wrong from some budget on (`1…10…0`).
    MonotonicDecreasing,
    /// Any other trajectory.
    Oscillating,
}

impl Class {
    /// Every class, in the order reports list them.
    pub const ALL: [Class; 5] = [
        Class::AlwaysCorrect,
        Class::AlwaysWrong,
        Class::MonotonicIncreasing,
        Class::MonotonicDecreasing,
        Class::Oscillating,
    ];

    /// The name in reports and filters (`always_correct`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::AlwaysCorrect => "always_correct",
            Class::AlwaysWrong => "always_wrong",
            Class::MonotonicIncreasing => "monotonic_increasing",
            Class::MonotonicDecreasing => "monotonic_decreasing",
            Class::Oscillating => "oscillating",
        }
    }

    /// The class named `s`, if it is one.
    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The class of a 0/1 sequence.
    pub fn of(y: &[u8]) -> Class {
        let ones = y.iter().filter(|&&v| v == 1).count();
        if ones == y.len() {
            Class::AlwaysCorrect
        } else if ones == 0 {
            Class::AlwaysWrong
        } else if y.windows(2).all(|w| w[0] <= w[1]) {
            Class::MonotonicIncreasing
        } else if y.windows(2).all(|w| w[0] >= w[1]) {
            Class::MonotonicDecreasing
        } else {
            Class::Oscillating
        }
    }
}

/// Per-item results, in grid item order; the per-item export and the audit queue read them.
#[derive(Debug, Clone, Default)]
pub struct McqItems {
    /// `y[i * k + c]`.
    pub y: Vec<u8>,
    /// Trajectory class.
    pub class: Vec<Class>,
    /// Column of the item's best configuration.
    pub best_config: Vec<u32>,
    /// `harmful_pairs_i`: up to K²/4 (6.25·10^10 for half a million right below half a
    /// million wrong), so 64 bits.
    pub harmful_pairs: Vec<u64>,
    /// Whether the item is a terminal regression (§3.7).
    pub terminal: Vec<bool>,
    /// Whether the item is right without video and wrong with some (§4.1).
    pub text_overwrite: Vec<bool>,
    /// Whether the item is right under some configuration.
    pub oracle: Vec<bool>,
    /// Changes between neighbours in the pattern, in grid order.
    pub adjacent_flips: Vec<u32>,
}

impl McqItems {
    /// The 0/1 values of item `i` over the `k` grid configurations.
    pub fn row(&self, i: usize, k: usize) -> &[u8] {
        &self.y[i * k..(i + 1) * k]
    }

    /// The item's pattern: `1` and `0` in grid order.
    pub fn pattern(&self, i: usize, k: usize) -> String {
        self.row(i, k)
            .iter()
            .map(|&v| if v == 1 { '1' } else { '0' })
            .collect()
    }
}

/// A configuration picked on a multiple-choice grid (the best fixed one, or the top).
#[derive(Debug, Clone, Serialize)]
pub struct Pick {
    /// The configuration's id.
    pub config: String,
    /// Its column in the grid.
    pub index: usize,
    /// Accuracy (percent) there.
    pub accuracy: f64,
}

/// Items per trajectory class (§3.4); they add up to the grid's items.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Classes {
    /// Items right everywhere.
    pub always_correct: usize,
    /// Items wrong everywhere.
    pub always_wrong: usize,
    /// Items that only turn right with more budget.
    pub monotonic_increasing: usize,
    /// Items that only turn wrong with more budget.
    pub monotonic_decreasing: usize,
    /// Items that flip both ways.
    pub oscillating: usize,
}

impl Classes {
    /// The count of one class.
    pub fn get(&self, c: Class) -> usize {
        match c {
            Class::AlwaysCorrect => self.always_correct,
            Class::AlwaysWrong => self.always_wrong,
            Class::MonotonicIncreasing => self.monotonic_increasing,
            Class::MonotonicDecreasing => self.monotonic_decreasing,
            Class::Oscillating => self.oscillating,
        }
    }

    fn add(&mut self, c: Class, n: usize) {
        *match c {
            Class::AlwaysCorrect => &mut self.always_correct,
            Class::AlwaysWrong => &mut self.always_wrong,
            Class::MonotonicIncreasing => &mut self.monotonic_increasing,
            Class::MonotonicDecreasing => &mut self.monotonic_decreasing,
            Class::Oscillating => &mut self.oscillating,
        } += n;
    }
}

/// Flips on one edge between adjacent ladder configurations (§3.6).
#[derive(Debug, Clone, Serialize)]
pub struct Churn {
    /// The lower configuration of the edge.
    pub from: Name,
    /// The higher configuration of the edge.
    pub to: Name,
    /// Items wrong at `from`, right at `to`.
    pub wrong_to_correct: usize,
    /// Items right at `from`, wrong at `to`.
    pub correct_to_wrong: usize,
    /// Items right at both.
    pub stable_correct: usize,
    /// Items wrong at both.
    pub stable_wrong: usize,
    /// McNemar's exact two-sided p of the edge's flips (docs/measures.md §16.3).
    pub mcnemar_p: f64,
    /// Its Benjamini–Hochberg q among the analysis's churn entries.
    pub mcnemar_q: f64,
}

impl Churn {
    /// The edge's items in the churn bar's parts, in `core::figures::CHURN_PARTS` order:
    /// right at both, gained, lost, wrong at both.
    pub fn parts(&self) -> [usize; 4] {
        [
            self.stable_correct,
            self.wrong_to_correct,
            self.correct_to_wrong,
            self.stable_wrong,
        ]
    }
}

/// Flips each way summed over the ladder's edges.
#[derive(Debug, Clone, Serialize)]
pub struct ChurnTotals {
    /// Items turning right, over all edges.
    pub wrong_to_correct: usize,
    /// Items turning wrong, over all edges.
    pub correct_to_wrong: usize,
}

/// What two configurations do that one does not (§3.8), as K x K matrices in grid order.
#[derive(Debug, Clone, Serialize)]
pub struct Complementarity {
    /// Empty (`null` in the JSON) when the grid has more than
    /// [`MAX_MATRIX_CONFIGS`] configurations; `omitted` then says so.
    #[serde(serialize_with = "matrix_or_null")]
    pub right_wrong: Vec<Vec<f64>>,
    /// Accuracy of either-is-right over the better of the two, in points.
    #[serde(serialize_with = "matrix_or_null")]
    pub pair_oracle_gain: Vec<Vec<f64>>,
    /// Set when the grid has too many configurations for the matrices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Omitted>,
}

/// Why the K x K matrices of a grid are not in the report: more configurations than
/// [`MAX_MATRIX_CONFIGS`] (a million configurations would make 10^12 entries).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Omitted {
    /// Configurations of the grid.
    pub configs: usize,
    /// The most a grid may have for its matrices to be written.
    pub max_configs: usize,
}

impl Omitted {
    /// `Some` when a grid of `k` configurations is too large for its matrices.
    pub fn for_configs(k: usize) -> Option<Omitted> {
        (k > MAX_MATRIX_CONFIGS).then_some(Omitted {
            configs: k,
            max_configs: MAX_MATRIX_CONFIGS,
        })
    }
}

/// A matrix, or `null` when it was omitted (a grid has at least one configuration, so an
/// empty matrix is always an omitted one).
pub fn matrix_or_null<S: serde::Serializer>(m: &[Vec<f64>], s: S) -> Result<S::Ok, S::Error> {
    if m.is_empty() {
        s.serialize_none()
    } else {
        s.serialize_some(m)
    }
}

/// Items right without video but wrong with it (§4.1).
#[derive(Debug, Clone, Serialize)]
pub struct TextOverwrite {
    /// The grid's zero-frame configurations, in grid order.
    pub zero_frame_configs: Vec<String>,
    /// Items right under some zero-frame configuration.
    pub text_correct_items: usize,
    /// Items overwritten: right without video, wrong under some visual configuration.
    pub items: usize,
    /// Percent of grid items overwritten (the text overwrite rate).
    pub rate: Option<f64>,
    /// Percent of the text-correct items overwritten.
    pub conditional_rate: Option<f64>,
}

/// Wrong answers at a higher budget that are the model's blind answer (§4.2).
#[derive(Debug, Clone, Serialize)]
pub struct PriorFallback {
    /// Items with a blind answer, over which the rest is counted.
    pub items_with_blind: usize,
    /// Harmful transitions between visual configurations.
    pub harmful_pairs: usize,
    /// Those whose wrong answer is the blind answer.
    pub fallback_pairs: usize,
    /// Percent of the harmful pairs that fall back.
    pub rate: Option<f64>,
    /// Terminal regressions from a visual configuration.
    pub terminal_regressions: usize,
    /// Those whose top answer is the blind answer.
    pub terminal_fallbacks: usize,
    /// Percent of the terminal regressions that fall back.
    pub terminal_rate: Option<f64>,
    /// Wrong visual cells (the baseline's population).
    pub wrong_cells: usize,
    /// Those whose answer is the blind answer.
    pub wrong_cells_matching_blind: usize,
    /// Percent of the wrong cells matching the blind answer; fallback is enriched above it.
    pub baseline_rate: Option<f64>,
}

/// Bootstrap intervals of a multiple-choice grid (docs/measures.md §9).
#[derive(Debug, Clone, Serialize)]
pub struct McqBootstrap {
    /// Resamples drawn.
    #[serde(rename = "B")]
    pub b: usize,
    /// Seed of the SplitMix64 generator.
    pub seed: u64,
    /// Whether clusters (videos) were resampled instead of items (docs/measures.md §16.6).
    pub cluster: bool,
    /// Clusters resampled, or items when `cluster` is false.
    pub clusters: usize,
    /// Interval of the headroom.
    pub headroom: Interval,
    /// Interval of the visual confusion rate.
    pub harmful_rate: Interval,
}

/// MCQ_METRICS of docs/measures.md §12.
#[derive(Debug, Clone, Serialize)]
pub struct McqMetrics {
    /// The grid the measures are on.
    pub grid: GridJson,
    /// Grid items.
    pub n_items: usize,
    /// Items right per configuration, in grid order.
    pub correct_counts: Vec<usize>,
    /// Accuracy (percent) per configuration, in grid order (the curve).
    pub accuracy: Vec<f64>,
    /// The configuration right most often, the earliest on a tie.
    pub best_fixed: Pick,
    /// The top configuration and its accuracy.
    pub top: Pick,
    /// Items right under some configuration.
    pub oracle_count: usize,
    /// Percent of items right under some configuration.
    pub oracle_accuracy: f64,
    /// Oracle accuracy less best fixed accuracy, in points.
    pub headroom: f64,
    /// Items per trajectory class.
    pub classes: Classes,
    /// Items per pattern string.
    pub patterns: BTreeMap<String, usize>,
    /// Items per best configuration (the first where the item is right).
    pub best_config_counts: OrderedCounts,
    /// Visually confused items: right at a lower budget, wrong at a higher.
    pub harmful_items: usize,
    /// Percent of items visually confused (the visual confusion rate).
    pub harmful_rate: f64,
    /// Harmful transitions over all items.
    pub harmful_pairs: usize,
    /// Ordered configuration pairs of the grid with a lower and a higher budget.
    pub comparable_pairs: usize,
    /// `n_items · comparable_pairs`.
    pub pairs_total: usize,
    /// Percent of all pairs that are harmful.
    pub harmful_pair_rate: Option<f64>,
    /// Flips on each edge of the ladder.
    pub churn: Vec<Churn>,
    /// Flips each way over all edges.
    pub churn_totals: ChurnTotals,
    /// Items wrong at the top, right at a lower budget.
    pub terminal_regressions: usize,
    /// Percent of items that are terminal regressions.
    pub terminal_regression_rate: f64,
    /// Right-wrong and pair-oracle matrices.
    pub complementarity: Complementarity,
    /// Items right without video, wrong with it.
    pub text_overwrite: TextOverwrite,
    /// Wrong answers that are the blind answer.
    pub prior_fallback: PriorFallback,
    /// The confidence cascade; `None` when it is not defined.
    pub cascade: Option<Cascade>,
    /// Bootstrap intervals; `None` without resamples or items.
    pub bootstrap: Option<McqBootstrap>,
    /// The noise floor and the edges against it (docs/measures.md §16); `None` without a
    /// replicate pair in the grid.
    pub replicates: Option<super::noise::Replicated>,
    /// Recovery by the intervention protocol; primary protocol only.
    pub intervention: Option<Intervention>,
    /// Recovery by every intervention protocol, the protocol itself and its strategies,
    /// with intervals (docs/intervention.md §7); primary protocol only. The JSON holds the
    /// strategies only (`NAME:STRATEGY`), and only when there are some: the protocol
    /// itself is `intervention`, in the shape of docs/measures.md §12.
    #[serde(
        serialize_with = "serialize_strategies",
        skip_serializing_if = "no_strategy"
    )]
    pub interventions: Vec<StrategyRecovery>,
    /// Per-item results, for the export and the audit queue.
    #[serde(skip)]
    pub items: McqItems,
    /// Bootstrap interval of the terminal regression rate, drawn with the same resamples
    /// (for the readable report; the JSON of docs/measures.md §12 has no such field).
    #[serde(skip)]
    pub terminal_interval: Option<Interval>,
}

/// Recovery by an intervention (docs/measures.md §11), in the MCQ metrics of the primary
/// protocol; `intervention::per_protocol` computes it, over the re-runs of the top
/// configuration (terminal recovery; [`Transitions`] has those below it).
#[derive(Debug, Clone, Serialize)]
pub struct Intervention {
    /// Grid items that have an intervention cell of the top configuration; the counts
    /// below are over these.
    pub items_with_intervention: usize,
    /// Terminal regressions of the primary grid (§3.7).
    pub terminal_regressions: usize,
    /// Terminal regressions whose intervention cell is right.
    pub recovered: usize,
    /// `100 · recovered / terminal_regressions`; `None` without terminal regressions.
    pub recovery_rate: Option<f64>,
    /// Items right at the top configuration.
    pub top_correct_items: usize,
    /// Items right at the top configuration but wrong under the intervention.
    pub broken: usize,
    /// `100 · broken / top_correct_items`; `None` when no item is right at the top.
    pub broken_rate: Option<f64>,
    /// Accuracy (percent) of the intervention cells; `None` without a re-run of the top.
    pub accuracy_intervention: Option<f64>,
    /// Accuracy (percent) at the top configuration over the same items.
    pub accuracy_top: Option<f64>,
    /// `accuracy_intervention − accuracy_top`, in points.
    pub accuracy_delta: Option<f64>,
}

/// The recovery of the harmful transitions below the top configuration by their re-runs
/// (docs/measures.md §11): an audited plan re-runs the higher configuration of each
/// transition it holds, and a re-run of one below the top says nothing of the top.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Transitions {
    /// Re-runs of a configuration below the top, of items wrong there and right at a lower
    /// budget (a harmful transition into it, as an audited plan re-runs it).
    pub transition_regressions: usize,
    /// Those whose re-run is right.
    pub transition_recovered: usize,
    /// `100 · transition_recovered / transition_regressions`; `None` without one.
    pub transition_recovery_rate: Option<f64>,
    /// Wilson's 95% score interval of the rate; `None` without a transition.
    pub transition_recovery_rate_wilson: Option<Interval>,
    /// The same per configuration re-run, in grid order.
    pub transitions: Vec<TransitionRecovery>,
}

/// The recovery of the harmful transitions into one configuration below the top.
#[derive(Debug, Clone, Serialize)]
pub struct TransitionRecovery {
    /// The configuration re-run (the transition's higher one).
    pub config: String,
    /// Items wrong there after being right at a lower budget, with a re-run of it.
    pub regressions: usize,
    /// Those whose re-run is right.
    pub recovered: usize,
    /// `100 · recovered / regressions`.
    pub recovery_rate: Option<f64>,
}

/// The recovery by one intervention protocol: the intervention protocol itself or one of
/// its strategies (`NAME:STRATEGY`, docs/intervention.md §7), with bootstrap intervals; `intervention::per_protocol` fills it.
#[derive(Debug, Clone, Serialize)]
pub struct StrategyRecovery {
    /// The protocol of the intervention cells.
    pub protocol: String,
    /// The strategy, the part of the protocol after `NAME:`; `None` for the intervention
    /// protocol itself.
    pub strategy: Option<String>,
    /// The measures of §11 over this protocol's cells.
    #[serde(flatten)]
    pub recovery: Intervention,
    /// Wilson's 95% score interval of the recovery rate (`recovered` of
    /// `terminal_regressions`); `None` without a terminal regression.
    pub recovery_rate_wilson: Option<Interval>,
    /// The recovery of the transitions below the top.
    #[serde(flatten)]
    pub below: Transitions,
    /// Percentile intervals over the items with an intervention cell; `None` without
    /// resamples.
    pub bootstrap: Option<RecoveryBootstrap>,
}

/// Whether none of these recoveries is by a strategy (`NAME:STRATEGY`).
pub fn no_strategy(v: &[StrategyRecovery]) -> bool {
    v.iter().all(|x| x.strategy.is_none())
}

/// The recoveries by strategies, for the report JSON.
pub fn serialize_strategies<S: serde::Serializer>(
    v: &[StrategyRecovery],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().filter(|x| x.strategy.is_some()))
}

/// Bootstrap intervals of a recovery (docs/intervention.md §7): items with an intervention
/// cell drawn with replacement, as docs/measures.md §9 draws grid items.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RecoveryBootstrap {
    /// Resamples drawn.
    #[serde(rename = "B")]
    pub b: usize,
    /// The generator's seed.
    pub seed: u64,
    /// Interval of the recovery rate, over the resamples that hold a terminal regression;
    /// `None` when none does.
    pub recovery_rate: Option<Interval>,
    /// Interval of the accuracy delta.
    pub accuracy_delta: Interval,
}

/// The 0/1 values of a model's grid, row-major.
pub fn values(m: &ResponseMatrix, mg: &ModelGrid) -> Vec<u8> {
    m.cell_value.map_at(&mg.cells, |v| u8::from(v == 1.0))
}

/// What an item's measures depend on, computed once per distinct 0/1 row: items share
/// few patterns (at most 2^K), so per-pattern work replaces most per-item work.
struct PatternStats {
    class: Class,
    best_col: usize,
    harmful_pairs: u64,
    terminal: bool,
    text_right: bool,
    text_overwrite: bool,
    oracle: bool,
    adjacent_flips: u32,
}

/// Everything of §3-4 except cascade, bootstrap and intervention, which the caller adds.
pub fn compute(m: &ResponseMatrix, mg: &ModelGrid) -> McqMetrics {
    let g: &GridSpec = &mg.grid;
    let (n, k) = (g.n(), g.k());
    let y = values(m, mg);
    let name = |col: usize| m.config(g.configs[col]).name.to_string();
    let top = g.top.unwrap_or(k - 1);
    let order = &g.budget_order;
    let comparable = g.comparable_pairs();
    let omitted = Omitted::for_configs(k);
    let ladder = g.ladder();
    let zero: Vec<usize> = (0..k).filter(|&c| g.frames(m, c) == 0).collect();
    let visual: Vec<usize> = (0..k).filter(|&c| g.frames(m, c) > 0).collect();

    // Distinct rows and how many items have each.
    let mut ids: FxHashMap<&[u8], u32> = FxHashMap::default();
    let mut rows: Vec<&[u8]> = Vec::new();
    let mut weight: Vec<usize> = Vec::new();
    let mut pattern_of: Vec<u32> = Vec::with_capacity(n);
    for row in y.chunks_exact(k) {
        let id = *ids.entry(row).or_insert_with(|| {
            rows.push(row);
            weight.push(0);
            (rows.len() - 1) as u32
        });
        weight[id as usize] += 1;
        pattern_of.push(id);
    }
    let stats: Vec<PatternStats> = rows
        .iter()
        .map(|row| {
            let text_right = zero.iter().any(|&t| row[t] == 1);
            PatternStats {
                class: Class::of(row),
                best_col: row.iter().position(|&v| v == 1).unwrap_or(0),
                harmful_pairs: order.count(|a| row[a] == 1, |b| row[b] == 0),
                terminal: row[top] == 0 && (0..k).any(|a| g.lower(a, top) && row[a] == 1),
                text_right,
                text_overwrite: text_right && visual.iter().any(|&v| row[v] == 0),
                oracle: row.contains(&1),
                adjacent_flips: row.windows(2).filter(|w| w[0] != w[1]).count() as u32,
            }
        })
        .collect();

    // Curve, best fixed (ties to the earliest), classes, patterns, complementarity, churn:
    // sums over patterns, each weighted by its items.
    let mut correct = vec![0usize; k];
    let mut classes = Classes::default();
    let mut patterns: BTreeMap<String, usize> = BTreeMap::new();
    let mut best_counts = vec![0usize; k];
    // The K x K counts only for grids small enough to report them.
    let mut rw = if omitted.is_none() {
        vec![vec![0usize; k]; k]
    } else {
        Vec::new()
    };
    let mut churn_counts = vec![[0usize; 4]; ladder.len().saturating_sub(1)];
    let (mut oracle_count, mut harmful_items, mut harmful_pairs) = (0, 0, 0usize);
    let (mut terminal_regressions, mut overwritten, mut text_correct) = (0, 0, 0);
    for ((row, st), &w) in rows.iter().zip(&stats).zip(&weight) {
        for (c, &v) in correct.iter_mut().zip(row.iter()) {
            *c += w * usize::from(v);
        }
        classes.add(st.class, w);
        let pattern: String = row
            .iter()
            .map(|&v| if v == 1 { '1' } else { '0' })
            .collect();
        patterns.insert(pattern, w);
        best_counts[st.best_col] += w;
        if omitted.is_none() {
            for a in (0..k).filter(|&a| row[a] == 1) {
                for b in (0..k).filter(|&b| row[b] == 0) {
                    rw[a][b] += w;
                }
            }
        }
        for (j, pair) in ladder.windows(2).enumerate() {
            churn_counts[j][usize::from(row[pair[0]]) * 2 + usize::from(row[pair[1]])] += w;
        }
        oracle_count += w * usize::from(st.oracle);
        harmful_items += w * usize::from(st.harmful_pairs > 0);
        harmful_pairs += w * st.harmful_pairs as usize;
        terminal_regressions += w * usize::from(st.terminal);
        overwritten += w * usize::from(st.text_overwrite);
        text_correct += w * usize::from(st.text_right);
    }
    let accuracy: Vec<f64> = correct
        .iter()
        .map(|&c| 100.0 * c as f64 / n as f64)
        .collect();
    let best = (0..k).fold(0, |b, i| if correct[i] > correct[b] { i } else { b });

    let items = McqItems {
        class: pattern_of
            .iter()
            .map(|&p| stats[p as usize].class)
            .collect(),
        best_config: pattern_of
            .iter()
            .map(|&p| stats[p as usize].best_col as u32)
            .collect(),
        harmful_pairs: pattern_of
            .iter()
            .map(|&p| stats[p as usize].harmful_pairs)
            .collect(),
        terminal: pattern_of
            .iter()
            .map(|&p| stats[p as usize].terminal)
            .collect(),
        text_overwrite: pattern_of
            .iter()
            .map(|&p| stats[p as usize].text_overwrite)
            .collect(),
        oracle: pattern_of
            .iter()
            .map(|&p| stats[p as usize].oracle)
            .collect(),
        adjacent_flips: pattern_of
            .iter()
            .map(|&p| stats[p as usize].adjacent_flips)
            .collect(),
        y: Vec::new(),
    };

    let churn: Vec<Churn> = ladder
        .windows(2)
        .zip(&churn_counts)
        .map(|(w, c)| Churn {
            from: g.name(w[0]),
            to: g.name(w[1]),
            wrong_to_correct: c[1],
            correct_to_wrong: c[2],
            stable_correct: c[3],
            stable_wrong: c[0],
            mcnemar_p: super::exact::mcnemar_p(c[2] as u64, c[1] as u64),
            // Set with the analysis's other edges (noise::fdr).
            mcnemar_q: 1.0,
        })
        .collect();
    let churn_totals = ChurnTotals {
        wrong_to_correct: churn.iter().map(|c| c.wrong_to_correct).sum(),
        correct_to_wrong: churn.iter().map(|c| c.correct_to_wrong).sum(),
    };
    // Per-configuration scratch goes before the report's own arrays are built: with a
    // million configurations each of these is megabytes.
    drop(churn_counts);
    drop(ladder);
    let best_config_counts = OrderedCounts(
        (0..k)
            .filter(|&c| best_counts[c] > 0)
            .map(|c| (name(c), best_counts[c]))
            .collect(),
    );
    drop(best_counts);

    let right_wrong: Vec<Vec<f64>> = rw
        .iter()
        .map(|r| r.iter().map(|&c| 100.0 * c as f64 / n as f64).collect())
        .collect();
    let pair_oracle_gain = (0..right_wrong.len())
        .map(|a| {
            (0..k)
                .map(|b| right_wrong[a][b].min(right_wrong[b][a]))
                .collect()
        })
        .collect();

    let prior_fallback = prior_fallback(m, mg, (&rows, &pattern_of), &visual, top);
    drop(visual);
    drop(rw);
    drop(ids);
    drop(rows);
    let zero_frame_configs = zero.iter().map(|&c| name(c)).collect();
    drop(zero);
    let mut items = items;
    items.y = y;

    McqMetrics {
        grid: g.to_json(m),
        n_items: n,
        accuracy,
        best_fixed: Pick {
            config: name(best),
            index: best,
            accuracy: 100.0 * correct[best] as f64 / n as f64,
        },
        top: Pick {
            config: name(top),
            index: top,
            accuracy: 100.0 * correct[top] as f64 / n as f64,
        },
        oracle_count,
        oracle_accuracy: 100.0 * oracle_count as f64 / n as f64,
        headroom: 100.0 * (oracle_count - correct[best]) as f64 / n as f64,
        correct_counts: correct,
        classes,
        patterns,
        best_config_counts,
        harmful_items,
        harmful_rate: 100.0 * harmful_items as f64 / n as f64,
        harmful_pairs,
        comparable_pairs: comparable,
        pairs_total: n * comparable,
        harmful_pair_rate: pct(harmful_pairs, n * comparable),
        churn,
        churn_totals,
        terminal_regressions,
        terminal_regression_rate: 100.0 * terminal_regressions as f64 / n as f64,
        complementarity: Complementarity {
            right_wrong,
            pair_oracle_gain,
            omitted,
        },
        text_overwrite: TextOverwrite {
            zero_frame_configs,
            text_correct_items: text_correct,
            items: overwritten,
            rate: pct(overwritten, n),
            conditional_rate: pct(overwritten, text_correct),
        },
        prior_fallback,
        cascade: None,
        bootstrap: None,
        replicates: None,
        intervention: None,
        interventions: Vec::new(),
        items,
        terminal_interval: None,
    }
}

/// Prior fallback on the visual sub-grid (docs/measures.md §4.2).
fn prior_fallback(
    m: &ResponseMatrix,
    mg: &ModelGrid,
    (rows, pattern_of): (&[&[u8]], &[u32]),
    visual: &[usize],
    top: usize,
) -> PriorFallback {
    let g = &mg.grid;
    let k = g.k();
    let protocol = m.config(g.configs[0]).protocol;
    let top_visual = g.frames(m, top) > 0;
    let mut pf = PriorFallback {
        items_with_blind: 0,
        harmful_pairs: 0,
        fallback_pairs: 0,
        rate: None,
        terminal_regressions: 0,
        terminal_fallbacks: 0,
        terminal_rate: None,
        wrong_cells: 0,
        wrong_cells_matching_blind: 0,
        baseline_rate: None,
    };
    let mut is_visual = vec![false; k];
    for &c in visual {
        is_visual[c] = true;
    }
    // What a row alone decides, once per distinct row: its harmful transitions on the
    // visual sub-grid (same budgets, visual columns only) and whether it ends in a terminal
    // regression from a visual column.
    let right = |row: &[u8], a: usize| is_visual[a] && row[a] == 1;
    let wrong = |row: &[u8], b: usize| is_visual[b] && row[b] == 0;
    let per_row: Vec<(u64, bool)> = rows
        .iter()
        .map(|row| {
            let terminal =
                top_visual && row[top] == 0 && (0..k).any(|a| right(row, a) && g.lower(a, top));
            let harmful = g.budget_order.count(|a| right(row, a), |b| wrong(row, b));
            (harmful, terminal)
        })
        .collect();
    // The grid's items and the model's blind answers are both in item order: walked side
    // by side, not looked up one by one.
    let mut blind = m.blind_of(protocol, mg.model).peekable();
    for (i, &item) in g.items.iter().enumerate() {
        debug_assert!(i == 0 || g.items[i - 1] < item, "grid items in item order");
        while blind.next_if(|&(it, _)| it < item).is_some() {}
        let Some((_, z)) = blind.next_if(|&(it, _)| it == item) else {
            continue;
        };
        pf.items_with_blind += 1;
        let p = pattern_of[i] as usize;
        let row = rows[p];
        let pred = |c: usize| m.cell_pred_norm.get(mg.cells[i * k + c] as usize);
        let matches = |c: usize| pred(c) != NO_TEXT && pred(c) == z;
        let (harmful, terminal) = per_row[p];
        pf.harmful_pairs += harmful as usize;
        if harmful > 0 {
            pf.fallback_pairs += g
                .budget_order
                .count(|a| right(row, a), |b| wrong(row, b) && matches(b))
                as usize;
        }
        if terminal {
            pf.terminal_regressions += 1;
            pf.terminal_fallbacks += usize::from(matches(top));
        }
        for &c in visual {
            if row[c] == 0 {
                pf.wrong_cells += 1;
                pf.wrong_cells_matching_blind += usize::from(matches(c));
            }
        }
    }
    pf.rate = pct(pf.fallback_pairs, pf.harmful_pairs);
    pf.terminal_rate = pct(pf.terminal_fallbacks, pf.terminal_regressions);
    pf.baseline_rate = pct(pf.wrong_cells_matching_blind, pf.wrong_cells);
    pf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_sequences() {
        assert_eq!(Class::of(&[1]), Class::AlwaysCorrect);
        assert_eq!(Class::of(&[0]), Class::AlwaysWrong);
        assert_eq!(Class::of(&[0, 0, 1, 1]), Class::MonotonicIncreasing);
        assert_eq!(Class::of(&[1, 1, 1, 0]), Class::MonotonicDecreasing);
        assert_eq!(Class::of(&[0, 1, 0, 1]), Class::Oscillating);
        assert_eq!(Class::parse("oscillating"), Some(Class::Oscillating));
    }
}
