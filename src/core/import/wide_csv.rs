//! Wide tables (one row per item, one column per configuration): being written.

use std::path::PathBuf;

use super::{Import, ImportError};

/// Options of the wide-table importer.
#[derive(Debug, Clone, Default)]
pub struct WideOptions {
    /// Ground-truth CSV and its key and answer columns.
    pub gold: PathBuf,
    pub gold_key: String,
    pub gold_col: String,
    /// Model name (default: the file name's stem).
    pub model: Option<String>,
    /// Benchmark name (default: "default").
    pub benchmark: Option<String>,
    /// Column of the item id in the wide table (default: the gold key).
    pub id_col: Option<String>,
}

/// Imports wide tables; `progress` is called with the number of rows read since the last call.
pub fn import(
    _paths: &[PathBuf],
    _opts: &WideOptions,
    _imp: &mut Import,
    _progress: &dyn Fn(u64),
) -> Result<(), ImportError> {
    Err(ImportError::Other(
        "the wide-table importer is being written".into(),
    ))
}
