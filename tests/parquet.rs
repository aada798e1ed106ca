//! Parquet in and out (docs/formats.md §7): what frameaudit writes, pyarrow and DuckDB read
//! as it is; cells read back from Parquet give the same report as the same cells as JSONL;
//! a Parquet file of another writer reads the same, and bad rows are named as bad lines are.

mod common;

use std::path::Path;
use std::process::Command;

use common::{frameaudit, stderr};
use serde_json::Value;

fn report(input: &Path) -> Value {
    let o = frameaudit(&[
        "report",
        input.to_str().unwrap(),
        "--json",
        "--boot",
        "100",
        "--no-cache",
    ]);
    assert!(
        o.status.success(),
        "report {}: {}",
        input.display(),
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout).expect("json")
}

/// The two inputs give the same report, every number exactly.
fn same_report(a: &Path, b: &Path) {
    let d = common::json_diff(&report(a), &report(b), 0.0);
    assert!(
        d.is_empty(),
        "{} and {} differ:\n{}",
        a.display(),
        b.display(),
        d.join("\n")
    );
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect()
}

/// A JSONL record and a pyarrow row agree: every key of the record has its value in the
/// row (numbers by value), and the row's other columns are null.
fn same_record(row: &Value, rec: &Value) -> Result<(), String> {
    let (row, rec) = (row.as_object().unwrap(), rec.as_object().unwrap());
    for (k, v) in row {
        let want = rec.get(k).unwrap_or(&Value::Null);
        let eq = match (v, want) {
            (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
            _ => v == want,
        };
        if !eq {
            return Err(format!("{k}: parquet {v}, jsonl {want}"));
        }
    }
    for k in rec.keys() {
        if !row.contains_key(k) {
            return Err(format!("no column {k}"));
        }
    }
    Ok(())
}

#[test]
fn cells_written_as_parquet_read_back_to_the_same_report_and_pyarrow_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let demo = common::repo().join("fixtures/demo");
    let pq = dir.path().join("cells.parquet");
    let o = frameaudit(&["cells", demo.to_str().unwrap(), "-o", pq.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Every line of the demo, canonical cells and replicates alike.
    let lines = jsonl(&demo.join("cells.jsonl")).len();
    assert!(
        stderr(&o).contains(&format!("wrote {lines} cells")),
        "{}",
        stderr(&o)
    );
    same_report(&pq, &demo.join("cells.jsonl"));
    // A dataset directory may hold cells.parquet in place of cells.jsonl.
    let ds = dir.path().join("ds");
    std::fs::create_dir(&ds).unwrap();
    for f in ["dataset.json", "items.jsonl"] {
        std::fs::copy(demo.join(f), ds.join(f)).unwrap();
    }
    std::fs::copy(&pq, ds.join("cells.parquet")).unwrap();
    same_report(&ds, &demo);
    // pyarrow reads every column of the cells format, one row per cell, values as written.
    let Some((cols, rows)) = common::pyarrow_rows(&pq, dir.path()) else {
        return;
    };
    for c in [
        "model",
        "item_id",
        "benchmark",
        "config",
        "frames",
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
    ] {
        assert!(cols.iter().any(|x| x == c), "no column {c} in {cols:?}");
    }
    let lines = jsonl(&demo.join("cells.jsonl"));
    assert_eq!(rows.len(), lines.len());
    for (r, l) in rows.iter().zip(&lines) {
        for k in [
            "model",
            "item_id",
            "config",
            "pred",
            "gold",
            "confidence",
            "frame_idx",
        ] {
            let want = l.get(k).unwrap_or(&Value::Null);
            // Several references travel in gold_list (docs/formats.md §7).
            let got = if k == "gold" && want.is_array() {
                &r["gold_list"]
            } else {
                &r[k]
            };
            let eq = match (got, want) {
                (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
                _ => got == want,
            };
            assert!(eq, "{k}: parquet {got}, jsonl {want}");
        }
    }
}

#[test]
fn the_real_grid_as_parquet_gives_the_csvs_report() {
    let Some(csv) = common::real_csv() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pq = dir.path().join("grid.parquet");
    let o = frameaudit(&["cells", csv.to_str().unwrap(), "-o", pq.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    same_report(&pq, &csv);
}

fn duckdb(sql: &str) -> bool {
    let o = Command::new("python3")
        .args(["-c", &format!("import duckdb\nduckdb.sql({sql:?})")])
        .output();
    match o {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            let e = String::from_utf8_lossy(&o.stderr);
            assert!(e.contains("No module named"), "duckdb: {e}");
            common::skip_note(format_args!("duckdb is absent; skipping the DuckDB check"));
            false
        }
        Err(_) => false,
    }
}

#[test]
fn parquet_another_writer_made_reads_the_same_and_zstd_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let demo = common::repo().join("fixtures/demo");
    let pq = dir.path().join("cells.parquet");
    assert!(
        frameaudit(&["cells", demo.to_str().unwrap(), "-o", pq.to_str().unwrap()])
            .status
            .success()
    );
    let other = dir.path().join("duck.parquet");
    let zstd = dir.path().join("zstd.parquet");
    // DuckDB's own writer: 32-bit integers, columns reordered, a column (shown only) left out.
    if !duckdb(&format!(
        "COPY (SELECT * EXCLUDE (frames, pixels, source_tag), CAST(frames AS INTEGER) AS frames, CAST(pixels AS INTEGER) AS pixels FROM '{}') TO '{}' (FORMAT parquet)",
        pq.display(),
        other.display()
    )) {
        return;
    }
    same_report(&other, &demo.join("cells.jsonl"));
    assert!(duckdb(&format!(
        "COPY (SELECT * FROM '{}') TO '{}' (FORMAT parquet, COMPRESSION zstd)",
        pq.display(),
        zstd.display()
    )));
    let o = frameaudit(&["report", zstd.to_str().unwrap(), "--no-cache"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("zstd.parquet") && e.contains("ZSTD") && e.contains("Snappy"),
        "{e}"
    );
}

#[test]
fn bad_rows_of_a_parquet_file_are_all_named_by_row_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.parquet");
    let ok = duckdb(&format!(
        "COPY (SELECT * FROM (VALUES ('M', 'q1', '8f', 8, 'A', 'A'), (NULL, 'q2', '8f', 8, 'A', 'A'), ('M', 'q3', '8f', -2, 'A', 'A')) t(model, item_id, config, frames, pred, gold)) TO '{}' (FORMAT parquet)",
        bad.display()
    ));
    if !ok {
        return;
    }
    let o = frameaudit(&["validate", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = format!("{}{}", common::stdout(&o), stderr(&o));
    assert!(out.contains("bad.parquet:2: error: field `model`"), "{out}");
    assert!(
        out.contains("bad.parquet:3: error: field `frames`"),
        "{out}"
    );
    // Not a Parquet file at all.
    let junk = dir.path().join("junk.parquet");
    std::fs::write(&junk, b"not parquet").unwrap();
    let o = frameaudit(&["validate", junk.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("junk.parquet"), "{}", stderr(&o));
}

#[test]
fn per_item_rows_as_parquet_hold_the_jsonl_rows() {
    let dir = tempfile::tempdir().unwrap();
    let demo = common::repo().join("fixtures/demo");
    let (a, b) = (
        dir.path().join("items.jsonl"),
        dir.path().join("items.parquet"),
    );
    for out in [&a, &b] {
        let o = frameaudit(&[
            "report",
            demo.to_str().unwrap(),
            "--boot",
            "0",
            "--items-out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let Some((cols, rows)) = common::pyarrow_rows(&b, dir.path()) else {
        return;
    };
    assert_eq!(
        &cols[..6],
        ["protocol", "task", "scope", "model", "benchmark", "item_id"]
    );
    let lines = jsonl(&a);
    assert_eq!(rows.len(), lines.len());
    assert!(
        lines.iter().any(|l| l["task"] == "open"),
        "the demo has open items: the list column is exercised"
    );
    for (r, l) in rows.iter().zip(&lines) {
        same_record(r, l).unwrap_or_else(|e| panic!("{l}: {e}"));
    }
}

#[test]
fn cells_never_writes_over_its_input_nor_an_existing_file_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let demo = common::repo().join("fixtures/demo");
    let copy = dir.path().join("cells.jsonl");
    std::fs::copy(demo.join("cells.jsonl"), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let o = frameaudit(&[
        "cells",
        copy.to_str().unwrap(),
        "-o",
        copy.to_str().unwrap(),
        "--force",
    ]);
    assert!(!o.status.success(), "wrote over its input");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    let out = dir.path().join("out.parquet");
    std::fs::write(&out, b"keep").unwrap();
    let o = frameaudit(&["cells", copy.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    let o = frameaudit(&[
        "cells",
        copy.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    same_report(&out, &copy);
}

#[test]
fn rows_read_in_parallel_keep_their_file_numbers() {
    // 400 000 rows read by two workers, in several row groups and in one (cut in a piece
    // per worker, the second skipping to its first row): bad rows in either worker's part,
    // on both sides of the cut, are named by their row in the file.
    let dir = tempfile::tempdir().unwrap();
    for group in [100_000, 1_000_000] {
        let bad = dir.path().join(format!("many{group}.parquet"));
        if !duckdb(&format!(
            "COPY (SELECT CASE WHEN i IN (5, 200000, 200001, 300000) THEN NULL ELSE 'M' END AS model, 'q' || i AS item_id, '8f' AS config, 8 AS frames, 'A' AS pred, 'A' AS gold FROM range(1, 400001) t(i)) TO '{}' (FORMAT parquet, ROW_GROUP_SIZE {group})",
            bad.display()
        )) {
            return;
        }
        let o = frameaudit(&["validate", bad.to_str().unwrap(), "--no-cache"]);
        let out = common::stdout(&o);
        for row in [5, 200000, 200001, 300000] {
            assert!(
                out.contains(&format!("many{group}.parquet:{row}: error: field `model`")),
                "{out}"
            );
        }
        assert!(out.contains("4 errors"), "{out}");
    }
}

#[test]
fn lists_and_nulls_cross_the_reading_batches_intact() {
    // 70 000 cells in one row group, read in batches and in two pieces (the second
    // skipping to its first row): frame lists of every length (none, empty, long), open
    // items with several references, absent confidences, scattered so that batches and
    // the pieces start inside runs of each.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("cells.jsonl");
    let mut text = String::new();
    for i in 0..70_000u64 {
        let item = i / 3;
        let frames = 8 << (i % 3);
        let mut cell = serde_json::json!({
            "model": format!("m{}", i % 7),
            "item_id": format!("q{item}"),
            "config": format!("{frames}f"),
            "frames": frames,
        });
        let o = cell.as_object_mut().unwrap();
        if item % 5 == 0 {
            o.insert("task".into(), "open".into());
            o.insert("benchmark".into(), "captions".into());
            let refs = (0..(item % 4))
                .map(|r| format!("ref {r}"))
                .collect::<Vec<_>>();
            o.insert("gold".into(), refs.into());
            o.insert("score".into(), ((i % 11) as f64 / 10.0).into());
        } else {
            o.insert("pred".into(), ["A", "B"][(i % 2) as usize].into());
            o.insert("gold".into(), "A".into());
        }
        if i % 13 != 0 {
            o.insert("confidence".into(), ((i % 100) as f64 / 100.0).into());
        }
        match i % 17 {
            0 => {}
            1 => {
                o.insert("frame_idx".into(), Value::Array(Vec::new()));
            }
            n => {
                let idx: Vec<u64> = (0..n * 3).map(|k| k * 7 + i % 5).collect();
                o.insert("frame_idx".into(), idx.into());
            }
        }
        text.push_str(&cell.to_string());
        text.push('\n');
    }
    std::fs::write(&src, text).unwrap();
    let pq = dir.path().join("cells.parquet");
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    for (from, to) in [(&src, &pq), (&src, &a), (&pq, &b)] {
        let o = frameaudit(&["cells", from.to_str().unwrap(), "-o", to.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (a, b) = (jsonl(&a), jsonl(&b));
    assert_eq!(a.len(), 70_000);
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "cell {i}");
    }
    same_report(&pq, &src);
}

/// The demo's cells with every field of the cells format given somewhere: pixels above
/// 2^31 (an unsigned 32-bit column holds them, a signed one does not), frame lists, MCQ
/// verdicts, open scores with fractions, and `gold` a string on some rows and a list on
/// others.
fn cells_of_every_field(dir: &Path) -> std::path::PathBuf {
    let mut text = String::new();
    let demo = jsonl(&common::repo().join("fixtures/demo/cells.jsonl"));
    for (i, mut cell) in demo.into_iter().enumerate() {
        let c = cell.as_object_mut().unwrap();
        if c.get("pixels").is_some_and(|p| !p.is_null()) {
            c.insert("pixels".into(), 3_000_000_000u64.into());
        }
        let frames = c["frames"].as_u64().unwrap();
        if i % 5 == 0 && frames > 0 {
            let idx: Vec<u64> = (0..frames).map(|k| k * 13).collect();
            c.insert("frame_idx".into(), idx.into());
        }
        if c["task"] == "mcq" && i % 7 == 3 {
            let right = c.get("pred") == c.get("gold");
            c.insert("correct".into(), right.into());
        }
        if c["task"] == "open" && i % 4 == 1 {
            c.insert("score".into(), [50.0, 62.5][i % 2].into());
        }
        text.push_str(&cell.to_string());
        text.push('\n');
    }
    assert!(text.contains("\"gold\":[") && text.contains("\"gold\":\"A\""));
    let path = dir.join("cells.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn cells_duckdb_pyarrow_and_polars_write_give_the_jsonls_report() {
    // Each writer's own types for the same cells (tests/sql/cells_to_parquet.py): DuckDB's
    // JSON type for a `gold` of strings and lists, unsigned and narrow integers, decimals
    // (as integers and as fixed-length bytes), dictionary, large and view strings, enums,
    // lists of unsigned integers.
    let dir = tempfile::tempdir().unwrap();
    let cells = cells_of_every_field(dir.path());
    let want = report(&cells);
    let script = common::repo().join("tests/sql/cells_to_parquet.py");
    for writer in [
        "duckdb",
        "duckdb-narrow",
        "pyarrow",
        "pyarrow-json",
        "polars",
    ] {
        let pq = dir.path().join(format!("{writer}.parquet"));
        let o = Command::new("python3")
            .arg(&script)
            .args([writer, cells.to_str().unwrap(), pq.to_str().unwrap()])
            .output()
            .expect("python3");
        if o.status.code() == Some(3) {
            common::skip_note(format_args!(
                "the Python package of {writer} is absent; skipping its check"
            ));
            continue;
        }
        assert!(
            o.status.success(),
            "{writer}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let d = common::json_diff(&report(&pq), &want, 0.0);
        assert!(d.is_empty(), "{writer}:\n{}", d.join("\n"));
    }
}

#[test]
fn json_text_that_is_not_json_is_named_by_row_and_a_date_column_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("json.parquet");
    // pyarrow's JSON type keeps whatever text it is given.
    let o = Command::new("python3")
        .args([
            "-c",
            r#"
import sys
try:
    import pyarrow as pa, pyarrow.parquet as pq
except ImportError:
    sys.exit(3)
gold = pa.array(['"A"', '{bad', '["x"', '["x", "y"]'], pa.json_())
t = pa.table({"model": ["M"] * 4, "item_id": ["q1", "q2", "q3", "q4"], "config": ["8f"] * 4,
              "frames": [8] * 4, "pred": ["A"] * 4, "task": ["mcq"] * 3 + ["open"],
              "benchmark": ["b"] * 3 + ["captions"], "gold": gold})
pq.write_table(t, sys.argv[1])
"#,
            bad.to_str().unwrap(),
        ])
        .output()
        .expect("python3");
    if o.status.code() == Some(3) {
        common::skip_note(format_args!("pyarrow is absent; skipping the JSON check"));
    } else {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = frameaudit(&["validate", bad.to_str().unwrap(), "--no-cache"]);
        assert_eq!(o.status.code(), Some(1));
        let out = format!("{}{}", common::stdout(&o), stderr(&o));
        for row in [2, 3] {
            assert!(
                out.contains(&format!("json.parquet:{row}: error: field `gold`"))
                    && out.contains("is not JSON"),
                "{out}"
            );
        }
        assert!(out.contains("2 errors"), "{out}");
    }
    // A date is no field of a cell: the file is refused, naming the column, not read as
    // the day number it is stored as.
    let date = dir.path().join("date.parquet");
    if !duckdb(&format!(
        "COPY (SELECT 'M' AS model, 'q1' AS item_id, '8f' AS config, DATE '2020-01-01' AS frames) TO '{}' (FORMAT parquet)",
        date.display()
    )) {
        return;
    }
    let o = frameaudit(&["validate", date.to_str().unwrap(), "--no-cache"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("date.parquet") && e.contains("column frames holds dates"),
        "{e}"
    );
}
