//! A sink that keeps the cells it is given, to write them out again as one file.

use std::io::Write;

use serde_json::{Map, Value};

use crate::core::diag::Diagnostics;
use crate::core::load::CellSink;
use crate::core::load::cells::{PARQUET_COLUMNS, parquet_row, write_cell};
use crate::core::matrix::CellInput;

/// Cells as rows for Parquet, or as JSON lines.
pub struct Rows {
    parquet: bool,
    rows: Vec<Map<String, Value>>,
    jsonl: Vec<u8>,
    n: usize,
    diags: Diagnostics,
}

impl Rows {
    pub fn new(parquet: bool) -> Self {
        Rows {
            parquet,
            rows: Vec::new(),
            jsonl: Vec::new(),
            n: 0,
            diags: Diagnostics::default(),
        }
    }

    /// Writes every cell kept, in input order.
    pub fn write(&self, out: &mut (dyn Write + Send)) -> std::io::Result<()> {
        if self.parquet {
            let cols: Vec<(String, crate::core::load::parquet::Kind)> = PARQUET_COLUMNS
                .iter()
                .map(|(n, k)| (n.to_string(), *k))
                .collect();
            crate::core::load::parquet::write_rows(out, &cols, &self.rows)
        } else {
            out.write_all(&self.jsonl)
        }
    }
}

impl CellSink for Rows {
    fn fork(&self) -> Self {
        Rows::new(self.parquet)
    }
    fn join(&mut self, part: &mut Self) {
        self.rows.append(&mut part.rows);
        self.jsonl.append(&mut part.jsonl);
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
    fn push(&mut self, cell: CellInput<'_>, _line: u64) {
        self.n += 1;
        if self.parquet {
            self.rows.push(parquet_row(&cell));
        } else {
            // Writing to memory cannot fail.
            let _ = write_cell(&mut self.jsonl, &cell);
        }
    }
}
