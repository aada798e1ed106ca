//! The option letter of a free-text multiple-choice answer ("B", "(B)", "B.", "B) knife",
//! "The answer is B", "Answer: B", "b"): one function for every importer, so the same
//! text always gives the same letter whatever harness wrote it.

/// The option letter (upper case) that `text` answers, among the first `n_options` letters
/// (A.. ; 4 when unknown, at most 26), or `None` when the text names none or is ambiguous.
pub fn option_letter(text: &str, n_options: Option<usize>) -> Option<char> {
    let n = n_options.unwrap_or(4).clamp(1, 26);
    let valid =
        |c: char| c.is_ascii_alphabetic() && ((c.to_ascii_uppercase() as u8 - b'A') as usize) < n;
    let t = text
        .trim()
        .trim_matches(|c: char| matches!(c, '*' | '`' | '"' | '\''));
    if t.is_empty() {
        return None;
    }
    // A letter alone, or a letter opening the answer: "B", "B.", "(B)", "B) knife", "[B]".
    let opening = t.trim_start_matches(['(', '[', '{', ' ']);
    let mut chars = opening.chars();
    if let Some(c) = chars.next()
        && valid(c)
    {
        match chars.next() {
            None => return Some(c.to_ascii_uppercase()),
            Some(next) if !next.is_alphanumeric() => return Some(c.to_ascii_uppercase()),
            _ => {}
        }
    }
    // "The answer is B", "Answer: B", "answer (B)", "Option B", "the correct option is (c)".
    let lower = t.to_ascii_lowercase();
    for cue in [
        "answer is",
        "answer:",
        "answer",
        "option is",
        "option",
        "choice is",
        "choice",
    ] {
        if let Some(pos) = lower.rfind(cue) {
            let rest =
                t[pos + cue.len()..].trim_start_matches([' ', ':', '(', '[', '*', '"', '\'']);
            let mut rc = rest.chars();
            if let Some(c) = rc.next()
                && valid(c)
                && rc.next().is_none_or(|n| !n.is_alphanumeric())
            {
                return Some(c.to_ascii_uppercase());
            }
        }
    }
    // Exactly one standalone capital option letter anywhere ("I think C fits").
    let words: Vec<char> = t
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() == 1)
        .filter_map(|w| w.chars().next())
        .filter(|&c| c.is_ascii_uppercase() && valid(c) && c != 'I')
        .collect();
    match words.as_slice() {
        [c] => Some(*c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_from_the_usual_answer_shapes() {
        let cases: &[(&str, Option<char>)] = &[
            ("B", Some('B')),
            ("b", Some('B')),
            (" (B) ", Some('B')),
            ("B.", Some('B')),
            ("B) knife", Some('B')),
            ("B. a knife", Some('B')),
            ("[C]", Some('C')),
            ("**D**", Some('D')),
            ("The answer is B", Some('B')),
            ("The answer is (c).", Some('C')),
            ("Answer: B", Some('B')),
            ("answer: a", Some('A')),
            ("Best option: C", Some('C')),
            ("I think C fits best", Some('C')),
            ("Because the man holds a knife", None),
            ("", None),
            ("E", None),
            ("Apple", None),
        ];
        for (text, want) in cases {
            assert_eq!(option_letter(text, Some(4)), *want, "{text:?}");
        }
        assert_eq!(option_letter("E", Some(5)), Some('E'));
        assert_eq!(option_letter("(e) none", Some(5)), Some('E'));
    }
}
