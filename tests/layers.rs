//! The layers of the source hold: no two sibling modules of `src/core` import each other,
//! directly or round a longer cycle, neither the core nor the CLI reaches into the TUI, and
//! the TUI does not reach into the CLI.
//! The paths are read from the source text (comments and literals left out), so a cycle
//! is named here with the lines that make it instead of being found by a reader later.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One Rust source file: its module path from the crate root and its text.
struct Source {
    file: PathBuf,
    module: Vec<String>,
    text: String,
}

/// Every `.rs` file under `src/<top>`, with its module path (`src/core/frames/mod.rs` is
/// `core::frames`, `src/core/frames/name.rs` is `core::frames::name`), in path order.
fn sources(top: &str) -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![src.join(top)];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read src dir").flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let rel = file
                .strip_prefix(&src)
                .expect("under src")
                .with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            let text = fs::read_to_string(&file).expect("read source");
            Source { file, module, text }
        })
        .collect()
}

/// The code of `text` with comments, string and character literals blanked out (newlines
/// kept, so line numbers still hold): a path in a doc comment or a message is no import.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if !prev_ident && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r'))) {
            // A raw string `r#"..."#` ends at a quote followed by as many hashes.
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            let hashes = c[j..].iter().take_while(|&&h| h == '#').count();
            j += hashes;
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            j += 1;
            while j < c.len() && !(c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')))
            {
                blank(&mut out, c[j]);
                j += 1;
            }
            i = j + 1 + hashes;
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                if let Some(&ch) = c.get(i) {
                    blank(&mut out, ch);
                }
                i += 1;
            }
            i += 1;
        } else if c[i] == '\'' && (c.get(i + 1) == Some(&'\\') || c.get(i + 2) == Some(&'\'')) {
            // A character literal; a lifetime (`'a`) has no closing quote two chars on.
            // An escape (`'\''`) is passed over whole, so its quote ends nothing.
            i += if c[i + 1] == '\\' { 3 } else { 2 };
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The part of `code` before its first `#[cfg(test)]` line: what the library itself uses.
fn before_tests(code: &str) -> &str {
    let mut end = 0;
    for line in code.split_inclusive('\n') {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        end += line.len();
    }
    &code[..end]
}

/// A path written in the code, with the line it starts on.
struct Written {
    line: usize,
    segments: Vec<String>,
}

/// Every path of `code` that starts at `crate::`, `super::` or `self::`, use groups expanded
/// (`use super::{a, b::{c, d}}` gives `super::a`, `super::b::c`, `super::b::d`).
fn paths(code: &str) -> Vec<Written> {
    let tokens = tokenize(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (tok, line) = &tokens[i];
        let after_sep = i > 0 && tokens[i - 1].0 == "::";
        let starts = matches!(tok.as_str(), "crate" | "super" | "self")
            && tokens.get(i + 1).is_some_and(|t| t.0 == "::");
        if starts && !after_sep {
            let mut found = Vec::new();
            i = tree(&tokens, i, Vec::new(), &mut found);
            out.extend(found.into_iter().map(|segments| Written {
                line: *line,
                segments,
            }));
        } else {
            i += 1;
        }
    }
    out
}

/// Identifiers, `::` and single punctuation characters of `code`, each with its line.
fn tokenize(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = code.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\n' {
            line += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let mut word = ch.to_string();
            while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                word.push(n);
                chars.next();
            }
            out.push((word, line));
        } else if ch == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.push(("::".into(), line));
        } else if !ch.is_whitespace() {
            out.push((ch.to_string(), line));
        }
    }
    out
}

/// Reads the path (or use tree) at `tokens[i]`, prefixed by `prefix`, into `found`; returns
/// the index after it.
fn tree(
    tokens: &[(String, usize)],
    mut i: usize,
    prefix: Vec<String>,
    found: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix;
    loop {
        match tokens.get(i).map(|t| t.0.as_str()) {
            Some("{") => {
                i += 1;
                while tokens.get(i).is_some_and(|t| t.0 != "}") {
                    if tokens[i].0 == "," {
                        i += 1;
                    } else {
                        i = tree(tokens, i, path.clone(), found);
                    }
                }
                return i + 1;
            }
            Some("self") if !path.is_empty() => {
                found.push(path);
                return i + 1;
            }
            Some(word) if word.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                path.push(word.to_owned());
                i += 1;
                if tokens.get(i).is_some_and(|t| t.0 == "::") {
                    i += 1;
                    continue;
                }
                // `as` renames what is already named; the rename is no module.
                if tokens.get(i).is_some_and(|t| t.0 == "as") {
                    i += 2;
                }
                found.push(path);
                return i;
            }
            // `*`, `<` after `::` and the like: the path so far is what is named.
            _ => {
                found.push(path);
                return i + 1;
            }
        }
    }
}

/// `segments` as written in module `from`, from the crate root: `super` climbs,
/// `self` stays, `crate` starts at the root.
fn absolute(from: &[String], segments: &[String]) -> Vec<String> {
    let mut at: Vec<String> = from.to_vec();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        _ => {}
    }
    while rest.first().is_some_and(|s| s == "super") {
        at.pop();
        rest = &rest[1..];
    }
    at.extend(rest.iter().cloned());
    at
}

/// An import between two sibling modules, and where it is written.
type Edges = BTreeMap<(String, String), String>;

/// The imports between sibling modules of `src/core`, each with the first line that makes
/// it. A module and its own submodules are no edge (`analysis` and `analysis::open`).
fn sibling_edges(top: &str) -> Edges {
    let files = sources(top);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|s| s.module.clone()).collect();
    let mut edges = Edges::new();
    for s in &files {
        let code = code_only(&s.text);
        for w in paths(before_tests(&code)) {
            let target = absolute(&s.module, &w.segments);
            // The module the path leads into: the longest prefix that is a file.
            let Some(module) = (1..=target.len())
                .rev()
                .map(|n| target[..n].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            let Some(split) = s.module.iter().zip(&module).position(|(a, b)| a != b) else {
                continue;
            };
            let parent = s.module[..split].join("::");
            let key = (
                format!("{parent}::{}", s.module[split]),
                format!("{parent}::{}", module[split]),
            );
            edges
                .entry(key)
                .or_insert_with(|| format!("{}:{}", s.file.display(), w.line));
        }
    }
    edges
}

/// A cycle of `edges` as its modules in order, the first repeated at the end; `None` if
/// there is none.
fn find_cycle(edges: &Edges) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    // Depth first from every module; a module met again on the current path closes a cycle.
    fn visit<'a>(
        at: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| *m == at) {
            let mut cycle: Vec<String> = path[start..].iter().map(|m| m.to_string()).collect();
            cycle.push(at.to_string());
            return Some(cycle);
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for n in next.get(at).into_iter().flatten() {
            if let Some(c) = visit(n, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    next.keys()
        .find_map(|m| visit(m, &next, &mut Vec::new(), &mut done))
}

/// The sibling modules of `src/<top>` import no cycle; `known` are imports that exist, so
/// that an empty graph (the checker no longer reading the source) fails instead of passing.
fn assert_no_sibling_cycle(top: &str, known: &[(&str, &str)]) {
    let edges = sibling_edges(top);
    for edge in known {
        assert!(
            edges.contains_key(&(edge.0.to_string(), edge.1.to_string())),
            "the checker no longer sees {} -> {}",
            edge.0,
            edge.1
        );
    }
    if let Some(cycle) = find_cycle(&edges) {
        let lines: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                format!(
                    "  {} -> {} ({})",
                    w[0],
                    w[1],
                    edges[&(w[0].clone(), w[1].clone())]
                )
            })
            .collect();
        panic!("import cycle {}:\n{}", cycle.join(" -> "), lines.join("\n"));
    }
}

#[test]
fn core_siblings_import_no_cycle() {
    assert_no_sibling_cycle(
        "core",
        &[
            ("core::dataset", "core::matrix"),
            ("core::rules", "core::sampling"),
        ],
    );
}

/// Inside the TUI too: the state (`app`) imports no view, views import the state and the
/// theme, so any one file can be changed alone.
#[test]
fn tui_files_import_no_cycle() {
    assert_no_sibling_cycle(
        "tui",
        &[("tui::view", "tui::app"), ("tui::app", "tui::input")],
    );
}

/// Every place in the files of `src/<top>` (a folder: `tui/app`) that names a path into
/// `crate::<target>` (a module path: `tui::view`).
fn uses(top: &str, target: &str) -> Vec<String> {
    let target: Vec<&str> = target.split("::").collect();
    let mut found = Vec::new();
    for s in sources(top) {
        for w in paths(&code_only(&s.text)) {
            let path = absolute(&s.module, &w.segments);
            if path.len() >= target.len() && path.iter().zip(&target).all(|(a, b)| a == b) {
                found.push(format!(
                    "{}:{}: {}",
                    s.file.display(),
                    w.line,
                    w.segments.join("::")
                ));
            }
        }
    }
    found
}

#[test]
fn core_does_not_use_the_tui() {
    let found = uses("core", "tui");
    assert!(
        found.is_empty(),
        "the core uses the TUI:\n{}",
        found.join("\n")
    );
}

#[test]
fn cli_does_not_use_the_tui() {
    let found = uses("cli", "tui");
    assert!(
        found.is_empty(),
        "the CLI uses the TUI:\n{}",
        found.join("\n")
    );
}

/// What the two front ends share lives below them (`src/term.rs`, the core), so that either
/// can change without the other (docs/architecture.md).
#[test]
fn tui_does_not_use_the_cli() {
    let found = uses("tui", "cli");
    assert!(
        found.is_empty(),
        "the TUI uses the CLI:\n{}",
        found.join("\n")
    );
    // The checker still sees the paths the TUI does take, so that an empty list means
    // something.
    assert!(
        !uses("tui", "term").is_empty(),
        "the checker no longer sees the TUI's imports of crate::term"
    );
}

/// The app's state and its reducer (`src/tui/app`) know nothing of how they are drawn: a
/// view reads the state, never the other way round, so the state can be tested, and a view
/// changed, alone (docs/architecture.md).
#[test]
fn tui_state_does_not_use_the_views() {
    let found = uses("tui/app", "tui::view");
    assert!(
        found.is_empty(),
        "the app's state uses the views:\n{}",
        found.join("\n")
    );
    assert!(
        !uses("tui/app", "tui::input").is_empty(),
        "the checker no longer sees the app's imports of crate::tui::input"
    );
    assert!(
        !uses("tui/view", "tui::app").is_empty(),
        "the checker no longer sees the views' imports of crate::tui::app"
    );
}
