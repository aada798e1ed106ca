//! Drawing: a pure function of the app state onto a ratatui frame. No I/O here. Every string
//! from a data file goes through `sanitize` before it reaches the buffer.

mod cascade;
pub mod charts;
mod complementarity;
mod datamap;
pub mod findings;

pub mod frames;
mod help;
mod overview;
mod pick;
mod protocols;
mod review;
pub mod theme;

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TableRow, Table, Wrap};

use crate::core::analysis::Metrics;
use crate::core::audit::Status;
use crate::core::queue::HarmfulTransition;
use crate::core::workspace::search::match_positions;
use crate::tui::app::{App, Drawn, Input, QueueHit, Screen};
use crate::tui::fit::{fit, fit_line, fit_whole, pad, width};
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::research::View;
use theme::{ACCENT, DIM, RIGHT, WARN, WRONG, highlighted, id, panes, s};

/// The smallest terminal the layout is designed for.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// Draws the whole screen and says what it needs (see [`Drawn`]).
pub fn draw(f: &mut Frame, app: &App) -> Drawn {
    let mut out = Drawn::default();
    draw_screen(f, app, &mut out);
    out
}

/// Draws into `term` and applies what the draw asked for; when that made pictures
/// drawable, draws once more so they show now rather than at the next event.
pub fn render<B: ratatui::backend::Backend>(
    term: &mut ratatui::Terminal<B>,
    app: &mut App,
) -> Result<(), B::Error> {
    let mut drawn = Drawn::default();
    term.draw(|f| drawn = draw(f, app))?;
    if app.after_draw(drawn) {
        let mut again = Drawn::default();
        term.draw(|f| again = draw(f, app))?;
        app.after_draw(again);
    }
    Ok(())
}

fn draw_screen(f: &mut Frame, app: &App, out: &mut Drawn) {
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
        Screen::Queue => draw_queue(f, app, body, out),
        Screen::Item => draw_item(f, app, body, out),
        Screen::Research(v) => draw_research(f, app, v, body),
    }
    draw_footer(f, app, footer);
    if app.overlays.help {
        help::draw(f, app, area);
        out.help = Some(help::bounds(app, area));
    }
    if let Some(pick) = &app.overlays.pick {
        pick::draw(f, pick, area);
    }
    if app.no_color {
        strip_colour(f.buffer_mut());
    }
}

/// `NO_COLOR`: every cell in the terminal's own colours; bold, reverse and the glyphs stay,
/// and they alone mark what colour marks elsewhere.
fn strip_colour(buf: &mut ratatui::buffer::Buffer) {
    for cell in &mut buf.content {
        cell.set_fg(Color::Reset).set_bg(Color::Reset);
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
        Span::raw(fit(
            &format!(
                " · {} · {}",
                s(&app.ds.name),
                s(m.protocols.name(app.protocol))
            ),
            (area.width as usize / 2).max(12),
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
        // Two segments: the header leaves out what does not fit whole, never half a number.
        line1.push(Span::raw(format!(" · harmful {}%", range(h))));
        line1.push(Span::raw(format!(" · headroom +{}", range(r))));
    }
    let mut save = app.session.save_state();
    if let crate::core::workspace::session::Hold::OtherData { .. } = app.session.hold()
        && let Some(key) = app.keymap.hint(Context::Global, Action::GoOnWithThisData)
    {
        save.push_str(&format!(" ({key} writes)"));
    }
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
    if let Some(part) = &app.queue.part {
        line2.push(Span::styled(format!(" · {}", s(part)), WARN));
    }
    let w = area.width as usize;
    f.render_widget(
        Paragraph::new(vec![
            fit_whole(Line::from(line1), w),
            fit_line(Line::from(line2), w),
        ]),
        area,
    );
}

/// Trajectory glyphs of a row: ✓ / ✗ per configuration, open tasks as a score shade.
fn trajectory(
    x: &Metrics,
    row: usize,
    k: usize,
    mark: Option<HarmfulTransition>,
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
            Some(t) if c == t.lower || c == t.higher => style.add_modifier(Modifier::REVERSED),
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

/// The queue's text columns, in cells, fitted to the table's width.
#[derive(Clone, Copy)]
struct QueueWidths {
    model: usize,
    bench: usize,
    item: usize,
    /// Cells per configuration in the trajectory (the glyph, then room for its name).
    per_config: usize,
    k: usize,
    count: usize,
    pathway: usize,
    question: usize,
}

/// Pathway column: only where the question keeps a useful width beside it.
const PATHWAY_W: usize = 14;
const PATHWAY_FROM: u16 = 120;

impl QueueWidths {
    fn columns(&self) -> Vec<Constraint> {
        let mut c = vec![
            Constraint::Length(2),
            Constraint::Length(self.model as u16),
            Constraint::Length(self.bench as u16),
            Constraint::Length(self.item as u16),
            Constraint::Length((self.per_config * self.k).max(10) as u16),
            Constraint::Length(1),
            Constraint::Length(self.count as u16),
        ];
        if self.pathway > 0 {
            c.push(Constraint::Length(self.pathway as u16));
        }
        c.push(Constraint::Length(self.question as u16));
        c
    }
}

/// The record's primary pathway, else its tags, as the queue's pathway column shows them.
fn pathway_text(app: &App, i: usize) -> String {
    let Some(rec) = app.record(i) else {
        return String::new();
    };
    match &rec.primary {
        Some(p) => format!("★{}", s(p)),
        None => rec
            .pathways
            .iter()
            .map(|p| s(p))
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// A configuration's name over its trajectory glyph: the part before the first `_` on the
/// first header row, the rest on the second (`64f` over `151k`), each abbreviated to its
/// first `w` cells (an ellipsis would leave no room; the full names are below the table).
fn config_label(name: &str, w: usize) -> (String, String) {
    let (a, b) = name.split_once('_').unwrap_or((name, ""));
    (abbrev(a, w), abbrev(b, w))
}

/// The first `w` cells of `text`.
fn abbrev(text: &str, w: usize) -> String {
    let mut used = 0;
    text.chars()
        .take_while(|c| {
            used += unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
            used <= w
        })
        .collect()
}

fn draw_queue(f: &mut Frame, app: &App, area: Rect, out: &mut Drawn) {
    let show_search = app.overlays.input == Input::Search || !app.queue.query.is_empty();
    let query = app.queue.query.as_str();
    let [table_area, legend_area, search_area] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(u16::from(show_search)),
    ])
    .areas(area);
    let m = &app.ds.matrix;
    let k_of = |r: &crate::tui::app::Row| {
        app.report.analyses[r.q.analysis as usize].grids.models[r.q.model_index as usize]
            .grid
            .k()
    };
    let shown_rows = |page: usize| {
        let start = app.queue.scroll.min(app.queue.visible.len());
        start..(start + page).min(app.queue.visible.len())
    };
    // Widths from the rows a one-row header leaves room for (a superset of those shown).
    let most = shown_rows(table_area.height.saturating_sub(2) as usize);
    let (start, end) = (most.start, most.end);
    let widths = |pick: &dyn Fn(usize) -> usize, min: usize, max: usize| {
        app.queue.visible[start..end]
            .iter()
            .map(|&i| pick(i as usize))
            .max()
            .unwrap_or(min)
            .clamp(min, max)
    };
    let k = widths(&|i| k_of(&app.queue.rows[i]), 1, usize::MAX);
    let count = widths(
        &|i| app.queue.rows[i].q.harmful_pairs.to_string().len(),
        1,
        20,
    );
    let mut w = QueueWidths {
        model: widths(&|i| width(&id(app.names(i).model)), 5, 22),
        bench: widths(&|i| width(&id(app.names(i).benchmark)), 9, 16),
        item: widths(&|i| width(&id(app.names(i).item_id)), 4, 18),
        per_config: 1,
        k,
        count,
        pathway: if table_area.width >= PATHWAY_FROM {
            PATHWAY_W
        } else {
            0
        },
        question: 0,
    };
    let total = table_area.width as usize;
    let used = |w: &QueueWidths| {
        let cols = 8 + usize::from(w.pathway > 0);
        2 + w.model
            + w.bench
            + w.item
            + (w.per_config * w.k).max(10)
            + 1
            + w.count
            + w.pathway
            + (cols - 1)
    };
    // Names first: widen each configuration up to 5 cells while the question keeps 16.
    while w.per_config < 5 && {
        let mut wider = w;
        wider.per_config += 1;
        used(&wider) + 16 <= total
    } {
        w.per_config += 1;
    }
    // On a narrow screen the names give way before the question does.
    for _ in 0..40 {
        if used(&w) + 10 <= total {
            break;
        }
        if w.model > 8 {
            w.model -= 1;
        } else if w.bench > 6 {
            w.bench -= 1;
        } else if w.item > 6 {
            w.item -= 1;
        } else {
            break;
        }
    }
    w.question = total.saturating_sub(used(&w));
    let pc = w.per_config;
    // The header takes two rows when the names shown have two parts (`64f` over `151k`).
    let two_rows = pc >= 3
        && app
            .current()
            .is_some_and(|i| app.config_names(i).iter().any(|n| n.contains('_')));
    let header_h: u16 = if two_rows { 2 } else { 1 };
    let page = table_area.height.saturating_sub(1 + header_h) as usize;
    out.page = Some(page);
    let end = shown_rows(page).end;
    // Where each row is drawn, for a click: below the border and the header.
    let rows_y = table_area.y + 1 + header_h;
    out.queue_hit = Some(QueueHit {
        area: Rect {
            x: table_area.x,
            y: rows_y,
            width: table_area.width,
            height: ((end - start) as u16).min(table_area.bottom().saturating_sub(rows_y)),
        },
        first: start,
    });
    let rows: Vec<TableRow> = app.queue.visible[start..end]
        .iter()
        .map(|&i| {
            let i = i as usize;
            let r = &app.queue.rows[i];
            let k = k_of(r);
            let selected = app.queue.selected == Some(i as u32);
            let names = app.names(i);
            let question = app.question(i);
            let shown_id = id(names.item_id);
            let id_line = fit_line(
                highlighted(&shown_id, &match_positions(&shown_id, query), Style::new()),
                w.item,
            );
            let question_line = fit_line(
                highlighted(&question, &match_positions(&question, query), DIM),
                w.question,
            );
            let mut traj = Vec::with_capacity(k * pc);
            for g in trajectory(app.metrics(i), r.q.row as usize, k, None) {
                traj.push(g);
                traj.push(Span::raw(" ".repeat(pc - 1)));
            }
            let mut cells = vec![
                Cell::from(Line::from(vec![
                    Span::raw(if selected { "▶" } else { " " }),
                    status_glyph(app.status(i)),
                ])),
                Cell::from(fit(&id(names.model), w.model)),
                Cell::from(fit(&id(names.benchmark), w.bench)),
                Cell::from(id_line),
                Cell::from(Line::from(traj)),
                Cell::from(if r.q.terminal {
                    Span::styled("T", WARN)
                } else {
                    Span::raw(" ")
                }),
                Cell::from(format!("{:>w$}", r.q.harmful_pairs, w = w.count)),
            ];
            if w.pathway > 0 {
                cells.push(Cell::from(fit(&pathway_text(app, i), w.pathway)));
            }
            cells.push(Cell::from(question_line));
            TableRow::new(cells).style(if selected {
                Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
            } else {
                Style::new()
            })
        })
        .collect();
    let mut title = vec![Span::styled(
        format!(
            " audit queue: {} of {} ",
            app.queue.visible.len(),
            app.queue.rows.len()
        ),
        ACCENT,
    )];
    let fl = &app.queue.filter;
    let mut filters = Vec::new();
    if let Some(x) = fl.model {
        filters.push(format!("model={}", s(m.models.name(x))));
    }
    if let Some(b) = fl.benchmark {
        filters.push(format!("benchmark={}", s(m.benchmarks.name(b))));
    }
    if let Some(c) = fl.class {
        filters.push(format!("class={}", class_filter_label(c)));
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
    title.push(Span::styled(
        format!("sort: {} ", app.queue.sort.label()),
        DIM,
    ));
    // Over the trajectory glyphs: the names of the selected row's configurations.
    let head_names = app
        .current()
        .map(|i| app.config_names(i))
        .unwrap_or_default();
    let traj_head: Vec<Line> = if pc >= 3 && !two_rows {
        let names: Vec<String> = head_names
            .iter()
            .map(|n| pad(&abbrev(&s(n), pc - 1), pc))
            .collect();
        vec![Line::from(names.concat())]
    } else if pc >= 3 {
        let mut top = Vec::new();
        let mut bottom = Vec::new();
        for n in &head_names {
            let (a, b) = config_label(&s(n), pc - 1);
            top.push(pad(&a, pc));
            bottom.push(pad(&b, pc));
        }
        vec![Line::from(top.concat()), Line::from(bottom.concat())]
    } else {
        vec![Line::from("trajectory")]
    };
    let mut head = vec![
        Cell::from("st"),
        Cell::from(fit("model", w.model)),
        Cell::from(fit("benchmark", w.bench)),
        Cell::from("item"),
        Cell::from(traj_head),
        Cell::from("T"),
        Cell::from(fit("#", w.count)),
    ];
    if w.pathway > 0 {
        head.push(Cell::from("pathway"));
    }
    head.push(Cell::from("question"));
    let header = TableRow::new(head).height(header_h).style(DIM);
    let table = Table::new(rows, w.columns()).header(header).block(
        Block::default()
            .borders(Borders::TOP)
            .title(fit_line(Line::from(title), total.saturating_sub(2))),
    );
    f.render_widget(table, table_area);
    if app.queue.visible.is_empty() {
        let msg = if app.queue.rows.is_empty() {
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
            format!(" {} matches", app.queue.visible.len())
        };
        // The query in the room the state leaves; while typed, a window that keeps the
        // terminal's cursor in sight.
        let room = total.saturating_sub(1 + width(&state));
        let (text, cursor) = if app.overlays.input == Input::Search {
            let v = app.queue.query.view(room);
            (v.text, Some(v.cursor))
        } else {
            (fit(&s(query), room), None)
        };
        let line = Line::from(vec![
            Span::styled("/", ACCENT),
            Span::raw(text),
            Span::styled(state, DIM),
        ]);
        f.render_widget(Paragraph::new(fit_line(line, total)), search_area);
        if let Some(c) = cursor
            && search_area.height > 0
        {
            f.set_cursor_position((search_area.x + 1 + c as u16, search_area.y));
        }
    }
    // Below the table: the selected row's trajectory with every configuration named.
    let legend = match app.current() {
        Some(i) => {
            let r = &app.queue.rows[i];
            let mut spans = vec![Span::styled(format!("▶ {}: ", id(app.names(i).model)), DIM)];
            let glyphs = trajectory(app.metrics(i), r.q.row as usize, k_of(r), None);
            for (n, g) in app.config_names(i).iter().zip(glyphs) {
                spans.push(Span::styled(format!("{} ", s(n)), DIM));
                spans.push(g);
                spans.push(Span::raw("  "));
            }
            spans.push(Span::styled("· ? explains every column", DIM));
            Line::from(spans)
        }
        None => Line::from(Span::styled("? explains every column", DIM)),
    };
    f.render_widget(Paragraph::new(fit_line(legend, total)), legend_area);
}

fn draw_item(f: &mut Frame, app: &App, area: Rect, out: &mut Drawn) {
    let Some(i) = app.current() else {
        f.render_widget(
            Paragraph::new("No item selected (q goes back to the queue)."),
            area,
        );
        return;
    };
    let m = &app.ds.matrix;
    let r = &app.queue.rows[i];
    let q = &r.q;
    let mg = &app.report.analyses[q.analysis as usize].grids.models[q.model_index as usize];
    let g = &mg.grid;
    let k = g.k();
    let names = app.config_names(i);
    let pairs = app.pairs(i);
    let pair = pairs.get(app.item.pair).copied();
    let rec = app.record(i);
    let meta = app.ds.item_meta(q.item);
    let pos = app
        .queue
        .visible
        .iter()
        .position(|&v| v as usize == i)
        .map_or("–".into(), |p| format!("{}", p + 1));

    // Title: unit, place in the queue, status and the transition under audit.
    let mut title = vec![
        Span::styled(
            format!(
                "{} · {} · {}",
                id(app.names(i).model),
                id(app.names(i).benchmark),
                id(app.names(i).item_id)
            ),
            ACCENT.add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("   [{pos}/{}]   ", app.queue.visible.len()), DIM),
        status_glyph(rec.map_or(Status::Todo, |x| x.status)),
        Span::raw(format!(
            " {}",
            rec.map_or(Status::Todo, |x| x.status).as_str()
        )),
    ];
    if let Some(HarmfulTransition {
        lower: a,
        higher: b,
    }) = pair
    {
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
            format!(" ({} of {of}, [ ] switch)", app.item.pair + 1),
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
            .get(q.row as usize * k)
            .and_then(|&c| m.text(m.cell_gold.get(c as usize)).map(str::to_owned))
    });
    let options = meta
        .map(|x| x.options.iter().map(s).collect::<Vec<_>>().join("   "))
        .unwrap_or_default();
    qlines.push(Line::from(vec![
        Span::raw(options),
        Span::styled("   gold: ", DIM),
        Span::styled(
            gold.as_deref().map_or("–".into(), s),
            RIGHT.add_modifier(Modifier::BOLD),
        ),
    ]));
    // In a review, the annotators' records take the place of the other models.
    let (others, others_title): (Vec<Line>, String) = match &app.audits.review {
        Some(review) => (
            review::panel(review, &app.key(i), &app.taxonomy, area.width / 2),
            match app.keymap.hint(Context::Item, Action::TakeAnnotator) {
                Some(k) => format!(" annotators ({}: take the next one's record) ", s(&k)),
                None => " annotators ".into(),
            },
        ),
        None => (other_models(app, i), " other models ".into()),
    };
    // As many rows as the lines wrap to (a long model name wraps the title).
    let wrapped = Paragraph::new(qlines.clone()).wrap(Wrap { trim: false });
    let q_height = wrapped.line_count(area.width) as u16;
    // Room for the trajectory (rows + header + border), the blind line and the other
    // models; the frames take the rest of the screen.
    // The intervention run of this model and item, after the grid's rows, marked as such.
    let interventions = app.intervention_cells(i);
    let runs = k + interventions.len();
    let upper_h =
        (runs as u16 + 3 + 2 + others.len() as u16 + 1).max(app.taxonomy.pathways.len() as u16 + 3);
    // Too short for that and a timeline with thumbnails (80x24): the compact screen, one
    // line each for title, question and options, no other models, and compact frames.
    let compact = area.height < q_height + 1 + upper_h + k as u16 + 8;
    let (question_block, q_height, upper_h) = if compact {
        let w = area.width as usize;
        let lines: Vec<Line> = qlines.into_iter().map(|l| fit_line(l, w)).collect();
        let n = lines.len() as u16;
        // Only the rows the trajectory and the pathways (two columns) need: the rest goes
        // to the frames.
        let needs = (runs as u16 + 3).max(app.taxonomy.pathways.len().div_ceil(2) as u16 + 2);
        let upper = area
            .height
            .saturating_sub(n + 1 + frames::COMPACT_H)
            .clamp(4, needs.max(4));
        (Paragraph::new(lines), n, upper)
    } else {
        (wrapped, q_height, upper_h)
    };
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
    let [left, right] = panes(middle);
    let x = app.metrics(i);
    let protocol = m.config(g.configs[0]).protocol;
    let blind = m
        .blind(protocol, mg.model, q.item)
        .and_then(|t| m.text(t))
        .map(str::to_owned);
    // The bar gives way first when the pane is narrow, so the names keep their 12 cells.
    let bar_w = (left.width as usize).saturating_sub(38).min(10);
    let mut table_rows = Vec::with_capacity(k);
    for (c, name) in names.iter().enumerate() {
        let cell = mg.cells[q.row as usize * k + c] as usize;
        let conf = m.cell_confidence.get(cell);
        let answer = m
            .text(m.cell_pred.get(cell))
            .map_or("∅".into(), |p| s(p).chars().take(24).collect::<String>());
        let (verdict, style, value) = match x {
            Metrics::Mcq(x) => {
                let right = x.items.row(q.row as usize, k)[c] == 1;
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
                let v = x.items.row(q.row as usize, k)[c];
                (
                    format!("{v:.0}"),
                    if v >= 50.0 { RIGHT } else { WRONG },
                    Some(v),
                )
            }
        };
        // The audited pair: a marker and bold, the background colour only as an extra.
        let mut row_style = Style::new();
        let mut marker = " ";
        if let Some(HarmfulTransition {
            lower: a,
            higher: b,
        }) = pair
        {
            if c == a {
                row_style = Style::new()
                    .bg(Color::Rgb(0, 60, 0))
                    .add_modifier(Modifier::BOLD);
                marker = "▸";
            } else if c == b {
                row_style = Style::new()
                    .bg(Color::Rgb(80, 0, 0))
                    .add_modifier(Modifier::BOLD);
                marker = "▸";
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
                Cell::from(fit(&format!("{marker}{}{variant}", s(name)), 12)),
                Cell::from(format!("{}", g.frames(m, c))),
                Cell::from(answer),
                Cell::from(Span::styled(verdict, style)),
                Cell::from(shown),
                Cell::from(Span::styled(
                    value.map_or(String::new(), |v| crate::cli::term::bar(v, 100.0, bar_w)),
                    style,
                )),
            ])
            .style(row_style),
        );
    }
    for (strategy, cell) in &interventions {
        let c = *cell as usize;
        let right = m.cell_value.get(c) == 1.0;
        let conf = m.cell_confidence.get(c);
        let config = m.config(m.cell_config.get(c));
        table_rows.push(TableRow::new(vec![
            Cell::from(Span::styled(
                fit(
                    &match strategy {
                        Some(st) => format!("↻{} {}", s(&config.name), s(st)),
                        None => format!("↻{}", s(&config.name)),
                    },
                    12,
                ),
                ACCENT,
            )),
            Cell::from(format!("{}", config.frames)),
            Cell::from(
                m.text(m.cell_pred.get(c))
                    .map_or("∅".into(), |p| s(p).chars().take(24).collect::<String>()),
            ),
            Cell::from(Span::styled(
                if right { "✓" } else { "✗" },
                if right { RIGHT } else { WRONG },
            )),
            Cell::from(if conf.is_nan() {
                "–".to_string()
            } else {
                format!("{conf:.2}")
            }),
            Cell::from(""),
        ]));
    }
    let rows_shown = runs;
    let [traj_area, blind_area, others_area] = if compact {
        Layout::vertical([
            Constraint::Min(3),
            Constraint::Length(1),
            Constraint::Length(0),
        ])
        .areas(left)
    } else {
        Layout::vertical([
            Constraint::Length(rows_shown as u16 + 2),
            Constraint::Length(2),
            Constraint::Min(2),
        ])
        .areas(left)
    };
    // Fewer rows than configurations: the window that holds the audited pair.
    let fit_rows = (traj_area.height as usize).saturating_sub(2).max(1);
    let first = match pair {
        Some(t) if rows_shown > fit_rows => (t.higher + 1).saturating_sub(fit_rows).min(t.lower),
        _ => 0,
    }
    .min(rows_shown.saturating_sub(fit_rows));
    let traj_title = if rows_shown > fit_rows {
        format!(
            " trajectory {}-{} of {rows_shown} ",
            first + 1,
            (first + fit_rows).min(rows_shown)
        )
    } else if !interventions.is_empty() {
        let runs = if interventions.len() == 1 {
            "run"
        } else {
            "runs"
        };
        format!(
            " trajectory · ↻ intervention {runs} ({}) ",
            s(&app.report.params.intervention_protocol)
        )
    } else {
        " trajectory ".to_string()
    };
    let value_title = if matches!(x, Metrics::Open(_)) {
        "score"
    } else {
        "conf"
    };
    let table = Table::new(
        table_rows.into_iter().skip(first),
        [
            Constraint::Length(12),
            Constraint::Length(6),
            Constraint::Min(6),
            Constraint::Length(4),
            Constraint::Length(5),
            Constraint::Length(bar_w as u16),
        ],
    )
    .header(TableRow::new(vec!["config", "frames", "answer", "", value_title, ""]).style(DIM))
    .block(
        Block::default()
            .borders(Borders::TOP)
            .title(Span::styled(traj_title, ACCENT))
            .border_style(DIM),
    );
    f.render_widget(table, traj_area);

    let blind_line = match (&blind, pair) {
        (Some(z), Some(HarmfulTransition { higher: b, .. })) => {
            let wrong = m
                .text(
                    m.cell_pred_norm
                        .get(mg.cells[q.row as usize * k + b] as usize),
                )
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
    let blind = if compact {
        Paragraph::new(fit_line(blind_line, blind_area.width as usize))
    } else {
        Paragraph::new(blind_line).wrap(Wrap { trim: true })
    };
    f.render_widget(blind, blind_area);
    let others: Vec<Line> = others
        .into_iter()
        .map(|l| fit_line(l, others_area.width as usize))
        .collect();
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
    let note = Line::from(vec![
        Span::styled("note: ", DIM),
        Span::raw(rec.map_or(String::new(), |x| s(&x.note))),
    ]);
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(" evidence pathways ", ACCENT))
        .border_style(DIM);
    let inner = block.inner(right);
    f.render_widget(block, right);
    let tags_h = (tag_lines.len() as u16).min(inner.height.saturating_sub(1));
    let [tags_area, note_area] =
        Layout::vertical([Constraint::Length(tags_h), Constraint::Min(1)]).areas(inner);
    // Pathways in two columns when one is too short for them all (80x24).
    let columns: Vec<Rect> = if tag_lines.len() > tags_area.height as usize {
        Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)])
            .spacing(1)
            .split(tags_area)
            .to_vec()
    } else {
        vec![tags_area]
    };
    let per = tag_lines.len().div_ceil(columns.len());
    for (lines, col) in tag_lines.chunks(per.max(1)).zip(&columns) {
        let lines: Vec<Line> = lines
            .iter()
            .map(|l| fit_line(l.clone(), col.width as usize))
            .collect();
        f.render_widget(Paragraph::new(lines), *col);
    }
    if let Input::Note(editor) = &app.overlays.input {
        draw_note_editor(f, &app.keymap, editor, note_area);
    } else {
        // The note wraps in its pane; on one row it shows its end.
        let note = if note_area.height > 1 {
            Paragraph::new(note).wrap(Wrap { trim: false })
        } else {
            Paragraph::new(fit_tail(note, note_area.width as usize))
        };
        f.render_widget(note, note_area);
    }
    frames::draw_frames(f, app, i, frames_area, compact, out);
}

/// The note being edited: one line that scrolls sideways to keep the terminal's cursor in
/// sight, and below it (where there is room) how to leave; the footer lists the editing
/// keys.
fn draw_note_editor(
    f: &mut Frame,
    keymap: &crate::tui::input::keymap::Keymap,
    editor: &crate::tui::input::line_edit::LineEdit,
    area: Rect,
) {
    const LABEL: &str = "note: ";
    if area.height == 0 || (area.width as usize) <= width(LABEL) {
        return;
    }
    let v = editor.view(area.width as usize - width(LABEL));
    let mut lines = vec![Line::from(vec![
        Span::styled(LABEL, ACCENT.add_modifier(Modifier::BOLD)),
        Span::styled(v.text, Style::new().add_modifier(Modifier::UNDERLINED)),
    ])];
    if area.height > 1 {
        lines.push(fit_line(
            Line::from(Span::styled(
                format!(
                    "{} (the keys are below)",
                    keymap.hints(
                        Context::Note,
                        &[
                            (&[Action::Accept], "", " saves"),
                            (&[Action::Cancel], "", " cancels")
                        ]
                    )
                ),
                DIM,
            )),
            area.width as usize,
        ));
    }
    f.render_widget(Paragraph::new(lines), area);
    f.set_cursor_position((area.x + width(LABEL) as u16 + v.cursor as u16, area.y));
}

/// A line of a label and a text too long for `w` cells: the label, "…", and the end of
/// the text (the note editor's cursor stays in sight).
fn fit_tail(line: Line<'static>, w: usize) -> Line<'static> {
    let total: usize = line.spans.iter().map(|s| width(&s.content)).sum();
    if total <= w || line.spans.len() < 2 {
        return fit_line(line, w);
    }
    let mut spans = line.spans;
    let label = spans.remove(0);
    let rest_w: usize = spans.iter().map(|s| width(&s.content)).sum();
    let mut drop = rest_w + width(&label.content) + 1 - w;
    let mut kept = vec![label, Span::styled("…", DIM)];
    for sp in spans {
        if drop == 0 {
            kept.push(sp);
            continue;
        }
        let mut text = String::new();
        for c in sp.content.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if drop > 0 {
                drop = drop.saturating_sub(cw);
            } else {
                text.push(c);
            }
        }
        kept.push(Span::styled(text, sp.style));
    }
    fit_line(Line::from(kept), w)
}

/// The same item's trajectories under the other models, one line each.
fn other_models(app: &App, i: usize) -> Vec<Line<'static>> {
    let r = &app.queue.rows[i];
    let m = &app.ds.matrix;
    let a = &app.report.analyses[r.q.analysis as usize];
    let mut out = Vec::new();
    for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
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
        let back = app
            .keymap
            .hint(Context::Research, Action::Back)
            .map_or(String::new(), |k| format!(" ({k} goes back)"));
        let text = if app.report.analyses.is_empty() {
            format!("This dataset has no analysis to show{back}.")
        } else {
            format!("Computing this view (the analysis with the cascade sweep)…{back}")
        };
        f.render_widget(Paragraph::new(text).style(DIM), area);
        return;
    };
    let [tabs, body] = Layout::vertical([Constraint::Length(3), Constraint::Min(5)]).areas(area);
    charts::draw_tabs(f, app, v, &d, tabs);
    match v {
        View::Overview => overview::draw(f, app, &d, body),
        View::Complementarity => complementarity::draw(f, app, &d, body),
        View::DataMap => datamap::draw(f, app, &d, body),
        View::Cascade => cascade::draw(f, app, &d, body),
        View::Protocols => protocols::draw(f, app, &d, body),
        View::Findings => findings::draw(f, app, &d, body),
    }
}

/// The footer: a notice line, then the screen's keys as many as fit; when some do not,
/// the line ends with "? more" (the help lists them all).
fn draw_footer(f: &mut Frame, app: &App, area: Rect) {
    let ctx = app.screen.context();
    let mut items: Vec<(String, String)> = Vec::new();
    // While text is typed the screen's keys type it: the footer lists the editor's keys.
    let owned = |keys: &[(&str, &str)]| -> Vec<(String, String)> {
        keys.iter()
            .map(|(k, l)| (k.to_string(), l.to_string()))
            .collect()
    };
    let editing: Option<Vec<(String, String)>> = if app.overlays.pick.is_some() {
        Some(owned(&crate::tui::input::pick::FOOTER))
    } else {
        match app.mode() {
            // The editor's own keys from the keymap, then the editing keys.
            mode @ (Context::Note | Context::Search) => {
                let mut keys = app.keymap.mode_footer(mode);
                keys.extend(owned(&crate::tui::input::line_edit::FOOTER));
                Some(keys)
            }
            _ => None,
        }
    };
    let editing = editing.is_some_and(|keys| {
        for (k, l) in keys {
            items.push((format!(" {k} "), format!("{l} ")));
        }
        true
    });
    let mut seen = std::collections::HashSet::new();
    for b in app.keymap.for_context(ctx) {
        let Some(label) = &b.footer else { continue };
        if editing || !seen.insert(b.action) {
            continue;
        }
        items.push((format!(" {} ", b.key.label()), format!("{label} ")));
    }
    if app.screen == Screen::Item && !editing {
        let keys: String = app
            .taxonomy
            .pathways
            .iter()
            .map(|p| p.key.clone())
            .collect::<Vec<_>>()
            .join("");
        items.push((format!(" {} ", s(&keys)), "pathways ".into()));
    }
    let w = area.width as usize;
    // While typing, `?` is a letter: the keys that do not fit end in "…".
    let more = if editing { " …" } else { " ? more" };
    let total: usize = items.iter().map(|(k, l)| width(k) + width(l)).sum();
    let room = if total > w {
        w.saturating_sub(width(more))
    } else {
        w
    };
    let mut spans = Vec::new();
    let mut used = 0;
    for (k, l) in items {
        let n = width(&k) + width(&l);
        if used + n > room {
            break;
        }
        used += n;
        spans.push(Span::styled(k, ACCENT.add_modifier(Modifier::BOLD)));
        spans.push(Span::styled(l, DIM));
    }
    if total > w {
        spans.push(Span::styled(more, ACCENT.add_modifier(Modifier::BOLD)));
    }
    let notice = app.overlays.notice.as_ref().map(|n| {
        fit_line(
            Line::from(Span::styled(
                s(&n.text),
                if n.error {
                    WRONG.add_modifier(Modifier::BOLD)
                } else {
                    WARN
                },
            )),
            w,
        )
    });
    let lines = vec![notice.unwrap_or_default(), Line::from(spans)];
    f.render_widget(Paragraph::new(lines), area);
}

/// A class filter as the views name classes ("loss", "oscillating"), or the open-ended
/// items, which have no class.
pub fn class_filter_label(c: Option<crate::core::analysis::mcq::Class>) -> &'static str {
    c.map_or("open-ended", crate::core::figures::class_label)
}
