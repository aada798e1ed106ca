//! "Add this item to the plan" (docs/intervention.md §9): the item screen's transition, with
//! the evidence frames the annotator marked on it, joins the intervention plan file, planned
//! by every strategy exactly as `frameaudit intervene plan --targets audited` plans it.
//!
//! The reducer only takes what the plan needs from the app ([`PlanRequest`]) and returns
//! [`Effect::Plan`]; reading, planning and writing the file happen on the plan worker's
//! thread ([`Planner`]), which answers with the notice the status line shows. The worker
//! takes requests one at a time in the order they came, so two quick presses add both
//! transitions: each reads the file the one before wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Sender, channel};

use super::{App, Effect, Notice};
use crate::core::analysis::Report;
use crate::core::audit::UnitKey;
use crate::core::dataset::Dataset;
use crate::core::intervene::{Strategy, plan_transitions};
use crate::core::plan::{Plan, Transition};
use crate::core::queue::HarmfulTransition;
use crate::core::text::{count, sanitize};

/// The transitions a plan file holds (entries and skipped ones); none when there is no
/// file yet; an error when what is there is not a plan.
fn planned_in(path: &Path) -> Result<BTreeSet<Transition>, String> {
    match Plan::read_if_present(path) {
        Ok(p) => Ok(p.map(|p| p.transitions()).unwrap_or_default()),
        Err(e) => {
            // One line on the status line: the first problem, and how many more.
            let said = e.to_string();
            let mut lines = said.lines();
            let first = lines.next().unwrap_or_default();
            let more = match lines.count() {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            Err(format!(
                "{} is not a plan, left as it is: {first}{more}",
                path.display()
            ))
        }
    }
}

/// One transition to add to the plan file, with what planning it needs: taken from the app
/// on the UI thread, run on the plan worker's.
pub struct PlanRequest {
    ds: Arc<Dataset>,
    report: Arc<Report>,
    protocol: u32,
    path: PathBuf,
    transition: Transition,
    annotator: String,
    /// The evidence frames this annotator marked, by the transition they were marked on
    /// (the records in memory, saved or not): every transition of the file is planned again
    /// with them.
    evidence: BTreeMap<Transition, Vec<u64>>,
}

impl PlanRequest {
    /// The plan file this request adds to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the plan file, adds the transition, plans every transition of it and writes
    /// it back (renamed into place, never through a link): what the status line says of
    /// it. A file that is not a plan is left as it is.
    pub fn run(&self) -> Notice {
        let fail = |text: String| Notice {
            text: sanitize(&text).into_owned(),
            error: true,
        };
        let path = &self.path;
        let mut transitions = match planned_in(path) {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        transitions.insert(self.transition.clone());
        let p = plan_transitions(
            &self.ds,
            &self.report,
            self.protocol,
            &transitions,
            &self.annotator,
            |t| self.evidence.get(t).cloned().unwrap_or_default(),
        );
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return fail(format!("cannot write {}: {e}", path.display()));
        }
        if let Err(e) = p.write(path, crate::core::fswrite::Links::Refuse) {
            return fail(format!("cannot write {}: {e}", path.display()));
        }
        self.said(&p, transitions.len())
    }

    /// What the status line says of the plan `p` of `n` transitions just written: the
    /// strategies that planned this transition, or why one skipped it.
    fn said(&self, p: &Plan, n: usize) -> Notice {
        let (key, from, to) = &self.transition;
        let mine = |strategy: &str| {
            p.entries.iter().find(|e| {
                e.strategy == strategy
                    && e.model == key.model
                    && e.benchmark == key.benchmark
                    && e.item_id == key.item_id
                    && &e.lower == from
                    && &e.config == to
            })
        };
        let planned: Vec<String> = Strategy::ALL
            .iter()
            .filter_map(|s| {
                mine(s.name()).map(|e| match s {
                    Strategy::RestoreEvidence => format!("{} +{}", s.name(), e.restored.len()),
                    _ => s.name().to_string(),
                })
            })
            .collect();
        let skipped = p
            .skipped
            .iter()
            .find(|x| {
                x.model == key.model
                    && x.item_id == key.item_id
                    && x.benchmark == key.benchmark
                    && &x.lower == from
                    && &x.config == to
            })
            .map(|x| format!("; {} skipped: {}", x.strategy, x.why))
            .unwrap_or_default();
        Notice {
            text: sanitize(&format!(
                "planned {from} → {to} ({}): {} in {}{skipped}",
                if planned.is_empty() {
                    "no strategy".to_string()
                } else {
                    planned.join(", ")
                },
                count(n, "transition"),
                self.path.display()
            ))
            .into_owned(),
            error: planned.is_empty(),
        }
    }
}

/// The plan worker: a thread that runs plan requests one after another, in order, and
/// hands each one's notice to `reply`.
pub struct Planner {
    tx: Sender<PlanRequest>,
}

impl Planner {
    /// Starts the worker; `reply` is called on its thread with each request's notice.
    /// Fails only when the system cannot start a thread.
    pub fn spawn(reply: impl Fn(Notice) + Send + 'static) -> std::io::Result<Planner> {
        let (tx, rx) = channel::<PlanRequest>();
        std::thread::Builder::new()
            .name("frameaudit-plan".into())
            .spawn(move || {
                for req in rx {
                    reply(req.run());
                }
            })?;
        Ok(Planner { tx })
    }

    /// Queues a request behind those not yet run.
    pub fn request(&self, req: PlanRequest) {
        // The worker ends only when this sender is dropped.
        let _ = self.tx.send(req);
    }
}

impl App {
    /// Takes row `i`'s transition under audit to the plan worker ([`Effect::Plan`]), saying
    /// so on the status line until its answer ([`App::on_planned`]); what cannot be planned
    /// is said at once.
    pub fn add_to_plan(&mut self, i: usize) -> Vec<Effect> {
        let fail = |text: &str| Notice {
            text: text.into(),
            error: true,
        };
        if self.queue.rows[i].q.task != crate::core::matrix::Task::Mcq {
            self.overlays.notice = Some(fail(
                "an open-ended item is not planned: recovery is of multiple-choice items",
            ));
            return Vec::new();
        }
        let Some(&HarmfulTransition { lower, higher }) = self.pairs(i).get(self.item.pair) else {
            self.overlays.notice = Some(fail("no harmful transition to plan on this item"));
            return Vec::new();
        };
        let names = self.config_names(i);
        let transition: Transition = (self.key(i), names[lower].clone(), names[higher].clone());
        let evidence = self
            .session
            .records()
            .iter()
            .filter(|(_, r)| !r.evidence_frames.is_empty())
            .map(|(unit, r): (&UnitKey, _)| {
                (
                    (unit.clone(), r.from.clone(), r.to.clone()),
                    r.evidence_frames.clone(),
                )
            })
            .collect();
        let req = PlanRequest {
            ds: self.ds.clone(),
            report: self.report.clone(),
            protocol: self.protocol,
            path: self.audits.plan_path.clone(),
            transition,
            annotator: self.session.annotator().to_string(),
            evidence,
        };
        self.overlays.notice = Some(Notice {
            text: sanitize(&format!(
                "planning {} → {} in {}…",
                req.transition.1,
                req.transition.2,
                req.path.display()
            ))
            .into_owned(),
            error: false,
        });
        self.audits.plan_requests.push(req);
        vec![Effect::Plan]
    }

    /// The plan requests made since the last call, oldest first, for the plan worker.
    pub fn take_plan_requests(&mut self) -> Vec<PlanRequest> {
        std::mem::take(&mut self.audits.plan_requests)
    }

    /// The plan worker's answer to a request: shown on the status line.
    pub fn on_planned(&mut self, notice: Notice) {
        self.overlays.notice = Some(notice);
    }
}
