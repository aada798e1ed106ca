//! Names the command line selects (models, configurations, protocols, benchmarks, items)
//! checked against the dataset. A name that matches nothing is an error that names the
//! closest names ("did you mean") and the available ones, never an empty result.

use std::fmt::Write as _;

use crate::core::analysis::params::Params;
use crate::core::matrix::ResponseMatrix;
use crate::core::text::show_id;

use super::Failure;

/// Exit code of a selection that matches nothing (as clap exits on a bad argument).
pub const EXIT_USAGE: u8 = 2;

/// At most this many available names are listed; the rest are counted.
const LISTED: usize = 40;

/// Edit distance between two strings in characters: insertions, deletions, substitutions
/// and swaps of two neighbours (`mian` is one edit from `main`).
fn distance(a: &[char], b: &[char]) -> usize {
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, x) in d.iter_mut().take(w).enumerate() {
        *x = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The available names closest to `name`, best first: the same name in another case,
/// then names that contain it (or that it contains), then names a few edits away.
pub fn closest<'a>(name: &str, available: &[&'a str]) -> Vec<&'a str> {
    let want: Vec<char> = name.to_lowercase().chars().collect();
    let want_s: String = want.iter().collect();
    // A typo of more than a third of the name is not the name any more.
    let most = (want.len() / 3).max(1);
    let mut ranked: Vec<(usize, usize, &str)> = available
        .iter()
        .filter_map(|&cand| {
            let c = cand.to_lowercase();
            let cc: Vec<char> = c.chars().collect();
            let d = distance(&want, &cc);
            if c == want_s {
                Some((0, 0, cand))
            } else if !want_s.is_empty() && (c.contains(&want_s) || want_s.contains(&c)) {
                Some((1, d, cand))
            } else if d <= most {
                Some((2, d, cand))
            } else {
                None
            }
        })
        .collect();
    ranked.sort();
    ranked.into_iter().take(5).map(|r| r.2).collect()
}

/// Quoted, escaped names joined by commas; at most `LISTED` of them.
fn listed(names: &[&str]) -> String {
    let mut s = names
        .iter()
        .take(LISTED)
        .map(|n| show_id(n).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED {
        let _ = write!(s, ", ... and {} more", names.len() - LISTED);
    }
    s
}

/// The lines that explain names of `kind` (e.g. "model") given to `option` that match
/// none of `available`: one per name with its closest names, then the available ones.
pub fn explain(option: &str, kind: &str, missing: &[&str], available: &[&str]) -> String {
    explain_in(option, kind, missing, available, "the dataset")
}

/// As [`explain`], for names looked for in `place` (e.g. "this item's grid").
pub fn explain_in(
    option: &str,
    kind: &str,
    missing: &[&str],
    available: &[&str],
    place: &str,
) -> String {
    let mut s = String::new();
    for name in missing {
        // Quoted as the list below shows them (not Rust's debug form, which doubled the
        // backslash of each escape, naming another id than the list's).
        let _ = write!(s, "{option}: no {kind} \"{}\" in {place}", show_id(name));
        let near = closest(name, available);
        if !near.is_empty() {
            let near: Vec<String> = near.iter().map(|n| format!("\"{}\"", show_id(n))).collect();
            let _ = write!(s, "; did you mean {}?", near.join(" or "));
        }
        s.push('\n');
    }
    let _ = write!(
        s,
        "  available {kind}s ({}): {}",
        available.len(),
        listed(available)
    );
    s
}

/// Prints `why` as an error and gives the failure that exits with `EXIT_USAGE`.
pub fn fail(why: &str) -> anyhow::Error {
    for (i, line) in why.lines().enumerate() {
        if i == 0 {
            eprintln!("frameaudit: error: {line}");
        } else {
            eprintln!("{line}");
        }
    }
    Failure { code: EXIT_USAGE }.into()
}

/// The names of `wanted` that are not among `available`, in the order given.
fn missing<'a>(wanted: &'a [String], available: &[&str]) -> Vec<&'a str> {
    // A set, not a scan of the list: a dataset may have a million configurations.
    let available: rustc_hash::FxHashSet<&str> = available.iter().copied().collect();
    wanted
        .iter()
        .map(String::as_str)
        .filter(|w| !available.contains(w))
        .collect()
}

/// Distinct configuration names of the dataset, by budget, then by name (a name under
/// several budgets comes at its lowest).
pub fn config_names(m: &ResponseMatrix) -> Vec<&str> {
    crate::core::analysis::grid::names_by_budget(m.configs.iter().map(|c| (c.budget, &*c.name)))
}

/// Checks the analysis options' names against the dataset. `--models` of which none is a
/// model, any `--configs` or `--cascade-stages` name that is no configuration (a model
/// lacking one is excluded, a cascade missing a stage is dropped, so either would empty
/// every analysis) are errors; `--models` of which some match, and a `--primary` that is
/// no protocol, are warnings that name them.
pub fn check_analysis(m: &ResponseMatrix, p: &Params) -> anyhow::Result<()> {
    let mut errors = Vec::new();
    if let Some(wanted) = &p.models {
        let models: Vec<&str> = m.models.names().collect();
        let miss = missing(wanted, &models);
        if !miss.is_empty() {
            let text = explain("--models", "model", &miss, &models);
            if miss.len() == wanted.len() {
                errors.push(text);
            } else {
                let matched = wanted.len() - miss.len();
                eprintln!(
                    "frameaudit: warning: {} of the {} models of --models match none in the dataset (analysing the {matched} others):",
                    miss.len(),
                    wanted.len()
                );
                eprintln!("{text}");
            }
        }
    }
    let mut configs = None;
    for (option, list) in [
        ("--configs", &p.configs),
        ("--cascade-stages", &p.cascade_stages),
    ] {
        if let Some(wanted) = list {
            let configs = configs.get_or_insert_with(|| config_names(m));
            let miss = missing(wanted, configs);
            if !miss.is_empty() {
                errors.push(explain(option, "configuration", &miss, configs));
            }
        }
    }
    // A nuisance no replicate names would leave every floor empty.
    if let Some(wanted) = &p.nuisances {
        let r = &m.replicates;
        let known: Vec<&str> = r.nuisances.iter().map(|&n| r.names.name(n)).collect();
        let miss = missing(wanted, &known);
        if !miss.is_empty() {
            errors.push(explain("--nuisances", "nuisance", &miss, &known));
        }
    }
    // Only a warning: the default primary protocol need not be in a dataset.
    let protocols: Vec<&str> = m.protocols.names().collect();
    if !protocols.contains(&p.primary.as_str()) {
        let text = explain("--primary", "protocol", &[p.primary.as_str()], &protocols);
        eprintln!("frameaudit: warning: {text}");
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(fail(&errors.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_typo_suggests_the_name_first() {
        let names = ["LLaVA-NeXT-Video-7B", "Qwen2.5-VL-7B", "Qwen2.5-VL-3B"];
        assert_eq!(closest("Qwen2.5-VL-7b", &names)[0], "Qwen2.5-VL-7B");
        assert_eq!(
            closest("16f", &["16f_151k", "32f_151k", "textonly"]),
            ["16f_151k"]
        );
        assert!(closest("zzzzzz", &names).is_empty());
        assert_eq!(closest("mian", &["main", "cached"]), ["main"]);
    }

    #[test]
    fn configuration_names_come_once_by_budget_then_name() {
        use crate::core::load::cells::read_cells;
        use crate::core::matrix::MatrixBuilder;
        let mut text = String::new();
        for (model, config, frames) in [
            ("a", "32f", 32),
            ("a", "8f", 8),
            ("a", "b8", 8),
            ("b", "8f", 8),
            ("b", "32f", 32),
            ("b", "0f", 0),
        ] {
            text += &format!(
                "{{\"model\":\"{model}\",\"item_id\":\"i\",\"config\":\"{config}\",\"frames\":{frames},\"pred\":\"A\",\"gold\":\"A\"}}\n"
            );
        }
        let mut b = MatrixBuilder::new();
        let file = b.add_file(std::path::Path::new("t.jsonl"));
        read_cells(text.as_bytes(), None, &mut b, &file).expect("io");
        let (m, _) = b.finish().expect("valid");
        assert_eq!(config_names(&m), ["0f", "8f", "b8", "32f"]);
        let wanted = ["8f".to_string(), "9f".to_string(), "32f".to_string()];
        assert_eq!(missing(&wanted, &config_names(&m)), ["9f"]);
    }

    #[test]
    fn explain_names_the_miss_the_guess_and_the_list() {
        let s = explain("--models", "model", &["qwen"], &["Qwen", "Other"]);
        assert!(
            s.starts_with("--models: no model \"qwen\" in the dataset; did you mean \"Qwen\"?")
        );
        assert!(s.ends_with("available models (2): Qwen, Other"), "{s}");
        // A name holding an escape is quoted as the list shows it, its backslash not
        // doubled (which would name an id holding a backslash).
        let s = explain("--models", "model", &["qwen\u{1b}"], &["Qwen\u{1b}"]);
        assert_eq!(
            s,
            "--models: no model \"qwen\\x1b\" in the dataset; did you mean \"Qwen\\x1b\"?\n  available models (1): Qwen\\x1b"
        );
    }
}
