//! The filter picker drawn over the screen: its query line and the entries it shows, the
//! cursor's highlighted. Where it goes and how many rows it has are the picker's own
//! (`input::pick`), so a click finds what was drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::tui::fit::{fit, fit_line, width};
use crate::tui::input::pick::{Pick, page, popup};
use crate::tui::view::theme::{ACCENT, DIM};

/// Draws the picker over the screen; the terminal's cursor goes to the query's.
pub fn draw(f: &mut Frame, pick: &Pick, area: Rect) {
    let p = popup(area, pick);
    let inner_w = p.width.saturating_sub(2) as usize;
    let page = page(area, pick);
    let hint = " Enter picks · Esc cancels ";
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(ACCENT)
        .title(Span::styled(
            fit(&format!(" filter by {} ", pick.kind.noun()), inner_w),
            ACCENT.add_modifier(Modifier::BOLD),
        ))
        .title_bottom(Span::styled(fit(hint, inner_w), DIM));
    f.render_widget(Clear, p);
    let inner = block.inner(p);
    f.render_widget(block, p);
    if inner.height == 0 || inner.width < 4 {
        return;
    }
    // The query line: "> " and the editor's window, with the terminal cursor in it.
    let view = pick.query.view(inner_w.saturating_sub(2));
    let mut query = vec![Span::styled("> ", ACCENT), Span::raw(view.text.clone())];
    if pick.query.is_empty() {
        query.push(Span::styled(
            fit("type to narrow (j/k move)", inner_w.saturating_sub(3)),
            DIM,
        ));
    }
    f.render_widget(
        Paragraph::new(fit_line(Line::from(query), inner_w)),
        Rect { height: 1, ..inner },
    );
    f.set_cursor_position((inner.x + 2 + view.cursor as u16, inner.y));
    let count_w = pick
        .entries()
        .iter()
        .map(|e| e.count.to_string().len())
        .max()
        .unwrap_or(1);
    let mut lines = Vec::new();
    if pick.is_empty() {
        lines.push(Line::from(Span::styled(
            fit("no match (Bksp edits, Esc cancels)", inner_w),
            DIM,
        )));
    }
    let start = pick.scroll.min(pick.len().saturating_sub(page));
    for (pos, e) in pick.shown().enumerate().skip(start).take(page) {
        let selected = pos == pick.cursor;
        let marker = if selected { "▶ " } else { "  " };
        let label_w = inner_w.saturating_sub(2 + 1 + count_w);
        let positions =
            crate::core::workspace::search::match_positions(&e.label, pick.query.as_str());
        let mut spans = vec![Span::raw(marker)];
        let base = if e.value.is_none() {
            Style::new().add_modifier(Modifier::ITALIC)
        } else {
            Style::new()
        };
        let label = crate::tui::view::theme::highlighted(&e.label, &positions, base);
        let label = fit_line(label, label_w);
        let used: usize = label.spans.iter().map(|s| width(&s.content)).sum();
        spans.extend(label.spans);
        spans.push(Span::raw(" ".repeat(label_w.saturating_sub(used))));
        spans.push(Span::styled(
            format!(" {:>count_w$}", e.count),
            if e.count == 0 { DIM } else { Style::new() },
        ));
        let style = if selected {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        } else {
            Style::new()
        };
        lines.push(fit_line(Line::from(spans), inner_w).style(style));
    }
    f.render_widget(
        Paragraph::new(lines),
        Rect {
            y: inner.y + 1,
            height: inner.height.saturating_sub(1),
            ..inner
        },
    );
}
