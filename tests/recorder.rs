//! The Python frame recorder (assets/python/frameaudit_record), run as a user runs it:
//! `python3 -m frameaudit_record --log FILE -- COMMAND`, in front of stand-in harness
//! scripts that read a small generated video. Skips, with a note, where python3, decord
//! or ffmpeg is absent (CI has them); the PyAV and torchcodec cases skip without those.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{repo, runs};
use serde_json::{Value, json};

fn python_has(module: &str) -> bool {
    runs("python3", &["-c", &format!("import {module}")])
}

/// A temporary folder with the test video, or None (and a note) when a tool is missing.
struct Setup {
    _dir: tempfile::TempDir,
    /// The folder, canonical: what the harness's os.getcwd() and os.path.abspath see.
    root: PathBuf,
}

impl Setup {
    fn new(test: &str, modules: &[&str]) -> Option<Setup> {
        if !runs("python3", &["--version"]) {
            common::skip_note(format_args!("python3 is absent; skipping {test}"));
            return None;
        }
        if !runs("ffmpeg", &["-version"]) {
            common::skip_note(format_args!("ffmpeg is absent; skipping {test}"));
            return None;
        }
        for m in modules {
            if !python_has(m) {
                common::skip_note(format_args!(
                    "the Python module {m} is absent; skipping {test}"
                ));
                return None;
            }
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonicalize");
        // 3 s of testsrc at 10 fps: 30 frames, key frames at 0, 10, 20.
        let made = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg("testsrc=duration=3:size=64x48:rate=10")
            .args(["-pix_fmt", "yuv420p", "-g", "10"])
            .arg(root.join("v.mp4"))
            .status()
            .expect("run ffmpeg");
        assert!(made.success(), "ffmpeg could not make the test video");
        Some(Setup { _dir: dir, root })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    fn video(&self) -> String {
        self.path("v.mp4").display().to_string()
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, text).expect("write");
        p
    }

    /// `python3 -m frameaudit_record --log LOG -- COMMAND` in the folder, with
    /// `pythonpath` after the recorder's own entry. Returns the output and the
    /// recorder's pid.
    fn record(&self, log: &Path, command: &[&str], pythonpath: &[&Path]) -> (Output, u32) {
        self.record_with(log, &[], command, pythonpath)
    }

    /// [`Setup::record`] with recorder options before `--` (`--plan`...).
    fn record_with(
        &self,
        log: &Path,
        options: &[&str],
        command: &[&str],
        pythonpath: &[&Path],
    ) -> (Output, u32) {
        let mut entries = vec![repo().join("assets/python")];
        entries.extend(pythonpath.iter().map(|p| p.to_path_buf()));
        let child = Command::new("python3")
            .args(["-m", "frameaudit_record", "--log"])
            .arg(log)
            .args(options)
            .arg("--")
            .args(command)
            .current_dir(&self.root)
            .env(
                "PYTHONPATH",
                std::env::join_paths(entries).expect("PYTHONPATH"),
            )
            // Leaves no __pycache__ in the checkout or the folder.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("FRAMEAUDIT_RECORD_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run python3");
        let pid = child.id();
        (child.wait_with_output().expect("wait"), pid)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every line of the log, each a whole JSON object; panics on anything else.
fn log_lines(path: &Path) -> Vec<Value> {
    let raw = std::fs::read_to_string(path).expect("the log is UTF-8");
    assert!(
        raw.is_empty() || raw.ends_with('\n'),
        "the log ends mid-line"
    );
    raw.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a whole JSON line ({e}): {line:?}"));
            assert!(v.is_object(), "not an object: {line}");
            v
        })
        .collect()
}

fn events<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|v| v["event"] == event).collect()
}

fn decodes_of(lines: &[Value], pid: u64) -> Vec<&Value> {
    lines
        .iter()
        .filter(|v| v["event"] == "decode" && v["pid"] == pid)
        .collect()
}

fn indices(v: &Value) -> Vec<i64> {
    v["indices"]
        .as_array()
        .unwrap_or_else(|| panic!("no indices in {v}"))
        .iter()
        .map(|i| i.as_i64().expect("an integer index"))
        .collect()
}

/// The pid printed after `label` on a line of the harness's stdout.
fn printed_pid(stdout: &str, label: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix(label)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no `{label}` line in {stdout:?}"))
}

fn check_start(lines: &[Value], pid: u64, ppid: u64, cwd: &Path) {
    let starts: Vec<_> = events(lines, "start")
        .into_iter()
        .filter(|v| v["pid"] == pid)
        .collect();
    assert_eq!(starts.len(), 1, "one start line for pid {pid}: {lines:#?}");
    let s = starts[0];
    assert_eq!(s["schema"], "frameaudit/frames-log@1");
    assert_eq!(s["ppid"], ppid, "{s}");
    assert_eq!(s["cwd"], cwd.display().to_string());
    assert!(s["argv"].as_array().is_some_and(|a| !a.is_empty()), "{s}");
    check_time(s);
}

fn check_time(v: &Value) {
    let at = v["at"].as_str().unwrap_or_else(|| panic!("no `at` in {v}"));
    let b = at.as_bytes();
    assert!(
        at.len() == 20 && b[4] == b'-' && b[10] == b'T' && b[19] == b'Z',
        "`at` is not UTC RFC 3339 seconds: {at}"
    );
}

/// Checks a decode line of the 30-frame, 10 fps test video.
fn check_decode(v: &Value, reader: &str, video: &str, want: &[i64]) {
    assert_eq!(v["reader"], reader, "{v}");
    assert_eq!(v["video"], video, "{v}");
    assert_eq!(indices(v), want, "{v}");
    assert_eq!(v["num_frames"], 30, "{v}");
    assert_eq!(v["fps"].as_f64(), Some(10.0), "{v}");
    check_time(v);
}

const DECORD_HARNESS: &str = r#"
import multiprocessing as mp
import os
import subprocess
import sys


def child(path):
    import decord

    vr = decord.VideoReader(path)
    vr.get_batch([2, 2, 1])


if __name__ == "__main__":
    import decord
    import numpy as np

    vr = decord.VideoReader("v.mp4")
    print("batch", vr.get_batch([0, 5, 10]).shape)
    vr[3]
    vr.next()  # frame 4
    vr[1:4]
    vr.get_batch(np.array([7, -2]))
    vr[-1]
    vr.seek_accurate(12)
    vr.next()
    vr.get_frame_timestamp([1, 2])  # no decode
    sys.stdout.flush()
    p = mp.get_context("spawn").Process(target=child, args=("v.mp4",))
    p.start()
    p.join()
    print("spawn", p.pid, p.exitcode)
    p = mp.get_context("fork").Process(target=child, args=(os.path.abspath("v.mp4"),))
    p.start()
    p.join()
    print("fork", p.pid, p.exitcode)
    sys.stdout.flush()
    q = subprocess.Popen([sys.executable, "-c", "from harness import child; child('v.mp4')"])
    q.wait()
    print("subprocess", q.pid, q.returncode)
    print("done ü")
    sys.exit(3)
"#;

#[test]
fn decord_reads_in_the_main_process_and_its_children_are_logged() {
    let Some(s) = Setup::new("the decord recorder test", &["decord"]) else {
        return;
    };
    s.write("harness.py", DECORD_HARNESS);
    let log = s.path("frames.jsonl");
    let (out, recorder) = s.record(&log, &["python3", "harness.py"], &[]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "the exit status passes through: {out:?}"
    );
    assert!(
        stdout.starts_with("batch (3, 48, 64, 3)\nspawn ") && stdout.ends_with("\ndone ü\n"),
        "stdout passes through: {stdout:?}"
    );
    assert!(!text(&out.stderr).contains("frameaudit_record"), "{out:?}");

    let lines = log_lines(&log);
    let run = &lines[0];
    assert_eq!(run["event"], "run", "the first line is the run: {run}");
    assert_eq!(run["schema"], "frameaudit/frames-log@1");
    assert_eq!(run["command"], serde_json::json!(["python3", "harness.py"]));
    assert_eq!(run["cwd"], s.root.display().to_string());
    assert_eq!(run["recorder"], "frameaudit_record 1");
    check_time(run);
    let end = lines.last().expect("lines");
    assert_eq!(end["event"], "end", "the last line is the end: {end}");
    assert_eq!(end["status"], 3);
    check_time(end);
    assert_eq!(events(&lines, "run").len(), 1);
    assert_eq!(events(&lines, "end").len(), 1);

    let main = lines
        .iter()
        .find(|v| v["event"] == "start" && v["ppid"] == recorder)
        .unwrap_or_else(|| panic!("no start line of the harness: {lines:#?}"))["pid"]
        .as_u64()
        .expect("pid");
    check_start(&lines, main, u64::from(recorder), &s.root);
    // The process says once which decoding module it imported, and which release.
    let imports: Vec<&Value> = events(&lines, "import")
        .into_iter()
        .filter(|v| v["pid"] == main)
        .collect();
    assert_eq!(imports.len(), 1, "{imports:#?}");
    assert_eq!(imports[0]["module"], "decord");
    assert!(imports[0]["version"].is_string(), "{}", imports[0]);
    check_time(imports[0]);
    let video = s.video();
    let want: [&[i64]; 7] = [&[0, 5, 10], &[3], &[4], &[1, 2, 3], &[7, 28], &[29], &[12]];
    let got = decodes_of(&lines, main);
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (v, w) in got.iter().zip(want) {
        check_decode(v, "decord", &video, w);
    }
    for label in ["spawn ", "fork ", "subprocess "] {
        let pid = printed_pid(&stdout, label);
        check_start(&lines, pid, main, &s.root);
        let got = decodes_of(&lines, pid);
        assert_eq!(got.len(), 1, "{label}: {got:#?}");
        check_decode(got[0], "decord", &video, &[2, 2, 1]);
    }
}

#[test]
fn a_command_that_reads_no_video_imports_nothing_and_keeps_its_output_and_status() {
    let Some(s) = Setup::new("the recorder's no-video test", &[]) else {
        return;
    };
    s.write(
        "plain.py",
        "import sys\nprint('hello', 'decord' in sys.modules, 'numpy' in sys.modules)\n\
         sys.stdout.write('no newline')\nsys.exit(0)\n",
    );
    let log = s.path("frames.jsonl");
    let (out, _) = s.record(&log, &["python3", "plain.py"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "hello False False\nno newline");
    assert_eq!(text(&out.stderr), "");
    let lines = log_lines(&log);
    let kinds: Vec<_> = lines
        .iter()
        .map(|v| v["event"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["run", "start", "end"], "{lines:#?}");
    assert_eq!(lines[2]["status"], 0);

    // Not a Python command: output bytes and status as they are; the log appends.
    let (out, _) = s.record(
        &log,
        &["sh", "-c", "printf 'a\\tb\\n'; printf err >&2; exit 7"],
        &[],
    );
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    assert_eq!(out.stdout, b"a\tb\n");
    assert_eq!(out.stderr, b"err");
    let lines = log_lines(&log);
    let kinds: Vec<_> = lines
        .iter()
        .map(|v| v["event"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["run", "start", "end", "run", "end"], "{lines:#?}");
    assert_eq!(lines[4]["status"], 7);
}

/// A plan steers decord's get_batch for the videos it names in the run given, and the log
/// says what the harness asked and what it got; other videos, other readers, other runs and
/// other passes are left alone; a plan that does not apply starts nothing.
#[test]
fn a_plan_hands_the_harness_the_planned_frames_and_logs_both() {
    let Some(s) = Setup::new("the recorder's plan test", &["decord"]) else {
        return;
    };
    s.write(
        "plan.json",
        r#"{"schema": "frameaudit/plan@1", "entries": [
 {"model": "org/m", "config": "64f", "video": "v.mp4", "indices": [3, 4, 5, 29], "strategy": "nested", "pass": 0},
 {"model": "org/m", "config": "64f", "video": "v", "indices": [7], "strategy": "nested", "pass": 1},
 {"model": "org/m", "config": "64f", "video": "w.mp4", "indices": [1], "strategy": "swap", "pass": 0},
 {"model": "org/m", "config": "32f", "video": "v.mp4", "indices": [9], "strategy": "nested", "pass": 0}]}"#,
    );
    s.write(
        "h.py",
        "import decord
vr = decord.VideoReader('v.mp4')
print(vr.get_batch([0, 5, 10]).shape)
print(vr[2].shape)
",
    );
    let log = s.path("frames.jsonl");
    let plan = s.path("plan.json").display().to_string();
    // Pass 0 of the nested strategy for run org/m/64f, its log at `log`.
    let nested = |log: &Path, command: &[&str]| {
        s.record_with(
            log,
            &[
                "--plan",
                &plan,
                "--run",
                "org/m/64f",
                "--strategy",
                "nested",
            ],
            command,
            &[],
        )
    };
    let (out, _) = nested(&log, &["python3", "h.py"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // The harness got the plan's four frames, not the three it asked for.
    assert_eq!(text(&out.stdout), "(4, 48, 64, 3)\n(48, 64, 3)\n");
    let err = text(&out.stderr);
    assert!(err.contains("steering 1 video(s) of org/m/64f"), "{err}");
    assert!(err.contains("pass 0 of 2"), "{err}");
    // At the end, what the plan steered: the get_batch, not the vr[2].
    assert!(
        err.contains("frameaudit_record: 1 decode(s) of 1 video(s) got the plan's frames (1 video(s) planned)\n"),
        "{err}"
    );
    assert!(!err.contains("warning"), "{err}");
    let lines = log_lines(&log);
    assert_eq!(lines[0]["plan"]["run"], "org/m/64f", "{}", lines[0]);
    let starts = events(&lines, "start");
    assert!(starts.iter().all(|l| l["plan"] == "applied"), "{starts:#?}");
    assert_eq!(lines[0]["plan"]["strategy"], "nested");
    let decodes = events(&lines, "decode");
    assert_eq!(decodes.len(), 2, "{decodes:#?}");
    check_decode(decodes[0], "decord", &s.video(), &[3, 4, 5, 29]);
    assert_eq!(decodes[0]["planned"], true);
    assert_eq!(decodes[0]["asked"], serde_json::json!([0, 5, 10]));
    assert_eq!(decodes[0]["pass"], 0);
    // vr[i] is not steered: logged as asked.
    check_decode(decodes[1], "decord", &s.video(), &[2]);
    assert!(decodes[1].get("planned").is_none(), "{}", decodes[1]);

    // Pass 1 of the same run plans frame 7 for the same video.
    let log1 = s.path("pass1.jsonl");
    let (out, _) = s.record_with(
        &log1,
        &[
            "--plan",
            &plan,
            "--run",
            "org/m/64f",
            "--strategy",
            "nested",
            "--pass",
            "1",
        ],
        &["python3", "h.py"],
        &[],
    );
    assert_eq!(
        text(&out.stdout),
        "(1, 48, 64, 3)\n(48, 64, 3)\n",
        "{out:?}"
    );
    check_decode(
        events(&log_lines(&log1), "decode")[0],
        "decord",
        &s.video(),
        &[7],
    );

    // A harness that reads frame by frame is not steered: said at the end.
    s.write(
        "by_frame.py",
        "import decord\nvr = decord.VideoReader('v.mp4')\nprint(vr[2].shape)\n",
    );
    let log2 = s.path("by_frame.jsonl");
    let (out, _) = nested(&log2, &["python3", "by_frame.py"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains("frameaudit_record: warning: no decode got the plan's frames (1 video(s) planned): only decord's get_batch is steered"),
        "{err}"
    );
    // A planned run whose log cannot be written starts nothing, and says no "steering".
    s.write("not-a-dir", "");
    let (out, _) = nested(&s.path("not-a-dir/frames.jsonl"), &["python3", "h.py"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(text(&out.stdout).is_empty(), "{out:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains("a run with a plan is not started without it"),
        "{err}"
    );
    assert!(!err.contains("steering"), "{err}");

    // Refused before the command runs: two strategies and none chosen, a run the plan
    // does not have, --plan without --run, two frame sets for videos of one name in a pass.
    s.write(
        "same-name.json",
        r#"{"schema": "frameaudit/plan@1", "entries": [
 {"model": "m", "config": "8f", "video": "a/v.mp4", "indices": [1], "strategy": "swap", "pass": 0},
 {"model": "m", "config": "8f", "video": "b/v.mkv", "indices": [2], "strategy": "swap", "pass": 0}]}"#,
    );
    let same = s.path("same-name.json").display().to_string();
    for (options, says) in [
        (
            vec!["--plan", same.as_str(), "--run", "m/8f"],
            "could not tell them apart",
        ),
        (
            vec!["--plan", plan.as_str(), "--run", "org/m/64f"],
            "give --strategy",
        ),
        (
            vec!["--plan", plan.as_str(), "--run", "org/m/8f"],
            "no entry for org/m/8f",
        ),
        (vec!["--plan", plan.as_str()], "--plan needs --run"),
    ] {
        let log = s.path("refused.jsonl");
        let (out, _) = s.record_with(&log, &options, &["python3", "h.py"], &[]);
        assert_eq!(out.status.code(), Some(2), "{options:?}: {out:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{options:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "", "the command did not run");
        assert!(!log.exists(), "nothing logged");
    }
}

/// A plan is input: every index must be a JSON integer (not a boolean, not a float, not
/// even 3.0) within the entry's video, and a plan that is not one (NaN, Infinity, nesting
/// no plan has, fields of the wrong kind) starts nothing: exit 2 and one line naming the
/// plan file and the entry, never a traceback.
#[test]
fn a_malformed_plan_is_refused_in_one_line_naming_the_entry() {
    let Some(s) = Setup::new("the recorder's malformed plan test", &[]) else {
        return;
    };
    let entry = |indices: &str, extra: &str| {
        format!(
            r#"{{"schema": "frameaudit/plan@1", "entries": [
 {{"model": "m", "config": "8f", "video": "v.mp4", "num_frames": 30, "indices": [1, 2], "strategy": "swap", "pass": 0}},
 {{"model": "m", "config": "8f", "video": "w.mp4", "num_frames": 30, "indices": {indices}, "strategy": "swap", "pass": 0{extra}}}]}}"#
        )
    };
    let deep = format!(
        r#"{{"schema": "frameaudit/plan@1", "entries": {}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let cases: Vec<(String, &str)> = vec![
        (
            entry("[0, -1]", ""),
            "entries[1]: indices[1] is -1, not a frame number",
        ),
        (
            entry("[1.5]", ""),
            "entries[1]: indices[0] is 1.5, not an integer",
        ),
        (
            entry("[true]", ""),
            "entries[1]: indices[0] is true, not an integer",
        ),
        (
            entry("[3.0]", ""),
            "entries[1]: indices[0] is 3.0, not an integer",
        ),
        (
            entry("[1e300]", ""),
            "entries[1]: indices[0] is 1e+300, not an integer",
        ),
        (
            entry("[[4]]", ""),
            "entries[1]: indices[0] is [4], not an integer",
        ),
        (
            entry("[29, 30]", ""),
            "entries[1]: indices[1] is 30, past the video's 30 frames",
        ),
        (
            entry("[99999999999999999999999]", r#", "num_frames": null"#),
            "entries[1]: indices[0] is 99999999999999999999999, past the 2147483648 frames",
        ),
        (
            entry("\"0, 1\"", ""),
            "entries[1]: indices is \"0, 1\", not a list",
        ),
        (entry("[]", ""), "entries[1]: indices is [], not a list"),
        (
            entry("[1]", r#", "pass": true"#),
            "entries[1]: pass is true",
        ),
        (
            entry("[1]", r#", "num_frames": 2.5"#),
            "entries[1]: num_frames is 2.5",
        ),
        (
            entry("[1]", r#", "config": "8f\u001b[2J""#),
            r#"entries[1]: config is "8f\u001b[2J", not a name"#,
        ),
        (entry("[Infinity]", ""), "Infinity is not JSON"),
        (entry("[-Infinity]", ""), "-Infinity is not JSON"),
        (entry("[NaN]", ""), "NaN is not JSON"),
        (deep, "nested too deep"),
        (
            r#"{"schema": "frameaudit/plan@1", "entries": {"m": 1}}"#.to_owned(),
            "entries is {\"m\": 1}, not a list",
        ),
        (
            r#"{"schema": "frameaudit/plan@1", "entries": [7]}"#.to_owned(),
            "entries[0]: is a number, not an object",
        ),
    ];
    s.write("h.py", "print('ran')\n");
    for (n, (plan, says)) in cases.iter().enumerate() {
        let path = s.write(&format!("plan-{n}.json"), plan);
        let shown = path.display().to_string();
        let log = s.path("refused.jsonl");
        let (out, _) = s.record_with(
            &log,
            &["--plan", &shown, "--run", "m/8f"],
            &["python3", "h.py"],
            &[],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{says}: {out:?}");
        assert!(!err.contains("Traceback"), "{says}: {err}");
        assert_eq!(err.lines().count(), 1, "{says}: one line, not {err}");
        assert!(
            err.starts_with("frameaudit_record: ") && err.contains(&shown),
            "{says}: the plan is named in {err}"
        );
        assert!(err.contains(says), "{says}: {err}");
        assert_eq!(text(&out.stdout), "", "the command did not run");
        assert!(!log.exists(), "nothing logged");
    }
}

#[test]
fn an_unwritable_log_warns_and_the_command_still_runs() {
    let Some(s) = Setup::new("the recorder's unwritable-log test", &["decord"]) else {
        return;
    };
    s.write(
        "reads.py",
        "import sys, decord\nprint(decord.VideoReader('v.mp4').get_batch([1, 2]).shape)\nsys.exit(4)\n",
    );
    s.write("not-a-dir", "");
    // Unwritable even for root: a file where a folder should be.
    let log = s.path("not-a-dir/frames.jsonl");
    let (out, _) = s.record(&log, &["python3", "reads.py"], &[]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert_eq!(text(&out.stdout), "(2, 48, 64, 3)\n");
    let err = text(&out.stderr);
    assert_eq!(
        err.matches("frameaudit_record: warning").count(),
        1,
        "{err}"
    );
    assert!(err.contains("cannot write the frames log"), "{err}");
    assert!(err.contains("without recording"), "{err}");

    // The log stops being writable during the run: each process warns once, goes on.
    s.write(
        "breaks.py",
        r#"
import os
import decord

vr = decord.VideoReader("v.mp4")
vr.get_batch([1])
os.remove("frames.jsonl")
os.mkdir("frames.jsonl")
for i in range(3):
    vr.get_batch([i])
print("frames", vr.get_batch([0, 1]).shape)
"#,
    );
    let log = s.path("frames.jsonl");
    let (out, _) = s.record(&log, &["python3", "breaks.py"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "frames (2, 48, 64, 3)\n");
    // One from the harness, one from the recorder's end line.
    let err = text(&out.stderr);
    let warnings: Vec<_> = err
        .lines()
        .filter(|l| l.starts_with("frameaudit_record: warning"))
        .collect();
    assert_eq!(warnings.len(), 2, "{err}");
    assert!(
        warnings
            .iter()
            .all(|l| l.contains("cannot write the frames log")),
        "{err}"
    );
}

#[test]
fn a_sitecustomize_already_on_the_path_still_runs() {
    let Some(s) = Setup::new("the recorder's sitecustomize test", &["decord"]) else {
        return;
    };
    let site = s.path("usersite");
    s.write(
        "usersite/sitecustomize.py",
        "import os, sys\nMARK = 'user sitecustomize'\nos.environ['USER_SITE_RAN'] = '1'\n",
    );
    s.write(
        "uses.py",
        "import os, sitecustomize, decord\nprint(sitecustomize.MARK, os.environ.get('USER_SITE_RAN'))\n\
         decord.VideoReader('v.mp4').get_batch([9, 8])\n",
    );
    let log = s.path("frames.jsonl");
    let (out, _) = s.record(&log, &["python3", "uses.py"], &[&site]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "user sitecustomize 1\n");
    let lines = log_lines(&log);
    let d = events(&lines, "decode");
    assert_eq!(d.len(), 1, "{lines:#?}");
    check_decode(d[0], "decord", &s.video(), &[9, 8]);
}

#[test]
fn concurrent_writers_leave_only_whole_lines() {
    let Some(s) = Setup::new("the recorder's concurrency test", &["decord"]) else {
        return;
    };
    s.write(
        "writer.py",
        r#"
import sys
import decord

w = int(sys.argv[1])
vr = decord.VideoReader("v.mp4")
for i in range(200):
    vr.get_batch([w, i % 30])
# Lines longer than a pipe buffer (4 KiB) as well.
for i in range(3):
    vr.get_batch([w] * 1500)
"#,
    );
    s.write(
        "fanout.py",
        r#"
import subprocess
import sys

ps = [subprocess.Popen([sys.executable, "writer.py", str(w)]) for w in range(4)]
sys.exit(max(p.wait() for p in ps))
"#,
    );
    let log = s.path("frames.jsonl");
    let (out, _) = s.record(&log, &["python3", "fanout.py"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = log_lines(&log);
    let starts = events(&lines, "start");
    assert_eq!(starts.len(), 5, "{starts:#?}");
    let mut workers = 0;
    for start in starts {
        let pid = start["pid"].as_u64().expect("pid");
        let got = decodes_of(&lines, pid);
        if got.is_empty() {
            continue; // fanout.py itself
        }
        workers += 1;
        assert_eq!(got.len(), 203, "pid {pid}");
        let w = indices(got[0])[0];
        for (i, v) in got.iter().enumerate() {
            let want: Vec<i64> = if i < 200 {
                vec![w, i as i64 % 30]
            } else {
                vec![w; 1500]
            };
            assert_eq!(indices(v), want, "pid {pid}, decode {i}");
        }
    }
    assert_eq!(workers, 4);
}

/// lmms-eval 0.7.3's PyAV helpers (models/model_utils/load_video.py) and VLMEvalKit's
/// Video-LLaVA one, as those harnesses have them, with the frames they return saved
/// so that a check without the recorder can compare them to the logged indices.
const PYAV_STANDINS: &[(&str, &str)] = &[
    ("fake/lmms_eval/__init__.py", ""),
    ("fake/lmms_eval/models/__init__.py", ""),
    ("fake/lmms_eval/models/model_utils/__init__.py", ""),
    (
        "fake/lmms_eval/models/model_utils/load_video.py",
        r#"
import av
import numpy as np


def record_video_length_stream(container, indices):
    frames = []
    start_index = indices[0]
    end_index = indices[-1]
    index_set = set(indices.tolist() if hasattr(indices, "tolist") else indices)
    for i, frame in enumerate(container.decode(video=0)):
        if i > end_index:
            break
        if i >= start_index and i in index_set:
            frames.append(frame)
    return frames


def record_video_length_packet(container):
    frames = []
    for packet in container.demux(video=0):
        for frame in packet.decode():
            frames.append(frame)
    return frames


def load_video_stream(container, num_frm=8, fps=None, force_include_last_frame=False):
    total_frames = container.streams.video[0].frames
    sampled_frm = min(total_frames, num_frm)
    indices = np.linspace(0, total_frames - 1, sampled_frm, dtype=int)
    if force_include_last_frame:
        last_frame = total_frames - 1
        if last_frame not in indices:
            indices = np.linspace(0, total_frames - 2, sampled_frm - 1, dtype=int)
            indices = np.append(indices, last_frame)
    return record_video_length_stream(container, indices)


def load_video_packet(container, num_frm=8, fps=None):
    frames = record_video_length_packet(container)
    total_frames = len(frames)
    sampled_frm = min(total_frames, num_frm)
    indices = np.linspace(0, total_frames - 1, sampled_frm, dtype=int)
    if total_frames - 1 not in indices:
        indices = np.append(indices, total_frames - 1)
    return [frames[i] for i in indices]


def read_video(video_path, *, num_frm=8, fps=None, format="rgb24", force_include_last_frame=False):
    container = av.open(video_path)
    try:
        if "webm" not in video_path and "mkv" not in video_path:
            try:
                frames = load_video_stream(container, num_frm, fps, force_include_last_frame)
            except Exception:
                container.seek(0)
                frames = record_video_length_packet(container)
        else:
            frames = record_video_length_packet(container)
        return np.stack([f.to_ndarray(format=format) for f in frames])
    finally:
        container.close()


read_video_pyav = read_video
"#,
    ),
    ("fake/vlmeval/__init__.py", ""),
    ("fake/vlmeval/vlm/__init__.py", ""),
    ("fake/vlmeval/vlm/video_llm/__init__.py", ""),
    (
        "fake/vlmeval/vlm/video_llm/video_llava.py",
        r#"
import numpy as np


def read_video_pyav(container, indices):
    frames = []
    container.seek(0)
    start_index = indices[0]
    end_index = indices[-1]
    for i, frame in enumerate(container.decode(video=0)):
        if i > end_index:
            break
        if i >= start_index and i in indices:
            frames.append(frame)
    return np.stack([x.to_ndarray(format='rgb24') for x in frames])
"#,
    ),
    (
        "pyav_harness.py",
        r#"
import av
import numpy as np
from lmms_eval.models.model_utils.load_video import load_video_packet, read_video, read_video_pyav
from vlmeval.vlm.video_llm.video_llava import read_video_pyav as vlm_read_video_pyav

out = [read_video("v.mp4", num_frm=4), read_video_pyav("v.mp4", num_frm=8, force_include_last_frame=True)]
c = av.open("v.mp4")
out.append(np.stack([f.to_ndarray(format="rgb24") for f in load_video_packet(c, num_frm=5)]))
out.append(vlm_read_video_pyav(c, np.array([3, 3, 1, 20, 9])))  # unsorted: what it keeps
c.close()
for n, frames in enumerate(out):
    np.save("out%d.npy" % n, frames)
print("saved", len(out))
"#,
    ),
    (
        "pyav_check.py",
        r#"
import json
import av
import numpy as np

c = av.open("v.mp4")
every = np.stack([f.to_ndarray(format="rgb24") for f in c.decode(video=0)])
decodes = [json.loads(l) for l in open("frames.jsonl") if '"decode"' in l]
for n, d in enumerate(decodes):
    got = np.load("out%d.npy" % n)
    assert np.array_equal(got, every[d["indices"]]), (n, d["indices"])
print("exact", len(decodes))
"#,
    ),
];

#[test]
fn lmms_eval_and_vlmevalkit_pyav_helpers_are_logged_exactly() {
    let Some(s) = Setup::new("the recorder's PyAV test", &["av", "numpy"]) else {
        return;
    };
    for (name, body) in PYAV_STANDINS {
        s.write(name, body);
    }
    let log = s.path("frames.jsonl");
    let (out, _) = s.record(&log, &["python3", "pyav_harness.py"], &[&s.path("fake")]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "saved 4\n");
    let lines = log_lines(&log);
    let d = events(&lines, "decode");
    let video = s.video();
    let want: [&[i64]; 4] = [
        &[0, 9, 19, 29],
        &[0, 4, 8, 12, 16, 20, 24, 29],
        &[0, 7, 14, 21, 29],
        &[3, 9],
    ];
    assert_eq!(d.len(), want.len(), "{d:#?}");
    for (v, w) in d.iter().zip(want) {
        check_decode(v, "pyav", &video, w);
    }
    // The frames each helper returned are those frames of the video.
    let check = Command::new("python3")
        .arg("pyav_check.py")
        .current_dir(&s.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run the check");
    assert_eq!(text(&check.stdout), "exact 4\n", "{check:?}");
}

#[test]
fn qwen_vl_utils_torchvision_reads_are_logged_from_their_metadata() {
    let Some(s) = Setup::new("the recorder's qwen_vl_utils test", &[]) else {
        return;
    };
    // The shape of qwen_vl_utils 0.0.14's vision_process: a backend table, and metadata
    // with the indices taken from what torchvision.io.read_video decoded.
    s.write(
        "fake/qwen_vl_utils/__init__.py",
        "from .vision_process import fetch_video\n",
    );
    s.write(
        "fake/qwen_vl_utils/vision_process.py",
        r#"
def _read_video_torchvision(ele):
    idx = [0, 10, 19, 29]
    return "frames", dict(fps=10.0, frames_indices=idx, total_num_frames=30, video_backend="torchvision"), 2.0


VIDEO_READER_BACKENDS = {"torchvision": _read_video_torchvision}


def fetch_video(ele):
    return VIDEO_READER_BACKENDS["torchvision"](ele)[0]
"#,
    );
    let video = s.video();
    s.write(
        "qwen_harness.py",
        &format!(
            "from qwen_vl_utils import fetch_video\n\
             print(fetch_video({{'video': 'file://{video}'}}))\n\
             print(fetch_video({{'video': 'v.mp4', 'video_start': 1.0}}))\n"
        ),
    );
    let log = s.path("frames.jsonl");
    let (out, _) = s.record(&log, &["python3", "qwen_harness.py"], &[&s.path("fake")]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stdout), "frames\nframes\n");
    let lines = log_lines(&log);
    let d = events(&lines, "decode");
    // The clip from video_start on is counted from its own first frame: not logged.
    assert_eq!(d.len(), 1, "{d:#?}");
    check_decode(d[0], "torchvision", &video, &[0, 10, 19, 29]);
}

#[test]
fn torchcodec_index_reads_are_logged() {
    let Some(s) = Setup::new("the recorder's torchcodec test", &["torchcodec"]) else {
        return;
    };
    s.write(
        "tc.py",
        r#"
import torch
from torchcodec.decoders import VideoDecoder

d = VideoDecoder("v.mp4")
d.get_frames_at([0, 5, -1])
d.get_frames_at(torch.tensor([3, 3]))
d[2]
d[-3:]
d.get_frame_at(7)
d.get_frames_in_range(1, 10, 4)
d.get_frames_played_at([0.5])  # by time: not logged
print("ok")
"#,
    );
    let log = s.path("frames.jsonl");
    let (out, _) = s.record(&log, &["python3", "tc.py"], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = log_lines(&log);
    let d = events(&lines, "decode");
    let want: [&[i64]; 6] = [&[0, 5, 29], &[3, 3], &[2], &[27, 28, 29], &[7], &[1, 5, 9]];
    assert_eq!(d.len(), want.len(), "{d:#?}");
    for (v, w) in d.iter().zip(want) {
        check_decode(v, "torchcodec", &s.video(), w);
    }
}

#[test]
fn usage_and_errors() {
    let Some(s) = Setup::new("the recorder's usage test", &[]) else {
        return;
    };
    let run = |args: &[&str]| {
        Command::new("python3")
            .args(["-m", "frameaudit_record"])
            .args(args)
            .current_dir(&s.root)
            .env("PYTHONPATH", repo().join("assets/python"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("run python3")
    };
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(
        text(&help.stdout)
            .starts_with("usage: python3 -m frameaudit_record --log FILE [--plan PLAN")
    );
    let out = run(&["--log", "f.jsonl", "python3", "x.py"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = text(&out.stderr);
    assert!(
        err.starts_with("frameaudit_record: missing `--` before COMMAND"),
        "{err}"
    );
    assert!(err.contains("usage:"), "{err}");
    // The other usage errors, through main() in one process.
    let cases: &[(&[&str], &str)] = &[
        (&["--log", "f.jsonl"], "missing `--` before COMMAND"),
        (&["--", "true"], "--log FILE is required"),
        (&["--log", "f.jsonl", "--"], "no COMMAND after `--`"),
        (&["--log"], "--log needs a FILE"),
        (&["--log="], "--log needs a FILE"),
        (
            &["--frobnicate", "--", "true"],
            "unknown option --frobnicate",
        ),
        (
            &["--log", "f.jsonl", "--run", "m/8f", "--", "true"],
            "--run, --strategy and --pass go with --plan PLAN",
        ),
        (
            &[
                "--log", "f.jsonl", "--plan", "p.json", "--run", "m/8f", "--pass", "x", "--",
                "true",
            ],
            "--pass is a number",
        ),
    ];
    let argvs =
        serde_json::to_string(&cases.iter().map(|c| c.0).collect::<Vec<_>>()).expect("json");
    s.write(
        "usage.py",
        r#"
import contextlib, io, json, sys
from frameaudit_record.__main__ import main

for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    print(json.dumps([code, err.getvalue()]))
"#,
    );
    let out = Command::new("python3")
        .arg("usage.py")
        .arg(&argvs)
        .current_dir(&s.root)
        .env("PYTHONPATH", repo().join("assets/python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3");
    let results: Vec<(i64, String)> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a result"))
        .collect();
    assert_eq!(results.len(), cases.len(), "{out:?}");
    for ((args, message), (code, err)) in cases.iter().zip(results) {
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("frameaudit_record: {message}")),
            "{args:?}: {err}"
        );
        assert!(err.contains("usage:"), "{args:?}: {err}");
    }
    assert!(!s.path("f.jsonl").exists(), "no log for a usage error");
    let out = run(&["--log", "f.jsonl", "--", "./no-such-command"]);
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    assert!(text(&out.stderr).contains("cannot run ./no-such-command"));
    let kinds: Vec<_> = log_lines(&s.path("f.jsonl"))
        .iter()
        .map(|v| v["event"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(kinds, ["run", "end"]);
}

/// A stand-in for qwen_vl_utils 0.0.14's `vision_process` where the real one is not
/// installed: the same names, the same choice of reader (FORCE_QWENVL_VIDEO_READER read at
/// import, torchcodec when findable, then decord, cached once), the same fallback to
/// torchvision when a reader raises, and smart_nframes' ValueError past the video's count.
const QWEN_STAND_IN: &str = r#"
import importlib.util, math, os, sys
from functools import lru_cache


def smart_nframes(ele, total_frames, video_fps):
    nframes = round(ele["nframes"] / 2) * 2
    if not (2 <= nframes <= total_frames):
        raise ValueError(f"nframes should in interval [2, {total_frames}], but got {nframes}.")
    return nframes


def _linspace(total, n):
    return [round(i * (total - 1) / (n - 1)) for i in range(n)]


def _read_video_decord(ele):
    import decord
    vr = decord.VideoReader(ele["video"])
    total, fps = len(vr), vr.get_avg_fps()
    idx = _linspace(total, smart_nframes(ele, total, fps))
    return vr.get_batch(idx), dict(fps=fps, frames_indices=idx, total_num_frames=total), 2.0


def _read_video_torchcodec(ele):
    from torchcodec.decoders import VideoDecoder
    d = VideoDecoder(ele["video"])
    total, fps = d.metadata.num_frames, d.metadata.average_fps
    idx = _linspace(total, smart_nframes(ele, total, fps))
    return d.get_frames_at(indices=idx).data, dict(fps=fps, frames_indices=idx, total_num_frames=total), 2.0


def _read_video_torchvision(ele):
    raise AttributeError("module 'torchvision.io' has no attribute 'read_video'")


VIDEO_READER_BACKENDS = {
    "decord": _read_video_decord,
    "torchvision": _read_video_torchvision,
    "torchcodec": _read_video_torchcodec,
}

FORCE_QWENVL_VIDEO_READER = os.getenv("FORCE_QWENVL_VIDEO_READER", None)


@lru_cache(maxsize=1)
def get_video_reader_backend():
    if FORCE_QWENVL_VIDEO_READER is not None:
        backend = FORCE_QWENVL_VIDEO_READER
    elif importlib.util.find_spec("torchcodec") is not None:
        backend = "torchcodec"
    elif importlib.util.find_spec("decord") is not None:
        backend = "decord"
    else:
        backend = "torchvision"
    print(f"qwen-vl-utils using {backend} to read video.", file=sys.stderr)
    return backend


def fetch_video(ele, return_video_metadata=False):
    backend = get_video_reader_backend()
    try:
        video, metadata, fps = VIDEO_READER_BACKENDS[backend](ele)
    except Exception:
        video, metadata, fps = VIDEO_READER_BACKENDS["torchvision"](ele)
    return (video, metadata) if return_video_metadata else video
"#;

/// What python3 finds installed of `names` (importlib.metadata), as the start line should
/// give it.
fn installed_versions(s: &Setup, names: &[&str]) -> serde_json::Map<String, Value> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import importlib.metadata as m, json, sys\nout = {}\nfor n in sys.argv[1:]:\n    try: out[n] = m.version(n)\n    except m.PackageNotFoundError: pass\nprint(json.dumps(out))",
        )
        .args(names)
        .current_dir(&s.root)
        .output()
        .expect("run python3");
    serde_json::from_slice::<Value>(&out.stdout)
        .expect("json")
        .as_object()
        .cloned()
        .expect("an object")
}

#[test]
fn the_start_line_and_qwen_vl_utils_say_which_decoder_reads() {
    let Some(s) = Setup::new("the recorder's decoder-choice test", &["decord"]) else {
        return;
    };
    // The real qwen_vl_utils where it is installed (with torch and torchvision), else the
    // stand-in of the same name.
    let real = python_has("qwen_vl_utils.vision_process");
    let mut path: Vec<PathBuf> = Vec::new();
    if real {
        println!("the installed qwen_vl_utils");
    } else {
        common::skip_note(format_args!(
            "qwen_vl_utils is not importable here; its stand-in is recorded instead (pip install --no-deps qwen-vl-utils==0.0.14 torchvision; pip install packaging requests)"
        ));
        s.write(
            "fake/qwen_vl_utils/__init__.py",
            "from .vision_process import fetch_video\n",
        );
        s.write("fake/qwen_vl_utils/vision_process.py", QWEN_STAND_IN);
        path.push(s.path("fake"));
    }
    let pythonpath: Vec<&Path> = path.iter().map(PathBuf::as_path).collect();
    s.write(
        "qwen_harness.py",
        r#"
from qwen_vl_utils.vision_process import fetch_video, get_video_reader_backend
print(get_video_reader_backend())
fetch_video({"video": "v.mp4", "nframes": 4})
fetch_video({"video": "v.mp4", "nframes": 4})
try:
    # Past the video's 30 frames: the reader raises, and torchvision reads it again.
    fetch_video({"video": "v.mp4", "nframes": 40})
except Exception as e:
    print("fallback failed too:", type(e).__name__)
"#,
    );
    let log = s.path("forced.jsonl");
    let (out, _) = s.record(
        &log,
        &[
            "env",
            "FORCE_QWENVL_VIDEO_READER=decord",
            "LMMS_VIDEO_DECODE_BACKEND=torchcodec",
            "LMMS_VIDEO_TORCHCODEC_THREADS=2",
            "FRAMEAUDIT_UNRELATED=1",
            "python3",
            "qwen_harness.py",
        ],
        &pythonpath,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out.stdout).starts_with("decord\n"), "{out:?}");
    let lines = log_lines(&log);
    let starts = events(&lines, "start");
    assert_eq!(starts.len(), 1, "{lines:#?}");
    // Only the variables that decide the decoder, and all of them that are set.
    assert_eq!(
        starts[0]["env"],
        json!({"FORCE_QWENVL_VIDEO_READER": "decord", "LMMS_VIDEO_DECODE_BACKEND": "torchcodec",
            "LMMS_VIDEO_TORCHCODEC_THREADS": "2"}),
        "{}",
        starts[0]
    );
    let names = [
        "decord",
        "torchcodec",
        "av",
        "torchvision",
        "qwen-vl-utils",
        "opencv-python-headless",
    ];
    let want = installed_versions(&s, &names);
    assert!(want.contains_key("decord"), "{want:?}");
    let versions = starts[0]["versions"].as_object().expect("versions");
    for n in names {
        assert_eq!(versions.get(n), want.get(n), "{n}: {versions:?}");
    }
    // Once per process however often it is asked, and forced.
    let choice = events(&lines, "reader_choice");
    assert_eq!(choice.len(), 1, "{lines:#?}");
    assert_eq!(choice[0]["reader"], "decord");
    assert_eq!(choice[0]["forced"], true);
    assert_eq!(choice[0]["pid"], starts[0]["pid"]);
    check_time(choice[0]);
    let d = events(&lines, "decode");
    assert!(!d.is_empty(), "{lines:#?}");
    check_decode(d[0], "decord", &s.video(), &[0, 10, 19, 29]);
    // The failed read is logged, with why, before torchvision's attempt.
    let failed = events(&lines, "reader_failed");
    assert_eq!(failed.len(), 1, "{lines:#?}");
    assert_eq!(failed[0]["reader"], "decord");
    assert_eq!(failed[0]["video"], s.video());
    let why = failed[0]["error"].as_str().expect("error");
    assert!(why.starts_with("ValueError: nframes"), "{why}");

    // Not forced: qwen_vl_utils' own pick, torchcodec when it is installed.
    let log = s.path("chosen.jsonl");
    let (out, _) = s.record(
        &log,
        &[
            "env",
            "-u",
            "FORCE_QWENVL_VIDEO_READER",
            "python3",
            "qwen_harness.py",
        ],
        &pythonpath,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines = log_lines(&log);
    let expect = if python_has("torchcodec") {
        "torchcodec"
    } else {
        "decord"
    };
    let choice = events(&lines, "reader_choice");
    assert_eq!(choice.len(), 1, "{lines:#?}");
    assert_eq!(choice[0]["reader"], expect);
    assert_eq!(choice[0]["forced"], false);
    let start = events(&lines, "start");
    assert!(
        start[0]["env"]
            .as_object()
            .is_some_and(|e| !e.contains_key("FORCE_QWENVL_VIDEO_READER")),
        "{}",
        start[0]
    );
}
