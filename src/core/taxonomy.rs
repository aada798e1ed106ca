//! The evidence-pathway taxonomy: the tags an annotator gives a harmful transition. It is
//! data (`assets/taxonomy.json`, or a file of the user's), so a project can change it
//! without a new build.

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use crate::core::diag::{Diagnostics, LoadError};
use crate::core::load::json::describe_json_error;

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
    pub fn parse(text: &str, path: &Path) -> Result<Taxonomy, LoadError> {
        let file: Arc<Path> = Arc::from(path);
        let mut diags = Diagnostics::default();
        let tax: Taxonomy = serde_json::from_str(text).map_err(|e| {
            let mut d = Diagnostics::default();
            d.error(
                &file,
                Some(e.line() as u64),
                None,
                format!("malformed taxonomy: {}", describe_json_error(&e)),
            );
            LoadError::Rejected(d)
        })?;
        if tax.pathways.is_empty() {
            diags.error(
                &file,
                None,
                Some("pathways"),
                "a taxonomy needs at least one pathway".into(),
            );
        }
        for (i, p) in tax.pathways.iter().enumerate() {
            let at = format!("pathways[{i}]");
            if p.id.trim().is_empty() || p.label.trim().is_empty() {
                diags.error(
                    &file,
                    None,
                    Some(&at),
                    "every pathway needs an id and a label".into(),
                );
            }
            if p.key.chars().count() != 1 {
                diags.error(
                    &file,
                    None,
                    Some(&format!("{at}.key")),
                    format!("a key is one character, found {:?}", p.key),
                );
            }
            for q in &tax.pathways[..i] {
                if q.short_label() == p.short_label() {
                    diags.error(
                        &file,
                        None,
                        Some(&format!("{at}.short")),
                        format!(
                            "short label {:?} is {:?}'s too: narrow screens could not tell them apart",
                            p.short_label(),
                            q.id
                        ),
                    );
                }
                if q.id == p.id {
                    diags.error(
                        &file,
                        None,
                        Some(&format!("{at}.id")),
                        format!("id {:?} is used twice", p.id),
                    );
                }
                if q.key == p.key {
                    diags.error(
                        &file,
                        None,
                        Some(&format!("{at}.key")),
                        format!("key {:?} is used by {:?} too", p.key, q.id),
                    );
                }
            }
        }
        if diags.has_errors() {
            return Err(LoadError::Rejected(diags));
        }
        Ok(tax)
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
}
