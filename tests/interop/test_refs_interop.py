"""Tags and branches: skade creates, writes to, fast-forwards and rolls back refs; PyIceberg
reads the refs (table.refs(), scans at each ref's snapshot) and agrees with skade and an oracle;
skade reads a branch PyIceberg appended to."""
from __future__ import annotations

import random
import re

import pyarrow as pa

from row_oracle import ARROW, COLUMNS, SCHEMA, Oracle, RowGen, write_keys, write_rows
from skade_util import assert_same_rows, catalog_row

T = "db.refs"


def _sid(out):
    m = re.search(r"snapshot (\d+)", out)
    assert m, out
    return int(m.group(1))


def test_refs_tags_branches_fast_forward_rollback(skade, catalog, warehouse, tmp_path):
    rng = random.Random(31)
    gen = RowGen(rng)
    skade.ok("create-namespace", "db")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id", "--partition", "grp")
    main = Oracle(spec_fields=["grp"])
    n = [0]

    def f(rows, kind="rows"):
        n[0] += 1
        return write_rows(rows, tmp_path / f"{kind}{n[0]}.parquet")

    a = gen.fresh(20)
    s1 = _sid(skade.ok("append", T, f(a)))
    main.append(a)
    rows_s1 = main.visible()
    b = gen.fresh(15)
    s2 = _sid(skade.ok("append", T, f(b)))
    main.append(b)
    rows_s2 = main.visible()

    assert skade.ok("tag", T, "create", "v1", "--snapshot", s1).strip() == f"created tag v1 at snapshot {s1}"
    skade.ok("tag", T, "create", "v2")
    skade.ok("branch", T, "create", "dev")

    # work on dev only: append, upsert (with a repeated key), delete by filter, by key, overwrite
    dev = Oracle(spec_fields=["grp"])
    dev.rows = [dict(r) for r in main.rows]
    c = gen.fresh(10)
    d1 = _sid(skade.ok("append", T, f(c), "--branch", "dev"))
    dev.append(c)
    ups = gen.upsert_batch({r["id"] for r in dev.rows}, 8, dup=2)
    skade.ok("upsert", T, f(ups), "--branch", "dev")
    dev.upsert(ups)
    skade.ok("delete", T, "--where", "v < -500", "--branch", "dev")
    dev.delete_where(lambda r: r["v"] is not None and r["v"] < -500)
    keys = [{"id": r["id"]} for r in rng.sample(dev.visible(), 3)]
    skade.ok("delete", T, "--keys", write_keys(keys, tmp_path / "keys", "jsonl"), "--branch", "dev")
    dev.delete_keys(keys)
    new = gen.fresh(4)
    out = skade.ok("overwrite", T, f(new), "--where", "grp = 'a'", "--branch", "dev")
    dev.overwrite_where(lambda r: r["grp"] == "a", new)
    dev_head = _sid(out)

    expect = {"main": rows_s2, "v1": rows_s1, "v2": rows_s2, "dev": dev.visible()}
    heads = {"main": s2, "v1": s1, "v2": s2, "dev": dev_head}
    types = {"main": "branch", "v1": "tag", "v2": "tag", "dev": "branch"}

    def check_refs(what):
        tbl = catalog().load_table(T)
        refs = tbl.refs()
        assert {k: (v.snapshot_id, v.snapshot_ref_type.value) for k, v in refs.items()} == \
            {k: (heads[k], types[k]) for k in heads}, what
        assert tbl.metadata.current_snapshot_id == heads["main"]
        assert_same_rows(tbl.scan().to_arrow(), expect["main"], COLUMNS, what=f"{what}: PyIceberg current")
        assert_same_rows(skade.rows(T), expect["main"], COLUMNS, what=f"{what}: skade main")
        for name, want in expect.items():
            assert_same_rows(tbl.scan(snapshot_id=refs[name].snapshot_id).to_arrow(), want, COLUMNS,
                             what=f"{what}: PyIceberg at {name}")
            assert_same_rows(skade.rows(T, "--ref", name), want, COLUMNS, what=f"{what}: skade --ref {name}")

    check_refs("after dev writes")
    # dev's history: its head's ancestors run back through d1 to s2
    tbl = catalog().load_table(T)
    chain, sid = [], dev_head
    while sid is not None:
        chain.append(sid)
        sid = tbl.snapshot_by_id(sid).parent_snapshot_id
    assert chain[-3:] == [d1, s2, s1] and len(chain) == 7

    # PyIceberg appends to dev too; skade reads it on the branch
    e = gen.fresh(6)
    tbl.append(pa.Table.from_pylist(e, schema=ARROW), branch="dev")
    dev.append(e)
    tbl = catalog().load_table(T)
    heads["dev"] = tbl.refs()["dev"].snapshot_id
    expect["dev"] = dev.visible()
    assert heads["dev"] != dev_head
    check_refs("after PyIceberg's append to dev")

    # fast-forward main to dev
    skade.ok("branch", T, "fast-forward", "main", "--to", "dev")
    heads["main"] = heads["dev"]
    expect["main"] = dev.visible()
    check_refs("after fast-forward")

    # a branch off v1 that diverges: main cannot fast-forward to it (table unchanged)
    skade.ok("branch", T, "create", "old", "--snapshot", s1)
    g = gen.fresh(3)
    o1 = _sid(skade.ok("append", T, f(g), "--branch", "old"))
    heads["old"], types["old"], expect["old"] = o1, "branch", rows_s1 + g
    before = catalog_row(warehouse, T)
    rc, out, err = skade("branch", T, "fast-forward", "main", "--to", "old")
    assert rc == 2 and "ancestor" in err, (rc, out, err)
    assert catalog_row(warehouse, T) == before
    # nor roll main back to a snapshot outside its history
    rc, out, err = skade("rollback", T, o1)
    assert rc == 2 and str(o1) in err, (rc, out, err)
    assert catalog_row(warehouse, T) == before
    check_refs("after refused fast-forward and rollback")

    # roll main back to s1; refs elsewhere stay
    assert skade.ok("rollback", T, s1).strip() == f"rolled {T} back to snapshot {s1}"
    heads["main"], expect["main"] = s1, rows_s1
    check_refs("after rollback")
    # main writes on from s1
    h = gen.fresh(5)
    m2 = _sid(skade.ok("append", T, f(h)))
    heads["main"], expect["main"] = m2, rows_s1 + h
    assert catalog().load_table(T).snapshot_by_id(m2).parent_snapshot_id == s1
    check_refs("after appending to rolled-back main")

    # drop a tag and a branch; main cannot be dropped
    skade.ok("tag", T, "drop", "v2")
    skade.ok("branch", T, "drop", "dev")
    for k in ("v2", "dev"):
        del heads[k], types[k], expect[k]
    rc, out, err = skade("branch", T, "drop", "main")
    assert rc == 2 and "main" in err, (rc, out, err)
    check_refs("after drops")

    # a tag reads with its snapshot's schema, a branch with the table's (as Java does)
    skade.ok("alter", T, "add-column", "note", "string")
    assert skade.rows(T, "--ref", "v1").column_names == COLUMNS
    assert skade.rows(T, "--ref", "old").column_names == COLUMNS + ["note"]
    assert catalog().load_table(T).scan(snapshot_id=s1).to_arrow().column_names == COLUMNS

    ops = [r["operation"] for r in skade.log("--table", T) if r["action"] == "commit"]
    for op in ("create-tag", "create-branch", "fast-forward", "rollback"):
        assert op in ops, ops
