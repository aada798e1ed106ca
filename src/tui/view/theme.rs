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

/// Text with the characters at `positions` highlighted.
pub fn highlighted(text: &str, positions: &[usize], base: Style) -> Line<'static> {
    if positions.is_empty() {
        return Line::from(Span::styled(text.to_string(), base));
    }
    let hl = base.fg(Color::Yellow).add_modifier(Modifier::BOLD);
    Line::from(
        text.chars()
            .enumerate()
            .map(|(i, c)| {
                Span::styled(
                    c.to_string(),
                    if positions.contains(&i) { hl } else { base },
                )
            })
            .collect::<Vec<_>>(),
    )
}

/// The two panes side by side, a blank column between them so no text runs into the next.
pub fn panes(area: Rect) -> [Rect; 2] {
    Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
        .spacing(1)
        .areas(area)
}
