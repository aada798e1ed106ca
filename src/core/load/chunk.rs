//! Parsing in parallel, in input order: a block of input is split at record boundaries, each
//! part is parsed into its own fork of the sink on its own thread, and the parts are joined
//! back in input order, so ids, diagnostics and first occurrences come out as if the file
//! had been read sequentially.

use std::io::Read;

use crate::core::diag::Diagnostics;
use crate::core::matrix::{CellInput, TextKeys};

/// Where readers put the cells they read.
pub trait CellSink: Send + Sized {
    /// An empty sink for one part of the input (same files, nothing read yet).
    fn fork(&self) -> Self;
    /// Appends a part read after everything already here, leaving the part empty (and
    /// ready to be reused for the next part).
    fn join(&mut self, part: &mut Self);
    /// A hint: about `cells` more cells will come.
    fn reserve(&mut self, _cells: usize) {}
    /// Cells received so far.
    fn len(&self) -> usize;
    /// True before the first cell.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Counts one record (a line or row), valid or not.
    fn count_record(&mut self);
    /// Whether a reader may pass over the lines it can tell cheaply are replicates, unread
    /// and unchecked, for a whole read to take up later ([`CellSink::skip_replicate`]).
    fn skims_replicates(&self) -> bool {
        false
    }
    /// Counts one replicate line passed over unread.
    fn skip_replicate(&mut self) {}
    /// Where the problems of the input go.
    fn diags(&mut self) -> &mut Diagnostics;
    /// A validated cell read at `line` of the current file.
    fn push(&mut self, cell: &CellInput<'_>, line: u64);
    /// [`CellSink::push`] with the keys of the cell's texts ([`TextKeys`]), for a sink
    /// that does its work on a text once per key; others ignore them.
    fn push_keyed(&mut self, cell: &CellInput<'_>, _keys: &TextKeys, line: u64) {
        self.push(cell, line);
    }
}

/// Where a block of input may be cut: after a complete record.
pub trait Framing: Sync {
    /// The length of the complete records at the start of `buf` (0 if none is complete).
    fn complete(&self, buf: &[u8]) -> usize;
    /// A record boundary at or after `at` (or `buf.len()`).
    fn boundary_after(&self, buf: &[u8], at: usize) -> usize;
}

/// One record per line (JSON Lines: JSON strings cannot hold a raw newline).
pub struct Lines;

impl Framing for Lines {
    fn complete(&self, buf: &[u8]) -> usize {
        memchr::memrchr(b'\n', buf).map_or(0, |i| i + 1)
    }
    fn boundary_after(&self, buf: &[u8], at: usize) -> usize {
        memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |i| at + i + 1)
    }
}

/// CSV records: a newline ends a record only outside a quoted field.
pub struct CsvRecords;

impl CsvRecords {
    /// Newlines outside quotes, scanning from the start (where no field is open).
    fn boundaries(buf: &[u8]) -> impl Iterator<Item = usize> + '_ {
        let mut quoted = false;
        memchr::memchr2_iter(b'"', b'\n', buf).filter_map(move |i| {
            if buf[i] == b'"' {
                quoted = !quoted;
                None
            } else if quoted {
                None
            } else {
                Some(i + 1)
            }
        })
    }
}

impl Framing for CsvRecords {
    fn complete(&self, buf: &[u8]) -> usize {
        if memchr::memchr(b'"', buf).is_none() {
            return Lines.complete(buf);
        }
        Self::boundaries(buf).last().unwrap_or(0)
    }
    fn boundary_after(&self, buf: &[u8], at: usize) -> usize {
        if memchr::memchr(b'"', buf).is_none() {
            return Lines.boundary_after(buf, at);
        }
        Self::boundaries(buf)
            .find(|&b| b >= at)
            .unwrap_or(buf.len())
    }
}

/// The text of `block[range]`: a slice of `whole`, the block as text when it is UTF-8 (a
/// block cut at ASCII bytes, so on character boundaries), else those bytes checked alone.
pub fn text_at<'a>(
    block: &'a [u8],
    whole: Option<&'a str>,
    range: std::ops::Range<usize>,
) -> Option<&'a str> {
    match whole {
        Some(w) => w.get(range),
        None => std::str::from_utf8(block.get(range)?).ok(),
    }
}

/// Block size: large enough to amortise the hand-offs, small enough to keep memory flat
/// (parts of 2 MB: at 1 M rows the workers start sooner and the read buffers take fewer
/// pages than with parts of 4 MB; at 10 M rows the two are alike within noise).
pub const BLOCK: usize = 4 << 20;
/// An input smaller than this is parsed on the calling thread.
const PARALLEL_MIN: usize = 256 << 10;
/// Parsing threads. The machine we size for has two cores; the joins run on the caller's
/// thread beside them, so parsing and joining overlap instead of taking turns.
pub const WORKERS: usize = 2;
/// Parts handed out and not yet joined: each worker has one to parse and one waiting.
const IN_FLIGHT: u64 = 2 * WORKERS as u64;

fn count_lines(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

/// Cuts a stream into parts that end at record boundaries, each with the line number of
/// its first byte; the incomplete record at the end of a read is carried to the next part.
struct Parts<'f, R, F> {
    reader: R,
    framing: &'f F,
    size: usize,
    carry: Vec<u8>,
    line: u64,
    eof: bool,
}

impl<R: Read, F: Framing> Parts<'_, R, F> {
    /// The next part, read into `buf` (a spent part's buffer, reused); `None` at the end.
    fn next(&mut self, mut buf: Vec<u8>) -> std::io::Result<Option<(Vec<u8>, u64)>> {
        // A spare part's bytes are overwritten where they lie, not zeroed again first.
        let mut filled = self.carry.len();
        if buf.len() < filled {
            buf.resize(filled, 0);
        }
        buf[..filled].copy_from_slice(&self.carry);
        self.carry.clear();
        let mut want = self.size;
        loop {
            while filled < want && !self.eof {
                if buf.len() < want {
                    buf.resize(want, 0);
                }
                let n = self.reader.read(&mut buf[filled..want])?;
                filled += n;
                self.eof = n == 0;
            }
            buf.truncate(filled);
            if buf.is_empty() {
                return Ok(None);
            }
            let cut = if self.eof {
                buf.len()
            } else {
                self.framing.complete(&buf)
            };
            if cut > 0 {
                self.carry.extend_from_slice(&buf[cut..]);
                buf.truncate(cut);
                let line = self.line;
                self.line += count_lines(&buf);
                return Ok(Some((buf, line)));
            }
            // One record longer than the part: read more.
            want *= 2;
        }
    }
}

/// A part on its way through a worker: its place in the input, its bytes and the fork of
/// the sink it is parsed into.
struct Unit<S> {
    seq: u64,
    bytes: Vec<u8>,
    line: u64,
    sink: S,
}

/// Reads `reader` in parts of half a block; worker threads parse the parts into forks of
/// `sink` while this thread reads ahead and joins the parsed parts back in input order.
/// `first_line` is the line number of the first byte. Returns after the last part or the
/// first I/O error; a panic in `parse` is resumed here.
pub fn read_blocks<S: CellSink>(
    reader: impl Read,
    total_bytes: Option<u64>,
    block_size: usize,
    framing: &impl Framing,
    first_line: u64,
    sink: &mut S,
    parse: &(impl Fn(&[u8], u64, &mut S) + Sync),
) -> std::io::Result<()> {
    let mut parts = Parts {
        reader,
        framing,
        size: (block_size / 2).max(1),
        carry: Vec::new(),
        line: first_line,
        eof: false,
    };
    let Some((bytes, line)) = parts.next(Vec::new())? else {
        return Ok(());
    };
    if parts.eof && bytes.len() < PARALLEL_MIN {
        parse(&bytes, line, sink);
        return Ok(());
    }
    let mut first = Some((bytes, line));
    let (work_tx, work_rx) = std::sync::mpsc::channel::<Unit<S>>();
    let work_rx = std::sync::Mutex::new(work_rx);
    std::thread::scope(|s| {
        // Owned by this closure: whatever way it returns, the workers see the end of work.
        let work_tx = work_tx;
        let (done_tx, done_rx) = std::sync::mpsc::channel::<std::thread::Result<Unit<S>>>();
        for _ in 0..WORKERS {
            let (work_rx, done_tx) = (&work_rx, done_tx.clone());
            s.spawn(move || {
                loop {
                    let next = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(mut unit) = next else { return };
                    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        parse(&unit.bytes, unit.line, &mut unit.sink)
                    }));
                    if done_tx.send(parsed.map(|()| unit)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let (mut sent, mut joined) = (0u64, 0u64);
        let mut spare_sinks: Vec<S> = Vec::new();
        let mut spare_bufs: Vec<Vec<u8>> = Vec::new();
        let mut parsed: std::collections::BTreeMap<u64, Unit<S>> = Default::default();
        let mut more = true;
        loop {
            while more && sent - joined < IN_FLIGHT {
                let next = match first.take() {
                    Some(part) => Some(part),
                    None => parts.next(spare_bufs.pop().unwrap_or_default())?,
                };
                let Some((bytes, line)) = next else {
                    more = false;
                    break;
                };
                let sink = spare_sinks.pop().unwrap_or_else(|| sink.fork());
                let unit = Unit {
                    seq: sent,
                    bytes,
                    line,
                    sink,
                };
                if work_tx.send(unit).is_err() {
                    break;
                }
                sent += 1;
            }
            if joined == sent {
                return Ok(());
            }
            let unit = match done_rx.recv() {
                Ok(Ok(unit)) => unit,
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(_) => return Err(std::io::Error::other("the parsing threads stopped")),
            };
            parsed.insert(unit.seq, unit);
            while let Some(mut unit) = parsed.remove(&joined) {
                let (cells, len) = (unit.sink.len(), unit.bytes.len());
                sink.join(&mut unit.sink);
                // After the first part, size the sink for the whole input at that density.
                if joined == 0
                    && let Some(total) = total_bytes
                {
                    let per_byte = cells as f64 / len.max(1) as f64;
                    let rest = total.saturating_sub(len as u64) as f64;
                    sink.reserve((per_byte * rest * 1.05) as usize);
                }
                spare_sinks.push(unit.sink);
                spare_bufs.push(unit.bytes);
                joined += 1;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_boundaries_respect_quotes() {
        let b = b"a,\"x\ny\"\nb,c\n\"q\"\"\n\",d\n";
        assert_eq!(CsvRecords.complete(b), b.len());
        assert_eq!(CsvRecords.boundary_after(b, 1), 8);
        assert_eq!(CsvRecords.boundary_after(b, 9), 12);
        assert_eq!(CsvRecords.complete(b"a,\"open\n"), 0);
        assert_eq!(Lines.complete(b"x\ny"), 2);
    }

    /// Records the lines it is given, in order.
    #[derive(Default)]
    struct Lines_ {
        seen: Vec<u64>,
        diags: Diagnostics,
        joins: usize,
    }

    impl CellSink for Lines_ {
        fn fork(&self) -> Self {
            Lines_::default()
        }
        fn join(&mut self, part: &mut Self) {
            self.seen.append(&mut part.seen);
            self.joins += 1;
        }
        fn len(&self) -> usize {
            self.seen.len()
        }
        fn count_record(&mut self) {}
        fn diags(&mut self) -> &mut Diagnostics {
            &mut self.diags
        }
        fn push(&mut self, _: &CellInput<'_>, _: u64) {}
    }

    #[test]
    fn blocks_keep_order_and_lines() {
        let mut text = String::new();
        for i in 0..400_000 {
            text.push_str(&format!("{i}\n"));
        }
        let parse = |b: &[u8], first: u64, sink: &mut Lines_| {
            for (k, l) in b
                .split(|&x| x == b'\n')
                .filter(|l| !l.is_empty())
                .enumerate()
            {
                let n: u64 = std::str::from_utf8(l).expect("utf8").parse().expect("int");
                assert_eq!(n + 1, first + k as u64, "line numbers");
                sink.seen.push(n);
            }
        };
        let mut sink = Lines_::default();
        read_blocks(text.as_bytes(), None, 1 << 20, &Lines, 1, &mut sink, &parse).expect("read");
        assert_eq!(sink.seen, (0..400_000).collect::<Vec<u64>>());
        assert!(sink.joins >= 4, "{} parts", sink.joins);
    }
}
