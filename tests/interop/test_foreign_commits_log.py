"""The commit log names other engines' commits by what their snapshots say: the engine from
`engine-name` (as Spark writes it), and snapshot and operation for every row, including a
create that carries its first snapshot (CTAS)."""
from __future__ import annotations

import json

import pyarrow as pa
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


def log(skade) -> list[dict]:
    return [json.loads(line) for line in skade.ok("log", "--format", "jsonl").splitlines()]


def test_engine_named_by_the_snapshot_and_ctas_rows_filled(skade, catalog):
    skade.ok("create-namespace", "f")
    cat = catalog()
    t = cat.create_table("f.t", schema=SCHEMA)
    t.append(pa.table({"id": pa.array([1], pa.int64())}), snapshot_properties={"engine-name": "spark"})
    t.append(pa.table({"id": pa.array([2], pa.int64())}))
    rows = [r for r in log(skade) if r["table"] == "f.t" and r["action"] == "commit"]
    assert [r["engine"] for r in rows] == ["spark", "external"]
    assert all(r["snapshot_id"] and r["operation"] == "append" for r in rows)

    # a create whose first metadata already has a snapshot, as a CTAS writes it
    with cat.create_table_transaction("f.ctas", schema=SCHEMA) as tx:
        tx.append(pa.table({"id": pa.array([3], pa.int64())}), snapshot_properties={"engine-name": "spark"})
    created = [r for r in log(skade) if r["table"] == "f.ctas"]
    assert created[0]["action"] == "create"
    assert created[0]["snapshot_id"] == cat.load_table("f.ctas").current_snapshot().snapshot_id
    assert created[0]["operation"] == "append" and created[0]["engine"] == "spark"


def test_lineage_finds_tables_by_location_in_any_layout(skade, catalog, warehouse, tmp_path):
    """A table another engine placed in its own layout (Spark: `<ns>/<table>`) is the
    same node for skade's lineage when an OpenLineage event names its location."""
    skade.ok("create-namespace", "shop")
    cat = catalog()
    place = warehouse / "shop" / "orders_by_day"
    cat.create_table("shop.orders_by_day", schema=SCHEMA, location=f"file://{place}")
    event = {"eventType": "COMPLETE", "eventTime": "2026-11-30T12:00:00Z", "producer": "https://example.invalid/t",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": "0190aaaa-0000-7000-8000-0000000000aa"},
             "job": {"namespace": "spark", "name": "daily"},
             "inputs": [{"namespace": "kafka://b:9092", "name": "orders"}],
             "outputs": [{"namespace": "file", "name": str(place)}]}
    f = tmp_path / "ev.jsonl"
    f.write_text(json.dumps(event) + "\n")
    skade.ok("lineage", "ingest", f)
    assert "shop.orders_by_day" in skade.ok("lineage", "downstream", "kafka:orders", "--format", "csv")
    exported = [json.loads(line) for line in skade.ok("lineage", "export").splitlines()]
    names = {d["name"] for e in exported for d in e.get("outputs", [])}
    assert str(place) in names  # the real location, not <ns>.db/<table>
