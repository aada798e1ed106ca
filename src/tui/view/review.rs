//! The annotators panel of a review (`frameaudit review AUDIT...`): beside the item and its
//! frames, each annotator's pathways, primary and note; the reviewer takes one annotator's
//! record (`A` cycles through them) or writes their own with the usual tagging keys.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::core::audit::UnitKey;
use crate::core::taxonomy::Taxonomy;
use crate::core::text::sanitize;
use crate::core::workspace::review::Review;

/// The lines of the annotators panel of a unit: one block per annotator.
pub fn panel(
    review: &Review,
    key: &UnitKey,
    taxonomy: &Taxonomy,
    width: u16,
) -> Vec<Line<'static>> {
    let Some(records) = review.records(key) else {
        return vec![Line::from("not a disagreement of the audits under review")];
    };
    let dim = Style::default().fg(Color::DarkGray);
    let label = |id: &str| {
        taxonomy.get(id).map_or_else(
            || sanitize(id).into_owned(),
            |p| sanitize(&p.label).into_owned(),
        )
    };
    let mut lines = Vec::new();
    for (i, (who, r)) in records.iter().enumerate() {
        lines.push(Line::from(vec![
            Span::styled(
                format!("{} ", i + 1),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                sanitize(who).into_owned(),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!(
                    "  {} · {} → {}",
                    r.status.as_str(),
                    sanitize(&r.from),
                    sanitize(&r.to)
                ),
                dim,
            ),
        ]));
        let primary = r.primary.as_deref();
        let mut tags: Vec<Span> = vec![Span::raw("  ")];
        if r.pathways.is_empty() && primary.is_none() {
            tags.push(Span::styled("no pathway", dim));
        }
        for id in r
            .pathways
            .iter()
            .map(String::as_str)
            .chain(primary.filter(|p| !r.pathways.iter().any(|t| t == p)))
        {
            let style = if Some(id) == primary {
                Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
            } else {
                Style::default()
            };
            tags.push(Span::styled(label(id), style));
            tags.push(Span::raw("  "));
        }
        lines.push(Line::from(tags));
        if !r.note.is_empty() {
            let note: String = sanitize(&r.note)
                .chars()
                .take(usize::from(width.saturating_sub(4)) * 2)
                .collect();
            lines.push(Line::from(Span::styled(format!("  “{note}”"), dim)));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panel_shows_each_annotator() {
        let r = crate::core::workspace::review::tests::two_annotators();
        let tax = Taxonomy::load(None).expect("taxonomy");
        let text: Vec<String> = panel(&r, &UnitKey::new("m", "b", "q1"), &tax, 60)
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(text[0].starts_with("1 alice  done · 8f → 16f"), "{text:?}");
        assert!(text[1].contains("Evidence dropped"), "{text:?}");
        assert!(text[2].contains("gone at 0:12"), "{text:?}");
        assert!(text[3].starts_with("2 bob"), "{text:?}");
        assert!(text[4].contains("Language prior"), "{text:?}");
    }
}
