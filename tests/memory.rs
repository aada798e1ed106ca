//! Memory at scale (issue 13 item 12): what a cell and a queue row cost, checked on the
//! structures rather than on the process (the figures at 10 M cells come from
//! `cargo bench --bench tui -- 10m`).

mod common;

use std::io::Write;

use frameaudit::core::analysis::params::Params;
use frameaudit::core::dataset::load_dataset;
use frameaudit::term::TuiOptions;
use frameaudit::tui::build_app;

/// 5 models x 8 budgets x `items` items, answers A-D, confidences in hundredths, a
/// question per item: the shape of a multiple-choice sweep.
fn sweep(dir: &std::path::Path, items: usize) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let mut cells =
        std::io::BufWriter::new(std::fs::File::create(dir.join("cells.jsonl")).expect("cells"));
    let mut meta =
        std::io::BufWriter::new(std::fs::File::create(dir.join("items.jsonl")).expect("items"));
    let mut x: u64 = 7;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..items {
        writeln!(
            meta,
            "{{\"benchmark\":\"b\",\"item_id\":\"item-{i:06}\",\"question\":\"What happens in clip {i}?\"}}"
        )
        .expect("write");
    }
    for m in 0..5 {
        for i in 0..items {
            for f in [0, 8, 16, 24, 32, 64, 128, 256] {
                let pred = ["A", "B", "C", "D"][(next() % 4) as usize];
                let config = if f == 0 {
                    "textonly".into()
                } else {
                    format!("{f}f")
                };
                writeln!(
                    cells,
                    "{{\"model\":\"model-{m}\",\"benchmark\":\"b\",\"item_id\":\"item-{i:06}\",\"config\":\"{config}\",\"frames\":{f},\"pred\":\"{pred}\",\"gold\":\"A\",\"confidence\":{:.2}}}",
                    (next() % 100) as f64 / 100.0
                )
                .expect("write");
            }
        }
    }
}

#[test]
fn a_cell_takes_at_most_20_bytes_and_a_queue_row_holds_no_strings() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ds");
    let items = 3000;
    sweep(&dir, items);
    let ds = load_dataset(&dir, None).expect("load");
    let m = &ds.matrix;
    assert_eq!(m.n_cells(), 5 * 8 * items);
    // Item id (2 bytes: 3000 items), order (4), and one byte for each of the model,
    // configuration, value, confidence, prediction (twice), gold, source, note and file
    // columns; the lines are one run (one cell a line).
    let per_cell = m.cell_bytes() as f64 / m.n_cells() as f64;
    assert!(per_cell <= 20.0, "{per_cell} bytes a cell");
    assert!(
        m.cell_line.bytes() <= 64,
        "{} bytes of lines",
        m.cell_line.bytes()
    );
    assert_eq!(m.cell_line.get(m.n_cells() - 1) as usize, m.n_cells());
    assert_eq!(m.cell_model.width(), 1);
    assert_eq!(m.cell_value.width(), 1);
    assert_eq!(m.cell_confidence.width(), 1);
    // The values are the ones given.
    let c = m.group(0, 0)[0] as usize;
    assert!(m.cell_value.get(c) == 0.0 || m.cell_value.get(c) == 1.0);
    assert!((0.0..1.0).contains(&m.cell_confidence.get(c)));

    let tmp_audit = tmp.path().join("a.audit.jsonl");
    let opts = TuiOptions {
        params: Params::default(),
        images: frameaudit::term::ImageMode::None,
        annotator: Some("mem".into()),
        audit: Some(tmp_audit),
        taxonomy: None,
        keymap: None,
        shard: None,
        review: None,
        mouse: false,
        plan: None,
    };
    let app = build_app(ds, &opts, || {}).expect("app");
    assert!(
        app.queue.rows.len() > items,
        "{} rows",
        app.queue.rows.len()
    );
    // A row is its indices and counts; its transitions are listed when shown.
    assert!(std::mem::size_of::<frameaudit::tui::app::Row>() <= 40);
    assert!(app.queue.rows.iter().all(|r| r.q.transitions.is_none()));
    assert!(!app.pairs(0).is_empty());
    // The search texts hold each item's text once, not once per row (5 models).
    let per_row = app.queue.haystacks.heap_bytes() as f64 / app.queue.rows.len() as f64;
    assert!(per_row < 24.0, "{per_row} bytes of search text a row");
}

/// Runs frameaudit with `args` and returns its peak resident memory in MiB, as last seen
/// in /proc while it ran (the peak only grows, so this is at most a few milliseconds' growth
/// short of it).
fn peak_mib_of(args: &[&std::ffi::OsStr]) -> f64 {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_frameaudit"))
        .args(args)
        .env("FRAMEAUDIT_CACHE", "off")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0.0f64;
    loop {
        if let Some(kb) = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        }) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(st) = child.try_wait().expect("wait") {
            assert!(st.success(), "frameaudit {args:?} failed");
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    peak_kb / 1024.0
}

#[test]
fn cells_written_out_stream_instead_of_being_held() {
    if !std::path::Path::new("/proc/self/status").exists() {
        common::skip_note(format_args!(
            "no /proc here; skipping the memory check of `frameaudit cells`"
        ));
        return;
    }
    // 400 000 cells: held as rows they took about 1.2 GB on the way to Parquet.
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ds");
    sweep(&dir, 10_000);
    for out in ["out.parquet", "out.jsonl"] {
        let out = tmp.path().join(out);
        let peak = peak_mib_of(&[
            "cells".as_ref(),
            dir.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        eprintln!("frameaudit cells -o {}: peak {peak:.0} MiB", out.display());
        let ds = load_dataset(&out, None).expect("the output loads");
        assert_eq!(ds.matrix.n_cells(), 400_000);
        assert!(peak < 160.0, "peak {peak:.0} MiB writing {}", out.display());
    }
}
