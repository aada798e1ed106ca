//! The response matrix: every cell (model x item x configuration) in compact columns.
//!
//! Strings are interned once (models, benchmarks, items, configurations, answer texts), so a
//! cell is a handful of integers and two floats. After loading, ids are renumbered so that
//! id order is the order docs/measures.md §0 and §1.6 prescribe (names by code point, items by
//! benchmark then id), and each (protocol, model) has its cells sorted by (item, configuration):
//! grids are then built by walking contiguous runs, with no per-analysis hashing.

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::core::column::{Floats, Ids, Lines};
use crate::core::diag::Diagnostics;
use crate::core::text::{norm, token_f1_score};

/// Sentinel for "no text" in text-id columns.
pub const NO_TEXT: u32 = u32::MAX;

/// Interned strings with dense `u32` ids.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    map: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl Interner {
    /// An interner of these names, ids in the order given; `None` when a name repeats.
    pub(crate) fn from_names(names: Vec<Box<str>>) -> Option<Self> {
        let mut map = FxHashMap::default();
        for (i, n) in names.iter().enumerate() {
            if map.insert(n.clone(), i as u32).is_some() {
                return None;
            }
        }
        Some(Interner { map, names })
    }

    pub(crate) fn names_slice(&self) -> &[Box<str>] {
        &self.names
    }

    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    pub fn get(&self, s: &str) -> Option<u32> {
        self.map.get(s).copied()
    }

    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|s| &**s)
    }

    /// Renumbers ids into name order; returns the map from old id to new id.
    fn sort(&mut self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.names.len() as u32).collect();
        order.sort_by(|&a, &b| self.names[a as usize].cmp(&self.names[b as usize]));
        let mut remap = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old as usize] = new as u32;
        }
        let mut names: Vec<Box<str>> = Vec::with_capacity(self.names.len());
        for &old in &order {
            names.push(std::mem::take(&mut self.names[old as usize]));
        }
        self.names = names;
        for v in self.map.values_mut() {
            *v = remap[*v as usize];
        }
        remap
    }
}

/// Multiple choice (a 0/1 value per cell) or open-ended (a 0..100 score per cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Task {
    Mcq,
    Open,
}

impl Task {
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
    pub protocol: u32,
    pub name: Box<str>,
    /// Frame cost; 0 for a zero-frame (text-only) configuration.
    pub frames: u64,
    /// Ordering key (defaults to `frames`).
    pub budget: f64,
    /// Per-frame pixel budget, when known.
    pub pixels: Option<u64>,
}

impl Config {
    pub fn is_zero_frame(&self) -> bool {
        self.frames == 0
    }
}

/// An item: `(benchmark, item_id)`.
#[derive(Debug, Clone)]
pub struct Item {
    pub benchmark: u32,
    pub id: Box<str>,
}

/// Items by (benchmark, item id). It holds item numbers only; the ids are kept once, in
/// the items, and compared there.
#[derive(Debug, Clone, Default)]
pub(crate) struct ItemIndex(hashbrown::HashTable<u32>);

fn item_hash(benchmark: u32, id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one((benchmark, id))
}

impl ItemIndex {
    pub(crate) fn find(&self, items: &[Item], benchmark: u32, id: &str) -> Option<u32> {
        self.0
            .find(item_hash(benchmark, id), |&i| {
                let it = &items[i as usize];
                it.benchmark == benchmark && *it.id == *id
            })
            .copied()
    }

    /// Adds item `i` of `items` (not yet in the index).
    pub(crate) fn insert(&mut self, items: &[Item], i: u32) {
        let hash = |&j: &u32| {
            let it = &items[j as usize];
            item_hash(it.benchmark, &it.id)
        };
        self.0.insert_unique(hash(&i), i, hash);
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// The answer reference of a cell, as given.
#[derive(Debug, Clone, PartialEq)]
pub enum Gold<'a> {
    None,
    One(&'a str),
    Many(Vec<&'a str>),
    /// A list where none is usable (empty, or on a multiple-choice cell): the cell is invalid.
    Unusable,
}

/// One validated cell as a loader hands it to the builder (strings borrowed from the line).
#[derive(Debug, Clone)]
pub struct CellInput<'a> {
    pub model: &'a str,
    pub item_id: &'a str,
    pub benchmark: &'a str,
    pub config: &'a str,
    pub protocol: &'a str,
    pub frames: u64,
    pub budget: f64,
    pub pixels: Option<u64>,
    pub task: Task,
    pub pred: Option<&'a str>,
    pub gold: Gold<'a>,
    pub correct: Option<bool>,
    pub score: Option<f64>,
    pub confidence: Option<f64>,
    pub blind: Option<&'a str>,
    pub frame_idx: Option<Vec<u64>>,
    pub source_tag: Option<&'a str>,
    pub protocol_note: Option<&'a str>,
}

/// Counts of the input, as the report's `input` section gives them.
#[derive(Debug, Clone, Default)]
pub struct InputStats {
    pub records: u64,
    pub cells_valid: u64,
    pub cells_invalid: u64,
    pub zero_frame_cells: u64,
}

/// The loaded response matrix.
#[derive(Debug, Default)]
pub struct ResponseMatrix {
    pub protocols: Interner,
    pub models: Interner,
    pub benchmarks: Interner,
    /// Task of each benchmark.
    pub bench_task: Vec<Task>,
    /// Items in item order; `bench_items[b]` is the id range of benchmark `b`.
    pub items: Vec<Item>,
    pub bench_items: Vec<std::ops::Range<u32>>,
    pub(crate) item_index: ItemIndex,
    /// Configurations sorted by (protocol, name).
    pub configs: Vec<Config>,
    /// Answer texts: predictions, golds, blind answers, provenance.
    pub texts: Interner,
    pub stats: InputStats,
    pub files: Vec<Arc<Path>>,

    // Per-cell columns, all of the same length, each as narrow as its values allow
    // (core/column.rs).
    pub cell_item: Ids,
    pub cell_model: Ids,
    pub cell_config: Ids,
    /// y (0.0 / 1.0) for MCQ, s in [0, 100] for open; NaN for an invalid cell.
    pub cell_value: Floats,
    /// NaN when absent.
    pub cell_confidence: Floats,
    pub cell_pred: Ids,
    pub cell_pred_norm: Ids,
    pub cell_gold: Ids,
    pub cell_source_tag: Ids,
    pub cell_protocol_note: Ids,
    /// Index in `files`.
    pub cell_file: Ids,
    pub cell_line: Lines,
    /// Sampled frame indices of the cells that carry them: (cell, range in `frame_pool`).
    pub(crate) frame_spans: Vec<(u32, u32, u32)>,
    pub(crate) frame_pool: Vec<u64>,

    /// Blind answer (normalised text id) per (protocol, model, item).
    pub(crate) blind: FxHashMap<(u32, u32, u32), u32>,

    /// Cell indices grouped by (protocol, model), each group sorted by (item, config).
    pub(crate) order: Vec<u32>,
    pub(crate) group_start: Vec<usize>,
}

impl ResponseMatrix {
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

    pub fn config(&self, id: u32) -> &Config {
        &self.configs[id as usize]
    }

    pub fn item(&self, id: u32) -> &Item {
        &self.items[id as usize]
    }

    pub fn item_task(&self, item: u32) -> Task {
        self.bench_task[self.items[item as usize].benchmark as usize]
    }

    pub fn find_item(&self, benchmark: &str, item_id: &str) -> Option<u32> {
        let b = self.benchmarks.get(benchmark)?;
        self.item_index.find(&self.items, b, item_id)
    }

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

    pub fn is_valid(&self, cell: u32) -> bool {
        !self.cell_value.get(cell as usize).is_nan()
    }

    pub fn text(&self, id: u32) -> Option<&str> {
        (id != NO_TEXT).then(|| self.texts.name(id))
    }

    /// The cells of one (protocol, model), sorted by (item, config).
    pub fn group(&self, protocol: u32, model: u32) -> &[u32] {
        let g = protocol as usize * self.models.len() + model as usize;
        &self.order[self.group_start[g]..self.group_start[g + 1]]
    }

    pub fn blind(&self, protocol: u32, model: u32, item: u32) -> Option<u32> {
        self.blind.get(&(protocol, model, item)).copied()
    }

    pub fn blind_answers(&self) -> usize {
        self.blind.len()
    }

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
        (0..self.n_cells() as u32)
            .filter(|&c| {
                let i = c as usize;
                if self.item_task(self.cell_item.get(i)) != Task::Mcq
                    || self.cell_value.get(i).is_nan()
                {
                    return false;
                }
                let (Some(pred), Some(gold)) = (
                    self.text(self.cell_pred_norm.get(i)),
                    self.text(self.cell_gold.get(i)),
                ) else {
                    return false;
                };
                let same = norm_fast(gold).is_some_and(|g| *g == *pred);
                same != (self.cell_value.get(i) == 1.0)
            })
            .collect()
    }

    /// "file:line" of a cell, for messages.
    pub fn cell_location(&self, cell: u32) -> String {
        let file = &self.files[self.cell_file.get(cell as usize) as usize];
        format!("{}:{}", file.display(), self.cell_line.get(cell as usize))
    }
}

/// Builds a [`ResponseMatrix`] from validated cells. The rules that span cells
/// (docs/measures.md §1.5: one set of properties per configuration, one task per benchmark,
/// agreeing blind values, no duplicate cell keys) are checked in [`MatrixBuilder::finish`],
/// over all cells in input order, so a file read in parts on several threads gives exactly
/// the problems of a sequential read.
pub struct MatrixBuilder {
    m: ResponseMatrix,
    /// Per protocol: configuration name to its variants (one per distinct set of
    /// frames / budget / pixels; more than one is an error found at `finish`).
    config_lookup: Vec<FxHashMap<Box<str>, Vec<u32>>>,
    /// First cell of each configuration variant.
    config_first: Vec<u32>,
    cell_task: Vec<Task>,
    /// Blind from a zero-frame cell: (config id, normalised text id).
    zero_blind: FxHashMap<(u32, u32, u32), (u32, u32)>,
    /// Every `blind` field given: (key, normalised text id, cell), in cell order.
    field_blind: Vec<((u32, u32, u32), u32, u32)>,
    /// The ids of the previous cell: consecutive cells mostly share them.
    last: Option<LastIds>,
    /// Last text interned per column (gold, source tag, note), for the same reason.
    last_text: [(Box<str>, u32); 3],
    pub diags: Diagnostics,
    /// While set, (primary, label): cells of protocol `primary` are read as protocol
    /// `label` and any other protocol `p` as `label:p` (a second dataset compared).
    pub protocol_as: Option<(Box<str>, Box<str>)>,
    /// While set, the models read are named as the primary dataset's models of the same
    /// checkpoint ([`model_key`]): an lmms-eval run names Qwen2.5-VL
    /// `Qwen__Qwen2.5-VL-7B-Instruct`, a VLMEvalKit one `Qwen2.5-VL-7B-Instruct`.
    pub model_as: Option<std::sync::Arc<FxHashMap<String, Box<str>>>>,
}

/// A model's name reduced to its checkpoint's: the part after the last `/` or `__`,
/// letters and digits only, lower case.
pub fn model_key(name: &str) -> String {
    let tail = name
        .rsplit('/')
        .next()
        .unwrap_or(name)
        .rsplit("__")
        .next()
        .unwrap_or(name);
    tail.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Ids of the previous cell, to skip hash lookups when the next cell repeats them.
#[derive(Clone, Copy)]
struct LastIds {
    protocol: u32,
    model: u32,
    bench: u32,
    item: u32,
    config: u32,
}

impl Default for MatrixBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// Frames, budget and pixels: what must agree across a configuration's cells.
type Props = (u64, f64, Option<u64>);

fn props(c: &Config) -> Props {
    (c.frames, c.budget, c.pixels)
}

impl MatrixBuilder {
    pub fn new() -> Self {
        MatrixBuilder {
            m: ResponseMatrix::default(),
            config_lookup: Vec::new(),
            config_first: Vec::new(),
            cell_task: Vec::new(),
            zero_blind: FxHashMap::default(),
            field_blind: Vec::new(),
            last: None,
            last_text: Default::default(),
            diags: Diagnostics::default(),
            protocol_as: None,
            model_as: None,
        }
    }

    /// Registers an input file: the cells pushed next come from it.
    pub fn add_file(&mut self, path: &Path) -> Arc<Path> {
        let file: Arc<Path> = Arc::from(path);
        self.m.files.push(file.clone());
        self.last = None;
        file
    }

    /// Cells pushed so far.
    pub fn matrix_len(&self) -> usize {
        self.m.cell_item.len()
    }

    /// Counts one record (a cell line or row), valid or not.
    pub fn count_record(&mut self) {
        self.m.stats.records += 1;
    }

    fn intern_text(&mut self, s: Option<&str>) -> u32 {
        s.map_or(NO_TEXT, |s| self.m.texts.intern(s))
    }

    /// `intern_text` through the one-entry cache of column `col`.
    fn intern_cached(&mut self, col: usize, s: Option<&str>) -> u32 {
        let Some(s) = s else { return NO_TEXT };
        let mut slot = std::mem::take(&mut self.last_text[col]);
        if slot.0.is_empty() || &*slot.0 != s {
            slot = (s.into(), self.m.texts.intern(s));
        }
        let id = slot.1;
        self.last_text[col] = slot;
        id
    }

    fn protocol_id(&mut self, name: &str) -> u32 {
        let id = self.m.protocols.intern(name);
        if id as usize == self.config_lookup.len() {
            self.config_lookup.push(FxHashMap::default());
        }
        id
    }

    fn bench_id(&mut self, name: &str) -> u32 {
        self.m.benchmarks.intern(name)
    }

    fn item_id(&mut self, bench: u32, id: &str) -> u32 {
        let m = &mut self.m;
        if let Some(i) = m.item_index.find(&m.items, bench, id) {
            return i;
        }
        let i = m.items.len() as u32;
        m.items.push(Item {
            benchmark: bench,
            id: id.into(),
        });
        m.item_index.insert(&m.items, i);
        i
    }

    /// The configuration variant with these properties, created (first seen at `cell`) if
    /// new.
    fn config_id(&mut self, protocol: u32, name: &str, p: Props, cell: u32) -> u32 {
        let lookup = &mut self.config_lookup[protocol as usize];
        if let Some(variants) = lookup.get(name)
            && let Some(&id) = variants
                .iter()
                .find(|&&v| props(&self.m.configs[v as usize]) == p)
        {
            return id;
        }
        let id = self.m.configs.len() as u32;
        lookup.entry(name.into()).or_default().push(id);
        self.m.configs.push(Config {
            protocol,
            name: name.into(),
            frames: p.0,
            budget: p.1,
            pixels: p.2,
        });
        self.config_first.push(cell);
        id
    }

    /// The models read so far, with their ids.
    pub fn models_so_far(&self) -> impl Iterator<Item = (u32, &str)> {
        self.m
            .models
            .names()
            .enumerate()
            .map(|(i, n)| (i as u32, n))
    }

    /// An empty builder for one part of the input, reading the same file.
    pub fn fork(&self) -> MatrixBuilder {
        let mut b = MatrixBuilder::new();
        b.m.files = self.m.files.clone();
        b.protocol_as.clone_from(&self.protocol_as);
        b.model_as.clone_from(&self.model_as);
        b
    }

    /// Reserves room for about `cells` more cells, so the columns grow once.
    pub fn reserve(&mut self, cells: usize) {
        let m = &mut self.m;
        for column in m.id_columns_mut() {
            column.reserve(cells);
        }
        m.cell_value.reserve(cells);
        m.cell_confidence.reserve(cells);
        m.cell_line.reserve(cells);
        self.cell_task.reserve(cells);
    }

    /// Empties the builder for the next part, keeping its allocations (a part is reused
    /// block after block, so its memory is touched once).
    fn clear(&mut self) {
        let files = std::mem::take(&mut self.m.files);
        let m = &mut self.m;
        for it in [
            &mut m.protocols,
            &mut m.models,
            &mut m.benchmarks,
            &mut m.texts,
        ] {
            it.map.clear();
            it.names.clear();
        }
        m.items.clear();
        m.item_index.clear();
        m.configs.clear();
        m.stats = InputStats::default();
        for v in m.id_columns_mut() {
            v.clear();
        }
        m.cell_line.clear();
        m.cell_value.clear();
        m.cell_confidence.clear();
        m.frame_spans.clear();
        m.frame_pool.clear();
        m.files = files;
        self.config_lookup.clear();
        self.config_first.clear();
        self.cell_task.clear();
        self.zero_blind.clear();
        self.field_blind.clear();
        self.last = None;
        self.last_text = Default::default();
        self.diags = Diagnostics::default();
    }

    /// Appends a part read after everything already here, and empties the part.
    pub fn join(&mut self, part: &mut MatrixBuilder) {
        let MatrixBuilder {
            m: p,
            config_first: p_config_first,
            cell_task: p_cell_task,
            zero_blind: p_zero_blind,
            field_blind: p_field_blind,
            diags: p_diags,
            ..
        } = &mut *part;
        let p_diags = std::mem::take(p_diags);
        self.last = None;
        let base = self.m.cell_item.len() as u32;
        let protocols: Vec<u32> = p.protocols.names().map(|n| self.protocol_id(n)).collect();
        let models: Vec<u32> = p.models.names().map(|n| self.m.models.intern(n)).collect();
        let benches: Vec<u32> = p.benchmarks.names().map(|n| self.bench_id(n)).collect();
        let items: Vec<u32> = p
            .items
            .iter()
            .map(|it| self.item_id(benches[it.benchmark as usize], &it.id))
            .collect();
        let configs: Vec<u32> = p
            .configs
            .iter()
            .zip(p_config_first.iter())
            .map(|(c, &first)| {
                self.config_id(
                    protocols[c.protocol as usize],
                    &c.name,
                    props(c),
                    base + first,
                )
            })
            .collect();
        let texts: Vec<u32> = p.texts.names().map(|n| self.m.texts.intern(n)).collect();
        let text = |t: u32| {
            if t == NO_TEXT {
                NO_TEXT
            } else {
                texts[t as usize]
            }
        };
        let key = |(pp, mo, it): (u32, u32, u32)| {
            (
                protocols[pp as usize],
                models[mo as usize],
                items[it as usize],
            )
        };
        for (k, (cfg, t)) in p_zero_blind.drain() {
            let (k, cfg, t) = (key(k), configs[cfg as usize], text(t));
            match self.zero_blind.get_mut(&k) {
                Some(e)
                    if self.m.configs[e.0 as usize].name <= self.m.configs[cfg as usize].name => {}
                Some(e) => *e = (cfg, t),
                None => {
                    self.zero_blind.insert(k, (cfg, t));
                }
            }
        }
        self.field_blind.extend(
            p_field_blind
                .drain(..)
                .map(|(k, t, c)| (key(k), text(t), c + base)),
        );
        self.cell_task.extend_from_slice(p_cell_task);

        let m = &mut self.m;
        let pool = m.frame_pool.len() as u32;
        m.frame_spans.extend(
            p.frame_spans
                .iter()
                .map(|&(c, s, l)| (c + base, s + pool, l)),
        );
        m.frame_pool.extend_from_slice(&p.frame_pool);
        m.cell_item
            .extend_mapped(&p.cell_item, |i| items[i as usize]);
        m.cell_model
            .extend_mapped(&p.cell_model, |i| models[i as usize]);
        m.cell_config
            .extend_mapped(&p.cell_config, |i| configs[i as usize]);
        m.cell_value.extend_from(&p.cell_value);
        m.cell_confidence.extend_from(&p.cell_confidence);
        for (dst, src) in [
            (&mut m.cell_pred, &p.cell_pred),
            (&mut m.cell_pred_norm, &p.cell_pred_norm),
            (&mut m.cell_gold, &p.cell_gold),
            (&mut m.cell_source_tag, &p.cell_source_tag),
            (&mut m.cell_protocol_note, &p.cell_protocol_note),
        ] {
            dst.extend_mapped(src, text);
        }
        m.cell_file.extend_mapped(&p.cell_file, |f| f);
        m.cell_line.extend_from(&p.cell_line);
        m.stats.records += p.stats.records;
        m.stats.cells_valid += p.stats.cells_valid;
        m.stats.cells_invalid += p.stats.cells_invalid;
        m.stats.zero_frame_cells += p.stats.zero_frame_cells;
        self.diags.merge(p_diags);
        part.clear();
    }

    /// Adds one cell read at `line` of the current file.
    pub fn push(&mut self, c: CellInput<'_>, line: u64) {
        let renamed = self.protocol_as.as_ref().map(|(primary, label)| {
            if c.protocol == &**primary {
                label.to_string()
            } else {
                format!("{label}:{}", c.protocol)
            }
        });
        let model = self
            .model_as
            .as_ref()
            .and_then(|m| m.get(&model_key(c.model)))
            .map(|m| m.to_string());
        let c = match &model {
            Some(model) => CellInput { model, ..c },
            None => c,
        };
        match &renamed {
            Some(protocol) => self.push_cell(CellInput { protocol, ..c }, line),
            None => self.push_cell(c, line),
        }
    }

    fn push_cell(&mut self, c: CellInput<'_>, line: u64) {
        let cell = self.m.cell_item.len() as u32;
        // Consecutive cells mostly share all but their configuration: compare names with
        // the previous cell's before hashing.
        let last = self.last;
        let m = &self.m;
        let same =
            |id: Option<u32>, names: &Interner, name: &str| id.filter(|&i| names.name(i) == name);
        let protocol = match same(last.map(|l| l.protocol), &m.protocols, c.protocol) {
            Some(p) => p,
            None => self.protocol_id(c.protocol),
        };
        let model = match same(last.map(|l| l.model), &self.m.models, c.model) {
            Some(x) => x,
            None => self.m.models.intern(c.model),
        };
        let bench = match same(last.map(|l| l.bench), &self.m.benchmarks, c.benchmark) {
            Some(x) => x,
            None => self.bench_id(c.benchmark),
        };
        let item = match last.filter(|l| l.bench == bench).map(|l| l.item) {
            Some(i) if *self.m.items[i as usize].id == *c.item_id => i,
            _ => self.item_id(bench, c.item_id),
        };
        let p = (c.frames, c.budget, c.pixels);
        let config = match last
            .and_then(|l| self.m.configs.get(l.config as usize).map(|x| (l.config, x)))
        {
            Some((id, x)) if x.protocol == protocol && props(x) == p && *x.name == *c.config => id,
            _ => self.config_id(protocol, c.config, p, cell),
        };
        self.last = Some(LastIds {
            protocol,
            model,
            bench,
            item,
            config,
        });
        self.cell_task.push(c.task);

        // Blind answers (docs/measures.md §1.4).
        let bkey = (protocol, model, item);
        let pred_norm = c.pred.and_then(norm_fast);
        if c.frames == 0
            && let Some(p) = &pred_norm
        {
            let pid = self.m.texts.intern(p);
            match self.zero_blind.get_mut(&bkey) {
                Some(entry) if *self.m.configs[entry.0 as usize].name <= *c.config => {}
                Some(entry) => *entry = (config, pid),
                None => {
                    self.zero_blind.insert(bkey, (config, pid));
                }
            }
        }
        if let Some(b) = c.blind.and_then(norm_fast) {
            let bid = self.m.texts.intern(&b);
            self.field_blind.push((bkey, bid, cell));
        }

        // The cell value (docs/measures.md §1.3).
        let value = match c.task {
            Task::Mcq => match (c.correct, &c.gold) {
                (Some(b), _) => f64::from(u8::from(b)),
                (None, Gold::One(g)) => {
                    let right =
                        matches!((&pred_norm, norm_fast(g)), (Some(p), Some(g)) if *p == *g);
                    f64::from(u8::from(right))
                }
                _ => f64::NAN,
            },
            Task::Open => match (c.score, &c.gold) {
                (Some(s), _) => s,
                (None, Gold::One(g)) => token_f1_score(c.pred.unwrap_or(""), &[g]),
                (None, Gold::Many(gs)) => token_f1_score(c.pred.unwrap_or(""), gs),
                (None, Gold::None | Gold::Unusable) => f64::NAN,
            },
        };
        let stats = &mut self.m.stats;
        if value.is_nan() {
            stats.cells_invalid += 1;
        } else {
            stats.cells_valid += 1;
        }
        if c.frames == 0 {
            stats.zero_frame_cells += 1;
        }

        if let Some(idx) = c.frame_idx {
            let start = self.m.frame_pool.len() as u32;
            self.m.frame_spans.push((cell, start, idx.len() as u32));
            self.m.frame_pool.extend(idx);
        }
        let gold_text = match &c.gold {
            Gold::None | Gold::Unusable => None,
            Gold::One(g) => Some(std::borrow::Cow::Borrowed(*g)),
            Gold::Many(gs) => Some(std::borrow::Cow::Owned(gs.join(" | "))),
        };
        let gold = self.intern_cached(0, gold_text.as_deref());
        let pred = self.intern_text(c.pred);
        // Mostly the prediction is already normal: one id for both.
        let pred_norm = match (&pred_norm, c.pred) {
            (Some(n), Some(p)) if **n == *p => pred,
            _ => self.intern_text(pred_norm.as_deref()),
        };
        let source_tag = self.intern_cached(1, c.source_tag);
        let protocol_note = self.intern_cached(2, c.protocol_note);
        let m = &mut self.m;
        m.cell_item.push(item);
        m.cell_model.push(model);
        m.cell_config.push(config);
        m.cell_value.push(value);
        m.cell_confidence.push(c.confidence.unwrap_or(f64::NAN));
        m.cell_pred.push(pred);
        m.cell_pred_norm.push(pred_norm);
        m.cell_gold.push(gold);
        m.cell_source_tag.push(source_tag);
        m.cell_protocol_note.push(protocol_note);
        m.cell_file.push((m.files.len().max(1) - 1) as u32);
        m.cell_line.push(line.min(u64::from(u32::MAX)) as u32);
    }

    /// Where an earlier cell is, said relative to a later one: "line 12", or "file:12"
    /// when they come from different files.
    fn where_is(&self, first: u32, cell: u32) -> String {
        let m = &self.m;
        if m.cell_file.get(first as usize) == m.cell_file.get(cell as usize) {
            format!("line {}", m.cell_line.get(first as usize))
        } else {
            m.cell_location(first)
        }
    }

    fn cell_error(&mut self, cell: u32, field: &str, msg: String) {
        let m = &self.m;
        let file = m.files[m.cell_file.get(cell as usize) as usize].clone();
        self.diags.error(
            &file,
            Some(u64::from(m.cell_line.get(cell as usize))),
            Some(field),
            msg,
        );
    }

    /// Checks the rules that span cells, in input order: a configuration's first cell fixes
    /// its properties, a benchmark's first cell its task, a key's first `blind` its value;
    /// every later cell that disagrees is an error. Returns the variant each configuration
    /// id stands for after the check (conflicting variants fold into the first).
    fn check_spanning_rules(&mut self) -> Vec<u32> {
        let n_cfg = self.m.configs.len();
        let mut canon: Vec<u32> = (0..n_cfg as u32).collect();
        for variants in self.config_lookup.iter().flat_map(|l| l.values()) {
            if variants.len() > 1 {
                let first = *variants
                    .iter()
                    .min_by_key(|&&v| self.config_first[v as usize])
                    .unwrap_or(&variants[0]);
                for &v in variants {
                    canon[v as usize] = first;
                }
            }
        }
        let mut bench_first: Vec<Option<u32>> = vec![None; self.m.benchmarks.len()];
        for cell in 0..self.m.n_cells() as u32 {
            let b = self.m.items[self.m.cell_item.get(cell as usize) as usize].benchmark as usize;
            bench_first[b].get_or_insert(cell);
        }
        let configs_conflict = canon.iter().enumerate().any(|(i, &c)| i as u32 != c);
        let tasks_conflict = (0..self.m.n_cells()).any(|c| {
            let b = self.m.items[self.m.cell_item.get(c) as usize].benchmark as usize;
            bench_first[b].is_some_and(|f| self.cell_task[f as usize] != self.cell_task[c])
        });
        if configs_conflict || tasks_conflict {
            for cell in 0..self.m.n_cells() as u32 {
                let v = self.m.cell_config.get(cell as usize);
                let w = canon[v as usize];
                if v != w {
                    let (mine, theirs) = (&self.m.configs[v as usize], &self.m.configs[w as usize]);
                    let at = self.where_is(self.config_first[w as usize], cell);
                    let show = |p: Option<u64>| p.map_or("null".to_string(), |p| p.to_string());
                    let mut found = Vec::new();
                    if mine.frames != theirs.frames {
                        found.push(("frames", mine.frames.to_string(), theirs.frames.to_string()));
                    }
                    if mine.budget != theirs.budget {
                        found.push(("budget", mine.budget.to_string(), theirs.budget.to_string()));
                    }
                    if mine.pixels != theirs.pixels {
                        found.push(("pixels", show(mine.pixels), show(theirs.pixels)));
                    }
                    let name = mine.name.clone();
                    for (field, this, that) in found {
                        self.cell_error(
                            cell,
                            field,
                            format!(
                                "configuration {name:?} has {field} {this} here but {that} at {at}"
                            ),
                        );
                    }
                }
                let b = self.m.items[self.m.cell_item.get(cell as usize) as usize].benchmark;
                if let Some(first) = bench_first[b as usize]
                    && self.cell_task[first as usize] != self.cell_task[cell as usize]
                {
                    let msg = format!(
                        "benchmark {:?} mixes tasks: this cell is {}, the cell at {} is {}",
                        self.m.benchmarks.name(b),
                        self.cell_task[cell as usize].as_str(),
                        self.where_is(first, cell),
                        self.cell_task[first as usize].as_str()
                    );
                    self.cell_error(cell, "task", msg);
                }
            }
        }
        let mut first_blind: FxHashMap<(u32, u32, u32), (u32, u32)> = FxHashMap::default();
        for (k, t, cell) in std::mem::take(&mut self.field_blind) {
            match first_blind.get(&k) {
                Some(&(other, first)) if other != t => {
                    let msg = format!(
                        "blind answer {:?} conflicts with {:?} given at {} for the same model and item",
                        self.m.texts.name(t),
                        self.m.texts.name(other),
                        self.where_is(first, cell)
                    );
                    self.cell_error(cell, "blind", msg);
                }
                Some(_) => {}
                None => {
                    first_blind.insert(k, (t, cell));
                }
            }
        }
        self.field_blind = first_blind
            .into_iter()
            .map(|(k, (t, c))| (k, t, c))
            .collect();
        for first in &bench_first {
            let task = first.map_or(Task::Mcq, |f| self.cell_task[f as usize]);
            self.m.bench_task.push(task);
        }
        canon
    }

    /// Checks the rules that span cells, renumbers ids into the order of docs/measures.md §0 and
    /// §1.6, groups the cells, and returns the matrix, or every problem found.
    pub fn finish(mut self) -> Result<(ResponseMatrix, Diagnostics), Diagnostics> {
        self.m.bench_task.clear();
        let canon = self.check_spanning_rules();
        let mut m = std::mem::take(&mut self.m);

        // Names into code-point order.
        let proto_map = m.protocols.sort();
        let model_map = m.models.sort();
        let bench_map = m.benchmarks.sort();
        let mut bench_task = vec![Task::Mcq; m.bench_task.len()];
        for (old, &t) in m.bench_task.iter().enumerate() {
            bench_task[bench_map[old] as usize] = t;
        }
        m.bench_task = bench_task;

        // Items into (benchmark, item_id) order.
        for it in &mut m.items {
            it.benchmark = bench_map[it.benchmark as usize];
        }
        let mut item_order: Vec<u32> = (0..m.items.len() as u32).collect();
        item_order.sort_by(|&a, &b| {
            let (x, y) = (&m.items[a as usize], &m.items[b as usize]);
            (x.benchmark, &x.id).cmp(&(y.benchmark, &y.id))
        });
        let mut item_map = vec![0u32; item_order.len()];
        for (new, &old) in item_order.iter().enumerate() {
            item_map[old as usize] = new as u32;
        }
        let mut items = Vec::with_capacity(m.items.len());
        for &old in &item_order {
            let it = &mut m.items[old as usize];
            items.push(Item {
                benchmark: it.benchmark,
                id: std::mem::take(&mut it.id),
            });
        }
        m.items = items;
        m.bench_items = vec![0..0; m.benchmarks.len()];
        m.item_index.clear();
        for i in 0..m.items.len() as u32 {
            m.item_index.insert(&m.items, i);
        }
        for (i, it) in m.items.iter().enumerate() {
            let r = &mut m.bench_items[it.benchmark as usize];
            if r.start == r.end {
                *r = i as u32..i as u32 + 1;
            } else {
                r.end = i as u32 + 1;
            }
        }

        // Configurations into (protocol, name) order; conflicting variants are dropped (the
        // input is rejected) and their cells point at the first variant.
        for c in &mut m.configs {
            c.protocol = proto_map[c.protocol as usize];
        }
        let mut cfg_order: Vec<u32> = (0..m.configs.len() as u32)
            .filter(|&c| canon[c as usize] == c)
            .collect();
        cfg_order.sort_by(|&a, &b| {
            let (x, y) = (&m.configs[a as usize], &m.configs[b as usize]);
            (x.protocol, &x.name).cmp(&(y.protocol, &y.name))
        });
        let mut cfg_map = vec![0u32; m.configs.len()];
        for (new, &old) in cfg_order.iter().enumerate() {
            cfg_map[old as usize] = new as u32;
        }
        for c in 0..m.configs.len() {
            cfg_map[c] = cfg_map[canon[c] as usize];
        }
        m.configs = cfg_order
            .iter()
            .map(|&old| m.configs[old as usize].clone())
            .collect();

        m.cell_item.remap(|x| item_map[x as usize]);
        m.cell_model.remap(|x| model_map[x as usize]);
        m.cell_config.remap(|x| cfg_map[x as usize]);
        for column in m.id_columns_mut() {
            column.shrink_to_fit();
        }
        m.cell_value.shrink_to_fit();
        m.cell_confidence.shrink_to_fit();
        m.cell_line.shrink_to_fit();

        // Blind answers: a zero-frame prediction wins over a `blind` field.
        let remap = |(p, mo, it): (u32, u32, u32)| {
            (
                proto_map[p as usize],
                model_map[mo as usize],
                item_map[it as usize],
            )
        };
        let mut blind: FxHashMap<(u32, u32, u32), u32> = FxHashMap::default();
        for &(k, text, _) in &self.field_blind {
            blind.insert(remap(k), text);
        }
        for (&k, &(_, text)) in &self.zero_blind {
            blind.insert(remap(k), text);
        }
        m.blind = blind;

        // Group cells by (protocol, model), each group sorted by (item, config).
        let n_models = m.models.len();
        let n_groups = m.protocols.len() * n_models;
        let group_of = |cell: usize| {
            m.configs[m.cell_config.get(cell) as usize].protocol as usize * n_models
                + m.cell_model.get(cell) as usize
        };
        let mut counts = vec![0usize; n_groups + 1];
        for cell in 0..m.cell_item.len() {
            counts[group_of(cell) + 1] += 1;
        }
        for g in 0..n_groups {
            counts[g + 1] += counts[g];
        }
        let mut next = counts.clone();
        let mut order = vec![0u32; m.cell_item.len()];
        for cell in 0..m.cell_item.len() {
            let g = group_of(cell);
            order[next[g]] = cell as u32;
            next[g] += 1;
        }
        let key = |c: u32| {
            (u64::from(m.cell_item.get(c as usize)) << 32)
                | u64::from(m.cell_config.get(c as usize))
        };
        let mut scratch: Vec<u32> = Vec::new();
        for g in 0..n_groups {
            let slice = &mut order[counts[g]..counts[g + 1]];
            if !slice.is_sorted_by_key(|&c| key(c)) {
                sort_by_item_then_config(slice, &m.cell_item, &m.cell_config, &mut scratch);
            }
            for w in slice.windows(2) {
                if key(w[0]) == key(w[1]) {
                    let (a, b) = (w[0] as usize, w[1] as usize);
                    let file = m.files[m.cell_file.get(b) as usize].clone();
                    let item = &m.items[m.cell_item.get(b) as usize];
                    self.diags.error(
                        &file,
                        Some(u64::from(m.cell_line.get(b))),
                        None,
                        format!(
                            "duplicate cell: model {:?}, benchmark {:?}, item {:?}, config {:?}, protocol {:?} already given at {}",
                            m.models.name(m.cell_model.get(b)),
                            m.benchmarks.name(item.benchmark),
                            item.id,
                            m.configs[m.cell_config.get(b) as usize].name,
                            m.protocols.name(m.configs[m.cell_config.get(b) as usize].protocol),
                            m.cell_location(a as u32)
                        ),
                    );
                }
            }
        }
        m.order = order;
        m.group_start = counts;

        if self.diags.has_errors() {
            Err(self.diags)
        } else {
            Ok((m, self.diags))
        }
    }
}

/// Sorts cell indices by (item, config): a counting sort on the item (dense ids), then the
/// few cells of each item by config. Linear, where a comparison sort on 10 M cells is not.
fn sort_by_item_then_config(cells: &mut [u32], item: &Ids, config: &Ids, scratch: &mut Vec<u32>) {
    let (lo, hi) = cells.iter().fold((u32::MAX, 0), |(lo, hi), &c| {
        (lo.min(item.get(c as usize)), hi.max(item.get(c as usize)))
    });
    let mut start = vec![0usize; (hi - lo) as usize + 2];
    for &c in cells.iter() {
        start[(item.get(c as usize) - lo) as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    scratch.clear();
    scratch.resize(cells.len(), 0);
    let mut next = start.clone();
    for &c in cells.iter() {
        let slot = &mut next[(item.get(c as usize) - lo) as usize];
        scratch[*slot] = c;
        *slot += 1;
    }
    for w in start.windows(2) {
        scratch[w[0]..w[1]].sort_unstable_by_key(|&c| config.get(c as usize));
    }
    cells.copy_from_slice(scratch);
}

/// `norm` without allocating in the common case of an already-normal ASCII answer.
fn norm_fast(s: &str) -> Option<std::borrow::Cow<'_, str>> {
    let simple = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_graphic() && !b.is_ascii_lowercase());
    if simple {
        Some(std::borrow::Cow::Borrowed(s))
    } else {
        norm(s).map(std::borrow::Cow::Owned)
    }
}
