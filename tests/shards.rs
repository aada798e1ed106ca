//! `--shard i/n --overlap f` on the demo's queue, through `frameaudit list`: the shards
//! cover the queue, overlap exactly in the shared units, and do not change between runs
//! or, but for the new shard's units, when an annotator joins.

mod common;

use std::collections::BTreeSet;

use common::{frameaudit, stderr, stdout};

/// The (model, benchmark, item) units of a `list` run.
fn units(extra: &[&str]) -> BTreeSet<String> {
    let demo = common::repo().join("fixtures/demo").display().to_string();
    let mut args = vec!["list", demo.as_str()];
    args.extend_from_slice(extra);
    let o = frameaudit(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .skip(1)
        .map(|l| l.split('\t').take(3).collect::<Vec<_>>().join("/"))
        .collect()
}

#[test]
fn shards_cover_the_queue_and_share_only_the_overlap() {
    let all = units(&[]);
    assert!(all.len() > 50, "{}", all.len());
    let shards: Vec<BTreeSet<String>> = (1..=3)
        .map(|i| units(&["--shard", &format!("{i}/3"), "--overlap", "0.2"]))
        .collect();
    let union: BTreeSet<String> = shards.iter().flatten().cloned().collect();
    assert_eq!(union, all);
    let shared: BTreeSet<String> = shards[0]
        .iter()
        .filter(|u| shards[1].contains(*u) && shards[2].contains(*u))
        .cloned()
        .collect();
    assert!(!shared.is_empty());
    for (a, sa) in shards.iter().enumerate() {
        for sb in &shards[a + 1..] {
            let both: BTreeSet<String> = sa.intersection(sb).cloned().collect();
            assert_eq!(both, shared, "two shards share more than the overlap");
        }
    }
    // The same split on every run; without overlap the shards are disjoint.
    assert_eq!(units(&["--shard", "2/3", "--overlap", "0.2"]), shards[1]);
    let plain: Vec<BTreeSet<String>> = (1..=3)
        .map(|i| units(&["--shard", &format!("{i}/3")]))
        .collect();
    assert_eq!(plain.iter().map(BTreeSet::len).sum::<usize>(), all.len());
    // A fourth annotator takes units from the others; none moves between the old three.
    let four: Vec<BTreeSet<String>> = (1..=4)
        .map(|i| units(&["--shard", &format!("{i}/4")]))
        .collect();
    for (old, new) in plain.iter().zip(&four) {
        assert!(new.is_subset(old), "a unit moved between old shards");
    }
    assert!(!four[3].is_empty());
}

#[test]
fn bad_shard_specs_are_refused() {
    let demo = common::repo().join("fixtures/demo").display().to_string();
    let o = frameaudit(&["list", &demo, "--shard", "0/2"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("expected i/n with 1 <= i <= n"),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&["list", &demo, "--shard", "1/2", "--overlap", "2"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("expected a share between 0 and 1"),
        "{}",
        stderr(&o)
    );
}
