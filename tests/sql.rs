//! `frameaudit sql` against `frameaudit report`: the script, run by DuckDB (and by Spark
//! where pyspark and Java are installed), gives every number of the report's MCQ measures
//! to 1e-9, on the demo, on the real Video-MME grid and on random matrices with missing
//! cells, equal budgets, resolution variants, several benchmarks and protocols; and every
//! number of its noise floor (docs/measures.md §16: the floor, the edges with their exact
//! p-values and q-values, the stable items) on the demo's replicates and on random ones.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{frameaudit, json_diff, read_json, stderr};
use serde_json::{Value, json};

/// The tables of one script run, keyed rows, or `None` when the engine is not installed.
struct Tables {
    items: BTreeMap<String, Value>,
    configs: BTreeMap<String, Value>,
    models: BTreeMap<String, Value>,
    /// `churn_edges` (§3.6 with §16.3's McNemar test), then `replicate_floor`,
    /// `replicate_edges` and `replicate_stable` (§16).
    churn: BTreeMap<String, Value>,
    floor: BTreeMap<String, Value>,
    edges: BTreeMap<String, Value>,
    stable: BTreeMap<String, Value>,
}

fn key(v: &Value, fields: &[&str]) -> String {
    fields
        .iter()
        .map(|f| v[f].to_string())
        .collect::<Vec<_>>()
        .join("|")
}

const MODEL_KEY: [&str; 3] = ["protocol", "scope", "model"];
const CONFIG_KEY: [&str; 4] = ["protocol", "scope", "model", "config"];
const ITEM_KEY: [&str; 6] = ["protocol", "scope", "model", "benchmark", "item_id", "task"];
const FLOOR_KEY: [&str; 6] = ["protocol", "scope", "model", "level", "nuisance", "config"];
const EDGE_KEY: [&str; 4] = ["protocol", "scope", "model", "edge_index"];

fn keyed(rows: &[Value], fields: &[&str]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for r in rows {
        let prev = out.insert(key(r, fields), r.clone());
        assert!(prev.is_none(), "two rows with the key {}", key(r, fields));
    }
    out
}

/// Runs the script of `opts` on `cells` with `engine` (duckdb or spark).
fn run_sql(engine: &str, cells: &Path, opts: &[&str], dir: &Path) -> Option<Tables> {
    run_sql_then(engine, cells, opts, dir, None)
}

/// [`run_sql`], then the statements of `after` (DuckDB).
fn run_sql_then(
    engine: &str,
    cells: &Path,
    opts: &[&str],
    dir: &Path,
    after: Option<&Path>,
) -> Option<Tables> {
    let mut args = vec!["sql", "--dialect", engine];
    args.extend_from_slice(opts);
    let o = frameaudit(&args);
    assert!(o.status.success(), "frameaudit sql: {}", stderr(&o));
    let script = dir.join(format!("{engine}.sql"));
    std::fs::write(&script, &o.stdout).expect("write script");
    let out = dir.join(format!("{engine}.out.json"));
    let run = Command::new("python3")
        .arg(common::repo().join("tests/sql/run_sql.py"))
        .arg(engine)
        .arg(&script)
        .arg(cells)
        .arg(&out)
        .args(after)
        .output();
    let run = match run {
        Ok(r) => r,
        Err(_) => {
            common::skip_note(format_args!(
                "python3 is absent; skipping the {engine} check"
            ));
            return None;
        }
    };
    if run.status.code() == Some(3) {
        common::skip_note(format_args!(
            "the Python package for {engine} is absent; skipping the {engine} check"
        ));
        return None;
    }
    assert!(
        run.status.success(),
        "{engine} failed on {}:\n{}",
        script.display(),
        String::from_utf8_lossy(&run.stderr)
    );
    let v = read_json(&out);
    let rows = |t: &str| v[t].as_array().expect("table").clone();
    Some(Tables {
        items: keyed(&rows("item_measures"), &ITEM_KEY),
        configs: keyed(&rows("config_measures"), &CONFIG_KEY),
        models: keyed(&rows("model_summary"), &MODEL_KEY),
        churn: keyed(&rows("churn_edges"), &EDGE_KEY),
        floor: keyed(&rows("replicate_floor"), &FLOOR_KEY),
        edges: keyed(&rows("replicate_edges"), &EDGE_KEY),
        stable: keyed(&rows("replicate_stable"), &MODEL_KEY),
    })
}

/// The rows the script must give, read off `report --json` and `--items-out`.
fn expected(input: &Path, opts: &[&str], dir: &Path) -> Tables {
    let items_out = dir.join("items.jsonl");
    let mut args = vec![
        "report".to_string(),
        input.display().to_string(),
        "--json".into(),
        "--boot".into(),
        "0".into(),
        "--no-sweep".into(),
        "--no-cache".into(),
        "--force".into(),
        "--items-out".into(),
        items_out.display().to_string(),
    ];
    args.extend(opts.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = frameaudit(&args);
    assert!(o.status.success(), "report: {}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).expect("report json");
    let mut models = Vec::new();
    let mut configs = Vec::new();
    let (mut floor, mut edges, mut stable) = (Vec::new(), Vec::new(), Vec::new());
    let mut churn = Vec::new();
    for a in report["analyses"].as_array().expect("analyses") {
        if a["task"] != "mcq" {
            continue;
        }
        for (name, x) in a["models"].as_object().expect("models") {
            let g = &x["grid"];
            let base = |extra: Value| {
                let mut v = json!({"protocol": a["protocol"], "task": "mcq", "scope": a["scope"], "model": name});
                v.as_object_mut()
                    .unwrap()
                    .extend(extra.as_object().unwrap().clone());
                v
            };
            let names = g["configs"].as_array().expect("configs");
            let variants = g["variants"].as_array().expect("variants");
            for (k, c) in names.iter().enumerate() {
                configs.push(base(json!({
                    "config": c, "config_index": k, "frames": g["frames"][k],
                    "budget": g["budgets"][k], "own_budget": g["own_budgets"][k],
                    "pixels": g["pixels"][k], "variant": variants.contains(c),
                    "is_top": *c == g["top"], "reference_pixels": g["reference_pixels"],
                    "correct_count": x["correct_counts"][k], "accuracy": x["accuracy"][k],
                })));
            }
            let cl = &x["classes"];
            let t = &x["text_overwrite"];
            let r = &x["replicates"];
            for (j, c) in x["churn"].as_array().expect("churn").iter().enumerate() {
                let mut v = base(c.clone());
                let o = v.as_object_mut().unwrap();
                for (from, to) in [("from", "from_config"), ("to", "to_config")] {
                    let name = o.remove(from).expect("an edge's configuration");
                    o.insert(to.into(), name);
                }
                o.insert("edge_index".into(), json!(j));
                o.insert("n".into(), x["n_items"].clone());
                churn.push(v);
            }
            noise_rows(
                r,
                &x["churn"],
                names,
                &base,
                (&mut floor, &mut edges, &mut stable),
            );
            models.push(base(json!({
                "n_items_candidate": g["n_items_candidate"], "n_items": x["n_items"],
                "n_configs": names.len(), "comparable_pairs": x["comparable_pairs"],
                "reference_pixels": g["reference_pixels"],
                "best_fixed_config": x["best_fixed"]["config"],
                "best_fixed_index": x["best_fixed"]["index"],
                "best_fixed_accuracy": x["best_fixed"]["accuracy"],
                "top_config": x["top"]["config"], "top_index": x["top"]["index"],
                "top_accuracy": x["top"]["accuracy"],
                "oracle_count": x["oracle_count"], "oracle_accuracy": x["oracle_accuracy"],
                "headroom": x["headroom"],
                "harmful_items": x["harmful_items"], "harmful_rate": x["harmful_rate"],
                "harmful_pairs": x["harmful_pairs"], "pairs_total": x["pairs_total"],
                "harmful_pair_rate": x["harmful_pair_rate"],
                "terminal_regressions": x["terminal_regressions"],
                "terminal_regression_rate": x["terminal_regression_rate"],
                "text_correct_items": t["text_correct_items"],
                "text_overwrite_items": t["items"], "text_overwrite_rate": t["rate"],
                "text_overwrite_conditional_rate": t["conditional_rate"],
                "always_correct": cl["always_correct"], "always_wrong": cl["always_wrong"],
                "monotonic_increasing": cl["monotonic_increasing"],
                "monotonic_decreasing": cl["monotonic_decreasing"],
                "oscillating": cl["oscillating"],
                "churn_wrong_to_correct": x["churn_totals"]["wrong_to_correct"],
                "churn_correct_to_wrong": x["churn_totals"]["correct_to_wrong"],
                "replicates_floor_all_negative_flip_floor": r["floor"]["all"]["negative_flip_floor"],
                "replicates_stable_stable_harmful_rate": r["stable"]["stable_harmful_rate"],
                "replicates_stable_lottery_rate": r["stable"]["lottery_rate"],
            })));
        }
    }
    let items: Vec<Value> = std::fs::read_to_string(&items_out)
        .expect("items-out")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("item line"))
        .filter(|v| v["task"] == "mcq")
        .collect();
    Tables {
        items: keyed(&items, &ITEM_KEY),
        configs: keyed(&configs, &CONFIG_KEY),
        models: keyed(&models, &MODEL_KEY),
        churn: keyed(&churn, &EDGE_KEY),
        floor: keyed(&floor, &FLOOR_KEY),
        edges: keyed(&edges, &EDGE_KEY),
        stable: keyed(&stable, &MODEL_KEY),
    }
}

/// The rows of the §16 tables for one model, read off its `replicates` block (none when it
/// is null) and its `churn` (the McNemar p and q of each edge).
fn noise_rows(
    r: &Value,
    churn: &Value,
    configs: &[Value],
    base: &dyn Fn(Value) -> Value,
    (floor, edges, stable): (&mut Vec<Value>, &mut Vec<Value>, &mut Vec<Value>),
) {
    if r.is_null() {
        return;
    }
    let counts = |f: &Value| {
        json!({"pairs": f["pairs"], "disagree": f["disagree"], "neg": f["neg"], "pos": f["pos"],
               "disagreement_rate": f["disagreement_rate"],
               "negative_flip_floor": f["negative_flip_floor"]})
    };
    let row = |level: &str, nuisance: Value, config: Value, index: Value, f: &Value| {
        let mut v = base(
            json!({"level": level, "nuisance": nuisance, "config": config,
                                "config_index": index}),
        );
        v.as_object_mut()
            .unwrap()
            .extend(counts(f).as_object().unwrap().clone());
        v
    };
    let fl = &r["floor"];
    floor.push(row(
        "all",
        Value::Null,
        Value::Null,
        Value::Null,
        &fl["all"],
    ));
    for (name, f) in fl["by_nuisance"].as_object().expect("by_nuisance") {
        floor.push(row("nuisance", json!(name), Value::Null, Value::Null, f));
    }
    let per = fl["per_config"].as_array().expect("per_config");
    assert_eq!(per.len(), configs.len(), "a floor per grid configuration");
    for (k, f) in per.iter().enumerate() {
        floor.push(row("config", Value::Null, configs[k].clone(), json!(k), f));
    }
    for (j, e) in r["edges"].as_array().expect("edges").iter().enumerate() {
        let c = &churn[j];
        assert_eq!((&c["from"], &c["to"]), (&e["from"], &e["to"]));
        edges.push(base(json!({
            "edge_index": j, "from_config": e["from"], "to_config": e["to"], "n": e["n"],
            "correct_to_wrong": e["correct_to_wrong"], "wrong_to_correct": e["wrong_to_correct"],
            "observed_nfr": e["observed_nfr"], "floor_nfr": e["floor_nfr"],
            "excess_nfr": e["excess_nfr"], "mcnemar_p": c["mcnemar_p"],
            "mcnemar_q": c["mcnemar_q"], "excess_p": e["excess_p"], "excess_q": e["excess_q"],
            "beyond_noise": e["beyond_noise"],
        })));
    }
    stable.push(base(r["stable"].clone()));
}

/// Every difference between two keyed tables (missing rows, extra rows, fields).
fn diff(table: &str, got: &BTreeMap<String, Value>, want: &BTreeMap<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, w) in want {
        match got.get(k) {
            None => out.push(format!("{table}: no row {k}")),
            Some(g) => {
                for d in json_diff(g, w, 1e-9) {
                    out.push(format!("{table} {k}: {d}"));
                }
            }
        }
    }
    for k in got.keys() {
        if !want.contains_key(k) {
            out.push(format!("{table}: an extra row {k}"));
        }
    }
    out
}

/// Checks the script against the report on `input` (what `report` reads) whose cells the
/// engine reads from `cells`; false when the engine is absent.
fn check(engine: &str, input: &Path, cells: &Path, opts: &[&str], dir: &Path) -> bool {
    check_rows(engine, input, cells, opts, dir).is_some()
}

/// [`check`], giving the number of rows of the §16 tables compared (`None` when the engine
/// is absent).
fn check_rows(
    engine: &str,
    input: &Path,
    cells: &Path,
    opts: &[&str],
    dir: &Path,
) -> Option<usize> {
    let want = expected(input, opts, dir);
    assert!(
        !want.models.is_empty(),
        "the report has no MCQ model: nothing would be checked"
    );
    let got = run_sql(engine, cells, opts, dir)?;
    let mut d = diff("model_summary", &got.models, &want.models);
    d.extend(diff("config_measures", &got.configs, &want.configs));
    d.extend(diff("item_measures", &got.items, &want.items));
    d.extend(diff("churn_edges", &got.churn, &want.churn));
    d.extend(diff("replicate_floor", &got.floor, &want.floor));
    d.extend(diff("replicate_edges", &got.edges, &want.edges));
    d.extend(diff("replicate_stable", &got.stable, &want.stable));
    assert!(
        d.is_empty(),
        "{engine} {opts:?} on {}: {} differences, the first:\n{}",
        input.display(),
        d.len(),
        d.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
    Some(want.floor.len() + want.edges.len() + want.stable.len())
}

/// A small deterministic generator (SplitMix64) for the random matrices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// A random response matrix as cells JSONL: several benchmarks, models and protocols,
/// cells missing at random, configurations a model ran on one benchmark only, a text-only
/// configuration, two configurations of equal budget, resolution variants, a fractional
/// budget, letters with surrounding Unicode whitespace and lower case, recorded `correct`
/// values, invalid cells, and intervention cells (never analysed).
fn random_cells(seed: u64) -> String {
    let mut r = Rng(seed);
    let p = 151_200u64;
    // (config, frames, budget, pixels)
    let pool: Vec<(&str, u64, Option<f64>, Option<u64>)> = vec![
        ("textonly", 0, None, None),
        ("8f", 8, None, Some(p)),
        ("16f", 16, None, Some(p)),
        ("16f-hr", 16, None, Some(2 * p)),
        ("32f", 32, None, Some(p)),
        ("32f-b", 32, None, Some(p)),
        ("32f-lr", 32, None, Some(p / 2)),
        ("48f", 48, Some(40.5), None),
        ("64f", 64, None, Some(p)),
    ];
    let benches = 1 + r.below(3) as usize;
    let models = 1 + r.below(3) as usize;
    let letters = ["A", "B", "C", "D"];
    let spaces = ["", " ", "\u{3000}", "\t", "\u{a0}"];
    let mut out = String::new();
    for proto in ["main", "cached", "intervention", "intervention:swap"] {
        if proto == "cached" && r.chance(0.5) {
            continue;
        }
        let configs: Vec<_> = pool.iter().filter(|_| r.chance(0.7)).cloned().collect();
        for b in 0..benches {
            let n_items = 3 + r.below(12);
            for m in 0..models {
                // A model may skip a configuration on one benchmark only.
                let skip = (r.chance(0.3)).then(|| r.below(configs.len().max(1) as u64) as usize);
                for i in 0..n_items {
                    let gold = letters[r.below(4) as usize];
                    for (ci, (c, frames, budget, pixels)) in configs.iter().enumerate() {
                        if Some(ci) == skip || r.chance(0.1) {
                            continue;
                        }
                        let mut cell = json!({
                            "model": format!("m{m}"), "benchmark": format!("b{b}"),
                            "item_id": format!("q{i:02}"), "config": c, "frames": frames,
                        });
                        let o = cell.as_object_mut().unwrap();
                        if proto != "main" {
                            o.insert("protocol".into(), json!(proto));
                        }
                        if let Some(bu) = budget {
                            o.insert("budget".into(), json!(bu));
                        }
                        if let Some(px) = pixels {
                            o.insert("pixels".into(), json!(px));
                        }
                        let right = r.chance(0.55);
                        let pred = if right {
                            gold
                        } else {
                            letters[r.below(4) as usize]
                        };
                        match r.below(10) {
                            0 => {
                                o.insert("correct".into(), json!(r.chance(0.5)));
                                o.insert("pred".into(), json!(pred));
                            }
                            1 => {
                                // Invalid: nothing to score it by.
                                o.insert("pred".into(), json!(pred));
                            }
                            2 => {
                                o.insert("pred".into(), Value::Null);
                                o.insert("gold".into(), json!(gold));
                            }
                            _ => {
                                let sp = spaces[r.below(spaces.len() as u64) as usize];
                                let pred = if r.chance(0.3) {
                                    pred.to_lowercase()
                                } else {
                                    pred.to_string()
                                };
                                o.insert("pred".into(), json!(format!("{sp}{pred}{sp}")));
                                o.insert("gold".into(), json!(gold));
                            }
                        }
                        out.push_str(&cell.to_string());
                        out.push('\n');
                    }
                }
            }
        }
    }
    out
}

/// `cells` with replicates added (docs/measures.md §16.1): some of every cell's replicates
/// r1 (rerun), p1 and p2 (phase) and o1 (order), intervention cells and invalid ones
/// included; answers flipped at times; invalid replicates (nothing to score them by); a
/// `blind` the measures must ignore; orphans (a model or an item with no canonical cell).
fn with_replicates(cells: &str, seed: u64) -> String {
    let mut r = Rng(seed ^ 0x5EED_0016);
    let nuisance = [
        ("r1", "rerun"),
        ("p1", "phase"),
        ("p2", "phase"),
        ("o1", "order"),
    ];
    let names: Vec<_> = nuisance.iter().filter(|_| r.chance(0.7)).collect();
    let rate = [0.4, 0.8, 1.0][r.below(3) as usize];
    let mut out = String::from(cells);
    for line in cells.lines() {
        let cell: Value = serde_json::from_str(line).expect("a generated cell");
        for (name, what) in &names {
            if !r.chance(rate) {
                continue;
            }
            let mut rep = cell.clone();
            let o = rep.as_object_mut().unwrap();
            o.insert("replicate".into(), json!(name));
            o.insert("nuisance".into(), json!(what));
            if r.chance(0.3) {
                match o.get("correct").and_then(Value::as_bool) {
                    Some(c) => {
                        o.insert("correct".into(), json!(!c));
                    }
                    None => {
                        let pred = ["A", "B", "C", "D"][r.below(4) as usize];
                        o.insert("pred".into(), json!(pred));
                    }
                }
            }
            if r.chance(0.05) {
                o.remove("gold");
                o.remove("correct");
            }
            if r.chance(0.1) {
                o.insert("blind".into(), json!("Z"));
            }
            if r.chance(0.03) {
                let ghost = format!("ghost-{}", cell["model"].as_str().unwrap_or_default());
                o.insert("model".into(), json!(ghost));
            } else if r.chance(0.03) {
                let ghost = format!("gone-{}", cell["item_id"].as_str().unwrap_or_default());
                o.insert("item_id".into(), json!(ghost));
            }
            out.push_str(&rep.to_string());
            out.push('\n');
        }
    }
    out
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

#[test]
fn duckdb_gives_the_reports_numbers_on_the_demo() {
    let dir = tmp();
    let demo = common::repo().join("fixtures/demo");
    check("duckdb", &demo, &demo.join("cells.jsonl"), &[], dir.path());
}

#[test]
fn duckdb_gives_the_reports_noise_floor_on_the_demo() {
    // The demo has rerun and phase replicates of every model; every nuisance, then phase
    // alone (a narrower floor, other p-values and q-values) and a looser alpha.
    let demo = common::repo().join("fixtures/demo");
    for opts in [
        &[][..],
        &["--nuisances", "phase"][..],
        &["--nuisances", "rerun", "--alpha", "0.9", "--no-zero-frame"][..],
    ] {
        let dir = tmp();
        let Some(rows) = check_rows("duckdb", &demo, &demo.join("cells.jsonl"), opts, dir.path())
        else {
            return;
        };
        // 3 models x 2 scopes, each a floor over all pairs, per nuisance, per configuration,
        // its edges and its stable items.
        assert!(rows >= 6 * 8, "{opts:?}: only {rows} rows of §16 compared");
    }
}

#[test]
fn duckdb_gives_the_reports_noise_floor_on_random_matrices_with_replicates() {
    let opt_sets: [&[&str]; 5] = [
        &[],
        &["--nuisances", "phase"],
        &["--nuisances", "rerun,order", "--alpha", "0.5"],
        &["--variant-budget", "zero", "--alpha", "1"],
        &["--configs", "8f,32f,64f", "--no-zero-frame"],
    ];
    let (mut checked, mut rows) = (0, 0);
    for seed in 1..=6u64 {
        let dir = tmp();
        let cells = dir.path().join("cells.jsonl");
        std::fs::write(&cells, with_replicates(&random_cells(seed), seed)).expect("write");
        for (j, opts) in opt_sets.iter().enumerate() {
            if !report_runs(&cells, opts) {
                continue;
            }
            let sub = dir.path().join(format!("o{j}"));
            std::fs::create_dir(&sub).expect("mkdir");
            let Some(n) = check_rows("duckdb", &cells, &cells, opts, &sub) else {
                return;
            };
            checked += 1;
            rows += n;
        }
    }
    eprintln!("compared {checked} runs, {rows} rows of the §16 tables");
    assert!(checked >= 20, "only {checked} runs compared");
    assert!(rows >= 500, "only {rows} rows of §16 compared");
}

#[test]
fn duckdb_gives_the_reports_numbers_on_random_matrices_under_every_option() {
    let opt_sets: [&[&str]; 6] = [
        &[],
        &["--variant-budget", "zero"],
        &["--no-zero-frame"],
        &["--reference-pixels", "none"],
        &["--reference-pixels", "302400", "--models", "m0,m1"],
        &["--configs", "8f,32f,64f"],
    ];
    let mut checked = 0;
    for seed in 1..=6u64 {
        let dir = tmp();
        let cells = dir.path().join("cells.jsonl");
        std::fs::write(&cells, random_cells(seed)).expect("write");
        for (j, opts) in opt_sets.iter().enumerate() {
            // A filter naming what a matrix lacks is refused by report; the SQL is only
            // compared where the report runs.
            if !report_runs(&cells, opts) {
                continue;
            }
            let sub = dir.path().join(format!("o{j}"));
            std::fs::create_dir(&sub).expect("mkdir");
            if !check("duckdb", &cells, &cells, opts, &sub) {
                return;
            }
            checked += 1;
        }
    }
    assert!(checked >= 24, "only {checked} runs compared");
}

fn report_runs(cells: &Path, opts: &[&str]) -> bool {
    let mut args = vec![
        "report",
        cells.to_str().unwrap(),
        "--json",
        "--boot",
        "0",
        "--no-cache",
    ];
    args.extend_from_slice(opts);
    let o = frameaudit(&args);
    o.status.success()
        && serde_json::from_slice::<Value>(&o.stdout).is_ok_and(|r| {
            r["analyses"].as_array().is_some_and(|a| {
                a.iter().any(|a| {
                    a["task"] == "mcq" && a["models"].as_object().is_some_and(|m| !m.is_empty())
                })
            })
        })
}

#[test]
fn duckdb_gives_the_reports_numbers_on_the_real_videomme_grid() {
    let Some(csv) = common::real_csv() else {
        return;
    };
    let dir = tmp();
    // The engine reads the grid as frameaudit writes it for engines: Parquet.
    let cells = dir.path().join("cells.parquet");
    let o = frameaudit(&[
        "cells",
        csv.to_str().unwrap(),
        "-o",
        cells.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "cells: {}", stderr(&o));
    for opts in [&[][..], &["--variant-budget", "zero"][..]] {
        let sub = dir.path().join(opts.len().to_string());
        std::fs::create_dir(&sub).expect("mkdir");
        check("duckdb", &csv, &cells, opts, &sub);
    }
}

#[test]
fn spark_runs_the_same_script_where_pyspark_is_installed() {
    // Spark's own run of its dialect: the shared queries and the few lines that differ
    // (literals, the ordered pattern, the result tables).
    // With replicates: the §16 steps (the series of terms, the running log sums, the
    // q-values' windows) run in Spark too, and give the report's numbers.
    let dir = tmp();
    let cells = dir.path().join("cells.jsonl");
    std::fs::write(&cells, with_replicates(&random_cells(3), 3)).expect("write");
    assert!(report_runs(&cells, &[]));
    if !has_java() {
        common::skip_note(format_args!("java is absent; skipping the Spark check"));
        return;
    }
    if let Some(rows) = check_rows(
        "spark",
        &cells,
        &cells,
        &["--variant-budget", "zero"],
        dir.path(),
    ) {
        assert!(rows >= 50, "only {rows} rows of §16 compared");
    }
}

fn has_java() -> bool {
    common::runs("java", &["-version"])
}

#[test]
fn the_script_refuses_joint_grids_and_keeps_names_inside_literals() {
    let o = frameaudit(&["sql", "--grid", "joint"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("per-model"), "{}", stderr(&o));
    // A quote, a backslash and a newline in a name stay inside its literal (and a comment).
    let name = "it's\\a\nname";
    let o = frameaudit(&["sql", "--models", name]);
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(
        s.contains("model IN (('it''s\\a' || chr(10) || 'name'))"),
        "{s}"
    );
    for line in s.lines().filter(|l| l.starts_with("--")) {
        assert!(
            !line.contains("name") || line.contains("it's\\a?name"),
            "{line}"
        );
    }
    let o = frameaudit(&["sql", "--dialect", "spark", "--models", name]);
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(s.contains("model IN ('it\\'s\\\\a\\u000Aname')"), "{s}");
}

/// A model name with an escape sequence, a BEL, a bidi override, a quote and a backslash
/// (the kind a shared dataset may hold): the script never prints them raw (it is read on a
/// terminal), and its literal still selects that model, in DuckDB and in Spark, with the
/// report's numbers.
#[test]
fn a_hostile_model_name_is_inert_in_the_script_and_still_selects_its_model() {
    let hostile = "m\u{1b}]0;X\u{7}\u{202e}'\\";
    let dir = tmp();
    let cells = dir.path().join("cells.jsonl");
    let text = random_cells(5).replace(
        "\"model\":\"m0\"",
        &format!("\"model\":{}", serde_json::json!(hostile)),
    );
    assert!(text.contains("\\u001b"), "the name is in the cells");
    std::fs::write(&cells, text).expect("write");
    for dialect in ["duckdb", "spark"] {
        let o = frameaudit(&["sql", "--dialect", dialect, "--models", hostile]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            !o.stdout
                .iter()
                .any(|&b| b == 0x1b || b == 0x07 || b == b'\r'),
            "a raw control character in the {dialect} script"
        );
        assert!(!String::from_utf8_lossy(&o.stdout).contains('\u{202e}'));
    }
    let opts = ["--models", hostile];
    assert!(check("duckdb", &cells, &cells, &opts, dir.path()));
    if has_java() {
        let sub = dir.path().join("spark");
        std::fs::create_dir(&sub).expect("mkdir");
        check("spark", &cells, &cells, &opts, &sub);
    } else {
        common::skip_note(format_args!("java is absent; skipping the Spark check"));
    }
}

#[test]
fn the_audit_queue_opens_from_the_cells_the_script_queued() {
    // The engine keeps the cells of the harmful items only; frameaudit reads that Parquet
    // and queues the same items with the same trajectories (docs/sql.md §4).
    let dir = tmp();
    let demo = common::repo().join("fixtures/demo");
    let cells = dir.path().join("cells.parquet");
    let o = frameaudit(&[
        "cells",
        demo.to_str().unwrap(),
        "-o",
        cells.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let queue = dir.path().join("queue.parquet");
    let after = dir.path().join("after.sql");
    std::fs::write(&after, format!(
        "COPY (SELECT c.* FROM cells c JOIN (SELECT DISTINCT model, benchmark, item_id FROM item_measures \
         WHERE has_harmful AND protocol = 'main') q ON c.model = q.model AND c.benchmark = q.benchmark \
         AND c.item_id = q.item_id) TO '{}' (FORMAT parquet);\n",
        queue.display()
    )).unwrap();
    let Some(t) = run_sql_then("duckdb", &cells, &[], dir.path(), Some(&after)) else {
        return;
    };
    let want: BTreeMap<String, (Value, Value)> = t
        .items
        .values()
        .filter(|r| r["has_harmful"] == true)
        .map(|r| {
            (
                key(r, &["model", "benchmark", "item_id"]),
                (r["pattern"].clone(), r["harmful_pairs"].clone()),
            )
        })
        .collect();
    assert!(want.len() > 10, "only {} queued", want.len());
    let o = frameaudit(&[
        "list",
        queue.to_str().unwrap(),
        "--kind",
        "harmful",
        "--format",
        "jsonl",
        "--no-cache",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got: BTreeMap<String, (Value, Value)> = common::stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["task"] == "mcq")
        .map(|r| {
            (
                key(&r, &["model", "benchmark", "item_id"]),
                (r["pattern"].clone(), r["harmful_pairs"].clone()),
            )
        })
        .collect();
    assert_eq!(got, want);
}
