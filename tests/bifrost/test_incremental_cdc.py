"""Incremental and CDC rounds: appended rows appear and nothing else changes; updates
change properties and re-wire foreign keys; deletes remove the vertex with its edges;
an upsert then a delete in one round ends with the vertex gone."""
from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq

from graph_util import actual_graph, append, assert_same_graph, expected_graph, write_mapping
from tables import MAPPING, create_tables, people, populate, read_tables, transfers


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


def test_cdc_cursor_lost_by_a_rollback_is_a_clear_error(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    rng = random.Random(4)
    append(skade, "db.people", people(rng, [1, 2], [1]), workdir)
    first = skade.snapshots("db.people")[0]["snapshot_id"]
    append(skade, "db.people", people(rng, [3], [1]), workdir)
    m = only(MAPPING, "db.people", mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)
    skade.ok("rollback", "db.people", first)
    append(skade, "db.people", people(rng, [4], [1]), workdir)
    rc, out, err = bifrost("build", "--mapping", mapping)
    assert rc == 2 and "table 'db.people'" in err and "not an ancestor" in err, (out, err)
