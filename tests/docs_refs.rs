//! References into docs/ hold: every `docs/<name>.md` written in the source, the tests, the
//! benches, the README and the docs themselves names a file that exists, and when a section
//! number follows it (`docs/measures.md §4.2`) that file has a Markdown heading starting with
//! the number. Relative Markdown links in README.md and docs/*.md lead to files that exist,
//! and a `§N` right after a link to a Markdown file is a heading of that file.

use std::collections::HashMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir`, recursively, in path order, leaving out `skip` folders.
fn walk(dir: &Path, skip: &[PathBuf], out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if skip.iter().any(|s| s == &p) {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, skip, out);
        } else if meta.is_file() {
            out.push(p);
        }
    }
}

/// The files scanned: src/, tests/ (not tests/data), benches/, README.md and docs/.
fn scanned_files() -> Vec<PathBuf> {
    let root = repo();
    let mut files = Vec::new();
    let skip = [root.join("tests").join("data")];
    for dir in ["src", "tests", "benches", "docs"] {
        walk(&root.join(dir), &skip, &mut files);
    }
    files.push(root.join("README.md"));
    files
}

/// The section number right after `rest` when it starts with ` §` (or `§`): `4.2` of
/// ` §4.2: ...`. Trailing dots are not part of it (`§3.` at the end of a sentence is `3`).
fn section_after(rest: &str) -> Option<String> {
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let rest = rest.strip_prefix('§')?;
    let mut number = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_digit() {
            number.push(c);
            chars.next();
        } else if c == '.' && number.chars().last().is_some_and(|l| l.is_ascii_digit()) {
            // A dot belongs to the number only when a digit follows it.
            let mut ahead = chars.clone();
            ahead.next();
            if ahead.peek().is_some_and(|d| d.is_ascii_digit()) {
                number.push(c);
                chars.next();
            } else {
                break;
            }
        } else {
            break;
        }
    }
    (!number.is_empty()).then_some(number)
}

/// `docs/<name>.md` references in `text`, each with the section number that follows it, if
/// any, and its line number.
fn doc_refs(text: &str) -> Vec<(usize, String, Option<String>)> {
    let needle = ["docs", "/"].concat();
    let mut refs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(at) = line[from..].find(&needle) {
            let start = from + at;
            from = start + needle.len();
            // Part of a longer path or word (`lmms-eval/docs/`, `mydocs/`): not ours.
            if line[..start]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || "/._-".contains(c))
            {
                continue;
            }
            let tail = &line[from..];
            let name_len = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || "_-".contains(c)))
                .unwrap_or(tail.len());
            let after_name = &tail[name_len..];
            if name_len == 0 || !after_name.starts_with(".md") {
                continue;
            }
            // `docs/x.md5` or `docs/x.mdx` is not a Markdown file name.
            if after_name[3..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
            {
                continue;
            }
            let file = format!("{}{}.md", needle, &tail[..name_len]);
            let section = section_after(&after_name[3..]);
            refs.push((n + 1, file, section));
        }
    }
    refs
}

/// The text of every heading of a Markdown file, `#` marks and spaces taken off, outside
/// fenced code blocks.
fn headings(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !t.starts_with('#') {
            continue;
        }
        let text = t.trim_start_matches('#');
        if text.starts_with(' ') {
            out.push(text.trim().to_string());
        }
    }
    out
}

/// Whether a heading's text starts with `number` as a whole section number: `4.2 Prior
/// fallback` and `1. A dataset` start with `4.2` and `1`, `3.10 Which` does not start with
/// `3.1`.
fn heading_has_number(heading: &str, number: &str) -> bool {
    let Some(rest) = heading.strip_prefix(number) else {
        return false;
    };
    let mut chars = rest.chars();
    match chars.next() {
        None => true,
        Some(c) if c.is_ascii_digit() => false,
        Some('.') => !chars.next().is_some_and(|c| c.is_ascii_digit()),
        Some(_) => true,
    }
}

/// Problems with the references of one text, named by `origin` (a path and line).
fn check_refs(
    origin: &str,
    text: &str,
    docs: &mut HashMap<PathBuf, Option<Vec<String>>>,
) -> Vec<String> {
    let root = repo();
    let mut problems = Vec::new();
    for (line, file, section) in doc_refs(text) {
        let path = root.join(&file);
        let heads = docs
            .entry(path.clone())
            .or_insert_with(|| fs::read_to_string(&path).ok().map(|t| headings(&t)));
        match (heads, section) {
            (None, _) => problems.push(format!("{origin}:{line}: {file} does not exist")),
            (Some(heads), Some(number)) => {
                if !heads.iter().any(|h| heading_has_number(h, &number)) {
                    problems.push(format!(
                        "{origin}:{line}: {file} has no heading numbered §{number}"
                    ));
                }
            }
            (Some(_), None) => {}
        }
    }
    problems
}

/// Lexically normalised `base/target` (`..` and `.` resolved), for link targets.
fn join_relative(base: &Path, target: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in base.join(target).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Problems with the relative links `[text](target)` of a Markdown file at `path`.
fn check_links(
    origin: &str,
    path: &Path,
    text: &str,
    docs: &mut HashMap<PathBuf, Option<Vec<String>>>,
) -> Vec<String> {
    let dir = path.parent().expect("a file has a folder");
    let mut problems = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut from = 0;
        while let Some(at) = line[from..].find("](") {
            let start = from + at + 2;
            let Some(len) = line[start..].find(')') else {
                break;
            };
            from = start + len + 1;
            let target = line[start..start + len].trim();
            let target = target.split_whitespace().next().unwrap_or("");
            if target.is_empty()
                || target.starts_with('#')
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let file = target.split('#').next().unwrap_or(target);
            let resolved = join_relative(dir, file);
            if !resolved.exists() {
                problems.push(format!(
                    "{origin}:{}: link to {target}, which does not exist",
                    n + 1
                ));
                continue;
            }
            if let (true, Some(number)) = (file.ends_with(".md"), section_after(&line[from..])) {
                let heads = docs
                    .entry(resolved.clone())
                    .or_insert_with(|| fs::read_to_string(&resolved).ok().map(|t| headings(&t)));
                let found = heads
                    .as_ref()
                    .is_some_and(|h| h.iter().any(|h| heading_has_number(h, &number)));
                if !found {
                    problems.push(format!(
                        "{origin}:{}: {target} has no heading numbered §{number}",
                        n + 1
                    ));
                }
            }
        }
    }
    problems
}

#[test]
fn every_docs_reference_points_to_a_file_and_a_section() {
    let root = repo();
    let mut docs = HashMap::new();
    let mut problems = Vec::new();
    let mut count = 0;
    for path in scanned_files() {
        // Binary files (fonts, images) hold no references.
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let origin = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        count += doc_refs(&text).len();
        problems.extend(check_refs(&origin, &text, &mut docs));
        let markdown_checked = path == root.join("README.md")
            || (path.parent() == Some(&root.join("docs"))
                && path.extension().is_some_and(|e| e == "md"));
        if markdown_checked {
            problems.extend(check_links(&origin, &path, &text, &mut docs));
        }
    }
    assert!(
        problems.is_empty(),
        "broken references:\n{}",
        problems.join("\n")
    );
    // The code cites the docs on every measure; a scan that finds almost nothing is broken.
    assert!(count > 100, "only {count} docs/ references found");
}

#[test]
fn docs_hold_the_measures_and_the_formats() {
    let root = repo();
    for (file, sections) in [
        (
            "measures.md",
            &["0", "1.7", "2.5", "3.10", "4.2", "8.2", "12", "13.2", "15"][..],
        ),
        ("formats.md", &["1", "2", "3.1", "3.2", "3.3", "4"][..]),
    ] {
        let text = fs::read_to_string(root.join("docs").join(file)).expect(file);
        let heads = headings(&text);
        for s in sections {
            assert!(
                heads.iter().any(|h| heading_has_number(h, s)),
                "docs/{file} lacks §{s}"
            );
        }
    }
}

#[test]
fn the_checker_finds_bad_references() {
    let mut docs = HashMap::new();
    // Built at run time, so that this file's own text holds no bad reference.
    let missing_file = format!("see {}{}.md §1", "docs/", "no-such-file");
    let missing_section = format!("see {}{}.md §4.9 and §99", "docs/", "measures");
    let good = format!("see {}{}.md §4.2.", "docs/", "measures");
    assert_eq!(check_refs("t", &missing_file, &mut docs).len(), 1);
    assert_eq!(check_refs("t", &missing_section, &mut docs).len(), 1);
    assert!(check_refs("t", &good, &mut docs).is_empty());
    // `§3.1` is not `§3.10`; `§1` matches `1. A dataset`.
    assert!(!heading_has_number("3.10 Which identities hold", "3.1"));
    assert!(heading_has_number("3.1 The curve", "3.1"));
    assert!(heading_has_number("1. A dataset", "1"));
    assert!(!heading_has_number("12 Report format", "1"));
    // A link to a file that is not there, and one to a section that is not there.
    let readme = repo().join("README.md");
    let bad_link = format!("[x]({}{}.md) and [y](docs/formats.md) §9", "docs/", "gone");
    assert_eq!(check_links("t", &readme, &bad_link, &mut docs).len(), 2);
}
