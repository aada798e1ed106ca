//! The researcher views' state: which analysis they show (protocol, task, scope from the
//! report; model set and zero-frame switch recomputed for that one analysis), the cursor
//! of each screen, and the item sets a selection sends to the queue. What a view draws is
//! computed once per (analysis, model set, config set) by a worker thread and cached, its
//! bootstrap intervals after it, so switching never waits for either.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::core::analysis::bootstrap::{self, McqIntervals};
use crate::core::analysis::grid::AnalysisKey;
use crate::core::analysis::mcq::McqMetrics;
use crate::core::analysis::params::Params;
use crate::core::analysis::{Analysis, Metrics, run_one};
use crate::core::dataset::Dataset;
use crate::core::figures::DataMap;
use crate::core::matrix::ResponseMatrix;
use crate::core::workspace::latest::Latest;
use crate::core::workspace::selections::budget_order;

/// The researcher screens, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    /// Per model: the curve, churn and classes.
    Overview,
    /// Which configuration is right where another is wrong.
    Complementarity,
    /// Items by mean correctness and flips.
    DataMap,
    /// The confidence cascade's threshold sweep.
    Cascade,
    /// Two protocols' harmful sets compared.
    Protocols,
    /// The audits' evidence pathways.
    Findings,
}

impl View {
    /// Every view, in tab order.
    pub const ALL: [View; 6] = [
        View::Overview,
        View::Complementarity,
        View::DataMap,
        View::Cascade,
        View::Protocols,
        View::Findings,
    ];

    /// The view's tab title.
    pub fn title(self) -> &'static str {
        match self {
            View::Overview => "overview",
            View::Complementarity => "complementarity",
            View::DataMap => "data map",
            View::Cascade => "cascade",
            View::Protocols => "protocols",
            View::Findings => "findings",
        }
    }

    /// Its position in [`View::ALL`].
    pub fn index(self) -> usize {
        View::ALL.iter().position(|&v| v == self).unwrap_or(0)
    }
}

/// What a view is of: an analysis of the report, a model set (0 = every model, `i` = the
/// report analysis's model `i - 1` alone) and whether zero-frame configurations count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ViewKey {
    /// The analysis shown (an index of the report's).
    pub analysis: usize,
    /// 0: every model; n: the n-th alone.
    pub model_set: usize,
    /// With the text-only configurations.
    pub zero_frame: bool,
    /// How many of the largest budgets are left out (0 = every configuration).
    pub config_cut: usize,
    /// Which dataset the view is of: 0 for the one the screens opened with, one more each
    /// time it was replaced ([`Research::forget_views`]), so that a view the worker built
    /// from the one before never passes for a view of this one.
    pub data: u32,
}

/// One analysis as the views draw it: measures with the cascade sweep, and each model's
/// data map. Built once per key.
#[derive(Debug)]
pub struct ViewData {
    /// What was built.
    pub key: ViewKey,
    /// The analysis recomputed for the view.
    pub analysis: Analysis,
    /// Per model of `analysis.grids.models` (MCQ only).
    pub maps: Vec<Option<DataMap>>,
}

impl ViewData {
    /// The MCQ metrics of the model at `model`, if it is MCQ.
    pub fn mcq(&self, model: usize) -> Option<&McqMetrics> {
        match self.analysis.metrics.get(model)? {
            Metrics::Mcq(x) => Some(x),
            Metrics::Open(_) => None,
        }
    }
}

/// An explicit set of (model, item) the queue is narrowed to, with what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemSet {
    /// How the queue's title names the set.
    pub label: String,
    /// (model, item) of the items.
    pub items: HashSet<(u32, u32)>,
    /// The transition the set is about (configuration names, lower then higher), which its
    /// items open on when it is one of their harmful transitions.
    pub transition: Option<(String, String)>,
}

/// Bootstrap intervals of every model of a view (`None` for open-ended models).
pub type Intervals = Vec<Option<McqIntervals>>;

/// A finished bootstrap for a view.
pub struct IntervalsResult {
    /// The view the intervals are of.
    pub key: ViewKey,
    /// Per model, the intervals (`None` where there are none).
    pub intervals: Intervals,
}

/// What the research worker is asked for a view: to build it (unless it is built) and to
/// bootstrap its intervals (unless `b` is 0).
pub struct ViewRequest {
    /// The view to build.
    pub key: ViewKey,
    /// The dataset it is built from.
    pub ds: Arc<Dataset>,
    /// The report analysis the view recomputes.
    pub analysis: AnalysisKey,
    /// The parameters it is recomputed with ([`Research::view_params`]).
    pub params: Params,
    /// The view, when it was built already (then only its intervals are wanted).
    pub built: Option<Arc<ViewData>>,
    /// Bootstrap resamples.
    pub b: usize,
    /// The bootstrap's seed.
    pub seed: u64,
}

/// What the research worker sends back, in this order for one request.
pub enum ViewReply {
    /// A view built, its intervals to come.
    Built(Arc<ViewData>),
    /// The intervals of a view built before.
    Intervals(IntervalsResult),
}

/// The intervals of a view's models, with the same resamples as the report's.
pub fn intervals_of(data: &ViewData, b: usize, seed: u64) -> Intervals {
    intervals_until(data, b, seed, &|| false).unwrap_or_default()
}

/// [`intervals_of`], given up between two models when `superseded` says so (`None`).
fn intervals_until(
    data: &ViewData,
    b: usize,
    seed: u64,
    superseded: &dyn Fn() -> bool,
) -> Option<Intervals> {
    (0..data.analysis.metrics.len())
        .map(|i| {
            if superseded() {
                return Err(());
            }
            let Some(x) = data.mcq(i) else {
                return Ok(None);
            };
            let k = data.analysis.grids.models[i].grid.k();
            let harmful: Vec<bool> = x.items.harmful_pairs.iter().map(|&h| h > 0).collect();
            Ok(bootstrap::mcq(
                &x.items.y,
                k,
                &harmful,
                &x.items.terminal,
                b,
                seed,
            ))
        })
        .collect::<Result<Intervals, ()>>()
        .ok()
}

/// Builds a view: its analysis recomputed with the sweep, and each model's data map.
pub fn build_view(
    m: &ResponseMatrix,
    key: ViewKey,
    analysis: AnalysisKey,
    params: &Params,
) -> ViewData {
    let analysis = run_one(m, analysis, params);
    let maps = analysis
        .grids
        .models
        .iter()
        .zip(analysis.metrics.iter())
        .map(|(mg, x)| match x {
            Metrics::Mcq(x) => Some(DataMap::new(&x.items, mg.grid.k())),
            Metrics::Open(_) => None,
        })
        .collect();
    ViewData {
        key,
        analysis,
        maps,
    }
}

/// Answers a request: the view built (when it was not), then its intervals; stops between
/// the two when `superseded` says a newer request came (its answer would not be shown).
pub fn answer(req: ViewRequest, superseded: &dyn Fn() -> bool, reply: &mut dyn FnMut(ViewReply)) {
    let data = match req.built {
        Some(d) => d,
        None => {
            let d = Arc::new(build_view(
                &req.ds.matrix,
                req.key,
                req.analysis,
                &req.params,
            ));
            reply(ViewReply::Built(d.clone()));
            d
        }
    };
    if req.b == 0 {
        return;
    }
    // A newer request is answered sooner: the bootstrap stops between two models.
    let Some(intervals) = intervals_until(&data, req.b, req.seed, superseded) else {
        return;
    };
    reply(ViewReply::Intervals(IntervalsResult {
        key: req.key,
        intervals,
    }));
}

/// Builds and bootstraps views off the UI thread; the newest request wins ([`Latest`]).
pub struct ViewWorker {
    worker: Latest<ViewRequest>,
}

impl ViewWorker {
    /// Starts the worker; `reply` is called on it with each answer. Fails only when the
    /// system cannot start a thread.
    pub fn spawn(mut reply: impl FnMut(ViewReply) + Send + 'static) -> std::io::Result<Self> {
        let worker = Latest::spawn("frameaudit-views", move |req, s| {
            answer(req, &|| s.now(), &mut reply)
        })?;
        Ok(ViewWorker { worker })
    }

    /// Asks for a view; one waiting is replaced.
    pub fn request(&self, r: ViewRequest) {
        self.worker.request(r);
    }
}

/// The churn bar's `lost` part (index into `CHURN_PARTS`): where the overview's cursor
/// starts, on the items a larger budget lost.
pub const LOST_PART: usize = 2;

/// The researcher views' state.
pub struct Research {
    /// The run's own parameters (bootstrap size, cascade stages, grid mode...).
    pub params: Params,
    /// The view shown.
    pub key: ViewKey,
    /// The model shown (index into the view's `grids.models`).
    pub model: usize,
    /// Overview cursor: a churn step (0..steps) or a class (steps..steps+5).
    pub focus: usize,
    /// Which part of the churn bar (index into `CHURN_PARTS`).
    pub part: usize,
    /// The overview's cursor is to be checked once the view shown is built: it opened, or
    /// another model or analysis is shown ([`crate::tui::app::App`]'s `settle_focus`).
    pub settle: bool,
    /// Complementarity cursor: (right at, wrong at) grid columns.
    pub cell: (usize, usize),
    /// Data map cursor: (right, flips).
    pub map_cell: (usize, usize),
    /// Cascade threshold step: τ = tau / 100.
    pub tau: usize,
    /// Protocol comparison: the other protocol's analysis and the model row.
    pub other: Option<usize>,
    /// Views built so far (a handful: each switch adds one).
    cache: HashMap<ViewKey, Arc<ViewData>>,
    /// The intervals computed so far, per view.
    pub intervals: HashMap<ViewKey, Intervals>,
    /// The view last asked of the worker, while its answer is not all back: asked again
    /// only when another was asked since (the worker drops what a newer request replaced).
    pub asked: Option<ViewKey>,
    /// Without a worker (tests), views and intervals are computed at once.
    pub worker: bool,
    /// A researcher view was opened in this session (the first opens on the queue's
    /// protocol).
    pub opened: bool,
    /// The measures the overview's models table shows, one column each
    /// ([`crate::core::measures::MEASURES`]).
    pub measures: &'static [crate::core::measures::Measure],
}

impl Research {
    /// Nothing built yet; views are computed with `params`.
    pub fn new(params: Params) -> Research {
        Research {
            params,
            key: ViewKey {
                analysis: 0,
                model_set: 0,
                zero_frame: true,
                config_cut: 0,
                data: 0,
            },
            model: 0,
            focus: 0,
            part: LOST_PART,
            settle: true,
            cell: (0, 1),
            map_cell: (0, 0),
            tau: 50,
            other: None,
            cache: HashMap::new(),
            intervals: HashMap::new(),
            asked: None,
            worker: false,
            opened: false,
            measures: crate::core::measures::MEASURES,
        }
    }

    /// Forgets every view built and asked for: the dataset they were built from was
    /// replaced (its replicates read), so they are built again from the new one.
    pub fn forget_views(&mut self) {
        self.cache.clear();
        self.intervals.clear();
        self.asked = None;
        self.key.data += 1;
    }

    /// The parameters a view of `key` is recomputed with: the run's, with the sweep, the
    /// view's zero-frame switch, model set and configurations.
    pub fn view_params(&self, m: &ResponseMatrix, analyses: &[Analysis], key: ViewKey) -> Params {
        let base = &analyses[key.analysis];
        let mut params = Params {
            bootstrap_b: 0,
            sweep: true,
            include_zero_frame: key.zero_frame,
            ..self.params.clone()
        };
        if key.model_set > 0
            && let Some(mg) = base.grids.models.get(key.model_set - 1)
        {
            params.models = Some(vec![m.models.name(mg.model).to_string()]);
        }
        if key.config_cut > 0 {
            // The visual configurations only, when the view leaves the zero-frame one out:
            // naming it among the kept ones would leave the analysis nothing.
            let configs: Vec<u32> = budget_order(m, base)
                .into_iter()
                .filter(|&c| key.zero_frame || !m.config(c).is_zero_frame())
                .collect();
            let keep = configs.len().saturating_sub(key.config_cut).max(2);
            params.configs = Some(
                configs[..keep.min(configs.len())]
                    .iter()
                    .map(|&c| m.config(c).name.to_string())
                    .collect(),
            );
        }
        params
    }

    /// The view of a key, if it was built.
    pub fn built(&self, key: &ViewKey) -> Option<&Arc<ViewData>> {
        self.cache.get(key)
    }

    /// Keeps a built view (a handful are kept: each switch adds one).
    pub fn insert(&mut self, d: Arc<ViewData>) {
        if self.cache.len() >= 16 {
            // The view on screen stays.
            let current = self.key;
            self.cache.retain(|k, _| *k == current);
        }
        self.cache.insert(d.key, d);
    }

    /// The current view, if it was built.
    pub fn current(&self) -> Option<&Arc<ViewData>> {
        self.cache.get(&self.key)
    }
}
