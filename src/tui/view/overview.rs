//! The overview: per model, the accuracy curve with the oracle level and the headroom, the
//! churn of each budget step as stacked bars, the class mix, and the harmful and terminal
//! rates with their bootstrap intervals. The cursor picks a bar part or a class; Enter
//! sends its items to the queue.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Dataset, GraphType, LegendPosition, Paragraph,
    Row as TableRow, Table,
};

use crate::core::analysis::mcq::{Class, McqMetrics};
use crate::core::figures::{self, CHURN_PARTS, class_colour, class_label};
use crate::core::matrix::Task;
use crate::core::measures::{Measure, of_task};
use crate::tui::app::App;
use crate::tui::fit::{fit, width};
use crate::tui::input::action::Action;
use crate::tui::research::ViewData;
use crate::tui::view::charts::research_hints;
use crate::tui::view::charts::{
    PART_GLYPHS, ceil10, fg, floor10, interval_bar, text_at, with_interval, y_axis,
};
use crate::tui::view::theme::{ACCENT, DIM, WARN, s};

pub fn draw(f: &mut Frame, app: &App, d: &ViewData, area: Rect) {
    let r = &app.research;
    let Some(x) = d.mcq(r.model) else {
        f.render_widget(
            Paragraph::new(
                "This analysis is open-ended (scores, not right/wrong): the overview draws multiple-choice analyses. T switches the task.",
            )
            .style(DIM),
            area,
        );
        return;
    };
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let [curve_area, table_area] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .spacing(1)
            .areas(top);
    let [churn_area, class_area] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
            .spacing(1)
            .areas(bottom);
    draw_curve(f, app, d, x, curve_area);
    draw_models(f, app, d, table_area);
    draw_churn(f, app, x, churn_area);
    draw_classes(f, app, x, class_area);
}

fn titled(title: String) -> Block<'static> {
    Block::default()
        .borders(Borders::TOP)
        .border_style(DIM)
        .title(Span::styled(title, ACCENT))
}

fn draw_curve(f: &mut Frame, app: &App, d: &ViewData, x: &McqMetrics, area: Rect) {
    let m = &app.ds.matrix;
    let mg = &d.analysis.grids.models[app.research.model];
    let k = x.accuracy.len();
    let names: Vec<String> = mg
        .grid
        .configs
        .iter()
        .map(|&c| s(&m.config(c).name))
        .collect();
    let curve: Vec<(f64, f64)> = x
        .accuracy
        .iter()
        .enumerate()
        .map(|(i, &a)| (i as f64, a))
        .collect();
    let right = (k.max(2) - 1) as f64;
    let oracle = vec![(0.0, x.oracle_accuracy), (right, x.oracle_accuracy)];
    let b = x.best_fixed.index as f64;
    let headroom = vec![(b, x.best_fixed.accuracy), (b, x.oracle_accuracy)];
    let lo = floor10(x.accuracy.iter().copied().fold(f64::INFINITY, f64::min) - 2.0);
    let hi = ceil10(x.oracle_accuracy + 2.0);
    let datasets = vec![
        Dataset::default()
            .name(format!("oracle {:.1}", x.oracle_accuracy))
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(fg(figures::ORACLE))
            .data(&oracle),
        Dataset::default()
            .name(format!("headroom +{:.1}", x.headroom))
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(fg(figures::ORACLE).add_modifier(Modifier::BOLD))
            .data(&headroom),
        Dataset::default()
            .name("accuracy")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(fg(figures::CURVE).add_modifier(Modifier::BOLD))
            .data(&curve),
        Dataset::default()
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(fg(figures::CURVE))
            .data(&curve),
    ];
    // Only as many budget labels as fit; the others are still points on the curve.
    let width = area.width.saturating_sub(8) as usize;
    let fits = names.iter().map(|n| n.chars().count() + 1).sum::<usize>() <= width;
    let x_labels: Vec<Line> = if fits {
        names.iter().map(|n| Line::from(n.clone())).collect()
    } else {
        vec![
            Line::from(names.first().cloned().unwrap_or_default()),
            Line::from(names.last().cloned().unwrap_or_default()),
        ]
    };
    let chart = Chart::new(datasets)
        .block(titled(format!(
            " accuracy by budget (%), best fixed {} {:.1} ",
            s(&x.best_fixed.config),
            x.best_fixed.accuracy
        )))
        .legend_position(Some(LegendPosition::BottomRight))
        .hidden_legend_constraints((Constraint::Percentage(60), Constraint::Percentage(60)))
        .x_axis(
            Axis::default()
                .bounds([0.0, right])
                .labels(x_labels)
                .style(DIM),
        )
        .y_axis(y_axis(lo, hi));
    f.render_widget(chart, area);
}

/// The models' table (every number whole; columns that do not fit are left out and the
/// title says so) and, below, the selected model's rates with their intervals.
fn draw_models(f: &mut Frame, app: &App, d: &ViewData, area: Rect) {
    let (header, cells) = model_table(app, d);
    let [table, rates] = Layout::vertical([
        Constraint::Length(cells.len() as u16 + 2),
        Constraint::Min(4),
    ])
    .areas(area);
    draw_model_table(f, &header, &cells, table);
    // With replicates, the rates give room to the noise floor below them.
    match d
        .mcq(app.research.model)
        .and_then(|x| x.replicates.as_ref())
    {
        Some(r) if rates.height >= 8 => {
            let [rates, noise] =
                Layout::vertical([Constraint::Length(4), Constraint::Min(1)]).areas(rates);
            draw_rates(f, app, d, rates, None);
            super::noise::draw_noise(f, r, noise);
        }
        // No room for the panel: its summary in a line, not nothing.
        Some(r) => {
            let summary = super::noise::noise_summary(r, rates.width as usize);
            draw_rates(f, app, d, rates, Some(summary));
        }
        None => draw_rates(f, app, d, rates, None),
    }
}

/// A row of the models' table: whether it is the model under the cursor, and its cells.
type ModelRow = (bool, Vec<String>);

/// The models' table as text: its header and a row per MCQ model (whether it is the one
/// under the cursor, and its cells): the number of items, then one column per MCQ measure
/// of the table of measures (src/core/measures.rs) with an overview heading. With intervention
/// runs (docs/measures.md §11), their recovery rate per model: one column per intervention
/// protocol, named by its strategy (docs/intervention.md §7).
fn model_table(app: &App, d: &ViewData) -> (Vec<String>, Vec<ModelRow>) {
    use crate::core::analysis::Metrics;
    let m = &app.ds.matrix;
    let r = &app.research;
    let measures: Vec<(&Measure, &str)> = of_task(r.measures, Task::Mcq)
        .filter_map(|x| Some((x, x.overview?)))
        .collect();
    let mcq = || {
        d.analysis.metrics.iter().filter_map(|x| match x {
            Metrics::Mcq(x) => Some(x),
            Metrics::Open(_) => None,
        })
    };
    let mut recovery: Vec<(String, Option<String>)> = mcq()
        .flat_map(|x| x.interventions.iter())
        .map(|v| (v.protocol.clone(), v.strategy.clone()))
        .collect();
    recovery.sort();
    recovery.dedup();
    let mut header: Vec<String> = vec!["model".into(), "items".into()];
    header.extend(measures.iter().map(|(_, heading)| heading.to_string()));
    header.extend(recovery.iter().map(|(_, st)| match st {
        Some(st) => format!("↻{}", s(st)),
        None => "recov".to_string(),
    }));
    let mut cells: Vec<ModelRow> = Vec::new();
    for (i, (mg, metrics)) in d
        .analysis
        .grids
        .models
        .iter()
        .zip(d.analysis.metrics.iter())
        .enumerate()
    {
        let Metrics::Mcq(x) = metrics else {
            continue;
        };
        let mut row = vec![s(m.models.name(mg.model)), format!("{}", x.n_items)];
        row.extend(measures.iter().map(|(k, _)| k.show(k.value_of(metrics))));
        for (protocol, _) in &recovery {
            row.push(
                x.interventions
                    .iter()
                    .find(|v| &v.protocol == protocol)
                    .and_then(|v| v.recovery.recovery_rate)
                    .map_or("–".into(), |r| format!("{r:.1}")),
            );
        }
        cells.push((i == r.model, row));
    }
    (header, cells)
}

/// Draws the models' table: columns as wide as their widest value; those that do not fit
/// beside the model name are left out (the title says so), never cut.
fn draw_model_table(f: &mut Frame, header: &[String], cells: &[ModelRow], area: Rect) {
    let n = header.len();
    let col_w: Vec<usize> = (0..n)
        .map(|c| {
            cells
                .iter()
                .map(|(_, row)| width(&row[c]))
                .chain([width(&header[c])])
                .max()
                .unwrap_or(1)
        })
        .collect();
    let name_min = 8.min(col_w[0]);
    let mut n_cols = n;
    while n_cols > 2
        && name_min + col_w[1..n_cols].iter().map(|w| w + 1).sum::<usize>() > area.width as usize
    {
        n_cols -= 1;
    }
    let name_w = (area.width as usize)
        .saturating_sub(col_w[1..n_cols].iter().map(|w| w + 1).sum::<usize>())
        .min(col_w[0])
        .max(1);
    let rows: Vec<TableRow> = cells
        .iter()
        .map(|(selected, row)| {
            let mut c = vec![Cell::from(fit(&row[0], name_w))];
            c.extend((1..n_cols).map(|j| Cell::from(format!("{:>w$}", row[j], w = col_w[j]))));
            TableRow::new(c).style(if *selected {
                WARN.add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            })
        })
        .collect();
    let mut widths = vec![Constraint::Length(name_w as u16)];
    widths.extend((1..n_cols).map(|j| Constraint::Length(col_w[j] as u16)));
    let head: Vec<Cell> = (0..n_cols)
        .map(|j| {
            if j == 0 {
                Cell::from(header[0].clone())
            } else {
                Cell::from(format!("{:>w$}", header[j], w = col_w[j]))
            }
        })
        .collect();
    let title = if n_cols < n {
        format!(
            " models (%; too narrow for {}) ",
            header[n_cols..].join(", ")
        )
    } else {
        " models (%) ".to_string()
    };
    f.render_widget(
        Table::new(rows, widths)
            .header(TableRow::new(head).style(DIM))
            .block(titled(fit(&title, area.width as usize))),
        area,
    );
}

/// The selected model's harmful and terminal rates with their intervals, on one scale, and
/// `noise` (the noise floor's summary) below them: after the scale's line where there is
/// room, else in its place.
fn draw_rates(f: &mut Frame, app: &App, d: &ViewData, rates: Rect, noise: Option<Line<'static>>) {
    let r = &app.research;
    let iv = r.intervals.get(&d.key);
    let state = if r.asked == Some(d.key) {
        "CI: computing…"
    } else {
        "(no CI)"
    };
    let Some(x) = d.mcq(r.model) else { return };
    let mi = iv.and_then(|v| v.get(r.model).copied().flatten());
    let harmful = mi.map(|i| i.harmful_rate);
    let terminal = mi.map(|i| i.terminal_rate);
    let max = ceil10(
        [
            x.harmful_rate,
            x.terminal_regression_rate,
            harmful.map_or(0.0, |i| i.hi),
            terminal.map_or(0.0, |i| i.hi),
        ]
        .into_iter()
        .fold(0.0, f64::max)
            + 1.0,
    );
    let b = r.params.bootstrap_b;
    let block = titled(format!(" rates with 95% intervals (B={b}) "));
    let inner = block.inner(rates);
    f.render_widget(block, rates);
    let w = (inner.width as usize).saturating_sub(36).clamp(10, 40);
    let line = |label: &str, v: f64, i| {
        Line::from(vec![
            Span::styled(format!("{label:<9}"), DIM),
            Span::styled(interval_bar(v, i, max, w), fg(figures::LOST)),
            Span::raw(format!(" {}", with_interval(v, i, state))),
        ])
    };
    text_at(f, inner, 0, 0, line("harmful", x.harmful_rate, harmful));
    text_at(
        f,
        inner,
        0,
        1,
        line("terminal", x.terminal_regression_rate, terminal),
    );
    let scale = Line::from(Span::styled(
        format!("scale 0–{max:.0}%; ● estimate, ├─┤ interval"),
        DIM,
    ));
    match noise {
        Some(noise) if inner.height < 4 => text_at(f, inner, 0, 2, noise),
        Some(noise) => {
            text_at(f, inner, 0, 2, scale);
            text_at(f, inner, 0, 3, noise);
        }
        None => text_at(f, inner, 0, 2, scale),
    }
}

fn draw_churn(f: &mut Frame, app: &App, x: &McqMetrics, area: Rect) {
    let r = &app.research;
    let steps = x.churn.len();
    let block = titled(" churn per budget step (items) ".into());
    let inner = block.inner(area);
    f.render_widget(block, area);
    if steps == 0 || inner.height < 6 {
        text_at(
            f,
            inner,
            0,
            0,
            Line::from(Span::styled("one budget: no steps", DIM)),
        );
        return;
    }
    // Legend on the first row, labels on the last two, bars in between.
    let mut legend = Vec::new();
    for (p, (label, colour)) in CHURN_PARTS.iter().enumerate() {
        legend.push(Span::styled(
            format!("{}{}", PART_GLYPHS[p], PART_GLYPHS[p]),
            fg(*colour),
        ));
        legend.push(Span::raw(format!(" {label}  ")));
    }
    text_at(f, inner, 0, 0, Line::from(legend));
    let bar_h = inner.height.saturating_sub(5) as usize;
    let slot = (inner.width as usize / steps).clamp(4, 14);
    let bar_w = slot.saturating_sub(2).max(2);
    let n = x.n_items.max(1);
    for (j, c) in x.churn.iter().enumerate() {
        let parts = c.parts();
        // Heights by largest remainder so the parts always fill the bar exactly.
        let exact: Vec<f64> = parts
            .iter()
            .map(|&v| v as f64 * bar_h as f64 / n as f64)
            .collect();
        let mut h: Vec<usize> = exact.iter().map(|v| v.floor() as usize).collect();
        let mut order: Vec<usize> = (0..4).collect();
        order.sort_by(|&a, &b| {
            (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor()))
        });
        let mut left = bar_h.saturating_sub(h.iter().sum());
        for &o in &order {
            if left == 0 {
                break;
            }
            if parts[o] > 0 {
                h[o] += 1;
                left -= 1;
            }
        }
        // A part with items is drawn, if only one row high (taken from the tallest), so
        // that the part the status line selects is on screen.
        for p in 0..4 {
            if parts[p] > 0 && h[p] == 0 {
                let tallest = (0..4).max_by_key(|&q| h[q]).unwrap_or(p);
                if h[tallest] > 1 {
                    h[tallest] -= 1;
                    h[p] = 1;
                }
            }
        }
        let x0 = (j * slot) as u16;
        if x0 + bar_w as u16 > inner.width {
            break;
        }
        let mut y = bar_h;
        for p in 0..4 {
            let selected = r.focus == j && r.part == p;
            let mut style = fg(CHURN_PARTS[p].1);
            if selected {
                style = style.add_modifier(Modifier::REVERSED);
            }
            for _ in 0..h[p] {
                y -= 1;
                let glyph: String = std::iter::repeat_n(PART_GLYPHS[p], bar_w).collect();
                text_at(
                    f,
                    inner,
                    x0,
                    1 + y as u16,
                    Line::from(Span::styled(glyph, style)),
                );
            }
        }
        let lstyle = if r.focus == j {
            WARN.add_modifier(Modifier::BOLD)
        } else {
            DIM
        };
        // Budget names on two rows ("from", "→to") so long names are not cut.
        let from = fit(&s(&c.from), slot - 1);
        let to = fit(&format!("→{}", s(&c.to)), slot - 1);
        text_at(
            f,
            inner,
            x0,
            1 + bar_h as u16,
            Line::from(Span::styled(from, lstyle)),
        );
        text_at(
            f,
            inner,
            x0,
            2 + bar_h as u16,
            Line::from(Span::styled(to, lstyle)),
        );
        text_at(
            f,
            inner,
            x0,
            3 + bar_h as u16,
            Line::from(Span::styled(
                format!("+{} −{}", c.wrong_to_correct, c.correct_to_wrong),
                DIM,
            )),
        );
    }
    if r.focus < steps {
        let c = &x.churn[r.focus];
        let counts = c.parts();
        text_at(
            f,
            inner,
            0,
            inner.height - 1,
            Line::from(vec![
                Span::styled("▶ ", WARN),
                Span::raw(format!(
                    "{}→{} {}: {} {} ({})",
                    s(&c.from),
                    s(&c.to),
                    CHURN_PARTS[r.part].0,
                    counts[r.part],
                    if counts[r.part] == 1 { "item" } else { "items" },
                    research_hints(
                        app,
                        &[
                            (&[Action::Up, Action::Down], "", " part"),
                            (&[Action::Select], "", ": queue"),
                        ]
                    )
                    .replace(" · ", ", ")
                )),
            ]),
        );
    }
}

fn draw_classes(f: &mut Frame, app: &App, x: &McqMetrics, area: Rect) {
    let r = &app.research;
    let steps = x.churn.len();
    let block = titled(" trajectory classes (items) ".into());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let n = x.n_items.max(1);
    let bar_w = (inner.width as usize).saturating_sub(32).max(4);
    let classes = Class::ALL.len();
    // A blank row between classes where there is room for them and the keys (12 rows),
    // else one row each: the smallest screen (80x24) has 7 rows here.
    let h = inner.height as usize;
    let step = if h >= 2 * classes + 2 { 2 } else { 1 };
    for (i, c) in Class::ALL.iter().enumerate() {
        let count = x.classes.get(*c);
        let selected = r.focus == steps + i;
        let filled = (count * bar_w).div_ceil(n).min(bar_w);
        let label_style = if selected {
            WARN.add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else {
            Style::new()
        };
        text_at(
            f,
            inner,
            0,
            (i * step) as u16,
            Line::from(vec![
                Span::styled(if selected { "▶ " } else { "  " }, WARN),
                Span::styled(format!("{:<13}", class_label(*c)), label_style),
                Span::styled("█".repeat(filled), fg(class_colour(*c))),
                Span::styled("·".repeat(bar_w - filled), DIM),
                Span::raw(format!(
                    " {count:>5} {:>5.1}%",
                    100.0 * count as f64 / n as f64
                )),
            ]),
        );
    }
    // The keys below the classes, a row apart where there is one.
    if h <= (classes - 1) * step + 1 {
        return;
    }
    let keys_row = (classes * step + 1).min(h - 1);
    text_at(
        f,
        inner,
        0,
        keys_row as u16,
        Line::from(Span::styled(
            research_hints(
                app,
                &[
                    (&[Action::Left, Action::Right], "", " bars and classes"),
                    (&[Action::Select], "", ": these items in the queue"),
                ],
            ),
            DIM,
        )),
    );
}
