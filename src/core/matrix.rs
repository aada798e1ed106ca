//! The response matrix: every cell (model x item x configuration) in compact columns.
//!
//! Strings are interned once (models, benchmarks, items, configurations, answer texts), so a
//! cell is a handful of integers and two floats. After loading, ids are renumbered so that
//! id order is the order SPEC.md prescribes (names by code point, items by benchmark then
//! id), and each (protocol, model) has its cells sorted by (item, configuration): grids are
//! then built by walking contiguous runs, with no per-analysis hashing.

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::core::diag::{Diagnostics, Loc};
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

/// A configuration `(protocol, config)` and its properties (SPEC.md §1.1).
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
    item_lookup: Vec<FxHashMap<Box<str>, u32>>,
    /// Configurations sorted by (protocol, name).
    pub configs: Vec<Config>,
    /// Answer texts: predictions, golds, blind answers, provenance.
    pub texts: Interner,
    pub stats: InputStats,
    pub files: Vec<Arc<Path>>,

    // Per-cell columns, all of the same length.
    pub cell_item: Vec<u32>,
    pub cell_model: Vec<u32>,
    pub cell_config: Vec<u32>,
    /// y (0.0 / 1.0) for MCQ, s in [0, 100] for open; NaN for an invalid cell.
    pub cell_value: Vec<f64>,
    /// NaN when absent.
    pub cell_confidence: Vec<f64>,
    pub cell_pred: Vec<u32>,
    pub cell_pred_norm: Vec<u32>,
    pub cell_gold: Vec<u32>,
    pub cell_source_tag: Vec<u32>,
    pub cell_protocol_note: Vec<u32>,
    pub cell_file: Vec<u16>,
    pub cell_line: Vec<u32>,
    /// Sampled frame indices of the cells that carry them: (cell, range in `frame_pool`).
    frame_spans: Vec<(u32, u32, u32)>,
    frame_pool: Vec<u64>,

    /// Blind answer (normalised text id) per (protocol, model, item).
    blind: FxHashMap<(u32, u32, u32), u32>,

    /// Cell indices grouped by (protocol, model), each group sorted by (item, config).
    order: Vec<u32>,
    group_start: Vec<usize>,
}

impl ResponseMatrix {
    pub fn n_cells(&self) -> usize {
        self.cell_item.len()
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
        self.item_lookup[b as usize].get(item_id).copied()
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
        !self.cell_value[cell as usize].is_nan()
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

    /// "file:line" of a cell, for messages.
    pub fn cell_location(&self, cell: u32) -> String {
        let file = &self.files[self.cell_file[cell as usize] as usize];
        format!("{}:{}", file.display(), self.cell_line[cell as usize])
    }
}

/// Builds a [`ResponseMatrix`] from validated cells, checking the rules that span cells
/// (SPEC.md §1.5): consistent configurations, one task per benchmark, agreeing blind values,
/// no duplicate cell keys.
pub struct MatrixBuilder {
    m: ResponseMatrix,
    /// First line of each configuration, for messages about conflicts.
    config_first: Vec<Loc>,
    config_lookup: FxHashMap<(u32, Box<str>), u32>,
    bench_first: Vec<Option<Loc>>,
    bench_task: Vec<Option<Task>>,
    /// Blind from a zero-frame cell: (config name, normalised text id).
    zero_blind: FxHashMap<(u32, u32, u32), (Box<str>, u32)>,
    /// Blind from a `blind` field: (text id, first location).
    field_blind: FxHashMap<(u32, u32, u32), (u32, Loc)>,
    pub diags: Diagnostics,
}

impl Default for MatrixBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl MatrixBuilder {
    pub fn new() -> Self {
        MatrixBuilder {
            m: ResponseMatrix::default(),
            config_first: Vec::new(),
            config_lookup: FxHashMap::default(),
            bench_first: Vec::new(),
            bench_task: Vec::new(),
            zero_blind: FxHashMap::default(),
            field_blind: FxHashMap::default(),
            diags: Diagnostics::default(),
        }
    }

    /// Registers an input file; returns its index for [`Self::push`].
    pub fn add_file(&mut self, path: &Path) -> Arc<Path> {
        let file: Arc<Path> = Arc::from(path);
        self.m.files.push(file.clone());
        file
    }

    /// Counts one record (a cell line or row), valid or not.
    pub fn count_record(&mut self) {
        self.m.stats.records += 1;
    }

    fn intern_text(&mut self, s: Option<&str>) -> u32 {
        s.map_or(NO_TEXT, |s| self.m.texts.intern(s))
    }

    /// Adds one cell read at `loc`.
    pub fn push(&mut self, c: CellInput<'_>, loc: &Loc) {
        let m = &mut self.m;
        let protocol = m.protocols.intern(c.protocol);
        let model = m.models.intern(c.model);
        let bench = m.benchmarks.intern(c.benchmark);
        if bench as usize == m.item_lookup.len() {
            m.item_lookup.push(FxHashMap::default());
            self.bench_first.push(None);
            self.bench_task.push(None);
        }
        let lookup = &mut m.item_lookup[bench as usize];
        let item = match lookup.get(c.item_id) {
            Some(&i) => i,
            None => {
                let i = m.items.len() as u32;
                m.items.push(Item {
                    benchmark: bench,
                    id: c.item_id.into(),
                });
                lookup.insert(c.item_id.into(), i);
                i
            }
        };

        // One task per benchmark.
        match self.bench_task[bench as usize] {
            None => {
                self.bench_task[bench as usize] = Some(c.task);
                self.bench_first[bench as usize] = Some(loc.clone());
            }
            Some(t) if t != c.task => {
                let first = self.bench_first[bench as usize]
                    .as_ref()
                    .map_or(0, |l| l.line);
                self.diags.at(
                    loc,
                    Some("task"),
                    format!(
                        "benchmark {:?} mixes tasks: this cell is {}, the cell at line {} is {}",
                        c.benchmark,
                        c.task.as_str(),
                        first,
                        t.as_str()
                    ),
                );
            }
            Some(_) => {}
        }

        // One set of properties per configuration.
        let key = (protocol, Box::<str>::from(c.config));
        let config = match self.config_lookup.get(&key) {
            Some(&id) => {
                let cfg = &m.configs[id as usize];
                let first = self.config_first[id as usize].line;
                let mut conflict = |field: &str, this: String, that: String| {
                    self.diags.at(
                        loc,
                        Some(field),
                        format!(
                            "configuration {:?} has {field} {this} here but {that} at line {first}",
                            c.config
                        ),
                    );
                };
                if cfg.frames != c.frames {
                    conflict("frames", c.frames.to_string(), cfg.frames.to_string());
                }
                if cfg.budget != c.budget {
                    conflict("budget", c.budget.to_string(), cfg.budget.to_string());
                }
                if cfg.pixels != c.pixels {
                    let show = |p: Option<u64>| p.map_or("null".to_string(), |p| p.to_string());
                    conflict("pixels", show(c.pixels), show(cfg.pixels));
                }
                id
            }
            None => {
                let id = m.configs.len() as u32;
                m.configs.push(Config {
                    protocol,
                    name: c.config.into(),
                    frames: c.frames,
                    budget: c.budget,
                    pixels: c.pixels,
                });
                self.config_first.push(loc.clone());
                self.config_lookup.insert(key, id);
                id
            }
        };

        // Blind answers (SPEC.md §1.4).
        let bkey = (protocol, model, item);
        let pred_norm = c.pred.and_then(norm_fast);
        if c.frames == 0
            && let Some(p) = &pred_norm
        {
            let pid = m.texts.intern(p);
            match self.zero_blind.get_mut(&bkey) {
                Some(entry) if *entry.0 <= *c.config => {}
                Some(entry) => *entry = (c.config.into(), pid),
                None => {
                    self.zero_blind.insert(bkey, (c.config.into(), pid));
                }
            }
        }
        if let Some(b) = c.blind.and_then(norm_fast) {
            let bid = m.texts.intern(&b);
            match self.field_blind.get(&bkey) {
                Some((other, first)) if *other != bid => {
                    let msg = format!(
                        "blind answer {:?} conflicts with {:?} given at line {} for the same model and item",
                        b,
                        m.texts.name(*other),
                        first.line
                    );
                    self.diags.at(loc, Some("blind"), msg);
                }
                Some(_) => {}
                None => {
                    self.field_blind.insert(bkey, (bid, loc.clone()));
                }
            }
        }

        // The cell value (SPEC.md §1.3).
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
        if value.is_nan() {
            m.stats.cells_invalid += 1;
        } else {
            m.stats.cells_valid += 1;
        }
        if c.frames == 0 {
            m.stats.zero_frame_cells += 1;
        }

        let cell = m.cell_item.len() as u32;
        if let Some(idx) = c.frame_idx {
            let start = m.frame_pool.len() as u32;
            m.frame_spans.push((cell, start, idx.len() as u32));
            m.frame_pool.extend(idx);
        }
        let gold_text = match &c.gold {
            Gold::None | Gold::Unusable => None,
            Gold::One(g) => Some(std::borrow::Cow::Borrowed(*g)),
            Gold::Many(gs) => Some(std::borrow::Cow::Owned(gs.join(" | "))),
        };
        let gold = self.intern_text(gold_text.as_deref());
        let pred = self.intern_text(c.pred);
        let pred_norm = self.intern_text(pred_norm.as_deref());
        let source_tag = self.intern_text(c.source_tag);
        let protocol_note = self.intern_text(c.protocol_note);
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
        m.cell_file.push((m.files.len().max(1) - 1) as u16);
        m.cell_line.push(loc.line.min(u64::from(u32::MAX)) as u32);
    }

    /// Renumbers ids into SPEC order, groups the cells, checks for duplicate cell keys and
    /// returns the matrix, or every problem found.
    pub fn finish(mut self) -> Result<(ResponseMatrix, Diagnostics), Diagnostics> {
        let mut m = self.m;
        m.bench_task = self
            .bench_task
            .iter()
            .map(|t| t.unwrap_or(Task::Mcq))
            .collect();

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
            items.push(m.items[old as usize].clone());
        }
        m.items = items;
        m.bench_items = vec![0..0; m.benchmarks.len()];
        let mut lookup = vec![FxHashMap::default(); m.benchmarks.len()];
        for (i, it) in m.items.iter().enumerate() {
            let r = &mut m.bench_items[it.benchmark as usize];
            if r.start == r.end {
                *r = i as u32..i as u32 + 1;
            } else {
                r.end = i as u32 + 1;
            }
            lookup[it.benchmark as usize].insert(it.id.clone(), i as u32);
        }
        m.item_lookup = lookup;

        // Configurations into (protocol, name) order.
        for c in &mut m.configs {
            c.protocol = proto_map[c.protocol as usize];
        }
        let mut cfg_order: Vec<u32> = (0..m.configs.len() as u32).collect();
        cfg_order.sort_by(|&a, &b| {
            let (x, y) = (&m.configs[a as usize], &m.configs[b as usize]);
            (x.protocol, &x.name).cmp(&(y.protocol, &y.name))
        });
        let mut cfg_map = vec![0u32; cfg_order.len()];
        for (new, &old) in cfg_order.iter().enumerate() {
            cfg_map[old as usize] = new as u32;
        }
        m.configs = cfg_order
            .iter()
            .map(|&old| m.configs[old as usize].clone())
            .collect();

        for x in &mut m.cell_item {
            *x = item_map[*x as usize];
        }
        for x in &mut m.cell_model {
            *x = model_map[*x as usize];
        }
        for x in &mut m.cell_config {
            *x = cfg_map[*x as usize];
        }

        // Blind answers: a zero-frame prediction wins over a `blind` field.
        let mut blind: FxHashMap<(u32, u32, u32), u32> = FxHashMap::default();
        for ((p, mo, it), (text, _)) in &self.field_blind {
            blind.insert(
                (
                    proto_map[*p as usize],
                    model_map[*mo as usize],
                    item_map[*it as usize],
                ),
                *text,
            );
        }
        for ((p, mo, it), (_, text)) in &self.zero_blind {
            blind.insert(
                (
                    proto_map[*p as usize],
                    model_map[*mo as usize],
                    item_map[*it as usize],
                ),
                *text,
            );
        }
        m.blind = blind;

        // Group cells by (protocol, model), each group sorted by (item, config).
        let n_models = m.models.len();
        let n_groups = m.protocols.len() * n_models;
        let group_of = |cell: usize| {
            m.configs[m.cell_config[cell] as usize].protocol as usize * n_models
                + m.cell_model[cell] as usize
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
        for g in 0..n_groups {
            let slice = &mut order[counts[g]..counts[g + 1]];
            let key = |&c: &u32| {
                (u64::from(m.cell_item[c as usize]) << 32) | u64::from(m.cell_config[c as usize])
            };
            if !slice.is_sorted_by_key(key) {
                slice.sort_by_key(key);
            }
            for w in slice.windows(2) {
                if key(&w[0]) == key(&w[1]) {
                    let (a, b) = (w[0] as usize, w[1] as usize);
                    let file = m.files[m.cell_file[b] as usize].clone();
                    let item = &m.items[m.cell_item[b] as usize];
                    self.diags.error(
                        &file,
                        Some(u64::from(m.cell_line[b])),
                        None,
                        format!(
                            "duplicate cell: model {:?}, benchmark {:?}, item {:?}, config {:?}, protocol {:?} already given at {}",
                            m.models.name(m.cell_model[b]),
                            m.benchmarks.name(item.benchmark),
                            item.id,
                            m.configs[m.cell_config[b] as usize].name,
                            m.protocols.name(m.configs[m.cell_config[b] as usize].protocol),
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
