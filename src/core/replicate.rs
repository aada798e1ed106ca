//! A run imported as a replicate (docs/measures.md §16, issue 39): each answer of the run is
//! matched to the dataset's canonical cell of the same (model, benchmark, item,
//! configuration) and kept as a replicate of it, under one name and nuisance, for
//! `replicates/NAME.jsonl`; an answer without such a cell is left out, with why.

use std::path::{Path, PathBuf};

use crate::core::dataset::{Dataset, REPLICATES_DIR};
use crate::core::import::{Import, ImportedCell, ReplicateCell};
use crate::core::matrix::{Task, mcq_value, norm_fast};

/// The replicate the run is read as.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    /// Its name (`rerun-1`, `phase-half`...).
    pub name: &'a str,
    /// What it varies (`rerun`, `phase`...).
    pub nuisance: &'a str,
}

/// An answer of the run left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// `MODEL BENCHMARK ITEM at CONFIG`.
    pub unit: String,
    /// Why it is not kept.
    pub why: String,
}

/// The run matched to the dataset's canonical cells.
#[derive(Debug, Clone, Default)]
pub struct Matched {
    /// The replicate cells kept, in the import's order (model, benchmark, item,
    /// configuration).
    pub cells: Vec<ReplicateCell>,
    /// The answers left out, in the same order.
    pub left_out: Vec<LeftOut>,
    /// A doubt about the whole run, for the user: every answer kept is its canonical
    /// cell's, from a source of the same name.
    pub warning: Option<String>,
}

/// The file a replicate's cells go to: `replicates/NAME.jsonl` in the dataset directory
/// (`NAME.passN.jsonl` for pass `N > 0` of a noise floor's re-run), the characters of NAME a
/// file name should not hold (path separators, `:`, spaces...) written as `-`.
pub fn replicates_file(dataset: &Path, name: &str, pass_no: u64) -> PathBuf {
    dataset.join(REPLICATES_DIR).join(jsonl_name(name, pass_no))
}

/// A name as a `.jsonl` file name of a dataset's folder ([`safe_file_name`]), the pass
/// after it when it is not the first (`NAME.passN.jsonl`).
pub fn jsonl_name(name: &str, pass_no: u64) -> String {
    let safe = safe_file_name(name);
    if pass_no == 0 {
        format!("{safe}.jsonl")
    } else {
        format!("{safe}.pass{pass_no}.jsonl")
    }
}

/// A name made safe as one component of a file name: ASCII letters, digits, `-`, `_` and
/// `.` are kept, anything else is `-`, and a leading `.` is `-` (no hidden file, no `..`).
pub fn safe_file_name(name: &str) -> String {
    name.chars()
        .enumerate()
        .map(|(i, c)| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') || (c == '.' && i > 0) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Refuses a name the dataset already gives another nuisance (one replicate name has one
/// nuisance), but in `replaced`, the file the cells will replace.
pub fn one_nuisance(
    ds: &Dataset,
    wanted: Wanted<'_>,
    replaced: Option<&Path>,
) -> Result<(), String> {
    let m = &ds.matrix;
    let reps = &m.replicates;
    let at = |file: u32, line: u32| {
        m.files
            .get(file as usize)
            .map_or_else(String::new, |f| format!("{}:{line}", f.display()))
    };
    match reps.cells.iter().find(|r| {
        reps.names.name(r.replicate) == wanted.name
            && reps.names.name(r.nuisance) != wanted.nuisance
            && outside(m, r.file, replaced)
    }) {
        Some(r) => Err(format!(
            "the dataset already has replicate {:?} with nuisance {:?} (at {}), and one replicate has one nuisance: give this run another --replicate name",
            wanted.name,
            reps.names.name(r.nuisance),
            at(r.file, r.line)
        )),
        None => Ok(()),
    }
}

/// Whether the dataset's file number `file` is not `replaced` (the file the cells will
/// replace, whose replicates then are not the dataset's).
fn outside(m: &crate::core::matrix::ResponseMatrix, file: u32, replaced: Option<&Path>) -> bool {
    m.files
        .get(file as usize)
        .is_none_or(|f| replaced.is_none_or(|r| !same_file(f, r)))
}

/// Matches every answer the import would write to the dataset's canonical cell of protocol
/// `main` with the same (model, benchmark, item, configuration). `replaced` is the file the
/// cells will replace, when they may (its replicates are not the dataset's any more).
/// Errors: an empty name or nuisance, and a name the dataset already gives another nuisance.
pub fn match_replicate(
    ds: &Dataset,
    imp: &Import,
    wanted: Wanted<'_>,
    replaced: Option<&Path>,
) -> Result<Matched, String> {
    if wanted.name.trim().is_empty() {
        return Err("--replicate needs a name (an empty one is a canonical cell's)".into());
    }
    if wanted.nuisance.trim().is_empty() {
        return Err("--nuisance needs a name (rerun, phase, order, sampler...)".into());
    }
    one_nuisance(ds, wanted, replaced)?;
    let m = &ds.matrix;
    let reps = &m.replicates;
    let elsewhere = |file: u32| outside(m, file, replaced);
    let main = m.protocols.get("main");
    let mut out = Matched::default();
    let same_source = |cell: u32, c: &ImportedCell| {
        let tag = m.text(m.cell_source_tag.get(cell as usize));
        tag.is_some() && tag == c.source_tag.as_deref()
    };
    // Each answer with its canonical cell and, where it has one, whether it comes from a
    // source of the canonical cell's name (`Some`) and is its answer (`true`).
    let matched: Vec<(&ImportedCell, Result<u32, String>, Option<bool>)> = imp
        .written_cells()
        .map(|c| {
            let r = canonical(ds, main, c);
            let alike = r
                .as_ref()
                .ok()
                .filter(|&&cell| same_source(cell, c))
                .map(|&cell| same_answer(m, cell, c));
            (c, r, alike)
        })
        .collect();
    // Where a tag names one run (lmms-eval's date_id): the runs of the import whose every
    // answer under the canonical cells' own tag is the canonical answer, i.e. that run
    // again. One started in the same second that answered otherwise is a run of its own.
    let mut own: std::collections::BTreeMap<&str, bool> = Default::default();
    if imp.tags_name_runs {
        for (c, _, alike) in &matched {
            if let (Some(alike), Some(tag)) = (alike, c.source_tag.as_deref()) {
                *own.entry(tag).or_insert(true) &= alike;
            }
        }
    }
    // Kept answers that equal their canonical cell's, from a source of the same name.
    let mut echoes = 0;
    // The canonical cell and value of each kept multiple-choice answer, to compare with the
    // replicates already there.
    let mut kept: Vec<(u32, f64)> = Vec::new();
    for (c, r, alike) in matched {
        let unit = format!("{} {} {} at {}", c.model, c.benchmark, c.item_id, c.config);
        match r {
            Err(why) => out.left_out.push(LeftOut { unit, why }),
            Ok(cell) => {
                let echo = alike == Some(true);
                let tag = c.source_tag.as_deref().unwrap_or_default();
                if echo && own.get(tag) == Some(&true) {
                    out.left_out.push(LeftOut {
                        unit,
                        why: format!(
                            "it is the canonical cell's own answer: both come from run {tag}, which answered alike throughout, and a replicate must be another run"
                        ),
                    });
                    continue;
                }
                if let Some(r) = reps
                    .of(cell)
                    .iter()
                    .find(|r| reps.names.name(r.replicate) == wanted.name && elsewhere(r.file))
                {
                    out.left_out.push(LeftOut {
                        unit,
                        why: format!(
                            "the dataset already has replicate {:?} of it (in {})",
                            wanted.name,
                            m.files
                                .get(r.file as usize)
                                .map_or_else(String::new, |f| f.display().to_string())
                        ),
                    });
                    continue;
                }
                echoes += usize::from(echo);
                let config = m.config(m.cell_config.get(cell as usize));
                let item = m.cell_item.get(cell as usize);
                if m.item_task(item) == Task::Mcq {
                    let pred = c.pred.as_deref().and_then(norm_fast);
                    let v = mcq_value(c.correct, pred.as_deref(), c.gold.as_deref());
                    if !v.is_nan() {
                        kept.push((cell, v));
                    }
                }
                out.cells.push(ReplicateCell {
                    cell: c.clone(),
                    replicate: wanted.name.to_string(),
                    nuisance: wanted.nuisance.to_string(),
                    task: Some(m.item_task(item).as_str()),
                    budget: (config.budget != config.frames as f64).then_some(config.budget),
                    pixels: config.pixels,
                });
            }
        }
    }
    if echoes > 0 && echoes == out.cells.len() {
        out.warning = Some(format!(
            "each of the {echoes} answers kept is its canonical cell's, from a source of the same name: if this is the canonical run's file again, the replicate shows no noise where there is some (a floor of 0); a run of its own that answered alike is fine"
        ));
    } else if let Some(twin) = twin_of(ds, &kept, wanted.name, &elsewhere) {
        out.warning = Some(format!(
            "each of the {} kept is right or wrong where replicate {twin:?} is: if this is {twin:?}'s run again, the floor counts one run twice and reads lower than it is; a run of its own that answered alike is fine",
            crate::core::text::count(kept.len(), "multiple-choice answer")
        ));
    }
    Ok(out)
}

/// A replicate already in the dataset, other than `name` and in a file `elsewhere` holds,
/// that is right or wrong wherever each `kept` answer (canonical cell, value) is, and has
/// one on every cell: the run may be that replicate's again. None without answers kept.
fn twin_of(
    ds: &Dataset,
    kept: &[(u32, f64)],
    name: &str,
    elsewhere: &dyn Fn(u32) -> bool,
) -> Option<String> {
    let reps = &ds.matrix.replicates;
    let (&(first, _), rest) = kept.split_first()?;
    let others = |cell: u32| {
        reps.of(cell)
            .filter(|r| elsewhere(r.file) && reps.names.name(r.replicate) != name)
    };
    // The candidates are the replicates alike on the first answer; each must hold on all.
    let mut alike: Vec<u32> = others(first)
        .filter(|r| r.value == kept[0].1)
        .map(|r| r.replicate)
        .collect();
    for &(cell, v) in rest {
        alike.retain(|&n| others(cell).any(|r| r.replicate == n && r.value == v));
        if alike.is_empty() {
            return None;
        }
    }
    alike.first().map(|&n| reps.names.name(n).to_string())
}

/// Whether an imported answer is the canonical cell's: the same prediction and the same
/// correctness.
fn same_answer(m: &crate::core::matrix::ResponseMatrix, cell: u32, c: &ImportedCell) -> bool {
    let pred = m.text(m.cell_pred.get(cell as usize));
    let value = m.cell_value.get(cell as usize);
    let correct = (!value.is_nan()).then_some(value == 1.0);
    // An answer without its correctness (lmms-eval's: the dataset derives it from the
    // prediction and the gold) is compared by the prediction alone.
    pred == c.pred.as_deref() && c.correct.is_none_or(|x| correct == Some(x))
}

/// The name of another replicate the dataset already reads from `file`, the file that
/// replicate `name` is written to: two names that differ only in characters a file name
/// cannot hold (`phase 1`, `phase/1`) share a file, and writing one would replace the
/// other's cells.
pub fn other_name_in(ds: &Dataset, file: &Path, name: &str) -> Option<String> {
    let m = &ds.matrix;
    let reps = &m.replicates;
    let mut from_file = vec![None; m.files.len()];
    reps.cells.iter().find_map(|r| {
        let other = reps.names.name(r.replicate);
        if other == name {
            return None;
        }
        let here = *from_file.get_mut(r.file as usize)?.get_or_insert_with(|| {
            m.files
                .get(r.file as usize)
                .is_some_and(|f| same_file(f, file))
        });
        here.then(|| other.to_string())
    })
}

/// Whether a file the dataset read is `path` (both named from the dataset directory, or
/// one through another spelling of it).
fn same_file(file: &Path, path: &Path) -> bool {
    file == path
        || std::fs::canonicalize(file)
            .ok()
            .zip(std::fs::canonicalize(path).ok())
            .is_some_and(|(a, b)| a == b)
}

/// The dataset's canonical cell of an imported answer, or why there is none (or why the
/// answer cannot be its replicate).
fn canonical(ds: &Dataset, main: Option<u32>, c: &ImportedCell) -> Result<u32, String> {
    let m = &ds.matrix;
    let Some(main) = main else {
        return Err("the dataset has no cells of protocol main".into());
    };
    let model = m
        .models
        .get(&c.model)
        .ok_or_else(|| format!("no model {:?} in the dataset", c.model))?;
    if m.benchmarks.get(&c.benchmark).is_none() {
        return Err(format!("no benchmark {:?} in the dataset", c.benchmark));
    }
    let item = m.find_item(&c.benchmark, &c.item_id).ok_or_else(|| {
        format!(
            "no item {:?} of benchmark {:?} in the dataset",
            c.item_id, c.benchmark
        )
    })?;
    let config = m
        .find_config(main, &c.config)
        .ok_or_else(|| format!("no configuration {:?} in the dataset", c.config))?;
    let group = m.group(main, model);
    let key = |x: u32| (m.cell_item.get(x as usize), m.cell_config.get(x as usize));
    let at = group.partition_point(|&x| key(x) < (item, config));
    let cell = group
        .get(at)
        .copied()
        .filter(|&x| key(x) == (item, config))
        .ok_or_else(|| {
            format!(
                "the dataset has no cell of model {:?} for this item at {:?}",
                c.model, c.config
            )
        })?;
    let frames = m.config(config).frames;
    if frames != c.frames {
        return Err(format!(
            "configuration {:?} has {frames} frames in the dataset, {} in this run",
            c.config, c.frames
        ));
    }
    Ok(cell)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::import::Run;

    /// Model M's answer `pred` to `item` at 8f (gold A), from source `tag`.
    fn answer_at_8f(item: &str, pred: &str, correct: Option<bool>, tag: &str) -> ImportedCell {
        ImportedCell {
            model: "M".into(),
            benchmark: "b".into(),
            item_id: item.into(),
            config: "8f".into(),
            frames: 8,
            pred: Some(pred.into()),
            gold: Some("A".into()),
            correct,
            source_tag: Some(tag.into()),
            frame_idx: None,
            read_at: None,
        }
    }

    /// The import of one run of model M at 8f (file `dir/run`) that gave `answers`.
    fn run_at_8f(dir: &Path, answers: Vec<ImportedCell>, tags_name_runs: bool) -> Import {
        let mut imp = Import::default();
        imp.tags_name_runs = tags_name_runs;
        imp.add_run(Run {
            file: dir.join("run"),
            model: "M".into(),
            config: "8f".into(),
            frames: 8,
            rules: Default::default(),
            cells: answers,
        })
        .expect("run");
        imp
    }

    /// A dataset of model M at 8f on q1 (answered A, right) and q2 (B, wrong), its cells
    /// tagged `tag`, and the import of a run that answered `preds` on them, tagged `tag`.
    fn alike(dir: &Path, tag: &str, preds: [&str; 2], tags_name_runs: bool) -> Matched {
        let line = |item: &str, pred: &str| {
            serde_json::json!({
                "model": "M", "benchmark": "b", "item_id": item, "config": "8f",
                "frames": 8, "pred": pred, "gold": "A", "correct": pred == "A",
                "source_tag": tag,
            })
            .to_string()
        };
        let cells = dir.join("cells.jsonl");
        std::fs::write(
            &cells,
            format!("{}\n{}\n", line("q1", "A"), line("q2", "B")),
        )
        .expect("write");
        let ds = crate::core::dataset::load_dataset(&cells, None).expect("dataset");
        let answers = ["q1", "q2"]
            .iter()
            .zip(preds)
            .map(|(item, pred)| answer_at_8f(item, pred, Some(pred == "A"), tag))
            .collect();
        let imp = run_at_8f(dir, answers, tags_name_runs);
        let wanted = Wanted {
            name: "again",
            nuisance: "rerun",
        };
        match_replicate(&ds, &imp, wanted, None).expect("matched")
    }

    #[test]
    fn a_run_that_is_its_canonical_cells_again_is_refused_or_doubted() {
        let dir = tempfile::tempdir().expect("tmp");
        // A file name two runs may share: every answer alike is doubted, not refused.
        let m = alike(dir.path(), "vlmevalkit:x.xlsx", ["A", "B"], false);
        assert_eq!(m.cells.len(), 2);
        let w = m.warning.expect("doubted");
        assert!(
            w.starts_with("each of the 2 answers kept is its canonical cell's"),
            "{w}"
        );
        // One answer other: a run of its own.
        let m = alike(dir.path(), "vlmevalkit:x.xlsx", ["A", "C"], false);
        assert_eq!((m.cells.len(), m.warning), (2, None));
        // A tag that names the run: the canonical cells' own run, answer by answer.
        let m = alike(dir.path(), "20250101_100000", ["A", "B"], true);
        assert!(m.cells.is_empty());
        assert_eq!(m.left_out.len(), 2);
        assert!(
            m.left_out[0]
                .why
                .contains("both come from run 20250101_100000"),
            "{:?}",
            m.left_out
        );
        // The same tag with an answer of its own: a run started in the same second.
        let m = alike(dir.path(), "20250101_100000", ["A", "C"], true);
        assert_eq!((m.cells.len(), m.left_out.len(), m.warning), (2, 0, None));
    }

    #[test]
    fn a_run_right_and_wrong_where_a_replicate_is_throughout_is_doubted() {
        let dir = tempfile::tempdir().expect("tmp");
        let line = |item: &str, pred: &str, rep: Option<&str>| {
            let mut v = serde_json::json!({
                "model": "M", "benchmark": "b", "item_id": item, "config": "8f",
                "frames": 8, "pred": pred, "gold": "A", "source_tag": "first",
            });
            if let Some(r) = rep {
                v["replicate"] = r.into();
                v["nuisance"] = "rerun".into();
            }
            v.to_string() + "\n"
        };
        // Replicate rerun-1 is right on q1 and q3, wrong on q2 (the canonical run on q1 only).
        let cells = dir.path().join("cells.jsonl");
        let text: String = [
            line("q1", "A", None),
            line("q2", "B", None),
            line("q3", "C", None),
            line("q1", "A", Some("rerun-1")),
            line("q2", "C", Some("rerun-1")),
            line("q3", "A", Some("rerun-1")),
        ]
        .concat();
        std::fs::write(&cells, text).expect("write");
        let ds = crate::core::dataset::load_dataset(&cells, None).expect("dataset");
        let import = |preds: [&str; 3]| {
            let answers = ["q1", "q2", "q3"]
                .iter()
                .zip(preds)
                .map(|(item, pred)| answer_at_8f(item, pred, None, "second"))
                .collect();
            let imp = run_at_8f(dir.path(), answers, false);
            let wanted = Wanted {
                name: "rerun-2",
                nuisance: "rerun",
            };
            match_replicate(&ds, &imp, wanted, None).expect("matched")
        };
        // Right and wrong where rerun-1 is, in other letters and cases (worked out from the
        // prediction and the gold, as the dataset does): doubted.
        let m = import([" a ", "D", "a"]);
        assert_eq!(m.cells.len(), 3);
        let w = m.warning.expect("doubted");
        assert!(
            w.starts_with(
                "each of the 3 multiple-choice answers kept is right or wrong where replicate \"rerun-1\" is"
            ),
            "{w}"
        );
        // Wrong on q3 where rerun-1 is right: a run of its own.
        let m = import(["A", "D", "B"]);
        assert_eq!((m.cells.len(), m.warning), (3, None));
        // Alike on the two cells where rerun-1 agrees with the canonical run only: no doubt
        // either (it differs on q3).
        let m = import(["A", "B", "C"]);
        assert_eq!(m.warning, None);
    }

    #[test]
    fn names_become_one_safe_file_name() {
        assert_eq!(safe_file_name("rerun-1"), "rerun-1");
        assert_eq!(safe_file_name("phase 0.5"), "phase-0.5");
        assert_eq!(safe_file_name("../../etc/x"), "-.-..-etc-x");
        assert_eq!(safe_file_name(".."), "-.");
        assert_eq!(
            replicates_file(Path::new("ds"), "a/b:c", 0),
            Path::new("ds/replicates/a-b-c.jsonl")
        );
    }
}
