//! The noise floor of docs/measures.md §16 in the text report and the paper tables: each
//! model with replicates gets its floor, its ladder edges against the floor and its stable
//! and lottery items, with the report JSON's numbers; the tables gain the edges table; and
//! an input without replicates reads exactly as before.

mod common;

use frameaudit::cli::report_table::{self, TableFormat};
use frameaudit::cli::report_text;
use frameaudit::cli::term::Style;
use frameaudit::core::analysis::params::Params;
use frameaudit::core::analysis::{self, Report};
use frameaudit::core::dataset::{Dataset, load_dataset};
use frameaudit::core::measures::{MEASURES, Measure};
use serde_json::Value;

fn load(path: &std::path::Path) -> (Dataset, Report) {
    let ds = load_dataset(path, None).expect("the dataset loads");
    let params = Params {
        bootstrap_b: 20,
        sweep: false,
        ..Params::default()
    };
    let report = analysis::run(&ds.matrix, &params, None);
    (ds, report)
}

fn demo() -> (Dataset, Report) {
    load(&common::repo().join("fixtures/demo"))
}

/// A copy of the demo without its replicate cells.
fn demo_without_replicates(dir: &std::path::Path) -> (Dataset, Report) {
    let src = common::repo().join("fixtures/demo");
    for f in ["items.jsonl", "dataset.json"] {
        std::fs::copy(src.join(f), dir.join(f)).expect("copy");
    }
    let cells = std::fs::read_to_string(src.join("cells.jsonl")).expect("cells");
    let mut kept = String::new();
    let mut dropped = 0;
    for line in cells.lines() {
        let v: Value = serde_json::from_str(line).expect("a cell");
        if v["replicate"].as_str().is_some_and(|r| !r.is_empty()) {
            dropped += 1;
        } else {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    assert!(dropped > 0, "the demo has no replicate to drop");
    std::fs::write(dir.join("cells.jsonl"), kept).expect("write");
    load(dir)
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

fn json(ds: &Dataset, report: &Report) -> Value {
    let mut out = Vec::new();
    report
        .write_json(&ds.matrix, &mut out, false)
        .expect("json");
    serde_json::from_slice(&out).expect("the report is JSON")
}

/// The table of measures without the ones of the `replicates` block: the table before 2.1.
fn without_optional() -> Vec<Measure> {
    MEASURES.iter().filter(|m| !m.optional()).copied().collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn pct(v: &Value) -> String {
    if v.is_null() {
        "–".into()
    } else {
        format!("{:.1}%", f(v))
    }
}

fn p(v: &Value) -> String {
    match v.as_f64() {
        None => "–".into(),
        Some(p) if p >= 0.001 || p == 0.0 => format!("{p:.3}"),
        Some(p) => format!("{p:.1e}"),
    }
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

/// The lines of each MCQ model's block in the text report, by (scope, model).
fn blocks(text: &str) -> Vec<(String, String, Vec<String>)> {
    let mut out: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut scope = None;
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("━━ ") {
            let parts: Vec<&str> = t.split(" · ").collect();
            scope = (parts[1] == "mcq").then(|| parts[2].split(' ').next().unwrap().to_owned());
            continue;
        }
        let Some(s) = &scope else { continue };
        if line.starts_with("  ") && !line.starts_with("   ") && line.contains(" items · ") {
            let model = line.trim().split(" · ").next().unwrap().to_owned();
            out.push((s.clone(), model, Vec::new()));
        } else if line.starts_with("    ")
            && let Some(b) = out.last_mut()
        {
            b.2.push(line.to_owned());
        }
    }
    out
}

/// Each MCQ model of the demo with replicates ends its block with its floor (all pairs and
/// each nuisance), one line per ladder edge (observed, floor, excess, p, q, and the mark
/// exactly on the edges beyond noise) and its stable and lottery items: the report JSON's
/// numbers.
#[test]
fn the_text_report_gives_each_models_floor_edges_and_stable_items() {
    let (ds, report) = demo();
    let j = json(&ds, &report);
    let text = text(&ds, &report, MEASURES);
    let blocks = blocks(&text);
    let mut checked = 0;
    let (mut beyond, mut within) = (0, 0);
    for a in j["analyses"].as_array().expect("analyses") {
        if a["task"] != "mcq" {
            continue;
        }
        for (model, x) in a["models"].as_object().expect("models") {
            let r = &x["replicates"];
            assert!(r.is_object(), "the demo's {model} has no replicates");
            let (_, _, lines) = blocks
                .iter()
                .find(|(s, m, _)| s == a["scope"].as_str().unwrap() && m == model)
                .unwrap_or_else(|| panic!("no block of {model}:\n{text}"));
            let at = lines
                .iter()
                .position(|l| l.starts_with("    noise floor over replicates ("))
                .unwrap_or_else(|| panic!("{model}: no floor:\n{}", lines.join("\n")));
            let nuisances: Vec<&str> = r["nuisances"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap())
                .collect();
            assert!(lines[at].ends_with(&format!("({})", nuisances.join(", "))));
            assert_eq!(words(&lines[at + 1]), ["pairs", "disagree", "neg-flip"]);
            let mut floors = vec![("all".to_string(), &r["floor"]["all"])];
            for (k, v) in r["floor"]["by_nuisance"].as_object().unwrap() {
                floors.push((k.clone(), v));
            }
            let mut i = at + 2;
            for (name, fl) in &floors {
                assert_eq!(
                    words(&lines[i]),
                    [
                        name.clone(),
                        fl["pairs"].to_string(),
                        pct(&fl["disagreement_rate"]),
                        pct(&fl["negative_flip_floor"])
                    ],
                    "{model}: floor {name}"
                );
                i += 1;
            }
            assert!(lines[i].starts_with("    edges: negative flips against the floor"));
            assert!(lines[i].ends_with(&format!("q ≤ {})", f(&r["alpha"]))));
            assert_eq!(
                words(&lines[i + 1]),
                ["observed", "floor", "excess", "excess", "p", "q"]
            );
            i += 2;
            let edges = r["edges"].as_array().unwrap();
            assert_eq!(edges.len(), x["churn"].as_array().unwrap().len());
            for e in edges {
                let mut want = vec![
                    format!(
                        "{}→{}",
                        e["from"].as_str().unwrap(),
                        e["to"].as_str().unwrap()
                    ),
                    pct(&e["observed_nfr"]),
                    pct(&e["floor_nfr"]),
                    format!("{:+.1}", f(&e["excess_nfr"])),
                    p(&e["excess_p"]),
                    p(&e["excess_q"]),
                ];
                if e["beyond_noise"].as_bool().unwrap() {
                    want.extend(["◀", "beyond", "noise"].map(String::from));
                    beyond += 1;
                } else {
                    within += 1;
                }
                assert_eq!(words(&lines[i]), want, "{model}: edge");
                i += 1;
            }
            let s = &r["stable"];
            let lottery = s["harmful_replicated"].as_u64().unwrap()
                - s["stable_harmful_replicated"].as_u64().unwrap();
            assert_eq!(
                lines[i].trim(),
                format!(
                    "stable harmful items {:.1}% ({} items) · lottery {:.1}% of replicated harmful items ({} of {})",
                    f(&s["stable_harmful_rate"]),
                    s["stable_harmful_items"],
                    f(&s["lottery_rate"]),
                    lottery,
                    s["harmful_replicated"]
                ),
                "{model}: stable"
            );
            assert_eq!(i + 1, lines.len(), "{model}: the noise lines end the block");
            checked += 1;
        }
    }
    assert!(checked >= 3, "{checked} models checked");
    assert!(
        beyond > 0 && within > 0,
        "{beyond} edges beyond noise, {within} not"
    );
}

/// Without replicates, the text report and the tables are what the table of measures
/// before 2.1 gives (no column of `–`, no noise line, no edges table); and the demo less its
/// replicates reads as the demo less the noise lines and columns.
#[test]
fn inputs_without_replicates_read_as_before() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bare = demo_without_replicates(tmp.path());
    let example = load(&common::conformance("example_13_1.jsonl"));
    let old = without_optional();
    assert!(old.len() < MEASURES.len());
    for (ds, report) in [&bare, &example] {
        let t = text(ds, report, MEASURES);
        assert_eq!(t, text(ds, report, &old));
        assert!(
            !t.contains("noise floor") && !t.contains("stable harmful"),
            "{t}"
        );
        for format in [TableFormat::Markdown, TableFormat::Latex, TableFormat::Csv] {
            let tab = paper(ds, report, format, MEASURES);
            assert_eq!(tab, paper(ds, report, format, &old), "{format:?}");
            assert!(!tab.contains("noise") && !tab.contains("--alpha"), "{tab}");
        }
    }
    // The demo with its replicates, less what they add, is the demo without them.
    let (ds, report) = demo();
    let full = text(&ds, &report, &old);
    let mut kept = Vec::new();
    let mut in_noise = false;
    for line in full.lines() {
        if line.starts_with("    noise floor over replicates") {
            in_noise = true;
        }
        if !in_noise {
            kept.push(line);
        }
        if line.starts_with("    stable harmful items ") {
            in_noise = false;
        }
    }
    assert!(kept.len() < full.lines().count());
    let bare_text = text(&bare.0, &bare.1, MEASURES);
    assert_eq!(kept, bare_text.lines().collect::<Vec<_>>());
    let md = paper(&ds, &report, TableFormat::Markdown, &old);
    let cut = md.find("\n**Ladder edges").expect("the edges table");
    let head: Vec<&str> = md[..cut]
        .lines()
        .filter(|l| {
            !l.starts_with("<!--   --nuisances")
                && !l.starts_with("<!--   --alpha")
                && !l.starts_with("<!-- edges:")
        })
        .collect();
    let bare_md = paper(&bare.0, &bare.1, TableFormat::Markdown, MEASURES);
    assert_eq!(head, bare_md.lines().collect::<Vec<_>>());
}

/// The edges table: one row per analysis, model and ladder edge, the report's numbers
/// (unrounded in CSV, one decimal and `yes` on the edges beyond noise in Markdown and
/// LaTeX).
#[test]
fn the_tables_give_each_edge_against_the_floor() {
    let (ds, report) = demo();
    let j = json(&ds, &report);
    let mut edges = Vec::new();
    for a in j["analyses"].as_array().expect("analyses") {
        for (model, x) in a["models"].as_object().expect("models") {
            if let Some(es) = x["replicates"]["edges"].as_array() {
                for e in es {
                    edges.push((a["scope"].as_str().unwrap().to_owned(), model.clone(), e));
                }
            }
        }
    }
    assert!(edges.len() >= 15, "{} edges", edges.len());
    assert!(edges.iter().any(|e| e.2["beyond_noise"] == true));

    let csv = paper(&ds, &report, TableFormat::Csv, MEASURES);
    let mut r = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(csv.as_bytes());
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    let col = |n: &str| head.iter().position(|h| h == n).expect(n);
    let rows: Vec<csv::StringRecord> = r
        .records()
        .map(|x| x.unwrap())
        .filter(|x| &x[0] == "edges")
        .collect();
    assert_eq!(rows.len(), edges.len());
    // Both read by serde_json's parser, which is not exact in the last bit.
    let read = |s: &str| (!s.is_empty()).then(|| serde_json::from_str::<f64>(s).expect("a number"));
    for (row, (scope, model, e)) in rows.iter().zip(&edges) {
        assert_eq!(
            (&row[col("split")], &row[col("model")]),
            (scope.as_str(), model.as_str())
        );
        for k in ["from", "to"] {
            assert_eq!(&row[col(k)], e[k].as_str().unwrap());
        }
        for k in [
            "observed_nfr",
            "floor_nfr",
            "excess_nfr",
            "excess_p",
            "excess_q",
        ] {
            assert_eq!(read(&row[col(k)]), e[k].as_f64(), "{k}");
        }
        assert_eq!(row[col("beyond_noise")], e["beyond_noise"].to_string());
    }

    let one = |v: &Value| format!("{:.1}", f(v));
    for (format, sep, end) in [
        (TableFormat::Markdown, " | ", " |"),
        (TableFormat::Latex, " & ", " \\\\"),
    ] {
        let out = paper(&ds, &report, format, MEASURES);
        let after: Vec<&str> = out
            .lines()
            .skip_while(|l| {
                !l.to_lowercase()
                    .contains("ladder edges against the noise floor")
            })
            .collect();
        assert!(!after.is_empty(), "{format:?}: no edges table:\n{out}");
        let rows: Vec<&str> = match format {
            TableFormat::Markdown => after
                .iter()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| Split"))
                .copied()
                .collect(),
            _ => after
                .iter()
                .skip_while(|l| **l != "\\midrule")
                .skip(1)
                .take_while(|l| **l != "\\bottomrule")
                .copied()
                .collect(),
        };
        assert_eq!(rows.len(), edges.len(), "{format:?}:\n{out}");
        for (row, (scope, model, e)) in rows.iter().zip(&edges) {
            // LaTeX sets a number's minus as a math minus.
            let one = |v: &Value| match format {
                TableFormat::Latex => one(v).replace('-', "$-$"),
                _ => one(v),
            };
            let want = vec![
                scope.clone(),
                model.clone(),
                e["from"].as_str().unwrap().to_owned(),
                e["to"].as_str().unwrap().to_owned(),
                one(&e["observed_nfr"]),
                one(&e["floor_nfr"]),
                one(&e["excess_nfr"]),
                p(&e["excess_p"]),
                p(&e["excess_q"]),
                if e["beyond_noise"] == true {
                    "yes"
                } else {
                    "no"
                }
                .to_owned(),
            ];
            let cells: Vec<String> = row
                .trim_start_matches("| ")
                .trim_end_matches(end)
                .split(sep)
                .map(str::to_owned)
                .collect();
            assert_eq!(cells, want, "{format:?}");
        }
    }
}

/// A nuisance's name comes from the data: the text report, the tables and the figure's
/// caption show its control characters as escapes, never raw.
#[test]
fn nuisance_names_from_the_data_are_shown_safe() {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = common::repo().join("fixtures/demo");
    for f in ["items.jsonl", "dataset.json"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).expect("copy");
    }
    let cells = std::fs::read_to_string(src.join("cells.jsonl")).expect("cells");
    let bad = cells.replace(
        "\"nuisance\":\"rerun\"",
        "\"nuisance\":\"re\\u001b[31mrun\"",
    );
    assert_ne!(bad, cells, "the demo has no rerun replicate");
    std::fs::write(tmp.path().join("cells.jsonl"), bad).expect("write");
    let (ds, report) = load(tmp.path());
    let t = text(&ds, &report, MEASURES);
    assert!(
        t.contains("noise floor over replicates (phase, re\\x1b[31mrun)"),
        "{t}"
    );
    assert!(!t.contains('\u{1b}'), "a raw ESC in the text report");
    for format in [TableFormat::Markdown, TableFormat::Latex] {
        let tab = paper(&ds, &report, format, MEASURES);
        assert!(!tab.contains('\u{1b}'), "a raw ESC in {format:?}");
    }
}
