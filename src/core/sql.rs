//! The MCQ trajectory measures as one SQL script, for a matrix held by an engine rather than
//! by frameaudit (docs/sql.md). The script reads a table or view `cells` with the fields of
//! the cells format as columns and creates `item_measures`, `config_measures` and
//! `model_summary`, with the definitions of docs/measures.md §1-§4.1 for per-model grids, and
//! from the replicate cells the noise floor of §16 (`replicate_floor`, `replicate_edges`,
//! `replicate_stable`; the steps are in `noise`).
//!
//! Both dialects share every query; they differ only where the engines do: how a string
//! literal escapes a backslash, how an ordered string aggregate is written and how a result
//! table is created.

use crate::core::analysis::params::{GridMode, Params, ReferencePixels, VariantBudget};

mod noise;

/// The engine the script is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// DuckDB 1.x and later.
    DuckDb,
    /// Spark SQL 3.4 and later (`spark-sql -f`).
    Spark,
}

impl Dialect {
    /// The dialect's name, as `--dialect` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::DuckDb => "duckdb",
            Dialect::Spark => "spark",
        }
    }

    /// A string literal holding `s` exactly. A character that is unsafe on a terminal (a
    /// control character such as ESC, a bidi override: `text::is_unsafe_char`) is never
    /// written as itself, since the script is often read on one: DuckDB gets it as
    /// `chr(N)` joined on with `||`, Spark as the `\uXXXX` escape of its literals (two, a
    /// surrogate pair, beyond the first plane).
    fn lit(self, s: &str) -> String {
        use crate::core::text::is_unsafe_char;
        match self {
            // Standard SQL: a quote is doubled, a backslash is itself.
            Dialect::DuckDb => {
                let mut parts: Vec<String> = Vec::new();
                let mut run = String::new();
                for c in s.chars() {
                    if is_unsafe_char(c) {
                        if !run.is_empty() {
                            parts.push(format!("'{}'", std::mem::take(&mut run)));
                        }
                        parts.push(format!("chr({})", u32::from(c)));
                    } else if c == '\'' {
                        run.push_str("''");
                    } else {
                        run.push(c);
                    }
                }
                match parts.len() {
                    0 => format!("'{run}'"),
                    _ => {
                        if !run.is_empty() {
                            parts.push(format!("'{run}'"));
                        }
                        format!("({})", parts.join(" || "))
                    }
                }
            }
            // Spark reads backslash escapes in literals (unless escapedStringLiterals).
            Dialect::Spark => {
                let mut body = String::with_capacity(s.len() + 2);
                for c in s.chars() {
                    match c {
                        '\\' => body.push_str("\\\\"),
                        '\'' => body.push_str("\\'"),
                        c if is_unsafe_char(c) => {
                            let mut units = [0u16; 2];
                            for u in c.encode_utf16(&mut units) {
                                body.push_str(&format!("\\u{u:04X}"));
                            }
                        }
                        c => body.push(c),
                    }
                }
                format!("'{body}'")
            }
        }
    }

    /// The values `0`/`1` of `y` joined into one string, in the order of `gi`.
    fn ordered_digits(self) -> &'static str {
        match self {
            Dialect::DuckDb => "string_agg(CAST(y AS STRING), '' ORDER BY gi)",
            Dialect::Spark => {
                "array_join(transform(array_sort(collect_list(struct(gi, y))), s -> CAST(s.y AS STRING)), '')"
            }
        }
    }

    /// Creates an intermediate step: a temporary table in DuckDB, which would otherwise
    /// compute a view again for every query that reads it; a temporary view in Spark, whose
    /// planner keeps the whole script as one plan.
    fn create_step(self, name: &str, query: &str) -> String {
        match self {
            Dialect::DuckDb => {
                format!("CREATE OR REPLACE TEMPORARY TABLE {name} AS\n{query};\n\n")
            }
            Dialect::Spark => {
                format!("CREATE OR REPLACE TEMPORARY VIEW {name} AS\n{query};\n\n")
            }
        }
    }

    /// Creates a result table from a query.
    fn create_table(self, name: &str, query: &str) -> String {
        match self {
            Dialect::DuckDb => format!("CREATE OR REPLACE TABLE {name} AS\n{query};\n"),
            Dialect::Spark => {
                format!(
                    "DROP TABLE IF EXISTS {name};\nCREATE TABLE {name} USING parquet AS\n{query};\n"
                )
            }
        }
    }
}

/// Why a run cannot be written as SQL.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SqlError {
    /// Joint grids are not written as SQL.
    #[error(
        "the SQL computes per-model grids (docs/sql.md); --grid joint is frameaudit's own report only"
    )]
    JointGrid,
}

/// The Unicode `White_Space` characters `norm` strips (docs/measures.md §1.3), as a regular
/// expression class both RE2 (DuckDB) and java.util.regex (Spark) read.
const WHITE_SPACE: &str = r"[\x{9}-\x{D}\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]";

/// The key of one grid: an analysis's protocol and scope, and the model.
const GRID: [&str; 3] = ["protocol", "scope", "model"];
/// The key of one item of one grid.
const ITEM: [&str; 5] = ["protocol", "scope", "model", "benchmark", "item_id"];

/// `a.k = b.k AND ...` over the key columns.
fn on(a: &str, b: &str, keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("{a}.{k} = {b}.{k}"))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// The script for `params` in `dialect`.
pub fn script(params: &Params, dialect: Dialect) -> Result<String, SqlError> {
    if params.grid_mode == GridMode::Joint {
        return Err(SqlError::JointGrid);
    }
    let lit = |s: &str| dialect.lit(s);
    // `norm` (§1.3): two anchored replacements, as DuckDB replaces only the first match.
    let norm = |col: &str| {
        let head = format!(
            "regexp_replace({col}, {}, '')",
            lit(&format!("^{WHITE_SPACE}+"))
        );
        format!(
            "NULLIF(upper(regexp_replace({head}, {}, '')), '')",
            lit(&format!("{WHITE_SPACE}+$"))
        )
    };
    // §1.3: a cell's value, 1 right, 0 wrong, NULL when nothing scores it.
    let value = format!(
        "CASE WHEN correct IS NOT NULL THEN (CASE WHEN correct THEN 1 ELSE 0 END)\n\
         \x20             WHEN gold IS NOT NULL THEN (CASE WHEN {} = {} THEN 1 ELSE 0 END)\n\
         \x20        END",
        norm("pred"),
        norm("CAST(gold AS STRING)")
    );
    let mut out = String::new();
    out.push_str(&format!(
        "-- frameaudit sql --dialect {}: the MCQ trajectory measures of docs/measures.md\n\
         -- (frameaudit's docs/sql.md) for per-model grids, from a table or view `cells` with the\n\
         -- columns of the cells format (an absent field NULL). Creates item_measures (one row per\n\
         -- protocol, scope = benchmark, model, item), config_measures (one row per grid\n\
         -- configuration) and model_summary (one row per protocol, scope, model; scope 'ALL' pools\n\
         -- the benchmarks); from the replicate cells (a non-empty `replicate`, its `nuisance`), the\n\
         -- noise floor of §16: replicate_floor, replicate_edges and replicate_stable, rows only for\n\
         -- the models with a replicate pair. Both dialects compute the exact p-values (McNemar,\n\
         -- Fisher), their q-values and beyond_noise, to 1e-9, as sums of terms formed from the\n\
         -- log ratios of neighbouring terms (no lgamma). Parameters: {}.\n\n",
        dialect.name(),
        describe(params),
    ));
    let view = |out: &mut String, name: &str, query: String| {
        out.push_str(&dialect.create_step(name, &query));
    };

    // §1.2-§1.3 and §2.1: the valid MCQ cells of the analysed protocols, selected.
    let ip = &params.intervention_protocol;
    let ip_strategy = format!("{ip}:");
    let mut selected = vec![
        "y IS NOT NULL".to_string(),
        format!(
            "NOT (protocol = {} OR (substr(protocol, 1, {}) = {} AND length(protocol) > {}))",
            lit(ip),
            ip_strategy.chars().count(),
            lit(&ip_strategy),
            ip_strategy.chars().count()
        ),
    ];
    if let Some(models) = &params.models {
        let list: Vec<String> = models.iter().map(|m| lit(m)).collect();
        selected.push(format!("model IN ({})", list.join(", ")));
    }
    if !params.include_zero_frame {
        selected.push("frames > 0".into());
    }
    view(
        &mut out,
        "fa_cells",
        format!(
            "SELECT protocol, benchmark, model, item_id, config, frames, budget, pixels, y\n\
             FROM (\n\
             \x20 SELECT coalesce(protocol, 'main') AS protocol,\n\
             \x20        coalesce(benchmark, 'default') AS benchmark,\n\
             \x20        model, item_id, config,\n\
             \x20        CAST(frames AS BIGINT) AS frames,\n\
             \x20        CAST(coalesce(budget, frames) AS DOUBLE) AS budget,\n\
             \x20        CAST(pixels AS BIGINT) AS pixels,\n\
             \x20        {value} AS y\n\
             \x20 FROM cells\n\
             \x20 WHERE coalesce(task, CASE WHEN score IS NOT NULL THEN 'open' ELSE 'mcq' END) = 'mcq'\n\
             \x20   AND coalesce(replicate, '') = ''\n\
             ) c\n\
             WHERE {}",
            selected.join("\n  AND ")
        ),
    );
    // §2.1: every benchmark on its own, and all of them pooled.
    view(
        &mut out,
        "fa_scoped",
        "SELECT c.*, c.benchmark AS scope FROM fa_cells c\n\
         UNION ALL\n\
         SELECT c.*, 'ALL' AS scope FROM fa_cells c"
            .into(),
    );
    // §2.2: a model's benchmarks in the scope, and its items there (n_items_candidate).
    view(
        &mut out,
        "fa_models",
        "SELECT protocol, scope, model, count(DISTINCT benchmark) AS n_benchmarks,\n\
         \x20      count(*) AS n_items_candidate\n\
         FROM (SELECT DISTINCT protocol, scope, model, benchmark, item_id FROM fa_scoped) d\n\
         GROUP BY protocol, scope, model"
            .into(),
    );
    // §2.2: the configurations a model has in every benchmark of the scope it has cells in.
    view(
        &mut out,
        "fa_avail",
        format!(
            "SELECT a.protocol, a.scope, a.model, a.config, a.frames, a.budget, a.pixels\n\
             FROM (\n\
             \x20 SELECT protocol, scope, model, config, count(DISTINCT benchmark) AS n_benchmarks,\n\
             \x20        min(frames) AS frames, min(budget) AS budget, min(pixels) AS pixels\n\
             \x20 FROM fa_scoped GROUP BY protocol, scope, model, config\n\
             ) a JOIN fa_models m ON {}\n\
             WHERE a.n_benchmarks = m.n_benchmarks",
            on("a", "m", &GRID)
        ),
    );
    // §2.3: the grid's configurations: the config filter, when given, else all available.
    match &params.configs {
        None => view(&mut out, "fa_grid_configs", "SELECT * FROM fa_avail".into()),
        Some(filter) => {
            let mut wanted: Vec<&str> = Vec::new();
            for c in filter {
                if !wanted.contains(&c.as_str()) {
                    wanted.push(c);
                }
            }
            let values: Vec<String> = wanted.iter().map(|c| format!("({})", lit(c))).collect();
            view(
                &mut out,
                "fa_filter",
                format!(
                    "SELECT config FROM (VALUES {}) AS f(config)",
                    values.join(", ")
                ),
            );
            view(
                &mut out,
                "fa_grid_configs",
                format!(
                    "SELECT a.* FROM fa_avail a JOIN fa_filter f ON a.config = f.config\n\
                     JOIN (\n\
                     \x20 SELECT a.protocol, a.scope, a.model FROM fa_avail a JOIN fa_filter f ON a.config = f.config\n\
                     \x20 GROUP BY a.protocol, a.scope, a.model HAVING count(*) = {}\n\
                     ) k ON {}",
                    wanted.len(),
                    on("a", "k", &GRID)
                ),
            );
        }
    }
    // §2.4: the reference pixel count of each grid.
    let pref = match params.reference_pixels {
        ReferencePixels::Auto => "SELECT protocol, scope, model, pixels AS p_ref FROM (\n\
             \x20 SELECT protocol, scope, model, pixels,\n\
             \x20        row_number() OVER (PARTITION BY protocol, scope, model ORDER BY n DESC, pixels) AS rn\n\
             \x20 FROM (SELECT protocol, scope, model, pixels, count(*) AS n FROM fa_grid_configs\n\
             \x20       WHERE frames > 0 AND pixels IS NOT NULL GROUP BY protocol, scope, model, pixels) t\n\
             ) r WHERE rn = 1"
            .to_string(),
        ReferencePixels::Value(p) => format!(
            "SELECT DISTINCT protocol, scope, model, pixels AS p_ref FROM fa_grid_configs\n\
             WHERE frames > 0 AND pixels = {p}"
        ),
        ReferencePixels::None => {
            "SELECT protocol, scope, model, CAST(NULL AS BIGINT) AS p_ref FROM fa_grid_configs WHERE 1 = 0"
                .to_string()
        }
    };
    view(&mut out, "fa_pref", pref);
    // §2.4-§2.5: variants, comparison budgets, grid order, the top configuration.
    let b = match params.variant_budget {
        VariantBudget::Own => "budget".to_string(),
        VariantBudget::Zero => {
            "CASE WHEN variant = 1 THEN CAST(0 AS DOUBLE) ELSE budget END".into()
        }
    };
    view(
        &mut out,
        "fa_configs0",
        format!(
            "SELECT v.*, {b} AS b FROM (\n\
             \x20 SELECT g.protocol, g.scope, g.model, g.config, g.frames, g.budget, g.pixels, p.p_ref,\n\
             \x20        CASE WHEN g.frames > 0 AND g.pixels IS NOT NULL AND p.p_ref IS NOT NULL\n\
             \x20                  AND g.pixels <> p.p_ref THEN 1 ELSE 0 END AS variant\n\
             \x20 FROM fa_grid_configs g LEFT JOIN fa_pref p ON {}\n\
             ) v",
            on("g", "p", &GRID)
        ),
    );
    view(
        &mut out,
        "fa_configs",
        "SELECT c.*,\n\
         \x20      row_number() OVER (PARTITION BY protocol, scope, model ORDER BY variant, b, config) AS gi,\n\
         \x20      sum(1 - variant) OVER (PARTITION BY protocol, scope, model) AS n_ladder,\n\
         \x20      rank() OVER (PARTITION BY protocol, scope, model ORDER BY b) - 1 AS n_lower,\n\
         \x20      count(*) OVER (PARTITION BY protocol, scope, model) AS k\n\
         FROM fa_configs0 c"
            .into(),
    );
    // §2.3: the grid's items, those with a valid cell under every grid configuration.
    view(
        &mut out,
        "fa_grid_cells",
        format!(
            "SELECT s.protocol, s.scope, s.model, s.benchmark, s.item_id, s.config, s.y,\n\
             \x20      f.gi, f.b, f.frames, f.variant, CASE WHEN f.gi = f.n_ladder THEN 1 ELSE 0 END AS is_top, f.k\n\
             FROM fa_scoped s JOIN fa_configs f ON {} AND s.config = f.config",
            on("s", "f", &GRID)
        ),
    );
    view(
        &mut out,
        "fa_items",
        "SELECT protocol, scope, model, benchmark, item_id FROM fa_grid_cells\n\
         GROUP BY protocol, scope, model, benchmark, item_id, k HAVING count(*) = k"
            .into(),
    );
    // Per cell: the right answers of the item at a lower comparison budget (§3.5), the
    // previous value in grid order (§3.9) and on the ladder (§3.6).
    let item_part = "PARTITION BY protocol, scope, model, benchmark, item_id";
    view(
        &mut out,
        "fa_y",
        format!(
            "SELECT c.*,\n\
             \x20      sum(y) OVER ({item_part} ORDER BY b RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)\n\
             \x20        - sum(y) OVER ({item_part}, b) AS right_below,\n\
             \x20      lag(y) OVER ({item_part} ORDER BY gi) AS prev_y,\n\
             \x20      lag(y) OVER ({item_part}, variant ORDER BY gi) AS prev_same\n\
             FROM (SELECT g.* FROM fa_grid_cells g JOIN fa_items i ON {}) c",
            on("g", "i", &ITEM)
        ),
    );
    // §16.1, §16.4: the replicates of the grid cells, and per item its outcomes.
    noise::item_steps(&mut out, dialect, params, &value);
    // §3.3-§3.9, §4.1: per item.
    view(
        &mut out,
        "fa_item",
        format!(
            "SELECT protocol, scope, model, benchmark, item_id,\n\
             \x20      count(*) AS k, sum(y) AS n_right,\n\
             \x20      {} AS pattern,\n\
             \x20      coalesce(min(CASE WHEN y = 1 THEN gi END), 1) AS best_gi,\n\
             \x20      sum(CASE WHEN y = 0 THEN right_below ELSE 0 END) AS harmful_pairs,\n\
             \x20      max(CASE WHEN is_top = 1 AND y = 0 AND right_below > 0 THEN 1 ELSE 0 END) AS terminal,\n\
             \x20      max(CASE WHEN frames = 0 AND y = 1 THEN 1 ELSE 0 END) AS text_right,\n\
             \x20      max(CASE WHEN frames > 0 AND y = 0 THEN 1 ELSE 0 END) AS visual_wrong,\n\
             \x20      sum(CASE WHEN prev_y IS NOT NULL AND prev_y <> y THEN 1 ELSE 0 END) AS adjacent_flips,\n\
             \x20      max(CASE WHEN prev_y = 0 AND y = 1 THEN 1 ELSE 0 END) AS has_up,\n\
             \x20      max(CASE WHEN prev_y = 1 AND y = 0 THEN 1 ELSE 0 END) AS has_down,\n\
             \x20      sum(CASE WHEN variant = 0 AND prev_same = 0 AND y = 1 THEN 1 ELSE 0 END) AS wrong_to_correct,\n\
             \x20      sum(CASE WHEN variant = 0 AND prev_same = 1 AND y = 0 THEN 1 ELSE 0 END) AS correct_to_wrong\n\
             FROM fa_y GROUP BY protocol, scope, model, benchmark, item_id",
            dialect.ordered_digits()
        ),
    );
    view(
        &mut out,
        "fa_item_measures",
        format!(
            "SELECT i.protocol, 'mcq' AS task, i.scope, i.model, i.benchmark, i.item_id,\n\
             \x20      i.pattern,\n\
             \x20      CASE WHEN i.n_right = i.k THEN 'always_correct'\n\
             \x20           WHEN i.n_right = 0 THEN 'always_wrong'\n\
             \x20           WHEN i.has_down = 0 THEN 'monotonic_increasing'\n\
             \x20           WHEN i.has_up = 0 THEN 'monotonic_decreasing'\n\
             \x20           ELSE 'oscillating' END AS class,\n\
             \x20      f.config AS best_config,\n\
             \x20      i.harmful_pairs > 0 AS has_harmful,\n\
             \x20      CAST(i.harmful_pairs AS BIGINT) AS harmful_pairs,\n\
             \x20      i.terminal = 1 AS terminal_regression,\n\
             \x20      (i.text_right = 1 AND i.visual_wrong = 1) AS text_overwrite,\n\
             \x20      i.n_right > 0 AS oracle_correct,\n\
             \x20      CAST(i.n_right AS DOUBLE) / i.k AS mean_correct,\n\
             \x20      sqrt((CAST(i.n_right AS DOUBLE) / i.k) * (1 - CAST(i.n_right AS DOUBLE) / i.k)) AS variability,\n\
             \x20      CAST(i.adjacent_flips AS BIGINT) AS adjacent_flips,\n\
             \x20      i.text_right = 1 AS text_correct,\n\
             \x20      CAST(i.wrong_to_correct AS BIGINT) AS wrong_to_correct,\n\
             \x20      CAST(i.correct_to_wrong AS BIGINT) AS correct_to_wrong,\n\
             \x20      o.min_outcomes, o.stable_harmful = 1 AS stable_harmful, o.stable_terminal\n\
             FROM fa_item i JOIN fa_configs f ON {} AND f.gi = i.best_gi\n\
             JOIN fa_item_out o ON {}",
            on("i", "f", &GRID),
            on("i", "o", &ITEM)
        ),
    );
    out.push_str(&dialect.create_table(
        "item_measures",
        "SELECT protocol, task, scope, model, benchmark, item_id, pattern, class, best_config,\n\
         \x20      has_harmful, harmful_pairs, terminal_regression, text_overwrite, oracle_correct,\n\
         \x20      mean_correct, variability, adjacent_flips, min_outcomes, stable_harmful\n\
         FROM fa_item_measures WHERE scope <> 'ALL'",
    ));
    out.push('\n');
    // §3.1: the curve, per grid configuration.
    view(
        &mut out,
        "fa_n",
        "SELECT protocol, scope, model, count(*) AS n_items FROM fa_item GROUP BY protocol, scope, model"
            .into(),
    );
    out.push_str(&dialect.create_table(
        "config_measures",
        &format!(
            "SELECT f.protocol, 'mcq' AS task, f.scope, f.model, f.config, f.gi - 1 AS config_index,\n\
             \x20      f.frames, f.b AS budget, f.budget AS own_budget, f.pixels, f.variant = 1 AS variant,\n\
             \x20      f.gi = f.n_ladder AS is_top, f.p_ref AS reference_pixels,\n\
             \x20      CAST(coalesce(c.correct, 0) AS BIGINT) AS correct_count,\n\
             \x20      CAST(100 AS DOUBLE) * coalesce(c.correct, 0) / n.n_items AS accuracy\n\
             FROM fa_configs f JOIN fa_n n ON {}\n\
             LEFT JOIN (SELECT protocol, scope, model, gi, sum(y) AS correct FROM fa_y\n\
             \x20          GROUP BY protocol, scope, model, gi) c ON {} AND c.gi = f.gi",
            on("f", "n", &GRID),
            on("f", "c", &GRID)
        ),
    ));
    out.push('\n');
    // §16.2-§16.4: the floor, the edges against it, the stable items.
    noise::tables(&mut out, dialect, params);
    // §3.2-§3.7, §4.1, and three of §16: per model.
    let rate =
        |count: &str, denom: &str| format!("CAST(100 AS DOUBLE) * {count} / NULLIF({denom}, 0)");
    let summary = format!(
        "SELECT t.protocol, 'mcq' AS task, t.scope, t.model, m.n_items_candidate, t.n_items,\n\
         \x20      g.k AS n_configs, g.comparable_pairs, g.reference_pixels,\n\
         \x20      bf.config AS best_fixed_config, bf.config_index AS best_fixed_index,\n\
         \x20      bf.accuracy AS best_fixed_accuracy,\n\
         \x20      tp.config AS top_config, tp.config_index AS top_index, tp.accuracy AS top_accuracy,\n\
         \x20      t.oracle_count, {oracle} AS oracle_accuracy,\n\
         \x20      CAST(100 AS DOUBLE) * (t.oracle_count - bf.correct_count) / t.n_items AS headroom,\n\
         \x20      t.harmful_items, {harmful} AS harmful_rate,\n\
         \x20      t.harmful_pairs, t.n_items * g.comparable_pairs AS pairs_total,\n\
         \x20      {pair_rate} AS harmful_pair_rate,\n\
         \x20      t.terminal_regressions, {terminal} AS terminal_regression_rate,\n\
         \x20      t.text_correct_items, t.text_overwrite_items,\n\
         \x20      CASE WHEN g.n_zero_frame = 0 THEN CAST(0 AS DOUBLE) ELSE {text} END AS text_overwrite_rate,\n\
         \x20      {conditional} AS text_overwrite_conditional_rate,\n\
         \x20      t.always_correct, t.always_wrong, t.monotonic_increasing, t.monotonic_decreasing,\n\
         \x20      t.oscillating, t.churn_wrong_to_correct, t.churn_correct_to_wrong,\n\
         \x20      fl.negative_flip_floor AS replicates_floor_all_negative_flip_floor,\n\
         \x20      st.stable_harmful_rate AS replicates_stable_stable_harmful_rate,\n\
         \x20      st.lottery_rate AS replicates_stable_lottery_rate\n\
         FROM (\n\
         \x20 SELECT protocol, scope, model, count(*) AS n_items,\n\
         \x20        sum(CASE WHEN oracle_correct THEN 1 ELSE 0 END) AS oracle_count,\n\
         \x20        sum(CASE WHEN has_harmful THEN 1 ELSE 0 END) AS harmful_items,\n\
         \x20        sum(harmful_pairs) AS harmful_pairs,\n\
         \x20        sum(CASE WHEN terminal_regression THEN 1 ELSE 0 END) AS terminal_regressions,\n\
         \x20        sum(CASE WHEN text_correct THEN 1 ELSE 0 END) AS text_correct_items,\n\
         \x20        sum(CASE WHEN text_overwrite THEN 1 ELSE 0 END) AS text_overwrite_items,\n\
         \x20        sum(CASE WHEN class = 'always_correct' THEN 1 ELSE 0 END) AS always_correct,\n\
         \x20        sum(CASE WHEN class = 'always_wrong' THEN 1 ELSE 0 END) AS always_wrong,\n\
         \x20        sum(CASE WHEN class = 'monotonic_increasing' THEN 1 ELSE 0 END) AS monotonic_increasing,\n\
         \x20        sum(CASE WHEN class = 'monotonic_decreasing' THEN 1 ELSE 0 END) AS monotonic_decreasing,\n\
         \x20        sum(CASE WHEN class = 'oscillating' THEN 1 ELSE 0 END) AS oscillating,\n\
         \x20        sum(wrong_to_correct) AS churn_wrong_to_correct,\n\
         \x20        sum(correct_to_wrong) AS churn_correct_to_wrong\n\
         \x20 FROM fa_item_measures GROUP BY protocol, scope, model\n\
         ) t\n\
         JOIN fa_models m ON {tm}\n\
         JOIN (SELECT protocol, scope, model, max(k) AS k, sum(n_lower) AS comparable_pairs,\n\
         \x20            max(p_ref) AS reference_pixels,\n\
         \x20            sum(CASE WHEN frames = 0 THEN 1 ELSE 0 END) AS n_zero_frame\n\
         \x20     FROM fa_configs GROUP BY protocol, scope, model) g ON {tg}\n\
         JOIN (SELECT c.*, row_number() OVER (PARTITION BY protocol, scope, model\n\
         \x20                                    ORDER BY correct_count DESC, config_index) AS rn\n\
         \x20     FROM config_measures c) bf ON {tb} AND bf.rn = 1\n\
         JOIN config_measures tp ON {tt} AND tp.is_top\n\
         LEFT JOIN replicate_floor fl ON {tf} AND fl.level = 'all'\n\
         LEFT JOIN replicate_stable st ON {ts}",
        oracle = rate("t.oracle_count", "t.n_items"),
        harmful = rate("t.harmful_items", "t.n_items"),
        pair_rate = rate("t.harmful_pairs", "t.n_items * g.comparable_pairs"),
        terminal = rate("t.terminal_regressions", "t.n_items"),
        text = rate("t.text_overwrite_items", "t.n_items"),
        conditional = rate("t.text_overwrite_items", "t.text_correct_items"),
        tm = on("t", "m", &GRID),
        tg = on("t", "g", &GRID),
        tb = on("t", "bf", &GRID),
        tt = on("t", "tp", &GRID),
        tf = on("t", "fl", &GRID),
        ts = on("t", "st", &GRID),
    );
    out.push_str(&dialect.create_table("model_summary", &summary));
    Ok(out)
}

/// The run's parameters in words, for the script's header: a comment line, so no name from
/// the command line may end it or reach a terminal raw (characters unsafe there become `?`).
fn describe(p: &Params) -> String {
    let list = |v: &Option<Vec<String>>| match v {
        None => "all".to_string(),
        Some(v) => v.join(","),
    };
    let line = |s: String| -> String {
        s.chars()
            .map(|c| {
                if crate::core::text::is_unsafe_char(c) {
                    '?'
                } else {
                    c
                }
            })
            .collect()
    };
    line(format!(
        "models {}, configs {}, zero-frame {}, reference pixels {}, variant budget {}, intervention protocol {}, nuisances {}, alpha {}",
        list(&p.models),
        list(&p.configs),
        if p.include_zero_frame {
            "included"
        } else {
            "left out"
        },
        match p.reference_pixels {
            ReferencePixels::Auto => "auto".to_string(),
            ReferencePixels::None => "none".to_string(),
            ReferencePixels::Value(v) => v.to_string(),
        },
        match p.variant_budget {
            VariantBudget::Own => "own",
            VariantBudget::Zero => "zero",
        },
        p.intervention_protocol,
        list(&p.nuisances),
        p.alpha,
    ))
}
