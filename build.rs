//! The commit `frameaudit --version` names: `git rev-parse --short HEAD` when the source is
//! a git checkout of its own, else `unknown` (a crate built from a tarball or a vendored copy
//! builds the same, without git).

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let dir = Path::new(&dir);
    // Only the checkout the crate is the top of: a tarball unpacked inside some other
    // repository must not take that repository's commit.
    let own = git(dir, &["rev-parse", "--show-toplevel"]).is_some_and(|top| {
        match (Path::new(&top).canonicalize(), dir.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    });
    let commit = own
        .then(|| git(dir, &["rev-parse", "--short", "HEAD"]))
        .flatten()
        .filter(|c| c.chars().all(|c| c.is_ascii_hexdigit()));
    println!(
        "cargo:rustc-env=FRAMEAUDIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    // Built again when HEAD moves (a commit, a checkout), not on every edit; a file that
    // is not there is not named (cargo would build again every time).
    if own {
        let mut files = vec!["HEAD".to_string(), "packed-refs".to_string()];
        files.extend(git(dir, &["symbolic-ref", "-q", "HEAD"]));
        for f in files {
            if let Some(p) = git(dir, &["rev-parse", "--git-path", &f])
                && dir.join(&p).exists()
            {
                println!("cargo:rerun-if-changed={}", dir.join(p).display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
