//! A long text in a Parquet dictionary costs its length once, not once a row (issue 37,
//! item 12): the bytes allocated while reading such a file are counted (a binary of its
//! own, so no other test's allocations are). Speed: `cargo bench --bench parquet_dict`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use frameaudit::core::load::read_cell_file;
use frameaudit::core::matrix::MatrixBuilder;
use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// The system allocator, counting the bytes it is asked for.
struct Counting;

static ALLOCATED: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Text columns, then `gold` (DuckDB's JSON type), `frames` and `correct`.
const TEXT: [&str; 8] = [
    "model",
    "item_id",
    "benchmark",
    "config",
    "task",
    "pred",
    "blind",
    "source_tag",
];

/// Writes `rows` cells of 4 models, 2 configurations and multiple-choice and open items
/// whose prediction, blind answer, source tag and gold are `long` on every row (each one
/// entry of its column's dictionary; the gold a JSON string, or a list of it and a short
/// reference on open items); multiple-choice cells have a verdict, open ones are scored.
fn write(path: &Path, rows: usize, long: &str) {
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
    fields.push(leaf("correct", Physical::BOOLEAN, None));
    let schema = Type::group_type_builder("cells")
        .with_fields(fields)
        .build()
        .expect("schema");
    // Room in the dictionary for the long texts, as DuckDB leaves it.
    let props = WriterProperties::builder()
        .set_dictionary_page_size_limit(4 * long.len() + (1 << 20))
        .build();
    let file = std::fs::File::create(path).expect("create");
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).expect("writer");
    let open = |r: usize| r % 16 >= 8;
    let json = serde_json::to_string(long).expect("json");
    let list = serde_json::to_string(&[long, "a red square"]).expect("json");
    let value = |c: &str, r: usize| -> ByteArray {
        match c {
            "model" => format!("m{}", r % 4).as_str().into(),
            "item_id" => format!("q{}", r / 8).as_str().into(),
            "benchmark" | "task" => if open(r) { "open" } else { "mcq" }.into(),
            "config" => ["textonly", "8f"][(r / 4) % 2].into(),
            "pred" | "blind" | "source_tag" => long.into(),
            _ if open(r) => list.as_str().into(),
            _ => json.as_str().into(),
        }
    };
    let mut rg = w.next_row_group().expect("row group");
    let mut at = 0;
    while let Some(mut col) = rg.next_column().expect("column") {
        let defs = vec![1i16; rows];
        let ok = if at <= TEXT.len() {
            let name = TEXT.get(at).copied().unwrap_or("gold");
            let vals: Vec<ByteArray> = (0..rows).map(|r| value(name, r)).collect();
            col.typed::<ByteArrayType>()
                .write_batch(&vals, Some(&defs), None)
        } else if at == TEXT.len() + 1 {
            let vals: Vec<i64> = (0..rows).map(|r| [0, 8][(r / 4) % 2]).collect();
            col.typed::<Int64Type>()
                .write_batch(&vals, Some(&defs), None)
        } else {
            let defs: Vec<i16> = (0..rows).map(|r| i16::from(!open(r))).collect();
            let vals = vec![true; rows / 2];
            col.typed::<BoolType>()
                .write_batch(&vals, Some(&defs), None)
        };
        ok.expect("write");
        col.close().expect("close column");
        at += 1;
    }
    rg.close().expect("close row group");
    w.close().expect("close");
}

#[test]
fn a_long_dictionary_text_costs_its_length_once_not_once_a_row() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("cells.parquet");
    let (rows, len) = (256, 100_000);
    let long = "Lorem ipsum Dolor sit amet ".repeat(len / 27 + 1)[..len].to_string();
    write(&path, rows, &long);
    let before = ALLOCATED.load(Ordering::Relaxed);
    let mut b = MatrixBuilder::new();
    read_cell_file(&path, None, &mut b).expect("read");
    let (m, diags) = b.finish().expect("valid cells");
    let contradictions = m.contradictions();
    let bytes = ALLOCATED.load(Ordering::Relaxed) - before;
    assert_eq!((m.n_cells(), diags.error_count()), (rows, 0));
    assert!(contradictions.is_empty());
    // The long text is decoded, parsed, interned and normalised in each column it is in,
    // a few copies each however many rows hold it (about 65 in all, from 64 to 2048
    // rows); once a row (normalising each prediction, blind answer and gold, scoring each
    // open cell) was some 6000 copies at 256 rows.
    let limit = 100 * len as u64;
    assert!(
        bytes < limit,
        "{bytes} bytes allocated to read {rows} rows of texts of {len} bytes (limit {limit})"
    );
}
