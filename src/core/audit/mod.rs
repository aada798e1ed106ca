//! The audit store: an annotator's audit records, kept as an append-only, crash-safe log
//! (docs/formats.md §2) from which the current state of every record is rebuilt.
//! This module holds the types, the line format and the replay; `file` the locked file.
//!
//! ## Events of an audit file (`frameaudit/audit@1`)
//!
//! After the header line, every line is one event, a JSON object. Each event names its
//! unit (`model`, `benchmark`, `item_id`) and the time it happened (`at`, RFC 3339 UTC).
//! The `op` says what it is:
//!
//! - `set`: a change by the annotator. Carries the **full new state** of the record:
//!   `from`, `to` (the transition examined: a lower configuration that was right, a higher
//!   one that was wrong), `status` (`todo` | `done` | `skipped` | `flagged`), `pathways`
//!   (evidence-pathway tags), `primary` (a pathway or null), `evidence_frames` (frame
//!   indices), `note` (free text).
//! - `undo`: the annotator took a change back. Carries the full state the record returns
//!   to, in the same fields as `set`. The log is never edited: an undo is a new line.
//! - `redo`: the annotator re-applied a change taken back. Carries the full state
//!   re-applied, in the same fields as `set`.
//! - `visit`: the annotator opened this unit (only `at`, `op`, `model`, `benchmark`,
//!   `item_id`). The last visit is where a resumed session starts.
//!
//! Replay reads the events in file order. For `set`, `undo` and `redo` the record's state
//! becomes the event's state, and its `at` the event's `at`; since every event carries a
//! whole state, replay needs no undo history. A state with status `todo`, no pathways, no
//! primary, no evidence frames and an empty note counts as **absent** (an undo back to
//! "never touched" removes the record). `pathways`, `evidence_frames` and `note` may be
//! absent or null (empty), `primary` absent or null (none); fields not listed are ignored.
//!
//! A line cut short by a crash (the last line without its newline, or a last line that is
//! not well-formed JSON) is ignored with a warning and, when the file is opened for
//! writing, truncated away. Any other line that is not a valid event is skipped with a
//! warning; everything before and after it counts. A malformed header is an error.

mod file;
mod fingerprint;
pub mod merged;

pub use file::{AuditFile, read_audit};
pub use fingerprint::fingerprint;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::core::load::json::{J, describe_json_error, is_missing};
use crate::core::text::sanitize;

/// The schema string of the header line of an audit file.
pub const AUDIT_SCHEMA: &str = "frameaudit/audit@1";

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

/// The header line of an audit file: which dataset, annotator and taxonomy it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditHeader {
    /// Name of the dataset audited.
    pub dataset_name: String,
    /// [`fingerprint`] of the cells the audit was made on.
    pub fingerprint: String,
    /// Who audits.
    pub annotator: String,
    /// Id of the evidence-pathway taxonomy.
    pub taxonomy_id: String,
    /// Version of that taxonomy.
    pub taxonomy_version: u32,
    /// When the file was created (RFC 3339).
    pub created_at: String,
    /// For an adjudicated audit, the audits it settles (as named to `review`); empty for
    /// an annotator's own audit, and then not written.
    pub adjudicates: Vec<String>,
}

#[derive(Serialize)]
struct HeaderLine<'a> {
    schema: &'a str,
    dataset: DatasetRef<'a>,
    annotator: &'a str,
    taxonomy: TaxonomyRef<'a>,
    created_at: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    adjudicates: &'a [String],
}

#[derive(Serialize)]
struct DatasetRef<'a> {
    name: &'a str,
    fingerprint: &'a str,
}

#[derive(Serialize)]
struct TaxonomyRef<'a> {
    id: &'a str,
    version: u32,
}

impl AuditHeader {
    /// A header for tests.
    #[cfg(test)]
    pub(crate) fn for_tests(annotator: &str) -> AuditHeader {
        AuditHeader {
            dataset_name: "grid".into(),
            fingerprint: "sha256:00".into(),
            annotator: annotator.into(),
            taxonomy_id: "evidence-pathways".into(),
            taxonomy_version: 1,
            created_at: "2026-11-29T12:00:00Z".into(),
            adjudicates: Vec::new(),
        }
    }

    /// The header as its line in the file (without the newline).
    pub fn to_line(&self) -> String {
        let line = HeaderLine {
            schema: AUDIT_SCHEMA,
            dataset: DatasetRef {
                name: &self.dataset_name,
                fingerprint: &self.fingerprint,
            },
            annotator: &self.annotator,
            taxonomy: TaxonomyRef {
                id: &self.taxonomy_id,
                version: self.taxonomy_version,
            },
            created_at: &self.created_at,
            adjudicates: &self.adjudicates,
        };
        // Serialising plain strings and integers into memory cannot fail.
        crate::core::text::json_to_string(&line).unwrap_or_default()
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
}

#[derive(Serialize)]
struct StateLine<'a> {
    at: &'a str,
    op: &'a str,
    model: &'a str,
    benchmark: &'a str,
    item_id: &'a str,
    from: &'a str,
    to: &'a str,
    status: Status,
    pathways: &'a [String],
    primary: Option<&'a str>,
    evidence_frames: &'a [u64],
    note: &'a str,
}

#[derive(Serialize)]
struct VisitLine<'a> {
    at: &'a str,
    op: &'a str,
    model: &'a str,
    benchmark: &'a str,
    item_id: &'a str,
}

impl Event {
    /// The `op` written in the file.
    pub fn op(&self) -> &'static str {
        match self {
            Event::Set(_) => "set",
            Event::Undo(_) => "undo",
            Event::Redo(_) => "redo",
            Event::Visit { .. } => "visit",
        }
    }

    /// The unit the event concerns.
    pub fn key(&self) -> &UnitKey {
        match self {
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) => &r.key,
            Event::Visit { key, .. } => key,
        }
    }

    /// When the event happened.
    pub fn at(&self) -> &str {
        match self {
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) => &r.at,
            Event::Visit { at, .. } => at,
        }
    }

    /// The state the event gives its record (`None` for a visit).
    pub fn state(&self) -> Option<&AuditRecord> {
        match self {
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) => Some(r),
            Event::Visit { .. } => None,
        }
    }

    /// The event as its line in the file (without the newline).
    pub fn to_line(&self) -> String {
        let key = self.key();
        let json = match self.state() {
            Some(r) => crate::core::text::json_to_string(&StateLine {
                at: &r.at,
                op: self.op(),
                model: &key.model,
                benchmark: &key.benchmark,
                item_id: &key.item_id,
                from: &r.from,
                to: &r.to,
                status: r.status,
                pathways: &r.pathways,
                primary: r.primary.as_deref(),
                evidence_frames: &r.evidence_frames,
                note: &r.note,
            }),
            None => crate::core::text::json_to_string(&VisitLine {
                at: self.at(),
                op: self.op(),
                model: &key.model,
                benchmark: &key.benchmark,
                item_id: &key.item_id,
            }),
        };
        // Serialising strings, integers and lists of them into memory cannot fail.
        json.unwrap_or_default()
    }
}

/// The state of an audit rebuilt from its log.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The header, as read from the file.
    pub header: AuditHeader,
    /// Every record present (not blank) after the last event, in key order.
    pub records: BTreeMap<UnitKey, AuditRecord>,
    /// The unit of the last `visit`, where a resumed session starts.
    pub last_visit: Option<UnitKey>,
    /// How many events were applied.
    pub events: usize,
    /// Lines ignored or skipped, each "file:line: warning: what is wrong".
    pub warnings: Vec<String>,
}

impl Replay {
    /// An empty state under a header.
    pub fn new(header: AuditHeader) -> Self {
        Replay {
            header,
            records: BTreeMap::new(),
            last_visit: None,
            events: 0,
            warnings: Vec::new(),
        }
    }

    /// Applies one event by the replay rule, as if it were the next line of the file; the
    /// TUI uses it to keep its state in step with what it appends.
    pub fn apply(&mut self, event: &Event) {
        self.events += 1;
        match event.state() {
            Some(r) if r.is_blank() => {
                self.records.remove(&r.key);
            }
            Some(r) => {
                self.records.insert(r.key.clone(), r.clone());
            }
            None => self.last_visit = Some(event.key().clone()),
        }
    }
}

/// Why an audit file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file or its directory could not be created, read, locked or written.
    #[error("cannot {what} {}: {source}", sanitize(&path.display().to_string()))]
    Io {
        /// What was being done ("read", "lock", ...).
        what: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Another open handle (another frameaudit, or this one) holds the file's lock.
    #[error(
        "{} is open in another frameaudit: only one may write an audit file at a time, so close the other one first",
        sanitize(&path.display().to_string())
    )]
    Locked {
        /// The audit file.
        path: PathBuf,
    },
    /// The first line is not a valid audit header.
    #[error("{}:1: error: bad audit header: {}{}",
        sanitize(&path.display().to_string()),
        field.as_ref().map(|f| format!("field `{}`: ", sanitize(f))).unwrap_or_default(),
        sanitize(message))]
    BadHeader {
        /// The audit file.
        path: PathBuf,
        /// The field at fault (dotted for nested ones, `dataset.fingerprint`), if one is.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
}

/// Parses the header line; on failure, the field at fault (if any) and what is wrong.
fn parse_header(text: &[u8]) -> Result<AuditHeader, (Option<String>, String)> {
    let whole = |msg: String| (None, msg);
    let text = std::str::from_utf8(text)
        .map_err(|_| whole("the line is not valid UTF-8".into()))?
        .trim();
    if text.is_empty() {
        return Err(whole("the first line is empty".into()));
    }
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| whole(format!("malformed JSON: {}", describe_json_error(&e))))?;
    let Some(obj) = v.as_object() else {
        return Err(whole(format!(
            "expected a JSON object, found {}",
            value_kind(&v)
        )));
    };
    let field = |name: &str, msg: String| (Some(name.to_string()), msg);
    let get_str =
        |o: &serde_json::Map<String, serde_json::Value>, key: &str, path: &str| match o.get(key) {
            None => Err(field(path, "required field is missing".into())),
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(field(
                path,
                format!("expected a string, found {}", value_kind(other)),
            )),
        };
    let get_obj = |key: &str| match obj.get(key) {
        None => Err(field(key, "required field is missing".into())),
        Some(serde_json::Value::Object(o)) => Ok(o),
        Some(other) => Err(field(
            key,
            format!("expected an object, found {}", value_kind(other)),
        )),
    };
    let schema = get_str(obj, "schema", "schema")?;
    if schema != AUDIT_SCHEMA {
        let msg = match schema.strip_prefix("frameaudit/audit@") {
            Some(v) => format!(
                "the file is {schema:?}, written by another version of frameaudit; this one reads {AUDIT_SCHEMA:?} (audit@{v} is not supported)"
            ),
            None => format!("expected {AUDIT_SCHEMA:?}, found {schema:?}: not an audit file"),
        };
        return Err(field("schema", msg));
    }
    let dataset = get_obj("dataset")?;
    let dataset_name = get_str(dataset, "name", "dataset.name")?;
    let fingerprint = get_str(dataset, "fingerprint", "dataset.fingerprint")?;
    let annotator = get_str(obj, "annotator", "annotator")?;
    if annotator.is_empty() {
        return Err(field("annotator", "must be a non-empty string".into()));
    }
    let taxonomy = get_obj("taxonomy")?;
    let taxonomy_id = get_str(taxonomy, "id", "taxonomy.id")?;
    let taxonomy_version = match taxonomy.get("version") {
        None => {
            return Err(field(
                "taxonomy.version",
                "required field is missing".into(),
            ));
        }
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                field(
                    "taxonomy.version",
                    format!("expected an integer >= 0, found {v}"),
                )
            })?,
    };
    let created_at = get_str(obj, "created_at", "created_at")?;
    let adjudicates = match obj.get("adjudicates") {
        None => Vec::new(),
        Some(serde_json::Value::Array(a)) if a.iter().all(|v| v.is_string()) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(other) => {
            return Err(field(
                "adjudicates",
                format!("expected an array of strings, found {}", value_kind(other)),
            ));
        }
    };
    Ok(AuditHeader {
        dataset_name,
        fingerprint,
        annotator,
        taxonomy_id,
        taxonomy_version,
        created_at,
        adjudicates,
    })
}

fn value_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Why an event line was not applied.
#[derive(Debug)]
enum LineError {
    /// Not well-formed JSON (cut short, garbage, invalid UTF-8): at the end of the file, a
    /// crash's torn write.
    Malformed(String),
    /// Well-formed JSON that is not a valid event.
    Invalid(String),
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(borrow, default)]
    at: J<'a>,
    #[serde(borrow, default)]
    op: J<'a>,
    #[serde(borrow, default)]
    model: J<'a>,
    #[serde(borrow, default)]
    benchmark: J<'a>,
    #[serde(borrow, default)]
    item_id: J<'a>,
    #[serde(borrow, default)]
    from: J<'a>,
    #[serde(borrow, default)]
    to: J<'a>,
    #[serde(borrow, default)]
    status: J<'a>,
    #[serde(borrow, default)]
    pathways: J<'a>,
    #[serde(borrow, default)]
    primary: J<'a>,
    #[serde(borrow, default)]
    evidence_frames: J<'a>,
    #[serde(borrow, default)]
    note: J<'a>,
}

/// Collects every problem of one event line, so one warning says all that is wrong.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, field: &str, msg: impl std::fmt::Display) {
        self.0.push(format!("field `{field}`: {msg}"));
    }

    fn required(&mut self, field: &str, v: &J<'_>) -> String {
        match v {
            J::Str(s) if !s.is_empty() => s.to_string(),
            J::Str(_) => {
                self.add(field, "must be a non-empty string");
                String::new()
            }
            v if is_missing(v) => {
                self.add(field, "required field is missing");
                String::new()
            }
            other => {
                self.add(field, format!("expected a string, found {}", other.kind()));
                String::new()
            }
        }
    }

    /// A required string that may be empty.
    fn string(&mut self, field: &str, v: &J<'_>) -> String {
        match v {
            J::Str(s) => s.to_string(),
            v if is_missing(v) => {
                self.add(field, "required field is missing");
                String::new()
            }
            other => {
                self.add(field, format!("expected a string, found {}", other.kind()));
                String::new()
            }
        }
    }

    fn strings(&mut self, field: &str, v: &J<'_>) -> Vec<String> {
        match v {
            J::Missing | J::Null => Vec::new(),
            J::Arr(a) if a.iter().all(|x| matches!(x, J::Str(_))) => {
                a.iter().filter_map(J::as_str).map(str::to_owned).collect()
            }
            J::Arr(_) => {
                self.add(
                    field,
                    "expected an array of strings, found other values in it",
                );
                Vec::new()
            }
            other => {
                self.add(
                    field,
                    format!("expected an array of strings, found {}", other.kind()),
                );
                Vec::new()
            }
        }
    }

    fn frames(&mut self, field: &str, v: &J<'_>) -> Vec<u64> {
        let as_u64 = |x: &J<'_>| x.as_integer().and_then(|i| u64::try_from(i).ok());
        match v {
            J::Missing | J::Null => Vec::new(),
            J::Arr(a) => match a.iter().map(as_u64).collect::<Option<Vec<u64>>>() {
                Some(f) => f,
                None => {
                    self.add(
                        field,
                        "expected an array of integers >= 0, found other values in it",
                    );
                    Vec::new()
                }
            },
            other => {
                self.add(
                    field,
                    format!("expected an array of integers >= 0, found {}", other.kind()),
                );
                Vec::new()
            }
        }
    }
}

/// Parses one event line (already trimmed).
fn parse_event(text: &[u8]) -> Result<Event, LineError> {
    if text.first() != Some(&b'{') {
        return Err(match serde_json::from_slice::<J>(text) {
            Ok(v) => LineError::Invalid(format!(
                "expected a JSON object (one audit event), found {}",
                v.kind()
            )),
            Err(e) => LineError::Malformed(format!("malformed JSON: {}", describe_json_error(&e))),
        });
    }
    let text = std::str::from_utf8(text)
        .map_err(|_| LineError::Malformed("malformed JSON: the line is not valid UTF-8".into()))?;
    let raw: RawEvent = serde_json::from_str(text).map_err(|e| {
        let msg = format!("malformed JSON: {}", describe_json_error(&e));
        // A duplicate key is well-formed JSON, only not a valid event.
        if e.classify() == serde_json::error::Category::Data {
            LineError::Invalid(msg)
        } else {
            LineError::Malformed(msg)
        }
    })?;
    let mut p = Problems::default();
    let op = p.required("op", &raw.op);
    let at = p.required("at", &raw.at);
    let key = UnitKey {
        model: p.required("model", &raw.model),
        benchmark: p.required("benchmark", &raw.benchmark),
        item_id: p.required("item_id", &raw.item_id),
    };
    let event = match op.as_str() {
        "visit" => Some(Event::Visit { key, at }),
        "set" | "undo" | "redo" => {
            // A record written without a transition must still read back.
            let from = p.string("from", &raw.from);
            let to = p.string("to", &raw.to);
            let status = p.required("status", &raw.status);
            let status = Status::parse(&status).unwrap_or_else(|| {
                if !status.is_empty() {
                    p.add(
                        "status",
                        format!(
                            "expected todo, done, skipped or flagged, found {:?}",
                            status
                        ),
                    );
                }
                Status::Todo
            });
            let pathways = p.strings("pathways", &raw.pathways);
            let primary = match &raw.primary {
                J::Missing | J::Null => None,
                J::Str(s) if s.is_empty() => None,
                J::Str(s) => Some(s.to_string()),
                other => {
                    p.add(
                        "primary",
                        format!("expected a string or null, found {}", other.kind()),
                    );
                    None
                }
            };
            let evidence_frames = p.frames("evidence_frames", &raw.evidence_frames);
            let note = match &raw.note {
                J::Missing | J::Null => String::new(),
                J::Str(s) => s.to_string(),
                other => {
                    p.add(
                        "note",
                        format!("expected a string or null, found {}", other.kind()),
                    );
                    String::new()
                }
            };
            let r = AuditRecord {
                key,
                from,
                to,
                status,
                pathways,
                primary,
                evidence_frames,
                note,
                at,
            };
            Some(match op.as_str() {
                "set" => Event::Set(r),
                "undo" => Event::Undo(r),
                _ => Event::Redo(r),
            })
        }
        "" => None,
        other => {
            p.add(
                "op",
                format!("unknown operation {other:?} (expected set, undo, redo or visit)"),
            );
            None
        }
    };
    match event {
        Some(e) if p.0.is_empty() => Ok(e),
        _ => Err(LineError::Invalid(p.0.join("; "))),
    }
}

/// Replays the bytes of an audit file. Returns the state and, when the file ends in a torn
/// line, the length to truncate it to (the end of the last complete line before it).
/// `truncating` only changes the wording of the warning.
fn replay_bytes(
    path: &Path,
    bytes: &[u8],
    truncating: bool,
) -> Result<(Replay, Option<u64>), AuditError> {
    let bad_header = |(field, message): (Option<String>, String)| AuditError::BadHeader {
        path: path.to_path_buf(),
        field,
        message,
    };
    let header_end = memchr::memchr(b'\n', bytes).unwrap_or(bytes.len());
    // A byte-order mark an editor put before the header is not part of it.
    let header = parse_header(crate::core::load::json::strip_bom(&bytes[..header_end]))
        .map_err(bad_header)?;
    let mut replay = Replay::new(header);

    // The lines after the header: (number, start offset, text, ends with a newline).
    let mut lines: Vec<(u64, usize, &[u8], bool)> = Vec::new();
    let mut start = (header_end + 1).min(bytes.len());
    let mut number = 1u64;
    while start < bytes.len() {
        number += 1;
        let (end, next, terminated) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, start + i + 1, true),
            None => (bytes.len(), bytes.len(), false),
        };
        let text = bytes[start..end].trim_ascii();
        if !text.is_empty() {
            lines.push((number, start, text, terminated));
        }
        start = next;
    }

    let shown = sanitize(&path.display().to_string()).into_owned();
    let mut truncate_to = None;
    let n = lines.len();
    for (i, &(number, offset, text, terminated)) in lines.iter().enumerate() {
        let last = i + 1 == n;
        let parsed = parse_event(text);
        let torn = last && (!terminated || matches!(parsed, Err(LineError::Malformed(_))));
        if torn {
            let why = if terminated {
                "the last line is not well-formed JSON"
            } else {
                "the last line has no newline"
            };
            let fate = if truncating {
                "ignored and removed"
            } else {
                "ignored"
            };
            replay.warnings.push(format!(
                "{shown}:{number}: warning: {why}, probably cut short by a crash; {fate}"
            ));
            truncate_to = Some(offset as u64);
            break;
        }
        match parsed {
            Ok(event) => replay.apply(&event),
            Err(LineError::Malformed(msg) | LineError::Invalid(msg)) => {
                replay.warnings.push(format!(
                    "{shown}:{number}: warning: {}; line skipped",
                    sanitize(&msg)
                ))
            }
        }
    }
    Ok((replay, truncate_to))
}

/// The current time in UTC as RFC 3339 to the second (`2026-11-29T12:00:00Z`).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> AuditHeader {
        AuditHeader {
            dataset_name: "grid".into(),
            fingerprint: "sha256:00".into(),
            annotator: "alice".into(),
            taxonomy_id: "evidence-pathways".into(),
            taxonomy_version: 1,
            created_at: "2026-11-29T12:00:00Z".into(),
            adjudicates: Vec::new(),
        }
    }

    #[test]
    fn audit_header_line_matches_formats() {
        assert_eq!(
            header().to_line(),
            r#"{"schema":"frameaudit/audit@1","dataset":{"name":"grid","fingerprint":"sha256:00"},"annotator":"alice","taxonomy":{"id":"evidence-pathways","version":1},"created_at":"2026-11-29T12:00:00Z"}"#
        );
        assert_eq!(
            parse_header(header().to_line().as_bytes()).expect("valid"),
            header()
        );
    }

    #[test]
    fn audit_bad_header_names_the_field() {
        let line = header()
            .to_line()
            .replace("\"version\":1", "\"version\":\"1\"");
        let (field, msg) = parse_header(line.as_bytes()).expect_err("bad");
        assert_eq!(field.as_deref(), Some("taxonomy.version"));
        assert!(msg.contains("expected an integer"), "{msg}");
        let line = header().to_line().replace("audit@1", "audit@2");
        let (field, _) = parse_header(line.as_bytes()).expect_err("bad");
        assert_eq!(field.as_deref(), Some("schema"));
    }

    #[test]
    fn audit_event_lines_round_trip() {
        let r = AuditRecord {
            key: UnitKey::new("m", "b", "q1"),
            from: "16f".into(),
            to: "32f".into(),
            status: Status::Done,
            pathways: vec!["evidence_dropped".into()],
            primary: Some("evidence_dropped".into()),
            evidence_frames: vec![2610],
            note: "knife \"here\"\n".into(),
            at: "2026-11-29T12:00:00Z".into(),
        };
        let e = Event::Set(r.clone());
        assert_eq!(
            e.to_line(),
            r#"{"at":"2026-11-29T12:00:00Z","op":"set","model":"m","benchmark":"b","item_id":"q1","from":"16f","to":"32f","status":"done","pathways":["evidence_dropped"],"primary":"evidence_dropped","evidence_frames":[2610],"note":"knife \"here\"\n"}"#
        );
        for e in [
            e,
            Event::Undo(r.clone()),
            Event::Redo(r.clone()),
            Event::Visit {
                key: r.key.clone(),
                at: r.at.clone(),
            },
        ] {
            let back = parse_event(e.to_line().as_bytes()).expect("valid");
            assert_eq!(back, e);
        }
        assert_eq!(
            Event::Visit {
                key: r.key,
                at: r.at
            }
            .to_line(),
            r#"{"at":"2026-11-29T12:00:00Z","op":"visit","model":"m","benchmark":"b","item_id":"q1"}"#
        );
    }

    #[test]
    fn audit_invalid_event_says_what_is_wrong() {
        let line = br#"{"at":"t","op":"set","model":"m","benchmark":"b","item_id":"q","from":"a","to":"b","status":"maybe","evidence_frames":[-1]}"#;
        let Err(LineError::Invalid(msg)) = parse_event(line) else {
            panic!("expected invalid");
        };
        assert!(msg.contains("field `status`"), "{msg}");
        assert!(msg.contains("field `evidence_frames`"), "{msg}");
        let Err(LineError::Malformed(_)) = parse_event(br#"{"at":"t","op":"se"#) else {
            panic!("expected malformed");
        };
        let Err(LineError::Invalid(msg)) =
            parse_event(br#"{"at":"t","op":"wipe","model":"m","benchmark":"b","item_id":"q"}"#)
        else {
            panic!("expected invalid");
        };
        assert!(msg.contains("unknown operation \"wipe\""), "{msg}");
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

    #[test]
    fn audit_now_is_rfc3339_utc_seconds() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
    }
}
