//! What a long command is doing, on stderr while it runs: a spinner naming the phase with its
//! elapsed time, drawn only when stderr is a terminal (never into a pipe, a file or a log),
//! and erased when the phase ends so the command's own lines read as before.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::core::text::sanitize;

/// The phase line of a running command; erased when dropped.
pub struct Phase(Option<ProgressBar>);

impl Phase {
    /// Starts showing `what` (a phase such as `reading per_item.csv`) when stderr is a
    /// terminal; a phase that does nothing otherwise.
    pub fn start(what: &str) -> Phase {
        if !std::io::stderr().is_terminal() {
            return Phase(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message(sanitize(what).into_owned());
        // Drawn at once, not at the first tick: a phase shorter than a tick still says
        // what ran, and what a user sees does not depend on the machine's speed.
        bar.tick();
        bar.enable_steady_tick(Duration::from_millis(120));
        Phase(Some(bar))
    }

    /// Names the next phase on the same line.
    pub fn set(&self, what: &str) {
        if let Some(bar) = &self.0 {
            bar.set_message(sanitize(what).into_owned());
            bar.tick();
        }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// The name of the file or folder a phase reads, without its directories.
pub fn file_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
