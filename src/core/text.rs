//! Answer text: the normalisation of docs/measures.md §1.3 (`norm`), the SQuAD-style Token-F1 of
//! §7, and the sanitiser that keeps text from data files from driving the terminal.

use rustc_hash::FxHashMap;

/// `norm(s)` of docs/measures.md §1.3: whitespace stripped at both ends and upper-cased; `None`
/// when nothing is left (an unparseable answer).
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

/// The token list `N(s)` of docs/measures.md §7: lower-case, delete ASCII punctuation, blank the
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

/// `TokenF1Score(pred, golds)` of docs/measures.md §7: 100 times the best F1 over the references.
pub fn token_f1_score<S: AsRef<str>>(pred: &str, golds: &[S]) -> f64 {
    let p = f1_tokens(pred);
    let best = golds
        .iter()
        .map(|g| f1(&p, &f1_tokens(g.as_ref())))
        .fold(0.0_f64, f64::max);
    100.0 * best
}

/// Whether two strings are equal, compared in place when they are short, as names and keys
/// are: the loaders compare several per line, and a call to `memcmp` for each cost more
/// than the comparing.
#[inline]
pub fn same(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// [`same`] for bytes: short runs (up to 64 bytes, as the keys and separators of a JSON
/// line's layout) are compared a word at a time in place.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
    match n {
        0 => true,
        1..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..8 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        // Each word from the start, and the last one (which may overlap the one before).
        8..=64 => {
            (0..n - 8).step_by(8).all(|at| word(a, at) == word(b, at))
                && word(a, n - 8) == word(b, n - 8)
        }
        _ => a == b,
    }
}

/// The positions of the bytes equal to `a`, `b` or `c`, in order. Eight bytes are tested at
/// a time, and each match is taken from the word's marks, not by a branch per byte: the
/// per-item CSV reader cuts its rows at commas and line ends, a dozen to a line.
pub fn positions_of3(bytes: &[u8], a: u8, b: u8, c: u8) -> Positions3<'_> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    Positions3 {
        bytes,
        next_word: 0,
        word_at: 0,
        marks: 0,
        sought: [a, b, c].map(|x| ONES * u64::from(x)),
    }
}

/// The iterator of [`positions_of3`].
pub struct Positions3<'a> {
    bytes: &'a [u8],
    /// Where the next word starts, and where the marked one does.
    next_word: usize,
    word_at: usize,
    /// The high bit of each byte of the word at `word_at` still to be given.
    marks: u64,
    /// Each byte sought, in every byte of a word.
    sought: [u64; 3],
}

impl Iterator for Positions3<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
        // The high bit of each zero byte of `x`, and of no other: the sum of a byte's low
        // seven bits and 0x7f never carries into the next byte.
        let zeros = |x: u64| !((x & LOW7).wrapping_add(LOW7) | x | LOW7);
        while self.marks == 0 {
            let at = self.next_word;
            let rest = self.bytes.get(at..).filter(|r| !r.is_empty())?;
            // The last word is padded, and its padding's marks dropped.
            let (x, valid) = match rest.get(..8) {
                Some(w) => (
                    u64::from_le_bytes(w.try_into().unwrap_or_default()),
                    u64::MAX,
                ),
                None => {
                    let mut w = [0u8; 8];
                    w[..rest.len()].copy_from_slice(rest);
                    (u64::from_le_bytes(w), (1u64 << (8 * rest.len())) - 1)
                }
            };
            let [a, b, c] = self.sought;
            self.marks = (zeros(x ^ a) | zeros(x ^ b) | zeros(x ^ c)) & valid;
            (self.word_at, self.next_word) = (at, at + 8);
        }
        let i = self.word_at + self.marks.trailing_zeros() as usize / 8;
        self.marks &= self.marks - 1;
        Some(i)
    }
}

/// Whether a character must never reach a terminal raw: C0 and C1 controls and DEL (escape
/// sequences: OSC 52 clipboard writes, window titles, screen clears), the bidirectional
/// marks, embeddings, overrides and isolates that make text read differently than it is,
/// and the invisible format characters (zero-width space and joiners, word joiner, line and
/// paragraph separators, the byte-order mark, soft hyphen, interlinear annotation and tag
/// characters) that hide text or make two different strings look the same.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{61c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// Text from a data file made safe to print: every control character, escape sequence
/// introducer, bidi control and invisible format character (`is_unsafe_char`) becomes a
/// visible, inert escape such as `\x1b` or `\u{202e}`. Borrowed when nothing needs to
/// change, which is the usual case.
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe_char(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `c` as an inert escape: `\xHH` below U+0100, else `\u{H…}`.
fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write;
    let code = c as u32;
    let _ = if code < 0x100 {
        write!(out, "\\x{code:02x}")
    } else {
        write!(out, "\\u{{{code:x}}}")
    };
}

/// The pieces a cut must keep whole in a text as shown ([`sanitize`]d, or [`show_id`]): its
/// grapheme clusters (a letter with its accents, an emoji with its modifiers), and each
/// escape those wrote (`\x1b`, `\u{202e}`) as one piece, so a name cut to a column never ends
/// in half an escape (`evil\x1…`), which would read as other text.
pub fn pieces(s: &str) -> impl Iterator<Item = &str> {
    use unicode_segmentation::UnicodeSegmentation;
    let mut rest = s;
    std::iter::from_fn(move || {
        let len = escape_len(rest).or_else(|| rest.graphemes(true).next().map(str::len))?;
        let (piece, after) = rest.split_at(len);
        rest = after;
        Some(piece)
    })
}

/// The start of `shown` (text as shown) and "…", in at most `w` display cells (the
/// ellipsis alone when `w` is 0), cut between [`pieces`], whether or not `shown` would fit.
pub fn cut_with_ellipsis(shown: &str, w: usize) -> String {
    let mut out = if w == 0 {
        String::new()
    } else {
        head(shown, w - 1)
    };
    out.push('…');
    out
}

/// The start of `shown` (text as shown) in at most `w` display cells, cut between
/// [`pieces`], without an ellipsis.
pub fn head(shown: &str, w: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    let mut used = 0;
    pieces(shown)
        .take_while(|p| {
            used += p.width();
            used <= w
        })
        .collect()
}

/// The length of the escape `rest` starts with (`\xHH` or `\u{H…}`, as [`sanitize`] writes
/// them), if it starts with one. A doubled backslash ([`show_id`]'s) is no piece: `sanitize`
/// leaves a backslash before an escape single (`a\\x1b` is `a\` and ESC), and a cut after
/// half of a doubled one shows a backslash, which the id has.
fn escape_len(rest: &str) -> Option<usize> {
    let hex = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_hexdigit());
    if let Some(t) = rest.strip_prefix("\\x") {
        return t.get(..2).filter(|h| hex(h)).map(|_| 4);
    }
    // At most six hex digits (U+10FFFF), so a long text is not searched for its `}`.
    let t = rest.strip_prefix("\\u{")?;
    let end = t.bytes().take(7).position(|b| b == b'}')?;
    hex(&t[..end]).then_some(3 + end + 1)
}

/// `n` and a noun, plural unless `n` is one: `1 disagreement`, `2 disagreements`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// What kind of JSON value `v` is, as a message names it ("a string", "an array"...).
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// `text` quoted for a shell, exactly and inert on a terminal: plain words (letters,
/// digits, `/._-+,:=@%`) as they are; other text in single quotes, each single quote in it
/// written `'\''` (POSIX); text holding a character that must not reach a terminal raw
/// ([`is_unsafe_char`]: an escape, a bidi control...) in bash's and zsh's `$'...'`, that
/// character written as an escape the shell turns back into it (`\x1b`, `\u202e`), so the
/// printed command is safe to show and still the same command when pasted.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c));
    if plain {
        return text.to_string();
    }
    if !text.chars().any(is_unsafe_char) {
        return format!("'{}'", text.replace('\'', r"'\''"));
    }
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str("$'");
    for c in text.chars() {
        let code = c as u32;
        match c {
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            // A byte escape for ASCII only: `\xHH` above 0x7f would be one raw byte.
            _ if is_unsafe_char(c) && code < 0x80 => out.push_str(&format!("\\x{code:02x}")),
            _ if is_unsafe_char(c) && code <= 0xffff => {
                out.push_str(&format!("\\u{code:04x}"));
            }
            _ if is_unsafe_char(c) => out.push_str(&format!("\\U{code:08x}")),
            _ => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// An identifier (a model, benchmark, item or configuration name) as shown: [`sanitize`]d,
/// and, when it is not in Unicode's composed form (NFC), with its combining marks escaped
/// (`cafe\u{301}`), so that two ids that differ only in how their accents are encoded never
/// look the same on screen (`café` and `café`). A backslash that would read as the start
/// of an escape (before `x` and two hex digits, `u{`, another backslash or an escaped
/// character) is shown doubled, so an id holding the text `q\x09` never looks like one
/// holding a tab. Other ids are shown as [`sanitize`] shows them.
pub fn show_id(s: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::char::is_combining_mark;
    let composed = s.is_ascii() || unicode_normalization::is_nfc(s);
    let escaped = |c: char| is_unsafe_char(c) || (!composed && is_combining_mark(c));
    let reads_as_escape = |rest: &str| {
        let mut next = rest.chars();
        match next.next() {
            Some('x') => next.take(2).filter(char::is_ascii_hexdigit).count() == 2,
            Some('u') => next.next() == Some('{'),
            Some(c) => c == '\\' || escaped(c),
            None => false,
        }
    };
    let backslash_to_double = |(at, c): (usize, char)| c == '\\' && reads_as_escape(&s[at + 1..]);
    if composed && !s.char_indices().any(backslash_to_double) {
        return sanitize(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (at, c) in s.char_indices() {
        if escaped(c) {
            push_escape(&mut out, c);
        } else if backslash_to_double((at, c)) {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The composed form (NFC) of `s`, when it differs from `s`: two ids with the same composed
/// form look alike on screen.
pub fn composed(s: &str) -> Option<String> {
    use unicode_normalization::UnicodeNormalization;
    if s.is_ascii() || unicode_normalization::is_nfc(s) {
        return None;
    }
    Some(s.nfc().collect())
}

/// JSON that is safe on a terminal and still the same data: serde_json escapes only the C0
/// controls, `"` and `\`; this formatter also writes every other `is_unsafe_char` (DEL, C1,
/// bidi controls, zero-width and other invisible characters) as a `\uXXXX` escape (a
/// surrogate pair above U+FFFF). The JSON parses back to exactly the same strings. Every
/// JSON frameaudit writes, to standard output or to a file, goes through it.
pub struct SafeJson<F>(pub F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for SafeJson<F> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        // Every unsafe character is DEL or outside ASCII.
        if fragment.bytes().all(|b| b < 0x7f) {
            return w.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_unsafe_char(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// `serde_json::to_writer` through `SafeJson`.
pub fn json_to_writer<W: std::io::Write, T: ?Sized + serde::Serialize>(
    w: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser =
        serde_json::Serializer::with_formatter(w, SafeJson(serde_json::ser::CompactFormatter));
    value.serialize(&mut ser)
}

/// `serde_json::to_writer_pretty` through `SafeJson`.
pub fn json_to_writer_pretty<W: std::io::Write, T: ?Sized + serde::Serialize>(
    w: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(
        w,
        SafeJson(serde_json::ser::PrettyFormatter::new()),
    );
    value.serialize(&mut ser)
}

/// `serde_json::to_string` through `SafeJson`.
pub fn json_to_string<T: ?Sized + serde::Serialize>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    json_to_writer(&mut out, value)?;
    // The serializer writes only UTF-8 (the escapes are ASCII).
    Ok(String::from_utf8(out).expect("JSON is UTF-8"))
}

/// `serde_json::to_string_pretty` through `SafeJson`.
pub fn json_to_string_pretty<T: ?Sized + serde::Serialize>(
    value: &T,
) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    json_to_writer_pretty(&mut out, value)?;
    Ok(String::from_utf8(out).expect("JSON is UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_escape_is_one_piece_and_a_letter_keeps_its_accents() {
        let shown = sanitize("a\x1b[2J\u{202e}b");
        assert_eq!(
            pieces(&shown).collect::<Vec<_>>(),
            ["a", r"\x1b", "[", "2", "J", r"\u{202e}", "b"]
        );
        let shown = show_id("cafe\u{301}");
        assert_eq!(
            pieces(&shown).collect::<Vec<_>>(),
            ["c", "a", "f", "e", r"\u{301}"]
        );
        // In composed text a combining mark stays with its letter.
        assert_eq!(pieces("e\u{301}x").collect::<Vec<_>>(), ["e\u{301}", "x"]);
        // A backslash that starts no whole escape is a piece of its own.
        assert_eq!(
            pieces(r"\x1\u{zz}").collect::<Vec<_>>(),
            [r"\", "x", "1", r"\", "u", "{", "z", "z", "}"]
        );
        assert_eq!(pieces("").count(), 0);
    }

    #[test]
    fn counts_take_the_plural_unless_one() {
        assert_eq!(count(1, "disagreement"), "1 disagreement");
        assert_eq!(count(0, "unit"), "0 units");
        assert_eq!(count(2, "unit"), "2 units");
    }

    #[test]
    fn text_is_quoted_for_the_shell_exactly_and_inert() {
        assert_eq!(shell_quote("/data/v-1.mp4"), "/data/v-1.mp4");
        assert_eq!(shell_quote("my video.mp4"), "'my video.mp4'");
        assert_eq!(shell_quote("it's $(rm).mp4"), r"'it'\''s $(rm).mp4'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("m\u{1b}]0;x\u{7}"), r"$'m\x1b]0;x\x07'");
        assert_eq!(shell_quote("a\u{202e}b'c\\"), r"$'a\u202eb\'c\\'");
        assert_eq!(shell_quote("\u{9b}1"), r"$'\u009b1'");
        assert_eq!(shell_quote("\u{e0041}"), r"$'\U000e0041'");
        // What a shell reads back is the text itself, and the quoted form is inert.
        let texts = [
            "plain",
            "two words",
            "it's",
            "back\\slash $HOME `x` \"q\"",
            "M\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{202e}\u{200b}'s\\x1b",
            "caf\u{e9} \u{e0041}\u{2066}1\u{7f}",
            "\u{1b}5",
        ];
        for t in texts {
            let q = shell_quote(t);
            assert!(!q.chars().any(is_unsafe_char), "{q:?}");
            let Ok(out) = std::process::Command::new("bash")
                .args(["-c", &format!("printf %s {q}")])
                .env("LC_ALL", "C.UTF-8")
                .output()
            else {
                eprintln!("note: bash is not here: the round trip is not checked");
                return;
            };
            assert_eq!(String::from_utf8_lossy(&out.stdout), t, "{q}");
        }
    }

    proptest::proptest! {
        /// The positions of three bytes are those a byte-by-byte scan finds, with the bytes
        /// drawn so that matches, their high-bit twins (0xac for ','), neighbours that a
        /// borrow or carry between bytes would mark (0x2b, 0x2d, 0x00, 0xff) and every
        /// length's tail all occur.
        #[test]
        fn positions_of3_are_a_bytewise_scan(
            bytes in proptest::collection::vec(
                proptest::sample::select(vec![b',', b'\n', b'\r', 0xac, 0x8a, 0x2b, 0x2d, 0x00, 0xff, b'a']),
                0..80,
            ),
        ) {
            let want: Vec<usize> = bytes
                .iter()
                .enumerate()
                .filter(|&(_, &x)| x == b',' || x == b'\n' || x == b'\r')
                .map(|(i, _)| i)
                .collect();
            let got: Vec<usize> = positions_of3(&bytes, b',', b'\n', b'\r').collect();
            proptest::prop_assert_eq!(got, want);
        }

        /// Short strings compared in place are equal exactly when they are.
        #[test]
        fn same_is_equality(a in "[ab]{0,80}", b in "[ab]{0,80}") {
            proptest::prop_assert_eq!(same(&a, &b), a == b);
        }

        /// A string and itself with at most one letter changed, at any place of any
        /// length (two independent strings of one length are rarely equal).
        #[test]
        fn same_sees_one_letter_changed(a in "[ab]{0,80}", at in proptest::option::of(0..80usize)) {
            let mut b = a.clone().into_bytes();
            if let (Some(at), false) = (at, b.is_empty()) {
                let at = at % b.len();
                b[at] = if b[at] == b'a' { b'b' } else { b'a' };
            }
            let b = String::from_utf8(b).expect("ascii");
            proptest::prop_assert_eq!(same(&a, &b), a == b);
        }
    }

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
        assert_eq!(
            sanitize("a\u{200b}b\u{2028}c\u{feff}d\u{7f}e\u{e0041}"),
            "a\\u{200b}b\\u{2028}c\\u{feff}d\\x7fe\\u{e0041}"
        );
        assert_eq!(sanitize("日本語 é ß"), "日本語 é ß");
    }

    #[test]
    fn safe_json_escapes_and_round_trips() {
        let nasty = "a\x1b]52;c;aGk=\x07\u{9b}2J\u{202e}x\u{200b}y\u{7f}\u{2029}\u{e0041}é日\"\\";
        let v = serde_json::json!({ nasty: [nasty, 1, null] });
        for text in [
            json_to_string(&v).expect("json"),
            json_to_string_pretty(&v).expect("json"),
        ] {
            assert!(
                text.chars().all(|c| !is_unsafe_char(c) || c == '\n'),
                "{text}"
            );
            assert!(
                text.contains("\\u009b") && text.contains("\\u202e"),
                "{text}"
            );
            assert!(text.contains("\\udb40\\udc41"), "{text}");
            let back: serde_json::Value = serde_json::from_str(&text).expect("parses");
            assert_eq!(back, v);
        }
        assert_eq!(
            json_to_string_pretty(&v).expect("json"),
            serde_json::to_string_pretty(&v)
                .expect("json")
                .replace('\u{9b}', "\\u009b")
                .replace('\u{202e}', "\\u202e")
                .replace('\u{200b}', "\\u200b")
                .replace('\u{7f}', "\\u007f")
                .replace('\u{2029}', "\\u2029")
                .replace('\u{e0041}', "\\udb40\\udc41")
        );
    }

    #[test]
    fn ids_that_differ_only_in_their_accents_encoding_are_shown_apart() {
        let nfc = "caf\u{e9}";
        let nfd = "cafe\u{301}";
        assert_eq!(show_id(nfc), nfc);
        assert_eq!(show_id(nfd), "cafe\\u{301}");
        assert_ne!(show_id(nfc), show_id(nfd));
        assert_eq!(show_id("clip01-q1"), "clip01-q1");
        assert_eq!(composed(nfd).as_deref(), Some(nfc));
        assert_eq!(composed(nfc), None);
    }

    /// An id holding the text of an escape never looks like one holding the character; a
    /// backslash that reads as nothing else stays single.
    #[test]
    fn ids_holding_an_escape_s_text_are_shown_apart_from_the_character() {
        let shown = [
            "q\ttab",
            r"q\x09tab",
            "q\\\ttab",
            r"q\\x09tab",
            "q\u{202e}x",
            r"q\u{202e}x",
            "e\u{301}\\u{301}",
            r"C:\videos\a.mp4",
        ]
        .map(|id| show_id(id).into_owned());
        assert_eq!(
            shown,
            [
                r"q\x09tab",
                r"q\\x09tab",
                r"q\\\x09tab",
                r"q\\\\x09tab",
                r"q\u{202e}x",
                r"q\\u{202e}x",
                r"e\u{301}\\u{301}",
                r"C:\videos\a.mp4",
            ]
        );
        let distinct: std::collections::BTreeSet<&String> = shown.iter().collect();
        assert_eq!(distinct.len(), shown.len());
        // A cut of sanitized text keeps an escape whole after a backslash of the text.
        assert_eq!(cut_with_ellipsis(&sanitize("a\\\u{1b}"), 5), r"a\…");
        assert_eq!(cut_with_ellipsis(&sanitize("a\\\u{1b}"), 7), r"a\\x1b…");
        // A trailing backslash, one hex digit, `u{` without hex, a mark after a backslash.
        assert_eq!(show_id("q\\"), r"q\");
        assert_eq!(show_id(r"q\x0"), r"q\x0");
        assert_eq!(show_id(r"q\u{zz}"), r"q\\u{zz}");
        assert_eq!(show_id("q\\\u{301}"), "q\\\u{301}");
    }
}
