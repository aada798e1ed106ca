//! VLMEvalKit (commit e8e78f05): the frame rule of a run from the model's name (its class in
//! `config.py`, and whether that class reads the video itself), the dataset and the budget in
//! the prediction file's name; and where the dataset saved the frames it gave the model.

use std::fmt;

use super::decoder::{Decoder, RunDecoder, Selector};
use super::vlmevalkit_models::{MODELS, VIDEO_LLM_CLASSES};
use super::{FrameRule, NframesCap, Provenance, RunRule, TorchLinspace};
use crate::core::sampling::Policy;

/// The VLMEvalKit commit the rules were checked against.
pub const COMMIT: &str = "e8e78f05";

/// How many frames a run gave the model: a fixed count (`nframe` mode) or a rate (`fps`
/// mode, the count then grows with the video's length).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    /// `{N}frame`: N frames of every video.
    Frames(u64),
    /// `{R}fps`: R frames per second of video.
    Fps(f64),
}

impl fmt::Display for Budget {
    /// The budget part of a configuration label: `8f`, `1fps`, `0.5fps`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Budget::Frames(n) => write!(f, "{n}f"),
            // f64's Display writes 1.0 as "1" and 0.5 as "0.5", the shortest exact form.
            Budget::Fps(r) => write!(f, "{r}fps"),
        }
    }
}

/// What a prediction file's name says about the run.
#[derive(Debug, Clone, Copy)]
pub struct VlmRun<'a> {
    /// The model as VLMEvalKit names it (`Qwen2.5-VL-7B-Instruct`).
    pub model: &'a str,
    /// The dataset without the budget (`Video-MME`, `MVBench_MP4`, `MLVU_MCQ`).
    pub dataset: &'a str,
    /// The budget.
    pub budget: Budget,
}

/// The class `config.py` builds for a model name.
pub fn model_class(model: &str) -> Option<&'static str> {
    MODELS
        .binary_search_by(|(name, _)| (*name).cmp(model))
        .ok()
        .and_then(|i| MODELS.get(i))
        .map(|(_, class)| *class)
}

/// Whether a class sets (or inherits) `VIDEO_LLM = True`: it gets the video file and samples
/// it itself, ignoring the frames the dataset would save.
pub fn is_video_llm(class: &str) -> bool {
    VIDEO_LLM_CLASSES.binary_search(&class).is_ok()
}

/// Python's `str(float)` for the rates VLMEvalKit's configs use (`1.0`, `0.5`, `2.0`).
fn py_float(r: f64) -> String {
    if r.fract() == 0.0 && r.abs() < 1e16 {
        format!("{r:.1}")
    } else {
        format!("{r}")
    }
}

/// The datasets whose frame sampler and saved-frame names were read, with the folder under
/// `images/` (a concatenated dataset's items live in their sub-dataset's folder).
fn dataset_sampler(dataset: &str, budget: Budget) -> Option<(FrameRule, String, &'static str)> {
    let (rule, sampler) = match (dataset, budget) {
        ("MVBench_MP4", Budget::Frames(n)) => (
            FrameRule::from_policy(&Policy::SegmentMid, n),
            "MVBench_MP4.get_index_by_frame: middles of N equal segments",
        ),
        ("MVBench", Budget::Frames(n)) => (
            FrameRule::GetIndex { n, bounded: true },
            "MVBench.get_index: middles of N equal segments of the question's window",
        ),
        ("MVBench", Budget::Fps(_)) => return None,
        ("Video-MME" | "MLVU" | "MLVU_MCQ" | "MLVU_OpenEnded" | "MVBench_MP4", Budget::Fps(r)) => (
            FrameRule::from_policy(&Policy::Fps { fps: r }, 0),
            "int(T / video_fps * fps) frames, int(i * video_fps / fps)",
        ),
        ("Video-MME" | "MLVU" | "MLVU_MCQ" | "MLVU_OpenEnded", Budget::Frames(n)) => (
            FrameRule::from_policy(&Policy::Interior, n),
            "int(i * T / (N+1)) for i in 1..=N",
        ),
        _ => return None,
    };
    // MLVU's save_video_frames names a video's folder without its suffix; the others by the
    // `video` column as it is (Video-MME's has none, MVBench_MP4's keeps its folders).
    let video = if dataset.starts_with("MLVU") {
        "{video_stem}"
    } else {
        "{video}"
    };
    let name = match budget {
        Budget::Frames(_) => "frame-{i}-of-{n}.jpg".to_string(),
        Budget::Fps(r) => format!("frame-{{i}}-of-{{n}}-{}fps.jpg", py_float(r)),
    };
    Some((rule, format!("images/{dataset}/{video}/{name}"), sampler))
}

/// The frame rule of a run.
pub fn resolve(run: &VlmRun) -> RunRule {
    let budget_word = match run.budget {
        Budget::Frames(n) => format!("nframe={n}"),
        Budget::Fps(r) => format!("fps={}", py_float(r)),
    };
    let head = format!("VLMEvalKit {COMMIT} {} on {}", run.model, run.dataset);
    let Some(class) = model_class(run.model) else {
        return assumed(
            run,
            format!("{head}: {budget_word} (assumed)"),
            format!(
                "{} is not a model name of VLMEvalKit {COMMIT}'s config.py, so its class and sampling are unknown",
                run.model
            ),
        );
    };
    if !is_video_llm(class) {
        return match dataset_sampler(run.dataset, run.budget) {
            Some((rule, files, sampler)) => RunRule {
                rule: Some(rule),
                provenance: Provenance::Reproduced,
                name: format!(
                    "{head} ({class} takes the dataset's frames): {} {sampler}",
                    run.dataset
                ),
                why: format!(
                    "checked against VLMEvalKit {COMMIT} code, tests/data/harness_vectors.jsonl"
                ),
                frame_files: Some(files),
                decoder: Some(RunDecoder::known(
                    Decoder::Decord,
                    format!("VLMEvalKit {COMMIT} saves the dataset's frames with decord"),
                )),
            },
            None => assumed(
                run,
                format!("{head} ({class} takes the dataset's frames): {budget_word} (assumed)"),
                format!(
                    "the frame sampler of VLMEvalKit dataset {} is not reproduced by frameaudit",
                    run.dataset
                ),
            ),
        };
    }
    video_llm_rule(run, class, &head)
}

/// A run of a class that reads the video itself.
fn video_llm_rule(run: &VlmRun, class: &str, head: &str) -> RunRule {
    // MVBench (not _MP4) hands such models a clip cut to the question's window by moviepy,
    // whose frame count frameaudit does not know.
    if run.dataset == "MVBench" {
        return assumed(
            run,
            format!("{head}: {class} reads a moviepy clip of the question's window (assumed)"),
            format!(
                "VLMEvalKit class {class} sets VIDEO_LLM and MVBench gives it a clip cut to the question's window, whose frames frameaudit does not reproduce"
            ),
        );
    }
    let rule = match (class, run.budget) {
        ("Qwen2VLChat" | "Qwen3VLChat", Budget::Frames(n)) => Some((
            FrameRule::QwenNframes {
                n,
                cap: NframesCap::EvenBelow,
                linspace: TorchLinspace::Fma,
                resample: None,
            },
            format!(
                "qwen_vl_utils nframes = {n} (T//2*2 when the video is shorter), torch.linspace(0, T-1, nframes).round()"
            ),
        )),
        ("Qwen2VLChat" | "Qwen3VLChat", Budget::Fps(r)) => Some((
            FrameRule::QwenFps {
                fps: r,
                min_frames: None,
                max_frames: None,
                linspace: TorchLinspace::Fma,
                resample: None,
            },
            format!(
                "qwen_vl_utils at fps={}: T/video_fps*fps frames in [4, min(768, T)], torch.linspace(0, T-1, nframes).round()",
                py_float(r)
            ),
        )),
        ("LLaVA_OneVision", Budget::Frames(n)) => {
            // LLaVA_OneVision.__init__: force_sample (default True) applies when the model path
            // names a video model; config.py's paths do for the llava_video models.
            let force = model_path_is_video(run.model);
            Some((
                FrameRule::LlavaStride {
                    n,
                    rate: 1.0,
                    force_sample: force,
                },
                if force {
                    format!("np.linspace(0, T-1, {n}) (force_sample, set for video models)")
                } else {
                    format!("1 frame a second, np.linspace(0, T-1, {n}) when more than {n}")
                },
            ))
        }
        ("LLaVA_OneVision", Budget::Fps(_)) => {
            return RunRule {
                rule: None,
                provenance: Provenance::Reproduced,
                name: format!("{head} ({class}, VIDEO_LLM): refused in fps mode"),
                why: format!(
                    "VLMEvalKit {COMMIT} inference_video.py raises \"fps is not suitable\" for a model with nframe and no fps"
                ),
                frame_files: None,
                decoder: None,
            };
        }
        _ => None,
    };
    match rule {
        Some((rule, text)) => {
            let rule = Some(rule);
            let llava = if class == "LLaVA_OneVision" {
                "; its own infer_data was run with LLaVA_OneVision.__init__ (model loading stubbed) on real videos read by decord (llava_video_qwen2_7b at 64 frames takes 64 uniform frames of a 60 s video)"
            } else {
                ""
            };
            let qwen = if class.starts_with("Qwen") {
                format!(
                    "; {}; VLMEvalKit does not pin qwen_vl_utils and its results do not say which ran",
                    super::qwen_vl_utils_why(&rule)
                )
            } else {
                String::new()
            };
            RunRule {
                name: format!(
                    "{head} ({class}, VIDEO_LLM): {text}{}",
                    super::qwen_vl_utils_releases(&rule)
                ),
                rule,
                provenance: Provenance::Reproduced,
                why: format!(
                    "checked against VLMEvalKit {COMMIT} code (inference_video.py hands the dataset's nframe/fps to the model), tests/data/harness_vectors.jsonl{llava}{qwen}"
                ),
                frame_files: None,
                decoder: vlm_decoder(class, run.budget),
            }
        }
        None => assumed(
            run,
            format!("{head} ({class}, VIDEO_LLM): assumed"),
            format!(
                "VLMEvalKit class {class} sets VIDEO_LLM and samples the video itself with a rule frameaudit does not reproduce"
            ),
        ),
    }
}

/// Which decoders a VIDEO_LLM run's frames depend on. The Qwen classes hand the video to
/// qwen_vl_utils, which reads with torchcodec whenever it is installed, else decord:
/// VLMEvalKit's requirements install decord and not torchcodec, but another package may
/// bring it, and the results do not say; with `nframe` they clamp it with OpenCV's frame
/// count (`CAP_PROP_FRAME_COUNT`, the header's).
fn vlm_decoder(class: &str, budget: Budget) -> Option<RunDecoder> {
    if class.starts_with("Qwen") {
        return Some(RunDecoder {
            decode: vec![Decoder::Decord, Decoder::Torchcodec],
            clamp: matches!(budget, Budget::Frames(_)).then_some(Decoder::Cv2),
            source: format!(
                "VLMEvalKit {COMMIT}'s requirements install decord, not torchcodec, but qwen_vl_utils reads with torchcodec whenever it is installed; the results do not say which was"
            ),
            selector: Some(Selector::QwenVlUtils),
        });
    }
    Some(RunDecoder::known(
        Decoder::Decord,
        format!("VLMEvalKit {COMMIT}'s {class} reads the video with decord"),
    ))
}

/// Whether `config.py` gives the LLaVA_OneVision model a `model_path` with "video" in it.
fn model_path_is_video(model: &str) -> bool {
    // config.py: llava_video_qwen2_7b / _72b -> lmms-lab/LLaVA-Video-{7B,72B}-Qwen2; the
    // other LLaVA_OneVision names point at onevision or Aquila checkpoints.
    model.to_ascii_lowercase().contains("video")
}

/// An assumed rule: the dataset sampler's guess, never shown as exact.
fn assumed(run: &VlmRun, name: String, why: String) -> RunRule {
    let (policy, n) = match run.budget {
        Budget::Fps(r) => (Policy::Fps { fps: r }, 0),
        Budget::Frames(n) if run.dataset.starts_with("MVBench") => (Policy::SegmentMid, n),
        Budget::Frames(n) => (Policy::Interior, n),
    };
    RunRule {
        rule: Some(FrameRule::from_policy(&policy, n)),
        provenance: Provenance::Assumed,
        name,
        why,
        frame_files: None,
        decoder: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_for_binary_search() {
        assert!(MODELS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(VIDEO_LLM_CLASSES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(model_class("Qwen2.5-VL-7B-Instruct"), Some("Qwen2VLChat"));
        assert!(is_video_llm("Qwen2VLChat") && !is_video_llm("InternVLChat"));
    }

    #[test]
    fn python_float_names() {
        assert_eq!(py_float(1.0), "1.0");
        assert_eq!(py_float(0.5), "0.5");
    }
}
