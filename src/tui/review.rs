//! Adjudication (`frameaudit review AUDIT...`): the queue holds the units where annotators
//! disagree; the item screen shows each annotator's pathways, primary and note beside the
//! item and its frames, and the reviewer takes one annotator's record (`A` cycles through
//! them) or writes their own with the usual tagging keys. The result is an ordinary audit
//! file whose header names the audits it settles (`adjudicates`).

use std::collections::BTreeMap;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::core::audit::merged::Annotated;
use crate::core::audit::{AuditRecord, UnitKey};
use crate::core::taxonomy::Taxonomy;
use crate::core::text::sanitize;

/// What the reviewer settles.
#[derive(Debug, Clone, Default)]
pub struct Review {
    /// The audits adjudicated, as named on the command line.
    pub sources: Vec<String>,
    /// Each disagreement: the annotators' records, in annotator order.
    pub units: BTreeMap<UnitKey, Vec<(String, AuditRecord)>>,
    /// Units audited by several annotators who agree (not queued).
    pub agreed: usize,
}

impl Review {
    /// The disagreements of a set of annotated records.
    pub fn new(annotated: &Annotated, sources: Vec<String>) -> Review {
        let mut units = BTreeMap::new();
        let mut agreed = 0;
        for (key, records, disagree) in annotated.shared_units() {
            if disagree {
                units.insert(key.clone(), records.into_iter().cloned().collect());
            } else {
                agreed += 1;
            }
        }
        Review {
            sources,
            units,
            agreed,
        }
    }

    /// The records of a unit, if it is a disagreement.
    pub fn records(&self, key: &UnitKey) -> Option<&[(String, AuditRecord)]> {
        self.units.get(key).map(Vec::as_slice)
    }

    /// The lines of the annotators panel of a unit: one block per annotator.
    pub fn panel(&self, key: &UnitKey, taxonomy: &Taxonomy, width: u16) -> Vec<Line<'static>> {
        let Some(records) = self.records(key) else {
            return vec![Line::from("not a disagreement of the audits under review")];
        };
        let dim = Style::default().fg(Color::DarkGray);
        let label = |id: &str| {
            taxonomy.get(id).map_or_else(
                || sanitize(id).into_owned(),
                |p| sanitize(&p.label).into_owned(),
            )
        };
        let mut lines = Vec::new();
        for (i, (who, r)) in records.iter().enumerate() {
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{} ", i + 1),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::styled(
                    sanitize(who).into_owned(),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::styled(
                    format!(
                        "  {} · {} → {}",
                        r.status.as_str(),
                        sanitize(&r.from),
                        sanitize(&r.to)
                    ),
                    dim,
                ),
            ]));
            let primary = r.primary.as_deref();
            let mut tags: Vec<Span> = vec![Span::raw("  ")];
            if r.pathways.is_empty() && primary.is_none() {
                tags.push(Span::styled("no pathway", dim));
            }
            for id in r
                .pathways
                .iter()
                .map(String::as_str)
                .chain(primary.filter(|p| !r.pathways.iter().any(|t| t == p)))
            {
                let style = if Some(id) == primary {
                    Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
                } else {
                    Style::default()
                };
                tags.push(Span::styled(label(id), style));
                tags.push(Span::raw("  "));
            }
            lines.push(Line::from(tags));
            if !r.note.is_empty() {
                let note: String = sanitize(&r.note)
                    .chars()
                    .take(usize::from(width.saturating_sub(4)) * 2)
                    .collect();
                lines.push(Line::from(Span::styled(format!("  “{note}”"), dim)));
            }
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::audit::Status;
    use crate::core::audit::merged::{Annotated, DatasetRef};

    fn rec(item: &str, tags: &[&str], note: &str) -> AuditRecord {
        let mut r = AuditRecord::blank(UnitKey::new("m", "b", item), "8f", "16f", "t");
        r.status = Status::Done;
        r.pathways = tags.iter().map(|s| s.to_string()).collect();
        r.primary = tags.first().map(|s| s.to_string());
        r.note = note.into();
        r
    }

    #[test]
    fn only_disagreements_are_queued_and_the_panel_shows_each_annotator() {
        let annotated = Annotated {
            dataset: DatasetRef {
                name: "d".into(),
                fingerprint: "f".into(),
            },
            sources: Vec::new(),
            records: vec![
                (
                    "alice".into(),
                    rec("q1", &["evidence_dropped"], "gone at 0:12"),
                ),
                ("bob".into(), rec("q1", &["language_prior"], "")),
                ("alice".into(), rec("q2", &["evidence_dropped"], "")),
                ("bob".into(), rec("q2", &["evidence_dropped"], "")),
                ("alice".into(), rec("q3", &[], "")),
            ],
            warnings: Vec::new(),
        };
        let r = Review::new(&annotated, vec!["a".into(), "b".into()]);
        assert_eq!(r.units.len(), 1);
        assert_eq!(r.agreed, 1);
        let tax = Taxonomy::load(None).expect("taxonomy");
        let text: Vec<String> = r
            .panel(&UnitKey::new("m", "b", "q1"), &tax, 60)
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(text[0].starts_with("1 alice  done · 8f → 16f"), "{text:?}");
        assert!(text[1].contains("Evidence dropped"), "{text:?}");
        assert!(text[2].contains("gone at 0:12"), "{text:?}");
        assert!(text[3].starts_with("2 bob"), "{text:?}");
        assert!(text[4].contains("Language prior"), "{text:?}");
    }
}
