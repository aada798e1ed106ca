//! The queue screen: the table of items with a harmful transition (status, names, the
//! trajectory's glyphs under the configurations' names, or each beside its own where the
//! rows' grids differ, the pathway, the question), its title with the filters in force, the
//! search line and the selected row's legend.

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TableRow, Table};

use super::theme::{ACCENT, DIM, WARN, highlighted, id, s};
use super::{
    class_filter_label, config_labels, labelled, labelled_width, status_glyph, trajectory,
};
use crate::core::queue::Harm;
use crate::core::workspace::search::match_positions;
use crate::tui::app::{App, Drawn, Input, QueueHit};
use crate::tui::fit::{fit, fit_line, fit_middle, head, pad, width};
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;

/// Draws the queue screen and says where its rows are (for a click) and how many fit.
pub(super) fn draw_queue(f: &mut Frame, app: &App, area: Rect, out: &mut Drawn) {
    let show_search = app.overlays.input == Input::Search || !app.queue.query.is_empty();
    let [table_area, legend_area, search_area] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(u16::from(show_search)),
    ])
    .areas(area);
    // Widths from the rows a one-row header leaves room for (a superset of those shown).
    let most = shown_rows(app, table_area.height.saturating_sub(2) as usize);
    let grids = shown_grids(app, most.clone());
    let w = queue_widths(app, most.clone(), &grids, table_area.width as usize);
    // The header names the configurations only when every row shown shares them.
    let head_names: &[String] = match grids.as_slice() {
        [one] if w.labels == 0 => one,
        _ => &[],
    };
    // The header takes two rows when the names shown have two parts (`64f` over `151k`).
    let two_rows = w.per_config >= 3 && head_names.iter().any(|n| n.contains('_'));
    let header_h: u16 = if two_rows { 2 } else { 1 };
    let page = table_area.height.saturating_sub(1 + header_h) as usize;
    out.page = Some(page);
    let shown = most.start..shown_rows(app, page).end;
    // Where each row is drawn, for a click: below the border and the header.
    let rows_y = table_area.y + 1 + header_h;
    out.queue_hit = Some(QueueHit {
        area: Rect {
            x: table_area.x,
            y: rows_y,
            width: table_area.width,
            height: (shown.len() as u16).min(table_area.bottom().saturating_sub(rows_y)),
        },
        first: shown.start,
    });
    let total = table_area.width as usize;
    let table = Table::new(queue_rows(app, &w, shown), w.columns())
        .header(queue_header(head_names, &w, two_rows, header_h))
        .block(Block::default().borders(Borders::TOP).title(fit_line(
            queue_title(app, total.saturating_sub(2)),
            total.saturating_sub(2),
        )));
    f.render_widget(table, table_area);
    if app.queue.visible.is_empty() {
        let msg = if app.queue.rows.is_empty() {
            "No item has a harmful transition in this analysis.".to_string()
        } else {
            match app.keymap.hint(Context::Queue, Action::ClearFilters) {
                Some(k) => format!(
                    "No item matches the filters and search ({} clears them).",
                    s(&k)
                ),
                None => "No item matches the filters and search.".to_string(),
            }
        };
        let inner = Rect {
            y: table_area.y + 2,
            height: 1,
            ..table_area
        };
        f.render_widget(Paragraph::new(msg).style(DIM), inner);
    }
    if show_search {
        draw_search_line(f, app, search_area);
    }
    f.render_widget(
        Paragraph::new(fit_line(selected_legend(app), total)),
        legend_area,
    );
}

/// The positions in `visible` of the rows a table of `page` rows shows, from the scroll.
fn shown_rows(app: &App, page: usize) -> Range<usize> {
    let start = app.queue.scroll.min(app.queue.visible.len());
    start..(start + page).min(app.queue.visible.len())
}

/// The configurations of a row's model grid.
fn k_of(app: &App, r: &crate::tui::app::Row) -> usize {
    app.report.analyses[r.q.analysis as usize].grids.models[r.q.model_index as usize]
        .grid
        .k()
}

/// The configurations' names (sanitized) of the grids of the rows at `rows` of `visible`,
/// each grid once, in the order the rows show them.
fn shown_grids(app: &App, rows: Range<usize>) -> Vec<Vec<String>> {
    let mut grids: Vec<Vec<String>> = Vec::new();
    for &i in &app.queue.visible[rows] {
        let names: Vec<String> = app.config_names(i as usize).iter().map(|n| s(n)).collect();
        if !grids.contains(&names) {
            grids.push(names);
        }
    }
    grids
}

/// The columns' widths for the rows at `rows` of `visible` (whose grids are `grids`) on a
/// table `total` cells wide: the names as wide as they need within bounds, each
/// configuration widened for its name while the question keeps 16 cells (in the header
/// when the rows share one grid, else beside each glyph, where labels a cut would make alike
/// stay apart while it keeps 10), and on a narrow screen the names give way first.
fn queue_widths(app: &App, rows: Range<usize>, grids: &[Vec<String>], total: usize) -> QueueWidths {
    let widest = |cells: &dyn Fn(usize) -> usize, min: usize, max: usize| {
        app.queue.visible[rows.clone()]
            .iter()
            .map(|&i| cells(i as usize))
            .max()
            .unwrap_or(min)
            .clamp(min, max)
    };
    let mut w = QueueWidths {
        model: widest(
            &|i| width(app.model_label(app.queue.rows[i].q.model)),
            5,
            22,
        ),
        bench: widest(&|i| width(&id(app.names(i).benchmark)), 9, 16),
        item: widest(&|i| width(&id(app.names(i).item_id)), 4, 18),
        per_config: 1,
        k: widest(&|i| k_of(app, &app.queue.rows[i]), 1, usize::MAX),
        labels: 0,
        labelled: 0,
        count: widest(
            &|i| app.queue.rows[i].q.harmful_pairs.to_string().len(),
            1,
            20,
        ),
        harm: usize::from(app.queue.harms.is_some()),
        pathway: if total >= usize::from(PATHWAY_FROM) {
            PATHWAY_W
        } else {
            0
        },
        question: 0,
    };
    if grids.len() > 1 {
        // Grids differ: each glyph carries its own label, as long as the question keeps 16
        // cells, down to 3 (`16f`); the legend below names the selected row's in full.
        // Labels that a cut would make alike (`32f`, `32f-default`, `32f_1fps`) stay apart
        // while the question keeps 10 (with less, labels give way to bare glyphs below).
        let labels: Vec<Vec<String>> = grids.iter().map(|g| config_labels(g)).collect();
        let at = |l: usize| {
            labels
                .iter()
                .map(|g| labelled_width(g, l))
                .max()
                .unwrap_or(0)
        };
        let apart = |l: usize| {
            labels.iter().all(|g| {
                let cut: std::collections::HashSet<String> = g.iter().map(|x| head(x, l)).collect();
                cut.len() == g.len()
            })
        };
        let apart_from = (3..=LABEL_MAX).find(|&l| apart(l)).unwrap_or(3);
        w.labels = LABEL_MAX;
        w.labelled = at(w.labels);
        while w.labels > 3
            && (w.used() + 16 > total && w.labels > apart_from || w.used() + 10 > total)
        {
            w.labels -= 1;
            w.labelled = at(w.labels);
        }
    }
    // Names first: widen each configuration up to 5 cells while the question keeps 16.
    while w.labels == 0 && w.per_config < 5 && {
        let mut wider = w;
        wider.per_config += 1;
        wider.used() + 16 <= total
    } {
        w.per_config += 1;
    }
    // On a narrow screen the names give way before the question does.
    for _ in 0..40 {
        if w.used() + 10 <= total {
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
    // Too many configurations to label on this width: bare glyphs under a header that
    // names none (the legend below names the selected row's), never under wrong names.
    if w.labels > 0 && w.used() + 10 > total {
        w.labels = 0;
    }
    w.question = total.saturating_sub(w.used());
    w
}

/// The table's rows at `shown` of `visible`: the selection marker and status, the names
/// (the item id with the search's hits), the trajectory, terminal, harmful pairs, the
/// pathway and the question.
fn queue_rows(app: &App, w: &QueueWidths, shown: Range<usize>) -> Vec<TableRow<'static>> {
    let query = app.queue.query.as_str();
    let pc = w.per_config;
    app.queue.visible[shown]
        .iter()
        .map(|&row| {
            let i = row as usize;
            let r = &app.queue.rows[i];
            let selected = app.queue.selected == Some(row);
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
            let glyphs = trajectory(app.metrics(i), r.q.row as usize, k_of(app, r), None);
            let traj = if w.labels > 0 {
                let names: Vec<String> = app.config_names(i).iter().map(|n| s(n)).collect();
                labelled(glyphs, &config_labels(&names), w.labels)
            } else {
                let mut traj = Vec::with_capacity(glyphs.len() * 2);
                for glyph in glyphs {
                    traj.push(glyph);
                    traj.push(Span::raw(" ".repeat(pc - 1)));
                }
                traj
            };
            let mut cells = vec![
                Cell::from(Line::from(vec![
                    Span::raw(if selected { "▶" } else { " " }),
                    status_glyph(app.status(i)),
                ])),
                Cell::from(fit_middle(app.model_label(r.q.model), w.model)),
                Cell::from(fit(&id(names.benchmark), w.bench)),
                Cell::from(id_line),
                Cell::from(Line::from(traj)),
                Cell::from(if r.q.terminal {
                    Span::styled("T", WARN)
                } else {
                    Span::raw(" ")
                }),
            ];
            if w.harm > 0 {
                cells.push(Cell::from(
                    r.shown_harm()
                        .map_or(Span::styled(NOT_JUDGED, DIM), harm_glyph),
                ));
            }
            cells.push(Cell::from(format!(
                "{:>w$}",
                r.q.harmful_pairs,
                w = w.count
            )));
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
        .collect()
}

/// The table's title: the rows shown of all, the replicate counts, the filters in force,
/// the sort; the counts without their names (the help names the glyphs) when the whole
/// title would not fit in `room` cells.
fn queue_title(app: &App, room: usize) -> Line<'static> {
    let full = queue_title_with(app, true);
    if full.width() <= room {
        return full;
    }
    queue_title_with(app, false)
}

/// [`queue_title`], with the counts' names or without.
fn queue_title_with(app: &App, named: bool) -> Line<'static> {
    let m = &app.ds.matrix;
    let mut title = vec![Span::styled(
        format!(
            " audit queue: {} of {} ",
            app.queue.visible.len(),
            app.queue.rows.len()
        ),
        ACCENT,
    )];
    let filter = &app.queue.filter;
    let mut filters = Vec::new();
    if let Some(model) = filter.model {
        filters.push(format!("model={}", s(m.models.name(model))));
    }
    if let Some(bench) = filter.benchmark {
        filters.push(format!("benchmark={}", s(m.benchmarks.name(bench))));
    }
    if let Some(class) = filter.class {
        filters.push(format!("class={}", class_filter_label(class)));
    }
    if let Some(status) = filter.status {
        filters.push(format!("status={}", status.as_str()));
    }
    if let Some(tag) = &filter.tag {
        filters.push(format!("tag={}", s(tag)));
    }
    if filter.terminal_only {
        filters.push("terminal only".into());
    }
    if filter.hide_lottery {
        filters.push("lottery hidden".into());
    }
    if let Some(set) = &filter.items {
        filters.push(format!("items: {} ({})", s(&set.label), set.items.len()));
    }
    if app.replicates_reading() {
        title.push(Span::styled("replicates: reading… ", WARN));
    }
    if let Some(counts) = app.queue.harms {
        let name = |label: &str| {
            if named {
                format!(" {label} ")
            } else {
                " ".to_string()
            }
        };
        for (h, n) in Harm::ALL.iter().zip(counts.by_harm) {
            title.push(harm_glyph(*h));
            title.push(Span::styled(format!("{n}{}", name(h.label())), DIM));
        }
        // Said only when some are shown, so the counts add up to the rows shown.
        if counts.open_ended > 0 {
            title.push(Span::styled(
                format!("{NOT_JUDGED}{}{}", counts.open_ended, name("open-ended")),
                DIM,
            ));
        }
    }
    if !filters.is_empty() {
        title.push(Span::styled(format!("[{}] ", filters.join(" · ")), WARN));
    }
    title.push(Span::styled(
        format!("sort: {} ", app.queue.sort.label()),
        DIM,
    ));
    Line::from(title)
}

/// The table's header; over the trajectory glyphs, `head_names`, the configurations every
/// row shown shares (on two rows when they have two parts), else just `trajectory` (the
/// rows then label their own glyphs).
fn queue_header(
    head_names: &[String],
    w: &QueueWidths,
    two_rows: bool,
    height: u16,
) -> TableRow<'static> {
    let pc = w.per_config;
    let traj_head: Vec<Line> = if head_names.is_empty() || pc < 3 {
        vec![Line::from("trajectory")]
    } else if !two_rows {
        let names: Vec<String> = head_names
            .iter()
            .map(|n| pad(&head(n, pc - 1), pc))
            .collect();
        vec![Line::from(names.concat())]
    } else {
        let mut top = Vec::new();
        let mut bottom = Vec::new();
        for n in head_names {
            let (a, b) = config_label(n, pc - 1);
            top.push(pad(&a, pc));
            bottom.push(pad(&b, pc));
        }
        vec![Line::from(top.concat()), Line::from(bottom.concat())]
    };
    let mut head = vec![
        Cell::from("st"),
        Cell::from(fit("model", w.model)),
        Cell::from(fit("benchmark", w.bench)),
        Cell::from("item"),
        Cell::from(traj_head),
        Cell::from("T"),
    ];
    if w.harm > 0 {
        head.push(Cell::from("R"));
    }
    head.push(Cell::from(fit("#", w.count)));
    if w.pathway > 0 {
        head.push(Cell::from("pathway"));
    }
    head.push(Cell::from("question"));
    TableRow::new(head).height(height).style(DIM)
}

/// The search line: `/`, the query (while typed, a window that keeps the terminal's
/// cursor in sight), and how many rows match.
fn draw_search_line(f: &mut Frame, app: &App, area: Rect) {
    let total = area.width as usize;
    let state = if app.search_pending() {
        " searching…".to_string()
    } else {
        format!(" {} matches", app.queue.visible.len())
    };
    let room = total.saturating_sub(1 + width(&state));
    let (text, cursor) = if app.overlays.input == Input::Search {
        let v = app.queue.query.view(room);
        (v.text, Some(v.cursor))
    } else {
        (fit(&s(app.queue.query.as_str()), room), None)
    };
    let line = Line::from(vec![
        Span::styled("/", ACCENT),
        Span::raw(text),
        Span::styled(state, DIM),
    ]);
    f.render_widget(Paragraph::new(fit_line(line, total)), area);
    if let Some(c) = cursor
        && area.height > 0
    {
        f.set_cursor_position((area.x + 1 + c as u16, area.y));
    }
}

/// Below the table: the selected row's trajectory with every configuration named.
fn selected_legend(app: &App) -> Line<'static> {
    let explains = app
        .keymap
        .hint(Context::Queue, Action::Help)
        .map_or_else(String::new, |k| format!("{} explains every column", s(&k)));
    let Some(i) = app.current() else {
        return Line::from(Span::styled(explains, DIM));
    };
    let r = &app.queue.rows[i];
    let mut spans = vec![Span::styled(format!("▶ {}: ", id(app.names(i).model)), DIM)];
    let glyphs = trajectory(app.metrics(i), r.q.row as usize, k_of(app, r), None);
    for (n, g) in app.config_names(i).iter().zip(glyphs) {
        spans.push(Span::styled(format!("{} ", s(n)), DIM));
        spans.push(g);
        spans.push(Span::raw("  "));
    }
    if !explains.is_empty() {
        spans.push(Span::styled(format!("· {explains}"), DIM));
    }
    Line::from(spans)
}

/// The R column's mark for an open-ended row: the replicates judge multiple-choice
/// answers only (docs/measures.md §16), so it is not judged, which a blank would not say.
pub(super) const NOT_JUDGED: &str = "–";

/// A row's mark for whether its harm survives the replicates: a shape that reads without
/// colour, in the colour of harm when it holds.
fn harm_glyph(h: Harm) -> Span<'static> {
    match h {
        Harm::Stable => Span::styled(h.glyph(), WARN),
        Harm::Unjudged | Harm::Lottery => Span::styled(h.glyph(), DIM),
    }
}

/// The queue's text columns, in cells, fitted to the table's width.
#[derive(Clone, Copy)]
struct QueueWidths {
    model: usize,
    bench: usize,
    item: usize,
    /// Cells per configuration in the trajectory (the glyph, then room for its name in the
    /// header); unused when the rows label their glyphs.
    per_config: usize,
    k: usize,
    /// 0 when the rows shown share one grid (named in the header), else the cells each
    /// row's configuration labels are cut to beside their glyphs.
    labels: usize,
    /// The trajectory's cells when the rows label their glyphs.
    labelled: usize,
    count: usize,
    /// 1 for the column of whether the harm survives the replicates, 0 without replicates.
    harm: usize,
    pathway: usize,
    question: usize,
}

/// The most cells a configuration's label takes beside its glyph (`textonly`).
const LABEL_MAX: usize = 8;

/// Pathway column: only where the question keeps a useful width beside it.
const PATHWAY_W: usize = 14;
const PATHWAY_FROM: u16 = 120;

impl QueueWidths {
    /// The cells the columns take but the question's, with the gaps between them.
    fn used(&self) -> usize {
        let cols = 8 + usize::from(self.pathway > 0) + self.harm;
        2 + self.model
            + self.bench
            + self.item
            + self.trajectory()
            + 1
            + self.harm
            + self.count
            + self.pathway
            + (cols - 1)
    }

    /// The trajectory's cells: its labelled glyphs, or a glyph and its header name's room
    /// per configuration; at least the header's `trajectory`.
    fn trajectory(&self) -> usize {
        if self.labels > 0 {
            self.labelled.max(10)
        } else {
            (self.per_config * self.k).max(10)
        }
    }

    fn columns(&self) -> Vec<Constraint> {
        let mut c = vec![
            Constraint::Length(2),
            Constraint::Length(self.model as u16),
            Constraint::Length(self.bench as u16),
            Constraint::Length(self.item as u16),
            Constraint::Length(self.trajectory() as u16),
            Constraint::Length(1),
        ];
        if self.harm > 0 {
            c.push(Constraint::Length(1));
        }
        c.push(Constraint::Length(self.count as u16));
        if self.pathway > 0 {
            c.push(Constraint::Length(self.pathway as u16));
        }
        c.push(Constraint::Length(self.question as u16));
        c
    }
}

/// The record's primary pathway, else its tags, as the queue's pathway column shows them:
/// by the taxonomy's short labels (an id the taxonomy does not hold, from another
/// taxonomy's audit, as it is).
fn pathway_text(app: &App, i: usize) -> String {
    let Some(rec) = app.record(i) else {
        return String::new();
    };
    let name = |id: &str| s(app.taxonomy.get(id).map_or(id, |p| p.short_label()));
    match &rec.primary {
        Some(p) => format!("★{}", name(p.as_str())),
        None => rec
            .pathways
            .iter()
            .map(|p| name(p.as_str()))
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// A configuration's name over its trajectory glyph: the part before the first `_` on the
/// first header row, the rest on the second (`64f` over `151k`), each abbreviated to its
/// first `w` cells (an ellipsis would leave no room; the full names are below the table).
fn config_label(name: &str, w: usize) -> (String, String) {
    let (a, b) = name.split_once('_').unwrap_or((name, ""));
    (head(a, w), head(b, w))
}
