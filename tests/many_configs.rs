//! Grids of many configurations (issue 13, item 4): comparable pairs, harmful transitions,
//! prior-fallback pairs and δ-regressions are counted without building the O(K²) pairs,
//! and lists of pairs are bounded. Checked against brute force, pair by pair, on random small
//! grids (ties, resolution variants, both `variant_budget`s, a zero-frame configuration),
//! and on one item of 100 000 configurations (5·10^9 comparable pairs, which the code that
//! built them could not allocate) against an independent count.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;

use frameaudit::core::analysis::grid::Scope;
use frameaudit::core::analysis::pairs::{HarmfulTransition, MAX_LISTED_PAIRS, MAX_MATRIX_CONFIGS};
use frameaudit::core::analysis::params::{Params, VariantBudget};
use frameaudit::core::analysis::{Metrics, Report, run};
use frameaudit::core::dataset::{Dataset, load_dataset};
use frameaudit::core::matrix::NO_TEXT;
use frameaudit::core::queue::{QueueKind, queue};

fn params(variant_budget: VariantBudget, delta: f64) -> Params {
    Params {
        bootstrap_b: 0,
        sweep: false,
        variant_budget,
        delta,
        ..Params::default()
    }
}

fn load(dir: &Path, cells: &str) -> Dataset {
    let path = dir.join("cells.jsonl");
    std::fs::write(&path, cells).expect("write cells");
    load_dataset(&path, None).expect("cells load")
}

/// Every `(a, b)` with `b(a) < b(b)` and `v[a] − v[b] > δ`, in grid order of `a` then `b`.
fn brute_pairs(budgets: &[f64], v: &[f64], delta: f64) -> Vec<HarmfulTransition> {
    let k = budgets.len();
    let mut out = Vec::new();
    for a in 0..k {
        for b in 0..k {
            if budgets[a] < budgets[b] && v[a] - v[b] > delta {
                out.push(HarmfulTransition::new(a, b));
            }
        }
    }
    out
}

/// Checks every pair count of a report, and the queue's lists, against brute force.
fn check_against_brute_force(ds: &Dataset, report: &Report) {
    let m = &ds.matrix;
    for a in &report.analyses {
        for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
            let g = &mg.grid;
            let k = g.k();
            let all = brute_pairs(&g.budgets, &vec![1.0; k], -1.0).len();
            match x {
                Metrics::Mcq(x) => {
                    assert_eq!(x.comparable_pairs, all);
                    assert_eq!(x.grid.comparable_pairs, all);
                    assert_eq!(x.pairs_total, g.n() * all);
                    let protocol = m.config(g.configs[0]).protocol;
                    let (mut total, mut visual_harmful, mut fallback) = (0u64, 0, 0);
                    for (i, &item) in g.items.iter().enumerate() {
                        let y: Vec<f64> = x.items.row(i, k).iter().map(|&v| f64::from(v)).collect();
                        let harmful = brute_pairs(&g.budgets, &y, 0.0);
                        assert_eq!(x.items.harmful_pairs[i], harmful.len() as u64);
                        total += harmful.len() as u64;
                        if let Some(z) = m.blind(protocol, mg.model, item) {
                            for &HarmfulTransition {
                                lower: lo,
                                higher: hi,
                            } in &harmful
                            {
                                if g.frames(m, lo) > 0 && g.frames(m, hi) > 0 {
                                    visual_harmful += 1;
                                    let pred = m.cell_pred_norm.get(mg.cells[i * k + hi] as usize);
                                    fallback += usize::from(pred != NO_TEXT && pred == z);
                                }
                            }
                        }
                    }
                    assert_eq!(x.harmful_pairs as u64, total);
                    assert_eq!(x.prior_fallback.harmful_pairs, visual_harmful);
                    assert_eq!(x.prior_fallback.fallback_pairs, fallback);
                }
                Metrics::Open(x) => {
                    for i in 0..g.n() {
                        let s = x.items.row(i, k);
                        let pairs = brute_pairs(&g.budgets, s, x.delta);
                        assert_eq!(x.items.has_regression[i], !pairs.is_empty());
                    }
                }
            }
        }
    }
    for protocol in 0..m.protocols.len() as u32 {
        for row in queue(report, protocol, QueueKind::All) {
            let a = &report.analyses[row.analysis as usize];
            assert_ne!(a.key.scope, Scope::All);
            let mg = &a.grids.models[row.model_index as usize];
            let k = mg.grid.k();
            let (values, delta): (Vec<f64>, f64) = match &a.metrics[row.model_index as usize] {
                Metrics::Mcq(x) => (
                    x.items
                        .row(row.row as usize, k)
                        .iter()
                        .map(|&v| f64::from(v))
                        .collect(),
                    0.0,
                ),
                Metrics::Open(x) => (x.items.row(row.row as usize, k).to_vec(), x.delta),
            };
            let want = brute_pairs(&mg.grid.budgets, &values, delta);
            assert_eq!(row.harmful_pairs, want.len() as u64);
            assert_eq!(
                row.listed(),
                &want[..want.len().min(MAX_LISTED_PAIRS)],
                "the queue lists the first harmful pairs in grid order"
            );
            assert_eq!(row.truncated(), want.len() > MAX_LISTED_PAIRS);
        }
    }
}

/// A random small dataset: per configuration a frame count (ties allowed), and pixels that
/// make some of them resolution variants; one zero-frame configuration whose answers are
/// the blind answers; MCQ answers and open scores per (model, item, configuration).
#[derive(Debug, Clone)]
struct Small {
    /// (frames, pixels) of configurations c1, c2...; c0 has no frames.
    configs: Vec<(u64, u64)>,
    /// (answer letter, score step) of every (model, item, configuration), in that order.
    cells: Vec<(u8, u8)>,
    models: usize,
    items: usize,
}

fn small() -> impl Strategy<Value = Small> {
    (
        proptest::collection::vec((1u64..5, prop_oneof![Just(100u64), Just(200)]), 1..8),
        1usize..3,
        1usize..5,
    )
        .prop_flat_map(|(configs, models, items)| {
            let k = configs.len() + 1;
            let cells = proptest::collection::vec(
                (0u8..3, 0u8..21),
                models * items * k..=models * items * k,
            );
            (Just(configs), cells, Just(models), Just(items))
        })
        .prop_map(|(configs, cells, models, items)| Small {
            configs,
            cells,
            models,
            items,
        })
}

impl Small {
    /// Cells JSONL: every (model, item, configuration) once, with the drawn answer.
    fn jsonl(&self) -> String {
        let k = self.configs.len() + 1;
        let mut out = String::new();
        let letters = ["A", "B", "C"];
        for mo in 0..self.models {
            for it in 0..self.items {
                for c in 0..k {
                    let slot = (mo * self.items + it) * k + c;
                    let (letter, score) = self.cells[slot];
                    let (frames, pixels) = if c == 0 { (0, 0) } else { self.configs[c - 1] };
                    let pixels = if c == 0 {
                        String::new()
                    } else {
                        format!(",\"pixels\":{pixels}")
                    };
                    let _ = writeln!(
                        out,
                        "{{\"model\":\"m{mo}\",\"benchmark\":\"b\",\"item_id\":\"q{it}\",\"config\":\"c{c}\",\"frames\":{frames}{pixels},\"pred\":\"{}\",\"gold\":\"A\"}}",
                        letters[letter as usize]
                    );
                    // Open scores on a grid of fives, to hit δ exactly, and some off it.
                    let _ = writeln!(
                        out,
                        "{{\"model\":\"m{mo}\",\"benchmark\":\"o\",\"task\":\"open\",\"item_id\":\"q{it}\",\"config\":\"c{c}\",\"frames\":{frames}{pixels},\"score\":{}}}",
                        f64::from(score) * 5.0 - if score % 4 == 1 { 0.25 } else { 0.0 }
                    );
                }
            }
        }
        out
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn pair_counts_match_brute_force_on_random_grids(
        case in small(),
        zero in any::<bool>(),
        delta in prop_oneof![Just(0.0), Just(10.0), Just(14.5)],
    ) {
        let tmp = tempfile::tempdir().expect("tmp");
        let ds = load(tmp.path(), &case.jsonl());
        let vb = if zero { VariantBudget::Zero } else { VariantBudget::Own };
        let report = run(&ds.matrix, &params(vb, delta), None);
        check_against_brute_force(&ds, &report);
    }
}

/// One item under `k` configurations: budgets 1, 1, 2, 2, 3, 3... (pairs of equal budgets,
/// incomparable), right or wrong from a fixed generator.
fn one_item(k: usize) -> (String, Vec<bool>) {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut out = String::with_capacity(k * 80);
    let mut right = Vec::with_capacity(k);
    for i in 0..k {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let ok = !state.is_multiple_of(3);
        right.push(ok);
        let _ = writeln!(
            out,
            "{{\"model\":\"m\",\"benchmark\":\"b\",\"item_id\":\"q1\",\"config\":\"c{i:07}\",\"frames\":{},\"correct\":{ok}}}",
            i / 2 + 1
        );
    }
    (out, right)
}

/// Harmful transitions of `one_item`, counted on its known structure: configuration `b`
/// (budget `b / 2 + 1`) is above exactly the configurations before its pair of equal
/// budgets, `0 .. 2 * (b / 2)`.
fn one_item_harmful(right: &[bool]) -> u64 {
    let mut prefix = vec![0u64; right.len() + 1];
    for (i, &r) in right.iter().enumerate() {
        prefix[i + 1] = prefix[i] + u64::from(r);
    }
    (0..right.len())
        .filter(|&b| !right[b])
        .map(|b| prefix[2 * (b / 2)])
        .sum()
}

#[test]
fn the_structured_count_is_the_brute_force_count_on_a_small_item() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (cells, right) = one_item(300);
    let ds = load(tmp.path(), &cells);
    let report = run(&ds.matrix, &params(VariantBudget::Own, 10.0), None);
    check_against_brute_force(&ds, &report);
    let Metrics::Mcq(x) = &report.analyses[0].metrics[0] else {
        panic!("mcq")
    };
    assert_eq!(x.harmful_pairs as u64, one_item_harmful(&right));
    assert!(x.complementarity.omitted.is_none());
    assert_eq!(x.complementarity.right_wrong.len(), 300);
}

#[test]
fn one_item_of_a_hundred_thousand_configurations() {
    let k = 100_000usize;
    let tmp = tempfile::tempdir().expect("tmp");
    let (cells, right) = one_item(k);
    let ds = load(tmp.path(), &cells);
    let report = run(&ds.matrix, &params(VariantBudget::Own, 10.0), None);
    let m = &ds.matrix;
    let comparable = k * (k - 1) / 2 - k / 2;
    let harmful = one_item_harmful(&right);
    assert!(harmful > 1_000_000_000, "{harmful}");
    // The ALL analysis and the benchmark's, same numbers.
    assert_eq!(report.analyses.len(), 2);
    for a in &report.analyses {
        let Metrics::Mcq(x) = &a.metrics[0] else {
            panic!("mcq")
        };
        assert_eq!(x.grid.configs.len(), k);
        assert_eq!(x.comparable_pairs, comparable);
        assert_eq!(x.grid.comparable_pairs, comparable);
        assert_eq!(x.pairs_total, comparable);
        assert_eq!(x.harmful_pairs as u64, harmful);
        assert_eq!(x.items.harmful_pairs, [harmful]);
        assert_eq!(x.harmful_items, 1);
        let top_right = right[k - 1];
        assert_eq!(x.terminal_regressions, usize::from(!top_right));
        assert_eq!(
            x.correct_counts.iter().sum::<usize>(),
            right.iter().filter(|&&r| r).count()
        );
        // Complementarity is K x K: omitted above the cap, and the JSON says so.
        let omitted = x.complementarity.omitted.expect("omitted");
        assert_eq!(
            (omitted.configs, omitted.max_configs),
            (k, MAX_MATRIX_CONFIGS)
        );
        assert!(x.complementarity.right_wrong.is_empty());
    }
    let mut json = Vec::new();
    report.write_json(m, &mut json, false).expect("json");
    let json: Value = serde_json::from_slice(&json).expect("parse");
    let x = &json["analyses"][1]["models"]["m"];
    assert_eq!(x["harmful_pairs"].as_u64(), Some(harmful));
    assert_eq!(x["comparable_pairs"].as_u64(), Some(comparable as u64));
    assert_eq!(x["complementarity"]["right_wrong"], Value::Null);
    assert_eq!(x["complementarity"]["pair_oracle_gain"], Value::Null);
    assert_eq!(
        x["complementarity"]["omitted"],
        serde_json::json!({"configs": k, "max_configs": MAX_MATRIX_CONFIGS})
    );

    // The queue counts every harmful transition and lists the first MAX_LISTED_PAIRS, in grid
    // order of the lower configuration, then the higher.
    let rows = queue(&report, 0, QueueKind::Harmful);
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.harmful_pairs, harmful);
    assert_eq!(row.listed().len(), MAX_LISTED_PAIRS);
    assert!(row.truncated());
    let mut want = Vec::new();
    'outer: for a in (0..k).filter(|&a| right[a]) {
        for b in (2 * (a / 2) + 2..k).filter(|&b| !right[b]) {
            want.push(HarmfulTransition::new(a, b));
            if want.len() == MAX_LISTED_PAIRS {
                break 'outer;
            }
        }
    }
    assert_eq!(row.listed(), want);

    // `list` says so too.
    let path = tmp.path().join("cells.jsonl");
    let out = common::frameaudit(&["list", path.to_str().expect("utf8"), "--format", "jsonl"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let line: Value = serde_json::from_str(common::stdout(&out).trim()).expect("jsonl");
    assert_eq!(line["harmful_pairs"].as_u64(), Some(harmful));
    assert_eq!(
        line["pairs"].as_array().map(Vec::len),
        Some(MAX_LISTED_PAIRS)
    );
    assert_eq!(line["pairs_truncated"], Value::Bool(true));
}
