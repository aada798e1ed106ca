//! Drawing: a pure function of the app state onto a ratatui frame. No I/O here. Every string
//! from a data file goes through `sanitize` before it reaches the buffer.

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row as TableRow, Table, Wrap};

use super::app::{App, Input, Screen};
use super::keymap::Context;
use super::research::View;
use super::search::match_positions;
use crate::core::analysis::Metrics;
use crate::core::audit::Status;
use crate::core::text::sanitize;

/// The smallest terminal the layout is designed for.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

pub(super) const DIM: Style = Style::new().fg(Color::DarkGray);
pub(super) const RIGHT: Style = Style::new().fg(Color::Green);
pub(super) const WRONG: Style = Style::new().fg(Color::Red);
pub(super) const ACCENT: Style = Style::new().fg(Color::Cyan);
pub(super) const WARN: Style = Style::new().fg(Color::Yellow);

pub(super) fn s(text: &str) -> String {
    sanitize(text).into_owned()
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &mut App) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "frameaudit needs a terminal of at least {MIN_WIDTH}x{MIN_HEIGHT}; this one is {}x{}.\nMake the window larger (q quits).",
            area.width, area.height
        );
        f.render_widget(
            Paragraph::new(msg)
                .alignment(Alignment::Center)
                .wrap(Wrap { trim: true }),
            area,
        );
        return;
    }
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(5),
        Constraint::Length(2),
    ])
    .areas(area);
    draw_header(f, app, header);
    match app.screen {
        Screen::Queue => draw_queue(f, app, body),
        Screen::Item => draw_item(f, app, body),
        Screen::Research(v) => draw_research(f, app, v, body),
    }
    draw_footer(f, app, footer);
    if app.help {
        draw_help(f, app, area);
    }
}

fn draw_header(f: &mut Frame, app: &App, area: Rect) {
    let m = &app.ds.matrix;
    let (done, skipped, flagged, left) = app.progress();
    let o = &app.overview;
    let range = |(lo, hi): (f64, f64)| {
        if (hi - lo).abs() < 0.05 {
            format!("{lo:.1}")
        } else {
            format!("{lo:.1}–{hi:.1}")
        }
    };
    let mut line1 = vec![
        Span::styled("frameaudit", ACCENT.add_modifier(Modifier::BOLD)),
        Span::raw(format!(
            " · {} · {}",
            s(&app.ds.name),
            s(m.protocols.name(app.protocol))
        )),
        Span::styled(
            format!(
                " · {} models · {} configs · {} items",
                o.models, o.configs, o.items
            ),
            DIM,
        ),
    ];
    if let (Some(h), Some(r)) = (o.harmful, o.headroom) {
        line1.push(Span::raw(format!(
            " · harmful {}% · headroom +{}",
            range(h),
            range(r)
        )));
    }
    let save = app.session.save_state();
    let save_span = if let Some(err) = app.session.last_error() {
        Span::styled(
            format!(
                "NOT SAVED: {} change(s) pending, retrying every second: {}",
                app.session.unsaved(),
                s(&err)
            ),
            WRONG.add_modifier(Modifier::BOLD),
        )
    } else {
        Span::styled(
            save,
            if app.session.unsaved() > 0 {
                WARN
            } else {
                RIGHT
            },
        )
    };
    let line2 = vec![
        Span::raw(format!(
            "done {done} · skipped {skipped} · flagged {flagged} · left {left}"
        )),
        Span::styled(
            format!(" · {:.1} items/min · ", app.items_per_minute()),
            DIM,
        ),
        save_span,
        Span::styled(format!(" · annotator {}", s(app.session.annotator())), DIM),
    ];
    let mut line2 = line2;
    // What the saver had to do (the file written again) comes right after "saved".
    if let Some(n) = app.session.notice() {
        line2.insert(3, Span::styled(format!(" · {}", s(&n)), WARN));
    }
    if let Some(part) = &app.part {
        line2.push(Span::styled(format!(" · {}", s(part)), WARN));
    }
    f.render_widget(
        Paragraph::new(vec![Line::from(line1), Line::from(line2)]),
        area,
    );
}

/// Trajectory glyphs of a row: ✓ / ✗ per configuration, open tasks as a score shade.
fn trajectory(
    x: &Metrics,
    row: usize,
    k: usize,
    mark: Option<(usize, usize)>,
) -> Vec<Span<'static>> {
    let mut out = Vec::with_capacity(k);
    for c in 0..k {
        let (glyph, style) = match x {
            Metrics::Mcq(x) => {
                if x.items.row(row, k)[c] == 1 {
                    ("✓", RIGHT)
                } else {
                    ("✗", WRONG)
                }
            }
            Metrics::Open(x) => {
                let v = x.items.row(row, k)[c];
                let g =
                    ["·", "░", "▒", "▓", "█"][((v / 100.0) * 4.0).round().clamp(0.0, 4.0) as usize];
                (g, Style::new().fg(Color::Blue))
            }
        };
        let style = match mark {
            Some((a, b)) if c == a || c == b => style.add_modifier(Modifier::REVERSED),
            _ => style,
        };
        out.push(Span::styled(glyph, style));
    }
    out
}

fn status_glyph(st: Status) -> Span<'static> {
    match st {
        Status::Todo => Span::styled("·", DIM),
        Status::Done => Span::styled("✓", RIGHT),
        Status::Skipped => Span::styled("↷", WARN),
        Status::Flagged => Span::styled("⚑", WRONG),
    }
}

/// Text with the characters at `positions` highlighted.
fn highlighted(text: &str, positions: &[usize], base: Style) -> Line<'static> {
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

fn draw_queue(f: &mut Frame, app: &mut App, area: Rect) {
    let show_search = app.input == Input::Search || !app.query.is_empty();
    let [table_area, search_area] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(u16::from(show_search)),
    ])
    .areas(area);
    app.page = table_area.height.saturating_sub(2) as usize;
    let m = &app.ds.matrix;
    let start = app.scroll.min(app.visible.len());
    let end = (start + app.page).min(app.visible.len());
    let widths = |pick: &dyn Fn(super::app::RowNames) -> usize, min: usize, max: usize| {
        app.visible[start..end]
            .iter()
            .map(|&i| pick(app.names(i as usize)))
            .max()
            .unwrap_or(min)
            .clamp(min, max)
    };
    let model_w = widths(&|r| r.model.chars().count(), 5, 22);
    let bench_w = widths(&|r| r.benchmark.chars().count(), 9, 16);
    let item_w = widths(&|r| r.item_id.chars().count(), 4, 18);
    let traj_w = app.visible[start..end]
        .iter()
        .map(|&i| {
            let q = &app.rows[i as usize].q;
            app.report.analyses[q.analysis].grids.models[q.model_index]
                .grid
                .k()
        })
        .max()
        .unwrap_or(4)
        .max(10);
    let rows: Vec<TableRow> = app.visible[start..end]
        .iter()
        .map(|&i| {
            let i = i as usize;
            let r = &app.rows[i];
            let k = app.report.analyses[r.q.analysis].grids.models[r.q.model_index]
                .grid
                .k();
            let names = app.names(i);
            let question = app.question(i);
            let id = s(names.item_id);
            let id_line = highlighted(&id, &match_positions(&id, &app.query), Style::new());
            let question_line =
                highlighted(&question, &match_positions(&question, &app.query), DIM);
            TableRow::new(vec![
                Cell::from(status_glyph(app.status(i))),
                Cell::from(s(names.model)),
                Cell::from(s(names.benchmark)),
                Cell::from(id_line),
                Cell::from(Line::from(trajectory(app.metrics(i), r.q.row, k, None))),
                Cell::from(if r.q.terminal {
                    Span::styled("T", WARN)
                } else {
                    Span::raw(" ")
                }),
                Cell::from(format!("{}", r.q.harmful_pairs)),
                Cell::from(question_line),
            ])
            .style(if app.selected == Some(i as u32) {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            })
        })
        .collect();
    let mut title = vec![Span::styled(
        format!(" audit queue: {} of {} ", app.visible.len(), app.rows.len()),
        ACCENT,
    )];
    let fl = &app.filter;
    let mut filters = Vec::new();
    if let Some(x) = fl.model {
        filters.push(format!("model={}", s(m.models.name(x))));
    }
    if let Some(b) = fl.benchmark {
        filters.push(format!("benchmark={}", s(m.benchmarks.name(b))));
    }
    if let Some(c) = fl.class {
        filters.push(format!("class={}", c.as_str()));
    }
    if let Some(st) = fl.status {
        filters.push(format!("status={}", st.as_str()));
    }
    if let Some(t) = &fl.tag {
        filters.push(format!("tag={}", s(t)));
    }
    if fl.terminal_only {
        filters.push("terminal only".into());
    }
    if let Some(set) = &fl.items {
        filters.push(format!("items: {} ({})", s(&set.label), set.items.len()));
    }
    if !filters.is_empty() {
        title.push(Span::styled(format!("[{}] ", filters.join(" · ")), WARN));
    }
    title.push(Span::styled(format!("sort: {} ", app.sort.label()), DIM));
    let header = TableRow::new(vec![
        "st",
        "model",
        "benchmark",
        "item",
        "trajectory",
        "T",
        "#",
        "question",
    ])
    .style(DIM);
    let table = Table::new(
        rows,
        [
            Constraint::Length(2),
            Constraint::Length(model_w as u16),
            Constraint::Length(bench_w as u16),
            Constraint::Length(item_w as u16),
            Constraint::Length(traj_w as u16),
            Constraint::Length(1),
            Constraint::Length(2),
            Constraint::Min(10),
        ],
    )
    .header(header)
    .block(
        Block::default()
            .borders(Borders::TOP)
            .title(Line::from(title)),
    );
    f.render_widget(table, table_area);
    if app.visible.is_empty() {
        let msg = if app.rows.is_empty() {
            "No item has a harmful transition in this analysis."
        } else {
            "No item matches the filters and search (x clears them)."
        };
        let inner = Rect {
            y: table_area.y + 2,
            height: 1,
            ..table_area
        };
        f.render_widget(Paragraph::new(msg).style(DIM), inner);
    }
    if show_search {
        let state = if app.search_pending() {
            " searching…".to_string()
        } else {
            format!(" {} matches", app.visible.len())
        };
        let cursor = if app.input == Input::Search {
            "▏"
        } else {
            ""
        };
        let line = Line::from(vec![
            Span::styled("/", ACCENT),
            Span::raw(s(&app.query)),
            Span::styled(cursor, ACCENT),
            Span::styled(state, DIM),
        ]);
        f.render_widget(Paragraph::new(line), search_area);
    }
}

fn draw_item(f: &mut Frame, app: &mut App, area: Rect) {
    let Some(i) = app.current() else {
        f.render_widget(
            Paragraph::new("No item selected (q goes back to the queue)."),
            area,
        );
        return;
    };
    let m = &app.ds.matrix;
    let r = &app.rows[i];
    let q = &r.q;
    let mg = &app.report.analyses[q.analysis].grids.models[q.model_index];
    let g = &mg.grid;
    let k = g.k();
    let names = app.config_names(i);
    let pairs = app.pairs(i);
    let pair = pairs.get(app.pair).copied();
    let rec = app.record(i);
    let meta = app.ds.items[q.item as usize].as_ref();
    let pos = app
        .visible
        .iter()
        .position(|&v| v as usize == i)
        .map_or("–".into(), |p| format!("{}", p + 1));

    // Title: unit, place in the queue, status and the transition under audit.
    let mut title = vec![
        Span::styled(
            format!(
                "{} · {} · {}",
                s(app.names(i).model),
                s(app.names(i).benchmark),
                s(app.names(i).item_id)
            ),
            ACCENT.add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("   [{pos}/{}]   ", app.visible.len()), DIM),
        status_glyph(rec.map_or(Status::Todo, |x| x.status)),
        Span::raw(format!(
            " {}",
            rec.map_or(Status::Todo, |x| x.status).as_str()
        )),
    ];
    if let Some((a, b)) = pair {
        title.push(Span::raw("   transition "));
        title.push(Span::styled(
            s(&names[a]),
            RIGHT.add_modifier(Modifier::BOLD),
        ));
        title.push(Span::raw(" → "));
        title.push(Span::styled(
            s(&names[b]),
            WRONG.add_modifier(Modifier::BOLD),
        ));
        let of = if (pairs.len() as u64) < q.harmful_pairs {
            // The queue lists the first MAX_LISTED_PAIRS of the item's transitions.
            format!("{} listed of {}", pairs.len(), q.harmful_pairs)
        } else {
            format!("{}", pairs.len())
        };
        title.push(Span::styled(
            format!(" ({} of {of}, [ ] switch)", app.pair + 1),
            DIM,
        ));
    }
    if q.terminal {
        title.push(Span::styled("  terminal regression", WARN));
    }

    // Question, options, gold.
    let mut qlines = vec![Line::from(title)];
    let question = match meta {
        None => "(no question text: the dataset has no items.jsonl entry)".into(),
        Some(x) => x
            .question
            .as_deref()
            .map_or("(no question text in items.jsonl)".into(), s),
    };
    qlines.push(Line::from(vec![
        Span::styled("Q ", DIM),
        Span::raw(question),
    ]));
    let gold = meta.and_then(|x| x.gold.clone()).or_else(|| {
        mg.cells
            .get(q.row * k)
            .and_then(|&c| m.text(m.cell_gold.get(c as usize)).map(str::to_owned))
    });
    let options = meta
        .map(|x| {
            x.options
                .iter()
                .map(|o| s(o))
                .collect::<Vec<_>>()
                .join("   ")
        })
        .unwrap_or_default();
    qlines.push(Line::from(vec![
        Span::raw(options),
        Span::styled("   gold: ", DIM),
        Span::styled(
            gold.as_deref().map_or("–".into(), s),
            RIGHT.add_modifier(Modifier::BOLD),
        ),
    ]));
    // As many rows as the lines wrap to (a long model name wraps the title).
    let question_block = Paragraph::new(qlines).wrap(Wrap { trim: false });
    let q_height = question_block.line_count(area.width) as u16;
    // In a review, the annotators' records take the place of the other models.
    let (others, others_title): (Vec<Line>, &str) = match &app.review {
        Some(review) => (
            review.panel(&app.key(i), &app.taxonomy, area.width / 2),
            " annotators (A: take the next one's record) ",
        ),
        None => (other_models(app, i), " other models "),
    };
    // Room for the trajectory (rows + header + border), the blind line and the other
    // models; the frames take the rest of the screen.
    let upper_h =
        (k as u16 + 3 + 2 + others.len() as u16 + 1).max(app.taxonomy.pathways.len() as u16 + 3);
    let [top, middle, frames_area] = Layout::vertical([
        Constraint::Length(q_height + 1),
        Constraint::Length(upper_h),
        Constraint::Min(0),
    ])
    .areas(area);
    f.render_widget(
        question_block.block(Block::default().borders(Borders::BOTTOM).border_style(DIM)),
        top,
    );

    // Left: trajectory table (with confidence or score as a bar), blind answer, other
    // models. Right: pathways and note. Below: the frames each budget sampled.
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(middle);
    let x = app.metrics(i);
    let protocol = m.config(g.configs[0]).protocol;
    let blind = m
        .blind(protocol, mg.model, q.item)
        .and_then(|t| m.text(t))
        .map(str::to_owned);
    let mut table_rows = Vec::with_capacity(k);
    for (c, name) in names.iter().enumerate() {
        let cell = mg.cells[q.row * k + c] as usize;
        let conf = m.cell_confidence.get(cell);
        let answer = m
            .text(m.cell_pred.get(cell))
            .map_or("∅".into(), |p| s(p).chars().take(24).collect::<String>());
        let (verdict, style, value) = match x {
            Metrics::Mcq(x) => {
                let right = x.items.row(q.row, k)[c] == 1;
                let v = (!conf.is_nan()).then_some(conf * 100.0);
                (
                    if right {
                        "✓".to_string()
                    } else {
                        "✗".to_string()
                    },
                    if right { RIGHT } else { WRONG },
                    v,
                )
            }
            Metrics::Open(x) => {
                let v = x.items.row(q.row, k)[c];
                (
                    format!("{v:.0}"),
                    if v >= 50.0 { RIGHT } else { WRONG },
                    Some(v),
                )
            }
        };
        let mut row_style = Style::new();
        if let Some((a, b)) = pair {
            if c == a {
                row_style = Style::new().bg(Color::Rgb(0, 60, 0));
            } else if c == b {
                row_style = Style::new().bg(Color::Rgb(80, 0, 0));
            }
        }
        let variant = if g.is_variant[c] { "*" } else { "" };
        let shown = match x {
            Metrics::Mcq(_) if conf.is_nan() => "–".to_string(),
            Metrics::Mcq(_) => format!("{conf:.2}"),
            Metrics::Open(_) => String::new(),
        };
        table_rows.push(
            TableRow::new(vec![
                Cell::from(format!("{}{variant}", s(name))),
                Cell::from(format!("{}", g.frames(m, c))),
                Cell::from(answer),
                Cell::from(Span::styled(verdict, style)),
                Cell::from(shown),
                Cell::from(Span::styled(
                    value.map_or(String::new(), |v| crate::cli::term::bar(v, 100.0, 10)),
                    style,
                )),
            ])
            .style(row_style),
        );
    }
    let [traj_area, blind_area, others_area] = Layout::vertical([
        Constraint::Length(k as u16 + 2),
        Constraint::Length(2),
        Constraint::Min(2),
    ])
    .areas(left);
    let value_title = if matches!(x, Metrics::Open(_)) {
        "score"
    } else {
        "conf"
    };
    let table = Table::new(
        table_rows,
        [
            Constraint::Length(12),
            Constraint::Length(6),
            Constraint::Min(6),
            Constraint::Length(4),
            Constraint::Length(5),
            Constraint::Length(10),
        ],
    )
    .header(TableRow::new(vec!["config", "frames", "answer", "", value_title, ""]).style(DIM))
    .block(
        Block::default()
            .borders(Borders::TOP)
            .title(Span::styled(" trajectory ", ACCENT))
            .border_style(DIM),
    );
    f.render_widget(table, traj_area);

    let blind_line = match (&blind, pair) {
        (Some(z), Some((_, b))) => {
            let wrong = m
                .text(m.cell_pred_norm.get(mg.cells[q.row * k + b] as usize))
                .unwrap_or("");
            if wrong == z {
                Line::from(vec![
                    Span::styled("blind answer ", DIM),
                    Span::raw(s(z)),
                    Span::styled(
                        format!(
                            " = the wrong answer at {}: the language prior took over",
                            s(&names[b])
                        ),
                        WARN,
                    ),
                ])
            } else {
                Line::from(vec![
                    Span::styled("blind answer ", DIM),
                    Span::raw(s(z)),
                    Span::styled(
                        format!(" ≠ the wrong answer at {} ({})", s(&names[b]), s(wrong)),
                        DIM,
                    ),
                ])
            }
        }
        (Some(z), None) => Line::from(vec![Span::styled("blind answer ", DIM), Span::raw(s(z))]),
        (None, _) => Line::from(Span::styled(
            "no blind answer (no text-only run of this item)",
            DIM,
        )),
    };
    f.render_widget(
        Paragraph::new(blind_line).wrap(Wrap { trim: true }),
        blind_area,
    );
    f.render_widget(
        Paragraph::new(others).block(
            Block::default()
                .borders(Borders::TOP)
                .title(Span::styled(others_title, ACCENT))
                .border_style(DIM),
        ),
        others_area,
    );

    let mut tag_lines = Vec::new();
    for p in &app.taxonomy.pathways {
        let on = rec.is_some_and(|x| x.pathways.contains(&p.id));
        let primary = rec.is_some_and(|x| x.primary.as_ref() == Some(&p.id));
        let style = if on {
            RIGHT.add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        tag_lines.push(Line::from(vec![
            Span::styled(format!("{} ", s(&p.key)), ACCENT),
            Span::styled(if on { "[x] " } else { "[ ] " }, style),
            Span::styled(s(&p.label), style),
            Span::styled(if primary { " ★ primary" } else { "" }, WARN),
        ]));
    }
    let note = match &app.input {
        Input::Note(buf) => Line::from(vec![
            Span::styled("note: ", ACCENT),
            Span::raw(s(buf)),
            Span::styled("▏ (Enter saves, Esc cancels)", ACCENT),
        ]),
        _ => Line::from(vec![
            Span::styled("note: ", DIM),
            Span::raw(rec.map_or(String::new(), |x| s(&x.note))),
        ]),
    };
    tag_lines.push(note);
    f.render_widget(
        Paragraph::new(tag_lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::TOP)
                .title(Span::styled(" evidence pathways ", ACCENT))
                .border_style(DIM),
        ),
        right,
    );
    super::frames_view::draw_frames(f, app, i, frames_area);
}

/// The same item's trajectories under the other models, one line each.
fn other_models(app: &App, i: usize) -> Vec<Line<'static>> {
    let r = &app.rows[i];
    let m = &app.ds.matrix;
    let a = &app.report.analyses[r.q.analysis];
    let mut out = Vec::new();
    for (mg, x) in a.grids.models.iter().zip(&a.metrics) {
        if mg.model == r.q.model {
            continue;
        }
        let Ok(row) = mg.grid.items.binary_search(&r.q.item) else {
            out.push(Line::from(vec![
                Span::raw(format!("{:<16} ", s(m.models.name(mg.model)))),
                Span::styled("not in its grid", DIM),
            ]));
            continue;
        };
        let k = mg.grid.k();
        let mut spans = vec![Span::raw(format!(
            "{:<16} ",
            s(m.models.name(mg.model))
                .chars()
                .take(16)
                .collect::<String>()
        ))];
        spans.extend(trajectory(x, row, k, None));
        let names: Vec<String> = mg
            .grid
            .configs
            .iter()
            .map(|&c| s(&m.config(c).name))
            .collect();
        spans.push(Span::styled(format!("  {}", names.join(" ")), DIM));
        out.push(Line::from(spans));
    }
    if out.is_empty() {
        out.push(Line::from(Span::styled(
            "no other model in this analysis",
            DIM,
        )));
    }
    out
}

/// A researcher view: the tabs and analysis line, then the view itself.
fn draw_research(f: &mut Frame, app: &App, v: View, area: Rect) {
    let Some(d) = app.research.current().cloned() else {
        f.render_widget(
            Paragraph::new("This dataset has no analysis to show (q goes back).").style(DIM),
            area,
        );
        return;
    };
    let [tabs, body] = Layout::vertical([Constraint::Length(3), Constraint::Min(5)]).areas(area);
    super::charts::draw_tabs(f, app, v, &d, tabs);
    match v {
        View::Overview => super::overview::draw(f, app, &d, body),
        View::Complementarity => super::complementarity::draw(f, app, &d, body),
        View::DataMap => super::datamap::draw(f, app, &d, body),
        View::Cascade => super::cascade_view::draw(f, app, &d, body),
        View::Protocols => super::protocols::draw(f, app, &d, body),
        View::Findings => super::findings::draw(f, app, &d, body),
    }
}

fn draw_footer(f: &mut Frame, app: &App, area: Rect) {
    let ctx = app.screen.context();
    let mut spans = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for b in app.keymap.for_context(ctx) {
        let Some(label) = &b.footer else { continue };
        if !seen.insert(b.action) {
            continue;
        }
        spans.push(Span::styled(
            format!(" {} ", b.key.label()),
            ACCENT.add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::styled(format!("{label} "), DIM));
    }
    if app.screen == Screen::Item {
        let keys: String = app
            .taxonomy
            .pathways
            .iter()
            .map(|p| p.key.clone())
            .collect::<Vec<_>>()
            .join("");
        spans.push(Span::styled(
            format!(" {} ", s(&keys)),
            ACCENT.add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::styled("pathways ", DIM));
    }
    let notice = app.notice.as_ref().map(|n| {
        Line::from(Span::styled(
            s(&n.text),
            if n.error {
                WRONG.add_modifier(Modifier::BOLD)
            } else {
                WARN
            },
        ))
    });
    let lines = vec![notice.unwrap_or_default(), Line::from(spans)];
    f.render_widget(Paragraph::new(lines), area);
}

fn draw_help(f: &mut Frame, app: &App, area: Rect) {
    let ctx = app.screen.context();
    let w = area.width.saturating_sub(8).min(90);
    let h = area.height.saturating_sub(4);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + 2,
        width: w,
        height: h,
    };
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "Keys on the {} screen (any key closes this help)",
            ctx.as_str()
        ),
        ACCENT.add_modifier(Modifier::BOLD),
    ))];
    // One line per action, with all its keys; pathways are listed with the taxonomy below.
    let mut actions: Vec<(super::action::Action, Vec<String>, String, bool)> = Vec::new();
    for b in app.keymap.for_context(ctx) {
        if matches!(b.action, super::action::Action::TogglePathway(_)) {
            continue;
        }
        match actions.iter_mut().find(|(a, _, _, _)| *a == b.action) {
            Some(entry) => entry.1.push(b.key.label()),
            None => actions.push((
                b.action,
                vec![b.key.label()],
                b.desc.clone(),
                b.context == Context::Global,
            )),
        }
    }
    for (_, keys, desc, global) in actions {
        lines.push(Line::from(vec![
            Span::styled(format!("{:>12}  ", keys.join(" ")), ACCENT),
            Span::raw(desc),
            Span::styled(if global { "  (everywhere)" } else { "" }, DIM),
        ]));
    }
    if ctx == Context::Item {
        lines.push(Line::from(""));
        for p in &app.taxonomy.pathways {
            lines.push(Line::from(vec![
                Span::styled(format!("{:>12}  ", s(&p.key)), ACCENT),
                Span::raw(s(&p.label)),
                Span::styled(format!(": {}", s(&p.description)), DIM),
            ]));
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "In the search and note editors: type, Backspace, C-u clears, Enter keeps, Esc cancels.",
        DIM,
    )));
    f.render_widget(Clear, popup);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL).title(" help ")),
        popup,
    );
}
