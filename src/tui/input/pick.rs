//! The filter pickers: a small popup listing the values the queue holds (models,
//! benchmarks) with how many rows each would show, narrowed by typing (fuzzy, as the
//! search), moved with ↑/↓ (and j/k while nothing is typed), Enter picks, Esc cancels, and
//! an "all" entry clears the filter. The state and its keys are here; the app applies the
//! pick, the view draws it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use ratatui::layout::Rect;

use crate::tui::fit::width;
use crate::tui::input::line_edit::{Edit, LineEdit};

/// Which filter a picker sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    /// Filter by model.
    Model,
    /// Filter by benchmark.
    Benchmark,
}

impl PickKind {
    /// What the picker's title calls a value.
    pub fn noun(self) -> &'static str {
        match self {
            PickKind::Model => "model",
            PickKind::Benchmark => "benchmark",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            PickKind::Model => "models",
            PickKind::Benchmark => "benchmarks",
        }
    }
}

/// One value of the list: `None` is the "all" entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickEntry {
    /// The value (`None`: "all", which clears the filter).
    pub value: Option<u32>,
    /// Sanitised, as drawn and as matched.
    pub label: String,
    /// Queue rows the filter would show (under the other filters and the search).
    pub count: usize,
}

/// What a key did to the picker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Still open.
    Open,
    /// Enter on an entry: set the filter to this value (`None`: any).
    Picked(Option<u32>),
    /// Closed without picking.
    Cancelled,
}

/// An open picker.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    /// Which filter it sets.
    pub kind: PickKind,
    /// What is typed to narrow it.
    pub query: LineEdit,
    entries: Vec<PickEntry>,
    /// Indices into `entries` of those the query matches, best first.
    shown: Vec<usize>,
    /// Position in `shown` of the entry under the cursor.
    pub cursor: usize,
    /// First position of `shown` drawn.
    pub scroll: usize,
}

impl Pick {
    /// A picker over `values` (value, name, rows), "all" first with `all` rows, the cursor
    /// on the value in force.
    pub fn new(
        kind: PickKind,
        values: Vec<(u32, String, usize)>,
        all: usize,
        current: Option<u32>,
    ) -> Pick {
        let mut entries = vec![PickEntry {
            value: None,
            label: format!("all {}", kind.plural()),
            count: all,
        }];
        entries.extend(values.into_iter().map(|(value, label, count)| PickEntry {
            value: Some(value),
            label,
            count,
        }));
        let cursor = entries.iter().position(|e| e.value == current).unwrap_or(0);
        Pick {
            kind,
            query: LineEdit::default(),
            shown: (0..entries.len()).collect(),
            entries,
            cursor,
            scroll: 0,
        }
    }

    /// The entries the query matches, best first (in list order while nothing is typed).
    pub fn shown(&self) -> impl Iterator<Item = &PickEntry> {
        self.shown.iter().map(|&i| &self.entries[i])
    }

    /// How many entries the query matches.
    pub fn len(&self) -> usize {
        self.shown.len()
    }

    /// Whether the query matches none.
    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }

    /// The entry under the cursor.
    pub fn selected(&self) -> Option<&PickEntry> {
        self.shown.get(self.cursor).map(|&i| &self.entries[i])
    }

    /// Every entry, matched or not (the whole list).
    pub fn entries(&self) -> &[PickEntry] {
        &self.entries
    }

    /// Matches the entries against the query: each space-separated term must match the
    /// label fuzzily; the best scores first, ties in list order. The cursor goes to the
    /// best match.
    fn narrow(&mut self) {
        let q = self.query.as_str();
        if q.trim().is_empty() {
            self.shown = (0..self.entries.len()).collect();
        } else {
            let matcher = SkimMatcherV2::default().smart_case();
            let mut scored: Vec<(i64, usize)> = self
                .entries
                .iter()
                .enumerate()
                .filter_map(|(i, e)| {
                    let mut total = 0;
                    for term in q.split_whitespace() {
                        total += matcher.fuzzy_match(&e.label, term)?;
                    }
                    Some((total, i))
                })
                .collect();
            scored.sort_by_key(|&(score, i)| (std::cmp::Reverse(score), i));
            self.shown = scored.into_iter().map(|(_, i)| i).collect();
        }
        self.cursor = 0;
        self.scroll = 0;
    }

    /// Moves the cursor by `delta` entries (stopping at the ends), keeping it among the
    /// `page` rows drawn.
    pub fn step(&mut self, delta: isize, page: usize) {
        if self.shown.is_empty() {
            self.cursor = 0;
            return;
        }
        let last = self.shown.len() - 1;
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
        self.follow(page);
    }

    /// Keeps the cursor among the `page` rows drawn from `scroll`.
    pub fn follow(&mut self, page: usize) {
        let page = page.max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + page {
            self.scroll = self.cursor + 1 - page;
        }
        self.scroll = self.scroll.min(self.shown.len().saturating_sub(page));
    }

    /// Pasted text, typed into the query (already made one line of printable text).
    pub fn paste(&mut self, text: &str) {
        self.query.insert_str(text);
        self.narrow();
    }

    /// A key, with `page` rows of the list on screen. j and k move while nothing is typed
    /// (then they are letters of the query); ↑ ↓ C-p C-n PgUp PgDn always move.
    pub fn key(&mut self, e: &KeyEvent, page: usize) -> Outcome {
        let ctrl = e.modifiers.contains(KeyModifiers::CONTROL);
        let page_rows = page.max(1) as isize;
        match e.code {
            KeyCode::Esc => return Outcome::Cancelled,
            KeyCode::Enter => {
                return match self.selected() {
                    Some(entry) => Outcome::Picked(entry.value),
                    None => Outcome::Open,
                };
            }
            KeyCode::Up => self.step(-1, page),
            KeyCode::Down | KeyCode::Tab => self.step(1, page),
            KeyCode::BackTab => self.step(-1, page),
            KeyCode::PageUp => self.step(-page_rows, page),
            KeyCode::PageDown => self.step(page_rows, page),
            KeyCode::Char('p') if ctrl => self.step(-1, page),
            KeyCode::Char('n') if ctrl => self.step(1, page),
            KeyCode::Char('k') if self.query.is_empty() && e.modifiers.is_empty() => {
                self.step(-1, page)
            }
            KeyCode::Char('j') if self.query.is_empty() && e.modifiers.is_empty() => {
                self.step(1, page)
            }
            _ => {
                if self.query.handle(e) == Edit::Changed {
                    self.narrow();
                }
            }
        }
        Outcome::Open
    }
}

/// The picker's keys, for the footer.
pub const FOOTER: [(&str, &str); 4] = [
    ("↑↓", "move"),
    ("type", "narrow"),
    ("Enter", "pick"),
    ("Esc", "cancel"),
];

/// Rows of the popup that are not list rows: the borders and the query line.
const CHROME: u16 = 3;

/// Where a picker of `n` entries goes on a screen of `area`: centred, as wide as its
/// longest entry (within the screen), as tall as its list (within the screen).
pub fn popup(area: Rect, pick: &Pick) -> Rect {
    let longest = pick
        .entries
        .iter()
        .map(|e| width(&e.label) + 2 + e.count.to_string().len() + 2)
        .max()
        .unwrap_or(0);
    let w = (longest as u16 + 4)
        .max(44)
        .min(area.width.saturating_sub(4))
        .min(90);
    let h = (pick.entries.len() as u16 + CHROME)
        .min(area.height.saturating_sub(4))
        .max(CHROME + 1)
        .min(area.height);
    Rect {
        x: area.x + (area.width.saturating_sub(w)) / 2,
        y: area.y + (area.height.saturating_sub(h)) / 2,
        width: w,
        height: h,
    }
}

/// List rows of the popup on a screen of `area`.
pub fn page(area: Rect, pick: &Pick) -> usize {
    popup(area, pick).height.saturating_sub(CHROME) as usize
}

/// The list's rows on screen (for the mouse).
pub fn list_area(area: Rect, pick: &Pick) -> Rect {
    let p = popup(area, pick);
    Rect {
        x: p.x + 1,
        y: p.y + 2,
        width: p.width.saturating_sub(2),
        height: p.height.saturating_sub(CHROME),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick() -> Pick {
        Pick::new(
            PickKind::Model,
            vec![
                (0, "lumen-7b".into(), 41),
                (1, "orbit-2b".into(), 20),
                (2, "vista-13b".into(), 18),
                (3, "映像モデル🎬".into(), 0),
            ],
            79,
            Some(1),
        )
    }

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    fn code(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn labels(p: &Pick) -> Vec<&str> {
        p.shown().map(|e| e.label.as_str()).collect()
    }

    #[test]
    fn opens_on_the_value_in_force_and_moves() {
        let mut p = pick();
        assert_eq!(p.selected().map(|e| e.value), Some(Some(1)));
        assert_eq!(p.key(&key('j'), 10), Outcome::Open);
        assert_eq!(p.selected().map(|e| e.value), Some(Some(2)));
        p.key(&code(KeyCode::Up), 10);
        p.key(&key('k'), 10);
        assert_eq!(p.selected().map(|e| e.value), Some(Some(0)));
        for _ in 0..9 {
            p.key(&key('k'), 10);
        }
        assert_eq!(p.selected().map(|e| e.value), Some(None), "stops at all");
        assert_eq!(p.key(&code(KeyCode::Enter), 10), Outcome::Picked(None));
        p.key(&code(KeyCode::PageDown), 2);
        assert_eq!(p.cursor, 2);
        assert_eq!(p.scroll, 1, "the cursor stays among the rows drawn");
        assert_eq!(p.key(&code(KeyCode::Esc), 10), Outcome::Cancelled);
    }

    #[test]
    fn typing_narrows_and_j_k_become_letters() {
        let mut p = pick();
        p.key(&key('v'), 10);
        assert_eq!(labels(&p), ["vista-13b"]);
        assert_eq!(p.key(&code(KeyCode::Enter), 10), Outcome::Picked(Some(2)));
        p.key(&code(KeyCode::Backspace), 10);
        assert_eq!(p.len(), 5, "an empty query shows all");
        // Once something is typed, j and k are text.
        p.key(&key('b'), 10);
        assert_eq!(labels(&p).len(), 3, "{:?}", labels(&p));
        p.key(&key('k'), 10);
        assert_eq!(p.query.as_str(), "bk");
        assert!(p.is_empty());
        assert_eq!(
            p.key(&code(KeyCode::Enter), 10),
            Outcome::Open,
            "nothing to pick"
        );
        p.key(
            &KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
            10,
        );
        p.key(&key('a'), 10);
        p.key(&key('l'), 10);
        assert_eq!(labels(&p)[0], "all models");
        // Terms in any order; wide names match too.
        p.key(
            &KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
            10,
        );
        for c in "7 lu".chars() {
            p.key(&key(c), 10);
        }
        assert_eq!(labels(&p), ["lumen-7b"]);
        p.key(
            &KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
            10,
        );
        p.key(&key('映'), 10);
        assert_eq!(labels(&p), ["映像モデル🎬"]);
    }

    #[test]
    fn the_popup_fits_any_screen() {
        let p = pick();
        for (w, h) in [(80, 24), (120, 40), (20, 5), (0, 0), (300, 100)] {
            let area = Rect::new(0, 0, w, h);
            let r = popup(area, &p);
            assert!(
                r.right() <= area.right() && r.bottom() <= area.bottom(),
                "{w}x{h}: {r:?}"
            );
        }
    }
}
