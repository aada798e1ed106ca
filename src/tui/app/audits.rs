//! The audit files around the session: the comparison of the cells' fingerprint with the
//! file's, the other annotators' audits the findings view counts, the transitions a
//! record adds to the queue's list, the progress and pace of the session, and the header's
//! figures of the analysis.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use crate::core::analysis::Metrics;
use crate::core::audit::{AuditRecord, Status};
use crate::core::queue::HarmfulTransition;
use crate::core::workspace::OtherAudit;
use crate::core::workspace::review::Review;
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;

use super::{App, Effect, FindingsSource, Notice, Overview};

/// The audit files beside this one and what is done with them: the review, the findings'
/// sources, the plan file, the comparison of the fingerprint.
pub struct AuditsState {
    /// The disagreements under review (`frameaudit review`), if this is a review.
    pub review: Option<Review>,
    /// The dataset's other audit files (read once at start; the findings view adds this
    /// session's own records live).
    pub other_audits: Vec<OtherAudit>,
    /// Whose records the findings view counts: 0 = every annotator, then each annotator
    /// by name, then the adjudicated result (see [`App::findings_sources`]).
    pub findings_source: usize,
    /// The intervention plan `add_to_plan` writes (docs/intervention.md §9).
    pub plan_path: std::path::PathBuf,
    /// Transitions to add to it, not yet handed to the plan worker.
    pub plan_requests: Vec<super::plan::PlanRequest>,
    /// The fingerprint of the cells while it is computed, until the session compared it
    /// with its file's ([`App::settle_fingerprint`]).
    pub fingerprint: Option<Arc<std::sync::OnceLock<String>>>,
    /// The audit file was named by the user (`--audit`): one made on other data is gone on
    /// with without asking, as they asked for that file.
    pub audit_given: bool,
}

/// The pace of this session, for the header's items per minute.
#[derive(Debug, Clone)]
pub struct Pace {
    /// When the session started.
    pub started: Instant,
    /// Decisions of this session: units marked done, skipped or flagged that were todo
    /// (re-marking a decided unit is not one; undoing a decision takes it back).
    pub marked: usize,
}

impl App {
    /// Once the cells' fingerprint is known, has the session compare it with the audit
    /// file's. An audit made on other data is said on screen, with its records that no longer
    /// match their transition, and nothing is written to it until the annotator says to go on
    /// with it on this data ([`Action::GoOnWithThisData`]), unless they named the file with
    /// `--audit`. Nothing to do before, or after it was done once.
    pub fn settle_fingerprint(&mut self) {
        use crate::core::workspace::session::Hold;
        let Some(fp) = &self.audits.fingerprint else {
            return;
        };
        if fp.get().is_none() {
            return;
        }
        self.audits.fingerprint = None;
        // The session may have compared them already (the fingerprint came first).
        self.session.settle();
        if !matches!(self.session.hold(), Hold::OtherData { .. }) {
            return;
        }
        let stale = crate::core::workspace::stale_records(
            self.session.records(),
            &self.ds.matrix,
            &self.report,
            |k| self.row_of(k).map(|i| &self.queue.rows[i].q),
        );
        let matching = format!(
            "{} record(s) no longer match their transition{}",
            stale.len(),
            if stale.is_empty() {
                String::new()
            } else {
                format!(": {}", stale.join(", "))
            }
        );
        let note = if self.audits.audit_given {
            self.session.go_on_with_this_data(&(self.clock)());
            format!(
                "this audit was made on other data (fingerprint differs): gone on with on this data, as --audit names it; {matching}"
            )
        } else {
            let key = self
                .keymap
                .hint(Context::Global, Action::GoOnWithThisData)
                .unwrap_or_else(|| "W".into());
            format!(
                "this audit was made on other data (fingerprint differs): nothing is written to it; {key} goes on with it on this data, or quit and give --audit FILE; {matching}"
            )
        };
        let text = match self.overlays.notice.take() {
            Some(n) if n.error => format!("{} · {note}", n.text),
            _ => note,
        };
        self.overlays.notice = Some(Notice { text, error: true });
    }

    /// [`App::settle_fingerprint`], waiting for the fingerprint to be known.
    pub fn wait_fingerprint(&mut self) {
        if let Some(fp) = &self.audits.fingerprint {
            fp.wait();
        }
        self.settle_fingerprint();
    }

    /// Goes on with an audit made on other data, on this data, as the annotator asked.
    pub(super) fn go_on_with_this_data(&mut self) -> Vec<Effect> {
        if self.session.go_on_with_this_data(&(self.clock)()) {
            self.overlays.notice = Some(Notice {
                text: "this audit goes on on this data: its changes are written (a data line in the file says so)".into(),
                error: false,
            });
            return vec![Effect::Save];
        }
        self.overlays.notice = Some(Notice {
            text: "nothing to go on with: the audit is of this data".into(),
            error: false,
        });
        Vec::new()
    }

    /// The queue lists at most MAX_LISTED_PAIRS transitions of a unit; a record of this
    /// session on a harmful transition left out of that list is added to it, so that it
    /// opens on its own transition, and so is the audited transition of a unit with more.
    pub(super) fn list_recorded_pairs(&mut self) {
        let cap = crate::core::analysis::pairs::MAX_LISTED_PAIRS as u64;
        for i in 0..self.queue.rows.len() {
            if self.queue.rows[i].q.harmful_pairs > cap
                && let Some(p) =
                    crate::core::queue::audited_transition(&self.report, &self.queue.rows[i].q)
            {
                self.add_listed_pair(i, p);
            }
        }
        // The session's records are few; the queue's rows may be a million.
        let recorded: Vec<(usize, String, String)> = self
            .session
            .records()
            .iter()
            .filter_map(|(key, rec)| Some((self.row_of(key)?, rec.from.clone(), rec.to.clone())))
            .collect();
        for (i, from, to) in recorded {
            let names = self.config_names(i);
            let col = |name: &str| names.iter().position(|n| *n == name);
            let t = col(&from)
                .zip(col(&to))
                .map(|(a, b)| HarmfulTransition::new(a, b));
            if let Some(t) = t
                && crate::core::queue::is_harmful_pair(&self.report, &self.queue.rows[i].q, t)
            {
                self.add_listed_pair(i, t);
            }
        }
    }

    /// Adds `t` to row `i`'s listed transitions, if it is not there yet.
    pub(super) fn add_listed_pair(&mut self, i: usize, t: HarmfulTransition) {
        if self.pairs(i).contains(&t) {
            return;
        }
        let mut listed = (*self.pairs(i)).clone();
        listed.push(t);
        self.queue.rows[i].q.transitions = Some(Box::new(listed));
        self.queue.pairs_cache.replace(None);
    }

    /// The sources the findings view can count: all annotators, each one, the adjudicated
    /// result (when there is one).
    pub fn findings_sources(&self) -> Vec<FindingsSource> {
        let mut names: Vec<String> = self
            .audits
            .other_audits
            .iter()
            .filter(|o| !o.adjudicated)
            .map(|o| o.annotator.clone())
            .collect();
        if self.audits.review.is_none() {
            names.push(self.session.annotator().to_string());
        }
        names.sort();
        names.dedup();
        let mut out = vec![FindingsSource::All];
        out.extend(names.into_iter().map(FindingsSource::Annotator));
        if self.audits.review.is_some() || self.audits.other_audits.iter().any(|o| o.adjudicated) {
            out.push(FindingsSource::Adjudicated);
        }
        out
    }

    /// The records the findings view counts now: this session's live, the others' as read.
    pub fn findings_records(&self) -> Vec<&AuditRecord> {
        let sources = self.findings_sources();
        let source = sources
            .get(self.audits.findings_source)
            .unwrap_or(&FindingsSource::All);
        let own_adjudicated = self.audits.review.is_some();
        let own = self.session.records().values();
        let mut out: Vec<&AuditRecord> = Vec::new();
        let take_own = match source {
            FindingsSource::All => !own_adjudicated,
            FindingsSource::Annotator(a) => !own_adjudicated && a == self.session.annotator(),
            FindingsSource::Adjudicated => own_adjudicated,
        };
        if take_own {
            out.extend(own);
        }
        for o in &self.audits.other_audits {
            let take = match source {
                FindingsSource::All => !o.adjudicated,
                FindingsSource::Annotator(a) => !o.adjudicated && *a == o.annotator,
                FindingsSource::Adjudicated => o.adjudicated,
            };
            if take {
                out.extend(&o.records);
            }
        }
        out
    }

    /// Progress over the whole queue: (done, skipped, flagged, left). Only audited units
    /// have records, so this walks the records, not the queue.
    pub fn progress(&self) -> (usize, usize, usize, usize) {
        let mut c = (0, 0, 0, 0);
        for (key, rec) in self.session.records() {
            // A record on no harmful transition of its row leaves the item to do.
            let Some(i) = self.row_of(key) else { continue };
            if self.record(i).is_none() {
                continue;
            }
            match rec.status {
                Status::Done => c.0 += 1,
                Status::Skipped => c.1 += 1,
                Status::Flagged => c.2 += 1,
                Status::Todo => {}
            }
        }
        c.3 = self.queue.rows.len() - c.0 - c.1 - c.2;
        c
    }

    pub(super) fn compute_overview(&self) -> Overview {
        let mut models = BTreeSet::new();
        let mut configs = BTreeSet::new();
        // Items may be a million: marked in place rather than kept in a set.
        let mut item_seen = vec![false; self.ds.matrix.items.len()];
        let mut harmful: Option<(f64, f64)> = None;
        let mut headroom: Option<(f64, f64)> = None;
        let widen = |r: &mut Option<(f64, f64)>, x: f64| {
            *r = Some(r.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))));
        };
        for a in self
            .report
            .analyses
            .iter()
            .filter(|a| a.key.protocol == self.protocol)
        {
            for mg in &a.grids.models {
                models.insert(mg.model);
                configs.extend(mg.grid.configs.iter().copied());
                if a.key.scope == crate::core::analysis::grid::Scope::All {
                    continue;
                }
                for &it in mg.grid.items.iter() {
                    item_seen[it as usize] = true;
                }
            }
            if a.key.scope == crate::core::analysis::grid::Scope::All {
                for x in a.metrics.iter() {
                    if let Metrics::Mcq(x) = x {
                        widen(&mut harmful, x.harmful_rate);
                        widen(&mut headroom, x.headroom);
                    }
                }
            }
        }
        Overview {
            models: models.len(),
            configs: configs.len(),
            items: item_seen.iter().filter(|&&x| x).count(),
            harmful,
            headroom,
        }
    }

    /// New decisions per minute in this session (see `marked`).
    pub fn items_per_minute(&self) -> f64 {
        let mins = self.pace.started.elapsed().as_secs_f64() / 60.0;
        if mins < 1.0 / 60.0 {
            0.0
        } else {
            self.pace.marked as f64 / mins
        }
    }
}
