//! lmms-eval's model wrappers: the frame rule of a run from its `config.model`,
//! `config.model_backend` and `config.model_args`, as the wrapper's own code samples (checked
//! against lmms-eval 0.7.3, and 0.3.5 to 0.5.0 for qwen2_5_vl, in tests/data/harness_vectors.jsonl).

use super::{FrameRule, NframesCap, Provenance, Resample, ResampleMode, RunRule, TorchLinspace};
use crate::core::sampling::Policy;

/// The lmms-eval version whose code the rules were checked against.
pub const CHECKED_VERSION: &str = "0.7.3";

/// What a results file says about the run.
#[derive(Debug, Clone, Copy)]
pub struct LmmsRun<'a> {
    /// `config.model`: the wrapper id (`qwen2_5_vl`, `llava_vid`...).
    pub wrapper: &'a str,
    /// `config.model_backend` when present (0.7+): the class the id resolved to, e.g.
    /// `lmms_eval.models.chat.qwen2_5_vl.Qwen2_5_VL (chat)`.
    pub backend: Option<&'a str>,
    /// `config.model_args`, parsed.
    pub model_args: &'a [(String, String)],
    /// The lmms-eval version when the logs tell it (`lmms_eval_version`), else `None`.
    pub version: Option<&'a str>,
    /// The task (benchmark) name.
    pub task: &'a str,
}

/// A `model_args` value as lmms-eval's `handle_arg_string` reads it.
#[derive(Debug, Clone, PartialEq)]
enum Arg {
    Bool(bool),
    Num(f64),
    Str(String),
}

fn parse_arg(v: &str) -> Arg {
    if v.eq_ignore_ascii_case("true") {
        Arg::Bool(true)
    } else if v.eq_ignore_ascii_case("false") {
        Arg::Bool(false)
    } else if let Ok(x) = v.trim().parse::<f64>() {
        Arg::Num(x)
    } else {
        Arg::Str(v.to_string())
    }
}

impl LmmsRun<'_> {
    fn arg(&self, key: &str) -> Option<Arg> {
        self.model_args
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| parse_arg(v))
    }

    fn num(&self, key: &str) -> Option<f64> {
        match self.arg(key) {
            Some(Arg::Num(x)) => Some(x),
            _ => None,
        }
    }

    fn truthy(&self, key: &str) -> bool {
        match self.arg(key) {
            Some(Arg::Bool(b)) => b,
            Some(Arg::Num(x)) => x != 0.0,
            Some(Arg::Str(s)) => !s.is_empty(),
            None => false,
        }
    }

    fn text(&self, key: &str) -> Option<String> {
        self.model_args
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }
}

/// The wrapper class a run used: chat or simple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Chat,
    Simple,
}

/// An lmms-eval version as (minor, patch) of 0.x, when it parses.
fn version_of(v: &str) -> Option<(u64, u64)> {
    let v = v.split(['@', '+', ' ']).next()?;
    let mut parts = v.split('.');
    let major: u64 = parts.next()?.parse().ok()?;
    if major != 0 {
        return None;
    }
    let minor: u64 = parts.next()?.parse().ok()?;
    let patch: u64 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((minor, patch))
}

/// The frame-budget argument of a wrapper and its constructor default (0.7.3).
fn budget_key(wrapper: &str) -> Option<(&'static str, u64)> {
    Some(match wrapper {
        "qwen2_5_vl" | "qwen3_vl" | "qwen2_vl" | "llava_onevision1_5" => ("max_num_frames", 32),
        "llava_vid" => ("max_frames_num", 20),
        "llava_onevision" => ("max_frames_num", 32),
        "internvl2" | "internvl3" | "internvl3_5" => ("num_frame", 32),
        _ => return None,
    })
}

/// The frame budget a wrapper uses when `model_args` sets none (its constructor's default),
/// for every wrapper whose rule is reproduced; `None` for the others.
pub fn default_budget(run: &LmmsRun) -> Option<u64> {
    budget_key(run.wrapper).map(|(_, d)| d)
}

/// The class the wrapper id resolved to: `model_backend` when the results carry it, else
/// the chat class where the version (0.7.3 when unknown) has one (lmms-eval prefers it unless
/// `--force_simple`).
fn class_of(run: &LmmsRun, version: (u64, u64)) -> Class {
    if let Some(b) = run.backend {
        if b.contains("(simple)") || b.contains(".simple.") {
            return Class::Simple;
        }
        if b.contains("(chat)") || b.contains(".chat.") {
            return Class::Chat;
        }
    }
    let has_chat = match run.wrapper {
        "qwen2_5_vl" => version >= (4, 0),
        "qwen3_vl" | "llava_onevision1_5" => version >= (6, 0),
        _ => false,
    };
    if has_chat { Class::Chat } else { Class::Simple }
}

fn qwen_fps(fps: f64, max_frames: Option<u64>, resample: Option<Resample>) -> FrameRule {
    FrameRule::QwenFps {
        fps,
        min_frames: None,
        max_frames,
        linspace: TorchLinspace::Fma,
        resample,
    }
}

fn qwen_nframes(n: u64, cap: NframesCap, resample: Option<Resample>) -> FrameRule {
    FrameRule::QwenNframes {
        n,
        cap,
        linspace: TorchLinspace::Fma,
        resample,
    }
}

fn resample(n: u64, mode: ResampleMode) -> Option<Resample> {
    Some(Resample { n, mode })
}

/// qwen_vl_utils' default rate when the wrapper passes neither `fps` nor `nframes`.
const QWEN_DEFAULT_FPS: f64 = 2.0;

/// The frame rule of a run with `frames` frames (`frames` is the budget the importer read
/// from `model_args`, or [`default_budget`]).
pub fn resolve(run: &LmmsRun, frames: u64) -> RunRule {
    let known_version = run.version.and_then(version_of);
    let version = known_version.unwrap_or((7, 3));
    let class = class_of(run, version);
    let class_word = match class {
        Class::Chat => "chat",
        Class::Simple => "simple",
    };
    let shown_version = run
        .version
        .filter(|_| known_version.is_some())
        .unwrap_or(CHECKED_VERSION);
    let assumed = |why: String| RunRule {
        rule: Some(FrameRule::from_policy(&Policy::Linspace, frames)),
        provenance: Provenance::Assumed,
        name: format!(
            "lmms-eval {shown_version} {}: np.linspace with {frames} frames (assumed)",
            run.wrapper
        ),
        why,
        frame_files: None,
    };
    let n = frames;
    let fps_arg = run.num("fps");
    // (class name, rule, what the rule says)
    let found: Option<(&str, Option<FrameRule>, String)> = match (run.wrapper, class) {
        ("qwen2_5_vl", Class::Chat) if version >= (6, 0) => Some(match fps_arg {
            Some(f) => (
                "Qwen2_5_VL",
                Some(qwen_fps(f, None, None)),
                format!("qwen_vl_utils at fps={f} (max_num_frames not used)"),
            ),
            None => (
                "Qwen2_5_VL",
                Some(qwen_nframes(n, NframesCap::EvenMin2, None)),
                "nframes = max(2, min(N, T)//2*2), torch.linspace(0, T-1, nframes).round()".into(),
            ),
        }),
        ("qwen2_5_vl", Class::Chat) if version >= (5, 0) => Some(match fps_arg {
            Some(f) => (
                "Qwen2_5_VL",
                Some(qwen_fps(f, None, resample(n, ResampleMode::AppendLast))),
                format!("qwen_vl_utils at fps={f}, then np.linspace of N with the last frame"),
            ),
            None => (
                "Qwen2_5_VL",
                Some(qwen_nframes(
                    n,
                    NframesCap::None,
                    resample(n, ResampleMode::AppendLast),
                )),
                "qwen_vl_utils nframes = N, then np.linspace of N with the last frame".into(),
            ),
        }),
        ("qwen2_5_vl", Class::Chat) => Some((
            "Qwen2_5_VL",
            Some(qwen_fps(
                QWEN_DEFAULT_FPS,
                None,
                resample(n, ResampleMode::AppendLast),
            )),
            "qwen_vl_utils at 2 fps, then np.linspace of N with the last frame".into(),
        )),
        ("qwen2_5_vl", Class::Simple) if run.truthy("use_custom_video_loader") => None,
        ("qwen2_5_vl", Class::Simple) => {
            let mode = if version >= (5, 0) {
                ResampleMode::UniqueLast
            } else {
                ResampleMode::AppendLast
            };
            Some((
                "Qwen2_5_VL",
                Some(qwen_fps(QWEN_DEFAULT_FPS, None, resample(n, mode))),
                format!(
                    "qwen_vl_utils at 2 fps, then np.linspace of N over those{}",
                    if mode == ResampleMode::UniqueLast {
                        ", unique, last frame added"
                    } else {
                        " with the last frame added"
                    }
                ),
            ))
        }
        ("qwen3_vl", _) => {
            let (rule, text) = if let Some(f) = fps_arg {
                (
                    qwen_fps(f, Some(n), None),
                    format!("qwen_vl_utils at fps={f} with max_frames = N"),
                )
            } else if run.arg("total_pixels").is_some() {
                (
                    qwen_fps(QWEN_DEFAULT_FPS, Some(n), None),
                    "qwen_vl_utils at 2 fps with max_frames = N (total_pixels set)".into(),
                )
            } else if class == Class::Chat {
                (
                    qwen_nframes(n, NframesCap::None, None),
                    "qwen_vl_utils nframes = N (an error past the video's length)".into(),
                )
            } else {
                (
                    qwen_nframes(n, NframesCap::Total, None),
                    "qwen_vl_utils nframes = min(N, T)".into(),
                )
            };
            Some(("Qwen3_VL", Some(rule), text))
        }
        ("qwen2_vl", _) => Some((
            "Qwen2_VL",
            Some(qwen_fps(
                QWEN_DEFAULT_FPS,
                None,
                resample(n, ResampleMode::Unique),
            )),
            "qwen_vl_utils at 2 fps, then np.linspace of N over those, unique".into(),
        )),
        ("llava_onevision1_5", Class::Chat) => Some((
            "Llava_OneVision1_5",
            Some(qwen_nframes(
                n,
                NframesCap::None,
                resample(n, ResampleMode::AppendLast),
            )),
            "qwen_vl_utils nframes = N, then np.linspace of N with the last frame".into(),
        )),
        ("llava_onevision1_5", Class::Simple) => Some((
            "Llava_OneVision1_5",
            Some(qwen_fps(
                QWEN_DEFAULT_FPS,
                None,
                resample(n, ResampleMode::AppendLast),
            )),
            "qwen_vl_utils at 2 fps, then np.linspace of N with the last frame".into(),
        )),
        ("llava_vid", _) => match run.text("video_decode_backend").as_deref() {
            None | Some("decord") => {
                // `int(video_fps)` of the parsed argument.
                let rate = run.num("video_fps").unwrap_or(1.0).trunc();
                let force = run.truthy("force_sample");
                Some((
                    "LlavaVid",
                    Some(FrameRule::LlavaStride {
                        n,
                        rate,
                        force_sample: force,
                    }),
                    if force {
                        "np.linspace(0, T-1, N) (force_sample)".into()
                    } else {
                        format!(
                            "1 frame per round(fps/{rate}) frames, np.linspace when more than max_frames_num"
                        )
                    },
                ))
            }
            Some("pyav") => Some((
                "LlavaVid",
                None,
                "video_decode_backend=pyav calls read_video with positional arguments it does not take, so every video fails to load and the model is told so".into(),
            )),
            Some(_) => None,
        },
        ("llava_onevision", _) => match run.text("video_decode_backend").as_deref() {
            None | Some("decord") => Some((
                "Llava_OneVision",
                Some(FrameRule::from_policy(&Policy::Linspace, n)),
                "np.linspace(0, T-1, N, dtype=int)".into(),
            )),
            _ => None,
        },
        ("internvl2" | "internvl3" | "internvl3_5", _) => Some((
            match run.wrapper {
                "internvl2" => "InternVL2",
                "internvl3" => "InternVL3",
                _ => "InternVL3_5",
            },
            Some(FrameRule::GetIndex { n, bounded: false }),
            "get_index: middles of N equal segments (±100000 s window, no bound)".into(),
        )),
        _ => None,
    };
    let Some((class_name, rule, text)) = found else {
        return assumed(format!(
            "lmms-eval wrapper {} ({class_word} class) with these model_args is not reproduced by frameaudit",
            run.wrapper
        ));
    };
    // Versions whose code the vectors were made from.
    let checked = match known_version {
        None => true,
        Some((7, 3)) => true,
        Some(v) => run.wrapper == "qwen2_5_vl" && ((3, 0)..(6, 0)).contains(&v),
    };
    let name = format!(
        "lmms-eval {shown_version} {} ({class_word} class {class_name}): {text}",
        run.wrapper
    );
    let version_note = if known_version.is_none() {
        " (the results do not name the lmms-eval version; 0.7.3's code is assumed)"
    } else {
        ""
    };
    let (provenance, why) = if rule.is_none() {
        (
            Provenance::Reproduced,
            format!(
                "checked against lmms-eval {shown_version} code: the model saw no frame of the video{version_note}"
            ),
        )
    } else if checked {
        (
            Provenance::Reproduced,
            format!(
                "checked against lmms-eval {shown_version} code, tests/data/harness_vectors.jsonl{version_note}"
            ),
        )
    } else {
        (
            Provenance::Assumed,
            format!(
                "the rule of lmms-eval {CHECKED_VERSION}; the wrapper's code at {shown_version} was not checked"
            ),
        )
    };
    RunRule {
        rule,
        provenance,
        name,
        why,
        frame_files: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<'a>(wrapper: &'a str, args: &'a [(String, String)]) -> LmmsRun<'a> {
        LmmsRun {
            wrapper,
            backend: None,
            model_args: args,
            version: None,
            task: "videomme",
        }
    }

    #[test]
    fn versions_parse() {
        assert_eq!(version_of("0.7.3"), Some((7, 3)));
        assert_eq!(version_of("0.7"), Some((7, 0)));
        assert_eq!(version_of("unknown@unknown"), None);
    }

    #[test]
    fn args_read_as_lmms_eval_reads_them() {
        let args = vec![
            ("fps".to_string(), "1".to_string()),
            ("force_sample".to_string(), "True".to_string()),
        ];
        let r = run("qwen2_5_vl", &args);
        assert_eq!(r.num("fps"), Some(1.0));
        assert!(r.truthy("force_sample"));
        assert!(!r.truthy("absent"));
    }

    #[test]
    fn unknown_wrapper_is_assumed() {
        let r = resolve(&run("some_model", &[]), 8);
        assert_eq!(r.provenance, Provenance::Assumed);
        assert!(r.why.contains("not reproduced"), "{}", r.why);
        assert_eq!(default_budget(&run("some_model", &[])), None);
        assert_eq!(default_budget(&run("llava_vid", &[])), Some(20));
    }
}
