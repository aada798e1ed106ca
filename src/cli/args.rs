//! Command-line arguments. Analysis options are spelled as docs/measures.md §14 recommends.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::core::analysis::params::{
    GridMode, MAX_BOOTSTRAP_B, Params, ReferencePixels, VariantBudget,
};
use crate::core::load::CellFormat;
use crate::core::shard::Shard;

/// The whole command line: a command, or the dataset and options the audit screens open with.
#[derive(Parser, Debug)]
#[command(
    name = "frameaudit",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("FRAMEAUDIT_COMMIT"), ")"),
    about = "Audit item-level scaling heterogeneity in Video LLM evaluations",
    long_about = "Audit item-level scaling heterogeneity in Video LLM evaluations.\n\nWithout a command, opens the audit screens on DATASET (default: the bundled demo); when standard input or output is not a terminal, prints its report instead.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// The command to run; none opens the audit screens (or prints the report off a terminal).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The dataset the audit screens (or the report) open.
    #[command(flatten)]
    pub data: DatasetArgs,
    /// How the audit screens open.
    #[command(flatten)]
    pub tui: TuiArgs,
    /// The analysis the audit screens (or the report) run.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// Read the cells from their files even when a saved matrix of them exists, and save
    /// none (a large dataset is otherwise opened from the cache, see the README)
    #[arg(long, global = true)]
    pub no_cache: bool,
}

/// Options of the audit screens.
#[derive(Args, Debug, Clone, Default)]
pub struct TuiArgs {
    /// Annotator name (default: $FRAMEAUDIT_ANNOTATOR, else the login name)
    #[arg(long)]
    pub annotator: Option<String>,
    /// Audit file (default: DATASET/audits/ANNOTATOR.audit.jsonl)
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Evidence-pathway taxonomy (default: the bundled assets/taxonomy.json)
    #[arg(long, value_name = "FILE")]
    pub taxonomy: Option<PathBuf>,
    /// Keymap file overriding key bindings (JSON, see the README)
    #[arg(long, value_name = "FILE")]
    pub keymap: Option<PathBuf>,
    /// How to draw frames (default: asked of the terminal, `frameaudit doctor terminal`
    /// says what it answered; halfblocks work everywhere)
    #[arg(long, value_enum)]
    pub images: Option<ImagesArg>,
    /// Leave the mouse to the terminal (for selecting text): no clicks or wheel in the TUI
    #[arg(long)]
    pub no_mouse: bool,
    /// Only one annotator's share of the queue.
    #[command(flatten)]
    pub shard: ShardArgs,
    /// Another dataset of the same items (e.g. raw-video against cached-frame runs), read
    /// as a second protocol named after it, for the protocols view
    #[arg(long, value_name = "OTHER_DATASET")]
    pub compare: Option<PathBuf>,
    /// The intervention plan the item screen's add_to_plan (I) writes (default: beside the
    /// audit file, NAME.plan.json)
    #[arg(long, value_name = "PLAN")]
    pub plan: Option<PathBuf>,
}

/// A share of the audit queue for one of several annotators.
#[derive(Args, Debug, Clone, Default)]
pub struct ShardArgs {
    /// Only shard I of N of the queue (1 <= I <= N <= 1000), the same split on every run
    #[arg(long, value_name = "I/N", value_parser = |s: &str| Shard::parse(s, 0.0))]
    pub shard: Option<Shard>,
    /// Share of the queue given to every shard, for agreement (with --shard)
    #[arg(long, value_name = "SHARE", default_value_t = 0.0, requires = "shard",
        value_parser = parse_overlap)]
    pub overlap: f64,
}

impl ShardArgs {
    /// The shard asked for, if any, with its overlap.
    pub fn get(&self) -> Option<Shard> {
        self.shard.map(|s| Shard {
            overlap: self.overlap,
            ..s
        })
    }
}

fn parse_overlap(s: &str) -> Result<f64, String> {
    let share = s
        .parse::<f64>()
        .map_err(|_| "expected a share between 0 and 1, such as 0.2".to_string())?;
    Shard::overlap(share)
}

/// `--images`: how frames are drawn, as the command line names them (`term::ImageMode`).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImagesArg {
    /// Text only: frame index and time instead of pictures
    None,
    /// Unicode half blocks: works in every colour terminal, over SSH and in tmux
    Halfblocks,
    /// The kitty graphics protocol
    Kitty,
    /// Sixel graphics
    Sixel,
    /// iTerm2's inline images (also WezTerm's)
    Iterm,
}

/// The commands of `frameaudit COMMAND`.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Every measure of the trajectory specification, as a readable report or as JSON
    Report(ReportArgs),
    /// The audit queue for scripts: one line per (model, item), worst first
    List(ListArgs),
    /// Check a dataset: every error and warning; exit 0 clean, 1 problems
    Validate(DatasetArgs),
    /// Convert results of other tools into frameaudit's native cells
    Import(ImportArgs),
    /// Audit files: pathway counts, flat export
    Audit(AuditArgs),
    /// The frames each configuration sampled for one item, as text, JSON or pictures
    Frames(FramesArgs),
    /// Publication figures (SVG or PNG) of the report's analysis, with an index.html
    Plot(PlotArgs),
    /// Adjudicate: the units where annotators disagree, each one's record side by side;
    /// the reviewer's records go to an adjudicated audit that names its sources
    #[command(mut_arg("audit", |a| a.help(
        "The reviewer's audit file (default: DATASET/audits/adjudicated/ANNOTATOR.audit.jsonl); never one of the audits under review"
    )))]
    Review(ReviewArgs),
    /// Sampling interventions: plan which frames a re-run gives the model instead
    Intervene(IntervenArgs),
    /// The MCQ measures as a SQL script for DuckDB or Spark, to run where the cells are
    /// (docs/sql.md): it reads a table `cells` and creates item_measures, config_measures,
    /// model_summary and churn_edges, and from the replicates the noise floor
    /// (replicate_floor, replicate_edges, replicate_stable)
    #[command(
        after_help = "sql reads no dataset, so the names given to --models and --configs are not checked: a name not in the table `cells` gives empty tables where the script runs (docs/sql.md)."
    )]
    Sql(SqlArgs),
    /// Write a dataset's cells, whatever files they come from, as one cells JSONL or Parquet
    /// file (by the output's extension; docs/formats.md §7)
    Cells(CellsArgs),
    /// Print the completion script of a shell (e.g. `frameaudit completions bash >
    /// ~/.local/share/bash-completion/completions/frameaudit`)
    Completions {
        /// The shell the script is for
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page as roff (`frameaudit man > frameaudit.1`, `man -l frameaudit.1`);
    /// with a command, that command's page (`frameaudit man audit merge`: frameaudit-audit-merge(1))
    Man {
        /// The command (and subcommand) whose page to print; none: frameaudit's own
        command: Vec<String>,
    },
    /// What frameaudit finds about its surroundings, and what to change
    Doctor(DoctorArgs),
}

/// `frameaudit doctor`: what it checks.
#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// What to check.
    #[command(subcommand)]
    pub what: DoctorCommand,
}

/// The subcommands of `frameaudit doctor`.
#[derive(Subcommand, Debug)]
pub enum DoctorCommand {
    /// Ask the terminal (and tmux) what it draws: what was detected, which image protocol
    /// the audit screens use and why, and what you can change (docs/terminals.md)
    Terminal {
        /// The protocol you would ask for with the screens' --images
        #[arg(long, value_enum)]
        images: Option<ImagesArg>,
    },
}

/// `frameaudit cells`: the dataset read and the file written.
#[derive(Args, Debug)]
pub struct CellsArgs {
    /// The dataset whose cells are written.
    #[command(flatten)]
    pub data: DatasetArgs,
    /// The file to write: FILE.parquet for Parquet, anything else cells JSONL
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Replace an existing output (never an input, an audit file or a dataset's file)
    #[arg(long)]
    pub force: bool,
}

/// `frameaudit sql`: the engine and the grid options the script is written for.
#[derive(Args, Debug)]
pub struct SqlArgs {
    /// The engine the script is written for
    #[arg(long, value_enum, default_value_t = SqlDialect::Duckdb)]
    pub dialect: SqlDialect,
    /// Grid, selection and noise-floor options (per-model grids only; the bootstrap,
    /// cascade, δ and primary options do not change the script)
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

/// The engine `frameaudit sql` writes for.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlDialect {
    /// DuckDB
    Duckdb,
    /// Spark SQL (spark-sql -f)
    Spark,
}

/// `frameaudit intervene`: its subcommand.
#[derive(Args, Debug)]
pub struct IntervenArgs {
    /// Which step of an intervention to run.
    #[command(subcommand)]
    pub command: IntervenCommand,
}

/// The subcommands of `frameaudit intervene`.
#[derive(Subcommand, Debug)]
pub enum IntervenCommand {
    /// For each terminal regression (or audited harmful transition), the frames a re-run of
    /// the higher budget should use, per strategy, as a JSON plan (docs/intervention.md)
    Plan(Box<PlanArgs>),
    /// The re-runs a plan needs, one per strategy, pass, model and configuration, each with
    /// its recorder and harness command (docs/intervention.md §8)
    Runs(RunsArgs),
}

/// `frameaudit intervene runs`: the plan, the harness and where the re-runs go.
#[derive(Args, Debug)]
pub struct RunsArgs {
    /// The plan (from `intervene plan`)
    pub plan: PathBuf,
    /// The harness whose command is printed
    #[arg(long, value_enum, default_value_t = RunsHarness::LmmsEval)]
    pub harness: RunsHarness,
    /// With --harness command: the harness command, split as a shell would (no expansion);
    /// {model}, {config}, {frames}, {benchmark} and {out} are replaced for each re-run
    #[arg(long, value_name = "TEMPLATE")]
    pub command: Option<String>,
    /// The folder the re-runs and their recorder logs go to (`import reruns DIR` reads it)
    #[arg(long, value_name = "DIR", default_value = "reruns")]
    pub dir: PathBuf,
    /// Print JSON for scripts: one object per re-run, each command as an argument list
    #[arg(long)]
    pub json: bool,
}

/// `--harness` of `intervene runs`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsHarness {
    /// lmms-eval (python3 -m lmms_eval)
    LmmsEval,
    /// VLMEvalKit (python run.py)
    Vlmevalkit,
    /// Any command, given with --command
    Command,
}

/// `frameaudit intervene plan`: what to plan, from which audits, into which file.
#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The dataset whose transitions are planned.
    #[command(flatten)]
    pub data: DatasetArgs,
    /// The analysis that finds the transitions (run without bootstrap or sweep).
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// Audit files whose evidence frames `restore-evidence` restores (and whose transitions
    /// `--targets audited` plans)
    #[arg(long = "audit", value_name = "FILE")]
    pub audits: Vec<PathBuf>,
    /// Strategies to plan, repeatable (default: nested, lower-policy and swap, and
    /// restore-evidence too when --audit is given; phase and sampler, which plan the noise
    /// floor of every item, only when named)
    #[arg(long = "strategy", value_enum, value_name = "S")]
    pub strategies: Vec<PlanStrategy>,
    /// Which transitions to plan (default: terminal; the noise-floor strategies plan every
    /// item, not transitions)
    #[arg(long, value_enum)]
    pub targets: Option<PlanTargets>,
    /// `--strategy phase`: the grid is shifted by s/S of its step for s = 1..S−1 (S − 1
    /// replicates of every item; default 2)
    #[arg(long, value_name = "S",
          value_parser = clap::value_parser!(u64).range(2..=64))]
    pub phases: Option<u64>,
    /// The plan file to write (JSON)
    #[arg(short, long, value_name = "PLAN")]
    pub output: PathBuf,
    /// Replace an existing output (never an audit file, an input, or a dataset with audits)
    #[arg(long)]
    pub force: bool,
}

/// `--strategy`, as the command line names `core::intervene::Strategy`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStrategy {
    /// The higher budget's frames plus the evidence frames annotators marked that it dropped
    RestoreEvidence,
    /// The lower budget's frames plus evenly spread others, up to the higher count
    Nested,
    /// The higher count drawn with the frame rule of the lower budget's run
    LowerPolicy,
    /// The lower budget's frames as they were (the control)
    Swap,
    /// Noise floor: every item of every run, its sampling grid shifted by s/S of a step
    Phase,
    /// Noise floor: every item of every run, by the other uniform rules of its frame count
    Sampler,
}

/// `--targets`, as the command line names `core::intervene::Targets`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanTargets {
    /// Every terminal regression: from the highest right budget below the top, to the top
    Terminal,
    /// Every harmful transition an audit record is on
    Audited,
}

/// `frameaudit review`: the audits to adjudicate and how the screens open.
#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// Audit files of the annotators (or a merged audit)
    #[arg(required = true)]
    pub audits: Vec<PathBuf>,
    /// The dataset audited (default: the folder holding the audits/ folder of the files)
    #[arg(long, value_name = "DATASET")]
    pub data: Option<PathBuf>,
    /// How the review screens open.
    #[command(flatten)]
    pub tui: TuiArgs,
    /// The analysis the review screens run.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
}

/// `frameaudit plot`: what is drawn, in which format, into which folder.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// The dataset drawn.
    #[command(flatten)]
    pub data: DatasetArgs,
    /// The analysis drawn.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// Directory to write the figures and index.html into (created when missing)
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Replace an existing output (never an audit file, an input, or a dataset with audits)
    #[arg(long)]
    pub force: bool,
    /// File format of the figures
    #[arg(long, value_enum, default_value_t = PlotFormat::Svg)]
    pub format: PlotFormat,
    /// Draw one benchmark's analysis instead of all benchmarks pooled (ALL)
    #[arg(long, value_name = "BENCHMARK")]
    pub scope: Option<String>,
    /// Resolution of PNG figures, in dots per inch (default 100: a 960 x 600 figure is
    /// 9.6 x 6 inches); recorded in the file
    #[arg(long, value_parser = clap::value_parser!(u32).range(50..=600))]
    pub dpi: Option<u32>,
}

/// The figures' file format.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlotFormat {
    /// Vector figures, for papers and the browser
    #[default]
    Svg,
    /// Raster figures at --dpi
    Png,
}

/// `frameaudit frames`: the item, and what to show of its frames.
#[derive(Args, Debug)]
pub struct FramesArgs {
    /// Dataset: a directory, a cells .jsonl file or a per-item .csv
    pub dataset: PathBuf,
    /// Item: ITEM_ID, or BENCHMARK/ITEM_ID when the id is in several benchmarks
    pub item: String,
    /// Model (default: the first with a harmful transition on this item)
    #[arg(long)]
    pub model: Option<String>,
    /// Only this configuration
    #[arg(long)]
    pub config: Option<String>,
    /// The transition to compare (default: the step where the answer flips, as the audit
    /// screens open the item)
    #[arg(long, requires = "to")]
    pub from: Option<String>,
    /// The configuration the transition goes to (the higher one of a harmful transition,
    /// though any may be named): the frames of --from it does not keep, and those it adds
    #[arg(long, requires = "from")]
    pub to: Option<String>,
    /// Say which rule gave each configuration's frames
    #[arg(long)]
    pub explain: bool,
    /// Print JSON for scripts
    #[arg(long)]
    pub json: bool,
    /// Do not print pictures (text only)
    #[arg(long)]
    pub no_images: bool,
    /// Width of each picture, in columns
    #[arg(long)]
    pub width: Option<u32>,
    /// At most this many pictures
    #[arg(long, default_value_t = 16)]
    pub max: usize,
}

/// `frameaudit audit`: its subcommand.
#[derive(Args, Debug)]
pub struct AuditArgs {
    /// What to do with the audit files.
    #[command(subcommand)]
    pub command: AuditCommand,
}

/// The subcommands of `frameaudit audit`.
#[derive(Subcommand, Debug)]
pub enum AuditCommand {
    /// Pathway counts per model, benchmark and transition, and records by status
    Summary {
        /// Audit files
        #[arg(required = true)]
        audits: Vec<PathBuf>,
    },
    /// Agreement between annotators: Cohen's kappa per pathway and pair, Krippendorff's
    /// alpha on the primary pathway, raw percent agreement (docs/measures.md §8)
    Agreement {
        /// Audit files, one per annotator
        #[arg(required = true)]
        audits: Vec<PathBuf>,
        /// Print the JSON (the `agreement` object of docs/measures.md §12, with the files and
        /// unknown ids)
        #[arg(long)]
        json: bool,
        /// Taxonomy whose pathway ids are known (default: the bundled one)
        #[arg(long, value_name = "FILE")]
        taxonomy: Option<PathBuf>,
    },
    /// One merged audit with every annotator's records; conflicts are kept, not resolved
    Merge {
        /// Audit files (or merged audits)
        #[arg(required = true)]
        audits: Vec<PathBuf>,
        /// The merged audit to write
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing file that holds no annotations: never an input, nor an audit, merged ones included (remove an old merged audit to make it again)
        #[arg(long)]
        force: bool,
    },
    /// Every record as flat JSONL (the agreement input of `report --annotations`) or CSV
    Export {
        /// Audit file
        audit: PathBuf,
        /// Output format
        #[arg(long, value_enum, default_value_t = ExportArg::Jsonl)]
        format: ExportArg,
    },
}

/// The format `audit export` writes.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExportArg {
    /// One JSON object per record
    #[default]
    Jsonl,
    /// One CSV row per record, with a header
    Csv,
    /// Parquet with the JSONL form's columns, to a file or a pipe
    Parquet,
}

/// Which dataset to read and how, for every command that reads one.
#[derive(Args, Debug, Clone, Default)]
pub struct DatasetArgs {
    /// Dataset: a directory, a cells .jsonl or .parquet file or a per-item .csv (default: the bundled demo)
    pub dataset: Option<PathBuf>,
    /// Read the input in this format instead of guessing it from the file name
    #[arg(long, value_enum)]
    pub input_format: Option<InputFormat>,
    /// Do not print warnings about the input
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--input-format`, as the command line names `core::load::CellFormat`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// Cells JSON Lines (docs/measures.md §1.1)
    Cells,
    /// Per-item CSV (docs/measures.md §1.7)
    PerItemCsv,
    /// Cells as Parquet (docs/formats.md §7)
    Parquet,
}

impl From<InputFormat> for CellFormat {
    fn from(f: InputFormat) -> Self {
        match f {
            InputFormat::Cells => CellFormat::Cells,
            InputFormat::PerItemCsv => CellFormat::PerItemCsv,
            InputFormat::Parquet => CellFormat::Parquet,
        }
    }
}

/// `--grid`, as the command line names `GridMode`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GridArg {
    /// Every model on its own grid (all its configurations and items)
    #[default]
    PerModel,
    /// One grid shared by all models, so their numbers are comparable
    Joint,
}

/// `--variant-budget`, as the command line names `VariantBudget`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VariantBudgetArg {
    /// A resolution variant keeps its own budget
    #[default]
    Own,
    /// A resolution variant compares like the text-only configuration (budget 0)
    Zero,
}

/// The analysis parameters of docs/measures.md §14.
#[derive(Args, Debug, Clone)]
pub struct AnalysisArgs {
    /// Grid mode
    #[arg(long, value_enum, default_value_t = GridArg::PerModel)]
    pub grid: GridArg,
    /// Only these models (comma-separated)
    #[arg(long, value_delimiter = ',', value_parser = parse_listed)]
    pub models: Option<Vec<String>>,
    /// Compare exactly these configurations (comma-separated); models lacking one are excluded
    #[arg(long, value_delimiter = ',', value_parser = parse_listed)]
    pub configs: Option<Vec<String>>,
    /// Leave zero-frame (text-only) configurations out of the grids
    #[arg(long)]
    pub no_zero_frame: bool,
    /// Reference pixel count that splits the ladder from resolution variants: auto, none or N
    #[arg(long, default_value = "auto", value_parser = parse_reference_pixels)]
    pub reference_pixels: ReferencePixels,
    /// Comparison budget of resolution variants
    #[arg(long, value_enum, default_value_t = VariantBudgetArg::Own)]
    pub variant_budget: VariantBudgetArg,
    /// Cascade stages (comma-separated; default: the grid's visual ladder)
    #[arg(long, value_delimiter = ',', value_parser = parse_listed)]
    pub cascade_stages: Option<Vec<String>>,
    /// Primary protocol
    #[arg(long, default_value = "main")]
    pub primary: String,
    /// Protocol of intervention runs
    #[arg(long, default_value = "intervention")]
    pub intervention_protocol: String,
    /// Continuous regression margin δ, in points
    #[arg(long, default_value_t = 10.0, value_parser = parse_delta)]
    pub delta: f64,
    /// Bootstrap resamples, at most 1000000 (0 disables the bootstrap)
    #[arg(long, default_value_t = 1000,
        value_parser = RangedU64ValueParser::<usize>::new().range(0..=MAX_BOOTSTRAP_B as u64))]
    pub boot: usize,
    /// Bootstrap seed
    #[arg(long, default_value_t = 12345)]
    pub seed: u64,
    /// Only replicates of these nuisances make the noise floor (comma-separated, e.g.
    /// rerun,phase; default: every nuisance the replicates name)
    #[arg(long, value_delimiter = ',', value_parser = parse_listed)]
    pub nuisances: Option<Vec<String>>,
    /// False-discovery level an edge's excess over the noise floor must reach to be
    /// beyond noise
    #[arg(long, default_value_t = 0.05, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Resample clusters (an item's video) instead of items in the bootstrap
    #[arg(long)]
    pub cluster_bootstrap: bool,
}

impl Default for AnalysisArgs {
    fn default() -> Self {
        AnalysisArgs {
            grid: GridArg::PerModel,
            models: None,
            configs: None,
            no_zero_frame: false,
            reference_pixels: ReferencePixels::Auto,
            variant_budget: VariantBudgetArg::Own,
            cascade_stages: None,
            primary: "main".into(),
            intervention_protocol: "intervention".into(),
            delta: 10.0,
            boot: 1000,
            seed: 12345,
            nuisances: None,
            alpha: 0.05,
            cluster_bootstrap: false,
        }
    }
}

fn parse_reference_pixels(s: &str) -> Result<ReferencePixels, String> {
    match s {
        "auto" => Ok(ReferencePixels::Auto),
        "none" => Ok(ReferencePixels::None),
        _ => s
            .parse()
            .map(ReferencePixels::Value)
            .map_err(|_| format!("expected auto, none or a pixel count, found {s:?}")),
    }
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a <= 1.0 => Ok(a),
        _ => Err(format!(
            "expected a number above 0 and at most 1, found {s:?}"
        )),
    }
}

fn parse_delta(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(d) if d >= 0.0 && d.is_finite() => Ok(d),
        _ => Err(format!("expected a number >= 0, found {s:?}")),
    }
}

impl AnalysisArgs {
    /// The analysis parameters of these options; `no_sweep` leaves the cascade sweep out
    /// (only the report JSON prints it).
    pub fn params(&self, no_sweep: bool) -> Params {
        Params {
            primary: self.primary.clone(),
            intervention_protocol: self.intervention_protocol.clone(),
            delta: self.delta,
            seed: self.seed,
            bootstrap_b: self.boot,
            grid_mode: match self.grid {
                GridArg::PerModel => GridMode::PerModel,
                GridArg::Joint => GridMode::Joint,
            },
            models: self.models.clone(),
            configs: self.configs.clone(),
            include_zero_frame: !self.no_zero_frame,
            reference_pixels: self.reference_pixels,
            variant_budget: match self.variant_budget {
                VariantBudgetArg::Own => VariantBudget::Own,
                VariantBudgetArg::Zero => VariantBudget::Zero,
            },
            cascade_stages: self.cascade_stages.clone(),
            sweep: !no_sweep,
            nuisances: self.nuisances.clone(),
            alpha: self.alpha,
            cluster_bootstrap: self.cluster_bootstrap,
        }
    }
}

/// `frameaudit report`: the dataset, the analysis and how to print it.
#[derive(Args, Debug, Clone, Default)]
pub struct ReportArgs {
    /// The dataset reported on.
    #[command(flatten)]
    pub data: DatasetArgs,
    /// The analysis reported.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// Print the report JSON of docs/measures.md §12 instead of the readable report
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Print the headline numbers of every model and split as one table to paste into a
    /// paper (CSV unrounded), under comment lines recording every analysis option
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// How --format markdown|latex lays the tables out: `paper` fits a page (configurations
    /// and measures apart, wrapped to the page's width), `wide` is one row of every column
    /// [default: paper]
    #[arg(long, value_enum)]
    pub layout: Option<TableLayout>,
    /// Only these configurations' columns, in the paper layout and in CSV (the analysis
    /// is unchanged)
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_listed)]
    pub show_configs: Option<Vec<String>>,
    /// Indent the JSON
    #[arg(long)]
    pub pretty: bool,
    /// Leave the 101-step cascade sweep out of the JSON
    #[arg(long)]
    pub no_sweep: bool,
    /// Write the per-item export (JSON Lines) to FILE
    #[arg(long, value_name = "FILE")]
    pub items_out: Option<PathBuf>,
    /// Replace an existing output (never an audit file, an input, or a dataset with audits)
    #[arg(long)]
    pub force: bool,
    /// Annotation JSONL (docs/measures.md §8) for the agreement section
    #[arg(long, value_name = "FILE")]
    pub annotations: Option<PathBuf>,
}

/// `--format` of `report`: the readable report, its JSON, or a table for a paper.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// The readable report (the default)
    Text,
    /// The report JSON, as --json
    Json,
    /// A Markdown (GitHub) table
    Markdown,
    /// A LaTeX tabular (booktabs)
    Latex,
    /// CSV with one row per model and split, numbers unrounded
    Csv,
}

/// `--layout` of `report`: how Markdown and LaTeX tables are laid out.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableLayout {
    /// Tables that fit a page (the default)
    #[default]
    Paper,
    /// One table per task with every column
    Wide,
}

/// `--kind` of `list`: which items of the audit queue.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListKind {
    /// Items with a harmful transition (MCQ) or a δ-regression (open)
    #[default]
    Harmful,
    /// Items wrong at the top configuration after being right lower
    Terminal,
    /// Every item
    All,
}

/// `--format` of `list`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListFormat {
    /// Tab-separated columns under a header line
    #[default]
    Tsv,
    /// One JSON object per item
    Jsonl,
}

/// `frameaudit list`: which items of which analysis, in which format.
#[derive(Args, Debug, Clone)]
pub struct ListArgs {
    /// The dataset listed.
    #[command(flatten)]
    pub data: DatasetArgs,
    /// The analysis whose audit queue is listed.
    #[command(flatten)]
    pub analysis: AnalysisArgs,
    /// Which items
    #[arg(long, value_enum, default_value_t = ListKind::Harmful)]
    pub kind: ListKind,
    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Tsv)]
    pub format: ListFormat,
    /// Protocol to list (default: the primary protocol)
    #[arg(long)]
    pub protocol: Option<String>,
    /// Only one annotator's share of the list.
    #[command(flatten)]
    pub shard: ShardArgs,
}

/// `frameaudit import`: which format to import.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Which tool's results, and how to read them.
    #[command(subcommand)]
    pub format: ImportFormat,
}

/// The importers of `frameaudit import`.
#[derive(Subcommand, Debug)]
pub enum ImportFormat {
    /// Per-item CSV (docs/measures.md §1.7) to cells JSONL
    PerItemCsv(ConvertArgs),
    /// lmms-eval runs (--log_samples) to a dataset directory
    LmmsEval(LmmsArgs),
    /// VLMEvalKit prediction files (xlsx, tsv, json) to a dataset directory
    Vlmevalkit(VlmArgs),
    /// Wide tables (one row per item, one column per configuration) to a dataset directory
    WideCsv(WideArgs),
    /// A folder of a plan's re-runs (as `intervene runs` lays them out), each output with its
    /// recorder log, sorted into one import per strategy and pass
    Reruns(RerunsArgs),
}

/// `import reruns`: the folder, the plan, the dataset, and what a wide table does not hold.
#[derive(Args, Debug)]
pub struct RerunsArgs {
    /// The folder holding the re-runs and their recorder logs
    pub dir: PathBuf,
    /// The plan the re-runs applied
    #[arg(long, value_name = "PLAN")]
    pub plan: PathBuf,
    /// The dataset the plan was made of
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace the strategies' existing intervention files
    #[arg(long)]
    pub force: bool,
    /// Read and match everything, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// For re-runs that wrote wide tables (neither lmms-eval nor VLMEvalKit): the ground
    /// truth CSV
    #[arg(long, value_name = "FILE")]
    pub gold: Option<PathBuf>,
    /// With --gold: its key column
    #[arg(long, default_value = "question_id")]
    pub gold_key: String,
    /// With --gold: its answer column
    #[arg(long, default_value = "answer")]
    pub gold_col: String,
    /// With --gold: the model name of the wide tables
    #[arg(long, value_parser = parse_model)]
    pub model: Option<String>,
    /// With --gold: the benchmark name of the wide tables
    #[arg(long, value_parser = parse_benchmark)]
    pub benchmark: Option<String>,
    /// FROM=TO: the model names the dataset was imported with (`import --model-name`)
    #[arg(long = "model-name", value_name = "FROM=TO", value_parser = parse_rename)]
    pub model_name: Vec<(String, String)>,
}

/// What every harness importer takes.
#[derive(Args, Debug, Clone)]
pub struct ImportCommon {
    /// Files or folders to import (searched recursively)
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Dataset directory to write
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace an existing output (never an audit file, an input, or a dataset with audits)
    #[arg(long)]
    pub force: bool,
    /// Read and report, write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// The benchmark's videos, found by name anywhere under DIR (e.g. lmms-eval's cache
    /// $HF_HOME, with videomme/data/{videoID}.mp4): their frame counts and rates make each
    /// run's frames exact, and the frame view decodes them
    #[arg(long, value_name = "DIR")]
    pub videos: Option<PathBuf>,
    /// A frameaudit_record log of the runs: the frames each decode was given, recorded
    /// (logs beside the runs are found without it)
    #[arg(long = "frames-log", value_name = "FILE")]
    pub frames_log: Vec<PathBuf>,
    /// The plan this re-run applied through the recorder (docs/intervention.md §6): its
    /// planned answers, where the frames log shows the planned frames decoded, are added to
    /// the dataset -o names (the one the plan was made of) as intervention cells
    #[arg(long, value_name = "PLAN")]
    pub plan: Option<PathBuf>,
    /// With --plan: the strategy the re-run applied (needed when the plan has several)
    #[arg(long, requires = "plan")]
    pub strategy: Option<String>,
    /// With --plan: the pass the re-run applied
    #[arg(
        long = "pass",
        value_name = "N",
        default_value_t = 0,
        requires = "plan"
    )]
    pub pass_no: u64,
    /// With --plan: the protocol of the cells (default intervention:STRATEGY)
    #[arg(long, requires = "plan")]
    pub protocol: Option<String>,
    /// Import the run as replicate NAME of the canonical runs of the existing dataset -o
    /// names (docs/measures.md §16): each answer matched by model, benchmark, item and
    /// configuration is written to DATASET/replicates/NAME.jsonl, for the noise floor
    #[arg(
        long,
        value_name = "NAME",
        requires = "nuisance",
        conflicts_with = "plan",
        value_parser = parse_replicate
    )]
    pub replicate: Option<String>,
    /// With --replicate: what the replicate varies: rerun (the same run again), phase,
    /// order, sampler, decoder, or another name
    #[arg(
        long,
        value_name = "KIND",
        requires = "replicate",
        conflicts_with = "plan",
        value_parser = parse_nuisance
    )]
    pub nuisance: Option<String>,
    /// FROM=TO: write model FROM (as the harness names it, e.g. `OpenGVLab__InternVL3-8B`)
    /// as TO, so runs of two harnesses line up by name; repeat for each model
    #[arg(long = "model-name", value_name = "FROM=TO", value_parser = parse_rename)]
    pub model_name: Vec<(String, String)>,
}

/// `import lmms-eval`: lmms-eval's options beside the common ones.
#[derive(Args, Debug)]
pub struct LmmsArgs {
    /// What every harness importer takes.
    #[command(flatten)]
    pub common: ImportCommon,
    /// LABEL=PATH: label the run(s) under PATH with configuration LABEL (e.g. 16f), instead
    /// of the frame budget read from the results file
    #[arg(long = "config", value_name = "LABEL=PATH", value_parser = parse_label_path)]
    pub config: Vec<(String, PathBuf)>,
    /// The benchmarks' annotation files (JSON or JSONL of questions naming their videos),
    /// files or folders: they name the videos of tasks whose logs do not (MVBench, MLVU);
    /// the --videos folder is searched too
    #[arg(long, value_name = "PATH")]
    pub docs: Vec<PathBuf>,
}

/// `import vlmevalkit`: VLMEvalKit's options beside the common ones.
#[derive(Args, Debug)]
pub struct VlmArgs {
    /// What every harness importer takes.
    #[command(flatten)]
    pub common: ImportCommon,
    /// Root of VLMEvalKit's extracted frames ({root}/images/{dataset}/{video}/frame-i-of-N.jpg)
    #[arg(long, value_name = "DIR")]
    pub frames_root: Option<PathBuf>,
}

/// `import wide-csv`: the ground truth, and the names a wide table does not hold.
#[derive(Args, Debug)]
pub struct WideArgs {
    /// What every harness importer takes.
    #[command(flatten)]
    pub common: ImportCommon,
    /// Ground-truth CSV
    #[arg(long, value_name = "FILE")]
    pub gold: PathBuf,
    /// Key column of the ground truth (and of the wide table, unless --id-col)
    #[arg(long, default_value = "question_id")]
    pub gold_key: String,
    /// Answer column of the ground truth
    #[arg(long, default_value = "answer")]
    pub gold_col: String,
    /// Item id column of the wide table
    #[arg(long)]
    pub id_col: Option<String>,
    /// Model name (default: the file name)
    #[arg(long, value_parser = parse_model)]
    pub model: Option<String>,
    /// Benchmark name
    #[arg(long, value_parser = parse_benchmark)]
    pub benchmark: Option<String>,
}

fn parse_rename(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => {
            Ok((a.to_string(), b.trim().to_string()))
        }
        _ => Err(format!("expected FROM=TO (two model names), found {s:?}")),
    }
}

/// A model name an import writes: the cells' own rule (a non-empty string), said here
/// rather than by the dataset written.
/// One name of a comma-separated list (`--models a,b`): not empty, so that `a,,b` or a
/// comma at an end is said once, as the list's mistake, rather than as a name missing
/// from the data.
fn parse_listed(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("an empty name in the list (two commas together, or one at an end)".into());
    }
    Ok(s.to_string())
}

/// A replicate's name, refused empty before any file is read (an empty one is a canonical
/// cell's).
fn parse_replicate(s: &str) -> Result<String, String> {
    named(
        s,
        "a replicate needs a name (an empty one is a canonical cell's)",
    )
}

/// What a replicate varies, refused empty before any file is read.
fn parse_nuisance(s: &str) -> Result<String, String> {
    named(
        s,
        "a nuisance needs a name (rerun, phase, order, sampler...)",
    )
}

fn parse_model(s: &str) -> Result<String, String> {
    named(s, "a model name must not be empty")
}

/// `s` as given, unless it is empty or blank: then `why`.
fn named(s: &str, why: &str) -> Result<String, String> {
    match s.trim().is_empty() {
        true => Err(why.into()),
        false => Ok(s.to_string()),
    }
}

/// A benchmark name an import writes: not empty, and not `ALL`, the scope of every
/// benchmark.
fn parse_benchmark(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("a benchmark name must not be empty".into());
    }
    if s == "ALL" {
        return Err("\"ALL\" is the name of the scope of every benchmark (in reports, per-item rows and SQL); give the benchmark another name".into());
    }
    Ok(s.to_string())
}

fn parse_label_path(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((l, p)) if !l.is_empty() && !p.is_empty() => Ok((l.to_string(), PathBuf::from(p))),
        _ => Err(format!("expected LABEL=PATH, found {s:?}")),
    }
}

/// `import per-item-csv`: the file converted and the cells file written.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input file
    pub input: PathBuf,
    /// Output cells JSONL file; with --docs, the dataset directory to write
    #[arg(short, long)]
    pub output: PathBuf,
    /// The benchmarks' annotation files (JSON or JSONL of questions naming their videos:
    /// Video-MME, MVBench, MLVU), files or folders: each item's question, options and
    /// video, found by its question id (or, for a number, its position in the task file
    /// named like its benchmark); -o is then a dataset directory
    #[arg(long, value_name = "PATH")]
    pub docs: Vec<PathBuf>,
    /// With --docs: the benchmark's videos, found by name anywhere under DIR; their frame
    /// counts and rates are probed and the frame view decodes them
    #[arg(long, value_name = "DIR", requires = "docs")]
    pub videos: Option<PathBuf>,
    /// Replace an existing output (never an audit file, an input, or a dataset with audits)
    #[arg(long)]
    pub force: bool,
    /// Write every row without a `replicate` as replicate NAME (docs/measures.md §16): a
    /// re-run's CSV made a file for a dataset's replicates/ folder
    #[arg(long, value_name = "NAME", requires = "nuisance", value_parser = parse_replicate)]
    pub replicate: Option<String>,
    /// With --replicate: what the replicate varies (rerun, phase, order, sampler...)
    #[arg(long, value_name = "KIND", requires = "replicate", value_parser = parse_nuisance)]
    pub nuisance: Option<String>,
}
