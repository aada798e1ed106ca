//! The bundled demo: its committed files are exactly what the generator makes, it has what
//! the audit needs, and its frames really explain its trajectories.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use frameaudit::core::analysis::params::Params;
use frameaudit::core::analysis::{Metrics, run};
use frameaudit::core::dataset::load_dataset;
use frameaudit::core::queue::{HarmfulTransition, QueueKind, queue};
use frameaudit::core::sampling::{frame_set, linspace};

fn files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let p = e.path();
            // Annotators' audits live beside the data; they are not part of the demo.
            if p.is_dir() && p.file_name().is_some_and(|n| n == "audits") && d == dir {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).expect("prefix").display().to_string());
            }
        }
    }
    out
}

#[test]
fn committed_demo_is_what_the_generator_makes() {
    let committed = common::repo().join("fixtures/demo");
    let tmp = tempfile::tempdir().expect("tmp");
    frameaudit::demo::generate(tmp.path()).expect("generate");
    let (a, b) = (files(&committed), files(tmp.path()));
    assert_eq!(a, b, "file lists differ");
    for f in &a {
        let x = std::fs::read(committed.join(f)).expect("read");
        let y = std::fs::read(tmp.path().join(f)).expect("read");
        assert!(
            x == y,
            "{f} differs from the generator's output: run `cargo run --release --example generate-demo`"
        );
    }
}

#[test]
fn demo_has_what_the_audit_needs() {
    let root = common::repo().join("fixtures/demo");
    let ds = load_dataset(&root, None).expect("demo loads");
    assert_eq!(
        ds.warnings.warning_count() + ds.warnings.error_count(),
        0,
        "{}",
        ds.warnings
    );
    let m = &ds.matrix;
    assert!(m.models.len() >= 3);
    assert!(m.benchmarks.len() >= 2);
    assert!(m.items.len() >= 60);
    let visual: BTreeSet<u64> = m
        .configs
        .iter()
        .map(|c| c.frames)
        .filter(|&f| f > 0)
        .collect();
    assert!(visual.len() >= 5, "{visual:?}");
    assert!(
        m.configs
            .iter()
            .any(|c| c.frames == 0 && &*c.name == "textonly")
    );
    assert!(m.bench_task.contains(&frameaudit::core::matrix::Task::Open));
    for i in 0..m.items.len() {
        let meta = ds
            .item_meta(i as u32)
            .unwrap_or_else(|| panic!("item {} has no description", m.item(i as u32).id));
        assert!(meta.question.as_deref().is_some_and(|q| q.len() > 10));
        let video = meta.video.as_deref().expect("video");
        let n = meta.num_frames.expect("num_frames");
        // Every index any configuration samples has its frame on disk.
        for c in &ds.meta.configs {
            assert_eq!(c.1.policy, "linspace");
            let frames: u64 = c.0.trim_end_matches('f').parse().expect("budget");
            for idx in frame_set(linspace(n, frames)) {
                let p = root
                    .join("frames")
                    .join(video)
                    .join(format!("{idx:06}.jpg"));
                assert!(p.exists(), "missing {}", p.display());
            }
        }
    }
    let kib: u64 = files(&root)
        .iter()
        .map(|f| {
            std::fs::metadata(root.join(f))
                .expect("stat")
                .len()
                .div_ceil(4096)
                * 4
        })
        .sum();
    assert!(kib < 8 * 1024 - 512, "demo takes {kib} KiB on disk");
}

/// Whether the flashed square is visible in a frame: its corner differs from the
/// background beside it.
fn square_visible(path: &Path) -> bool {
    let img = image::open(path).expect("decode frame").to_rgb8();
    let (a, b) = (img.get_pixel(16, 16).0, img.get_pixel(48, 16).0);
    a.iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(y) as u32)
        .sum::<u32>()
        > 90
}

#[test]
fn a_short_event_caught_at_16_frames_is_missed_at_32() {
    let root = common::repo().join("fixtures/demo");
    let ds = load_dataset(&root, None).expect("demo loads");
    let m = &ds.matrix;
    let report = run(
        m,
        &Params {
            bootstrap_b: 0,
            ..Params::default()
        },
        None,
    );
    let main = m.protocols.get("main").expect("main");
    let mut explained = 0;
    for row in queue(&report, main, QueueKind::Harmful) {
        let a = &report.analyses[row.analysis as usize];
        let g = &a.grids.models[row.model_index as usize].grid;
        let col = |name: &str| g.configs.iter().position(|&c| &*m.config(c).name == name);
        let (Some(lo), Some(hi)) = (col("16f"), col("32f")) else {
            continue;
        };
        if !row.listed().contains(&HarmfulTransition::new(lo, hi)) {
            continue;
        }
        let Metrics::Mcq(_) = &a.metrics[row.model_index as usize] else {
            continue;
        };
        let item = m.item(row.item);
        if !item.id.ends_with("-q1") {
            continue;
        }
        let meta = ds.item_meta(row.item).expect("meta");
        let dir = root
            .join("frames")
            .join(meta.video.as_deref().expect("video"));
        let n = meta.num_frames.expect("frames");
        let seen = |budget: u64| {
            frame_set(linspace(n, budget))
                .into_iter()
                .any(|i| square_visible(&dir.join(format!("{i:06}.jpg"))))
        };
        // (A right answer without the square in view is a lucky guess: not counted.)
        if seen(16) && !seen(32) {
            explained += 1;
        }
    }
    assert!(
        explained >= 3,
        "only {explained} right-at-16f, wrong-at-32f items are explained by their frames"
    );
}

/// The demo's replicates (a re-run and the half-step grid of every multiple-choice cell)
/// make a real mixture: for every model some harmful items survive every replicate and some
/// do not, a re-run disagrees with the canonical answer on a few percent of the pairs and
/// the shifted grid on several times more, as measured on real models.
#[test]
fn the_demo_has_stable_and_lottery_items() {
    let ds = load_dataset(&common::repo().join("fixtures/demo"), None).expect("demo");
    let params = Params {
        bootstrap_b: 0,
        sweep: false,
        ..Params::default()
    };
    let report = run(&ds.matrix, &params, None);
    let pooled = report
        .analyses
        .iter()
        .find(|a| {
            a.key.task == frameaudit::core::matrix::Task::Mcq
                && ds.matrix.protocols.name(a.key.protocol) == "main"
                && a.key.scope == frameaudit::core::analysis::grid::Scope::All
        })
        .expect("the pooled MCQ analysis");
    let mut models = 0;
    for x in pooled.metrics.iter() {
        let Metrics::Mcq(x) = x else { continue };
        models += 1;
        let r = x.replicates.as_ref().expect("replicates");
        assert_eq!(r.nuisances, ["phase", "rerun"]);
        let s = &r.stable;
        assert_eq!(s.replicated_items, x.n_items, "every item replicated");
        assert!(s.stable_harmful_replicated > 0, "{s:?}");
        assert!(s.stable_harmful_replicated < s.harmful_replicated, "{s:?}");
        let lottery = s.lottery_rate.expect("a lottery rate");
        assert!(lottery > 10.0 && lottery < 60.0, "{lottery}");
        let rate = |n: &str| r.floor.by_nuisance[n].disagreement_rate.expect("pairs");
        let (rerun, phase) = (rate("rerun"), rate("phase"));
        assert!((1.0..=5.0).contains(&rerun), "re-run {rerun}");
        assert!(phase > 2.0 * rerun, "phase {phase} against re-run {rerun}");
    }
    assert_eq!(models, 3);
}
