"""Spark's lineage through Iceberg's JDBC catalog on skade's catalog.db, openlineage-spark's HTTP
transport posting to `skade serve`: what openlineage-spark 1.53.0 names there, and that whatever
it names resolves to skade's tables. It names no dataset at all (its Iceberg handler takes the JDBC
catalog for Hive and cannot resolve the table: "Could not resolve dataset identifier"), so this
path gives runs without lineage; README ("Spark") says so and points to the REST catalog."""
from __future__ import annotations

import json
import time

import pyarrow as pa

from skade_util import write_parquet

SPARK_CATALOG = "jdbc"
SPARK_OPENLINEAGE = True
APP = "test_spark_lineage_jdbc"


def _spark_events(skade) -> list[dict]:
    """The events openlineage-spark posted, as it sent them (`lineage export` keeps them raw)."""
    out = skade.ok("lineage", "export")
    return [e for e in map(json.loads, out.splitlines()) if e["job"]["namespace"] == APP]


def test_what_openlineage_spark_names_through_the_jdbc_catalog_resolves(spark, skade, served, tmp_path):
    skade.ok("create-namespace", "jd")
    skade.ok("create", "jd.src", "--schema", "id:long!, v:string")
    skade.ok("append", "jd.src", write_parquet(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}),
                                                tmp_path / "src.parquet"))
    spark.sql("CREATE TABLE jd.copy USING iceberg AS SELECT id, upper(v) AS v FROM jd.src")
    assert sorted(r.id for r in spark.sql("SELECT id FROM jd.copy").collect()) == [1, 2]

    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    deadline = time.monotonic() + 60
    events = []
    while time.monotonic() < deadline:  # the statement's run has ended when its COMPLETE is stored
        events = _spark_events(skade)
        if any(e["eventType"] == "COMPLETE" and "create_table_as_select" in e["job"]["name"] for e in events):
            break
        time.sleep(1)
    assert any("create_table_as_select" in e["job"]["name"] for e in events), [e["job"]["name"] for e in events]

    named = {(d["namespace"], d["name"]) for e in events for d in e.get("inputs", []) + e.get("outputs", [])}
    graph = json.loads(skade.ok("lineage", "graph", "--format", "json"))
    # Whatever it names is one of skade's tables, never a stray `file` or `hive` node.
    assert {n["system"] for n in graph["nodes"]} <= {"skade"}, graph["nodes"]
    # openlineage-spark 1.53.0 names nothing here: if a later version does, the assertion above
    # checks it resolves, and README's note on the JDBC path is due for an update.
    assert named == set(), named
    assert graph["edges"] == []
