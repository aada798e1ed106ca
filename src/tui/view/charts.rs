//! What every researcher view shares: the tab line, the line saying which analysis is
//! shown, the figures' colours as terminal colours, and small text figures (interval
//! bars, fill glyphs) that stay legible without colour.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Paragraph};

use crate::core::analysis::Interval;
use crate::core::figures::Rgb;
use crate::tui::app::App;
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::research::{View, ViewData};
use crate::tui::view::theme::{ACCENT, DIM, WARN, s};

/// Key hints of a researcher view ("←→ column · Enter: queue"), named as the keymap binds
/// the keys, so a user's keymap file changes them too.
pub fn research_hints(app: &App, parts: &[(&[Action], &str, &str)]) -> String {
    app.keymap.hints(Context::Research, parts)
}

/// A figure colour on the terminal.
pub fn rgb((r, g, b): Rgb) -> Color {
    Color::Rgb(r, g, b)
}

/// The style of a figure colour as a terminal colour.
pub fn fg(c: Rgb) -> Style {
    Style::new().fg(rgb(c))
}

/// Fill glyphs of the churn parts, so the bars read without colour too.
pub const PART_GLYPHS: [char; 4] = ['█', '▓', '▒', '░'];

/// The tabs of the researcher views and the analysis line (two rows).
pub fn draw_tabs(f: &mut Frame, app: &App, view: View, d: &ViewData, area: Rect) {
    let mut tabs = Vec::new();
    for (i, v) in View::ALL.iter().enumerate() {
        let style = if *v == view {
            ACCENT.add_modifier(Modifier::BOLD | Modifier::REVERSED)
        } else {
            DIM
        };
        tabs.push(Span::styled(format!(" {} {} ", i + 1, v.title()), style));
        tabs.push(Span::raw(" "));
    }
    // "Tab/1-6 switch": the view keys as bound, the numbered ones as a range.
    let last = app
        .keymap
        .hint(Context::Research, Action::ShowView(View::ALL.len() - 1))
        .map_or_else(String::new, |k| format!("-{k}"));
    let switch = research_hints(
        app,
        &[(
            &[Action::NextView, Action::ShowView(0)],
            "/",
            &format!("{last} switch"),
        )],
    );
    tabs.push(Span::styled(switch, DIM));
    let m = &app.ds.matrix;
    let a = &d.analysis;
    let models = match d.key.model_set {
        0 => "all".to_string(),
        _ => a
            .grids
            .models
            .first()
            .map_or("–".into(), |mg| s(m.models.name(mg.model))),
    };
    let model = a
        .grids
        .models
        .get(app.research.model)
        .map_or("–".into(), |mg| s(m.models.name(mg.model)));
    // The keys as bound: an unbound one is no key to name.
    let key = |action: Action| {
        Span::styled(
            app.keymap
                .hint(Context::Research, action)
                .map_or_else(String::new, |k| format!("{} ", s(&k))),
            ACCENT,
        )
    };
    // The model first: `m` switches it and the views show nothing else naming it, and the
    // line is cut at its end on a narrow screen (80 columns end in the configurations).
    let line = Line::from(vec![
        key(Action::NextModel),
        Span::styled(format!("model {model}"), WARN.add_modifier(Modifier::BOLD)),
        Span::raw("  "),
        key(Action::NextProtocol),
        Span::raw(format!(
            "protocol {}  ",
            s(m.protocols.name(a.key.protocol))
        )),
        key(Action::NextTask),
        Span::raw(format!("task {}  ", a.key.task.as_str())),
        key(Action::NextScope),
        Span::raw(format!("scope {}  ", s(a.key.scope_name(m)))),
        key(Action::NextModelSet),
        Span::raw(format!("models {models}  ")),
        key(Action::ToggleZeroFrame),
        Span::raw(if d.key.zero_frame {
            "with text-only  "
        } else {
            "visual only  "
        }),
        key(Action::NextConfigSet),
        Span::raw(config_set(app, d)),
    ]);
    let w = area.width as usize;
    f.render_widget(
        Paragraph::new(vec![
            crate::tui::fit::fit_line(Line::from(tabs), w),
            crate::tui::fit::fit_line(line, w),
        ]),
        area,
    );
}

/// `12.3% [10.1, 14.8]`, or a note on why there is no interval.
pub fn with_interval(value: f64, iv: Option<Interval>, state: &str) -> String {
    match iv {
        Some(i) => format!("{value:.1}% [{:.1}, {:.1}]", i.lo, i.hi),
        None => format!("{value:.1}% {state}"),
    }
}

/// An interval drawn on a 0..`max` scale of `width` cells: `──├──●──┤──`.
pub fn interval_bar(value: f64, iv: Option<Interval>, max: f64, width: usize) -> String {
    if width < 3 || max <= 0.0 {
        return String::new();
    }
    let at = |v: f64| (((v / max) * (width - 1) as f64).round().max(0.0) as usize).min(width - 1);
    let mut cells = vec!['·'; width];
    if let Some(i) = iv {
        let (lo, hi) = (at(i.lo), at(i.hi));
        for c in cells.iter_mut().take(hi + 1).skip(lo) {
            *c = '─';
        }
        cells[lo] = '├';
        cells[hi] = '┤';
    }
    cells[at(value)] = '●';
    cells.into_iter().collect()
}

/// A line of text at a row of an area (nothing outside it).
pub fn text_at(f: &mut Frame, area: Rect, dx: u16, dy: u16, line: Line) {
    if dy >= area.height || dx >= area.width {
        return;
    }
    let r = Rect {
        x: area.x + dx,
        y: area.y + dy,
        width: area.width - dx,
        height: 1,
    };
    f.render_widget(
        Paragraph::new(crate::tui::fit::fit_line(line, r.width as usize)),
        r,
    );
}

/// Nice upper bound for an axis in percent: the next multiple of 10 above `v` (at most 100).
pub fn ceil10(v: f64) -> f64 {
    ((v / 10.0).ceil() * 10.0).clamp(10.0, 100.0)
}

/// Nice lower bound: the multiple of 10 below `v`.
pub fn floor10(v: f64) -> f64 {
    ((v / 10.0).floor() * 10.0).clamp(0.0, 90.0)
}

/// How the analysis line names the configuration set: `configs all` or `configs ≤ 32f`.
fn config_set(app: &App, d: &ViewData) -> String {
    if d.key.config_cut == 0 {
        return "configs all".into();
    }
    let m = &app.ds.matrix;
    let top = crate::core::workspace::selections::budget_order(m, &d.analysis)
        .last()
        .map_or("–".into(), |&c| s(m.config(c).name.as_ref()));
    format!("configs ≤ {top}")
}

/// The y labels of a percent chart from `lo` to `hi`: bottom, middle and top.
pub fn y_labels(lo: f64, hi: f64) -> [String; 3] {
    [
        format!("{lo:.0}"),
        format!("{:.0}", (lo + hi) / 2.0),
        format!("{hi:.0}"),
    ]
}

/// The y axis of a percent chart with [`y_labels`].
pub fn y_axis(lo: f64, hi: f64) -> Axis<'static> {
    Axis::default()
        .bounds([lo, hi])
        .labels(y_labels(lo, hi).map(Line::from).to_vec())
        .style(DIM)
}
