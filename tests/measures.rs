//! The table of measures (src/core/measures.rs) against what shows them and what computes
//! them: each entry reads the field of `report --json` its key names; each is a column of
//! the text report's model tables and of every paper-table format, and a measure added to
//! the table becomes one without any other change; and the SQL script and the Python
//! reference compute each (or the entry says why not).

mod common;

use std::path::Path;
use std::process::Command;

use frameaudit::cli::report_table::{self, TableFormat};
use frameaudit::cli::report_text;
use frameaudit::cli::term::Style;
use frameaudit::core::analysis::params::Params;
use frameaudit::core::analysis::{self, Metrics, Report};
use frameaudit::core::dataset::{Dataset, load_dataset};
use frameaudit::core::matrix::Task;
use frameaudit::core::measures::{MEASURES, Measure, Twin, of_task};
use serde_json::Value;

/// The demo, analysed with a small bootstrap (intervals present) and no sweep.
fn demo() -> (Dataset, Report) {
    let ds = load_dataset(&common::repo().join("fixtures/demo"), None).expect("the demo loads");
    let params = Params {
        bootstrap_b: 50,
        sweep: false,
        ..Params::default()
    };
    let report = analysis::run(&ds.matrix, &params, None);
    (ds, report)
}

fn text(ds: &Dataset, report: &Report, table: &[Measure]) -> String {
    let mut out = Vec::new();
    report_text::write_with(&mut out, ds, report, &Style::plain(100), table).expect("text");
    String::from_utf8(out).expect("utf-8")
}

fn paper(ds: &Dataset, report: &Report, format: TableFormat, table: &[Measure]) -> String {
    let mut out = Vec::new();
    report_table::write_with(&mut out, ds, "demo", report, format, false, table).expect("table");
    String::from_utf8(out).expect("utf-8")
}

/// `v` as the report JSON writes it and a reader reads it back (serde_json's parser is
/// not exact in the last bit), so that a value is compared with the report's text.
fn as_read(v: Option<f64>) -> Option<f64> {
    v.map(|v| serde_json::from_str(&serde_json::to_string(&v).expect("write")).expect("read"))
}

/// The field at a dotted `key` of a JSON object, `None` when there is no such field; a
/// `null` on the way (`replicates` of a model without replicates) is the field's value.
fn at<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.')
        .try_fold(v, |v, k| if v.is_null() { Some(v) } else { v.get(k) })
}

/// Every (task, scope, model, metrics, report JSON of those metrics) of the report.
fn models<'a>(
    ds: &'a Dataset,
    report: &'a Report,
    json: &'a Value,
) -> Vec<(Task, String, String, &'a Metrics, &'a Value)> {
    let m = &ds.matrix;
    let analyses = json["analyses"].as_array().expect("analyses");
    assert_eq!(analyses.len(), report.analyses.len());
    let mut out = Vec::new();
    for (a, j) in report.analyses.iter().zip(analyses) {
        assert_eq!(j["task"], a.key.task.as_str());
        assert_eq!(j["scope"], a.key.scope_name(m));
        for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
            let name = m.models.name(mg.model);
            let metrics = j["models"].get(name).expect("the model in the JSON");
            out.push((
                a.key.task,
                a.key.scope_name(m).to_string(),
                name.to_string(),
                x,
                metrics,
            ));
        }
    }
    out
}

fn json(ds: &Dataset, report: &Report) -> Value {
    let mut out = Vec::new();
    report
        .write_json(&ds.matrix, &mut out, false)
        .expect("json");
    serde_json::from_slice(&out).expect("the report is JSON")
}

/// Each entry reads the field `report --json` holds under its key: the value, the
/// bootstrap interval (`bootstrap.KEY`) and the configuration of a measure read at one.
#[test]
fn each_measure_reads_the_report_field_its_key_names() {
    let (ds, report) = demo();
    let j = json(&ds, &report);
    let rows = models(&ds, &report, &j);
    for task in [Task::Mcq, Task::Open] {
        assert!(
            rows.iter().any(|r| r.0 == task),
            "the demo has no {task:?} model: nothing would be checked"
        );
        assert!(
            of_task(MEASURES, task).next().is_some(),
            "no {task:?} measure"
        );
    }
    for x in MEASURES {
        // The demo has replicates: a measure of them has a value there, not only `null`s.
        assert!(
            rows.iter()
                .any(|r| r.0 == x.task && x.value_of(r.3).is_some()),
            "{}: no model of the demo has a value",
            x.key
        );
        for (task, scope, model, metrics, json) in &rows {
            let what = format!("{} of {scope} {model}", x.key);
            if *task != x.task {
                assert_eq!(x.value_of(metrics), None, "{what}: another task's metrics");
                continue;
            }
            let field = at(json, x.key).unwrap_or_else(|| panic!("{what}: no such field"));
            assert_eq!(as_read(x.value_of(metrics)), field.as_f64(), "{what}");
            let interval = x
                .interval
                .map(|_| at(json, &format!("bootstrap.{}", x.key)).expect("an interval"));
            let read = x
                .interval_of(metrics)
                .map(|(lo, hi)| (as_read(Some(lo)), as_read(Some(hi))));
            assert_eq!(
                read,
                interval.map(|i| (i["lo"].as_f64(), i["hi"].as_f64())),
                "{what}: interval"
            );
            if x.at.is_some() {
                let (base, _) = x.key.rsplit_once('.').expect("a nested key");
                let config = at(json, &format!("{base}.config")).expect("its configuration");
                assert_eq!(x.at_of(metrics), config.as_str(), "{what}: configuration");
            }
        }
    }
}

/// The names of the columns of the text report's model tables, by task, in order.
fn text_headings(text: &str) -> Vec<(Task, Vec<String>)> {
    let mut task = None;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("━━ ") {
            task = if line.contains(" · mcq · ") {
                Some(Task::Mcq)
            } else if line.contains(" · open · ") {
                Some(Task::Open)
            } else {
                None
            };
        } else if line.starts_with("  model ") {
            let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            out.push((task.expect("a table under a title"), words[3..].to_vec()));
        }
    }
    out
}

/// Every measure of the table is a column of the text report's model tables and of the
/// Markdown, LaTeX and CSV tables, under its names, in table order.
#[test]
fn every_measure_is_a_column_of_the_text_report_and_of_each_table_format() {
    let (ds, report) = demo();
    for task in [Task::Mcq, Task::Open] {
        let shorts: Vec<&str> = of_task(MEASURES, task).map(|x| x.short).collect();
        let labels: Vec<&str> = of_task(MEASURES, task).map(|x| x.label).collect();
        let text = text(&ds, &report, MEASURES);
        let headings = text_headings(&text);
        assert!(headings.iter().any(|(t, _)| *t == task), "{text}");
        for (_, h) in headings.iter().filter(|(t, _)| *t == task) {
            assert_eq!(h, &shorts, "{text}");
        }
        let md = paper(&ds, &report, TableFormat::Markdown, MEASURES);
        let want = format!("| {} |", labels.join(" | "));
        let title = match task {
            Task::Mcq => "**Multiple choice",
            Task::Open => "**Open-ended",
        };
        let head = md
            .lines()
            .skip_while(|l| !l.starts_with(title))
            .find(|l| l.starts_with("| Split"))
            .expect("a Markdown table");
        assert!(head.ends_with(&want), "{head} does not end with {want}");
        let tex = paper(&ds, &report, TableFormat::Latex, MEASURES);
        let want = format!("& {} \\\\", labels.join(" & "));
        let title = match task {
            Task::Mcq => "% multiple choice (",
            Task::Open => "% open-ended (",
        };
        let head = tex
            .lines()
            .skip_while(|l| !l.starts_with(title))
            .find(|l| l.starts_with("Split"))
            .expect("a LaTeX table");
        assert!(head.ends_with(&want), "{head} does not end with {want}");
        for x in of_task(MEASURES, task) {
            assert!(
                md.contains(&format!(", {}", x.describes)),
                "the header does not say what {} is",
                x.key
            );
        }
    }
    // The CSV: each measure's columns, and in them the report's numbers, unrounded.
    let csv = paper(&ds, &report, TableFormat::Csv, MEASURES);
    let mut r = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(csv.as_bytes());
    let head: Vec<String> = r
        .headers()
        .expect("header")
        .iter()
        .map(str::to_owned)
        .collect();
    // The models' rows: the edges table (docs/measures.md §16.3) has rows of its own.
    let records: Vec<csv::StringRecord> = r
        .records()
        .map(|x| x.expect("record"))
        .filter(|x| &x[0] == "mcq" || &x[0] == "open")
        .collect();
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no CSV column {name}"))
    };
    let j = json(&ds, &report);
    let rows = models(&ds, &report, &j);
    assert_eq!(records.len(), rows.len());
    for (rec, (task, scope, model, metrics, _)) in records.iter().zip(&rows) {
        assert_eq!(
            (&rec[col("task")], &rec[col("split")], &rec[col("model")]),
            (task.as_str(), scope.as_str(), model.as_str())
        );
        for x in of_task(MEASURES, *task) {
            let num =
                |v: Option<f64>| v.map_or(String::new(), |v| serde_json::to_string(&v).expect("n"));
            let value = x.value_of(metrics);
            match x.unit.decimals() {
                0 if x.interval.is_none() && x.at.is_none() => assert_eq!(
                    &rec[col(&x.column())],
                    value.map_or(String::new(), |v| format!("{v:.0}"))
                ),
                _ => assert_eq!(rec[col(&x.column())], num(value), "{}", x.key),
            }
            if x.interval.is_some() {
                let i = x.interval_of(metrics);
                assert_eq!(rec[col(&format!("{}_lo", x.column()))], num(i.map(|i| i.0)));
                assert_eq!(rec[col(&format!("{}_hi", x.column()))], num(i.map(|i| i.1)));
            }
            if x.at.is_some() {
                assert_eq!(Some(&rec[col(&x.at_column())]), x.at_of(metrics));
            }
        }
    }
}

/// A model without replicates has no value of a measure of them: `null` in the report, a
/// column left out where no model has one (example 13.1 has no replicate).
#[test]
fn measures_of_replicates_are_null_without_replicates() {
    let ds = load_dataset(&common::conformance("example_13_1.jsonl"), None).expect("loads");
    let report = analysis::run(&ds.matrix, &Params::default(), None);
    let j = json(&ds, &report);
    let rows = models(&ds, &report, &j);
    assert!(rows.iter().any(|r| r.0 == Task::Mcq));
    let optional: Vec<&Measure> = MEASURES.iter().filter(|x| x.optional()).collect();
    assert!(!optional.is_empty());
    for x in optional {
        assert_eq!(x.task, Task::Mcq);
        for (task, _, model, metrics, json) in &rows {
            assert_eq!(x.value_of(metrics), None, "{} of {model}", x.key);
            if *task == Task::Mcq {
                assert!(json["replicates"].is_null(), "{model}");
                assert_eq!(at(json, x.key), Some(&Value::Null));
            }
        }
        let t = text(&ds, &report, MEASURES);
        assert!(!t.contains(x.short), "{}: a column of `–`:\n{t}", x.key);
        let md = paper(&ds, &report, TableFormat::Markdown, MEASURES);
        assert!(!md.contains(x.label), "{}: a column of `–`:\n{md}", x.key);
    }
}

/// The lines of `base` and `extended` that differ, in order; the two must have as many.
fn changed<'a>(base: &'a str, extended: &'a str) -> Vec<(&'a str, &'a str)> {
    let (b, e): (Vec<&str>, Vec<&str>) = (base.lines().collect(), extended.lines().collect());
    assert_eq!(b.len(), e.len(), "lines added or removed:\n{extended}");
    b.into_iter().zip(e).filter(|(b, e)| b != e).collect()
}

/// A table extended by one entry: the text report and the three table formats gain its
/// column (its heading, the header's line on it, its value in every MCQ row) and change in
/// nothing else.
#[test]
fn a_measure_added_to_the_table_appears_in_the_text_report_and_every_table_format() {
    let (ds, report) = demo();
    let mut table = MEASURES.to_vec();
    let last_mcq = table
        .iter()
        .rposition(|x| x.task == Task::Mcq)
        .expect("an MCQ measure");
    table.insert(last_mcq + 1, common::ADDED_MEASURE);
    // The added measure's value of each MCQ model, in report order.
    let values: Vec<Option<f64>> = report
        .analyses
        .iter()
        .filter(|a| a.key.task == Task::Mcq)
        .flat_map(|a| a.metrics.iter().map(|x| common::ADDED_MEASURE.value_of(x)))
        .collect();
    let analyses = report
        .analyses
        .iter()
        .filter(|a| a.key.task == Task::Mcq && !a.metrics.is_empty())
        .count();
    assert!(values.iter().all(Option::is_some) && values.len() > analyses);

    let (base, ext) = (text(&ds, &report, MEASURES), text(&ds, &report, &table));
    let diff = changed(&base, &ext);
    let mut want = Vec::new();
    let mut v = values.iter();
    for a in report.analyses.iter().filter(|a| !a.metrics.is_empty()) {
        if a.key.task != Task::Mcq {
            continue;
        }
        want.push(format!(" {:>7}", "h-pairs"));
        for _ in a.metrics.iter() {
            want.push(format!(
                " {:>7}",
                common::ADDED_MEASURE.show(*v.next().expect("a value"))
            ));
        }
    }
    assert_eq!(diff.len(), want.len(), "{diff:?}");
    for ((b, e), w) in diff.iter().zip(&want) {
        assert_eq!(*e, format!("{b}{w}"), "text report");
    }

    let one = |v: &Option<f64>| format!("{:.1}", v.expect("a value"));
    let base = paper(&ds, &report, TableFormat::Markdown, MEASURES);
    let ext = paper(&ds, &report, TableFormat::Markdown, &table);
    let md = changed(&base, &ext);
    let mut want = vec![
        (" -->".to_string(), ", harmful pair rate -->".to_string()),
        (" |".into(), " | Harmful pairs |".into()),
        ("|".into(), "|--:|".into()),
    ];
    want.extend(
        values
            .iter()
            .map(|v| (" |".into(), format!(" | {} |", one(v)))),
    );
    assert_eq!(md.len(), want.len(), "{md:?}");
    for ((b, e), (end, with)) in md.iter().zip(&want) {
        let kept = b.strip_suffix(end.as_str()).expect("the line's end");
        assert_eq!(*e, format!("{kept}{with}"), "Markdown");
    }

    let base = paper(&ds, &report, TableFormat::Latex, MEASURES);
    let ext = paper(&ds, &report, TableFormat::Latex, &table);
    let tex = changed(&base, &ext);
    let mut want = vec![
        ("".to_string(), ", harmful pair rate".to_string()),
        ("}".into(), "r}".into()),
        (" \\\\".into(), " & Harmful pairs \\\\".into()),
    ];
    want.extend(
        values
            .iter()
            .map(|v| (" \\\\".into(), format!(" & {} \\\\", one(v)))),
    );
    assert_eq!(tex.len(), want.len(), "{tex:?}");
    for ((b, e), (end, with)) in tex.iter().zip(&want) {
        let kept = b.strip_suffix(end.as_str()).expect("the line's end");
        assert_eq!(*e, format!("{kept}{with}"), "LaTeX");
    }

    let base = paper(&ds, &report, TableFormat::Csv, MEASURES);
    let ext = paper(&ds, &report, TableFormat::Csv, &table);
    let comments = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| l.replace(", harmful pair rate", ""))
            .collect()
    };
    assert_eq!(comments(&base), comments(&ext));
    assert!(ext.contains("# MCQ: accuracy per configuration, best fixed configuration"));
    assert!(
        ext.lines()
            .any(|l| l.starts_with("# MCQ:") && l.ends_with(", harmful pair rate"))
    );
    let read = |s: &str| -> Vec<Vec<String>> {
        csv::ReaderBuilder::new()
            .comment(Some(b'#'))
            .has_headers(false)
            .from_reader(s.as_bytes())
            .records()
            .map(|r| r.expect("record").iter().map(str::to_owned).collect())
            .collect()
    };
    let (base, mut ext) = (read(&base), read(&ext));
    let i = ext[0]
        .iter()
        .position(|h| h == "harmful_pair_rate")
        .expect("the added column");
    let mut v = values.iter();
    for (n, row) in ext.iter_mut().enumerate() {
        let cell = row.remove(i);
        if n == 0 {
            continue;
        }
        let want = if row[0] == "mcq" {
            serde_json::to_string(&v.next().expect("a value").expect("a rate")).expect("n")
        } else {
            String::new()
        };
        assert_eq!(cell, want, "CSV row {n}");
    }
    assert_eq!(ext, base, "the CSV less the added column");
}

/// Runs `python3 SCRIPT ARGS...`, `None` (with a note) when python3 or what the script
/// needs is absent (exit code 3).
fn python(script: &Path, args: &[&std::ffi::OsStr]) -> Option<std::process::Output> {
    let o = match Command::new("python3").arg(script).args(args).output() {
        Ok(o) => o,
        Err(_) => {
            common::skip_note(format_args!(
                "python3 is absent; skipping {}",
                script.display()
            ));
            return None;
        }
    };
    if o.status.code() == Some(3) {
        common::skip_note(format_args!(
            "{} lacks a Python package; skipped",
            script.display()
        ));
        return None;
    }
    assert!(
        o.status.success(),
        "{} failed: {}",
        script.display(),
        common::stderr(&o)
    );
    Some(o)
}

/// Each measure the table says the SQL script computes is a column of its `model_summary`
/// (which holds MCQ rows only), and each it says the Python reference computes is in the
/// reference's report under its key, with its interval; a twin that lacks one says why.
#[test]
fn the_sql_script_and_the_python_reference_compute_each_measure_or_say_why_not() {
    for x in MEASURES {
        for twin in [x.sql, x.reference] {
            if let Twin::Lacks(why) = twin {
                assert!(!why.trim().is_empty(), "{}: lacking, for no reason", x.key);
            }
        }
    }
    let repo = common::repo();
    let cells = repo.join("fixtures/demo/cells.jsonl");
    let dir = tempfile::tempdir().expect("tempdir");

    let script =
        frameaudit::core::sql::script(&Params::default(), frameaudit::core::sql::Dialect::DuckDb)
            .expect("a script");
    let sql = dir.path().join("measures.sql");
    std::fs::write(&sql, script).expect("write the script");
    let out = dir.path().join("tables.json");
    let ran = python(
        &repo.join("tests/sql/run_sql.py"),
        &[
            "duckdb".as_ref(),
            sql.as_os_str(),
            cells.as_os_str(),
            out.as_os_str(),
        ],
    );
    if ran.is_some() {
        let tables = common::read_json(&out);
        let rows = tables["model_summary"].as_array().expect("model_summary");
        assert!(!rows.is_empty(), "the script gave no model_summary row");
        for row in rows {
            assert_eq!(row["task"], "mcq");
            for x in MEASURES.iter().filter(|x| x.sql == Twin::Computes) {
                assert_eq!(
                    x.task,
                    Task::Mcq,
                    "{}: the script has no open-ended rows",
                    x.key
                );
                assert!(
                    row.get(x.column()).is_some(),
                    "{}: no column {} in the script's model_summary",
                    x.key,
                    x.column()
                );
                if x.at.is_some() {
                    assert!(row.get(x.at_column()).is_some(), "no {}", x.at_column());
                }
            }
        }
    }

    let Some(o) = python(
        &repo.join("tests/reference/traj_metrics.py"),
        &[cells.as_os_str(), "--boot".as_ref(), "20".as_ref()],
    ) else {
        return;
    };
    let r: Value = serde_json::from_slice(&o.stdout).expect("the reference's report");
    for x in MEASURES.iter().filter(|x| x.reference == Twin::Computes) {
        let mut seen = 0;
        for a in r["analyses"].as_array().expect("analyses") {
            if a["task"] != x.task.as_str() {
                continue;
            }
            for (model, m) in a["models"].as_object().expect("models") {
                seen += 1;
                let what = format!("{} of {} {model}", x.key, a["scope"]);
                let v = at(m, x.key).unwrap_or_else(|| panic!("the reference lacks {what}"));
                assert!(v.is_number() || v.is_null(), "{what}: {v}");
                if x.interval.is_some() {
                    let i = at(m, &format!("bootstrap.{}", x.key))
                        .unwrap_or_else(|| panic!("the reference has no interval of {what}"));
                    assert!(i["lo"].is_number() && i["hi"].is_number(), "{what}: {i}");
                }
                if x.at.is_some() {
                    let (base, _) = x.key.rsplit_once('.').expect("a nested key");
                    assert!(at(m, &format!("{base}.config")).is_some_and(Value::is_string));
                }
            }
        }
        assert!(
            seen > 0,
            "the reference's report has no {} model",
            x.task.as_str()
        );
    }
}
