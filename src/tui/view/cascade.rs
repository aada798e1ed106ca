//! The cascade explorer: the confidence-threshold sweep as accuracy against mean frame
//! cost, the fixed budgets on the same axes, the selected threshold and the one under the
//! cursor; ←→ move τ by 0.01, ↑↓ by 0.10, and the side panel reads that sweep row.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Chart, Dataset, GraphType, LegendPosition, Paragraph,
};

use crate::core::analysis::cascade::{Cascade, SweepRow};
use crate::core::analysis::grid::ModelGrid;
use crate::core::analysis::mcq::McqMetrics;
use crate::core::figures;
use crate::tui::app::App;
use crate::tui::fit::{fit, pad};
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::research::ViewData;
use crate::tui::view::charts::{ceil10, fg, floor10, text_at, y_axis, y_labels};
use crate::tui::view::theme::{ACCENT, DIM, WARN, s};

/// Draws the cascade explorer of the model under the cursor.
pub fn draw(f: &mut Frame, app: &App, d: &ViewData, area: Rect) {
    let r = &app.research;
    let Some(x) = d.mcq(r.model) else {
        f.render_widget(
            Paragraph::new(
                "The cascade is defined for multiple-choice analyses (T switches the task).",
            )
            .style(DIM),
            area,
        );
        return;
    };
    let Some((c, sweep)) = x
        .cascade
        .as_ref()
        .and_then(|c| Some((c, c.sweep.as_ref()?)))
    else {
        f.render_widget(
            Paragraph::new(
                "No cascade for this model: it needs confidences on the stages before the last, and at least two visual stages. Cells carry a confidence in their `confidence` field.",
            )
            .style(DIM)
            .wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    };
    let Some(row) = sweep.get(r.tau) else { return };
    let mg = &d.analysis.grids.models[r.model];
    // The side panel keeps its width (its lines end in numbers) and the plot takes the rest:
    // at 80 columns a narrower plot, not cut figures.
    let [plot, side] = Layout::horizontal([Constraint::Min(30), Constraint::Length(SIDE_W)])
        .spacing(1)
        .areas(area);
    let at = At {
        mg,
        x,
        c,
        sweep,
        row,
    };
    draw_sweep(f, app, &at, plot);
    f.render_widget(Paragraph::new(side_lines(app, c, row)), side);
}

/// The side panel's width: its longest line, the selected τ's, whole.
const SIDE_W: u16 = 46;

/// The selected τ's point, and the one under the cursor: glyphs of their own (not only
/// colours), named in the legend and the side panel.
const SELECTED_GLYPH: &str = "◆";
const CURSOR_GLYPH: &str = "✚";

/// The model's cascade and the sweep row under the cursor.
struct At<'a> {
    mg: &'a ModelGrid,
    x: &'a McqMetrics,
    c: &'a Cascade,
    sweep: &'a [SweepRow],
    row: &'a SweepRow,
}

/// The sweep's curve of accuracy against mean frames, the fixed budgets (named beside their
/// points), the selected τ and the one under the cursor.
fn draw_sweep(f: &mut Frame, app: &App, at: &At, plot: Rect) {
    let m = &app.ds.matrix;
    let At {
        mg,
        x,
        c,
        sweep,
        row,
    } = *at;
    let curve: Vec<(f64, f64)> = sweep
        .iter()
        .map(|w| (w.mean_shared_cost, w.accuracy))
        .collect();
    let fixed: Vec<(f64, f64)> = (0..mg.grid.k())
        .map(|col| (mg.grid.frames(m, col) as f64, x.accuracy[col]))
        .collect();
    let here = (row.mean_shared_cost, row.accuracy);
    let chosen = c
        .selected
        .as_ref()
        .map(|sel| (sel.mean_shared_cost, sel.accuracy));
    let xmax = curve.iter().chain(&fixed).map(|p| p.0).fold(1.0, f64::max);
    let xmax = (xmax * 1.05).ceil();
    let ys = curve.iter().chain(&fixed).map(|p| p.1);
    let lo = floor10(ys.clone().fold(f64::INFINITY, f64::min) - 2.0);
    let hi = ceil10(ys.fold(0.0, f64::max) + 2.0);
    let mut datasets = vec![
        Dataset::default()
            .name("sweep τ 0→1")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(fg(figures::CURVE))
            .data(&curve),
        Dataset::default()
            .name("fixed budgets")
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(fg(figures::ORACLE).add_modifier(Modifier::BOLD))
            .data(&fixed),
    ];
    // The two τ points are drawn as glyphs over the chart (below); these entries name them
    // in the legend.
    if chosen.is_some() {
        datasets.push(
            Dataset::default()
                .name(format!("{SELECTED_GLYPH} selected τ"))
                .style(fg(figures::RIGHT)),
        );
    }
    datasets.push(
        Dataset::default()
            .name(format!("{CURSOR_GLYPH} τ = {:.2}", row.tau))
            .style(WARN),
    );
    let chart = Chart::new(datasets)
        .block(
            Block::default()
                .borders(Borders::TOP)
                .border_style(DIM)
                .title(Span::styled(
                    " cascade: accuracy (%) vs mean frames per item ",
                    ACCENT,
                )),
        )
        .legend_position(Some(LegendPosition::BottomRight))
        .hidden_legend_constraints((Constraint::Percentage(60), Constraint::Percentage(60)))
        .x_axis(
            Axis::default()
                .bounds([0.0, xmax])
                .labels(vec![
                    Line::from("0"),
                    Line::from(format!("{:.0}", xmax / 2.0)),
                    Line::from(format!("{xmax:.0} frames")),
                ])
                .style(DIM),
        )
        .y_axis(y_axis(lo, hi));
    f.render_widget(chart, plot);
    // Name the fixed budgets beside their points. The graph is the chart's area less the
    // block's top border, the y labels and axis on the left and the x axis and labels below.
    let y_label = y_labels(lo, hi)
        .iter()
        .map(|l| l.len() as u16)
        .max()
        .unwrap_or(0);
    let graph = Rect {
        x: plot.x + y_label + 1,
        y: plot.y + 1,
        width: plot.width.saturating_sub(y_label + 1),
        height: plot.height.saturating_sub(3),
    };
    if graph.width > 1 && graph.height > 1 {
        let cell = |(fx, fy): (f64, f64)| {
            (
                (fx / xmax * f64::from(graph.width - 1)).round() as u16,
                ((hi - fy) / (hi - lo) * f64::from(graph.height - 1)).round() as u16,
            )
        };
        for (col, &point) in fixed.iter().enumerate() {
            let (dx, dy) = cell(point);
            let name = s(m.config(mg.grid.configs[col]).name.as_ref());
            text_at(
                f,
                graph,
                dx + 1,
                dy,
                Line::from(Span::styled(name, fg(figures::ORACLE))),
            );
        }
        // The cursor's last, over the selected one where they meet.
        let marks = chosen
            .iter()
            .map(|&p| (p, SELECTED_GLYPH, fg(figures::RIGHT)))
            .chain([(here, CURSOR_GLYPH, WARN)]);
        for (point, glyph, style) in marks {
            let (dx, dy) = cell(point);
            text_at(
                f,
                graph,
                dx,
                dy,
                Line::from(Span::styled(glyph, style.add_modifier(Modifier::BOLD))),
            );
        }
    }
}

/// The side panel: the sweep row under the cursor (τ, accuracy, costs, reduction against
/// the baseline), the selected τ, and where the items were answered.
fn side_lines(app: &App, c: &Cascade, row: &SweepRow) -> Vec<Line<'static>> {
    let g_m = c.stage_frames.last().copied().unwrap_or(0) as f64;
    let reduction = if g_m > 0.0 {
        format!("{:.1}%", 100.0 * (1.0 - row.mean_shared_cost / g_m))
    } else {
        "–".into()
    };
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let mut lines = vec![
        Line::from(vec![
            Span::styled(format!("{CURSOR_GLYPH} τ "), WARN),
            Span::styled(format!("{:.2}", row.tau), WARN.add_modifier(Modifier::BOLD)),
            Span::styled(
                {
                    let steps = app.keymap.hints(
                        Context::Research,
                        &[
                            (&[Action::Left, Action::Right], "", " 0.01"),
                            (&[Action::Up, Action::Down], "", " 0.10"),
                        ],
                    );
                    if steps.is_empty() {
                        String::new()
                    } else {
                        format!("  ({})", steps.replace(" · ", ", "))
                    }
                },
                DIM,
            ),
        ]),
        Line::from(vec![
            Span::raw("accuracy         "),
            Span::styled(format!("{:.1}%", row.accuracy), bold),
            Span::raw(format!(" ({} right)", row.correct)),
        ]),
        Line::from(format!("mean frames, shared   {:.1}", row.mean_shared_cost)),
        Line::from(format!(
            "mean frames, no share {:.1}",
            row.mean_no_share_cost
        )),
        Line::from(format!(
            "cost reduction vs {}  {reduction}",
            s(&c.baseline.config)
        )),
        Line::from(Span::styled(
            format!(
                "baseline {} {:.1}% at {:.0} frames",
                s(&c.baseline.config),
                c.baseline.accuracy,
                c.baseline.mean_cost
            ),
            DIM,
        )),
    ];
    if let Some(sel) = &c.selected {
        lines.push(Line::from(Span::styled(
            format!(
                "{SELECTED_GLYPH} selected τ {:.2}: {:.1}% at {:.1} frames",
                sel.tau, sel.accuracy, sel.mean_shared_cost
            ),
            fg(figures::RIGHT),
        )));
    } else {
        lines.push(Line::from(Span::styled("no τ matches the baseline", DIM)));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "where items were answered",
        ACCENT,
    )));
    let n = row.stop_counts.iter().sum::<usize>().max(1);
    for (j, stops) in row.stop_counts.iter().enumerate() {
        let w = 16usize;
        let filled = (stops * w).div_ceil(n).min(w);
        let name = s(&c.stages[j]);
        let frames = c.stage_frames[j];
        let name = if name == format!("{frames}f") {
            name
        } else {
            format!("{name} ({frames}f)")
        };
        lines.push(Line::from(vec![
            Span::raw(pad(&fit(&name, 13), 14)),
            Span::styled("█".repeat(filled), fg(figures::GAINED)),
            Span::styled("·".repeat(w - filled), DIM),
            Span::raw(format!(" {stops:>5}")),
        ]));
    }
    lines
}
