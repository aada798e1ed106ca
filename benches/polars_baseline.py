#!/usr/bin/env python3
"""polars (lazy) speed baseline for the per-item CSV trajectory measures, beside
benches/pandas_baseline.py and benches/duckdb_baseline.py.

Reads a per-item CSV (docs/measures.md §1.7) and computes, for every model, per split and
for the pooled "ALL" scope (per-model grids: the configurations a model has in every split
of the scope, the items with a cell under each), accuracy per configuration, the best fixed
configuration, oracle accuracy, headroom, the harmful (visual confusion), terminal
regression and text overwrite rates (§3.1-§3.3, §3.5, §3.7, §4.1).

The same simplification as the pandas baseline: grid order is (frame_count, config),
comparability is a strictly smaller frame_count, no resolution variants. An item has a
harmful transition exactly when its lowest right frame count is below its highest wrong
one, which polars computes per item without pairs.

Usage: python3 benches/polars_baseline.py FILE.csv [--repeat N]
Last line: polars_baseline: total X.XXX s, runs S.SSS s (the sum over the runs)
"""

import statistics
import sys
import time

import polars as pl


def measures(path):
    cells = (
        pl.scan_csv(path, infer_schema=False, encoding="utf8")
        .select(
            pl.col("sample_id").str.strip_chars(),
            pl.col("model").str.strip_chars(),
            pl.col("split").str.strip_chars().replace("", "default").fill_null("default"),
            pl.col("config").str.strip_chars(),
            pl.col("frame_count").str.strip_chars().cast(pl.Int64),
            pl.col("predicted_option").str.strip_chars().str.to_uppercase(),
            pl.col("ground_truth_option").str.strip_chars().str.to_uppercase(),
            pl.col("correct").str.strip_chars().str.to_lowercase(),
        )
        .with_columns(
            pl.when(pl.col("correct").is_in(["1", "true"])).then(1)
            .when(pl.col("correct").is_in(["0", "false"])).then(0)
            .when(pl.col("ground_truth_option").is_not_null() & (pl.col("ground_truth_option") != ""))
            .then((pl.col("predicted_option") == pl.col("ground_truth_option")).fill_null(False).cast(pl.Int64))
            .alias("y")
        )
        .filter(pl.col("y").is_not_null())
        # Parsed once: the plan below reads the cells six times, and polars 2.1 re-scanned
        # the CSV for each (4.0 s instead of 1.1 s at 1 M rows).
        .collect()
        .lazy()
    )
    scoped = pl.concat([
        cells.with_columns(pl.col("split").alias("scope")),
        cells.with_columns(pl.lit("ALL").alias("scope")),
    ])
    g = ["scope", "model"]
    nb = scoped.group_by(g).agg(pl.col("split").n_unique().alias("nb"))
    avail = (
        scoped.group_by(g + ["config"]).agg(pl.col("split").n_unique().alias("cb"),
                                           pl.col("frame_count").first())
        .join(nb, on=g).filter(pl.col("cb") == pl.col("nb"))
        .with_columns(pl.len().over(g).alias("k"))
    )
    top = avail.sort(["frame_count", "config"]).group_by(g).agg(
        pl.col("config").last().alias("top"), pl.col("frame_count").last().alias("top_f"))
    grid = scoped.join(avail.select(g + ["config", "k"]), on=g + ["config"])
    items = grid.group_by(g + ["split", "sample_id"]).agg(
        pl.len().alias("n"), pl.col("k").first(),
        pl.col("frame_count").filter(pl.col("y") == 1).min().alias("lo_right"),
        pl.col("frame_count").filter(pl.col("y") == 0).max().alias("hi_wrong"),
        (pl.col("y").filter(pl.col("frame_count") == 0).max()).alias("text_right"),
        (pl.col("y").filter(pl.col("frame_count") > 0).min()).alias("visual_min"),
        pl.col("y").max().alias("oracle"),
    ).filter(pl.col("n") == pl.col("k")).join(top, on=g)
    per_item = items.with_columns(
        (pl.col("lo_right") < pl.col("hi_wrong")).fill_null(False).alias("harmful"),
        ((pl.col("text_right") == 1) & (pl.col("visual_min") == 0)).fill_null(False).alias("overwrite"),
    )
    top_y = (
        grid.join(items.select(g + ["split", "sample_id", "top", "top_f", "lo_right"]),
                  on=g + ["split", "sample_id"])
        .filter(pl.col("config") == pl.col("top"))
        .with_columns(((pl.col("y") == 0) & (pl.col("lo_right") < pl.col("top_f")))
                      .fill_null(False).alias("terminal"))
        .group_by(g).agg(pl.col("terminal").sum())
    )
    curve = (
        grid.join(items.select(g + ["split", "sample_id"]), on=g + ["split", "sample_id"])
        .group_by(g + ["config", "frame_count"]).agg(pl.col("y").sum().alias("correct"))
        .sort(["frame_count", "config"])
        .group_by(g, maintain_order=True).agg(pl.col("config"), pl.col("correct"),
                                              pl.col("correct").max().alias("best"))
    )
    summary = (
        per_item.group_by(g).agg(pl.len().alias("n"), pl.col("oracle").sum(),
                                 pl.col("harmful").sum(), pl.col("overwrite").sum())
        .join(curve, on=g).join(top_y, on=g)
        .with_columns(
            (100.0 * pl.col("oracle") / pl.col("n")).alias("oracle_accuracy"),
            (100.0 * (pl.col("oracle") - pl.col("best")) / pl.col("n")).alias("headroom"),
            (100.0 * pl.col("harmful") / pl.col("n")).alias("harmful_rate"),
            (100.0 * pl.col("terminal") / pl.col("n")).alias("terminal_regression_rate"),
            (100.0 * pl.col("overwrite") / pl.col("n")).alias("text_overwrite_rate"),
        )
    )
    return summary.collect()


def main():
    path = sys.argv[1]
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = measures(path)
        times.append(time.perf_counter() - t)
    print(out.select("scope", "model", "n", "headroom", "harmful_rate").sort("scope", "model"))
    print(f"polars_baseline: total {statistics.median(times):.3f} s, runs {sum(times):.3f} s")


if __name__ == "__main__":
    main()
