//! Every measure of docs/measures.md, run over every analysis of a response matrix, and the report
//! of §12 that carries them.

pub mod agreement;
pub mod bootstrap;
pub mod cascade;
pub mod exact;
pub mod grid;
pub mod intervention;
pub mod mcq;
pub mod noise;
pub mod open;
pub mod pairs;
pub mod params;

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use self::agreement::{Agreement, cohen};
use self::cascade::{Cascade, Pooled, StageData};
use self::grid::{
    AnalysisKey, Excluded, GridJson, Grids, ModelGrid, Scope, Selection, build_grids,
};
use self::mcq::{McqBootstrap, McqMetrics};
use self::open::{OpenBootstrap, OpenMetrics};
use self::params::{GridMode, Params, ParamsJson};
use crate::core::matrix::{ResponseMatrix, Task};

/// The `spec_version` of the report: the version of docs/measures.md it follows.
pub const SPEC_VERSION: &str = "traj-metrics/2.1";

/// `100 · count / denominator`, `None` for a zero denominator (docs/measures.md §0).
pub fn pct(count: usize, denom: usize) -> Option<f64> {
    (denom != 0).then(|| 100.0 * count as f64 / denom as f64)
}

/// A bootstrap percentile interval.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Interval {
    /// The 2.5 % percentile.
    pub lo: f64,
    /// The 97.5 % percentile.
    pub hi: f64,
}

/// Counts keyed by name, serialised as a JSON object in the given order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderedCounts(pub Vec<(String, usize)>);

impl Serialize for OrderedCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The measures of one model in one analysis.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Metrics {
    /// A multiple-choice analysis's measures.
    Mcq(Box<McqMetrics>),
    /// An open-ended analysis's measures.
    Open(Box<OpenMetrics>),
}

/// One analysis: its grids and every model's measures. The grids and measures are shared:
/// where a protocol and task hold a single benchmark, `ALL` selects the same cells as that
/// benchmark, and the two analyses hold one copy (see [`run`]).
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The (protocol, task, scope) analysed.
    pub key: AnalysisKey,
    /// Its grids and excluded models.
    pub grids: Arc<Grids>,
    /// Parallel to `grids.models`.
    pub metrics: Arc<[Metrics]>,
    /// The cascade over every (model, item) of a joint grid; `None` otherwise.
    pub pooled_cascade: Option<Pooled>,
}

impl Analysis {
    /// Finds a model's grid and measures.
    pub fn model(&self, model: u32) -> Option<(&ModelGrid, &Metrics)> {
        let i = self.grids.models.iter().position(|g| g.model == model)?;
        Some((&self.grids.models[i], &self.metrics[i]))
    }
}

/// Everything a run computes.
#[derive(Debug, Clone)]
pub struct Report {
    /// The parameters of the run.
    pub params: Params,
    /// Every analysis, in report order.
    pub analyses: Vec<Analysis>,
    /// Membership stability between the primary and each other protocol.
    pub protocol_comparisons: Vec<ProtocolComparison>,
    /// Agreement between annotators, when annotations were given.
    pub agreement: Option<Agreement>,
}

/// Membership stability of one model between the primary and another protocol (§10).
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolComparison {
    /// `mcq` or `open`.
    pub task: &'static str,
    /// `ALL` or the benchmark's name.
    pub scope: String,
    /// The model compared.
    pub model: String,
    /// The primary protocol.
    pub protocol_a: String,
    /// The other protocol.
    pub protocol_b: String,
    /// Items in both protocols' grids.
    pub n_common: usize,
    /// Percent of the common items flagged under `protocol_a`.
    pub rate_a: Option<f64>,
    /// Percent of the common items flagged under `protocol_b`.
    pub rate_b: Option<f64>,
    /// Common items flagged under both.
    pub both: usize,
    /// Common items flagged under `protocol_a` only.
    pub only_a: usize,
    /// Common items flagged under `protocol_b` only.
    pub only_b: usize,
    /// `both / (both + only_a + only_b)`; `None` for an empty union.
    pub jaccard: Option<f64>,
    /// Cohen's kappa of the two flag vectors.
    pub kappa: Option<f64>,
    /// Observed agreement of the two flag vectors.
    pub p_o: Option<f64>,
}

/// The analyses of a run, in report order: primary protocol first, then the others by
/// name (never an intervention protocol); `mcq` before `open`; `ALL` before benchmarks.
pub fn analysis_keys(m: &ResponseMatrix, params: &Params) -> Vec<AnalysisKey> {
    let mut protocols: Vec<u32> = (0..m.protocols.len() as u32)
        .filter(|&p| params.intervention_strategy(m.protocols.name(p)).is_none())
        .collect();
    protocols.sort_by_key(|&p| (m.protocols.name(p) != params.primary, m.protocols.name(p)));
    let mut keys = Vec::new();
    for p in protocols {
        // Every benchmark of the protocol's cells, valid or not and before the filters: an
        // analysis whose filters leave nothing is reported empty.
        let mut has_cells = vec![false; m.benchmarks.len()];
        for mo in 0..m.models.len() as u32 {
            for &c in m.group(p, mo) {
                has_cells[m.items[m.cell_item.get(c as usize) as usize].benchmark as usize] = true;
            }
        }
        for task in [Task::Mcq, Task::Open] {
            let all = AnalysisKey {
                protocol: p,
                task,
                scope: Scope::All,
            };
            let benches: Vec<u32> = (0..m.benchmarks.len() as u32)
                .filter(|&b| has_cells[b as usize] && m.bench_task[b as usize] == task)
                .collect();
            if benches.is_empty() {
                continue;
            }
            keys.push(all);
            keys.extend(benches.into_iter().map(|b| AnalysisKey {
                protocol: p,
                task,
                scope: Scope::Benchmark(b),
            }));
        }
    }
    keys
}

/// Computes one model's measures on its grid.
fn model_metrics(
    m: &ResponseMatrix,
    key: &AnalysisKey,
    mg: &ModelGrid,
    params: &Params,
) -> Metrics {
    let clusters = clusters_of(m, mg, params);
    let n_units = clusters.as_ref().map_or(mg.grid.n(), |c| c.len());
    match key.task {
        Task::Mcq => {
            let mut x = mcq::compute(m, mg);
            let k = mg.grid.k();
            x.cascade = cascade_of(m, mg, params).1;
            let harmful: Vec<bool> = x.items.harmful_pairs.iter().map(|&h| h > 0).collect();
            let intervals = bootstrap::mcq_clustered(
                &x.items.y,
                k,
                &harmful,
                &x.items.terminal,
                params.bootstrap_b,
                params.seed,
                clusters.as_ref(),
            );
            x.terminal_interval = intervals.map(|i| i.terminal_rate);
            x.bootstrap = intervals.map(|i| McqBootstrap {
                b: params.bootstrap_b,
                seed: params.seed,
                cluster: params.cluster_bootstrap,
                clusters: n_units,
                headroom: i.headroom,
                harmful_rate: i.harmful_rate,
            });
            if !m.replicates.cells.is_empty() {
                let (names, selected) = noise::selection(m, params.nuisances.as_deref());
                let canonical = noise::Canonical {
                    y: &x.items.y,
                    harmful_pairs: &x.items.harmful_pairs,
                    churn: x
                        .churn
                        .iter()
                        .map(|c| {
                            (
                                c.from.clone(),
                                c.to.clone(),
                                c.correct_to_wrong,
                                c.wrong_to_correct,
                            )
                        })
                        .collect(),
                };
                x.replicates = noise::compute(m, mg, &canonical, (&names, &selected), params.alpha);
            }
            if m.protocols.name(key.protocol) == params.primary {
                x.interventions = intervention::per_protocol(m, params, mg, &x.items);
                // The intervention protocol itself is one of them (§11's `intervention`).
                x.intervention = x
                    .interventions
                    .iter()
                    .find(|v| v.strategy.is_none() && v.recovery.items_with_intervention > 0)
                    .map(|v| v.recovery.clone());
            }
            Metrics::Mcq(Box::new(x))
        }
        Task::Open => {
            let mut x = open::compute(m, mg, params.delta);
            x.bootstrap = bootstrap::open(
                &x.items.s,
                mg.grid.k(),
                &x.items.has_regression,
                params.bootstrap_b,
                params.seed,
                clusters.as_ref(),
            )
            .map(|(oracle_gap, regression_rate)| OpenBootstrap {
                b: params.bootstrap_b,
                seed: params.seed,
                cluster: params.cluster_bootstrap,
                clusters: n_units,
                oracle_gap,
                regression_rate,
            });
            Metrics::Open(Box::new(x))
        }
    }
}

/// The clusters a cluster bootstrap resamples (docs/measures.md §16.6): the grid's items by
/// the cluster their cells (or their video) give; `None` for the bootstrap over items.
fn clusters_of(m: &ResponseMatrix, mg: &ModelGrid, params: &Params) -> Option<bootstrap::Clusters> {
    if !params.cluster_bootstrap {
        return None;
    }
    let keys: Vec<Option<u32>> = mg
        .grid
        .items
        .iter()
        .map(|&it| m.replicates.cluster_id(it))
        .collect();
    Some(bootstrap::Clusters::of(&keys))
}

/// A model's cascade and the stage data it was computed from.
fn cascade_of(
    m: &ResponseMatrix,
    mg: &ModelGrid,
    params: &Params,
) -> (Option<StageData>, Option<Cascade>) {
    let Some(cols) = cascade::stage_columns(m, mg, params.cascade_stages.as_deref()) else {
        return (None, None);
    };
    let data = cascade::stage_data(m, mg, &cols);
    if !data.defined() {
        // No names to build (a million stages would be a million strings).
        return (Some(data), None);
    }
    let names = cols.iter().map(|&c| mg.grid.name(c)).collect();
    let frames = cols.iter().map(|&c| mg.grid.frames(m, c)).collect();
    let c = cascade::cascade(&data, names, frames, params.sweep);
    (Some(data), c)
}

/// The pooled cascade of a joint grid: one τ over every (model, item).
fn pooled_cascade(
    m: &ResponseMatrix,
    grids: &Grids,
    metrics: &[Metrics],
    params: &Params,
) -> Option<Pooled> {
    if grids.models.is_empty() {
        return None;
    }
    let mut pooled = StageData::default();
    let mut first: Option<&Cascade> = None;
    for (mg, x) in grids.models.iter().zip(metrics) {
        let Metrics::Mcq(x) = x else { return None };
        let c = x.cascade.as_ref()?;
        first.get_or_insert(c);
        let (data, _) = cascade_of(
            m,
            mg,
            &Params {
                sweep: false,
                ..params.clone()
            },
        );
        pooled.append(&data?);
    }
    let first = first?;
    let cascade = cascade::cascade(
        &pooled,
        first.stages.clone(),
        first.stage_frames.clone(),
        params.sweep,
    )?;
    Some(Pooled {
        n: pooled.n(),
        cascade,
    })
}

/// Runs `f` over `jobs` on up to `threads` threads, keeping the jobs' order.
fn parallel_map<T: Sync, R: Send>(
    jobs: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || jobs.len() <= 1 {
        return jobs.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<R>> = (0..jobs.len()).map(|_| None).collect();
    let chunks: Vec<Vec<(usize, R)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.min(jobs.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= jobs.len() {
                            break;
                        }
                        out.push((i, f(&jobs[i])));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    for (i, r) in chunks.into_iter().flatten() {
        results[i] = Some(r);
    }
    results.into_iter().flatten().collect()
}

/// The analyses that are computed: an `ALL` key whose protocol and task hold exactly one
/// benchmark selects the same cells as that benchmark's key (the scope only chooses
/// benchmarks), so it takes that key's results: the key it copies, per key.
fn shared_scopes(keys: &[AnalysisKey]) -> Vec<Option<usize>> {
    keys.iter()
        .map(|key| {
            if key.scope != Scope::All {
                return None;
            }
            let mut benches = keys.iter().enumerate().filter(|(_, b)| {
                b.protocol == key.protocol && b.task == key.task && b.scope != Scope::All
            });
            match (benches.next(), benches.next()) {
                (Some((b, _)), None) => Some(b),
                _ => None,
            }
        })
        .collect()
}

/// An analysis's results, shared by the keys that select the same cells.
type Computed = (Arc<Grids>, Arc<[Metrics]>, Option<Pooled>);

/// Runs every analysis of the matrix.
pub fn run(m: &ResponseMatrix, params: &Params, agreement: Option<Agreement>) -> Report {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let keys = analysis_keys(m, params);
    let same_as = shared_scopes(&keys);
    let computed: Vec<usize> = (0..keys.len()).filter(|&a| same_as[a].is_none()).collect();
    let grids: Vec<Grids> = parallel_map(&computed, threads, |&a| {
        build_grids(&Selection::new(m, keys[a], params), params)
    });
    let jobs: Vec<(usize, usize)> = grids
        .iter()
        .enumerate()
        .flat_map(|(g, grid)| (0..grid.models.len()).map(move |i| (g, i)))
        .collect();
    let mut metrics: Vec<Metrics> = parallel_map(&jobs, threads, |&(g, i)| {
        model_metrics(m, &keys[computed[g]], &grids[g].models[i], params)
    });
    let mut results: Vec<Option<Computed>> = vec![None; keys.len()];
    let mut drain = metrics.drain(..);
    for (&a, grids) in computed.iter().zip(grids) {
        let mut metrics: Vec<Metrics> = drain.by_ref().take(grids.models.len()).collect();
        let models: Vec<u32> = grids.models.iter().map(|g| g.model).collect();
        noise::fdr(&models, &mut metrics, params.alpha);
        let metrics: Arc<[Metrics]> = metrics.into();
        let key = keys[a];
        let pooled = if params.grid_mode == GridMode::Joint && key.task == Task::Mcq {
            pooled_cascade(m, &grids, &metrics, params)
        } else {
            None
        };
        results[a] = Some((Arc::new(grids), metrics, pooled));
    }
    for a in 0..keys.len() {
        if let Some(b) = same_as[a] {
            results[a] = results[b].clone();
        }
    }
    let analyses: Vec<Analysis> = keys
        .into_iter()
        .zip(results)
        .filter_map(|(key, r)| {
            let (grids, metrics, pooled_cascade) = r?;
            Some(Analysis {
                key,
                grids,
                metrics,
                pooled_cascade,
            })
        })
        .collect();
    let protocol_comparisons = compare_protocols(m, params, &analyses);
    Report {
        params: params.clone(),
        analyses,
        protocol_comparisons,
        agreement,
    }
}

/// Runs one analysis alone (the researcher views recompute a single key when the model
/// set or the zero-frame switch changes, instead of the whole report).
pub fn run_one(m: &ResponseMatrix, key: AnalysisKey, params: &Params) -> Analysis {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let grids = build_grids(&Selection::new(m, key, params), params);
    let mut metrics: Vec<Metrics> = parallel_map(&grids.models, threads, |mg| {
        model_metrics(m, &key, mg, params)
    });
    let models: Vec<u32> = grids.models.iter().map(|g| g.model).collect();
    noise::fdr(&models, &mut metrics, params.alpha);
    let pooled_cascade = if params.grid_mode == GridMode::Joint && key.task == Task::Mcq {
        pooled_cascade(m, &grids, &metrics, params)
    } else {
        None
    };
    Analysis {
        key,
        grids: Arc::new(grids),
        metrics: metrics.into(),
        pooled_cascade,
    }
}

/// Per-item flag of §10: `has_harmful` (MCQ) or `has_regression` (open), by grid item.
fn flags(x: &Metrics) -> Vec<bool> {
    match x {
        Metrics::Mcq(x) => x.items.harmful_pairs.iter().map(|&h| h > 0).collect(),
        Metrics::Open(x) => x.items.has_regression.clone(),
    }
}

/// Membership stability across protocols (docs/measures.md §10).
fn compare_protocols(
    m: &ResponseMatrix,
    params: &Params,
    analyses: &[Analysis],
) -> Vec<ProtocolComparison> {
    let mut out = Vec::new();
    let Some(primary) = m.protocols.get(&params.primary) else {
        return out;
    };
    // The other protocols' analyses by (task, scope), each list by protocol name: looked
    // up, not searched for, as there is an analysis per benchmark.
    let mut by_scope: rustc_hash::FxHashMap<(Task, Scope), Vec<&Analysis>> =
        rustc_hash::FxHashMap::default();
    for b in analyses.iter().filter(|b| b.key.protocol != primary) {
        by_scope
            .entry((b.key.task, b.key.scope))
            .or_default()
            .push(b);
    }
    for others in by_scope.values_mut() {
        others.sort_by_key(|b| m.protocols.name(b.key.protocol));
    }
    for a in analyses.iter().filter(|a| a.key.protocol == primary) {
        let others = by_scope
            .get(&(a.key.task, a.key.scope))
            .map_or(&[][..], Vec::as_slice);
        for &b in others {
            for (mg_a, x_a) in a.grids.models.iter().zip(a.metrics.iter()) {
                let Some((mg_b, x_b)) = b.model(mg_a.model) else {
                    continue;
                };
                let (fa, fb) = (flags(x_a), flags(x_b));
                let (ia, ib) = (&mg_a.grid.items, &mg_b.grid.items);
                let (mut va, mut vb) = (Vec::new(), Vec::new());
                let (mut i, mut j) = (0, 0);
                while i < ia.len() && j < ib.len() {
                    match ia[i].cmp(&ib[j]) {
                        std::cmp::Ordering::Less => i += 1,
                        std::cmp::Ordering::Greater => j += 1,
                        std::cmp::Ordering::Equal => {
                            va.push(fa[i]);
                            vb.push(fb[j]);
                            i += 1;
                            j += 1;
                        }
                    }
                }
                let count = |f: &dyn Fn(bool, bool) -> bool| {
                    va.iter().zip(&vb).filter(|&(&x, &y)| f(x, y)).count()
                };
                let both = count(&|x, y| x && y);
                let only_a = count(&|x, y| x && !y);
                let only_b = count(&|x, y| !x && y);
                let union = both + only_a + only_b;
                let (kappa, p_o, pos_a, pos_b) = cohen(&va, &vb);
                out.push(ProtocolComparison {
                    task: a.key.task.as_str(),
                    scope: a.key.scope_name(m).to_string(),
                    model: m.models.name(mg_a.model).to_string(),
                    protocol_a: m.protocols.name(a.key.protocol).to_string(),
                    protocol_b: m.protocols.name(b.key.protocol).to_string(),
                    n_common: va.len(),
                    rate_a: pct(pos_a, va.len()),
                    rate_b: pct(pos_b, va.len()),
                    both,
                    only_a,
                    only_b,
                    jaccard: (union > 0).then(|| both as f64 / union as f64),
                    kappa,
                    p_o,
                });
            }
        }
    }
    out
}

// ----- JSON -----

#[derive(Serialize)]
struct InputJson {
    records: u64,
    cells_valid: u64,
    cells_invalid: u64,
    zero_frame_cells: u64,
    blind_answers: usize,
    replicate_cells: u64,
    replicates_orphaned: u64,
    protocols: Vec<String>,
    models: Vec<String>,
    benchmarks: Vec<String>,
}

#[derive(Serialize)]
struct McqSummary<'a> {
    headroom_min: f64,
    headroom_max: f64,
    harmful_rate_min: f64,
    harmful_rate_max: f64,
    terminal_regression_rate_min: f64,
    terminal_regression_rate_max: f64,
    text_overwrite_rate_min: Option<f64>,
    text_overwrite_rate_max: Option<f64>,
    pooled_cascade: Option<&'a Pooled>,
}

#[derive(Serialize)]
struct OpenSummary {
    oracle_gap_min: f64,
    oracle_gap_max: f64,
    regression_rate_min: f64,
    regression_rate_max: f64,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Summary<'a> {
    Mcq(McqSummary<'a>),
    Open(OpenSummary),
}

fn min_max(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let lo = v.clone().fold(f64::INFINITY, f64::min);
    let hi = v.fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

fn opt_min_max(v: impl Iterator<Item = Option<f64>> + Clone) -> (Option<f64>, Option<f64>) {
    let vals = v.flatten();
    let lo = vals.clone().reduce(f64::min);
    let hi = vals.reduce(f64::max);
    (lo, hi)
}

impl Analysis {
    fn summary(&self) -> Option<Summary<'_>> {
        if self.metrics.is_empty() {
            return None;
        }
        match self.key.task {
            Task::Mcq => {
                let xs: Vec<&McqMetrics> = self
                    .metrics
                    .iter()
                    .filter_map(|x| match x {
                        Metrics::Mcq(x) => Some(&**x),
                        Metrics::Open(_) => None,
                    })
                    .collect();
                let (headroom_min, headroom_max) = min_max(xs.iter().map(|x| x.headroom));
                let (harmful_rate_min, harmful_rate_max) =
                    min_max(xs.iter().map(|x| x.harmful_rate));
                let (terminal_regression_rate_min, terminal_regression_rate_max) =
                    min_max(xs.iter().map(|x| x.terminal_regression_rate));
                let (text_overwrite_rate_min, text_overwrite_rate_max) =
                    opt_min_max(xs.iter().map(|x| x.text_overwrite.rate));
                Some(Summary::Mcq(McqSummary {
                    headroom_min,
                    headroom_max,
                    harmful_rate_min,
                    harmful_rate_max,
                    terminal_regression_rate_min,
                    terminal_regression_rate_max,
                    text_overwrite_rate_min,
                    text_overwrite_rate_max,
                    pooled_cascade: self.pooled_cascade.as_ref(),
                }))
            }
            Task::Open => {
                let xs: Vec<&OpenMetrics> = self
                    .metrics
                    .iter()
                    .filter_map(|x| match x {
                        Metrics::Open(x) => Some(&**x),
                        Metrics::Mcq(_) => None,
                    })
                    .collect();
                let (oracle_gap_min, oracle_gap_max) = min_max(xs.iter().map(|x| x.oracle_gap));
                let (regression_rate_min, regression_rate_max) =
                    min_max(xs.iter().map(|x| x.regression_rate));
                Some(Summary::Open(OpenSummary {
                    oracle_gap_min,
                    oracle_gap_max,
                    regression_rate_min,
                    regression_rate_max,
                }))
            }
        }
    }
}

/// Model name to measures, in name order.
struct ModelsJson<'a>(Vec<(&'a str, &'a Metrics)>);

impl Serialize for ModelsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct AnalysisJson<'a> {
    protocol: &'a str,
    task: &'static str,
    scope: &'a str,
    grid_mode: GridMode,
    grid: Option<GridJson>,
    excluded_models: &'a [Excluded],
    models: ModelsJson<'a>,
    summary: Option<Summary<'a>>,
}

#[derive(Serialize)]
struct ReportJson<'a> {
    spec_version: &'static str,
    params: ParamsJson<'a>,
    input: InputJson,
    analyses: Vec<AnalysisJson<'a>>,
    protocol_comparisons: &'a [ProtocolComparison],
    agreement: &'a Option<Agreement>,
}

impl Report {
    /// The report JSON of docs/measures.md §12.
    pub fn write_json(
        &self,
        m: &ResponseMatrix,
        out: impl Write,
        pretty: bool,
    ) -> serde_json::Result<()> {
        let names = |it: &crate::core::matrix::Interner| it.names().map(str::to_owned).collect();
        let json = ReportJson {
            spec_version: SPEC_VERSION,
            params: self.params.to_json(),
            input: InputJson {
                records: m.stats.records,
                cells_valid: m.stats.cells_valid,
                cells_invalid: m.stats.cells_invalid,
                zero_frame_cells: m.stats.zero_frame_cells,
                blind_answers: m.blind_answers(),
                replicate_cells: m.replicates.read,
                replicates_orphaned: m.replicates.orphaned,
                protocols: names(&m.protocols),
                models: names(&m.models),
                benchmarks: names(&m.benchmarks),
            },
            analyses: self
                .analyses
                .iter()
                .map(|a| AnalysisJson {
                    protocol: m.protocols.name(a.key.protocol),
                    task: a.key.task.as_str(),
                    scope: a.key.scope_name(m),
                    grid_mode: self.params.grid_mode,
                    grid: a.grids.joint.as_ref().map(|g| g.to_json(m)),
                    excluded_models: &a.grids.excluded,
                    models: ModelsJson(
                        a.grids
                            .models
                            .iter()
                            .zip(a.metrics.iter())
                            .map(|(mg, x)| (m.models.name(mg.model), x))
                            .collect(),
                    ),
                    summary: a.summary(),
                })
                .collect(),
            protocol_comparisons: &self.protocol_comparisons,
            agreement: &self.agreement,
        };
        if pretty {
            crate::core::text::json_to_writer_pretty(out, &json)
        } else {
            crate::core::text::json_to_writer(out, &json)
        }
    }

    /// The per-item export (§12): one JSON line per item of every benchmark-scope analysis.
    pub fn write_items(&self, m: &ResponseMatrix, mut out: impl Write) -> std::io::Result<()> {
        self.item_rows(m, |line| {
            crate::core::text::json_to_writer(&mut out, &line)?;
            out.write_all(b"\n")
        })
    }

    /// Hands each line of the per-item export (§12), as its fields, to `each`.
    pub fn item_rows(
        &self,
        m: &ResponseMatrix,
        mut each: impl FnMut(BTreeMap<&str, serde_json::Value>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        for a in &self.analyses {
            if a.key.scope == Scope::All {
                continue;
            }
            for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
                let g = &mg.grid;
                let k = g.k();
                let name = |c: usize| m.config(g.configs[c]).name.as_ref();
                for (i, &item) in g.items.iter().enumerate() {
                    let it = m.item(item);
                    let mut line: BTreeMap<&str, serde_json::Value> = BTreeMap::new();
                    line.insert("protocol", m.protocols.name(a.key.protocol).into());
                    line.insert("task", a.key.task.as_str().into());
                    line.insert("scope", a.key.scope_name(m).into());
                    line.insert("model", m.models.name(mg.model).into());
                    line.insert("benchmark", m.benchmarks.name(it.benchmark).into());
                    line.insert("item_id", it.id.as_ref().into());
                    match x {
                        Metrics::Mcq(x) => {
                            let row = x.items.row(i, k);
                            let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / k as f64;
                            line.insert("pattern", x.items.pattern(i, k).into());
                            line.insert("class", x.items.class[i].as_str().into());
                            line.insert(
                                "best_config",
                                name(x.items.best_config[i] as usize).into(),
                            );
                            line.insert("has_harmful", (x.items.harmful_pairs[i] > 0).into());
                            line.insert("harmful_pairs", x.items.harmful_pairs[i].into());
                            line.insert("terminal_regression", x.items.terminal[i].into());
                            line.insert("text_overwrite", x.items.text_overwrite[i].into());
                            line.insert("oracle_correct", x.items.oracle[i].into());
                            line.insert("mean_correct", mean.into());
                            line.insert("variability", (mean * (1.0 - mean)).sqrt().into());
                            line.insert("adjacent_flips", x.items.adjacent_flips[i].into());
                            // §16.4: one outcome and no stable harm without replicates.
                            let outcomes = x.replicates.as_ref().map(|r| &r.items);
                            line.insert(
                                "min_outcomes",
                                outcomes.map_or(1, |o| o.min_outcomes[i]).into(),
                            );
                            line.insert(
                                "stable_harmful",
                                outcomes.is_some_and(|o| o.stable_harmful[i]).into(),
                            );
                        }
                        Metrics::Open(x) => {
                            let row = x.items.row(i, k);
                            line.insert("scores", row.to_vec().into());
                            line.insert(
                                "max_score",
                                row.iter().copied().fold(f64::NEG_INFINITY, f64::max).into(),
                            );
                            line.insert("has_regression", x.items.has_regression[i].into());
                            line.insert("terminal_regression", x.items.terminal[i].into());
                            line.insert("mean_score", (row.iter().sum::<f64>() / k as f64).into());
                            line.insert("variability", open::population_std(row).into());
                        }
                    }
                    each(line)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::load::cells::read_cells;
    use crate::core::matrix::MatrixBuilder;

    fn load(lines: &[String]) -> ResponseMatrix {
        let mut b = MatrixBuilder::new();
        let file = b.add_file(std::path::Path::new("t.jsonl"));
        read_cells(lines.join("\n").as_bytes(), None, &mut b, &file).expect("io");
        b.finish().expect("valid").0
    }

    fn cells(bench: &str, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..n {
            for (f, pred) in [(8, if i % 2 == 0 { "A" } else { "B" }), (16, "B")] {
                out.push(format!(
                    r#"{{"model":"M","benchmark":"{bench}","item_id":"q{i}","config":"{f}f","frames":{f},"pred":"{pred}","gold":"A"}}"#
                ));
            }
        }
        out
    }

    /// A benchmark's selection reads the run of the model's cells that are its items: the
    /// cells `ALL` selects of that benchmark, whatever the order of the lines, with models
    /// that lack a benchmark and a benchmark of another task beside them.
    #[test]
    fn a_benchmarks_cells_are_those_all_selects_of_it() {
        let mut lines = Vec::new();
        for (i, bench) in ["b2", "b1", "b3", "b1", "b2", "b3", "b1"]
            .iter()
            .enumerate()
        {
            for model in ["M", "N"] {
                if model == "N" && *bench == "b2" {
                    continue;
                }
                for f in [0, 8, 16] {
                    lines.push(format!(
                        r#"{{"model":"{model}","benchmark":"{bench}","item_id":"q{i}","config":"{f}f","frames":{f},"pred":"A","gold":"A"}}"#
                    ));
                }
            }
        }
        lines.push(r#"{"model":"M","benchmark":"open","item_id":"q0","config":"8f","frames":8,"task":"open","score":0.5}"#.into());
        lines.reverse();
        let m = load(&lines);
        let params = Params::default();
        let key = |scope| AnalysisKey {
            protocol: 0,
            task: Task::Mcq,
            scope,
        };
        let all = Selection::new(&m, key(Scope::All), &params);
        let mut seen = 0;
        for b in 0..m.benchmarks.len() as u32 {
            let one = Selection::new(&m, key(Scope::Benchmark(b)), &params);
            for model in 0..m.models.len() as u32 {
                let of_b: Vec<u32> = all
                    .cells(model)
                    .filter(|&c| m.items[m.cell_item.get(c as usize) as usize].benchmark == b)
                    .collect();
                assert_eq!(
                    one.cells(model).collect::<Vec<_>>(),
                    of_b,
                    "benchmark {b}, model {model}"
                );
                seen += of_b.len();
            }
        }
        // Every MCQ cell, once: 3 items of b1 and 2 of b3 (two models), 2 of b2 (one), 3
        // configs each.
        assert_eq!(seen, (3 * 2 + 2 * 2 + 2) * 3);
    }

    /// With one benchmark, `ALL` holds that benchmark's results, not a copy; with two it is
    /// its own analysis, and the numbers are those computed separately either way.
    #[test]
    fn all_shares_a_single_benchmark_and_matches_it() {
        let params = Params::default();
        let one = load(&cells("b1", 6));
        let r = run(&one, &params, None);
        let (all, b1) = (&r.analyses[0], &r.analyses[1]);
        assert_eq!(
            (all.key.scope, b1.key.scope),
            (Scope::All, Scope::Benchmark(0))
        );
        assert!(Arc::ptr_eq(&all.grids, &b1.grids));
        assert!(Arc::ptr_eq(&all.metrics, &b1.metrics));
        let alone = run_one(&one, all.key, &params);
        let json = |x: &[Metrics]| serde_json::to_string(x).expect("json");
        assert_eq!(json(&alone.metrics), json(&all.metrics));

        let mut two = cells("b1", 6);
        two.extend(cells("b2", 3));
        let r = run(&load(&two), &params, None);
        assert_eq!(r.analyses.len(), 3);
        assert!(!Arc::ptr_eq(&r.analyses[0].grids, &r.analyses[1].grids));
        assert_eq!(r.analyses[0].grids.models[0].grid.items.len(), 9);
    }
}
