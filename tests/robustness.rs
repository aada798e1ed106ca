//! Bad input never panics: every reader of data files, fed arbitrary bytes and arbitrary
//! valid-looking JSON, returns a value or an error that names the file (and, for a bad
//! record, its line). Property tests with a modest number of cases, so CI stays quick.

use std::path::{Path, PathBuf};

use frameaudit::core::audit::merged::read_annotated;
use frameaudit::core::audit::read_audit;
use frameaudit::core::dataset::load_dataset;
use frameaudit::core::import::Import;
use frameaudit::core::import::lmms_eval::{self, LmmsOptions};
use frameaudit::core::import::vlmevalkit::{self, VlmOptions};
use frameaudit::core::import::wide_csv::{self, WideOptions};
use frameaudit::core::taxonomy::Taxonomy;
use proptest::prelude::*;
use serde_json::{Value, json};

/// 128 cases per property, or `PROPTEST_CASES` (e.g. 10000 for a longer search).
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(128),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Writes `bytes` to `name` in a fresh directory.
fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

/// A JSON value of any kind, nested a little.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::from),
        Just(json!("\u{1b}]52;c;AAAA\u{7}")),
        Just(json!(-0.0)),
        Just(json!(1e308)),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A cell-like object: the fields of a cell, each with a value of any kind or a plausible one.
fn cell_like() -> impl Strategy<Value = Value> {
    let fields = [
        "model",
        "item_id",
        "config",
        "frames",
        "benchmark",
        "budget",
        "pixels",
        "protocol",
        "task",
        "pred",
        "gold",
        "correct",
        "score",
        "confidence",
        "blind",
        "frame_idx",
    ];
    prop::collection::vec((0..fields.len(), any_json(), any::<bool>()), 0..16).prop_map(
        move |picks| {
            let mut o = serde_json::Map::new();
            for (f, v, plausible) in picks {
                let name = fields[f];
                let v = if plausible {
                    match name {
                        "frames" | "pixels" => json!(8),
                        "correct" => json!(true),
                        "task" => json!("mcq"),
                        "frame_idx" => json!([0, 4]),
                        _ => json!("A"),
                    }
                } else {
                    v
                };
                o.insert(name.to_string(), v);
            }
            Value::Object(o)
        },
    )
}

fn lines(values: &[Value]) -> Vec<u8> {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}

/// An error message names the file; a rejected record names its line.
fn names_file(err: &str, name: &str) {
    assert!(err.contains(name), "the error does not name {name}: {err}");
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn cells_jsonl_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let dir = tempfile::tempdir().expect("tmp");
        let path = file(dir.path(), "cells.jsonl", &bytes);
        if let Err(e) = load_dataset(&path, None) {
            names_file(&e.to_string(), "cells.jsonl");
        }
    }

    #[test]
    fn cells_jsonl_valid_looking(cells in prop::collection::vec(cell_like(), 1..12)) {
        let dir = tempfile::tempdir().expect("tmp");
        let path = file(dir.path(), "cells.jsonl", &lines(&cells));
        if let Err(e) = load_dataset(&path, None) {
            let text = e.to_string();
            names_file(&text, "cells.jsonl");
            prop_assert!(text.contains("cells.jsonl:") || text.contains("holds no cells"), "{}", text);
        }
    }

    #[test]
    fn per_item_csv_bytes(body in prop::collection::vec(any::<u8>(), 0..400)) {
        let dir = tempfile::tempdir().expect("tmp");
        let mut bytes = b"sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct,source_tag,protocol_note\n".to_vec();
        bytes.extend(body);
        let path = file(dir.path(), "per_item.csv", &bytes);
        if let Err(e) = load_dataset(&path, None) {
            names_file(&e.to_string(), "per_item.csv");
        }
    }

    #[test]
    fn audit_files_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let dir = tempfile::tempdir().expect("tmp");
        let path = file(dir.path(), "a.audit.jsonl", &bytes);
        if let Err(e) = read_audit(&path) {
            names_file(&e.to_string(), "a.audit.jsonl");
        }
        if let Err(e) = read_annotated(std::slice::from_ref(&path)) {
            names_file(&e.to_string(), "a.audit.jsonl");
        }
    }

    #[test]
    fn audit_files_valid_looking(events in prop::collection::vec(any_json(), 0..8), header in any_json()) {
        let dir = tempfile::tempdir().expect("tmp");
        let good = json!({"schema": "frameaudit/audit@1", "dataset": {"name": "d", "fingerprint": "f"},
            "annotator": "a", "taxonomy": {"id": "t", "version": 1}, "created_at": "now"});
        for head in [good, header] {
            let mut all = vec![head];
            all.extend(events.iter().cloned());
            let path = file(dir.path(), "b.audit.jsonl", &lines(&all));
            match read_audit(&path) {
                Ok(r) => for w in &r.warnings {
                    prop_assert!(w.contains("b.audit.jsonl:"), "{}", w);
                },
                Err(e) => names_file(&e.to_string(), "b.audit.jsonl"),
            }
        }
    }

    #[test]
    fn taxonomy_files(text in ".{0,200}", v in any_json()) {
        let path = Path::new("tax.json");
        for t in [text, v.to_string()] {
            if let Err(e) = Taxonomy::parse(&t, path) {
                names_file(&e.to_string(), "tax.json");
            }
        }
    }

    #[test]
    fn lmms_eval_logs(samples in prop::collection::vec(any_json(), 0..6), results in any_json(), raw in prop::collection::vec(any::<u8>(), 0..200)) {
        let dir = tempfile::tempdir().expect("tmp");
        file(dir.path(), "20250101_000000_results.json", results.to_string().as_bytes());
        file(dir.path(), "20250101_000000_samples_videomme.jsonl", &lines(&samples));
        file(dir.path(), "20250101_000001_results.json", br#"{"config": {"model": "qwen2_vl", "model_args": "pretrained=m,max_num_frames=8"}}"#);
        file(dir.path(), "20250101_000001_samples_mvbench_x.jsonl", &raw);
        file(dir.path(), "videomme.json", &raw);
        let mut imp = Import::default();
        if let Err(e) = lmms_eval::import(&[dir.path().to_path_buf()], &LmmsOptions::default(), &mut imp, &|_| {}) {
            prop_assert!(e.to_string().contains(".json"), "{}", e);
        }
        let _ = imp.summary();
    }

    #[test]
    fn vlmevalkit_files(raw in prop::collection::vec(any::<u8>(), 0..300), rows in prop::collection::vec(any_json(), 0..5)) {
        let dir = tempfile::tempdir().expect("tmp");
        file(dir.path(), "M_Video-MME_8frame.tsv", &raw);
        file(dir.path(), "M_Video-MME_16frame.json", Value::from(rows).to_string().as_bytes());
        file(dir.path(), "M_Video-MME_32frame.xlsx", &raw);
        let mut imp = Import::default();
        let _ = vlmevalkit::import(&[dir.path().to_path_buf()], &VlmOptions::default(), &mut imp, &|_| {});
        let _ = imp.summary();
        for (file, _, _) in &imp.skipped {
            prop_assert!(file.starts_with(dir.path()));
        }
    }

    #[test]
    fn wide_tables(gold in prop::collection::vec(any::<u8>(), 0..200), table in prop::collection::vec(any::<u8>(), 0..300)) {
        let dir = tempfile::tempdir().expect("tmp");
        let mut g = b"question_id,answer\n".to_vec();
        g.extend(gold);
        let gold_path = file(dir.path(), "gold.csv", &g);
        let mut t = b"question_id,8f,16f\n".to_vec();
        t.extend(table);
        let tables = dir.path().join("tables");
        std::fs::create_dir_all(&tables).expect("mkdir");
        file(&tables, "M_predictions_wide.csv", &t);
        let opts = WideOptions {
            gold: gold_path,
            gold_key: "question_id".into(),
            gold_col: "answer".into(),
            model: None,
            benchmark: None,
            id_col: None,
        };
        let mut imp = Import::default();
        if let Err(e) = wide_csv::import(&[tables], &opts, &mut imp, &|_| {}) {
            prop_assert!(e.to_string().contains(".csv"), "{}", e);
        }
        let _ = imp.summary();
    }
}
