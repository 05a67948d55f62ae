"""`bifrost run`: rounds triggered by skade's commits (the interval only bounds the
wait), backoff while the graph server is down and recovery when it returns, and a
/metrics endpoint that promtool accepts."""
from __future__ import annotations

import random
import re
import subprocess
import urllib.request

from graph_util import (GraphServer, Running, actual_graph, append, assert_same_graph, expected_graph, free_port,
                        write_mapping)
from tables import MAPPING, create_tables, people, populate, read_tables


def cdc_people():
    return {"graph": "g", "tables": [{**MAPPING["tables"][0], "mode": "cdc"}]}


def test_run_follows_commits_before_the_interval(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    rng = random.Random(4)
    append(skade, "db.people", people(rng, list(range(1, 11)), [1, 2]), workdir)
    m = cdc_people()
    mapping = write_mapping(workdir / "m.yaml", m)
    run = Running(bifrost, "--mapping", mapping, "--interval", "60s")
    try:
        run.wait_for(lambda: len(run.rounds()) >= 1, 30, "the first round")
        assert "1 synced" in run.rounds()[0], run.rounds()
        update = people(rng, [5], [1])
        update = update.set_column(1, "name", __import__("pyarrow").array(["Renamed"]))
        f = workdir / "u.parquet"
        __import__("pyarrow.parquet").parquet.write_table(update, f)
        skade.ok("upsert", "db.people", f)
        # the interval is 60 s: only the commit push can bring this round
        run.wait_for(lambda: any("1 synced" in r for r in run.rounds()[1:]), 20, "a round after the commit")
        rows = bifrost.query("MATCH (n:Person {id: 5}) RETURN n.full_name AS name", "--mapping", mapping)
        assert rows == [{"name": "Renamed"}]
        assert len(run.rounds()) <= 4, f"rounds without commits: {run.rounds()}"
    finally:
        assert run.stop() == 0, run.errors
    # the embedded server stopped with it and kept the graph
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(bifrost, m, "--mapping", mapping))


def test_run_backs_off_and_recovers_when_the_server_returns(skade, bifrost, workdir):
    create_tables(skade)
    populate(skade, workdir, n_people=15)
    mapping = write_mapping(workdir / "m.yaml", MAPPING)
    server = GraphServer(tcp=True)
    try:
        server.stop()
        run = Running(bifrost, "--mapping", mapping, "--graph", server.url, "--interval", "200ms", "--max-backoff", "800ms")
        run.wait_for(lambda: len(run.rounds()) >= 4, 30, "failed rounds")
        waits = [int(re.search(r"retry in (\d+) ms", r).group(1)) for r in run.rounds()[:4]]
        assert waits == [200, 400, 800, 800], run.rounds()
        assert any("cannot connect to graph server" in e for e in run.errors), run.errors
        server.start()
        run.wait_for(lambda: any("4 synced" in r for r in run.rounds()), 30, "recovery")
        assert run.stop() == 0, run.errors
        graph = ("--graph", server.url, "--mapping", mapping)
        assert_same_graph(expected_graph(MAPPING, read_tables(skade, [t["table"] for t in MAPPING["tables"]])),
                          actual_graph(bifrost, MAPPING, *graph))
    finally:
        server.cleanup()


def test_metrics_endpoint_passes_promtool(skade, bifrost, workdir):
    create_tables(skade)
    populate(skade, workdir, n_people=10)
    mapping = write_mapping(workdir / "m.yaml", MAPPING)
    port = free_port()
    run = Running(bifrost, "--mapping", mapping, "--interval", "300ms", "--metrics-addr", f"127.0.0.1:{port}")
    try:
        run.wait_for(lambda: len(run.rounds()) >= 2, 30, "two rounds")
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        assert run.stop() == 0, run.errors
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    values = dict(re.findall(r"^(bifrost_\w+) (\S+)$", text, re.M))
    assert float(values["bifrost_rounds_total"]) >= 2
    assert float(values["bifrost_table_syncs_total"]) == 4  # the first round; later rounds are idle
    assert float(values["bifrost_rows_read_total"]) == sum(read_tables(skade, [t["table"] for t in MAPPING["tables"]])[t].num_rows
                                                           for t in [t["table"] for t in MAPPING["tables"]])


def test_second_instance_takes_over_the_embedded_server(skade, bifrost, workdir):
    """B attaches to the server A started; when A stops (and its server with it), B
    starts the server again from its log and carries on."""
    create_tables(skade, ["db.people"])
    rng = random.Random(6)
    append(skade, "db.people", people(rng, list(range(1, 11)), [1]), workdir)
    m = cdc_people()
    mapping = write_mapping(workdir / "m.yaml", m)
    a = Running(bifrost, "--mapping", mapping, "--interval", "200ms", "--lease", "2s")
    a.wait_for(lambda: any("1 synced" in r for r in a.rounds()), 30, "A's first round")
    b = Running(bifrost, "--mapping", mapping, "--interval", "200ms", "--lease", "2s")
    try:
        b.wait_for(lambda: len(b.rounds()) >= 2, 30, "B's rounds")
        assert a.stop() == 0, a.errors
        append(skade, "db.people", people(rng, [50, 51], [1]), workdir)
        b.wait_for(lambda: any("1 synced" in r for r in b.rounds()), 30, "B applying the new rows")
    finally:
        assert b.stop() == 0, b.errors
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(bifrost, m, "--mapping", mapping))
