//! `report --json` against an independent implementation of docs/measures.md (tests/reference,
//! plain Python written from the spec alone) on random matrices that no test was tuned to: each
//! seed generates a matrix and a set of parameters; both programs must agree to docs/measures.md
//! §0's tolerance, on the report and on the per-item export, and must reject the same inputs.
//!
//! `FRAMEAUDIT_XCHECK_SEEDS=FROM..TO` chooses other seeds (default 7001..7040).

mod common;

use std::path::Path;
use std::process::Command;

fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip_note(format_args!(
            "python3 is absent; skipping the cross-check against the reference"
        ));
    }
    ok.then_some("python3")
}

fn seeds() -> std::ops::Range<u64> {
    std::env::var("FRAMEAUDIT_XCHECK_SEEDS")
        .ok()
        .and_then(|s| {
            let (a, b) = s.split_once("..")?;
            Some(a.parse().ok()?..b.parse().ok()?)
        })
        .unwrap_or(7001..7041)
}

fn run_case(py: &str, seed: u64, dir: &Path) -> Result<(), String> {
    let reference = common::repo().join("tests/reference");
    let generated = Command::new(py)
        .arg(reference.join("gen_matrix.py"))
        .arg(seed.to_string())
        .arg(dir)
        .output()
        .map_err(|e| e.to_string())?;
    if !generated.status.success() {
        return Err(format!("generator failed: {}", common::stderr(&generated)));
    }
    let input = if dir.join("cells.csv").exists() {
        dir.join("cells.csv")
    } else {
        dir.join("cells.jsonl")
    };
    let args: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("args.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let reference_run = Command::new(py)
        .arg(reference.join("traj_metrics.py"))
        .arg(&input)
        .args(&args)
        .arg("--items-out")
        .arg(dir.join("ref.items.jsonl"))
        .output()
        .map_err(|e| e.to_string())?;
    let ours = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
        .args(["report", "--json", "-q"])
        .arg(&input)
        .args(&args)
        .arg("--items-out")
        .arg(dir.join("ours.items.jsonl"))
        .output()
        .map_err(|e| e.to_string())?;
    if dir.join("expect_reject").exists() {
        let (r, o) = (reference_run.status.code(), ours.status.code());
        if r != Some(1) || o != Some(1) {
            return Err(format!(
                "invalid input: reference exit {r:?}, frameaudit exit {o:?}"
            ));
        }
        if common::stderr(&ours).trim().is_empty() {
            return Err("frameaudit rejected the input without a message".into());
        }
        return Ok(());
    }
    // A --configs or --cascade-stages name that is no configuration of the data is refused
    // (issue 14: a selection that matches nothing fails), where the reference drops it.
    let err = common::stderr(&ours);
    if ours.status.code() == Some(2)
        && let Some(rest) = err.split("no configuration \"").nth(1)
        && let Some(name) = rest.split('"').next()
    {
        let text = std::fs::read_to_string(&input).map_err(|e| e.to_string())?;
        let given = text.contains(&format!("\"{name}\"")) || text.contains(&format!(",{name},"));
        if given {
            return Err(format!("{name:?} is a configuration of the input: {err}"));
        }
        return Ok(());
    }
    if !reference_run.status.success() {
        return Err(format!(
            "reference failed: {}",
            common::stderr(&reference_run)
        ));
    }
    if !ours.status.success() {
        return Err(format!("frameaudit failed: {}", common::stderr(&ours)));
    }
    std::fs::write(dir.join("ref.json"), &reference_run.stdout).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("ours.json"), &ours.stdout).map_err(|e| e.to_string())?;
    let compare = reference.join("compare.py");
    for (mode, a, b) in [
        (None, "ref.json", "ours.json"),
        (Some("--jsonl"), "ref.items.jsonl", "ours.items.jsonl"),
    ] {
        let mut cmd = Command::new(py);
        cmd.arg(&compare);
        if let Some(m) = mode {
            cmd.arg(m);
        }
        let out = cmd
            .arg(dir.join(a))
            .arg(dir.join(b))
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "{a} vs {b} (args {args:?}):\n{}",
                common::stdout(&out)
            ));
        }
    }
    Ok(())
}

#[test]
fn report_json_agrees_with_the_independent_reference() {
    let Some(py) = python() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut n = 0;
    for seed in seeds() {
        let dir = tmp.path().join(seed.to_string());
        std::fs::create_dir_all(&dir).expect("mkdir");
        n += 1;
        if let Err(e) = run_case(py, seed, &dir) {
            failures.push(format!("seed {seed}: {e}"));
        }
    }
    assert!(n > 0, "no seeds");
    assert!(
        failures.is_empty(),
        "{} of {n} seeds disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
