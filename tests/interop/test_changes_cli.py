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


def test_changes_carry_row_ids_on_format_v3(skade, tmp_path):
    """On a v3 table `changes --columns ...,_row_id,_last_updated_sequence_number` gives each
    change its row's id as its file held it: an upsert's UPDATE_BEFORE and UPDATE_AFTER share the
    id the row keeps, a deleted row shows the id and sequence number it had, new keys new ids;
    `_file` names the file a row leaves or enters. The lineage columns are refused on v2 tables."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.v3", "--schema", "id:long!, v:string", "--identifier", "id", "--property", "format-version=3")
    pq.write_table(pa.table({"id": pa.array(range(10), pa.int64()), "v": [f"a{i}" for i in range(10)]}),
                   tmp_path / "base.parquet")
    skade.ok("append", "db.v3", str(tmp_path / "base.parquet"))
    before = {r["id"]: r for r in json.loads("[" + ",".join(skade.ok(
        "scan", "db.v3", "--columns", "id,_row_id,_last_updated_sequence_number,_file", "--format", "jsonl"
    ).splitlines()) + "]")}
    first = _snapshots(skade, "db.v3")[0]["snapshot_id"]
    pq.write_table(pa.table({"id": pa.array([1, 2, 42], pa.int64()), "v": ["b1", "b2", "new"]}), tmp_path / "up.parquet")
    skade.ok("upsert", "db.v3", str(tmp_path / "up.parquet"))
    skade.ok("delete", "db.v3", "--where", "id = 7")
    columns = "id,v,_row_id,_last_updated_sequence_number,_file"
    got = _changes(skade, "db.v3", "--from", str(first), "--compute-updates", "--columns", columns)
    by = {(r["_change_type"], r["id"]): r for r in got}
    assert sorted(by) == sorted([("UPDATE_BEFORE", 1), ("UPDATE_AFTER", 1), ("UPDATE_BEFORE", 2), ("UPDATE_AFTER", 2),
                                 ("INSERT", 42), ("DELETE", 7)]), got
    for i in (1, 2):
        old, new = by[("UPDATE_BEFORE", i)], by[("UPDATE_AFTER", i)]
        assert old["_row_id"] == new["_row_id"] == before[i]["_row_id"], (old, new)
        assert old["_last_updated_sequence_number"] == 1 and new["_last_updated_sequence_number"] == 2
        assert old["_file"] == before[i]["_file"] != new["_file"]
    assert by[("DELETE", 7)]["_row_id"] == before[7]["_row_id"] and by[("DELETE", 7)]["_file"] == before[7]["_file"]
    assert by[("INSERT", 42)]["_row_id"] >= 10 and by[("INSERT", 42)]["_file"] == by[("UPDATE_AFTER", 1)]["_file"]
    net = _changes(skade, "db.v3", "--from", str(first), "--net", "--columns", "id,_row_id")
    ids = {i: before[i]["_row_id"] for i in (1, 2, 7)} | {42: by[("INSERT", 42)]["_row_id"]}
    assert sorted((r["_change_type"], r["id"], r["_row_id"]) for r in net) == sorted(
        [("DELETE", 1, ids[1]), ("INSERT", 1, ids[1]), ("DELETE", 2, ids[2]), ("INSERT", 2, ids[2]),
         ("INSERT", 42, ids[42]), ("DELETE", 7, ids[7])]), net

    # A copy-on-write delete rewrites a file: the rows it carries over move to a new file (a new
    # `_file`) but are no changes.
    skade.ok("alter", "db.v3", "set-property", "write.delete.mode=copy-on-write")
    last = _snapshots(skade, "db.v3")[-1]["snapshot_id"]
    skade.ok("delete", "db.v3", "--where", "id = 3")
    (gone,) = _changes(skade, "db.v3", "--from", str(last), "--columns", "id,_row_id,_file")
    assert (gone["_change_type"], gone["id"], gone["_row_id"]) == ("DELETE", 3, before[3]["_row_id"]), gone

    skade.ok("create", "db.v2", "--schema", "id:long!")
    rc, _, err = skade("changes", "db.v2", "--from", "0", "--columns", "id,_row_id")
    assert rc != 0 and "_row_id is a column of format v3 tables (this table is v2)" in err, err
