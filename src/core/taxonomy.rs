//! The evidence-pathway taxonomy: the tags an annotator gives a harmful transition. It is
//! data (`assets/taxonomy.json`, or a file of the user's), so a project can change it
//! without a new build.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::core::diag::{Diagnostics, LoadError};
use crate::core::load::every::{ShapeProblem, read_each};
use crate::core::load::json::start_of;

/// The bundled default taxonomy.
pub const DEFAULT_TAXONOMY: &str = include_str!("../../assets/taxonomy.json");

/// One evidence pathway.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Pathway {
    /// The id audit records tag with.
    pub id: String,
    /// The short name shown.
    pub label: String,
    /// A shorter name still, for narrow screens (80x24 shows the pathways in two columns
    /// of about 16 characters); the label where none is given.
    #[serde(default)]
    pub short: Option<String>,
    /// What the pathway means, for the annotator.
    pub description: String,
    /// The key that toggles it (one character).
    pub key: String,
}

impl Pathway {
    /// The name shown where the label does not fit: `short`, else the label.
    pub fn short_label(&self) -> &str {
        self.short
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or(&self.label)
    }
}

/// A versioned set of pathways, in the order the annotator sees them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Taxonomy {
    /// The taxonomy's id, written in audit headers.
    pub id: String,
    /// Its version, written in audit headers.
    pub version: u32,
    /// The pathways, in the order shown.
    pub pathways: Vec<Pathway>,
}

impl Taxonomy {
    /// Parses and checks a taxonomy: ids and keys present and unique, keys one character.
    /// Every problem of the file is said, each at its line and field: a field of the wrong
    /// type does not hide the others.
    pub fn parse(text: &str, path: &Path) -> Result<Taxonomy, LoadError> {
        let file: Arc<Path> = Arc::from(path);
        let mut diags = Diagnostics::default();
        let whole = serde_json::from_str::<Taxonomy>(text);
        if whole.is_err() {
            for p in shape_problems(text) {
                let field = (!p.field.is_empty()).then_some(p.field.as_str());
                let msg = format!(
                    "malformed taxonomy: {} (column {})",
                    plain(&p.why),
                    p.column
                );
                diags.error(&file, Some(p.line as u64), field, msg);
            }
        }
        if whole.as_ref().is_ok_and(|t| t.pathways.is_empty()) {
            diags.error(
                &file,
                None,
                Some("pathways"),
                "a taxonomy needs at least one pathway".into(),
            );
        }
        // The pathways that read, each with its place in the list and its line, checked
        // also when others do not read.
        let read: Vec<(usize, u64, Pathway)> = pathway_texts(text)
            .into_iter()
            .enumerate()
            .filter_map(|(i, raw)| {
                let p = serde_json::from_str::<Pathway>(raw.get()).ok()?;
                Some((i, start_of(text, raw.get()).0, p))
            })
            .collect();
        check_pathways(&read, &file, &mut diags);
        match whole {
            Ok(tax) if !diags.has_errors() => Ok(tax),
            _ => Err(LoadError::Rejected(diags)),
        }
    }

    /// The taxonomy in `path`, or the bundled default.
    pub fn load(path: Option<&Path>) -> Result<Taxonomy, LoadError> {
        match path {
            None => Taxonomy::parse(DEFAULT_TAXONOMY, Path::new("assets/taxonomy.json")),
            Some(p) => {
                let text = crate::core::fsread::read_to_string(p, crate::core::fsread::SETTINGS)
                    .map_err(|source| LoadError::Io {
                        path: p.to_path_buf(),
                        source,
                    })?;
                Taxonomy::parse(crate::core::load::json::strip_bom_str(&text), p)
            }
        }
    }

    /// The pathway of an id, if the taxonomy has it.
    pub fn get(&self, id: &str) -> Option<&Pathway> {
        self.pathways.iter().find(|p| p.id == id)
    }

    /// The pathway a key toggles.
    pub fn by_key(&self, key: char) -> Option<&Pathway> {
        self.pathways.iter().find(|p| p.key.starts_with(key))
    }
}

/// The checks of the pathways that read (`(place in the list, line, pathway)`): ids and
/// labels present, keys one character that can be typed, ids, keys and short labels
/// unique (each repeat said once, naming the first pathway that has it).
fn check_pathways(read: &[(usize, u64, Pathway)], file: &Arc<Path>, diags: &mut Diagnostics) {
    use std::collections::HashMap;
    let mut ids: HashMap<&str, &str> = HashMap::new();
    let mut keys: HashMap<&str, &str> = HashMap::new();
    let mut shorts: HashMap<&str, &str> = HashMap::new();
    for (i, line, p) in read {
        let at = format!("pathways[{i}]");
        let mut say = |field: &str, msg: String| {
            let field = if field.is_empty() {
                at.clone()
            } else {
                format!("{at}.{field}")
            };
            diags.error(file, Some(*line), Some(&field), msg);
        };
        if p.id.trim().is_empty() || p.label.trim().is_empty() {
            say("", "every pathway needs an id and a label".into());
        }
        let mut chars = p.key.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_control() => say(
                "key",
                format!(
                    "a key is a character typed on the keyboard, found the control character {:?}",
                    p.key
                ),
            ),
            (Some(_), None) => {}
            _ => say("key", format!("a key is one character, found {:?}", p.key)),
        }
        if let Some(first) = earlier(&mut shorts, p.short_label(), &p.id) {
            say(
                "short",
                format!(
                    "short label {:?} is {first:?}'s too: narrow screens could not tell them apart",
                    p.short_label()
                ),
            );
        }
        if earlier(&mut ids, &p.id, &p.id).is_some() {
            say("id", format!("id {:?} is used twice", p.id));
        }
        if let Some(first) = earlier(&mut keys, &p.key, &p.id) {
            say("key", format!("key {:?} is used by {first:?} too", p.key));
        }
    }
}

/// The id of the pathway that gave `value` first, or `None` (and `id` noted as giving it).
fn earlier<'a>(
    seen: &mut std::collections::HashMap<&'a str, &'a str>,
    value: &'a str,
    id: &'a str,
) -> Option<&'a str> {
    match seen.entry(value) {
        std::collections::hash_map::Entry::Occupied(o) => Some(*o.get()),
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert(id);
            None
        }
    }
}

/// serde's words for the taxonomy's types, in the file's terms.
fn plain(why: &str) -> String {
    why.replace(
        "struct Head",
        "a taxonomy (an object of id, version and pathways)",
    )
    .replace(
        "struct Taxonomy",
        "a taxonomy (an object of id, version and pathways)",
    )
    .replace(
        "struct Pathway",
        "a pathway (an object of id, label, description and key)",
    )
    .replace("expected u32", "expected a whole number >= 0")
}

/// The raw text of each pathway of a taxonomy's text, where it has a list of them.
fn pathway_texts(text: &str) -> Vec<&serde_json::value::RawValue> {
    #[derive(Deserialize)]
    struct Pathways<'a> {
        #[serde(borrow, default)]
        pathways: Vec<&'a serde_json::value::RawValue>,
    }
    serde_json::from_str::<Pathways<'_>>(text)
        .map(|p| p.pathways)
        .unwrap_or_default()
}

/// Every problem of a taxonomy's text that does not read as one: its syntax, else each
/// wrong or missing field of the head and of every pathway, in the file's order.
fn shape_problems(text: &str) -> Vec<ShapeProblem> {
    /// The head, its pathways read apart.
    #[derive(Deserialize)]
    #[allow(dead_code)] // read for its problems only
    struct Head {
        id: String,
        version: u32,
        pathways: Vec<serde::de::IgnoredAny>,
    }
    let stand_in = |value: serde_json::Value| match value {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let head = stand_in(serde_json::json!({"id": "", "version": 0, "pathways": []}));
    let pathway = stand_in(serde_json::json!(
        {"id": "", "label": "", "short": null, "description": "", "key": ""}
    ));
    let mut problems = Vec::new();
    read_each::<Head>(text, text, "", &head, &mut problems);
    for (i, raw) in pathway_texts(text).into_iter().enumerate() {
        let at = format!("pathways[{i}]");
        read_each::<Pathway>(text, raw.get(), &at, &pathway, &mut problems);
    }
    if problems.is_empty() {
        // Not found apart (it should be): the reader's own problem, whole.
        read_each::<Taxonomy>(text, text, "", &serde_json::Map::new(), &mut problems);
    }
    problems.sort_by_key(|p| (p.line, p.column));
    problems.dedup();
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_taxonomy_is_valid() {
        let t = Taxonomy::load(None).expect("bundled taxonomy");
        assert_eq!(t.id, "evidence-pathways");
        assert!(t.pathways.len() >= 9);
        assert_eq!(
            t.by_key('1').map(|p| p.id.as_str()),
            Some("evidence_dropped")
        );
        assert!(t.get("language_prior").is_some());
        // Short labels fit a column of 80x24's two and tell every pathway apart.
        let shorts: std::collections::BTreeSet<&str> =
            t.pathways.iter().map(Pathway::short_label).collect();
        assert_eq!(shorts.len(), t.pathways.len());
        assert!(shorts.iter().all(|s| s.chars().count() <= 10), "{shorts:?}");
    }

    #[test]
    fn bad_taxonomies_name_the_field() {
        let bad = r#"{"id": "x", "version": 1, "pathways": [
            {"id": "a", "label": "A", "description": "", "key": "1"},
            {"id": "a", "label": "B", "description": "", "key": "12"},
            {"id": "c", "label": "C", "description": "", "key": "1"}]}"#;
        let err = Taxonomy::parse(bad, Path::new("t.json"))
            .expect_err("rejected")
            .to_string();
        assert!(
            err.contains("field `pathways[1].id`: id \"a\" is used twice"),
            "{err}"
        );
        assert!(
            err.contains("field `pathways[1].key`: a key is one character"),
            "{err}"
        );
        assert!(
            err.contains("field `pathways[2].key`: key \"1\" is used by \"a\" too"),
            "{err}"
        );
        let short = r#"{"id": "x", "version": 1, "pathways": [
            {"id": "a", "label": "Evidence dropped", "short": "Ev", "description": "", "key": "1"},
            {"id": "b", "label": "Ev", "description": "", "key": "2"}]}"#;
        let err = Taxonomy::parse(short, Path::new("t.json"))
            .expect_err("rejected")
            .to_string();
        assert!(
            err.contains("field `pathways[1].short`: short label \"Ev\" is \"a\"'s too"),
            "{err}"
        );
        let err = Taxonomy::parse("{", Path::new("t.json"))
            .expect_err("rejected")
            .to_string();
        assert!(err.contains("t.json:1: error: malformed taxonomy"), "{err}");
    }

    #[test]
    fn a_field_of_the_wrong_type_does_not_hide_the_others() {
        let bad = r#"{"id": "x", "version": "1", "pathways": [
            {"id": "a", "label": "A", "description": "", "key": 1},
            {"id": "b", "description": "", "key": "2"},
            {"id": "c", "label": "C", "description": "", "key": "3"},
            {"id": "c", "label": "D", "description": "", "key": "3"},
            7]}"#;
        let err = Taxonomy::parse(bad, Path::new("t.json"))
            .expect_err("rejected")
            .to_string();
        for said in [
            "t.json:1: error: field `version`: malformed taxonomy: invalid type: string \"1\"",
            "t.json:2: error: field `pathways[0].key`: malformed taxonomy: invalid type: integer `1`",
            "t.json:3: error: field `pathways[1]`: malformed taxonomy: missing field `label`",
            "t.json:5: error: field `pathways[3].id`: id \"c\" is used twice",
            "t.json:5: error: field `pathways[3].key`: key \"3\" is used by \"c\" too",
            "t.json:6: error: field `pathways[4]`: malformed taxonomy: invalid type: integer `7`",
        ] {
            assert!(err.contains(said), "{said}\n not in:\n{err}");
        }
        // The bundled file read again finds nothing.
        assert!(shape_problems(DEFAULT_TAXONOMY).is_empty());
    }

    #[test]
    fn a_repeat_is_said_once_per_pathway_and_keys_can_be_typed() {
        let p = |id: &str, key: &str| {
            format!(r#"{{"id": "{id}", "label": "{id}", "description": "", "key": "{key}"}}"#)
        };
        let four: Vec<String> = (0..4).map(|i| p(&format!("p{i}"), "k")).collect();
        let text = format!(
            r#"{{"id": "x", "version": 1, "pathways": [{}, {}]}}"#,
            four.join(", "),
            p("esc", "\\u001b")
        );
        let err = Taxonomy::parse(&text, Path::new("t.json"))
            .expect_err("rejected")
            .to_string();
        assert_eq!(err.matches("is used by \"p0\" too").count(), 3, "{err}");
        assert!(!err.contains("used by \"p1\""), "{err}");
        assert!(
            err.contains("field `pathways[4].key`: a key is a character typed on the keyboard, found the control character \"\\u{1b}\""),
            "{err}"
        );
        // Text after the taxonomy, and a list where the taxonomy's object is, are said.
        let err = Taxonomy::parse(&format!("{DEFAULT_TAXONOMY}\n}}"), Path::new("t.json"))
            .expect_err("rejected")
            .to_string();
        assert!(
            err.contains("malformed taxonomy: trailing characters"),
            "{err}"
        );
        assert!(!err.contains("0 errors"), "{err}");
        let err = Taxonomy::parse("[]", Path::new("t.json"))
            .expect_err("rejected")
            .to_string();
        assert!(
            err.contains("expected a taxonomy (an object of id, version and pathways)"),
            "{err}"
        );
    }
}
