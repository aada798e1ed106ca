//! A sink that writes the cells it is given to one file as they come: JSON lines, or
//! Parquet row groups. Parts read in parallel buffer their cells; the main sink writes each
//! part when it is joined, in input order, so memory stays that of a few parts and one row
//! group whatever the size of the input.

use std::io::Write;

use crate::core::diag::Diagnostics;
use crate::core::load::CellSink;
use crate::core::load::cells::{PARQUET_COLUMNS, push_parquet, write_cell};
use crate::core::load::parquet::{Column, Writer};
use crate::core::matrix::CellInput;

type Out<'w> = &'w mut (dyn Write + Send);

/// Where the main sink writes.
enum Target<'w> {
    Jsonl(Out<'w>),
    Parquet(Box<Writer<Out<'w>>>),
}

/// What a sink holds between joins.
enum Buffer {
    Jsonl(Vec<u8>),
    Parquet(Vec<Column>),
}

/// Cells on their way to one output file.
pub struct Rows<'w> {
    target: Option<Target<'w>>,
    buffer: Buffer,
    n: usize,
    diags: Diagnostics,
    /// The first write error; once set, nothing more is written.
    error: Option<std::io::Error>,
}

fn parquet_columns() -> Vec<Column> {
    PARQUET_COLUMNS
        .iter()
        .map(|(_, k)| Column::new(*k))
        .collect()
}

impl<'w> Rows<'w> {
    /// The main sink, writing to `out` (Parquet when `parquet`).
    pub fn new(out: Out<'w>, parquet: bool) -> std::io::Result<Self> {
        let (target, buffer) = if parquet {
            let cols: Vec<(String, crate::core::load::parquet::Kind)> = PARQUET_COLUMNS
                .iter()
                .map(|(n, k)| (n.to_string(), *k))
                .collect();
            (
                Target::Parquet(Box::new(Writer::new(out, &cols)?)),
                Buffer::Parquet(parquet_columns()),
            )
        } else {
            (Target::Jsonl(out), Buffer::Jsonl(Vec::new()))
        };
        Ok(Rows {
            target: Some(target),
            buffer,
            n: 0,
            diags: Diagnostics::default(),
            error: None,
        })
    }

    /// Writes what this sink holds (a sink read on one thread holds all it read).
    fn write_buffer(&mut self) {
        let mut buffer = std::mem::replace(&mut self.buffer, Buffer::Jsonl(Vec::new()));
        self.write_part(&mut buffer);
        self.buffer = buffer;
    }

    /// Writes a part's cells and empties the part.
    fn write_part(&mut self, part: &mut Buffer) {
        let r = match (&mut self.target, part) {
            _ if self.error.is_some() => Ok(()),
            (Some(Target::Jsonl(out)), Buffer::Jsonl(bytes)) => {
                let r = out.write_all(bytes);
                bytes.clear();
                r
            }
            (Some(Target::Parquet(w)), Buffer::Parquet(cols)) => {
                for (mine, theirs) in w.columns.iter_mut().zip(cols.iter_mut()) {
                    mine.append(theirs);
                }
                w.flush_full()
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            self.error = Some(e);
        }
    }

    /// Whether the main sink, reading on its own thread, should write what it holds.
    fn buffer_is_large(&self) -> bool {
        match &self.buffer {
            Buffer::Jsonl(b) => b.len() >= 1 << 20,
            Buffer::Parquet(cols) => cols.first().is_some_and(|c| c.rows() >= 8192),
        }
    }

    /// Writes the rest and the end of the file; the first write error, if any.
    pub fn finish(mut self) -> std::io::Result<usize> {
        self.write_buffer();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.target.take() {
            Some(Target::Parquet(w)) => w.finish()?,
            Some(Target::Jsonl(out)) => out.flush()?,
            None => {}
        }
        Ok(self.n)
    }
}

impl CellSink for Rows<'_> {
    fn fork(&self) -> Self {
        Rows {
            target: None,
            buffer: match self.buffer {
                Buffer::Jsonl(_) => Buffer::Jsonl(Vec::new()),
                Buffer::Parquet(_) => Buffer::Parquet(parquet_columns()),
            },
            n: 0,
            diags: Diagnostics::default(),
            error: None,
        }
    }
    fn join(&mut self, part: &mut Self) {
        // What this sink read itself comes first.
        self.write_buffer();
        self.write_part(&mut part.buffer);
        self.n += std::mem::take(&mut part.n);
        self.diags.merge(std::mem::take(&mut part.diags));
    }
    fn len(&self) -> usize {
        self.n
    }
    fn count_record(&mut self) {}
    fn diags(&mut self) -> &mut Diagnostics {
        &mut self.diags
    }
    fn push(&mut self, cell: &CellInput<'_>, _line: u64) {
        self.n += 1;
        match &mut self.buffer {
            Buffer::Parquet(cols) => push_parquet(cols, cell),
            // Writing to memory cannot fail.
            Buffer::Jsonl(bytes) => {
                let _ = write_cell(bytes, cell);
            }
        }
        if self.target.is_some() && self.buffer_is_large() {
            self.write_buffer();
        }
    }
}
