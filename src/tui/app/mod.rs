//! The audit screens' state and its one reducer: keys become actions (through the keymap),
//! `App::update` applies them, views only read the state. Nothing here touches the
//! terminal or a file directly; saving goes through the session, searching through
//! requests the runner hands to the search thread.
//!
//! The state is kept in rooms, one per part of the screens, each with its update in a file
//! of its own: the queue (`queue.rs`), the item under audit (`item.rs`), its frames
//! (`frames.rs`), the researcher views (`research.rs`), what lies over a screen (the help,
//! an editor, a picker, the status line: `overlays.rs`), the audit files beside this one
//! and the pace of the session (`audits.rs`), and the geometry the last draw left.

mod ahead;
mod audits;
mod frames;
mod item;
mod outside;
mod overlays;
mod plan;
mod queue;
mod replicates;
mod research;
mod types;

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent};

pub use self::audits::{AuditsState, Pace};
pub use self::frames::{
    ConfigFrames, FrameInfo, FramePanel, FrameState, PanelEntry, PlannedFrames, Subset, frame_info,
    panel_list,
};
pub use self::item::ItemState;
pub use self::outside::FullFrameJob;
pub use self::overlays::{Overlays, PASTE_MAX, paste_line};
pub use self::plan::{PlanRequest, Planner};
pub use self::queue::QueueState;
pub use self::types::*;
use crate::core::analysis::Report;
use crate::core::audit::now_rfc3339;
use crate::core::dataset::Dataset;
use crate::core::shard::Shard;
use crate::core::taxonomy::Taxonomy;
use crate::core::workspace::OtherAudit;
use crate::core::workspace::review::Review;
use crate::core::workspace::session::Session;
use crate::term::ImageMode;
use crate::tui::input::action::Action;
use crate::tui::input::keymap::{Context, Key, Keymap};
use crate::tui::input::mouse::{Pointer, pointer};
use crate::tui::research::{Research, View};

/// What the screens show and where the last draw put things, so that a click finds what it
/// was on and the help stops at its last page.
#[derive(Debug, Clone)]
pub struct Geometry {
    /// Columns and rows of the terminal (the runner keeps it current; the help's scrolling
    /// stops at its last page for this size).
    pub term_size: (u16, u16),
    /// Rows the queue table can show (set by the view from the terminal size).
    pub page: usize,
    /// The help's scrolling, as last drawn (`None` before a draw: then scrolling is not
    /// bounded until the draw that follows).
    pub help_bounds: Option<HelpBounds>,
    /// Where the view last drew the queue's rows (`None` off the queue).
    pub queue_hit: Option<QueueHit>,
    /// The last click on a queue row (visible position's row, when), for double clicks.
    pub last_click: Option<(u32, Instant)>,
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry {
            term_size: (80, 24),
            page: 20,
            help_bounds: None,
            queue_hit: None,
            last_click: None,
        }
    }
}

/// Everything the audit screens start from: the data and the annotator's session, and what
/// the command line chose. [`App::from_config`] builds the app whole from it.
pub struct AppConfig {
    /// The dataset (shared with the background workers).
    pub ds: Arc<Dataset>,
    /// Its analyses, for the queue and the figures.
    pub report: Report,
    /// The protocol audited.
    pub protocol: u32,
    /// The pathways an annotator tags.
    pub taxonomy: Taxonomy,
    /// Keys to actions.
    pub keymap: Keymap,
    /// The annotator's session over their audit file.
    pub session: Session,
    /// The disagreements under review (`frameaudit review`): the queue holds only them.
    pub review: Option<Review>,
    /// The shard of the queue this session holds.
    pub shard: Option<Shard>,
    /// `NO_COLOR` is set.
    pub no_color: bool,
    /// How frames are drawn.
    pub images: ImageMode,
    /// The analysis options the researcher views recompute with (`None`: the report's, with
    /// intervals and the cascade sweep).
    pub research_params: Option<crate::core::analysis::params::Params>,
    /// The dataset's other audit files.
    pub other_audits: Vec<OtherAudit>,
    /// The intervention plan "add to plan" writes.
    pub plan_path: std::path::PathBuf,
    /// The cells' fingerprint while it is computed (the session compares its file's).
    pub fingerprint: Option<Arc<OnceLock<String>>>,
    /// The audit file was named with `--audit`.
    pub audit_given: bool,
    /// What the status line says first (the load's warnings).
    pub notices: Vec<String>,
}

impl AppConfig {
    /// The data and session alone, everything else as when nothing is given: frames as
    /// text, colours on, no review, shard or other audits.
    pub fn new(
        ds: impl Into<Arc<Dataset>>,
        report: Report,
        protocol: u32,
        taxonomy: Taxonomy,
        keymap: Keymap,
        session: Session,
    ) -> AppConfig {
        AppConfig {
            ds: ds.into(),
            report,
            protocol,
            taxonomy,
            keymap,
            session,
            review: None,
            shard: None,
            no_color: false,
            images: ImageMode::None,
            research_params: None,
            other_audits: Vec::new(),
            plan_path: std::path::PathBuf::from("frameaudit.plan.json"),
            fingerprint: None,
            audit_given: false,
            notices: Vec::new(),
        }
    }
}

/// The state of the audit screens, room by room.
pub struct App {
    /// Shared with the research worker, which recomputes views from it.
    pub ds: Arc<Dataset>,
    /// The analyses the queue and the header come from (shared with the plan worker).
    pub report: Arc<Report>,
    /// The protocol audited.
    pub protocol: u32,
    /// The pathways an annotator tags.
    pub taxonomy: Taxonomy,
    /// Keys to actions, per mode.
    pub keymap: Keymap,
    /// The annotator's records and their saving.
    pub session: Session,
    /// The screen shown under any overlay.
    pub screen: Screen,
    /// The queue: its rows, filters, search, sort and selection.
    pub queue: QueueState,
    /// The item under audit: its transition and frame panel.
    pub item: ItemState,
    /// How frames are decoded and drawn.
    pub frames: FrameState,
    /// The researcher views.
    pub research: Research,
    /// What lies over the screen: the help, an editor, a picker, the status line.
    pub overlays: Overlays,
    /// Where the last draw put things.
    pub geometry: Geometry,
    /// The audit files beside this one, the plan, the fingerprint's comparison.
    pub audits: AuditsState,
    /// The pace of this session (decisions per minute).
    pub pace: Pace,
    /// What the header says of the analysis (computed once).
    pub overview: Overview,
    /// `NO_COLOR` is set: the view strips every colour, so markers and glyphs tell all.
    pub no_color: bool,
    /// The time of a change, as the audit file writes it (RFC 3339): the wall clock, or a
    /// fixed one in tests.
    pub clock: fn() -> String,
}

impl App {
    /// Builds the app over a dataset and its report, for the audit queue of `protocol`,
    /// with nothing else given (see [`AppConfig::new`]).
    pub fn new(
        ds: impl Into<Arc<Dataset>>,
        report: Report,
        protocol: u32,
        taxonomy: Taxonomy,
        keymap: Keymap,
        session: Session,
    ) -> App {
        App::from_config(AppConfig::new(
            ds, report, protocol, taxonomy, keymap, session,
        ))
    }

    /// Builds the app whole from its configuration: the queue (restricted to the review's
    /// disagreements or the shard), its search texts, where a resumed session starts.
    pub fn from_config(c: AppConfig) -> App {
        let research_params =
            c.research_params
                .clone()
                .unwrap_or_else(|| crate::core::analysis::params::Params {
                    bootstrap_b: 1000,
                    sweep: true,
                    cascade_stages: None,
                    ..c.report.params.clone()
                });
        let queue = QueueState::new(&c.ds, &c.report, c.protocol);
        let mut app = App {
            ds: c.ds,
            report: Arc::new(c.report),
            protocol: c.protocol,
            taxonomy: c.taxonomy,
            keymap: c.keymap,
            session: c.session,
            screen: Screen::Queue,
            queue,
            item: ItemState::default(),
            frames: FrameState::new(),
            research: Research::new(research_params),
            overlays: Overlays::default(),
            geometry: Geometry::default(),
            audits: AuditsState {
                review: None,
                other_audits: c.other_audits,
                findings_source: 0,
                plan_path: c.plan_path,
                plan_requests: Vec::new(),
                fingerprint: c.fingerprint,
                audit_given: c.audit_given,
            },
            pace: Pace {
                started: Instant::now(),
                marked: 0,
            },
            overview: Overview::default(),
            no_color: c.no_color,
            clock: now_rfc3339,
        };
        app.set_images(c.images);
        app.index_units();
        app.list_recorded_pairs();
        app.index_rows();
        if let Some(review) = c.review {
            app.restrict_to_review(review);
        }
        if let Some(shard) = c.shard {
            app.restrict(shard.label(), |k| {
                shard.holds(&k.model, &k.benchmark, &k.item_id)
            });
        }
        if !c.notices.is_empty() {
            let text = c.notices.join(" · ");
            app.overlays.notice = Some(match app.overlays.notice.take() {
                Some(n) => Notice {
                    text: format!("{} · {text}", n.text),
                    error: true,
                },
                None => Notice { text, error: true },
            });
        }
        app
    }

    /// What takes the keys now: an input mode (the help, an editor) over the screen.
    pub fn mode(&self) -> Context {
        if self.overlays.help {
            return Context::Help;
        }
        match self.overlays.input {
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
        if self.too_small() && !self.editing() {
            // Nothing is on screen but the way out: no key acts on what cannot be seen. An
            // open editor keeps its keys (a note being typed is neither lost nor quit by
            // its letters when a pane shrinks), and the screen says how to leave it.
            let key = Key::from_event(&e);
            let quits = [Context::Queue, Context::Global]
                .iter()
                .any(|&c| self.keymap.lookup(c, key) == Some(Action::Quit));
            return if quits { self.quit() } else { Vec::new() };
        }
        // The global quit (C-c) quits from an editor too, keeping the note being typed; a
        // letter bound globally stays a letter there.
        let key = Key::from_event(&e);
        if self.editing()
            && e.modifiers
                .contains(crossterm::event::KeyModifiers::CONTROL)
            && self.keymap.lookup(Context::Global, key) == Some(Action::Quit)
        {
            return self.stop();
        }
        if self.overlays.pick.is_some() {
            self.pick_key(&e);
            return Vec::new();
        }
        let mode = self.mode();
        match self.keymap.lookup(mode, Key::from_event(&e)) {
            Some(a) => self.update(a),
            None => self.unbound(mode, &e),
        }
    }

    /// A mouse event (`input::mouse`): the wheel moves the queue's selection (the picker's
    /// cursor, the help's lines); a click selects a queue row and a second click on it
    /// within [`crate::tui::input::mouse::DOUBLE_CLICK`] opens it; in a picker a click picks
    /// an entry, outside it cancels.
    pub fn on_mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        let Some(p) = pointer(&m).filter(|_| !self.too_small()) else {
            return Vec::new();
        };
        if self.overlays.pick.is_some() {
            self.pick_pointer(p);
            return Vec::new();
        }
        if self.overlays.help {
            if let Pointer::Wheel(d) = p {
                self.help_wheel(d);
            }
            return Vec::new();
        }
        if self.screen != Screen::Queue || matches!(self.overlays.input, Input::Note(_)) {
            return Vec::new();
        }
        self.overlays.notice = None;
        self.queue_pointer(p)
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
                // The help shows the message in full (it may not fit its line).
                if action != Action::Quit && action != Action::Help {
                    self.overlays.notice = None;
                }
                match self.shared_update(action) {
                    Some(effects) => effects,
                    None => match self.screen {
                        Screen::Research(view) => self.research_update(view, action),
                        Screen::Queue | Screen::Item => self.audit_update(action),
                    },
                }
            }
        };
        if self.session.has_unsent() {
            effects.push(Effect::Save);
        }
        effects
    }

    /// What every screen shares: the help, quitting, going on with an audit of other data,
    /// and opening the researcher views from the audit screens. `None` for anything else.
    fn shared_update(&mut self, action: Action) -> Option<Vec<Effect>> {
        match action {
            Action::GoOnWithThisData => Some(self.go_on_with_this_data()),
            Action::Quit => Some(self.quit()),
            Action::Help => {
                self.overlays.help = true;
                self.overlays.help_scroll = 0;
                // Each screen has its own help: its bounds come with the next draw.
                self.geometry.help_bounds = None;
                Some(Vec::new())
            }
            Action::Overview => Some(self.open_view(View::Overview)),
            Action::ShowView(i) => Some(match View::ALL.get(i) {
                Some(&v) => self.open_view(v),
                None => Vec::new(),
            }),
            _ => None,
        }
    }

    /// An action of the queue or the item screen (also what a researcher view leaves to
    /// them, as going back).
    fn audit_update(&mut self, action: Action) -> Vec<Effect> {
        match self.queue_update(action) {
            Some(effects) => effects,
            None => self.item_update(action),
        }
    }

    /// Whether an editor is open (the note, the search line, a picker): it takes the keys.
    pub fn editing(&self) -> bool {
        !matches!(self.overlays.input, Input::None) || self.overlays.pick.is_some()
    }

    /// Whether the terminal is below the least size, where only the way out is drawn.
    pub fn too_small(&self) -> bool {
        let (w, h) = self.geometry.term_size;
        below_least_size(w, h)
    }

    /// Leaving without asking (a signal, or C-c in an editor): a note being typed is kept,
    /// as Enter would keep it, and everything pending is handed to the saver, which the
    /// runner waits for before the terminal is given back.
    pub fn stop(&mut self) -> Vec<Effect> {
        if matches!(self.overlays.input, Input::Note(_)) {
            self.note_update(Action::Accept);
        }
        self.overlays.input = Input::None;
        self.overlays.pick = None;
        vec![Effect::Save, Effect::Quit]
    }

    /// Quitting, which asks first when changes are not saved yet (written, or held: an
    /// audit of other data).
    fn quit(&mut self) -> Vec<Effect> {
        if self.session.unsaved() == 0 {
            return vec![Effect::Quit];
        }
        let held = matches!(
            self.session.hold(),
            crate::core::workspace::session::Hold::OtherData { .. }
        );
        if self.overlays.confirm_quit {
            // Said at once: the screens close only after a last try to write, which can
            // take seconds, and the question still on screen asks for the key again.
            self.overlays.notice = Some(Notice {
                text: if held {
                    format!(
                        "quitting: {} held, not written",
                        self.session.unsaved_said()
                    )
                } else {
                    format!(
                        "quitting: a last try to save {}…",
                        self.session.unsaved_said()
                    )
                },
                error: true,
            });
            return vec![Effect::Quit];
        }
        self.overlays.confirm_quit = true;
        let why = if held {
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
        self.overlays.notice = Some(Notice {
            // The way out first: a narrow status line cuts the reason, not the key.
            text: format!(
                "Quit anyway? {} again quits: {} not saved yet ({why})",
                self.keymap
                    .hint(self.screen.context(), Action::Quit)
                    .unwrap_or_else(|| "quit".into()),
                self.session.unsaved_said(),
            ),
            error: true,
        });
        Vec::new()
    }
}
