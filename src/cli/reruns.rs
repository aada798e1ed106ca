//! The re-runs of a plan as a researcher runs them (docs/intervention.md §8): `intervene runs`
//! lists each re-run a plan needs with its recorder and harness command, laid out in one
//! folder, and `import reruns` reads that folder back, sorting its runs into one import per
//! strategy and pass by what each recorder log says it applied.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::args::{ImportCommon, LmmsArgs, RerunsArgs, RunsArgs, RunsHarness, VlmArgs, WideArgs};
use crate::core::import::frames_log;
use crate::core::paths::UniqueNames;
use crate::core::plan::Plan;
use crate::core::replicate::safe_file_name;
use crate::core::text::{count, sanitize};

/// One re-run a plan needs: a harness run of one model and configuration under one
/// strategy and pass.
#[derive(Debug, Serialize)]
struct Rerun {
    strategy: String,
    pass: u64,
    model: String,
    config: String,
    /// The benchmarks of its planned items, in plan order.
    benchmarks: Vec<String>,
    /// Its planned items, in plan order.
    items: Vec<String>,
    /// The folder the harness writes to.
    out: String,
    /// The recorder's log.
    log: String,
    /// The recorder's command, the harness's after its `--`.
    recorder: Vec<String>,
    /// The harness's command.
    harness: Vec<String>,
    /// What limits the run to the planned items, or why nothing does.
    note: String,
}

/// The frame count a configuration's name gives (`16f`, `64f-448px`), as the importers
/// read it; none for a text-only one, which no plan re-runs.
fn frames_of(config: &str) -> Option<u64> {
    crate::core::import::frames_from_label(config).filter(|&n| n > 0)
}

/// The placeholders `--command` fills in for each re-run, in the order [`fill`] takes
/// their values.
const PLACEHOLDERS: [&str; 5] = ["model", "config", "frames", "benchmark", "out"];

/// `word` with each `{placeholder}` replaced by its value, given in [`PLACEHOLDERS`]' order.
fn fill(word: &str, values: [&str; 5]) -> String {
    PLACEHOLDERS
        .iter()
        .zip(values)
        .fold(word.to_string(), |w, (name, value)| {
            w.replace(&format!("{{{name}}}"), value)
        })
}

/// Refuses a `{word}` in the command that is not a placeholder (a typo would be passed to
/// the harness as it is); other braces (a JSON argument, `{}`) are left alone.
fn check_placeholders(words: &[String]) -> Result<()> {
    let mut unknown = Vec::new();
    for w in words {
        let mut rest = w.as_str();
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else { break };
            let name = &after[..close];
            let word = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if word && !PLACEHOLDERS.contains(&name) && !unknown.contains(&name) {
                unknown.push(name);
            }
            rest = &after[close + 1..];
        }
    }
    if unknown.is_empty() {
        return Ok(());
    }
    let named: Vec<String> = unknown.iter().map(|n| format!("{{{n}}}")).collect();
    let known: Vec<String> = PLACEHOLDERS.iter().map(|n| format!("{{{n}}}")).collect();
    Err(super::select::fail(&format!(
        "--command names {}, which is not a placeholder: the placeholders are {}",
        sanitize(&named.join(", ")),
        known.join(", ")
    )))
}

/// The re-runs of `plan`, in plan order, with their commands for `args.harness`.
fn reruns(plan: &Plan, plan_path: &Path, args: &RunsArgs) -> Result<Vec<Rerun>> {
    let template = match (args.harness, &args.command) {
        (RunsHarness::Command, Some(t)) => {
            let words = shlex::split(t)
                .filter(|v| !v.is_empty())
                .with_context(|| format!("--command {t:?} is not a command a shell would split"))?;
            check_placeholders(&words)?;
            Some(words)
        }
        (RunsHarness::Command, None) => {
            return Err(super::select::fail(
                "--harness command needs the harness's command with --command",
            ));
        }
        (_, Some(_)) => {
            return Err(super::select::fail("--command goes with --harness command"));
        }
        (_, None) => None,
    };
    // (strategy, pass, model, config) → (benchmarks, items)
    type Key = (String, u64, String, String);
    let mut order: Vec<Key> = Vec::new();
    let mut units: BTreeMap<Key, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for e in &plan.entries {
        let key = (
            e.strategy.clone(),
            e.pass_no,
            e.model.clone(),
            e.config.clone(),
        );
        let at = units.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            Default::default()
        });
        if !at.0.contains(&e.benchmark) {
            at.0.push(e.benchmark.clone());
        }
        at.1.push(e.item_id.clone());
    }
    // A folder per strategy and a name per (model, configuration), given over the whole
    // plan in plan order: names made safe for a file can meet (`a/b`, `a b` and `a-b` are
    // all `a-b`; `x__y` at `z` and `x` at `y__z` both `x__y__z`), and the later one gets
    // `-2`, so no two re-runs share an output or a log, and the same plan gives the same
    // names every time.
    let mut folders: BTreeMap<String, String> = BTreeMap::new();
    let mut names: BTreeMap<(String, String), String> = BTreeMap::new();
    let (mut given_folders, mut given_names) = (UniqueNames::new(), UniqueNames::new());
    for (strategy, _, model, config) in &order {
        folders
            .entry(strategy.clone())
            .or_insert_with(|| given_folders.give(&safe_file_name(strategy)));
        names
            .entry((model.clone(), config.clone()))
            .or_insert_with(|| {
                given_names.give(&format!(
                    "{}__{}",
                    safe_file_name(model),
                    safe_file_name(config)
                ))
            });
    }
    let shown = |p: &Path| p.display().to_string();
    let mut out = Vec::new();
    for key in order {
        let (benchmarks, items) = units.remove(&key).unwrap_or_default();
        let (strategy, pass, model, config) = key;
        let folder = args.dir.join(format!("{}.pass{pass}", folders[&strategy]));
        let name = &names[&(model.clone(), config.clone())];
        let run_out = folder.join(name);
        let log = folder.join(format!("{name}.frames.jsonl"));
        let frames = frames_of(&config).map_or("FRAMES".to_string(), |n| n.to_string());
        let tasks = benchmarks.join(",");
        let (harness, note) = match (args.harness, &template) {
            (RunsHarness::Command, Some(t)) => (
                t.iter()
                    .map(|a| fill(a, [&model, &config, &frames, &tasks, &shown(&run_out)]))
                    .collect(),
                "the command given with --command".to_string(),
            ),
            (RunsHarness::Vlmevalkit, _) => (
                vec![
                    "python".into(),
                    "run.py".into(),
                    "--data".into(),
                    // frameaudit's benchmark names are not VLMEvalKit's dataset names.
                    "VLMEVALKIT_DATASET".into(),
                    "--model".into(),
                    model.clone(),
                    "--work-dir".into(),
                    shown(&run_out),
                ],
                format!(
                    "VLMEvalKit has no option to run chosen items of a dataset: it runs all of {tasks}, and the import keeps the {} planned; VLMEVALKIT_DATASET is VLMEvalKit's name of the benchmark at this frame count (for Video-MME: Video-MME_{frames}frame), the one the canonical run had, and its frame cache must be off (LMUData on a fresh folder, docs/recorder.md); {UNSTEERED}",
                    items.len()
                ),
            ),
            _ => {
                let mut v: Vec<String> = [
                    "python3",
                    "-m",
                    "lmms_eval",
                    "--model",
                    "WRAPPER",
                    "--model_args",
                ]
                .map(String::from)
                .to_vec();
                v.push(format!(
                    "pretrained={},max_frames_num={frames}",
                    model.replace("__", "/")
                ));
                v.extend(["--tasks".into(), tasks.clone()]);
                v.extend(["--batch_size".into(), "1".into()]);
                v.extend([
                    "--output_path".into(),
                    shown(&run_out),
                    "--log_samples".into(),
                ]);
                // lmms-eval 0.7.3 runs a window of document indices (--offset, --limit):
                // of use only where the items are keyed by their doc_id.
                let ids: Option<Vec<u64>> = items.iter().map(|i| i.parse().ok()).collect();
                let note = match ids
                    .as_deref()
                    .and_then(|v| Some((v.iter().min()?, v.iter().max()?)))
                {
                    Some((&lo, &hi)) if benchmarks.len() == 1 => {
                        v.extend([
                            "--offset".into(),
                            lo.to_string(),
                            "--limit".into(),
                            (hi - lo + 1).to_string(),
                        ]);
                        format!(
                            "lmms-eval runs documents {lo} to {hi} (--offset, --limit): the {} planned items are keyed by doc_id",
                            items.len()
                        )
                    }
                    _ => format!(
                        "lmms-eval 0.7.3 has no option to run chosen items (--offset and --limit take a window of document indices, which these item ids do not give): it runs all of {tasks}, and the import keeps the {} planned",
                        items.len()
                    ),
                };
                // The plan does not hold the canonical run's invocation: said, not guessed.
                let note = format!(
                    "{note}; WRAPPER is the canonical run's lmms-eval wrapper (llava_vid, qwen2_5_vl...) and --model_args its arguments, with the budget in that wrapper's own argument: max_frames_num for llava_vid, max_num_frames for qwen2_5_vl (its max_pixels kept); {UNSTEERED}"
                );
                (v, note)
            }
        };
        let mut recorder: Vec<String> = ["python3", "-m", "frameaudit_record", "--log"]
            .map(String::from)
            .to_vec();
        recorder.push(shown(&log));
        recorder.extend(["--plan".into(), shown(plan_path)]);
        recorder.extend(["--run".into(), format!("{model}/{config}")]);
        recorder.extend(["--strategy".into(), strategy.clone()]);
        recorder.extend(["--pass".into(), pass.to_string(), "--".into()]);
        out.push(Rerun {
            strategy,
            pass,
            model,
            config,
            benchmarks,
            items,
            out: shown(&run_out),
            log: shown(&log),
            recorder,
            harness,
            note,
        });
    }
    Ok(out)
}

/// What every re-run's note says of the wrappers whose frames the recorder cannot choose
/// (docs/recorder.md): their re-runs decode the harness's own frames, and the recorder
/// warns at the end of such a run.
const UNSTEERED: &str = "the recorder steers decord's get_batch only: InternVL's wrappers (both harnesses) read frame by frame and lmms-eval's qwen2_vl picks its frames after decoding, so their re-runs cannot get the planned frames";

/// A command as a shell reads it back.
fn quoted(argv: &[String]) -> String {
    argv.iter()
        .map(|a| crate::core::text::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `frameaudit intervene runs PLAN`: every re-run the plan needs, with its commands.
pub fn list(args: &RunsArgs) -> Result<()> {
    let plan = Plan::read(&args.plan)?;
    let runs = reruns(&plan, &args.plan, args)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        crate::core::text::json_to_writer(&mut out, &runs)?;
        writeln!(out)?;
        return Ok(());
    }
    if runs.is_empty() {
        writeln!(
            out,
            "# plan {} (dataset {}) has no entry: nothing to re-run",
            sanitize(&args.plan.display().to_string()),
            sanitize(&plan.dataset),
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "# {} of plan {} (dataset {}): run each, then `frameaudit import reruns {} --plan {} -o DATASET`",
        count(runs.len(), "re-run"),
        sanitize(&args.plan.display().to_string()),
        sanitize(&plan.dataset),
        sanitize(&args.dir.display().to_string()),
        sanitize(&args.plan.display().to_string()),
    )?;
    writeln!(
        out,
        "# the recorder is frameaudit's assets/python/frameaudit_record: export PYTHONPATH=/path/to/frameaudit/assets/python"
    )?;
    for r in &runs {
        writeln!(
            out,
            "\n# {} pass {}: {}/{}, {} of {}",
            sanitize(&r.strategy),
            r.pass,
            sanitize(&r.model),
            sanitize(&r.config),
            count(r.items.len(), "planned item"),
            sanitize(&r.benchmarks.join(", "))
        )?;
        writeln!(out, "# {}", sanitize(&r.note))?;
        writeln!(
            out,
            "mkdir -p {}",
            sanitize(&quoted(std::slice::from_ref(&r.out)))
        )?;
        writeln!(
            out,
            "{} \\\n    {}",
            sanitize(&quoted(&r.recorder)),
            sanitize(&quoted(&r.harness))
        )?;
    }
    Ok(())
}

/// Which importer reads a logged run's output, by its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Harness {
    LmmsEval,
    VlmEvalKit,
    Wide,
}

fn harness_of(command: &[String]) -> Harness {
    // `python -m lmms_eval`, `accelerate launch -m lmms_eval`, its main file, or the
    // `lmms-eval` program pip installs (lmms-eval 0.7.3's console script).
    let program = |a: &String| Path::new(a).file_name().is_some_and(|n| n == "lmms-eval");
    if command
        .iter()
        .any(|a| a == "lmms_eval" || a.ends_with("lmms_eval/__main__.py") || program(a))
    {
        Harness::LmmsEval
    } else if command
        .iter()
        .any(|a| Path::new(a).file_name().is_some_and(|n| n == "run.py"))
    {
        Harness::VlmEvalKit
    } else {
        Harness::Wide
    }
}

/// The recorder logs under `dir` (depth-first, in name order; links not followed).
fn logs_under(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("cannot read {}", dir.display()))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let kind = e.file_type()?;
        let path = e.path();
        if kind.is_dir() && depth < 8 {
            logs_under(&path, depth + 1, out)?;
        } else if kind.is_file() && frames_log::is_frames_log(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// `frameaudit import reruns DIR --plan PLAN -o DATASET`: every logged re-run under DIR,
/// sorted by the strategy and pass its log says it applied, each group imported as
/// `import HARNESS OUTPUTS --frames-log LOGS --plan PLAN --strategy S --pass N` would.
pub fn import(args: &RerunsArgs) -> Result<()> {
    // The plan first: a missing or broken plan is said as such, not as runs not found.
    Plan::read(&args.plan)?;
    let mut logs = Vec::new();
    logs_under(&args.dir, 0, &mut logs)?;
    // (strategy, pass) → harness → (outputs, logs)
    type Group = BTreeMap<Harness, (Vec<PathBuf>, Vec<PathBuf>)>;
    let mut groups: BTreeMap<(String, u64), Group> = BTreeMap::new();
    let mut unplanned = Vec::new();
    let mut no_output = Vec::new();
    for log in &logs {
        let mut skips = Vec::new();
        let runs = frames_log::read(log, &mut skips).map_err(|e| anyhow::anyhow!("{e}"))?;
        for run in runs {
            let Some(p) = &run.plan else {
                unplanned.push(format!("{}:{}", log.display(), run.line));
                continue;
            };
            let Some(output) = run.output_path() else {
                no_output.push(format!("{}:{}", log.display(), run.line));
                continue;
            };
            let at = groups
                .entry((p.strategy.clone(), p.pass_no))
                .or_default()
                .entry(harness_of(&run.command))
                .or_default();
            if !at.0.contains(&output) {
                at.0.push(output);
            }
            if !at.1.contains(log) {
                at.1.push(log.clone());
            }
        }
    }
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "frameaudit: re-runs in {}: {}, {}{}",
        sanitize(&args.dir.display().to_string()),
        count(logs.len(), "recorder log"),
        count(groups.values().map(BTreeMap::len).sum::<usize>(), "import"),
        if groups.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                sanitize(
                    &groups
                        .keys()
                        .map(|(s, p)| format!("{s} pass {p}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            )
        }
    )?;
    if !unplanned.is_empty() {
        writeln!(
            err,
            "  runs that applied no plan, left out: {}",
            sanitize(&unplanned.join(", "))
        )?;
    }
    if !no_output.is_empty() {
        writeln!(
            err,
            "  runs whose command names no output (--output_path, --work-dir, --out), left out: {}",
            sanitize(&no_output.join(", "))
        )?;
    }
    drop(err);
    if groups.is_empty() {
        anyhow::bail!(
            "no recorder log under {} records a re-run under a plan with its output",
            args.dir.display()
        );
    }
    let mut failed = Vec::new();
    for ((strategy, pass), by_harness) in &groups {
        for (harness, (outputs, logs)) in by_harness {
            let common = ImportCommon {
                paths: outputs.clone(),
                output: args.output.clone(),
                force: args.force,
                dry_run: args.dry_run,
                videos: None,
                frames_log: logs.clone(),
                plan: Some(args.plan.clone()),
                strategy: Some(strategy.clone()),
                pass_no: *pass,
                protocol: None,
                replicate: None,
                nuisance: None,
                model_name: args.model_name.clone(),
            };
            let done = match harness {
                Harness::LmmsEval => super::import::lmms_eval(&LmmsArgs {
                    common,
                    config: Vec::new(),
                    docs: Vec::new(),
                }),
                Harness::VlmEvalKit => super::import::vlmevalkit(&VlmArgs {
                    common,
                    frames_root: None,
                }),
                Harness::Wide => match &args.gold {
                    Some(gold) => super::import::wide_csv(&WideArgs {
                        common,
                        gold: gold.clone(),
                        gold_key: args.gold_key.clone(),
                        gold_col: args.gold_col.clone(),
                        id_col: None,
                        model: args.model.clone(),
                        benchmark: args.benchmark.clone(),
                    }),
                    None => Err(anyhow::anyhow!(
                        "its runs are neither lmms-eval's nor VLMEvalKit's: read as wide tables, they need --gold (and --model, --benchmark)"
                    )),
                },
            };
            if let Err(e) = done {
                eprintln!(
                    "frameaudit: {} pass {pass}: {}",
                    sanitize(strategy),
                    sanitize(&format!("{e:#}"))
                );
                failed.push(format!("{strategy} pass {pass}"));
            }
        }
    }
    if !failed.is_empty() {
        anyhow::bail!(
            "the re-runs of {} were not imported (see above why)",
            sanitize(&failed.join(", "))
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_is_told_by_its_command() {
        let cmd = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            harness_of(&cmd("python3 -m lmms_eval --model llava_vid")),
            Harness::LmmsEval
        );
        for console in [
            "lmms-eval --model qwen2_5_vl",
            "/venv/bin/lmms-eval --tasks x",
        ] {
            assert_eq!(harness_of(&cmd(console)), Harness::LmmsEval, "{console}");
        }
        assert_eq!(
            harness_of(&cmd("python /opt/VLMEvalKit/run.py --data x")),
            Harness::VlmEvalKit
        );
        assert_eq!(
            harness_of(&cmd("python3 harness.py --out a.csv")),
            Harness::Wide
        );
        assert_eq!(frames_of("64f-448px"), Some(64));
        assert_eq!(frames_of("textonly"), None);
        // A rate is no frame count.
        assert_eq!(frames_of("2fps"), None);
    }

    /// Strategies whose names meet as file names get folders of their own (their runs'
    /// names, the same (model, configuration), are the same in both).
    #[test]
    fn strategies_whose_names_meet_get_folders_of_their_own() {
        let entry = |strategy: &str| {
            serde_json::json!({"model": "m", "benchmark": "b", "item_id": "1", "config": "16f",
                "lower": "8f", "video": "v", "indices": [1], "strategy": strategy, "pass": 0})
        };
        let plan: Plan = serde_json::from_value(serde_json::json!({
            "schema": "frameaudit/plan@1", "dataset": "d", "strategies": ["a/b", "a b"],
            "entries": [entry("a/b"), entry("a b")]}))
        .expect("plan");
        let args = RunsArgs {
            plan: "plan.json".into(),
            harness: RunsHarness::LmmsEval,
            command: None,
            dir: "reruns".into(),
            json: true,
        };
        let runs = reruns(&plan, &args.plan, &args).expect("runs");
        let outs: Vec<&str> = runs.iter().map(|r| r.out.as_str()).collect();
        assert_eq!(
            outs,
            ["reruns/a-b.pass0/m__16f", "reruns/a-b-2.pass0/m__16f"]
        );
        // A template, said as one: the plan holds no invocation of the canonical run.
        assert!(
            runs[0].note.contains("max_num_frames for qwen2_5_vl"),
            "{}",
            runs[0].note
        );
        // A wrapper the recorder cannot steer is named as one, for both harnesses.
        assert!(runs[0].note.ends_with(UNSTEERED), "{}", runs[0].note);
        // VLMEvalKit's dataset name is not frameaudit's benchmark name: left to fill in.
        let vlm = RunsArgs {
            harness: RunsHarness::Vlmevalkit,
            ..args
        };
        let runs = reruns(&plan, &vlm.plan, &vlm).expect("runs");
        let data = runs[0]
            .harness
            .iter()
            .position(|a| a == "--data")
            .expect("--data");
        assert_eq!(runs[0].harness[data + 1], "VLMEVALKIT_DATASET");
        assert!(
            runs[0].note.contains("Video-MME_16frame"),
            "{}",
            runs[0].note
        );
        assert!(runs[0].note.ends_with(UNSTEERED), "{}", runs[0].note);
    }
}
