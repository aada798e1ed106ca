//! The texts fuzzy search looks in, one per queue row: item id, model, benchmark, question
//! and note, separated by [`FIELD_SEP`]. A queue of a million rows repeats each item's text
//! once per model; here the item's part is kept once per item and each row's text is put
//! together when searched.

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// Separates the fields of a haystack (item id, model, benchmark, question, note): a term
/// matches within one field, never across two.
pub const FIELD_SEP: char = '\u{1f}';

/// Strings kept end to end in one buffer.
#[derive(Debug, Clone, Default)]
struct Pool {
    text: String,
    ends: Vec<u32>,
}

impl Pool {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len() as u32);
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

/// The items' part of the search texts, kept once per item whatever rows refer to it.
#[derive(Debug, Clone, Default)]
pub struct ItemTexts {
    /// Per item (matrix item id): its id.
    ids: Pool,
    /// Per item: benchmark, [`FIELD_SEP`], question (its first line, sanitised).
    rest: Pool,
}

impl ItemTexts {
    /// `items` gives, per matrix item, its id and the "benchmark SEP question" part.
    pub fn new<'a>(items: impl Iterator<Item = (&'a str, String)>) -> ItemTexts {
        let mut t = ItemTexts::default();
        for (id, rest) in items {
            t.ids.push(id);
            t.rest.push(&rest);
        }
        t.ids.shrink_to_fit();
        t.rest.shrink_to_fit();
        t
    }
}

/// The search texts of the queue's rows.
#[derive(Debug, Clone, Default)]
pub struct Haystacks {
    /// Per item: its texts, shared by the haystacks of every queue over the same items.
    items: Arc<ItemTexts>,
    models: Vec<Box<str>>,
    /// Per row: (model, item).
    rows: Vec<(u32, u32)>,
    /// Per row with an annotator's note: the note.
    notes: FxHashMap<u32, Box<str>>,
}

impl Haystacks {
    /// `items` gives, per matrix item, its id and the "benchmark SEP question" part; `rows`
    /// the (model, item) of each queue row.
    pub fn new<'a>(
        items: impl Iterator<Item = (&'a str, String)>,
        models: impl Iterator<Item = &'a str>,
        rows: Vec<(u32, u32)>,
    ) -> Haystacks {
        Haystacks::with_items(Arc::new(ItemTexts::new(items)), models, rows)
    }

    /// [`Haystacks::new`] over item texts made before.
    pub fn with_items<'a>(
        items: Arc<ItemTexts>,
        models: impl Iterator<Item = &'a str>,
        rows: Vec<(u32, u32)>,
    ) -> Haystacks {
        Haystacks {
            items,
            models: models.map(Box::from).collect(),
            rows,
            ..Haystacks::default()
        }
    }

    /// Rows whose texts are `texts` as they are (no model, benchmark or note), for tests
    /// and tools.
    pub fn plain<S: AsRef<str>>(texts: &[S]) -> Haystacks {
        let mut items = ItemTexts::default();
        let mut rows = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            items.ids.push(t.as_ref());
            items.rest.push("");
            rows.push((u32::MAX, i as u32));
        }
        Haystacks {
            items: Arc::new(items),
            rows,
            ..Haystacks::default()
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Bytes of text and indexes held (notes aside).
    pub fn heap_bytes(&self) -> usize {
        let t = &self.items;
        t.ids.text.len()
            + t.rest.text.len()
            + 4 * (t.ids.ends.len() + t.rest.ends.len())
            + 8 * self.rows.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Sets (or, when empty, removes) the note searched with row `i`.
    pub fn set_note(&mut self, i: usize, note: &str) {
        if note.is_empty() {
            self.notes.remove(&(i as u32));
        } else {
            self.notes.insert(i as u32, note.into());
        }
    }

    /// The text of row `i`, written into `buf`.
    pub fn text<'b>(&self, i: usize, buf: &'b mut String) -> &'b str {
        let (model, item) = self.rows[i];
        let item = item as usize;
        buf.clear();
        buf.push_str(self.items.ids.get(item));
        if model == u32::MAX {
            return buf;
        }
        buf.push(FIELD_SEP);
        buf.push_str(&self.models[model as usize]);
        buf.push(FIELD_SEP);
        buf.push_str(self.items.rest.get(item));
        buf.push(FIELD_SEP);
        if let Some(note) = self.notes.get(&(i as u32)) {
            buf.push_str(note);
        }
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_text_is_its_items_and_models_and_its_note() {
        let rest = |q: &str| format!("bench{FIELD_SEP}{q}");
        let mut h = Haystacks::new(
            [("q1", rest("what?")), ("q2", rest("who?"))].into_iter(),
            ["m0", "m1"].into_iter(),
            vec![(1, 0), (0, 1)],
        );
        let text = |fields: &[&str]| fields.join(&FIELD_SEP.to_string());
        let mut buf = String::new();
        assert_eq!(
            h.text(0, &mut buf),
            text(&["q1", "m1", "bench", "what?", ""])
        );
        assert_eq!(
            h.text(1, &mut buf),
            text(&["q2", "m0", "bench", "who?", ""])
        );
        h.set_note(1, "key frame lost");
        assert_eq!(
            h.text(1, &mut buf),
            text(&["q2", "m0", "bench", "who?", "key frame lost"])
        );
        h.set_note(1, "");
        assert_eq!(
            h.text(1, &mut buf),
            text(&["q2", "m0", "bench", "who?", ""])
        );
        assert_eq!(h.len(), 2);
        let p = Haystacks::plain(&["as is", "two"]);
        assert_eq!(p.text(1, &mut buf), "two");
    }
}
