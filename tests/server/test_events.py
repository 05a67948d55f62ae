"""The live event stream: commits from three other processes (the skade CLI, PyIceberg
over SQL, PyIceberg over REST) arrive once each, in commit order; a reconnect with
Last-Event-ID resumes with nothing lost or repeated; filters by table and kind."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

import pyarrow as pa

SQL_WRITER = r"""
import sys, pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("skade", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
t = cat.load_table("ev.sql_t")
for i in range(int(sys.argv[2])):
    t.append(pa.table({"id": pa.array([i], pa.int64())}))
"""

REST_WRITER = r"""
import sys, pyarrow as pa
from pyiceberg.catalog import load_catalog
cat = load_catalog("rest", type="rest", uri=sys.argv[1], warehouse="file://" + sys.argv[3])
t = cat.load_table("ev.rest_t")
for i in range(int(sys.argv[2])):
    t.append(pa.table({"id": pa.array([i], pa.int64())}))
"""


class SseClient:
    """Reads an SSE stream on its own thread; `.events` is [(id, kind, data)]."""

    def __init__(self, url: str, path: str, last_event_id: str | None = None):
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{extra}\r\n".encode())
        self.events: list[tuple[int, str, dict]] = []
        self.headers = b""
        self.raw = b""  # the body as received (chunk framing included)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        buf = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
                if not self.headers and b"\r\n\r\n" in buf:
                    self.headers, buf = buf.split(b"\r\n\r\n", 1)
                    self.raw = buf
                elif self.headers:
                    self.raw += chunk
                while b"\n\n" in buf:
                    block, buf = buf.split(b"\n\n", 1)
                    fields = {}
                    for line in block.decode().splitlines():
                        # chunked framing puts size lines between blocks: keep only SSE fields
                        if ": " in line and line.split(": ", 1)[0] in ("id", "event", "data"):
                            k, v = line.split(": ", 1)
                            fields[k] = v
                    if "id" in fields:
                        self.events.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
        except OSError:
            return

    def wait_for(self, pred, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred(self.events):
                return True
            time.sleep(0.05)
        return False

    def close(self):
        self.sock.close()


def test_commits_of_every_engine_arrive_once_in_order(served, skade, warehouse, tmp_path):
    skade.ok("create-namespace", "ev")
    for t in ("cli_t", "sql_t", "rest_t"):
        skade.ok("create", f"ev.{t}", "--schema", "id:long")
    client = SseClient(served.url, "/api/skade/v1/events?kind=commit")
    time.sleep(0.5)
    src = tmp_path / "one.csv"
    src.write_text("id\n1\n")
    n = 5
    procs = [subprocess.Popen([sys.executable, "-c", SQL_WRITER, str(warehouse), str(n)]),
             subprocess.Popen([sys.executable, "-c", REST_WRITER, served.url, str(n), str(warehouse)])]
    for _ in range(n):
        skade.ok("append", "ev.cli_t", src)
    for p in procs:
        assert p.wait(timeout=120) == 0
    log = [json.loads(line) for line in skade.ok("log", "--format", "jsonl").splitlines()]
    wanted = [e["commit_seq"] for e in log if e["action"] == "commit" and e["table"].startswith("ev.")]
    assert len(wanted) == 3 * n
    assert client.wait_for(lambda ev: {e[0] for e in ev} >= set(wanted)), (wanted, client.events)
    ids = [e[0] for e in client.events]
    assert ids == sorted(ids) and len(ids) == len(set(ids))  # in order, once each
    engines = {e[2]["table"]: e[2]["engine"] for e in client.events}
    assert engines == {"ev.cli_t": "skade", "ev.sql_t": "external", "ev.rest_t": "pyiceberg"}
    client.close()

    # reconnect from the middle: exactly the rest, nothing repeated
    middle = wanted[len(wanted) // 2]
    again = SseClient(served.url, "/api/skade/v1/events?kind=commit", last_event_id=str(middle))
    rest = [s for s in wanted if s > middle]
    assert again.wait_for(lambda ev: {e[0] for e in ev} >= set(rest))
    time.sleep(0.5)
    assert [e[0] for e in again.events] == [s for s in sorted({e['commit_seq'] for e in log if not e['table'].startswith('_skade')}) if s > middle]
    again.close()


def test_filters_and_lineage_events(served, skade, tmp_path):
    skade.ok("create-namespace", "f")
    skade.ok("create", "f.a", "--schema", "id:long")
    skade.ok("create", "f.b", "--schema", "id:long")
    only_b = SseClient(served.url, "/api/skade/v1/events?table=f.b")
    time.sleep(0.3)
    src = tmp_path / "one.csv"
    src.write_text("id\n1\n")
    skade.ok("append", "f.a", src, "--actor", "loader")
    skade.ok("append", "f.b", src, "--actor", "loader", "--input", "f.a")
    assert only_b.wait_for(lambda ev: len(ev) >= 2)
    time.sleep(0.3)
    kinds = [(e[1], e[2].get("table") or e[2]["outputs"][0]["key"]) for e in only_b.events]
    # Only what came after the client: under load the stream once began with f.b's create,
    # made just before it connected (the stream started from the feed's count, which lagged).
    assert kinds == [("commit", "f.b"), ("lineage", "f.b")], (only_b.events, skade.ok("log", "--format", "jsonl"))
    commit, lineage = only_b.events[0][2], only_b.events[1][2]
    assert commit["actor"] == "loader" and isinstance(commit["snapshot_id"], str)
    assert lineage["actor"] == "loader" and lineage["run_state"] == "COMPLETE"
    assert lineage["inputs"] == [{"key": "f.a", "system": "skade", "name": "f.a", "namespace": "f",
                                  "snapshot_id": lineage["inputs"][0]["snapshot_id"]}]
    out = lineage["outputs"][0]
    assert out["snapshot_id"] == commit["snapshot_id"] and out["row_count"] == 1
    assert out["columns"] == [{"name": "id", "type": "long"}] and lineage["column_lineage"] == []
    assert lineage["ts_ms"] > 0 and lineage["commit_seq"] == only_b.events[0][0]
    assert only_b.events[0][0] == only_b.events[1][0]  # one commit_seq for both
    assert only_b.raw.startswith(b"retry: 2000\n\n") or b"\r\nretry: 2000\n\n" in only_b.raw[:64]
    only_b.close()


def test_kind_list_and_ingested_lineage(served, skade, tmp_path):
    """`kind=commit,lineage` sends both; OpenLineage events POSTed to the receiver arrive
    as lineage events carrying the commit_seq of the append that stored them."""
    import urllib.request
    skade.ok("create-namespace", "k")
    skade.ok("create", "k.a", "--schema", "id:long")
    client = SseClient(served.url, "/api/skade/v1/events?kind=commit,lineage&table=kafka:clicks")
    time.sleep(0.3)
    event = {"eventType": "COMPLETE", "eventTime": "2026-12-01T10:00:00Z", "producer": "test",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": "0190aaaa-0000-7000-8000-000000000001"},
             "job": {"namespace": "flink", "name": "clicks_job"},
             "inputs": [{"namespace": "kafka://broker:9092", "name": "clicks"}],
             "outputs": [{"namespace": "s3://bucket", "name": "clicks_raw"}]}
    req = urllib.request.Request(served.url + "/api/v1/lineage", data=json.dumps(event).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    assert urllib.request.urlopen(req, timeout=30).status == 201
    assert client.wait_for(lambda ev: any(e[1] == "lineage" for e in ev), timeout=30), client.events
    seq, kind, data = next(e for e in client.events if e[1] == "lineage")
    log = skade.log()
    append = [e for e in log if e["table"] == "_skade.lineage_events" and e["commit_seq"] == seq]
    assert append, (seq, log)
    assert data["commit_seq"] == seq and data["run_state"] == "COMPLETE" and data["job"]["name"] == "clicks_job"
    assert data["inputs"][0]["key"] == "kafka:clicks" and data["inputs"][0]["namespace"] == "kafka://broker:9092"
    assert data["outputs"][0]["key"] == "s3:clicks_raw"
    client.close()


def test_bad_resume_ids_and_kinds(served):
    import urllib.error
    import urllib.request
    for q, h in (("", {"Last-Event-ID": "abc"}), ("?kind=nope", {}), ("?kind=commit,nope", {}), ("?kind=", {}),
                 ("?table=nodot", {})):
        req = urllib.request.Request(served.url + "/api/skade/v1/events" + q, headers=h)
        try:
            urllib.request.urlopen(req, timeout=10)
            raise AssertionError("accepted")
        except urllib.error.HTTPError as e:
            assert e.code == 400 and json.loads(e.read())["error"]["type"] == "BadRequestException"
