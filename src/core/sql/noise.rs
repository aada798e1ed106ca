//! The noise floor of docs/measures.md §16 as steps of the SQL script: replicate cells paired
//! with their grid cells, the floor per model, nuisance and configuration, each churn edge
//! against it with its exact tests and q-values, and the items harmful under every replicate.
//!
//! The p-values are sums of binomial or hypergeometric terms, as in `core::analysis::exact`:
//! each term relative to the distribution's mode, its logarithm a running sum of the log
//! ratios of neighbouring terms outward from the mode, so no factorial or `lgamma` is formed
//! and the terms that carry the sum are accurate to far below 1e-9 in both dialects.

use super::{Dialect, GRID, ITEM, on};
use crate::core::analysis::params::Params;

/// `CAST(100 AS DOUBLE) * count / denominator`, NULL for a zero denominator (§0).
fn rate(count: &str, denom: &str) -> String {
    format!("CAST(100 AS DOUBLE) * {count} / NULLIF({denom}, 0)")
}

/// `CAST(expr AS DOUBLE)`.
fn dbl(expr: &str) -> String {
    format!("CAST({expr} AS DOUBLE)")
}

impl Dialect {
    /// A select-list expression giving one row per integer of `lo..=hi` (`lo <= hi`).
    fn series(self, lo: &str, hi: &str) -> String {
        match self {
            Dialect::DuckDb => format!("unnest(generate_series({lo}, {hi}))"),
            Dialect::Spark => format!("explode(sequence({lo}, {hi}))"),
        }
    }
}

/// The per-cell and per-item steps (§16.1, §16.4), after `fa_y`: `value` is the §1.3 value
/// of a row of `cells`. Creates `fa_rep` (the valid, selected MCQ replicates), `fa_pairs`
/// (each paired with its grid cell), and `fa_item_out` (per grid item: `min_outcomes`,
/// `stable_harmful`, `stable_terminal`).
pub(super) fn item_steps(out: &mut String, dialect: Dialect, params: &Params, value: &str) {
    let mut view = |name: &str, query: String| out.push_str(&dialect.create_step(name, &query));
    let selected = match &params.nuisances {
        None => String::new(),
        Some(names) => {
            let list: Vec<String> = names.iter().map(|n| dialect.lit(n)).collect();
            format!("\n\x20 AND nuisance IN ({})", list.join(", "))
        }
    };
    view(
        "fa_rep",
        format!(
            "SELECT protocol, benchmark, model, item_id, config, nuisance, y\n\
             FROM (\n\
             \x20 SELECT coalesce(protocol, 'main') AS protocol,\n\
             \x20        coalesce(benchmark, 'default') AS benchmark,\n\
             \x20        model, item_id, config, nuisance,\n\
             \x20        {value} AS y\n\
             \x20 FROM cells\n\
             \x20 WHERE coalesce(task, CASE WHEN score IS NOT NULL THEN 'open' ELSE 'mcq' END) = 'mcq'\n\
             \x20   AND coalesce(replicate, '') <> ''\n\
             ) r\n\
             WHERE y IS NOT NULL{selected}"
        ),
    );
    // A replicate of a cell outside the grids (another protocol, an item or configuration
    // the grid leaves out, an invalid canonical cell) finds no partner: an orphan or unused.
    view(
        "fa_pairs",
        "SELECT g.protocol, g.scope, g.model, g.benchmark, g.item_id, g.gi, r.nuisance,\n\
         \x20      g.y AS y0, r.y AS yr\n\
         FROM fa_y g JOIN fa_rep r ON g.protocol = r.protocol AND g.model = r.model\n\
         \x20 AND g.benchmark = r.benchmark AND g.item_id = r.item_id AND g.config = r.config"
            .into(),
    );
    // Per grid cell its outcomes, whether all are right (stable right) or all wrong (stable
    // wrong), and the stable right cells of the item at a strictly lower budget.
    let item_part = "PARTITION BY protocol, scope, model, benchmark, item_id";
    view(
        "fa_out",
        format!(
            "SELECT c.*,\n\
             \x20      sum(sr) OVER ({item_part} ORDER BY b RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)\n\
             \x20        - sum(sr) OVER ({item_part}, b) AS sr_below\n\
             FROM (\n\
             \x20 SELECT g.protocol, g.scope, g.model, g.benchmark, g.item_id, g.b, g.is_top,\n\
             \x20        1 + coalesce(p.pairs, 0) AS outcomes,\n\
             \x20        CASE WHEN p.pairs > 0 AND g.y = 1 AND p.ones = p.pairs THEN 1 ELSE 0 END AS sr,\n\
             \x20        CASE WHEN p.pairs > 0 AND g.y = 0 AND p.ones = 0 THEN 1 ELSE 0 END AS sw\n\
             \x20 FROM fa_y g LEFT JOIN (\n\
             \x20   SELECT protocol, scope, model, benchmark, item_id, gi, count(*) AS pairs, sum(yr) AS ones\n\
             \x20   FROM fa_pairs GROUP BY protocol, scope, model, benchmark, item_id, gi\n\
             \x20 ) p ON {} AND p.gi = g.gi\n\
             ) c",
            on("g", "p", &ITEM)
        ),
    );
    view(
        "fa_item_out",
        "SELECT protocol, scope, model, benchmark, item_id,\n\
         \x20      CAST(min(outcomes) AS BIGINT) AS min_outcomes,\n\
         \x20      max(CASE WHEN sw = 1 AND sr_below > 0 THEN 1 ELSE 0 END) AS stable_harmful,\n\
         \x20      max(CASE WHEN is_top = 1 AND sw = 1 AND sr_below > 0 THEN 1 ELSE 0 END) AS stable_terminal\n\
         FROM fa_out GROUP BY protocol, scope, model, benchmark, item_id"
            .into(),
    );
}

/// The result tables (§16.2-§16.4), after `config_measures` and `fa_n`:
/// `replicate_floor`, `replicate_edges` and `replicate_stable`, rows only for the models
/// whose grid has a replicate pair (the report's `replicates` is null for the others).
pub(super) fn tables(out: &mut String, dialect: Dialect, params: &Params) {
    let view = |out: &mut String, name: &str, query: String| {
        out.push_str(&dialect.create_step(name, &query));
    };
    // §16.2: per grid configuration, its pairs, every selected nuisance pooled.
    view(
        out,
        "fa_config_floor",
        format!(
            "SELECT f.protocol, f.scope, f.model, f.gi, f.config, f.variant,\n\
             \x20      CAST(coalesce(p.pairs, 0) AS BIGINT) AS pairs,\n\
             \x20      CAST(coalesce(p.neg, 0) AS BIGINT) AS neg,\n\
             \x20      CAST(coalesce(p.pos, 0) AS BIGINT) AS pos\n\
             FROM fa_configs f LEFT JOIN (\n\
             \x20 SELECT protocol, scope, model, gi, count(*) AS pairs,\n\
             \x20        sum(CASE WHEN y0 = 1 AND yr = 0 THEN 1 ELSE 0 END) AS neg,\n\
             \x20        sum(CASE WHEN y0 = 0 AND yr = 1 THEN 1 ELSE 0 END) AS pos\n\
             \x20 FROM fa_pairs GROUP BY protocol, scope, model, gi\n\
             ) p ON {} AND p.gi = f.gi",
            on("f", "p", &GRID)
        ),
    );
    view(
        out,
        "fa_replicated",
        "SELECT protocol, scope, model, CAST(sum(pairs) AS BIGINT) AS pairs,\n\
         \x20      CAST(sum(neg) AS BIGINT) AS neg, CAST(sum(pos) AS BIGINT) AS pos\n\
         FROM fa_config_floor GROUP BY protocol, scope, model HAVING sum(pairs) > 0"
            .into(),
    );
    // The counts and rates of a FLOOR, its columns prefixed with `t`.
    let floor_cols = |t: &str| {
        format!(
            "{t}pairs, {t}neg + {t}pos AS disagree, {t}neg, {t}pos,\n\
             \x20      {} AS disagreement_rate, {} AS negative_flip_floor",
            rate(&format!("({t}neg + {t}pos)"), &format!("{t}pairs")),
            rate(&format!("{t}neg"), &format!("{t}pairs"))
        )
    };
    out.push_str(&dialect.create_table(
        "replicate_floor",
        &format!(
            "SELECT protocol, 'mcq' AS task, scope, model, 'all' AS level,\n\
             \x20      CAST(NULL AS STRING) AS nuisance, CAST(NULL AS STRING) AS config,\n\
             \x20      CAST(NULL AS BIGINT) AS config_index, {all}\n\
             FROM fa_replicated\n\
             UNION ALL\n\
             SELECT protocol, 'mcq' AS task, scope, model, 'nuisance' AS level, nuisance,\n\
             \x20      CAST(NULL AS STRING) AS config, CAST(NULL AS BIGINT) AS config_index, {all}\n\
             FROM (\n\
             \x20 SELECT protocol, scope, model, nuisance, count(*) AS pairs,\n\
             \x20        CAST(sum(CASE WHEN y0 = 1 AND yr = 0 THEN 1 ELSE 0 END) AS BIGINT) AS neg,\n\
             \x20        CAST(sum(CASE WHEN y0 = 0 AND yr = 1 THEN 1 ELSE 0 END) AS BIGINT) AS pos\n\
             \x20 FROM fa_pairs GROUP BY protocol, scope, model, nuisance\n\
             ) n\n\
             UNION ALL\n\
             SELECT c.protocol, 'mcq' AS task, c.scope, c.model, 'config' AS level,\n\
             \x20      CAST(NULL AS STRING) AS nuisance, c.config, CAST(c.gi - 1 AS BIGINT) AS config_index,\n\
             \x20      {config}\n\
             FROM fa_config_floor c JOIN fa_replicated r ON {cr}",
            all = floor_cols(""),
            config = floor_cols("c."),
            cr = on("c", "r", &GRID)
        ),
    ));
    out.push('\n');

    // §3.6, §16.3: every churn edge of every model, with McNemar's test; the family of its
    // q-values spans every model of the analysis, replicates or not.
    view(
        out,
        "fa_churn",
        format!(
            "SELECT f.protocol, f.scope, f.model, CAST(f.gi - 2 AS BIGINT) AS edge_index,\n\
             \x20      p.config AS from_config, f.config AS to_config, n.n_items AS n,\n\
             \x20      CAST(coalesce(c.wtc, 0) AS BIGINT) AS wrong_to_correct,\n\
             \x20      CAST(coalesce(c.ctw, 0) AS BIGINT) AS correct_to_wrong,\n\
             \x20      CAST(coalesce(c.cc, 0) AS BIGINT) AS stable_correct,\n\
             \x20      CAST(coalesce(c.ww, 0) AS BIGINT) AS stable_wrong\n\
             FROM fa_configs f\n\
             JOIN fa_configs p ON {fp} AND p.gi = f.gi - 1\n\
             JOIN fa_n n ON {fn_}\n\
             LEFT JOIN (\n\
             \x20 SELECT protocol, scope, model, gi,\n\
             \x20        sum(CASE WHEN prev_same = 0 AND y = 1 THEN 1 ELSE 0 END) AS wtc,\n\
             \x20        sum(CASE WHEN prev_same = 1 AND y = 0 THEN 1 ELSE 0 END) AS ctw,\n\
             \x20        sum(CASE WHEN prev_same = 1 AND y = 1 THEN 1 ELSE 0 END) AS cc,\n\
             \x20        sum(CASE WHEN prev_same = 0 AND y = 0 THEN 1 ELSE 0 END) AS ww\n\
             \x20 FROM fa_y WHERE variant = 0 GROUP BY protocol, scope, model, gi\n\
             ) c ON {fc} AND c.gi = f.gi\n\
             WHERE f.variant = 0 AND f.gi > 1",
            fp = on("f", "p", &GRID),
            fn_ = on("f", "n", &GRID),
            fc = on("f", "c", &GRID),
        ),
    );
    let edge = "protocol, scope, model, edge_index";
    // Each term relative to the mode's: exp of the running sum of `step`, the log ratio of
    // a term to its neighbour nearer the mode, summed outward from the mode on each side.
    let terms = |out: &mut String, name: &str, from: &str, carry: &str, up: &str, down: &str| {
        view(
            out,
            name,
            format!(
                "SELECT {edge}, {carry}, x,\n\
                 \x20      exp(sum(step) OVER (PARTITION BY {edge}, side ORDER BY dist\n\
                 \x20                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS t\n\
                 FROM (\n\
                 \x20 SELECT s.*,\n\
                 \x20        CASE WHEN x > mode THEN 1 WHEN x < mode THEN -1 ELSE 0 END AS side,\n\
                 \x20        abs(x - mode) AS dist,\n\
                 \x20        CASE WHEN x > mode THEN ln({up})\n\
                 \x20             WHEN x < mode THEN ln({down})\n\
                 \x20             ELSE CAST(0 AS DOUBLE) END AS step\n\
                 \x20 FROM {from} s\n\
                 ) u"
            ),
        );
    };
    // Benjamini–Hochberg within each analysis over the rows of `family` (with `p`): rank by
    // (p, model, edge), then the least of min(1, p · m / s) over the ranks s from this one on.
    let bh = |family: &str| {
        format!(
            "SELECT r.*, min(least(CAST(1 AS DOUBLE), p * {m} / {rk})) OVER (\n\
             \x20        PARTITION BY protocol, scope ORDER BY rk\n\
             \x20        ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS q\n\
             FROM (\n\
             \x20 SELECT f.*, row_number() OVER (PARTITION BY protocol, scope ORDER BY p, model, edge_index) AS rk,\n\
             \x20        count(*) OVER (PARTITION BY protocol, scope) AS m\n\
             \x20 FROM ({family}) f\n\
             ) r",
            m = dbl("m"),
            rk = dbl("rk"),
        )
    };
    // McNemar: X ~ Binomial(b + c, 1/2), mode ⌊(b + c) / 2⌋, term(x) / term(x − 1) =
    // (nn − x + 1) / x; p = min(1, 2 · P(X ≤ min(b, c))), 1 without flips.
    view(
        out,
        "fa_mc",
        format!(
            "SELECT {edge}, nn, small, mode, {} AS x\n\
             FROM (\n\
             \x20 SELECT {edge}, correct_to_wrong + wrong_to_correct AS nn,\n\
             \x20        least(correct_to_wrong, wrong_to_correct) AS small,\n\
             \x20        CAST(floor({} / 2) AS BIGINT) AS mode\n\
             \x20 FROM fa_churn WHERE correct_to_wrong + wrong_to_correct > 0\n\
             ) e",
            dialect.series("CAST(0 AS BIGINT)", "nn"),
            dbl("correct_to_wrong + wrong_to_correct")
        ),
    );
    terms(
        out,
        "fa_mc_terms",
        "fa_mc",
        "small",
        &format!("{} / {}", dbl("nn - x + 1"), dbl("x")),
        &format!("{} / {}", dbl("x + 1"), dbl("nn - x")),
    );
    view(
        out,
        "fa_mcnemar",
        format!(
            "SELECT {edge},\n\
             \x20      least(CAST(1 AS DOUBLE), CAST(2 AS DOUBLE) * sum(CASE WHEN x <= small THEN t ELSE 0 END) / sum(t)) AS p\n\
             FROM fa_mc_terms GROUP BY {edge}"
        ),
    );
    out.push_str(&dialect.create_table(
        "churn_edges",
        &format!(
            "SELECT protocol, 'mcq' AS task, scope, model, edge_index, from_config, to_config, n,\n\
             \x20      wrong_to_correct, correct_to_wrong, stable_correct, stable_wrong,\n\
             \x20      p AS mcnemar_p, q AS mcnemar_q\n\
             FROM ({}) c",
            bh(&format!(
                "SELECT e.*, coalesce(t.p, CAST(1 AS DOUBLE)) AS p\n\
                 \x20 FROM fa_churn e LEFT JOIN fa_mcnemar t ON {} AND t.edge_index = e.edge_index",
                on("e", "t", &GRID)
            ))
        ),
    ));
    out.push('\n');

    // §16.3: the edges of the models with replicates against the floor of their two
    // configurations, read from the result tables (Spark then plans each step on its own).
    let cfg = |t: &str, at: &str| {
        format!(
            "JOIN replicate_floor {t} ON {} AND {t}.level = 'config' AND {t}.config_index = {at}",
            on("e", t, &GRID)
        )
    };
    view(
        out,
        "fa_floor_edges",
        format!(
            "SELECT e.*, a.pairs + c.pairs AS pp, a.neg + c.neg AS floor_neg\n\
             FROM churn_edges e\n\
             {}\n\
             {}",
            cfg("a", "e.edge_index"),
            cfg("c", "e.edge_index + 1")
        ),
    );
    // Fisher: the edge's b of n against the floor's N of P, X hypergeometric with K = b + N
    // draws, support lo..=hi, p = P(X ≥ b), null without floor pairs;
    // term(x) / term(x − 1) = (n − x + 1)(K − x + 1) / (x (P + x − K)).
    view(
        out,
        "fa_fi0",
        "SELECT protocol, scope, model, edge_index, correct_to_wrong AS b, n, pp,\n\
         \x20      correct_to_wrong + floor_neg AS kk,\n\
         \x20      greatest(CAST(0 AS BIGINT), correct_to_wrong + floor_neg - pp) AS lo,\n\
         \x20      least(n, correct_to_wrong + floor_neg) AS hi\n\
         FROM fa_floor_edges WHERE pp > 0"
            .into(),
    );
    view(
        out,
        "fa_fi",
        format!(
            "SELECT {edge}, b, n, pp, kk, mode, {} AS x\n\
             FROM (\n\
             \x20 SELECT f.*, least(hi, greatest(lo, CAST(floor(({} + 1) * ({} + 1) / ({} + 2)) AS BIGINT))) AS mode\n\
             \x20 FROM fa_fi0 f WHERE b > lo\n\
             ) e",
            dialect.series("lo", "hi"),
            dbl("kk"),
            dbl("n"),
            dbl("n + pp"),
        ),
    );
    terms(
        out,
        "fa_fi_terms",
        "fa_fi",
        "b",
        &format!(
            "({} * {}) / ({} * {})",
            dbl("n - x + 1"),
            dbl("kk - x + 1"),
            dbl("x"),
            dbl("pp + x - kk")
        ),
        &format!(
            "({} * {}) / ({} * {})",
            dbl("x + 1"),
            dbl("pp + x + 1 - kk"),
            dbl("n - x"),
            dbl("kk - x")
        ),
    );
    view(
        out,
        "fa_excess",
        bh(&format!(
            "SELECT f.protocol, f.scope, f.model, f.edge_index,\n\
             \x20      CASE WHEN f.b <= f.lo THEN CAST(1 AS DOUBLE) ELSE t.p END AS p\n\
             \x20 FROM fa_fi0 f LEFT JOIN (\n\
             \x20   SELECT {edge}, sum(CASE WHEN x >= b THEN t ELSE 0 END) / sum(t) AS p\n\
             \x20   FROM fa_fi_terms GROUP BY {edge}\n\
             \x20 ) t ON {} AND t.edge_index = f.edge_index",
            on("f", "t", &GRID)
        )),
    );
    let observed = format!("{} * e.correct_to_wrong / e.n", dbl("100"));
    let floor = rate("e.floor_neg", "e.pp");
    let alpha = format!("CAST({:e} AS DOUBLE)", params.alpha);
    out.push_str(&dialect.create_table(
        "replicate_edges",
        &format!(
            "SELECT e.protocol, 'mcq' AS task, e.scope, e.model, e.edge_index, e.from_config, e.to_config,\n\
             \x20      e.n, e.correct_to_wrong, e.wrong_to_correct,\n\
             \x20      {observed} AS observed_nfr, {floor} AS floor_nfr, {observed} - {floor} AS excess_nfr,\n\
             \x20      e.mcnemar_p, e.mcnemar_q, x.p AS excess_p, x.q AS excess_q,\n\
             \x20      coalesce(x.q <= {alpha}, false) AS beyond_noise\n\
             FROM fa_floor_edges e LEFT JOIN fa_excess x ON {} AND x.edge_index = e.edge_index",
            on("e", "x", &GRID)
        ),
    ));
    out.push('\n');
    // §16.4: the stable items, over the grid's items.
    out.push_str(&dialect.create_table(
        "replicate_stable",
        &format!(
            "SELECT s.protocol, 'mcq' AS task, s.scope, s.model, s.replicated_items, s.harmful_replicated,\n\
             \x20      s.stable_harmful_replicated,\n\
             \x20      {} AS lottery_rate,\n\
             \x20      s.stable_harmful_items, {} AS stable_harmful_rate, s.stable_terminal_items\n\
             FROM (\n\
             \x20 SELECT protocol, scope, model, count(*) AS n_items,\n\
             \x20        CAST(sum(CASE WHEN min_outcomes >= 2 THEN 1 ELSE 0 END) AS BIGINT) AS replicated_items,\n\
             \x20        CAST(sum(CASE WHEN min_outcomes >= 2 AND has_harmful THEN 1 ELSE 0 END) AS BIGINT) AS harmful_replicated,\n\
             \x20        CAST(sum(CASE WHEN min_outcomes >= 2 AND has_harmful AND stable_harmful THEN 1 ELSE 0 END) AS BIGINT)\n\
             \x20          AS stable_harmful_replicated,\n\
             \x20        CAST(sum(CASE WHEN stable_harmful THEN 1 ELSE 0 END) AS BIGINT) AS stable_harmful_items,\n\
             \x20        CAST(sum(stable_terminal) AS BIGINT) AS stable_terminal_items\n\
             \x20 FROM fa_item_measures GROUP BY protocol, scope, model\n\
             ) s JOIN fa_replicated r ON {}",
            rate(
                "(s.harmful_replicated - s.stable_harmful_replicated)",
                "s.harmful_replicated"
            ),
            rate("s.stable_harmful_items", "s.n_items"),
            on("s", "r", &GRID)
        ),
    ));
    out.push('\n');
}
