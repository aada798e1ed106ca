//! Runs written by the harnesses' own code, imported through the binary: the frames
//! frameaudit gives every (model, item, configuration) must be the frames the harness gave
//! the model, with provenance `reproduced` (from the rules) or `recorded` (from the
//! recorder's logs), never a wrong set claimed exact.
//!
//! `fixtures/harness-runs` (made by `tests/reference/make_harness_fixture.py`): lmms-eval 0.7.3
//! runs of five wrappers on Video-MME, two MVBench tasks and MLVU, with fps and default
//! budgets, and VLMEvalKit e8e78f05 runs on Video-MME (frames and fps), MVBench_MP4 and the
//! MLVU concatenation, each with its recorder log; `truth.jsonl` holds what each item was
//! given. The shared runs of `../shared/data/harness-runs` are checked against their truth
//! file when present.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{frameaudit, stderr};
use serde_json::Value;

fn fixture() -> PathBuf {
    common::repo().join("fixtures/harness-runs")
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn truth() -> Vec<Value> {
    std::fs::read_to_string(fixture().join("truth.jsonl"))
        .expect("truth")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

/// Imports with the binary; panics with its messages when it fails.
fn import(args: &[&str]) -> String {
    let o = frameaudit(args);
    assert!(o.status.success(), "{args:?}\n{}", stderr(&o));
    stderr(&o)
}

/// `frames DS ITEM --model M --json`, the configuration with `frames` > 0 named `config`
/// (the only one with frames when `config` is `None`).
fn frames_json(ds: &Path, item: &str, model: &str, config: Option<&str>) -> Value {
    let o = frameaudit(&["frames", &s(ds), item, "--model", model, "--json"]);
    assert!(o.status.success(), "{item} {model}: {}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).expect("frames JSON");
    let mut configs: Vec<Value> = j["configs"]
        .as_array()
        .expect("configs")
        .iter()
        .filter(|c| c["frames"].as_u64() > Some(0))
        .filter(|c| config.is_none_or(|k| c["config"] == k))
        .cloned()
        .collect();
    assert_eq!(configs.len(), 1, "{item} {model} {config:?}: {j}");
    configs.remove(0)
}

/// The lmms-eval item key frameaudit gives a truth line: the task's id (`001-1`, a doc index
/// for MVBench, the question text for MLVU, `#doc` added where several docs share one).
fn lmms_item(ds: &Path, t: &Value) -> String {
    let bench = t["benchmark"].as_str().expect("benchmark");
    if bench.starts_with("mvbench") {
        return format!("{bench}/{}", t["doc_id"]);
    }
    let key = t["item_key"].as_str().expect("key");
    let cells = std::fs::read_to_string(ds.join("cells.jsonl")).expect("cells");
    let shared = format!("{key}#{}", t["doc_id"]);
    let id = if cells.contains(&serde_json::to_string(&shared).expect("json")) {
        shared
    } else {
        key.to_string()
    };
    format!("{bench}/{id}")
}

/// Imports each lmms-eval run alone (two runs of one model may share a label) and checks
/// every item: the indices are the truth's, and the provenance is `want`.
fn check_lmms(with_logs: bool) {
    let base = fixture();
    let tmp = tempfile::tempdir().expect("tmp");
    let mut by_run: BTreeMap<(String, String), Vec<Value>> = BTreeMap::new();
    for t in truth()
        .into_iter()
        .filter(|t| t["harness"] == "lmms-eval-0.7.3")
    {
        by_run
            .entry((
                t["model"].as_str().unwrap_or_default().into(),
                t["run"].as_str().unwrap_or_default().into(),
            ))
            .or_default()
            .push(t);
    }
    assert_eq!(by_run.len(), 14);
    let mut checked = 0;
    for (i, ((model, run), items)) in by_run.iter().enumerate() {
        let ds = tmp.path().join(format!("ds{i}"));
        let mut samples: Vec<String> = items
            .iter()
            .map(|t| s(&base.join(t["samples_file"].as_str().expect("samples"))))
            .collect();
        samples.sort();
        samples.dedup();
        let (videos, docs) = (s(&base.join("videos")), s(&base.join("docs")));
        let mut args: Vec<&str> = vec!["import", "lmms-eval"];
        args.extend(samples.iter().map(String::as_str));
        args.extend(["--videos", &videos, "--docs", &docs]);
        let log = s(&base.join(items[0]["frames_log"].as_str().expect("log")));
        let out = s(&ds);
        if with_logs {
            args.extend(["--frames-log", &log]);
        }
        args.extend(["-o", &out]);
        let summary = import(&args);
        if with_logs {
            assert!(summary.contains("1 of 1 logged runs matched"), "{summary}");
        }
        for t in items {
            let item = lmms_item(&ds, t);
            let c = frames_json(&ds, &item, model, None);
            let want: Vec<u64> = serde_json::from_value(t["frames"].clone()).expect("frames");
            let got: Vec<u64> = serde_json::from_value(c["indices"].clone()).expect("indices");
            assert_eq!(got, want, "{model} {run} {item}: {}", c["rule"]);
            let p = c["provenance"].as_str().unwrap_or_default();
            assert!(
                p == "reproduced" || p == "recorded",
                "{model} {run} {item}: {p}: {}",
                c["why"]
            );
            // Qwen2-VL decodes at 2 fps and then picks its frames among those: its
            // decodes are not what the model got, so its rule stands.
            if with_logs && model != "Qwen__Qwen2-VL-7B-Instruct" {
                assert_eq!(p, "recorded", "{model} {run} {item}: {}", c["why"]);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 336);
}

#[test]
fn lmms_eval_runs_get_the_frames_each_wrapper_decoded() {
    check_lmms(false);
}

#[test]
fn lmms_eval_runs_with_recorder_logs_get_recorded_frames() {
    check_lmms(true);
}

/// The VLMEvalKit item key of a truth line.
fn vlm_item(t: &Value) -> String {
    match t["benchmark"].as_str().expect("benchmark") {
        "Video-MME" => format!("videomme/{}", t["question_id"].as_str().expect("qid")),
        "MLVU" => format!(
            "{}/{}",
            t["sub_dataset"].as_str().expect("sub"),
            t["original_index"]
        ),
        b => format!("{b}/{}", t["index"]),
    }
}

fn vlm_config(run: &str) -> &'static str {
    if run.ends_with("_1fps") {
        "1fps"
    } else if run.ends_with("_16frame") {
        "16f"
    } else {
        "8f"
    }
}

/// Imports a VLMEvalKit work dir and checks every multiple-choice item of the truth; returns
/// how many items had each provenance.
fn check_vlm(outputs: &str, logs: &[&str]) -> BTreeMap<String, usize> {
    let base = fixture();
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = tmp.path().join("ds");
    let (dir, videos, out) = (
        s(&base.join("vlmevalkit-e8e78f05").join(outputs)),
        s(&base.join("videos")),
        s(&ds),
    );
    let logs: Vec<String> = logs
        .iter()
        .map(|l| s(&base.join("vlmevalkit-e8e78f05/frames").join(l)))
        .collect();
    let mut args = vec!["import", "vlmevalkit", &dir, "--videos", &videos];
    for l in &logs {
        args.extend(["--frames-log", l.as_str()]);
    }
    args.extend(["-o", &out]);
    let summary = import(&args);
    // MLVU's part files repeat the whole file's rows; they are skipped, saying why.
    if outputs == "outputs" {
        assert!(
            summary.contains("a part file that VLMEvalKit's evaluate() writes"),
            "{summary}"
        );
    }
    // run.py's status.json is not a prediction file, and not worth a line either.
    assert!(!summary.contains("status.json"), "{summary}");
    let mut seen = BTreeMap::new();
    for t in truth().into_iter().filter(|t| {
        t["harness"] == "vlmevalkit-e8e78f05"
            && t["prediction_file"]
                .as_str()
                .is_some_and(|f| f.contains(&format!("/{outputs}/")))
    }) {
        // MLVU's open-ended part has no option letters: not imported.
        if t["sub_dataset"] == "MLVU_OpenEnded" {
            continue;
        }
        let model = t["model"].as_str().expect("model");
        let item = vlm_item(&t);
        let c = frames_json(
            &ds,
            &item,
            model,
            Some(vlm_config(t["run"].as_str().expect("run"))),
        );
        let p = c["provenance"].as_str().unwrap_or("none").to_string();
        let want: Vec<u64> = serde_json::from_value(t["frames"].clone()).expect("frames");
        let got: Vec<u64> = serde_json::from_value(c["indices"].clone()).expect("indices");
        if p == "reproduced" || p == "recorded" {
            assert_eq!(
                got, want,
                "{model} {} {item}: {} ({})",
                t["run"], c["rule"], c["why"]
            );
        }
        *seen.entry(p).or_insert(0) += 1;
    }
    seen
}

#[test]
fn vlmevalkit_runs_get_their_frames_or_say_they_are_assumed() {
    // One run.py call ran Qwen2.5-VL on frame-count and frame-rate datasets both: what each
    // got depends on their order, which the files do not tell, so those are assumed; the
    // others (InternVL on the dataset's frames, llava_video) are reproduced.
    let seen = check_vlm("outputs", &[]);
    assert_eq!(seen.get("assumed"), Some(&36), "{seen:?}");
    assert_eq!(seen.get("reproduced"), Some(&48), "{seen:?}");
    // With the recorder's logs, the call's order is known (Video-MME_1fps ran right after
    // Video-MME_16frame, so at qwen_vl_utils' default 2 fps) and every item is exact.
    let seen = check_vlm(
        "outputs",
        &[
            "InternVL3_5-8B.frames.jsonl",
            "Qwen2.5-VL-7B-Instruct.frames.jsonl",
            "llava_video_qwen2_7b.frames.jsonl",
        ],
    );
    assert_eq!(seen.get("assumed"), None, "{seen:?}");
    assert_eq!(seen.values().sum::<usize>(), 84, "{seen:?}");
    // Video-MME_1fps alone: its own rate, reproduced.
    let seen = check_vlm("outputs-1fps-alone", &[]);
    assert_eq!(seen, BTreeMap::from([("reproduced".to_string(), 12)]));
}

#[test]
fn vlmevalkit_saved_frames_are_found_in_each_datasets_folders() {
    // VLMEvalKit saves a frame-count run's frames as images/{dataset}/{folder}/frame-i-of-N.jpg,
    // where MLVU's folder is the video without its suffix and Video-MME's the video id.
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("lmu");
    let jpeg = |path: &Path| {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        image::RgbImage::from_pixel(8, 8, image::Rgb([200, 10, 10]))
            .save(path)
            .expect("jpeg");
    };
    for i in 1..=8 {
        jpeg(&root.join(format!("images/MLVU_MCQ/count_1/frame-{i}-of-8.jpg")));
    }
    for i in [1, 2, 4] {
        jpeg(&root.join(format!("images/Video-MME/fFjv93ACGo8/frame-{i}-of-16.jpg")));
    }
    let ds = tmp.path().join("ds");
    let log = import(&[
        "import",
        "vlmevalkit",
        &s(&fixture().join("vlmevalkit-e8e78f05/outputs/InternVL3_5-8B")),
        "--videos",
        &s(&fixture().join("videos")),
        "--frames-root",
        &s(&root),
        "-o",
        &s(&ds),
    ]);
    // count_1 has its folder; count_2, needle_1, plot_1 have none, named as VLMEvalKit would.
    assert!(
        log.contains("3 of 4 videos have no frame folder images/MLVU_MCQ/{video_stem}"),
        "{log}"
    );
    let c = frames_json(&ds, "MLVU_MCQ/2", "InternVL3_5-8B", None);
    let want: Vec<String> = (1..=8)
        .map(|i| format!("images/MLVU_MCQ/count_1/frame-{i}-of-8.jpg"))
        .collect();
    assert_eq!(c["frame_files"], serde_json::json!(want));
    // A missing file is null at its place; the indices stay the rule's.
    let c = frames_json(&ds, "videomme/001-1", "InternVL3_5-8B", Some("16f"));
    let files = c["frame_files"].as_array().expect("frame_files");
    assert_eq!(files.len(), 16);
    assert_eq!(
        files[3], "images/Video-MME/fFjv93ACGo8/frame-4-of-16.jpg",
        "{c}"
    );
    assert_eq!(files.iter().filter(|f| f.is_null()).count(), 13, "{c}");
    assert_eq!(c["provenance"], "reproduced");
}

// ---------------------------------------------------------------------------------------
// The shared runs (../shared/data/harness-runs), when this checkout has them
// ---------------------------------------------------------------------------------------

#[test]
fn shared_lmms_eval_runs_match_the_recorded_truth() {
    let Some(shared) = common::shared_harness_runs() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let hf = tmp.path().join("hf");
    common::untar(&shared.join("media/hf_home_videos.tar"), &hf);
    let ds = tmp.path().join("ds");
    let summary = import(&[
        "import",
        "lmms-eval",
        &s(&shared.join("lmms-eval-0.7.3")),
        "--videos",
        &s(&hf),
        "-o",
        &s(&ds),
    ]);
    assert!(summary.contains("13 runs, 4 models"), "{summary}");
    let truth = common::read_json(&shared.join("truth/lmms-eval-0.7.3-videomme-frames.json"));
    let key = |model: &str| match model {
        "Qwen__Qwen2.5-VL-7B-Instruct" => "qwen2_5_vl_chat",
        "lmms-lab__LLaVA-NeXT-Video-7B" => "llava_vid",
        _ => "internvl3",
    };
    let mut checked = 0;
    for model in [
        "Qwen__Qwen2.5-VL-7B-Instruct",
        "OpenGVLab__InternVL3-8B",
        "OpenGVLab__InternVL3_5-8B",
        "lmms-lab__LLaVA-NeXT-Video-7B",
    ] {
        for video in ["001", "002", "003", "005"] {
            for q in 1..=3 {
                let item = format!("{video}-{q}");
                let o = frameaudit(&["frames", &s(&ds), &item, "--model", model, "--json"]);
                assert!(o.status.success(), "{}", stderr(&o));
                let j: Value = serde_json::from_slice(&o.stdout).expect("json");
                for c in j["configs"].as_array().expect("configs") {
                    let n = c["frames"].as_u64().expect("frames");
                    if n == 0 {
                        // Text-only: no frames, and no claim.
                        assert_eq!(c["provenance"], Value::Null);
                        continue;
                    }
                    let want = &truth[video][format!("{}_{n}", key(model))];
                    let mut want: Vec<u64> = serde_json::from_value(want.clone()).expect("truth");
                    want.sort_unstable();
                    want.dedup();
                    let got: Vec<u64> = serde_json::from_value(c["indices"].clone()).expect("idx");
                    assert_eq!(got, want, "{model} {item} {}", c["config"]);
                    assert_eq!(
                        c["provenance"], "reproduced",
                        "{model} {item}: {}",
                        c["why"]
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 144);
}

#[test]
fn shared_vlmevalkit_runs_are_exact_or_assumed() {
    let Some(shared) = common::shared_harness_runs() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let (hf, lmu) = (tmp.path().join("hf"), tmp.path().join("lmu"));
    common::untar(&shared.join("media/hf_home_videos.tar"), &hf);
    common::untar(&shared.join("media/LMUData_images.tar"), &lmu);
    let ds = tmp.path().join("ds");
    import(&[
        "import",
        "vlmevalkit",
        &s(&shared.join("vlmevalkit-e8e78f05")),
        "--videos",
        &s(&hf),
        "--frames-root",
        &s(&lmu),
        "-o",
        &s(&ds),
    ]);
    // InternVL3.5 took the dataset's frames: the rule's indices, one per saved file.
    for (config, name) in [("8f", "frame-{i}-of-8.jpg"), ("64f", "frame-{i}-of-64.jpg")] {
        let c = frames_json(&ds, "videomme/005-1", "InternVL3_5-8B", Some(config));
        assert_eq!(c["provenance"], "reproduced");
        let n = c["indices"].as_array().expect("idx").len();
        for i in 1..=n {
            let f = lmu
                .join("images/Video-MME/zXJ7Hu9hCb8")
                .join(name.replace("{i}", &i.to_string()));
            assert!(f.is_file(), "{}", f.display());
        }
    }
    // In fps mode, the count of saved files is the count of frames (720 frames at 24 fps).
    let c = frames_json(&ds, "videomme/005-1", "InternVL3_5-8B", Some("1fps"));
    assert_eq!(c["indices"].as_array().map(Vec::len), Some(30));
    assert!(
        lmu.join("images/Video-MME/zXJ7Hu9hCb8/frame-30-of-30-1.0fps.jpg")
            .is_file()
    );
    // llava_video samples the video itself, 8 uniform frames (LLaVA_OneVision with a video
    // model forces its uniform sample).
    let c = frames_json(&ds, "videomme/001-1", "llava_video_qwen2_7b", Some("8f"));
    assert_eq!(
        c["indices"],
        serde_json::json!([0, 257, 514, 771, 1028, 1285, 1542, 1799])
    );
    assert_eq!(c["provenance"], "reproduced");
    // Qwen2.5-VL's frame-count and frame-rate datasets ran in one run.py call: assumed.
    for config in ["8f", "64f", "1fps"] {
        let c = frames_json(
            &ds,
            "videomme/001-1",
            "Qwen2.5-VL-7B-Instruct",
            Some(config),
        );
        assert_eq!(c["provenance"], "assumed", "{config}: {}", c["why"]);
        assert!(
            c["why"].as_str().is_some_and(|w| w.contains("run.py call")),
            "{c}"
        );
    }
    let c = frames_json(&ds, "videomme/001-1", "Qwen2.5-VL-7B-Instruct", Some("8f"));
    assert_eq!(
        c["indices"],
        serde_json::json!([0, 257, 514, 771, 1028, 1285, 1542, 1799])
    );
}

#[test]
fn a_llava_next_video_item_shows_its_own_frames_and_how_they_are_known() {
    if !common::tmux::tmux_available() {
        return;
    }
    let base = fixture();
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = tmp.path().join("llava");
    // LLaVA-NeXT-Video's Video-MME runs at 8, 16, 32 and 64 frames.
    let samples: Vec<String> = truth()
        .iter()
        .filter(|t| {
            t["model"] == "lmms-lab__LLaVA-NeXT-Video-7B"
                && t["benchmark"] == "videomme"
                && t["run"] != "default"
        })
        .map(|t| s(&base.join(t["samples_file"].as_str().expect("samples"))))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(samples.len(), 4);
    let videos = s(&base.join("videos"));
    let out = s(&ds);
    let mut args = vec!["import", "lmms-eval"];
    args.extend(samples.iter().map(String::as_str));
    args.extend(["--videos", &videos, "-o", &out]);
    import(&args);
    let t = common::tmux::Tmux::start(&format!("fa-harness-{}", std::process::id()), &ds, "me");
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    let screen = t.wait_for("frames of video");
    assert!(screen.contains("lmms-lab__LLaVA-NeXT-Video-7B"), "{screen}");
    // Every timeline row says how its frames are known, and the panel names the rule.
    for config in ["8f", "16f", "32f", "64f"] {
        let row = screen
            .lines()
            .find(|l| l.starts_with(&format!("{config:<10}")) && l.contains('▮'))
            .unwrap_or_else(|| panic!("no timeline row {config}:\n{screen}"));
        assert!(row.contains("reproduced"), "{row}");
    }
    assert!(
        screen.contains("llava_vid (simple class LlavaVid)"),
        "{screen}"
    );
    // The thumbnails are the video's own frames, decoded: half blocks, not placeholders.
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut thumbs = t.wait_for("▀");
    while thumbs.matches('▀').count() <= 100 && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(100));
        thumbs = t.screen();
    }
    assert!(thumbs.matches('▀').count() > 100, "{thumbs}");
}

#[test]
fn an_mlvu_item_shows_its_question_apart_from_its_options() {
    // lmms-eval's MLVU keys an item by its question with the options, `(A) 1` lines; the
    // item keeps that id and shows the question and the options apart.
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = tmp.path().join("ds");
    let samples = fixture().join(
        "lmms-eval-0.7.3/logs/OpenGVLab__InternVL3-8B/20261201_175356_samples_mlvu_dev.jsonl",
    );
    import(&["import", "lmms-eval", &s(&samples), "-o", &s(&ds)]);
    let items = std::fs::read_to_string(ds.join("items.jsonl")).expect("items");
    let item: Value = items
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .find(|i| i["item_id"].as_str().is_some_and(|id| id.ends_with("#0")))
        .expect("item #0");
    assert_eq!(
        item["item_id"],
        "How many times does the dog appear in the video?\n(A) 1\n(B) 2\n(C) 3\n(D) 4#0"
    );
    assert_eq!(
        item["question"],
        "How many times does the dog appear in the video?"
    );
    assert_eq!(
        item["options"],
        serde_json::json!(["A. 1", "B. 2", "C. 3", "D. 4"])
    );
}

#[test]
fn an_lmms_eval_and_a_vlmevalkit_import_compare_item_by_item() {
    use frameaudit::core::dataset::{Compared, load_compared};
    let base = fixture();
    let tmp = tempfile::tempdir().expect("tmp");
    let (lmms, vlm) = (tmp.path().join("lmms"), tmp.path().join("vlm"));
    let samples = truth()
        .iter()
        .find(|t| {
            t["model"] == "Qwen__Qwen2.5-VL-7B-Instruct"
                && t["run"] == "max_num_frames=16"
                && t["benchmark"] == "videomme"
        })
        .map(|t| s(&base.join(t["samples_file"].as_str().expect("samples"))))
        .expect("a Qwen run");
    import(&["import", "lmms-eval", &samples, "-o", &s(&lmms)]);
    import(&[
        "import",
        "vlmevalkit",
        &s(&base.join("vlmevalkit-e8e78f05/outputs-1fps-alone")),
        "-o",
        &s(&vlm),
    ]);
    let compared = Compared {
        path: &vlm,
        primary: "main",
        label: "vlm",
    };
    let ds = load_compared(&lmms, Some(&compared), None).expect("both load");
    let m = &ds.matrix;
    // The same checkpoint under the names each harness gives it is one model, and the same
    // Video-MME question one item, under both protocols.
    assert_eq!(
        m.models.len(),
        1,
        "{:?}",
        m.models.names().collect::<Vec<_>>()
    );
    let vlm_protocol = m.protocols.get("vlm").expect("the compared protocol");
    let item = m.find_item("videomme", "001-1").expect("001-1");
    let cells = (0..m.n_cells() as u32)
        .filter(|&c| m.cell_item.get(c as usize) == item)
        .map(|c| m.config(m.cell_config.get(c as usize)).protocol)
        .collect::<Vec<u32>>();
    assert!(cells.contains(&vlm_protocol), "{cells:?}");
    assert!(cells.iter().any(|&p| p != vlm_protocol), "{cells:?}");
}
