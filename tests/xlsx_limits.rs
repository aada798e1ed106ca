//! An xlsx prediction file is untrusted input (issue 37): a cell far from the others, a
//! shared-strings part or a sheet that unpack to hundreds of MB from a few hundred KB, and
//! counts the file claims. Each is imported by the binary under a 1 GiB address space, so
//! that a reader without a bound fails its allocation here instead of taking the machine's
//! memory; the assertion is that it read the file, or refused it with status 1 naming the
//! file, the part and the cap: never an abort.
#![cfg(unix)]

mod common;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Guarded, run_guarded_within};
use zip::write::SimpleFileOptions;

/// Far more than any of these runs needs; only a hang reaches it.
const GUARD: Duration = Duration::from_secs(300);

/// The address space of each run: 64 MiB suffice to import the fixtures' tables, and before
/// the caps four of the files below made calamine ask for 1.5 to 512 GiB at once.
const MEMORY_KIB: u64 = 1 << 20;

/// A VLMEvalKit file name, so the import reads the file as Video-MME predictions.
const NAME: &str = "m_Video-MME_8frame.xlsx";

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>"#;
const RELS: &str = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#;
const WORKBOOK: &str = r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#;
const WORKBOOK_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#;
const SHEET_START: &str = r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">"#;

/// Writes part of a workbook into an open zip entry.
type Body<'a> = &'a dyn Fn(&mut dyn Write) -> io::Result<()>;

/// A cell of inline text.
fn text_cell(at: &str, text: &str) -> String {
    format!(r#"<c r="{at}" t="inlineStr"><is><t>{text}</t></is></c>"#)
}

/// Six Video-MME predictions as VLMEvalKit writes them: the header in row 1, a row per
/// question from row 2 on.
fn table_rows() -> String {
    let header = [
        "index",
        "video",
        "question",
        "candidates",
        "answer",
        "prediction",
    ];
    let mut xml = String::from(r#"<row r="1">"#);
    for (c, name) in ('A'..).zip(header) {
        xml += &text_cell(&format!("{c}1"), name);
    }
    xml += "</row>";
    for i in 0..6 {
        let r = i + 2;
        let answer = ["A", "B", "C", "D"][i % 4];
        let prediction = ["A", "B", "B", "D"][i % 4];
        xml += &format!(r#"<row r="{r}"><c r="A{r}"><v>{i}</v></c>"#);
        xml += &text_cell(&format!("B{r}"), &format!("v{}", i / 3));
        xml += &text_cell(&format!("C{r}"), &format!("What happens in clip {i}?"));
        xml += &text_cell(
            &format!("D{r}"),
            "['A. one', 'B. two', 'C. three', 'D. four']",
        );
        xml += &text_cell(&format!("E{r}"), answer);
        xml += &text_cell(&format!("F{r}"), prediction);
        xml += "</row>";
    }
    xml
}

/// Writes an xlsx of one sheet: `dimension` as the sheet's claimed extent, the table's rows
/// and then `more` inside `sheetData`, and `strings` as `xl/sharedStrings.xml` when given.
fn write_xlsx(path: &Path, dimension: &str, more: Body, strings: Option<Body>) {
    let file = std::fs::File::create(path).expect("create xlsx");
    let mut zip = zip::ZipWriter::new(io::BufWriter::new(file));
    // The best deflate, as a bomb would be made: its long runs shrink some 700 times.
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(9));
    let mut part = |name: &str, body: Body| {
        zip.start_file(name, options).expect("start part");
        body(&mut zip).expect("write part");
    };
    part("[Content_Types].xml", &|w| {
        w.write_all(CONTENT_TYPES.as_bytes())
    });
    part("_rels/.rels", &|w| w.write_all(RELS.as_bytes()));
    part("xl/workbook.xml", &|w| w.write_all(WORKBOOK.as_bytes()));
    part("xl/_rels/workbook.xml.rels", &|w| {
        w.write_all(WORKBOOK_RELS.as_bytes())
    });
    part("xl/worksheets/sheet1.xml", &|w| {
        w.write_all(SHEET_START.as_bytes())?;
        if !dimension.is_empty() {
            write!(w, r#"<dimension ref="{dimension}"/>"#)?;
        }
        w.write_all(b"<sheetData>")?;
        w.write_all(table_rows().as_bytes())?;
        more(w)?;
        w.write_all(b"</sheetData></worksheet>")
    });
    if let Some(strings) = strings {
        part("xl/sharedStrings.xml", strings);
    }
    zip.finish().expect("finish xlsx");
}

/// Writes `unit` `n` times, a few MB at a time.
fn repeat(w: &mut dyn Write, unit: &str, n: usize) -> io::Result<()> {
    let per = (4 << 20) / unit.len();
    let chunk = unit.repeat(per);
    let mut left = n;
    while left > 0 {
        let k = left.min(per);
        w.write_all(&chunk.as_bytes()[..k * unit.len()])?;
        left -= k;
    }
    Ok(())
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_frameaudit"))
}

/// `import vlmevalkit FILE -o OUT` under the memory cap.
fn import(file: &Path, out: &Path) -> Guarded {
    let args: Vec<String> = ["import", "vlmevalkit"]
        .iter()
        .map(|s| s.to_string())
        .chain([
            file.display().to_string(),
            "-o".into(),
            out.display().to_string(),
        ])
        .collect();
    run_guarded_within(&bin(), &args, &[], MEMORY_KIB, GUARD)
}

fn said(g: &Guarded) -> String {
    String::from_utf8_lossy(&g.output.stderr).into_owned()
}

/// Asserts the run ended by itself with the status of an input it refused (not a signal:
/// an allocation that fails aborts), and said each of `what`.
fn refused(g: &Guarded, what: &[&str]) {
    let said = said(g);
    assert!(
        !g.hung,
        "still running after {GUARD:?}; said so far:\n{said}"
    );
    assert_eq!(
        g.output.status.code(),
        Some(1),
        "expected a refusal, got {:?}:\n{said}",
        g.output.status
    );
    for w in what {
        assert!(said.contains(w), "expected {w:?}:\n{said}");
    }
}

#[test]
fn a_cell_at_the_last_column_and_row_imports_like_the_table_without_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (far, plain) = (tmp.path().join("far"), tmp.path().join("plain"));
    std::fs::create_dir_all(&far).expect("mkdir");
    std::fs::create_dir_all(&plain).expect("mkdir");
    // One cell at XFD1048576, the sheet's last, and a dimension claiming the whole grid.
    write_xlsx(
        &far.join(NAME),
        "A1:XFD1048576",
        &|w| {
            w.write_all(
                format!(
                    r#"<row r="1048576">{}</row>"#,
                    text_cell("XFD1048576", "far")
                )
                .as_bytes(),
            )
        },
        None,
    );
    write_xlsx(&plain.join(NAME), "", &|_| Ok(()), None);
    let g = import(&far.join(NAME), &tmp.path().join("far-out"));
    let said = said(&g);
    assert!(
        g.output.status.success(),
        "status {:?}:\n{said}",
        g.output.status
    );
    let g = import(&plain.join(NAME), &tmp.path().join("plain-out"));
    assert!(g.output.status.success(), "{}", self::said(&g));
    let cells = |d: &str| {
        std::fs::read_to_string(tmp.path().join(d).join("cells.jsonl")).expect("cells.jsonl")
    };
    assert_eq!(cells("far-out").lines().count(), 6);
    assert_eq!(cells("far-out"), cells("plain-out"));
}

#[test]
fn a_shared_strings_bomb_is_refused_in_bounded_memory() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join(NAME);
    // 45 M empty strings: 225 MB of XML in a file of 330 KB, which calamine held as 1.1 GB
    // of `String`s.
    write_xlsx(
        &file,
        "",
        &|_| Ok(()),
        Some(&|w| {
            w.write_all(br#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">"#)?;
            repeat(w, "<si/>", 45_000_000)?;
            w.write_all(b"</sst>")
        }),
    );
    let g = import(&file, &tmp.path().join("out"));
    refused(&g, &[NAME, "xl/sharedStrings.xml", "shared strings"]);
}

#[test]
fn a_claimed_count_of_shared_strings_is_not_trusted() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join(NAME);
    // Two strings that claim to be four thousand million: calamine reserved room for the
    // claim, 96 GB.
    write_xlsx(
        &file,
        "",
        &|_| Ok(()),
        Some(&|w| {
            w.write_all(br#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="4000000000" uniqueCount="4000000000"><si><t>a</t></si><si><t>b</t></si></sst>"#)
        }),
    );
    let g = import(&file, &tmp.path().join("out"));
    refused(&g, &[NAME, "xl/sharedStrings.xml", "4000000000"]);
}

#[test]
fn a_sheet_bomb_is_refused_in_bounded_memory() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join(NAME);
    // 10 M cells after the table, in one row: 150 MB of XML in a file of 290 KB, a
    // rectangle of 10 M columns for calamine's range.
    write_xlsx(
        &file,
        "",
        &|w| {
            w.write_all(b"<row>")?;
            repeat(w, "<c><v>1</v></c>", 10_000_000)?;
            w.write_all(b"</row>")
        },
        None,
    );
    let g = import(&file, &tmp.path().join("out"));
    refused(&g, &[NAME, "Sheet1", "cells"]);
}

#[test]
fn a_sheet_that_unpacks_past_the_cap_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join(NAME);
    // 300 MB of empty rows in a file of 580 KB: nothing to hold, but no table needs so
    // much unpacking.
    write_xlsx(&file, "", &|w| repeat(w, "<row></row>", 27_000_000), None);
    let g = import(&file, &tmp.path().join("out"));
    refused(&g, &[NAME, "xl/worksheets/sheet1.xml", "256 MiB"]);
}
