//! Analyses, selections and grids (docs/measures.md §2): which cells an analysis may use, which
//! configurations each model is compared on, in which order, and which items have a valid
//! cell for every one of them.

use serde::Serialize;
use serde::ser::Serializer;

use super::pairs::BudgetOrder;
use super::params::{GridMode, Params, ReferencePixels, VariantBudget};
use crate::core::matrix::{ResponseMatrix, Task};

/// Distinct configuration names from (budget, name) pairs, ordered by budget, then by name;
/// a name under several budgets comes at its lowest. The union of the configurations of a
/// dataset, or of several grids, in axis order (by a set: an item may have a million).
pub fn names_by_budget<'a>(pairs: impl IntoIterator<Item = (f64, &'a str)>) -> Vec<&'a str> {
    let mut all: Vec<(f64, &str)> = pairs.into_iter().collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
    let mut seen = rustc_hash::FxHashSet::default();
    all.into_iter()
        .map(|(_, n)| n)
        .filter(|n| seen.insert(*n))
        .collect()
}

/// The benchmark scope of an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// Every benchmark of the task, pooled.
    All,
    /// One benchmark, by id.
    Benchmark(u32),
}

/// `(protocol, task, scope)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AnalysisKey {
    /// Id of the protocol analysed.
    pub protocol: u32,
    /// The task analysed.
    pub task: Task,
    /// Every benchmark of the task, or one.
    pub scope: Scope,
}

impl AnalysisKey {
    /// The scope as the report names it: `ALL` or the benchmark's name.
    pub fn scope_name<'m>(&self, m: &'m ResponseMatrix) -> &'m str {
        match self.scope {
            Scope::All => crate::core::matrix::ALL_SCOPE,
            Scope::Benchmark(b) => m.benchmarks.name(b),
        }
    }
}

/// The valid cells of one analysis, after the model filter and the zero-frame switch.
pub struct Selection<'m> {
    /// The matrix the cells are in.
    pub m: &'m ResponseMatrix,
    /// The analysis selected for.
    pub key: AnalysisKey,
    /// For `ALL`, whether every benchmark is of the task (no cell is then out of scope).
    every_bench: bool,
    /// With a model filter, whether each model passes it.
    model_ok: Option<Vec<bool>>,
    include_zero_frame: bool,
    /// The configurations the selection's cells may have, numbered `0..n` ("local").
    configs: Local,
}

/// The configurations of a selection and their local numbers: the protocol's whole range,
/// or for a benchmark's scope only those its cells have. A benchmark's arrays indexed by
/// configuration are then as long as its own configurations, not as all of them: with
/// configurations named per benchmark, they grew with the benchmarks, for each benchmark.
enum Local {
    /// Configuration ids `start..end`, local number `id - start`.
    Range(std::ops::Range<u32>),
    /// Sorted configuration ids, local number the index.
    Ids(Vec<u32>),
}

impl<'m> Selection<'m> {
    /// The selection of an analysis under the run's filters and zero-frame switch.
    pub fn new(m: &'m ResponseMatrix, key: AnalysisKey, params: &Params) -> Self {
        // Nothing here is as long as the benchmarks: a run has an analysis per benchmark,
        // and a list of them per analysis made 100 000 benchmarks take a minute.
        let model_ok = params.models.as_ref().map(|f| {
            m.models
                .names()
                .map(|name| f.iter().any(|x| x == name))
                .collect()
        });
        Selection {
            m,
            key,
            every_bench: key.scope == Scope::All && m.bench_task.iter().all(|&t| t == key.task),
            model_ok,
            include_zero_frame: params.include_zero_frame,
            configs: Self::local_configs(m, key),
        }
    }

    /// The configurations a selection numbers: for a benchmark's scope, those of the
    /// benchmark's cells (each model's run of them), as a range when they are one.
    fn local_configs(m: &ResponseMatrix, key: AnalysisKey) -> Local {
        let all = m.protocol_configs(key.protocol);
        let Scope::Benchmark(b) = key.scope else {
            return Local::Range(all);
        };
        let bench = |c: &u32| m.items[m.cell_item.get(*c as usize) as usize].benchmark;
        let mut ids = Vec::new();
        for model in 0..m.models.len() as u32 {
            let group = m.group(key.protocol, model);
            let from = group.partition_point(|c| bench(c) < b);
            let to = from + group[from..].partition_point(|c| bench(c) <= b);
            ids.extend(
                group[from..to]
                    .iter()
                    .map(|&c| m.cell_config.get(c as usize)),
            );
        }
        ids.sort_unstable();
        ids.dedup();
        match (ids.first(), ids.last()) {
            (Some(&lo), Some(&hi)) if (hi - lo) as usize + 1 == ids.len() => {
                Local::Range(lo..hi + 1)
            }
            (Some(_), _) => Local::Ids(ids),
            _ => Local::Range(all.start..all.start),
        }
    }

    /// How many configurations the selection numbers.
    fn n_configs(&self) -> usize {
        match &self.configs {
            Local::Range(r) => r.len(),
            Local::Ids(ids) => ids.len(),
        }
    }

    /// The configuration of a local number.
    fn config_at(&self, local: usize) -> u32 {
        match &self.configs {
            Local::Range(r) => r.start + local as u32,
            Local::Ids(ids) => ids[local],
        }
    }

    fn selected(&self, cell: u32) -> bool {
        self.in_scope(self.benchmark_of(cell)) && self.selected_in_scope(cell)
    }

    /// Whether a benchmark is in the analysis's scope: of its task, and the one benchmark
    /// of a benchmark's scope.
    fn in_scope(&self, b: u32) -> bool {
        self.m.bench_task[b as usize] == self.key.task
            && match self.key.scope {
                Scope::All => true,
                Scope::Benchmark(s) => s == b,
            }
    }

    /// The benchmark of a cell's item.
    fn benchmark_of(&self, cell: u32) -> u32 {
        let m = self.m;
        m.items[m.cell_item.get(cell as usize) as usize].benchmark
    }

    /// The selected cells of one model, sorted by (item, config).
    pub fn cells(&self, model: u32) -> impl Iterator<Item = u32> + '_ {
        let group: &[u32] = if self.model_ok.as_ref().is_none_or(|ok| ok[model as usize]) {
            self.m.group(self.key.protocol, model)
        } else {
            &[]
        };
        // Items are numbered in (benchmark, id) order and a group is sorted by item, so one
        // benchmark's cells are a run of it: a benchmark's scope reads that run only, not
        // every cell of the model once per benchmark.
        let (group, every_bench) = match self.key.scope {
            Scope::All => (group, self.every_bench),
            Scope::Benchmark(b) => {
                let from = group.partition_point(|&c| self.benchmark_of(c) < b);
                let to = from + group[from..].partition_point(|&c| self.benchmark_of(c) <= b);
                (&group[from..to], self.in_scope(b))
            }
        };
        // When every cell of the run is of a benchmark in scope, a cell's benchmark is not
        // looked up again.
        group.iter().copied().filter(move |&c| {
            if every_bench {
                self.selected_in_scope(c)
            } else {
                self.selected(c)
            }
        })
    }

    /// [`Selection::selected`] of a cell whose benchmark is in scope.
    fn selected_in_scope(&self, cell: u32) -> bool {
        let m = self.m;
        let c = cell as usize;
        !m.cell_value.get(c).is_nan()
            && (self.include_zero_frame || m.configs[m.cell_config.get(c) as usize].frames > 0)
    }

    /// Models with at least one selected cell, in name order.
    pub fn models(&self) -> Vec<u32> {
        (0..self.m.models.len() as u32)
            .filter(|&mo| self.cells(mo).next().is_some())
            .collect()
    }

    /// The local number of a configuration; `None` for one the selection's cells lack.
    fn local(&self, config: u32) -> Option<usize> {
        match &self.configs {
            Local::Range(r) => r.contains(&config).then(|| (config - r.start) as usize),
            Local::Ids(ids) => ids.binary_search(&config).ok(),
        }
    }

    /// `avail(m)`: configurations the model has in every benchmark of the scope where it has
    /// any selected cell (docs/measures.md §2.2), as config ids in id order.
    pub fn avail(&self, model: u32) -> Vec<u32> {
        let m = self.m;
        let n = self.n_configs();
        // Per configuration, the benchmarks it has a cell in, each counted once (`seen`
        // holds the last one counted): a count, not a set per benchmark intersected with
        // the others, as that costs every configuration for every benchmark.
        let mut count = vec![0u32; n];
        let mut seen = vec![0u32; n];
        let mut benches = 0u32;
        let (mut cur_bench, mut cur_item) = (None, None);
        for cell in self.cells(model) {
            // The cells come item by item: a benchmark changes only where the item does.
            let item = m.cell_item.get(cell as usize);
            if cur_item != Some(item) {
                cur_item = Some(item);
                let bench = m.items[item as usize].benchmark;
                if cur_bench != Some(bench) {
                    cur_bench = Some(bench);
                    benches += 1;
                }
            }
            // Every cell of the selection has a local number.
            if let Some(local) = self.local(m.cell_config.get(cell as usize))
                && seen[local] != benches
            {
                seen[local] = benches;
                count[local] += 1;
            }
        }
        (0..n)
            .filter(|&i| benches > 0 && count[i] == benches)
            .map(|i| self.config_at(i))
            .collect()
    }

    /// Walks one model's selected cells item by item. For each item, `row` holds the cell of
    /// each grid column (or `None`); returns the items whose row is complete, their cells
    /// (row-major), every item with any selected cell, and which configurations occurred
    /// (by local number).
    fn rows(&self, model: u32, col_of: &[Option<usize>], k: usize) -> Rows {
        let m = self.m;
        let mut out = Rows {
            items: Vec::new(),
            cells: Vec::new(),
            candidates: Vec::new(),
            present: vec![false; self.n_configs()],
        };
        let mut row: Vec<Option<u32>> = vec![None; k];
        let mut cur_item = None;
        let flush = |item: u32, row: &mut Vec<Option<u32>>, out: &mut Rows| {
            out.candidates.push(item);
            if row.iter().all(Option::is_some) {
                out.items.push(item);
                out.cells.extend(row.iter().map(|c| c.unwrap_or(0)));
            }
            row.iter_mut().for_each(|c| *c = None);
        };
        for cell in self.cells(model) {
            let item = m.cell_item.get(cell as usize);
            if cur_item != Some(item) {
                if let Some(prev) = cur_item {
                    flush(prev, &mut row, &mut out);
                }
                cur_item = Some(item);
            }
            let Some(local) = self.local(m.cell_config.get(cell as usize)) else {
                continue;
            };
            out.present[local] = true;
            if let Some(col) = col_of[local] {
                row[col] = Some(cell);
            }
        }
        if let Some(prev) = cur_item {
            flush(prev, &mut row, &mut out);
        }
        out
    }
}

struct Rows {
    items: Vec<u32>,
    cells: Vec<u32>,
    candidates: Vec<u32>,
    present: Vec<bool>,
}

/// The most configurations a selection may have for [`Selection::table_into`].
const TABLE_MAX_CONFIGS: usize = 32;

/// One model's selected cells gathered in one walk, item by item: what
/// [`Selection::avail`] and [`Selection::rows`] each walk the cells for.
#[derive(Default)]
struct Table {
    /// Each item with a selected cell, in item order.
    items: Vec<u32>,
    /// Per item, a bit for each configuration (local number) it has a selected cell of.
    masks: Vec<u32>,
    /// Per item, the cell of each configuration (`u32::MAX` for none).
    cells: Vec<u32>,
    /// Configurations of the selection.
    n: usize,
}

impl Selection<'_> {
    /// Fills `t` with the [`Table`] of a model (its buffers reused from model to model);
    /// false, and `t` untouched, when the selection has more than [`TABLE_MAX_CONFIGS`]
    /// configurations (a row a configuration wide stays small).
    fn table_into(&self, model: u32, t: &mut Table) -> bool {
        let n = self.n_configs();
        if n > TABLE_MAX_CONFIGS {
            return false;
        }
        let m = self.m;
        t.items.clear();
        t.masks.clear();
        t.cells.clear();
        t.n = n;
        for cell in self.cells(model) {
            let item = m.cell_item.get(cell as usize);
            if t.items.last() != Some(&item) {
                t.items.push(item);
                t.masks.push(0);
                t.cells.resize(t.cells.len() + n, u32::MAX);
            }
            let Some(local) = self.local(m.cell_config.get(cell as usize)) else {
                continue;
            };
            if let Some(mask) = t.masks.last_mut() {
                *mask |= 1 << local;
            }
            let row = t.cells.len() - n;
            t.cells[row + local] = cell;
        }
        true
    }

    /// [`Selection::avail`] from a model's table.
    fn avail_of(&self, t: &Table) -> Vec<u32> {
        let mut all: Option<u32> = None;
        let (mut cur, mut cur_bench) = (0u32, None);
        for (&item, &mask) in t.items.iter().zip(&t.masks) {
            let bench = self.m.items[item as usize].benchmark;
            if cur_bench != Some(bench) {
                if cur_bench.is_some() {
                    all = Some(all.map_or(cur, |a| a & cur));
                }
                (cur, cur_bench) = (0, Some(bench));
            }
            cur |= mask;
        }
        if cur_bench.is_some() {
            all = Some(all.map_or(cur, |a| a & cur));
        }
        let all = all.unwrap_or(0);
        (0..t.n)
            .filter(|&i| all & (1 << i) != 0)
            .map(|i| self.config_at(i))
            .collect()
    }

    /// [`Selection::rows`] from a model's table.
    fn rows_of(t: &Table, col_of: &[Option<usize>], k: usize) -> Rows {
        let mut local_of = vec![0usize; k];
        let mut need = 0u32;
        for (local, col) in col_of.iter().enumerate() {
            if let Some(col) = *col {
                local_of[col] = local;
                need |= 1 << local;
            }
        }
        let seen = t.masks.iter().fold(0, |a, &m| a | m);
        let mut out = Rows {
            items: Vec::new(),
            cells: Vec::new(),
            candidates: t.items.clone(),
            present: (0..t.n).map(|i| seen & (1 << i) != 0).collect(),
        };
        for (i, (&item, &mask)) in out.candidates.iter().zip(&t.masks).enumerate() {
            if mask & need == need {
                out.items.push(item);
                let row = &t.cells[i * t.n..(i + 1) * t.n];
                out.cells.extend(local_of.iter().map(|&l| row[l]));
            }
        }
        out
    }
}

/// A configuration's name, shared: a grid names each configuration once, and the report's
/// lists of configurations (grid, ladder, churn steps) hold references to it, which keeps a
/// grid of a million configurations to one string each.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(pub std::sync::Arc<str>);

impl Name {
    /// The configuration's id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name(s.into())
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// A grid: models, configurations in grid order with their comparison budgets, and items.
#[derive(Debug, Clone)]
pub struct GridSpec {
    /// Ids of the grid's models.
    pub models: Vec<u32>,
    /// Config ids in grid order.
    pub configs: Vec<u32>,
    /// Their names, in grid order.
    pub names: Vec<Name>,
    /// Comparison budgets `b(c)`.
    pub budgets: Vec<f64>,
    /// Whether each column is a resolution variant rather than on the ladder.
    pub is_variant: Vec<bool>,
    /// `P_ref`, the ladder's pixel count, when defined.
    pub reference_pixels: Option<u64>,
    /// Index of `c_top`, the last ladder configuration; `None` for an empty grid.
    pub top: Option<usize>,
    /// Configurations of the candidate cells not in the grid, by (own budget, id).
    pub dropped: Vec<u32>,
    /// Items with any selected cell of the grid's models.
    pub n_items_candidate: usize,
    /// Item ids of the grid, in item order: those with a valid cell in every column.
    pub items: Vec<u32>,
    /// The configurations in comparison-budget order, which counts comparable pairs
    /// without building them (`BudgetOrder::new(&budgets)`).
    pub budget_order: BudgetOrder,
}

impl GridSpec {
    /// Configurations (columns) of the grid.
    pub fn k(&self) -> usize {
        self.configs.len()
    }

    /// Items (rows) of the grid.
    pub fn n(&self) -> usize {
        self.items.len()
    }

    /// `a ≺ b`: a strictly lower comparison budget.
    pub fn lower(&self, a: usize, b: usize) -> bool {
        self.budgets[a] < self.budgets[b]
    }

    /// `comparable_pairs = #{(a, b) : a ≺ b}` (docs/measures.md §2.5), counted in O(K).
    pub fn comparable_pairs(&self) -> usize {
        self.budget_order.comparable_pairs() as usize
    }

    /// Ladder columns in grid order.
    pub fn ladder(&self) -> Vec<usize> {
        (0..self.k()).filter(|&i| !self.is_variant[i]).collect()
    }

    /// The name of a grid column's configuration.
    pub fn name(&self, col: usize) -> Name {
        self.names[col].clone()
    }

    /// The frame cost of a grid column's configuration.
    pub fn frames(&self, m: &ResponseMatrix, col: usize) -> u64 {
        m.config(self.configs[col]).frames
    }

    /// The serialisable form, with names.
    pub fn to_json(&self, m: &ResponseMatrix) -> GridJson {
        let name = |c: &u32| m.config(*c).name.to_string();
        let cols = |pred: &dyn Fn(usize) -> bool| -> Vec<Name> {
            (0..self.k())
                .filter(|&i| pred(i))
                .map(|i| self.name(i))
                .collect()
        };
        GridJson {
            models: self
                .models
                .iter()
                .map(|&mo| m.models.name(mo).to_string())
                .collect(),
            configs: self.names.clone(),
            budgets: self.budgets.iter().map(|&b| Num(b)).collect(),
            own_budgets: self
                .configs
                .iter()
                .map(|&c| Num(m.config(c).budget))
                .collect(),
            frames: self.configs.iter().map(|&c| m.config(c).frames).collect(),
            pixels: self.configs.iter().map(|&c| m.config(c).pixels).collect(),
            reference_pixels: self.reference_pixels,
            ladder: cols(&|i| !self.is_variant[i]),
            variants: cols(&|i| self.is_variant[i]),
            top: self.top.map(|t| name(&self.configs[t])),
            zero_frame_configs: cols(&|i| m.config(self.configs[i]).frames == 0),
            dropped_configs: self.dropped.iter().map(name).collect(),
            comparable_pairs: self.comparable_pairs(),
            n_items_candidate: self.n_items_candidate,
            n_items: self.n(),
        }
    }
}

/// A number printed as an integer when it is one (budgets), else as a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num(pub f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0.abs() < 9.0e15 {
            s.serialize_i64(self.0 as i64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

/// The GRID object of the report (docs/measures.md §12).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GridJson {
    /// The grid's models.
    pub models: Vec<String>,
    /// Configurations in grid order.
    pub configs: Vec<Name>,
    /// Comparison budgets, in grid order.
    pub budgets: Vec<Num>,
    /// The configurations' own budgets, in grid order.
    pub own_budgets: Vec<Num>,
    /// Frame costs, in grid order.
    pub frames: Vec<u64>,
    /// Pixel budgets, in grid order.
    pub pixels: Vec<Option<u64>>,
    /// `P_ref`, when defined.
    pub reference_pixels: Option<u64>,
    /// Ladder configurations, in grid order.
    pub ladder: Vec<Name>,
    /// Resolution variants, in grid order.
    pub variants: Vec<Name>,
    /// The top configuration; `None` for an empty grid.
    pub top: Option<String>,
    /// Zero-frame configurations, in grid order.
    pub zero_frame_configs: Vec<Name>,
    /// Configurations of the candidate cells not in the grid.
    pub dropped_configs: Vec<String>,
    /// Ordered pairs with a strictly lower and a higher budget.
    pub comparable_pairs: usize,
    /// Items with any selected cell of the grid's models.
    pub n_items_candidate: usize,
    /// Items of the grid.
    pub n_items: usize,
}

/// A model left out of an analysis, and why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Excluded {
    /// The model's name.
    pub model: String,
    /// `missing_configs` or `empty_grid`.
    pub reason: &'static str,
    /// For `missing_configs`, the filter's configurations it lacks, in filter order.
    pub configs: Vec<String>,
}

/// Configurations in grid order with their comparison budgets, variant flags, `P_ref` and
/// the index of `c_top`.
struct Ordered {
    configs: Vec<u32>,
    budgets: Vec<f64>,
    is_variant: Vec<bool>,
    reference_pixels: Option<u64>,
    top: Option<usize>,
}

/// Puts configurations into grid order and splits ladder from variants (docs/measures.md §2.4-2.5).
fn order(m: &ResponseMatrix, configs: &[u32], params: &Params) -> Ordered {
    let visual: Vec<u32> = configs
        .iter()
        .copied()
        .filter(|&c| m.config(c).frames > 0)
        .collect();
    let carries = |p: u64| {
        visual
            .iter()
            .filter(|&&c| m.config(c).pixels == Some(p))
            .count()
    };
    let p_ref = match params.reference_pixels {
        ReferencePixels::None => None,
        ReferencePixels::Value(v) => Some(v),
        ReferencePixels::Auto => {
            let mut values: Vec<u64> = visual.iter().filter_map(|&c| m.config(c).pixels).collect();
            values.sort_unstable();
            // Most carried; ties to the smallest value (values are ascending, so keep the
            // first maximum). Counted by runs of the sorted values, not value by value, so
            // that many distinct values stay O(K log K).
            let mut best: Option<(usize, u64)> = None;
            for run in values.chunk_by(|a, b| a == b) {
                if best.is_none_or(|(bn, _)| run.len() > bn) {
                    best = Some((run.len(), run[0]));
                }
            }
            best.map(|(_, v)| v)
        }
    }
    .filter(|&p| carries(p) > 0);
    let is_variant = |c: u32| {
        let cfg = m.config(c);
        cfg.frames > 0 && p_ref.is_some() && cfg.pixels.is_some() && cfg.pixels != p_ref
    };
    let budget = |c: u32| {
        let cfg = m.config(c);
        if is_variant(c) && params.variant_budget == VariantBudget::Zero {
            0.0
        } else {
            cfg.budget
        }
    };
    let mut sorted: Vec<u32> = configs.to_vec();
    // Config ids of one protocol are in name order, so (budget, id) is (budget, name).
    sorted.sort_by(|&a, &b| {
        (is_variant(a), budget(a))
            .partial_cmp(&(is_variant(b), budget(b)))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let variants: Vec<bool> = sorted.iter().map(|&c| is_variant(c)).collect();
    let budgets = sorted.iter().map(|&c| budget(c)).collect();
    let top = variants.iter().rposition(|v| !v);
    Ordered {
        configs: sorted,
        budgets,
        is_variant: variants,
        reference_pixels: p_ref,
        top,
    }
}

fn by_own_budget(m: &ResponseMatrix, configs: &mut [u32]) {
    configs.sort_by(|&a, &b| {
        m.config(a)
            .budget
            .partial_cmp(&m.config(b).budget)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
}

/// One model's grid and the cells of its items, row-major (`n x k`).
#[derive(Debug, Clone)]
pub struct ModelGrid {
    /// The model's id.
    pub model: u32,
    /// The grid, shared by every model in joint mode.
    pub grid: std::sync::Arc<GridSpec>,
    /// `cells[i * k + c]`: the cell of grid item `i` under column `c`.
    pub cells: Vec<u32>,
}

/// The grids of one analysis.
#[derive(Debug, Clone, Default)]
pub struct Grids {
    /// The shared grid in joint mode.
    pub joint: Option<std::sync::Arc<GridSpec>>,
    /// Models left out, and why.
    pub excluded: Vec<Excluded>,
    /// Models with metrics, in name order.
    pub models: Vec<ModelGrid>,
}

/// Builds the grids of an analysis (docs/measures.md §2.3).
pub fn build_grids(sel: &Selection<'_>, params: &Params) -> Grids {
    let m = sel.m;
    let mut out = Grids::default();
    let models = sel.models();
    // With a config filter, the filter's configurations (None for an id the protocol lacks).
    let filter: Option<Vec<(String, Option<u32>)>> = params.configs.as_ref().map(|f| {
        f.iter()
            .map(|name| (name.clone(), m.find_config(sel.key.protocol, name)))
            .collect()
    });
    let filter_ids: Option<Vec<u32>> = filter.as_ref().map(|f| {
        let mut ids: Vec<u32> = f.iter().filter_map(|(_, id)| *id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    });
    // A grid's configurations are available to a model, so each has a local number.
    let col_map = |configs: &[u32]| {
        let mut col_of = vec![None; sel.n_configs()];
        for (i, &c) in configs.iter().enumerate() {
            if let Some(local) = sel.local(c) {
                col_of[local] = Some(i);
            }
        }
        col_of
    };
    let names = |configs: &[u32]| -> Vec<Name> {
        configs
            .iter()
            .map(|&c| Name::from(&*m.config(c).name))
            .collect()
    };
    let dropped = |present: &[bool], configs: &[u32]| {
        // A set, not `configs.contains`: grids may have a million configurations.
        let mut in_grid = vec![false; present.len()];
        for &c in configs {
            if let Some(local) = sel.local(c) {
                in_grid[local] = true;
            }
        }
        let mut d: Vec<u32> = present
            .iter()
            .enumerate()
            .filter(|&(i, p)| *p && !in_grid[i])
            .map(|(i, _)| sel.config_at(i))
            .collect();
        by_own_budget(m, &mut d);
        d
    };

    // The grid of ordered configurations, for `models` and `items` (of `n_items_candidate`
    // with a selected cell), with the configurations `present` beside them but left out.
    let spec = |ordered: Ordered,
                models: Vec<u32>,
                present: &[bool],
                n_items_candidate: usize,
                items: Vec<u32>| {
        let Ordered {
            configs,
            budgets,
            is_variant,
            reference_pixels,
            top,
        } = ordered;
        GridSpec {
            models,
            dropped: dropped(present, &configs),
            budget_order: BudgetOrder::new(&budgets),
            names: names(&configs),
            configs,
            budgets,
            is_variant,
            reference_pixels,
            top,
            n_items_candidate,
            items,
        }
    };

    let mut kept = Vec::new();
    let mut avails = Vec::new();
    // A per-model grid walks its model's cells once, into a table, where it can; the
    // table's buffers go from model to model.
    let mut table = Table::default();
    for &mo in &models {
        let tabled = params.grid_mode == GridMode::PerModel && sel.table_into(mo, &mut table);
        let avail = if tabled {
            sel.avail_of(&table)
        } else {
            sel.avail(mo)
        };
        if let Some(f) = &filter {
            let missing: Vec<String> = f
                .iter()
                .filter(|(_, id)| id.is_none_or(|id| avail.binary_search(&id).is_err()))
                .map(|(name, _)| name.clone())
                .collect();
            if !missing.is_empty() {
                out.excluded.push(Excluded {
                    model: m.models.name(mo).to_string(),
                    reason: "missing_configs",
                    configs: missing,
                });
                continue;
            }
        }
        if params.grid_mode == GridMode::Joint {
            kept.push(mo);
            avails.push(avail);
            continue;
        }
        let ordered = order(m, &filter_ids.clone().unwrap_or(avail), params);
        let col_of = col_map(&ordered.configs);
        let k = ordered.configs.len();
        let rows = if tabled {
            Selection::rows_of(&table, &col_of, k)
        } else {
            sel.rows(mo, &col_of, k)
        };
        let n_candidates = rows.candidates.len();
        let grid = spec(ordered, vec![mo], &rows.present, n_candidates, rows.items);
        if grid.n() == 0 || grid.k() == 0 {
            out.excluded.push(Excluded {
                model: m.models.name(mo).to_string(),
                reason: "empty_grid",
                configs: Vec::new(),
            });
            continue;
        }
        out.models.push(ModelGrid {
            model: mo,
            grid: std::sync::Arc::new(grid),
            cells: rows.cells,
        });
    }
    drop(table);

    match params.grid_mode {
        GridMode::PerModel => out.excluded.sort_by(|a, b| a.model.cmp(&b.model)),
        GridMode::Joint if kept.is_empty() => {}
        GridMode::Joint => {
            let configs = filter_ids.unwrap_or_else(|| {
                let mut it = avails.iter();
                let first = it.next().cloned().unwrap_or_default();
                it.fold(first, |acc, a| {
                    acc.into_iter()
                        .filter(|c| a.binary_search(c).is_ok())
                        .collect()
                })
            });
            let ordered = order(m, &configs, params);
            let col_of = col_map(&ordered.configs);
            let k = ordered.configs.len();
            let rows: Vec<Rows> = kept.iter().map(|&mo| sel.rows(mo, &col_of, k)).collect();
            let mut candidates: Vec<u32> = rows
                .iter()
                .flat_map(|r| r.candidates.iter().copied())
                .collect();
            candidates.sort_unstable();
            candidates.dedup();
            // With no configuration every candidate vacuously has all its cells.
            let mut items: Vec<u32> = if k == 0 {
                candidates.clone()
            } else {
                rows.first().map(|r| r.items.clone()).unwrap_or_default()
            };
            for r in rows.iter().skip(1) {
                items.retain(|i| r.items.binary_search(i).is_ok());
            }
            let mut present = vec![false; sel.n_configs()];
            for r in &rows {
                present
                    .iter_mut()
                    .zip(&r.present)
                    .for_each(|(a, b)| *a |= *b);
            }
            let grid = std::sync::Arc::new(spec(
                ordered,
                kept.clone(),
                &present,
                candidates.len(),
                items,
            ));
            if grid.n() > 0 && grid.k() > 0 {
                for (&mo, r) in kept.iter().zip(&rows) {
                    // Keep the rows of the shared items only (both lists are in item order).
                    let mut cells = Vec::with_capacity(grid.n() * k);
                    let mut j = 0;
                    for (ri, &item) in r.items.iter().enumerate() {
                        if j < grid.items.len() && grid.items[j] == item {
                            cells.extend_from_slice(&r.cells[ri * k..(ri + 1) * k]);
                            j += 1;
                        }
                    }
                    out.models.push(ModelGrid {
                        model: mo,
                        grid: grid.clone(),
                        cells,
                    });
                }
            }
            out.joint = Some(grid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::load::cells::read_cells;
    use crate::core::matrix::MatrixBuilder;

    proptest::proptest! {
        /// A model's table gives the configurations and rows that walking its cells twice
        /// gives: any scope, missing and invalid cells, zero-frame configurations in or out.
        #[test]
        fn a_models_table_gives_what_its_walks_give(
            cells in proptest::collection::vec(
                (0u8..2, 0u8..3, 0u8..6, 0u8..5, 0u8..3),
                1..80,
            ),
            include_zero_frame: bool,
        ) {
            let mut lines = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (model, bench, item, cfg, value) in cells {
                if !seen.insert((model, bench, item, cfg)) {
                    continue;
                }
                let frames = [0, 4, 8, 16, 32][cfg as usize];
                // A cell without gold answer is invalid.
                let gold = match value {
                    0 => r#","gold":"A""#,
                    1 => r#","gold":"B""#,
                    _ => "",
                };
                lines.push(format!(
                    r#"{{"model":"m{model}","benchmark":"b{bench}","item_id":"q{item}","config":"c{cfg}","frames":{frames},"pred":"A"{gold}}}"#
                ));
            }
            let mut b = MatrixBuilder::new();
            let file = b.add_file(std::path::Path::new("t.jsonl"));
            read_cells(lines.join("\n").as_bytes(), None, &mut b, &file).expect("io");
            let m = b.finish().expect("valid").0;
            let params = Params {
                include_zero_frame,
                ..Params::default()
            };
            let scopes = std::iter::once(Scope::All)
                .chain((0..m.benchmarks.len() as u32).map(Scope::Benchmark));
            for scope in scopes {
                let key = AnalysisKey { protocol: 0, task: Task::Mcq, scope };
                let sel = Selection::new(&m, key, &params);
                // One table, reused from model to model as the grids reuse it.
                let mut t = Table::default();
                for model in 0..m.models.len() as u32 {
                    proptest::prop_assert!(sel.table_into(model, &mut t));
                    let avail = sel.avail(model);
                    proptest::prop_assert_eq!(&sel.avail_of(&t), &avail);
                    // The grid of every other available configuration, last first.
                    let configs: Vec<u32> = avail.iter().rev().step_by(2).copied().collect();
                    let mut col_of = vec![None; sel.n_configs()];
                    for (i, &c) in configs.iter().enumerate() {
                        col_of[sel.local(c).expect("an available configuration")] = Some(i);
                    }
                    let walked = sel.rows(model, &col_of, configs.len());
                    let tabled = Selection::rows_of(&t, &col_of, configs.len());
                    proptest::prop_assert_eq!(&tabled.items, &walked.items);
                    proptest::prop_assert_eq!(&tabled.cells, &walked.cells);
                    proptest::prop_assert_eq!(&tabled.candidates, &walked.candidates);
                    proptest::prop_assert_eq!(&tabled.present, &walked.present);
                }
            }
        }
    }
}
