//! The frames one cell of a dataset saw, and how that was decided: the cell's own
//! `frame_idx`, its run's frame rule, or its configuration's policy. This is where the
//! dataset meets the harnesses' rules and policies, so it sits above all three.

use crate::core::dataset::{Dataset, ItemMeta};
use crate::core::rules::decoder::{ItemVideo, RunDecoder, frames_by_decoder};
use crate::core::rules::{FrameRule, Provenance, VideoFacts};
use crate::core::sampling::{Policy, indices};

/// How the frames a cell saw were determined ([`frames_for_cell`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// The cell's own `frame_idx`: recorded when the video was decoded.
    Cell,
    /// The run's frame rule from `dataset.json` → `runs`.
    Run {
        /// The rule's kind (`qwen_vl_utils`, `policy`...), as `dataset.json` tags it.
        kind: String,
        /// How sure the rule is.
        provenance: Provenance,
        /// The rule, with the harness and version it reproduces.
        name: String,
        /// How it is known, or why it is assumed.
        why: String,
    },
    /// The configuration's policy from `dataset.json` → `configs` (named), applied to the
    /// item's `num_frames` (and `fps`); `inferred` when an importer guessed it.
    Policy {
        /// The policy's name.
        name: &'static str,
        /// Whether the policy is a guess.
        inferred: bool,
    },
    /// `dataset.json` gives no rule for the configuration, so `linspace` is assumed.
    Assumed,
    /// No frames can be known; the reason.
    Unknown(String),
}

impl Rule {
    /// How sure the frames are; `None` when there are none.
    pub fn provenance(&self) -> Option<Provenance> {
        match self {
            Rule::Cell => Some(Provenance::Recorded),
            Rule::Run { provenance, .. } => Some(*provenance),
            Rule::Policy {
                inferred: false, ..
            } => Some(Provenance::Reproduced),
            Rule::Policy { inferred: true, .. } | Rule::Assumed => Some(Provenance::Assumed),
            Rule::Unknown(_) => None,
        }
    }

    /// The rule's name, short, for `frames --json` and the frame view's header.
    pub fn name(&self) -> String {
        match self {
            Rule::Cell => "recorded frame_idx".into(),
            Rule::Run { name, .. } => name.clone(),
            Rule::Policy { name, .. } => format!("policy {name} (dataset.json)"),
            Rule::Assumed => "linspace (assumed)".into(),
            Rule::Unknown(_) => "none".into(),
        }
    }

    /// One sentence saying where the frames come from and how sure they are.
    pub fn explain(&self) -> String {
        match self {
            Rule::Cell => {
                "Recorded: the cell's own frame_idx, logged when the video was decoded.".into()
            }
            Rule::Run {
                provenance: Provenance::Assumed,
                name,
                why,
                ..
            } => format!("ASSUMED, not exact: {name}; {why}."),
            Rule::Run {
                provenance, name, ..
            } => format!("{}: {name}.", capitalized(provenance.name())),
            Rule::Policy {
                name,
                inferred: false,
            } => format!(
                "The frames are computed with policy {name} from dataset.json for the item's video."
            ),
            Rule::Policy {
                name,
                inferred: true,
            } => format!(
                "ASSUMED, not exact: policy {name}, which the import guessed from the model wrapper; the model may have seen other frames."
            ),
            Rule::Assumed => "ASSUMED, not exact: dataset.json gives no rule for this configuration, so linspace is assumed; the model may have seen other frames.".into(),
            Rule::Unknown(reason) => format!("No frames can be known: {reason}."),
        }
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The facts of an item's video that frame rules use, from `items.jsonl`.
fn video_facts(meta: &ItemMeta, t: u64) -> VideoFacts {
    VideoFacts {
        num_frames: t,
        fps: meta.fps,
        bound: meta.start.zip(meta.end),
    }
}

/// A run's rule for one item: its name says which decoder counts (and the decoders' counts
/// where they differ on the item's video); assumed when the run's candidate decoders give
/// the video different frames.
fn with_decoder(rule: Rule, note: String, assumed: Option<String>) -> Rule {
    let Rule::Run {
        kind,
        provenance,
        name,
        why,
    } = rule
    else {
        return rule;
    };
    let name = if note.is_empty() {
        name
    } else {
        format!("{name}; {note}")
    };
    match assumed {
        None => Rule::Run {
            kind,
            provenance,
            name,
            why,
        },
        Some(reason) => Rule::Run {
            kind,
            provenance: Provenance::Assumed,
            name,
            why: format!("{reason}; {why}"),
        },
    }
}

/// The frames cell `cell` of the dataset saw, and how that was decided: the cell's own
/// `frame_idx` wins (recorded); a zero-frame configuration saw nothing; then the run's rule
/// in `dataset.json` → `runs`, then the configuration's policy in `dataset.json` →
/// `configs` (or `linspace`, assumed) with the configuration's `frames` as `N`, each applied
/// to the item's `num_frames` (and `fps`) from `items.jsonl`. Never fails: what cannot be
/// computed is a [`Rule::Unknown`] with no frames.
pub fn frames_for_cell(ds: &Dataset, cell: u32) -> (Vec<u64>, Rule) {
    frames_of(ds, cell, None)
}

/// The frames the rule of cell `cell` (its run's rule, else its configuration's policy)
/// samples when asked for `n` frames instead of the configuration's own budget: what the
/// same harness would have given the model at another budget. The cell's own `frame_idx`
/// says nothing of another budget, so it is not used; a rule whose count does not come
/// from a budget (a rate) is a [`Rule::Unknown`].
pub fn frames_at_budget(ds: &Dataset, cell: u32, n: u64) -> (Vec<u64>, Rule) {
    frames_of(ds, cell, Some(n))
}

fn frames_of(ds: &Dataset, cell: u32, budget: Option<u64>) -> (Vec<u64>, Rule) {
    let m = &ds.matrix;
    if budget.is_none()
        && let Some(idx) = m.frame_idx(cell)
    {
        return (idx.to_vec(), Rule::Cell);
    }
    let unknown = |reason: &str| (Vec::new(), Rule::Unknown(reason.to_owned()));
    let (Some(config_id), Some(item), Some(model)) = (
        m.cell_config.try_get(cell as usize),
        m.cell_item.try_get(cell as usize),
        m.cell_model.try_get(cell as usize),
    ) else {
        return unknown("the cell does not exist");
    };
    let Some(config) = m.configs.get(config_id as usize) else {
        return unknown("the cell's configuration does not exist");
    };
    if config.is_zero_frame() {
        return unknown("text-only configuration (0 frames)");
    }
    let bench = m.item(item).benchmark;
    enum Chosen {
        Run(FrameRule, Option<RunDecoder>, Rule),
        Policy(Policy, Rule),
    }
    let chosen = if let Some(run) = ds.run_entry(model, bench, config_id) {
        let kind = run
            .rule
            .rule
            .as_ref()
            .and_then(|r| serde_json::to_value(r).ok())
            .and_then(|v| {
                // A dataset-level policy names itself; a harness rule by its kind.
                let name = v.get("policy").or_else(|| v.get("kind"))?;
                name.as_str().map(str::to_owned)
            })
            .unwrap_or_default();
        let rule = Rule::Run {
            kind,
            provenance: run.rule.provenance,
            name: run.rule.name.clone(),
            why: run.rule.why.clone(),
        };
        match &run.rule.rule {
            Some(r) => Chosen::Run(r.clone(), run.rule.decoder.clone(), rule),
            None => return unknown(&format!("{} ({})", run.rule.name, run.rule.why)),
        }
    } else {
        match ds.meta.configs.get(&*config.name) {
            Some(c) => match Policy::from_config(c) {
                Ok(p) => Chosen::Policy(
                    p,
                    Rule::Policy {
                        name: p.name(),
                        inferred: c.inferred,
                    },
                ),
                Err(e) => {
                    return unknown(&format!(
                        "configuration {:?} in dataset.json: {e}",
                        config.name
                    ));
                }
            },
            None => Chosen::Policy(Policy::Linspace, Rule::Assumed),
        }
    };
    let Some(meta) = ds.item_meta(item) else {
        return unknown("the item is not described in items.jsonl");
    };
    let Some(t) = meta.num_frames else {
        return unknown("the item has no num_frames in items.jsonl");
    };
    if t == 0 {
        return unknown("the item's video has no frames (num_frames 0 in items.jsonl)");
    }
    let facts = video_facts(meta, t);
    let (result, rule) = match chosen {
        Chosen::Run(r, decoder, rule) => {
            let r = match budget.map(|n| r.with_budget(n)) {
                None => r,
                Some(Ok(r)) => r,
                Some(Err(e)) => return unknown(&e),
            };
            if r.needs_fps() && meta.fps.is_none() {
                return unknown("the item has no fps in items.jsonl, which its frame rule needs");
            }
            let video = ItemVideo {
                decord: &facts,
                counts: meta.decoders.as_deref(),
                discarded: meta.discarded_packets,
            };
            match frames_by_decoder(&r, decoder.as_ref(), &video) {
                Ok(f) => (Ok(f.indices), with_decoder(rule, f.note, f.assumed)),
                Err(e) => (Err(e), rule),
            }
        }
        Chosen::Policy(p, rule) => {
            if matches!(p, Policy::Fps { .. }) {
                if budget.is_some() {
                    return unknown(
                        "policy fps takes a frame every so many: its count follows from the video's length, not from a budget",
                    );
                }
                if meta.fps.is_none() {
                    return unknown("the item has no fps in items.jsonl, which policy fps needs");
                }
            }
            (
                indices(&p, t, budget.unwrap_or(config.frames), meta.fps),
                rule,
            )
        }
    };
    match result {
        Ok(v) => (v, rule),
        Err(e) => unknown(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::sampling::interior;

    /// A dataset directory with one item per situation and one configuration per rule.
    fn tiny_dataset() -> (tempfile::TempDir, Dataset) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cells = String::new();
        let mut cell = |item: &str, config: &str, frames: u64, idx: Option<&[u64]>| {
            let mut c = serde_json::json!({"model": "m", "item_id": item, "config": config,
                "frames": frames, "pred": "A", "gold": "A"});
            if let Some(idx) = idx {
                c["frame_idx"] = serde_json::json!(idx);
            }
            cells.push_str(&format!("{c}\n"));
        };
        for item in ["v", "nonum", "nofps", "absent"] {
            cell(item, "text", 0, None);
            cell(item, "4f", 4, None);
            cell(item, "8f-int", 8, None);
            cell(item, "1fps", 8, None);
        }
        cell("v", "own", 3, Some(&[7, 2, 9]));
        std::fs::write(dir.path().join("cells.jsonl"), cells).expect("write cells");
        let items = [
            serde_json::json!({"item_id": "v", "num_frames": 100, "fps": 10.0}),
            serde_json::json!({"item_id": "nonum", "question": "?"}),
            serde_json::json!({"item_id": "nofps", "num_frames": 100}),
        ];
        let items: String = items.iter().map(|i| format!("{i}\n")).collect();
        std::fs::write(dir.path().join("items.jsonl"), items).expect("write items");
        let meta = serde_json::json!({"schema": "frameaudit/dataset@1", "configs": {
            "8f-int": {"policy": "interior"}, "1fps": {"policy": "fps", "fps": 1.0},
            "own": {"policy": "linspace"}}});
        std::fs::write(dir.path().join("dataset.json"), meta.to_string()).expect("write meta");
        let ds = crate::core::dataset::load_dataset(dir.path(), None).expect("loads");
        (dir, ds)
    }

    fn find_cell(ds: &Dataset, item: &str, config: &str) -> u32 {
        let m = &ds.matrix;
        (0..m.n_cells() as u32)
            .find(|&c| {
                &*m.item(m.cell_item.get(c as usize)).id == item
                    && &*m.config(m.cell_config.get(c as usize)).name == config
            })
            .expect("the cell exists")
    }

    #[test]
    fn frames_for_cell_rules() {
        let (_dir, ds) = tiny_dataset();
        let at = |item, config| frames_for_cell(&ds, find_cell(&ds, item, config));

        assert_eq!(at("v", "own"), (vec![7, 2, 9], Rule::Cell));
        assert_eq!(at("v", "4f"), (vec![0, 33, 66, 99], Rule::Assumed));
        assert_eq!(
            at("v", "8f-int"),
            (
                interior(100, 8),
                Rule::Policy {
                    name: "interior",
                    inferred: false
                }
            )
        );
        // 100 frames at 10 fps: 10 s, one frame a second.
        assert_eq!(
            at("v", "1fps"),
            (
                (0..10).map(|i| i * 10).collect(),
                Rule::Policy {
                    name: "fps",
                    inferred: false
                }
            )
        );
        let unknown = |reason: &str| (Vec::new(), Rule::Unknown(reason.into()));
        assert_eq!(
            at("v", "text"),
            unknown("text-only configuration (0 frames)")
        );
        assert_eq!(
            at("nonum", "4f"),
            unknown("the item has no num_frames in items.jsonl")
        );
        assert_eq!(
            at("absent", "8f-int"),
            unknown("the item is not described in items.jsonl")
        );
        assert_eq!(
            at("nofps", "1fps"),
            unknown("the item has no fps in items.jsonl, which policy fps needs")
        );
        assert_eq!(
            at("nofps", "8f-int").1,
            Rule::Policy {
                name: "interior",
                inferred: false
            }
        );
        assert_eq!(
            frames_for_cell(&ds, u32::MAX),
            unknown("the cell does not exist")
        );
    }

    #[test]
    fn a_cells_rule_at_another_budget() {
        let (_dir, ds) = tiny_dataset();
        let at = |item, config, n| frames_at_budget(&ds, find_cell(&ds, item, config), n);
        assert_eq!(at("v", "8f-int", 4).0, interior(100, 4));
        assert_eq!(at("v", "4f", 8).0, crate::core::sampling::linspace(100, 8));
        // A recorded cell's own frames say nothing of another budget: its policy is used.
        assert_eq!(at("v", "own", 2).0, vec![0, 99]);
        let (none, why) = at("v", "1fps", 16);
        assert!(none.is_empty());
        assert!(
            matches!(&why, Rule::Unknown(w) if w.contains("not from a budget")),
            "{why:?}"
        );
    }

    #[test]
    fn rules_explain_themselves() {
        assert!(Rule::Cell.explain().contains("frame_idx"));
        let exact = Rule::Policy {
            name: "segment_mid",
            inferred: false,
        };
        assert!(exact.explain().contains("segment_mid"));
        assert_eq!(exact.provenance(), Some(Provenance::Reproduced));
        let guessed = Rule::Policy {
            name: "linspace",
            inferred: true,
        };
        assert!(
            guessed.explain().starts_with("ASSUMED"),
            "{}",
            guessed.explain()
        );
        assert_eq!(guessed.provenance(), Some(Provenance::Assumed));
        assert!(Rule::Assumed.explain().contains("linspace is assumed"));
        assert_eq!(Rule::Assumed.provenance(), Some(Provenance::Assumed));
        assert_eq!(Rule::Cell.provenance(), Some(Provenance::Recorded));
        let run = Rule::Run {
            kind: "llava_vid".into(),
            provenance: Provenance::Assumed,
            name: "linspace with 8 frames".into(),
            why: "wrapper x is not reproduced".into(),
        };
        assert_eq!(
            run.explain(),
            "ASSUMED, not exact: linspace with 8 frames; wrapper x is not reproduced."
        );
        assert_eq!(Rule::Unknown("x".into()).provenance(), None);
        let s = Rule::Unknown("text-only configuration (0 frames)".into()).explain();
        assert_eq!(
            s,
            "No frames can be known: text-only configuration (0 frames)."
        );
    }
}
