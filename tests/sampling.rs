//! The sampling policies against the harnesses' own formulas: every line of
//! `tests/data/sampling_vectors.jsonl` (written by `tests/reference/sampling_vectors.py`) must
//! be reproduced exactly, by the policy's own function and by `indices`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use frameaudit::core::dataset::ConfigSampling;
use frameaudit::core::sampling::{self, Policy};
use serde_json::Value;

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/sampling_vectors.jsonl"
);

/// One case of the vector file.
struct Case {
    line: usize,
    policy: String,
    t: u64,
    n: u64,
    video_fps: Option<f64>,
    fps: Option<f64>,
    base: Option<u64>,
    indices: Vec<u64>,
}

fn parse(line: usize, text: &str) -> Result<Case, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("line {line}: {e}"))?;
    let uint = |k: &str| v.get(k).and_then(Value::as_u64);
    let float = |k: &str| v.get(k).and_then(Value::as_f64);
    let field = |k: &str| uint(k).ok_or(format!("line {line}: no integer {k:?}"));
    Ok(Case {
        line,
        policy: v
            .get("policy")
            .and_then(Value::as_str)
            .ok_or(format!("line {line}: no \"policy\""))?
            .to_owned(),
        t: field("t")?,
        n: field("n")?,
        video_fps: float("video_fps"),
        fps: float("fps"),
        base: uint("base"),
        indices: v
            .get("indices")
            .and_then(Value::as_array)
            .ok_or(format!("line {line}: no \"indices\" array"))?
            .iter()
            .map(|x| {
                x.as_u64()
                    .ok_or(format!("line {line}: index {x} is not a u64"))
            })
            .collect::<Result<_, _>>()?,
    })
}

/// What the policy's own function gives for a case.
fn direct(c: &Case) -> Result<Vec<u64>, String> {
    Ok(match c.policy.as_str() {
        "linspace" => sampling::linspace(c.t, c.n),
        "interior" => sampling::interior(c.t, c.n),
        "segment_mid" => sampling::segment_mid(c.t, c.n),
        "uniform_round" => sampling::uniform_round(c.t, c.n),
        "dense_start" => sampling::dense_start(c.t, c.n),
        "fps" => sampling::fps(
            c.t,
            c.video_fps.ok_or("no video_fps")?,
            c.fps.ok_or("no fps")?,
        )?,
        "nested" => sampling::nested(c.t, c.n, c.base.ok_or("no base")?)?,
        other => return Err(format!("unknown policy {other:?}")),
    })
}

/// Where two index lists first differ, with a little context on each side.
fn diff(expected: &[u64], got: &[u64]) -> String {
    let first = expected
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(got.len()));
    let lo = first.saturating_sub(3);
    let window = |v: &[u64]| format!("{:?}", &v[lo.min(v.len())..(first + 4).min(v.len())]);
    format!(
        "lengths expected {} got {}; first difference at position {first}: expected[{lo}..] = {} got[{lo}..] = {}",
        expected.len(),
        got.len(),
        window(expected),
        window(got)
    )
}

#[test]
fn every_vector_matches_its_harness() {
    let text = std::fs::read_to_string(VECTORS).unwrap_or_else(|e| {
        panic!("cannot read {VECTORS}: {e}; run tests/reference/sampling_vectors.py")
    });
    let mut per_policy: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = 0usize;
    let mut report = String::new();
    for (i, line) in text.lines().enumerate() {
        let c = match parse(i + 1, line) {
            Ok(c) => c,
            Err(e) => panic!("malformed vector file: {e}"),
        };
        *per_policy.entry(c.policy.clone()).or_default() += 1;
        let sampling = ConfigSampling {
            policy: c.policy.clone(),
            base: c.base,
            fps: c.fps,
            inferred: false,
        };
        let via_indices = Policy::from_config(&sampling)
            .and_then(|p| sampling::indices(&p, c.t, c.n, c.video_fps));
        let mut problems = Vec::new();
        for (how, got) in [("own function", direct(&c)), ("indices()", via_indices)] {
            match got {
                Ok(got) if got == c.indices => {}
                Ok(got) => problems.push(format!("{how}: {}", diff(&c.indices, &got))),
                Err(e) => problems.push(format!("{how}: error {e:?}")),
            }
        }
        if c.policy == "fps" && c.n != c.indices.len() as u64 {
            problems.push(format!(
                "n = {} but the fps case lists {} indices",
                c.n,
                c.indices.len()
            ));
        }
        if !problems.is_empty() {
            failures += 1;
            if failures <= 20 {
                let _ = writeln!(
                    report,
                    "line {} policy {} T={} N={}{}{}{}:\n  {}",
                    c.line,
                    c.policy,
                    c.t,
                    c.n,
                    c.video_fps
                        .map_or(String::new(), |v| format!(" video_fps={v}")),
                    c.fps.map_or(String::new(), |v| format!(" fps={v}")),
                    c.base.map_or(String::new(), |v| format!(" base={v}")),
                    problems.join("\n  ")
                );
            }
        }
    }
    assert!(
        failures == 0,
        "{failures} of {} vectors differ from the harness (first 20):\n{report}",
        text.lines().count()
    );
    // Guard against a truncated or regenerated-empty file: every policy is covered, widely.
    for name in frameaudit::core::dataset::POLICIES {
        let n = per_policy.get(name).copied().unwrap_or(0);
        assert!(
            n >= 500,
            "only {n} vectors for policy {name}: {per_policy:?}"
        );
    }
}
