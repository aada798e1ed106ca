//! The input files of an import: the files named, and the files with the wanted extensions
//! under the folders named, each folder in name order, so an import reads them in an order
//! that depends only on the names.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::core::import::ImportError;

/// The files to read: every path that is a file, and every file under a folder whose
/// extension (any case) is one of `extensions`. Hidden files and folders (`.name`) under a
/// folder are passed over; a folder reached twice through links is walked once. A path
/// that cannot be read is an error: it was asked for by name.
pub(crate) fn files_under(
    paths: &[PathBuf],
    extensions: &[&str],
) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    let mut walked = BTreeSet::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| {
            ImportError::Other(format!(
                "cannot read {}: {e}",
                crate::core::text::sanitize(&p.display().to_string())
            ))
        })?;
        if meta.is_dir() {
            walk(p, extensions, &mut walked, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    extensions: &[&str],
    walked: &mut BTreeSet<PathBuf>,
    out: &mut Vec<PathBuf>,
) -> Result<(), ImportError> {
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !walked.insert(canonical) {
        return Ok(());
    }
    let cannot = |e: std::io::Error| {
        ImportError::Other(format!(
            "cannot list {}: {e}",
            crate::core::text::sanitize(&dir.display().to_string())
        ))
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(cannot)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        })
        .collect();
    entries.sort();
    for p in entries {
        // Follows links, so a linked prediction file (VLMEvalKit links the latest run's
        // files into the model's folder) is found like any other.
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => walk(&p, extensions, walked, out)?,
            Ok(_) if has_extension(&p, extensions) => out.push(p),
            // A dangling link or an unreadable entry is no input of ours.
            _ => {}
        }
    }
    Ok(())
}

/// Whether the file's extension is one of `extensions`, in any case.
pub(crate) fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension().is_some_and(|e| {
        let e = e.to_string_lossy();
        extensions.iter().any(|x| e.eq_ignore_ascii_case(x))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_folders_in_name_order_and_keeps_named_files() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        std::fs::create_dir_all(root.join("b/.hidden")).expect("mkdir");
        std::fs::create_dir_all(root.join("a")).expect("mkdir");
        for f in [
            "b/x.XLSX",
            "b/.hidden/y.tsv",
            "a/z.tsv",
            "a/w.csv",
            "a/.v.tsv",
            "n.pkl",
        ] {
            std::fs::write(root.join(f), "").expect("write");
        }
        let got =
            files_under(&[root.to_path_buf(), root.join("n.pkl")], &["xlsx", "tsv"]).expect("walk");
        let rel: Vec<_> = got
            .iter()
            .map(|p| p.strip_prefix(root).expect("under root").to_path_buf())
            .collect();
        assert_eq!(
            rel,
            [
                PathBuf::from("a/z.tsv"),
                PathBuf::from("b/x.XLSX"),
                PathBuf::from("n.pkl")
            ]
        );
        let err = files_under(&[root.join("missing")], &["tsv"]).expect_err("missing");
        assert!(err.to_string().contains("cannot read"), "{err}");
    }
}
