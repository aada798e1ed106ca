//! lmms-eval runs (`--log_samples`, docs/formats.md §3.2) become runs of the response matrix:
//! one run per model and configuration, one cell per logged sample.
//!
//! **Files.** Under the given files and folders (searched recursively, in path order):
//! `{date_id}_samples_{task}.jsonl` (v0.3 and later, in `{output_path}/{model}/`), each
//! paired with `{date_id}_results.json` in its folder; and old (<= 0.2.2) `{task}.json`
//! files holding a `logs` array. An old log carries the command line in its `args`
//! (`model`, `model_args`), so it needs no results file; without `args` the `results.json`
//! that lmms-eval 0.1/0.2 wrote beside it is read. Other files are ignored.
//!
//! **Versions.** v0.2.3 to v0.3 lines carry `doc`, `arguments` and `resps`; v0.4 to v0.6
//! drop them and keep `filtered_resps` as a list; v0.7 flattens it to a string and adds
//! `token_counts`. Only `doc_id`, `target`, `filtered_resps`, `doc` and the metric dicts
//! are read, so every version gives the same cells; the item id never comes from `doc`,
//! which later versions lack.
//!
//! **Model, configuration, frames.** The model id is lmms-eval's own folder name for the
//! checkpoint in `config.model_args` (`pretrained=lmms-lab/llava-onevision-qwen2-7b-ov` →
//! `lmms-lab__llava-onevision-qwen2-7b-ov`), computed the same way for every version. The
//! frame budget is the first of `max_frames_num`, `max_num_frames`, `num_frames`,
//! `num_frame`, `nframes` in `model_args`; the configuration label is `{N}f`, `textonly` for
//! 0 frames, with `_{P}k` when the wrapper was given `max_pixels` (P thousands, rounded:
//! a resolution sweep at one frame count must not collide) and `_{r}fps` when it was given
//! `fps`/`video_fps`. `--config LABEL=PATH` sets the label of every log at or under PATH
//! (or whose results file is PATH; the deepest PATH wins), and its frames come from the
//! label (`frames_from_label`), else from `model_args`. A log with neither is an error that
//! names the file and the `--config` to pass.
//!
//! **Runs.** Logs of one (model, configuration) form one run, whatever their invocation:
//! `videomme` on Monday and `mvbench` on Tuesday at 16 frames are one configuration. Two
//! invocations that both logged the same task for the same (model, configuration) are a
//! **re-run** when their wrapper (`config.model`) and `model_args` are identical (the same
//! pairs, in any order): the log read first (in path order; in one folder, the earliest
//! `date_id`) is the canonical run, and each later one gives replicates `rerun-1`,
//! `rerun-2`... of nuisance `rerun` (docs/measures.md §16). Otherwise, or when a log does not
//! tell its arguments, they are an error naming both files.
//!
//! **Tasks.** The task name is the benchmark. The metric dict a line carries decides how it
//! is read:
//!
//! | metric dict | item id | prediction | gold | `correct` |
//! |---|---|---|---|---|
//! | `videomme_perception_score` | `question_id` | `pred_answer` | `answer` | `correct` of the judge variant, else derived |
//! | `mvbench_accuracy` | `doc_id` | letter of `pred_answer` (raw text) | `gt_answer` | `score` |
//! | `lvb_acc` | `id` | `parsed_pred` | `answer` | derived |
//! | `mlvu_percetion_score` | `question_id` (the question text) | `pred_answer` | `answer` | derived |
//! | egoschema `score` {pred, ground_truth} | `submission` key (`video_idx`), else `doc.video_idx`/`q_uid`, else `doc_id` | letter of `pred` (an index) | letter of `ground_truth` | derived |
//! | tempcompass `avg_accuracy` | `"{video_id}: {question}"` | letter (yes/no) of the prediction, of the judge's pick for captioning | `gt-answer` | `rating` |
//! | anything else (warned once per task) | `doc_id` | letter of `filtered_resps` (argmax of a log-likelihood task) | `target` | derived |
//!
//! "Derived" leaves `correct` empty so the matrix compares prediction and gold
//! (docs/measures.md §1.3); a task's own score is recorded when it has one, because that is what
//! the harness counted (MVBench's lenient matching, TempCompass's LLM judge). Predictions the
//! harness parsed are kept as they are (an empty one is no prediction); raw text goes through
//! [`option_letter`](super::letters::option_letter). Samples of one task that share an id but not a
//! `doc_id` (MLVU repeats question texts) are keyed `{id}#{doc_id}`; the same document twice is a
//! duplicate, counted by [`Import`]. A line without the metric dict the rest of its file carries is
//! skipped rather than keyed by `doc_id` among other ids.
//!
//! **Cells** carry as `source_tag` the invocation they come from: the samples file's
//! `date_id` (with the model and the benchmark, it finds the file), or an old log's folder.
//!
//! **Items.** What the logs say about an item (question, options, video, duration,
//! category, task type, gold) goes to `items.jsonl`; Video-MME's video is the part of the
//! question id before its last `-`.
//!
//! **Sampling.** `dataset.json` records the policy of each configuration as guessed from
//! the model wrapper (`config.model`), marked `inferred`: `linspace` for llava_onevision,
//! llava_onevision1_5, llava_vid, longva, qwen2_vl, qwen2_5_vl and qwen3_vl; `segment_mid`
//! for internvl2, internvl3 and internvl3_5; none (with a warning) for other wrappers.
//!
//! Malformed lines are skipped with their file and line; a file that cannot be read is
//! skipped whole and the others go on. Files are parsed on all cores.

mod lenient;
mod runs;
mod samples;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use serde::Deserialize;

use self::lenient::{MapOnly, Scalar, SeqOnly};
use self::runs::{LogFile, Overrides, RunConfig, RunCtx, RunMeta, SamplingNotes, Source};
use self::samples::Sample;
use super::{Import, ImportError, ImportedCell, ImportedItem, Run};
use crate::core::rules::RunRule;

/// Options of the lmms-eval importer.
#[derive(Debug, Clone, Default)]
pub struct LmmsOptions {
    /// `--config LABEL=PATH`: the configuration label of the run(s) under PATH, overriding
    /// the budget read from the results file.
    pub overrides: Vec<(String, PathBuf)>,
    /// Where the benchmarks' annotation files may be (`--docs`, the `--videos` folder):
    /// they name the videos of tasks whose logs do not.
    pub docs: Vec<PathBuf>,
}

/// Imports the lmms-eval runs found under `paths`; `progress` is called with the number of
/// sample lines read since the last call.
pub fn import(
    paths: &[PathBuf],
    opts: &LmmsOptions,
    imp: &mut Import,
    progress: &dyn Fn(u64),
) -> Result<(), ImportError> {
    let files = runs::discover(paths)?;
    let mut overrides = Overrides::new(&opts.overrides)?;
    let mut warnings = Vec::new();

    // The runs of v0.3+ logs are known before reading a line: a missing budget fails fast.
    let mut results: BTreeMap<PathBuf, Option<RunMeta>> = BTreeMap::new();
    let mut contexts: Vec<Option<RunCtx>> = vec![None; files.len()];
    // What each log's invocation was asked, to tell a re-run from another run.
    let mut asked: Vec<Option<String>> = vec![None; files.len()];
    for (i, f) in files.iter().enumerate() {
        let LogFile::Samples { path, date_id, .. } = f else {
            continue;
        };
        let rpath = path
            .parent()
            .unwrap_or(Path::new(""))
            .join(format!("{date_id}_results.json"));
        let meta = match results.get(&rpath) {
            Some(m) => m.clone(),
            None => {
                let m = runs::read_results(&rpath)?;
                results.insert(rpath.clone(), m.clone());
                m
            }
        };
        let found = meta.is_some().then_some(rpath.as_path());
        let label = overrides.label_for(path, found);
        let mut meta = meta.unwrap_or_default();
        if meta.version.is_none() {
            meta.version = runs::sniff_version(path);
        }
        let task = match f {
            LogFile::Samples { task, .. } => task.as_str(),
            LogFile::Json { .. } => "",
        };
        let ctx = runs::resolve(
            path,
            &meta,
            task,
            label,
            Source::Results(found),
            &mut warnings,
        )?;
        push_signature(imp, &meta, &ctx);
        asked[i] = invocation(&meta);
        contexts[i] = Some(ctx);
    }

    // A samples file's date_id, with its model and benchmark, is one invocation; an old
    // log's tag is only its folder's name.
    imp.tags_name_runs = files.iter().all(|f| matches!(f, LogFile::Samples { .. }));
    let t = std::time::Instant::now();
    let parsed = parse_all(&files, &contexts, progress);
    crate::core::timing("lmms-eval: parse", t);
    let t = std::time::Instant::now();

    // Per (model, configuration): the canonical run, then its re-runs.
    let mut groups: BTreeMap<(String, String), Vec<Group>> = BTreeMap::new();
    let mut items = Described::default();
    let mut notes = SamplingNotes::default();
    let mut unknown_tasks = BTreeSet::new();
    let mut shared_ids = BTreeSet::new();
    for (((file, ctx), p), mut asked) in files.iter().zip(contexts).zip(parsed).zip(asked) {
        let path = file.path();
        for (line, reason) in p.skips {
            imp.skip(path, line, reason);
        }
        let Some(mut log) = p.log else { continue };
        let ctx = match ctx {
            Some(c) => c,
            None => {
                // An old log: its run and task are known only now that it is read.
                if log.task.is_empty() {
                    log.task = path
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                }
                let (meta, ctx) = old_context(
                    path,
                    log.old_meta.take(),
                    &log.task,
                    &mut overrides,
                    &mut warnings,
                )?;
                push_signature(imp, &meta, &ctx);
                asked = invocation(&meta);
                for c in &mut log.cells {
                    c.model.clone_from(&ctx.model);
                    c.config.clone_from(&ctx.config);
                    c.frames = ctx.frames;
                    c.benchmark.clone_from(&log.task);
                }
                ctx
            }
        };
        let task = log.task;
        if log.unknown_task && unknown_tasks.insert(task.clone()) {
            warnings.push(format!(
                "task {task:?} is unknown to the lmms-eval importer: its items are keyed by doc_id, with gold from `target` and the prediction from `filtered_resps` ({})",
                path.display()
            ));
        }
        if log.shared_ids > 0 && shared_ids.insert(task.clone()) {
            warnings.push(format!(
                "task {task:?}: {} item ids are shared by several documents (e.g. the same question text), so those items are keyed id#doc_id ({})",
                log.shared_ids,
                path.display()
            ));
        }
        notes.note(&ctx, path, &mut warnings);
        let slots = groups
            .entry((ctx.model.clone(), ctx.config.clone()))
            .or_default();
        // A copy of a log read already (a backup folder beside the run) is the same
        // invocation (its date_id) with the same bytes: it counts once. A re-run is another
        // invocation, or one started in the same second that answered otherwise.
        let date_id = match file {
            LogFile::Samples { date_id, .. } => Some(date_id.as_str()),
            LogFile::Json { .. } => None,
        };
        if let Some(original) = slots.iter().find_map(|g| {
            let (read, _, tag) = g.tasks.get(&task)?;
            (date_id.is_some() && tag.as_deref() == date_id && same_bytes(read, path))
                .then_some(read)
        }) {
            imp.skip(
                path,
                None,
                format!(
                    "a copy of {} (the same run, {}, and the same bytes), counted once",
                    original.display(),
                    date_id.unwrap_or_default()
                ),
            );
            continue;
        }
        // Each file is read once, so a task seen before came from another log: a re-run
        // when it was asked the same, the first slot without the task taking it.
        let slot = slots
            .iter()
            .position(|g| !g.tasks.contains_key(&task))
            .unwrap_or(slots.len());
        if let Some((other, first, _)) = slots.first().and_then(|g| g.tasks.get(&task))
            && (asked.is_none() || asked != *first)
        {
            return Err(ImportError::SameRun {
                model: ctx.model,
                config: ctx.config,
                a: other.clone(),
                b: path.to_path_buf(),
            });
        }
        if slot == slots.len() {
            slots.push(Group {
                file: path.to_path_buf(),
                frames: ctx.frames,
                rules: BTreeMap::new(),
                tasks: BTreeMap::new(),
                cells: Vec::new(),
            });
        }
        let group = &mut slots[slot];
        if group.frames != ctx.frames {
            return Err(ImportError::Frames {
                config: ctx.config,
                a: group.frames,
                b: ctx.frames,
            });
        }
        for (cell, item) in log.items {
            items.add(imp, &task, &log.cells[cell].item_id, item);
        }
        if let Some(rule) = ctx.rule {
            group.rules.insert(task.clone(), rule);
        }
        group.tasks.insert(
            task,
            (path.to_path_buf(), asked, date_id.map(str::to_owned)),
        );
        group.cells.append(&mut log.cells);
    }
    crate::core::timing("lmms-eval: groups", t);
    let t = std::time::Instant::now();
    for ((model, config), slots) in groups {
        for (slot, g) in slots.into_iter().enumerate() {
            let run = Run {
                file: g.file,
                model: model.clone(),
                config: config.clone(),
                frames: g.frames,
                rules: g.rules,
                cells: g.cells,
            };
            if slot == 0 {
                imp.add_run(run)?;
            } else {
                imp.add_rerun(run, RELABEL)?;
            }
        }
    }
    crate::core::timing("lmms-eval: runs", t);
    for unused in overrides.unused() {
        warnings.push(format!("{unused} matched no lmms-eval log"));
    }
    videos_from_docs(imp, &opts.docs, &mut warnings);
    imp.warnings.extend(warnings);
    Ok(())
}

/// Names the videos of items whose logs do not (MVBench, MLVU from 0.4 on): for each task,
/// the annotation file whose documents are the task's (every logged doc_id holds the
/// question the log's prompt asks) gives each item its video and time window.
fn videos_from_docs(imp: &mut Import, paths: &[PathBuf], warnings: &mut Vec<String>) {
    let mut asked: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for ((task, _), item) in imp.items_mut() {
        if let (None, Some((doc, prompt))) = (&item.video, &item.logged) {
            asked
                .entry(task.clone())
                .or_default()
                .push((*doc as usize, prompt.clone()));
        }
    }
    if asked.is_empty() {
        return;
    }
    let sets = super::docs::find(paths);
    let mut chosen: BTreeMap<String, &super::docs::DocSet> = BTreeMap::new();
    let mut unnamed: Vec<String> = Vec::new();
    for (task, list) in &asked {
        let refs: Vec<(usize, &str)> = list.iter().map(|(i, q)| (*i, q.as_str())).collect();
        match super::docs::matching(&sets, &refs) {
            Some(set) => {
                chosen.insert(task.clone(), set);
            }
            None => unnamed.push(format!("{task} ({} items)", list.len())),
        }
    }
    if !unnamed.is_empty() {
        let searched = if paths.is_empty() {
            "none was given".to_string()
        } else {
            format!(
                "none under {} holds their questions",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        warnings.push(format!(
            "the logs of {} name no video, so their items are audited without frames; the benchmark's annotation files name them (--docs), but {searched}",
            unnamed.join(", ")
        ));
    }
    for ((task, _), item) in imp.items_mut() {
        let Some(set) = chosen.get(task) else {
            continue;
        };
        let Some(doc) = item
            .logged
            .as_ref()
            .and_then(|(d, _)| set.docs.get(*d as usize))
        else {
            continue;
        };
        item.video.clone_from(&doc.video);
        item.start = item.start.or(doc.start);
        item.end = item.end.or(doc.end);
    }
    for (task, set) in chosen {
        warnings.push(format!(
            "task {task:?}: videos named by the annotation file {} (the logs name none)",
            set.file.display()
        ));
    }
}

/// The items described so far: each run logs the same items again, and handing
/// [`Import`] a description it already has would cost a million calls for nothing.
#[derive(Default)]
struct Described(rustc_hash::FxHashMap<String, rustc_hash::FxHashMap<String, ImportedItem>>);

impl Described {
    fn add(&mut self, imp: &mut Import, benchmark: &str, item_id: &str, item: ImportedItem) {
        // Looked up before inserting, so that a known benchmark's name is not copied.
        if !self.0.contains_key(benchmark) {
            self.0.insert(benchmark.to_string(), Default::default());
        }
        let Some(known) = self.0.get_mut(benchmark) else {
            return;
        };
        match known.get_mut(item_id) {
            Some(prev) if *prev == item => return,
            Some(prev) => prev.merge(item.clone()),
            None => {
                known.insert(item_id.to_string(), item.clone());
            }
        }
        imp.add_item(benchmark, item_id, item);
    }
}

/// The cells of one (model, configuration), gathered from its logs.
struct Group {
    /// The first log, named by errors and by the run.
    file: PathBuf,
    frames: u64,
    /// Task → the frame rule of the run on it.
    rules: BTreeMap<String, RunRule>,
    /// Task → the log that gave it, what its invocation was asked ([`invocation`]), and
    /// its date_id (a samples file's).
    tasks: BTreeMap<String, (PathBuf, Option<String>, Option<String>)>,
    cells: Vec<ImportedCell>,
}

/// Whether two files hold the same bytes (false when one cannot be read).
fn same_bytes(a: &Path, b: &Path) -> bool {
    use crate::core::fsread;
    match (
        fsread::read(a, fsread::IMPORT),
        fsread::read(b, fsread::IMPORT),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// How a re-run is imported otherwise, for the summary.
const RELABEL: &str =
    "to import it as a configuration of its own, give it another label with --config LABEL=PATH";

/// What an invocation was asked, as far as the run's answers go: its wrapper and its
/// `model_args` (in any order; the frame budget is one of them). `None` when the log does
/// not tell both, so that no two such logs are taken for a re-run.
fn invocation(meta: &RunMeta) -> Option<String> {
    let (wrapper, args) = (meta.wrapper.as_ref()?, meta.args.as_ref()?);
    let mut args = args.clone();
    args.sort();
    Some(serde_json::json!([wrapper, args]).to_string())
}

/// Notes how the run of `ctx` shows on lmms-eval's command line (`--model W --model_args
/// A`), so a recorder log of that command is matched to it.
fn push_signature(imp: &mut Import, meta: &RunMeta, ctx: &RunCtx) {
    use super::frames_log::{Expect, Signature};
    let (Some(wrapper), Some(args)) = (&meta.wrapper, &meta.args) else {
        return;
    };
    let sig = Signature {
        model: ctx.model.clone(),
        config: ctx.config.clone(),
        flags: vec![
            ("--model".into(), Expect::Is(wrapper.clone())),
            ("--model_args".into(), Expect::Pairs(args.clone())),
        ],
    };
    if !imp.signatures.contains(&sig) {
        imp.signatures.push(sig);
    }
}

/// The run of an old `{task}.json`: its own `args`, else the `results.json` beside it.
fn old_context(
    path: &Path,
    own: Option<RunMeta>,
    task: &str,
    overrides: &mut Overrides,
    warnings: &mut Vec<String>,
) -> Result<(RunMeta, RunCtx), ImportError> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let rpath = dir.join("results.json");
    let sibling = if own.as_ref().is_some_and(|m| m.args.is_some()) {
        None
    } else {
        runs::read_results(&rpath)?
    };
    let mut meta = own.unwrap_or_default();
    if let Some(s) = sibling {
        meta.args = meta.args.or(s.args);
        meta.wrapper = meta.wrapper.or(s.wrapper);
    }
    // Logs of this shape were written by lmms-eval 0.2.2 or older.
    meta.version = meta.version.or(Some("0.2".into()));
    let rfound = rpath.is_file().then_some(rpath.as_path());
    let label = overrides.label_for(path, rfound);
    let ctx = runs::resolve(path, &meta, task, label, Source::OldLog, warnings)?;
    Ok((meta, ctx))
}

/// What one log file gave.
#[derive(Debug, Default)]
struct Parsed {
    /// `None` when the file is not a log (or could not be read).
    log: Option<Log>,
    /// (line, reason) of everything left out.
    skips: Vec<(Option<u64>, String)>,
}

#[derive(Debug, Default)]
struct Log {
    /// The task: of the file name, or of an old log's task config (empty when it has none).
    task: String,
    /// Old logs: their `args`.
    old_meta: Option<RunMeta>,
    /// The cells; those of an old log get their model and configuration once its run is
    /// known.
    cells: Vec<ImportedCell>,
    /// The first description of each item, by cell.
    items: Vec<(usize, ImportedItem)>,
    unknown_task: bool,
    /// Ids given to several documents, made unique with `#doc_id`.
    shared_ids: usize,
}

#[allow(clippy::large_enum_variant)]
enum Msg {
    Lines(u64),
    Done(usize, Parsed),
}

/// Parses every file, on all cores, in a fixed order of results; `progress` is called on
/// this thread (it need not be thread-safe).
fn parse_all(
    files: &[LogFile],
    contexts: &[Option<RunCtx>],
    progress: &dyn Fn(u64),
) -> Vec<Parsed> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let mut out: Vec<Parsed> = (0..files.len()).map(|_| Parsed::default()).collect();
    let (tx, rx) = mpsc::channel::<Msg>();
    std::thread::scope(|s| {
        for _ in 0..threads {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || {
                // One buffer per worker: a fresh one per file would fault in every page again.
                let mut buf = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    let stamp = Stamp::new(file, contexts.get(i).and_then(Option::as_ref));
                    let parsed = parse_file(file, stamp, &mut buf, &mut |n| {
                        let _ = tx.send(Msg::Lines(n));
                    });
                    if tx.send(Msg::Done(i, parsed)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for msg in rx {
            match msg {
                Msg::Lines(n) => progress(n),
                Msg::Done(i, p) => out[i] = p,
            }
        }
    });
    out
}

/// How many lines between two progress reports.
const PROGRESS_EVERY: u64 = 4096;

/// What every cell of one log shares.
struct Stamp {
    model: String,
    config: String,
    frames: u64,
    benchmark: String,
    /// The invocation the cells came from (`source_tag`).
    tag: String,
    /// The file read, named where its answers conflict.
    path: std::sync::Arc<Path>,
}

impl Stamp {
    /// The stamp of a log whose run is known; an old log's run is filled in later.
    fn new(file: &LogFile, ctx: Option<&RunCtx>) -> Stamp {
        // With the model and the benchmark, the date finds the samples file; an old log's
        // folder is its invocation.
        let tag = match file {
            LogFile::Samples { date_id, .. } => date_id.clone(),
            LogFile::Json { path, .. } => path
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        Stamp {
            model: ctx.map(|c| c.model.clone()).unwrap_or_default(),
            config: ctx.map(|c| c.config.clone()).unwrap_or_default(),
            frames: ctx.map_or(0, |c| c.frames),
            benchmark: match file {
                LogFile::Samples { task, .. } => task.clone(),
                LogFile::Json { .. } => String::new(),
            },
            tag,
            path: file.path().into(),
        }
    }
}

fn parse_file(
    file: &LogFile,
    stamp: Stamp,
    buf: &mut Vec<u8>,
    progress: &mut dyn FnMut(u64),
) -> Parsed {
    use std::io::Read;
    buf.clear();
    let read = crate::core::fsread::open(file.path(), crate::core::fsread::IMPORT)
        .and_then(|f| f.into_reader().read_to_end(buf));
    if let Err(e) = read {
        return Parsed {
            log: None,
            skips: vec![(None, format!("cannot read the file: {e}"))],
        };
    }
    let bytes = runs::strip_bom(buf);
    match file {
        LogFile::Samples { .. } => parse_jsonl(bytes, stamp, progress),
        LogFile::Json { explicit, .. } => parse_old(bytes, stamp, *explicit, progress),
    }
}

/// Reads a samples file, line by line.
fn parse_jsonl(bytes: &[u8], stamp: Stamp, progress: &mut dyn FnMut(u64)) -> Parsed {
    let task = stamp.benchmark.clone();
    let lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
    let mut b = Builder::new(stamp, lines);
    let mut skips = Vec::new();
    let mut pending = 0;
    let mut start = 0;
    let mut line_no = 0u64;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let text = bytes[start..end].trim_ascii();
        start = end + 1;
        line_no += 1;
        pending += 1;
        if pending == PROGRESS_EVERY {
            progress(pending);
            pending = 0;
        }
        if text.is_empty() {
            continue;
        }
        if text[0] != b'{' {
            skips.push((Some(line_no), "line is not a JSON object".to_string()));
            continue;
        }
        let mut fixed = None;
        match runs::from_python_json::<Sample>(text, &mut fixed) {
            Ok(s) => {
                if let Err(reason) = b.add(&s, Some(line_no)) {
                    skips.push((Some(line_no), reason.to_string()));
                }
            }
            Err(e) => skips.push((Some(line_no), json_skip_reason(&e))),
        }
    }
    if pending > 0 {
        progress(pending);
    }
    let (log, more) = b.finish(task, None);
    skips.extend(more);
    Parsed {
        log: Some(log),
        skips,
    }
}

/// A skip reason that groups alike lines: the kind of error, not its column.
fn json_skip_reason(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Eof => "line cut short (JSON ends early)".into(),
        serde_json::error::Category::Data => {
            format!(
                "unexpected JSON: {}",
                crate::core::load::json::json_error_text(e)
            )
        }
        _ => "malformed JSON".into(),
    }
}

/// An old (<= 0.2.2) `{task}.json`.
#[derive(Deserialize, Default)]
struct OldLog<'a> {
    #[serde(default, borrow)]
    args: MapOnly<RunConfig<'a>>,
    #[serde(default, borrow)]
    model_configs: MapOnly<TaskConfig<'a>>,
    /// 0.1 named the task config `config`.
    #[serde(default, borrow)]
    config: MapOnly<TaskConfig<'a>>,
    #[serde(default, borrow)]
    logs: SeqOnly<MapOnly<Sample<'a>>>,
}

#[derive(Deserialize, Default)]
struct TaskConfig<'a> {
    #[serde(default, borrow)]
    task: Scalar<'a>,
}

fn parse_old(bytes: &[u8], stamp: Stamp, explicit: bool, progress: &mut dyn FnMut(u64)) -> Parsed {
    let not_a_log = || Parsed {
        log: None,
        skips: if explicit {
            vec![(
                None,
                "holds no `logs` array: not an lmms-eval log".to_string(),
            )]
        } else {
            Vec::new()
        },
    };
    // Most JSON files under an output folder are not logs: skip them unread.
    if memchr::memmem::find(bytes, b"\"logs\"").is_none() {
        return not_a_log();
    }
    let mut fixed = None;
    let old: OldLog = match runs::from_python_json(bytes, &mut fixed) {
        Ok(o) => o,
        Err(e) => {
            return Parsed {
                log: None,
                skips: vec![(
                    Some(e.line() as u64),
                    format!(
                        "malformed JSON file: {}",
                        crate::core::load::json::json_error_text(&e)
                    ),
                )],
            };
        }
    };
    let Some(entries) = old.logs.0 else {
        return not_a_log();
    };
    let mut b = Builder::new(stamp, entries.len());
    let mut skips = Vec::new();
    for entry in &entries {
        match &entry.0 {
            Some(s) => {
                if let Err(reason) = b.add(s, None) {
                    skips.push((None, format!("logs entry: {reason}")));
                }
            }
            None => skips.push((None, "logs entry is not a JSON object".to_string())),
        }
    }
    progress(entries.len() as u64);
    let task = [&old.model_configs, &old.config]
        .into_iter()
        .find_map(|c| c.0.as_ref().and_then(|c| c.task.text()))
        .unwrap_or_default();
    let (log, more) = b.finish(task, Some(old.args.0.map(|a| a.meta()).unwrap_or_default()));
    skips.extend(more);
    Parsed {
        log: Some(log),
        skips,
    }
}

/// Collects the cells of one log, noticing ids that several documents share.
struct Builder {
    stamp: Stamp,
    cells: Vec<ImportedCell>,
    /// The document of each cell, to tell a repeated document from a shared id.
    docs: Vec<Option<i64>>,
    items: Vec<(usize, ImportedItem)>,
    /// Hash of an item id → its first cell (ids are not copied: a log has a line per item).
    first: rustc_hash::FxHashMap<u64, usize>,
    /// Ids whose hash another id took first.
    collided: rustc_hash::FxHashMap<String, usize>,
    shared: BTreeSet<String>,
    /// Cells read with the generic fields (no known metric dict), with their lines.
    generic: Vec<(usize, Option<u64>)>,
    /// The metric dict the first sample read with one carries, to name it to the others.
    metric: Option<&'static str>,
}

impl Builder {
    /// A builder for about `n` samples.
    fn new(stamp: Stamp, n: usize) -> Builder {
        Builder {
            stamp,
            cells: Vec::with_capacity(n),
            docs: Vec::with_capacity(n),
            items: Vec::with_capacity(n),
            first: rustc_hash::FxHashMap::with_capacity_and_hasher(n, Default::default()),
            collided: Default::default(),
            shared: BTreeSet::new(),
            generic: Vec::new(),
            metric: None,
        }
    }

    /// Adds the sample of `line` (`None` for an entry of an old log's `logs`).
    fn add(&mut self, s: &Sample, line: Option<u64>) -> Result<(), &'static str> {
        let a = s.answer()?;
        let doc = s.doc_id.int();
        let at = self.cells.len();
        match a.metric {
            None => self.generic.push((at, line)),
            Some(m) => {
                self.metric.get_or_insert(m);
            }
        }
        match self.first_cell(&a.item_id, at) {
            None => self.items.push((at, a.item)),
            Some(c) if self.docs[c] != doc => {
                self.shared.insert(a.item_id.clone());
                self.items.push((at, a.item));
            }
            Some(_) => {}
        }
        let st = &self.stamp;
        self.cells.push(ImportedCell {
            model: st.model.clone(),
            benchmark: st.benchmark.clone(),
            item_id: a.item_id,
            config: st.config.clone(),
            frames: st.frames,
            pred: a.pred,
            gold: a.gold,
            correct: a.correct,
            source_tag: Some(st.tag.clone()),
            frame_idx: a.frame_idx,
            read_at: super::ReadAt::new(&st.path, line),
        });
        self.docs.push(doc);
        Ok(())
    }

    /// The first cell of `id`, or `None` after noting that `at` is its first.
    fn first_cell(&mut self, id: &str, at: usize) -> Option<usize> {
        use std::hash::BuildHasher;
        let h = rustc_hash::FxBuildHasher.hash_one(id);
        match self.first.get(&h) {
            None => {
                self.first.insert(h, at);
                None
            }
            Some(&c) if self.cells[c].item_id == id => Some(c),
            Some(_) => match self.collided.get(id) {
                Some(&c) => Some(c),
                None => {
                    self.collided.insert(id.to_string(), at);
                    None
                }
            },
        }
    }

    /// The log, and the samples left out: in a known task, a line without the task's
    /// metric dict would be keyed by `doc_id` among ids of another kind.
    fn finish(
        mut self,
        task: String,
        old_meta: Option<RunMeta>,
    ) -> (Log, Vec<(Option<u64>, String)>) {
        let mut skips = Vec::new();
        let unknown_task = !self.generic.is_empty() && self.generic.len() == self.cells.len();
        if !self.generic.is_empty() && !unknown_task {
            let mut keep = vec![true; self.cells.len()];
            let why = match self.metric {
                Some(m) => format!(
                    "field `{m}`: missing or not an object, where the task's other samples carry their scores in it"
                ),
                None => "sample lacks the metric dict of its task".to_string(),
            };
            for &(cell, line) in &self.generic {
                keep[cell] = false;
                skips.push((line, why.clone()));
            }
            let mut new_index = vec![0; self.cells.len()];
            let mut n = 0;
            for (i, k) in keep.iter().enumerate() {
                new_index[i] = n;
                n += usize::from(*k);
            }
            self.items.retain(|(c, _)| keep[*c]);
            self.items.iter_mut().for_each(|(c, _)| *c = new_index[*c]);
            let cells = std::mem::take(&mut self.cells);
            self.cells = cells
                .into_iter()
                .zip(&keep)
                .filter_map(|(c, k)| k.then_some(c))
                .collect();
            let docs = std::mem::take(&mut self.docs);
            self.docs = docs
                .into_iter()
                .zip(&keep)
                .filter_map(|(d, k)| k.then_some(d))
                .collect();
        }
        if !self.shared.is_empty() {
            for (cell, doc) in self.cells.iter_mut().zip(&self.docs) {
                if self.shared.contains(&cell.item_id) {
                    let doc = doc.map_or("?".to_string(), |d| d.to_string());
                    cell.item_id = format!("{}#{doc}", cell.item_id);
                }
            }
        }
        let log = Log {
            task,
            old_meta,
            cells: self.cells,
            items: self.items,
            unknown_task,
            shared_ids: self.shared.len(),
        };
        (log, skips)
    }
}
