//! `frameaudit audit agreement AUDIT... [--json]`: how far annotators agree, from their
//! audit files alone. Each file is one annotator (named by its header); a unit is
//! (model, benchmark, item_id); its annotation is the record's pathways and primary
//! (docs/measures.md §8). Records marked `skipped`, and `todo` records without any pathway, are not
//! annotations and are left out. The numbers are the `agreement` object of docs/measures.md §12,
//! with the raw percent agreement beside each coefficient.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Serialize;

use crate::core::analysis::agreement::{Agreement, Annotation, agreement};
use crate::core::audit::AuditRecord;
use crate::core::audit::merged::read_annotated;
use crate::core::taxonomy::Taxonomy;
use crate::core::text::sanitize;

/// What the command computes, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct AgreementReport {
    /// One entry per audit file, in the order given.
    pub files: Vec<FileEntry>,
    /// The `agreement` object of docs/measures.md §12.
    pub agreement: Agreement,
    /// The share of pairable primary values that agree (the observed agreement behind α).
    pub primary_percent_agreement: Option<f64>,
    /// Pathway ids the taxonomy does not know → how many annotations use them.
    pub unknown_pathways: BTreeMap<String, usize>,
}

/// One audit file of the agreement, and what was taken from it.
#[derive(Debug, Serialize)]
pub struct FileEntry {
    /// The file, as given.
    pub path: String,
    /// The annotator whose records were taken from it.
    pub annotator: String,
    /// Annotations taken from the file.
    pub units: usize,
    /// Records left out (skipped, or todo without pathways).
    pub left_out: usize,
}

/// The annotations of one annotator's records, and how many records were left out.
pub fn annotations_of<'a>(
    annotator: &str,
    records: impl IntoIterator<Item = &'a AuditRecord>,
) -> (Vec<Annotation>, usize) {
    let mut out = Vec::new();
    let mut left_out = 0;
    for r in records {
        let tagged = !r.pathways.is_empty() || r.primary.is_some();
        if !r.status.is_annotation(tagged) {
            left_out += 1;
            continue;
        }
        out.push(Annotation {
            unit: (
                r.key.model.clone(),
                r.key.benchmark.clone(),
                r.key.item_id.clone(),
            ),
            annotator: annotator.to_string(),
            tags: r.pathways.clone(),
            primary: r.primary.clone(),
        });
    }
    (out, left_out)
}

/// The observed agreement on the primary pathway: over units with at least two primary
/// values, the share of ordered pairs of values (weighted as α's coincidences) that agree.
pub fn primary_percent_agreement(anns: &[Annotation]) -> Option<f64> {
    let mut by_unit: BTreeMap<&(String, String, String), Vec<&str>> = BTreeMap::new();
    for a in anns {
        if let Some(p) = &a.primary {
            by_unit.entry(&a.unit).or_default().push(p);
        }
    }
    let (mut agree, mut total) = (0.0, 0.0);
    for vals in by_unit.values() {
        let m = vals.len();
        if m < 2 {
            continue;
        }
        let w = 1.0 / (m - 1) as f64;
        for (p, a) in vals.iter().enumerate() {
            for (q, b) in vals.iter().enumerate() {
                if p != q {
                    total += w;
                    if a == b {
                        agree += w;
                    }
                }
            }
        }
    }
    (total > 0.0).then(|| 100.0 * agree / total)
}

/// Reads the files (audit files or merged audits) and computes the report; two inputs
/// with one annotator are an error.
pub fn compute(paths: &[PathBuf], taxonomy: &Taxonomy) -> Result<(AgreementReport, Vec<String>)> {
    let m = read_annotated(paths)?;
    let warnings = m.warnings.clone();
    let mut files = Vec::new();
    let mut all = Vec::new();
    for s in &m.sources {
        let records = m
            .records
            .iter()
            .filter(|(a, _)| *a == s.annotator)
            .map(|(_, r)| r);
        let (anns, left_out) = annotations_of(&s.annotator, records);
        files.push(FileEntry {
            path: s.file.clone(),
            annotator: s.annotator.clone(),
            units: anns.len(),
            left_out,
        });
        all.extend(anns);
    }
    if files.len() < 2 {
        bail!("agreement needs the records of at least two annotators");
    }
    let mut warnings = warnings;
    let mut unknown_pathways: BTreeMap<String, usize> = BTreeMap::new();
    for a in &all {
        let ids: BTreeSet<&str> = a
            .tags
            .iter()
            .map(String::as_str)
            .chain(a.primary.as_deref())
            .collect();
        for id in ids {
            if taxonomy.get(id).is_none() {
                *unknown_pathways.entry(id.to_string()).or_default() += 1;
            }
        }
    }
    if !unknown_pathways.is_empty() {
        let list: Vec<String> = unknown_pathways
            .iter()
            .map(|(id, n)| format!("{} ({n})", sanitize(id)))
            .collect();
        warnings.push(format!(
            "warning: pathway ids not in taxonomy {:?}: {}; they are compared like the others",
            sanitize(&taxonomy.id),
            list.join(", ")
        ));
    }
    let report = AgreementReport {
        files,
        primary_percent_agreement: primary_percent_agreement(&all),
        agreement: agreement(&all),
        unknown_pathways,
    };
    Ok((report, warnings))
}

fn num(x: Option<f64>, digits: usize) -> String {
    // A value that rounds to zero is printed without a sign (kappa at chance level).
    x.map_or("–".to_string(), |v| {
        let s = format!("{v:.digits$}");
        if s.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            format!("{:.digits$}", 0.0)
        } else {
            s
        }
    })
}

fn pct(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |v| format!("{:.1}%", 100.0 * v))
}

/// The readable table.
pub fn write_text(r: &AgreementReport, out: &mut dyn Write) -> std::io::Result<()> {
    let a = &r.agreement;
    writeln!(out, "Annotators")?;
    for f in &r.files {
        writeln!(
            out,
            "  {:<16} {:>5} units  ({} left out)  {}",
            sanitize(&f.annotator),
            f.units,
            crate::core::text::count(f.left_out, "record"),
            sanitize(&f.path)
        )?;
    }
    writeln!(
        out,
        "  {} units in all, {} pathway ids",
        a.n_units,
        a.tags.len()
    )?;
    writeln!(
        out,
        "\nPrimary pathway, all annotators: Krippendorff's alpha {}  (raw agreement {}; {} units with 2+ primaries, {} values)",
        num(a.primary_alpha, 3),
        r.primary_percent_agreement
            .map_or("–".to_string(), |v| format!("{v:.1}%")),
        a.primary_units_pairable,
        a.primary_pairable_values
    )?;
    let width = a
        .tags
        .iter()
        .map(|t| sanitize(t).chars().count())
        .max()
        .unwrap_or(0)
        .max("pathway".len());
    for p in &a.pairs {
        writeln!(
            out,
            "\n{} vs {}: {} units compared, macro kappa {}",
            sanitize(&p.annotators[0]),
            sanitize(&p.annotators[1]),
            p.n_units,
            num(p.macro_kappa, 3)
        )?;
        writeln!(
            out,
            "  {:<width$}  {:>7}  {:>8}  {:>5}  {:>5}",
            "pathway", "kappa", "agree", "#a", "#b"
        )?;
        for (t, x) in &p.per_tag {
            writeln!(
                out,
                "  {:<width$}  {:>7}  {:>8}  {:>5}  {:>5}",
                sanitize(t),
                num(x.kappa, 3),
                pct(x.p_o),
                x.pos_a,
                x.pos_b
            )?;
        }
    }
    Ok(())
}

/// The command.
pub fn run(
    paths: &[PathBuf],
    taxonomy: Option<&Path>,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let taxonomy = Taxonomy::load(taxonomy)?;
    let (report, warnings) = compute(paths, &taxonomy)?;
    let mut err = std::io::stderr().lock();
    for w in &warnings {
        writeln!(err, "{}", sanitize(w))?;
    }
    if json {
        crate::core::text::json_to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        write_text(&report, out)?;
    }
    Ok(())
}
