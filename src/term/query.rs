//! Asking the terminal (and tmux) what it draws: the query's bytes, the answers parsed out of
//! what comes back, and the keys typed meanwhile decoded and handed on, so that a key typed
//! while the query runs still reaches the screens. The decision itself is `detect`'s.
//!
//! ratatui-image's `Picker::from_query_stdio` asks much the same, but it turns tmux's
//! `allow-passthrough` on without asking or restoring it, drops the keys typed during the
//! query, leaves its reading thread on standard input after a timeout, and asks no version
//! (kitty before 0.28 draws its placeholders as tofu): the bytes are ours here, its protocol
//! encoders are still what draws.

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::detect::{Answers, TermEnv, TmuxInfo};

/// How long the terminal has to answer. Terminals answer within milliseconds (over SSH,
/// one round trip); the first screen is drawn before, and keys typed meanwhile are kept,
/// so only pictures wait for it.
pub const ANSWER_TIMEOUT: Duration = Duration::from_millis(1500);

/// How long the screens keep reading answers that did not come within [`ANSWER_TIMEOUT`]
/// themselves, before crossterm reads standard input. crossterm takes an answer for keys
/// (`ESC P >|tmux 3.3a ESC \\` is Alt-P, `>`, `|`, `t`, `m`, `u`, `x`, space, …): a late
/// answer typed into the screens marked an item done and undid it. Until then a mouse
/// report is dropped; keys, pastes and resizes are handed on.
pub const LATE_LIMIT: Duration = Duration::from_secs(15);

/// How often the late reading looks at the window's size (crossterm, which reports
/// resizes, is not listening yet).
const SIZE_LOOK: Duration = Duration::from_millis(100);

/// How long the rest of an escape sequence may take after its ESC before the ESC is taken
/// for the Esc key.
const ESC_WAIT: Duration = Duration::from_millis(50);

/// The query: XTVERSION, the kitty graphics query (a 1x1 image, never shown), primary
/// device attributes (sixel), the cell size in pixels, and a status report that every
/// terminal answers last. With `passthrough`, the version, kitty and status queries go to
/// the outer terminal through tmux too, after tmux's own. Inside tmux (`in_tmux`) the kitty
/// query goes only that way: tmux draws no kitty graphics, and takes an APC string sent to
/// it for the pane's title (`Gi=31,s=1,…` stayed in the title after frameaudit quit).
/// Returns the bytes and how many status reports end the answers.
pub fn query_bytes(passthrough: bool, in_tmux: bool) -> (String, usize) {
    const KITTY: &str = "_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA";
    let kitty = if in_tmux {
        String::new()
    } else {
        format!("\x1b{KITTY}\x1b\\")
    };
    let mut q = format!("\x1b[>0q{kitty}\x1b[c\x1b[16t");
    if passthrough {
        // Inside passthrough every ESC is doubled.
        q.push_str("\x1bPtmux;\x1b\x1b[>0q\x1b\x1b");
        q.push_str(KITTY);
        q.push_str("\x1b\x1b\\\x1b\x1b[5n\x1b\\");
    }
    q.push_str("\x1b[5n");
    (q, if passthrough { 2 } else { 1 })
}

/// One thing read back: an answer, or a key (or paste) the user typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// `CSI ? a ; b ; … c`.
    DeviceAttributes(Vec<u32>),
    /// `DCS > | text ST`.
    Version(String),
    /// The kitty graphics answer: OK or not.
    KittyGraphics(bool),
    /// `CSI 6 ; h ; w t`: (width, height).
    CellSize(u16, u16),
    /// `CSI 0 n`.
    Status,
    /// Input meant for the screens.
    Input(Event),
}

#[derive(Debug, Default)]
enum State {
    #[default]
    Ground,
    Esc,
    Csi(String),
    /// A string sequence (DCS `P`, APC `_`, OSC `]`) until ST or BEL; `bool`: ESC seen.
    Str(u8, Vec<u8>, bool),
    Ss3,
    Paste(Vec<u8>),
}

/// Splits the bytes read from the terminal into answers and typed input.
#[derive(Debug, Default)]
pub struct Reader {
    state: State,
    utf8: Vec<u8>,
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Item {
    Item::Input(Event::Key(KeyEvent::new(code, modifiers)))
}

impl Reader {
    /// The items in `bytes` (what a read gave); a sequence cut at the end waits for the
    /// next call. A lone ESC at the end waits too: see [`Reader::lone_esc`].
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Item> {
        let mut out = Vec::new();
        for &b in bytes {
            self.byte(b, &mut out);
        }
        out
    }

    /// Whether the bytes so far end with a lone ESC: the Esc key, unless the rest of a
    /// sequence follows (over SSH an answer may arrive in two pieces).
    pub fn lone_esc(&self) -> bool {
        matches!(self.state, State::Esc)
    }

    /// Nothing followed a lone ESC: it was the Esc key.
    pub fn flush(&mut self) -> Vec<Item> {
        if self.lone_esc() {
            self.state = State::Ground;
            return vec![key(KeyCode::Esc, KeyModifiers::NONE)];
        }
        Vec::new()
    }

    fn byte(&mut self, b: u8, out: &mut Vec<Item>) {
        match std::mem::take(&mut self.state) {
            State::Ground => self.ground(b, out),
            State::Esc => match b {
                b'[' => self.state = State::Csi(String::new()),
                b'P' | b'_' | b']' => self.state = State::Str(b, Vec::new(), false),
                b'O' => self.state = State::Ss3,
                0x1b => {
                    out.push(key(KeyCode::Esc, KeyModifiers::NONE));
                    self.state = State::Esc;
                }
                _ => {
                    // Alt and a key.
                    let mut inner = Vec::new();
                    self.ground(b, &mut inner);
                    for item in inner {
                        if let Item::Input(Event::Key(mut k)) = item {
                            k.modifiers |= KeyModifiers::ALT;
                            out.push(Item::Input(Event::Key(k)));
                        }
                    }
                }
            },
            State::Csi(mut p) => {
                if (0x40..=0x7e).contains(&b) {
                    self.csi(&p, b, out);
                } else if p.len() < 64 {
                    p.push(char::from(b));
                    self.state = State::Csi(p);
                }
            }
            State::Str(kind, mut data, esc) => {
                if b == 0x07 || (esc && b == b'\\') {
                    if let Some(item) = string_answer(kind, &data) {
                        out.push(item);
                    }
                } else if b == 0x1b {
                    self.state = State::Str(kind, data, true);
                } else {
                    if esc {
                        data.push(0x1b);
                    }
                    if data.len() < 256 {
                        data.push(b);
                    }
                    self.state = State::Str(kind, data, false);
                }
            }
            State::Ss3 => {
                let code = match b {
                    b'A' => Some(KeyCode::Up),
                    b'B' => Some(KeyCode::Down),
                    b'C' => Some(KeyCode::Right),
                    b'D' => Some(KeyCode::Left),
                    b'H' => Some(KeyCode::Home),
                    b'F' => Some(KeyCode::End),
                    b'P'..=b'S' => Some(KeyCode::F(b - b'P' + 1)),
                    _ => None,
                };
                if let Some(c) = code {
                    out.push(key(c, KeyModifiers::NONE));
                }
            }
            State::Paste(mut data) => {
                data.push(b);
                if data.ends_with(b"\x1b[201~") {
                    data.truncate(data.len() - 6);
                    out.push(Item::Input(Event::Paste(
                        String::from_utf8_lossy(&data).into_owned(),
                    )));
                } else {
                    self.state = State::Paste(data);
                }
            }
        }
    }

    fn ground(&mut self, b: u8, out: &mut Vec<Item>) {
        let none = KeyModifiers::NONE;
        if !self.utf8.is_empty() || b >= 0x80 {
            self.utf8.push(b);
            match std::str::from_utf8(&self.utf8) {
                Ok(s) => {
                    if let Some(c) = s.chars().next() {
                        out.push(key(KeyCode::Char(c), none));
                    }
                    self.utf8.clear();
                }
                Err(e) if e.error_len().is_some() || self.utf8.len() >= 4 => self.utf8.clear(),
                Err(_) => {}
            }
            return;
        }
        let item = match b {
            0x1b => {
                self.state = State::Esc;
                return;
            }
            b'\r' | b'\n' => key(KeyCode::Enter, none),
            b'\t' => key(KeyCode::Tab, none),
            0x7f | 0x08 => key(KeyCode::Backspace, none),
            0x00 => key(KeyCode::Char(' '), KeyModifiers::CONTROL),
            0x01..=0x1a => key(
                KeyCode::Char(char::from(b - 1 + b'a')),
                KeyModifiers::CONTROL,
            ),
            0x1c..=0x1f => key(
                KeyCode::Char(char::from(b - 0x1c + b'4')),
                KeyModifiers::CONTROL,
            ),
            b'A'..=b'Z' => key(KeyCode::Char(char::from(b)), KeyModifiers::SHIFT),
            _ => key(KeyCode::Char(char::from(b)), none),
        };
        out.push(item);
    }

    fn csi(&mut self, p: &str, fin: u8, out: &mut Vec<Item>) {
        let nums = |s: &str| -> Vec<u32> { s.split(';').filter_map(|x| x.parse().ok()).collect() };
        let n = nums(p.trim_start_matches(['?', '>', '<']));
        // xterm's modifier parameter: 1 + (shift 1, alt 2, ctrl 4).
        let mods = |m: Option<&u32>| {
            let m = m.map_or(0, |m| m.saturating_sub(1));
            let mut k = KeyModifiers::NONE;
            if m & 1 != 0 {
                k |= KeyModifiers::SHIFT;
            }
            if m & 2 != 0 {
                k |= KeyModifiers::ALT;
            }
            if m & 4 != 0 {
                k |= KeyModifiers::CONTROL;
            }
            k
        };
        let item = match (fin, p.as_bytes().first()) {
            (b'c', Some(b'?')) => Item::DeviceAttributes(n),
            (b't', _) if n.first() == Some(&6) && n.len() == 3 => Item::CellSize(
                u16::try_from(n[2]).unwrap_or(0),
                u16::try_from(n[1]).unwrap_or(0),
            ),
            (b'n', _) if p == "0" => Item::Status,
            (b'~', _) if p == "200" => {
                self.state = State::Paste(Vec::new());
                return;
            }
            // Mouse reports, focus, other answers: not keys.
            (_, Some(b'<' | b'?' | b'>')) | (b'I' | b'O' | b'R' | b't' | b'n' | b'c', _) => return,
            (b'A'..=b'D' | b'H' | b'F', _) => {
                let code = match fin {
                    b'A' => KeyCode::Up,
                    b'B' => KeyCode::Down,
                    b'C' => KeyCode::Right,
                    b'D' => KeyCode::Left,
                    b'H' => KeyCode::Home,
                    _ => KeyCode::End,
                };
                key(code, mods(n.get(1)))
            }
            (b'Z', _) => key(KeyCode::BackTab, KeyModifiers::SHIFT),
            (b'~', _) => {
                let code = match n.first() {
                    Some(1 | 7) => KeyCode::Home,
                    Some(4 | 8) => KeyCode::End,
                    Some(2) => KeyCode::Insert,
                    Some(3) => KeyCode::Delete,
                    Some(5) => KeyCode::PageUp,
                    Some(6) => KeyCode::PageDown,
                    Some(&f @ 11..=15) => KeyCode::F((f - 10) as u8),
                    Some(&f @ 17..=21) => KeyCode::F((f - 11) as u8),
                    Some(&f @ 23..=24) => KeyCode::F((f - 12) as u8),
                    _ => return,
                };
                key(code, mods(n.get(1)))
            }
            _ => return,
        };
        out.push(item);
    }
}

/// The answer a DCS or APC string holds.
fn string_answer(kind: u8, data: &[u8]) -> Option<Item> {
    let text = String::from_utf8_lossy(data);
    match kind {
        b'P' => text
            .strip_prefix(">|")
            .map(|v| Item::Version(crate::core::text::sanitize(v).into_owned())),
        b'_' => text
            .strip_prefix("Gi=31")
            .map(|rest| Item::KittyGraphics(rest.trim_start_matches(|c| c != ';') == ";OK")),
        _ => None,
    }
}

/// Adds an answer to what is known.
pub fn record(a: &mut Answers, item: &Item) {
    match item {
        Item::DeviceAttributes(v) => {
            a.device_attributes.get_or_insert_with(|| v.clone());
        }
        Item::Version(v) => a.versions.push(v.clone()),
        Item::KittyGraphics(ok) => a.kitty_graphics |= ok,
        Item::CellSize(w, h) if *w > 0 && *h > 0 => {
            a.cell_from_query.get_or_insert((*w, *h));
        }
        _ => {}
    }
}

/// The cell size in pixels from the window size (`TIOCGWINSZ`), when the terminal fills it.
pub fn cell_from_winsize() -> Option<(u16, u16)> {
    let w = crossterm::terminal::window_size().ok()?;
    if w.width == 0 || w.height == 0 || w.columns == 0 || w.rows == 0 {
        return None;
    }
    Some((w.width / w.columns, w.height / w.rows))
}

/// Sends the query to the terminal (in raw mode, so that the answers are not echoed) and
/// returns how many status reports end its answers; `None` when standard input and output
/// are not both a terminal (nothing is asked). Called where the screens are written from,
/// between two draws, so that the query is never cut into one.
pub fn send(passthrough: bool, in_tmux: bool) -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return None;
    }
    send_to(&mut std::io::stdout(), passthrough, in_tmux)
}

/// [`send`] to a terminal given.
pub fn send_to(out: &mut impl std::io::Write, passthrough: bool, in_tmux: bool) -> Option<usize> {
    let (q, statuses) = query_bytes(passthrough, in_tmux);
    out.write_all(q.as_bytes()).and_then(|_| out.flush()).ok()?;
    Some(statuses)
}

/// Reads the answers to a query [`send`] sent (`statuses`: how many status reports end
/// them; `None`: none was sent) from standard input until the last status report or
/// [`ANSWER_TIMEOUT`]; typed input goes to `typed` as it comes. Nothing else may read
/// standard input meanwhile (the screens' input thread runs this first).
pub fn read_answers(
    statuses: Option<usize>,
    passthrough: bool,
    typed: impl FnMut(Event),
) -> Answers {
    read_answers_from(&std::io::stdin(), statuses, passthrough, typed)
}

/// [`read_answers`] for the screens: what came by [`ANSWER_TIMEOUT`] goes to `in_time`
/// (once, and only when the answers are not all in by then), and the reading goes on until
/// the last status report or [`LATE_LIMIT`], so that a late answer never becomes keys.
/// Meanwhile a change of the window's size goes to `typed` as a resize. Returns all that
/// came.
#[cfg(unix)]
pub fn read_answers_for_screens(
    statuses: Option<usize>,
    passthrough: bool,
    typed: impl FnMut(Event),
    in_time: impl FnOnce(&Answers),
) -> Answers {
    let mut a = fresh_answers(passthrough);
    if let Some(n) = statuses {
        a.asked = true;
        let late = Late {
            in_time: Some(in_time),
            size: crossterm::terminal::size().ok(),
        };
        read_until(&std::io::stdin(), &mut a, n, typed, Some(late));
    }
    a
}

/// Without a Unix terminal nothing is read.
#[cfg(not(unix))]
pub fn read_answers_for_screens(
    _statuses: Option<usize>,
    passthrough: bool,
    _typed: impl FnMut(Event),
    _in_time: impl FnOnce(&Answers),
) -> Answers {
    fresh_answers(passthrough)
}

/// The answers before any was read.
fn fresh_answers(passthrough: bool) -> Answers {
    Answers {
        cell_from_winsize: cell_from_winsize(),
        through_passthrough: passthrough,
        ..Answers::default()
    }
}

/// [`read_answers`] from a terminal given.
#[cfg(unix)]
pub fn read_answers_from(
    tty: &impl std::os::fd::AsFd,
    statuses: Option<usize>,
    passthrough: bool,
    typed: impl FnMut(Event),
) -> Answers {
    let mut a = fresh_answers(passthrough);
    if let Some(n) = statuses {
        a.asked = true;
        read_until(tty, &mut a, n, typed, None::<Late<fn(&Answers)>>);
    }
    a
}

/// The reading after [`ANSWER_TIMEOUT`], for the screens.
#[cfg(unix)]
struct Late<F> {
    /// Told what came in time, when the time is up (then `None`).
    in_time: Option<F>,
    /// The window's size last seen.
    size: Option<(u16, u16)>,
}

#[cfg(unix)]
fn read_until<F: FnOnce(&Answers)>(
    tty: &impl std::os::fd::AsFd,
    a: &mut Answers,
    statuses: usize,
    mut typed: impl FnMut(Event),
    mut late: Option<Late<F>>,
) {
    let start = Instant::now();
    let mut reader = Reader::default();
    let mut seen = 0;
    let mut buf = [0u8; 1024];
    let take =
        |items: Vec<Item>, seen: &mut usize, a: &mut Answers, typed: &mut dyn FnMut(Event)| {
            for item in items {
                match item {
                    Item::Status => *seen += 1,
                    Item::Input(e) => typed(e),
                    other => record(a, &other),
                }
            }
        };
    while seen < statuses {
        let mut limit = ANSWER_TIMEOUT;
        if let Some(l) = &mut late {
            if start.elapsed() >= ANSWER_TIMEOUT {
                if let Some(tell) = l.in_time.take() {
                    a.answered = seen > 0;
                    tell(a);
                }
                limit = LATE_LIMIT;
            }
            // crossterm is not listening for resizes yet: the size is looked at here.
            let size = crossterm::terminal::size().ok();
            if size != l.size {
                l.size = size;
                if let Some((w, h)) = size {
                    typed(Event::Resize(w, h));
                }
            }
        }
        let mut left = limit.saturating_sub(start.elapsed());
        if late.is_some() && limit == ANSWER_TIMEOUT && left.is_zero() {
            // The time for the answers is up: told, then read on.
            continue;
        }
        if late.is_some() {
            left = left.min(SIZE_LOOK);
        }
        if reader.lone_esc() {
            // The rest of a sequence comes at once, or the ESC was the Esc key.
            left = left.min(ESC_WAIT);
        }
        if left.is_zero() {
            break;
        }
        let mut fds = [rustix::event::PollFd::new(
            tty,
            rustix::event::PollFlags::IN,
        )];
        let timeout = rustix::event::Timespec::try_from(left).ok();
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(0) if reader.lone_esc() => {
                take(reader.flush(), &mut seen, a, &mut typed);
                continue;
            }
            Ok(0) if late.is_some() => continue,
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        let n = match rustix::io::read(tty, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        take(reader.feed(&buf[..n]), &mut seen, a, &mut typed);
    }
    take(reader.flush(), &mut seen, a, &mut typed);
    a.answered = seen > 0;
}

/// Without a Unix terminal nothing is read.
#[cfg(not(unix))]
pub fn read_answers_from<T>(
    _tty: &T,
    _statuses: Option<usize>,
    passthrough: bool,
    _typed: impl FnMut(Event),
) -> Answers {
    fresh_answers(passthrough)
}

/// What is known before the terminal is asked: the environment, tmux's state, and whether
/// the outer terminal is asked through tmux's passthrough (turned on for the pane only where
/// the user allowed it, and set back when the guard is dropped).
#[derive(Debug)]
pub struct Probe {
    /// The environment.
    pub env: TermEnv,
    /// tmux's version and passthrough, inside tmux.
    pub tmux: Option<TmuxInfo>,
    /// The outer terminal is asked (and drawn to) through passthrough.
    pub through: bool,
    /// Passthrough as frameaudit turned it on, until dropped.
    pub guard: Option<PassthroughGuard>,
}

impl Probe {
    /// Reads the environment and asks tmux (inside it), turning passthrough on if allowed.
    pub fn start() -> Probe {
        let env = TermEnv::from_env();
        let tmux = env.tmux.then(tmux_info);
        let (through, turn_on) = super::detect::passthrough_plan(&env, tmux.as_ref());
        let guard = if turn_on {
            PassthroughGuard::turn_on()
        } else {
            None
        };
        Probe {
            through: through && (!turn_on || guard.is_some()),
            env,
            tmux,
            guard,
        }
    }
}

/// Runs `tmux ARGS` for its output (`None` if it fails).
fn tmux(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("tmux")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The pane frameaudit runs in (`TMUX_PANE`), for the options asked and set.
fn pane() -> String {
    std::env::var("TMUX_PANE").unwrap_or_default()
}

/// tmux's version and the pane's `allow-passthrough`.
pub fn tmux_info() -> TmuxInfo {
    let p = pane();
    let target: Vec<&str> = if p.is_empty() { vec![] } else { vec!["-t", &p] };
    let mut version = vec!["display", "-p"];
    version.extend(&target);
    version.push("#{version}");
    let mut pass = vec!["show", "-Apv"];
    pass.extend(&target);
    pass.push("allow-passthrough");
    TmuxInfo {
        version: tmux(&version).filter(|v| !v.is_empty()),
        passthrough: tmux(&pass).and_then(|v| v.lines().next().map(str::to_string)),
    }
}

/// tmux's `allow-passthrough` turned on for frameaudit's pane, as the user allowed: set back
/// as it was when dropped (a pane left with passthrough lets later output escape tmux).
#[derive(Debug)]
pub struct PassthroughGuard {
    pane: String,
    /// The pane's own value before (`None`: it had none and inherited).
    before: Option<String>,
}

impl PassthroughGuard {
    /// Turns passthrough on for the pane; `None` if tmux refused.
    pub fn turn_on() -> Option<PassthroughGuard> {
        let pane = pane();
        let target: Vec<&str> = if pane.is_empty() {
            vec![]
        } else {
            vec!["-t", &pane]
        };
        let mut show = vec!["show", "-pv"];
        show.extend(&target);
        show.push("allow-passthrough");
        let before = tmux(&show).filter(|v| !v.is_empty());
        let mut set = vec!["set", "-p"];
        set.extend(&target);
        set.extend(["allow-passthrough", "on"]);
        tmux(&set)?;
        Some(PassthroughGuard { pane, before })
    }
}

impl Drop for PassthroughGuard {
    fn drop(&mut self) {
        let mut args = vec!["set"];
        args.push(if self.before.is_some() { "-p" } else { "-pu" });
        if !self.pane.is_empty() {
            args.extend(["-t", &self.pane]);
        }
        args.push("allow-passthrough");
        if let Some(v) = &self.before {
            args.push(v);
        }
        let _ = tmux(&args);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(items: &[Item]) -> Vec<KeyCode> {
        items
            .iter()
            .filter_map(|i| match i {
                Item::Input(Event::Key(k)) => Some(k.code),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn answers_of_kitty_0_26_are_read_and_keys_between_them_kept() {
        let mut r = Reader::default();
        let mut items = r.feed(b"\x1bP>|kitty(0.26.5)\x1b\\\x1b_Gi=31;OK\x1b\\j");
        items.extend(r.feed(b"\x1b[?62;c\x1b[6;17;8t\x1b[B\x1b[0n"));
        assert!(items.contains(&Item::Version("kitty(0.26.5)".into())));
        assert!(items.contains(&Item::KittyGraphics(true)));
        assert!(items.contains(&Item::DeviceAttributes(vec![62])));
        assert!(items.contains(&Item::CellSize(8, 17)));
        assert_eq!(items.last(), Some(&Item::Status));
        assert_eq!(keys(&items), vec![KeyCode::Char('j'), KeyCode::Down]);
    }

    #[test]
    fn a_sequence_split_between_reads_is_one_answer() {
        let mut r = Reader::default();
        let mut items = r.feed(b"\x1b[?63;1;2;4");
        assert!(items.is_empty());
        items.extend(r.feed(b";6c\x1b_Gi=31;ENOENT:x\x1b\\q\x1b"));
        assert_eq!(items[0], Item::DeviceAttributes(vec![63, 1, 2, 4, 6]));
        assert_eq!(items[1], Item::KittyGraphics(false));
        // An answer cut right after its ESC (over SSH) is still an answer, not Esc and keys.
        assert!(r.lone_esc());
        items.extend(r.feed(b"[0n"));
        assert_eq!(items.last(), Some(&Item::Status));
        assert_eq!(keys(&items), vec![KeyCode::Char('q')]);
        // Nothing after it: the Esc key.
        items.extend(r.feed(b"\x1b"));
        items.extend(r.flush());
        assert_eq!(keys(&items), vec![KeyCode::Char('q'), KeyCode::Esc]);
    }

    /// A late answer (tmux busy, a slow link) comes after the time for answers: the screens
    /// choose with what came in time, and read the answer on rather than leave it to
    /// crossterm, which took its text for keys (a space marked an item done).
    #[cfg(unix)]
    #[test]
    fn an_answer_after_its_time_is_read_on_never_typed() {
        use std::io::Write;
        let (ours, mut terminal) = std::os::unix::net::UnixStream::pair().expect("pair");
        let writer = std::thread::spawn(move || {
            terminal.write_all(b"j").expect("write");
            std::thread::sleep(ANSWER_TIMEOUT + Duration::from_millis(300));
            terminal
                .write_all(b"\x1bP>|tmux 3.3a\x1b\\\x1b[?1;2c k\x1b[0n")
                .expect("write");
            terminal
        });
        let mut a = Answers::default();
        let mut typed = Vec::new();
        let mut told = Vec::new();
        let late = Late {
            in_time: Some(|a: &Answers| told.push(a.clone())),
            size: None,
        };
        read_until(&ours, &mut a, 1, |e| typed.push(e), Some(late));
        let _terminal = writer.join().expect("writer");
        assert_eq!(told.len(), 1, "told once, when the time was up");
        assert!(
            !told[0].answered && told[0].versions.is_empty(),
            "{:?}",
            told[0]
        );
        assert!(a.answered);
        assert_eq!(a.versions, ["tmux 3.3a"]);
        assert_eq!(a.device_attributes, Some(vec![1, 2]));
        let keys: Vec<KeyCode> = typed
            .iter()
            .filter_map(|e| match e {
                Event::Key(k) => Some(k.code),
                _ => None,
            })
            .collect();
        assert_eq!(
            keys,
            [KeyCode::Char('j'), KeyCode::Char(' '), KeyCode::Char('k')]
        );

        // `doctor` (no late reading) stops at the time for answers and tells no one.
        let (ours, mut terminal) = std::os::unix::net::UnixStream::pair().expect("pair");
        terminal.write_all(b"\x1b[?1;2c").expect("write");
        let mut a = Answers::default();
        read_until(&ours, &mut a, 1, |_| {}, None::<Late<fn(&Answers)>>);
        assert!(!a.answered);
        assert_eq!(a.device_attributes, Some(vec![1, 2]));
    }

    #[test]
    fn a_paste_during_the_query_stays_a_paste() {
        let mut r = Reader::default();
        let items = r.feed(b"\x1b[200~a\rb\x1b[201~\x1b[<0;3;4M");
        assert_eq!(items, vec![Item::Input(Event::Paste("a\rb".into()))]);
    }

    #[test]
    fn passthrough_asks_the_outer_terminal_and_waits_for_both_reports() {
        let (plain, n) = query_bytes(false, false);
        assert_eq!(n, 1);
        assert!(!plain.contains("tmux;"));
        assert!(plain.contains("\x1b_Gi=31,"), "outside tmux kitty is asked");
        let (wrapped, n) = query_bytes(true, true);
        assert_eq!(n, 2);
        assert!(wrapped.contains("\x1bPtmux;\x1b\x1b[>0q"));
        assert!(wrapped.ends_with("\x1b[5n"));
        // Inside tmux no APC string reaches tmux itself (it would be the pane's title):
        // the kitty query goes only through passthrough, its ESC doubled.
        for through in [false, true] {
            let (q, _) = query_bytes(through, true);
            assert_eq!(q.matches("_Gi=31").count(), usize::from(through), "{q:?}");
            assert!(!q.replace("\x1b\x1b_", "").contains("\x1b_"), "{q:?}");
        }
    }
}
