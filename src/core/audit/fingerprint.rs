//! The dataset fingerprint of an audit header: SHA-256 over a canonical serialisation of
//! the cells, so an audit is tied to the exact answers it was made on, whatever order the
//! input files listed them in.

use sha2::{Digest, Sha256};

use crate::core::matrix::ResponseMatrix;

/// Names the serialisation, so a future change of it cannot collide with this one.
const VERSION: &[u8] = b"frameaudit/cells-fingerprint@1";

/// `"sha256:<hex>"` over the cells of `m` in canonical order.
///
/// Cells are visited protocol by protocol and model by model in id order (ids are in name
/// order), and within each (protocol, model) by (item, configuration). The protocol and
/// model name are written once at the head of their group; each cell then gives its
/// benchmark, item id, configuration name, frames, budget bits, pixels, value bits (one
/// NaN for invalid cells) and normalised prediction. Left out: the cells of the dataset's
/// `interventions/` folder (a sampling intervention's re-run, docs/intervention.md §6) and
/// replicates (docs/measures.md §16). Neither changes a trajectory an annotator judged (a
/// record keeps whether its harm survived the replicates as it was when tagged, `harm`), so
/// importing a re-run or a noise floor after annotating keeps the audits on their data.
/// Strings are length-prefixed and optional values tagged, so no two different matrices
/// serialise alike.
pub fn fingerprint(m: &ResponseMatrix) -> String {
    let mut hasher = Sha256::new();
    // Many small `update` calls cost more than the hashing: batch into a buffer.
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    put_str(&mut buf, VERSION);
    // Cells read back from a re-run (`interventions/`) are left out: they judge the audits'
    // transitions, they do not change them.
    let intervention: Vec<bool> = m
        .files
        .iter()
        .map(|f| {
            f.parent().and_then(|d| d.file_name())
                == Some(std::ffi::OsStr::new(
                    crate::core::dataset::INTERVENTIONS_DIR,
                ))
        })
        .collect();
    for p in 0..m.protocols.len() as u32 {
        for mo in 0..m.models.len() as u32 {
            // The group's head is written with its first cell, so a group of intervention
            // cells alone leaves no trace.
            let mut head = false;
            for &c in m.group(p, mo) {
                let c = c as usize;
                if intervention
                    .get(m.cell_file.get(c) as usize)
                    .copied()
                    .unwrap_or(false)
                {
                    continue;
                }
                if !head {
                    head = true;
                    buf.push(b'G');
                    put_str(&mut buf, m.protocols.name(p).as_bytes());
                    put_str(&mut buf, m.models.name(mo).as_bytes());
                }
                let item = m.item(m.cell_item.get(c));
                let cfg = m.config(m.cell_config.get(c));
                buf.push(b'C');
                put_str(&mut buf, m.benchmarks.name(item.benchmark).as_bytes());
                put_str(&mut buf, item.id.as_bytes());
                put_str(&mut buf, cfg.name.as_bytes());
                buf.extend_from_slice(&cfg.frames.to_le_bytes());
                buf.extend_from_slice(&cfg.budget.to_bits().to_le_bytes());
                put_opt_u64(&mut buf, cfg.pixels);
                let v = m.cell_value.get(c);
                let v = if v.is_nan() { f64::NAN } else { v };
                buf.extend_from_slice(&v.to_bits().to_le_bytes());
                match m.text(m.cell_pred_norm.get(c)) {
                    Some(t) => {
                        buf.push(1);
                        put_str(&mut buf, t.as_bytes());
                    }
                    None => buf.push(0),
                }
                if buf.len() >= 1 << 15 {
                    hasher.update(&buf);
                    buf.clear();
                }
            }
        }
    }
    hasher.update(&buf);
    let digest = hasher.finalize();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.iter() {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn put_str(buf: &mut Vec<u8>, s: &[u8]) {
    buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
    buf.extend_from_slice(s);
}

fn put_opt_u64(buf: &mut Vec<u8>, v: Option<u64>) {
    match v {
        Some(x) => {
            buf.push(1);
            buf.extend_from_slice(&x.to_le_bytes());
        }
        None => buf.push(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::load::cells::read_cells;
    use crate::core::matrix::MatrixBuilder;

    fn load(text: &str) -> ResponseMatrix {
        let mut b = MatrixBuilder::new();
        let file = b.add_file(std::path::Path::new("t.jsonl"));
        read_cells(text.as_bytes(), None, &mut b, &file).expect("io");
        match b.finish() {
            Ok((m, _)) => m,
            Err(d) => panic!("rejected: {d}"),
        }
    }

    const LINES: [&str; 6] = [
        r#"{"model":"M","item_id":"q1","config":"8f","frames":8,"pred":"a","gold":"A"}"#,
        r#"{"model":"M","item_id":"q1","config":"16f","frames":16,"pixels":1000,"pred":"B","gold":"A"}"#,
        r#"{"model":"N","item_id":"q1","config":"8f","frames":8,"pred":"A","gold":"A"}"#,
        r#"{"model":"M","item_id":"q2","config":"8f","frames":8,"pred":null,"gold":"C"}"#,
        r#"{"model":"N","benchmark":"other","item_id":"q2","config":"8f","frames":8,"pred":"C","gold":"C"}"#,
        r#"{"model":"M","item_id":"q2","config":"16f","frames":16,"pixels":1000,"pred":"C","gold":"C"}"#,
    ];

    #[test]
    fn audit_fingerprint_ignores_input_order_and_sees_one_answer() {
        let fp = fingerprint(&load(&LINES.join("\n")));
        assert!(fp.starts_with("sha256:") && fp.len() == 7 + 64, "{fp}");
        let mut rev = LINES;
        rev.reverse();
        assert_eq!(fingerprint(&load(&rev.join("\n"))), fp);
        let mut shuffled = LINES;
        shuffled.swap(0, 4);
        shuffled.swap(1, 3);
        assert_eq!(fingerprint(&load(&shuffled.join("\n"))), fp);

        let mut changed = LINES;
        changed[1] = r#"{"model":"M","item_id":"q1","config":"16f","frames":16,"pixels":1000,"pred":"C","gold":"A"}"#;
        assert_ne!(fingerprint(&load(&changed.join("\n"))), fp);
        // The same correctness with another wrong letter is still another answer.
        changed[1] = r#"{"model":"M","item_id":"q1","config":"16f","frames":16,"pixels":1000,"pred":"D","gold":"A"}"#;
        let other = fingerprint(&load(&changed.join("\n")));
        assert_ne!(other, fp);
        // A case or whitespace change of the prediction is not (it is normalised away).
        changed[1] = r#"{"model":"M","item_id":"q1","config":"16f","frames":16,"pixels":1000,"pred":" d ","gold":"A"}"#;
        assert_eq!(fingerprint(&load(&changed.join("\n"))), other);
    }

    /// A re-run's intervention cells (`interventions/`) are not part of what an audit
    /// judges: a dataset with them has the fingerprint it had without them.
    #[test]
    fn audit_fingerprint_leaves_the_intervention_cells_out() {
        let tmp = tempfile::tempdir().expect("tmp");
        let ds = tmp.path().join("ds");
        std::fs::create_dir_all(&ds).expect("mkdir");
        std::fs::write(ds.join("cells.jsonl"), LINES.join("\n")).expect("cells");
        let load_dir = || {
            let d = crate::core::dataset::load_dataset(&ds, None).expect("dataset");
            fingerprint(&d.matrix)
        };
        let before = load_dir();
        std::fs::create_dir_all(ds.join("interventions")).expect("mkdir");
        std::fs::write(
            ds.join("interventions/intervention-nested.jsonl"),
            r#"{"model":"M","item_id":"q1","config":"16f","frames":16,"pixels":1000,"pred":"A","gold":"A","protocol":"intervention:nested"}"#,
        )
        .expect("interventions");
        assert_eq!(load_dir(), before);
        // The same cell in the cells file itself is data the audits are made on.
        let mut lines: Vec<&str> = LINES.to_vec();
        lines.push(r#"{"model":"M","item_id":"q1","config":"16f","frames":16,"pixels":1000,"pred":"A","gold":"A","protocol":"intervention:nested"}"#);
        std::fs::write(ds.join("cells.jsonl"), lines.join("\n")).expect("cells");
        std::fs::remove_dir_all(ds.join("interventions")).expect("rm");
        assert_ne!(load_dir(), before);
    }

    /// Replicates are not part of what an audit judges: adding them, or changing one,
    /// leaves the fingerprint as it was (a noise floor added later keeps the audits).
    #[test]
    fn audit_fingerprint_leaves_the_replicates_out() {
        let fp = fingerprint(&load(&LINES.join("\n")));
        let rep = |pred: &str, name: &str, nuisance: &str| {
            format!(
                r#"{{"model":"M","item_id":"q1","config":"8f","frames":8,"pred":"{pred}","gold":"A","replicate":"{name}","nuisance":"{nuisance}"}}"#
            )
        };
        let with = |extra: &[String]| {
            let mut lines: Vec<String> = LINES.iter().map(|l| l.to_string()).collect();
            lines.extend_from_slice(extra);
            fingerprint(&load(&lines.join("\n")))
        };
        assert_eq!(with(&[rep("A", "r1", "rerun")]), fp);
        assert_eq!(
            with(&[rep("B", "r1", "rerun"), rep("B", "p1", "phase")]),
            fp
        );
    }
}
