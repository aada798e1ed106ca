//! Special files at data paths: a named pipe or a link to `/dev/zero` where frameaudit
//! expects a file is refused at once with a message naming the path and what is there,
//! never waited on or read without end. Each run has a hang guard that kills it: the
//! assertion is that it exited by itself, not how fast.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Guarded, mkfifo, repo, run_guarded};

/// Far more than any of these runs needs; only a hang reaches it.
const GUARD: Duration = Duration::from_secs(60);

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_frameaudit"))
}

fn run(args: &[&str]) -> Guarded {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    run_guarded(&bin(), &args, GUARD)
}

fn text(g: &Guarded) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&g.output.stdout),
        String::from_utf8_lossy(&g.output.stderr)
    )
}

/// Asserts the run exited by itself, failed, and said `what` about `path`.
fn refused(g: &Guarded, path: &Path, what: &str) {
    let said = text(g);
    assert!(
        !g.hung,
        "still running after {GUARD:?}; said so far:\n{said}"
    );
    assert!(!g.output.status.success(), "it succeeded:\n{said}");
    assert!(said.contains(what), "expected {what:?}:\n{said}");
    assert!(
        said.contains(&path.display().to_string()),
        "expected the path {}:\n{said}",
        path.display()
    );
}

/// The demo dataset copied into `dir`, so its files can be replaced.
use common::demo_copy;

#[test]
fn a_named_pipe_as_the_cells_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("cells.jsonl");
    if !mkfifo(&fifo) {
        return;
    }
    // Named on the command line: a plain open of it would wait for a writer forever.
    let g = run(&["report", &fifo.display().to_string()]);
    refused(&g, &fifo, "named pipe (FIFO), not a regular file");
    // As the cells.jsonl of a dataset directory: refused by name, not passed over.
    let g = run(&["validate", &dir.path().display().to_string()]);
    refused(&g, &fifo, "named pipe (FIFO), not a regular file");
}

/// A `cells.jsonl` that is a link leading nowhere is refused by its name (it was passed
/// over, and the dataset said to have no cells); a named pipe among a folder's other cells
/// files is refused by name too, not left out of the data.
#[test]
fn a_broken_link_or_a_pipe_among_the_cells_files_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ds = dir.path().join("dangling");
    std::fs::create_dir(&ds).expect("mkdir");
    let cells = ds.join("cells.jsonl");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &cells).expect("ln -s");
    let g = run(&["validate", &ds.display().to_string()]);
    refused(&g, &cells, "cannot read");
    assert!(!text(&g).contains("without cells"), "{}", text(&g));
    let ds = demo_copy(dir.path());
    std::fs::rename(ds.join("cells.jsonl"), ds.join("real.jsonl")).expect("mv");
    let fifo = ds.join("a.jsonl");
    if !mkfifo(&fifo) {
        return;
    }
    let g = run(&["validate", &ds.display().to_string()]);
    refused(&g, &fifo, "named pipe (FIFO), not a regular file");
}

#[test]
fn a_named_pipe_as_items_or_dataset_json_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["items.jsonl", "dataset.json"] {
        let data = demo_copy(&dir.path().join(name));
        let fifo = data.join(name);
        std::fs::remove_file(&fifo).expect("rm");
        if !mkfifo(&fifo) {
            return;
        }
        let g = run(&["report", &data.display().to_string()]);
        refused(&g, &fifo, "named pipe (FIFO)");
    }
}

#[test]
fn a_link_to_dev_zero_as_the_cells_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("cells.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
    let g = run(&["report", &link.display().to_string()]);
    refused(&g, &link, "a character device, not a regular file");
    let g = run(&["validate", &dir.path().display().to_string()]);
    refused(&g, &link, "a character device, not a regular file");
}

#[test]
fn a_named_pipe_as_the_audit_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("alice.audit.jsonl");
    if !mkfifo(&fifo) {
        return;
    }
    // Read by the summary...
    let g = run(&["audit", "summary", &fifo.display().to_string()]);
    refused(&g, &fifo, "named pipe (FIFO)");
    // ...and opened for appending by the audit screens, which need a terminal: `script`
    // gives them one that nobody types into.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        common::skip_note(format_args!(
            "no `script`; the audit screens' case is not checked"
        ));
        return;
    }
    let demo = repo().join("fixtures/demo");
    let cmd = format!(
        "{} {} --annotator alice --audit {}",
        bin().display(),
        demo.display(),
        fifo.display()
    );
    // script's typescript goes to a file of our own, never the machine's /dev/null.
    let typescript = tempfile::NamedTempFile::new().expect("typescript");
    let args = vec![
        "-qfec".to_string(),
        cmd.clone(),
        typescript.path().display().to_string(),
    ];
    let g = run_guarded(Path::new("script"), &args, GUARD);
    refused(&g, &fifo, "named pipe (FIFO)");
}
