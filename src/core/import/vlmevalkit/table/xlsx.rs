//! An xlsx prediction table, read within [`CAPS`] (docs/formats.md §3.3). The archive's
//! parts are unpacked and counted before calamine opens it, since the sizes in the zip's
//! directory and the counts in the XML are claims; the first sheet is then read cell by cell
//! into the rows that hold text, never as the rectangle its farthest cells span.

use std::collections::BTreeSet;
use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;

use calamine::{Data, DataRef, Reader, Xlsx};
use quick_xml::events::Event;
use zip::ZipArchive;

use super::{Row, Table, number_text};
use crate::core::fsread::{self, Limit, show_size};

const MIB: u64 = 1 << 20;

/// What frameaudit reads of one xlsx file; a file past any of these is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// The bytes of the file itself (a zip's directory costs a few times its size to hold).
    pub file: u64,
    /// The bytes all its parts unpack to together.
    pub unpacked: u64,
    /// The bytes of each part that describes the workbook (its relationships, the workbook,
    /// its styles and theme), which calamine holds whole at up to some 30 times their size
    /// (150 bytes for each `<xf/>` of a style).
    pub workbook_part: u64,
    /// Shared strings, as read or as the file claims them (calamine makes room for the claim).
    pub shared_strings: u64,
    /// Cells of the first sheet that are not empty, and the rows times the columns of the
    /// table made of them.
    pub cells: u64,
    /// The bytes of text in the sheet's cells, a shared string counting in each cell it is in.
    pub text: u64,
}

/// The caps of every import: some five times a VLMEvalKit table of 50,000 questions with
/// long predictions (8 MB zipped, 53 MB unpacked, 200,000 shared strings, 600,000 cells).
pub const CAPS: Caps = Caps {
    file: 64 * MIB,
    unpacked: 256 * MIB,
    workbook_part: MIB,
    shared_strings: 1_000_000,
    cells: 4_000_000,
    text: 256 * MIB,
};

/// Why an xlsx file is not read.
#[derive(Debug, thiserror::Error)]
pub enum XlsxError {
    /// The file cannot be read, or is larger than [`Caps::file`].
    #[error("cannot read it: {0}")]
    Read(io::Error),
    /// The zip or the workbook is broken.
    #[error("not a readable xlsx: {0}")]
    Unreadable(String),
    /// The parts unpack to more than [`Caps::unpacked`]; `part` is where the cap was reached.
    #[error(
        "its parts unpack to more than the {} frameaudit reads of an xlsx file (reached in part {part})",
        show_size(*cap)
    )]
    Unpacked {
        /// The part being unpacked when the cap was reached.
        part: String,
        /// The cap.
        cap: u64,
    },
    /// A part describing the workbook unpacks to more than [`Caps::workbook_part`].
    #[error(
        "its part {part} unpacks to more than the {} frameaudit reads of a part describing the workbook",
        show_size(*cap)
    )]
    WorkbookPart {
        /// The part.
        part: String,
        /// The cap.
        cap: u64,
    },
    /// More shared strings than [`Caps::shared_strings`].
    #[error(
        "its part {part} holds more than the {cap} shared strings frameaudit reads of an xlsx file"
    )]
    SharedStrings {
        /// The shared-strings part.
        part: String,
        /// The cap.
        cap: u64,
    },
    /// A count of shared strings claimed past [`Caps::shared_strings`].
    #[error(
        "its part {part} claims {claimed} shared strings, more than the {cap} frameaudit reads of an xlsx file"
    )]
    ClaimedStrings {
        /// The shared-strings part.
        part: String,
        /// The count its `uniqueCount` claims.
        claimed: u64,
        /// The cap.
        cap: u64,
    },
    /// More non-empty cells than [`Caps::cells`].
    #[error("its sheet {sheet:?} has more than the {cap} cells frameaudit reads of an xlsx file")]
    Cells {
        /// The sheet's name.
        sheet: String,
        /// The cap.
        cap: u64,
    },
    /// A table whose rows times columns pass [`Caps::cells`].
    #[error(
        "its sheet {sheet:?} makes a table of {rows} rows by {columns} columns, more than the {cap} cells frameaudit reads of an xlsx file"
    )]
    Table {
        /// The sheet's name.
        sheet: String,
        /// Rows under the header that hold text.
        rows: u64,
        /// Columns up to the last one named in the header.
        columns: u64,
        /// The cap.
        cap: u64,
    },
    /// More text than [`Caps::text`].
    #[error(
        "its sheet {sheet:?} holds more than the {} of text frameaudit reads of an xlsx file",
        show_size(*cap)
    )]
    Text {
        /// The sheet's name.
        sheet: String,
        /// The cap.
        cap: u64,
    },
    /// The workbook lists no sheet.
    #[error("the workbook has no sheet")]
    NoSheet,
    /// The first sheet holds no cell, or is no worksheet.
    #[error("the sheet is empty")]
    Empty,
    /// The first sheet's XML is broken.
    #[error("cannot read its first sheet: {0}")]
    Sheet(String),
}

/// Reads the first sheet of the xlsx file at `path` within [`CAPS`].
pub fn read(path: &Path) -> Result<Table, XlsxError> {
    let limit = Limit {
        bytes: CAPS.file,
        what: "an xlsx file",
    };
    let bytes = fsread::read(path, limit).map_err(XlsxError::Read)?;
    read_bytes(bytes, &CAPS)
}

/// Reads the first sheet of an xlsx file's bytes within `caps` (but for [`Caps::file`],
/// which the reading of the file keeps).
fn read_bytes(bytes: Vec<u8>, caps: &Caps) -> Result<Table, XlsxError> {
    check_parts(&bytes, caps)?;
    let mut book: Xlsx<_> =
        Xlsx::new(Cursor::new(bytes)).map_err(|e| XlsxError::Unreadable(e.to_string()))?;
    read_sheet(&mut book, caps)
}

fn unreadable(e: impl std::fmt::Display) -> XlsxError {
    XlsxError::Unreadable(e.to_string())
}

/// A part's name as calamine finds it: `\` as `/`, ASCII case ignored.
fn normalized(name: &str) -> String {
    name.replace('\\', "/").to_ascii_lowercase()
}

/// The last segment of a normalized name.
fn base_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The XML reader calamine uses, configured as calamine configures it, so that a part is
/// read here into the same events as there.
fn xml<R: io::BufRead>(r: R) -> quick_xml::Reader<R> {
    let mut xml = quick_xml::Reader::from_reader(r);
    let config = xml.config_mut();
    config.check_end_names = false;
    config.trim_text(false);
    config.check_comments = false;
    config.expand_empty_elements = true;
    xml
}

/// Unpacks every part of the archive within `caps`, counting what it unpacks to rather than
/// trusting the sizes the zip's directory gives, and counts the shared strings, so that
/// calamine opens only a workbook that fits.
fn check_parts(bytes: &[u8], caps: &Caps) -> Result<(), XlsxError> {
    let mut zip = ZipArchive::new(Cursor::new(bytes)).map_err(unreadable)?;
    let workbooks = workbook_parts(&mut zip, caps)?;
    let mut total = 0u64;
    for i in 0..zip.len() {
        // A part the zip cannot open, calamine cannot either: it reports it if it needs it.
        let Ok(file) = zip.by_index(i) else {
            continue;
        };
        let name = file.name().map_or_else(
            |_| String::from_utf8_lossy(file.name_raw()).into_owned(),
            |n| n.into_owned(),
        );
        let key = normalized(&name);
        let base = base_name(&key);
        // The parts calamine holds whole while it opens the workbook, beside the strings.
        let describes = matches!(base, "styles.xml" | "theme1.xml")
            || key.ends_with(".rels")
            || workbooks.contains(&key);
        let room = caps.unpacked - total;
        let cap = if describes {
            room.min(caps.workbook_part)
        } else {
            room
        };
        let mut part = BufReader::new(file.take(cap.saturating_add(1)));
        if base == "sharedstrings.xml" {
            match count_strings(&mut part, caps.shared_strings) {
                Strings::Within => {}
                Strings::Many => {
                    return Err(XlsxError::SharedStrings {
                        part: name,
                        cap: caps.shared_strings,
                    });
                }
                Strings::Claimed(claimed) => {
                    return Err(XlsxError::ClaimedStrings {
                        part: name,
                        claimed,
                        cap: caps.shared_strings,
                    });
                }
            }
        }
        // The rest of the part, counted; a broken stream is calamine's to report if it reads
        // the part.
        let _ = io::copy(&mut part, &mut io::sink());
        let read = cap.saturating_add(1) - part.get_ref().limit();
        if read > cap {
            return Err(if describes && caps.workbook_part < room {
                XlsxError::WorkbookPart {
                    part: name,
                    cap: caps.workbook_part,
                }
            } else {
                XlsxError::Unpacked {
                    part: name,
                    cap: caps.unpacked,
                }
            });
        }
        total += read;
    }
    Ok(())
}

/// What a shared-strings part holds against the cap.
enum Strings {
    Within,
    /// More strings than the cap.
    Many,
    /// A `uniqueCount` past the cap.
    Claimed(u64),
}

/// Counts the strings (`si`) of a shared-strings part and reads the count it claims, until
/// either passes `cap`. Every `si` counts, nested or not, and every `sst`'s claim: at least
/// what calamine reads.
fn count_strings<R: io::BufRead>(part: &mut R, cap: u64) -> Strings {
    let mut xml = xml(part);
    let mut buf = Vec::new();
    let mut n = 0u64;
    loop {
        buf.clear();
        match xml.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => match e.local_name().as_ref() {
                "si" => {
                    n += 1;
                    if n > cap {
                        return Strings::Many;
                    }
                }
                "sst" => {
                    let claimed = values_of(e.attributes_raw(), "uniqueCount")
                        .filter_map(claim)
                        .max();
                    if let Some(c) = claimed.filter(|&c| c > cap) {
                        return Strings::Claimed(c);
                    }
                }
                _ => {}
            },
            // calamine stops at the same error, or at the end.
            Ok(Event::Eof) | Err(_) => return Strings::Within,
            Ok(_) => {}
        }
    }
}

/// The values given to the attribute `key` in an element's raw attributes: each quoted
/// value after `key`, spaces and `=`, wherever `key` stands. That is every value calamine
/// reads for the key (its own attribute scanner matches the key exactly) and perhaps a few
/// more, which only a malformed file has.
fn values_of<'a>(raw: &'a str, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    raw.match_indices(key).filter_map(move |(i, _)| {
        let rest = raw[i + key.len()..].trim_ascii_start();
        let rest = rest.strip_prefix('=')?.trim_ascii_start();
        let quote = rest.chars().next().filter(|q| matches!(q, '"' | '\''))?;
        let value = &rest[1..];
        Some(value.find(quote).map_or(value, |end| &value[..end]))
    })
}

/// The number an attribute claims, when calamine would read one from it (digits, leading
/// zeros allowed); a leading `+` is read too, which calamine does not.
fn claim(value: &str) -> Option<u64> {
    let s = value.trim_start_matches('0');
    if s.is_empty() {
        return Some(0);
    }
    s.parse().ok()
}

/// The names (normalized) of the parts calamine may read as the workbook: each target of
/// the package's relationships (`_rels/.rels`) as calamine splits it, and the default
/// `xl/workbook.xml`. The relationships parts themselves are capped as parts describing the
/// workbook.
fn workbook_parts(
    zip: &mut ZipArchive<Cursor<&[u8]>>,
    caps: &Caps,
) -> Result<BTreeSet<String>, XlsxError> {
    let mut parts = BTreeSet::from(["xl/workbook.xml".to_string()]);
    for i in 0..zip.len() {
        let Ok(file) = zip.by_index(i) else {
            continue;
        };
        if !file.name().is_ok_and(|n| normalized(&n) == "_rels/.rels") {
            continue;
        }
        let name = file.name().map(|n| n.into_owned()).unwrap_or_default();
        let cap = caps.workbook_part;
        let mut xml = xml(BufReader::new(file.take(cap.saturating_add(1))));
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match xml.read_event_into(&mut buf) {
                Ok(Event::Start(e)) if e.local_name().as_ref() == "Relationship" => {
                    for raw in values_of(e.attributes_raw(), "Target") {
                        let unescaped = quick_xml::escape::unescape(raw)
                            .map(|s| s.into_owned())
                            .unwrap_or_default();
                        for target in [raw.to_string(), unescaped] {
                            let (dir, name) = match target.rfind('/') {
                                Some(i) => target.split_at(i + 1),
                                None => ("", target.as_str()),
                            };
                            let dir = dir.strip_prefix('/').unwrap_or(dir);
                            let name = if name.is_empty() {
                                "workbook.xml"
                            } else {
                                name
                            };
                            parts.insert(normalized(&format!("{dir}{name}")));
                        }
                    }
                }
                Ok(Event::Eof) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let mut rest = xml.into_inner();
        let _ = io::copy(&mut rest, &mut io::sink());
        if cap.saturating_add(1) - rest.get_ref().limit() > cap {
            return Err(XlsxError::WorkbookPart { part: name, cap });
        }
    }
    Ok(parts)
}

/// The text of a sheet cell, as the table holds it: whole numbers without a fraction, since
/// pandas writes integer columns (`index`) as numbers and xlsx keeps only floats; `None`
/// for an empty text or an error.
fn cell_text(d: &DataRef<'_>) -> Option<String> {
    let s = match d {
        DataRef::Empty | DataRef::Error(_) => return None,
        DataRef::Int(i) => i.to_string(),
        DataRef::Float(f) => number_text(*f),
        DataRef::String(s) => s.clone(),
        DataRef::SharedString(s) => s.to_string(),
        DataRef::Bool(b) => b.to_string(),
        other => Data::from(other.clone()).to_string(),
    };
    (!s.is_empty()).then_some(s)
}

/// The first sheet as a table: the header is the first row that holds a cell, the columns
/// run from the leftmost cell to the last one the header names (a cell under no name
/// cannot be asked for), and a row is kept when it holds text. Cells are held as they come,
/// never the rectangle their extent spans: the sheet's `dimension` and its farthest cell
/// claim nothing.
fn read_sheet<R: Read + io::Seek>(book: &mut Xlsx<R>, caps: &Caps) -> Result<Table, XlsxError> {
    let sheet = book
        .sheet_names()
        .first()
        .cloned()
        .ok_or(XlsxError::NoSheet)?;
    let mut reader = match book.worksheet_cells_reader(&sheet) {
        Ok(r) => r,
        // calamine reads a chart sheet as no cell.
        Err(calamine::XlsxError::NotAWorksheet(_)) => return Err(XlsxError::Empty),
        Err(e) => return Err(XlsxError::Sheet(e.to_string())),
    };
    // (row, column, text) of each cell that is not empty, in the order read.
    let mut cells: Vec<(u32, u32, Option<String>)> = Vec::new();
    let (mut top, mut left) = (u32::MAX, u32::MAX);
    let mut text = 0u64;
    while let Some(cell) = reader
        .next_cell()
        .map_err(|e| XlsxError::Sheet(e.to_string()))?
    {
        let value = cell.get_value();
        if *value == DataRef::Empty {
            continue;
        }
        if cells.len() as u64 >= caps.cells {
            return Err(XlsxError::Cells {
                sheet,
                cap: caps.cells,
            });
        }
        let (row, col) = cell.get_position();
        top = top.min(row);
        left = left.min(col);
        let t = cell_text(value);
        text += t.as_ref().map_or(0, |t| t.len() as u64);
        if text > caps.text {
            return Err(XlsxError::Text {
                sheet,
                cap: caps.text,
            });
        }
        cells.push((row, col, t));
    }
    drop(reader);
    if cells.is_empty() {
        return Err(XlsxError::Empty);
    }
    // By position, the cell read last first among cells of one position (it is the one
    // calamine kept), then only that one.
    cells.reverse();
    cells.sort_by_key(|&(r, c, _)| (r, c));
    cells.dedup_by_key(|&mut (r, c, _)| (r, c));

    let header_end = cells.partition_point(|&(r, _, _)| r == top);
    let named = |t: &Option<String>| t.as_deref().is_some_and(|t| !t.trim().is_empty());
    let width = cells[..header_end]
        .iter()
        .filter(|(_, _, t)| named(t))
        .map(|&(_, c, _)| (c - left) as usize + 1)
        .max()
        .unwrap_or(0);
    let mut columns = vec![String::new(); width];
    for (_, c, t) in &cells[..header_end] {
        if let (Some(slot), Some(t)) = (columns.get_mut((c - left) as usize), t) {
            *slot = t.trim().to_string();
        }
    }
    let body = &mut cells[header_end..];
    // A row of the table is a row with text in a named column.
    let in_table = |c: u32, t: &Option<String>| t.is_some() && ((c - left) as usize) < width;
    let mut rows_held = 0u64;
    let mut last = None;
    for (r, c, t) in body.iter() {
        if in_table(*c, t) && last != Some(*r) {
            rows_held += 1;
            last = Some(*r);
        }
    }
    if rows_held.saturating_mul(width as u64) > caps.cells {
        return Err(XlsxError::Table {
            sheet,
            rows: rows_held,
            columns: width as u64,
            cap: caps.cells,
        });
    }
    let mut rows: Vec<Row> = Vec::with_capacity(rows_held as usize);
    for (row, col, t) in body.iter_mut() {
        if !in_table(*col, t) {
            continue;
        }
        let at = (*col - left) as usize;
        let n = u64::from(*row) + 1;
        if rows.last().is_none_or(|(m, _)| *m != n) {
            rows.push((n, Ok(vec![None; width])));
        }
        if let Some((_, Ok(fields))) = rows.last_mut() {
            fields[at] = t.take();
        }
    }
    Ok(Table { columns, rows })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use zip::write::SimpleFileOptions;

    use super::*;

    const RELS: &str = r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#;
    const WORKBOOK: &str = r#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#;
    const WORKBOOK_RELS: &str = r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#;

    /// Caps small enough to pass in a few lines of XML.
    const SMALL: Caps = Caps {
        file: 1 << 20,
        unpacked: 20_000,
        workbook_part: 2_000,
        shared_strings: 3,
        cells: 30,
        text: 200,
    };

    /// An xlsx of the sheet whose `sheetData` holds `rows`, with `parts` replacing or
    /// joining the minimal workbook's.
    fn book(rows: &str, parts: &[(&str, String)]) -> Vec<u8> {
        let sheet = format!(
            r#"<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>"#
        );
        let mut all: Vec<(&str, String)> = vec![
            ("_rels/.rels", RELS.into()),
            ("xl/workbook.xml", WORKBOOK.into()),
            ("xl/_rels/workbook.xml.rels", WORKBOOK_RELS.into()),
            ("xl/worksheets/sheet1.xml", sheet),
        ];
        for (name, body) in parts {
            all.retain(|(n, _)| n != name);
            all.push((name, body.clone()));
        }
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, body) in all {
            zip.start_file(name, options).expect("start");
            zip.write_all(body.as_bytes()).expect("write");
        }
        zip.finish().expect("finish").into_inner()
    }

    fn text(at: &str, t: &str) -> String {
        format!(r#"<c r="{at}" t="inlineStr"><is><t>{t}</t></is></c>"#)
    }

    /// A header `index, question, answer` in row 2 (row 1 empty), two rows of data.
    fn table_rows() -> String {
        format!(
            r#"<row r="2">{}{}{}</row><row r="3"><c r="B3"><v>0</v></c>{}{}</row><row r="4"><c r="B4"><v>1.0</v></c>{}{}</row>"#,
            text("B2", " index "),
            text("C2", "question"),
            text("D2", "answer"),
            text("C3", "Why?"),
            text("D3", "A"),
            text("C4", "How?"),
            text("D4", "B"),
        )
    }

    fn fields(t: &Table) -> Vec<(u64, Vec<Option<&str>>)> {
        t.rows
            .iter()
            .map(|(n, r)| {
                let r = r.as_ref().expect("row");
                (*n, r.iter().map(|f| f.as_deref()).collect())
            })
            .collect()
    }

    #[test]
    fn a_table_is_read_from_its_first_cell_with_sheet_row_numbers() {
        let t = read_bytes(book(&table_rows(), &[]), &SMALL).expect("table");
        assert_eq!(t.columns, ["index", "question", "answer"]);
        assert_eq!(
            fields(&t),
            [
                (3, vec![Some("0"), Some("Why?"), Some("A")]),
                (4, vec![Some("1"), Some("How?"), Some("B")]),
            ]
        );
    }

    #[test]
    fn far_cells_and_claimed_extents_are_not_spanned() {
        let plain = read_bytes(book(&table_rows(), &[]), &SMALL).expect("table");
        // The last cell of the grid, under no column name, and a dimension claiming all of
        // it: a rectangle of 17 G cells if spanned; here, one more cell read.
        let rows = format!(
            r#"{}<row r="1048576">{}</row>"#,
            table_rows(),
            text("XFD1048576", "far")
        );
        let sheet = format!(
            r#"<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData>{rows}</sheetData></worksheet>"#
        );
        let far =
            read_bytes(book("", &[("xl/worksheets/sheet1.xml", sheet)]), &SMALL).expect("table");
        assert_eq!(far.columns, plain.columns);
        assert_eq!(fields(&far), fields(&plain));
    }

    #[test]
    fn of_two_cells_at_one_place_the_last_read_counts_and_empty_rows_are_dropped() {
        let rows = format!(
            r#"{}<row r="5">{}</row><row r="6"><c r="C6" t="e"><v>#N/A</v></c></row><row r="3">{}</row>"#,
            table_rows(),
            text("D5", "C"),
            text("D3", "D"),
        );
        let t = read_bytes(book(&rows, &[]), &SMALL).expect("table");
        assert_eq!(
            fields(&t),
            [
                (3, vec![Some("0"), Some("Why?"), Some("D")]),
                (4, vec![Some("1"), Some("How?"), Some("B")]),
                (5, vec![None, None, Some("C")]),
            ]
        );
    }

    /// The error of reading `bytes` within [`SMALL`].
    fn refused(bytes: Vec<u8>) -> XlsxError {
        match read_bytes(bytes, &SMALL) {
            Ok(t) => panic!("read {} rows", t.rows.len()),
            Err(e) => e,
        }
    }

    fn strings(body: &str) -> (&'static str, String) {
        (
            "xl/sharedStrings.xml",
            format!(
                r#"<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"{body}</sst>"#
            ),
        )
    }

    #[test]
    fn shared_strings_past_the_cap_read_or_claimed_are_refused() {
        let e = refused(book(&table_rows(), &[strings("><si/><si/><si/><si/>")]));
        assert!(
            matches!(&e, XlsxError::SharedStrings { part, cap: 3 } if part == "xl/sharedStrings.xml"),
            "{e}"
        );
        assert!(e.to_string().contains("xl/sharedStrings.xml"), "{e}");
        let e = refused(book(
            &table_rows(),
            &[strings(r#" count="9" uniqueCount="0009"><si/>"#)],
        ));
        assert!(
            matches!(
                e,
                XlsxError::ClaimedStrings {
                    claimed: 9,
                    cap: 3,
                    ..
                }
            ),
            "{e}"
        );
        // Within the cap, read and claimed.
        let ok = book(
            &table_rows(),
            &[strings(r#" uniqueCount="3"><si/><si/><si/>"#)],
        );
        read_bytes(ok, &SMALL).expect("three strings");
    }

    #[test]
    fn a_sheet_past_the_cells_or_text_cap_is_refused() {
        let many: String = (5..40).map(|r| text(&format!("B{r}"), "x")).collect();
        let e = refused(book(&format!("{}{many}", table_rows()), &[]));
        assert!(
            matches!(&e, XlsxError::Cells { sheet, cap: 30 } if sheet == "Sheet1"),
            "{e}"
        );
        let long = text("C5", &"y".repeat(200));
        let e = refused(book(&format!("{}{long}", table_rows()), &[]));
        assert!(matches!(e, XlsxError::Text { cap: 200, .. }), "{e}");
    }

    #[test]
    fn a_table_wider_than_the_cap_allows_is_refused_before_it_is_built() {
        // Twelve named columns and three rows of one cell: 11 cells read, 36 fields held.
        let header: String = (0..12)
            .map(|c| text(&format!("{}1", char::from(b'A' + c)), &format!("c{c}")))
            .collect();
        let rows = format!(
            r#"<row r="1">{header}</row>{}{}{}"#,
            text("A2", "a"),
            text("A3", "b"),
            text("A4", "c")
        );
        let e = refused(book(&rows, &[]));
        assert!(
            matches!(
                e,
                XlsxError::Table {
                    rows: 3,
                    columns: 12,
                    cap: 30,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn parts_past_their_caps_are_refused_by_what_they_unpack_to() {
        // A sheet of empty rows: nothing held, but more unpacked than the whole cap.
        let e = refused(book(&"<row></row>".repeat(2_000), &[]));
        assert!(
            matches!(&e, XlsxError::Unpacked { part, cap: 20_000 } if part == "xl/worksheets/sheet1.xml"),
            "{e}"
        );
        // Styles, whose every `xf` calamine holds as a style of some 150 bytes.
        let styles = format!(
            r#"<?xml version="1.0"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><cellXfs>{}</cellXfs></styleSheet>"#,
            "<xf/>".repeat(500)
        );
        let e = refused(book(&table_rows(), &[("xl/styles.xml", styles)]));
        assert!(
            matches!(&e, XlsxError::WorkbookPart { part, cap: 2_000 } if part == "xl/styles.xml"),
            "{e}"
        );
        // A workbook under a name of its own, found from the package's relationships.
        let rels = RELS.replace("xl/workbook.xml", "xl/book/main.xml");
        let workbook = WORKBOOK.replace(
            "<sheets>",
            &format!(
                "<definedNames>{}</definedNames><sheets>",
                r#"<definedName name="a">1</definedName>"#.repeat(100)
            ),
        );
        let e = refused(book(
            &table_rows(),
            &[
                ("_rels/.rels", rels),
                ("xl/book/main.xml", workbook),
                ("xl/book/_rels/main.xml.rels", WORKBOOK_RELS.into()),
            ],
        ));
        assert!(
            matches!(&e, XlsxError::WorkbookPart { part, .. } if part == "xl/book/main.xml"),
            "{e}"
        );
    }

    /// `bytes` with the unpacked size that the directory entry and the local header give
    /// for the part `name` set to `size`.
    fn claim_size(mut bytes: Vec<u8>, name: &str, size: u32) -> Vec<u8> {
        // (signature, offset of the unpacked size, of the name's length, of the name).
        let headers: [(&[u8], usize, usize, usize); 2] =
            [(b"PK\x01\x02", 24, 28, 46), (b"PK\x03\x04", 22, 26, 30)];
        let mut patched = 0;
        for i in 0..bytes.len() {
            for &(sig, size_at, len_at, name_at) in &headers {
                if !bytes[i..].starts_with(sig) || bytes.len() < i + name_at {
                    continue;
                }
                let len = u16::from_le_bytes([bytes[i + len_at], bytes[i + len_at + 1]]);
                if bytes.get(i + name_at..i + name_at + usize::from(len)) == Some(name.as_bytes()) {
                    bytes[i + size_at..i + size_at + 4].copy_from_slice(&size.to_le_bytes());
                    patched += 1;
                }
            }
        }
        assert_eq!(patched, 2, "the local header and the directory entry");
        bytes
    }

    #[test]
    fn the_sizes_the_zip_claims_are_not_trusted() {
        // A sheet past the cap that claims 100 bytes: zip stops at the claim with an error,
        // and no row of it is read.
        let bytes = claim_size(
            book(&"<row></row>".repeat(2_000), &[]),
            "xl/worksheets/sheet1.xml",
            100,
        );
        let e = refused(bytes);
        assert!(matches!(e, XlsxError::Sheet(_)), "{e}");
        // A small sheet that claims 3 GB is read as what it is.
        let bytes = claim_size(
            book(&table_rows(), &[]),
            "xl/worksheets/sheet1.xml",
            3_000_000_000,
        );
        let t = read_bytes(bytes, &SMALL).expect("table");
        assert_eq!(t.rows.len(), 2);
    }
}
