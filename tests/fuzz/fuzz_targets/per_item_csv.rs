//! Per-item CSV: any bytes give a matrix or diagnostics, never a panic.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use frameaudit::core::load::per_item_csv::read_per_item_csv;
use frameaudit::core::matrix::MatrixBuilder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut b = MatrixBuilder::new();
    let file: Arc<Path> = b.add_file(Path::new("fuzz.csv"));
    if read_per_item_csv(data, Some(data.len() as u64), &mut b, &file).is_ok() {
        let _ = b.finish();
    }
});
