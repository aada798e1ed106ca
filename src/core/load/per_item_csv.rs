//! The per-item CSV interchange format (docs/measures.md §1.7): one row per (item, model,
//! configuration), columns found by name. Every row becomes an MCQ cell of protocol "main".

use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use super::CellSink;
use super::chunk::{BLOCK, CsvRecords, read_blocks};
use super::json::FieldCheck;
use crate::core::diag::Loc;
use crate::core::matrix::{CellInput, Gold, Task};

/// The columns frameaudit reads (docs/measures.md §1.7); any other is ignored.
const KNOWN: [&str; 14] = [
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
    "replicate",
    "nuisance",
    "cluster",
];

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
    replicate: Option<usize>,
    nuisance: Option<usize>,
    cluster: Option<usize>,
}

impl Columns {
    /// Finds the columns; `Err` lists the required ones missing and the known ones repeated.
    fn find(header: &csv::ByteRecord) -> Result<Columns, (Vec<&'static str>, Vec<&'static str>)> {
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
            replicate: pos("replicate"),
            nuisance: pos("nuisance"),
            cluster: pos("cluster"),
        };
        if missing.is_empty() && repeated.is_empty() {
            Ok(cols)
        } else {
            Err((missing, repeated))
        }
    }
}

/// Decimal digits only, as docs/measures.md §1.7 requires of counts.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    // One pass: each byte checked and added (None past u64, as `parse` gives).
    s.bytes().try_fold(0u64, |n, b| {
        let d = b.wrapping_sub(b'0');
        (d <= 9).then_some(())?;
        n.checked_mul(10)?.checked_add(u64::from(d))
    })
}

/// The header: its columns, and its fields' names (trimmed), as many as a row has fields.
struct Header {
    cols: Columns,
    names: csv::ByteRecord,
}

impl Header {
    /// How many fields a row has.
    fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether column `i` is one frameaudit reads.
    fn reads(&self, i: usize) -> bool {
        self.names
            .get(i)
            .is_some_and(|n| KNOWN.iter().any(|k| k.as_bytes() == n))
    }

    /// The name of column `i`, for a message.
    fn name(&self, i: usize) -> String {
        String::from_utf8_lossy(self.names.get(i).unwrap_or_default()).into_owned()
    }
}

/// The line, counted from 0 in `block`, of the record the reader positioned at `pos` reads
/// next. The csv reader counts a CRLF's `\n` and skipped blank lines into the next record,
/// so count the line ends that lead up to the record's first byte.
fn record_line(block: &[u8], pos: &csv::Position) -> u64 {
    let at = (pos.byte() as usize).min(block.len());
    let lead = block[at..]
        .iter()
        .take_while(|&&b| b == b'\n' || b == b'\r')
        .filter(|&&b| b == b'\n')
        .count() as u64;
    pos.line() - 1 + lead
}

/// Parses rows (whole records) of a per-item CSV whose first line is `first_line`. A block
/// without a quote character is cut at line ends and commas directly, which is all the CSV
/// grammar asks of such text (the tests hold this to the csv reader); a block with quotes
/// goes through the csv reader.
fn parse_block<S: CellSink>(
    block: &[u8],
    first_line: u64,
    h: &Header,
    file: &Arc<Path>,
    sink: &mut S,
) {
    if memchr::memchr(b'"', block).is_none() {
        parse_plain(block, first_line, h, file, sink);
    } else {
        parse_quoted(block, first_line, h, file, sink);
    }
}

/// A block without quotes: a record ends at `\n`, `\r` or `\r\n` (an empty one is no
/// record), its fields at commas; lines are counted by `\n`. One scan finds all three, and
/// one UTF-8 check covers the block when it passes (a cut at an ASCII byte is always on a
/// character boundary).
fn parse_plain<S: CellSink>(
    block: &[u8],
    first_line: u64,
    h: &Header,
    file: &Arc<Path>,
    sink: &mut S,
) {
    let text = std::str::from_utf8(block).ok();
    let mut row = |start: usize, end: usize, fields: &[Range<usize>], line: u64| {
        let whole = super::chunk::text_at(block, text, start..end);
        parse_row(&block[start..end], whole, fields, line, h, file, sink);
    };
    let mut fields: Vec<Range<usize>> = Vec::with_capacity(h.len());
    let (mut start, mut from, mut line) = (0, 0, first_line);
    for i in crate::core::text::positions_of3(block, b',', b'\n', b'\r') {
        if block[i] == b',' {
            fields.push(from - start..i - start);
            from = i + 1;
            continue;
        }
        if i > start {
            fields.push(from - start..i - start);
            row(start, i, &fields, line);
            fields.clear();
        }
        if block[i] == b'\n' {
            line += 1;
        }
        (start, from) = (i + 1, i + 1);
    }
    if start < block.len() {
        fields.push(from - start..block.len() - start);
        row(start, block.len(), &fields, line);
    }
}

/// A block with quotes, record by record through the csv reader.
fn parse_quoted<S: CellSink>(
    block: &[u8],
    first_line: u64,
    h: &Header,
    file: &Arc<Path>,
    sink: &mut S,
) {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(block);
    let mut rec = csv::ByteRecord::new();
    let mut fields: Vec<Range<usize>> = Vec::with_capacity(h.len());
    loop {
        let start = first_line + record_line(block, rdr.position());
        let from = rdr.position().byte() as usize;
        match rdr.read_byte_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                sink.diags()
                    .error(file, Some(start), None, format!("malformed CSV: {e}"));
                continue;
            }
        }
        let line = first_line + rec.position().map_or(0, |p| record_line(block, p));
        let to = rdr.position().byte() as usize;
        let raw = &block[from.min(block.len())..to.min(block.len())];
        if quoting_went_wrong(raw, &rec, line, h, file, sink) {
            continue;
        }
        fields.clear();
        fields.extend((0..rec.len()).filter_map(|i| rec.range(i)));
        let whole = std::str::from_utf8(rec.as_slice()).ok();
        parse_row(rec.as_slice(), whole, &fields, line, h, file, sink);
    }
}

/// How a record's text is quoted, read as the csv reader reads it (RFC 4180): a quote
/// opens a quoted field only as the field's first character; inside, `""` is a quote and
/// `"` closes it.
struct Quoting {
    /// The fields (by position) whose text starts with spaces and then a quote, which CSV
    /// keeps as a character of the value.
    spaced: Vec<usize>,
    /// The fields (by position) with text after their closing quote (`"1"x`), which CSV
    /// joins to the value (`1x`). Spaces there are not counted.
    trailing: Vec<usize>,
    /// A quoted field is still open where the record ends (at the end of the file).
    unclosed: bool,
}

fn quoting(raw: &[u8]) -> Quoting {
    // The blank lines the reader passed over before the record.
    let lead = raw
        .iter()
        .take_while(|&&b| b == b'\n' || b == b'\r')
        .count();
    let raw = &raw[lead..];
    let mut q = Quoting {
        spaced: Vec::new(),
        trailing: Vec::new(),
        unclosed: false,
    };
    let (mut field, mut start, mut quoted) = (0, true, false);
    // The field's quote has closed: what follows is joined to its value.
    let mut closed = false;
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if quoted {
            if c == b'"' {
                if raw.get(i + 1) == Some(&b'"') {
                    i += 1;
                } else {
                    (quoted, closed) = (false, true);
                }
            }
        } else if c == b',' {
            (field, start, closed) = (field + 1, true, false);
        } else if c == b'\n' || c == b'\r' {
            break;
        } else if closed {
            if c != b' ' && c != b'\t' {
                q.trailing.push(field);
                closed = false;
            }
        } else if start {
            start = false;
            if c == b'"' {
                quoted = true;
            } else if c == b' ' || c == b'\t' {
                let rest = raw[i..].iter().position(|&b| b != b' ' && b != b'\t');
                if rest.is_some_and(|r| raw[i + r] == b'"') {
                    q.spaced.push(field);
                }
            }
        }
        i += 1;
    }
    q.unclosed = quoted;
    q
}

/// The quoting mistakes the csv reader reads as text, said for the record at `line`, whose
/// text is `raw` (true when there were any, the record then left out): a quote after a
/// space in a column frameaudit reads, which CSV keeps as a character of the value
/// (` "001-1"` reads `"001-1"`, an id no other file has), and a quote never closed, which
/// takes the rest of the file into its field.
fn quoting_went_wrong<S: CellSink>(
    raw: &[u8],
    rec: &csv::ByteRecord,
    line: u64,
    h: &Header,
    file: &Arc<Path>,
    sink: &mut S,
) -> bool {
    let q = quoting(raw);
    if q.unclosed {
        sink.count_record();
        let ends = rec.iter().flatten().filter(|&&b| b == b'\n').count();
        let msg = format!(
            "a quote opened on this line is never closed, so the rest of the file ({ends} line end{}) was read into one field: close the quote",
            if ends == 1 { "" } else { "s" }
        );
        sink.diags().error(file, Some(line), None, msg);
        return true;
    }
    let mut bad = false;
    for i in q.trailing.into_iter().filter(|&i| h.reads(i)) {
        let shown = String::from_utf8_lossy(rec.get(i).unwrap_or_default());
        let msg = format!(
            "text after a closing quote is joined to the value in CSV, so this reads {shown:?}: quote the whole value, or remove what follows the quote"
        );
        sink.diags().error(file, Some(line), Some(&h.name(i)), msg);
        bad = true;
    }
    for i in q.spaced.into_iter().filter(|&i| h.reads(i)) {
        let shown = String::from_utf8_lossy(rec.get(i).unwrap_or_default().trim_ascii());
        let msg = format!(
            "a quote after a space is part of the value in CSV, so this reads {shown:?}: remove the space before the opening quote"
        );
        sink.diags().error(file, Some(line), Some(&h.name(i)), msg);
        bad = true;
    }
    if bad {
        sink.count_record();
    }
    bad
}

/// One record read at `line`: its bytes (the fields' text), the same as text when they are
/// UTF-8, and each field's range in them.
fn parse_row<S: CellSink>(
    bytes: &[u8],
    whole: Option<&str>,
    fields: &[Range<usize>],
    line: u64,
    h: &Header,
    file: &Arc<Path>,
    sink: &mut S,
) {
    let c = &h.cols;
    // A blank line parses as one empty field; skip it.
    if fields.len() == 1 && bytes[fields[0].clone()].trim_ascii().is_empty() {
        return;
    }
    sink.count_record();
    if fields.len() != h.len() {
        let n = fields.len();
        let msg = format!(
            "row has {n} field{} but the header has {}",
            if n == 1 { "" } else { "s" },
            h.len()
        );
        sink.diags().error(file, Some(line), None, msg);
        return;
    }
    // A field must also start and end on character boundaries.
    let mut ok = whole.is_some();
    let mut text = |i: usize| match whole.and_then(|w| fields.get(i).and_then(|r| w.get(r.clone())))
    {
        Some(s) => s.trim_ascii(),
        None => {
            ok = false;
            ""
        }
    };
    let (sample_id, model, config, frame_count) = (
        text(c.sample_id),
        text(c.model),
        text(c.config),
        text(c.frame_count),
    );
    let mut opt = |i: Option<usize>| i.map(&mut text).filter(|s| !s.is_empty());
    let (split, pixel_count, pred, gold, correct, source_tag, protocol_note) = (
        opt(c.split),
        opt(c.pixel_count),
        opt(c.predicted_option),
        opt(c.ground_truth_option),
        opt(c.correct),
        opt(c.source_tag),
        opt(c.protocol_note),
    );
    let (replicate, nuisance, cluster) = (opt(c.replicate), opt(c.nuisance), opt(c.cluster));
    if !ok {
        sink.diags()
            .error(file, Some(line), None, "row is not valid UTF-8".into());
        return;
    }
    let mut ck = FieldCheck::new(sink.diags(), file, line);
    for (name, v) in [
        ("sample_id", sample_id),
        ("model", model),
        ("config", config),
    ] {
        if v.is_empty() {
            ck.fail(name, "must not be empty".into());
        }
    }
    let frames = digits(frame_count);
    if frames.is_none() {
        ck.fail(
            "frame_count",
            format!("must be decimal digits (an integer >= 0), found {frame_count:?}"),
        );
    }
    let pixels = match pixel_count {
        None => None,
        Some(s) => match digits(s) {
            Some(p) => Some(p),
            None => {
                ck.fail(
                    "pixel_count",
                    format!("must be decimal digits or empty, found {s:?}"),
                );
                None
            }
        },
    };
    let correct = match correct {
        None => None,
        Some(s) if s == "1" || s.eq_ignore_ascii_case("true") => Some(true),
        Some(s) if s == "0" || s.eq_ignore_ascii_case("false") => Some(false),
        Some(s) => {
            ck.fail(
                "correct",
                format!("must be 1, 0, true, false or empty, found {s:?}"),
            );
            None
        }
    };
    super::json::check_replicate(&mut ck, replicate, nuisance);
    let (Some(frames), true) = (frames, ck.ok) else {
        return;
    };
    let cell = CellInput {
        model,
        item_id: sample_id,
        benchmark: split.unwrap_or("default"),
        config,
        protocol: "main",
        frames,
        budget: frames as f64,
        pixels,
        task: Task::Mcq,
        pred,
        gold: gold.map_or(Gold::None, Gold::One),
        correct,
        score: None,
        confidence: None,
        blind: None,
        frame_idx: None,
        source_tag,
        protocol_note,
        replicate,
        nuisance,
        order: None,
        cluster,
    };
    sink.push(&cell, line);
}

/// Reads a per-item CSV into the sink: the header first, then blocks of rows parsed in
/// parallel. Problems go to the sink's diagnostics; an I/O error stops the read.
pub fn read_per_item_csv<S: CellSink>(
    reader: impl Read,
    size: Option<u64>,
    sink: &mut S,
    file: &Arc<Path>,
) -> std::io::Result<()> {
    // A UTF-16 file's header would read as one column of NULs, every column "missing".
    let (wide, mut reader) = super::encoding::peek(reader)?;
    if let Some(w) = wide {
        sink.diags().error(file, None, None, w.refusal());
        return Ok(());
    }
    // The header is in the first lines; read until it is complete.
    let mut head = Vec::new();
    let header_end = loop {
        let mut buf = vec![0u8; 64 << 10];
        let n = reader.read(&mut buf)?;
        head.extend_from_slice(&buf[..n]);
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(&head[..]);
        let mut rec = csv::ByteRecord::new();
        let mut found = None;
        while rdr.read_byte_record(&mut rec).unwrap_or(false) {
            if !(rec.len() == 1 && rec[0].trim_ascii().is_empty()) {
                // After a CRLF header the reader stops between `\r` and `\n`.
                let mut end = rdr.position().byte() as usize;
                if head.get(end) == Some(&b'\n') {
                    end += 1;
                }
                let line = 1 + memchr::memchr_iter(b'\n', &head[..end]).count() as u64;
                found = Some((rec.clone(), end, line));
                break;
            }
        }
        // Only trust a header followed by a line end (or the end of the file).
        match found {
            Some((rec, end, line)) if n == 0 || head[..end].ends_with(b"\n") => {
                break Some((rec, end, line));
            }
            _ if n == 0 => break None,
            _ => {}
        }
    };
    let Some((mut header, end, rows_line)) = header_end else {
        sink.diags()
            .error(file, None, None, "the CSV has no header row".into());
        return Ok(());
    };
    if let Some(first) = header.get(0)
        && let Some(stripped) = first.strip_prefix(b"\xef\xbb\xbf".as_slice())
    {
        let mut fixed = csv::ByteRecord::new();
        fixed.push_field(stripped);
        for f in header.iter().skip(1) {
            fixed.push_field(f);
        }
        header = fixed;
    }
    let mut trimmed = csv::ByteRecord::new();
    for f in header.iter() {
        trimmed.push_field(f.trim_ascii());
    }
    let header_line = rows_line - 1;
    let cols = match Columns::find(&trimmed) {
        Ok(cols) => cols,
        Err((missing, repeated)) => {
            let loc = Loc {
                file: file.clone(),
                line: header_line.max(1),
            };
            for name in missing {
                sink.diags().at(
                    &loc,
                    Some(name),
                    "required column is missing from the header".into(),
                );
            }
            for name in repeated {
                sink.diags().at(
                    &loc,
                    Some(name),
                    "column appears more than once in the header".into(),
                );
            }
            return Ok(());
        }
    };
    let h = Header {
        cols,
        names: trimmed,
    };
    let rest = std::io::Cursor::new(head[end..].to_vec()).chain(reader);
    read_blocks(
        rest,
        size,
        BLOCK,
        &CsvRecords,
        rows_line,
        sink,
        &|b: &[u8], line, s: &mut S| parse_block(b, line, &h, file, s),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::matrix::MatrixBuilder;

    fn load(text: &str) -> Result<crate::core::matrix::ResponseMatrix, Vec<String>> {
        let mut b = MatrixBuilder::new();
        let file = b.add_per_item_csv(Path::new("p.csv"));
        read_per_item_csv(text.as_bytes(), None, &mut b, &file).expect("io");
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
        // `correct` empty and no gold: invalid (docs/measures.md §1.3).
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

    /// Line numbers hold with CRLF line ends and blank lines, in a small file and in one
    /// parsed in blocks.
    #[test]
    fn lines_are_counted_with_crlf_and_blank_lines() {
        let row = "q,M,s,8f,8,,A,A,1,,";
        for (end, blank) in [("\n", ""), ("\r\n", ""), ("\r\n", "\r\n"), ("\n", "\n\n")] {
            let text = format!(
                "{HEADER}{end}{row}{end}{blank}q,M,s,16f,1x,,A,A,1,,{end}{blank}q,M,s{end}"
            );
            let e = load(&text).expect_err("rejected");
            let skip = if blank.is_empty() {
                0
            } else {
                blank.matches('\n').count()
            };
            let want = [
                format!(
                    "p.csv:{}: error: field `frame_count`: must be decimal digits (an integer >= 0), found \"1x\"",
                    3 + skip
                ),
                format!(
                    "p.csv:{}: error: row has 3 fields but the header has 11",
                    4 + 2 * skip
                ),
            ];
            assert_eq!(e[..2], want, "line end {end:?}, blank {blank:?}");
        }
    }

    /// A UTF-16 file (Excel's "Unicode Text", PowerShell's `>`) is refused by its encoding,
    /// with the way to convert it, not read as a header of NULs whose columns are missing.
    #[test]
    fn a_utf16_file_is_refused_by_its_encoding() {
        let text = format!("{HEADER}\nq,M,s,8f,8,,A,A,1,,\n");
        for (big, mark, name) in [
            (false, true, "UTF-16"),
            (true, true, "UTF-16"),
            (false, false, "UTF-16LE"),
            (true, false, "UTF-16BE"),
        ] {
            let mut bytes = Vec::new();
            for u in mark
                .then_some(0xFEFF)
                .into_iter()
                .chain(text.encode_utf16())
            {
                bytes.extend(if big {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                });
            }
            let mut b = MatrixBuilder::new();
            let file = b.add_file(Path::new("p.csv"));
            read_per_item_csv(&bytes[..], None, &mut b, &file).expect("io");
            let e: Vec<String> = b
                .finish()
                .expect_err("rejected")
                .sorted()
                .into_iter()
                .map(|d| d.to_string())
                .collect();
            assert_eq!(e.len(), 1, "{e:#?}");
            assert!(
                e[0].starts_with(&format!("p.csv: error: the file is {name} (")),
                "{e:#?}"
            );
            assert!(
                e[0].contains(&format!("iconv -f {name} -t UTF-8")),
                "{e:#?}"
            );
        }
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

    /// Everything a parse hands its sink: each cell with its line, record counts and the
    /// problems, in order.
    #[derive(Default)]
    struct Record {
        seen: Vec<String>,
        diags: crate::core::diag::Diagnostics,
    }

    impl CellSink for Record {
        fn fork(&self) -> Self {
            Record::default()
        }
        fn join(&mut self, part: &mut Self) {
            self.seen.append(&mut part.seen);
        }
        fn len(&self) -> usize {
            self.seen.len()
        }
        fn count_record(&mut self) {
            self.seen.push("record".into());
        }
        fn diags(&mut self) -> &mut crate::core::diag::Diagnostics {
            &mut self.diags
        }
        fn push(&mut self, cell: &CellInput<'_>, line: u64) {
            self.seen.push(format!("{line}: {cell:?}"));
        }
    }

    fn run(parse: fn(&[u8], u64, &Header, &Arc<Path>, &mut Record), block: &[u8]) -> Vec<String> {
        let mut header = csv::ByteRecord::new();
        for f in HEADER.split(',') {
            header.push_field(f.as_bytes());
        }
        let h = Header {
            cols: Columns::find(&header).expect("header"),
            names: header,
        };
        let file: Arc<Path> = Arc::from(Path::new("p.csv"));
        let mut sink = Record::default();
        parse(block, 2, &h, &file, &mut sink);
        let diags = sink.diags.sorted().into_iter().map(|d| d.to_string());
        sink.seen.into_iter().chain(diags).collect()
    }

    proptest::proptest! {
        /// A count is decimal digits only, and `None` past u64 as `parse` gives it: the one
        /// pass agrees with checking every byte and then parsing.
        #[test]
        fn digits_are_checked_and_parsed_in_one_pass(
            s in "[0-9]{0,22}|[0-9+ a/:-]{0,6}|18446744073709551[56][0-9]{3}",
        ) {
            let two_passes = (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u64>().ok())
                .flatten();
            proptest::prop_assert_eq!(digits(&s), two_passes);
        }

        /// Text without quotes reads the same cut by hand as through the csv reader: the
        /// same cells on the same lines, the same records counted, the same problems.
        #[test]
        fn plain_blocks_read_as_the_csv_reader_reads_them(
            rows in proptest::collection::vec(
                (
                    proptest::collection::vec(
                        proptest::sample::select(vec![
                            "", "q1", " q2 ", "M", "8", "16", "x1", "0", "1", "true",
                            "A", "B", "\u{e9}", "\u{200b}", "s",
                        ]),
                        0..13,
                    ),
                    proptest::sample::select(vec!["\n", "\r\n", "\r", "\n\n", "\r\n\r\n", " \n"]),
                    proptest::bool::weighted(0.05),
                ),
                0..30,
            ),
            last_end in proptest::bool::ANY,
        ) {
            let mut block = Vec::new();
            for (fields, end, bad_byte) in &rows {
                block.extend_from_slice(fields.join(",").as_bytes());
                if *bad_byte {
                    block.push(0xff);
                }
                block.extend_from_slice(end.as_bytes());
            }
            if !last_end {
                while matches!(block.last(), Some(b'\n' | b'\r')) {
                    block.pop();
                }
            }
            proptest::prop_assert_eq!(run(parse_plain, &block), run(parse_quoted, &block));
        }
    }

    #[test]
    fn a_quoted_field_goes_through_the_csv_reader() {
        let text = format!("{HEADER}\nq,\"M,1\",s,8f,8,,A,A,1,,\nq,M,s,16f,16,,A,A,1,,\n");
        let m = load(&text).expect("valid");
        assert_eq!(m.models.names().collect::<Vec<_>>(), ["M", "M,1"]);
    }

    /// A space before an opening quote keeps the quotes in the value (RFC 4180, and the csv
    /// reader): said, naming the column, rather than read as an id with quotes in it. A
    /// quote inside a value, or a whole field quoted, is no mistake.
    #[test]
    fn a_quote_after_a_space_is_said() {
        let text = format!(
            "{HEADER}\n \"q1\",M,s,8f,8,,A,A,1,,\nq2,M, \"s\" ,8f,8,,A,A,1,,\nq3,\"M\",s,8f,8,,A,A,1,,\n"
        );
        let e = load(&text).expect_err("rejected");
        assert_eq!(
            e,
            [
                "p.csv:2: error: field `sample_id`: a quote after a space is part of the value in CSV, so this reads \"\\\"q1\\\"\": remove the space before the opening quote",
                "p.csv:3: error: field `split`: a quote after a space is part of the value in CSV, so this reads \"\\\"s\\\"\": remove the space before the opening quote",
            ]
        );
        // A quote inside a value, a whole field quoted (its value may start with spaces and
        // a quote, or a line end and a quote), and a column frameaudit does not read.
        let fine = format!(
            "{HEADER},comment\nq1,M 5\" tall,s,8f,8,,A,A,1,,,\n\"q2\",\" M\",s,8f,8,,A,A,1,,\" \"\"as is\"\"\", \"ok\" said\nq3,M,s,8f,8,,A,A,1,,\"\n\"\"x\"\"\",\n"
        );
        let m = load(&fine).expect("valid");
        assert_eq!(m.models.names().collect::<Vec<_>>(), ["M", "M 5\" tall"]);
    }

    /// Text after a closing quote is joined to the value by CSV readers (`"1"x` reads
    /// `1x`): said, naming the column, in every column frameaudit reads. Spaces after the
    /// quote, and a column it does not read, are no mistake.
    #[test]
    fn text_after_a_closing_quote_is_said() {
        let text = format!("{HEADER}\n\"q1\"x,M,s,8f,8,,A,A,1,,\nq2,M,s,8f,8,,\"A\"B,A,1,,\n");
        let e = load(&text).expect_err("rejected");
        assert_eq!(
            e,
            [
                "p.csv:2: error: field `sample_id`: text after a closing quote is joined to the value in CSV, so this reads \"q1x\": quote the whole value, or remove what follows the quote",
                "p.csv:3: error: field `predicted_option`: text after a closing quote is joined to the value in CSV, so this reads \"AB\": quote the whole value, or remove what follows the quote",
            ]
        );
        let fine = format!("{HEADER},comment\n\"q1\" ,M,s,8f,8,,A,A,1,,,\"ok\" said\n");
        load(&fine).expect("valid");
    }

    /// A quote never closed takes the rest of the file into one field: the error says so at
    /// the line the quote opened, instead of only a field count.
    #[test]
    fn an_unclosed_quote_is_said_where_it_opened() {
        let text = format!(
            "{HEADER}\nq1,M,s,8f,8,,A,A,1,,\n\"q2,M,s,8f,8,,A,A,1,,\nq3,M,s,8f,8,,A,A,1,,\n"
        );
        let e = load(&text).expect_err("rejected");
        assert_eq!(
            e,
            [
                "p.csv:3: error: a quote opened on this line is never closed, so the rest of the file (2 line ends) was read into one field: close the quote"
            ]
        );
        // In the last column the field count is right: still said.
        let text = format!("{HEADER}\nq1,M,s,8f,8,,A,A,1,,\"open\nq2,M,s,8f,8,,A,A,1,,\n");
        let e = load(&text).expect_err("rejected");
        assert_eq!(
            e,
            [
                "p.csv:2: error: a quote opened on this line is never closed, so the rest of the file (2 line ends) was read into one field: close the quote"
            ]
        );
        // A quote closed over two lines, in a row a field short, is only that.
        let text = format!("{HEADER}\nq1,M,s,8f,8,,A,A,1,\"two\nlines\"\n");
        let e = load(&text).expect_err("rejected");
        assert_eq!(
            e,
            ["p.csv:2: error: row has 10 fields but the header has 11"]
        );
        // One field is one.
        let e = load(&format!(
            "{HEADER}
q1
"
        ))
        .expect_err("rejected");
        assert_eq!(e, ["p.csv:2: error: row has 1 field but the header has 11"]);
    }

    /// The checks across rows name the CSV's columns, and a frame count at odds with the
    /// configuration's is one error (its budget is its frame count), not two.
    #[test]
    fn errors_across_rows_name_the_csv_columns() {
        let text = format!(
            "{HEADER}\nq1,M,s,8f,8,,A,A,1,,\nq2,M,s,8f,9,,A,A,1,,\nq3,M,s,8f,8,7,A,A,1,,\n"
        );
        let e = load(&text).expect_err("rejected");
        assert_eq!(
            e,
            [
                "p.csv:3: error: field `frame_count`: configuration \"8f\" has frames 9 here but 8 at line 2",
                "p.csv:4: error: field `pixel_count`: configuration \"8f\" has pixels 7 here but null at line 2",
            ]
        );
    }
}
