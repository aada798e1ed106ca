//! `frameaudit frames DATASET ITEM`: which frames each configuration showed the model, as
//! text, as JSON for scripts, or printed as pictures straight to the terminal (viuer), for
//! quick looks outside the audit screens and over SSH.

use std::io::{IsTerminal, Write};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::args::FramesArgs;
use crate::core::analysis;
use crate::core::cell_frames::{Rule, frames_for_cell};
use crate::core::frames::FrameStore;
use crate::core::frames::timestamp;
use crate::core::queue::{QueueKind, queue};
use crate::core::rules::Provenance;
use crate::core::sampling::{frame_set, transition};
use crate::core::text::sanitize;

#[derive(Serialize)]
struct ConfigJson {
    config: String,
    frames: u64,
    policy: String,
    /// `recorded`, `reproduced` or `assumed`; null when no frames are known.
    provenance: Option<&'static str>,
    /// The rule, with the harness and version it reproduces.
    rule: String,
    /// Why the frames are known, assumed or unknown.
    why: String,
    indices: Vec<u64>,
    /// The files the harness saved these frames to, relative to the dataset directory, one
    /// per index (null where the file is absent); null when the run saved none.
    frame_files: Option<Vec<Option<String>>>,
}

#[derive(Serialize)]
struct TransitionJson {
    from: String,
    to: String,
    kept: Vec<u64>,
    dropped: Vec<u64>,
    added: Vec<u64>,
}

#[derive(Serialize)]
struct FramesJson {
    model: String,
    benchmark: String,
    item_id: String,
    num_frames: Option<u64>,
    fps: Option<f64>,
    configs: Vec<ConfigJson>,
    transition: Option<TransitionJson>,
    /// The item's intervention runs of this model (docs/intervention.md §6), with where
    /// each comes from.
    interventions: Vec<crate::core::rerun::RecordedRerun>,
}

fn policy_name(rule: &Rule) -> String {
    match rule {
        Rule::Cell => "cell".into(),
        Rule::Run { kind, .. } => kind.clone(),
        Rule::Policy { name, .. } => (*name).into(),
        Rule::Assumed => "linspace".into(),
        Rule::Unknown(_) => "unknown".into(),
    }
}

/// `frameaudit frames`: prints the frames each configuration sampled for one item.
pub fn run(args: &FramesArgs) -> Result<()> {
    let ds = super::load(&super::args::DatasetArgs {
        dataset: Some(args.dataset.clone()),
        ..Default::default()
    })?;
    let m = &ds.matrix;
    let (bench, item_id) = match args.item.split_once('/') {
        Some((b, i)) if m.benchmarks.get(b).is_some() => (Some(b.to_string()), i.to_string()),
        _ => (None, args.item.clone()),
    };
    let candidates: Vec<u32> = (0..m.items.len() as u32)
        .filter(|&i| {
            let it = m.item(i);
            *it.id == *item_id
                && bench
                    .as_deref()
                    .is_none_or(|b| m.benchmarks.name(it.benchmark) == b)
        })
        .collect();
    let item = match candidates.as_slice() {
        [one] => *one,
        [] => {
            let mut ids: Vec<&str> = m.items.iter().map(|it| &*it.id).collect();
            ids.sort_unstable();
            ids.dedup();
            return Err(super::select::fail(&super::select::explain(
                "ITEM",
                "item",
                &[&item_id],
                &ids,
            )));
        }
        _ => bail!(
            "item {:?} is in several benchmarks: write BENCHMARK/ITEM",
            sanitize(&args.item)
        ),
    };
    let params = analysis::params::Params {
        bootstrap_b: 0,
        sweep: false,
        cascade_stages: Some(Vec::new()),
        ..Default::default()
    };
    let report = analysis::run(m, &params, None);
    let protocol = m
        .protocols
        .get(&params.primary)
        .context("no primary protocol in the dataset")?;
    let model = match &args.model {
        Some(name) => match m.models.get(name) {
            Some(id) => Some(id),
            None => {
                let models: Vec<&str> = m.models.names().collect();
                return Err(super::select::fail(&super::select::explain(
                    "--model",
                    "model",
                    &[name],
                    &models,
                )));
            }
        },
        None => None,
    };
    // The item's grid for the model: the first harmful row of the queue, else any grid.
    let rows = queue(&report, protocol, QueueKind::All);
    let row = rows
        .iter()
        .filter(|r| r.item == item && model.is_none_or(|mo| r.model == mo))
        .min_by_key(|r| (r.listed().is_empty(), r.model))
        .with_context(|| {
            format!(
                "the item {:?} has no complete trajectory for that model",
                sanitize(&args.item)
            )
        })?;
    let a = &report.analyses[row.analysis as usize];
    let mg = &a.grids.models[row.model_index as usize];
    let k = mg.grid.k();
    let names: Vec<String> = mg
        .grid
        .configs
        .iter()
        .map(|&c| m.config(c).name.to_string())
        .collect();
    let meta = ds.item_meta(item);
    let per_config: Vec<(Vec<u64>, Rule)> = (0..k)
        .map(|c| {
            let (f, rule) = frames_for_cell(&ds, mg.cells[row.row as usize * k + c]);
            (frame_set(f), rule)
        })
        .collect();
    let video = meta.and_then(|x| x.video.clone());
    // Where each configuration's run saved the frames it gave the model, if it did.
    let saved_in: Vec<Option<String>> = (0..k)
        .map(|c| {
            ds.run_entry_of_cell(mg.cells[row.row as usize * k + c])
                .and_then(|r| r.rule.frame_files.clone())
        })
        .collect();
    let saved = |c: usize, pos: usize| {
        let (template, video) = (saved_in[c].as_deref()?, video.as_deref()?);
        let n = per_config[c].0.len();
        Some(crate::core::frames::saved_frame_path(
            template, video, pos, n,
        ))
    };
    let store = FrameStore::new(&ds);
    if let Some(problem) = crate::core::frames::FRAME_CACHE_LIMIT.problem() {
        eprintln!("frameaudit: warning: {}", sanitize(&problem));
    }
    let col = |name: &str| {
        names.iter().position(|n| n == name).ok_or_else(|| {
            let grid: Vec<&str> = names.iter().map(String::as_str).collect();
            super::select::fail(&super::select::explain_in(
                "--config/--from/--to",
                "configuration",
                &[name],
                &grid,
                "this item's grid",
            ))
        })
    };
    let pair = match (&args.from, &args.to) {
        (Some(f), Some(t)) if f == t => {
            return Err(super::select::fail(&format!(
                "--from and --to both name {}: a transition is between two configurations",
                sanitize(f)
            )));
        }
        (Some(f), Some(t)) => Some((col(f)?, col(t)?)),
        // The step where the answer flips, as the audit screens open the item. (--from and
        // --to may name any two columns, so the pair shown stays a plain one.)
        (None, None) => {
            crate::core::queue::audited_transition(&report, row).map(|t| (t.lower, t.higher))
        }
        _ => bail!("--from and --to go together"),
    };
    let shown: Vec<usize> = match &args.config {
        Some(c) => vec![col(c)?],
        None => (0..k).collect(),
    };
    let tr = pair.map(|(lo, hi)| (lo, hi, transition(&per_config[lo].0, &per_config[hi].0)));
    // Frames that cannot be known are said without --explain, with the reason; when no
    // visual configuration shown has any, the command fails (after its output).
    let unknown = |c: usize| match &per_config[c].1 {
        Rule::Unknown(why) if mg.grid.frames(m, c) > 0 => Some(why.as_str()),
        _ => None,
    };
    let visual: Vec<usize> = shown
        .iter()
        .copied()
        .filter(|&c| mg.grid.frames(m, c) > 0)
        .collect();
    let mut reasons: Vec<&str> = visual.iter().filter_map(|&c| unknown(c)).collect();
    reasons.dedup();
    let nothing = !visual.is_empty() && visual.iter().all(|&c| unknown(c).is_some());
    let nothing_known = || -> Result<()> {
        if !nothing {
            return Ok(());
        }
        eprintln!(
            "frameaudit: frames: no frames of {:?} can be shown: {}",
            sanitize(&args.item),
            sanitize(&reasons.join("; "))
        );
        eprintln!(
            "  frames are computed from the item's video facts (num_frames, fps) in the dataset's items.jsonl; `frameaudit import ... --videos DIR` writes them, and a cell's own frame_idx records them"
        );
        Err(super::Failure {
            code: super::EXIT_PROBLEMS,
        }
        .into())
    };

    // The item's intervention runs of the model shown, from the dataset's files: the
    // cells record where each comes from, which the matrix does not keep.
    let model_name = m.models.name(mg.model);
    let reruns: Vec<crate::core::rerun::RecordedRerun> = ds
        .root
        .as_deref()
        .map(|root| {
            crate::core::rerun::recorded_reruns(
                root,
                m.benchmarks.name(m.item(item).benchmark),
                &m.item(item).id,
            )
        })
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.model == model_name)
        .collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let j = FramesJson {
            model: m.models.name(mg.model).to_string(),
            benchmark: m.benchmarks.name(m.item(item).benchmark).to_string(),
            item_id: m.item(item).id.to_string(),
            num_frames: meta.and_then(|x| x.num_frames),
            fps: meta.and_then(|x| x.fps),
            configs: shown
                .iter()
                .map(|&c| ConfigJson {
                    config: names[c].clone(),
                    frames: mg.grid.frames(m, c),
                    policy: if mg.grid.frames(m, c) == 0 {
                        "none".into()
                    } else {
                        policy_name(&per_config[c].1)
                    },
                    provenance: per_config[c].1.provenance().map(|p| p.name()),
                    rule: per_config[c].1.name(),
                    why: per_config[c].1.explain(),
                    indices: per_config[c].0.clone(),
                    frame_files: saved_in[c].is_some().then(|| {
                        (0..per_config[c].0.len())
                            .map(|pos| {
                                saved(c, pos).filter(|f| {
                                    matches!(
                                        store.locate_saved(f),
                                        Some(crate::core::frames::Located::Image(_))
                                    )
                                })
                            })
                            .collect()
                    }),
                })
                .collect(),
            transition: tr.as_ref().map(|(lo, hi, t)| TransitionJson {
                from: names[*lo].clone(),
                to: names[*hi].clone(),
                kept: t.kept.clone(),
                dropped: t.dropped.clone(),
                added: t.added.clone(),
            }),
            interventions: reruns,
        };
        crate::core::text::json_to_writer(&mut out, &j)?;
        writeln!(out)?;
        out.flush()?;
        return nothing_known();
    }

    let fps = meta.and_then(|x| x.fps);
    writeln!(
        out,
        "{} · {} · {}{}",
        sanitize(m.models.name(mg.model)),
        sanitize(m.benchmarks.name(m.item(item).benchmark)),
        sanitize(&m.item(item).id),
        meta.and_then(|x| x.video.as_deref())
            .map_or(String::new(), |v| format!(" · video {}", sanitize(v)))
    )?;
    for &c in &shown {
        let (idx, rule) = &per_config[c];
        // Where the indices are not known, the count is the configuration's budget, not the
        // none listed.
        let count = match unknown(c) {
            Some(_) => mg.grid.frames(m, c),
            None => idx.len() as u64,
        };
        write!(out, "{:>10}  {count:>3} frames", sanitize(&names[c]))?;
        // How sure each set is, always: an assumed set must never pass for the frames the
        // model saw.
        match rule.provenance() {
            Some(Provenance::Assumed) => write!(out, "  [ASSUMED]")?,
            Some(p) => write!(out, "  [{}]", p.name())?,
            None => {}
        }
        if args.explain {
            write!(out, "  ({})", sanitize(&rule.explain()))?;
        } else if let Some(why) = unknown(c) {
            write!(out, "  (which ones is not known: {})", sanitize(why))?;
        } else if mg.grid.frames(m, c) == 0 {
            write!(out, "  (text only)")?;
        }
        let list: Vec<String> = idx
            .iter()
            .map(|&i| format!("{i}@{}", timestamp(i, fps)))
            .collect();
        if list.is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, ": {}", list.join(" "))?;
        }
    }
    if let Some((lo, hi, _)) = &tr
        && let Some(why) = unknown(*lo).or(unknown(*hi))
    {
        writeln!(
            out,
            "transition {} -> {}: frames not known ({})",
            sanitize(&names[*lo]),
            sanitize(&names[*hi]),
            sanitize(why)
        )?;
    } else if let Some((lo, hi, t)) = &tr {
        // The indices after a count, none when the count is 0.
        let listed = |xs: &[u64]| match xs.is_empty() {
            true => String::new(),
            false => {
                let xs: Vec<String> = xs.iter().map(u64::to_string).collect();
                format!(" ({})", xs.join(" "))
            }
        };
        writeln!(
            out,
            "transition {} -> {}: {} of {} frames not kept{}, {} added{}",
            sanitize(&names[*lo]),
            sanitize(&names[*hi]),
            t.dropped.len(),
            t.dropped.len() + t.kept.len(),
            listed(&t.dropped),
            t.added.len(),
            listed(&t.added),
        )?;
    }
    for r in &reruns {
        rerun_lines(&mut out, r, fps)?;
    }
    if nothing {
        out.flush()?;
        return nothing_known();
    }
    if args.no_images || !std::io::stdout().is_terminal() {
        return Ok(());
    }
    // Pictures: the transition's dropped and added frames, or the one configuration asked.
    let Some(video) = video.clone() else {
        writeln!(out, "(no video for this item: nothing to show)")?;
        return Ok(());
    };
    // (label, frame index, position in its configuration's sample, the harness's file)
    type Shown = (String, u64, Option<(usize, usize)>, Option<String>);
    let mut show: Vec<Shown> = Vec::new();
    match (&args.config, &tr) {
        (None, Some((lo, hi, t))) => {
            for &i in &t.dropped {
                let pos = per_config[*lo].0.binary_search(&i).unwrap_or(0);
                show.push((
                    format!(
                        "dropped by {}: frame {i} · {}",
                        names[*hi],
                        timestamp(i, fps)
                    ),
                    i,
                    Some((pos, per_config[*lo].0.len())),
                    saved(*lo, pos),
                ));
            }
            for &i in &t.added {
                let pos = per_config[*hi].0.binary_search(&i).unwrap_or(0);
                show.push((
                    format!("added by {}: frame {i} · {}", names[*hi], timestamp(i, fps)),
                    i,
                    Some((pos, per_config[*hi].0.len())),
                    saved(*hi, pos),
                ));
            }
        }
        _ => {
            for &c in &shown {
                for (pos, &i) in per_config[c].0.iter().enumerate() {
                    show.push((
                        format!("{}: frame {i} · {}", names[c], timestamp(i, fps)),
                        i,
                        Some((pos, per_config[c].0.len())),
                        saved(c, pos),
                    ));
                }
            }
        }
    }
    let width = args.width.unwrap_or(40);
    // Kitty's protocol only where the environment says so, as the audit screens decide:
    // viuer would otherwise ask the terminal whether it speaks it and wait for an answer
    // that a terminal without it (a pty under `script`, a CI log) may never give. viuer
    // tells iTerm's protocol from the environment alone, and sixel is not built in.
    let use_kitty = crate::term::images_from_env() == crate::term::ImageMode::Kitty;
    // Frames of a raw video decoded in one batch first; a failure shows at its frame.
    let located: Vec<_> = show
        .iter()
        .take(args.max)
        .map(|(_, index, pos, file)| {
            file.as_deref()
                .and_then(|f| store.locate_saved(f))
                .unwrap_or_else(|| store.locate(&video, *index, *pos))
        })
        .collect();
    let wanted: Vec<u64> = show
        .iter()
        .zip(&located)
        .filter(|(_, l)| matches!(l, crate::core::frames::Located::Video { .. }))
        .map(|(s, _)| s.1)
        .collect();
    if !wanted.is_empty() {
        let _ = store.decode_frames(&video, &wanted);
    }
    for ((label, index, pos, file), located) in show.into_iter().take(args.max).zip(located) {
        writeln!(out, "{}", sanitize(&label))?;
        out.flush()?;
        // A raw-video frame is located again: the batch above has cached it.
        let located = match located {
            crate::core::frames::Located::Video { .. } => file
                .as_deref()
                .and_then(|f| store.locate_saved(f))
                .unwrap_or_else(|| store.locate(&video, index, pos)),
            other => other,
        };
        match crate::core::frames::load_image(&located, width * 4, store.ffmpeg()) {
            Ok(img) => {
                let conf = viuer::Config {
                    width: Some(width),
                    absolute_offset: false,
                    use_kitty,
                    ..Default::default()
                };
                if let Err(e) = viuer::print(&image::DynamicImage::ImageRgb8(img), &conf) {
                    writeln!(out, "  (cannot print: {e})")?;
                }
            }
            Err(why) => writeln!(out, "  ({})", sanitize(&why))?,
        }
    }
    Ok(())
}

/// One intervention run of the item: its frames, then where it comes from (plan, strategy,
/// pass, transition, recorder log, answers, file).
fn rerun_lines(
    out: &mut impl Write,
    r: &crate::core::rerun::RecordedRerun,
    fps: Option<f64>,
) -> std::io::Result<()> {
    let list: Vec<String> = r
        .frame_idx
        .iter()
        .map(|&i| format!("{i}@{}", timestamp(i, fps)))
        .collect();
    writeln!(
        out,
        "↻ {} {}  {:>3} frames  [recorded]: {}",
        sanitize(&r.protocol),
        sanitize(&r.config),
        frame_set(r.frame_idx.clone()).len(),
        list.join(" ")
    )?;
    let plan = r.plan.as_deref().unwrap_or("not recorded");
    match &r.rerun {
        Some(p) => {
            let log = if p.log.is_empty() {
                "not recorded".to_string()
            } else {
                format!("{} (run at line {})", p.log, p.log_line)
            };
            // Whose audit records the entry was planned from, when any were.
            let by = if p.annotators.is_empty() {
                String::new()
            } else {
                format!(", audited by {}", p.annotators.join(", "))
            };
            writeln!(
                out,
                "    from plan {} ({}), targets {}, strategy {} pass {}, transition {} -> {}{}; recorder log {}; answers {}; in {}",
                sanitize(p.plan_file.as_deref().unwrap_or("(file not recorded)")),
                sanitize(plan),
                sanitize(&p.targets),
                sanitize(&p.strategy),
                p.pass,
                sanitize(&p.lower),
                sanitize(&p.config),
                sanitize(&by),
                sanitize(&log),
                sanitize(p.answers.as_deref().unwrap_or("not recorded")),
                sanitize(&r.file)
            )
        }
        None => writeln!(
            out,
            "    from plan {}; imported before cells recorded where they come from; in {}",
            sanitize(plan),
            sanitize(&r.file)
        ),
    }
}
