//! lmms-eval's model wrappers: the frame rule of a run from its `config.model`,
//! `config.model_backend` and `config.model_args`.

use super::{FrameRule, Provenance, RunRule};
use crate::core::sampling::Policy;

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

/// The frame budget a wrapper uses when `model_args` sets none (its constructor's default).
pub fn default_budget(_run: &LmmsRun) -> Option<u64> {
    None
}

/// The frame rule of a run with `frames` frames.
pub fn resolve(run: &LmmsRun, frames: u64) -> RunRule {
    let policy = match run.wrapper {
        "internvl2" | "internvl3" | "internvl3_5" => Policy::SegmentMid,
        _ => Policy::Linspace,
    };
    RunRule {
        rule: Some(FrameRule::from_policy(&policy, frames)),
        provenance: Provenance::Assumed,
        name: format!("{} with {frames} frames", policy.name()),
        why: format!("wrapper {} is not yet reproduced", run.wrapper),
        frame_files: None,
    }
}
