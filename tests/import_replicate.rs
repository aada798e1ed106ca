//! `frameaudit import ... --replicate NAME --nuisance KIND -o DATASET` (issue 39): a run
//! imported as a replicate of the canonical runs of an existing dataset, through the binary
//! as a user runs it: what is kept and left out, the file written and nothing else, the
//! report's noise floor, `--force`, `--dry-run`, links planted in the dataset, and the shared
//! lmms-eval runs (../shared/data/harness-runs) when present.

mod common;

use std::path::{Path, PathBuf};

use common::{frameaudit, stderr};
use serde_json::{Value, json};

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The Video-MME questions of the runs: (question id, gold letter).
const ITEMS: [(&str, &str); 4] = [
    ("001-1", "C"),
    ("001-2", "B"),
    ("002-1", "D"),
    ("003-1", "A"),
];

/// Writes one lmms-eval (v0.5 layout) Video-MME run into `dir`: `{date}_results.json` and
/// its samples, one answer per item of `ITEMS` (`None`: the item is not in the run).
fn write_run(dir: &Path, date: &str, model_args: &str, preds: [Option<&str>; 4]) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let name = model_args
        .split(',')
        .find_map(|kv| kv.strip_prefix("pretrained="))
        .unwrap_or_default();
    let results = json!({
        "results": {"videomme": {"alias": "videomme"}},
        "config": {"model": "llava_vid", "model_args": model_args},
        "model_name_sanitized": name.replace('/', "__"),
        "lmms_eval_version": "0.5.0",
    });
    std::fs::write(
        dir.join(format!("{date}_results.json")),
        serde_json::to_string_pretty(&results).expect("json"),
    )
    .expect("write");
    let lines: Vec<String> = ITEMS
        .iter()
        .zip(preds)
        .enumerate()
        .filter_map(|(doc, ((qid, gold), pred))| {
            let pred = pred?;
            Some(
                json!({
                    "doc_id": doc, "target": gold, "filtered_resps": [pred],
                    "videomme_perception_score": {
                        "question_id": qid, "duration": "short", "category": "Knowledge",
                        "sub_category": "History", "task_category": "Counting Problem",
                        "pred_answer": pred, "answer": gold,
                    },
                })
                .to_string(),
            )
        })
        .collect();
    std::fs::write(
        dir.join(format!("{date}_samples_videomme.jsonl")),
        lines.join("\n") + "\n",
    )
    .expect("write");
}

/// A dataset of model `org/m` at 8 and 16 frames on the first three items, imported from
/// lmms-eval logs; returns its path.
fn canonical(root: &Path) -> PathBuf {
    let logs = root.join("canonical/org__m");
    write_run(
        &logs,
        "20250101_100000",
        "pretrained=org/m,max_frames_num=8",
        [Some("C"), Some("B"), Some("A"), None],
    );
    write_run(
        &logs,
        "20250101_110000",
        "pretrained=org/m,max_frames_num=16",
        [Some("A"), Some("B"), Some("D"), None],
    );
    let ds = root.join("ds");
    let o = frameaudit(&["import", "lmms-eval", &s(&logs), "-o", &s(&ds)]);
    assert!(o.status.success(), "{}", stderr(&o));
    ds
}

/// The re-run: org/m at 8 frames again on all four items (001-1 now wrong), org/m at 32
/// frames and org/other at 8, which the dataset does not have.
fn rerun(root: &Path) -> PathBuf {
    let logs = root.join("rerun");
    write_run(
        &logs.join("org__m"),
        "20250201_100000",
        "pretrained=org/m,max_frames_num=8",
        [Some("A"), Some("B"), Some("A"), Some("A")],
    );
    write_run(
        &logs.join("org__m"),
        "20250201_110000",
        "pretrained=org/m,max_frames_num=32",
        [Some("C"), Some("B"), Some("D"), None],
    );
    write_run(
        &logs.join("org__other"),
        "20250201_120000",
        "pretrained=org/other,max_frames_num=8",
        [Some("C"), None, None, None],
    );
    logs
}

/// Every file under `dir` with its bytes, links not followed, the replicates folder aside.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            let ft = e.file_type().expect("type");
            if ft.is_dir() {
                if p.file_name().is_some_and(|n| n != "replicates") {
                    stack.push(p);
                }
            } else if ft.is_file() {
                out.push((p.clone(), std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

fn report(ds: &Path) -> Value {
    let o = frameaudit(&["report", &s(ds), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("report JSON")
}

/// The videomme analysis of a report.
fn videomme(r: &Value) -> &Value {
    r["analyses"]
        .as_array()
        .expect("analyses")
        .iter()
        .find(|a| a["scope"] == "videomme")
        .expect("videomme analysis")
}

fn import_replicate(
    logs: &Path,
    ds: &Path,
    name: &str,
    nuisance: &str,
    extra: &[&str],
) -> std::process::Output {
    let (logs, ds) = (s(logs), s(ds));
    let mut args = vec![
        "import",
        "lmms-eval",
        &logs,
        "--replicate",
        name,
        "--nuisance",
        nuisance,
        "-o",
        &ds,
    ];
    args.extend_from_slice(extra);
    frameaudit(&args)
}

/// The matched answers go to `replicates/NAME.jsonl` and nothing else of the dataset
/// changes; the unmatched ones are listed by reason; the report's noise floor counts them.
#[test]
fn a_run_imported_as_a_replicate_feeds_the_noise_floor() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = canonical(tmp.path());
    let logs = rerun(tmp.path());
    let before = snapshot(&ds);
    let file = ds.join("replicates/rerun-1.jsonl");

    // A dry run reads and reports, and writes nothing.
    let o = import_replicate(&logs, &ds, "rerun-1", "rerun", &["--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("dry run: nothing written"),
        "{}",
        stderr(&o)
    );
    assert!(!ds.join("replicates").exists());

    let o = import_replicate(&logs, &ds, "rerun-1", "rerun", &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("replicate rerun-1 (nuisance rerun) of dataset ds: 3 cells kept")
            && err.contains("; 5 left out"),
        "{err}"
    );
    assert!(
        err.contains("left out 3: no configuration \"32f\" in the dataset (first org__m videomme 001-1 at 32f)")
            && err.contains("left out 1: no model \"org__other\" in the dataset (org__other videomme 001-1 at 8f)")
            && err.contains("left out 1: no item \"003-1\" of benchmark \"videomme\" in the dataset (org__m videomme 003-1 at 8f)"),
        "{err}"
    );
    assert!(err.contains("wrote 3 replicate cells to"), "{err}");
    // Exactly the matched answers, as replicates of nuisance rerun.
    let got: Vec<(String, String, String, String, String)> = lines(&file)
        .iter()
        .map(|c| {
            let t = |k: &str| c[k].as_str().expect(k).to_string();
            (
                t("model"),
                t("item_id"),
                t("config"),
                t("pred"),
                format!("{}/{}", t("replicate"), t("nuisance")),
            )
        })
        .collect();
    let want = |i: &str, p: &str| {
        (
            "org__m".to_string(),
            i.to_string(),
            "8f".to_string(),
            p.to_string(),
            "rerun-1/rerun".to_string(),
        )
    };
    assert_eq!(
        got,
        [want("001-1", "A"), want("001-2", "B"), want("002-1", "A")]
    );
    assert_eq!(
        snapshot(&ds),
        before,
        "only replicates/rerun-1.jsonl is written"
    );

    let r = report(&ds);
    assert_eq!(r["input"]["replicate_cells"], json!(3));
    let rep = &videomme(&r)["models"]["org__m"]["replicates"];
    assert_eq!(rep["nuisances"], json!(["rerun"]), "{rep}");
    assert_eq!(rep["floor"]["all"]["pairs"], json!(3), "{rep}");
    assert_eq!(rep["floor"]["all"]["neg"], json!(1), "{rep}");
    // The canonical cells alone make the measures.
    assert_eq!(
        videomme(&r)["models"]["org__m"]["correct_counts"],
        json!([2, 2])
    );

    // The file is there: replaced only with --force.
    let o = import_replicate(&logs, &ds, "rerun-1", "rerun", &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(lines(&file).len(), 3);
    let o = import_replicate(&logs, &ds, "rerun-1", "rerun", &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lines(&file).len(), 3);

    // Another name is another file; a name with a path in it stays in replicates/.
    let o = import_replicate(&logs, &ds, "../../phase/half", "phase", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        lines(&ds.join("replicates/-.-..-phase-half.jsonl")).len(),
        3
    );
    assert!(!tmp.path().join("phase").exists());
    let r = report(&ds);
    assert_eq!(r["input"]["replicate_cells"], json!(6));
    assert_eq!(
        videomme(&r)["models"]["org__m"]["replicates"]["nuisances"],
        json!(["phase", "rerun"])
    );
    assert_eq!(snapshot(&ds), before);
}

/// Two replicate names that share a file (`phase 1` and `phase/1` are both
/// `replicates/phase-1.jsonl`): the second is refused, with --force and --dry-run too, and
/// the first one's cells stay.
#[test]
fn a_name_whose_file_holds_another_replicate_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = canonical(tmp.path());
    let logs = rerun(tmp.path());
    let o = import_replicate(&logs, &ds, "phase 1", "phase", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file = ds.join("replicates/phase-1.jsonl");
    let before = std::fs::read(&file).expect("read");
    for extra in [&[][..], &["--force"][..], &["--dry-run"][..]] {
        let o = import_replicate(&logs, &ds, "phase/1", "phase", extra);
        let err = stderr(&o);
        assert!(!o.status.success(), "{extra:?}: {err}");
        assert!(
            err.contains("replicate \"phase/1\" would be written to")
                && err.contains("phase-1.jsonl, which holds replicate \"phase 1\"")
                && err.contains("give this run another --replicate name"),
            "{extra:?}: {err}"
        );
        assert_eq!(std::fs::read(&file).expect("read"), before, "{extra:?}");
    }
    // The same name replaces its own file with --force, as before.
    let o = import_replicate(&logs, &ds, "phase 1", "phase", &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lines(&file).len(), 3);
}

/// A cell that already has a replicate of the name (here a re-run the plain import found)
/// is left out, saying where; a run none of whose answers match writes nothing.
#[test]
fn answers_already_replicated_under_the_name_are_left_out() {
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = tmp.path().join("logs/org__m");
    write_run(
        &logs,
        "20250101_100000",
        "pretrained=org/m,max_frames_num=8",
        [Some("C"), Some("B"), Some("A"), None],
    );
    write_run(
        &logs,
        "20250102_100000",
        "pretrained=org/m,max_frames_num=8",
        [Some("A"), Some("B"), Some("A"), None],
    );
    let ds = tmp.path().join("ds");
    let o = frameaudit(&["import", "lmms-eval", &s(&logs), "-o", &s(&ds)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = tmp.path().join("again/org__m");
    write_run(
        &again,
        "20250103_100000",
        "pretrained=org/m,max_frames_num=8",
        [Some("C"), Some("B"), Some("D"), None],
    );
    let o = import_replicate(&again, &ds, "rerun-1", "rerun", &[]);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("left out 3: the dataset already has replicate \"rerun-1\" of it (in ")
            && err.contains("nothing written"),
        "{err}"
    );
    assert!(!ds.join("replicates").exists());
    // One replicate name has one nuisance: rerun-1 again as a phase shift is refused.
    let o = import_replicate(&again, &ds, "rerun-1", "phase", &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("already has replicate \"rerun-1\" with nuisance \"rerun\" (at ")
            && stderr(&o).contains("give this run another --replicate name"),
        "{}",
        stderr(&o)
    );
    assert!(!ds.join("replicates").exists());
    // As rerun-2 it is kept.
    let o = import_replicate(&again, &ds, "rerun-2", "rerun", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = report(&ds);
    assert_eq!(r["input"]["replicate_cells"], json!(6));
    assert_eq!(
        videomme(&r)["models"]["org__m"]["replicates"]["floor"]["all"]["pairs"],
        json!(6)
    );
    // rerun-2 again as a phase shift: its own file exists, but what is wrong is the
    // nuisance, and that is said; --force replaces the file, and its nuisance with it.
    let o = import_replicate(&again, &ds, "rerun-2", "phase", &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("already has replicate \"rerun-2\" with nuisance \"rerun\" (at ")
            && stderr(&o).contains("another --replicate name, or --force to replace ")
            && !stderr(&o).contains("--force replaces it"),
        "{}",
        stderr(&o)
    );
    let o = import_replicate(&again, &ds, "rerun-2", "phase", &["--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        lines(&ds.join("replicates/rerun-2.jsonl"))
            .iter()
            .all(|c| c["nuisance"] == "phase")
    );
}

/// --replicate needs an existing dataset, a nuisance, and no --plan.
#[test]
fn replicate_flags_are_checked() {
    let tmp = tempfile::tempdir().expect("tmp");
    let logs = rerun(tmp.path());
    let missing = tmp.path().join("nothing-here");
    let o = import_replicate(&logs, &missing, "rerun-1", "rerun", &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--replicate adds the run to an existing dataset: -o")
            && stderr(&o).contains("is not one"),
        "{}",
        stderr(&o)
    );
    assert!(!missing.exists());
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&logs),
        "--replicate",
        "r",
        "-o",
        &s(&missing),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--nuisance"), "{}", stderr(&o));
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&logs),
        "--replicate",
        "r",
        "--nuisance",
        "rerun",
        "--plan",
        "p.json",
        "-o",
        &s(&missing),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    // An empty name or nuisance is refused before a file is read: the logs here are not
    // there, and that is not what is said.
    let ds = canonical(tmp.path());
    for (name, nuisance, said) in [
        (
            "",
            "rerun",
            "'--replicate <NAME>': a replicate needs a name",
        ),
        ("r", "  ", "'--nuisance <KIND>': a nuisance needs a name"),
    ] {
        let o = import_replicate(&missing, &ds, name, nuisance, &[]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(said), "{}", stderr(&o));
    }
}

/// A link planted in the dataset at `replicates/` or at the replicate's file, leading out
/// of it, is refused, and nothing is written where it leads.
#[cfg(unix)]
#[test]
fn links_in_the_dataset_are_not_followed() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = canonical(tmp.path());
    let logs = rerun(tmp.path());
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");

    symlink(&outside, ds.join("replicates")).expect("link");
    for extra in [&[][..], &["--force"][..]] {
        let o = import_replicate(&logs, &ds, "rerun-1", "rerun", extra);
        assert!(!o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("link"), "{}", stderr(&o));
        assert_eq!(std::fs::read_dir(&outside).expect("dir").count(), 0);
    }
    std::fs::remove_file(ds.join("replicates")).expect("unlink");

    std::fs::create_dir(ds.join("replicates")).expect("mkdir");
    let target = outside.join("victim.jsonl");
    std::fs::write(&target, "").expect("write");
    symlink(&target, ds.join("replicates/rerun-1.jsonl")).expect("link");
    let o = import_replicate(&logs, &ds, "rerun-1", "rerun", &["--force"]);
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "");
    assert_eq!(std::fs::read_dir(&outside).expect("dir").count(), 1);
}

// ---------------------------------------------------------------------------------------
// The shared lmms-eval runs (../shared/data/harness-runs), when this checkout has them
// ---------------------------------------------------------------------------------------

/// `import --force` over a dataset with replicates keeps them and says so; `validate`
/// counts those the new cells leave without a canonical cell.
#[test]
fn replicates_a_forced_import_keeps_are_said_and_counted() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = canonical(tmp.path());
    let o = import_replicate(&rerun(tmp.path()), &ds, "rerun-1", "rerun", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let validate = || {
        let o = frameaudit(&["validate", &s(&ds)]);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).expect("utf-8")
    };
    assert!(!validate().contains("note:"), "{}", validate());
    // The 16-frame run alone replaces the dataset: the replicates at 8 frames match nothing.
    let logs = tmp.path().join("only16/org__m");
    write_run(
        &logs,
        "20250101_110000",
        "pretrained=org/m,max_frames_num=16",
        [Some("A"), Some("B"), Some("D"), None],
    );
    let o = frameaudit(&["import", "lmms-eval", &s(&logs), "-o", &s(&ds), "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "note: the replicates of the dataset replaced stay (replicates/rerun-1.jsonl)"
        ),
        "{}",
        stderr(&o)
    );
    let said = validate();
    assert!(
        said.contains("note: 3 of the 3 replicate cells have no valid canonical cell"),
        "{said}"
    );
}

fn shared_videomme() -> Option<PathBuf> {
    common::shared_harness_runs()
        .map(|runs| runs.join("lmms-eval-0.7.3/videomme"))
        .filter(|p| p.is_dir())
}

/// Copies one run (results and samples) of the shared runs into `dir`, as the run of
/// `as_date` (its date_id, in the names and the text): another invocation of the same
/// arguments, or the same one when `as_date` is `date`.
fn copy_run(from: &Path, date: &str, dir: &Path, as_date: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    for f in ["results.json", "samples_videomme.jsonl"] {
        let text = std::fs::read_to_string(from.join(format!("{date}_{f}"))).expect("read");
        std::fs::write(
            dir.join(format!("{as_date}_{f}")),
            text.replace(date, as_date),
        )
        .expect("write");
    }
}

/// The 13 runs lmms-eval 0.7.3 wrote: Qwen2.5-VL's 16-frame run given again, as another
/// invocation (another date_id), is a re-run, imported as `rerun-1` beside the canonical
/// runs, or with --replicate into the dataset of the canonical runs; either way its 12
/// answers pair with the canonical ones, unchanged. The same invocation given again (a
/// copy of its files) is no re-run: in one import it counts once, and with --replicate it
/// is refused, since a run is no replicate of itself (its floor would be 0).
#[test]
fn the_shared_lmms_eval_runs_rerun_as_replicates() {
    let Some(runs) = shared_videomme() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let qwen = runs.join("Qwen__Qwen2.5-VL-7B-Instruct");
    let date = std::fs::read_dir(&qwen)
        .expect("dir")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let date = name.strip_suffix("_results.json")?.to_string();
            let text = std::fs::read_to_string(e.path()).ok()?;
            text.contains("max_num_frames=16,").then_some(date)
        })
        .next()
        .expect("the 16-frame run of Qwen2.5-VL");
    let again = tmp.path().join("again/Qwen__Qwen2.5-VL-7B-Instruct");
    copy_run(&qwen, &date, &again, "20270101_000000");
    let copy = tmp.path().join("copy/Qwen__Qwen2.5-VL-7B-Instruct");
    copy_run(&qwen, &date, &copy, &date);

    // Together in one import: the copy is a re-run.
    let both = tmp.path().join("both");
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&runs),
        &s(&tmp.path().join("again")),
        "-o",
        &s(&both),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("13 runs") && err.contains("12 replicate cells of 1 re-run"),
        "{err}"
    );
    assert!(
        err.contains("imported as replicate rerun-1 (nuisance rerun)"),
        "{err}"
    );
    let qwen_id = "Qwen__Qwen2.5-VL-7B-Instruct";
    let r = report(&both);
    let floor = &videomme(&r)["models"][qwen_id]["replicates"]["floor"]["all"];
    assert_eq!(
        (floor["pairs"].as_u64(), floor["disagree"].as_u64()),
        (Some(12), Some(0)),
        "{floor}"
    );

    // Into the dataset of the canonical runs, with --replicate: the same pairs.
    let ds = tmp.path().join("ds");
    let o = frameaudit(&["import", "lmms-eval", &s(&runs), "-o", &s(&ds)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = import_replicate(&again, &ds, "rerun-1", "rerun", &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("12 cells kept") && err.contains("; 0 left out"),
        "{err}"
    );
    assert_eq!(lines(&ds.join("replicates/rerun-1.jsonl")).len(), 12);
    let r2 = report(&ds);
    assert_eq!(
        videomme(&r2)["models"][qwen_id]["replicates"],
        videomme(&r)["models"][qwen_id]["replicates"]
    );

    // The copy of the run beside it counts once: no re-run.
    let once = tmp.path().join("once");
    let o = frameaudit(&[
        "import",
        "lmms-eval",
        &s(&runs),
        &s(&tmp.path().join("copy")),
        "-o",
        &s(&once),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("13 runs") && !err.contains("re-run") && err.contains("1 record skipped"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "_samples_videomme.jsonl (the same run, {date}, and the same bytes), counted once"
        )),
        "{err}"
    );
    // With --replicate, the run itself is refused, answer by answer.
    let o = import_replicate(&copy, &once, "rerun-1", "rerun", &[]);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "left out 12: it is the canonical cell's own answer: both come from run {date}"
        )),
        "{err}"
    );
    assert!(!once.join("replicates").exists());
}

// ---------------------------------------------------------------------------------------
// The per-item CSV
// ---------------------------------------------------------------------------------------

/// `import per-item-csv` writes the optional `replicate`, `nuisance` and `cluster` columns
/// through to the cells; with `--replicate NAME --nuisance KIND` a re-run's CSV becomes a
/// file of replicates for a dataset's replicates/ folder (rows with a replicate keep it).
#[test]
fn per_item_csv_writes_replicates_through_and_makes_a_replicates_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let header = "sample_id,model,split,config,frame_count,predicted_option,ground_truth_option,replicate,nuisance,cluster";
    let canonical = tmp.path().join("canonical.csv");
    std::fs::write(
        &canonical,
        format!("{header}\nq1,M,b,8f,8,A,A,,,v1\nq1,M,b,16f,16,B,A,,,v1\nq2,M,b,8f,8,A,A,,,v2\nq2,M,b,16f,16,A,A,,,v2\nq1,M,b,8f,8,B,A,phase-1,phase,\n"),
    )
    .expect("write");
    let ds = tmp.path().join("ds");
    std::fs::create_dir_all(ds.join("replicates")).expect("mkdir");
    let o = frameaudit(&[
        "import",
        "per-item-csv",
        &s(&canonical),
        "-o",
        &s(&ds.join("cells.jsonl")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cells = lines(&ds.join("cells.jsonl"));
    assert_eq!(cells.len(), 5);
    assert_eq!(cells[0]["cluster"], "v1");
    assert_eq!(
        (&cells[4]["replicate"], &cells[4]["nuisance"]),
        (&json!("phase-1"), &json!("phase"))
    );
    assert!(cells[..4].iter().all(|c| c.get("replicate").is_none()));

    // The re-run's CSV: 8f answers again, one of them already a replicate of its own.
    let again = tmp.path().join("rerun.csv");
    std::fs::write(
        &again,
        format!(
            "{header}\nq1,M,b,8f,8,B,A,,,\nq2,M,b,8f,8,A,A,,,\nq2,M,b,8f,8,B,A,phase-1,phase,\n"
        ),
    )
    .expect("write");
    let file = ds.join("replicates/rerun-1.jsonl");
    let o = frameaudit(&[
        "import",
        "per-item-csv",
        &s(&again),
        "--replicate",
        "rerun-1",
        "--nuisance",
        "rerun",
        "-o",
        &s(&file),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reps: Vec<(String, String)> = lines(&file)
        .iter()
        .map(|c| {
            (
                c["replicate"].as_str().expect("replicate").into(),
                c["nuisance"].as_str().expect("nuisance").into(),
            )
        })
        .collect();
    let r = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        reps,
        [
            r("rerun-1", "rerun"),
            r("rerun-1", "rerun"),
            r("phase-1", "phase")
        ]
    );
    let rep = report(&ds);
    assert_eq!(rep["input"]["replicate_cells"], json!(4));
    let floor = &rep["analyses"][0]["models"]["M"]["replicates"]["floor"];
    assert_eq!(floor["by_nuisance"]["rerun"]["pairs"], json!(2), "{floor}");
    assert_eq!(floor["by_nuisance"]["phase"]["pairs"], json!(2), "{floor}");
}
