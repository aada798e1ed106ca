//! Every problem of a JSON document read as a type, each at its line, column and field.
//! serde stops at an object's first problem; [`read_each`] reads the object again with each
//! wrong or missing field replaced by a stand-in value of its type, so that a file's
//! problems are said together.

use std::collections::BTreeSet;

use serde::Serialize;

/// One problem of a JSON document read as a type: where, which field, what.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeProblem {
    /// The line (from 1).
    pub line: usize,
    /// The column there (from 1).
    pub column: usize,
    /// The field's path (`entries[3].indices[1]`); empty for the file as a whole.
    pub field: String,
    /// What is wrong, in serde's words without its place.
    pub why: String,
}

/// One problem of a value read from `part`, a slice of `text` at field `field`: placed in
/// `text` (`offset` is where it stands in `part`) with the field's path within the value
/// after `field`.
fn problem_at(
    text: &str,
    part: &str,
    offset: usize,
    field: &str,
    e: &serde_path_to_error::Error<serde_json::Error>,
) -> ShapeProblem {
    let within = e.path().to_string();
    let field = match (field.is_empty(), within.as_str()) {
        // "?": the reader stopped before any field (the syntax of the whole).
        (_, "." | "?") => field.to_string(),
        (true, _) => within,
        (false, w) if w.starts_with('[') => format!("{field}{w}"),
        (false, w) => format!("{field}.{w}"),
    };
    let (line, column) = crate::core::load::json::place_in(text, part, offset);
    ShapeProblem {
        line: line as usize,
        // At the start of a line (the text ended there), the first column.
        column: column.max(1),
        field,
        // serde's own "at line L column C" is said once, by the problem's place.
        why: crate::core::load::json::json_error_text(e.inner()),
    }
}

/// Where serde's error stands in the text it read: the byte after what it had read (its
/// column counts the line's bytes read).
fn error_offset(read: &str, e: &serde_json::Error) -> usize {
    let line_start = read
        .match_indices('\n')
        .nth(e.line().saturating_sub(2))
        .filter(|_| e.line() > 1)
        .map_or(0, |(i, _)| i + 1);
    (line_start + e.column()).min(read.len())
}

/// A text with some ranges of it replaced, and the way back from a place in it to the
/// original's.
struct Spliced {
    text: String,
    /// `(place in text, place in the original, copied)` where each piece begins: a place
    /// in a copied piece maps one to one, one in a replacement to where it stands.
    pieces: Vec<(usize, usize, bool)>,
}

impl Spliced {
    /// `original` with each `(range, replacement)` applied; the ranges in order, apart
    /// (two insertions at one place keep their order).
    fn new(original: &str, splices: &[(std::ops::Range<usize>, String)]) -> Spliced {
        let mut text = String::with_capacity(original.len() + 64);
        let mut pieces = Vec::new();
        let mut from = 0;
        for (range, with) in splices {
            pieces.push((text.len(), from, true));
            text.push_str(&original[from..range.start]);
            pieces.push((text.len(), range.start, false));
            text.push_str(with);
            from = range.end;
        }
        pieces.push((text.len(), from, true));
        text.push_str(&original[from..]);
        Spliced { text, pieces }
    }

    /// Where `at`, a place in the spliced text, stands in the original.
    fn back(&self, at: usize) -> usize {
        let i = self.pieces.partition_point(|p| p.0 <= at).saturating_sub(1);
        let (text_at, original_at, copied) = self.pieces[i];
        if copied {
            original_at + (at - text_at)
        } else {
            original_at
        }
    }
}

/// Every problem of `part`, a slice of `text` at field `field`, read as a `T`, each pushed
/// at its place in `text`. serde stops at the first problem of an object; so each field
/// found wrong or missing is replaced by `stand_in`'s (a `T` whose every field has a value
/// of its type) and the object read again, until it reads or the problem is not one
/// field's.
pub fn read_each<T: serde::de::DeserializeOwned>(
    text: &str,
    part: &str,
    field: &str,
    stand_in: &serde_json::Map<String, serde_json::Value>,
    problems: &mut Vec<ShapeProblem>,
) {
    type Raw<'a> = &'a serde_json::value::RawValue;
    let fields: Option<std::collections::BTreeMap<String, Raw<'_>>> =
        serde_json::from_str(part).ok();
    let close = part.trim_end().len().saturating_sub(1);
    let mut splices: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut replaced = BTreeSet::new();
    loop {
        let spliced = Spliced::new(part, &splices);
        let mut de = serde_json::Deserializer::from_str(&spliced.text);
        let e = match serde_path_to_error::deserialize::<_, T>(&mut de) {
            Ok(_) => {
                // What follows the value (`{...} garbage`), which serde's reader of a whole
                // text refuses.
                if let Err(end) = de.end() {
                    let offset = spliced.back(error_offset(&spliced.text, &end));
                    let (line, column) = crate::core::load::json::place_in(text, part, offset);
                    problems.push(ShapeProblem {
                        line: line as usize,
                        column: column.max(1),
                        field: field.to_string(),
                        why: crate::core::load::json::json_error_text(&end),
                    });
                }
                return;
            }
            Err(e) => e,
        };
        let offset = spliced.back(error_offset(&spliced.text, e.inner()));
        problems.push(problem_at(text, part, offset, field, &e));
        // The field to stand in for: the path's first step, or the one missing.
        let path = e.path().to_string();
        let message = e.inner().to_string();
        let key = match path.as_str() {
            "." => message
                .strip_prefix("missing field `")
                .and_then(|m| m.split('`').next())
                .unwrap_or(""),
            p => p.split(['.', '[']).next().unwrap_or(""),
        };
        let (Some(fields), Some(value)) = (&fields, stand_in.get(key)) else {
            return;
        };
        if !replaced.insert(key.to_string()) {
            return;
        }
        let value = value.to_string();
        match fields.get(key) {
            Some(raw) => {
                let start = (raw.get().as_ptr() as usize) - (part.as_ptr() as usize);
                splices.push((start..start + raw.get().len(), value));
            }
            None => {
                let first = fields.is_empty() && splices.iter().all(|s| s.0.start != close);
                let member = serde_json::to_string(key).unwrap_or_default() + ":" + &value;
                let member = if first { member } else { format!(",{member}") };
                splices.push((close..close, member));
            }
        }
        splices.sort_by_key(|s| s.0.start);
    }
}

/// `value` as the map of its fields (each has one: see [`read_each`]).
pub fn fields_of(value: &impl Serialize) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text after the value is a problem of the document, at its place: serde's reader of a
    /// value leaves it unread.
    #[test]
    fn text_after_the_value_is_a_problem() {
        type Map = std::collections::BTreeMap<String, u32>;
        let mut problems = Vec::new();
        let text = "{\"a\": 1}\n  x";
        read_each::<Map>(text, text, "", &serde_json::Map::new(), &mut problems);
        assert_eq!(
            problems,
            [ShapeProblem {
                line: 2,
                column: 3,
                field: String::new(),
                why: "trailing characters".into(),
            }]
        );
        let mut problems = Vec::new();
        read_each::<Map>(
            "{\"a\": 1}  ",
            "{\"a\": 1}  ",
            "",
            &serde_json::Map::new(),
            &mut problems,
        );
        assert!(problems.is_empty(), "{problems:?}");
    }
}
