//! Terminal presentation helpers: colour only on a terminal and never under `NO_COLOR`,
//! widths measured in display columns, and text from data files sanitised.

use std::io::IsTerminal;

use crossterm::style::{Color, Stylize};
use unicode_width::UnicodeWidthStr;

use crate::core::text::show_id;
use crate::term::no_color_env;

/// How plain-text output may look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Whether to colour: only on a terminal, and never under `NO_COLOR`.
    pub color: bool,
    /// Columns available.
    pub width: usize,
}

impl Style {
    /// Colour and width for standard output.
    pub fn for_stdout() -> Style {
        let tty = std::io::stdout().is_terminal();
        let width = if tty {
            crossterm::terminal::size()
                .map(|(w, _)| usize::from(w))
                .ok()
        } else {
            None
        }
        .or_else(|| std::env::var("COLUMNS").ok()?.parse().ok())
        .unwrap_or(100);
        Style {
            color: tty && !no_color_env(),
            width: width.clamp(40, 240),
        }
    }

    /// No colour, `width` columns: for files, pipes and tests.
    pub fn plain(width: usize) -> Style {
        Style {
            color: false,
            width,
        }
    }

    /// `s` in `color` when colour is on.
    pub fn paint(&self, s: &str, color: Color) -> String {
        if self.color {
            s.with(color).to_string()
        } else {
            s.to_string()
        }
    }

    /// `s` in bold when colour is on.
    pub fn bold(&self, s: &str) -> String {
        if self.color {
            s.bold().to_string()
        } else {
            s.to_string()
        }
    }

    /// `s` dimmed when colour is on.
    pub fn dim(&self, s: &str) -> String {
        if self.color {
            s.dim().to_string()
        } else {
            s.to_string()
        }
    }
}

/// Display width of a string.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// A name from the data (a model, benchmark, configuration) made safe and cut to at most
/// `max` columns (with an ellipsis when cut): shown as [`show_id`] shows it, so two names
/// that differ only in how their accents are encoded never look the same.
pub fn fit(s: &str, max: usize) -> String {
    let s = show_id(s);
    if width(&s) <= max {
        return s.into_owned();
    }
    crate::core::text::cut_with_ellipsis(&s, max)
}

/// `fit` then pad to exactly `cols` columns (left-aligned).
pub fn pad(s: &str, cols: usize) -> String {
    let mut f = fit(s, cols);
    let w = width(&f);
    f.push_str(&" ".repeat(cols.saturating_sub(w)));
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_by_display_width_and_sanitises() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("日本語テキスト", 5), "日本…");
        assert_eq!(fit("a\x1b[2Jb", 20), "a\\x1b[2Jb");
        // An escape is cut whole, never in the middle.
        assert_eq!(fit("ab\x1bcdef", 5), "ab…");
        assert_eq!(fit("ab\x1bcdef", 7), "ab\\x1b…");
        assert_eq!(pad("ab", 4), "ab  ");
    }
}
