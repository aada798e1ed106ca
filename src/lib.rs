//! frameaudit: audit item-level scaling heterogeneity in Video LLM evaluations.
//!
//! [`core`] loads a response matrix (model x item x configuration) and computes the measures
//! of the trajectory-metrics specification; the command line presents them.

#![warn(missing_docs)]

pub mod cli;
pub mod core;
pub mod demo;
pub mod plot;
pub mod term;
pub mod tui;
