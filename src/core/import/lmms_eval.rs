//! lmms-eval runs (`--log_samples`): being written.

use std::path::PathBuf;

use super::{Import, ImportError};

/// Options of the lmms-eval importer.
#[derive(Debug, Clone, Default)]
pub struct LmmsOptions {
    /// `--config LABEL=PATH`: the configuration label of the run(s) under PATH, overriding
    /// the budget read from the results file.
    pub overrides: Vec<(String, PathBuf)>,
}

/// Imports the lmms-eval runs found under `paths`; `progress` is called with the number of
/// sample lines read since the last call.
pub fn import(
    _paths: &[PathBuf],
    _opts: &LmmsOptions,
    _imp: &mut Import,
    _progress: &dyn Fn(u64),
) -> Result<(), ImportError> {
    Err(ImportError::Other(
        "the lmms-eval importer is being written".into(),
    ))
}
