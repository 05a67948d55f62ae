#!/usr/bin/env python3
"""Bifröst custom-step overhead: the same rows become the same vertices through (a) the
built-in vertex step, (b) a `custom` step served by an Arrow Flight service
(pyarrow.flight, answering with the rows it is sent) and (c) a `custom` step run by a WASM
guest (answering with its input batch), each a `bifrost build` into a new graph on the same
server in the same run, interleaved. The vertices are keyed on a column with 100 values, so
the rows collapse to 100 vertices before the sink and a build's time is reading,
transforming and collapsing the rows: an arm's time minus the built-in arm's is what the
step costs. Reported as rows/s end to end, and as seconds per million rows and rows/s of the
step alone (never asserted). Usage:
  bifrost_transform_bench.py [--build-dir build] [--rows 1000000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
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
sys.path.insert(0, str(REPO / "bench"))
from bifrost_bench import run  # noqa: E402
from graph_util import GraphServer, free_port  # noqa: E402

GROUPS = 100


def mapping(graph: str, step: dict | None) -> dict:
    vertex = {"vertex": {"label": "Group", "id_column": "grp", "properties": ["name"]}}
    if step:
        pipeline = [{"custom": {"name": "copy", **step, "columns": ["grp", "name"], "schema": "grp:long, name:string",
                                "output": [vertex]}}]
    else:
        pipeline = [vertex]
    return {"graph": graph, "tables": [{"table": "bench.rows", "pipeline": pipeline}]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    build = (REPO / args.build_dir).resolve()
    skade, bifrost = build / "bin" / "skade", build / "bin" / "bifrost"
    work = Path(tempfile.mkdtemp(prefix="bftbench", dir="/tmp"))
    server = GraphServer(tcp=True)
    port = free_port()
    service = subprocess.Popen([sys.executable, str(REPO / "tests" / "bifrost" / "flight_service.py"),
                                "--port", str(port), "--transform", "identity", "--ready-file", str(work / "ready")])
    try:
        guest = work / "identity.wasm"
        run(["clang", "--target=wasm32", "-O2", "-nostdlib", "-Wl,--no-entry", "-I", REPO / "examples" / "wasm",
             "-o", guest, REPO / "bench" / "guests" / "identity.c"])
        wh = work / "wh"
        run([skade, "--warehouse", wh, "init"])
        run([skade, "--warehouse", wh, "create-namespace", "bench"])
        run([skade, "--warehouse", wh, "create", "bench.rows", "--schema", "id:long!, grp:long, name:string",
             "--identifier", "id"])
        rows = pa.table({"id": pa.array(range(args.rows), pa.int64()),
                         "grp": pa.array([i % GROUPS for i in range(args.rows)], pa.int64()),
                         "name": pa.array([f"row {i}" for i in range(args.rows)])})
        f = work / "rows.parquet"
        pq.write_table(rows, f)
        run([skade, "--warehouse", wh, "append", "bench.rows", f])
        deadline = time.time() + 30
        while not (work / "ready").exists():
            if time.time() > deadline or service.poll() is not None:
                raise SystemExit("the Flight service did not start")
            time.sleep(0.05)
        arms = {
            "builtin": None,
            "flight": {"flight": {"endpoint": f"grpc://127.0.0.1:{port}"}},
            "wasm": {"wasm": {"module": str(guest)}},
        }
        seconds = {name: [] for name in arms}
        for i in range(args.repeat):
            for name, step in arms.items():  # interleaved, so drift hits every arm alike
                m = work / f"{name}.yaml"
                m.write_text(json.dumps(mapping(f"bt_{name}_{i}", step)))
                start = time.perf_counter()
                run([bifrost, "--warehouse", wh, "build", "--mapping", m, "--graph", server.url])
                seconds[name].append(time.perf_counter() - start)
                out = run([bifrost, "--warehouse", wh, "query", "--mapping", m, "--graph", server.url,
                           "MATCH (n:Group) RETURN count(n) AS c"])
                assert json.loads(out.splitlines()[0])["c"] == GROUPS, out
        best = {name: statistics.median(s) for name, s in seconds.items()}
        result = {"rows": args.rows, "repeat": args.repeat}
        for name, t in best.items():
            result[f"{name}_rows_per_s"] = round(args.rows / t)
        for name in ("flight", "wasm"):
            extra = best[name] - best["builtin"]
            result[f"{name}_step_seconds_per_million_rows"] = round(extra * 1e6 / args.rows, 3)
            result[f"{name}_step_rows_per_s"] = round(args.rows / extra) if extra > 0 else None
            result[f"{name}_vs_builtin"] = round(best["builtin"] / best[name], 2)
        print(json.dumps(result, indent=2))
        out = REPO / "bench" / "results"
        out.mkdir(parents=True, exist_ok=True)
        (out / "bifrost_transforms.json").write_text(json.dumps(result, indent=2) + "\n")
    finally:
        service.kill()
        service.wait(10)
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
