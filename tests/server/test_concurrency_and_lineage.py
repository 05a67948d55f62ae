"""Concurrent REST writers lose nothing; OpenLineage over HTTP lands in skade's
lineage; /metrics is valid Prometheus text; SIGTERM drains and stops."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

WRITER = r"""
import sys, pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import CommitFailedException
cat = load_catalog("rest", type="rest", uri=sys.argv[1], warehouse="file://" + sys.argv[2])
worker, n = int(sys.argv[3]), int(sys.argv[4])
done = conflicts = 0
for i in range(n):
    while True:
        t = cat.load_table("c.t")
        try:
            t.append(pa.table({"w": pa.array([worker], pa.int32()), "i": pa.array([i], pa.int32())}))
            done += 1
            break
        except CommitFailedException:
            conflicts += 1
print(done, conflicts)
"""


def test_eight_rest_writers_lose_nothing(served, skade, warehouse):
    skade.ok("create-namespace", "c")
    skade.ok("create", "c.t", "--schema", "w:int, i:int")
    workers, n = 8, 50
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, served.url, str(warehouse), str(w), str(n)],
                              stdout=subprocess.PIPE, text=True) for w in range(workers)]
    outs = [p.communicate(timeout=900)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert sum(int(o.split()[0]) for o in outs) == workers * n
    snaps = skade.ok("snapshots", "c.t", "--format", "csv").strip().splitlines()[1:]
    assert len(snaps) == workers * n
    got = sorted(tuple(json.loads(line).values()) for line in skade.ok("scan", "c.t", "--format", "jsonl").splitlines())
    assert got == sorted((w, i) for w in range(workers) for i in range(n))


def test_openlineage_python_posts_to_the_server(served, skade, warehouse, tmp_path):
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
    from openlineage.client.transport.http import HttpConfig, HttpTransport
    from openlineage.client.facet_v2 import symlinks_dataset

    skade.ok("create-namespace", "raw")
    skade.ok("create", "raw.orders", "--schema", "id:long")
    client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=served.url, endpoint="api/v1/lineage")))
    location = str(warehouse / "raw.db" / "orders")
    run = Run(runId=str(uuid.uuid4()))
    job = Job(namespace="spark", name="daily_report")
    event = RunEvent(eventType=RunState.COMPLETE, eventTime="2026-11-30T10:00:00Z", run=run, job=job,
                     producer="https://example.invalid/test",
                     inputs=[InputDataset(namespace="file", name=location)],
                     outputs=[OutputDataset(namespace="postgres://db:5432", name="reports.daily")])
    client.emit(event)
    client.emit(event)  # the same event again is stored once
    rows = [json.loads(r) for r in skade.ok("lineage", "events", "--format", "jsonl").splitlines()]
    ingested = [r for r in rows if r.get("job", {}).get("name") == "daily_report"]
    assert len(ingested) == 1
    assert ingested[0]["inputs"][0]["table"] == "raw.orders"  # tied to the skade table by location
    down = skade.ok("lineage", "downstream", "raw.orders", "--format", "csv")
    assert "postgres:reports.daily" in down
    # and in the Marquez-shaped read
    import urllib.request
    with urllib.request.urlopen(f"{served.url}/api/v1/lineage?nodeId=dataset:skade:raw.orders&depth=2") as r:
        graph = json.load(r)["graph"]
    ids = {n["id"] for n in graph}
    assert "dataset:skade:raw.orders" in ids and "dataset:postgres:reports.daily" in ids
    assert any(n["type"] == "JOB" and n["data"]["name"] == "daily_report" for n in graph)


def test_metrics_pass_promtool(served, rest):
    import urllib.request
    rest().list_namespaces()
    with urllib.request.urlopen(f"{served.url}/metrics") as r:
        text = r.read().decode()
    assert 'skade_http_requests_total{method="GET",route="/v1/namespaces",status="200"}' in text
    promtool = shutil.which("promtool")
    assert promtool, "promtool is installed by the set-up (Debian's prometheus package)"
    p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    with urllib.request.urlopen(f"{served.url}/healthz") as r:
        assert r.read() == b"ok\n"


def test_sigterm_stops_cleanly(warehouse):
    from conftest import Served
    s = Served(warehouse)
    assert s.stop() == 0
    assert "stopped" in s.proc.stdout.read()


def test_gzip_bodies_and_batches(served, skade):
    import gzip
    import urllib.request
    event = {"eventType": "COMPLETE", "eventTime": "2026-11-30T11:00:00Z", "producer": "https://example.invalid/t",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "airflow", "name": "zipped"},
             "inputs": [{"namespace": "kafka://b:9092", "name": "in"}],
             "outputs": [{"namespace": "kafka://b:9092", "name": "out"}]}
    req = urllib.request.Request(f"{served.url}/api/v1/lineage", data=gzip.compress(json.dumps(event).encode()),
                                 method="POST", headers={"Content-Type": "application/json",
                                                         "Content-Encoding": "gzip"})
    assert urllib.request.urlopen(req).status == 201
    batch = [dict(event, run={"runId": str(uuid.uuid4())}, job={"namespace": "airflow", "name": f"b{i}"})
             for i in range(3)]
    req = urllib.request.Request(f"{served.url}/api/v1/lineage/batch", data=json.dumps(batch).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        assert r.status == 201 and json.load(r)["accepted"] == 3
    jobs = {json.loads(r)["job"]["name"] for r in skade.ok("lineage", "events", "--format", "jsonl").splitlines()
            if json.loads(r).get("job")}
    assert {"zipped", "b0", "b1", "b2"} <= jobs
