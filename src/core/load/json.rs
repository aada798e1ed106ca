//! A JSON value that remembers its kind, so a loader can say "field `frames`: expected an
//! integer >= 0, found a string" instead of serde's positional type errors. Strings borrow
//! from the line when they have no escapes; objects are skipped without being built.

use std::borrow::Cow;
use std::fmt;

use std::path::Path;
use std::sync::Arc;

use crate::core::diag::Diagnostics;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A JSON value as the loaders need it: numbers kept exact, strings borrowed from the line
/// when they can be, objects only noted (no field of a cell is an object).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum J<'a> {
    /// The field is absent (never produced by parsing; the default of a struct field).
    #[default]
    Missing,
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer that fits `i64`/`u64`, kept exactly.
    Int(i128),
    /// A number written with a fraction or exponent.
    Float(f64),
    /// A string, borrowed when it has no escapes.
    Str(Cow<'a, str>),
    /// An array.
    Arr(Vec<J<'a>>),
    /// An object, its contents skipped.
    Obj,
}

impl<'a> J<'a> {
    /// What the value is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            J::Missing => "nothing",
            J::Null => "null",
            J::Bool(_) => "a boolean",
            J::Int(_) | J::Float(_) => "a number",
            J::Str(_) => "a string",
            J::Arr(_) => "an array",
            J::Obj => "an object",
        }
    }

    /// The value as a number, if it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            J::Int(i) => Some(*i as f64),
            J::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The value as a whole number, also when written `8.0`.
    pub fn as_integer(&self) -> Option<i128> {
        match self {
            J::Int(i) => Some(*i),
            J::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i128),
            _ => None,
        }
    }

    /// The value as a string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value with its strings borrowed from this one: a value parsed once and kept
    /// (an owned one) handed out again without copying its text.
    pub fn borrowed(&self) -> J<'_> {
        match self {
            J::Missing => J::Missing,
            J::Null => J::Null,
            J::Bool(b) => J::Bool(*b),
            J::Int(i) => J::Int(*i),
            J::Float(x) => J::Float(*x),
            J::Str(s) => J::Str(Cow::Borrowed(s)),
            J::Arr(items) => J::Arr(items.iter().map(J::borrowed).collect()),
            J::Obj => J::Obj,
        }
    }

    /// The value owning its strings, kept apart from the text it was parsed from.
    pub fn into_owned(self) -> J<'static> {
        match self {
            J::Missing => J::Missing,
            J::Null => J::Null,
            J::Bool(b) => J::Bool(b),
            J::Int(i) => J::Int(i),
            J::Float(x) => J::Float(x),
            J::Str(s) => J::Str(Cow::Owned(s.into_owned())),
            J::Arr(items) => J::Arr(items.into_iter().map(J::into_owned).collect()),
            J::Obj => J::Obj,
        }
    }
}

/// Short rendering of a value for messages (strings quoted, long ones cut).
impl fmt::Display for J<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            J::Missing => write!(f, "(absent)"),
            J::Null => write!(f, "null"),
            J::Bool(b) => write!(f, "{b}"),
            J::Int(i) => write!(f, "{i}"),
            J::Float(x) => write!(f, "{}", short_number(*x)),
            J::Str(s) if s.chars().count() > 40 => {
                let cut: String = s.chars().take(40).collect();
                write!(f, "{cut:?}...")
            }
            J::Str(s) => write!(f, "{s:?}"),
            J::Arr(_) => write!(f, "[...]"),
            J::Obj => write!(f, "{{...}}"),
        }
    }
}

/// A number as a message shows it: as written where that is short, else in exponent form
/// (`-1e308`, not the 309 digits `{}` writes).
pub fn short_number(x: f64) -> String {
    if x == 0.0 || (1e-4..1e16).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

struct JVisitor<'a>(std::marker::PhantomData<J<'a>>);

impl<'de: 'a, 'a> Visitor<'de> for JVisitor<'a> {
    type Value = J<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<J<'a>, E> {
        Ok(J::Null)
    }
    fn visit_none<E>(self) -> Result<J<'a>, E> {
        Ok(J::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<J<'a>, E> {
        Ok(J::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<J<'a>, E> {
        Ok(J::Int(i128::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<J<'a>, E> {
        Ok(J::Int(i128::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<J<'a>, E> {
        Ok(J::Float(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<J<'a>, E> {
        Ok(J::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<J<'a>, E> {
        Ok(J::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<J<'a>, E> {
        Ok(J::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J<'a>, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element::<J<'a>>()? {
            v.push(x);
        }
        Ok(J::Arr(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J<'a>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(J::Obj)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for J<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JVisitor(std::marker::PhantomData))
    }
}

/// Reads a record of the plain shape most JSON Lines files have, without serde: an object
/// whose keys are strings without escapes and whose values are strings without escapes,
/// numbers, `true`, `false`, `null` or arrays of those, with any JSON whitespace between
/// tokens. `each` gets every key and value in order and may refuse one (`false`). `None`
/// when the text has any other shape or `each` refused: serde_json then reads it and says
/// what is wrong, so the two readers never disagree (the tests hold them to each other).
pub fn scan_flat<'a>(text: &'a str, mut each: impl FnMut(&'a str, J<'a>) -> bool) -> Option<()> {
    scan_spans(text, |key, v, _| each(key, v))
}

/// [`scan_flat`], giving `each` also where each value is in the text.
fn scan_spans<'a>(
    text: &'a str,
    mut each: impl FnMut(&'a str, J<'a>, std::ops::Range<usize>) -> bool,
) -> Option<()> {
    let b = text.as_bytes();
    let end = |i: usize| (skip_ws(b, i) == b.len()).then_some(());
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return end(i + 1);
    }
    loop {
        let (key, next) = plain_str(text, i)?;
        i = skip_ws(b, next);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let at = skip_ws(b, i + 1);
        let (value, next) = plain_value(text, at, true)?;
        if !each(key, value, at..next) {
            return None;
        }
        i = skip_ws(b, next);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return end(i + 1),
            _ => return None,
        }
    }
}

/// The layout of a plain line, learnt from one ([`scan_named_as`]): the text before each
/// value (`{"model":"` holds the brace, the key, the colon and any whitespace), which
/// name the value is for, and the text after the last. Most files write every line alike,
/// so a line of the same layout is read by comparing that text, not by reading each key
/// and looking it up; any other line is read as [`scan_named`] reads it.
#[derive(Debug, Clone, Default)]
struct Layout {
    /// Before each value, and the index of its key in the names (`None`: another key).
    leads: Vec<(Box<[u8]>, Option<usize>)>,
    tail: Box<[u8]>,
}

impl Layout {
    /// What [`scan_named`] gives a line of this layout: `Some` of whether `each` took every
    /// value; `None` when the line has another layout (`each` may have been given some of
    /// its values by then).
    fn read<'a>(&self, text: &'a str, mut each: impl FnMut(usize, J<'a>) -> bool) -> Option<bool> {
        let b = text.as_bytes();
        let mut at = 0;
        for (lead, name) in &self.leads {
            at = starts_with(b.get(at..)?, lead).then_some(at + lead.len())?;
            let (v, next) = plain_value(text, at, true)?;
            at = next;
            if let Some(i) = *name
                && !each(i, v)
            {
                return Some(false);
            }
        }
        crate::core::text::same_bytes(b.get(at..)?, &self.tail).then_some(true)
    }
}

/// The layouts [`scan_named_as`] learnt from the lines it read, a few of them: a file may
/// mix layouts line by line (each canonical cell followed by its replicate, which has two
/// fields more, docs/measures.md §16.1), and relearning the layout at each line cost more
/// than reading the line by name. The layout tried first is the one that followed the
/// layout of the line before, the last time that layout was read.
#[derive(Debug, Default)]
pub struct Shape {
    layouts: Vec<Layout>,
    /// Per layout, the layout of the line after it, the last time.
    next: Vec<usize>,
    /// The layout of the line read last.
    last: usize,
    /// The layout the next one learnt replaces once there are [`Shape::MOST`].
    evict: usize,
    /// How many layouts were learnt (the tests read it).
    learnt: usize,
}

impl Shape {
    /// The most layouts kept: a file of a few layouts keeps each; one whose lines are all
    /// different tries these before reading by name.
    const MOST: usize = 4;

    /// Notes that the line after one of layout `self.last` was of layout `k`.
    fn followed_by(&mut self, k: usize) {
        if let Some(n) = self.next.get_mut(self.last) {
            *n = k;
        }
        self.last = k;
    }

    /// Keeps a layout learnt, in place of an old one when there are [`Shape::MOST`].
    fn learn(&mut self, layout: Layout) {
        let k = if self.layouts.len() < Self::MOST {
            self.layouts.push(layout);
            self.next.push(self.layouts.len() - 1);
            self.layouts.len() - 1
        } else {
            let k = self.evict;
            self.evict = (k + 1) % Self::MOST;
            self.layouts[k] = layout;
            k
        };
        self.learnt += 1;
        self.followed_by(k);
    }
}

/// `text.starts_with(lead)` for the short texts of a layout, compared in place.
#[inline]
fn starts_with(text: &[u8], lead: &[u8]) -> bool {
    text.get(..lead.len())
        .is_some_and(|t| crate::core::text::same_bytes(t, lead))
}

/// [`scan_named`] into `record` through a learnt layout: a line of the layout of `shape`
/// is read by it; any other is read by [`scan_named`] into a fresh record, and when that
/// reads it, its layout is learnt in place of the one before. Gives what [`scan_named`]
/// gives (tested).
pub fn scan_named_as<'a, T: Default>(
    text: &'a str,
    names: &[&str],
    shape: &mut Shape,
    record: &mut T,
    mut each: impl FnMut(&mut T, usize, J<'a>) -> bool,
) -> bool {
    let n = shape.layouts.len();
    if n > 0 {
        // The layout that came after the last one, then the others.
        let first = shape.next.get(shape.last).copied().unwrap_or(0);
        for k in std::iter::once(first).chain((0..n).filter(|&k| k != first)) {
            if let Some(taken) = shape.layouts[k].read(text, |i, v| each(record, i, v)) {
                shape.followed_by(k);
                return taken;
            }
            // Another layout, some of whose values the record may hold.
            *record = T::default();
        }
    }
    let mut leads = Vec::new();
    let mut after = 0;
    let read = scan_named_spans(text, names, |i, v, span| {
        leads.push((text.as_bytes()[after..span.start].into(), i));
        after = span.end;
        i.is_none_or(|i| each(record, i, v))
    });
    if read && !leads.is_empty() {
        shape.learn(Layout {
            leads,
            tail: text.as_bytes()[after..].into(),
        });
    }
    read
}

/// [`scan_flat`] into named slots: the key `names[i]` sets `slots[i]`, other keys are
/// ignored; `false` when the line is not of the plain shape or names a field twice.
pub fn scan_fields<'a>(text: &'a str, names: &[&str], slots: &mut [&mut J<'a>]) -> bool {
    scan_named(text, names, |i, v| {
        *slots[i] = v;
        true
    })
}

/// [`scan_flat`] by name: `each` gets the index in `names` of every key found there, with
/// its value, and may refuse it (`false`); other keys are ignored. `false` when the line
/// is not of the plain shape, names a field twice or `each` refused.
pub fn scan_named<'a>(
    text: &'a str,
    names: &[&str],
    mut each: impl FnMut(usize, J<'a>) -> bool,
) -> bool {
    scan_named_spans(text, names, |i, v, _| i.is_none_or(|i| each(i, v)))
}

/// [`scan_named`], giving `each` every key (its index in `names`, `None` for another key),
/// with the value and where it is.
fn scan_named_spans<'a>(
    text: &'a str,
    names: &[&str],
    mut each: impl FnMut(Option<usize>, J<'a>, std::ops::Range<usize>) -> bool,
) -> bool {
    let mut seen = 0u64;
    // Lines mostly give their fields in the order of `names`: look from the name after the
    // last one found, then from the start.
    let mut from = 0;
    scan_spans(text, |key, v, span| {
        let same = |n: &&str| crate::core::text::same(n, key);
        let found = names[from..].iter().position(same).map(|i| from + i);
        let Some(i) = found.or_else(|| names[..from].iter().position(same)) else {
            return each(None, v, span);
        };
        from = i + 1;
        let fresh = seen & (1 << i) == 0;
        seen |= 1 << i;
        fresh && each(Some(i), v, span)
    })
    .is_some()
}

/// A record that lines of the plain shape fill without serde ([`scan_fields`]).
pub trait PlainRecord<'a>: Default + serde::Deserialize<'a> {
    /// Reads a plain line into `self`, a default record: `false` for any other line, and
    /// for a field given twice, which serde then reads and reports.
    fn read_plain(&mut self, text: &'a str) -> bool;
}

/// One record of a line: by [`PlainRecord::read_plain`] when `utf8` (the line as text) has
/// the plain shape, else by serde through [`parse_record`], which reports why it cannot.
pub fn read_record<'a, T: PlainRecord<'a>>(
    text: &'a [u8],
    utf8: Option<&'a str>,
    what: &str,
    file: &Arc<Path>,
    line: u64,
    diags: &mut Diagnostics,
) -> Option<T> {
    let mut raw = T::default();
    if utf8.is_some_and(|t| raw.read_plain(t)) {
        return Some(raw);
    }
    parse_record(text, what, file, line, diags)
}

/// The first byte at or after `i` that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// A string at `i` without escapes or control characters, and the place after it.
fn plain_str(text: &str, i: usize) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    // Eight bytes at a time: the first that is a quote, a backslash or a control character
    // ends the string (a quote) or leaves it to serde (the others).
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut end = i + 1;
    while let Some(chunk) = b.get(end..end + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        // Bytes below 0x20, quotes and backslashes become zero bytes (each test marks its
        // lowest such byte exactly, so the lowest mark of all is the first such byte).
        let marks = zero_byte(x & 0xe0e0_e0e0_e0e0_e0e0)
            | zero_byte(x ^ (ONES * u64::from(b'"')))
            | zero_byte(x ^ (ONES * u64::from(b'\\')));
        if marks != 0 {
            end += (marks.trailing_zeros() / 8) as usize;
            break;
        }
        end += 8;
    }
    loop {
        match *b.get(end)? {
            b'"' => break,
            b'\\' | 0..0x20 => return None,
            _ => end += 1,
        }
    }
    // Cut at ASCII quotes, so on character boundaries.
    Some((text.get(i + 1..end)?, end + 1))
}

/// A value at `i` of the shapes [`scan_flat`] reads (an array only when `list`), and the
/// place after it. A number is read as serde_json reads it: by hand when it is a plain
/// integer, by serde_json otherwise.
#[inline]
fn plain_value(text: &str, i: usize, list: bool) -> Option<(J<'_>, usize)> {
    let b = text.as_bytes();
    let word = |w: &[u8], v: J<'static>| b[i..].starts_with(w).then_some((v, i + w.len()));
    match *b.get(i)? {
        b'"' => plain_str(text, i).map(|(s, next)| (J::Str(Cow::Borrowed(s)), next)),
        b't' => word(b"true", J::Bool(true)),
        b'f' => word(b"false", J::Bool(false)),
        b'n' => word(b"null", J::Null),
        b'[' if list => plain_list(text, i),
        b'-' | b'0'..=b'9' => number_at(b, i),
        _ => None,
    }
}

/// A flat array at `i` (a `[` there) of the values [`plain_value`] reads.
#[inline(never)]
fn plain_list(text: &str, i: usize) -> Option<(J<'_>, usize)> {
    let b = text.as_bytes();
    let mut items = Vec::new();
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Some((J::Arr(items), j + 1));
    }
    loop {
        let (v, next) = plain_value(text, j, false)?;
        items.push(v);
        j = skip_ws(b, next);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b']') => return Some((J::Arr(items), j + 1)),
            _ => return None,
        }
    }
}

/// The number at `i` (a digit or `-` there) and the place after it.
fn number_at(b: &[u8], i: usize) -> Option<(J<'_>, usize)> {
    if let Some(plain) = plain_number(b, i) {
        return Some(plain);
    }
    let len = b[i..]
        .iter()
        .position(|c| !is_number_byte(*c))
        .unwrap_or(b.len() - i);
    match serde_json::from_slice::<J>(&b[i..i + len]).ok()? {
        v @ (J::Int(_) | J::Float(_)) => Some((v, i + len)),
        _ => None,
    }
}

/// The bytes a number token is made of.
fn is_number_byte(c: u8) -> bool {
    matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

/// A number at `i` of the form `-?D(.D)?` (no leading zeros, no exponent, nothing of a
/// number after it) with at most 15 digits in all, read in one pass as serde_json reads it:
/// an integer exactly; a decimal as the one rounding of its digits divided by a power of
/// ten, both exact in an `f64`, which is the correctly rounded value serde_json gives too.
/// `None` for any other number, which serde_json then reads.
fn plain_number(b: &[u8], i: usize) -> Option<(J<'static>, usize)> {
    let negative = b.get(i) == Some(&b'-');
    let mut j = i + usize::from(negative);
    // Digits past the fifteenth make the number serde's, so wrapping does not matter.
    let digits = |j: &mut usize, n: &mut i64| {
        let start = *j;
        while let Some(&d @ b'0'..=b'9') = b.get(*j) {
            *n = n.wrapping_mul(10).wrapping_add(i64::from(d - b'0'));
            *j += 1;
        }
        *j - start
    };
    let mut n = 0i64;
    let int_start = j;
    let int = digits(&mut j, &mut n);
    if int == 0 || (int > 1 && b[int_start] == b'0') {
        return None;
    }
    let mut frac = 0;
    if b.get(j) == Some(&b'.') {
        j += 1;
        frac = digits(&mut j, &mut n);
        if frac == 0 {
            return None;
        }
    }
    if int + frac > 15 || b.get(j).is_some_and(|&c| is_number_byte(c)) {
        return None;
    }
    let n = if negative { -n } else { n };
    if frac == 0 {
        // `-0` is serde's (a float).
        return (!(negative && n == 0)).then_some((J::Int(i128::from(n)), j));
    }
    // n < 10^15 < 2^53 and 10^k (k < 15) are exact.
    const POW10: [f64; 15] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
    ];
    let v = n as f64 / POW10[frac];
    Some((J::Float(if negative && n == 0 { -0.0 } else { v }), j))
}

/// Where `part`, a slice of `text` (a value read on its own: a borrowed raw value),
/// starts in `text`: its line (from 1) and how many bytes of that line come before it.
pub fn start_of(text: &str, part: &str) -> (u64, usize) {
    place_in(text, part, 0)
}

/// Where the byte `offset` of `part`, a slice of `text`, stands in `text`: its line (from
/// 1) and how many bytes of that line come before it.
pub fn place_in(text: &str, part: &str, offset: usize) -> (u64, usize) {
    let start = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let at = start.saturating_add(offset).min(text.len());
    crate::core::load::encoding::place_after(&text.as_bytes()[..at])
}

/// Where the error `err` of reading `part`, a slice of `text`, on its own stands in
/// `text`: its line and column (from 1). serde counts from the part's start, so on the
/// part's first line the column is further on by where the part starts.
pub fn error_place(text: &str, part: &str, err: &serde_json::Error) -> (u64, usize) {
    let (line, offset) = start_of(text, part);
    let column = err.column() + if err.line() <= 1 { offset } else { 0 };
    (line + err.line().saturating_sub(1) as u64, column)
}

/// A serde_json error without its position (the caller names file and line).
pub fn json_error_text(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

/// Turns a serde_json error on one line into a message without serde's own "line 1".
pub fn describe_json_error(e: &serde_json::Error) -> String {
    format!("{} (column {})", json_error_text(e), e.column())
}

/// Parses one JSON Lines record (an object), or reports why it cannot: malformed JSON, not
/// an object (`what` names the record, "one cell"), invalid UTF-8, a key given twice.
pub fn parse_record<'a, T: serde::Deserialize<'a>>(
    text: &'a [u8],
    what: &str,
    file: &Arc<Path>,
    line: u64,
    diags: &mut Diagnostics,
) -> Option<T> {
    let mut fail = |field: Option<&str>, msg: String| diags.error(file, Some(line), field, msg);
    if text.first() != Some(&b'{') {
        match serde_json::from_slice::<J>(text) {
            Ok(v) => fail(
                None,
                format!("expected a JSON object ({what}), found {}", v.kind()),
            ),
            Err(e) => fail(None, format!("malformed JSON: {}", describe_json_error(&e))),
        }
        return None;
    }
    // One UTF-8 check for the whole line lets serde skip checking each string.
    let Ok(text) = std::str::from_utf8(text) else {
        fail(None, "malformed JSON: the line is not valid UTF-8".into());
        return None;
    };
    match serde_json::from_str(text) {
        Ok(r) => Some(r),
        Err(e) => {
            let msg = describe_json_error(&e);
            fail(
                duplicate_field(&msg).as_deref(),
                format!("malformed JSON: {msg}"),
            );
            None
        }
    }
}

/// The first key that appears twice in one object of the JSON `text`, at any depth, as a
/// dotted path (`dataset.name`, `a[2].b`); `None` when every object names each key once, or
/// when the text is not JSON (which its own reading reports). serde_json keeps the last of two
/// equal keys without a word; a file frameaudit trusts (an audit header) must not say two
/// things of one field.
pub fn duplicate_key(text: &str) -> Option<String> {
    use serde::de::DeserializeSeed;
    use std::cell::RefCell;

    struct Walk<'f> {
        path: String,
        found: &'f RefCell<Option<String>>,
    }

    impl<'f> Walk<'f> {
        fn below(&self, path: String) -> Walk<'f> {
            Walk {
                path,
                found: self.found,
            }
        }
    }

    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0;
            while seq
                .next_element_seed(self.below(format!("{}[{i}]", self.path)))?
                .is_some()
            {
                i += 1;
            }
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                let path = if self.path.is_empty() {
                    key.to_string()
                } else {
                    format!("{}.{key}", self.path)
                };
                if !seen.insert(key.into_owned()) && self.found.borrow().is_none() {
                    *self.found.borrow_mut() = Some(path.clone());
                }
                map.next_value_seed(self.below(path))?;
            }
            Ok(())
        }
    }

    let found = RefCell::new(None);
    let mut d = serde_json::Deserializer::from_str(text);
    Walk {
        path: String::new(),
        found: &found,
    }
    .deserialize(&mut d)
    .ok()?;
    found.into_inner()
}

/// The field named in serde's "duplicate field `x`" message.
fn duplicate_field(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("duplicate field `")?;
    Some(rest[..rest.find('`')?].to_string())
}

/// The UTF-8 byte-order mark that Notepad, Excel and some exporters put before the text.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The bytes without a leading byte-order mark: a BOM starts no JSON value, and every
/// reader of JSON and JSON Lines accepts one at the start of a file, as the CSV readers do.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// `strip_bom` of text.
pub fn strip_bom_str(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// A stream without its leading byte-order mark (the first three bytes are read to see).
pub fn skip_bom<R: std::io::Read>(
    mut reader: R,
) -> std::io::Result<std::io::Chain<std::io::Cursor<Vec<u8>>, R>> {
    let mut head = Vec::with_capacity(3);
    while head.len() < 3 {
        let mut b = [0u8; 3];
        let n = match reader.read(&mut b[..3 - head.len()]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        head.extend_from_slice(&b[..n]);
    }
    if head == BOM {
        head.clear();
    }
    Ok(std::io::Read::chain(std::io::Cursor::new(head), reader))
}

/// Calls `f` with every non-blank line of a JSON Lines stream (trimmed) and its number. A
/// byte-order mark before the first line is not part of it.
pub fn for_each_line(
    reader: impl std::io::BufRead,
    path: &Path,
    mut f: impl FnMut(&[u8], u64),
) -> Result<(), crate::core::diag::LoadError> {
    let reader = skip_bom(reader).map_err(|source| crate::core::diag::LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    for (i, line) in std::io::BufRead::split(reader, b'\n').enumerate() {
        let line = line.map_err(|source| crate::core::diag::LoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let text = line.trim_ascii();
        if !text.is_empty() {
            f(text, i as u64 + 1);
        }
    }
    Ok(())
}

/// True when the field was absent (not `null`).
pub fn is_missing(v: &J<'_>) -> bool {
    matches!(v, J::Missing)
}

/// Checks the fields of one record, collecting every problem with its field name.
pub struct FieldCheck<'d> {
    diags: &'d mut Diagnostics,
    file: &'d Arc<Path>,
    line: u64,
    /// False once any field failed.
    pub ok: bool,
}

impl<'d> FieldCheck<'d> {
    /// A check of the record at `line` of `file`, reporting into `diags`.
    pub fn new(diags: &'d mut Diagnostics, file: &'d Arc<Path>, line: u64) -> Self {
        FieldCheck {
            diags,
            file,
            line,
            ok: true,
        }
    }

    /// Records an error on `field`; the record is then not valid.
    pub fn fail(&mut self, field: &str, msg: String) {
        self.diags
            .error(self.file, Some(self.line), Some(field), msg);
        self.ok = false;
    }

    /// A required non-empty string.
    pub fn required_str<'a>(&mut self, field: &str, v: &'a J<'a>) -> &'a str {
        if is_missing(v) {
            self.fail(field, "required field is missing".into());
            return "";
        }
        match v {
            J::Str(s) if !s.is_empty() => s,
            J::Str(_) => {
                self.fail(field, "must be a non-empty string".into());
                ""
            }
            other => {
                self.fail(field, format!("expected a string, found {}", other.kind()));
                ""
            }
        }
    }

    /// An optional string with a default for absent, null or empty.
    pub fn defaulted_str<'a>(&mut self, field: &str, v: &'a J<'a>, default: &'a str) -> &'a str {
        if is_missing(v) {
            return default;
        }
        match v {
            J::Null => default,
            J::Str(s) if s.is_empty() => default,
            J::Str(s) => s,
            other => {
                self.fail(field, format!("expected a string, found {}", other.kind()));
                default
            }
        }
    }

    /// An optional string where null and `""` are absent (`replicate`, `nuisance`,
    /// `cluster`: docs/measures.md §16.1).
    pub fn opt_name<'a>(&mut self, field: &str, v: &'a J<'a>) -> Option<&'a str> {
        self.opt_str(field, v).filter(|s| !s.is_empty())
    }

    /// An optional string or null.
    pub fn opt_str<'a>(&mut self, field: &str, v: &'a J<'a>) -> Option<&'a str> {
        if is_missing(v) {
            return None;
        }
        match v {
            J::Null => None,
            J::Str(s) => Some(s),
            other => {
                self.fail(
                    field,
                    format!("expected a string or null, found {}", other.kind()),
                );
                None
            }
        }
    }

    /// An integer >= 0 (null allowed when `nullable`).
    pub fn non_negative_int(&mut self, field: &str, v: &J<'_>, nullable: bool) -> Option<u64> {
        if is_missing(v) || matches!(v, J::Null) {
            if !nullable {
                let msg = if is_missing(v) {
                    "required field is missing"
                } else {
                    "must be an integer >= 0, found null"
                };
                self.fail(field, msg.into());
            }
            return None;
        }
        match v.as_integer() {
            Some(i) if (0..=i128::from(u64::MAX)).contains(&i) => Some(i as u64),
            Some(i) => {
                self.fail(field, format!("must be an integer >= 0, found {i}"));
                None
            }
            None => {
                let found = if matches!(v, J::Float(_)) {
                    format!("{v}")
                } else {
                    v.kind().to_string()
                };
                self.fail(field, format!("must be an integer >= 0, found {found}"));
                None
            }
        }
    }

    /// An optional number in `[lo, hi]` or null.
    pub fn ranged(&mut self, field: &str, v: &J<'_>, lo: f64, hi: f64) -> Option<f64> {
        let what = format!("a number in [{}, {}]", short_number(lo), short_number(hi));
        self.number_where(field, v, |x| (lo..=hi).contains(&x), &what)
    }

    /// An optional finite number > 0 (`fps`) or null.
    pub fn positive(&mut self, field: &str, v: &J<'_>) -> Option<f64> {
        self.number_where(
            field,
            v,
            |x| x > 0.0 && x.is_finite(),
            "a finite number > 0",
        )
    }

    /// An optional finite number >= 0 (`duration`, `start`, `end`) or null.
    pub fn non_negative(&mut self, field: &str, v: &J<'_>) -> Option<f64> {
        self.number_where(
            field,
            v,
            |x| x >= 0.0 && x.is_finite(),
            "a finite number >= 0",
        )
    }

    /// An optional number that `ok` takes, or null; else an error that it must be `what`.
    fn number_where(
        &mut self,
        field: &str,
        v: &J<'_>,
        ok: impl Fn(f64) -> bool,
        what: &str,
    ) -> Option<f64> {
        if is_missing(v) || matches!(v, J::Null) {
            return None;
        }
        match v.as_f64() {
            Some(x) if ok(x) => Some(x),
            Some(_) => {
                self.fail(field, format!("must be {what}, found {v}"));
                None
            }
            None => {
                self.fail(
                    field,
                    format!("expected a number or null, found {}", v.kind()),
                );
                None
            }
        }
    }
}

/// The pairing rule of replicate cells (docs/measures.md §16.1): a replicate names its
/// nuisance, and a canonical cell has none (both already absent when null or empty).
pub fn check_replicate(ck: &mut FieldCheck<'_>, replicate: Option<&str>, nuisance: Option<&str>) {
    match (replicate, nuisance) {
        (Some(r), None) => ck.fail(
            "nuisance",
            format!("replicate {r:?} needs a non-empty nuisance (what it varies: rerun, phase, ...)"),
        ),
        (None, Some(n)) => ck.fail(
            "nuisance",
            format!("nuisance {n:?} on a canonical cell (no replicate): name the replicate, or leave the nuisance out"),
        ),
        _ => {}
    }
}

/// Lines for the tests that hold a plain reader ([`scan_flat`]) to serde.
#[cfg(test)]
pub(crate) mod testing {
    use proptest::prelude::Strategy;

    /// Value tokens of every kind: those the plain reader reads, and those it must leave
    /// to serde (escapes, control characters, exponents, long or odd numbers, nesting,
    /// malformed text).
    pub const VALUES: [&str; 44] = [
        "\"M\"",
        "\"\"",
        "\"q 1\"",
        "\"\u{e9}\u{4e2d}\"",
        "\"a\\\"b\"",
        "\"\\u00e9\"",
        "\"\\n\"",
        "\"tab\there\"",
        "\"\u{1}\"",
        "0",
        "-0",
        "01",
        "8",
        "151200",
        "-3",
        "123456789012345",
        "1234567890123456789",
        "99999999999999999999",
        "1.",
        ".5",
        "1e5",
        "1E-3",
        "-1.25",
        "0.97",
        "0.1",
        "-0.0",
        "3.14159265358979",
        "1.0000000000000002",
        "0.000001",
        "1.5e300",
        "-",
        "+1",
        "1.2.3",
        "true",
        "false",
        "null",
        "tru",
        "nul",
        "[]",
        "[1, 2 ,3]",
        "[\"a\",\"b\"]",
        "[1,[2]]",
        "{\"a\":1}",
        "[1,]",
    ];

    /// Lines of a record's `fields`, of keys it does not know (one of them a field's name
    /// written with an escape, one a field's in capitals) and of the empty key, with values
    /// of every kind, separators with and without whitespace, decimals either side of the
    /// 15 digits the plain reader takes, and broken framing.
    pub fn lines(fields: &[&str]) -> impl Strategy<Value = String> {
        let first = fields[0];
        let mut keys: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        keys.push("extra".into());
        keys.push(format!(
            "{}\\u{:04x}",
            &first[..first.len() - 1],
            first.as_bytes()[first.len() - 1]
        ));
        keys.push(first.to_uppercase());
        keys.push(String::new());
        (
            proptest::collection::vec(
                (
                    0..keys.len(),
                    0..VALUES.len(),
                    proptest::sample::select(vec![":", ": ", " : ", ":\t"]),
                    proptest::sample::select(vec![",", ", ", " ,", ",\r"]),
                ),
                0..8,
            ),
            (
                0u64..100_000_000_000_000_000,
                0usize..19,
                proptest::bool::ANY,
            ),
            proptest::sample::select(vec![
                ("{", "}"),
                (" { ", " } "),
                ("{", ""),
                ("[", "]"),
                ("{", "},"),
                ("{", "}x"),
            ]),
        )
            .prop_map(move |(pairs, (digits, point, negative), (open, close))| {
                let d = digits.to_string();
                let point = point.min(d.len());
                let number = format!(
                    "{}{}{}{}",
                    if negative { "-" } else { "" },
                    &d[..d.len() - point],
                    if point > 0 && point < d.len() {
                        "."
                    } else {
                        ""
                    },
                    if point < d.len() {
                        &d[d.len() - point..]
                    } else {
                        ""
                    },
                );
                let mut line = open.to_string();
                for (n, (k, v, colon, comma)) in pairs.iter().enumerate() {
                    if n > 0 {
                        line.push_str(comma);
                    }
                    let value = if *v == 0 && n % 2 == 1 {
                        number.as_str()
                    } else {
                        VALUES[*v]
                    };
                    line.push_str(&format!("\"{}\"{colon}{value}", keys[*k]));
                }
                line.push_str(close);
                line
            })
    }

    /// What the tests ask of a plain reader on any line: it reads the line as serde does,
    /// value for value, or leaves it to serde.
    pub fn reads_as_serde<'a, T: super::PlainRecord<'a> + std::fmt::Debug>(
        line: &'a str,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut plain = T::default();
        if plain.read_plain(line) {
            let by_serde = serde_json::from_str::<T>(line);
            proptest::prop_assert!(
                by_serde.is_ok(),
                "{}: serde refused: {:?}",
                line,
                by_serde.err()
            );
            let serde = format!("{:?}", by_serde.ok());
            proptest::prop_assert_eq!(format!("{:?}", Some(plain)), serde, "{}", line);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_messages_are_short() {
        for (x, shown) in [
            (-1e308, "-1e308"),
            (f64::MAX, "1.7976931348623157e308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (0.0, "0"),
            (0.5, "0.5"),
            (64.0, "64"),
            (123456.25, "123456.25"),
            (1e16, "1e16"),
        ] {
            assert_eq!(short_number(x), shown);
        }
    }

    /// What `scan_named` or `scan_named_as` gives a line: whether it read it, and the
    /// values it gave, in order.
    type Read<'a> = (bool, Vec<(usize, J<'a>)>);

    const NAMES: [&str; 4] = ["model", "item_id", "frames", "gold"];

    fn by_name(line: &str) -> Read<'_> {
        let mut got = Vec::new();
        let ok = scan_named(line, &NAMES, |i, v| {
            got.push((i, v));
            true
        });
        (ok, got)
    }

    fn by_layout<'a>(line: &'a str, shape: &mut Shape) -> Read<'a> {
        let mut got = Vec::new();
        let ok = scan_named_as(line, &NAMES, shape, &mut got, |got, i, v| {
            got.push((i, v));
            true
        });
        (ok, got)
    }

    /// Two lines of one layout (keys, separators, framing) with values drawn apart, the
    /// second sometimes with one separator, one key or the framing changed.
    fn line_pairs() -> impl proptest::strategy::Strategy<Value = (String, String)> {
        use proptest::prelude::*;
        const KEYS: [&str; 6] = ["model", "item_id", "frames", "gold", "extra", "Model"];
        const SEPS: [&str; 4] = [":", ": ", " : ", ","];
        let values = testing::VALUES;
        (
            proptest::collection::vec(
                (0..KEYS.len(), 0..3usize, 0..values.len(), 0..values.len()),
                1..7,
            ),
            0..12usize,
            0..3usize,
        )
            .prop_map(move |(fields, change, frame)| {
                let (open, close) = [("{", "}"), (" {", "} "), ("{ ", " }")][frame];
                let mut a = open.to_string();
                let mut b = open.to_string();
                for (n, &(k, sep, va, vb)) in fields.iter().enumerate() {
                    if n > 0 {
                        a.push(',');
                        b.push(if change == 0 && n == 1 { ' ' } else { ',' });
                    }
                    let colon = [":", ": ", " : "][sep];
                    a.push_str(&format!("\"{}\"{colon}{}", KEYS[k], values[va]));
                    let key = if change == 1 && n == fields.len() - 1 {
                        KEYS[(k + 1) % KEYS.len()]
                    } else {
                        KEYS[k]
                    };
                    let colon = if change == 2 {
                        SEPS[(sep + 1) % SEPS.len()]
                    } else {
                        colon
                    };
                    b.push_str(&format!("\"{key}\"{colon}{}", values[vb]));
                }
                a.push_str(close);
                b.push_str(if change == 3 { "}}" } else { close });
                (a, b)
            })
    }

    proptest::proptest! {
        /// A line read through a layout learnt from another line is read as `scan_named`
        /// reads it, whether the layouts agree or not.
        #[test]
        fn a_learnt_layout_reads_as_scan_named((a, b) in line_pairs()) {
            let mut shape = Shape::default();
            let first = by_layout(&a, &mut shape);
            proptest::prop_assert_eq!(&first, &by_name(&a), "{}", a);
            let second = by_layout(&b, &mut shape);
            let expected = by_name(&b);
            proptest::prop_assert_eq!(second.0, expected.0, "{} then {}", a, b);
            if expected.0 {
                proptest::prop_assert_eq!(second.1, expected.1, "{} then {}", a, b);
            }
        }
    }

    proptest::proptest! {
        /// Lines of two layouts in any order are each read as `scan_named` reads them,
        /// through the layouts learnt from the lines before.
        #[test]
        fn lines_of_two_layouts_in_any_order_read_as_scan_named(
            (a, b) in line_pairs(),
            order in proptest::collection::vec(proptest::bool::ANY, 1..12),
        ) {
            let mut shape = Shape::default();
            for line in order.iter().map(|&first| if first { &a } else { &b }) {
                let got = by_layout(line, &mut shape);
                let expected = by_name(line);
                proptest::prop_assert_eq!(got.0, expected.0, "{}", line);
                if expected.0 {
                    proptest::prop_assert_eq!(got.1, expected.1, "{}", line);
                }
            }
        }
    }

    /// A file that gives each cell's replicate after it alternates two layouts: each is
    /// learnt once, and every line after the first two is read by its own layout.
    #[test]
    fn alternating_layouts_are_each_learnt_once() {
        let canonical = r#"{"model":"M","item_id":"q1","frames":8,"gold":"A"}"#;
        let replicate = r#"{"model":"M","item_id":"q1","frames":8,"gold":"B","replicate":"r1","nuisance":"rerun"}"#;
        let mut shape = Shape::default();
        for n in 0..20 {
            let line = if n % 2 == 0 { canonical } else { replicate };
            assert_eq!(by_layout(line, &mut shape), by_name(line), "{line}");
        }
        assert_eq!(shape.learnt, 2);
        // Three layouts in turn, and a fourth now and then.
        let other = r#"{"model":"M","item_id":"q1","frames":8}"#;
        let fourth = r#"{"frames":8,"model":"M"}"#;
        for n in 0..30 {
            let line = [canonical, replicate, other][n % 3];
            let line = if n % 10 == 9 { fourth } else { line };
            assert_eq!(by_layout(line, &mut shape), by_name(line), "{line}");
        }
        assert_eq!(shape.learnt, 4);
    }

    #[test]
    fn lines_of_the_learnt_layout_are_read_by_it() {
        let mut shape = Shape::default();
        let a = r#"{"model":"M","x":[1, 2],"item_id": "q1","frames":8,"gold":null}"#;
        assert_eq!(by_layout(a, &mut shape), by_name(a));
        assert_eq!(shape.layouts[0].leads.len(), 5);
        let layout = shape.layouts[0].clone();
        let only = |layout: &Layout| {
            let mut shape = Shape::default();
            shape.learn(layout.clone());
            shape
        };
        // Other values of every kind, one of them not a plain value (left to serde).
        for (b, read) in [
            (
                r#"{"model":"Nå","x":[],"item_id": "q 2","frames":-0.5,"gold":"A"}"#,
                Some(true),
            ),
            (
                r#"{"model":"N","x":[1],"item_id": "q2","frames":1e5,"gold":true}"#,
                Some(true),
            ),
            (
                r#"{"model":"N","x":[1],"item_id": "q2","frames":8,"gold":"a\"b"}"#,
                None,
            ),
            (
                r#"{"model":"N","x":[1],"item_id":"q2","frames":8,"gold":"A"}"#,
                None,
            ),
            (
                r#"{"model":"N","x":[1],"item_id": "q2","frames":8,"gold":"A"} "#,
                None,
            ),
        ] {
            let mut got = Vec::new();
            assert_eq!(
                layout.read(b, |i, v| {
                    got.push((i, v));
                    true
                }),
                read,
                "{b}"
            );
            assert_eq!(by_layout(b, &mut only(&layout)), by_name(b), "{b}");
        }
        // A value `each` refuses is refused through the layout too.
        let b = r#"{"model":"N","x":[1],"item_id": "q2","frames":8,"gold":"A"}"#
            .replace(": \"q2", ": \"no");
        let refuse = |line: &str, shape: &mut Shape| {
            scan_named_as(line, &NAMES, shape, &mut (), |_, i, v| {
                !(i == 1 && v == J::Str("no".into()))
            })
        };
        assert!(!refuse(&b, &mut only(&layout)));
    }

    /// The string reader against a byte loop, with a quote, a backslash, a control
    /// character, DEL or a letter of two bytes at every place of strings of every length
    /// up to three words.
    #[test]
    fn plain_strings_end_at_their_first_quote_and_refuse_escapes_and_controls() {
        fn by_bytes(text: &str) -> Option<(&str, usize)> {
            let b = text.as_bytes();
            let end = (1..b.len()).find(|&j| matches!(b[j], b'"' | b'\\' | 0..0x20))?;
            (b[end] == b'"').then(|| (&text[1..end], end + 1))
        }
        for len in 0..26 {
            for at in 0..len {
                for special in ["\"", "\\", "\n", "\u{1f}", "\u{7f}", "é", "\u{0}"] {
                    let mut body: String = (0..len)
                        .map(|k| char::from(b'a' + (k % 26) as u8))
                        .collect();
                    body.replace_range(at..at + 1, special);
                    for tail in ["\"", "\",\"x\":1}", ""] {
                        let text = format!("\"{body}{tail}");
                        assert_eq!(plain_str(&text, 0), by_bytes(&text), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_leading_bom_is_skipped_once() {
        let mut out = Vec::new();
        let mut r = skip_bom(&b"\xEF\xBB\xBF{\"a\":1}\n"[..]).expect("read");
        std::io::Read::read_to_end(&mut r, &mut out).expect("read");
        assert_eq!(out, b"{\"a\":1}\n");
        for text in [&b""[..], b"{", b"\xEF\xBB", b"{}\n\xEF\xBB\xBF"] {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut skip_bom(text).expect("read"), &mut out).expect("read");
            assert_eq!(out, text);
        }
        assert_eq!(strip_bom(b"\xEF\xBB\xBF\xEF\xBB\xBF"), BOM);
    }

    #[test]
    fn a_key_twice_in_one_object_is_found_at_any_depth() {
        assert_eq!(duplicate_key(r#"{"a":1,"b":{"c":1}}"#), None);
        assert_eq!(duplicate_key(r#"{"a":1,"a":2}"#).as_deref(), Some("a"));
        assert_eq!(
            duplicate_key(r#"{"d":{"name":"x","name":"y"}}"#).as_deref(),
            Some("d.name")
        );
        assert_eq!(
            duplicate_key(r#"{"l":[{"k":1},{"k":1,"k":2}]}"#).as_deref(),
            Some("l[1].k")
        );
        // Escaped keys are keys too; equal keys in two objects are not duplicates.
        assert_eq!(
            duplicate_key(r#"{"a\u0062":1,"ab":2}"#).as_deref(),
            Some("ab")
        );
        assert_eq!(duplicate_key(r#"[{"k":1},{"k":1}]"#), None);
        assert_eq!(duplicate_key("not json"), None);
    }
}
