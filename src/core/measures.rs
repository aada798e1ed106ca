//! The measures every presentation shows side by side, one column each (the text report's
//! model table, `report --format markdown|latex|csv`, the researcher overview): one entry
//! per measure with its `report --json` key, its names, its unit, how to read it and its
//! interval from a model's metrics, and which twins compute it. A measure added here appears
//! in each of them without touching them.
//!
//! Curves (accuracy per configuration), counts of items and configurations, and recovery
//! by intervention (one value per protocol, docs/intervention.md §7) are not single values
//! per model: each presentation lays them out itself.

use crate::core::analysis::{Interval, Metrics};
use crate::core::matrix::Task;

/// What a measure's number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Percent of items (a rate).
    Percent,
    /// Percentage points: the difference of two percents or two mean scores.
    Points,
    /// A mean score, from 0 to 100 (open-ended items).
    Score,
    /// A number of items.
    Items,
    /// A number of something else (pairs, transitions).
    Count,
}

impl Unit {
    /// The unit's symbol after a number (`%`, `pp`, `items`); empty for a score or a count.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Percent => "%",
            Unit::Points => "pp",
            Unit::Items => "items",
            Unit::Score | Unit::Count => "",
        }
    }

    /// Decimals shown: one for a percent, points or a score, none for a count.
    pub fn decimals(self) -> usize {
        match self {
            Unit::Percent | Unit::Points | Unit::Score => 1,
            Unit::Items | Unit::Count => 0,
        }
    }

    /// `x` rounded to the unit's decimals, without the symbol.
    pub fn format(self, x: f64) -> String {
        format!("{x:.*}", self.decimals())
    }
}

/// How a view may set a measure apart. The core names the meaning; the colour is the
/// view's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Nothing to set apart.
    Plain,
    /// What choosing the configuration per item would win over the best fixed one: shown
    /// with a `+`, as a gain.
    Gain,
    /// Items that a larger budget hurt.
    Harm,
}

/// Whether a twin of frameaudit (the SQL script, the Python reference) computes a measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Twin {
    /// It does, under the measure's key.
    Computes,
    /// It does not, and why.
    Lacks(&'static str),
}

/// One measure of the table.
#[derive(Debug, Clone, Copy)]
pub struct Measure {
    /// The field of `report --json` that holds it in a model's metrics, `.` between the
    /// names of nested fields (`best_fixed.accuracy`).
    pub key: &'static str,
    /// Its heading in the paper tables.
    pub label: &'static str,
    /// Its heading in a narrow column (the text report, the audit screens).
    pub short: &'static str,
    /// The text report's column width for it, at least as wide as `short`.
    pub width: usize,
    /// Its heading in the researcher overview's models table, where room is scarcest;
    /// `None` leaves it out of that table.
    pub overview: Option<&'static str>,
    /// What the paper tables' header says the column is.
    pub describes: &'static str,
    /// What its number is.
    pub unit: Unit,
    /// The analyses it belongs to.
    pub task: Task,
    /// How a view may set it apart.
    pub tone: Tone,
    /// Its value in a model's metrics: `None` where the report has `null`, and for metrics
    /// of the other task.
    pub value: fn(&Metrics) -> Option<f64>,
    /// Its bootstrap interval (`bootstrap.KEY` in the report), for a measure that has one:
    /// `None` inside when the run drew no resamples.
    pub interval: Option<fn(&Metrics) -> Option<Interval>>,
    /// For a measure read at one configuration (the best fixed one): that configuration,
    /// which the paper tables print beside it.
    pub at: Option<fn(&Metrics) -> Option<&str>>,
    /// Whether `frameaudit sql` (src/core/sql.rs, docs/sql.md) computes it, as a column of
    /// `model_summary` named [`Measure::column`].
    pub sql: Twin,
    /// Whether the Python reference (tests/reference/traj_metrics.py) computes it, under
    /// `key` in its report.
    pub reference: Twin,
}

impl Measure {
    /// The value in `x`, `None` for a `null` or metrics of the other task.
    pub fn value_of(&self, x: &Metrics) -> Option<f64> {
        (self.value)(x)
    }

    /// The bootstrap interval in `x` as (lo, hi), when the measure has one and the run
    /// drew resamples.
    pub fn interval_of(&self, x: &Metrics) -> Option<(f64, f64)> {
        self.interval.and_then(|f| f(x)).map(|i| (i.lo, i.hi))
    }

    /// The configuration the value is read at, for a measure that has one.
    pub fn at_of<'a>(&self, x: &'a Metrics) -> Option<&'a str> {
        self.at.and_then(|f| f(x))
    }

    /// A value as a narrow view shows it: in its unit's decimals, with a `+` for a gain, `–`
    /// for none.
    pub fn show(&self, v: Option<f64>) -> String {
        match v {
            None => "–".into(),
            Some(x) if self.tone == Tone::Gain => format!("+{}", self.unit.format(x)),
            Some(x) => self.unit.format(x),
        }
    }

    /// Whether the measure belongs to the `replicates` block of docs/measures.md §16, which
    /// is `null` for a model without replicates: a presentation leaves its column out
    /// where no model has a value, so a run without replicates reads as it did before 2.1.
    pub fn optional(&self) -> bool {
        self.key.starts_with("replicates.")
    }

    /// The key flattened into one name (`best_fixed.accuracy` is `best_fixed_accuracy`): the
    /// CSV table's column and the SQL script's.
    pub fn column(&self) -> String {
        self.key.replace('.', "_")
    }

    /// The flattened name of the configuration of [`Measure::at`], beside the value's
    /// (`best_fixed.accuracy` has `best_fixed_config`).
    pub fn at_column(&self) -> String {
        let base = self.key.rsplit_once('.').map_or(self.key, |(b, _)| b);
        format!("{}_config", base.replace('.', "_"))
    }
}

fn mcq(x: &Metrics) -> Option<&crate::core::analysis::mcq::McqMetrics> {
    match x {
        Metrics::Mcq(x) => Some(x),
        Metrics::Open(_) => None,
    }
}

fn open(x: &Metrics) -> Option<&crate::core::analysis::open::OpenMetrics> {
    match x {
        Metrics::Open(x) => Some(x),
        Metrics::Mcq(_) => None,
    }
}

/// The SQL script has no open-ended analysis.
const NO_OPEN_SQL: Twin = Twin::Lacks(
    "the SQL script computes MCQ measures only: Token-F1 has no portable SQL form (docs/sql.md §3)",
);

/// The SQL script computes the §16 measures of the model tables as columns of
/// `model_summary` (null for a model without replicates), beside its tables `replicate_floor`,
/// `replicate_edges` and `replicate_stable` (docs/sql.md §2).
const REPLICATES_SQL: Twin = Twin::Computes;

/// The measures, in the order the presentations show them: the MCQ ones, then the
/// open-ended ones.
pub static MEASURES: &[Measure] = &[
    Measure {
        key: "best_fixed.accuracy",
        label: "Best fixed",
        short: "best",
        width: 6,
        overview: Some("best"),
        describes: "best fixed configuration",
        unit: Unit::Percent,
        task: Task::Mcq,
        tone: Tone::Plain,
        value: |x| mcq(x).map(|x| x.best_fixed.accuracy),
        interval: None,
        at: Some(|x| mcq(x).map(|x| &*x.best_fixed.config)),
        sql: Twin::Computes,
        reference: Twin::Computes,
    },
    Measure {
        key: "oracle_accuracy",
        label: "Oracle",
        short: "oracle",
        width: 6,
        overview: Some("oracle"),
        describes: "item-level oracle",
        unit: Unit::Percent,
        task: Task::Mcq,
        tone: Tone::Plain,
        value: |x| mcq(x).map(|x| x.oracle_accuracy),
        interval: None,
        at: None,
        sql: Twin::Computes,
        reference: Twin::Computes,
    },
    Measure {
        key: "headroom",
        label: "Headroom",
        short: "headroom",
        width: 8,
        overview: Some("head"),
        describes: "headroom",
        unit: Unit::Points,
        task: Task::Mcq,
        tone: Tone::Gain,
        value: |x| mcq(x).map(|x| x.headroom),
        interval: Some(|x| mcq(x)?.bootstrap.as_ref().map(|b| b.headroom)),
        at: None,
        sql: Twin::Computes,
        reference: Twin::Computes,
    },
    Measure {
        key: "harmful_rate",
        label: "Harmful",
        short: "harmful",
        width: 7,
        overview: Some("harmful"),
        describes: "harmful rate (items with a harmful transition)",
        unit: Unit::Percent,
        task: Task::Mcq,
        tone: Tone::Harm,
        value: |x| mcq(x).map(|x| x.harmful_rate),
        interval: Some(|x| mcq(x)?.bootstrap.as_ref().map(|b| b.harmful_rate)),
        at: None,
        sql: Twin::Computes,
        reference: Twin::Computes,
    },
    // The interval the text report prints beside it (`terminal_interval`) is no field of
    // the report JSON (docs/measures.md §12), so the table gives none.
    Measure {
        key: "terminal_regression_rate",
        label: "Terminal",
        short: "terminal",
        width: 8,
        overview: Some("terminal"),
        describes: "terminal regression rate",
        unit: Unit::Percent,
        task: Task::Mcq,
        tone: Tone::Plain,
        value: |x| mcq(x).map(|x| x.terminal_regression_rate),
        interval: None,
        at: None,
        sql: Twin::Computes,
        reference: Twin::Computes,
    },
    Measure {
        key: "text_overwrite.rate",
        label: "Text overwrite",
        short: "text-ow",
        width: 8,
        overview: None,
        describes: "text overwrite rate",
        unit: Unit::Percent,
        task: Task::Mcq,
        tone: Tone::Plain,
        value: |x| mcq(x)?.text_overwrite.rate,
        interval: None,
        at: None,
        sql: Twin::Computes,
        reference: Twin::Computes,
    },
    Measure {
        key: "replicates.floor.all.negative_flip_floor",
        label: "Flip floor",
        short: "nf-floor",
        width: 8,
        overview: None,
        describes: "negative-flip floor (% of replicate pairs that turn wrong)",
        unit: Unit::Percent,
        task: Task::Mcq,
        tone: Tone::Plain,
        value: |x| mcq(x)?.replicates.as_ref()?.floor.all.negative_flip_floor,
        interval: None,
        at: None,
        sql: REPLICATES_SQL,
        reference: Twin::Computes,
    },
    Measure {
        key: "replicates.stable.stable_harmful_rate",
        label: "Stable harmful",
        short: "stable-h",
        width: 8,
        overview: None,
        describes: "stable harmful rate (items harmful under every replicate)",
        unit: Unit::Percent,
        task: Task::Mcq,
        tone: Tone::Harm,
        value: |x| mcq(x)?.replicates.as_ref()?.stable.stable_harmful_rate,
        interval: None,
        at: None,
        sql: REPLICATES_SQL,
        reference: Twin::Computes,
    },
    Measure {
        key: "replicates.stable.lottery_rate",
        label: "Lottery",
        short: "lottery",
        width: 7,
        overview: None,
        describes: "lottery rate (% of replicated harmful items whose harm does not survive every replicate)",
        unit: Unit::Percent,
        task: Task::Mcq,
        tone: Tone::Plain,
        value: |x| mcq(x)?.replicates.as_ref()?.stable.lottery_rate,
        interval: None,
        at: None,
        sql: REPLICATES_SQL,
        reference: Twin::Computes,
    },
    Measure {
        key: "best_fixed.mean_score",
        label: "Best fixed",
        short: "best",
        width: 6,
        overview: None,
        describes: "best fixed",
        unit: Unit::Score,
        task: Task::Open,
        tone: Tone::Plain,
        value: |x| open(x).map(|x| x.best_fixed.mean_score),
        interval: None,
        at: Some(|x| open(x).map(|x| &*x.best_fixed.config)),
        sql: NO_OPEN_SQL,
        reference: Twin::Computes,
    },
    Measure {
        key: "oracle_mean",
        label: "Oracle",
        short: "oracle",
        width: 6,
        overview: None,
        describes: "oracle mean",
        unit: Unit::Score,
        task: Task::Open,
        tone: Tone::Plain,
        value: |x| open(x).map(|x| x.oracle_mean),
        interval: None,
        at: None,
        sql: NO_OPEN_SQL,
        reference: Twin::Computes,
    },
    Measure {
        key: "oracle_gap",
        label: "Oracle gap",
        short: "gap",
        width: 6,
        overview: None,
        describes: "oracle gap",
        unit: Unit::Points,
        task: Task::Open,
        tone: Tone::Gain,
        value: |x| open(x).map(|x| x.oracle_gap),
        interval: Some(|x| open(x)?.bootstrap.as_ref().map(|b| b.oracle_gap)),
        at: None,
        sql: NO_OPEN_SQL,
        reference: Twin::Computes,
    },
    Measure {
        key: "regression_rate",
        label: "Regression",
        short: "regress",
        width: 7,
        overview: None,
        describes: "delta-regression rate",
        unit: Unit::Percent,
        task: Task::Open,
        tone: Tone::Harm,
        value: |x| open(x).map(|x| x.regression_rate),
        interval: Some(|x| open(x)?.bootstrap.as_ref().map(|b| b.regression_rate)),
        at: None,
        sql: NO_OPEN_SQL,
        reference: Twin::Computes,
    },
    Measure {
        key: "terminal_regression_rate",
        label: "Terminal",
        short: "terminal",
        width: 8,
        overview: None,
        describes: "terminal regression rate",
        unit: Unit::Percent,
        task: Task::Open,
        tone: Tone::Plain,
        value: |x| open(x).map(|x| x.terminal_regression_rate),
        interval: None,
        at: None,
        sql: NO_OPEN_SQL,
        reference: Twin::Computes,
    },
];

/// The measures of `table` that belong to `task` and have a column among `metrics`: all
/// but an [`Measure::optional`] one that no metrics has a value of.
pub fn shown<'a, 'm>(
    table: &'a [Measure],
    task: Task,
    metrics: impl Iterator<Item = &'m Metrics> + Clone,
) -> Vec<&'a Measure> {
    of_task(table, task)
        .filter(|x| !x.optional() || metrics.clone().any(|m| x.value_of(m).is_some()))
        .collect()
}

/// The measures of `table` that belong to `task`, in table order.
pub fn of_task(table: &[Measure], task: Task) -> impl Iterator<Item = &Measure> {
    table.iter().filter(move |m| m.task == task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_measure_is_named_once_per_task_and_its_column_fits_its_heading() {
        for task in [Task::Mcq, Task::Open] {
            let mut keys: Vec<&str> = of_task(MEASURES, task).map(|m| m.key).collect();
            let n = keys.len();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), n, "a key twice for {task:?}");
        }
        for m in MEASURES {
            assert!(m.width >= m.short.chars().count(), "{}", m.key);
            for twin in [m.sql, m.reference] {
                if let Twin::Lacks(why) = twin {
                    assert!(
                        !why.trim().is_empty(),
                        "{}: a twin lacks it for no reason",
                        m.key
                    );
                }
            }
        }
    }

    #[test]
    fn values_are_shown_in_their_units() {
        let headroom = MEASURES
            .iter()
            .find(|m| m.key == "headroom")
            .expect("headroom");
        assert_eq!(headroom.show(Some(12.5)), "+12.5");
        assert_eq!(headroom.show(None), "–");
        let text = MEASURES
            .iter()
            .find(|m| m.key == "text_overwrite.rate")
            .expect("text overwrite");
        assert_eq!(text.show(Some(10.0 / 3.0)), "3.3");
        assert_eq!(text.column(), "text_overwrite_rate");
        assert_eq!(MEASURES[0].at_column(), "best_fixed_config");
        assert_eq!(Unit::Items.format(12.0), "12");
        assert_eq!(Unit::Points.symbol(), "pp");
    }
}
