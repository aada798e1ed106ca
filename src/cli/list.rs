//! `frameaudit list`: the audit queue for scripts, as TSV or JSON Lines.

use std::io::Write;

use anyhow::Result;

use super::args::{ListArgs, ListFormat, ListKind};
use crate::core::analysis::{self, Metrics};
use crate::core::queue::{QueueKind, queue};
use crate::core::text::{sanitize, show_id};

/// `frameaudit list`: prints the audit queue for scripts.
pub fn run(args: &ListArgs) -> Result<()> {
    let ds = super::load(&args.data)?;
    let m = &ds.matrix;
    // The queue needs no intervals and no sweep.
    let mut params = args.analysis.params(true);
    params.bootstrap_b = 0;
    super::select::check_analysis(m, &params)?;
    let protocol_name = args
        .protocol
        .clone()
        .unwrap_or_else(|| params.primary.clone());
    let Some(protocol) = m.protocols.get(&protocol_name) else {
        let protocols: Vec<&str> = m.protocols.names().collect();
        return Err(super::select::fail(&super::select::explain(
            "--protocol",
            "protocol",
            &[&protocol_name],
            &protocols,
        )));
    };
    let report = analysis::run(m, &params, None);
    let kind = match args.kind {
        ListKind::Harmful => QueueKind::Harmful,
        ListKind::Terminal => QueueKind::Terminal,
        ListKind::All => QueueKind::All,
    };
    let mut rows = queue(&report, protocol, kind);
    if let Some(shard) = args.shard.get() {
        rows.retain(|r| {
            let item = m.item(r.item);
            shard.holds(
                m.models.name(r.model),
                m.benchmarks.name(item.benchmark),
                &item.id,
            )
        });
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.format == ListFormat::Tsv {
        writeln!(
            out,
            "model\tbenchmark\titem_id\ttask\tpattern\tclass\tharmful_pairs\tterminal\tbest_config\tpairs\tconfigs"
        )?;
    }
    for r in &rows {
        let a = &report.analyses[r.analysis as usize];
        let mg = &a.grids.models[r.model_index as usize];
        let g = &mg.grid;
        let k = g.k();
        let name = |c: usize| m.config(g.configs[c]).name.as_ref();
        let item = m.item(r.item);
        let (pattern, scores, best) = match &a.metrics[r.model_index as usize] {
            Metrics::Mcq(x) => (
                x.items.pattern(r.row as usize, k),
                None,
                Some(name(x.items.best_config[r.row as usize] as usize)),
            ),
            Metrics::Open(x) => {
                let s = x.items.row(r.row as usize, k).to_vec();
                let p = s
                    .iter()
                    .map(|v| format!("{v}"))
                    .collect::<Vec<_>>()
                    .join(",");
                (p, Some(s), None)
            }
        };
        let class = r.class.map_or("", |c| c.as_str());
        match args.format {
            ListFormat::Tsv => {
                let pairs: Vec<String> = r
                    .listed()
                    .iter()
                    .map(|t| format!("{}>{}", name(t.lower), name(t.higher)))
                    .collect();
                let configs: Vec<&str> = (0..k).map(name).collect();
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    show_id(m.models.name(r.model)),
                    show_id(m.benchmarks.name(item.benchmark)),
                    show_id(&item.id),
                    r.task.as_str(),
                    pattern,
                    class,
                    r.harmful_pairs,
                    u8::from(r.terminal),
                    sanitize(best.unwrap_or("")),
                    sanitize(&pairs.join(",")),
                    sanitize(&configs.join(",")),
                )?;
            }
            ListFormat::Jsonl => {
                let line = serde_json::json!({
                    "model": m.models.name(r.model),
                    "benchmark": m.benchmarks.name(item.benchmark),
                    "item_id": &*item.id,
                    "task": r.task.as_str(),
                    "pattern": pattern,
                    "scores": scores,
                    "class": r.class.map(|c| c.as_str()),
                    "harmful_pairs": r.harmful_pairs,
                    // At most MAX_LISTED_PAIRS; `pairs_truncated` says some were left out.
                    "pairs": r.listed().iter().map(|t| [name(t.lower), name(t.higher)]).collect::<Vec<_>>(),
                    "pairs_truncated": r.truncated(),
                    "terminal_regression": r.terminal,
                    "best_config": best,
                    "configs": (0..k).map(name).collect::<Vec<_>>(),
                });
                crate::core::text::json_to_writer(&mut out, &line)?;
                writeln!(out)?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
