//! The core: loading, the response matrix and every measure of docs/measures.md. Nothing here knows
//! about terminals; the CLI and the TUI only present what it computes.

pub mod analysis;
pub mod audit;
pub mod cache;
pub mod cell_frames;
pub mod column;
pub mod dataset;
pub mod diag;
pub mod figures;
pub mod frames;
pub mod fsread;
pub mod fswrite;
pub mod import;
pub mod intervene;
pub mod limit;
pub mod load;
pub mod matrix;
pub mod measures;
pub mod output;
pub mod paths;
pub mod plan;
pub mod queue;
pub mod replicate;
pub mod rerun;
pub mod rules;
pub mod sampling;
pub mod shard;
pub mod sql;
pub mod taxonomy;
pub mod text;
pub mod workspace;

/// When the program started ([`mark_start`]).
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Notes that the program starts now, for [`timing_since_start`] (`main` calls it first).
pub fn mark_start() {
    STARTED.get_or_init(std::time::Instant::now);
}

/// With `FRAMEAUDIT_TIMINGS` set, prints how long after the start of the program a moment
/// came (the first screen drawn), so a benchmark reads it without watching the screen.
pub fn timing_since_start(moment: &str) {
    if let Some(start) = STARTED.get() {
        timing(&format!("{moment} (since the start)"), *start);
    }
}

/// With `FRAMEAUDIT_TIMINGS` set, prints how long a phase took to stderr (for profiling).
pub fn timing(phase: &str, since: std::time::Instant) {
    if std::env::var_os("FRAMEAUDIT_TIMINGS").is_some() {
        // Resident memory where the system says it (Linux), for the memory budget of
        // the README's figures.
        let resident = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .map(|v| v.trim().to_string())
            })
            .map(|v| format!(", resident {v}"))
            .unwrap_or_default();
        // CPU time of the process so far (user + system, all threads), which a busy
        // machine does not inflate as it does wall time.
        let cpu = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|s| {
                let rest = s.rsplit_once(')')?.1;
                let f: Vec<&str> = rest.split_whitespace().collect();
                let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
                Some(format!(", cpu {:.2} s", ticks / 100.0))
            })
            .unwrap_or_default();
        eprintln!(
            "timing: {phase}: {:.1} ms{resident}{cpu}",
            since.elapsed().as_secs_f64() * 1e3
        );
    }
}
