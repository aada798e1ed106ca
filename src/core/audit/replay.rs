//! Replay: an audit file's bytes back into the state of every record, by the rule of the
//! module documentation (each event carries a whole state, the last one wins). A torn last
//! line is found here, and the length to truncate the file to.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::{AuditError, LineError};
use super::format::{AuditHeader, parse_event, parse_header};
use super::record::{AuditRecord, Event, UnitKey};
use crate::core::text::sanitize;

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
        match event {
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) if r.is_blank() => {
                self.records.remove(&r.key);
            }
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) => {
                self.records.insert(r.key.clone(), r.clone());
            }
            Event::Visit { key, .. } => self.last_visit = Some(key.clone()),
            // The audit goes on with other cells: its fingerprint is theirs from here on.
            Event::Data { fingerprint, .. } => self.header.fingerprint.clone_from(fingerprint),
        }
    }
}

/// Replays the bytes of an audit file. Returns the state and, when the file ends in a torn
/// line (a last line that is not well-formed JSON, with or without its newline), the length
/// to truncate it to (the end of the last complete line before it).
/// `truncating` only changes the wording of the warning.
pub(super) fn replay_bytes(
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
        // Only a last line that does not read as JSON is a crash's torn write: one that
        // reads whole is complete, even without its newline (an editor or a script that
        // left it off), and counts like any other line.
        let torn = last && matches!(parsed, Err(LineError::Malformed(_)));
        if torn {
            let why = if terminated {
                "the last line is not well-formed JSON"
            } else {
                "the last line is not well-formed JSON and has no newline"
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
            Ok(event) => {
                for doubt in super::format::doubts(&event) {
                    replay.warnings.push(format!(
                        "{shown}:{number}: warning: {}; line read",
                        sanitize(&doubt)
                    ));
                }
                replay.apply(&event);
            }
            Err(LineError::Malformed(msg) | LineError::Invalid(msg)) => match parse_header(text) {
                // Another header: files joined end to end.
                Ok(second) => {
                    let first = &replay.header;
                    if second.annotator != first.annotator
                        || second.fingerprint != first.fingerprint
                    {
                        let mut said = format!("annotator {:?}", second.annotator);
                        if second.fingerprint != first.fingerprint {
                            said.push_str(&format!(
                                ", dataset {:?} {}",
                                second.dataset_name, second.fingerprint
                            ));
                        }
                        return Err(AuditError::SecondHeader {
                            path: path.to_path_buf(),
                            line: number,
                            first: first.annotator.clone(),
                            second: said,
                        });
                    }
                    replay.warnings.push(format!(
                        "{shown}:{number}: warning: a second audit header, the same as the first (a copy of the file joined to it?); line skipped"
                    ));
                }
                Err(_) => replay.warnings.push(format!(
                    "{shown}:{number}: warning: {}; line skipped",
                    sanitize(&msg)
                )),
            },
        }
    }
    Ok((replay, truncate_to))
}
