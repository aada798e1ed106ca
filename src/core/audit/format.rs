//! The line format of an audit file (docs/formats.md §2): the header line and one JSON
//! object per event, written from and parsed into the types of `record`. Parsing says
//! everything wrong with a line at once, so one warning tells the annotator all of it.

use serde::{Deserialize, Serialize};

use super::error::LineError;
use super::record::{AuditRecord, Event, Status, UnitKey};
use crate::core::analysis::noise::Harm;
use crate::core::load::json::{J, describe_json_error, is_missing};

/// The schema string of the header line of an audit file.
pub const AUDIT_SCHEMA: &str = "frameaudit/audit@1";

/// The header line of an audit file: which dataset, annotator and taxonomy it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditHeader {
    /// Name of the dataset audited.
    pub dataset_name: String,
    /// [`fingerprint`](super::fingerprint()) of the cells the audit was made on.
    pub fingerprint: String,
    /// Who audits.
    pub annotator: String,
    /// Id of the evidence-pathway taxonomy.
    pub taxonomy_id: String,
    /// Version of that taxonomy.
    pub taxonomy_version: u32,
    /// When the file was created (RFC 3339).
    pub created_at: String,
    /// For an adjudicated audit, the audits it settles (as named to `review`); empty for
    /// an annotator's own audit, and then not written.
    pub adjudicates: Vec<String>,
}

#[derive(Serialize)]
struct HeaderLine<'a> {
    schema: &'a str,
    dataset: DatasetRef<'a>,
    annotator: &'a str,
    taxonomy: TaxonomyRef<'a>,
    created_at: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    adjudicates: &'a [String],
}

#[derive(Serialize)]
struct DatasetRef<'a> {
    name: &'a str,
    fingerprint: &'a str,
}

#[derive(Serialize)]
struct TaxonomyRef<'a> {
    id: &'a str,
    version: u32,
}

impl AuditHeader {
    /// A header for tests.
    #[cfg(test)]
    pub(crate) fn for_tests(annotator: &str) -> AuditHeader {
        AuditHeader {
            dataset_name: "grid".into(),
            fingerprint: "sha256:00".into(),
            annotator: annotator.into(),
            taxonomy_id: "evidence-pathways".into(),
            taxonomy_version: 1,
            created_at: "2026-11-29T12:00:00Z".into(),
            adjudicates: Vec::new(),
        }
    }

    /// The header as its line in the file (without the newline).
    pub fn to_line(&self) -> String {
        let line = HeaderLine {
            schema: AUDIT_SCHEMA,
            dataset: DatasetRef {
                name: &self.dataset_name,
                fingerprint: &self.fingerprint,
            },
            annotator: &self.annotator,
            taxonomy: TaxonomyRef {
                id: &self.taxonomy_id,
                version: self.taxonomy_version,
            },
            created_at: &self.created_at,
            adjudicates: &self.adjudicates,
        };
        // Serialising plain strings and integers into memory cannot fail.
        crate::core::text::json_to_string(&line).unwrap_or_default()
    }
}

#[derive(Serialize)]
struct StateLine<'a> {
    at: &'a str,
    op: &'a str,
    model: &'a str,
    benchmark: &'a str,
    item_id: &'a str,
    from: &'a str,
    to: &'a str,
    status: Status,
    pathways: &'a [String],
    primary: Option<&'a str>,
    evidence_frames: &'a [u64],
    note: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    harm: Option<crate::core::analysis::noise::Harm>,
}

#[derive(Serialize)]
struct VisitLine<'a> {
    at: &'a str,
    op: &'a str,
    model: &'a str,
    benchmark: &'a str,
    item_id: &'a str,
}
#[derive(Serialize)]
struct DataLine<'a> {
    at: &'a str,
    op: &'a str,
    fingerprint: &'a str,
}

impl Event {
    /// The event as its line in the file (without the newline).
    pub fn to_line(&self) -> String {
        let json = match self {
            Event::Set(r) | Event::Undo(r) | Event::Redo(r) => {
                let key = &r.key;
                crate::core::text::json_to_string(&StateLine {
                    at: &r.at,
                    op: self.op(),
                    model: &key.model,
                    benchmark: &key.benchmark,
                    item_id: &key.item_id,
                    from: &r.from,
                    to: &r.to,
                    status: r.status,
                    pathways: &r.pathways,
                    primary: r.primary.as_deref(),
                    evidence_frames: &r.evidence_frames,
                    note: &r.note,
                    harm: r.harm,
                })
            }
            Event::Visit { key, at } => crate::core::text::json_to_string(&VisitLine {
                at,
                op: self.op(),
                model: &key.model,
                benchmark: &key.benchmark,
                item_id: &key.item_id,
            }),
            Event::Data { fingerprint, at } => crate::core::text::json_to_string(&DataLine {
                at,
                op: self.op(),
                fingerprint,
            }),
        };
        // Serialising strings, integers and lists of them into memory cannot fail.
        json.unwrap_or_default()
    }
}

/// Parses the header line; on failure, the field at fault (if any) and what is wrong.
pub(super) fn parse_header(text: &[u8]) -> Result<AuditHeader, (Option<String>, String)> {
    let whole = |msg: String| (None, msg);
    let text = std::str::from_utf8(text)
        .map_err(|_| whole("the line is not valid UTF-8".into()))?
        .trim();
    if text.is_empty() {
        return Err(whole("the first line is empty".into()));
    }
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| whole(format!("malformed JSON: {}", describe_json_error(&e))))?;
    let Some(obj) = v.as_object() else {
        return Err(whole(format!(
            "expected a JSON object, found {}",
            crate::core::text::json_kind(&v)
        )));
    };
    let field = |name: &str, msg: String| (Some(name.to_string()), msg);
    // As an event line with a field twice is refused, so is a header: the last of the two
    // would silently win.
    if let Some(twice) = crate::core::load::json::duplicate_key(text) {
        return Err(field(
            &twice,
            "appears twice in the header; a header names each field once".into(),
        ));
    }
    let get_str =
        |o: &serde_json::Map<String, serde_json::Value>, key: &str, path: &str| match o.get(key) {
            None => Err(field(path, "required field is missing".into())),
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(field(
                path,
                format!(
                    "expected a string, found {}",
                    crate::core::text::json_kind(other)
                ),
            )),
        };
    let get_obj = |key: &str| match obj.get(key) {
        None => Err(field(key, "required field is missing".into())),
        Some(serde_json::Value::Object(o)) => Ok(o),
        Some(other) => Err(field(
            key,
            format!(
                "expected an object, found {}",
                crate::core::text::json_kind(other)
            ),
        )),
    };
    let schema = get_str(obj, "schema", "schema")?;
    if schema != AUDIT_SCHEMA {
        let msg = match schema.strip_prefix("frameaudit/audit@") {
            Some(v) => format!(
                "the file is {schema:?}, written by another version of frameaudit; this one reads {AUDIT_SCHEMA:?} (audit@{v} is not supported)"
            ),
            None => format!("expected {AUDIT_SCHEMA:?}, found {schema:?}: not an audit file"),
        };
        return Err(field("schema", msg));
    }
    let dataset = get_obj("dataset")?;
    let dataset_name = get_str(dataset, "name", "dataset.name")?;
    let fingerprint = get_str(dataset, "fingerprint", "dataset.fingerprint")?;
    let annotator = get_str(obj, "annotator", "annotator")?;
    if annotator.is_empty() {
        return Err(field("annotator", "must be a non-empty string".into()));
    }
    let taxonomy = get_obj("taxonomy")?;
    let taxonomy_id = get_str(taxonomy, "id", "taxonomy.id")?;
    let taxonomy_version = match taxonomy.get("version") {
        None => {
            return Err(field(
                "taxonomy.version",
                "required field is missing".into(),
            ));
        }
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                field(
                    "taxonomy.version",
                    format!("expected an integer >= 0, found {v}"),
                )
            })?,
    };
    let created_at = get_str(obj, "created_at", "created_at")?;
    let adjudicates = match obj.get("adjudicates") {
        None => Vec::new(),
        Some(serde_json::Value::Array(a)) if a.iter().all(|v| v.is_string()) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(other) => {
            return Err(field(
                "adjudicates",
                format!(
                    "expected an array of strings, found {}",
                    crate::core::text::json_kind(other)
                ),
            ));
        }
    };
    Ok(AuditHeader {
        dataset_name,
        fingerprint,
        annotator,
        taxonomy_id,
        taxonomy_version,
        created_at,
        adjudicates,
    })
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(borrow, default)]
    at: J<'a>,
    #[serde(borrow, default)]
    op: J<'a>,
    #[serde(borrow, default)]
    model: J<'a>,
    #[serde(borrow, default)]
    benchmark: J<'a>,
    #[serde(borrow, default)]
    item_id: J<'a>,
    #[serde(borrow, default)]
    from: J<'a>,
    #[serde(borrow, default)]
    to: J<'a>,
    #[serde(borrow, default)]
    status: J<'a>,
    #[serde(borrow, default)]
    pathways: J<'a>,
    #[serde(borrow, default)]
    primary: J<'a>,
    #[serde(borrow, default)]
    evidence_frames: J<'a>,
    #[serde(borrow, default)]
    note: J<'a>,
    #[serde(borrow, default)]
    harm: J<'a>,
    #[serde(borrow, default)]
    fingerprint: J<'a>,
}

/// Collects every problem of one event line, so one warning says all that is wrong.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, field: &str, msg: impl std::fmt::Display) {
        self.0.push(format!("field `{field}`: {msg}"));
    }

    fn required(&mut self, field: &str, v: &J<'_>) -> String {
        match v {
            J::Str(s) if !s.is_empty() => s.to_string(),
            J::Str(_) => {
                self.add(field, "must be a non-empty string");
                String::new()
            }
            v if is_missing(v) => {
                self.add(field, "required field is missing");
                String::new()
            }
            other => {
                self.add(field, format!("expected a string, found {}", other.kind()));
                String::new()
            }
        }
    }

    /// A required string that may be empty.
    fn string(&mut self, field: &str, v: &J<'_>) -> String {
        match v {
            J::Str(s) => s.to_string(),
            v if is_missing(v) => {
                self.add(field, "required field is missing");
                String::new()
            }
            other => {
                self.add(field, format!("expected a string, found {}", other.kind()));
                String::new()
            }
        }
    }

    fn strings(&mut self, field: &str, v: &J<'_>) -> Vec<String> {
        match v {
            J::Missing | J::Null => Vec::new(),
            J::Arr(a) if a.iter().all(|x| matches!(x, J::Str(_))) => {
                a.iter().filter_map(J::as_str).map(str::to_owned).collect()
            }
            J::Arr(_) => {
                self.add(
                    field,
                    "expected an array of strings, found other values in it",
                );
                Vec::new()
            }
            other => {
                self.add(
                    field,
                    format!("expected an array of strings, found {}", other.kind()),
                );
                Vec::new()
            }
        }
    }

    fn frames(&mut self, field: &str, v: &J<'_>) -> Vec<u64> {
        let as_u64 = |x: &J<'_>| x.as_integer().and_then(|i| u64::try_from(i).ok());
        match v {
            J::Missing | J::Null => Vec::new(),
            J::Arr(a) => match a.iter().map(as_u64).collect::<Option<Vec<u64>>>() {
                Some(f) => f,
                None => {
                    self.add(
                        field,
                        "expected an array of integers >= 0, found other values in it",
                    );
                    Vec::new()
                }
            },
            other => {
                self.add(
                    field,
                    format!("expected an array of integers >= 0, found {}", other.kind()),
                );
                Vec::new()
            }
        }
    }
}

/// What is doubtful in an event that reads: a record's `primary` that is not among its
/// `pathways` (the primary is one of the tags), or a record that names no transition
/// (`from` or `to` empty: it is on no harmful transition, so it counts as an earlier
/// record). The line is still read; the doubts are said beside it.
pub(super) fn doubts(event: &Event) -> Vec<String> {
    let (Event::Set(r) | Event::Undo(r) | Event::Redo(r)) = event else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(p) = &r.primary
        && !r.pathways.contains(p)
    {
        out.push(format!(
            "field `primary`: {p:?} is not among the record's pathways {:?}",
            r.pathways
        ));
    }
    if r.from.is_empty() || r.to.is_empty() {
        out.push(format!(
            "field `{}`: empty, so the record is on no transition (it counts as an earlier record, not as done)",
            if r.from.is_empty() { "from" } else { "to" }
        ));
    }
    out
}

/// Parses one event line (already trimmed).
pub(super) fn parse_event(text: &[u8]) -> Result<Event, LineError> {
    if text.first() != Some(&b'{') {
        return Err(match serde_json::from_slice::<J>(text) {
            Ok(v) => LineError::Invalid(format!(
                "expected a JSON object (one audit event), found {}",
                v.kind()
            )),
            Err(e) => LineError::Malformed(format!("malformed JSON: {}", describe_json_error(&e))),
        });
    }
    let text = std::str::from_utf8(text)
        .map_err(|_| LineError::Malformed("malformed JSON: the line is not valid UTF-8".into()))?;
    let raw: RawEvent = serde_json::from_str(text).map_err(|e| {
        let msg = format!("malformed JSON: {}", describe_json_error(&e));
        // A duplicate key is well-formed JSON, only not a valid event.
        if e.classify() == serde_json::error::Category::Data {
            LineError::Invalid(msg)
        } else {
            LineError::Malformed(msg)
        }
    })?;
    let mut p = Problems::default();
    let op = p.required("op", &raw.op);
    let at = p.required("at", &raw.at);
    if op == "data" {
        let fingerprint = p.required("fingerprint", &raw.fingerprint);
        return match p.0.is_empty() {
            true => Ok(Event::Data { fingerprint, at }),
            false => Err(LineError::Invalid(p.0.join("; "))),
        };
    }
    let key = UnitKey {
        model: p.required("model", &raw.model),
        benchmark: p.required("benchmark", &raw.benchmark),
        item_id: p.required("item_id", &raw.item_id),
    };
    let event = match op.as_str() {
        "visit" => Some(Event::Visit { key, at }),
        "set" | "undo" | "redo" => {
            // A record written without a transition must still read back.
            let from = p.string("from", &raw.from);
            let to = p.string("to", &raw.to);
            let status = p.required("status", &raw.status);
            let status = Status::parse(&status).unwrap_or_else(|| {
                if !status.is_empty() {
                    p.add(
                        "status",
                        format!(
                            "expected todo, done, skipped or flagged, found {:?}",
                            status
                        ),
                    );
                }
                Status::Todo
            });
            let pathways = p.strings("pathways", &raw.pathways);
            let primary = match &raw.primary {
                J::Missing | J::Null => None,
                J::Str(s) if s.is_empty() => None,
                J::Str(s) => Some(s.to_string()),
                other => {
                    p.add(
                        "primary",
                        format!("expected a string or null, found {}", other.kind()),
                    );
                    None
                }
            };
            let evidence_frames = p.frames("evidence_frames", &raw.evidence_frames);
            let note = match &raw.note {
                J::Missing | J::Null => String::new(),
                J::Str(s) => s.to_string(),
                other => {
                    p.add(
                        "note",
                        format!("expected a string or null, found {}", other.kind()),
                    );
                    String::new()
                }
            };
            let harm = match &raw.harm {
                J::Missing | J::Null => None,
                J::Str(s) => {
                    let h = Harm::ALL.into_iter().find(|h| h.label() == *s);
                    if h.is_none() {
                        p.add(
                            "harm",
                            format!("expected stable, unjudged or lottery, found {s:?}"),
                        );
                    }
                    h
                }
                other => {
                    p.add(
                        "harm",
                        format!("expected a string or null, found {}", other.kind()),
                    );
                    None
                }
            };
            let r = AuditRecord {
                key,
                from,
                to,
                status,
                pathways,
                primary,
                evidence_frames,
                note,
                at,
                harm,
            };
            Some(match op.as_str() {
                "set" => Event::Set(r),
                "undo" => Event::Undo(r),
                _ => Event::Redo(r),
            })
        }
        "" => None,
        other => {
            p.add(
                "op",
                format!("unknown operation {other:?} (expected set, undo, redo, visit or data)"),
            );
            None
        }
    };
    match event {
        Some(e) if p.0.is_empty() => Ok(e),
        _ => Err(LineError::Invalid(p.0.join("; "))),
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> AuditHeader {
        AuditHeader {
            dataset_name: "grid".into(),
            fingerprint: "sha256:00".into(),
            annotator: "alice".into(),
            taxonomy_id: "evidence-pathways".into(),
            taxonomy_version: 1,
            created_at: "2026-11-29T12:00:00Z".into(),
            adjudicates: Vec::new(),
        }
    }

    #[test]
    fn audit_header_line_matches_formats() {
        assert_eq!(
            header().to_line(),
            r#"{"schema":"frameaudit/audit@1","dataset":{"name":"grid","fingerprint":"sha256:00"},"annotator":"alice","taxonomy":{"id":"evidence-pathways","version":1},"created_at":"2026-11-29T12:00:00Z"}"#
        );
        assert_eq!(
            parse_header(header().to_line().as_bytes()).expect("valid"),
            header()
        );
    }

    #[test]
    fn audit_bad_header_names_the_field() {
        let line = header()
            .to_line()
            .replace("\"version\":1", "\"version\":\"1\"");
        let (field, msg) = parse_header(line.as_bytes()).expect_err("bad");
        assert_eq!(field.as_deref(), Some("taxonomy.version"));
        assert!(msg.contains("expected an integer"), "{msg}");
        let line = header().to_line().replace("audit@1", "audit@2");
        let (field, _) = parse_header(line.as_bytes()).expect_err("bad");
        assert_eq!(field.as_deref(), Some("schema"));
    }

    #[test]
    fn audit_event_lines_round_trip() {
        let r = AuditRecord {
            key: UnitKey::new("m", "b", "q1"),
            from: "16f".into(),
            to: "32f".into(),
            status: Status::Done,
            pathways: vec!["evidence_dropped".into()],
            primary: Some("evidence_dropped".into()),
            evidence_frames: vec![2610],
            note: "knife \"here\"\n".into(),
            at: "2026-11-29T12:00:00Z".into(),
            harm: None,
        };
        let e = Event::Set(r.clone());
        assert_eq!(
            e.to_line(),
            r#"{"at":"2026-11-29T12:00:00Z","op":"set","model":"m","benchmark":"b","item_id":"q1","from":"16f","to":"32f","status":"done","pathways":["evidence_dropped"],"primary":"evidence_dropped","evidence_frames":[2610],"note":"knife \"here\"\n"}"#
        );
        for e in [
            e,
            Event::Undo(r.clone()),
            Event::Redo(r.clone()),
            Event::Visit {
                key: r.key.clone(),
                at: r.at.clone(),
            },
        ] {
            let back = parse_event(e.to_line().as_bytes()).expect("valid");
            assert_eq!(back, e);
        }
        assert_eq!(
            Event::Visit {
                key: r.key,
                at: r.at
            }
            .to_line(),
            r#"{"at":"2026-11-29T12:00:00Z","op":"visit","model":"m","benchmark":"b","item_id":"q1"}"#
        );
    }

    #[test]
    fn audit_invalid_event_says_what_is_wrong() {
        let line = br#"{"at":"t","op":"set","model":"m","benchmark":"b","item_id":"q","from":"a","to":"b","status":"maybe","evidence_frames":[-1],"harm":"sure"}"#;
        let Err(LineError::Invalid(msg)) = parse_event(line) else {
            panic!("expected invalid");
        };
        assert!(msg.contains("field `status`"), "{msg}");
        assert!(msg.contains("field `evidence_frames`"), "{msg}");
        assert!(msg.contains("field `harm`"), "{msg}");
        // A record with its harm round-trips, and one without writes no `harm`.
        let mut r = AuditRecord::blank(UnitKey::new("m", "b", "q"), "8f", "16f", "t");
        assert!(!Event::Set(r.clone()).to_line().contains("harm"));
        r.harm = Some(Harm::Lottery);
        let line = Event::Set(r.clone()).to_line();
        assert!(line.contains(r#""harm":"lottery""#), "{line}");
        assert_eq!(parse_event(line.as_bytes()).expect("valid"), Event::Set(r));
        let Err(LineError::Malformed(_)) = parse_event(br#"{"at":"t","op":"se"#) else {
            panic!("expected malformed");
        };
        let Err(LineError::Invalid(msg)) =
            parse_event(br#"{"at":"t","op":"wipe","model":"m","benchmark":"b","item_id":"q"}"#)
        else {
            panic!("expected invalid");
        };
        assert!(msg.contains("unknown operation \"wipe\""), "{msg}");
    }
}
