#!/usr/bin/env python3
"""DuckDB speed baselines over a per-item CSV (docs/measures.md §1.7).

  python3 benches/duckdb_baseline.py FILE.csv SCRIPT.sql [--repeat N]
      `frameaudit sql`'s own script (docs/sql.md), the CSV read as a view with the cells
      format's columns: every table of the script (per item, per configuration, per model,
      with harmful-pair counts and the ladder/variant split).
  python3 benches/duckdb_baseline.py FILE.csv --lean [--repeat N]
      one hand-written query for the Table-2 measures only (accuracy per configuration,
      best fixed, oracle, headroom, harmful, terminal and text-overwrite rates per model and
      split and ALL), with the pandas baseline's simplification: grid order (frame_count,
      config), comparability a strictly smaller frame_count, no variants; an item is harmful
      when its lowest right frame count is below its highest wrong one.

Timing covers reading the CSV through the last result, each run in a fresh in-memory
database. Last line: duckdb_baseline: total X.XXX s, runs S.SSS s (the sum over the runs)
"""

import statistics
import sys
import time

import duckdb

VIEW = """
CREATE VIEW cells AS
SELECT trim(sample_id) AS item_id, trim(model) AS model,
       coalesce(nullif(trim(split), ''), 'default') AS benchmark, trim(config) AS config,
       CAST(frame_count AS BIGINT) AS frames, CAST(NULL AS DOUBLE) AS budget,
       CAST(nullif(trim(pixel_count), '') AS BIGINT) AS pixels,
       CAST(NULL AS VARCHAR) AS protocol, 'mcq' AS task,
       nullif(trim(predicted_option), '') AS pred, nullif(trim(ground_truth_option), '') AS gold,
       CASE lower(trim(correct)) WHEN '1' THEN true WHEN 'true' THEN true
                                 WHEN '0' THEN false WHEN 'false' THEN false END AS correct,
       CAST(NULL AS DOUBLE) AS score
FROM read_csv('{path}', all_varchar = true, header = true)
"""


LEAN = """
CREATE TEMPORARY TABLE c AS SELECT * FROM cells WHERE
  (correct IS NOT NULL OR gold IS NOT NULL);
CREATE TEMPORARY TABLE s AS
  SELECT model, benchmark, item_id, config, frames,
         CASE WHEN correct IS NOT NULL THEN CAST(correct AS INT)
              ELSE CAST(coalesce(upper(pred) = upper(gold), false) AS INT) END AS y,
         benchmark AS scope FROM c
  UNION ALL
  SELECT model, benchmark, item_id, config, frames,
         CASE WHEN correct IS NOT NULL THEN CAST(correct AS INT)
              ELSE CAST(coalesce(upper(pred) = upper(gold), false) AS INT) END AS y,
         'ALL' AS scope FROM c;
CREATE TEMPORARY TABLE avail AS
  SELECT a.scope, a.model, a.config, a.frames, count(*) OVER (PARTITION BY a.scope, a.model) AS k
  FROM (SELECT scope, model, config, min(frames) AS frames, count(DISTINCT benchmark) AS nb
        FROM s GROUP BY ALL) a
  JOIN (SELECT scope, model, count(DISTINCT benchmark) AS nb FROM s GROUP BY ALL) m
  USING (scope, model) WHERE a.nb = m.nb;
CREATE TEMPORARY TABLE top AS
  SELECT scope, model, arg_max(config, (frames, config)) AS top, max(frames) AS top_f
  FROM avail GROUP BY ALL;
CREATE TEMPORARY TABLE g AS SELECT s.*, a.k FROM s JOIN avail a USING (scope, model, config);
CREATE TEMPORARY TABLE items AS
  SELECT scope, model, benchmark, item_id,
         min(frames) FILTER (WHERE y = 1) AS lo_right,
         max(frames) FILTER (WHERE y = 0) AS hi_wrong,
         max(y) FILTER (WHERE frames = 0) AS text_right,
         min(y) FILTER (WHERE frames > 0) AS visual_min,
         max(y) AS oracle
  FROM g GROUP BY scope, model, benchmark, item_id, k HAVING count(*) = k;
CREATE TEMPORARY TABLE curve AS
  SELECT g.scope, g.model, g.config, sum(g.y) AS correct
  FROM g JOIN items i USING (scope, model, benchmark, item_id) GROUP BY ALL;
CREATE TEMPORARY TABLE summary AS
  SELECT i.scope, i.model, count(*) AS n,
         100.0 * sum(i.oracle) / count(*) AS oracle_accuracy,
         100.0 * (sum(i.oracle) - max(b.best)) / count(*) AS headroom,
         100.0 * count(*) FILTER (WHERE i.lo_right < i.hi_wrong) / count(*) AS harmful_rate,
         100.0 * count(*) FILTER (WHERE t_y = 0 AND i.lo_right < t.top_f) / count(*) AS terminal_regression_rate,
         100.0 * count(*) FILTER (WHERE i.text_right = 1 AND i.visual_min = 0) / count(*) AS text_overwrite_rate
  FROM (SELECT i.*, gg.y AS t_y FROM items i JOIN top t USING (scope, model)
        JOIN g gg ON gg.scope = i.scope AND gg.model = i.model AND gg.benchmark = i.benchmark
                  AND gg.item_id = i.item_id AND gg.config = t.top) i
  JOIN top t USING (scope, model)
  JOIN (SELECT scope, model, max(correct) AS best FROM curve GROUP BY ALL) b USING (scope, model)
  GROUP BY ALL;
CREATE TABLE model_summary AS SELECT * FROM summary;
"""


def main():
    path, script_path = sys.argv[1], sys.argv[2]
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
    if script_path == "--lean":
        script = LEAN
    else:
        with open(script_path, encoding="utf-8") as f:
            script = f.read()
    times = []
    con = None
    for _ in range(repeat):
        if con is not None:
            con.close()
        t = time.perf_counter()
        con = duckdb.connect()
        con.execute(VIEW.format(path=path.replace("'", "''")))
        con.execute(script)  # DuckDB runs a whole script of statements
        n = con.execute("SELECT count(*) FROM model_summary").fetchone()[0]
        times.append(time.perf_counter() - t)
    for row in con.execute(
        "SELECT scope, model, headroom, harmful_rate FROM model_summary "
        "WHERE scope = 'ALL' ORDER BY model"
    ).fetchall():
        print(*row)
    print(f"{n} model_summary rows")
    print(f"duckdb_baseline: total {statistics.median(times):.3f} s, runs {sum(times):.3f} s")


if __name__ == "__main__":
    main()
