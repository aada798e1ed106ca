//! "Add this item to the plan" (docs/intervention.md §9): the item screen's transition, with
//! the evidence frames the annotator marked on it, joins the intervention plan file, planned
//! by every strategy exactly as `frameaudit intervene plan --targets audited` plans it.

use std::collections::BTreeSet;

use super::{App, Notice};
use crate::core::intervene::{Strategy, plan_transitions};
use crate::core::plan::{Plan, Transition};
use crate::core::queue::HarmfulTransition;
use crate::core::text::sanitize;

/// The transitions a plan file holds (entries and skipped ones); none when there is no
/// file yet; an error when what is there is not a plan.
fn planned_in(path: &std::path::Path) -> Result<BTreeSet<Transition>, String> {
    match Plan::read_if_present(path) {
        Ok(p) => Ok(p.map(|p| p.transitions()).unwrap_or_default()),
        Err(e) => Err(format!(
            "{} is not a plan ({e}): left as it is",
            path.display()
        )),
    }
}

impl App {
    /// Adds row `i`'s transition under audit to the plan file and says what was planned.
    pub fn add_to_plan(&mut self, i: usize) -> Notice {
        let fail = |text: String| Notice { text, error: true };
        if self.queue.rows[i].q.task != crate::core::matrix::Task::Mcq {
            return fail(
                "an open-ended item is not planned: recovery is of multiple-choice items".into(),
            );
        }
        let Some(&HarmfulTransition { lower, higher }) = self.pairs(i).get(self.item.pair) else {
            return fail("no harmful transition to plan on this item".into());
        };
        let names = self.config_names(i);
        let (from, to) = (names[lower].clone(), names[higher].clone());
        let path = self.audits.plan_path.clone();
        let mut transitions = match planned_in(&path) {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        let key = self.key(i);
        transitions.insert((key.clone(), from.clone(), to.clone()));
        // Each transition with the evidence frames this annotator marked on it now (the
        // record in memory, saved or not).
        let annotator = self.session.annotator().to_string();
        let p = plan_transitions(
            &self.ds,
            &self.report,
            self.protocol,
            &transitions,
            &annotator,
            |(unit, lo, hi)| {
                self.session
                    .record(unit)
                    .filter(|r| &r.from == lo && &r.to == hi)
                    .map(|r| r.evidence_frames.clone())
                    .unwrap_or_default()
            },
        );
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return fail(format!("cannot write {}: {e}", path.display()));
        }
        if let Err(e) = p.write(&path, crate::core::fswrite::Links::Refuse) {
            return fail(format!(
                "cannot write {}: {e}",
                sanitize(&path.display().to_string())
            ));
        }
        let mine = |strategy: &str| {
            p.entries.iter().find(|e| {
                e.strategy == strategy
                    && e.model == key.model
                    && e.benchmark == key.benchmark
                    && e.item_id == key.item_id
                    && e.lower == from
                    && e.config == to
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
                    && x.lower == from
                    && x.config == to
            })
            .map(|x| format!("; {} skipped: {}", x.strategy, x.why))
            .unwrap_or_default();
        Notice {
            text: sanitize(&format!(
                "planned {from} → {to} ({}): {} transitions in {}{skipped}",
                if planned.is_empty() {
                    "no strategy".to_string()
                } else {
                    planned.join(", ")
                },
                transitions.len(),
                path.display()
            ))
            .into_owned(),
            error: planned.is_empty(),
        }
    }
}
