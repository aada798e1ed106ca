//! The frames of the item screen: a timeline with one row per configuration marking the
//! frames its budget sampled (for the audited transition: kept, dropped and added ones in
//! their own colours), one row per intervention run with the frames it was given against
//! the top configuration's (restored ones marked), a strip of thumbnails with a cursor, and a large view of the frame
//! under the cursor. Images come from the background loader; the view only asks for them.

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::core::frames::timestamp;
use crate::core::rules::Provenance;
use crate::core::text::sanitize;
use crate::term::ImageMode;
use crate::tui::app::PlannedFrames;
use crate::tui::app::{App, Drawn, FrameInfo, Subset, THUMB_SIDE};
use crate::tui::fit::{fit, fit_line, fit_whole, pad};
use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::view::theme::{ACCENT, DIM, RIGHT, WARN, WRONG, s};

const KEPT: Style = Style::new().fg(Color::Gray);
const DROPPED: Style = Style::new().fg(Color::Red);
const ADDED: Style = Style::new().fg(Color::Yellow);
const KEPT_GLYPH: char = '▮';
const DROPPED_GLYPH: char = '×';
const ADDED_GLYPH: char = '+';
const RESTORED: Style = Style::new().fg(Color::Cyan);
const RESTORED_GLYPH: char = '◆';

/// Why frames are text under `NO_COLOR`, and how to see them.
pub const NO_COLOR_PICTURES: &str = "NO_COLOR: no pictures; unset it, or use --images kitty";

/// Why frames are text when `--images none` turned them off (`NO_COLOR` or not).
pub const IMAGES_NONE_PICTURES: &str = "--images none: no pictures";

/// Rows of the compact frames (80x24): the title, the audited pair's timeline, its axis,
/// the counts and the keys; the frame under the cursor beside them.
pub const COMPACT_H: u16 = 6;

/// Draws the frames part of the item screen for row `i`; `compact` keeps only the audited
/// pair's timeline and the frame under the cursor (no thumbnails).
pub fn draw_frames(f: &mut Frame, app: &App, i: usize, area: Rect, compact: bool, out: &mut Drawn) {
    if area.height < 3 {
        return;
    }
    let info = app.frame_info(i);
    let none_known = info.configs.iter().all(|c| c.frames.is_empty())
        && info.interventions.is_empty()
        && info.replicates.iter().all(|r| r.frames.is_empty());
    if none_known {
        draw_folded(f, &info, area);
        return;
    }
    let [left, right] = crate::tui::view::theme::panes(area);
    let title = match (&info.video, info.num_frames) {
        (Some(v), Some(n)) => format!(
            " frames of video {} ({} frames, {}) ",
            s(v),
            n,
            info.fps.map_or("fps unknown".into(), |f| format!(
                "{f} fps, {}",
                timestamp(n, Some(f))
            ))
        ),
        (Some(v), None) => format!(" frames of video {} ", s(v)),
        _ => " frames ".to_string(),
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(fit(&title, left.width as usize), ACCENT))
        .border_style(DIM);
    let inner = block.inner(left);
    f.render_widget(block, left);
    if compact {
        // Every configuration's row when there is room, else the audited pair's two.
        let only_pair = inner.height
            < (info.configs.len() + info.interventions.len() + info.replicates.len()) as u16 + 4;
        draw_timeline(f, app, &info, inner, only_pair, true);
    } else {
        let k = info.configs.len();
        let planned = info.interventions.len();
        let timeline_h =
            (k as u16 + 3 + planned as u16 + u16::from(planned > 0) + info.replicates.len() as u16)
                .min(inner.height);
        let [timeline, thumbs] =
            Layout::vertical([Constraint::Length(timeline_h), Constraint::Min(0)]).areas(inner);
        draw_timeline(f, app, &info, timeline, false, false);
        draw_thumbnails(f, app, &info, thumbs, out);
    }
    draw_large(f, app, &info, right, out);
}

/// The frames pane of an item none of whose configurations has frames known: folded to
/// why, and how to add them, in place of a timeline of empty rows.
fn draw_folded(f: &mut Frame, info: &FrameInfo, area: Rect) {
    // The highest budget's reason: the lowest may be the text-only configuration's.
    let why = info
        .configs
        .last()
        .map_or("no configuration", |c| c.note.as_str());
    let lines = vec![
        Line::from(vec![
            Span::styled("no frames known for this item: ", WARN),
            Span::raw(s(why)),
        ]),
        Line::styled(
            "to add them: frameaudit import per-item-csv FILE -o DATASET --docs ANNOTATIONS --videos DIR",
            DIM,
        ),
        Line::styled(
            "  (question, options and video of each item; a harness import takes --videos too, and a cell's frame_idx records its frames)",
            DIM,
        ),
    ];
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(" frames ", ACCENT))
        .border_style(DIM);
    f.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: true }).block(block),
        area,
    );
}

/// The word a timeline row ends with: how sure its frames are. Never a colour alone: an
/// assumed set says so in capitals.
fn provenance_tag(p: Option<Provenance>) -> (&'static str, Style) {
    match p {
        Some(Provenance::Recorded) => ("recorded", RIGHT),
        Some(Provenance::Reproduced) => ("reproduced", DIM),
        Some(Provenance::Assumed) => ("ASSUMED", WARN.add_modifier(Modifier::BOLD)),
        None => ("", DIM),
    }
}

/// A timeline row's dots, then its frame count and how its frames are known.
fn dots(
    cells: Vec<(char, Style)>,
    n: usize,
    provenance: Option<Provenance>,
) -> impl Iterator<Item = Span<'static>> {
    let (word, style) = provenance_tag(provenance);
    cells
        .into_iter()
        .map(|(ch, st)| Span::styled(ch.to_string(), st))
        .chain([
            Span::styled(format!(" {n:>3} "), DIM),
            Span::styled(word, style),
        ])
}

/// One row per configuration (`only_pair`: the audited pair's two), the axis, the rule of
/// the panel's configuration and the pair's counts; `keys` adds the frame keys (compact).
fn draw_timeline(
    f: &mut Frame,
    app: &App,
    info: &FrameInfo,
    area: Rect,
    only_pair: bool,
    keys: bool,
) {
    let scale = Scale::new(info, area, !only_pair);
    let mut lines = config_rows(app, info, &scale, only_pair);
    if !only_pair {
        lines.extend(planned_rows(info, &info.interventions, &scale, ACCENT));
        lines.extend(planned_rows(info, &info.replicates, &scale, DIM));
    }
    lines.push(axis_line(info, &scale));
    if !only_pair && let Some(rule) = rule_line(info) {
        lines.push(rule);
    }
    if let Some(counts) = pair_counts(app, info) {
        lines.push(counts);
    }
    if !only_pair && let Some(counts) = intervention_counts(info) {
        lines.push(counts);
    }
    let w = area.width as usize;
    let mut lines: Vec<Line> = lines.into_iter().map(|l| fit_line(l, w)).collect();
    if keys {
        lines.push(fit_whole(compact_keys(app), w));
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// Where a frame index falls on a timeline row: the names' column, then `width` cells for
/// the video's `total` frames.
struct Scale {
    name_w: usize,
    width: usize,
    total: u64,
}

impl Scale {
    fn new(info: &FrameInfo, area: Rect, replicate_rows: bool) -> Scale {
        // Room for a replicate's longer label (`16f ~phase-1/2`), up to a third of the
        // width; without replicate rows, the 10 columns it always had.
        let longest = info
            .replicates
            .iter()
            .filter(|_| replicate_rows)
            .map(|r| r.label.chars().count() + 1)
            .max()
            .unwrap_or(0);
        let name_w = longest.clamp(10, (area.width as usize / 3).max(10));
        // Room for the count and the provenance word after the dots.
        let width = (area.width as usize).saturating_sub(name_w + 16).max(10);
        let total = info
            .num_frames
            .unwrap_or_else(|| {
                info.configs
                    .iter()
                    .flat_map(|c| c.frames.iter().copied())
                    .max()
                    .map_or(1, |m| m + 1)
            })
            .max(1);
        Scale {
            name_w,
            width,
            total,
        }
    }

    /// The cell of frame `idx`.
    fn col(&self, idx: u64) -> usize {
        ((idx as f64 / self.total as f64) * self.width as f64)
            .floor()
            .min(self.width as f64 - 1.0) as usize
    }

    /// A row's name, cut to the names' column.
    fn name(&self, name: &str, style: Style) -> Span<'static> {
        Span::styled(pad(&fit(&s(name), self.name_w - 1), self.name_w), style)
    }
}

/// A row per configuration: its frames as dots on the timeline, the pair's dropped and
/// added ones marked by glyph and colour, the cursor's frame reversed.
fn config_rows(app: &App, info: &FrameInfo, scale: &Scale, only_pair: bool) -> Vec<Line<'static>> {
    let cursor = app.current_frame(info);
    let mut lines = Vec::new();
    for (c, cf) in info.configs.iter().enumerate() {
        if only_pair && info.pair.is_some_and(|t| c != t.lower && c != t.higher) {
            continue;
        }
        let mut cells: Vec<(char, Style)> = vec![('·', DIM); scale.width];
        // The lower budget of the pair (true), the higher (false), or neither.
        let role = info.pair.and_then(|t| {
            if c == t.lower {
                Some(true)
            } else if c == t.higher {
                Some(false)
            } else {
                None
            }
        });
        // Glyphs as well as colours, so the sets read without colour (NO_COLOR).
        for &idx in &cf.frames {
            let cell = match role {
                Some(true) if info.transition.dropped.binary_search(&idx).is_ok() => {
                    (DROPPED_GLYPH, DROPPED)
                }
                Some(false) if info.transition.added.binary_search(&idx).is_ok() => {
                    (ADDED_GLYPH, ADDED)
                }
                Some(_) => (KEPT_GLYPH, KEPT),
                None => (KEPT_GLYPH, DIM),
            };
            cells[scale.col(idx)] = cell;
        }
        if Some(c) == info.panel_config
            && let Some((idx, _)) = cursor
        {
            let x = scale.col(idx);
            cells[x].1 = cells[x].1.add_modifier(Modifier::REVERSED);
        }
        let style = match role {
            Some(true) => RIGHT,
            Some(false) => WRONG,
            None => Style::new(),
        };
        let mut spans = vec![scale.name(&cf.name, style)];
        if cf.frames.is_empty() {
            spans.push(Span::styled(cf.note.clone(), DIM));
        } else {
            spans.extend(dots(cells, cf.frames.len(), cf.provenance));
        }
        lines.push(Line::from(spans));
    }
    lines
}

/// Frames given in a re-run against those of the configuration it re-ran: the intervention
/// runs (a frame that configuration did not sample is marked restored), and the replicates
/// of a noise floor (a frame the shift moved in is marked so, the label in `label_style`).
fn planned_rows(
    info: &FrameInfo,
    rows: &[PlannedFrames],
    scale: &Scale,
    label_style: Style,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for p in rows {
        let original = &info.configs[p.against].frames;
        let mut cells: Vec<(char, Style)> = vec![('·', DIM); scale.width];
        for &idx in &p.frames {
            cells[scale.col(idx)] = if original.binary_search(&idx).is_ok() {
                (KEPT_GLYPH, KEPT)
            } else {
                (RESTORED_GLYPH, RESTORED)
            };
        }
        let mut spans = vec![scale.name(&p.label, label_style)];
        spans.extend(dots(cells, p.frames.len(), p.provenance));
        lines.push(Line::from(spans));
    }
    lines
}

/// The time axis under the rows: the start, the middle and the end of the video.
fn axis_line(info: &FrameInfo, scale: &Scale) -> Line<'static> {
    let axis_mid = timestamp(scale.total / 2, info.fps);
    let axis_end = timestamp(scale.total.saturating_sub(1), info.fps);
    let pad = scale
        .width
        .saturating_sub(axis_mid.len() + axis_end.len() + 5)
        / 2;
    Line::from(Span::styled(
        format!(
            "{:<w$}00:00{}{axis_mid}{}{axis_end}",
            "",
            " ".repeat(pad),
            " ".repeat(pad),
            w = scale.name_w
        ),
        DIM,
    ))
}

/// The rule of the configuration the panel shows, in words: where its frames come from.
fn rule_line(info: &FrameInfo) -> Option<Line<'static>> {
    let cf = info.panel_config.and_then(|c| info.configs.get(c))?;
    let (word, style) = provenance_tag(cf.provenance);
    let text = if cf.frames.is_empty() {
        cf.note.clone()
    } else {
        cf.rule.clone()
    };
    Some(Line::from(vec![
        Span::styled(format!("{}: ", s(&cf.name)), DIM),
        Span::styled(word, style),
        Span::styled(format!(" {}", s(&text)), DIM),
    ]))
}

/// The transition's counts: frames of the lower budget not kept, added, kept, with the
/// keys that jump to them.
fn pair_counts(app: &App, info: &FrameInfo) -> Option<Line<'static>> {
    let pair = info.pair?;
    let (lo, hi) = (&info.configs[pair.lower], &info.configs[pair.higher]);
    let t = &info.transition;
    Some(Line::from(vec![
        Span::raw(format!("{} → {}: ", s(&lo.name), s(&hi.name))),
        Span::styled(
            format!(
                "{DROPPED_GLYPH} {} of {} frames not kept{}",
                t.dropped.len(),
                t.kept.len() + t.dropped.len(),
                jump_key(app, Action::NextDropped)
            ),
            DROPPED,
        ),
        Span::raw(", "),
        Span::styled(
            format!(
                "{ADDED_GLYPH} {} added{}",
                t.added.len(),
                jump_key(app, Action::NextAdded)
            ),
            ADDED,
        ),
        Span::styled(format!(", {KEPT_GLYPH} {} kept", t.kept.len()), KEPT),
    ]))
}

/// What each intervention run restored and left out against the configuration it re-ran:
/// counts first, the legend last (a narrow pane cuts the legend).
fn intervention_counts(info: &FrameInfo) -> Option<Line<'static>> {
    let first = info.interventions.first()?;
    let against = s(&info.configs[first.against].name);
    let mut spans = vec![Span::styled(format!("↻ vs {against}: "), ACCENT)];
    for (n, p) in info.interventions.iter().enumerate() {
        if n > 0 {
            spans.push(Span::raw(", "));
        }
        spans.push(Span::raw(format!(
            "{} ",
            s(p.label.trim_start_matches('↻'))
        )));
        spans.push(Span::styled(
            format!("{RESTORED_GLYPH}{}", p.restored.len()),
            RESTORED,
        ));
        spans.push(Span::styled(
            format!(" {DROPPED_GLYPH}{}", p.left_out.len()),
            DROPPED,
        ));
    }
    spans.push(Span::styled(
        format!(" ({RESTORED_GLYPH} restored, {DROPPED_GLYPH} left out)"),
        DIM,
    ));
    Some(Line::from(spans))
}

/// The key bound to an action on the item screen, as the footer writes it.
fn key_of(app: &App, action: Action) -> Option<String> {
    app.keymap.hint(Context::Item, action)
}

/// " (d)": the key that jumps to the frames of a set, for the counts line.
fn jump_key(app: &App, action: Action) -> String {
    key_of(app, action).map_or_else(String::new, |k| format!(" ({})", s(&k)))
}

/// The frame keys of the compact frames, most used first, one segment each, so that a
/// narrow pane leaves out whole ones.
fn compact_keys(app: &App) -> Line<'static> {
    let jumps = format!(" {DROPPED_GLYPH}/{ADDED_GLYPH}");
    let hints = app.keymap.hint_list(
        Context::Item,
        &[
            (&[Action::FramePrev, Action::FrameNext], "/", " frame"),
            (&[Action::NextDropped, Action::NextAdded], "/", &jumps),
            (&[Action::MarkEvidence], "", " evidence"),
            (&[Action::FrameConfig], "", " config"),
            (&[Action::FrameSubset], "", " subset"),
        ],
    );
    // One span a hint, so a narrow panel drops whole hints rather than cutting one.
    let spans: Vec<Span> = hints
        .iter()
        .enumerate()
        .map(|(i, h)| Span::styled(format!("{}{h}", if i == 0 { "" } else { " · " }), DIM))
        .collect();
    Line::from(spans)
}

fn draw_thumbnails(f: &mut Frame, app: &App, info: &FrameInfo, area: Rect, out: &mut Drawn) {
    if area.height < 3 {
        return;
    }
    let list = app.panel_list(info);
    let subset = match app.item.frame_panel.subset {
        Subset::All => format!(
            "all {} frames of {}",
            list.len(),
            info.panel_config
                .map_or("?".into(), |c| s(&info.configs[c].name))
        ),
        Subset::Dropped => format!("{} frames the higher budget dropped", list.len()),
        Subset::Added => format!("{} frames the higher budget added", list.len()),
    };
    let [head, strip] = Layout::vertical([Constraint::Length(1), Constraint::Min(2)]).areas(area);
    f.render_widget(
        Paragraph::new(fit_line(
            Line::from(vec![
                Span::styled(subset, ACCENT),
                Span::styled(
                    format!(
                        "   {}",
                        app.keymap.hints(
                            Context::Item,
                            &[
                                (&[Action::FramePrev, Action::FrameNext], "/", " move"),
                                (&[Action::FrameConfig], "", " config"),
                                (&[Action::FrameSubset], "", " subset"),
                                (&[Action::MarkEvidence], "", " evidence"),
                            ],
                        )
                    ),
                    DIM,
                ),
            ]),
            head.width as usize,
        )),
        head,
    );
    if list.is_empty() {
        f.render_widget(Paragraph::new(Span::styled("no frame to show", DIM)), strip);
        return;
    }
    let thumb_w: u16 = 12;
    let n_fit = ((strip.width + 1) / (thumb_w + 1)).max(1) as usize;
    let cur = app.item.frame_panel.cursor.min(list.len() - 1);
    let start = cur
        .saturating_sub(n_fit / 2)
        .min(list.len().saturating_sub(n_fit));
    for (slot, (pos, entry)) in list.iter().enumerate().skip(start).take(n_fit).enumerate() {
        let x = strip.x + slot as u16 * (thumb_w + 1);
        let cell = Rect {
            x,
            y: strip.y,
            width: thumb_w,
            height: strip.height,
        };
        let [img_area, label] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(cell);
        let key = app.frame_key(
            info,
            entry,
            THUMB_SIDE,
            Some((img_area.width, img_area.height)),
        );
        draw_image(app, f, key, img_area, info, out);
        let evidence = app.is_evidence(entry.index);
        let style = if pos == cur {
            ACCENT.add_modifier(Modifier::REVERSED)
        } else {
            DIM
        };
        let set = if info.transition.dropped.binary_search(&entry.index).is_ok() {
            DROPPED_GLYPH.to_string()
        } else if info.transition.added.binary_search(&entry.index).is_ok() {
            ADDED_GLYPH.to_string()
        } else {
            String::new()
        };
        f.render_widget(
            Paragraph::new(Span::styled(
                fit(
                    &format!(
                        "{}{set}{}",
                        if evidence { "★" } else { "" },
                        timestamp(entry.index, info.fps)
                    ),
                    label.width as usize,
                ),
                style,
            ))
            .alignment(Alignment::Center),
            label,
        );
    }
}

fn draw_large(f: &mut Frame, app: &App, info: &FrameInfo, area: Rect, out: &mut Drawn) {
    let list = app.panel_list(info);
    let Some(entry) = list
        .get(
            app.item
                .frame_panel
                .cursor
                .min(list.len().saturating_sub(1)),
        )
        .cloned()
    else {
        f.render_widget(
            Paragraph::new(Span::styled("no frame under the cursor", DIM))
                .block(Block::default().borders(Borders::TOP).border_style(DIM)),
            area,
        );
        return;
    };
    // The marks in words, or (when the caption would be cut, at 80 columns) as the glyphs
    // the timeline and its legend use, so the subset is never what is cut.
    let caption = |words: bool, evidence_word: bool| {
        let mut caption = vec![Span::styled(
            format!(
                " frame {} · {} ",
                entry.index,
                timestamp(entry.index, info.fps)
            ),
            ACCENT.add_modifier(Modifier::BOLD),
        )];
        if app.is_evidence(entry.index) {
            let star = if evidence_word {
                "★ evidence "
            } else {
                "★ "
            };
            caption.push(Span::styled(star, WARN));
        }
        caption.push(Span::styled(
            format!(
                "· {} {}/{} ",
                s(&info.configs[entry.config].name),
                entry.position + 1,
                entry.of
            ),
            DIM,
        ));
        let word = |w: &'static str| if words { w } else { "" };
        if info.transition.dropped.binary_search(&entry.index).is_ok() {
            caption.push(Span::styled(
                format!("· {DROPPED_GLYPH}{} ", word(" dropped")),
                DROPPED,
            ));
        } else if info.transition.added.binary_search(&entry.index).is_ok() {
            caption.push(Span::styled(
                format!("· {ADDED_GLYPH}{} ", word(" added")),
                ADDED,
            ));
        }
        Line::from(caption)
    };
    let caption = [(true, true), (false, true)]
        .into_iter()
        .map(|(words, evidence)| caption(words, evidence))
        .find(|c| c.width() <= area.width as usize)
        .unwrap_or_else(|| caption(false, false));
    let block = Block::default()
        .borders(Borders::TOP)
        .title(fit_line(caption, area.width as usize))
        .border_style(DIM);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let side = (inner.width as u32 * 10).max(64);
    let key = app.frame_key(info, &entry, side, Some((inner.width, inner.height)));
    draw_image(app, f, key, inner, info, out);
}

/// Draws a frame, or what stands in for it (text mode, loading, or why it is missing).
pub fn draw_image(
    app: &App,
    f: &mut ratatui::Frame,
    key: Option<crate::core::frames::FrameKey>,
    area: ratatui::layout::Rect,
    info: &FrameInfo,
    out: &mut Drawn,
) {
    if area.width < 2 || area.height < 1 {
        return;
    }
    let Some(key) = key else {
        placeholder(
            f,
            area,
            "no video for this item (items.jsonl has no `video`)",
            DIM,
        );
        return;
    };
    // Thumbnails are small: the time is printed under them, the index is enough here.
    let label = if area.width < 16 {
        format!("#{}", key.index)
    } else {
        format!("frame {} · {}", key.index, timestamp(key.index, info.fps))
    };
    if app.frames.images == ImageMode::None {
        // Under NO_COLOR say why there are no pictures where there is room: NO_COLOR when it
        // turned half blocks off (and how to get pictures), else `--images none`, asked for.
        let why = if app.frames.no_color_off {
            NO_COLOR_PICTURES
        } else {
            IMAGES_NONE_PICTURES
        };
        let text = if app.no_color && area.height >= 4 && area.width >= 24 {
            format!("{label}\n{why}")
        } else {
            label
        };
        placeholder(f, area, &text, DIM);
        return;
    }
    let Some(loader) = &app.frames.loader else {
        placeholder(f, area, &label, DIM);
        return;
    };
    match loader.get(&key) {
        None => {
            out.wanted.push(key);
            placeholder(f, area, &format!("{label}\nloading…"), DIM);
        }
        Some(res) => match res.as_ref() {
            Err(why) => placeholder(f, area, &format!("{label}\n{}", sanitize(why)), WRONG),
            Ok(_) => {
                let slot = (key, area.width, area.height);
                match app.frames.protocols.peek(&slot) {
                    Some(Ok(p)) => p.render(area, f.buffer_mut()),
                    Some(Err(e)) => {
                        placeholder(f, area, &format!("{label}\ncannot draw: {e}"), WRONG)
                    }
                    None => {
                        out.unfitted.push(slot);
                        placeholder(f, area, &format!("{label}\nloading…"), DIM);
                    }
                }
            }
        },
    }
}

/// A text stand-in for an image: what it would show, or why it cannot; each line of
/// `text` starts a line (the label, then the reason).
pub fn placeholder(f: &mut Frame, area: Rect, text: &str, style: Style) {
    f.render_widget(
        Paragraph::new(Text::styled(text.to_string(), style))
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true })
            .block(Block::default().borders(Borders::ALL).border_style(DIM)),
        area,
    );
}
