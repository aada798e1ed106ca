//! The look every view shares: the styles, the split of a screen into two panes, search
//! matches highlighted, and data text made safe for the terminal. Views import this, never
//! each other, so a view can change alone.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::core::text::sanitize;

/// Secondary text: hints, axes, what is not the point of the screen.
pub const DIM: Style = Style::new().fg(Color::DarkGray);
/// A right answer.
pub const RIGHT: Style = Style::new().fg(Color::Green);
/// A wrong answer, an error.
pub const WRONG: Style = Style::new().fg(Color::Red);
/// Titles and what is selected.
pub const ACCENT: Style = Style::new().fg(Color::Cyan);
/// Warnings, the cursor of a researcher view.
pub const WARN: Style = Style::new().fg(Color::Yellow);

/// Text from a data file, with control characters and escapes made visible.
pub fn s(text: &str) -> String {
    sanitize(text).into_owned()
}

/// An identifier (model, benchmark, item) as shown: see [`crate::core::text::show_id`].
pub fn id(text: &str) -> String {
    crate::core::text::show_id(text).into_owned()
}

/// Text with the characters at `positions` (character indices) highlighted: a piece (an
/// escape, a letter with its marks) with one of them is highlighted whole.
pub fn highlighted(text: &str, positions: &[usize], base: Style) -> Line<'static> {
    if positions.is_empty() {
        return Line::from(Span::styled(text.to_string(), base));
    }
    let hl = base.fg(Color::Yellow).add_modifier(Modifier::BOLD);
    // A span per run of pieces of one style, so a cut of the line (which goes between a
    // span's pieces) never splits an escape or a letter from its mark.
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut at = 0;
    for piece in crate::core::text::pieces(text) {
        let n = piece.chars().count();
        let style = match (at..at + n).any(|i| positions.contains(&i)) {
            true => hl,
            false => base,
        };
        at += n;
        match spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(piece),
            _ => spans.push(Span::styled(piece.to_string(), style)),
        }
    }
    Line::from(spans)
}

/// The two panes side by side, a blank column between them so no text runs into the next.
pub fn panes(area: Rect) -> [Rect; 2] {
    Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
        .spacing(1)
        .areas(area)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fit::fit_line;

    /// A search's highlights never let a cut split an escape: the line is cut between
    /// pieces, as an unhighlighted one is.
    #[test]
    fn a_highlighted_id_is_cut_between_pieces() {
        let line = highlighted(r"ab\x1bcd", &[0], Style::new());
        let text = |l: Line<'_>| {
            l.spans
                .iter()
                .map(|s| s.content.to_string())
                .collect::<String>()
        };
        assert_eq!(text(line.clone()), r"ab\x1bcd");
        assert_eq!(text(fit_line(line, 5)), "ab…");
        // A highlight inside an escape lights the whole escape.
        let line = highlighted(r"a\x1b", &[2], Style::new());
        assert_eq!(line.spans.len(), 2);
        assert_eq!(line.spans[1].content, r"\x1b");
    }
}
