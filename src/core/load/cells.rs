//! The native cells JSONL reader (docs/measures.md §1.1, docs/formats.md §1): one cell per
//! non-blank line, streamed; every problem of every line is collected with its line and field.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::CellSink;
use super::chunk::{BLOCK, Lines, read_blocks};
use super::json::{FieldCheck, J, PlainRecord, is_missing, read_record};
use crate::core::diag::Diagnostics;
use crate::core::matrix::{CellInput, Gold, Task, TextKeys};

/// The fields of a cell line as written; unknown fields are ignored.
#[derive(Deserialize, Default, Debug, PartialEq)]
struct RawCell<'a> {
    #[serde(borrow, default)]
    model: J<'a>,
    #[serde(borrow, default)]
    item_id: J<'a>,
    #[serde(borrow, default)]
    benchmark: J<'a>,
    #[serde(borrow, default)]
    config: J<'a>,
    #[serde(borrow, default)]
    frames: J<'a>,
    #[serde(borrow, default)]
    budget: J<'a>,
    #[serde(borrow, default)]
    pixels: J<'a>,
    #[serde(borrow, default)]
    protocol: J<'a>,
    #[serde(borrow, default)]
    task: J<'a>,
    #[serde(borrow, default)]
    pred: J<'a>,
    #[serde(borrow, default)]
    gold: J<'a>,
    #[serde(borrow, default)]
    correct: J<'a>,
    #[serde(borrow, default)]
    score: J<'a>,
    #[serde(borrow, default)]
    confidence: J<'a>,
    #[serde(borrow, default)]
    blind: J<'a>,
    #[serde(borrow, default)]
    frame_idx: J<'a>,
    #[serde(borrow, default)]
    source_tag: J<'a>,
    #[serde(borrow, default)]
    protocol_note: J<'a>,
    #[serde(borrow, default)]
    replicate: J<'a>,
    #[serde(borrow, default)]
    nuisance: J<'a>,
    #[serde(borrow, default)]
    order: J<'a>,
    #[serde(borrow, default)]
    cluster: J<'a>,
}

/// The fields of [`RawCell`], as a line names them, in the order [`write_cell`] writes them.
const FIELDS: [&str; 22] = [
    "model",
    "benchmark",
    "item_id",
    "config",
    "frames",
    "budget",
    "pixels",
    "protocol",
    "task",
    "pred",
    "gold",
    "correct",
    "score",
    "confidence",
    "blind",
    "frame_idx",
    "source_tag",
    "protocol_note",
    "replicate",
    "nuisance",
    "order",
    "cluster",
];

impl<'a> RawCell<'a> {
    /// The fields, in the order of [`FIELDS`].
    fn fields(&self) -> [&J<'a>; FIELDS.len()] {
        [
            &self.model,
            &self.benchmark,
            &self.item_id,
            &self.config,
            &self.frames,
            &self.budget,
            &self.pixels,
            &self.protocol,
            &self.task,
            &self.pred,
            &self.gold,
            &self.correct,
            &self.score,
            &self.confidence,
            &self.blind,
            &self.frame_idx,
            &self.source_tag,
            &self.protocol_note,
            &self.replicate,
            &self.nuisance,
            &self.order,
            &self.cluster,
        ]
    }
}

impl<'a> PlainRecord<'a> for RawCell<'a> {
    fn read_plain(&mut self, text: &'a str) -> bool {
        let mut slots = [
            &mut self.model,
            &mut self.benchmark,
            &mut self.item_id,
            &mut self.config,
            &mut self.frames,
            &mut self.budget,
            &mut self.pixels,
            &mut self.protocol,
            &mut self.task,
            &mut self.pred,
            &mut self.gold,
            &mut self.correct,
            &mut self.score,
            &mut self.confidence,
            &mut self.blind,
            &mut self.frame_idx,
            &mut self.source_tag,
            &mut self.protocol_note,
            &mut self.replicate,
            &mut self.nuisance,
            &mut self.order,
            &mut self.cluster,
        ];
        super::json::scan_fields(text, &FIELDS, &mut slots)
    }
}

/// A whole number >= 0 (also when written `8.0`).
fn whole(v: &J<'_>) -> Option<u64> {
    v.as_integer().and_then(|i| u64::try_from(i).ok())
}

/// A cell's fields as a plain line gives them, each of a type [`validate`] accepts: the
/// fast path of well-formed lines, which are most lines. `None` is absent and null alike,
/// as [`validate`] takes them in every field it accepts.
#[derive(Default)]
struct PlainCell<'a> {
    model: Option<&'a str>,
    benchmark: Option<&'a str>,
    item_id: Option<&'a str>,
    config: Option<&'a str>,
    frames: Option<u64>,
    budget: Option<f64>,
    pixels: Option<u64>,
    protocol: Option<&'a str>,
    task: Option<Task>,
    pred: Option<&'a str>,
    /// A string, or a list of strings (the references of an open item).
    gold: Option<Result<&'a str, Vec<&'a str>>>,
    correct: Option<bool>,
    score: Option<f64>,
    confidence: Option<f64>,
    blind: Option<&'a str>,
    frame_idx: Option<Vec<u64>>,
    source_tag: Option<&'a str>,
    protocol_note: Option<&'a str>,
    replicate: Option<&'a str>,
    nuisance: Option<&'a str>,
    order: Option<Vec<u64>>,
    cluster: Option<&'a str>,
}

impl<'a> PlainCell<'a> {
    /// [`PlainCell::cell_as`] with no layout learnt.
    #[cfg(test)]
    fn cell(text: &'a str) -> Option<CellInput<'a>> {
        Self::cell_as(text, &mut super::json::Shape::default())
    }

    /// The cell of a plain line whose every field [`validate`] would accept as it stands;
    /// `None` for any other line, which [`read_record`] and [`validate`] then read and
    /// report. Where it gives a cell, it is the cell [`validate`] gives (tested). A line of
    /// the layout `shape` learnt is read by that layout, and the layout of a line read
    /// otherwise is learnt (`json::scan_named_as`).
    fn cell_as(text: &'a str, shape: &mut super::json::Shape) -> Option<CellInput<'a>> {
        let mut c = PlainCell::default();
        if !super::json::scan_named_as(text, &FIELDS, shape, &mut c, |c, i, v| c.set(i, &v)) {
            return None;
        }
        c.input()
    }

    /// The cell of a record read otherwise (a Parquet row) whose every field [`validate`]
    /// would accept as it stands; `None` for any other, which [`validate`] then reports.
    /// The cell borrows the record's text, not the record.
    fn of_raw(raw: &RawCell<'a>) -> Option<CellInput<'a>> {
        let mut c = PlainCell::default();
        for (i, v) in raw.fields().into_iter().enumerate() {
            if !matches!(v, J::Missing) && !c.set(i, v) {
                return None;
            }
        }
        c.input()
    }

    /// Takes the value of `FIELDS[field]`; `false` when [`validate`] would refuse it.
    fn set(&mut self, field: usize, v: &J<'a>) -> bool {
        fn text<'a>(slot: &mut Option<&'a str>, v: &J<'a>) -> bool {
            match v {
                J::Null => true,
                J::Str(std::borrow::Cow::Borrowed(s)) => {
                    *slot = Some(s);
                    true
                }
                _ => false,
            }
        }
        fn count(slot: &mut Option<u64>, v: &J<'_>) -> bool {
            *slot = match v {
                J::Null => return true,
                v => whole(v),
            };
            slot.is_some()
        }
        fn number(slot: &mut Option<f64>, v: &J<'_>, range: std::ops::RangeInclusive<f64>) -> bool {
            *slot = match v {
                J::Null => return true,
                v => v.as_f64().filter(|x| range.contains(x)),
            };
            slot.is_some()
        }
        // In the order of FIELDS.
        match field {
            0 => text(&mut self.model, v),
            1 => text(&mut self.benchmark, v),
            2 => text(&mut self.item_id, v),
            3 => text(&mut self.config, v),
            4 => !matches!(v, J::Null) && count(&mut self.frames, v),
            5 => number(&mut self.budget, v, f64::NEG_INFINITY..=f64::INFINITY),
            6 => count(&mut self.pixels, v),
            7 => text(&mut self.protocol, v),
            8 => {
                self.task = match v.as_str() {
                    Some("mcq") => Some(Task::Mcq),
                    Some("open") => Some(Task::Open),
                    _ => None,
                };
                self.task.is_some() || matches!(v, J::Null)
            }
            9 => text(&mut self.pred, v),
            10 => match v {
                J::Arr(items) => {
                    let refs: Option<Vec<&'a str>> = items
                        .iter()
                        .map(|x| match x {
                            J::Str(std::borrow::Cow::Borrowed(s)) => Some(*s),
                            _ => None,
                        })
                        .collect();
                    self.gold = refs.map(Err);
                    self.gold.is_some()
                }
                v => {
                    let mut one = None;
                    let taken = text(&mut one, v);
                    self.gold = one.map(Ok);
                    taken
                }
            },
            11 => match v {
                J::Null => true,
                J::Bool(b) => {
                    self.correct = Some(*b);
                    true
                }
                _ => false,
            },
            12 => number(&mut self.score, v, 0.0..=100.0),
            13 => number(&mut self.confidence, v, 0.0..=1.0),
            14 => text(&mut self.blind, v),
            15 => match v {
                J::Null => true,
                J::Arr(items) => {
                    self.frame_idx = items.iter().map(whole).collect();
                    self.frame_idx.is_some()
                }
                _ => false,
            },
            16 => text(&mut self.source_tag, v),
            17 => text(&mut self.protocol_note, v),
            18 => text(&mut self.replicate, v),
            19 => text(&mut self.nuisance, v),
            20 => match v {
                J::Null => true,
                J::Arr(items) => {
                    self.order = items.iter().map(whole).collect();
                    self.order.as_deref().is_some_and(is_order)
                }
                _ => false,
            },
            21 => text(&mut self.cluster, v),
            _ => true,
        }
    }

    /// Whether [`PlainCell::input`] gives a cell: the required fields are there.
    fn complete(&self) -> bool {
        let given = |s: Option<&str>| s.is_some_and(|s| !s.is_empty());
        self.frames.is_some()
            && given(self.model)
            && given(self.item_id)
            && given(self.config)
            && given(self.replicate) == given(self.nuisance)
    }

    /// The cell, with the defaults [`validate`] gives; `None` where it would refuse it.
    /// Taken out of the read cell (its lists moved, not copied), which is left spent: a
    /// batch's cells are taken where they lie, not moved out one by one (each is a few
    /// hundred bytes).
    fn input(&mut self) -> Option<CellInput<'a>> {
        let given = |s: Option<&'a str>| s.filter(|s| !s.is_empty());
        let frames = self.frames?;
        // A replicate without its nuisance, or a nuisance without a replicate: refused by
        // `validate`, which names the field.
        if given(self.replicate).is_some() != given(self.nuisance).is_some() {
            return None;
        }
        let task = self.task.unwrap_or(if self.score.is_some() {
            Task::Open
        } else {
            Task::Mcq
        });
        Some(CellInput {
            model: given(self.model)?,
            item_id: given(self.item_id)?,
            benchmark: given(self.benchmark).unwrap_or("default"),
            config: given(self.config)?,
            protocol: given(self.protocol).unwrap_or("main"),
            frames,
            budget: self.budget.unwrap_or(frames as f64),
            pixels: self.pixels,
            task,
            pred: self.pred,
            // As validate takes a list: several references of an open item, else unusable.
            gold: match self.gold.take() {
                None => Gold::None,
                Some(Ok(g)) => Gold::One(g),
                Some(Err(refs)) if !refs.is_empty() && task == Task::Open => Gold::Many(refs),
                Some(Err(_)) => Gold::Unusable,
            },
            correct: self.correct,
            score: self.score,
            confidence: self.confidence,
            blind: self.blind,
            frame_idx: self.frame_idx.take(),
            source_tag: self.source_tag,
            protocol_note: self.protocol_note,
            replicate: given(self.replicate),
            nuisance: given(self.nuisance),
            order: self.order.take(),
            cluster: given(self.cluster),
        })
    }
}

/// Whether option indices are an order of the options (docs/measures.md §16.1): each of
/// `0..len` once.
fn is_order(order: &[u64]) -> bool {
    let mut seen = vec![false; order.len()];
    order.iter().all(|&o| {
        let fresh = seen.get(o as usize).is_some_and(|s| !s);
        if fresh {
            seen[o as usize] = true;
        }
        fresh
    })
}

/// Validates one parsed line into a cell; `None` (with diagnostics) when it is rejected.
fn validate<'a>(
    raw: &'a RawCell<'a>,
    diags: &mut Diagnostics,
    file: &Arc<Path>,
    line: u64,
) -> Option<CellInput<'a>> {
    let mut ck = FieldCheck::new(diags, file, line);
    let model = ck.required_str("model", &raw.model);
    let item_id = ck.required_str("item_id", &raw.item_id);
    let config = ck.required_str("config", &raw.config);
    let benchmark = ck.defaulted_str("benchmark", &raw.benchmark, "default");
    let protocol = ck.defaulted_str("protocol", &raw.protocol, "main");
    let frames = ck.non_negative_int("frames", &raw.frames, false);
    let budget = if is_missing(&raw.budget) || matches!(raw.budget, J::Null) {
        frames.map(|f| f as f64)
    } else {
        match raw.budget.as_f64() {
            Some(b) => Some(b),
            None => {
                ck.fail(
                    "budget",
                    format!("expected a number, found {}", raw.budget.kind()),
                );
                None
            }
        }
    };
    let pixels = ck.non_negative_int("pixels", &raw.pixels, true);
    let score = ck.ranged("score", &raw.score, 0.0, 100.0);
    let confidence = ck.ranged("confidence", &raw.confidence, 0.0, 1.0);
    let correct = match &raw.correct {
        v if is_missing(v) => None,
        J::Null => None,
        J::Bool(b) => Some(*b),
        other => {
            ck.fail(
                "correct",
                format!("expected true, false or null, found {other}"),
            );
            None
        }
    };
    let task = match &raw.task {
        v if is_missing(v) => None,
        J::Null => None,
        J::Str(s) if s == "mcq" => Some(Task::Mcq),
        J::Str(s) if s == "open" => Some(Task::Open),
        other => {
            ck.fail(
                "task",
                format!("expected \"mcq\" or \"open\", found {other}"),
            );
            None
        }
    }
    .unwrap_or(if score.is_some() {
        Task::Open
    } else {
        Task::Mcq
    });
    let pred = ck.opt_str("pred", &raw.pred);
    let blind = ck.opt_str("blind", &raw.blind);
    let source_tag = ck.opt_str("source_tag", &raw.source_tag);
    let protocol_note = ck.opt_str("protocol_note", &raw.protocol_note);
    let gold = match &raw.gold {
        v if is_missing(v) => Gold::None,
        J::Null => Gold::None,
        J::Str(s) => Gold::One(s),
        J::Arr(items) => {
            // A list is well-typed only with strings in it; an empty list, or a list on a
            // multiple-choice cell, leaves the cell without a usable gold: invalid (§1.3).
            let strs: Option<Vec<&str>> = items.iter().map(J::as_str).collect();
            match strs {
                Some(v) if !v.is_empty() && task == Task::Open => Gold::Many(v),
                Some(_) => Gold::Unusable,
                None => {
                    ck.fail("gold", "a list of references must hold only strings".into());
                    Gold::None
                }
            }
        }
        other => {
            ck.fail(
                "gold",
                format!("expected a string or null, found {}", other.kind()),
            );
            Gold::None
        }
    };
    let frame_idx = match &raw.frame_idx {
        v if is_missing(v) => None,
        J::Null => None,
        J::Arr(items) => {
            let idx: Option<Vec<u64>> = items.iter().map(whole).collect();
            if idx.is_none() {
                ck.fail("frame_idx", "must be an array of integers >= 0".into());
            }
            idx
        }
        other => {
            ck.fail(
                "frame_idx",
                format!("expected an array of integers, found {}", other.kind()),
            );
            None
        }
    };
    let replicate = ck.opt_name("replicate", &raw.replicate);
    let nuisance = ck.opt_name("nuisance", &raw.nuisance);
    let cluster = ck.opt_name("cluster", &raw.cluster);
    // A field of the wrong type is reported as such, not again as a missing pair.
    let typed = |v: &J<'_>| is_missing(v) || matches!(v, J::Null | J::Str(_));
    if typed(&raw.replicate) && typed(&raw.nuisance) {
        super::json::check_replicate(&mut ck, replicate, nuisance);
    }
    let order = match &raw.order {
        v if is_missing(v) => None,
        J::Null => None,
        J::Arr(items) => {
            let idx: Option<Vec<u64>> = items.iter().map(whole).collect();
            if !idx.as_deref().is_some_and(is_order) {
                ck.fail(
                    "order",
                    format!(
                        "must hold each option index 0 to {} once",
                        items.len().saturating_sub(1)
                    ),
                );
            }
            idx
        }
        other => {
            ck.fail(
                "order",
                format!("expected an array of integers, found {}", other.kind()),
            );
            None
        }
    };
    if !ck.ok {
        return None;
    }
    Some(CellInput {
        model,
        item_id,
        benchmark,
        config,
        protocol,
        frames: frames?,
        budget: budget?,
        pixels,
        task,
        pred,
        gold,
        correct,
        score,
        confidence,
        blind,
        frame_idx,
        source_tag,
        protocol_note,
        replicate,
        nuisance,
        order,
        cluster,
    })
}

/// The key of a replicate's name in a cells line.
const REPLICATE_KEY: &[u8] = b"\"replicate\"";

/// Whether a cells line is a replicate, told from its bytes without parsing it: its only
/// object (the line holds one `{`) has the key `replicate` with a string value that is not
/// empty. In valid JSON those bytes can mean nothing else: a string cannot hold an unescaped
/// quote, nor an array a key. A line of invalid JSON may pass too: the whole read, which
/// takes up every line passed over, names its problem.
/// `keys` are where [`REPLICATE_KEY`] starts in the line, found with those of the whole
/// block.
fn names_a_replicate(line: &[u8], mut keys: impl Iterator<Item = usize>) -> bool {
    let named = keys.any(|at| {
        let value = line[at + REPLICATE_KEY.len()..]
            .trim_ascii_start()
            .strip_prefix(b":")
            .map(<[u8]>::trim_ascii_start);
        matches!(value, Some([b'"', c, ..]) if *c != b'"')
    });
    named
        && memchr::memchr(b'{', line)
            .is_some_and(|open| memchr::memchr(b'{', &line[open + 1..]).is_none())
}

/// Parses a block of cells JSONL (whole lines) whose first line is `first_line`. When the
/// sink skims replicates ([`CellSink::skims_replicates`]), the lines that certainly are
/// replicates are passed over unread and counted instead ([`CellSink::skip_replicate`]).
pub fn parse_block<S: CellSink>(block: &[u8], first_line: u64, file: &Arc<Path>, sink: &mut S) {
    // One UTF-8 check for the block when it passes (lines are cut at `\n`, so on character
    // boundaries); line by line otherwise.
    let whole = std::str::from_utf8(block).ok();
    let mut shape = super::json::Shape::default();
    // Where the block names a replicate, when the sink passes over replicate lines: one
    // search of the block, not one per line.
    let mut marks = sink
        .skims_replicates()
        .then(|| memchr::memmem::find_iter(block, REPLICATE_KEY))
        .into_iter()
        .flatten()
        .peekable();
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', block).chain(std::iter::once(block.len()));
    for (i, end) in ends.enumerate() {
        let (from, bytes) = (start, &block[start..end]);
        start = end + 1;
        let text = bytes.trim_ascii();
        if text.is_empty() {
            continue;
        }
        while marks.next_if(|&at| at < from).is_some() {}
        let lead = from + bytes.len() - bytes.trim_ascii_start().len();
        let keys = std::iter::from_fn(|| marks.next_if(|&at| at < end)).map(|at| at - lead);
        if names_a_replicate(text, keys) {
            sink.skip_replicate();
            continue;
        }
        sink.count_record();
        let line = first_line + i as u64;
        let str = super::chunk::text_at(block, whole, lead..lead + text.len());
        if let Some(cell) = str.and_then(|t| PlainCell::cell_as(t, &mut shape)) {
            sink.push(&cell, line);
            continue;
        }
        let Some(raw) = read_record::<RawCell>(text, str, "one cell", file, line, sink.diags())
        else {
            continue;
        };
        if let Some(cell) = validate(&raw, sink.diags(), file, line) {
            sink.push(&cell, line);
        }
    }
}

/// Reads a cells JSONL stream into the sink, parsing blocks in parallel. A byte-order mark
/// at the start is skipped.
pub fn read_cells<S: CellSink>(
    reader: impl Read,
    size: Option<u64>,
    sink: &mut S,
    file: &Arc<Path>,
) -> std::io::Result<()> {
    let (wide, reader) = super::encoding::peek(reader)?;
    if let Some(w) = wide {
        sink.diags().error(file, None, None, w.refusal());
        return Ok(());
    }
    if let Some(why) = other_format(reader.get_ref().0.get_ref()) {
        sink.diags().error(file, Some(1), None, why);
        return Ok(());
    }
    read_blocks(
        super::json::skip_bom(reader)?,
        size,
        BLOCK,
        &Lines,
        1,
        sink,
        &|b: &[u8], line, s: &mut S| parse_block(b, line, file, s),
    )
}

/// Why a file read as cells JSON Lines is another format, when its start says so plainly: a
/// Parquet or a ZIP (xlsx) file's magic bytes, or a first line with no `{` that separates
/// fields by commas or tabs (a CSV or TSV header). One message for the file, with how to
/// read it, instead of a "malformed JSON" error on every line.
fn other_format(head: &[u8]) -> Option<String> {
    let head = super::json::strip_bom(head);
    if head.starts_with(b"PAR1") {
        return Some(
            "this is a Parquet file, not cells JSON Lines: name it .parquet, or give --input-format parquet".into(),
        );
    }
    if head.starts_with(b"PK\x03\x04") {
        return Some(
            "this is a ZIP archive (an .xlsx workbook?), not cells JSON Lines: `frameaudit import vlmevalkit` reads VLMEvalKit's workbooks, `import wide-csv` tables saved as CSV".into(),
        );
    }
    // The first line that is not blank (as much of it as the peek holds): a line of cells
    // starts with `{`, so one that starts otherwise and separates two or more fields by
    // commas or tabs is a table's header (quoted, as R writes it, or not). A first line of
    // JSON gone wrong is left to the line-by-line read.
    let text = String::from_utf8_lossy(head);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let sep = if first.contains('\t') { '\t' } else { ',' };
    if first.starts_with(['{', '[']) || first.matches(sep).count() < 2 {
        return None;
    }
    let fields: Vec<&str> = first
        .split(sep)
        .map(|f| f.trim().trim_matches('"'))
        .collect();
    let (kind, how) = if sep == '\t' {
        (
            "TSV",
            "saved comma-separated, a per-item table is read as per-item CSV",
        )
    } else {
        (
            "CSV",
            "a per-item CSV is read by its .csv name or --input-format per-item-csv",
        )
    };
    Some(format!(
        "the first line is not JSON but a {kind} header, it seems ({}{}): {how} (docs/formats.md), a wide table by `frameaudit import wide-csv`",
        crate::core::text::sanitize(
            &fields
                .iter()
                .take(4)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        if fields.len() > 4 { ", …" } else { "" }
    ))
}

/// The columns the Parquet reader looks up: those frameaudit writes (docs/formats.md §7).
const PARQUET_FIELDS: [&str; 23] = {
    let mut names = [""; 23];
    let mut i = 0;
    while i < names.len() {
        names[i] = PARQUET_COLUMNS[i].0;
        i += 1;
    }
    names
};

/// Reads a Parquet file of cells into the sink: each row goes through the checks of a
/// JSONL line, its 1-based row number standing for the line (docs/formats.md §7). The rows
/// are read in parallel in pieces (a row group, or a part of a large one), each into a fork
/// of the sink, joined in file order.
pub fn read_parquet_cells<S: CellSink>(
    data: Vec<u8>,
    path: &Path,
    sink: &mut S,
    name: &Arc<Path>,
) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reader = super::parquet::open(data, path)?;
    let groups = super::parquet::row_groups(&reader);
    let total: usize = groups.iter().sum();
    let workers = super::chunk::WORKERS;
    // A row group of many rows is cut in one piece per worker (a piece after the first
    // skips the rows before it), so that one large row group is read in parallel too.
    let mut pieces = Vec::new();
    let mut first_row = 1u64;
    for (g, &n) in groups.iter().enumerate() {
        let k = if n >= 2 * PIECE_MIN { workers } else { 1 };
        for i in 0..k {
            let rows = n * i / k..n * (i + 1) / k;
            pieces.push((g, rows.clone(), first_row + rows.start as u64));
        }
        first_row += n as u64;
    }
    sink.reserve(total);
    if total < 65_536 || pieces.len() <= 1 {
        for (g, rows, first) in pieces {
            parquet_rows(&reader, path, g, rows, first, sink, name)?;
        }
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    // Forked here: a sink is sent to a thread, not shared with it.
    let forks: Vec<std::sync::Mutex<Option<S>>> = pieces
        .iter()
        .map(|_| std::sync::Mutex::new(Some(sink.fork())))
        .collect();
    // Each piece read is joined here as soon as the pieces before it are, while the
    // threads read on.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, S, std::io::Result<()>)>();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers.min(pieces.len()))
            .map(|_| {
                let (reader, pieces, next, forks) = (&reader, &pieces, &next, &forks);
                let done_tx = done_tx.clone();
                s.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((g, rows, first)) = pieces.get(i).cloned() else {
                            return;
                        };
                        let mut part = forks[i]
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .take()
                            .expect("each piece is taken once");
                        part.reserve(rows.len());
                        let r = parquet_rows(reader, path, g, rows, first, &mut part, name);
                        if done_tx.send((i, part, r)).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        drop(done_tx);
        // In file order; after a piece that failed, nothing more is joined.
        let mut waiting = std::collections::BTreeMap::new();
        let (mut joined, mut failed) = (0, None);
        for (i, part, r) in done_rx {
            waiting.insert(i, (part, r));
            while let Some((mut part, r)) = waiting.remove(&joined) {
                match r {
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                    Ok(()) if failed.is_none() => sink.join(&mut part),
                    Ok(()) => {}
                }
                joined += 1;
            }
        }
        for h in handles {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        failed.map_or(Ok(()), Err)
    })
}

/// A column's values of a batch of rows: absent or null in every row, or each row's,
/// read one row at a time.
enum Column<'c> {
    Missing,
    Null,
    Each(&'c super::parquet::ColumnData, super::parquet::Cursor),
}

/// The fewest rows of a piece of a row group read on its own.
const PIECE_MIN: usize = 32_768;

/// Reads the rows `rows` of row group `group`, whose first is row `first_row` of the file.
fn parquet_rows<S: CellSink>(
    reader: &super::parquet::Reader,
    path: &Path,
    group: usize,
    rows: std::ops::Range<usize>,
    first_row: u64,
    sink: &mut S,
    name: &Arc<Path>,
) -> std::io::Result<()> {
    let mut row_no: u64 = first_row - 1;
    let mut keys = Vec::new();
    super::parquet::read_columns(reader, path, group, rows, &PARQUET_FIELDS, |cols, rows| {
        batch_keys(cols, rows, &mut keys);
        // Most batches are plain: read column by column into cells, each value once.
        if let Some(mut cells) = plain_batch(cols, rows) {
            for (cell, keys) in cells.iter_mut().zip(&keys) {
                row_no += 1;
                sink.count_record();
                // Complete, so a cell.
                if let Some(cell) = cell.input() {
                    sink.push_keyed(&cell, keys, row_no);
                }
            }
            return Ok(());
        }
        // Row by row, as a JSONL line is read, where some row is not.
        let mut keys = keys.iter();
        each_row(cols, rows, |row| {
            row_no += 1;
            let keys = keys.next().copied().unwrap_or_default();
            sink.count_record();
            match row {
                Err((f, e)) => sink
                    .diags()
                    .error(name, Some(row_no), Some(PARQUET_FIELDS[f]), e),
                Ok(raw) => {
                    // Most rows are plain; the others go through the checks that name what
                    // is wrong.
                    let cell = match PlainCell::of_raw(&raw) {
                        Some(cell) => Some(cell),
                        None => validate(&raw, sink.diags(), name, row_no),
                    };
                    if let Some(cell) = cell {
                        sink.push_keyed(&cell, &keys, row_no);
                    }
                }
            }
        });
        Ok(())
    })
}

/// The keys of the texts of a batch's `rows` rows (`TextKeys`) into `keys`: a text column
/// read by its pages gives a row of a dictionary entry the entry's key, so the builder
/// takes an entry's text once however many rows hold it.
fn batch_keys(cols: &[Option<super::parquet::ColumnData>], rows: usize, keys: &mut Vec<TextKeys>) {
    keys.clear();
    keys.resize(rows, TextKeys::default());
    for (c, col) in cols.iter().enumerate() {
        let Some(col) = col else { continue };
        let field: fn(&mut TextKeys) -> &mut u64 = match PARQUET_FIELDS[c] {
            "protocol" => |k| &mut k.protocol,
            "model" => |k| &mut k.model,
            "benchmark" => |k| &mut k.benchmark,
            "item_id" => |k| &mut k.item_id,
            "config" => |k| &mut k.config,
            "pred" => |k| &mut k.pred,
            "gold" => |k| &mut k.gold,
            "blind" => |k| &mut k.blind,
            "source_tag" => |k| &mut k.source_tag,
            "protocol_note" => |k| &mut k.protocol_note,
            _ => continue,
        };
        col.each_key(rows, |r, key| *field(&mut keys[r]) = key);
    }
}

/// Calls `each` with each of the batch's `rows` rows in order: the record a JSONL line
/// would give, or the column (its place in [`PARQUET_FIELDS`]) and the reason of the first
/// broken value in that order.
fn each_row<'c>(
    cols: &'c [Option<super::parquet::ColumnData>],
    rows: usize,
    mut each: impl FnMut(Result<RawCell<'c>, (usize, String)>),
) {
    let mut columns: Vec<Column<'_>> = cols
        .iter()
        .map(|c| match c {
            None => Column::Missing,
            Some(c) if c.all_null(rows) => Column::Null,
            Some(c) => Column::Each(c, Default::default()),
        })
        .collect();
    for _ in 0..rows {
        // Every column moves past the row, whatever it holds.
        let mut vals: [J<'_>; PARQUET_FIELDS.len()] = Default::default();
        let mut broken = None;
        for (f, (slot, c)) in vals.iter_mut().zip(&mut columns).enumerate() {
            *slot = match c {
                Column::Missing => J::Missing,
                Column::Null => J::Null,
                Column::Each(c, at) => c.next_value(at).unwrap_or_else(|e| {
                    broken.get_or_insert((f, e));
                    J::Null
                }),
            };
        }
        each(match broken {
            Some(b) => Err(b),
            None => Ok(parquet_raw(vals)),
        });
    }
}

/// Where each column of [`PARQUET_COLUMNS`] goes in [`FIELDS`]; `gold_list`, folded into
/// `gold`, goes nowhere of its own.
const FIELD_OF_COLUMN: [Option<usize>; PARQUET_FIELDS.len()] = {
    let mut to = [None; PARQUET_FIELDS.len()];
    let mut c = 0;
    while c < to.len() {
        let mut f = 0;
        while f < FIELDS.len() {
            if same_name(PARQUET_FIELDS[c], FIELDS[f]) {
                to[c] = Some(f);
            }
            f += 1;
        }
        c += 1;
    }
    to
};

/// Where `gold` is in [`FIELDS`].
const GOLD: usize = 10;

const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The rows of a batch read column by column, when every row is plain (each value one
/// [`validate`] accepts as it stands, the cell complete); `None` otherwise, leaving the
/// batch to be read row by row. A row's cell is the one [`parquet_raw`] and
/// [`PlainCell::of_raw`] give (tested).
fn plain_batch(
    cols: &[Option<super::parquet::ColumnData>],
    rows: usize,
) -> Option<Vec<PlainCell<'_>>> {
    let mut cells: Vec<PlainCell<'_>> = Vec::new();
    cells.resize_with(rows, Default::default);
    for (c, col) in cols.iter().enumerate() {
        let Some(col) = col else { continue };
        let taken = match FIELD_OF_COLUMN[c] {
            Some(f) => match typed_column(col, f, &mut cells, rows) {
                Some(taken) => taken,
                None => col.each_value(rows, |r, v| cells[r].set(f, v)),
            },
            // Several references, where the row has no single gold.
            None => col.each_value(rows, |r, v| match v {
                J::Arr(_) if cells[r].gold.is_none() => cells[r].set(GOLD, v),
                _ => true,
            }),
        };
        if !taken {
            return None;
        }
    }
    cells.iter().all(PlainCell::complete).then_some(cells)
}

/// Takes the values of `FIELDS[f]` from a column of the type frameaudit writes it with
/// (docs/formats.md §7), as [`PlainCell::set`] takes the same values, without making a
/// JSON value of each; `None` for a column of another type, or a field of lists.
fn typed_column<'c>(
    col: &'c super::parquet::ColumnData,
    f: usize,
    cells: &mut [PlainCell<'c>],
    rows: usize,
) -> Option<bool> {
    type Slot<T> = for<'x, 'c> fn(&'x mut PlainCell<'c>) -> &'x mut Option<T>;
    let text: Option<for<'x> fn(&'x mut PlainCell<'c>) -> &'x mut Option<&'c str>> = match FIELDS[f]
    {
        "model" => Some(|c| &mut c.model),
        "benchmark" => Some(|c| &mut c.benchmark),
        "item_id" => Some(|c| &mut c.item_id),
        "config" => Some(|c| &mut c.config),
        "protocol" => Some(|c| &mut c.protocol),
        "pred" => Some(|c| &mut c.pred),
        "blind" => Some(|c| &mut c.blind),
        "source_tag" => Some(|c| &mut c.source_tag),
        "protocol_note" => Some(|c| &mut c.protocol_note),
        "replicate" => Some(|c| &mut c.replicate),
        "nuisance" => Some(|c| &mut c.nuisance),
        "cluster" => Some(|c| &mut c.cluster),
        _ => None,
    };
    if let Some(slot) = text {
        return col.each_text(rows, |r, s| {
            *slot(&mut cells[r]) = s;
            true
        });
    }
    let count = |slot: Slot<u64>, null_ok: bool, cells: &mut [PlainCell<'c>]| {
        col.each_int(rows, |r, n| match n {
            None => null_ok,
            Some(n) => {
                *slot(&mut cells[r]) = u64::try_from(n).ok();
                n >= 0
            }
        })
    };
    let number =
        |slot: Slot<f64>, range: std::ops::RangeInclusive<f64>, cells: &mut [PlainCell<'c>]| {
            col.each_float(rows, |r, x| match x {
                None => true,
                Some(x) => {
                    *slot(&mut cells[r]) = Some(x);
                    range.contains(&x)
                }
            })
        };
    match FIELDS[f] {
        "gold" => col.each_text(rows, |r, s| {
            cells[r].gold = s.map(Ok);
            true
        }),
        "task" => col.each_text(rows, |r, s| {
            cells[r].task = match s {
                None => return true,
                Some("mcq") => Some(Task::Mcq),
                Some("open") => Some(Task::Open),
                Some(_) => return false,
            };
            true
        }),
        "frames" => count(|c| &mut c.frames, false, cells),
        "pixels" => count(|c| &mut c.pixels, true, cells),
        "budget" => number(|c| &mut c.budget, f64::NEG_INFINITY..=f64::INFINITY, cells),
        "score" => number(|c| &mut c.score, 0.0..=100.0, cells),
        "confidence" => number(|c| &mut c.confidence, 0.0..=1.0, cells),
        "correct" => col.each_bool(rows, |r, b| {
            cells[r].correct = b;
            true
        }),
        _ => None,
    }
}

/// A row's values, in the order of [`PARQUET_COLUMNS`], as the record a JSONL line gives.
fn parquet_raw(vals: [J<'_>; PARQUET_FIELDS.len()]) -> RawCell<'_> {
    let [
        model,
        item_id,
        benchmark,
        config,
        frames,
        budget,
        pixels,
        protocol,
        task,
        pred,
        gold,
        gold_list,
        correct,
        score,
        confidence,
        blind,
        frame_idx,
        source_tag,
        protocol_note,
        replicate,
        nuisance,
        order,
        cluster,
    ] = vals;
    // Several references of an open item travel in their own list column.
    let gold = match (gold, gold_list) {
        (J::Missing | J::Null, list @ J::Arr(_)) => list,
        (gold, _) => gold,
    };
    RawCell {
        model,
        item_id,
        benchmark,
        config,
        frames,
        budget,
        pixels,
        protocol,
        task,
        pred,
        gold,
        correct,
        score,
        confidence,
        blind,
        frame_idx,
        source_tag,
        protocol_note,
        replicate,
        nuisance,
        order,
        cluster,
    }
}

/// A cell as written back out: absent values are left out, defaults are not repeated.
#[derive(Serialize)]
struct CellOut<'a> {
    model: &'a str,
    benchmark: &'a str,
    item_id: &'a str,
    config: &'a str,
    frames: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pixels: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'a str>,
    task: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pred: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gold: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    correct: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blind: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame_idx: Option<&'a [u64]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_tag: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_note: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replicate: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nuisance: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    order: Option<&'a [u64]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<&'a str>,
}

/// The columns of cells written as Parquet, in this order, whatever the cells hold, so
/// that engines reading the file find every field (docs/formats.md §7); `gold_list`
/// carries the references of an open item with several.
pub const PARQUET_COLUMNS: [(&str, super::parquet::Kind); 23] = {
    use super::parquet::Kind::*;
    [
        ("model", Str),
        ("item_id", Str),
        ("benchmark", Str),
        ("config", Str),
        ("frames", Int),
        ("budget", Float),
        ("pixels", Int),
        ("protocol", Str),
        ("task", Str),
        ("pred", Str),
        ("gold", Str),
        ("gold_list", StrList),
        ("correct", Bool),
        ("score", Float),
        ("confidence", Float),
        ("blind", Str),
        ("frame_idx", IntList),
        ("source_tag", Str),
        ("protocol_note", Str),
        ("replicate", Str),
        ("nuisance", Str),
        ("order", IntList),
        ("cluster", Str),
    ]
};

/// Appends a cell to `cols`, the columns of [`PARQUET_COLUMNS`] in that order, as a row:
/// every default written out (so a column never needs one), several references in
/// `gold_list`, a number that is not finite as null (as in JSON).
pub fn push_parquet(cols: &mut [super::parquet::Column], c: &CellInput<'_>) {
    use super::parquet::Cell;
    fn s(v: Option<&str>) -> Cell<'_> {
        v.map_or(Cell::Null, Cell::Str)
    }
    let int = |v: u64| i64::try_from(v).map_or(Cell::Null, Cell::Int);
    let float = |v: Option<f64>| v.filter(|x| x.is_finite()).map_or(Cell::Null, Cell::Float);
    let [
        model,
        item_id,
        benchmark,
        config,
        frames,
        budget,
        pixels,
        protocol,
        task,
        pred,
        gold,
        gold_list,
        correct,
        score,
        confidence,
        blind,
        frame_idx,
        source_tag,
        protocol_note,
        replicate,
        nuisance,
        order,
        cluster,
    ] = cols
    else {
        unreachable!("one column for each of PARQUET_COLUMNS");
    };
    model.push(Cell::Str(c.model));
    item_id.push(Cell::Str(c.item_id));
    benchmark.push(Cell::Str(c.benchmark));
    config.push(Cell::Str(c.config));
    frames.push(int(c.frames));
    budget.push(float(Some(c.budget)));
    pixels.push(c.pixels.map_or(Cell::Null, int));
    protocol.push(Cell::Str(c.protocol));
    task.push(Cell::Str(c.task.as_str()));
    pred.push(s(c.pred));
    let none = None::<std::iter::Empty<Cell<'_>>>;
    match &c.gold {
        Gold::None => {
            gold.push(Cell::Null);
            gold_list.push_list(none);
        }
        Gold::One(g) => {
            gold.push(Cell::Str(g));
            gold_list.push_list(none);
        }
        Gold::Many(gs) => {
            gold.push(Cell::Null);
            gold_list.push_list(Some(gs.iter().map(|g| Cell::Str(g))));
        }
        Gold::Unusable => {
            gold.push(Cell::Null);
            gold_list.push_list(Some(std::iter::empty()));
        }
    }
    correct.push(c.correct.map_or(Cell::Null, Cell::Bool));
    score.push(float(c.score));
    confidence.push(float(c.confidence));
    blind.push(s(c.blind));
    frame_idx.push_list(c.frame_idx.as_ref().map(|v| v.iter().map(|&i| int(i))));
    source_tag.push(s(c.source_tag));
    protocol_note.push(s(c.protocol_note));
    replicate.push(s(c.replicate));
    nuisance.push(s(c.nuisance));
    order.push_list(c.order.as_ref().map(|v| v.iter().map(|&i| int(i))));
    cluster.push(s(c.cluster));
}

/// Writes one cell as a JSON line of the native format.
pub fn write_cell(out: &mut impl std::io::Write, c: &CellInput<'_>) -> std::io::Result<()> {
    let cell = CellOut {
        model: c.model,
        benchmark: c.benchmark,
        item_id: c.item_id,
        config: c.config,
        frames: c.frames,
        budget: (c.budget != c.frames as f64).then_some(c.budget),
        pixels: c.pixels,
        protocol: (c.protocol != "main").then_some(c.protocol),
        task: c.task.as_str(),
        pred: c.pred,
        gold: match &c.gold {
            Gold::None => None,
            Gold::One(g) => Some((*g).into()),
            Gold::Many(gs) => Some(gs.clone().into()),
            Gold::Unusable => Some(serde_json::Value::Array(Vec::new())),
        },
        correct: c.correct,
        score: c.score,
        confidence: c.confidence,
        blind: c.blind,
        frame_idx: c.frame_idx.as_deref(),
        source_tag: c.source_tag,
        protocol_note: c.protocol_note,
        replicate: c.replicate,
        nuisance: c.nuisance,
        order: c.order.as_deref(),
        cluster: c.cluster,
    };
    crate::core::text::json_to_writer(&mut *out, &cell)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::diag::Diagnostic;
    use crate::core::matrix::MatrixBuilder;

    fn load(text: &str) -> Result<crate::core::matrix::ResponseMatrix, Vec<Diagnostic>> {
        let mut b = MatrixBuilder::new();
        let file = b.add_file(std::path::Path::new("t.jsonl"));
        read_cells(text.as_bytes(), None, &mut b, &file).expect("io");
        match b.finish() {
            Ok((m, _)) => Ok(m),
            Err(d) => Err(d.sorted().into_iter().cloned().collect()),
        }
    }

    fn errors(text: &str) -> Vec<String> {
        load(text)
            .expect_err("input should be rejected")
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    const OK: &str =
        r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"pred":"a","gold":"A"}"#;

    #[test]
    fn a_valid_line_loads() {
        let m = load(OK).expect("valid");
        assert_eq!(m.n_cells(), 1);
        assert_eq!(m.cell_value.get(0), 1.0);
        assert_eq!(m.benchmarks.name(0), "default");
        assert_eq!(m.protocols.name(0), "main");
    }

    /// A cells file in UTF-16 (as Windows PowerShell's `>` writes one) is refused by its
    /// encoding in one message, not line by line as malformed JSON.
    #[test]
    fn a_utf16_cells_file_is_refused_by_its_encoding() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in format!("{OK}\n{OK}\n").encode_utf16() {
            bytes.extend(u.to_le_bytes());
        }
        let mut b = MatrixBuilder::new();
        let file = b.add_file(std::path::Path::new("t.jsonl"));
        read_cells(&bytes[..], None, &mut b, &file).expect("io");
        let e: Vec<String> = b
            .finish()
            .expect_err("rejected")
            .sorted()
            .into_iter()
            .map(|d| d.to_string())
            .collect();
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(
            e[0].starts_with("t.jsonl: error: the file is UTF-16 (little-endian, by its byte-order mark), not UTF-8")
                && e[0].contains("iconv -f UTF-16 -t UTF-8"),
            "{e:#?}"
        );
    }

    /// A CSV or TSV table, a Parquet file or a workbook read as cells JSON Lines is refused
    /// in one message that says what it seems to be and how to read it, not as malformed
    /// JSON on every line; JSON Lines that go wrong on their first line are read line by
    /// line as before.
    #[test]
    fn another_format_read_as_cells_is_named_once() {
        let csv = "model,item_id,config,frames,correct\nm,q1,8f,8,1\nm,q2,8f,8,0\n";
        let e = errors(csv);
        assert_eq!(e.len(), 1, "{e:#?}");
        assert!(
            e[0].starts_with("t.jsonl:1: error: the first line is not JSON but a CSV header, it seems (model, item_id, config, frames, …)")
                && e[0].contains("--input-format per-item-csv"),
            "{e:#?}"
        );
        let e = errors("model\titem_id\tconfig\n");
        assert!(e.len() == 1 && e[0].contains("a TSV header"), "{e:#?}");
        // R's quoted header, after a blank line; a header longer than the look at the start.
        let e = errors("\n\"model\",\"item_id\",\"config\"\n\"m\",\"q1\",\"8f\"\n");
        assert!(
            e.len() == 1 && e[0].contains("a CSV header, it seems (model, item_id, config)"),
            "{e:#?}"
        );
        let wide: Vec<String> = (0..200).map(|i| format!("config_{i}")).collect();
        let e = errors(&format!(
            "item_id,{}\nq1,{}\n",
            wide.join(","),
            "1,".repeat(199)
        ));
        assert!(e.len() == 1 && e[0].contains("a CSV header"), "{e:#?}");
        let e = errors("PAR1\0\0\0\0");
        assert!(e.len() == 1 && e[0].contains("a Parquet file"), "{e:#?}");
        let e = errors("PK\x03\x04\0\0");
        assert!(e.len() == 1 && e[0].contains("a ZIP archive"), "{e:#?}");
        // JSON gone wrong stays line by line: a first line with brackets or quotes.
        let e = errors(&format!("{{\"model\":\"M\",,}}\n{OK}\n\"a\",\"b\"\n"));
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(
            e[0].starts_with("t.jsonl:1: error: malformed JSON"),
            "{e:#?}"
        );
    }

    /// Open-ended scores all in [0, 1] read as points out of 100 are said, with the file,
    /// the line of the first above 0 and the field; points, a file of zeros, or multiple-
    /// choice cells with a stray score are not.
    #[test]
    fn scores_on_a_zero_to_one_scale_are_warned_about() {
        let cell = |i: usize, score: &str| {
            format!(r#"{{"model":"M","item_id":"q{i}","config":"8f","frames":8,"score":{score}}}"#)
        };
        let warnings = |scores: &[&str]| -> Vec<String> {
            let text: Vec<String> = scores.iter().enumerate().map(|(i, s)| cell(i, s)).collect();
            let mut b = MatrixBuilder::new();
            let file = b.add_file(std::path::Path::new("t.jsonl"));
            read_cells(text.join("\n").as_bytes(), None, &mut b, &file).expect("io");
            let (_, d) = b.finish().expect("valid");
            d.sorted().into_iter().map(|d| d.to_string()).collect()
        };
        let w = warnings(&["0", "0.5", "0.73", "1"]);
        assert_eq!(w.len(), 1, "{w:#?}");
        assert!(
            w[0].starts_with(
                "t.jsonl:2: warning: field `score`: every score in this file lies in [0, 1] (4 scores, at most 1; the first above 0 is on this line)"
            ) && w[0].contains("multiply them by 100"),
            "{w:#?}"
        );
        // 0/1 verdicts given as scores.
        assert_eq!(warnings(&["0", "0", "1", "0"]).len(), 1);
        for fine in [&["0.5", "40", "0.73"][..], &["0", "0"], &["12.5"]] {
            assert_eq!(warnings(fine), Vec::<String>::new(), "{fine:?}");
        }
        // A multiple-choice cell's score is not its value.
        let mcq = r#"{"model":"M","item_id":"q","config":"8f","frames":8,"task":"mcq","score":0.5,"pred":"A","gold":"A"}"#;
        let mut b = MatrixBuilder::new();
        let file = b.add_file(std::path::Path::new("t.jsonl"));
        read_cells(mcq.as_bytes(), None, &mut b, &file).expect("io");
        assert_eq!(b.finish().expect("valid").1.warning_count(), 0);
    }

    #[test]
    fn every_bad_field_of_every_line_is_reported() {
        let text = format!(
            "{OK}\n{{\"model\":\"\",\"item_id\":3,\"config\":\"8f\",\"frames\":-1,\"confidence\":1.5}}\n\n{{\"model\":\"M\",\"item_id\":\"q2\",\"config\":\"8f\",\"frames\":8.5,\"score\":101,\"correct\":1,\"pixels\":\"x\"}}\nnot json\n[1,2]\n"
        );
        let e = errors(&text);
        let want = [
            "t.jsonl:2: error: field `model`: must be a non-empty string",
            "t.jsonl:2: error: field `item_id`: expected a string, found a number",
            "t.jsonl:2: error: field `frames`: must be an integer >= 0, found -1",
            "t.jsonl:2: error: field `confidence`: must be a number in [0, 1], found 1.5",
            "t.jsonl:4: error: field `frames`: must be an integer >= 0, found 8.5",
            "t.jsonl:4: error: field `pixels`: must be an integer >= 0, found a string",
            "t.jsonl:4: error: field `score`: must be a number in [0, 100], found 101",
            "t.jsonl:4: error: field `correct`: expected true, false or null, found 1",
            "t.jsonl:6: error: expected a JSON object (one cell), found an array",
        ];
        for w in want {
            assert!(e.iter().any(|x| x == w), "missing {w:?} in {e:#?}");
        }
        assert!(
            e.iter()
                .any(|x| x.starts_with("t.jsonl:5: error: malformed JSON")),
            "{e:#?}"
        );
    }

    #[test]
    fn missing_required_fields_are_named() {
        let e = errors(r#"{"pred":"A"}"#);
        for f in ["model", "item_id", "config", "frames"] {
            let w = format!("t.jsonl:1: error: field `{f}`: required field is missing");
            assert!(e.contains(&w), "{e:#?}");
        }
    }

    #[test]
    fn cross_cell_rules_reject() {
        let dup = format!("{OK}\n{OK}");
        let e = errors(&dup);
        assert!(
            e[0].starts_with("t.jsonl:2: error: duplicate cell"),
            "{e:?}"
        );
        assert!(e[0].contains("already given at t.jsonl:1"), "{e:?}");

        let frames = format!(
            "{OK}\n{}",
            r#"{"model":"N","item_id":"q1","config":"8f","frames":9,"gold":"A"}"#
        );
        // The absent budget is `frames` on both lines: one difference, said once.
        assert_eq!(
            errors(&frames),
            [
                "t.jsonl:2: error: field `frames`: configuration \"8f\" has frames 9 here but 8 at line 1"
            ]
        );

        let budget = format!(
            "{OK}\n{}",
            r#"{"model":"N","item_id":"q1","config":"8f","frames":8,"budget":8.5,"gold":"A"}"#
        );
        assert!(errors(&budget)[0].contains("field `budget`"));

        let pixels = format!(
            "{OK}\n{}",
            r#"{"model":"N","item_id":"q1","config":"8f","frames":8,"pixels":5,"gold":"A"}"#
        );
        assert!(errors(&pixels)[0].contains("has pixels 5 here but null at line 1"));

        let tasks = format!(
            "{OK}\n{}",
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"score":5}"#
        );
        assert!(errors(&tasks)[0].contains("mixes tasks"));

        let blinds = concat!(
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"gold":"A","blind":"B"}"#,
            "\n",
            r#"{"model":"M","item_id":"q1","config":"16f","frames":16,"gold":"A","blind":"c"}"#
        );
        assert!(
            errors(blinds)[0].contains("field `blind`: blind answer \"C\" conflicts with \"B\"")
        );
        // Said as compared (upper-cased), and so, with the escapes of every other message.
        let hostile = blinds.replace("\"c\"", "\"x\\u001b[31m\"");
        let said = &errors(&hostile)[0];
        assert!(
            said.contains("blind answer \"X\\x1b[31M\" conflicts with \"B\"")
                && said.contains("compared trimmed and upper-cased"),
            "{said}"
        );
    }

    #[test]
    fn blind_answers_follow_precedence() {
        let text = concat!(
            r#"{"model":"M","item_id":"q1","config":"zz","frames":0,"pred":"d"}"#,
            "\n",
            r#"{"model":"M","item_id":"q1","config":"text","frames":0,"pred":" c "}"#,
            "\n",
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"gold":"A","blind":"B"}"#,
            "\n",
            r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"gold":"A","blind":"b"}"#,
            "\n",
            r#"{"model":"M","item_id":"q3","config":"text","frames":0,"pred":"  "}"#,
        );
        let m = load(text).expect("valid");
        let blind = |item: &str| {
            let i = m.find_item("default", item).expect("item");
            m.blind(0, 0, i).map(|t| m.texts.name(t).to_string())
        };
        assert_eq!(blind("q1").as_deref(), Some("C"));
        assert_eq!(blind("q2").as_deref(), Some("B"));
        assert_eq!(blind("q3"), None);
        assert_eq!(m.blind_answers(), 2);
        let of: Vec<(u32, u32)> = m.blind_of(0, 0).collect();
        let q = |item: &str| m.find_item("default", item).expect("item");
        let by_lookup: Vec<(u32, u32)> = ["q1", "q2"]
            .map(|i| (q(i), m.blind(0, 0, q(i)).expect("blind")))
            .into();
        assert_eq!(of, by_lookup);
        // Zero-frame cells without gold are invalid but still counted.
        assert_eq!(m.stats.cells_invalid, 3);
        assert_eq!(m.stats.zero_frame_cells, 3);
    }

    #[test]
    fn each_models_blind_answers_are_walked_in_item_order() {
        // Two protocols, three models, items given out of order; the last model has none.
        let mut text = String::new();
        for (p, model, item, pred) in [
            ("b", "N", "q3", "A"),
            ("a", "N", "q2", "B"),
            ("b", "M", "q9", "C"),
            ("a", "M", "q1", "D"),
            ("b", "M", "q1", "A"),
            ("a", "N", "q1", "C"),
            ("a", "M", "q4", "B"),
        ] {
            text += &format!(
                r#"{{"model":"{model}","protocol":"{p}","item_id":"{item}","config":"t","frames":0,"pred":"{pred}","gold":"A"}}"#
            );
            text += "\n";
        }
        text += r#"{"model":"O","protocol":"a","item_id":"q1","config":"8f","frames":8,"pred":"A","gold":"A"}"#;
        let m = load(&text).expect("valid");
        let mut total = 0;
        for p in 0..m.protocols.len() as u32 {
            for mo in 0..m.models.len() as u32 {
                let of: Vec<(u32, u32)> = m.blind_of(p, mo).collect();
                assert!(of.windows(2).all(|w| w[0].0 < w[1].0), "{of:?}");
                let by_lookup: Vec<(u32, u32)> = (0..m.items.len() as u32)
                    .filter_map(|i| Some((i, m.blind(p, mo, i)?)))
                    .collect();
                assert_eq!(of, by_lookup, "protocol {p}, model {mo}");
                total += of.len();
            }
        }
        assert_eq!(total, 7);
        assert_eq!(m.blind_answers(), 7);
    }

    #[test]
    fn values_follow_spec_1_3() {
        let text = concat!(
            r#"{"model":"M","item_id":"a","config":"8f","frames":8,"pred":"B","gold":"A","correct":true}"#,
            "\n",
            r#"{"model":"M","item_id":"b","config":"8f","frames":8,"pred":null,"gold":"A"}"#,
            "\n",
            r#"{"model":"M","item_id":"c","config":"8f","frames":8,"pred":"A"}"#,
            "\n",
            r#"{"model":"M","benchmark":"o","item_id":"d","config":"8f","frames":8,"task":"open","pred":"the cat","gold":["a cat","dog"]}"#,
            "\n",
            r#"{"model":"M","benchmark":"o","item_id":"e","config":"8f","frames":8,"score":42.5,"gold":"x"}"#,
            "\n",
            r#"{"model":"M","benchmark":"o","item_id":"f","config":"8f","frames":8,"task":"open"}"#,
        );
        let m = load(text).expect("valid");
        let v: Vec<f64> = m.cell_value.iter().collect();
        assert_eq!(v[0], 1.0);
        assert_eq!(v[1], 0.0);
        assert!(v[2].is_nan());
        assert_eq!(v[3], 100.0);
        assert_eq!(v[4], 42.5);
        assert!(v[5].is_nan());
        assert_eq!(m.stats.cells_invalid, 2);
    }

    #[test]
    fn unusable_gold_lists_make_the_cell_invalid() {
        let text = concat!(
            r#"{"model":"M","item_id":"a","config":"8f","frames":8,"pred":"A","gold":["A"]}"#,
            "\n",
            r#"{"model":"M","benchmark":"o","item_id":"b","config":"8f","frames":8,"task":"open","pred":"x","gold":[]}"#,
        );
        let m = load(text).expect("valid input");
        assert_eq!(m.stats.cells_invalid, 2);
        let e = errors(r#"{"model":"M","item_id":"a","config":"8f","frames":8,"gold":["A",3]}"#);
        assert!(
            e[0].contains("field `gold`: a list of references must hold only strings"),
            "{e:?}"
        );
    }

    #[test]
    fn duplicate_json_keys_are_named() {
        let e = errors(r#"{"model":"M","model":"N","item_id":"a","config":"8f","frames":8}"#);
        assert!(
            e[0].contains("field `model`: malformed JSON: duplicate field"),
            "{e:?}"
        );
    }

    /// A file large enough to be split into parts that are parsed on two threads must give
    /// the same matrix and the same problems as reading it in one piece.
    #[test]
    fn parallel_parts_read_like_one_piece() {
        let mut text = String::new();
        for i in 0..12_000 {
            let frames = if i == 9_000 { 9 } else { 8 };
            let blind = if i == 11_000 { "C" } else { "B" };
            text.push_str(&format!(
                "{{\"model\":\"M{}\",\"item_id\":\"q{}\",\"config\":\"{}f\",\"frames\":{frames},\"pred\":\"A\",\"gold\":\"A\",\"blind\":\"{blind}\",\"padding\":\"{}\"}}\n",
                i % 3,
                i / 6,
                if i % 2 == 0 { 8 } else { 16 },
                "x".repeat(20)
            ));
        }
        // A duplicate of line 1 near the end, and a task conflict in the second half.
        let first = text.lines().next().expect("line").to_string();
        text.push_str(&first);
        text.push('\n');
        text.push_str(r#"{"model":"M0","item_id":"z","config":"8f","frames":8,"score":5}"#);
        text.push('\n');
        assert!(text.len() > 2 * (256 << 10));

        let parallel = {
            let mut b = MatrixBuilder::new();
            let file = b.add_file(Path::new("t.jsonl"));
            read_cells(text.as_bytes(), None, &mut b, &file).expect("io");
            b.finish()
        };
        let sequential = {
            let mut b = MatrixBuilder::new();
            let file = b.add_file(Path::new("t.jsonl"));
            parse_block(text.as_bytes(), 1, &file, &mut b);
            b.finish()
        };
        let msgs = |r: &Result<(crate::core::matrix::ResponseMatrix, Diagnostics), Diagnostics>| -> Vec<String> {
            match r {
                Ok(_) => Vec::new(),
                Err(d) => d.sorted().iter().map(|d| d.to_string()).collect(),
            }
        };
        let (p, q) = (msgs(&parallel), msgs(&sequential));
        assert!(p.iter().any(|m| m.contains("t.jsonl:9001: error: field `frames`: configuration \"8f\" has frames 9 here but 8 at line 1")), "{p:#?}");
        assert!(p.iter().any(|m| m.contains("t.jsonl:11004: error: field `blind`: blind answer \"B\" conflicts with \"C\" given at line 11001")), "{p:#?}");
        assert!(p.iter().any(|m| m.contains("duplicate cell")), "{p:#?}");
        assert!(
            p.iter()
                .any(|m| m.contains("this cell is open, the cell at line 1 is mcq")),
            "{p:#?}"
        );
        assert_eq!(p, q);

        // Without the problems, the matrices are the same cell for cell.
        let clean: String = text
            .lines()
            .take(12_000)
            .filter(|l| !l.contains("\"frames\":9") && !l.contains("\"blind\":\"C\""))
            .map(|l| format!("{l}\n"))
            .collect();
        let load = |parallel: bool| {
            let mut b = MatrixBuilder::new();
            let file = b.add_file(Path::new("t.jsonl"));
            if parallel {
                read_cells(clean.as_bytes(), None, &mut b, &file).expect("io");
            } else {
                parse_block(clean.as_bytes(), 1, &file, &mut b);
            }
            b.finish().expect("valid").0
        };
        let (a, b) = (load(true), load(false));
        assert_eq!(a.n_cells(), 11_998);
        assert_eq!(a.cell_item, b.cell_item);
        assert_eq!(a.cell_model, b.cell_model);
        assert_eq!(a.cell_config, b.cell_config);
        assert_eq!(a.cell_line, b.cell_line);
        assert_eq!(a.cell_pred, b.cell_pred);
        assert_eq!(a.blind_answers(), b.blind_answers());
        assert_eq!(a.stats.records, b.stats.records);
    }

    /// Rows of cells as Parquet in batches of the reader's size: every third batch of values
    /// every check accepts, every third with one value some check refuses or the plain path
    /// leaves to the checks, the rest drawn from both.
    fn parquet_rows_of_both_kinds(
        batches: usize,
        batch: usize,
    ) -> Vec<serde_json::Map<String, serde_json::Value>> {
        use serde_json::{Value, json};
        let accepted = |f: &str| -> Vec<Value> {
            match f {
                "model" | "item_id" | "config" => {
                    vec![json!("M"), json!("q 1"), json!("8f"), json!("é漢")]
                }
                "frames" => vec![json!(0), json!(8), json!(151200)],
                "budget" => vec![Value::Null, json!(0.5), json!(8.0)],
                "pixels" => vec![Value::Null, json!(0), json!(151200)],
                "task" => vec![Value::Null, json!("mcq"), json!("open")],
                "gold" => vec![Value::Null, json!("A"), json!("")],
                "gold_list" => vec![Value::Null, json!(["a", "b"]), json!([])],
                "correct" => vec![Value::Null, json!(true), json!(false)],
                "score" => vec![Value::Null, json!(0.0), json!(50.0), json!(100.0)],
                "confidence" => vec![Value::Null, json!(0.0), json!(0.97), json!(1.0)],
                "frame_idx" => vec![Value::Null, json!([0, 5, 9]), json!([])],
                "order" => vec![Value::Null, json!([1, 0]), json!([0, 2, 1])],
                // Given in pairs below: a replicate needs its nuisance.
                "replicate" | "nuisance" => vec![Value::Null, json!("")],
                _ => vec![Value::Null, json!("b"), json!("A"), json!("")],
            }
        };
        let odd: [(&str, Value); 10] = [
            ("model", json!("")),
            ("config", Value::Null),
            ("frames", json!(-1)),
            ("pixels", json!(-5)),
            ("score", json!(100.5)),
            ("confidence", json!(1.5)),
            ("task", json!("MCQ")),
            ("frame_idx", json!([-1])),
            ("nuisance", json!("rerun")),
            ("order", json!([0, 0])),
        ];
        let mut rng = crate::core::analysis::bootstrap::SplitMix64::new(11);
        let mut rows = Vec::new();
        for b in 0..batches {
            let odd_row = rng.next_u64() as usize % batch;
            for r in 0..batch {
                let mut row = serde_json::Map::new();
                for (f, _) in PARQUET_COLUMNS {
                    let ok = accepted(f);
                    row.insert(
                        f.to_string(),
                        ok[rng.next_u64() as usize % ok.len()].clone(),
                    );
                }
                if rng.next_u64().is_multiple_of(4) {
                    row.insert("replicate".into(), json!("r1"));
                    row.insert("nuisance".into(), json!("phase"));
                }
                let spoilt = match b % 3 {
                    0 => false,
                    1 => r == odd_row,
                    _ => rng.next_u64().is_multiple_of(64),
                };
                if spoilt {
                    let (f, v) = &odd[rng.next_u64() as usize % odd.len()];
                    row.insert(f.to_string(), v.clone());
                }
                // Some batches without a list in any row, some with empty lists only.
                if b % 5 >= 3 {
                    let empty = b % 5 == 3 && rng.next_u64().is_multiple_of(2);
                    for list in ["gold_list", "frame_idx"] {
                        row.insert(list.into(), if empty { json!([]) } else { Value::Null });
                    }
                }
                rows.push(row);
            }
        }
        rows
    }

    /// A batch read column by column gives the cells its rows give through the full checks,
    /// and is left to the rows only when some row is not plain: with the columns of the
    /// types frameaudit writes, and with numbers written as the other kind of number (read
    /// as JSON values, not by their type).
    #[test]
    fn a_plain_batch_gives_the_cells_the_checks_give_its_rows() {
        use super::super::parquet::{Kind, open, read_columns, row_groups, write_rows};
        let batch = 256;
        let rows = parquet_rows_of_both_kinds(30, batch);
        let path = Path::new("t.parquet");
        let file: Arc<Path> = Arc::from(path);
        for other_numbers in [false, true] {
            let cols: Vec<(String, Kind)> = PARQUET_COLUMNS
                .iter()
                .map(|&(n, k)| {
                    let k = match (other_numbers, n) {
                        (true, "frames" | "pixels") => Kind::Float,
                        (true, "budget" | "score") => Kind::Int,
                        _ => k,
                    };
                    (n.to_string(), k)
                })
                .collect();
            let mut data = Vec::new();
            write_rows(&mut data, &cols, &rows).expect("write");
            let reader = open(data, path).expect("open");
            let (mut plain, mut by_rows, mut all_null_columns) = (0, 0, 0);
            for (g, n) in row_groups(&reader).into_iter().enumerate() {
                read_columns(&reader, path, g, 0..n, &PARQUET_FIELDS, |cols, n| {
                    assert_eq!(n, batch, "the generator's batches are the reader's");
                    // A column read as null in every row is null in every row, row by row.
                    for c in cols.iter().flatten().filter(|c| c.all_null(n)) {
                        let mut at = super::super::parquet::Cursor::default();
                        for _ in 0..n {
                            assert_eq!(c.next_value(&mut at), Ok(J::Null));
                        }
                        all_null_columns += 1;
                    }
                    let (mut checked, mut clean, mut all_plain) = (Vec::new(), true, true);
                    each_row(cols, n, |row| match row {
                        Ok(raw) => {
                            let mut diags = Diagnostics::default();
                            checked.push(format!("{:?}", validate(&raw, &mut diags, &file, 1)));
                            clean &= diags.error_count() == 0;
                            all_plain &= PlainCell::of_raw(&raw).is_some();
                        }
                        Err(_) => (clean, all_plain) = (false, false),
                    });
                    match plain_batch(cols, n) {
                        Some(cells) => {
                            plain += 1;
                            assert!(clean, "a plain batch the checks refuse");
                            let cells: Vec<String> = cells
                                .into_iter()
                                .map(|mut c| format!("{:?}", c.input()))
                                .collect();
                            assert_eq!(cells, checked);
                        }
                        None => {
                            by_rows += 1;
                            assert!(!all_plain, "a batch of plain rows left to the rows");
                        }
                    }
                    Ok(())
                })
                .expect("read");
            }
            assert!(
                plain >= 10 && by_rows >= 10 && all_null_columns >= 12,
                "{plain} plain, {by_rows} by rows, {all_null_columns} null columns ({other_numbers})"
            );
        }
    }

    proptest::proptest! {
        /// Whatever a line holds, the plain reader either reads it as serde does, value for
        /// value, or leaves it to serde.
        #[test]
        fn the_plain_json_reader_reads_as_serde_or_not_at_all(
            line in crate::core::load::json::testing::lines(&FIELDS),
        ) {
            crate::core::load::json::testing::reads_as_serde::<RawCell>(&line)?;
        }
    }

    /// Lines whose fields are of the types the checks accept, but for at most one field
    /// given any value, with fields in either order and sometimes one given twice.
    fn typed_lines() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        // Values each field accepts (required fields: the first two only).
        let accepted = |f: &str| -> &'static [&'static str] {
            match f {
                "frames" | "pixels" => &["8", "0", "8.0", "151200", "18446744073709551615"],
                "budget" | "score" | "confidence" => &["0.5", "1", "0", "1.0", "-0.0", "null"],
                "correct" => &["true", "false", "null"],
                "task" => &[r#""mcq""#, r#""open""#, "null"],
                "gold" => &[r#""A""#, r#""""#, "null", r#"["a", "b"]"#, "[]", r#"[""]"#],
                "frame_idx" => &["[0, 5, 9]", "[]", "[1.0]", "null"],
                "order" => &["[1, 0]", "[]", "[0, 0]", "[2]", "null"],
                _ => &[r#""M""#, r#""q 1""#, r#""""#, r#""mcq""#, "null"],
            }
        };
        // Values some field refuses, or the fast path leaves to the full checks.
        const OTHER: &[&str] = &[
            "-1",
            "1.5",
            "18446744073709551616",
            "100.5",
            "2",
            r#""MCQ""#,
            "1",
            r#"["a", "b"]"#,
            "[]",
            "[-1]",
            "[0.5]",
            r#""a\u0041""#,
        ];
        let values = crate::core::load::json::testing::VALUES;
        (
            proptest::collection::vec((0..4u8, 0..64usize), FIELDS.len()),
            0..FIELDS.len() + 4,
            0..OTHER.len() + values.len(),
            proptest::bool::weighted(0.1),
            proptest::bool::ANY,
        )
            .prop_map(move |(picks, odd, other, dup, reversed)| {
                let mut parts = Vec::new();
                for (i, (f, (absent, v))) in FIELDS.iter().zip(picks).enumerate() {
                    let required = matches!(*f, "model" | "item_id" | "config" | "frames");
                    let ok = accepted(f);
                    let token = if i == odd {
                        *OTHER
                            .get(other)
                            .unwrap_or_else(|| &values[other - OTHER.len()])
                    } else if absent == 0 && !required {
                        continue;
                    } else if required {
                        ok[v % 2]
                    } else {
                        ok[v % ok.len()]
                    };
                    parts.push(format!("\"{f}\": {token}"));
                }
                if reversed {
                    parts.reverse();
                }
                if dup {
                    let again = parts[other % parts.len()].clone();
                    parts.push(again);
                }
                format!("{{{}}}", parts.join(", "))
            })
    }

    proptest::proptest! {
        /// Where the fast path reads a cell, it is the cell the full checks make of the line,
        /// and they find nothing wrong with it.
        #[test]
        fn the_fast_path_gives_the_cell_the_checks_give(line in typed_lines()) {
            if let Some(fast) = PlainCell::cell(&line) {
                let raw: RawCell = serde_json::from_str(&line).expect("the fast path read it");
                let mut diags = Diagnostics::default();
                let file: Arc<Path> = Arc::from(Path::new("t.jsonl"));
                let full = validate(&raw, &mut diags, &file, 1);
                proptest::prop_assert_eq!(diags.error_count(), 0, "{}", line);
                proptest::prop_assert_eq!(format!("{:?}", Some(fast)), format!("{full:?}"), "{}", line);
            }
        }
    }

    #[test]
    fn well_formed_lines_take_the_fast_path_and_others_do_not() {
        for line in [
            OK,
            r#"{"model": "M", "benchmark": "b", "item_id": "q1", "config": "8f", "frames": 8.0, "budget": 8.5, "pixels": null, "protocol": "main", "task": "open", "pred": null, "gold": "A", "correct": true, "score": 50, "confidence": 1, "blind": "B", "frame_idx": [0, 5], "source_tag": "s", "protocol_note": "n", "extra": [1]}"#,
            r#"{"frames":0,"config":"t","item_id":"q","model":"M"}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"task":"open","pred":"a cat","gold":["a cat","dog"]}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"pred":"A","gold":["A"]}"#,
        ] {
            assert!(PlainCell::cell(line).is_some(), "{line}");
        }
        for line in [
            r#"{"model":"","item_id":"q1","config":"8f","frames":8}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":null}"#,
            r#"{"model":"M","item_id":"q1","config":"8f"}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":-1}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"score":100.5}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"task":"MCQ"}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"gold":["a", 1]}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"frame_idx":[0.5]}"#,
            r#"{"model":"M\u0041","item_id":"q1","config":"8f","frames":8}"#,
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"model":"N"}"#,
        ] {
            assert!(PlainCell::cell(line).is_none(), "{line}");
        }
    }

    #[test]
    fn plain_lines_are_read_without_serde() {
        for line in [
            r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"pred":"A","gold":"B","confidence":0.97}"#,
            r#"{"model": "M", "item_id": "q1", "frame_idx": [0, 5, 9], "gold": ["a", "b"], "correct": null, "x": true}"#,
            "{}",
        ] {
            let mut plain = RawCell::default();
            assert!(plain.read_plain(line), "{line}");
            let serde: RawCell = serde_json::from_str(line).unwrap();
            assert_eq!(format!("{plain:?}"), format!("{serde:?}"));
        }
        // A field given twice is left to serde, which names it.
        assert!(!RawCell::default().read_plain(r#"{"model":"M","model":"N"}"#));
        assert!(RawCell::default().read_plain(r#"{"x":1,"x":2}"#));
    }

    #[test]
    fn a_parquet_dictionary_entry_is_read_once_however_many_rows_hold_it() {
        use super::super::parquet::Writer;
        use crate::core::matrix::MatrixBuilder;
        // 15 models x 15 items x 15 configurations, every text long (1 KB) and one of
        // few, so each is one entry of its column's dictionary, held by many rows.
        let long = |what: &str, i: usize| format!("{what} {i} {}", "x".repeat(1000));
        let names = |what: &str| (0..15).map(|i| long(what, i)).collect::<Vec<_>>();
        let (models, items, configs) = (names("model"), names("item"), names("config"));
        let preds = [long("pred", 0), long("pred", 1)];
        let (bench, protocol, gold) = (long("bench", 0), long("protocol", 0), long("gold", 0));
        let (tag, note) = (long("tag", 0), long("note", 0));
        let cols: Vec<(String, super::super::parquet::Kind)> = PARQUET_COLUMNS
            .iter()
            .map(|(n, k)| (n.to_string(), *k))
            .collect();
        let mut data = Vec::new();
        let mut w = Writer::new(&mut data, &cols).unwrap();
        let mut rows = 0;
        for (m, model) in models.iter().enumerate() {
            for (i, item_id) in items.iter().enumerate() {
                for (c, config) in configs.iter().enumerate() {
                    // The zero-frame answer is the blind one every cell gives.
                    let pred = &preds[if c == 0 { 0 } else { (m + i + c) % 2 }];
                    let cell = CellInput {
                        model,
                        item_id,
                        benchmark: &bench,
                        config,
                        protocol: &protocol,
                        frames: c as u64,
                        budget: c as f64,
                        pixels: None,
                        task: Task::Mcq,
                        pred: Some(pred),
                        gold: Gold::One(&gold),
                        correct: None,
                        score: None,
                        confidence: None,
                        blind: Some(&preds[0]),
                        frame_idx: None,
                        source_tag: Some(&tag),
                        protocol_note: Some(&note),
                        replicate: None,
                        nuisance: None,
                        order: None,
                        cluster: None,
                    };
                    push_parquet(&mut w.columns, &cell);
                    rows += 1;
                }
            }
        }
        w.finish().unwrap();
        let path = Path::new("cells.parquet");
        let mut b = MatrixBuilder::new();
        let name = b.add_file(path);
        read_parquet_cells(data, path, &mut b, &name).unwrap();
        assert_eq!((b.matrix_len(), b.diags.error_count()), (rows, 0));
        // Each of the 53 distinct texts is read once, and each pair of a prediction and
        // a gold compared once: not once a row (3 375 rows of 10 texts).
        let distinct = 3 * 15 + 2 + 6;
        assert!(
            b.texts_read <= distinct as u64 + 2,
            "{} texts read for {rows} rows",
            b.texts_read
        );
    }

    #[test]
    fn a_parquet_footer_broken_anywhere_is_refused_never_a_panic() {
        use super::super::parquet::Writer;
        use crate::core::matrix::MatrixBuilder;
        let cols: Vec<(String, super::super::parquet::Kind)> = PARQUET_COLUMNS
            .iter()
            .map(|(n, k)| (n.to_string(), *k))
            .collect();
        let mut data = Vec::new();
        let mut w = Writer::new(&mut data, &cols).unwrap();
        for (config, frames) in [("8f", 8), ("16f", 16)] {
            let cell = CellInput {
                model: "M",
                item_id: "q1",
                benchmark: "b",
                config,
                protocol: "main",
                frames,
                budget: frames as f64,
                pixels: None,
                task: Task::Mcq,
                pred: Some("A"),
                gold: Gold::One("A"),
                correct: None,
                score: None,
                confidence: None,
                blind: None,
                frame_idx: None,
                source_tag: None,
                protocol_note: None,
                replicate: None,
                nuisance: None,
                order: None,
                cluster: None,
            };
            push_parquet(&mut w.columns, &cell);
        }
        w.finish().unwrap();
        // The footer: its length is in the four bytes before the closing magic.
        let n = data.len();
        let footer = u32::from_le_bytes(data[n - 8..n - 4].try_into().unwrap()) as usize;
        let path = Path::new("cells.parquet");
        let mut panicked = Vec::new();
        for at in n - 8 - footer..n - 8 {
            for byte in [0xff, 0x80, 0x01] {
                let mut broken = data.clone();
                broken[at] = byte;
                let read = std::panic::catch_unwind(|| {
                    let mut b = MatrixBuilder::new();
                    let name = b.add_file(path);
                    let _ = read_parquet_cells(broken, path, &mut b, &name);
                });
                if read.is_err() {
                    panicked.push((at, byte));
                }
            }
        }
        assert!(panicked.is_empty(), "panics at (byte, value): {panicked:?}");
    }

    fn skims(line: &str) -> bool {
        let keys = memchr::memmem::find_iter(line.as_bytes(), REPLICATE_KEY);
        names_a_replicate(line.as_bytes(), keys)
    }

    #[test]
    fn a_replicate_line_is_told_from_its_bytes_and_nothing_else_is() {
        for line in [
            r#"{"model":"M","item_id":"q","config":"8f","frames":8,"replicate":"rerun-1","nuisance":"rerun"}"#,
            r#"{"replicate" : "p", "model": "M"}"#,
            r#"{"replicate":" "}"#,
            r#"{"pred":"replicate","replicate":"r"}"#,
        ] {
            assert!(skims(line), "{line}");
        }
        for line in [
            r#"{"model":"M","replicate":""}"#,
            r#"{"model":"M","replicate":null}"#,
            r#"{"model":"M","replicate":1}"#,
            r#"{"model":"M","extra":{"replicate":"r"}}"#,
            r#"{"model":"M","pred":"{","replicate":"r"}"#,
            r#"{"model":"M","pred":"\"replicate\":\"r\""}"#,
            r#"{"model":"M","pred":"replicate"}"#,
            r#"{"model":"M","extra":["replicate","r"]}"#,
            r#""replicate":"r""#,
        ] {
            assert!(!skims(line), "{line}");
        }
    }

    /// A line of cells JSONL of fields that name a replicate, or look as if they did.
    fn replicate_like_lines() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        const PARTS: &[&str] = &[
            r#""replicate":"r1""#,
            r#""replicate": "r1""#,
            r#""replicate" :"""#,
            r#""replicate":"""#,
            r#""replicate":null"#,
            r#""replicate":1"#,
            r#""replicate":["r"]"#,
            r#""extra":{"replicate":"r"}"#,
            r#""extra":[{"replicate":"r"}]"#,
            r#""pred":"\"replicate\":\"x\"""#,
            r#""pred":"\\"replicate":"x""#,
            r#""pred":"replicate""#,
            r#""pred":"{""#,
            r#""nuisance":"rerun""#,
            r#""model":"M""#,
            r#""item_id":"q""#,
            r#""config":"8f""#,
            r#""frames":8"#,
        ];
        (
            proptest::collection::vec(0..PARTS.len(), 0..7),
            proptest::sample::select(vec![("{", "}"), ("{", ""), ("", "}"), ("[", "]")]),
        )
            .prop_map(|(picks, (open, close))| {
                let parts: Vec<&str> = picks.iter().map(|&i| PARTS[i]).collect();
                format!("{open}{}{close}", parts.join(","))
            })
    }

    proptest::proptest! {
        /// A line passed over as a replicate is never a canonical cell: serde refuses it
        /// (the whole read names its problem), or it names a replicate.
        #[test]
        fn a_line_passed_over_as_a_replicate_is_one_or_is_refused(
            line in proptest::prop_oneof![
                replicate_like_lines(),
                crate::core::load::json::testing::lines(&FIELDS),
            ],
        ) {
            let read = serde_json::from_str::<RawCell>(&line);
            if let (true, Ok(raw)) = (skims(&line), read) {
                proptest::prop_assert!(
                    matches!(&raw.replicate, J::Str(r) if !r.is_empty()),
                    "{} read as {:?}", line, raw.replicate
                );
            }
        }
    }

    /// A reader that skims replicates reads the canonical cells of a file as one that does
    /// not, and counts the replicate lines it passed over, block boundaries or not.
    #[test]
    fn skimming_leaves_the_canonical_cells_and_counts_the_replicates() {
        // Lines ending in CRLF, blank lines, spaced keys; replicates whose key is escaped
        // are not told from their bytes, and are read.
        let (mut text, mut reps, mut escaped) = (String::new(), 0, 0);
        for i in 0..5000 {
            let end = if i % 5 == 0 { "\r\n" } else { "\n" };
            text.push_str(&format!(
                "{{\"model\": \"M\",\"item_id\":\"q{i}\",\"config\":\"8f\",\"frames\":8,\"pred\":\"A\",\"gold\":\"A\"}}{end}"
            ));
            if i % 7 == 0 {
                text.push_str("  \n");
            }
            if i % 3 == 0 {
                let key = match i % 9 {
                    0 => r#""replic\u0061te":"r""#,
                    3 => r#""replicate" : "r""#,
                    _ => r#""replicate":"r""#,
                };
                text.push_str(&format!(
                    "{{\"model\":\"M\",\"item_id\":\"q{i}\",\"config\":\"8f\",\"frames\":8,\"pred\":\"B\",\"gold\":\"A\",{key},\"nuisance\":\"rerun\"}}{end}"
                ));
                reps += 1;
                escaped += u64::from(i % 9 == 0);
            }
        }
        let read = |skim: bool, block: usize| {
            let mut b = MatrixBuilder::new();
            b.skim_replicates = skim;
            let file = b.add_file(std::path::Path::new("t.jsonl"));
            read_blocks(
                text.as_bytes(),
                None,
                block,
                &Lines,
                1,
                &mut b,
                &|x: &[u8], line, s: &mut MatrixBuilder| parse_block(x, line, &file, s),
            )
            .expect("io");
            let skimmed = b.replicates_skimmed;
            let (m, _) = b.finish().expect("valid");
            (m, skimmed)
        };
        let (whole, none) = read(false, BLOCK);
        assert_eq!((none, whole.replicates.read), (0, reps));
        for block in [BLOCK, 4096, 1000] {
            let (first, skimmed) = read(true, block);
            assert_eq!(skimmed, reps - escaped, "block {block}");
            assert_eq!(first.replicates.read, escaped);
            assert_eq!(first.n_cells(), whole.n_cells());
            assert_eq!(first.cell_line, whole.cell_line, "lines are counted still");
            assert_eq!(first.stats.records, whole.stats.records);
        }
    }
}
