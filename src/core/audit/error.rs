//! What goes wrong with an audit file: the errors that stop it being used, and the
//! reasons a single event line is skipped.

use std::path::PathBuf;

use crate::core::text::sanitize;

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
    /// The file holds nothing yet: the audit screens create it empty and write its header
    /// once the data's fingerprint is known, so a session that ended before then leaves it.
    #[error(
        "{}: no records yet: the file is empty, as a session that ended before its first screen was ready leaves it (the next session on it writes its header)",
        sanitize(&path.display().to_string())
    )]
    Empty {
        /// The audit file.
        path: PathBuf,
    },
    /// The first line is not a valid audit header.
    #[error("{}:1: bad audit header: {}{}",
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
    /// A header line after the first, of another annotator or other data: files joined
    /// end to end, whose later records would be read as the first header's.
    #[error(
        "{}:{line}: a second audit header ({}): an audit file holds one annotator's records on one dataset, and the records after this line would be credited to {}; give the audit files to `frameaudit audit merge` rather than joining them",
        sanitize(&path.display().to_string()),
        sanitize(second),
        sanitize(&format!("{first:?}"))
    )]
    SecondHeader {
        /// The audit file.
        path: PathBuf,
        /// The line of the second header.
        line: u64,
        /// The first header's annotator.
        first: String,
        /// What the second header says (its annotator, and its dataset when another).
        second: String,
    },
}

/// Why an event line was not applied.
#[derive(Debug)]
pub(super) enum LineError {
    /// Not well-formed JSON (cut short, garbage, invalid UTF-8): at the end of the file, a
    /// crash's torn write.
    Malformed(String),
    /// Well-formed JSON that is not a valid event.
    Invalid(String),
}
