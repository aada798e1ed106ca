"""Runs a script of `frameaudit sql` on a file of cells and prints the tables it creates.

    python3 run_sql.py duckdb|spark SCRIPT CELLS OUT [AFTER]

CELLS is a cells JSONL file (docs/formats.md) or a Parquet file of cells (`frameaudit
cells -o x.parquet`); the table `cells` gets every field of the cells format as a column,
NULL where a line leaves it out. OUT receives one JSON object: each created table as a
list of rows. AFTER, a file of more statements, runs last (DuckDB only). Exit code 3 means the engine is not installed (the caller skips).
"""
import json
import sys

FIELDS = [
    ("model", "VARCHAR", "string"),
    ("item_id", "VARCHAR", "string"),
    ("benchmark", "VARCHAR", "string"),
    ("config", "VARCHAR", "string"),
    ("frames", "BIGINT", "long"),
    ("budget", "DOUBLE", "double"),
    ("pixels", "BIGINT", "long"),
    ("protocol", "VARCHAR", "string"),
    ("task", "VARCHAR", "string"),
    ("pred", "VARCHAR", "string"),
    ("gold", "VARCHAR", "string"),
    ("correct", "BOOLEAN", "boolean"),
    ("score", "DOUBLE", "double"),
    ("confidence", "DOUBLE", "double"),
    ("blind", "VARCHAR", "string"),
    ("replicate", "VARCHAR", "string"),
    ("nuisance", "VARCHAR", "string"),
]
TABLES = ["item_measures", "config_measures", "model_summary", "churn_edges", "replicate_floor",
          "replicate_edges", "replicate_stable"]


def statements(script):
    # Spark runs one statement at a time. The generator ends every statement with ";" at the end of a line and puts no ";" at
    # the end of a line inside one.
    out, cur = [], []
    for line in script.splitlines():
        if line.startswith("--") and not cur:
            continue
        cur.append(line)
        if line.rstrip().endswith(";"):
            out.append("\n".join(cur).rstrip().rstrip(";"))
            cur = []
    rest = "\n".join(cur).strip()
    if rest:
        out.append(rest)
    return [s for s in out if s.strip()]


def run_duckdb(script, cells, after=None):
    try:
        import duckdb
    except ImportError:
        sys.exit(3)
    con = duckdb.connect()
    if cells.endswith(".parquet"):
        con.execute(f"CREATE VIEW cells AS SELECT * FROM read_parquet('{cells}')")
    else:
        cols = ", ".join(f"'{n}': '{t}'" for n, t, _ in FIELDS)
        con.execute(
            f"CREATE VIEW cells AS SELECT * FROM read_json('{cells}', "
            f"format = 'newline_delimited', columns = {{{cols}}})"
        )
    con.execute(script)  # DuckDB runs a whole script of statements
    if after:
        con.execute(after)
    res = {}
    for t in TABLES:
        cur = con.execute(f"SELECT * FROM {t}")
        names = [d[0] for d in cur.description]
        res[t] = [dict(zip(names, row)) for row in cur.fetchall()]
    return res


def run_spark(script, cells):
    try:
        from pyspark.sql import SparkSession
        from pyspark.sql import types as T
    except ImportError:
        sys.exit(3)
    import tempfile

    wh = tempfile.mkdtemp(prefix="frameaudit-spark-")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.warehouse.dir", wh)
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={wh}")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    if cells.endswith(".parquet"):
        df = spark.read.parquet(cells)
    else:
        kinds = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType(),
                 "boolean": T.BooleanType()}
        schema = T.StructType([T.StructField(n, kinds[k], True) for n, _, k in FIELDS])
        df = spark.read.schema(schema).json(cells)
    df.createOrReplaceTempView("cells")
    for s in statements(script):
        spark.sql(s)
    res = {}
    for t in TABLES:
        res[t] = [r.asDict() for r in spark.table(t).collect()]
    spark.stop()
    return res


def main():
    engine, script_path, cells, out = sys.argv[1:5]
    with open(script_path, encoding="utf-8") as f:
        script = f.read()
    after = None
    if len(sys.argv) > 5:
        with open(sys.argv[5], encoding="utf-8") as f:
            after = f.read()
    res = run_duckdb(script, cells, after) if engine == "duckdb" else run_spark(script, cells)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(res, f, default=str)


if __name__ == "__main__":
    main()
