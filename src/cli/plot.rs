//! `frameaudit plot`: runs the report's analysis and writes its figures, one file per
//! figure and model, the pathway figure of the dataset's audits, and an `index.html`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::args::{PlotArgs, PlotFormat};
use crate::core::analysis::grid::Scope;
use crate::core::analysis::params::Params;
use crate::core::analysis::{self, Analysis, Metrics, Report};
use crate::core::audit::read_audit;
use crate::core::dataset::Dataset;
use crate::core::figures::Findings;
use crate::core::matrix::{ResponseMatrix, Task};
use crate::core::output::Inputs;
use crate::core::paths::UniqueNames;
use crate::core::text::sanitize;
use crate::plot::html::{Entry, Section};
use crate::plot::{
    Format, ModelView, Planned, across_models, file_safe, model_figures, pathway_figure, render,
};

/// `frameaudit plot`: writes the figures and their index.html.
pub fn run(args: &PlotArgs) -> Result<()> {
    let start = Instant::now();
    if args.dpi.is_some() && args.format != PlotFormat::Png {
        return Err(super::select::fail(
            "--dpi sets the resolution of PNG figures: add --format png (SVG figures scale to any size)",
        ));
    }
    let dpi = args.dpi.unwrap_or(crate::plot::dpi::BASE_DPI);
    // Every figure goes through the output rule; an earlier plot (its index.html) is
    // replaced only with --force, checked before anything is drawn.
    let data = super::dataset_path(&args.data);
    let mut inputs = Inputs::new();
    inputs.add(&data);
    inputs
        .check_file(&args.output.join("index.html"), args.force)
        .map_err(anyhow::Error::msg)?;
    let ds = super::load(&args.data)?;
    let m = &ds.matrix;
    let params = args.analysis.params(false);
    super::select::check_analysis(m, &params)?;
    let report = analysis::run(m, &params, None);
    let a = pick(m, &report, args.scope.as_deref())?;
    let format = match args.format {
        PlotFormat::Svg => Format::Svg,
        PlotFormat::Png => Format::Png,
    };
    let dir = &args.output;
    let made = make_dirs(dir, &data)?;
    let mut written: Vec<PathBuf> = Vec::new();
    let target = Target { dir, format, dpi };
    let drawn = draw_all(&ds, a, &params, &target, &mut inputs, &mut written);
    if drawn.is_err() {
        undo(&made, &written);
    }
    drawn?;
    println!(
        "wrote {} files to {} in {:.2} s:",
        written.len(),
        sanitize(&dir.display().to_string()),
        start.elapsed().as_secs_f64()
    );
    for p in &written {
        println!("  {}", sanitize(&p.display().to_string()));
    }
    Ok(())
}

/// Creates the output directory and the missing directories above it; returns those it
/// created, the deepest first. Like an output file, the directory is never a symbolic
/// link; inside the dataset `data`, no directory on its way is (a link planted in a
/// dataset would send the figures anywhere).
fn make_dirs(dir: &Path, data: &Path) -> Result<Vec<PathBuf>> {
    let made: Vec<PathBuf> = dir
        .ancestors()
        .filter(|d| !d.as_os_str().is_empty())
        .take_while(|d| std::fs::symlink_metadata(d).is_err())
        .map(Path::to_path_buf)
        .collect();
    let shown = sanitize(&dir.display().to_string()).into_owned();
    let cannot = || format!("cannot create the output directory {shown}");
    crate::core::fswrite::refuse_link(dir).with_context(cannot)?;
    if data.is_dir() && dir.starts_with(data) {
        crate::core::fswrite::create_dir_below(data, dir).with_context(cannot)?;
    } else {
        std::fs::create_dir_all(dir).with_context(cannot)?;
    }
    Ok(made)
}

/// After a failure, takes back what the run made: the files it wrote into a directory it
/// created, then those directories, deepest first, each only if empty. A directory that
/// was there before keeps what it holds.
fn undo(made: &[PathBuf], written: &[PathBuf]) {
    let Some(top) = made.last() else { return };
    for f in written.iter().filter(|f| f.starts_with(top)) {
        let _ = std::fs::remove_file(f);
    }
    for d in made {
        // remove_dir refuses a directory that is not empty: nothing else is lost.
        let _ = std::fs::remove_dir(d);
    }
}

/// Where the figures go and as what.
struct Target<'a> {
    dir: &'a Path,
    format: Format,
    dpi: u32,
}

/// Draws every figure into the target's directory and writes `index.html`; each file is
/// in `written` once it is there.
fn draw_all(
    ds: &Dataset,
    a: &Analysis,
    params: &Params,
    target: &Target,
    inputs: &mut Inputs,
    written: &mut Vec<PathBuf>,
) -> Result<()> {
    let Target { dir, format, dpi } = *target;
    let m = &ds.matrix;
    let scope = a.key.scope_name(m);
    let views: Vec<ModelView> = a
        .grids
        .models
        .iter()
        .zip(a.metrics.iter())
        .filter_map(|(mg, x)| match x {
            Metrics::Mcq(x) => Some(ModelView::new(m.models.name(mg.model), scope, x)),
            Metrics::Open(_) => None,
        })
        .collect();

    let mut sections = Vec::new();
    let mut draw = |planned: Planned, who: &str| -> Result<Entry> {
        let file = match planned.figure {
            Ok(figure) => {
                let file = format!("{}.{}", planned.stem, format.ext());
                let path = dir.join(&file);
                inputs.check_file(&path, true).map_err(anyhow::Error::msg)?;
                render(&figure, format, dpi, &path)?;
                written.push(path);
                Ok(file)
            }
            Err(note) => {
                println!(
                    "note: {}: skipped {}: {}",
                    sanitize(who),
                    sanitize(&planned.stem),
                    sanitize(&note)
                );
                Err(note)
            }
        };
        Ok(Entry {
            file,
            caption: planned.caption,
        })
    };

    let findings = audit_findings(ds);
    sections.push(Section {
        title: "Evidence pathways (all models)".into(),
        entries: vec![draw(pathway_figure(&findings), "audits")?],
    });
    let grids = match params.grid_mode {
        crate::core::analysis::params::GridMode::PerModel => {
            "per-model grids: each model on its own configurations and items"
        }
        crate::core::analysis::params::GridMode::Joint => {
            "joint grid: the same configurations and items for every model"
        }
    };
    let mut entries = Vec::new();
    for planned in across_models(&views, grids) {
        entries.push(draw(planned, "all models")?);
    }
    sections.push(Section {
        title: "All models".into(),
        entries,
    });
    let mut used = UniqueNames::new();
    for v in &views {
        // Two names that sanitise alike still get files of their own.
        let name = used.give(&file_safe(&v.model));
        let mut entries = Vec::new();
        for planned in model_figures(v, &name) {
            entries.push(draw(planned, &v.model)?);
        }
        sections.push(Section {
            title: v.model.clone(),
            entries,
        });
    }
    let index = dir.join("index.html");
    let page = crate::plot::html::index(
        &format!("frameaudit figures · {}", ds.name),
        &format!(
            "protocol {}, task mcq, scope {}, {}, bootstrap B = {}, seed {}",
            params.primary,
            scope,
            crate::core::text::count(views.len(), "model"),
            params.bootstrap_b,
            params.seed
        ),
        &sections,
    );
    crate::plot::write_figure(&index, page.as_bytes())
        .with_context(|| format!("cannot write {}", sanitize(&index.display().to_string())))?;
    written.push(index);
    Ok(())
}

/// The analysis to draw: the primary protocol's MCQ analysis of the scope.
fn pick<'r>(m: &ResponseMatrix, report: &'r Report, scope: Option<&str>) -> Result<&'r Analysis> {
    let primary = &report.params.primary;
    let Some(p) = m.protocols.get(primary) else {
        bail!(
            "no protocol {:?} in the dataset (protocols: {}); choose one with --primary",
            sanitize(primary),
            sanitize(&m.protocols.names().collect::<Vec<_>>().join(", "))
        );
    };
    let want = match scope {
        None | Some("ALL") => Scope::All,
        Some(b) => match m.benchmarks.get(b) {
            Some(id) => Scope::Benchmark(id),
            None => {
                let benchmarks: Vec<&str> = m.benchmarks.names().collect();
                return Err(super::select::fail(&super::select::explain(
                    "--scope",
                    "benchmark",
                    &[b],
                    &benchmarks,
                )));
            }
        },
    };
    let a = report
        .analyses
        .iter()
        .find(|a| a.key.protocol == p && a.key.task == Task::Mcq && a.key.scope == want)
        .with_context(|| {
            format!(
                "no multiple-choice analysis of protocol {:?} in scope {} (figures are drawn for MCQ benchmarks)",
                sanitize(primary),
                sanitize(scope.unwrap_or("ALL"))
            )
        })?;
    if a.metrics.is_empty() {
        bail!(
            "no model has a complete grid in this analysis (check --models and --configs), so there is nothing to draw"
        );
    }
    Ok(a)
}

/// Pathway counts of the dataset's annotators' audits (where they live:
/// [`crate::core::workspace::audits_dir`], as the audit screens' findings count them); an
/// audit that cannot be read is skipped with a warning (the figures of the report still come).
fn audit_findings(ds: &crate::core::dataset::Dataset) -> Findings {
    let mut findings = Findings::default();
    let files = crate::core::workspace::annotator_audits(ds);
    for f in files {
        match read_audit(&f) {
            Ok(replay) => {
                for w in &replay.warnings {
                    eprintln!("{}", sanitize(w));
                }
                for r in replay.records.values() {
                    findings.add(r);
                }
            }
            Err(e) => eprintln!("frameaudit: warning: {}", sanitize(&e.to_string())),
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed plot takes back the folders it made and what it wrote there, and leaves
    /// a folder that was there before with what it held.
    #[test]
    fn a_failed_plot_leaves_no_folder_it_made() {
        let tmp = tempfile::tempdir().expect("tmp");
        let kept = tmp.path().join("kept.txt");
        std::fs::write(&kept, "x").expect("write");
        let dir = tmp.path().join("a/b/figures");
        let made = make_dirs(&dir, tmp.path()).expect("make");
        assert_eq!(made.len(), 3, "{made:?}");
        let figure = dir.join("curve_m.svg");
        std::fs::write(&figure, "<svg/>").expect("write");
        undo(&made, &[figure]);
        assert!(!tmp.path().join("a").exists(), "the folders made are gone");
        assert!(kept.exists(), "the folder that was there keeps its file");

        // Into a folder that was there: nothing made, nothing taken back.
        let made = make_dirs(tmp.path(), tmp.path()).expect("make");
        assert!(made.is_empty(), "{made:?}");
        undo(&made, std::slice::from_ref(&kept));
        assert!(kept.exists());
    }
}
