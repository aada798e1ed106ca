//! Long texts of a Parquet dictionary: `cargo bench --bench parquet_dict [-- ROWS [BYTES
//! [DIR]]]` (default 20 000 rows, 2 000 000 bytes; DIR keeps the files, to time another
//! build on them).
//!
//! It writes cells whose prediction is one long text on every row (one entry of its
//! column's dictionary) and whose gold is a column of the JSON type, DuckDB's for a gold of
//! strings and lists: that text (as a JSON string) on multiple-choice rows, a list of
//! references on open ones; then the same cells with a one-letter text. It times
//! `frameaudit validate` and `frameaudit report --json --boot 0` on each. A dictionary
//! entry read once, the long file costs about what the short one does; a text read once a
//! row cost its length a row (issue 37: 136 s to validate 3 MB of file; here 46 s at 2 000
//! rows). To compare two builds, time `frameaudit validate DIR/long.parquet --no-cache`
//! with each.
//!
//! Figures are printed; nothing is asserted (speed is measured, not tested).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// The columns, in order: text ones (JSON for `gold`) and `frames`.
const TEXT: [&str; 6] = ["model", "item_id", "benchmark", "config", "task", "pred"];

/// Writes `rows` cells whose prediction is `text`, and whose gold is `text` as JSON on
/// multiple-choice items and a list on open ones, as one row group.
fn write(path: &Path, rows: usize, text: &str) {
    let leaf = |name: &str, physical, logical| {
        Arc::new(
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .expect("leaf"),
        )
    };
    let mut fields: Vec<_> = TEXT
        .iter()
        .map(|n| leaf(n, Physical::BYTE_ARRAY, Some(LogicalType::String)))
        .collect();
    fields.push(leaf("gold", Physical::BYTE_ARRAY, Some(LogicalType::Json)));
    fields.push(leaf("frames", Physical::INT64, None));
    let schema = Type::group_type_builder("cells")
        .with_fields(fields)
        .build()
        .expect("schema");
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        // Room for the long text in the dictionary, as DuckDB leaves it.
        .set_dictionary_page_size_limit(text.len() + (1 << 20))
        .build();
    let file = std::fs::File::create(path).expect("create");
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).expect("writer");
    let open = |r: usize| (r / 10).is_multiple_of(3);
    let long = Bytes::from(text.to_string());
    let json = Bytes::from(serde_json::to_string(text).expect("json"));
    let list = Bytes::from_static(br#"["a red square", "red square"]"#);
    let value = |c: &str, r: usize| -> ByteArray {
        match c {
            "model" => format!("m{}", r % 5).as_str().into(),
            "item_id" => format!("q{}", r / 10).as_str().into(),
            "benchmark" | "task" => if open(r) { "open" } else { "mcq" }.into(),
            "config" => ["textonly", "8f"][(r / 5) % 2].into(),
            "pred" => long.clone().into(),
            _ if open(r) => list.clone().into(),
            _ => json.clone().into(),
        }
    };
    let mut rg = w.next_row_group().expect("row group");
    let mut at = 0;
    while let Some(mut col) = rg.next_column().expect("column") {
        for part in (0..rows).collect::<Vec<_>>().chunks(4096) {
            let defs = vec![1i16; part.len()];
            let ok = if at < TEXT.len() + 1 {
                let name = TEXT.get(at).copied().unwrap_or("gold");
                let vals: Vec<ByteArray> = part.iter().map(|&r| value(name, r)).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&vals, Some(&defs), None)
            } else {
                let vals: Vec<i64> = part.iter().map(|&r| [0, 8][(r / 5) % 2]).collect();
                col.typed::<Int64Type>()
                    .write_batch(&vals, Some(&defs), None)
            };
            ok.expect("write");
        }
        col.close().expect("close column");
        at += 1;
    }
    rg.close().expect("close row group");
    w.close().expect("close");
}

/// The wall time of `frameaudit ARGS`, its output written to `out`.
fn time(args: &[&str], out: &Path) -> f64 {
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
        .args(args)
        .output()
        .expect("run frameaudit");
    let secs = t.elapsed().as_secs_f64();
    std::fs::write(out, &o.stdout).expect("write output");
    assert!(
        o.status.success() || o.status.code() == Some(1),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    secs
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rows: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let bytes: usize = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = args.get(2).map_or(tmp.path(), Path::new);
    std::fs::create_dir_all(dir).expect("mkdir");
    let words = "Lorem ipsum dolor sit amet ".repeat(bytes / 27 + 1);
    println!("{rows} cells, a prediction and a JSON gold of one text on every row");
    println!(
        "{:>12} {:>10} {:>12} {:>12}",
        "text bytes", "file KiB", "validate s", "report s"
    );
    for (name, text) in [("short", "A"), ("long", &words[..bytes])] {
        let path = dir.join(format!("{name}.parquet"));
        write(&path, rows, text);
        let p = path.to_str().expect("utf-8 path");
        let out = dir.join(format!("{name}.out"));
        let validate = time(&["validate", p, "--no-cache"], &out);
        let report = time(&["report", p, "--json", "--boot", "0", "--no-cache"], &out);
        let kib = std::fs::metadata(&path).map_or(0, |m| m.len()) / 1024;
        println!(
            "{:>12} {kib:>10} {validate:>12.3} {report:>12.3}",
            text.len()
        );
    }
}
