//! Which files are lmms-eval logs, which invocation each belongs to, and what that
//! invocation was: the model, the configuration label, its frame count and sampling.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::lenient::{MapOnly, ModelArgs, Scalar, python_json_to_json};
use crate::core::import::{ImportError, frames_from_label};
use crate::core::load::json::json_error_text;
use crate::core::rules::{self, Provenance, RunRule};

/// A log file found under the given paths.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LogFile {
    /// `{date_id}_samples_{task}.jsonl` (v0.3 and later).
    Samples {
        path: PathBuf,
        date_id: String,
        task: String,
    },
    /// A `.json` that may be an old (<= 0.2.2) `{task}.json` with a `logs` array;
    /// `explicit` when the user named it, so that a file without logs is reported.
    Json { path: PathBuf, explicit: bool },
}

impl LogFile {
    pub(super) fn path(&self) -> &Path {
        match self {
            LogFile::Samples { path, .. } | LogFile::Json { path, .. } => path,
        }
    }
}

/// Finds the log files under `paths` (files or folders, searched recursively), each once,
/// sorted by path so that every later step is deterministic.
pub(super) fn discover(paths: &[PathBuf]) -> Result<Vec<LogFile>, ImportError> {
    let mut found: Vec<(PathBuf, bool)> = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .map_err(|e| ImportError::Other(format!("cannot read {}: {e}", p.display())))?;
        if meta.is_dir() {
            walk(p, &mut found)?;
        } else {
            found.push((p.clone(), true));
        }
    }
    // The same file reached through two given paths counts once.
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (path, explicit) in found {
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(key) {
            continue;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some((date_id, task)) = samples_name(&name) {
            out.push(LogFile::Samples {
                path,
                date_id,
                task,
            });
        } else if name.ends_with(".json") && !is_results_name(&name) {
            out.push(LogFile::Json { path, explicit });
        } else if explicit {
            let hint = if is_results_name(&name) {
                "it is a results file: pass its samples files or their folder"
            } else {
                "expected {date_id}_samples_{task}.jsonl or an old {task}.json with `logs`"
            };
            return Err(ImportError::Other(format!(
                "{} is not an lmms-eval log: {hint}",
                path.display()
            )));
        }
    }
    out.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<(PathBuf, bool)>) -> Result<(), ImportError> {
    let read =
        |e: std::io::Error| ImportError::Other(format!("cannot read {}: {e}", dir.display()));
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(read)?
        .collect::<Result<_, _>>()
        .map_err(read)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let kind = e.file_type().map_err(read)?;
        // Symbolic links to folders are not followed: they could loop.
        if kind.is_dir() {
            walk(&e.path(), out)?;
        } else if kind.is_file() || (kind.is_symlink() && e.path().is_file()) {
            out.push((e.path(), false));
        }
    }
    Ok(())
}

/// `("20240901_101010", "videomme")` from `20240901_101010_samples_videomme.jsonl`.
fn samples_name(name: &str) -> Option<(String, String)> {
    let stem = name.strip_suffix(".jsonl")?;
    let (date_id, task) = stem.split_once("_samples_")?;
    (!date_id.is_empty() && !task.is_empty()).then(|| (date_id.to_string(), task.to_string()))
}

fn is_results_name(name: &str) -> bool {
    name == "results.json" || name.ends_with("_results.json")
}

/// What a results file (or an old log's `args`) says about the invocation.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct RunMeta {
    /// `config.model`: the model wrapper (`llava_onevision`, `qwen2_5_vl`...).
    pub wrapper: Option<String>,
    /// `config.model_args`, parsed; `None` when absent.
    pub args: Option<Vec<(String, String)>>,
    /// The results file's `model_name_sanitized` (v0.3 and later).
    pub sanitized: Option<String>,
    /// `config.model_backend` (0.7 and later): the class the wrapper id resolved to, e.g.
    /// `lmms_eval.models.chat.qwen2_5_vl.Qwen2_5_VL (chat)`.
    pub backend: Option<String>,
    /// `lmms_eval_version`, when it names one (lmms-eval writes `unknown@unknown` when it
    /// cannot tell).
    pub version: Option<String>,
    /// The line of the results file that gives `config.model_args`, for messages about
    /// its values.
    pub args_line: Option<u64>,
}

#[derive(Deserialize, Default)]
struct ResultsFile<'a> {
    #[serde(default, borrow)]
    config: MapOnly<RunConfig<'a>>,
    #[serde(default, borrow)]
    model_name_sanitized: Scalar<'a>,
    #[serde(default, borrow)]
    lmms_eval_version: Scalar<'a>,
}

/// `config` of a results file, `args` of an old log: both name the wrapper `model`.
#[derive(Deserialize, Default)]
pub(super) struct RunConfig<'a> {
    #[serde(default, borrow)]
    model: Scalar<'a>,
    #[serde(default)]
    model_args: ModelArgs,
    #[serde(default, borrow)]
    model_backend: Scalar<'a>,
}

impl RunConfig<'_> {
    pub(super) fn meta(&self) -> RunMeta {
        RunMeta {
            wrapper: self.model.text(),
            args: self.model_args.0.clone(),
            sanitized: None,
            backend: self.model_backend.text(),
            version: None,
            args_line: None,
        }
    }
}

/// Parses JSON that Python wrote, accepting its `NaN` and `Infinity`.
pub(super) fn from_python_json<'a, T: Deserialize<'a>>(
    text: &'a [u8],
    fixed: &'a mut Option<Vec<u8>>,
) -> Result<T, serde_json::Error> {
    match serde_json::from_slice(text) {
        Ok(v) => Ok(v),
        Err(e) if e.is_syntax() => {
            *fixed = python_json_to_json(text);
            match fixed {
                Some(f) => serde_json::from_slice(f),
                None => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// Reads a results file: `Ok(None)` when it does not exist.
pub(super) fn read_results(path: &Path) -> Result<Option<RunMeta>, ImportError> {
    let bytes = match crate::core::fsread::read(path, crate::core::fsread::IMPORT) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ImportError::Other(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    // Python's NaN and Infinity made null once, for the read and for the checks by type
    // (valid JSON has none, and is read as it is).
    let raw = strip_bom(&bytes);
    let nan_free = python_json_to_json(raw);
    let text = nan_free.as_deref().unwrap_or(raw);
    let r: ResultsFile = serde_json::from_slice(text).map_err(|e| {
        ImportError::Other(format!(
            "{}: line {}: malformed results file: {}",
            path.display(),
            e.line(),
            json_error_text(&e)
        ))
    })?;
    let problems = results_problems(text, path);
    if !problems.is_empty() {
        // On one line, as an error is said (its text escaped whole).
        return Err(ImportError::Other(problems.join("; ")));
    }
    let mut meta = r.config.0.map(|c| c.meta()).unwrap_or_default();
    meta.args_line = key_line(text, &["config", "model_args"]);
    meta.sanitized = r.model_name_sanitized.text();
    meta.version = r
        .lmms_eval_version
        .text()
        .filter(|v| !v.is_empty() && !v.starts_with("unknown"));
    Ok(Some(meta))
}

/// The 1-based line of a key of a JSON object text: `path[0]` a key of the outer object,
/// each next one a key of the object the one before holds. Where a message sends the reader
/// of a pretty-printed results file; `None` when the text does not have the key there.
fn key_line(text: &[u8], path: &[&str]) -> Option<u64> {
    // Object and array depth; how many keys of `path` were found, each one deeper.
    let (mut depth, mut found, mut i) = (0usize, 0usize, 0usize);
    while i < text.len() {
        match text[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                let name = text.get(start + 1..i)?;
                i += 1;
                let is_key = text[i.min(text.len())..].trim_ascii_start().first() == Some(&b':');
                if is_key
                    && depth == found + 1
                    && path.get(found).is_some_and(|k| name == k.as_bytes())
                {
                    found += 1;
                    if found == path.len() {
                        let lines = memchr::memchr_iter(b'\n', &text[..start]).count();
                        return Some(1 + lines as u64);
                    }
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                // Out of the value of the last key found: the next one is not in it.
                if depth <= found && found > 0 {
                    return None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Every field of a results file that frameaudit reads and that has a type lmms-eval never
/// writes there, each named with its line: read leniently, such a field would pass for an
/// absent one (a `config.model_args` of numbers as "no model_args").
fn results_problems(text: &[u8], path: &Path) -> Vec<String> {
    use serde_json::Value;
    let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(text) else {
        return Vec::new();
    };
    /// A field, its value, the types it may have and what they are called.
    type Field<'v> = (
        &'static str,
        Option<&'v Value>,
        fn(&Value) -> bool,
        &'static str,
    );
    let string: fn(&Value) -> bool = Value::is_string;
    let args: fn(&Value) -> bool = |v| v.is_string() || v.is_object();
    let object: fn(&Value) -> bool = Value::is_object;
    let config = root.get("config");
    let inner = |k: &str| config.and_then(Value::as_object).and_then(|c| c.get(k));
    let fields: [Field<'_>; 6] = [
        ("config", config, object, "an object"),
        ("config.model", inner("model"), string, "a string"),
        (
            "config.model_args",
            inner("model_args"),
            args,
            "a string or an object",
        ),
        (
            "config.model_backend",
            inner("model_backend"),
            string,
            "a string",
        ),
        (
            "model_name_sanitized",
            root.get("model_name_sanitized"),
            string,
            "a string",
        ),
        (
            "lmms_eval_version",
            root.get("lmms_eval_version"),
            string,
            "a string",
        ),
    ];
    fields
        .into_iter()
        .filter_map(|(field, v, ok, expected)| {
            let v = v.filter(|v| !v.is_null() && !ok(v))?;
            let keys: Vec<&str> = field.split('.').collect();
            let line = key_line(text, &keys);
            let found = crate::core::text::json_kind(v);
            Some(format!(
                "{}{}: field `{field}`: expected {expected}, found {found}",
                path.display(),
                line.map_or(String::new(), |l| format!(":{l}"))
            ))
        })
        .collect()
}

/// The lmms-eval version family a samples file's shape tells, for results files that do not
/// name their version: `0.7` writes `token_counts` and a flat `filtered_resps`, 0.4 to 0.6
/// drop `doc`, 0.3 and older keep it. Reads the first line only; `None` when it cannot tell.
pub(super) fn sniff_version(path: &Path) -> Option<String> {
    use std::io::BufRead;
    let file = crate::core::fsread::open(path, crate::core::fsread::IMPORT)
        .ok()?
        .into_reader();
    let mut line = String::new();
    // A bounded read: the first line of a samples file holds one sample.
    std::io::BufReader::new(file)
        .take(16 << 20)
        .read_line(&mut line)
        .ok()?;
    let line = crate::core::load::json::strip_bom_str(&line);
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    let o = v.as_object()?;
    let family = if o.contains_key("token_counts")
        || o.get("filtered_resps").is_some_and(|r| !r.is_array())
    {
        "0.7"
    } else if o.contains_key("doc") {
        "0.3"
    } else {
        "0.4"
    };
    Some(family.into())
}

pub(super) fn strip_bom(b: &[u8]) -> &[u8] {
    crate::core::load::json::strip_bom(b)
}

/// The `model_args` keys that carry the number of frames, by wrapper: `max_frames_num`
/// (llava_onevision, llava_vid, longva), `max_num_frames` (qwen2_vl, qwen2_5_vl, qwen3_vl),
/// `num_frames`, `num_frame` (internvl2), `nframes`, `fixed_num_frames` (llava_onevision2).
const BUDGET_KEYS: [&str; 6] = [
    // llava_onevision2: a fixed frame count, which wins over its max_num_frames.
    "fixed_num_frames",
    "max_frames_num",
    "max_num_frames",
    "num_frames",
    "num_frame",
    "nframes",
];

/// The keys of a frame rate: `fps` (qwen wrappers), `video_fps` (llava_vid).
const FPS_KEYS: [&str; 2] = ["fps", "video_fps"];

/// One lmms-eval invocation as frameaudit records it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RunCtx {
    pub model: String,
    pub config: String,
    pub frames: u64,
    /// The frame rule of the run (`None` for text-only runs).
    pub rule: Option<RunRule>,
    /// The wrapper, when known, for the warning about assumed frames.
    pub wrapper: Option<String>,
    /// Whether the frame budget is the wrapper's default (`model_args` gives none).
    pub default_budget: bool,
}

/// `--config LABEL=PATH`, with PATH resolved.
#[derive(Debug)]
pub(super) struct Overrides {
    rules: Vec<(String, PathBuf, PathBuf)>,
    used: Vec<bool>,
}

impl Overrides {
    pub(super) fn new(given: &[(String, PathBuf)]) -> Result<Self, ImportError> {
        let mut rules: Vec<(String, PathBuf, PathBuf)> = Vec::new();
        for (label, path) in given {
            let canon = std::fs::canonicalize(path).map_err(|e| {
                ImportError::Other(format!(
                    "--config {label}={}: cannot read {}: {e}",
                    path.display(),
                    path.display()
                ))
            })?;
            if let Some((other, _, _)) = rules.iter().find(|(l, _, c)| *c == canon && l != label) {
                return Err(ImportError::Other(format!(
                    "--config gives {} two labels, {other:?} and {label:?}",
                    path.display()
                )));
            }
            rules.push((label.clone(), path.clone(), canon));
        }
        let used = vec![false; rules.len()];
        Ok(Overrides { rules, used })
    }

    /// The label for a log file whose invocation is also described by `results`: the
    /// override whose PATH is the file, the results file or the closest folder above them.
    pub(super) fn label_for(&mut self, file: &Path, results: Option<&Path>) -> Option<String> {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let file = canon(file);
        let results = results.map(canon);
        let hit = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, (_, _, p))| file.starts_with(p) || results.as_ref() == Some(p))
            .max_by_key(|(_, (_, _, p))| p.components().count())
            .map(|(i, _)| i)?;
        self.used[hit] = true;
        Some(self.rules[hit].0.clone())
    }

    /// The overrides that matched no run, as `--config LABEL=PATH`.
    pub(super) fn unused(&self) -> Vec<String> {
        self.rules
            .iter()
            .zip(&self.used)
            .filter(|(_, u)| !**u)
            .map(|((l, p, _), _)| format!("--config {l}={}", p.display()))
            .collect()
    }
}

/// Where the frame budget of `file` comes from, for the error when there is none.
pub(super) enum Source<'a> {
    /// A v0.3+ samples file and its results file (absent when missing).
    Results(Option<&'a Path>),
    /// An old log, with its own `args` and maybe a sibling `results.json`.
    OldLog,
}

/// Resolves model, configuration, frames and sampling of one log file.
pub(super) fn resolve(
    file: &Path,
    meta: &RunMeta,
    task: &str,
    label: Option<String>,
    source: Source,
    warnings: &mut Vec<String>,
) -> Result<RunCtx, ImportError> {
    let args = meta.args.as_deref().unwrap_or_default();
    let arg = |keys: &[&str]| {
        keys.iter().find_map(|k| {
            args.iter()
                .find(|(a, _)| a == k)
                .map(|(a, v)| (a.clone(), v.clone()))
        })
    };
    // Every value that is not what its key needs, together, named where model_args were
    // read: the results file (and its line) or the log's own args.
    let mut bad: Vec<String> = Vec::new();
    let mut value = |keys: &[&str], what: &str, read: &dyn Fn(&str) -> Option<f64>| {
        let (k, v) = arg(keys)?;
        let x = read(&v);
        if x.is_none() {
            bad.push(format!("{k}={v} is not {what}"));
        }
        x
    };
    let count = |v: &str| whole(v).map(|n| n as f64);
    let rate = |v: &str| v.parse::<f64>().ok().filter(|f| f.is_finite() && *f > 0.0);
    let budget = value(&BUDGET_KEYS, "a frame count", &count).map(|n| n as u64);
    let fps = value(&FPS_KEYS, "a frame rate", &rate);
    let max_pixels = value(&["max_pixels"], "a pixel count", &count).map(|n| n as u64);
    if !bad.is_empty() {
        let at = match source {
            Source::Results(Some(r)) => format!(
                "{}{}: field `config.model_args`",
                r.display(),
                meta.args_line.map_or(String::new(), |l| format!(":{l}"))
            ),
            _ => format!("{}: model_args", file.display()),
        };
        return Err(ImportError::Other(format!("{at}: {}", bad.join("; "))));
    }
    let lmms = rules::lmms_eval::LmmsRun {
        wrapper: meta.wrapper.as_deref().unwrap_or_default(),
        backend: meta.backend.as_deref(),
        model_args: args,
        version: meta.version.as_deref(),
        task,
    };
    // A run without a frame key used its wrapper's default, which the wrapper's code
    // gives.
    let default = match budget {
        None if meta.wrapper.is_some() => rules::lmms_eval::default_budget(&lmms),
        _ => None,
    };
    let budget = budget.or(default);
    let (config, frames) = match label {
        Some(label) => {
            let frames = match (frames_from_label(&label), budget) {
                (Some(f), Some(b)) if f != b => {
                    warnings.push(format!(
                        "{}: --config {label} says {f} frames, model_args {b}; using {f}",
                        file.display()
                    ));
                    f
                }
                (Some(f), _) => f,
                (None, Some(b)) => b,
                (None, None) => {
                    return Err(ImportError::Other(format!(
                        "{}: the label {label:?} of --config names no frame count and the run's model_args give none; use a label such as 32f or textonly",
                        file.display()
                    )));
                }
            };
            (label, frames)
        }
        None => {
            let Some(frames) = budget else {
                return Err(no_budget(file, meta, source));
            };
            (auto_label(frames, max_pixels, fps), frames)
        }
    };
    let rule = (frames > 0).then(|| match &meta.wrapper {
        Some(_) => rules::lmms_eval::resolve(&lmms, frames),
        None => RunRule {
            rule: None,
            provenance: Provenance::Assumed,
            name: "unknown".into(),
            why: "the results file names no model wrapper (config.model)".into(),
            frame_files: None,
            decoder: None,
        },
    });
    Ok(RunCtx {
        model: model_id(meta, file),
        config,
        frames,
        rule,
        wrapper: meta.wrapper.clone(),
        default_budget: default.is_some(),
    })
}

/// `16f`; `textonly` for 0 frames; `_151k` when the wrapper was given `max_pixels` (a
/// resolution sweep at one frame count holds several configurations); `_1fps` with a rate.
fn auto_label(frames: u64, max_pixels: Option<u64>, fps: Option<f64>) -> String {
    if frames == 0 {
        return "textonly".into();
    }
    let mut label = format!("{frames}f");
    if let Some(p) = max_pixels {
        // The per-item CSV names 151 200 pixels `151k`: thousands, rounded.
        label.push_str(&format!("_{}k", (p + 500) / 1000));
    }
    if let Some(f) = fps {
        label.push_str(&format!("_{f}fps"));
    }
    label
}

fn no_budget(file: &Path, meta: &RunMeta, source: Source) -> ImportError {
    let dir = file.parent().unwrap_or(Path::new("."));
    let fix = format!(
        "pass --config LABEL=PATH with the configuration it ran, e.g. --config 32f={}",
        dir.display()
    );
    let keys = BUDGET_KEYS.join(", ");
    let why = match (source, &meta.args) {
        (Source::Results(None), _) => "has no results file of the same date beside it, and only the results file holds the frame budget".to_string(),
        (Source::Results(Some(r)), Some(args)) => format!(
            "no frame budget: {}'s config.model_args ({}) has none of {keys}",
            r.display(),
            show_args(args)
        ),
        (Source::Results(Some(r)), None) => format!("no frame budget: {} has no config.model_args", r.display()),
        (Source::OldLog, Some(args)) => format!("no frame budget: model_args ({}) has none of {keys}", show_args(args)),
        (Source::OldLog, None) => "no frame budget: neither its `args` nor a results.json beside it give model_args".to_string(),
    };
    ImportError::Other(format!("{}: {why}; {fix}", file.display()))
}

fn show_args(args: &[(String, String)]) -> String {
    args.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A whole number, also written `16.0`.
fn whole(v: &str) -> Option<u64> {
    v.parse::<u64>().ok().or_else(|| {
        v.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0 && *f < 9e15)
            .map(|f| f as u64)
    })
}

/// The model id: lmms-eval's own `model_name_sanitized` rule applied to the name in
/// `model_args` (the `pretrained` checkpoint, or `model`, `model_version`...): its last two
/// path parts joined by `__` (`lmms-lab__llava-onevision-qwen2-7b-ov`). It is computed
/// rather than read, so that logs of every version name a model alike; for hub models it
/// is also the folder lmms-eval wrote into. Without a name in `model_args`: the results
/// file's `model_name_sanitized`, else the wrapper, else the folder.
fn model_id(meta: &RunMeta, file: &Path) -> String {
    // lmms-eval's order: a fine-tune (peft, delta) is named before its base.
    const NAME_KEYS: [&str; 9] = [
        "peft",
        "delta",
        "pretrained",
        "model",
        "model_version",
        "model_name",
        "model_id",
        "path",
        "engine",
    ];
    let args = meta.args.as_deref().unwrap_or_default();
    let named = NAME_KEYS.iter().find_map(|k| {
        args.iter()
            .find(|(a, v)| a == k && !v.is_empty())
            .map(|(_, v)| v.as_str())
    });
    if let Some(name) = named {
        let parts: Vec<&str> = name.trim_end_matches('/').split('/').collect();
        let tail = parts[parts.len().saturating_sub(2)..].join("/");
        let id = sanitize_model_name(&tail);
        if !id.is_empty() {
            return id;
        }
    }
    meta.sanitized
        .clone()
        .or_else(|| meta.wrapper.clone())
        .or_else(|| {
            file.parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "unknown-model".into())
}

/// lmms-eval's `sanitize_model_name`: runs of `"<>:/|\?*[]` become `__`.
fn sanitize_model_name(name: &str) -> String {
    let special = |c: char| {
        matches!(
            c,
            '"' | '<' | '>' | ':' | '/' | '|' | '\\' | '?' | '*' | '[' | ']'
        )
    };
    let mut out = String::with_capacity(name.len());
    let mut in_run = false;
    for c in name.chars() {
        if special(c) {
            if !in_run {
                out.push_str("__");
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// Runs whose frames are assumed, and runs on a wrapper's default budget: each wrapper
/// warned about once.
#[derive(Debug, Default)]
pub(super) struct SamplingNotes {
    assumed: BTreeSet<String>,
    defaults: BTreeSet<(String, u64)>,
}

impl SamplingNotes {
    pub(super) fn note(&mut self, ctx: &RunCtx, file: &Path, warnings: &mut Vec<String>) {
        let wrapper = ctx.wrapper.clone().unwrap_or_else(|| "?".into());
        if let Some(rule) = &ctx.rule
            && rule.provenance == Provenance::Assumed
            && self.assumed.insert(wrapper.clone())
        {
            warnings.push(format!(
                "model wrapper {wrapper:?}: frames are assumed, not exact ({}): {} ({})",
                rule.name,
                rule.why,
                file.display()
            ));
        }
        if ctx.default_budget && self.defaults.insert((wrapper.clone(), ctx.frames)) {
            warnings.push(format!(
                "model wrapper {wrapper:?}: model_args set no frame budget, so the run used the wrapper's default of {} frames ({})",
                ctx.frames,
                file.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(args: &str, wrapper: &str) -> RunMeta {
        RunMeta {
            wrapper: Some(wrapper.into()),
            args: Some(ModelArgs::parse(args)),
            sanitized: None,
            backend: None,
            version: Some("0.7".into()),
            args_line: Some(7),
        }
    }

    fn ctx(args: &str, wrapper: &str, label: Option<&str>) -> Result<RunCtx, ImportError> {
        resolve(
            Path::new("logs/m/x_samples_videomme.jsonl"),
            &meta(args, wrapper),
            "videomme",
            label.map(String::from),
            Source::Results(Some(Path::new("logs/m/x_results.json"))),
            &mut Vec::new(),
        )
    }

    #[test]
    fn names_and_labels() {
        let c = ctx(
            "pretrained=lmms-lab/llava-onevision-qwen2-7b-ov,conv_template=qwen_1_5,max_frames_num=16",
            "llava_onevision",
            None,
        )
        .expect("ctx");
        assert_eq!(c.model, "lmms-lab__llava-onevision-qwen2-7b-ov");
        assert_eq!((c.config.as_str(), c.frames), ("16f", 16));
        assert!(c.rule.is_some_and(|r| r.rule.is_some()));
        let c = ctx(
            "pretrained=/data/ckpt/run3/,max_num_frames=64,max_pixels=151200,fps=1",
            "qwen2_5_vl",
            None,
        )
        .expect("ctx");
        assert_eq!(c.model, "ckpt__run3");
        assert_eq!(c.config, "64f_151k_1fps");
        assert!(c.rule.is_some());
        let c = ctx(
            "pretrained=OpenGVLab/InternVL2-8B,num_frame=8",
            "internvl2",
            None,
        )
        .expect("ctx");
        assert!(c.rule.is_some());
        let c = ctx("pretrained=a/b,max_frames_num=0", "llava_vid", None).expect("ctx");
        assert_eq!((c.config.as_str(), c.frames, c.rule), ("textonly", 0, None));
        assert_eq!(sanitize_model_name("a:/b|c"), "a__b__c");
    }

    #[test]
    fn overrides_and_missing_budgets() {
        let c = ctx("pretrained=a/b", "llava_vid", Some("32f_nested")).expect("override");
        assert_eq!((c.config.as_str(), c.frames), ("32f_nested", 32));
        let c =
            ctx("pretrained=a/b,max_frames_num=8", "llava_vid", Some("fast")).expect("override");
        assert_eq!((c.config.as_str(), c.frames), ("fast", 8));
        // No frame key: the wrapper's constructor default, said so.
        let c = ctx("pretrained=a/b,conv_template=x", "llava_vid", None).expect("default");
        assert_eq!(
            (c.config.as_str(), c.frames, c.default_budget),
            ("20f", 20, true)
        );
        let c = ctx("pretrained=a/b", "llava_vid", Some("fast")).expect("override");
        assert_eq!((c.config.as_str(), c.frames), ("fast", 20));
        // A wrapper whose default frameaudit does not know.
        let e = ctx("pretrained=a/b,conv_template=x", "some_model", None).expect_err("no budget");
        let e = e.to_string();
        assert!(
            e.contains("logs/m/x_samples_videomme.jsonl: no frame budget"),
            "{e}"
        );
        assert!(e.contains("--config 32f=logs/m"), "{e}");
        let e = ctx("pretrained=a/b,max_frames_num=many", "llava_vid", None).expect_err("bad");
        assert!(
            e.to_string()
                .contains("max_frames_num=many is not a frame count"),
            "{e}"
        );
        assert!(ctx("pretrained=a/b", "some_model", Some("fast")).is_err());
        // Every bad value together, named where model_args were read.
        let e = ctx(
            "pretrained=a/b,max_frames_num=many,fps=-1,max_pixels=big",
            "llava_vid",
            None,
        )
        .expect_err("bad")
        .to_string();
        assert_eq!(
            e,
            "logs/m/x_results.json:7: field `config.model_args`: max_frames_num=many is not a frame count; fps=-1 is not a frame rate; max_pixels=big is not a pixel count"
        );
    }

    /// A results file's fields of a type lmms-eval never writes are each named, with their
    /// lines, all together; a field of the right type, or null, is read as before.
    #[test]
    fn every_mistyped_field_of_a_results_file_is_named() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("r_results.json");
        let write = |text: &str| std::fs::write(&path, text).expect("write");
        write(
            "{\n  \"results\": {\"config\": {\"model\": 1}, \"x\": \"\\\"config\\\":\"},\n  \"config\": {\n    \"model\": [\"llava_vid\"],\n    \"model_args\": 16,\n    \"model_backend\": null\n  },\n  \"model_name_sanitized\": \"a__b\",\n  \"lmms_eval_version\": NaN\n}\n",
        );
        let e = read_results(&path).expect_err("mistyped").to_string();
        let p = path.display();
        assert_eq!(
            e,
            format!(
                "{p}:4: field `config.model`: expected a string, found an array; {p}:5: field `config.model_args`: expected a string or an object, found a number"
            )
        );
        write("{\"config\": 3, \"lmms_eval_version\": {\"v\": 1}}");
        let e = read_results(&path).expect_err("mistyped").to_string();
        assert!(
            e.contains(&format!(
                "{p}:1: field `config`: expected an object, found a number"
            )),
            "{e}"
        );
        assert!(
            e.contains("field `lmms_eval_version`: expected a string, found an object"),
            "{e}"
        );
        write(
            "{\n\"config\": {\"model\": \"llava_vid\",\n\"model_args\": \"pretrained=a/b,max_frames_num=8\"}}",
        );
        let m = read_results(&path).expect("read").expect("there");
        assert_eq!(m.wrapper.as_deref(), Some("llava_vid"));
        assert_eq!(m.args_line, Some(3));
    }

    #[test]
    fn file_names() {
        assert_eq!(
            samples_name("2024-09-01T10-10-10.5_samples_mvbench_action_sequence.jsonl"),
            Some((
                "2024-09-01T10-10-10.5".into(),
                "mvbench_action_sequence".into()
            ))
        );
        assert_eq!(samples_name("results.jsonl"), None);
        assert!(is_results_name("20240901_101010_results.json"));
    }
}
