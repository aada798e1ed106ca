//! Frames recorded by `frameaudit_record` (docs/recorder.md): a JSON Lines log of every
//! video decode in a harness run. The importers match each logged run to the runs they read
//! (by its command line), and give the cells of each item whose video was decoded the
//! indices the harness asked for, with provenance `recorded`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Import, ImportError};
use crate::core::fsread;
use crate::core::rules::decoder::{Decoder, LoggedSetup};

/// The schema of a recorder log's `start` and `run` lines.
pub const SCHEMA: &str = "frameaudit/frames-log@1";

/// The most a log may be: a bound on what one file can make frameaudit allocate.
const LOG_LIMIT: fsread::Limit = fsread::Limit {
    bytes: 4 << 30,
    what: "a frames log",
};

/// One decode: the video the harness opened and the frame indices it asked for, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Decode {
    /// The video file opened, as logged.
    pub video: String,
    /// The frame indices asked for, in order.
    pub indices: Vec<u64>,
    /// The log's line, for messages.
    pub line: u64,
    /// Under a plan (docs/intervention.md §5): `Some(true)` when the plan's frames were
    /// decoded instead of the harness's, `Some(false)` when the plan was refused and the
    /// harness's own were; `None` for a decode the plan does not name.
    pub planned: Option<bool>,
    /// Why a planned decode was refused.
    pub refused: Option<String>,
    /// A planned decode: how many frames the harness had asked for (`None` when the log
    /// does not say).
    pub asked: Option<usize>,
    /// The reader that decoded (`decord`, `torchcodec`, `pyav`...), as logged.
    pub reader: Option<String>,
}

/// The plan a logged run applied (its `run` line's `plan`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LoggedPlan {
    /// `MODEL/CONFIG`, the run the plan's entries were picked for.
    pub run: String,
    /// The strategy applied.
    pub strategy: String,
    /// The pass applied.
    #[serde(rename = "pass")]
    pub pass_no: u64,
}

/// One harness command run under the recorder, with the decodes logged after it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedRun {
    /// COMMAND and its arguments, as given to the recorder.
    pub command: Vec<String>,
    /// The decodes logged after the run started.
    pub decodes: Vec<Decode>,
    /// The plan the run applied, if any.
    pub plan: Option<LoggedPlan>,
    /// The log file and the line of the `run` event.
    pub file: PathBuf,
    /// The line of the `run` event.
    pub line: u64,
    /// What the run's `start` and `reader_choice` lines say picked its decoders.
    pub setup: LoggedSetup,
    /// The folder the command was run in (the `run` line's `cwd`).
    pub cwd: Option<PathBuf>,
    /// When the run started (its `run` line's `at`) and ended (its `end` line's), to the
    /// second.
    pub window: (Option<std::time::SystemTime>, Option<std::time::SystemTime>),
}

/// The options by which a harness command names where its answers go: lmms-eval's
/// `--output_path`, VLMEvalKit's `--work-dir`, and a plain `--out`/`--output` file or folder.
const OUTPUT_FLAGS: [&str; 6] = [
    "--output_path",
    "--output-path",
    "--work-dir",
    "--work_dir",
    "--out",
    "--output",
];

/// Slack on a run's window: its times are logged to the second, and some file systems keep
/// a file's time to 2 s.
const WINDOW_SLACK: std::time::Duration = std::time::Duration::from_secs(2);

impl LoggedRun {
    /// Where the command wrote its answers, when it names it, against the run's `cwd`.
    pub fn output_path(&self) -> Option<PathBuf> {
        let out = OUTPUT_FLAGS.iter().find_map(|f| flag(&self.command, f))?;
        let out = Path::new(out);
        Some(match &self.cwd {
            Some(cwd) if out.is_relative() => cwd.join(out),
            _ => out.to_path_buf(),
        })
    }

    /// `FILE:LINE` of the run line, and what is known of where and when it wrote.
    pub fn describe(&self) -> String {
        let mut s = format!("{}:{}", self.file.display(), self.line);
        if let Some(out) = self.output_path() {
            s.push_str(&format!(", output {}", out.display()));
        }
        let at = |t: Option<std::time::SystemTime>| {
            t.map_or("?".to_string(), |t| {
                humantime::format_rfc3339_seconds(t).to_string()
            })
        };
        if self.window != (None, None) {
            s.push_str(&format!(
                ", run {} to {}",
                at(self.window.0),
                at(self.window.1)
            ));
        }
        s
    }

    /// Whether this run can have written the answers' `file`: it lies under the command's
    /// output path (when the command names one), and its time falls in the run's window
    /// (where both are known). `Err` says why not.
    pub fn wrote(&self, file: &Path) -> Result<(), String> {
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if let Some(out) = self.output_path()
            && !real(file).starts_with(real(&out))
        {
            return Err(format!(
                "it is not under the run's output {}",
                out.display()
            ));
        }
        let Ok(mtime) = std::fs::metadata(file).and_then(|m| m.modified()) else {
            return Ok(());
        };
        if let Some(start) = self.window.0
            && mtime + WINDOW_SLACK < start
        {
            return Err(format!(
                "it was written at {}, before the run started",
                humantime::format_rfc3339_seconds(mtime)
            ));
        }
        if let Some(end) = self.window.1
            && mtime > end + WINDOW_SLACK
        {
            return Err(format!(
                "it was written at {}, after the run ended",
                humantime::format_rfc3339_seconds(mtime)
            ));
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    schema: Option<String>,
    #[serde(default)]
    event: Option<String>,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    video: Option<String>,
    #[serde(default)]
    indices: Option<Vec<serde_json::Value>>,
    /// A `run` line's plan (an object); a `start` line's is how the plan was taken
    /// (`"applied"`, or why not), which [`run_plan`] leaves aside.
    #[serde(default)]
    plan: Option<serde_json::Value>,
    #[serde(default)]
    planned: Option<bool>,
    #[serde(default)]
    refused: Option<String>,
    #[serde(default)]
    asked: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    reader: Option<String>,
    #[serde(default)]
    env: Option<BTreeMap<String, serde_json::Value>>,
    #[serde(default)]
    versions: Option<BTreeMap<String, serde_json::Value>>,
    #[serde(default)]
    forced: Option<bool>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    at: Option<String>,
}

/// The plan of a `run` line: an object, or none.
fn run_plan(v: Option<serde_json::Value>) -> Result<Option<LoggedPlan>, serde_json::Error> {
    v.filter(|v| !v.is_null())
        .map(serde_json::from_value)
        .transpose()
}

/// Whether `path` is a recorder log: its first line carries [`SCHEMA`].
pub fn is_frames_log(path: &Path) -> bool {
    use std::io::{BufRead, Read};
    let Ok(f) = fsread::open(path, LOG_LIMIT) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(f.into_reader().take(64 << 10))
        .read_line(&mut first)
        .is_err()
    {
        return false;
    }
    first.contains(SCHEMA)
}

/// Reads a recorder log. Decodes belong to the `run` line before them (a log holds one run,
/// or runs appended one after another); lines that cannot be read are listed in `skips`
/// with their line numbers, and a torn last line is ignored as a crash leaves it.
pub fn read(path: &Path, skips: &mut Vec<(u64, String)>) -> Result<Vec<LoggedRun>, ImportError> {
    let cannot = |e: std::io::Error| {
        ImportError::Other(format!(
            "cannot read the frames log {}: {e}",
            path.display()
        ))
    };
    let bytes = fsread::read(path, LOG_LIMIT).map_err(cannot)?;
    let text = String::from_utf8_lossy(crate::core::load::json::strip_bom(&bytes));
    let mut runs: Vec<LoggedRun> = Vec::new();
    let mut saw_schema = false;
    let n_lines = text.lines().count();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let parsed: Line = match serde_json::from_str(raw) {
            Ok(l) => l,
            Err(_) if i + 1 == n_lines && !text.ends_with('\n') => {
                skips.push((line_no, "line cut short (the run was stopped)".into()));
                continue;
            }
            Err(e) => {
                skips.push((line_no, format!("malformed JSON: {e}")));
                continue;
            }
        };
        if let Some(s) = &parsed.schema {
            if s != SCHEMA {
                return Err(ImportError::Other(format!(
                    "{}:{line_no}: unknown frames-log schema {:?}; expected {SCHEMA:?}",
                    path.display(),
                    crate::core::text::sanitize(s)
                )));
            }
            saw_schema = true;
        }
        match parsed.event.as_deref() {
            Some("run") => runs.push(LoggedRun {
                command: parsed.command.unwrap_or_default(),
                decodes: Vec::new(),
                plan: match run_plan(parsed.plan) {
                    Ok(p) => p,
                    Err(e) => {
                        skips.push((line_no, format!("malformed plan of a run line: {e}")));
                        continue;
                    }
                },
                file: path.to_path_buf(),
                line: line_no,
                setup: LoggedSetup {
                    at: format!("{}:{line_no}", path.display()),
                    ..LoggedSetup::default()
                },
                cwd: parsed.cwd.map(PathBuf::from),
                window: (parsed.at.as_deref().and_then(time), None),
            }),
            Some("end") => {
                if let Some(run) = runs.last_mut() {
                    run.window.1 = parsed.at.as_deref().and_then(time);
                }
            }
            // A process's start line: the decoder variables and the installed releases
            // (docs/recorder.md); a start line before any run line belongs to no run.
            Some("start") => {
                if let Some(run) = runs.last_mut() {
                    note_start(&mut run.setup, parsed.env, parsed.versions);
                }
            }
            Some("reader_choice") => {
                if let (Some(run), Some(reader)) = (runs.last_mut(), parsed.reader) {
                    run.setup
                        .reader_choices
                        .insert((reader, parsed.forced.unwrap_or(false)));
                }
            }
            Some("decode") => {
                let (Some(video), Some(indices)) = (parsed.video, parsed.indices) else {
                    skips.push((line_no, "decode without video or indices".into()));
                    continue;
                };
                let Some(indices) = indices
                    .iter()
                    .map(|v| v.as_u64())
                    .collect::<Option<Vec<u64>>>()
                else {
                    skips.push((line_no, "indices are not all frame numbers".into()));
                    continue;
                };
                match runs.last_mut() {
                    Some(run) => run.decodes.push(Decode {
                        video,
                        indices,
                        line: line_no,
                        planned: parsed.planned,
                        refused: parsed.refused,
                        asked: parsed.asked.map(|a| a.len()),
                        reader: parsed.reader,
                    }),
                    None => skips.push((line_no, "a decode before any run line".into())),
                }
            }
            _ => {}
        }
    }
    if !saw_schema {
        return Err(ImportError::Other(format!(
            "{} is not a frameaudit_record log (no line names {SCHEMA:?})",
            path.display()
        )));
    }
    Ok(runs)
}

/// A logged time (`2026-12-01T12:00:00Z`); `None` when it is not one.
fn time(at: &str) -> Option<std::time::SystemTime> {
    humantime::parse_rfc3339_weak(at).ok()
}

/// Adds one process's `start` line to its run's setup: a variable it does not list was unset
/// in that process (when it lists any: a recorder that logs none predates them); a value
/// that is not a string is left out.
fn note_start(
    setup: &mut LoggedSetup,
    env: Option<BTreeMap<String, serde_json::Value>>,
    versions: Option<BTreeMap<String, serde_json::Value>>,
) {
    if let Some(env) = env {
        let known: BTreeSet<String> = setup.env.keys().cloned().collect();
        let keys: BTreeSet<String> = env.keys().cloned().chain(known).collect();
        for key in keys {
            let value = env.get(&key).and_then(|v| v.as_str().map(str::to_string));
            let values = setup.env.entry(key).or_default();
            // A variable first seen now was unset in the processes logged before.
            if values.is_empty() && setup.env_logged {
                values.insert(None);
            }
            values.insert(value);
        }
        setup.env_logged = true;
    }
    for (name, v) in versions.into_iter().flatten() {
        if let Some(v) = v.as_str() {
            setup.versions.insert(name, v.to_string());
        }
    }
}

/// The recorder logs among `paths` (files, or folders searched recursively): the given
/// files themselves, and `.jsonl` files found beside the runs that are logs.
pub fn find_logs(given: &[PathBuf], searched: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: BTreeSet<PathBuf> = given.iter().cloned().collect();
    let mut stack: Vec<PathBuf> = searched.to_vec();
    let mut seen = BTreeSet::new();
    while let Some(p) = stack.pop() {
        let Ok(real) = std::fs::canonicalize(&p) else {
            continue;
        };
        if !seen.insert(real) {
            continue;
        }
        if p.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        } else if p.extension().is_some_and(|e| e == "jsonl")
            && !p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().contains("_samples_"))
            && is_frames_log(&p)
        {
            out.insert(p);
        }
    }
    out.into_iter().collect()
}

/// How an imported run shows in the command line that made it, so a logged run can be
/// matched to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The imported run's model.
    pub model: String,
    /// The imported run's configuration.
    pub config: String,
    /// Every flag must be on the command line with a matching value.
    pub flags: Vec<(String, Expect)>,
}

/// What a flag's value must be.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// Exactly this.
    Is(String),
    /// `k=v,k=v` pairs equal to these, in any order (lmms-eval's `--model_args`).
    Pairs(Vec<(String, String)>),
    /// One of the flag's values (the words after it up to the next flag) is this
    /// (VLMEvalKit's `--data A B`).
    OneOf(String),
}

impl Signature {
    /// Whether `command` made this run.
    pub fn matches(&self, command: &[String]) -> bool {
        self.flags.iter().all(|(name, expect)| match expect {
            Expect::Is(v) => flag(command, name) == Some(v.as_str()),
            Expect::Pairs(want) => flag(command, name).is_some_and(|given| {
                let mut a = parse_pairs(given);
                let mut b = want.clone();
                a.sort();
                b.sort();
                a == b
            }),
            Expect::OneOf(v) => flag_values(command, name).any(|x| x == v),
        })
    }
}

/// `k=v,k=v` as pairs (values may hold `=`), empty parts dropped.
fn parse_pairs(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (p.trim().to_string(), String::new()),
        })
        .collect()
}

/// The values after `--flag` up to the next flag (and the value of `--flag=v`).
pub fn flag_values<'a>(command: &'a [String], name: &'a str) -> impl Iterator<Item = &'a str> {
    let eq = format!("{name}=");
    let mut out = Vec::new();
    let mut i = 0;
    while i < command.len() {
        if command[i] == name {
            i += 1;
            while i < command.len() && !command[i].starts_with("--") {
                out.push(command[i].as_str());
                i += 1;
            }
            continue;
        }
        if let Some(v) = command[i].strip_prefix(&eq) {
            out.push(v);
        }
        i += 1;
    }
    out.into_iter()
}

/// The value of `--flag` in a command line (`--flag value` or `--flag=value`).
pub fn flag<'a>(command: &'a [String], name: &str) -> Option<&'a str> {
    let eq = format!("{name}=");
    command.iter().enumerate().find_map(|(i, a)| {
        if a == name {
            command.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix(&eq)
        }
    })
}

/// What attaching the logs did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AttachSummary {
    /// Logged runs matched to an imported run.
    pub runs: usize,
    /// Cells given recorded frames.
    pub cells: usize,
}

/// An imported run: (model, configuration).
pub type RunKey = (String, String);

/// Per run, per video file name, the distinct index lists decoded.
type Decoded = BTreeMap<RunKey, BTreeMap<String, Vec<Vec<u64>>>>;

/// The frames one video gave the model in a run, from the index lists of its decodes: all
/// lists alike (each question of the video decoded it again); one list with a few
/// single-frame reads inside it (a probe of the first frame); or only single-frame reads
/// (a wrapper that reads frame by frame), whose union is the set. `None` when the lists
/// disagree, since nothing tells which item had which.
fn reconcile(lists: &[Vec<u64>]) -> Option<Vec<u64>> {
    let (singles, whole): (Vec<&Vec<u64>>, Vec<&Vec<u64>>) =
        lists.iter().partition(|l| l.len() <= 1);
    match whole.as_slice() {
        [] => {
            let mut all: Vec<u64> = singles.iter().flat_map(|l| l.iter().copied()).collect();
            all.sort_unstable();
            all.dedup();
            (!all.is_empty()).then_some(all)
        }
        [one] if singles.iter().all(|s| s.iter().all(|i| one.contains(i))) => Some((*one).clone()),
        _ => None,
    }
}

/// Gives cells the frames their logged run decoded. `runs_of` names, for a logged command,
/// the imported (model, configuration) runs it made (empty: not one of this import's).
/// An item's video is matched to its decodes by file name (the item's `video_file`, else
/// its `video`). Where the run's rule gives a strict subset of what was decoded, the harness
/// decoded more than it gave the model (it picks again among the decoded frames): the
/// rule's frames stay, since the decoded ones are not the model's.
pub fn attach(
    imp: &mut Import,
    logs: &[LoggedRun],
    runs_of: &dyn Fn(&[String]) -> Vec<RunKey>,
) -> AttachSummary {
    let mut summary = AttachSummary::default();
    // (model, config) → video file name → the distinct index lists decoded.
    let mut decoded: Decoded = BTreeMap::new();
    for log in logs {
        let matched = runs_of(&log.command);
        if matched.is_empty() {
            imp.warnings.push(format!(
                "{}:{}: the logged command ({}) matches no run of this import; its frames are not used",
                log.file.display(),
                log.line,
                crate::core::text::sanitize(&log.command.join(" "))
            ));
            continue;
        }
        summary.runs += 1;
        let mut matched = matched;
        matched.sort();
        matched.dedup();
        if let Some(d) = logged_decoder(log) {
            let source = format!(
                "the recorder log {}:{} logs its decodes read with {}",
                log.file.display(),
                log.line,
                d.name()
            );
            for (model, config) in &matched {
                imp.set_decoder(model, config, d, &source);
            }
        } else {
            // No decode tells it: what picked the reader, as the processes logged it.
            for (model, config) in &matched {
                imp.set_decoder_from_setup(model, config, &log.setup);
            }
        }
        // One command that made several runs (VLMEvalKit's `--data A B`): a video that
        // more than one of them used was decoded for each, and the log does not tell which
        // decode was whose, so only videos of a single run are attributed.
        let shared: BTreeSet<String> = if matched.len() > 1 {
            videos_of_runs(imp, &matched)
        } else {
            BTreeSet::new()
        };
        for run in matched {
            let by_video = decoded.entry(run).or_default();
            for d in &log.decodes {
                let name = file_name(&d.video);
                if shared.contains(&name) {
                    continue;
                }
                let lists = by_video.entry(name).or_default();
                if !lists.contains(&d.indices) {
                    lists.push(d.indices.clone());
                }
            }
        }
    }
    if decoded.is_empty() {
        return summary;
    }
    let videos = item_videos(imp);
    let mut ambiguous: BTreeSet<String> = BTreeSet::new();
    let mut picked_again = 0usize;
    let mut decisions: Vec<(usize, Vec<u64>)> = Vec::new();
    for (i, cell) in imp.cells().iter().enumerate() {
        let Some(by_video) = decoded.get(&(cell.model.clone(), cell.config.clone())) else {
            continue;
        };
        let Some(video) = videos.get(&(cell.benchmark.clone(), cell.item_id.clone())) else {
            continue;
        };
        // Video-MME names a video by its id; the decode by its file.
        let Some(lists) = by_video.get(video).or_else(|| {
            by_video
                .iter()
                .find(|(name, _)| stem(name) == video.as_str())
                .map(|(_, l)| l)
        }) else {
            continue;
        };
        let Some(frames) = reconcile(lists) else {
            ambiguous.insert(video.clone());
            continue;
        };
        if let Some(rule) = imp.rule_indices(cell, false) {
            let (r, f) = (
                crate::core::sampling::frame_set(rule),
                crate::core::sampling::frame_set(frames.clone()),
            );
            if r.len() < f.len() && r.iter().all(|x| f.binary_search(x).is_ok()) {
                picked_again += 1;
                continue;
            }
        }
        decisions.push((i, frames));
    }
    let cells = imp.cells_mut();
    for (i, frames) in decisions {
        cells[i].frame_idx = Some(frames);
        summary.cells += 1;
    }
    if let Some(first) = ambiguous.first() {
        imp.warnings.push(format!(
            "frames log: {} videos were decoded with different frames within one run (first {:?}), so their items keep the rule's frames",
            ambiguous.len(),
            crate::core::text::sanitize(first)
        ));
    }
    if picked_again > 0 {
        imp.warnings.push(format!(
            "frames log: for {picked_again} cells the harness decoded more frames than it gave the model (it picks again among them), so they keep their rule's frames"
        ));
    }
    summary
}

/// The decoder a logged run decoded with: the reader of its decodes of more than one frame
/// (a single-frame read is often a wrapper's look at the first frame, with another reader),
/// else of all its decodes, when they name one decoder.
fn logged_decoder(log: &LoggedRun) -> Option<Decoder> {
    let readers = |whole: bool| -> BTreeSet<&str> {
        log.decodes
            .iter()
            .filter(|d| !whole || d.indices.len() > 1)
            .filter_map(|d| d.reader.as_deref())
            .collect()
    };
    let mut names = readers(true);
    if names.is_empty() {
        names = readers(false);
    }
    match names.into_iter().collect::<Vec<_>>().as_slice() {
        [one] => Decoder::from_reader(one),
        _ => None,
    }
}

/// Item → the file name of its video (lower case).
fn item_videos(imp: &mut Import) -> BTreeMap<(String, String), String> {
    imp.items_mut()
        .filter_map(|(k, item)| {
            let v = item.video_file.as_deref().or(item.video.as_deref())?;
            Some((k.clone(), file_name(v)))
        })
        .collect()
}

/// The video file names that more than one of `runs` (model, configuration) used.
fn videos_of_runs(imp: &mut Import, runs: &[RunKey]) -> BTreeSet<String> {
    let videos = item_videos(imp);
    let mut users: BTreeMap<&String, BTreeSet<(&str, &str)>> = BTreeMap::new();
    for c in imp.cells() {
        if !runs.iter().any(|(m, k)| *m == c.model && *k == c.config) {
            continue;
        }
        if let Some(v) = videos.get(&(c.benchmark.clone(), c.item_id.clone())) {
            users
                .entry(v)
                .or_default()
                .insert((c.model.as_str(), c.config.as_str()));
        }
    }
    users
        .into_iter()
        .filter(|(_, u)| u.len() > 1)
        .flat_map(|(v, _)| [v.clone(), stem(v).to_string()])
        .collect()
}

/// The last part of a path, lower case.
fn file_name(p: &str) -> String {
    p.rsplit(['/', '\\']).next().unwrap_or(p).to_lowercase()
}

fn stem(name: &str) -> &str {
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::import::{ImportedCell, ImportedItem, Run};

    fn write_log(lines: &[&str]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("tmp");
        use std::io::Write;
        for l in lines {
            writeln!(f, "{l}").expect("write");
        }
        f
    }

    #[test]
    fn decodes_of_a_video_are_reconciled() {
        // Every question of the video decoded it again.
        assert_eq!(reconcile(&[vec![0, 5, 9]]), Some(vec![0, 5, 9]));
        // A probe of the first frame, then the sample.
        assert_eq!(reconcile(&[vec![0], vec![0, 5, 9]]), Some(vec![0, 5, 9]));
        // A wrapper that reads frame by frame.
        assert_eq!(reconcile(&[vec![9], vec![0], vec![5]]), Some(vec![0, 5, 9]));
        // Two samples of one video: nothing tells which item had which.
        assert_eq!(reconcile(&[vec![0, 5], vec![1, 6]]), None);
        assert_eq!(reconcile(&[vec![7], vec![0, 5]]), None);
    }

    #[test]
    fn reads_runs_and_decodes() {
        let f = write_log(&[
            r#"{"schema": "frameaudit/frames-log@1", "event": "run", "command": ["python3", "-m", "lmms_eval", "--model", "llava_vid", "--model_args", "pretrained=a/b,max_frames_num=8"]}"#,
            r#"{"schema": "frameaudit/frames-log@1", "event": "start", "pid": 2}"#,
            r#"{"event": "decode", "pid": 2, "reader": "decord", "video": "/c/videomme/data/x.mp4", "indices": [0, 5, 9]}"#,
            r#"{"event": "decode", "video": "/c/y.mp4", "indices": [1, -2]}"#,
            r#"not json"#,
        ]);
        let mut skips = Vec::new();
        let runs = read(f.path(), &mut skips).expect("log");
        assert_eq!(runs.len(), 1);
        assert_eq!(flag(&runs[0].command, "--model"), Some("llava_vid"));
        assert_eq!(runs[0].decodes.len(), 1);
        assert_eq!(runs[0].decodes[0].indices, [0, 5, 9]);
        assert_eq!(skips.len(), 2, "{skips:?}");
        assert_eq!(skips[0].0, 4);
        assert!(is_frames_log(f.path()));
        let other = write_log(&[r#"{"doc_id": 0}"#]);
        assert!(!is_frames_log(other.path()));
        assert!(read(other.path(), &mut Vec::new()).is_err());
    }

    /// A planned run's `start` line says how the plan was taken (`"plan": "applied"`, a
    /// string, where the `run` line's plan is an object): it is read, with its decoder
    /// setup, not skipped as malformed.
    #[test]
    fn a_planned_start_line_is_read_with_its_setup() {
        let f = write_log(&[
            r#"{"schema": "frameaudit/frames-log@1", "event": "run", "command": ["python3"], "plan": {"path": "p.json", "run": "m/8f", "strategy": "swap", "pass": 0}}"#,
            r#"{"schema": "frameaudit/frames-log@1", "event": "start", "pid": 2, "plan": "applied", "env": {"LMMS_VIDEO_DECODE_BACKEND": "decord"}, "versions": {}}"#,
        ]);
        let mut skips = Vec::new();
        let runs = read(f.path(), &mut skips).expect("log");
        assert!(skips.is_empty(), "{skips:?}");
        assert!(runs[0].plan.is_some());
        assert!(runs[0].setup.env_logged);
        let bad = write_log(&[
            r#"{"schema": "frameaudit/frames-log@1", "event": "run", "command": ["python3"], "plan": "not an object"}"#,
        ]);
        let mut skips = Vec::new();
        let runs = read(bad.path(), &mut skips).expect("log");
        assert!(runs.is_empty());
        assert!(
            skips[0].1.contains("malformed plan of a run line"),
            "{skips:?}"
        );
    }

    #[test]
    fn attaches_by_video_and_leaves_ambiguous_videos() {
        let mut imp = Import::default();
        let cell = |item: &str| ImportedCell {
            model: "m".into(),
            benchmark: "b".into(),
            item_id: item.into(),
            config: "8f".into(),
            frames: 8,
            pred: None,
            gold: None,
            correct: None,
            source_tag: None,
            frame_idx: None,
            read_at: None,
        };
        imp.add_run(Run {
            file: "f".into(),
            model: "m".into(),
            config: "8f".into(),
            frames: 8,
            rules: Default::default(),
            cells: vec![cell("1"), cell("2"), cell("3")],
        })
        .expect("run");
        for (id, video) in [("1", "x"), ("2", "x"), ("3", "z.mp4")] {
            imp.add_item(
                "b",
                id,
                ImportedItem {
                    video: Some(video.into()),
                    ..Default::default()
                },
            );
        }
        let run = LoggedRun {
            command: vec!["--model".into(), "w".into()],
            decodes: vec![
                Decode {
                    video: "/v/x.mp4".into(),
                    indices: vec![0, 3],
                    line: 2,
                    planned: None,
                    refused: None,
                    asked: None,
                    reader: None,
                },
                Decode {
                    video: "/v/x.mp4".into(),
                    indices: vec![0, 3],
                    line: 3,
                    planned: None,
                    refused: None,
                    asked: None,
                    reader: None,
                },
                Decode {
                    video: "/v/z.mp4".into(),
                    indices: vec![1, 2],
                    line: 4,
                    planned: None,
                    refused: None,
                    asked: None,
                    reader: None,
                },
                Decode {
                    video: "/v/z.mp4".into(),
                    indices: vec![3, 4],
                    line: 5,
                    planned: None,
                    refused: None,
                    asked: None,
                    reader: None,
                },
            ],
            plan: None,
            file: "log".into(),
            line: 1,
            setup: Default::default(),
            cwd: None,
            window: (None, None),
        };
        let s = attach(&mut imp, &[run], &|c| {
            if flag(c, "--model") == Some("w") {
                vec![("m".into(), "8f".into())]
            } else {
                Vec::new()
            }
        });
        assert_eq!(s, AttachSummary { runs: 1, cells: 2 });
        let got: Vec<Option<Vec<u64>>> = imp
            .cells_mut()
            .iter()
            .map(|c| c.frame_idx.clone())
            .collect();
        assert_eq!(got, [Some(vec![0, 3]), Some(vec![0, 3]), None]);
        assert!(imp.warnings.iter().any(|w| w.contains("different frames")));
    }
}
