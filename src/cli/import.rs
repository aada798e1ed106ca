//! `frameaudit import`: converts other formats into native cells JSONL.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

use super::args::{ConvertArgs, DatasetArgs, InputFormat};
use crate::core::diag::Diagnostics;
use crate::core::load::CellSink;
use crate::core::load::cells::write_cell;
use crate::core::load::per_item_csv::read_per_item_csv;
use crate::core::matrix::CellInput;

/// Writes cells as JSON lines: a part of the input collects its lines and the root writes
/// them out when the part is joined, so the output keeps the input's order.
struct CellWriter<'w> {
    out: Vec<u8>,
    dest: Option<&'w mut (dyn Write + Send)>,
    error: Option<std::io::Error>,
    diags: Diagnostics,
    written: u64,
}

impl CellWriter<'_> {
    fn flush_part(&mut self) {
        if let Some(dest) = self.dest.as_mut()
            && self.error.is_none()
            && let Err(e) = dest.write_all(&self.out)
        {
            self.error = Some(e);
        }
        if self.dest.is_some() {
            self.out.clear();
        }
    }
}

impl CellSink for CellWriter<'_> {
    fn fork(&self) -> Self {
        CellWriter {
            out: Vec::new(),
            dest: None,
            error: None,
            diags: Diagnostics::default(),
            written: 0,
        }
    }
    fn join(&mut self, part: &mut Self) {
        self.out.extend_from_slice(&part.out);
        part.out.clear();
        self.written += std::mem::take(&mut part.written);
        self.flush_part();
    }
    fn len(&self) -> usize {
        self.written as usize
    }
    fn count_record(&mut self) {}
    fn diags(&mut self) -> &mut Diagnostics {
        &mut self.diags
    }
    fn push(&mut self, cell: CellInput<'_>, _line: u64) {
        // Writing into a Vec cannot fail.
        let _ = write_cell(&mut self.out, &cell);
        self.written += 1;
        if self.out.len() > 1 << 20 {
            self.flush_part();
        }
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
            out: Vec::new(),
            dest: Some(w),
            error: None,
            diags: Diagnostics::default(),
            written: 0,
        };
        let name: Arc<Path> = Arc::from(args.input.as_path());
        read_per_item_csv(file, None, &mut sink, &name)?;
        sink.flush_part();
        written = sink.written;
        sink.error.map_or(Ok(()), Err)
    })?;
    eprintln!(
        "frameaudit: wrote {written} cells to {}",
        args.output.display()
    );
    Ok(())
}
