//! VLMEvalKit: the frame rule of a run from the model's name (its class in `config.py`),
//! the dataset and the budget in the prediction file's name.

use super::{FrameRule, Provenance, RunRule};
use crate::core::import::vlmevalkit::Budget;
use crate::core::sampling::Policy;

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

/// The frame rule of a run.
pub fn resolve(run: &VlmRun) -> RunRule {
    let (policy, n) = match run.budget {
        Budget::Fps(r) => (Policy::Fps { fps: r }, 0),
        Budget::Frames(n) if run.dataset.starts_with("MVBench") => (Policy::SegmentMid, n),
        Budget::Frames(n) => (Policy::Interior, n),
    };
    RunRule {
        rule: Some(FrameRule::from_policy(&policy, n)),
        provenance: Provenance::Assumed,
        name: format!("{} ({})", policy.name(), run.budget),
        why: "not yet reproduced".into(),
        frame_files: None,
    }
}
