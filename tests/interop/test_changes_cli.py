"""`skade changes`: the changelog between snapshots, with PyIceberg's commits in the range too."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq


def _snapshots(skade, table):
    return [json.loads(line) for line in skade.ok("snapshots", table, "--format", "jsonl").splitlines()]


def _changes(skade, table, *args):
    out = skade.ok("changes", table, "--format", "jsonl", *args)
    return [json.loads(line) for line in out.splitlines()]


def test_changes_between_snapshots(skade, catalog, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!, v:string", "--identifier", "id")
    base = pa.table({"id": pa.array(range(10), pa.int64()), "v": [f"a{i}" for i in range(10)]})
    pq.write_table(base, tmp_path / "base.parquet")
    skade.ok("append", "db.t", str(tmp_path / "base.parquet"))
    up = pa.table({"id": pa.array([1, 2, 42], pa.int64()), "v": ["b1", "b2", "new"]})
    pq.write_table(up, tmp_path / "up.parquet")
    skade.ok("upsert", "db.t", str(tmp_path / "up.parquet"))
    skade.ok("delete", "db.t", "--where", "id >= 8")
    # PyIceberg appends through the same catalog: its rows are changes too.
    table = catalog().load_table("db.t")
    table.append(pa.table({"id": pa.array([100], pa.int64()), "v": ["py"]}, schema=table.schema().as_arrow()))
    snaps = _snapshots(skade, "db.t")
    assert len(snaps) == 4
    first = snaps[0]["snapshot_id"]

    every = _changes(skade, "db.t", "--from", "0")
    assert sum(1 for r in every if r["_change_type"] == "INSERT" and r["_change_ordinal"] == 0) == 10
    per = _changes(skade, "db.t", "--from", str(first), "--compute-updates")
    kinds = sorted((r["_change_type"], r["id"]) for r in per)
    assert kinds == sorted([
        ("UPDATE_BEFORE", 1), ("UPDATE_AFTER", 1), ("UPDATE_BEFORE", 2), ("UPDATE_AFTER", 2),
        ("INSERT", 42), ("DELETE", 8), ("DELETE", 9), ("DELETE", 42), ("INSERT", 100),
    ])
    after = {r["id"]: r["v"] for r in per if r["_change_type"] == "UPDATE_AFTER"}
    assert after == {1: "b1", 2: "b2"}
    assert {r["_commit_snapshot_id"] for r in per} == {s["snapshot_id"] for s in snaps[1:]}
    assert sorted({r["_change_ordinal"] for r in per}) == [0, 1, 2]

    net = _changes(skade, "db.t", "--from", str(first), "--net", "--columns", "id")
    assert sorted((r["_change_type"], r["id"]) for r in net) == sorted([
        ("DELETE", 1), ("INSERT", 1), ("DELETE", 2), ("INSERT", 2),
        ("DELETE", 8), ("DELETE", 9), ("INSERT", 100),
    ])
    assert set(net[0]) == {"id", "_change_type", "_change_ordinal", "_commit_snapshot_id"}

    filtered = _changes(skade, "db.t", "--from", str(first), "--where", "id = 42")
    assert [(r["_change_type"], r["id"]) for r in filtered] == [("INSERT", 42), ("DELETE", 42)]


def test_changes_bad_input(skade):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!")
    rc, _, err = skade("changes", "db.t", "--from", "abc")
    assert rc == 1 and "--from" in err  # a malformed number is a usage error
    rc, _, err = skade("changes", "db.t", "--from", "12345")
    assert rc == 2 and "12345" in err
    rc, _, err = skade("changes", "db.t", "--from", "0", "--compute-updates")
    assert rc == 2 and "identifier" in err
    rc, _, err = skade("changes", "db.t")
    assert rc == 1
