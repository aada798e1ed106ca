//! Taxonomy files: any text gives a taxonomy or an error, never a panic.
#![no_main]

use std::path::Path;

use frameaudit::core::taxonomy::Taxonomy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Taxonomy::parse(text, Path::new("fuzz.json"));
    }
});
