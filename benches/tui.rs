//! Responsiveness of the audit screens: `cargo bench --bench tui [-- CELLS]`.
//!
//! On a generated dataset of CELLS cells (default 1 million, e.g. `10m` for 10 million;
//! 5 models x 8 budgets, CELLS/40 items with questions, so at 1 M the queue has 100 000+
//! rows), prints:
//!   - start to first screen, in process (load, analyses, audit file, first draw) and for
//!     the real binary in tmux (from its start until its first screen is drawn, by its own
//!     clock, `FRAMEAUDIT_TIMINGS`, and when the pane, looked at every 100 ms, showed it),
//!     when tmux exists,
//!     with the binary's resident memory then (VmRSS, VmHWM) and per cell: the binary
//!     twice, reading the cells (and saving the matrix cache) and then from the cache;
//!   - fuzzy search: from each keystroke to its results drawn, through the search thread,
//!     median and 90th percentile over several typed queries;
//!   - redraw time of the queue and item screens (median, 90th percentile).
//!
//! `FRAMEAUDIT_BENCH_DIR=DIR` writes the generated dataset to DIR and keeps it.
//!
//! Figures only; nothing is asserted.

// Parts of it only benches/scale.rs reads (the replicates judged behind the first screen).
#[allow(dead_code)]
mod common;

use std::io::Write;
use std::path::Path;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use frameaudit::core::analysis::bootstrap::SplitMix64;
use frameaudit::core::workspace::search::Searcher;
use frameaudit::tui::app::Effect;
use frameaudit::tui::view;

const MODELS: usize = 5;
const BUDGETS: [u64; 8] = [0, 8, 16, 24, 32, 64, 128, 256];
const WORDS: [&str; 16] = [
    "what", "colour", "was", "the", "car", "how", "many", "people", "enter", "room", "which",
    "object", "falls", "first", "where", "kitchen",
];

/// `1000000`, `1m`, `10M`, `500k`: a number of cells.
fn parse_cells(arg: &str) -> Option<usize> {
    let a = arg.to_ascii_lowercase();
    let (digits, unit) = match a.strip_suffix('m') {
        Some(d) => (d, 1_000_000),
        None => match a.strip_suffix('k') {
            Some(d) => (d, 1_000),
            None => (a.as_str(), 1),
        },
    };
    digits.parse::<usize>().ok().map(|n| n * unit)
}

fn generate(dir: &Path, items_n: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut cells = std::io::BufWriter::new(std::fs::File::create(dir.join("cells.jsonl"))?);
    let mut items = std::io::BufWriter::new(std::fs::File::create(dir.join("items.jsonl"))?);
    let mut rng = SplitMix64::new(3);
    for i in 0..items_n {
        let q: Vec<&str> = (0..8)
            .map(|_| WORDS[(rng.next_u64() % 16) as usize])
            .collect();
        writeln!(
            items,
            "{{\"benchmark\":\"bench\",\"item_id\":\"item-{i:05}\",\"question\":\"{} (item {i})?\",\"options\":[\"A. a\",\"B. b\",\"C. c\",\"D. d\"],\"gold\":\"A\"}}",
            q.join(" ")
        )?;
    }
    for m in 0..MODELS {
        for i in 0..items_n {
            for (b, &f) in BUDGETS.iter().enumerate() {
                let p = 0.35 + 0.04 * b as f64 + 0.03 * m as f64;
                let right = ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p;
                let cfg = if f == 0 {
                    "textonly".to_string()
                } else {
                    format!("{f}f")
                };
                writeln!(
                    cells,
                    "{{\"model\":\"model-{m}\",\"benchmark\":\"bench\",\"item_id\":\"item-{i:05}\",\"config\":\"{cfg}\",\"frames\":{f},\"pred\":\"{}\",\"gold\":\"A\",\"confidence\":{:.2}}}",
                    if right { "A" } else { "B" },
                    (rng.next_u64() % 100) as f64 / 100.0
                )?;
            }
        }
    }
    // On disk before anything is timed, as a user's dataset is: the kernel writing 1.3 GB
    // back meanwhile took CPU from the starts measured.
    for mut f in [cells, items] {
        f.flush()?;
        f.get_ref().sync_all()?;
    }
    Ok(())
}

/// Starts the binary in tmux and prints how long the queue took to show, and the memory
/// the process then holds.
fn print_tmux_first_screen(dir: &Path, cache: &Path, cells: usize, run: usize, label: &str) {
    let start = common::tmux_first_screen(dir, cache, run);
    match (start.shown, start.own) {
        (Some(s), Some(own)) => println!(
            "start to first screen (binary in tmux, {label}): {own:.3} s by its own clock, seen on the pane within {s:.3} s"
        ),
        (Some(s), None) => println!("start to first screen (binary in tmux, {label}): {s:.3} s"),
        (None, _) => {
            println!("start to first screen (binary in tmux, {label}): not shown within 90 s")
        }
    }
    if let Some((rss, hwm)) = start.memory {
        let per = |mib: f64| mib * 1024.0 * 1024.0 / cells as f64;
        println!(
            "binary resident after first screen ({label}): {rss:.0} MiB ({:.0} B/cell), peak {hwm:.0} MiB ({:.0} B/cell)",
            per(rss),
            per(hwm)
        );
    }
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[(v.len() * 9 / 10).min(v.len() - 1)])
}

fn main() {
    let tmp = tempfile::tempdir().expect("tmp");
    // FRAMEAUDIT_BENCH_DIR=DIR keeps the generated dataset there, to try it by hand.
    let dir = std::env::var_os("FRAMEAUDIT_BENCH_DIR")
        .map_or_else(|| tmp.path().join("data"), std::path::PathBuf::from);
    let cells = std::env::args()
        .skip(1)
        .find_map(|a| parse_cells(&a))
        .unwrap_or(1_000_000);
    let items_n = (cells / (MODELS * BUDGETS.len())).max(1);
    let cells = items_n * MODELS * BUDGETS.len();
    let t = Instant::now();
    generate(&dir, items_n).expect("generate");
    println!(
        "frameaudit TUI benchmark: {cells} cells ({} MB of cells JSONL) generated in {:.1} s",
        std::fs::metadata(dir.join("cells.jsonl")).map_or(0, |m| m.len()) / 1_000_000,
        t.elapsed().as_secs_f64()
    );

    // Start to first screen, in process, reading the cells (no matrix cache).
    let common::FirstScreen {
        mut app,
        mut term,
        load,
        first,
        ..
    } = common::first_screen(&dir, &tmp.path().join("bench.audit.jsonl"));
    println!("queue rows: {}", app.queue.rows.len());
    println!("start to first screen (in process): {first:.3} s (load {load:.3} s)");
    // Its fingerprint is computed after the first screen: let it finish before the binary
    // is timed, so the two do not share the cores.
    app.wait_fingerprint();
    assert!(app.session.wait_saved(Duration::from_secs(30)));

    if common::has_tmux() {
        // Twice, with a cache directory of its own: the first start reads the cells and
        // saves the matrix, the second opens from that cache (as every later start does).
        let cache = tmp.path().join("cache");
        for (run, label) in [(0, "reading the cells"), (1, "from the matrix cache")] {
            let audits = dir.join("audits");
            let _ = std::fs::remove_dir_all(&audits);
            print_tmux_first_screen(&dir, &cache, cells, run, label);
        }
        println!(
            "matrix cache: {} MB",
            std::fs::read_dir(&cache)
                .map(|d| d
                    .flatten()
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum::<u64>())
                .unwrap_or(0)
                / 1_000_000
        );
    }

    // Fuzzy search: keystroke to results on screen.
    let (tx, rx) = channel();
    let searcher = Searcher::spawn(move |r| {
        let _ = tx.send(r);
    })
    .expect("search thread");
    let mut latencies = Vec::new();
    for query in ["colour car", "kitchen falls", "item 1234", "people enter"] {
        app.on_key(KeyEvent::new(KeyCode::Char('/'), KeyModifiers::NONE));
        for c in query.chars() {
            let t = Instant::now();
            let effects = app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
            if effects.contains(&Effect::Search) {
                searcher.request(app.search_request());
                // Results for this keystroke (older ones are dropped by the worker).
                loop {
                    let r = rx
                        .recv_timeout(Duration::from_secs(10))
                        .expect("search result");
                    let done = r.generation == app.queue.search_generation;
                    app.on_search_result(r);
                    if done {
                        break;
                    }
                }
            }
            view::render(&mut term, &mut app).expect("draw");
            latencies.push(t.elapsed().as_secs_f64() * 1e3);
        }
        app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    }
    let (med, p90) = stats(latencies.clone());
    println!(
        "fuzzy search over {} rows, keystroke to results drawn: median {med:.1} ms, p90 {p90:.1} ms ({} keystrokes)",
        app.queue.rows.len(),
        latencies.len()
    );

    // Redraws.
    for (label, open) in [("queue", false), ("item", true)] {
        if open {
            app.update(frameaudit::tui::input::action::Action::Open);
        }
        let times: Vec<f64> = (0..200)
            .map(|_| {
                let t = Instant::now();
                view::render(&mut term, &mut app).expect("draw");
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let (med, p90) = stats(times);
        println!("redraw of the {label} screen (120x40): median {med:.2} ms, p90 {p90:.2} ms");
    }

    // Researcher views: switching the analysis (each switch builds a view not seen before:
    // one analysis recomputed with the cascade sweep and the data maps) as the worker does
    // it, off the UI thread: the keystroke and its first draw ("computing…"), then the
    // build, then the draw of the built view. The bootstrap after it is timed apart.
    use frameaudit::tui::input::action::Action;
    use frameaudit::tui::research::{ViewReply, answer};
    app.research.worker = true;
    app.update(Action::Back);
    let (mut key, mut build) = (Vec::new(), Vec::new());
    let mut boot = None;
    for action in [
        Action::Overview,
        Action::ToggleZeroFrame,
        Action::NextModelSet,
        Action::NextModelSet,
        Action::ToggleZeroFrame,
        Action::NextModelSet,
    ] {
        let t = Instant::now();
        app.update(action);
        view::render(&mut term, &mut app).expect("draw");
        key.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let Some(mut req) = app.view_request() else {
            continue;
        };
        let b = std::mem::replace(&mut req.b, 0);
        let mut replies = Vec::new();
        answer(req, &|| false, &mut |r| replies.push(r));
        for r in replies {
            if let ViewReply::Built(d) = &r {
                boot.get_or_insert((d.clone(), b));
            }
            app.on_research(r);
        }
        view::render(&mut term, &mut app).expect("draw");
        build.push(t.elapsed().as_secs_f64() * 1e3);
    }
    for (what, times) in [
        ("keystroke + redraw", key),
        ("build on the worker + redraw", build),
    ] {
        let (med, p90) = stats(times.clone());
        let max = times.iter().copied().fold(0.0, f64::max);
        println!(
            "switch analysis, {what} ({cells} cells, new view each time): median {med:.1} ms, p90 {p90:.1} ms, max {max:.1} ms"
        );
    }
    if let Some((data, b)) = boot {
        let t = Instant::now();
        let _ = frameaudit::tui::research::intervals_of(&data, b, app.research.params.seed);
        println!(
            "bootstrap of one view (B={b}, on the worker): {:.3} s",
            t.elapsed().as_secs_f64()
        );
    }
    for (i, v) in frameaudit::tui::research::View::ALL.iter().enumerate() {
        app.update(Action::ShowView(i));
        let times: Vec<f64> = (0..50)
            .map(|_| {
                let t = Instant::now();
                view::render(&mut term, &mut app).expect("draw");
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let (med, p90) = stats(times);
        println!(
            "redraw of the {} view (120x40): median {med:.2} ms, p90 {p90:.2} ms",
            v.title()
        );
    }
}
