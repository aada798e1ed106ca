//! What the benchmarks share: the audit screens' first screen, timed in process and for the
//! real binary in tmux, and a process's memory. Included by `mod common;` (benches/tui.rs,
//! benches/scale.rs); figures only, nothing is asserted.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use frameaudit::core::dataset::{defer_min_bytes, load_canonical_first};
use frameaudit::term::TuiOptions;
use frameaudit::tui::app::App;
use frameaudit::tui::{build_app, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// VmRSS and VmHWM of a process (`self` for this one), in MiB.
pub fn memory_mib(pid: &str) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// The audit screens opened in process on a dataset, reading its cells (no matrix cache),
/// up to their first screen drawn on a 120x40 test terminal.
pub struct FirstScreen {
    pub app: App,
    pub term: Terminal<TestBackend>,
    /// Seconds to load the dataset.
    pub load: f64,
    /// Seconds from the start to the first screen drawn (the load, the analyses of the
    /// queue, the audit file, the first draw).
    pub first: f64,
    /// The options the screens were opened with.
    pub opts: TuiOptions,
    /// When the opening started.
    pub started: Instant,
}

impl FirstScreen {
    /// Reads the replicates the first screen went without, as the binary's thread does
    /// behind it, and gives them to the screens: the seconds from the start until the
    /// queue's rows are judged, or `None` when nothing was left for later.
    pub fn judge(&mut self) -> Option<f64> {
        // The replicate files the first screen went without, as the binary leaves them.
        let deferred = self.app.ds.deferred.clone()?;
        let full = deferred.load(&self.app.ds.matrix).expect("whole read");
        let params = frameaudit::tui::queue_params(&self.opts);
        let report = frameaudit::core::analysis::run(&full.matrix, &params, None);
        self.app
            .attach_replicates(std::sync::Arc::new(full), report);
        view::render(&mut self.term, &mut self.app).expect("draw");
        Some(self.started.elapsed().as_secs_f64())
    }
}

/// Opens the audit screens on `dataset` as the binary does, its audit file `audit`.
pub fn first_screen(dataset: &Path, audit: &Path) -> FirstScreen {
    frameaudit::core::cache::disable();
    let t = Instant::now();
    let ds = load_canonical_first(dataset, None, defer_min_bytes()).expect("load");
    let load = t.elapsed().as_secs_f64();
    let opts = TuiOptions::plain("bench", audit.to_path_buf());
    let mut app = build_app(ds, &opts, || {}).expect("app");
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    view::render(&mut term, &mut app).expect("draw");
    let first = t.elapsed().as_secs_f64();
    FirstScreen {
        app,
        term,
        load,
        first,
        opts,
        started: t,
    }
}

/// The binary's start in tmux ([`tmux_first_screen`]).
pub struct BinaryStart {
    /// Seconds to the first screen by the binary's own clock (`FRAMEAUDIT_TIMINGS`).
    pub own: Option<f64>,
    /// Seconds until the pane, looked at every 100 ms, showed the queue; `None` when it did
    /// not within 90 s.
    pub shown: Option<f64>,
    /// Its VmRSS and VmHWM (MiB) two seconds after the first screen.
    pub memory: Option<(f64, f64)>,
}

/// A tmux command on the benchmark's own server (a socket of this process, an empty
/// configuration): a tmux the benchmark is run in, its environment and the user's
/// tmux.conf stay out of the pane measured.
fn tmux() -> Command {
    let conf = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bench-empty-{}.tmux.conf", std::process::id()));
    if !conf.exists() {
        std::fs::write(&conf, "").expect("an empty tmux.conf");
    }
    let mut c = Command::new("tmux");
    c.arg("-L")
        .arg(format!("frameaudit-bench-{}", std::process::id()))
        .arg("-f")
        .arg(conf)
        .env_remove("NO_COLOR")
        .env_remove("TMUX");
    c
}

/// Starts the binary in tmux on `dataset` with the matrix cache in `cache` and measures
/// how long the queue took to show and the memory the process then holds; `run` tells the
/// session and its timings file apart from another run's.
pub fn tmux_first_screen(dataset: &Path, cache: &Path, run: usize) -> BinaryStart {
    let name = format!("fa-bench-{}-{run}", std::process::id());
    // The binary says when it drew its first screen (its phases to a file); the pane is
    // looked at only every 100 ms, as each look starts a process that takes CPU from it.
    let timings = cache.with_extension(format!("timings-{run}"));
    let t = Instant::now();
    tmux()
        .args(["new-session", "-d", "-s", &name, "-x", "120", "-y", "40"])
        .arg(format!(
            "FRAMEAUDIT_TIMINGS=1 FRAMEAUDIT_CACHE_DIR='{}' exec {} {} --annotator tmuxbench 2>'{}'",
            cache.display(),
            env!("CARGO_BIN_EXE_frameaudit"),
            dataset.display(),
            timings.display()
        ))
        .output()
        .expect("tmux");
    let mut shown = None;
    while t.elapsed() < Duration::from_secs(90) {
        let out = tmux()
            .args(["capture-pane", "-p", "-t", &name])
            .output()
            .expect("capture");
        if String::from_utf8_lossy(&out.stdout).contains("audit queue") {
            shown = Some(t.elapsed().as_secs_f64());
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let own = std::fs::read_to_string(&timings).ok().and_then(|text| {
        text.lines().find_map(|l| {
            let ms = l.strip_prefix("timing: first screen (since the start): ")?;
            ms.split(" ms").next()?.parse::<f64>().ok()
        })
    });
    // The pane's process is frameaudit itself (`exec`). Its memory once the analyses of
    // the first screen are settled.
    let pid = tmux()
        .args(["display-message", "-p", "-t", &name, "#{pane_pid}"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    std::thread::sleep(Duration::from_secs(2));
    let memory = memory_mib(&pid);
    let _ = tmux().args(["kill-session", "-t", &name]).output();
    // It leaves as quitting does (on SIGHUP): wait until it has, so the next start does not
    // meet its lock.
    let gone = Instant::now();
    while !pid.is_empty()
        && Path::new(&format!("/proc/{pid}")).exists()
        && gone.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    BinaryStart {
        own: own.map(|ms| ms / 1e3),
        shown,
        memory,
    }
}

/// Whether tmux can be started (the binary's start is timed in it).
pub fn has_tmux() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}
