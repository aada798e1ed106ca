//! VLMEvalKit prediction files: being written.

use std::path::PathBuf;

use super::{Import, ImportError};

/// Options of the VLMEvalKit importer.
#[derive(Debug, Clone, Default)]
pub struct VlmOptions {
    /// Root of VLMEvalKit's extracted frames (`{root}/images/{dataset}/{video}/frame-{i}-of-{N}.jpg`).
    pub frames_root: Option<PathBuf>,
}

/// Imports the VLMEvalKit prediction files found under `paths`; `progress` is called with
/// the number of rows read since the last call.
pub fn import(
    _paths: &[PathBuf],
    _opts: &VlmOptions,
    _imp: &mut Import,
    _progress: &dyn Fn(u64),
) -> Result<(), ImportError> {
    Err(ImportError::Other(
        "the VLMEvalKit importer is being written".into(),
    ))
}
