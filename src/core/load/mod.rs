//! Readers of response-matrix files: native cells JSONL and the per-item CSV interchange
//! format. Both stream their input and report every problem with file, line and field.

pub mod cells;
pub mod chunk;
pub mod encoding;
pub mod every;
pub mod json;
pub mod parquet;
mod parquet_text;
pub mod per_item_csv;

use std::path::Path;

use crate::core::diag::LoadError;
use crate::core::fsread;
use crate::core::matrix::MatrixBuilder;

pub use self::chunk::CellSink;

impl CellSink for MatrixBuilder {
    fn fork(&self) -> Self {
        MatrixBuilder::fork(self)
    }
    fn join(&mut self, part: &mut Self) {
        MatrixBuilder::join(self, part);
    }
    fn reserve(&mut self, cells: usize) {
        MatrixBuilder::reserve(self, cells);
    }
    fn len(&self) -> usize {
        self.matrix_len()
    }
    fn count_record(&mut self) {
        MatrixBuilder::count_record(self);
    }
    fn skims_replicates(&self) -> bool {
        self.skim_replicates
    }
    fn skip_replicate(&mut self) {
        self.replicates_skimmed += 1;
    }
    fn diags(&mut self) -> &mut crate::core::diag::Diagnostics {
        &mut self.diags
    }
    fn push(&mut self, cell: &crate::core::matrix::CellInput<'_>, line: u64) {
        MatrixBuilder::push(self, cell, line);
    }
    fn push_keyed(
        &mut self,
        cell: &crate::core::matrix::CellInput<'_>,
        keys: &crate::core::matrix::TextKeys,
        line: u64,
    ) {
        MatrixBuilder::push_keyed(self, cell, keys, line);
    }
}

/// The format of a file of cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellFormat {
    /// Cells JSONL (docs/measures.md §1.1).
    Cells,
    /// Per-item CSV (docs/measures.md §1.7).
    PerItemCsv,
    /// Cells as Parquet, the columns of cells JSONL (docs/formats.md §7).
    Parquet,
}

impl CellFormat {
    /// The format a file name implies: `.csv` is per-item CSV, `.parquet` Parquet, anything
    /// else cells JSONL.
    pub fn from_path(path: &Path) -> CellFormat {
        if parquet::is_parquet(path) {
            return CellFormat::Parquet;
        }
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
    builder: &mut MatrixBuilder,
) -> Result<(), LoadError> {
    let io_err = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = fsread::open(path, fsread::CELLS).map_err(io_err)?;
    let format = format.unwrap_or_else(|| CellFormat::from_path(path));
    let name = match format {
        CellFormat::PerItemCsv => builder.add_per_item_csv(path),
        CellFormat::Cells | CellFormat::Parquet => builder.add_file(path),
    };
    read_cells_into(path, file, Some(format), builder, &name).map_err(io_err)
}

/// Reads one opened file of cells into any sink, in the given format or the one its name
/// implies.
pub fn read_cells_into<S: CellSink>(
    path: &Path,
    file: fsread::Regular,
    format: Option<CellFormat>,
    sink: &mut S,
    name: &std::sync::Arc<Path>,
) -> std::io::Result<()> {
    let size = Some(file.len());
    match format.unwrap_or_else(|| CellFormat::from_path(path)) {
        CellFormat::Cells => cells::read_cells(file.into_reader(), size, sink, name),
        CellFormat::PerItemCsv => {
            per_item_csv::read_per_item_csv(file.into_reader(), size, sink, name)
        }
        CellFormat::Parquet => cells::read_parquet_cells(file.read_all()?, path, sink, name),
    }
}
