"""Prints a Parquet file's rows as pyarrow reads them: {"columns": [...], "rows": [...]}.

    python3 parquet_rows.py FILE OUT

Exit code 3 means pyarrow is not installed (the caller skips).
"""
import json
import sys

try:
    import pyarrow.parquet as pq
except ImportError:
    sys.exit(3)

t = pq.read_table(sys.argv[1])
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump({"columns": t.schema.names, "rows": t.to_pylist()}, f)
