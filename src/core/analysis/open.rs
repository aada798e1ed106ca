//! Continuous-score measures of one model on one grid (docs/measures.md §5): mean score curve, best
//! fixed configuration, oracle mean and gap, δ-regressions and pair-oracle gains.

use serde::Serialize;

use super::Interval;
use super::grid::{GridJson, ModelGrid};
use super::mcq::Omitted;
use crate::core::matrix::ResponseMatrix;

#[derive(Debug, Clone, Serialize)]
pub struct ScorePick {
    pub config: String,
    pub index: usize,
    pub mean_score: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct OpenComplementarity {
    /// Empty (`null` in the JSON) above [`super::pairs::MAX_MATRIX_CONFIGS`]
    /// configurations; `omitted` then says so.
    #[serde(serialize_with = "super::mcq::matrix_or_null")]
    pub pair_oracle_gain: Vec<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Omitted>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OpenBootstrap {
    #[serde(rename = "B")]
    pub b: usize,
    pub seed: u64,
    pub oracle_gap: Interval,
    pub regression_rate: Interval,
}

/// Per-item results, in grid item order.
#[derive(Debug, Clone, Default)]
pub struct OpenItems {
    /// `s[i * k + c]`.
    pub s: Vec<f64>,
    pub has_regression: Vec<bool>,
    pub terminal: Vec<bool>,
}

impl OpenItems {
    pub fn row(&self, i: usize, k: usize) -> &[f64] {
        &self.s[i * k..(i + 1) * k]
    }
}

/// OPEN_METRICS of docs/measures.md §12.
#[derive(Debug, Clone, Serialize)]
pub struct OpenMetrics {
    pub grid: GridJson,
    pub n_items: usize,
    pub mean_score: Vec<f64>,
    pub best_fixed: ScorePick,
    pub top: ScorePick,
    pub oracle_mean: f64,
    pub oracle_gap: f64,
    pub delta: f64,
    pub regression_items: usize,
    pub regression_rate: f64,
    pub terminal_regressions: usize,
    pub terminal_regression_rate: f64,
    pub complementarity: OpenComplementarity,
    pub bootstrap: Option<OpenBootstrap>,
    #[serde(skip)]
    pub items: OpenItems,
}

/// Population standard deviation.
pub fn population_std(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt()
}

/// Whether a row regresses by more than δ between `a` and `b` of some pair.
pub fn regresses(row: &[f64], pairs: &[(usize, usize)], delta: f64) -> bool {
    pairs.iter().any(|&(a, b)| row[a] - row[b] > delta)
}

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

    let top_pairs: Vec<(usize, usize)> = (0..k)
        .filter(|&a| g.lower(a, top))
        .map(|a| (a, top))
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
