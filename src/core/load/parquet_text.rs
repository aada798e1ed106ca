//! Flat text columns of Parquet read page by page (docs/formats.md §7).
//!
//! The `parquet` crate's column reader hands out each row's text as a reference-counted
//! copy of its dictionary entry and leaves the UTF-8 check to the caller, once a row; for a
//! column of a few distinct strings over a million rows that was most of the reading. Here
//! the dictionary's strings are checked (and, in a column of JSON text, parsed) once per
//! column chunk, and a row is an index into them, which also names the text to the
//! builder ([`TextChunk::key`]) so that it interns an entry once, not once a row. The crate
//! still reads the file, its footer and the pages, and decompresses them;
//! this module decodes what the Parquet format puts in a page of a flat text column: the
//! definition levels and the values, dictionary-encoded (the RLE / bit-packing hybrid of
//! indices) or plain. A chunk using any other encoding is read by the crate's reader
//! ([`fits`] decides).

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use parquet::basic::Encoding;
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::ColumnChunkMetaData;

use super::json::{J, describe_json_error};

/// Whether a flat column chunk (no repetition) uses only the encodings read here.
pub fn fits(chunk: &ColumnChunkMetaData, max_def: i16) -> bool {
    max_def <= 1
        && chunk.encodings().all(|e| {
            matches!(
                e,
                Encoding::PLAIN
                    | Encoding::PLAIN_DICTIONARY
                    | Encoding::RLE_DICTIONARY
                    | Encoding::RLE
            )
        })
}

/// The RLE / bit-packing hybrid of the Parquet format: runs of one repeated value and runs
/// of values packed `width` bits each, least significant bit first.
struct Hybrid {
    data: Bytes,
    pos: usize,
    width: usize,
    /// Values left in the current run.
    left: usize,
    /// The value a repeated run repeats; `None` in a bit-packed run.
    repeat: Option<u32>,
    /// The bit (from the start of `data`) of the next value of a bit-packed run.
    bit: usize,
}

impl Hybrid {
    fn new(data: Bytes, width: usize) -> Result<Self, String> {
        if width > 32 {
            return Err(format!("a bit width of {width}"));
        }
        Ok(Hybrid {
            data,
            pos: 0,
            width,
            left: 0,
            repeat: None,
            bit: 0,
        })
    }

    /// A ULEB128 run header.
    fn header(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.data.get(self.pos).ok_or("a run header is cut short")?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a run header longer than ten bytes".into())
    }

    /// Starts the next run; false at the end of the data.
    fn next_run(&mut self) -> Result<bool, String> {
        if self.pos >= self.data.len() {
            return Ok(false);
        }
        let h = self.header()?;
        let n = usize::try_from(h >> 1).map_err(|_| "a run too long")?;
        if h & 1 == 0 {
            let bytes = self.width.div_ceil(8);
            let v = self
                .data
                .get(self.pos..self.pos + bytes)
                .ok_or("a repeated run is cut short")?;
            let mut le = [0u8; 4];
            le[..bytes].copy_from_slice(v);
            self.pos += bytes;
            self.repeat = Some(u32::from_le_bytes(le));
            self.left = n;
        } else {
            // n groups of 8 values, n * width bytes; the last run of a page may stop short
            // of its padding, so only the values the data holds are taken.
            let bytes = n.saturating_mul(self.width);
            let held = (self.data.len() - self.pos).min(bytes);
            self.repeat = None;
            self.bit = self.pos * 8;
            self.left = (held * 8)
                .checked_div(self.width)
                .map_or(n.saturating_mul(8), |held| held.min(n.saturating_mul(8)));
            self.pos += held;
        }
        Ok(true)
    }

    fn packed(&mut self) -> u32 {
        let at = self.bit / 8;
        let mut le = [0u8; 8];
        let end = (at + 8).min(self.data.len());
        if at < end {
            le[..end - at].copy_from_slice(&self.data[at..end]);
        }
        let v = (u64::from_le_bytes(le) >> (self.bit % 8)) & ((1u64 << self.width) - 1);
        self.bit += self.width;
        v as u32
    }

    /// Takes the next `n` values run by run: `take` is given the run's repeated value
    /// (`None` in a packed run, whose values it reads with [`Hybrid::packed`]) and how many
    /// of its values to take; an error when the data holds fewer.
    fn runs(
        &mut self,
        mut n: usize,
        mut take: impl FnMut(&mut Hybrid, Option<u32>, usize),
    ) -> Result<(), String> {
        while n > 0 {
            if self.left == 0 {
                if !self.next_run()? {
                    return Err("fewer values than the page says".into());
                }
                continue;
            }
            let k = n.min(self.left);
            take(self, self.repeat, k);
            self.left -= k;
            n -= k;
        }
        Ok(())
    }

    /// Moves past the next `n` values without keeping them: a repeated run by its count, a
    /// packed one by its bits. Returns how many of them are `value` (each packed value is
    /// read for that), or 0 when `value` is `None`; an error when the data holds fewer.
    fn skip(&mut self, n: usize, value: Option<u32>) -> Result<usize, String> {
        let mut found = 0;
        self.runs(n, |h, repeat, k| match (repeat, value) {
            (Some(v), Some(want)) if v == want => found += k,
            (Some(_), _) => {}
            (None, Some(want)) => found += (0..k).filter(|_| h.packed() == want).count(),
            (None, None) => h.bit += k * h.width,
        })?;
        Ok(found)
    }

    /// Appends the next `n` values to `out`; an error when the data holds fewer.
    fn read(&mut self, n: usize, out: &mut Vec<u32>) -> Result<(), String> {
        self.runs(n, |h, repeat, k| match repeat {
            Some(v) => out.extend(std::iter::repeat_n(v, k)),
            None => out.extend((0..k).map(|_| h.packed())),
        })
    }
}

/// One row's text, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    /// An entry of the dictionary.
    Dict(u32),
    /// Bytes of this batch's own text (a plain-encoded value).
    Own(u32, u32),
    /// A value that is not UTF-8.
    NotUtf8,
}

/// Where the values of the current data page come from.
enum Values {
    Indices(Hybrid),
    Plain(Bytes, usize),
}

/// The key of the next dictionary entry read anywhere: keys are never given twice while
/// the program runs, so a key names one text for good ([`TextChunk::key`]). 0 is no key.
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// A flat text column chunk, read page by page.
pub struct TextChunk {
    pages: Box<dyn PageReader>,
    max_def: i16,
    /// The dictionary's text, one entry after another, and each valid entry's place.
    dict: String,
    entries: Vec<Option<(u32, u32)>>,
    has_dict: bool,
    /// The key of the dictionary's first entry (the others follow it).
    key_base: u64,
    /// Whether the text is JSON, and then each dictionary entry's value, parsed once (an
    /// error where the entry is not JSON; nothing where it is not UTF-8).
    json: bool,
    parsed: Vec<Result<J<'static>, String>>,
    /// The current data page: its levels left to read, their decoder and its values.
    levels_left: usize,
    defs: Option<Hybrid>,
    values: Option<Values>,
    /// The text of the plain values of the batch last read.
    own: String,
    scratch: Vec<u32>,
}

/// The plain-encoded value at `*at` of a page (its length, then its bytes), `at` moved past
/// it; `None` when the page is cut short.
fn plain_at<'b>(buf: &'b [u8], at: &mut usize) -> Option<&'b [u8]> {
    let len = u32_at(buf, *at)? as usize;
    let bytes = buf.get(*at + 4..*at + 4 + len)?;
    *at += 4 + len;
    Some(bytes)
}

/// The little-endian `u32` at `at`.
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

impl TextChunk {
    /// A chunk of text, or of JSON text when `json`.
    pub fn new(pages: Box<dyn PageReader>, max_def: i16, json: bool) -> Self {
        TextChunk {
            pages,
            max_def,
            dict: String::new(),
            entries: Vec::new(),
            has_dict: false,
            key_base: 0,
            json,
            parsed: Vec::new(),
            levels_left: 0,
            defs: None,
            values: None,
            own: String::new(),
            scratch: Vec::new(),
        }
    }

    /// The text of a row read by the last [`TextChunk::read`].
    pub fn text(&self, t: Text) -> Option<&str> {
        let (s, (a, len)) = match t {
            Text::Dict(i) => (&self.dict, self.entries.get(i as usize).copied()??),
            Text::Own(a, len) => (&self.own, (a, len)),
            Text::NotUtf8 => return None,
        };
        s.get(a as usize..a as usize + len as usize)
    }

    /// The JSON value of a row read by the last [`TextChunk::read`] in a column of JSON
    /// text: a dictionary entry's as parsed once, a plain value's parsed now; `None` when
    /// the text is not UTF-8, an error when it is not JSON.
    pub fn json(&self, t: Text) -> Option<Result<J<'_>, String>> {
        if let Text::Dict(i) = t {
            let parsed = self.parsed.get(i as usize)?;
            self.entries.get(i as usize).copied()??;
            return Some(parsed.as_ref().map(J::borrowed).map_err(Clone::clone));
        }
        let s = self.text(t)?;
        Some(serde_json::from_str(s).map_err(|e| describe_json_error(&e)))
    }

    /// A row's key: the same for every row of one dictionary entry and no other text, for
    /// as long as the program runs; 0 for a text stored in its row.
    pub fn key(&self, t: Text) -> u64 {
        match t {
            Text::Dict(i) => self.key_base + u64::from(i),
            _ => 0,
        }
    }

    fn set_dict(&mut self, buf: &Bytes, n: u32, encoding: Encoding) -> Result<(), String> {
        if self.has_dict {
            return Err("a second dictionary page in one column chunk".into());
        }
        if !matches!(encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
            return Err(format!("a dictionary page encoded {encoding}"));
        }
        self.has_dict = true;
        self.key_base = NEXT_KEY.fetch_add(u64::from(n), Ordering::Relaxed);
        let mut at = 0;
        for _ in 0..n {
            let bytes = plain_at(buf, &mut at).ok_or("the dictionary page is cut short")?;
            let text = std::str::from_utf8(bytes).ok();
            if self.json {
                self.parsed.push(match text {
                    Some(s) => serde_json::from_str::<J<'_>>(s)
                        .map(J::into_owned)
                        .map_err(|e| describe_json_error(&e)),
                    None => Ok(J::Null),
                });
            }
            self.entries.push(text.map(|s| {
                let start = self.dict.len() as u32;
                self.dict.push_str(s);
                (start, s.len() as u32)
            }));
        }
        Ok(())
    }

    /// Takes the next page; false at the end of the chunk.
    fn next_page(&mut self) -> Result<bool, String> {
        loop {
            let Some(page) = self.pages.get_next_page().map_err(|e| e.to_string())? else {
                return Ok(false);
            };
            let (buf, levels, encoding, defs_at, values_at) = match page {
                Page::DictionaryPage {
                    buf,
                    num_values,
                    encoding,
                    ..
                } => {
                    self.set_dict(&buf, num_values, encoding)?;
                    continue;
                }
                Page::DataPage {
                    buf,
                    num_values,
                    encoding,
                    def_level_encoding,
                    ..
                } => {
                    if self.max_def == 0 {
                        (buf, num_values, encoding, 0..0, 0)
                    } else {
                        if def_level_encoding != Encoding::RLE {
                            return Err(format!("definition levels encoded {def_level_encoding}"));
                        }
                        let len = u32_at(&buf, 0).ok_or("a data page is cut short")? as usize;
                        (buf, num_values, encoding, 4..4 + len, 4 + len)
                    }
                }
                Page::DataPageV2 {
                    buf,
                    num_values,
                    encoding,
                    def_levels_byte_len,
                    rep_levels_byte_len,
                    ..
                } => {
                    let at = rep_levels_byte_len as usize;
                    let end = at + def_levels_byte_len as usize;
                    (buf, num_values, encoding, at..end, end)
                }
            };
            if defs_at.end > buf.len() || values_at > buf.len() {
                return Err("a data page is cut short".into());
            }
            let width = 16 - (self.max_def as u16).leading_zeros() as usize;
            self.defs = if self.max_def > 0 {
                Some(Hybrid::new(buf.slice(defs_at), width)?)
            } else {
                None
            };
            let values = buf.slice(values_at..);
            self.values = Some(match encoding {
                Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
                    if !self.has_dict {
                        return Err("dictionary indices with no dictionary page".into());
                    }
                    let width = *values.first().unwrap_or(&0) as usize;
                    Values::Indices(Hybrid::new(values.slice(values.len().min(1)..), width)?)
                }
                Encoding::PLAIN => Values::Plain(values, 0),
                other => return Err(format!("a data page encoded {other}")),
            });
            self.levels_left = levels as usize;
            return Ok(true);
        }
    }

    /// Moves past the next `n` rows (fewer only at the end of the chunk) without reading
    /// what it need not: a whole data page by its header, dictionary indices by their
    /// runs; definition levels are counted to know how many values the rows hold. The
    /// rows skipped are read by another reader, which reports what is wrong in them.
    pub fn skip(&mut self, n: usize) -> Result<usize, String> {
        let mut done = 0;
        while done < n {
            if self.levels_left == 0 {
                let meta = self.pages.peek_next_page().map_err(|e| e.to_string())?;
                match meta {
                    None => break,
                    // A flat column has a level a row.
                    Some(m) if !m.is_dict && m.num_levels.is_some_and(|l| l <= n - done) => {
                        self.pages.skip_next_page().map_err(|e| e.to_string())?;
                        done += m.num_levels.unwrap_or(0);
                        continue;
                    }
                    Some(_) => {
                        if !self.next_page()? {
                            break;
                        }
                    }
                }
            }
            let k = (n - done).min(self.levels_left);
            let present = match &mut self.defs {
                None => k,
                Some(d) => d.skip(k, Some(self.max_def as u32))?,
            };
            match &mut self.values {
                Some(Values::Indices(h)) => {
                    h.skip(present, None)?;
                }
                Some(Values::Plain(buf, at)) => {
                    for _ in 0..present {
                        plain_at(buf, at).ok_or("a data page is cut short")?;
                    }
                }
                None => return Err("a data page without values".into()),
            }
            self.levels_left -= k;
            done += k;
        }
        Ok(done)
    }

    /// Reads up to `want` rows: their definition levels (when the column has them) into
    /// `defs` and the text of those that have a value into `out`, in place of the last
    /// batch. Returns the rows read (fewer only at the end of the chunk).
    pub fn read(
        &mut self,
        want: usize,
        defs: &mut Vec<i16>,
        out: &mut Vec<Text>,
    ) -> Result<usize, String> {
        defs.clear();
        out.clear();
        self.own.clear();
        let mut got = 0;
        while got < want {
            if self.levels_left == 0 && !self.next_page()? {
                break;
            }
            let k = (want - got).min(self.levels_left);
            let present = match &mut self.defs {
                None => k,
                Some(d) => {
                    self.scratch.clear();
                    d.read(k, &mut self.scratch)?;
                    let max = self.max_def as u32;
                    if self.scratch.iter().any(|&l| l > max) {
                        return Err(format!("a definition level above {max}"));
                    }
                    defs.extend(self.scratch.iter().map(|&l| l as i16));
                    self.scratch.iter().filter(|&&l| l == max).count()
                }
            };
            match &mut self.values {
                Some(Values::Indices(h)) => {
                    self.scratch.clear();
                    h.read(present, &mut self.scratch)?;
                    let n = self.entries.len();
                    for &i in &self.scratch {
                        out.push(match self.entries.get(i as usize) {
                            Some(Some(_)) => Text::Dict(i),
                            Some(None) => Text::NotUtf8,
                            None => {
                                return Err(format!(
                                    "dictionary index {i} of a dictionary of {n} entries"
                                ));
                            }
                        });
                    }
                }
                Some(Values::Plain(buf, at)) => {
                    for _ in 0..present {
                        let bytes = plain_at(buf, at).ok_or("a data page is cut short")?;
                        out.push(match std::str::from_utf8(bytes) {
                            Ok(s) => {
                                let start = self.own.len() as u32;
                                self.own.push_str(s);
                                Text::Own(start, s.len() as u32)
                            }
                            Err(_) => Text::NotUtf8,
                        });
                    }
                }
                None => return Err("a data page without values".into()),
            }
            self.levels_left -= k;
            got += k;
        }
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hybrid of `runs`, each a repeated run `(count, value)` or bit-packed values.
    fn encode(width: usize, runs: &[Result<(usize, u32), Vec<u32>>]) -> Vec<u8> {
        fn uleb(mut v: u64, out: &mut Vec<u8>) {
            loop {
                let b = (v & 0x7f) as u8;
                v >>= 7;
                if v == 0 {
                    out.push(b);
                    return;
                }
                out.push(b | 0x80);
            }
        }
        let mut out = Vec::new();
        for r in runs {
            match r {
                Ok((n, v)) => {
                    uleb((*n as u64) << 1, &mut out);
                    out.extend_from_slice(&v.to_le_bytes()[..width.div_ceil(8)]);
                }
                Err(vals) => {
                    let groups = vals.len().div_ceil(8);
                    uleb(((groups as u64) << 1) | 1, &mut out);
                    let mut bits = vec![0u8; groups * width];
                    for (k, v) in vals.iter().enumerate() {
                        for b in 0..width {
                            if v >> b & 1 == 1 {
                                let at = k * width + b;
                                bits[at / 8] |= 1 << (at % 8);
                            }
                        }
                    }
                    out.extend(bits);
                }
            }
        }
        out
    }

    #[test]
    fn the_hybrid_reads_repeated_and_packed_runs_across_reads() {
        for width in [0usize, 1, 3, 7, 8, 13, 20, 32] {
            let max = if width == 32 {
                u32::MAX
            } else {
                (1u32 << width) - 1
            };
            let packed: Vec<u32> = (0..16u32)
                .map(|k| k.wrapping_mul(2_654_435_761) & max)
                .collect();
            let data = encode(width, &[Ok((5, max)), Err(packed.clone()), Ok((3, 0))]);
            let mut h = Hybrid::new(Bytes::from(data), width).unwrap();
            let mut out = Vec::new();
            for n in [2, 7, 9, 3, 3] {
                h.read(n, &mut out).unwrap();
            }
            let mut want = vec![max; 5];
            want.extend(&packed);
            want.extend([0; 3]);
            assert_eq!(out, want, "width {width}");
            assert!(h.read(1, &mut out).is_err(), "width {width}: past the end");
        }
    }

    #[test]
    fn a_cut_or_absurd_hybrid_is_an_error_not_a_panic() {
        let whole = encode(8, &[Ok((4, 9)), Err((0..8).collect())]);
        for cut in 0..whole.len() {
            let mut h = Hybrid::new(Bytes::copy_from_slice(&whole[..cut]), 8).unwrap();
            let mut out = Vec::new();
            assert!(h.read(12, &mut out).is_err(), "cut at {cut}");
        }
        assert!(Hybrid::new(Bytes::new(), 33).is_err());
        let endless = Bytes::from_static(&[0xff; 16]);
        assert!(
            Hybrid::new(endless, 4)
                .unwrap()
                .read(1, &mut Vec::new())
                .is_err()
        );
    }
}
