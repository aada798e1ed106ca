//! `report --format markdown|latex|csv`: the headline numbers of every model and split as
//! one table to paste into a paper (a column per measure of `core::measures`), under
//! comment lines that record every analysis option.
//! The numbers are the report JSON's: CSV carries them unrounded, Markdown and LaTeX with
//! one decimal. When some model has replicates, a second table gives each ladder edge
//! against the noise floor (docs/measures.md §16.3).

use std::io::{self, Write};

use crate::core::analysis::grid::{Name, Num, names_by_budget};
use crate::core::analysis::params::{Params, ReferencePixels, VariantBudget};
use crate::core::analysis::{Interval, Metrics, Report};
use crate::core::dataset::Dataset;
use crate::core::matrix::{ResponseMatrix, Task};
use crate::core::measures::{MEASURES, Measure, Unit, shown as with_columns};
use crate::core::text::{sanitize, show_id};

/// Output format of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// A GitHub Markdown table under HTML comments.
    Markdown,
    /// A booktabs tabular under `%` comments.
    Latex,
    /// One CSV of every task, numbers unrounded, under `#` comments.
    Csv,
}

/// One value of a row.
enum Val {
    Text(String),
    Int(usize),
    /// A percent or points; `None` where the report has `null`.
    Num(Option<f64>),
    /// A measure with its bootstrap interval, when the run has one.
    Est(f64, Option<Interval>),
    /// The best fixed configuration and its value.
    Best(String, f64),
    /// A configuration the model's grid lacks.
    Absent,
    /// A p- or q-value; `None` where the report has `null`.
    P(Option<f64>),
    /// Whether an edge is beyond noise.
    Flag(bool),
}

/// A column: its heading in Markdown and LaTeX, and the CSV columns it fills (a measure
/// with an interval fills three: value, `_lo`, `_hi`).
struct Col {
    label: String,
    csv: Vec<String>,
    /// A configuration's value (its accuracy or mean score): `--show-configs` picks these.
    config: bool,
}

impl Col {
    fn new(label: &str, csv: &str) -> Col {
        Col {
            label: label.into(),
            csv: vec![csv.into()],
            config: false,
        }
    }

    fn est(label: &str, csv: &str) -> Col {
        Col {
            label: label.into(),
            csv: vec![csv.into(), format!("{csv}_lo"), format!("{csv}_hi")],
            config: false,
        }
    }

    /// The column of a measure: a measure read at a configuration fills two CSV columns
    /// (the configuration, the value), one with an interval three.
    fn measure(x: &Measure) -> Col {
        let csv = x.column();
        if x.at.is_some() {
            Col {
                label: x.label.into(),
                csv: vec![x.at_column(), csv],
                config: false,
            }
        } else if x.interval.is_some() {
            Col::est(x.label, &csv)
        } else {
            Col::new(x.label, &csv)
        }
    }
}

/// What a table holds: one task's measures, the recovery by intervention runs, or the
/// ladder edges against the noise floor.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Task(Task),
    Intervention,
    Edges,
}

impl Kind {
    /// The CSV's `task` column.
    fn csv(self) -> &'static str {
        match self {
            Kind::Task(t) => t.as_str(),
            Kind::Intervention => "intervention",
            Kind::Edges => "edges",
        }
    }

    /// The title above the table.
    fn title(self) -> &'static str {
        match self {
            Kind::Task(Task::Mcq) => "Multiple choice (accuracy, %)",
            Kind::Task(Task::Open) => "Open-ended (mean score)",
            Kind::Intervention => {
                "Recovery by sampling intervention (multiple choice, primary protocol, %)"
            }
            Kind::Edges => {
                "Ladder edges against the noise floor (multiple choice, negative flips, %)"
            }
        }
    }
}

/// The table of one task: columns and rows in report order (analyses, then models).
struct Table {
    kind: Kind,
    cols: Vec<Col>,
    rows: Vec<Vec<Val>>,
    /// The paper layout's shape: the first `groups` columns (protocol, split) head groups of
    /// rows, the next `keys` (the model, a strategy, an edge) name each row, and the value
    /// columns after them come in sections, each starting at one of `sections` (a task's
    /// configurations, then its measures).
    groups: usize,
    keys: usize,
    sections: Vec<(usize, &'static str)>,
}

/// The recovery table (docs/intervention.md §7): one row per split, model and intervention
/// protocol of the primary protocol's MCQ analyses.
fn intervention_table(m: &ResponseMatrix, report: &Report) -> Option<Table> {
    let mut rows = Vec::new();
    let (mut below, mut top_right) = (false, false);
    for a in &report.analyses {
        if m.protocols.name(a.key.protocol) != report.params.primary {
            continue;
        }
        for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
            let Metrics::Mcq(x) = x else { continue };
            for v in &x.interventions {
                let iv = &v.recovery;
                let boot = v.bootstrap.as_ref();
                // Broken and the accuracy delta carry nothing when no item re-run at the
                // top was right there (a plan of terminal regressions only): blank.
                let informative = iv.top_correct_items > 0;
                rows.push(vec![
                    Val::Text(a.key.scope_name(m).into()),
                    Val::Text(m.models.name(mg.model).into()),
                    Val::Text(v.strategy.clone().unwrap_or_else(|| v.protocol.clone())),
                    Val::Int(iv.items_with_intervention),
                    Val::Int(iv.terminal_regressions),
                    Val::Int(iv.recovered),
                    match iv.recovery_rate {
                        Some(r) => Val::Est(r, v.recovery_rate_wilson),
                        None => Val::Num(None),
                    },
                    Val::Int(v.below.transition_regressions),
                    Val::Int(v.below.transition_recovered),
                    match v.below.transition_recovery_rate {
                        Some(r) => Val::Est(r, v.below.transition_recovery_rate_wilson),
                        None => Val::Num(None),
                    },
                    if informative {
                        Val::Int(iv.broken)
                    } else {
                        Val::Num(None)
                    },
                    Val::Num(iv.broken_rate.filter(|_| informative)),
                    match iv.accuracy_delta {
                        Some(d) if informative => Val::Est(d, boot.map(|b| b.accuracy_delta)),
                        _ => Val::Num(None),
                    },
                ]);
                below |= v.below.transition_regressions > 0;
                top_right |= informative;
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut cols = vec![
        Col::new("Split", "split"),
        Col::new("Model", "model"),
        Col::new("Strategy", "strategy"),
        Col::new("Items", "items_with_intervention"),
        Col::new("Terminal", "terminal_regressions"),
        Col::new("Recovered", "recovered"),
        Col::est("Recovery", "recovery_rate"),
        Col::new("Transitions below top", "transition_regressions"),
        Col::new("Transitions recovered", "transition_recovered"),
        Col::est("Transition recovery", "transition_recovery_rate"),
        Col::new("Broken", "broken"),
        Col::new("Broken %", "broken_rate"),
        Col::est("Accuracy delta", "accuracy_delta"),
    ];
    // Columns that hold nothing in any row are left out of the table (docs/intervention.md
    // §7): the transitions without an audited plan below the top, broken and the accuracy
    // delta when every plan targets terminal regressions only.
    let keep: Vec<bool> = (0..cols.len())
        .map(|c| match c {
            7..=9 => below,
            10..=12 => top_right,
            _ => true,
        })
        .collect();
    let mut c = 0;
    cols.retain(|_| {
        c += 1;
        keep[c - 1]
    });
    for row in &mut rows {
        let mut c = 0;
        row.retain(|_| {
            c += 1;
            keep[c - 1]
        });
    }
    Some(Table {
        kind: Kind::Intervention,
        cols,
        rows,
        groups: 1,
        keys: 2,
        sections: vec![(3, "")],
    })
}

/// The edges table (docs/measures.md §16.3): one row per analysis, model with replicates
/// and ladder edge, in report order.
fn edges_table(m: &ResponseMatrix, report: &Report, with_protocol: bool) -> Option<Table> {
    let mut rows = Vec::new();
    for a in &report.analyses {
        for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
            let Metrics::Mcq(x) = x else { continue };
            let Some(r) = &x.replicates else { continue };
            for e in &r.edges {
                let mut row = Vec::new();
                if with_protocol {
                    row.push(Val::Text(m.protocols.name(a.key.protocol).into()));
                }
                row.extend([
                    Val::Text(a.key.scope_name(m).into()),
                    Val::Text(m.models.name(mg.model).into()),
                    Val::Text(e.from.to_string()),
                    Val::Text(e.to.to_string()),
                    Val::Num(Some(e.observed_nfr)),
                    Val::Num(e.floor_nfr),
                    Val::Num(e.excess_nfr),
                    Val::P(e.excess_p),
                    Val::P(e.excess_q),
                    Val::Flag(e.beyond_noise),
                ]);
                rows.push(row);
            }
        }
    }
    let mut cols = Vec::new();
    if with_protocol {
        cols.push(Col::new("Protocol", "protocol"));
    }
    cols.extend([
        Col::new("Split", "split"),
        Col::new("Model", "model"),
        Col::new("From", "from"),
        Col::new("To", "to"),
        Col::new("Observed", "observed_nfr"),
        Col::new("Floor", "floor_nfr"),
        Col::new("Excess", "excess_nfr"),
        Col::new("p", "excess_p"),
        Col::new("q", "excess_q"),
        Col::new("Beyond noise", "beyond_noise"),
    ]);
    let groups = usize::from(with_protocol) + 1;
    (!rows.is_empty()).then_some(Table {
        kind: Kind::Edges,
        cols,
        rows,
        groups,
        keys: 3,
        sections: vec![(groups + 3, "")],
    })
}

/// Configuration names of every grid, ordered by their own budget, then by name.
fn config_columns(grids: &[(&[Num], &[Name])]) -> Vec<String> {
    // Sets and maps by name here and below, not scans: an item may have a million
    // configurations.
    names_by_budget(
        grids.iter().flat_map(|(budgets, names)| {
            budgets.iter().zip(names.iter()).map(|(b, n)| (b.0, &**n))
        }),
    )
    .into_iter()
    .map(str::to_string)
    .collect()
}

/// A measure's value in a row, as its column holds it.
fn measure_val(c: &Measure, x: &Metrics) -> Val {
    let v = c.value_of(x);
    if c.at.is_some() {
        return match (c.at_of(x), v) {
            (Some(at), Some(v)) => Val::Best(at.to_string(), v),
            _ => Val::Num(None),
        };
    }
    match v {
        None => Val::Num(None),
        Some(v) if c.interval.is_some() => {
            Val::Est(v, c.interval_of(x).map(|(lo, hi)| Interval { lo, hi }))
        }
        Some(v) if c.unit.decimals() == 0 => Val::Int(v as usize),
        Some(v) => Val::Num(Some(v)),
    }
}

/// The tables of the report, MCQ first, each only when some analysis of its task has
/// metrics, with a column per measure of its task in `measures`. The protocol column is
/// there only when the rows come from several protocols.
fn tables(m: &ResponseMatrix, report: &Report, measures: &[Measure]) -> Vec<Table> {
    let protocols: std::collections::BTreeSet<u32> = report
        .analyses
        .iter()
        .filter(|a| !a.metrics.is_empty())
        .map(|a| a.key.protocol)
        .collect();
    let with_protocol = protocols.len() > 1;
    let mut out = Vec::new();
    for task in [Task::Mcq, Task::Open] {
        let analyses: Vec<_> = report
            .analyses
            .iter()
            .filter(|a| a.key.task == task && !a.metrics.is_empty())
            .collect();
        if analyses.is_empty() {
            continue;
        }
        let grids: Vec<_> = analyses
            .iter()
            .flat_map(|a| a.metrics.iter())
            .map(|x| match x {
                Metrics::Mcq(x) => (&x.grid.own_budgets[..], &x.grid.configs[..]),
                Metrics::Open(x) => (&x.grid.own_budgets[..], &x.grid.configs[..]),
            })
            .collect();
        let configs = config_columns(&grids);
        let mut cols = Vec::new();
        if with_protocol {
            cols.push(Col::new("Protocol", "protocol"));
        }
        cols.push(Col::new("Split", "split"));
        cols.push(Col::new("Model", "model"));
        cols.push(Col::new("Items", "n_items"));
        cols.push(Col::new("K", "configs"));
        let prefix = if task == Task::Mcq {
            "acc"
        } else {
            "mean_score"
        };
        for c in &configs {
            cols.push(Col {
                config: true,
                ..Col::new(c, &format!("{prefix}_{c}"))
            });
        }
        let measured = cols.len();
        let columns = with_columns(
            measures,
            task,
            analyses.iter().flat_map(|a| a.metrics.iter()),
        );
        cols.extend(columns.iter().map(|x| Col::measure(x)));
        let mut rows = Vec::new();
        for a in analyses {
            for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
                let mut row = Vec::new();
                if with_protocol {
                    row.push(Val::Text(m.protocols.name(a.key.protocol).into()));
                }
                row.push(Val::Text(a.key.scope_name(m).into()));
                row.push(Val::Text(m.models.name(mg.model).into()));
                let (n, names, values) = match x {
                    Metrics::Mcq(x) => (x.n_items, &x.grid.configs, &x.accuracy),
                    Metrics::Open(x) => (x.n_items, &x.grid.configs, &x.mean_score),
                };
                row.push(Val::Int(n));
                row.push(Val::Int(names.len()));
                let column: rustc_hash::FxHashMap<&str, usize> =
                    names.iter().enumerate().map(|(i, n)| (&**n, i)).collect();
                for c in &configs {
                    row.push(match column.get(c.as_str()) {
                        Some(&i) => Val::Num(Some(values[i])),
                        None => Val::Absent,
                    });
                }
                row.extend(columns.iter().map(|c| measure_val(c, x)));
                rows.push(row);
            }
        }
        let groups = usize::from(with_protocol) + 1;
        out.push(Table {
            kind: Kind::Task(task),
            cols,
            rows,
            groups,
            keys: 1,
            sections: vec![
                (
                    groups + 1,
                    if task == Task::Mcq {
                        "accuracy per configuration"
                    } else {
                        "mean score per configuration"
                    },
                ),
                (measured, "measures"),
            ],
        });
    }
    out.extend(intervention_table(m, report));
    out.extend(edges_table(m, report, with_protocol));
    out
}

/// Whether some model of the report has replicates.
fn replicated(report: &Report) -> bool {
    report.analyses.iter().any(|a| {
        a.metrics
            .iter()
            .any(|x| matches!(x, Metrics::Mcq(x) if x.replicates.is_some()))
    })
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The lines of the header: what was analysed, every analysis option, what the columns
/// (`measures`) mean, and the models left out.
fn header(
    ds: &Dataset,
    source: &str,
    report: &Report,
    format: TableFormat,
    measures: &[Measure],
) -> Vec<String> {
    let p: &Params = &report.params;
    let list = |v: &Option<Vec<String>>, none: &str| match v {
        Some(v) => v.join(","),
        None => none.to_string(),
    };
    let mut h = vec![
        format!(
            "frameaudit {} report of {} ({}), {}",
            env!("CARGO_PKG_VERSION"),
            ds.name,
            source,
            crate::core::analysis::SPEC_VERSION
        ),
        "analysis options:".into(),
        format!("  --grid {}", p.grid_mode.as_str().replace('_', "-")),
        format!("  --models {}", list(&p.models, "(all models)")),
        format!("  --configs {}", list(&p.configs, "(no filter)")),
        format!(
            "  --no-zero-frame {}",
            if p.include_zero_frame {
                "not given (text-only configurations included)"
            } else {
                "given (text-only configurations left out)"
            }
        ),
        format!(
            "  --reference-pixels {}",
            match p.reference_pixels {
                ReferencePixels::Auto => "auto".to_string(),
                ReferencePixels::None => "none".to_string(),
                ReferencePixels::Value(v) => v.to_string(),
            }
        ),
        format!(
            "  --variant-budget {}",
            match p.variant_budget {
                VariantBudget::Own => "own",
                VariantBudget::Zero => "zero",
            }
        ),
        format!(
            "  --cascade-stages {}",
            list(&p.cascade_stages, "(the visual ladder)")
        ),
        format!("  --primary {}", p.primary),
        format!("  --intervention-protocol {}", p.intervention_protocol),
        format!("  --delta {}", p.delta),
        format!("  --boot {}", p.bootstrap_b),
        format!("  --seed {}", p.seed),
    ];
    let rounding = match format {
        TableFormat::Csv => "unrounded, as in report --json",
        _ => "rounded to one decimal (report --format csv gives them unrounded)",
    };
    let points: Vec<&str> = measures
        .iter()
        .filter(|x| x.unit == Unit::Points)
        .map(|x| x.describes)
        .collect();
    h.push(if points.is_empty() {
        format!("values: percent of items, {rounding}")
    } else {
        format!(
            "values: percent of items, {} in points, {rounding}",
            and_list(&points)
        )
    });
    for (task, name, curve) in [
        (Task::Mcq, "MCQ", "accuracy per configuration"),
        (Task::Open, "open-ended", "mean score per configuration"),
    ] {
        let mut line = format!("{name}: {curve}");
        let metrics = report
            .analyses
            .iter()
            .filter(|a| a.key.task == task)
            .flat_map(|a| a.metrics.iter());
        for x in with_columns(measures, task, metrics) {
            line.push_str(", ");
            line.push_str(x.describes);
        }
        h.push(line);
    }
    if replicated(report) {
        // Only where they change a number: a run without replicates reads as before 2.1.
        h.insert(
            h.iter()
                .position(|l| l.starts_with("  --boot "))
                .unwrap_or(h.len()),
            format!(
                "  --nuisances {}",
                list(&p.nuisances, "(every nuisance read)")
            ),
        );
        h.insert(
            h.iter()
                .position(|l| l.starts_with("  --boot "))
                .unwrap_or(h.len()),
            format!("  --alpha {}", p.alpha),
        );
        h.push(format!(
            "edges: negative-flip rate of each ladder edge (observed), its floor over the replicates of its two configurations, excess in points, Fisher's one-sided p of the excess and its Benjamini-Hochberg q within the analysis; beyond noise when q <= {}",
            p.alpha
        ));
    }
    if p.bootstrap_b > 0 {
        h.push(format!(
            "intervals: 95% percentile bootstrap over {}, B = {}, seed {}",
            if p.cluster_bootstrap {
                "clusters (videos) (--cluster-bootstrap)"
            } else {
                "items"
            },
            p.bootstrap_b,
            p.seed
        ));
    } else {
        h.push("intervals: none (--boot 0)".into());
    }
    let recovered = report
        .analyses
        .iter()
        .flat_map(|a| a.metrics.iter())
        .any(|x| matches!(x, Metrics::Mcq(x) if !x.interventions.is_empty()));
    if recovered {
        h.push(
            "recovery: the recovery rate's interval is Wilson's 95% score interval of recovered of terminal regressions (a bootstrap collapses to a point at 0 or 100 with few of them), with --boot 0 too; the transition recovery's, of the re-runs of a configuration below the top (an audited plan's), likewise; broken and the accuracy delta are blank (their columns left out) where no item re-run at the top was right there, as in a plan of terminal regressions only"
                .into(),
        );
    }
    for a in &report.analyses {
        for e in &a.grids.excluded {
            h.push(format!(
                "excluded from {} {} {}: {} ({}{})",
                ds.matrix.protocols.name(a.key.protocol),
                a.key.task.as_str(),
                a.key.scope_name(&ds.matrix),
                e.model,
                e.reason,
                if e.configs.is_empty() {
                    String::new()
                } else {
                    format!(": {}", e.configs.join(","))
                }
            ));
        }
    }
    if format == TableFormat::Latex {
        h.push("needs \\usepackage{booktabs}".into());
    }
    h
}

fn one(x: f64) -> String {
    format!("{x:.1}")
}

/// A value as the table shows it in Markdown and LaTeX, its names through `esc`.
fn shown(v: &Val, esc: fn(&str) -> String) -> String {
    match v {
        Val::Text(s) => esc(s),
        Val::Int(n) => n.to_string(),
        Val::Num(Some(x)) => one(*x),
        Val::Num(None) | Val::Absent => esc("–"),
        Val::Est(x, None) => one(*x),
        Val::Est(x, Some(i)) => format!("{} [{}, {}]", one(*x), one(i.lo), one(i.hi)),
        Val::Best(c, x) => format!("{} ({})", one(*x), esc(c)),
        Val::P(None) => esc("–"),
        Val::P(Some(p)) => p_value(*p),
        Val::Flag(true) => "yes".into(),
        Val::Flag(false) => "no".into(),
    }
}

/// A p- or q-value in Markdown and LaTeX: three decimals, or two significant digits below
/// 0.001.
fn p_value(p: f64) -> String {
    if p >= 0.001 || p == 0.0 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// A value's CSV fields, unrounded: each number written as the report JSON writes it.
fn fields(v: &Val) -> Vec<String> {
    let num = |x: f64| serde_json::to_string(&x).unwrap_or_default();
    match v {
        Val::Text(s) => vec![s.clone()],
        Val::Int(n) => vec![n.to_string()],
        Val::Num(Some(x)) => vec![num(*x)],
        Val::Num(None) | Val::Absent => vec![String::new()],
        Val::Est(x, i) => vec![
            num(*x),
            i.map_or(String::new(), |i| num(i.lo)),
            i.map_or(String::new(), |i| num(i.hi)),
        ],
        Val::Best(c, x) => vec![c.clone(), num(*x)],
        Val::P(p) => vec![p.map_or(String::new(), num)],
        Val::Flag(b) => vec![b.to_string()],
    }
}

fn markdown_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in show_id(s).chars() {
        if matches!(c, '\\' | '|' | '*' | '`' | '<' | '>' | '[' | ']') {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// A name as LaTeX text that sets it sign for sign in the article class's default font
/// (OT1, where `<`, `>`, `|` and `"` set other glyphs and `--`, `''`, `!`` are ligatures):
/// never a command, and never an argument of the `\\`, `\midrule` or `\addlinespace`
/// before it, which take a `*` or a `[...]` that starts the next row (blanks skipped).
fn latex_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let text = show_id(s);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => o.push_str("\\textbackslash{}"),
            '~' => o.push_str("\\textasciitilde{}"),
            '^' => o.push_str("\\textasciicircum{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                o.push('\\');
                o.push(c);
            }
            '[' | '*' => {
                o.push('{');
                o.push(c);
                o.push('}');
            }
            '<' => o.push_str("\\textless{}"),
            '>' => o.push_str("\\textgreater{}"),
            '|' => o.push_str("\\textbar{}"),
            // OT1 has straight quotes in its typewriter font only (`\textquotedbl` needs
            // T1, which the preamble the docs give does not load); its roman `'` and `` ` ``
            // are curly quotes.
            '"' => o.push_str("\\texttt{\\char34}"),
            '\'' => o.push_str("\\texttt{\\char13}"),
            '`' => o.push_str("\\texttt{\\char18}"),
            // `{}` between two hyphens keeps them from the `--` and `---` ligatures.
            '-' if chars.peek() == Some(&'-') => o.push_str("-{}"),
            '–' => o.push_str("--"),
            _ => o.push(c),
        }
    }
    o
}

/// How Markdown and LaTeX lay the tables out (CSV is always one table of every column).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Layout {
    /// One row per split and model with every column: as wide as the grid is.
    Wide,
    /// Tables that fit a page: a task's configurations and its measures apart, rows
    /// grouped under their split, intervals and best configurations on a line below their
    /// value, and the columns wrapped into further tables past a page's width
    /// ([`PAGE_PT`]); `shown` keeps only these configuration columns.
    #[default]
    Paper,
    /// [`Layout::Paper`] with only the named configurations' columns.
    PaperShowing(Vec<String>),
}

/// The text width the paper layout fits its LaTeX tables into: LaTeX's article class at
/// 10 pt (345 pt, 4.8 in), narrower than the text of the usual conference and journal
/// templates.
pub const PAGE_PT: f64 = 345.0;

/// The width the paper layout fits a Markdown table into, in characters: what a rendered
/// README or pull request shows without scrolling.
const PAGE_CHARS: usize = 100;

/// Writes the tables of the report in `format`; `source` is the dataset path read.
/// `terminal`: standard output is a
/// terminal, so the CSV's names are escaped too (a file keeps them byte for byte).
pub fn write(
    out: &mut impl Write,
    ds: &Dataset,
    source: &str,
    report: &Report,
    format: TableFormat,
    terminal: bool,
    layout: &Layout,
) -> io::Result<()> {
    let head = header(ds, source, report, format, MEASURES);
    let mut tables = tables(&ds.matrix, report, MEASURES);
    if let Layout::PaperShowing(names) = layout {
        show_configs(&mut tables, names)?;
    }
    // CSV is one row of every column, for a script to lay out (the columns shown too).
    if format == TableFormat::Csv || *layout == Layout::Wide {
        return write_tables(out, &head, &tables, format, terminal);
    }
    let line = |s: &str| sanitize(s).into_owned();
    match format {
        TableFormat::Markdown => {
            for h in &head {
                writeln!(out, "<!-- {} -->", line(h).replace("-->", "-- >"))?;
            }
        }
        _ => {
            for h in &head {
                writeln!(out, "% {}", line(h))?;
            }
        }
    }
    for t in &tables {
        for (title, cols) in paper_parts(t, format) {
            writeln!(out)?;
            match format {
                TableFormat::Markdown => paper_markdown(out, t, &title, &cols)?,
                _ => paper_latex(out, t, &title, &cols)?,
            }
        }
    }
    if tables.is_empty() {
        write_tables(out, &[], &tables, format, terminal)?;
    }
    Ok(())
}

/// Keeps only the configuration columns named in `names`; a name no table has is an error
/// that lists the names there are.
fn show_configs(tables: &mut [Table], names: &[String]) -> io::Result<()> {
    let there: Vec<&str> = tables
        .iter()
        .flat_map(|t| t.cols.iter().filter(|c| c.config))
        .map(|c| c.label.as_str())
        .collect();
    let missing: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !there.contains(n))
        .collect();
    if !missing.is_empty() {
        let mut known: Vec<&str> = Vec::new();
        for n in there {
            if !known.contains(&n) {
                known.push(n);
            }
        }
        // InvalidInput: a usage error, said as one by the caller.
        let why = crate::cli::select::explain_in(
            "--show-configs",
            "configuration",
            &missing,
            &known,
            "the tables",
        );
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    for t in tables {
        let keep: Vec<bool> = t
            .cols
            .iter()
            .map(|c| !c.config || names.contains(&c.label))
            .collect();
        let mut sections = Vec::new();
        for &(start, name) in &t.sections {
            let before = keep[..start].iter().filter(|k| !**k).count();
            sections.push((start - before, name));
        }
        t.sections = sections;
        let mut i = 0;
        t.cols.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        for row in &mut t.rows {
            let mut i = 0;
            row.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
    }
    Ok(())
}

/// A value in the paper layout: its first line, and what stands below it (an interval, the
/// best configuration), both escaped by `esc`.
fn paper_value(v: &Val, esc: fn(&str) -> String) -> (String, Option<String>) {
    match v {
        Val::Est(x, Some(i)) => (one(*x), Some(format!("[{}, {}]", one(i.lo), one(i.hi)))),
        Val::Best(c, x) => (one(*x), Some(esc(c))),
        _ => (shown(v, esc), None),
    }
}

/// The width of `s` in points as LaTeX's Computer Modern at 10 pt sets it, near enough to
/// wrap columns by (the compile test in tests/report_paper.rs checks the fit).
fn latex_pt(s: &str) -> f64 {
    // A command (`\_`, `\textbackslash{}`) is as wide as the sign it sets.
    let mut w = 0.0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            // A command's name, or the one sign it escapes.
            let mut name = String::new();
            match chars.next() {
                Some(n) if n.is_ascii_alphabetic() => {
                    name.push(n);
                    while let Some(n) = chars.next_if(char::is_ascii_alphabetic) {
                        name.push(n);
                    }
                }
                _ => {}
            }
            match name.as_str() {
                // A font, not a sign: the `\char` in it is.
                "texttt" => {}
                "char" => {
                    while chars.next_if(char::is_ascii_digit).is_some() {}
                    w += 5.0;
                }
                _ => w += 5.0,
            }
            continue;
        }
        w += match c {
            '{' | '}' | '$' => 0.0,
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '!' | '|' => 2.8,
            'f' | 't' | 'r' | ' ' | '-' | '(' | ')' | '[' | ']' => 3.9,
            'm' => 8.4,
            'w' => 7.3,
            'M' | 'W' => 9.2,
            'I' | 'J' => 3.6,
            c if c.is_ascii_uppercase() => 7.5,
            _ => 5.0,
        };
    }
    w
}

/// The width of a value column (its heading's lines, its values and what stands below
/// them) in points or, for Markdown, characters.
fn col_width(t: &Table, i: usize, format: TableFormat) -> f64 {
    let latex = format == TableFormat::Latex;
    let mut w: f64 = 0.0;
    if latex {
        for l in heading_lines(&t.cols[i].label) {
            w = w.max(latex_pt(&latex_escape(&l)));
        }
    } else {
        w = t.cols[i].label.chars().count() as f64;
    }
    for row in &t.rows {
        if latex {
            let (first, below) = paper_value(&row[i], latex_escape);
            w = w.max(latex_pt(&first));
            if let Some(b) = below {
                // \scriptsize is 7 pt against 10.
                w = w.max(0.7 * latex_pt(&b));
            }
        } else {
            w = w.max(shown(&row[i], markdown_escape).chars().count() as f64);
        }
    }
    // The space between columns: \tabcolsep on each side, or Markdown's ` | `.
    w + if latex { 12.0 } else { 3.0 }
}

/// The paper layout's tables of `t`: each section's value columns, wrapped where the next
/// column would pass the page; each with its title.
fn paper_parts(t: &Table, format: TableFormat) -> Vec<(String, Vec<usize>)> {
    let keys = t.groups..t.groups + t.keys;
    let page = match format {
        TableFormat::Latex => PAGE_PT,
        _ => PAGE_CHARS as f64,
    };
    let key_width: f64 = keys
        .clone()
        .map(|i| {
            let mut w: f64 = if format == TableFormat::Latex {
                latex_pt(&latex_escape(&t.cols[i].label))
            } else {
                t.cols[i].label.chars().count() as f64
            };
            for row in &t.rows {
                w = w.max(match format {
                    TableFormat::Latex => latex_pt(&shown(&row[i], latex_escape)),
                    _ => shown(&row[i], markdown_escape).chars().count() as f64,
                });
            }
            w + if format == TableFormat::Latex {
                12.0
            } else {
                4.0
            }
        })
        .sum();
    let mut parts: Vec<(&str, Vec<usize>)> = Vec::new();
    for (s, &(start, name)) in t.sections.iter().enumerate() {
        let end = t.sections.get(s + 1).map_or(t.cols.len(), |x| x.0);
        let mut width = key_width;
        let mut cols: Vec<usize> = Vec::new();
        for i in start..end {
            let w = col_width(t, i, format);
            if !cols.is_empty() && width + w > page {
                parts.push((name, std::mem::take(&mut cols)));
                width = key_width;
            }
            width += w;
            cols.push(i);
        }
        if !cols.is_empty() {
            parts.push((name, cols));
        }
    }
    let n = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(k, (name, cols))| {
            let mut title = t.kind.title().to_string();
            if !name.is_empty() {
                title.push_str(": ");
                title.push_str(name);
            }
            if n > 1 {
                title.push_str(&format!(" ({} of {n})", k + 1));
            }
            (title, keys.clone().chain(cols).collect())
        })
        .collect()
}

/// A heading on at most two lines: a label of several words breaks after its first.
fn heading_lines(label: &str) -> Vec<String> {
    match label.split_once(' ') {
        Some((a, b)) => vec![a.to_string(), b.to_string()],
        None => vec![label.to_string()],
    }
}

/// The group of each row: its protocol and split, joined.
fn group_of(t: &Table, row: &[Val], esc: fn(&str) -> String) -> String {
    row[..t.groups]
        .iter()
        .map(|v| shown(v, esc))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// One table of the paper layout in Markdown: a bold row heads each group.
fn paper_markdown(out: &mut impl Write, t: &Table, title: &str, cols: &[usize]) -> io::Result<()> {
    writeln!(out, "**{title}**")?;
    writeln!(out)?;
    let cells: Vec<String> = cols
        .iter()
        .map(|&i| markdown_escape(&t.cols[i].label))
        .collect();
    writeln!(out, "| {} |", cells.join(" | "))?;
    let align: Vec<&str> = cols
        .iter()
        .map(|&i| if i < t.groups + t.keys { ":--" } else { "--:" })
        .collect();
    writeln!(out, "|{}|", align.join("|"))?;
    let mut last: Option<String> = None;
    for row in &t.rows {
        let group = group_of(t, row, markdown_escape);
        if t.groups > 0 && last.as_ref() != Some(&group) {
            let mut cells = vec![format!("**{group}**")];
            cells.resize(cols.len(), String::new());
            writeln!(out, "| {} |", cells.join(" | "))?;
            last = Some(group);
        }
        let cells: Vec<String> = cols
            .iter()
            .map(|&i| shown(&row[i], markdown_escape))
            .collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

/// One table of the paper layout in LaTeX: a group's name in italics above its rows, a
/// two-word heading on two lines, an interval or best configuration in \scriptsize below
/// its value.
fn paper_latex(out: &mut impl Write, t: &Table, title: &str, cols: &[usize]) -> io::Result<()> {
    // A number's minus is a math minus (text mode sets a hyphen); names and the dash of a
    // missing value keep theirs.
    let num = |s: &str, v: &Val| match v {
        Val::Num(Some(_)) | Val::Est(..) => s.replace('-', "$-$"),
        Val::Best(..) => s.replace('-', "$-$"),
        _ => s.to_string(),
    };
    writeln!(out, "% {}", title.to_lowercase())?;
    let spec: String = cols
        .iter()
        .map(|&i| if i < t.groups + t.keys { 'l' } else { 'r' })
        .collect();
    writeln!(out, "\\begin{{tabular}}{{{spec}}}")?;
    writeln!(out, "\\toprule")?;
    let heads: Vec<Vec<String>> = cols
        .iter()
        .map(|&i| heading_lines(&t.cols[i].label))
        .collect();
    if heads.iter().any(|h| h.len() > 1) {
        let first: Vec<String> = heads
            .iter()
            .map(|h| {
                if h.len() > 1 {
                    latex_escape(&h[0])
                } else {
                    String::new()
                }
            })
            .collect();
        writeln!(out, "{} \\\\", first.join(" & "))?;
    }
    let last: Vec<String> = heads
        .iter()
        .map(|h| latex_escape(h.last().map_or("", String::as_str)))
        .collect();
    writeln!(out, "{} \\\\", last.join(" & "))?;
    writeln!(out, "\\midrule")?;
    let mut group: Option<String> = None;
    for row in &t.rows {
        let g = group_of(t, row, latex_escape);
        if t.groups > 0 && group.as_ref() != Some(&g) {
            if group.is_some() {
                writeln!(out, "\\addlinespace")?;
            }
            writeln!(
                out,
                "\\multicolumn{{{}}}{{l}}{{\\textit{{{g}}}}} \\\\",
                cols.len()
            )?;
            group = Some(g);
        }
        let values: Vec<(String, Option<String>)> = cols
            .iter()
            .map(|&i| paper_value(&row[i], latex_escape))
            .collect();
        let first: Vec<String> = values
            .iter()
            .zip(cols)
            .map(|((v, _), &i)| num(v, &row[i]))
            .collect();
        writeln!(out, "{} \\\\", first.join(" & "))?;
        if values.iter().any(|(_, b)| b.is_some()) {
            let below: Vec<String> = values
                .iter()
                .zip(cols)
                .map(|((_, b), &i)| match b {
                    Some(b) if matches!(row[i], Val::Best(..)) => format!("{{\\scriptsize {b}}}"),
                    Some(b) => format!("{{\\scriptsize {}}}", num(b, &row[i])),
                    None => String::new(),
                })
                .collect();
            writeln!(out, "{} \\\\", below.join(" & "))?;
        }
    }
    writeln!(out, "\\bottomrule")?;
    writeln!(out, "\\end{{tabular}}")?;
    Ok(())
}

/// [`write()`] in the wide layout, each task's table with the columns of `measures` (a
/// table of `core::measures` shape).
pub fn write_with(
    out: &mut impl Write,
    ds: &Dataset,
    source: &str,
    report: &Report,
    format: TableFormat,
    terminal: bool,
    measures: &[Measure],
) -> io::Result<()> {
    let head = header(ds, source, report, format, measures);
    let tables = tables(&ds.matrix, report, measures);
    write_tables(out, &head, &tables, format, terminal)
}

/// The wide layout (and CSV): `head` as comments, then one table per task.
fn write_tables(
    out: &mut impl Write,
    head: &[String],
    tables: &[Table],
    format: TableFormat,
    terminal: bool,
) -> io::Result<()> {
    // One line of text, never more: a name with a line break cannot end a comment.
    let line = |s: &str| sanitize(s).into_owned();
    match format {
        TableFormat::Csv => {
            for h in head {
                writeln!(out, "# {}", line(h))?;
            }
            // One CSV for both tasks: the union of their columns, a task column first.
            let mut names: Vec<&str> = vec!["task"];
            let mut column: rustc_hash::FxHashMap<&str, usize> =
                [("task", 0)].into_iter().collect();
            for t in tables {
                for c in t.cols.iter().flat_map(|c| &c.csv) {
                    column.entry(c).or_insert_with(|| {
                        names.push(c);
                        names.len() - 1
                    });
                }
            }
            let mut w = csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b'\n'))
                .from_writer(Vec::new());
            let keep = |s: String| {
                if terminal {
                    sanitize(&s).into_owned()
                } else {
                    s
                }
            };
            w.write_record(names.iter().map(|n| keep(n.to_string())))
                .map_err(io::Error::other)?;
            for t in tables {
                for row in &t.rows {
                    let mut rec = vec![String::new(); names.len()];
                    rec[0] = t.kind.csv().into();
                    for (col, v) in t.cols.iter().zip(row) {
                        for (name, f) in col.csv.iter().zip(fields(v)) {
                            if let Some(&i) = column.get(name.as_str()) {
                                rec[i] = keep(f);
                            }
                        }
                    }
                    w.write_record(&rec).map_err(io::Error::other)?;
                }
            }
            let bytes = w
                .into_inner()
                .map_err(|e| io::Error::other(e.to_string()))?;
            out.write_all(&bytes)?;
        }
        TableFormat::Markdown => {
            for h in head {
                writeln!(out, "<!-- {} -->", line(h).replace("-->", "-- >"))?;
            }
            for t in tables {
                writeln!(out)?;
                writeln!(out, "**{}**", t.kind.title())?;
                writeln!(out)?;
                let cells: Vec<String> = t.cols.iter().map(|c| markdown_escape(&c.label)).collect();
                writeln!(out, "| {} |", cells.join(" | "))?;
                let align: Vec<&str> = t
                    .cols
                    .iter()
                    .zip(&t.rows[0])
                    .map(|(_, v)| {
                        if matches!(v, Val::Text(_)) {
                            ":--"
                        } else {
                            "--:"
                        }
                    })
                    .collect();
                writeln!(out, "|{}|", align.join("|"))?;
                for row in &t.rows {
                    let cells: Vec<String> =
                        row.iter().map(|v| shown(v, markdown_escape)).collect();
                    writeln!(out, "| {} |", cells.join(" | "))?;
                }
            }
        }
        TableFormat::Latex => {
            for h in head {
                writeln!(out, "% {}", line(h))?;
            }
            for t in tables {
                writeln!(out)?;
                writeln!(out, "% {}", t.kind.title().to_lowercase())?;
                let spec: String = t.rows[0]
                    .iter()
                    .map(|v| if matches!(v, Val::Text(_)) { 'l' } else { 'r' })
                    .collect();
                writeln!(out, "\\begin{{tabular}}{{{spec}}}")?;
                writeln!(out, "\\toprule")?;
                let cells: Vec<String> = t.cols.iter().map(|c| latex_escape(&c.label)).collect();
                writeln!(out, "{} \\\\", cells.join(" & "))?;
                writeln!(out, "\\midrule")?;
                for row in &t.rows {
                    // A number's minus is a math minus in LaTeX (text mode sets a hyphen);
                    // numbers hold no other `-`, text cells are left as they are.
                    let cells: Vec<String> = row
                        .iter()
                        .map(|v| match v {
                            Val::Num(Some(_)) | Val::Est(..) => {
                                shown(v, latex_escape).replace('-', "$-$")
                            }
                            _ => shown(v, latex_escape),
                        })
                        .collect();
                    writeln!(out, "{} \\\\", cells.join(" & "))?;
                }
                writeln!(out, "\\bottomrule")?;
                writeln!(out, "\\end{{tabular}}")?;
            }
        }
    }
    if tables.is_empty() {
        let note = "no analysis has metrics: no model has a complete grid under these options";
        match format {
            TableFormat::Csv => writeln!(out, "# {note}")?,
            TableFormat::Markdown => writeln!(out, "<!-- {note} -->")?,
            TableFormat::Latex => writeln!(out, "% {note}")?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row after `\\` (or `\midrule`) that starts with `[` or `*` was read as the
    /// command's argument: `[3cm]lumen` a 3 cm space, `*orbit` a starred `\\`.
    #[test]
    fn latex_names_never_start_an_argument_nor_set_other_glyphs() {
        assert_eq!(latex_escape("[3cm]lumen"), "{[}3cm]lumen");
        assert_eq!(latex_escape("*orbit"), "{*}orbit");
        assert_eq!(
            latex_escape("a<b>c|d"),
            "a\\textless{}b\\textgreater{}c\\textbar{}d"
        );
        assert_eq!(
            latex_escape("say \"hi\""),
            "say \\texttt{\\char34}hi\\texttt{\\char34}"
        );
        assert_eq!(
            latex_escape("it's `x`"),
            "it\\texttt{\\char13}s \\texttt{\\char18}x\\texttt{\\char18}"
        );
        // `--` and `---` would set dashes.
        assert_eq!(latex_escape("a-b--c---d"), "a-b-{}-c-{}-{}-d");
        // What was escaped before still is; a missing value is still an en dash.
        assert_eq!(
            latex_escape("a_b & 50% \\ ~^"),
            "a\\_b \\& 50\\% \\textbackslash{} \\textasciitilde{}\\textasciicircum{}"
        );
        assert_eq!(latex_escape("–"), "--");
    }

    /// The width estimate counts a typewriter quote as the one sign it sets, and `-{}` as
    /// its hyphen.
    #[test]
    fn a_quote_in_typewriter_is_one_sign_wide() {
        assert_eq!(latex_pt("a\\texttt{\\char34}b"), latex_pt("axb"));
        assert_eq!(latex_pt("a-{}b"), latex_pt("a-b"));
    }
}
