//! The readable report: per analysis a table of the models (a column per measure of
//! `core::measures`), then per model the curve with inline bars, best fixed vs oracle vs
//! headroom, harmful and terminal rates with bootstrap intervals, churn per budget step and
//! the cascade's pick; for a model with replicates, the noise floor, each ladder edge
//! against it and the stable and lottery harmful items (docs/measures.md §16).

use std::io::{self, Write};

use crossterm::style::Color;

use super::term::{Style, fit, pad, width};
use crate::core::analysis::grid::ModelGrid;
use crate::core::analysis::mcq::{McqMetrics, StrategyRecovery};
use crate::core::analysis::noise::Replicated;
use crate::core::analysis::open::OpenMetrics;
use crate::core::analysis::{Analysis, Interval, Metrics, Report};
use crate::core::dataset::Dataset;
use crate::core::matrix::ResponseMatrix;
use crate::core::measures::{MEASURES, Measure, Tone, shown};
use crate::core::text::{count, sanitize};
use crate::term::bar;

fn num(x: f64) -> String {
    format!("{x:.1}")
}

/// A rate as a percentage, or "n/a" when there is nothing to take a share of
/// (0 of 0), rather than a dash before a per cent sign.
fn pct(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |x| format!("{}%", num(x)))
}

fn ci(i: Option<&Interval>) -> String {
    i.map_or(String::new(), |i| format!(" [{:.1}, {:.1}]", i.lo, i.hi))
}

/// Writes the whole report.
pub fn write(out: &mut impl Write, ds: &Dataset, report: &Report, st: &Style) -> io::Result<()> {
    write_with(out, ds, report, st, MEASURES)
}

/// [`write()`], the models' tables with the columns of `measures` (a table of
/// `core::measures` shape).
pub fn write_with(
    out: &mut impl Write,
    ds: &Dataset,
    report: &Report,
    st: &Style,
    measures: &[Measure],
) -> io::Result<()> {
    let m = &ds.matrix;
    let p = &report.params;
    writeln!(
        out,
        "{} {}",
        st.bold("frameaudit report ·"),
        st.bold(&fit(&ds.name, st.width.saturating_sub(20)))
    )?;
    writeln!(
        out,
        "{}",
        st.dim(&format!(
            "{} ({} invalid) · {} · {} · {} · grids {} · bootstrap B={} seed={}",
            count(m.n_cells(), "cell"),
            m.stats.cells_invalid,
            count(m.models.len(), "model"),
            count(m.benchmarks.len(), "benchmark"),
            count(m.items.len(), "item"),
            p.grid_mode.as_str().replace('_', "-"),
            p.bootstrap_b,
            p.seed
        ))
    )?;
    if report.analyses.is_empty() {
        writeln!(out, "\nNo analysis: no valid cell passes the filters.")?;
    }
    for a in &report.analyses {
        analysis(out, m, a, st, measures)?;
    }
    if !report.protocol_comparisons.is_empty() {
        writeln!(
            out,
            "\n{}",
            st.bold("Membership stability across protocols (which items are harmful)")
        )?;
        for c in &report.protocol_comparisons {
            writeln!(
                out,
                "  {} {} {}: {} vs {} over {} items: {} vs {}, both {}, only {} {}, only {} {}, Jaccard {}, κ {}",
                c.task,
                fit(&c.scope, 24),
                fit(&c.model, 28),
                fit(&c.protocol_a, 16),
                fit(&c.protocol_b, 16),
                c.n_common,
                pct(c.rate_a),
                pct(c.rate_b),
                c.both,
                fit(&c.protocol_a, 16),
                c.only_a,
                fit(&c.protocol_b, 16),
                c.only_b,
                c.jaccard.map_or("–".into(), |j| format!("{j:.3}")),
                c.kappa.map_or("–".into(), |k| format!("{k:.3}")),
            )?;
        }
    }
    if let Some(ag) = &report.agreement {
        writeln!(out, "\n{}", st.bold("Annotator agreement"))?;
        writeln!(
            out,
            "  {} annotators, {} units, {} tags; Krippendorff's α on the primary tag {} over {} units",
            ag.annotators.len(),
            ag.n_units,
            ag.tags.len(),
            ag.primary_alpha.map_or("–".into(), |a| format!("{a:.3}")),
            ag.primary_units_pairable
        )?;
        for pair in &ag.pairs {
            writeln!(
                out,
                "  {} / {}: {} common units, macro κ {}",
                fit(&pair.annotators[0], 20),
                fit(&pair.annotators[1], 20),
                pair.n_units,
                pair.macro_kappa.map_or("–".into(), |k| format!("{k:.3}"))
            )?;
        }
    }
    Ok(())
}

fn rule(out: &mut impl Write, title: &str, st: &Style) -> io::Result<()> {
    let fill = st.width.saturating_sub(width(title) + 4).min(120);
    writeln!(
        out,
        "\n{}",
        st.bold(&format!("━━ {title} {}", "━".repeat(fill)))
    )
}

fn analysis(
    out: &mut impl Write,
    m: &ResponseMatrix,
    a: &Analysis,
    st: &Style,
    measures: &[Measure],
) -> io::Result<()> {
    let title = format!(
        "{} · {} · {}",
        fit(m.protocols.name(a.key.protocol), 30),
        a.key.task.as_str(),
        fit(a.key.scope_name(m), 40)
    );
    rule(out, &title, st)?;
    for e in &a.grids.excluded {
        let why = match e.reason {
            "missing_configs" => format!("lacks {}", fit(&e.configs.join(", "), 60)),
            _ => "has no item with every configuration".into(),
        };
        writeln!(
            out,
            "  {} {} {}",
            st.paint("excluded", Color::Yellow),
            fit(&e.model, 40),
            why
        )?;
    }
    if let Some(g) = &a.grids.joint
        && a.metrics.is_empty()
    {
        writeln!(
            out,
            "  joint grid is empty: {} items, {} configurations in common",
            g.n(),
            g.k()
        )?;
    }
    if a.metrics.is_empty() {
        // Said rather than left as a blank section, which reads as a report cut short.
        if a.grids.excluded.is_empty() && a.grids.joint.is_none() {
            let invalid = if m.stats.cells_invalid > 0 {
                format!(
                    " ({} of {} cells read are invalid: `frameaudit validate` says why)",
                    m.stats.cells_invalid, m.stats.records
                )
            } else {
                String::new()
            };
            writeln!(
                out,
                "  nothing to report: no model has a valid cell here{invalid}"
            )?;
        }
        return Ok(());
    }
    summary_table(out, m, a, st, measures)?;
    for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
        match x {
            Metrics::Mcq(x) => mcq_block(out, m, mg, x, st)?,
            Metrics::Open(x) => open_block(out, m, mg, x, st)?,
        }
    }
    Ok(())
}

/// The table of the models: their items and configurations, then a column per measure of
/// the analysis's task in `measures`.
fn summary_table(
    out: &mut impl Write,
    m: &ResponseMatrix,
    a: &Analysis,
    st: &Style,
    measures: &[Measure],
) -> io::Result<()> {
    let name_w = a
        .grids
        .models
        .iter()
        .map(|g| width(&crate::core::text::show_id(m.models.name(g.model))))
        .max()
        .unwrap_or(5)
        .clamp(5, 28);
    let columns = shown(measures, a.key.task, a.metrics.iter());
    let mut line = format!(
        "  {} {:>6} {:>3}",
        st.dim(&pad("model", name_w)),
        st.dim("items"),
        st.dim("K")
    );
    for x in &columns {
        line.push_str(&format!(" {:>w$}", st.dim(x.short), w = x.width));
    }
    writeln!(out, "{line}")?;
    for (mg, x) in a.grids.models.iter().zip(a.metrics.iter()) {
        let n_items = match x {
            Metrics::Mcq(x) => x.n_items,
            Metrics::Open(x) => x.n_items,
        };
        let mut line = format!(
            "  {} {:>6} {:>3}",
            pad(m.models.name(mg.model), name_w),
            n_items,
            mg.grid.k()
        );
        for c in &columns {
            let cell = format!("{:>w$}", c.show(c.value_of(x)), w = c.width);
            line.push(' ');
            line.push_str(&match c.tone {
                Tone::Gain => st.paint(&cell, Color::Cyan),
                Tone::Harm => st.paint(&cell, Color::Red),
                Tone::Plain => cell,
            });
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The curve: one line per configuration with an inline bar.
fn curve(
    out: &mut impl Write,
    m: &ResponseMatrix,
    mg: &ModelGrid,
    values: &[f64],
    marks: &dyn Fn(usize) -> String,
    st: &Style,
) -> io::Result<()> {
    let g = &mg.grid;
    let names: Vec<String> = g
        .configs
        .iter()
        .map(|&c| fit(&m.config(c).name, 20))
        .collect();
    let name_w = names.iter().map(|n| width(n)).max().unwrap_or(4);
    let bar_w = st.width.saturating_sub(name_w + 36).clamp(8, 40);
    for (i, name) in names.iter().enumerate() {
        let variant = if g.is_variant[i] { " (variant)" } else { "" };
        writeln!(
            out,
            "    {} {:>5}f {:>5} {}{}{}",
            pad(name, name_w),
            g.frames(m, i),
            num(values[i]),
            st.paint(&pad(&bar(values[i], 100.0, bar_w), bar_w), Color::Blue),
            st.dim(variant),
            marks(i)
        )?;
    }
    Ok(())
}

/// The items a model's figures stand on, and those of its cells left out because they
/// lack a configuration of the grid (measures §2.2): "2 of 4 items (2 lack a
/// configuration of the grid)".
fn items_of_grid(mg: &ModelGrid, n_items: usize) -> String {
    let candidates = mg.grid.n_items_candidate;
    if candidates > n_items {
        let left = candidates - n_items;
        format!(
            "{n_items} of {} ({left} {} a configuration of the grid)",
            count(candidates, "item"),
            if left == 1 { "lacks" } else { "lack" }
        )
    } else {
        count(n_items, "item")
    }
}

fn mcq_block(
    out: &mut impl Write,
    m: &ResponseMatrix,
    mg: &ModelGrid,
    x: &McqMetrics,
    st: &Style,
) -> io::Result<()> {
    writeln!(
        out,
        "\n  {} · {} · {}",
        st.bold(&fit(m.models.name(mg.model), 40)),
        items_of_grid(mg, x.n_items),
        count(mg.grid.k(), "configuration")
    )?;
    let marks = |i: usize| {
        let mut v = Vec::new();
        if i == x.best_fixed.index {
            v.push("best fixed");
        }
        if i == x.top.index {
            v.push("top");
        }
        if v.is_empty() {
            String::new()
        } else {
            st.dim(&format!(" ◀ {}", v.join(", ")))
        }
    };
    curve(out, m, mg, &x.accuracy, &marks, st)?;
    let boot = x.bootstrap.as_ref();
    writeln!(
        out,
        "    best fixed {} {} · oracle {} · headroom {} points{}",
        fit(&x.best_fixed.config, 20),
        num(x.best_fixed.accuracy),
        num(x.oracle_accuracy),
        st.paint(&format!("+{}", num(x.headroom)), Color::Cyan),
        ci(boot.map(|b| &b.headroom))
    )?;
    // Item rates and pair counts are told apart by name, never set side by side bare.
    writeln!(
        out,
        "    harmful items {}%{} (with a harmful transition) · harmful pairs {} of {} comparable ({})",
        st.paint(&num(x.harmful_rate), Color::Red),
        ci(boot.map(|b| &b.harmful_rate)),
        x.harmful_pairs,
        x.pairs_total,
        pct(x.harmful_pair_rate),
    )?;
    writeln!(
        out,
        "    terminal regressions {}%{} of items · text overwrite {} of items",
        num(x.terminal_regression_rate),
        ci(x.terminal_interval.as_ref()),
        pct(x.text_overwrite.rate),
    )?;
    if let Some(r) = x.prior_fallback.rate {
        writeln!(
            out,
            "    prior fallback {}% of visual harmful pairs end on the blind answer (baseline {})",
            num(r),
            pct(x.prior_fallback.baseline_rate)
        )?;
    }
    if !x.churn.is_empty() {
        let mut line = String::from("    churn");
        let mut col = width(&line);
        for c in &x.churn {
            let step = format!(
                " {}→{} {} {}",
                fit(&c.from, 16),
                fit(&c.to, 16),
                st.paint(&format!("+{}", c.wrong_to_correct), Color::Green),
                st.paint(&format!("−{}", c.correct_to_wrong), Color::Red)
            );
            let plain_w = width(&fit(&c.from, 16)) + width(&fit(&c.to, 16)) + 10;
            if col + plain_w > st.width && col > 10 {
                writeln!(out, "{line}")?;
                line = String::from("         ");
                col = width(&line);
            }
            line.push_str(&step);
            col += plain_w;
        }
        writeln!(out, "{line}")?;
    }
    match &x.cascade {
        Some(c) => match &c.selected {
            Some(s) => writeln!(
                out,
                "    cascade τ={:.2}: {}% accuracy at {} frames per item instead of {} ({} fewer)",
                s.tau,
                num(s.accuracy),
                num(s.mean_shared_cost),
                num(c.baseline.mean_cost),
                pct(s.cost_reduction_pct)
            )?,
            None => writeln!(
                out,
                "    cascade: no threshold matches {}'s accuracy",
                fit(&c.baseline.config, 20)
            )?,
        },
        None => writeln!(
            out,
            "    {}",
            st.dim("cascade: not available (needs confidences on two or more visual stages)")
        )?,
    }
    for v in &x.interventions {
        intervention_line(out, v)?;
    }
    if let Some(r) = &x.replicates {
        noise_block(out, r, st)?;
    }
    Ok(())
}

/// The recovery by one intervention protocol (docs/intervention.md §7): of the terminal
/// regressions by the top's re-runs, then of the transitions below the top by theirs.
/// Broken and the accuracy delta are left out when no item re-run at the top was right
/// there (a plan of terminal regressions only): broken is then 0 of 0, and the delta the
/// re-runs' accuracy again.
fn intervention_line(out: &mut impl Write, v: &StrategyRecovery) -> io::Result<()> {
    let iv = &v.recovery;
    let name = sanitize(&v.protocol);
    if iv.items_with_intervention > 0 {
        write!(
            out,
            "    intervention {name}: recovers {} of {} ({}{})",
            iv.recovered,
            crate::core::text::count(iv.terminal_regressions, "terminal regression"),
            pct(iv.recovery_rate),
            ci(v.recovery_rate_wilson.as_ref()),
        )?;
        match iv.accuracy_delta {
            Some(delta) if iv.top_correct_items > 0 => writeln!(
                out,
                ", breaks {} of {} right at top; accuracy {delta:+.1}{} points over {}",
                iv.broken,
                iv.top_correct_items,
                ci(v.bootstrap.as_ref().map(|b| &b.accuracy_delta)),
                crate::core::text::count(iv.items_with_intervention, "item"),
            )?,
            _ => writeln!(
                out,
                " over {} re-run at the top, all wrong there",
                crate::core::text::count(iv.items_with_intervention, "item")
            )?,
        }
    }
    if v.below.transition_regressions > 0 {
        let per: Vec<String> = v
            .below
            .transitions
            .iter()
            .map(|t| {
                format!(
                    "{} {} of {}",
                    sanitize(&t.config),
                    t.recovered,
                    t.regressions
                )
            })
            .collect();
        writeln!(
            out,
            "    intervention {name}: recovers {} of {} below the top ({}{}; {})",
            v.below.transition_recovered,
            crate::core::text::count(v.below.transition_regressions, "transition"),
            pct(v.below.transition_recovery_rate),
            ci(v.below.transition_recovery_rate_wilson.as_ref()),
            per.join(", ")
        )?;
    }
    Ok(())
}

/// A p- or q-value: three decimals, or two significant digits below 0.001.
fn p_value(p: Option<f64>) -> String {
    match p {
        None => "–".into(),
        Some(p) if p >= 0.001 || p == 0.0 => format!("{p:.3}"),
        Some(p) => format!("{p:.1e}"),
    }
}

/// The noise floor of a model's grid (all pairs, then per nuisance), each ladder edge's
/// negative flips against it, and the stable and lottery harmful items.
fn noise_block(out: &mut impl Write, r: &Replicated, st: &Style) -> io::Result<()> {
    let f = &r.floor;
    let floors: Vec<(String, &crate::core::analysis::noise::Floor)> =
        std::iter::once(("all".to_string(), &f.all))
            .chain(f.by_nuisance.iter().map(|(k, v)| (fit(k, 20), v)))
            .collect();
    let edges: Vec<String> = r
        .edges
        .iter()
        .map(|e| format!("{}→{}", fit(&e.from, 16), fit(&e.to, 16)))
        .collect();
    let name_w = floors
        .iter()
        .map(|(n, _)| width(n))
        .chain(edges.iter().map(|e| width(e)))
        .max()
        .unwrap_or(0)
        .max(5);
    writeln!(
        out,
        "    noise floor over replicates ({})",
        fit(&r.nuisances.join(", "), 60)
    )?;
    // Headings padded before they are dimmed: the colour's escapes take no column.
    writeln!(
        out,
        "      {}",
        st.dim(&format!(
            "{} {:>7} {:>9} {:>9}",
            pad("", name_w),
            "pairs",
            "disagree",
            "neg-flip"
        ))
    )?;
    for (name, fl) in &floors {
        writeln!(
            out,
            "      {} {:>7} {:>9} {:>9}",
            pad(name, name_w),
            fl.pairs,
            pct(fl.disagreement_rate),
            pct(fl.negative_flip_floor)
        )?;
    }
    writeln!(
        out,
        "    edges: negative flips against the floor (beyond noise: excess q ≤ {})",
        r.alpha
    )?;
    writeln!(
        out,
        "      {}",
        st.dim(&format!(
            "{} {:>9} {:>7} {:>7} {:>8} {:>8}",
            pad("", name_w),
            "observed",
            "floor",
            "excess",
            "excess p",
            "q"
        ))
    )?;
    for (e, name) in r.edges.iter().zip(&edges) {
        let mark = if e.beyond_noise {
            format!(" {}", st.paint("◀ beyond noise", Color::Red))
        } else {
            String::new()
        };
        writeln!(
            out,
            "      {} {:>9} {:>7} {:>7} {:>8} {:>8}{}",
            pad(name, name_w),
            format!("{}%", num(e.observed_nfr)),
            pct(e.floor_nfr),
            e.excess_nfr.map_or("–".into(), |x| format!("{x:+.1}")),
            p_value(e.excess_p),
            p_value(e.excess_q),
            mark
        )?;
    }
    let s = &r.stable;
    // Without a judgeable harmful item the lottery rate has no denominator: said why,
    // rather than "n/a (0 of 0)" beside a stable rate that then reads as no stable harm.
    let lottery = if s.harmful_replicated == 0 {
        "lottery n/a: no harmful item has replicates at every configuration".to_string()
    } else {
        format!(
            "lottery {} of replicated harmful items ({} of {})",
            pct(s.lottery_rate),
            s.harmful_replicated
                .saturating_sub(s.stable_harmful_replicated),
            s.harmful_replicated
        )
    };
    writeln!(
        out,
        "    stable harmful items {} ({} items) · {lottery}",
        st.paint(&pct(s.stable_harmful_rate), Color::Red),
        s.stable_harmful_items,
    )
}

fn open_block(
    out: &mut impl Write,
    m: &ResponseMatrix,
    mg: &ModelGrid,
    x: &OpenMetrics,
    st: &Style,
) -> io::Result<()> {
    writeln!(
        out,
        "\n  {} · {} · {} · open-ended (mean score)",
        st.bold(&fit(m.models.name(mg.model), 40)),
        items_of_grid(mg, x.n_items),
        count(mg.grid.k(), "configuration")
    )?;
    let marks = |i: usize| {
        if i == x.best_fixed.index {
            st.dim(" ◀ best fixed")
        } else {
            String::new()
        }
    };
    curve(out, m, mg, &x.mean_score, &marks, st)?;
    let boot = x.bootstrap.as_ref();
    writeln!(
        out,
        "    best fixed {} {} · oracle {} · gap {} points{}",
        fit(&x.best_fixed.config, 20),
        num(x.best_fixed.mean_score),
        num(x.oracle_mean),
        st.paint(&format!("+{}", num(x.oracle_gap)), Color::Cyan),
        ci(boot.map(|b| &b.oracle_gap))
    )?;
    writeln!(
        out,
        "    regression (δ={}) {}%{} of items · terminal {}%",
        x.delta,
        st.paint(&num(x.regression_rate), Color::Red),
        ci(boot.map(|b| &b.regression_rate)),
        num(x.terminal_regression_rate)
    )
}
