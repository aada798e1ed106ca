//! Merged audits: every annotator's records in one file, conflicts kept.
//!
//! `frameaudit audit merge` writes one; `audit agreement`, `audit summary` and `audit
//! export` read it like the audit files it came from. The format:
//!
//! ```text
//! {"schema": "frameaudit/audit-merged@1", "dataset": {"name", "fingerprint"},
//!  "sources": [{"annotator", "file", "fingerprint", "taxonomy": {"id", "version"},
//!               "records"}], "created_at"}
//! {"annotator": "alice", "at", "op": "set", "model", ..., "note"}     one line per record
//! ```
//!
//! A record line is an audit file's `set` line with the annotator added. Lines are sorted
//! by unit then annotator, so two annotators' records of one unit sit side by side; a
//! unit may have one record per annotator, and nothing is resolved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{AuditError, AuditRecord, Event, Replay, UnitKey, parse_event, read_audit};
use crate::core::text::sanitize;

/// The schema of a merged audit's header.
pub const MERGED_SCHEMA: &str = "frameaudit/audit-merged@1";

/// One annotator's audit file that went into a merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Who made that audit.
    pub annotator: String,
    /// The file as it was named to `merge`.
    pub file: String,
    /// Dataset fingerprint of that file.
    pub fingerprint: String,
    /// The taxonomy it tagged with.
    pub taxonomy: TaxonomyRef,
    /// How many records it gave.
    pub records: usize,
}

/// The evidence-pathway taxonomy an audit tagged with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxonomyRef {
    /// The taxonomy's id.
    pub id: String,
    /// Its version.
    pub version: u32,
}

/// The dataset the merged audits were made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetRef {
    /// The dataset's name.
    pub name: String,
    /// Fingerprint of its cells, which every source shares.
    pub fingerprint: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    schema: String,
    dataset: DatasetRef,
    sources: Vec<Source>,
    created_at: String,
}

/// A unit audited by several annotators: its key, each (annotator, record), and whether
/// they disagree.
pub type SharedUnit<'a> = (&'a UnitKey, Vec<&'a (String, AuditRecord)>, bool);

/// Records of several annotators: a merged audit, or audit files read together.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotated {
    /// The dataset audited.
    pub dataset: DatasetRef,
    /// The audit files that went in.
    pub sources: Vec<Source>,
    /// (annotator, record), sorted by unit then annotator.
    pub records: Vec<(String, AuditRecord)>,
    /// Problems that did not stop the reading (skipped lines of audit files...).
    pub warnings: Vec<String>,
}

impl Annotated {
    /// The records of each unit that two or more annotators audited, in unit order, and
    /// for each whether they disagree (on the set of pathways or on the primary one).
    pub fn shared_units(&self) -> Vec<SharedUnit<'_>> {
        let mut by: BTreeMap<&UnitKey, Vec<&(String, AuditRecord)>> = BTreeMap::new();
        for pair in &self.records {
            by.entry(&pair.1.key).or_default().push(pair);
        }
        by.into_iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(k, v)| {
                use super::edit::verdict;
                let first = verdict(&v[0].1);
                let disagree = v.iter().any(|(_, r)| verdict(r) != first);
                (k, v, disagree)
            })
            .collect()
    }

    /// Units with records of two or more annotators, and how many of them disagree.
    pub fn conflicts(&self) -> (usize, usize) {
        let shared = self.shared_units();
        let disagree = shared.iter().filter(|(_, _, d)| *d).count();
        (shared.len(), disagree)
    }

    /// The merged audit as its lines (header first), each without its newline.
    pub fn to_lines(&self, created_at: &str) -> Vec<String> {
        let header = Header {
            schema: MERGED_SCHEMA.into(),
            dataset: self.dataset.clone(),
            sources: self.sources.clone(),
            created_at: created_at.into(),
        };
        let mut lines = vec![crate::core::text::json_to_string(&header).unwrap_or_default()];
        for (annotator, r) in &self.records {
            let line = Event::Set(r.clone()).to_line();
            // `{"at"...` becomes `{"annotator":"...","at"...`.
            let name = crate::core::text::json_to_string(annotator).unwrap_or_default();
            let rest = line.strip_prefix('{').unwrap_or(&line);
            lines.push(format!("{{\"annotator\":{name},{rest}"));
        }
        lines
    }

    /// Writes the merged audit to `path` through a temporary file renamed into place.
    pub fn write(&self, path: &Path, created_at: &str) -> std::io::Result<()> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir)?;
        crate::core::fswrite::write_output(path, crate::core::fswrite::Links::ToStreams, |w| {
            for line in self.to_lines(created_at) {
                w.write_all(line.as_bytes())?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })
    }
}

/// Why files could not be read or merged together.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// An audit file could not be read.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// The files do not go together, or a merged file is not valid; said in words.
    #[error("{}", sanitize(.0))]
    Bad(String),
}

/// Whether the file at `path` is a merged audit (by its first line); false when it
/// cannot be read.
pub fn is_merged_file(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(f) = crate::core::fsread::open(path, crate::core::fsread::AUDIT) else {
        return false;
    };
    let f = f.into_reader();
    let mut first = Vec::new();
    let _ = std::io::BufReader::new(f).read_until(b'\n', &mut first);
    is_merged(&first)
}

/// Whether these bytes begin with a merged audit's header.
fn is_merged(bytes: &[u8]) -> bool {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or(b"");
    let first = crate::core::load::json::strip_bom(first);
    serde_json::from_slice::<serde_json::Value>(first)
        .ok()
        .and_then(|v| v.get("schema")?.as_str().map(|s| s == MERGED_SCHEMA))
        .unwrap_or(false)
}

/// Reads a merged audit; every bad line is reported, with its line and field, together.
fn read_merged(path: &Path, bytes: &[u8]) -> Result<Annotated, MergeError> {
    let shown = sanitize(&path.display().to_string()).into_owned();
    let mut lines = bytes.split(|&b| b == b'\n');
    let first = crate::core::load::json::strip_bom(lines.next().unwrap_or(b""));
    let header: Header = serde_json::from_slice(first)
        .map_err(|e| MergeError::Bad(format!("{shown}:1: error: bad merged-audit header: {e}")))?;
    let mut records = Vec::new();
    let mut errors = Vec::new();
    for (i, text) in lines.enumerate() {
        let number = i + 2;
        let text = text.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let annotator = serde_json::from_slice::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("annotator")?.as_str().map(str::to_owned));
        let Some(annotator) = annotator else {
            errors.push(format!(
                "{shown}:{number}: error: field `annotator`: required string is missing"
            ));
            continue;
        };
        match parse_event(text) {
            Ok(Event::Set(r)) => records.push((annotator, r)),
            Ok(other) => errors.push(format!(
                "{shown}:{number}: error: field `op`: a merged audit holds `set` records, found {:?}",
                other.op()
            )),
            Err(super::LineError::Malformed(m) | super::LineError::Invalid(m)) => {
                errors.push(format!("{shown}:{number}: error: {m}"))
            }
        }
    }
    if !errors.is_empty() {
        return Err(MergeError::Bad(errors.join("\n")));
    }
    records.sort_by(|a, b| (&a.1.key, &a.0).cmp(&(&b.1.key, &b.0)));
    Ok(Annotated {
        dataset: header.dataset,
        sources: header.sources,
        records,
        warnings: Vec::new(),
    })
}

fn from_replay(path: &Path, replay: Replay) -> Annotated {
    let h = &replay.header;
    let annotator = h.annotator.clone();
    Annotated {
        dataset: DatasetRef {
            name: h.dataset_name.clone(),
            fingerprint: h.fingerprint.clone(),
        },
        sources: vec![Source {
            annotator: annotator.clone(),
            file: path.display().to_string(),
            fingerprint: h.fingerprint.clone(),
            taxonomy: TaxonomyRef {
                id: h.taxonomy_id.clone(),
                version: h.taxonomy_version,
            },
            records: replay.records.len(),
        }],
        records: replay
            .records
            .into_values()
            .map(|r| (annotator.clone(), r))
            .collect(),
        warnings: replay.warnings,
    }
}

/// Reads audit files and merged audits together. One annotator in two inputs is an error
/// naming both (their records of one unit could not be told apart); inputs made on other
/// data (another fingerprint) are read with a warning.
pub fn read_annotated(paths: &[PathBuf]) -> Result<Annotated, MergeError> {
    let mut out: Option<Annotated> = None;
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    let mut given: Vec<(PathBuf, PathBuf)> = Vec::new();
    // The warnings of the empty files left out.
    let mut empty: Vec<String> = Vec::new();
    for path in paths {
        // One file given twice (by two spellings of its path) is said as such.
        let same = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if let Some((before, _)) = given.iter().find(|(_, c)| *c == same) {
            return Err(MergeError::Bad(format!(
                "{} is given twice{}: give each audit file once",
                sanitize(&path.display().to_string()),
                if before == path {
                    String::new()
                } else {
                    format!(" (as {})", sanitize(&before.display().to_string()))
                }
            )));
        }
        given.push((path.clone(), same));
        let bytes =
            crate::core::fsread::read(path, crate::core::fsread::AUDIT).map_err(|source| {
                AuditError::Io {
                    what: "read",
                    path: path.clone(),
                    source,
                }
            })?;
        let mut part = if is_merged(&bytes) {
            read_merged(path, &bytes)?
        } else {
            match read_audit(path) {
                Ok(replay) => from_replay(path, replay),
                // No records to merge: said, and left out.
                Err(e @ AuditError::Empty { .. }) => {
                    empty.push(format!("warning: {e}; left out"));
                    continue;
                }
                Err(e) => return Err(e.into()),
            }
        };
        // Every source is compared, also those inside a merged input: a merged audit of
        // two datasets says one fingerprint in its header but carries both.
        let first = out
            .as_ref()
            .and_then(|a: &Annotated| a.sources.first())
            .or(part.sources.first())
            .map(|s| (s.fingerprint.clone(), s.file.clone()));
        if let Some((first_fp, first_file)) = &first {
            for s in part.sources.iter().filter(|s| s.fingerprint != *first_fp) {
                let via = if s.file == path.display().to_string() {
                    String::new()
                } else {
                    format!(" (merged into {})", sanitize(&path.display().to_string()))
                };
                let warning = format!(
                    "warning: {}{via} was made on other data ({}) than {} ({}); its records are kept",
                    sanitize(&s.file),
                    sanitize(&s.fingerprint),
                    sanitize(first_file),
                    sanitize(first_fp)
                );
                let acc = match &mut out {
                    Some(acc) => &mut acc.warnings,
                    None => &mut part.warnings,
                };
                acc.push(warning);
            }
        }
        for s in &part.sources {
            let here = path.display().to_string();
            if let Some(first) = owner.insert(s.annotator.clone(), here.clone()) {
                return Err(MergeError::Bad(format!(
                    "{first} and {here} both hold records of annotator {:?}; one annotator's records of a unit could not be told apart (rename the annotator in one header)",
                    s.annotator
                )));
            }
        }
        out = Some(match out {
            None => part,
            Some(mut acc) => {
                acc.sources.extend(part.sources);
                acc.records.extend(part.records);
                acc.warnings.extend(part.warnings);
                acc
            }
        });
    }
    let mut all = out.ok_or_else(|| {
        MergeError::Bad(if empty.is_empty() {
            "no audit file given".into()
        } else {
            format!(
                "no audit given holds records: each is empty, as a session that ended before its first screen was ready leaves it ({})",
                paths
                    .iter()
                    .map(|p| sanitize(&p.display().to_string()).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    })?;
    all.warnings.splice(0..0, empty);
    all.records
        .sort_by(|a, b| (&a.1.key, &a.0).cmp(&(&b.1.key, &b.0)));
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::audit::{AuditFile, AuditHeader, Status};

    fn rec(item: &str, tags: &[&str]) -> AuditRecord {
        let mut r = AuditRecord::blank(UnitKey::new("m", "b", item), "8f", "16f", "t");
        r.status = Status::Done;
        r.pathways = tags.iter().map(|s| s.to_string()).collect();
        r.primary = tags.first().map(|s| s.to_string());
        r
    }

    fn write(dir: &Path, who: &str, recs: &[AuditRecord]) -> PathBuf {
        let path = dir.join(format!("{who}.audit.jsonl"));
        let (mut f, _) = AuditFile::open(&path, &AuditHeader::for_tests(who)).expect("open");
        for r in recs {
            f.append(&Event::Set(r.clone())).expect("append");
        }
        path
    }

    #[test]
    fn merge_keeps_every_record_and_reads_back() {
        let tmp = tempfile::tempdir().expect("tmp");
        let a = write(tmp.path(), "alice", &[rec("q1", &["x"]), rec("q2", &["y"])]);
        let b = write(tmp.path(), "bob", &[rec("q1", &["z"]), rec("q3", &["y"])]);
        let m = read_annotated(&[a.clone(), b.clone()]).expect("read");
        assert_eq!(m.records.len(), 4);
        assert_eq!(m.conflicts(), (1, 1));
        let out = tmp.path().join("merged.jsonl");
        m.write(&out, "now").expect("write");
        let back = read_annotated(std::slice::from_ref(&out)).expect("read merged");
        assert_eq!(back.records, m.records);
        assert_eq!(back.sources, m.sources);
        // A merged audit merges again with another annotator, but not with its own.
        let c = write(tmp.path(), "carol", &[rec("q1", &["z"])]);
        let again = read_annotated(&[out.clone(), c]).expect("merge again");
        assert_eq!(again.records.len(), 5);
        let err = read_annotated(&[out, a.clone()])
            .expect_err("alice twice")
            .to_string();
        assert!(
            err.contains("both hold records of annotator \"alice\""),
            "{err}"
        );
        // One file twice is said as such, also by another spelling of its path.
        let err = read_annotated(&[a.clone(), a.clone()])
            .expect_err("one file twice")
            .to_string();
        assert!(
            err.ends_with("is given twice: give each audit file once"),
            "{err}"
        );
        let dir = a.parent().expect("dir");
        let other = dir
            .join("..")
            .join(dir.file_name().expect("dir name"))
            .join(a.file_name().expect("name"));
        let err = read_annotated(&[a, other]).expect_err("twice").to_string();
        assert!(err.contains("is given twice (as "), "{err}");
    }

    #[test]
    fn an_empty_audit_is_left_out_with_a_warning() {
        let tmp = tempfile::tempdir().expect("tmp");
        let a = write(tmp.path(), "alice", &[rec("q1", &["x"])]);
        // As a session that ended before its first screen was ready leaves it.
        let b = tmp.path().join("bob.audit.jsonl");
        std::fs::write(&b, "").expect("write");
        let m = read_annotated(&[b.clone(), a]).expect("read");
        assert_eq!((m.records.len(), m.sources.len()), (1, 1));
        assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
        assert!(
            m.warnings[0].starts_with("warning: ")
                && m.warnings[0].contains("bob.audit.jsonl: no records yet: the file is empty")
                && m.warnings[0].ends_with("; left out"),
            "{:?}",
            m.warnings
        );
        let err = read_annotated(&[b]).expect_err("only empty").to_string();
        assert!(
            err.starts_with("no audit given holds records: each is empty"),
            "{err}"
        );
    }

    #[test]
    fn bad_merged_lines_are_reported_together() {
        let tmp = tempfile::tempdir().expect("tmp");
        let a = write(tmp.path(), "alice", &[rec("q1", &["x"])]);
        let m = read_annotated(&[a]).expect("read");
        let mut lines = m.to_lines("now");
        lines.push("{\"at\":\"t\",\"op\":\"set\"}".into());
        lines.push("{\"annotator\":\"bob\",\"at\":\"t\",\"op\":\"visit\",\"model\":\"m\",\"benchmark\":\"b\",\"item_id\":\"q\"}".into());
        let path = tmp.path().join("bad.jsonl");
        std::fs::write(&path, lines.join("\n")).expect("write");
        let err = read_annotated(&[path]).expect_err("bad").to_string();
        assert!(err.contains(":3: error: field `annotator`"), "{err}");
        assert!(err.contains(":4: error: field `op`"), "{err}");
    }
}
