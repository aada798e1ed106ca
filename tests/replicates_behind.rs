//! The audit screens open a dataset with large replicate files, or a large cells file with
//! replicate lines, on its canonical cells and read the replicates behind the first screen
//! (core::dataset::load_canonical_first, tui/app/replicates.rs): the first read leaves
//! exactly the replicate files, or passes over exactly the replicate lines, the whole read
//! gives what a plain load gives, the queue then judges every row as a screen opened on the
//! whole dataset does, and a replicate file that is not only replicates closes the screens
//! with its file and line.

mod common;

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyModifiers};
use frameaudit::core::analysis::run;
use frameaudit::core::dataset::{Dataset, load_canonical_first, load_dataset};
use frameaudit::term::TuiOptions;
use frameaudit::tui::app::{App, Screen, SortKey};
use frameaudit::tui::{build_app, queue_params, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;

/// The demo laid out as an import of replicates leaves a dataset: its canonical cells in
/// `cells.jsonl`, its replicate cells in `replicates/demo.jsonl`. Returns the dataset and
/// how many replicate lines it has.
fn split_demo(dir: &Path) -> (PathBuf, usize) {
    let src = common::repo().join("fixtures/demo");
    let dst = dir.join("demo");
    std::fs::create_dir_all(dst.join("replicates")).expect("mkdir");
    for f in ["items.jsonl", "dataset.json"] {
        std::fs::copy(src.join(f), dst.join(f)).expect("copy");
    }
    let text = std::fs::read_to_string(src.join("cells.jsonl")).expect("cells");
    let (reps, cells): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| is_replicate(l));
    std::fs::write(dst.join("cells.jsonl"), cells.join("\n") + "\n").expect("write");
    std::fs::write(dst.join("replicates/demo.jsonl"), reps.join("\n") + "\n").expect("write");
    (dst, reps.len())
}

/// Whether a cells line is a replicate.
fn is_replicate(line: &str) -> bool {
    let v: Value = serde_json::from_str(line).expect("json line");
    v.get("replicate").is_some_and(|r| !r.is_null())
}

/// The report of a matrix as JSON (no bootstrap), to compare two reads by.
fn report_json(ds: &Dataset) -> Value {
    let params = frameaudit::core::analysis::params::Params {
        bootstrap_b: 0,
        ..Default::default()
    };
    let mut buf = Vec::new();
    run(&ds.matrix, &params, None)
        .write_json(&ds.matrix, &mut buf, false)
        .expect("json");
    serde_json::from_slice(&buf).expect("valid")
}

#[test]
fn the_first_read_leaves_only_the_replicate_files_and_the_whole_read_is_the_plain_load() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, n_reps) = split_demo(tmp.path());
    assert!(n_reps > 1000, "the demo has replicates: {n_reps}");
    let reps = ds.join("replicates/demo.jsonl");
    let size = std::fs::metadata(&reps).expect("size").len();

    let first = load_canonical_first(&ds, None, size).expect("first read");
    let deferred = first
        .deferred
        .as_ref()
        .expect("the replicates are left for later");
    assert_eq!(deferred.files, std::slice::from_ref(&reps));
    assert_eq!(deferred.bytes, size);
    assert_eq!(first.cell_files, [ds.join("cells.jsonl")]);
    assert_eq!(first.matrix.replicates.read, 0, "no replicate read first");
    assert!(first.pending_cache.is_none(), "a part is never cached");

    // Below the size, everything is read at once, as by every other command.
    let whole = load_canonical_first(&ds, None, size + 1).expect("whole");
    assert!(whole.deferred.is_none());
    assert_eq!(whole.matrix.replicates.read, n_reps as u64);

    let full = deferred.load(&first.matrix).expect("whole read");
    assert_eq!(full.matrix.replicates.read, n_reps as u64);
    let plain = load_dataset(&ds, None).expect("plain");
    assert_eq!(report_json(&full), report_json(&plain));
    // The canonical part alone gives the same canonical measures (§16.1): the report
    // differs only where replicates are counted.
    let first_json = report_json(&first).to_string();
    assert!(
        !first_json.contains("beyond_noise"),
        "no noise floor without replicates"
    );
    assert!(report_json(&full).to_string().contains("beyond_noise"));
}

/// The demo as it is bundled: its replicate lines among its canonical lines, in one
/// `cells.jsonl`. Returns the dataset and how many replicate lines it has.
fn interleaved_demo(dir: &Path) -> (PathBuf, u64) {
    let src = common::repo().join("fixtures/demo");
    let dst = dir.join("demo");
    std::fs::create_dir_all(&dst).expect("mkdir");
    for f in ["items.jsonl", "dataset.json", "cells.jsonl"] {
        std::fs::copy(src.join(f), dst.join(f)).expect("copy");
    }
    let text = std::fs::read_to_string(dst.join("cells.jsonl")).expect("cells");
    let n = text.lines().filter(|l| is_replicate(l)).count();
    (dst, n as u64)
}

#[test]
fn in_one_cells_file_the_first_read_passes_over_the_replicate_lines() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, n_reps) = interleaved_demo(tmp.path());
    let cells = ds.join("cells.jsonl");
    let size = std::fs::metadata(&cells).expect("size").len();
    // The dataset directory, and its cells file opened alone.
    for path in [&ds, &cells] {
        let first = load_canonical_first(path, None, size).expect("first read");
        let deferred = first.deferred.as_ref().expect("the replicates are left");
        assert!(deferred.files.is_empty(), "no file left unread");
        assert_eq!(deferred.skimmed, n_reps, "every replicate line passed over");
        assert_eq!(first.matrix.replicates.read, 0, "no replicate read first");
        assert!(first.pending_cache.is_none(), "a part is never cached");
        let plain = load_dataset(path, None).expect("plain");
        assert_eq!(first.matrix.n_cells(), plain.matrix.n_cells());
        assert_eq!(first.matrix.cell_line, plain.matrix.cell_line);
        assert_eq!(first.matrix.stats.records, plain.matrix.stats.records);
        let full = deferred.load(&first.matrix).expect("whole read");
        assert!(full.deferred.is_none());
        assert_eq!(full.matrix.replicates.read, n_reps);
        assert_eq!(report_json(&full), report_json(&plain));
        // Below the size, everything is read at once.
        let whole = load_canonical_first(path, None, size + 1).expect("whole");
        assert!(whole.deferred.is_none());
        assert_eq!(whole.matrix.replicates.read, n_reps);
    }
}

/// A dataset whose small `replicates/` file is read at once while its cells file's
/// replicate lines are passed over: the first read keeps no replicate, or its rows would be
/// judged on part of their evidence (and a record saved then would keep that judgement).
#[test]
fn a_first_read_that_leaves_some_replicates_for_later_keeps_none() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, n_reps) = interleaved_demo(tmp.path());
    let cells = ds.join("cells.jsonl");
    let text = std::fs::read_to_string(&cells).expect("cells");
    let (reruns, rest): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| {
        let v: Value = serde_json::from_str(l).expect("json line");
        v["nuisance"] == "rerun"
    });
    std::fs::create_dir_all(ds.join("replicates")).expect("mkdir");
    let reps = ds.join("replicates/rerun.jsonl");
    std::fs::write(&reps, reruns.join("\n") + "\n").expect("write");
    std::fs::write(&cells, rest.join("\n") + "\n").expect("write");
    let size = std::fs::metadata(&cells).expect("size").len();
    assert!(std::fs::metadata(&reps).expect("size").len() < size);
    let n_reruns = reruns.len() as u64;
    assert!(n_reruns > 0 && n_reruns < n_reps, "{n_reruns} of {n_reps}");

    let first = load_canonical_first(&ds, None, size).expect("first read");
    let deferred = first
        .deferred
        .clone()
        .expect("some replicates left for later");
    assert!(deferred.files.is_empty(), "the small file is read");
    assert_eq!(deferred.skimmed, n_reps - n_reruns);
    assert_eq!(first.matrix.replicates.read, 0, "none kept");
    assert!(first.matrix.replicates.cells.is_empty());
    let app = common::app_of(first, "tester");
    assert!(app.replicates_reading());
    assert!(
        rows(&app).iter().all(|r| r.2.is_none()),
        "no row judged yet"
    );
    assert_eq!(app.queue.harms, None);

    let full = deferred.load(&app.ds.matrix).expect("whole read");
    assert_eq!(full.matrix.replicates.read, n_reps);
    let plain = load_dataset(&ds, None).expect("plain");
    assert_eq!(report_json(&full), report_json(&plain));
}

/// A cell of `replicates/` that is not a replicate is refused by every load (the audit
/// screens, which read that folder after their first screen, could not rank it first).
#[test]
fn a_cell_without_replicate_in_the_replicates_folder_is_named_by_file_line_and_field() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = split_demo(tmp.path());
    let reps = ds.join("replicates/demo.jsonl");
    // The first canonical line, given a new item, as the replicates file's third line.
    let cells = std::fs::read_to_string(ds.join("cells.jsonl")).expect("cells");
    let mut stray: Value = serde_json::from_str(cells.lines().next().expect("line")).expect("j");
    stray["item_id"] = Value::from("not-a-replicate");
    let text = std::fs::read_to_string(&reps).expect("reps");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.insert(2, stray.to_string());
    std::fs::write(&reps, lines.join("\n") + "\n").expect("write");

    let want = format!("{}:3: error: field `replicate`", reps.display());
    let first = load_canonical_first(&ds, None, 0).expect("first read");
    let err = first
        .deferred
        .as_ref()
        .expect("deferred")
        .load(&first.matrix)
        .expect_err("a canonical cell among the replicates");
    assert!(err.to_string().contains(&want), "{want} in: {err}");
    let err = load_dataset(&ds, None).expect_err("refused by a plain load too");
    assert!(err.to_string().contains(&want), "{want} in: {err}");
    // Only that one: the replicates around it are fine.
    assert!(err.to_string().contains("1 error"), "{err}");

    // A canonical line copied as is (a key the cells file already has) is the same mistake,
    // said as such, not as a duplicate of the cells file's line.
    lines[2] = cells.lines().next().expect("line").to_string();
    std::fs::write(&reps, lines.join("\n") + "\n").expect("write");
    let err = load_dataset(&ds, None).expect_err("refused");
    let err = err.to_string();
    assert!(err.contains(&want), "{want} in: {err}");
    assert!(!err.contains("duplicate"), "{err}");
    assert!(err.contains("1 error"), "{err}");
}

/// A key pressed, without modifiers.
fn press(app: &mut App, code: KeyCode) {
    app.on_key(crossterm::event::KeyEvent::new(code, KeyModifiers::NONE));
}

fn screen(app: &mut App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    view::render(&mut term, app).expect("draw");
    term.backend().to_string()
}

/// The queue's rows as (model, item, harm), in the order shown.
fn rows(app: &App) -> Vec<(u32, u32, Option<frameaudit::core::queue::Harm>)> {
    app.queue
        .visible
        .iter()
        .map(|&i| {
            let q = &app.queue.rows[i as usize].q;
            (q.model, q.item, q.harm)
        })
        .collect()
}

#[test]
fn the_queue_judges_its_rows_once_the_replicates_arrive_as_if_opened_on_them() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = split_demo(tmp.path());
    let opts = |name: &str| TuiOptions::plain("tester", tmp.path().join(name));

    // Opened on everything at once: what the queue must come to.
    let whole = load_dataset(&ds, None).expect("whole");
    let mut want = build_app(whole, &opts("whole.audit.jsonl"), || {}).expect("app");
    assert!(want.queue.harms.is_some(), "the demo's rows are judged");

    let first = load_canonical_first(&ds, None, 0).expect("first read");
    let deferred = first.deferred.clone().expect("deferred");
    let mut app = build_app(first, &opts("first.audit.jsonl"), || {}).expect("app");
    assert!(
        app.replicates_reading(),
        "the screens know what they went without"
    );
    let before = screen(&mut app, 120, 40);
    assert!(before.contains("replicates: reading…"), "{before}");
    assert!(!before.contains("stable"), "nothing judged yet:\n{before}");
    assert!(rows(&app).iter().all(|r| r.2.is_none()));
    // The annotator moves and sorts meanwhile: both are kept.
    app.queue.sort = SortKey::Stable;
    app.refresh_visible();
    let selected = app.queue.visible[3];
    app.queue.selected = Some(selected);
    let key = app.key(selected as usize);

    let full = deferred.load(&app.ds.matrix).expect("whole read");
    let report = run(&full.matrix, &queue_params(&opts("x")), None);
    let effects = app.attach_replicates(std::sync::Arc::new(full), report);
    assert!(effects.is_empty(), "no researcher view open");
    assert!(!app.replicates_reading());
    assert_eq!(app.queue.harms, want.queue.harms);
    assert_eq!(
        app.key(app.queue.selected.expect("selection") as usize),
        key
    );
    assert_eq!(app.screen, Screen::Queue);
    want.queue.sort = SortKey::Stable;
    want.refresh_visible();
    assert_eq!(
        rows(&app),
        rows(&want),
        "rows, order and harm as opened whole"
    );
    let after = screen(&mut app, 120, 40);
    assert!(!after.contains("replicates: reading…"), "{after}");
    let title = |s: &str| {
        s.lines()
            .find(|l| l.contains("audit queue"))
            .map(str::to_string)
    };
    assert_eq!(title(&after), title(&screen(&mut want, 120, 40)));
}

#[test]
fn a_researcher_view_built_before_the_replicates_is_built_again_with_their_floor() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = split_demo(tmp.path());
    let opts = TuiOptions::plain("tester", tmp.path().join("a.audit.jsonl"));
    let first = load_canonical_first(&ds, None, 0).expect("first read");
    let deferred = first.deferred.clone().expect("deferred");
    let mut app = build_app(first, &opts, || {}).expect("app");
    // Without a worker (as in tests), a view is built as it is opened.
    press(&mut app, KeyCode::Char('O'));
    assert!(
        matches!(app.screen, Screen::Research(_)),
        "the overview is open"
    );
    let before = screen(&mut app, 140, 45);
    assert!(
        !before.contains("vs noise"),
        "no floor without replicates:\n{before}"
    );

    let full = deferred.load(&app.ds.matrix).expect("whole read");
    let report = run(&full.matrix, &queue_params(&opts), None);
    let effects = app.attach_replicates(std::sync::Arc::new(full), report);
    assert!(effects.is_empty(), "built at once without a worker");
    let after = screen(&mut app, 140, 45);
    assert!(
        after.contains("vs noise"),
        "the floor once replicates are in:\n{after}"
    );
}

/// The binary in tmux on `ds` with its replicates left for later whatever their size
/// (`FRAMEAUDIT_DEFER_MIN_BYTES=0`): its phases go to `timings`, its exit status to
/// `status`.
fn start_deferred(name: &str, ds: &Path, dir: &Path) -> (common::tmux::Tmux, PathBuf, PathBuf) {
    use common::tmux::shell_quote;
    let timings = dir.join(format!("{name}.timings"));
    let status = dir.join(format!("{name}.status"));
    let prelude = format!(
        "export FRAMEAUDIT_DEFER_MIN_BYTES=0 FRAMEAUDIT_TIMINGS=1 FRAMEAUDIT_CACHE=off; {} {} --annotator tester --audit {} 2> {}; echo exit=$? > {}; exit",
        env!("CARGO_BIN_EXE_frameaudit"),
        shell_quote(&ds.display().to_string()),
        shell_quote(
            &dir.join(format!("{name}.audit.jsonl"))
                .display()
                .to_string()
        ),
        shell_quote(&timings.display().to_string()),
        shell_quote(&status.display().to_string()),
    );
    let t = common::tmux::Tmux::run(&format!("{name}-{}", std::process::id()), &[], &prelude);
    (t, timings, status)
}

/// Waits (20 s at most) for `path` to hold something, and gives it.
fn wait_file(path: &Path) -> String {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if !text.is_empty() || std::time::Instant::now() > end {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn in_tmux_the_queue_shows_first_and_then_judges_its_rows() {
    if !common::tmux::tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = split_demo(tmp.path());
    queue_first_then_judged("fa-behind", &ds, tmp.path());
}

#[test]
fn in_tmux_the_queue_of_one_cells_file_shows_first_and_then_judges_its_rows() {
    if !common::tmux::tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = interleaved_demo(tmp.path());
    queue_first_then_judged("fa-behind-one", &ds.join("cells.jsonl"), tmp.path());
}

/// The binary in tmux on `ds` with its replicates left for later: its queue comes to the
/// counts of the demo opened whole, and its first screen was drawn before the replicates
/// were read.
fn queue_first_then_judged(name: &str, ds: &Path, tmp: &Path) {
    let (t, timings, status) = start_deferred(name, ds, tmp);
    let s = t.wait_until("the judged queue", |s| {
        s.contains("audit queue") && s.contains("stable") && s.contains("lottery")
    });
    assert!(!s.contains("replicates: reading"), "{s}");
    // The same counts as the queue of the demo read whole (its cells, one file).
    let whole = load_dataset(&common::repo().join("fixtures/demo"), None).expect("demo");
    let opts = TuiOptions::plain("tester", tmp.join(format!("{name}-whole.audit.jsonl")));
    let mut want = build_app(whole, &opts, || {}).expect("app");
    let want_screen = screen(&mut want, 120, 40);
    let counts = |s: &str| {
        s.lines()
            .find(|l| l.contains("audit queue"))
            .and_then(|l| l.split("sort:").next())
            .map(|l| l.trim().trim_start_matches('"').trim())
            .map(str::to_string)
    };
    assert_eq!(counts(&s), counts(&want_screen));
    t.keys(&["q"]);
    assert_eq!(wait_file(&status).trim(), "exit=0");
    let phases = std::fs::read_to_string(&timings).expect("timings");
    let at = |what: &str| {
        phases
            .find(what)
            .unwrap_or_else(|| panic!("no {what:?} in:\n{phases}"))
    };
    assert!(
        at("first screen") < at("replicates read"),
        "the first screen is drawn before the replicates are read:\n{phases}"
    );
}

#[test]
fn in_tmux_a_rejected_replicate_file_closes_the_screens_naming_file_line_and_field() {
    if !common::tmux::tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = split_demo(tmp.path());
    // The fifth replicate line loses its nuisance: rejected (docs/measures.md §16.1).
    let reps = ds.join("replicates/demo.jsonl");
    let text = std::fs::read_to_string(&reps).expect("reps");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut bad: Value = serde_json::from_str(&lines[4]).expect("json");
    bad.as_object_mut().expect("object").remove("nuisance");
    lines[4] = bad.to_string();
    std::fs::write(&reps, lines.join("\n") + "\n").expect("write");

    let (_t, timings, status) = start_deferred("fa-behind-bad", &ds, tmp.path());
    // The exit status of a dataset rejected at the start.
    assert_eq!(
        wait_file(&status).trim(),
        "exit=1",
        "the problems' exit status"
    );
    let err = std::fs::read_to_string(&timings).expect("stderr");
    assert!(
        err.contains("first screen"),
        "the screens had opened:\n{err}"
    );
    assert!(
        err.contains(&format!("{}:5", reps.display())) && err.contains("nuisance"),
        "file, line and field named:\n{err}"
    );
}

/// The queue while the replicates are read, and once they are in, at 80x24 without colour:
/// the title says they are being read, then gives the counts; the R column comes with them.
#[test]
fn the_queue_while_its_replicates_are_read_and_after() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = split_demo(tmp.path());
    let first = load_canonical_first(&ds, None, 0).expect("first read");
    let deferred = first.deferred.clone().expect("deferred");
    let mut app = common::app_of(first, "tester");
    app.no_color = true;
    insta::assert_snapshot!("queue_replicates_reading", screen(&mut app, 80, 24));
    // The item screen says so too, over its trajectory.
    press(&mut app, KeyCode::Enter);
    let item = screen(&mut app, 120, 40);
    assert!(item.contains("trajectory · replicates: reading…"), "{item}");
    press(&mut app, KeyCode::Esc);
    let full = deferred.load(&app.ds.matrix).expect("whole read");
    let report = run(&full.matrix, &app.report.params, None);
    app.attach_replicates(std::sync::Arc::new(full), report);
    insta::assert_snapshot!("queue_replicates_read", screen(&mut app, 80, 24));
    press(&mut app, KeyCode::Enter);
    let item = screen(&mut app, 120, 40);
    assert!(item.contains("trajectory · then replicates:"), "{item}");
}

/// Quitting while the replicates are still read does not wait for the read: the screens
/// close at once, and the read is left behind (its end never logged).
#[test]
fn in_tmux_quitting_while_the_replicates_are_read_does_not_wait_for_them() {
    use std::io::Write;
    if !common::tmux::tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = split_demo(tmp.path());
    // 150 MB of replicates of items the dataset does not have (orphans: counted, not
    // errors), to be read after the demo's small first screen.
    let f = std::fs::File::create(ds.join("replicates/zz-orphans.jsonl")).expect("create");
    let mut out = std::io::BufWriter::new(f);
    for i in 0..700_000 {
        writeln!(
            out,
            "{{\"model\":\"lumen-7b\",\"benchmark\":\"clips-mcq\",\"item_id\":\"orphan-{i:07}\",\"config\":\"8f\",\"frames\":8,\"pixels\":151200,\"pred\":\"A\",\"gold\":\"B\",\"source_tag\":\"filler filler filler filler filler filler filler filler\",\"replicate\":\"rerun-9\",\"nuisance\":\"rerun\"}}"
        )
        .expect("write");
    }
    out.flush().expect("flush");
    drop(out);
    // The dataset is valid: a read waited for would end, and log its end.
    let o = common::frameaudit(&["validate", &ds.display().to_string()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let (t, timings, status) = start_deferred("fa-behind-quit", &ds, tmp.path());
    t.wait_for("replicates: reading");
    t.keys(&["q"]);
    let quit = std::time::Instant::now();
    assert_eq!(wait_file(&status).trim(), "exit=0");
    let waited = quit.elapsed();
    let phases = std::fs::read_to_string(&timings).expect("timings");
    assert!(
        !phases.contains("replicates read"),
        "quitting waited for the read ({waited:?}):\n{phases}"
    );
}

/// Screens that close at once (here a replicate file that is a named pipe, refused by the
/// read behind the first screen) wait for the terminal's answers to their query: answers
/// arriving after they left would be read, and printed, by the shell. The terminal is a
/// pseudo-terminal that answers 0.4 s late (tests/pty/late_answers.py).
#[test]
fn screens_closed_at_once_leave_no_terminal_answers_for_the_shell() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, _) = split_demo(tmp.path());
    if !common::mkfifo(&ds.join("replicates/planted.jsonl")) {
        return;
    }
    let err = tmp.path().join("stderr.txt");
    let o = std::process::Command::new("python3")
        .arg(common::repo().join("tests/pty/late_answers.py"))
        .arg("0.4")
        .arg(&err)
        .arg(env!("CARGO_BIN_EXE_frameaudit"))
        .arg(&ds)
        .args(["--annotator", "tester", "--audit"])
        .arg(tmp.path().join("a.audit.jsonl"))
        .env("FRAMEAUDIT_DEFER_MIN_BYTES", "0")
        .env("FRAMEAUDIT_CACHE", "off")
        .output();
    let Ok(o) = o else {
        common::skip_note(format_args!(
            "python3 is absent; skipping the late-answers check"
        ));
        return;
    };
    assert!(o.status.success(), "{}", common::stderr(&o));
    let got: Value = serde_json::from_slice(&o.stdout).expect("the driver's JSON");
    let stderr = std::fs::read_to_string(&err).expect("stderr");
    assert_eq!(got["asked"], true, "the terminal was asked: {got}");
    assert_eq!(got["status"], 1, "the pipe is refused:\n{stderr}");
    assert!(stderr.contains("named pipe"), "{stderr}");
    assert_eq!(got["left"], "", "answers left for the shell: {got}");
    assert_eq!(got["answered_after_exit"], false, "{got}");
}
