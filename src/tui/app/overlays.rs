//! The overlays: what lies over a screen and takes the keys while open (the help, the
//! search line, the note editor, a picker), pasted text, and the status line.

use crossterm::event::KeyEvent;

use crate::tui::input::action::Action;
use crate::tui::input::keymap::Context;
use crate::tui::input::line_edit::Edit;
use crate::tui::input::mouse::WHEEL_STEP;
use crate::tui::input::pick::Pick;

use super::{App, Effect, HelpBounds, Input, Notice};

/// What lies over the screen: the help, an editor, a picker, the status line.
#[derive(Debug, Default)]
pub struct Overlays {
    /// The help is open.
    pub help: bool,
    /// First line of the help shown (the help scrolls; the view stops at its last page).
    pub help_scroll: usize,
    /// A text being typed in (the search line, the note).
    pub input: Input,
    /// An open filter picker (model, benchmark): it takes the keys until closed.
    pub pick: Option<Pick>,
    /// The status line's message.
    pub notice: Option<Notice>,
    /// Asked to quit with unsaved changes: the next quit goes through.
    pub confirm_quit: bool,
}

/// The most characters a paste puts into an editor.
pub const PASTE_MAX: usize = 4096;

/// Pasted text as one line for an editor: line breaks and tabs become spaces, other control
/// characters are dropped, and it is cut to [`PASTE_MAX`] characters (true when it was).
pub fn paste_line(text: &str) -> (String, bool) {
    // A copied line often ends with its line break: it ends the paste, not the text.
    let text = text.trim_end_matches(['\r', '\n']);
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
    /// Pasted text (the terminal's bracketed paste): text for the focused editor (the
    /// picker's query, the search line, the note), made one line, never keys; with no editor
    /// open it is ignored, and the status line says so.
    pub fn on_paste(&mut self, text: &str) -> Vec<Effect> {
        if self.too_small() && !self.editing() {
            return Vec::new();
        }
        let (line, cut) = paste_line(text);
        if let Some(pick) = &mut self.overlays.pick {
            pick.paste(&line);
        } else {
            match (&mut self.overlays.input, self.overlays.help) {
                (Input::Search, false) => {
                    self.queue.query.insert_str(&line);
                    let effects = self.new_query();
                    self.paste_cut_notice(cut);
                    return effects;
                }
                (Input::Note(editor), false) => editor.insert_str(&line),
                _ => {
                    let chars = text.chars().count();
                    self.overlays.notice = Some(Notice {
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

    pub(super) fn paste_cut_notice(&mut self, cut: bool) {
        if cut {
            self.overlays.notice = Some(Notice {
                text: format!("paste cut to its first {PASTE_MAX} characters"),
                error: true,
            });
        }
    }

    /// A key the mode does not bind.
    pub(super) fn unbound(&mut self, mode: Context, e: &KeyEvent) -> Vec<Effect> {
        match mode {
            Context::Help => {
                self.overlays.help = false;
                self.overlays.help_scroll = 0;
                Vec::new()
            }
            Context::Search => match self.queue.query.handle(e) {
                Edit::Changed => self.new_query(),
                Edit::Moved | Edit::Ignored => Vec::new(),
            },
            Context::Note => {
                if let Input::Note(editor) = &mut self.overlays.input {
                    editor.handle(e);
                }
                Vec::new()
            }
            Context::Global | Context::Queue | Context::Item | Context::Research => Vec::new(),
        }
    }

    /// An action while the help is open: the movement actions scroll it (never past its
    /// last page), any other closes it.
    pub(super) fn help_update(&mut self, action: Action) {
        let HelpBounds { last, down, up } = self.geometry.help_bounds.unwrap_or(HelpBounds {
            last: usize::MAX,
            down: 1,
            up: 1,
        });
        self.overlays.help_scroll = match action {
            Action::Down => self.overlays.help_scroll.saturating_add(1),
            Action::Up => self.overlays.help_scroll.saturating_sub(1),
            Action::PageDown => self.overlays.help_scroll.saturating_add(down),
            Action::PageUp => self.overlays.help_scroll.saturating_sub(up),
            Action::Top => 0,
            Action::Bottom => last,
            _ => {
                self.overlays.help = false;
                0
            }
        }
        .min(last);
    }

    /// An action in the search line: accepting keeps the query, cancelling drops it (the
    /// other keys edit it, see `line_edit`).
    pub(super) fn search_update(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Accept => self.overlays.input = Input::None,
            Action::Cancel => {
                self.overlays.input = Input::None;
                self.queue.query.clear();
                self.refresh_visible();
            }
            _ => {}
        }
        Vec::new()
    }

    pub(super) fn new_query(&mut self) -> Vec<Effect> {
        self.queue.search_generation += 1;
        if self.queue.query.is_empty() {
            self.refresh_visible();
            return Vec::new();
        }
        vec![Effect::Search]
    }

    /// An action in the note editor: accepting saves the note, cancelling leaves it as it
    /// was (the other keys edit it, see `line_edit`).
    pub(super) fn note_update(&mut self, action: Action) {
        let Input::Note(editor) = &self.overlays.input else {
            return;
        };
        match action {
            Action::Accept => {
                let note = editor.as_str().to_string();
                self.overlays.input = Input::None;
                if let Some(i) = self.current() {
                    let mut rec = self.working_record(i);
                    if rec.note != note {
                        rec.note = note;
                        self.change(i, rec);
                    }
                }
            }
            Action::Cancel => self.overlays.input = Input::None,
            _ => {}
        }
    }
    /// The wheel over the help scrolls it by [`WHEEL_STEP`] lines, never past its last page.
    pub(super) fn help_wheel(&mut self, d: isize) {
        let last = self.geometry.help_bounds.map_or(usize::MAX, |b| b.last);
        self.overlays.help_scroll = self
            .overlays
            .help_scroll
            .saturating_add_signed(d * WHEEL_STEP as isize)
            .min(last);
    }
}
