//! The item screen: the unit and the transition under audit with the question, the
//! trajectory of every configuration (and intervention runs), the blind answer, the other
//! models (or, in a review, the annotators), the pathways and the note, and the frames.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TableRow, Table, Wrap};

use super::theme::{ACCENT, DIM, RIGHT, WARN, WRONG, id, panes, s};
use super::{config_labels, frames, labelled, labelled_width, review, status_glyph, trajectory};
use crate::core::analysis::Metrics;
use crate::core::analysis::grid::ModelGrid;
use crate::core::audit::{AuditRecord, Status};
use crate::core::queue::HarmfulTransition;
use crate::tui::app::{App, Drawn, Input};
use crate::tui::fit::{fit, fit_line, fit_middle, pad, skip_cells, width};
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;

/// What the parts of the item screen share about the item drawn.
struct Shown<'a> {
    /// Its queue row.
    i: usize,
    /// Its model's grid.
    mg: &'a ModelGrid,
    /// The names of the grid's configurations.
    names: Vec<String>,
    /// The transition under audit, if any.
    pair: Option<HarmfulTransition>,
    /// The unit's record, if any.
    rec: Option<&'a AuditRecord>,
    /// The unit's record when it is on no harmful transition of this data.
    stale: Option<&'a AuditRecord>,
    /// Intervention runs of the unit: (strategy, cell).
    interventions: Vec<(Option<String>, u32)>,
}

impl Shown<'_> {
    fn k(&self) -> usize {
        self.mg.grid.k()
    }

    /// The grid's cell of configuration `c`.
    fn cell(&self, app: &App, c: usize) -> usize {
        self.mg.cells[app.queue.rows[self.i].q.row as usize * self.k() + c] as usize
    }
}

/// The item of queue row `i`, as the item screen shows it.
fn shown(app: &App, i: usize) -> Shown<'_> {
    let q = &app.queue.rows[i].q;
    Shown {
        i,
        mg: &app.report.analyses[q.analysis as usize].grids.models[q.model_index as usize],
        names: app.config_names(i),
        pair: app.pairs(i).get(app.item.pair).copied(),
        rec: app.record(i),
        stale: app.stale_record(i),
        interventions: app.intervention_cells(i),
    }
}

/// The selected item's texts that its screen cuts to fit, whole, for the help: the
/// question, the options and the gold answer, then each configuration's answer with its
/// verdict (or score). Lines in the help's entry form (the name in a 12-cell column), so
/// their text wraps right of the names.
pub(super) fn in_full(app: &App) -> Vec<Line<'static>> {
    let Some(i) = app.current() else {
        return Vec::new();
    };
    let item = shown(app, i);
    let m = &app.ds.matrix;
    let meta = app.ds.item_meta(app.queue.rows[i].q.item);
    let gold = gold_of(app, &item);
    let entry = |what: &str, spans: Vec<Span<'static>>| {
        let mut line = vec![Span::styled(format!("{:>12}  ", fit(&s(what), 12)), ACCENT)];
        line.extend(spans);
        Line::from(line)
    };
    let mut out = Vec::new();
    if let Some(question) = meta.and_then(|x| x.question.as_deref()) {
        out.push(entry("question", vec![Span::raw(s(question))]));
    }
    let options = meta.into_iter().flat_map(|x| x.options.iter());
    for (n, option) in options.enumerate() {
        let what = if n == 0 { "options" } else { "" };
        out.push(entry(what, vec![Span::raw(s(option))]));
    }
    out.push(entry(
        "gold",
        vec![Span::styled(
            gold.as_deref().map_or("–".into(), s),
            RIGHT.add_modifier(Modifier::BOLD),
        )],
    ));
    let row = app.queue.rows[i].q.row as usize;
    let k = item.k();
    let x = app.metrics(i);
    for (c, name) in item.names.iter().enumerate() {
        let answer = m
            .text(m.cell_pred.get(item.cell(app, c)))
            .map_or("∅ (no answer)".into(), s);
        let (verdict, style, _) = verdict(x, row, k, c);
        out.push(entry(
            name,
            vec![
                Span::styled(format!("{verdict} "), style),
                Span::raw(answer),
            ],
        ));
    }
    out
}

/// Draws the item screen for the selected row.
pub(super) fn draw_item(f: &mut Frame, app: &App, area: Rect, out: &mut Drawn) {
    let Some(i) = app.current() else {
        f.render_widget(
            Paragraph::new("No item selected (q goes back to the queue)."),
            area,
        );
        return;
    };
    let item = shown(app, i);
    // In a review, the annotators' records take the place of the other models.
    let (others, others_title): (Vec<Line>, String) = match &app.audits.review {
        Some(review) => (
            review::panel(review, &app.key(i), &app.taxonomy, area.width / 2),
            match app.keymap.hint(Context::Item, Action::TakeAnnotator) {
                Some(k) => format!(" annotators ({}: take the next one's record) ", s(&k)),
                None => " annotators ".into(),
            },
        ),
        None => (
            other_models(app, i, panes(area)[0].width as usize),
            " other models ".into(),
        ),
    };
    let mut qlines = question_lines(app, &item, None);
    // As many rows as the lines wrap to (a long model name wraps the title).
    let rows_of = |lines: Vec<Line<'static>>| wrapped_rows(lines, area.width) as u16;
    let mut q_height = rows_of(qlines.clone());
    // Room for the trajectory (rows + header + border), the blind line and the other
    // models; the frames take the rest of the screen.
    let runs = item.k() + item.interventions.len();
    let upper_h =
        (runs as u16 + 3 + 2 + others.len() as u16 + 1).max(app.taxonomy.pathways.len() as u16 + 3);
    let rest = 1 + upper_h + item.k() as u16 + 8;
    if area.height < q_height + rest {
        // A long question is cut to the rows it can spare (three at most: the rest go to
        // the frames), saying where it is whole (the help), rather than the screen
        // dropping to the compact one.
        let [title, question, options] = <[Line<'static>; 3]>::try_from(qlines.clone())
            .unwrap_or_else(|_| unreachable!("question_lines gives three lines"));
        let fixed = rows_of(vec![title.clone()]) + rows_of(vec![options.clone()]);
        let spare = area.height.saturating_sub(rest + fixed).min(QUESTION_ROWS);
        if spare >= 2 {
            let hint = app
                .keymap
                .hint(Context::Item, Action::Help)
                .map_or_else(String::new, |k| format!(" ({} in full)", s(&k)));
            let cut = cut_to_rows(question, spare, area.width, &hint);
            qlines = vec![title, cut, options];
            q_height = rows_of(qlines.clone());
        }
    }
    let wrapped = Paragraph::new(qlines).wrap(Wrap { trim: false });
    // Too short for that and a timeline with thumbnails (80x24): the compact screen, one
    // line each for title, question and options, no other models, and compact frames.
    let compact = area.height < q_height + rest;
    let (question_block, q_height, upper_h) = if compact {
        let w = area.width as usize;
        let lines: Vec<Line> = question_lines(app, &item, Some(w))
            .into_iter()
            .map(|l| fit_line(l, w))
            .collect();
        let n = lines.len() as u16;
        // Only the rows the trajectory and the pathways (two columns) need: the rest goes
        // to the frames.
        // In a review, a line more says where the annotators' records are.
        let review = u16::from(app.audits.review.is_some());
        let needs =
            (runs as u16 + 3 + review).max(app.taxonomy.pathways.len().div_ceil(2) as u16 + 2);
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
    let [traj_area, blind_area, others_area] = if compact {
        // No room for the other models; in a review, one line for the annotators' panel.
        let review = u16::from(app.audits.review.is_some());
        Layout::vertical([
            Constraint::Min(3),
            Constraint::Length(1),
            Constraint::Length(review),
        ])
        .areas(left)
    } else {
        Layout::vertical([
            Constraint::Length(runs as u16 + 2),
            Constraint::Length(2),
            Constraint::Min(2),
        ])
        .areas(left)
    };
    draw_trajectory(f, app, &item, traj_area);
    let blind = blind_line(app, &item);
    let blind = if compact {
        Paragraph::new(fit_line(blind, blind_area.width as usize))
    } else {
        Paragraph::new(blind).wrap(Wrap { trim: true })
    };
    f.render_widget(blind, blind_area);
    if compact {
        // The annotators' records where the compact screen has no panel for them: the help.
        if let (Some(review), Some(k)) = (
            &app.audits.review,
            app.keymap.hint(Context::Item, Action::Help),
        ) {
            let n = review.records(&app.key(i)).map_or(0, |r| r.len());
            let line = Line::from(Span::styled(
                format!("annotators: {} shows their {n} records", s(&k)),
                DIM,
            ));
            f.render_widget(
                Paragraph::new(fit_line(line, others_area.width as usize)),
                others_area,
            );
        }
    } else {
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
    }
    draw_pathways(f, app, item.rec, item.stale, right);
    frames::draw_frames(f, app, i, frames_area, compact, out);
}

/// The most rows a question too long for the item screen is given.
const QUESTION_ROWS: u16 = 3;

/// The rows `lines` take wrapped (not trimmed) at `width` cells.
fn wrapped_rows<'a>(lines: impl Into<ratatui::text::Text<'a>>, width: u16) -> usize {
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .line_count(width)
}

/// `line` cut so that it wraps to at most `rows` rows of `width` cells, ending with `…` and
/// `hint` when cut (the longest such beginning, by cells, [`fit_line`]).
fn cut_to_rows(line: Line<'static>, rows: u16, width: u16, hint: &str) -> Line<'static> {
    let fits = |l: &Line<'static>| wrapped_rows(l.clone(), width) <= usize::from(rows);
    if fits(&line) {
        return line;
    }
    let first = |cells: usize| {
        let mut cut = fit_line(line.clone(), cells);
        cut.spans.push(Span::styled(hint.to_string(), DIM));
        cut
    };
    let (mut lo, mut hi) = (0, line.width());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(&first(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    first(lo)
}

/// The title (the unit, its place in the queue, its status, the transition under audit),
/// the question, and the options with the gold answer. With `narrow` (the compact screen,
/// where the title is one line of that many cells) a title that does not fit is told in
/// short words, the terminal flag before the transition, so both survive 80 columns.
fn question_lines(app: &App, item: &Shown, narrow: Option<usize>) -> Vec<Line<'static>> {
    let i = item.i;
    let q = &app.queue.rows[i].q;
    let pairs = app.pairs(i);
    let meta = app.ds.item_meta(q.item);
    let pos = app
        .queue
        .visible
        .iter()
        .position(|&v| v as usize == i)
        .map_or("–".into(), |p| format!("{}", p + 1));
    let status = item.rec.map_or(Status::Todo, |x| x.status);
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
        status_glyph(status),
        Span::raw(format!(" {}", status.as_str())),
    ];
    if let Some(HarmfulTransition {
        lower: a,
        higher: b,
    }) = item.pair
    {
        title.push(Span::raw("   transition "));
        title.extend(transition_spans(item, a, b));
        let of = if (pairs.len() as u64) < q.harmful_pairs {
            // The queue lists the first MAX_LISTED_PAIRS of the item's transitions.
            format!("{} listed of {}", pairs.len(), q.harmful_pairs)
        } else {
            format!("{}", pairs.len())
        };
        let switch = app
            .keymap
            .hint_for(
                Context::Item,
                &[Action::PrevTransition, Action::NextTransition],
                " ",
                " switch",
            )
            .map_or_else(String::new, |k| format!(", {}", s(&k)));
        title.push(Span::styled(
            format!(" ({} of {of}{switch})", app.item.pair + 1),
            DIM,
        ));
    }
    if q.terminal {
        title.push(Span::styled("  terminal regression", WARN));
    }
    let title = match narrow {
        Some(w) if title.iter().map(|x| width(&x.content)).sum::<usize>() > w => {
            short_title(app, item, &pos, status, w)
        }
        _ => title,
    };
    let question = match meta {
        None => "(no question text: the dataset has no items.jsonl entry)".into(),
        Some(x) => x
            .question
            .as_deref()
            .map_or("(no question text in items.jsonl)".into(), s),
    };
    let gold = gold_of(app, item);
    let options = meta
        .map(|x| x.options.iter().map(s).collect::<Vec<_>>().join("   "))
        .unwrap_or_default();
    vec![
        Line::from(title),
        Line::from(vec![Span::styled("Q ", DIM), Span::raw(question)]),
        Line::from(vec![
            Span::raw(options),
            Span::styled("   gold: ", DIM),
            Span::styled(
                gold.as_deref().map_or("–".into(), s),
                RIGHT.add_modifier(Modifier::BOLD),
            ),
        ]),
    ]
}

/// The audited transition's two configurations, right one then wrong one: `8f → 16f`.
fn transition_spans(item: &Shown, a: usize, b: usize) -> [Span<'static>; 3] {
    [
        Span::styled(s(&item.names[a]), RIGHT.add_modifier(Modifier::BOLD)),
        Span::raw(" → "),
        Span::styled(s(&item.names[b]), WRONG.add_modifier(Modifier::BOLD)),
    ]
}

/// The title in at most `w` cells where possible: `unit [3/79] ✓ done  terminal  8f → 16f
/// (4/6)`; the unit's names are cut in the middle when even that does not fit.
fn short_title(app: &App, item: &Shown, pos: &str, status: Status, w: usize) -> Vec<Span<'static>> {
    let i = item.i;
    let q = &app.queue.rows[i].q;
    let mut rest = vec![
        Span::styled(format!(" [{pos}/{}] ", app.queue.visible.len()), DIM),
        status_glyph(status),
        Span::raw(format!(" {}", status.as_str())),
    ];
    if q.terminal {
        rest.push(Span::styled("  terminal", WARN));
    }
    if let Some(HarmfulTransition {
        lower: a,
        higher: b,
    }) = item.pair
    {
        let listed = app.pairs(i).len();
        rest.push(Span::raw("  "));
        rest.extend(transition_spans(item, a, b));
        let of = if (listed as u64) < q.harmful_pairs {
            format!("{listed} of {}", q.harmful_pairs)
        } else {
            format!("{listed}")
        };
        rest.push(Span::styled(format!(" ({}/{of})", app.item.pair + 1), DIM));
    }
    let names = format!(
        "{} · {} · {}",
        id(app.names(i).model),
        id(app.names(i).benchmark),
        id(app.names(i).item_id)
    );
    let room = w
        .saturating_sub(rest.iter().map(|x| width(&x.content)).sum())
        .max(12);
    let mut title = vec![Span::styled(
        fit_middle(&names, room),
        ACCENT.add_modifier(Modifier::BOLD),
    )];
    title.extend(rest);
    title
}

/// The trajectory table: a row per configuration (the audited pair marked), then the
/// intervention runs; fewer rows than runs show the window that holds the audited pair.
fn draw_trajectory(f: &mut Frame, app: &App, item: &Shown, area: Rect) {
    let x = app.metrics(item.i);
    let open = matches!(x, Metrics::Open(_));
    // The bar gives way first when the pane is narrow, so the names keep their 12 cells;
    // an open-ended item's answer is its text, so there its bar goes first (the score is
    // in the verdict's column, and the confidence column is empty).
    let bar_w = match open && area.width < 60 {
        true => 0,
        false => (area.width as usize).saturating_sub(38).min(10),
    };
    let conf_w: u16 = if open { 0 } else { 5 };
    let reps = replicates_of(app, item);
    // The verdict, then a glyph per replicate.
    let verdict_w = match (open, reps.is_empty()) {
        (true, _) => 5,
        (false, true) => 4,
        (false, false) => 2 + reps.len() as u16,
    };
    // The answer takes what the other columns and the five gaps between them leave.
    let answer_w = (area.width as usize)
        .saturating_sub(12 + 6 + verdict_w as usize + conf_w as usize + bar_w + 5);
    let mut rows = trajectory_rows(app, item, &reps, (answer_w.max(6), bar_w));
    rows.extend(intervention_rows(app, item));
    let runs = rows.len();
    let fit_rows = (area.height as usize).saturating_sub(2).max(1);
    let first = match item.pair {
        Some(t) if runs > fit_rows => (t.higher + 1).saturating_sub(fit_rows).min(t.lower),
        _ => 0,
    }
    .min(runs.saturating_sub(fit_rows));
    let title = if runs > fit_rows {
        format!(
            " trajectory {}-{} of {runs} ",
            first + 1,
            (first + fit_rows).min(runs)
        )
    } else if !item.interventions.is_empty() {
        let noun = if item.interventions.len() == 1 {
            "run"
        } else {
            "runs"
        };
        format!(
            " trajectory · ↻ intervention {noun} ({}) ",
            s(&app.report.params.intervention_protocol)
        )
    } else if !reps.is_empty() {
        // The columns after each verdict, in order: in fewer words where the pane is narrow
        // (80 columns), the names kept longest, as they tell the glyphs apart.
        let with_nuisance: Vec<String> = reps
            .iter()
            .map(|&(r, n)| format!("{} ~{}", s(r), s(n)))
            .collect();
        let names: Vec<String> = reps.iter().map(|&(r, _)| s(r)).collect();
        let room = (area.width as usize).saturating_sub(2);
        [
            format!(
                " trajectory · then replicates: {} ",
                with_nuisance.join(", ")
            ),
            format!(" trajectory · then: {} ", with_nuisance.join(", ")),
            format!(" trajectory · then: {} ", names.join(", ")),
            format!(" then: {} ", names.join(", ")),
        ]
        .into_iter()
        .find(|t| width(t) <= room)
        .unwrap_or_else(|| {
            format!(
                "{} ",
                fit(
                    &format!(" then: {}", names.join(", ")),
                    room.saturating_sub(1)
                )
            )
        })
    } else if app.replicates_reading() {
        " trajectory · replicates: reading… ".to_string()
    } else {
        " trajectory ".to_string()
    };
    // An answer cut to fit is whole in the help: the column's title says so where it fits.
    let m = &app.ds.matrix;
    let cut = (0..item.k()).any(|c| {
        m.text(m.cell_pred.get(item.cell(app, c)))
            .is_some_and(|p| width(&s(p)) > answer_w.max(6))
    });
    let answer_title = match app.keymap.hint(Context::Item, Action::Help) {
        Some(k) if cut => [
            format!("answer ({}: in full)", s(&k)),
            format!("answer ({})", s(&k)),
        ]
        .into_iter()
        .find(|t| width(t) <= answer_w.max(6))
        .unwrap_or_else(|| "answer".into()),
        _ => "answer".into(),
    };
    // An open-ended item's score stands in the verdict's column.
    let titles = if open {
        ["config", "frames", answer_title.as_str(), "score", "", ""]
    } else {
        ["config", "frames", answer_title.as_str(), "", "conf", ""]
    };
    let table = Table::new(
        rows.into_iter().skip(first),
        [
            Constraint::Length(12),
            Constraint::Length(6),
            Constraint::Min(6),
            Constraint::Length(verdict_w),
            Constraint::Length(conf_w),
            Constraint::Length(bar_w as u16),
        ],
    )
    .header(TableRow::new(titles.to_vec()).style(DIM))
    .block(
        Block::default()
            .borders(Borders::TOP)
            .title(Span::styled(title, ACCENT))
            .border_style(DIM),
    );
    f.render_widget(table, area);
}

/// The replicates (name, nuisance) of the item's multiple-choice cells, by name: the
/// columns of outcomes after each verdict (docs/measures.md §16).
fn replicates_of<'a>(app: &'a App, item: &Shown) -> Vec<(&'a str, &'a str)> {
    let m = &app.ds.matrix;
    let r = &m.replicates;
    if r.cells.is_empty() || !matches!(app.metrics(item.i), Metrics::Mcq(_)) {
        return Vec::new();
    }
    let mut out: Vec<(&str, &str)> = (0..item.k())
        .flat_map(|c| r.of(item.cell(app, c) as u32))
        .map(|x| (r.names.name(x.replicate), r.names.name(x.nuisance)))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The gold answer of the item: its cells', which the marks beside the answers are scored
/// by, else its items.jsonl entry's. Where the two differ both are shown (`validate` warns
/// at the items.jsonl line), so the gold on screen never contradicts the marks unsaid.
fn gold_of(app: &App, item: &Shown) -> Option<String> {
    let m = &app.ds.matrix;
    let it = app.queue.rows[item.i].q.item;
    match m.text(m.cell_gold.get(item.cell(app, 0))) {
        Some(g) => Some(match app.ds.other_gold(it, g) {
            Some(other) => format!("{g} (items.jsonl: {other})"),
            None => g.to_owned(),
        }),
        None => app.ds.item_meta(it).and_then(|x| x.gold.clone()),
    }
}

/// The verdict of configuration `c` on grid row `row` (of `k` columns): `✓` or `✗`, or an
/// open task's score; its style; and the score as a number (open tasks only).
fn verdict(x: &Metrics, row: usize, k: usize, c: usize) -> (String, Style, Option<f64>) {
    match x {
        Metrics::Mcq(x) => {
            let right = x.items.row(row, k)[c] == 1;
            let glyph = if right { "✓" } else { "✗" };
            (glyph.to_string(), if right { RIGHT } else { WRONG }, None)
        }
        Metrics::Open(x) => {
            let v = x.items.row(row, k)[c];
            (
                format!("{v:.0}"),
                if v >= 50.0 { RIGHT } else { WRONG },
                Some(v),
            )
        }
    }
}

/// A row per configuration: name (▸ and bold on the audited pair), frames, answer (cut
/// with `…` to `answer_w` columns), verdict (or score) and the replicates' (`reps`, a glyph
/// each, a space where one is missing), confidence and its bar (`bar_w` columns).
fn trajectory_rows(
    app: &App,
    item: &Shown,
    reps: &[(&str, &str)],
    (answer_w, bar_w): (usize, usize),
) -> Vec<TableRow<'static>> {
    let m = &app.ds.matrix;
    let g = &item.mg.grid;
    let k = item.k();
    let row = app.queue.rows[item.i].q.row as usize;
    let x = app.metrics(item.i);
    let mut rows = Vec::with_capacity(k);
    for (c, name) in item.names.iter().enumerate() {
        let cell = item.cell(app, c);
        let conf = m.cell_confidence.get(cell);
        let answer = m
            .text(m.cell_pred.get(cell))
            .map_or("∅".into(), |p| fit(&s(p), answer_w));
        let (verdict, style, score) = verdict(x, row, k, c);
        // The bar: an open task's score, else the confidence (in %).
        let value = score.or((!conf.is_nan()).then_some(conf * 100.0));
        // The audited pair: a marker, bold and underlined, on the terminal's own background.
        // A dark green or red background under black bold text and a red ✗ was the least
        // readable row in a real xterm (black on white by default), and these two matter most.
        let (marker, row_style) = match item.pair {
            Some(t) if c == t.lower || c == t.higher => ("▸", AUDITED),
            _ => (" ", Style::new()),
        };
        let variant = if g.is_variant[c] { "*" } else { "" };
        let shown = match x {
            Metrics::Mcq(_) if conf.is_nan() => "–".to_string(),
            Metrics::Mcq(_) => format!("{conf:.2}"),
            Metrics::Open(_) => String::new(),
        };
        rows.push(
            TableRow::new(vec![
                Cell::from(fit(&format!("{marker}{}{variant}", s(name)), 12)),
                Cell::from(format!("{}", g.frames(m, c))),
                Cell::from(answer),
                Cell::from(Line::from(outcomes(app, cell as u32, verdict, style, reps))),
                Cell::from(shown),
                Cell::from(Span::styled(
                    value.map_or(String::new(), |v| crate::term::bar(v, 100.0, bar_w)),
                    style,
                )),
            ])
            .style(row_style),
        );
    }
    rows
}

/// A verdict, then for each of `reps` that cell's replicate outcome (✓ ✗), a space where
/// the replicate did not measure it.
fn outcomes(
    app: &App,
    cell: u32,
    verdict: String,
    style: Style,
    reps: &[(&str, &str)],
) -> Vec<Span<'static>> {
    let mut spans = vec![Span::styled(verdict, style)];
    if reps.is_empty() {
        return spans;
    }
    spans.push(Span::raw(" "));
    let r = &app.ds.matrix.replicates;
    let mine = r.of(cell);
    for (name, _) in reps {
        let x = mine.iter().find(|x| r.names.name(x.replicate) == *name);
        spans.push(match x {
            Some(x) if x.value == 1.0 => Span::styled("✓", RIGHT),
            Some(_) => Span::styled("✗", WRONG),
            None => Span::raw(" "),
        });
    }
    spans
}

/// A row of the audited pair.
const AUDITED: Style = Style::new().add_modifier(Modifier::BOLD.union(Modifier::UNDERLINED));

/// A row per intervention run of the unit (`↻CONFIG STRATEGY`), after the grid's.
fn intervention_rows(app: &App, item: &Shown) -> Vec<TableRow<'static>> {
    let m = &app.ds.matrix;
    let mut rows = Vec::new();
    for (strategy, cell) in &item.interventions {
        let c = *cell as usize;
        let right = m.cell_value.get(c) == 1.0;
        let conf = m.cell_confidence.get(c);
        let config = m.config(m.cell_config.get(c));
        rows.push(TableRow::new(vec![
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
                    .map_or("∅".into(), |p| fit(&s(p), 24)),
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
    rows
}

/// The model's text-only answer to the item, and whether it is the wrong answer of the
/// transition's higher budget (the language prior took over).
fn blind_line(app: &App, item: &Shown) -> Line<'static> {
    let m = &app.ds.matrix;
    let q = &app.queue.rows[item.i].q;
    let protocol = m.config(item.mg.grid.configs[0]).protocol;
    let blind = m
        .blind(protocol, item.mg.model, q.item)
        .and_then(|t| m.text(t))
        .map(str::to_owned);
    // Answers are compared in their normal form (upper case, no punctuation), and shown as
    // the model gave them: the blind one as the text-only cell of the grid has it, when it
    // is that cell's (else, from a `blind` field, only its normal form is kept).
    let as_given = |cell: usize| m.text(m.cell_pred.get(cell)).unwrap_or("");
    let shown_blind = |z: &str| {
        (0..item.k())
            .filter(|&c| m.config(item.mg.grid.configs[c]).is_zero_frame())
            .map(|c| item.cell(app, c))
            .find(|&cell| m.text(m.cell_pred_norm.get(cell)) == Some(z))
            .map_or_else(|| z.to_string(), |cell| as_given(cell).to_string())
    };
    match (&blind, item.pair) {
        (Some(z), Some(HarmfulTransition { higher: b, .. })) => {
            let wrong = m
                .text(m.cell_pred_norm.get(item.cell(app, b)))
                .unwrap_or("");
            let z_shown = shown_blind(z);
            let (said, style) = if wrong == z {
                (
                    format!(
                        " = the wrong answer at {}: the language prior took over",
                        s(&item.names[b])
                    ),
                    WARN,
                )
            } else {
                (
                    format!(
                        " ≠ the wrong answer at {} ({})",
                        s(&item.names[b]),
                        s(as_given(item.cell(app, b)))
                    ),
                    DIM,
                )
            };
            Line::from(vec![
                Span::styled("blind answer ", DIM),
                Span::raw(s(&z_shown)),
                Span::styled(said, style),
            ])
        }
        (Some(z), None) => Line::from(vec![
            Span::styled("blind answer ", DIM),
            Span::raw(s(&shown_blind(z))),
        ]),
        (None, _) => Line::from(Span::styled(
            "no blind answer (no text-only run of this item)",
            DIM,
        )),
    }
}

/// The evidence pathways (two columns when one is too short for them all, 80x24) and the
/// note, or the note editor while it is open.
fn draw_pathways(
    f: &mut Frame,
    app: &App,
    rec: Option<&AuditRecord>,
    stale: Option<&AuditRecord>,
    area: Rect,
) {
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(" evidence pathways ", ACCENT))
        .border_style(DIM);
    let inner = block.inner(area);
    let n = app.taxonomy.pathways.len();
    let tags_h = (n as u16).min(inner.height.saturating_sub(1));
    // Two columns when one is too short: the short labels then, which tell pathways apart
    // where the labels cut to the same prefix (`Evidence d…` twice).
    let two = n > tags_h as usize;
    let mut tag_lines = Vec::new();
    // The keys as bound, each padded to the widest (a keymap may bind `F5` or none).
    let keys: Vec<String> = (0..n)
        .map(|i| app.keymap.pathway_key(i).unwrap_or_else(|| "-".into()))
        .collect();
    let key_w = keys.iter().map(|k| width(k)).max().unwrap_or(1);
    for (p, key) in app.taxonomy.pathways.iter().zip(&keys) {
        let on = rec.is_some_and(|x| x.pathways.contains(&p.id));
        let primary = rec.is_some_and(|x| x.primary.as_ref() == Some(&p.id));
        let style = if on {
            RIGHT.add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        tag_lines.push((
            Span::styled(format!("{:<key_w$} ", s(key)), ACCENT),
            Span::styled(if on { "[x] " } else { "[ ] " }, style),
            Span::styled(s(if two { p.short_label() } else { &p.label }), style),
            primary,
        ));
    }
    f.render_widget(block, area);
    let [tags_area, note_area] =
        Layout::vertical([Constraint::Length(tags_h), Constraint::Min(1)]).areas(inner);
    let columns: Vec<Rect> = if two {
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
            .map(|(k, b, l, p)| pathway_line(k, b, l, *p, col.width as usize))
            .collect();
        f.render_widget(Paragraph::new(lines), *col);
    }
    if let Input::Note(editor) = &app.overlays.input {
        draw_note_editor(f, &app.keymap, editor, note_area);
        return;
    }
    let note = match stale {
        // What the annotator said before, on a transition this data has not: shown, not
        // carried over.
        Some(old) => Line::from(Span::styled(stale_text(app, old), WARN)),
        None => Line::from(vec![
            Span::styled("note: ", DIM),
            Span::raw(rec.map_or(String::new(), |x| s(&x.note))),
        ]),
    };
    // The note wraps in its pane; on one row it shows its end.
    let note = if note_area.height > 1 {
        Paragraph::new(note).wrap(Wrap { trim: false })
    } else {
        Paragraph::new(fit_tail(note, note_area.width as usize))
    };
    f.render_widget(note, note_area);
}

/// A record on no harmful transition of the data, in one sentence: its transition, status,
/// tags, evidence frames and note.
fn stale_text(app: &App, old: &AuditRecord) -> String {
    let label = |id: &String| {
        app.taxonomy
            .pathways
            .iter()
            .find(|p| p.id == *id)
            .map_or_else(|| s(id), |p| s(p.short_label()))
    };
    let mut parts = vec![format!(
        "earlier record on {} → {}, not harmful on this data (a change starts anew): {}",
        s(&old.from),
        s(&old.to),
        old.status.as_str()
    )];
    if !old.pathways.is_empty() {
        parts.push(
            old.pathways
                .iter()
                .map(label)
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    if !old.evidence_frames.is_empty() {
        let frames: Vec<String> = old.evidence_frames.iter().map(u64::to_string).collect();
        parts.push(format!("frames {}", frames.join(" ")));
    }
    if !old.note.is_empty() {
        parts.push(format!("note: {}", s(&old.note)));
    }
    parts.join(" · ")
}

/// A pathway's line in `w` cells: key, box, label and, on the primary one, "★ primary".
/// Where that does not fit the word goes first, then the label is cut: the ★ stays, as
/// nothing else on the screen says which pathway is primary.
fn pathway_line(
    key: &Span<'static>,
    tick: &Span<'static>,
    label: &Span<'static>,
    primary: bool,
    w: usize,
) -> Line<'static> {
    let head = width(&key.content) + width(&tick.content);
    let star = [" ★ primary", " ★"]
        .into_iter()
        .find(|m| head + width(&label.content) + width(m) <= w)
        .unwrap_or(" ★");
    if !primary {
        return fit_line(
            Line::from(vec![key.clone(), tick.clone(), label.clone()]),
            w,
        );
    }
    let room = w.saturating_sub(head + width(star));
    fit_line(
        Line::from(vec![
            key.clone(),
            tick.clone(),
            Span::styled(fit(&label.content, room), label.style),
            Span::styled(star, WARN),
        ]),
        w,
    )
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
        let (text, dropped) = skip_cells(&sp.content, drop);
        drop = drop.saturating_sub(dropped);
        kept.push(Span::styled(text, sp.style));
    }
    fit_line(Line::from(kept), w)
}

/// The same item's trajectories under the other models, one line each, every glyph after
/// its configuration's name (`16f✓ 32f✓ 64f✗`; the short form where the full names would
/// not fit in `w` cells), since the models' grids may differ.
fn other_models(app: &App, i: usize, w: usize) -> Vec<Line<'static>> {
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
                Span::raw(format!(
                    "{} ",
                    pad(&fit_middle(app.model_label(mg.model), 16), 16)
                )),
                Span::styled("not in its grid", DIM),
            ]));
            continue;
        };
        let k = mg.grid.k();
        let mut spans = vec![Span::raw(format!(
            "{} ",
            pad(&fit_middle(app.model_label(mg.model), 16), 16)
        ))];
        let names: Vec<String> = mg
            .grid
            .configs
            .iter()
            .map(|&c| s(&m.config(c).name))
            .collect();
        let full = usize::MAX;
        let labels = if 17 + labelled_width(&names, full) <= w {
            names
        } else {
            config_labels(&names)
        };
        spans.extend(labelled(trajectory(x, row, k, None), &labels, full));
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
