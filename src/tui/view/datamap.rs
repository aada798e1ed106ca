//! The data map, as in dataset-cartography maps: each item of a model placed by its mean
//! correctness across budgets (x) and how often its answer flips between adjacent budgets
//! (y). With 0/1 answers both take few values, so the map is a grid of counts, each cell
//! coloured (and lettered) by its most common class. Enter sends the cell's items to the
//! queue.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::core::analysis::mcq::Class;
use crate::core::figures::{DataMap, class_colour, class_label};
use crate::tui::app::App;
use crate::tui::input::action::Action;
use crate::tui::research::ViewData;
use crate::tui::view::charts::research_hints;
use crate::tui::view::charts::{rgb, text_at};
use crate::tui::view::theme::{ACCENT, DIM, WARN};

/// A letter per class, so the map reads without colour.
const GLYPHS: [char; 5] = ['R', 'W', '+', '-', '~'];

/// Draws the data map of the model under the cursor, with its legend and the cell under
/// the cursor beside it.
pub fn draw(f: &mut Frame, app: &App, d: &ViewData, area: Rect) {
    let r = &app.research;
    let Some(map) = d.maps.get(r.model).and_then(Option::as_ref) else {
        f.render_widget(
            Paragraph::new(
                "The data map is drawn for multiple-choice analyses (T switches the task).",
            )
            .style(DIM),
            area,
        );
        return;
    };
    let [plot, side] = Layout::horizontal([Constraint::Min(40), Constraint::Length(44)])
        .spacing(1)
        .areas(area);
    draw_grid(f, r.map_cell, map, plot);
    f.render_widget(Paragraph::new(side_lines(app, r.map_cell, map)), side);
}

/// The grid of counts: a cell per (right in n budgets, flips), lettered and coloured by its
/// most common class, fainter when it holds few items; the axes below and left.
fn draw_grid(f: &mut Frame, cursor: (usize, usize), map: &DataMap, plot: Rect) {
    let k = map.k;
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(DIM)
        .title(Span::styled(
            crate::tui::fit::fit_first(
                &[
                    " data map: variability (flip share) vs mean correctness ",
                    " data map: flip share vs mean correctness ",
                    " data map: flips vs correctness ",
                ],
                plot.width as usize,
            ),
            ACCENT,
        ));
    let inner = block.inner(plot);
    f.render_widget(block, plot);
    let rows = k.max(2) - 1 + 1; // flips 0..=k-1
    let cols = k + 1; // right 0..=k
    let axis_w = 6u16;
    let cell_w = ((inner.width.saturating_sub(axis_w + 1)) / cols as u16).clamp(3, 10);
    let cell_h = ((inner.height.saturating_sub(4)) / rows as u16).clamp(1, 3);
    let max = map
        .cells
        .values()
        .map(|c| c.iter().sum::<usize>())
        .max()
        .unwrap_or(1)
        .max(1);
    text_at(f, inner, 0, 0, Line::from(Span::styled("flips ↑", DIM)));
    for fl in 0..rows {
        let y = 1 + ((rows - 1 - fl) as u16) * cell_h;
        text_at(
            f,
            inner,
            0,
            y + cell_h / 2,
            Line::from(Span::styled(format!("{:>4.2} ", map.y(fl)), DIM)),
        );
        for right in 0..cols {
            let counts = map.cells.get(&(right, fl)).copied().unwrap_or_default();
            let total: usize = counts.iter().sum();
            let x0 = axis_w + right as u16 * cell_w;
            let selected = cursor == (right, fl);
            let (text, style) = if total == 0 {
                (" ·".to_string(), DIM)
            } else {
                let top = (0..5)
                    .max_by_key(|&i| (counts[i], std::cmp::Reverse(i)))
                    .unwrap_or(0);
                let c = class_colour(Class::ALL[top]);
                // Fainter for small counts, so dense cells stand out.
                let t = 0.35 + 0.65 * (total as f64 / max as f64).sqrt();
                let mix = |a: u8| (40.0 + (a as f64 - 40.0) * t).round() as u8;
                (
                    format!("{}{total}", GLYPHS[top]),
                    Style::new()
                        .bg(Color::Rgb(mix(c.0), mix(c.1), mix(c.2)))
                        .fg(Color::White),
                )
            };
            let style = if selected {
                style.add_modifier(Modifier::REVERSED | Modifier::BOLD)
            } else {
                style
            };
            for dy in 0..cell_h {
                let body = if dy == cell_h / 2 {
                    text.clone()
                } else {
                    String::new()
                };
                let body: String = body.chars().take(cell_w as usize - 1).collect();
                let line = if selected && dy == cell_h / 2 {
                    format!("[{body:<w$}", w = cell_w as usize - 2)
                } else {
                    format!("{body:<w$}", w = cell_w as usize - 1)
                };
                text_at(f, inner, x0, y + dy, Line::from(Span::styled(line, style)));
            }
        }
    }
    let base = 1 + rows as u16 * cell_h;
    let labels: Vec<String> = (0..cols)
        .map(|right| format!("{:.2}", map.x(right)))
        .collect();
    text_at(
        f,
        inner,
        0,
        base,
        Line::from(Span::styled(
            x_labels(&labels, axis_w as usize, cell_w as usize),
            DIM,
        )),
    );
    text_at(
        f,
        inner,
        axis_w,
        base + 1,
        Line::from(Span::styled(
            format!("mean correctness → (right in n of {k} budgets)"),
            DIM,
        )),
    );
}

/// The x axis's labels under columns `cell_w` cells wide after `axis_w`: each column's
/// where they fit with a space between; else every n-th, the last one always (where it
/// would run into the one before, that one gives way).
fn x_labels(labels: &[String], axis_w: usize, cell_w: usize) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let label_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) + 1;
    let every = label_w.div_ceil(cell_w.max(1)).max(1);
    let last = labels.len().saturating_sub(1);
    let mut chosen: Vec<usize> = (0..labels.len()).step_by(every).collect();
    if chosen.last() != Some(&last) {
        if chosen.last().is_some_and(|&c| (last - c) < every) {
            chosen.pop();
        }
        chosen.push(last);
    }
    let mut out = " ".repeat(axis_w);
    for c in chosen {
        let at = axis_w + c * cell_w;
        let have = out.chars().count();
        out.push_str(&" ".repeat(at.saturating_sub(have)));
        out.push_str(&labels[c]);
    }
    out
}

/// The side: the legend, the cell under the cursor, and how to read the regions.
fn side_lines(app: &App, cursor: (usize, usize), map: &DataMap) -> Vec<Line<'static>> {
    let k = map.k;
    let (right, fl) = cursor;
    let counts = map.cells.get(&(right, fl)).copied().unwrap_or_default();
    let mut lines = vec![Line::from(Span::styled("classes (letter, colour)", ACCENT))];
    for (i, c) in Class::ALL.iter().enumerate() {
        lines.push(Line::from(vec![
            Span::styled(
                format!(" {} ", GLYPHS[i]),
                Style::new().bg(rgb(class_colour(*c))).fg(Color::White),
            ),
            Span::raw(format!(" {}", class_label(*c))),
        ]));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(vec![
        Span::styled("▶ ", WARN),
        Span::raw(format!(
            "right {right}/{k}, flips {fl}: {} items",
            counts.iter().sum::<usize>()
        )),
    ]));
    for (i, c) in Class::ALL.iter().enumerate() {
        if counts[i] > 0 {
            lines.push(Line::from(format!(
                "   {:<13}{:>5}",
                class_label(*c),
                counts[i]
            )));
        }
    }
    lines.push(Line::from(""));
    let keys = research_hints(
        app,
        &[
            (
                &[Action::Left, Action::Right, Action::Up, Action::Down],
                "",
                " move",
            ),
            (&[Action::Select], "", ": items in the queue"),
        ],
    );
    for t in [
        "right, steady (bottom right): easy",
        "wrong, steady (bottom left): hard",
        "many flips (top): ambiguous under",
        "  budget: what the curve hides",
        &keys,
    ] {
        lines.push(Line::from(Span::styled(t.to_string(), DIM)));
    }
    lines
}
