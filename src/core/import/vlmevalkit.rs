//! VLMEvalKit prediction files (docs/formats.md §3.3) into runs: one file per model, dataset and
//! frame budget, `{model}_{dataset}.{xlsx|tsv|json}`, one row per question with `index`,
//! `question`, `answer`, `prediction` and the dataset's own columns.
//!
//! - **Model, dataset, configuration** come from the file name ([`parse_file_name`], whose
//!   documentation gives the rules). The configuration label is `{N}f` or `{R}fps`, with the
//!   input variants after a `-` (`8f-subs`); the benchmark is the dataset name.
//! - **Frame cost of an fps run.** VLMEvalKit's `fps` mode samples R frames per second of
//!   each video, so the count differs from video to video, while a configuration has one
//!   frame cost. An `{R}fps` configuration is given the frames of one minute of video,
//!   `max(1, round(60 R))` ([`FPS_REFERENCE_SECONDS`]), with a warning: its place among
//!   fixed budgets is nominal.
//! - **Items.** The id is the dataset's `question_id` column when there is one, else
//!   VLMEvalKit's `index` (Video-MME's files have only `index`, so their ids are not the
//!   `001-1` ids of lmms-eval). The options come from `candidates` or from columns `A`, `B`...;
//!   the reference letter from `answer` (a letter, or an option's text as in MVBench); the
//!   prediction's letter through [`option_letter`](super::letters::option_letter), else the
//!   option whose text it repeats. An empty or unreadable prediction is a wrong answer.
//! - **Sampling.** `{N}frame` runs sample with policy `interior` (MVBench's datasets:
//!   `segment_mid`), `{R}fps` runs with policy `fps` at R; both are read from the run, not
//!   guessed (`inferred: false`). A model that VLMEvalKit hands the whole video
//!   (`VIDEO_LLM`) samples with its own rule, which the files do not tell.
//! - **Frames on disk** (`--frames-root`): VLMEvalKit keeps them in
//!   `{root}/images/{dataset}/{video}/frame-{i}-of-{N}.jpg`, which frameaudit reads from
//!   the dataset directory's own `images/`. Frames are not copied and `dataset.json` cannot
//!   point outside the dataset, so the import checks that the videos have frame folders and
//!   says how to link them.
//!
//! The same file reached twice (VLMEvalKit links the latest run's files into the model's
//! folder) is read once, and so are two files of the same predictions. Two different files
//! of one model, dataset and configuration are a **re-run** (the same model and dataset name
//! ask the same): the one whose path sorts last is the canonical run (VLMEvalKit's run
//! folders `T{date}_{time}` sort by time, so the latest), and each other one, in path order,
//! gives replicates `rerun-1`, `rerun-2`... of nuisance `rerun` (docs/measures.md §16).

mod lines;
mod name;
mod options;
mod table;
mod walk;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub(crate) use lines::LineIndex;
pub use name::{KNOWN_DATASETS, PredictionName, parse_file_name};
// The budget is the rules' word (which frames a run saw); the import reads it from a name.
pub use crate::core::rules::vlmevalkit::Budget;
pub(crate) use walk::{files_under, has_extension};

use super::{Import, ImportError, ImportedCell, ImportedItem, Run};
use crate::core::fsread;
use crate::core::rules;
use options::{gold_letter, labelled, parse_candidates, predicted_letter};
use table::{Table, read_table};

/// Options of the VLMEvalKit importer.
#[derive(Debug, Clone, Default)]
pub struct VlmOptions {
    /// Root of VLMEvalKit's extracted frames (`{root}/images/{dataset}/{video}/frame-{i}-of-{N}.jpg`).
    pub frames_root: Option<PathBuf>,
    /// The command lines of recorded runs (`frameaudit_record` logs): `run.py --model M
    /// --data A B` tells the order in which one call ran its datasets.
    pub commands: Vec<Vec<String>>,
}

/// The seconds of video whose frames an `{R}fps` configuration counts as its frame cost.
pub const FPS_REFERENCE_SECONDS: f64 = 60.0;

/// The extensions of prediction files.
const EXTENSIONS: [&str; 3] = ["xlsx", "tsv", "json"];

/// The frame cost of a budget: N, or the frames of [`FPS_REFERENCE_SECONDS`] at R fps.
pub fn budget_frames(budget: Budget) -> u64 {
    match budget {
        Budget::Frames(n) => n,
        Budget::Fps(r) => ((r * FPS_REFERENCE_SECONDS).round() as u64).max(1),
    }
}

/// VLMEvalKit's datasets made of others (`ConcatVideoDataset`): their `evaluate()` writes
/// each part's rows again as `{model}_{part}_{budget}` files beside the predictions.
const CONCAT_DATASETS: [(&str, &[&str]); 3] = [
    ("MLVU", &["MLVU_MCQ", "MLVU_OpenEnded"]),
    ("QBench_Video", &["QBench_Video_MCQ", "QBench_Video_VQA"]),
    (
        "TempCompass",
        &[
            "TempCompass_MCQ",
            "TempCompass_Captioning",
            "TempCompass_YorN",
        ],
    ),
];

/// The benchmark a VLMEvalKit dataset's items belong to, named as the other importers name
/// it, so one question is one item whichever harness asked it: Video-MME is `videomme`
/// (lmms-eval's task name and the scale-grid release's); other datasets keep their name.
pub fn benchmark_of(dataset: &str) -> &str {
    match dataset {
        "Video-MME" => "videomme",
        other => other,
    }
}

/// The name of a file as messages show it.
fn shown(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Imports the VLMEvalKit prediction files found under `paths`; `progress` is called with
/// the number of rows read since the last call.
pub fn import(
    paths: &[PathBuf],
    opts: &VlmOptions,
    imp: &mut Import,
    progress: &dyn Fn(u64),
) -> Result<(), ImportError> {
    let named = name_files(files_under(paths, &EXTENSIONS)?, imp);
    let named = drop_concat_parts(named, imp);
    let (kept, reruns) = one_file_per_run(named, imp);

    let mixed = mixed_mode_calls(&kept);
    let ordered = call_orders(&kept, &mixed, &opts.commands);
    // Cells of one model and configuration from every dataset make one run (the canonical
    // one, slot 0, then its re-runs).
    let mut runs: BTreeMap<(String, String, usize), VlmRunCells> = BTreeMap::new();
    // Frame file template → the videos whose saved frames it names.
    let mut videos: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let all = kept
        .iter()
        .map(|(p, n)| (p, n, 0))
        .chain(reruns.iter().map(|(p, n, k)| (p, n, *k)));
    for (path, name, slot) in all {
        let table = match read_table(path) {
            Ok(t) => t,
            Err(why) => {
                imp.skip(path, None, format!("{}: {why}", shown(path)));
                continue;
            }
        };
        progress(table.rows.len() as u64);
        let read = match read_predictions(path, name, &table, imp) {
            Ok(r) => r,
            Err(why) => {
                imp.skip(path, None, format!("{}: {why}", shown(path)));
                continue;
            }
        };
        let config = name.config();
        // Each part of a concatenated dataset sampled its own frames.
        let rules: BTreeMap<String, rules::RunRule> = read
            .benchmarks
            .iter()
            .map(|(benchmark, dataset)| {
                let mut rule = rules::vlmevalkit::resolve(&rules::vlmevalkit::VlmRun {
                    model: &name.model,
                    dataset,
                    budget: name.budget,
                });
                let call = (call_folder(path), name.model.clone());
                if mixed.contains(&call) {
                    match ordered
                        .get(&call)
                        .and_then(|o| o.get(dataset_name(path, name)))
                    {
                        Some(setting) => as_run(&mut rule, setting),
                        None => carried_over(&mut rule),
                    }
                }
                (benchmark.clone(), rule)
            })
            .collect();
        for (benchmark, item_id, item) in read.items {
            if let (Some(v), Some(t)) = (
                &item.video,
                rules.get(&benchmark).and_then(|r| r.frame_files.as_ref()),
            ) {
                videos.entry(t.clone()).or_default().insert(v.clone());
            }
            imp.add_item(&benchmark, &item_id, item);
        }
        // `python run.py --model M --data {dataset}_{budget}` made this file.
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(data) = stem.strip_prefix(&format!("{}_", name.model)) {
            use super::frames_log::{Expect, Signature};
            let sig = Signature {
                model: name.model.clone(),
                config: config.clone(),
                flags: vec![
                    ("--model".into(), Expect::OneOf(name.model.clone())),
                    ("--data".into(), Expect::OneOf(data.to_string())),
                ],
            };
            if !imp.signatures.contains(&sig) {
                imp.signatures.push(sig);
            }
        }
        let run = runs
            .entry((name.model.clone(), config, slot))
            .or_insert_with(|| VlmRunCells {
                file: path.clone(),
                budget: name.budget,
                rules: BTreeMap::new(),
                cells: Vec::new(),
            });
        run.rules.extend(rules);
        run.cells.extend(read.cells);
    }

    let mut warned = BTreeSet::new();
    for ((model, config, slot), run) in runs {
        if slot > 0 {
            imp.add_rerun(
                Run {
                    file: run.file,
                    rules: run.rules,
                    frames: budget_frames(run.budget),
                    model,
                    config,
                    cells: run.cells,
                },
                ALONE,
            )?;
            continue;
        }
        if let Budget::Fps(r) = run.budget
            && warned.insert(config.clone())
        {
            imp.warnings.push(format!(
                "configuration {config}: VLMEvalKit's fps mode samples {r} frame(s) per second of video, so the count differs from video to video; frameaudit counts it as {} frames (one minute of video), so its place among the frame budgets is nominal",
                budget_frames(run.budget)
            ));
        }
        for rule in run.rules.values() {
            if rule.provenance == crate::core::rules::Provenance::Assumed
                && warned.insert(format!("{model}\0{}", rule.name))
            {
                imp.warnings.push(format!(
                    "model {model:?}: frames are assumed, not exact ({}): {}",
                    rule.name, rule.why
                ));
            }
        }
        imp.add_run(Run {
            file: run.file,
            rules: run.rules,
            frames: budget_frames(run.budget),
            model,
            config,
            cells: run.cells,
        })?;
    }
    if let Some(root) = &opts.frames_root {
        check_frames_root(root, &videos, imp);
    }
    Ok(())
}

/// The folder of the `run.py` call that wrote a prediction file (`{work_dir}/{model}/T{date}`):
/// the folder of the file a link leads to.
fn call_folder(path: &Path) -> PathBuf {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The (call folder, model) pairs whose `run.py` call ran the model on datasets of both
/// kinds, frame counts and frame rates.
fn mixed_mode_calls(files: &[(PathBuf, PredictionName)]) -> BTreeSet<(PathBuf, String)> {
    let mut kinds: BTreeMap<(PathBuf, String), (bool, bool)> = BTreeMap::new();
    for (path, name) in files {
        let k = kinds
            .entry((call_folder(path), name.model.clone()))
            .or_default();
        match name.budget {
            Budget::Frames(_) => k.0 = true,
            Budget::Fps(_) => k.1 = true,
        }
    }
    kinds
        .into_iter()
        .filter(|(_, (frames, fps))| *frames && *fps)
        .map(|(k, _)| k)
        .collect()
}

/// A Qwen-VL class that samples the video itself keeps its frame count and rate on one model
/// object across the datasets of a `run.py` call (VLMEvalKit e8e78f05,
/// `inference_video.py`): after a dataset of the other kind both are cleared, and
/// qwen_vl_utils then samples at its default 2 fps. A call that ran both kinds leaves each
/// run's frames depending on the order of the datasets, which the files do not tell.
fn carried_over(rule: &mut rules::RunRule) {
    let qwen = rule
        .rule
        .as_ref()
        .and_then(|r| serde_json::to_value(r).ok())
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_owned))
        .is_some_and(|k| k.starts_with("qwen_"));
    if !qwen || rule.provenance != rules::Provenance::Reproduced {
        return;
    }
    rule.provenance = rules::Provenance::Assumed;
    rule.why = format!(
        "this run.py call ran the model on frame-count and frame-rate datasets both, and VLMEvalKit e8e78f05 keeps the model's settings from one dataset to the next: a dataset run right after one of the other kind was sampled at qwen_vl_utils' default 2 fps instead; the files do not tell the order, so the dataset's own setting is shown ({})",
        rule.why
    );
}

/// The dataset name a prediction file's run was given (`Video-MME_8frame`): the file's stem
/// after the model's name.
fn dataset_name<'a>(path: &'a Path, name: &PredictionName) -> &'a str {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    stem.strip_prefix(name.model.as_str())
        .and_then(|s| s.strip_prefix('_'))
        .unwrap_or(stem)
}

/// What a Qwen-VL model that samples the video itself was set to when it ran a dataset.
#[derive(Debug, Clone, PartialEq)]
enum QwenSetting {
    /// The dataset's own frame count or rate.
    Own,
    /// Neither: qwen_vl_utils' default, 2 frames a second, after the dataset named.
    Default { after: String },
}

/// For the mixed-mode calls whose command line a recorder log holds (`--model M --data A
/// B ...` naming every dataset of the call's files), what each dataset's run was set to, by
/// replaying VLMEvalKit e8e78f05's `inference_video.py` over the datasets in the command's
/// order: the model starts with `nframe=128, fps=2` (Qwen2VLChat's defaults); a frame-count
/// dataset sets `nframe` and clears `fps`, a frame-rate one sets `fps` and clears `nframe`,
/// but each only while the other is still set, so right after a dataset of the other kind
/// both end up cleared.
fn call_orders(
    files: &[(PathBuf, PredictionName)],
    mixed: &BTreeSet<(PathBuf, String)>,
    commands: &[Vec<String>],
) -> BTreeMap<(PathBuf, String), BTreeMap<String, QwenSetting>> {
    let mut out = BTreeMap::new();
    for call in mixed {
        let names: BTreeSet<&str> = files
            .iter()
            .filter(|(p, n)| n.model == call.1 && call_folder(p) == call.0)
            .map(|(p, n)| dataset_name(p, n))
            .collect();
        let order = commands.iter().find_map(|c| {
            let model = super::frames_log::flag(c, "--model")?;
            let data: Vec<String> = super::frames_log::flag_values(c, "--data")
                .map(str::to_owned)
                .collect();
            (model == call.1 && names.iter().all(|n| data.iter().any(|d| d == n))).then_some(data)
        });
        let Some(order) = order else { continue };
        let (mut nframe, mut fps): (Option<f64>, Option<f64>) = (Some(128.0), Some(2.0));
        let mut settings = BTreeMap::new();
        let mut previous = String::new();
        for data in &order {
            let Ok(n) = parse_file_name(&format!("{}_{data}", call.1), &[]) else {
                continue;
            };
            let (d_nframe, d_fps) = match n.budget {
                Budget::Frames(k) => (k as f64, -1.0),
                Budget::Fps(r) => (0.0, r),
            };
            if nframe.is_some_and(|x| x > 0.0) {
                nframe = if d_nframe > 0.0 { Some(d_nframe) } else { None };
            }
            if fps.is_some_and(|x| x > 0.0) {
                fps = if d_fps > 0.0 { Some(d_fps) } else { None };
            }
            let own = match n.budget {
                Budget::Frames(_) => fps.is_none() && nframe == Some(d_nframe),
                Budget::Fps(_) => fps == Some(d_fps),
            };
            let setting = if own {
                QwenSetting::Own
            } else {
                QwenSetting::Default {
                    after: previous.clone(),
                }
            };
            settings.insert(data.clone(), setting);
            previous.clone_from(data);
        }
        out.insert(call.clone(), settings);
    }
    out
}

/// A Qwen-VL run whose setting the call's order tells: its own (the rule stands, now known
/// to), or qwen_vl_utils' 2 fps default.
fn as_run(rule: &mut rules::RunRule, setting: &QwenSetting) {
    let linspace = match &rule.rule {
        Some(rules::FrameRule::QwenNframes { linspace, .. })
        | Some(rules::FrameRule::QwenFps { linspace, .. }) => *linspace,
        _ => return,
    };
    match setting {
        QwenSetting::Own => {
            rule.why = format!(
                "{}; the recorder's log of the run.py call gives the order of its datasets, and this one kept its own setting",
                rule.why
            );
        }
        QwenSetting::Default { after } => {
            rule.rule = Some(rules::FrameRule::QwenFps {
                fps: 2.0,
                min_frames: None,
                max_frames: None,
                linspace,
                resample: None,
            });
            rule.name = format!(
                "VLMEvalKit e8e78f05 (run.py call order): qwen_vl_utils' default 2 fps, after {after} in the same call"
            );
            rule.why = format!(
                "VLMEvalKit e8e78f05 keeps the model's settings across the datasets of a run.py call; this dataset ran right after {after}, of the other kind, which left neither nframe nor fps set, so qwen_vl_utils sampled at its default 2 fps (order from the recorder's log of the call; checked against VLMEvalKit's code and a recorded run)"
            );
        }
    }
}

/// The cells of one (model, configuration) from its prediction files.
struct VlmRunCells {
    /// The first file, named by errors.
    file: PathBuf,
    budget: Budget,
    /// Benchmark → the run's frame rule on it.
    rules: BTreeMap<String, crate::core::rules::RunRule>,
    cells: Vec<ImportedCell>,
}

/// The prediction files among `files` with what their names say; the others are skipped
/// with the reason. A file reached twice (through a link) counts once.
fn name_files(files: Vec<PathBuf>, imp: &mut Import) -> Vec<(PathBuf, PredictionName)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for path in files {
        // A copy that lost VLMEvalKit's links keeps each as a small file holding the
        // link's target: read as the link it was.
        let path = link_placeholder(&path).unwrap_or(path);
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(canonical) {
            continue;
        }
        // run.py's record of what it ran, beside the predictions of every call.
        if path.file_name().is_some_and(|n| n == "status.json") {
            continue;
        }
        if !has_extension(&path, &EXTENSIONS) {
            imp.skip(
                &path,
                None,
                format!("{}: not an xlsx, tsv or json file", shown(&path)),
            );
            continue;
        }
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let folders: Vec<String> = path
            .ancestors()
            .skip(1)
            .take(2)
            .filter_map(|a| a.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        let folders: Vec<&str> = folders.iter().map(String::as_str).collect();
        match parse_file_name(&stem, &folders) {
            Ok(name) => out.push((path, name)),
            Err(why) => imp.skip(&path, None, why),
        }
    }
    out
}

/// The file a link placeholder names: a file of a few bytes whose text is a relative path,
/// from its folder, to an existing file of the same name (what a copy that does not keep
/// symbolic links makes of VLMEvalKit's `{model}/{file}` -> `{run}/{file}` links).
fn link_placeholder(path: &Path) -> Option<PathBuf> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1024 {
        return None;
    }
    let text = fsread::read_to_string(path, fsread::IMPORT).ok()?;
    let target = text.trim_end_matches(['\n', '\r']);
    if target.is_empty() || target.contains(['\n', '\0']) || Path::new(target).is_absolute() {
        return None;
    }
    let resolved = path.parent()?.join(target);
    (resolved.file_name() == path.file_name() && resolved.is_file() && resolved != path)
        .then_some(resolved)
}

/// The prediction files of concatenated datasets' parts that `evaluate()` wrote from a
/// whole file given too: skipped, since their rows are the whole file's again.
fn drop_concat_parts(
    named: Vec<(PathBuf, PredictionName)>,
    imp: &mut Import,
) -> Vec<(PathBuf, PredictionName)> {
    let wholes: BTreeMap<(String, String, String), PathBuf> = named
        .iter()
        .filter(|(_, n)| CONCAT_DATASETS.iter().any(|(d, _)| *d == n.dataset))
        .map(|(p, n)| ((n.model.clone(), n.dataset.clone(), n.config()), p.clone()))
        .collect();
    let mut out = Vec::with_capacity(named.len());
    for (path, name) in named {
        let whole = CONCAT_DATASETS
            .iter()
            .find(|(_, parts)| parts.contains(&name.dataset.as_str()))
            .and_then(|(d, _)| wholes.get(&(name.model.clone(), d.to_string(), name.config())));
        match whole {
            Some(w) => imp.skip(
                &path,
                None,
                format!(
                    "{}: a part file that VLMEvalKit's evaluate() writes from {} (its rows are there)",
                    shown(&path),
                    shown(w)
                ),
            ),
            None => out.push((path, name)),
        }
    }
    out
}

/// How a re-run is imported otherwise, for the summary.
const ALONE: &str = "to import it otherwise, import its run folder alone (into another dataset, or into this one with --replicate NAME --nuisance KIND)";

/// A prediction file and what its name says.
type Named = (PathBuf, PredictionName);

/// Keeps one file of each (model, dataset, configuration), the one whose path sorts last,
/// and each other file of other predictions as a re-run: `(path, name, N)` for `rerun-N`,
/// in path order. A file of the same predictions as one kept is skipped, saying which.
fn one_file_per_run(
    named: Vec<Named>,
    imp: &mut Import,
) -> (Vec<Named>, Vec<(PathBuf, PredictionName, usize)>) {
    let mut by_run: BTreeMap<(String, String, String), Vec<Named>> = BTreeMap::new();
    for (path, name) in named {
        by_run
            .entry((name.model.clone(), name.dataset.clone(), name.config()))
            .or_default()
            .push((path, name));
    }
    let mut kept = Vec::new();
    let mut reruns = Vec::new();
    for mut files in by_run.into_values() {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let Some(last) = files.pop() else {
            continue;
        };
        // The predictions kept so far, the canonical ones first: (bytes, path).
        let bytes = |p: &Path| fsread::read(p, fsread::IMPORT).ok();
        let mut seen: Vec<(Option<Vec<u8>>, PathBuf)> = vec![(bytes(&last.0), last.0.clone())];
        let mut others = Vec::new();
        for (path, name) in files {
            let mine = bytes(&path);
            if let Some((_, same)) = seen.iter().find(|(b, _)| mine.is_some() && *b == mine) {
                imp.skip(
                    &path,
                    None,
                    format!(
                        "{}: the same predictions as {}",
                        shown(&path),
                        same.display()
                    ),
                );
                continue;
            }
            seen.push((mine, path.clone()));
            others.push((path, name));
        }
        for (k, (path, name)) in others.into_iter().enumerate() {
            reruns.push((path, name, k + 1));
        }
        kept.push(last);
    }
    kept.sort_by(|a, b| a.0.cmp(&b.0));
    reruns.sort_by(|a, b| a.0.cmp(&b.0));
    (kept, reruns)
}

/// What one prediction file gave.
struct Predictions {
    cells: Vec<ImportedCell>,
    /// (benchmark, item id, description).
    items: Vec<(String, String, ImportedItem)>,
    /// The benchmarks of the cells, each with the VLMEvalKit dataset it came from.
    benchmarks: BTreeMap<String, String>,
}

/// The cells and items of one prediction file. Rows that cannot be used are skipped with
/// their reason; the error says why no row can be (a column missing).
fn read_predictions(
    path: &Path,
    name: &PredictionName,
    table: &Table,
    imp: &mut Import,
) -> Result<Predictions, String> {
    let col = |c: &str| table.column(c);
    let need = |c: &str| {
        col(c).ok_or_else(|| {
            format!(
                "no {c:?} column (columns: {}): not a prediction file",
                table.columns.join(", ")
            )
        })
    };
    let prediction = need("prediction")?;
    let answer = need("answer")?;
    // A concatenated dataset's file (MLVU...) names each row's part and its index there:
    // the part is the benchmark, so the rows match a run of that part alone.
    let (sub_dataset, original_index) = (col("SUB_DATASET"), col("original_index"));
    let (id_name, id) = match (col("question_id"), original_index) {
        (Some(i), _) => ("question_id", i),
        (None, Some(i)) if sub_dataset.is_some() => ("original_index", i),
        _ => ("index", need("index")?),
    };
    let (start, end, prefix) = (col("start"), col("end"), col("prefix"));
    let candidates = col("candidates");
    // Options as columns A, B, C... (VLMEvalKit's image MCQ layout), in letter order.
    let letter_cols: Vec<usize> = (b'A'..=b'Z')
        .map_while(|c| col(&char::from(c).to_string()))
        .collect();
    let (question, video) = (col("question"), col("video"));
    let (duration, task_type) = (col("duration"), col("task_type"));
    let category = col("category").or(col("domain"));
    let config = name.config();
    let frames = budget_frames(name.budget);
    let file = shown(path);
    let read_from: std::sync::Arc<Path> = path.into();

    let mut out = Predictions {
        cells: Vec::new(),
        items: Vec::new(),
        benchmarks: BTreeMap::new(),
    };
    let mut unread = 0usize;
    for (row, fields) in &table.rows {
        let fields = match fields {
            Ok(f) => f,
            Err(why) => {
                imp.skip(path, Some(*row), format!("{file}: {why}"));
                continue;
            }
        };
        let get = |c: Option<usize>| c.and_then(|c| fields.get(c)).and_then(|v| v.as_deref());
        let Some(item_id) = get(Some(id)).map(str::trim).filter(|s| !s.is_empty()) else {
            imp.skip(path, Some(*row), format!("{file}: no {id_name}"));
            continue;
        };
        let options: Vec<String> = match get(candidates) {
            Some(text) => parse_candidates(text).unwrap_or_default(),
            None => letter_cols
                .iter()
                .map_while(|&c| get(Some(c)).map(str::to_string))
                .collect(),
        };
        let Some(answer_text) = get(Some(answer)) else {
            imp.skip(path, Some(*row), format!("{file}: no answer"));
            continue;
        };
        let Some(gold) = gold_letter(answer_text, &options) else {
            imp.skip(
                path,
                Some(*row),
                format!("{file}: the answer is neither an option letter nor an option's text"),
            );
            continue;
        };
        let pred = get(Some(prediction)).and_then(|p| {
            let letter = predicted_letter(p, &options);
            if letter.is_none() && !p.trim().is_empty() {
                unread += 1;
            }
            letter
        });
        let gold = gold.to_string();
        let pred = pred.map(String::from);
        let dataset = get(sub_dataset)
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .unwrap_or(&name.dataset);
        let benchmark = benchmark_of(dataset).to_string();
        out.benchmarks
            .entry(benchmark.clone())
            .or_insert_with(|| dataset.to_string());
        out.cells.push(ImportedCell {
            model: name.model.clone(),
            benchmark: benchmark.clone(),
            item_id: item_id.to_string(),
            config: config.clone(),
            frames,
            correct: Some(pred.as_deref() == Some(gold.as_str())),
            pred,
            gold: Some(gold.clone()),
            source_tag: Some(format!("vlmevalkit:{file}")),
            frame_idx: None,
            read_at: super::ReadAt::new(&read_from, Some(*row)),
        });
        let text = |c: Option<usize>| {
            get(c)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let seconds = |c: Option<usize>| {
            get(c)
                .and_then(|d| d.trim().parse::<f64>().ok())
                .filter(|d| d.is_finite() && *d >= 0.0)
        };
        out.items.push((
            benchmark,
            item_id.to_string(),
            ImportedItem {
                question: text(question),
                options: labelled(&options),
                gold: Some(gold),
                video: text(video),
                // MVBench keeps a video's folder apart from its name.
                video_file: text(prefix).zip(text(video)).map(|(p, v)| {
                    format!("{}/{v}", p.trim_start_matches("./").trim_end_matches('/'))
                }),
                start: seconds(start),
                end: seconds(end),
                // Video-MME's duration is a group ("short"), not seconds: only numbers count.
                duration: get(duration)
                    .and_then(|d| d.trim().parse::<f64>().ok())
                    .filter(|d| d.is_finite() && *d >= 0.0),
                category: text(category),
                task_type: text(task_type),
                ..Default::default()
            },
        ));
    }
    if unread > 0 {
        imp.warnings.push(format!(
            "{file}: {unread} prediction(s) name no option; counted as wrong answers"
        ));
    }
    if name.dataset == "Video-MME" && id_name == "index" {
        video_mme_ids(&mut out, &file, imp);
    }
    Ok(out)
}

/// Gives Video-MME rows the benchmark's own question ids (`001-1`), which lmms-eval and the
/// scale-grid release use. VLMEvalKit numbers the rows of Video-MME's parquet file in order
/// (`index`), and that file holds three questions per video, in question-id order: row `i`
/// is question `i % 3 + 1` of video `i / 3 + 1`. The rule is only applied when every row's
/// index is a number and the three rows of each group name one video; otherwise the ids stay
/// VLMEvalKit's, with a warning.
fn video_mme_ids(out: &mut Predictions, file: &str, imp: &mut Import) {
    let mut videos: BTreeMap<u64, &str> = BTreeMap::new();
    let mut ok = true;
    for (_, id, item) in &out.items {
        let (Ok(i), Some(v)) = (id.parse::<u64>(), item.video.as_deref()) else {
            ok = false;
            break;
        };
        if *videos.entry(i / 3).or_insert(v) != v {
            ok = false;
            break;
        }
    }
    if !ok {
        imp.warnings.push(format!(
            "{file}: the rows do not follow Video-MME's order (three questions per video), so the items keep VLMEvalKit's index as their id and will not match other harnesses' Video-MME items"
        ));
        return;
    }
    let qid = |id: &str| {
        id.parse::<u64>()
            .map(|i| format!("{:03}-{}", i / 3 + 1, i % 3 + 1))
            .unwrap_or_else(|_| id.to_string())
    };
    for (_, id, _) in &mut out.items {
        *id = qid(id);
    }
    for c in &mut out.cells {
        c.item_id = qid(&c.item_id);
    }
}

/// Checks that the videos whose runs took VLMEvalKit's saved frames have their frame folders
/// under `root` (`videos`: frame file template → videos), and links `root/images` into the
/// dataset as `images`, where the runs' frame files are looked for.
fn check_frames_root(root: &Path, videos: &BTreeMap<String, BTreeSet<String>>, imp: &mut Import) {
    let shown_root = crate::core::text::sanitize(&root.display().to_string()).into_owned();
    let images = root.join("images");
    if !images.is_dir() {
        imp.warnings.push(format!(
            "--frames-root {shown_root}: there is no images/ folder, where VLMEvalKit keeps the frames it saved (images/{{dataset}}/{{video}}/frame-{{i}}-of-{{n}}.jpg)"
        ));
        return;
    }
    for (template, names) in videos {
        // The folder part of the template, e.g. `images/Video-MME/{video}` (no `{i}`, `{n}`).
        let Some((folder, _)) = template.rsplit_once('/') else {
            continue;
        };
        let missing: Vec<&String> = names
            .iter()
            .filter(|v| {
                crate::core::paths::check_relative(v).is_err()
                    || !root
                        .join(crate::core::paths::saved_frame_path(folder, v, 0, 0))
                        .is_dir()
            })
            .collect();
        if let Some(first) = missing.first() {
            imp.warnings.push(format!(
                "--frames-root {shown_root}: {} of {} videos have no frame folder {} (first: {:?})",
                missing.len(),
                names.len(),
                crate::core::text::sanitize(folder),
                crate::core::text::sanitize(first)
            ));
        }
    }
    imp.links.insert("images".into(), images);
}
