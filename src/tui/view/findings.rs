//! Audit findings: how often each evidence pathway was tagged (and as the primary one),
//! overall and by model, transition and benchmark, from this session's records (live, as
//! the annotator tags) and the other audit files of the dataset.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row as TableRow, Table};

use crate::core::figures::{Findings, PathwayTable, SERIES};
use crate::tui::app::App;
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::research::ViewData;
use crate::tui::view::charts::fg;
use crate::tui::view::theme::{ACCENT, DIM, s};

/// The findings of every record the app knows.
pub fn findings(app: &App) -> Findings {
    Findings::of(app.findings_records())
}

/// Draws the findings view: the evidence pathways of the audits, overall and per model.
pub fn draw(f: &mut Frame, app: &App, _d: &ViewData, area: Rect) {
    let records = app.findings_records();
    // Records of units off the queue (an item no longer harmful, or not in this data): the
    // progress line counts the queue alone, these count here.
    let off_queue = records
        .iter()
        .filter(|r| app.row_of(&r.key).is_none())
        .count();
    let fnd = Findings::of(records);
    let [head, body] = Layout::vertical([Constraint::Length(2), Constraint::Min(4)]).areas(area);
    f.render_widget(
        Paragraph::new(vec![Line::from(vec![
            Span::styled(
                crate::core::text::count(fnd.records, "audit record"),
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Span::raw(if off_queue > 0 {
                format!(" ({off_queue} on units off the queue)")
            } else {
                String::new()
            }),
            Span::raw(format!(", {} without a pathway · ", fnd.untagged)),
            Span::styled(
                format!(
                    "{} ",
                    app.findings_sources()
                        .get(app.audits.findings_source)
                        .map_or("all annotators".into(), |s| s.label())
                ),
                ACCENT.add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!(
                    "({}{} other files read at start, this session live)",
                    app.keymap
                        .hint_for(
                            Context::Research,
                            &[Action::Left, Action::Right],
                            "",
                            " source; "
                        )
                        .unwrap_or_default(),
                    app.audits.other_audits.len()
                ),
                DIM,
            ),
        ])]),
        head,
    );
    if fnd.records == fnd.untagged {
        f.render_widget(
            Paragraph::new(format!(
                "No pathway tagged yet. Open an item from the queue and tag its evidence pathways (keys 1-{} on the item screen); the counts appear here as you tag.",
                app.taxonomy.pathways.len().clamp(1, 9)
            ))
            .style(DIM)
            .wrap(ratatui::widgets::Wrap { trim: true }),
            body,
        );
        return;
    }
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
            .spacing(1)
            .areas(body);
    let [overall, bench] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(left);
    let [by_model, by_transition] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(right);
    let label = |id: &str| {
        app.taxonomy
            .pathways
            .iter()
            .find(|p| p.id == id)
            .map_or_else(|| s(id), |p| s(&p.label))
    };
    // Overall: a bar per pathway, primary share solid.
    let max = fnd
        .overall
        .values()
        .map(|c| c.tagged)
        .max()
        .unwrap_or(1)
        .max(1);
    let w = (overall.width as usize).saturating_sub(44).clamp(4, 30);
    let mut lines = Vec::new();
    for (i, (id, c)) in fnd.overall.iter().enumerate() {
        let tagged = c.tagged * w / max;
        let primary = (c.primary * w / max).min(tagged);
        let colour = fg(SERIES[i % SERIES.len()]);
        let counts = format!(" {} ({} primary)", c.tagged, c.primary);
        // The name gives way to the bar and the counts, cut with "…" (never the counts).
        let name_w = (overall.width as usize)
            .saturating_sub(w + crate::tui::fit::width(&counts) + 1)
            .clamp(6, 25);
        lines.push(Line::from(vec![
            Span::raw(format!("{} ", crate::tui::fit::pad(&label(id), name_w))),
            Span::styled("█".repeat(primary), colour),
            Span::styled("▒".repeat(tagged - primary), colour),
            Span::raw(counts),
        ]));
    }
    lines.push(Line::from(Span::styled(
        "█ primary  ▒ tagged, not primary",
        DIM,
    )));
    f.render_widget(
        Paragraph::new(lines).block(titled(" pathways, all records ")),
        overall,
    );
    for (title, groups, at) in [
        (" by benchmark (tagged) ", &fnd.by_benchmark, bench),
        (" by model (tagged) ", &fnd.by_model, by_model),
        (
            " by transition (tagged) ",
            &fnd.by_transition,
            by_transition,
        ),
    ] {
        f.render_widget(cross(title, groups, &fnd, &label, at.width), at);
    }
}

fn titled(t: &str) -> Block<'static> {
    Block::default()
        .borders(Borders::TOP)
        .border_style(DIM)
        .title(Span::styled(t.to_string(), ACCENT))
}

/// A table: a row per pathway, a column per group (model, benchmark or transition).
/// A table of pathways by group, `width` cells wide: the pathways' names take what the
/// groups' columns leave (up to 22), cut with "…".
fn cross<'a>(
    title: &str,
    groups: &std::collections::BTreeMap<String, PathwayTable>,
    fnd: &Findings,
    label: &dyn Fn(&str) -> String,
    width: u16,
) -> Table<'a> {
    let names: Vec<&String> = groups.keys().take(6).collect();
    let group_w: Vec<u16> = names
        .iter()
        .map(|n| s(n).chars().count().clamp(3, 16) as u16)
        .collect();
    let others = group_w.iter().sum::<u16>() + group_w.len() as u16;
    let name_w = width.saturating_sub(others + 1).clamp(6, 22);
    let mut header = vec![Cell::from("pathway")];
    header.extend(names.iter().map(|n| Cell::from(s(n))));
    let rows: Vec<TableRow> = fnd
        .overall
        .keys()
        .map(|id| {
            let mut cells = vec![Cell::from(crate::tui::fit::fit(
                &label(id),
                name_w as usize,
            ))];
            cells.extend(names.iter().map(|n| {
                let v = groups[*n].get(id).map_or(0, |c| c.tagged);
                Cell::from(if v == 0 {
                    "·".to_string()
                } else {
                    v.to_string()
                })
            }));
            TableRow::new(cells)
        })
        .collect();
    let mut widths = vec![Constraint::Length(name_w + 1)];
    widths.extend(group_w.into_iter().map(Constraint::Length));
    Table::new(rows, widths)
        .header(TableRow::new(header).style(DIM))
        .block(titled(title))
}
