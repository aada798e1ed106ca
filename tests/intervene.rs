//! `frameaudit intervene plan` through the binary: on the demo, and on lmms-eval runs written
//! by the harness's own code, where the planned frames are checked against the frames each
//! run really decoded (`fixtures/harness-runs/truth.jsonl`), not against frameaudit's rules.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{frameaudit, stderr};
use frameaudit::core::audit::{AuditHeader, AuditRecord, Status, UnitKey};
use frameaudit::core::sampling::linspace;
use frameaudit::core::workspace::session::Session;
use serde_json::Value;

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Runs `intervene plan` and reads the plan it wrote.
fn plan(args: &[&str], out: &Path) -> Value {
    let mut all = vec!["intervene", "plan"];
    all.extend(args);
    let out_s = s(out);
    all.extend(["-o", &out_s]);
    let o = frameaudit(&all);
    assert!(o.status.success(), "{all:?}\n{}", stderr(&o));
    common::read_json(out)
}

fn u64s(v: &Value) -> Vec<u64> {
    serde_json::from_value(v.clone()).expect("indices")
}

fn set(v: &[u64]) -> Vec<u64> {
    v.iter()
        .copied()
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect()
}

fn by_strategy(p: &Value) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in p["entries"].as_array().expect("entries") {
        out.entry(e["strategy"].as_str().expect("strategy").into())
            .or_default()
            .push(e.clone());
    }
    out
}

#[test]
fn the_demo_gets_a_plan_per_strategy_for_each_terminal_regression() {
    let tmp = tempfile::tempdir().expect("tmp");
    let demo = common::repo().join("fixtures/demo");
    let p = plan(&[&s(&demo)], &tmp.path().join("plan.json"));
    assert_eq!(p["schema"], "frameaudit/plan@1");
    assert_eq!(p["targets"], "terminal");
    assert_eq!(
        p["strategies"],
        serde_json::json!(["nested", "lower-policy", "swap"]),
        "restore-evidence needs an audit"
    );
    // Every terminal regression of the per-benchmark grids is planned or skipped, once per
    // strategy: counted from the report, not from the plan.
    let o = frameaudit(&["report", &s(&demo), "--json", "--boot", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).expect("report");
    let terminal: u64 = report["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .filter(|a| a["protocol"] == "main" && a["scope"] != "ALL" && a["task"] == "mcq")
        .flat_map(|a| a["models"].as_object().expect("models").values())
        .map(|m| m["terminal_regressions"].as_u64().expect("count"))
        .sum();
    assert!(terminal > 10, "{terminal}");
    let skipped = p["skipped"].as_array().expect("skipped");
    let strategies = by_strategy(&p);
    for (name, entries) in &strategies {
        let n_skipped = skipped.iter().filter(|x| x["strategy"] == *name).count();
        assert_eq!(entries.len() + n_skipped, terminal as usize, "{name}");
    }
    // Skipped on the demo: a text-only lower budget (no frames to plan from), and the
    // nested and lower-policy plans of the 64-frame clips, whose 64 frames are all the
    // video's, so 64f's own: a re-run of them would be no intervention.
    let mut own = 0;
    for x in skipped {
        let why = x["why"].as_str().expect("why");
        if x["lower"] == "textonly" && why.contains("text-only") {
            continue;
        }
        assert!(
            matches!(x["strategy"].as_str(), Some("nested" | "lower-policy")),
            "{x}"
        );
        assert_eq!(x["config"], "64f", "{x}");
        assert_eq!(
            why, "its 64 frames are 64f's own: re-running them is a re-run, not an intervention",
            "{x}"
        );
        own += 1;
    }
    assert!(own > 10, "{own}");
    // The demo's configurations are linspace over 64-frame clips, so each strategy's frames
    // can be computed here from the definitions in docs/intervention.md.
    let frames_of = |config: &str| -> Vec<u64> {
        let n: u64 = config
            .trim_end_matches('f')
            .parse()
            .expect("a frame budget");
        set(&linspace(64, n))
    };
    for (name, entries) in &strategies {
        for e in entries {
            let (lo, hi) = (
                frames_of(e["lower"].as_str().expect("lower")),
                frames_of(e["config"].as_str().expect("config")),
            );
            assert_eq!(e["config"], "64f", "the top is re-run: {e}");
            let idx = u64s(&e["indices"]);
            assert!(idx.iter().all(|&i| i < 64), "{e}");
            assert_eq!(e["num_frames"], 64);
            assert_eq!(e["lower_frames"].as_u64(), Some(lo.len() as u64));
            assert_eq!(e["higher_frames"].as_u64(), Some(hi.len() as u64));
            assert_eq!(
                e["sources"]["lower"]
                    .as_str()
                    .map(|x| x.starts_with("reproduced")),
                Some(true),
                "{e}"
            );
            match name.as_str() {
                "swap" => assert_eq!(idx, lo, "{e}"),
                "lower-policy" => assert_eq!(idx, linspace(64, hi.len() as u64), "{e}"),
                "nested" => {
                    assert_eq!(idx.len(), hi.len(), "{e}");
                    assert!(
                        lo.iter().all(|f| idx.contains(f)),
                        "a superset of the lower: {e}"
                    );
                }
                other => panic!("unexpected strategy {other}"),
            }
        }
    }
}

/// The recorder steers by video: within one (model, configuration, strategy), a pass holds
/// one frame set per video, and other frame sets for that video are other passes.
#[test]
fn entries_that_share_a_video_with_other_frames_go_to_other_passes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let demo = common::repo().join("fixtures/demo");
    let p = plan(&[&s(&demo)], &tmp.path().join("plan.json"));
    let mut runs: BTreeMap<(String, String, String, String, u64), Vec<u64>> = BTreeMap::new();
    let mut sets: BTreeMap<(String, String, String, String), BTreeSet<Vec<u64>>> = BTreeMap::new();
    for e in p["entries"].as_array().expect("entries") {
        let key = |f: &str| e[f].as_str().expect(f).to_string();
        let run = (key("model"), key("config"), key("strategy"), key("video"));
        let idx = u64s(&e["indices"]);
        let pass = e["pass"].as_u64().expect("pass");
        let at = (
            run.0.clone(),
            run.1.clone(),
            run.2.clone(),
            run.3.clone(),
            pass,
        );
        if let Some(before) = runs.insert(at, idx.clone()) {
            assert_eq!(before, idx, "one frame set per video in a pass: {e}");
        }
        sets.entry(run).or_default().insert(idx);
    }
    for (run, distinct) in &sets {
        let passes = runs
            .keys()
            .filter(|k| (&k.0, &k.1, &k.2, &k.3) == (&run.0, &run.1, &run.2, &run.3))
            .count();
        assert_eq!(passes, distinct.len(), "{run:?}");
    }
    assert!(
        sets.values().any(|d| d.len() > 1),
        "the demo has clips whose questions are planned with other frames"
    );
}

#[test]
fn a_plan_refuses_to_overwrite_and_asks_for_an_audit_where_one_is_needed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let demo = s(&common::repo().join("fixtures/demo"));
    let out = tmp.path().join("plan.json");
    std::fs::write(&out, "keep me").expect("write");
    let o = frameaudit(&["intervene", "plan", &demo, "-o", &s(&out)]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "keep me");
    let o = frameaudit(&[
        "intervene",
        "plan",
        &demo,
        "--strategy",
        "restore-evidence",
        "-o",
        &s(&out),
        "--force",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--audit"), "{}", stderr(&o));
}

/// A plan file that is not a plan's shape is said whole, through the binary: each entry's
/// problem on its own line, at its line and field, its data sanitized.
#[test]
fn a_broken_plan_file_is_said_entry_by_entry() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("plan.json");
    let entry = |item: &str, rest: &str| {
        format!(
            "{{\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"{item}\", \"config\": \"8f\", \"lower\": \"4f\", \"strategy\": \"swap\", {rest}}}"
        )
    };
    let text = format!(
        "{{\"schema\": \"frameaudit/plan@1\", \"dataset\": \"d\", \"strategies\": [\"swap\"],\n\"entries\": [\n{},\n{},\n{}]}}\n",
        entry(
            "1",
            "\"video\": \"v\", \"indices\": [2, \"\\u001b[2J\"], \"pass\": 0"
        ),
        entry("2", "\"video\": \"v\", \"indices\": [2], \"pass\": 0"),
        entry("3", "\"indices\": [2], \"pass\": 0"),
    );
    std::fs::write(&path, text).expect("write");
    let o = frameaudit(&["intervene", "runs", &s(&path)]);
    assert!(!o.status.success());
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains(":3: not a frameaudit plan: entries[0].indices[1]: invalid type"),
        "{err}"
    );
    assert!(
        lines[1].ends_with(&format!(
            "{}:5: not a frameaudit plan: entries[2]: missing field `video` (column 126)",
            s(&path)
        )),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "the file's escape reached the terminal: {err}"
    );
}

/// What the harness decoded for each (benchmark, item key, configuration) of one model's
/// runs `max_frames_num=N` (configuration `Nf`), with the video's frame count.
fn truth(model: &str) -> BTreeMap<(String, String, String), (Vec<u64>, u64)> {
    let base = common::repo().join("fixtures/harness-runs");
    let mut out = BTreeMap::new();
    for line in std::fs::read_to_string(base.join("truth.jsonl"))
        .expect("truth")
        .lines()
    {
        let t: Value = serde_json::from_str(line).expect("json");
        if t["model"] != model {
            continue;
        }
        let Some(n) = t["run"]
            .as_str()
            .and_then(|r| r.strip_prefix("max_frames_num="))
        else {
            continue;
        };
        // MVBench items are named by their number.
        let key = match &t["item_key"] {
            Value::String(k) => k.clone(),
            other => other.to_string(),
        };
        let entry = (
            u64s(&t["frames"]),
            t["num_frames"].as_u64().expect("num_frames"),
        );
        let bench = t["benchmark"].as_str().expect("benchmark").to_string();
        out.insert((bench.clone(), key.clone(), format!("{n}f")), entry.clone());
        out.insert(
            (bench, format!("{key}#{}", t["doc_id"]), format!("{n}f")),
            entry,
        );
    }
    out
}

const LLAVA: &str = "lmms-lab__LLaVA-NeXT-Video-7B";

/// The lmms-eval runs of LLaVA-NeXT-Video at 8, 16, 32 and 64 frames, imported as one
/// dataset.
fn llava_dataset(dir: &Path) -> PathBuf {
    let base = common::repo().join("fixtures/harness-runs");
    let logs = base.join("lmms-eval-0.7.3/logs").join(LLAVA);
    let truth_runs: Vec<String> = std::fs::read_to_string(base.join("truth.jsonl"))
        .expect("truth")
        .lines()
        .filter_map(|l| {
            let t: Value = serde_json::from_str(l).ok()?;
            (t["model"] == LLAVA && t["run"].as_str()?.starts_with("max_frames_num="))
                .then(|| t["samples_file"].as_str().map(str::to_owned))?
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|f| s(&base.join(f)))
        .collect();
    assert!(truth_runs.iter().all(|f| f.starts_with(&s(&logs))));
    let ds = dir.join("llava");
    let (videos, docs) = (s(&base.join("videos")), s(&base.join("docs")));
    let mut args: Vec<&str> = vec!["import", "lmms-eval"];
    args.extend(truth_runs.iter().map(String::as_str));
    let out = s(&ds);
    args.extend(["--videos", &videos, "--docs", &docs, "-o", &out]);
    let o = frameaudit(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    ds
}

#[test]
fn plans_on_harness_runs_start_from_the_frames_the_harness_decoded() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = llava_dataset(tmp.path());
    let truth = truth(LLAVA);
    let p = plan(&[&s(&ds)], &tmp.path().join("plan.json"));
    let strategies = by_strategy(&p);
    assert!(strategies.values().all(|v| !v.is_empty()), "{p}");
    let mut checked = 0;
    for (name, entries) in &strategies {
        for e in entries {
            let at = |config: &Value| {
                let k = (
                    e["benchmark"].as_str().expect("b").to_string(),
                    e["item_id"].as_str().expect("id").to_string(),
                    config.as_str().expect("config").to_string(),
                );
                truth
                    .get(&k)
                    .cloned()
                    .unwrap_or_else(|| panic!("no truth for {k:?}"))
            };
            let ((lo, t), (hi, _)) = (at(&e["lower"]), at(&e["config"]));
            let (lo, hi) = (set(&lo), set(&hi));
            let idx = u64s(&e["indices"]);
            assert_eq!(e["num_frames"].as_u64(), Some(t), "{e}");
            assert!(idx.iter().all(|&i| i < t), "inside the video: {e}");
            assert_eq!(e["higher_frames"].as_u64(), Some(hi.len() as u64), "{e}");
            assert_eq!(e["lower_frames"].as_u64(), Some(lo.len() as u64), "{e}");
            match name.as_str() {
                "swap" => assert_eq!(idx, lo, "{e}"),
                "nested" => {
                    assert_eq!(idx.len(), hi.len(), "{e}");
                    assert!(lo.iter().all(|f| idx.contains(f)), "{e}");
                }
                // LLaVA's rule asked for the higher count: as many frames, from its stride.
                "lower-policy" => assert!(!idx.is_empty() && idx.len() <= hi.len(), "{e}"),
                other => panic!("unexpected strategy {other}"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked}");
    // A nested plan needs more frames at the higher budget: the runs where LLaVA's stride
    // gives 32f and 64f the same frames say so. LLaVA's rule asked for the higher count is
    // the higher run's own rule: where it gives the higher run's very frames, the
    // lower-policy plan would be a re-run, and is skipped (as the swap where the two runs
    // decoded the same frames).
    let mut reruns = 0;
    for x in p["skipped"].as_array().expect("skipped") {
        let why = x["why"].as_str().expect("why");
        match x["strategy"].as_str() {
            Some("nested") => assert!(why.contains("no more than"), "{x}"),
            // Where 32f and 64f decoded the same frames the swap's control is 64f again.
            Some("lower-policy" | "swap") => {
                assert!(
                    why.ends_with("'s own: re-running them is a re-run, not an intervention"),
                    "{x}"
                );
                reruns += 1;
            }
            _ => panic!("unexpected skip {x}"),
        }
    }
    assert!(reruns > 0, "{p}");
}

#[test]
fn restore_evidence_adds_the_marked_frames_the_higher_budget_dropped() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = llava_dataset(tmp.path());
    let truth = truth(LLAVA);
    let p = plan(
        &[&s(&ds), "--strategy", "swap"],
        &tmp.path().join("swap.json"),
    );
    // Mark evidence on the first two planned transitions: one frame the higher budget
    // dropped and one it kept (only the first is restored); a third record marks only a kept
    // frame, so it is skipped.
    let entries = p["entries"].as_array().expect("entries");
    let mut marked = Vec::new();
    for e in entries {
        let k = |c: &str| {
            (
                e["benchmark"].as_str().expect("b").to_string(),
                e["item_id"].as_str().expect("id").to_string(),
                e[c].as_str().expect("c").to_string(),
            )
        };
        let (lo, hi) = (set(&truth[&k("lower")].0), set(&truth[&k("config")].0));
        let dropped: Vec<u64> = lo.iter().copied().filter(|f| !hi.contains(f)).collect();
        if let (Some(&d), Some(&kept)) = (dropped.first(), hi.first()) {
            marked.push((e.clone(), d, kept, hi));
        }
        if marked.len() == 3 {
            break;
        }
    }
    assert_eq!(
        marked.len(),
        3,
        "transitions whose higher budget drops a frame"
    );
    let audit = tmp.path().join("ann.audit.jsonl");
    {
        let header = AuditHeader {
            dataset_name: "llava".into(),
            fingerprint: "sha256:00".into(),
            annotator: "ann".into(),
            taxonomy_id: "evidence-pathways".into(),
            taxonomy_version: 1,
            created_at: "2026-12-02T00:00:00Z".into(),
            adjudicates: Vec::new(),
        };
        let mut session = Session::open(&audit, &header, || {}).expect("audit");
        for (n, (e, dropped, kept, _)) in marked.iter().enumerate() {
            let key = UnitKey::new(
                e["model"].as_str().expect("m"),
                e["benchmark"].as_str().expect("b"),
                e["item_id"].as_str().expect("id"),
            );
            let mut rec = AuditRecord::blank(
                key,
                e["lower"].as_str().expect("lower"),
                e["config"].as_str().expect("config"),
                "",
            );
            rec.status = Status::Done;
            rec.pathways = vec!["key_frame_dropped".into()];
            rec.evidence_frames = if n < 2 {
                vec![*dropped, *kept]
            } else {
                vec![*kept]
            };
            rec.evidence_frames.sort_unstable();
            session.apply(rec, "2026-12-02T00:00:01Z");
        }
        assert!(session.wait_saved(Duration::from_secs(5)));
    }
    let p = plan(
        &[
            &s(&ds),
            "--strategy",
            "restore-evidence",
            "--targets",
            "audited",
            "--audit",
            &s(&audit),
        ],
        &tmp.path().join("restore.json"),
    );
    let entries = p["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "{p}");
    for (e, (m, dropped, _, hi)) in entries.iter().zip(&marked) {
        assert_eq!(e["item_id"], m["item_id"]);
        assert_eq!(u64s(&e["restored"]), vec![*dropped]);
        let mut want = hi.clone();
        want.push(*dropped);
        assert_eq!(u64s(&e["indices"]), set(&want), "{e}");
        assert!(
            e["why"].as_str().expect("why").contains("marked by ann"),
            "{e}"
        );
    }
    let skipped = p["skipped"].as_array().expect("skipped");
    assert_eq!(skipped.len(), 1, "{p}");
    assert!(
        skipped[0]["why"]
            .as_str()
            .expect("why")
            .contains("no evidence frame marked")
    );
    // The terminal regressions take the same evidence (records from their lower budget).
    let t = plan(
        &[
            &s(&ds),
            "--strategy",
            "restore-evidence",
            "--audit",
            &s(&audit),
        ],
        &tmp.path().join("terminal.json"),
    );
    let restored: Vec<(String, Vec<u64>)> = t["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["item_id"].as_str().expect("id").to_string(),
                u64s(&e["restored"]),
            )
        })
        .collect();
    assert_eq!(restored.len(), 2, "{t}");
    for (m, dropped, _, _) in &marked[..2] {
        let id = m["item_id"].as_str().expect("id").to_string();
        assert!(restored.contains(&(id, vec![*dropped])), "{restored:?}");
    }
}

/// A dataset of one model on three items of 100 frames at 10 fps: configuration `4f` by the
/// `linspace` policy, `5f` by recorded frames alone (no rule given), `0f` text-only.
fn floor_dataset(dir: &Path) -> PathBuf {
    let ds = dir.join("floor");
    std::fs::create_dir_all(&ds).expect("mkdir");
    std::fs::write(
        ds.join("dataset.json"),
        r#"{"schema": "frameaudit/dataset@1", "name": "floor", "configs": {"4f": {"policy": "linspace"}}}"#,
    )
    .expect("dataset.json");
    let mut items = String::new();
    let mut cells = String::new();
    for (i, pred) in ["A", "B", "A"].iter().enumerate() {
        items.push_str(&format!(
            "{{\"benchmark\": \"b\", \"item_id\": \"q{i}\", \"video\": \"v{i}\", \"num_frames\": 100, \"fps\": 10.0, \"gold\": \"A\", \"options\": [\"A. x\", \"B. y\"]}}\n"
        ));
        cells.push_str(&format!(
            "{{\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"q{i}\", \"config\": \"0f\", \"frames\": 0, \"pred\": \"{pred}\", \"gold\": \"A\"}}\n\
             {{\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"q{i}\", \"config\": \"4f\", \"frames\": 4, \"pred\": \"{pred}\", \"gold\": \"A\"}}\n\
             {{\"model\": \"m\", \"benchmark\": \"b\", \"item_id\": \"q{i}\", \"config\": \"5f\", \"frames\": 5, \"pred\": \"{pred}\", \"gold\": \"A\", \"frame_idx\": [0, 20, 40, 60, 80]}}\n"
        ));
    }
    std::fs::write(ds.join("items.jsonl"), items).expect("items");
    std::fs::write(ds.join("cells.jsonl"), cells).expect("cells");
    ds
}

#[test]
fn a_phase_floor_shifts_every_item_of_every_run_by_its_rule_or_its_recorded_frames() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = floor_dataset(tmp.path());
    let p = plan(
        &[&s(&ds), "--strategy", "phase", "--phases", "4"],
        &tmp.path().join("plan.json"),
    );
    assert_eq!(p["targets"], "all");
    // An option no strategy of the plan reads is refused (it was ignored), nothing written.
    for (args, says) in [
        (&["--strategy", "nested", "--phases", "3"][..], "--phases"),
        (
            &["--strategy", "phase", "--targets", "audited"][..],
            "--targets",
        ),
        (
            &["--strategy", "sampler", "--targets", "terminal"][..],
            "--targets",
        ),
    ] {
        let out = tmp.path().join("refused.json");
        let mut all = vec!["intervene", "plan"];
        let ds_s = s(&ds);
        all.push(&ds_s);
        all.extend(args);
        let out_s = s(&out);
        all.extend(["-o", &out_s]);
        let o = frameaudit(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!out.exists(), "{args:?}");
    }
    let mut got: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for e in p["entries"].as_array().expect("entries") {
        assert_eq!(e["strategy"], "phase");
        assert_eq!(e["nuisance"], "phase");
        assert_eq!(e["config"], e["lower"]);
        got.insert(
            (
                e["config"].as_str().expect("config").into(),
                e["replicate"].as_str().expect("replicate").into(),
            ),
            u64s(&e["indices"]),
        );
        // What the entry says it did is what it did: linspace's components are not shifts
        // of its grid by s/S of a step (its dense grid keeps the last frame).
        let why = e["why"].as_str().expect("why");
        if e["config"] == "4f" {
            assert!(
                why.contains("of the 16-frame grid of ")
                    && why.contains("drawn by its own rule at 4 times the density")
                    && !why.contains("shifted"),
                "{why}"
            );
        }
        // The three shifts of one run are three passes of the harness for the video.
        let s = e["replicate"].as_str().expect("replicate");
        assert_eq!(
            e["pass"].as_u64(),
            Some(s[6..7].parse::<u64>().expect("s") - 1)
        );
    }
    // 4f, by its rule: components 1, 2, 3 of linspace(100, 16).
    let dense = linspace(100, 16);
    for sh in 1..4usize {
        let want: Vec<u64> = dense.iter().skip(sh).step_by(4).copied().collect();
        assert_eq!(
            got[&("4f".into(), format!("phase-{sh}/4"))],
            want,
            "4f phase {sh}"
        );
    }
    // 5f, recorded every 20 frames with no rule: each frame moved s/4 of the way to the next.
    assert_eq!(got[&("5f".into(), "phase-1/4".into())], [5, 25, 45, 65, 85]);
    assert_eq!(
        got[&("5f".into(), "phase-2/4".into())],
        [10, 30, 50, 70, 90]
    );
    assert_eq!(
        got[&("5f".into(), "phase-3/4".into())],
        [15, 35, 55, 75, 95]
    );
    // Three items, two runs with frames, three shifts; the text-only run is not planned.
    assert_eq!(got.len(), 6);
    assert_eq!(p["entries"].as_array().expect("entries").len(), 18);
    assert!(p["skipped"].as_array().expect("skipped").is_empty());
}

#[test]
fn a_sampler_floor_plans_the_other_uniform_rules_of_the_run_s_count() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = floor_dataset(tmp.path());
    let p = plan(
        &[&s(&ds), "--strategy", "sampler"],
        &tmp.path().join("plan.json"),
    );
    let mut got: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for e in p["entries"].as_array().expect("entries") {
        assert_eq!(e["nuisance"], "sampler");
        if e["item_id"] == "q0" {
            got.insert(
                (
                    e["config"].as_str().expect("config").into(),
                    e["replicate"].as_str().expect("replicate").into(),
                ),
                u64s(&e["indices"]),
            );
        }
    }
    // T = 100, N = 4: floor(25i), floor(25i + 12.5), round(33i) and seconds 0, 3, 6, 9.
    let four = |r: &str| got.get(&("4f".to_string(), r.to_string())).cloned();
    assert_eq!(four("sampler-left"), Some(vec![0, 25, 50, 75]));
    assert_eq!(four("sampler-midpoint"), Some(vec![12, 37, 62, 87]));
    // round(33i) is linspace's [0, 33, 66, 99] here: 4f's own rule, not planned again.
    assert_eq!(four("sampler-inclusive"), None);
    assert_eq!(four("sampler-1fps"), Some(vec![0, 30, 60, 90]));
    // 5f was sampled at 0, 20, .., 80: the left endpoints of five segments, its own rule,
    // which is not planned again (and says so).
    assert_eq!(
        got.get(&("5f".to_string(), "sampler-left".to_string())),
        None
    );
    let skipped = p["skipped"].as_array().expect("skipped");
    for (config, rule) in [("5f", "left"), ("4f", "inclusive")] {
        let why = format!("sampler-{rule}: it is {config}'s own frames");
        assert!(
            skipped
                .iter()
                .any(|x| x["config"] == config && x["why"] == why.as_str()),
            "{skipped:?}"
        );
    }
    assert_eq!(
        got.get(&("5f".to_string(), "sampler-midpoint".to_string())),
        Some(&vec![10, 30, 50, 70, 90])
    );
}

/// `intervene runs` refuses what it cannot follow, as a usage error (exit 2) where the
/// command line is at fault: `--command` without its harness or the other way round, a
/// `{word}` that is not a placeholder; and a plan whose entries name an unknown strategy or
/// a frame past the video's end, each at its line and field.
#[test]
fn runs_refuses_unknown_placeholders_and_plans_no_rerun_can_follow() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("plan.json");
    let p = plan(&["--strategy", "swap"], &path);
    let plan_s = s(&path);
    let runs = |extra: &[&str]| {
        let mut all = vec!["intervene", "runs", &plan_s];
        all.extend(extra);
        frameaudit(&all)
    };
    let o = runs(&[
        "--harness",
        "command",
        "--command",
        "run {model} {nosuch} {}",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--command names {nosuch}, which is not a placeholder"),
        "{}",
        stderr(&o)
    );
    let o = runs(&["--harness", "command"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = runs(&["--command", "run {model}"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = runs(&[
        "--harness",
        "command",
        "--command",
        "run {model} --out {out}",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    // A plan with nothing in it says so, not "0 re-runs ...: run each".
    let mut empty = p.clone();
    empty["entries"] = serde_json::json!([]);
    let empty_path = tmp.path().join("empty.json");
    std::fs::write(&empty_path, serde_json::to_string(&empty).expect("json")).expect("w");
    let o = frameaudit(&["intervene", "runs", &s(&empty_path)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("has no entry: nothing to re-run"), "{text}");
    assert!(!text.contains("run each"), "{text}");

    // The plan edited by hand: an unknown strategy, a frame past the end.
    let mut bad = p.clone();
    let entries = bad["entries"].as_array_mut().expect("entries");
    assert!(entries.len() >= 2, "{p}");
    entries[0]["strategy"] = "bogus".into();
    let n = entries[1]["num_frames"].as_u64().expect("num_frames");
    entries[1]["indices"][0] = n.into();
    let bad_path = tmp.path().join("bad.json");
    std::fs::write(&bad_path, serde_json::to_string_pretty(&bad).expect("json")).expect("w");
    let o = frameaudit(&["intervene", "runs", &s(&bad_path)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("entries[0].strategy: unknown strategy \"bogus\"")
            && err.contains(&format!(
                "entries[1].indices[0]: frame {n} is past the video's end (num_frames {n})"
            )),
        "{err}"
    );
}
