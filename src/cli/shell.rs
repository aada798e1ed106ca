//! What a shell user expects of a command: completion scripts, a manual page, and a
//! suggestion when a mistyped command would otherwise be read as a dataset path.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use anyhow::Result;
use clap::CommandFactory;

use super::args::Cli;

/// Writes the completion script of `shell` for every command and option.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut cmd = Cli::command();
    // Into memory first: clap_complete panics on a write that fails (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "frameaudit", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(())
}

/// Writes the manual page of the command at `path` (`["audit", "merge"]`; empty:
/// frameaudit's own), as roff: the pages the main page's list of commands refers to
/// (`frameaudit-report(1)`).
pub fn man(path: &[String]) -> Result<()> {
    let mut cmd = Cli::command();
    // Gives each subcommand its display name (`frameaudit-audit-merge`), the page's title.
    cmd.build();
    let mut at = &cmd;
    for name in path {
        at = match at.find_subcommand(name) {
            Some(sub) => sub,
            None => {
                let names: Vec<&str> = at
                    .get_subcommands()
                    .map(|c| c.get_name())
                    .filter(|n| *n != "help")
                    .collect();
                let command = at
                    .get_display_name()
                    .unwrap_or(at.get_name())
                    .replace('-', " ");
                return Err(if names.is_empty() {
                    super::select::fail(&format!(
                        "`{command}` has no commands, so no page of its own"
                    ))
                } else {
                    super::select::fail(&super::select::explain_in(
                        "man",
                        "command",
                        &[name.as_str()],
                        &names,
                        &format!("`{command}`"),
                    ))
                });
            }
        };
    }
    let mut page = Vec::new();
    // Every page names the program and its version where `man` shows them (a subcommand
    // has no version of its own: its name alone stood there), and no page lists `help`,
    // which has none.
    let mut shown = at.clone();
    if shown.find_subcommand("help").is_some() {
        shown = shown.mut_subcommand("help", |h| h.hide(true));
    }
    clap_mangen::Man::new(shown)
        .source(format!("frameaudit {}", env!("CARGO_PKG_VERSION")))
        .manual("frameaudit manual")
        .render(&mut page)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&page)?;
    out.flush()?;
    Ok(())
}

/// The command `first` (the first argument) was likely meant to be, when it is no command,
/// names no file or folder, and is close to a command's name: `reprot` for `report`. A path
/// that exists is a dataset, however it is spelled.
pub fn meant_command(first: &OsString) -> Option<String> {
    let word = first.to_str()?;
    if word.starts_with('-') || word.contains(['/', '.']) || Path::new(word).exists() {
        return None;
    }
    let cmd = Cli::command();
    let names: Vec<&str> = cmd
        .get_subcommands()
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .collect();
    if names.contains(&word) {
        return None;
    }
    // clap's own threshold for its "a similar subcommand exists".
    names
        .into_iter()
        .map(|n| (strsim::jaro(word, n), n))
        .filter(|(s, _)| *s > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n.to_string())
}
