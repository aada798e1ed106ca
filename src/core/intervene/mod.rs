//! Sampling intervention plans (docs/intervention.md): for each terminal regression, or each
//! audited harmful transition, the frames a re-run of the higher budget should give the
//! model instead, by one of four strategies, and why. A plan is made only from frames that
//! are recorded or reproduced; a transition whose frames are assumed or unknown is listed as
//! skipped with the reason, never planned from a guess.

use std::collections::{BTreeMap, BTreeSet};

use crate::core::analysis::Report;
use crate::core::analysis::pairs::HarmfulTransition;
use crate::core::audit::{AuditRecord, UnitKey};
use crate::core::cell_frames::{Rule, frames_at_budget, frames_for_cell};
use crate::core::dataset::Dataset;
use crate::core::matrix::Task;
/// How the planned frames are chosen: the plan file's vocabulary, kept with it.
pub use crate::core::plan::Strategy;
use crate::core::plan::{FrameSources, Plan, PlanEntry, SCHEMA, Skipped, Transition};
use crate::core::queue::{
    QueueKind, QueueRow, audited_transition, is_harmful_pair, queue_unlisted,
};
use crate::core::rules::Provenance;
use crate::core::sampling::{frame_set, transition};

mod floor;

/// Which transitions get a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Targets {
    /// Every terminal regression of the primary protocol: from the highest-budget
    /// configuration below the top that is right, to the top.
    Terminal,
    /// Every harmful transition an audit record is on (its `from` and `to`).
    Audited,
}

/// What the audits say of one harmful transition of a unit: the evidence frames marked on
/// it, by whom.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Audited {
    /// The transition's configurations, lower then higher.
    pub from: String,
    /// The higher configuration.
    pub to: String,
    /// Every frame an annotator marked as evidence on it (sorted, distinct).
    pub evidence: Vec<u64>,
    /// The annotators whose records are on it.
    pub annotators: Vec<String>,
}

/// The audits' records by unit and transition: each annotator's record adds its evidence
/// frames to its transition's.
pub fn gather<'a>(
    audits: impl IntoIterator<Item = (&'a str, &'a BTreeMap<UnitKey, AuditRecord>)>,
) -> BTreeMap<UnitKey, Vec<Audited>> {
    let mut out: BTreeMap<UnitKey, Vec<Audited>> = BTreeMap::new();
    for (annotator, records) in audits {
        for (key, rec) in records {
            let on = out.entry(key.clone()).or_default();
            let at = match on.iter().position(|a| a.from == rec.from && a.to == rec.to) {
                Some(p) => p,
                None => {
                    on.push(Audited {
                        from: rec.from.clone(),
                        to: rec.to.clone(),
                        ..Audited::default()
                    });
                    on.len() - 1
                }
            };
            let a = &mut on[at];
            a.evidence = frame_set(
                a.evidence
                    .iter()
                    .chain(&rec.evidence_frames)
                    .copied()
                    .collect(),
            );
            if !a.annotators.iter().any(|x| x == annotator) {
                a.annotators.push(annotator.to_string());
            }
        }
    }
    out
}

/// A transition to plan: the queue row of its unit and its grid columns.
struct Target<'a> {
    row: &'a QueueRow,
    t: HarmfulTransition,
}

/// An audited transition that cannot be planned: (unit, from, to, why).
type Unplanned = (UnitKey, String, String, String);

/// The transitions to plan, in queue order, with those an audit names that are no harmful
/// transition of this data (as `why`, for the skipped list).
fn targets<'a>(
    ds: &Dataset,
    report: &Report,
    rows: &'a [QueueRow],
    which: Targets,
    audits: &BTreeMap<UnitKey, Vec<Audited>>,
) -> (Vec<Target<'a>>, Vec<Unplanned>) {
    let mut out = Vec::new();
    let mut unplanned = Vec::new();
    let mut found = BTreeSet::new();
    for row in rows {
        if row.task != Task::Mcq {
            // Recovery is of multiple-choice items (docs/measures.md §11).
            if which == Targets::Audited {
                let key = unit_key(ds, row);
                if let Some(on) = audits.get(&key) {
                    found.insert(key.clone());
                    for a in on {
                        unplanned.push((
                            key.clone(),
                            a.from.clone(),
                            a.to.clone(),
                            "the audited item is open-ended: recovery is of multiple-choice items"
                                .into(),
                        ));
                    }
                }
            }
            continue;
        }
        let mg = &report.analyses[row.analysis as usize].grids.models[row.model_index as usize];
        let g = &mg.grid;
        match which {
            Targets::Terminal => {
                let (Some(top), Some(step)) = (g.top, audited_transition(report, row)) else {
                    continue;
                };
                if row.terminal {
                    out.push(Target {
                        row,
                        t: HarmfulTransition::new(step.lower, top),
                    });
                }
            }
            Targets::Audited => {
                let key = unit_key(ds, row);
                let Some(on) = audits.get(&key) else {
                    continue;
                };
                found.insert(key.clone());
                let col = |name: &str| (0..g.k()).find(|&c| &*g.names[c] == name);
                for a in on {
                    match (col(&a.from), col(&a.to)) {
                        (Some(lo), Some(hi))
                            if is_harmful_pair(report, row, HarmfulTransition::new(lo, hi)) =>
                        {
                            out.push(Target {
                                row,
                                t: HarmfulTransition::new(lo, hi),
                            });
                        }
                        _ => unplanned.push((
                            key.clone(),
                            a.from.clone(),
                            a.to.clone(),
                            "the audited transition is not a harmful transition of this data"
                                .into(),
                        )),
                    }
                }
            }
        }
    }
    for (key, on) in audits {
        if which == Targets::Audited && !found.contains(key) {
            for a in on {
                unplanned.push((
                    key.clone(),
                    a.from.clone(),
                    a.to.clone(),
                    "the audited unit has no harmful transition in this data".into(),
                ));
            }
        }
    }
    (out, unplanned)
}

fn unit_key(ds: &Dataset, row: &QueueRow) -> UnitKey {
    let m = &ds.matrix;
    let item = m.item(row.item);
    UnitKey::new(
        m.models.name(row.model),
        m.benchmarks.name(item.benchmark),
        &*item.id,
    )
}

/// Frames of a cell usable for a plan: distinct and sorted, with where they come from, or
/// why they cannot be used (assumed or unknown frames are not evidence).
fn known_frames(ds: &Dataset, cell: u32, what: &str) -> Result<(Vec<u64>, String), String> {
    let (frames, rule) = frames_for_cell(ds, cell);
    match rule.provenance() {
        Some(p @ (Provenance::Recorded | Provenance::Reproduced)) => {
            Ok((frame_set(frames), format!("{} ({})", p.name(), rule.name())))
        }
        Some(Provenance::Assumed) => Err(format!(
            "the {what} budget's frames are assumed ({}), not recorded or reproduced",
            rule.name()
        )),
        None => Err(match rule {
            Rule::Unknown(why) => format!("the {what} budget's frames are not known: {why}"),
            other => format!(
                "the {what} budget's frames are not known ({})",
                other.name()
            ),
        }),
    }
}

/// The name a recorder matches a decode's video by: the file name without its folder and
/// extension (docs/intervention.md §5), so that `a/x.mp4` and `b/x.mkv` are one video to it.
pub fn match_name(video: &str) -> String {
    let base = video
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(video);
    match base.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_string(),
        _ => base.to_string(),
    }
}

/// Numbers the passes: within one (model, config, strategy), the distinct frame sets planned
/// for one video (by [`match_name`]), in plan order (entries with the same frames share a
/// pass).
fn assign_passes(entries: &mut [PlanEntry]) {
    let mut sets: BTreeMap<(String, String, String, String), Vec<Vec<u64>>> = BTreeMap::new();
    for e in entries.iter_mut() {
        let key = (
            e.model.clone(),
            e.config.clone(),
            e.strategy.clone(),
            match_name(&e.video),
        );
        let known = sets.entry(key).or_default();
        let at = match known.iter().position(|x| *x == e.indices) {
            Some(p) => p,
            None => {
                known.push(e.indices.clone());
                known.len() - 1
            }
        };
        e.pass_no = at as u64;
    }
}

/// `m` frames of `0..t` not in `taken` (sorted), spread evenly: the middle of each of `m`
/// equal shares of the candidates, in time order.
pub fn spread(t: u64, taken: &[u64], m: usize) -> Vec<u64> {
    let candidates: Vec<u64> = (0..t).filter(|x| taken.binary_search(x).is_err()).collect();
    let c = candidates.len();
    if m == 0 || c == 0 {
        return Vec::new();
    }
    (0..m.min(c))
        .map(|j| candidates[((2 * j + 1) * c) / (2 * m.min(c))])
        .collect()
}

/// Makes the plan of `strategies` for the transitions `which` names, in the primary
/// protocol of `report` (its audit queue). `audits` are the audits given ([`gather`]),
/// used by `restore-evidence` and `audited`. The noise-floor strategies plan every item of
/// every run of the protocol instead ([`floor`]), `phase` in `phases` shifts of the grid.
pub fn plan(
    ds: &Dataset,
    report: &Report,
    protocol: u32,
    which: Targets,
    strategies: &[Strategy],
    audits: &BTreeMap<UnitKey, Vec<Audited>>,
    phases: u64,
) -> Plan {
    let noise: Vec<Strategy> = strategies
        .iter()
        .copied()
        .filter(|s| s.is_noise())
        .collect();
    let strategies: Vec<Strategy> = strategies
        .iter()
        .copied()
        .filter(|s| !s.is_noise())
        .collect();
    let strategies = &strategies[..];
    let m = &ds.matrix;
    let kind = match which {
        Targets::Terminal => QueueKind::Terminal,
        Targets::Audited => QueueKind::Harmful,
    };
    let rows = queue_unlisted(report, protocol, kind);
    let (targets, unplanned) = targets(ds, report, &rows, which, audits);
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    for (key, from, to, why) in unplanned {
        for &s in strategies {
            skipped.push(Skipped {
                model: key.model.clone(),
                benchmark: key.benchmark.clone(),
                item_id: key.item_id.clone(),
                config: to.clone(),
                lower: from.clone(),
                strategy: s.name().to_string(),
                why: why.clone(),
            });
        }
    }
    for target in &targets {
        let row = target.row;
        let mg = &report.analyses[row.analysis as usize].grids.models[row.model_index as usize];
        let k = mg.grid.k();
        let cell = |c: usize| mg.cells[row.row as usize * k + c];
        let key = unit_key(ds, row);
        let (lo_cell, hi_cell) = (cell(target.t.lower), cell(target.t.higher));
        let lower = m
            .config(m.cell_config.get(lo_cell as usize))
            .name
            .to_string();
        let higher = m
            .config(m.cell_config.get(hi_cell as usize))
            .name
            .to_string();
        let meta = ds.item_meta(row.item);
        let video = meta.and_then(|x| x.video.clone());
        let num_frames = meta.and_then(|x| x.num_frames);
        let on = audits.get(&key).map_or(&[][..], Vec::as_slice);
        // The records on this transition; for a terminal regression also those on the flip
        // step from the same lower budget (the audit queue opens it there): their evidence
        // is of the lower budget's frames.
        let on_it: Vec<&Audited> = on
            .iter()
            .filter(|a| a.from == lower && (a.to == higher || which == Targets::Terminal))
            .collect();
        let by: Vec<String> = on_it
            .iter()
            .flat_map(|a| a.annotators.iter().cloned())
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        for &s in strategies {
            let skip = |why: String| Skipped {
                model: key.model.clone(),
                benchmark: key.benchmark.clone(),
                item_id: key.item_id.clone(),
                config: higher.clone(),
                lower: lower.clone(),
                strategy: s.name().to_string(),
                why,
            };
            let planned = (|| -> Result<PlanEntry, String> {
                let video = video
                    .clone()
                    .ok_or("the item has no video in items.jsonl")?;
                let (lo, lo_src) = known_frames(ds, lo_cell, "lower")?;
                let (hi, hi_src) = known_frames(ds, hi_cell, "higher")?;
                let mut restored = Vec::new();
                let (indices, why) = match s {
                    // Planned per run, not per transition (the noise strategies were set
                    // apart above).
                    Strategy::Phase | Strategy::Sampler => {
                        return Err("a noise-floor strategy plans runs, not transitions".into());
                    }
                    Strategy::Swap => (
                        lo.clone(),
                        format!("control: the {} frames of {lower} as they were", lo.len()),
                    ),
                    Strategy::Nested => {
                        let t = num_frames.ok_or(
                            "the item has no num_frames in items.jsonl, which spreading the added frames needs",
                        )?;
                        if hi.len() <= lo.len() {
                            return Err(format!(
                                "{higher} samples {} distinct frames, no more than the {} of {lower}",
                                hi.len(),
                                lo.len()
                            ));
                        }
                        let added = spread(t, &lo, hi.len() - lo.len());
                        let n_added = added.len();
                        let mut all = lo.clone();
                        all.extend(added);
                        let all = frame_set(all);
                        (
                            all,
                            format!(
                                "the {} frames of {lower} kept, {n_added} more spread evenly over the video: {higher}'s count made a superset of {lower}",
                                lo.len()
                            ),
                        )
                    }
                    Strategy::LowerPolicy => {
                        let (idx, rule) = frames_at_budget(ds, lo_cell, hi.len() as u64);
                        if let Rule::Unknown(why) = &rule {
                            return Err(format!(
                                "the rule of {lower} cannot be asked for {} frames: {why}",
                                hi.len()
                            ));
                        }
                        if rule.provenance() == Some(Provenance::Assumed) {
                            return Err(format!(
                                "the rule of {lower} is assumed ({})",
                                rule.name()
                            ));
                        }
                        (
                            idx,
                            format!(
                                "{} frames (the count of {higher}) drawn with the rule of {lower}: {}",
                                hi.len(),
                                rule.name()
                            ),
                        )
                    }
                    Strategy::RestoreEvidence => {
                        if on.is_empty() {
                            return Err(
                                "none of the audit records given (--audit) is on this unit".into(),
                            );
                        }
                        if on_it.is_empty() {
                            return Err(format!(
                                "the audit records of this unit are on other transitions than {lower} → {higher}"
                            ));
                        }
                        let evidence: Vec<u64> = frame_set(
                            on_it
                                .iter()
                                .flat_map(|a| a.evidence.iter().copied())
                                .collect(),
                        );
                        let dropped = transition(&lo, &hi).dropped;
                        restored = evidence
                            .iter()
                            .copied()
                            .filter(|f| dropped.binary_search(f).is_ok())
                            .collect();
                        if restored.is_empty() {
                            return Err(format!(
                                "no evidence frame marked that {higher} dropped ({} evidence frame(s) marked)",
                                evidence.len()
                            ));
                        }
                        let mut all = hi.clone();
                        all.extend(&restored);
                        (
                            frame_set(all),
                            format!(
                                "the {} frames of {higher} plus {} evidence frame(s) of {lower} it dropped, marked by {}: the budget grows by {}",
                                hi.len(),
                                restored.len(),
                                by.join(", "),
                                restored.len()
                            ),
                        )
                    }
                };
                if let (Some(t), Some(&last)) = (num_frames, indices.iter().max())
                    && last >= t
                {
                    return Err(format!(
                        "frame {last} is past the video's {t} frames (items.jsonl num_frames)"
                    ));
                }
                // The higher configuration's own frames, repeats included: a re-run of them
                // changes nothing the model is shown, so its flips would be a re-run's
                // noise, not the intervention's effect. (A higher run that repeated frames,
                // on a video shorter than its budget, showed other input than its distinct
                // frames once each.)
                let mut sorted = indices.clone();
                sorted.sort_unstable();
                let mut own = frames_for_cell(ds, hi_cell).0;
                own.sort_unstable();
                if sorted == own {
                    return Err(format!(
                        "its {} frames are {higher}'s own: re-running them is a re-run, not an intervention",
                        hi.len()
                    ));
                }
                Ok(PlanEntry {
                    model: key.model.clone(),
                    benchmark: key.benchmark.clone(),
                    item_id: key.item_id.clone(),
                    config: higher.clone(),
                    lower: lower.clone(),
                    video,
                    num_frames,
                    indices,
                    strategy: s.name().to_string(),
                    why,
                    higher_frames: hi.len(),
                    lower_frames: lo.len(),
                    restored: std::mem::take(&mut restored),
                    sources: FrameSources {
                        lower: lo_src,
                        higher: hi_src,
                    },
                    // Under --targets audited the records chose the transition; of a
                    // terminal one only restore-evidence reads them.
                    annotators: if which == Targets::Audited || s == Strategy::RestoreEvidence {
                        by.clone()
                    } else {
                        Vec::new()
                    },
                    pass_no: 0,
                    replicate: None,
                    nuisance: None,
                })
            })();
            match planned {
                Ok(e) => entries.push(e),
                Err(why) => skipped.push(skip(why)),
            }
        }
    }
    floor::plan_floor(ds, protocol, &noise, phases, &mut entries, &mut skipped);
    assign_passes(&mut entries);
    let targets = if strategies.is_empty() {
        "all"
    } else {
        match which {
            Targets::Terminal => "terminal",
            Targets::Audited => "audited",
        }
    };
    Plan {
        schema: SCHEMA.to_string(),
        dataset: ds.name.clone(),
        protocol: m.protocols.name(protocol).to_string(),
        targets: targets.to_string(),
        strategies: strategies
            .iter()
            .chain(&noise)
            .map(|s| s.name().to_string())
            .collect(),
        entries,
        skipped,
    }
}

/// Plans `transitions` anew as `intervene plan --targets audited` plans them, by every
/// strategy, each with the evidence frames `evidence` gives for it, marked by `annotator`:
/// adding a transition to a plan file (the audit screens' "add to plan", docs/intervention.md
/// §9) is planning the file's transitions and the new one together.
pub fn plan_transitions(
    ds: &Dataset,
    report: &Report,
    protocol: u32,
    transitions: &BTreeSet<Transition>,
    annotator: &str,
    evidence: impl Fn(&Transition) -> Vec<u64>,
) -> Plan {
    let mut audits: BTreeMap<UnitKey, Vec<Audited>> = BTreeMap::new();
    for t in transitions {
        let (unit, lo, hi) = t;
        audits.entry(unit.clone()).or_default().push(Audited {
            from: lo.clone(),
            to: hi.clone(),
            evidence: evidence(t),
            annotators: vec![annotator.to_string()],
        });
    }
    plan(
        ds,
        report,
        protocol,
        Targets::Audited,
        &Strategy::ALL,
        &audits,
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_the_middle_of_equal_shares_of_the_free_frames() {
        assert_eq!(spread(10, &[], 2), vec![2, 7]);
        // The free frames are 1..=8: the middles of 1..=4 and 5..=8.
        assert_eq!(spread(10, &[0, 9], 2), vec![3, 7]);
        // More wanted than free: every free frame once.
        assert_eq!(spread(4, &[1, 2], 5), vec![0, 3]);
        assert_eq!(spread(4, &[0, 1, 2, 3], 1), Vec::<u64>::new());
        let s = spread(1000, &[10, 500], 8);
        assert_eq!(s.len(), 8);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(s.iter().all(|x| *x < 1000 && *x != 10 && *x != 500));
    }

    #[test]
    fn videos_match_by_name_without_folder_or_extension() {
        assert_eq!(match_name("a/b/x.mp4"), "x");
        assert_eq!(match_name("x.mkv"), "x");
        assert_eq!(match_name("clip01"), "clip01");
        assert_eq!(match_name(".hidden"), ".hidden");
        assert_eq!(match_name("dir/"), "dir");
    }

    #[test]
    fn strategies_round_trip_their_names() {
        for s in Strategy::ALL {
            assert_eq!(Strategy::parse(s.name()), Some(s));
        }
        assert_eq!(Strategy::parse("restore"), None);
    }
}
