//! The one rule for every path a command writes (`-o`, `--items-out`, `audit merge -o`,
//! `plot -o`): an output is never one of the command's inputs, never a file of a dataset
//! being read, never an annotator's audit file (known by its header line, whatever its
//! name, merged and adjudicated ones too), and replaces an existing regular file only with
//! `--force`; a device or a pipe is written in place, a symbolic link is refused unless it
//! leads to one; an import never replaces a dataset that has audits. Checked before
//! anything is read, so a refused command writes nothing.

use std::path::{Path, PathBuf};

use super::audit::merged::MERGED_SCHEMA;

/// The files of a dataset directory frameaudit reads (besides `audits/`).
pub const DATASET_FILES: [&str; 3] = ["cells.jsonl", "items.jsonl", "dataset.json"];

/// What a command reads, for the output check.
#[derive(Debug, Default)]
pub struct Inputs {
    /// Input files and folders, as given.
    paths: Vec<PathBuf>,
}

impl Inputs {
    /// No inputs yet.
    pub fn new() -> Inputs {
        Inputs::default()
    }

    /// An input file or folder (a dataset directory, a run folder, an audit...).
    pub fn add(&mut self, path: &Path) -> &mut Self {
        self.paths.push(path.to_path_buf());
        self
    }

    /// Several inputs, as [`Inputs::add`] each.
    pub fn extend<'a>(&mut self, paths: impl IntoIterator<Item = &'a PathBuf>) -> &mut Self {
        for p in paths {
            self.add(p);
        }
        self
    }

    /// The input that `path` names, however spelled (through links or `..`), if any.
    pub fn named_by(&self, path: &Path) -> Option<&Path> {
        let target = resolve(path);
        self.paths
            .iter()
            .find(|input| resolve(input) == target)
            .map(PathBuf::as_path)
    }

    /// Refuses `out` as an output file (see the module doc); `Ok` when it may be written.
    pub fn check_file(&self, out: &Path, force: bool) -> Result<(), String> {
        let shown = show(out);
        if out.is_dir() {
            return Err(format!("the output {shown} is a directory"));
        }
        let target = resolve(out);
        for input in &self.paths {
            let inp = resolve(input);
            if inp == target {
                return Err(format!(
                    "the output {shown} is an input of this command: it would be destroyed"
                ));
            }
            if input.is_dir() && target.starts_with(&inp) {
                // A dataset being read: its data files and its audits are not outputs.
                let rel = target.strip_prefix(&inp).unwrap_or(&target);
                let top = rel.components().next().map(|c| c.as_os_str().to_owned());
                let is_data = rel.components().count() == 1
                    && DATASET_FILES.iter().any(|f| rel == Path::new(f));
                if is_data {
                    return Err(format!(
                        "the output {shown} is a file of the dataset {} that this command reads",
                        show(input)
                    ));
                }
                if top.is_some_and(|t| t == "audits") {
                    return Err(format!(
                        "the output {shown} is inside the audits folder of the dataset {}, which holds the annotators' files: write it elsewhere",
                        show(input)
                    ));
                }
                if out.exists() && is_read_by_loader(&inp, rel) {
                    return Err(format!(
                        "the output {shown} is a cells file of the dataset {} that this command reads",
                        show(input)
                    ));
                }
            }
        }
        // What is at the path decides how it is written (core::fswrite): nothing, or a
        // regular file, is replaced; a device or a pipe is written in place, so it needs no
        // --force; a link is followed only to those; anything else is refused.
        let meta = match out.symlink_metadata() {
            Ok(m) => m,
            Err(_) => return Ok(()),
        };
        if meta.file_type().is_symlink() {
            return match std::fs::metadata(out) {
                Ok(m) if is_stream(&m.file_type()) => Ok(()),
                _ => Err(crate::core::fswrite::refuse_link(out)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| format!("{shown} is a symbolic link: refused"))),
            };
        }
        if is_stream(&meta.file_type()) {
            return Ok(());
        }
        if !meta.is_file() {
            let what = super::fsread::not_regular(out)
                .map(|k| k.to_string())
                .unwrap_or_else(|| "not a regular file".into());
            return Err(format!(
                "{shown} is {what}: an output is written only as a regular file, or in place into a character device or a pipe"
            ));
        }
        if let Some(kind) = audit_kind(out) {
            let again = if kind == "a merged audit" {
                "; to make it again, remove it first"
            } else {
                ""
            };
            return Err(format!(
                "{shown} is {kind} (its first line is an audit header): frameaudit never writes over annotations{again}"
            ));
        }
        if is_locked(out) {
            return Err(format!(
                "{shown} is held open by another frameaudit (a running audit screen)"
            ));
        }
        if !force {
            return Err(format!("{shown} exists; --force replaces it"));
        }
        Ok(())
    }

    /// Refuses `dir` as the output dataset directory of an import; `Ok` when it may be
    /// written (created, empty, not a dataset, or a dataset without audits under `force`).
    pub fn check_dataset_dir(&self, dir: &Path, force: bool) -> Result<(), String> {
        let shown = show(dir);
        if dir.exists() && !dir.is_dir() {
            return Err(format!("the output {shown} exists and is not a directory"));
        }
        let target = resolve(dir);
        for input in &self.paths {
            let inp = resolve(input);
            let replaced = inp == target || DATASET_FILES.iter().any(|f| inp == target.join(f));
            if replaced {
                return Err(format!(
                    "the output {shown} holds an input of this command ({}): it would be replaced",
                    show(input)
                ));
            }
        }
        if !dir.is_dir() {
            return Ok(());
        }
        let audits = audit_files(&dir.join("audits"));
        if let Some(first) = audits.first() {
            return Err(format!(
                "the output {shown} is a dataset with {} audit file(s) (first: {}): replacing its cells would leave them describing other data; write to a new directory",
                audits.len(),
                show(first)
            ));
        }
        let existing: Vec<&str> = DATASET_FILES
            .iter()
            .copied()
            .filter(|f| dir.join(f).exists())
            .collect();
        if !existing.is_empty() && !force {
            return Err(format!(
                "the output {shown} is an existing dataset ({}); --force replaces it",
                existing.join(", ")
            ));
        }
        Ok(())
    }
}

/// `path` made absolute and with its symlinks resolved as far as it exists (the missing
/// tail appended), so two spellings of one file compare equal.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut head = abs.as_path();
    let mut tail = Vec::new();
    while let Some(parent) = head.parent() {
        if let Some(name) = head.file_name() {
            tail.push(name.to_owned());
        }
        if let Ok(p) = parent.canonicalize() {
            let mut out = p;
            for t in tail.iter().rev() {
                out.push(t);
            }
            return out;
        }
        head = parent;
    }
    abs
}

/// A character device or a pipe, which an output is written into in place.
fn is_stream(ft: &std::fs::FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        ft.is_char_device() || ft.is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = ft;
        false
    }
}

/// Whether the loader reads `rel` as cells of the dataset directory `dir`: without a
/// `cells.jsonl`, every other `.jsonl` (or `.csv`) at its top is a cells file.
fn is_read_by_loader(dir: &Path, rel: &Path) -> bool {
    if rel.components().count() != 1 || dir.join("cells.jsonl").is_file() {
        return false;
    }
    let name = rel.to_string_lossy();
    name.ends_with(".jsonl") || name.ends_with(".csv")
}

/// What kind of annotations a file holds, by its first line: "an audit file", "a merged
/// audit", "an adjudicated audit" (any `frameaudit/audit*` schema); `None` for anything
/// else. All of them are annotations, never replaced by an output.
fn audit_kind(path: &Path) -> Option<&'static str> {
    use std::io::Read;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.split(|&b| b == b'\n').next()?;
    let line = super::load::json::strip_bom(line);
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let schema = v.get("schema")?.as_str()?;
    let adjudicated = v
        .get("adjudicates")
        .and_then(|a| a.as_array())
        .is_some_and(|a| !a.is_empty());
    if schema.starts_with(MERGED_SCHEMA.split('@').next().unwrap_or(MERGED_SCHEMA)) {
        Some("a merged audit")
    } else if schema.starts_with("frameaudit/audit") {
        Some(if adjudicated {
            "an adjudicated audit"
        } else {
            "an audit file"
        })
    } else {
        None
    }
}

/// Whether another process holds the file's advisory lock (an audit open in a TUI).
fn is_locked(path: &Path) -> bool {
    // Only a regular file is opened: opening a named pipe would wait for a writer.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    match f.try_lock_shared() {
        Ok(()) => {
            let _ = f.unlock();
            false
        }
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(_) => false,
    }
}

/// The non-empty audit files in `dir` and the folders below it (by name or by header): an
/// annotator's audit of a dataset file lives in `audits/FILE/`, a review's in
/// `audits/adjudicated/`. Folders are entered, not links to them, a few levels deep.
fn audit_files(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for p in entries.flatten().map(|e| e.path()) {
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
                if depth < 4 {
                    folders.push((p, depth + 1));
                }
            } else if p.is_file()
                && std::fs::metadata(&p).is_ok_and(|m| m.len() > 0)
                && (p.to_string_lossy().ends_with(".audit.jsonl") || audit_kind(&p).is_some())
            {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

fn show(p: &Path) -> String {
    super::text::sanitize(&p.display().to_string()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"schema":"frameaudit/audit@1","dataset":{"name":"d","fingerprint":"sha256:00"},"annotator":"a","taxonomy":{"id":"t","version":1},"created_at":"2026-12-01T00:00:00Z"}"#;

    #[test]
    fn an_input_a_dataset_file_and_an_audit_are_never_outputs() {
        let tmp = tempfile::tempdir().expect("tmp");
        let ds = tmp.path().join("ds");
        std::fs::create_dir_all(ds.join("audits")).expect("mkdir");
        for f in DATASET_FILES {
            std::fs::write(ds.join(f), "{}\n").expect("write");
        }
        let audit = ds.join("audits/a.audit.jsonl");
        std::fs::write(&audit, format!("{HEADER}\n")).expect("write");
        let elsewhere = tmp.path().join("renamed.txt");
        std::fs::write(&elsewhere, format!("{HEADER}\n")).expect("write");
        let csv = tmp.path().join("in.csv");
        std::fs::write(&csv, "a,b\n").expect("write");
        let mut inputs = Inputs::new();
        inputs.add(&ds).add(&csv);
        for (out, want) in [
            (csv.clone(), "is an input"),
            (tmp.path().join("./in.csv"), "is an input"),
            (ds.join("cells.jsonl"), "is a file of the dataset"),
            (
                ds.join("audits/new.jsonl"),
                "is inside the audits folder of the dataset",
            ),
            (audit.clone(), "is inside the audits folder of the dataset"),
            (elsewhere.clone(), "is an audit file"),
        ] {
            for force in [false, true] {
                let e = inputs.check_file(&out, force).expect_err("refused");
                assert!(e.contains(want), "{}: {e}", out.display());
            }
        }
        // A new file, even beside the dataset's files, may be written; an existing one
        // only with --force.
        assert_eq!(inputs.check_file(&ds.join("report.jsonl"), false), Ok(()));
        let other = tmp.path().join("other.jsonl");
        std::fs::write(&other, "x\n").expect("write");
        assert!(
            inputs
                .check_file(&other, false)
                .is_err_and(|e| e.contains("--force"))
        );
        assert_eq!(inputs.check_file(&other, true), Ok(()));
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_at_the_output_is_not_opened() {
        let tmp = tempfile::tempdir().expect("tmp");
        let fifo = tmp.path().join("out.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            return;
        }
        // Returns instead of waiting for a writer on the pipe; a pipe is written in place,
        // nothing is replaced, so it needs no --force.
        assert_eq!(Inputs::new().check_file(&fifo, false), Ok(()));
    }

    #[test]
    fn an_import_never_replaces_a_dataset_with_audits() {
        let tmp = tempfile::tempdir().expect("tmp");
        let ds = tmp.path().join("ds");
        std::fs::create_dir_all(&ds).expect("mkdir");
        let inputs = Inputs::new();
        assert_eq!(inputs.check_dataset_dir(&ds, false), Ok(()));
        std::fs::write(ds.join("cells.jsonl"), "{}\n").expect("write");
        assert!(
            inputs
                .check_dataset_dir(&ds, false)
                .is_err_and(|e| e.contains("--force"))
        );
        assert_eq!(inputs.check_dataset_dir(&ds, true), Ok(()));
        std::fs::create_dir_all(ds.join("audits")).expect("mkdir");
        std::fs::write(ds.join("audits/a.audit.jsonl"), format!("{HEADER}\n")).expect("w");
        let e = inputs.check_dataset_dir(&ds, true).expect_err("refused");
        assert!(e.contains("1 audit file(s)"), "{e}");
        // Audits in the folders below count too: a review's, and those of a dataset file.
        std::fs::remove_file(ds.join("audits/a.audit.jsonl")).expect("rm");
        assert_eq!(inputs.check_dataset_dir(&ds, true), Ok(()));
        for (k, below) in ["adjudicated", "per_item.csv"].iter().enumerate() {
            std::fs::create_dir_all(ds.join("audits").join(below)).expect("mkdir");
            let audit = ds.join("audits").join(below).join("r.audit.jsonl");
            std::fs::write(audit, format!("{HEADER}\n")).expect("w");
            let e = inputs.check_dataset_dir(&ds, true).expect_err("refused");
            assert!(e.contains(&format!("{} audit file(s)", k + 1)), "{e}");
        }
    }
}
