"""Spark's lineage joins skade's: a real Spark job (through `skade serve`'s REST catalog) reads tables
the skade CLI made, creates one table (CTAS) and MERGEs into another, while openlineage-spark's HTTP
transport posts straight to the same server. Then `skade lineage upstream/downstream` name the skade
inputs, the graph API holds each dataset and edge once, the MERGE is an in-place update (no
self-edge), column lineage is there, and every node is a skade table (none a separate `file` node)."""
from __future__ import annotations

import json
import time
import urllib.request
from collections import Counter

import pyarrow as pa
import pytest

from skade_util import write_parquet

SPARK_OPENLINEAGE = True
APP = "test_spark_lineage"  # the app name conftest gives the session: Spark's job names start with it


def _get(url: str, path: str) -> dict:
    with urllib.request.urlopen(url + path) as r:
        return json.loads(r.read())


def _settled_graph(spark, url: str, done) -> dict:
    """The graph once Spark's listener has sent everything and `done(graph)` holds."""
    # Spark hands events to its listeners on a queue; openlineage-spark posts from there.
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    deadline = time.monotonic() + 60
    graph, before = None, None
    while time.monotonic() < deadline:
        graph = _get(url, "/api/skade/v1/graph")
        shape = {k: v for k, v in graph.items() if k != "window"}
        if done(graph) and shape == before:  # twice the same: nothing more arrived meanwhile
            return graph
        before = shape
        time.sleep(1)
    raise AssertionError(f"Spark's lineage did not arrive: {json.dumps(graph)[:2000]}")


def _listed(skade, *args) -> list[str]:
    return sorted(r["dataset"] for r in skade.jsonl("lineage", *args))


@pytest.fixture(scope="module")
def spark_job(spark, skade, served, tmp_path_factory):
    """The skade tables, then Spark's CTAS and MERGE; the graph after both."""
    tmp = tmp_path_factory.mktemp("data")
    skade.ok("create-namespace", "lin")
    skade.ok("create", "lin.orders", "--schema", "id:long!, customer_id:long, amount:double")
    skade.ok("append", "lin.orders", write_parquet(pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()), "customer_id": pa.array([10, 10, 20, 30], pa.int64()),
        "amount": [5.0, 7.5, 2.0, 9.0]}), tmp / "orders.parquet"), "--actor", "loader")
    skade.ok("create", "lin.customers", "--schema", "id:long!, name:string")
    skade.ok("append", "lin.customers", write_parquet(pa.table({
        "id": pa.array([10, 20, 30], pa.int64()), "name": ["ada", "bob", "cy"]}), tmp / "customers.parquet"))
    skade.ok("create", "lin.totals", "--schema", "id:long!, total:double")
    skade.ok("append", "lin.totals", write_parquet(pa.table({
        "id": pa.array([10], pa.int64()), "total": [1.0]}), tmp / "totals.parquet"))

    spark.sql("""CREATE TABLE lin.revenue USING iceberg AS
                 SELECT c.id, c.name, sum(o.amount) AS total
                 FROM lin.orders o JOIN lin.customers c ON o.customer_id = c.id GROUP BY c.id, c.name""")
    spark.sql("""MERGE INTO lin.totals t
                 USING (SELECT customer_id, sum(amount) AS total FROM lin.orders GROUP BY customer_id) s
                 ON t.id = s.customer_id
                 WHEN MATCHED THEN UPDATE SET t.total = s.total
                 WHEN NOT MATCHED THEN INSERT (id, total) VALUES (s.customer_id, s.total)""")

    def done(graph):
        edges = {(e["from"], e["to"]) for e in graph["edges"] if e["run_state"] == "COMPLETE"}
        return {("lin.orders", "lin.revenue"), ("lin.customers", "lin.revenue"), ("lin.orders", "lin.totals")} <= edges

    return _settled_graph(spark, served.url, done)


def test_upstream_and_downstream_name_the_skade_tables(spark_job, skade):
    assert _listed(skade, "upstream", "lin.revenue") == ["lin.customers", "lin.orders"]
    assert _listed(skade, "upstream", "lin.totals") == ["lin.orders"]
    assert _listed(skade, "downstream", "lin.orders") == ["lin.revenue", "lin.totals"]
    assert _listed(skade, "downstream", "lin.customers") == ["lin.revenue"]


def test_graph_has_each_node_and_edge_once_all_of_them_skade_tables(spark_job, skade):
    graph = spark_job
    keys = [n["key"] for n in graph["nodes"]]
    assert len(keys) == len(set(keys)), Counter(keys)
    assert sorted(keys) == ["lin.customers", "lin.orders", "lin.revenue", "lin.totals"]
    # A table Spark created or wrote through skade serve is skade's node on the map, not a file.
    assert {(n["key"], n["system"], n["kind"]) for n in graph["nodes"]} == {
        (k, "skade", "table") for k in keys}
    assert [s["system"] for s in graph["systems"]] == ["skade"]
    edges = [(e["from"], e["to"], e["job"]) for e in graph["edges"]]
    assert len(edges) == len(set(edges)), Counter(edges)
    assert not [e for e in edges if e[0] == e[1]], "a self-edge"
    assert not [e for e in edges if e[2].endswith("command_result")], edges
    jobs = {(f, t): j for f, t, j in edges}
    assert jobs[("lin.orders", "lin.revenue")].startswith(f"{APP}.") and "create_table_as_select" in jobs[
        ("lin.orders", "lin.revenue")]
    # The CLI's graph agrees.
    cli = json.loads(skade.ok("lineage", "graph", "--format", "json"))
    cli_edges = [(e["from"], e["to"], e["job"]) for e in cli["edges"]]
    assert len(cli_edges) == len(set(cli_edges)) and not [e for e in cli_edges if e[0] == e[1]]
    assert {(f, t) for f, t, j in cli_edges if j.startswith(APP)} == {(f, t) for f, t, _ in edges}


def test_merge_is_an_in_place_update_of_its_target(spark_job):
    nodes = {n["key"]: n for n in spark_job["nodes"]}
    merge_jobs = nodes["lin.totals"]["updated_in_place_by"]
    assert len(merge_jobs) == 1 and merge_jobs[0].startswith(f"{APP}."), merge_jobs
    assert nodes["lin.totals"]["last_writer"] == merge_jobs[0]
    assert nodes["lin.revenue"]["updated_in_place_by"] == []
    assert nodes["lin.revenue"]["row_count"] == 3


def test_column_lineage_is_in_the_graph_api(spark_job):
    columns = {(c["to"], c["column"]): c for c in spark_job["column_lineage"]}
    total = columns[("lin.revenue", "total")]
    assert [(i["from"], i["column"], i["type"]) for i in total["inputs"]] == [("lin.orders", "amount", "DIRECT")]
    assert [(i["from"], i["column"]) for i in columns[("lin.revenue", "name")]["inputs"]] == [("lin.customers", "name")]
    # Dataset-wide dependencies (here the grouping; openlineage-spark 1.53 reports no join keys) as column "*".
    wide = {(i["from"], i["column"], i["type"], i["subtype"]) for i in columns[("lin.revenue", "*")]["inputs"]}
    assert ("lin.customers", "id", "INDIRECT", "GROUP_BY") in wide, wide
    assert ("lin.totals", "total") in columns
    assert {i["from"] for c in spark_job["column_lineage"] for i in c["inputs"]} <= {
        "lin.orders", "lin.customers", "lin.totals"}
