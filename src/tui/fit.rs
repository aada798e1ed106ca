//! Fitting text into a pane by display cells (a CJK character or an emoji takes two): cut
//! text ends with an ellipsis, so nothing is clipped silently at a pane's edge.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::core::text::pieces;

/// Display width of `text` in terminal cells.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` in at most `w` cells: whole when it fits, else cut with "…" as its last cell.
pub fn fit(text: &str, w: usize) -> String {
    if width(text) <= w {
        return text.to_string();
    }
    cut(text, w)
}

/// The start of `text` and "…", in at most `w` cells, whether or not `text` would fit.
fn cut(text: &str, w: usize) -> String {
    if w == 0 {
        return String::new();
    }
    crate::core::text::cut_with_ellipsis(text, w)
}

/// The start of `text` in at most `w` cells, without an ellipsis (where one would leave no
/// room), cut between pieces: never inside an escape or between a letter and its mark.
pub use crate::core::text::head;

/// `text` without its first `drop` cells, cut between [`pieces`] (a piece that crosses the
/// cut goes too): the end of a text that keeps the cursor in sight.
pub fn skip_cells(text: &str, drop: usize) -> (String, usize) {
    let mut dropped = 0;
    let mut out = String::new();
    for p in pieces(text) {
        if dropped < drop {
            dropped += width(p);
        } else {
            out.push_str(p);
        }
    }
    (out, dropped)
}

/// The first of `choices` (longest first) that fits in `w` cells, else the last cut with
/// "…": a pane's title in words where there is room, shorter where there is not.
pub fn fit_first(choices: &[&str], w: usize) -> String {
    match choices.iter().find(|c| width(c) <= w) {
        Some(c) => (*c).to_string(),
        None => fit(choices.last().copied().unwrap_or_default(), w),
    }
}

/// `text` in at most `w` cells, cut in the middle where it does not fit: its start and its
/// end stay (`OpenGV…VL3_5-8B`), as model names differ in their ends (versions, sizes)
/// more often than in their starts.
pub fn fit_middle(text: &str, w: usize) -> String {
    if width(text) <= w {
        return text.to_string();
    }
    if w < 6 {
        return cut(text, w);
    }
    let tail_w = (w - 1) / 2;
    let head = cut(text, w - tail_w);
    let all: Vec<&str> = pieces(text).collect();
    let mut used = 0;
    let mut from = all.len();
    for piece in all.iter().rev() {
        let pw = width(piece);
        if used + pw > tail_w {
            break;
        }
        used += pw;
        from -= 1;
    }
    format!("{head}{}", all[from..].concat())
}

/// Model names as the screens show them: a leading organisation (`OpenGVLab__`,
/// `Qwen/`) left out where the names stay apart without it. The full name is in the
/// legend, the pickers and every file.
pub fn short_names(names: &[&str]) -> Vec<String> {
    let strip = |n: &str| -> String {
        let after = |sep: &str| n.split_once(sep).map(|(_, rest)| rest);
        match after("__").or_else(|| after("/")) {
            Some(rest) if !rest.is_empty() => rest.to_string(),
            _ => n.to_string(),
        }
    };
    let short: Vec<String> = names.iter().map(|n| strip(n)).collect();
    let distinct: std::collections::BTreeSet<&String> = short.iter().collect();
    if distinct.len() == names.len() {
        short
    } else {
        names.iter().map(|n| n.to_string()).collect()
    }
}

/// `text` fitted into `w` cells and padded with spaces to exactly `w`.
pub fn pad(text: &str, w: usize) -> String {
    let t = fit(text, w);
    let n = w.saturating_sub(width(&t));
    format!("{t}{}", " ".repeat(n))
}

/// A line cut to `w` cells: the spans that fit, the one that crosses the edge cut with "…".
pub fn fit_line<'a>(line: Line<'a>, w: usize) -> Line<'a> {
    let total: usize = line.spans.iter().map(|s| width(&s.content)).sum();
    if total <= w {
        return line;
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for sp in line.spans {
        let sw = width(&sp.content);
        // Room is kept for the ellipsis: the line is cut somewhere, so it ends with one.
        if used + sw < w {
            used += sw;
            spans.push(sp);
        } else {
            spans.push(Span::styled(cut(&sp.content, w - used), sp.style));
            break;
        }
    }
    Line {
        spans,
        style: line.style,
        alignment: line.alignment,
    }
}

/// A line of segments cut to `w` cells by leaving out whole segments from the end (and
/// saying so with "…"), so no number is cut in the middle.
pub fn fit_whole<'a>(line: Line<'a>, w: usize) -> Line<'a> {
    let total: usize = line.spans.iter().map(|s| width(&s.content)).sum();
    if total <= w {
        return line;
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for sp in line.spans {
        let sw = width(&sp.content);
        if used + sw + 1 > w {
            break;
        }
        used += sw;
        spans.push(sp);
    }
    if spans.is_empty() {
        return Line::from(fit("…", w));
    }
    spans.push(Span::raw("…"));
    Line {
        spans,
        style: line.style,
        alignment: line.alignment,
    }
}

/// `line` wrapped at spaces to rows of at most `w` cells, each row after the first starting
/// `indent` cells in (a hanging indent: a help entry's text stays right of its keys). A word
/// longer than a row is broken where the row ends. Styles are kept, and the spaces a break
/// falls on are dropped. An indent of half the width or more is none.
pub fn wrap_hanging(line: &Line<'_>, w: usize, indent: usize) -> Vec<Line<'static>> {
    use unicode_segmentation::UnicodeSegmentation;
    let w = w.max(1);
    let indent = if indent * 2 >= w { 0 } else { indent };
    let glyphs: Vec<(&str, ratatui::style::Style, usize)> = line
        .spans
        .iter()
        .flat_map(|sp| {
            sp.content
                .graphemes(true)
                .map(move |g| (g, sp.style, width(g)))
        })
        .collect();
    // Each row as a range of `glyphs`.
    let mut rows: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    while start < glyphs.len() {
        let room = if rows.is_empty() { w } else { w - indent };
        let mut used = 0;
        let mut end = start;
        // The glyph after the last space that a break may follow (not inside the indent).
        let mut after_space = None;
        while end < glyphs.len() && used + glyphs[end].2 <= room {
            used += glyphs[end].2;
            if glyphs[end].0 == " " && (!rows.is_empty() || used > indent) {
                after_space = Some(end + 1);
            }
            end += 1;
        }
        if end < glyphs.len() {
            match after_space {
                // Nothing fits (a glyph wider than the row): it takes a row of its own.
                _ if end == start => end = start + 1,
                Some(a) if glyphs[end].0 != " " => end = a,
                _ => {}
            }
        }
        let mut last = end;
        while last > start && glyphs[last - 1].0 == " " && end < glyphs.len() {
            last -= 1;
        }
        rows.push((start, last));
        start = end;
        while start < glyphs.len() && glyphs[start].0 == " " {
            start += 1;
        }
    }
    if rows.is_empty() {
        rows.push((0, 0));
    }
    rows.iter()
        .enumerate()
        .map(|(n, &(a, b))| {
            let mut spans: Vec<Span<'static>> = Vec::new();
            if n > 0 && indent > 0 {
                spans.push(Span::raw(" ".repeat(indent)));
            }
            for &(g, style, _) in &glyphs[a..b] {
                match spans.last_mut() {
                    Some(last) if last.style == style => last.content.to_mut().push_str(g),
                    _ => spans.push(Span::styled(g.to_string(), style)),
                }
            }
            Line {
                spans,
                style: line.style,
                alignment: line.alignment,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(line: &Line<'_>, w: usize, indent: usize) -> Vec<String> {
        wrap_hanging(line, w, indent)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wrapped_rows_hang_after_the_key_column() {
        let line = Line::from(vec![
            Span::raw(format!("{:>12}  ", "j ↓")),
            Span::raw("move the cursor down one row of the queue"),
        ]);
        assert_eq!(
            rows(&line, 30, 14),
            [
                "         j ↓  move the cursor",
                "              down one row of",
                "              the queue",
            ]
        );
        for row in wrap_hanging(&line, 30, 14) {
            assert!(width(&row.to_string()) <= 30, "{row}");
        }
        // Too narrow to hang: the rows start at the edge; a word longer than a row is cut.
        assert_eq!(
            rows(&Line::from("abcdefgh ij"), 4, 3),
            ["abcd", "efgh", "ij"]
        );
        // A short line stays one row, an empty one too.
        assert_eq!(rows(&Line::from("short"), 30, 14), ["short"]);
        assert_eq!(rows(&Line::from(""), 30, 14), [""]);
    }

    #[test]
    fn wrapping_keeps_styles_and_wide_characters_whole() {
        let bold = ratatui::style::Style::new().bold();
        let line = Line::from(vec![Span::styled("ab ", bold), Span::raw("寿司寿司 x")]);
        let out = wrap_hanging(&line, 5, 0);
        let text: Vec<String> = out.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, ["ab", "寿司", "寿司", "x"]);
        assert_eq!(out[0].spans[0].style, bold);
        assert_eq!(out[1].spans[0].style, ratatui::style::Style::new());
    }

    #[test]
    fn fits_by_display_cells() {
        assert_eq!(fit("abc", 3), "abc");
        assert_eq!(fit("abcd", 3), "ab…");
        // Two cells a character: three fit in seven cells with the ellipsis.
        assert_eq!(fit("映像映像映像", 7), "映像映…");
        assert_eq!(width(&fit("🎬🎬🎬🎬", 4)), 3);
        assert_eq!(fit("x", 0), "");
        assert_eq!(pad("映像", 5), "映像 ");
    }

    #[test]
    fn an_escape_or_a_letter_with_its_accent_is_never_cut_in_two() {
        // The escape a bidi override is shown as goes whole or not at all.
        assert_eq!(fit(r"ab\u{202e}cd", 6), "ab…");
        assert_eq!(fit(r"ab\u{202e}cd", 11), r"ab\u{202e}…");
        assert_eq!(
            fit_middle(r"modelname\x1b-long-tail-7B", 12),
            "modeln…il-7B"
        );
        assert_eq!(
            fit_middle(r"modelname-long-tail\x1b7B", 14),
            r"modelna…\x1b7B"
        );
        assert_eq!(fit_middle(r"modelname-long-tail\x1b-7B", 12), "modeln…-7B");
        assert_eq!(fit("e\u{301}e\u{301}e\u{301}", 2), "e\u{301}…");
        // A mark never starts the kept end without its letter.
        assert_eq!(fit_middle("abcdefghe\u{301}yz", 6), "abc…yz");
        // A header's abbreviation and a note's kept end cut between pieces too.
        assert_eq!(head(r"ab\x1bc", 5), "ab");
        assert_eq!(head(r"ab\x1bc", 6), r"ab\x1b");
        assert_eq!(head("映像x", 3), "映");
        assert_eq!(skip_cells(r"a\x1bcd", 2), ("cd".to_string(), 5));
        assert_eq!(skip_cells("e\u{301}fg", 1), ("fg".to_string(), 1));
    }

    #[test]
    fn a_line_is_cut_inside_the_span_that_crosses() {
        let l = Line::from(vec![Span::raw("ab"), Span::raw("cdef"), Span::raw("gh")]);
        let cut = fit_line(l, 5);
        let text: String = cut.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "abcd…");
        // Cut right after a whole span, one character a span (search highlights).
        let l = Line::from(
            "abcdef"
                .chars()
                .map(|c| Span::raw(c.to_string()))
                .collect::<Vec<_>>(),
        );
        let text: String = fit_line(l, 4)
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(text, "abc…");
    }

    #[test]
    fn whole_segments_or_none() {
        let l = Line::from(vec![Span::raw("done 1"), Span::raw(" · harmful 15.2%")]);
        let cut = fit_whole(l, 12);
        let text: String = cut.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "done 1…");
    }

    /// A name too wide keeps its start and its end, so `InternVL3-8B` and
    /// `InternVL3_5-8B` stay apart in 10 cells where a cut at the end gave one prefix.
    #[test]
    fn names_cut_in_the_middle_and_lose_their_organisation() {
        let a = fit_middle("OpenGVLab__InternVL3-8B", 14);
        let b = fit_middle("OpenGVLab__InternVL3_5-8B", 14);
        assert_ne!(a, b);
        assert_eq!(width(&a), 14);
        assert!(a.ends_with("VL3-8B") && b.ends_with("3_5-8B"), "{a} {b}");
        assert_eq!(fit_middle("short", 14), "short");
        assert_eq!(
            short_names(&["OpenGVLab__InternVL3-8B", "Qwen/Qwen2.5-VL-7B", "plain"]),
            ["InternVL3-8B", "Qwen2.5-VL-7B", "plain"]
        );
        // Left whole where leaving the organisation out would make two models one.
        assert_eq!(short_names(&["a__m", "b__m"]), ["a__m", "b__m"]);
    }
}
