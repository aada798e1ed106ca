//! The audit store: an annotator's audit records, kept as an append-only, crash-safe log
//! (docs/formats.md §2) from which the current state of every record is rebuilt.
//! The records and events are in `record`, their lines in `format`, the state rebuilt from
//! them in `replay`, what goes wrong in `error`; `file` holds the locked file.
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
//! A line cut short by a crash (a last line that is not well-formed JSON, with or without
//! its newline) is ignored with a warning and, when the file is opened for writing,
//! truncated away. A last line that reads whole but lacks its newline (an editor or a script
//! left it off) counts like any other, and gets its newline back when the file is opened for
//! writing. Any other line that is not a valid event is skipped with a
//! warning; everything before and after it counts. A malformed header is an error.

pub mod edit;
mod error;
pub(crate) mod file;
mod fingerprint;
mod format;
pub mod merged;
mod record;
mod replay;

pub use self::error::AuditError;
use self::error::LineError;
pub use self::file::{AtPath, AuditFile, read_audit, read_header};
pub use self::fingerprint::fingerprint;
pub use self::format::{AUDIT_SCHEMA, AuditHeader};
use self::format::{parse_event, parse_header};
pub use self::record::{AuditRecord, Event, Status, UnitKey, now_rfc3339};
pub use self::replay::Replay;
use self::replay::replay_bytes;
