//! Frame rules against what the harnesses' own code sampled: every vector of
//! tests/data/harness_vectors.jsonl (written by tests/reference/harness_vectors.py, which runs
//! the harness code), the lead's recorded frames of lmms-eval 0.7.3 through `resolve` of the
//! real results files, and VLMEvalKit's runs by name; mutated rules must fail.

mod common;

use std::path::PathBuf;

use frameaudit::core::import::vlmevalkit::Budget;
use frameaudit::core::rules::lmms_eval::{self, LmmsRun};
use frameaudit::core::rules::vlmevalkit::{self, VlmRun};
use frameaudit::core::rules::{FrameRule, NframesCap, Provenance, TorchLinspace, VideoFacts};
use serde_json::Value;

/// The qwen_vl_utils release the rules follow (the one lmms-eval 0.5.0 and later require).
const QWEN_VL_UTILS: &str = "0.0.14";

/// Whether a vector holds for qwen_vl_utils 0.0.14 (the lines of other qwen_vl_utils
/// releases name them, and are checked by `qwen_vl_utils_releases`).
fn holds_for_main_qwen_vl_utils(v: &Value) -> bool {
    match v.get("qwen_vl_utils").and_then(Value::as_array) {
        None => true,
        Some(rs) => rs.iter().any(|r| r == QWEN_VL_UTILS),
    }
}

fn vectors() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/harness_vectors.jsonl");
    let text = std::fs::read_to_string(&path).expect("harness_vectors.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn facts(v: &Value) -> VideoFacts {
    let video = &v["video"];
    VideoFacts {
        num_frames: video["num_frames"].as_u64().expect("num_frames"),
        fps: video["fps"].as_f64(),
        bound: video["bound"]
            .as_array()
            .map(|b| (b[0].as_f64().expect("start"), b[1].as_f64().expect("end"))),
    }
}

/// Whether `rule` gives what the harness did for vector `v`.
fn agrees(rule: &FrameRule, v: &Value) -> Result<(), String> {
    let got = rule.indices(&facts(v));
    match (v.get("indices"), got) {
        (Some(want), Ok(got)) => {
            let want: Vec<u64> = serde_json::from_value(want.clone()).map_err(|e| e.to_string())?;
            if want == got {
                Ok(())
            } else {
                Err(format!("want {want:?}\n got {got:?}"))
            }
        }
        (Some(want), Err(e)) => Err(format!("want {want}, got the error {e}")),
        (None, Ok(got)) => Err(format!("the harness raised {}, got {got:?}", v["error"])),
        (None, Err(e)) => {
            let harness = v["error"].as_str().unwrap_or_default();
            // qwen_vl_utils' own condition must be named as it says it.
            if harness.starts_with("nframes should in interval") && !e.contains(harness) {
                return Err(format!("harness: {harness}, frameaudit: {e}"));
            }
            Ok(())
        }
    }
}

#[test]
fn every_vector_matches_the_harness() {
    let all: Vec<Value> = vectors()
        .into_iter()
        .filter(|v| v.get("rule").is_some() && holds_for_main_qwen_vl_utils(v))
        .collect();
    assert!(all.len() > 3_000, "only {} vectors", all.len());
    let mut failures = Vec::new();
    let mut kinds = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for v in &all {
        let rule: FrameRule = serde_json::from_value(v["rule"].clone())
            .unwrap_or_else(|e| panic!("rule {}: {e}", v["rule"]));
        // Stored exactly as dataset.json would store it.
        assert_eq!(
            serde_json::to_value(&rule).expect("serialises"),
            v["rule"],
            "round trip of {}",
            v["rule"]
        );
        let kind = v["rule"]["kind"].as_str().unwrap_or("?").to_string();
        let e = kinds.entry(kind).or_default();
        e.0 += 1;
        if v.get("error").is_some() {
            e.1 += 1;
        }
        if let Err(why) = agrees(&rule, v) {
            failures.push(format!("{} {}: {why}", v["rule"], v["video"]));
        }
    }
    println!("{} vectors (kind: cases, errors): {kinds:?}", all.len());
    assert!(
        failures.is_empty(),
        "{} of {} vectors differ, e.g.\n{}",
        failures.len(),
        all.len(),
        failures[..failures.len().min(8)].join("\n")
    );
    // Every rule kind and both torch kernels are covered, errors included.
    for k in [
        "policy",
        "qwen_nframes",
        "qwen_fps",
        "llava_stride",
        "get_index",
    ] {
        assert!(
            kinds.get(k).is_some_and(|c| c.0 > 100),
            "kind {k}: {kinds:?}"
        );
    }
    assert!(kinds["qwen_nframes"].1 > 0 && kinds["llava_stride"].1 > 0);
    assert!(all.iter().any(|v| v["rule"]["linspace"] == "plain"));
}

/// Every (rule, video, harness outcome) of the vectors: the rule lines, and the lmms-eval
/// runs with the rule `resolve` gives at each release that reproduces them.
fn all_cases() -> Vec<(Value, VideoFacts, Value)> {
    let mut out = Vec::new();
    for v in vectors() {
        if v.get("rule").is_some() && holds_for_main_qwen_vl_utils(&v) {
            let outcome = v
                .get("indices")
                .cloned()
                .unwrap_or_else(|| v["error"].clone());
            out.push((v["rule"].clone(), facts(&v), outcome));
        }
        let Some(l) = v.get("lmms") else { continue };
        let wrapper = l["model"].as_str().unwrap_or("");
        for run_line in v["runs"].as_array().expect("runs") {
            let args = model_args(run_line["model_args"].as_str().unwrap_or(""));
            let backend = l["force_simple"]
                .as_bool()
                .unwrap_or(false)
                .then(|| format!("lmms_eval.models.simple.{wrapper}.X (simple)"));
            for (release, info) in v["releases"].as_object().expect("releases") {
                if !info.is_string() {
                    continue;
                }
                let version = exact_release(release);
                let run = LmmsRun {
                    wrapper,
                    backend: backend.as_deref(),
                    model_args: &args,
                    version: Some(&version),
                    task: "videomme",
                };
                let rr = lmms_eval::resolve(&run, importer_budget(&run));
                let (Provenance::Reproduced, Some(rule)) = (rr.provenance, rr.rule) else {
                    continue;
                };
                let rule = serde_json::to_value(&rule).expect("rule JSON");
                for case in run_line["cases"].as_array().expect("cases") {
                    let Some((_, outcome)) = case[2]
                        .as_object()
                        .expect("outcomes")
                        .iter()
                        .find(|(k, _)| k.split(' ').any(|r| r == release))
                    else {
                        continue;
                    };
                    let facts = VideoFacts {
                        num_frames: case[0].as_u64().expect("T"),
                        fps: case[1].as_f64(),
                        bound: None,
                    };
                    out.push((rule.clone(), facts, outcome.clone()));
                }
            }
        }
    }
    out
}

/// Whether `rule` gives `outcome` (indices, or an error) for `facts`.
fn outcome_agrees(rule: &FrameRule, facts: &VideoFacts, outcome: &Value) -> bool {
    match (outcome, rule.indices(facts)) {
        (Value::Array(_), Ok(got)) => {
            serde_json::from_value::<Vec<u64>>(outcome.clone()).is_ok_and(|w| w == got)
        }
        (Value::String(_), Err(_)) => true,
        _ => false,
    }
}

/// A rule changed by `mutate` must disagree with some vectors of its kind.
fn mutation_fails(
    cases: &[(Value, VideoFacts, Value)],
    kind: &str,
    mutate: impl Fn(&mut Value) -> bool,
) {
    let mut tried = 0;
    for (rule, facts, outcome) in cases.iter().filter(|c| c.0["kind"] == kind) {
        let Ok(orig) = serde_json::from_value::<FrameRule>(rule.clone()) else {
            continue;
        };
        if !outcome_agrees(&orig, facts, outcome) {
            continue;
        }
        let mut r = rule.clone();
        if !mutate(&mut r) {
            continue;
        }
        tried += 1;
        let Ok(mutated) = serde_json::from_value::<FrameRule>(r) else {
            continue;
        };
        if !outcome_agrees(&mutated, facts, outcome) {
            return;
        }
    }
    panic!("the mutation of {kind} agrees with all {tried} vectors it was tried on");
}

#[test]
fn mutated_rules_fail() {
    let cases = all_cases();
    mutation_fails(&cases, "qwen_nframes", |r| {
        let other = if r["cap"] == "even_min2" {
            "none"
        } else {
            "even_min2"
        };
        r["cap"] = Value::from(other);
        true
    });
    // Every resample mode against every other, every cap against every other, both kernels.
    let modes = ["unique_last", "unique", "append_last"];
    for kind in ["qwen_fps", "qwen_nframes"] {
        for from in modes {
            for to in modes {
                if from == to || kind == "qwen_nframes" && from != "append_last" {
                    continue;
                }
                mutation_fails(&cases, kind, |r| {
                    r["resample"]["mode"] == from && {
                        r["resample"]["mode"] = Value::from(to);
                        true
                    }
                });
            }
        }
    }
    let caps = ["none", "total", "even_min2", "even_below"];
    for from in caps {
        for to in caps {
            if from != to {
                mutation_fails(&cases, "qwen_nframes", |r| {
                    r["cap"] == from && {
                        r["cap"] = Value::from(to);
                        true
                    }
                });
            }
        }
    }
    for (from, to) in [("fma", "plain"), ("plain", "fma")] {
        mutation_fails(&cases, "qwen_nframes", |r| {
            r["linspace"] == from && {
                r["linspace"] = Value::from(to);
                true
            }
        });
    }
    mutation_fails(&cases, "qwen_fps", |r| {
        r.get("max_frames").is_some() && {
            r.as_object_mut().expect("rule").remove("max_frames");
            true
        }
    });
    mutation_fails(&cases, "qwen_fps", |r| {
        r["resample"].is_object() && {
            r.as_object_mut().expect("rule").remove("resample");
            true
        }
    });
    mutation_fails(&cases, "get_index", |r| {
        r["bounded"] = Value::from(!r["bounded"].as_bool().unwrap_or(false));
        true
    });
    mutation_fails(&cases, "llava_stride", |r| {
        r["rate"] = Value::from(r["rate"].as_f64().unwrap_or(1.0) + 1.0);
        true
    });
    mutation_fails(&cases, "qwen_fps", |r| {
        r["fps"] = Value::from(r["fps"].as_f64().unwrap_or(2.0) * 1.5);
        true
    });
    mutation_fails(&cases, "llava_stride", |r| {
        r["force_sample"] = Value::from(!r["force_sample"].as_bool().unwrap_or(false));
        true
    });
    mutation_fails(&cases, "get_index", |r| {
        r["kind"] = Value::from("policy");
        r["policy"] = Value::from("linspace");
        true
    });
    mutation_fails(&cases, "policy", |r| {
        if r["policy"] == "interior" {
            r["policy"] = Value::from("linspace");
            true
        } else {
            false
        }
    });
}

#[test]
fn floor_instead_of_round_fails() {
    // torch.linspace(...).round() floored instead: many vectors must then differ.
    let mut differ = 0;
    for v in vectors()
        .iter()
        .filter(|v| v["rule"]["kind"] == "qwen_nframes" && holds_for_main_qwen_vl_utils(v))
    {
        let (Some(want), Ok(rule)) = (
            v.get("indices"),
            serde_json::from_value::<FrameRule>(v["rule"].clone()),
        ) else {
            continue;
        };
        let t = facts(v).num_frames;
        let n = want.as_array().map_or(0, |a| a.len()) as u64;
        if n < 2 || !matches!(rule, FrameRule::QwenNframes { resample: None, .. }) {
            continue;
        }
        let floored: Vec<u64> = (0..n)
            .map(|i| ((t - 1) as f32 * i as f32 / (n - 1) as f32).floor() as u64)
            .collect();
        let want: Vec<u64> = serde_json::from_value(want.clone()).expect("indices");
        if floored != want {
            differ += 1;
        }
    }
    assert!(differ > 100, "only {differ} vectors tell floor from round");
}

fn model_args(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn results_files(root: &std::path::Path) -> Vec<Value> {
    let mut out = Vec::new();
    let dir = root.join("lmms-eval-0.7.3/videomme");
    for model in std::fs::read_dir(&dir).expect("videomme runs").flatten() {
        for f in std::fs::read_dir(model.path())
            .expect("model dir")
            .flatten()
        {
            let p = f.path();
            if p.to_string_lossy().ends_with("_results.json") {
                let text = std::fs::read_to_string(&p).expect("results");
                let mut r: Value = serde_json::from_str(&text).expect("results JSON");
                r["samples_file"] = Value::from(
                    p.to_string_lossy()
                        .replace("_results.json", "_samples_videomme.jsonl"),
                );
                out.push(r);
            }
        }
    }
    out
}

/// The version the importer passes for a shared run: `lmms_eval_version` is `unknown@unknown`
/// (which it reads as unknown), so the family the samples file's shape tells, `0.7` for a
/// first line with `token_counts` or a flat `filtered_resps`.
fn importer_version(r: &Value) -> &'static str {
    assert_eq!(r["lmms_eval_version"], "unknown@unknown");
    let path = r["samples_file"].as_str().expect("samples file");
    let text = std::fs::read_to_string(path).expect("samples");
    let first: Value = serde_json::from_str(text.lines().next().expect("a sample")).expect("JSON");
    assert!(
        first.get("token_counts").is_some()
            || first.get("filtered_resps").is_some_and(|f| !f.is_array()),
        "{path} is not 0.7-shaped"
    );
    "0.7"
}

#[test]
fn lmms_eval_truth_through_resolve() {
    let Some(root) = common::shared_harness_runs() else {
        return;
    };
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("truth/lmms-eval-0.7.3-videomme-frames.json"))
            .expect("truth"),
    )
    .expect("truth JSON");
    let results = results_files(&root);
    assert_eq!(results.len(), 13);
    let mut checked = 0;
    for r in &results {
        let c = &r["config"];
        let args = model_args(c["model_args"].as_str().expect("model_args"));
        let wrapper = c["model"].as_str().expect("model");
        let run = LmmsRun {
            wrapper,
            backend: c["model_backend"].as_str(),
            model_args: &args,
            version: Some(importer_version(r)),
            task: "videomme",
        };
        let key = ["max_num_frames", "num_frame", "max_frames_num"]
            .iter()
            .find_map(|k| args.iter().find(|(a, _)| a == k))
            .map(|(_, v)| v.parse::<u64>().expect("a count"));
        let frames = key
            .or_else(|| lmms_eval::default_budget(&run))
            .expect("budget");
        let rr = lmms_eval::resolve(&run, frames);
        assert_eq!(rr.provenance, Provenance::Reproduced, "{}", rr.name);
        assert!(rr.name.starts_with("lmms-eval 0.7.x"), "{}", rr.name);
        let rule = rr.rule.expect("a rule");
        let truth_key = match wrapper {
            "qwen2_5_vl" => "qwen2_5_vl_chat",
            "internvl3" | "internvl3_5" => "internvl3",
            other => other,
        };
        for (vid, t) in truth.as_object().expect("videos") {
            let facts = VideoFacts {
                num_frames: t["T"].as_u64().expect("T"),
                fps: t["video_fps"].as_f64(),
                bound: None,
            };
            let got = rule.indices(&facts).expect("frames");
            match t.get(format!("{truth_key}_{frames}")) {
                Some(want) => {
                    let want: Vec<u64> = serde_json::from_value(want.clone()).expect("indices");
                    assert_eq!(got, want, "{} on video {vid}", rr.name);
                    checked += 1;
                }
                // max_num_frames=0: the chat class still asks for 2 frames.
                None if frames == 0 => assert_eq!(got.len(), 2, "{}", rr.name),
                None => panic!("no truth for {truth_key}_{frames}"),
            }
        }
    }
    // The other recorded wrappers, by their rules.
    for (vid, t) in truth.as_object().expect("videos") {
        let facts = VideoFacts {
            num_frames: t["T"].as_u64().expect("T"),
            fps: t["video_fps"].as_f64(),
            bound: None,
        };
        for n in [8u64, 16, 32, 64] {
            let simple = lmms_eval::resolve(
                &LmmsRun {
                    wrapper: "qwen2_5_vl",
                    backend: Some("lmms_eval.models.simple.qwen2_5_vl.Qwen2_5_VL (simple)"),
                    model_args: &[],
                    version: None,
                    task: "videomme",
                },
                n,
            );
            let ov = lmms_eval::resolve(
                &LmmsRun {
                    wrapper: "llava_onevision",
                    backend: None,
                    model_args: &[],
                    version: Some("0.7.3"),
                    task: "videomme",
                },
                n,
            );
            let vid_rule = lmms_eval::resolve(
                &LmmsRun {
                    wrapper: "llava_vid",
                    backend: None,
                    model_args: &[],
                    version: Some("0.7.3"),
                    task: "videomme",
                },
                n,
            );
            for (rr, key) in [
                (simple, "qwen2_5_vl_simple"),
                (ov, "llava_onevision"),
                (vid_rule, "llava_vid"),
            ] {
                let want: Vec<u64> =
                    serde_json::from_value(t[format!("{key}_{n}")].clone()).expect("indices");
                let got = rr.rule.expect("rule").indices(&facts).expect("frames");
                assert_eq!(got, want, "{key}_{n} on {vid}");
                checked += 1;
            }
            // The scale-grid release over its 1 fps cache.
            let seed = FrameRule::Policy {
                policy: "uniform_round".into(),
                n,
                fps: None,
                base: None,
            };
            let cache = VideoFacts {
                num_frames: t["cache_1fps_frames"].as_u64().expect("cache"),
                fps: Some(1.0),
                bound: None,
            };
            let want: Vec<u64> =
                serde_json::from_value(t[format!("seed_uniform_{n}")].clone()).expect("indices");
            assert_eq!(seed.indices(&cache).expect("frames"), want);
        }
    }
    println!("{checked} recorded frame sets reproduced");
    assert!(checked >= 80, "{checked}");
}

#[test]
fn lmms_eval_results_resolve() {
    let Some(root) = common::shared_harness_runs() else {
        return;
    };
    for r in results_files(&root) {
        let c = &r["config"];
        let args = model_args(c["model_args"].as_str().expect("model_args"));
        let run = LmmsRun {
            wrapper: c["model"].as_str().expect("model"),
            backend: c["model_backend"].as_str(),
            model_args: &args,
            version: Some(importer_version(&r)),
            task: "videomme",
        };
        let rr = lmms_eval::resolve(&run, 16);
        assert_eq!(
            rr.provenance,
            Provenance::Reproduced,
            "{}: {}",
            rr.name,
            rr.why
        );
        // The family, and the releases the results allow: model_backend is 0.7.3's.
        assert!(
            rr.why.starts_with("lmms-eval 0.7.x")
                && rr.why.contains("model_backend")
                && rr.why.contains("0.7.3"),
            "{}",
            rr.why
        );
        assert!(rr.frame_files.is_none());
        println!("{}\n    {}", rr.name, rr.why);
        // Without model_backend the family's releases are compared: they agree.
        let rr = lmms_eval::resolve(
            &LmmsRun {
                backend: None,
                ..run
            },
            16,
        );
        assert_eq!(
            rr.provenance,
            Provenance::Reproduced,
            "{}: {}",
            rr.name,
            rr.why
        );
        assert!(rr.why.contains("agree"), "{}", rr.why);
    }
}

#[test]
fn lmms_eval_wrappers_and_versions() {
    let args = |s: &str| model_args(s);
    let run = |w: &'static str, a: &'static [(String, String)], v: Option<&'static str>| LmmsRun {
        wrapper: w,
        backend: None,
        model_args: a,
        version: v,
        task: "videomme",
    };
    let fps = Box::leak(Box::new(args("fps=1"))).as_slice();
    let rr = lmms_eval::resolve(&run("qwen2_5_vl", fps, Some("0.7.3")), 32);
    // 60 frames for a 60 s video at fps=1: the frame count is not used.
    let facts = VideoFacts {
        num_frames: 1800,
        fps: Some(30.0),
        bound: None,
    };
    assert_eq!(
        rr.rule.expect("rule").indices(&facts).expect("ok").len(),
        60
    );
    let rr = lmms_eval::resolve(&run("qwen2_5_vl", &[], Some("0.4.0")), 8);
    assert!(
        matches!(rr.rule, Some(FrameRule::QwenFps { .. })),
        "{}",
        rr.name
    );
    assert_eq!(rr.provenance, Provenance::Reproduced);
    let rr = lmms_eval::resolve(&run("qwen2_5_vl", &[], Some("0.3.5")), 8);
    assert!(rr.name.contains("simple class"), "{}", rr.name);
    let rr = lmms_eval::resolve(&run("qwen3_vl", &[], Some("0.7.3")), 8);
    assert!(matches!(
        rr.rule,
        Some(FrameRule::QwenNframes {
            cap: NframesCap::None,
            ..
        })
    ));
    let rr = lmms_eval::resolve(&run("internvl3", &[], Some("0.6.1")), 8);
    assert_eq!(rr.provenance, Provenance::Reproduced, "{}", rr.why);
    let pyav = Box::leak(Box::new(args("video_decode_backend=pyav"))).as_slice();
    let rr = lmms_eval::resolve(&run("llava_vid", pyav, Some("0.7")), 8);
    assert!(rr.rule.is_none());
    assert_eq!(rr.provenance, Provenance::Reproduced, "{}", rr.why);
    // Before 0.3.0 pyav was llava_vid's default reader: not reproduced.
    let rr = lmms_eval::resolve(&run("llava_vid", &[], Some("0.2.4")), 8);
    assert_eq!(rr.provenance, Provenance::Assumed, "{}", rr.why);
    for (w, d) in [
        ("qwen2_5_vl", 32),
        ("qwen3_vl", 32),
        ("qwen2_vl", 32),
        ("llava_vid", 20),
        ("llava_onevision", 32),
        ("llava_onevision1_5", 32),
        ("internvl2", 32),
        ("internvl3", 32),
        ("internvl3_5", 32),
    ] {
        assert_eq!(
            lmms_eval::default_budget(&run(w, &[], None)),
            Some(d),
            "{w}"
        );
    }
    let rr = lmms_eval::resolve(&run("video_llava", &[], None), 8);
    assert_eq!(rr.provenance, Provenance::Assumed);
}

#[test]
fn vlmevalkit_runs_resolve() {
    fn vlm(model: &str, dataset: &str, budget: Budget) -> frameaudit::core::rules::RunRule {
        vlmevalkit::resolve(&VlmRun {
            model,
            dataset,
            budget,
        })
    }
    let v1800 = VideoFacts {
        num_frames: 1800,
        fps: Some(30.0),
        bound: None,
    };
    let rr = vlm("Qwen2.5-VL-7B-Instruct", "Video-MME", Budget::Frames(8));
    assert_eq!(rr.provenance, Provenance::Reproduced);
    assert!(rr.frame_files.is_none());
    assert_eq!(
        rr.rule.expect("rule").indices(&v1800).expect("ok"),
        [0, 257, 514, 771, 1028, 1285, 1542, 1799]
    );
    let rr = vlm("Qwen2.5-VL-7B-Instruct", "Video-MME", Budget::Fps(1.0));
    assert_eq!(
        rr.rule.expect("rule").indices(&v1800).expect("ok").len(),
        60
    );
    let rr = vlm("InternVL3_5-8B", "MVBench_MP4", Budget::Frames(8));
    assert_eq!(rr.provenance, Provenance::Reproduced);
    assert_eq!(
        rr.frame_files.as_deref(),
        Some("images/MVBench_MP4/{video}/frame-{i}-of-{n}.jpg")
    );
    assert!(
        matches!(rr.rule, Some(FrameRule::Policy { ref policy, .. }) if policy == "segment_mid")
    );
    let rr = vlm("InternVL3_5-8B", "Video-MME", Budget::Fps(1.0));
    assert_eq!(
        rr.frame_files.as_deref(),
        Some("images/Video-MME/{video}/frame-{i}-of-{n}-1.0fps.jpg")
    );
    // MLVU names a video's folder without its suffix (every `.mp4` in the name goes).
    let rr = vlm("InternVL3_5-8B", "MLVU_MCQ", Budget::Frames(8));
    let files = rr.frame_files.expect("files");
    assert_eq!(files, "images/MLVU_MCQ/{video_stem}/frame-{i}-of-{n}.jpg");
    assert_eq!(
        frameaudit::core::frames::saved_frame_path(&files, "a.mp4b.mp4", 2, 8),
        "images/MLVU_MCQ/ab/frame-3-of-8.jpg"
    );
    assert_eq!(
        frameaudit::core::frames::saved_frame_path(&files, "noext", 0, 8),
        "images/MLVU_MCQ/noext/frame-1-of-8.jpg"
    );
    // LLaVA-Video: force_sample is on for video checkpoints, so 64 uniform frames.
    let rr = vlm("llava_video_qwen2_7b", "Video-MME", Budget::Frames(64));
    assert_eq!(rr.provenance, Provenance::Reproduced);
    assert_eq!(
        rr.rule.expect("rule").indices(&v1800).expect("ok"),
        frameaudit::core::sampling::linspace(1800, 64)
    );
    let rr = vlm("llava_video_qwen2_7b", "Video-MME", Budget::Fps(1.0));
    assert!(rr.rule.is_none());
    let rr = vlm(
        "llava_onevision_qwen2_7b_ov",
        "Video-MME",
        Budget::Frames(64),
    );
    assert!(matches!(
        rr.rule,
        Some(FrameRule::LlavaStride {
            force_sample: false,
            ..
        })
    ));
    let rr = vlm("Video-LLaVA-7B", "Video-MME", Budget::Frames(8));
    assert_eq!(rr.provenance, Provenance::Assumed);
    assert!(rr.why.contains("VideoLLaVA"), "{}", rr.why);
    let rr = vlm("NoSuchModel", "Video-MME", Budget::Frames(8));
    assert_eq!(rr.provenance, Provenance::Assumed);
    assert!(rr.why.contains("not a model name"), "{}", rr.why);
    // The shared VLMEvalKit runs, by their file names.
    if let Some(root) = common::shared_harness_runs() {
        let dir = root.join("vlmevalkit-e8e78f05/video-mme");
        let mut n = 0;
        for model in std::fs::read_dir(&dir).expect("runs").flatten() {
            let name = model.file_name().to_string_lossy().into_owned();
            for f in std::fs::read_dir(model.path()).expect("model").flatten() {
                let file = f.file_name().to_string_lossy().into_owned();
                let Some(rest) = file
                    .strip_prefix(&format!("{name}_"))
                    .and_then(|r| r.strip_suffix(".xlsx"))
                else {
                    continue;
                };
                if rest.ends_with("_score") {
                    continue;
                }
                let (dataset, budget) = rest.rsplit_once('_').expect("dataset_budget");
                let budget = if let Some(k) = budget.strip_suffix("frame") {
                    Budget::Frames(k.parse().expect("count"))
                } else {
                    Budget::Fps(budget.trim_end_matches("fps").parse().expect("rate"))
                };
                let rr = vlm(&name, dataset, budget);
                assert_eq!(rr.provenance, Provenance::Reproduced, "{}", rr.name);
                println!("{file}: {}", rr.name);
                n += 1;
            }
        }
        assert!(n >= 8, "{n}");
    }
}

#[test]
fn errors_name_the_harness_condition() {
    let rule = FrameRule::QwenNframes {
        n: 8,
        cap: NframesCap::None,
        linspace: TorchLinspace::Fma,
        resample: None,
    };
    let short = VideoFacts {
        num_frames: 5,
        fps: Some(30.0),
        bound: None,
    };
    let e = rule.indices(&short).expect_err("8 frames of 5");
    assert!(
        e.contains("nframes should in interval [2, 5], but got 8"),
        "{e}"
    );
    let e = FrameRule::GetIndex {
        n: 0,
        bounded: false,
    }
    .indices(&short)
    .expect_err("0 segments");
    assert!(e.contains("division by zero"), "{e}");
}

/// An lmms line's release as `LmmsRun::version` names one release (`0.7` is the family;
/// the release PyPI calls `0.7` is `0.7.0`).
fn exact_release(v: &str) -> String {
    if v == "0.7" {
        "0.7.0".into()
    } else {
        v.to_string()
    }
}

/// The budget the importer would pass: the budget argument of `model_args`, else the default.
fn importer_budget(run: &LmmsRun) -> u64 {
    ["max_num_frames", "num_frame", "max_frames_num"]
        .iter()
        .find_map(|k| run.model_args.iter().find(|(a, _)| a == k))
        .and_then(|(_, v)| v.parse::<u64>().ok())
        .or_else(|| lmms_eval::default_budget(run))
        .unwrap_or(0)
}

/// Whether `rr` says the release cannot have written results of the run.
fn cannot_run(rr: &frameaudit::core::rules::RunRule) -> bool {
    rr.provenance == Provenance::Assumed && rr.why.contains("the results cannot come from")
}

/// The harness's outcome for one video (indices or the error it raised) against `rr`.
fn lmms_case_agrees(
    rr: &frameaudit::core::rules::RunRule,
    facts: &VideoFacts,
    outcome: &Value,
) -> Result<(), String> {
    if let Some(e) = outcome.as_str()
        && e.contains("PyAV reads the video")
    {
        return if rr.provenance == Provenance::Assumed {
            Ok(())
        } else {
            Err(format!("a PyAV read, got {}", rr.name))
        };
    }

    if cannot_run(rr) {
        // A release that cannot have run it must not have read frames.
        return if outcome.is_string() {
            Ok(())
        } else {
            Err(format!(
                "the harness read {outcome}, frameaudit says it cannot run: {}",
                rr.why
            ))
        };
    }
    if rr.provenance != Provenance::Reproduced {
        return Err(format!("{:?} {}: {}", rr.provenance, rr.name, rr.why));
    }
    match (&rr.rule, outcome) {
        (None, Value::Array(a)) if a.is_empty() => Ok(()),
        (None, Value::String(_)) => Ok(()),
        (None, _) => Err(format!("no frame, but the harness read {outcome}")),
        (Some(_), Value::String(_)) if rr.why.contains("modality") => Ok(()),
        (Some(rule), Value::Array(_)) => {
            let want: Vec<u64> = serde_json::from_value(outcome.clone()).expect("indices");
            match rule.indices(facts) {
                Ok(got) if got == want => Ok(()),
                Ok(got) => Err(format!("want {want:?}\n   got {got:?} ({})", rr.name)),
                Err(e) => Err(format!("want {want:?}, got the error {e} ({})", rr.name)),
            }
        }
        (Some(rule), Value::String(e)) => match rule.indices(facts) {
            Err(mine) => {
                let theirs = e.trim_start_matches("qwen_vl_utils: ");
                if e.contains("nframes should in interval") && !mine.contains(theirs) {
                    Err(format!("harness: {e}, frameaudit: {mine}"))
                } else {
                    Ok(())
                }
            }
            Ok(got) => Err(format!("the harness raised {e}, got {got:?} ({})", rr.name)),
        },
        _ => Err(format!("unexpected outcome {outcome}")),
    }
}

/// Every lmms-eval run of the vectors, release by release: where the release fails for
/// every video, `resolve` with that release must say it cannot have run it (or that the
/// model saw no frame); otherwise the class it resolved the id to and each video's frames.
#[test]
fn lmms_eval_releases_through_resolve() {
    let all = vectors();
    let lines: Vec<&Value> = all.iter().filter(|v| v.get("lmms").is_some()).collect();
    assert!(lines.len() > 50, "only {} lmms-eval lines", lines.len());
    let mut failures = Vec::new();
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    let mut releases_seen = std::collections::BTreeSet::new();
    for (v, run_line) in lines.iter().flat_map(|v| {
        v["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(move |r| (v, r))
    }) {
        let l = &v["lmms"];
        let wrapper = l["model"].as_str().expect("model");
        let args_text = run_line["model_args"].as_str().unwrap_or("");
        let args = model_args(args_text);
        let backend = if l["force_simple"].as_bool().unwrap_or(false) {
            Some(format!("lmms_eval.models.simple.{wrapper}.X (simple)"))
        } else {
            None
        };
        for (release, info) in v["releases"].as_object().expect("releases") {
            releases_seen.insert(release.clone());
            let version = exact_release(release);
            let run = LmmsRun {
                wrapper,
                backend: backend.as_deref(),
                model_args: &args,
                version: Some(&version),
                task: "videomme",
            };
            let rr = lmms_eval::resolve(&run, importer_budget(&run));
            let tag = format!(
                "{release} {wrapper}{} [{args_text}]",
                if backend.is_some() { " (simple)" } else { "" },
            );
            let mut fail = |what: String| failures.push(format!("{tag}: {what}"));
            match info {
                Value::String(class) => {
                    // The class the release resolved the id to.
                    if rr.provenance == Provenance::Reproduced
                        && rr.name.contains("(chat class") != class.starts_with("chat.")
                    {
                        fail(format!(
                            "the harness resolved {class}, frameaudit says {}",
                            rr.name
                        ));
                        continue;
                    }
                    for case in run_line["cases"].as_array().expect("cases") {
                        let facts = VideoFacts {
                            num_frames: case[0].as_u64().expect("T"),
                            fps: case[1].as_f64(),
                            bound: None,
                        };
                        let Some((_, outcome)) = case[2]
                            .as_object()
                            .expect("outcomes")
                            .iter()
                            .find(|(k, _)| k.split(' ').any(|r| r == release))
                        else {
                            continue;
                        };
                        match lmms_case_agrees(&rr, &facts, outcome) {
                            Ok(()) => *checked.entry(release.clone()).or_default() += 1,
                            Err(e) => fail(format!("T={} fps={}: {e}", case[0], case[1])),
                        }
                    }
                }
                Value::Object(o) => {
                    let ok = if o.contains_key("get_model") || o.contains_key("constructor") {
                        cannot_run(&rr)
                    } else {
                        let e = o["every_video"].as_str().unwrap_or("");
                        if e.contains("PyAV reads the video") {
                            rr.provenance == Provenance::Assumed
                        } else {
                            cannot_run(&rr)
                                || rr.provenance == Provenance::Reproduced
                                    && (rr.rule.is_none() || rr.why.contains("modality"))
                        }
                    };
                    if ok {
                        *checked.entry(release.clone()).or_default() += 1;
                    } else {
                        fail(format!(
                            "the release fails for every video ({o:?}), got {:?} {}: {}",
                            rr.provenance, rr.name, rr.why
                        ));
                    }
                }
                other => fail(format!("bad release entry {other}")),
            }
        }
    }
    println!("lmms-eval checks per release: {checked:?}");
    if let Some(path) = std::env::var_os("RULES_FAILURES") {
        std::fs::write(path, failures.join("\n")).expect("failures file");
    }
    let expect: std::collections::BTreeSet<String> =
        lmms_eval::RELEASES.iter().map(|r| r.to_string()).collect();
    assert_eq!(releases_seen, expect, "the releases of the vectors");
    assert!(
        failures.is_empty(),
        "{} lmms-eval checks fail, e.g.\n{}",
        failures.len(),
        failures[..failures.len().min(16)].join("\n")
    );
}

/// Version hints: a release, a family (`0.7`: some 0.7.x), a git checkout, nothing.
#[test]
fn lmms_eval_version_hints() {
    let args = |s: &str| -> &'static [(String, String)] { Box::leak(Box::new(model_args(s))) };
    let resolve = |w: &str, a: &[(String, String)], v: Option<&str>| {
        let run = LmmsRun {
            wrapper: w,
            backend: None,
            model_args: a,
            version: v,
            task: "videomme",
        };
        lmms_eval::resolve(&run, importer_budget(&run))
    };
    let n16 = args("max_num_frames=16");
    // qwen2_5_vl's chat class: 0.7 cannot run it (no self.fps), 0.7.1-0.7.3 agree.
    let rr = resolve("qwen2_5_vl", n16, Some("0.7"));
    assert_eq!(rr.provenance, Provenance::Reproduced, "{}", rr.why);
    assert!(rr.name.starts_with("lmms-eval 0.7.x"), "{}", rr.name);
    assert!(
        rr.why.contains("0.7.1–0.7.3 agree") && rr.why.contains("0.7.0 cannot"),
        "{}",
        rr.why
    );
    // The release 0.7 itself cannot have run it.
    let rr = resolve("qwen2_5_vl", n16, Some("0.7.0"));
    assert!(cannot_run(&rr), "{}", rr.why);
    // 0.4 to 0.6 differ (2 fps and a resample; nframes = N; the even cap).
    let rr = resolve("qwen2_5_vl", n16, Some("0.4"));
    assert_eq!(rr.provenance, Provenance::Assumed, "{}", rr.why);
    assert!(
        rr.why.contains("0.4.0") && rr.why.contains("0.5.0"),
        "{}",
        rr.why
    );
    // Nothing known: the releases differ.
    for v in [None, Some("main@1a2b3c4d"), Some("0.8.0")] {
        let rr = resolve("qwen2_5_vl", n16, v);
        assert_eq!(rr.provenance, Provenance::Assumed, "{v:?}: {}", rr.why);
    }
    // InternVL3: every release that has it agrees.
    let iv = args("modality=video,num_frame=16");
    for v in [None, Some("0.7"), Some("0.4"), Some("0.6.0")] {
        let rr = resolve("internvl3", iv, v);
        assert_eq!(rr.provenance, Provenance::Reproduced, "{v:?}: {}", rr.why);
    }
    // ... and a family without it cannot have run it.
    let rr = resolve("internvl3", iv, Some("0.3"));
    assert!(
        cannot_run(&rr) && rr.why.contains("has no wrapper"),
        "{}",
        rr.why
    );
    // llava_vid: the default budget is 3 before 0.3.4, 20 after.
    let rr = resolve("llava_vid", &[], Some("0.3"));
    assert_eq!(rr.provenance, Provenance::Assumed, "{}", rr.why);
    let rr = resolve("llava_vid", args("max_frames_num=16"), Some("0.4"));
    assert_eq!(rr.provenance, Provenance::Reproduced, "{}", rr.why);
}

/// The table of the report: each wrapper's usual configuration under each kind of hint.
#[test]
fn lmms_eval_version_hint_table() {
    let configs: [(&str, &str, Option<&str>); 12] = [
        ("qwen2_5_vl", "max_num_frames=16", None),
        (
            "qwen2_5_vl",
            "max_num_frames=16",
            Some("lmms_eval.models.simple.qwen2_5_vl.Qwen2_5_VL (simple)"),
        ),
        ("qwen2_5_vl", "max_num_frames=16,fps=1", None),
        ("qwen3_vl", "max_num_frames=16", None),
        (
            "qwen3_vl",
            "max_num_frames=16",
            Some("lmms_eval.models.simple.qwen3_vl.Qwen3_VL (simple)"),
        ),
        ("qwen2_vl", "max_num_frames=16", None),
        ("llava_onevision", "max_frames_num=16", None),
        ("llava_onevision1_5", "max_num_frames=16", None),
        ("llava_vid", "max_frames_num=16", None),
        ("internvl2", "modality=video,num_frame=16", None),
        ("internvl3", "modality=video,num_frame=16", None),
        ("internvl3_5", "modality=video,num_frame=16", None),
    ];
    let hints: [Option<&str>; 6] = [
        Some("0.7.3"),
        Some("0.7"),
        Some("0.4"),
        Some("0.3"),
        Some("0.2"),
        None,
    ];
    println!("| wrapper | model_args | 0.7.3 | 0.7 | 0.4 | 0.3 | 0.2 | none |");
    for (w, a, backend) in configs {
        let args = model_args(a);
        let mut row = format!(
            "| {w}{} | {a} |",
            if backend.is_some() { " (simple)" } else { "" }
        );
        for h in hints {
            let run = LmmsRun {
                wrapper: w,
                backend,
                model_args: &args,
                version: h,
                task: "videomme",
            };
            let rr = lmms_eval::resolve(&run, importer_budget(&run));
            let cell = match rr.provenance {
                Provenance::Reproduced => "reproduced",
                _ if cannot_run(&rr) => "assumed (no release can run it)",
                _ => "assumed",
            };
            row.push_str(&format!(" {cell} |"));
        }
        println!("{row}");
    }
}

/// VLMEvalKit's own inference_video.infer_data with LLaVA_OneVision (its __init__, model
/// loading stubbed) on the real test videos, read by the real decord: through `resolve`.
#[test]
fn vlmevalkit_llava_on_real_videos() {
    let all = vectors();
    let lines: Vec<&Value> = all
        .iter()
        .filter(|v| v.get("vlmevalkit").is_some())
        .collect();
    if lines.is_empty() {
        common::skip_note(format_args!(
            "the vectors hold no VLMEvalKit run on real videos"
        ));
        return;
    }
    let mut video_model_64 = 0;
    for v in &lines {
        let k = &v["vlmevalkit"];
        let nframe = k["nframe"].as_u64().expect("nframe");
        let budget = if nframe > 0 {
            Budget::Frames(nframe)
        } else {
            Budget::Fps(k["fps"].as_f64().expect("fps"))
        };
        let model = k["model"].as_str().expect("model");
        let rr = vlmevalkit::resolve(&VlmRun {
            model,
            dataset: k["dataset"].as_str().expect("dataset"),
            budget,
        });
        assert_eq!(rr.provenance, Provenance::Reproduced, "{}", rr.name);
        match (v.get("indices"), rr.rule) {
            (Some(want), Some(rule)) => {
                let want: Vec<u64> = serde_json::from_value(want.clone()).expect("indices");
                assert_eq!(
                    rule.indices(&facts(v)).expect("frames"),
                    want,
                    "{k} {}",
                    v["video"]
                );
                if model == "llava_video_qwen2_7b" && nframe == 64 {
                    // 64 uniform frames, whatever the video's length.
                    assert_eq!(want.len(), 64);
                    video_model_64 += 1;
                }
            }
            (None, None) => assert!(
                v["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("fps is not suitable"))
            ),
            (w, r) => panic!("{k}: harness {w:?}, frameaudit {r:?}"),
        }
    }
    assert!(video_model_64 > 0);
}

/// qwen_vl_utils releases asked directly (fetch_video with the fake reader): which agree
/// with 0.0.14, the release the rules follow, on the nframes and the fps paths.
#[test]
fn qwen_vl_utils_releases() {
    let all = vectors();
    // (path, rule, video) -> release -> outcome
    let mut cases = std::collections::BTreeMap::<
        (String, String, String),
        std::collections::BTreeMap<String, String>,
    >::new();
    let mut releases = std::collections::BTreeSet::new();
    for v in all.iter().filter(|v| v.get("qwen_vl_utils").is_some()) {
        let path = if v["source"].as_str().unwrap_or("").contains("(fps)") {
            "fps"
        } else {
            "nframes"
        };
        let outcome = v
            .get("indices")
            .map_or_else(|| format!("error: {}", v["error"]), |i| i.to_string());
        let entry = cases
            .entry((
                path.to_string(),
                v["rule"].to_string(),
                v["video"].to_string(),
            ))
            .or_default();
        for r in v["qwen_vl_utils"].as_array().expect("releases") {
            let r = r.as_str().expect("a release").to_string();
            releases.insert(r.clone());
            entry.insert(r, outcome.clone());
        }
    }
    assert!(
        releases.contains(QWEN_VL_UTILS) && releases.len() >= 10,
        "{releases:?}"
    );
    let agree = |path: &str| -> Vec<String> {
        releases
            .iter()
            .filter(|r| {
                cases
                    .iter()
                    .filter(|((p, _, _), _)| p == path)
                    .all(|(_, by)| by.get(*r) == by.get(QWEN_VL_UTILS))
            })
            .cloned()
            .collect()
    };
    let nframes = agree("nframes");
    let fps = agree("fps");
    println!("agree with {QWEN_VL_UTILS}: nframes {nframes:?}, fps {fps:?}");
    // Every release picks nframes frames alike; the fps count is 0.0.9's on.
    assert_eq!(nframes.len(), releases.len(), "{nframes:?}");
    let fps_expected: Vec<String> = ["0.0.10", "0.0.11", "0.0.13", "0.0.14", "0.0.9"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(fps, fps_expected);
    // The older ones round the count and do not cap it at the video: some index lists differ,
    // not only errors.
    let differ_with_frames = cases
        .iter()
        .filter(|((p, _, _), by)| {
            p == "fps"
                && by.get("0.0.8") != by.get(QWEN_VL_UTILS)
                && by.values().all(|o| !o.starts_with("error"))
        })
        .count();
    assert!(differ_with_frames > 0);
}

/// The lines of tests/data/decoder_vectors.jsonl (written by tests/reference/decoder_vectors.py,
/// which runs lmms-eval 0.7.3's own sampling code on the issue-40 videos with the real decoders).
fn decoder_vectors() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/decoder_vectors.jsonl");
    let text = std::fs::read_to_string(&path).expect("decoder_vectors.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The frames `resolve` gives one decoder-vector line: the run's rule as the importer resolves
/// it (lmms-eval 0.7.3, the budget of `model_args`), read with the line's decoder as a known
/// decoder (the clamp kept), on the line's counts.
fn decoder_case(v: &Value) -> (frameaudit::core::rules::RunRule, Result<Vec<u64>, String>) {
    use frameaudit::core::rules::decoder::{
        Decoder, DecoderCounts, ItemVideo, RunDecoder, frames_by_decoder,
    };
    let args = model_args(v["model_args"].as_str().expect("model_args"));
    let run = LmmsRun {
        wrapper: v["wrapper"].as_str().expect("wrapper"),
        backend: None,
        model_args: &args,
        version: Some("0.7.3"),
        task: "videomme",
    };
    // As the importer reads the budget: fixed_num_frames first.
    let budget = ["fixed_num_frames", "max_num_frames"]
        .iter()
        .find_map(|k| args.iter().find(|(a, _)| a == k))
        .and_then(|(_, v)| v.parse::<u64>().ok())
        .or_else(|| lmms_eval::default_budget(&run))
        .expect("a budget");
    let rr = lmms_eval::resolve(&run, budget);
    let (Some(rule), Some(candidates)) = (rr.rule.as_ref(), rr.decoder.as_ref()) else {
        return (rr.clone(), Err("the rule names no decoder".into()));
    };
    let counts: DecoderCounts = serde_json::from_value(v["counts"].clone()).expect("counts");
    let decord = counts[&Decoder::Decord];
    let facts = VideoFacts {
        num_frames: decord.num_frames,
        fps: decord.fps,
        bound: None,
    };
    let decoder = serde_json::from_value::<Decoder>(v["decoder"].clone()).expect("decoder");
    let known = RunDecoder {
        decode: vec![decoder],
        ..candidates.clone()
    };
    let video = ItemVideo {
        decord: &facts,
        counts: Some(&counts),
        discarded: None,
    };
    let got = frames_by_decoder(rule, Some(&known), &video).map(|f| f.indices);
    (rr, got)
}

#[test]
fn wrappers_read_by_each_decoder_match_the_harness() {
    use frameaudit::core::rules::decoder::Decoder;
    let lines = decoder_vectors();
    let mut failures = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut rules = 0;
    for v in &lines {
        // The samplers alone, on a fake reader.
        if let Some(r) = v.get("rule") {
            let rule: FrameRule = serde_json::from_value(r.clone()).expect("a rule");
            if let Err(e) = agrees(&rule, v) {
                failures.push(format!("{} on {}: {e}", v["source"], v["video"]));
            }
            rules += 1;
            continue;
        }
        let (rr, got) = decoder_case(v);
        let at = format!(
            "{} {} {} on {}",
            v["wrapper"], v["model_args"], v["decoder"], v["video"]
        );
        seen.insert(v["wrapper"].as_str().expect("wrapper").to_string());
        if rr.provenance != Provenance::Reproduced {
            failures.push(format!(
                "{at}: {:?} {} / {}",
                rr.provenance, rr.name, rr.why
            ));
            continue;
        }
        // The harness's decoder is one of the rule's candidates.
        let decoder = serde_json::from_value::<Decoder>(v["decoder"].clone()).expect("decoder");
        let candidates = &rr.decoder.as_ref().expect("decoder").decode;
        if !candidates.contains(&decoder) {
            failures.push(format!("{at}: {decoder:?} is not among {candidates:?}"));
        }
        match (v.get("indices"), got) {
            (Some(want), Ok(got)) => {
                let want: Vec<u64> = serde_json::from_value(want.clone()).expect("indices");
                if want != got {
                    failures.push(format!("{at}:\n want {want:?}\n  got {got:?}"));
                }
            }
            (Some(want), Err(e)) => failures.push(format!("{at}: want {want}, got the error {e}")),
            (None, Ok(got)) => failures.push(format!(
                "{at}: the harness raised {}, got {got:?}",
                v["error"]
            )),
            (None, Err(e)) => {
                // qwen_vl_utils' own condition, as it words it.
                let harness = v["error"].as_str().unwrap_or_default();
                let condition = harness.trim_start_matches("ValueError: ");
                if !e.contains(condition.trim_end_matches('.')) {
                    failures.push(format!("{at}: harness {harness}, frameaudit {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let want: std::collections::BTreeSet<String> = [
        "gemma3",
        "gemma4",
        "llava_onevision2",
        "qwen3_vl",
        "videollama3",
    ]
    .map(String::from)
    .into();
    assert_eq!(seen, want, "the vectors cover each wrapper");
    assert!(
        rules > 3000 && lines.len() - rules >= 160,
        "{} lines",
        lines.len()
    );
}
