//! The response matrix: every cell (model x item x configuration) in compact columns.
//!
//! Strings are interned once (models, benchmarks, items, configurations, answer texts), so a
//! cell is a handful of integers and two floats. After loading, ids are renumbered so that
//! id order is the order docs/measures.md §0 and §1.6 prescribe (names by code point, items by
//! benchmark then id), and each (protocol, model) has its cells sorted by (item, configuration):
//! grids are then built by walking contiguous runs, with no per-analysis hashing.
//!
//! This file holds the matrix and its read API; `interner` the name and item ids, `builder`
//! the loaders' way in (pushing cells, joining parts read in parallel, the final checks).

mod builder;
mod interner;
mod replicates;

use std::path::Path;
use std::sync::Arc;

pub use self::builder::{MatrixBuilder, PER_ITEM_CSV_COLUMNS, model_key};

pub(crate) use self::builder::mcq_value;
pub(crate) use self::interner::ItemIndex;
pub use self::interner::{Interner, Item};
pub(crate) use self::replicates::starts_of;
pub use self::replicates::{Of, RepColumns, Replicate, Replicates};
use crate::core::column::{Floats, Ids, Lines};
use crate::core::text::norm;

/// Whether a configuration's budget is its frame count (a per-item CSV's always is, a
/// cell's without `budget` too): where two such configurations differ in budget they differ
/// in frames, and that is said once, as `frames`.
pub(crate) fn budget_is_frames(frames: u64, budget: f64) -> bool {
    budget == frames as f64
}

/// Sentinel for "no text" in text-id columns.
pub const NO_TEXT: u32 = u32::MAX;

/// Multiple choice (a 0/1 value per cell) or open-ended (a 0..100 score per cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Task {
    /// Multiple choice: a cell is right (1) or wrong (0).
    Mcq,
    /// Open-ended: a cell has a quality score from 0 to 100.
    Open,
}

impl Task {
    /// The name of the task in cells and reports (`mcq`, `open`).
    pub fn as_str(self) -> &'static str {
        match self {
            Task::Mcq => "mcq",
            Task::Open => "open",
        }
    }
}

/// A configuration `(protocol, config)` and its properties (docs/measures.md §1.1).
#[derive(Debug, Clone)]
pub struct Config {
    /// Id of the protocol (the pipeline that produced the cells).
    pub protocol: u32,
    /// The configuration's id as the cells give it (`"32f"`, `"textonly"`).
    pub name: Box<str>,
    /// Frame cost; 0 for a zero-frame (text-only) configuration.
    pub frames: u64,
    /// Ordering key (defaults to `frames`).
    pub budget: f64,
    /// Per-frame pixel budget, when known.
    pub pixels: Option<u64>,
}

impl Config {
    /// True for a text-only configuration, whose cells give the blind answers.
    pub fn is_zero_frame(&self) -> bool {
        self.frames == 0
    }
}

/// The answer reference of a cell, as given.
#[derive(Debug, Clone, PartialEq)]
pub enum Gold<'a> {
    /// No reference answer: the cell's value must come from `correct` or `score`.
    None,
    /// One reference answer: an option letter (MCQ) or a text (open).
    One(&'a str),
    /// Several acceptable answers of an open-ended item; the best token F1 counts.
    Many(Vec<&'a str>),
    /// A list where none is usable (empty, or on a multiple-choice cell): the cell is invalid.
    Unusable,
}

/// The name of the scope of every benchmark in reports, per-item rows and SQL, which no
/// benchmark may take (docs/measures.md §1.5).
pub const ALL_SCOPE: &str = "ALL";

/// One validated cell as a loader hands it to the builder (strings borrowed from the line).
#[derive(Debug, Clone)]
pub struct CellInput<'a> {
    /// The model's id.
    pub model: &'a str,
    /// The item's id, unique within its benchmark.
    pub item_id: &'a str,
    /// Benchmark or split.
    pub benchmark: &'a str,
    /// The configuration's id (`"32f"`, `"64f_151k"`).
    pub config: &'a str,
    /// The pipeline the cell was produced by (`"main"`, `"intervention"`).
    pub protocol: &'a str,
    /// Frames the model was given (the frame cost); 0 for a text-only cell.
    pub frames: u64,
    /// The key configurations are ordered by.
    pub budget: f64,
    /// Pixel budget of one frame, when known.
    pub pixels: Option<u64>,
    /// Multiple choice or open-ended.
    pub task: Task,
    /// The model's answer: an option letter or free text.
    pub pred: Option<&'a str>,
    /// The reference answer or answers.
    pub gold: Gold<'a>,
    /// MCQ correctness as the harness recorded it; wins over comparing with `gold`.
    pub correct: Option<bool>,
    /// A recorded open-ended score from 0 to 100; wins over token F1.
    pub score: Option<f64>,
    /// How sure the model was of this answer (for the confidence cascade).
    pub confidence: Option<f64>,
    /// The model's text-only answer to the item, when no zero-frame cell gives it.
    pub blind: Option<&'a str>,
    /// The frame indices sampled, when recorded.
    pub frame_idx: Option<Vec<u64>>,
    /// Where the cell comes from (shown only).
    pub source_tag: Option<&'a str>,
    /// A caveat about how the cell was produced (shown only).
    pub protocol_note: Option<&'a str>,
    /// The replicate the cell is (docs/measures.md §16.1); `None` for a canonical cell.
    pub replicate: Option<&'a str>,
    /// What a replicate varies (`rerun`, `phase`, ...); given exactly when `replicate` is.
    pub nuisance: Option<&'a str>,
    /// The option shown at each letter, as indices of the item's options (informational).
    pub order: Option<Vec<u64>>,
    /// The item's sampling unit for the cluster bootstrap, typically its video.
    pub cluster: Option<&'a str>,
}

/// Keys of a cell's texts, from a reader that decodes each distinct text once (a Parquet
/// dictionary's entries, docs/formats.md §7): two texts of one field with the same key are
/// the same text, so the builder interns, normalises and compares a text once per key, not
/// once per cell (one 2 MB prediction on every row cost its length a row). A key is never
/// given to another text while the program runs; 0 is no key (a text read by its bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextKeys {
    /// The key of `protocol`.
    pub protocol: u64,
    /// The key of `model`.
    pub model: u64,
    /// The key of `benchmark`.
    pub benchmark: u64,
    /// The key of `item_id`.
    pub item_id: u64,
    /// The key of `config`.
    pub config: u64,
    /// The key of `pred`.
    pub pred: u64,
    /// The key of `gold` (the whole value: a text or a list).
    pub gold: u64,
    /// The key of `blind`.
    pub blind: u64,
    /// The key of `source_tag`.
    pub source_tag: u64,
    /// The key of `protocol_note`.
    pub protocol_note: u64,
}

/// Counts of the input, as the report's `input` section gives them.
#[derive(Debug, Clone, Default)]
pub struct InputStats {
    /// Records read (cell lines or rows), valid or not.
    pub records: u64,
    /// Cells with a value.
    pub cells_valid: u64,
    /// Cells kept without a value (no verdict, score or usable gold answer).
    pub cells_invalid: u64,
    /// Cells of a text-only configuration.
    pub zero_frame_cells: u64,
}

/// The loaded response matrix.
#[derive(Debug, Default)]
pub struct ResponseMatrix {
    /// Protocol names, ids in code-point order.
    pub protocols: Interner,
    /// Model names, ids in code-point order.
    pub models: Interner,
    /// Benchmark names, ids in code-point order.
    pub benchmarks: Interner,
    /// Task of each benchmark.
    pub bench_task: Vec<Task>,
    /// Items in item order; `bench_items[b]` is the id range of benchmark `b`.
    pub items: Vec<Item>,
    /// Per benchmark, its range of item ids.
    pub bench_items: Vec<std::ops::Range<u32>>,
    pub(crate) item_index: ItemIndex,
    /// Configurations sorted by (protocol, name).
    pub configs: Vec<Config>,
    /// Answer texts: predictions, golds, blind answers, provenance.
    pub texts: Interner,
    /// Counts of the input read.
    pub stats: InputStats,
    /// The input files, in the order read.
    pub files: Vec<Arc<Path>>,

    // Per-cell columns, all of the same length, each as narrow as its values allow
    // (core/column.rs).
    /// Item id of each cell.
    pub cell_item: Ids,
    /// Model id of each cell.
    pub cell_model: Ids,
    /// Configuration id of each cell (an index in `configs`).
    pub cell_config: Ids,
    /// y (0.0 / 1.0) for MCQ, s in [0, 100] for open; NaN for an invalid cell.
    pub cell_value: Floats,
    /// NaN when absent.
    pub cell_confidence: Floats,
    /// Text id of the prediction as given, or [`NO_TEXT`].
    pub cell_pred: Ids,
    /// Text id of the normalised prediction (what answers are compared by), or [`NO_TEXT`].
    pub cell_pred_norm: Ids,
    /// Text id of the gold answer (several joined by ` | `), or [`NO_TEXT`].
    pub cell_gold: Ids,
    /// Text id of the cell's `source_tag`, or [`NO_TEXT`].
    pub cell_source_tag: Ids,
    /// Text id of the cell's `protocol_note`, or [`NO_TEXT`].
    pub cell_protocol_note: Ids,
    /// Index in `files`.
    pub cell_file: Ids,
    /// Line (or row) of each cell in its file.
    pub cell_line: Lines,
    /// Sampled frame indices of the cells that carry them: (cell, range in `frame_pool`).
    pub(crate) frame_spans: Vec<(u32, u32, u32)>,
    pub(crate) frame_pool: Vec<u64>,

    /// Blind answer (normalised text id) per (protocol, model, item), sorted by that key
    /// and each key once: one model's answers are a run in item order, which the analyses
    /// walk beside the grid's items instead of looking each one up.
    pub(crate) blind: Vec<((u32, u32, u32), u32)>,

    /// Replicate cells, apart from the canonical ones above, and the items' clusters.
    pub replicates: Replicates,

    /// Cell indices grouped by (protocol, model), each group sorted by (item, config).
    pub(crate) order: Vec<u32>,
    pub(crate) group_start: Vec<usize>,
}

impl ResponseMatrix {
    /// How many cells there are, valid or not.
    pub fn n_cells(&self) -> usize {
        self.cell_item.len()
    }

    /// The per-cell columns of ids.
    pub(crate) fn id_columns(&self) -> [&Ids; 9] {
        [
            &self.cell_item,
            &self.cell_model,
            &self.cell_config,
            &self.cell_pred,
            &self.cell_pred_norm,
            &self.cell_gold,
            &self.cell_source_tag,
            &self.cell_protocol_note,
            &self.cell_file,
        ]
    }

    pub(crate) fn id_columns_mut(&mut self) -> [&mut Ids; 9] {
        [
            &mut self.cell_item,
            &mut self.cell_model,
            &mut self.cell_config,
            &mut self.cell_pred,
            &mut self.cell_pred_norm,
            &mut self.cell_gold,
            &mut self.cell_source_tag,
            &mut self.cell_protocol_note,
            &mut self.cell_file,
        ]
    }

    /// Bytes the per-cell columns and the cell order take (a memory figure for the
    /// benchmarks and tests; tables and names aside).
    pub fn cell_bytes(&self) -> usize {
        let n = self.n_cells();
        self.id_columns()
            .iter()
            .map(|c| c.width() * n)
            .sum::<usize>()
            + (self.cell_value.width() + self.cell_confidence.width()) * n
            + self.cell_line.bytes()
            + 4 * self.order.len()
    }

    /// The configuration of an id.
    pub fn config(&self, id: u32) -> &Config {
        &self.configs[id as usize]
    }

    /// The item of an id.
    pub fn item(&self, id: u32) -> &Item {
        &self.items[id as usize]
    }

    /// The task of an item's benchmark.
    pub fn item_task(&self, item: u32) -> Task {
        self.bench_task[self.items[item as usize].benchmark as usize]
    }

    /// The id of the item `item_id` of benchmark `benchmark`, if the input has it.
    pub fn find_item(&self, benchmark: &str, item_id: &str) -> Option<u32> {
        let b = self.benchmarks.get(benchmark)?;
        self.item_index.find(&self.items, b, item_id)
    }

    /// The id of configuration `name` of a protocol, if the input has it.
    pub fn find_config(&self, protocol: u32, name: &str) -> Option<u32> {
        let start = self.configs.partition_point(|c| c.protocol < protocol);
        let end = self.configs.partition_point(|c| c.protocol <= protocol);
        let slice = &self.configs[start..end];
        slice
            .binary_search_by(|c| (*c.name).cmp(name))
            .ok()
            .map(|i| (start + i) as u32)
    }

    /// Configuration ids of one protocol (a contiguous, name-sorted range).
    pub fn protocol_configs(&self, protocol: u32) -> std::ops::Range<u32> {
        let start = self.configs.partition_point(|c| c.protocol < protocol);
        let end = self.configs.partition_point(|c| c.protocol <= protocol);
        start as u32..end as u32
    }

    /// True when a cell has a value (an invalid cell is kept, but no measure counts it).
    pub fn is_valid(&self, cell: u32) -> bool {
        !self.cell_value.get(cell as usize).is_nan()
    }

    /// The text of a text id; `None` for [`NO_TEXT`].
    pub fn text(&self, id: u32) -> Option<&str> {
        (id != NO_TEXT).then(|| self.texts.name(id))
    }

    /// The cells of one (protocol, model), sorted by (item, config).
    pub fn group(&self, protocol: u32, model: u32) -> &[u32] {
        let g = protocol as usize * self.models.len() + model as usize;
        &self.order[self.group_start[g]..self.group_start[g + 1]]
    }

    /// The blind answer (normalised text id) of a model to an item under a protocol.
    pub fn blind(&self, protocol: u32, model: u32, item: u32) -> Option<u32> {
        let key = (protocol, model, item);
        let i = self.blind.binary_search_by_key(&key, |&(k, _)| k).ok()?;
        Some(self.blind[i].1)
    }

    /// The blind answers of a model under a protocol: (item, normalised text id) in item
    /// order.
    pub fn blind_of(&self, protocol: u32, model: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let pm = (protocol, model);
        let from = self.blind.partition_point(|&((p, mo, _), _)| (p, mo) < pm);
        self.blind[from..]
            .iter()
            .take_while(move |&&((p, mo, _), _)| (p, mo) == pm)
            .map(|&((_, _, item), text)| (item, text))
    }

    /// How many (protocol, model, item) have a blind answer.
    pub fn blind_answers(&self) -> usize {
        self.blind.len()
    }

    /// The frame indices a cell records as sampled, if it records them.
    pub fn frame_idx(&self, cell: u32) -> Option<&[u64]> {
        let i = self.frame_spans.binary_search_by_key(&cell, |s| s.0).ok()?;
        let (_, start, len) = self.frame_spans[i];
        Some(&self.frame_pool[start as usize..(start + len) as usize])
    }

    /// Multiple-choice cells whose recorded verdict contradicts their answers: `correct` says
    /// right while the prediction is not the gold answer, or wrong while it is (a harness's
    /// own lenient scorer decided). The verdict is what the harness counted, so it is kept;
    /// `validate` lists these cells.
    pub fn contradictions(&self) -> Vec<u32> {
        // The text id of each gold's normal form, worked out once per gold (a long gold on
        // every cell cost its length a cell); NO_TEXT when no prediction is that text.
        let mut normal: rustc_hash::FxHashMap<u32, u32> = Default::default();
        (0..self.n_cells() as u32)
            .filter(|&c| {
                let i = c as usize;
                if self.item_task(self.cell_item.get(i)) != Task::Mcq
                    || self.cell_value.get(i).is_nan()
                {
                    return false;
                }
                let (pred, gold) = (self.cell_pred_norm.get(i), self.cell_gold.get(i));
                if pred == NO_TEXT || gold == NO_TEXT {
                    return false;
                }
                let gold_norm = *normal.entry(gold).or_insert_with(|| {
                    norm_fast(self.texts.name(gold))
                        .and_then(|g| self.texts.get(&g))
                        .unwrap_or(NO_TEXT)
                });
                (pred == gold_norm) != (self.cell_value.get(i) == 1.0)
            })
            .collect()
    }

    /// "file:line" of a cell, for messages.
    pub fn cell_location(&self, cell: u32) -> String {
        let file = &self.files[self.cell_file.get(cell as usize) as usize];
        format!("{}:{}", file.display(), self.cell_line.get(cell as usize))
    }
}

/// `norm` without allocating in the common case of an already-normal ASCII answer.
pub(crate) fn norm_fast(s: &str) -> Option<std::borrow::Cow<'_, str>> {
    let simple = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_graphic() && !b.is_ascii_lowercase());
    if simple {
        Some(std::borrow::Cow::Borrowed(s))
    } else {
        norm(s).map(std::borrow::Cow::Owned)
    }
}
