//! Wide tables: one row per item, one column per configuration holding the predicted option
//! letter, as released with multi-budget studies (`{model}_{split}_predictions_wide.csv`),
//! joined with a ground-truth CSV (`--gold FILE --gold-key question_id --gold-col answer`).
//!
//! - **Columns.** The item id is `--id-col`, else the gold key. Every other column is a
//!   configuration whose label tells its frames ([`frames_from_label`]: `textonly` → 0,
//!   `16f_151k` → 16); a column whose frames cannot be told is left out with a warning. A
//!   pixel budget in a label (`_151k`) stays in the label only: imported cells carry no
//!   `pixels`.
//! - **Model and benchmark** ([`model_and_split`]): `--model`, else the file name without
//!   `_predictions_wide` and without its split part; `--benchmark`, else that split (the
//!   per-item CSV of the same data, docs/measures.md §1.7, keeps the split as the benchmark), else
//!   `"default"`.
//! - **Cells.** A prediction that is one letter is that letter (even one past the options,
//!   which is then wrong); other text goes through
//!   [`option_letter`](super::letters::option_letter); an empty cell, or text naming no
//!   option, is no prediction and so a wrong answer. Items without a gold answer are skipped.
//!
//! Each (model, benchmark, configuration) is taken from the first file that has it; the
//! gold file itself is never read as a wide table when it lies under a folder imported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::letters::option_letter;
use super::vlmevalkit::{LineIndex, files_under};
use super::{Import, ImportError, ImportedCell, ImportedItem, Run, frames_from_label};

/// Options of the wide-table importer.
#[derive(Debug, Clone, Default)]
pub struct WideOptions {
    /// Ground-truth CSV and its key and answer columns.
    pub gold: PathBuf,
    /// Key column of the ground truth.
    pub gold_key: String,
    /// Answer column of the ground truth.
    pub gold_col: String,
    /// Model name (default: the file name's stem).
    pub model: Option<String>,
    /// Benchmark name (default: "default").
    pub benchmark: Option<String>,
    /// Column of the item id in the wide table (default: the gold key).
    pub id_col: Option<String>,
}

/// Words that end a wide table's file name as its split when no `V{n}` word starts one.
const SPLIT_WORDS: &[&str] = &[
    "short",
    "medium",
    "long",
    "test",
    "val",
    "validation",
    "dev",
    "train",
    "mlvu",
];

/// The model and split a wide table's file name (`stem`, without `.csv`) says: after
/// dropping `_predictions_wide` (or `_wide`, `_predictions`), the split starts at the first
/// word after the first that is `V{n}` (`Qwen2.5-VL-7B_V1_short` → `V1_short`), else it is
/// the last word when that is a split word (`short`, `test`, `val`, ...); the model is what
/// comes before. Without a split the whole stem is the model.
pub fn model_and_split(stem: &str) -> (String, Option<String>) {
    let base = ["_predictions_wide", "_wide", "_predictions"]
        .iter()
        .find_map(|s| stem.strip_suffix(s))
        .filter(|b| !b.is_empty())
        .unwrap_or(stem);
    let words: Vec<&str> = base.split('_').collect();
    let is_version = |w: &str| {
        let mut c = w.chars();
        matches!(c.next(), Some('V' | 'v'))
            && !c.as_str().is_empty()
            && c.as_str().bytes().all(|b| b.is_ascii_digit())
    };
    let at = (1..words.len())
        .find(|&i| is_version(words[i]))
        .or_else(|| {
            let last = words.len().checked_sub(1).filter(|&i| i >= 1)?;
            SPLIT_WORDS
                .contains(&words[last].to_ascii_lowercase().as_str())
                .then_some(last)
        });
    match at {
        Some(i) if !words[..i].join("_").is_empty() => {
            (words[..i].join("_"), Some(words[i..].join("_")))
        }
        _ => (base.to_string(), None),
    }
}

/// How the columns of a wide table are read.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    /// The position of the item id column.
    pub id: usize,
    /// (position, label, frames) of each configuration column.
    pub configs: Vec<(usize, String, u64)>,
    /// Columns left out: no frame count in the name, no name, or a repeated label.
    pub others: Vec<String>,
}

/// Sorts a wide table's header (names trimmed) into the id column, configuration columns and
/// the rest; the error says the id column is missing.
pub fn classify_columns(headers: &[String], id_col: &str) -> Result<Columns, String> {
    let id = headers.iter().position(|h| h == id_col).ok_or_else(|| {
        format!(
            "no item id column {id_col:?} (columns: {}); name it with --id-col",
            headers.join(", ")
        )
    })?;
    let mut configs: Vec<(usize, String, u64)> = Vec::new();
    let mut others = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        if i == id {
            continue;
        }
        if h.is_empty() {
            others.push(format!("(unnamed column {})", i + 1));
        } else if configs.iter().any(|(_, l, _)| l == h) {
            others.push(format!("{h} (repeated)"));
        } else if let Some(f) = frames_from_label(h) {
            configs.push((i, h.clone(), f));
        } else {
            others.push(h.clone());
        }
    }
    Ok(Columns {
        id,
        configs,
        others,
    })
}

/// What a wide-table cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellAnswer {
    /// Nothing: no option could be parsed from the model's answer.
    Empty,
    /// An option letter (upper case).
    Letter(char),
    /// Text that names no option.
    NoOption,
}

/// Reads a wide-table cell: one letter is that letter (even past the options), other text
/// goes through [`option_letter`].
pub fn cell_answer(text: &str) -> CellAnswer {
    let t = text.trim();
    let mut chars = t.chars();
    match (chars.next(), chars.next()) {
        (None, _) => CellAnswer::Empty,
        (Some(c), None) if c.is_ascii_alphabetic() => CellAnswer::Letter(c.to_ascii_uppercase()),
        _ => option_letter(t, None).map_or(CellAnswer::NoOption, CellAnswer::Letter),
    }
}

/// The name of a file as messages show it.
fn shown(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The bytes of a CSV file; a UTF-16 one is refused (its header would be one column of
/// NULs, every column missing).
fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let data = crate::core::fsread::read(path, crate::core::fsread::IMPORT)
        .map_err(|e| format!("cannot read it: {e}"))?;
    match crate::core::load::encoding::wide(&data) {
        Some(w) => Err(w.refusal()),
        None => Ok(data),
    }
}

/// A CSV reader that allows rows of another length, so one bad row is skipped alone.
fn csv_reader(data: &[u8]) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new().flexible(true).from_reader(data)
}

/// The header of a CSV, names trimmed (and a byte-order mark dropped).
fn header(reader: &mut csv::Reader<&[u8]>) -> Result<Vec<String>, String> {
    Ok(reader
        .headers()
        .map_err(|e| format!("cannot read its header: {e}"))?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').trim().to_string())
        .collect())
}

/// Reads the ground truth: key → answer letter. A file that cannot be read, or lacks a
/// column, stops the import (no table can be scored without it); bad rows are skipped.
fn read_gold(opts: &WideOptions, imp: &mut Import) -> Result<BTreeMap<String, char>, ImportError> {
    let path = &opts.gold;
    let fail = |why: String| {
        ImportError::Other(format!(
            "ground truth {}: {why}",
            crate::core::text::sanitize(&path.display().to_string())
        ))
    };
    let data = read_bytes(path).map_err(fail)?;
    let mut lines = LineIndex::new(&data);
    let mut reader = csv_reader(&data);
    let headers = header(&mut reader).map_err(fail)?;
    let find = |name: &str, flag: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            fail(format!(
                "no column {name:?} (columns: {}); name it with {flag}",
                headers.join(", ")
            ))
        })
    };
    let key = find(&opts.gold_key, "--gold-key")?;
    let col = find(&opts.gold_col, "--gold-col")?;
    let file = shown(path);
    let mut gold = BTreeMap::new();
    for record in reader.records() {
        let r = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map(|p| lines.line(p.byte()));
                imp.skip(path, line, format!("{file}: unreadable row: {e}"));
                continue;
            }
        };
        let line = r.position().map(|p| lines.line(p.byte()));
        if r.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let (Some(k), Some(a)) = (r.get(key).map(str::trim), r.get(col).map(str::trim)) else {
            imp.skip(path, line, format!("{file}: row shorter than the header"));
            continue;
        };
        if k.is_empty() {
            imp.skip(path, line, format!("{file}: no {}", opts.gold_key));
            continue;
        }
        let CellAnswer::Letter(letter) = cell_answer(a) else {
            imp.skip(
                path,
                line,
                format!("{file}: the answer is not an option letter"),
            );
            continue;
        };
        match gold.get(k) {
            Some(&earlier) if earlier != letter => {
                imp.skip(
                    path,
                    line,
                    format!("{file}: a second, different answer for an item (the first is kept)"),
                );
            }
            Some(_) => {}
            None => {
                gold.insert(k.to_string(), letter);
            }
        }
    }
    Ok(gold)
}

/// Imports wide tables; `progress` is called with the number of rows read since the last call.
pub fn import(
    paths: &[PathBuf],
    opts: &WideOptions,
    imp: &mut Import,
    progress: &dyn Fn(u64),
) -> Result<(), ImportError> {
    let mut state = Tables {
        gold: read_gold(opts, imp)?,
        id_col: opts.id_col.as_deref().unwrap_or(&opts.gold_key),
        opts,
        claimed: BTreeSet::new(),
        runs: BTreeMap::new(),
    };
    let gold_file = std::fs::canonicalize(&opts.gold).ok();
    let mut seen = BTreeSet::new();
    for path in files_under(paths, &["csv"])? {
        let canonical = std::fs::canonicalize(&path).ok();
        if canonical.is_some() && canonical == gold_file {
            continue;
        }
        if !seen.insert(canonical.unwrap_or_else(|| path.clone())) {
            continue;
        }
        if let Err(why) = state.read(&path, imp, progress) {
            imp.skip(&path, None, format!("{}: {why}", shown(&path)));
        }
    }
    for ((model, config), (file, frames, cells)) in state.runs {
        imp.add_run(Run {
            file,
            model,
            config,
            frames,
            rules: Default::default(),
            cells,
        })?;
    }
    Ok(())
}

/// What the wide tables read so far give.
struct Tables<'a> {
    opts: &'a WideOptions,
    id_col: &'a str,
    gold: BTreeMap<String, char>,
    /// (model, benchmark, configuration) already read, so a later file cannot give them again.
    claimed: BTreeSet<(String, String, String)>,
    /// The cells of each (model, configuration), with the first file and the frames.
    runs: BTreeMap<(String, String), (PathBuf, u64, Vec<ImportedCell>)>,
}

impl Tables<'_> {
    /// Reads one wide table; the error says why none of it can be used.
    fn read(
        &mut self,
        path: &Path,
        imp: &mut Import,
        progress: &dyn Fn(u64),
    ) -> Result<(), String> {
        let opts = self.opts;
        let id_col = self.id_col;
        let data = read_bytes(path)?;
        let mut lines = LineIndex::new(&data);
        let mut reader = csv_reader(&data);
        let headers = header(&mut reader)?;
        let mut columns = classify_columns(&headers, id_col)?;
        let file = shown(path);
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (stem_model, split) = model_and_split(&stem);
        let model = opts.model.clone().unwrap_or(stem_model);
        let benchmark = opts
            .benchmark
            .clone()
            .or(split)
            .unwrap_or_else(|| "default".to_string());
        if !columns.others.is_empty() {
            imp.warnings.push(format!(
                "{file}: column(s) {} left out: their names give no frame count",
                columns.others.join(", ")
            ));
        }
        let claimed = &mut self.claimed;
        columns.configs.retain(|(_, label, _)| {
            let fresh = claimed.insert((model.clone(), benchmark.clone(), label.clone()));
            if !fresh {
                imp.skip(
                    path,
                    None,
                    format!(
                        "{file}: column {label} left out: an earlier file holds model {model:?} on {benchmark} under it"
                    ),
                );
            }
            fresh
        });
        if columns.configs.is_empty() {
            return Err("no configuration column to read".into());
        }

        let mut unread = 0usize;
        let mut pending = 0u64;
        let read_from: std::sync::Arc<Path> = path.into();
        for record in reader.records() {
            pending += 1;
            if pending == 4096 {
                progress(pending);
                pending = 0;
            }
            let r = match record {
                Ok(r) => r,
                Err(e) => {
                    let line = e.position().map(|p| lines.line(p.byte()));
                    imp.skip(path, line, format!("{file}: unreadable row: {e}"));
                    continue;
                }
            };
            let line = r.position().map(|p| lines.line(p.byte()));
            if r.iter().all(|f| f.trim().is_empty()) {
                continue;
            }
            if r.len() != headers.len() {
                imp.skip(
                    path,
                    line,
                    format!(
                        "{file}: {} fields where the header has {}",
                        r.len(),
                        headers.len()
                    ),
                );
                continue;
            }
            let Some(id) = r.get(columns.id).map(str::trim).filter(|s| !s.is_empty()) else {
                imp.skip(path, line, format!("{file}: no {id_col}"));
                continue;
            };
            let Some(&answer) = self.gold.get(id) else {
                imp.skip(
                    path,
                    line,
                    format!("{file}: the item has no answer in {}", shown(&opts.gold)),
                );
                continue;
            };
            let gold = answer.to_string();
            imp.add_item(
                &benchmark,
                id,
                ImportedItem {
                    gold: Some(gold.clone()),
                    ..Default::default()
                },
            );
            for (at, label, frames) in &columns.configs {
                let pred = match cell_answer(r.get(*at).unwrap_or_default()) {
                    CellAnswer::Letter(c) => Some(c.to_string()),
                    CellAnswer::Empty => None,
                    CellAnswer::NoOption => {
                        unread += 1;
                        None
                    }
                };
                self.runs
                    .entry((model.clone(), label.clone()))
                    .or_insert_with(|| (path.to_path_buf(), *frames, Vec::new()))
                    .2
                    .push(ImportedCell {
                        model: model.clone(),
                        benchmark: benchmark.clone(),
                        item_id: id.to_string(),
                        config: label.clone(),
                        frames: *frames,
                        correct: Some(pred.as_deref() == Some(gold.as_str())),
                        pred,
                        gold: Some(gold.clone()),
                        source_tag: Some(format!("wide-csv:{file}")),
                        frame_idx: None,
                        read_at: super::ReadAt::new(&read_from, line),
                    });
            }
        }
        progress(pending);
        if unread > 0 {
            imp.warnings.push(format!(
                "{file}: {unread} cell(s) name no option; counted as wrong answers"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn model_and_split_from_file_names() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            (
                "Qwen2.5-VL-7B_V1_short_predictions_wide",
                "Qwen2.5-VL-7B",
                Some("V1_short"),
            ),
            (
                "LLaVA-NeXT-Video-7B_V1_medium_predictions_wide",
                "LLaVA-NeXT-Video-7B",
                Some("V1_medium"),
            ),
            (
                "InternVL3-8B_V2_predictions_wide",
                "InternVL3-8B",
                Some("V2"),
            ),
            (
                "InternVL3-8B_MLVU_predictions_wide",
                "InternVL3-8B",
                Some("MLVU"),
            ),
            ("llava_ov_7b_test_wide", "llava_ov_7b", Some("test")),
            ("llava_ov_7b_predictions", "llava_ov_7b", None),
            ("my-model", "my-model", None),
            ("model_short", "model", Some("short")),
            ("_predictions_wide", "_predictions_wide", None),
            ("short", "short", None),
        ];
        for (stem, model, split) in cases {
            assert_eq!(
                model_and_split(stem),
                (model.to_string(), split.map(String::from)),
                "{stem}"
            );
        }
    }

    #[test]
    fn columns_are_sorted_into_id_configs_and_others() {
        let c = classify_columns(
            &h(&[
                "question_id",
                "textonly",
                "16f_151k",
                "notes",
                "",
                "32f",
                "16f_151k",
                "1fps",
            ]),
            "question_id",
        )
        .expect("columns");
        assert_eq!(c.id, 0);
        assert_eq!(
            c.configs,
            vec![
                (1, "textonly".to_string(), 0),
                (2, "16f_151k".to_string(), 16),
                (5, "32f".to_string(), 32)
            ]
        );
        assert_eq!(
            c.others,
            h(&["notes", "(unnamed column 5)", "16f_151k (repeated)", "1fps"])
        );
        // The id column may sit anywhere, and is never a configuration.
        let c = classify_columns(&h(&["8f", "sample_id"]), "sample_id").expect("columns");
        assert_eq!((c.id, c.configs.len()), (1, 1));
        let err = classify_columns(&h(&["id", "8f"]), "question_id").expect_err("no id");
        assert!(err.contains("--id-col") && err.contains("id, 8f"), "{err}");
    }

    #[test]
    fn cell_answers() {
        use CellAnswer::*;
        assert_eq!(cell_answer("B"), Letter('B'));
        assert_eq!(cell_answer(" c "), Letter('C'));
        assert_eq!(cell_answer("E"), Letter('E'));
        assert_eq!(cell_answer(""), Empty);
        assert_eq!(cell_answer("  "), Empty);
        assert_eq!(cell_answer("(D)"), Letter('D'));
        assert_eq!(cell_answer("The answer is A"), Letter('A'));
        assert_eq!(cell_answer("no idea"), NoOption);
    }
}
