//! The review of several annotators' audits (`frameaudit review AUDIT...`): which units they
//! disagree on, each with every annotator's record, and how many they agree on. The
//! reviewer's own records go to an ordinary audit whose header names these sources.

use std::collections::BTreeMap;

use crate::core::audit::merged::Annotated;
use crate::core::audit::{AuditRecord, UnitKey};

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
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::core::audit::Status;
    use crate::core::audit::merged::DatasetRef;

    fn rec(item: &str, tags: &[&str], note: &str) -> AuditRecord {
        let mut r = AuditRecord::blank(UnitKey::new("m", "b", item), "8f", "16f", "t");
        r.status = Status::Done;
        r.pathways = tags.iter().map(|s| s.to_string()).collect();
        r.primary = tags.first().map(|s| s.to_string());
        r.note = note.into();
        r
    }

    /// Alice and Bob disagree on q1, agree on q2; only Alice audited q3.
    pub(crate) fn two_annotators() -> Review {
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
        Review::new(&annotated, vec!["a".into(), "b".into()])
    }

    #[test]
    fn only_disagreements_are_queued_with_each_annotators_record() {
        let r = two_annotators();
        assert_eq!(r.sources, vec!["a", "b"]);
        assert_eq!(r.agreed, 1);
        let keys: Vec<&str> = r.units.keys().map(|k| k.item_id.as_str()).collect();
        assert_eq!(keys, vec!["q1"]);
        let q1 = r.records(&UnitKey::new("m", "b", "q1")).expect("q1");
        let who: Vec<(&str, &str)> = q1
            .iter()
            .map(|(a, rec)| (a.as_str(), rec.primary.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            who,
            vec![("alice", "evidence_dropped"), ("bob", "language_prior")]
        );
        assert!(r.records(&UnitKey::new("m", "b", "q2")).is_none());
    }
}
