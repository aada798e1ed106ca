//! `frameaudit doctor terminal`: asks the terminal (and tmux) what the audit screens would,
//! and says what was found, which image protocol the screens use and why, and what the user
//! can change. The words are a pure function of what was found, so they are tested.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::Result;

use crate::core::text::sanitize;
use crate::term::ImageMode;
use crate::term::detect::{self, Answers, Choice, TermEnv, TmuxInfo};
use crate::term::query;

/// Asks the terminal as the screens do (`asked`: `--images`, `Auto` when not given) and
/// prints the findings.
pub fn terminal(images: ImageMode) -> Result<()> {
    let probe = query::Probe::start();
    let mut typed = 0usize;
    let mut asked = false;
    let started = std::time::Instant::now();
    // The controlling terminal is asked even when the report goes to a file or a pipe. Raw
    // mode only for the query: the answers are not echoed, and a key typed meanwhile is
    // counted (there is no screen for it to reach).
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok();
    let answers = match tty {
        Some(mut tty) if crossterm::terminal::enable_raw_mode().is_ok() => {
            let sent = query::send_to(&mut tty, probe.through, probe.env.tmux);
            let a = query::read_answers_from(&tty, sent, probe.through, |_| typed += 1);
            let _ = crossterm::terminal::disable_raw_mode();
            asked = sent.is_some();
            a
        }
        _ => query::read_answers(None, probe.through, |_| {}),
    };
    let took = started.elapsed();
    let choice = detect::choose(Some(images), &probe.env, probe.tmux.as_ref(), &answers);
    let text = report(
        &probe.env,
        probe.tmux.as_ref(),
        &answers,
        &choice,
        asked.then_some(took),
    );
    drop(probe);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if typed > 0 {
        writeln!(out, "({typed} key(s) typed during the query were ignored)")?;
    }
    Ok(())
}

/// The findings as text: the environment, tmux, the answers, the protocol and why, what to
/// change. `took`: how long the answers took (`None`: nothing was asked).
pub fn report(
    env: &TermEnv,
    tmux: Option<&TmuxInfo>,
    a: &Answers,
    choice: &Choice,
    took: Option<std::time::Duration>,
) -> String {
    let shown = |v: &str| {
        if v.is_empty() {
            "(unset)".to_string()
        } else {
            sanitize(v).into_owned()
        }
    };
    let yes = |b: bool| if b { "yes" } else { "no" };
    let mut s = String::new();
    let _ = writeln!(s, "environment");
    let _ = writeln!(s, "  TERM            {}", shown(&env.term));
    let _ = writeln!(s, "  TERM_PROGRAM    {}", shown(&env.term_program));
    let _ = writeln!(s, "  LC_TERMINAL     {}", shown(&env.lc_terminal));
    let _ = writeln!(
        s,
        "  KITTY_WINDOW_ID {}",
        if env.kitty_window_id {
            "set"
        } else {
            "(unset)"
        }
    );
    let _ = writeln!(s, "  over SSH        {}", yes(env.ssh));
    match tmux {
        Some(t) => {
            let _ = writeln!(
                s,
                "  tmux            {}, allow-passthrough {}{}",
                t.version.as_deref().map_or("(no answer)".into(), shown),
                t.passthrough.as_deref().map_or("(no answer)".into(), shown),
                if env.allow_passthrough {
                    format!(
                        " ({}=1: frameaudit may turn it on)",
                        detect::PASSTHROUGH_VAR
                    )
                } else {
                    String::new()
                }
            );
        }
        None => {
            let _ = writeln!(s, "  tmux            not inside tmux");
        }
    }
    let _ = writeln!(s, "terminal's answers");
    match took {
        None => {
            let _ = writeln!(s, "  not asked: no terminal (/dev/tty) to ask");
        }
        Some(t) if !a.answered => {
            let _ = writeln!(
                s,
                "  no answer within {} ms",
                query::ANSWER_TIMEOUT.as_millis().max(t.as_millis())
            );
        }
        Some(t) => {
            let _ = writeln!(
                s,
                "  answered in {} ms{}",
                t.as_millis(),
                if a.through_passthrough {
                    " (the outer terminal asked through tmux's passthrough too)"
                } else {
                    ""
                }
            );
        }
    }
    let _ = writeln!(
        s,
        "  version         {}",
        if a.versions.is_empty() {
            "(none)".to_string()
        } else {
            a.versions.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "  attributes      {}  (sixel: {})",
        a.device_attributes.as_ref().map_or("(none)".into(), |v| {
            v.iter().map(u32::to_string).collect::<Vec<_>>().join(";")
        }),
        yes(a.sixel())
    );
    let _ = writeln!(s, "  kitty graphics  {}", yes(a.kitty_graphics));
    let px =
        |c: Option<(u16, u16)>| c.map_or("(unknown)".to_string(), |(w, h)| format!("{w}x{h} px"));
    let _ = writeln!(
        s,
        "  cell size       {} (CSI 16 t), {} (window size)",
        px(a.cell_from_query),
        px(a.cell_from_winsize)
    );
    let _ = writeln!(s, "pictures");
    let _ = writeln!(
        s,
        "  protocol        {}{}{}",
        detect::name(choice.mode),
        if choice.kitty_direct {
            " (placed directly)"
        } else {
            ""
        },
        choice.cell.map_or(String::new(), |(w, h)| format!(
            ", fitted to {w}x{h} px cells"
        ))
    );
    let _ = writeln!(s, "  why             {}", choice.reason);
    if !choice.advice.is_empty() {
        let _ = writeln!(s, "what you can change");
        for line in &choice.advice {
            let _ = writeln!(s, "  - {line}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kitty_0_26_says_how_its_images_are_placed() {
        let env = TermEnv {
            term: "xterm-kitty".into(),
            kitty_window_id: true,
            ..TermEnv::default()
        };
        let a = Answers {
            answered: true,
            versions: vec!["kitty(0.26.5)".into()],
            kitty_graphics: true,
            device_attributes: Some(vec![62]),
            cell_from_query: Some((8, 17)),
            ..Answers::default()
        };
        let c = detect::choose(Some(ImageMode::Auto), &env, None, &a);
        let text = report(
            &env,
            None,
            &a,
            &c,
            Some(std::time::Duration::from_millis(3)),
        );
        assert!(
            text.contains("protocol        kitty (placed directly), fitted to 8x17 px cells"),
            "{text}"
        );
        assert!(
            text.contains("the Unicode placeholders of kitty 0.28 are not there yet"),
            "{text}"
        );
        assert!(
            text.contains("cell size       8x17 px (CSI 16 t)"),
            "{text}"
        );
    }

    #[test]
    fn tmux_without_passthrough_names_the_option_and_the_variable() {
        let env = TermEnv {
            term: "tmux-256color".into(),
            term_program: "tmux".into(),
            tmux: true,
            ..TermEnv::default()
        };
        let t = TmuxInfo {
            version: Some("3.3a".into()),
            passthrough: Some("off".into()),
        };
        let a = Answers {
            answered: true,
            device_attributes: Some(vec![1, 2]),
            versions: vec!["tmux 3.3a".into()],
            cell_from_winsize: Some((7, 15)),
            ..Answers::default()
        };
        let c = detect::choose(Some(ImageMode::Auto), &env, Some(&t), &a);
        let text = report(
            &env,
            Some(&t),
            &a,
            &c,
            Some(std::time::Duration::from_millis(3)),
        );
        assert!(
            text.contains("tmux            3.3a, allow-passthrough off"),
            "{text}"
        );
        assert!(text.contains("tmux set -g allow-passthrough on"), "{text}");
        assert!(text.contains(detect::PASSTHROUGH_VAR), "{text}");
    }
}
