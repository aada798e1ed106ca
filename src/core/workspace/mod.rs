//! The workspace of a dataset's audits: where each annotator's audit file lives and under
//! which name, the other audits beside it, and which records no longer match the data. The
//! session, search, review and selections below are what the audit screens do with them.

pub mod haystacks;
pub mod latest;
pub mod review;
pub mod search;
pub mod selections;
pub mod session;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::core::analysis::Report;
use crate::core::audit::{AuditRecord, UnitKey};
use crate::core::dataset::Dataset;
use crate::core::matrix::ResponseMatrix;
use crate::core::queue::{HarmfulTransition, QueueRow};
use crate::core::text::sanitize;

/// The annotator's name: `--annotator`, else `FRAMEAUDIT_ANNOTATOR`, else the login name.
pub fn annotator_name(given: Option<&str>) -> String {
    annotator_name_from(given, |k| std::env::var(k).ok())
}

/// [`annotator_name`] with the environment as a lookup, so the fallbacks can be tested
/// without changing the process's variables.
fn annotator_name_from(given: Option<&str>, var: impl Fn(&str) -> Option<String>) -> String {
    given
        .map(str::to_owned)
        .or_else(|| var("FRAMEAUDIT_ANNOTATOR"))
        .or_else(|| var("USER"))
        .or_else(|| var("USERNAME"))
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "annotator".into())
}

/// The folder a dataset's own files are written in: the dataset directory, or the folder of
/// a dataset that is one file. Below it frameaudit follows no symbolic link when it writes.
pub fn dataset_home(ds: &Dataset) -> PathBuf {
    match &ds.root {
        Some(root) => root.clone(),
        None => ds
            .cell_files
            .first()
            .and_then(|f| f.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    }
}

/// Where a dataset's audits live, the one rule every command and screen follows:
/// `audits/` in a dataset directory; for a dataset that is one file (a per-item CSV, a cells
/// file, a Parquet file), `audits/<file name>/` beside it, so that two datasets in one folder
/// never share an audit.
pub fn audits_dir(ds: &Dataset) -> PathBuf {
    let audits = dataset_home(ds).join("audits");
    match (&ds.root, ds.cell_files.first().and_then(|f| f.file_name())) {
        (None, Some(file)) => audits.join(file),
        _ => audits,
    }
}

/// The dataset an audit file at its default place belongs to: the directory that holds
/// `audits/NAME.audit.jsonl`, or the file `F` beside `audits/F/NAME.audit.jsonl`; `None`
/// elsewhere. An adjudicated audit (`audits/adjudicated/...`) belongs to the same dataset.
pub fn dataset_of_audit(audit: &Path) -> Option<PathBuf> {
    let mut dir = audit.parent()?;
    if dir.file_name()? == "adjudicated" {
        dir = dir.parent()?;
    }
    if dir.file_name()? == "audits" {
        return dir.parent().map(Path::to_path_buf);
    }
    let parent = dir.parent()?;
    if parent.file_name()? == "audits" {
        let file = parent.parent()?.join(dir.file_name()?);
        return file.is_file().then_some(file);
    }
    None
}

/// The annotators' audit files of a dataset (`*.audit.jsonl` in [`audits_dir`], not the
/// adjudicated ones below it), sorted by name.
pub fn annotator_audits(ds: &Dataset) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(audits_dir(ds)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".audit.jsonl"))
                && p.is_file()
        })
        .collect();
    files.sort();
    files
}

/// Where an annotator's audit of a dataset lives by default: `<annotator>.audit.jsonl` in
/// [`audits_dir`]. A name of safe characters (ASCII letters, digits, `-`, `_`, `.`, not
/// leading) is the file name as it is; any other is reduced to those characters and followed
/// by a hash of the whole name, so it can never leave that directory and two names never
/// share a file (`a/b` is `a_b-<hash>`, `a_b` is `a_b`).
///
/// A dataset file's audit made before each file had its own folder (`audits/NAME.audit.jsonl`
/// beside the file) is still found there while its header names this dataset and no audit is
/// at the new place: records are never left behind by an upgrade.
pub fn default_audit_path(ds: &Dataset, annotator: &str) -> PathBuf {
    let is_safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let reduced: String = annotator
        .chars()
        .map(|c| if is_safe(c) { c } else { '_' })
        .collect();
    let reduced = reduced.trim_start_matches('.');
    let safe = if reduced == annotator && !annotator.is_empty() {
        annotator.to_string()
    } else {
        use sha2::{Digest, Sha256};
        let hash = Sha256::digest(annotator.as_bytes());
        let hex: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
        let stem = if reduced.is_empty() {
            "annotator"
        } else {
            reduced
        };
        format!("{stem}-{hex}")
    };
    let name = format!("{safe}.audit.jsonl");
    let path = audits_dir(ds).join(&name);
    if ds.root.is_none() && path.symlink_metadata().is_err() {
        let legacy = dataset_home(ds).join("audits").join(&name);
        let ours =
            crate::core::audit::read_header(&legacy).is_some_and(|h| h.dataset_name == ds.name);
        if ours {
            return legacy;
        }
    }
    path
}

/// Another audit file of the dataset, as the findings view counts it.
#[derive(Debug, Clone)]
pub struct OtherAudit {
    /// Whose audit it is.
    pub annotator: String,
    /// An adjudicated audit (its header names the audits it settles).
    pub adjudicated: bool,
    /// Its records, in key order.
    pub records: Vec<AuditRecord>,
}

/// The other audit files beside the session's own `own` (`*.audit.jsonl` in the same
/// directory, and in `adjudicated/` below the annotators' folder, or beside it when the
/// session is itself adjudicated); unreadable files are skipped.
pub fn other_audits(own: &Path) -> Vec<OtherAudit> {
    let Some(dir) = own.parent() else {
        return Vec::new();
    };
    let annotators_dir = if dir.file_name().is_some_and(|n| n == "adjudicated") {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    let mut files: Vec<PathBuf> = [
        annotators_dir.to_path_buf(),
        annotators_dir.join("adjudicated"),
    ]
    .iter()
    .filter_map(|d| std::fs::read_dir(d).ok())
    .flatten()
    .filter_map(|e| e.ok().map(|e| e.path()))
    .filter(|p| p.to_string_lossy().ends_with(".audit.jsonl") && p != own)
    .collect();
    files.sort();
    files
        .iter()
        .filter_map(|p| {
            let r = crate::core::audit::read_audit(p).ok()?;
            Some(OtherAudit {
                annotator: r.header.annotator.clone(),
                adjudicated: !r.header.adjudicates.is_empty(),
                records: r.records.into_values().collect(),
            })
        })
        .collect()
}

/// The configuration names of the columns of a queue row's model grid.
pub fn config_names(m: &ResponseMatrix, report: &Report, q: &QueueRow) -> Vec<String> {
    let g = &report.analyses[q.analysis as usize].grids.models[q.model_index as usize].grid;
    g.configs
        .iter()
        .map(|&c| m.config(c).name.to_string())
        .collect()
}

/// Whether `rec`, a record of queue row `q`'s unit, is on one of the row's harmful
/// transitions (listed or not: the queue lists only the first MAX_LISTED_PAIRS of a unit).
/// A record is not when the data changed under it, or the analysis (its configurations,
/// its grid) has not its transition.
pub fn on_its_transition(
    m: &ResponseMatrix,
    report: &Report,
    q: &QueueRow,
    rec: &AuditRecord,
) -> bool {
    let names = config_names(m, report, q);
    let col = |name: &str| names.iter().position(|n| n == name);
    match (col(&rec.from), col(&rec.to)) {
        (Some(a), Some(b)) => {
            crate::core::queue::is_harmful_pair(report, q, HarmfulTransition::new(a, b))
        }
        _ => false,
    }
}

/// Records whose unit or transition is no longer a harmful transition of the data, as
/// `model/benchmark/item (from → to)`. `queued` gives a unit's queue row, if it has one.
pub fn stale_records<'a>(
    records: &BTreeMap<UnitKey, AuditRecord>,
    m: &ResponseMatrix,
    report: &Report,
    queued: impl Fn(&UnitKey) -> Option<&'a QueueRow>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (key, rec) in records {
        if !queued(key).is_some_and(|q| on_its_transition(m, report, q, rec)) {
            out.push(format!(
                "{}/{}/{} ({} → {})",
                sanitize(&key.model),
                sanitize(&key.benchmark),
                sanitize(&key.item_id),
                sanitize(&rec.from),
                sanitize(&rec.to)
            ));
        }
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::core::analysis::params::Params;
    use crate::core::audit::{AuditHeader, Status};
    use crate::core::queue::QueueKind;
    use session::Session;

    #[test]
    fn the_annotator_is_the_name_given_else_the_environments() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let all = env(&[
            ("FRAMEAUDIT_ANNOTATOR", "fa"),
            ("USER", "login"),
            ("USERNAME", "win"),
        ]);
        assert_eq!(annotator_name_from(Some("given"), all), "given");
        assert_eq!(annotator_name_from(None, all), "fa");
        let login = env(&[("USER", "login"), ("USERNAME", "win")]);
        assert_eq!(annotator_name_from(None, login), "login");
        assert_eq!(
            annotator_name_from(None, env(&[("USERNAME", "win")])),
            "win"
        );
        assert_eq!(annotator_name_from(None, env(&[])), "annotator");
        // A blank name, given or found, is no name; the first one found decides.
        assert_eq!(annotator_name_from(Some("  "), all), "annotator");
        assert_eq!(
            annotator_name_from(
                None,
                env(&[("FRAMEAUDIT_ANNOTATOR", ""), ("USER", "login")])
            ),
            "annotator"
        );
    }

    /// Model m on two items: q1 right at 4f and wrong at 8f (a harmful transition), q2
    /// right at both.
    pub(super) fn tiny_dataset() -> (tempfile::TempDir, Dataset) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cells = String::new();
        for (item, config, frames, pred) in [
            ("q1", "4f", 4, "A"),
            ("q1", "8f", 8, "B"),
            ("q2", "4f", 4, "A"),
            ("q2", "8f", 8, "A"),
        ] {
            let c = serde_json::json!({"model": "m", "benchmark": "b", "item_id": item,
                "config": config, "frames": frames, "pred": pred, "gold": "A", "task": "mcq"});
            cells.push_str(&format!("{c}\n"));
        }
        std::fs::write(dir.path().join("cells.jsonl"), cells).expect("write cells");
        let ds = crate::core::dataset::load_dataset(dir.path(), None).expect("loads");
        (dir, ds)
    }

    #[test]
    fn the_default_audit_path_is_in_the_datasets_audits_folder() {
        let (dir, ds) = tiny_dataset();
        let audits = dir.path().join("audits");
        assert_eq!(
            default_audit_path(&ds, "alice"),
            audits.join("alice.audit.jsonl")
        );
        let odd = default_audit_path(&ds, "../a/b");
        assert_eq!(odd.parent(), Some(audits.as_path()));
        let name = odd
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with("_a_b-") && name.ends_with(".audit.jsonl"),
            "{name}"
        );
        assert_ne!(
            default_audit_path(&ds, "a/b"),
            default_audit_path(&ds, "a_b")
        );
    }

    /// [`tiny_dataset`] and its report (no bootstrap, no sweep).
    pub(super) fn tiny_report() -> (tempfile::TempDir, Dataset, Report) {
        let (dir, ds) = tiny_dataset();
        let params = Params {
            bootstrap_b: 0,
            sweep: false,
            ..Params::default()
        };
        let report = crate::core::analysis::run(&ds.matrix, &params, None);
        (dir, ds, report)
    }

    #[test]
    fn stale_records_are_those_no_longer_a_harmful_transition() {
        let (_dir, ds, report) = tiny_report();
        let m = &ds.matrix;
        let protocol = report.analyses[0].key.protocol;
        let rows = crate::core::queue::queue(&report, protocol, QueueKind::Harmful);
        let queued: BTreeMap<UnitKey, QueueRow> = rows
            .into_iter()
            .map(|q| {
                let item = m.item(q.item);
                let key = UnitKey::new(
                    m.models.name(q.model),
                    m.benchmarks.name(item.benchmark),
                    &*item.id,
                );
                (key, q)
            })
            .collect();
        let keys: Vec<&str> = queued.keys().map(|k| k.item_id.as_str()).collect();
        assert_eq!(keys, vec!["q1"], "only q1 regresses");

        let mut records = BTreeMap::new();
        let put =
            |records: &mut BTreeMap<UnitKey, AuditRecord>, item: &str, from: &str, to: &str| {
                let key = UnitKey::new("m", "b", item);
                let mut r = AuditRecord::blank(key.clone(), from, to, "t");
                r.status = Status::Done;
                records.insert(key, r);
            };
        put(&mut records, "q1", "4f", "8f");
        let fresh = stale_records(&records, m, &report, |k| queued.get(k));
        assert_eq!(fresh, Vec::<String>::new());
        put(&mut records, "q1", "8f", "4f");
        put(&mut records, "q2", "4f", "8f");
        put(&mut records, "q3", "4f", "32f");
        let stale = stale_records(&records, m, &report, |k| queued.get(k));
        assert_eq!(
            stale,
            vec!["m/b/q1 (8f → 4f)", "m/b/q2 (4f → 8f)", "m/b/q3 (4f → 32f)"]
        );
    }

    #[test]
    fn other_audits_are_the_annotators_and_adjudicated_files_beside_ones_own() {
        let dir = tempfile::tempdir().expect("tempdir");
        let audits = dir.path().join("audits");
        let write = |path: &Path, annotator: &str, adjudicates: &[&str]| {
            let header = AuditHeader {
                adjudicates: adjudicates.iter().map(|s| s.to_string()).collect(),
                ..AuditHeader::for_tests(annotator)
            };
            let mut s = Session::open(path, &header, || {}).expect("opens");
            let mut r = AuditRecord::blank(UnitKey::new("m", "b", annotator), "4f", "8f", "");
            r.status = Status::Done;
            s.apply(r, "2026-01-02T03:04:05Z");
            assert!(s.wait_saved(std::time::Duration::from_secs(5)));
        };
        std::fs::create_dir_all(audits.join("adjudicated")).expect("mkdir");
        let own = audits.join("alice.audit.jsonl");
        write(&own, "alice", &[]);
        write(&audits.join("bob.audit.jsonl"), "bob", &[]);
        let judge = audits.join("adjudicated").join("judge.audit.jsonl");
        write(&judge, "judge", &["alice", "bob"]);
        std::fs::write(audits.join("notes.txt"), "not an audit").expect("write");

        let seen = |own: &Path| -> Vec<(String, bool, usize)> {
            other_audits(own)
                .into_iter()
                .map(|o| (o.annotator, o.adjudicated, o.records.len()))
                .collect()
        };
        // In path order: audits/adjudicated/ sorts before audits/bob.
        assert_eq!(
            seen(&own),
            vec![("judge".into(), true, 1), ("bob".into(), false, 1)]
        );
        assert_eq!(
            seen(&judge),
            vec![("alice".into(), false, 1), ("bob".into(), false, 1)]
        );
    }
}
