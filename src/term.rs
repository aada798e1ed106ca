//! What the command line and the audit screens share about the user's terminal: which image
//! protocol it speaks, whether colour is wanted, the bars both draw, and how the audit
//! screens are asked to start (the CLI builds the options, the binary hands them to the TUI).

use std::path::PathBuf;

pub mod detect;
pub mod query;

use crate::core::analysis::params::Params;
use crate::core::shard::Shard;
use crate::core::workspace::review::Review;

/// How frames are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageMode {
    /// Text stand-ins only (`--images none`, tests).
    None,
    /// Pictures of coloured half-block characters, which every terminal shows.
    Halfblocks,
    /// The kitty graphics protocol.
    Kitty,
    /// Sixel graphics.
    Sixel,
    /// iTerm2's inline images (also WezTerm's).
    Iterm,
    /// Asked of the terminal when the screens start (`term::detect`): no `--images` given.
    /// Half blocks until it answers.
    Auto,
}

/// The image protocol `frameaudit frames` prints with when none is asked for: from the
/// environment only (it prints through viuer, whose kitty images are placed directly, which
/// kitty before 0.28 draws too). The audit screens ask the terminal instead (`detect`).
pub fn images_from_env() -> ImageMode {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if std::env::var_os("TMUX").is_some() {
        ImageMode::Halfblocks
    } else if std::env::var_os("KITTY_WINDOW_ID").is_some() || var("TERM").contains("kitty") {
        ImageMode::Kitty
    } else if matches!(var("TERM_PROGRAM").as_str(), "iTerm.app" | "WezTerm") {
        ImageMode::Iterm
    } else {
        ImageMode::Halfblocks
    }
}

/// Whether the environment forbids colour (<https://no-color.org>: any non-empty value).
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// A horizontal bar of `value` in [0, max] over `cols` columns, with eighth-block precision:
/// the text report's curves and the item screen's rows draw the same bars.
pub fn bar(value: f64, max: f64, cols: usize) -> String {
    const EIGHTHS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    if max <= 0.0 || !value.is_finite() {
        return String::new();
    }
    let eighths = ((value / max).clamp(0.0, 1.0) * cols as f64 * 8.0).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    s.push_str(EIGHTHS[eighths % 8]);
    s
}

/// How the audit screens were asked to start.
pub struct TuiOptions {
    /// The analysis parameters of the command line.
    pub params: Params,
    /// How frames are drawn, as asked (`NO_COLOR` may still turn half blocks into text).
    pub images: ImageMode,
    /// `--annotator`, if given.
    pub annotator: Option<String>,
    /// `--audit`: the audit file, if not the annotator's default one.
    pub audit: Option<PathBuf>,
    /// `--taxonomy`: the evidence-pathway taxonomy, if not the bundled one.
    pub taxonomy: Option<PathBuf>,
    /// `--keymap`: key binding overrides.
    pub keymap: Option<PathBuf>,
    /// Only this annotator's share of the queue.
    pub shard: Option<Shard>,
    /// A review: the disagreements to settle (the audit written is the adjudicated one).
    pub review: Option<Review>,
    /// Clicks and the wheel act (`--no-mouse` leaves the mouse to the terminal, for
    /// selecting text).
    pub mouse: bool,
    /// `--plan`: the intervention plan the item screen adds to (default: beside the audit
    /// file, `NAME.plan.json`).
    pub plan: Option<PathBuf>,
}

impl TuiOptions {
    /// The options of `frameaudit DATASET --annotator NAME --audit FILE` with nothing else
    /// given, except that frames are text and the mouse is left alone (tests, benchmarks).
    pub fn plain(annotator: &str, audit: PathBuf) -> TuiOptions {
        TuiOptions {
            params: Params::default(),
            images: ImageMode::None,
            annotator: Some(annotator.into()),
            audit: Some(audit),
            taxonomy: None,
            keymap: None,
            shard: None,
            review: None,
            mouse: false,
            plan: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale() {
        assert_eq!(bar(50.0, 100.0, 4), "██");
        assert_eq!(bar(100.0, 100.0, 4), "████");
        assert_eq!(bar(1.0 / 16.0 * 100.0, 100.0, 2), "▏");
        assert_eq!(bar(0.0, 100.0, 4), "");
    }
}
