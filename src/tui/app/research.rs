//! What the researcher views do to the app: opening a view, building what it shows, its
//! cursor and selections, and the bootstrap intervals asked of the worker. The views' own
//! types live in `tui::research`, which knows nothing of the app.

use super::{App, Effect, Filter, Notice, Screen};
use crate::core::analysis::mcq::Class;
use crate::core::figures::DataMap;
use crate::core::workspace::selections::{
    Axis, budget_order, churn_rows, class_rows, next_analysis, one_protocol_only, right_wrong_rows,
};
use crate::tui::input::action::Action;
use crate::tui::research::*;

impl App {
    /// Opens a researcher view, asking for what it shows.
    pub fn open_view(&mut self, view: View) -> Vec<Effect> {
        if !matches!(self.screen, Screen::Research(_)) && !self.research.opened {
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
        self.research.opened = true;
        self.screen = Screen::Research(view);
        self.ensure_view()
    }

    /// Asks for what the current view still lacks: the view itself, then its intervals.
    /// With a worker that is an effect ([`Effect::Research`]); without one (tests) it is
    /// done here.
    pub fn ensure_view(&mut self) -> Vec<Effect> {
        // A view built before may hold fewer models than the one left.
        if let Some(n) = self
            .research
            .current()
            .map(|d| d.analysis.grids.models.len())
        {
            self.research.model = self.research.model.min(n.saturating_sub(1));
        }
        let Some(req) = self.view_request() else {
            return Vec::new();
        };
        if self.research.worker {
            if self.research.asked == Some(req.key) {
                return Vec::new();
            }
            self.research.asked = Some(req.key);
            return vec![Effect::Research];
        }
        let mut replies = Vec::new();
        answer(req, &|| false, &mut |r| replies.push(r));
        for r in replies {
            self.on_research(r);
        }
        self.settle_focus();
        Vec::new()
    }

    /// What the current view still lacks, as a request to the worker; `None` when it lacks
    /// nothing (or the dataset has no analysis).
    pub fn view_request(&self) -> Option<ViewRequest> {
        let key = self.research.key;
        let base = self.report.analyses.get(key.analysis)?;
        let built = self.research.built(&key).cloned();
        let b = self.research.params.bootstrap_b;
        if built.is_some() && (b == 0 || self.research.intervals.contains_key(&key)) {
            return None;
        }
        Some(ViewRequest {
            key,
            ds: self.ds.clone(),
            analysis: base.key,
            params: self
                .research
                .view_params(&self.ds.matrix, &self.report.analyses, key),
            built,
            b,
            seed: self.research.params.seed,
        })
    }

    /// An answer of the research worker arrived: a view built, or its intervals.
    pub fn on_research(&mut self, reply: ViewReply) {
        match reply {
            ViewReply::Built(d) => {
                if d.key == self.research.key {
                    let n = d.analysis.grids.models.len();
                    self.research.model = self.research.model.min(n.saturating_sub(1));
                }
                if self.research.params.bootstrap_b == 0 && self.research.asked == Some(d.key) {
                    self.research.asked = None;
                }
                let now = d.key == self.research.key;
                self.research.insert(d);
                if now {
                    self.settle_focus();
                }
            }
            ViewReply::Intervals(r) => {
                if self.research.asked == Some(r.key) {
                    self.research.asked = None;
                }
                self.research.intervals.insert(r.key, r.intervals);
            }
        }
    }

    /// An action on a researcher view; what the views do not do themselves (help, quit,
    /// back) is what every screen does.
    pub(super) fn research_update(&mut self, view: View, action: Action) -> Vec<Effect> {
        let shown = (self.research.key, self.research.model);
        let effects = self.research_action(view, action);
        if (self.research.key, self.research.model) != shown {
            self.research.settle = true;
            self.settle_focus();
        }
        effects
    }

    /// The overview's cursor, on a churn part with no items, moved to the first budget step
    /// that loses items (its `lost` part), once the view it points into is there: when the
    /// views open and when another model or analysis is shown. A cursor the user moved is
    /// left where it is.
    fn settle_focus(&mut self) {
        let r = &mut self.research;
        if !r.settle {
            return;
        }
        let Some(d) = r.current().cloned() else {
            return;
        };
        r.settle = false;
        let Some(x) = d.mcq(r.model) else {
            return;
        };
        let Some(c) = x.churn.get(r.focus) else {
            return;
        };
        let counts = c.parts();
        if counts.get(r.part).is_some_and(|&n| n > 0) {
            return;
        }
        if let Some(i) = x.churn.iter().position(|c| c.correct_to_wrong > 0) {
            r.focus = i;
            r.part = LOST_PART;
        }
    }

    fn research_action(&mut self, view: View, action: Action) -> Vec<Effect> {
        let all = View::ALL.len();
        let r = &mut self.research;
        match action {
            Action::Overview => return self.open_view(View::Overview),
            Action::NextView => return self.open_view(View::ALL[(view.index() + 1) % all]),
            Action::PrevView => {
                return self.open_view(View::ALL[(view.index() + all - 1) % all]);
            }
            Action::ShowView(i) => match View::ALL.get(i) {
                Some(&v) => return self.open_view(v),
                None => return Vec::new(),
            },
            Action::NextProtocol | Action::NextTask | Action::NextScope => {
                let axis = match action {
                    Action::NextProtocol => Axis::Protocol,
                    Action::NextTask => Axis::Task,
                    _ => Axis::Scope,
                };
                let next = next_analysis(&self.report.analyses, r.key.analysis, axis);
                if next == r.key.analysis {
                    self.overlays.notice = Some(Notice {
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
                let m = &self.ds.matrix;
                let n = self.report.analyses.get(r.key.analysis).map_or(0, |a| {
                    budget_order(m, a)
                        .into_iter()
                        .filter(|&c| r.key.zero_frame || !m.config(c).is_zero_frame())
                        .count()
                });
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
                return Vec::new();
            }
            _ => return self.audit_update(action),
        }
        self.ensure_view()
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
                self.audits.findings_source =
                    (self.audits.findings_source as isize + dx).rem_euclid(n as isize) as usize;
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
            self.overlays.notice = Some(Notice {
                text: "nothing to select on this view".into(),
                error: false,
            });
            return;
        };
        let total = set.items.len();
        let protocol = self.research.current().map(|d| d.analysis.key.protocol);
        self.queue.filter = Filter {
            items: Some(set),
            ..Filter::default()
        };
        self.queue.query.clear();
        self.screen = Screen::Queue;
        self.queue.selected = None;
        self.refresh_visible();
        let mut text = format!(
            "{total} item(s); {} in the audit queue (items with a harmful transition)",
            self.queue.visible.len()
        );
        if protocol.is_some_and(|p| p != self.protocol) {
            text.push_str(&format!(
                "; the queue is of protocol {}",
                crate::core::text::sanitize(self.ds.matrix.protocols.name(self.protocol))
            ));
        }
        self.overlays.notice = Some(Notice { text, error: false });
    }
}
