//! Line numbers of CSV records, for messages. The csv crate's own line count is one short
//! after CRLF line ends, and a record's byte offset may point at the line end before it or
//! at blank lines it skipped; the record's line is the one of its first byte that is not a
//! line end.

/// Turns the byte offsets of a file's records, in increasing order, into 1-based line
/// numbers.
pub(crate) struct LineIndex<'a> {
    data: &'a [u8],
    /// Bytes before this offset have been counted.
    at: usize,
    newlines: u64,
}

impl<'a> LineIndex<'a> {
    /// An index over the whole text of a file.
    pub(crate) fn new(data: &'a [u8]) -> LineIndex<'a> {
        LineIndex {
            data,
            at: 0,
            newlines: 0,
        }
    }

    /// The line of the record that starts at byte `byte`.
    pub(crate) fn line(&mut self, byte: u64) -> u64 {
        let Some(last) = self.data.len().checked_sub(1) else {
            return 1;
        };
        let mut first = usize::try_from(byte).unwrap_or(usize::MAX).min(last);
        while first < last && matches!(self.data[first], b'\n' | b'\r') {
            first += 1;
        }
        let end = first;
        if end < self.at {
            // Offsets come in order; start over if one does not.
            self.at = 0;
            self.newlines = 0;
        }
        self.newlines += memchr::memchr_iter(b'\n', &self.data[self.at..end]).count() as u64;
        self.at = end;
        1 + self.newlines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(data: &str) -> Vec<u64> {
        let mut rdr = csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(data.as_bytes());
        let mut index = LineIndex::new(data.as_bytes());
        rdr.records()
            .map(|r| index.line(r.expect("record").position().expect("pos").byte()))
            .collect()
    }

    #[test]
    fn lines_with_lf_crlf_and_quoted_line_breaks() {
        assert_eq!(lines("h,i\nB,1\nC,2\nD\nE,3\n"), [2, 3, 4, 5]);
        assert_eq!(lines("h,i\r\n\"B\",1\r\nC,2\r\nD\r\nE,3\r\n"), [2, 3, 4, 5]);
        assert_eq!(lines("h,i\n\"a\nb\",1\nC,2"), [2, 4]);
        assert_eq!(lines("h,i\nB,1\n\n\nC,2\n"), [2, 5]);
        assert_eq!(lines("h,i\r\nB,1\r\n\r\nC,2\r\n"), [2, 4]);
        assert_eq!(LineIndex::new(b"").line(5), 1);
    }
}
