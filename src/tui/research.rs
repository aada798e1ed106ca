//! The researcher views' state: which analysis they show (protocol, task, scope from the
//! report; model set and zero-frame switch recomputed for that one analysis), the cursor
//! of each screen, and the item sets a selection sends to the queue. What a view draws is
//! computed once per (analysis, model set, config set) and cached; bootstrap intervals come
//! later from a worker thread, so switching never waits for them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use crate::core::analysis::bootstrap::{self, McqIntervals};
use crate::core::analysis::mcq::{Class, McqMetrics};
use crate::core::analysis::params::Params;
use crate::core::analysis::{Analysis, Metrics, run_one};
use crate::core::figures::DataMap;
use crate::core::matrix::ResponseMatrix;
use crate::core::workspace::selections::{
    Axis, budget_order, churn_rows, class_rows, next_analysis, one_protocol_only, right_wrong_rows,
};

/// The researcher screens, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    Overview,
    Complementarity,
    DataMap,
    Cascade,
    Protocols,
    Findings,
}

impl View {
    pub const ALL: [View; 6] = [
        View::Overview,
        View::Complementarity,
        View::DataMap,
        View::Cascade,
        View::Protocols,
        View::Findings,
    ];

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

    pub fn index(self) -> usize {
        View::ALL.iter().position(|&v| v == self).unwrap_or(0)
    }
}

/// What a view is of: an analysis of the report, a model set (0 = every model, `i` = the
/// report analysis's model `i - 1` alone) and whether zero-frame configurations count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ViewKey {
    pub analysis: usize,
    pub model_set: usize,
    pub zero_frame: bool,
    /// How many of the largest budgets are left out (0 = every configuration).
    pub config_cut: usize,
}

/// One analysis as the views draw it: measures with the cascade sweep, and each model's
/// data map. Built once per key.
#[derive(Debug)]
pub struct ViewData {
    pub key: ViewKey,
    pub analysis: Analysis,
    /// Per model of `analysis.grids.models` (MCQ only).
    pub maps: Vec<Option<DataMap>>,
}

impl ViewData {
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
    pub label: String,
    pub items: HashSet<(u32, u32)>,
    /// The transition the set is about (configuration names, lower then higher), which its
    /// items open on when it is one of their harmful transitions.
    pub transition: Option<(String, String)>,
}

/// Bootstrap intervals of every model of a view (`None` for open-ended models).
pub type Intervals = Vec<Option<McqIntervals>>;

/// A finished bootstrap for a view.
pub struct IntervalsResult {
    pub key: ViewKey,
    pub intervals: Intervals,
}

/// What the bootstrap worker is asked to do.
pub struct IntervalsRequest {
    pub key: ViewKey,
    pub data: Arc<ViewData>,
    pub b: usize,
    pub seed: u64,
}

/// The intervals of a view's models, with the same resamples as the report's.
pub fn intervals_of(data: &ViewData, b: usize, seed: u64) -> Intervals {
    (0..data.analysis.metrics.len())
        .map(|i| {
            let x = data.mcq(i)?;
            let k = data.analysis.grids.models[i].grid.k();
            let harmful: Vec<bool> = x.items.harmful_pairs.iter().map(|&h| h > 0).collect();
            bootstrap::mcq(&x.items.y, k, &harmful, &x.items.terminal, b, seed)
        })
        .collect()
}

/// Bootstraps views off the UI thread, newest request first; older pending ones are
/// dropped (their view is no longer on screen; a later visit asks again).
pub struct IntervalsWorker {
    tx: Sender<IntervalsRequest>,
}

impl IntervalsWorker {
    pub fn spawn(done: impl Fn(IntervalsResult) + Send + 'static) -> IntervalsWorker {
        let (tx, rx): (Sender<IntervalsRequest>, Receiver<IntervalsRequest>) = channel();
        std::thread::Builder::new()
            .name("frameaudit-bootstrap".into())
            .spawn(move || {
                while let Ok(mut req) = rx.recv() {
                    while let Ok(newer) = rx.try_recv() {
                        req = newer;
                    }
                    let intervals = intervals_of(&req.data, req.b, req.seed);
                    done(IntervalsResult {
                        key: req.key,
                        intervals,
                    });
                }
            })
            .ok();
        IntervalsWorker { tx }
    }

    pub fn request(&self, r: IntervalsRequest) {
        let _ = self.tx.send(r);
    }
}

/// The researcher views' state.
pub struct Research {
    /// The run's own parameters (bootstrap size, cascade stages, grid mode...).
    pub params: Params,
    pub key: ViewKey,
    /// The model shown (index into the view's `grids.models`).
    pub model: usize,
    /// Overview cursor: a churn step (0..steps) or a class (steps..steps+5).
    pub focus: usize,
    /// Which part of the churn bar (index into `CHURN_PARTS`).
    pub part: usize,
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
    pub intervals: HashMap<ViewKey, Intervals>,
    /// Bootstraps asked of the worker and not yet back.
    pub pending: HashSet<ViewKey>,
    /// Without a worker (tests), intervals are computed at once.
    pub worker: bool,
}

impl Research {
    pub fn new(params: Params) -> Research {
        Research {
            params,
            key: ViewKey {
                analysis: 0,
                model_set: 0,
                zero_frame: true,
                config_cut: 0,
            },
            model: 0,
            focus: 0,
            part: 2,
            cell: (0, 1),
            map_cell: (0, 0),
            tau: 50,
            other: None,
            cache: HashMap::new(),
            intervals: HashMap::new(),
            pending: HashSet::new(),
            worker: false,
        }
    }

    /// The view of a key, built if needed.
    pub fn data(
        &mut self,
        m: &ResponseMatrix,
        analyses: &[Analysis],
        key: ViewKey,
    ) -> Arc<ViewData> {
        if let Some(d) = self.cache.get(&key) {
            return d.clone();
        }
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
            let configs = budget_order(m, base);
            let keep = configs.len().saturating_sub(key.config_cut).max(2);
            params.configs = Some(
                configs[..keep.min(configs.len())]
                    .iter()
                    .map(|&c| m.config(c).name.to_string())
                    .collect(),
            );
        }
        let analysis = run_one(m, base.key, &params);
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
        let d = Arc::new(ViewData {
            key,
            analysis,
            maps,
        });
        if self.cache.len() >= 16 {
            self.cache.clear();
        }
        self.cache.insert(key, d.clone());
        d
    }

    /// The current view, if it was built.
    pub fn current(&self) -> Option<&Arc<ViewData>> {
        self.cache.get(&self.key)
    }
}

use super::action::Action;
use super::app::{App, Effect, Filter, Notice, Screen};

impl App {
    /// Opens a researcher view, building what it shows.
    pub fn open_view(&mut self, view: View) -> Vec<Effect> {
        if !matches!(self.screen, Screen::Research(_)) && self.research.current().is_none() {
            // The first visit starts on the audit queue's protocol, pooled (ALL) scope.
            if let Some(a) = self
                .report
                .analyses
                .iter()
                .position(|a| a.key.protocol == self.protocol)
            {
                self.research.key.analysis = a;
            }
        }
        self.screen = Screen::Research(view);
        self.ensure_view()
    }

    /// Builds the current view if needed and asks for its intervals.
    pub fn ensure_view(&mut self) -> Vec<Effect> {
        if self.report.analyses.is_empty() {
            return Vec::new();
        }
        let key = self.research.key;
        let data = self
            .research
            .data(&self.ds.matrix, &self.report.analyses, key);
        let n = data.analysis.grids.models.len();
        self.research.model = self.research.model.min(n.saturating_sub(1));
        if self.research.intervals.contains_key(&key) || self.research.pending.contains(&key) {
            return Vec::new();
        }
        if self.research.worker {
            self.research.pending.insert(key);
            vec![Effect::Intervals]
        } else {
            let iv = intervals_of(
                &data,
                self.research.params.bootstrap_b,
                self.research.params.seed,
            );
            self.research.intervals.insert(key, iv);
            Vec::new()
        }
    }

    /// The bootstrap the runner hands to the worker after `Effect::Intervals`.
    pub fn intervals_request(&self) -> Option<IntervalsRequest> {
        let data = self.research.current()?.clone();
        Some(IntervalsRequest {
            key: data.key,
            data,
            b: self.research.params.bootstrap_b,
            seed: self.research.params.seed,
        })
    }

    /// Intervals arrived from the worker.
    pub fn on_intervals(&mut self, r: IntervalsResult) {
        self.research.pending.remove(&r.key);
        self.research.intervals.insert(r.key, r.intervals);
    }

    /// Actions on a researcher view; `None` leaves the action to the general reducer.
    pub(super) fn research_update(&mut self, view: View, action: Action) -> Option<Vec<Effect>> {
        let all = View::ALL.len();
        let r = &mut self.research;
        match action {
            Action::Overview => return Some(self.open_view(View::Overview)),
            Action::NextView => return Some(self.open_view(View::ALL[(view.index() + 1) % all])),
            Action::PrevView => {
                return Some(self.open_view(View::ALL[(view.index() + all - 1) % all]));
            }
            Action::ShowView(i) => return Some(self.open_view(*View::ALL.get(i)?)),
            Action::NextProtocol | Action::NextTask | Action::NextScope => {
                let axis = match action {
                    Action::NextProtocol => Axis::Protocol,
                    Action::NextTask => Axis::Task,
                    _ => Axis::Scope,
                };
                let next = next_analysis(&self.report.analyses, r.key.analysis, axis);
                if next == r.key.analysis {
                    self.notice = Some(Notice {
                        text: format!(
                            "this dataset has no other {}",
                            match axis {
                                Axis::Protocol => "protocol",
                                Axis::Task => "task",
                                Axis::Scope => "benchmark scope",
                            }
                        ),
                        error: false,
                    });
                }
                r.key.analysis = next;
                r.key.model_set = 0;
                r.key.config_cut = 0;
                r.other = None;
            }
            Action::NextModelSet => {
                let n = self
                    .report
                    .analyses
                    .get(r.key.analysis)
                    .map_or(0, |a| a.grids.models.len());
                r.key.model_set = (r.key.model_set + 1) % (n + 1);
                r.model = 0;
            }
            Action::ToggleZeroFrame => r.key.zero_frame = !r.key.zero_frame,
            Action::NextConfigSet => {
                // All, then without the largest budget, the two largest... down to two.
                let n = self
                    .report
                    .analyses
                    .get(r.key.analysis)
                    .map_or(0, |a| budget_order(&self.ds.matrix, a).len());
                r.key.config_cut = (r.key.config_cut + 1) % n.saturating_sub(1).max(1);
            }
            Action::NextModel | Action::PrevModel => {
                let n = r
                    .current()
                    .map_or(1, |d| d.analysis.grids.models.len().max(1));
                r.model = if action == Action::NextModel {
                    (r.model + 1) % n
                } else {
                    (r.model + n - 1) % n
                };
            }
            Action::Left
            | Action::Right
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown => self.move_cursor(view, action),
            Action::Select => {
                self.select_items(view);
                return Some(Vec::new());
            }
            _ => return None,
        }
        Some(self.ensure_view())
    }

    fn move_cursor(&mut self, view: View, action: Action) {
        let Some(d) = self.research.current().cloned() else {
            return;
        };
        let r = &mut self.research;
        let Some(mg) = d.analysis.grids.models.get(r.model) else {
            return;
        };
        let k = mg.grid.k();
        let step = |x: usize, delta: isize, n: usize| -> usize {
            (x as isize + delta).clamp(0, n.saturating_sub(1) as isize) as usize
        };
        let (dx, dy): (isize, isize) = match action {
            Action::Left => (-1, 0),
            Action::Right => (1, 0),
            Action::Up => (0, 1),
            Action::Down => (0, -1),
            Action::PageUp => (0, 10),
            _ => (0, -10),
        };
        match view {
            View::Overview => {
                let steps = mg.grid.ladder().len().saturating_sub(1);
                r.focus = step(r.focus, dx, steps + Class::ALL.len());
                // Up goes to the part drawn above: parts stack bottom up in CHURN_PARTS order.
                r.part = step(r.part, dy.signum(), 4);
            }
            View::Complementarity => {
                r.cell.1 = step(r.cell.1, dx, k);
                r.cell.0 = step(r.cell.0, -dy.signum(), k);
            }
            View::DataMap => {
                r.map_cell.0 = step(r.map_cell.0, dx, k + 1);
                r.map_cell.1 = step(r.map_cell.1, dy.signum(), k.max(2) - 1);
            }
            View::Cascade => {
                // ↑↓ move τ by 0.10, page keys too.
                let dy = if dy.abs() == 1 { dy * 10 } else { dy };
                r.tau = step(r.tau, dx + dy, crate::core::analysis::cascade::TAU_STEPS);
            }
            View::Protocols => {
                let n = d.analysis.grids.models.len();
                r.model = step(r.model, -dy.signum(), n);
                if dx != 0 {
                    let candidates = self.other_protocols();
                    let cur = self
                        .research
                        .other
                        .and_then(|o| candidates.iter().position(|&c| c == o));
                    let n = candidates.len().max(1);
                    let next = match cur {
                        Some(p) => (p as isize + dx).rem_euclid(n as isize) as usize,
                        None => 0,
                    };
                    self.research.other = candidates.get(next).copied();
                }
            }
            View::Findings => {
                let n = self.findings_sources().len().max(1);
                self.findings_source =
                    (self.findings_source as isize + dx).rem_euclid(n as isize) as usize;
            }
        }
    }

    /// Analyses of the report with the view's task and scope under another protocol.
    pub fn other_protocols(&self) -> Vec<usize> {
        let Some(cur) = self.report.analyses.get(self.research.key.analysis) else {
            return Vec::new();
        };
        (0..self.report.analyses.len())
            .filter(|&j| {
                let k = self.report.analyses[j].key;
                k.protocol != cur.key.protocol && k.task == cur.key.task && k.scope == cur.key.scope
            })
            .collect()
    }

    /// The item set under the cursor of a view, with its label.
    pub fn selection(&self, view: View) -> Option<ItemSet> {
        let d = self.research.current()?;
        let r = &self.research;
        let mg = d.analysis.grids.models.get(r.model)?;
        let m = &self.ds.matrix;
        let k = mg.grid.k();
        let model = crate::core::text::sanitize(m.models.name(mg.model)).into_owned();
        let name =
            |c: usize| crate::core::text::sanitize(&m.config(mg.grid.configs[c]).name).into_owned();
        let raw = |c: usize| m.config(mg.grid.configs[c]).name.to_string();
        let (rows, label, transition) = match view {
            View::Overview => {
                let x = d.mcq(r.model)?;
                let ladder = mg.grid.ladder();
                let steps = ladder.len().saturating_sub(1);
                if r.focus < steps {
                    let part = crate::core::figures::CHURN_PARTS[r.part].0;
                    (
                        churn_rows(x, &ladder, k, r.focus, r.part),
                        format!(
                            "{model} {}→{} {part}",
                            name(ladder[r.focus]),
                            name(ladder[r.focus + 1])
                        ),
                        Some((raw(ladder[r.focus]), raw(ladder[r.focus + 1]))),
                    )
                } else {
                    let c = Class::ALL[r.focus - steps];
                    (
                        class_rows(x, c),
                        format!("{model} {}", crate::core::figures::class_label(c)),
                        None,
                    )
                }
            }
            View::Complementarity => {
                let x = d.mcq(r.model)?;
                let (a, b) = r.cell;
                (
                    right_wrong_rows(x, k, a, b),
                    format!("{model} right at {} wrong at {}", name(a), name(b)),
                    Some((raw(a), raw(b))),
                )
            }
            View::DataMap => {
                let x = d.mcq(r.model)?;
                let (right, flips) = r.map_cell;
                (
                    DataMap::items_in(&x.items, k, right..=right, flips..=flips),
                    format!("{model} right {right}/{k}, flips {flips}"),
                    None,
                )
            }
            View::Protocols => {
                let other = r
                    .other
                    .or_else(|| self.other_protocols().first().copied())?;
                let other = &self.report.analyses[other];
                let items = one_protocol_only(&d.analysis, r.model, other)?;
                let set = items.iter().map(|&(item, _)| (mg.model, item)).collect();
                return Some(ItemSet {
                    label: format!(
                        "{model} harmful under one protocol only ({} / {})",
                        crate::core::text::sanitize(m.protocols.name(d.analysis.key.protocol)),
                        crate::core::text::sanitize(m.protocols.name(other.key.protocol))
                    ),
                    items: set,
                    transition: None,
                });
            }
            View::Cascade | View::Findings => return None,
        };
        Some(ItemSet {
            label,
            items: rows
                .into_iter()
                .map(|i| (mg.model, mg.grid.items[i]))
                .collect(),
            transition,
        })
    }

    /// Narrows the queue to the items under the cursor and shows it.
    fn select_items(&mut self, view: View) {
        let Some(set) = self.selection(view) else {
            self.notice = Some(Notice {
                text: "nothing to select on this view".into(),
                error: false,
            });
            return;
        };
        let total = set.items.len();
        let protocol = self.research.current().map(|d| d.analysis.key.protocol);
        self.filter = Filter {
            items: Some(set),
            ..Filter::default()
        };
        self.query.clear();
        self.screen = Screen::Queue;
        self.selected = None;
        self.refresh_visible();
        let mut text = format!(
            "{total} item(s); {} in the audit queue (items with a harmful transition)",
            self.visible.len()
        );
        if protocol.is_some_and(|p| p != self.protocol) {
            text.push_str(&format!(
                "; the queue is of protocol {}",
                crate::core::text::sanitize(self.ds.matrix.protocols.name(self.protocol))
            ));
        }
        self.notice = Some(Notice { text, error: false });
    }
}
