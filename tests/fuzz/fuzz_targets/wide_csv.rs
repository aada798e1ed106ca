//! Wide tables: the input is split at the first NUL into the ground truth and the table;
//! never a panic.
#![no_main]

use frameaudit::core::import::Import;
use frameaudit::core::import::wide_csv::{WideOptions, import};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let (gold, table) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"question_id,answer\n1,A\n"[..], data),
    };
    let d = dir.path();
    let tables = d.join("tables");
    let ok = std::fs::create_dir_all(&tables).is_ok()
        && std::fs::write(d.join("gold.csv"), gold).is_ok()
        && std::fs::write(tables.join("M_predictions_wide.csv"), table).is_ok();
    if ok {
        let opts = WideOptions {
            gold: d.join("gold.csv"),
            gold_key: "question_id".into(),
            gold_col: "answer".into(),
            model: None,
            benchmark: None,
            id_col: None,
        };
        let mut imp = Import::default();
        let _ = import(&[tables], &opts, &mut imp, &|_| {});
        let _ = imp.summary();
    }
});
