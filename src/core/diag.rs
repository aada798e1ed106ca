//! Diagnostics: every problem found in an input, with the file, line and field it concerns.
//! Loaders collect them all (up to a cap) so a user fixes a file in one pass, not one error
//! per run.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::core::text::sanitize;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Rejects the input.
    Error,
    /// Reported; the input is still used.
    Warning,
}

/// One problem of one input, located as precisely as the input allows.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The input file.
    pub file: Arc<Path>,
    /// 1-based line; `None` for problems of a whole file.
    pub line: Option<u64>,
    /// The field (JSON key or CSV column) at fault, when there is one.
    pub field: Option<String>,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{}", sanitize(&self.file.display().to_string()))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {kind}")?;
        if let Some(field) = &self.field {
            write!(f, ": field `{}`", sanitize(field))?;
        }
        write!(f, ": {}", sanitize(&self.message))
    }
}

/// Where a record came from: shared by every diagnostic about it.
#[derive(Debug, Clone)]
pub struct Loc {
    /// The input file.
    pub file: Arc<Path>,
    /// 1-based line of the record.
    pub line: u64,
}

/// The problems of a load, errors and warnings, kept up to `cap` each but all counted.
#[derive(Debug, Clone)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
    errors: usize,
    warnings: usize,
    cap: usize,
}

/// How many diagnostics of each severity are kept; the rest are only counted.
pub const DEFAULT_CAP: usize = 200;

impl Default for Diagnostics {
    fn default() -> Self {
        Self::with_cap(DEFAULT_CAP)
    }
}

impl Diagnostics {
    /// An empty set that keeps up to `cap` diagnostics of each severity.
    pub fn with_cap(cap: usize) -> Self {
        Diagnostics {
            items: Vec::new(),
            errors: 0,
            warnings: 0,
            cap,
        }
    }

    /// Adds a diagnostic, kept if its severity's cap allows, counted always.
    pub fn push(&mut self, d: Diagnostic) {
        let count = match d.severity {
            Severity::Error => &mut self.errors,
            Severity::Warning => &mut self.warnings,
        };
        *count += 1;
        if *count <= self.cap {
            self.items.push(d);
        }
    }

    /// Adds an error at a file, line and field.
    pub fn error(&mut self, file: &Arc<Path>, line: Option<u64>, field: Option<&str>, msg: String) {
        self.push(Diagnostic {
            severity: Severity::Error,
            file: file.clone(),
            line,
            field: field.map(str::to_owned),
            message: msg,
        });
    }

    /// Adds a warning at a file, line and field.
    pub fn warning(
        &mut self,
        file: &Arc<Path>,
        line: Option<u64>,
        field: Option<&str>,
        msg: String,
    ) {
        self.push(Diagnostic {
            severity: Severity::Warning,
            file: file.clone(),
            line,
            field: field.map(str::to_owned),
            message: msg,
        });
    }

    /// Adds an error about the record at `loc`.
    pub fn at(&mut self, loc: &Loc, field: Option<&str>, msg: String) {
        self.error(&loc.file, Some(loc.line), field, msg);
    }

    /// Names the fields of `file`'s diagnostics as its format does: each `(field, column)`
    /// of `names` renames `field` (a per-item CSV's `frame_count` for `frames`).
    pub fn rename_fields(&mut self, file: &Path, names: &[(&str, &str)]) {
        for d in self.items.iter_mut().filter(|d| *d.file == *file) {
            if let Some(&(_, column)) = names
                .iter()
                .find(|(field, _)| d.field.as_deref() == Some(*field))
            {
                d.field = Some(column.to_owned());
            }
        }
    }

    /// Errors found, kept or not.
    pub fn error_count(&self) -> usize {
        self.errors
    }

    /// Warnings found, kept or not.
    pub fn warning_count(&self) -> usize {
        self.warnings
    }

    /// True when the input is to be rejected.
    pub fn has_errors(&self) -> bool {
        self.errors > 0
    }

    /// Kept diagnostics, errors first, each group in file and line order.
    pub fn sorted(&self) -> Vec<&Diagnostic> {
        let mut v: Vec<&Diagnostic> = self.items.iter().collect();
        v.sort_by(|a, b| (a.severity, &a.file, a.line).cmp(&(b.severity, &b.file, b.line)));
        v
    }

    /// Takes over the diagnostics of a part read apart (the counts add up; the caps hold).
    pub fn merge(&mut self, other: Diagnostics) {
        for d in other.items {
            self.push(d);
        }
        // Counts beyond the other's cap were not kept as items; carry them over.
        let kept_err = other.errors.min(other.cap);
        let kept_warn = other.warnings.min(other.cap);
        self.errors += other.errors - kept_err;
        self.warnings += other.warnings - kept_warn;
    }

    /// The summary line: how many errors and warnings, and how many are not listed.
    pub fn summary(&self) -> String {
        let shown_e = self.errors.min(self.cap);
        let shown_w = self.warnings.min(self.cap);
        let mut s = format!(
            "{} error{}, {} warning{}",
            self.errors,
            plural(self.errors),
            self.warnings,
            plural(self.warnings)
        );
        if shown_e < self.errors || shown_w < self.warnings {
            s.push_str(&format!(
                " ({} not listed)",
                (self.errors - shown_e) + (self.warnings - shown_w)
            ));
        }
        s
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in self.sorted() {
            writeln!(f, "{d}")?;
        }
        write!(f, "{}", self.summary())
    }
}

/// Why a dataset could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", sanitize(&path.display().to_string()))]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A dataset directory's file is not usable.
    #[error("{}: {message}", sanitize(&path.display().to_string()))]
    Dataset {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The input has errors; every problem found.
    #[error("the input is rejected:\n{0}")]
    Rejected(Diagnostics),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_keeps_counting() {
        let file: Arc<Path> = Arc::from(Path::new("x.jsonl"));
        let mut d = Diagnostics::with_cap(2);
        for i in 0..5 {
            d.error(&file, Some(i), Some("model"), "bad".into());
        }
        assert_eq!(d.error_count(), 5);
        assert_eq!(d.sorted().len(), 2);
        assert_eq!(d.summary(), "5 errors, 0 warnings (3 not listed)");
        assert_eq!(
            d.sorted()[0].to_string(),
            "x.jsonl:0: error: field `model`: bad"
        );
    }
}
