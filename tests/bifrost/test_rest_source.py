"""The Iceberg REST catalog source beyond the oracle tests (which run through `skade
serve` as one of their variants): no local warehouse needed, a catalog that is down or
answers garbage fails the round cleanly and keeps the cursor, the token from
token_file, and errors that name the catalog."""
from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from graph_util import Bifrost, actual_graph, append, assert_same_graph, expected_graph, free_port, write_mapping
from skade_util import Served
from tables import MAPPING, create_tables, people, read_tables


def people_mapping(url: str, mode: str = "cdc", **extra) -> dict:
    return {"graph": "g", "tables": [{**MAPPING["tables"][0], "mode": mode, "source": f"rest:{url}", **extra}]}


def upsert(skade, rows, workdir):
    import pyarrow.parquet as pq

    f = workdir / "up.parquet"
    pq.write_table(rows, f)
    skade.ok("upsert", "db.people", f)


class Garbage:
    """An HTTP server that answers every GET with what `answer(path)` returns:
    (status, body). A hostile catalog, on a free loopback port."""

    def __init__(self, answer):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                status, body = answer(self.path)
                data = body.encode() if isinstance(body, str) else body
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self):
        self.http.shutdown()
        self.http.server_close()


def test_reads_through_rest_with_no_local_warehouse(skade, workdir, graph_server):
    """Everything comes over REST and the files the metadata names: bifrost is given a
    warehouse folder that does not exist. Full, then cdc rounds in `build` and `run`."""
    create_tables(skade, ["db.people"])
    rng = random.Random(31)
    append(skade, "db.people", people(rng, list(range(1, 31)), [1, 2, 3]), workdir)
    served = Served(skade.warehouse)
    try:
        m = people_mapping(served.url + "/")
        mapping = write_mapping(workdir / "m.yaml", m)
        remote = Bifrost(workdir / "no-such-warehouse")
        graph = ("--graph", graph_server.url)
        out = remote.ok("build", "--mapping", mapping, *graph)
        assert "tables failed: 0" in out and "rows read: 30," in out, out
        assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(remote, m, "--mapping", mapping, *graph))
        upsert(skade, people(rng, [4, 5, 77], [1, 2]), workdir)
        skade.ok("delete", "db.people", "--where", "id > 25")
        out = remote.ok("run", "--mapping", mapping, *graph, "--rounds", "1")
        assert "round 1: 1 synced, 0 idle, 0 busy, 0 failed" in out, out
        assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(remote, m, "--mapping", mapping, *graph))
        out = remote.ok("build", "--mapping", mapping, *graph)
        assert "tables unchanged: 1" in out, out
        # a table the catalog does not hold: named, with the tables it has
        rc, out, err = remote("validate", "--mapping", write_mapping(workdir / "missing.yaml", {
            "graph": "g", "tables": [{**m["tables"][0], "table": "db.nobody"}]}))
        assert rc == 2 and f"table 'db.nobody' not found in the REST catalog at {served.url}" in err, err
        assert "(tables: db.people)" in err, err
    finally:
        assert served.stop() == 0, served.proc.stderr.read()


def test_catalog_down_fails_rounds_and_keeps_the_cursor_until_it_is_back(skade, bifrost, workdir, graph_server):
    """`bifrost run` against a catalog that goes away: each round fails with the
    catalog's address and the cursor stays; once it is back, the changes arrive."""
    create_tables(skade, ["db.people"])
    rng = random.Random(32)
    append(skade, "db.people", people(rng, list(range(1, 21)), [1, 2]), workdir)
    state = ("--state", f"file:{workdir / 'state.json'}")
    graph = ("--graph", graph_server.url)
    listen = f"127.0.0.1:{free_port()}"
    served = Served(skade.warehouse, listen=listen)
    m = people_mapping(served.url)
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping, *graph, *state)
    cursor = bifrost.ok("state", "show", "--mapping", mapping, *graph, *state)
    run = subprocess.Popen(bifrost.cmd("run", "--mapping", mapping, *graph, *state, "--interval", "100ms",
                                       "--max-backoff", "200ms"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    lines, rounds = [], []
    threading.Thread(target=lambda: [lines.append(x) for x in iter(run.stderr.readline, "")], daemon=True).start()
    threading.Thread(target=lambda: [rounds.append(x) for x in iter(run.stdout.readline, "")], daemon=True).start()
    try:
        deadline = time.time() + 30
        while not rounds and time.time() < deadline:  # its mapping compiled, its first round done
            time.sleep(0.05)
        assert rounds and " 1 idle" in rounds[0], (rounds, lines)
        assert served.stop() == 0
        upsert(skade, people(rng, [3, 4, 50], [1]), workdir)
        skade.ok("delete", "db.people", "--where", "id = 10")
        deadline = time.time() + 30
        while sum("cannot connect" in line for line in lines) < 3 and time.time() < deadline:
            time.sleep(0.05)
        failed = [line for line in lines if "cannot connect" in line]
        assert len(failed) >= 3, lines
        assert f"the REST catalog at {served.url}: cannot connect" in failed[0], failed[0]
        assert bifrost.ok("state", "show", "--mapping", mapping, *graph, *state) == cursor
        served = Served(skade.warehouse, listen=listen)
        expected = expected_graph(m, read_tables(skade, ["db.people"]))
        deadline = time.time() + 30
        while time.time() < deadline:  # compared as assert_same_graph does: floats and times read back
            try:
                assert_same_graph(expected, actual_graph(bifrost, m, "--mapping", mapping, *graph))
                break
            except AssertionError:
                time.sleep(0.2)
        assert_same_graph(expected, actual_graph(bifrost, m, "--mapping", mapping, *graph))
        assert bifrost.ok("state", "show", "--mapping", mapping, *graph, *state) != cursor
    finally:
        run.terminate()
        run.wait(30)
        assert served.stop() == 0, served.proc.stderr.read()
    # Rounds come every 100 ms here, so the signal lands between rounds or inside one: both
    # are clean stops, as `bifrost --help` describes them (0, or 143 with one line and the
    # round left to replay), never the watchdog's forced exit.
    time.sleep(0.2)  # the reader threads take the last lines
    if run.returncode == 0:
        assert any(line.startswith("stopped after") for line in rounds), (rounds, lines)
    else:
        assert run.returncode == 143 and lines[-1] == "bifrost: interrupted by SIGTERM\n", (run.returncode, lines)


def test_run_started_while_the_catalog_is_down_waits_for_it(skade, bifrost, workdir, graph_server):
    create_tables(skade, ["db.people"])
    append(skade, "db.people", people(random.Random(36), list(range(1, 16)), [1]), workdir)
    listen = f"127.0.0.1:{free_port()}"
    m = people_mapping(f"http://{listen}")
    mapping = write_mapping(workdir / "m.yaml", m)
    graph = ("--graph", graph_server.url)
    run = subprocess.Popen(bifrost.cmd("run", "--mapping", mapping, *graph, "--interval", "100ms",
                                       "--max-backoff", "400ms", "--rounds", "1"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    threading.Thread(target=lambda: [lines.append(x) for x in iter(run.stderr.readline, "")], daemon=True).start()
    served = None
    try:
        deadline = time.time() + 30
        while sum("retry in" in line for line in lines) < 2 and time.time() < deadline:
            time.sleep(0.05)
        assert sum("retry in" in line for line in lines) >= 2 and "cannot connect" in lines[0], lines
        assert run.poll() is None, lines
        served = Served(skade.warehouse, listen=listen)
        out, _ = run.communicate(timeout=60)
        assert run.returncode == 0 and "round 1: 1 synced" in out, (out, lines)
        assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])),
                          actual_graph(bifrost, m, "--mapping", mapping, *graph))
    finally:
        if run.poll() is None:
            run.kill()
        if served:
            assert served.stop() == 0, served.proc.stderr.read()


def test_catalog_that_is_down_or_answers_garbage_is_refused_in_one_line(skade, bifrost, workdir, graph_server):
    create_tables(skade, ["db.people"])
    append(skade, "db.people", people(random.Random(34), list(range(1, 11)), [1]), workdir)
    state = ("--state", f"file:{workdir / 'state.json'}")
    graph = ("--graph", graph_server.url)
    served = Served(skade.warehouse)
    try:
        mapping = write_mapping(workdir / "m.yaml", people_mapping(served.url))
        bifrost.ok("build", "--mapping", mapping, *graph, *state)
        cursor = bifrost.ok("state", "show", "--mapping", mapping, *graph, *state)
    finally:
        assert served.stop() == 0

    def refused(url, why):
        mapping = write_mapping(workdir / "bad.yaml", people_mapping(url))
        rc, out, err = bifrost("build", "--mapping", mapping, *graph, *state)
        assert rc == 2 and why in err, (why, rc, out, err)
        assert len(err.strip().splitlines()) == 1, err
        assert bifrost.ok("state", "show", "--mapping", mapping, *graph, *state) == cursor

    refused(served.url, f"the REST catalog at {served.url}: cannot connect")
    config = json.dumps({"defaults": {}, "overrides": {}})
    answers = {
        "answered GET /v1/config with something that is not a JSON object: '<html>hello</html>'":
            lambda path: (200, "<html>hello</html>"),
        "answered GET /v1/config with HTTP 500: disk on fire":
            lambda path: (500, json.dumps({"error": {"message": "disk on fire", "type": "X", "code": 500}})),
        "loadTable of 'db.people' holds no 'metadata' object":
            lambda path: (200, "{}" if "/tables/" in path else config),
        "the metadata of 'db.people' does not parse":
            lambda path: (200, json.dumps({"metadata-location": "/x", "metadata": {"format-version": 9}})
                          if "/tables/" in path else config),
        "with something that is not a JSON object": lambda path: (200, bytes(range(256)) * 4),
    }
    for why, answer in answers.items():
        g = Garbage(answer)
        try:
            refused(g.url, why)
        finally:
            g.close()
    refused(f"http://127.0.0.1:{free_port()}", "cannot connect")


def non_loopback_address() -> str | None:
    """An address of this machine that is not loopback (skade serve asks reads from
    there for a token), or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the route
        addr = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if addr.startswith("127.") else addr


def test_token_file_is_the_bearer_token(skade, bifrost, workdir, graph_server):
    addr = non_loopback_address()
    if addr is None:
        pytest.skip("this machine has no non-loopback address, where skade serve asks for a token")
    create_tables(skade, ["db.people"])
    append(skade, "db.people", people(random.Random(33), list(range(1, 11)), [1]), workdir)
    secret = "bifrost-reader-token-0123456789"
    (workdir / "tokens").write_text(f"bifrost {secret}\n")
    served = Served(skade.warehouse, "--token-file", str(workdir / "tokens"), listen=f"{addr}:0")
    graph = ("--graph", graph_server.url)
    try:
        rc, out, err = bifrost("build", "--mapping", write_mapping(workdir / "none.yaml", people_mapping(served.url)),
                               *graph)
        assert rc == 2 and "HTTP 401" in err and "give the catalog's bearer token with token_file" in err, err
        (workdir / "wrong").write_text("not-the-token-at-all\n")
        rc, out, err = bifrost("build", "--mapping", write_mapping(workdir / "wrong.yaml", people_mapping(
            served.url, token_file=str(workdir / "wrong"))), *graph)
        assert rc == 2 and "HTTP 403" in err, err
        (workdir / "token").write_text(secret + "\n")
        m = people_mapping(served.url, token_file=str(workdir / "token"))
        mapping = write_mapping(workdir / "m.yaml", m)
        bifrost.ok("build", "--mapping", mapping, *graph)
        assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(bifrost, m, "--mapping", mapping, *graph))
        # a token file that is not one token
        (workdir / "two").write_text("a\nb\n")
        rc, out, err = bifrost("validate", "--mapping", write_mapping(workdir / "two.yaml", people_mapping(
            served.url, token_file=str(workdir / "two"))))
        assert rc == 2 and "must hold the token alone, on one line" in err, err
    finally:
        assert served.stop() == 0, served.proc.stderr.read()


def test_bad_rest_sources_are_refused_when_the_mapping_loads(bifrost, workdir):
    for source, why in [
        ("rest:ftp://x", "is not parquet:DIR or rest:http://HOST:PORT"),
        ("rest:http://127.0.0.1:1?wh=x", "unknown parameter 'wh' (known: warehouse=NAME)"),
    ]:
        rc, out, err = bifrost("validate", "--mapping", write_mapping(workdir / "m.yaml", {
            "graph": "g", "tables": [{**MAPPING["tables"][0], "source": source}]}))
        assert rc == 2 and why in err, (source, err)
    rc, out, err = bifrost("validate", "--mapping", write_mapping(workdir / "m.yaml", {
        "graph": "g", "tables": [{**MAPPING["tables"][0], "token_file": "/t"}]}))
    assert rc == 2 and "'token_file' in table 'db.people' needs a rest: source" in err, err


def test_iceberg_reference_server_as_the_catalog(bifrost, workdir, graph_server):
    """Iceberg's own REST server (RESTCatalogServer: a JDBC catalog on SQLite, from
    .deps/rck/lib) with a table PyIceberg writes: the full build, then a cdc round after
    an append and a delete, each equal to the oracle computed from PyIceberg's scan."""
    from pyiceberg.catalog import load_catalog

    root = Path(__file__).resolve().parents[2]
    port = free_port()
    wh = workdir / "refwh"
    url = f"http://127.0.0.1:{port}"
    ref = subprocess.Popen([str(root / "tests/rck/run_reference_server.sh"), str(port), str(wh), str(wh / "ref.db")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ready = subprocess.run([sys.executable, str(root / "tests/rck/wait_ready.py"), url, "--timeout", "180",
                                "--pid", str(ref.pid)], capture_output=True, text=True)
        assert ready.returncode == 0, f"the reference server did not start: {ready.stdout}{ready.stderr}"
        cat = load_catalog("ref", type="rest", uri=url, warehouse=f"file://{wh}")
        cat.create_namespace("db")
        rng = random.Random(35)
        first = people(rng, list(range(1, 31)), [1, 2, 3])
        table = cat.create_table("db.people", schema=first.schema)
        table.append(first)
        m = people_mapping(url)
        mapping = write_mapping(workdir / "m.yaml", m)
        graph = ("--graph", graph_server.url)
        out = bifrost.ok("build", "--mapping", mapping, *graph)
        assert "rows read: 30," in out, out
        assert_same_graph(expected_graph(m, {"db.people": table.scan().to_arrow()}),
                          actual_graph(bifrost, m, "--mapping", mapping, *graph))
        table.append(people(rng, [40, 41], [1]))
        table.delete("id > 25")
        out = bifrost.ok("build", "--mapping", mapping, *graph)
        assert "changes after snapshot" in out and "tables failed: 0" in out, out
        table = cat.load_table("db.people")
        assert_same_graph(expected_graph(m, {"db.people": table.scan().to_arrow()}),
                          actual_graph(bifrost, m, "--mapping", mapping, *graph))
    finally:
        ref.terminate()
        try:
            ref.wait(30)
        except subprocess.TimeoutExpired:
            ref.kill()
