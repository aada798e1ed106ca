//! The small types the rooms of the audit screens share: a queue row, what a draw asks for,
//! the screens, the status line, the effects the runner performs.

use std::sync::Arc;

use crate::core::analysis::mcq::Class;
use crate::core::audit::Status;
use crate::core::queue::{Harm, HarmfulTransition, QueueRow};
use crate::core::text::sanitize;
use crate::tui::input::keymap::Context;
use crate::tui::input::line_edit::LineEdit;
use crate::tui::research::View;

/// One row of the audit queue, with what the queue screen shows and searches.
#[derive(Debug, Clone)]
pub struct Row {
    /// Its transitions are listed when needed ([`App::pairs`]); the names come from the
    /// matrix ([`App::names`]): a queue of a million rows holds no strings per row.
    pub q: QueueRow,
}

impl Row {
    /// Whether the row's harm survives the replicates, as the queue's R column says it:
    /// `None` for an open-ended item, which docs/measures.md §16.4 does not judge (its
    /// replicates are read, no measure uses them); a multiple-choice item of a model
    /// without replicates is unjudged (one outcome per configuration is too few).
    pub fn shown_harm(&self) -> Option<Harm> {
        self.q.class.map(|_| self.q.harm.unwrap_or(Harm::Unjudged))
    }
}

/// Of the rows shown, how many the R column marks with each glyph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HarmCounts {
    /// Stable, unjudged and lottery rows, in [`Harm::ALL`] order.
    pub by_harm: [usize; 3],
    /// Open-ended rows, which the replicates do not judge.
    pub open_ended: usize,
}

/// A row's listed harmful transitions, as grid columns.
pub type Pairs = Arc<Vec<HarmfulTransition>>;

/// A frame in a slot of cells (width, height): one drawable form is made per slot size.
pub type Slot = (crate::core::frames::FrameKey, u16, u16);

/// What a draw needs changed that drawing itself must not change: the queue's page height
/// and where its rows are (for a click), frames to load, and loaded frames that have no
/// drawable form at their size yet. `App::after_draw` applies it, so that a draw is a
/// function of the state and nothing else.
#[derive(Debug, Default)]
pub struct Drawn {
    /// Rows the queue table showed (`None` off the queue).
    pub page: Option<usize>,
    /// Where the queue's rows were drawn (`None` off the queue).
    pub queue_hit: Option<QueueHit>,
    /// Frames shown as "loading…": to ask the loader for.
    pub wanted: Vec<crate::core::frames::FrameKey>,
    /// Loaded frames and the cell size of their slot, without a protocol yet.
    pub unfitted: Vec<Slot>,
    /// The open help's scrolling, which depends on its layout.
    pub help: Option<HelpBounds>,
}

/// The smallest terminal width the layout is designed for: below it (or below
/// [`MIN_HEIGHT`]) only the way out is drawn, and no key but quit acts.
pub const MIN_WIDTH: u16 = 80;
/// The smallest terminal height the layout is designed for.
pub const MIN_HEIGHT: u16 = 24;

/// Whether a terminal of `width` x `height` is below the least size: the one test both
/// the drawing (which then shows only the way out) and the keys (of which only quit then
/// acts) make.
pub fn below_least_size(width: u16, height: u16) -> bool {
    width < MIN_WIDTH || height < MIN_HEIGHT
}

/// The open help's scrolling as last drawn: its last first line, and how many lines a page
/// down and a page up move from the line on top. A line that wraps takes several rows, so
/// a page is as many lines as fill the box, not as many as it has rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelpBounds {
    /// The first line of the last page: scrolling stops there.
    pub last: usize,
    /// The lines shown whole from the top line: a page down shows the next one first.
    pub down: usize,
    /// The lines before the top line that fill a page: a page up ends just above it.
    pub up: usize,
}

/// The names of a queue row's unit, borrowed from the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowNames<'a> {
    /// The model's name.
    pub model: &'a str,
    /// The benchmark's name.
    pub benchmark: &'a str,
    /// The item's id.
    pub item_id: &'a str,
}

/// What the queue can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// As `frameaudit list` ranks: terminal regressions first, then by the share of
    /// comparable pairs that are harmful.
    Rank,
    /// By model, then item.
    Model,
    /// By item, then model.
    Item,
    /// Todo first, then done, skipped, flagged.
    Status,
    /// The former rank: terminal regressions first, then by the number of harmful pairs.
    Pairs,
    /// Stable harm first, then unjudged, then lottery (docs/measures.md §16.4), each in
    /// rank order; open-ended rows, which the replicates do not judge, last.
    Stable,
}

impl SortKey {
    /// How the title names the sort.
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Rank => "rank",
            SortKey::Model => "model",
            SortKey::Item => "item",
            SortKey::Status => "status",
            SortKey::Pairs => "terminal, harmful pairs",
            SortKey::Stable => "stable first",
        }
    }

    pub(super) fn next(self) -> SortKey {
        match self {
            SortKey::Rank => SortKey::Model,
            SortKey::Model => SortKey::Item,
            SortKey::Item => SortKey::Status,
            SortKey::Status => SortKey::Pairs,
            SortKey::Pairs | SortKey::Stable => SortKey::Rank,
        }
    }
}

/// Queue filters; `None` means any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only this model.
    pub model: Option<u32>,
    /// Only this benchmark.
    pub benchmark: Option<u32>,
    /// A trajectory class, or `Some(None)` for the open-ended items (which have none).
    pub class: Option<Option<Class>>,
    /// Only this audit status.
    pub status: Option<Status>,
    /// Only records tagged with this pathway (or having it primary).
    pub tag: Option<String>,
    /// Only items with a terminal regression.
    pub terminal_only: bool,
    /// Hide the items whose harm is a lottery.
    pub hide_lottery: bool,
    /// An explicit set of items, chosen on a researcher view.
    pub items: Option<crate::tui::research::ItemSet>,
}

impl Filter {
    /// Whether no filter is set.
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }
}

/// A text being typed in.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Input {
    /// None: the screen has the keys.
    #[default]
    None,
    /// The search query is being edited.
    Search,
    /// The note of the current item, being edited.
    Note(LineEdit),
}

/// Where the queue's rows were last drawn, so that a click finds its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueHit {
    /// The rows' area on screen (one row a line).
    pub area: ratatui::layout::Rect,
    /// Position in `visible` of the row drawn first.
    pub first: usize,
}

/// Longest side, in pixels, a thumbnail is decoded at.
pub const THUMB_SIDE: u32 = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// The screen under any overlay.
pub enum Screen {
    /// The audit queue.
    Queue,
    /// The item under audit.
    Item,
    /// One of the researcher views.
    Research(View),
}

impl Screen {
    /// The keymap context of the screen.
    pub fn context(self) -> Context {
        match self {
            Screen::Queue => Context::Queue,
            Screen::Item => Context::Item,
            Screen::Research(_) => Context::Research,
        }
    }
}

/// Whose records the findings view counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindingsSource {
    /// Every annotator's own audit (not the adjudicated ones).
    All,
    /// One annotator's records.
    Annotator(String),
    /// The adjudicated records (a review's result).
    Adjudicated,
}

impl FindingsSource {
    /// How the findings view names the source.
    pub fn label(&self) -> String {
        match self {
            FindingsSource::All => "all annotators".into(),
            FindingsSource::Annotator(a) => sanitize(a).into_owned(),
            FindingsSource::Adjudicated => "adjudicated".into(),
        }
    }
}

/// A message for the status line.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// What it says.
    pub text: String,
    /// Whether it reports a problem (shown bold and red).
    pub error: bool,
}

/// What the runner must do after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Leave the audit screens.
    Quit,
    /// Hand the session's new changes to its saver (`Session::save`).
    Save,
    /// Run the search request the app holds.
    Search,
    /// Build the current researcher view, or bootstrap its intervals, in the background
    /// (`App::view_request`).
    Research,
    /// Add the transitions the app holds to the plan file in the background
    /// (`App::take_plan_requests`).
    Plan,
    /// Write the frame the app holds at full size, in the background
    /// (`App::take_full_frame`), answering with a notice (`App::on_notice`).
    FullFrame,
}

/// What the header says of the analysis (computed once).
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// Models in the audited protocol's analyses.
    pub models: usize,
    /// Configurations in them.
    pub configs: usize,
    /// Items in them.
    pub items: usize,
    /// (min, max) over the models of the pooled (`ALL`) MCQ analysis.
    pub harmful: Option<(f64, f64)>,
    /// (min, max) headroom over the models of the pooled MCQ analysis.
    pub headroom: Option<(f64, f64)>,
}
