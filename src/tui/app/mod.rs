//! The audit screens' state and its one reducer: keys become actions (through the keymap),
//! `App::update` applies them, views only read the state. Nothing here touches the
//! terminal or a file directly; saving goes through the session, searching through
//! requests the runner hands to the search thread.

mod plan;
mod research;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyEvent, MouseButton, MouseEvent, MouseEventKind};

use crate::core::analysis::mcq::Class;
use crate::core::analysis::{Metrics, Report};
use crate::core::audit::{AuditRecord, Status, UnitKey, now_rfc3339};
use crate::core::dataset::Dataset;
use crate::core::queue::{HarmfulTransition, QueueRow};
use crate::core::taxonomy::Taxonomy;
use crate::core::text::sanitize;
use crate::core::workspace::OtherAudit;
use crate::core::workspace::haystacks::{Haystacks, ItemTexts};
use crate::core::workspace::review::Review;
use crate::core::workspace::search::{FIELD_SEP, SearchRequest, SearchResult};
use crate::core::workspace::session::Session;
use crate::term::ImageMode;
use crate::tui::input::action::Action;
use crate::tui::input::keymap::{Context, Key, Keymap};
use crate::tui::input::line_edit::{Edit, LineEdit};
use crate::tui::input::pick::{Outcome, Pick, PickKind};
use crate::tui::research::{Research, View};

/// One row of the audit queue, with what the queue screen shows and searches.
#[derive(Debug, Clone)]
pub struct Row {
    /// Its transitions are listed when needed ([`App::pairs`]); the names come from the
    /// matrix ([`App::names`]): a queue of a million rows holds no strings per row.
    pub q: QueueRow,
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
    pub queue_hit: Option<QueueHit>,
    /// Frames shown as "loading…": to ask the loader for.
    pub wanted: Vec<crate::core::frames::FrameKey>,
    /// Loaded frames and the cell size of their slot, without a protocol yet.
    pub unfitted: Vec<Slot>,
    /// The open help's last first line and page height, which depend on its layout.
    pub help: Option<(usize, usize)>,
}

/// The names of a queue row's unit, borrowed from the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowNames<'a> {
    pub model: &'a str,
    pub benchmark: &'a str,
    pub item_id: &'a str,
}

/// What the queue can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// As `frameaudit list` ranks: terminal regressions first, then by the share of
    /// comparable pairs that are harmful.
    Rank,
    Model,
    Item,
    Status,
    /// The former rank: terminal regressions first, then by the number of harmful pairs.
    Pairs,
}

impl SortKey {
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Rank => "rank",
            SortKey::Model => "model",
            SortKey::Item => "item",
            SortKey::Status => "status",
            SortKey::Pairs => "harmful pairs",
        }
    }

    fn next(self) -> SortKey {
        match self {
            SortKey::Rank => SortKey::Model,
            SortKey::Model => SortKey::Item,
            SortKey::Item => SortKey::Status,
            SortKey::Status => SortKey::Pairs,
            SortKey::Pairs => SortKey::Rank,
        }
    }
}

/// Queue filters; `None` means any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub model: Option<u32>,
    pub benchmark: Option<u32>,
    /// A trajectory class, or `Some(None)` for the open-ended items (which have none).
    pub class: Option<Option<Class>>,
    pub status: Option<Status>,
    pub tag: Option<String>,
    pub terminal_only: bool,
    /// An explicit set of items, chosen on a researcher view.
    pub items: Option<crate::tui::research::ItemSet>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }
}

/// A text being typed in.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
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

/// Two clicks on one row within this time open it.
/// Longest side, in pixels, a thumbnail is decoded at.
pub const THUMB_SIDE: u32 = 128;

/// Two clicks on one row within this time open it.
pub const DOUBLE_CLICK: std::time::Duration = std::time::Duration::from_millis(500);

/// Rows the wheel moves the queue's selection, lines it scrolls the help.
pub const WHEEL_STEP: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Queue,
    Item,
    /// One of the researcher views.
    Research(View),
}

impl Screen {
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
    Annotator(String),
    Adjudicated,
}

impl FindingsSource {
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
    pub text: String,
    pub error: bool,
}

/// What the runner must do after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Quit,
    /// Hand the session's new changes to its saver (`Session::save`).
    Save,
    /// Run the search request the app holds.
    Search,
    /// Build the current researcher view, or bootstrap its intervals, in the background
    /// (`App::view_request`).
    Research,
}

/// Which frames the frame panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Subset {
    /// Every frame of the panel's configuration.
    #[default]
    All,
    /// The frames the lower budget of the transition sampled and the higher did not.
    Dropped,
    /// The frames the higher budget sampled and the lower did not.
    Added,
}

/// The frame panel's state on the item screen.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FramePanel {
    /// Grid column whose frames are shown (default: the higher budget of the transition).
    pub config: Option<usize>,
    pub subset: Subset,
    pub cursor: usize,
}

/// The frames one configuration sampled, for the item screen.
#[derive(Debug, Clone)]
pub struct ConfigFrames {
    pub name: String,
    /// Distinct indices, sorted.
    pub frames: Vec<u64>,
    /// Why there are none, or which rule gave them.
    pub note: String,
    /// How sure the frames are (`None` when there are none).
    pub provenance: Option<crate::core::rules::Provenance>,
    /// The rule that gave them, with the harness it reproduces.
    pub rule: String,
    /// Where the harness saved the frames it gave the model (a run's `frame_files`).
    pub frame_files: Option<String>,
}

/// One frame in the frame panel: its index and where it sits in its configuration's sample.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelEntry {
    pub index: u64,
    pub config: usize,
    pub position: usize,
    pub of: usize,
}

/// Everything the frames view needs about an item.
#[derive(Debug, Clone)]
pub struct FrameInfo {
    pub video: Option<String>,
    pub num_frames: Option<u64>,
    pub fps: Option<f64>,
    pub configs: Vec<ConfigFrames>,
    pub pair: Option<HarmfulTransition>,
    pub transition: crate::core::sampling::Transition,
    pub panel_config: Option<usize>,
    /// The frames each intervention run of the item was given (docs/intervention.md §7),
    /// against the top configuration's, whose answer the recovery compares.
    pub interventions: Vec<PlannedFrames>,
}

/// An intervention run's frames against the original ones of the configuration it re-ran.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFrames {
    /// `↻STRATEGY` (`↻CONFIG` for the intervention protocol itself).
    pub label: String,
    /// The frames the run gave the model: distinct, sorted.
    pub frames: Vec<u64>,
    /// How they are known.
    pub provenance: Option<crate::core::rules::Provenance>,
    /// The grid configuration they stand against (the top).
    pub against: usize,
    /// Planned frames the original did not sample (restored, or brought in).
    pub restored: Vec<u64>,
    /// Original frames the plan left out.
    pub left_out: Vec<u64>,
}

/// What the header says of the analysis (computed once).
#[derive(Debug, Clone, Default)]
pub struct Overview {
    pub models: usize,
    pub configs: usize,
    pub items: usize,
    /// (min, max) over the models of the pooled (`ALL`) MCQ analysis.
    pub harmful: Option<(f64, f64)>,
    pub headroom: Option<(f64, f64)>,
}

/// The state of the audit screens.
pub struct App {
    /// Shared with the research worker, which recomputes views from it.
    pub ds: Arc<Dataset>,
    pub report: Report,
    pub protocol: u32,
    pub rows: Vec<Row>,
    pub taxonomy: Taxonomy,
    pub keymap: Keymap,
    pub session: Session,
    pub screen: Screen,
    pub help: bool,
    /// First line of the help shown (the help scrolls; the view stops at its last page).
    pub help_scroll: usize,
    /// The help's last first line and page height, as last drawn (`None` before a draw:
    /// then scrolling is not bounded until the draw that follows).
    pub help_bounds: Option<(usize, usize)>,
    /// `NO_COLOR` is set: the view strips every colour, so markers and glyphs tell all.
    pub no_color: bool,
    /// Columns and rows of the terminal (the runner keeps it current; the help's scrolling
    /// stops at its last page for this size).
    pub term_size: (u16, u16),
    pub input: Input,
    pub filter: Filter,
    pub sort: SortKey,
    pub query: LineEdit,
    pub search_generation: u64,
    /// The newest search result received (possibly for an older query).
    pub search_result: Option<SearchResult>,
    /// Texts searched per row.
    pub haystacks: Arc<Haystacks>,
    /// Rows shown, in order (indices into `rows`).
    pub visible: Vec<u32>,
    /// The selected row (an index into `rows`), kept across filtering.
    pub selected: Option<u32>,
    /// First visible row drawn in the queue table.
    pub scroll: usize,
    /// The harmful pair under audit on the item screen (index into the row's pairs).
    pub pair: usize,
    pub notice: Option<Notice>,
    /// The intervention plan `add_to_plan` writes (docs/intervention.md §9).
    pub plan_path: std::path::PathBuf,
    /// Asked to quit with unsaved changes: the next quit goes through.
    pub confirm_quit: bool,
    pub started: Instant,
    /// Decisions of this session: units marked done, skipped or flagged that were todo
    /// (re-marking a decided unit is not one; undoing a decision takes it back).
    pub marked: usize,
    /// Rows the queue table can show (set by the view from the terminal size).
    pub page: usize,
    pub overview: Overview,
    /// Row of each unit, at `model * n_items + item` (`u32::MAX` for none).
    unit_row: Vec<u32>,
    /// The listed transitions of the last row asked for (see [`App::pairs`]).
    pairs_cache: std::cell::RefCell<Option<(usize, Pairs)>>,
    pub frame_panel: FramePanel,
    pub images: ImageMode,
    pub(super) picker: ratatui_image::picker::Picker,
    /// Decodes frames off the UI thread (none in tests: frames show as text).
    pub loader: Option<crate::core::frames::FrameLoader>,
    /// Drawable images per (frame, area size), so a frame is converted once per size; or
    /// why it cannot be drawn.
    pub(super) protocols: lru::LruCache<Slot, Result<ratatui_image::protocol::Protocol, String>>,
    pub research: Research,
    /// What part of the queue this session holds, shown in the header ("shard 2/5 (+20%
    /// shared)", "review of 2 audits"); `None` for the whole queue.
    pub part: Option<String>,
    /// The disagreements under review (`frameaudit review`), if this is a review.
    pub review: Option<Review>,
    /// The dataset's other audit files (read once at start; the findings view adds this
    /// session's own records live).
    pub other_audits: Vec<OtherAudit>,
    /// Whose records the findings view counts: 0 = every annotator, then each annotator
    /// by name, then the adjudicated result (see [`App::findings_sources`]).
    pub findings_source: usize,
    /// An open filter picker (model, benchmark): it takes the keys until closed.
    pub pick: Option<Pick>,
    /// Where the view last drew the queue's rows (`None` off the queue).
    pub queue_hit: Option<QueueHit>,
    /// The last click on a queue row (visible position's row, when), for double clicks.
    pub last_click: Option<(u32, Instant)>,
    /// The time of a change, as the audit file writes it (RFC 3339): the wall clock, or a
    /// fixed one in tests.
    pub clock: fn() -> String,
    /// The items' search texts, made once (the haystacks of each queue share them).
    item_texts: Arc<ItemTexts>,
    /// The fingerprint of the cells while it is computed, until the session compared it
    /// with its file's ([`App::settle_fingerprint`]).
    pub fingerprint: Option<Arc<std::sync::OnceLock<String>>>,
    /// The audit file was named by the user (`--audit`): one made on other data is gone on
    /// with without asking, as they asked for that file.
    pub audit_given: bool,
}

/// The most characters a paste puts into an editor.
pub const PASTE_MAX: usize = 4096;

/// Pasted text as one line for an editor: line breaks and tabs become spaces, other control
/// characters are dropped, and it is cut to [`PASTE_MAX`] characters (true when it was).
pub fn paste_line(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len().min(PASTE_MAX * 4));
    let mut n = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if n == PASTE_MAX {
            return (out, true);
        }
        let c = match c {
            '\r' if chars.peek() == Some(&'\n') => continue,
            '\r' | '\n' | '\t' => ' ',
            c if c.is_control() => continue,
            c => c,
        };
        out.push(c);
        n += 1;
    }
    (out, false)
}

impl App {
    /// Builds the app over a dataset and its report, for the audit queue of `protocol`.
    pub fn new(
        ds: impl Into<Arc<Dataset>>,
        report: Report,
        protocol: u32,
        taxonomy: Taxonomy,
        keymap: Keymap,
        session: Session,
    ) -> App {
        let report_params = report.params.clone();
        let ds: Arc<Dataset> = ds.into();
        // The items' search texts beside the queue: neither needs the other.
        let (rows, item_texts) = std::thread::scope(|s| {
            let texts = s.spawn(|| Arc::new(item_texts(&ds)));
            let rows: Vec<Row> = crate::core::queue::queue_unlisted(
                &report,
                protocol,
                crate::core::queue::QueueKind::Harmful,
            )
            .into_iter()
            .map(|q| Row { q })
            .collect();
            let texts = texts
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e));
            (rows, texts)
        });
        let mut app = App {
            ds,
            report,
            protocol,
            rows,
            taxonomy,
            keymap,
            session,
            screen: Screen::Queue,
            help: false,
            help_scroll: 0,
            help_bounds: None,
            no_color: false,
            term_size: (80, 24),
            input: Input::None,
            filter: Filter::default(),
            sort: SortKey::Rank,
            query: LineEdit::default(),
            search_generation: 0,
            search_result: None,
            haystacks: Arc::new(Haystacks::default()),
            item_texts,
            visible: Vec::new(),
            selected: None,
            scroll: 0,
            pair: 0,
            notice: None,
            plan_path: std::path::PathBuf::from("frameaudit.plan.json"),
            confirm_quit: false,
            started: Instant::now(),
            marked: 0,
            page: 20,
            overview: Overview::default(),
            unit_row: Vec::new(),
            pairs_cache: std::cell::RefCell::new(None),
            frame_panel: FramePanel::default(),
            images: ImageMode::None,
            picker: ratatui_image::picker::Picker::halfblocks(),
            loader: None,
            protocols: lru::LruCache::new(
                std::num::NonZeroUsize::new(96).unwrap_or(std::num::NonZeroUsize::MIN),
            ),
            research: Research::new(crate::core::analysis::params::Params {
                bootstrap_b: 1000,
                sweep: true,
                cascade_stages: None,
                ..report_params
            }),
            other_audits: Vec::new(),
            findings_source: 0,
            part: None,
            review: None,
            pick: None,
            queue_hit: None,
            last_click: None,
            clock: now_rfc3339,
            fingerprint: None,
            audit_given: false,
        };
        app.index_units();
        app.list_recorded_pairs();
        app.index_rows();
        app
    }

    /// Once the cells' fingerprint is known, has the session compare it with the audit
    /// file's. An audit made on other data is said on screen, with its records that no longer
    /// match their transition, and nothing is written to it until the annotator says to go on
    /// with it on this data ([`Action::GoOnWithThisData`]), unless they named the file with
    /// `--audit`. Nothing to do before, or after it was done once.
    pub fn settle_fingerprint(&mut self) {
        use crate::core::workspace::session::Hold;
        let Some(fp) = &self.fingerprint else { return };
        if fp.get().is_none() {
            return;
        }
        self.fingerprint = None;
        // The session may have compared them already (the fingerprint came first).
        self.session.settle();
        if !matches!(self.session.hold(), Hold::OtherData { .. }) {
            return;
        }
        let stale = crate::core::workspace::stale_records(
            self.session.records(),
            &self.ds.matrix,
            &self.report,
            |k| self.row_of(k).map(|i| &self.rows[i].q),
        );
        let matching = format!(
            "{} record(s) no longer match their transition{}",
            stale.len(),
            if stale.is_empty() {
                String::new()
            } else {
                format!(": {}", stale.join(", "))
            }
        );
        let note = if self.audit_given {
            self.session.go_on_with_this_data(&(self.clock)());
            format!(
                "this audit was made on other data (fingerprint differs): gone on with on this data, as --audit names it; {matching}"
            )
        } else {
            let key = self
                .keymap
                .hint(Context::Global, Action::GoOnWithThisData)
                .unwrap_or_else(|| "W".into());
            format!(
                "this audit was made on other data (fingerprint differs): nothing is written to it; {key} goes on with it on this data, or quit and give --audit FILE; {matching}"
            )
        };
        let text = match self.notice.take() {
            Some(n) if n.error => format!("{} · {note}", n.text),
            _ => note,
        };
        self.notice = Some(Notice { text, error: true });
    }

    /// [`App::settle_fingerprint`], waiting for the fingerprint to be known.
    pub fn wait_fingerprint(&mut self) {
        if let Some(fp) = &self.fingerprint {
            fp.wait();
        }
        self.settle_fingerprint();
    }

    /// Goes on with an audit made on other data, on this data, as the annotator asked.
    fn go_on_with_this_data(&mut self) -> Vec<Effect> {
        if self.session.go_on_with_this_data(&(self.clock)()) {
            self.notice = Some(Notice {
                text: "this audit goes on on this data: its changes are written (a data line in the file says so)".into(),
                error: false,
            });
            return vec![Effect::Save];
        }
        self.notice = Some(Notice {
            text: "nothing to go on with: the audit is of this data".into(),
            error: false,
        });
        Vec::new()
    }

    /// The queue lists at most MAX_LISTED_PAIRS transitions of a unit; a record of this
    /// session on a harmful transition left out of that list is added to it, so that it
    /// opens on its own transition, and so is the audited transition of a unit with more.
    fn list_recorded_pairs(&mut self) {
        let cap = crate::core::analysis::pairs::MAX_LISTED_PAIRS as u64;
        for i in 0..self.rows.len() {
            if self.rows[i].q.harmful_pairs > cap
                && let Some(p) =
                    crate::core::queue::audited_transition(&self.report, &self.rows[i].q)
            {
                self.add_listed_pair(i, p);
            }
        }
        // The session's records are few; the queue's rows may be a million.
        let recorded: Vec<(usize, String, String)> = self
            .session
            .records()
            .iter()
            .filter_map(|(key, rec)| Some((self.row_of(key)?, rec.from.clone(), rec.to.clone())))
            .collect();
        for (i, from, to) in recorded {
            let names = self.config_names(i);
            let col = |name: &str| names.iter().position(|n| *n == name);
            let t = col(&from)
                .zip(col(&to))
                .map(|(a, b)| HarmfulTransition::new(a, b));
            if let Some(t) = t
                && crate::core::queue::is_harmful_pair(&self.report, &self.rows[i].q, t)
            {
                self.add_listed_pair(i, t);
            }
        }
    }

    /// Adds `t` to row `i`'s listed transitions, if it is not there yet.
    fn add_listed_pair(&mut self, i: usize, t: HarmfulTransition) {
        if self.pairs(i).contains(&t) {
            return;
        }
        let mut listed = (*self.pairs(i)).clone();
        listed.push(t);
        self.rows[i].q.transitions = Some(Box::new(listed));
        self.pairs_cache.replace(None);
    }

    /// The sources the findings view can count: all annotators, each one, the adjudicated
    /// result (when there is one).
    pub fn findings_sources(&self) -> Vec<FindingsSource> {
        let mut names: Vec<String> = self
            .other_audits
            .iter()
            .filter(|o| !o.adjudicated)
            .map(|o| o.annotator.clone())
            .collect();
        if self.review.is_none() {
            names.push(self.session.annotator().to_string());
        }
        names.sort();
        names.dedup();
        let mut out = vec![FindingsSource::All];
        out.extend(names.into_iter().map(FindingsSource::Annotator));
        if self.review.is_some() || self.other_audits.iter().any(|o| o.adjudicated) {
            out.push(FindingsSource::Adjudicated);
        }
        out
    }

    /// The records the findings view counts now: this session's live, the others' as read.
    pub fn findings_records(&self) -> Vec<&AuditRecord> {
        let sources = self.findings_sources();
        let source = sources
            .get(self.findings_source)
            .unwrap_or(&FindingsSource::All);
        let own_adjudicated = self.review.is_some();
        let own = self.session.records().values();
        let mut out: Vec<&AuditRecord> = Vec::new();
        let take_own = match source {
            FindingsSource::All => !own_adjudicated,
            FindingsSource::Annotator(a) => !own_adjudicated && a == self.session.annotator(),
            FindingsSource::Adjudicated => own_adjudicated,
        };
        if take_own {
            out.extend(own);
        }
        for o in &self.other_audits {
            let take = match source {
                FindingsSource::All => !o.adjudicated,
                FindingsSource::Annotator(a) => !o.adjudicated && *a == o.annotator,
                FindingsSource::Adjudicated => o.adjudicated,
            };
            if take {
                out.extend(&o.records);
            }
        }
        out
    }

    /// Keeps only the queue rows whose unit passes `keep` (a shard, the disagreements under
    /// review), naming the part in the header.
    pub fn restrict(&mut self, part: String, keep: impl Fn(&UnitKey) -> bool) {
        let keys: Vec<bool> = (0..self.rows.len()).map(|i| keep(&self.key(i))).collect();
        let mut n = 0;
        self.rows.retain(|_| {
            n += 1;
            keys[n - 1]
        });
        self.part = Some(part);
        self.selected = None;
        self.scroll = 0;
        self.screen = Screen::Queue;
        self.index_rows();
    }

    /// Everything derived from the rows: the index by unit, the header's figures, the
    /// search texts, the visible rows, and where a resumed session starts.
    fn index_rows(&mut self) {
        let app = self;
        app.index_units();
        app.overview = app.compute_overview();
        app.haystacks = Arc::new(app.build_haystacks());
        // Resume where the annotator left off.
        let resume = app.session.last_visit().and_then(|k| app.row_of(k));
        app.refresh_visible();
        if let Some(i) = resume {
            app.selected = Some(i as u32);
            app.pair = app.pair_of_record(i);
            app.screen = Screen::Item;
            app.follow_selection();
        }
    }

    /// The row of each unit ([`App::row_of`]).
    fn index_units(&mut self) {
        let n_items = self.ds.matrix.items.len();
        self.unit_row = vec![u32::MAX; self.ds.matrix.models.len() * n_items];
        for (i, r) in self.rows.iter().enumerate() {
            self.unit_row[r.q.model as usize * n_items + r.q.item as usize] = i as u32;
        }
        self.pairs_cache.replace(None);
    }

    /// The texts fuzzy search looks in: item id, model, benchmark, question, note.
    fn build_haystacks(&self) -> Haystacks {
        let m = &self.ds.matrix;
        let rows = self.rows.iter().map(|r| (r.q.model, r.q.item)).collect();
        let mut h = Haystacks::with_items(Arc::clone(&self.item_texts), m.models.names(), rows);
        for (key, rec) in self.session.records() {
            if let Some(i) = self.row_of(key) {
                h.set_note(i, &rec.note);
            }
        }
        h
    }

    /// The first line of an item's question, sanitised (empty without items.jsonl).
    fn question_of_item(&self, item: u32) -> String {
        question_of_item(&self.ds, item)
    }

    /// The first line of row `i`'s question, sanitised (empty without items.jsonl).
    pub fn question(&self, i: usize) -> String {
        self.question_of_item(self.rows[i].q.item)
    }

    /// The names of row `i`'s unit, as in the cells (not sanitised).
    pub fn names(&self, i: usize) -> RowNames<'_> {
        let m = &self.ds.matrix;
        let q = &self.rows[i].q;
        let item = m.item(q.item);
        RowNames {
            model: m.models.name(q.model),
            benchmark: m.benchmarks.name(item.benchmark),
            item_id: &item.id,
        }
    }

    /// The audit key of row `i`.
    pub fn key(&self, i: usize) -> UnitKey {
        let n = self.names(i);
        UnitKey::new(n.model, n.benchmark, n.item_id)
    }

    /// The row of a unit, if the queue holds it.
    pub fn row_of(&self, key: &UnitKey) -> Option<usize> {
        let m = &self.ds.matrix;
        let model = m.models.get(&key.model)?;
        let item = m.find_item(&key.benchmark, &key.item_id)?;
        let at = model as usize * m.items.len() + item as usize;
        self.unit_row
            .get(at)
            .filter(|&&r| r != u32::MAX)
            .map(|&r| r as usize)
    }

    /// Row `i`'s harmful transitions as grid columns: the first
    /// MAX_LISTED_PAIRS in grid order, listed when asked for (the last row's are kept).
    pub fn pairs(&self, i: usize) -> Pairs {
        if let Some((row, p)) = &*self.pairs_cache.borrow()
            && *row == i
        {
            return p.clone();
        }
        let q = &self.rows[i].q;
        let listed = match &q.transitions {
            Some(p) => (**p).clone(),
            None => crate::core::queue::list_pairs(&self.report, q),
        };
        let listed = Arc::new(listed);
        self.pairs_cache.replace(Some((i, listed.clone())));
        listed
    }

    pub fn record(&self, i: usize) -> Option<&AuditRecord> {
        if self.session.records().is_empty() {
            return None;
        }
        self.session.record(&self.key(i))
    }

    pub fn status(&self, i: usize) -> Status {
        self.record(i).map_or(Status::Todo, |r| r.status)
    }

    /// The row on screen now, if any.
    pub fn current(&self) -> Option<usize> {
        self.selected.map(|s| s as usize)
    }

    fn passes(&self, i: usize) -> bool {
        let r = &self.rows[i];
        let f = &self.filter;
        let m = &self.ds.matrix;
        f.model.is_none_or(|x| x == r.q.model)
            && f.benchmark.is_none_or(|b| b == m.item(r.q.item).benchmark)
            && f.class.is_none_or(|c| r.q.class == c)
            && (!f.terminal_only || r.q.terminal)
            && f.items
                .as_ref()
                .is_none_or(|s| s.items.contains(&(r.q.model, r.q.item)))
            && f.status.is_none_or(|s| self.status(i) == s)
            && f.tag.as_ref().is_none_or(|t| {
                self.record(i)
                    .is_some_and(|x| x.pathways.contains(t) || x.primary.as_ref() == Some(t))
            })
    }

    /// The rows that pass the filters and the search, in rank order.
    fn passing(&self) -> Vec<u32> {
        let searched: Option<Arc<Vec<u32>>> = match &self.search_result {
            Some(r) if !self.query.is_empty() => Some(r.matches.clone()),
            _ => None,
        };
        match &searched {
            Some(m) => m
                .iter()
                .copied()
                .filter(|&i| self.passes(i as usize))
                .collect(),
            None => (0..self.rows.len() as u32)
                .filter(|&i| self.passes(i as usize))
                .collect(),
        }
    }

    /// Recomputes the visible rows from filters, search and sort, keeping the selection.
    pub fn refresh_visible(&mut self) {
        let mut v = self.passing();
        // Rows (and search results) come in rank order; other keys sort them, stably.
        // Model ids follow the names' order, item ids (benchmark, item id) order
        // (core/matrix/), so the ids sort as the names do.
        let rows = &self.rows;
        match self.sort {
            SortKey::Rank => {}
            SortKey::Model => v.sort_by_key(|&a| {
                let q = &rows[a as usize].q;
                (q.model, q.item)
            }),
            SortKey::Item => v.sort_by_key(|&a| {
                let q = &rows[a as usize].q;
                (q.item, q.model)
            }),
            SortKey::Status => v.sort_by_key(|&i| self.status(i as usize) as u8),
            SortKey::Pairs => v.sort_by(|&a, &b| {
                crate::core::queue::by_harmful_pairs(&rows[a as usize].q, &rows[b as usize].q)
            }),
        }
        self.visible = v;
        self.follow_selection();
    }

    /// Keeps the selection on screen: the same row if still visible, else the nearest.
    fn follow_selection(&mut self) {
        let pos = self
            .selected
            .and_then(|s| self.visible.iter().position(|&v| v == s));
        let pos = match pos {
            Some(p) => Some(p),
            None if self.visible.is_empty() => None,
            None => Some(0),
        };
        self.selected = pos.map(|p| self.visible[p]);
        if let Some(p) = pos {
            if p < self.scroll {
                self.scroll = p;
            } else if p >= self.scroll + self.page.max(1) {
                self.scroll = p + 1 - self.page.max(1);
            }
        }
        self.scroll = self.scroll.min(self.visible.len().saturating_sub(1));
    }

    fn cursor(&self) -> Option<usize> {
        self.selected
            .and_then(|s| self.visible.iter().position(|&v| v == s))
    }

    fn move_to(&mut self, pos: usize) {
        if self.visible.is_empty() {
            return;
        }
        let pos = pos.min(self.visible.len() - 1);
        self.selected = Some(self.visible[pos]);
        self.follow_selection();
    }

    fn step(&mut self, delta: isize) {
        let cur = self.cursor().unwrap_or(0) as isize;
        self.move_to((cur + delta).max(0) as usize);
    }

    /// The pair index of the row's saved record, else of its audited transition (the step
    /// where the answer flips, `core::queue::audited_transition`), else 0.
    fn pair_of_record(&self, i: usize) -> usize {
        let r = &self.rows[i];
        let pairs = self.pairs(i);
        let recorded = self.record(i).and_then(|rec| {
            let names = self.config_names(i);
            pairs
                .iter()
                .position(|t| names[t.lower] == rec.from && names[t.higher] == rec.to)
        });
        recorded
            .or_else(|| {
                let p = crate::core::queue::audited_transition(&self.report, &r.q)?;
                pairs.iter().position(|&x| x == p)
            })
            .unwrap_or(0)
    }

    /// The pair index an item opens on: the transition of the researcher selection it was
    /// opened from (when it is one of the item's harmful transitions), else
    /// [`App::pair_of_record`].
    fn opening_pair(&self, i: usize) -> usize {
        let selected = self
            .filter
            .items
            .as_ref()
            .and_then(|s| s.transition.as_ref())
            .and_then(|(from, to)| {
                let names = self.config_names(i);
                self.pairs(i)
                    .iter()
                    .position(|t| names[t.lower] == *from && names[t.higher] == *to)
            });
        selected.unwrap_or_else(|| self.pair_of_record(i))
    }

    /// The grid configuration names of a row's model grid.
    pub fn config_names(&self, i: usize) -> Vec<String> {
        crate::core::workspace::config_names(&self.ds.matrix, &self.report, &self.rows[i].q)
    }

    /// Row `i`'s intervention cells (docs/measures.md §11): the model's answer to the item
    /// under each intervention protocol of the dataset, the protocol itself and each of its
    /// strategies (docs/intervention.md §7), in protocol name order, each with the strategy
    /// (`None` for the protocol itself). Primary protocol only.
    pub fn intervention_cells(&self, i: usize) -> Vec<(Option<String>, u32)> {
        let m = &self.ds.matrix;
        let params = &self.report.params;
        if m.protocols.get(&params.primary) != Some(self.protocol) {
            return Vec::new();
        }
        let q = &self.rows[i].q;
        let mut out: Vec<(&str, Option<String>, u32)> = (0..m.protocols.len() as u32)
            .filter_map(|p| {
                let name = m.protocols.name(p);
                let strategy = params.intervention_strategy(name)?;
                let cell =
                    crate::core::analysis::intervention::intervention_cell(m, p, q.model, q.item)?;
                Some((name, strategy.map(str::to_string), cell))
            })
            .collect();
        out.sort_by_key(|x| x.0);
        out.into_iter().map(|(_, s, c)| (s, c)).collect()
    }

    pub fn metrics(&self, i: usize) -> &Metrics {
        let q = &self.rows[i].q;
        &self.report.analyses[q.analysis as usize].metrics[q.model_index as usize]
    }

    fn open(&mut self) {
        if let Some(i) = self.current() {
            self.screen = Screen::Item;
            self.pair = self.opening_pair(i);
            self.frame_panel = FramePanel::default();
            self.session.visit(&self.key(i), &(self.clock)());
        }
    }

    /// Sets how frames are drawn (the picker never queries the terminal: no start delay,
    /// no swallowed key).
    pub fn set_images(&mut self, mode: ImageMode) {
        use ratatui_image::picker::ProtocolType;
        self.images = mode;
        let kind = match mode {
            ImageMode::Kitty => ProtocolType::Kitty,
            ImageMode::Sixel => ProtocolType::Sixel,
            ImageMode::Iterm => ProtocolType::Iterm2,
            ImageMode::None | ImageMode::Halfblocks => ProtocolType::Halfblocks,
        };
        self.picker.set_protocol_type(kind);
        self.protocols.clear();
    }

    /// The frames every configuration of row `i` sampled, and the transition's sets.
    pub fn frame_info(&self, i: usize) -> FrameInfo {
        let q = &self.rows[i].q;
        let mg = &self.report.analyses[q.analysis as usize].grids.models[q.model_index as usize];
        let k = mg.grid.k();
        let meta = self.ds.item_meta(q.item);
        let configs: Vec<ConfigFrames> = (0..k)
            .map(|c| {
                let cell = mg.cells[q.row as usize * k + c];
                let (frames, rule) = crate::core::cell_frames::frames_for_cell(&self.ds, cell);
                ConfigFrames {
                    name: self.ds.matrix.config(mg.grid.configs[c]).name.to_string(),
                    frames: crate::core::sampling::frame_set(frames),
                    note: match &rule {
                        crate::core::cell_frames::Rule::Unknown(why) => why.clone(),
                        other => other.explain(),
                    },
                    provenance: rule.provenance(),
                    rule: rule.name(),
                    frame_files: self
                        .ds
                        .run_entry_of_cell(cell)
                        .and_then(|r| r.rule.frame_files.clone()),
                }
            })
            .collect();
        let pair = self.pairs(i).get(self.pair).copied();
        let transition = match pair {
            Some(t) => crate::core::sampling::transition(
                &configs[t.lower].frames,
                &configs[t.higher].frames,
            ),
            None => crate::core::sampling::transition(&[], &[]),
        };
        let panel_config = self
            .frame_panel
            .config
            .or(pair.map(|t| t.higher))
            .filter(|&c| c < k);
        let interventions = match mg.grid.top {
            Some(top) => self
                .intervention_cells(i)
                .into_iter()
                .map(|(strategy, cell)| {
                    let m = &self.ds.matrix;
                    let (frames, rule) = crate::core::cell_frames::frames_for_cell(&self.ds, cell);
                    let frames = crate::core::sampling::frame_set(frames);
                    let original = &configs[top].frames;
                    let t = crate::core::sampling::transition(original, &frames);
                    PlannedFrames {
                        label: match strategy {
                            Some(st) => format!("↻{st}"),
                            None => format!("↻{}", m.config(m.cell_config.get(cell as usize)).name),
                        },
                        frames,
                        provenance: rule.provenance(),
                        against: top,
                        restored: t.added,
                        left_out: t.dropped,
                    }
                })
                .collect(),
            None => Vec::new(),
        };
        FrameInfo {
            video: meta.and_then(|m| m.video.clone()),
            num_frames: meta.and_then(|m| m.num_frames),
            fps: meta.and_then(|m| m.fps),
            configs,
            pair,
            transition,
            panel_config,
            interventions,
        }
    }

    /// The frames the panel lists, in time order.
    pub fn panel_list(&self, info: &FrameInfo) -> Vec<PanelEntry> {
        let entry = |config: usize, index: u64| {
            let frames = &info.configs[config].frames;
            PanelEntry {
                index,
                config,
                position: frames.binary_search(&index).unwrap_or(0),
                of: frames.len(),
            }
        };
        match (self.frame_panel.subset, info.pair, info.panel_config) {
            (Subset::Dropped, Some(HarmfulTransition { lower: a, .. }), _) => info
                .transition
                .dropped
                .iter()
                .map(|&x| entry(a, x))
                .collect(),
            (Subset::Added, Some(HarmfulTransition { higher: b, .. }), _) => {
                info.transition.added.iter().map(|&x| entry(b, x)).collect()
            }
            (_, _, Some(c)) => info.configs[c]
                .frames
                .iter()
                .map(|&x| entry(c, x))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The frame under the cursor: (index, grid column).
    pub fn current_frame(&self, info: &FrameInfo) -> Option<(u64, usize)> {
        let list = self.panel_list(info);
        list.get(self.frame_panel.cursor.min(list.len().saturating_sub(1)))
            .map(|e| (e.index, e.config))
    }

    /// The loader key of a panel frame decoded at `max_side` and drawn in a slot of
    /// `slot` cells (width, height): the loader fits it to the slot's pixels. Without a
    /// slot (a prefetch), the frame at its decoded size, which any slot then only fits.
    pub fn frame_key(
        &self,
        info: &FrameInfo,
        e: &PanelEntry,
        max_side: u32,
        slot: Option<(u16, u16)>,
    ) -> Option<crate::core::frames::FrameKey> {
        let font = self.picker.font_size();
        let fit = slot.map(|(w, h)| {
            (
                u32::from(w) * u32::from(font.width),
                u32::from(h) * u32::from(font.height),
            )
        });
        let video = info.video.as_ref()?;
        let saved = info.configs.get(e.config).and_then(|c| {
            let t = c.frame_files.as_deref()?;
            Some(crate::core::frames::saved_frame_path(
                t, video, e.position, e.of,
            ))
        });
        Some(crate::core::frames::FrameKey {
            video: video.to_string(),
            index: e.index,
            position: Some((e.position, e.of)),
            max_side,
            fit,
            saved,
        })
    }

    /// Whether a frame is marked as evidence in the current record.
    pub fn is_evidence(&self, index: u64) -> bool {
        self.current()
            .and_then(|i| self.record(i))
            .is_some_and(|r| r.evidence_frames.contains(&index))
    }

    /// Applies what a draw asked for ([`Drawn`]): the queue's page and click areas, the
    /// frames to load, and drawable forms of the frames that arrived. True when pictures
    /// became drawable, so a draw now would show more.
    pub fn after_draw(&mut self, drawn: Drawn) -> bool {
        if let Some(page) = drawn.page {
            self.page = page;
        }
        self.queue_hit = drawn.queue_hit;
        self.help_bounds = drawn.help;
        if let Some((last, _)) = drawn.help {
            self.help_scroll = self.help_scroll.min(last);
        }
        self.request_frames(drawn.wanted);
        let fitted = !drawn.unfitted.is_empty();
        for slot in drawn.unfitted {
            self.fit(slot);
        }
        fitted
    }

    /// Makes the drawable form of a loaded frame for a slot of cells: the loader fitted it
    /// to the slot already (`FrameKey::fit`), so this only encodes it for the protocol.
    fn fit(&mut self, slot: Slot) {
        // The loader's own copy (an `Arc`), read in place.
        let Some(loaded) = self.loader.as_ref().and_then(|l| l.get(&slot.0)) else {
            return;
        };
        let Ok(img) = loaded.as_ref() else { return };
        let size = ratatui::layout::Size::new(slot.1, slot.2);
        let drawable = self
            .picker
            .new_protocol(
                image::DynamicImage::ImageRgb8(img.clone()),
                size,
                ratatui_image::Resize::Fit(None),
            )
            .map_err(|e| e.to_string());
        self.protocols.put(slot, drawable);
    }

    /// Hands the frames a draw needed to the loader, and prefetches the thumbnails of the
    /// next item of the queue so that moving on does not wait for them.
    fn request_frames(&mut self, wanted: Vec<crate::core::frames::FrameKey>) {
        let Some(loader) = &self.loader else {
            return;
        };
        for key in wanted {
            loader.request(key);
        }
        if self.screen != Screen::Item {
            return;
        }
        let next = self
            .current()
            .and_then(|i| self.visible.iter().position(|&v| v as usize == i))
            .and_then(|p| self.visible.get(p + 1))
            .map(|&v| v as usize);
        if let Some(n) = next {
            let saved = (self.pair, self.frame_panel);
            self.pair = self.opening_pair(n);
            self.frame_panel = FramePanel::default();
            let info = self.frame_info(n);
            let keys: Vec<_> = self
                .panel_list(&info)
                .iter()
                .take(12)
                .filter_map(|e| self.frame_key(&info, e, THUMB_SIDE, None))
                .collect();
            (self.pair, self.frame_panel) = saved;
            if let Some(loader) = &self.loader {
                loader.prefetch(keys);
            }
        }
    }

    /// Moves the frame cursor, or changes what the panel shows.
    fn frame_action(&mut self, action: Action) {
        let Some(i) = self.current() else { return };
        let info = self.frame_info(i);
        let n = self.panel_list(&info).len();
        let fp = &mut self.frame_panel;
        match action {
            Action::FramePrev => fp.cursor = fp.cursor.min(n.saturating_sub(1)).saturating_sub(1),
            Action::FrameNext => fp.cursor = (fp.cursor + 1).min(n.saturating_sub(1)),
            Action::FrameConfig => {
                let k = info.configs.len().max(1);
                fp.config = Some(info.panel_config.map_or(0, |c| (c + 1) % k));
                fp.subset = Subset::All;
                fp.cursor = 0;
            }
            Action::FrameSubset => {
                fp.subset = match fp.subset {
                    Subset::All => Subset::Dropped,
                    Subset::Dropped => Subset::Added,
                    Subset::Added => Subset::All,
                };
                fp.cursor = 0;
            }
            Action::MarkEvidence => {
                if let Some((index, _)) = self.current_frame(&info) {
                    let mut rec = self.working_record(i);
                    match rec.evidence_frames.binary_search(&index) {
                        Ok(p) => {
                            rec.evidence_frames.remove(p);
                        }
                        Err(p) => rec.evidence_frames.insert(p, index),
                    }
                    self.change(i, rec);
                }
            }
            _ => {}
        }
    }

    /// The current record, or a fresh one for the transition under audit.
    fn working_record(&self, i: usize) -> AuditRecord {
        let names = self.config_names(i);
        let HarmfulTransition {
            lower: a,
            higher: b,
        } = self
            .pairs(i)
            .get(self.pair)
            .copied()
            .unwrap_or(HarmfulTransition::new(0, 0));
        let mut rec = self.record(i).cloned().unwrap_or_else(|| AuditRecord {
            key: self.key(i),
            from: String::new(),
            to: String::new(),
            status: Status::Todo,
            pathways: Vec::new(),
            primary: None,
            evidence_frames: Vec::new(),
            note: String::new(),
            at: String::new(),
        });
        rec.from = names[a].clone();
        rec.to = names[b].clone();
        rec
    }

    /// Saves a changed record and refreshes what depends on it.
    fn change(&mut self, i: usize, rec: AuditRecord) {
        self.session.apply(rec, &(self.clock)());
        self.after_change(i);
    }

    /// Review: the unit's record becomes the next annotator's (after the one it equals).
    fn take_annotator(&mut self) {
        let Some(i) = self.current() else { return };
        let Some(records) = self.review.as_ref().and_then(|r| r.records(&self.key(i))) else {
            self.notice = Some(Notice {
                text: "A takes an annotator's record in a review (frameaudit review AUDIT...)"
                    .into(),
                error: false,
            });
            return;
        };
        let mut rec = self.working_record(i);
        let same = |r: &AuditRecord| {
            r.pathways == rec.pathways && r.primary == rec.primary && r.note == rec.note
        };
        let at = records
            .iter()
            .position(|(_, r)| same(r))
            .map_or(0, |p| (p + 1) % records.len());
        let (who, r) = &records[at];
        let keys = self.keymap.hints(
            Context::Item,
            &[
                (&[Action::TakeAnnotator], "", " again: the next annotator's"),
                (&[Action::MarkDone], "", ": done"),
            ],
        );
        let text = format!(
            "took {}'s record ({} of {}); {}",
            sanitize(who),
            at + 1,
            records.len(),
            keys.replace(" · ", ", ")
        );
        rec.pathways.clone_from(&r.pathways);
        rec.primary.clone_from(&r.primary);
        rec.note.clone_from(&r.note);
        rec.evidence_frames.clone_from(&r.evidence_frames);
        self.change(i, rec);
        self.notice = Some(Notice { text, error: false });
    }

    fn after_change(&mut self, i: usize) {
        let note = self.record(i).map_or(String::new(), |r| r.note.clone());
        Arc::make_mut(&mut self.haystacks).set_note(i, &note);
        self.confirm_quit = false;
    }

    /// Counts a status change in the session's decisions: a unit leaving todo is a new
    /// decision, one going back to todo (an undo) takes its decision back; re-marking a
    /// decided unit is none.
    fn count_decision(&mut self, was: Status, now: Status) {
        match (was == Status::Todo, now == Status::Todo) {
            (true, false) => self.marked += 1,
            (false, true) => self.marked = self.marked.saturating_sub(1),
            _ => {}
        }
    }

    fn mark(&mut self, status: Status) {
        let Some(i) = self.current() else { return };
        let was = self.status(i);
        let mut rec = self.working_record(i);
        rec.status = status;
        self.change(i, rec);
        self.count_decision(was, status);
        let again =
            (was == status).then(|| format!("already {}, not counted again", status.as_str()));
        // Move on to the next row of the queue as it stands.
        let pos = self.cursor().unwrap_or(0);
        self.refresh_visible();
        let next = if self.visible.get(pos).copied() == Some(i as u32) {
            pos + 1
        } else {
            pos
        };
        if next < self.visible.len() {
            self.move_to(next);
            self.open();
            if let Some(text) = again {
                self.notice = Some(Notice { text, error: false });
            }
        } else {
            self.screen = Screen::Queue;
            self.notice = Some(Notice {
                text: "end of the queue".into(),
                error: false,
            });
        }
    }

    /// Moves to the next (or previous) row matching the search, wrapping; the queue shows
    /// only matches while a search is on, so this is the next shown row.
    fn next_match(&mut self, forward: bool) {
        let n = self.visible.len();
        let text = if self.query.as_str().trim().is_empty() {
            "no search: / searches".to_string()
        } else if n == 0 {
            "no match".to_string()
        } else {
            let cur = self.cursor().unwrap_or(0);
            let p = if forward {
                (cur + 1) % n
            } else {
                (cur + n - 1) % n
            };
            self.move_to(p);
            format!("match {} of {n}", p + 1)
        };
        self.notice = Some(Notice { text, error: false });
    }

    /// Moves to the next visible row still to do after the current one (wrapping), and
    /// opens it on the item screen.
    fn next_todo(&mut self) {
        let n = self.visible.len();
        let cur = self.cursor();
        let start = cur.map_or(0, |c| c + 1);
        let found = (0..n)
            .map(|d| (start + d) % n)
            .filter(|&p| Some(p) != cur)
            .find(|&p| self.status(self.visible[p] as usize) == Status::Todo);
        match found {
            Some(p) => {
                self.move_to(p);
                if self.screen == Screen::Item {
                    self.open();
                }
            }
            None => {
                self.notice = Some(Notice {
                    text: "no other item to do in this list".into(),
                    error: false,
                });
            }
        }
    }

    /// The distinct values of a row property, in order.
    fn distinct<T: Ord>(&self, f: impl Fn(&Row) -> T) -> Vec<T> {
        self.rows
            .iter()
            .map(f)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    fn cycle<T: Clone + PartialEq>(options: &[T], current: &Option<T>) -> Option<T> {
        match current
            .as_ref()
            .and_then(|c| options.iter().position(|o| o == c))
        {
            None => options.first().cloned(),
            Some(p) if p + 1 < options.len() => Some(options[p + 1].clone()),
            Some(_) => None,
        }
    }

    /// Builds the search request for the current query, narrowing earlier matches when the
    /// query only grew and those matches were complete (a first page of a scan still
    /// running is not all the rows a grown query can match).
    pub fn search_request(&self) -> SearchRequest {
        let within = self.search_result.as_ref().and_then(|r| {
            (r.complete
                && !r.query.is_empty()
                && self.query.as_str().starts_with(&r.query)
                && self.query.as_str() != r.query)
                .then(|| r.matches.clone())
        });
        SearchRequest {
            generation: self.search_generation,
            query: self.query.as_str().to_string(),
            haystacks: self.haystacks.clone(),
            within,
        }
    }

    /// A search result arrived: use it if it answers the current query.
    pub fn on_search_result(&mut self, r: SearchResult) {
        let stale = self.search_result.as_ref().is_some_and(|x| {
            r.generation < x.generation
                || (r.generation == x.generation && x.complete && !r.complete)
        });
        if stale {
            return;
        }
        self.search_result = Some(r);
        self.refresh_visible();
    }

    /// Whether the shown rows are for an older query than the one typed.
    pub fn search_pending(&self) -> bool {
        !self.query.is_empty()
            && self
                .search_result
                .as_ref()
                .is_none_or(|r| r.query != self.query.as_str())
    }

    /// What takes the keys now: an input mode (the help, an editor) over the screen.
    pub fn mode(&self) -> Context {
        if self.help {
            return Context::Help;
        }
        match self.input {
            Input::Search => Context::Search,
            Input::Note(_) => Context::Note,
            Input::None => self.screen.context(),
        }
    }

    /// A key press: through the keymap of the mode, to [`App::update`]. A key the mode does
    /// not bind is typed into the editor, closes the help, or does nothing. An open picker
    /// is a widget of its own and takes every key.
    pub fn on_key(&mut self, e: KeyEvent) -> Vec<Effect> {
        if e.kind != crossterm::event::KeyEventKind::Press {
            return Vec::new();
        }
        if self.pick.is_some() {
            self.pick_key(&e);
            return Vec::new();
        }
        let mode = self.mode();
        match self.keymap.lookup(mode, Key::from_event(&e)) {
            Some(a) => self.update(a),
            None => self.unbound(mode, &e),
        }
    }

    /// Pasted text (the terminal's bracketed paste): text for the focused editor (the
    /// picker's query, the search line, the note), made one line, never keys; with no editor
    /// open it is ignored, and the status line says so.
    pub fn on_paste(&mut self, text: &str) -> Vec<Effect> {
        let (line, cut) = paste_line(text);
        if let Some(pick) = &mut self.pick {
            pick.paste(&line);
        } else {
            match (&mut self.input, self.help) {
                (Input::Search, false) => {
                    self.query.insert_str(&line);
                    let effects = self.new_query();
                    self.paste_cut_notice(cut);
                    return effects;
                }
                (Input::Note(editor), false) => editor.insert_str(&line),
                _ => {
                    let chars = text.chars().count();
                    self.notice = Some(Notice {
                        text: format!(
                            "paste ignored ({chars} character{}): a paste is never taken as keys; paste into a note (n) or the search line (/)",
                            if chars == 1 { "" } else { "s" }
                        ),
                        error: true,
                    });
                    return Vec::new();
                }
            }
        }
        self.paste_cut_notice(cut);
        Vec::new()
    }

    fn paste_cut_notice(&mut self, cut: bool) {
        if cut {
            self.notice = Some(Notice {
                text: format!("paste cut to its first {PASTE_MAX} characters"),
                error: true,
            });
        }
    }

    /// A key the mode does not bind.
    fn unbound(&mut self, mode: Context, e: &KeyEvent) -> Vec<Effect> {
        match mode {
            Context::Help => {
                self.help = false;
                self.help_scroll = 0;
                Vec::new()
            }
            Context::Search => match self.query.handle(e) {
                Edit::Changed => self.new_query(),
                Edit::Moved | Edit::Ignored => Vec::new(),
            },
            Context::Note => {
                if let Input::Note(editor) = &mut self.input {
                    editor.handle(e);
                }
                Vec::new()
            }
            Context::Global | Context::Queue | Context::Item | Context::Research => Vec::new(),
        }
    }

    /// Opens the picker of a filter: the values the queue holds, each with the rows it
    /// would show under the other filters and the search.
    fn open_pick(&mut self, kind: PickKind) {
        let m = &self.ds.matrix;
        let value = |r: &Row| match kind {
            PickKind::Model => r.q.model,
            PickKind::Benchmark => m.item(r.q.item).benchmark,
        };
        let values = self.distinct(value);
        let mut others = self.filter.clone();
        match kind {
            PickKind::Model => others.model = None,
            PickKind::Benchmark => others.benchmark = None,
        }
        let kept = std::mem::replace(&mut self.filter, others);
        let passing = self.passing();
        self.filter = kept;
        let mut counts: rustc_hash::FxHashMap<u32, usize> = Default::default();
        for &i in &passing {
            *counts.entry(value(&self.rows[i as usize])).or_default() += 1;
        }
        let named = values
            .into_iter()
            .map(|v| {
                let name = match kind {
                    PickKind::Model => m.models.name(v),
                    PickKind::Benchmark => m.benchmarks.name(v),
                };
                (
                    v,
                    sanitize(name).into_owned(),
                    counts.get(&v).copied().unwrap_or(0),
                )
            })
            .collect();
        let current = match kind {
            PickKind::Model => self.filter.model,
            PickKind::Benchmark => self.filter.benchmark,
        };
        let mut pick = Pick::new(kind, named, passing.len(), current);
        pick.follow(crate::tui::input::pick::page(self.screen_area(), &pick));
        self.pick = Some(pick);
    }

    /// The whole terminal, as the view draws on it.
    fn screen_area(&self) -> ratatui::layout::Rect {
        ratatui::layout::Rect::new(0, 0, self.term_size.0, self.term_size.1)
    }

    /// A key while a picker is open.
    fn pick_key(&mut self, e: &KeyEvent) {
        let area = self.screen_area();
        let Some(pick) = &mut self.pick else { return };
        let page = crate::tui::input::pick::page(area, pick);
        match pick.key(e, page) {
            Outcome::Open => {}
            Outcome::Cancelled => self.pick = None,
            Outcome::Picked(value) => self.apply_pick(value),
        }
    }

    /// Sets the filter of the open picker to `value` (`None`: any) and closes it.
    fn apply_pick(&mut self, value: Option<u32>) {
        let Some(pick) = self.pick.take() else { return };
        let label = pick
            .entries()
            .iter()
            .find(|e| e.value == value)
            .map_or_else(String::new, |e| e.label.clone());
        match pick.kind {
            PickKind::Model => self.filter.model = value,
            PickKind::Benchmark => self.filter.benchmark = value,
        }
        self.refresh_visible();
        self.notice = Some(Notice {
            text: format!(
                "{}: {label} · {} of {} rows shown",
                pick.kind.noun(),
                self.visible.len(),
                self.rows.len()
            ),
            error: false,
        });
    }

    /// Moves the frame cursor to the next frame of the audited transition that the higher
    /// budget dropped (or added), after the one under the cursor, wrapping. The panel keeps
    /// what it shows when that lists such frames; else it shows the configuration that
    /// sampled them (the lower budget for a dropped frame, the higher for an added one), so
    /// the frames around it are in the strip too.
    fn jump_frame(&mut self, want: Subset) {
        let Some(i) = self.current() else { return };
        let info = self.frame_info(i);
        let what = if want == Subset::Dropped {
            "dropped"
        } else {
            "added"
        };
        let Some(HarmfulTransition {
            lower: a,
            higher: b,
        }) = info.pair
        else {
            self.notice = Some(Notice {
                text: format!("no transition under audit: no {what} frame"),
                error: false,
            });
            return;
        };
        let (lo, hi) = (
            sanitize(&info.configs[a].name),
            sanitize(&info.configs[b].name),
        );
        let (frames, owner) = if want == Subset::Dropped {
            (&info.transition.dropped, a)
        } else {
            (&info.transition.added, b)
        };
        if frames.is_empty() {
            let text = if want == Subset::Dropped {
                format!("no dropped frame: {hi} keeps every frame of {lo}")
            } else {
                format!("no added frame: {hi} samples no frame that {lo} did not")
            };
            self.notice = Some(Notice { text, error: false });
            return;
        }
        let at = self.current_frame(&info).map(|f| f.0);
        let lists = match self.frame_panel.subset {
            Subset::All => info.panel_config == Some(owner),
            s => s == want,
        };
        let next = match at {
            // The frame under the cursor is one of them or among them: the one after it.
            Some(x) if lists => frames.iter().position(|&f| f > x),
            // From another configuration's frame: the first at or after its time.
            Some(x) => frames.iter().position(|&f| f >= x),
            None => Some(0),
        };
        let wrapped = next.is_none();
        let n = next.unwrap_or(0);
        let target = frames[n];
        let count = frames.len();
        if !lists {
            self.frame_panel.config = Some(owner);
            self.frame_panel.subset = Subset::All;
        }
        let info = self.frame_info(i);
        if let Some(p) = self
            .panel_list(&info)
            .iter()
            .position(|e| e.index == target)
        {
            self.frame_panel.cursor = p;
        }
        self.notice = Some(Notice {
            text: format!(
                "{what} frame {} of {count} ({lo} → {hi}): frame {target} · {}{}",
                n + 1,
                crate::core::frames::timestamp(target, info.fps),
                if wrapped {
                    " · from the first again"
                } else {
                    ""
                }
            ),
            error: false,
        });
    }

    /// A mouse event: the wheel moves the queue's selection (the picker's cursor, the
    /// help's lines); a click selects a queue row and a second click on it within
    /// [`DOUBLE_CLICK`] opens it; in a picker a click picks an entry, outside it cancels.
    pub fn on_mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        let wheel: Option<isize> = match m.kind {
            MouseEventKind::ScrollUp => Some(-1),
            MouseEventKind::ScrollDown => Some(1),
            _ => None,
        };
        let click = m.kind == MouseEventKind::Down(MouseButton::Left);
        if wheel.is_none() && !click {
            return Vec::new();
        }
        let area = self.screen_area();
        let at = ratatui::layout::Position::new(m.column, m.row);
        if let Some(pick) = &mut self.pick {
            let page = crate::tui::input::pick::page(area, pick);
            if let Some(d) = wheel {
                pick.step(d, page);
                return Vec::new();
            }
            let list = crate::tui::input::pick::list_area(area, pick);
            if list.contains(at) {
                let pos = pick.scroll + usize::from(at.y - list.y);
                if pos < pick.len() {
                    pick.cursor = pos;
                    let value = pick.selected().and_then(|e| e.value);
                    self.apply_pick(value);
                }
            } else if !crate::tui::input::pick::popup(area, pick).contains(at) {
                self.pick = None;
            }
            return Vec::new();
        }
        if self.help {
            if let Some(d) = wheel {
                let last = self.help_bounds.map_or(usize::MAX, |(last, _)| last);
                self.help_scroll = self
                    .help_scroll
                    .saturating_add_signed(d * WHEEL_STEP as isize)
                    .min(last);
            }
            return Vec::new();
        }
        if self.screen != Screen::Queue || matches!(self.input, Input::Note(_)) {
            return Vec::new();
        }
        self.notice = None;
        if let Some(d) = wheel {
            self.step(d * WHEEL_STEP as isize);
            return Vec::new();
        }
        let Some(hit) = self.queue_hit.filter(|h| h.area.contains(at)) else {
            return Vec::new();
        };
        let pos = hit.first + usize::from(at.y - hit.area.y);
        let Some(&row) = self.visible.get(pos) else {
            return Vec::new();
        };
        let now = Instant::now();
        let again = self
            .last_click
            .is_some_and(|(r, t)| r == row && now.duration_since(t) <= DOUBLE_CLICK);
        self.selected = Some(row);
        self.follow_selection();
        if again {
            self.last_click = None;
            // Opening ends the search line's editing (the query stays, as with Enter).
            self.input = Input::None;
            self.open();
            // Opening notes the visit in the audit file.
            if self.session.has_unsent() {
                return vec![Effect::Save];
            }
        } else {
            self.last_click = Some((row, now));
        }
        Vec::new()
    }

    /// An action while the help is open: the movement actions scroll it (never past its
    /// last page), any other closes it.
    fn help_update(&mut self, action: Action) {
        let (last, page) = self.help_bounds.unwrap_or((usize::MAX, 1));
        self.help_scroll = match action {
            Action::Down => self.help_scroll.saturating_add(1),
            Action::Up => self.help_scroll.saturating_sub(1),
            Action::PageDown => self.help_scroll.saturating_add(page),
            Action::PageUp => self.help_scroll.saturating_sub(page),
            Action::Top => 0,
            Action::Bottom => last,
            _ => {
                self.help = false;
                0
            }
        }
        .min(last);
    }

    /// An action in the search line: accepting keeps the query, cancelling drops it (the
    /// other keys edit it, see `line_edit`).
    fn search_update(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Accept => self.input = Input::None,
            Action::Cancel => {
                self.input = Input::None;
                self.query.clear();
                self.refresh_visible();
            }
            _ => {}
        }
        Vec::new()
    }

    fn new_query(&mut self) -> Vec<Effect> {
        self.search_generation += 1;
        if self.query.is_empty() {
            self.refresh_visible();
            return Vec::new();
        }
        vec![Effect::Search]
    }

    /// An action in the note editor: accepting saves the note, cancelling leaves it as it
    /// was (the other keys edit it, see `line_edit`).
    fn note_update(&mut self, action: Action) {
        let Input::Note(editor) = &self.input else {
            return;
        };
        match action {
            Action::Accept => {
                let note = editor.as_str().to_string();
                self.input = Input::None;
                if let Some(i) = self.current() {
                    let mut rec = self.working_record(i);
                    if rec.note != note {
                        rec.note = note;
                        self.change(i, rec);
                    }
                }
            }
            Action::Cancel => self.input = Input::None,
            _ => {}
        }
    }

    /// The one reducer: applies an action to the mode or screen that has the keys, and
    /// says what the runner must do (a change made asks to be saved).
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let mut effects = match self.mode() {
            Context::Help => {
                self.help_update(action);
                Vec::new()
            }
            Context::Search => self.search_update(action),
            Context::Note => {
                self.note_update(action);
                Vec::new()
            }
            Context::Research | Context::Queue | Context::Item | Context::Global => {
                if action != Action::Quit {
                    self.notice = None;
                }
                if action == Action::GoOnWithThisData {
                    return self.go_on_with_this_data();
                }
                match self.screen {
                    Screen::Research(view) => self.research_update(view, action),
                    Screen::Queue | Screen::Item => self.audit_update(action),
                }
            }
        };
        if self.session.has_unsent() {
            effects.push(Effect::Save);
        }
        effects
    }

    /// An action on the queue or the item screen, and what every screen shares (help,
    /// quit, the researcher views).
    fn audit_update(&mut self, action: Action) -> Vec<Effect> {
        let m = &self.ds.matrix;
        match action {
            Action::Help => {
                self.help = true;
                self.help_scroll = 0;
                // Each screen has its own help: its bounds come with the next draw.
                self.help_bounds = None;
            }
            Action::Overview => return self.open_view(View::Overview),
            Action::ShowView(i) => {
                return self.open_view(View::ALL.get(i).copied().unwrap_or(View::Overview));
            }
            // The researcher views' own, and the editors': nothing here.
            Action::NextView
            | Action::PrevView
            | Action::NextProtocol
            | Action::NextTask
            | Action::NextScope
            | Action::NextModelSet
            | Action::ToggleZeroFrame
            | Action::NextConfigSet
            | Action::NextModel
            | Action::PrevModel
            | Action::Left
            | Action::Right
            | Action::Select
            | Action::Accept
            | Action::Cancel
            | Action::GoOnWithThisData => {}
            Action::Quit => {
                if self.session.unsaved() > 0 && !self.confirm_quit {
                    self.confirm_quit = true;
                    let why = if matches!(
                        self.session.hold(),
                        crate::core::workspace::session::Hold::OtherData { .. }
                    ) {
                        let key = self
                            .keymap
                            .hint(Context::Global, Action::GoOnWithThisData)
                            .unwrap_or_else(|| "W".into());
                        format!("held: the audit file was made on other data, {key} writes them on")
                    } else {
                        self.session
                            .last_error()
                            .unwrap_or_else(|| "still writing".into())
                    };
                    self.notice = Some(Notice {
                        text: format!(
                            "{} change(s) are not saved yet ({why}). Quit anyway? Press quit again to confirm.",
                            self.session.unsaved(),
                        ),
                        error: true,
                    });
                    return Vec::new();
                }
                return vec![Effect::Quit];
            }
            Action::Up => self.step(-1),
            Action::Down => self.step(1),
            Action::PageUp => self.step(-(self.page.max(1) as isize)),
            Action::PageDown => self.step(self.page.max(1) as isize),
            Action::Top => self.move_to(0),
            Action::Bottom => self.move_to(usize::MAX),
            Action::Open => self.open(),
            Action::Back => self.screen = Screen::Queue,
            Action::Search => {
                self.input = Input::Search;
            }
            Action::FilterModel => {
                let models = self.distinct(|r| r.q.model);
                self.filter.model = Self::cycle(&models, &self.filter.model);
                self.refresh_visible();
            }
            Action::FilterBenchmark => {
                let benches = self.distinct(|r| m.item(r.q.item).benchmark);
                self.filter.benchmark = Self::cycle(&benches, &self.filter.benchmark);
                self.refresh_visible();
            }
            Action::PickModel => self.open_pick(PickKind::Model),
            Action::PickBenchmark => self.open_pick(PickKind::Benchmark),
            Action::FilterClass => {
                // Only the classes the queue holds (a queue of harmful items holds no
                // always-right or gaining trajectory), in the views' order, then the
                // open-ended items.
                let mut classes = self.distinct(|r| r.q.class);
                classes.sort_by_key(|c| c.is_none());
                self.filter.class = Self::cycle(&classes, &self.filter.class);
                self.refresh_visible();
            }
            Action::FilterStatus => {
                let all = [Status::Todo, Status::Done, Status::Skipped, Status::Flagged];
                self.filter.status = Self::cycle(&all, &self.filter.status);
                self.refresh_visible();
            }
            Action::FilterTag => {
                let tags: Vec<String> = self
                    .taxonomy
                    .pathways
                    .iter()
                    .map(|p| p.id.clone())
                    .collect();
                self.filter.tag = Self::cycle(&tags, &self.filter.tag);
                self.refresh_visible();
            }
            Action::ToggleTerminal => {
                self.filter.terminal_only = !self.filter.terminal_only;
                self.refresh_visible();
            }
            Action::ClearFilters => {
                self.filter = Filter::default();
                self.query.clear();
                self.refresh_visible();
            }
            Action::CycleSort => {
                self.sort = self.sort.next();
                self.refresh_visible();
            }
            Action::NextTodo => self.next_todo(),
            Action::NextMatch | Action::PrevMatch => self.next_match(action == Action::NextMatch),
            Action::NextItem | Action::PrevItem => {
                self.step(if action == Action::NextItem { 1 } else { -1 });
                self.open();
            }
            Action::NextTransition | Action::PrevTransition => {
                if let Some(i) = self.current() {
                    let n = self.pairs(i).len().max(1);
                    self.frame_panel = FramePanel::default();
                    self.pair = if action == Action::NextTransition {
                        (self.pair + 1) % n
                    } else {
                        (self.pair + n - 1) % n
                    };
                    // The transition examined is part of the record once there is one.
                    if self.record(i).is_some() {
                        let rec = self.working_record(i);
                        self.change(i, rec);
                    }
                }
            }
            Action::TakeAnnotator => self.take_annotator(),
            Action::TogglePathway(p) => {
                if let (Some(i), Some(id)) = (
                    self.current(),
                    self.taxonomy.pathways.get(p).map(|x| x.id.clone()),
                ) {
                    let mut rec = self.working_record(i);
                    if let Some(pos) = rec.pathways.iter().position(|x| *x == id) {
                        rec.pathways.remove(pos);
                        if rec.primary.as_ref() == Some(&id) {
                            rec.primary = rec.pathways.first().cloned();
                        }
                    } else {
                        rec.pathways.push(id.clone());
                        // Keep the taxonomy's order; the first pathway tagged is primary.
                        let order =
                            |x: &String| self.taxonomy.pathways.iter().position(|p| p.id == *x);
                        rec.pathways.sort_by_key(order);
                        rec.primary.get_or_insert(id);
                    }
                    self.change(i, rec);
                }
            }
            Action::CyclePrimary => {
                if let Some(i) = self.current() {
                    let mut rec = self.working_record(i);
                    rec.primary = Self::cycle(&rec.pathways, &rec.primary)
                        .or_else(|| rec.pathways.first().cloned());
                    self.change(i, rec);
                }
            }
            Action::EditNote => {
                if let Some(i) = self.current() {
                    self.input = Input::Note(LineEdit::new(
                        self.record(i).map_or(String::new(), |r| r.note.clone()),
                    ));
                }
            }
            Action::FramePrev
            | Action::FrameNext
            | Action::FrameConfig
            | Action::FrameSubset
            | Action::MarkEvidence => self.frame_action(action),
            Action::AddToPlan => {
                if let Some(i) = self.current() {
                    self.notice = Some(self.add_to_plan(i));
                }
            }
            Action::NextDropped => self.jump_frame(Subset::Dropped),
            Action::NextAdded => self.jump_frame(Subset::Added),
            Action::MarkDone => self.mark(Status::Done),
            Action::Skip => self.mark(Status::Skipped),
            Action::Flag => self.mark(Status::Flagged),
            Action::Undo | Action::Redo => {
                let undo = action == Action::Undo;
                let change = if undo {
                    self.session.undo(&(self.clock)())
                } else {
                    self.session.redo(&(self.clock)())
                };
                let found = change.and_then(|(was, now)| {
                    let i = self.row_of(&now.key)?;
                    Some((i, was, now))
                });
                match found {
                    Some((i, was, now)) => {
                        self.count_decision(was.status, now.status);
                        self.after_change(i);
                        self.selected = Some(i as u32);
                        self.refresh_visible();
                        if self.screen == Screen::Item {
                            self.pair = self.pair_of_record(i);
                            self.session.visit(&self.key(i), &(self.clock)());
                        }
                        let k = &now.key;
                        self.notice = Some(Notice {
                            text: sanitize(&format!(
                                "{} {} · {} · {}: {}",
                                if undo { "undid" } else { "redid" },
                                k.model,
                                k.benchmark,
                                k.item_id,
                                now.changes_since(&was)
                            ))
                            .into_owned(),
                            error: false,
                        });
                    }
                    None => {
                        self.notice = Some(Notice {
                            text: format!(
                                "nothing to {}",
                                if action == Action::Undo {
                                    "undo"
                                } else {
                                    "redo"
                                }
                            ),
                            error: false,
                        });
                    }
                }
            }
        }
        Vec::new()
    }

    /// Progress over the whole queue: (done, skipped, flagged, left). Only audited units
    /// have records, so this walks the records, not the queue.
    pub fn progress(&self) -> (usize, usize, usize, usize) {
        let mut c = (0, 0, 0, 0);
        for (key, rec) in self.session.records() {
            if self.row_of(key).is_none() {
                continue;
            }
            match rec.status {
                Status::Done => c.0 += 1,
                Status::Skipped => c.1 += 1,
                Status::Flagged => c.2 += 1,
                Status::Todo => {}
            }
        }
        c.3 = self.rows.len() - c.0 - c.1 - c.2;
        c
    }

    fn compute_overview(&self) -> Overview {
        let mut models = BTreeSet::new();
        let mut configs = BTreeSet::new();
        // Items may be a million: marked in place rather than kept in a set.
        let mut item_seen = vec![false; self.ds.matrix.items.len()];
        let mut harmful: Option<(f64, f64)> = None;
        let mut headroom: Option<(f64, f64)> = None;
        let widen = |r: &mut Option<(f64, f64)>, x: f64| {
            *r = Some(r.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))));
        };
        for a in self
            .report
            .analyses
            .iter()
            .filter(|a| a.key.protocol == self.protocol)
        {
            for mg in &a.grids.models {
                models.insert(mg.model);
                configs.extend(mg.grid.configs.iter().copied());
                if a.key.scope == crate::core::analysis::grid::Scope::All {
                    continue;
                }
                for &it in mg.grid.items.iter() {
                    item_seen[it as usize] = true;
                }
            }
            if a.key.scope == crate::core::analysis::grid::Scope::All {
                for x in a.metrics.iter() {
                    if let Metrics::Mcq(x) = x {
                        widen(&mut harmful, x.harmful_rate);
                        widen(&mut headroom, x.headroom);
                    }
                }
            }
        }
        Overview {
            models: models.len(),
            configs: configs.len(),
            items: item_seen.iter().filter(|&&x| x).count(),
            harmful,
            headroom,
        }
    }

    /// New decisions per minute in this session (see `marked`).
    pub fn items_per_minute(&self) -> f64 {
        let mins = self.started.elapsed().as_secs_f64() / 60.0;
        if mins < 1.0 / 60.0 {
            0.0
        } else {
            self.marked as f64 / mins
        }
    }
}

/// The first line of an item's question, sanitised (empty without items.jsonl).
fn question_of_item(ds: &Dataset, item: u32) -> String {
    ds.item_meta(item)
        .and_then(|i| i.question.as_deref())
        .map(|s| sanitize(s.lines().next().unwrap_or("")).into_owned())
        .unwrap_or_default()
}

/// The items' part of the search texts: id, and benchmark with the question.
fn item_texts(ds: &Dataset) -> ItemTexts {
    let m = &ds.matrix;
    ItemTexts::new(m.items.iter().enumerate().map(|(i, it)| {
        let question = question_of_item(ds, i as u32);
        let rest = format!("{}{FIELD_SEP}{question}", m.benchmarks.name(it.benchmark));
        (&*it.id, rest)
    }))
}
