//! Noise-floor plans (docs/intervention.md §3.5, §3.6): for every item of every run, the
//! frames of the same budget under a nuisance, the sampling grid shifted by a fraction of
//! its step (`phase`) or another deployed uniform rule of the same count (`sampler`), so a
//! re-run through the recorder measures how often answers flip with no change of budget.
//! Like every plan, made only from frames that are recorded or reproduced.

use crate::core::audit::UnitKey;
use crate::core::cell_frames::{Rule, frames_at_budget, frames_for_cell};
use crate::core::dataset::Dataset;
use crate::core::matrix::Task;
use crate::core::plan::{FrameSources, PlanEntry, Skipped};
use crate::core::rules::Provenance;
use crate::core::sampling::{fps_then_linspace, frame_set, left_endpoint, midpoint, uniform_round};

use super::{Strategy, known_frames};

/// The most shifts `--phases` may ask for: a grid of more than 64 phases is a dense decode,
/// not a floor.
pub const MAX_PHASES: u64 = 64;

/// One planned grid of a run's cell, before it becomes an entry: the replicate it makes,
/// its frames, why, and how they were derived.
struct Grid {
    replicate: String,
    indices: Vec<u64>,
    why: String,
    source: String,
}

/// What a cell's run is known to have sampled: its distinct frames, how they are known, and
/// the video's frame count and rate.
struct Run<'a> {
    config: &'a str,
    own: Vec<u64>,
    own_source: String,
    num_frames: Option<u64>,
    fps: Option<f64>,
}

/// Adds to `entries` (and `skipped`) the noise-floor plan of each strategy of `noise` for
/// every valid multiple-choice cell of `protocol` with frames: one entry per (cell,
/// replicate). Text-only configurations have no grid to shift and are passed over.
pub(super) fn plan_floor(
    ds: &Dataset,
    protocol: u32,
    noise: &[Strategy],
    phases: u64,
    entries: &mut Vec<PlanEntry>,
    skipped: &mut Vec<Skipped>,
) {
    if noise.is_empty() {
        return;
    }
    let m = &ds.matrix;
    for model in 0..m.models.len() as u32 {
        for &cell in m.group(protocol, model) {
            if !m.is_valid(cell) {
                continue;
            }
            let item = m.cell_item.get(cell as usize);
            let config = m.config(m.cell_config.get(cell as usize));
            if config.is_zero_frame() || m.item_task(item) != Task::Mcq {
                continue;
            }
            let it = m.item(item);
            let key = UnitKey::new(
                m.models.name(model),
                m.benchmarks.name(it.benchmark),
                &*it.id,
            );
            let meta = ds.item_meta(item);
            for &s in noise {
                let skip = |why: String| Skipped {
                    model: key.model.clone(),
                    benchmark: key.benchmark.clone(),
                    item_id: key.item_id.clone(),
                    config: config.name.to_string(),
                    lower: config.name.to_string(),
                    strategy: s.name().to_string(),
                    why,
                };
                let Some(video) = meta.and_then(|x| x.video.clone()) else {
                    skipped.push(skip("the item has no video in items.jsonl".into()));
                    continue;
                };
                let run = match known_frames(ds, cell, "run's") {
                    Ok((own, own_source)) => Run {
                        config: &config.name,
                        own,
                        own_source,
                        num_frames: meta.and_then(|x| x.num_frames),
                        fps: meta.and_then(|x| x.fps),
                    },
                    Err(why) => {
                        skipped.push(skip(why));
                        continue;
                    }
                };
                let grids = match s {
                    Strategy::Phase => phase_grids(ds, cell, &run, phases),
                    Strategy::Sampler => sampler_grids(&run),
                    _ => Vec::new(),
                };
                for g in grids {
                    match g {
                        Ok(g) => entries.push(PlanEntry {
                            model: key.model.clone(),
                            benchmark: key.benchmark.clone(),
                            item_id: key.item_id.clone(),
                            config: config.name.to_string(),
                            lower: config.name.to_string(),
                            video: video.clone(),
                            num_frames: run.num_frames,
                            indices: g.indices,
                            strategy: s.name().to_string(),
                            why: g.why,
                            higher_frames: run.own.len(),
                            lower_frames: run.own.len(),
                            restored: Vec::new(),
                            sources: FrameSources {
                                lower: run.own_source.clone(),
                                higher: g.source,
                            },
                            annotators: Vec::new(),
                            pass_no: 0,
                            replicate: Some(g.replicate),
                            nuisance: Some(s.name().to_string()),
                        }),
                        Err(why) => skipped.push(skip(why)),
                    }
                }
            }
        }
    }
}

/// Checks a planned grid: `n` distinct frames inside the video, other than the run's own
/// and than each grid planned before it for the cell.
fn check(grid: &[u64], run: &Run<'_>, earlier: &[(String, Vec<u64>)]) -> Result<(), String> {
    let n = run.own.len();
    let set = frame_set(grid.to_vec());
    if set.len() != n {
        return Err(format!(
            "it has {} distinct frames, not the {n} of {}",
            set.len(),
            run.config
        ));
    }
    if let (Some(t), Some(&last)) = (run.num_frames, set.last())
        && last >= t
    {
        return Err(format!(
            "frame {last} is past the video's {t} frames (items.jsonl num_frames)"
        ));
    }
    if set == run.own {
        return Err(format!("it is {}'s own frames", run.config));
    }
    if let Some((name, _)) = earlier.iter().find(|(_, g)| frame_set(g.clone()) == set) {
        return Err(format!("it is the frames of {name} already planned"));
    }
    Ok(())
}

/// The `phases - 1` shifted grids of a cell's run: the polyphase components `s = 1..S` of the
/// run's rule asked for `S·N` frames (component `s` is that grid's frames `s, S + s, 2S + s,
/// ...`), or, when the rule cannot be asked for another count and the frames are recorded,
/// each recorded frame moved `s/S` of the way to the next (the last by the step before it).
fn phase_grids(ds: &Dataset, cell: u32, run: &Run<'_>, phases: u64) -> Vec<Result<Grid, String>> {
    let phases = phases.min(MAX_PHASES);
    let n = run.own.len() as u64;
    let (raw, _) = frames_for_cell(ds, cell);
    if raw.len() as u64 != n {
        return vec![Err(format!(
            "{} repeats frames ({} sampled, {n} distinct): there is no shifted grid of its size",
            run.config,
            raw.len()
        ))];
    }
    let dense_n = phases.saturating_mul(n);
    let (dense, rule) = frames_at_budget(ds, cell, dense_n);
    let by_rule = !matches!(rule, Rule::Unknown(_))
        && matches!(
            rule.provenance(),
            Some(Provenance::Recorded | Provenance::Reproduced)
        )
        && dense.len() as u64 == dense_n
        && dense.windows(2).all(|w| w[0] < w[1]);
    let mut out = Vec::new();
    let mut earlier: Vec<(String, Vec<u64>)> = Vec::new();
    for s in 1..phases {
        let replicate = format!("phase-{s}/{phases}");
        let grid = if by_rule {
            Ok(Grid {
                indices: dense
                    .iter()
                    .skip(s as usize)
                    .step_by(phases as usize)
                    .copied()
                    .collect(),
                // Not "shifted by s/S of a step": that holds for ⌊iT/N⌋ alone (linspace's
                // dense grid keeps its last frame, and its components are not shifts).
                why: format!(
                    "component {s} of {phases} of the {dense_n}-frame grid of {} (its frames {s}, {}, {}, …): {n} frames, as {} has, drawn by its own rule at {phases} times the density",
                    rule.name(),
                    s + phases,
                    s + 2 * phases,
                    run.config
                ),
                source: format!(
                    "{} ({}, asked for {dense_n} frames)",
                    rule.provenance().map_or("known", Provenance::name),
                    rule.name()
                ),
                replicate: replicate.clone(),
            })
        } else if run.own_source.starts_with("recorded") {
            match run.num_frames {
                Some(t) => Ok(Grid {
                    indices: interpolate(&run.own, t, s, phases),
                    why: format!(
                        "each of the {n} recorded frames of {} moved {s}/{phases} of the way to the next (the rule cannot be asked for {dense_n} frames)",
                        run.config
                    ),
                    source: run.own_source.clone(),
                    replicate: replicate.clone(),
                }),
                None => Err(
                    "the item has no num_frames in items.jsonl, which shifting recorded frames needs"
                        .to_string(),
                ),
            }
        } else {
            Err(format!(
                "the rule of {} cannot be asked for {dense_n} frames ({}), and its frames are not recorded",
                run.config,
                match &rule {
                    Rule::Unknown(why) => why.clone(),
                    other => format!(
                        "{} gives {} distinct frames",
                        other.name(),
                        frame_set(dense.clone()).len()
                    ),
                }
            ))
        };
        out.push(grid.and_then(|g| {
            check(&g.indices, run, &earlier).map_err(|why| format!("{replicate}: {why}"))?;
            earlier.push((replicate.clone(), g.indices.clone()));
            Ok(g)
        }));
    }
    out
}

/// Recorded frames `own` (sorted, distinct) each moved `s/S` of the way to the next one; the
/// last moves by the step before it (by the rest of the video when there is one frame), and
/// no frame passes `t - 1`.
fn interpolate(own: &[u64], t: u64, s: u64, phases: u64) -> Vec<u64> {
    let n = own.len();
    (0..n)
        .map(|i| {
            let gap = if i + 1 < n {
                own[i + 1] - own[i]
            } else if n > 1 {
                own[n - 1] - own[n - 2]
            } else {
                t.saturating_sub(own[0])
            };
            let moved = own[i] + (u128::from(gap) * u128::from(s) / u128::from(phases)) as u64;
            moved.min(t.saturating_sub(1))
        })
        .collect()
}

/// A deployed uniform rule: its name in the replicate's, its formula, and its frames.
type SamplerRule = (&'static str, &'static str, Result<Vec<u64>, String>);

/// The grids of the other deployed uniform rules of the run's frame count: left endpoints,
/// midpoints, endpoint-inclusive rounding and one frame a second then `linspace`; a rule that
/// gives the run's own frames is the run's, and is not planned.
fn sampler_grids(run: &Run<'_>) -> Vec<Result<Grid, String>> {
    let n = run.own.len() as u64;
    let Some(t) = run.num_frames else {
        return vec![Err(
            "the item has no num_frames in items.jsonl, which the samplers need".to_string(),
        )];
    };
    let rules: [SamplerRule; 4] = [
        ("left", "floor(i*T/N)", Ok(left_endpoint(t, n))),
        ("midpoint", "floor((i+1/2)*T/N)", Ok(midpoint(t, n))),
        (
            "inclusive",
            "round(i*(T-1)/(N-1)), half to even",
            Ok(uniform_round(t, n)),
        ),
        (
            "1fps",
            "one frame a second, then linspace",
            match run.fps {
                Some(fps) => fps_then_linspace(t, fps, n),
                None => Err("the item has no fps in items.jsonl".to_string()),
            },
        ),
    ];
    let mut out = Vec::new();
    let mut earlier: Vec<(String, Vec<u64>)> = Vec::new();
    for (name, formula, grid) in rules {
        let replicate = format!("sampler-{name}");
        out.push(
            grid.and_then(|g| {
                check(&g, run, &earlier)?;
                Ok(g)
            })
            .map(|g| {
                earlier.push((replicate.clone(), g.clone()));
                Grid {
                    why: format!(
                        "the {n} frames of {} by another uniform rule of the same count: {formula} (T = {t})",
                        run.config
                    ),
                    source: format!("the rule {formula} over items.jsonl's num_frames"),
                    indices: g,
                    replicate: replicate.clone(),
                }
            })
            .map_err(|why| format!("{replicate}: {why}")),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_frames_move_part_of_the_way_to_the_next() {
        // Gaps 10, 10, 20; the last moves by the gap before it.
        let own = [0, 10, 20, 40];
        assert_eq!(interpolate(&own, 100, 1, 2), [5, 15, 30, 50]);
        assert_eq!(interpolate(&own, 100, 3, 4), [7, 17, 35, 55]);
        // Never past the last frame of the video.
        assert_eq!(interpolate(&own, 45, 1, 2), [5, 15, 30, 44]);
        // One frame: it moves by a share of the rest of the video.
        assert_eq!(interpolate(&[10], 30, 1, 2), [20]);
    }
}
