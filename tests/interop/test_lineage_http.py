"""The OpenLineage HTTP sink against a real local HTTP receiver (Python's http.server):
path, body and bearer token; retries after failures and while the receiver is down; resuming
after a restart without loss or duplicates; a write never fails because of the sink."""
from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyarrow as pa
import pytest

from skade_util import write_parquet


class Receiver:
    """Records every POST; answers `fail_next` requests with 503, the rest with 201 (as Marquez)."""

    def __init__(self, port: int = 0):
        self.requests: list[dict] = []
        self.fail_next = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                          "type": self.headers.get("Content-Type"), "body": json.loads(body)})
                failing = receiver.fail_next > 0
                receiver.fail_next -= failing
                self.send_response(503 if failing else 201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _setup(skade, url, token=None):
    skade.ok("config", "set", "lineage.openlineage.url", url)
    if token:
        skade.ok("config", "set", "lineage.openlineage.token", token)
    skade.ok("config", "set", "lineage.batch_size", "1")
    skade.ok("create-namespace", "db")


def _append(skade, tmp_path, k, *extra):
    f = write_parquet(pa.table({"id": pa.array([k], pa.int64())}), tmp_path / f"{k}.parquet")
    return skade("append", "db.t", f, *extra)


def _event_ids(requests) -> list[str]:
    return [r["body"]["run"]["facets"]["skade"]["eventId"] for r in requests]


def test_posts_run_events_with_path_body_and_token(skade, receiver, tmp_path):
    _setup(skade, f"http://127.0.0.1:{receiver.port}/", token="s3cret")
    skade.ok("create", "db.t", "--schema", "id:long!")
    rc, out, err = _append(skade, tmp_path, 1, "--actor", "etl", "--input", "spark:landing.t")
    assert rc == 0 and err == "", err
    events = [json.loads(line) for line in skade.ok("lineage", "events", "--format", "jsonl").splitlines()]
    assert [r["path"] for r in receiver.requests] == ["/api/v1/lineage"] * 2
    assert {r["auth"] for r in receiver.requests} == {"Bearer s3cret"}
    assert {r["type"] for r in receiver.requests} == {"application/json"}
    assert _event_ids(receiver.requests) == [e["event_id"] for e in events]
    append = receiver.requests[1]["body"]
    assert append["eventType"] == "COMPLETE" and append["job"]["name"] == "etl"
    assert append["inputs"] == [{"namespace": "spark", "name": "landing.t", "facets": {}}]
    assert append["outputs"][0]["facets"]["symlinks"]["identifiers"][0]["name"] == "db.t"
    # nothing is sent twice by later processes
    skade.ok("lineage", "flush")
    skade.ok("tables")
    assert len(receiver.requests) == 2


def test_retries_with_backoff_then_delivers_once(skade, receiver, tmp_path):
    _setup(skade, f"http://127.0.0.1:{receiver.port}")
    receiver.fail_next = 3
    skade.ok("create", "db.t", "--schema", "id:long!")
    assert len(receiver.requests) == 4, "three 503s, then accepted"
    assert len(set(json.dumps(r["body"], sort_keys=True) for r in receiver.requests)) == 1


def test_receiver_down_then_back_resumes_without_loss_or_duplicates(skade, tmp_path):
    port = _free_port()
    _setup(skade, f"http://127.0.0.1:{port}")
    rc, _, err = skade("create", "db.t", "--schema", "id:long!")
    assert rc == 0, "a sink failure never fails the write"
    assert "lineage sink openlineage-http" in err and "cannot connect" in err
    rc, _, _ = _append(skade, tmp_path, 1)
    assert rc == 0
    rc, out, _ = skade("scan", "db.t", "--format", "jsonl")
    assert rc == 0 and json.loads(out) == {"id": 1}
    receiver = Receiver(port)
    try:
        skade.ok("lineage", "flush")
        ours = [json.loads(line)["event_id"] for line in skade.ok("lineage", "events", "--format", "jsonl").splitlines()]
        assert _event_ids(receiver.requests) == ours, "both waiting events, in order, once"
        _append(skade, tmp_path, 2)
        receiver.stop()
        receiver = Receiver(port)  # the receiver restarts: only the new event arrives there
        skade.ok("lineage", "flush")
        _append(skade, tmp_path, 3)
        assert len(receiver.requests) == 1
        ours = [json.loads(line)["event_id"] for line in skade.ok("lineage", "events", "--format", "jsonl").splitlines()]
        assert _event_ids(receiver.requests) == ours[-1:]
    finally:
        receiver.stop()
