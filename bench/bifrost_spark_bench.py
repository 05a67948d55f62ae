#!/usr/bin/env python3
"""Bifröst through Spark Connect: the initial build of a 1M-row vertex table into a new
FalkorDB graph, reading the table (a) with the local skade source and (b) through a real
Spark Connect server (Spark 4.0, Iceberg REST catalog on `skade serve`), same run, same
graph server. Both builds write the same graph, so the difference is the read path. Each
is preceded by an untimed `bifrost validate` (the Spark server's first query warms its JVM).

Reports rates and the ratio (never asserted). Usage:
  bifrost_spark_bench.py [--build-dir build] [--rows 1000000]
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests" / "bifrost"))
sys.path.insert(0, str(REPO / "tests" / "interop"))
from bifrost_bench import SEED, run, timed, vertex_table, vertex_warehouse  # noqa: E402
from graph_util import GraphServer, free_port  # noqa: E402
from skade_util import Served  # noqa: E402
from spark_connect import SparkConnectServer  # noqa: E402


def mapping(graph: str, source: str | None) -> dict:
    table = {"table": "bench.v", "mode": "full", "pipeline": [
        {"vertex": {"label": "V", "id_column": "id", "properties": ["name", "score", "grp"]}}]}
    if source:
        table["source"] = source
    return {"graph": graph, "tables": [table]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    build = (REPO / args.build_dir).resolve()
    skade, bifrost = build / "bin" / "skade", build / "bin" / "bifrost"
    work = Path(tempfile.mkdtemp(prefix="bfsb", dir="/tmp"))
    graph = GraphServer(tcp=True)
    served = spark = None
    try:
        wh = work / "wh"
        vertex_warehouse(skade, wh)
        f = work / "v.parquet"
        pq.write_table(vertex_table(args.rows, random.Random(SEED)), f)
        run([skade, "--warehouse", wh, "append", "bench.v", f])
        port = free_port()
        served = Served(wh, listen=f"127.0.0.1:{port}", binary=skade)
        spark = SparkConnectServer(work, port, wh)
        seconds = {}
        for name, source in (("skade", None), ("spark", f"spark:{spark.url}")):
            m = work / f"{name}.yaml"
            m.write_text(json.dumps(mapping(name, source)))
            # not timed: the compile's schema read (and, for Spark, its JVM's first query)
            run([bifrost, "--warehouse", wh, "validate", "--mapping", m])
            seconds[name] = timed([bifrost, "--warehouse", wh, "build", "--mapping", m, "--graph", graph.url])
            out = run([bifrost, "--warehouse", wh, "query", "--mapping", m, "--graph", graph.url,
                       "MATCH (n:V) RETURN count(n) AS c"])
            assert json.loads(out)["c"] == args.rows, out
        result = {
            "rows": args.rows,
            "skade_source_rows_per_s": round(args.rows / seconds["skade"]),
            "spark_connect_rows_per_s": round(args.rows / seconds["spark"]),
            "ratio_spark_connect_vs_skade": round(seconds["skade"] / seconds["spark"], 2),
            "skade_source_build_s": round(seconds["skade"], 2),
            "spark_connect_build_s": round(seconds["spark"], 2),
        }
        print(json.dumps(result, indent=2))
        out = REPO / "bench" / "results"
        out.mkdir(parents=True, exist_ok=True)
        (out / "bifrost-spark.json").write_text(json.dumps(result, indent=2) + "\n")
    finally:
        if spark:
            spark.stop()
        if served:
            served.stop()
        graph.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
