//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod tmux;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use frameaudit::core::analysis::Metrics;
use frameaudit::core::matrix::Task;
use frameaudit::core::measures::{Measure, Tone, Twin, Unit};
use serde_json::Value;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of the bundled demo's data files (not its frames) in `dir/demo`, to change or to
/// write audits into.
pub fn demo_copy(dir: &Path) -> PathBuf {
    let to = dir.join("demo");
    std::fs::create_dir_all(&to).expect("mkdir");
    for f in ["cells.jsonl", "items.jsonl", "dataset.json"] {
        std::fs::copy(repo().join("fixtures/demo").join(f), to.join(f)).expect("copy");
    }
    to
}

pub fn conformance(name: &str) -> PathBuf {
    repo().join("tests/data/conformance").join(name)
}

/// Where the shared data are: `$FRAMEAUDIT_SHARED`, else `shared` beside the repository.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("FRAMEAUDIT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared"))
}

/// Says that a check is skipped and why, where `cargo test` shows it. A test's own
/// `eprintln!` is held back with its output and shown only when it fails, so a check skipped
/// for want of a tool or of the shared data would pass unseen; this writes past that hold.
pub fn skip_note(why: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "note: {why}");
}

/// The real Video-MME per-item CSV of the shared data, when this checkout has it.
pub fn real_csv() -> Option<PathBuf> {
    let p = shared_dir().join("data/videomme-scalegrid/per_item.csv");
    if p.exists() {
        Some(p)
    } else {
        skip_note(format_args!(
            "{} is absent; skipping the real-data checks",
            p.display()
        ));
        None
    }
}

/// The audit screens on `ds` (protocol `main`, no bootstrap), as annotator `annotator`
/// in memory.
pub fn app_of(
    ds: frameaudit::core::dataset::Dataset,
    annotator: &str,
) -> frameaudit::tui::app::App {
    use frameaudit::core::analysis::params::Params;
    use frameaudit::core::taxonomy::Taxonomy;
    use frameaudit::tui::input::keymap::Keymap;
    let params = Params {
        bootstrap_b: 0,
        sweep: false,
        ..Params::default()
    };
    let report = frameaudit::core::analysis::run(&ds.matrix, &params, None);
    let protocol = ds.matrix.protocols.get("main").expect("main");
    let taxonomy = Taxonomy::load(None).expect("taxonomy");
    let keymap = Keymap::default_for(&taxonomy);
    frameaudit::tui::app::App::new(
        ds,
        report,
        protocol,
        taxonomy,
        keymap,
        frameaudit::core::workspace::session::Session::in_memory(annotator),
    )
}

/// Runs the frameaudit binary.
pub fn frameaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_frameaudit"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run frameaudit")
}

/// Runs the frameaudit binary with its standard output on a terminal: a pseudo-terminal
/// that `script` (util-linux) opens. The arguments go through the environment, so any
/// text reaches the program unchanged. `None`, with a note, when `script` is absent. The
/// output is what the terminal received (line ends `\r\n`).
pub fn frameaudit_on_terminal(args: &[&str]) -> Option<Output> {
    let present = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        skip_note(format_args!(
            "script (util-linux) is absent; skipping the checks on a terminal"
        ));
        return None;
    }
    let typescript = tempfile::NamedTempFile::new().expect("typescript");
    let mut line = String::from("exec \"$FA_BIN\"");
    let mut cmd = Command::new("script");
    for (i, a) in args.iter().enumerate() {
        line.push_str(&format!(" \"$FA_ARG{i}\""));
        cmd.env(format!("FA_ARG{i}"), a);
    }
    cmd.env("FA_BIN", env!("CARGO_BIN_EXE_frameaudit"))
        .env("NO_COLOR", "1")
        .env("SHELL", "/bin/sh")
        .args(["-qec", &line])
        // script's typescript goes to a file of our own, never the machine's /dev/null.
        .arg(typescript.path())
        .stdin(std::process::Stdio::null());
    Some(cmd.output().expect("run script"))
}

/// Whether `program args` runs and succeeds (its output thrown away): a tool a test needs.
#[allow(dead_code)]
pub fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Where `program` is on `PATH`, when it is there.
#[allow(dead_code)]
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// A size limit read from the environment variable `var` (the matrix and frame caches')
/// that is not a size: `args` still succeed, with one warning naming the variable and the
/// default, escapes of the value not passed through; sizes as written are taken without a
/// word.
pub fn a_size_limit_that_is_not_a_size_is_said(var: &str, args: &[&str]) {
    let run = |value: &str| {
        Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .args(args)
            .env("NO_COLOR", "1")
            .env(var, value)
            .output()
            .expect("run frameaudit")
    };
    let o = run("lots\u{1b}[2J");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("frameaudit: warning: {var}="))
            && err.contains("not a size such as 4G, 500M or off; the default, 4G, is used")
            && !err.contains('\u{1b}'),
        "{err:?}"
    );
    for fine in ["500M", "off", "2GiB"] {
        let err = stderr(&run(fine));
        assert!(!err.contains(var), "{fine}: {err}");
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

/// Compares reports as docs/measures.md §0 says: integers exactly (8 == 8.0), floats within `tol`,
/// null vs number a mismatch, keys and list lengths exact. Returns the differences.
pub fn json_diff(actual: &Value, expected: &Value, tol: f64) -> Vec<String> {
    let mut out = Vec::new();
    walk(actual, expected, "$", tol, &mut out);
    out
}

fn walk(a: &Value, e: &Value, path: &str, tol: f64, out: &mut Vec<String>) {
    match (a, e) {
        (Value::Object(x), Value::Object(y)) => {
            for k in y.keys() {
                match x.get(k) {
                    Some(v) => walk(v, &y[k], &format!("{path}.{k}"), tol, out),
                    None => out.push(format!("{path}.{k}: missing")),
                }
            }
            for k in x.keys().filter(|k| !y.contains_key(*k)) {
                out.push(format!("{path}.{k}: unexpected"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                out.push(format!("{path}: length {} != {}", x.len(), y.len()));
                return;
            }
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                walk(p, q, &format!("{path}[{i}]"), tol, out);
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            let (p, q) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            if (p - q).abs() > tol || p.is_nan() != q.is_nan() {
                out.push(format!("{path}: {p} != {q}"));
            }
        }
        _ => {
            if a != e {
                out.push(format!("{path}: {a} != {e}"));
            }
        }
    }
}

/// How a guarded run ended.
#[derive(Debug)]
pub struct Guarded {
    pub output: Output,
    /// It was still running at the guard and was killed (with its process group).
    pub hung: bool,
}

/// Runs `cmd` (stdin an open pipe that is never written) and waits for it to exit by
/// itself, killing it and its process group after `guard`: a hang guard, not a timing.
/// Its address space is capped at 4 GiB (`ulimit -v`) so that a reader without a bound
/// fails instead of taking the machine's memory.
#[cfg(unix)]
pub fn run_guarded(program: &Path, args: &[String], guard: std::time::Duration) -> Guarded {
    run_guarded_env(program, args, &[], guard)
}

/// [`run_guarded`] with changes to the environment: `(name, Some(value))` sets, `(name,
/// None)` removes.
#[cfg(unix)]
pub fn run_guarded_env(
    program: &Path,
    args: &[String],
    env: &[(&str, Option<&str>)],
    guard: std::time::Duration,
) -> Guarded {
    run_guarded_within(program, args, env, 4 << 20, guard)
}

/// [`run_guarded_env`] with the address space capped at `kib` KiB instead of 4 GiB: a run
/// that needs more fails its allocation (an abort, for Rust) instead of taking the
/// machine's memory.
#[cfg(unix)]
pub fn run_guarded_within(
    program: &Path,
    args: &[String],
    env: &[(&str, Option<&str>)],
    kib: u64,
    guard: std::time::Duration,
) -> Guarded {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut command = Command::new("sh");
    for (k, v) in env {
        match v {
            Some(v) => command.env(k, v),
            None => command.env_remove(k),
        };
    }
    let mut child = command
        .arg("-c")
        .arg(format!("ulimit -v {kib} 2>/dev/null; exec \"$0\" \"$@\""))
        .arg(program)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("spawn");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stdin = child.stdin.take();
    let started = std::time::Instant::now();
    let mut hung = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if started.elapsed() > guard {
            hung = true;
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            break child.wait().expect("wait");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    drop(stdin);
    Guarded {
        output: Output {
            status,
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        },
        hung,
    }
}

/// Makes a named pipe at `path` with `mkfifo`; false (with a note) when there is none.
pub fn mkfifo(path: &Path) -> bool {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        skip_note(format_args!(
            "mkfifo failed or is absent; skipping the named-pipe case"
        ));
    }
    made
}

/// The file's columns and rows as pyarrow reads them, or `None` without pyarrow.
pub fn pyarrow_rows(file: &Path, dir: &Path) -> Option<(Vec<String>, Vec<Value>)> {
    let out = dir.join("rows.json");
    let o = Command::new("python3")
        .arg(repo().join("tests/sql/parquet_rows.py"))
        .arg(file)
        .arg(&out)
        .output()
        .ok()?;
    if o.status.code() == Some(3) {
        skip_note(format_args!(
            "pyarrow is absent; skipping the pyarrow check"
        ));
        return None;
    }
    assert!(
        o.status.success(),
        "pyarrow: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = read_json(&out);
    let cols = v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    Some((cols, v["rows"].as_array().unwrap().clone()))
}

/// A measure the presentations do not know yet, the share of harmful pairs: added to the
/// table of measures, it must appear in every presentation (tests/measures.rs, tests/tui.rs).
pub const ADDED_MEASURE: Measure = Measure {
    key: "harmful_pair_rate",
    label: "Harmful pairs",
    short: "h-pairs",
    width: 7,
    overview: Some("h-pairs"),
    describes: "harmful pair rate",
    unit: Unit::Percent,
    task: Task::Mcq,
    tone: Tone::Plain,
    value: |x| match x {
        Metrics::Mcq(x) => x.harmful_pair_rate,
        Metrics::Open(_) => None,
    },
    interval: None,
    at: None,
    sql: Twin::Computes,
    reference: Twin::Computes,
};

/// The shared harness runs (`../shared/data/harness-runs`, or `$FRAMEAUDIT_SHARED` in its
/// place), when this checkout has them; `None` with a printed note otherwise, as in a
/// user's clone.
pub fn shared_harness_runs() -> Option<PathBuf> {
    let p = shared_dir().join("data/harness-runs");
    if p.join("truth").is_dir() {
        Some(p)
    } else {
        skip_note(format_args!(
            "{} is absent; skipping the shared harness runs",
            p.display()
        ));
        None
    }
}

/// Extracts a tar (one of the shared media tars) into `dir`.
pub fn untar(tar: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let o = Command::new("tar")
        .arg("xf")
        .arg(tar)
        .arg("-C")
        .arg(dir)
        .output()
        .expect("tar");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
