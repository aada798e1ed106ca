//! A dataset as the audit sees it (docs/formats.md §1): the response matrix, plus what
//! `items.jsonl` says about each item (question, options, video) and what `dataset.json`
//! says about sampling and where frames live.

mod json;

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::core::diag::{Diagnostics, LoadError};
use crate::core::fsread;
use crate::core::load::json::{
    FieldCheck, J, PlainRecord, for_each_line, is_missing, read_record, strip_bom, strip_bom_str,
};
use crate::core::load::{CellFormat, read_cell_file};
use crate::core::matrix::{MatrixBuilder, ResponseMatrix};
use crate::core::rules::RunRule;
// The configurations of `dataset.json` are read here but belong to sampling, which must not
// import the dataset.
pub use crate::core::sampling::{ConfigSampling, POLICIES};

/// What `items.jsonl` says about one item.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemMeta {
    /// The question asked.
    pub question: Option<String>,
    /// The answer options, as shown (`A. a cup`).
    pub options: Texts,
    /// The right answer.
    pub gold: Option<String>,
    /// The video as the harness names it; frames are looked for under `frames/<video>/`.
    pub video: Option<String>,
    /// The video file, relative to the videos directory, when the import found it
    /// (`--videos`): `videomme/data/fFjv93ACGo8.mp4`.
    pub video_file: Option<String>,
    /// The video's frame count as the harness's reader counts it.
    pub num_frames: Option<u64>,
    /// The video's average frame rate as the harness's reader gives it.
    pub fps: Option<f64>,
    /// The video's length in seconds.
    pub duration: Option<f64>,
    /// Each decoder's count and rate of the video, when some disagree with decord's
    /// (`num_frames` and `fps` are decord's).
    pub decoders: Option<Box<crate::core::rules::decoder::DecoderCounts>>,
    /// The packets the video's container marks to discard (an MP4 edit list), when any.
    pub discarded_packets: Option<u64>,
    /// The question's time window in the video, in seconds (MVBench's `start`/`end`).
    pub start: Option<f64>,
    /// End of the question's time window, in seconds.
    pub end: Option<f64>,
    /// The benchmark's category of the item.
    pub category: Option<String>,
    /// The benchmark's task type of the item.
    pub task_type: Option<String>,
}

/// A short list of texts kept in one string (an item's options): a million items hold
/// two allocations each for their options instead of one per option and the list's own.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Texts {
    text: Box<str>,
    ends: Box<[usize]>,
}

impl Texts {
    /// The texts in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(a, b)| &self.text[a..b])
    }

    /// How many texts there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Texts {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Texts {
        let (mut text, mut ends) = (String::new(), Vec::new());
        for s in iter {
            text.push_str(s.as_ref());
            ends.push(text.len());
        }
        Texts {
            text: text.into(),
            ends: ends.into(),
        }
    }
}

/// `dataset.json`.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
pub struct DatasetMeta {
    /// The schema string, `frameaudit/dataset@1`.
    #[serde(default)]
    pub schema: Option<String>,
    /// The dataset's name.
    #[serde(default)]
    pub name: Option<String>,
    /// How each configuration sampled its frames.
    #[serde(default)]
    pub configs: BTreeMap<String, ConfigSampling>,
    /// Where extracted frames are, relative to the dataset (default `frames`).
    #[serde(default)]
    pub frames_dir: Option<String>,
    /// Where raw videos are, relative to the dataset (default `videos`).
    #[serde(default)]
    pub videos_dir: Option<String>,
    /// The file name pattern of a frame (`{index:06}.jpg`).
    #[serde(default)]
    pub frame_name: Option<String>,
    /// The frame rule of each run (docs/formats.md, `runs`): a run's rule wins over the
    /// configuration's policy in `configs`.
    #[serde(default)]
    pub runs: Vec<RunEntry>,
    /// The line each of `runs` starts on in the file, for messages (a run that does not
    /// read is an error of the file, so these are the file's runs).
    #[serde(skip)]
    pub run_lines: Vec<Option<u64>>,
}

/// The frame rule of one run: a model under one configuration, on one benchmark or (with
/// no `benchmark`) on all of them.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
pub struct RunEntry {
    /// The protocol the run belongs to; `None`: every protocol's configuration of that
    /// name (a dataset of one protocol names none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The model of the run.
    pub model: String,
    /// The benchmark; `None` for every benchmark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<String>,
    /// The configuration of the run.
    pub config: String,
    /// How the run chose its frames.
    #[serde(flatten)]
    pub rule: RunRule,
}

/// A loaded dataset.
#[derive(Debug)]
pub struct Dataset {
    /// The directory of a dataset directory; `None` when a single file was loaded.
    pub root: Option<PathBuf>,
    /// The dataset's name: `dataset.json` → `name`, else the directory or file stem.
    pub name: String,
    /// The cell files read.
    pub cell_files: Vec<PathBuf>,
    /// The response matrix of the cells.
    pub matrix: ResponseMatrix,
    /// Per matrix item id, its description; empty when the dataset describes no item
    /// (no `items.jsonl`). Read it with [`Dataset::item_meta`].
    pub items: Vec<Option<ItemMeta>>,
    /// `dataset.json`, or its defaults without one.
    pub meta: DatasetMeta,
    /// Warnings of the load (errors reject it).
    pub warnings: Diagnostics,
    /// `meta.runs` by (model, benchmark, configuration) ids of the matrix; a run entry
    /// without a benchmark is found under `u32::MAX`.
    pub run_index: rustc_hash::FxHashMap<(u32, u32, u32), usize>,
    /// The matrix cache left to write by [`load_deferring_cache`]; `None` once written, or
    /// when the load calls for none.
    pub pending_cache: Option<PendingCache>,
    /// Why the matrix cache this load called for could not be written, when it could not.
    pub cache_unsaved: Option<String>,
    /// The replicates [`load_canonical_first`] left unread (files, and lines passed over):
    /// this dataset has no replicates yet, and the whole one is read by
    /// [`DeferredReplicates::load`].
    pub deferred: Option<DeferredReplicates>,
}

impl Dataset {
    /// The description of a matrix item, when the dataset has one.
    pub fn item_meta(&self, item: u32) -> Option<&ItemMeta> {
        self.items.get(item as usize).and_then(Option::as_ref)
    }

    /// The gold items.jsonl gives a multiple-choice item when it is not `scored`, the gold
    /// its cells are scored by (compared as answers are): `validate` warns at its line, and
    /// the item screen shows it beside the scored one.
    pub fn other_gold(&self, item: u32, scored: &str) -> Option<&str> {
        use crate::core::text::norm;
        mcq_gold(&self.matrix, &self.items, item).filter(|g| norm(g) != norm(scored))
    }

    /// The run entry of the run a cell belongs to.
    pub fn run_entry_of_cell(&self, cell: u32) -> Option<&RunEntry> {
        let m = &self.matrix;
        let i = cell as usize;
        let (model, item, config) = (
            m.cell_model.try_get(i)?,
            m.cell_item.try_get(i)?,
            m.cell_config.try_get(i)?,
        );
        self.run_entry(model, m.item(item).benchmark, config)
    }

    /// The run entry of `dataset.json` that gives the frame rule of a model (id) under a
    /// configuration (id) on a benchmark (id): the entry naming the benchmark, else the
    /// one for all benchmarks.
    pub fn run_entry(&self, model: u32, benchmark: u32, config: u32) -> Option<&RunEntry> {
        self.run_index
            .get(&(model, benchmark, config))
            .or_else(|| self.run_index.get(&(model, u32::MAX, config)))
            .and_then(|&i| self.meta.runs.get(i))
    }
}

/// Loads a dataset: a directory (docs/formats.md §1), a cells JSONL file or a per-item CSV.
/// Every problem of every file is collected; errors reject the whole input.
pub fn load_dataset(path: &Path, format: Option<CellFormat>) -> Result<Dataset, LoadError> {
    load_compared(path, None, format)
}

/// A second dataset to read beside the first, under its own protocols: cells of protocol
/// `primary` become protocol `label`, any other protocol `p` becomes `label:p`. Two runs of
/// the same items (raw video against cached frames, two harness versions) can then be
/// compared as two protocols.
#[derive(Debug, Clone)]
pub struct Compared<'a> {
    /// The second dataset.
    pub path: &'a Path,
    /// Its protocol that becomes protocol `label`.
    pub primary: &'a str,
    /// The protocol name its cells get.
    pub label: &'a str,
}

/// The label a compared dataset's protocol gets: its name (`dataset.json` → `name`, else
/// its folder or file stem), kept apart from the primary protocol's name.
pub fn compared_label(path: &Path, primary: &str) -> String {
    let name = fsread::read(&path.join("dataset.json"), fsread::DATASET_JSON)
        .ok()
        .and_then(|b| serde_json::from_slice::<DatasetMeta>(strip_bom(&b)).ok())
        .and_then(|m| m.name)
        .or_else(|| {
            let stem = if path.is_dir() {
                path.file_name()
            } else {
                path.file_stem()
            };
            stem.map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "compared".into());
    if name == primary {
        format!("{name} (compared)")
    } else {
        name
    }
}

/// Loads a dataset and, when given, a second one read as other protocols of it (see
/// [`Compared`]); items and `dataset.json` come from the first. A matrix cache the load
/// calls for (core/cache.rs) is written before it returns.
pub fn load_compared(
    path: &Path,
    compared: Option<&Compared<'_>>,
    format: Option<CellFormat>,
) -> Result<Dataset, LoadError> {
    let mut ds = load_leaving_cache(path, compared, format, None)?;
    if let Some(c) = ds.pending_cache.take() {
        ds.cache_unsaved = c.write(&ds.matrix);
    }
    Ok(ds)
}

/// Loads a dataset as [`load_dataset`] does but leaves the matrix cache it calls for in
/// [`Dataset::pending_cache`], for the caller to write when it suits it: the audit screens
/// write it in the background once the first screen is up, so a cold start does not wait
/// for it.
pub fn load_deferring_cache(path: &Path, format: Option<CellFormat>) -> Result<Dataset, LoadError> {
    load_leaving_cache(path, None, format, None)
}

/// Loads a dataset as [`load_deferring_cache`] does, except that replicates are left for
/// later when the matrix cache does not hold the dataset: a dataset directory's
/// `replicates/` files when they are large (`min_bytes` or more together,
/// [`defer_min_bytes`]) are not read, and in cells JSONL files of that size or more the
/// lines that are certainly replicates are passed over. The result then has no replicates
/// and says what it left in [`Dataset::deferred`]. Replicates change none of the canonical
/// cells (docs/measures.md §16.1), so the audit screens show their queue from this and read
/// the whole dataset behind it.
pub fn load_canonical_first(
    path: &Path,
    format: Option<CellFormat>,
    min_bytes: u64,
) -> Result<Dataset, LoadError> {
    load_leaving_cache(path, None, format, Some(min_bytes))
}

/// The replicates a load left unread ([`load_canonical_first`]).
#[derive(Debug, Clone)]
pub struct DeferredReplicates {
    /// The dataset, to be read whole.
    pub path: PathBuf,
    format: Option<CellFormat>,
    /// The files left unread.
    pub files: Vec<PathBuf>,
    /// Their size together, in bytes.
    pub bytes: u64,
    /// The replicate lines passed over in the files that were read.
    pub skimmed: u64,
}

impl DeferredReplicates {
    /// Reads the whole dataset, replicates included, as [`load_deferring_cache`] does
    /// (which refuses a cell of `replicates/` that is not a replicate), and checks that its
    /// canonical cells are those of `first`, the dataset as read without them: an error
    /// when the files changed between the two reads.
    pub fn load(&self, first: &ResponseMatrix) -> Result<Dataset, LoadError> {
        let full = load_deferring_cache(&self.path, self.format)?;
        if same_canonical_names(first, &full.matrix) {
            return Ok(full);
        }
        Err(LoadError::Dataset {
            path: self.path.clone(),
            message: "its cells changed between the read of the first screen and the whole read (with the replicates): open it again".into(),
        })
    }
}

/// Whether two matrices have the same number of canonical cells, and the same protocols,
/// models, benchmarks and items under the same ids.
fn same_canonical_names(a: &ResponseMatrix, b: &ResponseMatrix) -> bool {
    a.n_cells() == b.n_cells()
        && a.protocols.names().eq(b.protocols.names())
        && a.models.names().eq(b.models.names())
        && a.benchmarks.names().eq(b.benchmarks.names())
        && a.items.len() == b.items.len()
        && a.items
            .iter()
            .zip(&b.items)
            .all(|(x, y)| x.id == y.id && x.benchmark == y.benchmark)
}

/// The smallest size of a dataset's `replicates/` files, or of its other cells files,
/// from which the audit screens leave their replicates for later ([`load_canonical_first`]):
/// `FRAMEAUDIT_DEFER_MIN_BYTES` (`off`: never), else 32 MiB (about 150 000 replicate
/// lines, a tenth of a second to read on two cores).
pub fn defer_min_bytes() -> u64 {
    match std::env::var("FRAMEAUDIT_DEFER_MIN_BYTES").ok().as_deref() {
        Some("off") => u64::MAX,
        v => v.and_then(|v| v.parse().ok()).unwrap_or(32 << 20),
    }
}

/// The files of `files` in the `replicates/` folder of `root`.
fn replicate_files(root: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    let folder = root.join(REPLICATES_DIR);
    files
        .iter()
        .filter(|f| f.parent() == Some(folder.as_path()))
        .cloned()
        .collect()
}

/// The size of files together. A file that cannot be looked at counts as large: the whole
/// read names its problem.
fn size_of<'a>(files: impl IntoIterator<Item = &'a PathBuf>) -> u64 {
    files
        .into_iter()
        .map(|f| std::fs::metadata(f).map_or(u64::MAX, |m| m.len()))
        .fold(0u64, u64::saturating_add)
}

/// A matrix cache a load left to write: its inputs were read without a problem.
#[derive(Debug)]
pub struct PendingCache(crate::core::cache::Inputs);

impl PendingCache {
    /// Writes the cache of `m`, the matrix the load built. Best effort: a cache that
    /// cannot be written only means the next start reads the files again, which the
    /// returned note says (where, and why), for the caller to show or not.
    pub fn write(self, m: &ResponseMatrix) -> Option<String> {
        let t = std::time::Instant::now();
        let stored = self.0.store(m);
        crate::core::timing("write the matrix cache", t);
        let e = stored.err()?;
        Some(format!(
            "the matrix cache could not be saved as {} ({e}), so the next start reads the cells again; FRAMEAUDIT_CACHE_DIR names another folder, FRAMEAUDIT_CACHE=off turns caching off (docs/cache.md)",
            self.0.path().display()
        ))
    }
}

fn load_leaving_cache(
    path: &Path,
    compared: Option<&Compared<'_>>,
    format: Option<CellFormat>,
    defer: Option<u64>,
) -> Result<Dataset, LoadError> {
    let meta = std::fs::metadata(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let (root, cell_files) = if meta.is_dir() {
        (Some(path.to_path_buf()), find_cell_files(path)?)
    } else {
        (None, vec![path.to_path_buf()])
    };
    // The items' descriptions need no matrix: they are read beside the cells.
    let items_path = root
        .as_ref()
        .map(|r| r.join("items.jsonl"))
        .filter(|p| p.exists());
    let (built, items) = std::thread::scope(|s| {
        let items = items_path.as_deref().map(|p| {
            s.spawn(move || {
                let t = std::time::Instant::now();
                let mut diags = Diagnostics::default();
                let parsed = parse_items(p, &mut diags);
                crate::core::timing("items", t);
                (parsed, diags)
            })
        });
        let defer = defer.filter(|_| compared.is_none());
        let built = build_matrix(compared, format, cell_files, root.as_deref(), defer);
        let items = items.map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        (built, items)
    });
    let mut built = built?;
    let deferred = built.deferred.take();
    let mut ds = finish_load(path, compared, root, built, items)?;
    ds.deferred = deferred.map(|u| DeferredReplicates {
        path: path.to_path_buf(),
        format,
        files: u.files,
        bytes: u.bytes,
        skimmed: u.skimmed,
    });
    Ok(ds)
}

/// A matrix as [`build_matrix`] made it, or the problems that kept it from being made.
struct Built {
    /// The files read, those of a compared run after the dataset's.
    cell_files: Vec<PathBuf>,
    matrix: Option<ResponseMatrix>,
    warnings: Diagnostics,
    errors: Diagnostics,
    cache: Option<PendingCache>,
    /// The replicates left for the whole read ([`load_canonical_first`]).
    deferred: Option<Unread>,
}

/// What a load left for the whole read ([`load_canonical_first`]).
struct Unread {
    files: Vec<PathBuf>,
    bytes: u64,
    skimmed: u64,
}

/// The matrix of the cell files: from the matrix cache when a large dataset was read
/// before (core/cache.rs; a compared one is always read from its files), else read, built
/// and finished. `root` is the dataset directory, if the input is one: its `replicates/`
/// files hold replicates only. With `defer` (a size), replicates are left for later as
/// [`load_canonical_first`] says when the cache does not hold them.
fn build_matrix(
    compared: Option<&Compared<'_>>,
    format: Option<CellFormat>,
    mut cell_files: Vec<PathBuf>,
    root: Option<&Path>,
    defer: Option<u64>,
) -> Result<Built, LoadError> {
    let cache = compared
        .is_none()
        .then(|| crate::core::cache::Inputs::new(&cell_files, format))
        .flatten();
    let t = std::time::Instant::now();
    if let Some(m) = cache.as_ref().and_then(|c| c.load()) {
        crate::core::timing("read the matrix cache", t);
        return Ok(Built {
            cell_files,
            matrix: Some(m),
            warnings: Diagnostics::default(),
            errors: Diagnostics::default(),
            cache: None,
            deferred: None,
        });
    }
    let reps = root.map_or_else(Vec::new, |root| replicate_files(root, &cell_files));
    let rep_bytes = if defer.is_some() { size_of(&reps) } else { 0 };
    let min_bytes = defer.unwrap_or(u64::MAX);
    // The replicates/ files, when they are large, are not read; in the other files of
    // cells, when they are large, the replicate lines are passed over.
    let unread = !reps.is_empty() && rep_bytes >= min_bytes;
    if unread {
        cell_files.retain(|f| !reps.contains(f));
    }
    let others = cell_files.iter().filter(|f| !reps.contains(f));
    let skim = defer.is_some() && size_of(others) >= min_bytes;
    let mut builder = MatrixBuilder::new();
    for f in &cell_files {
        let replicates = reps.contains(f);
        builder.skim_replicates = skim && !replicates;
        builder.replicates_only = replicates;
        read_cell_file(f, format, &mut builder)?;
    }
    builder.replicates_only = false;
    let skimmed = builder.replicates_skimmed;
    let deferred = (unread || skimmed > 0).then(|| Unread {
        files: if unread { reps } else { Vec::new() },
        bytes: if unread { rep_bytes } else { 0 },
        skimmed,
    });
    if let Some(c) = compared {
        let meta = std::fs::metadata(c.path).map_err(|source| LoadError::Io {
            path: c.path.to_path_buf(),
            source,
        })?;
        let files = if meta.is_dir() {
            find_cell_files(c.path)?
        } else {
            vec![c.path.to_path_buf()]
        };
        builder.protocol_as = Some((c.primary.into(), c.label.into()));
        // The other harness may name the same checkpoint otherwise: read its models under
        // the names of this dataset's, where exactly one of them has the checkpoint's key.
        let mut keys: rustc_hash::FxHashMap<String, Option<Box<str>>> = Default::default();
        for (_, name) in builder.models_so_far() {
            keys.entry(crate::core::matrix::model_key(name))
                .and_modify(|v| *v = None)
                .or_insert_with(|| Some(name.into()));
        }
        let keys: rustc_hash::FxHashMap<String, Box<str>> = keys
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect();
        builder.model_as = Some(std::sync::Arc::new(keys));
        for f in &files {
            read_cell_file(f, format, &mut builder)?;
        }
        builder.protocol_as = None;
        builder.model_as = None;
        cell_files.extend(files);
    }
    crate::core::timing("read and build", t);
    let t = std::time::Instant::now();
    let finished = builder.finish();
    crate::core::timing("finish matrix", t);
    let (matrix, warnings, errors) = match finished {
        Ok((mut m, mut w)) => {
            look_alike_names(&m, &mut w);
            // The warnings of a per-item CSV name its columns (`sample_id`, not `item_id`).
            let csv = |f: &&PathBuf| {
                format.unwrap_or_else(|| CellFormat::from_path(f)) == CellFormat::PerItemCsv
            };
            for f in cell_files.iter().filter(csv) {
                w.rename_fields(f, &crate::core::matrix::PER_ITEM_CSV_COLUMNS);
            }
            // Replicates read beside those left for later (a small replicates/ folder, a
            // line not told from its bytes) would judge rows on part of their evidence:
            // the first read has none.
            if deferred.is_some() {
                m.replicates = std::mem::take(&mut m.replicates).clusters_only();
            }
            (Some(m), w, Diagnostics::default())
        }
        Err(d) => (None, Diagnostics::default(), d),
    };
    // Only a matrix built without a problem, and of all the files, is cached.
    let cache = cache
        .filter(|_| matrix.is_some() && warnings.error_count() + warnings.warning_count() == 0)
        .filter(|_| deferred.is_none())
        .map(PendingCache);
    Ok(Built {
        cell_files,
        matrix,
        warnings,
        errors,
        cache,
        deferred,
    })
}

/// Warns of names that differ only in how their accents are encoded (Unicode's composed and
/// decomposed forms, NFC and NFD): they are kept apart, as the data has them, but would look
/// the same; each is named at its first cell, and the screens show the decomposed one with
/// its marks escaped. Only names that are not ASCII are looked at.
fn look_alike_names(m: &ResponseMatrix, warnings: &mut Diagnostics) {
    use crate::core::text::composed;
    // (kind, benchmark scope, composed form) -> the names met, first one first.
    let mut seen: std::collections::HashMap<(&str, u32, String), Vec<String>> = Default::default();
    let mut add = |kind: &'static str, scope: u32, name: &str| {
        if name.is_ascii() {
            return;
        }
        let key = composed(name).unwrap_or_else(|| name.to_string());
        let names = seen.entry((kind, scope, key)).or_default();
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    };
    for name in m.models.names() {
        add("model", u32::MAX, name);
    }
    for name in m.benchmarks.names() {
        add("benchmark", u32::MAX, name);
    }
    for item in &m.items {
        add("item", item.benchmark, &item.id);
    }
    let mut found: Vec<_> = seen.into_iter().filter(|(_, v)| v.len() > 1).collect();
    if found.is_empty() {
        return;
    }
    found.sort();
    for ((kind, _, _), names) in found {
        // The first cell of the first name, so the warning points into the data.
        let first = &names[0];
        let cell = (0..m.cell_item.len() as u32).find(|&c| {
            let i = c as usize;
            match kind {
                "model" => m.models.name(m.cell_model.get(i)) == first,
                "benchmark" => m.benchmarks.name(m.item(m.cell_item.get(i)).benchmark) == first,
                _ => *m.item(m.cell_item.get(i)).id == **first,
            }
        });
        let (file, line) = match cell {
            Some(c) => (
                m.files[m.cell_file.get(c as usize) as usize].clone(),
                Some(u64::from(m.cell_line.get(c as usize))),
            ),
            None => (
                m.files
                    .first()
                    .cloned()
                    .unwrap_or_else(|| Arc::from(Path::new(""))),
                None,
            ),
        };
        let shown: Vec<String> = names
            .iter()
            .map(|n| format!("\"{}\"", crate::core::text::show_id(n)))
            .collect();
        warnings.warning(
            &file,
            line,
            Some(match kind {
                "model" => "model",
                "benchmark" => "benchmark",
                _ => "item_id",
            }),
            format!(
                "{kind}s {} differ only in how their accents are encoded (Unicode NFC and NFD): they are kept as {} {kind}s that look alike (the decomposed form is shown with its marks escaped)",
                shown.join(" and "),
                names.len()
            ),
        );
    }
}

/// The rest of a load, once the matrix is there: `dataset.json`, the items (read by
/// [`parse_items`]) and the checks that need both.
fn finish_load(
    path: &Path,
    compared: Option<&Compared<'_>>,
    root: Option<PathBuf>,
    built: Built,
    parsed_items: Option<(Result<ParsedItems, LoadError>, Diagnostics)>,
) -> Result<Dataset, LoadError> {
    let Built {
        cell_files,
        matrix,
        warnings,
        errors: mut diags,
        cache,
        deferred: _,
    } = built;
    let mut ds_meta = DatasetMeta::default();
    let mut items = Vec::new();
    if let Some(root) = &root {
        let meta_path = root.join("dataset.json");
        if meta_path.exists() {
            ds_meta = read_dataset_meta(&meta_path, &mut diags)?;
        }
    }
    // The items are keyed to a matrix, and reported on, only when there is one.
    if let (Some((parsed, item_diags)), Some(m)) = (parsed_items, &matrix) {
        let parsed = parsed?;
        diags.merge(item_diags);
        items = place_items(parsed, m, &mut diags);
    }
    diags.merge(warnings);
    // Both: the JSON Lines file is read, and the other is not, which is said.
    let unread_parquet = root
        .as_ref()
        .map(|r| (r.join("cells.jsonl"), r.join("cells.parquet")))
        .filter(|(j, p)| j.symlink_metadata().is_ok() && p.symlink_metadata().is_ok())
        .map(|(_, p)| p);
    if let Some(p) = &unread_parquet {
        diags.warning(
            &Arc::from(p.as_path()),
            None,
            None,
            "not read: cells.jsonl beside it is the dataset's file of cells (a dataset reads cells.jsonl when it has both)".into(),
        );
    }
    let Some(matrix) = matrix else {
        return Err(LoadError::Rejected(diags));
    };
    if diags.has_errors() {
        return Err(LoadError::Rejected(diags));
    }
    if matrix.n_cells() == 0 {
        return Err(LoadError::Dataset {
            path: path.to_path_buf(),
            message: if unread_parquet.is_some() {
                "holds no cells: its cells.jsonl is empty (the cells.parquet beside it is not read when there is a cells.jsonl)".into()
            } else {
                "holds no cells".into()
            },
        });
    }
    for (name, sampling) in &ds_meta.configs {
        let known =
            (0..matrix.protocols.len() as u32).any(|p| matrix.find_config(p, name).is_some());
        if !known {
            let file: Arc<Path> = Arc::from(root.clone().unwrap_or_default().join("dataset.json"));
            diags.warning(
                &file,
                None,
                Some("configs"),
                format!(
                    "configuration {name:?} (policy {:?}) has no cells",
                    sampling.policy
                ),
            );
        }
    }
    if matrix.stats.cells_invalid > 0 {
        let first = (0..matrix.n_cells() as u32)
            .find(|&c| !matrix.is_valid(c))
            .map_or(String::new(), |c| {
                format!(", the first at {}", matrix.cell_location(c))
            });
        let file: Arc<Path> = Arc::from(path);
        diags.warning(
            &file,
            None,
            None,
            format!(
                "{} invalid (no `correct` or string `gold` for a multiple-choice cell, no `score` or `gold` for an open one) and count as missing{first}",
                match matrix.stats.cells_invalid {
                    1 => "1 cell is".to_string(),
                    n => format!("{n} cells are"),
                }
            ),
        );
    }
    let name = ds_meta
        .name
        .clone()
        .or_else(|| {
            let stem = if root.is_some() {
                path.file_name()
            } else {
                path.file_stem()
            };
            stem.map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "dataset".into());
    if let Some(c) = compared {
        add_compared_runs(&mut ds_meta, c);
    }
    let run_index = index_runs(&matrix, &ds_meta, root.as_deref(), &mut diags);
    check_frame_idx(&matrix, &items, &mut diags);
    let mut matrix = matrix;
    // An item no cell gives a cluster is one of its video (docs/measures.md §16.6).
    if items.iter().flatten().any(|it| it.video.is_some()) {
        let n = matrix.items.len();
        matrix.replicates.fill_clusters(n, |it| {
            items
                .get(it as usize)
                .and_then(|m| m.as_ref())
                .and_then(|m| m.video.clone())
        });
    }
    Ok(Dataset {
        root,
        name,
        cell_files,
        matrix,
        items,
        meta: ds_meta,
        warnings: diags,
        run_index,
        pending_cache: cache,
        cache_unsaved: None,
        deferred: None,
    })
}

/// The run entries of a compared dataset's `dataset.json`, under the protocols its cells
/// were read as (see [`Compared`]), so its frames follow its own rules.
fn add_compared_runs(meta: &mut DatasetMeta, c: &Compared<'_>) {
    let Ok(bytes) = fsread::read(&c.path.join("dataset.json"), fsread::DATASET_JSON) else {
        return;
    };
    let Ok(other) = serde_json::from_slice::<DatasetMeta>(strip_bom(&bytes)) else {
        return;
    };
    for mut run in other.runs {
        run.protocol = Some(match run.protocol.as_deref() {
            None => c.label.to_string(),
            Some(p) if p == c.primary => c.label.to_string(),
            Some(p) => format!("{}:{p}", c.label),
        });
        meta.runs.push(run);
    }
}

/// The most cells whose `frame_idx` is said one by one; the others are counted.
const FRAME_IDX_SAID: usize = 20;

/// Warnings for recorded frames that cannot be the video's, of canonical and replicate
/// cells alike: an index at or past the frame count `items.jsonl` gives the item's video,
/// or no index at all for a configuration that shows frames. A warning, not an error: a
/// decoder may count a video's frames otherwise than the probe that wrote `items.jsonl`
/// (an MP4 with an edit list).
fn check_frame_idx(m: &ResponseMatrix, items: &[Option<ItemMeta>], diags: &mut Diagnostics) {
    let mut said = 0;
    let mut more = 0;
    // `idx`, recorded by the line `line` of file `file` for the canonical cell `c` or a
    // replicate of it.
    let mut check = |idx: &[u64], c: usize, file: u32, line: u32, diags: &mut Diagnostics| {
        let frames = m.config(m.cell_config.get(c)).frames;
        let total = items
            .get(m.cell_item.get(c) as usize)
            .and_then(Option::as_ref)
            .and_then(|it| it.num_frames);
        let why = match (idx.iter().max(), total) {
            (None, _) if frames > 0 => format!(
                "frame_idx is empty, for a configuration of {frames} frames: the cell's frames are not known"
            ),
            (Some(&last), Some(n)) if last >= n => format!(
                "frame_idx holds {last}, at or past the {n} frames items.jsonl gives the item's video: the index is wrong, or the decoder counted the video's frames otherwise than items.jsonl (an edit list)"
            ),
            _ => return,
        };
        if said == FRAME_IDX_SAID {
            more += 1;
            return;
        }
        said += 1;
        let file = m.files[file as usize].clone();
        diags.warning(&file, Some(u64::from(line)), Some("frame_idx"), why);
    };
    for &(cell, start, len) in &m.frame_spans {
        let c = cell as usize;
        let idx = &m.frame_pool[start as usize..(start + len) as usize];
        check(idx, c, m.cell_file.get(c), m.cell_line.get(c), diags);
    }
    let r = &m.replicates;
    if !r.frame_spans.is_empty() {
        for rep in r.cells.iter() {
            if let Some(idx) = r.frame_idx(&rep) {
                check(idx, rep.cell as usize, rep.file, rep.line, diags);
            }
        }
    }
    if more > 0
        && let Some(file) = m.files.first()
    {
        diags.warning(
            file,
            None,
            Some("frame_idx"),
            format!("and {more} more cells whose frame_idx is empty or past their video's frames"),
        );
    }
}

/// Maps (model, benchmark, configuration) ids to the run entries of `dataset.json`; an
/// entry naming no model, configuration or benchmark of the matrix is warned about.
fn index_runs(
    m: &ResponseMatrix,
    meta: &DatasetMeta,
    root: Option<&Path>,
    diags: &mut Diagnostics,
) -> rustc_hash::FxHashMap<(u32, u32, u32), usize> {
    let mut index = rustc_hash::FxHashMap::default();
    let file: Arc<Path> = Arc::from(root.unwrap_or(Path::new("")).join("dataset.json"));
    for (i, run) in meta.runs.iter().enumerate() {
        let line = meta.run_lines.get(i).copied().flatten();
        let where_ = format!(
            "runs[{i}] (model {:?}, configuration {:?})",
            run.model, run.config
        );
        let Some(model) = m.models.get(&run.model) else {
            diags.warning(
                &file,
                line,
                Some("runs"),
                format!("{where_}: no such model"),
            );
            continue;
        };
        let bench = match &run.benchmark {
            None => u32::MAX,
            Some(b) => match m.benchmarks.get(b) {
                Some(b) => b,
                None => {
                    diags.warning(
                        &file,
                        line,
                        Some("runs"),
                        format!("{where_}: no benchmark {b:?}"),
                    );
                    continue;
                }
            },
        };
        let protocols: Vec<u32> = match &run.protocol {
            Some(p) => m.protocols.get(p).into_iter().collect(),
            None => (0..m.protocols.len() as u32).collect(),
        };
        let configs: Vec<u32> = protocols
            .iter()
            .filter_map(|&p| m.find_config(p, &run.config))
            .collect();
        if configs.is_empty() {
            diags.warning(
                &file,
                line,
                Some("runs"),
                format!("{where_}: no such configuration"),
            );
        }
        // An entry of the configuration's own protocol is taken over one for every
        // protocol, in any order (an intervention's run beside the harness run of the
        // configuration it re-ran, docs/intervention.md §6); two alike, the last is used.
        let own = |j: usize| meta.runs[j].protocol.is_some();
        for c in configs {
            match index.entry((model, bench, c)) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(i);
                }
                std::collections::hash_map::Entry::Occupied(mut o) => {
                    if own(*o.get()) == own(i) {
                        diags.warning(
                            &file,
                            line,
                            Some("runs"),
                            format!("{where_}: the run is given twice; the last entry is used"),
                        );
                        o.insert(i);
                    } else if own(i) {
                        o.insert(i);
                    }
                }
            }
        }
    }
    index
}

/// The cell files of a dataset directory: `cells.jsonl` if present, else `cells.parquet`,
/// else every `.jsonl` but `items.jsonl`, else every `.csv`; then the replicate cells under
/// `replicates/`, then the intervention cells under `interventions/`.
fn find_cell_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let mut files = main_cell_files(dir)?;
    files.extend(jsonl_files_under(dir, REPLICATES_DIR)?);
    files.extend(jsonl_files_under(dir, INTERVENTIONS_DIR)?);
    Ok(files)
}

/// The replicate cell files of a dataset directory (`replicates/*.jsonl`), as a load reads
/// them; none when the folder cannot be listed.
pub fn replicate_cell_files(dir: &Path) -> Vec<PathBuf> {
    jsonl_files_under(dir, REPLICATES_DIR).unwrap_or_default()
}

/// The folder of a dataset directory that holds intervention cells (docs/formats.md §1).
pub const INTERVENTIONS_DIR: &str = "interventions";

/// The folder of a dataset directory that holds replicate cells, one `.jsonl` per replicate
/// an import added (docs/formats.md §1).
pub const REPLICATES_DIR: &str = "replicates";

/// The cells files of one folder of a dataset directory (`replicates/`, `interventions/`):
/// every `.jsonl` in it, in name order; none when there is no such folder.
fn jsonl_files_under(dir: &Path, folder: &str) -> Result<Vec<PathBuf>, LoadError> {
    let sub = dir.join(folder);
    if !sub.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(&sub).map_err(|source| LoadError::Io {
        path: sub.clone(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

fn main_cell_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    for name in ["cells.jsonl", "cells.parquet"] {
        let cells = dir.join(name);
        // Anything at that name is the file of cells: one that is not a regular file (a
        // FIFO, a link that leads nowhere or round in a loop) is refused by name when it is
        // read, not passed over.
        if cells.symlink_metadata().is_ok() {
            return Ok(vec![cells]);
        }
    }
    let entries = std::fs::read_dir(dir).map_err(|source| LoadError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut jsonl = Vec::new();
    let mut csv = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        // A folder is no file of cells; anything else of the name is read as one, and a
        // node that is not a regular file refused by name rather than passed over.
        if p.is_dir() {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".jsonl") && name != "items.jsonl" {
            jsonl.push(p);
        } else if name.ends_with(".csv") {
            csv.push(p);
        }
    }
    let mut files = if jsonl.is_empty() { csv } else { jsonl };
    files.sort();
    if files.is_empty() {
        return Err(LoadError::Dataset {
            path: dir.to_path_buf(),
            message: "is a directory without cells: expected cells.jsonl (or another .jsonl or .csv file of cells)".into(),
        });
    }
    Ok(files)
}

fn read_dataset_meta(path: &Path, diags: &mut Diagnostics) -> Result<DatasetMeta, LoadError> {
    let bytes = fsread::read(path, fsread::DATASET_JSON).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let file: Arc<Path> = Arc::from(path);
    let Some(text) = crate::core::load::encoding::utf8_or_said(&bytes, &file, diags) else {
        return Ok(DatasetMeta::default());
    };
    Ok(json::read(strip_bom_str(text), &file, diags))
}

#[derive(Deserialize, Default, Debug, PartialEq)]
struct RawItem<'a> {
    #[serde(borrow, default)]
    benchmark: J<'a>,
    #[serde(borrow, default)]
    item_id: J<'a>,
    #[serde(borrow, default)]
    question: J<'a>,
    #[serde(borrow, default)]
    options: J<'a>,
    #[serde(borrow, default)]
    gold: J<'a>,
    #[serde(borrow, default)]
    video: J<'a>,
    #[serde(borrow, default)]
    video_file: J<'a>,
    #[serde(borrow, default)]
    num_frames: J<'a>,
    #[serde(borrow, default)]
    fps: J<'a>,
    #[serde(borrow, default)]
    duration: J<'a>,
    #[serde(borrow, default)]
    decoders: J<'a>,
    #[serde(borrow, default)]
    discarded_packets: J<'a>,
    #[serde(borrow, default)]
    start: J<'a>,
    #[serde(borrow, default)]
    end: J<'a>,
    #[serde(borrow, default)]
    category: J<'a>,
    #[serde(borrow, default)]
    task_type: J<'a>,
}

/// The fields of [`RawItem`], as a line names them.
const ITEM_FIELDS: [&str; 16] = [
    "benchmark",
    "item_id",
    "question",
    "options",
    "gold",
    "video",
    "video_file",
    "num_frames",
    "fps",
    "duration",
    "decoders",
    "discarded_packets",
    "start",
    "end",
    "category",
    "task_type",
];

impl<'a> PlainRecord<'a> for RawItem<'a> {
    fn read_plain(&mut self, text: &'a str) -> bool {
        let mut slots = [
            &mut self.benchmark,
            &mut self.item_id,
            &mut self.question,
            &mut self.options,
            &mut self.gold,
            &mut self.video,
            &mut self.video_file,
            &mut self.num_frames,
            &mut self.fps,
            &mut self.duration,
            &mut self.decoders,
            &mut self.discarded_packets,
            &mut self.start,
            &mut self.end,
            &mut self.category,
            &mut self.task_type,
        ];
        super::load::json::scan_fields(text, &ITEM_FIELDS, &mut slots)
    }
}

/// An item's `decoders` (each decoder's count of its video), read again from the line with
/// serde since the plain scan skips objects; rare, as only awkward videos have one.
fn decoders_of(
    raw: &J,
    text: &[u8],
    ck: &mut FieldCheck,
) -> Option<Box<crate::core::rules::decoder::DecoderCounts>> {
    #[derive(Deserialize)]
    struct Line {
        decoders: Option<crate::core::rules::decoder::DecoderCounts>,
    }
    match raw {
        v if is_missing(v) => None,
        J::Null => None,
        J::Obj => match serde_json::from_slice::<Line>(text) {
            Ok(l) => l.decoders.map(Box::new),
            Err(e) => {
                ck.fail("decoders", format!("not a map of decoder counts ({e})"));
                None
            }
        },
        other => {
            ck.fail(
                "decoders",
                format!("expected an object, found {}", other.kind()),
            );
            None
        }
    }
}

/// The descriptions of `items.jsonl`, read and checked, not yet keyed to a matrix's items.
struct ParsedItems {
    file: Arc<Path>,
    /// Line, benchmark, item id and description of each item line that passed the checks.
    items: Vec<(u64, String, String, ItemMeta)>,
    /// The file was refused whole (UTF-16): that is said, not every item it left bare.
    refused: bool,
}

/// Reads `items.jsonl` and checks each line; [`place_items`] then keys the items to a
/// matrix. Needing no matrix, it runs while the cells are read (see [`load_leaving_cache`]).
fn parse_items(path: &Path, diags: &mut Diagnostics) -> Result<ParsedItems, LoadError> {
    let file_handle = fsread::open(path, fsread::CELLS).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let file: Arc<Path> = Arc::from(path);
    // A UTF-16 file would read as one "malformed JSON" error a line.
    let io_err = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (wide, reader) =
        crate::core::load::encoding::peek(file_handle.into_reader()).map_err(io_err)?;
    if let Some(w) = wide {
        diags.error(&file, None, None, w.refusal());
        return Ok(ParsedItems {
            file,
            items: Vec::new(),
            refused: true,
        });
    }
    let reader = BufReader::new(reader);
    let mut items = Vec::new();
    // Items whose `video` or `video_file` the frame readers refuse.
    let mut outside = 0usize;
    for_each_line(reader, path, |text, line| {
        let utf8 = std::str::from_utf8(text).ok();
        let Some(raw) = read_record::<RawItem>(text, utf8, "one item", &file, line, diags) else {
            return;
        };
        let mut ck = FieldCheck::new(diags, &file, line);
        let item_id = ck.required_str("item_id", &raw.item_id);
        let benchmark = ck.defaulted_str("benchmark", &raw.benchmark, "default");
        let meta = ItemMeta {
            question: ck.opt_str("question", &raw.question).map(str::to_owned),
            options: match &raw.options {
                v if is_missing(v) => Texts::default(),
                J::Null => Texts::default(),
                J::Arr(a) if a.iter().all(|x| x.as_str().is_some()) => {
                    a.iter().filter_map(J::as_str).collect()
                }
                other => {
                    ck.fail(
                        "options",
                        format!("expected an array of strings, found {}", other.kind()),
                    );
                    Texts::default()
                }
            },
            gold: ck.opt_str("gold", &raw.gold).map(str::to_owned),
            video: ck.opt_str("video", &raw.video).map(str::to_owned),
            video_file: ck.opt_str("video_file", &raw.video_file).map(str::to_owned),
            num_frames: ck.non_negative_int("num_frames", &raw.num_frames, true),
            fps: ck.positive("fps", &raw.fps),
            duration: ck.non_negative("duration", &raw.duration),
            decoders: decoders_of(&raw.decoders, text, &mut ck),
            discarded_packets: ck.non_negative_int(
                "discarded_packets",
                &raw.discarded_packets,
                true,
            ),
            start: ck.non_negative("start", &raw.start),
            end: ck.non_negative("end", &raw.end),
            category: ck.opt_str("category", &raw.category).map(str::to_owned),
            task_type: ck.opt_str("task_type", &raw.task_type).map(str::to_owned),
        };
        if !ck.ok {
            return;
        }
        let fates = [
            ("video", &meta.video, "the item is audited without frames"),
            ("video_file", &meta.video_file, "its raw video is not read"),
        ];
        for (field, value, fate) in fates {
            if let Some(v) = value
                && let Err(why) = crate::core::paths::check_relative(v)
            {
                outside += 1;
                if outside <= 5 {
                    diags.warning(
                        &file,
                        Some(line),
                        Some(field),
                        format!("{v:?} {why}; {fate}"),
                    );
                }
            }
        }
        items.push((line, benchmark.to_owned(), item_id.to_owned(), meta));
    })?;
    if outside > 5 {
        diags.warning(
            &file,
            None,
            None,
            format!(
                "{outside} videos or video files in all are refused (an absolute path, \"..\" or a NUL byte): frameaudit only reads inside the dataset directory"
            ),
        );
    }
    Ok(ParsedItems {
        file,
        items,
        refused: false,
    })
}

/// Keys the items read by [`parse_items`] to the matrix's items: one description per
/// item, items without cells warned about and dropped.
fn place_items(
    parsed: ParsedItems,
    matrix: &ResponseMatrix,
    diags: &mut Diagnostics,
) -> Vec<Option<ItemMeta>> {
    let file = parsed.file;
    let mut out: Vec<Option<ItemMeta>> = vec![None; matrix.items.len()];
    let mut first_line: Vec<u64> = vec![0; matrix.items.len()];
    let mut unknown = 0usize;
    for (line, benchmark, item_id, meta) in parsed.items {
        match matrix.find_item(&benchmark, &item_id) {
            Some(id) => {
                let slot = &mut out[id as usize];
                if slot.is_some() {
                    let msg = format!(
                        "item {item_id:?} of benchmark {benchmark:?} is already described at line {}",
                        first_line[id as usize]
                    );
                    diags.error(&file, Some(line), Some("item_id"), msg);
                } else {
                    *slot = Some(meta);
                    first_line[id as usize] = line;
                }
            }
            None => {
                unknown += 1;
                if unknown <= 5 {
                    diags.warning(
                        &file,
                        Some(line),
                        Some("item_id"),
                        format!("item {item_id:?} of benchmark {benchmark:?} has no cells"),
                    );
                }
            }
        }
    }
    if unknown > 5 {
        diags.warning(
            &file,
            None,
            None,
            format!("{unknown} items in all have no cells"),
        );
    }
    warn_gold_disagreements(&file, &out, &first_line, matrix, diags);
    let described = out.iter().filter(|x| x.is_some()).count();
    if described < out.len() && !parsed.refused {
        // The first one named, so that it can be found.
        let lacking = out.len() - described;
        let first = out
            .iter()
            .position(Option::is_none)
            .map_or(String::new(), |i| {
                let item = &matrix.items[i];
                format!(
                    ": {}item {:?} of benchmark {:?}",
                    if lacking == 1 { "" } else { "first " },
                    &*item.id,
                    matrix.benchmarks.name(item.benchmark)
                )
            });
        diags.warning(
            &file,
            None,
            None,
            format!(
                "{lacking} of {} items with cells {} no description (no question, no frames){first}",
                out.len(),
                if lacking == 1 { "has" } else { "have" }
            ),
        );
    }
    out
}

/// Warns where a multiple-choice item's `gold` in items.jsonl is not the gold its cells are
/// scored by (normalised as answers are compared): the first five at their lines, then how
/// many in all. The item screen would otherwise show one answer as gold while marking
/// another right.
fn warn_gold_disagreements(
    file: &Arc<Path>,
    described: &[Option<ItemMeta>],
    line_of: &[u64],
    matrix: &ResponseMatrix,
    diags: &mut Diagnostics,
) {
    use crate::core::matrix::NO_TEXT;
    use crate::core::text::norm;
    // Each multiple-choice item's stated gold, normalised once.
    let stated: Vec<Option<String>> = (0..described.len())
        .map(|item| norm(mcq_gold(matrix, described, item as u32)?))
        .collect();
    if stated.iter().all(Option::is_none) {
        return;
    }
    // Per item, the cells' gold last compared and the first that differs.
    let mut compared = vec![NO_TEXT; described.len()];
    let mut differs = vec![NO_TEXT; described.len()];
    for cell in 0..matrix.n_cells() {
        let item = matrix.cell_item.get(cell) as usize;
        let gold = matrix.cell_gold.get(cell);
        if gold == NO_TEXT || compared[item] == gold || differs[item] != NO_TEXT {
            continue;
        }
        let Some(said) = &stated[item] else { continue };
        compared[item] = gold;
        if norm(matrix.texts.name(gold)).as_ref() != Some(said) {
            differs[item] = gold;
        }
    }
    // In the order of the file's lines.
    let mut found: Vec<(u64, usize, u32)> = differs
        .iter()
        .enumerate()
        .filter(|&(_, &gold)| gold != NO_TEXT)
        .map(|(item, &gold)| (line_of[item], item, gold))
        .collect();
    found.sort_unstable();
    for &(line, item, gold) in found.iter().take(5) {
        let it = &matrix.items[item];
        diags.warning(
            file,
            Some(line),
            Some("gold"),
            format!(
                "item {:?} of benchmark {:?}: {:?} here, but its cells give {:?} as gold, which their answers are scored by",
                &*it.id,
                matrix.benchmarks.name(it.benchmark),
                mcq_gold(matrix, described, item as u32).unwrap_or_default(),
                matrix.texts.name(gold)
            ),
        );
    }
    if found.len() > 5 {
        diags.warning(
            file,
            None,
            Some("gold"),
            format!(
                "{} items in all have a gold other than their cells'",
                found.len()
            ),
        );
    }
}

/// The gold items.jsonl gives `item`, when it is a multiple-choice item (an open-ended
/// item's references are compared by score, not by one text).
fn mcq_gold<'a>(
    matrix: &ResponseMatrix,
    described: &'a [Option<ItemMeta>],
    item: u32,
) -> Option<&'a str> {
    let bench = matrix.items.get(item as usize)?.benchmark as usize;
    if matrix.bench_task[bench] != crate::core::matrix::Task::Mcq {
        return None;
    }
    described.get(item as usize)?.as_ref()?.gold.as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// An items line is read by the plain reader as serde reads it, or left to serde.
        #[test]
        fn the_plain_item_reader_reads_as_serde_or_not_at_all(
            line in crate::core::load::json::testing::lines(&ITEM_FIELDS),
        ) {
            crate::core::load::json::testing::reads_as_serde::<RawItem>(&line)?;
        }
    }

    #[test]
    fn texts_give_back_the_texts_they_were_made_of() {
        for list in [vec![], vec![""], vec!["A. a cup", "", "C. é中", "D"]] {
            let texts: Texts = list.iter().collect();
            assert_eq!(texts.iter().collect::<Vec<_>>(), list);
            assert_eq!(
                (texts.len(), texts.is_empty()),
                (list.len(), list.is_empty())
            );
        }
    }

    /// A run entry of a configuration's own protocol is taken over one for every protocol,
    /// in either order and without a warning; two entries alike still warn.
    #[test]
    fn a_protocol_s_own_run_entry_is_taken_over_one_for_every_protocol() {
        let cells = concat!(
            r#"{"model":"m","item_id":"q","config":"8f","frames":8,"pred":"A","gold":"A"}"#,
            "\n",
            r#"{"model":"m","item_id":"q","config":"8f","frames":8,"pred":"B","gold":"A","protocol":"intervention:nested"}"#,
            "\n",
        );
        let every = r#"{"model": "m", "config": "8f", "rule": {"kind": "policy", "policy": "linspace", "n": 8}, "provenance": "reproduced", "name": "every", "why": "t"}"#;
        let own = r#"{"protocol": "intervention:nested", "model": "m", "config": "8f", "rule": null, "provenance": "recorded", "name": "own", "why": "t"}"#;
        let names = |runs: &[&str]| {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::write(dir.path().join("cells.jsonl"), cells).expect("cells");
            let meta = format!(
                r#"{{"schema": "frameaudit/dataset@1", "runs": [{}]}}"#,
                runs.join(",")
            );
            std::fs::write(dir.path().join("dataset.json"), meta).expect("dataset.json");
            let ds = load_dataset(dir.path(), None).expect("load");
            let m = &ds.matrix;
            let name = |protocol: &str| {
                let p = m.protocols.get(protocol).expect("protocol");
                let c = m.find_config(p, "8f").expect("8f");
                let model = m.models.get("m").expect("m");
                let b = m.benchmarks.get("default").expect("benchmark");
                ds.run_entry(model, b, c).map(|r| r.rule.name.clone())
            };
            let twice = (ds.warnings.sorted().iter()).any(|d| d.message.contains("given twice"));
            (name("main"), name("intervention:nested"), twice)
        };
        let want = (Some("every".into()), Some("own".into()), false);
        assert_eq!(names(&[every, own]), want);
        assert_eq!(names(&[own, every]), want);
        assert!(names(&[every, every]).2, "two alike still warn");
    }

    /// Recorded frames that cannot be the video's are warned about at their line: an index
    /// past the frames items.jsonl gives, none at all; frames within the video are not.
    #[test]
    fn frame_idx_past_the_video_or_empty_is_warned_about_at_its_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cells = [
            r#"{"model":"m","item_id":"i1","config":"0f","frames":0,"pred":"A","gold":"A"}"#,
            r#"{"model":"m","item_id":"i1","config":"4f","frames":4,"pred":"A","gold":"A","frame_idx":[500,3,3,1]}"#,
            r#"{"model":"m","item_id":"i1","config":"8f","frames":8,"pred":"B","gold":"A","frame_idx":[]}"#,
            r#"{"model":"m","item_id":"i1","config":"2f","frames":2,"pred":"B","gold":"A","frame_idx":[0,63]}"#,
        ];
        std::fs::write(dir.path().join("cells.jsonl"), cells.join("\n")).expect("cells");
        std::fs::write(
            dir.path().join("items.jsonl"),
            r#"{"item_id":"i1","video":"v","num_frames":64,"fps":1.0}"#,
        )
        .expect("items");
        // Replicates' recorded frames are checked alike, at their own file's line.
        std::fs::create_dir(dir.path().join("replicates")).expect("mkdir");
        let replicates = [
            r#"{"model":"m","item_id":"i1","config":"2f","frames":2,"pred":"A","gold":"A","replicate":"phase-1/2","nuisance":"phase","frame_idx":[16,48]}"#,
            r#"{"model":"m","item_id":"i1","config":"4f","frames":4,"pred":"A","gold":"A","replicate":"phase-1/2","nuisance":"phase","frame_idx":[8,24,40,64]}"#,
        ];
        let phase = dir.path().join("replicates/phase.jsonl");
        std::fs::write(&phase, replicates.join("\n")).expect("replicates");
        let ds = load_dataset(dir.path(), None).expect("load");
        let said: Vec<(Option<u64>, String)> = ds
            .warnings
            .sorted()
            .iter()
            .filter(|d| d.field.as_deref() == Some("frame_idx"))
            .map(|d| (d.line, d.message.clone()))
            .collect();
        let of_phase: Vec<String> = ds
            .warnings
            .sorted()
            .iter()
            .filter(|d| d.field.as_deref() == Some("frame_idx") && *d.file == *phase)
            .map(|d| format!("{:?}: {}", d.line, d.message))
            .collect();
        assert_eq!(of_phase.len(), 1, "{of_phase:?}");
        assert!(
            of_phase[0].starts_with("Some(2): frame_idx holds 64, at or past the 64 frames"),
            "{of_phase:?}"
        );
        assert_eq!(said.len(), 3, "{said:?}");
        assert_eq!(said[0].0, Some(2));
        assert!(
            said[0]
                .1
                .contains("frame_idx holds 500, at or past the 64 frames"),
            "{said:?}"
        );
        assert_eq!(said[1].0, Some(3));
        assert!(
            said[1]
                .1
                .contains("frame_idx is empty, for a configuration of 8 frames"),
            "{said:?}"
        );
    }

    /// A dataset with both cells.jsonl and cells.parquet reads the first and says that the
    /// second is not read; an empty cells.jsonl says why it holds no cells.
    #[test]
    fn a_cells_parquet_beside_cells_jsonl_is_said_unread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let line = r#"{"model":"m","item_id":"i1","config":"4f","frames":4,"pred":"A","gold":"A"}"#;
        std::fs::write(dir.path().join("cells.jsonl"), line).expect("cells");
        std::fs::write(dir.path().join("cells.parquet"), b"PAR1").expect("parquet");
        let ds = load_dataset(dir.path(), None).expect("load");
        let said: Vec<String> = ds.warnings.sorted().iter().map(|d| d.to_string()).collect();
        assert!(
            said.iter()
                .any(|w| w.contains("cells.parquet")
                    && w.contains("not read: cells.jsonl beside it")),
            "{said:?}"
        );
        std::fs::write(dir.path().join("cells.jsonl"), "").expect("empty");
        let Err(e) = load_dataset(dir.path(), None) else {
            panic!("an empty cells.jsonl holds no cells");
        };
        let e = e.to_string();
        assert!(
            e.contains("its cells.jsonl is empty (the cells.parquet beside it is not read"),
            "{e}"
        );
    }

    #[test]
    fn a_plain_item_line_is_read_without_serde() {
        let line = r#"{"item_id": "q1", "question": "What falls first?", "options": ["A. a", "B. b"], "num_frames": 300, "fps": 29.97}"#;
        let mut plain = RawItem::default();
        assert!(plain.read_plain(line));
        assert_eq!(plain, serde_json::from_str::<RawItem>(line).unwrap());
        assert!(!RawItem::default().read_plain(r#"{"item_id":"a","item_id":"b"}"#));
    }
}
