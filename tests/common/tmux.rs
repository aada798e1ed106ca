//! A frameaudit session in tmux, for the end-to-end tests: keys are typed, the screen is
//! read back.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux command on the tests' own server: a socket of this test process (`-L`) and an
/// empty configuration (`-f`), so that neither a tmux the developer runs the tests in (its
/// sessions, its global environment, a `NO_COLOR` set there) nor their tmux.conf reaches
/// the panes. The server is started without `NO_COLOR` or `TMUX` from the test's
/// environment; a test wanting `NO_COLOR` exports it in the pane's command.
pub fn tmux() -> Command {
    static CONF: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let conf = CONF.get_or_init(|| {
        let conf = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("empty-{}.tmux.conf", std::process::id()));
        std::fs::write(&conf, "").expect("an empty tmux.conf");
        conf
    });
    let mut c = Command::new("tmux");
    c.arg("-L")
        .arg(format!("frameaudit-tests-{}", std::process::id()))
        .arg("-f")
        .arg(conf)
        .env_remove("NO_COLOR")
        .env_remove("TMUX");
    c
}

/// Whether tmux can be run (the tests that need it skip with a note when not).
pub fn tmux_available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        super::skip_note(format_args!(
            "tmux is absent; skipping the end-to-end terminal tests"
        ));
    }
    ok
}

/// A tmux session running frameaudit, killed when dropped.
pub struct Tmux {
    pub name: String,
}

impl Tmux {
    pub fn start(name: &str, dataset: &Path, annotator: &str) -> Tmux {
        Tmux::start_with(name, dataset, annotator, "")
    }

    /// Starts frameaudit after `prelude` (shell commands run first in the same process).
    pub fn start_with(name: &str, dataset: &Path, annotator: &str, prelude: &str) -> Tmux {
        let args = [
            dataset.display().to_string(),
            "--annotator".into(),
            annotator.into(),
        ];
        Tmux::run(name, &args, prelude)
    }

    /// Starts frameaudit with these arguments (each quoted for the shell).
    pub fn run(name: &str, args: &[String], prelude: &str) -> Tmux {
        let _ = tmux().args(["kill-session", "-t", name]).output();
        let args: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
        let cmd = format!(
            "{prelude} exec {} {}",
            env!("CARGO_BIN_EXE_frameaudit"),
            args.join(" ")
        );
        let cmd = format!("bash -c {}", shell_quote(&cmd));
        // Tests run in parallel on one tmux server, which exits when its last session ends:
        // a session started at that moment meets a dying server. Start it on the next one.
        let mut tries = 0;
        let out = loop {
            let out = tmux()
                .args([
                    "new-session",
                    "-d",
                    "-s",
                    name,
                    "-x",
                    "120",
                    "-y",
                    "40",
                    &cmd,
                ])
                .output()
                .expect("tmux");
            let dying = String::from_utf8_lossy(&out.stderr).contains("server exited unexpectedly");
            tries += 1;
            if out.status.success() || !dying || tries == 5 {
                break out;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(
            out.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmux {
            name: name.to_string(),
        }
    }

    /// Starts frameaudit with these arguments under a shell that writes its exit status to
    /// `status` when it ends (`exit=N`); [`Tmux::child_pid`] is frameaudit's pid.
    pub fn run_recording_exit(name: &str, args: &[String], status: &Path) -> Tmux {
        let args: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
        let prelude = format!(
            "{} {}; echo exit=$? > {}; exit",
            env!("CARGO_BIN_EXE_frameaudit"),
            args.join(" "),
            shell_quote(&status.display().to_string())
        );
        // `run` ends the command with `exec frameaudit ...`, which the `exit` before it
        // never reaches.
        Tmux::run(name, &[], &prelude)
    }

    /// The pid of the pane's process's child (frameaudit under [`Tmux::run_recording_exit`]).
    pub fn child_pid(&self) -> Option<u32> {
        let parent = self.pid();
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // pid (comm) state ppid ...: the command name may hold spaces, so from its end.
            let rest = &stat[stat.rfind(')')? + 1..];
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent).then_some(pid)
        })
    }

    pub fn screen(&self) -> String {
        let out = tmux()
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("capture");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text`.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |s| s.contains(text))
    }

    /// The screen once `ready` holds of it (within 20 s), `what` naming what was awaited
    /// when it never does. A screen is drawn in parts: a test that looks for a title and
    /// then reads rows can see the title before the rows; `ready` states all it reads.
    pub fn wait_until(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if ready(&s) {
                return s;
            }
            assert!(
                Instant::now() < end,
                "timed out waiting for {what}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            let out = tmux()
                .args(["send-keys", "-t", &self.name, k])
                .output()
                .expect("send-keys");
            assert!(out.status.success());
            std::thread::sleep(Duration::from_millis(80));
        }
    }

    pub fn text(&self, s: &str) {
        tmux()
            .args(["send-keys", "-t", &self.name, "-l", s])
            .output()
            .expect("send-keys");
        std::thread::sleep(Duration::from_millis(80));
    }

    pub fn pid(&self) -> u32 {
        let out = tmux()
            .args(["list-panes", "-t", &self.name, "-F", "#{pane_pid}"])
            .output()
            .expect("list-panes");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("pid")
    }

    /// Whether the program is still running in the pane.
    pub fn alive(&self) -> bool {
        tmux()
            .args(["has-session", "-t", &self.name])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Waits up to `within` for the program to end; whether it has.
    pub fn wait_exit(&self, within: std::time::Duration) -> bool {
        let end = std::time::Instant::now() + within;
        while self.alive() && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        !self.alive()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = tmux().args(["kill-session", "-t", &self.name]).output();
    }
}

pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
