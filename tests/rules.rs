//! Frame rules against what the harnesses' own code sampled: every vector of
//! tests/data/harness_vectors.jsonl (written by tests/reference/harness_vectors.py, which runs
//! the harness code), the lead's recorded frames of lmms-eval 0.7.3 through `resolve` of the
//! real results files, and VLMEvalKit's runs by name; mutated rules must fail.

use std::path::PathBuf;

use frameaudit::core::import::vlmevalkit::Budget;
use frameaudit::core::rules::lmms_eval::{self, LmmsRun};
use frameaudit::core::rules::vlmevalkit::{self, VlmRun};
use frameaudit::core::rules::{FrameRule, NframesCap, Provenance, TorchLinspace, VideoFacts};
use serde_json::Value;

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
    let all = vectors();
    assert!(all.len() > 10_000, "only {} vectors", all.len());
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

/// A rule changed by `mutate` must disagree with some vectors of its kind.
fn mutation_fails(kind: &str, mutate: impl Fn(&mut Value) -> bool) {
    let mut tried = 0;
    for v in vectors().iter().filter(|v| v["rule"]["kind"] == kind) {
        let mut r = v["rule"].clone();
        if !mutate(&mut r) {
            continue;
        }
        tried += 1;
        let Ok(rule) = serde_json::from_value::<FrameRule>(r) else {
            continue;
        };
        if agrees(&rule, v).is_err() {
            return;
        }
    }
    panic!("the mutation of {kind} agrees with all {tried} vectors it was tried on");
}

#[test]
fn mutated_rules_fail() {
    mutation_fails("qwen_nframes", |r| {
        let other = if r["cap"] == "even_min2" {
            "none"
        } else {
            "even_min2"
        };
        r["cap"] = Value::from(other);
        true
    });
    mutation_fails("qwen_fps", |r| {
        r["resample"].is_object() && {
            r["resample"]["mode"] = Value::from("append_last");
            true
        }
    });
    mutation_fails("qwen_fps", |r| {
        r["fps"] = Value::from(r["fps"].as_f64().unwrap_or(2.0) * 1.5);
        true
    });
    mutation_fails("llava_stride", |r| {
        r["force_sample"] = Value::from(!r["force_sample"].as_bool().unwrap_or(false));
        true
    });
    mutation_fails("get_index", |r| {
        r["kind"] = Value::from("policy");
        r["policy"] = Value::from("linspace");
        true
    });
    mutation_fails("policy", |r| {
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
        .filter(|v| v["rule"]["kind"] == "qwen_nframes")
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

/// The shared harness runs: $FRAMEAUDIT_SHARED, else the `shared` folder beside the repository.
fn shared() -> Option<PathBuf> {
    let p = std::env::var_os("FRAMEAUDIT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let runs = p.join("data/harness-runs");
    if runs.is_dir() {
        Some(runs)
    } else {
        println!(
            "note: {} is absent; the shared-run checks are skipped",
            runs.display()
        );
        None
    }
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
                out.push(serde_json::from_str(&text).expect("results JSON"));
            }
        }
    }
    out
}

#[test]
fn lmms_eval_truth_through_resolve() {
    let Some(root) = shared() else { return };
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
            version: r["lmms_eval_version"].as_str(),
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
        assert!(rr.name.starts_with("lmms-eval 0.7.3"), "{}", rr.name);
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
    let Some(root) = shared() else { return };
    for r in results_files(&root) {
        let c = &r["config"];
        let args = model_args(c["model_args"].as_str().expect("model_args"));
        let run = LmmsRun {
            wrapper: c["model"].as_str().expect("model"),
            backend: c["model_backend"].as_str(),
            model_args: &args,
            version: r["lmms_eval_version"].as_str(),
            task: "videomme",
        };
        let rr = lmms_eval::resolve(&run, 16);
        assert_eq!(rr.provenance, Provenance::Reproduced);
        assert!(
            rr.why.contains("0.7.3") && rr.why.contains("not name"),
            "{}",
            rr.why
        );
        assert!(rr.frame_files.is_none());
        println!("{}", rr.name);
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
    assert_eq!(rr.provenance, Provenance::Assumed);
    let pyav = Box::leak(Box::new(args("video_decode_backend=pyav"))).as_slice();
    let rr = lmms_eval::resolve(&run("llava_vid", pyav, None), 8);
    assert!(rr.rule.is_none());
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
    if let Some(root) = shared() {
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
