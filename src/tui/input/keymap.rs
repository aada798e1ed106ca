//! Keys as data: every binding has a context, an action and a description. The help
//! overlay and the footer are generated from this table, and a user keymap file can
//! replace any binding.

use std::path::Path;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::core::diag::{Diagnostics, LoadError};
use crate::core::load::json::{describe_json_error, error_place, json_error_text, start_of};
use crate::core::taxonomy::Taxonomy;
use crate::tui::input::action::Action;

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Everywhere (unless a more specific binding of the screen takes the key).
    Global,
    /// The audit queue.
    Queue,
    /// The item screen.
    Item,
    /// The researcher views.
    Research,
    /// Input mode: the help is open (a key bound nowhere here closes it).
    Help,
    /// Input mode: the search line takes the keys (a key bound nowhere here edits it).
    Search,
    /// Input mode: the note editor takes the keys (a key bound nowhere here edits it).
    Note,
}

impl Context {
    const ALL: [Context; 7] = [
        Context::Global,
        Context::Queue,
        Context::Item,
        Context::Research,
        Context::Help,
        Context::Search,
        Context::Note,
    ];

    /// The name keymap files give the context.
    pub fn as_str(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Queue => "queue",
            Context::Item => "item",
            Context::Research => "research",
            Context::Help => "help",
            Context::Search => "search",
            Context::Note => "note",
        }
    }

    /// An input mode over a screen: the global keys do not apply (a `?` typed in a note
    /// is a question mark).
    pub fn is_mode(self) -> bool {
        matches!(self, Context::Help | Context::Search | Context::Note)
    }

    fn parse(s: &str) -> Option<Context> {
        Context::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// A key with its modifiers (Shift is folded into the character for printable keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Whether Ctrl is held.
    pub ctrl: bool,
    /// Whether Alt is held.
    pub alt: bool,
}

impl Key {
    /// A character key.
    pub fn char(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: false,
            alt: false,
        }
    }

    /// A named key (an arrow, Enter, Tab...).
    pub fn code(code: KeyCode) -> Key {
        Key {
            code,
            ctrl: false,
            alt: false,
        }
    }

    /// A character key with Ctrl.
    pub fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: true,
            alt: false,
        }
    }

    /// The key of a terminal event (Shift is in the character).
    pub fn from_event(e: &KeyEvent) -> Key {
        Key {
            code: e.code,
            ctrl: e.modifiers.contains(KeyModifiers::CONTROL),
            alt: e.modifiers.contains(KeyModifiers::ALT),
        }
    }

    /// Parses "j", "Enter", "Ctrl-r", "Alt-x", "PageDown", "Space", "Esc", "?", "F1"...
    pub fn parse(s: &str) -> Option<Key> {
        let (mut ctrl, mut alt, mut rest) = (false, false, s);
        loop {
            if let Some(r) = rest
                .strip_prefix("Ctrl-")
                .or_else(|| rest.strip_prefix("C-"))
            {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest
                .strip_prefix("Alt-")
                .or_else(|| rest.strip_prefix("M-"))
            {
                alt = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = match rest {
            "Enter" => KeyCode::Enter,
            "Esc" => KeyCode::Esc,
            "Space" => KeyCode::Char(' '),
            "Tab" => KeyCode::Tab,
            "BackTab" => KeyCode::BackTab,
            "Backspace" => KeyCode::Backspace,
            "Up" => KeyCode::Up,
            "Down" => KeyCode::Down,
            "Left" => KeyCode::Left,
            "Right" => KeyCode::Right,
            "PageUp" => KeyCode::PageUp,
            "PageDown" => KeyCode::PageDown,
            "Home" => KeyCode::Home,
            "End" => KeyCode::End,
            f if f.starts_with('F') && f.len() > 1 => KeyCode::F(f[1..].parse().ok()?),
            c if c.chars().count() == 1 => KeyCode::Char(c.chars().next()?),
            _ => return None,
        };
        Some(Key { code, ctrl, alt })
    }

    /// How the key is written in help and footer.
    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Enter => "Enter".to_string(),
            KeyCode::Esc => "Esc".to_string(),
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Tab => "Tab".to_string(),
            KeyCode::BackTab => "S-Tab".to_string(),
            KeyCode::Backspace => "Bksp".to_string(),
            KeyCode::Up => "↑".to_string(),
            KeyCode::Down => "↓".to_string(),
            KeyCode::Left => "←".to_string(),
            KeyCode::Right => "→".to_string(),
            KeyCode::PageUp => "PgUp".to_string(),
            KeyCode::PageDown => "PgDn".to_string(),
            KeyCode::Home => "Home".to_string(),
            KeyCode::End => "End".to_string(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::Char(c) => c.to_string(),
            _ => "?".to_string(),
        };
        match (self.ctrl, self.alt) {
            (true, _) => format!("C-{base}"),
            (_, true) => format!("M-{base}"),
            _ => base,
        }
    }
}

/// What an action does in a context, for the help overlay: the action's own description
/// (written once, in action.rs), except where a screen gives the action another meaning.
fn describe(context: Context, action: Action) -> &'static str {
    match (context, action) {
        (Context::Research, Action::Up) => "cursor up (part of a bar, cell, threshold +0.10)",
        (Context::Research, Action::Down) => "cursor down",
        (Context::Search, Action::Accept) => "keep the search and leave the line",
        (Context::Search, Action::Cancel) => "clear the search",
        (Context::Note, Action::Accept) => "save the note",
        (Context::Note, Action::Cancel) => "leave the note as it was",
        (Context::Help, Action::Up) => "scroll up a line",
        (Context::Help, Action::Down) => "scroll down a line",
        (Context::Help, Action::Top) => "first line",
        (Context::Help, Action::Bottom) => "last line",
        _ => action.describe(),
    }
}

/// One binding.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// Where the binding holds.
    pub context: Context,
    /// The key.
    pub key: Key,
    /// What it asks for.
    pub action: Action,
    /// What it does, for the help.
    pub desc: String,
    /// A short label when the footer shows it (the help overlay shows every binding).
    pub footer: Option<String>,
}

/// The bindings in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    /// Every binding, the first of a context and key winning.
    pub bindings: Vec<Binding>,
}

impl Keymap {
    /// The defaults, with the taxonomy's keys toggling its pathways on the item screen.
    pub fn default_for(taxonomy: &Taxonomy) -> Keymap {
        use Action::*;
        use Context::{
            Global, Help as HelpMode, Item, Note, Queue, Research, Search as SearchMode,
        };
        let b = |context, key: Key, action, footer: Option<&str>| Binding {
            context,
            key,
            action,
            desc: describe(context, action).to_string(),
            footer: footer.map(str::to_owned),
        };
        let described = |context, key: Key, action, desc: String| Binding {
            context,
            key,
            action,
            desc,
            footer: None,
        };
        let (ch, code, ctrl) = (Key::char, Key::code, Key::ctrl);
        #[rustfmt::skip]
        let mut v = vec![
            b(Global, ch('?'), Help, Some("help")),
            b(Global, ctrl('c'), Quit, None),
            b(Global, ch('W'), GoOnWithThisData, None),
            b(Queue, ch('j'), Down, None),
            b(Queue, code(KeyCode::Down), Down, None),
            b(Queue, ch('k'), Up, None),
            b(Queue, code(KeyCode::Up), Up, None),
            b(Queue, code(KeyCode::PageDown), PageDown, None),
            b(Queue, code(KeyCode::PageUp), PageUp, None),
            b(Queue, ch('g'), Top, None),
            b(Queue, ch('G'), Bottom, None),
            b(Queue, code(KeyCode::Enter), Open, Some("open")),
            b(Queue, ch('/'), Search, Some("search")),
            b(Queue, ch('n'), NextMatch, None),
            b(Queue, ch('N'), PrevMatch, None),
            b(Queue, ch('M'), PickModel, Some("model")),
            b(Queue, ch('m'), FilterModel, None),
            b(Queue, ch('B'), PickBenchmark, None),
            b(Queue, ch('b'), FilterBenchmark, None),
            b(Queue, ch('c'), FilterClass, None),
            b(Queue, ch('a'), FilterStatus, None),
            b(Item, ch('A'), TakeAnnotator, None),
            b(Queue, ch('p'), FilterTag, None),
            b(Queue, ch('t'), ToggleTerminal, Some("terminal")),
            b(Queue, ch('L'), HideLottery, None),
            b(Queue, ch('S'), SortStable, None),
            b(Queue, ch('x'), ClearFilters, None),
            b(Queue, ch('o'), CycleSort, Some("sort")),
            // The last mark of the queue leaves the item screen: it can be taken back here.
            b(Queue, ch('u'), Undo, None),
            b(Queue, ctrl('r'), Redo, None),
            b(Queue, ch('q'), Quit, Some("quit")),
            b(Queue, code(KeyCode::Tab), NextTodo, None),
            b(Queue, code(KeyCode::Esc), ClearFilters, None),
            b(Item, ch('j'), NextItem, None),
            b(Item, code(KeyCode::Down), NextItem, None),
            b(Item, ch('k'), PrevItem, None),
            b(Item, code(KeyCode::Up), PrevItem, None),
            b(Item, code(KeyCode::Tab), NextTodo, None),
            b(Item, ch(']'), NextTransition, Some("transition")),
            b(Item, ch('['), PrevTransition, None),
            b(Item, ch('h'), FramePrev, None),
            b(Item, code(KeyCode::Left), FramePrev, None),
            b(Item, ch('l'), FrameNext, None),
            b(Item, code(KeyCode::Right), FrameNext, Some("frames")),
            b(Item, ch('c'), FrameConfig, None),
            b(Item, ch('v'), FrameSubset, None),
            b(Item, ch('d'), NextDropped, None),
            b(Item, ch('a'), NextAdded, None),
            b(Item, ch('e'), MarkEvidence, Some("evidence")),
            b(Item, ch('f'), FullFrame, None),
            b(Item, ch('p'), PlayerCommand, None),
            b(Item, ch('I'), AddToPlan, None),
            described(Item, ch('/'), Search, "search the queue (back to it)".into()),
            b(Item, ch('P'), CyclePrimary, Some("primary")),
            b(Item, ch('n'), EditNote, Some("note")),
            b(Item, ch(' '), MarkDone, Some("done")),
            b(Item, ch('s'), Skip, Some("skip")),
            b(Item, ch('!'), Flag, Some("flag")),
            b(Item, ch('u'), Undo, Some("undo")),
            b(Item, ctrl('r'), Redo, None),
            b(Item, ch('q'), Back, Some("back")),
            b(Item, code(KeyCode::Esc), Back, None),
            b(Global, ch('O'), Overview, None),
            b(Queue, ch('O'), Overview, Some("overview")),
            b(Research, code(KeyCode::Tab), NextView, Some("view")),
            b(Research, code(KeyCode::BackTab), PrevView, None),
            b(Research, ch('P'), NextProtocol, None),
            b(Research, ch('T'), NextTask, None),
            b(Research, ch('b'), NextScope, Some("scope")),
            b(Research, ch('M'), NextModelSet, None),
            b(Research, ch('z'), ToggleZeroFrame, None),
            b(Research, ch('C'), NextConfigSet, None),
            b(Research, ch('m'), NextModel, Some("model")),
            b(Research, ch('n'), PrevModel, None),
            b(Research, ch('h'), Left, None),
            b(Research, code(KeyCode::Left), Left, Some("move")),
            b(Research, ch('l'), Right, None),
            b(Research, code(KeyCode::Right), Right, None),
            b(Research, ch('k'), Up, None),
            b(Research, code(KeyCode::Up), Up, None),
            b(Research, ch('j'), Down, None),
            b(Research, code(KeyCode::Down), Down, None),
            b(Research, code(KeyCode::Enter), Select, Some("items")),
            b(Research, ch('q'), Back, Some("back")),
            b(Research, code(KeyCode::Esc), Back, None),
            b(SearchMode, code(KeyCode::Enter), Accept, Some("keep")),
            b(SearchMode, code(KeyCode::Esc), Cancel, Some("clear")),
            b(Note, code(KeyCode::Enter), Accept, Some("save")),
            b(Note, code(KeyCode::Esc), Cancel, Some("cancel")),
            b(HelpMode, ch('j'), Down, None),
            b(HelpMode, code(KeyCode::Down), Down, None),
            b(HelpMode, ch('k'), Up, None),
            b(HelpMode, code(KeyCode::Up), Up, None),
            b(HelpMode, code(KeyCode::PageDown), PageDown, None),
            b(HelpMode, ch(' '), PageDown, None),
            b(HelpMode, code(KeyCode::PageUp), PageUp, None),
            b(HelpMode, code(KeyCode::Home), Top, None),
            b(HelpMode, ch('g'), Top, None),
            b(HelpMode, code(KeyCode::End), Bottom, None),
            b(HelpMode, ch('G'), Bottom, None),
        ];
        for (i, view) in crate::tui::research::View::ALL.iter().enumerate() {
            let desc = format!("researcher view: {}", view.title());
            let key = char::from(b'1' + i as u8);
            v.push(described(Research, ch(key), ShowView(i), desc));
        }
        for (i, p) in taxonomy.pathways.iter().enumerate() {
            if let Some(c) = p.key.chars().next() {
                let desc = format!("toggle pathway: {}", p.label);
                v.push(described(Item, ch(c), TogglePathway(i), desc));
            }
        }
        Keymap { bindings: v }
    }

    /// The action a key triggers in a context (the screen's bindings before global ones;
    /// an input mode has its own only).
    /// The taxonomy's pathways the item screen could not toggle by their keys, each said
    /// in a sentence: a key bound on the item screen to another action comes first and
    /// shadows the pathway; a key bound on every screen (help, quit) would be shadowed by
    /// it. Empty when every pathway key toggles its pathway and takes no other key away.
    pub fn pathway_conflicts(&self, taxonomy: &Taxonomy) -> Vec<String> {
        let mut out = Vec::new();
        for (i, p) in taxonomy.pathways.iter().enumerate() {
            // The keys that toggle the pathway as bound (a keymap file may have moved it
            // off the taxonomy's key, or unbound it: then there is nothing to clash).
            let toggles: Vec<&Binding> = self
                .bindings
                .iter()
                .filter(|b| b.context == Context::Item && b.action == Action::TogglePathway(i))
                .collect();
            // Its key taken for another action, and no other key given it.
            if toggles.is_empty()
                && let Some(c) = p.key.chars().next()
                && let Some(b) = self
                    .bindings
                    .iter()
                    .find(|b| b.context == Context::Item && b.key == Key::char(c))
            {
                out.push(format!(
                    "pathway {:?} has the key {:?}, which the item screen binds to \"{}\", and no other key toggles the pathway",
                    p.id, p.key, b.desc
                ));
            }
            for t in toggles {
                let first_item = self
                    .bindings
                    .iter()
                    .find(|b| b.context == Context::Item && b.key == t.key);
                let global = self
                    .bindings
                    .iter()
                    .find(|b| b.context == Context::Global && b.key == t.key);
                if let Some(b) = first_item.filter(|b| b.action != t.action) {
                    out.push(format!(
                        "pathway {:?} has the key {:?}, which the item screen binds to \"{}\", so the key never toggles the pathway",
                        p.id,
                        t.key.label(),
                        b.desc
                    ));
                } else if let Some(b) = global {
                    out.push(format!(
                        "pathway {:?} has the key {:?}, which every screen binds to \"{}\", so the item screen could not do that",
                        p.id,
                        t.key.label(),
                        b.desc
                    ));
                }
            }
        }
        out
    }

    /// The action `key` asks for in `context` (else globally, off the input modes).
    pub fn lookup(&self, context: Context, key: Key) -> Option<Action> {
        let find = |ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == ctx && b.key == key)
                .map(|b| b.action)
        };
        find(context).or_else(|| (!context.is_mode()).then(|| find(Context::Global))?)
    }

    /// The footer entries of an input mode, (key, label), in the order of its bindings.
    pub fn mode_footer(&self, context: Context) -> Vec<(String, String)> {
        self.bindings
            .iter()
            .filter(|b| b.context == context)
            .filter_map(|b| Some((b.key.label(), b.footer.clone()?)))
            .collect()
    }

    /// How a screen names the key of `action` in `context` (or, failing that, globally): a
    /// named key (arrow, Enter, Tab) before a letter, since hints show the keys everyone
    /// knows and letters are their vi aliases. `None` when the user left it unbound.
    pub fn hint(&self, context: Context, action: Action) -> Option<String> {
        let bound = |ctx| {
            self.bindings
                .iter()
                .filter(move |b| b.context == ctx && b.action == action)
                .min_by_key(|b| matches!(b.key.code, KeyCode::Char(_)))
        };
        let global = || bound(Context::Global).filter(|g| !self.taken(context, g.key));
        bound(context)
            .or_else(|| (!context.is_mode()).then(global)?)
            .map(|b| b.key.label())
    }

    /// Whether `context` binds `key` itself: a global binding of the key does not reach
    /// its action there.
    fn taken(&self, context: Context, key: Key) -> bool {
        self.bindings
            .iter()
            .any(|b| b.context == context && b.key == key)
    }

    /// The key that toggles pathway `i` on the item screen, as the keymap binds it (a
    /// keymap file may move it off the taxonomy's key); `None` when none does.
    pub fn pathway_key(&self, i: usize) -> Option<String> {
        self.hint(Context::Item, Action::TogglePathway(i))
    }

    /// A hint such as "←→ column": the keys of `actions` joined by `join`, then `text`;
    /// `None` when one of them is unbound, since a hint naming a dead key would mislead.
    pub fn hint_for(
        &self,
        context: Context,
        actions: &[Action],
        join: &str,
        text: &str,
    ) -> Option<String> {
        let keys = actions
            .iter()
            .map(|&a| self.hint(context, a))
            .collect::<Option<Vec<String>>>()?;
        // Arrows read together (`←→`); letters run together would read as a word (`ad`).
        let join = if join.is_empty() && keys.iter().any(|k| k.chars().any(char::is_alphanumeric)) {
            "/"
        } else {
            join
        };
        Some(format!("{}{text}", keys.join(join)))
    }

    /// The hints of `parts` whose keys are all bound.
    pub fn hint_list(&self, context: Context, parts: &[(&[Action], &str, &str)]) -> Vec<String> {
        parts
            .iter()
            .filter_map(|(actions, join, text)| self.hint_for(context, actions, join, text))
            .collect()
    }

    /// `hint_list` joined by " · ".
    pub fn hints(&self, context: Context, parts: &[(&[Action], &str, &str)]) -> String {
        self.hint_list(context, parts).join(" · ")
    }

    /// Bindings of a context and the global ones, for the help overlay.
    pub fn for_context(&self, context: Context) -> impl Iterator<Item = &Binding> {
        // A global key the screen takes for itself is not listed: it does not reach the
        // global action there.
        self.bindings.iter().filter(move |b| {
            b.context == context
                || (b.context == Context::Global
                    && !context.is_mode()
                    && !self.taken(context, b.key))
        })
    }

    /// A footer entry follows its action to the key the user moved it to: when no binding of
    /// the action in that context is in the footer any more, its first one takes the label.
    fn keep_footer_labels(&mut self, footers: Vec<(Context, Action, String)>) {
        for (context, action, label) in footers {
            let mut of_action = self
                .bindings
                .iter_mut()
                .filter(|b| b.context == context && b.action == action);
            if let Some(first) = of_action.next()
                && first.footer.is_none()
                && of_action.all(|b| b.footer.is_none())
            {
                first.footer = Some(label);
            }
        }
    }

    /// Applies a user keymap file: `{"bindings": [{"context": "item", "key": "d",
    /// "action": "mark_done"}, ...]}`. A binding replaces whatever the key did in that
    /// context; `"action": "none"` unbinds the key. Every problem of the file is said
    /// together, each at its line and field: an unknown context, key, action or field, a
    /// key the file binds twice in one context, a pathway the taxonomy (`pathways` long)
    /// does not have.
    pub fn apply_overrides(
        &mut self,
        bytes: &[u8],
        path: &Path,
        pathways: usize,
    ) -> Result<(), LoadError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File<'a> {
            #[serde(borrow)]
            bindings: Vec<&'a RawValue>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Entry {
            context: String,
            key: String,
            action: String,
            #[serde(default)]
            desc: Option<String>,
        }
        let file: Arc<Path> = Arc::from(path);
        let mut diags = Diagnostics::default();
        let rejected = |diags| Err(LoadError::Rejected(diags));
        let Some(text) = crate::core::load::encoding::utf8_or_said(bytes, &file, &mut diags) else {
            return rejected(diags);
        };
        let f: File = match serde_json::from_str(text) {
            Ok(f) => f,
            Err(e) => {
                diags.error(
                    &file,
                    Some(e.line() as u64),
                    None,
                    format!("malformed keymap: {}", describe_json_error(&e)),
                );
                return rejected(diags);
            }
        };
        let footers: Vec<(Context, Action, String)> = self
            .bindings
            .iter()
            .filter_map(|b| Some((b.context, b.action, b.footer.clone()?)))
            .collect();
        // The file's own bindings: (context, key, entry, line), for a key bound twice.
        let mut given: Vec<(Context, Key, usize, u64)> = Vec::new();
        for (i, raw) in f.bindings.iter().enumerate() {
            // A borrowed raw value is a slice of `text`: its line is where it starts.
            let (line, _) = start_of(text, raw.get());
            let at = |field: &str| format!("bindings[{i}].{field}");
            // A field's own line: where `"field":` starts in the entry (one written a field
            // a line), else the entry's.
            let line_of = |field: &str| {
                let raw = raw.get();
                let quoted = format!("\"{field}\"");
                raw.match_indices(&quoted)
                    .find(|(n, _)| raw[n + quoted.len()..].trim_start().starts_with(':'))
                    .map_or(line, |(n, _)| line + raw[..n].matches('\n').count() as u64)
            };
            let e: Entry = match serde_json::from_str(raw.get()) {
                Ok(e) => e,
                Err(err) => {
                    let said = json_error_text(&err);
                    let (at_line, col) = error_place(text, raw.get(), &err);
                    diags.error(
                        &file,
                        Some(at_line),
                        Some(&format!("bindings[{i}]")),
                        format!("{said} (column {col})"),
                    );
                    continue;
                }
            };
            let context = Context::parse(&e.context);
            if context.is_none() {
                diags.error(
                    &file,
                    Some(line_of("context")),
                    Some(&at("context")),
                    format!(
                        "expected one of {}, found {:?}",
                        Context::ALL.map(Context::as_str).join(", "),
                        e.context
                    ),
                );
            }
            let key = Key::parse(&e.key);
            if key.is_none() {
                diags.error(
                    &file,
                    Some(line_of("key")),
                    Some(&at("key")),
                    format!("unknown key {:?}", e.key),
                );
            }
            let action = match e.action.as_str() {
                "none" => Some(None),
                name => match Action::parse(name) {
                    Some(Action::TogglePathway(p)) if p >= pathways => {
                        diags.error(
                            &file,
                            Some(line_of("action")),
                            Some(&at("action")),
                            format!(
                                "{name:?} toggles pathway {}, but the taxonomy has {pathways}",
                                p + 1
                            ),
                        );
                        continue;
                    }
                    Some(a) => Some(Some(a)),
                    None => {
                        diags.error(
                            &file,
                            Some(line_of("action")),
                            Some(&at("action")),
                            format!(
                                "unknown action {:?}; actions: {}",
                                e.action,
                                Action::names().join(", ")
                            ),
                        );
                        None
                    }
                },
            };
            let (Some(context), Some(key), Some(action)) = (context, key, action) else {
                continue;
            };
            if let Some((_, _, j, l)) = given.iter().find(|g| g.0 == context && g.1 == key) {
                diags.error(
                    &file,
                    Some(line_of("key")),
                    Some(&at("key")),
                    format!(
                        "{:?} is bound on the {} screen by bindings[{j}] (line {l}) already: a key does one thing there",
                        e.key,
                        context.as_str()
                    ),
                );
                continue;
            }
            given.push((context, key, i, line_of("key")));
            self.bindings
                .retain(|b| !(b.context == context && b.key == key));
            let Some(action) = action else {
                continue;
            };
            let desc = e
                .desc
                .clone()
                .unwrap_or_else(|| describe(context, action).to_string());
            self.bindings.push(Binding {
                context,
                key,
                action,
                desc,
                footer: None,
            });
        }
        self.keep_footer_labels(footers);
        if diags.has_errors() {
            rejected(diags)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_print() {
        assert_eq!(Key::parse("Ctrl-r"), Some(Key::ctrl('r')));
        assert_eq!(Key::parse("Space"), Some(Key::char(' ')));
        assert_eq!(
            Key::parse("PageDown").map(|k| k.label()),
            Some("PgDn".into())
        );
        assert_eq!(Key::parse("F2"), Some(Key::code(KeyCode::F(2))));
        assert_eq!(Key::parse("nope"), None);
    }

    #[test]
    fn no_key_does_two_things_on_one_screen() {
        let tax = Taxonomy::load(None).expect("taxonomy");
        let km = Keymap::default_for(&tax);
        let mut seen = std::collections::HashMap::new();
        for b in &km.bindings {
            if let Some(other) = seen.insert((b.context, b.key), b.action) {
                panic!(
                    "{:?} {} is {other:?} and {:?}",
                    b.context,
                    b.key.label(),
                    b.action
                );
            }
        }
        // The frame jumps and the pickers have their own keys.
        assert_eq!(
            km.lookup(Context::Item, Key::char('d')),
            Some(Action::NextDropped)
        );
        assert_eq!(
            km.lookup(Context::Item, Key::char('a')),
            Some(Action::NextAdded)
        );
        assert_eq!(
            km.lookup(Context::Queue, Key::char('M')),
            Some(Action::PickModel)
        );
        assert_eq!(
            km.lookup(Context::Queue, Key::char('B')),
            Some(Action::PickBenchmark)
        );
        assert_eq!(
            km.lookup(Context::Queue, Key::char('m')),
            Some(Action::FilterModel)
        );
    }

    #[test]
    fn lookup_prefers_the_screen_and_overrides_replace() {
        let tax = Taxonomy::load(None).expect("taxonomy");
        let mut km = Keymap::default_for(&tax);
        assert_eq!(km.lookup(Context::Item, Key::char('q')), Some(Action::Back));
        assert_eq!(
            km.lookup(Context::Queue, Key::char('q')),
            Some(Action::Quit)
        );
        assert_eq!(km.lookup(Context::Item, Key::char('?')), Some(Action::Help));
        assert_eq!(
            km.lookup(Context::Item, Key::char('3')),
            Some(Action::TogglePathway(2))
        );
        let user = r#"{"bindings": [{"context": "item", "key": "d", "action": "mark_done"},
                                     {"context": "item", "key": "u", "action": "none"}]}"#;
        km.apply_overrides(user.as_bytes(), Path::new("k.json"), tax.pathways.len())
            .expect("valid");
        assert_eq!(
            km.lookup(Context::Item, Key::char('d')),
            Some(Action::MarkDone)
        );
        assert_eq!(km.lookup(Context::Item, Key::char('u')), None);
        let bad = r#"{"bindings": [{"context": "item", "key": "d", "action": "fly"}]}"#;
        let err = km
            .apply_overrides(bad.as_bytes(), Path::new("k.json"), tax.pathways.len())
            .expect_err("rejected")
            .to_string();
        assert!(
            err.contains("k.json:1: error: field `bindings[0].action`: unknown action \"fly\""),
            "{err}"
        );
        // The list of actions in the message has the current names; a former one still binds.
        assert!(
            err.contains("next_transition") && !err.contains("next_pair"),
            "{err}"
        );
        // Written a field a line, an entry's problems are said at their fields' lines.
        let tall = "{\"bindings\": [\n  {\n    \"context\": \"item\",\n    \"key\": \"Ctrl-\",\n    \"action\": \"fly\"\n  }\n]}";
        let err = km
            .apply_overrides(tall.as_bytes(), Path::new("k.json"), tax.pathways.len())
            .expect_err("rejected")
            .to_string();
        assert!(
            err.contains("k.json:4: error: field `bindings[0].key`"),
            "{err}"
        );
        assert!(
            err.contains("k.json:5: error: field `bindings[0].action`"),
            "{err}"
        );
        let old = r#"{"bindings": [{"context": "item", "key": "n", "action": "next_pair"}]}"#;
        km.apply_overrides(old.as_bytes(), Path::new("k.json"), tax.pathways.len())
            .expect("an alias");
        assert_eq!(
            km.lookup(Context::Item, Key::char('n')),
            Some(Action::NextTransition)
        );
    }

    #[test]
    fn hints_name_keys_as_bound_and_footer_labels_follow_a_moved_key() {
        let tax = Taxonomy::load(None).expect("taxonomy");
        let mut km = Keymap::default_for(&tax);
        // An arrow before its vi letter; nothing for an unbound action.
        assert_eq!(
            km.hint(Context::Research, Action::Left).as_deref(),
            Some("←")
        );
        assert_eq!(
            km.hints(
                Context::Research,
                &[
                    (&[Action::Left, Action::Right], "", " column"),
                    (&[Action::Select], "", ": queue"),
                ],
            ),
            "←→ column · Enter: queue"
        );
        // Descriptions come from the action, a screen's own meaning where it has one.
        let desc = |ctx, action| {
            km.bindings
                .iter()
                .find(|b| b.context == ctx && b.action == action)
                .map(|b| b.desc.clone())
        };
        assert_eq!(
            desc(Context::Queue, Action::Down).as_deref(),
            Some("next row")
        );
        assert_eq!(
            desc(Context::Research, Action::Down).as_deref(),
            Some("cursor down")
        );
        let user = r#"{"bindings": [{"context": "item", "key": "x", "action": "mark_done"},
                                     {"context": "item", "key": "Space", "action": "none"},
                                     {"context": "research", "key": "Enter", "action": "none"}]}"#;
        km.apply_overrides(user.as_bytes(), Path::new("k.json"), tax.pathways.len())
            .expect("valid");
        let footer: Vec<(String, String)> = km
            .bindings
            .iter()
            .filter(|b| b.context == Context::Item)
            .filter_map(|b| Some((b.key.label(), b.footer.clone()?)))
            .collect();
        assert!(footer.contains(&("x".into(), "done".into())), "{footer:?}");
        assert_eq!(km.hint(Context::Research, Action::Select), None);
        assert_eq!(
            km.hints(
                Context::Research,
                &[
                    (&[Action::Left], "", " column"),
                    (&[Action::Select], "", ": queue"),
                ],
            ),
            "← column"
        );
    }
}
