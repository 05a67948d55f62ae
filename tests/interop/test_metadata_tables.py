"""`skade files`, `partitions`, `manifests`, `history` and `refs` (Iceberg's metadata tables) agree
with PyIceberg's `inspect` over the same snapshots: on a table skade wrote through appends,
position and equality deletes, an upsert, a partition evolution, a tag and a branch; and on
a table PyIceberg wrote. Also the text form of partitions, the snapshot options, and errors.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import DayTransform, IdentityTransform, MonthTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestamptzType

from skade_util import local_path

T = "m.orders"
SCHEMA = "id:long!, c:string, ts:timestamptz, amt:double, d:decimal(10,2)"
ARROW = pa.schema([
    pa.field("id", pa.int64(), nullable=False), pa.field("c", pa.string()),
    pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("amt", pa.float64()),
    pa.field("d", pa.decimal128(10, 2)),
])
UTC = dt.timezone.utc


def rows(ids, seed):
    r = random.Random(seed)
    return [{"id": i, "c": r.choice(["ada", "bo", None]),
             "ts": r.choice([None, dt.datetime(2024, 3, 1 + r.randint(0, 2), r.randint(0, 23), tzinfo=UTC)]),
             "amt": r.uniform(-10, 10), "d": decimal.Decimal(r.randint(-999, 999)).scaleb(-2)} for i in ids]


def parquet(path, ids, seed):
    pq.write_table(pa.Table.from_pylist(rows(ids, seed), schema=ARROW), path)
    return path


def json_value(v):
    """A partition value of PyIceberg's inspect as skade's jsonl writes it."""
    return v.isoformat() if isinstance(v, (dt.date, dt.datetime)) else v


def their_partition(tbl, spec_id, partition):
    """PyIceberg's partition struct (the union of the specs' fields) cut to the row's spec."""
    return {f.name: json_value(partition.get(f.name)) for f in tbl.metadata.specs()[spec_id].fields}


def metric_text_equal(mine: str, theirs) -> bool:
    if theirs is None:
        return mine == ""
    if isinstance(theirs, float):
        return float(mine) == theirs
    if isinstance(theirs, dt.datetime):
        return dt.datetime.fromisoformat(mine) == theirs
    if isinstance(theirs, decimal.Decimal):
        return decimal.Decimal(mine) == theirs
    return mine == str(theirs)


def check_files(skade, tbl, snapshot_id, *select):
    mine = {r["file_path"]: r for r in skade.jsonl("files", T, *select, "--bounds", "id,c,ts,amt,d")}
    theirs = tbl.inspect.files(snapshot_id=snapshot_id).to_pylist()
    assert sorted(mine) == sorted(str(local_path(f["file_path"])) for f in theirs), select
    kinds = {0: "data", 1: "position_deletes", 2: "equality_deletes"}
    for f in theirs:
        m = mine[str(local_path(f["file_path"]))]
        assert (m["content"], m["spec_id"], m["record_count"], m["file_size_in_bytes"]) == \
            (kinds[f["content"]], f["spec_id"], f["record_count"], f["file_size_in_bytes"]), m
        assert m["partition"] == their_partition(tbl, f["spec_id"], f["partition"]), m
        if f["content"] != 0:
            continue
        for col, metrics in f["readable_metrics"].items():
            assert m[f"{col}.nulls"] == metrics["null_value_count"], (col, m, metrics)
            for side in ("lower", "upper"):
                assert metric_text_equal(m[f"{col}.{side}"], metrics[f"{side}_bound"]), (col, side, m, metrics)
    return mine


def check_partitions(skade, tbl, snapshot_id, *select):
    mine = skade.jsonl("partitions", T, *select)
    theirs = tbl.inspect.partitions(snapshot_id=snapshot_id).to_pylist()
    key = lambda p: json.dumps(p, sort_keys=True)  # noqa: E731
    expected = []
    for p in theirs:
        row = dict(p, partition=their_partition(tbl, p["spec_id"], p["partition"]))
        at = row.pop("last_updated_at")
        row["last_updated_at"] = at.replace(tzinfo=UTC).timestamp() * 1000
        expected.append(row)
    for p in mine:
        p["last_updated_at"] = dt.datetime.fromisoformat(p["last_updated_at"]).timestamp() * 1000
    assert sorted(mine, key=key) == sorted(expected, key=key)
    return mine


def check_manifests(skade, tbl):
    mine = {r["path"]: r for r in skade.jsonl("manifests", T)}
    theirs = tbl.inspect.manifests().to_pylist()
    assert sorted(mine) == sorted(str(local_path(m["path"])) for m in theirs)
    for t in theirs:
        m = mine[str(local_path(t["path"]))]
        kind = "data" if t["content"] == 0 else "delete"
        assert (m["content"], m["length"], m["partition_spec_id"], m["added_snapshot_id"]) == \
            ("data" if t["content"] == 0 else "deletes", t["length"], t["partition_spec_id"], t["added_snapshot_id"])
        for state in ("added", "existing", "deleted"):
            assert m[f"{state}_files_count"] == t[f"{state}_{kind}_files_count"], (state, m, t)
        spec = tbl.metadata.specs()[t["partition_spec_id"]]
        ranges = []
        for f, s in zip(spec.fields, t["partition_summaries"]):
            text = f"{s['lower_bound']}..{s['upper_bound']}" if s["lower_bound"] is not None else ""
            if s["contains_null"]:
                text += "+null" if text else "null"
            ranges.append(f"{f.name}={text}")
        assert m["partitions"] == ", ".join(ranges), (m, t)


def test_metadata_tables_agree_with_pyiceberg_inspect(skade, catalog, tmp_path):
    skade.ok("create-namespace", "m")
    skade.ok("create", T, "--schema", SCHEMA, "--partition", "day(ts), bucket(4,id)", "--identifier", "id")
    skade.ok("append", T, parquet(tmp_path / "a.parquet", range(1, 41), 1), parquet(tmp_path / "b.parquet", range(41, 61), 2))
    first = skade.snapshots(T)[-1]["snapshot_id"]
    skade.ok("delete", T, "--where", "amt < -5")
    skade.ok("upsert", T, parquet(tmp_path / "u.parquet", [3, 7, 44, 70], 3))
    skade.ok("tag", T, "create", "before_evolution")
    skade.ok("alter", T, "add-partition", "c")
    skade.ok("append", T, parquet(tmp_path / "c.parquet", range(100, 120), 4))
    skade.ok("branch", T, "create", "b1")
    skade.ok("append", T, parquet(tmp_path / "d.parquet", range(200, 205), 5), "--branch", "b1")
    skade.ok("upsert", T, parquet(tmp_path / "e.parquet", [100, 101, 300], 6))

    tbl = catalog().load_table(T)
    files = check_files(skade, tbl, None)
    assert {f["content"] for f in files.values()} == {"data", "position_deletes"}
    assert {f["spec_id"] for f in files.values()} == {0, 1}
    for snap, select in ((first, ("--snapshot", first)),
                         (tbl.metadata.refs["before_evolution"].snapshot_id, ("--ref", "before_evolution")),
                         (tbl.metadata.refs["b1"].snapshot_id, ("--ref", "b1"))):
        check_files(skade, tbl, snap, *select)
        check_partitions(skade, tbl, snap, *select)
    parts = check_partitions(skade, tbl, None)
    assert sum(p["position_delete_file_count"] for p in parts) > 0
    check_manifests(skade, tbl)

    refs = {r["name"]: r for r in skade.jsonl("refs", T)}
    assert {(r["name"], r["type"], r["snapshot_id"]) for r in tbl.inspect.refs().to_pylist()} == \
        {(n, r["type"], r["snapshot_id"]) for n, r in refs.items()}

    # --content and the as-of time pick as PyIceberg's snapshot would
    data_only = skade.jsonl("files", T, "--content", "data")
    assert {f["file_path"] for f in data_only} == {p for p, f in files.items() if f["content"] == "data"}
    assert {f["content"] for f in skade.jsonl("files", T, "--content", "deletes")} == {"position_deletes"}
    first_ms = next(s for s in skade.snapshots(T) if s["snapshot_id"] == first)["timestamp"]
    assert skade.jsonl("files", T, "--as-of", first_ms) == skade.jsonl("files", T, "--snapshot", first)

    # history, across a rollback: the old snapshot made current again, the others no longer ancestors
    skade.ok("rollback", T, first)
    tbl = catalog().load_table(T)
    mine = skade.jsonl("history", T)
    theirs = tbl.inspect.history().to_pylist()
    assert [(h["snapshot_id"], h["parent_id"], h["is_current_ancestor"]) for h in mine] == \
        [(h["snapshot_id"], h["parent_id"], h["is_current_ancestor"]) for h in theirs]
    assert [dt.datetime.fromisoformat(h["made_current_at"]) for h in mine] == \
        [h["made_current_at"].replace(tzinfo=UTC) for h in theirs]
    assert mine[-1]["snapshot_id"] == first and sum(h["is_current_ancestor"] for h in mine) == 2


def test_equality_deletes_listed(skade, catalog, tmp_path):
    """A table that opts into equality deletes (its identifier determines the partition)."""
    skade.ok("create-namespace", "m")
    skade.ok("create", T, "--schema", SCHEMA, "--partition", "bucket(4,id)", "--identifier", "id",
             "--property", "skade.write.upsert.equality-deletes=true")
    skade.ok("append", T, parquet(tmp_path / "a.parquet", range(1, 41), 1))
    skade.ok("upsert", T, parquet(tmp_path / "u.parquet", [3, 7, 22, 50], 3))
    skade.ok("delete", T, "--where", "amt < -5")
    tbl = catalog().load_table(T)
    files = check_files(skade, tbl, None)
    assert {f["content"] for f in files.values()} == {"data", "position_deletes", "equality_deletes"}
    assert {f["equality_columns"] for f in files.values() if f["content"] == "equality_deletes"} == {"id"}
    parts = check_partitions(skade, tbl, None)
    assert sum(p["equality_delete_file_count"] for p in parts) > 0
    assert sum(p["equality_delete_record_count"] for p in parts) == 4  # one per upserted key, found or not
    check_manifests(skade, tbl)


def test_partition_text_is_the_data_folder(skade, tmp_path):
    """In table and csv output a partition reads as the folder its data files are in."""
    skade.ok("create-namespace", "m")
    skade.ok("create", T, "--schema", SCHEMA, "--partition", "day(ts), bucket(4,id), truncate(2,c)")
    skade.ok("append", T, parquet(tmp_path / "a.parquet", range(1, 30), 1))
    listed = skade.ok("files", T, "--format", "csv").splitlines()
    header = listed[0].split(",")
    for line in listed[1:]:
        f = dict(zip(header, line.split(",")))
        assert f["file_path"].split("/data/", 1)[1].rsplit("/", 1)[0] == f["partition"], f
    texts = [line.split(",")[0] for line in skade.ok("partitions", T, "--format", "csv").splitlines()[1:]]
    assert len(texts) == len(set(texts)) == len(listed) - 1
    assert any(t.startswith("ts_day=null/") for t in texts) and any("/c_trunc=null" in t for t in texts)
    # sorted by value, nulls first: the day field leads
    days = [t.split("/")[0].split("=")[1] for t in texts]
    assert days == sorted(days, key=lambda d: (d != "null", d))
    parts = skade.jsonl("partitions", T)
    assert all(isinstance(p["partition"]["id_bucket"], int) for p in parts)
    assert sum(p["record_count"] for p in parts) == 29


def test_tables_pyiceberg_wrote(skade, catalog, tmp_path):
    """skade lists PyIceberg's files, partitions and manifests as PyIceberg does."""
    skade.ok("create-namespace", "m")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "c", StringType()),
                    NestedField(3, "ts", TimestamptzType()), NestedField(4, "amt", DoubleType()))
    spec = PartitionSpec(PartitionField(3, 1000, MonthTransform(), "ts_month"),
                         PartitionField(2, 1001, IdentityTransform(), "c"))
    order = SortOrder(SortField(source_id=2, transform=IdentityTransform(), direction=SortDirection.DESC,
                                null_order=NullOrder.NULLS_LAST),
                      SortField(source_id=3, transform=DayTransform()))
    tbl = catalog().create_table(T, schema=schema, partition_spec=spec, sort_order=order)
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("c", pa.string()),
                       pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("amt", pa.float64())])
    data = [{k: v for k, v in r.items() if k != "d"} for r in rows(range(50), 9)]
    tbl.append(pa.Table.from_pylist(data[:30], schema=arrow))
    tbl.append(pa.Table.from_pylist(data[30:], schema=arrow))
    tbl.delete("id < 5")
    tbl = catalog().load_table(T)
    mine = {r["file_path"]: r for r in skade.jsonl("files", T, "--bounds", "id,c,amt")}
    theirs = tbl.inspect.files().to_pylist()
    assert sorted(mine) == sorted(str(local_path(f["file_path"])) for f in theirs)
    for f in theirs:
        m = mine[str(local_path(f["file_path"]))]
        assert m["partition"] == their_partition(tbl, f["spec_id"], f["partition"])
        assert m["record_count"] == f["record_count"]
        assert metric_text_equal(m["id.lower"], f["readable_metrics"]["id"]["lower_bound"])
    assert {json.dumps(p["partition"], sort_keys=True) for p in skade.jsonl("partitions", T)} == \
        {json.dumps(their_partition(tbl, p["spec_id"], p["partition"]), sort_keys=True)
         for p in tbl.inspect.partitions().to_pylist()}
    check_manifests(skade, tbl)
    # the sort order PyIceberg set is shown (skade's own writes do not sort)
    assert "sort order: c desc nulls-last, day(ts) asc nulls-first" in skade.ok("describe", T)


@pytest.mark.parametrize("args, message", [
    (("files", T, "--bounds", "nope,amt"), "--bounds: 'nope' is not a column"),
    (("files", T, "--bounds", "s"), "'s' is a struct<"),
    (("files", T, "--content", "rows"), "--content must be data, deletes or all"),
    (("partitions", T, "--snapshot", "12345"), "snapshot 12345 does not exist"),
    (("manifests", T, "--ref", "nope"), "no branch or tag named 'nope'"),
    (("files", T, "--snapshot", "1", "--ref", "main"), "excludes"),
    (("partitions", T, "--as-of", "yesterday"), "invalid timestamp 'yesterday'"),
    (("refs", "m.missing"), "m.missing"),
])
def test_errors_name_the_problem(skade, args, message):
    skade.ok("create-namespace", "m")
    skade.ok("create", T, "--schema", "id:long, s:struct<a:int>, amt:double")
    rc, out, err = skade(*args)
    assert rc != 0 and message in err, (rc, out, err)


def test_empty_table_lists_nothing(skade):
    skade.ok("create-namespace", "m")
    skade.ok("create", T, "--schema", "id:long")
    assert "sort order: (unsorted)" in skade.ok("describe", T)
    for cmd in ("files", "partitions", "manifests"):
        assert skade.jsonl(cmd, T) == []
        assert "(none)" in skade.ok(cmd, T)
    assert [r["name"] for r in skade.jsonl("refs", T)] == []
