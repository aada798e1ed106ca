//! `frameaudit audit summary` and `frameaudit audit export`: read audit files without
//! locking them (an annotator may be at work) and present their records as a table, or as
//! flat JSONL / CSV rows (the JSONL is the annotation input of docs/measures.md §8).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::core::audit::merged::{is_merged_file, read_annotated};
use crate::core::audit::{AuditError, AuditRecord, Replay, Status, read_audit};
use crate::core::figures::{Findings, PathwayCount, PathwayTable};
use crate::core::text::{count, sanitize};

/// The flat formats of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// One JSON object per record; readable by `frameaudit report --annotations`.
    Jsonl,
    /// A header row and one row per record; lists joined with `;`.
    Csv,
    /// Parquet with the columns of the JSONL form (docs/formats.md §7); never to a terminal.
    Parquet,
}

/// Reads an audit for presenting: the replay, with its warnings printed to stderr.
fn read(path: &Path) -> Result<Replay> {
    let replay = read_audit(path)?;
    print_warnings(&replay.warnings);
    Ok(replay)
}

fn print_warnings(warnings: &[String]) {
    let mut err = std::io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "{}", sanitize(w));
    }
}

/// `audit merge`: every annotator's records in one merged audit, conflicts kept. The output
/// may not be one of the inputs.
/// `audit merge`: the caller has checked `output` (never an input, never an audit).
pub fn merge(paths: &[PathBuf], output: &Path, out: &mut dyn Write) -> Result<()> {
    let m = read_annotated(paths)?;
    print_warnings(&m.warnings);
    m.write(output, &crate::core::audit::now_rfc3339())
        .with_context(|| format!("cannot write {}", output.display()))?;
    let (shared, disagree) = m.conflicts();
    writeln!(
        out,
        "merged {} of {} into {}: {shared} units by two or more annotators, {disagree} of them in disagreement (kept, not resolved)",
        count(m.records.len(), "record"),
        count(m.sources.len(), "annotator"),
        sanitize(&output.display().to_string())
    )?;
    Ok(())
}

type Table = PathwayTable;

/// Writes one table of pathway counts, most tagged first.
fn write_table(out: &mut dyn Write, indent: &str, table: &Table) -> std::io::Result<()> {
    let mut rows: Vec<(String, PathwayCount)> = table
        .iter()
        .map(|(name, &c)| (sanitize(name).into_owned(), c))
        .collect();
    rows.sort_by(|a, b| b.1.tagged.cmp(&a.1.tagged).then_with(|| a.0.cmp(&b.0)));
    let width = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0)
        .max("pathway".len());
    writeln!(
        out,
        "{indent}{:<width$}  {:>7}  {:>7}",
        "pathway", "records", "primary"
    )?;
    for (name, c) in rows {
        // `{:<width$}` pads by chars, which is what `width` counts.
        writeln!(
            out,
            "{indent}{name:<width$}  {:>7}  {:>7}",
            c.tagged, c.primary
        )?;
    }
    Ok(())
}

fn write_grouped(
    out: &mut dyn Write,
    title: &str,
    groups: &BTreeMap<String, Table>,
) -> std::io::Result<()> {
    writeln!(out, "\n{title}")?;
    for (name, table) in groups {
        writeln!(out, "  {}", sanitize(name))?;
        write_table(out, "    ", table)?;
    }
    Ok(())
}

/// Prints, for each audit file, its annotator and records by status; then the pathway
/// counts of all their records together: overall, per model, per benchmark and per
/// transition. A record counts each of its pathways once (its primary included); the
/// primary column counts the records where the pathway is primary.
pub fn summary(paths: &[PathBuf], out: &mut dyn Write) -> Result<()> {
    let mut tally = Findings::default();
    // The first file's data: records of other data are counted too, with a warning (as
    // `merge` and `agreement` give).
    let mut first: Option<(String, String)> = None;
    let mut same_data = |file: &str, fingerprint: &str| match &first {
        None => first = Some((file.to_string(), fingerprint.to_string())),
        Some((first_file, first_fp)) if first_fp != fingerprint => print_warnings(&[format!(
            "warning: {file} was made on other data ({fingerprint}) than {first_file} ({first_fp}); its records are counted with the others"
        )]),
        Some(_) => {}
    };
    for path in paths {
        if is_merged_file(path) {
            let m = read_annotated(std::slice::from_ref(path))?;
            print_warnings(&m.warnings);
            for s in &m.sources {
                same_data(&s.file, &s.fingerprint);
            }
            writeln!(out, "{} (merged)", sanitize(&path.display().to_string()))?;
            for s in &m.sources {
                writeln!(
                    out,
                    "  from       {} ({} records)  {}",
                    sanitize(&s.annotator),
                    s.records,
                    sanitize(&s.file)
                )?;
            }
            let (shared, disagree) = m.conflicts();
            writeln!(
                out,
                "  records    {}; {shared} units by two or more annotators, {disagree} of them in disagreement",
                m.records.len()
            )?;
            for (_, r) in &m.records {
                tally.add(r);
            }
            continue;
        }
        let replay = match read_audit(path) {
            Ok(replay) => replay,
            // Listed, as the file it is: nothing to count yet.
            Err(AuditError::Empty { .. }) => {
                writeln!(out, "{}", sanitize(&path.display().to_string()))?;
                writeln!(
                    out,
                    "  records    none yet: the file is empty, as a session that ended before its first screen was ready leaves it"
                )?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        print_warnings(&replay.warnings);
        let h = &replay.header;
        same_data(&path.display().to_string(), &h.fingerprint);
        let mut by_status: BTreeMap<Status, usize> = BTreeMap::new();
        for r in replay.records.values() {
            *by_status.entry(r.status).or_default() += 1;
            tally.add(r);
        }
        let statuses: Vec<String> = Status::ALL
            .iter()
            .map(|s| format!("{} {}", s.as_str(), by_status.get(s).copied().unwrap_or(0)))
            .collect();
        writeln!(out, "{}", sanitize(&path.display().to_string()))?;
        writeln!(out, "  annotator  {}", sanitize(&h.annotator))?;
        writeln!(
            out,
            "  dataset    {} ({})",
            sanitize(&h.dataset_name),
            sanitize(&h.fingerprint)
        )?;
        writeln!(
            out,
            "  taxonomy   {} v{}",
            sanitize(&h.taxonomy_id),
            h.taxonomy_version
        )?;
        writeln!(
            out,
            "  records    {} ({})",
            replay.records.len(),
            statuses.join(", ")
        )?;
        writeln!(out, "  events     {}", replay.events)?;
    }
    let files = paths.len();
    writeln!(
        out,
        "\nPathways: {} record{} in {} file{}, {} without pathways",
        tally.records,
        if tally.records == 1 { "" } else { "s" },
        files,
        if files == 1 { "" } else { "s" },
        tally.untagged
    )?;
    if tally.overall.is_empty() {
        writeln!(out, "  no pathways tagged")?;
        return Ok(());
    }
    write_table(out, "  ", &tally.overall)?;
    write_grouped(out, "By model", &tally.by_model)?;
    write_grouped(out, "By benchmark", &tally.by_benchmark)?;
    write_grouped(out, "By transition", &tally.by_transition)?;
    Ok(())
}

/// One exported record; `tags` repeats `pathways` under the name docs/measures.md §8 reads.
#[derive(Serialize)]
struct Row<'a> {
    annotator: &'a str,
    model: &'a str,
    benchmark: &'a str,
    item_id: &'a str,
    from: &'a str,
    to: &'a str,
    status: &'a str,
    tags: &'a [String],
    pathways: &'a [String],
    primary: Option<&'a str>,
    evidence_frames: &'a [u64],
    note: &'a str,
    at: &'a str,
}

const COLUMNS: [&str; 13] = [
    "annotator",
    "model",
    "benchmark",
    "item_id",
    "from",
    "to",
    "status",
    "tags",
    "pathways",
    "primary",
    "evidence_frames",
    "note",
    "at",
];

/// The columns of a Parquet export, those of the JSONL and CSV forms in their order, each
/// with its type whatever the rows hold (an audit of no record, or of no evidence frame,
/// still has them all, `evidence_frames` a list of integers).
const EXPORT_COLUMNS: [(&str, crate::core::load::parquet::Kind); 13] = {
    use crate::core::load::parquet::Kind::{IntList, Str, StrList};
    [
        ("annotator", Str),
        ("model", Str),
        ("benchmark", Str),
        ("item_id", Str),
        ("from", Str),
        ("to", Str),
        ("status", Str),
        ("tags", StrList),
        ("pathways", StrList),
        ("primary", Str),
        ("evidence_frames", IntList),
        ("note", Str),
        ("at", Str),
    ]
};

/// Writes every record of the audit at `path` (after replay, in key order) as one JSONL
/// line, CSV row or Parquet row. The JSON escapes every character a terminal would act on
/// (it parses back to the same strings); the CSV keeps every field byte for byte, except on
/// a `terminal`, where each field is `sanitize`d first.
pub fn export(
    path: &Path,
    format: ExportFormat,
    terminal: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let records: Vec<(String, AuditRecord)> = if is_merged_file(path) {
        let m = read_annotated(&[path.to_path_buf()])?;
        print_warnings(&m.warnings);
        m.records
    } else {
        let replay = read(path)?;
        let who = replay.header.annotator;
        replay
            .records
            .into_values()
            .map(|r| (who.clone(), r))
            .collect()
    };
    let rows = records.iter().map(|(annotator, r)| Row {
        annotator,
        model: &r.key.model,
        benchmark: &r.key.benchmark,
        item_id: &r.key.item_id,
        from: &r.from,
        to: &r.to,
        status: r.status.as_str(),
        tags: &r.pathways,
        pathways: &r.pathways,
        primary: r.primary.as_deref(),
        evidence_frames: &r.evidence_frames,
        note: &r.note,
        at: &r.at,
    });
    match format {
        ExportFormat::Jsonl => {
            for row in rows {
                crate::core::text::json_to_writer(&mut *out, &row)?;
                writeln!(out)?;
            }
        }
        ExportFormat::Parquet => {
            if terminal {
                anyhow::bail!(
                    "a Parquet export is binary: redirect it to a file (audit export --format parquet FILE > out.parquet)"
                );
            }
            let records = rows
                .map(|row| match serde_json::to_value(&row)? {
                    serde_json::Value::Object(m) => Ok(m),
                    _ => unreachable!("a row serializes as an object"),
                })
                .collect::<serde_json::Result<Vec<_>>>()?;
            let mut buf = Vec::new();
            crate::core::load::parquet::write_records(&records, &EXPORT_COLUMNS, &mut buf)?;
            out.write_all(&buf)?;
        }
        ExportFormat::Csv => {
            let mut w = csv::Writer::from_writer(&mut *out);
            w.write_record(COLUMNS)?;
            for row in rows {
                let frames: Vec<String> = row.evidence_frames.iter().map(u64::to_string).collect();
                let tags = row.tags.join(";");
                let fields = [
                    row.annotator,
                    row.model,
                    row.benchmark,
                    row.item_id,
                    row.from,
                    row.to,
                    row.status,
                    &tags,
                    &tags,
                    row.primary.unwrap_or(""),
                    &frames.join(";"),
                    row.note,
                    row.at,
                ];
                if terminal {
                    w.write_record(fields.map(|f| sanitize(f).into_owned()))?;
                } else {
                    w.write_record(fields)?;
                }
            }
            w.flush()?;
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::analysis::agreement::read_annotations;
    use crate::core::audit::{AuditFile, AuditHeader, Event, UnitKey};

    fn header(annotator: &str) -> AuditHeader {
        AuditHeader::for_tests(annotator)
    }

    fn rec(
        model: &str,
        item: &str,
        to: &str,
        status: Status,
        pathways: &[&str],
        primary: Option<&str>,
    ) -> AuditRecord {
        AuditRecord {
            key: UnitKey::new(model, "videomme", item),
            from: "8f".into(),
            to: to.into(),
            status,
            pathways: pathways.iter().map(|s| s.to_string()).collect(),
            primary: primary.map(str::to_owned),
            evidence_frames: vec![3, 7],
            note: "a \"quoted\", note; with\nnewline".into(),
            at: "2026-11-29T12:00:00Z".into(),
            harm: None,
        }
    }

    /// An audit of four records (one of them untagged) in a temporary directory.
    fn sample() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("alice.audit.jsonl");
        let (mut f, _) = AuditFile::open(&path, &header("alice")).expect("open");
        for r in [
            rec(
                "m1",
                "q1",
                "16f",
                Status::Done,
                &["drop", "prior"],
                Some("drop"),
            ),
            rec("m1", "q2", "32f", Status::Done, &["drop"], Some("drop")),
            rec(
                "m2",
                "q1",
                "16f",
                Status::Flagged,
                &["prior"],
                Some("distract"),
            ),
            rec("m2", "q3", "16f", Status::Skipped, &[], None),
        ] {
            f.append(&Event::Set(r)).expect("append");
        }
        (dir, path)
    }

    #[test]
    fn audit_summary_counts() {
        let (_dir, path) = sample();
        let mut out = Vec::new();
        summary(std::slice::from_ref(&path), &mut out).expect("summary");
        let text = String::from_utf8(out).expect("utf8");
        for want in [
            "  annotator  alice\n",
            "  records    4 (todo 0, done 2, skipped 1, flagged 1)\n",
            "  events     4\n",
            "Pathways: 4 records in 1 file, 1 without pathways\n",
            "  pathway   records  primary\n",
            "  drop            2        2\n",
            "  prior           2        0\n",
            "  distract        1        1\n",
            "By model\n  m1\n    pathway  records  primary\n    drop           2        2\n    prior          1        0\n",
            "By transition\n  8f -> 16f\n",
            "  8f -> 32f\n    pathway  records  primary\n    drop           1        1\n",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
    }

    #[test]
    fn audit_summary_lists_an_empty_audit_and_counts_the_others() {
        let (dir, path) = sample();
        let empty = dir.path().join("bob.audit.jsonl");
        std::fs::write(&empty, "\n").expect("write");
        let mut out = Vec::new();
        summary(&[empty, path], &mut out).expect("summary");
        let text = String::from_utf8(out).expect("utf8");
        for want in [
            "bob.audit.jsonl\n  records    none yet: the file is empty, as a session that ended before its first screen was ready leaves it\n",
            "  records    4 (todo 0, done 2, skipped 1, flagged 1)\n",
            "Pathways: 4 records in 2 files, 1 without pathways\n",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
    }

    #[test]
    fn audit_export_jsonl_is_agreement_input() {
        let (_dir, path) = sample();
        let mut out = Vec::new();
        export(&path, ExportFormat::Jsonl, false, &mut out).expect("export");
        let anns = read_annotations(out.as_slice(), Path::new("export.jsonl")).expect("readable");
        let replay = read_audit(&path).expect("read");
        // Every record is exported; the skipped one is no annotation (as `audit agreement`).
        let annotations: Vec<_> = replay
            .records
            .values()
            .filter(|r| {
                r.status
                    .is_annotation(!r.pathways.is_empty() || r.primary.is_some())
            })
            .collect();
        assert_eq!(
            out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count(),
            4
        );
        assert_eq!(anns.len(), 3);
        assert_eq!(anns.len(), annotations.len());
        for (a, r) in anns.iter().zip(annotations) {
            assert_eq!(a.annotator, "alice");
            assert_eq!(
                a.unit,
                (
                    r.key.model.clone(),
                    r.key.benchmark.clone(),
                    r.key.item_id.clone()
                )
            );
            assert_eq!(a.tags, r.pathways);
            assert_eq!(a.primary, r.primary);
        }
        let first: serde_json::Value =
            serde_json::from_slice(out.split(|&b| b == b'\n').next().expect("line")).expect("json");
        let keys: Vec<&str> = first
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        let mut want = COLUMNS.to_vec();
        want.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(keys, want);
    }

    #[test]
    fn audit_export_csv_rows() {
        let (_dir, path) = sample();
        let mut out = Vec::new();
        export(&path, ExportFormat::Csv, false, &mut out).expect("export");
        let mut r = csv::Reader::from_reader(out.as_slice());
        assert_eq!(
            r.headers().expect("headers").iter().collect::<Vec<_>>(),
            COLUMNS
        );
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.expect("row")).collect();
        assert_eq!(rows.len(), 4);
        assert_eq!(&rows[0][1], "m1");
        assert_eq!(&rows[0][7], "drop;prior");
        assert_eq!(&rows[0][9], "drop");
        assert_eq!(&rows[0][10], "3;7");
        assert_eq!(&rows[0][11], "a \"quoted\", note; with\nnewline");
        assert_eq!(&rows[3][6], "skipped");
        assert_eq!(&rows[3][9], "");
    }
}
