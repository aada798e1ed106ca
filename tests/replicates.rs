//! Replicate cells and the noise floor (docs/measures.md §16): the loaders' rules, the
//! canonical measures untouched by replicates, and the false-discovery rate of
//! `beyond_noise` on matrices where only the nuisance flips answers.

mod common;

use std::path::{Path, PathBuf};

use frameaudit::core::analysis::bootstrap::SplitMix64;
use frameaudit::core::analysis::params::Params;
use frameaudit::core::analysis::{Metrics, run};
use frameaudit::core::dataset::load_dataset;
use frameaudit::core::diag::LoadError;
use frameaudit::core::matrix::{CellInput, Gold, MatrixBuilder, ResponseMatrix, Task};
use serde_json::Value;

/// A scratch directory of its own for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "frameaudit-replicates-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The (line, field) of every error loading `path` gives, each message naming the file.
fn errors(path: &Path) -> Vec<(u64, String)> {
    let Err(LoadError::Rejected(d)) = load_dataset(path, None) else {
        panic!("{} should be rejected", path.display());
    };
    d.sorted()
        .iter()
        .map(|e| {
            assert_eq!(&*e.file, path, "{}", e.message);
            (e.line.expect("a line"), e.field.clone().expect("a field"))
        })
        .collect()
}

/// Every rule of §16.1, each broken once in one file: all are reported together, each at
/// its line and field.
#[test]
fn each_replicate_rule_is_an_error_at_its_line_and_field() {
    let dir = scratch("rules");
    let path = dir.join("cells.jsonl");
    let cell = |extra: &str| {
        format!(
            r#"{{"model":"M","item_id":"q1","config":"8f","frames":8,"gold":"A","pred":"A"{extra}}}"#
        )
    };
    let lines = [
        cell(r#","cluster":"v1""#),
        // Two clusters for one item.
        cell(r#","config":"16f","frames":16,"cluster":"v2""#)
            .replace(r#""config":"8f","frames":8,"#, ""),
        // A replicate without a nuisance.
        cell(r#","replicate":"r1""#),
        // A nuisance on a canonical cell.
        cell(r#","item_id":"q2","nuisance":"rerun""#).replace(r#""item_id":"q1","#, ""),
        cell(r#","replicate":"r2","nuisance":"rerun""#),
        // Another nuisance for replicate r2 of 8f (another model's).
        cell(r#","replicate":"r2","nuisance":"phase""#).replace(r#""model":"M""#, r#""model":"N""#),
        // A replicate name of the wrong JSON type.
        cell(r#","replicate":5,"nuisance":"rerun""#),
        // The key of line 5 again.
        cell(r#","replicate":"r2","nuisance":"rerun""#),
        // Frames that are not the configuration's.
        cell(r#","replicate":"r3","nuisance":"phase","frames":32"#).replace(r#""frames":8,"#, ""),
        // A replicate giving the item a third cluster.
        cell(r#","replicate":"r4","nuisance":"rerun","cluster":"v9""#),
        // An order that is no order of the options.
        cell(r#","replicate":"r5","nuisance":"order","order":[0,0]"#),
        // Null and "" are absent: a canonical cell of another item, valid.
        cell(r#","item_id":"q3","replicate":null,"nuisance":"","cluster":"""#)
            .replace(r#""item_id":"q1","#, ""),
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    let got = errors(&path);
    let want: Vec<(u64, String)> = [
        (2, "cluster"),
        (3, "nuisance"),
        (4, "nuisance"),
        (6, "nuisance"),
        (7, "replicate"),
        (8, "replicate"),
        (9, "frames"),
        (10, "cluster"),
        (11, "order"),
    ]
    .iter()
    .map(|&(l, f)| (l, f.to_string()))
    .collect();
    let mut got_sorted = got.clone();
    got_sorted.sort();
    assert_eq!(got_sorted, want, "{got:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The per-item CSV's optional columns: a replicate row is read as one (not a duplicate
/// of its canonical row), a row naming a nuisance without a replicate is refused.
#[test]
fn the_per_item_csv_reads_replicates_and_checks_them() {
    let dir = scratch("csv");
    let path = dir.join("per_item.csv");
    let header = "sample_id,model,split,config,frame_count,predicted_option,ground_truth_option,replicate,nuisance,cluster";
    let rows = [
        "q1,M,b,8f,8,A,A,,,v1",
        "q1,M,b,16f,16,B,A,,,v1",
        "q1,M,b,8f,8,B,A,r1,rerun,",
        "q1,M,b,16f,16,B,A,r1,rerun,",
        "q1,M,b,32f,32,B,A,r1,rerun,",
    ];
    std::fs::write(&path, format!("{header}\n{}\n", rows.join("\n"))).expect("write");
    let ds = load_dataset(&path, None).expect("loads");
    let r = &ds.matrix.replicates;
    assert_eq!((ds.matrix.stats.records, r.read, r.orphaned), (2, 3, 1));
    assert_eq!(r.cells.len(), 2);
    assert_eq!(r.cluster(0), Some("v1"));
    std::fs::write(&path, format!("{header}\nq1,M,b,8f,8,A,A,,rerun,\n")).expect("write");
    assert_eq!(errors(&path), [(2, "nuisance".to_string())]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A report as JSON with the replicate blocks and counts taken out.
fn canonical_json(m: &ResponseMatrix, params: &Params) -> (Value, Vec<Value>) {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                for k in [
                    "replicates",
                    "replicate_cells",
                    "replicates_orphaned",
                    "min_outcomes",
                    "stable_harmful",
                ] {
                    o.remove(k);
                }
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let r = run(m, params, None);
    let mut buf = Vec::new();
    r.write_json(m, &mut buf, false).expect("json");
    let mut json: Value = serde_json::from_slice(&buf).expect("valid");
    strip(&mut json);
    let mut items = Vec::new();
    r.write_items(m, &mut items).expect("items");
    let mut items: Vec<Value> = items
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("line"))
        .collect();
    items.iter_mut().for_each(strip);
    (json, items)
}

/// Adding replicates of every cell (flipping some answers, of every task and protocol,
/// and orphans) changes no number of §1-§15, under the default parameters, the joint
/// grid and the cluster bootstrap alike.
#[test]
fn replicates_change_no_canonical_number() {
    let dir = scratch("canonical");
    let text = std::fs::read_to_string(common::conformance("example_13_1.jsonl")).expect("read");
    let mut with = String::new();
    let mut added = 0;
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        with.push_str(line);
        with.push('\n');
        let v: Value = serde_json::from_str(line).expect("cell");
        let mut o = v.as_object().expect("object").clone();
        let (name, nuisance) = if i % 2 == 0 {
            ("r1", "rerun")
        } else {
            ("p1", "phase")
        };
        o.insert("replicate".into(), name.into());
        o.insert("nuisance".into(), nuisance.into());
        if i % 3 == 0 {
            o.insert("pred".into(), "Z".into());
            o.insert("correct".into(), Value::Null);
            o.insert("blind".into(), "Q".into());
        }
        with.push_str(&Value::Object(o.clone()).to_string());
        with.push('\n');
        // An orphan: a model with no canonical cell.
        o.insert("model".into(), "ghost".into());
        with.push_str(&Value::Object(o).to_string());
        with.push('\n');
        added += 2;
    }
    let plain = load_dataset(&common::conformance("example_13_1.jsonl"), None).expect("loads");
    let path = dir.join("with.jsonl");
    std::fs::write(&path, with).expect("write");
    let both = load_dataset(&path, None).expect("loads");
    assert_eq!(both.matrix.replicates.read, added);
    assert_eq!(both.matrix.replicates.orphaned, added / 2);
    assert_eq!(both.matrix.stats.records, plain.matrix.stats.records);
    for params in [
        Params::default(),
        Params {
            grid_mode: frameaudit::core::analysis::params::GridMode::Joint,
            ..Params::default()
        },
        Params {
            cluster_bootstrap: true,
            ..Params::default()
        },
    ] {
        let (a, ai) = canonical_json(&plain.matrix, &params);
        let (b, bi) = canonical_json(&both.matrix, &params);
        let diff = common::json_diff(&b, &a, 0.0);
        assert!(diff.is_empty(), "{diff:#?}");
        assert_eq!(ai, bi);
    }
    // And the replicates are there to be measured.
    let r = run(&both.matrix, &Params::default(), None);
    let with_floor = r
        .analyses
        .iter()
        .flat_map(|a| a.metrics.iter())
        .filter(|x| matches!(x, Metrics::Mcq(x) if x.replicates.is_some()))
        .count();
    assert!(with_floor > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A matrix of one model: `n` items, `k` configurations, each cell and its one replicate
/// drawn right with the item's own chance, so budgets change nothing but the nuisance
/// flips answers; `drop` lowers every chance at the top configuration by that much (a
/// real budget effect).
fn simulated(seed: u64, n: usize, k: usize, drop: f64) -> ResponseMatrix {
    let mut rng = SplitMix64::new(seed);
    let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut b = MatrixBuilder::new();
    b.add_file(Path::new("simulated.jsonl"));
    let configs: Vec<(String, u64)> = (0..k).map(|c| (format!("{}f", 4 << c), 4 << c)).collect();
    let items: Vec<String> = (0..n).map(|i| format!("q{i:04}")).collect();
    let mut line = 0;
    for item in &items {
        let chance = 0.2 + 0.6 * unit();
        for (c, (config, frames)) in configs.iter().enumerate() {
            let p = if c == k - 1 { chance - drop } else { chance };
            for replicate in [None, Some("r1")] {
                let right = unit() < p;
                line += 1;
                b.count_record();
                b.push(
                    &CellInput {
                        model: "M",
                        item_id: item,
                        benchmark: "sim",
                        config,
                        protocol: "main",
                        frames: *frames,
                        budget: *frames as f64,
                        pixels: None,
                        task: Task::Mcq,
                        pred: None,
                        gold: Gold::None,
                        correct: Some(right),
                        score: None,
                        confidence: None,
                        blind: None,
                        frame_idx: None,
                        source_tag: None,
                        protocol_note: None,
                        replicate,
                        nuisance: replicate.map(|_| "rerun"),
                        order: None,
                        cluster: None,
                    },
                    line,
                );
            }
        }
    }
    b.finish().expect("valid").0
}

/// (edges beyond noise, edges) over `matrices` simulated matrices.
fn beyond_noise(matrices: u64, drop: f64) -> (usize, usize) {
    let params = Params {
        bootstrap_b: 0,
        ..Params::default()
    };
    let (mut beyond, mut edges) = (0, 0);
    for seed in 0..matrices {
        let m = simulated(1000 + seed, 150, 4, drop);
        let r = run(&m, &params, None);
        // The `ALL` analysis of the single benchmark shares its results: count it once.
        let a = &r.analyses[0];
        for x in a.metrics.iter() {
            let Metrics::Mcq(x) = x else { continue };
            let rep = x.replicates.as_ref().expect("every cell has a replicate");
            edges += rep.edges.len();
            beyond += rep.edges.iter().filter(|e| e.beyond_noise).count();
        }
    }
    (beyond, edges)
}

/// 200 matrices where only the nuisance flips answers: the share of edges called beyond
/// noise stays at or below alpha, within three standard errors of a share of alpha. The
/// same simulation with a real drop at the top budget finds it on most matrices, so the
/// count is not low for want of power.
#[test]
fn beyond_noise_stays_within_alpha_when_only_the_nuisance_flips() {
    let alpha = Params::default().alpha;
    let (beyond, edges) = beyond_noise(200, 0.0);
    assert_eq!(edges, 200 * 3);
    let share = beyond as f64 / edges as f64;
    eprintln!("no budget effect: {beyond} of {edges} edges beyond noise");
    let bound = alpha + 3.0 * (alpha * (1.0 - alpha) / edges as f64).sqrt();
    assert!(
        share <= bound,
        "{beyond} of {edges} edges beyond noise ({share})"
    );
    let (found, edges) = beyond_noise(20, 0.35);
    eprintln!("a drop of 0.35 at the top: {found} of {edges} edges beyond noise");
    assert!(
        found >= 15,
        "a real drop was found on {found} of {edges} edges"
    );
}

/// `frameaudit cells` writes replicates back, as JSONL and as Parquet, and either file
/// reports as the worked example of §16 does.
#[test]
fn replicates_survive_cells_written_as_jsonl_and_parquet() {
    let dir = scratch("written");
    let input = common::conformance("example_16_1.jsonl");
    let want = common::read_json(&common::conformance("example_16_1.report.json"));
    for name in ["cells.jsonl", "cells.parquet"] {
        let out = dir.join(name);
        let o = common::frameaudit(&[
            "cells",
            input.to_str().expect("utf-8"),
            "-o",
            out.to_str().expect("utf-8"),
        ]);
        assert!(o.status.success(), "{}", common::stderr(&o));
        let o = common::frameaudit(&["report", "--json", out.to_str().expect("utf-8")]);
        assert!(o.status.success(), "{}", common::stderr(&o));
        let got: Value = serde_json::from_slice(&o.stdout).expect("json");
        let diff = common::json_diff(&got, &want, 1e-9);
        assert!(diff.is_empty(), "{name}: {diff:#?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bootstrap by cluster takes an item's cluster from its cells, and an item no cell
/// gives one from its video in items.jsonl (docs/measures.md §16.6): three items of one
/// video, one of another, one whose cell's cluster outranks its video and one with
/// neither make four clusters.
#[test]
fn the_cluster_bootstrap_takes_videos_from_items_jsonl() {
    let dir = scratch("videos");
    let mut cells = Vec::new();
    for (i, cluster) in ["", "", "", "", "\"cluster\":\"w\",", ""]
        .iter()
        .enumerate()
    {
        for (f, pred) in [(8, if i % 2 == 0 { "A" } else { "B" }), (16, "A")] {
            cells.push(format!(
                r#"{{"model":"M","benchmark":"b","item_id":"q{i}",{cluster}"config":"{f}f","frames":{f},"pred":"{pred}","gold":"A"}}"#
            ));
        }
    }
    std::fs::write(dir.join("cells.jsonl"), cells.join("\n")).expect("write");
    let items: Vec<String> = ["v1", "v1", "v2", "v1", "v9", ""]
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let video = if v.is_empty() {
                String::new()
            } else {
                format!(r#","video":"{v}""#)
            };
            format!(r#"{{"benchmark":"b","item_id":"q{i}","question":"?"{video}}}"#)
        })
        .collect();
    std::fs::write(dir.join("items.jsonl"), items.join("\n")).expect("write");
    let ds = load_dataset(&dir, None).expect("loads");
    let params = Params {
        cluster_bootstrap: true,
        ..Params::default()
    };
    let r = run(&ds.matrix, &params, None);
    let Metrics::Mcq(x) = &r.analyses[0].metrics[0] else {
        panic!("an MCQ analysis")
    };
    let b = x.bootstrap.as_ref().expect("bootstrap");
    // v1 (q0, q1, q3), v2 (q2), w (q4: its cell's, over its video v9), q5 alone.
    assert_eq!((b.cluster, b.clusters), (true, 4));
    let r = run(&ds.matrix, &Params::default(), None);
    let Metrics::Mcq(x) = &r.analyses[0].metrics[0] else {
        panic!("an MCQ analysis")
    };
    let b = x.bootstrap.as_ref().expect("bootstrap");
    assert_eq!((b.cluster, b.clusters), (false, 6));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The matrix cache holds the replicates and the clusters cells give: a dataset opened
/// from it reports as from its files, with and without the bootstrap by cluster; the items'
/// videos are read from items.jsonl again, not from the cache.
#[test]
fn replicates_and_clusters_survive_the_matrix_cache() {
    let dir = scratch("cache");
    let ds = dir.join("ds");
    std::fs::create_dir_all(&ds).expect("dir");
    std::fs::copy(
        common::conformance("example_16_1.jsonl"),
        ds.join("cells.jsonl"),
    )
    .expect("copy");
    // q3 and q4 of video v2 by their cells; items.jsonl puts q1 and q2 (v1 by their cells)
    // elsewhere, which the cells' clusters outrank.
    std::fs::write(
        ds.join("items.jsonl"),
        r#"{"benchmark":"toy-rep","item_id":"q1","question":"?","video":"x"}"#,
    )
    .expect("items");
    // The files must have settled before they are cached (two seconds).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let cache = dir.join("cache");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .arg("report")
            .arg(&ds)
            .arg("--json")
            .args(args)
            .env("FRAMEAUDIT_CACHE_DIR", &cache)
            .env("FRAMEAUDIT_CACHE_MIN_BYTES", "0")
            .env("FRAMEAUDIT_TIMINGS", "1")
            .output()
            .expect("run");
        assert!(out.status.success(), "{}", common::stderr(&out));
        let json: Value = serde_json::from_slice(&out.stdout).expect("json");
        (json, common::stderr(&out))
    };
    let (cold, err) = run(&[]);
    assert!(err.contains("write the matrix cache"), "{err}");
    let (warm, err) = run(&[]);
    assert!(err.contains("read the matrix cache"), "{err}");
    assert_eq!(cold, warm);
    let want = common::read_json(&common::conformance("example_16_1.report.json"));
    assert!(common::json_diff(&warm, &want, 1e-9).is_empty());
    let (warm, err) = run(&["--cluster-bootstrap", "--boot", "200"]);
    assert!(err.contains("read the matrix cache"), "{err}");
    let want = common::read_json(&common::conformance("example_16_1.cluster.report.json"));
    let diff = common::json_diff(&warm, &want, 1e-9);
    assert!(diff.is_empty(), "{diff:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}
