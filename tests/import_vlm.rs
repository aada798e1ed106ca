//! The VLMEvalKit and wide-table importers on the fixtures of `fixtures/formats/` (written
//! by `tests/reference/make_vlm_fixtures.py`): every cell, item and configuration they give,
//! what they skip and why, and the binary's `import` followed by `validate` and `report`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{frameaudit, stderr};
use frameaudit::core::import::{Import, vlmevalkit, wide_csv};
use serde_json::Value;

fn fixtures(sub: &str) -> PathBuf {
    common::repo().join("fixtures/formats").join(sub)
}

/// The lines of a JSON Lines file.
fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// Cells by (model, config, item): (pred, gold, correct, frames).
type Cells = BTreeMap<(String, String, String), (Option<String>, String, bool, u64)>;

/// The canonical cells of a dataset (replicates aside).
fn cells(dir: &Path) -> Cells {
    jsonl(&dir.join("cells.jsonl"))
        .into_iter()
        .filter(|c| c.get("replicate").is_none())
        .map(|c| {
            let s = |k: &str| c[k].as_str().expect(k).to_string();
            (
                (s("model"), s("config"), s("item_id")),
                (
                    c["pred"].as_str().map(String::from),
                    s("gold"),
                    c["correct"].as_bool().expect("correct"),
                    c["frames"].as_u64().expect("frames"),
                ),
            )
        })
        .collect()
}

/// Imports with the VLMEvalKit importer and writes the dataset into a temporary folder.
fn vlm(paths: &[PathBuf], opts: &vlmevalkit::VlmOptions) -> (Import, tempfile::TempDir) {
    let mut imp = Import::default();
    vlmevalkit::import(paths, opts, &mut imp, &|_| {}).expect("import");
    let out = tempfile::tempdir().expect("tmp");
    imp.write(out.path(), "t").expect("write");
    (imp, out)
}

/// The skipped records as (file name, row, reason).
fn skipped(imp: &Import) -> Vec<(String, Option<u64>, String)> {
    imp.skipped
        .iter()
        .map(|(f, row, why)| {
            let name = f.file_name().expect("name").to_string_lossy().into_owned();
            (name, *row, why.clone())
        })
        .collect()
}

/// Checks one run's cells: `preds[i]` for item `i`, against the Video-MME golds.
fn check_run(cells: &Cells, model: &str, config: &str, frames: u64, preds: [Option<&str>; 6]) {
    const GOLD: [&str; 6] = ["B", "C", "B", "A", "D", "A"];
    for (i, pred) in preds.iter().enumerate() {
        // VLMEvalKit's row i of Video-MME is question i % 3 + 1 of video i / 3 + 1.
        let id = format!("{:03}-{}", i / 3 + 1, i % 3 + 1);
        let key = (model.to_string(), config.to_string(), id);
        let got = cells.get(&key).unwrap_or_else(|| panic!("no cell {key:?}"));
        let want = (
            pred.map(String::from),
            GOLD[i].to_string(),
            *pred == Some(GOLD[i]),
            frames,
        );
        assert_eq!(got, &want, "{key:?}");
    }
}

const QWEN: &str = "Qwen2-VL-7B-Instruct";
const LLAVA: &str = "llava_onevision_qwen2_7b_ov";

#[test]
fn vlmevalkit_files_of_every_format_and_name() {
    let (imp, out) = vlm(
        &[fixtures("vlmevalkit/videomme")],
        &vlmevalkit::VlmOptions::default(),
    );
    let c = cells(out.path());
    assert_eq!(c.len(), 30);
    // xlsx, current name; "The answer is C." → C; an empty prediction is no answer.
    check_run(
        &c,
        QWEN,
        "8f",
        8,
        [Some("B"), Some("C"), Some("A"), Some("A"), None, Some("C")],
    );
    // tsv with a quoted prediction holding a newline and a tab.
    check_run(
        &c,
        QWEN,
        "64f",
        64,
        [
            Some("B"),
            Some("C"),
            Some("B"),
            Some("B"),
            Some("D"),
            Some("A"),
        ],
    );
    // xlsx, older name (_nopack); "(A)" → A; VLMEvalKit's failure message names no option.
    check_run(
        &c,
        LLAVA,
        "8f",
        8,
        [Some("A"), Some("C"), Some("B"), Some("A"), Some("D"), None],
    );
    // JSON list of rows, candidates as a real list.
    check_run(
        &c,
        LLAVA,
        "64f",
        64,
        [
            Some("B"),
            Some("C"),
            Some("B"),
            Some("A"),
            Some("D"),
            Some("B"),
        ],
    );
    // JSON {column: {row: value}}; fps runs count one minute of video.
    check_run(
        &c,
        LLAVA,
        "1fps",
        60,
        [
            Some("B"),
            Some("C"),
            Some("B"),
            Some("A"),
            Some("A"),
            Some("A"),
        ],
    );
    // Video-MME's items are the benchmark's own, as lmms-eval names them.
    let first = &jsonl(&out.path().join("cells.jsonl"))[0];
    assert_eq!(first["benchmark"], "videomme");
    assert_eq!(
        first["source_tag"],
        "vlmevalkit:Qwen2-VL-7B-Instruct_Video-MME_64frame.tsv"
    );

    let items = jsonl(&out.path().join("items.jsonl"));
    assert_eq!(items.len(), 6);
    assert_eq!(
        items[2],
        serde_json::json!({
            "benchmark": "videomme", "item_id": "001-3", "question": "Where does the scene take place?",
            "options": ["A. a kitchen", "B. Tom's garage", "C. a street", "D. a park"],
            "gold": "B", "video": "fFjv93ACGo8", "category": "Knowledge",
            "task_type": "Spatial Perception"
        })
    );

    // Each run's rule from its model's class: both sample the video themselves
    // (VIDEO_LLM), Qwen through qwen_vl_utils, LLaVA-OneVision one frame a second up to N.
    let ds = common::read_json(&out.path().join("dataset.json"));
    let runs: Vec<String> = ds["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {} {}",
                r["model"], r["benchmark"], r["config"], r["provenance"], r["rule"]
            )
        })
        .collect();
    assert_eq!(
        runs,
        [
            r#""Qwen2-VL-7B-Instruct" "videomme" "64f" "reproduced" {"cap":"even_below","kind":"qwen_nframes","linspace":"fma","n":64}"#,
            r#""Qwen2-VL-7B-Instruct" "videomme" "8f" "reproduced" {"cap":"even_below","kind":"qwen_nframes","linspace":"fma","n":8}"#,
            // VLMEvalKit refuses fps mode for this class: no frames to show.
            r#""llava_onevision_qwen2_7b_ov" "videomme" "1fps" "reproduced" null"#,
            r#""llava_onevision_qwen2_7b_ov" "videomme" "64f" "reproduced" {"force_sample":false,"kind":"llava_stride","n":64,"rate":1.0}"#,
            r#""llava_onevision_qwen2_7b_ov" "videomme" "8f" "reproduced" {"force_sample":false,"kind":"llava_stride","n":8,"rate":1.0}"#,
        ]
    );

    let skips = skipped(&imp);
    let tsv = "Qwen2-VL-7B-Instruct_Video-MME_64frame.tsv";
    assert_eq!(skips.len(), 4, "{skips:?}");
    assert!(skips.contains(&(
        tsv.into(),
        Some(9),
        format!("{tsv}: 3 fields where the header has 10")
    )));
    assert!(skips.contains(&(tsv.into(), Some(10), format!("{tsv}: no index"))));
    assert!(skips.iter().any(|(f, row, why)| f == "summary.json"
        && row.is_none()
        && why.contains("no frame budget")));
    assert!(skips.iter().any(|(f, _, why)| f
        == "Qwen2-VL-7B-Instruct_Video-MME_8frame_rating.json"
        && why.contains("evaluation output")));
    assert_eq!(imp.summary().duplicates, 0);
    let warnings = imp.warnings.join("\n");
    assert!(
        warnings.contains("configuration 1fps") && warnings.contains("60 frames"),
        "{warnings}"
    );
    assert!(
        warnings.contains("_8frame_nopack.xlsx: 1 prediction(s) name no option"),
        "{warnings}"
    );
}

#[test]
fn mvbench_answers_given_as_option_text() {
    let (imp, out) = vlm(
        &[fixtures("vlmevalkit/mvbench")],
        &vlmevalkit::VlmOptions::default(),
    );
    let c = cells(out.path());
    let get = |id: &str| c[&(QWEN.to_string(), "8f".to_string(), id.to_string())].clone();
    // "(B) The man stands up." → B; "5" is the text of option C; "The answer is (C) right"
    // → C against the reference "left" (A); the option text without its period → B.
    assert_eq!(
        get("action_antonym_0"),
        (Some("B".into()), "B".into(), true, 8)
    );
    assert_eq!(
        get("action_count_1"),
        (Some("C".into()), "C".into(), true, 8)
    );
    assert_eq!(
        get("object_shuffle_2"),
        (Some("C".into()), "A".into(), false, 8)
    );
    assert_eq!(
        get("scene_transition_3"),
        (Some("B".into()), "B".into(), true, 8)
    );
    assert_eq!(c.len(), 4);
    let items = jsonl(&out.path().join("items.jsonl"));
    assert_eq!(
        items[0]["options"],
        serde_json::json!([
            "A. The man sits down.",
            "B. The man stands up.",
            "C. not sure"
        ])
    );
    assert_eq!(items[0]["benchmark"], "MVBench_MP4");
    // Qwen2-VL samples the video itself (VIDEO_LLM): qwen_vl_utils, not MVBench's sampler.
    let ds = common::read_json(&out.path().join("dataset.json"));
    assert_eq!(ds["runs"][0]["benchmark"], "MVBench_MP4");
    assert_eq!(ds["runs"][0]["rule"]["kind"], "qwen_nframes");
    assert_eq!(ds["runs"][0]["provenance"], "reproduced");
    let tsv = "Qwen2-VL-7B-Instruct_MVBench_MP4_8frame.tsv";
    assert_eq!(
        skipped(&imp),
        [(
            tsv.to_string(),
            Some(6),
            format!("{tsv}: the answer is neither an option letter nor an option's text")
        )]
    );
}

#[test]
fn each_run_keeps_its_own_rule_on_each_dataset() {
    let (imp, out) = vlm(
        &[
            fixtures("vlmevalkit/mvbench"),
            fixtures("vlmevalkit/videomme"),
        ],
        &vlmevalkit::VlmOptions::default(),
    );
    let ds = common::read_json(&out.path().join("dataset.json"));
    // The rule belongs to (model, benchmark, configuration), not to the label `8f`.
    let runs: Vec<(String, String, String, String)> = ds["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (
                s("model"),
                s("benchmark"),
                s("config"),
                r["rule"]["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        runs.contains(&(
            QWEN.into(),
            "MVBench_MP4".into(),
            "8f".into(),
            "qwen_nframes".into()
        )),
        "{runs:?}"
    );
    assert!(
        runs.contains(&(
            QWEN.into(),
            "videomme".into(),
            "8f".into(),
            "qwen_nframes".into()
        )),
        "{runs:?}"
    );
    assert!(
        runs.contains(&(
            LLAVA.into(),
            "videomme".into(),
            "8f".into(),
            "llava_stride".into()
        )),
        "{runs:?}"
    );
    assert!(
        !imp.warnings
            .iter()
            .any(|w| w.contains("holds one policy per configuration")),
        "{:?}",
        imp.warnings
    );
    // One run per model and configuration, whatever the datasets.
    assert_eq!(imp.summary().runs, 5);
    assert_eq!(imp.summary().items, 10);
}

/// The same predictions reached through a link, or copied into another run folder, count
/// once; a file of other predictions for the same model, dataset and budget, in an older
/// run folder, is a re-run (issue 39): the path that sorts last stays canonical, the other
/// gives replicates `rerun-1` of nuisance `rerun`.
#[test]
fn a_linked_file_counts_once_and_copies_keep_the_last_path() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = dir.path().join(QWEN);
    let src = fixtures("vlmevalkit/videomme/Qwen2-VL-7B-Instruct");
    let name = "Qwen2-VL-7B-Instruct_Video-MME_8frame.xlsx";
    for run in ["T20250101_G0", "T20250202_G0"] {
        std::fs::create_dir_all(model.join(run)).expect("mkdir");
        std::fs::copy(src.join(name), model.join(run).join(name)).expect("copy");
    }
    // A different file for the same run, in an older run folder.
    std::fs::create_dir_all(model.join("T20241231_G0")).expect("mkdir");
    std::fs::copy(
        src.join("Qwen2-VL-7B-Instruct_Video-MME_64frame.tsv"),
        model.join("T20241231_G0/Qwen2-VL-7B-Instruct_Video-MME_8frame.tsv"),
    )
    .expect("copy");
    #[cfg(unix)]
    std::os::unix::fs::symlink(model.join("T20250202_G0").join(name), model.join(name))
        .expect("link");
    let (imp, out) = vlm(
        &[dir.path().to_path_buf()],
        &vlmevalkit::VlmOptions::default(),
    );
    assert_eq!(imp.summary().runs, 1);
    let c = cells(out.path());
    check_run(
        &c,
        QWEN,
        "8f",
        8,
        [Some("B"), Some("C"), Some("A"), Some("A"), None, Some("C")],
    );
    let skips = skipped(&imp);
    // The link is the same file as its target: not a skip. The copy is; the re-run is
    // read, so its two bad rows are skipped.
    assert_eq!(skips.len(), 3, "{skips:?}");
    assert_eq!(
        skips
            .iter()
            .filter(|(f, row, _)| f.ends_with(".tsv") && row.is_some())
            .count(),
        2,
        "{skips:?}"
    );
    assert!(
        skips
            .iter()
            .any(|(f, _, why)| f == name && why.contains("the same predictions as"))
    );
    assert_eq!(imp.reruns.len(), 1, "{:?}", imp.reruns);
    let r = &imp.reruns[0];
    assert!(
        r.file
            .ends_with("T20241231_G0/Qwen2-VL-7B-Instruct_Video-MME_8frame.tsv")
    );
    assert_eq!((r.replicate.as_str(), r.config.as_str()), ("rerun-1", "8f"));
    assert_eq!(imp.summary().replicates, 6);
    let reps: Vec<Value> = jsonl(&out.path().join("cells.jsonl"))
        .into_iter()
        .filter(|c| c.get("replicate").is_some())
        .collect();
    assert_eq!(reps.len(), 6);
    assert!(
        reps.iter()
            .all(|c| c["replicate"] == "rerun-1" && c["nuisance"] == "rerun")
    );
    assert!(!imp.warnings.iter().any(|w| w.contains("both hold model")));
}

/// Through the binary: a VLMEvalKit work dir holding two runs of one model, dataset and
/// budget imports the latest as canonical and the older as replicate `rerun-1`, which the
/// report's noise floor counts.
#[test]
fn binary_imports_an_older_vlmevalkit_run_as_a_rerun() {
    let tmp = tempfile::tempdir().expect("tmp");
    let model = tmp.path().join("work").join(QWEN);
    let src = fixtures("vlmevalkit/videomme/Qwen2-VL-7B-Instruct");
    std::fs::create_dir_all(model.join("T20250101_G0")).expect("mkdir");
    std::fs::create_dir_all(model.join("T20250202_G0")).expect("mkdir");
    // The older run answered as the 64-frame file does; the latest as the 8-frame one.
    std::fs::copy(
        src.join("Qwen2-VL-7B-Instruct_Video-MME_64frame.tsv"),
        model.join("T20250101_G0/Qwen2-VL-7B-Instruct_Video-MME_8frame.tsv"),
    )
    .expect("copy");
    let name = "Qwen2-VL-7B-Instruct_Video-MME_8frame.xlsx";
    std::fs::copy(src.join(name), model.join("T20250202_G0").join(name)).expect("copy");
    std::fs::copy(
        src.join("Qwen2-VL-7B-Instruct_Video-MME_64frame.tsv"),
        model.join("T20250202_G0/Qwen2-VL-7B-Instruct_Video-MME_64frame.tsv"),
    )
    .expect("copy");
    let out = tmp.path().join("ds");
    let o = frameaudit(&[
        "import",
        "vlmevalkit",
        &tmp.path().join("work").display().to_string(),
        "-o",
        &out.display().to_string(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "2 runs, 1 model, 2 configurations, 6 items, 12 cells, 6 replicate cells of 1 re-run"
        ),
        "{err}"
    );
    assert!(
        err.contains("T20250101_G0/Qwen2-VL-7B-Instruct_Video-MME_8frame.tsv holds model \"Qwen2-VL-7B-Instruct\" under configuration \"8f\" again")
            && err.contains("imported as replicate rerun-1 (nuisance rerun)")
            && err.contains("import its run folder alone"),
        "{err}"
    );
    let report = frameaudit(&["report", &out.display().to_string(), "--json"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let r: Value = serde_json::from_slice(&report.stdout).expect("report JSON");
    assert_eq!(r["input"]["replicate_cells"], 6);
    let a = r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["scope"] == "videomme")
        .expect("videomme analysis");
    let rep = &a["models"][QWEN]["replicates"];
    assert_eq!(rep["nuisances"], serde_json::json!(["rerun"]), "{rep}");
    assert_eq!(rep["floor"]["all"]["pairs"], 6, "{rep}");
}

#[test]
fn an_unparseable_file_name_is_skipped_and_the_rest_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let src = fixtures("vlmevalkit/videomme/Qwen2-VL-7B-Instruct");
    let good = "Qwen2-VL-7B-Instruct_Video-MME_8frame.xlsx";
    std::fs::copy(src.join(good), dir.path().join(good)).expect("copy");
    std::fs::copy(src.join(good), dir.path().join("final_predictions.xlsx")).expect("copy");
    std::fs::write(
        dir.path().join("broken_Video-MME_8frame.xlsx"),
        "not a workbook",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("X_Video-MME_8frame.json"),
        "[{\"index\": 0}]",
    )
    .expect("write");
    let (imp, out) = vlm(
        &[dir.path().to_path_buf()],
        &vlmevalkit::VlmOptions::default(),
    );
    assert_eq!(cells(out.path()).len(), 6);
    let skips = skipped(&imp);
    assert_eq!(skips.len(), 3, "{skips:?}");
    assert!(
        skips.iter().any(|(f, _, why)| f == "final_predictions.xlsx"
            && why.contains("its name has no frame budget"))
    );
    assert!(
        skips
            .iter()
            .any(|(f, _, why)| f == "broken_Video-MME_8frame.xlsx"
                && why.contains("not a readable xlsx"))
    );
    assert!(
        skips
            .iter()
            .any(|(f, _, why)| f == "X_Video-MME_8frame.json"
                && why.contains("no \"prediction\" column"))
    );
}

#[test]
fn frames_root_is_checked_linked_and_not_copied() {
    // InternVL3_5-8B takes the dataset's saved frames; the Qwen and LLaVA files of the
    // fixture sample the video themselves and need none.
    let runs = tempfile::tempdir().expect("tmp");
    let src = fixtures(
        "vlmevalkit/videomme/Qwen2-VL-7B-Instruct/Qwen2-VL-7B-Instruct_Video-MME_8frame.xlsx",
    );
    std::fs::copy(
        &src,
        runs.path().join("InternVL3_5-8B_Video-MME_8frame.xlsx"),
    )
    .expect("copy");
    let root = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(root.path().join("images/Video-MME/fFjv93ACGo8")).expect("mkdir");
    let opts = vlmevalkit::VlmOptions {
        frames_root: Some(root.path().to_path_buf()),
        commands: Vec::new(),
    };
    let (imp, out) = vlm(&[runs.path().to_path_buf()], &opts);
    let warnings = imp.warnings.join("\n");
    assert!(
        warnings.contains(
            "1 of 2 videos have no frame folder images/Video-MME/{video} (first: \"xK2pLm9QwE0\")"
        ),
        "{warnings}"
    );
    // The frames stay where VLMEvalKit saved them; the dataset links them.
    let link = out.path().join("images");
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::canonicalize(&link).expect("target"),
        std::fs::canonicalize(root.path().join("images")).expect("images")
    );
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("dataset.json")).expect("read"),
    )
    .expect("json");
    let run = &meta["runs"][0];
    assert_eq!(run["model"], "InternVL3_5-8B");
    assert_eq!(run["provenance"], "reproduced");
    assert_eq!(
        run["frame_files"],
        "images/Video-MME/{video}/frame-{i}-of-{n}.jpg"
    );
    assert_eq!(
        run["rule"],
        serde_json::json!({"kind": "policy", "policy": "interior", "n": 8})
    );

    let empty = tempfile::tempdir().expect("tmp");
    let opts = vlmevalkit::VlmOptions {
        frames_root: Some(empty.path().to_path_buf()),
        commands: Vec::new(),
    };
    let (imp, _out) = vlm(&[fixtures("vlmevalkit/videomme")], &opts);
    assert!(
        imp.warnings
            .iter()
            .any(|w| w.contains("there is no images/ folder")),
        "{:?}",
        imp.warnings
    );
}

#[test]
fn binary_imports_then_validates_and_reports() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("vlm");
    let dir = fixtures("vlmevalkit/videomme");
    let (dir_s, out_s) = (dir.display().to_string(), out.display().to_string());

    let dry = frameaudit(&["import", "vlmevalkit", &dir_s, "-o", &out_s, "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(
        stderr(&dry).contains("dry run: nothing written"),
        "{}",
        stderr(&dry)
    );
    assert!(!out.exists(), "a dry run writes nothing");

    let run = frameaudit(&["import", "vlmevalkit", &dir_s, "-o", &out_s]);
    let err = stderr(&run);
    assert!(run.status.success(), "{err}");
    assert!(
        err.contains("5 runs, 2 models, 3 configurations, 6 items, 30 cells"),
        "{err}"
    );
    assert!(
        err.contains("skipped 1: its name has no frame budget")
            && err.contains("videomme/summary.json)"),
        "{err}"
    );

    let validate = frameaudit(&["validate", &out_s]);
    assert!(validate.status.success(), "{}", stderr(&validate));
    let report = frameaudit(&["report", &out_s, "--json", "--boot", "20"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let r: Value = serde_json::from_slice(&report.stdout).expect("report JSON");
    assert_eq!(r["input"]["models"], serde_json::json!([QWEN, LLAVA]));

    // Importing again is refused without --force, and then gives the same bytes.
    let files = ["cells.jsonl", "items.jsonl", "dataset.json"];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(out.join(f)).expect("read"))
        .collect();
    let again = frameaudit(&["import", "vlmevalkit", &dir_s, "-o", &out_s]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains(
            "is an existing dataset (cells.jsonl, items.jsonl, dataset.json); --force replaces it"
        ),
        "{}",
        stderr(&again)
    );
    let again = frameaudit(&["import", "vlmevalkit", &dir_s, "-o", &out_s, "--force"]);
    assert!(again.status.success(), "{}", stderr(&again));
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read(out.join(f)).expect("read"), b, "{f}");
    }
}

fn wide_opts() -> wide_csv::WideOptions {
    wide_csv::WideOptions {
        gold: fixtures("wide-csv/videomme_gold.csv"),
        gold_key: "question_id".into(),
        gold_col: "answer".into(),
        ..Default::default()
    }
}

#[test]
fn wide_tables_joined_with_the_gold() {
    let mut imp = Import::default();
    wide_csv::import(&[fixtures("wide-csv")], &wide_opts(), &mut imp, &|_| {}).expect("import");
    let out = tempfile::tempdir().expect("tmp");
    imp.write(out.path(), "w").expect("write");
    let c = cells(out.path());
    let gold = [
        ("001-1", "B"),
        ("001-2", "C"),
        ("001-3", "A"),
        ("002-1", "D"),
        ("002-2", "A"),
    ];
    let check = |model: &str, config: &str, frames: u64, ids: &[&str], preds: &[Option<&str>]| {
        for (id, pred) in ids.iter().zip(preds) {
            let g = gold.iter().find(|(i, _)| i == id).expect("gold").1;
            let key = (model.to_string(), config.to_string(), id.to_string());
            assert_eq!(
                c.get(&key),
                Some(&(
                    pred.map(String::from),
                    g.to_string(),
                    *pred == Some(g),
                    frames
                )),
                "{key:?}"
            );
        }
    };
    let all = ["001-1", "001-2", "001-3", "002-1", "002-2"];
    let q = "Qwen2.5-VL-7B";
    check(
        q,
        "textonly",
        0,
        &all,
        &[Some("B"), Some("C"), Some("A"), Some("D"), Some("A")],
    );
    // An empty cell and "hmm" are no answer.
    check(
        q,
        "16f_151k",
        16,
        &all,
        &[Some("B"), None, Some("B"), Some("D"), None],
    );
    check(
        q,
        "32f_151k",
        32,
        &all,
        &[Some("A"), Some("C"), Some("A"), Some("D"), Some("A")],
    );
    // "The answer is C" → C; "E" stays E (wrong).
    check(
        q,
        "64f_76k",
        64,
        &all,
        &[Some("B"), Some("C"), Some("E"), Some("D"), Some("A")],
    );
    let i = "InternVL3-8B";
    let ids = ["001-1", "001-2", "001-3", "002-2"];
    check(
        i,
        "32f_151k",
        32,
        &ids,
        &[Some("B"), Some("C"), Some("A"), Some("A")],
    );
    check(
        i,
        "textonly",
        0,
        &ids,
        &[Some("C"), Some("C"), Some("B"), Some("A")],
    );
    check(
        i,
        "16f_151k",
        16,
        &ids,
        &[Some("B"), Some("C"), Some("A"), Some("D")],
    );
    assert_eq!(c.len(), 5 * 4 + 4 * 3);
    let cells_json = jsonl(&out.path().join("cells.jsonl"));
    assert!(cells_json.iter().all(|c| c["benchmark"] == "V1_short"));
    let items = jsonl(&out.path().join("items.jsonl"));
    assert_eq!(items.len(), 5);
    assert_eq!(
        items[2],
        serde_json::json!({"benchmark": "V1_short", "item_id": "001-3", "gold": "A"})
    );
    // A wide table says nothing of how frames were sampled: no rule is claimed.
    assert_eq!(
        common::read_json(&out.path().join("dataset.json"))["runs"],
        serde_json::json!([])
    );

    let intern = "InternVL3-8B_V1_short_predictions_wide.csv";
    let qwen = "Qwen2.5-VL-7B_V1_short_predictions_wide.csv";
    assert_eq!(
        skipped(&imp),
        [
            (
                intern.to_string(),
                Some(5),
                format!("{intern}: 2 fields where the header has 4")
            ),
            (
                qwen.to_string(),
                Some(7),
                format!("{qwen}: the item has no answer in videomme_gold.csv")
            ),
        ]
    );
    assert_eq!(
        imp.warnings,
        [
            format!("{qwen}: column(s) notes left out: their names give no frame count"),
            format!("{qwen}: 1 cell(s) name no option; counted as wrong answers"),
        ]
    );
}

#[test]
fn wide_table_options_and_errors() {
    // --model, --benchmark and --id-col through the binary.
    let tmp = tempfile::tempdir().expect("tmp");
    let table = tmp.path().join("scores.csv");
    std::fs::write(&table, "sample_id,8f,16f\n001-1,B,C\n001-2,C,C\n").expect("write");
    let out = tmp.path().join("out");
    let gold = fixtures("wide-csv/videomme_gold.csv");
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = ["import", "wide-csv"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.push(table.display().to_string());
        a.extend(["-o".into(), out.display().to_string()]);
        a.extend(["--gold".into(), gold.display().to_string()]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        frameaudit(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let ok = run(&[
        "--id-col",
        "sample_id",
        "--model",
        "M",
        "--benchmark",
        "videomme",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let c = jsonl(&out.join("cells.jsonl"));
    assert_eq!(c.len(), 4);
    assert!(
        c.iter()
            .all(|c| c["model"] == "M" && c["benchmark"] == "videomme")
    );
    let validate = frameaudit(&["validate", &out.display().to_string()]);
    assert!(validate.status.success(), "{}", stderr(&validate));

    // Without --id-col the table has no question_id: skipped, so nothing is imported.
    let no_id = run(&["--dry-run"]);
    assert!(!no_id.status.success());
    let err = stderr(&no_id);
    assert!(err.contains("no item id column \"question_id\""), "{err}");
    assert!(err.contains("found no cells"), "{err}");

    // A gold file without the answer column stops the import.
    let bad = run(&["--id-col", "sample_id", "--gold-col", "truth", "--dry-run"]);
    assert!(!bad.status.success());
    let err = stderr(&bad);
    assert!(
        err.contains("no column \"truth\"") && err.contains("--gold-col"),
        "{err}"
    );
    // The model and benchmark default to the file name and "default".
    let mut imp = Import::default();
    let opts = wide_csv::WideOptions {
        id_col: Some("sample_id".into()),
        ..wide_opts()
    };
    wide_csv::import(std::slice::from_ref(&table), &opts, &mut imp, &|_| {}).expect("import");
    let out2 = tmp.path().join("out2");
    imp.write(&out2, "x").expect("write");
    let c = jsonl(&out2.join("cells.jsonl"));
    assert!(
        c.iter()
            .all(|c| c["model"] == "scores" && c["benchmark"] == "default")
    );
}
