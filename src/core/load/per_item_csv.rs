//! The per-item CSV interchange format (SPEC.md §1.7): one row per (item, model,
//! configuration), columns found by name. Every row becomes an MCQ cell of protocol "main".

use std::io::Read;
use std::path::Path;

use super::CellSink;
use crate::core::diag::Loc;
use crate::core::matrix::{CellInput, Gold, Task};

/// Column positions, found by header name.
struct Columns {
    sample_id: usize,
    model: usize,
    split: Option<usize>,
    config: usize,
    frame_count: usize,
    pixel_count: Option<usize>,
    predicted_option: Option<usize>,
    ground_truth_option: Option<usize>,
    correct: Option<usize>,
    source_tag: Option<usize>,
    protocol_note: Option<usize>,
}

impl Columns {
    /// Finds the columns; `Err` lists the required ones missing and the known ones repeated.
    fn find(header: &csv::ByteRecord) -> Result<Columns, (Vec<&'static str>, Vec<&'static str>)> {
        const KNOWN: [&str; 11] = [
            "sample_id",
            "model",
            "split",
            "config",
            "frame_count",
            "pixel_count",
            "predicted_option",
            "ground_truth_option",
            "correct",
            "source_tag",
            "protocol_note",
        ];
        let repeated: Vec<&'static str> = KNOWN
            .into_iter()
            .filter(|k| header.iter().filter(|h| *h == k.as_bytes()).count() > 1)
            .collect();
        let pos = |name: &str| header.iter().position(|h| h == name.as_bytes());
        let mut missing = Vec::new();
        let mut required = |name: &'static str| {
            pos(name).unwrap_or_else(|| {
                missing.push(name);
                0
            })
        };
        let cols = Columns {
            sample_id: required("sample_id"),
            model: required("model"),
            config: required("config"),
            frame_count: required("frame_count"),
            split: pos("split"),
            pixel_count: pos("pixel_count"),
            predicted_option: pos("predicted_option"),
            ground_truth_option: pos("ground_truth_option"),
            correct: pos("correct"),
            source_tag: pos("source_tag"),
            protocol_note: pos("protocol_note"),
        };
        if missing.is_empty() && repeated.is_empty() {
            Ok(cols)
        } else {
            Err((missing, repeated))
        }
    }
}

/// Decimal digits only, as SPEC.md §1.7 requires of counts.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Reads a per-item CSV into the builder. Problems go to `b.diags`; an I/O error stops
/// the read.
pub fn read_per_item_csv<S: CellSink>(
    reader: impl Read,
    b: &mut S,
    path: &Path,
) -> std::io::Result<()> {
    let file = b.add_file(path);
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(reader);
    let mut rec = csv::ByteRecord::new();
    let mut cols: Option<Columns> = None;
    let mut header_len = 0;
    loop {
        match rdr.read_byte_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map(|p| p.line());
                if let csv::ErrorKind::Io(_) = e.kind() {
                    return Err(std::io::Error::other(e.to_string()));
                }
                b.diags()
                    .error(&file, line, None, format!("malformed CSV: {e}"));
                if line.is_none() {
                    break;
                }
                continue;
            }
        }
        let line = rec.position().map_or(0, |p| p.line());
        let loc = Loc {
            file: file.clone(),
            line,
        };
        // A blank line parses as one empty field; skip it.
        if rec.len() == 1 && rec[0].is_empty() {
            continue;
        }
        let Some(c) = &cols else {
            let mut header = rec.clone();
            if let Some(first) = header.get(0)
                && let Some(stripped) = first.strip_prefix(b"\xef\xbb\xbf".as_slice())
            {
                let mut fixed = csv::ByteRecord::new();
                fixed.push_field(trim_bytes(stripped));
                for f in header.iter().skip(1) {
                    fixed.push_field(f);
                }
                header = fixed;
            }
            match Columns::find(&header) {
                Ok(c) => {
                    header_len = header.len();
                    cols = Some(c);
                }
                Err((missing, repeated)) => {
                    for name in missing {
                        b.diags().at(
                            &loc,
                            Some(name),
                            "required column is missing from the header".into(),
                        );
                    }
                    for name in repeated {
                        b.diags().at(
                            &loc,
                            Some(name),
                            "column appears more than once in the header".into(),
                        );
                    }
                    return Ok(());
                }
            }
            continue;
        };
        b.count_record();
        if rec.len() != header_len {
            b.diags().at(
                &loc,
                None,
                format!(
                    "row has {} fields but the header has {header_len}",
                    rec.len()
                ),
            );
            continue;
        }
        let mut strings: Vec<&str> = Vec::with_capacity(rec.len());
        let mut bad_utf8 = false;
        for f in rec.iter() {
            match std::str::from_utf8(f) {
                Ok(s) => strings.push(s),
                Err(_) => {
                    bad_utf8 = true;
                    strings.push("");
                }
            }
        }
        if bad_utf8 {
            b.diags().at(&loc, None, "row is not valid UTF-8".into());
            continue;
        }
        let get = |i: Option<usize>| i.map(|i| strings[i]).filter(|s| !s.is_empty());
        let mut ok = true;
        let mut fail = |b: &mut S, field: &str, msg: String| {
            b.diags().at(&loc, Some(field), msg);
            ok = false;
        };
        for (name, i) in [
            ("sample_id", c.sample_id),
            ("model", c.model),
            ("config", c.config),
        ] {
            if strings[i].is_empty() {
                fail(b, name, "must not be empty".into());
            }
        }
        let frames = digits(strings[c.frame_count]);
        if frames.is_none() {
            fail(
                b,
                "frame_count",
                format!(
                    "must be decimal digits (an integer >= 0), found {:?}",
                    strings[c.frame_count]
                ),
            );
        }
        let pixels = match get(c.pixel_count) {
            None => None,
            Some(s) => match digits(s) {
                Some(p) => Some(p),
                None => {
                    fail(
                        b,
                        "pixel_count",
                        format!("must be decimal digits or empty, found {s:?}"),
                    );
                    None
                }
            },
        };
        let correct = match get(c.correct) {
            None => None,
            Some(s) if s == "1" || s.eq_ignore_ascii_case("true") => Some(true),
            Some(s) if s == "0" || s.eq_ignore_ascii_case("false") => Some(false),
            Some(s) => {
                fail(
                    b,
                    "correct",
                    format!("must be 1, 0, true, false or empty, found {s:?}"),
                );
                None
            }
        };
        if !ok {
            continue;
        }
        let Some(frames) = frames else { continue };
        let cell = CellInput {
            model: strings[c.model],
            item_id: strings[c.sample_id],
            benchmark: get(c.split).unwrap_or("default"),
            config: strings[c.config],
            protocol: "main",
            frames,
            budget: frames as f64,
            pixels,
            task: Task::Mcq,
            pred: get(c.predicted_option),
            gold: get(c.ground_truth_option).map_or(Gold::None, Gold::One),
            correct,
            score: None,
            confidence: None,
            blind: None,
            frame_idx: None,
            source_tag: get(c.source_tag),
            protocol_note: get(c.protocol_note),
        };
        b.push(cell, &loc);
    }
    if cols.is_none() {
        b.diags()
            .error(&file, None, None, "the CSV has no header row".into());
    }
    Ok(())
}

fn trim_bytes(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::matrix::MatrixBuilder;

    fn load(text: &str) -> Result<crate::core::matrix::ResponseMatrix, Vec<String>> {
        let mut b = MatrixBuilder::new();
        read_per_item_csv(text.as_bytes(), &mut b, Path::new("p.csv")).expect("io");
        match b.finish() {
            Ok((m, _)) => Ok(m),
            Err(d) => Err(d.sorted().into_iter().map(|d| d.to_string()).collect()),
        }
    }

    const HEADER: &str = "sample_id,model,split,config,frame_count,pixel_count,predicted_option,ground_truth_option,correct,source_tag,protocol_note";

    #[test]
    fn columns_by_name_bom_crlf_quotes_and_blank_lines() {
        let text = "\u{feff}config , model,sample_id,frame_count,correct,extra\r\n\r\n\"16f\",\"M \"\"x\"\"\", a1 ,16,TRUE,zz\r\ntextonly,M,a1,0,,\r\n";
        let m = load(text).expect("valid");
        assert_eq!(m.n_cells(), 2);
        assert_eq!(m.models.names().collect::<Vec<_>>(), ["M", "M \"x\""]);
        assert_eq!(m.benchmarks.name(0), "default");
        assert_eq!(m.stats.records, 2);
        // `correct` empty and no gold: invalid (SPEC.md §1.3).
        assert_eq!(m.stats.cells_invalid, 1);
    }

    #[test]
    fn every_row_problem_is_reported() {
        let text = format!(
            "{HEADER}\nq,M,s,8f,8,,A,A,1,,\nq,,s,16f,1x,abc,A,A,yes,,\nq,M,s\nq,M,s,8f,8,,B,A,,,\n"
        );
        let e = load(&text).expect_err("rejected");
        let want = [
            "p.csv:3: error: field `model`: must not be empty",
            "p.csv:3: error: field `frame_count`: must be decimal digits (an integer >= 0), found \"1x\"",
            "p.csv:3: error: field `pixel_count`: must be decimal digits or empty, found \"abc\"",
            "p.csv:3: error: field `correct`: must be 1, 0, true, false or empty, found \"yes\"",
            "p.csv:4: error: row has 3 fields but the header has 11",
        ];
        for w in want {
            assert!(e.iter().any(|x| x == w), "missing {w:?} in {e:#?}");
        }
        assert!(
            e.iter()
                .any(|x| x.starts_with("p.csv:5: error: duplicate cell")),
            "{e:#?}"
        );
    }

    #[test]
    fn missing_columns_are_named() {
        let e = load("sample_id,split\nq,s\n").expect_err("rejected");
        for col in ["model", "config", "frame_count"] {
            assert!(
                e.iter().any(|x| x
                    == &format!(
                        "p.csv:1: error: field `{col}`: required column is missing from the header"
                    )),
                "{e:#?}"
            );
        }
    }

    #[test]
    fn negative_frames_are_rejected() {
        let e = load(&format!("{HEADER}\nq,M,s,8f,-8,,A,A,1,,\n")).expect_err("rejected");
        assert!(e[0].contains("field `frame_count`"), "{e:?}");
    }
}
