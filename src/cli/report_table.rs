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
use crate::core::text::sanitize;

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
}

impl Col {
    fn new(label: &str, csv: &str) -> Col {
        Col {
            label: label.into(),
            csv: vec![csv.into()],
        }
    }

    fn est(label: &str, csv: &str) -> Col {
        Col {
            label: label.into(),
            csv: vec![csv.into(), format!("{csv}_lo"), format!("{csv}_hi")],
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
}

/// The recovery table (docs/intervention.md §7): one row per split, model and intervention
/// protocol of the primary protocol's MCQ analyses.
fn intervention_table(m: &ResponseMatrix, report: &Report) -> Option<Table> {
    let mut rows = Vec::new();
    for a in &report.analyses {
        if m.protocols.name(a.key.protocol) != report.params.primary {
            continue;
        }
        for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
            let Metrics::Mcq(x) = x else { continue };
            for v in &x.interventions {
                let iv = &v.recovery;
                let boot = v.bootstrap.as_ref();
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
                    Val::Int(iv.broken),
                    Val::Num(iv.broken_rate),
                    Val::Est(iv.accuracy_delta, boot.map(|b| b.accuracy_delta)),
                ]);
            }
        }
    }
    (!rows.is_empty()).then(|| Table {
        kind: Kind::Intervention,
        cols: vec![
            Col::new("Split", "split"),
            Col::new("Model", "model"),
            Col::new("Strategy", "strategy"),
            Col::new("Items", "items_with_intervention"),
            Col::new("Terminal", "terminal_regressions"),
            Col::new("Recovered", "recovered"),
            Col::est("Recovery", "recovery_rate"),
            Col::new("Broken", "broken"),
            Col::new("Broken %", "broken_rate"),
            Col::est("Accuracy delta", "accuracy_delta"),
        ],
        rows,
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
    (!rows.is_empty()).then_some(Table {
        kind: Kind::Edges,
        cols,
        rows,
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
            cols.push(Col::new(c, &format!("{prefix}_{c}")));
        }
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
        out.push(Table {
            kind: Kind::Task(task),
            cols,
            rows,
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
            "recovery: the recovery rate's interval is Wilson's 95% score interval of recovered of terminal regressions (a bootstrap collapses to a point at 0 or 100 with few of them), with --boot 0 too"
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
    for c in sanitize(s).chars() {
        if matches!(c, '\\' | '|' | '*' | '`' | '<' | '>' | '[' | ']') {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

fn latex_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in sanitize(s).chars() {
        match c {
            '\\' => o.push_str("\\textbackslash{}"),
            '~' => o.push_str("\\textasciitilde{}"),
            '^' => o.push_str("\\textasciicircum{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                o.push('\\');
                o.push(c);
            }
            '–' => o.push_str("--"),
            _ => o.push(c),
        }
    }
    o
}

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
) -> io::Result<()> {
    write_with(out, ds, source, report, format, terminal, MEASURES)
}

/// [`write()`], each task's table with the columns of `measures` (a table of
/// `core::measures` shape).
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
    // One line of text, never more: a name with a line break cannot end a comment.
    let line = |s: &str| sanitize(s).into_owned();
    match format {
        TableFormat::Csv => {
            for h in &head {
                writeln!(out, "# {}", line(h))?;
            }
            // One CSV for both tasks: the union of their columns, a task column first.
            let mut names: Vec<&str> = vec!["task"];
            let mut column: rustc_hash::FxHashMap<&str, usize> =
                [("task", 0)].into_iter().collect();
            for t in &tables {
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
            for t in &tables {
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
            for h in &head {
                writeln!(out, "<!-- {} -->", line(h).replace("-->", "-- >"))?;
            }
            for t in &tables {
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
            for h in &head {
                writeln!(out, "% {}", line(h))?;
            }
            for t in &tables {
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
