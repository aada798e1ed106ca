//! Parsing in parallel, in input order: a block of input is split at record boundaries, each
//! part is parsed into its own fork of the sink on its own thread, and the parts are joined
//! back in input order, so ids, diagnostics and first occurrences come out as if the file
//! had been read sequentially.

use std::io::Read;

use crate::core::diag::Diagnostics;
use crate::core::matrix::CellInput;

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
    /// Where the problems of the input go.
    fn diags(&mut self) -> &mut Diagnostics;
    /// A validated cell read at `line` of the current file.
    fn push(&mut self, cell: CellInput<'_>, line: u64);
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

/// Block size: large enough to amortise thread start, small enough to keep memory flat.
pub const BLOCK: usize = 8 << 20;
/// Below this a block is parsed on one thread.
const PARALLEL_MIN: usize = 256 << 10;

fn count_lines(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

/// Reads `reader` block by block; parses each block's two halves on two threads into forks
/// of `sink` and joins them back in order. `first_line` is the line number of the first
/// byte. Returns after the last block or the first I/O error.
pub fn read_blocks<S: CellSink>(
    mut reader: impl Read,
    total_bytes: Option<u64>,
    block_size: usize,
    framing: &impl Framing,
    first_line: u64,
    sink: &mut S,
    parse: &(impl Fn(&[u8], u64, &mut S) + Sync),
) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(block_size);
    let mut line = first_line;
    let mut eof = false;
    let mut want = block_size;
    let mut parts: Option<(S, S)> = None;
    let mut bytes_done = 0u64;
    loop {
        while buf.len() < want && !eof {
            let old = buf.len();
            buf.resize(want, 0);
            let n = reader.read(&mut buf[old..])?;
            buf.truncate(old + n);
            eof = n == 0;
        }
        if buf.is_empty() {
            return Ok(());
        }
        let cut = if eof {
            buf.len()
        } else {
            framing.complete(&buf)
        };
        if cut == 0 {
            // One record longer than the block: read more.
            want *= 2;
            continue;
        }
        want = block_size;
        let block = &buf[..cut];
        if block.len() < PARALLEL_MIN {
            parse(block, line, sink);
        } else {
            let mid = framing.boundary_after(block, block.len() / 2);
            let (a, b) = block.split_at(mid);
            let line_b = line + count_lines(a);
            let (pa, pb) = parts.get_or_insert_with(|| (sink.fork(), sink.fork()));
            std::thread::scope(|s| {
                let hb = s.spawn(|| parse(b, line_b, pb));
                parse(a, line, pa);
                hb.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            });
            let first = bytes_done == 0;
            sink.join(pa);
            sink.join(pb);
            // After the first block, size the sink for the whole input at that density.
            if first && let Some(total) = total_bytes {
                let per_byte = sink.len() as f64 / block.len() as f64;
                sink.reserve(
                    (per_byte * total.saturating_sub(block.len() as u64) as f64 * 1.05) as usize,
                );
            }
        }
        bytes_done += block.len() as u64;
        line += count_lines(block);
        buf.drain(..cut);
        if eof && buf.is_empty() {
            return Ok(());
        }
    }
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
        fn push(&mut self, _: CellInput<'_>, _: u64) {}
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
