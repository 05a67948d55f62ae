#!/usr/bin/env python3
"""skade serve benchmarks, each against a peer in the same run, figures as ratios:

1. REST loadTable and single-row append commit (PyIceberg's RestCatalog) latency p50/p99:
   skade serve vs Iceberg's reference RESTCatalogServer (JDBC catalog on SQLite, from the
   compatibility kit's jars), both on this machine, same client, same table shape. Also
   PyIceberg's own time per op outside its HTTP calls, and from it the ratio ceiling: the
   best p50 ratio a server answering in no time at all could reach with this client.
2. OpenLineage ingest over HTTP (one event per request, and batches of 100) vs the same events
   through `skade lineage ingest`.
3. Commit -> SSE client latency p50/p99 with 100 idle SSE clients attached.

Writes bench/results/server.json. Usage: bench/server_bench.py --build-dir build
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()))


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_config(url: str, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url + "/v1/config", timeout=2).read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer /v1/config")


def start_skade(skade: str, wh: Path) -> tuple[subprocess.Popen, str]:
    subprocess.run([skade, "--warehouse", str(wh), "init"], check=True, capture_output=True)
    proc = subprocess.Popen([skade, "--warehouse", str(wh), "serve", "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"http://([^/]+)/", proc.stdout.readline())
    url = f"http://{m.group(1)}"
    wait_config(url)
    return proc, url


def start_reference(wh: Path, db: Path | None = None) -> tuple[subprocess.Popen, str]:
    """Iceberg's reference server on warehouse `wh`, its JDBC catalog in `db` (default wh/ref.db)."""
    port = free_port()
    proc = subprocess.Popen([str(ROOT / "tests/rck/run_reference_server.sh"), str(port), str(wh), str(db or wh / "ref.db")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_config(url)
    return proc, url


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def rest_latencies(url: str, wh: Path, loads: int, commits: int) -> dict:
    cat = load_catalog("bench", type="rest", uri=url, warehouse=f"file://{wh}")
    cat.create_namespace("bench")
    table = cat.create_table("bench.t", schema=SCHEMA)
    row = pa.table({"id": pa.array([1], pa.int64()), "name": ["x"]}, schema=SCHEMA.as_arrow())
    for _ in range(5):  # warm both sides (JIT, caches) before timing
        table.append(row)
        cat.load_table("bench.t")
    # Time inside the HTTP calls (requests' send: the request, the server, the answer
    # read), so the rest of each op is PyIceberg's own work: the floor no server can cut.
    session, in_http = cat._session, [0.0]
    send = session.send

    def timed_send(request, **kwargs):
        t0 = time.perf_counter()
        try:
            return send(request, **kwargs)
        finally:
            in_http[0] += time.perf_counter() - t0

    session.send = timed_send

    def timed(op) -> tuple[float, float]:
        in_http[0] = 0.0
        t0 = time.perf_counter()
        op()
        total = time.perf_counter() - t0
        return total * 1000, (total - in_http[0]) * 1000

    load, commit = [timed(lambda: cat.load_table("bench.t")) for _ in range(loads)], []
    for _ in range(commits):
        commit.append(timed(lambda: table.append(row)))
    session.send = send
    load_ms, commit_ms = [t for t, _ in load], [t for t, _ in commit]
    # The same loadTable as a bare HTTP request on one kept-alive connection: the server's
    # share of the time, without PyIceberg building its table object.
    import http.client
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port))
    raw_ms = []
    for _ in range(loads):
        t0 = time.perf_counter()
        conn.request("GET", "/v1/namespaces/bench/tables/t")
        conn.getresponse().read()
        raw_ms.append((time.perf_counter() - t0) * 1000)
    # A metadata-only commit (a property) as a bare request: the server's share of a
    # commit, without the data and manifest files PyIceberg writes before it commits.
    uuid_ = cat.load_table("bench.t").metadata.table_uuid
    raw_commit_ms = []
    for i in range(commits):
        body = json.dumps({"requirements": [{"type": "assert-table-uuid", "uuid": str(uuid_)}],
                           "updates": [{"action": "set-properties", "updates": {"bench.k": str(i)}}]})
        t0 = time.perf_counter()
        conn.request("POST", "/v1/namespaces/bench/tables/t", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        resp.read()
        raw_commit_ms.append((time.perf_counter() - t0) * 1000)
        assert resp.status == 200, resp.status
    conn.close()
    return {"load_p50_ms": pct(load_ms, 50), "load_p99_ms": pct(load_ms, 99),
            "raw_http_load_p50_ms": pct(raw_ms, 50), "raw_http_load_p99_ms": pct(raw_ms, 99),
            "raw_http_commit_p50_ms": pct(raw_commit_ms, 50), "raw_http_commit_p99_ms": pct(raw_commit_ms, 99),
            "commit_p50_ms": pct(commit_ms, 50), "commit_p99_ms": pct(commit_ms, 99),
            "client_outside_http_load_p50_ms": pct([c for _, c in load], 50),
            "client_outside_http_commit_p50_ms": pct([c for _, c in commit], 50)}


def ol_events(n: int) -> list[dict]:
    return [{"eventType": "COMPLETE", "eventTime": f"2026-11-30T10:{i // 60 % 60:02d}:{i % 60:02d}Z",
             "producer": "https://example.invalid/bench", "schemaURL":
             "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "spark", "name": f"job_{i % 50}"},
             "inputs": [{"namespace": "kafka://b:9092", "name": f"topic_{i % 20}"}],
             "outputs": [{"namespace": "postgres://db:5432", "name": f"out_{i % 30}"}]} for i in range(n)]


def post(url: str, body: bytes) -> None:
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()


def ingest_rates(skade: str, base: Path, n: int) -> dict:
    events = ol_events(n)
    out = {}
    wh = base / "ol-http"
    proc, url = start_skade(skade, wh)
    try:
        t0 = time.perf_counter()
        for e in events[: n // 4]:
            post(url + "/api/v1/lineage", json.dumps(e).encode())
        out["http_single_events_per_s"] = (n // 4) / (time.perf_counter() - t0)
        batches = [events[i:i + 100] for i in range(n // 4, n, 100)]
        t0 = time.perf_counter()
        for b in batches:
            post(url + "/api/v1/lineage/batch", json.dumps(b).encode())
        out["http_batch100_events_per_s"] = sum(len(b) for b in batches) / (time.perf_counter() - t0)
    finally:
        stop(proc)
    wh = base / "ol-cli"
    subprocess.run([skade, "--warehouse", str(wh), "init"], check=True, capture_output=True)
    f = base / "events.jsonl"
    f.write_text("".join(json.dumps(e) + "\n" for e in events))
    t0 = time.perf_counter()
    subprocess.run([skade, "--warehouse", str(wh), "lineage", "ingest", str(f)], check=True, capture_output=True)
    out["cli_ingest_events_per_s"] = n / (time.perf_counter() - t0)
    out["http_single_vs_cli"] = out["http_single_events_per_s"] / out["cli_ingest_events_per_s"]
    out["http_batch_vs_cli"] = out["http_batch100_events_per_s"] / out["cli_ingest_events_per_s"]
    return out


def sse_latency(skade: str, base: Path, idle: int, commits: int) -> dict:
    wh = base / "sse"
    proc, url = start_skade(skade, wh)
    host, port = url.removeprefix("http://").split(":")
    socks = []
    try:
        for _ in range(idle):
            s = socket.create_connection((host, int(port)))
            s.sendall(b"GET /api/skade/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append(s)
        cat = load_catalog("bench", type="rest", uri=url, warehouse=f"file://{wh}")
        cat.create_namespace("bench")
        table = cat.create_table("bench.t", schema=SCHEMA)
        row = pa.table({"id": pa.array([1], pa.int64()), "name": ["x"]}, schema=SCHEMA.as_arrow())
        seen: dict[str, float] = {}
        listener = socket.create_connection((host, int(port)))
        listener.sendall(b"GET /api/skade/v1/events?kind=commit HTTP/1.1\r\nHost: x\r\n\r\n")

        def read():
            buf = b""
            while True:
                chunk = listener.recv(65536)
                if not chunk:
                    return
                now = time.perf_counter()
                buf += chunk
                for m in re.finditer(rb'"snapshot_id":"(\d+)"', buf):
                    seen.setdefault(m.group(1).decode(), now)
                buf = buf[-4096:]

        threading.Thread(target=read, daemon=True).start()
        time.sleep(0.5)
        lat = []
        for _ in range(commits):
            table.append(row)
            done = time.perf_counter()  # the commit is durable when its answer arrives
            sid = str(table.current_snapshot().snapshot_id)
            deadline = time.time() + 10
            while sid not in seen and time.time() < deadline:
                time.sleep(0.0002)
            if sid in seen:
                lat.append(max(0.0, seen[sid] - done) * 1000)
        return {"idle_clients": idle, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "samples": len(lat)}
    finally:
        for s in socks:
            s.close()
        stop(proc)


def rest_comparison(skade: str, base: Path, a, result: dict) -> None:
    proc, url = start_skade(skade, base / "skade-wh")
    try:
        result["rest_skade"] = rest_latencies(url, base / "skade-wh", a.loads, a.commits)
    finally:
        stop(proc)
    proc, url = start_reference(base / "ref-wh")
    try:
        result["rest_reference"] = rest_latencies(url, base / "ref-wh", a.loads, a.commits)
    finally:
        stop(proc)
    s, r = result["rest_skade"], result["rest_reference"]
    result["rest_ratio_p50"] = {"load": r["load_p50_ms"] / s["load_p50_ms"],
                                "raw_http_load": r["raw_http_load_p50_ms"] / s["raw_http_load_p50_ms"],
                                "commit": r["commit_p50_ms"] / s["commit_p50_ms"],
                                "raw_http_commit": r["raw_http_commit_p50_ms"] / s["raw_http_commit_p50_ms"]}
    # The best p50 ratio any server could reach with this client: the reference's
    # whole op over PyIceberg's own work outside the HTTP call (measured against skade).
    result["rest_ratio_p50_ceiling"] = {
        op: r[f"{op}_p50_ms"] / s[f"client_outside_http_{op}_p50_ms"] for op in ("load", "commit")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--loads", type=int, default=300)
    ap.add_argument("--commits", type=int, default=100)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--parts", default="rest,ingest,sse", help="which benchmarks, comma-separated")
    ap.add_argument("--out", default=str(ROOT / "bench/results/server.json"))
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    skade = str(Path(a.build_dir).resolve() / "bin/skade")
    result: dict = {"machine": f"{os.cpu_count()} cores", "loadavg_1_5_15_at_start": list(os.getloadavg())}
    with tempfile.TemporaryDirectory(prefix="skade-server-bench.") as tmp:
        base = Path(tmp)
        if "rest" in parts:
            rest_comparison(skade, base, a, result)
        if "ingest" in parts:
            result["openlineage_ingest"] = ingest_rates(skade, base, a.events)
        if "sse" in parts:
            result["commit_to_sse"] = sse_latency(skade, base, 100, a.commits)
    result["loadavg_1_5_15_at_end"] = list(os.getloadavg())
    out = Path(a.out)
    if parts != {"rest", "ingest", "sse"} and out.exists():  # a partial run keeps the other figures
        result = {**json.loads(out.read_text()), **result}
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
