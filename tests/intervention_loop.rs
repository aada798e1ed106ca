//! The intervention loop end to end, with no GPU (docs/intervention.md): a plan made from a
//! dataset's terminal regressions, applied through the frame recorder to a stand-in harness
//! (tests/standin/harness.py) that decodes real videos with decord and answers from the
//! pixels it is given, read back with `import --plan`, and the recovery `report` prints
//! checked against a count made here from the clips' content alone. The clips are
//! frame-coded (each frame shows its index in its pixels): what the stand-in was given is
//! read from the pixels and checked against the plan, frame for frame.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{frameaudit, stderr, stdout};
use frameaudit::core::sampling::linspace;
use serde_json::{Value, json};

/// Frames per clip (4 s at 8 fps).
const T: u64 = 32;
const MODEL: &str = "standin-7b";
const BENCH: &str = "clips";
const BUDGETS: [u64; 3] = [4, 8, 16];
const STRATEGIES: [&str; 4] = ["restore-evidence", "nested", "lower-policy", "swap"];

/// The test clips: the white (event) frame and the red (distractor) frame of each.
const CLIPS: [(&str, u64, Option<u64>); 7] = [
    ("c1", 13, Some(20)),
    ("c2", 17, Some(6)),
    ("c3", 22, Some(28)),
    ("c4", 4, Some(2)),
    ("c5", 26, Some(12)),
    ("c6", 8, None),
    ("c7", 10, Some(14)),
];

/// The stand-in's rule, as its docstring states it: misled by red, right on white.
fn answer(frames: &[u64], event: u64, distractor: Option<u64>) -> &'static str {
    if distractor.is_some_and(|d| frames.contains(&d)) {
        "B"
    } else if frames.contains(&event) {
        "A"
    } else {
        "C"
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn ok(args: &[&str]) -> std::process::Output {
    let o = frameaudit(args);
    assert!(o.status.success(), "{args:?}\n{}", stderr(&o));
    o
}

/// Bits of the frame index each clip's frames carry (`T` = 32 frames need 5; one spare).
const BITS: u32 = 6;

/// A frame-coded clip of `T` frames, 64x64 (tests/standin/harness.py reads it): the top
/// half grey, white at `event` and red at `distractor`; below it a black strip with the
/// frame's own index in `BITS` 8x16 blocks, bit `b` white at x = 8 + 8b when set.
fn make_clip(path: &Path, event: u64, distractor: Option<u64>) {
    let half = |colour: &str, at: u64| {
        format!("drawbox=x=0:y=0:w=64:h=32:color={colour}:t=fill:enable='eq(n\\,{at})'")
    };
    let mut vf = vec![half("white", event)];
    vf.extend(distractor.map(|d| half("red", d)));
    vf.push("drawbox=x=0:y=40:w=64:h=16:color=black:t=fill".into());
    vf.extend((0..BITS).map(|b| {
        format!(
            "drawbox=x={}:y=40:w=8:h=16:color=white:t=fill:enable='mod(floor(n/{})\\,2)'",
            8 + 8 * b,
            1u64 << b
        )
    }));
    let made = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg(format!("color=c=gray:s=64x64:r=8:d={}", T / 8))
        .args(["-vf", &vf.join(",")])
        .args(["-c:v", "mpeg4", "-q:v", "2", "-g", "1"])
        .args(["-pix_fmt", "yuv420p"])
        .arg(path)
        .status()
        .expect("run ffmpeg");
    assert!(made.success(), "ffmpeg could not make {}", path.display());
}

/// The dataset: items, and the stand-in's answers at every budget with the frames each
/// budget sampled (`linspace`, recorded), as a harness run through the recorder gives them.
fn make_dataset(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    // The budgets below the top say another rule (VLMEvalKit's `interior`) than the
    // top's, though their cells record linspace's frames: a lower-policy plan (the lower
    // configuration's rule asked for the top's count) then differs from the top's own
    // frames; with one rule throughout it would be the top's run again, and not planned.
    let top = BUDGETS[BUDGETS.len() - 1];
    let configs: serde_json::Map<String, Value> = BUDGETS
        .iter()
        .map(|&n| {
            let policy = if n == top { "linspace" } else { "interior" };
            (format!("{n}f"), json!({ "policy": policy }))
        })
        .collect();
    std::fs::write(
        dir.join("dataset.json"),
        serde_json::to_string_pretty(&json!({
            "schema": "frameaudit/dataset@1", "name": "standin-clips", "configs": configs}))
        .expect("json"),
    )
    .expect("dataset.json");
    let mut items = String::new();
    let mut cells = String::new();
    for (clip, event, distractor) in CLIPS {
        items.push_str(&format!(
            "{}\n",
            json!({"benchmark": BENCH, "item_id": format!("{clip}-q"),
                "question": "What happened?", "options": ["A. a flash", "B. a red frame", "C. nothing", "D. a cut"],
                "gold": "A", "video": clip, "num_frames": T, "fps": 8.0, "task": "mcq"})
        ));
        for n in BUDGETS {
            let frames = linspace(T, n);
            cells.push_str(&format!(
                "{}\n",
                json!({"model": MODEL, "benchmark": BENCH, "item_id": format!("{clip}-q"),
                    "config": format!("{n}f"), "frames": n, "task": "mcq",
                    "pred": answer(&frames, event, distractor), "gold": "A", "frame_idx": frames})
            ));
        }
    }
    std::fs::write(dir.join("items.jsonl"), items).expect("items");
    std::fs::write(dir.join("cells.jsonl"), cells).expect("cells");
}

/// The annotator's records: each terminal regression on its flip step, from the highest
/// budget below 16f that is right, to 16f, with the event frame marked as evidence.
fn write_audit(path: &Path) {
    let mut flips = Vec::new();
    for (clip, event, distractor) in CLIPS {
        let right = |n: u64| answer(&linspace(T, n), event, distractor) == "A";
        let Some(lower) = [8, 4].into_iter().find(|&n| right(n)) else {
            continue;
        };
        if !right(16) {
            flips.push((clip, lower, 16, event));
        }
    }
    write_audit_of(path, &flips);
}

/// An audit with one done record per `(clip, lower, higher, evidence frame)`.
fn write_audit_of(path: &Path, flips: &[(&str, u64, u64, u64)]) {
    use frameaudit::core::audit::{AuditHeader, AuditRecord, Status, UnitKey};
    let header = AuditHeader {
        dataset_name: "standin-clips".into(),
        fingerprint: "sha256:00".into(),
        annotator: "ann".into(),
        taxonomy_id: "evidence-pathways".into(),
        taxonomy_version: 1,
        created_at: "2026-12-02T00:00:00Z".into(),
        adjudicates: Vec::new(),
    };
    let mut session =
        frameaudit::core::workspace::session::Session::open(path, &header, || {}).expect("audit");
    for &(clip, lower, higher, event) in flips {
        let key = UnitKey::new(MODEL, BENCH, format!("{clip}-q"));
        let mut rec = AuditRecord::blank(key, format!("{lower}f"), format!("{higher}f"), "");
        rec.status = Status::Done;
        rec.pathways = vec!["key_frame_dropped".into()];
        rec.evidence_frames = vec![event];
        session.apply(rec, "2026-12-02T00:00:01Z");
    }
    assert!(session.wait_saved(std::time::Duration::from_secs(5)));
}

/// What the stand-in was given, read from the pixels: each item's decoded frame indices.
type Seen = BTreeMap<String, Vec<u64>>;

/// The [`Seen`] of each re-run, by (strategy, pass, configuration).
type Seens = BTreeMap<(String, u64, String), Seen>;

/// The frame count a configuration's name gives (`16f`).
fn frames_of(config: &str) -> u64 {
    config
        .strip_suffix('f')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no frame count in {config}"))
}

/// The stand-in's `--seen` file of a run of `config`, checked from the pixels against the
/// plan, when the run applied one (its `strategy` and `pass`): every planned item was
/// given its entry's `indices`, frame for frame, every other item the harness's own
/// `linspace` of the configuration's frame count.
fn seen_in(path: &Path, config: &str, plan: Option<(&Path, &str, u64)>) -> Seen {
    let seen: Seen = serde_json::from_value(common::read_json(path)).expect("seen");
    let mut want: Seen = CLIPS
        .iter()
        .map(|c| (format!("{}-q", c.0), linspace(T, frames_of(config))))
        .collect();
    if let Some((plan, strategy, pass)) = plan {
        let p = common::read_json(plan);
        for e in p["entries"].as_array().expect("entries") {
            if e["model"] == MODEL
                && e["strategy"] == strategy
                && e["pass"] == pass
                && e["config"] == config
            {
                let item = e["item_id"].as_str().expect("item").to_string();
                want.insert(
                    item,
                    serde_json::from_value(e["indices"].clone()).expect("indices"),
                );
            }
        }
    }
    for (item, frames) in &want {
        assert_eq!(
            seen.get(item),
            Some(frames),
            "{}: {item} was given other frames than {plan:?} says",
            path.display()
        );
    }
    assert_eq!(seen.len(), want.len(), "{}: {seen:?}", path.display());
    seen
}

/// Runs the stand-in at the top budget, through the recorder when `plan` is given.
fn standin(root: &Path, out: &Path, plan: Option<(&Path, &str, &Path)>) -> std::process::Output {
    standin_at(root, out, plan, 16).0
}

/// Runs the stand-in at `n` frames, through the recorder when `plan` is given; with what
/// it was given, checked against the plan ([`seen_in`]).
fn standin_at(
    root: &Path,
    out: &Path,
    plan: Option<(&Path, &str, &Path)>,
    n: u64,
) -> (std::process::Output, Seen) {
    let script = common::repo().join("tests/standin/harness.py");
    let seen = out.with_extension("seen.json");
    let mut cmd = Command::new("python3");
    if let Some((plan, strategy, log)) = plan {
        cmd.args(["-m", "frameaudit_record", "--log"])
            .arg(log)
            .arg("--plan")
            .arg(plan)
            .args([
                "--run",
                &format!("{MODEL}/{n}f"),
                "--strategy",
                strategy,
                "--",
            ])
            .arg("python3");
    }
    let o = cmd
        .arg(&script)
        .arg("--videos")
        .arg(root.join("videos"))
        .arg("--items")
        .arg(root.join("ds/items.jsonl"))
        .args([
            "--frames",
            &n.to_string(),
            "--config",
            &format!("{n}f"),
            "--out",
        ])
        .arg(out)
        .arg("--seen")
        .arg(&seen)
        .env("PYTHONPATH", common::repo().join("assets/python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("FRAMEAUDIT_RECORD_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run python3");
    assert!(o.status.success(), "the stand-in failed: {o:?}");
    let seen = seen_in(&seen, &format!("{n}f"), plan.map(|(p, st, _)| (p, st, 0)));
    (o, seen)
}

/// A loop's start: the clips, the dataset, the gold table, an annotator's audit and a plan
/// of the four strategies from it (`None`, with a printed note, when python3, ffmpeg or
/// decord is absent).
struct Loop {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    ds: std::path::PathBuf,
    gold: std::path::PathBuf,
    plan: std::path::PathBuf,
}

fn start_loop() -> Option<Loop> {
    for (tool, args) in [
        ("python3", &["--version"][..]),
        ("ffmpeg", &["-version"][..]),
    ] {
        if !common::runs(tool, args) {
            common::skip_note(format_args!(
                "{tool} is absent; skipping the intervention loop test"
            ));
            return None;
        }
    }
    if !common::runs("python3", &["-c", "import decord, numpy"]) {
        common::skip_note(format_args!(
            "decord or numpy is absent; skipping the intervention loop test"
        ));
        return None;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(root.join("videos")).expect("mkdir");
    for (clip, event, distractor) in CLIPS {
        make_clip(&root.join(format!("videos/{clip}.mp4")), event, distractor);
    }
    let ds = root.join("ds");
    make_dataset(&ds);
    let gold = root.join("gold.csv");
    let mut g = String::from("question_id,answer\n");
    for (clip, ..) in CLIPS {
        g.push_str(&format!("{clip}-q,A\n"));
    }
    std::fs::write(&gold, g).expect("gold");

    // The clips' frame codes read back exactly: unsteered, the stand-in is given its own
    // linspace at every budget, and at `T` every frame ([`seen_in`] checks it from the
    // pixels).
    for n in BUDGETS.into_iter().chain([T]) {
        standin_at(&root, &root.join(format!("plain-{n}f.csv")), None, n);
    }
    // It reads the clips as the dataset says: its answers at 16 frames are the dataset's.
    let plain = root.join("plain-16f.csv");
    let table = std::fs::read_to_string(&plain).expect("csv");
    for (clip, event, distractor) in CLIPS {
        let want = answer(&linspace(T, 16), event, distractor);
        assert!(
            table.contains(&format!("{clip}-q,{want}\n")),
            "{clip}: expected {want} at 16f\n{table}"
        );
    }

    // An annotator's audit: on each terminal regression's flip step (the highest right
    // budget to 16f), the event frame marked as evidence.
    let audit = root.join("ann.audit.jsonl");
    write_audit(&audit);
    let plan = root.join("plan.json");
    ok(&[
        "intervene",
        "plan",
        &s(&ds),
        "--audit",
        &s(&audit),
        "--strategy",
        "restore-evidence",
        "--strategy",
        "nested",
        "--strategy",
        "lower-policy",
        "--strategy",
        "swap",
        "-o",
        &s(&plan),
    ]);
    Some(Loop {
        _tmp: tmp,
        root,
        ds,
        gold,
        plan,
    })
}

/// Runs a re-run as `intervene runs --json` lists it: the recorder around the harness, the
/// recorder's package on the path, no log asked of the environment.
fn run_one_listed(r: &serde_json::Value) {
    let argv: Vec<String> = r["recorder"]
        .as_array()
        .expect("recorder")
        .iter()
        .chain(r["harness"].as_array().expect("harness"))
        .map(|a| a.as_str().expect("arg").to_string())
        .collect();
    let o = Command::new(&argv[0])
        .args(&argv[1..])
        .env("PYTHONPATH", common::repo().join("assets/python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("FRAMEAUDIT_RECORD_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run the listed command");
    assert!(o.status.success(), "{argv:?}: {}", stderr(&o));
}

#[test]
fn a_plan_run_through_the_recorder_and_read_back_gives_the_recovery_counted_from_the_clips() {
    let Some(l) = start_loop() else {
        return;
    };
    let (root, ds, plan) = (&l.root, &l.ds, &l.plan);
    let p = common::read_json(plan);
    let entries = p["entries"].as_array().expect("entries");
    let mut seens = Seens::new();
    let before = fingerprint(ds);
    for st in STRATEGIES {
        let csv = root.join(format!("{st}.csv"));
        let log = root.join(format!("{st}.frames.jsonl"));
        let (o, seen) = standin_at(root, &csv, Some((plan, st, &log)), 16);
        seens.insert((st.into(), 0, "16f".into()), seen);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let n = entries.iter().filter(|e| e["strategy"] == st).count();
        assert!(
            err.contains(&format!("steering {n} video(s)")),
            "{st}: {err}"
        );
        let o = import_rerun(&l, &csv, &[&log], st, &[]);
        assert!(o.status.success(), "{st}: {}", stderr(&o));
        let said = stderr(&o);
        assert!(
            said.contains(&format!("kept as protocol intervention:{st}: {n};")),
            "{st}: {said}"
        );
        assert!(
            said.contains(&format!("answers not planned (left out): {}", 7 - n)),
            "{st}: {said}"
        );
    }
    // The count made here, from the frames the stand-in read from its pixels: an entry
    // recovers when they hold the event and not the distractor.
    let expected: BTreeMap<String, (usize, usize)> = truth(plan, "16f", &seens)
        .into_iter()
        .map(|(st, (top, _))| (st, top))
        .collect();
    // Six terminal regressions (c6 stays right at 16 frames), one entry each per strategy
    // but restore-evidence, planned only where 16f dropped the event frame (c1, c2).
    for st in ["nested", "lower-policy", "swap"] {
        assert_eq!(expected[st].0, 6, "{st}: {expected:?}");
    }
    assert_eq!(expected["restore-evidence"].0, 2, "{expected:?}");
    assert_eq!(
        expected["swap"].1, 6,
        "the lower budget's own frames were right"
    );
    // The lower budgets' rule (`interior`) asked for 16 frames: not the top's linspace,
    // and right on the clips whose event it holds and whose distractor it misses.
    let interior: Vec<u64> = (1..=16).map(|i| i * T / 17).collect();
    assert_ne!(interior, linspace(T, 16));
    for e in entries.iter().filter(|e| e["strategy"] == "lower-policy") {
        let idx: Vec<u64> = e["indices"]
            .as_array()
            .expect("indices")
            .iter()
            .map(|i| i.as_u64().expect("index"))
            .collect();
        assert_eq!(idx, interior, "{e}");
    }
    let right = CLIPS
        .iter()
        .filter(|(clip, ..)| *clip != "c6")
        .filter(|&&(_, event, distractor)| answer(&interior, event, distractor) == "A")
        .count();
    assert_eq!(expected["lower-policy"].1, right, "{expected:?}");
    // Their runs are in dataset.json, and the audits' fingerprint is as it was.
    check_runs(ds);
    assert_eq!(fingerprint(ds), before);
    // A terminal plan's restore-evidence entries are made from the annotator's evidence
    // frames, and their cells say whose; nested ones read no audit record.
    for (st, by) in [("restore-evidence", json!(["ann"])), ("nested", json!([]))] {
        let cells =
            std::fs::read_to_string(ds.join(format!("interventions/intervention-{st}.16f.jsonl")))
                .expect("cells");
        for c in cells.lines() {
            let c: Value = serde_json::from_str(c).expect("cell");
            assert_eq!(c["rerun"]["annotators"], by, "{st}: {c}");
        }
    }
    // Imported once, a second import of the same re-run is refused without --force.
    let again = import_rerun(
        &l,
        &root.join("swap.csv"),
        &[&root.join("swap.frames.jsonl")],
        "swap",
        &[],
    );
    assert!(!again.status.success(), "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));

    let o = ok(&["report", &s(ds), "--json", "--boot", "200"]);
    let r: Value = serde_json::from_str(&stdout(&o)).expect("report json");
    let a = r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["protocol"] == "main" && a["scope"] == BENCH)
        .expect("the clips analysis");
    let x = &a["models"][MODEL];
    assert_eq!(x["terminal_regressions"], 6, "{x}");
    let ivs = x["interventions"].as_array().expect("interventions");
    assert_eq!(ivs.len(), 4, "{ivs:#?}");
    for v in ivs {
        let st = v["strategy"].as_str().expect("strategy");
        assert_eq!(v["protocol"], format!("intervention:{st}"));
        let (n, recovered) = expected[st];
        assert_eq!(v["items_with_intervention"], n, "{st}: {v}");
        // Every planned item is a terminal regression (docs/measures.md §11 counts them
        // over the items with an intervention cell).
        assert_eq!(v["terminal_regressions"], n, "{st}: {v}");
        assert_eq!(v["recovered"], recovered, "{st}: {v}");
        let rate = v["recovery_rate"].as_f64().expect("rate");
        assert!(
            (rate - 100.0 * recovered as f64 / n as f64).abs() < 1e-9,
            "{st}: {v}"
        );
        let b = &v["bootstrap"];
        assert_eq!(b["B"], 200);
        let (lo, hi) = (
            b["recovery_rate"]["lo"].as_f64().expect("lo"),
            b["recovery_rate"]["hi"].as_f64().expect("hi"),
        );
        assert!(
            lo <= rate && rate <= hi,
            "{st}: {rate} outside [{lo}, {hi}]"
        );
        // Wilson's score interval, which does not collapse at 0 or n of n.
        let (wlo, whi) = wilson(recovered as f64, n as f64);
        let w = &v["recovery_rate_wilson"];
        assert!(
            (w["lo"].as_f64().expect("lo") - wlo).abs() < 1e-9,
            "{st}: {w}"
        );
        assert!(
            (w["hi"].as_f64().expect("hi") - whi).abs() < 1e-9,
            "{st}: {w}"
        );
        assert!(
            whi - wlo > 10.0,
            "{st}: a few items give a wide interval: {w}"
        );
        eprintln!(
            "recovery under {st}: {recovered} of {n} terminal regressions ({rate:.1}%, bootstrap [{lo:.1}, {hi:.1}], Wilson [{wlo:.1}, {whi:.1}])"
        );
    }
    // The intervention protocols are not analysed as protocols of their own.
    assert!(
        r["analyses"]
            .as_array()
            .expect("analyses")
            .iter()
            .all(|a| !a["protocol"]
                .as_str()
                .unwrap_or("")
                .starts_with("intervention")),
        "an intervention protocol was analysed"
    );

    // The table for the paper.
    let md = stdout(&ok(&[
        "report",
        &s(ds),
        "--format",
        "markdown",
        "--layout",
        "wide",
        "--boot",
        "200",
    ]));
    assert!(md.contains("**Recovery by sampling intervention"), "{md}");
    for st in STRATEGIES {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {BENCH} | {MODEL} | {st} |")))
            .unwrap_or_else(|| panic!("no {st} row:\n{md}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[4], expected[st].0.to_string(), "{row}");
        assert_eq!(cells[6], expected[st].1.to_string(), "{row}");
        // The recovery rate's interval in the table is Wilson's.
        let (n, k) = expected[st];
        let (wlo, whi) = wilson(k as f64, n as f64);
        assert!(
            cells[7].ends_with(&format!("[{wlo:.1}, {whi:.1}]")),
            "{st}: {row}"
        );
    }
    assert!(md.contains("Wilson's 95% score interval"), "{md}");
    // A plan of terminal regressions only: every item re-run at the top was wrong there, so
    // broken (0 of 0) and the accuracy delta (the re-runs' accuracy again) say nothing and
    // are left out of the table and the text (docs/intervention.md §7).
    let head = md
        .lines()
        .find(|l| l.starts_with("| Split | Model | Strategy |"))
        .unwrap_or_else(|| panic!("no recovery table heading:\n{md}"));
    assert!(
        !head.contains("Broken") && !head.contains("Accuracy delta"),
        "{head}"
    );
    let text = stdout(&ok(&["report", &s(ds), "--boot", "200"]));
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("intervention intervention:"))
        .collect();
    for st in STRATEGIES {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("intervention:{st}: recovers"))),
            "no {st} line:\n{text}"
        );
    }
    for l in lines {
        assert!(
            !l.contains("breaks") && !l.contains("accuracy"),
            "broken or the accuracy delta in a terminal plan's line: {l}"
        );
    }
}

/// The dataset's fingerprint, as an audit header records it.
fn fingerprint(ds: &Path) -> String {
    let d = frameaudit::core::dataset::load_dataset(ds, None).expect("dataset");
    frameaudit::core::audit::fingerprint(&d.matrix)
}

/// `dataset.json` after re-runs were imported: the file as `make_dataset` wrote it, with one
/// run per (protocol, model, benchmark, configuration) of the cells in `interventions/` (no
/// more: those of removed files go with them), each of the plan's frames recorded on its
/// cells; and the dataset loads without a word on them.
fn check_runs(ds: &Path) {
    let meta = common::read_json(&ds.join("dataset.json"));
    assert_eq!(
        (&meta["schema"], &meta["name"]),
        (&json!("frameaudit/dataset@1"), &json!("standin-clips")),
        "{meta}"
    );
    let configs: Vec<&String> = meta["configs"]
        .as_object()
        .expect("configs")
        .keys()
        .collect();
    assert_eq!(configs, ["16f", "4f", "8f"], "{meta}");
    let key = |v: &Value| {
        ["protocol", "model", "benchmark", "config"].map(|f| v[f].as_str().expect(f).to_string())
    };
    let mut cells = std::collections::BTreeSet::new();
    for f in std::fs::read_dir(ds.join("interventions")).expect("interventions") {
        let text = std::fs::read_to_string(f.expect("entry").path()).expect("cells");
        cells.extend(
            text.lines()
                .map(|c| key(&serde_json::from_str(c).expect("cell"))),
        );
    }
    let runs = meta["runs"].as_array().expect("runs");
    for r in runs {
        assert_eq!(
            (&r["rule"], &r["provenance"]),
            (&Value::Null, &json!("recorded")),
            "{r}"
        );
    }
    let listed: std::collections::BTreeSet<_> = runs.iter().map(key).collect();
    assert_eq!(listed.len(), runs.len(), "a run listed twice: {meta}");
    assert_eq!(listed, cells, "{meta}");
    let o = ok(&["validate", &s(ds)]);
    assert!(!stderr(&o).contains("runs"), "{}", stderr(&o));
}

/// Wilson's 95% score interval of k of n, in percent, as written in docs/measures.md §11.
fn wilson(k: f64, n: f64) -> (f64, f64) {
    let z = 1.959_963_984_540_054_f64;
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z / d * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((100.0 * (c - h)).max(0.0), (100.0 * (c + h)).min(100.0))
}

/// `import wide-csv` of a re-run's answers `csv`, with the recorder logs `logs`, the loop's
/// plan and strategy `st`, into the loop's dataset; `extra` (`--force`) before `-o`.
fn import_rerun(
    l: &Loop,
    csv: &Path,
    logs: &[&Path],
    st: &str,
    extra: &[&str],
) -> std::process::Output {
    let (csv, gold, plan, ds) = (s(csv), s(&l.gold), s(&l.plan), s(&l.ds));
    let logs: Vec<String> = logs.iter().map(|p| s(p)).collect();
    let mut args = vec![
        "import",
        "wide-csv",
        &csv,
        "--gold",
        &gold,
        "--model",
        MODEL,
        "--benchmark",
        BENCH,
    ];
    for log in &logs {
        args.extend(["--frames-log", log.as_str()]);
    }
    args.extend(["--plan", &plan, "--strategy", st]);
    args.extend(extra);
    args.extend(["-o", &ds]);
    frameaudit(&args)
}

#[test]
fn answers_of_another_re_run_than_the_logged_one_are_refused_naming_both() {
    let Some(l) = start_loop() else {
        return;
    };
    let (nested_csv, nested_log) = (
        l.root.join("nested.csv"),
        l.root.join("nested.frames.jsonl"),
    );
    let (lower_csv, lower_log) = (
        l.root.join("lower-policy.csv"),
        l.root.join("lower-policy.frames.jsonl"),
    );
    standin(&l.root, &nested_csv, Some((&l.plan, "nested", &nested_log)));
    standin(
        &l.root,
        &lower_csv,
        Some((&l.plan, "lower-policy", &lower_log)),
    );
    // The lower-policy re-run's answers with the nested re-run's log: the log's run wrote
    // nested.csv (its command's --out), not these answers.
    let o = import_rerun(&l, &lower_csv, &[&nested_log], "nested", &[]);
    let err = stderr(&o);
    assert!(!o.status.success(), "accepted:\n{err}");
    assert!(
        err.contains(&s(&lower_csv)),
        "the answers not named:\n{err}"
    );
    assert!(
        err.contains(&s(&nested_log)),
        "the logged run not named:\n{err}"
    );
    assert!(
        !l.ds.join("interventions").exists(),
        "a refused import wrote cells"
    );
    // Both logs given: the nested run is the only one of that strategy, and still did not
    // write them.
    let o = import_rerun(&l, &lower_csv, &[&nested_log, &lower_log], "nested", &[]);
    assert!(!o.status.success(), "accepted:\n{}", stderr(&o));
    // Each with its own log, both are kept.
    for (csv, log, st) in [
        (&nested_csv, &nested_log, "nested"),
        (&lower_csv, &lower_log, "lower-policy"),
    ] {
        let o = import_rerun(&l, csv, &[log], st, &[]);
        assert!(o.status.success(), "{st}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("kept as protocol intervention:{st}: 6;")),
            "{st}: {}",
            stderr(&o)
        );
    }
}

/// The plan of `strategies` over the audited flips (`--targets audited`): c7 is right at 4
/// frames and wrong at 8 (its red frame comes in), an audited flip below the top, beside
/// the terminal flips of c1 and c2 to 16f.
fn audited_plan(l: &Loop, strategies: &[&str]) -> std::path::PathBuf {
    let audit = l.root.join("two.audit.jsonl");
    write_audit_of(
        &audit,
        &[("c1", 8, 16, 13), ("c2", 8, 16, 17), ("c7", 4, 8, 10)],
    );
    let plan = l.root.join("audited.json");
    let (ds, audit_s, plan_s) = (s(&l.ds), s(&audit), s(&plan));
    let mut args = vec!["intervene", "plan", &ds, "--audit", &audit_s];
    args.extend(["--targets", "audited"]);
    for st in strategies {
        args.extend(["--strategy", st]);
    }
    args.extend(["-o", &plan_s]);
    ok(&args);
    plan
}

/// An audited plan of `nested` over two configurations (c7's flip 4f→8f beside the
/// terminal flips of c1 and c2 to 16f), re-run at 8f and 16f through the recorder and each
/// imported with its log; the loop comes back with this plan, and what each re-run gave the
/// stand-in.
fn audited_imports(l: Loop) -> (Loop, Seens) {
    let plan = audited_plan(&l, &["nested"]);
    let p = common::read_json(&plan);
    let configs: Vec<&str> = p["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["config"].as_str().expect("config"))
        .collect();
    assert_eq!(configs.len(), 3, "{p}");
    assert!(configs.contains(&"8f") && configs.contains(&"16f"), "{p}");
    let l = Loop { plan, ..l };
    let mut seens = Seens::new();
    for n in [8, 16] {
        let (csv, log) = (
            l.root.join(format!("nested-{n}f.csv")),
            l.root.join(format!("nested-{n}f.frames.jsonl")),
        );
        let (_, seen) = standin_at(&l.root, &csv, Some((&l.plan, "nested", &log)), n);
        seens.insert(("nested".into(), 0, format!("{n}f")), seen);
        let o = import_rerun(&l, &csv, &[&log], "nested", &[]);
        assert!(o.status.success(), "{n}f: {}", stderr(&o));
        let kept = configs.iter().filter(|c| **c == format!("{n}f")).count();
        assert!(
            stderr(&o).contains(&format!("kept as protocol intervention:nested: {kept};")),
            "{n}f: {}",
            stderr(&o)
        );
    }
    (l, seens)
}

/// The nested row of the report's clips analysis.
fn nested_recovery(ds: &Path) -> Value {
    let o = ok(&["report", &s(ds), "--json", "--boot", "0"]);
    let r: Value = serde_json::from_str(&stdout(&o)).expect("report json");
    let a = r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["protocol"] == "main" && a["scope"] == BENCH)
        .expect("the clips analysis");
    let v = a["models"][MODEL]["interventions"][0].clone();
    assert_eq!(v["strategy"], "nested", "{v}");
    v
}

#[test]
fn an_audited_plan_of_two_configurations_imports_whole() {
    let Some(l) = start_loop() else {
        return;
    };
    let (l, seens) = audited_imports(l);
    // Each configuration's re-run has a file of its own, and the dataset reads both.
    for n in [8, 16] {
        let f =
            l.ds.join(format!("interventions/intervention-nested.{n}f.jsonl"));
        assert!(f.is_file(), "{} missing", f.display());
    }
    // The truth the stand-in implies, from the frames it read from its pixels: the 16f
    // re-runs (c1, c2) are of terminal regressions, the 8f one (c7, right at 4f) of a
    // transition below the top.
    let (top, below) = truth(&l.plan, "16f", &seens)["nested"];
    assert_eq!((top.0, below.0), (2, 1), "{seens:?}");
    let v = nested_recovery(&l.ds);
    eprintln!(
        "audited nested: {} of {} terminal regressions, {} of {} transitions below the top",
        top.1, top.0, below.1, below.0
    );
    // The 8f re-run is not counted as recovering the 16f terminal regression it never ran.
    assert_eq!(v["items_with_intervention"], top.0, "{v}");
    assert_eq!(v["terminal_regressions"], top.0, "{v}");
    assert_eq!(v["recovered"], top.1, "{v}");
    // It is the recovery of its own transition, 4f to 8f.
    assert_eq!(v["transition_regressions"], below.0, "{v}");
    assert_eq!(v["transition_recovered"], below.1, "{v}");
    assert_eq!(v["transitions"][0]["config"], "8f", "{v}");
    assert_eq!(v["transitions"][0]["regressions"], below.0, "{v}");
    let text = stdout(&ok(&["report", &s(&l.ds), "--boot", "0"]));
    // "1 transition", "2 transitions".
    let counted = |n: u64, noun: &str| match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    };
    let (top_n, below_n) = (top.0 as u64, below.0 as u64);
    assert!(
        text.contains(&format!(
            "intervention intervention:nested: recovers {} of {}",
            top.1,
            counted(top_n, "terminal regression")
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "intervention intervention:nested: recovers {} of {} below the top",
            below.1,
            counted(below_n, "transition")
        )),
        "{text}"
    );
}

#[test]
fn a_re_import_from_another_plan_replaces_the_strategy_s_files_of_the_old_one() {
    let Some(l) = start_loop() else {
        return;
    };
    let terminal = l.plan.clone();
    let (l, _) = audited_imports(l);
    let old_8f = l.ds.join("interventions/intervention-nested.8f.jsonl");
    // Re-planned: the terminal plan re-runs nested at 16f only; the audited plan's 8f file
    // would count beside its cells.
    let l = Loop {
        plan: terminal,
        ..l
    };
    let (csv, log) = (
        l.root.join("nested.csv"),
        l.root.join("nested.frames.jsonl"),
    );
    standin(&l.root, &csv, Some((&l.plan, "nested", &log)));
    let o = import_rerun(&l, &csv, &[&log], "nested", &[]);
    let err = stderr(&o);
    assert!(!o.status.success(), "accepted:\n{err}");
    assert!(
        err.contains(&s(&old_8f)),
        "the old plan's file not named:\n{err}"
    );
    assert!(old_8f.is_file(), "removed without --force");
    let o = import_rerun(&l, &csv, &[&log], "nested", &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !old_8f.exists(),
        "the old plan's file is left:\n{}",
        stderr(&o)
    );
    // Its run goes with it.
    assert!(
        stderr(&o).contains("runs removed with their cells: standin-7b clips 8f"),
        "{}",
        stderr(&o)
    );
    check_runs(&l.ds);
    // Only the new plan's cells count: its six nested entries, all at 16f.
    let v = nested_recovery(&l.ds);
    assert_eq!(v["items_with_intervention"], 6, "{v}");
    let cells = std::fs::read_to_string(l.ds.join("interventions/intervention-nested.16f.jsonl"))
        .expect("16f cells");
    let plan_hash = cells
        .lines()
        .map(|c| serde_json::from_str::<Value>(c).expect("cell")["plan"].to_string())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(plan_hash.len(), 1, "one plan per file: {plan_hash:?}");
    assert!(
        plan_hash.iter().all(|h| h.starts_with("\"sha256:")),
        "{plan_hash:?}"
    );
}

#[test]
fn frames_lists_an_item_s_intervention_runs_with_their_frames_and_where_they_come_from() {
    let Some(l) = start_loop() else {
        return;
    };
    let (l, _) = audited_imports(l);
    let p = common::read_json(&l.plan);
    let entry = p["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["item_id"] == "c7-q")
        .expect("c7's entry")
        .clone();
    let indices: Vec<u64> = serde_json::from_value(entry["indices"].clone()).expect("indices");
    let log = l.root.join("nested-8f.frames.jsonl");
    let answers = l.root.join("nested-8f.csv");
    let o = ok(&["frames", &s(&l.ds), "c7-q", "--json"]);
    let j: Value = serde_json::from_str(&stdout(&o)).expect("frames json");
    let runs = j["interventions"].as_array().expect("interventions");
    assert_eq!(runs.len(), 1, "{j}");
    let r = &runs[0];
    assert_eq!(r["protocol"], "intervention:nested", "{r}");
    assert_eq!(r["config"], "8f", "{r}");
    assert_eq!(r["frame_idx"], json!(indices), "{r}");
    assert!(
        r["plan"].as_str().is_some_and(|h| h.starts_with("sha256:")),
        "{r}"
    );
    let w = &r["rerun"];
    assert_eq!(w["plan_file"], s(&l.plan), "{r}");
    assert_eq!(w["targets"], "audited", "{r}");
    assert_eq!(w["strategy"], "nested", "{r}");
    assert_eq!(w["pass"], 0, "{r}");
    assert_eq!(
        (&w["lower"], &w["config"]),
        (&json!("4f"), &json!("8f")),
        "{r}"
    );
    assert_eq!(w["log"], s(&log), "{r}");
    assert_eq!(w["log_line"], 1, "{r}");
    // The annotator whose record on c7's 4f -> 8f the plan entry was made from (the audit
    // header's), from the plan onto the cell.
    assert_eq!(entry["annotators"], json!(["ann"]), "{entry}");
    assert_eq!(w["annotators"], json!(["ann"]), "{r}");
    assert_eq!(w["answers"], s(&answers), "{r}");
    assert_eq!(
        r["file"], "interventions/intervention-nested.8f.jsonl",
        "{r}"
    );
    // The text says the same.
    let text = stdout(&ok(&["frames", &s(&l.ds), "c7-q", "--no-images"]));
    let first = format!(
        "↻ intervention:nested 8f  {:>3} frames  [recorded]: {}@",
        indices.len(),
        indices[0]
    );
    assert!(text.contains(&first), "{text}");
    for want in [
        format!("from plan {}", s(&l.plan)),
        "targets audited, strategy nested pass 0, transition 4f -> 8f, audited by ann;".into(),
        format!("recorder log {} (run at line 1)", s(&log)),
        format!("answers {}", s(&answers)),
    ] {
        assert!(text.contains(&want), "no {want:?}:\n{text}");
    }
}

#[test]
fn messages_say_what_is_wrong_when_the_audit_and_the_logs_were_given() {
    let Some(l) = start_loop() else {
        return;
    };
    // An audit on c1's flip only: restore-evidence of the other terminal regressions is
    // skipped because no record given is on them, not for want of --audit.
    let audit = l.root.join("c1.audit.jsonl");
    write_audit_of(&audit, &[("c1", 8, 16, 13)]);
    let plan = l.root.join("c1.json");
    ok(&[
        "intervene",
        "plan",
        &s(&l.ds),
        "--audit",
        &s(&audit),
        "--strategy",
        "restore-evidence",
        "-o",
        &s(&plan),
    ]);
    let p = common::read_json(&plan);
    let skipped = p["skipped"].as_array().expect("skipped");
    let c3 = skipped
        .iter()
        .find(|x| x["item_id"] == "c3-q")
        .unwrap_or_else(|| panic!("c3 not skipped: {p}"));
    let why = c3["why"].as_str().expect("why");
    assert!(
        why.contains("none of the audit records given (--audit) is on this unit")
            && !why.contains("give --audit"),
        "{why}"
    );
    // Two re-runs of one configuration (nested and swap, both 16f) in one import under
    // --plan: no advice to re-label with --config, which the plan would not match.
    let mut answers = Vec::new();
    let mut logs = Vec::new();
    for st in ["nested", "swap"] {
        let (csv, log) = (
            l.root.join(format!("{st}.csv")),
            l.root.join(format!("{st}.frames.jsonl")),
        );
        standin(&l.root, &csv, Some((&l.plan, st, &log)));
        answers.push(s(&csv));
        logs.push(s(&log));
    }
    let (gold, plan, ds) = (s(&l.gold), s(&l.plan), s(&l.ds));
    let mut args = vec!["import", "wide-csv", &answers[0], &answers[1]];
    args.extend(["--gold", &gold, "--model", MODEL, "--benchmark", BENCH]);
    for log in &logs {
        args.extend(["--frames-log", log.as_str()]);
    }
    args.extend(["--plan", &plan, "--strategy", "nested", "-o", &ds]);
    let o = frameaudit(&args);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // The second table's column is left out (an earlier file holds it), and the import
    // says so, under --plan as without it.
    assert!(
        err.contains("skipped 1: swap.csv: column 16f left out: an earlier file holds model"),
        "{err}"
    );
    assert!(!err.contains("--config"), "{err}");
}

/// `intervene runs PLAN --harness command --json` for the stand-in, into `dir`; each listed
/// re-run run as printed (the recorder's command, then the harness's); then `import reruns
/// dir` into the loop's dataset, `extra` (`--force`) given. Returns the re-runs listed and
/// what each gave the stand-in, checked against the plan ([`seen_in`]).
fn run_listed(l: &Loop, plan: &Path, dir: &Path, extra: &[&str]) -> (Vec<Value>, Seens) {
    let template = format!(
        "python3 {} --videos {} --items {} --frames {{frames}} --config {{config}} --out {{out}}/answers.csv --seen {{out}}/seen.json",
        s(&common::repo().join("tests/standin/harness.py")),
        s(&l.root.join("videos")),
        s(&l.root.join("ds/items.jsonl")),
    );
    let o = ok(&[
        "intervene",
        "runs",
        &s(plan),
        "--harness",
        "command",
        "--command",
        &template,
        "--dir",
        &s(dir),
        "--json",
    ]);
    let runs: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("runs json");
    // The text lists the same re-runs, with commands a shell reads back.
    let text = stdout(&ok(&[
        "intervene",
        "runs",
        &s(plan),
        "--harness",
        "command",
        "--command",
        &template,
        "--dir",
        &s(dir),
    ]));
    assert_eq!(
        text.matches("python3 -m frameaudit_record").count(),
        runs.len(),
        "{text}"
    );
    let mut seens = Seens::new();
    for r in &runs {
        let out = Path::new(r["out"].as_str().expect("out"));
        std::fs::create_dir_all(out).expect("mkdir");
        run_one_listed(r);
        let run = (
            r["strategy"].as_str().expect("strategy").to_string(),
            r["pass"].as_u64().expect("pass"),
            r["config"].as_str().expect("config").to_string(),
        );
        let seen = seen_in(&out.join("seen.json"), &run.2, Some((plan, &run.0, run.1)));
        seens.insert(run, seen);
    }
    let (gold, plan, ds) = (s(&l.gold), s(plan), s(&l.ds));
    let dir = s(dir);
    let mut args = vec![
        "import",
        "reruns",
        &dir,
        "--plan",
        &plan,
        "--gold",
        &gold,
        "--model",
        MODEL,
        "--benchmark",
        BENCH,
    ];
    args.extend(extra);
    args.extend(["-o", &ds]);
    let o = frameaudit(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    (runs, seens)
}

/// Per strategy: (terminal re-runs, right), (re-runs below the top, right).
type Truth = BTreeMap<String, ((usize, usize), (usize, usize))>;

/// The [`Truth`] the clips' content implies for the frames each planned item was given,
/// as the stand-in read them from its pixels in its re-run (`seens`).
fn truth(plan: &Path, top: &str, seens: &Seens) -> Truth {
    let p = common::read_json(plan);
    let mut out = Truth::new();
    for e in p["entries"].as_array().expect("entries") {
        let item = e["item_id"].as_str().expect("item");
        let &(_, event, distractor) = CLIPS
            .iter()
            .find(|c| format!("{}-q", c.0) == item)
            .expect("clip");
        let strategy = e["strategy"].as_str().expect("strategy");
        let run = (
            strategy.to_string(),
            e["pass"].as_u64().expect("pass"),
            e["config"].as_str().expect("config").to_string(),
        );
        let seen = &seens
            .get(&run)
            .unwrap_or_else(|| panic!("no re-run of {run:?}"))[item];
        let right = usize::from(answer(seen, event, distractor) == "A");
        let at = out.entry(strategy.into()).or_default();
        let at = if e["config"] == top {
            &mut at.0
        } else {
            &mut at.1
        };
        at.0 += 1;
        at.1 += right;
    }
    out
}

/// Each strategy's row of the report against `want`.
fn check_recoveries(ds: &Path, want: &Truth) {
    let o = ok(&["report", &s(ds), "--json", "--boot", "0"]);
    let r: Value = serde_json::from_str(&stdout(&o)).expect("report json");
    let a = r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["protocol"] == "main" && a["scope"] == BENCH)
        .expect("the clips analysis");
    let ivs = a["models"][MODEL]["interventions"]
        .as_array()
        .expect("interventions");
    assert_eq!(ivs.len(), want.len(), "{ivs:#?}");
    for v in ivs {
        let st = v["strategy"].as_str().expect("strategy");
        let ((n, k), (tn, tk)) = want[st];
        assert_eq!(
            (&v["terminal_regressions"], &v["recovered"]),
            (&json!(n), &json!(k)),
            "{st}: {v}"
        );
        assert_eq!(
            (&v["transition_regressions"], &v["transition_recovered"]),
            (&json!(tn), &json!(tk)),
            "{st}: {v}"
        );
        eprintln!("{st}: terminal {k} of {n}, below the top {tk} of {tn}");
    }
}

#[test]
fn the_re_runs_listed_for_a_plan_run_as_printed_and_imported_as_a_folder_give_the_truth() {
    let Some(l) = start_loop() else {
        return;
    };
    // The terminal plan of four strategies: one re-run each, all at 16f.
    let dir = l.root.join("reruns");
    let (runs, terminal) = run_listed(&l, &l.plan, &dir, &[]);
    assert_eq!(runs.len(), 4, "{runs:#?}");
    let want = truth(&l.plan, "16f", &terminal);
    assert_eq!(want.len(), 4);
    check_recoveries(&l.ds, &want);

    // An audited plan of nested and swap over two configurations (c7's 4f→8f beside the
    // terminal flips of c1 and c2): four re-runs, two per pass of each strategy's
    // configurations, sorted out of one folder; it replaces the terminal plan's files of
    // those strategies (--force).
    let plan = audited_plan(&l, &["nested", "swap"]);
    let dir = l.root.join("reruns-audited");
    let (runs, seens) = run_listed(&l, &plan, &dir, &["--force"]);
    let configs: std::collections::BTreeSet<&str> = runs
        .iter()
        .map(|r| r["config"].as_str().expect("config"))
        .collect();
    assert_eq!(configs, ["16f", "8f"].into_iter().collect(), "{runs:#?}");
    let mut want = truth(&plan, "16f", &seens);
    for st in ["lower-policy", "restore-evidence"] {
        want.insert(st.into(), truth(&l.plan, "16f", &terminal)[st]);
    }
    assert_eq!((want["nested"].0.0, want["nested"].1.0), (2, 1), "{want:?}");
    check_recoveries(&l.ds, &want);
    check_runs(&l.ds);
}

/// Runs whose names meet as file names: `a/b`, `a-b`, `a b` and `A-b` (one file on a file
/// system that ignores case) are all `a-b`, and `x__y` at `z` and `x` at `y__z` both
/// `x__y__z`.
const MEETING: [(&str, &str); 6] = [
    ("a/b", "16f"),
    ("a-b", "16f"),
    ("a b", "16f"),
    ("A-b", "16f"),
    ("x__y", "z"),
    ("x", "y__z"),
];

/// `intervene runs` gives each (model, configuration) of [`MEETING`] a folder and a
/// recorder log of its own, the same each time the plan is listed and in each strategy's
/// folder. Each listed command run through the recorder (python3 only: the harness writes
/// the model's name into its folder) leaves a log of that one run, and the answers in each
/// folder are bound to the logged run of their own model alone, as `import reruns` binds
/// them (`LoggedRun::wrote`).
#[test]
fn re_runs_whose_names_meet_as_file_names_get_folders_and_logs_of_their_own() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().canonicalize().expect("canonical");
    let mut entries = Vec::new();
    for strategy in ["swap", "nested"] {
        for (model, config) in MEETING {
            entries.push(
                json!({"model": model, "benchmark": BENCH, "item_id": "c1-q",
                "config": config, "lower": "8f", "video": "c1", "num_frames": T,
                "indices": [0, 9, 18], "strategy": strategy, "pass": 0}),
            );
        }
    }
    let plan = root.join("plan.json");
    std::fs::write(
        &plan,
        json!({"schema": "frameaudit/plan@1", "dataset": "d", "strategies": ["swap", "nested"],
            "entries": entries})
        .to_string(),
    )
    .expect("plan");
    let dir = root.join("reruns");
    let list = || {
        stdout(&ok(&[
            "intervene",
            "runs",
            &s(&plan),
            "--harness",
            "command",
            "--command",
            "python3 -c 'import sys; open(sys.argv[2], \"w\").write(sys.argv[4])' --out {out}/answers.txt --model {model}",
            "--dir",
            &s(&dir),
            "--json",
        ]))
    };
    let text = list();
    assert_eq!(list(), text, "the same plan, the same names");
    let runs: Vec<Value> = serde_json::from_str(&text).expect("runs json");
    assert_eq!(runs.len(), 2 * MEETING.len(), "{runs:#?}");
    let field = |r: &Value, k: &str| r[k].as_str().expect(k).to_string();
    for key in ["out", "log"] {
        let distinct: std::collections::BTreeSet<String> =
            runs.iter().map(|r| field(r, key).to_lowercase()).collect();
        assert_eq!(distinct.len(), runs.len(), "{key}: {distinct:#?}");
    }
    // A run's name is its (model, configuration)'s in every strategy's folder.
    let name = |r: &Value| {
        let out = field(r, "out");
        Path::new(&out)
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned()
    };
    for r in &runs[..MEETING.len()] {
        let twin = &runs[MEETING.len()..]
            .iter()
            .find(|t| t["model"] == r["model"] && t["config"] == r["config"])
            .expect("the nested run");
        assert_eq!(name(r), name(twin));
        assert_eq!(field(r, "log"), format!("{}.frames.jsonl", field(r, "out")));
    }

    if !common::runs("python3", &["--version"]) {
        common::skip_note(format_args!(
            "python3 is absent; skipping the recorder's run of the listed re-runs"
        ));
        return;
    }
    for r in &runs {
        std::fs::create_dir_all(field(r, "out")).expect("mkdir");
        run_one_listed(r);
    }
    use frameaudit::core::import::frames_log;
    let logged: Vec<frames_log::LoggedRun> = runs
        .iter()
        .map(|r| {
            let mut skips = Vec::new();
            let mut l = frames_log::read(Path::new(&field(r, "log")), &mut skips).expect("log");
            assert_eq!(l.len(), 1, "{}: one run, none over it", field(r, "log"));
            l.remove(0)
        })
        .collect();
    for (r, l) in runs.iter().zip(&logged) {
        let model = field(r, "model");
        let p = l.plan.as_ref().expect("the plan applied");
        assert_eq!(p.run, format!("{model}/{}", field(r, "config")));
        assert_eq!(p.strategy, field(r, "strategy"));
        let answers = Path::new(&field(r, "out")).join("answers.txt");
        assert_eq!(std::fs::read_to_string(&answers).expect("answers"), model);
        for (other, ol) in runs.iter().zip(&logged) {
            let bound = ol.wrote(&answers);
            if std::ptr::eq(other, r) {
                assert_eq!(bound, Ok(()), "{}", answers.display());
            } else {
                assert!(
                    bound.is_err(),
                    "{} bound to {}",
                    answers.display(),
                    ol.describe()
                );
            }
        }
    }
}
