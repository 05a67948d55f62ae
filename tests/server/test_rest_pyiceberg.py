"""PyIceberg's RestCatalog against `skade serve`: every kind of change, each checked
against `skade scan` and `skade log` (commit + lineage with the caller as actor)."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (BadRequestError, CommitFailedException, NamespaceAlreadyExistsError, NamespaceNotEmptyError,
                                  NoSuchNamespaceError, NoSuchTableError, TableAlreadyExistsError)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestampNanoType, TimestamptzNanoType

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "city", StringType()),
                NestedField(3, "n", LongType()), identifier_field_ids=[1])


def rows(t) -> list[tuple]:
    return sorted(tuple(r.values()) for r in t.to_pylist())


def skade_rows(skade, table: str) -> list[tuple]:
    out = skade.ok("scan", table, "--format", "jsonl")
    return sorted(tuple(json.loads(line).values()) for line in out.splitlines())


def last_log(skade, table: str) -> dict:
    return json.loads(skade.ok("log", "--table", table, "--format", "jsonl").splitlines()[-1])


def data(ids, cities, ns) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "city": cities, "n": pa.array(ns, pa.int64())},
                    schema=SCHEMA.as_arrow())


def test_namespaces(rest):
    cat = rest()
    cat.create_namespace("sales", {"owner": "ana"})
    cat.create_namespace(("sales", "eu"))
    with pytest.raises(NamespaceAlreadyExistsError):
        cat.create_namespace("sales")
    assert ("sales",) in cat.list_namespaces()
    assert cat.list_namespaces("sales") == [("sales", "eu")]
    assert cat.load_namespace_properties("sales") == {"owner": "ana"}
    summary = cat.update_namespace_properties("sales", removals={"owner", "nope"}, updates={"team": "x"})
    assert summary.removed == ["owner"] and summary.missing == ["nope"] and summary.updated == ["team"]
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties("nowhere")
    cat.create_table("sales.eu.t", schema=SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace(("sales", "eu"))
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace("sales")  # it holds sales.eu
    cat.drop_table("sales.eu.t")
    cat.drop_namespace(("sales", "eu"))
    cat.drop_namespace("sales")
    assert cat.list_namespaces() == []


def test_every_kind_of_change_is_a_skade_commit(rest, skade, warehouse):
    cat = rest()
    cat.create_namespace("shop")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "city"))
    t = cat.create_table("shop.orders", schema=SCHEMA, partition_spec=spec)
    assert t.location() == f"file://{warehouse}/shop.db/orders"
    assert skade.ok("describe", "shop.orders").count("identifier") >= 1
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table("shop.orders", schema=SCHEMA)

    t.append(data([1, 2, 3], ["a", "b", "a"], [10, 20, 30]))
    assert skade_rows(skade, "shop.orders") == rows(cat.load_table("shop.orders").scan().to_arrow())
    log = last_log(skade, "shop.orders")
    assert log["operation"] == "append" and log["engine"] == "pyiceberg"
    events = [json.loads(line) for line in skade.ok("lineage", "events", "--table", "shop.orders", "--format",
                                                   "jsonl").splitlines()]
    assert events[-1]["actor"].startswith("PyIceberg/") and events[-1]["commit_seq"] == log["commit_seq"]

    t = cat.load_table("shop.orders")
    t.overwrite(data([7], ["c"], [70]), overwrite_filter="city == 'a'")
    t = cat.load_table("shop.orders")
    t.delete("id = 2")
    t = cat.load_table("shop.orders")
    t.upsert(data([7, 8], ["c", "d"], [71, 80]))
    t = cat.load_table("shop.orders")
    assert rows(t.scan().to_arrow()) == [(7, "c", 71), (8, "d", 80)]
    assert skade_rows(skade, "shop.orders") == [(7, "c", 71), (8, "d", 80)]

    with t.update_schema() as u:
        u.add_column("note", StringType())
    with t.update_spec() as u:
        u.add_field("id", BucketTransform(4), "id_bucket")
    t = cat.load_table("shop.orders")
    assert [f.name for f in t.schema().fields][-1] == "note" and len(t.spec().fields) == 2
    assert last_log(skade, "shop.orders")["operation"] == "partition-change"
    t.append(pa.table({"id": pa.array([9], pa.int64()), "city": ["e"], "n": pa.array([90], pa.int64()),
                       "note": ["new"]}, schema=t.schema().as_arrow()))
    assert "(3 rows)" in skade.ok("scan", "shop.orders")

    # refs made through REST are skade's refs
    snap = cat.load_table("shop.orders").current_snapshot().snapshot_id
    cat.load_table("shop.orders").manage_snapshots().create_tag(snap, "release-1").commit()
    assert "3 rows" in skade.ok("scan", "shop.orders", "--ref", "release-1", "--format", "none")

    # a stale writer's commit conflicts (assert-current-schema-id) instead of being lost
    stale = cat.load_table("shop.orders")
    with cat.load_table("shop.orders").update_schema() as u:
        u.add_column("x", StringType())
    before = skade.ok("describe", "shop.orders")
    with pytest.raises(CommitFailedException):
        with stale.update_schema() as u:
            u.add_column("y", StringType())
    assert skade.ok("describe", "shop.orders") == before

    # a drop without purge keeps the files; the table is gone for both clients
    folder = warehouse / "shop.db" / "orders"
    files = sorted(folder.rglob("*.parquet"))
    cat.drop_table("shop.orders")
    with pytest.raises(NoSuchTableError):
        cat.load_table("shop.orders")
    assert skade("scan", "shop.orders")[0] == 2
    assert sorted(folder.rglob("*.parquet")) == files and files


def test_purge_deletes_the_table_files(rest, warehouse):
    cat = rest()
    cat.create_namespace("p")
    t = cat.create_table("p.t", schema=SCHEMA)
    t.append(data([1], ["a"], [1]))
    folder = warehouse / "p.db" / "t"
    assert any(folder.rglob("*.parquet"))
    cat.purge_table("p.t")
    assert not [p for p in folder.rglob("*") if p.is_file()]


def test_tables_made_by_the_cli_are_served(rest, skade, tmp_path):
    skade.ok("create-namespace", "cli")
    skade.ok("create", "cli.t", "--schema", "id:long!, city:string, n:long", "--identifier", "id")
    src = tmp_path / "in.csv"
    src.write_text("id,city,n\n1,x,5\n2,y,6\n")
    skade.ok("append", "cli.t", src)
    cat = rest()
    assert cat.list_tables("cli") == [("cli", "t")]
    assert rows(cat.load_table("cli.t").scan().to_arrow()) == [(1, "x", 5), (2, "y", 6)]
    assert cat.table_exists("cli.t") and not cat.table_exists("cli.nope")
    # properties set through REST are checked as `create --property` checks them
    with pytest.raises(BadRequestError, match="write.delete.mode=copy_on_write: it takes merge-on-read, copy-on-write"):
        with cat.load_table("cli.t").transaction() as tx:
            tx.set_properties({"write.delete.mode": "copy_on_write", "team": "geo"})
    assert "team" not in cat.load_table("cli.t").properties
    with cat.load_table("cli.t").transaction() as tx:
        tx.set_properties({"write.delete.mode": "copy-on-write", "team": "geo"})
    assert "property:  write.delete.mode=copy-on-write" in skade.ok("describe", "cli.t")


def test_rename_across_namespaces_and_register(rest, skade, warehouse):
    cat = rest()
    cat.create_namespace("a")
    cat.create_namespace("b")
    t = cat.create_table("a.t", schema=SCHEMA)
    t.append(data([1], ["a"], [1]))
    cat.rename_table("a.t", "b.t2")
    assert rows(cat.load_table("b.t2").scan().to_arrow()) == [(1, "a", 1)]
    assert skade.ok("log", "--format", "jsonl").splitlines()[-1].count('"rename"') == 1
    meta = cat.load_table("b.t2").metadata_location
    cat.drop_table("b.t2")
    registered = cat.register_table("a.back", meta)
    assert rows(registered.scan().to_arrow()) == [(1, "a", 1)]
    assert "(1 row)" in skade.ok("scan", "a.back")


def test_loopback_clients_get_plain_answers_on_one_connection(rest, served):
    """A loopback client is answered uncompressed (gzip there only costs both sides) and
    keeps its connection for many requests (httplib's default closed it every 5th)."""
    import http.client

    cat = rest()
    cat.create_namespace("k")
    t = cat.create_table("k.t", schema=SCHEMA)
    t.append(data([1], ["a"], [1]))
    host, port = served.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port))
    peers = set()
    for _ in range(20):
        conn.request("GET", "/v1/namespaces/k/tables/t", headers={"Accept-Encoding": "gzip, deflate, br"})
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200
        assert resp.getheader("Content-Encoding") is None
        assert json.loads(body)["metadata"]["current-snapshot-id"] == t.current_snapshot().snapshot_id
        assert resp.getheader("Connection", "").lower() != "close"
        peers.add(conn.sock.getsockname())
    assert len(peers) == 1
    conn.close()


def test_dropping_a_partition_source_is_refused(rest, skade):
    """PyIceberg would drop a column an earlier partition spec names; Java's readers could not
    load the table after that (apache/iceberg#10234), so the server refuses the commit by name
    and the table stays as it was."""
    cat = rest()
    cat.create_namespace("shop")
    t = cat.create_table("shop.by_city", schema=SCHEMA,
                         partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "city")))
    t.append(data([1, 2], ["a", "b"], [10, 20]))
    with t.update_spec() as u:
        u.remove_field("city")
    before = skade.ok("log", "--table", "shop.by_city", "--format", "jsonl")
    t = cat.load_table("shop.by_city")
    with pytest.raises(BadRequestError, match="drops column id 2, which partition spec 0 uses \\(field 'city'\\)"):
        with t.update_schema() as u:
            u.delete_column("city")
    assert skade.ok("log", "--table", "shop.by_city", "--format", "jsonl") == before
    assert "city" in [f.name for f in cat.load_table("shop.by_city").schema().fields]
    assert skade_rows(skade, "shop.by_city") == [(1, "a", 10), (2, "b", 20)]
    with cat.load_table("shop.by_city").update_schema() as u:  # other columns still go
        u.delete_column("n")
    assert skade_rows(skade, "shop.by_city") == [(1, "a"), (2, "b")]


def test_format_version_3_tables(rest, served, skade, tmp_path):
    """A client may ask for a format version 3 table (Spark's TBLPROPERTIES): the server makes
    one, with row lineage starting at 0, and holds each snapshot to it (first-row-id given and
    not behind the table's next-row-id). An unknown version is refused by name, and so is
    format-version as a property to set. skade's CLI writes the table (row ids assigned) and
    PyIceberg reads it. Spark's writes to such a table are in tests/spark/test_spark_rest.py."""
    import urllib.error
    import urllib.request

    cat = rest()
    cat.create_namespace("v3")
    t = cat.create_table("v3.t", schema=SCHEMA, properties={"format-version": "3"})
    assert t.metadata.format_version == 3 and t.metadata.next_row_id == 0
    assert "format-version" not in t.properties
    with pytest.raises(BadRequestError, match="format-version must be 1, 2 or 3, not 7"):
        cat.create_table("v3.bad", schema=SCHEMA, properties={"format-version": "7"})

    def commit(snapshot: dict) -> tuple[int, str]:
        body = json.dumps({"requirements": [], "updates": [{"action": "add-snapshot", "snapshot": snapshot}]})
        req = urllib.request.Request(f"{served.url}/v1/namespaces/v3/tables/t", data=body.encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    snap = {"snapshot-id": 7, "sequence-number": 1, "timestamp-ms": 1700000000000,
            "manifest-list": "file:///nowhere/snap-7.avro", "summary": {"operation": "append"}}
    status, body = commit(snap)
    assert status == 400 and "needs integer 'first-row-id' and 'added-rows'" in body, body
    status, body = commit({**snap, "first-row-id": -1, "added-rows": 3})
    assert status == 409 and "first-row-id -1 is behind the table's next-row-id 0" in body, body
    assert cat.load_table("v3.t").metadata.snapshots == []

    with pytest.raises(BadRequestError, match="format-version is not a property to set"):
        with cat.load_table("v3.t").transaction() as tx:
            tx.set_properties({"format-version": "2"})

    assert "format:    Iceberg v3" in skade.ok("describe", "v3.t")
    (tmp_path / "rows.jsonl").write_text("".join(f'{{"id": {i}, "city": "c{i}", "n": {i}}}\n' for i in range(5)))
    skade.ok("append", "v3.t", tmp_path / "rows.jsonl")
    skade.ok("delete", "v3.t", "--where", "id = 3")
    t = cat.load_table("v3.t")
    assert t.metadata.next_row_id == 5
    assert [(s.first_row_id, s.added_rows) for s in t.metadata.snapshots] == [(0, 5), (5, 0)]
    assert rows(t.scan().to_arrow()) == [(0, "c0", 0), (1, "c1", 1), (2, "c2", 2), (4, "c4", 4)]


def test_nanosecond_timestamp_columns_need_format_version_3(rest, skade, tmp_path):
    """A client's table with `timestamp_ns` and `timestamptz_ns` columns: made as format
    version 3, with the types as PyIceberg sent them, written by skade's CLI to the nanosecond
    and read back so by PyIceberg; asked for as format version 2, refused naming the column."""
    cat = rest()
    cat.create_namespace("ns")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "at", TimestampNanoType()),
                    NestedField(3, "at_tz", TimestamptzNanoType()))
    with pytest.raises(BadRequestError, match="column 'at' of type timestamp_ns needs format version 3"):
        cat.create_table("ns.old", schema=schema)
    t = cat.create_table("ns.t", schema=schema, properties={"format-version": "3"})
    assert [type(f.field_type) for f in t.schema().fields][1:] == [TimestampNanoType, TimestamptzNanoType]
    (tmp_path / "rows.jsonl").write_text(
        '{"id": 1, "at": "2017-11-16T22:31:08.123456789", "at_tz": "2017-11-16T22:31:08.000000001Z"}\n')
    skade.ok("append", "ns.t", tmp_path / "rows.jsonl")
    got = cat.load_table("ns.t").scan().to_arrow()
    assert got.column("at").cast(pa.int64()).to_pylist() == [1_510_871_468_123_456_789]
    assert got.column("at_tz").cast(pa.int64()).to_pylist() == [1_510_871_468_000_000_001]
