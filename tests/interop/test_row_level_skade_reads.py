"""skade reads PyIceberg's row-level writes: table.delete(filter), table.overwrite(df,
overwrite_filter=...), table.dynamic_partition_overwrite(df), table.upsert(df) and schema
evolution (update_schema) — skade's scan equals PyIceberg's equals a Python oracle, and
`skade log` shows each PyIceberg snapshot as an external commit with its operation."""
from __future__ import annotations

import random
import re

import pyarrow as pa
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (
    DecimalType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

from row_oracle import ARROW, COLUMNS, Oracle, RowGen, random_filter, write_keys, write_rows
from skade_util import assert_same_rows

T = "py.rl"

PY_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "grp", StringType(), required=False),
    NestedField(3, "k", LongType(), required=False),
    NestedField(4, "v", IntegerType(), required=False),
    NestedField(5, "s", StringType(), required=False),
    NestedField(6, "ts", TimestampType(), required=False),
    NestedField(7, "amt", DecimalType(9, 2), required=False),
    identifier_field_ids=[1],
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="grp"))

# the snapshot operations each PyIceberg call may produce
ALLOWED = {
    "append": {"append"},
    "delete": {"delete", "overwrite"},
    "overwrite": {"delete", "overwrite", "append"},
    "dynamic_overwrite": {"delete", "overwrite", "append"},
    "upsert": {"delete", "overwrite", "append"},
}


def _arrow(schema: pa.Schema, rows):
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)


def test_skade_reads_pyiceberg_row_level_writes(skade, catalog, warehouse, tmp_path):
    rng = random.Random(2024)
    cat = catalog()
    cat.create_namespace("py")
    tbl = cat.create_table(T, schema=PY_SCHEMA, partition_spec=SPEC)
    oracle = Oracle(spec_fields=["grp"])
    gen = RowGen(rng)
    arrow = ARROW
    cols = list(COLUMNS)
    done = []  # (op, [new snapshot ids], rows after, columns)

    log_len = [len(skade.log("--table", T))]

    def check(op, before_ids):
        nonlocal tbl
        tbl = cat.load_table(T)
        new_ids = [s.snapshot_id for s in tbl.snapshots() if s.snapshot_id not in before_ids]
        done.append((op, new_ids, oracle.visible(), list(cols)))
        # the commit log: one external commit per PyIceberg call, naming the snapshot it ended
        # with and that snapshot's operation (a call may add two snapshots in one commit, e.g.
        # overwrite = delete + append; the log has one row per catalog commit)
        log = skade.log("--table", T)
        new_rows = log[log_len[0]:]
        log_len[0] = len(log)
        if new_ids:
            assert len(new_rows) == 1, (op, new_rows)
            r = new_rows[0]
            assert (r["action"], r["engine"], r["snapshot_id"]) == ("commit", "external", new_ids[-1]), (op, r)
            assert r["operation"] == tbl.snapshot_by_id(new_ids[-1]).summary.operation.value, (op, r)
            assert r["operation"] in ALLOWED[op], (op, r)
            for sid in new_ids:
                assert tbl.snapshot_by_id(sid).summary.operation.value in ALLOWED[op], op
        else:
            assert all(r["snapshot_id"] == tbl.metadata.current_snapshot_id for r in new_rows), (op, new_rows)
        want = oracle.visible()
        py = tbl.scan().to_arrow()
        assert_same_rows(py, want, cols, what=f"PyIceberg after {op}")
        got = skade.rows(T)
        assert got.column_names == cols, op
        assert_same_rows(got, want, cols, what=f"skade after {op}")

    def ids_now():
        return {s.snapshot_id for s in cat.load_table(T).snapshots()}

    def no_null_grp(rows):
        for r in rows:
            if r["grp"] is None:
                r["grp"] = rng.choice(["a", "b", "c", "d"])
        return rows

    def step(op):
        before = ids_now()
        rows = oracle.visible()
        if op == "append":
            new = gen.fresh(rng.randint(10, 30))
            tbl.append(_arrow(arrow, new))
            oracle.append(new)
        elif op == "delete":
            _sk, py_filter, pred = random_filter(rng, rows)
            tbl.delete(py_filter)
            oracle.delete_where(pred)
        elif op == "overwrite":
            _sk, py_filter, pred = random_filter(rng, rows)
            new = gen.fresh(rng.randint(1, 8))
            tbl.overwrite(_arrow(arrow, new), overwrite_filter=py_filter)
            oracle.overwrite_where(pred, new)
        elif op == "dynamic_overwrite":
            grp = rng.choice(["a", "b", "c", "d"])
            new = [dict(r, grp=grp) for r in gen.fresh(rng.randint(2, 6))]
            tbl.dynamic_partition_overwrite(_arrow(arrow, new))
            oracle.overwrite_dynamic(new)
        elif op == "upsert":
            # PyIceberg refuses duplicate keys in the source: no duplicates here
            new = gen.upsert_batch({r["id"] for r in rows}, rng.randint(5, 15), dup=0)
            seen = {}
            for r in new:
                seen[r["id"]] = r
            new = list(seen.values())
            res = tbl.upsert(_arrow(arrow, new))
            existing = {r["id"] for r in rows}
            assert res.rows_inserted == sum(1 for r in new if r["id"] not in existing)
            oracle.upsert(new)
        else:
            raise KeyError(op)
        check(op, before)

    step("append")
    step("append")
    for op in ["delete", "overwrite", "upsert", "dynamic_overwrite"]:
        step(op)
    for _ in range(6):
        step(rng.choice(["append", "delete", "overwrite", "upsert", "dynamic_overwrite"]))

    # PyIceberg evolves the schema: a new column, a rename; then writes with the new schema
    before = ids_now()
    with tbl.update_schema() as u:
        u.add_column("note", StringType())
        u.rename_column("s", "s2")
    tbl = cat.load_table(T)
    assert ids_now() == before  # metadata-only
    log = skade.log("--table", T)
    new_rows = log[log_len[0]:]
    log_len[0] = len(log)
    assert [(r["action"], r["engine"]) for r in new_rows] == [("commit", "external")], new_rows
    for r in oracle.rows:
        r["s2"] = r.pop("s")
        r["note"] = None
    cols = ["id", "grp", "k", "v", "s2", "ts", "amt", "note"]
    arrow = pa.schema([f if f.name != "s" else pa.field("s2", pa.string()) for f in ARROW] + [pa.field("note", pa.string())])
    described = [r["name"] for r in skade.jsonl("describe", T)]
    assert described == cols
    assert_same_rows(skade.rows(T), oracle.visible(), cols, what="skade after PyIceberg schema change")

    def fresh_evolved(n):
        out = []
        for r in gen.fresh(n):
            r["s2"] = r.pop("s")
            r["note"] = rng.choice([None, "n1", "n2"])
            out.append(r)
        return out

    new = fresh_evolved(12)
    before = ids_now()
    tbl.append(_arrow(arrow, new))
    oracle.append(new)
    check("append", before)

    before = ids_now()
    ups = [dict(r, note="upd", v=(r["v"] or 0) + 1) for r in rng.sample(oracle.visible(), 6)] + fresh_evolved(3)
    tbl.upsert(_arrow(arrow, ups))
    oracle.upsert(ups)
    check("upsert", before)

    # (one column per delete: PyIceberg 0.12's delete misses rows for an `or` whose other side
    # names a column the data file lacks, e.g. "s2 is null or note = 'n1'" on pre-change files)
    before = ids_now()
    tbl.delete("s2 is null")
    oracle.delete_where(lambda r: r["s2"] is None)
    check("delete", before)
    before = ids_now()
    tbl.delete("note = 'n1'")
    oracle.delete_where(lambda r: r["note"] == "n1")
    check("delete", before)

    # skade at every PyIceberg snapshot an operation ended with
    for op, new_ids, want, columns in done:
        if not new_ids:
            continue
        got = skade.rows(T, "--snapshot", new_ids[-1])
        assert_same_rows(got, want, columns, what=f"skade --snapshot after {op}")

    # the whole log: PyIceberg's commits only, in commit order, every snapshot a PyIceberg
    # call ended with among them
    log = skade.log("--table", T)
    assert {r["engine"] for r in log} == {"external"}, log
    assert log[0]["action"] == "create"
    seqs = [r["commit_seq"] for r in log]
    assert seqs == sorted(set(seqs))
    logged = [r["snapshot_id"] for r in log if r["snapshot_id"] is not None]
    ended_with = [new_ids[-1] for _op, new_ids, _w, _c in done if new_ids]
    assert list(dict.fromkeys(s for s in logged if s in set(ended_with))) == ended_with
    order = [s.snapshot_id for s in cat.load_table(T).snapshots()]
    assert ended_with == sorted(ended_with, key=order.index)
    ops_seen = {r["operation"] for r in log if r["action"] == "commit"}
    assert {"append", "overwrite", "delete"} <= ops_seen, ops_seen

    # and skade writes on: position deletes (grp is not the key), which PyIceberg reads back
    ups = [dict(r, note="skade") for r in rng.sample(oracle.visible(), 5)] + fresh_evolved(2)
    ups.append(dict(ups[0], note="skade-last"))
    skade.ok("upsert", T, write_rows(ups, tmp_path / "u.parquet", arrow))
    oracle.upsert(ups)
    keys = [{"id": r["id"]} for r in rng.sample(oracle.visible(), 4)]
    skade.ok("delete", T, "--keys", write_keys(keys, tmp_path / "k", "csv"))
    oracle.delete_keys(keys)
    skade.ok("delete", T, "--where", "note = 'n2'")
    oracle.delete_where(lambda r: r["note"] == "n2")
    assert_same_rows(skade.rows(T), oracle.visible(), cols, what="skade after its own writes")
    assert_same_rows(cat.load_table(T).scan().to_arrow(), oracle.visible(), cols, what="PyIceberg after skade's writes")
    engines = [r["engine"] for r in skade.log("--table", T) if r["action"] == "commit"]
    assert engines[-3:] == ["skade"] * 3
    assert re.fullmatch(r"(external)+", "".join(engines[:-3]))


def test_log_external_schema_change_is_not_a_data_operation(skade, catalog):
    cat = catalog()
    cat.create_namespace("py")
    tbl = cat.create_table(T, schema=PY_SCHEMA)
    tbl.append(_arrow(ARROW, RowGen(random.Random(1)).fresh(5)))
    with tbl.update_schema() as u:
        u.add_column("note", StringType())
    log = skade.log("--table", T)
    assert [r["action"] for r in log] == ["create", "commit", "commit"]
    assert log[1]["operation"] == "append"
    assert log[2]["engine"] == "external"
    # the third commit changed only the schema: no data operation, no snapshot of its own
    assert log[2]["operation"] not in ("append", "overwrite", "delete", "replace"), log[2]
