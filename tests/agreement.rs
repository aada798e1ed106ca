//! `frameaudit audit agreement`: docs/measures.md §8 computed from audit files alone, on its
//! check value and on hand-made audits whose numbers are worked out below.

mod common;

use std::path::{Path, PathBuf};

use common::{frameaudit, stderr, stdout};
use serde_json::{Value, json};

/// (item, status, pathways, primary); a `todo` record gets a note, so that it is not blank.
type Rec<'a> = (&'a str, &'a str, &'a [&'a str], Option<&'a str>);

/// Writes an audit file of `annotator` with one `set` event per record.
fn audit(dir: &Path, annotator: &str, recs: &[Rec]) -> PathBuf {
    let mut lines = vec![
        json!({"schema": "frameaudit/audit@1", "dataset": {"name": "d", "fingerprint": "sha256:x"},
               "annotator": annotator, "taxonomy": {"id": "evidence-pathways", "version": 1},
               "created_at": "2026-11-30T00:00:00Z"})
        .to_string(),
    ];
    for (item, status, tags, primary) in recs {
        lines.push(
            json!({"at": "2026-11-30T00:00:01Z", "op": "set", "model": "m", "benchmark": "b",
                   "item_id": item, "from": "8f", "to": "16f", "status": status,
                   "pathways": tags, "primary": primary, "evidence_frames": [],
                   "note": if *status == "todo" { "unsure" } else { "" }})
            .to_string(),
        );
    }
    let path = dir.join(format!("{annotator}.audit.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path
}

fn run_json(paths: &[PathBuf]) -> Value {
    let mut args = vec!["audit".to_string(), "agreement".to_string()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = frameaudit(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("json")
}

fn close(a: &Value, b: f64) {
    let a = a.as_f64().unwrap_or_else(|| panic!("not a number: {a}"));
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

#[test]
fn krippendorff_check_value_from_four_audit_files() {
    // docs/measures.md §8.2: 4 coders x 12 units, "." = missing (no record for that coder).
    let units = [
        "1 1 . 1", "2 2 3 2", "3 3 3 3", "3 3 3 3", "2 2 2 2", "1 2 3 4", "4 4 4 4", "1 1 2 1",
        "2 2 2 2", ". 5 5 5", ". . 1 1", ". . 3 .",
    ];
    let tmp = tempfile::tempdir().expect("tmp");
    let ids: Vec<String> = (0..12).map(|u| format!("u{u:02}")).collect();
    let values: Vec<Vec<String>> = (0..4)
        .map(|c| {
            units
                .iter()
                .map(|u| u.split(' ').nth(c).expect("value").to_string())
                .collect()
        })
        .collect();
    let mut paths = Vec::new();
    for (c, vals) in values.iter().enumerate() {
        let prim: Vec<String> = vals.iter().map(|v| format!("pathway_{v}")).collect();
        let recs: Vec<Rec> = ids
            .iter()
            .zip(vals)
            .zip(&prim)
            .filter(|((_, v), _)| *v != ".")
            .map(|((id, _), p)| (id.as_str(), "done", &[][..], Some(p.as_str())))
            .collect();
        paths.push(audit(tmp.path(), &format!("coder{c}"), &recs));
    }
    let r = run_json(&paths);
    close(&r["agreement"]["primary_alpha"], 0.743421052631579);
    assert_eq!(r["agreement"]["primary_units_pairable"], 11);
    assert_eq!(
        r["agreement"]["annotators"].as_array().map(Vec::len),
        Some(4)
    );
    assert_eq!(r["agreement"]["pairs"].as_array().map(Vec::len), Some(6));
    // Every id is unknown to the bundled taxonomy: counted, and listed in a warning.
    assert_eq!(r["unknown_pathways"]["pathway_3"], 11);
}

#[test]
fn hand_made_audits_kappa_alpha_and_raw_agreement() {
    let tmp = tempfile::tempdir().expect("tmp");
    let alice = audit(
        tmp.path(),
        "alice",
        &[
            (
                "q1",
                "done",
                &["evidence_dropped"],
                Some("evidence_dropped"),
            ),
            ("q2", "done", &["language_prior"], Some("language_prior")),
            ("q3", "skipped", &[], None),
            ("q4", "flagged", &["made_up_id"], Some("made_up_id")),
            ("q5", "todo", &[], None),
        ],
    );
    let bob = audit(
        tmp.path(),
        "bob",
        &[
            (
                "q1",
                "done",
                &["evidence_dropped", "distractor_added"],
                Some("evidence_dropped"),
            ),
            (
                "q2",
                "done",
                &["evidence_dropped"],
                Some("evidence_dropped"),
            ),
            ("q4", "done", &["made_up_id"], Some("made_up_id")),
        ],
    );
    let r = run_json(&[alice.clone(), bob.clone()]);
    // Alice's skipped q3 and untagged todo q5 (with a note) are not annotations.
    assert_eq!(r["files"][0]["units"], 3);
    assert_eq!(r["files"][0]["left_out"], 2);
    let a = &r["agreement"];
    assert_eq!(a["n_units"], 3);
    let pair = &a["pairs"][0];
    assert_eq!(pair["annotators"], json!(["alice", "bob"]));
    assert_eq!(pair["n_units"], 3);
    // evidence_dropped: alice 1,0,0 and bob 1,1,0 on q1,q2,q4: p_o = 2/3,
    // p_e = 1/3*2/3 + 2/3*1/3 = 4/9, kappa = (2/3 - 4/9) / (5/9) = 0.4.
    let ed = &pair["per_tag"]["evidence_dropped"];
    close(&ed["kappa"], 0.4);
    close(&ed["p_o"], 2.0 / 3.0);
    assert_eq!(
        (ed["pos_a"].clone(), ed["pos_b"].clone()),
        (json!(1), json!(2))
    );
    close(&pair["per_tag"]["made_up_id"]["kappa"], 1.0);
    // Primaries q1 (ed, ed), q2 (lp, ed), q4 (mu, mu): n = 6, D_o = 2,
    // D_e = 2 (3*1 + 3*2 + 1*2) = 22, alpha = 1 - 5 * 2 / 22; observed agreement 4/6.
    close(&a["primary_alpha"], 1.0 - 10.0 / 22.0);
    close(&r["primary_percent_agreement"], 400.0 / 6.0);
    assert_eq!(r["unknown_pathways"], json!({"made_up_id": 2}));

    // The readable table says the same.
    let o = frameaudit(&[
        "audit",
        "agreement",
        &alice.display().to_string(),
        &bob.display().to_string(),
    ]);
    let text = stdout(&o);
    assert!(text.contains("Krippendorff's alpha 0.545"), "{text}");
    assert!(text.contains("raw agreement 66.7%"), "{text}");
    assert!(text.contains("alice vs bob: 3 units compared"), "{text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("evidence_dropped"))
        .expect("row");
    assert!(line.contains("0.400") && line.contains("66.7%"), "{text}");
    // Chance-level kappa prints as 0.000, never -0.000.
    assert!(!text.contains("-0.000"), "{text}");
    assert!(
        stderr(&o).contains("pathway ids not in taxonomy \"evidence-pathways\": made_up_id (2)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn one_annotator_twice_or_alone_is_an_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let a = audit(tmp.path(), "alice", &[("q1", "done", &[], Some("x"))]);
    let copy = tmp.path().join("copy.audit.jsonl");
    std::fs::copy(&a, &copy).expect("copy");
    let (a, copy) = (a.display().to_string(), copy.display().to_string());
    let o = frameaudit(&["audit", "agreement", &a, &copy]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("both hold records of annotator \"alice\""),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&["audit", "agreement", &a]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("at least two annotators"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn merge_keeps_every_record_and_agreement_reads_the_merged_audit() {
    let tmp = tempfile::tempdir().expect("tmp");
    let alice = audit(
        tmp.path(),
        "alice",
        &[
            (
                "q1",
                "done",
                &["evidence_dropped"],
                Some("evidence_dropped"),
            ),
            ("q2", "done", &["language_prior"], Some("language_prior")),
        ],
    );
    let bob = audit(
        tmp.path(),
        "bob",
        &[
            (
                "q1",
                "done",
                &["evidence_dropped"],
                Some("evidence_dropped"),
            ),
            (
                "q2",
                "done",
                &["evidence_dropped"],
                Some("evidence_dropped"),
            ),
            (
                "q3",
                "done",
                &["distractor_added"],
                Some("distractor_added"),
            ),
        ],
    );
    let merged = tmp.path().join("merged.audit.jsonl");
    let (a, b, m) = (
        alice.display().to_string(),
        bob.display().to_string(),
        merged.display().to_string(),
    );
    let o = frameaudit(&["audit", "merge", &a, &b, "-o", &m]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("merged 5 records of 2 annotators into")
            && stdout(&o).contains("2 units by two or more annotators, 1 of them in disagreement"),
        "{}",
        stdout(&o)
    );
    // Both of q2's records are in the file, side by side: nothing was resolved.
    let text = std::fs::read_to_string(&merged).expect("merged");
    let q2: Vec<&str> = text.lines().filter(|l| l.contains("\"q2\"")).collect();
    assert_eq!(q2.len(), 2, "{text}");
    assert!(
        q2[0].contains("\"alice\"") && q2[0].contains("language_prior"),
        "{text}"
    );
    assert!(
        q2[1].contains("\"bob\"") && q2[1].contains("evidence_dropped"),
        "{text}"
    );

    // Agreement on the merged audit is agreement on the two files.
    let from_files = run_json(&[alice.clone(), bob.clone()]);
    let from_merged = run_json(std::slice::from_ref(&merged));
    assert_eq!(from_files["agreement"], from_merged["agreement"]);
    // Export lists every record with its annotator.
    let o = frameaudit(&["audit", "export", &m]);
    let rows: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("row"))
        .collect();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows.iter().filter(|r| r["annotator"] == "bob").count(), 3);
    // The merged audit cannot overwrite an input, and an input cannot be merged twice.
    let o = frameaudit(&["audit", "merge", &a, &b, "-o", &a]);
    assert!(
        !o.status.success() && stderr(&o).contains("is an input"),
        "{}",
        stderr(&o)
    );
    let again = tmp.path().join("again.jsonl").display().to_string();
    let o = frameaudit(&["audit", "merge", &m, &a, "-o", &again]);
    assert!(
        !o.status.success() && stderr(&o).contains("both hold records of annotator \"alice\""),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&["audit", "summary", &m]);
    assert!(stdout(&o).contains("(merged)"), "{}", stdout(&o));
}

/// `report --annotations` on what `audit export` writes gives `audit agreement`'s numbers:
/// the export lists every record, and a skipped one, or a todo one without pathways, is no
/// annotation on either path (the report used to count them: α 0.192 over 4 units against
/// 0.231 over 3).
#[test]
fn report_on_an_export_agrees_with_audit_agreement() {
    let tmp = tempfile::tempdir().expect("tmp");
    let alice = audit(
        tmp.path(),
        "alice",
        &[
            (
                "q1",
                "done",
                &["evidence_dropped"],
                Some("evidence_dropped"),
            ),
            ("q2", "done", &["language_prior"], Some("language_prior")),
            ("q3", "skipped", &[], None),
            ("q4", "todo", &[], None),
            ("q5", "flagged", &["item_defect"], Some("item_defect")),
        ],
    );
    let bob = audit(
        tmp.path(),
        "bob",
        &[
            (
                "q1",
                "done",
                &["evidence_dropped"],
                Some("evidence_dropped"),
            ),
            (
                "q2",
                "done",
                &["evidence_dropped"],
                Some("evidence_dropped"),
            ),
            ("q3", "skipped", &[], None),
            ("q4", "todo", &[], None),
            ("q5", "todo", &["item_defect"], Some("item_defect")),
        ],
    );
    let from_files = run_json(&[alice.clone(), bob.clone()]);
    let export: String = [&alice, &bob]
        .iter()
        .map(|p| {
            let o = frameaudit(&["audit", "export", &p.display().to_string()]);
            assert!(o.status.success(), "{}", stderr(&o));
            stdout(&o)
        })
        .collect();
    assert_eq!(
        export.lines().count(),
        10,
        "every record is exported:\n{export}"
    );
    let anns = tmp.path().join("annotations.jsonl");
    std::fs::write(&anns, &export).expect("write");
    let demo = common::repo().join("fixtures/demo").display().to_string();
    let o = frameaudit(&[
        "report",
        &demo,
        "--annotations",
        &anns.display().to_string(),
        "--json",
        "--no-cache",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(report["agreement"], from_files["agreement"]);
    assert_eq!(report["agreement"]["n_units"], 3, "{}", report["agreement"]);

    // A status that is none is said, naming the line and field.
    std::fs::write(&anns, export.replacen("\"done\"", "\"finished\"", 1)).expect("write");
    let o = frameaudit(&[
        "report",
        &demo,
        "--annotations",
        &anns.display().to_string(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(":1:") && stderr(&o).contains("status"),
        "{}",
        stderr(&o)
    );
}

/// A merged audit is annotations: `audit merge --force` does not replace it (issue 37), and
/// the help and the error say so, and how to make it again.
#[test]
fn a_merged_audit_is_made_again_only_once_removed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let alice = audit(
        tmp.path(),
        "alice",
        &[("q1", "done", &["evidence_dropped"], None)],
    );
    let bob = audit(
        tmp.path(),
        "bob",
        &[("q1", "done", &["language_prior"], None)],
    );
    let (a, b) = (alice.display().to_string(), bob.display().to_string());
    let m = tmp.path().join("merged.jsonl").display().to_string();
    let o = frameaudit(&["audit", "merge", &a, &b, "-o", &m]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = frameaudit(&["audit", "merge", &a, &b, "-o", &m, "--force"]);
    assert!(
        !o.status.success()
            && stderr(&o).contains("a merged audit")
            && stderr(&o).contains("remove it first"),
        "{}",
        stderr(&o)
    );
    let help = stdout(&frameaudit(&["audit", "merge", "--help"]));
    assert!(
        help.contains("merged ones included") && !help.contains("Replace an existing merged audit"),
        "{help}"
    );
}

/// `audit summary` of files made on other data counts their records together, and says so
/// as `merge` and `agreement` do (it pooled them without a word).
#[test]
fn summary_warns_of_files_made_on_other_data() {
    let tmp = tempfile::tempdir().expect("tmp");
    let alice = audit(
        tmp.path(),
        "alice",
        &[("q1", "done", &["evidence_dropped"], None)],
    );
    let bob = audit(
        tmp.path(),
        "bob",
        &[("q1", "done", &["language_prior"], None)],
    );
    let text = std::fs::read_to_string(&bob).expect("read");
    std::fs::write(&bob, text.replace("sha256:x", "sha256:other")).expect("write");
    let (a, b) = (alice.display().to_string(), bob.display().to_string());
    let o = frameaudit(&["audit", "summary", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Pathways: 2 records in 2 files"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("bob.audit.jsonl was made on other data (sha256:other) than")
            && stderr(&o).contains("alice.audit.jsonl (sha256:x)"),
        "{}",
        stderr(&o)
    );
    // Files of one dataset: no warning.
    let o = frameaudit(&["audit", "summary", &a]);
    assert_eq!(stderr(&o), "", "{}", stderr(&o));
}
