//! Keys as data: every binding has a context, an action and a description. The help
//! overlay and the footer are generated from this table, and a user keymap file can
//! replace any binding.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

use super::action::Action;
use crate::core::taxonomy::Taxonomy;

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Everywhere (unless a more specific binding of the screen takes the key).
    Global,
    Queue,
    Item,
    /// The researcher views.
    Research,
}

impl Context {
    pub fn as_str(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Queue => "queue",
            Context::Item => "item",
            Context::Research => "research",
        }
    }

    fn parse(s: &str) -> Option<Context> {
        [
            Context::Global,
            Context::Queue,
            Context::Item,
            Context::Research,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// A key with its modifiers (Shift is folded into the character for printable keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Key {
    pub fn char(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: false,
            alt: false,
        }
    }

    pub fn code(code: KeyCode) -> Key {
        Key {
            code,
            ctrl: false,
            alt: false,
        }
    }

    pub fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: true,
            alt: false,
        }
    }

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

/// One binding.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub context: Context,
    pub key: Key,
    pub action: Action,
    pub desc: String,
    /// A short label when the footer shows it (the help overlay shows every binding).
    pub footer: Option<String>,
}

/// The bindings in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    pub bindings: Vec<Binding>,
}

impl Keymap {
    /// The defaults, with the taxonomy's keys toggling its pathways on the item screen.
    pub fn default_for(taxonomy: &Taxonomy) -> Keymap {
        use Action::*;
        use Context::{Global, Item, Queue, Research};
        let b = |context, key: Key, action, desc: &str, footer: Option<&str>| Binding {
            context,
            key,
            action,
            desc: desc.to_string(),
            footer: footer.map(str::to_owned),
        };
        let (ch, code, ctrl) = (Key::char, Key::code, Key::ctrl);
        #[rustfmt::skip]
        let mut v = vec![
            b(Global, ch('?'), Help, "help: every key", Some("help")),
            b(Global, ctrl('c'), Quit, "quit", None),
            b(Queue, ch('j'), Down, "next row", None),
            b(Queue, code(KeyCode::Down), Down, "next row", None),
            b(Queue, ch('k'), Up, "previous row", None),
            b(Queue, code(KeyCode::Up), Up, "previous row", None),
            b(Queue, code(KeyCode::PageDown), PageDown, "page down", None),
            b(Queue, code(KeyCode::PageUp), PageUp, "page up", None),
            b(Queue, ch('g'), Top, "first row", None),
            b(Queue, ch('G'), Bottom, "last row", None),
            b(Queue, code(KeyCode::Enter), Open, "open the item", Some("open")),
            b(Queue, ch('/'), Search, "fuzzy search", Some("search")),
            b(Queue, ch('n'), NextMatch, "search: next match", None),
            b(Queue, ch('N'), PrevMatch, "search: previous match", None),
            b(Queue, ch('M'), PickModel, "filter: pick a model from a list", Some("model")),
            b(Queue, ch('m'), FilterModel, "filter: next model", None),
            b(Queue, ch('B'), PickBenchmark, "filter: pick a benchmark from a list", None),
            b(Queue, ch('b'), FilterBenchmark, "filter: next benchmark", None),
            b(Queue, ch('c'), FilterClass, "filter: next trajectory class", None),
            b(Queue, ch('a'), FilterStatus, "filter: next audit status", None),
            b(Item, ch('A'), TakeAnnotator, "review: take the next annotator's record", None),
            b(Queue, ch('p'), FilterTag, "filter: next pathway tag", None),
            b(Queue, ch('t'), ToggleTerminal, "filter: terminal regressions only", Some("terminal")),
            b(Queue, ch('x'), ClearFilters, "clear filters and search", None),
            b(Queue, ch('o'), CycleSort, "sort: next key", Some("sort")),
            b(Queue, ch('q'), Quit, "quit", Some("quit")),
            b(Queue, code(KeyCode::Tab), NextTodo, "next todo: the next item not done, skipped or flagged", None),
            b(Queue, code(KeyCode::Esc), ClearFilters, "clear filters and search", None),
            b(Item, ch('j'), NextItem, "next item of the queue", None),
            b(Item, code(KeyCode::Down), NextItem, "next item of the queue", None),
            b(Item, ch('k'), PrevItem, "previous item of the queue", None),
            b(Item, code(KeyCode::Up), PrevItem, "previous item of the queue", None),
            b(Item, code(KeyCode::Tab), NextTodo, "next todo: the next item not done, skipped or flagged", None),
            b(Item, ch(']'), NextPair, "next harmful transition of the item", Some("transition")),
            b(Item, ch('['), PrevPair, "previous harmful transition", None),
            b(Item, ch('h'), FramePrev, "frame cursor: previous frame", None),
            b(Item, code(KeyCode::Left), FramePrev, "frame cursor: previous frame", None),
            b(Item, ch('l'), FrameNext, "frame cursor: next frame", None),
            b(Item, code(KeyCode::Right), FrameNext, "frame cursor: next frame", Some("frames")),
            b(Item, ch('c'), FrameConfig, "frames: next configuration", None),
            b(Item, ch('v'), FrameSubset, "frames: all / dropped / added", None),
            b(Item, ch('d'), NextDropped, "frames: next dropped frame (the lower budget's, wraps)", None),
            b(Item, ch('a'), NextAdded, "frames: next added frame (the higher budget's, wraps)", None),
            b(Item, ch('e'), MarkEvidence, "mark the frame under the cursor as evidence", Some("evidence")),
            b(Item, ch('P'), CyclePrimary, "primary pathway: next tagged one", Some("primary")),
            b(Item, ch('n'), EditNote, "edit the note", Some("note")),
            b(Item, ch(' '), MarkDone, "mark done and go to the next item", Some("done")),
            b(Item, ch('s'), Skip, "skip and go to the next item", Some("skip")),
            b(Item, ch('!'), Flag, "flag for review and go to the next item", Some("flag")),
            b(Item, ch('u'), Undo, "undo the last change", Some("undo")),
            b(Item, ctrl('r'), Redo, "redo", None),
            b(Item, ch('q'), Back, "back to the queue", Some("back")),
            b(Item, code(KeyCode::Esc), Back, "back to the queue", None),
            b(Global, ch('O'), Overview, "researcher views: overview", None),
            b(Queue, ch('O'), Overview, "researcher views: overview", Some("overview")),
            b(Research, code(KeyCode::Tab), NextView, "next researcher view", Some("view")),
            b(Research, code(KeyCode::BackTab), PrevView, "previous researcher view", None),
            b(Research, ch('P'), NextProtocol, "analysis: next protocol", None),
            b(Research, ch('T'), NextTask, "analysis: next task", None),
            b(Research, ch('b'), NextScope, "analysis: next benchmark scope", Some("scope")),
            b(Research, ch('M'), NextModelSet, "analysis: model set (all, or one model)", None),
            b(Research, ch('z'), ToggleZeroFrame, "analysis: with / without text-only configs", None),
            b(Research, ch('C'), NextConfigSet, "analysis: config set (all, or up to a smaller top budget)", None),
            b(Research, ch('m'), NextModel, "next model", Some("model")),
            b(Research, ch('n'), PrevModel, "previous model", None),
            b(Research, ch('h'), Left, "cursor left (bar, cell, threshold)", None),
            b(Research, code(KeyCode::Left), Left, "cursor left (bar, cell, threshold)", Some("move")),
            b(Research, ch('l'), Right, "cursor right", None),
            b(Research, code(KeyCode::Right), Right, "cursor right", None),
            b(Research, ch('k'), Up, "cursor up (part of a bar, cell, threshold +0.10)", None),
            b(Research, code(KeyCode::Up), Up, "cursor up (part of a bar, cell, threshold +0.10)", None),
            b(Research, ch('j'), Down, "cursor down", None),
            b(Research, code(KeyCode::Down), Down, "cursor down", None),
            b(Research, code(KeyCode::Enter), Select, "show the selected items in the queue", Some("items")),
            b(Research, ch('q'), Back, "back to the queue", Some("back")),
            b(Research, code(KeyCode::Esc), Back, "back to the queue", None),
        ];
        for (i, view) in super::research::View::ALL.iter().enumerate() {
            let desc = format!("researcher view: {}", view.title());
            let key = char::from(b'1' + i as u8);
            v.push(b(Research, ch(key), ShowView(i), &desc, None));
        }
        for (i, p) in taxonomy.pathways.iter().enumerate() {
            if let Some(c) = p.key.chars().next() {
                let desc = format!("toggle pathway: {}", p.label);
                v.push(b(Item, ch(c), TogglePathway(i), &desc, None));
            }
        }
        Keymap { bindings: v }
    }

    /// The action a key triggers in a context (the screen's bindings before global ones).
    pub fn lookup(&self, context: Context, key: Key) -> Option<Action> {
        let find = |ctx| {
            self.bindings
                .iter()
                .find(|b| b.context == ctx && b.key == key)
                .map(|b| b.action)
        };
        find(context).or_else(|| find(Context::Global))
    }

    /// Bindings of a context and the global ones, for the help overlay.
    pub fn for_context(&self, context: Context) -> impl Iterator<Item = &Binding> {
        self.bindings
            .iter()
            .filter(move |b| b.context == context || b.context == Context::Global)
    }

    /// Applies a user keymap file: `{"bindings": [{"context": "item", "key": "d",
    /// "action": "mark_done"}, ...]}`. A binding replaces whatever the key did in that
    /// context; `"action": "none"` unbinds the key.
    pub fn apply_overrides(&mut self, text: &str, path: &Path) -> Result<(), String> {
        #[derive(Deserialize)]
        struct File {
            bindings: Vec<Entry>,
        }
        #[derive(Deserialize)]
        struct Entry {
            context: String,
            key: String,
            action: String,
            #[serde(default)]
            desc: Option<String>,
        }
        let f: File = serde_json::from_str(text)
            .map_err(|e| format!("{}: malformed keymap: {e}", path.display()))?;
        let mut errors = Vec::new();
        for (i, e) in f.bindings.iter().enumerate() {
            let at = format!("{}: bindings[{i}]", path.display());
            let Some(context) = Context::parse(&e.context) else {
                errors.push(format!(
                    "{at}.context: expected global, queue, item or research, found {:?}",
                    e.context
                ));
                continue;
            };
            let Some(key) = Key::parse(&e.key) else {
                errors.push(format!("{at}.key: unknown key {:?}", e.key));
                continue;
            };
            self.bindings
                .retain(|b| !(b.context == context && b.key == key));
            if e.action == "none" {
                continue;
            }
            let Some(action) = Action::parse(&e.action) else {
                errors.push(format!(
                    "{at}.action: unknown action {:?}; actions: {}",
                    e.action,
                    Action::names().join(", ")
                ));
                continue;
            };
            let desc = e
                .desc
                .clone()
                .unwrap_or_else(|| action.describe().to_string());
            self.bindings.push(Binding {
                context,
                key,
                action,
                desc,
                footer: None,
            });
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
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
        km.apply_overrides(user, Path::new("k.json"))
            .expect("valid");
        assert_eq!(
            km.lookup(Context::Item, Key::char('d')),
            Some(Action::MarkDone)
        );
        assert_eq!(km.lookup(Context::Item, Key::char('u')), None);
        let bad = r#"{"bindings": [{"context": "item", "key": "d", "action": "fly"}]}"#;
        let err = km
            .apply_overrides(bad, Path::new("k.json"))
            .expect_err("rejected");
        assert!(
            err.contains("k.json: bindings[0].action: unknown action \"fly\""),
            "{err}"
        );
    }
}
