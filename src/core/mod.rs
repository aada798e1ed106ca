//! The core: loading, the response matrix and every measure of SPEC.md. Nothing here knows
//! about terminals; the CLI and the TUI only present what it computes.

pub mod analysis;
pub mod dataset;
pub mod diag;
pub mod load;
pub mod matrix;
pub mod queue;
pub mod sampling;
pub mod text;
