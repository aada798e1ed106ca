//! The overview's panel on the noise floor (docs/measures.md §16): for the model under the
//! cursor, each budget step's negative flips against the flips its replicates show with no
//! change of budget, the false-discovery q of the excess, and the floor per nuisance.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::core::analysis::noise::Replicated;
use crate::tui::view::charts::text_at;
use crate::tui::view::theme::{DIM, WARN, s};

/// A percent with one decimal, `–` for none.
fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.1}"))
}

/// The lines of the panel: a heading, one line per step (observed, floor, excess, q, and
/// `✱ beyond noise` where the excess survives the false-discovery control), the floor per
/// nuisance, and the share of harm that is stable and a lottery.
pub fn noise_lines(r: &Replicated) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(Span::styled(
        format!(
            "vs noise: % turning wrong per step, its floor (q ≤ {})",
            r.alpha
        ),
        DIM,
    ))];
    let from_w = r
        .edges
        .iter()
        .map(|e| s(&e.from).chars().count() + s(&e.to).chars().count() + 1)
        .max()
        .unwrap_or(0);
    for e in &r.edges {
        let step = format!("{}→{}", s(&e.from), s(&e.to));
        let mut spans = vec![
            Span::raw(format!("{step:<from_w$} ")),
            Span::raw(format!("{:>5} ", pct(Some(e.observed_nfr)))),
            Span::styled(format!("floor {:>4} ", pct(e.floor_nfr)), DIM),
            Span::raw(format!(
                "{:>6} ",
                e.excess_nfr.map_or("–".into(), |x| format!("{x:+.1}"))
            )),
            Span::styled(
                format!(
                    "q {}",
                    e.excess_q.map_or("–".into(), |q| if q < 0.001 {
                        "<.001".into()
                    } else {
                        format!("{q:.3}")
                    })
                ),
                DIM,
            ),
        ];
        if e.beyond_noise {
            spans.push(Span::styled(
                " ✱ beyond noise",
                WARN.add_modifier(Modifier::BOLD),
            ));
        }
        out.push(Line::from(spans));
    }
    let floors: Vec<String> = r
        .floor
        .by_nuisance
        .iter()
        .map(|(n, f)| format!("{} {}%", s(n), pct(f.negative_flip_floor)))
        .collect();
    out.push(Line::from(Span::styled(
        format!("floor per nuisance: {}", floors.join(" · ")),
        DIM,
    )));
    let st = &r.stable;
    out.push(Line::from(Span::styled(
        format!(
            "stable harm {}% · lottery {}% of {} replicated",
            pct(st.stable_harmful_rate),
            pct(st.lottery_rate),
            st.harmful_replicated
        ),
        DIM,
    )));
    out
}

/// The panel in one line of at most `w` cells, where there is no room for it: how many
/// steps turn wrong beyond their floor, and the share of harm that is stable and a
/// lottery, in the most words that fit.
pub fn noise_summary(r: &Replicated, w: usize) -> Line<'static> {
    let beyond = r.edges.iter().filter(|e| e.beyond_noise).count();
    let n = r.edges.len();
    let (stable, lottery) = (
        pct(r.stable.stable_harmful_rate),
        pct(r.stable.lottery_rate),
    );
    let text = [
        format!(
            "vs noise: {beyond} of {n} steps ✱ beyond · stable harm {stable}% · lottery {lottery}%"
        ),
        format!("vs noise: {beyond}/{n} steps ✱ · stable {stable}% · lottery {lottery}%"),
        format!("noise {beyond}/{n}✱ stable {stable}% lottery {lottery}%"),
    ]
    .into_iter()
    .find(|t| crate::tui::fit::width(t) <= w)
    .unwrap_or_else(|| format!("noise {beyond}/{n}✱"));
    let style = if beyond > 0 {
        WARN.add_modifier(Modifier::BOLD)
    } else {
        DIM
    };
    Line::from(Span::styled(text, style))
}

/// Draws the panel's lines from the top of `area`, as many as fit.
pub fn draw_noise(f: &mut Frame, r: &Replicated, area: Rect) {
    for (y, line) in noise_lines(r).into_iter().enumerate() {
        text_at(f, area, 0, y as u16, line);
    }
}
