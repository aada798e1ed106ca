//! Scale benchmark: `cargo bench --bench scale [-- SIZES]` (default `1,2,10` million cells).
//!
//! For each size it generates a response matrix of 5 models x 10 budgets (text-only plus
//! nine frame budgets) over two benchmarks, as a per-item CSV and as cells JSONL, and then
//! measures, each in a fresh process so peak memory is that run's own:
//!   - load time, analysis time and peak memory (VmHWM) of `report --boot 0` in process;
//!   - the wall time of the real command `frameaudit report FILE --json --boot 0` and with
//!     the default bootstrap (B = 1000), reading the cells, and of the first (`--boot 0`)
//!     opened from its matrix cache ("cached s");
//!   - the pandas baseline (benches/pandas_baseline.py) on the same CSV, when pandas is
//!     installed, and the speed-up (by the script's own clock);
//!   - the CSV's cells as Parquet (`frameaudit cells -o`, up to 2 million cells): load,
//!     analyses, peak memory and the command's wall time, and its ratio to the CSV's;
//!   - side by side on the same CSV, `frameaudit report --json --boot 0`, DuckDB running a
//!     lean hand-written query of the Table-2 measures and running `frameaudit sql`'s whole
//!     script (benches/duckdb_baseline.py), polars (benches/polars_baseline.py) and pandas,
//!     each tool's wall time (median of 3, 1 above 2 million cells, frameaudit's of 11 and
//!     3; pandas up to 10 million, where it holds about 4 GB)
//!     and its ratio to frameaudit's, twice: by the Python tool's own clock (the median
//!     run, its imports excluded) and as a whole command (that run plus the process's
//!     start-up: the interpreter, the imports), the way frameaudit's command is timed.
//!
//! `cargo bench --bench scale -- configs [K,...]` measures instead one item under K
//! configurations (default 10 000, 100 000 and 1 000 000; budgets 1, 1, 2, 2, ..., so
//! about K²/2 comparable pairs), without and with confidences (the cascade then has K
//! stages): file size, load and report time and peak memory in process with B = 0 and
//! B = 1000, and the wall time of `frameaudit report FILE --json`.
//!
//! `cargo bench --bench scale -- benchmarks [B,...]` measures instead many small
//! benchmarks (default 12 500 and 100 000; one model, one item and two configurations each,
//! as a per-item CSV: the shape of issue 37's input, where time grew with B²; the two
//! configurations shared by every benchmark, then named after each): the wall time
//! of `frameaudit list FILE` and `frameaudit report FILE --json --boot 0`, and in process
//! the load, the analyses, the queue, the report JSON and the audit screens' first screen
//! (its analyses, queue and first draw), each with its time per benchmark.
//!
//! `cargo bench --bench scale -- replicates [SIZES]` measures instead the scale matrix
//! (default 1 and 10 million cells) alone and with one replicate per cell (docs/measures.md
//! §16), written right after its cell: half the items re-run (`rerun-1`, nuisance `rerun`,
//! answers flipping at 3%), half on a shifted grid (`phase-1`, `phase`, 15%), so 2 and 20
//! million lines. For the cells JSONL and the per-item CSV of both: load, analyses and peak
//! memory in process, the wall time of `frameaudit report FILE --json --boot 0` reading the
//! cells (median of 3, 1 above 2 million cells) and from the matrix cache (median of 5),
//! each with its ratio to the canonical file's; for the JSONL, the
//! audit screens' first screen in process (benches/common, as the binary opens them: median
//! of 3, 1 above 2 million), its peak memory and ratio, and the binary's start to its first
//! screen in tmux by its own clock, when tmux exists. The same cells are also laid out as a
//! dataset directory, as imports of replicates leave one (`cells.jsonl`, and
//! `replicates/rerun-1.jsonl`, `replicates/phase-1.jsonl`; input `dataset`): the screens
//! open on its canonical cells and read the replicates behind the first screen, and
//! `judged s` is the time from the start until the queue's rows are judged.
//!
//! Figures are printed; nothing is asserted (speed is measured, not tested).

// Parts of it only benches/tui.rs reads (the terminal of the first screen, the pane).
#[allow(dead_code)]
mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use frameaudit::core::analysis::bootstrap::SplitMix64;
use frameaudit::core::analysis::params::Params;
use frameaudit::core::dataset::load_dataset;

const MODELS: usize = 5;
const BUDGETS: [u64; 10] = [0, 4, 8, 16, 24, 32, 48, 64, 128, 256];

fn config_name(frames: u64) -> String {
    if frames == 0 {
        "textonly".into()
    } else {
        format!("{frames}f_151k")
    }
}

/// The largest size the modes counted in millions take: 100 million cells already write
/// about 25 GB of input (and the `replicates` mode more than three times that).
const MOST_MILLIONS: f64 = 100.0;

/// Sizes given in millions of cells (`1,2.5,10`), as cell counts. A size that is not a
/// positive number, or above [`MOST_MILLIONS`] (`1000000` meant as a cell count would
/// otherwise fill the disk with a trillion cells), ends the benchmark with a message.
fn millions(arg: &str) -> Vec<usize> {
    let mut sizes = Vec::new();
    for s in arg.split(',') {
        match s.trim().parse::<f64>() {
            Ok(m) if m > 0.0 && m <= MOST_MILLIONS => sizes.push((m * 1_000_000.0) as usize),
            _ => {
                eprintln!(
                    "scale: sizes are millions of cells, from above 0 to {MOST_MILLIONS} (\"1,10\" is 1 and 10 million); got {s:?}"
                );
                std::process::exit(2);
            }
        }
    }
    sizes
}

/// A synthetic item's answer: models get better with budget on average, items flip.
fn correct(rng: &mut SplitMix64, model: usize, budget_index: usize, difficulty: f64) -> bool {
    let skill = 0.35 + 0.05 * model as f64 + 0.04 * budget_index as f64 - difficulty;
    ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < skill.clamp(0.02, 0.98)
}

/// The replicate of the cells of an item in the `replicates` mode, by item: half the items
/// re-run (answers flipping at 3%), half on a grid shifted by half a step (15%).
fn replicate_of(item: usize) -> (&'static str, &'static str, f64) {
    if (item / 2).is_multiple_of(2) {
        ("rerun-1", "rerun", 0.03)
    } else {
        ("phase-1", "phase", 0.15)
    }
}

/// The dataset directory [`generate`] writes with `replicates`: the same cells laid out as
/// an import of replicates leaves them, the canonical ones in `cells.jsonl` and each
/// replicate's in `replicates/NAME.jsonl`.
fn dataset_dir(dir: &Path, cells: usize) -> PathBuf {
    dir.join(format!("dataset_{cells}"))
}

/// Writes `cells` cells (rounded to whole items) as per-item CSV and as cells JSONL; with
/// `replicates`, each cell is followed by one replicate of it ([`replicate_of`]), the
/// canonical cells being those written without, and the same lines go to a dataset
/// directory too ([`dataset_dir`]).
fn generate(dir: &Path, cells: usize, replicates: bool) -> std::io::Result<(PathBuf, PathBuf)> {
    let items = cells / (MODELS * BUDGETS.len());
    let tag = if replicates { "_replicates" } else { "" };
    let csv_path = dir.join(format!("cells_{cells}{tag}.csv"));
    let jsonl_path = dir.join(format!("cells_{cells}{tag}.jsonl"));
    let mut csv = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&csv_path)?);
    let mut jsonl = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&jsonl_path)?);
    writeln!(
        csv,
        "sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct,source_tag,protocol_note{}",
        if replicates {
            ",replicate,nuisance"
        } else {
            ""
        }
    )?;
    let ds = dataset_dir(dir, cells);
    let mut layout = if replicates {
        std::fs::create_dir_all(ds.join("replicates"))?;
        let open = |p: PathBuf| {
            std::fs::File::create(p).map(|f| std::io::BufWriter::with_capacity(1 << 20, f))
        };
        let mut reps = std::collections::BTreeMap::new();
        for name in ["rerun-1", "phase-1"] {
            reps.insert(name, open(ds.join(format!("replicates/{name}.jsonl")))?);
        }
        Some((open(ds.join("cells.jsonl"))?, reps))
    } else {
        None
    };
    let mut rng = SplitMix64::new(7);
    // The replicates' own stream: the canonical cells are those of the file without.
    let mut rep_rng = SplitMix64::new(11);
    let letters = ["A", "B", "C", "D"];
    for model in 0..MODELS {
        for item in 0..items {
            let split = if item % 2 == 0 { "bench-a" } else { "bench-b" };
            let difficulty = ((item * 7919) % 1000) as f64 / 2500.0;
            let gold = letters[item % 4];
            for (b, &frames) in BUDGETS.iter().enumerate() {
                let ok = correct(&mut rng, model, b, difficulty);
                let wrong = letters[(item + 1 + b % 3) % 4];
                let pred = if ok { gold } else { wrong };
                let pixels = if frames == 0 { 0 } else { 151_200 };
                let config = config_name(frames);
                let conf = (rng.next_u64() % 101) as f64 / 100.0;
                let mut lines = vec![(pred, ok, conf, None)];
                if replicates {
                    let (name, nuisance, p) = replicate_of(item);
                    let flip = ((rep_rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p;
                    let ok = ok != flip;
                    let conf = (rep_rng.next_u64() % 101) as f64 / 100.0;
                    lines.push((
                        if ok { gold } else { wrong },
                        ok,
                        conf,
                        Some((name, nuisance)),
                    ));
                }
                for (pred, ok, conf, rep) in lines {
                    let (csv_rep, json_rep) = match rep {
                        Some((r, n)) => (
                            format!(",{r},{n}"),
                            format!(",\"replicate\":\"{r}\",\"nuisance\":\"{n}\""),
                        ),
                        None if replicates => (",,".into(), String::new()),
                        None => (String::new(), String::new()),
                    };
                    writeln!(
                        csv,
                        "{item:07},model-{model},{split},{config},{frames},{pixels},{pred},{gold},{},synthetic,{csv_rep}",
                        u8::from(ok)
                    )?;
                    let line = format!(
                        "{{\"model\":\"model-{model}\",\"benchmark\":\"{split}\",\"item_id\":\"{item:07}\",\"config\":\"{config}\",\"frames\":{frames},\"pixels\":{pixels},\"pred\":\"{pred}\",\"gold\":\"{gold}\",\"confidence\":{conf},\"source_tag\":\"synthetic\"{json_rep}}}"
                    );
                    writeln!(jsonl, "{line}")?;
                    if let Some((cells, reps)) = &mut layout {
                        match rep.and_then(|(name, _)| reps.get_mut(name)) {
                            Some(f) => writeln!(f, "{line}")?,
                            None => writeln!(cells, "{line}")?,
                        }
                    }
                }
            }
        }
    }
    // On disk before anything is timed: the kernel's writeback would take CPU from the
    // runs measured.
    let mut files = vec![csv, jsonl];
    if let Some((cells, reps)) = layout {
        files.push(cells);
        files.extend(reps.into_values());
    }
    for mut f in files {
        f.flush()?;
        f.get_ref().sync_all()?;
    }
    Ok((csv_path, jsonl_path))
}

/// One model, one item, `k` configurations as cells JSONL: budgets 1, 1, 2, 2, ... (pairs of
/// equal budgets), right or wrong at random, with a confidence when `confidence`.
fn generate_one_item(dir: &Path, k: usize, confidence: bool) -> std::io::Result<PathBuf> {
    let path = dir.join(format!(
        "one_item_{k}{}.jsonl",
        if confidence { "_conf" } else { "" }
    ));
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path)?);
    let mut rng = SplitMix64::new(13);
    for i in 0..k {
        let ok = rng.next_u64().is_multiple_of(2);
        write!(
            out,
            "{{\"model\":\"m\",\"item_id\":\"q1\",\"config\":\"c{i:07}\",\"frames\":{},\"correct\":{ok}",
            i / 2 + 1
        )?;
        if confidence {
            write!(
                out,
                ",\"confidence\":{}",
                (rng.next_u64() % 101) as f64 / 100.0
            )?;
        }
        writeln!(out, "}}")?;
    }
    out.flush()?;
    Ok(path)
}

/// The `configs` mode: one item under each number of configurations.
fn one_item_configs(sizes: &[usize]) {
    let tmp = tempfile::tempdir().expect("tmp");
    println!("frameaudit scale benchmark: one model, one item, K configurations");
    println!(
        "{:>9} {:>6} {:>8} {:>8} {:>9} {:>9} {:>10} {:>10} {:>8}",
        "K", "conf", "file MB", "load s", "report s", "peak MiB", "B=1000 s", "peak MiB", "cmd s"
    );
    for &k in sizes {
        for confidence in [false, true] {
            let path = generate_one_item(tmp.path(), k, confidence).expect("generate");
            let mb = std::fs::metadata(&path).map_or(0.0, |m| m.len() as f64 / 1e6);
            let (load, analyse, peak) = in_process(&path, 0);
            let (_, analyse_b, peak_b) = in_process(&path, 1000);
            let p = path.to_str().expect("utf8");
            let cmd = command_seconds(&["report", p, "--json"], 1, None);
            println!(
                "{k:>9} {:>6} {mb:>8.1} {load:>8.3} {analyse:>8.3} {peak:>9.0} {analyse_b:>9.3} {peak_b:>10.0} {cmd:>8.3}",
                if confidence { "yes" } else { "no" }
            );
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// `b` benchmarks of one item each, answered by one model under two configurations, as a
/// per-item CSV; the answers flip at random, so about a quarter of the items are harmful.
/// The configurations are `8f` and `32f` throughout, or with `own` named after the
/// benchmark (`b000012-8f`): a dataset of 2b configurations.
fn generate_benchmarks(dir: &Path, b: usize, own: bool) -> std::io::Result<PathBuf> {
    let path = dir.join(format!("benchmarks_{b}_{own}.csv"));
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path)?);
    writeln!(
        out,
        "sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct,source_tag,protocol_note"
    )?;
    let mut rng = SplitMix64::new(37);
    for i in 0..b {
        for (config, frames) in [("8f", 8), ("32f", 32)] {
            let ok = rng.next_u64().is_multiple_of(2);
            let prefix = if own {
                format!("b{i:06}-")
            } else {
                String::new()
            };
            writeln!(
                out,
                "q,m,b{i:06},{prefix}{config},{frames},,{},A,,,",
                if ok { "A" } else { "B" }
            )?;
        }
    }
    out.flush()?;
    out.get_ref().sync_all()?;
    Ok(path)
}

/// Child mode of the `benchmarks` mode: prints the seconds of load, analyses, queue, report
/// JSON and the audit screens' first screen (from the loaded dataset to its first draw).
fn child_benchmarks(path: &Path) {
    frameaudit::core::cache::disable();
    let mut times = Vec::new();
    let mut t = Instant::now();
    let mut lap = |times: &mut Vec<f64>| {
        times.push(t.elapsed().as_secs_f64());
        t = Instant::now();
    };
    let ds = load_dataset(path, None).expect("load");
    lap(&mut times);
    let params = Params {
        bootstrap_b: 0,
        ..Params::default()
    };
    let report = frameaudit::core::analysis::run(&ds.matrix, &params, None);
    lap(&mut times);
    let protocol = ds.matrix.protocols.get("main").expect("main");
    let rows = frameaudit::core::queue::queue(
        &report,
        protocol,
        frameaudit::core::queue::QueueKind::Harmful,
    );
    assert!(!rows.is_empty());
    lap(&mut times);
    report
        .write_json(&ds.matrix, std::io::sink(), false)
        .expect("json");
    lap(&mut times);
    let tmp = tempfile::tempdir().expect("tmp");
    let opts = frameaudit::term::TuiOptions::plain("bench", tmp.path().join("bench.audit.jsonl"));
    let mut app = frameaudit::tui::build_app(ds, &opts, || {}).expect("app");
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).expect("terminal");
    frameaudit::tui::view::render(&mut term, &mut app).expect("draw");
    lap(&mut times);
    app.wait_fingerprint();
    let text: Vec<String> = times.iter().map(|s| format!("{s:.3}")).collect();
    println!("{}", text.join(" "));
}

/// The `benchmarks` mode: many benchmarks of one item each.
fn many_benchmarks(sizes: &[usize]) {
    let tmp = tempfile::tempdir().expect("tmp");
    println!(
        "frameaudit scale benchmark: B benchmarks of one item, one model, two configurations (shared by every benchmark, or each one's own)"
    );
    println!(
        "{:>8} {:>7} {:>7} {:>7} {:>9} {:>7} {:>8} {:>7} {:>7} {:>7} {:>9}",
        "B",
        "configs",
        "file MB",
        "list s",
        "report s",
        "load s",
        "analyses",
        "queue s",
        "json s",
        "tui s",
        "list us/B"
    );
    for (&b, own) in sizes.iter().flat_map(|b| [(b, false), (b, true)]) {
        let path = generate_benchmarks(tmp.path(), b, own).expect("generate");
        let mb = std::fs::metadata(&path).map_or(0.0, |m| m.len() as f64 / 1e6);
        let p = path.to_str().expect("utf8");
        let list = command_seconds(&["list", p], 1, None);
        let report = command_seconds(&["report", p, "--json", "--boot", "0"], 1, None);
        let v = child_figures(&["--child-benchmarks", p], 5);
        println!(
            "{b:>8} {:>7} {mb:>7.1} {list:>7.3} {report:>9.3} {:>7.3} {:>8.3} {:>7.3} {:>7.3} {:>7.3} {:>9.1}",
            if own { "own" } else { "shared" },
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            list / b as f64 * 1e6
        );
        let _ = std::fs::remove_file(&path);
    }
}

/// Child mode of the `replicates` mode: the audit screens opened on one input up to their
/// first screen, as the binary opens them, then until the replicates it left for later are
/// read and judged; prints "load_s first_s judged_s peak_mib" (judged NaN when nothing
/// was left for later; the peak is the whole run's).
fn child_first_screen(path: &Path) {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut screen = common::first_screen(path, &tmp.path().join("bench.audit.jsonl"));
    let judged = screen.judge().unwrap_or(f64::NAN);
    let peak = common::memory_mib("self").map_or(f64::NAN, |(_, hwm)| hwm);
    println!(
        "{:.3} {:.3} {judged:.3} {peak:.0}",
        screen.load, screen.first
    );
    // The fingerprint is computed after the first screen: not timed, but not left running
    // into the next measurement either.
    screen.app.wait_fingerprint();
}

/// The first screen of `path` in a fresh process, the median of `runs` by its time:
/// (first screen s, replicates judged s or NaN, peak MiB).
fn first_screen_seconds(path: &Path, runs: usize) -> (f64, f64, f64) {
    let mut v: Vec<(f64, f64, f64)> = (0..runs)
        .map(|_| {
            let v = child_figures(&["--child-first-screen", path.to_str().expect("utf8")], 4);
            (v[1], v[2], v[3])
        })
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v[v.len() / 2]
}

/// The size of an input in MB: a file's, or a dataset directory's cells files together.
fn input_mb(path: &Path) -> f64 {
    fn bytes(p: &Path) -> u64 {
        match std::fs::read_dir(p) {
            Ok(entries) => entries.flatten().map(|e| bytes(&e.path())).sum(),
            Err(_) => std::fs::metadata(p).map_or(0, |m| m.len()),
        }
    }
    bytes(path) as f64 / 1e6
}

/// The `replicates` mode: the scale matrix alone and with one replicate per cell.
fn with_replicates(sizes: &[usize]) {
    let tmp = tempfile::tempdir().expect("tmp");
    println!(
        "frameaudit scale benchmark, replicates: {MODELS} models x {} budgets, two benchmarks, alone (canonical) and with one replicate per cell after it (+reps: half the items rerun-1/rerun, flipping 3%, half phase-1/phase, 15%)",
        BUDGETS.len()
    );
    println!(
        "{:>10} {:>7} {:>10} {:>8} {:>8} {:>9} {:>8} {:>8} {:>6} {:>8} {:>6} {:>9} {:>8} {:>6} {:>9} {:>9}",
        "canonical",
        "input",
        "cells",
        "file MB",
        "load s",
        "analyses",
        "peak MiB",
        "cmd s",
        "ratio",
        "cached s",
        "ratio",
        "screen s",
        "peak MiB",
        "ratio",
        "judged s",
        "binary s"
    );
    let tmux = common::has_tmux();
    for &cells in &sizes.to_vec() {
        let t = Instant::now();
        let canonical = generate(tmp.path(), cells, false).expect("generate");
        let replicated = generate(tmp.path(), cells, true).expect("generate");
        eprintln!(
            "  generated {cells} cells and their replicates in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let runs = if cells <= 2_000_000 { 3 } else { 1 };
        // The dataset directory as imports leave it (replicates/NAME.jsonl): its canonical
        // cells are the canonical cells file's.
        let directory = dataset_dir(tmp.path(), cells);
        for kind in ["jsonl", "csv", "dataset"] {
            let (mut base_cmd, mut base_cached, mut base_screen) = (f64::NAN, f64::NAN, f64::NAN);
            for (label, files) in [("canonical", &canonical), ("+reps", &replicated)] {
                let path = match kind {
                    "csv" => &files.0,
                    "dataset" if label == "+reps" => &directory,
                    _ => &files.1,
                };
                let mb = input_mb(path);
                let (load, analyse, peak) = in_process(path, 0);
                let p = path.to_str().expect("utf8");
                let report = ["report", p, "--json", "--boot", "0"];
                let cmd = command_seconds(&report, runs, None);
                // From the matrix cache, a large input's default from its second run on:
                // written by a first run (the files must have settled, two seconds), read by
                // the next ones (median of 5).
                let cache = tmp.path().join(format!("matrix-{kind}-{label}-{cells}"));
                std::thread::sleep(std::time::Duration::from_secs(2));
                command_seconds(&report, 1, Some(&cache));
                let cached = command_seconds(&report, 5, Some(&cache));
                let _ = std::fs::remove_dir_all(&cache);
                // The audit screens of the cells (the CSV's are the same as the file's).
                let (screen, judged, screen_peak, binary) = if kind != "csv" {
                    let (first, judged, peak) = first_screen_seconds(path, runs);
                    let binary = if tmux {
                        let cache = tmp.path().join(format!("cache-{kind}-{label}-{cells}"));
                        let run = if label == "canonical" { 0 } else { 1 };
                        common::tmux_first_screen(path, &cache, run).own
                    } else {
                        None
                    };
                    (first, judged, peak, binary)
                } else {
                    (f64::NAN, f64::NAN, f64::NAN, None)
                };
                if label == "canonical" {
                    (base_cmd, base_cached, base_screen) = (cmd, cached, screen);
                }
                let n = if label == "canonical" {
                    cells
                } else {
                    2 * cells
                };
                let or_dash = |v: f64, text: String| if v.is_nan() { "-".into() } else { text };
                println!(
                    "{cells:>10} {kind:>7} {n:>10} {mb:>8.0} {load:>8.3} {analyse:>8.3} {peak:>9.0} {cmd:>8.3} {:>6} {cached:>8.3} {:>6} {:>9} {:>8} {:>6} {:>9} {:>9}",
                    format!("{:.2}", cmd / base_cmd),
                    format!("{:.2}", cached / base_cached),
                    or_dash(screen, format!("{screen:.3}")),
                    or_dash(screen_peak, format!("{screen_peak:.0}")),
                    or_dash(screen, format!("{:.2}", screen / base_screen)),
                    or_dash(judged, format!("{judged:.3}")),
                    binary.map_or("-".into(), |b| format!("{b:.3}")),
                );
            }
        }
        let _ = std::fs::remove_dir_all(&directory);
        for f in [canonical.0, canonical.1, replicated.0, replicated.1] {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Peak resident memory of this process, in MiB.
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Child mode: load and analyse one file, print "load_s analyse_s peak_mib".
fn child(path: &Path, boot: usize) {
    // Parsing is what this measures.
    frameaudit::core::cache::disable();
    let t0 = Instant::now();
    let ds = load_dataset(path, None).expect("load");
    let load = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let params = Params {
        bootstrap_b: boot,
        ..Params::default()
    };
    let report = frameaudit::core::analysis::run(&ds.matrix, &params, None);
    let mut sink = std::io::sink();
    report
        .write_json(&ds.matrix, &mut sink, false)
        .expect("json");
    let analyse = t1.elapsed().as_secs_f64();
    println!("{load:.3} {analyse:.3} {:.0}", peak_mib());
}

fn in_process(path: &Path, boot: usize) -> (f64, f64, f64) {
    let boot = boot.to_string();
    let v = child_figures(&["--child", path.to_str().expect("utf8"), &boot], 3);
    (v[0], v[1], v[2])
}

/// Runs this benchmark again in a child mode (`args`), in a fresh process so its peak
/// memory is its own, and reads the `n` figures it prints.
fn child_figures(args: &[&str], n: usize) -> Vec<f64> {
    let out = Command::new(std::env::current_exe().expect("exe"))
        .args(args)
        .output()
        .expect("child");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() != n {
        panic!(
            "child failed: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    v
}

/// Median wall time of the real command over `runs` runs, reading the cells (no matrix
/// cache), or with the matrix cache in `cache`.
fn command_seconds(args: &[&str], runs: usize, cache: Option<&Path>) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_frameaudit"));
            match cache {
                // Every input cached, a small CSV too: the ratios set cached against cached.
                Some(dir) => cmd
                    .env("FRAMEAUDIT_CACHE_DIR", dir)
                    .env("FRAMEAUDIT_CACHE_MIN_BYTES", "0"),
                None => cmd.env("FRAMEAUDIT_CACHE", "off"),
            };
            let out = cmd
                .args(args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .expect("run frameaudit");
            assert!(out.success(), "frameaudit {args:?} failed");
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn pandas_seconds(csv: &Path, runs: usize) -> Option<Baseline> {
    baseline_seconds("pandas", &[csv.as_os_str()], runs)
}

/// A Python baseline's time: by its own clock (the median run, the interpreter's start and
/// the imports excluded) and as a whole command (one run with the process's start-up, as
/// frameaudit's command is timed).
#[derive(Clone, Copy)]
struct Baseline {
    script: f64,
    process: f64,
}

/// The number after `label` in a baseline's last line (`... total 1.234 s, runs 3.702 s`).
fn labelled(line: &str, label: &str) -> Option<f64> {
    let rest = line.split(&format!("{label} ")).nth(1)?;
    rest.split(" s").next()?.trim().parse().ok()
}

/// Runs benches/NAME_baseline.py with `args` and `--repeat`, and reads its median and the
/// sum of its runs off its last line: the process's wall time less that sum is its start-up,
/// which one run as a command pays. `None` when Python or the library is missing (a note
/// says so).
fn baseline_seconds(name: &str, args: &[&std::ffi::OsStr], repeat: usize) -> Option<Baseline> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/{name}_baseline.py"));
    let t = Instant::now();
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .args(["--repeat", &repeat.to_string()])
        .output()
        .ok()?;
    let wall = t.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout);
    let prefix = format!("{name}_baseline:");
    let Some(last) = text.lines().rev().find(|l| l.starts_with(&prefix)) else {
        eprintln!(
            "  note: the {name} baseline did not run: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return None;
    };
    let (script, runs) = (labelled(last, "total")?, labelled(last, "runs")?);
    Some(Baseline {
        script,
        process: wall - runs + script,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        child(Path::new(&args[2]), args[3].parse().expect("boot"));
        return;
    }
    if args.get(1).map(String::as_str) == Some("--child-first-screen") {
        child_first_screen(Path::new(&args[2]));
        return;
    }
    if args.get(1).map(String::as_str) == Some("--child-benchmarks") {
        child_benchmarks(Path::new(&args[2]));
        return;
    }
    // `cargo bench` passes `--bench`; the first other argument, if any, lists sizes.
    let mut plain = args.iter().skip(1).filter(|a| !a.starts_with('-'));
    if args.iter().any(|a| a == "configs") {
        let sizes: Vec<usize> = plain
            .find(|a| *a != "configs")
            .map_or("10000,100000,1000000", |s| s.as_str())
            .split(',')
            .filter_map(|s| s.parse().ok())
            .collect();
        one_item_configs(&sizes);
        return;
    }
    if args.iter().any(|a| a == "benchmarks") {
        let sizes: Vec<usize> = plain
            .find(|a| *a != "benchmarks")
            .map_or("12500,100000", |s| s.as_str())
            .split(',')
            .filter_map(|s| s.parse().ok())
            .collect();
        many_benchmarks(&sizes);
        return;
    }
    if args.iter().any(|a| a == "replicates") {
        let sizes = millions(
            plain
                .find(|a| *a != "replicates")
                .map_or("1,10", |s| s.as_str()),
        );
        with_replicates(&sizes);
        return;
    }
    let sizes = millions(plain.next().map_or("1,2,10", |s| s.as_str()));
    let tmp = tempfile::tempdir().expect("tmp");
    println!(
        "frameaudit scale benchmark: {MODELS} models x {} budgets, two benchmarks",
        BUDGETS.len()
    );
    println!(
        "{:>10} {:>6} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>9} {:>9}",
        "cells",
        "input",
        "load s",
        "report s",
        "peak MiB",
        "cmd s",
        "cmd B=1000",
        "per M s",
        "cached s",
        "pandas s"
    );
    let mut side_by_side = Vec::new();
    for &cells in &sizes {
        let t = Instant::now();
        let (csv, jsonl) = generate(tmp.path(), cells, false).expect("generate");
        eprintln!(
            "  generated {cells} cells in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let pandas = if cells <= 10_000_000 {
            pandas_seconds(&csv, if cells <= 2_000_000 { 3 } else { 1 })
        } else {
            None
        };
        let mut csv_cmd = f64::NAN;
        for (kind, path) in [("csv", &csv), ("jsonl", &jsonl)] {
            let (load, analyse, peak) = in_process(path, 0);
            let p = path.to_str().expect("utf8");
            let runs = if cells <= 2_000_000 { 3 } else { 1 };
            let report = ["report", p, "--json", "--boot", "0"];
            let cmd = command_seconds(&report, runs, None);
            let boot = command_seconds(&["report", p, "--json"], runs, None);
            // The matrix cache: written by a first run (the files must have settled, two
            // seconds), read by the next.
            let cache = tmp.path().join(format!("cache-{kind}-{cells}"));
            std::thread::sleep(std::time::Duration::from_secs(2));
            command_seconds(&report, 1, Some(&cache));
            let cached = command_seconds(&report, runs, Some(&cache));
            if kind == "csv" {
                csv_cmd = cmd;
            }
            let pandas_col = match (kind, pandas) {
                ("csv", Some(b)) => format!("{:.3} ({:.1}x)", b.script, b.script / cmd),
                _ => "-".into(),
            };
            println!(
                "{cells:>10} {kind:>6} {load:>8.3} {analyse:>8.3} {peak:>8.0} {cmd:>9.3} {boot:>10.3} {:>10.3} {cached:>9.3} {pandas_col:>9}",
                cmd / (cells as f64 / 1e6)
            );
        }
        if cells <= 2_000_000 {
            // The cells of the CSV, so that the two inputs are compared on the same cells.
            let pq = tmp.path().join(format!("cells-{cells}.parquet"));
            let ok = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
                .args(["cells", csv.to_str().expect("utf8"), "--no-cache", "-o"])
                .arg(&pq)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                let (load, analyse, peak) = in_process(&pq, 0);
                let p = pq.to_str().expect("utf8");
                let cmd = command_seconds(&["report", p, "--json", "--boot", "0"], 3, None);
                println!(
                    "{cells:>10} {:>6} {load:>8.3} {analyse:>8.3} {peak:>8.0} {cmd:>9.3} {:>10} {:>10.3}   (the CSV's cells; {:.2}x the CSV's time)",
                    "parquet",
                    "-",
                    cmd / (cells as f64 / 1e6),
                    cmd / csv_cmd
                );
            }
            let _ = std::fs::remove_file(&pq);
        }
        side_by_side.push((cells, four_tools(&csv, cells, pandas, tmp.path())));
        let _ = std::fs::remove_file(&csv);
        let _ = std::fs::remove_file(&jsonl);
    }
    let tables = [
        (
            "by each Python tool's own clock (its imports excluded; frameaudit's whole command)",
            false,
        ),
        (
            "each tool as a whole command (python3 started and the library imported, as frameaudit's)",
            true,
        ),
    ];
    for (title, process) in tables {
        println!();
        println!(
            "the same per-item CSV, side by side, {title}: wall s; x = the tool's time / frameaudit's"
        );
        println!(
            "{:>10} {:>11} {:>18} {:>18} {:>18} {:>18}",
            "cells", "frameaudit", "DuckDB (lean)", "DuckDB (sql)", "polars", "pandas"
        );
        let col = |v: Option<Baseline>, fa: f64| match v {
            Some(b) => {
                let s = if process { b.process } else { b.script };
                format!("{s:.3} ({:.1}x)", s / fa)
            }
            None => "-".into(),
        };
        for &(cells, (fa, lean, duck, polars, pandas)) in &side_by_side {
            println!(
                "{cells:>10} {fa:>11.3} {:>18} {:>18} {:>18} {:>18}",
                col(lean, fa),
                col(duck, fa),
                col(polars, fa),
                col(pandas, fa)
            );
        }
    }
}

/// frameaudit's `report --json --boot 0`, DuckDB (lean, and `frameaudit sql`'s script) and polars, on
/// the same CSV (pandas was measured before).
fn four_tools(
    csv: &Path,
    cells: usize,
    pandas: Option<Baseline>,
    dir: &Path,
) -> (
    f64,
    Option<Baseline>,
    Option<Baseline>,
    Option<Baseline>,
    Option<Baseline>,
) {
    let runs = if cells <= 2_000_000 { 3 } else { 1 };
    let p = csv.to_str().expect("utf8");
    // frameaudit's run is short, and one run swings by 5-10% on a busy machine: the median
    // of more of them (the Python tools' runs are long, their swings small beside them).
    let fa_runs = if cells <= 2_000_000 { 11 } else { 3 };
    let fa = command_seconds(&["report", p, "--json", "--boot", "0"], fa_runs, None);
    let script = dir.join("measures.sql");
    let sql = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
        .arg("sql")
        .output()
        .expect("frameaudit sql");
    std::fs::write(&script, &sql.stdout).expect("write the script");
    let lean = baseline_seconds("duckdb", &[csv.as_os_str(), "--lean".as_ref()], runs);
    let duck = baseline_seconds("duckdb", &[csv.as_os_str(), script.as_os_str()], runs);
    let polars = baseline_seconds("polars", &[csv.as_os_str()], runs);
    (fa, lean, duck, polars, pandas)
}
