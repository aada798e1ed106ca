//! The matrix cache (core/cache.rs, docs/cache.md): a dataset opened from its cache is the
//! dataset read from its files, cell for cell and number for number; a cache that is not
//! the files' own (changed, damaged, another format) is never used.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use frameaudit::core::analysis::{self, params::Params};
use frameaudit::core::audit::fingerprint;
use frameaudit::core::cache::{Inputs, Stored};
use frameaudit::core::dataset::load_dataset;
use frameaudit::core::load::CellFormat;
use frameaudit::core::matrix::ResponseMatrix;

/// A dataset of every kind of cell: two files, MCQ and open-ended benchmarks, a second
/// protocol, blind answers, frame indices, pixels, confidences, invalid cells, provenance.
fn varied(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).expect("mkdir");
    let mut x: u64 = 11;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let replicate = |line: &str, name: &str, nuisance: &str| {
        let open = line.strip_suffix('}').unwrap_or(line);
        format!(r#"{open},"replicate":"{name}","nuisance":"{nuisance}"}}"#)
    };
    let mut earlier = Vec::new();
    let mut files = Vec::new();
    for part in 0..2 {
        let path = dir.join(format!("part{part}.jsonl"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        for m in 0..3 {
            for i in (part * 40)..(part * 40 + 40) {
                for (c, frames) in [("text", 0), ("8f", 8), ("16f", 16), ("32f@hi", 32)] {
                    let r = next();
                    let pixels = if c == "32f@hi" {
                        r#","pixels":1003520"#
                    } else {
                        ""
                    };
                    let conf = if r % 5 == 0 {
                        String::new()
                    } else {
                        format!(r#","confidence":{}"#, (r % 100) as f64 / 100.0)
                    };
                    let idx = if frames > 0 && r % 3 == 0 {
                        format!(
                            r#","frame_idx":[{}]"#,
                            (0..frames)
                                .map(|k| (k * 7).to_string())
                                .collect::<Vec<_>>()
                                .join(",")
                        )
                    } else {
                        String::new()
                    };
                    let line = if i % 4 == 3 {
                        let score = if r % 11 == 0 {
                            String::new()
                        } else {
                            format!(r#","score":{}"#, r % 101)
                        };
                        format!(
                            r#"{{"model":"m{m}","benchmark":"open","item_id":"o{i}","config":"{c}","frames":{frames}{pixels},"task":"open","pred":"a cat {r}","gold":["a cat","the dog"]{score}{conf}}}"#
                        )
                    } else {
                        let pred = ["A", "B", "C", "D"][(r % 4) as usize];
                        let gold = if r % 37 == 0 {
                            String::new()
                        } else {
                            r#","gold":"A""#.into()
                        };
                        let blind = if i % 5 == 0 { r#","blind":"b""# } else { "" };
                        let protocol = if i % 9 == 0 && m == 1 {
                            r#","protocol":"other""#
                        } else {
                            ""
                        };
                        let tag = if r % 7 == 0 {
                            r#","source_tag":"run-7""#
                        } else {
                            ""
                        };
                        format!(
                            r#"{{"model":"m{m}","benchmark":"mc","item_id":"q{i}","config":"{c}","frames":{frames}{pixels},"pred":"{pred}"{gold}{blind}{protocol}{tag}{conf}{idx}}}"#
                        )
                    };
                    writeln!(f, "{line}").expect("write");
                    // Replicates: beside their cell, some answering otherwise (or with no
                    // gold: a replicate of no value), and in the second file some of the
                    // first's, so that their lines jump back and forth.
                    if r % 3 == 0 {
                        let (from, to) = match r % 4 {
                            0 => (r#""pred":"A""#, r#""pred":"B""#),
                            1 => (r#""gold":"A""#, r#""gold":null"#),
                            _ => (r#""pred":"a cat"#, r#""pred":"the cat"#),
                        };
                        writeln!(
                            f,
                            "{}",
                            replicate(&line.replacen(from, to, 1), "rerun-1", "rerun")
                        )
                        .expect("write");
                    }
                    if part == 0 && r % 5 == 0 {
                        earlier.push(replicate(&line, "phase-1", "phase"));
                    }
                    if part == 1
                        && r % 2 == 0
                        && let Some(rep) = earlier.pop()
                    {
                        writeln!(f, "{rep}").expect("write");
                    }
                    if r % 13 == 0 {
                        writeln!(f).expect("a blank line");
                    }
                }
            }
        }
        f.flush().expect("flush");
        files.push(path);
    }
    files
}

fn report_json(m: &ResponseMatrix) -> String {
    let params = Params {
        bootstrap_b: 50,
        ..Params::default()
    };
    let mut out = Vec::new();
    analysis::run(m, &params, None)
        .write_json(m, &mut out, false)
        .expect("json");
    String::from_utf8(out).expect("utf8")
}

/// Every per-cell value the screens and reports read, and the lookups.
fn same_matrix(a: &ResponseMatrix, b: &ResponseMatrix) {
    assert_eq!(a.n_cells(), b.n_cells());
    assert_eq!(a.cell_item, b.cell_item);
    assert_eq!(a.cell_model, b.cell_model);
    assert_eq!(a.cell_config, b.cell_config);
    assert_eq!(a.cell_value, b.cell_value);
    assert_eq!(a.cell_confidence, b.cell_confidence);
    assert_eq!(a.cell_pred, b.cell_pred);
    assert_eq!(a.cell_pred_norm, b.cell_pred_norm);
    assert_eq!(a.cell_gold, b.cell_gold);
    assert_eq!(a.cell_source_tag, b.cell_source_tag);
    assert_eq!(a.cell_protocol_note, b.cell_protocol_note);
    assert_eq!(a.cell_file, b.cell_file);
    assert_eq!(
        a.cell_line.iter().collect::<Vec<_>>(),
        b.cell_line.iter().collect::<Vec<_>>()
    );
    assert_eq!(a.blind_answers(), b.blind_answers());
    for c in 0..a.n_cells() as u32 {
        assert_eq!(a.cell_location(c), b.cell_location(c));
        assert_eq!(a.frame_idx(c), b.frame_idx(c));
    }
    for p in 0..a.protocols.len() as u32 {
        for mo in 0..a.models.len() as u32 {
            assert_eq!(a.group(p, mo), b.group(p, mo));
            for it in 0..a.items.len() as u32 {
                assert_eq!(a.blind(p, mo, it), b.blind(p, mo, it));
            }
        }
    }
    for (i, it) in a.items.iter().enumerate() {
        let bench = a.benchmarks.name(it.benchmark);
        assert_eq!(b.find_item(bench, &it.id), Some(i as u32));
    }
    assert_eq!(b.find_item("mc", "no such item"), None);
    assert_eq!(a.stats.records, b.stats.records);
    assert_eq!(a.stats.cells_invalid, b.stats.cells_invalid);
    // The replicates, with the frames each recorded (the frame view's replicate rows).
    let (ra, rb) = (&a.replicates, &b.replicates);
    let bits = |r: &frameaudit::core::matrix::Replicates| -> Vec<_> {
        r.cells
            .iter()
            .map(|x| {
                (
                    x.cell,
                    x.value.to_bits(),
                    x.replicate,
                    x.nuisance,
                    x.file,
                    x.line,
                )
            })
            .collect()
    };
    assert_eq!(bits(ra), bits(rb));
    assert_eq!((ra.read, ra.orphaned), (rb.read, rb.orphaned));
    for x in ra.cells.iter() {
        assert_eq!(ra.frame_idx(&x), rb.frame_idx(&x));
    }
    assert_eq!(ra.frame_spans, rb.frame_spans);
}

fn inputs(cache: &Path, files: &[PathBuf]) -> Inputs {
    Inputs::in_dir(cache, 0, Duration::ZERO, files, None).expect("caching applies")
}

#[test]
fn a_matrix_read_back_from_its_cache_is_the_matrix_read_from_its_files() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut cases: Vec<(PathBuf, Vec<PathBuf>, Option<CellFormat>)> = Vec::new();
    let dir = tmp.path().join("varied");
    let files = varied(&dir);
    cases.push((dir, files, None));
    let demo = common::repo().join("fixtures/demo");
    cases.push((demo.clone(), vec![demo.join("cells.jsonl")], None));
    // Frame lists of more cells than one block of the cache file holds (5 462 rows).
    let spans = tmp.path().join("spans.jsonl");
    let mut text = String::new();
    for i in 0..12_000 {
        text.push_str(&format!(
            r#"{{"model":"m","benchmark":"b","item_id":"q{i}","config":"8f","frames":8,"pred":"A","gold":"A","frame_idx":[{},{}]}}"#,
            i % 7,
            i % 11 + 8
        ));
        text.push('\n');
    }
    std::fs::write(&spans, text).expect("write");
    cases.push((spans.clone(), vec![spans], None));
    if let Some(csv) = common::real_csv() {
        cases.push((csv.clone(), vec![csv], None));
    }
    for (k, (path, files, format)) in cases.into_iter().enumerate() {
        let ds = load_dataset(&path, None).expect("load");
        assert_eq!(ds.cell_files, files, "{}", path.display());
        if k == 0 {
            // The varied replicates are as meant: of both files, lines falling as well as
            // rising in cell order, some of no value.
            let reps: Vec<_> = ds.matrix.replicates.cells.iter().collect();
            assert!(reps.iter().any(|x| x.file == 1) && reps.iter().any(|x| x.file == 0));
            assert!(reps.windows(2).any(|w| w[1].line < w[0].line));
            assert!(reps.iter().any(|x| x.value.is_nan()));
            assert!(
                reps.iter()
                    .any(|x| ![0.0, 1.0].contains(&x.value) && !x.value.is_nan())
            );
        }
        let cache = tmp.path().join(format!("cache{k}"));
        let c = Inputs::in_dir(&cache, 0, Duration::ZERO, &files, format).expect("applies");
        assert!(c.load().is_none(), "no cache yet");
        assert_eq!(c.store(&ds.matrix).expect("store"), Stored::Written);
        let back = c.load().expect("the cache is read back");
        same_matrix(&ds.matrix, &back);
        assert_eq!(
            report_json(&ds.matrix),
            report_json(&back),
            "{}",
            path.display()
        );
        // Audits made on it stay tied to it.
        assert_eq!(fingerprint(&ds.matrix), fingerprint(&back));
        // A second look at the same files, as the next start makes, finds it too.
        assert!(inputs(&cache, &files).load().is_some());
    }
}

#[test]
fn a_cache_that_is_not_the_files_own_is_not_used() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ds");
    let files = varied(&dir);
    let cache = tmp.path().join("cache");
    let ds = load_dataset(&dir, None).expect("load");
    assert_eq!(
        inputs(&cache, &files).store(&ds.matrix).expect("store"),
        Stored::Written
    );
    assert!(inputs(&cache, &files).load().is_some());

    // Another format asked for: another cache.
    let other = Inputs::in_dir(&cache, 0, Duration::ZERO, &files, Some(CellFormat::Cells))
        .expect("applies");
    assert!(other.load().is_none());
    // One of the files only: another cache.
    assert!(inputs(&cache, &files[..1]).load().is_none());

    // The same bytes rewritten (same size, same modification time): the change time and
    // the inode tell.
    let text = std::fs::read(&files[1]).expect("read");
    let modified = std::fs::metadata(&files[1])
        .expect("meta")
        .modified()
        .expect("mtime");
    std::fs::remove_file(&files[1]).expect("rm");
    std::fs::write(&files[1], &text).expect("write");
    std::fs::File::options()
        .write(true)
        .open(&files[1])
        .expect("open")
        .set_modified(modified)
        .expect("set mtime");
    assert!(inputs(&cache, &files).load().is_none());

    // One answer changed in place, same size.
    let c = inputs(&cache, &files);
    let ds = load_dataset(&dir, None).expect("load");
    assert_eq!(c.store(&ds.matrix).expect("store"), Stored::Written);
    let changed =
        String::from_utf8(text)
            .expect("utf8")
            .replacen(r#""pred":"A""#, r#""pred":"B""#, 1);
    std::fs::write(&files[1], changed).expect("write");
    assert!(inputs(&cache, &files).load().is_none());

    // A file that changed a moment ago is not cached: its times might not show the next
    // change within the same clock tick.
    let c = Inputs::in_dir(&cache, 0, Duration::from_secs(3600), &files, None).expect("applies");
    assert_eq!(
        c.store(&ds.matrix).expect("store"),
        Stored::Unsettled("an input changed a moment ago")
    );

    // Small inputs are read from the files.
    assert!(Inputs::in_dir(&cache, 1 << 40, Duration::ZERO, &files, None).is_none());
}

#[test]
fn a_damaged_cache_is_ignored_never_trusted() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ds");
    let files = varied(&dir);
    let cache = tmp.path().join("cache");
    let ds = load_dataset(&dir, None).expect("load");
    let c = inputs(&cache, &files);
    assert_eq!(c.store(&ds.matrix).expect("store"), Stored::Written);
    let good = std::fs::read(c.path()).expect("read");
    let mut damages: Vec<Vec<u8>> = Vec::new();
    for at in [
        0,
        9,
        40,
        good.len() / 3,
        good.len() / 2,
        good.len() - 9,
        good.len() - 1,
    ] {
        let mut d = good.clone();
        d[at] ^= 0x5a;
        damages.push(d);
    }
    for cut in [0, 8, good.len() / 2, good.len() - 1] {
        damages.push(good[..cut].to_vec());
    }
    // A length field made huge: refused, not allocated.
    let mut huge = good.clone();
    let n = huge.len();
    huge[n / 2..n / 2 + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    damages.push(huge);
    for (k, d) in damages.iter().enumerate() {
        std::fs::write(c.path(), d).expect("write");
        assert!(c.load().is_none(), "damage {k} went unnoticed");
    }
    std::fs::write(c.path(), &good).expect("write");
    assert!(c.load().is_some());
}

/// A cache whose replicates are out of the order of their cells, or name a cell the matrix
/// does not have, is refused though its checksum is good: each cell's replicates are found
/// through an index built from that order.
#[test]
fn a_cache_of_replicates_out_of_order_or_range_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ds");
    let files = varied(&dir);
    let c = inputs(&tmp.path().join("cache"), &files);
    let mut m = load_dataset(&dir, None).expect("load").matrix;
    let good: Vec<_> = m.replicates.cells.iter().collect();
    assert!(good.len() > 2 && good[0].cell < good[good.len() - 1].cell);
    let mut unsorted = good.clone();
    unsorted.swap(0, good.len() - 1);
    let mut past = good.clone();
    past.last_mut().expect("one").cell = m.n_cells() as u32;
    for (what, bad) in [("unsorted", unsorted), ("past the cells", past)] {
        m.replicates.cells = bad.into_iter().collect();
        assert_eq!(c.store(&m).expect("store"), Stored::Written);
        assert!(c.load().is_none(), "{what}");
    }
    m.replicates.cells = good.into_iter().collect();
    assert_eq!(c.store(&m).expect("store"), Stored::Written);
    assert!(c.load().is_some());
}

/// `report DIR --json ARGS` with the cache in `cache` whatever the size, and the timings:
/// its stdout and stderr (the timings say whether it read or wrote the cache).
fn cached_report(dir: &Path, cache: &Path, args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
        .arg("report")
        .arg(dir)
        .arg("--json")
        .args(args)
        .env("FRAMEAUDIT_CACHE_DIR", cache)
        .env("FRAMEAUDIT_CACHE_MIN_BYTES", "0")
        .env("FRAMEAUDIT_TIMINGS", "1")
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", common::stderr(&out));
    (common::stdout(&out), common::stderr(&out))
}

/// Through the real binary: the second `report` of a large dataset (the size floor set to
/// zero here) opens from the cache and prints the same report; `--no-cache` reads the files.
#[test]
fn the_binary_opens_a_dataset_from_its_cache_and_reports_the_same() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ds");
    varied(&dir);
    // The files must have settled before they are cached (two seconds).
    std::thread::sleep(Duration::from_millis(2100));
    let cache = tmp.path().join("cache");
    let run = |extra: &[&str]| cached_report(&dir, &cache, &[&["--boot", "30"], extra].concat());
    let (cold, cold_err) = run(&[]);
    assert!(cold_err.contains("write the matrix cache"), "{cold_err}");
    assert!(!cold_err.contains("read the matrix cache"), "{cold_err}");
    let (warm, warm_err) = run(&[]);
    assert!(warm_err.contains("read the matrix cache"), "{warm_err}");
    assert_eq!(cold, warm);
    let (plain, plain_err) = run(&["--no-cache"]);
    assert!(!plain_err.contains("matrix cache"), "{plain_err}");
    assert_eq!(cold, plain);
    // A cache that cannot be written (its folder is a file) is said, and the report is
    // the same.
    let not_a_dir = tmp.path().join("a-file");
    std::fs::write(&not_a_dir, "").expect("write");
    let (unsaved, unsaved_err) = cached_report(&dir, &not_a_dir, &["--boot", "30"]);
    assert_eq!(unsaved, cold);
    assert!(
        unsaved_err.contains(&format!(
            "frameaudit: note: the matrix cache could not be saved as {}/",
            not_a_dir.display()
        )) && unsaved_err.contains("the next start reads the cells again"),
        "{unsaved_err}"
    );
    // Off by the environment too.
    let out = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
        .arg("report")
        .arg(&dir)
        .args(["--json", "--boot", "30"])
        .env("FRAMEAUDIT_CACHE_DIR", &cache)
        .env("FRAMEAUDIT_CACHE_MIN_BYTES", "0")
        .env("FRAMEAUDIT_CACHE", "off")
        .env("FRAMEAUDIT_TIMINGS", "1")
        .output()
        .expect("run");
    assert!(!common::stderr(&out).contains("matrix cache"));
    assert_eq!(common::stdout(&out), cold);
}

/// Issue 37, item 16: a relative `XDG_CACHE_HOME` is ignored, as the XDG base directory
/// spec says, and the cache goes where it goes when that is unset (`$HOME/.cache`), not
/// under the working directory.
#[test]
fn a_relative_xdg_cache_home_is_ignored() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ds");
    varied(&dir);
    // The files must have settled before they are cached (two seconds).
    std::thread::sleep(Duration::from_millis(2100));
    let (home, work) = (tmp.path().join("home"), tmp.path().join("work"));
    std::fs::create_dir_all(&home).expect("mkdir");
    std::fs::create_dir_all(&work).expect("mkdir");
    let out = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
        .arg("report")
        .arg(&dir)
        .args(["--json", "--boot", "0"])
        .current_dir(&work)
        .env_remove("FRAMEAUDIT_CACHE_DIR")
        .env_remove("FRAMEAUDIT_CACHE")
        .env("XDG_CACHE_HOME", "relative-cache")
        .env("HOME", &home)
        .env("FRAMEAUDIT_CACHE_MIN_BYTES", "0")
        .env("FRAMEAUDIT_TIMINGS", "1")
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("write the matrix cache"),
        "{}",
        common::stderr(&out)
    );
    assert!(
        !work.join("relative-cache").exists(),
        "a cache under the working directory"
    );
    let saved: Vec<_> = std::fs::read_dir(home.join(".cache/frameaudit"))
        .expect("the cache is in $HOME/.cache/frameaudit")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "matrix"))
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
}

/// Through the real binary in a terminal: the audit screens write the matrix cache once
/// their first screen is up (in the background, not before it), and finish writing it
/// before they exit, so the next command opens from it.
#[test]
fn the_audit_screens_write_the_cache_the_next_command_opens_from() {
    if !common::tmux::tmux_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("ds");
    varied(&dir);
    std::thread::sleep(Duration::from_millis(2100));
    let cache = tmp.path().join("cache");
    let prelude = format!(
        "export FRAMEAUDIT_CACHE_DIR={} FRAMEAUDIT_CACHE_MIN_BYTES=0;",
        common::tmux::shell_quote(&cache.display().to_string())
    );
    let t = common::tmux::Tmux::start_with(
        &format!("fa-cache-{}", std::process::id()),
        &dir,
        "cache",
        &prelude,
    );
    t.wait_for("audit queue");
    t.keys(&["q"]);
    assert!(
        t.wait_exit(Duration::from_secs(10)),
        "frameaudit did not quit"
    );
    let report = |extra: &[&str]| cached_report(&dir, &cache, &[&["--boot", "0"], extra].concat());
    let (warm, warm_err) = report(&[]);
    assert!(warm_err.contains("read the matrix cache"), "{warm_err}");
    assert!(!warm_err.contains("write the matrix cache"), "{warm_err}");
    assert_eq!(warm, report(&["--no-cache"]).0);
}

/// The caches are held to their limit, those used longest ago going first: "used" is the
/// later of the write and the last read, the cache just written always stays, and only
/// regular files named as caches are counted or removed (a link named as one, to a file
/// elsewhere, stays, and so does that file).
#[test]
fn pruning_removes_the_caches_used_longest_ago_and_nothing_else() {
    use std::fs::FileTimes;
    use std::time::SystemTime;
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("cache");
    std::fs::create_dir(&dir).expect("mkdir");
    let ago = |s: u64| SystemTime::now() - Duration::from_secs(s);
    // (name, bytes, written, read) in seconds ago.
    let files = [
        ("aaaaaaaaaaaaaaaaaaaaaaaa.matrix", 100, 500, 500), // oldest
        ("bbbbbbbbbbbbbbbbbbbbbbbb.matrix", 100, 900, 10),  // old, read lately
        ("cccccccccccccccccccccccc.matrix", 100, 400, 400),
        ("dddddddddddddddddddddddd.matrix", 100, 300, 300),
        ("eeeeeeeeeeeeeeeeeeeeeeee.matrix", 100, 1000, 1000), // oldest, but just written
        ("notes.matrix", 5000, 2000, 2000),
        ("README", 5000, 2000, 2000),
    ];
    for (name, len, written, read) in files {
        let f = std::fs::File::create(dir.join(name)).expect("create");
        f.set_len(len).expect("size");
        let times = FileTimes::new()
            .set_modified(ago(written))
            .set_accessed(ago(read));
        f.set_times(times).expect("times");
    }
    let outside = tmp.path().join("outside");
    std::fs::write(&outside, vec![b'x'; 10_000]).expect("write");
    let link = dir.join("ffffffffffffffffffffffff.matrix");
    std::os::unix::fs::symlink(&outside, &link).expect("ln -s");
    let keep = dir.join("eeeeeeeeeeeeeeeeeeeeeeee.matrix");
    // 500 bytes of caches, 250 allowed: a, c and d go (oldest used first), e stays.
    let removed = frameaudit::core::cache::prune(&dir, 250, &keep);
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "README",
            "bbbbbbbbbbbbbbbbbbbbbbbb.matrix",
            "eeeeeeeeeeeeeeeeeeeeeeee.matrix",
            "ffffffffffffffffffffffff.matrix",
            "notes.matrix",
        ]
    );
    assert_eq!(removed, 3);
    assert_eq!(std::fs::read(&outside).expect("read").len(), 10_000);
    // Within the limit, nothing goes.
    assert_eq!(frameaudit::core::cache::prune(&dir, 250, &keep), 0);
}

/// Through the binary: with a limit that holds two datasets' caches, opening a third
/// removes the cache used longest ago, and a cache read from counts as used.
#[test]
fn the_binary_holds_the_caches_to_their_limit() {
    let tmp = tempfile::tempdir().expect("tmp");
    let sets: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            let dir = tmp.path().join(n);
            varied(&dir);
            dir
        })
        .collect();
    std::thread::sleep(Duration::from_millis(2100));
    let cache = tmp.path().join("cache");
    let report = |dir: &Path, limit: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .arg("report")
            .arg(dir)
            .args(["--json", "--boot", "0"])
            .env("FRAMEAUDIT_CACHE_DIR", &cache)
            .env("FRAMEAUDIT_CACHE_MIN_BYTES", "0")
            .env("FRAMEAUDIT_CACHE_LIMIT", limit)
            .env("FRAMEAUDIT_TIMINGS", "1")
            .output()
            .expect("run");
        assert!(out.status.success(), "{}", common::stderr(&out));
        let err = common::stderr(&out);
        if err.contains("read the matrix cache") {
            "read"
        } else if err.contains("write the matrix cache") {
            "wrote"
        } else {
            panic!("no cache: {err}")
        }
    };
    let sizes = || -> Vec<u64> {
        std::fs::read_dir(&cache)
            .expect("list")
            .map(|e| e.expect("entry").metadata().expect("stat").len())
            .collect()
    };
    assert_eq!(report(&sets[0], "off"), "wrote");
    // A first read: on a `relatime` mount the system marks it itself, not a second one.
    assert_eq!(report(&sets[0], "off"), "read");
    assert_eq!(report(&sets[1], "off"), "wrote");
    let two: u64 = sizes().iter().sum();
    assert_eq!(sizes().len(), 2);
    // Room for two caches and a half.
    let limit = (two + two / 4).to_string();
    // `a` read again: used after `b`.
    assert_eq!(report(&sets[0], &limit), "read");
    assert_eq!(report(&sets[2], &limit), "wrote");
    assert_eq!(sizes().len(), 2, "one cache removed");
    assert_eq!(report(&sets[0], &limit), "read", "a was used lately: kept");
    assert_eq!(report(&sets[2], &limit), "read", "c was just written: kept");
    assert_eq!(report(&sets[1], &limit), "wrote", "b was used longest ago");
}

/// A cache limit that is not a size is said by a command that reads a dataset, inert, and
/// the default is used.
#[test]
fn a_cache_limit_that_is_not_a_size_is_said() {
    let demo = common::repo().join("fixtures/demo");
    let demo = demo.to_str().expect("utf-8");
    common::a_size_limit_that_is_not_a_size_is_said("FRAMEAUDIT_CACHE_LIMIT", &["report", demo]);
}
