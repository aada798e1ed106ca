//! The options of a VLMEvalKit question and the letters of its answer and prediction.
//! VLMEvalKit keeps the options as `candidates`, the text of a Python list
//! (`['A. a cup', "B. Tom's knife"]`, as pandas writes a list column), or as one column per
//! letter (`A`, `B`, ...). Video-MME's `answer` is a letter, but MVBench's and MLVU's is the
//! text of the right option, so both are read.

use crate::core::import::letters::option_letter;

/// The options listed in `candidates` (Python or JSON list text); `None` when it is not a
/// list of strings.
pub fn parse_candidates(text: &str) -> Option<Vec<String>> {
    let mut chars = text.trim().chars().peekable();
    if chars.next()? != '[' {
        return None;
    }
    let mut out = Vec::new();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        match chars.next()? {
            ']' if out.is_empty() => break,
            q @ ('\'' | '"') => out.push(quoted(&mut chars, q)?),
            _ => return None,
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        match chars.next()? {
            ',' => {
                // Python allows a comma before the closing bracket.
                while chars.next_if(|c| c.is_whitespace()).is_some() {}
                if chars.next_if_eq(&']').is_some() {
                    break;
                }
            }
            ']' => break,
            _ => return None,
        }
    }
    // Nothing may follow the list.
    chars.all(char::is_whitespace).then_some(out)
}

/// The rest of a string literal opened by `quote`, with Python's (and JSON's) escapes.
fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, quote: char) -> Option<String> {
    let mut s = String::new();
    loop {
        match chars.next()? {
            c if c == quote => return Some(s),
            '\\' => match chars.next()? {
                'n' => s.push('\n'),
                't' => s.push('\t'),
                'r' => s.push('\r'),
                '0' => s.push('\0'),
                'x' => s.push(hex_char(chars, 2)?),
                'u' => s.push(hex_char(chars, 4)?),
                'U' => s.push(hex_char(chars, 8)?),
                other => s.push(other),
            },
            c => s.push(c),
        }
    }
}

/// A character given as `n` hexadecimal digits.
fn hex_char(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize) -> Option<char> {
    let digits: String = (0..n).map(|_| chars.next()).collect::<Option<String>>()?;
    char::from_u32(u32::from_str_radix(&digits, 16).ok()?)
}

/// The letter an option is labelled with (`"A. a cup"`, `"(B) knife"`, `"C) x"`), if any.
fn label(option: &str) -> Option<char> {
    let t = option.trim_start();
    let t = t.strip_prefix('(').unwrap_or(t);
    let mut chars = t.chars();
    let c = chars.next()?;
    let sep = chars.next()?;
    (c.is_ascii_uppercase() && matches!(sep, '.' | ')' | ':')).then_some(c)
}

/// The option's text without its letter label.
fn body(option: &str) -> &str {
    match label(option) {
        Some(c) => {
            let t = option.trim_start();
            let t = t.strip_prefix('(').unwrap_or(t);
            t[c.len_utf8() + 1..].trim()
        }
        None => option.trim(),
    }
}

/// The options as `items.jsonl` shows them: each labelled `A. `, `B. `... unless every
/// one already carries its own letter.
pub fn labelled(options: &[String]) -> Vec<String> {
    let own = options
        .iter()
        .enumerate()
        .all(|(i, o)| label(o) == Some(letter(i)));
    options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            if own {
                o.trim().to_string()
            } else {
                format!("{}. {}", letter(i), o.trim())
            }
        })
        .collect()
}

/// The i-th option letter (0 → A).
fn letter(i: usize) -> char {
    char::from(b'A' + (i % 26) as u8)
}

/// The letter of the option whose text is exactly `text` (ignoring case, surrounding space
/// and a final period).
fn option_with_text(text: &str, options: &[String]) -> Option<char> {
    let key = |s: &str| s.trim().trim_end_matches('.').trim().to_lowercase();
    let want = key(text);
    if want.is_empty() {
        return None;
    }
    let mut hits = options
        .iter()
        .enumerate()
        .filter(|(_, o)| key(body(o)) == want);
    match (hits.next(), hits.next()) {
        (Some((i, _)), None) => Some(letter(i)),
        _ => None,
    }
}

/// The letter of a reference answer: a letter itself (one of the options, when they are
/// known), else the text of one option, else a labelled option (`"B. knife"`). `None` when
/// it is none of these.
pub fn gold_letter(answer: &str, options: &[String]) -> Option<char> {
    let t = answer.trim();
    let n = (!options.is_empty()).then_some(options.len());
    let among = |c: &char| n.is_none_or(|n| ((*c as u8 - b'A') as usize) < n);
    let mut chars = t.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && c.is_ascii_alphabetic()
        && among(&c.to_ascii_uppercase())
    {
        return Some(c.to_ascii_uppercase());
    }
    option_with_text(t, options).or_else(|| {
        // Only a label ("B. knife", "(C)") may name a letter here: a bare answer text that
        // happens to start with "A " is not the letter A.
        label(t)
            .or_else(|| {
                let inner = t.trim_start_matches('(').trim_end_matches(')');
                (inner.len() == 1)
                    .then(|| option_letter(inner, n))
                    .flatten()
            })
            .filter(among)
    })
}

/// The letter a model's prediction names: [`option_letter`] on the text, else the option
/// whose text it repeats exactly (MVBench models often answer with the option's text).
pub fn predicted_letter(prediction: &str, options: &[String]) -> Option<char> {
    let n = (!options.is_empty()).then_some(options.len());
    option_letter(prediction, n).or_else(|| option_with_text(prediction, options))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn candidates_in_python_and_json_form() {
        assert_eq!(
            parse_candidates(r#"['A. a cup', "B. Tom's knife", 'C. say \'hi\'', 'D. x\u00e9']"#),
            Some(v(&["A. a cup", "B. Tom's knife", "C. say 'hi'", "D. xé"]))
        );
        assert_eq!(
            parse_candidates(r#"["A. x", "B. \"y\""]"#),
            Some(v(&["A. x", "B. \"y\""]))
        );
        assert_eq!(parse_candidates("['a', 'b',]"), Some(v(&["a", "b"])));
        assert_eq!(parse_candidates(" [] "), Some(vec![]));
        for bad in ["", "a, b", "['a'", "['a' 'b']", "[1, 2]", "['a'] x", "['a]"] {
            assert_eq!(parse_candidates(bad), None, "{bad}");
        }
    }

    #[test]
    fn options_are_labelled_once() {
        assert_eq!(labelled(&v(&["A. x", "B. y"])), v(&["A. x", "B. y"]));
        assert_eq!(labelled(&v(&["x", "y"])), v(&["A. x", "B. y"]));
        // Labels out of order are part of the text.
        assert_eq!(labelled(&v(&["B. x", "A. y"])), v(&["A. B. x", "B. A. y"]));
    }

    #[test]
    fn gold_letters() {
        let labelled_opts = v(&["A. a cup", "B. a knife", "C. a phone", "D. nothing"]);
        let plain = v(&["The man sits.", "The man runs", "A man walks"]);
        assert_eq!(gold_letter("B", &labelled_opts), Some('B'));
        assert_eq!(gold_letter(" c ", &[]), Some('C'));
        assert_eq!(gold_letter("a knife", &labelled_opts), Some('B'));
        assert_eq!(gold_letter("The man runs.", &plain), Some('B'));
        assert_eq!(gold_letter("A man walks", &plain), Some('C'));
        assert_eq!(gold_letter("(B)", &labelled_opts), Some('B'));
        assert_eq!(gold_letter("D. nothing", &labelled_opts), Some('D'));
        assert_eq!(gold_letter("A man stands", &plain), None);
        assert_eq!(gold_letter("A man stands", &[]), None);
        assert_eq!(gold_letter("(D)", &plain), None);
        // A letter past the options is no answer; one that is an option's text is that one.
        assert_eq!(gold_letter("z", &v(&["x", "y"])), None);
        assert_eq!(gold_letter("y", &v(&["x", "y"])), Some('B'));
        assert_eq!(gold_letter("E", &[]), Some('E'));
    }

    #[test]
    fn predicted_letters() {
        let plain = v(&["The man sits", "The man runs", "A man walks"]);
        assert_eq!(predicted_letter("(B) The man runs", &plain), Some('B'));
        assert_eq!(predicted_letter("The man runs.", &plain), Some('B'));
        assert_eq!(predicted_letter("The answer is C", &plain), Some('C'));
        assert_eq!(predicted_letter("D", &plain), None);
        assert_eq!(
            predicted_letter("Failed to obtain answer via API.", &plain),
            None
        );
        assert_eq!(predicted_letter("E", &[]), None);
    }
}
