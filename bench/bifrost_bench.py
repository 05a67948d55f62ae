#!/usr/bin/env python3
"""Bifröst benchmark: initial build of a vertex table and an edge table into FalkorDB,
against (a) a naive loop of one MERGE per row through the `falkordb` Python client on a
sample, extrapolated, and (b) `falkordb-bulk-insert` loading the same rows from CSV into a
new graph, all in the same run against the same server. Also CDC round latency: a commit
of N changed rows until the graph shows them, p50/p99, with the tables read from the
warehouse folder and then through `skade serve` as an Iceberg REST catalog (the REST
source), the ratio of the two reported.

Reports rates and ratios (never asserted). Usage:
  bifrost_bench.py [--build-dir build] [--vertices 1000000] [--edges 2000000]
                   [--naive-sample 5000] [--cdc-rounds 20] [--cdc-rows 1000]
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "bifrost"))
sys.path.insert(0, str(REPO / "tests" / "interop"))
from graph_util import GraphServer  # noqa: E402
from skade_util import Served  # noqa: E402

SEED = 20261129


def vertex_table(n: int, rng) -> pa.Table:
    return pa.table({"id": pa.array(range(n), pa.int64()),
                     "name": pa.array([f"v{i}" for i in range(n)]),
                     "score": pa.array([rng.random() for _ in range(n)]),
                     "grp": pa.array([rng.randrange(100) for _ in range(n)], pa.int32())})


def edge_table(n: int, vertices: int, rng) -> pa.Table:
    return pa.table({"id": pa.array(range(n), pa.int64()),
                     "src": pa.array([rng.randrange(vertices) for _ in range(n)], pa.int64()),
                     "dst": pa.array([rng.randrange(vertices) for _ in range(n)], pa.int64()),
                     "w": pa.array([rng.random() for _ in range(n)])})


TABLE_V = {"table": "bench.v", "mode": "cdc", "pipeline": [
    {"vertex": {"label": "V", "id_column": "id", "properties": ["name", "score", "grp"]}}]}
TABLE_E = {"table": "bench.e", "mode": "full", "pipeline": [
    {"edge": {"type": "E", "src": {"column": "src", "label": "V"}, "dst": {"column": "dst", "label": "V"},
              "key_column": "id", "properties": ["w"]}}]}
MAPPING_V = {"graph": "bf_v", "tables": [TABLE_V]}
MAPPING_ALL = {"graph": "bf", "tables": [TABLE_V, TABLE_E]}


def vertex_warehouse(skade, wh: Path):
    """A new warehouse with the empty vertex table bench.v."""
    run([skade, "--warehouse", wh, "init"])
    run([skade, "--warehouse", wh, "create-namespace", "bench"])
    run([skade, "--warehouse", wh, "create", "bench.v", "--schema", "id:long!, name:string, score:double, grp:int",
         "--identifier", "id"])


def run(cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    return p.stdout


def timed(cmd) -> float:
    start = time.perf_counter()
    run(cmd)
    return time.perf_counter() - start


def naive_rates(url: str, vertices: pa.Table, edges: pa.Table, sample: int) -> tuple[float, float]:
    """One MERGE per row through the falkordb client (with the same index Bifröst uses)."""
    from falkordb import FalkorDB

    host, port = url.removeprefix("redis://").split(":")
    g = FalkorDB(host=host, port=int(port)).select_graph("naive")
    g.query("CREATE INDEX FOR (n:V) ON (n.id)")
    rows = vertices.slice(0, sample).to_pylist()
    start = time.perf_counter()
    for r in rows:
        g.query("MERGE (n:V {id: $id}) SET n.name = $name, n.score = $score, n.grp = $grp", r)
    v_rate = len(rows) / (time.perf_counter() - start)
    rows = edges.slice(0, sample).to_pylist()
    start = time.perf_counter()
    for r in rows:
        g.query("MERGE (a:V {id: $src}) MERGE (b:V {id: $dst}) MERGE (a)-[e:E {id: $id}]->(b) SET e.w = $w", r)
    e_rate = len(rows) / (time.perf_counter() - start)
    return v_rate, e_rate


def bulk_loader_seconds(url: str, vertices: pa.Table, edges: pa.Table, work: Path) -> float:
    """falkordb-bulk-insert from CSV into a new graph (CSV writing not timed)."""
    vcsv, ecsv = work / "V.csv", work / "E.csv"
    pa.csv.write_csv(vertices, vcsv)
    pa.csv.write_csv(edges.select(["src", "dst", "id", "w"]), ecsv)
    loader = Path(sys.executable).parent / "falkordb-bulk-insert"
    cmd = [str(c) for c in (loader, "bulk", "-u", url, "-n", vcsv, "-r", ecsv)]
    for attempt in (1, 2):
        start = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 0:
            return time.perf_counter() - start
        # seen once: the loader's client timed out writing a 64 MB token; the peer gets
        # a second chance on a clean key rather than failing the whole benchmark
        print(f"falkordb-bulk-insert attempt {attempt} failed: {p.stderr.strip()[-300:]}", file=sys.stderr)
        from falkordb import FalkorDB
        host, port = url.removeprefix("redis://").split(":")
        FalkorDB(host=host, port=int(port)).connection.delete("bulk")
    raise SystemExit("falkordb-bulk-insert failed twice")


def check_counts(bifrost, wh, mapping, url, vertices: int, edges: int):
    """The build really holds every vertex and edge."""
    out = run([bifrost, "--warehouse", wh, "query", "--mapping", mapping, "--graph", url,
               "MATCH (n:V) RETURN count(n) AS c"])
    assert json.loads(out)["c"] == vertices, out
    out = run([bifrost, "--warehouse", wh, "query", "--mapping", mapping, "--graph", url,
               "MATCH ()-[e:E]->() RETURN count(e) AS c"])
    assert json.loads(out)["c"] == edges, out


def cdc_latency(skade, bifrost, warehouse, mapping, url, rounds: int, rows: int, vertices: int, rng, work: Path):
    """Commit `rows` changed rows, time until `bifrost run` has applied them."""
    proc = subprocess.Popen([bifrost, "--warehouse", warehouse, "run", "--mapping", mapping, "--graph", url,
                             "--interval", "30s"], stdout=subprocess.PIPE, text=True)
    lines = iter(proc.stdout.readline, "")
    next(lines)  # the first round: nothing new
    latencies = []
    try:
        for i in range(rounds):
            ids = rng.sample(range(vertices), rows)
            changed = pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array([f"r{i}"] * rows),
                                "score": pa.array([rng.random() for _ in range(rows)]),
                                "grp": pa.array([i] * rows, pa.int32())})
            f = work / "changed.parquet"
            pq.write_table(changed, f)
            start = time.perf_counter()
            run([skade, "--warehouse", warehouse, "upsert", "bench.v", f])
            for line in lines:
                if " 1 synced" in line:
                    break
            latencies.append(time.perf_counter() - start)
    finally:
        proc.terminate()
        proc.wait(30)
    latencies.sort()
    return statistics.median(latencies), latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=2_000_000)
    ap.add_argument("--naive-sample", type=int, default=5000)
    ap.add_argument("--cdc-rounds", type=int, default=20)
    ap.add_argument("--cdc-rows", type=int, default=1000)
    args = ap.parse_args()
    build = (REPO / args.build_dir).resolve()
    skade, bifrost = build / "bin" / "skade", build / "bin" / "bifrost"
    rng = random.Random(SEED)
    work = Path(tempfile.mkdtemp(prefix="bfbench", dir="/tmp"))
    server = GraphServer(tcp=True)
    try:
        wh = work / "wh"
        vertex_warehouse(skade, wh)
        run([skade, "--warehouse", wh, "create", "bench.e", "--schema", "id:long!, src:long, dst:long, w:double"])
        vertices = vertex_table(args.vertices, rng)
        edges = edge_table(args.edges, args.vertices, rng)
        for name, t in (("bench.v", vertices), ("bench.e", edges)):
            f = work / f"{name}.parquet"
            pq.write_table(t, f)
            run([skade, "--warehouse", wh, "append", name, f])
        mv, mall = work / "v.yaml", work / "all.yaml"
        mv.write_text(json.dumps(MAPPING_V))
        mall.write_text(json.dumps(MAPPING_ALL))
        url = server.url
        # Initial builds into new graphs: the vertex table alone, then both tables; the
        # edges' share is the difference (the same vertex work is in both).
        t_v = timed([bifrost, "--warehouse", wh, "build", "--mapping", mv, "--graph", url])
        t_all = timed([bifrost, "--warehouse", wh, "build", "--mapping", mall, "--graph", url])
        t_e = t_all - t_v
        check_counts(bifrost, wh, mall, url, args.vertices, args.edges)
        bf_v, bf_e = args.vertices / t_v, args.edges / t_e
        naive_v, naive_e = naive_rates(url, vertices, edges, args.naive_sample)
        t_bulk = bulk_loader_seconds(url, vertices, edges, work)
        bulk_rate = (args.vertices + args.edges) / t_bulk
        bf_rate = (args.vertices + args.edges) / t_all
        p50, p99 = cdc_latency(skade, bifrost, wh, mall, url, args.cdc_rounds, args.cdc_rows, args.vertices, rng, work)
        # The same rounds with both tables read through the REST catalog: same graph,
        # same ledger, so it starts at the cursor the local rounds left.
        served = Served(wh, binary=skade)
        try:
            mrest = work / "rest.yaml"
            mrest.write_text(json.dumps({**MAPPING_ALL, "tables": [
                {**t, "source": f"rest:{served.url}"} for t in MAPPING_ALL["tables"]]}))
            rest_p50, rest_p99 = cdc_latency(skade, bifrost, wh, mrest, url, args.cdc_rounds, args.cdc_rows,
                                             args.vertices, rng, work)
        finally:
            served.stop()
        result = {
            "vertices": args.vertices, "edges": args.edges,
            "bifrost_vertices_per_s": round(bf_v), "bifrost_edges_per_s": round(bf_e),
            "naive_vertices_per_s": round(naive_v), "naive_edges_per_s": round(naive_e),
            "bulk_loader_rows_per_s": round(bulk_rate), "bifrost_rows_per_s": round(bf_rate),
            "ratio_vs_naive_vertices": round(bf_v / naive_v, 1), "ratio_vs_naive_edges": round(bf_e / naive_e, 1),
            "ratio_vs_bulk_loader": round(bf_rate / bulk_rate, 2),
            "cdc_rows_per_commit": args.cdc_rows, "cdc_latency_p50_s": round(p50, 3), "cdc_latency_p99_s": round(p99, 3),
            "cdc_rest_latency_p50_s": round(rest_p50, 3), "cdc_rest_latency_p99_s": round(rest_p99, 3),
            "ratio_cdc_rest_vs_local_p50": round(rest_p50 / p50, 2),
        }
        print(json.dumps(result, indent=2))
        out = REPO / "bench" / "results"
        out.mkdir(parents=True, exist_ok=True)
        (out / "bifrost.json").write_text(json.dumps(result, indent=2) + "\n")
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    import pyarrow.csv  # noqa: F401  (pa.csv)
    main()
