//! Every measure of docs/measures.md on its worked examples (§13), through the library API, and the
//! expected report files of ../shared/conformance/worked (copied to tests/data/conformance).

mod common;

use frameaudit::core::analysis::grid::{GridSpec, Scope};
use frameaudit::core::analysis::mcq::McqMetrics;
use frameaudit::core::analysis::open::OpenMetrics;
use frameaudit::core::analysis::params::{GridMode, Params, VariantBudget};
use frameaudit::core::analysis::{Metrics, Report, run};
use frameaudit::core::dataset::{Dataset, load_dataset};
use frameaudit::core::matrix::Task;

fn load(name: &str) -> Dataset {
    load_dataset(&common::conformance(name), None).expect("worked example loads")
}

fn report(ds: &Dataset, params: &Params) -> Report {
    run(&ds.matrix, params, None)
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

/// The measures of model `model` in analysis (protocol, task, scope name).
fn metrics<'r>(
    ds: &Dataset,
    r: &'r Report,
    protocol: &str,
    task: Task,
    scope: &str,
    model: &str,
) -> &'r Metrics {
    let m = &ds.matrix;
    let a = r
        .analyses
        .iter()
        .find(|a| {
            m.protocols.name(a.key.protocol) == protocol
                && a.key.task == task
                && a.key.scope_name(m) == scope
        })
        .expect("analysis");
    a.model(m.models.get(model).expect("model"))
        .expect("model metrics")
        .1
}

fn mcq<'r>(ds: &Dataset, r: &'r Report, protocol: &str, scope: &str) -> &'r McqMetrics {
    match metrics(
        ds,
        r,
        protocol,
        Task::Mcq,
        scope,
        if scope == "toy-var" { "V" } else { "M" },
    ) {
        Metrics::Mcq(x) => x,
        Metrics::Open(_) => panic!("expected MCQ metrics"),
    }
}

fn open<'r>(ds: &Dataset, r: &'r Report) -> &'r OpenMetrics {
    match metrics(ds, r, "main", Task::Open, "toy-open", "M") {
        Metrics::Open(x) => x,
        Metrics::Mcq(_) => panic!("expected open metrics"),
    }
}

/// Item ids of the grid whose flag is set.
fn items_where(ds: &Dataset, grid: &GridSpec, flag: impl Fn(usize) -> bool) -> Vec<String> {
    grid.items
        .iter()
        .enumerate()
        .filter(|(i, _)| flag(*i))
        .map(|(_, &it)| ds.matrix.item(it).id.to_string())
        .collect()
}

fn grid_of<'r>(
    ds: &Dataset,
    r: &'r Report,
    protocol: &str,
    scope: &str,
    model: &str,
) -> &'r GridSpec {
    let m = &ds.matrix;
    let a = r
        .analyses
        .iter()
        .find(|a| {
            m.protocols.name(a.key.protocol) == protocol
                && a.key.task == Task::Mcq
                && a.key.scope_name(m) == scope
        })
        .expect("analysis");
    &a.model(m.models.get(model).expect("model"))
        .expect("grid")
        .0
        .grid
}

#[test]
fn worked_reports_match_the_expected_files() {
    let cases: [(&str, &str, Params); 6] = [
        (
            "example_13_1.jsonl",
            "example_13_1.report.json",
            Params::default(),
        ),
        (
            "example_13_1.jsonl",
            "example_13_1.joint.report.json",
            Params {
                grid_mode: GridMode::Joint,
                ..Params::default()
            },
        ),
        (
            "example_13_2.csv",
            "example_13_2.report.json",
            Params::default(),
        ),
        (
            "example_13_2.csv",
            "example_13_2.zero.report.json",
            Params {
                variant_budget: VariantBudget::Zero,
                ..Params::default()
            },
        ),
        (
            "example_16_1.jsonl",
            "example_16_1.report.json",
            Params::default(),
        ),
        (
            "example_16_1.jsonl",
            "example_16_1.cluster.report.json",
            Params {
                cluster_bootstrap: true,
                bootstrap_b: 200,
                ..Params::default()
            },
        ),
    ];
    for (input, expected, params) in cases {
        let ds = load(input);
        let mut buf = Vec::new();
        report(&ds, &params)
            .write_json(&ds.matrix, &mut buf, false)
            .expect("json");
        let actual: serde_json::Value = serde_json::from_slice(&buf).expect("valid json");
        let want = common::read_json(&common::conformance(expected));
        let diff = common::json_diff(&actual, &want, 1e-9);
        assert!(diff.is_empty(), "{expected}: {diff:#?}");
    }
}

#[test]
fn example_13_1_curve_oracle_classes() {
    let ds = load("example_13_1.jsonl");
    let r = report(&ds, &Params::default());
    let x = mcq(&ds, &r, "main", "toy-mcq");
    assert_eq!(x.grid.configs, ["textonly", "8f", "16f", "32f"]);
    assert_eq!(x.grid.top.as_deref(), Some("32f"));
    assert_eq!(x.correct_counts, [3, 3, 4, 4]);
    close(x.accuracy[0], 300.0 / 7.0);
    close(x.accuracy[2], 400.0 / 7.0);
    assert_eq!(
        (x.best_fixed.config.as_str(), x.best_fixed.index),
        ("16f", 2)
    );
    assert_eq!(x.oracle_count, 6);
    close(x.oracle_accuracy, 600.0 / 7.0);
    close(x.headroom, 200.0 / 7.0);
    let c = &x.classes;
    assert_eq!(
        [
            c.always_correct,
            c.always_wrong,
            c.monotonic_increasing,
            c.monotonic_decreasing,
            c.oscillating
        ],
        [1, 1, 2, 1, 2]
    );
    assert_eq!(
        x.best_config_counts.0,
        [
            ("textonly".into(), 4),
            ("8f".into(), 1),
            ("16f".into(), 1),
            ("32f".into(), 1)
        ]
    );
    assert_eq!(x.patterns.get("0101"), Some(&1));
    assert_eq!(x.patterns.len(), 7);
}

#[test]
fn example_13_1_harmful_churn_terminal() {
    let ds = load("example_13_1.jsonl");
    let r = report(&ds, &Params::default());
    let x = mcq(&ds, &r, "main", "toy-mcq");
    let g = grid_of(&ds, &r, "main", "toy-mcq", "M");
    assert_eq!(
        items_where(&ds, g, |i| x.items.harmful_pairs[i] > 0),
        ["q3", "q4", "q7"]
    );
    assert_eq!(x.items.harmful_pairs, [0, 0, 1, 3, 0, 0, 3]);
    assert_eq!(
        (
            x.harmful_items,
            x.harmful_pairs,
            x.pairs_total,
            x.comparable_pairs
        ),
        (3, 7, 42, 6)
    );
    close(x.harmful_rate, 300.0 / 7.0);
    close(x.harmful_pair_rate.expect("rate"), 100.0 * 7.0 / 42.0);
    let churn: Vec<[usize; 4]> = x
        .churn
        .iter()
        .map(|c| {
            [
                c.wrong_to_correct,
                c.correct_to_wrong,
                c.stable_correct,
                c.stable_wrong,
            ]
        })
        .collect();
    assert_eq!(churn, [[1, 1, 2, 3], [2, 1, 2, 2], [2, 2, 2, 1]]);
    assert_eq!(
        (
            x.churn_totals.wrong_to_correct,
            x.churn_totals.correct_to_wrong
        ),
        (5, 4)
    );
    assert_eq!(items_where(&ds, g, |i| x.items.terminal[i]), ["q4", "q7"]);
    close(x.terminal_regression_rate, 200.0 / 7.0);
}

#[test]
fn example_13_1_complementarity_and_text() {
    let ds = load("example_13_1.jsonl");
    let r = report(&ds, &Params::default());
    let x = mcq(&ds, &r, "main", "toy-mcq");
    let p = 100.0 / 7.0;
    let rw = [
        [0.0, 1.0, 0.0, 2.0],
        [1.0, 0.0, 1.0, 1.0],
        [1.0, 2.0, 0.0, 2.0],
        [3.0, 2.0, 2.0, 0.0],
    ];
    for (a, row) in rw.iter().enumerate() {
        for (b, v) in row.iter().enumerate() {
            close(x.complementarity.right_wrong[a][b], v * p);
        }
    }
    let gains = [
        ((0, 1), 1.0),
        ((0, 2), 0.0),
        ((0, 3), 2.0),
        ((1, 2), 1.0),
        ((1, 3), 1.0),
        ((2, 3), 2.0),
    ];
    for ((a, b), v) in gains {
        close(x.complementarity.pair_oracle_gain[a][b], v * p);
        close(x.complementarity.pair_oracle_gain[b][a], v * p);
    }
    let t = &x.text_overwrite;
    assert_eq!((t.text_correct_items, t.items), (3, 2));
    close(t.rate.expect("rate"), 200.0 / 7.0);
    close(t.conditional_rate.expect("rate"), 200.0 / 3.0);
    let f = &x.prior_fallback;
    assert_eq!(
        (f.items_with_blind, f.harmful_pairs, f.fallback_pairs),
        (7, 4, 1)
    );
    close(f.rate.expect("rate"), 25.0);
    assert_eq!((f.terminal_regressions, f.terminal_fallbacks), (2, 0));
    close(f.terminal_rate.expect("rate"), 0.0);
    assert_eq!((f.wrong_cells, f.wrong_cells_matching_blind), (10, 5));
    close(f.baseline_rate.expect("rate"), 50.0);
}

#[test]
fn example_13_1_cascade_and_bootstrap() {
    let ds = load("example_13_1.jsonl");
    let r = report(&ds, &Params::default());
    let x = mcq(&ds, &r, "main", "toy-mcq");
    let c = x.cascade.as_ref().expect("cascade");
    assert_eq!(c.stages, ["8f", "16f", "32f"]);
    assert_eq!((c.baseline.config.as_str(), c.baseline.correct), ("32f", 4));
    let s = c.selected.as_ref().expect("selected");
    close(s.tau, 0.31);
    assert_eq!(
        (s.correct, s.stop_counts.as_slice()),
        (4, [4, 2, 1].as_slice())
    );
    close(s.mean_shared_cost, 96.0 / 7.0);
    close(s.mean_no_share_cost, 136.0 / 7.0);
    close(
        s.cost_reduction_pct.expect("pct"),
        100.0 * (1.0 - (96.0 / 7.0) / 32.0),
    );
    let sweep = c.sweep.as_ref().expect("sweep");
    assert_eq!(sweep.len(), 101);
    assert_eq!(sweep[30].correct, 3); // q2 stops at 8f, wrong
    assert_eq!(sweep[31].shared_cost_total, 96);
    let b = x.bootstrap.as_ref().expect("bootstrap");
    assert_eq!((b.b, b.seed), (1000, 12345));
    close(b.headroom.lo, 0.0);
    close(b.headroom.hi, 42.857142857142854);
    close(b.harmful_rate.lo, 0.0);
    close(b.harmful_rate.hi, 71.78571428571396);
}

#[test]
fn example_13_1_protocols_and_intervention() {
    let ds = load("example_13_1.jsonl");
    let r = report(&ds, &Params::default());
    let cmp = r
        .protocol_comparisons
        .iter()
        .find(|c| c.scope == "toy-mcq")
        .expect("comparison");
    assert_eq!(
        (cmp.protocol_a.as_str(), cmp.protocol_b.as_str()),
        ("main", "cached")
    );
    assert_eq!(
        (cmp.n_common, cmp.both, cmp.only_a, cmp.only_b),
        (7, 3, 0, 1)
    );
    close(cmp.jaccard.expect("jaccard"), 0.75);
    close(cmp.kappa.expect("kappa"), 0.72);
    close(cmp.p_o.expect("p_o"), 6.0 / 7.0);

    let iv = mcq(&ds, &r, "main", "toy-mcq")
        .intervention
        .as_ref()
        .expect("intervention");
    assert_eq!(
        (
            iv.items_with_intervention,
            iv.terminal_regressions,
            iv.recovered
        ),
        (7, 2, 1)
    );
    close(iv.recovery_rate.expect("rate"), 50.0);
    assert_eq!((iv.top_correct_items, iv.broken), (4, 1));
    close(iv.broken_rate.expect("rate"), 25.0);
    // Not for another protocol, and no analysis of the intervention protocol itself.
    assert!(mcq(&ds, &r, "cached", "toy-mcq").intervention.is_none());
    assert!(
        r.analyses
            .iter()
            .all(|a| ds.matrix.protocols.name(a.key.protocol) != "intervention")
    );
}

#[test]
fn example_13_1_without_zero_frame() {
    let ds = load("example_13_1.jsonl");
    let r = report(
        &ds,
        &Params {
            include_zero_frame: false,
            ..Params::default()
        },
    );
    let x = mcq(&ds, &r, "main", "toy-mcq");
    assert_eq!(x.grid.configs, ["8f", "16f", "32f"]);
    assert_eq!(
        (x.harmful_items, x.harmful_pairs, x.pairs_total),
        (3, 4, 21)
    );
    assert!(x.text_overwrite.zero_frame_configs.is_empty());
    assert_eq!(x.text_overwrite.items, 0);
    assert_eq!(x.text_overwrite.rate, Some(0.0));
    // The zero-frame cells still give the blind answers.
    assert_eq!(
        (
            x.prior_fallback.harmful_pairs,
            x.prior_fallback.fallback_pairs
        ),
        (4, 1)
    );
}

#[test]
fn example_13_1_open_ended() {
    let ds = load("example_13_1.jsonl");
    let r = report(&ds, &Params::default());
    let x = open(&ds, &r);
    for (got, want) in x
        .mean_score
        .iter()
        .zip([140.0 / 3.0, 175.0 / 3.0, 190.0 / 3.0])
    {
        close(*got, want);
    }
    assert_eq!(x.best_fixed.config, "32f");
    close(x.oracle_mean, 200.0 / 3.0);
    assert!((x.oracle_gap - 10.0 / 3.0).abs() < 1e-6);
    assert_eq!((x.regression_items, x.terminal_regressions), (1, 0));
    assert_eq!(x.items.has_regression, [false, true, false]);
    close(x.regression_rate, 100.0 / 3.0);
    let b = x.bootstrap.as_ref().expect("bootstrap");
    assert!((b.oracle_gap.hi - 3.3333333333333335).abs() < 1e-6);
    close(b.regression_rate.hi, 100.0);
}

#[test]
fn example_13_2_variants_and_equal_budgets() {
    let ds = load("example_13_2.csv");
    let zero = report(
        &ds,
        &Params {
            variant_budget: VariantBudget::Zero,
            ..Params::default()
        },
    );
    let x = mcq(&ds, &zero, "main", "toy-var");
    assert_eq!(
        x.grid.configs,
        ["textonly", "16f", "32f", "32f-b", "16f-hr"]
    );
    assert_eq!(x.grid.variants, ["16f-hr"]);
    assert_eq!(x.grid.reference_pixels, Some(151_200));
    assert_eq!(x.grid.top.as_deref(), Some("32f-b"));
    assert_eq!(
        (
            x.comparable_pairs,
            x.harmful_pairs,
            x.harmful_items,
            x.terminal_regressions
        ),
        (8, 6, 3, 1)
    );
    assert_eq!(x.items.harmful_pairs, [2, 3, 1]);
    assert_eq!(x.text_overwrite.items, 1);
    // r3 is harmful yet monotonic increasing (§3.10).
    assert_eq!(x.items.class[2].as_str(), "monotonic_increasing");
    let edges: Vec<(&str, &str)> = x
        .churn
        .iter()
        .map(|c| (c.from.as_str(), c.to.as_str()))
        .collect();
    assert_eq!(
        edges,
        [("textonly", "16f"), ("16f", "32f"), ("32f", "32f-b")]
    );

    let own = report(&ds, &Params::default());
    let x = mcq(&ds, &own, "main", "toy-var");
    assert_eq!(
        (x.comparable_pairs, x.harmful_pairs, x.harmful_items),
        (8, 5, 2)
    );
    assert_eq!(x.items.harmful_pairs, [2, 3, 0]);
    assert!(own.analyses.iter().any(|a| a.key.scope == Scope::All));
}

/// §16 on its worked example: the floor, the edges against it with their exact tests, the
/// stable items, the counts of replicates read and orphaned, and the per-item export.
#[test]
fn example_16_1_floor_edges_and_stable_items() {
    let ds = load("example_16_1.jsonl");
    let r = report(&ds, &Params::default());
    assert_eq!(
        (ds.matrix.replicates.read, ds.matrix.replicates.orphaned),
        (24, 1)
    );
    let x = mcq(&ds, &r, "main", "toy-rep");
    let rep = x.replicates.as_ref().expect("replicates");
    assert_eq!(rep.nuisances, ["phase", "rerun"]);
    let f = &rep.floor.all;
    assert_eq!((f.pairs, f.disagree, f.neg, f.pos), (22, 5, 3, 2));
    let per: Vec<(usize, usize)> = rep
        .floor
        .per_config
        .iter()
        .map(|f| (f.pairs, f.neg))
        .collect();
    assert_eq!(per, [(4, 1), (7, 1), (5, 0), (6, 1)]);
    // 8f -> 16f: b = 1 of n = 4 against 1 of 12 floor pairs.
    let e = &rep.edges[1];
    close(e.floor_nfr.expect("floor"), 100.0 / 12.0);
    close(e.excess_p.expect("p"), 0.45);
    // Rank 1 of 3: its own bound (1.35) is above the next rank's, 0.476... · 3 / 2.
    close(e.excess_q.expect("q"), 10.0 / 21.0 * 3.0 / 2.0);
    assert!(!e.beyond_noise);
    let s = &rep.stable;
    assert_eq!(
        (
            s.replicated_items,
            s.harmful_replicated,
            s.stable_harmful_replicated
        ),
        (3, 2, 1)
    );
    close(s.lottery_rate.expect("lottery"), 50.0);
    assert_eq!((s.stable_harmful_items, s.stable_terminal_items), (1, 1));
    // Only q1 is harmful under every replicate; q4 lacks a valid replicate at 16f.
    let g = grid_of(&ds, &r, "main", "toy-rep", "M");
    assert_eq!(items_where(&ds, g, |i| rep.items.stable_harmful[i]), ["q1"]);
    assert_eq!(rep.items.min_outcomes, [2, 2, 2, 1]);
    let mut lines = Vec::new();
    r.write_items(&ds.matrix, &mut lines).expect("items");
    let first: serde_json::Value =
        serde_json::from_slice(lines.split(|&b| b == b'\n').next().expect("line")).expect("json");
    assert_eq!(first["min_outcomes"], 2);
    assert_eq!(first["stable_harmful"], true);
}

/// `nuisances` keeps only the replicates named: with `phase` alone, the floor is the phase
/// pairs', and the block names the selection.
#[test]
fn example_16_1_nuisances_select_the_replicates() {
    let ds = load("example_16_1.jsonl");
    let r = report(
        &ds,
        &Params {
            nuisances: Some(vec!["phase".into()]),
            ..Params::default()
        },
    );
    let x = mcq(&ds, &r, "main", "toy-rep");
    let rep = x.replicates.as_ref().expect("replicates");
    assert_eq!(rep.nuisances, ["phase"]);
    let f = &rep.floor.all;
    assert_eq!((f.pairs, f.neg, f.pos), (7, 0, 1));
    assert_eq!(rep.floor.by_nuisance.keys().collect::<Vec<_>>(), ["phase"]);
    // No replicate of a nuisance that none names: no floor at all.
    let r = report(
        &ds,
        &Params {
            nuisances: Some(vec!["order".into()]),
            ..Params::default()
        },
    );
    assert!(mcq(&ds, &r, "main", "toy-rep").replicates.is_none());
}
