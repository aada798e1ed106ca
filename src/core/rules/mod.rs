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

pub mod lmms_eval;
pub mod vlmevalkit;

use serde::{Deserialize, Serialize};

use crate::core::sampling::{self, Policy};

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
/// `len(VideoReader)`, `get_avg_fps()`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VideoFacts {
    /// Frames of the video, counted as decord counts them.
    pub num_frames: u64,
    /// The video's average frame rate.
    pub fps: Option<f64>,
    /// The question's time window in seconds (MVBench's `start`/`end`), when the item has
    /// one.
    pub bound: Option<(f64, f64)>,
}

/// A frame rule with its parameters, as `dataset.json` stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FrameRule {
    /// A dataset-level policy of FORMATS §4 (`linspace`, `interior`, `fps`, `segment_mid`,
    /// `uniform_round`, `dense_start`, `nested`) with `n` frames.
    Policy {
        policy: String,
        n: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fps: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<u64>,
    },
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

    /// The frame indices the rule samples from `video`, in the order the harness asks the
    /// reader for them (duplicates kept where the harness repeats a frame).
    pub fn indices(&self, video: &VideoFacts) -> Result<Vec<u64>, String> {
        match self {
            FrameRule::Policy {
                policy,
                n,
                fps,
                base,
            } => {
                let p = Policy::from_config(&crate::core::dataset::ConfigSampling {
                    policy: policy.clone(),
                    base: *base,
                    fps: *fps,
                    inferred: false,
                })?;
                sampling::indices(&p, video.num_frames, *n, video.fps)
            }
        }
    }

    /// Whether the rule needs the video's frame rate.
    pub fn needs_fps(&self) -> bool {
        match self {
            FrameRule::Policy { policy, .. } => policy == "fps",
        }
    }

    /// One line saying what the rule does, for `frames --explain` and the TUI.
    pub fn describe(&self) -> String {
        match self {
            FrameRule::Policy { policy, n, .. } => format!("policy {policy} with {n} frames"),
        }
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
}
