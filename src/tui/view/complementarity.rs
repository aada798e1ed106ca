//! Complementarity: for one model, the share of items right under one configuration and
//! wrong under another (rows right, columns wrong), and the pair-oracle gain of two
//! configurations over the better of them, as heatmaps over the grid. The cursor cell's
//! items (right at the row, wrong at the column) go to the queue with Enter.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::tui::fit::fit_first;

use crate::core::figures::{self, Rgb};
use crate::core::workspace::selections::right_wrong_rows;
use crate::tui::app::App;
use crate::tui::input::action::Action;
use crate::tui::research::ViewData;
use crate::tui::view::charts::research_hints;
use crate::tui::view::charts::text_at;
use crate::tui::view::theme::{ACCENT, DIM, WARN, s};

pub fn draw(f: &mut Frame, app: &App, d: &ViewData, area: Rect) {
    let r = &app.research;
    let Some(x) = d.mcq(r.model) else {
        f.render_widget(
            Paragraph::new(
                "Complementarity is drawn for multiple-choice analyses (T switches the task).",
            )
            .style(DIM),
            area,
        );
        return;
    };
    if let Some(o) = x.complementarity.omitted {
        f.render_widget(
            Paragraph::new(format!(
                "This grid has {} configurations: the complementarity matrices are computed for at most {} (the report's are null).",
                o.configs, o.max_configs
            ))
            .style(DIM),
            area,
        );
        return;
    }
    let m = &app.ds.matrix;
    let mg = &d.analysis.grids.models[r.model];
    let k = mg.grid.k();
    let names: Vec<String> = mg
        .grid
        .configs
        .iter()
        .map(|&c| s(&m.config(c).name))
        .collect();
    let [maps, info] =
        Layout::vertical([Constraint::Length(k as u16 + 4), Constraint::Min(3)]).areas(area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .spacing(1)
            .areas(maps);
    let c = &x.complementarity;
    heatmap(
        f,
        left,
        &[
            " right at row, wrong at column (% of items) ",
            " right at row, wrong at column (%) ",
        ],
        &names,
        &c.right_wrong,
        figures::LOST,
        r.cell,
    );
    heatmap(
        f,
        right,
        &[
            " pair-oracle gain over the better config (points) ",
            " pair-oracle gain (points) ",
        ],
        &names,
        &c.pair_oracle_gain,
        figures::GAINED,
        r.cell,
    );
    let (a, b) = r.cell;
    let n = right_wrong_rows(x, k, a, b).len();
    let back = right_wrong_rows(x, k, b, a).len();
    let lines = vec![
        Line::from(vec![
            Span::styled("▶ ", WARN),
            Span::raw(format!(
                "{n} items right at {} and wrong at {} ({:.1}%); {back} the other way round ({:.1}%)",
                names[a], names[b], c.right_wrong[a][b], c.right_wrong[b][a]
            )),
        ]),
        Line::from(format!(
            "choosing per item between {} and {} would gain {:.1} points over the better of the two",
            names[a], names[b], c.pair_oracle_gain[a][b]
        )),
        Line::from(Span::styled(
            research_hints(
                app,
                &[
                    (&[Action::Left, Action::Right], "", " column (wrong at)"),
                    (&[Action::Up, Action::Down], "", " row (right at)"),
                    (&[Action::Select], "", ": these items in the queue"),
                ],
            ) + " · darker = larger",
            DIM,
        )),
    ];
    // Wrapped: at 80 columns the sentences are longer than the screen is wide.
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), info);
}

/// A heatmap under the first of `titles` that fits its width.
fn heatmap(
    f: &mut Frame,
    area: Rect,
    titles: &[&str],
    names: &[String],
    v: &[Vec<f64>],
    colour: Rgb,
    cursor: (usize, usize),
) {
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(DIM)
        .title(Span::styled(fit_first(titles, area.width as usize), ACCENT));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let k = names.len();
    let label_w = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 10) as u16
        + 1;
    let cell_w = ((inner.width.saturating_sub(label_w)) / k.max(1) as u16).clamp(4, 11);
    let max = v.iter().flatten().copied().fold(0.0, f64::max).max(1e-9);
    let mut header = vec![Span::raw(" ".repeat(label_w as usize))];
    for (j, n) in names.iter().enumerate() {
        let style = if j == cursor.1 {
            WARN.add_modifier(Modifier::BOLD)
        } else {
            DIM
        };
        let n = crate::tui::fit::fit(n, cell_w as usize - 1);
        header.push(Span::styled(
            format!("{n:>w$} ", w = cell_w as usize - 1),
            style,
        ));
    }
    text_at(f, inner, 0, 0, Line::from(header));
    for (i, row) in v.iter().enumerate() {
        let style = if i == cursor.0 {
            WARN.add_modifier(Modifier::BOLD)
        } else {
            DIM
        };
        let n = crate::tui::fit::fit(&names[i], label_w as usize - 1);
        let mut spans = vec![Span::styled(
            format!("{n:<w$}", w = label_w as usize),
            style,
        )];
        for (j, &val) in row.iter().enumerate() {
            let t = (val / max).clamp(0.0, 1.0);
            let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * t).round() as u8;
            let bg = Color::Rgb(mix(245, colour.0), mix(245, colour.1), mix(245, colour.2));
            let fgc = if t > 0.55 { Color::White } else { Color::Black };
            let text = if i == j {
                "–".to_string()
            } else {
                format!("{val:.1}")
            };
            let mut st = Style::new().bg(bg).fg(fgc);
            let cell = if (i, j) == cursor {
                st = st.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
                format!("[{text:>w$}]", w = cell_w as usize - 2)
            } else {
                format!("{text:>w$} ", w = cell_w as usize - 1)
            };
            spans.push(Span::styled(cell, st));
        }
        text_at(f, inner, 0, 1 + i as u16, Line::from(spans));
    }
}
