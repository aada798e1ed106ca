//! VLMEvalKit prediction files: the input as a tsv, a json and an xlsx; never a panic.
#![no_main]

use frameaudit::core::import::Import;
use frameaudit::core::import::vlmevalkit::{VlmOptions, import};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let d = dir.path();
    let ok = [
        "M_Video-MME_8frame.tsv",
        "M_Video-MME_16frame.json",
        "M_MVBench_8frame.xlsx",
    ]
    .iter()
    .all(|name| std::fs::write(d.join(name), data).is_ok());
    if ok {
        let mut imp = Import::default();
        let _ = import(
            &[d.to_path_buf()],
            &VlmOptions::default(),
            &mut imp,
            &|_| {},
        );
        let _ = imp.summary();
    }
});
