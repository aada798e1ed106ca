//! Importers: results of evaluation harnesses (lmms-eval, VLMEvalKit, wide tables) become one
//! response matrix, written as a dataset directory. Each reader turns its files into
//! [`Run`]s (one model under one configuration); [`Import`] checks that no two runs claim
//! the same (model, configuration) (a re-run of identical arguments is kept as a replicate,
//! docs/measures.md §16), keeps item metadata, counts what it could not use, and writes the
//! dataset deterministically: the same inputs give the same bytes.

pub mod docs;
pub mod frames_log;
pub mod letters;
pub mod lmms_eval;
pub mod videos;
pub mod vlmevalkit;
pub mod wide_csv;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::core::dataset::RunEntry;
use crate::core::rules::RunRule;

/// One answer read from a harness's output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportedCell {
    /// The model's name.
    pub model: String,
    /// The benchmark.
    pub benchmark: String,
    /// The item's id within the benchmark.
    pub item_id: String,
    /// The configuration's id.
    pub config: String,
    /// Frames the model was given.
    pub frames: u64,
    /// The answer given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pred: Option<String>,
    /// The reference answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<String>,
    /// The harness's own verdict, when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correct: Option<bool>,
    /// Where the cell comes from (the harness and file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_tag: Option<String>,
    /// The frames the model was given, when they were recorded (a recorder log, or the
    /// document of a frame-selection run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_idx: Option<Vec<u64>>,
    /// Where the answer was read, to name it when two answers claim one cell; not written.
    #[serde(skip)]
    pub read_at: Option<ReadAt>,
}

/// The file and line (or spreadsheet row) an answer was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadAt {
    /// The file, shared by its answers.
    pub file: std::sync::Arc<Path>,
    /// The line, from 1.
    pub line: u64,
}

impl ReadAt {
    /// The place in a file, where one is known.
    pub fn new(file: &std::sync::Arc<Path>, line: Option<u64>) -> Option<ReadAt> {
        line.map(|line| ReadAt {
            file: std::sync::Arc::clone(file),
            line,
        })
    }
}

/// A replicate cell (docs/measures.md §16.1): an answer of a run measured again, under a
/// nuisance, kept apart from the canonical cells and used only for the noise floor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplicateCell {
    /// The answer, keyed like the canonical cell it repeats.
    #[serde(flatten)]
    pub cell: ImportedCell,
    /// The replicate's name (`rerun-1`, or the name `--replicate` gave).
    pub replicate: String,
    /// What the replicate varies (`rerun`, `phase`, ...).
    pub nuisance: String,
    /// The benchmark's task, when the cell is written apart from its canonical cells (a
    /// replicates file of a dataset); beside them the loader infers it alike for both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<&'static str>,
    /// The configuration's budget, written apart from its canonical cells when it is not
    /// the frames (a replicate must have its configuration's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<f64>,
    /// The configuration's pixels, written apart from its canonical cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pixels: Option<u64>,
}

/// A run read again with the arguments of a run already read: its cells are replicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rerun {
    /// The model.
    pub model: String,
    /// The configuration.
    pub config: String,
    /// The replicate its cells are (`rerun-N`).
    pub replicate: String,
    /// The file of the re-run.
    pub file: PathBuf,
    /// The file of the canonical run.
    pub canonical: PathBuf,
    /// How to import it otherwise (the importer's words: another label with `--config`...).
    pub otherwise: &'static str,
}

/// The nuisance of a re-run of identical arguments (docs/measures.md §16.1).
pub const RERUN: &str = "rerun";

/// What a harness's output says about an item (questions, video, category...).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportedItem {
    /// The question asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The answer options, as shown (`A. a cup`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The right answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gold: Option<String>,
    /// The video as the harness names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<String>,
    /// The video's file under the videos folder, when `--videos` found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video_file: Option<String>,
    /// The video's frame count as the harness's reader counts it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_frames: Option<u64>,
    /// The video's average frame rate as the harness's reader gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    /// The video's length in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// Each decoder's count and rate of the video, when some disagree with decord's
    /// (`num_frames`, `fps`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoders: Option<crate::core::rules::decoder::DecoderCounts>,
    /// The packets the video's container marks to discard (an MP4 edit list), when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discarded_packets: Option<u64>,
    /// Start of the question's time window, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<f64>,
    /// End of the question's time window, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<f64>,
    /// The benchmark's category of the item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The benchmark's task type of the item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// The document index and prompt a log gave the item, kept (not written) when the log
    /// names no video, so the benchmark's annotation files can tell it.
    #[serde(skip)]
    pub logged: Option<(u64, String)>,
}

impl ImportedItem {
    /// Fills what this item lacks from another description of it.
    fn merge(&mut self, o: ImportedItem) {
        fn keep<T>(a: &mut Option<T>, b: Option<T>) {
            if a.is_none() {
                *a = b;
            }
        }
        keep(&mut self.question, o.question);
        if self.options.is_empty() {
            self.options = o.options;
        }
        keep(&mut self.gold, o.gold);
        keep(&mut self.video, o.video);
        keep(&mut self.video_file, o.video_file);
        keep(&mut self.num_frames, o.num_frames);
        keep(&mut self.fps, o.fps);
        keep(&mut self.duration, o.duration);
        keep(&mut self.decoders, o.decoders);
        keep(&mut self.discarded_packets, o.discarded_packets);
        keep(&mut self.start, o.start);
        keep(&mut self.end, o.end);
        keep(&mut self.category, o.category);
        keep(&mut self.task_type, o.task_type);
        keep(&mut self.logged, o.logged);
    }
}

/// One model under one configuration, from one file.
#[derive(Debug, Clone)]
pub struct Run {
    /// The file the run was read from.
    pub file: PathBuf,
    /// The model.
    pub model: String,
    /// The configuration.
    pub config: String,
    /// Frames per answer.
    pub frames: u64,
    /// The frame rule of the run on each of its benchmarks (docs/frame-rules.md).
    pub rules: BTreeMap<String, RunRule>,
    /// The answers read.
    pub cells: Vec<ImportedCell>,
}

/// Why an importer could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Two files hold the same (model, configuration).
    #[error("{} and {} both hold model {model:?} under configuration {config:?}; import them separately or give one another label with --config", crate::core::text::sanitize(&a.display().to_string()), crate::core::text::sanitize(&b.display().to_string()))]
    SameRun {
        /// The model both files hold.
        model: String,
        /// The configuration both files hold.
        config: String,
        /// The file read first.
        a: PathBuf,
        /// The file read second.
        b: PathBuf,
    },
    /// One configuration with two frame counts.
    #[error("configuration {config:?} has {a} frames in one run and {b} in another")]
    Frames {
        /// The configuration.
        config: String,
        /// Its frames in the run read first.
        a: u64,
        /// Its frames in a later run.
        b: u64,
    },
    /// Anything else, said in words.
    #[error("{0}")]
    Other(String),
}

/// Everything read so far.
#[derive(Debug, Default)]
pub struct Import {
    runs: BTreeMap<(String, String), PathBuf>,
    /// Every cell of every run, in the order read.
    cells: Vec<ImportedCell>,
    /// The cells to write, in output order, without duplicates: computed once asked for.
    order: std::cell::OnceCell<Order>,
    items: BTreeMap<(String, String), ImportedItem>,
    /// Frames of each configuration.
    configs: BTreeMap<String, u64>,
    /// The frame rule of each (model, benchmark, configuration).
    rules: BTreeMap<(String, String, String), RunRule>,
    /// Records left out, with why: (file, line, reason).
    pub skipped: Vec<(PathBuf, Option<u64>, String)>,
    /// Warnings for the user, in the order found.
    pub warnings: Vec<String>,
    /// `dataset.json` → `videos_dir`, when the import linked a videos folder.
    pub videos_dir: Option<String>,
    /// Symbolic links the dataset directory gets: name → target (the videos folder of
    /// `--videos`, VLMEvalKit's `images/` of `--frames-root`), so the frames are found
    /// without copying them.
    pub links: BTreeMap<String, PathBuf>,
    /// How each run read shows on a command line, to match recorder logs to runs.
    pub signatures: Vec<frames_log::Signature>,
    /// The cells of re-runs, in reading order (written after the canonical cells).
    replicate_cells: Vec<ReplicateCell>,
    /// The runs read again with identical arguments, in the order added.
    pub reruns: Vec<Rerun>,
    /// Whether a cell's `source_tag` names the one run it comes from (lmms-eval's date_id,
    /// with the model and the benchmark), not only a file name two runs may share.
    pub tags_name_runs: bool,
}

/// The cells sorted by (model, benchmark, item, configuration), the first of equal keys kept.
#[derive(Debug)]
struct Order {
    cells: Vec<u32>,
    duplicates: usize,
    /// Duplicates whose answer or verdict differs from the cell kept: (kept, dropped).
    conflicts: Vec<(u32, u32)>,
    /// Whether each item of [`Import::items`] (in its order) has a cell.
    used_items: Vec<bool>,
    items: usize,
    models: usize,
}

/// What an import did, for the summary line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Runs read.
    pub runs: usize,
    /// Models with a cell.
    pub models: usize,
    /// Configurations.
    pub configs: usize,
    /// Items with a cell.
    pub items: usize,
    /// Cells written.
    pub cells: usize,
    /// Records left out.
    pub skipped: usize,
    /// Cells dropped as repeats of an earlier (model, benchmark, item, configuration), or
    /// of an earlier replicate of the same name.
    pub duplicates: usize,
    /// Replicate cells written (re-runs' answers).
    pub replicates: usize,
}

impl Import {
    /// Adds a run; two runs may not claim the same (model, configuration).
    pub fn add_run(&mut self, run: Run) -> Result<(), ImportError> {
        let key = (run.model.clone(), run.config.clone());
        if let Some(a) = self.runs.get(&key) {
            return Err(ImportError::SameRun {
                model: run.model,
                config: run.config,
                a: a.clone(),
                b: run.file,
            });
        }
        match self.configs.get(&run.config) {
            Some(f) if *f != run.frames => {
                return Err(ImportError::Frames {
                    config: run.config,
                    a: *f,
                    b: run.frames,
                });
            }
            Some(_) => {}
            None => {
                self.configs.insert(run.config.clone(), run.frames);
            }
        }
        for (benchmark, rule) in run.rules {
            self.rules
                .insert((run.model.clone(), benchmark, run.config.clone()), rule);
        }
        self.runs.insert(key, run.file);
        self.order = std::cell::OnceCell::new();
        if self.cells.is_empty() {
            self.cells = run.cells;
        } else {
            self.cells.extend(run.cells);
        }
        Ok(())
    }

    /// Adds a re-run of a run already added (same model and configuration, identical
    /// arguments: the importer tells): its cells become the replicates `rerun-N` with
    /// nuisance `rerun`, N counting the re-runs of that (model, configuration) in the order
    /// added. Returns the replicate's name.
    pub fn add_rerun(&mut self, run: Run, otherwise: &'static str) -> Result<String, ImportError> {
        let key = (run.model.clone(), run.config.clone());
        let Some(canonical) = self.runs.get(&key).cloned() else {
            return Err(ImportError::Other(format!(
                "{} is read as a re-run of model {:?} under configuration {:?}, which no run read before holds",
                crate::core::text::sanitize(&run.file.display().to_string()),
                run.model,
                run.config
            )));
        };
        if let Some(&f) = self.configs.get(&run.config)
            && f != run.frames
        {
            return Err(ImportError::Frames {
                config: run.config,
                a: f,
                b: run.frames,
            });
        }
        let n = 1 + self
            .reruns
            .iter()
            .filter(|r| r.model == run.model && r.config == run.config)
            .count();
        let replicate = format!("rerun-{n}");
        self.replicate_cells
            .extend(run.cells.into_iter().map(|cell| ReplicateCell {
                cell,
                replicate: replicate.clone(),
                nuisance: RERUN.into(),
                task: None,
                budget: None,
                pixels: None,
            }));
        self.reruns.push(Rerun {
            model: run.model,
            config: run.config,
            replicate: replicate.clone(),
            file: run.file,
            canonical,
            otherwise,
        });
        Ok(replicate)
    }

    /// The replicate cells to write, sorted by (model, benchmark, item, configuration,
    /// replicate), the first of equal keys kept; and how many were dropped as repeats.
    fn replicate_order(&self) -> (Vec<&ReplicateCell>, usize) {
        fn key(r: &ReplicateCell) -> (&str, &str, &str, &str, &str) {
            let c = &r.cell;
            (
                c.model.as_str(),
                c.benchmark.as_str(),
                c.item_id.as_str(),
                c.config.as_str(),
                r.replicate.as_str(),
            )
        }
        let mut v: Vec<&ReplicateCell> = self.replicate_cells.iter().collect();
        // Stable: the first read of equal keys stays first.
        v.sort_by(|a, b| key(a).cmp(&key(b)));
        let n = v.len();
        v.dedup_by(|b, a| key(a) == key(b));
        let dropped = n - v.len();
        (v, dropped)
    }

    /// Sorts the cells by ranks of their keys (a million string-keyed map inserts would
    /// take seconds): each model, (benchmark, item) and configuration gets its rank in
    /// sorted order, and a cell sorts by its ranks and its reading order.
    fn order(&self) -> &Order {
        self.order.get_or_init(|| {
            use rustc_hash::FxHashMap;
            fn ranks<'a>(keys: impl Iterator<Item = &'a str>) -> FxHashMap<&'a str, u32> {
                // Runs give long stretches of one value: those are dropped before sorting.
                let mut v: Vec<&str> = Vec::new();
                for k in keys {
                    if v.last() != Some(&k) {
                        v.push(k);
                    }
                }
                v.sort_unstable();
                v.dedup();
                v.into_iter().zip(0..).collect()
            }
            let models = ranks(self.cells.iter().map(|c| c.model.as_str()));
            let configs = ranks(self.cells.iter().map(|c| c.config.as_str()));
            let mut pairs: FxHashMap<(&str, &str), u32> = FxHashMap::default();
            for c in &self.cells {
                pairs.entry((&c.benchmark, &c.item_id)).or_insert(0);
            }
            let mut sorted: Vec<(&str, &str)> = pairs.keys().copied().collect();
            sorted.sort_unstable();
            for (p, rank) in sorted.iter().zip(0..) {
                pairs.insert(*p, rank);
            }
            // A run's cells share their model and configuration: their ranks are kept.
            let mut last_model = ("", 0);
            let mut last_config = ("", 0);
            fn rank<'a>(
                last: &mut (&'a str, u32),
                ranks: &FxHashMap<&'a str, u32>,
                s: &'a str,
            ) -> u128 {
                if last.0 != s {
                    *last = (s, ranks[s]);
                }
                u128::from(last.1)
            }
            let mut keys: Vec<u128> = Vec::with_capacity(self.cells.len());
            for (c, i) in self.cells.iter().zip(0u32..) {
                let m = rank(&mut last_model, &models, &c.model);
                let k = rank(&mut last_config, &configs, &c.config);
                let p = u128::from(pairs[&(c.benchmark.as_str(), c.item_id.as_str())]);
                keys.push((m << 96) | (p << 64) | (k << 32) | u128::from(i));
            }
            keys.sort_unstable();
            let mut cells: Vec<u32> = Vec::with_capacity(keys.len());
            let mut conflicts = Vec::new();
            let mut last = None;
            for k in keys {
                if last != Some(k >> 32) {
                    cells.push(k as u32);
                    last = Some(k >> 32);
                } else if let Some(&kept) = cells.last() {
                    let (a, b) = (&self.cells[kept as usize], &self.cells[k as u32 as usize]);
                    if (&a.pred, a.correct) != (&b.pred, b.correct) {
                        conflicts.push((kept, k as u32));
                    }
                }
            }
            let used_items = self
                .items
                .keys()
                .map(|(b, i)| pairs.contains_key(&(b.as_str(), i.as_str())))
                .collect();
            Order {
                duplicates: self.cells.len() - cells.len(),
                conflicts,
                cells,
                used_items,
                items: sorted.len(),
                models: models.len(),
            }
        })
    }

    /// Adds (or completes) the description of an item.
    pub fn add_item(&mut self, benchmark: &str, item_id: &str, item: ImportedItem) {
        self.items
            .entry((benchmark.to_string(), item_id.to_string()))
            .or_default()
            .merge(item);
    }

    /// Every item description, to be completed (video facts, questions).
    pub fn items_mut(&mut self) -> impl Iterator<Item = (&(String, String), &mut ImportedItem)> {
        self.items.iter_mut()
    }

    /// Every cell read, in reading order (duplicates included), to be completed with
    /// recorded frames.
    pub fn cells_mut(&mut self) -> &mut [ImportedCell] {
        &mut self.cells
    }

    /// The file the run of `model` under `config` was read from.
    pub fn run_file(&self, model: &str, config: &str) -> Option<&Path> {
        self.runs
            .get(&(model.to_string(), config.to_string()))
            .map(PathBuf::as_path)
    }

    /// Every cell read, in reading order.
    pub fn cells(&self) -> &[ImportedCell] {
        &self.cells
    }

    /// The cells as they are written: sorted by (model, benchmark, item, configuration),
    /// without duplicates (re-runs' replicates aside).
    pub fn written_cells(&self) -> impl Iterator<Item = &ImportedCell> {
        self.order().cells.iter().map(|&i| &self.cells[i as usize])
    }

    /// The frames a cell's run's rule gives it, when its item's video is known (with
    /// `reproduced_only`, only a reproduced rule counts).
    pub fn rule_indices(&self, c: &ImportedCell, reproduced_only: bool) -> Option<Vec<u64>> {
        use crate::core::rules::{Provenance, VideoFacts};
        let key = (c.model.clone(), c.benchmark.clone(), c.config.clone());
        let rule = self
            .rules
            .get(&key)
            .filter(|r| !reproduced_only || r.provenance == Provenance::Reproduced)?;
        let item = self.items.get(&(c.benchmark.clone(), c.item_id.clone()))?;
        let facts = VideoFacts {
            num_frames: item.num_frames?,
            fps: item.fps,
            bound: item.start.zip(item.end),
        };
        let video = crate::core::rules::decoder::ItemVideo {
            decord: &facts,
            counts: item.decoders.as_ref(),
            discarded: item.discarded_packets,
        };
        crate::core::rules::decoder::frames_by_decoder(
            rule.rule.as_ref()?,
            rule.decoder.as_ref(),
            &video,
        )
        .ok()
        .filter(|f| !reproduced_only || f.assumed.is_none())
        .map(|f| f.indices)
    }

    /// Gives the rules of the run (model, configuration), on every benchmark, the decoder a
    /// recorder log says it decoded with (keeping the decoder its budget is clamped with).
    pub fn set_decoder(
        &mut self,
        model: &str,
        config: &str,
        decoder: crate::core::rules::decoder::Decoder,
        source: &str,
    ) {
        use crate::core::rules::decoder::RunDecoder;
        for ((m, _, c), rule) in self.rules.iter_mut() {
            if m != model || c != config || rule.rule.is_none() {
                continue;
            }
            let clamp = rule.decoder.as_ref().and_then(|d| d.clamp);
            rule.decoder = Some(RunDecoder {
                decode: vec![decoder],
                clamp,
                source: source.to_string(),
                selector: None,
            });
        }
    }

    /// Gives the rules of the run (model, configuration) whose decoder is picked at run
    /// time (qwen_vl_utils' reader, lmms-eval's `read_video` backend) the decoder a recorder
    /// log's `start` and `reader_choice` lines say was picked; the others keep theirs.
    pub fn set_decoder_from_setup(
        &mut self,
        model: &str,
        config: &str,
        setup: &crate::core::rules::decoder::LoggedSetup,
    ) {
        use crate::core::rules::decoder::RunDecoder;
        for ((m, _, c), rule) in self.rules.iter_mut() {
            if m != model || c != config || rule.rule.is_none() {
                continue;
            }
            let Some(current) = rule.decoder.as_ref() else {
                continue;
            };
            let Some((decoder, source)) = current.selector.and_then(|s| setup.decoder(s)) else {
                continue;
            };
            rule.decoder = Some(RunDecoder {
                decode: vec![decoder],
                clamp: current.clamp,
                source,
                selector: None,
            });
        }
    }

    /// The frame rule of each (model, benchmark, configuration).
    pub fn rules(&self) -> &BTreeMap<(String, String, String), RunRule> {
        &self.rules
    }

    /// Records a record left out, and why.
    pub fn skip(&mut self, file: &Path, line: Option<u64>, reason: impl Into<String>) {
        self.skipped.push((file.to_path_buf(), line, reason.into()));
    }

    /// What the import did, for the summary line.
    pub fn summary(&self) -> Summary {
        let o = self.order();
        let (reps, rep_dups) = self.replicate_order();
        Summary {
            runs: self.runs.len(),
            models: o.models,
            configs: self.configs.len(),
            items: o.items,
            cells: o.cells.len(),
            skipped: self.skipped.len(),
            duplicates: o.duplicates + rep_dups,
            replicates: reps.len(),
        }
    }

    /// Warns about cells the harness scored right although their answer is not the gold
    /// letter (MVBench's own scorer reads the article "a" of "I think it is a ..." as option
    /// A). The harness's verdict is kept, since that is what it counted.
    pub fn warn_contradictions(&mut self) {
        let order = self.order();
        let mut n = 0usize;
        let mut first = None;
        for &i in &order.cells {
            let c = &self.cells[i as usize];
            if let (Some(true), Some(p), Some(g)) = (c.correct, &c.pred, &c.gold)
                && !p.trim().eq_ignore_ascii_case(g.trim())
            {
                n += 1;
                first.get_or_insert_with(|| {
                    format!(
                        "{} {}/{} at {}: {p:?} against {g:?}",
                        c.model, c.benchmark, c.item_id, c.config
                    )
                });
            }
        }
        if let Some(first) = first {
            self.warnings.push(format!(
                "{n} cells are scored right by the harness although their answer is not the gold one (first: {first}); the harness's verdict is kept, as it is what it counted (`frameaudit validate` lists them)"
            ));
        }
    }

    /// Warns about repeated cells whose answers differ (two answers to one question of one
    /// run: a run read twice with different outcomes, or two runs joined): each is named by
    /// its file and line, as the first is kept and the others are dropped.
    pub fn warn_conflicting_duplicates(&mut self) {
        const SHOWN: usize = 10;
        let order = self.order();
        let n = order.conflicts.len();
        if n == 0 {
            return;
        }
        let said = |c: &ImportedCell| {
            let answer = match (&c.pred, c.correct) {
                (Some(p), Some(ok)) => format!("{p:?} ({})", if ok { "right" } else { "wrong" }),
                (Some(p), None) => format!("{p:?}"),
                (None, Some(ok)) => (if ok { "right" } else { "wrong" }).to_string(),
                (None, None) => "no answer".to_string(),
            };
            match &c.read_at {
                Some(at) => format!("{answer} at {}:{}", at.file.display(), at.line),
                None => format!(
                    "{answer} in {}",
                    c.source_tag.as_deref().unwrap_or("its run")
                ),
            }
        };
        let mut said_all = Vec::new();
        for &(kept, dropped) in order.conflicts.iter().take(SHOWN) {
            let (a, b) = (&self.cells[kept as usize], &self.cells[dropped as usize]);
            said_all.push(format!(
                "{} {}/{} at {} is answered twice, differently: {} kept (read first), {} dropped; check that one run was not read twice or joined with another",
                a.model,
                a.benchmark,
                a.item_id,
                a.config,
                said(a),
                said(b)
            ));
        }
        if n > SHOWN {
            said_all.push(format!(
                "{} more answered twice, differently (the first answer read kept)",
                crate::core::text::count(n - SHOWN, "cell")
            ));
        }
        self.warnings.extend(said_all);
    }

    /// Warns when recorded frames differ from the frames a run's reproduced rule gives: one
    /// of the two is wrong, and the recorded ones are what the harness decoded.
    pub fn check_recorded(&mut self) {
        let mut differ = 0usize;
        let mut same = 0usize;
        let mut first = None;
        for c in &self.cells {
            let Some(recorded) = &c.frame_idx else {
                continue;
            };
            let Some(computed) = self.rule_indices(c, true) else {
                continue;
            };
            let set = |v: &[u64]| crate::core::sampling::frame_set(v.to_vec());
            if set(&computed) == set(recorded) {
                same += 1;
            } else {
                differ += 1;
                first.get_or_insert_with(|| {
                    format!("{} {}/{} at {}", c.model, c.benchmark, c.item_id, c.config)
                });
            }
        }
        if let Some(first) = first {
            self.warnings.push(format!(
                "{differ} of {} cells with recorded frames differ from their run's reproduced frame rule (first: {first}); the recorded frames are used",
                differ + same
            ));
        }
    }

    /// Skip reasons with their counts, most frequent first, and where each was first met
    /// (`file:line`, or the file when the reason is about a whole file).
    pub fn skip_reasons(&self) -> Vec<(String, usize, String)> {
        // Each reason's count and first place (the earliest line of the first file).
        type Place<'a> = (&'a Path, Option<u64>);
        let mut by: BTreeMap<&str, (usize, Place<'_>)> = BTreeMap::new();
        for (file, line, r) in &self.skipped {
            let place = (file.as_path(), *line);
            let e = by.entry(r.as_str()).or_insert((0, place));
            e.0 += 1;
            if place < e.1 {
                e.1 = place;
            }
        }
        let mut v: Vec<(&str, usize, Place<'_>)> =
            by.into_iter().map(|(r, (n, at))| (r, n, at)).collect();
        // Most frequent first; as frequent, in the files' order.
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
        v.into_iter()
            .map(|(r, n, (file, line))| {
                let at = match line {
                    Some(l) => format!("{}:{l}", file.display()),
                    None => file.display().to_string(),
                };
                (r.to_string(), n, at)
            })
            .collect()
    }

    /// Gives models the names `names` maps them to (`--model-name FROM=TO`): in every cell,
    /// replicate, run, rule, re-run and the signatures recorder logs are matched by, so a
    /// harness's `OpenGVLab__InternVL3-8B` lines up with another's `InternVL3-8B`. Two models
    /// mapped to one name are refused (their answers would merge), naming both.
    pub fn rename_models(&mut self, names: &BTreeMap<String, String>) -> Result<(), ImportError> {
        if names.is_empty() {
            return Ok(());
        }
        // A FROM no cell names is most likely mistyped: said, as nothing is renamed by it.
        let models: std::collections::BTreeSet<&str> = self
            .cells
            .iter()
            .map(|c| c.model.as_str())
            .chain(self.replicate_cells.iter().map(|r| r.cell.model.as_str()))
            .collect();
        let unknown: Vec<String> = names
            .iter()
            .filter(|(from, _)| !models.contains(from.as_str()))
            .map(|(from, to)| {
                format!(
                    "--model-name {from}={to}: no model of this import is named {from:?}, so nothing was renamed by it (its models: {})",
                    models.iter().copied().collect::<Vec<_>>().join(", ")
                )
            })
            .collect();
        self.warnings.extend(unknown);
        let to = |m: &str| names.get(m).cloned().unwrap_or_else(|| m.to_string());
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for (model, _) in self.runs.keys() {
            let new = to(model);
            if let Some(other) = seen.insert(new.clone(), model.clone())
                && other != *model
            {
                return Err(ImportError::Other(format!(
                    "--model-name gives models {other:?} and {model:?} one name {new:?}: their answers would be taken for one model's"
                )));
            }
        }
        self.runs = std::mem::take(&mut self.runs)
            .into_iter()
            .map(|((m, c), f)| ((to(&m), c), f))
            .collect();
        self.rules = std::mem::take(&mut self.rules)
            .into_iter()
            .map(|((m, b, c), r)| ((to(&m), b, c), r))
            .collect();
        for c in &mut self.cells {
            c.model = to(&c.model);
        }
        for r in &mut self.replicate_cells {
            r.cell.model = to(&r.cell.model);
        }
        for r in &mut self.reruns {
            r.model = to(&r.model);
        }
        for s in &mut self.signatures {
            s.model = to(&s.model);
        }
        self.order = std::cell::OnceCell::new();
        Ok(())
    }

    /// Writes `cells.jsonl`, `items.jsonl` (when any item is described) and `dataset.json`
    /// into `dir`, each through a temporary file renamed into place. Cells are sorted by
    /// (model, benchmark, item, configuration), so the bytes depend only on the inputs; the
    /// re-runs' replicate cells follow the canonical ones, sorted alike.
    pub fn write(&self, dir: &Path, name: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        refuse_linked_files(dir)?;
        let t = std::time::Instant::now();
        let order = self.order();
        crate::core::timing("import: order", t);
        let t = std::time::Instant::now();
        put(dir, "cells.jsonl", &|w| {
            for &i in &order.cells {
                crate::core::text::json_to_writer(&mut *w, &self.cells[i as usize])?;
                w.write_all(b"\n")?;
            }
            for r in self.replicate_order().0 {
                crate::core::text::json_to_writer(&mut *w, r)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })?;
        crate::core::timing("import: cells.jsonl", t);
        let items: Vec<_> = self
            .items
            .iter()
            .zip(&order.used_items)
            .filter_map(|(item, used)| used.then_some(item))
            .collect();
        self.write_described(dir, name, &items)
    }

    /// Writes `items.jsonl` (every item added), the links and `dataset.json` into `dir`,
    /// beside cells written otherwise (a per-item table converted as it stands).
    pub fn write_items(&self, dir: &Path, name: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        refuse_linked_files(dir)?;
        let items: Vec<_> = self.items.iter().collect();
        self.write_described(dir, name, &items)
    }

    /// `items.jsonl` of `items`, the links and `dataset.json`.
    fn write_described(
        &self,
        dir: &Path,
        name: &str,
        items: &[(&(String, String), &ImportedItem)],
    ) -> std::io::Result<()> {
        if items.is_empty() {
            // A dataset replaced under --force keeps no items of the data it held.
            match std::fs::remove_file(dir.join("items.jsonl")) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        } else {
            put(dir, "items.jsonl", &|w| {
                for ((b, i), item) in items {
                    let mut v = serde_json::to_value(item)?;
                    if let Some(o) = v.as_object_mut() {
                        o.insert("benchmark".into(), (*b).clone().into());
                        o.insert("item_id".into(), (*i).clone().into());
                    }
                    crate::core::text::json_to_writer(&mut *w, &v)?;
                    w.write_all(b"\n")?;
                }
                Ok(())
            })?;
        }
        for (name, target) in &self.links {
            link_into(dir, name, target)?;
        }
        put(dir, "dataset.json", &|w| {
            let runs: Vec<RunEntry> = self
                .rules
                .iter()
                .map(|((model, benchmark, config), rule)| RunEntry {
                    protocol: None,
                    model: model.clone(),
                    benchmark: Some(benchmark.clone()),
                    config: config.clone(),
                    rule: rule.clone(),
                })
                .collect();
            let mut v = serde_json::json!({
                "schema": "frameaudit/dataset@1",
                "name": name,
                "runs": runs,
            });
            if let Some(videos) = &self.videos_dir {
                v["videos_dir"] = videos.as_str().into();
            }
            crate::core::text::json_to_writer_pretty(&mut *w, &v)?;
            w.write_all(b"\n")
        })
    }
}

/// Refuses a dataset directory where one of the files an import writes is a link, before
/// any is written: each is written through a temporary file that refuses a link, but one
/// refused half way would leave the files before it of the new data, the rest of the old.
fn refuse_linked_files(dir: &Path) -> std::io::Result<()> {
    crate::core::output::DATASET_FILES
        .iter()
        .try_for_each(|f| crate::core::fswrite::refuse_link(&dir.join(f)))
}

/// Writes `dir/file` atomically, refusing a link planted at that name.
fn put(
    dir: &Path,
    file: &str,
    body: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    crate::core::fswrite::write_output(&dir.join(file), crate::core::fswrite::Links::Refuse, |w| {
        body(w)
    })
}

/// Makes `dir/name` a symbolic link to `target` (absolute), replacing a link that was
/// there; anything else at that name is an error rather than replaced.
fn link_into(dir: &Path, name: &str, target: &Path) -> std::io::Result<()> {
    let at = dir.join(name);
    let target = std::fs::canonicalize(target)?;
    match std::fs::symlink_metadata(&at) {
        Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(&at)?,
        Ok(_) => {
            return Err(std::io::Error::other(format!(
                "{} exists and is not a link; move it away to link {} there",
                at.display(),
                target.display()
            )));
        }
        Err(_) => {}
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&target, &at)
    }
    #[cfg(not(unix))]
    {
        Err(std::io::Error::other(format!(
            "cannot link {} into the dataset on this system; copy it to {}",
            target.display(),
            at.display()
        )))
    }
}

/// The number of frames a configuration label implies: `16f`, `16f_151k`, `16frame`,
/// `textonly` (0)...; `None` when it says nothing.
pub fn frames_from_label(label: &str) -> Option<u64> {
    let l = label.to_ascii_lowercase();
    if l == "textonly" || l == "text" || l == "blind" || l == "0f" {
        return Some(0);
    }
    let digits: String = l.chars().take_while(|c| c.is_ascii_digit()).collect();
    let rest = &l[digits.len()..];
    if !digits.is_empty() && !rest.starts_with("fps") && (rest.starts_with('f') || rest.is_empty())
    {
        return digits.parse().ok();
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `model`'s right answer A to item `item` of benchmark b under `config` (8 frames).
    pub(crate) fn cell(model: &str, item: &str, config: &str) -> ImportedCell {
        ImportedCell {
            model: model.into(),
            benchmark: "b".into(),
            item_id: item.into(),
            config: config.into(),
            frames: 8,
            pred: Some("A".into()),
            gold: Some("A".into()),
            correct: None,
            source_tag: None,
            frame_idx: None,
            read_at: None,
        }
    }

    fn run(file: &str, model: &str, config: &str, cells: Vec<ImportedCell>) -> Run {
        Run {
            file: file.into(),
            model: model.into(),
            config: config.into(),
            frames: 8,
            rules: Default::default(),
            cells,
        }
    }

    #[test]
    fn two_runs_of_the_same_model_and_config_are_an_error() {
        let mut imp = Import::default();
        imp.add_run(run("a.jsonl", "m", "8f", vec![cell("m", "q1", "8f")]))
            .expect("first");
        let err = imp
            .add_run(run("b.jsonl", "m", "8f", vec![]))
            .expect_err("second");
        assert!(
            err.to_string()
                .contains("a.jsonl and b.jsonl both hold model \"m\" under configuration \"8f\""),
            "{err}"
        );
    }

    /// `--model-name`: every cell, run and rule of a model takes the new name; two models
    /// given one name are refused, naming both.
    #[test]
    fn models_are_renamed_everywhere_and_never_merged() {
        let mut imp = Import::default();
        imp.add_run(run(
            "a",
            "OpenGVLab__InternVL3-8B",
            "8f",
            vec![cell("OpenGVLab__InternVL3-8B", "q1", "8f")],
        ))
        .expect("a");
        imp.add_run(run("b", "other", "8f", vec![cell("other", "q1", "8f")]))
            .expect("b");
        let mut names = BTreeMap::new();
        names.insert(
            "OpenGVLab__InternVL3-8B".to_string(),
            "InternVL3-8B".to_string(),
        );
        names.insert("other-typo".to_string(), "x".to_string());
        imp.rename_models(&names).expect("renamed");
        assert_eq!(
            imp.warnings,
            [
                "--model-name other-typo=x: no model of this import is named \"other-typo\", so nothing was renamed by it (its models: OpenGVLab__InternVL3-8B, other)"
            ]
        );
        names.remove("other-typo");
        let models: std::collections::BTreeSet<&str> =
            imp.written_cells().map(|c| c.model.as_str()).collect();
        assert_eq!(models, ["InternVL3-8B", "other"].into_iter().collect());
        assert_eq!(imp.run_file("InternVL3-8B", "8f"), Some(Path::new("a")));
        names.insert("other".to_string(), "InternVL3-8B".to_string());
        let err = imp.rename_models(&names).expect_err("merged");
        assert!(
            err.to_string().contains("one name \"InternVL3-8B\""),
            "{err}"
        );
    }

    #[test]
    fn writes_are_deterministic_and_count_duplicates() {
        let build = |order: bool| {
            let mut imp = Import::default();
            let mut runs = vec![
                run(
                    "a",
                    "m2",
                    "8f",
                    vec![
                        cell("m2", "q2", "8f"),
                        cell("m2", "q1", "8f"),
                        cell("m2", "q1", "8f"),
                    ],
                ),
                run("b", "m1", "8f", vec![cell("m1", "q1", "8f")]),
            ];
            if order {
                runs.reverse();
            }
            for r in runs {
                imp.add_run(r).expect("run");
            }
            imp.add_item(
                "b",
                "q1",
                ImportedItem {
                    question: Some("Q?".into()),
                    ..Default::default()
                },
            );
            imp
        };
        let (a, b) = (build(false), build(true));
        assert_eq!(a.summary().duplicates, 1);
        assert_eq!(a.summary().cells, 3);
        let (da, db) = (
            tempfile::tempdir().expect("tmp"),
            tempfile::tempdir().expect("tmp"),
        );
        a.write(da.path(), "x").expect("write");
        b.write(db.path(), "x").expect("write");
        for f in ["cells.jsonl", "items.jsonl", "dataset.json"] {
            assert_eq!(
                std::fs::read(da.path().join(f)).expect("a"),
                std::fs::read(db.path().join(f)).expect("b"),
                "{f}"
            );
        }
        let cells = std::fs::read_to_string(da.path().join("cells.jsonl")).expect("cells");
        assert!(cells.starts_with("{\"model\":\"m1\""), "{cells}");
    }

    /// A repeat with the same answer is counted; one with another answer is also named, by
    /// its line and the kept one's, as two answers to one question are not a repeat.
    #[test]
    fn a_duplicate_with_another_answer_is_named_by_its_lines() {
        let file: std::sync::Arc<Path> = Path::new("out/m_b.tsv").into();
        let at = |item: &str, pred: &str, line: u64| ImportedCell {
            pred: Some(pred.into()),
            read_at: ReadAt::new(&file, Some(line)),
            ..cell("m", item, "8f")
        };
        let mut imp = Import::default();
        let cells = vec![
            at("q1", "A", 2),
            at("q2", "B", 3),
            at("q1", "A", 4),
            at("q2", "C", 5),
        ];
        imp.add_run(run("a", "m", "8f", cells)).expect("run");
        imp.warn_conflicting_duplicates();
        assert_eq!(imp.summary().duplicates, 2);
        assert_eq!(imp.warnings.len(), 1, "{:?}", imp.warnings);
        let w = &imp.warnings[0];
        assert!(
            w.starts_with("m b/q2 at 8f is answered twice, differently: \"B\" at out/m_b.tsv:3 kept (read first), \"C\" at out/m_b.tsv:5 dropped"),
            "{w}"
        );
        let written: Vec<_> = imp.written_cells().map(|c| c.pred.clone()).collect();
        assert_eq!(written, [Some("A".to_string()), Some("B".to_string())]);
    }

    /// A re-run's cells are replicates `rerun-N` of nuisance `rerun`: written after the
    /// canonical cells, not counted as their duplicates (a repeat within one replicate is).
    #[test]
    fn a_rerun_is_written_as_replicates() {
        let mut imp = Import::default();
        imp.add_run(run(
            "a",
            "m",
            "8f",
            vec![cell("m", "q1", "8f"), cell("m", "q2", "8f")],
        ))
        .expect("run");
        let again = |file: &str| {
            run(
                file,
                "m",
                "8f",
                vec![
                    cell("m", "q2", "8f"),
                    cell("m", "q1", "8f"),
                    cell("m", "q1", "8f"),
                ],
            )
        };
        assert_eq!(imp.add_rerun(again("b"), "x").expect("rerun"), "rerun-1");
        assert_eq!(imp.add_rerun(again("c"), "x").expect("rerun"), "rerun-2");
        let s = imp.summary();
        assert_eq!((s.runs, s.cells, s.replicates, s.duplicates), (1, 2, 4, 2));
        let dir = tempfile::tempdir().expect("tmp");
        imp.write(dir.path(), "x").expect("write");
        let cells = std::fs::read_to_string(dir.path().join("cells.jsonl")).expect("cells");
        let lines: Vec<serde_json::Value> = cells
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        let keys: Vec<(String, String, String)> = lines
            .iter()
            .map(|v| {
                let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
                (s("item_id"), s("replicate"), s("nuisance"))
            })
            .collect();
        let k = |i: &str, r: &str, n: &str| (i.to_string(), r.to_string(), n.to_string());
        assert_eq!(
            keys,
            [
                k("q1", "", ""),
                k("q2", "", ""),
                k("q1", "rerun-1", "rerun"),
                k("q1", "rerun-2", "rerun"),
                k("q2", "rerun-1", "rerun"),
                k("q2", "rerun-2", "rerun"),
            ]
        );
        // A re-run of a run never read is an error, not a canonical run.
        let err = imp
            .add_rerun(run("d", "other", "8f", vec![]), "x")
            .expect_err("no canonical run");
        assert!(err.to_string().contains("no run read before"), "{err}");
    }

    #[test]
    fn frames_from_labels() {
        assert_eq!(frames_from_label("16f_151k"), Some(16));
        assert_eq!(frames_from_label("32f"), Some(32));
        assert_eq!(frames_from_label("64frame"), Some(64));
        assert_eq!(frames_from_label("textonly"), Some(0));
        assert_eq!(frames_from_label("1fps"), None);
        assert_eq!(frames_from_label("fast"), None);
    }
}
