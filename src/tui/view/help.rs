//! The `?` help: every key of the screen (from the keymap), then what each column, glyph
//! and shade of the screen means. It scrolls; the reducer and the view share
//! [`max_scroll`], so neither lets it run past its last page.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::tui::app::{App, HelpBounds, SortKey};
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::view::theme::{ACCENT, DIM, WARN, s};

/// Where the help is drawn on a screen of `area`.
pub fn popup(area: Rect) -> Rect {
    let w = area.width.saturating_sub(8).min(100);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + 1,
        width: w,
        height: area.height.saturating_sub(2),
    }
}

fn heading(text: &str) -> Line<'static> {
    Line::from(Span::styled(
        text.to_string(),
        ACCENT.add_modifier(Modifier::BOLD),
    ))
}

/// A legend entry: the glyph or column name, then what it means.
fn entry(what: &str, means: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{what:>12}  "), ACCENT),
        Span::raw(means.to_string()),
    ])
}

/// Every line of the help of the current screen, before wrapping.
pub fn help_lines(app: &App) -> Vec<Line<'static>> {
    let ctx = app.screen.context();
    let mut lines = Vec::new();
    // What the status lines say, in full: a line cuts a long message.
    let messages: Vec<String> = [
        app.overlays.notice.as_ref().map(|n| n.text.clone()),
        app.session.last_error().map(|e| format!("not saved: {e}")),
        app.session.notice(),
        app.queue.part.clone(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !messages.is_empty() {
        lines.push(heading("Messages, in full"));
        lines.extend(
            messages
                .iter()
                .map(|m| Line::from(Span::styled(s(m), WARN))),
        );
        lines.push(Line::from(""));
    }
    // What the item screen cuts to fit its panes, whole.
    if ctx == Context::Item {
        let full = super::item::in_full(app);
        if !full.is_empty() {
            lines.push(heading("The item, in full (its answers after the verdict)"));
            lines.extend(full);
            lines.push(Line::from(""));
        }
        // In a review, the annotators' records, which the compact screen has no room for.
        if let (Some(review), Some(i)) = (&app.audits.review, app.current()) {
            lines.push(heading("The annotators' records, in full"));
            lines.extend(super::review::panel(
                review,
                &app.key(i),
                &app.taxonomy,
                u16::MAX / 2,
            ));
            lines.push(Line::from(""));
        }
    }
    lines.push(heading(&format!("Keys on the {} screen", ctx.as_str())));
    // One line per action, with all its keys and which of them work on every screen;
    // pathways are listed with the taxonomy below.
    let mut actions: Vec<(Action, Vec<String>, String, Vec<String>)> = Vec::new();
    for b in app.keymap.for_context(ctx) {
        if matches!(b.action, Action::TogglePathway(_)) {
            continue;
        }
        let label = b.key.label();
        let at = match actions.iter().position(|(a, ..)| *a == b.action) {
            Some(at) => at,
            None => {
                actions.push((b.action, Vec::new(), b.desc.clone(), Vec::new()));
                actions.len() - 1
            }
        };
        let (_, keys, _, global) = &mut actions[at];
        // A key bound on every screen and again on this one is listed once.
        if !keys.contains(&label) {
            keys.push(label.clone());
        }
        if b.context == Context::Global && !global.contains(&label) {
            global.push(label);
        }
    }
    for (_, keys, desc, global) in actions {
        let everywhere = if global.is_empty() {
            String::new()
        } else if global.len() == keys.len() {
            "  (everywhere)".into()
        } else {
            format!("  ({} everywhere)", global.join(" "))
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{:>12}  ", keys.join(" ")), ACCENT),
            Span::raw(desc),
            Span::styled(everywhere, DIM),
        ]));
    }
    if ctx == Context::Item {
        lines.push(Line::from(""));
        lines.push(heading("Evidence pathways (a key toggles one)"));
        for (i, p) in app.taxonomy.pathways.iter().enumerate() {
            let key = app
                .keymap
                .pathway_key(i)
                .unwrap_or_else(|| "(no key)".into());
            lines.push(Line::from(vec![
                Span::styled(format!("{:>12}  ", s(&key)), ACCENT),
                Span::raw(s(&p.label)),
                Span::styled(format!(": {}", s(&p.description)), DIM),
            ]));
        }
    }
    lines.push(Line::from(""));
    lines.extend(legend(app, ctx));
    lines.push(Line::from(""));
    // Each editor's keys as bound, the two said once when they agree; a picker's line
    // keeps Enter and Esc.
    let keys = |ctx| super::editor_keys(app, ctx);
    let (note, search) = (keys(Context::Note), keys(Context::Search));
    let heading_text = if note == search {
        format!("In the note and search editors ({note}) and a picker's line")
    } else {
        format!("In the note editor ({note}), the search ({search}) and a picker's line")
    };
    lines.push(heading(&s(&heading_text)));
    for (keys, what) in crate::tui::input::line_edit::KEYS {
        lines.push(entry(keys, what));
    }
    lines
}

/// What the columns and glyphs of the screen mean.
fn legend(app: &App, ctx: Context) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let status = [
        entry("· ✓ ↷ ⚑", "status: to do, done, skipped, flagged"),
        entry("▶", "the selected row (also in reverse video)"),
    ];
    let trajectory = [
        entry(
            "✓ ✗",
            "right, wrong at one configuration (budget order, lowest first)",
        ),
        entry(
            "· ░ ▒ ▓ █",
            "open tasks: score 0-12, 13-37, 38-62, 63-87, 88-100",
        ),
    ];
    match ctx {
        Context::Queue | Context::Global => {
            out.push(heading("Columns of the queue"));
            out.push(entry("st", "audit status of the item (glyphs below)"));
            out.push(entry("model", "the model whose answers the row shows"));
            out.push(entry("benchmark", "the benchmark (split) of the item"));
            out.push(entry("item", "the item's id in the dataset"));
            out.push(entry(
                "trajectory",
                "one glyph per configuration, named (cut to fit) in the header, or beside each glyph where the rows' models have different configurations",
            ));
            out.push(entry(
                "T",
                "terminal regression: right at a lower budget, wrong at the highest",
            ));
            if app.queue.harms.is_some() {
                out.push(entry(
                    "R",
                    "replicates: ● stable (the harm holds in every re-run and shifted grid), ○ lottery (it does not), · unjudged (too few), – not judged: open-ended (replicates judge multiple-choice answers only)",
                ));
            }
            out.push(entry(
                "#",
                "harmful pairs: configuration pairs right at the lower budget, wrong at the higher",
            ));
            out.push(entry("question", "the item's question (from items.jsonl)"));
            out.push(entry(
                "pathway",
                "the audit's primary pathway, else its tags (at 120 columns and wider)",
            ));
            out.push(heading("Glyphs"));
            out.extend(status);
            out.extend(trajectory);
            if let Some(i) = app.current() {
                let names: Vec<String> = app.config_names(i).iter().map(|n| s(n)).collect();
                out.push(entry(
                    "selected",
                    &format!(
                        "trajectory of {}: {}",
                        crate::tui::view::theme::id(app.names(i).model),
                        names.join(", ")
                    ),
                ));
            }
            out.push(heading("Sorts (in the order the sort key cycles)"));
            for (sort, means) in [
                (
                    SortKey::Rank,
                    "as `frameaudit list` ranks: terminal regressions first; items right with no video after the others; then by the share of the item's comparable pairs that are harmful",
                ),
                (SortKey::Model, "by model, then item"),
                (SortKey::Item, "by item, then model"),
                (SortKey::Status, "to do, done, skipped, flagged"),
                (
                    SortKey::Pairs,
                    "terminal regressions first, then by the number of harmful pairs, most first (the former rank)",
                ),
                (
                    SortKey::Stable,
                    "its own key, not in the cycle: stable, unjudged, lottery, then the open-ended rows, each in rank order",
                ),
            ] {
                out.push(entry(sort.label(), means));
            }
        }
        Context::Item => {
            out.push(heading("Trajectory table"));
            out.push(entry(
                "▸",
                "the two configurations of the audited transition (right → wrong)",
            ));
            out.push(entry(
                "*",
                "a variant configuration (same frames, other setting)",
            ));
            out.push(entry(
                "conf score",
                "the model's confidence or the open-task score",
            ));
            out.extend(trajectory);
            out.push(heading("Frames"));
            out.push(entry(
                "▮",
                "a frame the configuration sampled (kept by the higher)",
            ));
            out.push(entry(
                "×",
                "dropped: the lower budget had it, the higher did not",
            ));
            out.push(entry("+", "added: new at the higher budget"));
            out.push(entry(
                "◆",
                "on a re-run's row (a replicate, an intervention run): a frame the configuration it re-ran did not sample (the shift moved it in, the run restored it)",
            ));
            out.push(entry("★", "an evidence frame of this audit"));
            out.push(entry("reverse", "the frame under the cursor"));
            out.push(entry(
                "ASSUMED",
                "frames reconstructed from a rule nobody recorded (reproduced, recorded: surer)",
            ));
        }
        Context::Research => {
            out.push(heading("Model tables (here and in `frameaudit report`)"));
            out.push(entry("items", "items in the model's grid"));
            out.push(entry("K", "configurations (budgets) in the model's grid"));
            out.push(entry(
                "best",
                "accuracy of the best fixed configuration (%)",
            ));
            out.push(entry(
                "oracle",
                "accuracy picking the right configuration per item",
            ));
            out.push(entry("head", "headroom: oracle minus best (points)"));
            out.push(entry(
                "harmful",
                "items right at a lower budget and wrong at a higher (% of items)",
            ));
            out.push(entry(
                "terminal",
                "items wrong at the highest budget after a right (%)",
            ));
            out.push(entry(
                "text-ow",
                "text overwrite: right with text only, wrong with some frames (% of items)",
            ));
            out.push(entry("█ ▓ ▒ ░", "churn parts, in the order of the legend"));
            out.push(entry("● ├─┤", "estimate and its 95% bootstrap interval"));
            if !app.ds.matrix.replicates.cells.is_empty() {
                out.push(entry(
                    "vs noise",
                    "per budget step, the % of items turning wrong, its floor (the % that turn wrong with no change of budget, in the replicates), the excess and its q; ✱ beyond noise where the excess survives. Where the screen is too short, one line: noise N/M✱ (steps beyond noise of all), stable and lottery harm",
                ));
            }
        }
        // The help is of a screen, never of the input mode over it.
        Context::Help | Context::Search | Context::Note => {}
    }
    out
}

/// The cells of the key column: an entry's keys right-aligned in 12, then two spaces.
const KEY_COL: usize = 14;

/// `line` wrapped to `width`: an entry's text (a line whose first span is its key column)
/// goes on right of the keys, so the keys stand alone in their column.
/// Keys wider than their column (a sort's name, "terminal, harmful pairs") stand on a line
/// of their own, and the text goes on below, in its column.
fn wrapped(line: &Line<'static>, width: u16) -> Vec<Line<'static>> {
    let indent = match line.spans.as_slice() {
        [keys, rest @ ..] if !rest.is_empty() && keys.content.ends_with("  ") => {
            let w = crate::tui::fit::width(&keys.content);
            if w > KEY_COL {
                let mut out = crate::tui::fit::wrap_hanging(
                    &Line::from(Span::styled(
                        keys.content.trim_end().to_string(),
                        keys.style,
                    )),
                    width as usize,
                    0,
                );
                let mut below = vec![Span::raw(" ".repeat(KEY_COL))];
                below.extend(rest.iter().cloned());
                out.extend(crate::tui::fit::wrap_hanging(
                    &Line::from(below),
                    width as usize,
                    KEY_COL,
                ));
                return out;
            }
            w
        }
        _ => 0,
    };
    crate::tui::fit::wrap_hanging(line, width as usize, indent)
}

/// Rows each line takes once wrapped to `width`.
fn heights(lines: &[Line<'static>], width: u16) -> Vec<usize> {
    lines.iter().map(|l| wrapped(l, width).len()).collect()
}

/// The first line of the last page: scrolling stops there.
pub fn max_scroll(app: &App, area: Rect) -> usize {
    let p = popup(area);
    let (w, h) = (
        p.width.saturating_sub(2),
        p.height.saturating_sub(2) as usize,
    );
    let hs = heights(&help_lines(app), w);
    let mut rows = 0;
    for (i, hi) in hs.iter().enumerate().rev() {
        rows += hi;
        if rows > h {
            return i + 1;
        }
    }
    0
}

/// How the help scrolls from the line now on top: its last first line, and the lines a
/// page down and a page up move by (each at least one).
pub fn bounds(app: &App, area: Rect) -> HelpBounds {
    let p = popup(area);
    let rows = p.height.saturating_sub(2) as usize;
    let hs = heights(&help_lines(app), p.width.saturating_sub(2));
    let last = max_scroll(app, area);
    let start = app.overlays.help_scroll.min(last);
    // How many lines, taken in order, fill `rows` whole.
    let fill = |lines: &mut dyn Iterator<Item = &usize>| {
        let mut used = 0;
        lines
            .take_while(|&&h| {
                used += h;
                used <= rows
            })
            .count()
            .max(1)
    };
    HelpBounds {
        last,
        down: fill(&mut hs[start..].iter()),
        up: fill(&mut hs[..start].iter().rev()),
    }
}

/// Draws the help over the screen, from line `app.overlays.help_scroll`.
pub fn draw(f: &mut Frame, app: &App, area: Rect) {
    let p = popup(area);
    let lines = help_lines(app);
    let n = lines.len();
    let start = app.overlays.help_scroll.min(max_scroll(app, area));
    let more = start < max_scroll(app, area);
    // The help's own keys as bound (an arrow before its letter), the ones that still
    // scroll somewhere.
    let parts: &[(&[Action], &str, &str)] = if more {
        &[
            (&[Action::Down, Action::Up], "", ""),
            (&[Action::PageDown, Action::PageUp], "", ""),
        ]
    } else {
        &[(&[Action::Up], "", ""), (&[Action::PageUp], "", "")]
    };
    let keys = app.keymap.hint_list(Context::Help, parts);
    let keys = if keys.is_empty() {
        String::new()
    } else {
        format!("{} scroll · ", s(&keys.join(" ")))
    };
    let hint = if more {
        format!(" ↓ more: {keys}any other key closes ")
    } else {
        format!(" {keys}any other key closes ")
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" help ")
        .title_bottom(Line::from(Span::styled(
            crate::tui::fit::fit(
                &format!("{hint}· line {} of {n} ", start + 1),
                p.width.saturating_sub(2) as usize,
            ),
            ACCENT,
        )));
    f.render_widget(Clear, p);
    let width = p.width.saturating_sub(2);
    f.render_widget(
        Paragraph::new(
            lines
                .iter()
                .skip(start)
                .flat_map(|l| wrapped(l, width))
                .collect::<Vec<_>>(),
        )
        .block(block),
        p,
    );
}
