"""Key deletes read back right, then compact into files PyIceberg reads.

A table whose data file has many row groups gets a run of upserts and key deletes, each its
own delete file with its own sequence number (equality deletes with
skade.write.upsert.equality-deletes=true, position deletes by default); keys deleted by one
commit are inserted again by a later one, so only the sequence-number rules keep those rows.
skade's scan must equal a Python oracle after every step and at every earlier snapshot; after
`skade compact` no delete file is left and PyIceberg's scan equals skade's and the oracle's.
"""
from __future__ import annotations

import random
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from row_oracle import COLUMNS, SCHEMA, Oracle, RowGen, live_entries, write_keys, write_rows
from skade_util import assert_same_rows, local_path

T = "db.eq"
EQ = "skade.write.upsert.equality-deletes=true"


def _snapshot(out: str) -> int:
    m = re.search(r"snapshot (\d+)", out)
    assert m, out
    return int(m.group(1))


@pytest.mark.parametrize("deletes", ["equality", "position"])
def test_key_deletes_across_row_groups_and_sequence_numbers_then_compact(skade, catalog, warehouse, tmp_path,
                                                                          deletes):
    rng = random.Random(31)
    props = ["--property", "write.parquet.row-group-limit=64"]
    if deletes == "equality":
        props += ["--property", EQ]
    skade.ok("create-namespace", "db")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id", *props)
    gen, oracle = RowGen(rng), Oracle()
    first = gen.fresh(600)
    skade.ok("append", T, write_rows(first, tmp_path / "a.parquet"))
    oracle.append(first)
    data_file = local_path(live_entries(warehouse, T)[0]["file_path"])
    assert pq.ParquetFile(data_file).num_row_groups >= 8

    history = []  # (snapshot id, oracle rows then)
    deleted_ids: list[int] = []
    for step in range(8):
        ids = [r["id"] for r in oracle.rows]
        if step % 3 == 2 and deleted_ids:
            # Keys an earlier delete file removed come back: a newer data file is not hit by it.
            back = [gen.row(i) for i in rng.sample(deleted_ids, min(10, len(deleted_ids)))]
            out = skade.ok("upsert", T, write_rows(back, tmp_path / f"b{step}.parquet"))
            oracle.upsert(back)
        elif step % 2 == 0:
            new = gen.upsert_batch(set(ids), 40, dup=3)  # keys from every row group of the big file
            out = skade.ok("upsert", T, write_rows(new, tmp_path / f"u{step}.parquet"))
            oracle.upsert(new)
        else:
            gone = rng.sample(ids, 25)
            deleted_ids += gone
            keys = [{"id": i} for i in gone]
            out = skade.ok("delete", T, "--keys", write_keys(keys, tmp_path / f"k{step}", "parquet"))
            oracle.delete_keys(keys)
        history.append((_snapshot(out), oracle.visible()))
        assert_same_rows(skade.rows(T), oracle.visible(), COLUMNS, what=f"skade after step {step}")

    kind = 2 if deletes == "equality" else 1
    entries = live_entries(warehouse, T)
    assert len([e for e in entries if e["content"] == kind]) >= 6, entries
    assert not [e for e in entries if e["content"] == 3 - kind], entries
    for sid, rows in history:  # time travel applies only the delete files of that snapshot
        assert_same_rows(skade.rows(T, "--snapshot", sid), rows, COLUMNS, what=f"skade at snapshot {sid}")

    skade.ok("compact", T)
    assert {e["content"] for e in live_entries(warehouse, T)} == {0}
    after = skade.rows(T)
    assert_same_rows(after, oracle.visible(), COLUMNS, what="skade after compact")
    theirs = catalog().load_table(T).scan().to_arrow()
    assert_same_rows(theirs, oracle.visible(), COLUMNS, what="PyIceberg after compact")
    assert_same_rows(theirs, after.to_pylist(), COLUMNS, what="PyIceberg vs skade after compact")


def test_equality_deletes_over_a_two_column_key(skade, catalog, warehouse, tmp_path):
    """A key of a long and a string (hashed and compared column by column), several delete
    files merged into one key set per data file; keys differing in one column survive."""
    schema = "id:long!, name:string!, v:int"
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string(), nullable=False),
                       pa.field("v", pa.int32())])
    rng = random.Random(7)
    skade.ok("create-namespace", "db")
    skade.ok("create", T, "--schema", schema, "--identifier", "id,name", "--property", EQ,
             "--property", "write.parquet.row-group-limit=50")
    oracle = Oracle(identifier=("id", "name"))
    names = ["a", "b", "ä", "long name " * 3, ""]
    rows = [{"id": i, "name": n, "v": rng.randint(0, 99)} for i in range(80) for n in names[: 1 + i % 5]]
    skade.ok("append", T, write_rows(rows, tmp_path / "a.parquet", arrow))
    oracle.append(rows)
    for step in range(4):
        live = oracle.visible()
        picked = rng.sample(live, 15)
        if step % 2 == 0:
            new = [{"id": r["id"], "name": r["name"], "v": 1000 + step} for r in picked]
            # same id, another name: a new key, not a replacement
            new += [{"id": r["id"], "name": r["name"] + "!", "v": 2000 + step} for r in picked[:5]]
            skade.ok("upsert", T, write_rows(new, tmp_path / f"u{step}.parquet", arrow))
            oracle.upsert(new)
        else:
            keys = pa.table({"id": pa.array([r["id"] for r in picked], pa.int64()),
                             "name": pa.array([r["name"] for r in picked], pa.string())})
            pq.write_table(keys, tmp_path / f"k{step}.parquet")
            skade.ok("delete", T, "--keys", tmp_path / f"k{step}.parquet")
            oracle.delete_keys(picked)
        assert_same_rows(skade.rows(T), oracle.visible(), ["id", "name", "v"], what=f"skade after step {step}")
    assert len([e for e in live_entries(warehouse, T) if e["content"] == 2]) == 4
    skade.ok("compact", T)
    assert {e["content"] for e in live_entries(warehouse, T)} == {0}
    theirs = catalog().load_table(T).scan().to_arrow()
    assert_same_rows(theirs, oracle.visible(), ["id", "name", "v"], what="PyIceberg after compact")
    assert_same_rows(skade.rows(T), oracle.visible(), ["id", "name", "v"], what="skade after compact")


@pytest.mark.parametrize("deletes", ["equality", "position"])
def test_compact_where_rewrites_only_the_matching_partitions(skade, catalog, warehouse, tmp_path, deletes):
    """`compact --where` rewrites the files that may hold a matching row (here: one
    partition's) and folds their deletes in; the other partitions keep their files and the
    delete files that apply to them, and every row reads the same, in skade and PyIceberg."""
    skade.ok("create-namespace", "db")
    props = ["--property", EQ] if deletes == "equality" else []
    skade.ok("create", "db.cw", "--schema", "id:long!, c:string!, v:int", "--partition", "c", "--identifier", "id,c",
             *props)
    for n in range(3):
        rows = "".join(f"{n * 10 + k},{c},{n}\n" for c in "ab" for k in range(3))
        (tmp_path / f"in{n}.csv").write_text("id,c,v\n" + rows)
        skade.ok("append", "db.cw", tmp_path / f"in{n}.csv")
    (tmp_path / "up.csv").write_text("id,c,v\n1,a,100\n11,b,100\n")
    skade.ok("upsert", "db.cw", tmp_path / "up.csv")
    skade.ok("delete", "db.cw", "--where", "v = 2 and id = 22")
    before = catalog().load_table("db.cw").scan().to_arrow() if deletes == "position" else skade.rows("db.cw")
    entries = live_entries(warehouse, "db.cw")
    by_part = lambda es, part, content: sorted(e["file_path"] for e in es  # noqa: E731
                                               if e["partition"]["c"] == part and e["content"] in content)
    assert len(by_part(entries, "a", (0,))) == 4 and by_part(entries, "a", (1, 2))
    assert len(by_part(entries, "b", (0,))) == 4 and by_part(entries, "b", (1, 2))

    out = skade.ok("compact", "db.cw", "--where", "c = 'a'")
    assert "rows rewritten into 1 files" in out, out
    after = live_entries(warehouse, "db.cw")
    assert len(by_part(after, "a", (0,))) == 1 and not by_part(after, "a", (1, 2))
    assert by_part(after, "b", (0,)) == by_part(entries, "b", (0,))
    assert by_part(after, "b", (1, 2)) == by_part(entries, "b", (1, 2))
    assert_same_rows(skade.rows("db.cw"), before, what="skade after compact --where")
    if deletes == "position":
        assert_same_rows(catalog().load_table("db.cw").scan().to_arrow(), before, what="PyIceberg")
    # a filter matching no file changes nothing; a bad one is refused
    assert "nothing to compact" in skade.ok("compact", "db.cw", "--where", "c = 'zz'")
    rc, _, err = skade("compact", "db.cw", "--where", "nope = 1")
    assert rc == 2 and "unknown column 'nope' in filter" in err, err
    assert live_entries(warehouse, "db.cw") == after
    # describe counts what is left to fold in
    data = [e for e in after if e["content"] == 0]
    dels = [e for e in after if e["content"]]
    kind = 2 if deletes == "equality" else 1
    rows_deleted = sum(e["record_count"] for e in dels if e["content"] == kind)
    text = skade.ok("describe", "db.cw")
    assert f"files:     {len(data)} data, {len(dels)} delete;" in text, text
    assert (f"{sum(e['record_count'] for e in data)} in data files; " +
            (f"{rows_deleted} position and 0 equality" if kind == 1 else
             f"{sum(e['record_count'] for e in dels if e['content'] == 1)} position and {rows_deleted} equality")
            + " deletes against them") in text, text
    # without --where the rest is folded in too: no delete file is left
    skade.ok("compact", "db.cw")
    assert not [e for e in live_entries(warehouse, "db.cw") if e["content"]]
    assert "delete; " in skade.ok("describe", "db.cw") and ", 0 delete;" in skade.ok("describe", "db.cw")
    assert_same_rows(catalog().load_table("db.cw").scan().to_arrow(), before, what="PyIceberg after compact")
