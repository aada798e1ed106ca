//! What a VLMEvalKit prediction file's name says: model, dataset and frame budget
//! (docs/formats.md §3.3). VLMEvalKit names a prediction file `{model}_{dataset}.{ext}`, where the
//! dataset carries the budget (`Video-MME_8frame`, `MLVU_1fps`, `Video-MME_8frame_subs`);
//! older releases appended it: `{model}_{dataset}_{N}frame_{pack|nopack}[_{subs|nosubs}]`.
//!
//! Both model and dataset names may hold underscores, so the name is read from the right:
//!
//! 1. the **budget** is the last `_`-word of the form `{N}frame` or `{R}fps`; every word after
//!    it must be a known variant (`subs`, `nosubs`, `pack`, `nopack`, `interleave`,
//!    `reasoning`, `resize`, `audio`, `subt`, `ft`), else the file is not a prediction file
//!    (`_score`, `_rating`, `_tmp` and judge outputs end that way);
//! 2. the words before the budget are `{model}_{dataset}`, split at the first rule that
//!    applies: the longest **known dataset** name ending them ([`KNOWN_DATASETS`]); else the
//!    name of the folder (or the folder above it) the file is in, when the words start with
//!    it and `_`, since VLMEvalKit writes into `{work_dir}/{model}/[{run}/]`; else the last
//!    word is the dataset;
//! 3. the model must not be empty.

use crate::core::rules::vlmevalkit::Budget;

/// Dataset names of VLMEvalKit's video benchmarks, as they appear in file names. Those with
/// underscores are what rule 2 needs; the others keep a model name that ends in a word of
/// a dataset name from being cut wrongly by the folder rule.
pub const KNOWN_DATASETS: &[&str] = &[
    "AV-SpeakerBench_audio_only",
    "AV-SpeakerBench_audiovisual",
    "AV-SpeakerBench_visual",
    "CG-AV-Counting",
    "CGBench_MCQ_Grounding",
    "CGBench_MCQ_Grounding_Mini",
    "CGBench_OpenEnded",
    "CGBench_OpenEnded_Mini",
    "DREAM-1K",
    "EgoExoBench",
    "LongVideoBench",
    "MEGABench_core",
    "MEGABench_open",
    "MLVU",
    "MLVU_MCQ",
    "MLVU_OpenEnded",
    "MMBench-Video",
    "MMBench_Video",
    "MVBench",
    "MVBench_MP4",
    "MVTamperBench",
    "MVTamperBenchEnd",
    "MVTamperBenchStart",
    "QBench_Video",
    "SIS-Bench",
    "TempCompass",
    "TempCompass_Captioning",
    "TempCompass_MCQ",
    "TempCompass_YorN",
    "V2PBench",
    "VCRBench",
    "VDC",
    "Video-MME",
    "Video-MME-v2",
    "VideoEval-Pro-MCQ",
    "VideoEval-Pro-OpenEnded",
    "VideoMMMU",
    "Video_Holmes",
    "Video_MMLU_CAP",
    "Video_MMLU_QA",
    "Video_TT",
    "WorldSense",
    "moviechat1k_breakpoint",
    "moviechat1k_global",
];

/// Words after the budget that name a variant of the run. `nopack` and `nosubs` are the
/// defaults and do not show in the configuration label; the others change what the model
/// was given, so they do.
const VARIANTS: &[&str] = &[
    "subs",
    "nosubs",
    "pack",
    "nopack",
    "interleave",
    "reasoning",
    "resize",
    "audio",
    "subt",
    "ft",
];

/// Variants that are the default input and so leave the label alone.
const DEFAULT_VARIANTS: &[&str] = &["nosubs", "nopack"];

/// Words VLMEvalKit appends to a prediction file's name for its evaluation outputs.
const SIDE_FILES: &[&str] = &[
    "score", "rating", "tmp", "acc", "supp", "structs", "result", "judge",
];

/// What a prediction file's name says.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionName {
    /// The model, as VLMEvalKit names it.
    pub model: String,
    /// The dataset without the budget (`Video-MME`, `MVBench_MP4`): the benchmark.
    pub dataset: String,
    /// The frame budget.
    pub budget: Budget,
    /// The variants after the budget that change the input (`subs`, `pack`...), in the
    /// name's order; the defaults `nopack` and `nosubs` are left out.
    pub variants: Vec<String>,
}

impl PredictionName {
    /// The configuration label: the budget (`8f`, `1fps`) then each variant after a `-`
    /// (`8f-subs`), so runs with and without subtitles stay apart.
    pub fn config(&self) -> String {
        let mut label = self.budget.to_string();
        for v in &self.variants {
            label.push('-');
            label.push_str(v);
        }
        label
    }
}

/// Reads a prediction file's name (`stem`, without the extension); `folders` are the
/// names of the folder holding the file and of the one above it, nearest first. The error
/// says, in a few words, why the name is not one of a prediction file.
pub fn parse_file_name(stem: &str, folders: &[&str]) -> Result<PredictionName, String> {
    let words: Vec<&str> = stem.split('_').collect();
    let Some(at) = words.iter().rposition(|w| budget(w).is_some()) else {
        return Err(
            "its name has no frame budget ({N}frame or {R}fps after the dataset): not a VLMEvalKit prediction file name".into(),
        );
    };
    let after = &words[at + 1..];
    if let Some(extra) = after.iter().find(|w| !VARIANTS.contains(w)) {
        return Err(if after.iter().any(|w| SIDE_FILES.contains(w)) {
            format!(
                "an evaluation output (\"_{}\" after the budget), not predictions",
                after.join("_")
            )
        } else {
            format!("unknown word {extra:?} after the frame budget")
        });
    }
    let Some(budget) = budget(words[at]) else {
        return Err("its name has no frame budget".into());
    };
    let head = &words[..at];
    let (model, dataset) = split_model(head, folders).ok_or_else(|| {
        "no model name before the dataset (expected {model}_{dataset}_{budget})".to_string()
    })?;
    let variants = after
        .iter()
        .filter(|w| !DEFAULT_VARIANTS.contains(w))
        .map(|w| (*w).to_string())
        .collect();
    Ok(PredictionName {
        model,
        dataset,
        budget,
        variants,
    })
}

/// The budget a word names: `8frame` → 8 frames, `1fps` / `1.0fps` / `0.5fps` → a rate.
fn budget(word: &str) -> Option<Budget> {
    if let Some(n) = word.strip_suffix("frame") {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            // 0 frames is how VLMEvalKit says "fps mode", never a budget of its own.
            return n.parse().ok().filter(|&n| n > 0).map(Budget::Frames);
        }
        return None;
    }
    let r = word.strip_suffix("fps")?;
    let (int, frac) = r.split_once('.').unwrap_or((r, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) {
        return None;
    }
    r.parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r > 0.0)
        .map(Budget::Fps)
}

/// Splits the words before the budget into (model, dataset) by the rules of the module
/// documentation; `None` when no model would be left.
fn split_model(head: &[&str], folders: &[&str]) -> Option<(String, String)> {
    split_at_rule(head, folders).filter(|(model, dataset)| !model.is_empty() && !dataset.is_empty())
}

/// The (model, dataset) of the first rule that applies, possibly with an empty part.
fn split_at_rule(head: &[&str], folders: &[&str]) -> Option<(String, String)> {
    if head.len() < 2 {
        return None;
    }
    let joined = head.join("_");
    // Rule 2a: the longest known dataset name that ends the words, leaving a model.
    let known = (1..head.len())
        .map(|start| (start, head[start..].join("_")))
        .find(|(_, name)| KNOWN_DATASETS.contains(&name.as_str()));
    if let Some((start, dataset)) = known {
        return Some((head[..start].join("_"), dataset));
    }
    // Rule 2b: VLMEvalKit's own folder, named after the model.
    for folder in folders {
        if let Some(rest) = joined
            .strip_prefix(folder)
            .and_then(|r| r.strip_prefix('_'))
            && !folder.is_empty()
            && !rest.is_empty()
        {
            return Some(((*folder).to_string(), rest.to_string()));
        }
    }
    // Rule 2c: a dataset name of one word.
    let (last, model) = head.split_last()?;
    Some((model.join("_"), (*last).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(stem: &str) -> Result<PredictionName, String> {
        parse_file_name(stem, &[])
    }

    fn ok(stem: &str, folders: &[&str]) -> (String, String, String) {
        let p = parse_file_name(stem, folders).unwrap_or_else(|e| panic!("{stem}: {e}"));
        (p.model.clone(), p.dataset.clone(), p.config())
    }

    fn s(model: &str, dataset: &str, config: &str) -> (String, String, String) {
        (model.into(), dataset.into(), config.into())
    }

    #[test]
    fn current_names() {
        let cases = [
            (
                "Qwen2-VL-7B-Instruct_Video-MME_8frame",
                s("Qwen2-VL-7B-Instruct", "Video-MME", "8f"),
            ),
            ("GPT4o_MVBench_64frame", s("GPT4o", "MVBench", "64f")),
            ("InternVL2-8B_MLVU_1fps", s("InternVL2-8B", "MLVU", "1fps")),
            (
                "llava_video_qwen2_7b_Video-MME_0.5fps",
                s("llava_video_qwen2_7b", "Video-MME", "0.5fps"),
            ),
            (
                "Qwen2-VL-7B_Video-MME_8frame_subs",
                s("Qwen2-VL-7B", "Video-MME", "8f-subs"),
            ),
            (
                "Qwen2-VL-7B_Video-MME_0.5fps_subs",
                s("Qwen2-VL-7B", "Video-MME", "0.5fps-subs"),
            ),
            (
                "llava_onevision_qwen2_7b_ov_MVBench_MP4_8frame",
                s("llava_onevision_qwen2_7b_ov", "MVBench_MP4", "8f"),
            ),
            (
                "Qwen2_VL_MMBench_Video_8frame_pack",
                s("Qwen2_VL", "MMBench_Video", "8f-pack"),
            ),
            (
                "m_CGBench_MCQ_Grounding_Mini_8frame_subs_subt",
                s("m", "CGBench_MCQ_Grounding_Mini", "8f-subs-subt"),
            ),
            (
                "X_Video-MME-v2_64frame_subs_interleave",
                s("X", "Video-MME-v2", "64f-subs-interleave"),
            ),
            (
                "Video-MME_Video-MME_8frame",
                s("Video-MME", "Video-MME", "8f"),
            ),
        ];
        for (stem, want) in cases {
            assert_eq!(ok(stem, &[]), want, "{stem}");
        }
    }

    #[test]
    fn older_names() {
        let cases = [
            (
                "GPT4o_MMBench-Video_8frame_nopack",
                s("GPT4o", "MMBench-Video", "8f"),
            ),
            (
                "llava_onevision_qwen2_7b_ov_Video-MME_16frame_nopack_nosubs",
                s("llava_onevision_qwen2_7b_ov", "Video-MME", "16f"),
            ),
            (
                "Qwen2-VL-7B_Video-MME_8frame_nopack_subs",
                s("Qwen2-VL-7B", "Video-MME", "8f-subs"),
            ),
            (
                "Qwen2-VL-7B_MMBench-Video_1.0fps_pack",
                s("Qwen2-VL-7B", "MMBench-Video", "1fps-pack"),
            ),
        ];
        for (stem, want) in cases {
            assert_eq!(ok(stem, &[]), want, "{stem}");
        }
    }

    #[test]
    fn unknown_datasets_take_the_folder_or_the_last_word() {
        // The folder names the model (VLMEvalKit's {work_dir}/{model}/{run}/ layout).
        assert_eq!(
            ok(
                "my_model_New_Bench_8frame",
                &["T20250101_G0abc", "my_model"]
            ),
            s("my_model", "New_Bench", "8f")
        );
        // A folder that is not a prefix is no help: one-word dataset.
        assert_eq!(
            ok("my_model_NewBench_8frame", &["outputs"]),
            s("my_model", "NewBench", "8f")
        );
        // A known dataset wins over a folder that happens to be a prefix.
        assert_eq!(
            ok("Qwen2_VL_Video-MME_8frame", &["Qwen2"]),
            s("Qwen2_VL", "Video-MME", "8f")
        );
    }

    #[test]
    fn budgets() {
        assert_eq!(budget("8frame"), Some(Budget::Frames(8)));
        assert_eq!(budget("128frame"), Some(Budget::Frames(128)));
        assert_eq!(budget("0frame"), None);
        assert_eq!(budget("frame"), None);
        assert_eq!(budget("1fps"), Some(Budget::Fps(1.0)));
        assert_eq!(budget("1.0fps"), Some(Budget::Fps(1.0)));
        assert_eq!(budget("0.5fps"), Some(Budget::Fps(0.5)));
        assert_eq!(budget("0fps"), None);
        assert_eq!(budget(".5fps"), None);
        assert_eq!(budget("1e3fps"), None);
        assert_eq!(budget("-1fps"), None);
        assert_eq!(budget("8frames"), None);
        assert_eq!(Budget::Fps(0.25).to_string(), "0.25fps");
    }

    #[test]
    fn names_that_are_not_predictions() {
        for (stem, why) in [
            ("status", "no frame budget"),
            ("Qwen2-VL-7B_Video-MME", "no frame budget"),
            ("Qwen2-VL-7B_Video-MME_8frame_score", "evaluation output"),
            ("Qwen2-VL-7B_Video-MME_8frame_rating", "evaluation output"),
            (
                "Qwen2-VL-7B_Video-MME_8frame_nopack_subs_tmp",
                "evaluation output",
            ),
            ("Qwen2-VL-7B_Video-MME_8frame_gpt-4o-mini", "unknown word"),
            ("Video-MME_8frame", "no model name"),
            ("8frame", "no model name"),
            ("_Video-MME_8frame", "no model name"),
        ] {
            let err = parse(stem).expect_err(stem);
            assert!(err.contains(why), "{stem}: {err}");
        }
    }
}
