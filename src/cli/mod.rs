//! The command line: parses arguments, loads the dataset, runs the core and presents it.

pub mod args;
pub mod audit;
pub mod audit_agreement;
mod cells_out;
pub mod doctor;
pub mod frames;
pub mod import;
pub mod intervene;
pub mod list;
pub mod plot;
pub mod progress;
pub mod report_table;
pub mod report_text;
pub mod reruns;
pub mod select;
pub mod shell;
pub mod term;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use self::args::{
    AuditArgs, AuditCommand, Cli, Command, DatasetArgs, ExportArg, ImportFormat, ReportArgs,
};
use crate::core::analysis::{self, agreement};
use crate::core::dataset::{Dataset, load_dataset};
use crate::core::diag::LoadError;
use crate::core::text::{count, sanitize};
use crate::term::{ImageMode, TuiOptions};

/// The bundled demo dataset, used when no DATASET is given.
pub fn demo_dataset() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo"))
}

/// A failure the user must act on, already explained; the exit code says which kind.
#[derive(Debug)]
pub struct Failure {
    /// The exit code: `EXIT_PROBLEMS` for bad input, `select::EXIT_USAGE` for a usage error.
    pub code: u8,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "failed")
    }
}

impl std::error::Error for Failure {}

/// Exit code for input that is rejected or has problems.
pub const EXIT_PROBLEMS: u8 = 1;

/// Loads the dataset named on the command line (or the demo), printing warnings to stderr.
pub fn load(args: &DatasetArgs) -> Result<Dataset> {
    load_with(args, None)
}

/// Loads the dataset, and a second one read as other protocols of it when given.
pub fn load_with(
    args: &DatasetArgs,
    compared: Option<&crate::core::dataset::Compared<'_>>,
) -> Result<Dataset> {
    let format = args.input_format.map(Into::into);
    load_by(args, |path| {
        crate::core::dataset::load_compared(path, compared, format)
    })
}

/// Loads the dataset for the audit screens: its matrix cache is left for them to write
/// once the first screen is up, and large replicate files for them to read behind it
/// ([`crate::core::dataset::load_canonical_first`]).
pub fn load_for_screens(args: &DatasetArgs) -> Result<Dataset> {
    let format = args.input_format.map(Into::into);
    load_by(args, |path| {
        let min_bytes = crate::core::dataset::defer_min_bytes();
        crate::core::dataset::load_canonical_first(path, format, min_bytes)
    })
}

/// Loads the dataset named on the command line (or the demo) with `read`, printing its
/// warnings, or its problems when it is rejected, to stderr.
fn load_by(
    args: &DatasetArgs,
    read: impl FnOnce(&std::path::Path) -> Result<Dataset, LoadError>,
) -> Result<Dataset> {
    let path = match &args.dataset {
        Some(p) => p.clone(),
        None => {
            let demo = demo_dataset();
            if !demo.exists() {
                anyhow::bail!(
                    "no DATASET given and the bundled demo is not at {} (pass a dataset directory, a cells .jsonl or a per-item .csv)",
                    demo.display()
                );
            }
            demo
        }
    };
    say_cache_problems(args);
    let phase = progress::Phase::start(&format!("reading {}", progress::file_name(&path)));
    let read = read(&path);
    drop(phase);
    match read {
        Ok(ds) => {
            if ds.warnings.warning_count() > 0 && !args.quiet {
                let mut err = std::io::stderr().lock();
                for d in ds.warnings.sorted() {
                    let _ = writeln!(err, "{d}");
                }
            }
            say_cache_unsaved(args, &ds);
            Ok(ds)
        }
        Err(LoadError::Rejected(d)) => {
            let mut err = std::io::stderr().lock();
            for x in d.sorted() {
                let _ = writeln!(err, "{x}");
            }
            let _ = writeln!(
                err,
                "frameaudit: {} is rejected: {}",
                sanitize(&path.display().to_string()),
                d.summary()
            );
            Err(Failure {
                code: EXIT_PROBLEMS,
            }
            .into())
        }
        Err(e) => Err(e.into()),
    }
}

/// The cache variables of the environment that are not read as set, on stderr (unless
/// `--quiet`): they are the environment's, not the dataset's, so no command counts them.
fn say_cache_problems(args: &DatasetArgs) {
    for problem in crate::core::cache::problems()
        .iter()
        .filter(|_| !args.quiet)
    {
        eprintln!("frameaudit: warning: {}", sanitize(problem));
    }
}

/// Why the load's matrix cache could not be written, when it could not, on stderr (unless
/// `--quiet`).
fn say_cache_unsaved(args: &DatasetArgs, ds: &Dataset) {
    if let Some(note) = ds.cache_unsaved.as_deref().filter(|_| !args.quiet) {
        eprintln!("frameaudit: note: {}", sanitize(note));
    }
}

/// Refuses an output file by the rule of `core::output`, before anything is read.
pub fn check_output(out: &Path, inputs: &[&Path], force: bool) -> Result<()> {
    let mut i = crate::core::output::Inputs::new();
    for p in inputs {
        i.add(p);
    }
    i.check_file(out, force).map_err(anyhow::Error::msg)
}

/// The dataset path a command reads (the bundled demo when none is given).
pub fn dataset_path(args: &DatasetArgs) -> PathBuf {
    args.dataset.clone().unwrap_or_else(demo_dataset)
}

fn run_report(args: &ReportArgs) -> Result<()> {
    if let Some(out) = &args.items_out {
        let data = dataset_path(&args.data);
        let mut inputs = vec![data.as_path()];
        inputs.extend(args.annotations.as_deref());
        check_output(out, &inputs, args.force)?;
    }
    use self::args::ReportFormat;
    let format = match args.format {
        None if args.json => ReportFormat::Json,
        None => ReportFormat::Text,
        Some(f) => f,
    };
    if args.pretty && format != ReportFormat::Json {
        return Err(select::fail(
            "--pretty indents the JSON: give it with --json",
        ));
    }
    let ds = load(&args.data)?;
    let params = args
        .analysis
        .params(args.no_sweep || format != ReportFormat::Json);
    select::check_analysis(&ds.matrix, &params)?;
    let agreement = match &args.annotations {
        Some(path) => {
            let file = crate::core::fsread::open(path, crate::core::fsread::AUDIT)
                .with_context(|| format!("cannot read {}", path.display()))?
                .into_reader();
            let anns =
                agreement::read_annotations(std::io::BufReader::new(file), path).map_err(|e| {
                    eprintln!("{e}");
                    Failure {
                        code: EXIT_PROBLEMS,
                    }
                })?;
            Some(agreement::agreement(&anns))
        }
        None => None,
    };
    let t = std::time::Instant::now();
    let phase = progress::Phase::start(&if params.bootstrap_b > 0 {
        format!("analysing (bootstrap B = {})", params.bootstrap_b)
    } else {
        "analysing".to_string()
    });
    let report = analysis::run(&ds.matrix, &params, agreement);
    drop(phase);
    crate::core::timing("analyses", t);
    let t = std::time::Instant::now();
    if let Some(path) = &args.items_out {
        if crate::core::load::parquet::is_parquet(path) {
            let mut rows = Vec::new();
            report.item_rows(&ds.matrix, |line| {
                rows.push(line.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
                Ok(())
            })?;
            write_atomically(path, |w| {
                crate::core::load::parquet::write_records(&rows, &ITEM_KEY, w)
            })?;
        } else {
            write_atomically(path, |w| report.write_items(&ds.matrix, w))?;
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let table = match format {
        ReportFormat::Markdown => Some(report_table::TableFormat::Markdown),
        ReportFormat::Latex => Some(report_table::TableFormat::Latex),
        ReportFormat::Csv => Some(report_table::TableFormat::Csv),
        ReportFormat::Json | ReportFormat::Text => None,
    };
    if table.is_none() && args.show_configs.is_some() {
        return Err(select::fail(
            "--show-configs picks the columns of a table: give --format markdown, latex or csv",
        ));
    }
    // A CSV table is always one row of every column: --layout would change nothing.
    if !matches!(format, ReportFormat::Markdown | ReportFormat::Latex) && args.layout.is_some() {
        return Err(select::fail(
            "--layout lays out a Markdown or LaTeX table: give --format markdown or latex",
        ));
    }
    if let Some(f) = table {
        use std::io::IsTerminal;
        let source = dataset_path(&args.data).display().to_string();
        let terminal = std::io::stdout().is_terminal();
        let layout = match (args.layout.unwrap_or_default(), &args.show_configs) {
            (args::TableLayout::Wide, None) => report_table::Layout::Wide,
            (args::TableLayout::Paper, None) => report_table::Layout::Paper,
            (args::TableLayout::Paper, Some(c)) => report_table::Layout::PaperShowing(c.clone()),
            (args::TableLayout::Wide, Some(_)) => {
                return Err(select::fail(
                    "--show-configs picks the paper layout's columns: not with --layout wide",
                ));
            }
        };
        report_table::write(&mut out, &ds, &source, &report, f, terminal, &layout).map_err(
            |e| match e.kind() {
                // A name --show-configs gives that no table has.
                std::io::ErrorKind::InvalidInput => select::fail(&e.to_string()),
                _ => e.into(),
            },
        )?;
    } else if format == ReportFormat::Json {
        report.write_json(&ds.matrix, &mut out, args.pretty)?;
        writeln!(out)?;
    } else {
        let style = term::Style::for_stdout();
        report_text::write(&mut out, &ds, &report, &style)?;
    }
    out.flush()?;
    crate::core::timing("output", t);
    Ok(())
}

/// The first columns of per-item rows written as Parquet; the descriptors follow.
const ITEM_KEY: [(&str, crate::core::load::parquet::Kind); 6] = {
    use crate::core::load::parquet::Kind::Str;
    [
        ("protocol", Str),
        ("task", Str),
        ("scope", Str),
        ("model", Str),
        ("benchmark", Str),
        ("item_id", Str),
    ]
};

/// Writes a dataset's cells, read from whatever files it has, as one cells JSONL or (by the
/// extension) Parquet file.
fn run_cells(args: &args::CellsArgs) -> Result<()> {
    let data = dataset_path(&args.data);
    check_output(&args.output, &[data.as_path()], args.force)?;
    // The whole check first: a file that would be rejected is not converted.
    let cell_files = load(&args.data)?.cell_files;
    let parquet = crate::core::load::parquet::is_parquet(&args.output);
    let mut n = 0;
    write_atomically(&args.output, |w| {
        let mut sink = cells_out::Rows::new(w, parquet)?;
        for f in &cell_files {
            let file = crate::core::fsread::open(f, crate::core::fsread::CELLS)?;
            let name: std::sync::Arc<Path> = std::sync::Arc::from(f.as_path());
            crate::core::load::read_cells_into(
                f,
                file,
                args.data.input_format.map(Into::into),
                &mut sink,
                &name,
            )
            .map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot read {}: {e}", f.display()))
            })?;
        }
        n = sink.finish()?;
        Ok(())
    })?;
    eprintln!(
        "frameaudit: wrote {n} cells to {}",
        sanitize(&args.output.display().to_string())
    );
    Ok(())
}

/// Writes an output the user named (`-o`, `--items-out`) by the rule of
/// [`crate::core::fswrite::write_output`]: a temporary sibling renamed over a regular file, a
/// device or a pipe written in place, a symbolic link followed only to those.
pub fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut (dyn Write + Send)) -> std::io::Result<()>,
) -> Result<()> {
    crate::core::fswrite::write_output(path, crate::core::fswrite::Links::ToStreams, f)
        .with_context(|| format!("cannot write {}", sanitize(&path.display().to_string())))
}

fn run_sql(args: &args::SqlArgs) -> Result<()> {
    use crate::core::sql::{Dialect, script};
    let dialect = match args.dialect {
        args::SqlDialect::Duckdb => Dialect::DuckDb,
        args::SqlDialect::Spark => Dialect::Spark,
    };
    let text =
        script(&args.analysis.params(true), dialect).map_err(|e| select::fail(&e.to_string()))?;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn run_validate(args: &DatasetArgs) -> Result<()> {
    let path = args.dataset.clone().unwrap_or_else(demo_dataset);
    say_cache_problems(args);
    match load_dataset(&path, args.input_format.map(Into::into)) {
        Ok(ds) => {
            say_cache_unsaved(args, &ds);
            let problems = ds.warnings.warning_count() > 0;
            let written = write_checked(&mut std::io::stdout().lock(), &path, &ds);
            verdict(written, problems)
        }
        Err(LoadError::Rejected(d)) => {
            let written = write_rejected(&mut std::io::stdout().lock(), &path, &d);
            verdict(written, true)
        }
        Err(e) => Err(e.into()),
    }
}

/// `validate`'s account of a dataset it read: its warnings, the cells its harness scored
/// against the letters, the replicates, and a summary line.
fn write_checked(out: &mut impl Write, path: &Path, ds: &Dataset) -> std::io::Result<()> {
    for d in ds.warnings.sorted() {
        writeln!(out, "{d}")?;
    }
    let m = &ds.matrix;
    // Not problems: the harness's verdict stands; but a reader of the numbers should
    // know which cells its scorer decided against the letters.
    let odd = m.contradictions();
    for &c in odd.iter().take(200) {
        let i = c as usize;
        writeln!(
            out,
            "{}: note: the cell is scored {} although its answer {:?} {} the gold {:?} (kept: the harness's own scorer decided)",
            sanitize(&m.cell_location(c)),
            if m.cell_value.get(i) == 1.0 {
                "right"
            } else {
                "wrong"
            },
            sanitize(m.text(m.cell_pred.get(i)).unwrap_or_default()),
            if m.cell_value.get(i) == 1.0 {
                "is not"
            } else {
                "is"
            },
            sanitize(m.text(m.cell_gold.get(i)).unwrap_or_default()),
        )?;
    }
    if odd.len() > 200 {
        writeln!(out, "... and {} more such cells", odd.len() - 200)?;
    }
    let reps = &m.replicates;
    if reps.orphaned > 0 {
        writeln!(
            out,
            "{}: note: {} of the {} replicate cells have no valid canonical cell of their model, item and configuration: they are counted, never used (docs/measures.md §16.1)",
            sanitize(&path.display().to_string()),
            reps.orphaned,
            reps.read
        )?;
    }
    // The replicates apart from the cells: they are no cells of the matrix (§16.1).
    let replicates = if reps.read == 0 {
        String::new()
    } else {
        let mut by_name: std::collections::BTreeMap<(&str, &str), usize> = Default::default();
        for r in reps.cells.iter() {
            *by_name
                .entry((reps.names.name(r.replicate), reps.names.name(r.nuisance)))
                .or_default() += 1;
        }
        let names: Vec<String> = by_name
            .iter()
            .map(|((name, nuisance), n)| {
                format!("{n} of {} ({})", sanitize(name), sanitize(nuisance))
            })
            .collect();
        match names.is_empty() {
            // Why none is used is among the warnings.
            true => format!("; {} replicate cells (none used)", reps.read),
            false => format!(
                "; {} replicate cells ({} used: {})",
                reps.read,
                reps.cells.len(),
                names.join(", ")
            ),
        }
    };
    writeln!(
        out,
        "{}: {} ({} valid, {} invalid), {}, {}, {}, {}, {}{replicates}; {}",
        sanitize(&path.display().to_string()),
        count(m.n_cells(), "cell"),
        m.stats.cells_valid,
        m.stats.cells_invalid,
        count(m.models.len(), "model"),
        count(m.benchmarks.len(), "benchmark"),
        count(m.items.len(), "item"),
        count(m.configs.len(), "configuration"),
        count(m.protocols.len(), "protocol"),
        ds.warnings.summary()
    )
}

/// `validate`'s account of a rejected dataset: every error, then the verdict.
fn write_rejected(
    out: &mut impl Write,
    path: &Path,
    d: &crate::core::diag::Diagnostics,
) -> std::io::Result<()> {
    for x in d.sorted() {
        writeln!(out, "{x}")?;
    }
    writeln!(
        out,
        "{}: rejected: {}",
        sanitize(&path.display().to_string()),
        d.summary()
    )
}

/// `validate`'s exit: problems are status 1 even when its reader left early (a closed
/// pipe, as `validate X | head` gives), so a check in a pipeline never reads as clean.
fn verdict(written: std::io::Result<()>, problems: bool) -> Result<()> {
    match written {
        Err(e) if !(problems && e.kind() == std::io::ErrorKind::BrokenPipe) => Err(e.into()),
        _ if problems => Err(Failure {
            code: EXIT_PROBLEMS,
        }
        .into()),
        _ => Ok(()),
    }
}

/// What is left to do once the command line's command has run: the audit screens are the
/// TUI's, which the binary starts, so the command line only says what they open.
pub enum Next {
    /// Nothing: the command is done.
    Exit,
    /// The audit screens on this dataset.
    Screens(Box<Dataset>, Box<TuiOptions>),
}

/// `frameaudit [DATASET]`: the audit screens on a terminal, the report otherwise.
fn run_default(cli: &Cli) -> Result<Next> {
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        eprintln!(
            "frameaudit: not a terminal, so printing the report (run it in a terminal for the audit screens)"
        );
        // A taxonomy given for the screens is still read: a broken one is said now, not
        // at the first run in a terminal.
        if let Some(t) = &cli.tui.taxonomy {
            crate::core::taxonomy::Taxonomy::load(Some(t))?;
        }
        let args = ReportArgs {
            data: cli.data.clone(),
            analysis: cli.analysis.clone(),
            ..ReportArgs::default()
        };
        return run_report(&args).map(|()| Next::Exit);
    }
    let opts = tui_options(&cli.tui, &cli.analysis)?;
    let ds = match &cli.tui.compare {
        Some(other) => {
            let primary = opts.params.primary.clone();
            let label = crate::core::dataset::compared_label(other, &primary);
            load_with(
                &cli.data,
                Some(&crate::core::dataset::Compared {
                    path: other,
                    primary: &primary,
                    label: &label,
                }),
            )?
        }
        None => load_for_screens(&cli.data)?,
    };
    select::check_analysis(&ds.matrix, &opts.params)?;
    Ok(Next::Screens(Box::new(ds), Box::new(opts)))
}

/// The image mode `--images` names.
fn image_mode_of(arg: args::ImagesArg) -> ImageMode {
    use self::args::ImagesArg;
    match arg {
        ImagesArg::None => ImageMode::None,
        ImagesArg::Halfblocks => ImageMode::Halfblocks,
        ImagesArg::Kitty => ImageMode::Kitty,
        ImagesArg::Sixel => ImageMode::Sixel,
        ImagesArg::Iterm => ImageMode::Iterm,
    }
}

/// The options of the audit screens from their arguments.
fn tui_options(tui: &args::TuiArgs, analysis: &args::AnalysisArgs) -> Result<TuiOptions> {
    let images = tui.images.map(image_mode_of).unwrap_or(ImageMode::Auto);
    Ok(TuiOptions {
        params: analysis.params(true),
        images,
        annotator: tui.annotator.clone(),
        audit: tui.audit.clone(),
        taxonomy: tui.taxonomy.clone(),
        keymap: tui.keymap.clone(),
        shard: tui.shard.get(),
        review: None,
        mouse: !tui.no_mouse,
        plan: tui.plan.clone(),
    })
}

/// `frameaudit review AUDIT...`: the audit screens on the disagreements of the audits.
fn run_review(a: &args::ReviewArgs) -> Result<Next> {
    use std::io::IsTerminal;
    let annotated = crate::core::audit::merged::read_annotated(&a.audits)?;
    for w in &annotated.warnings {
        eprintln!("{}", sanitize(w));
    }
    // The review's own audit is never one it reads: its records would replace the ones
    // under review.
    if let Some(out) = &a.tui.audit {
        let mut inputs = crate::core::output::Inputs::new();
        if let Some(input) = inputs.extend(&a.audits).named_by(out) {
            anyhow::bail!(
                "--audit {} is one of the audits under review ({}): the review's records go to an audit of their own (by default audits/adjudicated/ANNOTATOR.audit.jsonl)",
                sanitize(&out.display().to_string()),
                sanitize(&input.display().to_string())
            );
        }
    }
    let sources: Vec<String> = a.audits.iter().map(|p| p.display().to_string()).collect();
    let review = crate::core::workspace::review::Review::new(&annotated, sources);
    // The dataset: --data, else the folder that holds the audits/ folder of the first file.
    let data = match &a.data {
        Some(d) => d.clone(),
        None => a.audits[0]
            .canonicalize()
            .ok()
            .and_then(|p| crate::core::workspace::dataset_of_audit(&p))
            .context("give the dataset the audits were made on with --data DATASET (the audit files are not in its audits/ folder)")?,
    };
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        anyhow::bail!(
            "review needs a terminal ({}, {} agreed)",
            crate::core::text::count(review.units.len(), "disagreement"),
            crate::core::text::count(review.agreed, "unit")
        );
    }
    let ds = load_for_screens(&args::DatasetArgs {
        dataset: Some(data),
        input_format: None,
        quiet: false,
    })?;
    let mut opts = tui_options(&a.tui, &a.analysis)?;
    opts.review = Some(review);
    select::check_analysis(&ds.matrix, &opts.params)?;
    Ok(Next::Screens(Box::new(ds), Box::new(opts)))
}

fn run_audit(a: &AuditArgs) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match &a.command {
        AuditCommand::Summary { audits } => audit::summary(audits, &mut out)?,
        AuditCommand::Merge {
            audits,
            output,
            force,
        } => {
            let inputs: Vec<&Path> = audits.iter().map(PathBuf::as_path).collect();
            check_output(output, &inputs, *force)?;
            audit::merge(audits, output, &mut out)?
        }
        AuditCommand::Agreement {
            audits,
            json,
            taxonomy,
        } => audit_agreement::run(audits, taxonomy.as_deref(), *json, &mut out)?,
        AuditCommand::Export {
            audit: path,
            format,
        } => {
            let f = match format {
                ExportArg::Jsonl => audit::ExportFormat::Jsonl,
                ExportArg::Csv => audit::ExportFormat::Csv,
                ExportArg::Parquet => audit::ExportFormat::Parquet,
            };
            use std::io::IsTerminal;
            audit::export(path, f, stdout.is_terminal(), &mut out)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Parses the command line and runs its command, up to the audit screens (see [`Next`]).
pub fn run() -> Result<Next> {
    // A mistyped command would be read as a dataset path (`frameaudit DATASET`): say which
    // command it resembles instead of that no such dataset exists.
    if let Some(first) = std::env::args_os().nth(1)
        && let Some(meant) = shell::meant_command(&first)
    {
        return Err(select::fail(&format!(
            "{} is neither a command nor a dataset that exists; did you mean {meant}?\n  (frameaudit --help lists the commands)",
            sanitize(&first.to_string_lossy())
        )));
    }
    // A negative number given after its option (`--alpha -0.1`) is the option's value, so
    // that its check says what is wrong with it, not that `-0` is an unknown argument.
    fn negatives(cmd: clap::Command) -> clap::Command {
        cmd.allow_negative_numbers(true).mut_subcommands(negatives)
    }
    let matches = negatives(<Cli as clap::CommandFactory>::command()).get_matches();
    let cli =
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if cli.no_cache {
        crate::core::cache::disable();
    }
    let done = match &cli.command {
        None => return run_default(&cli),
        Some(Command::Review(a)) => return run_review(a),
        Some(Command::Report(a)) => run_report(a),
        Some(Command::List(a)) => list::run(a),
        Some(Command::Validate(a)) => run_validate(a),
        Some(Command::Import(a)) => match &a.format {
            ImportFormat::PerItemCsv(x) => import::per_item_csv(x),
            ImportFormat::LmmsEval(x) => import::lmms_eval(x),
            ImportFormat::Vlmevalkit(x) => import::vlmevalkit(x),
            ImportFormat::WideCsv(x) => import::wide_csv(x),
            ImportFormat::Reruns(x) => reruns::import(x),
        },
        Some(Command::Audit(a)) => run_audit(a),
        Some(Command::Frames(a)) => frames::run(a),
        Some(Command::Plot(a)) => plot::run(a),
        Some(Command::Intervene(a)) => intervene::run(a),
        Some(Command::Sql(a)) => run_sql(a),
        Some(Command::Cells(a)) => run_cells(a),
        Some(Command::Completions { shell }) => shell::completions(*shell),
        Some(Command::Man { command }) => shell::man(command),
        Some(Command::Doctor(a)) => match &a.what {
            args::DoctorCommand::Terminal { images } => {
                doctor::terminal(images.map(image_mode_of).unwrap_or(ImageMode::Auto))
            }
        },
    };
    done.map(|()| Next::Exit)
}

/// The exit status of the binary's run, its error (if any) said on stderr first.
pub fn exit_code(result: Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(f) = e.downcast_ref::<Failure>() {
                return ExitCode::from(f.code);
            }
            if let Some(io) = e.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::SUCCESS;
            }
            eprintln!("frameaudit: error: {}", error_text(&e));
            ExitCode::from(EXIT_PROBLEMS)
        }
    }
}

/// An error and its causes, sanitized, on one line; a cause its error already quotes is not
/// repeated. A rejected input's diagnostics (a taxonomy's, an agreement's audits') and a
/// plan file's problems are the exception: each is sanitized field by field as it is
/// written, and stands on a line of its own.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let cause = match cause.downcast_ref::<LoadError>() {
            Some(rejected @ LoadError::Rejected(_)) => rejected.to_string(),
            // A plan file's problems, one per line, sanitized as they are written.
            _ if matches!(
                cause.downcast_ref::<crate::core::plan::PlanError>(),
                Some(crate::core::plan::PlanError::Shape { .. })
            ) =>
            {
                cause.to_string()
            }
            _ => sanitize(&cause.to_string()).into_owned(),
        };
        if text.is_empty() {
            text = cause;
        } else if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
