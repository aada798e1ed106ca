//! The records of an audit: the unit audited (a model's answers to one item), where its
//! audit stands, and the events of the log that change it. Nothing here reads or writes
//! files; `format` gives these their lines.

use serde::{Deserialize, Serialize};

/// Where a record stands in the annotator's work.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not audited yet.
    #[default]
    Todo,
    /// Audited.
    Done,
    /// Passed over on purpose.
    Skipped,
    /// Marked for a second look.
    Flagged,
}

impl Status {
    /// Every status, in the order reports list them.
    pub const ALL: [Status; 4] = [Status::Todo, Status::Done, Status::Skipped, Status::Flagged];

    /// The name written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Todo => "todo",
            Status::Done => "done",
            Status::Skipped => "skipped",
            Status::Flagged => "flagged",
        }
    }

    /// The status written `s` in a file, if it is one.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Whether a record of this status is an annotation, for agreement
    /// ([`crate::core::analysis::agreement::is_annotation`]).
    pub fn is_annotation(self, tagged: bool) -> bool {
        crate::core::analysis::agreement::is_annotation(self.as_str(), tagged).unwrap_or(true)
    }
}

/// The unit of audit: one model's answers to one item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnitKey {
    /// Model name, as in the cells.
    pub model: String,
    /// Benchmark name, as in the cells.
    pub benchmark: String,
    /// Item id within the benchmark.
    pub item_id: String,
}

impl UnitKey {
    /// A key from its three parts.
    pub fn new(
        model: impl Into<String>,
        benchmark: impl Into<String>,
        item_id: impl Into<String>,
    ) -> Self {
        UnitKey {
            model: model.into(),
            benchmark: benchmark.into(),
            item_id: item_id.into(),
        }
    }
}

/// The audit of one unit, as it stands after its last change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    /// The unit audited.
    pub key: UnitKey,
    /// The lower configuration of the transition examined (the one that was right).
    pub from: String,
    /// The higher configuration of the transition examined (the one that was wrong).
    pub to: String,
    /// Where the audit of this unit stands.
    pub status: Status,
    /// Evidence pathways tagged (taxonomy ids).
    pub pathways: Vec<String>,
    /// The pathway judged primary, if any.
    pub primary: Option<String>,
    /// Frame indices marked as evidence.
    pub evidence_frames: Vec<u64>,
    /// Free-text note.
    pub note: String,
    /// When the record last changed (RFC 3339).
    pub at: String,
    /// Whether the item's harm survived its replicates when the record last changed
    /// (docs/measures.md §16.4); `None` without replicates.
    pub harm: Option<crate::core::analysis::noise::Harm>,
}

impl AuditRecord {
    /// A record with nothing filled in: status `todo`, no tags, no frames, no note.
    pub fn blank(
        key: UnitKey,
        from: impl Into<String>,
        to: impl Into<String>,
        at: impl Into<String>,
    ) -> Self {
        AuditRecord {
            key,
            from: from.into(),
            to: to.into(),
            status: Status::Todo,
            pathways: Vec::new(),
            primary: None,
            evidence_frames: Vec::new(),
            note: String::new(),
            at: at.into(),
            harm: None,
        }
    }

    /// True when the record holds nothing (status `todo`, no pathways, no primary, no
    /// evidence frames, empty note); replay treats such a record as absent.
    pub fn is_blank(&self) -> bool {
        self.status == Status::Todo
            && self.pathways.is_empty()
            && self.primary.is_none()
            && self.evidence_frames.is_empty()
            && self.note.is_empty()
    }

    /// What changed from `before` to `self`, in words, for a status line: "done → todo,
    /// −evidence_dropped, note edited". Empty when nothing but the time changed. The texts
    /// are the records' own (sanitise them before drawing).
    pub fn changes_since(&self, before: &AuditRecord) -> String {
        let mut out: Vec<String> = Vec::new();
        if before.status != self.status {
            out.push(format!(
                "{} → {}",
                before.status.as_str(),
                self.status.as_str()
            ));
        }
        for p in &before.pathways {
            if !self.pathways.contains(p) {
                out.push(format!("−{p}"));
            }
        }
        for p in &self.pathways {
            if !before.pathways.contains(p) {
                out.push(format!("+{p}"));
            }
        }
        // Tagging or untagging moves the primary with it; only a change of its own is said.
        if before.primary != self.primary && before.pathways == self.pathways {
            out.push(format!(
                "primary {}",
                self.primary.as_deref().unwrap_or("none")
            ));
        }
        for f in &before.evidence_frames {
            if !self.evidence_frames.contains(f) {
                out.push(format!("−evidence frame {f}"));
            }
        }
        for f in &self.evidence_frames {
            if !before.evidence_frames.contains(f) {
                out.push(format!("+evidence frame {f}"));
            }
        }
        if before.note != self.note {
            out.push(if self.note.is_empty() {
                "note cleared".into()
            } else {
                "note edited".into()
            });
        }
        if (&before.from, &before.to) != (&self.from, &self.to) {
            out.push(format!("transition {} → {}", self.from, self.to));
        }
        out.join(", ")
    }
}

/// One line of the log after the header (see the module documentation for the ops).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A change: the full new state of the record (its `at` is the event's time).
    Set(AuditRecord),
    /// A change taken back: the full state the record returns to.
    Undo(AuditRecord),
    /// A change re-applied: the full state re-applied.
    Redo(AuditRecord),
    /// The annotator opened this unit.
    Visit {
        /// The unit opened.
        key: UnitKey,
        /// When (RFC 3339).
        at: String,
    },
    /// The annotator went on with this audit on other data: from here on it is tied to the
    /// cells of this fingerprint (docs/formats.md §2).
    Data {
        /// The fingerprint of the cells the audit goes on with.
        fingerprint: String,
        /// When (RFC 3339).
        at: String,
    },
}

impl Event {
    /// The `op` written in the file.
    pub fn op(&self) -> &'static str {
        match self {
            Event::Set(_) => "set",
            Event::Undo(_) => "undo",
            Event::Redo(_) => "redo",
            Event::Visit { .. } => "visit",
            Event::Data { .. } => "data",
        }
    }

    /// The unit the event concerns (`None` for a change of data).
    pub fn key(&self) -> Option<&UnitKey> {
        match self {
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) => Some(&r.key),
            Event::Visit { key, .. } => Some(key),
            Event::Data { .. } => None,
        }
    }

    /// When the event happened.
    pub fn at(&self) -> &str {
        match self {
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) => &r.at,
            Event::Visit { at, .. } | Event::Data { at, .. } => at,
        }
    }

    /// The state the event gives its record (`None` for a visit or a change of data).
    pub fn state(&self) -> Option<&AuditRecord> {
        match self {
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) => Some(r),
            Event::Visit { .. } | Event::Data { .. } => None,
        }
    }
}

/// The current time in UTC as RFC 3339 to the second (`2026-11-29T12:00:00Z`).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_now_is_rfc3339_utc_seconds() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
    }

    #[test]
    fn audit_status_names() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
            assert_eq!(
                crate::core::text::json_to_string(&s).expect("ser"),
                format!("\"{}\"", s.as_str())
            );
        }
        assert_eq!(Status::parse("Done"), None);
    }
}
