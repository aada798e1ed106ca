//! Work that grows with the square of the benchmarks (issue 37 item 9: `list` took 66 s at
//! 100 000 benchmarks), caught without timing anything: the instructions the pipeline
//! executes, counted by valgrind's callgrind, at B, 2B and 4B benchmarks. Linear work
//! `a + b·B` gives `f(4B) − 3·f(2B) + 2·f(B) = 0`, and sizes that double keep it so for the
//! vectors and tables that grow by doubling on the way; a term `c·B²` adds `6·c·B²`. The
//! test asserts that sum is a small share of `f(B)`. Skipped, with a note, when valgrind is
//! not installed.
//!
//! The pipeline is one process: `frameaudit list` as the command runs it, then in process
//! the report's analyses and JSON (`report --json --boot 0`) and the audit screens' first
//! screen (their analyses, queue, search texts and first draw).

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Command;

use clap::Parser;
use frameaudit::cli::args::{Cli, Command as Sub};
use frameaudit::core::analysis::params::Params;
use frameaudit::core::dataset::load_dataset;

/// Set to a dataset in the child process that callgrind runs.
const CHILD: &str = "FRAMEAUDIT_SCALING_CHILD";

/// `b` benchmarks of one item each: two models under `8f` and `32f` (shared by every
/// benchmark) and a configuration named after the benchmark, a second protocol of one
/// model, every fourth benchmark open-ended, and the items' questions. The lines are short,
/// so that even 4B benchmarks fit one part of the loader (`core::load::chunk`, 2 MiB): a
/// part's buffer is zeroed when it is made, a step in the count at each part.
fn dataset(dir: &Path, b: usize) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let file = |name: &str| {
        std::io::BufWriter::new(std::fs::File::create(dir.join(name)).expect("create"))
    };
    let (mut cells, mut items) = (file("cells.jsonl"), file("items.jsonl"));
    let mut x: u64 = 37;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..b {
        writeln!(
            items,
            r#"{{"benchmark":"b{i}","item_id":"q","question":"What happens in clip {i}?"}}"#
        )
        .expect("write");
        let own = format!("c{i}");
        for (protocol, models) in [("", 2), (r#","protocol":"p""#, 1)] {
            for model in 0..models {
                for (config, frames) in [("8f", 8), (own.as_str(), 16), ("32f", 32)] {
                    let answer = if i % 4 == 3 {
                        format!(r#""score":{}"#, next() % 101)
                    } else {
                        format!(
                            r#""pred":"{}","gold":"A""#,
                            ["A", "B"][(next() % 2) as usize]
                        )
                    };
                    writeln!(
                        cells,
                        r#"{{"model":"m{model}","benchmark":"b{i}","item_id":"q","config":"{config}","frames":{frames}{protocol},{answer}}}"#
                    )
                    .expect("write");
                }
            }
        }
    }
    cells.flush().expect("flush");
    items.flush().expect("flush");
}

/// The pipeline, in the child: `list`, the report, the first screen.
#[test]
fn child_pipeline() {
    let Some(dir) = std::env::var_os(CHILD) else {
        return;
    };
    frameaudit::core::cache::disable();
    let dir = Path::new(&dir);
    let data = dir.to_str().expect("utf-8");
    let cli = Cli::try_parse_from(["frameaudit", "list", data]).expect("arguments");
    let Some(Sub::List(list)) = &cli.command else {
        panic!("not the list command");
    };
    frameaudit::cli::list::run(list).expect("list");

    let ds = load_dataset(dir, None).expect("load");
    let params = Params {
        bootstrap_b: 0,
        ..Params::default()
    };
    let report = frameaudit::core::analysis::run(&ds.matrix, &params, None);
    assert!(!report.protocol_comparisons.is_empty());
    report
        .write_json(&ds.matrix, std::io::sink(), false)
        .expect("json");
    drop(report);

    let audit = dir.join("child.audit.jsonl");
    let opts = frameaudit::term::TuiOptions::plain("scaling", audit);
    let mut app = frameaudit::tui::build_app(ds, &opts, || {}).expect("app");
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).expect("terminal");
    frameaudit::tui::view::render(&mut term, &mut app).expect("draw");
    assert!(!app.queue.rows.is_empty());
    app.wait_fingerprint();
}

/// The instructions the child executes on `dir`, as callgrind counts them.
fn instructions(dir: &Path, out: &Path) -> u64 {
    let counts = out.with_extension("callgrind");
    // On one core, when taskset can say so: the threads then do their work in one order
    // each run, and the counts differ by a few hundredths of a percent instead of tenths.
    let one_core = Command::new("taskset")
        .args(["-c", "0", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    let mut cmd = if one_core {
        let mut c = Command::new("taskset");
        c.args(["-c", "0", "valgrind"]);
        c
    } else {
        Command::new("valgrind")
    };
    let run = cmd
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", counts.display()))
        .arg(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_pipeline",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, dir)
        .env("FRAMEAUDIT_CACHE", "off")
        .stdout(std::fs::File::create(out).expect("stdout file"))
        .output()
        .expect("valgrind");
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "the child failed:\n{log}");
    // The count is the file's `summary:` (or `totals:`) line.
    let text = std::fs::read_to_string(&counts).expect("callgrind output");
    text.lines()
        .find_map(|l| l.strip_prefix("summary: ").or(l.strip_prefix("totals: ")))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no instruction count in {}", counts.display()))
}

#[test]
fn work_grows_linearly_with_the_benchmarks() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let present = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        common::skip_note(format_args!(
            "valgrind is absent; skipping the count of work against the benchmarks"
        ));
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let b = 512;
    let f: Vec<f64> = [1, 2, 4]
        .iter()
        .map(|n| {
            let dir = tmp.path().join(format!("b{n}"));
            dataset(&dir, n * b);
            instructions(&dir, &tmp.path().join(format!("out{n}.txt"))) as f64
        })
        .collect();
    let excess = f[2] - 3.0 * f[1] + 2.0 * f[0];
    let sizes = format!("{b}, {}, {} benchmarks", 2 * b, 4 * b);
    eprintln!(
        "instructions at {sizes}: {:.0}, {:.0}, {:.0}; beyond linear {excess:.0} ({:.2}% of the first)",
        f[0],
        f[1],
        f[2],
        100.0 * excess / f[0]
    );
    // The work as it is leaves 0.3 to 0.5% here (threads, hash seeds, sorting); the
    // quadratics of issue 37 left 179% together, and 24% (the protocol comparisons'
    // search for their other analyses) and 12% (a model's configurations available in
    // every benchmark, intersected benchmark by benchmark) each alone.
    assert!(
        excess < 0.02 * f[0],
        "the work does not grow as the benchmarks do: {:.0}, {:.0}, {:.0} instructions at {sizes}",
        f[0],
        f[1],
        f[2],
    );
}
