//! VLMEvalKit prediction files (FORMATS.md §3.3) into runs: one file per model, dataset and
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
//! folder) is read once. Two different files of one model, dataset and configuration keep
//! the one whose path sorts last (VLMEvalKit's run folders `T{date}_{time}` sort by time).

mod lines;
mod name;
mod options;
mod table;
mod walk;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub(crate) use lines::LineIndex;
pub use name::{Budget, KNOWN_DATASETS, PredictionName, parse_file_name};
pub(crate) use walk::{files_under, has_extension};

use super::{Import, ImportError, ImportedCell, ImportedItem, Run, Sampling};
use options::{gold_letter, labelled, parse_candidates, predicted_letter};
use table::{Table, read_table};

/// Options of the VLMEvalKit importer.
#[derive(Debug, Clone, Default)]
pub struct VlmOptions {
    /// Root of VLMEvalKit's extracted frames (`{root}/images/{dataset}/{video}/frame-{i}-of-{N}.jpg`).
    pub frames_root: Option<PathBuf>,
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

/// How VLMEvalKit sampled the frames of a run of `dataset` under `budget`.
pub fn sampling(dataset: &str, budget: Budget) -> Sampling {
    let (policy, fps) = match budget {
        Budget::Fps(r) => ("fps", Some(r)),
        // VLMEvalKit's MVBench classes take the middle of N equal segments.
        Budget::Frames(_) if dataset.starts_with("MVBench") => ("segment_mid", None),
        Budget::Frames(_) => ("interior", None),
    };
    Sampling {
        policy: policy.to_string(),
        fps,
        inferred: false,
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
    let kept = one_file_per_run(named, imp);

    // Cells of one model and configuration from every dataset make one run.
    let mut runs: BTreeMap<(String, String), (PathBuf, Budget, Vec<ImportedCell>)> =
        BTreeMap::new();
    // The sampling of each configuration on each dataset, to tell when they differ.
    let mut samplings: BTreeMap<String, BTreeMap<String, (Sampling, usize)>> = BTreeMap::new();
    let mut videos: BTreeSet<String> = BTreeSet::new();
    for (path, name) in &kept {
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
        for (item_id, item) in read.items {
            if let Some(v) = &item.video {
                videos.insert(v.clone());
            }
            imp.add_item(&name.dataset, &item_id, item);
        }
        samplings
            .entry(config.clone())
            .or_default()
            .entry(name.dataset.clone())
            .or_insert_with(|| (sampling(&name.dataset, name.budget), 0))
            .1 += 1;
        runs.entry((name.model.clone(), config))
            .or_insert_with(|| (path.clone(), name.budget, Vec::new()))
            .2
            .extend(read.cells);
    }

    let chosen = choose_samplings(samplings, imp);
    let mut warned = BTreeSet::new();
    for ((model, config), (file, budget, cells)) in runs {
        if let Budget::Fps(r) = budget
            && warned.insert(config.clone())
        {
            imp.warnings.push(format!(
                "configuration {config}: VLMEvalKit's fps mode samples {r} frame(s) per second of video, so the count differs from video to video; frameaudit counts it as {} frames (one minute of video), so its place among the frame budgets is nominal",
                budget_frames(budget)
            ));
        }
        imp.add_run(Run {
            file,
            sampling: chosen.get(&config).cloned(),
            frames: budget_frames(budget),
            model,
            config,
            cells,
        })?;
    }
    if let Some(root) = &opts.frames_root {
        check_frames_root(root, &videos, imp);
    }
    Ok(())
}

/// The prediction files among `files` with what their names say; the others are skipped
/// with the reason. A file reached twice (through a link) counts once.
fn name_files(files: Vec<PathBuf>, imp: &mut Import) -> Vec<(PathBuf, PredictionName)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for path in files {
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(canonical) {
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
            Err(why) => imp.skip(&path, None, format!("{}: {why}", shown(&path))),
        }
    }
    out
}

/// Keeps one file of each (model, dataset, configuration): the one whose path sorts last.
/// The others are skipped, saying which file holds the run instead.
fn one_file_per_run(
    named: Vec<(PathBuf, PredictionName)>,
    imp: &mut Import,
) -> Vec<(PathBuf, PredictionName)> {
    let mut by_run: BTreeMap<(String, String, String), Vec<(PathBuf, PredictionName)>> =
        BTreeMap::new();
    for (path, name) in named {
        by_run
            .entry((name.model.clone(), name.dataset.clone(), name.config()))
            .or_default()
            .push((path, name));
    }
    let mut kept = Vec::new();
    for ((model, dataset, config), mut files) in by_run {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let Some(last) = files.pop() else {
            continue;
        };
        for (path, _) in &files {
            let same = std::fs::read(path).ok() == std::fs::read(&last.0).ok();
            let why = if same {
                "the same predictions as".to_string()
            } else {
                imp.warnings.push(format!(
                    "{} and {} both hold model {model:?} on {dataset} under configuration {config}; {} is used",
                    path.display(),
                    last.0.display(),
                    last.0.display()
                ));
                format!("model {model:?} on {dataset} under {config} is also in")
            };
            imp.skip(
                path,
                None,
                format!("{}: {why} {}", shown(path), last.0.display()),
            );
        }
        kept.push(last);
    }
    kept.sort_by(|a, b| a.0.cmp(&b.0));
    kept
}

/// One sampling per configuration (`dataset.json` holds one): the one most runs used (on a
/// tie, the first dataset's), with a warning when the datasets of a configuration sample
/// differently. `samplings` holds, per configuration and dataset, the sampling and its runs.
fn choose_samplings(
    samplings: BTreeMap<String, BTreeMap<String, (Sampling, usize)>>,
    imp: &mut Import,
) -> BTreeMap<String, Sampling> {
    let mut out = BTreeMap::new();
    for (config, by_dataset) in samplings {
        // Runs per distinct sampling, in the order their first dataset comes.
        let mut tally: Vec<(&Sampling, usize)> = Vec::new();
        for (s, n) in by_dataset.values() {
            match tally.iter_mut().find(|(t, _)| *t == s) {
                Some((_, total)) => *total += n,
                None => tally.push((s, *n)),
            }
        }
        let Some(&(chosen, _)) = tally.iter().rev().max_by_key(|(_, n)| *n) else {
            continue;
        };
        if tally.len() > 1 {
            let each: Vec<String> = by_dataset
                .iter()
                .map(|(d, (s, _))| format!("{} on {d}", s.policy))
                .collect();
            imp.warnings.push(format!(
                "configuration {config} samples with {}; dataset.json holds one policy per configuration, so it records {}: import the datasets separately to see each one's frames",
                each.join(", "),
                chosen.policy
            ));
        }
        out.insert(config, chosen.clone());
    }
    out
}

/// What one prediction file gave.
struct Predictions {
    cells: Vec<ImportedCell>,
    items: Vec<(String, ImportedItem)>,
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
    let (id_name, id) = match col("question_id") {
        Some(i) => ("question_id", i),
        None => ("index", need("index")?),
    };
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

    let mut out = Predictions {
        cells: Vec::new(),
        items: Vec::new(),
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
        out.cells.push(ImportedCell {
            model: name.model.clone(),
            benchmark: name.dataset.clone(),
            item_id: item_id.to_string(),
            config: config.clone(),
            frames,
            correct: Some(pred.as_deref() == Some(gold.as_str())),
            pred,
            gold: Some(gold.clone()),
            source_tag: Some(format!("vlmevalkit:{file}")),
        });
        let text = |c: Option<usize>| {
            get(c)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        out.items.push((
            item_id.to_string(),
            ImportedItem {
                question: text(question),
                options: labelled(&options),
                gold: Some(gold),
                video: text(video),
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
    Ok(out)
}

/// Checks that the videos have frame folders under `{root}/images/*/` and says how the
/// dataset reaches them.
fn check_frames_root(root: &Path, videos: &BTreeSet<String>, imp: &mut Import) {
    let images = root.join("images");
    let shown_root = crate::core::text::sanitize(&root.display().to_string()).into_owned();
    let Ok(entries) = std::fs::read_dir(&images) else {
        imp.warnings.push(format!(
            "--frames-root {shown_root}: there is no images/ folder, where VLMEvalKit keeps frames (images/{{dataset}}/{{video}}/frame-{{i}}-of-{{N}}.jpg)"
        ));
        return;
    };
    let mut datasets: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    datasets.sort();
    // Only plain names: a video name from a data file must not lead elsewhere.
    let plain = |v: &str| !v.is_empty() && v != "." && v != ".." && !v.contains(['/', '\\', '\0']);
    let missing: Vec<&String> = videos
        .iter()
        .filter(|v| !plain(v) || !datasets.iter().any(|d| d.join(v.as_str()).is_dir()))
        .collect();
    if let Some(first) = missing.first() {
        imp.warnings.push(format!(
            "--frames-root {shown_root}: {} of {} videos have no frame folder under images/*/ (first: {:?})",
            missing.len(),
            videos.len(),
            crate::core::text::sanitize(first)
        ));
    }
    imp.warnings.push(format!(
        "--frames-root {shown_root}: frames are not copied; frameaudit finds them from the dataset directory, so link {} as images/ inside it; the frame view also needs each item's num_frames in items.jsonl, which VLMEvalKit's files do not give",
        crate::core::text::sanitize(&images.display().to_string())
    ));
}
