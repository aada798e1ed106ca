//! The item room: the record of the unit under audit and what changes it (the transition
//! examined, tags, primary, note, marks, undo and redo, another annotator's record in a
//! review). The edit rules themselves are the core's (`core::audit::edit`).

use std::sync::Arc;

use crate::core::analysis::Metrics;
use crate::core::audit::{AuditRecord, Status, edit};
use crate::core::queue::HarmfulTransition;
use crate::core::text::sanitize;
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::input::line_edit::LineEdit;

use super::{App, Effect, FramePanel, Input, Notice, Screen, Subset};

/// The item under audit: the harmful transition examined and the frame panel.
#[derive(Debug, Clone, Default)]
pub struct ItemState {
    /// The harmful pair under audit (index into the row's pairs).
    pub pair: usize,
    /// What the frame panel shows.
    pub frame_panel: FramePanel,
}

impl App {
    /// Row `i`'s record in this session, if it has one on one of the row's harmful
    /// transitions. A record on another transition (the data or the analysis changed
    /// under it) is [`App::stale_record`]: the item is to do again, and a change starts a
    /// new record (the file keeps the old one's lines, and undo brings it back).
    pub fn record(&self, i: usize) -> Option<&AuditRecord> {
        self.unit_record(i)
            .filter(|rec| self.on_its_transition(i, rec))
    }

    /// Row `i`'s record when it is on no harmful transition of the row.
    pub fn stale_record(&self, i: usize) -> Option<&AuditRecord> {
        self.unit_record(i)
            .filter(|rec| !self.on_its_transition(i, rec))
    }

    fn unit_record(&self, i: usize) -> Option<&AuditRecord> {
        if self.session.records().is_empty() {
            return None;
        }
        self.session.record(&self.key(i))
    }

    fn on_its_transition(&self, i: usize, rec: &AuditRecord) -> bool {
        let q = &self.queue.rows[i].q;
        crate::core::workspace::on_its_transition(&self.ds.matrix, &self.report, q, rec)
    }

    /// Row `i`'s status (todo without a record).
    pub fn status(&self, i: usize) -> Status {
        self.record(i).map_or(Status::Todo, |r| r.status)
    }

    /// The row on screen now, if any.
    pub fn current(&self) -> Option<usize> {
        self.queue.selected.map(|s| s as usize)
    }

    /// The pair index of the row's saved record, else of its audited transition (the step
    /// where the answer flips, `core::queue::audited_transition`), else 0.
    pub(super) fn pair_of_record(&self, i: usize) -> usize {
        let r = &self.queue.rows[i];
        let pairs = self.pairs(i);
        let recorded = self.record(i).and_then(|rec| {
            let names = self.config_names(i);
            pairs
                .iter()
                .position(|t| names[t.lower] == rec.from && names[t.higher] == rec.to)
        });
        recorded
            .or_else(|| {
                let p = crate::core::queue::audited_transition(&self.report, &r.q)?;
                pairs.iter().position(|&x| x == p)
            })
            .unwrap_or(0)
    }

    /// The pair index an item opens on: the transition of the researcher selection it was
    /// opened from (when it is one of the item's harmful transitions), else
    /// [`App::pair_of_record`].
    pub(super) fn opening_pair(&self, i: usize) -> usize {
        let selected = self
            .queue
            .filter
            .items
            .as_ref()
            .and_then(|s| s.transition.as_ref())
            .and_then(|(from, to)| {
                let names = self.config_names(i);
                self.pairs(i)
                    .iter()
                    .position(|t| names[t.lower] == *from && names[t.higher] == *to)
            });
        selected.unwrap_or_else(|| self.pair_of_record(i))
    }

    /// The grid configuration names of a row's model grid.
    pub fn config_names(&self, i: usize) -> Vec<String> {
        crate::core::workspace::config_names(&self.ds.matrix, &self.report, &self.queue.rows[i].q)
    }

    /// The metrics of row `i`'s model grid.
    pub fn metrics(&self, i: usize) -> &Metrics {
        let q = &self.queue.rows[i].q;
        &self.report.analyses[q.analysis as usize].metrics[q.model_index as usize]
    }

    pub(super) fn open(&mut self) {
        if let Some(i) = self.current() {
            self.screen = Screen::Item;
            self.item.pair = self.opening_pair(i);
            self.item.frame_panel = FramePanel::default();
            self.session.visit(&self.key(i), &(self.clock)());
        }
    }

    /// The current record of row `i`, or a blank one, on the transition under audit
    /// (`core::audit::edit::working`).
    pub(super) fn working_record(&self, i: usize) -> AuditRecord {
        let names = self.config_names(i);
        let HarmfulTransition {
            lower: a,
            higher: b,
        } = self
            .pairs(i)
            .get(self.item.pair)
            .copied()
            .unwrap_or(HarmfulTransition::new(0, 0));
        edit::working(self.record(i), self.key(i), &names[a], &names[b])
    }

    /// Saves a changed record, with whether the item's harm survives its replicates as the
    /// annotator sees it now, and refreshes what depends on it.
    pub(super) fn change(&mut self, i: usize, mut rec: AuditRecord) {
        rec.harm = self.queue.rows[i].q.harm;
        self.session.apply(rec, &(self.clock)());
        self.after_change(i);
    }

    /// Review: the unit's record becomes the next annotator's (after the one it equals).
    pub(super) fn take_annotator(&mut self) {
        let Some(i) = self.current() else { return };
        let Some(records) = self
            .audits
            .review
            .as_ref()
            .and_then(|r| r.records(&self.key(i)))
        else {
            let key = self
                .keymap
                .hint(Context::Item, Action::TakeAnnotator)
                .map_or_else(String::new, |k| format!("{k} "));
            self.overlays.notice = Some(Notice {
                text: format!(
                    "{key}takes an annotator's record in a review (frameaudit review AUDIT...)"
                ),
                error: false,
            });
            return;
        };
        let mut rec = self.working_record(i);
        let at = records
            .iter()
            .position(|(_, r)| edit::same_judgement(r, &rec))
            .map_or(0, |p| (p + 1) % records.len());
        let (who, r) = &records[at];
        let keys = self.keymap.hints(
            Context::Item,
            &[
                (&[Action::TakeAnnotator], "", " again: the next annotator's"),
                (&[Action::MarkDone], "", ": done"),
            ],
        );
        let text = format!(
            "took {}'s record ({} of {}); {}",
            sanitize(who),
            at + 1,
            records.len(),
            keys.replace(" · ", ", ")
        );
        edit::take_judgement(&mut rec, r);
        self.change(i, rec);
        self.overlays.notice = Some(Notice { text, error: false });
    }

    pub(super) fn after_change(&mut self, i: usize) {
        let note = self.record(i).map_or(String::new(), |r| r.note.clone());
        Arc::make_mut(&mut self.queue.haystacks).set_note(i, &note);
        self.overlays.confirm_quit = false;
    }

    /// Counts a status change in the session's decisions: a unit leaving todo is a new
    /// decision, one going back to todo (an undo) takes its decision back; re-marking a
    /// decided unit is none.
    pub(super) fn count_decision(&mut self, was: Status, now: Status) {
        match (was == Status::Todo, now == Status::Todo) {
            (true, false) => self.pace.marked += 1,
            (false, true) => self.pace.marked = self.pace.marked.saturating_sub(1),
            _ => {}
        }
    }

    pub(super) fn mark(&mut self, status: Status) {
        let Some(i) = self.current() else { return };
        let was = self.status(i);
        let mut rec = self.working_record(i);
        rec.status = status;
        self.change(i, rec);
        self.count_decision(was, status);
        let again =
            (was == status).then(|| format!("already {}, not counted again", status.as_str()));
        // Move on to the next row of the queue as it stands.
        let pos = self.cursor().unwrap_or(0);
        self.refresh_visible();
        let next = if self.queue.visible.get(pos).copied() == Some(i as u32) {
            pos + 1
        } else {
            pos
        };
        if next < self.queue.visible.len() {
            self.move_to(next);
            self.open();
            if let Some(text) = again {
                self.overlays.notice = Some(Notice { text, error: false });
            }
        } else {
            self.screen = Screen::Queue;
            self.overlays.notice = Some(Notice {
                text: format!(
                    "end of the queue: {}{}",
                    status.as_str(),
                    self.takes_it_back(Context::Queue, " · ")
                ),
                error: false,
            });
        }
    }
    /// An action of the item screen: the transition, the tags, the note, the frames, the
    /// marks, undo and redo, the plan.
    pub(super) fn item_update(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Back => self.screen = Screen::Queue,
            Action::NextItem | Action::PrevItem => {
                self.step(if action == Action::NextItem { 1 } else { -1 });
                self.open();
            }
            Action::NextTransition | Action::PrevTransition => {
                self.next_transition(action == Action::NextTransition)
            }
            Action::TakeAnnotator => self.take_annotator(),
            Action::TogglePathway(p) => {
                if let (Some(i), Some(id)) = (
                    self.current(),
                    self.taxonomy.pathways.get(p).map(|x| x.id.clone()),
                ) {
                    let mut rec = self.working_record(i);
                    edit::toggle_pathway(&mut rec, &self.taxonomy, &id);
                    self.change(i, rec);
                }
            }
            Action::CyclePrimary => {
                if let Some(i) = self.current() {
                    let mut rec = self.working_record(i);
                    edit::cycle_primary(&mut rec);
                    self.change(i, rec);
                }
            }
            Action::EditNote => {
                if let Some(i) = self.current() {
                    self.overlays.input = Input::Note(LineEdit::new(
                        self.record(i).map_or(String::new(), |r| r.note.clone()),
                    ));
                }
            }
            Action::FramePrev
            | Action::FrameNext
            | Action::FrameConfig
            | Action::FrameSubset
            | Action::MarkEvidence => self.frame_action(action),
            Action::AddToPlan => {
                if let Some(i) = self.current() {
                    return self.add_to_plan(i);
                }
            }
            Action::FullFrame => return self.full_frame(),
            Action::PlayerCommand => self.player_command(),
            Action::NextDropped => self.jump_frame(Subset::Dropped),
            Action::NextAdded => self.jump_frame(Subset::Added),
            Action::MarkDone => self.mark(Status::Done),
            Action::Skip => self.mark(Status::Skipped),
            Action::Flag => self.mark(Status::Flagged),
            Action::Undo | Action::Redo => self.undo_redo(action == Action::Undo),
            _ => {}
        }
        Vec::new()
    }

    /// The next (or previous) harmful transition of the item, wrapping; the transition
    /// examined is part of the record once there is one, so the record moves with it, and
    /// the status line says so.
    pub(super) fn next_transition(&mut self, forward: bool) {
        let Some(i) = self.current() else { return };
        let n = self.pairs(i).len().max(1);
        self.item.frame_panel = FramePanel::default();
        self.item.pair = if forward {
            (self.item.pair + 1) % n
        } else {
            (self.item.pair + n - 1) % n
        };
        if self.record(i).is_some() && n > 1 {
            let rec = self.working_record(i);
            let text = sanitize(&format!(
                "the item's record (its tags, note and evidence frames) is now on {} → {}{}",
                rec.from,
                rec.to,
                self.takes_it_back(Context::Item, "; ")
            ))
            .into_owned();
            self.change(i, rec);
            self.overlays.notice = Some(Notice { text, error: false });
        }
    }

    /// "`sep`K takes it back", K being the undo key of `context` as the keymap binds it;
    /// nothing when undo is unbound there, since a notice naming a dead key would mislead.
    fn takes_it_back(&self, context: Context, sep: &str) -> String {
        self.keymap
            .hint(context, Action::Undo)
            .map_or_else(String::new, |k| format!("{sep}{k} takes it back"))
    }

    /// Takes the last change back (or re-applies the last one taken back), goes to its row
    /// and says what it changed.
    pub(super) fn undo_redo(&mut self, undo: bool) {
        let change = if undo {
            self.session.undo(&(self.clock)())
        } else {
            self.session.redo(&(self.clock)())
        };
        let found = change.and_then(|(was, now)| {
            let i = self.row_of(&now.key)?;
            Some((i, was, now))
        });
        let Some((i, was, now)) = found else {
            self.overlays.notice = Some(Notice {
                text: format!("nothing to {}", if undo { "undo" } else { "redo" }),
                error: false,
            });
            return;
        };
        self.count_decision(was.status, now.status);
        self.after_change(i);
        self.queue.selected = Some(i as u32);
        self.refresh_visible();
        if self.screen == Screen::Item {
            self.item.pair = self.pair_of_record(i);
            self.session.visit(&self.key(i), &(self.clock)());
        }
        let k = &now.key;
        self.overlays.notice = Some(Notice {
            text: sanitize(&format!(
                "{} {} · {} · {}: {}",
                if undo { "undid" } else { "redid" },
                k.model,
                k.benchmark,
                k.item_id,
                now.changes_since(&was)
            ))
            .into_owned(),
            error: false,
        });
    }
}
