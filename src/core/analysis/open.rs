//! Continuous-score measures of one model on one grid (docs/measures.md §5): mean score curve, best
//! fixed configuration, oracle mean and gap, δ-regressions and pair-oracle gains.

use serde::Serialize;

use super::Interval;
use super::grid::{GridJson, ModelGrid};
use super::mcq::Omitted;
use super::pairs::HarmfulTransition;
use crate::core::matrix::ResponseMatrix;

/// A configuration picked on an open-ended grid (the best fixed one, or the top).
#[derive(Debug, Clone, Serialize)]
pub struct ScorePick {
    /// The configuration's id.
    pub config: String,
    /// Its column in the grid.
    pub index: usize,
    /// The mean score of the grid items there.
    pub mean_score: f64,
}

/// How much two configurations gain over the better of them (docs/measures.md §5).
#[derive(Debug, Clone, Serialize)]
pub struct OpenComplementarity {
    /// Empty (`null` in the JSON) above [`super::pairs::MAX_MATRIX_CONFIGS`]
    /// configurations; `omitted` then says so.
    #[serde(serialize_with = "super::mcq::matrix_or_null")]
    pub pair_oracle_gain: Vec<Vec<f64>>,
    /// Set when the grid has too many configurations for the matrix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Omitted>,
}

/// Bootstrap intervals of an open-ended grid (docs/measures.md §9).
#[derive(Debug, Clone, Serialize)]
pub struct OpenBootstrap {
    /// Resamples drawn.
    #[serde(rename = "B")]
    pub b: usize,
    /// Seed of the SplitMix64 generator.
    pub seed: u64,
    /// Whether clusters (videos) were resampled instead of items (docs/measures.md §16.6).
    pub cluster: bool,
    /// Clusters resampled, or items when `cluster` is false.
    pub clusters: usize,
    /// Interval of the oracle gap.
    pub oracle_gap: Interval,
    /// Interval of the regression rate.
    pub regression_rate: Interval,
}

/// Per-item results, in grid item order.
#[derive(Debug, Clone, Default)]
pub struct OpenItems {
    /// `s[i * k + c]`.
    pub s: Vec<f64>,
    /// Whether the item drops by more than δ from a lower to a higher budget.
    pub has_regression: Vec<bool>,
    /// Whether the item drops by more than δ into the top configuration.
    pub terminal: Vec<bool>,
}

impl OpenItems {
    /// The scores of item `i` over the `k` grid configurations.
    pub fn row(&self, i: usize, k: usize) -> &[f64] {
        &self.s[i * k..(i + 1) * k]
    }
}

/// OPEN_METRICS of docs/measures.md §12.
#[derive(Debug, Clone, Serialize)]
pub struct OpenMetrics {
    /// The grid the measures are on.
    pub grid: GridJson,
    /// Grid items.
    pub n_items: usize,
    /// Mean score per configuration, in grid order (the curve).
    pub mean_score: Vec<f64>,
    /// The configuration of the highest mean score, the earliest on a tie.
    pub best_fixed: ScorePick,
    /// The top configuration and its mean score.
    pub top: ScorePick,
    /// Mean over the items of their best score.
    pub oracle_mean: f64,
    /// `oracle_mean` less the best fixed mean, in points.
    pub oracle_gap: f64,
    /// The drop δ (points) a regression must exceed.
    pub delta: f64,
    /// Items with a regression.
    pub regression_items: usize,
    /// Percent of items with a regression.
    pub regression_rate: f64,
    /// Items with a regression into the top configuration.
    pub terminal_regressions: usize,
    /// Percent of items with a terminal regression.
    pub terminal_regression_rate: f64,
    /// Pair-oracle gains.
    pub complementarity: OpenComplementarity,
    /// Bootstrap intervals; `None` without resamples or items.
    pub bootstrap: Option<OpenBootstrap>,
    /// Per-item results, for the export and the audit queue.
    #[serde(skip)]
    pub items: OpenItems,
}

/// Population standard deviation.
pub fn population_std(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt()
}

/// Whether a row regresses by more than δ from `lower` to `higher` of some pair, that is,
/// whether one of the candidate `pairs` is a harmful transition of the row.
pub fn regresses(row: &[f64], pairs: &[HarmfulTransition], delta: f64) -> bool {
    pairs.iter().any(|p| row[p.lower] - row[p.higher] > delta)
}

/// The measures of one model's open-ended grid (docs/measures.md §5) at drop δ = `delta`.
pub fn compute(m: &ResponseMatrix, mg: &ModelGrid, delta: f64) -> OpenMetrics {
    let g = &mg.grid;
    let (n, k) = (g.n(), g.k());
    let s: Vec<f64> = mg
        .cells
        .iter()
        .map(|&c| m.cell_value.get(c as usize))
        .collect();
    let name = |col: usize| m.config(g.configs[col]).name.to_string();
    let top = g.top.unwrap_or(k - 1);

    // Sums in item order, as the formula is written.
    let mut sums = vec![0.0f64; k];
    let mut max_sum = 0.0f64;
    for row in s.chunks_exact(k) {
        for (acc, &v) in sums.iter_mut().zip(row) {
            *acc += v;
        }
        max_sum += row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    }
    let mean: Vec<f64> = sums.iter().map(|&x| x / n as f64).collect();
    let best = (0..k).fold(0, |b, i| if mean[i] > mean[b] { i } else { b });
    let oracle_mean = max_sum / n as f64;

    let top_pairs: Vec<HarmfulTransition> = (0..k)
        .filter(|&a| g.lower(a, top))
        .map(|a| HarmfulTransition::new(a, top))
        .collect();
    let mut items = OpenItems {
        s: Vec::new(),
        has_regression: Vec::with_capacity(n),
        terminal: Vec::with_capacity(n),
    };
    for row in s.chunks_exact(k) {
        items
            .has_regression
            .push(g.budget_order.regresses(row, delta));
        items.terminal.push(regresses(row, &top_pairs, delta));
    }
    let regression_items = items.has_regression.iter().filter(|&&r| r).count();
    let terminal = items.terminal.iter().filter(|&&t| t).count();

    let omitted = Omitted::for_configs(k);
    let matrix_k = if omitted.is_none() { k } else { 0 };
    let pair_oracle_gain = (0..matrix_k)
        .map(|a| {
            (0..k)
                .map(|b| {
                    if a == b {
                        return 0.0;
                    }
                    let mut acc = 0.0;
                    for row in s.chunks_exact(k) {
                        acc += row[a].max(row[b]);
                    }
                    acc / n as f64 - mean[a].max(mean[b])
                })
                .collect()
        })
        .collect();
    items.s = s;

    OpenMetrics {
        grid: g.to_json(m),
        n_items: n,
        best_fixed: ScorePick {
            config: name(best),
            index: best,
            mean_score: mean[best],
        },
        top: ScorePick {
            config: name(top),
            index: top,
            mean_score: mean[top],
        },
        oracle_mean,
        oracle_gap: oracle_mean - mean[best],
        mean_score: mean,
        delta,
        regression_items,
        regression_rate: 100.0 * regression_items as f64 / n as f64,
        terminal_regressions: terminal,
        terminal_regression_rate: 100.0 * terminal as f64 / n as f64,
        complementarity: OpenComplementarity {
            pair_oracle_gain,
            omitted,
        },
        bootstrap: None,
        items,
    }
}
