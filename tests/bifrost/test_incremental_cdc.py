"""Incremental and CDC rounds: appended rows appear and nothing else changes; updates
change properties and re-wire foreign keys; deletes remove the vertex with its edges;
an upsert then a delete in one round ends with the vertex gone."""
from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graph_util import actual_graph, append, assert_same_graph, expected_graph, write_mapping
from tables import MAPPING, create_tables, people, populate, projects, read_tables, transfers

# Each test with YAML mappings, with RON mappings, and reading through a REST catalog.
pytestmark = pytest.mark.usefixtures("mapping_variant")


def only(mapping, *tables, mode):
    m = {"graph": mapping["graph"], "tables": []}
    for t in mapping["tables"]:
        if t["table"] in tables:
            m["tables"].append({**t, "mode": mode})
    return m


def test_incremental_appends_only_new_rows(skade, bifrost, workdir):
    create_tables(skade)
    populate(skade, workdir)
    m = only(MAPPING, "db.people", "db.transfers", mode="incremental")
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)
    before = actual_graph(bifrost, m, "--mapping", mapping)

    rng = random.Random(5)
    new = transfers(rng, 1000, 40, [1, 2, 3, 500])  # 500: a person no table holds yet
    append(skade, "db.transfers", new, workdir)
    out = bifrost.ok("build", "--mapping", mapping)
    assert "tables unchanged: 1" in out and "rows read: 40," in out, out
    landed = sum(1 for r in new.to_pylist() if r["src"] is not None)
    assert f"relationships created: {landed}" in out, out

    after = actual_graph(bifrost, m, "--mapping", mapping)
    assert_same_graph(expected_graph(m, read_tables(skade, [t["table"] for t in m["tables"]])), after)
    # nothing that was there changed
    for k, props in before[0].items():
        assert after[0][k] == props
    for k, props in before[1].items():
        assert after[1][k] == props


def upsert(skade, table, data, tmpdir):
    f = tmpdir / "upsert.parquet"
    pq.write_table(data, f)
    skade.ok("upsert", table, f)


def test_cdc_updates_deletes_and_rewires(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    rng = random.Random(21)
    ids = list(range(1, 41))
    managers = ids[:10]
    append(skade, "db.people", people(rng, ids, managers), workdir)
    m = only(MAPPING, "db.people", mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)

    # updates: new property values (some to null), and re-pointed managers
    changed = people(rng, [11, 12, 13, 14], managers)
    changed = changed.set_column(changed.schema.get_field_index("manager_id"), "manager_id",
                                 pa.array([2, 3, None, 4], pa.int64()))
    upsert(skade, "db.people", changed, workdir)
    # deletes of people nobody reports to
    leaves = [i for i in ids if i > 30]
    skade.ok("delete", "db.people", "--where", "id > 30")
    out = bifrost.ok("build", "--mapping", mapping)
    assert "tables failed: 0" in out and "nodes deleted: 10," in out, out
    assert_same_graph(expected_graph(m, read_tables(skade, [t["table"] for t in m["tables"]])), actual_graph(bifrost, m, "--mapping", mapping))
    for i in leaves:
        assert bifrost.query(f"MATCH (n:Person {{id: {i}}}) RETURN count(n) AS c", "--mapping", mapping) == [{"c": 0}]


def test_cdc_upsert_then_delete_in_one_round_is_gone(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    rng = random.Random(2)
    append(skade, "db.people", people(rng, [1, 2, 3], [1]), workdir)
    m = only(MAPPING, "db.people", mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)
    upsert(skade, "db.people", people(rng, [77], [1, 2]), workdir)
    skade.ok("delete", "db.people", "--where", "id = 77")
    bifrost.ok("build", "--mapping", mapping)
    assert bifrost.query("MATCH (n:Person {id: 77}) RETURN count(n) AS c", "--mapping", mapping) == [{"c": 0}]
    assert_same_graph(expected_graph(m, read_tables(skade, [t["table"] for t in m["tables"]])), actual_graph(bifrost, m, "--mapping", mapping))


def test_cdc_delete_removes_vertex_with_its_edges(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    rng = random.Random(9)
    data = people(rng, [1, 2, 3, 4], [1])
    data = data.set_column(data.schema.get_field_index("manager_id"), "manager_id", pa.array([None, 1, 1, 2], pa.int64()))
    append(skade, "db.people", data, workdir)
    m = only(MAPPING, "db.people", mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)
    edges_into_1 = "MATCH (a)-[e:MANAGED_BY]->(b:Person {id: 1}) RETURN count(e) AS c"
    assert bifrost.query(edges_into_1, "--mapping", mapping) == [{"c": 2}]
    skade.ok("delete", "db.people", "--where", "id = 1")
    bifrost.ok("build", "--mapping", mapping)
    assert bifrost.query("MATCH (n:Person {id: 1}) RETURN count(n) AS c", "--mapping", mapping) == [{"c": 0}]
    assert bifrost.query(edges_into_1, "--mapping", mapping) == [{"c": 0}]
    assert bifrost.query("MATCH ()-[e:MANAGED_BY]->() RETURN count(e) AS c", "--mapping", mapping) == [{"c": 1}]


def test_cdc_rounds_of_upserts_that_null_several_properties(skade, bifrost, workdir):
    """Regression: FalkorDB 4.16 removed the wrong attributes when one query nulled
    several properties of a node; every round must still equal the oracle."""
    create_tables(skade, ["db.people"])
    rng = random.Random(5)
    append(skade, "db.people", people(rng, list(range(1, 41)), list(range(1, 11))), workdir)
    m = only(MAPPING, "db.people", mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)
    for i in range(6):
        upsert(skade, "db.people", people(rng, rng.sample(range(11, 31), 3), list(range(1, 11))), workdir)
        if i % 2:
            bifrost.ok("build", "--mapping", mapping)
            assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])),
                              actual_graph(bifrost, m, "--mapping", mapping))


def test_cdc_follows_a_rollback(skade, bifrost, workdir):
    """The cursor's snapshot left the main line: what happened after the shared snapshot
    is undone (updates reverted, deletes restored, inserts removed), then the main
    line's changes are applied."""
    create_tables(skade, ["db.people"])
    rng = random.Random(4)
    ids = list(range(1, 21))
    append(skade, "db.people", people(rng, ids, ids[:5]), workdir)
    shared = skade.snapshots("db.people")[-1]["snapshot_id"]
    m = only(MAPPING, "db.people", mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)
    before = actual_graph(bifrost, m, "--mapping", mapping)

    # the side line: updates (one re-wired), deletes, inserts; synced into the graph
    changed = people(rng, [3, 4], ids[:5])
    changed = changed.set_column(changed.schema.get_field_index("manager_id"), "manager_id",
                                 pa.array([5, None], pa.int64()))
    upsert(skade, "db.people", changed, workdir)
    skade.ok("delete", "db.people", "--where", "id >= 6 and id <= 8")
    append(skade, "db.people", people(rng, [21, 22], ids[:5]), workdir)
    bifrost.ok("build", "--mapping", mapping)
    assert actual_graph(bifrost, m, "--mapping", mapping) != before

    # back to the shared snapshot, then a main line of its own
    skade.ok("rollback", "db.people", shared)
    upsert(skade, "db.people", people(rng, [3, 9], ids[:5]), workdir)
    append(skade, "db.people", people(rng, [23], ids[:5]), workdir)
    out = bifrost.ok("build", "--mapping", mapping)
    assert "was rolled back" in out and "tables failed: 0" in out, out
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(bifrost, m, "--mapping", mapping))
    # a rollback with nothing after it
    skade.ok("rollback", "db.people", shared)
    bifrost.ok("build", "--mapping", mapping)
    assert_same_graph(before, actual_graph(bifrost, m, "--mapping", mapping))


def test_expired_cursor_is_a_clear_error_and_rebuild_recovers(skade, bifrost, workdir, graph_server):
    import time

    import redis

    create_tables(skade, ["db.people"])
    rng = random.Random(6)
    append(skade, "db.people", people(rng, list(range(1, 31)), [1, 2]), workdir)
    m = only(MAPPING, "db.people", mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    graph = ("--graph", graph_server.url)
    bifrost.ok("build", "--mapping", mapping, *graph)
    # the cursor's snapshot expires under later changes
    upsert(skade, "db.people", people(rng, [4, 5, 40], [1, 2]), workdir)
    skade.ok("delete", "db.people", "--where", "id > 25")
    skade.ok("expire", "db.people", "--older-than", str(int(time.time() * 1000) + 1000), "--retain-last", "1")
    rc, out, err = bifrost("build", "--mapping", mapping, *graph)
    assert rc == 2 and "expired" in err and "bifrost build --rebuild" in err, (rc, out, err)
    # something the tables never produced, which only a rebuild can know to drop
    r = redis.Redis(unix_socket_path=str(graph_server.socket), socket_timeout=120)
    r.execute_command("GRAPH.QUERY", "g", "CREATE (:Person {id: 999, name: 'stale'})")

    out = bifrost.ok("build", "--rebuild", "--mapping", mapping, *graph)
    assert "rebuilt into a new graph" in out and "tables failed: 0" in out, out
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(bifrost, m, "--mapping", mapping, *graph))
    out = bifrost.ok("build", "--mapping", mapping, *graph)
    assert "tables unchanged: 1" in out, out
    # the rebuilt graph keeps following changes
    upsert(skade, "db.people", people(rng, [7, 41], [1, 2]), workdir)
    bifrost.ok("build", "--mapping", mapping, *graph)
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(bifrost, m, "--mapping", mapping, *graph))


def test_rebuild_replaces_nothing_when_a_table_fails(skade, bifrost, workdir):
    create_tables(skade, ["db.people", "db.projects"])
    rng = random.Random(8)
    append(skade, "db.people", people(rng, [1, 2, 3], [1]), workdir)
    append(skade, "db.projects", projects(rng, [("a", 1), ("a", 2), ("b", 1)]), workdir)
    m = only(MAPPING, "db.people", "db.projects", mode="full")
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)
    before = actual_graph(bifrost, m, "--mapping", mapping)
    # the table comes back empty: its read is refused, so nothing may be replaced
    skade.ok("drop", "db.projects")
    create_tables(skade, ["db.projects"])
    rc, out, err = bifrost("build", "--rebuild", "--mapping", mapping)
    assert rc != 0 and "table 'db.projects': empty read refused" in err, (rc, out, err)
    assert "not rebuilt, the graph is as it was: table 'db.projects' failed" in err, err
    assert actual_graph(bifrost, m, "--mapping", mapping) == before

def test_a_lost_graph_is_rebuilt_from_full_reads(skade, bifrost, workdir, graph_server):
    """The graph is gone (deleted, or its server lost it) while the ledger, kept
    elsewhere, still has cursors: reading only the changes since them would leave the
    graph with just those, so the next round reads every table afresh."""
    import redis

    create_tables(skade, ["db.people"])
    rng = random.Random(12)
    append(skade, "db.people", people(rng, list(range(1, 31)), [1, 2]), workdir)
    m = only(MAPPING, "db.people", mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    args = ("--mapping", mapping, "--graph", graph_server.url, "--state", f"file:{workdir / 'state.json'}")
    bifrost.ok("build", *args)
    r = redis.Redis(unix_socket_path=str(graph_server.socket), socket_timeout=120)
    r.execute_command("GRAPH.DELETE", "g")
    upsert(skade, "db.people", people(rng, [3, 40], [1, 2]), workdir)
    out = bifrost.ok("build", *args)
    assert "the graph was missing though the ledger had cursors" in out and "bulk-loaded" in out, out
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])),
                      actual_graph(bifrost, m, "--mapping", mapping, "--graph", graph_server.url))
    # and with nothing new since the cursors, too
    r.execute_command("GRAPH.DELETE", "g")
    out = bifrost.ok("build", *args)
    assert "read afresh" in out, out
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])),
                      actual_graph(bifrost, m, "--mapping", mapping, "--graph", graph_server.url))
