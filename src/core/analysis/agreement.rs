//! Agreement between annotators on evidence-pathway tags (docs/measures.md §8): Cohen's kappa per
//! tag and annotator pair, Krippendorff's alpha (nominal) on the primary tag.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::core::diag::{Diagnostics, LoadError};
use crate::core::load::json::{FieldCheck, J, for_each_line, is_missing, parse_record};

/// One annotator's tags on one unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    /// `(model or "", benchmark or "default", item_id)`.
    pub unit: (String, String, String),
    /// Who annotated.
    pub annotator: String,
    /// Evidence-pathway tags given (taxonomy ids).
    pub tags: Vec<String>,
    /// The tag judged primary, if any.
    pub primary: Option<String>,
}

/// Cohen's kappa of two binary vectors (docs/measures.md §8.1): `(kappa, p_o, positives a, b)`.
/// `kappa` is `None` when chance agreement is 1 or there is nothing to compare; `p_o` is
/// `None` for empty vectors.
pub fn cohen(x: &[bool], v: &[bool]) -> (Option<f64>, Option<f64>, usize, usize) {
    let n = x.len();
    let pos_a = x.iter().filter(|&&b| b).count();
    let pos_b = v.iter().filter(|&&b| b).count();
    if n == 0 {
        return (None, None, pos_a, pos_b);
    }
    let agree = x.iter().zip(v).filter(|(a, b)| a == b).count();
    let p_o = agree as f64 / n as f64;
    // In counts, n² times p_e and p_o: κ = (n·agree − E) / (n² − E), exact until the one
    // division (no chance agreement equal to the observed one shown as -3.3e-16).
    let (n, agree, a, b) = (n as i128, agree as i128, pos_a as i128, pos_b as i128);
    let expected = a * b + (n - a) * (n - b);
    let kappa =
        (expected != n * n).then(|| (n * agree - expected) as f64 / (n * n - expected) as f64);
    (kappa, Some(p_o), pos_a, pos_b)
}

/// Agreement of two annotators on one tag (docs/measures.md §8.1).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TagAgreement {
    /// Cohen's kappa; `None` when chance agreement is 1 (both constant and equal).
    pub kappa: Option<f64>,
    /// Observed agreement: the share of units where both say the same.
    pub p_o: Option<f64>,
    /// Units where the tag is present for the first annotator.
    pub pos_a: usize,
    /// Units where the tag is present for the second annotator.
    pub pos_b: usize,
}

/// Agreement of one pair of annotators over the units both annotated.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PairAgreement {
    /// The two annotators, sorted.
    pub annotators: [String; 2],
    /// Units both annotated.
    pub n_units: usize,
    /// Agreement on each tag of the vocabulary.
    pub per_tag: BTreeMap<String, TagAgreement>,
    /// Mean of the non-null kappas over the tags; `None` if there is none.
    pub macro_kappa: Option<f64>,
}

/// The `agreement` object of the report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Agreement {
    /// Every annotator, sorted.
    pub annotators: Vec<String>,
    /// Units annotated by anyone.
    pub n_units: usize,
    /// The tag vocabulary: every tag and primary given, sorted.
    pub tags: Vec<String>,
    /// One entry per annotator pair.
    pub pairs: Vec<PairAgreement>,
    /// Krippendorff's alpha (nominal) on the primary tag; `None` when no unit is pairable.
    pub primary_alpha: Option<f64>,
    /// Primary values in pairable units (`n` of §8.2).
    pub primary_pairable_values: usize,
    /// Units with at least two primary values.
    pub primary_units_pairable: usize,
}

type Unit = (String, String, String);

/// Krippendorff's alpha, nominal, over units given as lists of values (docs/measures.md §8.2).
/// Returns `(alpha, pairable values, pairable units)`.
pub fn krippendorff_alpha<'a>(
    units: impl IntoIterator<Item = Vec<&'a str>>,
) -> (Option<f64>, usize, usize) {
    let mut o: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    let (mut values, mut pairable) = (0usize, 0usize);
    for vals in units {
        let mu = vals.len();
        if mu < 2 {
            continue;
        }
        pairable += 1;
        values += mu;
        let w = 1.0 / (mu - 1) as f64;
        for (p, a) in vals.iter().enumerate() {
            for (q, b) in vals.iter().enumerate() {
                if p != q {
                    *o.entry((a, b)).or_default() += w;
                }
            }
        }
    }
    if pairable == 0 {
        return (None, 0, 0);
    }
    let mut n_c: BTreeMap<&str, f64> = BTreeMap::new();
    for (&(c, _), &x) in &o {
        *n_c.entry(c).or_default() += x;
    }
    let n: f64 = n_c.values().sum();
    let d_o: f64 = o.iter().filter(|((c, k), _)| c != k).map(|(_, &x)| x).sum();
    let mut d_e = 0.0;
    for (c, &nc) in &n_c {
        for (k, &nk) in &n_c {
            if c != k {
                d_e += nc * nk;
            }
        }
    }
    let alpha = (d_e != 0.0).then(|| 1.0 - (n - 1.0) * d_o / d_e);
    (alpha, values, pairable)
}

/// Agreement over a set of annotations (already free of duplicate (unit, annotator)).
pub fn agreement(anns: &[Annotation]) -> Agreement {
    let annotators: Vec<String> = anns
        .iter()
        .map(|a| a.annotator.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let units: BTreeSet<&Unit> = anns.iter().map(|a| &a.unit).collect();
    let tags: Vec<String> = anns
        .iter()
        .flat_map(|a| a.tags.iter().chain(a.primary.iter()))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut by: BTreeMap<&str, BTreeMap<&Unit, &Annotation>> = BTreeMap::new();
    for a in anns {
        by.entry(&a.annotator).or_default().insert(&a.unit, a);
    }
    let has =
        |a: &Annotation, t: &str| a.tags.iter().any(|x| x == t) || a.primary.as_deref() == Some(t);

    let mut pairs = Vec::new();
    for (i, x) in annotators.iter().enumerate() {
        for y in &annotators[i + 1..] {
            let (ax, ay) = (&by[x.as_str()], &by[y.as_str()]);
            let common: Vec<(&Annotation, &Annotation)> = ax
                .iter()
                .filter_map(|(u, a)| ay.get(u).map(|b| (*a, *b)))
                .collect();
            let mut per_tag = BTreeMap::new();
            let mut kappas = Vec::new();
            for t in &tags {
                let xs: Vec<bool> = common.iter().map(|(a, _)| has(a, t)).collect();
                let vs: Vec<bool> = common.iter().map(|(_, b)| has(b, t)).collect();
                let (kappa, p_o, pos_a, pos_b) = cohen(&xs, &vs);
                kappas.extend(kappa);
                per_tag.insert(
                    t.clone(),
                    TagAgreement {
                        kappa,
                        p_o,
                        pos_a,
                        pos_b,
                    },
                );
            }
            let macro_kappa =
                (!kappas.is_empty()).then(|| kappas.iter().sum::<f64>() / kappas.len() as f64);
            pairs.push(PairAgreement {
                annotators: [x.clone(), y.clone()],
                n_units: common.len(),
                per_tag,
                macro_kappa,
            });
        }
    }

    let mut primaries: BTreeMap<&Unit, Vec<&str>> = BTreeMap::new();
    for a in anns {
        if let Some(p) = &a.primary {
            primaries.entry(&a.unit).or_default().push(p);
        }
    }
    let (primary_alpha, primary_pairable_values, primary_units_pairable) =
        krippendorff_alpha(primaries.into_values());
    Agreement {
        annotators,
        n_units: units.len(),
        tags,
        pairs,
        primary_alpha,
        primary_pairable_values,
        primary_units_pairable,
    }
}

#[derive(Deserialize)]
struct RawAnnotation<'a> {
    #[serde(borrow, default)]
    model: J<'a>,
    #[serde(borrow, default)]
    benchmark: J<'a>,
    #[serde(borrow, default)]
    item_id: J<'a>,
    #[serde(borrow, default)]
    annotator: J<'a>,
    #[serde(borrow, default)]
    tags: J<'a>,
    #[serde(borrow, default)]
    primary: J<'a>,
    /// The record's status, as `audit export` writes it (not part of §8's input).
    #[serde(borrow, default)]
    status: J<'a>,
}

/// Whether an audit record of status `status` (as audit files write it) is an annotation,
/// for agreement: a skipped record is not, nor a todo one without any pathway (`tagged`: it
/// has pathways or a primary). `None` for a status that is none.
pub fn is_annotation(status: &str, tagged: bool) -> Option<bool> {
    match status {
        "skipped" => Some(false),
        "todo" => Some(tagged),
        "done" | "flagged" => Some(true),
        _ => None,
    }
}

/// Reads annotation JSONL (docs/measures.md §8); a duplicate (unit, annotator) rejects the input.
/// A line with a `status` (as `audit export` writes every record) is an annotation only as
/// `audit agreement` takes one ([`is_annotation`]): a skipped record is left out, and a todo
/// one without tags or primary.
pub fn read_annotations(reader: impl BufRead, path: &Path) -> Result<Vec<Annotation>, LoadError> {
    let file: Arc<Path> = Arc::from(path);
    let mut diags = Diagnostics::default();
    let mut out = Vec::new();
    let mut seen: BTreeMap<(Unit, String), u64> = BTreeMap::new();
    for_each_line(reader, path, |text, line| {
        let Some(raw) =
            parse_record::<RawAnnotation>(text, "one annotation", &file, line, &mut diags)
        else {
            return;
        };
        let mut ck = FieldCheck::new(&mut diags, &file, line);
        let item_id = ck.required_str("item_id", &raw.item_id).to_string();
        let annotator = ck.required_str("annotator", &raw.annotator).to_string();
        let model = ck.opt_str("model", &raw.model).unwrap_or("").to_string();
        let benchmark = ck
            .defaulted_str("benchmark", &raw.benchmark, "default")
            .to_string();
        let primary = ck.opt_str("primary", &raw.primary).map(str::to_owned);
        let tags = match &raw.tags {
            J::Arr(a) if a.iter().all(|t| t.as_str().is_some()) => {
                a.iter().filter_map(J::as_str).map(str::to_owned).collect()
            }
            v if is_missing(v) => {
                ck.fail("tags", "required field is missing".into());
                Vec::new()
            }
            other => {
                ck.fail(
                    "tags",
                    format!("expected an array of strings, found {}", other.kind()),
                );
                Vec::new()
            }
        };
        let tagged = !tags.is_empty() || primary.is_some();
        let annotation = match ck.opt_str("status", &raw.status) {
            None => true,
            Some(v) => is_annotation(v, tagged).unwrap_or_else(|| {
                ck.fail(
                    "status",
                    format!("{v:?} is not a status (todo, done, skipped, flagged)"),
                );
                false
            }),
        };
        if !ck.ok || !annotation {
            return;
        }
        let unit = (model, benchmark, item_id);
        if let Some(first) = seen.get(&(unit.clone(), annotator.clone())) {
            let msg =
                format!("annotator {annotator:?} already annotated this unit at line {first}");
            diags.error(&file, Some(line), Some("annotator"), msg);
            return;
        }
        seen.insert((unit.clone(), annotator.clone()), line);
        out.push(Annotation {
            unit,
            annotator,
            tags,
            primary,
        });
    })?;
    if diags.has_errors() {
        return Err(LoadError::Rejected(diags));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn krippendorff_canonical_example() {
        let rows: [[Option<&str>; 4]; 12] = [
            [Some("1"), Some("1"), None, Some("1")],
            [Some("2"), Some("2"), Some("3"), Some("2")],
            [Some("3"), Some("3"), Some("3"), Some("3")],
            [Some("3"), Some("3"), Some("3"), Some("3")],
            [Some("2"), Some("2"), Some("2"), Some("2")],
            [Some("1"), Some("2"), Some("3"), Some("4")],
            [Some("4"), Some("4"), Some("4"), Some("4")],
            [Some("1"), Some("1"), Some("2"), Some("1")],
            [Some("2"), Some("2"), Some("2"), Some("2")],
            [None, Some("5"), Some("5"), Some("5")],
            [None, None, Some("1"), Some("1")],
            [None, None, Some("3"), None],
        ];
        let (alpha, values, units) =
            krippendorff_alpha(rows.iter().map(|r| r.iter().flatten().copied().collect()));
        assert!((alpha.expect("alpha") - 0.743421052631579).abs() < 1e-12);
        assert_eq!((values, units), (40, 11));
    }

    #[test]
    fn kappa_of_known_vectors() {
        // docs/measures.md §13.1: harmful sets {q3,q4,q7} vs {q3,q4,q5,q7} over 7 items.
        let a = [false, false, true, true, false, false, true];
        let b = [false, false, true, true, true, false, true];
        let (k, p_o, pa, pb) = cohen(&a, &b);
        assert!((k.expect("kappa") - 0.72).abs() < 1e-12);
        assert!((p_o.expect("p_o") - 6.0 / 7.0).abs() < 1e-12);
        assert_eq!((pa, pb), (3, 4));
        assert_eq!(cohen(&[true, true], &[true, true]).0, None);
    }

    #[test]
    fn duplicate_unit_annotator_is_rejected() {
        let text = "{\"item_id\":\"q1\",\"annotator\":\"a\",\"tags\":[\"x\"]}\n{\"item_id\":\"q1\",\"annotator\":\"a\",\"tags\":[]}\n";
        let err = read_annotations(text.as_bytes(), Path::new("ann.jsonl")).expect_err("rejected");
        assert!(err.to_string().contains("ann.jsonl:2: error: field `annotator`: annotator \"a\" already annotated this unit at line 1"), "{err}");
    }

    #[test]
    fn pairs_and_tags() {
        let text = concat!(
            "{\"item_id\":\"q1\",\"annotator\":\"b\",\"tags\":[\"drop\"],\"primary\":\"drop\"}\n",
            "{\"item_id\":\"q1\",\"annotator\":\"a\",\"tags\":[\"drop\"],\"primary\":\"drop\"}\n",
            "{\"item_id\":\"q2\",\"annotator\":\"a\",\"tags\":[],\"primary\":\"prior\"}\n",
            "{\"item_id\":\"q2\",\"annotator\":\"b\",\"tags\":[\"drop\"],\"primary\":null}\n",
        );
        let anns = read_annotations(text.as_bytes(), Path::new("a.jsonl")).expect("valid");
        let ag = agreement(&anns);
        assert_eq!(ag.annotators, ["a", "b"]);
        assert_eq!(ag.tags, ["drop", "prior"]);
        assert_eq!(ag.n_units, 2);
        let p = &ag.pairs[0];
        assert_eq!(p.n_units, 2);
        assert_eq!(p.per_tag["drop"].p_o, Some(0.5));
        assert_eq!(ag.primary_units_pairable, 1);
    }
}
