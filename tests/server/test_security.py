"""The server's security rules, each tried: tokens, loopback, traversal in names,
locations and register paths, body size and nesting limits, CORS, no leaked paths."""
from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import SKADE_BIN, Served

TOKEN = "s3cret-token-for-the-tests-0123456789"


def call(url: str, method: str = "GET", body=None, headers: dict | None = None, raw: bytes | None = None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json",
                                                                          **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read()
            return r.status, dict(r.headers), json.loads(text) if text and r.headers.get_content_type() == "application/json" else text
    except urllib.error.HTTPError as e:
        text = e.read()
        return e.code, dict(e.headers), json.loads(text) if text else None


def error(resp, code: int, type_: str):
    status, _, body = resp
    assert status == code, resp
    assert body["error"]["type"] == type_ and body["error"]["code"] == code, body
    return body["error"]["message"]


@pytest.fixture
def tokened(warehouse, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"# clients\nspark-job {TOKEN}\n")
    s = Served(warehouse, "--token-file", str(tokens))
    yield s
    assert s.stop() == 0


def test_writes_need_a_token_and_reads_stay_open_on_loopback(tokened, skade):
    u = tokened.url
    error(call(f"{u}/v1/namespaces", "POST", {"namespace": ["x"]}), 401, "NotAuthorizedException")
    error(call(f"{u}/v1/namespaces", "POST", {"namespace": ["x"]}, {"Authorization": "Bearer wrong-token-wrong-token"}),
          403, "ForbiddenException")
    assert call(f"{u}/v1/namespaces", "POST", {"namespace": ["x"]}, {"Authorization": f"Bearer {TOKEN}"})[0] == 200
    assert call(f"{u}/v1/namespaces")[0] == 200
    error(call(f"{u}/api/v1/lineage", "POST", {"eventTime": "2026-01-01T00:00:00Z"}), 401, "NotAuthorizedException")
    # the caller is the token's name
    call(f"{u}/v1/namespaces/x/tables", "POST", {"name": "t", "schema": {"type": "struct", "fields": [
        {"id": 1, "name": "a", "required": False, "type": "int"}]}}, {"Authorization": f"Bearer {TOKEN}"})
    events = skade.ok("lineage", "events", "--format", "jsonl").splitlines()
    assert json.loads(events[-1])["actor"] == "spark-job"


def test_token_file_problems_stop_the_start(warehouse, tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("onlyname\n")
    short = tmp_path / "short"
    short.write_text("a tooshort\n")
    for f, words in ((bad, "NAME TOKEN"), (short, "shorter than 16"), (tmp_path / "missing", "cannot be read")):
        p = subprocess.run([SKADE_BIN, "--warehouse", str(warehouse), "serve", "--listen", "127.0.0.1:0",
                            "--token-file", str(f)], capture_output=True, text=True, timeout=30)
        assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_non_loopback_needs_a_token_file(warehouse):
    p = subprocess.run([SKADE_BIN, "--warehouse", str(warehouse), "serve", "--listen", "0.0.0.0:0"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "without --token-file" in p.stderr
    p = subprocess.run([SKADE_BIN, "--warehouse", str(warehouse), "serve", "--listen", "nonsense"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "HOST:PORT" in p.stderr


SCHEMA = {"type": "struct", "fields": [{"id": 1, "name": "a", "required": False, "type": "int"}]}


@pytest.mark.parametrize("name", ["..", "a/b", "../esc", "a\\b", "x\u0001y", "x" * 201])
def test_hostile_table_names(served, warehouse, name):
    u = served.url
    call(f"{u}/v1/namespaces", "POST", {"namespace": ["db"]})
    status, _, body = call(f"{u}/v1/namespaces/db/tables", "POST", {"name": name, "schema": SCHEMA})
    assert status == 400 and body["error"]["type"] == "BadRequestException", body
    assert not (warehouse.parent / "esc").exists()


@pytest.mark.parametrize("ns", [["a/../.."], [".."], ["a.b"], [""], ["catalog"]])
def test_hostile_namespaces(served, ns):
    error(call(f"{served.url}/v1/namespaces", "POST", {"namespace": ns}), 400, "BadRequestException")


@pytest.mark.parametrize("location", ["file:///tmp/escape", "/etc", "s3://bucket/x", "WH/../outside", "WH/ok/../../x"])
def test_locations_outside_the_warehouse(served, warehouse, location):
    u = served.url
    call(f"{u}/v1/namespaces", "POST", {"namespace": ["db"]})
    loc = location.replace("WH", str(warehouse))
    msg = error(call(f"{u}/v1/namespaces/db/tables", "POST", {"name": "t", "schema": SCHEMA, "location": loc}), 400,
                "BadRequestException")
    assert str(warehouse) not in msg  # no server paths in error bodies
    # nor through a commit's set-location
    call(f"{u}/v1/namespaces/db/tables", "POST", {"name": "ok", "schema": SCHEMA})
    status, _, _ = call(f"{u}/v1/namespaces/db/tables/ok", "POST",
                        {"requirements": [], "updates": [{"action": "set-location", "location": loc}]})
    assert status == 400


def test_register_paths_outside_the_warehouse(served, warehouse, tmp_path):
    u = served.url
    call(f"{u}/v1/namespaces", "POST", {"namespace": ["db"]})
    outside = tmp_path / "evil.metadata.json"
    outside.write_text("{}")
    for meta in (str(outside), f"file://{outside}", f"{warehouse}/../evil.metadata.json", "/etc/passwd"):
        error(call(f"{u}/v1/namespaces/db/register", "POST", {"name": "r", "metadata-location": meta}), 400,
              "BadRequestException")


def test_body_limits(served):
    u = served.url
    big = b'{"namespace":["x"],"properties":{"k":"' + b"x" * (65 << 20) + b'"}}'
    status, _, body = call(f"{u}/v1/namespaces", "POST", raw=big)
    assert status == 413 and body["error"]["code"] == 413
    deep = b'{"namespace":["x"],"properties":' + b"[" * 5000 + b"]" * 5000 + b"}"
    msg = error(call(f"{u}/v1/namespaces", "POST", raw=deep), 400, "BadRequestException")
    assert "deeper than 128" in msg
    error(call(f"{u}/v1/namespaces", "POST", raw=b"{not json"), 400, "BadRequestException")
    error(call(f"{u}/api/v1/lineage", "POST", raw=b"[1,2"), 400, "BadRequestException")


def test_cors_only_for_allowed_origins(warehouse):
    s = Served(warehouse, "--allow-origin", "http://viewer.local:5173")
    try:
        status, headers, _ = call(f"{s.url}/v1/config", headers={"Origin": "http://viewer.local:5173"})
        assert status == 200 and headers.get("Access-Control-Allow-Origin") == "http://viewer.local:5173"
        status, headers, _ = call(f"{s.url}/v1/config", headers={"Origin": "http://evil.example"})
        assert status == 200 and "Access-Control-Allow-Origin" not in headers
        status, headers, _ = call(f"{s.url}/v1/namespaces", "OPTIONS", headers={"Origin": "http://viewer.local:5173"})
        assert status == 204 and "POST" in headers["Access-Control-Allow-Methods"]
        assert call(f"{s.url}/v1/namespaces", "OPTIONS", headers={"Origin": "http://evil.example"})[0] == 403
    finally:
        assert s.stop() == 0


def test_errors_name_the_problem_without_server_paths(served, warehouse):
    u = served.url
    # a table route says NoSuchTable even when the namespace is missing (as Iceberg's clients expect)
    error(call(f"{u}/v1/namespaces/nope/tables/t"), 404, "NoSuchTableException")
    error(call(f"{u}/v1/namespaces/nope/tables"), 404, "NoSuchNamespaceException")
    call(f"{u}/v1/namespaces", "POST", {"namespace": ["db"]})
    msg = error(call(f"{u}/v1/namespaces/db/tables/t"), 404, "NoSuchTableException")
    assert "db.t" in msg
    error(call(f"{u}/v1/nothing/here/at/all"), 404, "NotFoundException")
    status, _, body = call(f"{u}/v1/namespaces/db/tables/t", "POST", {"requirements": [], "updates": []})
    assert status == 404
    for resp in (call(f"{u}/v1/namespaces/db/tables", "POST", {"name": "t", "schema": "nope"}),):
        assert str(warehouse) not in json.dumps(resp[2])
