//! `frameaudit intervene plan`: the frames a re-run should give the model, per strategy
//! (docs/intervention.md).

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Context as _, Result};

use super::args::{IntervenArgs, IntervenCommand, PlanArgs, PlanStrategy, PlanTargets};
use crate::core::analysis;
use crate::core::audit::read_audit;
use crate::core::intervene::{Strategy, Targets, gather, plan};

/// Runs an `intervene` subcommand.
pub fn run(args: &IntervenArgs) -> Result<()> {
    match &args.command {
        IntervenCommand::Plan(a) => run_plan(a),
        IntervenCommand::Runs(a) => super::reruns::list(a),
    }
}

fn run_plan(args: &PlanArgs) -> Result<()> {
    let data = super::dataset_path(&args.data);
    let mut inputs = vec![data.as_path()];
    inputs.extend(args.audits.iter().map(|p| p.as_path()));
    super::check_output(&args.output, &inputs, args.force)?;
    let mut replays = Vec::new();
    for path in &args.audits {
        let r = read_audit(path)
            .with_context(|| format!("cannot read the audit {}", path.display()))?;
        replays.push(r);
    }
    let strategies: Vec<Strategy> = if args.strategies.is_empty() {
        Strategy::ALL
            .into_iter()
            .filter(|s| *s != Strategy::RestoreEvidence || !replays.is_empty())
            .collect()
    } else {
        let mut v: Vec<Strategy> = args
            .strategies
            .iter()
            .map(|s| match s {
                PlanStrategy::RestoreEvidence => Strategy::RestoreEvidence,
                PlanStrategy::Nested => Strategy::Nested,
                PlanStrategy::LowerPolicy => Strategy::LowerPolicy,
                PlanStrategy::Swap => Strategy::Swap,
                PlanStrategy::Phase => Strategy::Phase,
                PlanStrategy::Sampler => Strategy::Sampler,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    // An option none of the strategies reads is a mistake, not a setting.
    if args.phases.is_some() && !strategies.contains(&Strategy::Phase) {
        return Err(super::select::fail(
            "--phases shifts the grids of --strategy phase, which is not planned here: add --strategy phase, or leave --phases out",
        ));
    }
    let floor_only = strategies
        .iter()
        .all(|s| matches!(s, Strategy::Phase | Strategy::Sampler));
    if args.targets.is_some() && floor_only {
        return Err(super::select::fail(
            "--targets chooses the transitions to plan, but phase and sampler plan every item of every run (the noise floor): leave --targets out, or add a strategy that plans transitions",
        ));
    }
    let targets = match args.targets.unwrap_or(PlanTargets::Terminal) {
        PlanTargets::Terminal => Targets::Terminal,
        PlanTargets::Audited => Targets::Audited,
    };
    if replays.is_empty()
        && (targets == Targets::Audited || strategies.contains(&Strategy::RestoreEvidence))
    {
        return Err(super::select::fail(
            "restore-evidence and --targets audited read the annotators' records: give --audit FILE (repeatable)",
        ));
    }
    let ds = super::load(&args.data)?;
    let m = &ds.matrix;
    let mut params = args.analysis.params(false);
    params.bootstrap_b = 0;
    params.sweep = false;
    params.cascade_stages = Some(Vec::new());
    super::select::check_analysis(m, &params)?;
    let report = analysis::run(m, &params, None);
    let protocol = m
        .protocols
        .get(&params.primary)
        .with_context(|| format!("the dataset has no protocol {:?}", params.primary))?;
    let audits = gather(
        replays
            .iter()
            .map(|r| (r.header.annotator.as_str(), &r.records)),
    );
    let p = plan(
        &ds,
        &report,
        protocol,
        targets,
        &strategies,
        &audits,
        args.phases.unwrap_or(2),
    );
    super::write_atomically(&args.output, |w| p.write_to(w))?;
    let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for e in &p.entries {
        per.entry(&e.strategy).or_default().0 += 1;
    }
    for s in &p.skipped {
        per.entry(&s.strategy).or_default().1 += 1;
    }
    let mut err = std::io::stderr().lock();
    for s in &p.strategies {
        let (planned, skipped) = per.get(s.as_str()).copied().unwrap_or_default();
        writeln!(err, "{s}: {planned} planned, {skipped} skipped")?;
    }
    writeln!(err, "plan written to {}", args.output.display())?;
    Ok(())
}
