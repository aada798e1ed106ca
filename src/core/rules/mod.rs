//! Frame rules: which frames of a video one run of a harness gave its model, and how sure
//! that is (docs/frame-rules.md). A rule belongs to a run, (model, benchmark,
//! configuration), not to a configuration label: two model families at `16f` sample
//! differently, and so do two benchmarks of one harness.
//!
//! Every frame set carries a [`Provenance`]: `recorded` (the indices were logged when the
//! video was decoded), `reproduced` (a rule checked index for index against the harness's
//! own code at a named version), or `assumed` (nothing better is known; shown as such).
//! The importers pick a rule with [`lmms_eval::resolve`] and [`vlmevalkit::resolve`];
//! [`FrameRule::indices`] applies it to a video's [`VideoFacts`].

pub mod arith;
pub mod decoder;
pub mod lmms_eval;
pub mod vlmevalkit;
mod vlmevalkit_models;

use serde::{Deserialize, Serialize};

use crate::core::sampling::{self, Policy};
pub use arith::{ResampleMode, TorchLinspace};

/// How a frame set is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    /// Logged when the video was decoded (a recorder log, or a cell's own `frame_idx`).
    Recorded,
    /// Computed with a rule checked against the harness's code at a named version.
    Reproduced,
    /// Nothing better is known: a guess, never shown as exact.
    Assumed,
}

impl Provenance {
    /// The word used in files and on screen.
    pub fn name(self) -> &'static str {
        match self {
            Provenance::Recorded => "recorded",
            Provenance::Reproduced => "reproduced",
            Provenance::Assumed => "assumed",
        }
    }
}

/// What a rule needs to know of one video, as the harness's reader reports it (decord:
/// `len(VideoReader)`, `get_avg_fps()`; another decoder's count and rate where the run read
/// with it, see [`decoder`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VideoFacts {
    /// Frames of the video, counted as the reader counts them.
    pub num_frames: u64,
    /// The video's average frame rate.
    pub fps: Option<f64>,
    /// The question's time window in seconds (MVBench's `start`/`end`), when the item has
    /// one.
    pub bound: Option<(f64, f64)>,
}

/// A frame rule with its parameters, as `dataset.json` stores it (`"kind"` names the variant;
/// docs/frame-rules.md gives each one's harness, formula and errors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FrameRule {
    /// A dataset-level policy of FORMATS §4 (`linspace`, `interior`, `fps`, `segment_mid`,
    /// `uniform_round`, `dense_start`, `nested`) with `n` frames.
    Policy {
        /// The policy's name.
        policy: String,
        /// The frame budget.
        n: u64,
        /// The sampling rate of `fps`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fps: Option<f64>,
        /// The largest budget of `nested`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<u64>,
    },
    /// qwen_vl_utils asked for `nframes` frames (the harness derives the request from `n` as
    /// `cap` says): `torch.linspace(0, T-1, nframes).round()`, then optionally the harness's own
    /// `resample` of the decoded frames.
    QwenNframes {
        /// The budget the harness was given (`max_num_frames`, VLMEvalKit's `nframe`).
        n: u64,
        /// How the harness turns `n` into the `nframes` it passes.
        cap: NframesCap,
        /// How torch's `linspace` kernel rounds.
        #[serde(default)]
        linspace: TorchLinspace,
        /// A second pick over the decoded frames, when the harness makes one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resample: Option<Resample>,
    },
    /// qwen_vl_utils asked for `fps` frames a second: `T / video_fps * fps` clamped to
    /// `[min_frames, max_frames]` (defaults 4 and `min(768, T)`) and floored to even, then
    /// `torch.linspace(0, T-1, nframes).round()` and optionally a `resample`.
    QwenFps {
        /// The sampling rate (qwen_vl_utils' default is 2).
        fps: f64,
        /// `min_frames` when the harness passes one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_frames: Option<u64>,
        /// `max_frames` when the harness passes one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_frames: Option<u64>,
        /// How torch's `linspace` kernel rounds.
        #[serde(default)]
        linspace: TorchLinspace,
        /// A second pick over the decoded frames, when the harness makes one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resample: Option<Resample>,
    },
    /// LLaVA's `load_video`: one frame every `round(avg_fps / rate)` frames, replaced by
    /// `np.linspace(0, T-1, n, dtype=int)` when that is more than `n` frames or
    /// `force_sample`; `n = 0` reads no frame.
    LlavaStride {
        /// `max_frames_num` (lmms-eval) or `nframe` (VLMEvalKit).
        n: u64,
        /// Frames a second of the stride (`video_fps` of llava_vid, 1 in VLMEvalKit).
        rate: f64,
        /// Uniform sampling whatever the stride gives.
        force_sample: bool,
    },
    /// `np.linspace(0, T-1, min(n, T), dtype=int)`: lmms-eval's `read_video` (gemma3; PyAV
    /// over the header's count with the indices past the decodable frames dropped, or
    /// torchcodec over its count) and gemma4's `_sample_video_frames` (torchcodec's count).
    LinspaceUpTo {
        /// The budget (`max_num_frames`).
        n: u64,
    },
    /// VideoLLaMA3's `read_video_custom`: the middle frame of every `floor(video_fps / rate)`
    /// frames plus the last frame when the video is shorter than `max_frames` seconds, else
    /// `np.linspace(0, T-1, max_frames, dtype=int)` (every frame when `T <= max_frames`).
    FpsMiddles {
        /// Frames a second (1).
        rate: f64,
        /// `max_frames_num` (180; the wrapper's `max_num_frames` is not passed).
        max_frames: u64,
    },
    /// `get_index` of InternVL (lmms-eval) and MVBench (VLMEvalKit): the middles of `n` equal
    /// segments of the video, or of the question's window when `bounded` and the item has one,
    /// the window ±100000 s otherwise (which caps very long videos).
    GetIndex {
        /// `num_segments`.
        n: u64,
        /// Whether the harness passes the item's `bound`.
        #[serde(default)]
        bounded: bool,
    },
}

/// How a harness turns its frame budget `n` into qwen_vl_utils' `nframes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NframesCap {
    /// `n` as it is (lmms-eval qwen3_vl chat, llava_onevision1_5 chat, qwen2_5_vl chat 0.5).
    None,
    /// `min(n, T)` (lmms-eval qwen3_vl simple).
    Total,
    /// `max(2, min(n, T) // 2 * 2)` (lmms-eval qwen2_5_vl chat, 0.6 and later).
    EvenMin2,
    /// `T // 2 * 2` when `T < n`, else `n` (VLMEvalKit Qwen2VLChat / Qwen3VLChat, with the
    /// frame count OpenCV reports, taken to be decord's).
    EvenBelow,
}

impl NframesCap {
    fn apply(self, n: u64, t: u64) -> u64 {
        match self {
            NframesCap::None => n,
            NframesCap::Total => n.min(t),
            NframesCap::EvenMin2 => (n.min(t) / 2 * 2).max(2),
            NframesCap::EvenBelow => {
                if t < n {
                    t / 2 * 2
                } else {
                    n
                }
            }
        }
    }

    fn describe(self) -> &'static str {
        match self {
            NframesCap::None => "nframes = N",
            NframesCap::Total => "nframes = min(N, T)",
            NframesCap::EvenMin2 => "nframes = max(2, min(N, T)//2*2)",
            NframesCap::EvenBelow => "nframes = T//2*2 when T < N, else N",
        }
    }
}

/// The harness's second pick over the `m` frames qwen_vl_utils decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resample {
    /// The harness's `max_num_frames`.
    pub n: u64,
    /// What it does with the `np.linspace` positions.
    pub mode: ResampleMode,
}

impl FrameRule {
    /// A dataset-level policy applied with `n` frames.
    pub fn from_policy(policy: &Policy, n: u64) -> FrameRule {
        let (fps, base) = match policy {
            Policy::Fps { fps } => (Some(*fps), None),
            Policy::Nested { base } => (None, Some(*base)),
            _ => (None, None),
        };
        FrameRule::Policy {
            policy: policy.name().to_string(),
            n,
            fps,
            base,
        }
    }

    /// The same rule asked for `n` frames instead of its own budget; an error when the
    /// rule's count does not come from a budget (a rate: `fps`, qwen_vl_utils' fps mode).
    pub fn with_budget(&self, n: u64) -> Result<FrameRule, String> {
        let mut r = self.clone();
        match &mut r {
            FrameRule::Policy { policy, .. } if policy == "fps" => Err(
                "policy fps takes a frame every so many: its count follows from the video's length, not from a budget".into(),
            ),
            FrameRule::QwenFps { .. } => Err(
                "qwen_vl_utils' fps mode takes frames a second: its count follows from the video's length, not from a budget".into(),
            ),
            FrameRule::FpsMiddles { .. } => Err(
                "VideoLLaMA3's loader takes a frame a second whatever the budget: its count follows from the video's length".into(),
            ),
            FrameRule::LinspaceUpTo { n: b } => {
                *b = n;
                Ok(r)
            }
            FrameRule::Policy { n: b, .. }
            | FrameRule::QwenNframes { n: b, .. }
            | FrameRule::LlavaStride { n: b, .. }
            | FrameRule::GetIndex { n: b, .. } => {
                *b = n;
                Ok(r)
            }
        }
    }

    /// The frame indices the rule samples from `video`, in the order the harness asks the
    /// reader for them (duplicates kept where the harness repeats a frame). An error names the
    /// condition under which the harness itself fails.
    pub fn indices(&self, video: &VideoFacts) -> Result<Vec<u64>, String> {
        self.indices_read(video, None, None)
    }

    /// [`FrameRule::indices`] as one decoder reads the video: `video` is that decoder's count
    /// and rate, `clamp` the count the harness clamps its budget with when another decoder
    /// gives it (a qwen_vl_utils `nframes` cap), and `decodable` the frames that actually
    /// decode when fewer than the count (PyAV silently drops the indices from there on).
    pub fn indices_read(
        &self,
        video: &VideoFacts,
        clamp: Option<u64>,
        decodable: Option<u64>,
    ) -> Result<Vec<u64>, String> {
        let mut idx = self.indices_of(video, clamp)?;
        if let Some(k) = decodable {
            idx.retain(|&i| i < k);
        }
        Ok(idx)
    }

    fn indices_of(&self, video: &VideoFacts, clamp: Option<u64>) -> Result<Vec<u64>, String> {
        let t = video.num_frames;
        match self {
            FrameRule::Policy {
                policy,
                n,
                fps,
                base,
            } => {
                let p = Policy::from_config(&sampling::ConfigSampling {
                    policy: policy.clone(),
                    base: *base,
                    fps: *fps,
                    inferred: false,
                })?;
                sampling::indices(&p, t, *n, video.fps)
            }
            FrameRule::QwenNframes {
                n,
                cap,
                linspace,
                resample,
            } => {
                arith::qwen_check_video(t, video.fps)?;
                let nframes = arith::qwen_smart_nframes(cap.apply(*n, clamp.unwrap_or(t)), t)?;
                let idx = arith::torch_linspace_round(0, t - 1, nframes, *linspace)?;
                Ok(apply_resample(idx, resample))
            }
            FrameRule::QwenFps {
                fps,
                min_frames,
                max_frames,
                linspace,
                resample,
            } => {
                let vfps = need_fps(video, "qwen_vl_utils' fps mode")?;
                arith::qwen_check_video(t, Some(vfps))?;
                let nframes =
                    arith::qwen_smart_nframes_fps(t, vfps, *fps, *min_frames, *max_frames)?;
                let idx = arith::torch_linspace_round(0, t - 1, nframes, *linspace)?;
                Ok(apply_resample(idx, resample))
            }
            FrameRule::LlavaStride {
                n,
                rate,
                force_sample,
            } => {
                if *n == 0 {
                    return Ok(Vec::new());
                }
                let vfps = need_fps(video, "LLaVA's load_video")?;
                arith::llava_load_video(t, vfps, *n, *rate, *force_sample)
            }
            FrameRule::LinspaceUpTo { n } => arith::linspace_up_to(t, *n),
            FrameRule::FpsMiddles { rate, max_frames } => {
                let vfps = need_fps(video, "VideoLLaMA3's read_video_custom")?;
                arith::fps_middles(t, vfps, *rate, *max_frames)
            }
            FrameRule::GetIndex { n, bounded } => {
                let vfps = need_fps(video, "get_index")?;
                let bound = if *bounded { video.bound } else { None };
                arith::get_index(t, vfps, *n, bound)
            }
        }
    }

    /// Whether the rule needs the video's frame rate.
    pub fn needs_fps(&self) -> bool {
        match self {
            FrameRule::Policy { policy, .. } => policy == "fps",
            FrameRule::QwenNframes { .. } | FrameRule::LinspaceUpTo { .. } => false,
            FrameRule::QwenFps { .. }
            | FrameRule::GetIndex { .. }
            | FrameRule::FpsMiddles { .. } => true,
            FrameRule::LlavaStride { n, .. } => *n > 0,
        }
    }

    /// One line saying what the rule does, for `frames --explain` and the TUI.
    pub fn describe(&self) -> String {
        let resample_text = |r: &Option<Resample>| match r {
            None => String::new(),
            Some(r) => format!(
                ", then np.linspace({} of the decoded frames){}",
                r.n,
                match r.mode {
                    ResampleMode::UniqueLast => " unique, last frame added",
                    ResampleMode::Unique => " unique",
                    ResampleMode::AppendLast => " with the last frame added",
                }
            ),
        };
        let flavour = |l: &TorchLinspace| match l {
            TorchLinspace::Fma => "",
            TorchLinspace::Plain => " (torch DEFAULT CPU kernel)",
        };
        match self {
            FrameRule::Policy { policy, n, .. } => format!("policy {policy} with {n} frames"),
            FrameRule::QwenNframes {
                n,
                cap,
                linspace,
                resample,
            } => format!(
                "qwen_vl_utils with N = {n}: {}, rounded to even, torch.linspace(0, T-1, nframes).round(){}{}",
                cap.describe(),
                flavour(linspace),
                resample_text(resample)
            ),
            FrameRule::QwenFps {
                fps,
                min_frames,
                max_frames,
                linspace,
                resample,
            } => format!(
                "qwen_vl_utils at {fps} fps: T/video_fps*{fps} clamped to [{}, {}] and floored to even, torch.linspace(0, T-1, nframes).round(){}{}",
                min_frames.unwrap_or(arith::QWEN_FPS_MIN_FRAMES),
                max_frames.map_or_else(|| "min(768, T)".to_string(), |m| m.to_string()),
                flavour(linspace),
                resample_text(resample)
            ),
            FrameRule::LlavaStride {
                n,
                rate,
                force_sample: true,
            } => format!(
                "np.linspace(0, T-1, {n}) (force_sample; the stride of {rate} frame(s) a second is not used)"
            ),
            FrameRule::LlavaStride { n, rate, .. } => format!(
                "1 frame per round(video_fps/{rate}) frames, np.linspace(0, T-1, {n}) when more than {n}"
            ),
            FrameRule::LinspaceUpTo { n } => {
                format!("np.linspace(0, T-1, min({n}, T), dtype=int)")
            }
            FrameRule::FpsMiddles { rate, max_frames } => format!(
                "the middle frame of every video_fps // {rate} frames and the last frame (under {max_frames} s; np.linspace(0, T-1, {max_frames}) for longer videos)"
            ),
            FrameRule::GetIndex { n, bounded } => format!(
                "middles of {n} equal segments of {} (get_index)",
                if *bounded {
                    "the question's time window, else the video"
                } else {
                    "the video (±100000 s)"
                }
            ),
        }
    }
}

/// The video's frame rate, which `what` needs.
fn need_fps(video: &VideoFacts, what: &str) -> Result<f64, String> {
    video
        .fps
        .ok_or_else(|| format!("{what} needs the video's frame rate (fps in items.jsonl)"))
}

/// The decoded frames `idx` the harness keeps after its own pick.
fn apply_resample(idx: Vec<u64>, resample: &Option<Resample>) -> Vec<u64> {
    match resample {
        None => idx,
        Some(r) => arith::resample_positions(idx.len() as u64, r.n, r.mode)
            .into_iter()
            // The positions are below idx.len() by construction of np.linspace over it.
            .filter_map(|p| idx.get(p as usize).copied())
            .collect(),
    }
}

/// The qwen_vl_utils releases a qwen rule holds for, as the rule's name says it (`""` for
/// the other rules). The fps count of 0.0.8 and older rounds to even where later releases
/// floor, and is not capped at the video's length; the nframes path is the same in every
/// release from 0.0.2 to 0.0.14 (tests/rules.rs `qwen_vl_utils_releases`).
pub(crate) fn qwen_vl_utils_releases(rule: &Option<FrameRule>) -> &'static str {
    match rule {
        Some(FrameRule::QwenFps { .. }) => " (qwen_vl_utils 0.0.9–0.0.14)",
        Some(FrameRule::QwenNframes { .. }) => " (qwen_vl_utils 0.0.2–0.0.14)",
        _ => "",
    }
}

/// Why a qwen rule holds for those qwen_vl_utils releases.
pub(crate) fn qwen_vl_utils_why(rule: &Option<FrameRule>) -> &'static str {
    match rule {
        Some(FrameRule::QwenFps { .. }) => {
            "qwen_vl_utils 0.0.9 to 0.0.14 count fps frames this way; 0.0.8 and older round the count to even instead of flooring it and do not cap it at the video's length, so short videos and some counts differ"
        }
        Some(FrameRule::QwenNframes { .. }) => {
            "every qwen_vl_utils release from 0.0.2 to 0.0.14 picks nframes frames this way"
        }
        _ => "",
    }
}

/// The frame rule of one run, as an importer resolved it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRule {
    /// The rule; `None` when the run's frames cannot be computed at all.
    pub rule: Option<FrameRule>,
    /// `reproduced` or `assumed` (`recorded` frames are the cells' own `frame_idx`).
    pub provenance: Provenance,
    /// The rule's name with the harness and version it reproduces, e.g. "lmms-eval 0.7.3
    /// llava_vid (simple): one frame a second, else np.linspace".
    pub name: String,
    /// How it is known, or why it is assumed.
    pub why: String,
    /// Where the harness saved the frames it gave the model, when it did (VLMEvalKit's
    /// dataset frames): a path template relative to the dataset directory with `{video}`,
    /// `{i}` (1-based position) and `{n}` (frames sampled), e.g.
    /// `images/Video-MME/{video}/frame-{i}-of-{n}.jpg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_files: Option<String>,
    /// The decoders the frames depend on (docs/frame-rules.md, "The decoder"); `None` in a
    /// dataset written before decoders were part of the rules, and for a rule that reads no
    /// video: then decord's count is the rule's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoder: Option<decoder::RunDecoder>,
}
