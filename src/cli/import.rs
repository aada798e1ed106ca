//! `frameaudit import`: converts other formats into native cells JSONL.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use std::io::IsTerminal;

use super::args::{
    ConvertArgs, DatasetArgs, ImportCommon, InputFormat, LmmsArgs, VlmArgs, WideArgs,
};
use crate::core::diag::Diagnostics;
use crate::core::import::{
    Import, ImportError, frames_log, lmms_eval, videos, vlmevalkit, wide_csv,
};
use crate::core::load::CellSink;
use crate::core::load::cells::write_cell;
use crate::core::load::per_item_csv::read_per_item_csv;
use crate::core::matrix::CellInput;
use crate::core::text::{count, sanitize};

/// Writes cells as JSON lines: a part of the input collects its lines and the root writes
/// them out when the part is joined, so the output keeps the input's order.
struct CellWriter<'w> {
    out: Vec<u8>,
    dest: Option<&'w mut (dyn Write + Send)>,
    error: Option<std::io::Error>,
    diags: Diagnostics,
    written: u64,
    /// `--replicate NAME --nuisance KIND`: given to every cell without a replicate.
    replicate: Option<(&'w str, &'w str)>,
}

impl CellWriter<'_> {
    fn flush_part(&mut self) {
        if let Some(dest) = self.dest.as_mut()
            && self.error.is_none()
            && let Err(e) = dest.write_all(&self.out)
        {
            self.error = Some(e);
        }
        if self.dest.is_some() {
            self.out.clear();
        }
    }
}

impl CellSink for CellWriter<'_> {
    fn fork(&self) -> Self {
        CellWriter {
            out: Vec::new(),
            dest: None,
            error: None,
            diags: Diagnostics::default(),
            written: 0,
            replicate: self.replicate,
        }
    }
    fn join(&mut self, part: &mut Self) {
        self.out.extend_from_slice(&part.out);
        part.out.clear();
        self.written += std::mem::take(&mut part.written);
        self.flush_part();
    }
    fn len(&self) -> usize {
        self.written as usize
    }
    fn count_record(&mut self) {}
    fn diags(&mut self) -> &mut Diagnostics {
        &mut self.diags
    }
    fn push(&mut self, cell: &CellInput<'_>, _line: u64) {
        // Writing into a Vec cannot fail.
        let _ = match self.replicate {
            Some((name, nuisance)) if cell.replicate.is_none() => {
                let mut c = cell.clone();
                c.replicate = Some(name);
                c.nuisance = Some(nuisance);
                write_cell(&mut self.out, &c)
            }
            _ => write_cell(&mut self.out, cell),
        };
        self.written += 1;
        if self.out.len() > 1 << 20 {
            self.flush_part();
        }
    }
}

/// `import per-item-csv IN -o OUT`: validates the whole CSV (every rule of docs/measures.md §1.7),
/// then writes its cells, in input order, to OUT atomically (with `--replicate`, the rows
/// without a replicate as that one).
pub fn per_item_csv(args: &ConvertArgs) -> Result<()> {
    let described = !args.docs.is_empty();
    if described {
        let mut inputs = crate::core::output::Inputs::new();
        inputs
            .extend([&args.input])
            .extend(&args.docs)
            .extend(args.videos.as_ref());
        inputs
            .check_dataset_dir(&args.output, args.force)
            .map_err(anyhow::Error::msg)?;
    } else {
        super::check_output(&args.output, &[&args.input], args.force)?;
    }
    // Validate first: a rejected input writes nothing.
    let ds = super::load(&DatasetArgs {
        dataset: Some(args.input.clone()),
        input_format: Some(InputFormat::PerItemCsv),
        quiet: false,
    })?;
    let file = crate::core::fsread::open(&args.input, crate::core::fsread::CELLS)
        .with_context(|| format!("cannot read {}", args.input.display()))?
        .into_reader();
    let mut written = 0;
    let cells = if described {
        std::fs::create_dir_all(&args.output)
            .with_context(|| format!("cannot create {}", args.output.display()))?;
        args.output.join("cells.jsonl")
    } else {
        args.output.clone()
    };
    let phase = super::progress::Phase::start(&format!(
        "writing cells to {}",
        super::progress::file_name(&cells)
    ));
    super::write_atomically(&cells, |w| {
        let mut sink = CellWriter {
            out: Vec::new(),
            dest: Some(w),
            error: None,
            diags: Diagnostics::default(),
            written: 0,
            replicate: args.replicate.as_deref().zip(args.nuisance.as_deref()),
        };
        let name: Arc<Path> = Arc::from(args.input.as_path());
        read_per_item_csv(file, None, &mut sink, &name)?;
        sink.flush_part();
        written = sink.written;
        sink.error.map_or(Ok(()), Err)
    })?;
    drop(phase);
    eprintln!(
        "frameaudit: wrote {written} cells to {}",
        sanitize(&cells.display().to_string())
    );
    if described {
        describe_items(args, &ds)?;
    }
    Ok(())
}

/// `import per-item-csv --docs`: the items of the converted table described from the
/// benchmarks' annotation files (and their videos probed, with `--videos`), written as the
/// dataset's `items.jsonl` and `dataset.json` beside its cells.
fn describe_items(args: &ConvertArgs, ds: &crate::core::dataset::Dataset) -> Result<()> {
    use crate::core::import::docs;
    let m = &ds.matrix;
    let keys: Vec<(String, String)> = m
        .items
        .iter()
        .map(|it| {
            (
                m.benchmarks.name(it.benchmark).to_string(),
                it.id.to_string(),
            )
        })
        .collect();
    let sets = docs::find(&args.docs);
    if sets.is_empty() {
        anyhow::bail!(
            "--docs: no annotation file under {} (a JSON array or JSON Lines of questions that each name a video: Video-MME, MVBench, MLVU)",
            shown_paths(&args.docs)
        );
    }
    let d = docs::describe(&sets, &keys);
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "frameaudit: items: {} of {} described from {} annotation files",
        d.items.len(),
        keys.len(),
        sets.len()
    )?;
    if let Some((b, i)) = d.unmatched.first() {
        writeln!(
            err,
            "  {} items named by no annotation (first: benchmark {}, item {}): they are audited without question or frames",
            d.unmatched.len(),
            sanitize(&format!("{b:?}")),
            sanitize(&format!("{i:?}"))
        )?;
    }
    for ((b, i), files) in &d.ambiguous {
        writeln!(
            err,
            "  warning: item {} of benchmark {} is described differently in {}: left undescribed",
            sanitize(&format!("{i:?}")),
            sanitize(&format!("{b:?}")),
            sanitize(&shown_paths(files))
        )?;
    }
    let mut imp = Import::default();
    for ((b, i), item) in d.items {
        imp.add_item(&b, &i, item);
    }
    if let Some(dir) = &args.videos {
        let index = videos::VideoIndex::build(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
        let v = videos::attach(&mut imp, &index, videos::Layout::Any, &probe_video);
        writeln!(
            err,
            "  videos: {} probed for {} items that name one ({} not found)",
            v.videos, v.items, v.missing
        )?;
        for w in &imp.warnings {
            writeln!(err, "  warning: {}", sanitize(w))?;
        }
    }
    imp.write_items(&args.output, &dataset_name(&args.output))
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    writeln!(
        err,
        "frameaudit: wrote {}",
        sanitize(&args.output.display().to_string())
    )?;
    Ok(())
}

/// The name an imported dataset gets: its directory's.
fn dataset_name(dir: &Path) -> String {
    dir.file_name()
        .map_or("imported".to_string(), |n| n.to_string_lossy().into_owned())
}

/// Paths as a message lists them.
fn shown_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A video's frame count, rate and length as the importers record them.
fn probe_video(p: &Path) -> Result<videos::Probed, String> {
    crate::core::frames::probe_video(p).map(|v| videos::Probed {
        num_frames: v.num_frames,
        fps: v.fps,
        duration: v.duration,
        decoders: crate::core::rules::decoder::decoders_disagree(&v.decoders).then_some(v.decoders),
        discarded_packets: v.discarded_packets,
    })
}

/// Runs a harness importer with a progress bar (on a terminal only), prints the summary, and
/// writes the dataset unless it is a dry run.
fn harness(
    common: &ImportCommon,
    extra_inputs: &[PathBuf],
    what: &str,
    layout: videos::Layout,
    read: impl FnOnce(&mut Import, &[frames_log::LoggedRun], &dyn Fn(u64)) -> Result<(), ImportError>,
) -> Result<()> {
    if !common.dry_run && common.plan.is_none() && common.replicate.is_none() {
        let mut inputs = crate::core::output::Inputs::new();
        inputs
            .extend(&common.paths)
            .extend(&common.frames_log)
            .extend(extra_inputs);
        inputs.extend(common.videos.as_ref());
        inputs
            .check_dataset_dir(&common.output, common.force)
            .map_err(anyhow::Error::msg)?;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_message(format!("reading {what}"));
    let mut imp = Import::default();
    // Recorder logs first: a VLMEvalKit run's command line tells the order of its datasets.
    let logs = frames_log::find_logs(&common.frames_log, &common.paths);
    let mut logged = Vec::new();
    for log in &logs {
        let mut skips = Vec::new();
        logged.extend(frames_log::read(log, &mut skips).map_err(|e| anyhow::anyhow!("{e}"))?);
        for (line, reason) in skips {
            imp.skip(log, Some(line), reason);
        }
    }
    let read_result = read(&mut imp, &logged, &|n| bar.inc(n));
    read_result.map_err(|e| match e {
        // Under --plan the plan names the configuration re-run: another label is no way out.
        ImportError::SameRun {
            model,
            config,
            a,
            b,
        } if common.plan.is_some() => same_rerun(&model, &config, &a, &b),
        e => anyhow::anyhow!("{e}"),
    })?;
    let renames: std::collections::BTreeMap<String, String> =
        common.model_name.iter().cloned().collect();
    imp.rename_models(&renames)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut notes: Vec<String> = Vec::new();
    if let Some(dir) = &common.videos {
        bar.set_message("probing videos");
        let index = videos::VideoIndex::build(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
        let v = videos::attach(&mut imp, &index, layout, &probe_video);
        notes.push(format!(
            "videos: {} probed for {} items that name one ({} not found)",
            v.videos, v.items, v.missing
        ));
    }
    if let Some(plan) = &common.plan {
        bar.finish_and_clear();
        return rerun(common, plan, &imp, &logged, extra_inputs);
    }
    if !logs.is_empty() {
        let signatures = imp.signatures.clone();
        let a = frames_log::attach(&mut imp, &logged, &|command| {
            signatures
                .iter()
                .filter(|s| s.matches(command))
                .map(|s| (s.model.clone(), s.config.clone()))
                .collect()
        });
        notes.push(format!(
            "frames logs: {} files, {} of {} logged runs matched, {} cells given their recorded frames",
            logs.len(),
            a.runs,
            logged.len(),
            a.cells
        ));
    }
    imp.check_recorded();
    imp.warn_contradictions();
    imp.warn_conflicting_duplicates();
    bar.finish_and_clear();
    let s = imp.summary();
    let mut err = std::io::stderr().lock();
    let replicates = if s.replicates > 0 {
        format!(
            ", {} of {}",
            count(s.replicates, "replicate cell"),
            count(imp.reruns.len(), "re-run")
        )
    } else {
        String::new()
    };
    writeln!(
        err,
        "frameaudit: {what}: {}, {}, {}, {}, {}{replicates}; {} skipped, {}",
        count(s.runs, "run"),
        count(s.models, "model"),
        count(s.configs, "configuration"),
        count(s.items, "item"),
        count(s.cells, "cell"),
        count(s.skipped, "record"),
        count(s.duplicates, "duplicate")
    )?;
    for r in &imp.reruns {
        writeln!(
            err,
            "  re-run: {} holds model {} under configuration {} again, asked the same as {}: imported as replicate {} (nuisance rerun) for the noise floor; {}",
            sanitize(&r.file.display().to_string()),
            sanitize(&format!("{:?}", r.model)),
            sanitize(&format!("{:?}", r.config)),
            sanitize(&r.canonical.display().to_string()),
            sanitize(&r.replicate),
            r.otherwise
        )?;
    }
    write_skips(&mut err, &imp)?;
    for n in &notes {
        writeln!(err, "  {}", sanitize(n))?;
    }
    for w in &imp.warnings {
        writeln!(err, "  warning: {}", sanitize(w))?;
    }
    if s.cells == 0 {
        anyhow::bail!("found no cells to import in {}", shown_paths(&common.paths));
    }
    if let (Some(name), Some(nuisance)) = (&common.replicate, &common.nuisance) {
        drop(err);
        let wanted = crate::core::replicate::Wanted { name, nuisance };
        return replicate(common, wanted, &imp, extra_inputs);
    }
    if common.dry_run {
        writeln!(err, "frameaudit: dry run: nothing written")?;
        return Ok(());
    }
    // A dataset replaced under --force keeps its replicates: said, as they count for the
    // new cells they match.
    let kept = replicate_files(&common.output);
    let kept_links = stale_links(&common.output, &imp);
    imp.write(&common.output, &dataset_name(&common.output))
        .with_context(|| format!("cannot write {}", common.output.display()))?;
    writeln!(
        err,
        "frameaudit: wrote {}",
        sanitize(&common.output.display().to_string())
    )?;
    if !kept.is_empty() {
        writeln!(
            err,
            "  note: the replicates of the dataset replaced stay ({}): they count as replicates of the new cells they match, and `frameaudit validate {}` counts those that match none; delete them if they are of other runs",
            sanitize(&kept.join(", ")),
            sanitize(&common.output.display().to_string())
        )?;
    }
    for (name, target) in kept_links {
        let what = if name == "videos" {
            "the frames of the items' videos are decoded from what it leads to"
        } else {
            "the frames a run's `frame_files` names are read through it"
        };
        writeln!(
            err,
            "  note: the link {name} → {}, which an earlier import made, stays in the dataset replaced, and {what}: remove it if it leads to other data",
            sanitize(&target.display().to_string()),
        )?;
    }
    Ok(())
}

/// The links an earlier import made in a dataset (`videos`, `images`) that this import
/// does not make again, and where they lead: they stay, and frames are found through them.
fn stale_links(dataset: &Path, imp: &Import) -> Vec<(&'static str, PathBuf)> {
    ["videos", "images"]
        .into_iter()
        .filter(|name| !imp.links.contains_key(*name))
        .filter_map(|name| {
            let at = dataset.join(name);
            let link = std::fs::symlink_metadata(&at)
                .ok()?
                .file_type()
                .is_symlink();
            link.then(|| std::fs::read_link(&at).ok().map(|t| (name, t)))
                .flatten()
        })
        .collect()
}

/// The replicate files of a dataset, as a load reads them, named within it.
fn replicate_files(dataset: &Path) -> Vec<String> {
    use crate::core::dataset::{REPLICATES_DIR, replicate_cell_files};
    replicate_cell_files(dataset)
        .iter()
        .filter_map(|f| f.file_name())
        .map(|n| format!("{REPLICATES_DIR}/{}", n.to_string_lossy()))
        .collect()
}

/// `import ... --plan PLAN -o DATASET`: the re-run's planned answers, matched to the plan
/// (core/rerun.rs), written as intervention cells into the dataset the plan was made of.
/// What the importer left out of the answers, by reason: a line each with the count and
/// where the first one is.
fn write_skips(err: &mut impl Write, imp: &Import) -> std::io::Result<()> {
    for (reason, n, at) in imp.skip_reasons() {
        let first = if n == 1 { "at" } else { "first at" };
        writeln!(
            err,
            "  skipped {n}: {} ({first} {})",
            sanitize(&reason),
            sanitize(&at)
        )?;
    }
    Ok(())
}

fn rerun(
    common: &ImportCommon,
    plan_path: &Path,
    imp: &Import,
    logged: &[frames_log::LoggedRun],
    extra_inputs: &[PathBuf],
) -> Result<()> {
    use crate::core::rerun;
    if let Some(r) = imp.reruns.first() {
        return Err(same_rerun(&r.model, &r.config, &r.canonical, &r.file));
    }
    let plan = crate::core::plan::Plan::read(plan_path)?;
    // The plan's bytes, as read again, name it on each cell: a re-import from another plan
    // finds the cells of this one.
    let hash = crate::core::fsread::read(plan_path, crate::core::fsread::IMPORT)
        .map(|b| rerun::plan_hash(&b))
        .with_context(|| format!("cannot read {}", plan_path.display()))?;
    let ds = crate::core::dataset::load_dataset(&common.output, None).with_context(|| {
        format!(
            "--plan adds the re-run to the dataset the plan was made of: -o {} is not one",
            common.output.display()
        )
    })?;
    if ds.name != plan.dataset {
        anyhow::bail!(
            "the plan {} was made of dataset {:?}, but -o {} is dataset {:?}",
            plan_path.display(),
            sanitize(&plan.dataset),
            common.output.display(),
            sanitize(&ds.name)
        );
    }
    let plan_file = plan_path.display().to_string();
    let applied = rerun::Applied {
        strategy: common.strategy.as_deref(),
        pass_no: common.pass_no,
        protocol: common.protocol.as_deref(),
        plan_hash: Some(&hash),
        plan_file: Some(&plan_file),
    };
    let matched = rerun::match_rerun(&plan, &applied, imp, logged).map_err(anyhow::Error::msg)?;
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "frameaudit: re-run under plan {} ({}, pass {}): {} entries planned; kept as protocol {}: {}; planned units without a usable answer: {}; answers not planned (left out): {}",
        sanitize(&plan_path.display().to_string()),
        sanitize(&matched.strategy),
        common.pass_no,
        matched.planned,
        sanitize(&matched.protocol),
        matched.cells.len(),
        matched.not_matched.len(),
        matched.unplanned
    )?;
    // What the importer left out of the answers (a second file of one configuration, say)
    // decides which answers were matched: said here as without --plan.
    write_skips(&mut err, imp)?;
    for n in matched.not_matched.iter().take(20) {
        writeln!(
            err,
            "  not kept: {}: {}",
            sanitize(&n.unit),
            sanitize(&n.why)
        )?;
    }
    if matched.not_matched.len() > 20 {
        writeln!(err, "  ... and {} more", matched.not_matched.len() - 20)?;
    }
    if !matched.other_runs.is_empty() {
        let runs: Vec<String> = matched
            .other_runs
            .iter()
            .map(|(run, n)| format!("{} ({n})", sanitize(run)))
            .collect();
        writeln!(
            err,
            "  planned for runs these logs do not show re-run, left for their own re-run: {}",
            runs.join(", ")
        )?;
    }
    if matched.cells.is_empty() {
        anyhow::bail!("no answer of the re-run matches the plan: nothing written (see above why)");
    }
    if common.dry_run {
        writeln!(err, "frameaudit: dry run: nothing written")?;
        return Ok(());
    }
    // An intervention's cells are one file; a noise floor's, one file per replicate.
    let mut files: std::collections::BTreeMap<PathBuf, Vec<&rerun::InterventionCell>> =
        std::collections::BTreeMap::new();
    for c in &matched.cells {
        let out = match &c.replicate {
            Some(r) => crate::core::replicate::replicates_file(&common.output, r, common.pass_no),
            None => rerun::cells_file(
                &common.output,
                &matched.protocol,
                &c.rerun_config,
                common.pass_no,
            ),
        };
        files.entry(out).or_default().push(c);
    }
    let mut inputs: Vec<&Path> = vec![plan_path];
    inputs.extend(common.paths.iter().map(PathBuf::as_path));
    inputs.extend(common.frames_log.iter().map(PathBuf::as_path));
    inputs.extend(extra_inputs.iter().map(PathBuf::as_path));
    // The strategy's files made from another plan (a re-planned pass, a configuration the
    // new plan no longer re-runs) would count beside the new ones: replaced with --force.
    let noise = matched.cells.iter().any(|c| c.replicate.is_some());
    let keep: Vec<&Path> = files.keys().map(PathBuf::as_path).collect();
    let stale = if noise {
        Vec::new()
    } else {
        rerun::stale_files(&common.output, &matched.protocol, &hash, &keep)
    };
    if !stale.is_empty() && !common.force {
        let list: Vec<String> = stale
            .iter()
            .map(|s| {
                format!(
                    "{} (plan {})",
                    s.file.display(),
                    s.plan.as_deref().unwrap_or("not recorded")
                )
            })
            .collect();
        anyhow::bail!(
            "{} cells of other plans than {} ({hash}) are in {}; --force replaces them with this re-run's",
            sanitize(&matched.protocol),
            sanitize(&plan_path.display().to_string()),
            sanitize(&list.join(", "))
        );
    }
    for out in files.keys() {
        super::check_output(out, &inputs, common.force)?;
    }
    // Inside the dataset: no link is followed, to the folder or the file.
    let shown = |p: &Path| sanitize(&p.display().to_string()).into_owned();
    for (out, cells) in &files {
        if let Some(dir) = out.parent() {
            crate::core::fswrite::create_dir_below(&common.output, dir)
                .with_context(|| format!("cannot create {}", shown(dir)))?;
        }
        crate::core::fswrite::write_output(out, crate::core::fswrite::Links::Refuse, |w| {
            for c in cells {
                crate::core::text::json_to_writer(&mut *w, c)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })
        .with_context(|| format!("cannot write {}", shown(out)))?;
        let what = match cells.first().and_then(|c| c.replicate.as_deref()) {
            Some(r) => format!("cells of replicate {}", sanitize(r)),
            None => "intervention cells".to_string(),
        };
        writeln!(
            err,
            "frameaudit: wrote {} {what} to {}",
            cells.len(),
            shown(out)
        )?;
    }
    for s in &stale {
        std::fs::remove_file(&s.file)
            .with_context(|| format!("cannot remove {}", shown(&s.file)))?;
        writeln!(
            err,
            "frameaudit: removed {} (cells of plan {})",
            shown(&s.file),
            sanitize(s.plan.as_deref().unwrap_or("not recorded"))
        )?;
    }
    // The runs go into dataset.json as other imports' runs do; a noise floor's replicates
    // are of runs it has already.
    if !noise {
        let cells: Vec<&rerun::InterventionCell> = files.values().flatten().copied().collect();
        let runs = rerun::record_runs(&common.output, &ds.name, &matched.protocol, &cells)
            .context(
                "the intervention cells are written, but dataset.json does not list their runs",
            )?;
        let list = |v: &[String]| sanitize(&v.join(", ")).into_owned();
        if !runs.written.is_empty() {
            writeln!(
                err,
                "frameaudit: dataset.json: runs of {}: {}",
                sanitize(&matched.protocol),
                list(&runs.written)
            )?;
        }
        if !runs.removed.is_empty() {
            writeln!(
                err,
                "frameaudit: dataset.json: runs removed with their cells: {}",
                list(&runs.removed)
            )?;
        }
    }
    Ok(())
}

/// Two answers files of one (model, configuration) under `--plan`: two re-runs (passes,
/// strategies) of one configuration, which one import cannot tell apart.
fn same_rerun(model: &str, config: &str, a: &Path, b: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{} and {} both hold model {:?} under configuration {:?}: two re-runs of one configuration (other passes or strategies) in one import under --plan; import each re-run's output on its own, with its recorder log (--frames-log), --strategy and --pass",
        sanitize(&a.display().to_string()),
        sanitize(&b.display().to_string()),
        sanitize(model),
        sanitize(config)
    )
}

/// `import ... --replicate NAME --nuisance KIND -o DATASET`: the run's answers, matched to
/// the dataset's canonical cells (core/replicate.rs), written as replicate NAME into
/// `DATASET/replicates/NAME.jsonl`; nothing else of the dataset changes.
fn replicate(
    common: &ImportCommon,
    wanted: crate::core::replicate::Wanted<'_>,
    imp: &Import,
    extra_inputs: &[PathBuf],
) -> Result<()> {
    use crate::core::replicate;
    if let Some(r) = imp.reruns.first() {
        anyhow::bail!(
            "{} and {} both hold model {:?} under configuration {:?}: with --replicate, import one run at a time",
            sanitize(&r.canonical.display().to_string()),
            sanitize(&r.file.display().to_string()),
            r.model,
            r.config
        );
    }
    let shown = |p: &Path| sanitize(&p.display().to_string()).into_owned();
    let ds = crate::core::dataset::load_dataset(&common.output, None).with_context(|| {
        format!(
            "--replicate adds the run to an existing dataset: -o {} is not one",
            shown(&common.output)
        )
    })?;
    let out = replicate::replicates_file(&common.output, wanted.name, 0);
    if let Some(other) = replicate::other_name_in(&ds, &out, wanted.name) {
        anyhow::bail!(
            "replicate {:?} would be written to {}, which holds replicate {:?}: the two names differ only in characters a file name cannot hold, and writing one would replace the other (even with --force); give this run another --replicate name",
            sanitize(wanted.name),
            shown(&out),
            sanitize(&other)
        );
    }
    // A name given another nuisance is said as such, before its file is found to exist
    // (which --force would replace, taking that nuisance with it).
    if !common.force
        && let Err(e) = replicate::one_nuisance(&ds, wanted, None)
    {
        // Where the name's other nuisance is only in the file written, --force would do.
        if replicate::one_nuisance(&ds, wanted, Some(&out)).is_ok() {
            anyhow::bail!(
                "{e}, or --force to replace {} and its replicates",
                shown(&out)
            );
        }
        anyhow::bail!(e);
    }
    if !common.dry_run {
        let mut inputs: Vec<&Path> = common.paths.iter().map(PathBuf::as_path).collect();
        inputs.extend(common.frames_log.iter().map(PathBuf::as_path));
        inputs.extend(extra_inputs.iter().map(PathBuf::as_path));
        inputs.extend(common.videos.as_deref());
        super::check_output(&out, &inputs, common.force)?;
    }
    // The file's replicates go with it when --force replaces it.
    let replaced = common.force.then_some(out.as_path());
    let matched =
        replicate::match_replicate(&ds, imp, wanted, replaced).map_err(anyhow::Error::msg)?;
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "frameaudit: replicate {} (nuisance {}) of dataset {}: {} cells kept, each a replicate of the dataset's cell of the same model, benchmark, item and configuration; {} left out",
        sanitize(wanted.name),
        sanitize(wanted.nuisance),
        sanitize(&ds.name),
        matched.cells.len(),
        matched.left_out.len()
    )?;
    // The answers left out, by reason: a missing model or configuration leaves out a run.
    let mut by_why: Vec<(&str, usize, &str)> = Vec::new();
    for l in &matched.left_out {
        match by_why.iter_mut().find(|(w, _, _)| *w == l.why) {
            Some(e) => e.1 += 1,
            None => by_why.push((&l.why, 1, &l.unit)),
        }
    }
    for (why, n, first) in by_why.iter().take(20) {
        let first = if *n == 1 {
            sanitize(first).into_owned()
        } else {
            format!("first {}", sanitize(first))
        };
        writeln!(err, "  left out {n}: {} ({first})", sanitize(why))?;
    }
    if by_why.len() > 20 {
        writeln!(err, "  ... and {} more reasons", by_why.len() - 20)?;
    }
    if let Some(w) = &matched.warning {
        writeln!(err, "  warning: {}", sanitize(w))?;
    }
    if matched.cells.is_empty() {
        anyhow::bail!(
            "no answer of the run matches a canonical cell of {}: nothing written (see above why)",
            shown(&common.output)
        );
    }
    if common.dry_run {
        writeln!(err, "frameaudit: dry run: nothing written")?;
        return Ok(());
    }
    // Inside the dataset: no link is followed, to the folder or the file.
    if let Some(dir) = out.parent() {
        crate::core::fswrite::create_dir_below(&common.output, dir)
            .with_context(|| format!("cannot create {}", shown(dir)))?;
    }
    crate::core::fswrite::write_output(&out, crate::core::fswrite::Links::Refuse, |w| {
        for c in &matched.cells {
            crate::core::text::json_to_writer(&mut *w, c)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })
    .with_context(|| format!("cannot write {}", shown(&out)))?;
    writeln!(
        err,
        "frameaudit: wrote {} replicate cells to {}",
        matched.cells.len(),
        shown(&out)
    )?;
    Ok(())
}

/// `import lmms-eval`: lmms-eval sample logs into a dataset (a re-run into its own, with --plan).
pub fn lmms_eval(a: &LmmsArgs) -> Result<()> {
    let opts = lmms_eval::LmmsOptions {
        overrides: a.config.clone(),
        docs: a.docs.iter().chain(&a.common.videos).cloned().collect(),
    };
    harness(
        &a.common,
        &a.docs,
        "lmms-eval runs",
        videos::Layout::LmmsEval,
        |imp, _, progress| lmms_eval::import(&a.common.paths, &opts, imp, progress),
    )
}

/// `import vlmevalkit`: VLMEvalKit predictions into a dataset (a re-run into its own, with --plan).
pub fn vlmevalkit(a: &VlmArgs) -> Result<()> {
    let opts = vlmevalkit::VlmOptions {
        frames_root: a.frames_root.clone(),
        commands: Vec::new(),
    };
    harness(
        &a.common,
        &a.frames_root.iter().cloned().collect::<Vec<_>>(),
        "VLMEvalKit predictions",
        videos::Layout::VlmEvalKit,
        |imp, logged, progress| {
            let opts = vlmevalkit::VlmOptions {
                commands: logged.iter().map(|l| l.command.clone()).collect(),
                ..opts
            };
            vlmevalkit::import(&a.common.paths, &opts, imp, progress)
        },
    )
}

/// `import wide-csv`: wide tables and their ground truth into a dataset.
pub fn wide_csv(a: &WideArgs) -> Result<()> {
    let opts = wide_csv::WideOptions {
        gold: a.gold.clone(),
        gold_key: a.gold_key.clone(),
        gold_col: a.gold_col.clone(),
        model: a.model.clone(),
        benchmark: a.benchmark.clone(),
        id_col: a.id_col.clone(),
    };
    harness(
        &a.common,
        std::slice::from_ref(&a.gold),
        "wide tables",
        videos::Layout::Any,
        |imp, _, progress| wide_csv::import(&a.common.paths, &opts, imp, progress),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_re_runs_of_one_configuration_under_a_plan_are_not_told_to_take_another_label() {
        let e = super::same_rerun(
            "m",
            "16f",
            std::path::Path::new("a/samples.jsonl"),
            std::path::Path::new("b/samples.jsonl"),
        )
        .to_string();
        assert!(e.contains("a/samples.jsonl and b/samples.jsonl"), "{e}");
        assert!(e.contains("two re-runs of one configuration"), "{e}");
        assert!(!e.contains("--config"), "{e}");
    }
}
