//! Reading a re-run back (docs/intervention.md §6): the answers of a harness run that applied
//! a plan through the recorder become intervention cells of the dataset the plan was made
//! of. Only planned units are kept, and only where the recorder's log shows that the
//! planned frames, exactly, were decoded for that run: an answer given on other frames is
//! no evidence of what the plan's frames do.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::core::import::frames_log::LoggedRun;
use crate::core::import::{Import, ImportedCell};
use crate::core::intervene::match_name;
use crate::core::plan::{Plan, PlanEntry};

/// Which part of a plan a re-run applied.
#[derive(Debug, Clone)]
pub struct Applied<'a> {
    /// The strategy (`None`: the plan's only one).
    pub strategy: Option<&'a str>,
    /// The pass.
    pub pass_no: u64,
    /// The protocol the cells get (`None`: `intervention:STRATEGY`).
    pub protocol: Option<&'a str>,
    /// The plan's [`plan_hash`], recorded on each cell.
    pub plan_hash: Option<&'a str>,
    /// The plan file as given, recorded on each cell's [`Provenance`].
    pub plan_file: Option<&'a str>,
}

/// Where an intervention cell comes from (docs/intervention.md §6), recorded on it as
/// `rerun`: which plan, entry and logged run gave it. `frameaudit frames` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Provenance {
    /// The plan file as the import was given it.
    #[serde(default)]
    pub plan_file: Option<String>,
    /// The plan's `targets` (`terminal`, `audited`, `all`).
    #[serde(default)]
    pub targets: String,
    /// The strategy applied.
    #[serde(default)]
    pub strategy: String,
    /// The pass applied.
    #[serde(default)]
    pub pass: u64,
    /// The configuration re-run (the plan entry's `config`).
    #[serde(default)]
    pub config: String,
    /// The transition's lower configuration (the plan entry's `lower`).
    #[serde(default)]
    pub lower: String,
    /// The recorder's log that shows the planned frames decoded, and the line of its run.
    #[serde(default)]
    pub log: String,
    /// The `run` line of that log.
    #[serde(default)]
    pub log_line: u64,
    /// The harness's answers file the answer was read from, when the importer knows it.
    #[serde(default)]
    pub answers: Option<String>,
    /// The annotators whose audit records the plan entry was planned from (the entry's
    /// `annotators`); empty when none were, or in a cell imported before cells recorded them.
    #[serde(default)]
    pub annotators: Vec<String>,
}

/// An intervention cell: an imported answer under its protocol, with the frames it was
/// given.
#[derive(Debug, Clone, Serialize)]
pub struct InterventionCell {
    /// The answer, its `frame_idx` the planned frames.
    #[serde(flatten)]
    pub cell: ImportedCell,
    /// The intervention protocol.
    pub protocol: String,
    /// The benchmark's task.
    pub task: &'static str,
    /// A noise-floor re-run (`phase`, `sampler`): the replicate the answer is, of the
    /// configuration re-run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicate: Option<String>,
    /// With `replicate`: its nuisance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nuisance: Option<String>,
    /// The configuration re-run (the plan entry's `config`; the cell's own may be
    /// `CONFIG@Nf`): its file is named by it.
    #[serde(skip)]
    pub rerun_config: String,
    /// The plan the re-run applied: [`plan_hash`] of its file, so that a re-import from
    /// another plan finds the cells of this one (docs/formats.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Where the cell comes from.
    pub rerun: Provenance,
}

/// A planned unit the re-run gives no usable answer for, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct NotMatched {
    /// `MODEL BENCHMARK ITEM at CONFIG`.
    pub unit: String,
    /// Why it is not kept.
    pub why: String,
}

/// The re-run matched to its plan.
#[derive(Debug, Clone)]
pub struct Matched {
    /// The strategy applied.
    pub strategy: String,
    /// The protocol of the cells.
    pub protocol: String,
    /// Entries of the plan for this strategy and pass.
    pub planned: usize,
    /// The cells kept, in plan order.
    pub cells: Vec<InterventionCell>,
    /// Planned units without a kept cell.
    pub not_matched: Vec<NotMatched>,
    /// Answers of the re-run that no entry plans (the harness ran every item; only the
    /// planned ones are kept).
    pub unplanned: usize,
    /// Entries of runs (`MODEL/CONFIG`) that no log given shows re-run under this strategy
    /// and pass, by run: left for their own re-run, not counted as failures of this one.
    pub other_runs: BTreeMap<String, usize>,
}

/// What the logs say was decoded for one (run, video) under the applied strategy and pass.
#[derive(Default)]
struct Logged<'a> {
    /// Planned decodes: the frames decoded, how many the harness had asked for, and the
    /// logged run.
    planned: Vec<(Vec<u64>, Option<usize>, Option<&'a LoggedRun>)>,
    refused: Vec<String>,
    other: usize,
}

/// Matches the imported re-run to the plan: every entry of the applied strategy and pass
/// whose unit the re-run answered, and whose video the logs show decoded at exactly the
/// planned frames in a run that applied this plan's strategy and pass for the entry's
/// `MODEL/CONFIG`.
pub fn match_rerun(
    plan: &Plan,
    applied: &Applied<'_>,
    imp: &Import,
    logs: &[LoggedRun],
) -> Result<Matched, String> {
    let strategy = match applied.strategy {
        Some(s) if plan.strategies.iter().any(|x| x == s) => s.to_string(),
        Some(s) => {
            return Err(format!(
                "--strategy {s}: the plan has {}",
                plan.strategies.join(", ")
            ));
        }
        None if plan.strategies.len() == 1 => plan.strategies[0].clone(),
        None => {
            return Err(format!(
                "the plan has several strategies ({}): say which one the re-run applied with --strategy",
                plan.strategies.join(", ")
            ));
        }
    };
    // A noise floor's answers are replicates of the runs planned from, in their protocol.
    let noise = crate::core::intervene::Strategy::parse(&strategy).is_some_and(|s| s.is_noise());
    let protocol = match applied.protocol {
        Some(p) => p.to_string(),
        None if noise => plan.protocol.clone(),
        None => format!("intervention:{strategy}"),
    };
    let entries: Vec<&PlanEntry> = plan
        .entries
        .iter()
        .filter(|e| e.strategy == strategy && e.pass_no == applied.pass_no)
        .collect();
    let applied_plans: std::collections::BTreeSet<(&str, u64)> = logs
        .iter()
        .filter_map(|r| r.plan.as_ref())
        .map(|p| (&*p.strategy, p.pass_no))
        .collect();
    let log_files: std::collections::BTreeSet<String> =
        logs.iter().map(|r| r.file.display().to_string()).collect();
    let log_files = log_files.into_iter().collect::<Vec<_>>().join(", ");
    if logs.is_empty() {
        return Err(
            "no frames log was given (--frames-log) or found beside the answers: give the \
             recorder's log of this re-run (`python3 -m frameaudit_record --log LOG --plan PLAN \
             --run MODEL/CONFIG -- HARNESS ...`) with --frames-log"
                .into(),
        );
    }
    if applied_plans.is_empty() {
        return Err(format!(
            "the frames logs given ({log_files}) record no run that applied a plan: the recorder \
             was run without --plan; run the harness again under `python3 -m frameaudit_record \
             --plan PLAN --run MODEL/CONFIG` and give that log"
        ));
    }
    if !applied_plans.contains(&(&*strategy, applied.pass_no)) {
        let seen: Vec<String> = applied_plans
            .iter()
            .map(|(s, p)| format!("{s} pass {p}"))
            .collect();
        return Err(format!(
            "the frames logs given record runs that applied {}, not {strategy} pass {}: give \
             the log of this re-run, or say with --strategy and --pass which it applied",
            seen.join(", "),
            applied.pass_no
        ));
    }
    // (MODEL/CONFIG, video) → what was decoded there under this strategy and pass.
    let mut logged: BTreeMap<(String, String), Logged> = BTreeMap::new();
    for run in logs {
        let Some(p) = &run.plan else { continue };
        if p.strategy != strategy || p.pass_no != applied.pass_no {
            continue;
        }
        for d in &run.decodes {
            let at = logged
                .entry((p.run.clone(), match_name(&d.video)))
                .or_default();
            match d.planned {
                Some(true) => at.planned.push((d.indices.clone(), d.asked, Some(run))),
                Some(false) => at
                    .refused
                    .push(d.refused.clone().unwrap_or_else(|| "refused".into())),
                None => at.other += 1,
            }
        }
    }
    let answers: BTreeMap<(&str, &str, &str, &str), &ImportedCell> = imp
        .cells()
        .iter()
        .map(|c| ((&*c.model, &*c.benchmark, &*c.item_id, &*c.config), c))
        .collect();
    let planned_units: std::collections::BTreeSet<(&str, &str, &str, &str)> = entries
        .iter()
        .map(|e| (&*e.model, &*e.benchmark, &*e.item_id, &*e.config))
        .collect();
    let unplanned = answers
        .keys()
        .filter(|k| !planned_units.contains(*k))
        .count();
    let rerun: std::collections::BTreeSet<&str> = logs
        .iter()
        .filter_map(|r| r.plan.as_ref())
        .filter(|p| p.strategy == strategy && p.pass_no == applied.pass_no)
        .map(|p| &*p.run)
        .collect();
    // The logged runs of this strategy and pass, by `MODEL/CONFIG`: an answer is kept only
    // when one of them can have written its file.
    let mut by_run: BTreeMap<&str, Vec<&LoggedRun>> = BTreeMap::new();
    for r in logs {
        if let Some(p) = &r.plan
            && p.strategy == strategy
            && p.pass_no == applied.pass_no
        {
            by_run.entry(&p.run).or_default().push(r);
        }
    }
    let mut unbound: BTreeMap<String, String> = BTreeMap::new();
    let mut cells = Vec::new();
    let mut not_matched = Vec::new();
    let mut other_runs: BTreeMap<String, usize> = BTreeMap::new();
    // A model of the re-run's answers by (benchmark, item, configuration), the first by
    // name, for an answer under another model name than the plan's. A model the plan
    // names is no other name of another: its answers are its own.
    let planned_models: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| &*e.model).collect();
    let mut model_of: BTreeMap<(&str, &str, &str), &str> = BTreeMap::new();
    for k in answers.keys().filter(|k| !planned_models.contains(k.0)) {
        model_of.entry((k.1, k.2, k.3)).or_insert(k.0);
    }
    for e in &entries {
        let unit = format!("{} {} {} at {}", e.model, e.benchmark, e.item_id, e.config);
        let run = format!("{}/{}", e.model, e.config);
        if !rerun.contains(run.as_str()) {
            *other_runs.entry(run).or_default() += 1;
            continue;
        }
        let Some(answer) = answers.get(&(&*e.model, &*e.benchmark, &*e.item_id, &*e.config)) else {
            // Answered at another configuration: the harness ran at another budget than
            // the one the recorder was told (`--run MODEL/CONFIG`) re-runs.
            let elsewhere: Vec<&str> = answers
                .range((&*e.model, &*e.benchmark, &*e.item_id, "")..)
                .take_while(|(k, _)| (k.0, k.1, k.2) == (&*e.model, &*e.benchmark, &*e.item_id))
                .map(|(k, _)| k.3)
                .collect();
            let renamed = model_of.get(&(&*e.benchmark, &*e.item_id, &*e.config));
            let why = if let Some(other) = renamed.filter(|_| elsewhere.is_empty()) {
                format!(
                    "the re-run answered it as model {other}, not {} (lmms-eval names the model from the run's `pretrained`): run the harness with the canonical run's model arguments, or give --model-name {other}={}",
                    e.model, e.model
                )
            } else if elsewhere.is_empty() {
                "the re-run has no answer for it".into()
            } else {
                format!(
                    "the re-run answered it under configuration {}, not {} (the configuration the plan re-runs and the recorder's --run named): run the harness at {}'s budget",
                    elsewhere.join(", "),
                    e.config,
                    e.config
                )
            };
            not_matched.push(NotMatched { unit, why });
            continue;
        };
        let at = logged.get(&(run.clone(), match_name(&e.video)));
        let hit = at.and_then(|l| l.planned.iter().find(|(x, ..)| *x == e.indices));
        let why = match at {
            // A wrapper that decodes more than it gives the model picks again among the
            // decoded frames (lmms-eval's qwen2_vl decodes at 2 fps): the model did not get
            // the planned frames.
            Some(_)
                if hit.is_some_and(|(_, asked, _)| {
                    asked.is_some_and(|n| n as u64 > answer.frames)
                }) =>
            {
                Some(format!(
                    "the harness decoded {} frames of its video {:?} to give the model {}: it picks again among the decoded frames, so the model did not get the planned ones",
                    hit.and_then(|h| h.1).unwrap_or(0),
                    e.video,
                    answer.frames
                ))
            }
            Some(_) if hit.is_some() => None,
            Some(l) if !l.planned.is_empty() => Some(format!(
                "its video {:?} was decoded at other planned frames ({} decodes), not this entry's",
                e.video,
                l.planned.len()
            )),
            Some(l) if !l.refused.is_empty() => Some(format!(
                "the recorder refused the plan for its video {:?} ({}); the harness's own frames were decoded",
                e.video, l.refused[0]
            )),
            Some(_) => Some(format!(
                "its video {:?} was decoded, but not at planned frames",
                e.video
            )),
            None => Some(format!(
                "the logs given ({log_files}) show run {run} under {strategy} pass {} but no decode of its video {:?} through decord's get_batch: the harness did not open it in that run (another benchmark or subset, a video of another name), or read it otherwise (the recorder steers get_batch only)",
                applied.pass_no, e.video
            )),
        };
        if let Some(why) = why {
            not_matched.push(NotMatched { unit, why });
            continue;
        }
        let file = imp.run_file(&answer.model, &answer.config);
        // The logged run: the one that wrote the answers, else the one that decoded.
        let runs = by_run.get(run.as_str()).map_or(&[][..], Vec::as_slice);
        let logged_run = file
            .and_then(|f| runs.iter().copied().find(|r| r.wrote(f).is_ok()))
            .or(hit.and_then(|h| h.2));
        if let Some(file) = file {
            let whys: Vec<String> = runs
                .iter()
                .filter_map(|r| r.wrote(file).err().map(|why| (r, why)))
                .map(|(r, why)| format!("the logged run {}: {why}", r.describe()))
                .collect();
            if whys.len() == runs.len() && !runs.is_empty() {
                unbound
                    .entry(format!("{} (answers of {run})", file.display()))
                    .or_insert_with(|| whys.join("; "));
                continue;
            }
        }
        let mut cell = (*answer).clone();
        cell.frame_idx = Some(e.indices.clone());
        // The model was given the planned frames: a plan of another size (`swap`,
        // `restore-evidence`) is another configuration, named after the one re-run.
        // Of another size than the configuration's own frames: its distinct frames as the
        // plan counted them (`higher_frames`, which a nominal 32f run of a short video
        // may hold fewer of than 32), else the answer's nominal count.
        let n = crate::core::sampling::frame_set(e.indices.clone()).len() as u64;
        let own = match e.higher_frames {
            0 => cell.frames,
            h => h as u64,
        };
        if n != own && e.replicate.is_none() {
            cell.config = format!("{}@{n}f", e.config);
            cell.frames = n;
        }
        cells.push(InterventionCell {
            cell,
            protocol: protocol.clone(),
            task: "mcq",
            replicate: e.replicate.clone(),
            nuisance: e.nuisance.clone(),
            rerun_config: e.config.clone(),
            plan: applied.plan_hash.map(str::to_string),
            rerun: Provenance {
                plan_file: applied.plan_file.map(str::to_string),
                targets: plan.targets.clone(),
                strategy: strategy.clone(),
                pass: applied.pass_no,
                config: e.config.clone(),
                lower: e.lower.clone(),
                log: logged_run.map_or(String::new(), |r| r.file.display().to_string()),
                log_line: logged_run.map_or(0, |r| r.line),
                answers: file.map(|f| f.display().to_string()),
                annotators: e.annotators.clone(),
            },
        });
    }
    if !unbound.is_empty() {
        let list: Vec<String> = unbound
            .iter()
            .map(|(file, why)| format!("{file} was not written by {why}"))
            .collect();
        return Err(format!(
            "answers not bound to the logged run of {strategy} pass {}: {}; give each re-run's answers with the log of that run",
            applied.pass_no,
            list.join("; ")
        ));
    }
    Ok(Matched {
        strategy,
        protocol,
        planned: entries.len(),
        cells,
        not_matched,
        unplanned,
        other_runs,
    })
}

/// The file a re-run's cells go to in the dataset directory:
/// `interventions/PROTOCOL.CONFIG.jsonl` (pass `N > 0`: `PROTOCOL.CONFIG.passN.jsonl`), by
/// the configuration re-run (`config`, a plan entry's) so that the re-runs of one pass at two
/// configurations (an audited plan's 16f and 32f) keep a file each; the protocol's `:` and
/// other characters a file name should not hold written as `-`.
pub fn cells_file(
    dataset: &Path,
    protocol: &str,
    config: &str,
    pass_no: u64,
) -> std::path::PathBuf {
    let name = format!(
        "{}.{}",
        crate::core::replicate::safe_file_name(protocol),
        crate::core::replicate::safe_file_name(config)
    );
    dataset
        .join(INTERVENTIONS_DIR)
        .join(crate::core::replicate::jsonl_name(&name, pass_no))
}

pub use crate::core::dataset::INTERVENTIONS_DIR;

/// A plan file's bytes as the cells record them: `sha256:` and the first 16 hex digits of
/// their SHA-256 (enough to tell one plan of a dataset from another).
pub fn plan_hash(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(bytes);
    let hex: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// An intervention file of the dataset that holds cells of `protocol` made from another
/// plan than `hash` (or recording none): a re-import of the strategy replaces it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stale {
    /// The file.
    pub file: std::path::PathBuf,
    /// The plan its cells record (`None`: none).
    pub plan: Option<String>,
}

/// The files of `DATASET/interventions/` other than `keep` that hold a cell of `protocol`
/// whose `plan` is not `hash`, in name order. A file that cannot be read is left to the
/// dataset's loader, which says why.
pub fn stale_files(dataset: &Path, protocol: &str, hash: &str, keep: &[&Path]) -> Vec<Stale> {
    #[derive(serde::Deserialize)]
    struct Line {
        #[serde(default)]
        protocol: Option<String>,
        #[serde(default)]
        plan: Option<String>,
    }
    let Ok(dir) = std::fs::read_dir(dataset.join(INTERVENTIONS_DIR)) else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && !keep.contains(&p.as_path()))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let Ok(bytes) = crate::core::fsread::read(&file, crate::core::fsread::CELLS) else {
            continue;
        };
        let other = bytes
            .split(|&b| b == b'\n')
            .filter_map(|l| serde_json::from_slice::<Line>(l).ok())
            .find(|l| l.protocol.as_deref() == Some(protocol) && l.plan.as_deref() != Some(hash));
        if let Some(l) = other {
            out.push(Stale { file, plan: l.plan });
        }
    }
    out
}

/// A run of intervention cells: (model, benchmark, configuration).
type RunKey = (String, String, String);

/// What [`record_runs`] did to `dataset.json` → `runs`, each run as `MODEL BENCHMARK CONFIG`.
#[derive(Debug, Default, PartialEq)]
pub struct RunsRecorded {
    /// The runs written (anew where the protocol had them).
    pub written: Vec<String>,
    /// The protocol's runs removed: none of their cells is left in `interventions/`.
    pub removed: Vec<String>,
}

/// Why `dataset.json` could not record the intervention runs.
#[derive(Debug, thiserror::Error)]
pub enum RunsError {
    /// The file could not be read or written.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// `read` or `write`.
        what: &'static str,
        /// `DATASET/dataset.json`.
        path: std::path::PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The file is not a dataset description a run can be added to.
    #[error("{}: {why}", path.display())]
    Shape {
        /// `DATASET/dataset.json`.
        path: std::path::PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// A JSON object's fields in the order its text gives them, each value as written
/// (`dataset.json`, rewritten by [`record_runs`] without reordering or reformatting what it
/// does not change).
struct Members(Vec<(String, Box<serde_json::value::RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Members, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some(field) = map.next_entry()? {
                    out.push(field);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A run entry of `dataset.json` → `runs`: its text, and its value.
struct RunText {
    /// As the file has it, or as a new entry is written (pretty, its own indent).
    text: String,
    /// A new entry: its lines are indented to the list's depth when written.
    new: bool,
    value: serde_json::Value,
}

impl Members {
    /// The fields of `text`, which must be a JSON object.
    fn parse(text: &str) -> Result<Members, &'static str> {
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) if v.is_object() => serde_json::from_str(text).map_err(|_| "not valid JSON"),
            Ok(_) => Err("not a JSON object"),
            Err(_) => Err("not valid JSON"),
        }
    }

    /// An object of these string fields.
    fn new(fields: &[(&str, &str)]) -> Members {
        Members(
            fields
                .iter()
                .map(|&(k, v)| {
                    let text = crate::core::text::json_to_string(v).expect("a string");
                    let raw = serde_json::value::RawValue::from_string(text).expect("JSON");
                    (k.to_string(), raw)
                })
                .collect(),
        )
    }

    /// The entries of its `runs` (none without the field).
    fn runs(&self) -> Result<Vec<RunText>, &'static str> {
        let mut found = self.0.iter().filter(|(k, _)| k == "runs");
        let Some((_, raw)) = found.next() else {
            return Ok(Vec::new());
        };
        if found.next().is_some() {
            return Err("runs is given twice");
        }
        let entries: Vec<Box<serde_json::value::RawValue>> =
            serde_json::from_str(raw.get()).map_err(|_| "runs is not a list")?;
        entries
            .into_iter()
            .map(|e| {
                let value = serde_json::from_str(e.get()).map_err(|_| "runs is not a list")?;
                Ok(RunText {
                    text: e.get().to_string(),
                    new: false,
                    value,
                })
            })
            .collect()
    }

    /// Its text with `runs` in place of its own (last, when it had none): two spaces an
    /// indent, every other field's value as it was written, and each kept entry too.
    fn with_runs(&self, runs: &[RunText]) -> String {
        let entry = |r: &RunText| {
            if r.new {
                r.text.replace('\n', "\n    ")
            } else {
                r.text.clone()
            }
        };
        let list = if runs.is_empty() {
            "[]".to_string()
        } else {
            let entries: Vec<String> = runs.iter().map(entry).collect();
            format!("[\n    {}\n  ]", entries.join(",\n    "))
        };
        let mut fields: Vec<(&str, &str)> = self
            .0
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str(),
                    if k == "runs" { list.as_str() } else { v.get() },
                )
            })
            .collect();
        if !self.0.iter().any(|(k, _)| k == "runs") {
            fields.push(("runs", &list));
        }
        let fields: Vec<String> = fields
            .iter()
            .map(|(k, v)| {
                let key = crate::core::text::json_to_string(k).expect("a string");
                format!("  {key}: {v}")
            })
            .collect();
        format!("{{\n{}\n}}\n", fields.join(",\n"))
    }
}

/// The (protocol, run) an entry of `dataset.json` → `runs` gives a rule for, when it names
/// its model, benchmark and configuration (an entry for every benchmark is left alone).
fn run_key(v: &serde_json::Value) -> Option<(Option<&str>, RunKey)> {
    let s = |f: &str| v.get(f).and_then(serde_json::Value::as_str);
    let key = (
        s("model")?.to_string(),
        s("benchmark")?.to_string(),
        s("config")?.to_string(),
    );
    Some((s("protocol"), key))
}

/// The runs of `protocol` whose cells are in `DATASET/interventions/` now. A file that
/// cannot be read is left to the dataset's loader, which says why.
fn runs_in_files(dataset: &Path, protocol: &str) -> std::collections::BTreeSet<RunKey> {
    #[derive(serde::Deserialize)]
    struct Line {
        model: String,
        benchmark: String,
        config: String,
        #[serde(default)]
        protocol: Option<String>,
    }
    let Ok(dir) = std::fs::read_dir(dataset.join(INTERVENTIONS_DIR)) else {
        return Default::default();
    };
    let mut out = std::collections::BTreeSet::new();
    for file in dir.flatten().map(|e| e.path()) {
        if file.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let Ok(bytes) = crate::core::fsread::read(&file, crate::core::fsread::CELLS) else {
            continue;
        };
        out.extend(
            bytes
                .split(|&b| b == b'\n')
                .filter_map(|l| serde_json::from_slice::<Line>(l).ok())
                .filter(|l| l.protocol.as_deref() == Some(protocol))
                .map(|l| (l.model, l.benchmark, l.config)),
        );
    }
    out
}

/// Records the runs of `protocol`'s intervention cells in `DATASET/dataset.json` → `runs`
/// (docs/intervention.md §6), after an import wrote `cells` into `interventions/`: one entry
/// per (model, benchmark, configuration) of `cells`, of that protocol, whose frames are the
/// plan's, recorded on each cell (no rule computes them); the protocol's entries whose cells
/// are gone from the folder are removed. Every other entry and field of the file is kept;
/// a dataset without the file (named `name`) gets one. The cells are not touched, so the
/// audits' fingerprint is not either.
pub fn record_runs(
    dataset: &Path,
    name: &str,
    protocol: &str,
    cells: &[&InterventionCell],
) -> Result<RunsRecorded, RunsError> {
    use crate::core::dataset::RunEntry;
    use crate::core::rules::{Provenance as Known, RunRule};
    let path = dataset.join("dataset.json");
    let shape = |why: &str| RunsError::Shape {
        path: path.clone(),
        why: why.to_string(),
    };
    // The file is kept as its author wrote it: its fields in their order and their text,
    // the run entries kept too; only entries are removed and added.
    let meta = match crate::core::fsread::read_to_string(&path, crate::core::fsread::DATASET_JSON) {
        Ok(text) => Members::parse(crate::core::load::json::strip_bom_str(&text)).map_err(shape)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Members::new(&[("schema", "frameaudit/dataset@1"), ("name", name)])
        }
        Err(source) => {
            return Err(RunsError::Io {
                what: "read",
                path,
                source,
            });
        }
    };
    let mut runs = meta.runs().map_err(shape)?;
    let mut new: BTreeMap<RunKey, &InterventionCell> = BTreeMap::new();
    for c in cells {
        let key = (
            c.cell.model.clone(),
            c.cell.benchmark.clone(),
            c.cell.config.clone(),
        );
        new.entry(key).or_insert(c);
    }
    let shown = |(m, b, c): &RunKey| format!("{m} {b} {c}");
    // An entry for every protocol of the same names (the harness run re-run) stays: the
    // loader takes the protocol's own entry over it for the intervention's cells.
    let mut out = RunsRecorded::default();
    let present = runs_in_files(dataset, protocol);
    runs.retain(|r| match run_key(&r.value) {
        Some((Some(p), k)) if p == protocol => {
            if new.contains_key(&k) {
                false
            } else if present.contains(&k) {
                true
            } else {
                out.removed.push(shown(&k));
                false
            }
        }
        _ => true,
    });
    for (key, c) in &new {
        let w = &c.rerun;
        let entry = RunEntry {
            protocol: Some(protocol.to_string()),
            model: key.0.clone(),
            benchmark: Some(key.1.clone()),
            config: key.2.clone(),
            rule: RunRule {
                rule: None,
                provenance: Known::Recorded,
                name: format!(
                    "{protocol}: a re-run of {} given the plan's frames through the frame recorder",
                    w.config
                ),
                why: format!(
                    "plan {} ({}), strategy {}; each cell records the frames it was given as frame_idx",
                    w.plan_file.as_deref().unwrap_or("(file not recorded)"),
                    c.plan.as_deref().unwrap_or("not recorded"),
                    w.strategy
                ),
                frame_files: None,
                decoder: None,
            },
        };
        let text =
            crate::core::text::json_to_string_pretty(&entry).map_err(|e| shape(&e.to_string()))?;
        let value = serde_json::from_str(&text).map_err(|e| shape(&e.to_string()))?;
        runs.push(RunText {
            text,
            new: true,
            value,
        });
        out.written.push(shown(key));
    }
    if out.written.is_empty() && out.removed.is_empty() {
        return Ok(out);
    }
    let text = meta.with_runs(&runs);
    crate::core::fswrite::write_output(&path, crate::core::fswrite::Links::Refuse, |w| {
        w.write_all(text.as_bytes())
    })
    .map_err(|source| RunsError::Io {
        what: "write",
        path: path.clone(),
        source,
    })?;
    Ok(out)
}

/// An intervention run of one item as its file in `DATASET/interventions/` records it
/// (`frameaudit frames` lists them).
#[derive(Debug, Clone, Serialize)]
pub struct RecordedRerun {
    /// The model.
    pub model: String,
    /// The intervention protocol (`intervention:STRATEGY`).
    pub protocol: String,
    /// The cell's configuration (`CONFIG` or `CONFIG@Nf`).
    pub config: String,
    /// The frames the model was given.
    pub frame_idx: Vec<u64>,
    /// The plan's hash (`None`: not recorded).
    pub plan: Option<String>,
    /// The file, relative to the dataset.
    pub file: String,
    /// Where it comes from (`None`: imported before cells recorded it).
    pub rerun: Option<Provenance>,
}

/// The intervention runs of item `item_id` of `benchmark` recorded in
/// `DATASET/interventions/`, by file name then line. Lines that do not parse are left to
/// the dataset's loader, which says why.
pub fn recorded_reruns(dataset: &Path, benchmark: &str, item_id: &str) -> Vec<RecordedRerun> {
    #[derive(serde::Deserialize)]
    struct Line {
        model: String,
        benchmark: String,
        item_id: serde_json::Value,
        config: String,
        #[serde(default)]
        protocol: Option<String>,
        #[serde(default)]
        frame_idx: Option<Vec<u64>>,
        #[serde(default)]
        plan: Option<String>,
        #[serde(default)]
        rerun: Option<Provenance>,
    }
    let Ok(dir) = std::fs::read_dir(dataset.join(INTERVENTIONS_DIR)) else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let Ok(bytes) = crate::core::fsread::read(&file, crate::core::fsread::CELLS) else {
            continue;
        };
        let name = file
            .strip_prefix(dataset)
            .unwrap_or(&file)
            .display()
            .to_string();
        for l in bytes.split(|&b| b == b'\n') {
            let Ok(l) = serde_json::from_slice::<Line>(l) else {
                continue;
            };
            let id = match &l.item_id {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if l.benchmark != benchmark || id != item_id {
                continue;
            }
            out.push(RecordedRerun {
                model: l.model,
                protocol: l.protocol.unwrap_or_else(|| "intervention".into()),
                config: l.config,
                frame_idx: l.frame_idx.unwrap_or_default(),
                plan: l.plan,
                file: name.clone(),
                rerun: l.rerun,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::import::frames_log::{Decode, LoggedPlan};
    use crate::core::import::{ImportedCell, Run};

    fn entry(item: &str, video: &str, indices: &[u64]) -> PlanEntry {
        PlanEntry {
            model: "m".into(),
            benchmark: "b".into(),
            item_id: item.into(),
            config: "8f".into(),
            lower: "4f".into(),
            video: video.into(),
            num_frames: None,
            indices: indices.to_vec(),
            strategy: "nested".into(),
            why: String::new(),
            higher_frames: 0,
            lower_frames: 0,
            restored: Vec::new(),
            sources: Default::default(),
            annotators: Vec::new(),
            pass_no: 0,
            replicate: None,
            nuisance: None,
        }
    }

    fn decode(video: &str, indices: &[u64], planned: Option<bool>) -> Decode {
        Decode {
            video: video.into(),
            indices: indices.to_vec(),
            line: 2,
            planned,
            refused: (planned == Some(false)).then(|| "IndexError: past the end".into()),
            asked: planned.map(|_| 4),
            reader: None,
        }
    }

    /// Model m's right answer to item `item` of benchmark b under `config`.
    fn imported(item: &str, config: &str) -> ImportedCell {
        crate::core::import::tests::cell("m", item, config)
    }

    /// A run of command `h` logged applying the plan's `nested` pass 0 to `m/8f`.
    fn nested_run(decodes: Vec<Decode>) -> LoggedRun {
        LoggedRun {
            command: vec!["h".into()],
            decodes,
            plan: Some(LoggedPlan {
                run: "m/8f".into(),
                strategy: "nested".into(),
                pass_no: 0,
            }),
            file: "log".into(),
            line: 1,
            setup: Default::default(),
            cwd: None,
            window: (None, None),
        }
    }

    #[test]
    fn only_planned_units_decoded_at_their_planned_frames_are_kept() {
        let plan = Plan {
            schema: crate::core::plan::SCHEMA.into(),
            dataset: "d".into(),
            protocol: "main".into(),
            targets: "terminal".into(),
            strategies: vec!["nested".into()],
            entries: vec![
                PlanEntry {
                    annotators: vec!["ann".into()],
                    ..entry("1", "v/one.mp4", &[0, 2, 4])
                },
                entry("2", "two.mp4", &[1, 3]),
                entry("3", "three", &[5, 6]),
                entry("4", "four.mp4", &[7]),
                entry("5", "five.mp4", &[1]),
                entry("6", "six.mp4", &[1, 2]),
            ],
            skipped: Vec::new(),
        };
        let cell = |id: &str| imported(id, "8f");
        let mut imp = Import::default();
        imp.add_run(Run {
            file: "f".into(),
            model: "m".into(),
            config: "8f".into(),
            frames: 8,
            rules: Default::default(),
            cells: ["1", "2", "3", "4", "6", "7"].map(cell).to_vec(),
        })
        .expect("run");
        let logs = vec![nested_run(vec![
            decode("/data/one.mp4", &[0, 2, 4], Some(true)),
            decode("/data/two.mp4", &[1, 2], Some(true)),
            decode("/data/three.avi", &[0, 1], Some(false)),
            Decode {
                asked: Some(20),
                ..decode("six.mp4", &[1, 2], Some(true))
            },
        ])];
        let applied = Applied {
            strategy: None,
            pass_no: 0,
            protocol: None,
            plan_hash: None,
            plan_file: Some("p.json"),
        };
        let m = match_rerun(&plan, &applied, &imp, &logs).expect("matched");
        assert_eq!(m.protocol, "intervention:nested");
        assert_eq!(m.planned, 6);
        assert_eq!(m.unplanned, 1, "item 7 is answered but not planned");
        let kept: Vec<&str> = m.cells.iter().map(|c| &*c.cell.item_id).collect();
        assert_eq!(kept, ["1"]);
        assert_eq!(m.cells[0].cell.frame_idx.as_deref(), Some(&[0, 2, 4][..]));
        assert_eq!(m.cells[0].cell.frames, 3);
        assert_eq!(
            m.cells[0].cell.config, "8f@3f",
            "3 planned frames of a run of 8"
        );
        // Where it comes from: the plan, its entry and the logged run that decoded it.
        let w = &m.cells[0].rerun;
        assert_eq!(
            (
                w.plan_file.as_deref(),
                &*w.targets,
                &*w.strategy,
                w.pass,
                &*w.lower,
                &*w.config
            ),
            (Some("p.json"), "terminal", "nested", 0, "4f", "8f")
        );
        assert_eq!((&*w.log, w.log_line), ("log", 1));
        assert_eq!(w.annotators, ["ann"], "the entry's annotators");
        let why: Vec<(&str, &str)> = m
            .not_matched
            .iter()
            .map(|n| (&n.unit[..8], n.why.split(' ').nth(1).unwrap_or("")))
            .collect();
        // 2: other frames; 3: refused; 4: never decoded; 5: not answered; 6: the harness
        // decoded 20 frames to give the model 8 (it picks again).
        assert_eq!(
            why,
            [
                ("m b 2 at", "video"),
                ("m b 3 at", "recorder"),
                ("m b 4 at", "logs"),
                ("m b 5 at", "re-run"),
                ("m b 6 at", "harness")
            ]
        );
        // The log was given: the advice is not to give it, but what it shows.
        let never = &m.not_matched[2].why;
        assert!(
            never.contains("the logs given (log) show run m/8f under nested pass 0")
                && !never.contains("--frames-log"),
            "{never}"
        );
        // Logs of another pass, or of no plan, are refused by name.
        let other = Applied {
            pass_no: 1,
            ..applied.clone()
        };
        let e = match_rerun(&plan, &other, &imp, &logs).expect_err("another pass");
        assert!(
            e.contains("applied nested pass 0, not nested pass 1"),
            "{e}"
        );
        let mut unplanned = logs.clone();
        unplanned[0].plan = None;
        let e = match_rerun(&plan, &applied, &imp, &unplanned).expect_err("no plan");
        assert!(
            e.contains("the frames logs given (log) record no run that applied a plan"),
            "{e}"
        );
        let e = match_rerun(&plan, &applied, &imp, &[]).expect_err("no log");
        assert!(e.contains("no frames log was given"), "{e}");
        let wrong = Applied {
            strategy: Some("swap"),
            ..applied
        };
        assert!(match_rerun(&plan, &wrong, &imp, &logs).is_err());
    }

    #[test]
    fn a_re_run_at_another_budget_and_the_planned_count_of_a_short_video_are_said_as_they_are() {
        // Item 1 planned at 8f, answered by a harness run at 4f; item 2 planned with the 3
        // distinct frames a nominal 8f run of its short video gave (`higher_frames`).
        let short = PlanEntry {
            higher_frames: 3,
            ..entry("2", "two.mp4", &[0, 1, 2])
        };
        let plan = Plan {
            schema: crate::core::plan::SCHEMA.into(),
            dataset: "d".into(),
            protocol: "main".into(),
            targets: "terminal".into(),
            strategies: vec!["nested".into()],
            entries: vec![entry("1", "one.mp4", &[0, 2, 4]), short],
            skipped: Vec::new(),
        };
        let cell = |id: &str, config: &str, frames| ImportedCell {
            frames,
            ..imported(id, config)
        };
        let mut imp = Import::default();
        for (config, frames, id) in [("4f", 4, "1"), ("8f", 8, "2")] {
            imp.add_run(Run {
                file: format!("{config}.csv").into(),
                model: "m".into(),
                config: config.into(),
                frames,
                rules: Default::default(),
                cells: vec![cell(id, config, frames)],
            })
            .expect("run");
        }
        let logs = vec![nested_run(vec![
            decode("one.mp4", &[0, 2, 4], Some(true)),
            decode("two.mp4", &[0, 1, 2], Some(true)),
        ])];
        let applied = Applied {
            strategy: None,
            pass_no: 0,
            protocol: None,
            plan_hash: None,
            plan_file: None,
        };
        let m = match_rerun(&plan, &applied, &imp, &logs).expect("matched");
        let why = &m.not_matched[0].why;
        assert!(
            why.contains("answered it under configuration 4f, not 8f"),
            "{why}"
        );
        // The same 3 frames as the configuration's own: 8f, not 8f@3f.
        assert_eq!(m.cells.len(), 1);
        assert_eq!(
            (&*m.cells[0].cell.config, m.cells[0].cell.frames),
            ("8f", 8)
        );
    }

    /// The re-run answered under another model name (lmms-eval names the model from
    /// `pretrained`): said, with the way to map it.
    #[test]
    fn a_re_run_under_another_model_name_is_said_with_the_way_to_map_it() {
        let plan = Plan {
            schema: crate::core::plan::SCHEMA.into(),
            dataset: "d".into(),
            protocol: "main".into(),
            targets: "terminal".into(),
            strategies: vec!["nested".into()],
            entries: vec![entry("1", "one.mp4", &[0, 2, 4])],
            skipped: Vec::new(),
        };
        let mut imp = Import::default();
        imp.add_run(Run {
            file: "8f.csv".into(),
            model: "m-Qwen2".into(),
            config: "8f".into(),
            frames: 8,
            rules: Default::default(),
            cells: vec![ImportedCell {
                model: "m-Qwen2".into(),
                ..imported("1", "8f")
            }],
        })
        .expect("run");
        let logs = vec![nested_run(vec![decode("one.mp4", &[0, 2, 4], Some(true))])];
        let applied = Applied {
            strategy: None,
            pass_no: 0,
            protocol: None,
            plan_hash: None,
            plan_file: None,
        };
        let m = match_rerun(&plan, &applied, &imp, &logs).expect("matched");
        let why = &m.not_matched[0].why;
        assert!(
            why.starts_with("the re-run answered it as model m-Qwen2, not m ")
                && why.ends_with("give --model-name m-Qwen2=m"),
            "{why}"
        );
        // A model the plan re-runs too is no other name of m: its answers are its own.
        let both = Plan {
            entries: vec![
                entry("1", "one.mp4", &[0, 2, 4]),
                PlanEntry {
                    model: "m-Qwen2".into(),
                    ..entry("1", "one.mp4", &[0, 2, 4])
                },
            ],
            ..plan
        };
        let m = match_rerun(&both, &applied, &imp, &logs).expect("matched");
        let why = &m.not_matched[0].why;
        assert_eq!(why, "the re-run has no answer for it");
    }

    #[test]
    fn a_protocol_becomes_a_file_name() {
        let p = cells_file(Path::new("ds"), "intervention:lower-policy", "16f", 0);
        assert_eq!(
            p,
            Path::new("ds/interventions/intervention-lower-policy.16f.jsonl")
        );
        let p = cells_file(Path::new("ds"), "x/../y", "a/b", 2);
        assert_eq!(p, Path::new("ds/interventions/x-..-y.a-b.pass2.jsonl"));
    }

    /// An intervention cell of the nested pass 0 re-run of m at 8f (from 4f), planned
    /// with `p.json`, giving frames 1 and 2.
    fn nested_cell(item: &str, config: &str) -> InterventionCell {
        InterventionCell {
            cell: ImportedCell {
                frame_idx: Some(vec![1, 2]),
                ..imported(item, config)
            },
            protocol: "intervention:nested".into(),
            task: "mcq",
            replicate: None,
            nuisance: None,
            rerun_config: "8f".into(),
            plan: Some("sha256:00".into()),
            rerun: Provenance {
                plan_file: Some("p.json".into()),
                targets: "audited".into(),
                strategy: "nested".into(),
                pass: 0,
                config: "8f".into(),
                lower: "4f".into(),
                log: "log".into(),
                log_line: 1,
                answers: None,
                annotators: Vec::new(),
            },
        }
    }

    #[test]
    fn dataset_json_keeps_its_fields_order_and_text_when_runs_are_recorded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ds = dir.path();
        const P: &str = "intervention:nested";
        let a = nested_cell("1", "8f");
        let folder = ds.join(INTERVENTIONS_DIR);
        std::fs::create_dir_all(&folder).expect("mkdir");
        let line = serde_json::to_string(&a).expect("cell") + "\n";
        std::fs::write(folder.join("p.8f.jsonl"), line).expect("cells");
        // Fields out of code-point order, a value on one line, an entry written by hand.
        let harness = r#"{"model": "m", "benchmark": "b", "config": "8f@3f", "rule": null, "provenance": "assumed", "name": "harness", "why": "guess"}"#;
        let configs = r#"{"8f": {"policy": "linspace"},   "16f": {"policy": "linspace"}}"#;
        let before = format!(
            "{{\n  \"name\": \"d\",\n  \"schema\": \"frameaudit/dataset@1\",\n  \"configs\": {configs},\n  \"runs\": [\n    {harness}\n  ],\n  \"videos_dir\": \"videos\"\n}}\n"
        );
        std::fs::write(ds.join("dataset.json"), &before).expect("dataset.json");
        record_runs(ds, "d", P, &[&a]).expect("recorded");
        let after = std::fs::read_to_string(ds.join("dataset.json")).expect("read");
        let keys: Vec<usize> = [
            "\"name\"",
            "\"schema\"",
            "\"configs\"",
            "\"runs\"",
            "\"videos_dir\"",
        ]
        .iter()
        .map(|k| after.find(k).unwrap_or(usize::MAX))
        .collect();
        assert!(
            keys.windows(2).all(|w| w[0] < w[1]),
            "fields in their order:\n{after}"
        );
        assert!(after.contains(configs), "a value as written:\n{after}");
        assert!(after.contains(harness), "a kept entry as written:\n{after}");
        // The new entry is written as the loader's RunEntry is, its fields in that order.
        let new = &after[after.find(harness).expect("harness") + harness.len()..];
        assert!(
            new.find("\"protocol\"") < new.find("\"model\""),
            "the new entry's fields in their order:\n{after}"
        );
        let meta: crate::core::dataset::DatasetMeta =
            serde_json::from_str(&after).expect("the loader reads it");
        assert_eq!(meta.runs.len(), 2);
        assert_eq!(meta.runs[1].protocol.as_deref(), Some(P));
        // Another import of the same cells changes nothing, so the file stays as it is.
        record_runs(ds, "d", P, &[&a]).expect("recorded");
        assert_eq!(
            std::fs::read_to_string(ds.join("dataset.json")).expect("read"),
            after
        );
    }

    #[test]
    fn dataset_json_lists_the_runs_of_the_cells_in_the_folder_and_keeps_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ds = dir.path();
        const P: &str = "intervention:nested";
        // The import wrote 8f and 8f@3f cells; a 16f file of the same plan is left from an
        // earlier pass, a 32f run's cells are gone.
        let (a, b) = (nested_cell("1", "8f"), nested_cell("2", "8f@3f"));
        let folder = ds.join(INTERVENTIONS_DIR);
        std::fs::create_dir_all(&folder).expect("mkdir");
        let line = |c: &InterventionCell| serde_json::to_string(c).expect("cell") + "\n";
        std::fs::write(folder.join("p.8f.jsonl"), line(&a) + &line(&b)).expect("cells");
        std::fs::write(folder.join("p.16f.jsonl"), line(&nested_cell("3", "16f"))).expect("cells");
        let old = |config: &str| {
            serde_json::json!({"protocol": P, "model": "m", "benchmark": "b", "config": config,
                "rule": null, "provenance": "recorded", "name": "old", "why": "old"})
        };
        std::fs::write(
            ds.join("dataset.json"),
            serde_json::json!({"schema": "frameaudit/dataset@1", "name": "d",
                "configs": {"8f": {"policy": "linspace"}}, "videos_dir": "videos",
                "runs": [
                    // For every protocol: kept, beside the protocol's own entry.
                    {"model": "m", "benchmark": "b", "config": "8f@3f", "rule": null,
                     "provenance": "assumed", "name": "harness", "why": "guess"},
                    old("8f"), old("16f"), old("32f")]})
            .to_string(),
        )
        .expect("dataset.json");
        let done = record_runs(ds, "d", P, &[&a, &b]).expect("recorded");
        assert_eq!(
            done,
            RunsRecorded {
                written: vec!["m b 8f".into(), "m b 8f@3f".into()],
                removed: vec!["m b 32f".into()],
            }
        );
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(ds.join("dataset.json")).expect("read"))
                .expect("json");
        assert_eq!(meta["configs"]["8f"]["policy"], "linspace", "{meta}");
        assert_eq!(meta["videos_dir"], "videos", "{meta}");
        let runs: Vec<(&str, &str, &str)> = meta["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|r| {
                let s = |f: &str| r[f].as_str().unwrap_or("-");
                (s("protocol"), s("config"), s("name"))
            })
            .collect();
        assert_eq!(
            runs,
            [
                ("-", "8f@3f", "harness"),
                (P, "16f", "old"),
                (
                    P,
                    "8f",
                    "intervention:nested: a re-run of 8f given the plan's frames through the frame recorder"
                ),
                (
                    P,
                    "8f@3f",
                    "intervention:nested: a re-run of 8f given the plan's frames through the frame recorder"
                )
            ],
            "{meta}"
        );
        // The file reads back as the loader reads it: the new entry is a run.
        let entries: Vec<crate::core::dataset::RunEntry> =
            serde_json::from_value(meta["runs"].clone()).expect("run entries");
        assert_eq!(
            entries[2].rule.provenance,
            crate::core::rules::Provenance::Recorded
        );
        // A dataset without dataset.json gets one; one that is no object is named.
        std::fs::remove_file(ds.join("dataset.json")).expect("rm");
        record_runs(ds, "d", P, &[&a]).expect("recorded");
        let meta = std::fs::read_to_string(ds.join("dataset.json")).expect("read");
        assert!(meta.contains("\"name\": \"d\""), "{meta}");
        std::fs::write(ds.join("dataset.json"), "[1]").expect("write");
        let e = record_runs(ds, "d", P, &[&a]).expect_err("not an object");
        assert!(
            e.to_string().contains("dataset.json: not a JSON object"),
            "{e}"
        );
    }

    /// A dataset is untrusted: a `dataset.json` planted as a link to a file elsewhere is
    /// not written through (the file it leads to stays as it was), and one planted as a
    /// named pipe is refused at once, not waited on. Nodes made here, in a temp dir.
    #[cfg(unix)]
    #[test]
    fn a_planted_dataset_json_is_neither_written_through_nor_waited_on() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (ds, elsewhere) = (tmp.path().join("ds"), tmp.path().join("elsewhere.json"));
        std::fs::create_dir_all(&ds).expect("mkdir");
        let outside = r#"{"schema": "frameaudit/dataset@1", "name": "other"}"#;
        std::fs::write(&elsewhere, outside).expect("write");
        std::os::unix::fs::symlink(&elsewhere, ds.join("dataset.json")).expect("symlink");
        let cell = nested_cell("1", "8f");
        let e = record_runs(&ds, "d", "intervention:nested", &[&cell]).expect_err("a link");
        assert!(e.to_string().contains("dataset.json"), "{e}");
        assert_eq!(std::fs::read_to_string(&elsewhere).expect("read"), outside);
        std::fs::remove_file(ds.join("dataset.json")).expect("rm");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            ds.join("dataset.json"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
        let e = record_runs(&ds, "d", "intervention:nested", &[&cell]).expect_err("a pipe");
        assert!(e.to_string().contains("cannot read"), "{e}");
        let kind = std::fs::symlink_metadata(ds.join("dataset.json")).expect("stat");
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind.file_type()));
    }
}
