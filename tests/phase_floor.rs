//! A phase floor end to end on the shared harness runs (docs/intervention.md §3.5, §8): the
//! lmms-eval 0.7.3 runs imported with their videos, `intervene plan --strategy phase`, the
//! LLaVA-NeXT-Video runs re-run through the frame recorder by a stand-in of lmms-eval's
//! `llava_vid` video loading (tests/standin/lmms_rerun.py: real decord, `get_batch`), read
//! back with `import --plan` as `phase` replicates, and the noise floor `report` prints
//! checked against the answers the stand-in wrote and the frames the recorder logged.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{frameaudit, stderr};
use frameaudit::core::sampling::linspace;
use serde_json::Value;

const LLAVA: &str = "lmms-lab__LLaVA-NeXT-Video-7B";
/// The LLaVA-NeXT-Video runs re-run: configuration and the run's date id.
const RUNS: [(&str, u64, &str); 2] = [("8f", 8, "20261201_155640"), ("16f", 16, "20261201_155652")];

/// A program `lmms-eval` in `root/bin` that runs the stand-in (tests/standin/lmms_rerun.py)
/// with its arguments, as pip's `lmms-eval` runs lmms-eval.
#[cfg(unix)]
fn lmms_eval_program(root: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let program = bin.join("lmms-eval");
    let script = common::repo().join("tests/standin/lmms_rerun.py");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\nexec python3 {} \"$@\"\n",
            common::tmux::shell_quote(&s(&script))
        ),
    )
    .expect("write");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    program
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn ok(args: &[&str]) -> String {
    let o = frameaudit(args);
    assert!(o.status.success(), "{args:?}\n{}", stderr(&o));
    stderr(&o)
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// `llava_vid`'s `load_video` (lmms-eval 0.7.3, decord, video_fps 1), as the stand-in
/// states it: one frame every round(fps) frames, linspace when that is more than `n`.
fn llava_vid(t: u64, fps: f64, n: u64) -> Vec<u64> {
    let stride = fps.round() as u64;
    let every: Vec<u64> = (0..t).step_by(stride as usize).collect();
    if every.len() as u64 > n {
        linspace(t, n)
    } else {
        every
    }
}

#[test]
fn a_phase_floor_planned_rerun_through_the_recorder_and_imported_gives_the_floor_of_its_answers() {
    let Some(shared) = common::shared_harness_runs() else {
        return;
    };
    if !common::runs("python3", &["-c", "import decord, numpy"]) {
        common::skip_note(format_args!(
            "python3 with decord and numpy is absent; skipping the phase floor test"
        ));
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().canonicalize().expect("canonical");
    let hf = root.join("hf");
    common::untar(&shared.join("media/hf_home_videos.tar"), &hf);
    // The shared lmms-eval runs with their videos, as a dataset at `out`.
    let import_runs = |out: &Path| {
        let runs = s(&shared.join("lmms-eval-0.7.3"));
        ok(&[
            "import",
            "lmms-eval",
            &runs,
            "--videos",
            &s(&hf),
            "-o",
            &s(out),
        ])
    };
    let ds = root.join("ds");
    import_runs(&ds);

    // The plan: one shifted grid per item of every run.
    let plan_path = root.join("plan.json");
    let said = ok(&[
        "intervene",
        "plan",
        &s(&ds),
        "--strategy",
        "phase",
        "-o",
        &s(&plan_path),
    ]);
    assert!(said.contains("phase: "), "{said}");
    let plan = common::read_json(&plan_path);
    assert_eq!(plan["strategies"], serde_json::json!(["phase"]));
    assert_eq!(plan["targets"], "all");
    let items: BTreeMap<String, Value> = jsonl(&ds.join("items.jsonl"))
        .into_iter()
        .map(|i| (i["item_id"].as_str().expect("id").to_string(), i))
        .collect();
    let mut planned: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for e in plan["entries"].as_array().expect("entries") {
        assert_eq!(e["replicate"], "phase-1/2");
        assert_eq!(e["nuisance"], "phase");
        assert_eq!(e["config"], e["lower"]);
        if e["model"] != LLAVA {
            continue;
        }
        let config = e["config"].as_str().expect("config");
        let item = e["item_id"].as_str().expect("item").to_string();
        let n = RUNS
            .iter()
            .chain(&[("32f", 32, "")])
            .find(|r| r.0 == config)
            .expect("a LLaVA run")
            .1;
        let meta = &items[&item];
        let t = meta["num_frames"].as_u64().expect("num_frames");
        let fps = meta["fps"].as_f64().expect("fps");
        // Component 1 of the rule asked for 2N frames: the odd frames of that grid.
        let dense = llava_vid(t, fps, 2 * n);
        assert_eq!(dense.len() as u64, 2 * n, "{item} at {config}");
        let want: Vec<u64> = dense.iter().skip(1).step_by(2).copied().collect();
        let got: Vec<u64> = serde_json::from_value(e["indices"].clone()).expect("indices");
        assert_eq!(got, want, "{item} at {config}");
        assert_ne!(
            got,
            llava_vid(t, fps, n),
            "a shift, not the run's own frames"
        );
        planned.insert((config.to_string(), item), got);
    }
    // Where the rule cannot give 2N frames (a 30-second video at one frame a second holds
    // 30 < 32), nothing is planned, and the plan says why.
    let skipped = plan["skipped"].as_array().expect("skipped");
    let why_005 = skipped
        .iter()
        .find(|x| x["model"] == LLAVA && x["config"] == "16f" && x["item_id"] == "005-1")
        .expect("005-1 at 16f skipped");
    assert!(
        why_005["why"]
            .as_str()
            .expect("why")
            .contains("cannot be asked for 32 frames"),
        "{why_005}"
    );
    assert_eq!(
        planned.keys().filter(|(c, _)| c == "8f").count(),
        12,
        "every item at 8f"
    );
    assert_eq!(planned.keys().filter(|(c, _)| c == "16f").count(), 9);

    // The re-runs, each through the recorder with the plan, by a program named as the one
    // pip installs for lmms-eval (`lmms-eval`), so that `import reruns` tells them apart.
    let runs_dir = shared.join(format!("lmms-eval-0.7.3/videomme/{LLAVA}"));
    let out = root.join("rerun");
    let program = lmms_eval_program(&root);
    std::fs::create_dir_all(root.join("logs")).expect("mkdir");
    let mut logs = Vec::new();
    for (config, _, date) in RUNS {
        let log = root.join(format!("logs/{config}.frames.jsonl"));
        let o = Command::new("python3")
            .args(["-m", "frameaudit_record", "--log"])
            .arg(&log)
            .arg("--plan")
            .arg(&plan_path)
            .args(["--run", &format!("{LLAVA}/{config}"), "--strategy", "phase"])
            .arg("--")
            .arg(&program)
            .arg("--run")
            .arg(runs_dir.join(format!("{date}_results.json")))
            .arg("--videos")
            .arg(hf.join("videomme/data"))
            .arg("--out")
            .arg(&out)
            .args(["--date", &format!("20261205_0000{config}")])
            .env("PYTHONPATH", common::repo().join("assets/python"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("FRAMEAUDIT_RECORD_LOG")
            .stdin(Stdio::null())
            .output()
            .expect("run python3");
        assert!(o.status.success(), "the stand-in failed: {o:?}");
        // Every steered decode gave the harness a planned grid, and one per planned video.
        let steered: Vec<Value> = jsonl(&log)
            .into_iter()
            .filter(|l| l["event"] == "decode" && l["planned"] == true)
            .collect();
        assert_eq!(
            steered.len(),
            planned.keys().filter(|(c, _)| c == config).count(),
            "{config}: one steered decode per planned item"
        );
        for d in &steered {
            let idx: Vec<u64> = serde_json::from_value(d["indices"].clone()).expect("indices");
            assert!(
                planned.iter().any(|((c, _), p)| c == config && *p == idx),
                "{config}: a decode not of the plan: {d}"
            );
        }
        logs.push(log);
    }

    // Read back as replicates.
    let mut args = vec![
        "import".to_string(),
        "lmms-eval".into(),
        s(&out),
        "--plan".into(),
        s(&plan_path),
        "--strategy".into(),
        "phase".into(),
        "-o".into(),
        s(&ds),
    ];
    for log in &logs {
        args.extend(["--frames-log".into(), s(log)]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let said = ok(&args);
    assert!(
        said.contains("wrote 21 cells of replicate phase-1/2"),
        "{said}"
    );
    assert!(
        said.contains("left for their own re-run") && said.contains(&format!("{LLAVA}/32f (3)")),
        "{said}"
    );
    let replicates = jsonl(&ds.join("replicates/phase-1-2.jsonl"));
    assert_eq!(replicates.len(), 21);

    // The same re-runs sorted out of their logs' folder by `import reruns` give the same
    // replicates, into a dataset imported alike (of the same name: the plan names it).
    let sorted = root.join("sorted/ds");
    import_runs(&sorted);
    let said = ok(&[
        "import",
        "reruns",
        &s(&root.join("logs")),
        "--plan",
        &s(&plan_path),
        "-o",
        &s(&sorted),
    ]);
    assert!(said.contains("1 import (phase pass 0)"), "{said}");
    assert_eq!(
        jsonl(&sorted.join("replicates/phase-1-2.jsonl")),
        replicates,
        "{said}"
    );

    // The stand-in's answers, and the canonical cells' correctness, by (config, item).
    let mut answers: BTreeMap<(String, String), String> = BTreeMap::new();
    for (config, _, _) in RUNS {
        let samples = out.join(format!(
            "{LLAVA}/20261205_0000{config}_samples_videomme.jsonl"
        ));
        for line in jsonl(&samples) {
            let score = &line["videomme_perception_score"];
            answers.insert(
                (
                    config.to_string(),
                    score["question_id"].as_str().expect("id").into(),
                ),
                score["pred_answer"].as_str().expect("pred").into(),
            );
        }
    }
    let report = frameaudit(&["report", &s(&ds), "--json", "--boot", "0"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let report: Value = serde_json::from_slice(&report.stdout).expect("report json");
    // The canonical answers: the runs' own samples, as lmms-eval scored them.
    let mut canonical: BTreeMap<(String, String), bool> = BTreeMap::new();
    for (config, _, date) in RUNS {
        for line in jsonl(&runs_dir.join(format!("{date}_samples_videomme.jsonl"))) {
            let score = &line["videomme_perception_score"];
            canonical.insert(
                (
                    config.to_string(),
                    score["question_id"].as_str().expect("id").into(),
                ),
                score["score"].as_f64().expect("score") == 1.0,
            );
        }
    }
    let canonical_right =
        |config: &str, item: &str| canonical[&(config.to_string(), item.to_string())];
    let (mut neg, mut pos) = (0, 0);
    for r in &replicates {
        let config = r["config"].as_str().expect("config");
        let item = r["item_id"].as_str().expect("item");
        assert_eq!(r["model"], LLAVA);
        assert_eq!(r["replicate"], "phase-1/2");
        assert_eq!(r["nuisance"], "phase");
        let idx: Vec<u64> = serde_json::from_value(r["frame_idx"].clone()).expect("frame_idx");
        assert_eq!(idx, planned[&(config.to_string(), item.to_string())]);
        let pred = &answers[&(config.to_string(), item.to_string())];
        assert_eq!(r["pred"], pred.as_str(), "{config} {item}");
        let right = pred.as_str() == r["gold"].as_str().expect("gold");
        match (canonical_right(config, item), right) {
            (true, false) => neg += 1,
            (false, true) => pos += 1,
            _ => {}
        }
    }
    assert!(
        neg + pos > 0,
        "the stand-in's pixels rule flips some answers"
    );
    let floor = &report["analyses"][0]["models"][LLAVA]["replicates"]["floor"];
    let phase = &floor["by_nuisance"]["phase"];
    assert_eq!(phase["pairs"], 21, "{floor}");
    assert_eq!(phase["neg"], neg, "{floor}");
    assert_eq!(phase["pos"], pos, "{floor}");
    assert_eq!(phase["disagree"], neg + pos, "{floor}");
    // The other models were not re-run: no replicate, no floor.
    assert_eq!(
        report["analyses"][0]["models"]["OpenGVLab__InternVL3-8B"]["replicates"],
        Value::Null
    );
}
