//! Readers of response-matrix files: native cells JSONL and the per-item CSV interchange
//! format. Both stream their input and report every problem with file, line and field.

pub mod cells;
pub mod json;
pub mod per_item_csv;

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use std::sync::Arc;

use crate::core::diag::{Diagnostics, LoadError, Loc};
use crate::core::matrix::{CellInput, MatrixBuilder};

/// Where readers put what they read: the matrix builder, or a converter that writes cells
/// back out.
pub trait CellSink {
    /// Registers an input file; diagnostics name it.
    fn add_file(&mut self, path: &Path) -> Arc<Path>;
    /// Counts one record (a line or row), valid or not.
    fn count_record(&mut self);
    fn diags(&mut self) -> &mut Diagnostics;
    fn push(&mut self, cell: CellInput<'_>, loc: &Loc);
}

impl CellSink for MatrixBuilder {
    fn add_file(&mut self, path: &Path) -> Arc<Path> {
        MatrixBuilder::add_file(self, path)
    }
    fn count_record(&mut self) {
        MatrixBuilder::count_record(self);
    }
    fn diags(&mut self) -> &mut Diagnostics {
        &mut self.diags
    }
    fn push(&mut self, cell: CellInput<'_>, loc: &Loc) {
        MatrixBuilder::push(self, cell, loc);
    }
}

/// The format of a file of cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellFormat {
    /// Cells JSONL (SPEC.md §1.1).
    Cells,
    /// Per-item CSV (SPEC.md §1.7).
    PerItemCsv,
}

impl CellFormat {
    /// The format a file name implies: `.csv` is per-item CSV, anything else cells JSONL.
    pub fn from_path(path: &Path) -> CellFormat {
        let is_csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if is_csv {
            CellFormat::PerItemCsv
        } else {
            CellFormat::Cells
        }
    }
}

/// Reads one file of cells into the builder, in the given format or the one its name
/// implies.
pub fn read_cell_file(
    path: &Path,
    format: Option<CellFormat>,
    builder: &mut impl CellSink,
) -> Result<(), LoadError> {
    let io_err = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let reader = BufReader::with_capacity(1 << 20, file);
    match format.unwrap_or_else(|| CellFormat::from_path(path)) {
        CellFormat::Cells => cells::read_cells(reader, builder, path),
        CellFormat::PerItemCsv => per_item_csv::read_per_item_csv(reader, builder, path),
    }
    .map_err(io_err)
}
