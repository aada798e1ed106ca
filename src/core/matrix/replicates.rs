//! Replicate cells (docs/measures.md §16.1): a cell measured again under a nuisance (a re-run,
//! a shifted sampling grid), kept apart from the canonical cells so that no measure of §1-§15
//! ever sees one. The builder collects them as read; `finish` checks the rules that span
//! them and keys each to its canonical cell, or counts it an orphan.

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{Interner, NO_TEXT, ResponseMatrix, Task};
use crate::core::column::{Floats, Ids};
use crate::core::diag::Diagnostics;

/// One usable replicate: its canonical cell is there and valid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Replicate {
    /// The canonical cell it repeats (same protocol, model, item and configuration).
    pub cell: u32,
    /// Its value by §1.3 (0/1 or a score); NaN when the replicate itself is invalid.
    pub value: f64,
    /// The replicate's name (an id in [`Replicates::names`]).
    pub replicate: u32,
    /// What it varies (an id in [`Replicates::names`]).
    pub nuisance: u32,
    /// Index in the matrix's `files`.
    pub file: u32,
    /// Line (or row) in its file.
    pub line: u32,
}

/// The usable replicates as columns, one entry per replicate in each: a replicate takes
/// about 11 bytes in memory instead of a [`Replicate`]'s 32, and the matrix cache's columns
/// become these without a pass over the rows (at 10 million replicates, building the rows
/// took most of reading the cache). A [`Replicate`] is read across them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepColumns {
    /// The canonical cell of each.
    pub(crate) cell: Vec<u32>,
    /// The value of each by §1.3, NaN when invalid.
    pub(crate) value: Floats,
    /// The replicate's name (an id in [`Replicates::names`]).
    pub(crate) replicate: Ids,
    /// The nuisance (an id in [`Replicates::names`]).
    pub(crate) nuisance: Ids,
    /// The index in the matrix's `files`.
    pub(crate) file: Ids,
    /// The line (or row) in its file.
    pub(crate) line: Vec<u32>,
}

impl RepColumns {
    /// Replicates held.
    pub fn len(&self) -> usize {
        self.cell.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.cell.is_empty()
    }

    /// Replicate `i`. Panics when `i` is out of range, as indexing does.
    #[inline]
    pub fn get(&self, i: usize) -> Replicate {
        Replicate {
            cell: self.cell[i],
            value: self.value.get(i),
            replicate: self.replicate.get(i),
            nuisance: self.nuisance.get(i),
            file: self.file.get(i),
            line: self.line[i],
        }
    }

    /// Every replicate, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Replicate> + ExactSizeIterator + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Appends a replicate.
    pub fn push(&mut self, r: Replicate) {
        self.cell.push(r.cell);
        self.value.push(r.value);
        self.replicate.push(r.replicate);
        self.nuisance.push(r.nuisance);
        self.file.push(r.file);
        self.line.push(r.line);
    }

    /// Gives back spare room once complete.
    fn shrink_to_fit(&mut self) {
        self.cell.shrink_to_fit();
        self.value.shrink_to_fit();
        self.replicate.shrink_to_fit();
        self.nuisance.shrink_to_fit();
        self.file.shrink_to_fit();
        self.line.shrink_to_fit();
    }

    /// The columns, each checked to hold one entry per replicate.
    pub(crate) fn from_parts(
        cell: Vec<u32>,
        value: Floats,
        [replicate, nuisance, file]: [Ids; 3],
        line: Vec<u32>,
    ) -> Option<Self> {
        let n = cell.len();
        let same = value.len() == n
            && [&replicate, &nuisance, &file].iter().all(|c| c.len() == n)
            && line.len() == n;
        same.then_some(RepColumns {
            cell,
            value,
            replicate,
            nuisance,
            file,
            line,
        })
    }
}

impl FromIterator<Replicate> for RepColumns {
    fn from_iter<T: IntoIterator<Item = Replicate>>(iter: T) -> Self {
        let mut c = RepColumns::default();
        for r in iter {
            c.push(r);
        }
        c.shrink_to_fit();
        c
    }
}

/// The replicates of one canonical cell ([`Replicates::of`]): a range of the columns.
#[derive(Debug, Clone)]
pub struct Of<'a> {
    cols: &'a RepColumns,
    range: std::ops::Range<usize>,
}

impl Of<'_> {
    /// True when the cell has none.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// Each replicate of the cell, in input order.
    pub fn iter(&self) -> Self {
        self.clone()
    }

    /// The replicates as rows.
    pub fn to_vec(&self) -> Vec<Replicate> {
        self.iter().collect()
    }
}

impl Iterator for Of<'_> {
    type Item = Replicate;

    fn next(&mut self) -> Option<Replicate> {
        self.range.next().map(|i| self.cols.get(i))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl ExactSizeIterator for Of<'_> {}

/// The replicates of a matrix and the clusters of its items.
#[derive(Debug, Clone, Default)]
pub struct Replicates {
    /// Replicate, nuisance and cluster names.
    pub names: Interner,
    /// The usable replicates, sorted by canonical cell, then in input order.
    pub cells: RepColumns,
    /// Where each canonical cell's replicates start in `cells` (one more entry than the
    /// matrix has cells), set by [`Replicates::index`]; empty without replicates. A cell's
    /// replicates are looked up for every grid cell of every analysis: two binary searches
    /// over a million replicates took most of the noise floor's time.
    pub(crate) starts: Vec<u32>,
    /// Every replicate line read, valid or not, orphan or not (`input.replicate_cells`).
    pub read: u64,
    /// Replicates whose canonical cell is absent or invalid (`input.replicates_orphaned`).
    pub orphaned: u64,
    /// Every nuisance a replicate read names, in code-point order (ids in `names`).
    pub nuisances: Vec<u32>,
    /// Per item, the cluster its cells give (an id in `names`) or [`NO_TEXT`]; empty when
    /// no cell gives one.
    pub item_cluster: Vec<u32>,
    /// Per item, its video from the dataset's item metadata (an id in `names`) or
    /// [`NO_TEXT`], for items no cell gives a cluster; empty without such videos. Kept
    /// apart: the matrix cache holds what the cells say, not what items.jsonl does.
    pub video_cluster: Vec<u32>,
    /// The frames each replicate that records them was given (`frame_idx`), by where the
    /// replicate was read: ((file, line), start, len) into `frame_pool`, sorted.
    pub frame_spans: Vec<((u32, u32), u32, u32)>,
    /// The frame indices of `frame_spans`.
    pub frame_pool: Vec<u64>,
}

impl Replicates {
    /// The frames replicate `r` records as given to its model, if it records them.
    pub fn frame_idx(&self, r: &Replicate) -> Option<&[u64]> {
        let i = self
            .frame_spans
            .binary_search_by_key(&(r.file, r.line), |s| s.0)
            .ok()?;
        let (_, start, len) = self.frame_spans[i];
        self.frame_pool
            .get(start as usize..(start as usize).checked_add(len as usize)?)
    }

    /// The usable replicates of a canonical cell.
    pub fn of(&self, cell: u32) -> Of<'_> {
        Of {
            cols: &self.cells,
            range: self.range_of(cell),
        }
    }

    /// Where the replicates of a canonical cell are in `cells`.
    #[inline]
    pub fn range_of(&self, cell: u32) -> std::ops::Range<usize> {
        let c = cell as usize;
        if let (Some(&from), Some(&to)) = (self.starts.get(c), self.starts.get(c + 1)) {
            return from as usize..to as usize;
        }
        let cells = &self.cells.cell;
        let from = cells.partition_point(|&x| x < cell);
        let to = from + cells[from..].partition_point(|&x| x == cell);
        from..to
    }

    /// Indexes `cells` (sorted by cell) by the cell of each, for a matrix of `n_cells`
    /// cells ([`starts_of`]).
    pub(crate) fn index(&mut self, n_cells: usize) {
        self.starts = starts_of(&self.cells.cell, n_cells);
    }

    /// The clusters alone, without a replicate: as if none had been read.
    pub fn clusters_only(self) -> Replicates {
        Replicates {
            names: self.names,
            item_cluster: self.item_cluster,
            video_cluster: self.video_cluster,
            ..Replicates::default()
        }
    }

    /// The cluster of an item (an id in `names`): the one its cells give, else its video.
    pub fn cluster_id(&self, item: u32) -> Option<u32> {
        [&self.item_cluster, &self.video_cluster]
            .into_iter()
            .filter_map(|v| v.get(item as usize).copied())
            .find(|&c| c != NO_TEXT)
    }

    /// The cluster of an item, when a cell (or the item's metadata) gives one.
    pub fn cluster(&self, item: u32) -> Option<&str> {
        self.cluster_id(item).map(|c| self.names.name(c))
    }

    /// Sets the video of each item no cell gave a cluster (a dataset's item metadata).
    pub fn fill_clusters(&mut self, n_items: usize, of: impl Fn(u32) -> Option<String>) {
        let mut video = vec![NO_TEXT; n_items];
        for (item, v) in video.iter_mut().enumerate() {
            let from_cells = self.item_cluster.get(item).is_some_and(|&c| c != NO_TEXT);
            if !from_cells && let Some(name) = of(item as u32) {
                *v = self.names.intern(&name);
            }
        }
        if video.iter().any(|&c| c != NO_TEXT) {
            self.video_cluster = video;
        }
    }
}

/// Where the replicates of each cell start in `cells` (the canonical cell of each, sorted),
/// for a matrix of `n_cells` cells: one more entry than it has cells. Empty without
/// replicates, and when it cannot be built (cells out of that range or unsorted: a damaged
/// cache is refused by its checks before it is used), and lookups then search.
pub(crate) fn starts_of(cells: &[u32], n_cells: usize) -> Vec<u32> {
    let sorted = cells.windows(2).all(|w| w[0] <= w[1]);
    if cells.is_empty() || !sorted || cells.len() >= u32::MAX as usize {
        return Vec::new();
    }
    if cells.last().is_some_and(|&c| c as usize >= n_cells) {
        return Vec::new();
    }
    let mut starts = vec![0; n_cells + 1];
    for &c in cells {
        starts[c as usize + 1] += 1;
    }
    for c in 0..n_cells {
        starts[c + 1] += starts[c];
    }
    starts
}

/// No cell (of [`PendingRep::cell`]).
pub(crate) const NO_CELL: u32 = u32::MAX;

/// A replicate as read, its names interned in [`Pending::names`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingRep {
    /// The canonical cell read just before it when that has its names (protocol, model,
    /// benchmark, item and configuration), else [`NO_CELL`]: most files give each
    /// replicate after its cell, and `finish` then needs no lookup by name.
    pub cell: u32,
    pub protocol: u32,
    pub model: u32,
    pub bench: u32,
    pub item: u32,
    pub config: u32,
    pub replicate: u32,
    pub nuisance: u32,
    /// [`NO_TEXT`] when the line gives none.
    pub cluster: u32,
    /// Its configuration's frames, budget and pixels (an index in [`Pending::props`]):
    /// a few per input, kept once, so a replicate holds 32 bytes less.
    pub props: u32,
    pub task: Task,
    pub value: f64,
    pub file: u32,
    pub line: u32,
}

/// What the builder keeps of replicates and clusters until `finish`.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    pub names: Interner,
    /// The id in `names` of the builder's configurations (by their id there; [`NO_TEXT`]
    /// until a replicate read after its cell names one).
    pub config_names: Vec<u32>,
    pub reps: Vec<PendingRep>,
    /// The (frames, budget, pixels) the replicates give, each once.
    pub props: Vec<Props>,
    props_ids: FxHashMap<(u64, u64, Option<u64>), u32>,
    /// Clusters canonical cells give: (builder item id, name id, cell).
    pub clusters: Vec<(u32, u32, u32)>,
    /// Replicates' recorded frames: ((file, line), start, len) into `frame_pool`.
    pub frame_spans: Vec<((u32, u32), u32, u32)>,
    /// The frame indices of `frame_spans`.
    pub frame_pool: Vec<u64>,
}

/// A configuration's frames, budget and pixels.
pub(crate) type Props = (u64, f64, Option<u64>);

impl Pending {
    pub fn clear(&mut self) {
        self.names.clear();
        self.config_names.clear();
        self.reps.clear();
        self.props.clear();
        self.props_ids.clear();
        self.clusters.clear();
        self.frame_spans.clear();
        self.frame_pool.clear();
    }

    /// The index of `p` in `props`, added the first time (by its bits: the checks then
    /// compare the values).
    pub fn props_id(&mut self, p: Props) -> u32 {
        let key = (p.0, p.1.to_bits(), p.2);
        *self.props_ids.entry(key).or_insert_with(|| {
            self.props.push(p);
            (self.props.len() - 1) as u32
        })
    }

    /// Appends a part's replicates and clusters; `item` and `base` renumber the part's
    /// canonical items and cells.
    pub fn join(&mut self, p: &mut Pending, item: impl Fn(u32) -> u32, base: u32) {
        let names: Vec<u32> = p.names.names().map(|n| self.names.intern(n)).collect();
        let props: Vec<u32> = p.props.iter().map(|&x| self.props_id(x)).collect();
        let n = |id: u32| {
            if id == NO_TEXT {
                NO_TEXT
            } else {
                names[id as usize]
            }
        };
        self.reps.extend(p.reps.drain(..).map(|r| PendingRep {
            protocol: n(r.protocol),
            model: n(r.model),
            bench: n(r.bench),
            item: n(r.item),
            config: n(r.config),
            replicate: n(r.replicate),
            nuisance: n(r.nuisance),
            cluster: n(r.cluster),
            props: props[r.props as usize],
            cell: if r.cell == NO_CELL {
                NO_CELL
            } else {
                r.cell + base
            },
            ..r
        }));
        self.clusters.extend(
            p.clusters
                .drain(..)
                .map(|(it, c, cell)| (item(it), n(c), cell + base)),
        );
        let offset = self.frame_pool.len() as u32;
        self.frame_spans.extend(
            p.frame_spans
                .drain(..)
                .map(|(at, start, len)| (at, start + offset, len)),
        );
        self.frame_pool.append(&mut p.frame_pool);
        p.clear();
    }
}

/// Where a replicate or a cell is, for messages.
enum At {
    Cell(u32),
    Rep(usize),
}

/// An item, canonical (its id) or known only by a replicate (benchmark and item names).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum ItemKey {
    Canonical(u32),
    Other(u32, u32),
}

/// The cells of one (protocol, model, item) of the matrix, and where they end in their group.
type ItemCells<'m> = (Option<(u32, u32, u32)>, &'m [u32], usize);

/// Checks the rules of §16.1 that span replicates (errors into `diags`, at the replicate's
/// line), keys each replicate to its canonical cell, and gives the clusters per item.
/// `item_map` renumbers the builder's item ids of `pending.clusters` into the matrix's;
/// `config_first` is the first cell of each of the matrix's configurations.
pub(crate) fn finish(
    mut pending: Pending,
    m: &ResponseMatrix,
    item_map: &[u32],
    config_first: &[u32],
    diags: &mut Diagnostics,
) -> Replicates {
    let Pending {
        ref names,
        ref reps,
        ref props,
        ..
    } = pending;
    let files: &[Arc<Path>] = &m.files;
    let name = |id: u32| names.name(id);
    let loc = |at: &At| match *at {
        At::Cell(c) => m.cell_location(c),
        At::Rep(r) => format!(
            "{}:{}",
            files[reps[r].file as usize].display(),
            reps[r].line
        ),
    };
    let error = |diags: &mut Diagnostics, r: usize, field: &str, msg: String| {
        let rep = &reps[r];
        diags.error(
            &files[rep.file as usize],
            Some(u64::from(rep.line)),
            Some(field),
            msg,
        );
    };
    // The matrix's ids of the replicates' names, each looked up once (a name is hashed by
    // its text; a million replicates name a few protocols, models and configurations).
    // Replicates mostly come in runs of one protocol, model and item: a replicate whose
    // names are those of the one before is not looked up again.
    let mut protocols: FxHashMap<u32, Option<u32>> = FxHashMap::default();
    let mut configs: FxHashMap<(u32, u32), Option<u32>> = FxHashMap::default();
    let mut models: FxHashMap<u32, Option<u32>> = FxHashMap::default();
    let mut items: FxHashMap<(u32, u32), Option<u32>> = FxHashMap::default();
    let mut benches: FxHashMap<u32, Option<u32>> = FxHashMap::default();
    // The canonical cell of each replicate (its position in the matrix, valid or not), or
    // NONE: one lookup each, used for the duplicates and for keying.
    const NONE: u32 = u32::MAX;
    let mut cell_of = vec![NONE; reps.len()];
    // The cells of the last (protocol, model, item) looked up, sorted by configuration, and
    // where they end in their group: replicates given in the order of their canonical
    // cells find the next item's cells right there, without a search.
    let mut item_cells: ItemCells<'_> = (None, &[], 0);
    // The rules checked one replicate at a time, in the same pass as the lookups (each
    // pass over a million replicates reads 64 MB): the errors are kept aside, few, and
    // given after the duplicates' in the order (replicate, rule) they always had.
    let mut checked: Vec<(usize, &'static str, String)> = Vec::new();
    let mut nuisance_of: FxHashMap<(u32, u32, u32), usize> = FxHashMap::default();
    let mut props_of: FxHashMap<(u32, u32), usize> = FxHashMap::default();
    let mut task_of: FxHashMap<u32, usize> = FxHashMap::default();
    let mut named = vec![false; names.len()];
    let mut clustered = false;
    // A replicate read right after its canonical cell knows the cell (`PendingRep::cell`):
    // the one the lookup by name finds, when the canonical cells gave no error (no two of
    // them share their names).
    let hints = !diags.has_errors();
    let (mut p, mut model, mut item, mut bench) = (None, None, None, None);
    for (i, r) in reps.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &reps[p]);
        let same = |f: fn(&PendingRep) -> u32| prev.is_some_and(|p| f(p) == f(r));
        let config = if hints && r.cell != NO_CELL {
            let cell = r.cell as usize;
            cell_of[i] = r.cell;
            let (config, it) = (m.cell_config.get(cell), m.cell_item.get(cell));
            (p, model, bench) = (
                Some(m.config(config).protocol),
                Some(m.cell_model.get(cell)),
                Some(m.item(it).benchmark),
            );
            if !(same(|r| r.bench) && same(|r| r.item)) {
                item = *items.entry((r.bench, r.item)).or_insert(Some(it));
            }
            Some(config)
        } else {
            if !same(|r| r.bench) {
                bench = *benches
                    .entry(r.bench)
                    .or_insert_with(|| m.benchmarks.get(name(r.bench)));
            }
            if !same(|r| r.protocol) {
                p = *protocols
                    .entry(r.protocol)
                    .or_insert_with(|| m.protocols.get(name(r.protocol)));
            }
            let config = *configs
                .entry((r.protocol, r.config))
                .or_insert_with(|| p.and_then(|p| m.find_config(p, name(r.config))));
            if !same(|r| r.model) {
                model = *models
                    .entry(r.model)
                    .or_insert_with(|| m.models.get(name(r.model)));
            }
            if !(same(|r| r.bench) && same(|r| r.item)) {
                item = *items
                    .entry((r.bench, r.item))
                    .or_insert_with(|| m.find_item(name(r.bench), name(r.item)));
            }
            if let (Some(p), Some(model), Some(item), Some(config)) = (p, model, item, config) {
                if item_cells.0 != Some((p, model, item)) {
                    // A group's cells are sorted by (item, configuration).
                    let group = m.group(p, model);
                    let item_of = |c: u32| m.cell_item.get(c as usize);
                    let after = match item_cells.0 {
                        Some((p0, m0, _)) if (p0, m0) == (p, model) => item_cells.2,
                        _ => group.len(),
                    };
                    let from = if group.get(after).is_some_and(|&c| item_of(c) == item) {
                        after
                    } else {
                        group.partition_point(|&c| item_of(c) < item)
                    };
                    let to = from
                        + group[from..]
                            .iter()
                            .take_while(|&&c| item_of(c) == item)
                            .count();
                    item_cells = (Some((p, model, item)), &group[from..to], to);
                }
                let cells = item_cells.1;
                if let Ok(at) =
                    cells.binary_search_by_key(&config, |&c| m.cell_config.get(c as usize))
                {
                    cell_of[i] = cells[at];
                }
            }
            config
        };
        named[r.nuisance as usize] = true;
        clustered |= r.cluster != NO_TEXT;

        let first = *nuisance_of
            .entry((r.protocol, r.config, r.replicate))
            .or_insert(i);
        if reps[first].nuisance != r.nuisance {
            checked.push((
                i,
                "nuisance",
                format!(
                    "replicate {:?} of configuration {:?} has nuisance {:?} here but {:?} at {}",
                    name(r.replicate),
                    name(r.config),
                    name(r.nuisance),
                    name(reps[first].nuisance),
                    loc(&At::Rep(first))
                ),
            ));
        }
        // Frames, budget and pixels: those of the canonical configuration, else those of
        // the configuration's first replicate.
        let theirs = match config {
            Some(c) => {
                let first = config_first[c as usize];
                let c = m.config(c);
                Some(((c.frames, c.budget, c.pixels), At::Cell(first)))
            }
            None => {
                let first = *props_of.entry((r.protocol, r.config)).or_insert(i);
                let f = &reps[first];
                (first != i).then_some((props[f.props as usize], At::Rep(first)))
            }
        };
        let (r_frames, r_budget, r_pixels) = props[r.props as usize];
        if let Some(((frames, budget, pixels), at)) = theirs {
            let show = |p: Option<u64>| p.map_or("null".to_string(), |p| p.to_string());
            let mut found = Vec::new();
            if r_frames != frames {
                found.push(("frames", r_frames.to_string(), frames.to_string()));
            }
            let both = super::budget_is_frames(r_frames, r_budget)
                && super::budget_is_frames(frames, budget);
            if r_budget != budget && !both {
                found.push(("budget", r_budget.to_string(), budget.to_string()));
            }
            if r_pixels != pixels {
                found.push(("pixels", show(r_pixels), show(pixels)));
            }
            for (field, this, that) in found {
                checked.push((
                    i,
                    field,
                    format!(
                        "configuration {:?} has {field} {this} here but {that} at {}",
                        name(r.config),
                        loc(&at)
                    ),
                ));
            }
        }
        // The task of the benchmark's canonical cells (no place), else of its first
        // replicate; the place is written only for an error.
        let bench_task = bench.map(|b| (m.bench_task[b as usize], None)).or_else(|| {
            let first = *task_of.entry(r.bench).or_insert(i);
            (first != i).then_some((reps[first].task, Some(At::Rep(first))))
        });
        if let Some((task, at)) = bench_task
            && task != r.task
        {
            let at = at.map_or_else(|| "its canonical cells".to_string(), |a| loc(&a));
            checked.push((
                i,
                "task",
                format!(
                    "benchmark {:?} mixes tasks: this replicate is {}, {} {}",
                    name(r.bench),
                    r.task.as_str(),
                    if at == "its canonical cells" {
                        format!("{at} are")
                    } else {
                        format!("the cell at {at} is")
                    },
                    task.as_str()
                ),
            ));
        }
    }
    drop((nuisance_of, props_of, task_of));

    // Duplicates: those of a canonical cell by sorting them by (cell, input order), which
    // is also the order of the usable replicates; the others (orphans) by their names.
    let mut keyed: Vec<u64> = (0..reps.len())
        .filter(|&i| cell_of[i] != NONE)
        .map(|i| u64::from(cell_of[i]) << 32 | i as u64)
        .collect();
    keyed.sort_unstable();
    let index = |k: u64| (k & u64::from(u32::MAX)) as usize;
    // The replicate each duplicate repeats (the first one given): (duplicate, first).
    let mut duplicates: Vec<(usize, usize)> = Vec::new();
    for run in keyed
        .chunk_by(|a, b| a >> 32 == b >> 32)
        .filter(|r| r.len() > 1)
    {
        for (j, &k) in run.iter().enumerate().skip(1) {
            let i = index(k);
            if let Some(&f) = run[..j]
                .iter()
                .find(|&&f| reps[index(f)].replicate == reps[i].replicate)
            {
                duplicates.push((i, index(f)));
            }
        }
    }
    let mut seen: FxHashMap<(u32, u32, u32, u32, u32, u32), usize> = FxHashMap::default();
    for (i, r) in reps.iter().enumerate().filter(|&(i, _)| cell_of[i] == NONE) {
        let key = (r.protocol, r.model, r.bench, r.item, r.config, r.replicate);
        match seen.get(&key) {
            Some(&first) => duplicates.push((i, first)),
            None => {
                seen.insert(key, i);
            }
        }
    }
    drop((seen, cell_of));
    duplicates.sort_unstable();

    // The errors, by replicate: its duplicate first, then the rules in the order checked.
    let mut bad = vec![false; reps.len()];
    let mut checked = checked.into_iter().peekable();
    let mut duplicates = duplicates.into_iter().peekable();
    loop {
        let i = match (duplicates.peek(), checked.peek()) {
            (Some(&(d, _)), Some(&(c, _, _))) => d.min(c),
            (Some(&(d, _)), None) => d,
            (None, Some(&(c, _, _))) => c,
            (None, None) => break,
        };
        bad[i] = true;
        if let Some((_, first)) = duplicates.next_if(|&(d, _)| d == i) {
            let r = &reps[i];
            error(
                diags,
                i,
                "replicate",
                format!(
                    "duplicate replicate cell: model {:?}, benchmark {:?}, item {:?}, config {:?}, protocol {:?}, replicate {:?} already given at {}",
                    name(r.model),
                    name(r.bench),
                    name(r.item),
                    name(r.config),
                    name(r.protocol),
                    name(r.replicate),
                    loc(&At::Rep(first))
                ),
            );
        }
        while let Some((_, field, msg)) = checked.next_if(|&(c, _, _)| c == i) {
            error(diags, i, field, msg);
        }
    }

    // One cluster per item, canonical cells first (in input order), then replicates.
    let item_key = |r: &PendingRep| match items[&(r.bench, r.item)] {
        Some(it) => ItemKey::Canonical(it),
        None => ItemKey::Other(r.bench, r.item),
    };
    let mut cluster_of: FxHashMap<ItemKey, (u32, At)> = FxHashMap::default();
    let mut canonical_clusters = std::mem::take(&mut pending.clusters);
    canonical_clusters.sort_by_key(|&(_, _, cell)| cell);
    for &(item, c, cell) in &canonical_clusters {
        let key = ItemKey::Canonical(item_map[item as usize]);
        match cluster_of.get(&key) {
            Some(&(first, ref at)) if first != c => {
                let file = &files[m.cell_file.get(cell as usize) as usize];
                diags.error(
                    file,
                    Some(u64::from(m.cell_line.get(cell as usize))),
                    Some("cluster"),
                    format!(
                        "item {:?} has cluster {:?} here but {:?} at {}",
                        m.item(item_map[item as usize]).id,
                        name(c),
                        name(first),
                        loc(at)
                    ),
                );
            }
            Some(_) => {}
            None => {
                cluster_of.insert(key, (c, At::Cell(cell)));
            }
        }
    }
    for (i, r) in reps.iter().enumerate().filter(|_| clustered) {
        if r.cluster == NO_TEXT {
            continue;
        }
        let key = item_key(r);
        match cluster_of.get(&key) {
            Some(&(first, ref at)) if first != r.cluster => {
                let msg = format!(
                    "item {:?} has cluster {:?} here but {:?} at {}",
                    name(r.item),
                    name(r.cluster),
                    name(first),
                    loc(at)
                );
                error(diags, i, "cluster", msg);
            }
            Some(_) => {}
            None => {
                cluster_of.insert(key, (r.cluster, At::Rep(i)));
            }
        }
    }

    // Each replicate to its canonical cell, in the order of the cells, then of the input.
    // The names kept: those the usable replicates, the nuisances and the clusters give,
    // not the models', items' and configurations' the lookups needed (a replicate per
    // item names every item again: reading them back from the matrix cache took as long
    // as its replicates).
    let mut kept = Interner::default();
    let mut kept_id = vec![NO_TEXT; names.len()];
    let mut keep = |id: u32| -> u32 {
        let at = &mut kept_id[id as usize];
        if *at == NO_TEXT {
            *at = kept.intern(name(id));
        }
        *at
    };
    let usable = |&&k: &&u64| !bad[index(k)] && m.is_valid((k >> 32) as u32);
    let cells: RepColumns = keyed
        .iter()
        .filter(usable)
        .map(|&k| {
            let r = &reps[index(k)];
            Replicate {
                cell: (k >> 32) as u32,
                value: r.value,
                replicate: keep(r.replicate),
                nuisance: keep(r.nuisance),
                file: r.file,
                line: r.line,
            }
        })
        .collect();
    let good = bad.iter().filter(|b| !**b).count();
    let orphaned = (good - cells.len()) as u64;
    drop(keyed);
    let mut nuisances: Vec<u32> = (0..names.len() as u32)
        .filter(|&n| named[n as usize])
        .collect();
    nuisances.sort_by(|&a, &b| name(a).cmp(name(b)));
    let nuisances: Vec<u32> = nuisances.into_iter().map(&mut keep).collect();
    let mut item_cluster = Vec::new();
    if cluster_of
        .keys()
        .any(|k| matches!(k, ItemKey::Canonical(_)))
    {
        item_cluster = vec![NO_TEXT; m.items.len()];
        for (k, &(c, _)) in &cluster_of {
            if let ItemKey::Canonical(it) = k {
                item_cluster[*it as usize] = c;
            }
        }
        for c in item_cluster.iter_mut().filter(|c| **c != NO_TEXT) {
            *c = keep(*c);
        }
    }
    let read = reps.len() as u64;
    let mut frame_spans = pending.frame_spans;
    frame_spans.sort_unstable_by_key(|s| s.0);
    let mut replicates = Replicates {
        names: kept,
        cells,
        starts: Vec::new(),
        read,
        orphaned,
        nuisances,
        item_cluster,
        video_cluster: Vec::new(),
        frame_spans,
        frame_pool: pending.frame_pool,
    };
    replicates.index(m.n_cells());
    replicates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::analysis::bootstrap::SplitMix64;

    fn rep(cell: u32, line: u32) -> Replicate {
        Replicate {
            cell,
            value: 1.0,
            replicate: 0,
            nuisance: 0,
            file: 0,
            line,
        }
    }

    /// The index gives each cell the replicates a scan of them gives, in their order; an
    /// index it cannot build (out-of-range or unsorted cells) is left out, and the lookup
    /// then searches.
    #[test]
    fn the_index_gives_each_cell_its_replicates() {
        let mut rng = SplitMix64::new(5);
        for n_cells in [1usize, 2, 7, 50] {
            let mut cells: Vec<Replicate> = (0..rng.next_u64() % 120)
                .map(|line| rep((rng.next_u64() % n_cells as u64) as u32, line as u32))
                .collect();
            cells.sort_by_key(|r| r.cell);
            let mut r = Replicates {
                cells: cells.iter().copied().collect(),
                ..Replicates::default()
            };
            let scanned = |c: u32| -> Vec<Replicate> {
                cells.iter().filter(|x| x.cell == c).copied().collect()
            };
            let searched: Vec<Vec<Replicate>> =
                (0..n_cells as u32).map(|c| r.of(c).to_vec()).collect();
            r.index(n_cells);
            assert_eq!(r.starts.is_empty(), r.cells.is_empty());
            for c in 0..n_cells as u32 {
                assert_eq!(r.of(c).to_vec(), scanned(c), "cell {c} of {n_cells}");
                assert_eq!(r.of(c).to_vec(), searched[c as usize]);
            }
        }
        let mut r = Replicates {
            cells: [rep(3, 1), rep(1, 2)].into_iter().collect(),
            ..Replicates::default()
        };
        r.index(5);
        assert!(r.starts.is_empty());
        r.cells = [rep(1, 1), rep(9, 2)].into_iter().collect();
        r.index(5);
        assert!(r.starts.is_empty());
        assert_eq!(r.of(1).to_vec(), [rep(1, 1)]);
    }

    fn load(text: &str) -> Result<ResponseMatrix, Vec<String>> {
        let mut b = crate::core::matrix::MatrixBuilder::new();
        let file = b.add_file(Path::new("t.jsonl"));
        crate::core::load::cells::read_cells(text.as_bytes(), None, &mut b, &file).expect("io");
        match b.finish() {
            Ok((m, _)) => Ok(m),
            Err(d) => Err(d.sorted().iter().map(|d| d.to_string()).collect()),
        }
    }

    fn line(item: &str, config: &str, correct: bool, rep: Option<&str>) -> String {
        let rep = rep.map_or(String::new(), |r| {
            format!(r#","replicate":"{r}","nuisance":"rerun""#)
        });
        format!(
            r#"{{"model":"m","item_id":"{item}","config":"{config}","frames":{},"correct":{correct}{rep}}}"#,
            config.len()
        )
    }

    /// Replicates are keyed to their canonical cells whatever their order: before or
    /// after the cell, in runs or scattered; kept by cell, then in input order; those of
    /// an absent or invalid cell counted as orphans; each duplicate (of a canonical cell's
    /// replicate or of an orphan) an error at its line naming the first.
    #[test]
    fn replicates_are_keyed_to_their_cells_in_any_order() {
        let lines = [
            line("q2", "bb", false, Some("r1")),
            line("q1", "a", true, None),
            line("q1", "bb", false, None),
            line("q1", "bb", true, Some("r1")),
            line("q2", "a", true, None),
            line("q1", "a", false, Some("r2")),
            line("q2", "bb", true, None),
            line("q1", "a", true, Some("r1")),
            line("q9", "a", true, Some("r1")),
            line("q2", "cccc", true, Some("r1")),
            r#"{"model":"m","item_id":"q3","config":"a","frames":1}"#.to_string(),
            line("q3", "a", true, Some("r1")),
        ];
        let m = load(&lines.join("\n")).expect("loads");
        let r = &m.replicates;
        let got: Vec<(String, String, u32)> = r
            .cells
            .iter()
            .map(|x| {
                let c = x.cell;
                let item = m.item(m.cell_item.get(c as usize)).id.to_string();
                let config = m.config(m.cell_config.get(c as usize)).name.to_string();
                (item, config, x.line)
            })
            .collect();
        let want = [
            ("q1", "a", 6),
            ("q1", "a", 8),
            ("q1", "bb", 4),
            ("q2", "bb", 1),
        ];
        let want: Vec<(String, String, u32)> = want
            .iter()
            .map(|&(i, c, l)| (i.into(), c.into(), l))
            .collect();
        assert_eq!(got, want);
        // q9 (no item), q2 at cccc (no configuration), q3 at a (an invalid cell).
        assert_eq!((r.read, r.orphaned), (7, 3));
        // Only the names the replicates keep, not the items' and configurations' that
        // keyed them.
        let mut kept: Vec<&str> = r.names.names().collect();
        kept.sort_unstable();
        assert_eq!(kept, ["r1", "r2", "rerun"]);
        let rows: Vec<Replicate> = r.cells.iter().collect();
        for (c, reps) in rows
            .chunk_by(|a, b| a.cell == b.cell)
            .map(|x| (x[0].cell, x))
        {
            assert_eq!(r.of(c).to_vec(), reps);
        }

        let mut dup = lines.to_vec();
        dup.push(line("q1", "a", false, Some("r2")));
        dup.push(line("q9", "a", true, Some("r1")));
        dup.push(line("q1", "a", false, Some("r2")));
        let errors = load(&dup.join("\n")).expect_err("duplicates");
        assert_eq!(errors.len(), 3, "{errors:#?}");
        for (e, (at, first)) in errors.iter().zip([(13, 6), (14, 9), (15, 6)]) {
            assert!(e.contains(&format!("t.jsonl:{at}")), "{e}");
            assert!(e.contains("duplicate replicate cell"), "{e}");
            assert!(
                e.ends_with(&format!("already given at t.jsonl:{first}")),
                "{e}"
            );
        }
    }

    /// A replicate read right after its canonical cell is keyed by that cell, with no
    /// lookup by name: the same cells as when the replicates come apart from their cells,
    /// in one piece or in parallel parts. With two canonical cells of one key (an error),
    /// the lookup decides, so each replicate of that key is still checked against the
    /// others.
    #[test]
    fn a_replicate_after_its_cell_is_keyed_as_any_other() {
        let (mut after, mut apart) = (Vec::new(), Vec::new());
        let (mut reps, mut elsewhere) = (Vec::new(), Vec::new());
        for k in 0..6_000 {
            let (item, config) = (format!("q{}", k / 3), ["a", "bb", "cccc"][k % 3]);
            let cell = line(&item, config, k % 2 == 0, None);
            after.push(cell.clone());
            apart.push(cell);
            // Most cells have a replicate after them; some have one elsewhere, some none.
            let rep = line(&item, config, k % 5 == 0, Some(["r1", "r2"][k % 2]));
            match k % 7 {
                0 => {
                    elsewhere.push(rep.clone());
                    reps.push(rep);
                }
                1 => {}
                _ => {
                    after.push(rep.clone());
                    reps.push(rep);
                }
            }
        }
        after.extend(elsewhere);
        apart.extend(reps);
        // In one piece, and in parts of 32 kB read in parallel and joined.
        let load_as = |lines: &[String], parts: bool| {
            use crate::core::load::{cells::parse_block, chunk};
            let text = lines.join("\n");
            let mut b = crate::core::matrix::MatrixBuilder::new();
            let file = b.add_file(Path::new("t.jsonl"));
            if parts {
                let parse = |block: &[u8], line, b: &mut _| parse_block(block, line, &file, b);
                chunk::read_blocks(
                    text.as_bytes(),
                    None,
                    64 << 10,
                    &chunk::Lines,
                    1,
                    &mut b,
                    &parse,
                )
                .expect("io");
            } else {
                parse_block(text.as_bytes(), 1, &file, &mut b);
            }
            b.finish().expect("loads").0
        };
        let keyed = |lines: &[String], parts: bool| {
            let m = load_as(lines, parts);
            let r = &m.replicates;
            let name = |id: u32| r.names.name(id).to_string();
            let got: Vec<(u32, u64, String, String)> = r
                .cells
                .iter()
                .map(|x| {
                    (
                        x.cell,
                        x.value.to_bits(),
                        name(x.replicate),
                        name(x.nuisance),
                    )
                })
                .collect();
            (got, r.read, r.orphaned)
        };
        let a = keyed(&after, false);
        assert_eq!(a.0.len(), (0..6_000).filter(|k| k % 7 != 1).count());
        assert_eq!(a, keyed(&apart, false));
        assert_eq!(a, keyed(&after, true));
        assert_eq!(a, keyed(&apart, true));

        let twice = [
            line("q1", "a", true, None),
            line("q1", "a", true, Some("r1")),
            line("q1", "a", false, None),
            line("q1", "a", false, Some("r1")),
        ];
        let errors = load(&twice.join("\n")).expect_err("duplicates");
        assert!(errors[0].contains("duplicate cell"), "{errors:#?}");
        assert!(
            errors.iter().any(|e| e.contains("t.jsonl:4")
                && e.contains("duplicate replicate cell")
                && e.ends_with("already given at t.jsonl:2")),
            "{errors:#?}"
        );

        // The rules name the configuration of a replicate keyed by its cell.
        let phase = line("q2", "a", true, Some("r1")).replace("rerun", "phase");
        let lines = [
            line("q1", "a", true, None),
            line("q1", "a", true, Some("r1")),
            line("q1", "bb", true, None),
            line("q1", "bb", true, Some("r1")),
            line("q2", "a", true, None),
            phase,
        ];
        let errors = load(&lines.join("\n")).expect_err("two nuisances");
        assert_eq!(
            errors,
            [
                "t.jsonl:6: error: field `nuisance`: replicate \"r1\" of configuration \"a\" has nuisance \"phase\" here but \"rerun\" at t.jsonl:2"
            ]
        );
    }
}
