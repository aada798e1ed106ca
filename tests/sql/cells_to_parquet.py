"""Writes cells JSONL as Parquet the way another tool would: DuckDB, pyarrow or polars, with
the types each gives (tests/parquet.rs holds frameaudit's report on the file to the JSONL's).

    python3 cells_to_parquet.py WRITER CELLS.jsonl OUT.parquet

WRITER is one of:
  duckdb           COPY (SELECT * FROM read_json_auto(...)): its own types, `gold` (strings on
                   some rows, lists on others) as its JSON type
  duckdb-narrow    the same with narrow and unsigned integers, an ENUM, a DECIMAL confidence
  pyarrow          a table of arrow types: dictionary, large and view strings, unsigned and
                   32-bit integers, a decimal128 score (fixed-length bytes), several
                   references in `gold_list`
  pyarrow-json     `gold` as pyarrow's JSON extension type (the JSON logical type)
  polars           a DataFrame: categorical, enum, unsigned, decimal and list columns,
                   written with compression='snappy'

Exit code 3 means the writer's package is not installed (the caller skips).
"""
import decimal
import json
import sys

writer, src, out = sys.argv[1:4]
try:
    if writer.startswith("duckdb"):
        import duckdb
    elif writer.startswith("pyarrow"):
        import pyarrow as pa
        import pyarrow.parquet as pq
    elif writer == "polars":
        import polars as pl
    else:
        sys.exit(f"unknown writer {writer}")
except ImportError:
    sys.exit(3)

rows = [json.loads(line) for line in open(src, encoding="utf-8")]


def column(name):
    return [r.get(name) for r in rows]


if writer == "duckdb":
    duckdb.sql(
        f"COPY (SELECT * FROM read_json_auto('{src}')) TO '{out}' (FORMAT parquet)"
    )
elif writer == "duckdb-narrow":
    con = duckdb.connect()
    models = sorted(set(column("model")))
    con.execute(f"CREATE TYPE model_t AS ENUM ({', '.join(repr(m) for m in models)})")
    con.execute(
        f"""COPY (SELECT * REPLACE (
            model::model_t AS model,
            frames::UTINYINT AS frames,
            pixels::UINTEGER AS pixels,
            confidence::DECIMAL(4, 2) AS confidence,
            frame_idx::USMALLINT[] AS frame_idx)
        FROM read_json_auto('{src}')) TO '{out}' (FORMAT parquet)"""
    )
else:
    gold = [g if isinstance(g, str) else None for g in column("gold")]
    gold_list = [g if isinstance(g, list) else None for g in column("gold")]
    # Two places: a decimal is its digits, the JSONL's number exactly.
    score = [None if s is None else decimal.Decimal(str(s)) for s in column("score")]
    if writer.startswith("pyarrow"):
        cols = {
            "model": pa.array(column("model")).dictionary_encode(),
            "item_id": pa.array(column("item_id"), pa.large_string()),
            "benchmark": pa.array(column("benchmark"), pa.string_view()),
            "config": pa.array(column("config")),
            "frames": pa.array(column("frames"), pa.int32()),
            "pixels": pa.array(column("pixels"), pa.uint32()),
            "task": pa.array(column("task")),
            "pred": pa.array(column("pred")),
            "correct": pa.array(column("correct"), pa.bool_()),
            "score": pa.array(score, pa.decimal128(5, 2)),
            "confidence": pa.array(column("confidence"), pa.float64()),
            "frame_idx": pa.array(column("frame_idx"), pa.large_list(pa.uint32())),
            "source_tag": pa.array(column("source_tag")),
            # Replicates (docs/measures.md §16): a dictionary and a view string.
            "replicate": pa.array(column("replicate")).dictionary_encode(),
            "nuisance": pa.array(column("nuisance"), pa.string_view()),
        }
        if writer == "pyarrow-json":
            text = [None if g is None else json.dumps(g) for g in column("gold")]
            cols["gold"] = pa.array(text, pa.json_())
        else:
            cols["gold"] = pa.array(gold)
            cols["gold_list"] = pa.array(gold_list, pa.list_(pa.string()))
        pq.write_table(pa.table(cols), out, compression="snappy")
    else:
        df = pl.DataFrame(
            {
                "model": pl.Series(column("model"), dtype=pl.Categorical),
                "item_id": column("item_id"),
                "benchmark": pl.Series(
                    column("benchmark"),
                    dtype=pl.Enum(sorted(set(column("benchmark")))),
                ),
                "config": column("config"),
                "frames": pl.Series(column("frames"), dtype=pl.UInt16),
                "pixels": pl.Series(column("pixels"), dtype=pl.UInt32),
                "task": column("task"),
                "pred": column("pred"),
                "gold": gold,
                "gold_list": pl.Series(gold_list, dtype=pl.List(pl.String)),
                "correct": pl.Series(column("correct"), dtype=pl.Boolean),
                "score": pl.Series(score, dtype=pl.Decimal(5, 2)),
                "confidence": pl.Series(column("confidence"), dtype=pl.Float64),
                "frame_idx": pl.Series(column("frame_idx"), dtype=pl.List(pl.UInt32)),
                "source_tag": column("source_tag"),
                "replicate": pl.Series(column("replicate"), dtype=pl.Categorical),
                "nuisance": pl.Series(column("nuisance"), dtype=pl.String),
            }
        )
        df.write_parquet(out, compression="snappy")
