//! End to end in a real terminal: the binary runs in tmux on a copy of the demo, keys are
//! typed, the screen is read back, and the audit file is checked; then the process is
//! killed with SIGKILL mid-session and the file must hold every change the screen showed
//! as saved, and a new session must resume at the same item.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::tmux::{Tmux, tmux, tmux_available};
use frameaudit::core::audit::{Status, read_audit};

/// A copy of the demo (so its audits/ folder is private to the test).
use common::demo_copy;

/// The item line of the item screen ("model · benchmark · item").
fn item_title(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(" · clips-") && l.contains("transition"))
        .map(|l| l.split("   [").next().unwrap_or("").trim().to_string())
        .expect("item title")
}

#[test]
fn tag_three_items_undo_one_quit_and_check_the_file() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start(&format!("fa-e2e-{}", std::process::id()), &ds, "e2e");
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    let s = t.wait_for("evidence pathways");
    let first = item_title(&s);
    t.keys(&["1", "Space"]);
    let second = item_title(&t.wait_for("done 1 "));
    assert_ne!(first, second);
    t.keys(&["3", "n"]);
    t.text("distractor at 00:31");
    t.keys(&["Enter", "Space"]);
    let third = item_title(&t.wait_for("done 2 "));
    t.keys(&["6", "!"]);
    t.wait_for("flagged 1 ");
    t.keys(&["u"]);
    let s = t.wait_for("flagged 0 ");
    assert_eq!(
        item_title(&s),
        third,
        "undo goes back to the item it changed"
    );
    t.wait_for("saved ✓");
    t.keys(&["q", "q"]);
    assert!(
        t.wait_exit(Duration::from_secs(10)),
        "frameaudit did not quit"
    );

    let replay = read_audit(&ds.join("audits/e2e.audit.jsonl")).expect("audit file");
    let by_item = |title: &str| {
        let id = title.rsplit(" · ").next().expect("id").to_string();
        let model = title.split(" · ").next().expect("model").to_string();
        replay
            .records
            .values()
            .find(|r| r.key.item_id == id && r.key.model == model)
            .cloned()
            .unwrap_or_else(|| panic!("no record for {title}"))
    };
    let (a, b, c) = (by_item(&first), by_item(&second), by_item(&third));
    assert_eq!(
        (a.status, a.pathways.as_slice()),
        (Status::Done, ["evidence_dropped".to_string()].as_slice())
    );
    assert_eq!(
        (b.status, b.pathways.as_slice()),
        (Status::Done, ["distractor_added".to_string()].as_slice())
    );
    assert_eq!(b.note, "distractor at 00:31");
    assert_eq!(c.status, Status::Todo, "the flag was undone");
    assert_eq!(c.pathways, ["language_prior"]);
    assert!(!a.from.is_empty() && !a.to.is_empty());
}

#[test]
fn kill_9_loses_nothing_shown_as_saved_and_resumes() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let name = format!("fa-kill-{}", std::process::id());
    let t = Tmux::start(&name, &ds, "k9");
    t.wait_for("audit queue");
    t.keys(&["Enter", "2", "Space", "4", "5", "Space", "7"]);
    let s = t.wait_for("done 2 ");
    let at = item_title(&s);
    // Wait until the screen says everything is saved, then kill without warning.
    t.wait_for("saved ✓");
    let pid = t.pid();
    let out = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .output()
        .expect("kill");
    assert!(out.status.success());
    std::thread::sleep(Duration::from_millis(300));

    let replay = read_audit(&ds.join("audits/k9.audit.jsonl")).expect("audit file");
    assert!(replay.warnings.is_empty(), "{:?}", replay.warnings);
    let done: Vec<_> = replay
        .records
        .values()
        .filter(|r| r.status == Status::Done)
        .collect();
    assert_eq!(done.len(), 2);
    let tags: Vec<Vec<String>> = done.iter().map(|r| r.pathways.clone()).collect();
    assert!(
        tags.contains(&vec!["evidence_diluted".to_string()]),
        "{tags:?}"
    );
    assert!(
        tags.contains(&vec![
            "temporal_confusion".to_string(),
            "spatial_detail_lost".to_string()
        ]),
        "{tags:?}"
    );
    let current = replay
        .records
        .values()
        .find(|r| r.status == Status::Todo)
        .expect("the tag on the third item");
    assert_eq!(current.pathways, ["lucky_guess"]);

    // The lock died with the process; a new session opens and resumes at the same item.
    drop(t);
    let t = Tmux::start(&format!("{name}-2"), &ds, "k9");
    let s = t.wait_for("evidence pathways");
    assert_eq!(item_title(&s), at);
    assert!(s.contains("done 2 "), "{s}");
}

/// frameaudit on `ds` in session `name` (annotator `full`) where files may grow to 2 KiB
/// only: past that, writes fail (EFBIG) as on a full disk. The signal the limit sends
/// (SIGXFSZ, by default the end of the process) is frameaudit's own to handle: the shell
/// leaves it as it is. The first item's eight pathways are toggled, more than the file may
/// take; returns the session and its screen once it says NOT SAVED.
fn tagged_past_a_file_size_limit(name: &str, ds: &std::path::Path) -> (Tmux, String) {
    let t = Tmux::start_with(
        &format!("{name}-{}", std::process::id()),
        ds,
        "full",
        "ulimit -S -f 2;",
    );
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    t.wait_for("evidence pathways");
    for k in ["1", "2", "3", "4", "5", "6", "7", "8"] {
        t.keys(&[k]);
    }
    let s = t.wait_for("NOT SAVED");
    (t, s)
}

#[test]
fn a_failed_write_is_shown_kept_retried_and_quitting_asks_first() {
    if !tmux_available() {
        return;
    }
    let has_prlimit = Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_prlimit {
        common::skip_note(format_args!(
            "prlimit is absent; skipping the failed-write test"
        ));
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let (t, s) = tagged_past_a_file_size_limit("fa-full", &ds);
    assert!(s.contains("retried each second"), "{s}");
    // At 80 columns too the status line says why: not saving comes first on it.
    let out = tmux()
        .args(["resize-window", "-t", &t.name, "-x", "80", "-y", "24"])
        .output()
        .expect("resize");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = t.wait_for("File too large");
    let line = s
        .lines()
        .find(|l| l.contains("NOT SAVED"))
        .expect("the line");
    assert!(
        line.starts_with("NOT SAVED (")
            && line.contains(" pending, retried each second): File too large"),
        "{s}"
    );
    // Quitting with unsaved changes asks first, the way out before the reason: q backs
    // out of the item, then asks.
    t.keys(&["q", "q"]);
    let s = t.wait_for("Quit anyway?");
    assert!(t.alive(), "{s}");
    assert!(
        s.lines()
            .any(|l| l.contains("Quit anyway? q again quits: ")),
        "{s}"
    );
    // Room again: the pending changes are written by the next retry.
    let out = Command::new("prlimit")
        .args(["--pid", &t.pid().to_string(), "--fsize=unlimited"])
        .output()
        .expect("prlimit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.wait_for("saved ✓");
    let replay = read_audit(&ds.join("audits/full.audit.jsonl")).expect("audit file");
    assert!(replay.warnings.is_empty(), "{:?}", replay.warnings);
    let rec = replay.records.values().next().expect("record");
    assert_eq!(
        rec.pathways.len(),
        8,
        "every toggle reached the file: {:?}",
        rec.pathways
    );
}

/// Quitting confirmed with changes the file cannot take: the screen says at once that it
/// is quitting after a last try, instead of leaving the question up for seconds.
#[test]
fn quitting_anyway_says_so_while_the_last_write_is_tried() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let (t, _) = tagged_past_a_file_size_limit("fa-quit", &ds);
    t.keys(&["q", "q"]);
    t.wait_for("Quit anyway?");
    t.keys(&["q"]);
    let s = t.wait_for("quitting: a last try to save");
    assert!(!s.contains("Quit anyway?"), "{s}");
    assert!(t.wait_exit(Duration::from_secs(20)), "still running");
}

#[test]
fn resizing_at_any_time_keeps_a_sane_screen() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start(&format!("fa-size-{}", std::process::id()), &ds, "size");
    t.wait_for("audit queue");
    let resize = |w: &str, h: &str| {
        let out = tmux()
            .args(["resize-window", "-t", &t.name, "-x", w, "-y", h])
            .output()
            .expect("resize");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    resize("70", "20");
    t.wait_for("needs a terminal of at least 80x24");
    // Keys do nothing on a screen that cannot be seen: no item opens, no tag is set.
    t.keys(&["Enter", "4", "Space"]);
    std::thread::sleep(Duration::from_millis(300));
    resize("100", "30");
    let s = t.wait_for("audit queue");
    assert!(s.contains("done 0"), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("evidence pathways");
    assert!(s.lines().all(|l| l.chars().count() <= 100), "{s}");
    resize("160", "50");
    t.wait_for("frames of video");
}

#[test]
fn move_the_frame_cursor_and_mark_an_evidence_frame() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    // The frames are not copied: use the bundled ones through a symlink.
    std::os::unix::fs::symlink(
        common::repo().join("fixtures/demo/frames"),
        ds.join("frames"),
    )
    .expect("link frames");
    let t = Tmux::start(&format!("fa-frames-{}", std::process::id()), &ds, "frames");
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    t.wait_for("frames of video");
    t.keys(&["Right", "Right", "e"]);
    let s = t.wait_for("★ evidence");
    // The large view's caption names the frame under the cursor.
    let index: u64 = s
        .split(" frame ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("frame index on screen");
    t.wait_for("saved ✓");
    let replay = read_audit(&ds.join("audits/frames.audit.jsonl")).expect("audit file");
    let rec = replay.records.values().next().expect("record");
    assert_eq!(rec.evidence_frames, [index]);
    // Frames are drawn as half blocks, not as text stand-ins.
    assert!(
        s.contains('▀') || s.contains('▄'),
        "no picture on screen:\n{s}"
    );
}

#[test]
fn the_overview_sends_a_class_to_the_queue() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start(&format!("fa-overview-{}", std::process::id()), &ds, "ov");
    t.wait_for("audit queue");
    t.keys(&["O"]);
    let s = t.wait_for("trajectory classes");
    assert!(s.contains("accuracy by budget"), "{s}");
    // The intervals arrive from the worker thread.
    t.wait_for("% [");
    // Five budget steps, then the classes: the fourth is "loss".
    for _ in 0..8 {
        t.keys(&["Right"]);
    }
    t.wait_for("▶ loss");
    t.keys(&["Enter"]);
    let s = t.wait_for("items: lumen-7b loss (2)");
    assert!(s.contains("audit queue: 2 of 79"), "{s}");
    t.keys(&["x"]);
    t.wait_for("audit queue: 79 of 79");
}

/// The transition on the item screen's title ("8f → 16f").
fn transition_shown(screen: &str) -> String {
    screen
        .lines()
        .find_map(|l| l.split("   transition ").nth(1))
        .and_then(|t| t.split(" (").next())
        .map(|t| t.trim().to_string())
        .expect("transition on the title")
}

#[test]
fn an_item_opens_and_is_tagged_on_the_step_where_its_answer_flips() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    // The first queue row whose flip is not its first listed transition, as the binary
    // ranks the queue.
    let data = frameaudit::core::dataset::load_dataset(&ds, None).expect("demo");
    let params = frameaudit::core::analysis::params::Params {
        bootstrap_b: 0,
        sweep: false,
        ..Default::default()
    };
    let report = frameaudit::core::analysis::run(&data.matrix, &params, None);
    let main = data.matrix.protocols.get("main").expect("main");
    let rows =
        frameaudit::core::queue::queue(&report, main, frameaudit::core::queue::QueueKind::Harmful);
    let (pos, flip) = rows
        .iter()
        .enumerate()
        .find_map(|(p, r)| {
            let flip = frameaudit::core::queue::audited_transition(&report, r)?;
            (flip != r.listed()[0]).then_some((p, flip))
        })
        .expect("such a row in the demo");
    let (a, b) = (flip.lower, flip.higher);
    let r = &rows[pos];
    let g = &report.analyses[r.analysis as usize].grids.models[r.model_index as usize].grid;
    let (from, to) = (g.names[a].0.to_string(), g.names[b].0.to_string());

    let t = Tmux::start(&format!("fa-flip-{}", std::process::id()), &ds, "flip");
    t.wait_for("audit queue");
    for _ in 0..pos {
        t.keys(&["j"]);
    }
    t.keys(&["Enter"]);
    let s = t.wait_for("evidence pathways");
    assert_eq!(transition_shown(&s), format!("{from} → {to}"), "{s}");
    let title = item_title(&s);
    // Quick tagging (a digit, Space) records that transition.
    t.keys(&["1", "Space"]);
    t.wait_for("done 1 ");
    t.wait_for("saved ✓");
    let replay = read_audit(&ds.join("audits/flip.audit.jsonl")).expect("audit file");
    let rec = replay
        .records
        .values()
        .find(|r| {
            title.ends_with(&format!(" · {}", r.key.item_id)) && title.starts_with(&r.key.model)
        })
        .expect("the record");
    assert_eq!(
        (rec.from.as_str(), rec.to.as_str()),
        (from.as_str(), to.as_str())
    );
    assert_eq!(rec.pathways, ["evidence_dropped"]);
}

#[test]
fn items_of_a_churn_selection_open_on_its_transition() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start(&format!("fa-selection-{}", std::process::id()), &ds, "sel");
    t.wait_for("audit queue");
    t.keys(&["O"]);
    t.wait_for("trajectory classes");
    // The third budget step (8f → 16f), part "lost", where the cursor starts.
    t.keys(&["Right", "Right", "Enter"]);
    t.wait_for("items: lumen-7b 8f→16f lost");
    t.keys(&["Enter"]);
    let s = t.wait_for("evidence pathways");
    assert_eq!(transition_shown(&s), "8f → 16f", "{s}");
    let first = item_title(&s);
    // Space moves on to the next item of the selection, on the same transition.
    t.keys(&["Space"]);
    let s = t.wait_for("done 1 ");
    assert_ne!(item_title(&s), first);
    assert_eq!(transition_shown(&s), "8f → 16f", "{s}");
}

#[test]
fn next_todo_skips_done_items_and_undo_says_what_it_undid() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start(&format!("fa-todo-{}", std::process::id()), &ds, "todo");
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    let first = item_title(&t.wait_for("evidence pathways"));
    t.keys(&["Space"]);
    let second = item_title(&t.wait_for("done 1 "));
    t.keys(&["Space"]);
    let third = item_title(&t.wait_for("done 2 "));
    // Back to the first (done): Space again is no new decision.
    t.keys(&["k", "k"]);
    t.wait_for(&first);
    t.keys(&["Space"]);
    let s = t.wait_for("already done, not counted again");
    assert_eq!(item_title(&s), second);
    assert!(s.contains("done 2 "), "{s}");
    // Next todo from the first item: past the second (done) to the third.
    t.keys(&["k", "Tab"]);
    let s = t.wait_for(&third);
    assert!(s.contains("done 2 "), "{s}");
    // Undo says what it took back.
    t.keys(&["u"]);
    let s = t.wait_for(&format!("undid {second}: done → todo"));
    assert_eq!(item_title(&s), second);
}

#[test]
fn two_annotators_then_review_settles_two_disagreements() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let audits = ds.join("audits");
    std::fs::create_dir_all(&audits).expect("mkdir");
    // Two annotators' audits of three units: they disagree on two of them.
    let units = [
        ("lumen-7b", "clip02-q1"),
        ("orbit-2b", "clip12-q2"),
        ("vista-13b", "clip12-q4"),
    ];
    let write = |who: &str, tags: [&str; 3]| {
        let mut lines = vec![
            serde_json::json!({"schema": "frameaudit/audit@1",
            "dataset": {"name": "frameaudit-demo", "fingerprint": "sha256:x"}, "annotator": who,
            "taxonomy": {"id": "evidence-pathways", "version": 1},
            "created_at": "2026-11-30T00:00:00Z"})
            .to_string(),
        ];
        for ((model, item), tag) in units.iter().zip(tags) {
            lines.push(
                serde_json::json!({"at": "2026-11-30T00:00:01Z", "op": "set", "model": model,
                    "benchmark": "clips-mcq", "item_id": item, "from": "16f", "to": "32f",
                    "status": "done", "pathways": [tag], "primary": tag,
                    "evidence_frames": [], "note": format!("{who} thinks {tag}")})
                .to_string(),
            );
        }
        let path = audits.join(format!("{who}.audit.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").expect("write");
        path.display().to_string()
    };
    let alice = write(
        "alice",
        ["evidence_dropped", "language_prior", "item_defect"],
    );
    let bob = write(
        "bob",
        ["distractor_added", "language_prior", "evidence_diluted"],
    );
    let args = vec![
        "review".to_string(),
        alice.clone(),
        bob.clone(),
        "--annotator".into(),
        "carol".into(),
    ];
    let t = Tmux::run(&format!("fa-review-{}", std::process::id()), &args, "");
    let q = t.wait_for("review: 2 disagreements");
    assert!(q.contains("audit queue: 2 of 2"), "{q}");
    // First: take bob's record (A twice: alice's, then bob's) and mark it done.
    t.keys(&["Enter"]);
    let s = t.wait_for("annotators (A: take");
    assert!(s.contains("1 alice") && s.contains("2 bob"), "{s}");
    t.keys(&["A"]);
    t.wait_for("took alice's record");
    t.keys(&["A"]);
    t.wait_for("took bob's record");
    t.keys(&["Space"]);
    // Second: the reviewer's own pathway (key 5) instead.
    t.wait_for("[2/2]");
    t.keys(&["5", "Space"]);
    t.wait_for("done 2");
    t.wait_for("saved ✓");
    t.keys(&["q"]);
    t.wait_exit(Duration::from_secs(10));
    let out = audits.join("adjudicated/carol.audit.jsonl");
    let r = read_audit(&out).expect("adjudicated audit");
    assert_eq!(r.header.annotator, "carol");
    assert_eq!(r.header.adjudicates, vec![alice, bob]);
    assert_eq!(r.records.len(), 2);
    let by_item: std::collections::BTreeMap<&str, &frameaudit::core::audit::AuditRecord> = r
        .records
        .values()
        .map(|x| (x.key.item_id.as_str(), x))
        .collect();
    assert!(by_item.values().all(|x| x.status == Status::Done));
    // The queue ranks clip12-q4 (vista-13b, a terminal regression) first: bob's record;
    // then clip02-q1, with the reviewer's own pathway 5.
    assert_eq!(by_item["clip12-q4"].pathways, ["evidence_diluted"]);
    assert_eq!(by_item["clip12-q4"].note, "bob thinks evidence_diluted");
    assert_eq!(by_item["clip02-q1"].pathways, ["spatial_detail_lost"]);
    assert!(
        !by_item.contains_key("clip12-q2"),
        "the agreed unit is not reviewed"
    );
}

/// The records of an audit file as (unit, status, pathways), for comparing states.
fn audit_state(path: &Path) -> Vec<(String, Status, Vec<String>)> {
    let replay = read_audit(path).expect("the audit file replays");
    replay
        .records
        .values()
        .map(|r| (r.key.item_id.clone(), r.status, r.pathways.clone()))
        .collect()
}

/// How many records the audit file at `path` holds; 0 while it does not replay (between
/// the moment a file is moved aside and its successor put in place).
fn records_in(path: &Path) -> usize {
    read_audit(path).map_or(0, |r| r.records.len())
}

/// The "done N" count of the header.
fn done_count(screen: &str) -> usize {
    screen
        .split("done ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("done count on screen")
}

#[test]
fn sigkill_at_random_points_never_loses_what_was_saved() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let file = ds.join("audits/crash.audit.jsonl");
    // A fixed pseudo-random sequence (SplitMix64), so a failure can be replayed.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    };
    let mut saved_done = 0;
    for round in 0..8 {
        let t = Tmux::start(
            &format!("fa-crash-{}-{round}", std::process::id()),
            &ds,
            "crash",
        );
        let s = t.wait_for("saved ✓");
        // A new session resumes with every change of the file (at the item last opened).
        assert_eq!(
            done_count(&s),
            saved_done,
            "round {round}: resumed state\n{s}"
        );
        if !s.contains("evidence pathways") {
            t.keys(&["Enter"]);
            t.wait_for("evidence pathways");
        }
        let actions = 1 + next(6);
        for _ in 0..actions {
            let key = (1 + next(9)).to_string();
            t.keys(&[key.as_str(), "Space"]);
        }
        let wait_saved = next(2) == 0;
        let shown = if wait_saved {
            // Kill once the screen says everything is saved: nothing may be missing.
            t.wait_for("saved ✓")
        } else {
            // Kill at once, saved or not.
            t.screen()
        };
        let pid = t.pid();
        Command::new("kill")
            .args(["-9", &pid.to_string()])
            .output()
            .expect("kill");
        std::thread::sleep(Duration::from_millis(200));
        drop(t);
        let state = audit_state(&file);
        let done = state.iter().filter(|r| r.1 == Status::Done).count();
        if wait_saved && shown.contains("saved ✓") {
            assert_eq!(done, done_count(&shown), "round {round}: saved state lost");
        }
        assert!(
            done >= saved_done,
            "round {round}: an earlier change was lost"
        );
        // Every record the file holds replays; the next round must resume exactly it.
        saved_done = done;
    }
    assert!(saved_done > 0);
}

#[test]
fn escape_sequences_in_data_stay_inert_in_a_real_terminal() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    // The folder name (the dataset's name on screen), model, item, the wrong answer, the
    // source tag, question and options carry OSC 52 (clipboard), OSC 0 (title), a screen
    // clear, a cursor move and a bidi override.
    let evil = "\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{1b}[10;10H\u{202e}x";
    let dir = tmp.path().join(format!("hostile{evil}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let wrong = format!("B{evil}");
    let mut cells = String::new();
    for (c, frames, pred) in [
        ("8f", 8, "A"),
        ("16f", 16, wrong.as_str()),
        ("32f", 32, "A"),
    ] {
        cells.push_str(
            &serde_json::json!({"model": format!("m{evil}"), "item_id": format!("q{evil}"),
                "config": c, "frames": frames, "pred": pred, "gold": "A", "source_tag": evil})
            .to_string(),
        );
        cells.push('\n');
    }
    std::fs::write(dir.join("cells.jsonl"), cells).expect("cells");
    std::fs::write(
        dir.join("items.jsonl"),
        serde_json::json!({"item_id": format!("q{evil}"), "question": format!("Why{evil}?"),
            "options": [format!("A. one{evil}"), "B. two"]})
        .to_string()
            + "\n",
    )
    .expect("items");
    let name = format!("fa-evil-{}", std::process::id());
    let t = Tmux::start(&name, &dir, "evil");
    let title = || {
        let out = tmux()
            .args(["display-message", "-p", "-t", &name, "#{pane_title}"])
            .output()
            .expect("display");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let s = t.wait_for("audit queue");
    assert!(
        s.contains("\\x1b]0;PWNED"),
        "escapes are shown as text:\n{s}"
    );
    t.keys(&["Enter"]);
    let s = t.wait_for("evidence pathways");
    assert!(s.contains("Why\\x1b"), "{s}");
    assert!(s.contains("B\\x1b]52"), "the wrong answer, escaped: {s}");
    assert!(s.contains("hostile\\x1b"), "the dataset name, escaped: {s}");
    // Nothing reached the terminal raw: the title is not PWNED, the screen was not cleared
    // under the app (its header is still on the first line), the clipboard not written.
    assert!(!title().contains("PWNED"), "title changed to {}", title());
    assert!(
        s.lines().next().unwrap_or("").starts_with("frameaudit"),
        "{s}"
    );
    let buffers = tmux().args(["show-buffer"]).output().expect("show-buffer");
    assert!(
        !String::from_utf8_lossy(&buffers.stdout).contains("pwned"),
        "OSC 52 set a tmux buffer"
    );
    // The plain-text report and list neither.
    for cmd in [vec!["report"], vec!["list"]] {
        let mut args = cmd.clone();
        let d = dir.display().to_string();
        args.push(&d);
        let o = common::frameaudit(&args);
        let out = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        assert!(!out.contains(&0x1b), "{cmd:?} wrote a raw ESC");
        assert!(
            !String::from_utf8_lossy(&out).contains('\u{202e}'),
            "{cmd:?} wrote a bidi override"
        );
    }
}

/// Waits until `f` holds or 10 s pass; whether it holds.
fn eventually(f: impl Fn() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

#[test]
fn an_audit_deleted_or_replaced_while_open_is_written_again_and_stays_locked() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let audit = ds.join("audits/gone.audit.jsonl");
    let name = format!("fa-gone-{}", std::process::id());
    let t = Tmux::start(&name, &ds, "gone");
    t.wait_for("audit queue");
    t.keys(&["Enter", "1", "Space"]);
    t.wait_for("done 1 ");
    t.wait_for("saved ✓");
    // Deleted: the saver notices, writes the whole state again, and says so.
    std::fs::remove_file(&audit).expect("rm");
    let s = t.wait_for("was deleted while open");
    assert!(s.contains("saved ✓"), "{s}");
    assert_eq!(audit_state(&audit).len(), 1);
    // A second instance is still kept out, though the file it would open is a new one.
    let second = frameaudit_in(&ds, "gone");
    assert!(second.contains("is open in another frameaudit"), "{second}");
    // Tagging goes on into the new file.
    t.keys(&["2", "Space"]);
    t.wait_for("done 2 ");
    assert!(eventually(|| audit_state(&audit).len() == 2));
    // Replaced by another file (an editor's save, a copy): that file is kept aside and
    // the audit written again at the path.
    std::fs::write(tmp.path().join("other"), "someone's notes\n").expect("write");
    std::fs::rename(tmp.path().join("other"), &audit).expect("mv");
    t.wait_for("was replaced while open");
    let aside = ds.join("audits/gone.audit.jsonl.displaced-1");
    assert_eq!(
        std::fs::read_to_string(&aside).expect("kept aside"),
        "someone's notes\n"
    );
    assert!(eventually(|| audit_state(&audit).len() == 2));
    t.keys(&["3", "Space"]);
    t.wait_for("done 3 ");
    assert!(eventually(|| audit_state(&audit).len() == 3));
    // Emptied in place (the same file, cut to nothing): noticed, though the path still
    // names the file, and written again whole; nothing is appended after a lost header.
    let before = std::fs::read(&audit).expect("read");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&audit)
        .and_then(|f| f.set_len(0))
        .expect("truncate");
    t.wait_for("was changed by another program");
    assert!(eventually(|| records_in(&audit) == 3));
    // Copied over in place with an older state: the same.
    t.keys(&["4", "Space"]);
    t.wait_for("done 4 ");
    assert!(eventually(|| records_in(&audit) == 4));
    std::fs::write(&audit, &before).expect("copy over");
    assert!(eventually(|| records_in(&audit) == 4));
    // The folder deleted, lock file and all: both made again, so a second instance is
    // still kept out.
    std::fs::remove_dir_all(ds.join("audits")).expect("rm -r");
    t.wait_for("was deleted while open");
    assert!(eventually(|| records_in(&audit) == 4));
    assert!(ds.join("audits/.gone.audit.jsonl.lock").exists());
    let second = frameaudit_in(&ds, "gone");
    assert!(second.contains("is open in another frameaudit"), "{second}");
}

/// The terminal closed (tmux's window killed: a hang-up) while a note is typed: the note
/// reaches the audit file, as the README promises of SIGHUP (pending changes saved).
#[test]
fn a_hang_up_while_a_note_is_typed_saves_the_note() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start(&format!("fa-hup-{}", std::process::id()), &ds, "hup");
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    t.wait_for("[1/");
    t.keys(&["n"]);
    t.wait_for("Enter saves · Esc cancels");
    t.text("typed but not entered");
    t.wait_for("typed but not entered");
    let out = tmux()
        .args(["kill-session", "-t", &t.name])
        .output()
        .expect("kill-session");
    assert!(out.status.success());
    let audit = ds.join("audits/hup.audit.jsonl");
    assert!(
        eventually(
            || std::fs::read_to_string(&audit).is_ok_and(|a| a.contains("typed but not entered"))
        ),
        "{:?}",
        std::fs::read_to_string(&audit)
    );
}

#[test]
fn a_folder_swapped_for_a_link_is_not_written_through_and_sigterm_says_what_was_lost() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let (t, status) = run_keeping_status(tmp.path(), &ds, "fa-swap", "swap");
    t.wait_for("audit queue");
    t.keys(&["Enter", "1", "Space"]);
    t.wait_for("done 1 ");
    t.wait_for("saved ✓");
    // The audits folder moved away and a link to a folder outside the dataset put in its
    // place: never written through.
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    std::fs::rename(ds.join("audits"), tmp.path().join("moved")).expect("mv");
    std::os::unix::fs::symlink(&outside, ds.join("audits")).expect("ln -s");
    t.keys(&["2", "Space"]);
    t.wait_for("NOT SAVED");
    assert_eq!(std::fs::read_dir(&outside).expect("ls").count(), 0);
    // SIGTERM leaves without asking: what was not saved is said, and the exit is not 0.
    assert_eq!(terminate(&t, &status), "exit=1", "{}", t.screen());
    // The whole pane, its history too, lines joined where they wrapped.
    let out = tmux()
        .args(["capture-pane", "-p", "-J", "-S", "-", "-t", &t.name])
        .output()
        .expect("capture-pane");
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains(" not saved to"), "{s}");
    assert!(s.contains("is a symbolic link"), "{s}");
    assert_eq!(std::fs::read_dir(&outside).expect("ls").count(), 0);
    // The first tag is where it was saved.
    assert_eq!(
        audit_state(&tmp.path().join("moved/swap.audit.jsonl")).len(),
        1
    );
}

/// What a second `frameaudit DS --annotator NAME` prints when it starts in a terminal of
/// its own (`script` gives it one); it is expected to refuse and end by itself.
fn frameaudit_in(ds: &Path, annotator: &str) -> String {
    frameaudit_pty(&[&ds.display().to_string(), "--annotator", annotator])
}

/// What `frameaudit ARGS` prints in a terminal of its own, when it ends by itself.
fn frameaudit_pty(args: &[&str]) -> String {
    let quoted: Vec<String> = args.iter().map(|a| common::tmux::shell_quote(a)).collect();
    let cmd = format!("{} {}", env!("CARGO_BIN_EXE_frameaudit"), quoted.join(" "));
    // script's typescript goes to a file of our own, never the machine's /dev/null.
    let typescript = tempfile::NamedTempFile::new().expect("typescript");
    let out = Command::new("timeout")
        .args(["20", "script", "-qec", &cmd])
        .arg(typescript.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn other_commands_never_write_over_an_open_audit_inputs_or_a_dataset_with_audits() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let audit = ds.join("audits/held.audit.jsonl");
    let t = Tmux::start(&format!("fa-held-{}", std::process::id()), &ds, "held");
    t.wait_for("audit queue");
    t.keys(&["Enter", "1", "Space"]);
    t.wait_for("done 1 ");
    t.wait_for("saved ✓");
    let before = std::fs::read(&audit).expect("audit");
    let d = ds.display().to_string();
    let a = audit.display().to_string();
    // Copied out of the dataset, the audit is still known by its header.
    let outside = tmp.path().join("copy.jsonl");
    std::fs::copy(&audit, &outside).expect("copy");
    let o = outside.display().to_string();
    let cells = ds.join("cells.jsonl").display().to_string();
    for (args, want) in [
        (
            vec!["report", &d, "--items-out", &a],
            "is inside the audits folder of the dataset",
        ),
        (
            vec!["report", &d, "--items-out", &a, "--force"],
            "is inside the audits folder of the dataset",
        ),
        (
            vec!["report", &d, "--items-out", &o, "--force"],
            "is an audit file",
        ),
        (
            vec!["report", &d, "--items-out", &cells],
            "is a file of the dataset",
        ),
        (
            vec!["audit", "merge", &a, "-o", &o, "--force"],
            "is an audit file",
        ),
        (vec!["audit", "merge", &a, "-o", &a], "is an input"),
        (
            vec!["plot", &d, "-o", &format!("{d}/audits")],
            "is inside the audits folder of the dataset",
        ),
    ] {
        let out = common::frameaudit(&args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = common::stderr(&out);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(&audit).expect("audit"), before);
    assert_eq!(
        std::fs::read(&outside).expect("copy"),
        before,
        "the copy is untouched"
    );
    // An import over the dataset, even with --force, is refused: it has audits.
    let csv = tmp.path().join("in.csv");
    let wide = common::repo().join("fixtures/formats/wide-csv");
    let gold = wide.join("videomme_gold.csv");
    let out = common::frameaudit(&[
        "import",
        "wide-csv",
        &wide.display().to_string(),
        "--gold",
        &gold.display().to_string(),
        "-o",
        &d,
        "--force",
    ]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("is a dataset with 1 audit file(s)"),
        "{}",
        common::stderr(&out)
    );
    // per-item-csv onto its own input.
    std::fs::write(
        &csv,
        "model,benchmark,item_id,config,frames,pred,gold\nm,b,i,8f,8,A,A\n",
    )
    .expect("csv");
    let c = csv.display().to_string();
    let out = common::frameaudit(&["import", "per-item-csv", &c, "-o", &c]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("is an input"),
        "{}",
        common::stderr(&out)
    );
    assert!(
        std::fs::read_to_string(&csv)
            .expect("csv")
            .starts_with("model,")
    );
    assert_eq!(std::fs::read(&audit).expect("audit"), before);
    assert!(t.alive());
}

#[test]
fn distinct_annotator_names_get_distinct_files_and_no_one_writes_anothers() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    for (i, who) in ["a/b", "a_b"].into_iter().enumerate() {
        let t = Tmux::start(&format!("fa-who{i}-{}", std::process::id()), &ds, who);
        t.wait_for("audit queue");
        t.keys(&["Enter", "1", "Space"]);
        t.wait_for("done 1 ");
        t.wait_for("saved ✓");
    }
    let mut files: Vec<String> = std::fs::read_dir(ds.join("audits"))
        .expect("audits")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".audit.jsonl"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files.contains(&"a_b.audit.jsonl".to_string()), "{files:?}");
    for f in &files {
        let r = read_audit(&ds.join("audits").join(f)).expect("audit");
        let want = if f == "a_b.audit.jsonl" { "a_b" } else { "a/b" };
        assert_eq!(r.header.annotator, want, "{f}");
    }
    // Another annotator's file, given with --audit, is refused and left as it was.
    let theirs = ds.join("audits/a_b.audit.jsonl");
    let before = std::fs::read(&theirs).expect("read");
    let out = frameaudit_pty(&[
        &ds.display().to_string(),
        "--annotator",
        "zed",
        "--audit",
        &theirs.display().to_string(),
    ]);
    assert!(
        out.contains("is the audit of \"a_b\", not of \"zed\""),
        "{out}"
    );
    assert_eq!(std::fs::read(&theirs).expect("read"), before);
}

/// The text of each box on the screen as one line: the pieces of the screen's lines
/// between `│` borders, joined down each column, so a message wrapped in a frame's
/// placeholder reads as it was written. The columns are joined with ` ¦ `.
fn unwrapped(screen: &str) -> String {
    let mut columns: std::collections::BTreeMap<usize, Vec<String>> = Default::default();
    for line in screen.lines() {
        let mut start = 0;
        let mut piece = String::new();
        for (col, c) in line.chars().enumerate() {
            if c == '│' {
                columns
                    .entry(start)
                    .or_default()
                    .push(piece.trim().to_string());
                piece.clear();
                start = col + 1;
            } else {
                piece.push(c);
            }
        }
        columns
            .entry(start)
            .or_default()
            .push(piece.trim().to_string());
    }
    columns
        .into_values()
        .map(|pieces| {
            pieces
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(" ¦ ")
}

/// A copy of the demo whose every video is a raw video whose decodes hang: ffmpeg and
/// ffprobe that write their process id to `<tmp>/runs` and sleep. Returns the dataset
/// and the shell prelude that puts those programs first on `PATH` with the time limit
/// `limit` seconds.
#[cfg(unix)]
fn hung_videos(tmp: &Path, limit: u32) -> (PathBuf, String) {
    let ds = demo_copy(tmp);
    std::fs::create_dir_all(ds.join("videos")).expect("mkdir");
    for i in 1..=20 {
        std::fs::write(ds.join(format!("videos/clip{i:02}.mp4")), b"hangs").expect("video");
    }
    let prelude = hanging_tools(tmp, limit, &["ffmpeg", "ffprobe"], None);
    (ds, prelude)
}

/// Programs `names` in `<tmp>/tools` that write their process id to `<tmp>/runs` and
/// sleep, and `ffprobe` there running `real_ffprobe` when given; the shell prelude that
/// puts them first on `PATH` with the time limit `limit` seconds.
#[cfg(unix)]
fn hanging_tools(tmp: &Path, limit: u32, names: &[&str], real_ffprobe: Option<&str>) -> String {
    use std::os::unix::fs::PermissionsExt;
    let tools = tmp.join("tools");
    std::fs::create_dir_all(&tools).expect("mkdir");
    let runs = tmp.join("runs");
    let hang = format!(
        "#!/bin/sh\necho $$ >> {}\nexec sleep 600\n",
        common::tmux::shell_quote(&runs.display().to_string())
    );
    let real = real_ffprobe.map(|p| ("ffprobe", format!("#!/bin/sh\nexec {p} \"$@\"\n")));
    let scripts = names.iter().map(|n| (*n, hang.clone())).chain(real);
    for (name, script) in scripts {
        let p = tools.join(name);
        std::fs::write(&p, script).expect("write");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    format!(
        "export PATH={}:\"$PATH\" FRAMEAUDIT_FFMPEG_TIMEOUT={limit};",
        common::tmux::shell_quote(&tools.display().to_string())
    )
}

/// Raw videos whose decodes hang: the placeholders say the decode timed out, and frames
/// asked for afterwards say it is not tried again.
#[cfg(unix)]
#[test]
fn a_hung_video_says_why_in_its_placeholders() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, prelude) = hung_videos(tmp.path(), 2);
    let t = Tmux::start_with(
        &format!("fa-hung-{}", std::process::id()),
        &ds,
        "hung",
        &prelude,
    );
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    t.wait_for("frames of video");
    let wait_for = |text: &str| {
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            let s = unwrapped(&t.screen());
            if s.contains(text) {
                return s;
            }
            assert!(
                Instant::now() < end,
                "no {text:?} on screen:\n{}",
                t.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for("timed out after 2 s");
    // A frame not asked for yet: answered at once, saying why.
    t.keys(&["Right", "Right", "Right"]);
    wait_for("earlier in this session; not tried again");
    // Quit, so that no decode is left running (see the next test).
    t.keys(&["q", "q"]);
    t.wait_exit(Duration::from_secs(20));
}

/// A frame cache limit, and a matrix cache limit, that is not a size is said on the status
/// line when the screens open (the default is used).
#[test]
fn a_cache_limit_that_is_not_a_size_is_said_on_screen() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start_with(
        &format!("fa-cache-limit-{}", std::process::id()),
        &ds,
        "limit",
        "export FRAMEAUDIT_FRAME_CACHE=4X FRAMEAUDIT_CACHE_LIMIT=lots;",
    );
    t.wait_for("audit queue");
    t.wait_for("FRAMEAUDIT_FRAME_CACHE=\"4X\": the unit is not one of k, M, G, T");
    // Both do not fit the status line: it says where they are in full, the help.
    t.wait_for("(?: in full)");
    in_full_in_the_help_then_quit(&t, "FRAMEAUDIT_CACHE_LIMIT=\"lots\"");
}

/// From the queue: the help's messages hold `text` in full; then back and quit.
fn in_full_in_the_help_then_quit(t: &Tmux, text: &str) {
    t.keys(&["?"]);
    t.wait_for("Messages, in full");
    t.wait_for(text);
    t.keys(&["q"]);
    t.wait_for("audit queue");
    t.keys(&["q"]);
    t.wait_exit(Duration::from_secs(20));
}

/// A matrix cache that cannot be written (its folder is a file) is said on the status line,
/// in full in the help, and the screens work on.
#[test]
fn a_cache_that_cannot_be_saved_is_said_on_screen() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    // A file written a moment ago is not cached (it may change again unseen): the copy
    // must settle for two seconds.
    std::thread::sleep(Duration::from_millis(2100));
    let not_a_dir = tmp.path().join("a-file");
    std::fs::write(&not_a_dir, "").expect("write");
    let t = Tmux::start_with(
        &format!("fa-cache-unsaved-{}", std::process::id()),
        &ds,
        "unsaved",
        &format!(
            "export FRAMEAUDIT_CACHE_MIN_BYTES=0 FRAMEAUDIT_CACHE_DIR='{}';",
            not_a_dir.display()
        ),
    );
    t.wait_for("audit queue");
    t.wait_for("the matrix cache could not be saved");
    in_full_in_the_help_then_quit(&t, "the next start reads the cells again");
    assert_eq!(std::fs::read(&not_a_dir).expect("read"), b"");
}

/// Quitting while decodes hang kills them: none outlives frameaudit.
#[cfg(unix)]
#[test]
fn quitting_kills_the_decodes_under_way() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let (ds, prelude) = hung_videos(tmp.path(), 300);
    let t = Tmux::start_with(
        &format!("fa-hungquit-{}", std::process::id()),
        &ds,
        "hungquit",
        &prelude,
    );
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    t.wait_for("frames of video");
    wait_for_runs(&t, tmp.path(), 1);
    quit_and_check_no_run_outlives(&t, tmp.path());
}

/// Quitting while the full-size frame asked for (`f`) is being decoded, by a worker of its
/// own, kills that decode too. The videos are real and probed by the real ffprobe; only
/// ffmpeg hangs.
#[cfg(unix)]
#[test]
fn quitting_kills_a_full_size_frame_s_decode() {
    if !tmux_available() || !common::runs("ffmpeg", &["-version"]) {
        common::skip_note(format_args!("tmux or ffmpeg is absent; skipping"));
        return;
    }
    let Some(ffprobe) = common::which("ffprobe") else {
        common::skip_note(format_args!("ffprobe is absent; skipping"));
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    std::fs::create_dir_all(ds.join("videos")).expect("mkdir");
    for i in 1..=20 {
        let made = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg("testsrc=size=32x32:rate=1:duration=64")
            .args(["-c:v", "mpeg4", "-pix_fmt", "yuv420p"])
            .arg(ds.join(format!("videos/clip{i:02}.mp4")))
            .status()
            .expect("run ffmpeg");
        assert!(made.success(), "ffmpeg could not make clip {i}");
    }
    let shown = ffprobe.display().to_string();
    let prelude = hanging_tools(tmp.path(), 300, &["ffmpeg"], Some(&shown));
    let t = Tmux::start_with(
        &format!("fa-fullquit-{}", std::process::id()),
        &ds,
        "fullquit",
        &prelude,
    );
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    t.wait_for("frames of video");
    let before = wait_for_runs(&t, tmp.path(), 1);
    t.keys(&["f"]);
    t.wait_for("at full size");
    wait_for_runs(&t, tmp.path(), before + 1);
    quit_and_check_no_run_outlives(&t, tmp.path());
}

/// The process ids the hanging programs of [`hanging_tools`] wrote.
#[cfg(unix)]
fn runs_started(tmp: &Path) -> Vec<i32> {
    std::fs::read_to_string(tmp.join("runs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Waits until at least `n` hanging runs have started; how many have.
#[cfg(unix)]
fn wait_for_runs(t: &Tmux, tmp: &Path, n: usize) -> usize {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let started = runs_started(tmp).len();
        if started >= n {
            return started;
        }
        assert!(
            Instant::now() < end,
            "{started} of {n} decodes started:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Quits frameaudit and checks that every hanging run it started is gone (killed, not
/// left to sleep on); kills those left before failing.
#[cfg(unix)]
fn quit_and_check_no_run_outlives(t: &Tmux, tmp: &Path) {
    t.keys(&["q", "q"]);
    assert!(
        t.wait_exit(Duration::from_secs(20)),
        "frameaudit did not quit:\n{}",
        t.screen()
    );
    let alive = |pid: &i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    };
    let end = Instant::now() + Duration::from_secs(20);
    while runs_started(tmp).iter().any(alive) {
        if Instant::now() > end {
            let left: Vec<i32> = runs_started(tmp).into_iter().filter(|p| alive(p)).collect();
            for p in &left {
                let _ = Command::new("kill")
                    .args(["-KILL", &p.to_string()])
                    .status();
            }
            panic!("decodes outlived frameaudit: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Resizes the tmux window of `t` to `w`x`h`.
fn resize(t: &Tmux, w: u16, h: u16) {
    let out = tmux()
        .args([
            "resize-window",
            "-t",
            &t.name,
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
        ])
        .output()
        .expect("resize");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn at_80x24_the_frames_are_shown_e_marks_the_one_shown_and_help_scrolls() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    std::os::unix::fs::symlink(
        common::repo().join("fixtures/demo/frames"),
        ds.join("frames"),
    )
    .expect("link frames");
    let t = Tmux::start(&format!("fa-small-{}", std::process::id()), &ds, "small");
    t.wait_for("audit queue");
    resize(&t, 80, 24);
    // As a user would, Enter once the queue is drawn at the new size (its compact title).
    t.wait_for("●42 ·0 ○24 –13");
    t.keys(&["Enter"]);
    // The compact frames: the audited pair's timeline, its counts, the frame under the cursor.
    t.wait_for("frames not kept");
    t.keys(&["Right", "Right"]);
    let s = t.wait_for(" 3/");
    let index: u64 = s
        .split(" frame ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no frame under the cursor on screen:\n{s}"));
    for line in s.lines() {
        assert!(
            unicode_width::UnicodeWidthStr::width(line) <= 80,
            "a line wider than the terminal: {line}"
        );
    }
    let footer = s.lines().last().unwrap_or("").trim_end();
    assert!(footer.ends_with("? more"), "footer: {footer:?}\n{s}");
    t.keys(&["e"]);
    // At 80 columns the caption marks it by the star alone.
    t.wait_for("★ · ");
    t.wait_for("saved ✓");
    let replay = read_audit(&ds.join("audits/small.audit.jsonl")).expect("audit file");
    let rec = replay.records.values().next().expect("record");
    assert_eq!(
        rec.evidence_frames,
        [index],
        "the frame shown was {index}\n{s}"
    );
    // The help scrolls to its end, and any other key closes it.
    t.keys(&["?"]);
    t.wait_for("↓ more");
    t.keys(&["End"]);
    // Its last lines: the line editor's keys.
    t.wait_for("delete to the start, to the end");
    t.keys(&["x"]);
    t.wait_for("frames not kept");
}

#[test]
fn under_no_color_frames_are_text_and_say_how_to_get_pictures() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    std::os::unix::fs::symlink(
        common::repo().join("fixtures/demo/frames"),
        ds.join("frames"),
    )
    .expect("link frames");
    let t = Tmux::start_with(
        &format!("fa-nocolor-{}", std::process::id()),
        &ds,
        "nocolor",
        "export NO_COLOR=1;",
    );
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    let s = t.wait_for("NO_COLOR: no pictures");
    assert!(
        !s.contains('▀') && !s.contains('▄'),
        "half blocks drawn:\n{s}"
    );
    assert!(s.contains("▸"), "the audited rows are not marked:\n{s}");
}
/// frameaudit on a copy of the demo as `annotator`, under a shell that writes its exit
/// status to the returned file (tmux 3.3 does not always reap a pane's process that ends on
/// a signal it handled, leaving `pane_dead_status` empty); the pane stays once it ends.
fn run_keeping_status(tmp: &Path, ds: &Path, name: &str, annotator: &str) -> (Tmux, PathBuf) {
    let status = tmp.join("status");
    let args = [
        ds.display().to_string(),
        "--annotator".into(),
        annotator.into(),
    ];
    let t = Tmux::run_recording_exit(&format!("{name}-{}", std::process::id()), &args, &status);
    remain_on_exit(&t);
    (t, status)
}

/// Sends SIGTERM to the frameaudit of [`run_keeping_status`] and waits for its pane to end;
/// the exit status it recorded.
fn terminate(t: &Tmux, status: &Path) -> String {
    let pid = t.child_pid().expect("frameaudit under the shell");
    let out = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .output()
        .expect("kill");
    assert!(out.status.success());
    assert!(eventually(|| pane_format(t, "#{pane_dead}") == "1"));
    std::fs::read_to_string(status)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A tmux format of `t`'s pane: `#{alternate_on}`, `#{mouse_any_flag}`, `#{pane_dead}`...
fn pane_format(t: &Tmux, format: &str) -> String {
    let out = tmux()
        .args(["display-message", "-p", "-t", &t.name, format])
        .output()
        .expect("display-message");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Keeps `t`'s pane after its program exits, so that how it left the terminal can be read.
fn remain_on_exit(t: &Tmux) {
    let out = tmux()
        .args(["set-option", "-t", &t.name, "remain-on-exit", "on"])
        .output()
        .expect("set-option");
    assert!(out.status.success());
}

/// A pane's mouse modes and screen: "1 1 1" while the TUI has mouse reports on (in SGR
/// form) and the alternate screen, "0 0 0" once the terminal is given back.
const TERMINAL_STATE: &str = "#{mouse_any_flag} #{mouse_sgr_flag} #{alternate_on}";

#[test]
fn the_model_picker_filters_and_the_note_editor_edits_at_its_cursor() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start(&format!("fa-edit-{}", std::process::id()), &ds, "edit");
    remain_on_exit(&t);
    t.wait_for("audit queue: 79 of 79");
    assert_eq!(pane_format(&t, TERMINAL_STATE), "1 1 1", "mouse reports on");
    // The model picker: M, type to narrow, Enter.
    t.keys(&["M"]);
    t.wait_for("filter by model");
    t.text("orb");
    let s = t.wait_for("> orb");
    let row = s
        .lines()
        .find(|l| l.contains("▶ orbit-2b"))
        .unwrap_or_else(|| panic!("orbit-2b not under the cursor:\n{s}"));
    let count: usize = row
        .split('│')
        .nth(1)
        .and_then(|cell| cell.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {row:?}"));
    t.keys(&["Enter"]);
    let s = t.wait_for("model=orbit-2b");
    assert!(s.contains(&format!("audit queue: {count} of 79")), "{s}");
    // An item, and its note: type, move left, insert, words left, C-w, insert, Enter.
    t.keys(&["Enter"]);
    let s = t.wait_for("evidence pathways");
    let title = item_title(&s);
    assert!(title.starts_with("orbit-2b · "), "{title}");
    t.keys(&["n"]);
    t.text("red square fades 00:25");
    t.keys(&["Left", "Left", "Left", "Left", "Left"]);
    t.text("at ");
    t.keys(&["C-Left", "C-Left", "C-w"]);
    t.text("dot ");
    t.wait_for("note: red dot fades at 00:25");
    t.keys(&["Enter"]);
    let file = ds.join("audits/edit.audit.jsonl");
    let id = title.rsplit(" · ").next().expect("id").to_string();
    let note = || {
        read_audit(&file).ok().and_then(|r| {
            r.records
                .values()
                .find(|r| r.key.item_id == id && r.key.model == "orbit-2b")
                .map(|r| r.note.clone())
        })
    };
    assert!(
        eventually(|| note().as_deref() == Some("red dot fades at 00:25")),
        "{:?}",
        note()
    );
    // Quitting gives the terminal back: no mouse reports, the normal screen.
    t.keys(&["q", "q"]);
    assert!(eventually(|| pane_format(&t, "#{pane_dead}") == "1"));
    assert_eq!(pane_format(&t, TERMINAL_STATE), "0 0 0");
}

#[test]
fn sigterm_saves_and_gives_the_terminal_back_and_no_mouse_leaves_it_alone() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let (t, status) = run_keeping_status(tmp.path(), &ds, "fa-term", "term");
    t.wait_for("audit queue");
    t.keys(&["Enter", "3"]);
    t.wait_for("[x] Distractor");
    assert_eq!(pane_format(&t, TERMINAL_STATE), "1 1 1");
    assert_eq!(terminate(&t, &status), "exit=0", "a clean exit");
    assert_eq!(pane_format(&t, TERMINAL_STATE), "0 0 0");
    let replay = read_audit(&ds.join("audits/term.audit.jsonl")).expect("audit file");
    let rec = replay.records.values().next().expect("the tag was saved");
    assert_eq!(rec.pathways, ["distractor_added"]);
    drop(t);

    // --no-mouse: no mouse reports at all.
    let args = [
        ds.display().to_string(),
        "--annotator".into(),
        "term".into(),
        "--no-mouse".into(),
    ];
    let t = Tmux::run(&format!("fa-nomouse-{}", std::process::id()), &args, "");
    // It resumes on the item tagged before.
    t.wait_for("[x] Distractor");
    assert_eq!(pane_format(&t, TERMINAL_STATE), "0 0 1");
}

/// The terminal regressions `frameaudit list` gives for a dataset, one JSON row each.
fn terminal_rows(ds: &std::path::Path) -> Vec<serde_json::Value> {
    let listed = common::frameaudit(&[
        "list",
        &ds.display().to_string(),
        "--kind",
        "terminal",
        "--format",
        "jsonl",
    ]);
    assert!(listed.status.success(), "{}", common::stderr(&listed));
    common::stdout(&listed)
        .lines()
        .map(|l| serde_json::from_str(l).expect("row"))
        .collect()
}

/// A dataset with intervention runs (docs/measures.md §11) for every terminal regression,
/// right for the first of each model and wrong for the others: the first item of the queue
/// (a terminal regression) shows its run after the trajectory, and the overview the
/// recovery per model.
#[test]
fn intervention_runs_show_in_a_real_terminal() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let listed = terminal_rows(&ds);
    let items: std::collections::HashMap<String, String> =
        std::fs::read_to_string(ds.join("items.jsonl"))
            .expect("items")
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("json");
                (
                    v["item_id"].as_str().expect("id").to_string(),
                    v["gold"].as_str().expect("gold").to_string(),
                )
            })
            .collect();
    let mut seen = std::collections::HashSet::new();
    let mut per_model: std::collections::HashMap<String, usize> = Default::default();
    let mut extra = String::new();
    for row in &listed {
        // Recovery is of multiple-choice items.
        if row["task"] != "mcq" {
            continue;
        }
        let (model, item) = (
            row["model"].as_str().expect("m"),
            row["item_id"].as_str().expect("i"),
        );
        let gold = &items[item];
        let right = seen.insert(model.to_string());
        *per_model.entry(model.to_string()).or_default() += 1;
        let cell = serde_json::json!({"model": model, "benchmark": row["benchmark"],
            "item_id": item, "config": "64f", "frames": 64, "task": "mcq",
            "pred": if right { gold.as_str() } else { "Z" }, "gold": gold,
            "protocol": "intervention"});
        extra.push_str(&format!("{cell}\n"));
    }
    assert!(seen.len() >= 2, "{seen:?}");
    let mut cells = std::fs::read_to_string(ds.join("cells.jsonl")).expect("cells");
    cells.push_str(&extra);
    std::fs::write(ds.join("cells.jsonl"), cells).expect("write");

    let t = Tmux::start(
        &format!("fa-intervention-{}", std::process::id()),
        &ds,
        "iv",
    );
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    let s = t.wait_for("↻ intervention run");
    assert!(s.lines().any(|l| l.contains("↻64f")), "{s}");
    t.keys(&["q", "O"]);
    let s = t.wait_for("recov");
    assert!(s.contains("trajectory classes"), "{s}");
    // One recovered of each model's terminal regressions.
    let want = format!("{:.1}", 100.0 / per_model["lumen-7b"] as f64);
    let row = s
        .lines()
        .find(|l| l.contains("lumen-7b") && l.contains('+'))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(row.trim_end().ends_with(&want), "{row} / {want}");
}

/// The planned frames and "add to plan" in a real terminal: a `swap` run for every
/// terminal regression, read from `interventions/`, shows on the first item's timeline
/// against 64f's frames, and `I` writes the item's transition to the annotator's plan.
#[test]
fn planned_frames_and_add_to_plan_in_a_real_terminal() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let listed = terminal_rows(&ds);
    let eight = frameaudit::core::sampling::linspace(64, 8);
    let mut runs = String::new();
    for row in &listed {
        if row["task"] != "mcq" {
            continue;
        }
        let cell = serde_json::json!({"model": row["model"], "benchmark": row["benchmark"],
            "item_id": row["item_id"], "config": "64f@8f", "frames": 8, "task": "mcq",
            "pred": "A", "gold": "A", "frame_idx": eight, "protocol": "intervention:swap"});
        runs.push_str(&format!("{cell}\n"));
    }
    std::fs::create_dir_all(ds.join("interventions")).expect("mkdir");
    std::fs::write(ds.join("interventions/intervention-swap.jsonl"), runs).expect("write");

    let t = Tmux::start(&format!("fa-planned-{}", std::process::id()), &ds, "iv");
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    let s = t.wait_for("↻ vs 64f");
    let row = s
        .lines()
        .find(|l| l.contains("↻swap "))
        .unwrap_or_else(|| panic!("no planned frames row:\n{s}"));
    assert!(row.contains("  8 recorded"), "{row}");
    assert!(s.contains("swap ◆0 ×56"), "{s}");
    t.keys(&["I"]);
    t.wait_until("the plan's notice", |s| {
        s.contains("planned ") && (s.contains(" transition in ") || s.contains(" transitions in "))
    });
    let plan = common::read_json(&ds.join("audits/iv.plan.json"));
    assert_eq!(plan["schema"], "frameaudit/plan@1");
    assert!(
        !plan["entries"].as_array().expect("entries").is_empty(),
        "{plan:#}"
    );
}

/// Pastes `text` into the pane as a terminal pastes it: bracketed when the program asked
/// for bracketed paste (tmux's `paste-buffer -p`).
fn paste(t: &Tmux, text: &str) {
    let buffer = format!("{}-paste", t.name);
    let set = tmux()
        .args(["set-buffer", "-b", &buffer, "--", text])
        .output()
        .expect("set-buffer");
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let out = tmux()
        .args(["paste-buffer", "-p", "-d", "-b", &buffer, "-t", &t.name])
        .output()
        .expect("paste-buffer");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::thread::sleep(Duration::from_millis(200));
}

#[test]
fn a_paste_is_never_taken_as_tagging_commands() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start(&format!("fa-paste-{}", std::process::id()), &ds, "paster");
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    let first = item_title(&t.wait_for("evidence pathways"));
    t.keys(&["n"]);
    // As the issue reproduced it: a newline, then what would be pathways 3 and 4 and
    // "done" if they were keys; and a long paste of many lines.
    paste(&t, "see frame 12\n3 4 ");
    let long: String = (0..400).map(|i| format!("line {i} 1 2 \n")).collect();
    paste(&t, &long);
    t.keys(&["Enter"]);
    let s = t.wait_for("saved ✓");
    assert_eq!(item_title(&s), first, "still on the first item:\n{s}");
    assert!(s.contains("done 0 "), "nothing marked done:\n{s}");
    // On the queue a paste is ignored, and said so.
    t.keys(&["q"]);
    t.wait_for("audit queue");
    paste(&t, "jjj\n  q");
    t.wait_for("paste ignored");
    t.keys(&["q"]);
    assert!(
        t.wait_exit(Duration::from_secs(10)),
        "frameaudit did not quit"
    );
    let replay = read_audit(&ds.join("audits/paster.audit.jsonl")).expect("audit");
    assert_eq!(replay.records.len(), 1, "one record, the note's");
    let r = replay.records.values().next().expect("record");
    assert_eq!(r.status, Status::Todo);
    assert!(r.pathways.is_empty(), "{:?}", r.pathways);
    assert!(
        r.note.starts_with("see frame 12 3 4 line 0 1 2 "),
        "{}",
        r.note
    );
    // The long paste was cut to what one paste puts into an editor.
    assert_eq!(
        r.note.chars().count(),
        "see frame 12 3 4 ".len() + frameaudit::tui::app::PASTE_MAX
    );
}

/// The demo's queue in a real terminal says which harm survives the replicates: stable (●)
/// and lottery (○) rows and their counts in the title, at 120x40, at 80x24 and under
/// NO_COLOR (where the shapes alone tell them apart); `S` sorts stable first, `L` hides
/// the lottery rows.
#[test]
fn the_queue_shows_stable_and_lottery_rows_in_a_real_terminal() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    for (tag, prelude) in [("colour", ""), ("nocolor", "export NO_COLOR=1;")] {
        let t = Tmux::start_with(
            &format!("fa-harm-{tag}-{}", std::process::id()),
            &ds,
            &format!("harm-{tag}"),
            prelude,
        );
        let row = |s: &str, glyph: char| {
            s.lines()
                .any(|l| l.contains("clips-mcq") && l.contains(&format!(" {glyph} ")))
        };
        // Each wait names everything read of the screen after it: the title can be drawn
        // before the rows under it.
        t.wait_until("the counts and both kinds of row", |s| {
            s.contains(" stable ") && s.contains(" lottery ") && row(s, '●') && row(s, '○')
        });
        resize(&t, 80, 24);
        t.wait_until("a stable row at 80x24", |s| {
            s.contains("sort: rank") && row(s, '●')
        });
        t.keys(&["S"]);
        t.wait_until("a stable row first", |s| {
            s.contains("stable first")
                && (s.lines().find(|l| l.contains("clips-mcq"))).is_some_and(|l| l.contains(" ● "))
        });
        t.keys(&["L"]);
        t.wait_until("no lottery row", |s| {
            s.contains("lottery hidden") && row(s, '●') && !row(s, '○')
        });
        resize(&t, 120, 40);
        t.keys(&["q"]);
    }
}

/// Whether every ✓ / ✗ of `line` after its first `skip` characters sits right after a
/// label (a configuration's name), not after a space.
fn glyphs_labelled(line: &str, skip: usize) -> bool {
    let chars: Vec<char> = line.chars().collect();
    (skip.max(1)..chars.len())
        .filter(|&c| chars[c] == '✓' || chars[c] == '✗')
        .all(|c| !chars[c - 1].is_whitespace())
}

#[test]
fn lmms_eval_models_of_different_grids_label_their_own_glyphs_in_a_real_terminal() {
    let Some(shared) = common::shared_harness_runs() else {
        return;
    };
    if !tmux_available() {
        return;
    }
    // InternVL at 16f/32f/64f, LLaVA at 8f/16f/32f, Qwen with textonly and 16f_151k…:
    // no row's glyphs may read under another model's names.
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = tmp.path().join("ds");
    let runs = shared.join("lmms-eval-0.7.3");
    let o = common::frameaudit(&[
        "import",
        "lmms-eval",
        runs.to_str().expect("utf-8 path"),
        "-o",
        ds.to_str().expect("utf-8 path"),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let t = Tmux::start(&format!("fa-grids-{}", std::process::id()), &ds, "grids");
    // Queue rows: the selection marker, then the status glyph.
    let rows_of = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("▶·") || l.starts_with(" ·"))
            .map(str::to_string)
            .collect()
    };
    for (w, h) in [(120, 40), (80, 24)] {
        resize(&t, w, h);
        // The screen is drawn in parts: the six rows and the key line below them (drawn
        // after them) are all there before any is read.
        let s = t.wait_until("the queue's six rows and its key line", |s| {
            s.contains("sort: rank")
                && rows_of(s).len() == 6
                && s.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .is_some_and(|l| l.contains("help"))
        });
        let header = s.lines().find(|l| l.starts_with("st ")).expect("header");
        assert!(!header.contains("16f"), "{w}x{h}: {s}");
        let rows = rows_of(&s);
        for row in &rows {
            assert!(glyphs_labelled(row, 2), "{w}x{h}: `{row}` in\n{s}");
        }
        assert!(
            rows.iter().any(|r| r.contains("8f✓") || r.contains("8f✗")),
            "{w}x{h}: LLaVA's 8f labelled: {s}"
        );
    }
    resize(&t, 120, 40);
    t.keys(&["Enter"]);
    let s = t.wait_for("other models");
    let others: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.starts_with(" other models"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(others.len(), 3, "three other models: {s}");
    for l in &others {
        let left: String = l.chars().take(68).collect();
        assert!(glyphs_labelled(&left, 17), "`{l}` in\n{s}");
    }
    t.keys(&["q", "q"]);
}

/// The terminal is asked what it draws after the first screen. tmux takes an APC string
/// (the kitty graphics query) sent to it for the pane's title, which then read
/// `Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA` even after frameaudit quit: inside tmux nothing of
/// the query may reach tmux as a title.
#[test]
fn the_terminal_query_leaves_the_tmux_pane_title_alone() {
    if !tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let t = Tmux::start_with(
        &format!("fa-title-{}", std::process::id()),
        &ds,
        "title",
        "unset NO_COLOR; printf '\\033]2;before\\033\\\\';",
    );
    t.wait_for("audit queue");
    t.keys(&["Enter"]);
    t.wait_for("evidence pathways");
    let title = || {
        let out = tmux()
            .args(["display-message", "-p", "-t", &t.name, "#{pane_title}"])
            .output()
            .expect("tmux display-message");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    // The answers have come, or the query has timed out, well within this.
    std::thread::sleep(Duration::from_millis(2500));
    let after = title();
    assert_eq!(after, "before", "the pane's title became {after:?}");
}

/// A dataset shared read-only (prepared by someone else): the screens cannot keep the
/// audit in its `audits/` folder, made or found read-only, and the error says what to do
/// instead, with the audit's own file name. Run as another user (`nobody`) when the tests
/// run as root, whom no permission stops.
#[test]
fn a_read_only_dataset_says_to_keep_the_audit_elsewhere() {
    use std::os::unix::fs::PermissionsExt;
    if !tmux_available() {
        return;
    }
    let root = rustix::process::getuid().is_root();
    if root && Command::new("setpriv").arg("--version").output().is_err() {
        println!("skipped: running as root without setpriv to drop to another user");
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).expect("home");
    for (p, mode) in [(tmp.path(), 0o755), (&home, 0o777), (&ds, 0o555)] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let as_user = |args: &[&str]| {
        let quoted: Vec<String> = args.iter().map(|a| common::tmux::shell_quote(a)).collect();
        let bin = env!("CARGO_BIN_EXE_frameaudit");
        let drop = if root {
            "setpriv --reuid=65534 --regid=65534 --clear-groups"
        } else {
            ""
        };
        let cmd = format!(
            "{drop} env HOME={} {bin} {}",
            common::tmux::shell_quote(&home.display().to_string()),
            quoted.join(" ")
        );
        let typescript = tempfile::NamedTempFile::new().expect("typescript");
        let out = Command::new("timeout")
            .args(["20", "script", "-qec", &cmd])
            .arg(typescript.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("script");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ds_arg = ds.display().to_string();
    let said = as_user(&[&ds_arg, "--annotator", "ro"]);
    assert!(
        said.contains("not yours to write") && said.contains("--audit ~/ro.audit.jsonl"),
        "{said}"
    );
    assert!(!ds.join("audits").exists());
    // An audits folder there, but not the user's to write: its lock file cannot be made.
    std::fs::set_permissions(&ds, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::create_dir(ds.join("audits")).expect("audits");
    std::fs::set_permissions(ds.join("audits"), std::fs::Permissions::from_mode(0o555))
        .expect("chmod");
    let said = as_user(&[&ds_arg, "--annotator", "ro"]);
    assert!(
        said.contains("lock file") && said.contains("--audit ~/ro.audit.jsonl"),
        "{said}"
    );
}

/// A terminal that answers the query late (tmux busy, a slow link: here 2.5 s, past the
/// time for answers) on a pseudo-terminal (tests/pty/late_answers.py). The screens read the
/// answer on, so its text never reaches them as keys: crossterm took `ESC P >|slowterm 1.0`
/// for Alt-P, `>`, `|`, `s`, `l`, … and the audit file gained a skip, an evidence frame, a
/// done and a pathway nobody gave. Enter is typed before the answer, `q q` after it.
#[test]
fn a_late_answer_of_the_terminal_is_never_typed_into_the_screens() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ds = demo_copy(tmp.path());
    let err = tmp.path().join("stderr.txt");
    let o = Command::new("python3")
        .arg(common::repo().join("tests/pty/late_answers.py"))
        .args(["2.5"])
        .arg(&err)
        .args(["--before", "\r", "--after", "qq"])
        .arg(env!("CARGO_BIN_EXE_frameaudit"))
        .arg(&ds)
        .args(["--annotator", "late"])
        .output();
    let Ok(o) = o else {
        common::skip_note(format_args!(
            "python3 is absent; skipping the late-answer check"
        ));
        return;
    };
    assert!(o.status.success(), "{}", common::stderr(&o));
    let got: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the driver's JSON");
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert_eq!(got["asked"], true, "the terminal was asked: {got}");
    assert_eq!(got["status"], 0, "{got}\n{stderr}");
    let text = std::fs::read_to_string(ds.join("audits/late.audit.jsonl")).expect("audit file");
    let ops: Vec<String> = text
        .lines()
        .skip(1)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            format!("{} {}", v["op"], v["item_id"])
        })
        .collect();
    // Enter opened the first item (a visit); nothing else was done to it or any other.
    assert_eq!(ops, ["\"visit\" \"clip04-q1\""], "{text}");
}
