//! Issue 41: shell conventions: completion scripts, a manual page, the commit in
//! `--version`, and a suggestion for a mistyped command.

mod common;

use std::path::Path;
use std::process::Command;

use common::{frameaudit, repo, stderr, stdout};

/// The commands every completion script must offer.
const COMMANDS: [&str; 6] = ["report", "list", "import", "plot", "completions", "man"];

#[test]
fn completions_name_the_commands_in_each_shell() {
    for (shell, marker) in [
        ("bash", "_frameaudit()"),
        ("zsh", "#compdef frameaudit"),
        ("fish", "complete -c frameaudit"),
    ] {
        let o = frameaudit(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        for c in COMMANDS {
            assert!(script.contains(c), "{shell}: no {c}");
        }
        // An option of a command, not only the names.
        assert!(script.contains("show-configs"), "{shell}");
    }
    if common::runs("bash", &["--version"]) {
        let o = frameaudit(&["completions", "bash"]);
        let tmp = tempfile::tempdir().expect("tmp");
        let file = tmp.path().join("frameaudit.bash");
        std::fs::write(&file, &o.stdout).expect("write");
        assert!(
            common::runs("bash", &["-n", file.to_str().expect("utf8")]),
            "the bash script does not parse"
        );
    }
    let o = frameaudit(&["completions", "tcsh"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn man_prints_a_roff_page_with_name_and_synopsis() {
    let o = frameaudit(&["man"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH frameaudit 1"), "{page}");
    assert!(page.contains(".SH NAME"), "{page}");
    assert!(page.contains(".SH SYNOPSIS"), "{page}");
    assert!(page.contains("report"), "the commands are listed");
    // The pages the list refers to (frameaudit-report(1)) are there too, a subcommand's too.
    for (path, title) in [
        (&["man", "report"][..], ".TH frameaudit-report 1"),
        (
            &["man", "audit", "merge"][..],
            ".TH frameaudit-audit-merge 1",
        ),
    ] {
        let o = frameaudit(path);
        assert!(o.status.success(), "{}", stderr(&o));
        // The program and its version where `man` shows them, not the subcommand's name.
        let version = format!("\"frameaudit {}\"", env!("CARGO_PKG_VERSION"));
        assert!(
            stdout(&o).contains(&format!("{title}  {version}")),
            "{path:?}: {}",
            stdout(&o)
        );
        assert!(stdout(&o).contains(".SH OPTIONS"), "{path:?}");
    }
    // `help` has no page: no page lists one (the top page, nor a group's).
    for path in [&["man"][..], &["man", "audit"][..]] {
        let page = stdout(&frameaudit(path));
        assert!(page.contains(".SH SUBCOMMANDS"), "{path:?}: {page}");
        assert!(!page.contains("\\-help("), "{path:?}: {page}");
    }
    // A name that is no command: a usage error with a guess.
    let o = frameaudit(&["man", "reprot"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("did you mean \"report\""),
        "{}",
        stderr(&o)
    );
    let o = frameaudit(&["man", "report", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("has no commands"), "{}", stderr(&o));
}

fn built_commit() -> String {
    let o = frameaudit(&["--version"]);
    assert!(o.status.success());
    let v = stdout(&o);
    let rest = v
        .trim()
        .strip_prefix(&format!(
            "frameaudit {} (commit ",
            env!("CARGO_PKG_VERSION")
        ))
        .unwrap_or_else(|| panic!("{v:?}"));
    rest.strip_suffix(')')
        .unwrap_or_else(|| panic!("{v:?}"))
        .to_string()
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let commit = built_commit();
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(repo())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(h) => assert_eq!(commit, h),
        None => assert_eq!(commit, "unknown"),
    }
}

/// Runs build.rs, compiled on its own, as cargo would for a crate at `dir`; its
/// `FRAMEAUDIT_COMMIT`.
fn build_script_commit(exe: &Path, dir: &Path) -> String {
    let o = Command::new(exe)
        .env("CARGO_MANIFEST_DIR", dir)
        .output()
        .expect("run build script");
    assert!(o.status.success());
    let out = stdout(&o);
    out.lines()
        .find_map(|l| l.strip_prefix("cargo:rustc-env=FRAMEAUDIT_COMMIT="))
        .unwrap_or_else(|| panic!("{out}"))
        .to_string()
}

/// A crate built from a tarball has no git: the build still succeeds and says `unknown`,
/// also when the tarball is unpacked inside another repository.
#[test]
fn the_build_script_falls_back_to_unknown_outside_a_checkout() {
    if !common::runs("rustc", &["--version"]) || !common::runs("git", &["--version"]) {
        common::skip_note(format_args!(
            "rustc or git is absent; skipping the build script check"
        ));
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let exe = tmp.path().join("build-script");
    let o = Command::new("rustc")
        .args(["--edition", "2024", "-o"])
        .arg(&exe)
        .arg(repo().join("build.rs"))
        .output()
        .expect("rustc");
    assert!(o.status.success(), "{}", stderr(&o));
    let tarball = tmp.path().join("frameaudit-0.1.0");
    std::fs::create_dir(&tarball).expect("mkdir");
    assert_eq!(build_script_commit(&exe, &tarball), "unknown");

    // A checkout of its own names its commit; the same folder inside another one does not.
    let outer = tmp.path().join("outer");
    let inner = outer.join("vendor/frameaudit");
    std::fs::create_dir_all(&inner).expect("mkdir");
    let git = |dir: &Path, args: &[&str]| {
        let o = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git");
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    git(&outer, &["init", "-q"]);
    std::fs::write(inner.join("Cargo.toml"), "").expect("write");
    git(&outer, &["add", "."]);
    git(&outer, &["commit", "-qm", "outer"]);
    assert_eq!(build_script_commit(&exe, &inner), "unknown");
    let head = git(&outer, &["rev-parse", "--short", "HEAD"]);
    assert_eq!(build_script_commit(&exe, &outer), head);
}

#[test]
fn a_mistyped_command_gets_a_suggestion_and_a_usage_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_frameaudit"))
            .args(args)
            .current_dir(tmp.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run")
    };
    for args in [
        &["reprot"][..],
        &["reprot", "data"],
        &["complitions", "bash"],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let want = if args[0] == "reprot" {
            "did you mean report?"
        } else {
            "did you mean completions?"
        };
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    // A dataset of that name is still a dataset: its report is printed off a terminal.
    let ds = tmp.path().join("reprot");
    std::fs::create_dir(&ds).expect("mkdir");
    std::fs::copy(
        repo().join("fixtures/demo/cells.jsonl"),
        ds.join("cells.jsonl"),
    )
    .expect("copy");
    let o = run(&["reprot", "--boot", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).is_empty());
    assert!(!stderr(&o).contains("did you mean"), "{}", stderr(&o));
    // A word like no command is left to the dataset loader, as before.
    let o = run(&["zzzz"]);
    assert!(!stderr(&o).contains("did you mean"), "{}", stderr(&o));
    assert!(stderr(&o).contains("zzzz"), "{}", stderr(&o));
}
