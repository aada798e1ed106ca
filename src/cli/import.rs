//! `frameaudit import`: converts other formats into native cells JSONL.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

use super::args::{ConvertArgs, DatasetArgs, InputFormat};
use crate::core::diag::{Diagnostics, Loc};
use crate::core::load::CellSink;
use crate::core::load::cells::write_cell;
use crate::core::load::per_item_csv::read_per_item_csv;
use crate::core::matrix::CellInput;

/// Writes every cell it is given as a JSON line.
struct CellWriter<W: Write> {
    out: W,
    diags: Diagnostics,
    written: u64,
    error: Option<std::io::Error>,
}

impl<W: Write> CellSink for CellWriter<W> {
    fn add_file(&mut self, path: &Path) -> Arc<Path> {
        Arc::from(path)
    }
    fn count_record(&mut self) {}
    fn diags(&mut self) -> &mut Diagnostics {
        &mut self.diags
    }
    fn push(&mut self, cell: CellInput<'_>, _loc: &Loc) {
        if self.error.is_none()
            && let Err(e) = write_cell(&mut self.out, &cell)
        {
            self.error = Some(e);
        }
        self.written += 1;
    }
}

/// `import per-item-csv IN -o OUT`: validates the whole CSV (every rule of SPEC.md), then
/// writes its cells, in input order, to OUT atomically.
pub fn per_item_csv(args: &ConvertArgs) -> Result<()> {
    // Validate first: a rejected input writes nothing.
    super::load(&DatasetArgs {
        dataset: Some(args.input.clone()),
        input_format: Some(InputFormat::PerItemCsv),
        quiet: false,
    })?;
    let file = std::fs::File::open(&args.input)
        .with_context(|| format!("cannot read {}", args.input.display()))?;
    let mut written = 0;
    super::write_atomically(&args.output, |w| {
        let mut sink = CellWriter {
            out: w,
            diags: Diagnostics::default(),
            written: 0,
            error: None,
        };
        read_per_item_csv(std::io::BufReader::new(file), &mut sink, &args.input)?;
        written = sink.written;
        sink.error.map_or(Ok(()), Err)
    })?;
    eprintln!(
        "frameaudit: wrote {written} cells to {}",
        args.output.display()
    );
    Ok(())
}
