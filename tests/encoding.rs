//! A text input in UTF-16 (Excel's "Unicode Text", Windows PowerShell's `>`) is refused by
//! its encoding, with the way to convert it, by every reader of CSV, TSV and cells files:
//! never read as text whose columns are all missing (issue 37 item 16).

mod common;

use std::path::{Path, PathBuf};

use common::{frameaudit, stderr};
use frameaudit::core::import::{Import, vlmevalkit, wide_csv};

fn fixtures(sub: &str) -> PathBuf {
    common::repo().join("fixtures/formats").join(sub)
}

/// `text` in UTF-16, little-endian with a byte-order mark, as Excel writes it.
fn utf16(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    for u in text.encode_utf16() {
        out.extend(u.to_le_bytes());
    }
    out
}

/// A fixture copied into `dir` in UTF-16.
fn converted(dir: &Path, fixture: &str) -> PathBuf {
    let from = fixtures(fixture);
    let text = std::fs::read_to_string(&from).expect("fixture");
    let to = dir.join(from.file_name().expect("name"));
    std::fs::write(&to, utf16(&text)).expect("write");
    to
}

/// The message that refuses a UTF-16 file.
fn refuses(text: &str) -> bool {
    text.contains("the file is UTF-16 (little-endian, by its byte-order mark), not UTF-8")
        && text.contains("iconv -f UTF-16 -t UTF-8")
}

#[test]
fn per_item_csv_and_cells_in_utf16_are_refused_by_the_commands() {
    let tmp = tempfile::tempdir().expect("tmp");
    let csv = tmp.path().join("per_item.csv");
    std::fs::write(
        &csv,
        utf16(
            "sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct,source_tag,protocol_note\r\n001-1,M,s,8f,8,,A,A,1,,\r\n",
        ),
    )
    .expect("write");
    let cells = tmp.path().join("cells.jsonl");
    std::fs::write(
        &cells,
        utf16("{\"model\":\"M\",\"item_id\":\"q\",\"config\":\"8f\",\"frames\":8,\"correct\":true}\r\n"),
    )
    .expect("write");
    for path in [&csv, &cells] {
        let p = path.to_str().expect("utf-8");
        for args in [&["validate", p][..], &["list", p, "--no-cache"]] {
            let out = frameaudit(args);
            // `validate` says what it found on standard output, the others on stderr.
            let err = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert!(!out.status.success(), "{args:?}: {err}");
            assert!(refuses(&err), "{args:?}: {err}");
            assert!(!err.contains("missing"), "{args:?}: {err}");
            assert!(err.contains("1 error"), "{args:?}: {err}");
        }
    }
}

#[test]
fn importers_refuse_utf16_tables_and_ground_truth() {
    let tmp = tempfile::tempdir().expect("tmp");
    // VLMEvalKit's TSV: the file is skipped, said why.
    let tsv = converted(
        tmp.path(),
        "vlmevalkit/mvbench/Qwen2-VL-7B-Instruct_MVBench_MP4_8frame.tsv",
    );
    let mut imp = Import::default();
    let _ = vlmevalkit::import(
        &[tsv],
        &vlmevalkit::VlmOptions::default(),
        &mut imp,
        &|_| {},
    );
    assert!(
        imp.skipped.iter().any(|(_, _, why)| refuses(why)),
        "{:#?}",
        imp.skipped
    );

    // A wide table: skipped, said why.
    let table = converted(
        tmp.path(),
        "wide-csv/Qwen2.5-VL-7B_V1_short_predictions_wide.csv",
    );
    let opts = wide_csv::WideOptions {
        gold: fixtures("wide-csv/videomme_gold.csv"),
        gold_key: "question_id".into(),
        gold_col: "answer".into(),
        ..Default::default()
    };
    let mut imp = Import::default();
    let _ = wide_csv::import(&[table], &opts, &mut imp, &|_| {});
    assert!(
        imp.skipped.iter().any(|(_, _, why)| refuses(why)),
        "{:#?}",
        imp.skipped
    );

    // The ground truth: the import stops, said why.
    let gold = converted(tmp.path(), "wide-csv/videomme_gold.csv");
    let opts = wide_csv::WideOptions { gold, ..opts };
    let mut imp = Import::default();
    let table = fixtures("wide-csv/Qwen2.5-VL-7B_V1_short_predictions_wide.csv");
    let e = wide_csv::import(&[table], &opts, &mut imp, &|_| {}).expect_err("no gold");
    assert!(refuses(&e.to_string()), "{e}");
}

/// A dataset folder's `items.jsonl` and `dataset.json` in UTF-16 are refused by their
/// encoding: the items file gave one "malformed JSON" error a line, dataset.json a bare
/// "stream did not contain valid UTF-8". A dataset.json in another 8-bit encoding is said
/// at its line.
#[test]
fn a_dataset_s_items_and_description_in_utf16_are_refused_by_name() {
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("d");
    std::fs::create_dir(&data).expect("dir");
    std::fs::write(
        data.join("cells.jsonl"),
        "{\"model\":\"M\",\"item_id\":\"q\",\"config\":\"8f\",\"frames\":8,\"correct\":true}\n",
    )
    .expect("cells");
    let d = data.to_str().expect("utf-8");
    for (file, text) in [
        (
            "items.jsonl",
            "{\"item_id\":\"q\",\"question\":\"Why?\"}\n{\"item_id\":\"r\"}\n",
        ),
        ("dataset.json", "{\"name\":\"d\"}\n"),
    ] {
        let path = data.join(file);
        std::fs::write(&path, utf16(text)).expect("write");
        let out = frameaudit(&["validate", d]);
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(!out.status.success(), "{file}: {said}");
        assert!(refuses(&said), "{file}: {said}");
        assert!(
            said.contains(&format!("{file}: error: the file is UTF-16")),
            "{file}: {said}"
        );
        assert!(said.contains("1 error"), "{file}: {said}");
        // The refusal is the one thing said: not a warning for each item it left bare.
        assert!(said.contains("0 warnings"), "{file}: {said}");
        std::fs::remove_file(&path).expect("rm");
    }
    std::fs::write(data.join("dataset.json"), b"{\n\"name\": \"caf\xe9\"\n}\n").expect("latin-1");
    let out = frameaudit(&["validate", d]);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        said.contains("dataset.json:2: error: not valid UTF-8 (byte 13 of the line)"),
        "{said}"
    );
}
