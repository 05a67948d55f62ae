"""PyIceberg reads what skade's row-level commands wrote: random sequences of appends, deletes
(by filter and by key), upserts and overwrites, checked against a Python oracle — PyIceberg's
scan, now and at every snapshot, equals skade's scan equals the oracle.

PyIceberg 0.12 reads position deletes but not equality deletes; skade writes equality deletes
only when a table sets skade.write.upsert.equality-deletes=true, which
test_upsert_equality_deletes_by_property checks.
"""
from __future__ import annotations

import decimal
import random
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from row_oracle import (
    ARROW,
    COLUMNS,
    SCHEMA,
    Oracle,
    RowGen,
    live_entries,
    random_filter,
    write_keys,
    write_rows,
)
from skade_util import assert_same_rows, current_metadata

T = "db.rl"
ALL_OPS = ["append", "delete_where", "delete_keys", "upsert", "overwrite_where", "overwrite_dynamic"]
NO_KEY_OPS = ["append", "delete_where", "overwrite_where", "overwrite_dynamic"]

# (id, partition spec, write.delete.mode, ops, seed)
CONFIGS = [
    ("unpart_cow", None, "copy-on-write", NO_KEY_OPS, 11),
    ("identity_grp_mor", "grp", "merge-on-read", ALL_OPS, 12),
    ("identity_grp_cow", "grp", "copy-on-write", ALL_OPS, 13),
    ("bucket_k_day_ts_mor", "bucket(4,k), day(ts)", "merge-on-read", ALL_OPS, 14),
]
WEIGHTS = {"append": 3, "delete_where": 3, "delete_keys": 2, "upsert": 4, "overwrite_where": 2,
           "overwrite_dynamic": 2}
# skade's snapshot operation per command (a delete that only drops/rewrites is still a delete
# or an overwrite; both are right for copy-on-write)
LOG_OPS = {"append": {"append"}, "delete_where": {"delete", "overwrite"}, "delete_keys": {"delete", "overwrite"},
           "upsert": {"overwrite"}, "overwrite_where": {"overwrite"}, "overwrite_dynamic": {"overwrite"}}


def snapshot_of(out: str):
    if "nothing to change" in out:
        return None
    m = re.search(r"snapshot (\d+)", out)
    assert m, out
    return int(m.group(1))


def run_op(skade, tmp_path, oracle: Oracle, gen: RowGen, rng: random.Random, op: str, step: int, table=T,
           arrow=ARROW, extra_args=()):
    """Runs one random command on skade and on the oracle; returns skade's stdout."""
    rows = oracle.visible()
    base = tmp_path / f"in{step:03}"
    if op == "append":
        new = gen.fresh(rng.randint(5, 25))
        out = skade.ok("append", table, write_rows(new, base.with_suffix(".parquet"), arrow), *extra_args)
        oracle.append(new)
    elif op == "delete_where":
        where, _py, pred = random_filter(rng, rows)
        out = skade.ok("delete", table, "--where", where, *extra_args)
        oracle.delete_where(pred)
    elif op == "delete_keys":
        ids = [r["id"] for r in rows]
        keys = [{"id": i} for i in rng.sample(ids, min(len(ids), rng.randint(1, 8)))] + [{"id": 10**9 + step}]
        out = skade.ok("delete", table, "--keys", write_keys(keys, base, rng.choice(["parquet", "csv", "jsonl"])),
                       *extra_args)
        oracle.delete_keys(keys)
    elif op == "upsert":
        new = gen.upsert_batch({r["id"] for r in rows}, rng.randint(4, 14))
        out = skade.ok("upsert", table, write_rows(new, base.with_suffix(".parquet"), arrow), *extra_args)
        oracle.upsert(new)
    elif op == "overwrite_where":
        where, _py, pred = random_filter(rng, rows)
        new = gen.fresh(rng.randint(1, 10))
        out = skade.ok("overwrite", table, write_rows(new, base.with_suffix(".parquet"), arrow), "--where", where,
                       *extra_args)
        oracle.overwrite_where(pred, new)
    elif op == "overwrite_dynamic":
        new = gen.fresh(rng.randint(2, 8))
        if oracle.spec_fields:  # touch few partitions: one or two groups, a narrow k range
            grps = rng.sample(["a", "b", "c", "d"], rng.randint(1, 2))
            for r in new:
                r["grp"] = rng.choice(grps)
                if r["k"] is not None:
                    r["k"] = rng.randint(0, 3)
        out = skade.ok("overwrite", table, write_rows(new, base.with_suffix(".parquet"), arrow), *extra_args)
        oracle.overwrite_dynamic(new)
    else:
        raise KeyError(op)
    return out


@pytest.mark.parametrize("name,partition,mode,ops,seed", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_pyiceberg_reads_row_level_sequence(skade, catalog, warehouse, tmp_path, name, partition, mode, ops, seed):
    rng = random.Random(seed)
    skade.ok("create-namespace", "db")
    args = ["create", T, "--schema", SCHEMA, "--identifier", "id", "--property", f"write.delete.mode={mode}"]
    if partition:
        args += ["--partition", partition]
    skade.ok(*args)
    oracle = Oracle(spec_fields=[p.strip() for p in re.split(r",\s*(?![^()]*\))", partition)] if partition else [])
    gen = RowGen(rng)

    history = []  # (snapshot id, op, rows after it)
    first = gen.fresh(40)
    out = skade.ok("append", T, write_rows(first, tmp_path / "in-first.parquet"))
    oracle.append(first)
    history.append((snapshot_of(out), "append", oracle.visible()))

    seq = ["upsert", "delete_keys", "delete_where", "overwrite_dynamic", "overwrite_where"]
    seq = [o for o in seq if o in ops]
    choices = [o for o in ops for _ in range(WEIGHTS[o])]
    seq += [rng.choice(choices) for _ in range(12)]
    for step, op in enumerate(seq):
        out = run_op(skade, tmp_path, oracle, gen, rng, op, step)
        sid = snapshot_of(out)
        if sid is not None:
            history.append((sid, op, oracle.visible()))
        assert_same_rows(skade.rows(T), oracle.visible(), COLUMNS, what=f"{name} step {step} {op}: skade")

    # PyIceberg: current state and every snapshot; skade at every snapshot
    tbl = catalog().load_table(T)
    assert tbl.metadata.current_snapshot_id == history[-1][0]
    py = tbl.scan().to_arrow()
    assert py.column_names == COLUMNS
    assert_same_rows(py, oracle.visible(), COLUMNS, what=f"{name}: PyIceberg current")
    assert [s.snapshot_id for s in tbl.snapshots()] == [h[0] for h in history]
    for k, (sid, op, want) in enumerate(history):
        assert_same_rows(tbl.scan(snapshot_id=sid).to_arrow(), want, COLUMNS, what=f"{name}: PyIceberg @{k} ({op})")
        assert_same_rows(skade.rows(T, "--snapshot", sid), want, COLUMNS, what=f"{name}: skade @{k} ({op})")

    # the delete mode is the one asked for, and never equality deletes (PyIceberg could not read)
    contents = set()
    for sid, _op, _rows in history:
        contents |= {e["content"] for e in live_entries(warehouse, T, sid)}
    assert 2 not in contents, f"{name}: equality deletes written"
    if mode == "copy-on-write":
        assert contents == {0}, f"{name}: copy-on-write table has delete files: {contents}"
    else:
        assert 1 in contents, f"{name}: merge-on-read sequence wrote no position deletes"

    # the commit log: one skade commit per snapshot, with the command's operation
    log = [r for r in skade.log("--table", T) if r["action"] == "commit"]
    assert [r["snapshot_id"] for r in log] == [h[0] for h in history]
    for r, (sid, op, _rows) in zip(log, history):
        assert r["engine"] == "skade"
        assert r["operation"] in LOG_OPS[op], (op, r)
        assert tbl.snapshot_by_id(sid).summary.operation.value == r["operation"]


# --- schema evolution ------------------------------------------------------------------------

EXTRA_AB = pa.struct([("a", pa.int32()), ("b", pa.string())])
EXTRA_ABC = pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.int64())])


def _evo_arrow(stage):
    """The input schema at each stage of the schema-evolution test."""
    i_t = pa.int64() if stage >= 5 else pa.int32()
    f_t = pa.float64() if stage >= 5 else pa.float32()
    dec_t = pa.decimal128(12, 2) if stage >= 5 else pa.decimal128(9, 2)
    fields = [pa.field("id", pa.int64(), nullable=False), pa.field("grp", pa.string()), pa.field("i", i_t)]
    if stage >= 1:
        fields.append(pa.field("extra", EXTRA_ABC if stage >= 2 else EXTRA_AB))
    fields += [pa.field("f", f_t), pa.field("dec", dec_t), pa.field("s2" if stage >= 3 else "s", pa.string())]
    if stage < 4:
        fields.append(pa.field("x", pa.string()))
    fields.append(pa.field("req", pa.string(), nullable=stage >= 6))
    return pa.schema(fields)


def _evo_row(rng, id_, stage):
    big = stage >= 5
    r = {
        "id": id_,
        "grp": rng.choice(["a", "b", "c"]),
        "i": None if rng.random() < 0.15 else (rng.randint(-(2**40), 2**40) if big else rng.randint(-(2**31), 2**31 - 1)),
        "f": None if rng.random() < 0.15 else (rng.uniform(-1e9, 1e9) if big else rng.randint(-4000, 4000) / 4),
        "dec": None if rng.random() < 0.15 else decimal.Decimal(rng.randint(-(10**11 if big else 10**8) + 1,
                                                                            (10**11 if big else 10**8) - 1)).scaleb(-2),
        ("s2" if stage >= 3 else "s"): None if rng.random() < 0.3 else rng.choice(["p", "q", "r", "ß"]),
        "req": None if stage >= 6 and rng.random() < 0.3 else rng.choice(["R1", "R2"]),
    }
    if stage >= 1:
        if rng.random() < 0.2:
            r["extra"] = None
        else:
            r["extra"] = {"a": rng.randint(0, 99), "b": rng.choice(["u", "v", None])}
            if stage >= 2:
                r["extra"]["c"] = None if rng.random() < 0.2 else rng.randint(-(2**50), 2**50)
    if stage < 4:
        r["x"] = rng.choice(["x1", "x2", None])
    return r


def test_pyiceberg_reads_after_schema_evolution(skade, catalog, warehouse, tmp_path):
    rng = random.Random(77)
    skade.ok("create-namespace", "db")
    skade.ok("create", T, "--schema",
             "id:long!, grp:string, i:int, f:float, dec:decimal(9,2), s:string, x:string, req:string!",
             "--identifier", "id", "--partition", "grp")
    oracle = Oracle(spec_fields=["grp"])
    history = []  # (snapshot id, what, columns, rows)
    next_id = [0]
    stage = [0]

    def cols():
        return [f.name for f in _evo_arrow(stage[0])]

    def rows(n, ids=None):
        out = []
        for _ in range(n):
            if ids:
                i = rng.choice(ids)
            else:
                i = next_id[0]
                next_id[0] += 1
            out.append(_evo_row(rng, i, stage[0]))
        return out

    def commit(what, out):
        sid = snapshot_of(out)
        assert sid is not None, out
        vis = oracle.visible()
        history.append((sid, what, cols(), vis))
        got = skade.rows(T)
        assert got.column_names == cols(), what
        assert_same_rows(got, vis, cols(), what=f"skade after {what}")

    def f(name):
        return tmp_path / f"{name}-{len(history)}.parquet"

    def append(n, what):
        new = rows(n)
        oracle.append(new)
        commit(what, skade.ok("append", T, _write(new, f("a"))))

    def _write(new, path):
        pq.write_table(pa.Table.from_pylist(new, schema=_evo_arrow(stage[0])), path)
        return path

    def upsert(n, what):
        ids = [r["id"] for r in oracle.rows]
        new = rows(n, ids) + rows(3)
        new.insert(2, _evo_row(rng, new[0]["id"], stage[0]))  # a duplicate key: last one wins
        oracle.upsert(new)
        commit(what, skade.ok("upsert", T, _write(new, f("u"))))

    def evolve(new_stage, fn, *args):
        skade.ok("alter", T, *args)
        for r in oracle.rows:
            fn(r)
        stage[0] = new_stage

    append(30, "append v0")
    upsert(6, "upsert v0")

    # add a struct column (placed after i), then a field inside it
    evolve(1, lambda r: r.setdefault("extra", None), "add-column", "extra", "struct<a:int,b:string>", "--after", "i")
    append(15, "append +extra")

    def add_c(r):
        if r["extra"] is not None:
            r["extra"]["c"] = None

    evolve(2, add_c, "add-column", "extra.c", "long")
    append(10, "append +extra.c")
    upsert(6, "upsert +extra.c")

    # rename s -> s2; delete by the new name (before any snapshot has the new schema)
    evolve(3, lambda r: r.__setitem__("s2", r.pop("s")), "rename-column", "s", "s2")
    oracle.delete_where(lambda r: r["s2"] == "p")
    commit("delete s2 = 'p'", skade.ok("delete", T, "--where", "s2 = 'p'"))
    append(8, "append renamed")

    # drop x
    evolve(4, lambda r: r.pop("x"), "drop-column", "x")
    ids = [r["id"] for r in oracle.rows]
    keys = [{"id": i} for i in rng.sample(ids, 5)]
    oracle.delete_keys(keys)
    commit("delete keys", skade.ok("delete", T, "--keys", write_keys(keys, tmp_path / "k4", "csv")))

    # widen int->long, float->double, decimal(9,2)->decimal(12,2): one alter, one new schema
    _, before = current_metadata(warehouse, T)
    skade.ok("alter", T, "widen-column", "i", "long", "widen-column", "f", "double",
             "widen-column", "dec", "decimal(12,2)")
    _, widened = current_metadata(warehouse, T)
    assert len(widened["schemas"]) == len(before["schemas"]) + 1
    stage[0] = 5
    append(12, "append widened")
    upsert(5, "upsert widened")

    # req becomes optional; rows without it
    skade.ok("alter", T, "set-optional", "req")
    stage[0] = 6
    append(12, "append req optional")
    upsert(5, "upsert req optional")
    new = rows(4)
    oracle.overwrite_where(lambda r: r["grp"] == "a" and r["i"] is not None and r["i"] < 0, new)
    commit("overwrite where", skade.ok("overwrite", T, _write(new, f("o")), "--where", "grp = 'a' and i < 0"))
    new = [dict(r, grp="b") for r in rows(3)]
    oracle.overwrite_dynamic(new)
    commit("dynamic overwrite", skade.ok("overwrite", T, _write(new, f("d"))))

    # the schema PyIceberg sees
    tbl = catalog().load_table(T)
    sch = tbl.schema()
    assert [f.name for f in sch.fields] == cols()
    assert str(sch.find_field("i").field_type) == "long"
    assert str(sch.find_field("f").field_type) == "double"
    assert str(sch.find_field("dec").field_type) == "decimal(12, 2)"
    assert not sch.find_field("req").required
    assert [f.name for f in sch.find_field("extra").field_type.fields] == ["a", "b", "c"]
    assert sch.identifier_field_names() == {"id"}

    py = tbl.scan().to_arrow()
    assert py.column_names == cols()
    assert_same_rows(py, oracle.visible(), cols(), what="PyIceberg current")
    assert [s.snapshot_id for s in tbl.snapshots()] == [h[0] for h in history]
    for sid, what, columns, want in history:
        got = tbl.scan(snapshot_id=sid).to_arrow()
        assert got.column_names == columns, f"PyIceberg @{what}"
        assert_same_rows(got, want, columns, what=f"PyIceberg @{what}")
        got = skade.rows(T, "--snapshot", sid)
        assert got.column_names == columns, f"skade @{what}"
        assert_same_rows(got, want, columns, what=f"skade @{what}")
    assert 2 not in {e["content"] for e in live_entries(warehouse, T)}


# --- partition evolution ---------------------------------------------------------------------


def test_pyiceberg_reads_after_partition_evolution(skade, catalog, warehouse, tmp_path):
    """Data written under five specs (grp; grp+day; grp+day+bucket; day+bucket; bucket), with
    upserts, deletes and dynamic overwrites under each; position deletes throughout."""
    rng = random.Random(99)
    skade.ok("create-namespace", "db")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id", "--partition", "grp")
    oracle = Oracle(spec_fields=["grp"])
    gen = RowGen(rng, k_range=12)
    history = []
    step = [0]

    def op(name):
        out = run_op(skade, tmp_path, oracle, gen, rng, name, step[0])
        step[0] += 1
        sid = snapshot_of(out)
        if sid is not None:
            history.append((sid, f"spec {oracle.spec_id} {name}", oracle.visible()))
        assert_same_rows(skade.rows(T), oracle.visible(), COLUMNS, what=f"skade spec {oracle.spec_id} {name}")

    def evolve(args, fields):
        skade.ok("alter", T, *args)
        oracle.evolve_spec(fields)
        _, meta = current_metadata(warehouse, T)
        assert meta["default-spec-id"] == oracle.spec_id

    plan = [
        (None, None),
        (("add-partition", "day(ts)"), ["grp", "day(ts)"]),
        (("add-partition", "bucket(4,k)"), ["grp", "day(ts)", "bucket(4,k)"]),
        (("drop-partition", "grp"), ["day(ts)", "bucket(4,k)"]),
        (("drop-partition", "ts_day"), ["bucket(4,k)"]),
    ]
    for change, fields in plan:
        if change:
            evolve(change, fields)
        for name in ["append", "append", "upsert", "delete_where", "overwrite_dynamic", "delete_keys",
                     rng.choice(["upsert", "overwrite_where"])]:
            op(name)

    tbl = catalog().load_table(T)
    assert sorted(tbl.specs()) == [0, 1, 2, 3, 4]
    assert [f.name for f in tbl.spec().fields] == ["k_bucket"]
    assert_same_rows(tbl.scan().to_arrow(), oracle.visible(), COLUMNS, what="PyIceberg current")
    for sid, what, want in history:
        assert_same_rows(tbl.scan(snapshot_id=sid).to_arrow(), want, COLUMNS, what=f"PyIceberg @{what}")
        assert_same_rows(skade.rows(T, "--snapshot", sid), want, COLUMNS, what=f"skade @{what}")
    # data files of every spec were written; position deletes, no equality deletes
    seen = {}
    for sid, _what, _rows in history:
        for e in live_entries(warehouse, T, sid):
            seen.setdefault(e["content"], set()).add(e["spec_id"])
    assert seen[0] == {0, 1, 2, 3, 4}
    assert 1 in seen and 2 not in seen
    # a partition filter on the new spec's source column reads right across specs
    k0 = next(r["k"] for r in oracle.visible() if r["k"] is not None)
    want = [r for r in oracle.visible() if r["k"] == k0]
    assert_same_rows(skade.rows(T, "--where", f"k = {k0}"), want, COLUMNS, what="skade k filter")
    assert_same_rows(tbl.scan(row_filter=f"k = {k0}").to_arrow(), want, COLUMNS, what="PyIceberg k filter")


# --- equality deletes ------------------------------------------------------------------------


def _eq_setup(skade, tmp_path, extra_create=()):
    rng = random.Random(5)
    skade.ok("create-namespace", "db")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id", *extra_create)
    gen = RowGen(rng)
    oracle = Oracle()
    first = gen.fresh(30)
    skade.ok("append", T, write_rows(first, tmp_path / "a.parquet"))
    oracle.append(first)
    return rng, gen, oracle


def _field_id(warehouse, col):
    _, meta = current_metadata(warehouse, T)
    schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
    return next(f["id"] for f in schema["fields"] if f["name"] == col)


def test_upsert_unpartitioned_writes_position_deletes_by_default(skade, catalog, warehouse, tmp_path):
    rng, gen, oracle = _eq_setup(skade, tmp_path)
    new = gen.upsert_batch({r["id"] for r in oracle.rows}, 10, dup=3)
    skade.ok("upsert", T, write_rows(new, tmp_path / "u.parquet"))
    oracle.upsert(new)
    ks = [{"id": r["id"]} for r in rng.sample(oracle.visible(), 4)]
    skade.ok("delete", T, "--keys", write_keys(ks, tmp_path / "k", "jsonl"))
    oracle.delete_keys(ks)
    contents = [e["content"] for e in live_entries(warehouse, T)]
    assert 2 not in contents and 1 in contents, contents
    assert_same_rows(skade.rows(T), oracle.visible(), COLUMNS, what="skade")
    assert_same_rows(catalog().load_table(T).scan().to_arrow(), oracle.visible(), COLUMNS, what="PyIceberg")


EQ_PROPERTY = ("--property", "skade.write.upsert.equality-deletes=true")


def test_upsert_equality_deletes_by_property(skade, catalog, warehouse, tmp_path):
    rng, gen, oracle = _eq_setup(skade, tmp_path, EQ_PROPERTY)
    new = gen.upsert_batch({r["id"] for r in oracle.rows}, 10, dup=3)
    out = skade.ok("upsert", T, write_rows(new, tmp_path / "u.parquet"))
    oracle.upsert(new)
    sid = snapshot_of(out)

    entries = live_entries(warehouse, T)
    eq = [e for e in entries if e["content"] == 2]
    assert eq, f"no equality delete file: {entries}"
    assert all(e["equality_ids"] == [_field_id(warehouse, "id")] for e in eq), eq
    assert not [e for e in entries if e["content"] == 1]

    assert_same_rows(skade.rows(T), oracle.visible(), COLUMNS, what="skade after upsert")
    keys = [r["id"] for r in oracle.visible()]
    assert len(keys) == len(set(keys))
    tbl = catalog().load_table(T)
    assert tbl.metadata.current_snapshot_id == sid
    with pytest.raises(ValueError, match="PyIceberg does not yet support equality deletes"):
        tbl.scan().to_arrow()
    # the snapshot before the upsert has no deletes and PyIceberg reads it
    parent = tbl.snapshot_by_id(sid).parent_snapshot_id
    assert len(tbl.scan(snapshot_id=parent).to_arrow()) == 30

    # delete --keys is an equality delete too
    ks = [{"id": i} for i in rng.sample(keys, 4)]
    skade.ok("delete", T, "--keys", write_keys(ks, tmp_path / "k", "jsonl"))
    oracle.delete_keys(ks)
    assert_same_rows(skade.rows(T), oracle.visible(), COLUMNS, what="skade after delete --keys")
    assert len([e for e in live_entries(warehouse, T) if e["content"] == 2]) == len(eq) + 1


def test_copy_on_write_upsert_rewrites_files(skade, catalog, warehouse, tmp_path):
    rng, gen, oracle = _eq_setup(skade, tmp_path, ("--property", "write.delete.mode=copy-on-write"))
    new = gen.upsert_batch({r["id"] for r in oracle.rows}, 10, dup=2)
    skade.ok("upsert", T, write_rows(new, tmp_path / "u.parquet"))
    oracle.upsert(new)
    ks = [{"id": r["id"]} for r in rng.sample(oracle.visible(), 3)]
    skade.ok("delete", T, "--keys", write_keys(ks, tmp_path / "k", "parquet"))
    oracle.delete_keys(ks)
    assert {e["content"] for e in live_entries(warehouse, T)} == {0}
    assert_same_rows(catalog().load_table(T).scan().to_arrow(), oracle.visible(), COLUMNS, what="PyIceberg")


def test_upsert_after_partition_evolution_replaces_old_spec_rows(skade, warehouse, tmp_path):
    rng, gen, oracle = _eq_setup(skade, tmp_path, EQ_PROPERTY)
    skade.ok("alter", T, "add-partition", "bucket(4,id)")
    new = gen.upsert_batch({r["id"] for r in oracle.rows}, 10, dup=0)
    skade.ok("upsert", T, write_rows(new, tmp_path / "u.parquet"))
    oracle.upsert(new)
    got = skade.rows(T)
    keys = got.column("id").to_pylist()
    assert len(keys) == len(set(keys)), "duplicate keys after upsert"
    assert_same_rows(got, oracle.visible(), COLUMNS, what="skade after upsert")
    # spec-conformant: equality deletes may only be scoped to a partition of the data's spec
    entries = live_entries(warehouse, T)
    data_specs = {e["spec_id"] for e in entries if e["content"] == 0}
    for e in entries:
        if e["content"] == 2 and e["partition"]:
            assert data_specs == {e["spec_id"]}, f"partitioned equality deletes cannot reach old-spec files: {e}"
