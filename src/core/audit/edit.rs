//! The edit rules of an audit record, the same for every front end (the audit screens today,
//! a CLI `audit edit` or another screen tomorrow): what tagging a pathway, choosing the
//! primary one, marking an evidence frame and taking another annotator's judgement do to a
//! record. A front end decides which record and which transition; these decide the rest.

use std::collections::BTreeSet;

use super::{AuditRecord, UnitKey};
use crate::core::taxonomy::Taxonomy;

/// The record a change starts from: the unit's current record, or a blank one, set on the
/// transition examined (`from` → `to`): the transition is part of the record.
pub fn working(current: Option<&AuditRecord>, key: UnitKey, from: &str, to: &str) -> AuditRecord {
    let mut rec = current
        .cloned()
        .unwrap_or_else(|| AuditRecord::blank(key, "", "", ""));
    from.clone_into(&mut rec.from);
    to.clone_into(&mut rec.to);
    rec
}

/// Tags pathway `id`, or untags it when it is tagged. Tags keep the taxonomy's order. The
/// first pathway tagged becomes primary; untagging the primary one makes the first
/// remaining tag primary (none when none is left).
pub fn toggle_pathway(rec: &mut AuditRecord, taxonomy: &Taxonomy, id: &str) {
    if let Some(pos) = rec.pathways.iter().position(|x| x == id) {
        rec.pathways.remove(pos);
        if rec.primary.as_deref() == Some(id) {
            rec.primary = rec.pathways.first().cloned();
        }
    } else {
        rec.pathways.push(id.to_string());
        let order = |x: &String| taxonomy.pathways.iter().position(|p| p.id == *x);
        rec.pathways.sort_by_key(order);
        rec.primary.get_or_insert_with(|| id.to_string());
    }
}

/// Makes the next tagged pathway primary, after the current one in tag order, wrapping to
/// the first; with no tag there is no primary.
pub fn cycle_primary(rec: &mut AuditRecord) {
    let at = rec
        .primary
        .as_ref()
        .and_then(|p| rec.pathways.iter().position(|x| x == p));
    rec.primary = match at {
        Some(p) if p + 1 < rec.pathways.len() => Some(rec.pathways[p + 1].clone()),
        _ => rec.pathways.first().cloned(),
    };
}

/// Marks frame `index` as evidence, or unmarks it when it is marked; the frames stay sorted.
pub fn toggle_evidence(rec: &mut AuditRecord, index: u64) {
    match rec.evidence_frames.binary_search(&index) {
        Ok(p) => {
            rec.evidence_frames.remove(p);
        }
        Err(p) => rec.evidence_frames.insert(p, index),
    }
}

/// Takes another annotator's judgement of the unit into `rec`: pathways, primary, note and
/// evidence frames (status and transition stay the record's own).
pub fn take_judgement(rec: &mut AuditRecord, theirs: &AuditRecord) {
    rec.pathways.clone_from(&theirs.pathways);
    rec.primary.clone_from(&theirs.primary);
    rec.note.clone_from(&theirs.note);
    rec.evidence_frames.clone_from(&theirs.evidence_frames);
}

/// What two annotators agree or disagree on: the set of pathways and the primary one.
pub fn verdict(rec: &AuditRecord) -> (BTreeSet<&str>, Option<&str>) {
    (
        rec.pathways.iter().map(String::as_str).collect(),
        rec.primary.as_deref(),
    )
}

/// Whether two records hold the same judgement as [`take_judgement`] takes it (verdict and
/// note).
pub fn same_judgement(a: &AuditRecord, b: &AuditRecord) -> bool {
    verdict(a) == verdict(b) && a.note == b.note
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::audit::Status;

    fn taxonomy() -> Taxonomy {
        Taxonomy::load(None).expect("the bundled taxonomy")
    }

    fn rec() -> AuditRecord {
        AuditRecord::blank(UnitKey::new("m", "b", "i"), "8f", "16f", "t")
    }

    #[test]
    fn the_first_pathway_tagged_is_primary_and_tags_keep_the_taxonomys_order() {
        let t = taxonomy();
        let (a, b, c) = (&t.pathways[0].id, &t.pathways[1].id, &t.pathways[2].id);
        let mut r = rec();
        toggle_pathway(&mut r, &t, c);
        toggle_pathway(&mut r, &t, a);
        assert_eq!(r.pathways, [a.clone(), c.clone()]);
        assert_eq!(
            r.primary.as_ref(),
            Some(c),
            "the first tagged stays primary"
        );
        toggle_pathway(&mut r, &t, b);
        assert_eq!(r.pathways, [a.clone(), b.clone(), c.clone()]);
        // Untagging the primary: the first remaining tag becomes primary.
        toggle_pathway(&mut r, &t, c);
        assert_eq!(r.pathways, [a.clone(), b.clone()]);
        assert_eq!(r.primary.as_ref(), Some(a));
        // Untagging another keeps the primary.
        toggle_pathway(&mut r, &t, b);
        assert_eq!(r.primary.as_ref(), Some(a));
        toggle_pathway(&mut r, &t, a);
        assert!(r.pathways.is_empty() && r.primary.is_none());
        assert!(r.is_blank() || r.status != Status::Todo);
    }

    #[test]
    fn the_primary_cycles_through_the_tags_and_wraps() {
        let t = taxonomy();
        let mut r = rec();
        cycle_primary(&mut r);
        assert_eq!(r.primary, None, "no tag, no primary");
        for p in &t.pathways[..3] {
            toggle_pathway(&mut r, &t, &p.id);
        }
        let ids: Vec<String> = t.pathways[..3].iter().map(|p| p.id.clone()).collect();
        assert_eq!(r.primary.as_ref(), Some(&ids[0]));
        cycle_primary(&mut r);
        assert_eq!(r.primary.as_ref(), Some(&ids[1]));
        cycle_primary(&mut r);
        assert_eq!(r.primary.as_ref(), Some(&ids[2]));
        cycle_primary(&mut r);
        assert_eq!(r.primary.as_ref(), Some(&ids[0]), "wraps");
        // A primary that is not among the tags (an old record) goes to the first.
        r.primary = Some("gone".into());
        cycle_primary(&mut r);
        assert_eq!(r.primary.as_ref(), Some(&ids[0]));
    }

    #[test]
    fn evidence_frames_toggle_and_stay_sorted() {
        let mut r = rec();
        for f in [30, 10, 20] {
            toggle_evidence(&mut r, f);
        }
        assert_eq!(r.evidence_frames, [10, 20, 30]);
        toggle_evidence(&mut r, 20);
        assert_eq!(r.evidence_frames, [10, 30]);
    }

    #[test]
    fn a_working_record_is_the_current_one_on_the_transition_examined() {
        let mut current = rec();
        current.note = "kept".into();
        let w = working(Some(&current), current.key.clone(), "16f", "32f");
        assert_eq!((w.from.as_str(), w.to.as_str()), ("16f", "32f"));
        assert_eq!(w.note, "kept");
        let w = working(None, UnitKey::new("m", "b", "j"), "8f", "16f");
        assert_eq!(w.key.item_id, "j");
        assert!(w.pathways.is_empty() && w.primary.is_none() && w.note.is_empty());
        assert_eq!(w.status, Status::Todo);
    }

    #[test]
    fn taking_a_judgement_keeps_status_and_transition() {
        let t = taxonomy();
        let mut theirs = rec();
        toggle_pathway(&mut theirs, &t, &t.pathways[1].id);
        theirs.note = "theirs".into();
        theirs.evidence_frames = vec![5];
        theirs.status = Status::Flagged;
        let mut mine = working(None, theirs.key.clone(), "16f", "32f");
        mine.status = Status::Done;
        assert!(!same_judgement(&mine, &theirs));
        take_judgement(&mut mine, &theirs);
        assert!(same_judgement(&mine, &theirs));
        assert_eq!(mine.status, Status::Done);
        assert_eq!(mine.to, "32f");
        assert_eq!(mine.evidence_frames, [5]);
        // The verdict leaves the note out: two notes, one verdict.
        mine.note = "mine".into();
        assert_eq!(verdict(&mine), verdict(&theirs));
        assert!(!same_judgement(&mine, &theirs));
    }
}
