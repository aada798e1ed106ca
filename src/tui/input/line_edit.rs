//! A one-line text editor, shared by the note editor, the search line and the filter
//! pickers: a cursor that never splits a character (it stops between grapheme clusters, so
//! an accented letter, a flag or an emoji sequence is one step), moves by character and by
//! word, deletes at the cursor; and a window onto the text, measured in display cells,
//! that keeps the cursor in sight when the text is wider than its box. Pure: no terminal
//! and no app state here.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_segmentation::{GraphemeCursor, UnicodeSegmentation};

use crate::core::text::sanitize;
use crate::tui::fit::width;

/// The editing keys, as the help lists them (the same in every editor).
pub const KEYS: [(&str, &str); 8] = [
    ("← →", "cursor left, right by character (also C-b C-f)"),
    ("C-← C-→", "cursor left, right by word (also M-b M-f)"),
    ("Home End", "cursor to the start, the end (also C-a C-e)"),
    ("Bksp Del", "delete before, at the cursor (also C-h, C-d)"),
    ("C-w", "delete the word before the cursor, back to a space"),
    (
        "M-Bksp",
        "delete the word before the cursor, letters and digits (also C-Bksp)",
    ),
    ("M-d", "delete the word after the cursor (also C-Del)"),
    ("C-u C-k", "delete to the start, to the end"),
];

/// The editing keys the footer shows while a line is edited (the help lists them all).
pub const FOOTER: [(&str, &str); 5] = [
    ("←→", "move"),
    ("C-←→", "word"),
    ("C-w", "del word"),
    ("C-u", "del to start"),
    ("Home End", "start, end"),
];

/// What a key did to the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// The text changed.
    Changed,
    /// Only the cursor moved (or the key was an editing key with nothing to do).
    Moved,
    /// Not an editing key (Enter, Esc, Tab, a function key...): the caller decides.
    Ignored,
}

/// The text being typed and its cursor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEdit {
    text: String,
    /// Byte offset of the cursor: a character boundary, normally a grapheme boundary.
    cursor: usize,
    /// First display cell shown in the box, kept between draws so that the text does not
    /// jump while the cursor moves inside the box (see [`LineEdit::view`]).
    scroll: Cell<usize>,
}

/// What a box of some width shows of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineView {
    /// The cells to draw (sanitised), never wider than the box; "…" at an edge where the
    /// text goes on beyond it.
    pub text: String,
    /// The cursor's cell, counted from the box's left edge (always inside the box).
    pub cursor: usize,
}

/// A word character for moving and for M-Backspace: letters, digits and `_`, in any
/// script.
fn is_word(g: &str) -> bool {
    g.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

fn is_space(g: &str) -> bool {
    g.chars().next().is_some_and(char::is_whitespace)
}

impl LineEdit {
    /// A line holding `text`, the cursor at its end.
    pub fn new(text: impl Into<String>) -> LineEdit {
        let text = text.into();
        LineEdit {
            cursor: text.len(),
            text,
            scroll: Cell::new(0),
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Byte offset of the cursor in [`LineEdit::as_str`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Empties the line.
    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.scroll.set(0);
    }

    /// The grapheme boundary before `at` (0 at the start).
    fn prev(&self, at: usize) -> usize {
        if at == 0 {
            return 0;
        }
        let mut c = GraphemeCursor::new(at, self.text.len(), true);
        match c.prev_boundary(&self.text, 0) {
            Ok(Some(p)) => p,
            // Never for a whole text; a character step keeps it safe anyway.
            _ => self.text[..at]
                .char_indices()
                .next_back()
                .map_or(0, |(i, _)| i),
        }
    }

    /// The grapheme boundary after `at` (the end at the end).
    fn next(&self, at: usize) -> usize {
        if at >= self.text.len() {
            return self.text.len();
        }
        let mut c = GraphemeCursor::new(at, self.text.len(), true);
        match c.next_boundary(&self.text, 0) {
            Ok(Some(p)) => p,
            _ => self.text[at..]
                .chars()
                .next()
                .map_or(self.text.len(), |ch| at + ch.len_utf8()),
        }
    }

    /// Moves left over graphemes while `skip` holds for the one before the cursor.
    fn back_while(&self, mut at: usize, skip: impl Fn(&str) -> bool) -> usize {
        while at > 0 {
            let p = self.prev(at);
            if !skip(&self.text[p..at]) {
                break;
            }
            at = p;
        }
        at
    }

    fn forward_while(&self, mut at: usize, skip: impl Fn(&str) -> bool) -> usize {
        while at < self.text.len() {
            let n = self.next(at);
            if !skip(&self.text[at..n]) {
                break;
            }
            at = n;
        }
        at
    }

    /// The start of the word before the cursor (readline's backward-word).
    fn word_start(&self) -> usize {
        let at = self.back_while(self.cursor, |g| !is_word(g));
        self.back_while(at, is_word)
    }

    /// The end of the word after the cursor (readline's forward-word).
    fn word_end(&self) -> usize {
        let at = self.forward_while(self.cursor, |g| !is_word(g));
        self.forward_while(at, is_word)
    }

    /// Where C-w deletes back to: over spaces, then over everything but spaces.
    fn space_word_start(&self) -> usize {
        let at = self.back_while(self.cursor, is_space);
        self.back_while(at, |g| !is_space(g))
    }

    /// Inserts at the cursor and moves the cursor after the insertion.
    pub fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
        self.settle();
    }

    /// Inserts text at the cursor and moves the cursor after it.
    pub fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
        self.settle();
    }

    /// An insertion can join the grapheme after the cursor (a combining mark typed before
    /// a letter, a joiner before an emoji): the cursor goes to the end of the joined one.
    fn settle(&mut self) {
        if self.cursor > 0 && self.cursor < self.text.len() {
            let p = self.prev(self.cursor);
            let n = self.next(p);
            if n != self.cursor {
                self.cursor = n;
            }
        }
    }

    fn move_to(&mut self, at: usize) -> Edit {
        self.cursor = at;
        Edit::Moved
    }

    /// Deletes the bytes `from..to` (grapheme boundaries) and puts the cursor at `from`.
    fn delete(&mut self, from: usize, to: usize) -> Edit {
        if from >= to {
            return Edit::Moved;
        }
        self.text.replace_range(from..to, "");
        self.cursor = from;
        Edit::Changed
    }

    /// The cursor one character left.
    pub fn left(&mut self) -> Edit {
        self.move_to(self.prev(self.cursor))
    }

    /// The cursor one character right.
    pub fn right(&mut self) -> Edit {
        self.move_to(self.next(self.cursor))
    }

    /// The cursor to the start.
    pub fn home(&mut self) -> Edit {
        self.move_to(0)
    }

    /// The cursor to the end.
    pub fn end(&mut self) -> Edit {
        self.move_to(self.text.len())
    }

    /// The cursor to the start of the word before it.
    pub fn word_left(&mut self) -> Edit {
        self.move_to(self.word_start())
    }

    /// The cursor past the end of the word after it.
    pub fn word_right(&mut self) -> Edit {
        self.move_to(self.word_end())
    }

    /// Deletes the grapheme before the cursor.
    pub fn backspace(&mut self) -> Edit {
        self.delete(self.prev(self.cursor), self.cursor)
    }

    /// Deletes the grapheme at the cursor.
    pub fn delete_at(&mut self) -> Edit {
        self.delete(self.cursor, self.next(self.cursor))
    }

    /// C-w: deletes back over spaces, then to the previous space.
    pub fn delete_space_word(&mut self) -> Edit {
        self.delete(self.space_word_start(), self.cursor)
    }

    /// M-Backspace: deletes back to the start of the word (letters and digits).
    pub fn delete_word_before(&mut self) -> Edit {
        self.delete(self.word_start(), self.cursor)
    }

    /// M-d: deletes to the end of the word after the cursor.
    pub fn delete_word_after(&mut self) -> Edit {
        self.delete(self.cursor, self.word_end())
    }

    /// Deletes from the start of the line to the cursor.
    pub fn delete_to_start(&mut self) -> Edit {
        self.delete(0, self.cursor)
    }

    /// Deletes from the cursor to the end of the line.
    pub fn delete_to_end(&mut self) -> Edit {
        self.delete(self.cursor, self.text.len())
    }

    /// Applies an editing key. Enter, Esc and other keys that are not editing are
    /// [`Edit::Ignored`]: what they mean depends on the editor.
    pub fn handle(&mut self, e: &KeyEvent) -> Edit {
        let m = e.modifiers;
        let (ctrl, alt) = (
            m.contains(KeyModifiers::CONTROL),
            m.contains(KeyModifiers::ALT),
        );
        match e.code {
            KeyCode::Left if ctrl || alt => self.word_left(),
            KeyCode::Right if ctrl || alt => self.word_right(),
            KeyCode::Left => self.left(),
            KeyCode::Right => self.right(),
            KeyCode::Home => self.home(),
            KeyCode::End => self.end(),
            KeyCode::Backspace if ctrl || alt => self.delete_word_before(),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete if ctrl || alt => self.delete_word_after(),
            KeyCode::Delete => self.delete_at(),
            // AltGr arrives as Ctrl+Alt on some systems: the character it makes is typed.
            KeyCode::Char(c) if ctrl && alt && !c.is_control() => {
                self.insert(c);
                Edit::Changed
            }
            KeyCode::Char(c) if ctrl => match c.to_ascii_lowercase() {
                'a' => self.home(),
                'e' => self.end(),
                'b' => self.left(),
                'f' => self.right(),
                'h' => self.backspace(),
                'd' => self.delete_at(),
                'w' => self.delete_space_word(),
                'u' => self.delete_to_start(),
                'k' => self.delete_to_end(),
                _ => Edit::Ignored,
            },
            KeyCode::Char(c) if alt => match c {
                'b' => self.word_left(),
                'f' => self.word_right(),
                'd' => self.delete_word_after(),
                _ => Edit::Ignored,
            },
            KeyCode::Char(c) if !c.is_control() => {
                self.insert(c);
                Edit::Changed
            }
            _ => Edit::Ignored,
        }
    }

    /// What a box of `w` cells shows: the text from the remembered first cell, moved just
    /// enough to keep the cursor inside (and off the "…" that marks text beyond an edge).
    /// Every grapheme is sanitised and measured as drawn.
    pub fn view(&self, w: usize) -> LineView {
        if w == 0 {
            return LineView {
                text: String::new(),
                cursor: 0,
            };
        }
        let shown: Vec<(usize, String, usize)> = self
            .text
            .grapheme_indices(true)
            .map(|(at, g)| {
                let g = sanitize(g).into_owned();
                let gw = width(&g);
                (at, g, gw)
            })
            .collect();
        let total: usize = shown.iter().map(|x| x.2).sum();
        let cur: usize = shown
            .iter()
            .take_while(|x| x.0 < self.cursor)
            .map(|x| x.2)
            .sum();
        let under = shown
            .iter()
            .find(|x| x.0 >= self.cursor)
            .map_or(1, |x| x.2.max(1));
        let off = window(self.scroll.get(), cur, under, total, w);
        self.scroll.set(off);
        let ellipses = w >= 3;
        let left_cut = ellipses && off > 0;
        let right_cut = ellipses && total > off + w;
        let first = off + usize::from(left_cut);
        let last = off + w - usize::from(right_cut);
        let mut text = String::new();
        if left_cut {
            text.push('…');
        }
        let mut col = 0;
        let mut at = first;
        for (_, g, gw) in &shown {
            let (start, end) = (col, col + gw);
            col = end;
            if end <= first || start >= last {
                continue;
            }
            if start >= first && end <= last {
                text.push_str(g);
                at = end;
            } else {
                // A wide character half inside the box: blank cells instead of half of it.
                let from = start.max(first);
                let to = end.min(last);
                text.push_str(&" ".repeat(to - from));
                at = to;
            }
        }
        if right_cut {
            text.push_str(&" ".repeat(last.saturating_sub(at)));
            text.push('…');
        }
        LineView {
            text,
            cursor: cur.saturating_sub(off).min(w - 1),
        }
    }
}

/// The first cell a box of `w` cells shows, from the one shown before (`off`): the cursor
/// at cell `cur` with a grapheme of `under` cells under it, in a text of `total` cells
/// (the cursor takes one more at the end). The window moves only as far as needed to keep
/// the cursor in the box and off an edge's "…" (one cell), and never past the end.
pub fn window(off: usize, cur: usize, under: usize, total: usize, w: usize) -> usize {
    let need = total + 1;
    if w == 0 || need <= w {
        return 0;
    }
    // A grapheme wider than the box (a long escape) is shown from its start.
    let under = under.clamp(1, w.saturating_sub(2).max(1));
    let mut off = off;
    if w < 3 {
        // No room for ellipses: only keep the cursor in.
        if cur < off {
            off = cur;
        }
        if cur + 1 > off + w {
            off = cur + 1 - w;
        }
        return off.min(need - w);
    }
    if off > 0 && cur < off + 1 {
        off = cur.saturating_sub(1);
    }
    if cur + under + 1 > off + w {
        off = cur + under + 1 - w;
    }
    off.min(need - w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ed(text: &str, cursor: usize) -> LineEdit {
        let mut e = LineEdit::new(text);
        e.cursor = cursor;
        e
    }

    fn k(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    /// The text with a `|` at the cursor.
    fn shown(e: &LineEdit) -> String {
        format!("{}|{}", &e.text[..e.cursor], &e.text[e.cursor..])
    }

    #[test]
    fn moves_by_character_never_inside_one() {
        // é as e + combining acute, a flag (two regional indicators), a wide character.
        let mut e = LineEdit::new("ae\u{301}🇫🇷映");
        e.left();
        assert_eq!(shown(&e), "ae\u{301}🇫🇷|映");
        e.left();
        assert_eq!(shown(&e), "ae\u{301}|🇫🇷映", "a flag is one step");
        e.left();
        assert_eq!(
            shown(&e),
            "a|e\u{301}🇫🇷映",
            "a letter and its accent are one"
        );
        e.left();
        e.left();
        assert_eq!(shown(&e), "|ae\u{301}🇫🇷映", "stops at the start");
        e.right();
        e.right();
        assert_eq!(shown(&e), "ae\u{301}|🇫🇷映");
        e.end();
        e.right();
        assert_eq!(shown(&e), "ae\u{301}🇫🇷映|", "stops at the end");
        e.home();
        assert_eq!(e.cursor(), 0);
    }

    #[test]
    fn moves_by_word_over_any_script() {
        let mut e = LineEdit::new("seen at 00:25, 映像 über");
        e.word_left();
        assert_eq!(shown(&e), "seen at 00:25, 映像 |über");
        e.word_left();
        assert_eq!(shown(&e), "seen at 00:25, |映像 über");
        e.word_left();
        assert_eq!(
            shown(&e),
            "seen at 00:|25, 映像 über",
            "punctuation ends a word"
        );
        e.word_right();
        assert_eq!(shown(&e), "seen at 00:25|, 映像 über");
        e.word_right();
        assert_eq!(shown(&e), "seen at 00:25, 映像| über");
        e.home();
        e.word_right();
        assert_eq!(shown(&e), "seen| at 00:25, 映像 über");
    }

    #[test]
    fn inserts_at_the_cursor() {
        let mut e = LineEdit::new("seen 0:25");
        for _ in 0..4 {
            e.left();
        }
        e.insert_str("at ");
        assert_eq!(shown(&e), "seen at |0:25");
        e.insert('映');
        assert_eq!(shown(&e), "seen at 映|0:25");
        e.home();
        e.insert('»');
        assert_eq!(shown(&e), "»|seen at 映0:25");
        // A combining mark typed before a letter joins the grapheme before the cursor.
        let mut e = ed("ab", 1);
        e.insert('\u{301}');
        assert_eq!(shown(&e), "a\u{301}|b");
    }

    #[test]
    fn deletes_at_the_cursor_and_by_word_over_multibyte_text() {
        let mut e = ed("été 映像", "été".len());
        e.backspace();
        assert_eq!(shown(&e), "ét| 映像");
        e.delete_at();
        assert_eq!(shown(&e), "ét|映像");
        e.delete_at();
        assert_eq!(shown(&e), "ét|像");

        // C-w: back over spaces, then to the previous space.
        let mut e = LineEdit::new("the square at 00:25  ");
        e.delete_space_word();
        assert_eq!(shown(&e), "the square at |");
        e.delete_space_word();
        assert_eq!(shown(&e), "the square |");
        // M-Backspace stops at punctuation.
        let mut e = LineEdit::new("vu à 00:25");
        e.delete_word_before();
        assert_eq!(shown(&e), "vu à 00:|");
        e.delete_word_before();
        assert_eq!(shown(&e), "vu à |");
        e.delete_word_before();
        assert_eq!(shown(&e), "vu |", "à is a letter");
        // Over wide characters and emoji, mid-string.
        let mut e = ed("映像 🎬🎬 見る", "映像 🎬🎬".len());
        e.delete_space_word();
        assert_eq!(shown(&e), "映像 | 見る");
        e.delete_word_after();
        assert_eq!(shown(&e), "映像 |");
        let mut e = ed("映像 見る", "映像 ".len());
        e.delete_to_start();
        assert_eq!(shown(&e), "|見る");
        e.end();
        e.left();
        e.delete_to_end();
        assert_eq!(shown(&e), "見|");
        // Nothing to delete: no change, no panic.
        let mut e = LineEdit::new("");
        for f in [
            LineEdit::backspace,
            LineEdit::delete_at,
            LineEdit::delete_space_word,
            LineEdit::delete_word_before,
            LineEdit::delete_word_after,
            LineEdit::delete_to_start,
            LineEdit::delete_to_end,
            LineEdit::left,
            LineEdit::right,
            LineEdit::word_left,
            LineEdit::word_right,
        ] {
            assert_ne!(f(&mut e), Edit::Changed);
        }
        assert_eq!(shown(&e), "|");
    }

    #[test]
    fn keys_edit_as_readline_does() {
        let none = KeyModifiers::NONE;
        let (ctrl, alt) = (KeyModifiers::CONTROL, KeyModifiers::ALT);
        let mut e = LineEdit::new("");
        for c in "seen 00:25".chars() {
            assert_eq!(e.handle(&k(KeyCode::Char(c), none)), Edit::Changed);
        }
        assert_eq!(
            e.handle(&k(KeyCode::Char('A'), KeyModifiers::SHIFT)),
            Edit::Changed
        );
        e.handle(&k(KeyCode::Backspace, none));
        e.handle(&k(KeyCode::Left, ctrl));
        e.handle(&k(KeyCode::Left, ctrl));
        assert_eq!(shown(&e), "seen |00:25");
        e.handle(&k(KeyCode::Char('a'), ctrl));
        assert_eq!(e.cursor(), 0);
        e.handle(&k(KeyCode::Char('f'), alt));
        assert_eq!(shown(&e), "seen| 00:25");
        for c in " at".chars() {
            e.handle(&k(KeyCode::Char(c), none));
        }
        assert_eq!(shown(&e), "seen at| 00:25");
        e.handle(&k(KeyCode::Char('w'), ctrl));
        assert_eq!(shown(&e), "seen | 00:25");
        e.handle(&k(KeyCode::Char('e'), ctrl));
        e.handle(&k(KeyCode::Backspace, alt));
        assert_eq!(shown(&e), "seen  00:|");
        e.handle(&k(KeyCode::Char('b'), alt));
        e.handle(&k(KeyCode::Delete, none));
        assert_eq!(shown(&e), "seen  |0:");
        e.handle(&k(KeyCode::Char('u'), ctrl));
        assert_eq!(shown(&e), "|0:");
        for code in [KeyCode::Enter, KeyCode::Esc, KeyCode::Tab, KeyCode::F(2)] {
            assert_eq!(e.handle(&k(code, none)), Edit::Ignored);
        }
        assert_eq!(e.handle(&k(KeyCode::Char('x'), alt)), Edit::Ignored);
        assert_eq!(e.handle(&k(KeyCode::Char('q'), ctrl)), Edit::Ignored);
        // AltGr (Ctrl+Alt) types its character.
        e.handle(&k(KeyCode::Char('@'), ctrl | alt));
        assert_eq!(shown(&e), "@|0:");
    }

    #[test]
    fn the_window_keeps_the_cursor_in_the_box() {
        let mut e = LineEdit::new("abcdefghijklmnopqrstuvwxyz");
        // At the end: the end shows, "…" on the left, the cursor in the last cell.
        let v = e.view(10);
        assert_eq!(v.text, "…stuvwxyz");
        assert_eq!(v.cursor, 9);
        // Moving left inside the box does not scroll.
        for _ in 0..5 {
            e.left();
        }
        let v = e.view(10);
        assert_eq!((v.text.as_str(), v.cursor), ("…stuvwxyz", 4));
        // Up to the left edge, then the text scrolls, keeping the cursor off the "…".
        for _ in 0..10 {
            e.left();
        }
        let v = e.view(10);
        assert_eq!((v.text.as_str(), v.cursor), ("…lmnopqrs…", 1));
        e.home();
        let v = e.view(10);
        assert_eq!((v.text.as_str(), v.cursor), ("abcdefghi…", 0));
        // Short text: all of it, no scrolling.
        let e = ed("abc", 1);
        assert_eq!(
            e.view(10),
            LineView {
                text: "abc".into(),
                cursor: 1
            }
        );
        // Every width, every cursor: the cursor is in the box and the text fits it.
        let e0 = LineEdit::new("映像モデル🎬 lumen e\u{301}t\u{1b}[2J end");
        for w in 0..40 {
            let mut e = e0.clone();
            e.home();
            loop {
                let v = e.view(w);
                assert!(width(&v.text) <= w, "{w}: {:?}", v.text);
                assert!(w == 0 || v.cursor < w, "{w}: cursor {}", v.cursor);
                assert!(!v.text.contains('\u{1b}'), "sanitised");
                if e.cursor() == e.as_str().len() {
                    break;
                }
                e.right();
            }
        }
    }

    #[test]
    fn wide_characters_are_never_cut_in_half() {
        let mut e = LineEdit::new("映像映像映像映像");
        e.home();
        for _ in 0..5 {
            e.right();
        }
        let v = e.view(7);
        assert!(width(&v.text) <= 7);
        // The cursor's character is whole, in the cell the cursor names.
        assert_eq!((v.text.as_str(), v.cursor), ("… 映像…", 4));
        assert_eq!(window(0, 10, 2, 16, 7), 6);
        assert_eq!(window(6, 8, 2, 16, 7), 6, "in the box: no move");
        assert_eq!(window(6, 6, 2, 16, 7), 5, "off the left ellipsis");
        assert_eq!(window(9, 16, 1, 16, 7), 10, "never past the end");
        assert_eq!(window(3, 2, 1, 3, 10), 0, "fits: from the start");
    }
}
