#!/usr/bin/env python3
"""Spark commit latency through `skade serve` vs through Iceberg's reference RESTCatalogServer
(the compatibility kit's jars, a JDBC catalog), both on the same catalog.db, in the same run, from
one Spark session (pyspark 3.5 + Iceberg's Spark runtime 1.10.1) with one catalog per server.

Measured: the wall time of a single-row `INSERT INTO ... VALUES` (Spark plans, writes one data
file and manifest, commits through the server), p50/p99 over --commits inserts after a warm-up.
The reference server's inserts run first (then it stops), then skade's: never both at once.
Writes bench/results/spark.json. Usage: bench/spark_bench.py --build-dir build [--commits 40]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "spark"))

from server_bench import pct, start_reference, start_skade, stop  # noqa: E402
from spark_peer import rest_catalog_conf, spark_session  # noqa: E402


def insert_latencies(spark, table: str, warmup: int, commits: int) -> dict:
    spark.sql(f"CREATE TABLE {table} (id bigint, name string) USING iceberg")
    for i in range(warmup):  # JIT, connection pools and the table's first files
        spark.sql(f"INSERT INTO {table} VALUES ({i}, 'warm')")
    ms = []
    for i in range(commits):
        t0 = time.perf_counter()
        spark.sql(f"INSERT INTO {table} VALUES ({1000 + i}, 'x')")
        ms.append((time.perf_counter() - t0) * 1000)
    n = spark.sql(f"SELECT count(*) AS n FROM {table}").collect()[0]["n"]
    assert n == warmup + commits, f"{table}: {n} rows"
    return {"commits": commits, "insert_p50_ms": pct(ms, 50), "insert_p99_ms": pct(ms, 99),
            "insert_mean_ms": sum(ms) / len(ms)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--commits", type=int, default=40)
    ap.add_argument("--out", default=str(ROOT / "bench/results/spark.json"))
    a = ap.parse_args()
    skade = str(Path(a.build_dir).resolve() / "bin/skade")
    result: dict = {"machine": f"{os.cpu_count()} cores", "client": "pyspark 3.5.9, iceberg-spark-runtime 1.10.1, local[2]"}
    with tempfile.TemporaryDirectory(prefix="skade-spark-bench.") as tmp:
        wh = Path(tmp) / "wh"
        skade_proc, skade_url = start_skade(skade, wh)
        # the reference server on skade's own catalog file (its tables under its catalog name)
        ref_proc, ref_url = start_reference(wh, wh / "catalog.db")
        spark = None
        try:
            spark = spark_session(wh, rest_uri=skade_url, app_name="spark_bench",
                                  conf=rest_catalog_conf(ref_url, wh, catalog="ref"))
            # The reference server first, stopped before skade's turn: Iceberg 1.10.1's JDBC
            # catalog keeps a read transaction open on one pooled connection (README, "Spark"),
            # and that connection would fail to write after skade's commits.
            spark.sql("CREATE NAMESPACE IF NOT EXISTS ref.bench")
            result["reference_server"] = insert_latencies(spark, "ref.bench.t", a.warmup, a.commits)
            stop(ref_proc)
            ref_proc = None
            spark.sql("CREATE NAMESPACE IF NOT EXISTS skade.bench")
            result["skade_serve"] = insert_latencies(spark, "skade.bench.t", a.warmup, a.commits)
        finally:
            if spark is not None:
                spark.stop()
            if ref_proc is not None:
                stop(ref_proc)
            stop(skade_proc)
    s, r = result["skade_serve"], result["reference_server"]
    result["ratio_reference_over_skade"] = {"p50": r["insert_p50_ms"] / s["insert_p50_ms"],
                                            "p99": r["insert_p99_ms"] / s["insert_p99_ms"]}
    Path(a.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
