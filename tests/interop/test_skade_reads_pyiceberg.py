"""skade lists, loads and scans tables that PyIceberg created and appended to, and logs
PyIceberg's commits as engine `external` with their snapshot ids."""
from __future__ import annotations

import random
import zlib

import pyarrow as pa
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import (
    DecimalType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
)

from skade_util import (
    ALL_TYPES_ARROW,
    all_types_table,
    assert_same_rows,
    skade_literal,
    write_parquet,
)

# PyIceberg makes a uuid column from pyarrow's uuid extension type.
PY_SCHEMA = pa.schema([f if f.name != "u" else pa.field("u", pa.uuid()) for f in ALL_TYPES_ARROW])


def _py_batch(n, seed, id_start=0, pools=None):
    t = all_types_table(n, seed=seed, id_start=id_start, pools=pools)
    i = t.schema.get_field_index("u")
    return t.set_column(i, PY_SCHEMA.field("u"), t.column("u").cast(pa.uuid()))


def _external_snapshot_ids(skade, table):
    log = skade.log("--table", table)
    assert log, f"no commit-log rows for {table}"
    assert {r["engine"] for r in log} == {"external"}, log
    assert log[0]["action"] == "create"
    return [r["snapshot_id"] for r in log if r["snapshot_id"] is not None], log


def test_skade_reads_pyiceberg_table_all_types(skade, catalog):
    cat = catalog()
    cat.create_namespace("py")
    tbl = cat.create_table("py.events", schema=PY_SCHEMA, properties={"owner": "pyiceberg"})
    batches = [_py_batch(60, seed=40 + k, id_start=100 * k) for k in range(3)]
    for b in batches:
        tbl.append(b)
    tbl = cat.load_table("py.events")
    py_snaps = tbl.metadata.snapshots
    assert len(py_snaps) == 3

    # listed and described
    assert {"namespace": "py"} in skade.jsonl("namespaces")
    assert skade.jsonl("tables", "py") == [{"table": "py.events"}]
    described = {r["name"]: r for r in skade.jsonl("describe", "py.events")}
    assert list(described) == [f.name for f in PY_SCHEMA]
    for f in tbl.schema().fields:
        assert described[f.name]["id"] == f.field_id
        assert described[f.name]["required"] == ("yes" if f.required else "no")
    assert described["u"]["type"] == "uuid"
    assert described["dec"]["type"] == "decimal(10,2)"
    assert described["fx"]["type"] == "fixed[5]"
    text = skade.ok("describe", "py.events")
    assert str(py_snaps[-1].snapshot_id) in text
    assert "records:   180" in text

    # same rows, now and at every snapshot
    expected = pa.concat_tables([b.cast(PY_SCHEMA) for b in batches])
    assert_same_rows(skade.rows("py.events"), expected, what="skade full scan")
    snaps = skade.snapshots("py.events")
    assert [s["snapshot_id"] for s in snaps] == [s.snapshot_id for s in py_snaps]
    assert [s["parent_id"] for s in snaps] == [s.parent_snapshot_id for s in py_snaps]
    assert [s["total_records"] for s in snaps] == [60, 120, 180]
    for k, s in enumerate(py_snaps):
        want = pa.concat_tables(batches[: k + 1])
        assert_same_rows(skade.rows("py.events", "--snapshot", s.snapshot_id), want, what=f"--snapshot @{k}")
        assert_same_rows(tbl.scan(snapshot_id=s.snapshot_id).to_arrow(), want, what=f"PyIceberg @{k}")

    # filters and projection
    rows = expected.to_pylist()
    v = sorted(r["l"] for r in rows if r["l"] is not None)[len(rows) // 3]
    want = [r for r in rows if r["l"] is not None and r["l"] < v and r["s"] is not None]
    got = skade.rows("py.events", "--where", f"l < {v} and s is not null", "--columns", "id,l,s")
    assert got.column_names == ["id", "l", "s"]
    assert_same_rows(got, want, ["id", "l", "s"], what="skade filter")

    # the commit log: PyIceberg's commits, engine external, with their snapshot ids
    ids, log = _external_snapshot_ids(skade, "py.events")
    assert ids == [s.snapshot_id for s in py_snaps]
    assert [r["operation"] for r in log if r["snapshot_id"] is not None] == ["append"] * 3
    seqs = [r["commit_seq"] for r in log]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


PARTITIONED = [
    (
        "py.p1",
        [("id", BucketTransform(8), "id_bucket"), ("s", TruncateTransform(2), "s_trunc"), ("tstz", DayTransform(), "tstz_day")],
        {"s": 4, "tstz": 3},
    ),
    (
        "py.p2",
        [("ts", YearTransform(), "ts_year"), ("dt", MonthTransform(), "dt_month"), ("tstz", HourTransform(), "tstz_hour"), ("i", IdentityTransform(), "i")],
        {"ts": 3, "dt": 3, "tstz": 2, "i": 2},
    ),
    (
        "py.p3",
        [("dec", TruncateTransform(100), "dec_trunc"), ("l", BucketTransform(5), "l_bucket"), ("dt", YearTransform(), "dt_year")],
        {"dec": 4, "dt": 3},
    ),
]


def test_skade_reads_pyiceberg_partitioned_tables(skade, catalog):
    cat = catalog()
    cat.create_namespace("py")
    schema_ids = None
    for name, fields, pools in PARTITIONED:
        tbl = cat.create_table(name, schema=PY_SCHEMA)
        with tbl.update_spec() as upd:
            for col, transform, pname in fields:
                upd.add_field(col, transform, pname)
        tbl = cat.load_table(name)
        schema_ids = {f.name: f.field_id for f in tbl.schema().fields}
        batches = [_py_batch(50, seed=zlib.crc32(name.encode()) % 97 + k, id_start=1000 * k, pools=pools) for k in range(2)]
        for b in batches:
            tbl.append(b)
        expected = pa.concat_tables(batches)
        rows = expected.to_pylist()

        text = skade.ok("describe", name)
        for col, transform, pname in fields:
            assert f"{pname}={transform}({col})" in text, text

        assert_same_rows(skade.rows(name), expected, what=f"skade {name}")
        total_files = len(list(tbl.scan().plan_files()))
        assert total_files > 2

        # filters on every partition source column: right rows, and partitions pruned with the
        # partition values PyIceberg wrote (bucket hashes, truncation, time transforms)
        rng = random.Random(name)
        for col, _transform, _pname in fields:
            ty = str(tbl.schema().find_field(col).field_type)
            v = rng.choice([r[col] for r in rows if r[col] is not None])
            where = f"{col} = {skade_literal(ty, v)}"
            want = [r for r in rows if r[col] == v]
            assert_same_rows(skade.rows(name, "--where", where), want, what=f"skade {name} {where}")
            out = skade.ok("scan", name, "--where", where, "--stats", "--format", "none")
            assert f"{len(want)} rows" in out, out
            planned = _planned_files(out)
            assert planned[1] < planned[0] == total_files, f"{name} {where}: no pruning: {out}"

        ids, _ = _external_snapshot_ids(skade, name)
        assert ids == [s.snapshot_id for s in tbl.metadata.snapshots]
    assert schema_ids["id"] == 1


def _planned_files(stats_out: str) -> tuple[int, int]:
    import re

    m = re.search(r"files (\d+) -> (\d+)", stats_out)
    assert m, stats_out
    return int(m.group(1)), int(m.group(2))


def test_engines_take_turns_on_one_table(skade, catalog, tmp_path):
    """skade creates; PyIceberg and skade append in turn; both read all rows; the log says who."""
    skade.ok("create-namespace", "mix")
    skade.ok("create", "mix.t", "--schema", "id:long!, name:string, amount:decimal(12,3), ts:timestamptz, tags:list<string>",
             "--partition", "bucket(4,id), day(ts)")
    cat = catalog()
    tbl = cat.load_table("mix.t")
    arrow_schema = tbl.schema().as_arrow()
    rng = random.Random(5)
    import datetime as dt
    import decimal

    def batch(start):
        n = 25
        return pa.table(
            {
                "id": pa.array(range(start, start + n), pa.int64()),
                "name": [None if rng.random() < 0.2 else f"n{rng.randint(0, 99)}" for _ in range(n)],
                "amount": [decimal.Decimal(rng.randint(-10**9, 10**9)).scaleb(-3) for _ in range(n)],
                "ts": [dt.datetime(2024, 5, rng.randint(1, 3), rng.randint(0, 23), tzinfo=dt.timezone.utc) for _ in range(n)],
                "tags": [[f"t{rng.randint(0, 3)}"] for _ in range(n)],
            },
            schema=arrow_schema,
        )

    batches = []
    engines = []
    for k in range(4):
        b = batch(100 * k)
        batches.append(b)
        if k % 2 == 0:
            tbl = cat.load_table("mix.t")
            tbl.append(b)
            engines.append("external")
        else:
            f = write_parquet(b, tmp_path / f"b{k}.parquet")
            skade.ok("append", "mix.t", f)
            engines.append("skade")
    expected = pa.concat_tables(batches)
    tbl = cat.load_table("mix.t")
    assert_same_rows(tbl.scan().to_arrow(), expected, what="PyIceberg")
    assert_same_rows(skade.rows("mix.t"), expected, what="skade")
    # PyIceberg prunes with skade's partition values and skade with PyIceberg's
    want = [r for r in expected.to_pylist() if r["id"] in (5, 105, 205, 305)]
    from pyiceberg.expressions import In

    assert_same_rows(tbl.scan(row_filter=In("id", [5, 105, 205, 305])).to_arrow(), want, what="PyIceberg in")
    assert_same_rows(skade.rows("mix.t", "--where", "id in (5, 105, 205, 305)"), want, what="skade in")

    snaps = tbl.metadata.snapshots
    assert len(snaps) == 4
    assert [s.parent_snapshot_id for s in snaps] == [None] + [s.snapshot_id for s in snaps[:-1]]
    assert [s.sequence_number for s in snaps] == [1, 2, 3, 4]
    log = [r for r in skade.log("--table", "mix.t") if r["snapshot_id"] is not None]
    assert [r["snapshot_id"] for r in log] == [s.snapshot_id for s in snaps]
    assert [r["engine"] for r in log] == engines
    assert all(r["operation"] == "append" for r in log)


def test_skade_reads_table_created_from_iceberg_schema(skade, catalog):
    """An Iceberg schema with explicit ids, required nested fields and identifier fields."""
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "price", DecimalType(18, 4), required=False),
        NestedField(4, "ts", TimestamptzType(), required=False),
        NestedField(5, "nums", ListType(6, IntegerType(), element_required=True), required=False),
        identifier_field_ids=[1],
    )
    spec = PartitionSpec(
        PartitionField(source_id=1, field_id=1000, transform=BucketTransform(3), name="id_b"),
        PartitionField(source_id=4, field_id=1001, transform=MonthTransform(), name="ts_m"),
    )
    cat = catalog()
    cat.create_namespace("sch")
    tbl = cat.create_table("sch.t", schema=schema, partition_spec=spec)
    import datetime as dt
    import decimal

    data = pa.table(
        {
            "id": pa.array([1, 2, 3, 4], pa.int64()),
            "name": ["a", None, "c", "d"],
            "price": [decimal.Decimal("1.2345"), None, decimal.Decimal("-99999999999999.9999"), decimal.Decimal("0")],
            "ts": [dt.datetime(2023, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc), None,
                   dt.datetime(1969, 12, 31, tzinfo=dt.timezone.utc), dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)],
            "nums": [[1], None, [], [2, 3]],
        },
        schema=schema.as_arrow(),
    )
    tbl.append(data)
    described = {r["name"]: r for r in skade.jsonl("describe", "sch.t")}
    assert described["id"]["identifier"] == "yes"
    assert described["id"]["required"] == "yes"
    assert described["price"]["type"] == "decimal(18,4)"
    assert_same_rows(skade.rows("sch.t"), data, what="skade")
    assert_same_rows(skade.rows("sch.t", "--where", "ts < '2024-01-01T00:00:00Z'"),
                     [r for r in data.to_pylist() if r["id"] in (1, 3)], what="skade ts filter")


def test_partition_source_dropped_by_pyiceberg(skade, catalog, tmp_path):
    """PyIceberg lets a column go that an earlier partition spec still names (Java's readers
    then cannot load the table, apache/iceberg#10234). skade reads, filters, lists and writes
    such a table, binding the old spec with the schema that still has the column; PyIceberg
    reads the result. skade itself refuses to make such a table."""
    skade.ok("create-namespace", "db")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType()),
                    NestedField(3, "n", IntegerType()))
    tbl = catalog().create_table("db.dropped", schema=schema, partition_spec=PartitionSpec(
        PartitionField(2, 1000, IdentityTransform(), "region"), PartitionField(1, 1001, BucketTransform(4), "id_bucket")))
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string()),
                       pa.field("n", pa.int32())])
    tbl.append(pa.Table.from_pylist([{"id": i, "region": ["eu", "us", None][i % 3], "n": i} for i in range(30)],
                                    schema=arrow))
    with tbl.update_spec() as u:
        u.remove_field("region")
    with tbl.update_schema() as u:
        u.delete_column("region")
    tbl = catalog().load_table("db.dropped")
    tbl.append(pa.Table.from_pylist([{"id": i, "n": i} for i in range(30, 40)],
                                    schema=pa.schema([arrow.field("id"), arrow.field("n")])))

    def agree(what):
        mine = skade.rows("db.dropped")
        assert_same_rows(catalog().load_table("db.dropped").scan().to_arrow(), mine, ["id", "n"], what=what)
        return sorted(mine.column("id").to_pylist())

    assert agree("as PyIceberg left it") == list(range(40))
    assert sorted(r["id"] for r in skade.jsonl("scan", "db.dropped", "--where", "id in (4, 5, 33)")) == [4, 5, 33]
    parts = skade.jsonl("partitions", "db.dropped")
    assert {(p["spec_id"], p["partition"].get("region", "-")) for p in parts} >= {(0, "eu"), (0, "us"), (0, None)}
    assert sum(p["record_count"] for p in parts) == 40
    skade.ok("delete", "db.dropped", "--where", "n < 3 or n = 35")
    (tmp_path / "more.csv").write_text("id,n\n100,100\n")
    skade.ok("append", "db.dropped", tmp_path / "more.csv")
    assert agree("after skade's delete and append") == [i for i in range(3, 40) if i != 35] + [100]
    skade.ok("compact", "db.dropped")
    assert agree("after skade's compaction") == [i for i in range(3, 40) if i != 35] + [100]

    # skade does not make such a table: neither the column nor a struct holding it may go
    skade.ok("create", "db.mine", "--schema", "id:long, c:string, s:struct<a:int, b:int>", "--partition", "c, s.a")
    skade.ok("alter", "db.mine", "drop-partition", "c")
    rc, _, err = skade("alter", "db.mine", "drop-column", "c")
    assert rc == 2 and "cannot drop 'c': the earlier partition spec 0 uses it (field 'c')" in err, err
    for col in ("s", "s.a"):
        rc, _, err = skade("alter", "db.mine", "drop-column", col)
        assert rc == 2 and f"cannot drop '{col}': the partition spec uses it (field 's.a')" in err, err
    skade.ok("alter", "db.mine", "drop-column", "s.b")


def test_identifier_inside_a_struct(skade, catalog, tmp_path):
    """Iceberg allows an identifier field inside a struct (PyIceberg makes one). skade reads
    and describes the table; upsert and delete --keys, which match top-level columns, refuse
    it by name and commit nothing, and work once top-level identifier columns are set."""
    skade.ok("create-namespace", "db")
    schema = Schema(NestedField(1, "k", StructType(NestedField(3, "a", LongType(), required=True)), required=True),
                    NestedField(2, "v", StringType()), NestedField(4, "id", LongType(), required=True),
                    identifier_field_ids=[3])
    tbl = catalog().create_table("db.nested_key", schema=schema)
    tbl.append(pa.Table.from_pylist([{"k": {"a": i}, "v": f"v{i}", "id": i} for i in range(3)],
                                    schema=tbl.schema().as_arrow()))
    assert sorted(r["k"]["a"] for r in skade.jsonl("scan", "db.nested_key")) == [0, 1, 2]
    assert "identifier: k.a" in skade.ok("describe", "db.nested_key")
    (tmp_path / "u.jsonl").write_text('{"k": {"a": 1}, "v": "new", "id": 1}\n')
    (tmp_path / "keys.csv").write_text("id\n1\n")
    before = len(skade.snapshots("db.nested_key"))
    for args in (("upsert", "db.nested_key", tmp_path / "u.jsonl"), ("delete", "db.nested_key", "--keys", tmp_path / "keys.csv")):
        rc, _, err = skade(*args)
        assert rc == 2 and "identifier field 'k.a' is inside a struct; skade's upsert and delete --keys match by " \
                           "top-level columns" in err, (args, err)
    assert len(skade.snapshots("db.nested_key")) == before
    skade.ok("alter", "db.nested_key", "set-identifier", "id")
    skade.ok("upsert", "db.nested_key", tmp_path / "u.jsonl")
    rows = sorted((r["id"], r["v"]) for r in catalog().load_table("db.nested_key").scan().to_arrow().to_pylist())
    assert rows == [(0, "v0"), (1, "new"), (2, "v2")]
