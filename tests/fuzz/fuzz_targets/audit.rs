//! Audit files and merged audits: any bytes replay (with warnings) or are refused with the
//! file named, never a panic.
#![no_main]

use frameaudit::core::audit::merged::read_annotated;
use frameaudit::core::audit::read_audit;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("fuzz.audit.jsonl");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let _ = read_audit(&path);
    let _ = read_annotated(std::slice::from_ref(&path));
});
