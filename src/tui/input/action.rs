//! Everything the user can ask of the audit screens. Keys become actions through the keymap;
//! only `App::update` turns actions into state changes.

/// A user intention, independent of the key that asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Previous row.
    Up,
    /// Next row.
    Down,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// The first row.
    Top,
    /// The last row.
    Bottom,
    /// Open the item.
    Open,
    /// Back to the queue.
    Back,
    /// Quit (asks first when changes are not saved).
    Quit,
    /// Open the help.
    Help,
    /// Open the search line.
    Search,
    /// The next row matching the search (wrapping); `PrevMatch` the previous.
    NextMatch,
    /// The previous row matching the search (wrapping).
    PrevMatch,
    /// Filter by the next model.
    FilterModel,
    /// Filter by the next benchmark.
    FilterBenchmark,
    /// Open a picker of the models the queue holds (typing narrows it).
    PickModel,
    /// Open a picker of the benchmarks the queue holds.
    PickBenchmark,
    /// Filter by the next trajectory class.
    FilterClass,
    /// Filter by the next audit status.
    FilterStatus,
    /// Filter by the next pathway tag.
    FilterTag,
    /// Only terminal regressions, or all.
    ToggleTerminal,
    /// Hide the items whose harm is a lottery (does not survive the replicates), or show them.
    HideLottery,
    /// Sort by whether the harm survives the replicates: stable first, lottery last.
    SortStable,
    /// Clear filters and search.
    ClearFilters,
    /// Sort by the next key.
    CycleSort,
    /// The next item of the queue.
    NextItem,
    /// The previous item of the queue.
    PrevItem,
    /// The next item of the queue still to do (not done, skipped or flagged).
    NextTodo,
    /// The next harmful transition of the item (wrapping); `PrevTransition` the previous.
    NextTransition,
    /// The previous harmful transition of the item (wrapping).
    PrevTransition,
    /// Toggle the taxonomy's pathway at this index.
    TogglePathway(usize),
    /// The next tagged pathway becomes primary.
    CyclePrimary,
    /// Edit the note.
    EditNote,
    /// Mark done and go to the next item.
    MarkDone,
    /// Skip and go to the next item.
    Skip,
    /// Flag for review and go to the next item.
    Flag,
    /// Undo the last change.
    Undo,
    /// Redo the last change undone.
    Redo,
    /// Frame cursor to the previous frame.
    FramePrev,
    /// Frame cursor to the next frame.
    FrameNext,
    /// Show the frames of the next configuration.
    FrameConfig,
    /// Cycle the frame panel: all frames, dropped ones, added ones.
    FrameSubset,
    /// Mark (or unmark) the frame under the cursor as evidence.
    MarkEvidence,
    /// Frame cursor to the next frame the higher budget dropped (wrapping).
    NextDropped,
    /// Frame cursor to the next frame the higher budget added (wrapping).
    NextAdded,
    /// Write the frame under the cursor at full size to a PNG file (and show it in the
    /// viewer `FRAMEAUDIT_VIEWER` names, if any).
    FullFrame,
    /// Give the command that plays the seconds around the frame under the cursor.
    PlayerCommand,
    /// Add the item's transition, with the evidence frames marked, to the intervention
    /// plan (docs/intervention.md §9).
    AddToPlan,
    /// Open the researcher overview.
    Overview,
    /// The next researcher view.
    NextView,
    /// The previous researcher view.
    PrevView,
    /// Show the researcher view at this index (`View::ALL`).
    ShowView(usize),
    /// Analysis: the next protocol.
    NextProtocol,
    /// Analysis: the next task.
    NextTask,
    /// Analysis: the next benchmark scope.
    NextScope,
    /// Analysis: all models, or the next one alone.
    NextModelSet,
    /// Analysis: with or without the text-only configurations.
    ToggleZeroFrame,
    /// Review: take the next annotator's pathways, primary and note for this unit.
    TakeAnnotator,
    /// Analysis: the next configuration set (all, then without the largest budgets).
    NextConfigSet,
    /// The next model of the view.
    NextModel,
    /// The previous model of the view.
    PrevModel,
    /// Cursor left on a researcher view (previous bar, cell, threshold).
    Left,
    /// Cursor right.
    Right,
    /// Show the items under the cursor in the queue.
    Select,
    /// In an editor: keep what was typed (the search) or save it (the note).
    Accept,
    /// In an editor: drop what was typed.
    Cancel,
    /// Go on with an audit made on other data, on this data (its held changes are written).
    GoOnWithThisData,
}

/// Names (for keymap files) and descriptions of the actions without a parameter.
const NAMED: [(Action, &str, &str); 65] = [
    (Action::Up, "up", "previous row"),
    (Action::Down, "down", "next row"),
    (Action::PageUp, "page_up", "page up"),
    (Action::PageDown, "page_down", "page down"),
    (Action::Top, "top", "first row"),
    (Action::Bottom, "bottom", "last row"),
    (Action::Open, "open", "open the item"),
    (Action::Back, "back", "back to the queue"),
    (Action::Quit, "quit", "quit"),
    (Action::Help, "help", "help: every key"),
    (Action::Search, "search", "fuzzy search"),
    (Action::NextMatch, "next_match", "search: next match"),
    (Action::PrevMatch, "prev_match", "search: previous match"),
    (Action::FilterModel, "filter_model", "filter: next model"),
    (
        Action::FilterBenchmark,
        "filter_benchmark",
        "filter: next benchmark",
    ),
    (
        Action::PickModel,
        "pick_model",
        "filter: pick a model from a list",
    ),
    (
        Action::PickBenchmark,
        "pick_benchmark",
        "filter: pick a benchmark from a list",
    ),
    (
        Action::FilterClass,
        "filter_class",
        "filter: next trajectory class",
    ),
    (
        Action::FilterStatus,
        "filter_status",
        "filter: next audit status",
    ),
    (Action::FilterTag, "filter_tag", "filter: next pathway tag"),
    (
        Action::ToggleTerminal,
        "toggle_terminal",
        "filter: terminal regressions only",
    ),
    (
        Action::HideLottery,
        "hide_lottery",
        "filter: hide lottery items (harm that does not survive the replicates)",
    ),
    (
        Action::SortStable,
        "sort_stable",
        "sort: stable harm first (survives every replicate), lottery last",
    ),
    (
        Action::ClearFilters,
        "clear_filters",
        "clear filters and search",
    ),
    (Action::CycleSort, "cycle_sort", "sort: next key"),
    (Action::NextItem, "next_item", "next item of the queue"),
    (Action::PrevItem, "prev_item", "previous item of the queue"),
    (
        Action::NextTodo,
        "next_todo",
        "next todo: the next item not done, skipped or flagged",
    ),
    (
        Action::NextTransition,
        "next_transition",
        "next harmful transition of the item",
    ),
    (
        Action::PrevTransition,
        "prev_transition",
        "previous harmful transition",
    ),
    (
        Action::CyclePrimary,
        "cycle_primary",
        "primary pathway: next tagged one",
    ),
    (Action::EditNote, "edit_note", "edit the note"),
    (
        Action::MarkDone,
        "mark_done",
        "mark done and go to the next item",
    ),
    (Action::Skip, "skip", "skip and go to the next item"),
    (
        Action::Flag,
        "flag",
        "flag for review and go to the next item",
    ),
    (Action::Undo, "undo", "undo the last change"),
    (Action::Redo, "redo", "redo"),
    (
        Action::FramePrev,
        "frame_prev",
        "frame cursor: previous frame",
    ),
    (Action::FrameNext, "frame_next", "frame cursor: next frame"),
    (
        Action::FrameConfig,
        "frame_config",
        "frames: next configuration",
    ),
    (
        Action::FrameSubset,
        "frame_subset",
        "frames: all / dropped / added",
    ),
    (
        Action::MarkEvidence,
        "mark_evidence",
        "mark the frame under the cursor as evidence",
    ),
    (
        Action::NextDropped,
        "next_dropped",
        "frames: next dropped frame (the lower budget's, wraps)",
    ),
    (
        Action::NextAdded,
        "next_added",
        "frames: next added frame (the higher budget's, wraps)",
    ),
    (
        Action::FullFrame,
        "full_frame",
        "frames: this frame at full size, as a PNG file",
    ),
    (
        Action::PlayerCommand,
        "player_command",
        "frames: a player command for the seconds around it",
    ),
    (
        Action::AddToPlan,
        "add_to_plan",
        "add this transition to the intervention plan",
    ),
    (Action::Overview, "overview", "researcher views: overview"),
    (Action::NextView, "next_view", "next researcher view"),
    (Action::PrevView, "prev_view", "previous researcher view"),
    (
        Action::NextProtocol,
        "next_protocol",
        "analysis: next protocol",
    ),
    (Action::NextTask, "next_task", "analysis: next task"),
    (
        Action::NextScope,
        "next_scope",
        "analysis: next benchmark scope",
    ),
    (
        Action::NextModelSet,
        "next_model_set",
        "analysis: model set (all, or one model)",
    ),
    (
        Action::ToggleZeroFrame,
        "toggle_zero_frame",
        "analysis: with / without text-only configs",
    ),
    (
        Action::TakeAnnotator,
        "take_annotator",
        "review: take the next annotator's record",
    ),
    (
        Action::NextConfigSet,
        "next_config_set",
        "analysis: config set (all, or up to a smaller top budget)",
    ),
    (Action::NextModel, "next_model", "next model"),
    (Action::PrevModel, "prev_model", "previous model"),
    (Action::Left, "left", "cursor left (bar, cell, threshold)"),
    (Action::Right, "right", "cursor right"),
    (
        Action::Select,
        "select",
        "show the selected items in the queue",
    ),
    (Action::Accept, "accept", "keep what was typed"),
    (Action::Cancel, "cancel", "drop what was typed"),
    (
        Action::GoOnWithThisData,
        "go_on_with_this_data",
        "audit made on other data: go on with it on this data",
    ),
];

/// Former keymap-file names still accepted (not listed by [`Action::names`]), so that keymap
/// files written for them keep working.
const ALIASES: [(&str, Action); 2] = [
    ("next_pair", Action::NextTransition),
    ("prev_pair", Action::PrevTransition),
];

impl Action {
    /// Parses a keymap-file name: `mark_done`, `toggle_pathway_3` (1-based), ..., or a former
    /// name (`next_pair` for `next_transition`).
    pub fn parse(s: &str) -> Option<Action> {
        if let Some(n) = s.strip_prefix("view_") {
            let n: usize = n.parse().ok()?;
            return (1..=6).contains(&n).then(|| Action::ShowView(n - 1));
        }
        if let Some(n) = s.strip_prefix("toggle_pathway_") {
            let n: usize = n.parse().ok()?;
            return (n >= 1).then(|| Action::TogglePathway(n - 1));
        }
        NAMED
            .iter()
            .find(|(_, name, _)| *name == s)
            .map(|(a, _, _)| *a)
            .or_else(|| ALIASES.iter().find(|(name, _)| *name == s).map(|(_, a)| *a))
    }

    /// The keymap-file names of the actions, in the help's order.
    pub fn names() -> Vec<&'static str> {
        let mut v: Vec<&str> = NAMED.iter().map(|(_, n, _)| *n).collect();
        v.push("toggle_pathway_N");
        v.push("view_N");
        v
    }

    /// What the action does, as the help says it.
    pub fn describe(self) -> &'static str {
        match self {
            Action::TogglePathway(_) => "toggle a pathway",
            Action::ShowView(_) => "show a researcher view",
            a => NAMED
                .iter()
                .find(|(x, _, _)| *x == a)
                .map_or("", |(_, _, d)| d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (a, name, _) in NAMED {
            assert_eq!(Action::parse(name), Some(a));
        }
        assert_eq!(
            Action::parse("toggle_pathway_2"),
            Some(Action::TogglePathway(1))
        );
        assert_eq!(Action::parse("toggle_pathway_0"), None);
        assert_eq!(Action::parse("jump"), None);
    }

    #[test]
    fn the_former_pair_names_are_aliases_and_the_listing_shows_the_new_ones() {
        assert_eq!(
            Action::parse("next_transition"),
            Some(Action::NextTransition)
        );
        assert_eq!(
            Action::parse("prev_transition"),
            Some(Action::PrevTransition)
        );
        assert_eq!(Action::parse("next_pair"), Action::parse("next_transition"));
        assert_eq!(Action::parse("prev_pair"), Action::parse("prev_transition"));
        let names = Action::names();
        assert!(names.contains(&"next_transition") && names.contains(&"prev_transition"));
        assert!(!names.contains(&"next_pair") && !names.contains(&"prev_pair"));
        // An alias never shadows a name of its own.
        for (alias, _) in ALIASES {
            assert!(NAMED.iter().all(|(_, name, _)| *name != alias), "{alias}");
        }
    }
}
