//! Answer text: the normalisation of SPEC.md §1.3 (`norm`), the SQuAD-style Token-F1 of
//! §7, and the sanitiser that keeps text from data files from driving the terminal.

use rustc_hash::FxHashMap;

/// `norm(s)` of SPEC.md §1.3: whitespace stripped at both ends and upper-cased; `None` when
/// nothing is left (an unparseable answer).
pub fn norm(s: &str) -> Option<String> {
    let t = s.trim();
    if t.is_empty() {
        None
    } else {
        Some(t.to_uppercase())
    }
}

/// Python's `str.isspace`, which `strip()` and `split()` use: Unicode `White_Space` plus the
/// four ASCII information separators (U+001C..U+001F).
fn is_py_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A character of Python's Unicode `\w`.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The token list `N(s)` of SPEC.md §7: lower-case, delete ASCII punctuation, blank the
/// articles `a`, `an`, `the` where they are whole words, split on whitespace.
pub fn f1_tokens(s: &str) -> Vec<String> {
    // Python's str.lower maps char by char (no final-sigma context), so do the same.
    let cleaned: String = s
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    // `\b(a|an|the)\b` matches exactly the maximal runs of word characters that equal an
    // article, so walking those runs is the same substitution without a regex engine.
    let mut out = String::with_capacity(cleaned.len());
    let mut rest = cleaned.as_str();
    while let Some(c) = rest.chars().next() {
        if is_word_char(c) {
            let end = rest.find(|c: char| !is_word_char(c)).unwrap_or(rest.len());
            let word = &rest[..end];
            out.push_str(if matches!(word, "a" | "an" | "the") {
                " "
            } else {
                word
            });
            rest = &rest[end..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out.split(is_py_whitespace)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Token-F1 of one prediction against one reference, in [0, 1].
fn f1(pred: &[String], gold: &[String]) -> f64 {
    if pred.is_empty() || gold.is_empty() {
        return if pred.is_empty() && gold.is_empty() {
            1.0
        } else {
            0.0
        };
    }
    let mut counts: FxHashMap<&str, i64> = FxHashMap::default();
    for t in gold {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    let mut common = 0usize;
    for t in pred {
        if let Some(n) = counts.get_mut(t.as_str())
            && *n > 0
        {
            *n -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let p = common as f64 / pred.len() as f64;
    let r = common as f64 / gold.len() as f64;
    (2.0 * p * r) / (p + r)
}

/// `TokenF1Score(pred, golds)` of SPEC.md §7: 100 times the best F1 over the references.
pub fn token_f1_score<S: AsRef<str>>(pred: &str, golds: &[S]) -> f64 {
    let p = f1_tokens(pred);
    let best = golds
        .iter()
        .map(|g| f1(&p, &f1_tokens(g.as_ref())))
        .fold(0.0_f64, f64::max);
    100.0 * best
}

/// Whether a character must never reach a terminal raw: C0 and C1 controls, DEL, and the
/// bidirectional overrides and isolates that can make text read differently than it is.
fn is_unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Text from a data file made safe to print: every control character, escape sequence
/// introducer and bidi override becomes a visible, inert escape such as `\x1b` or `\u{202e}`.
/// Borrowed when nothing needs to change, which is the usual case.
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe_char(c) {
            let code = c as u32;
            if code < 0x100 {
                out.push_str(&format!("\\x{code:02x}"));
            } else {
                out.push_str(&format!("\\u{{{code:x}}}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norm_strips_and_uppercases() {
        assert_eq!(norm("  b \n"), Some("B".to_string()));
        assert_eq!(norm("   "), None);
        assert_eq!(norm(""), None);
        assert_eq!(norm("\u{3000}c\u{a0}"), Some("C".to_string()));
    }

    #[test]
    fn spec_examples() {
        let cases: &[(&str, &[&str], f64)] = &[
            (
                "The cat sat on the mat.",
                &["a cat on a mat"],
                85.71428571428571,
            ),
            ("the", &["a"], 100.0),
            ("", &["something"], 0.0),
            ("red red blue", &["red blue blue"], 66.66666666666666),
            ("don't", &["do not"], 0.0),
            ("A man-made lake", &["man made lake"], 40.0),
            ("Paris", &["paris, France", "Paris"], 100.0),
        ];
        for (pred, golds, want) in cases {
            let got = token_f1_score(pred, golds);
            assert!(
                (got - want).abs() < 1e-9,
                "{pred:?} vs {golds:?}: {got} != {want}"
            );
        }
    }

    #[test]
    fn articles_only_as_whole_words() {
        assert_eq!(f1_tokens("anthem an them"), vec!["anthem", "them"]);
        assert_eq!(f1_tokens("a€b"), vec!["€b"]);
    }

    #[test]
    fn conformance_vectors() {
        let text = include_str!("../../tests/data/conformance/token_f1_vectors.jsonl");
        let mut n = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).expect("vector line");
            let pred = v["pred"].as_str().expect("pred");
            let golds: Vec<String> = match &v["gold"] {
                serde_json::Value::String(s) => vec![s.clone()],
                serde_json::Value::Array(a) => a
                    .iter()
                    .map(|g| g.as_str().expect("gold").to_string())
                    .collect(),
                other => panic!("bad gold {other}"),
            };
            let want = v["score"].as_f64().expect("score");
            let got = token_f1_score(pred, &golds);
            assert!((got - want).abs() < 1e-9, "{line}: got {got}");
            n += 1;
        }
        assert_eq!(n, 56);
    }

    #[test]
    fn sanitize_makes_escapes_inert() {
        assert_eq!(sanitize("plain"), "plain");
        assert_eq!(sanitize("a\x1b]52;c;aGk=\x07b"), "a\\x1b]52;c;aGk=\\x07b");
        assert_eq!(sanitize("x\u{202e}y\u{9b}"), "x\\u{202e}y\\x9b");
        assert_eq!(sanitize("tab\there"), "tab\\x09here");
    }
}
