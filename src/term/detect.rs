//! Which image protocol the terminal draws right, as a pure function of the environment and
//! of what the terminal (and tmux) answered: every terminal annotators use is a test case,
//! and the reason for a choice is text the user reads (`frameaudit doctor terminal`).

use super::ImageMode;

/// What the environment says about the terminal: the variables terminals, tmux and SSH set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TermEnv {
    /// `TERM`.
    pub term: String,
    /// `TERM_PROGRAM` (tmux sets it to `tmux` inside its panes).
    pub term_program: String,
    /// `LC_TERMINAL` (iTerm2 sets it; SSH passes `LC_*` on).
    pub lc_terminal: String,
    /// `KITTY_WINDOW_ID` is set (stale inside a tmux started from kitty).
    pub kitty_window_id: bool,
    /// `TMUX` is set: frameaudit runs in a tmux pane.
    pub tmux: bool,
    /// `SSH_CONNECTION` or `SSH_TTY` is set.
    pub ssh: bool,
    /// `FRAMEAUDIT_TMUX_PASSTHROUGH=1`: the user lets frameaudit turn tmux's
    /// `allow-passthrough` on for its pane (restored on exit).
    pub allow_passthrough: bool,
}

/// The variable that lets frameaudit turn on tmux's passthrough for its pane.
pub const PASSTHROUGH_VAR: &str = "FRAMEAUDIT_TMUX_PASSTHROUGH";

impl TermEnv {
    /// The process's environment.
    pub fn from_env() -> TermEnv {
        let var = |k: &str| std::env::var(k).unwrap_or_default();
        let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
        TermEnv {
            term: var("TERM"),
            term_program: var("TERM_PROGRAM"),
            lc_terminal: var("LC_TERMINAL"),
            kitty_window_id: set("KITTY_WINDOW_ID"),
            tmux: set("TMUX"),
            ssh: set("SSH_CONNECTION") || set("SSH_TTY"),
            allow_passthrough: matches!(var(PASSTHROUGH_VAR).as_str(), "1" | "on" | "yes"),
        }
    }
}

/// tmux's state, when frameaudit runs inside it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TmuxInfo {
    /// `tmux display -p '#{version}'` (`3.3a`), if it answered.
    pub version: Option<String>,
    /// The pane's `allow-passthrough` (`on`, `off`, `all`), if it answered.
    pub passthrough: Option<String>,
}

impl TmuxInfo {
    /// Whether passthrough is on for the pane.
    pub fn passthrough_on(&self) -> bool {
        matches!(self.passthrough.as_deref(), Some("on" | "all"))
    }

    /// (major, minor) of the version (`3.3a` → (3, 3), `next-3.5` → (3, 5)).
    pub fn version_number(&self) -> Option<(u32, u32)> {
        let v = self.version.as_deref()?;
        let v = v.trim_start_matches(|c: char| !c.is_ascii_digit());
        let mut parts = v.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor: String = parts
            .next()
            .unwrap_or("0")
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        Some((major, minor.parse().unwrap_or(0)))
    }
}

/// What the terminal answered to the query (`term::query`): nothing when it was not asked
/// or did not answer in time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answers {
    /// The query was sent (there was a terminal to ask).
    pub asked: bool,
    /// The query was sent and the terminal's status report (the last answer) came back.
    pub answered: bool,
    /// The primary device attributes (`CSI ? 63 ; 4 ; … c`): `4` is sixel.
    pub device_attributes: Option<Vec<u32>>,
    /// XTVERSION answers (`kitty(0.26.5)`, `XTerm(379)`, `tmux 3.4`): tmux's own, and the
    /// outer terminal's when it was asked through passthrough.
    pub versions: Vec<String>,
    /// The kitty graphics query was answered `OK`.
    pub kitty_graphics: bool,
    /// The cell size in pixels from `CSI 16 t` (width, height).
    pub cell_from_query: Option<(u16, u16)>,
    /// The cell size in pixels from the window size (`TIOCGWINSZ`: pixels over cells).
    pub cell_from_winsize: Option<(u16, u16)>,
    /// The outer terminal was asked through tmux's passthrough.
    pub through_passthrough: bool,
}

impl Answers {
    /// Whether the device attributes offer sixel graphics.
    pub fn sixel(&self) -> bool {
        self.device_attributes
            .as_ref()
            .is_some_and(|a| a.iter().skip(1).any(|&x| x == 4))
    }

    /// The cell size in pixels: the terminal's own answer first, the window size else.
    pub fn cell(&self) -> Option<(u16, u16)> {
        self.cell_from_query
            .or(self.cell_from_winsize)
            .filter(|&(w, h)| w > 0 && h > 0)
    }

    /// The XTVERSION answer naming `name` (case-insensitive prefix), if any.
    pub fn version_of(&self, name: &str) -> Option<&str> {
        self.versions.iter().map(String::as_str).find(|v| {
            v.to_ascii_lowercase()
                .starts_with(&name.to_ascii_lowercase())
        })
    }
}

/// The numbers of a version text (`kitty(0.26.5)` → [0, 26, 5]).
pub fn version_numbers(text: &str) -> Vec<u32> {
    let start = text
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(text.len());
    text[start..]
        .split(|c: char| !c.is_ascii_digit())
        .take_while(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// The first kitty that draws Unicode placeholders, which ratatui-image places images with.
pub const KITTY_PLACEHOLDERS: [u32; 2] = [0, 28];

/// How frames will be drawn, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The protocol.
    pub mode: ImageMode,
    /// The cell size in pixels the pictures are fitted to (`None`: unknown, half blocks).
    pub cell: Option<(u16, u16)>,
    /// Escape sequences go through tmux's passthrough to the outer terminal.
    pub tmux_wrap: bool,
    /// Kitty images are placed directly at their cells (kitty before 0.28, which draws no
    /// Unicode placeholders).
    pub kitty_direct: bool,
    /// Why this protocol, in a sentence.
    pub reason: String,
    /// What the user can change to get better pictures.
    pub advice: Vec<String>,
}

/// Whether frameaudit talks to the outer terminal through tmux, and whether it must turn
/// passthrough on for that (and off again on exit): only where the pane allows it already
/// or the user lets frameaudit ([`PASSTHROUGH_VAR`]). (use, turn on)
pub fn passthrough_plan(env: &TermEnv, tmux: Option<&TmuxInfo>) -> (bool, bool) {
    match tmux {
        Some(t) if env.tmux => {
            let on = t.passthrough_on();
            (on || env.allow_passthrough, !on && env.allow_passthrough)
        }
        _ => (false, false),
    }
}

/// The protocol to draw frames with: `asked` is `--images` (`None` or `Some(Auto)`: choose),
/// `tmux` what tmux said when inside it, `a` the terminal's answers.
pub fn choose(
    asked: Option<ImageMode>,
    env: &TermEnv,
    tmux: Option<&TmuxInfo>,
    a: &Answers,
) -> Choice {
    let cell = a.cell();
    let mut advice = Vec::new();
    let in_tmux = env.tmux && tmux.is_some();
    let (through, _) = passthrough_plan(env, tmux);
    let offers = offers(env, in_tmux, through, a);
    let direct = offers
        .iter()
        .any(|o| o.mode == ImageMode::Kitty && o.works && o.direct);
    let done = |mode, reason: String, advice: Vec<String>, wrap: bool| Choice {
        kitty_direct: mode == ImageMode::Kitty && direct,
        mode,
        cell: if mode == ImageMode::Halfblocks || mode == ImageMode::None {
            None
        } else {
            cell
        },
        tmux_wrap: wrap && mode != ImageMode::Sixel,
        reason,
        advice,
    };
    match asked {
        Some(ImageMode::None) => {
            return done(
                ImageMode::None,
                "--images none: text stand-ins".into(),
                advice,
                false,
            );
        }
        Some(ImageMode::Halfblocks) => {
            return done(
                ImageMode::Halfblocks,
                "--images halfblocks".into(),
                advice,
                false,
            );
        }
        _ => {}
    }
    // What was asked, if it can be drawn; else why not, and the best there is.
    let asked = asked.filter(|m| *m != ImageMode::Auto);
    if let Some(want) = asked {
        let found = offers.iter().find(|o| o.mode == want);
        match found {
            Some(o) if o.works && cell.is_some() => {
                return done(
                    want,
                    format!("--images {}: {}", name(want), o.why),
                    advice,
                    o.wrap,
                );
            }
            Some(o) if !o.works => {
                advice.push(format!(
                    "--images {} cannot work here: {}",
                    name(want),
                    o.why
                ));
            }
            _ if cell.is_none() => {
                advice.push(format!(
                    "--images {} needs the cell size in pixels, which the terminal did not \
                     report (CSI 16 t, TIOCGWINSZ)",
                    name(want)
                ));
            }
            // Asked for a protocol the terminal did not offer: the user may know better
            // (a terminal that does not answer queries), so it is used.
            _ => {
                return done(
                    want,
                    format!(
                        "--images {}: asked for, although the terminal did not say it can",
                        name(want)
                    ),
                    advice,
                    in_tmux && through,
                );
            }
        }
    }
    if let Some(o) = offers.iter().find(|o| o.works) {
        if cell.is_some() {
            return done(o.mode, o.why.clone(), advice, o.wrap);
        }
        advice.push(format!(
            "{} is offered, but the terminal did not report its cell size in pixels \
             (CSI 16 t, TIOCGWINSZ), so pictures could not be sized to their cells",
            name(o.mode)
        ));
    }
    // Half blocks: say why, and what would give pictures. A protocol that is there but
    // would draw wrong says why it is not used.
    let unusable = offers
        .iter()
        .find(|o| !o.works)
        .map(|o| format!("{} graphics not used: {}", name(o.mode), o.why));
    if in_tmux && !through {
        advice.push(format!(
            "tmux: `tmux set -g allow-passthrough on` (or {PASSTHROUGH_VAR}=1, which turns \
             it on for frameaudit's pane and back off on exit) lets kitty or iTerm2 graphics \
             of the outer terminal through"
        ));
    }
    let why = if let Some(u) = unusable {
        format!("{u}: half blocks")
    } else if in_tmux {
        let t = tmux.cloned().unwrap_or_default();
        let v = t.version.as_deref().unwrap_or("?");
        let sixel = if t.version_number().is_some_and(|v| v >= (3, 4)) {
            format!("tmux {v} was built without sixel")
        } else {
            format!("tmux {v} draws no sixel (3.4 or later, built with --enable-sixel, does)")
        };
        let outer = if through {
            "the outer terminal offers no graphics that tmux lets through"
        } else {
            "no graphics of the outer terminal get through"
        };
        format!("inside tmux, {sixel}, and {outer}: half blocks")
    } else if !a.asked {
        "no terminal was asked (none to ask): half blocks, which every colour terminal draws"
            .to_string()
    } else if !a.answered {
        "the terminal did not answer the query (no sixel, kitty or iTerm2 graphics known): \
         half blocks, which every colour terminal draws"
            .to_string()
    } else {
        "the terminal offers no sixel, kitty or iTerm2 graphics: half blocks".to_string()
    };
    if !in_tmux && !a.sixel() && a.version_of("xterm").is_some() {
        advice.push(
            "xterm draws sixel when started as a VT340: `xterm -ti vt340` (or the resource \
             `XTerm*decTerminalID: vt340`)"
                .into(),
        );
    }
    advice.push("--images halfblocks|none chooses without asking the terminal".into());
    done(ImageMode::Halfblocks, why, advice, false)
}

/// A protocol the terminal offers, whether it draws right, and why.
struct Offer {
    mode: ImageMode,
    works: bool,
    why: String,
    wrap: bool,
    /// Kitty images placed directly rather than with Unicode placeholders.
    direct: bool,
}

/// The protocols offered, best first.
fn offers(env: &TermEnv, in_tmux: bool, through: bool, a: &Answers) -> Vec<Offer> {
    let mut out = Vec::new();
    // Outside tmux every answer is the terminal's; inside, only those that came through
    // passthrough are the outer terminal's (tmux answers device attributes itself).
    let outer = !in_tmux || through;
    let kitty = a.version_of("kitty");
    let ghostty = a.version_of("ghostty");
    if outer {
        if let Some(v) = kitty {
            let n = version_numbers(v);
            let placeholders = n.as_slice() >= KITTY_PLACEHOLDERS.as_slice();
            // Before 0.28 kitty draws images placed directly at the cursor, which tmux (that
            // moves text but not images) would leave behind.
            let works = placeholders || (a.kitty_graphics && !in_tmux);
            out.push(Offer {
                mode: ImageMode::Kitty,
                works,
                why: if placeholders {
                    format!("{v} draws kitty graphics with Unicode placeholders")
                } else if works {
                    format!(
                        "{v} draws kitty graphics placed directly at their cells (the Unicode \
                         placeholders of kitty 0.28 are not there yet)"
                    )
                } else {
                    format!(
                        "{v} is older than kitty 0.28, which first draws the Unicode \
                         placeholders frameaudit places kitty images with inside tmux (upgrade \
                         kitty, or run frameaudit outside tmux)"
                    )
                },
                wrap: in_tmux,
                direct: !placeholders,
            });
        } else if let Some(v) = ghostty.filter(|_| a.kitty_graphics) {
            out.push(Offer {
                mode: ImageMode::Kitty,
                works: true,
                why: format!("{v} draws kitty graphics with Unicode placeholders"),
                wrap: in_tmux,
                direct: false,
            });
        } else if a.kitty_graphics
            && !in_tmux
            && a.versions.is_empty()
            && (env.kitty_window_id || env.term.contains("kitty"))
        {
            // A kitty too old to give its version: images placed directly, which every
            // kitty with the graphics protocol draws.
            out.push(Offer {
                mode: ImageMode::Kitty,
                works: true,
                why: format!(
                    "kitty (TERM={}, no version given) draws kitty graphics placed directly at \
                     their cells",
                    env.term
                ),
                wrap: false,
                direct: true,
            });
        } else if a.kitty_graphics {
            // WezTerm and Konsole answer the graphics query but draw no placeholders.
            out.push(Offer {
                mode: ImageMode::Kitty,
                works: false,
                why: format!(
                    "{} answers the kitty graphics query but is not known to draw Unicode \
                     placeholders (kitty 0.28 or later, ghostty)",
                    a.versions
                        .first()
                        .map_or("the terminal".to_string(), |v| v.clone())
                ),
                wrap: in_tmux,
                direct: false,
            });
        }
        let iterm = a.version_of("iterm2").or(a.version_of("wezterm"));
        let iterm_env = matches!(env.term_program.as_str(), "iTerm.app" | "WezTerm")
            || env.lc_terminal.contains("iTerm");
        if iterm.is_some() || iterm_env {
            let who = iterm.map_or_else(
                || {
                    if env.lc_terminal.contains("iTerm") {
                        format!("LC_TERMINAL={}", env.lc_terminal)
                    } else {
                        format!("TERM_PROGRAM={}", env.term_program)
                    }
                },
                str::to_string,
            );
            out.push(Offer {
                mode: ImageMode::Iterm,
                works: true,
                why: format!("{who}: iTerm2 inline images"),
                wrap: in_tmux,
                direct: false,
            });
        }
    }
    if a.sixel() {
        let who = if in_tmux {
            "tmux (built with sixel)".to_string()
        } else {
            a.versions
                .first()
                .cloned()
                .unwrap_or_else(|| format!("the terminal (TERM={})", env.term))
        };
        out.push(Offer {
            mode: ImageMode::Sixel,
            works: true,
            why: format!("{who} offers sixel graphics (device attributes)"),
            wrap: false,
            direct: false,
        });
    }
    out
}

/// The `--images` name of a mode.
pub fn name(mode: ImageMode) -> &'static str {
    match mode {
        ImageMode::None => "none",
        ImageMode::Halfblocks => "halfblocks",
        ImageMode::Kitty => "kitty",
        ImageMode::Sixel => "sixel",
        ImageMode::Iterm => "iterm",
        ImageMode::Auto => "auto",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(da: &[u32], versions: &[&str], kitty: bool, cell: Option<(u16, u16)>) -> Answers {
        Answers {
            asked: true,
            answered: true,
            device_attributes: Some(da.to_vec()),
            versions: versions.iter().map(|v| v.to_string()).collect(),
            kitty_graphics: kitty,
            cell_from_query: cell,
            ..Answers::default()
        }
    }

    fn env(term: &str) -> TermEnv {
        TermEnv {
            term: term.into(),
            ..TermEnv::default()
        }
    }

    fn tmux_env() -> TermEnv {
        TermEnv {
            term: "tmux-256color".into(),
            term_program: "tmux".into(),
            tmux: true,
            ..TermEnv::default()
        }
    }

    fn auto(env: &TermEnv, tmux: Option<&TmuxInfo>, a: &Answers) -> Choice {
        choose(Some(ImageMode::Auto), env, tmux, a)
    }

    // What Debian 12's xterm 379 answers started with `-ti vt340` (sixel) and without.
    const VT340: [u32; 10] = [63, 1, 2, 4, 6, 9, 15, 16, 22, 28];
    const VT420: [u32; 8] = [64, 1, 2, 6, 9, 15, 16, 22];

    #[test]
    fn xterm_as_vt340_draws_sixel_fitted_to_its_cells() {
        let a = Answers {
            cell_from_winsize: Some((9, 18)),
            ..answered(&VT340, &["XTerm(379)"], false, None)
        };
        let c = auto(&env("xterm"), None, &a);
        assert_eq!(c.mode, ImageMode::Sixel);
        assert_eq!(c.cell, Some((9, 18)));
        assert!(!c.tmux_wrap);
        assert!(c.reason.contains("XTerm(379) offers sixel"), "{}", c.reason);
    }

    #[test]
    fn xterm_without_sixel_says_how_to_get_it() {
        let a = answered(&VT420, &["XTerm(379)"], false, Some((9, 18)));
        let c = auto(&env("xterm"), None, &a);
        assert_eq!(c.mode, ImageMode::Halfblocks);
        assert!(c.advice.iter().any(|x| x.contains("xterm -ti vt340")));
    }

    #[test]
    fn mlterm_draws_sixel() {
        let a = answered(
            &[63, 1, 2, 3, 4, 6, 7, 15, 18, 22, 29],
            &[],
            false,
            Some((10, 22)),
        );
        let c = auto(&env("mlterm"), None, &a);
        assert_eq!((c.mode, c.cell), (ImageMode::Sixel, Some((10, 22))));
    }

    #[test]
    fn kitty_0_26_places_images_directly_never_with_placeholders() {
        let e = TermEnv {
            kitty_window_id: true,
            ..env("xterm-kitty")
        };
        let a = answered(&[62], &["kitty(0.26.5)"], true, Some((9, 20)));
        let c = auto(&e, None, &a);
        assert_eq!(c.mode, ImageMode::Kitty);
        assert!(c.kitty_direct, "no Unicode placeholders before 0.28");
        assert!(c.reason.contains("placed directly"), "{}", c.reason);
        // Inside tmux direct placements would stay behind when tmux moves the text: half
        // blocks, saying why.
        let t = TmuxInfo {
            version: Some("3.3a".into()),
            passthrough: Some("on".into()),
        };
        let through = Answers {
            through_passthrough: true,
            ..answered(
                &[1, 2],
                &["tmux 3.3a", "kitty(0.26.5)"],
                true,
                Some((9, 20)),
            )
        };
        let c = auto(&tmux_env(), Some(&t), &through);
        assert_eq!(c.mode, ImageMode::Halfblocks);
        assert!(c.reason.contains("older than kitty 0.28"), "{}", c.reason);
        // Asked for by name it is still refused there: it would draw tofu.
        let c = choose(Some(ImageMode::Kitty), &tmux_env(), Some(&t), &through);
        assert_eq!(c.mode, ImageMode::Halfblocks);
        assert!(c.advice[0].contains("--images kitty cannot work here"));
    }

    #[test]
    fn kitty_without_a_version_places_images_directly() {
        let a = answered(&[62], &[], true, Some((9, 20)));
        let c = auto(&env("xterm-kitty"), None, &a);
        assert_eq!((c.mode, c.kitty_direct), (ImageMode::Kitty, true));
        // Another terminal answering the query without a version: not trusted.
        let c = auto(&env("xterm-256color"), None, &a);
        assert_eq!(c.mode, ImageMode::Halfblocks);
    }

    #[test]
    fn kitty_0_28_and_later_draws_kitty() {
        for v in ["kitty(0.28.0)", "kitty(0.35.2)", "kitty(1.0)"] {
            let a = answered(&[62], &[v], true, Some((9, 20)));
            let c = auto(&env("xterm-kitty"), None, &a);
            assert_eq!(c.mode, ImageMode::Kitty, "{v}");
            assert!(!c.kitty_direct, "{v}");
        }
    }

    #[test]
    fn wezterm_draws_iterm_images_not_its_partial_kitty() {
        let e = TermEnv {
            term_program: "WezTerm".into(),
            ..env("xterm-256color")
        };
        let a = answered(
            &[65, 4, 6, 18, 22],
            &["WezTerm 20240203"],
            true,
            Some((8, 16)),
        );
        let c = auto(&e, None, &a);
        assert_eq!(c.mode, ImageMode::Iterm);
    }

    #[test]
    fn iterm2_over_ssh_is_known_by_lc_terminal() {
        let e = TermEnv {
            lc_terminal: "iTerm2".into(),
            ssh: true,
            ..env("xterm-256color")
        };
        let a = answered(&[62, 4], &["iTerm2 3.5.0"], false, Some((7, 16)));
        let c = auto(&e, None, &a);
        assert_eq!(c.mode, ImageMode::Iterm);
    }

    #[test]
    fn plain_ssh_with_no_answer_is_half_blocks() {
        let e = TermEnv {
            ssh: true,
            ..env("xterm-256color")
        };
        let asked = Answers {
            asked: true,
            ..Answers::default()
        };
        let c = auto(&e, None, &asked);
        assert_eq!(c.mode, ImageMode::Halfblocks);
        assert!(c.reason.contains("did not answer"), "{}", c.reason);
        // With no terminal to ask, the reason says that, not that it did not answer.
        let c = auto(&e, None, &Answers::default());
        assert_eq!(c.mode, ImageMode::Halfblocks);
        assert!(c.reason.contains("no terminal was asked"), "{}", c.reason);
    }

    #[test]
    fn no_cell_size_means_no_pixel_protocol() {
        let a = answered(&VT340, &["XTerm(379)"], false, None);
        let c = auto(&env("xterm"), None, &a);
        assert_eq!(c.mode, ImageMode::Halfblocks);
        assert!(c.advice.iter().any(|x| x.contains("cell size")));
    }

    #[test]
    fn tmux_3_3_without_passthrough_is_half_blocks_with_the_option_to_set() {
        let t = TmuxInfo {
            version: Some("3.3a".into()),
            passthrough: Some("off".into()),
        };
        // tmux answers the device attributes itself: no sixel; kitty's env is stale.
        let e = TermEnv {
            kitty_window_id: true,
            ..tmux_env()
        };
        let a = answered(&[1, 2], &["tmux 3.3a"], false, Some((9, 20)));
        let c = auto(&e, Some(&t), &a);
        assert_eq!(c.mode, ImageMode::Halfblocks);
        assert!(
            c.reason.contains("tmux 3.3a draws no sixel"),
            "{}",
            c.reason
        );
        assert!(c.advice.iter().any(|x| x.contains("allow-passthrough on")));
        assert_eq!(passthrough_plan(&e, Some(&t)), (false, false));
    }

    #[test]
    fn tmux_with_sixel_draws_sixel_itself_without_passthrough() {
        let t = TmuxInfo {
            version: Some("3.4".into()),
            passthrough: Some("off".into()),
        };
        let a = answered(&[62, 4], &["tmux 3.4"], false, Some((9, 20)));
        let c = auto(&tmux_env(), Some(&t), &a);
        assert_eq!(c.mode, ImageMode::Sixel);
        assert!(!c.tmux_wrap);
    }

    #[test]
    fn tmux_with_passthrough_on_reaches_a_new_kitty() {
        let t = TmuxInfo {
            version: Some("3.3a".into()),
            passthrough: Some("on".into()),
        };
        let a = Answers {
            through_passthrough: true,
            ..answered(&[1, 2], &["tmux 3.3a", "kitty(0.32.2)"], true, None)
        };
        let a = Answers {
            cell_from_winsize: Some((9, 20)),
            ..a
        };
        let c = auto(&tmux_env(), Some(&t), &a);
        assert_eq!(c.mode, ImageMode::Kitty);
        assert!(c.tmux_wrap);
    }

    #[test]
    fn tmux_passthrough_is_turned_on_only_when_the_user_allows_it() {
        let t = TmuxInfo {
            version: Some("3.3a".into()),
            passthrough: Some("off".into()),
        };
        let allowed = TermEnv {
            allow_passthrough: true,
            ..tmux_env()
        };
        assert_eq!(passthrough_plan(&allowed, Some(&t)), (true, true));
        assert_eq!(passthrough_plan(&tmux_env(), Some(&t)), (false, false));
        let on = TmuxInfo {
            passthrough: Some("all".into()),
            ..t
        };
        assert_eq!(passthrough_plan(&tmux_env(), Some(&on)), (true, false));
    }

    #[test]
    fn asked_protocols_and_versions() {
        let a = answered(&VT340, &["XTerm(379)"], false, Some((9, 18)));
        let c = choose(Some(ImageMode::None), &env("xterm"), None, &a);
        assert_eq!(c.mode, ImageMode::None);
        // A protocol the terminal did not offer, asked for by name, is used.
        let c = choose(Some(ImageMode::Iterm), &env("xterm"), None, &a);
        assert_eq!(c.mode, ImageMode::Iterm);
        assert_eq!(version_numbers("kitty(0.26.5)"), vec![0, 26, 5]);
        assert_eq!(
            TmuxInfo {
                version: Some("next-3.5".into()),
                passthrough: None
            }
            .version_number(),
            Some((3, 5))
        );
    }
}
