//! lmms-eval logs: the input is split at the first NUL into a results file and a samples
//! file (and is also read as an old `{task}.json`); never a panic.
#![no_main]

use frameaudit::core::import::Import;
use frameaudit::core::import::lmms_eval::{LmmsOptions, import};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let (results, samples) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"{\"config\": {\"model\": \"qwen2_vl\", \"model_args\": \"pretrained=m,max_num_frames=8\"}}"[..], data),
    };
    let d = dir.path();
    let ok = std::fs::write(d.join("20250101_000000_results.json"), results).is_ok()
        && std::fs::write(d.join("20250101_000000_samples_videomme.jsonl"), samples).is_ok()
        && std::fs::write(d.join("mvbench.json"), samples).is_ok();
    if ok {
        let mut imp = Import::default();
        let _ = import(
            &[d.to_path_buf()],
            &LmmsOptions::default(),
            &mut imp,
            &|_| {},
        );
        let _ = imp.summary();
    }
});
