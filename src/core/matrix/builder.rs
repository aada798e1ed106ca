//! The builder: the loaders push validated cells into it (one builder per part of the input,
//! parts joined in input order), and `finish` checks the rules that span cells and renumbers
//! the ids into the order docs/measures.md prescribes.

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::replicates::{self, NO_CELL, Pending, PendingRep};
use super::{
    CellInput, Config, Gold, InputStats, Interner, Item, NO_TEXT, ResponseMatrix, Task, TextKeys,
    budget_is_frames, norm_fast,
};
use crate::core::column::Ids;
use crate::core::diag::Diagnostics;
use crate::core::text::{same, token_f1_score};

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
    /// Per configuration, the one the cell after a cell of it had last: consecutive cells
    /// mostly walk an item's configurations in the same order ([`MatrixBuilder::cell_ids`]).
    next_config: Vec<u32>,
    /// Per text column (gold, source tag, note, prediction), texts interned lately, by a
    /// hash of their length and ends (ids of `m.texts`, `u32::MAX` when vacant): a column
    /// holds a few texts met again and again.
    recent_texts: [[u32; 16]; 4],
    /// Per file (as `m.files` numbers them), what its open-ended cells' recorded scores span.
    scores: Vec<ScoreSpan>,
    /// What the texts of the cells came to, by the keys a reader gave them.
    memo: KeyMemo,
    /// Texts of cells looked at by their bytes (compared, hashed or normalised) rather than
    /// found by their key, here and in the parts joined: the work [`KeyMemo`] saves,
    /// counted for the tests.
    pub(crate) texts_read: u64,
    /// Replicate cells and the clusters cells give, until `finish` keys them.
    pending: Pending,
    /// Problems found so far (cells a loader rejected, and at `finish` the spanning rules).
    pub diags: Diagnostics,
    /// While set, (primary, label): cells of protocol `primary` are read as protocol
    /// `label` and any other protocol `p` as `label:p` (a second dataset compared).
    pub protocol_as: Option<(Box<str>, Box<str>)>,
    /// While set, the models read are named as the primary dataset's models of the same
    /// checkpoint ([`model_key`]): an lmms-eval run names Qwen2.5-VL
    /// `Qwen__Qwen2.5-VL-7B-Instruct`, a VLMEvalKit one `Qwen2.5-VL-7B-Instruct`.
    pub model_as: Option<std::sync::Arc<FxHashMap<String, Box<str>>>>,
    /// While set, a reader passes over the lines it can tell cheaply are replicates
    /// (cells JSONL: [`crate::core::load::cells::parse_block`]), for the audit screens to
    /// show the canonical cells first and read the whole input behind them.
    pub skim_replicates: bool,
    /// The replicate lines passed over so far, here and in the parts joined.
    pub replicates_skimmed: u64,
    /// While set, the file read holds replicates only (a dataset's `replicates/` folder,
    /// docs/formats.md §1): a cell without `replicate` is an error, not a canonical cell.
    pub replicates_only: bool,
    /// The per-item CSV files read, whose problems name the CSV's own columns.
    per_item_csv: Vec<Arc<Path>>,
}

/// The per-item CSV's column for each cell field the checks across rows name (docs/measures.md
/// §1.7): its budget is its frame count.
pub const PER_ITEM_CSV_COLUMNS: [(&str, &str); 7] = [
    ("item_id", "sample_id"),
    ("benchmark", "split"),
    ("frames", "frame_count"),
    ("budget", "frame_count"),
    ("pixels", "pixel_count"),
    ("pred", "predicted_option"),
    ("gold", "ground_truth_option"),
];

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

/// Texts longer than this are looked up by their keys ([`TextKeys`]); a shorter one is
/// compared in place ([`same`]) sooner than it is looked up.
const LONG: usize = 64;

/// A key of [`Memo`]: some keys stand for no text.
trait MemoKey: Copy + Eq + std::hash::Hash {
    fn is_none(self) -> bool;
}

impl MemoKey for u64 {
    fn is_none(self) -> bool {
        self == 0
    }
}

/// Results of the builder's work on long texts, each under its key; at most
/// [`Memo::CAP`] are kept (then all are forgotten at once), so the memory stays small
/// whatever the input.
struct Memo<K, V> {
    map: FxHashMap<K, V>,
}

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo {
            map: FxHashMap::default(),
        }
    }
}

impl<K: MemoKey, V: Copy> Memo<K, V> {
    const CAP: usize = 4096;

    /// The result under `k`; `None` for no key or a result not kept.
    fn get(&self, k: K) -> Option<V> {
        if k.is_none() {
            return None;
        }
        self.map.get(&k).copied()
    }

    /// Keeps `v` under `k` (nothing for no key).
    fn put(&mut self, k: K, v: V) {
        if k.is_none() {
            return;
        }
        if self.map.len() >= Self::CAP {
            self.map.clear();
        }
        self.map.insert(k, v);
    }
}

/// The key of a cell's value: its prediction's (0 for none), its gold's and its task (a
/// list of references is several references or unusable by the task).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ValueKey(u64, u64, Task);

impl MemoKey for ValueKey {
    fn is_none(self) -> bool {
        self.1 == 0
    }
}

/// What a cell's long texts came to, by their keys ([`TextKeys`]): ids of names (a
/// model's under the name it is read as), an item by its benchmark, a configuration by
/// its protocol and properties, a gold's text by the form it takes, a prediction's two
/// texts, a blind answer's normal form, a value by prediction, gold and task.
#[derive(Default)]
struct KeyMemo {
    protocol: Memo<u64, u32>,
    model: Memo<u64, u32>,
    bench: Memo<u64, u32>,
    item: Memo<u64, (u32, u32)>,
    config: Memo<u64, (u32, Props, u32)>,
    gold: Memo<u64, (GoldForm, u32)>,
    pred: Memo<u64, (u32, u32)>,
    blind: Memo<u64, u32>,
    source_tag: Memo<u64, u32>,
    protocol_note: Memo<u64, u32>,
    value: Memo<ValueKey, f64>,
}

/// The keys of a cell's long texts: the others are read as they are.
fn long_keys(k: &TextKeys, c: &CellInput<'_>) -> TextKeys {
    let long = |key: u64, len: usize| if len > LONG { key } else { 0 };
    let text = |s: Option<&str>| s.map_or(0, str::len);
    TextKeys {
        protocol: long(k.protocol, c.protocol.len()),
        model: long(k.model, c.model.len()),
        benchmark: long(k.benchmark, c.benchmark.len()),
        item_id: long(k.item_id, c.item_id.len()),
        config: long(k.config, c.config.len()),
        pred: long(k.pred, text(c.pred)),
        gold: long(k.gold, gold_len(&c.gold)),
        blind: long(k.blind, text(c.blind)),
        source_tag: long(k.source_tag, text(c.source_tag)),
        protocol_note: long(k.protocol_note, text(c.protocol_note)),
    }
}

/// The bytes of a cell's references.
fn gold_len(g: &Gold<'_>) -> usize {
    match g {
        Gold::One(g) => g.len(),
        Gold::Many(gs) => gs.iter().map(|g| g.len()).sum(),
        Gold::None | Gold::Unusable => 0,
    }
}

/// Which form a cell's gold takes: one text or several references (a list is unusable on
/// a multiple-choice cell, so one key may take either).
#[derive(Clone, Copy, PartialEq, Eq)]
enum GoldForm {
    None,
    One,
    Many,
    Unusable,
}

fn gold_form(g: &Gold<'_>) -> GoldForm {
    match g {
        Gold::None => GoldForm::None,
        Gold::One(_) => GoldForm::One,
        Gold::Many(_) => GoldForm::Many,
        Gold::Unusable => GoldForm::Unusable,
    }
}

/// The ids of one cell; the previous cell's are kept to skip hash lookups when the next
/// cell repeats them.
#[derive(Clone, Copy)]
struct LastIds {
    protocol: u32,
    model: u32,
    bench: u32,
    item: u32,
    config: u32,
    /// The cell these are the ids of.
    cell: u32,
}

impl Default for MatrixBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// What a file's recorded open-ended scores span: a file whose every score lies in [0, 1],
/// not all 0, most likely holds fractions of 1 (or 0/1 verdicts) where points out of 100
/// are read (docs/measures.md §1.5), which `finish` warns about.
#[derive(Debug, Clone, Copy, Default)]
struct ScoreSpan {
    /// Scores recorded.
    n: u64,
    /// The largest.
    max: f64,
    /// The line of the first above 0.
    first_positive: Option<u64>,
}

impl ScoreSpan {
    fn add(&mut self, score: f64, line: u64) {
        self.n += 1;
        self.max = self.max.max(score);
        if score > 0.0 {
            self.first_positive.get_or_insert(line);
        }
    }

    /// A later part of the same file joined after this one.
    fn join(&mut self, later: &ScoreSpan) {
        self.n += later.n;
        self.max = self.max.max(later.max);
        if self.first_positive.is_none() {
            self.first_positive = later.first_positive;
        }
    }
}

/// Frames, budget and pixels: what must agree across a configuration's cells.
type Props = (u64, f64, Option<u64>);

fn props(c: &Config) -> Props {
    (c.frames, c.budget, c.pixels)
}

impl MatrixBuilder {
    /// An empty builder; register a file with [`MatrixBuilder::add_file`] before pushing.
    pub fn new() -> Self {
        MatrixBuilder {
            m: ResponseMatrix::default(),
            config_lookup: Vec::new(),
            config_first: Vec::new(),
            cell_task: Vec::new(),
            zero_blind: FxHashMap::default(),
            field_blind: Vec::new(),
            last: None,
            next_config: Vec::new(),
            recent_texts: [[u32::MAX; 16]; 4],
            scores: Vec::new(),
            memo: KeyMemo::default(),
            texts_read: 0,
            pending: Pending::default(),
            diags: Diagnostics::default(),
            protocol_as: None,
            model_as: None,
            skim_replicates: false,
            replicates_skimmed: 0,
            replicates_only: false,
            per_item_csv: Vec::new(),
        }
    }

    /// Registers an input file: the cells pushed next come from it.
    pub fn add_file(&mut self, path: &Path) -> Arc<Path> {
        let file: Arc<Path> = Arc::from(path);
        self.m.files.push(file.clone());
        self.last = None;
        file
    }

    /// Registers a per-item CSV file, as [`MatrixBuilder::add_file`]; the problems found
    /// across its rows name its columns (`frame_count`, not `frames`).
    pub fn add_per_item_csv(&mut self, path: &Path) -> Arc<Path> {
        let file = self.add_file(path);
        self.per_item_csv.push(file.clone());
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

    /// `intern_text` through column `col`'s cache of texts met lately
    /// ([`MatrixBuilder::recent_texts`]).
    fn intern_cached(&mut self, col: usize, s: Option<&str>) -> u32 {
        let Some(s) = s else { return NO_TEXT };
        let b = s.as_bytes();
        let key = u64::from(b.first().copied().unwrap_or(0))
            | u64::from(b.last().copied().unwrap_or(0)) << 8
            | (b.len() as u64) << 16;
        let slot = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 60) as usize;
        let slot = &mut self.recent_texts[col][slot];
        if *slot != u32::MAX && same(self.m.texts.name(*slot), s) {
            return *slot;
        }
        let id = self.m.texts.intern(s);
        *slot = id;
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
        b.skim_replicates = self.skim_replicates;
        b.replicates_only = self.replicates_only;
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
            it.clear();
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
        self.next_config.clear();
        self.recent_texts = [[u32::MAX; 16]; 4];
        self.scores.clear();
        // The ids the results hold are gone with the names.
        self.memo = KeyMemo::default();
        self.texts_read = 0;
        self.replicates_skimmed = 0;
        self.pending.clear();
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
            scores: p_scores,
            diags: p_diags,
            texts_read: p_texts_read,
            replicates_skimmed: p_skimmed,
            pending: p_pending,
            ..
        } = &mut *part;
        // Parts share the file list, so a part's file numbers are those here.
        if self.scores.len() < p_scores.len() {
            self.scores.resize(p_scores.len(), ScoreSpan::default());
        }
        for (s, p) in self.scores.iter_mut().zip(p_scores.iter()) {
            s.join(p);
        }
        let p_diags = std::mem::take(p_diags);
        self.texts_read += *p_texts_read;
        self.replicates_skimmed += *p_skimmed;
        self.last = None;
        let base = self.m.cell_item.len() as u32;
        let ids = self.part_ids(p, p_config_first, base);
        self.join_blind(&ids, p_zero_blind, p_field_blind, base);
        self.cell_task.extend_from_slice(p_cell_task);
        append_cells(&mut self.m, p, &ids, base);
        self.pending
            .join(p_pending, |it| ids.items[it as usize], base);
        self.diags.merge(p_diags);
        part.clear();
    }

    /// Interns a part's names, items and configurations here, in the part's id order, so
    /// that every id comes out as a sequential read would have given it.
    fn part_ids(&mut self, p: &ResponseMatrix, p_config_first: &[u32], base: u32) -> PartIds {
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
        PartIds {
            protocols,
            models,
            items,
            configs,
            texts,
        }
    }

    /// Takes over a part's blind answers: its zero-frame ones by the rule of `push_cell`
    /// (the configuration first by name wins), its `blind` fields after the ones here, as
    /// `finish` checks them in input order.
    fn join_blind(
        &mut self,
        ids: &PartIds,
        p_zero_blind: &mut FxHashMap<(u32, u32, u32), (u32, u32)>,
        p_field_blind: &mut Vec<((u32, u32, u32), u32, u32)>,
        base: u32,
    ) {
        for (k, (cfg, t)) in p_zero_blind.drain() {
            let (k, cfg, t) = (ids.key(k), ids.configs[cfg as usize], ids.text(t));
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
                .map(|(k, t, c)| (ids.key(k), ids.text(t), c + base)),
        );
    }

    /// Adds one cell read at `line` of the current file (by reference: a cell is a few
    /// hundred bytes, and copying it at each call was a tenth of the time of reading a
    /// per-item CSV).
    pub fn push(&mut self, c: &CellInput<'_>, line: u64) {
        self.push_keyed(c, &TextKeys::default(), line);
    }

    /// [`MatrixBuilder::push`] with the keys of the cell's texts: a text met before under
    /// its key is not looked at again ([`TextKeys`]).
    pub fn push_keyed(&mut self, c: &CellInput<'_>, keys: &TextKeys, line: u64) {
        let long = if *keys == TextKeys::default() {
            *keys
        } else {
            long_keys(keys, c)
        };
        // A name known by its key is not renamed again (nor looked at).
        let renamed = self
            .protocol_as
            .as_ref()
            .filter(|_| self.memo.protocol.get(long.protocol).is_none())
            .map(|(primary, label)| {
                if c.protocol == &**primary {
                    label.to_string()
                } else {
                    format!("{label}:{}", c.protocol)
                }
            });
        let model = self
            .model_as
            .as_ref()
            .filter(|_| self.memo.model.get(long.model).is_none())
            .and_then(|m| m.get(&model_key(c.model)))
            .map(|m| m.to_string());
        let names = (
            renamed.as_deref().unwrap_or(c.protocol),
            model.as_deref().unwrap_or(c.model),
        );
        match c.replicate {
            None if self.replicates_only => {
                let file = self
                    .m
                    .files
                    .last()
                    .cloned()
                    .unwrap_or_else(|| Arc::from(Path::new("")));
                self.diags.error(
                    &file,
                    Some(line),
                    Some("replicate"),
                    "a cell of replicates/ must be a replicate (with `replicate` and `nuisance`); the dataset's own cells go in its cells file".into(),
                );
            }
            None => self.push_cell(c, names, &long, keys, line),
            Some(r) => self.push_replicate(c, names, r, line),
        }
    }

    /// Keeps a replicate for `finish`, which checks it against the other replicates and
    /// keys it to its canonical cell (docs/measures.md §16.1). Its `blind` is ignored.
    fn push_replicate(
        &mut self,
        c: &CellInput<'_>,
        (protocol, model): (&str, &str),
        replicate: &str,
        line: u64,
    ) {
        // The loader counted the line as a record, and `records` counts canonical cells.
        self.m.stats.records = self.m.stats.records.saturating_sub(1);
        let pred_norm = c.pred.and_then(norm_fast);
        let value = cell_value(c, pred_norm.as_deref());
        // Its canonical cell, when that came just before it (as most files give them).
        let last = self.last.filter(|l| self.names_of(l, c, protocol, model));
        let cell = last.map_or(NO_CELL, |l| l.cell);
        // Replicates mostly come in runs of one protocol, model, item, replicate: a name
        // that is the replicate before's is not hashed again; nor is the configuration of
        // a replicate after its cell, known by the cell's configuration.
        let prev = self.pending.reps.last().copied();
        let Pending {
            names: n,
            config_names,
            ..
        } = &mut self.pending;
        let mut id = |s: &str, last: Option<u32>| match last {
            Some(l) if same(n.name(l), s) => l,
            _ => n.intern(s),
        };
        let config = match last {
            Some(l) => {
                let at = l.config as usize;
                if config_names.len() <= at {
                    config_names.resize(at + 1, NO_TEXT);
                }
                if config_names[at] == NO_TEXT {
                    config_names[at] = id(c.config, None);
                }
                config_names[at]
            }
            None => id(c.config, prev.map(|p| p.config)),
        };
        let rep = PendingRep {
            cell,
            protocol: id(protocol, prev.map(|p| p.protocol)),
            model: id(model, prev.map(|p| p.model)),
            bench: id(c.benchmark, prev.map(|p| p.bench)),
            item: id(c.item_id, prev.map(|p| p.item)),
            config,
            replicate: id(replicate, prev.map(|p| p.replicate)),
            nuisance: id(c.nuisance.unwrap_or_default(), prev.map(|p| p.nuisance)),
            cluster: c.cluster.map_or(NO_TEXT, |x| {
                id(x, prev.map(|p| p.cluster).filter(|&p| p != NO_TEXT))
            }),
            props: match prev.map(|p| (p.props, self.pending.props[p.props as usize])) {
                Some((id, (f, b, p)))
                    if (f, b.to_bits(), p) == (c.frames, c.budget.to_bits(), c.pixels) =>
                {
                    id
                }
                _ => self.pending.props_id((c.frames, c.budget, c.pixels)),
            },
            task: c.task,
            value,
            file: (self.m.files.len().max(1) - 1) as u32,
            line: line.min(u64::from(u32::MAX)) as u32,
        };
        if let Some(idx) = &c.frame_idx {
            let p = &mut self.pending;
            let start = p.frame_pool.len() as u32;
            p.frame_pool.extend_from_slice(idx);
            p.frame_spans
                .push(((rep.file, rep.line), start, idx.len() as u32));
        }
        self.pending.reps.push(rep);
    }

    /// Whether `last` are the ids of a replicate's cell: of its protocol and model `names`
    /// (as renamed), benchmark, item and configuration.
    fn names_of(&self, last: &LastIds, c: &CellInput<'_>, protocol: &str, model: &str) -> bool {
        let m = &self.m;
        same(&m.items[last.item as usize].id, c.item_id)
            && same(&m.configs[last.config as usize].name, c.config)
            && same(m.models.name(last.model), model)
            && same(m.benchmarks.name(last.bench), c.benchmark)
            && same(m.protocols.name(last.protocol), protocol)
    }

    /// Adds one cell under `names`, its (protocol, model) as read (a compared run's
    /// renamed; names known by their keys are not looked at): its ids, blind answers,
    /// value and texts, in an order that fixes the text ids (texts are never renumbered,
    /// so a part joined later must intern alike; a text known by its key was interned
    /// before, so the order holds). `keys` are those of its long texts, `all` of all.
    fn push_cell(
        &mut self,
        c: &CellInput<'_>,
        names: (&str, &str),
        keys: &TextKeys,
        all: &TextKeys,
        line: u64,
    ) {
        let cell = self.m.cell_item.len() as u32;
        let ids = self.cell_ids(c, names, keys, cell);
        self.last = Some(ids);
        if let Some(cluster) = c.cluster {
            let id = self.pending.names.intern(cluster);
            self.pending.clusters.push((ids.item, id, cell));
        }
        self.cell_task.push(c.task);
        // The prediction's two text ids when its key is known, else its normal form.
        let pred_ids = self.memo.pred.get(keys.pred);
        let pred_norm = match pred_ids {
            Some(_) => None,
            None => c.pred.and_then(norm_fast),
        };
        let zero_blind = match (c.frames, pred_ids) {
            (0, Some((_, norm))) => (norm != NO_TEXT).then_some(norm),
            (0, None) => pred_norm.as_deref().map(|p| self.m.texts.intern(p)),
            _ => None,
        };
        self.record_blind(c, keys, ids, zero_blind, cell);
        let value = self.value(c, all, pred_ids.is_some(), pred_norm.as_deref());
        self.count_cell(value, c.frames);
        if let (Task::Open, Some(score)) = (c.task, c.score) {
            let file = self.m.files.len().max(1) - 1;
            if self.scores.len() <= file {
                self.scores.resize(file + 1, ScoreSpan::default());
            }
            self.scores[file].add(score, line);
        }
        if let Some(idx) = c.frame_idx.as_deref() {
            let start = self.m.frame_pool.len() as u32;
            self.m.frame_spans.push((cell, start, idx.len() as u32));
            self.m.frame_pool.extend_from_slice(idx);
        }
        self.push_columns(c, keys, ids, value, pred_ids, pred_norm.as_deref(), line);
    }

    /// A cell's value ([`cell_value`]): a verdict or a score as given, else worked out from
    /// the prediction and the gold, once per pair of their keys (`keys`, of all its texts)
    /// when one of the two is long. `pred_known` when `pred_norm` was not computed (the
    /// prediction's key was known), so it is computed here if a comparison needs it.
    fn value(
        &mut self,
        c: &CellInput<'_>,
        keys: &TextKeys,
        pred_known: bool,
        pred_norm: Option<&str>,
    ) -> f64 {
        let compared = match c.task {
            Task::Mcq => c.correct.is_none(),
            Task::Open => c.score.is_none(),
        };
        // Nothing to compare: the prediction is not looked at.
        if !compared || matches!(c.gold, Gold::None | Gold::Unusable) {
            return cell_value(c, None);
        }
        // A prediction without a key is keyed by nothing only when there is none.
        let long = c.pred.is_some_and(|p| p.len() > LONG) || gold_len(&c.gold) > LONG;
        let key = (long && (c.pred.is_none() || keys.pred != 0))
            .then_some(ValueKey(keys.pred, keys.gold, c.task));
        if let Some(v) = key.and_then(|k| self.memo.value.get(k)) {
            return v;
        }
        self.texts_read += 1;
        // An open cell is scored on the prediction as given, not its normal form.
        let v = match (c.task, pred_known) {
            (Task::Mcq, true) => cell_value(c, c.pred.and_then(norm_fast).as_deref()),
            _ => cell_value(c, pred_norm),
        };
        if let Some(k) = key {
            self.memo.value.put(k, v);
        }
        v
    }

    /// The protocol, model (by the names given), benchmark, item and configuration ids of
    /// a cell. Consecutive cells mostly share all but their configuration, so the previous
    /// cell's ids are tried by comparing names before anything is hashed.
    fn cell_ids(
        &mut self,
        c: &CellInput<'_>,
        (protocol, model): (&str, &str),
        keys: &TextKeys,
        cell: u32,
    ) -> LastIds {
        let last = self.last;
        let kept = |id: Option<u32>, names: &Interner, name: &str| {
            id.filter(|&i| same(names.name(i), name))
        };
        let protocol = match self.memo.protocol.get(keys.protocol) {
            Some(p) => p,
            None => {
                self.texts_read += 1;
                let p = match kept(last.map(|l| l.protocol), &self.m.protocols, protocol) {
                    Some(p) => p,
                    None => self.protocol_id(protocol),
                };
                self.memo.protocol.put(keys.protocol, p);
                p
            }
        };
        let model = match self.memo.model.get(keys.model) {
            Some(x) => x,
            None => {
                self.texts_read += 1;
                let x = match kept(last.map(|l| l.model), &self.m.models, model) {
                    Some(x) => x,
                    None => self.m.models.intern(model),
                };
                self.memo.model.put(keys.model, x);
                x
            }
        };
        let bench = match self.memo.bench.get(keys.benchmark) {
            Some(x) => x,
            None => {
                self.texts_read += 1;
                let x = match kept(last.map(|l| l.bench), &self.m.benchmarks, c.benchmark) {
                    Some(x) => x,
                    None => self.bench_id(c.benchmark),
                };
                self.memo.bench.put(keys.benchmark, x);
                x
            }
        };
        let item = match self.memo.item.get(keys.item_id) {
            Some((b, i)) if b == bench => i,
            _ => {
                self.texts_read += 1;
                let i = match last.filter(|l| l.bench == bench).map(|l| l.item) {
                    Some(i) if same(&self.m.items[i as usize].id, c.item_id) => i,
                    _ => self.item_id(bench, c.item_id),
                };
                self.memo.item.put(keys.item_id, (bench, i));
                i
            }
        };
        let p = (c.frames, c.budget, c.pixels);
        let config = match self.memo.config.get(keys.config) {
            Some((pr, q, id)) if pr == protocol && q == p => id,
            _ => {
                self.texts_read += 1;
                let id = self.config_by_name(c, protocol, p, last, cell);
                self.memo.config.put(keys.config, (protocol, p, id));
                id
            }
        };
        LastIds {
            protocol,
            model,
            bench,
            item,
            config,
            cell,
        }
    }

    /// A cell's configuration by its name: the previous cell's, else the one that followed
    /// it last time, else the lookup (a configuration is one per protocol, name and
    /// properties).
    fn config_by_name(
        &mut self,
        c: &CellInput<'_>,
        protocol: u32,
        p: Props,
        last: Option<LastIds>,
        cell: u32,
    ) -> u32 {
        let fits = |configs: &[Config], id: u32| {
            configs
                .get(id as usize)
                .is_some_and(|x| x.protocol == protocol && props(x) == p && same(&x.name, c.config))
        };
        let before = last.map(|l| l.config);
        match before {
            Some(id) if fits(&self.m.configs, id) => id,
            _ => {
                let next = before.and_then(|b| self.next_config.get(b as usize).copied());
                match next.filter(|&n| fits(&self.m.configs, n)) {
                    Some(n) => n,
                    None => {
                        let id = self.config_id(protocol, c.config, p, cell);
                        if let Some(b) = before {
                            let b = b as usize;
                            if self.next_config.len() <= b {
                                self.next_config.resize(b + 1, u32::MAX);
                            }
                            self.next_config[b] = id;
                        }
                        id
                    }
                }
            }
        }
    }

    /// Notes the blind answers a cell gives (docs/measures.md §1.4): a zero-frame
    /// prediction (`zero_blind`, the text id of its normal form; the configuration first
    /// by name wins) and a `blind` field, which `finish` checks for agreement.
    fn record_blind(
        &mut self,
        c: &CellInput<'_>,
        keys: &TextKeys,
        ids: LastIds,
        zero_blind: Option<u32>,
        cell: u32,
    ) {
        let bkey = (ids.protocol, ids.model, ids.item);
        if let Some(pid) = zero_blind {
            match self.zero_blind.get_mut(&bkey) {
                Some(entry) if *self.m.configs[entry.0 as usize].name <= *c.config => {}
                Some(entry) => *entry = (ids.config, pid),
                None => {
                    self.zero_blind.insert(bkey, (ids.config, pid));
                }
            }
        }
        let bid = match self.memo.blind.get(keys.blind) {
            Some(bid) => bid,
            None => {
                self.texts_read += u64::from(c.blind.is_some());
                let b = c.blind.and_then(norm_fast);
                let bid = b.map_or(NO_TEXT, |b| self.m.texts.intern(&b));
                self.memo.blind.put(keys.blind, bid);
                bid
            }
        };
        if bid != NO_TEXT {
            self.field_blind.push((bkey, bid, cell));
        }
    }

    /// Counts a cell into the report's `input` section.
    fn count_cell(&mut self, value: f64, frames: u64) {
        let stats = &mut self.m.stats;
        if value.is_nan() {
            stats.cells_invalid += 1;
        } else {
            stats.cells_valid += 1;
        }
        if frames == 0 {
            stats.zero_frame_cells += 1;
        }
    }

    /// Interns a cell's texts and appends it to every per-cell column.
    #[allow(clippy::too_many_arguments)]
    fn push_columns(
        &mut self,
        c: &CellInput<'_>,
        keys: &TextKeys,
        ids: LastIds,
        value: f64,
        pred_ids: Option<(u32, u32)>,
        pred_norm: Option<&str>,
        line: u64,
    ) {
        let form = gold_form(&c.gold);
        let gold = match self.memo.gold.get(keys.gold) {
            Some((f, id)) if f == form => id,
            _ => {
                self.texts_read += u64::from(form != GoldForm::None);
                let gold_text = match &c.gold {
                    Gold::None | Gold::Unusable => None,
                    Gold::One(g) => Some(std::borrow::Cow::Borrowed(*g)),
                    Gold::Many(gs) => Some(std::borrow::Cow::Owned(gs.join(" | "))),
                };
                let id = self.intern_cached(0, gold_text.as_deref());
                self.memo.gold.put(keys.gold, (form, id));
                id
            }
        };
        let (pred, pred_norm) = match pred_ids {
            Some(ids) => ids,
            None => {
                self.texts_read += u64::from(c.pred.is_some());
                let pred = self.intern_cached(3, c.pred);
                // Mostly the prediction is already normal: one id for both.
                let norm = match (pred_norm, c.pred) {
                    (Some(n), Some(p)) if *n == *p => pred,
                    _ => self.intern_text(pred_norm),
                };
                self.memo.pred.put(keys.pred, (pred, norm));
                (pred, norm)
            }
        };
        let source_tag = match self.memo.source_tag.get(keys.source_tag) {
            Some(id) => id,
            None => {
                self.texts_read += u64::from(c.source_tag.is_some());
                let id = self.intern_cached(1, c.source_tag);
                self.memo.source_tag.put(keys.source_tag, id);
                id
            }
        };
        let protocol_note = match self.memo.protocol_note.get(keys.protocol_note) {
            Some(id) => id,
            None => {
                self.texts_read += u64::from(c.protocol_note.is_some());
                let id = self.intern_cached(2, c.protocol_note);
                self.memo.protocol_note.put(keys.protocol_note, id);
                id
            }
        };
        let m = &mut self.m;
        m.cell_item.push(ids.item);
        m.cell_model.push(ids.model);
        m.cell_config.push(ids.config);
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
        let canon = self.canonical_configs();
        let bench_first = self.bench_first_cells();
        let configs_conflict = canon.iter().enumerate().any(|(i, &c)| i as u32 != c);
        let tasks_conflict = (0..self.m.n_cells()).any(|c| {
            let b = self.m.items[self.m.cell_item.get(c) as usize].benchmark as usize;
            bench_first[b].is_some_and(|f| self.cell_task[f as usize] != self.cell_task[c])
        });
        // Most inputs have no conflict; only then is every cell walked again for messages.
        if configs_conflict || tasks_conflict {
            for cell in 0..self.m.n_cells() as u32 {
                self.report_config_conflict(cell, &canon);
                self.report_task_conflict(cell, &bench_first);
            }
        }
        self.check_blind_fields();
        for first in &bench_first {
            let task = first.map_or(Task::Mcq, |f| self.cell_task[f as usize]);
            self.m.bench_task.push(task);
        }
        canon
    }

    /// For each configuration variant, the variant it folds into: itself, or, when a
    /// configuration came with several sets of properties, the one seen first.
    fn canonical_configs(&self) -> Vec<u32> {
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
        canon
    }

    /// A benchmark may not be named as the scope of every benchmark (docs/measures.md
    /// §1.5): one error, at its first cell.
    fn check_reserved_names(&mut self) {
        let Some(b) = self.m.benchmarks.get(super::ALL_SCOPE) else {
            return;
        };
        if let Some(cell) = self.bench_first_cells()[b as usize] {
            self.cell_error(
                cell,
                "benchmark",
                "\"ALL\" is the name of the scope of every benchmark (in reports, per-item rows and SQL); give this benchmark another name".into(),
            );
        }
    }

    /// Warns about each file whose recorded scores all lie in [0, 1], not all 0: fractions
    /// (a Token-F1 of 0.73) or 0/1 verdicts where points out of 100 are read, which would
    /// make every score at most one point and every δ-regression (10 points by default)
    /// impossible. A warning, not an error: such scores are valid points, only unlikely.
    fn check_score_scale(&mut self) {
        for (file, span) in self.scores.iter().enumerate() {
            let Some(line) = span.first_positive else {
                continue;
            };
            if span.max > 1.0 {
                continue;
            }
            let Some(path) = self.m.files.get(file) else {
                continue;
            };
            self.diags.warning(
                path,
                Some(line),
                Some("score"),
                format!(
                    "every score in this file lies in [0, 1] ({} scores, at most {}; the first above 0 is on this line): scores are points from 0 to 100 (docs/measures.md §1.3), so each reads as at most one point and no δ-regression (10 points by default) can show; if they are fractions of 1, multiply them by 100",
                    span.n, span.max
                ),
            );
        }
    }

    /// The first cell of each benchmark, whose task the benchmark's other cells must share.
    fn bench_first_cells(&self) -> Vec<Option<u32>> {
        let mut bench_first: Vec<Option<u32>> = vec![None; self.m.benchmarks.len()];
        for cell in 0..self.m.n_cells() as u32 {
            let b = self.m.items[self.m.cell_item.get(cell as usize) as usize].benchmark as usize;
            bench_first[b].get_or_insert(cell);
        }
        bench_first
    }

    /// One error per property in which a cell's configuration differs from the
    /// configuration's first cell, so the message names the field at fault.
    fn report_config_conflict(&mut self, cell: u32, canon: &[u32]) {
        let v = self.m.cell_config.get(cell as usize);
        let w = canon[v as usize];
        if v == w {
            return;
        }
        let (mine, theirs) = (&self.m.configs[v as usize], &self.m.configs[w as usize]);
        let at = self.where_is(self.config_first[w as usize], cell);
        let show = |p: Option<u64>| p.map_or("null".to_string(), |p| p.to_string());
        let mut found = Vec::new();
        if mine.frames != theirs.frames {
            found.push(("frames", mine.frames.to_string(), theirs.frames.to_string()));
        }
        let both = budget_is_frames(mine.frames, mine.budget)
            && budget_is_frames(theirs.frames, theirs.budget);
        if mine.budget != theirs.budget && !both {
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
                format!("configuration {name:?} has {field} {this} here but {that} at {at}"),
            );
        }
    }

    /// An error when a cell's task is not that of its benchmark's first cell.
    fn report_task_conflict(&mut self, cell: u32, bench_first: &[Option<u32>]) {
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

    /// Errors for every `blind` field that disagrees with the first one given for its
    /// (protocol, model, item); keeps only the first of each key.
    fn check_blind_fields(&mut self) {
        let mut first_blind: FxHashMap<(u32, u32, u32), (u32, u32)> = FxHashMap::default();
        for (k, t, cell) in std::mem::take(&mut self.field_blind) {
            match first_blind.get(&k) {
                Some(&(other, first)) if other != t => {
                    // The answers as compared: normalised (trimmed, upper-cased).
                    let shown =
                        |t: u32| crate::core::text::sanitize(self.m.texts.name(t)).into_owned();
                    let (this, that) = (shown(t), shown(other));
                    let msg = format!(
                        "blind answer \"{this}\" conflicts with \"{that}\" given at {} for the same model and item (answers compared trimmed and upper-cased)",
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
    }

    /// Checks the rules that span cells, renumbers ids into the order of docs/measures.md §0 and
    /// §1.6, groups the cells, and returns the matrix, or every problem found.
    pub fn finish(mut self) -> Result<(ResponseMatrix, Diagnostics), Diagnostics> {
        self.m.bench_task.clear();
        let canon = self.check_spanning_rules();
        self.check_reserved_names();
        self.check_score_scale();
        let mut m = std::mem::take(&mut self.m);
        let (proto_map, model_map, bench_map) = sort_names(&mut m);
        let item_map = sort_items(&mut m, &bench_map);
        let cfg_map = sort_configs(&mut m, &proto_map, &canon);
        let mut config_first = vec![0u32; m.configs.len()];
        for (old, &first) in self.config_first.iter().enumerate() {
            if canon[old] == old as u32 {
                config_first[cfg_map[old] as usize] = first;
            }
        }
        // The blind answers are keyed anew on one thread while the cells are renumbered
        // and grouped on the others: at 10M cells each takes about 0.1 s.
        let remap = |x: u32, map: &[u32]| map[x as usize];
        let mut diags = std::mem::take(&mut self.diags);
        let builder = &self;
        let blind = std::thread::scope(|s| {
            let blind = s.spawn(|| {
                builder.blind_answers(|(p, mo, it)| {
                    (
                        remap(p, &proto_map),
                        remap(mo, &model_map),
                        remap(it, &item_map),
                    )
                })
            });
            let (items, models, configs) =
                (&mut m.cell_item, &mut m.cell_model, &mut m.cell_config);
            std::thread::scope(|s| {
                s.spawn(|| items.remap(|x| remap(x, &item_map)));
                models.remap(|x| remap(x, &model_map));
                configs.remap(|x| remap(x, &cfg_map));
            });
            for column in m.id_columns_mut() {
                column.shrink_to_fit();
            }
            m.cell_value.shrink_to_fit();
            m.cell_confidence.shrink_to_fit();
            m.cell_line.shrink_to_fit();
            group_cells(&mut m, &mut diags);
            join(blind)
        });
        m.blind = blind;
        let pending = std::mem::take(&mut self.pending);
        if !pending.reps.is_empty() || !pending.clusters.is_empty() {
            m.replicates = replicates::finish(pending, &m, &item_map, &config_first, &mut diags);
        }
        for file in &self.per_item_csv {
            diags.rename_fields(file, &PER_ITEM_CSV_COLUMNS);
        }
        self.diags = diags;

        if self.diags.has_errors() {
            Err(self.diags)
        } else {
            Ok((m, self.diags))
        }
    }

    /// The blind answer of each (protocol, model, item), keys renumbered by `remap`, sorted
    /// by key: a zero-frame prediction wins over a `blind` field, and of two `blind` fields
    /// the later.
    fn blind_answers(
        &self,
        remap: impl Fn((u32, u32, u32)) -> (u32, u32, u32),
    ) -> Vec<((u32, u32, u32), u32)> {
        let mut blind: Vec<((u32, u32, u32), u32)> =
            Vec::with_capacity(self.field_blind.len() + self.zero_blind.len());
        blind.extend(
            self.field_blind
                .iter()
                .map(|&(k, text, _)| (remap(k), text)),
        );
        blind.extend(
            self.zero_blind
                .iter()
                .map(|(&k, &(_, text))| (remap(k), text)),
        );
        // Stable: of the answers to one key the last given stays, as in a map.
        blind.sort_by_key(|&(k, _)| k);
        blind.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 = later.1;
            }
            same
        });
        blind
    }
}

/// The result of a scoped thread, its panic passed on.
fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// Renumbers protocols, models and benchmarks into code-point order (the benchmarks' tasks
/// with them); returns the three maps from old id to new id.
fn sort_names(m: &mut ResponseMatrix) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let proto_map = m.protocols.sort();
    let model_map = m.models.sort();
    let bench_map = m.benchmarks.sort();
    let mut bench_task = vec![Task::Mcq; m.bench_task.len()];
    for (old, &t) in m.bench_task.iter().enumerate() {
        bench_task[bench_map[old] as usize] = t;
    }
    m.bench_task = bench_task;
    (proto_map, model_map, bench_map)
}

/// Renumbers items into (benchmark, item_id) order and rebuilds the item index and each
/// benchmark's item range; returns the map from old item id to new.
fn sort_items(m: &mut ResponseMatrix, bench_map: &[u32]) -> Vec<u32> {
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
    item_map
}

/// Renumbers configurations into (protocol, name) order. Conflicting variants are dropped
/// (the input is rejected anyway) and map to the variant they fold into, so their cells
/// still point at a configuration. Returns the map from old configuration id to new.
fn sort_configs(m: &mut ResponseMatrix, proto_map: &[u32], canon: &[u32]) -> Vec<u32> {
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
    cfg_map
}

/// Groups the cells by (protocol, model), each group sorted by (item, config), so grids
/// are built by walking runs; two cells with the same key, now side by side, are reported
/// as duplicates.
fn group_cells(m: &mut ResponseMatrix, diags: &mut Diagnostics) {
    let n_models = m.models.len();
    let n_groups = m.protocols.len() * n_models;
    let n_cells = m.cell_item.len();
    // A counting sort on the group, its two passes a chunk of cells at a time: offsets
    // first, then each cell into its slot.
    let config_protocol: Vec<u32> = m.configs.iter().map(|c| c.protocol).collect();
    let groups_at = |at: usize, out: &mut [usize], ids: &mut [u32]| {
        m.cell_model.copy_to(at, ids);
        for (g, &mo) in out.iter_mut().zip(ids.iter()) {
            *g = mo as usize;
        }
        if m.protocols.len() > 1 {
            m.cell_config.copy_to(at, ids);
            for (g, &c) in out.iter_mut().zip(ids.iter()) {
                *g += config_protocol[c as usize] as usize * n_models;
            }
        }
    };
    let (mut groups_buf, mut ids_buf) = ([0usize; 1024], [0u32; 1024]);
    let mut counts = vec![0usize; n_groups + 1];
    for at in (0..n_cells).step_by(1024) {
        let n = 1024.min(n_cells - at);
        groups_at(at, &mut groups_buf[..n], &mut ids_buf[..n]);
        for &g in &groups_buf[..n] {
            counts[g + 1] += 1;
        }
    }
    for g in 0..n_groups {
        counts[g + 1] += counts[g];
    }
    let mut next = counts.clone();
    let mut order = vec![0u32; n_cells];
    for at in (0..n_cells).step_by(1024) {
        let n = 1024.min(n_cells - at);
        groups_at(at, &mut groups_buf[..n], &mut ids_buf[..n]);
        for (k, &g) in groups_buf[..n].iter().enumerate() {
            order[next[g]] = (at + k) as u32;
            next[g] += 1;
        }
    }
    // Each group is sorted and checked on its own; the groups are split between two threads
    // by cells, and the duplicates reported in group order after.
    let sort_groups = |groups: Vec<&mut [u32]>| {
        let mut scratch = GroupScratch::default();
        let mut dups: Vec<(u32, u32)> = Vec::new();
        for slice in groups {
            sort_group(slice, &m.cell_item, &m.cell_config, &mut scratch, &mut dups);
        }
        dups
    };
    let mut groups: Vec<&mut [u32]> = Vec::with_capacity(n_groups);
    let mut rest: &mut [u32] = &mut order;
    for g in 0..n_groups {
        let (head, tail) = rest.split_at_mut(counts[g + 1] - counts[g]);
        groups.push(head);
        rest = tail;
    }
    let half = groups
        .iter()
        .scan(0, |cells, g| {
            *cells += g.len();
            Some(*cells)
        })
        .position(|cells| 2 * cells >= m.cell_item.len())
        .map_or(groups.len(), |i| i + 1);
    let later = groups.split_off(half);
    let dups = if later.is_empty() || m.cell_item.len() < 1 << 16 {
        let mut d = sort_groups(groups);
        d.extend(sort_groups(later));
        d
    } else {
        std::thread::scope(|s| {
            let second = s.spawn(|| sort_groups(later));
            let mut d = sort_groups(groups);
            d.extend(
                second
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
            d
        })
    };
    for (a, b) in dups {
        duplicate_error(m, diags, a, b);
    }
    m.order = order;
    m.group_start = counts;
}

/// The error for cell `b`, which repeats the key of the earlier cell `a`.
fn duplicate_error(m: &ResponseMatrix, diags: &mut Diagnostics, a: u32, b: u32) {
    let b = b as usize;
    let file = m.files[m.cell_file.get(b) as usize].clone();
    let item = &m.items[m.cell_item.get(b) as usize];
    let config = &m.configs[m.cell_config.get(b) as usize];
    diags.error(
        &file,
        Some(u64::from(m.cell_line.get(b))),
        None,
        format!(
            "duplicate cell: model {:?}, benchmark {:?}, item {:?}, config {:?}, protocol {:?} already given at {}",
            m.models.name(m.cell_model.get(b)),
            m.benchmarks.name(item.benchmark),
            item.id,
            config.name,
            m.protocols.name(config.protocol),
            m.cell_location(a)
        ),
    );
}

/// Buffers [`sort_group`] reuses from group to group.
#[derive(Default)]
struct GroupScratch {
    /// One item's cells and their configurations, in input order.
    run_cells: Vec<u32>,
    run_configs: Vec<u32>,
    /// The configurations of the last run sorted, in input order, and the order that sorts
    /// them: the next item mostly comes with the same configurations in the same order.
    pattern: Vec<u32>,
    perm: Vec<u32>,
    /// Each run of one item: (item, first position, length).
    runs: Vec<(u32, u32, u32)>,
    /// The configuration of each position of the group, once its run is sorted.
    configs: Vec<u32>,
    cells: Vec<u32>,
}

/// Sorts one group's cells (input order) by (item, config), and appends its duplicate keys
/// (earlier cell, later cell) to `dups` in sorted order. Cells mostly come item by item: each
/// run of one item is sorted by configuration where it lies, then the runs are put in item
/// order. An item met in two runs takes the general sort instead.
fn sort_group(
    cells: &mut [u32],
    item: &Ids,
    config: &Ids,
    s: &mut GroupScratch,
    dups: &mut Vec<(u32, u32)>,
) {
    s.runs.clear();
    s.configs.clear();
    let mut at = 0;
    while at < cells.len() {
        let it = item.get(cells[at] as usize);
        s.run_cells.clear();
        s.run_configs.clear();
        for &c in cells[at..]
            .iter()
            .take_while(|&&c| item.get(c as usize) == it)
        {
            s.run_cells.push(c);
            s.run_configs.push(config.get(c as usize));
        }
        if s.run_configs != s.pattern {
            s.pattern.clone_from(&s.run_configs);
            s.perm.clear();
            s.perm.extend(0..s.pattern.len() as u32);
            // Stable: of two cells with one key the earlier stays first.
            s.perm.sort_by_key(|&j| s.pattern[j as usize]);
        }
        for (slot, &j) in cells[at..].iter_mut().zip(&s.perm) {
            *slot = s.run_cells[j as usize];
            s.configs.push(s.run_configs[j as usize]);
        }
        let len = s.run_cells.len();
        s.runs.push((it, at as u32, len as u32));
        at += len;
    }
    let in_order = s.runs.is_sorted_by_key(|r| r.0);
    if !in_order {
        s.runs.sort_unstable_by_key(|r| r.0);
        if s.runs.windows(2).any(|w| w[0].0 == w[1].0) {
            sort_by_item_then_config(cells, item, config, &mut s.cells);
            let key = |c: u32| (item.get(c as usize), config.get(c as usize));
            dups.extend(
                cells
                    .windows(2)
                    .filter(|w| key(w[0]) == key(w[1]))
                    .map(|w| (w[0], w[1])),
            );
            return;
        }
    }
    // Each item is one run, so a key repeats only within a run.
    for &(_, from, len) in &s.runs {
        let (from, to) = (from as usize, (from + len) as usize);
        dups.extend(
            (from + 1..to)
                .filter(|&j| s.configs[j] == s.configs[j - 1])
                .map(|j| (cells[j - 1], cells[j])),
        );
    }
    if !in_order {
        s.cells.clear();
        s.cells.extend(
            s.runs
                .iter()
                .flat_map(|&(_, from, len)| &cells[from as usize..(from + len) as usize]),
        );
        cells.copy_from_slice(&s.cells);
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
        // Stable: of two cells with one key (a duplicate) the earlier stays first.
        scratch[w[0]..w[1]].sort_by_key(|&c| config.get(c as usize));
    }
    cells.copy_from_slice(scratch);
}

/// Where a joined part's ids land in the builder it is joined to, by the part's id.
struct PartIds {
    protocols: Vec<u32>,
    models: Vec<u32>,
    items: Vec<u32>,
    configs: Vec<u32>,
    texts: Vec<u32>,
}

impl PartIds {
    /// A part's text id here; "no text" stays "no text", as it has no entry in the map.
    fn text(&self, t: u32) -> u32 {
        if t == NO_TEXT {
            NO_TEXT
        } else {
            self.texts[t as usize]
        }
    }

    /// A (protocol, model, item) blind key of the part, in the builder's ids.
    fn key(&self, (pp, mo, it): (u32, u32, u32)) -> (u32, u32, u32) {
        (
            self.protocols[pp as usize],
            self.models[mo as usize],
            self.items[it as usize],
        )
    }
}

/// Appends a part's cells after the `base` cells of `m`, through the part's id map, with
/// their frame indices and counts.
fn append_cells(m: &mut ResponseMatrix, p: &ResponseMatrix, ids: &PartIds, base: u32) {
    let pool = m.frame_pool.len() as u32;
    m.frame_spans.extend(
        p.frame_spans
            .iter()
            .map(|&(c, s, l)| (c + base, s + pool, l)),
    );
    m.frame_pool.extend_from_slice(&p.frame_pool);
    m.cell_item
        .extend_mapped(&p.cell_item, |i| ids.items[i as usize]);
    m.cell_model
        .extend_mapped(&p.cell_model, |i| ids.models[i as usize]);
    m.cell_config
        .extend_mapped(&p.cell_config, |i| ids.configs[i as usize]);
    m.cell_value.extend_from(&p.cell_value);
    m.cell_confidence.extend_from(&p.cell_confidence);
    for (dst, src) in [
        (&mut m.cell_pred, &p.cell_pred),
        (&mut m.cell_pred_norm, &p.cell_pred_norm),
        (&mut m.cell_gold, &p.cell_gold),
        (&mut m.cell_source_tag, &p.cell_source_tag),
        (&mut m.cell_protocol_note, &p.cell_protocol_note),
    ] {
        dst.extend_mapped(src, |t| ids.text(t));
    }
    m.cell_file.extend_mapped(&p.cell_file, |f| f);
    m.cell_line.extend_from(&p.cell_line);
    m.stats.records += p.stats.records;
    m.stats.cells_valid += p.stats.cells_valid;
    m.stats.cells_invalid += p.stats.cells_invalid;
    m.stats.zero_frame_cells += p.stats.zero_frame_cells;
}

/// A multiple-choice answer's value: its verdict as given, else whether the prediction's
/// normal form (`pred_norm`) is the gold's; NaN without either.
pub(crate) fn mcq_value(correct: Option<bool>, pred_norm: Option<&str>, gold: Option<&str>) -> f64 {
    match (correct, gold) {
        (Some(b), _) => f64::from(u8::from(b)),
        (None, Some(g)) => {
            let right = matches!((pred_norm, norm_fast(g)), (Some(p), Some(g)) if *p == *g);
            f64::from(u8::from(right))
        }
        (None, None) => f64::NAN,
    }
}

/// The value of a cell (docs/measures.md §1.3): its verdict or score as given, else one
/// computed from its prediction and gold answer; NaN for an invalid cell.
fn cell_value(c: &CellInput<'_>, pred_norm: Option<&str>) -> f64 {
    match c.task {
        Task::Mcq => mcq_value(
            c.correct,
            pred_norm,
            match &c.gold {
                Gold::One(g) => Some(*g),
                _ => None,
            },
        ),
        Task::Open => match (c.score, &c.gold) {
            (Some(s), _) => s,
            (None, Gold::One(g)) => token_f1_score(c.pred.unwrap_or(""), &[g]),
            (None, Gold::Many(gs)) => token_f1_score(c.pred.unwrap_or(""), gs),
            (None, Gold::None | Gold::Unusable) => f64::NAN,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A multiple-choice cell with a verdict, the fields a test varies given.
    fn cell<'a>(
        protocol: &'a str,
        model: &'a str,
        benchmark: &'a str,
        item_id: &'a str,
        config: &'a str,
        frames: u64,
        correct: bool,
    ) -> CellInput<'a> {
        CellInput {
            model,
            item_id,
            benchmark,
            config,
            protocol,
            frames,
            budget: frames as f64,
            pixels: None,
            task: Task::Mcq,
            pred: Some(if correct { "A" } else { "B" }),
            gold: Gold::One("A"),
            correct: None,
            score: None,
            confidence: None,
            blind: None,
            frame_idx: (frames > 0).then(|| (0..frames).collect()),
            source_tag: None,
            protocol_note: None,
            replicate: None,
            nuisance: None,
            order: None,
            cluster: None,
        }
    }

    /// Cells in an order that exercises the previous-cell shortcut and its limits: runs of
    /// a shared model and item, the same item id in another benchmark, the same
    /// configuration name under another protocol, a zero-frame cell.
    fn cells() -> Vec<CellInput<'static>> {
        vec![
            cell("uniform", "zeta", "mvbench", "q2", "8f", 8, true),
            cell("uniform", "zeta", "mvbench", "q2", "16f", 16, false),
            cell("uniform", "zeta", "mvbench", "q1", "8f", 8, false),
            cell("uniform", "zeta", "mvbench", "q1", "16f", 16, true),
            cell("uniform", "zeta", "egoschema", "q1", "16f", 16, true),
            cell("uniform", "alpha", "egoschema", "q1", "16f", 16, true),
            cell("uniform", "alpha", "egoschema", "q1", "0f", 0, false),
            cell("keyframe", "alpha", "egoschema", "q1", "16f", 16, false),
            cell("keyframe", "zeta", "mvbench", "q2", "16f", 16, true),
        ]
    }

    fn builder() -> MatrixBuilder {
        let mut b = MatrixBuilder::new();
        b.add_file(Path::new("cells.jsonl"));
        b
    }

    fn build(cells: Vec<CellInput<'_>>) -> ResponseMatrix {
        let mut b = builder();
        for (i, c) in cells.into_iter().enumerate() {
            b.push(&c, i as u64 + 1);
        }
        b.finish().expect("no errors").0
    }

    #[test]
    fn finish_gives_sorted_ids_and_grouped_cells() {
        let m = build(cells());
        assert_eq!(
            m.protocols.names().collect::<Vec<_>>(),
            ["keyframe", "uniform"]
        );
        assert_eq!(m.models.names().collect::<Vec<_>>(), ["alpha", "zeta"]);
        assert_eq!(
            m.benchmarks.names().collect::<Vec<_>>(),
            ["egoschema", "mvbench"]
        );
        let items: Vec<(u32, &str)> = m.items.iter().map(|i| (i.benchmark, &*i.id)).collect();
        assert_eq!(items, [(0, "q1"), (1, "q1"), (1, "q2")]);
        assert_eq!(m.bench_items, [0..1, 1..3]);
        let configs: Vec<(u32, &str)> = m.configs.iter().map(|c| (c.protocol, &*c.name)).collect();
        assert_eq!(configs, [(0, "16f"), (1, "0f"), (1, "16f"), (1, "8f")]);
        // Columns stay in input order, with the renumbered ids.
        assert_eq!(
            m.cell_model.iter().collect::<Vec<_>>(),
            [1, 1, 1, 1, 1, 0, 0, 0, 1]
        );
        assert_eq!(
            m.cell_item.iter().collect::<Vec<_>>(),
            [2, 2, 1, 1, 0, 0, 0, 0, 2]
        );
        assert_eq!(
            m.cell_config.iter().collect::<Vec<_>>(),
            [3, 2, 3, 2, 2, 2, 1, 0, 0]
        );
        assert_eq!(
            m.cell_value.iter().collect::<Vec<_>>(),
            [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0]
        );
        assert_eq!(
            m.cell_line.iter().collect::<Vec<_>>(),
            (1..=9).collect::<Vec<_>>()
        );
        // Groups by (protocol, model), each by (item, config).
        assert_eq!(m.group(0, 0), [7]);
        assert_eq!(m.group(0, 1), [8]);
        assert_eq!(m.group(1, 0), [6, 5]);
        assert_eq!(m.group(1, 1), [4, 3, 2, 1, 0]);
        assert_eq!(m.frame_idx(1).map(<[u64]>::len), Some(16));
        assert_eq!(m.frame_idx(6), None);
        // The zero-frame cell's prediction is alpha's blind answer on egoschema q1.
        let blind = m.blind(1, 0, 0).and_then(|t| m.text(t));
        assert_eq!(blind, Some("B"));
        assert_eq!((m.stats.cells_valid, m.stats.zero_frame_cells), (9, 1));
    }

    #[test]
    fn finish_reports_a_duplicate_cell() {
        let mut cells = cells();
        cells.push(cell("uniform", "zeta", "mvbench", "q1", "8f", 8, true));
        let mut b = builder();
        for (i, c) in cells.into_iter().enumerate() {
            b.push(&c, i as u64 + 1);
        }
        let diags = b.finish().expect_err("a duplicate");
        assert_eq!(diags.error_count(), 1);
        let msg = diags.sorted()[0].to_string();
        assert!(msg.contains("duplicate cell"), "{msg}");
        assert!(msg.contains("cells.jsonl:3"), "{msg}");
    }

    #[test]
    fn a_benchmark_named_all_is_refused_once_at_its_first_cell() {
        let mut cells = cells();
        cells.push(cell("uniform", "zeta", "ALL", "q1", "8f", 8, true));
        cells.push(cell("uniform", "zeta", "ALL", "q2", "8f", 8, true));
        cells.push(cell("uniform", "zeta", "all", "q1", "8f", 8, true));
        let n = cells.len();
        let mut b = builder();
        for (i, c) in cells.into_iter().enumerate() {
            b.push(&c, i as u64 + 1);
        }
        let diags = b.finish().expect_err("a reserved name");
        assert_eq!(diags.error_count(), 1);
        let msg = diags.sorted()[0].to_string();
        assert!(
            msg.contains(&format!("cells.jsonl:{}", n - 2))
                && msg.contains("field `benchmark`")
                && msg.contains("\"ALL\""),
            "{msg}"
        );
    }

    #[test]
    fn duplicates_are_found_in_groups_sorted_on_two_threads() {
        // Four models of 20 000 cells (two threads take two models each), items given in
        // descending order (so each group needs sorting), a repeated cell in every model.
        let models = ["m0", "m1", "m2", "m3"];
        let items: Vec<String> = (0..10_000).map(|i| format!("q{i:05}")).collect();
        let mut b = builder();
        let mut line = 0;
        for (k, model) in models.iter().enumerate() {
            for item in items.iter().rev() {
                for (config, frames) in [("8f", 8), ("16f", 16)] {
                    line += 1;
                    b.push(&cell("u", model, "b", item, config, frames, true), line);
                }
            }
            line += 1;
            b.push(&cell("u", model, "b", &items[k * 3], "8f", 8, true), line);
        }
        let e = b.finish().expect_err("duplicates");
        let msgs: Vec<String> = e.sorted().iter().map(|d| d.to_string()).collect();
        assert_eq!(msgs.len(), 4, "{msgs:#?}");
        for (msg, k) in msgs.iter().zip(0..) {
            assert!(msg.contains(&format!("model \"m{k}\"")), "{msg}");
            assert!(msg.contains(&format!("item \"q{:05}\"", k * 3)), "{msg}");
        }
    }

    proptest::proptest! {
        /// A group sorted run by run equals a stable sort by (item, config), and its
        /// duplicates are the neighbours with one key, in that order: items in input order
        /// or not, split into several runs or not, configurations in the same order item
        /// after item or not, repeated keys.
        #[test]
        fn a_group_sorted_by_runs_is_sorted_by_item_then_config(
            cells in proptest::collection::vec((0u32..6, 0u32..5), 0..60),
            repeat in 0usize..4,
        ) {
            // Mostly each item's configurations in one order, as a harness writes them.
            let mut keys: Vec<(u32, u32)> = Vec::new();
            for _ in 0..repeat {
                for it in [4u32, 1, 3] {
                    keys.extend([(it, 3), (it, 0), (it, 2)]);
                }
            }
            keys.extend(cells);
            let item: Ids = keys.iter().map(|k| k.0).collect();
            let config: Ids = keys.iter().map(|k| k.1).collect();
            let mut want: Vec<u32> = (0..keys.len() as u32).collect();
            want.sort_by_key(|&c| keys[c as usize]);
            let want_dups: Vec<(u32, u32)> = want
                .windows(2)
                .filter(|w| keys[w[0] as usize] == keys[w[1] as usize])
                .map(|w| (w[0], w[1]))
                .collect();
            let mut got: Vec<u32> = (0..keys.len() as u32).collect();
            let mut dups = Vec::new();
            sort_group(&mut got, &item, &config, &mut GroupScratch::default(), &mut dups);
            let key_of = |v: &[u32]| v.iter().map(|&c| keys[c as usize]).collect::<Vec<_>>();
            proptest::prop_assert_eq!(key_of(&got), key_of(&want));
            proptest::prop_assert_eq!(dups.len(), want_dups.len());
            // Each duplicate names an earlier cell, then a later one of the same key.
            for &(a, b) in &dups {
                proptest::prop_assert!(a < b && keys[a as usize] == keys[b as usize]);
            }
            // When no item is split into two runs, the order of equal keys is input order.
            let split = (1..keys.len()).any(|i| {
                keys[i].0 != keys[i - 1].0 && keys[..i - 1].iter().any(|k| k.0 == keys[i].0)
            });
            if !split {
                proptest::prop_assert_eq!(&got, &want);
                proptest::prop_assert_eq!(&dups, &want_dups);
            }
        }
    }

    #[test]
    fn join_of_parts_equals_one_builder() {
        let one = build(cells());
        let mut joined = builder();
        let mut part = joined.fork();
        let all = cells();
        let (first, second) = all.split_at(4);
        for (i, c) in first.iter().enumerate() {
            part.push(c, i as u64 + 1);
        }
        joined.join(&mut part);
        // The part is emptied and reused, as the parallel loader reuses it.
        assert_eq!(part.matrix_len(), 0);
        for (i, c) in second.iter().enumerate() {
            part.push(c, i as u64 + 5);
        }
        joined.join(&mut part);
        let two = joined.finish().expect("no errors").0;
        assert_same(&one, &two);
    }

    /// A file's scores read in parts are judged as a whole: the warning about a [0, 1]
    /// scale names the first score above 0 of the file, whichever part holds it, and a
    /// score above 1 in a later part clears it.
    #[test]
    fn the_score_scale_of_a_file_read_in_parts() {
        let open = |item: &'static str, score: f64| CellInput {
            model: "M",
            item_id: item,
            benchmark: "o",
            config: "8f",
            protocol: "main",
            frames: 8,
            budget: 8.0,
            pixels: None,
            task: Task::Open,
            pred: None,
            gold: Gold::None,
            correct: None,
            score: Some(score),
            confidence: None,
            blind: None,
            frame_idx: None,
            source_tag: None,
            protocol_note: None,
            replicate: None,
            nuisance: None,
            order: None,
            cluster: None,
        };
        let read = |parts: &[&[(&'static str, f64)]]| {
            let mut b = MatrixBuilder::new();
            b.add_file(Path::new("t.jsonl"));
            let mut part = b.fork();
            let mut line = 0;
            for cells in parts {
                for &(item, score) in *cells {
                    line += 1;
                    part.push(&open(item, score), line);
                }
                b.join(&mut part);
            }
            let (_, d) = b.finish().expect("valid");
            d.sorted()
                .into_iter()
                .map(|d| (d.line, d.field.clone()))
                .collect::<Vec<_>>()
        };
        let warned = read(&[&[("a", 0.0), ("b", 0.0)], &[("c", 0.4), ("d", 0.9)]]);
        assert_eq!(warned, [(Some(3), Some("score".to_string()))]);
        assert!(read(&[&[("a", 0.4)], &[("b", 60.0)]]).is_empty());
    }

    #[test]
    fn previous_cell_shortcut_gives_the_ids_of_hashing() {
        let mut shortcut = builder();
        let mut hashed = builder();
        for (i, c) in cells().into_iter().enumerate() {
            shortcut.push(&c, i as u64 + 1);
            // Without a previous cell every id is looked up by hashing.
            hashed.last = None;
            hashed.push(&c, i as u64 + 1);
        }
        assert!(shortcut.last.is_some());
        for (a, b) in shortcut.m.id_columns().iter().zip(hashed.m.id_columns()) {
            assert_eq!(*a, b);
        }
        // The same item id in two benchmarks is two items, the same configuration name
        // under two protocols two configurations.
        assert_eq!(shortcut.m.items.len(), 3);
        assert_eq!(shortcut.m.configs.len(), 4);
        assert_same(
            &shortcut.finish().expect("no errors").0,
            &hashed.finish().expect("no errors").0,
        );
    }

    /// Cells drawn at random from few names (configurations walked in a usual order with
    /// departures, the same name with other frames, texts whose cache slots collide) get
    /// the ids and texts that looking every name up gives.
    #[test]
    fn the_caches_give_the_ids_of_hashing_on_random_cells() {
        let mut rng = crate::core::analysis::bootstrap::SplitMix64::new(5);
        let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
        let configs = ["0f", "8f", "16f", "32f", "64f"];
        let texts: Vec<String> = (0..40)
            .map(|i| match i % 4 {
                0 => char::from(b'A' + (i / 4) as u8).to_string(),
                1 => format!("x{i}x"),
                2 => "long answer ".repeat(1 + i / 8),
                _ => String::new(),
            })
            .collect();
        let mut cells = Vec::new();
        let mut at = 0;
        for _ in 0..3000 {
            // Mostly the next configuration of the usual order, sometimes any.
            at = if pick(5) == 0 {
                pick(configs.len())
            } else {
                (at + 1) % configs.len()
            };
            let frames = if pick(50) == 0 { 99 } else { at as u64 * 8 };
            let text = |k: usize| Some(texts[k].as_str()).filter(|t| !t.is_empty());
            cells.push(CellInput {
                pred: text(pick(texts.len())),
                gold: text(pick(texts.len())).map_or(Gold::None, Gold::One),
                source_tag: text(pick(texts.len())),
                protocol_note: text(pick(texts.len())),
                replicate: None,
                nuisance: None,
                order: None,
                cluster: None,
                ..cell(
                    ["main", "other"][usize::from(pick(20) == 0)],
                    ["m1", "m2"][pick(2)],
                    "b",
                    ["q1", "q2", "q3"][pick(3)],
                    configs[at],
                    frames,
                    false,
                )
            });
        }
        let mut cached = builder();
        let mut hashed = builder();
        for (i, c) in cells.into_iter().enumerate() {
            cached.push(&c, i as u64 + 1);
            hashed.last = None;
            hashed.next_config.clear();
            hashed.recent_texts = [[u32::MAX; 16]; 4];
            hashed.push(&c, i as u64 + 1);
        }
        for (a, b) in cached.m.id_columns().iter().zip(hashed.m.id_columns()) {
            assert_eq!(*a, b);
        }
        let names = |b: &MatrixBuilder| b.m.texts.names().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(names(&cached), names(&hashed));
        assert_eq!(cached.m.configs.len(), hashed.m.configs.len());
        assert!(
            cached.m.configs.len() > 10,
            "both protocols, both frames of a name"
        );
    }

    /// Cells pushed with the keys of their texts give what reading every text gives: one
    /// key's text in cells of both tasks, with and without a verdict or a score, as a
    /// zero-frame prediction and a blind answer, a key's list of references usable on open
    /// cells and not on multiple-choice ones, the same item key in two benchmarks, the same
    /// configuration key with other frames (`odd`, an error at `finish`), texts without
    /// keys among keyed ones, long texts (looked up by key) among short ones (read), names
    /// renamed as a compared run's, and a part reused after a join (its keys met again).
    #[test]
    fn keys_give_what_reading_every_text_gives_on_random_cells() {
        let pad = |s: &str| format!("{s} {}", "w".repeat(LONG));
        let long = "a long answer with Words ".repeat(8);
        let texts: Vec<&str> = vec!["A", "b", "C ", "", "x y", &long, "a long answer"];
        let golds: Vec<Gold<'_>> = vec![
            Gold::One("A"),
            Gold::One("b"),
            Gold::One(&long),
            Gold::Many(vec!["x y", "a long answer"]),
            Gold::Many(vec!["x y", &long]),
            Gold::Many(vec!["A"]),
            Gold::None,
        ];
        let models = [pad("m1"), "m2".into(), pad("m3")];
        let items: Vec<String> = (0..60)
            .map(|i| {
                if i % 2 == 0 {
                    format!("q{i}")
                } else {
                    pad(&format!("q{i}"))
                }
            })
            .collect();
        let eight = pad("8f");
        let configs = [("0f", 0), (eight.as_str(), 8), ("16f", 16)];
        let (protocol, open_bench, tag, note) = (pad("main"), pad("open"), pad("tag"), pad("n2"));
        let note_text = note.as_str();
        for (renamed, odd) in [(false, false), (true, false), (false, true)] {
            let mut rng = crate::core::analysis::bootstrap::SplitMix64::new(17);
            let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
            // Each text's key, or (one cell in ten) none.
            let mut cells = Vec::new();
            for (model, item, config, open) in (0..models.len()).flat_map(|m| {
                (0..items.len())
                    .flat_map(move |i| (0..configs.len()).map(move |c| (m, i, c)))
                    .flat_map(|(m, i, c)| [(m, i, c, false), (m, i, c, true)])
            }) {
                let task = if open { Task::Open } else { Task::Mcq };
                // The blind answer of a model on an item: its zero-frame prediction, and
                // the `blind` field of some of its cells (the two agree).
                let blind = (model * 7 + item * 3 + usize::from(open)) % texts.len();
                let pred = if config == 0 {
                    blind
                } else {
                    pick(texts.len())
                };
                let blind = if pick(3) == 0 { blind } else { texts.len() };
                let (gold, note) = (pick(golds.len()), pick(3));
                let keyed = pick(10) != 0;
                let key = |i: usize, base: u64| if keyed { base + i as u64 } else { 0 };
                let (name, mut frames) = configs[config];
                if odd && pick(100) == 0 {
                    frames = 99;
                }
                let c = CellInput {
                    task,
                    pred: Some(texts[pred]).filter(|t| !t.is_empty()),
                    // As the checks take a list: unusable on a multiple-choice cell.
                    gold: match &golds[gold] {
                        Gold::Many(_) if !open => Gold::Unusable,
                        g => g.clone(),
                    },
                    correct: (task == Task::Mcq && pick(4) == 0).then(|| pick(2) == 0),
                    score: (task == Task::Open && pick(4) == 0).then_some(50.0),
                    blind: texts.get(blind).copied(),
                    source_tag: Some(&tag),
                    protocol_note: ["n1", note_text].get(note).copied(),
                    ..cell(
                        &protocol,
                        &models[model],
                        if open { &open_bench } else { "mcq" },
                        &items[item],
                        name,
                        frames,
                        false,
                    )
                };
                let keys = TextKeys {
                    protocol: key(0, 10),
                    model: key(model, 20),
                    benchmark: key(usize::from(open), 30),
                    item_id: key(item, 100),
                    config: key(config, 200),
                    pred: if c.pred.is_some() { key(pred, 300) } else { 0 },
                    gold: if golds[gold] != Gold::None {
                        key(gold, 400)
                    } else {
                        0
                    },
                    blind: if c.blind.is_some() {
                        key(blind, 500)
                    } else {
                        0
                    },
                    source_tag: key(0, 600),
                    protocol_note: if c.protocol_note.is_some() {
                        key(note, 700)
                    } else {
                        0
                    },
                };
                cells.push((c, keys));
            }
            // In a random order.
            for i in (1..cells.len()).rev() {
                cells.swap(i, pick(i + 1));
            }
            let mut read = builder();
            let mut keyed = builder();
            if renamed {
                let models: FxHashMap<String, Box<str>> = [(model_key(&models[0]), "M-one".into())]
                    .into_iter()
                    .collect();
                for b in [&mut read, &mut keyed] {
                    b.protocol_as = Some((protocol.as_str().into(), "second".into()));
                    b.model_as = Some(Arc::new(models.clone()));
                }
            }
            let mut part = keyed.fork();
            for (i, (c, keys)) in cells.iter().enumerate() {
                read.push(c, i as u64 + 1);
                part.push_keyed(c, keys, i as u64 + 1);
                if i % 300 == 299 || i + 1 == cells.len() {
                    keyed.join(&mut part);
                }
            }
            // Long texts are read once a key, short ones once a cell.
            assert!(
                keyed.texts_read < read.texts_read * 2 / 3,
                "{} of {}",
                keyed.texts_read,
                read.texts_read
            );
            for (a, b) in read.m.id_columns().iter().zip(keyed.m.id_columns()) {
                assert_eq!(*a, b);
            }
            assert_eq!(read.m.cell_value, keyed.m.cell_value);
            let names =
                |b: &MatrixBuilder| b.m.texts.names().map(str::to_owned).collect::<Vec<_>>();
            assert_eq!(names(&read), names(&keyed));
            assert_eq!(read.zero_blind, keyed.zero_blind);
            assert_eq!(read.field_blind, keyed.field_blind);
            let messages = |d: &Diagnostics| {
                d.sorted()
                    .iter()
                    .map(|x| x.message.clone())
                    .collect::<Vec<_>>()
            };
            match (read.finish(), keyed.finish()) {
                (Ok((a, da)), Ok((b, db))) => {
                    assert!(!odd);
                    assert_same(&a, &b);
                    assert_eq!(messages(&da), messages(&db));
                    assert_eq!(a.contradictions(), b.contradictions());
                    assert!(!a.contradictions().is_empty(), "some verdicts contradict");
                }
                (Err(da), Err(db)) => {
                    assert!(
                        odd,
                        "{} errors, the first {:?}",
                        da.error_count(),
                        messages(&da).first()
                    );
                    assert_eq!(messages(&da), messages(&db));
                }
                _ => panic!("one read failed, the other did not"),
            }
        }
    }

    /// Two matrices hold the same names, items, configurations, cells, groups and blind
    /// answers.
    fn assert_same(a: &ResponseMatrix, b: &ResponseMatrix) {
        let names = |i: &Interner| i.names().map(str::to_owned).collect::<Vec<_>>();
        for (x, y) in [
            (&a.protocols, &b.protocols),
            (&a.models, &b.models),
            (&a.benchmarks, &b.benchmarks),
            (&a.texts, &b.texts),
        ] {
            assert_eq!(names(x), names(y));
        }
        let items = |m: &ResponseMatrix| {
            m.items
                .iter()
                .map(|i| (i.benchmark, i.id.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(items(a), items(b));
        assert_eq!(a.bench_items, b.bench_items);
        assert_eq!(a.bench_task, b.bench_task);
        let configs = |m: &ResponseMatrix| {
            m.configs
                .iter()
                .map(|c| (c.protocol, c.name.clone(), c.frames, c.pixels))
                .collect::<Vec<_>>()
        };
        assert_eq!(configs(a), configs(b));
        for (x, y) in a.id_columns().iter().zip(b.id_columns()) {
            assert_eq!(*x, y);
        }
        assert_eq!(a.cell_value, b.cell_value);
        assert_eq!(a.cell_line, b.cell_line);
        assert_eq!(a.frame_spans, b.frame_spans);
        assert_eq!(a.frame_pool, b.frame_pool);
        assert_eq!(a.order, b.order);
        assert_eq!(a.group_start, b.group_start);
        let blind = |m: &ResponseMatrix| m.blind.clone();
        assert_eq!(blind(a), blind(b));
        assert_eq!(
            (
                a.stats.cells_valid,
                a.stats.cells_invalid,
                a.stats.zero_frame_cells
            ),
            (
                b.stats.cells_valid,
                b.stats.cells_invalid,
                b.stats.zero_frame_cells
            )
        );
    }
}
