//! "Add this item to the plan" (docs/intervention.md §9): the item screen's transition, with
//! the evidence frames the annotator marked on it, joins the intervention plan file, planned
//! by every strategy exactly as `frameaudit intervene plan --targets audited` plans it.

use std::collections::{BTreeMap, BTreeSet};

use super::{App, Notice};
use crate::core::audit::UnitKey;
use crate::core::intervene::{Audited, Strategy, Targets, plan};
use crate::core::queue::HarmfulTransition;
use crate::core::text::sanitize;

/// A transition of a plan: the unit, its lower and its higher configuration.
type Planned = (UnitKey, String, String);

/// The transitions a plan file holds (entries and skipped ones); none when there is no
/// file yet; an error when what is there is not a plan.
fn planned_in(path: &std::path::Path) -> Result<BTreeSet<Planned>, String> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(BTreeSet::new());
    }
    let p = crate::core::rerun::read_plan(path)
        .map_err(|e| format!("{} is not a plan ({e}): left as it is", path.display()))?;
    let entries = p.entries.into_iter().map(|e| {
        let key = UnitKey::new(e.model, e.benchmark, e.item_id);
        (key, e.lower, e.config)
    });
    let skipped = p.skipped.into_iter().map(|e| {
        let key = UnitKey::new(e.model, e.benchmark, e.item_id);
        (key, e.lower, e.config)
    });
    Ok(entries.chain(skipped).collect())
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
        let mut audits: BTreeMap<UnitKey, Vec<Audited>> = BTreeMap::new();
        for (unit, lo, hi) in &transitions {
            let evidence = self
                .session
                .record(unit)
                .filter(|r| &r.from == lo && &r.to == hi)
                .map(|r| r.evidence_frames.clone())
                .unwrap_or_default();
            audits.entry(unit.clone()).or_default().push(Audited {
                from: lo.clone(),
                to: hi.clone(),
                evidence,
                annotators: vec![annotator.clone()],
            });
        }
        let p = plan(
            &self.ds,
            &self.report,
            self.protocol,
            Targets::Audited,
            &Strategy::ALL,
            &audits,
        );
        let text = match serde_json::to_string_pretty(&p) {
            Ok(t) => t + "\n",
            Err(e) => return fail(format!("cannot write the plan: {e}")),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return fail(format!("cannot write {}: {e}", path.display()));
        }
        let written =
            crate::core::fswrite::write_output(&path, crate::core::fswrite::Links::Refuse, |w| {
                w.write_all(text.as_bytes())
            });
        if let Err(e) = written {
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
