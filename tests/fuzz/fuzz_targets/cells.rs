//! Cells JSONL: any bytes give a matrix or diagnostics, never a panic.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use frameaudit::core::load::cells::read_cells;
use frameaudit::core::matrix::MatrixBuilder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut b = MatrixBuilder::new();
    let file: Arc<Path> = b.add_file(Path::new("fuzz.jsonl"));
    if read_cells(data, Some(data.len() as u64), &mut b, &file).is_ok() {
        let _ = b.finish();
    }
});
