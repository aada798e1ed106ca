//! Protocol comparison: the view's analysis against the same task and scope under another
//! protocol (e.g. raw video against cached frames): per model the harmful rates on common
//! items, the Jaccard index and Cohen's kappa of the harmful sets, and the items harmful
//! under one protocol only, which Enter sends to the queue.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TableRow, Table, Wrap};

use crate::core::analysis::agreement::cohen;
use crate::core::analysis::{Analysis, Metrics, pct};
use crate::core::workspace::selections::one_protocol_only;
use crate::tui::app::App;
use crate::tui::fit::pad;
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::research::ViewData;
use crate::tui::view::charts::research_hints;
use crate::tui::view::theme::{ACCENT, DIM, WARN, id, s};

/// Draws the comparison of the view's analysis with the one of another protocol chosen by
/// the cursor (the first other one at first).
pub fn draw(f: &mut Frame, app: &App, d: &ViewData, area: Rect) {
    let m = &app.ds.matrix;
    let candidates = app.other_protocols();
    let Some(other) = app.research.other.or_else(|| candidates.first().copied()) else {
        let names: Vec<String> = m.protocols.names().map(s).collect();
        f.render_widget(
            Paragraph::new(vec![
                Line::from(Span::styled(
                    format!(
                        "Only one protocol has this task and scope here ({}): there is nothing to compare.",
                        names.join(", ")
                    ),
                    WARN,
                )),
                Line::from(""),
                Line::from(
                    "To compare two runs of the same items (e.g. raw video against cached frames), open the first with `--compare OTHER_DATASET`, or put both in one dataset, the second with another `protocol` value in its cells (\"main\", \"cached\"). The comparison then lists per model the harmful rates under each, the Jaccard index and Cohen's kappa of the harmful sets, and the items harmful under one protocol only.",
                ),
                Line::from(""),
                Line::from(Span::styled(
                    app.keymap
                        .hint_list(
                            Context::Research,
                            &[
                                (&[Action::NextProtocol], "", " switches protocol"),
                                (&[Action::NextTask], "", " task"),
                                (&[Action::NextScope], "", " scope"),
                            ],
                        )
                        .join(", ")
                        + ".",
                    DIM,
                )),
            ])
            .wrap(Wrap { trim: true }),
            area,
        );
        return;
    };
    let b = &app.report.analyses[other];
    let rows = model_rows(app, d, b);
    let [table_area, list_area] = Layout::vertical([
        Constraint::Length(rows.len() as u16 + 3),
        Constraint::Min(3),
    ])
    .areas(area);
    draw_table(f, app, d, b, rows, table_area);
    draw_only_list(f, app, d, b, list_area);
}

/// A row per model in both analyses: its common items, the harmful rates under each, the
/// items harmful under both and under one only, Jaccard and kappa of the harmful sets.
fn model_rows(app: &App, d: &ViewData, b: &Analysis) -> Vec<TableRow<'static>> {
    let m = &app.ds.matrix;
    let r = &app.research;
    let a = &d.analysis;
    let mut rows = Vec::new();
    for (i, (mg, x)) in a.grids.models.iter().zip(a.metrics.iter()).enumerate() {
        let Some((mg_b, xb)) = b.model(mg.model) else {
            continue;
        };
        let (Metrics::Mcq(x), Metrics::Mcq(xb)) = (x, xb) else {
            continue;
        };
        let (mut va, mut vb) = (Vec::new(), Vec::new());
        for (ia, item) in mg.grid.items.iter().enumerate() {
            if let Ok(ib) = mg_b.grid.items.binary_search(item) {
                va.push(x.items.harmful_pairs[ia] > 0);
                vb.push(xb.items.harmful_pairs[ib] > 0);
            }
        }
        let both = va.iter().zip(&vb).filter(|&(&p, &q)| p && q).count();
        let union = va.iter().zip(&vb).filter(|&(&p, &q)| p || q).count();
        let (kappa, _, pos_a, pos_b) = cohen(&va, &vb);
        let f2 = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.2}"));
        let f1 = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.1}"));
        let style = if i == r.model {
            WARN.add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        rows.push(
            TableRow::new(vec![
                Cell::from(s(m.models.name(mg.model))),
                Cell::from(format!("{}", va.len())),
                Cell::from(f1(pct(pos_a, va.len()))),
                Cell::from(f1(pct(pos_b, va.len()))),
                Cell::from(format!("{both}")),
                Cell::from(format!("{}", pos_a - both)),
                Cell::from(format!("{}", pos_b - both)),
                Cell::from(f2((union > 0).then(|| both as f64 / union as f64))),
                Cell::from(f2(kappa)),
            ])
            .style(style),
        );
    }
    rows
}

/// The table of the models, titled with the two protocols.
fn draw_table(
    f: &mut Frame,
    app: &App,
    d: &ViewData,
    b: &Analysis,
    rows: Vec<TableRow<'static>>,
    table_area: Rect,
) {
    let (pa, pb) = protocol_names(app, d, b);
    let other = app
        .keymap
        .hint_for(
            Context::Research,
            &[Action::Left, Action::Right],
            "",
            " other protocol",
        )
        .map_or_else(String::new, |k| format!(" {k}"));
    let title = format!(" harmful items: {pa} (A) vs {pb} (B) on common items {other} ");
    f.render_widget(
        Table::new(
            rows,
            [
                Constraint::Min(12),
                Constraint::Length(6),
                Constraint::Length(8),
                Constraint::Length(8),
                Constraint::Length(6),
                Constraint::Length(7),
                Constraint::Length(7),
                Constraint::Length(8),
                Constraint::Length(7),
            ],
        )
        .header(
            TableRow::new(vec![
                "model", "common", "A rate%", "B rate%", "both", "A only", "B only", "Jaccard",
                "kappa",
            ])
            .style(DIM),
        )
        .block(
            Block::default()
                .borders(Borders::TOP)
                .border_style(DIM)
                .title(Span::styled(title, ACCENT)),
        ),
        table_area,
    );
}

/// The two protocols' names, the view's (A) and the other (B).
fn protocol_names(app: &App, d: &ViewData, b: &Analysis) -> (String, String) {
    let m = &app.ds.matrix;
    (
        s(m.protocols.name(d.analysis.key.protocol)),
        s(m.protocols.name(b.key.protocol)),
    )
}

/// The items of the model under the cursor harmful under one protocol only, as many as fit.
fn draw_only_list(f: &mut Frame, app: &App, d: &ViewData, b: &Analysis, list_area: Rect) {
    let m = &app.ds.matrix;
    let r = &app.research;
    let a = &d.analysis;
    let (pa, pb) = protocol_names(app, d, b);
    let only = one_protocol_only(&d.analysis, r.model, b).unwrap_or_default();
    let model = a
        .grids
        .models
        .get(r.model)
        .map_or("–".into(), |mg| s(m.models.name(mg.model)));
    let mut lines = Vec::new();
    let room = list_area.height.saturating_sub(2) as usize;
    for &(item, under_a) in only.iter().take(room) {
        let it = m.item(item);
        lines.push(Line::from(vec![
            Span::raw(format!(
                "{} {} ",
                pad(&id(m.benchmarks.name(it.benchmark)), 16),
                pad(&id(&it.id), 24)
            )),
            Span::styled(
                format!("harmful under {} only", if under_a { &pa } else { &pb }),
                if under_a { WARN } else { DIM },
            ),
        ]));
    }
    if only.len() > room {
        lines.push(Line::from(Span::styled(
            format!("… and {} more", only.len() - room),
            DIM,
        )));
    }
    if only.is_empty() {
        lines.push(Line::from(Span::styled(
            "no item is harmful under one protocol only",
            DIM,
        )));
    }
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::TOP)
                .border_style(DIM)
                .title(Span::styled(
                    format!(
                        " {model}: {} items harmful under one protocol only ({}) ",
                        only.len(),
                        research_hints(
                            app,
                            &[
                                (&[Action::Up, Action::Down], "", " model"),
                                (&[Action::Select], "", ": queue"),
                            ]
                        )
                        .replace(" · ", ", ")
                    ),
                    ACCENT,
                )),
        ),
        list_area,
    );
}
