//! Drawing: a pure function of the app state onto a ratatui frame. No I/O here. Every string
//! from a data file goes through `sanitize` before it reaches the buffer.

mod cascade;
pub mod charts;
mod complementarity;
mod datamap;
pub mod findings;

pub mod frames;
mod help;
mod item;
mod noise;
mod overview;
mod pick;
mod protocols;
mod queue;
mod review;
pub mod theme;

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::core::analysis::Metrics;
use crate::core::audit::Status;
use crate::core::queue::HarmfulTransition;
use crate::tui::app::{App, Drawn, Input, Screen};
use crate::tui::fit::{fit, fit_line, fit_whole, head, width};
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::research::View;
use theme::{ACCENT, DIM, RIGHT, WARN, WRONG, s};

pub use crate::tui::app::{MIN_HEIGHT, MIN_WIDTH};

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
    let direct = app.frames.kitty_direct;
    let mut placed = Vec::new();
    let mut drawn = Drawn::default();
    let done = term.draw(|f| drawn = draw_placing(f, app))?;
    if direct {
        placed = crate::tui::kitty::placed(done.buffer);
    }
    if app.after_draw(drawn) {
        let mut again = Drawn::default();
        let done = term.draw(|f| again = draw_placing(f, app))?;
        if direct {
            placed = crate::tui::kitty::placed(done.buffer);
        }
        app.after_draw(again);
    }
    if direct {
        // Kitty keeps a placement until told: those the screen no longer holds go.
        app.frames.settle_placements(placed);
    }
    Ok(())
}

/// [`draw`], and with kitty images placed directly, none left under something drawn over
/// them.
fn draw_placing(f: &mut Frame, app: &App) -> Drawn {
    let drawn = draw(f, app);
    if app.frames.kitty_direct {
        crate::tui::kitty::unplace_covered(f.buffer_mut(), |id| {
            app.frames.direct_sizes.get(&id).copied()
        });
    }
    drawn
}

/// The notice on a terminal below the least size: the longest wording that fits once
/// wrapped, down to the way out alone, which a tiny window must still show. Keys do
/// nothing there but quit ([`App::on_key`]); `confirm`: a first `q` asked to quit with
/// changes not saved yet, and a second one quits. `quit`: the quit key as bound.
fn too_small(area: Rect, confirm: bool, quit: &str, editor: Option<&str>) -> Paragraph<'static> {
    let (w, h) = (area.width, area.height);
    let q = match editor {
        Some(what) => what.to_string(),
        None if confirm => format!("not saved yet: {quit} again quits"),
        None => format!("{quit} quits"),
    };
    let wordings = [
        match editor {
            Some(_) => format!(
                "frameaudit needs a terminal of at least {MIN_WIDTH}x{MIN_HEIGHT}; this one is {w}x{h}.\nMake the window larger.\n{q}."
            ),
            None => format!(
                "frameaudit needs a terminal of at least {MIN_WIDTH}x{MIN_HEIGHT}; this one is {w}x{h}.\nMake the window larger ({q})."
            ),
        },
        format!("Too small: {w}x{h},\nneeds {MIN_WIDTH}x{MIN_HEIGHT}.\n{q}."),
        format!("needs {MIN_WIDTH}x{MIN_HEIGHT}\n{q}"),
        q.to_string(),
    ];
    let paragraph = |text: &str| {
        Paragraph::new(text.to_string())
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true })
    };
    let fits = |text: &&String| paragraph(text).line_count(w) <= usize::from(h);
    let text = wordings.iter().find(fits).unwrap_or(&wordings[3]);
    paragraph(text)
}

/// How an editor of `ctx` (the note, the search line) is left, in the keys bound:
/// "Enter keeps, Esc cancels".
fn editor_keys(app: &App, ctx: Context) -> String {
    let key = |a| app.keymap.hint(ctx, a).unwrap_or_else(|| "(no key)".into());
    format!(
        "{} keeps, {} cancels",
        key(Action::Accept),
        key(Action::Cancel)
    )
}

fn draw_screen(f: &mut Frame, app: &App, out: &mut Drawn) {
    let area = f.area();
    if crate::tui::app::below_least_size(area.width, area.height) {
        let quit = app
            .keymap
            .hint(Context::Queue, Action::Quit)
            .unwrap_or_else(|| "Ctrl-c".into());
        // An open editor still takes the keys: how to leave it, in the keys bound.
        let keys = |ctx| editor_keys(app, ctx);
        let editor = match (&app.overlays.input, &app.overlays.pick) {
            (_, Some(_)) => Some("typing into the picker: Enter picks, Esc cancels".to_string()),
            (Input::Note(_), _) => Some(format!("typing into the note: {}", keys(Context::Note))),
            (Input::Search, _) => {
                Some(format!("typing into the search: {}", keys(Context::Search)))
            }
            (Input::None, _) => None,
        };
        f.render_widget(
            too_small(
                area,
                app.overlays.confirm_quit,
                &s(&quit),
                editor.as_deref().map(s).as_deref(),
            ),
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
        Screen::Queue => queue::draw_queue(f, app, body, out),
        Screen::Item => item::draw_item(f, app, body, out),
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
                " · {} · {} · {}",
                crate::core::text::count(o.models, "model"),
                crate::core::text::count(o.configs, "config"),
                crate::core::text::count(o.items, "item")
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
    let mut line2 = Vec::new();
    // Not saving comes first, in few words, so that its reason shows at 80 columns too,
    // and then stands for the save state.
    let last_error = app.session.last_error();
    if let Some(err) = &last_error {
        line2.push(Span::styled(
            format!(
                "NOT SAVED ({} pending, retried each second): {} · ",
                app.session.unsaved(),
                s(err)
            ),
            WRONG.add_modifier(Modifier::BOLD),
        ));
    }
    line2.push(Span::raw(format!(
        "done {done} · skipped {skipped} · flagged {flagged} · left {left}"
    )));
    line2.push(Span::styled(
        format!(" · {:.1} items/min", app.items_per_minute()),
        DIM,
    ));
    if last_error.is_none() {
        let style = if app.session.unsaved() > 0 {
            WARN
        } else {
            RIGHT
        };
        line2.push(Span::styled(" · ", DIM));
        line2.push(Span::styled(save, style));
    }
    // What the saver had to do (the file written again) comes right after "saved".
    if let Some(n) = app.session.notice() {
        line2.push(Span::styled(format!(" · {}", s(&n)), WARN));
    }
    line2.push(Span::styled(
        format!(" · annotator {}", s(app.session.annotator())),
        DIM,
    ));
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

/// Labels of a grid's configurations to sit beside their glyphs: the part before the first
/// `_` (`64f` of `64f_151k`) where those stay distinct within the grid, else the whole names.
/// `names` are sanitized already.
fn config_labels(names: &[String]) -> Vec<String> {
    let short: Vec<&str> = names
        .iter()
        .map(|n| n.split_once('_').map_or(n.as_str(), |(a, _)| a))
        .collect();
    let distinct = short.iter().collect::<std::collections::HashSet<_>>().len() == short.len();
    if distinct {
        short.into_iter().map(str::to_string).collect()
    } else {
        names.to_vec()
    }
}

/// Each glyph right after its configuration's label (cut to `w` cells), a space between
/// (`16f✓ 32f✓ 64f✗`): where models have different grids, a glyph then never reads under
/// another grid's name.
fn labelled(glyphs: Vec<Span<'static>>, labels: &[String], w: usize) -> Vec<Span<'static>> {
    let mut out = Vec::with_capacity(glyphs.len() * 3);
    for (n, (g, l)) in glyphs.into_iter().zip(labels).enumerate() {
        if n > 0 {
            out.push(Span::raw(" "));
        }
        out.push(Span::styled(head(l, w), DIM));
        out.push(g);
    }
    out
}

/// The cells [`labelled`] takes for `labels` cut to `w` cells.
fn labelled_width(labels: &[String], w: usize) -> usize {
    let cells: usize = labels.iter().map(|l| width(&head(l, w)) + 1).sum();
    cells + labels.len().saturating_sub(1)
}

fn status_glyph(st: Status) -> Span<'static> {
    match st {
        Status::Todo => Span::styled("·", DIM),
        Status::Done => Span::styled("✓", RIGHT),
        Status::Skipped => Span::styled("↷", WARN),
        Status::Flagged => Span::styled("⚑", WRONG),
    }
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
        // Single letters run together (`123456789`), longer keys apart.
        let bound: Vec<String> = (0..app.taxonomy.pathways.len())
            .filter_map(|i| app.keymap.pathway_key(i))
            .collect();
        let sep = if bound.iter().all(|k| k.chars().count() == 1) {
            ""
        } else {
            " "
        };
        if !bound.is_empty() {
            items.push((format!(" {} ", s(&bound.join(sep))), "pathways ".into()));
        }
    }
    let w = area.width as usize;
    // While typing, `?` is a letter: the keys that do not fit end in "…".
    let more = match app.keymap.hint(ctx, Action::Help) {
        Some(k) if !editing => format!(" {k} more"),
        _ => " …".to_string(),
    };
    let more = more.as_str();
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
        let style = if n.error {
            WRONG.add_modifier(Modifier::BOLD)
        } else {
            WARN
        };
        let text = s(&n.text);
        // A message too long for the line says where it is in full: the help, which
        // leaves it in place.
        let whole = match app.keymap.hint(ctx, Action::Help) {
            Some(k) if width(&text) > w && !editing => format!(" ({k}: in full)"),
            _ => String::new(),
        };
        let mut line = fit_line(
            Line::from(Span::styled(text, style)),
            w.saturating_sub(width(&whole)),
        );
        line.spans.push(Span::styled(whole, DIM));
        line
    });
    let lines = vec![notice.unwrap_or_default(), Line::from(spans)];
    f.render_widget(Paragraph::new(lines), area);
}

/// A class filter as the views name classes ("loss", "oscillating"), or the open-ended
/// items, which have no class.
pub fn class_filter_label(c: Option<crate::core::analysis::mcq::Class>) -> &'static str {
    c.map_or("open-ended", crate::core::figures::class_label)
}
