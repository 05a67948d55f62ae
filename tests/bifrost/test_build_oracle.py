"""`bifrost build` into the embedded FalkorDB: the graph read back equals the graph
the offline oracle computes from the tables (composite keys, self-referencing and
null foreign keys, parallel edges, typed properties)."""
from __future__ import annotations

import copy
import random

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from graph_util import actual_graph, append, assert_same_graph, expected_graph, write_mapping
from tables import MAPPING, SCHEMAS, create_tables, people, populate, read_tables

# With YAML mappings, with RON mappings, and reading the tables through a REST catalog.
each_variant = pytest.mark.usefixtures("mapping_variant")


@each_variant
def test_build_matches_oracle(skade, bifrost, workdir):
    create_tables(skade)
    populate(skade, workdir)
    mapping = write_mapping(workdir / "m.yaml", MAPPING)
    out = bifrost.ok("build", "--mapping", mapping)
    assert "tables mapped: 4, tables empty: 0, tables unchanged: 0, tables failed: 0" in out, out
    assert out.count("bulk-loaded into a new graph") == 4, out

    expected = expected_graph(MAPPING, read_tables(skade, SCHEMAS))
    nodes, edges = expected
    # the data really has the shapes this test is about
    assert any(k[0] == "Project" and len(k[1]) == 2 for k in nodes)
    assert any(k[0] == "TRANSFER" for k in edges)
    pairs = [(k[1], k[2]) for k in edges if k[0] == "TRANSFER"]
    assert len(pairs) > len(set(pairs)), "no parallel edges in the data"
    assert ("Person", (999,)) in nodes, "no placeholder vertex from a dangling foreign key"
    assert_same_graph(expected, actual_graph(bifrost, MAPPING, "--mapping", mapping))


@each_variant
def test_build_is_idempotent_and_persists(skade, bifrost, workdir):
    """A second build finds nothing new; a forced replay (fresh ledger) changes nothing."""
    create_tables(skade)
    populate(skade, workdir, seed=11)
    mapping = write_mapping(workdir / "m.yaml", MAPPING)
    bifrost.ok("build", "--mapping", mapping)
    before = actual_graph(bifrost, MAPPING, "--mapping", mapping)
    out = bifrost.ok("build", "--mapping", mapping)
    assert "tables unchanged: 4" in out, out
    # replay every table from scratch with another ledger: MERGE makes it harmless
    out = bifrost.ok("build", "--mapping", mapping, "--state", f"file:{workdir / 'fresh.json'}")
    assert "nodes created: 0, relationships created: 0" in out, out
    assert_same_graph(before, actual_graph(bifrost, MAPPING, "--mapping", mapping))


def test_build_into_external_server(skade, bifrost, workdir, graph_server):
    create_tables(skade)
    populate(skade, workdir, seed=3, n_people=20)
    m = copy.deepcopy(MAPPING)
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping, "--graph", graph_server.url, "--graph-name", "other")
    graph = ("--graph", graph_server.url, "--graph-name", "other")
    assert_same_graph(expected_graph(m, read_tables(skade, SCHEMAS)), actual_graph(bifrost, m, *graph))
    # the embedded server's graph was not touched
    rc, out, err = bifrost("query", "--mapping", mapping, "MATCH (n) RETURN count(n) AS c")
    assert rc == 2 and "graph 'g' does not exist" in err, (rc, out, err)


def test_bulk_load_and_merge_build_the_same_graph(skade, bifrost, workdir, graph_server):
    """The first build of a new graph is one GRAPH.BULK load; into a graph that exists it
    is MERGE queries. Both end in the oracle's graph, with the same indexes; afterwards
    the bulk-built graph takes MERGE rounds like any other."""
    import redis

    create_tables(skade)
    populate(skade, workdir, seed=21)
    mapping = write_mapping(workdir / "m.yaml", MAPPING)
    r = redis.Redis(unix_socket_path=str(graph_server.socket), socket_timeout=120)
    # a staging key left by a build that crashed mid-load
    r.execute_command("GRAPH.QUERY", "bulk:bifrost-build:1-2", "CREATE (:Stale)")
    # a graph that exists, though empty: its build must MERGE
    r.execute_command("GRAPH.QUERY", "merged", "CREATE (:Tmp)")
    r.execute_command("GRAPH.QUERY", "merged", "MATCH (n:Tmp) DELETE n")

    def build(name):
        return bifrost.ok("build", "--mapping", mapping, "--graph", graph_server.url, "--graph-name", name,
                          "--state", f"file:{workdir / (name + '.json')}")

    out = build("bulk")
    assert out.count("bulk-loaded into a new graph") == 4, out
    out = build("merged")
    assert "bulk-loaded" not in out, out
    assert sorted(k.decode() for k in r.keys("*")) == ["bulk", "merged"], r.keys("*")

    expected = expected_graph(MAPPING, read_tables(skade, SCHEMAS))
    graphs = {}
    for name in ("bulk", "merged"):
        args = ("--graph", graph_server.url, "--graph-name", name)
        graphs[name] = actual_graph(bifrost, MAPPING, *args)
        rows = bifrost.query("CALL db.indexes() YIELD label, properties RETURN label, properties", *args)
        graphs[name + " indexes"] = sorted((x["label"], tuple(x["properties"])) for x in rows)
    assert_same_graph(expected, graphs["bulk"])
    assert_same_graph(graphs["merged"], graphs["bulk"])
    assert graphs["bulk indexes"] == graphs["merged indexes"] == [("Person", ("id",)), ("Project", ("org", "code"))]

    # a replay through MERGE finds every node and edge the load made
    out = bifrost.ok("build", "--mapping", mapping, "--graph", graph_server.url, "--graph-name", "bulk",
                     "--state", f"file:{workdir / 'replay.json'}")
    assert "bulk-loaded" not in out and "nodes created: 0, relationships created: 0" in out, out
    assert_same_graph(expected, actual_graph(bifrost, MAPPING, "--graph", graph_server.url, "--graph-name", "bulk"))


@each_variant
def test_filter_and_projection_are_pushed_down(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    append(skade, "db.people", people(random.Random(8), list(range(1, 31)), [1, 2]), workdir)
    m = {"graph": "g", "tables": [{**MAPPING["tables"][0], "filter": "id <= 10"}]}
    mapping = write_mapping(workdir / "m.yaml", m)
    out = bifrost.ok("validate", "--mapping", mapping)
    # only the columns the pipeline uses are read
    assert "reads id, name, score, active, joined, born, tags, level, manager_id" in out, out
    out = bifrost.ok("build", "--mapping", mapping)
    assert "rows read: 10," in out, out
    table = read_tables(skade, ["db.people"])["db.people"]
    kept = table.filter(pc.less_equal(table["id"], 10))
    assert_same_graph(expected_graph(m, {"db.people": kept}), actual_graph(bifrost, m, "--mapping", mapping))


def test_infer_proposes_a_mapping_that_validates(skade, bifrost, workdir):
    skade.ok("create", "db.orders", "--schema",
             "id:long!, customer_id:long, total:double, note:string, meta:struct<a:int>", "--identifier", "id")
    out = bifrost.ok("infer", "db.orders")
    assert "# guess: id from the table's identifier fields" in out, out
    assert "# unmapped: meta (struct<" in out, out
    m = workdir / "inferred.yaml"
    m.write_text(out)
    assert "mapping ok" in bifrost.ok("validate", "--mapping", m)


@each_variant
def test_full_mode_prune_removes_what_the_table_no_longer_produces(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    rng = random.Random(12)
    append(skade, "db.people", people(rng, list(range(1, 21)), [1, 2, 3]), workdir)
    m = {"graph": "g", "tables": [{**MAPPING["tables"][0], "mode": "full", "prune": True}]}
    mapping = write_mapping(workdir / "m.yaml", m)
    bifrost.ok("build", "--mapping", mapping)
    skade.ok("delete", "db.people", "--where", "id > 15")
    moved = people(rng, [10, 11], [1])
    moved = moved.set_column(moved.schema.get_field_index("manager_id"), "manager_id", pa.array([2, None], pa.int64()))
    f = workdir / "moved.parquet"
    pq.write_table(moved, f)
    skade.ok("upsert", "db.people", f)
    out = bifrost.ok("build", "--mapping", mapping)
    assert "nodes deleted: 5," in out, out
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(bifrost, m, "--mapping", mapping))
    rc, _, err = bifrost("validate", "--mapping", write_mapping(workdir / "bad.yaml", {
        "graph": "g", "tables": [{**MAPPING["tables"][0], "mode": "cdc", "prune": True}]}))
    assert rc == 2 and "'prune' in table 'db.people' needs mode full" in err, err


def test_indexes_are_operational_when_build_returns(skade, bifrost, workdir, graph_server):
    """FalkorDB fills a new index in the background and plans around it until then, so
    a MERGE round right after would scan the whole label per row. Both the bulk load
    and a MERGE build into a graph that exists return only with every index usable.
    (A server of its own: the embedded one restarts per command and refills indexes.)"""
    import pyarrow as pa

    skade.ok("create", "db.big", "--schema", "id:long!, name:string", "--identifier", "id")
    n = 400_000
    append(skade, "db.big", pa.table({"id": pa.array(range(n), pa.int64()),
                                      "name": pa.array([f"n{i}" for i in range(n)])}), workdir)
    m = {"graph": "g", "tables": [{"table": "db.big", "mode": "cdc", "pipeline": [
        {"vertex": {"label": "Big", "id_column": "id", "properties": ["name"]}}]}]}
    mapping = write_mapping(workdir / "m.yaml", m)
    status = "CALL db.indexes() YIELD label, status RETURN label, status"
    graph = ("--graph", graph_server.url)
    out = bifrost.ok("build", "--mapping", mapping, *graph)
    assert "bulk-loaded" in out, out
    assert bifrost.query(status, "--mapping", mapping, *graph) == [{"label": "Big", "status": "OPERATIONAL"}]
    # a second label arrives in a graph that exists: its index is made by the MERGE path
    m["tables"][0]["pipeline"].append({"vertex": {"label": "Other", "id_column": "id"}})
    mapping = write_mapping(workdir / "m2.yaml", m)
    bifrost.ok("build", "--mapping", mapping, *graph, "--state", f"file:{workdir / 'fresh.json'}")
    assert sorted(bifrost.query(status, "--mapping", mapping, *graph), key=lambda r: r["label"]) == [
        {"label": "Big", "status": "OPERATIONAL"}, {"label": "Other", "status": "OPERATIONAL"}]
