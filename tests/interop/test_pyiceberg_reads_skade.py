"""PyIceberg reads every table skade writes and gets the same rows skade does.

Data goes in through `skade append` of Parquet files made here with pyarrow (random values
with nulls in every optional column); skade's rows come out through `scan --format parquet`.
"""
from __future__ import annotations

import datetime as dt
import random
import struct
import uuid
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.expressions import (
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    NotNull,
    Or,
)
from pyiceberg.transforms import parse_transform
from pyiceberg.types import ListType, MapType, StructType

from skade_util import (
    ALL_TYPES_ICEBERG,
    ALL_TYPES_SPEC,
    all_types_table,
    assert_same_rows,
    norm,
    pyiceberg_literal,
    skade_literal,
    local_path,
    to_internal,
    write_parquet,
)

TABLE = "db.t"


def _create(skade, spec=ALL_TYPES_SPEC, partition=None, table=TABLE, props=()):
    rc, _, err = skade("create-namespace", table.split(".")[0])
    assert rc in (0, 2), err
    args = ["create", table, "--schema", spec]
    if partition:
        args += ["--partition", partition]
    for p in props:
        args += ["--property", p]
    skade.ok(*args)


def _append(skade, tmp_path, arrow_table, name, table=TABLE):
    f = write_parquet(arrow_table, tmp_path / f"{name}.parquet")
    out = skade.ok("append", table, f)
    assert f"appended {arrow_table.num_rows} rows" in out, out
    return out


# --- every type ------------------------------------------------------------------------------


def test_all_types_same_rows(skade, catalog, tmp_path):
    _create(skade)
    # The third batch is long enough for the writer to judge its columns' codecs: random
    # doubles are stored uncompressed (skade.write.parquet.compression-min-saving-percent).
    batches = [all_types_table(150, seed=1), all_types_table(120, seed=2, id_start=1000, null_frac=0.4),
               all_types_table(5000, seed=3, id_start=2000, null_frac=0.05)]
    for k, b in enumerate(batches):
        _append(skade, tmp_path, b, f"in{k}")
    expected = pa.concat_tables(batches)

    tbl = catalog().load_table(TABLE)
    codecs = set()
    for task in tbl.scan().plan_files():
        md = pq.ParquetFile(local_path(task.file.file_path)).metadata
        codecs |= {md.row_group(g).column(c).compression for g in range(md.num_row_groups)
                   for c in range(md.num_columns)}
    assert codecs == {"ZSTD", "UNCOMPRESSED"}, codecs
    # schema as PyIceberg sees it: names, types, required flags
    fields = {f.name: f for f in tbl.schema().fields}
    assert list(fields) == [f.name for f in expected.schema]
    for name, (typ, required) in ALL_TYPES_ICEBERG.items():
        assert str(fields[name].field_type) == typ, name
        assert fields[name].required == required, name
    assert isinstance(fields["tags"].field_type, ListType)
    assert isinstance(fields["addr"].field_type, StructType)
    assert [f.name for f in fields["addr"].field_type.fields] == ["city", "zip"]
    assert isinstance(fields["m"].field_type, MapType)
    assert isinstance(fields["mm"].field_type.value_type, ListType)
    assert isinstance(fields["deep"].field_type.fields[1].field_type.element_type, StructType)

    py_rows = tbl.scan().to_arrow()
    assert py_rows.num_rows == expected.num_rows
    assert_same_rows(py_rows, expected, what="PyIceberg vs input")
    sk_rows = skade.rows(TABLE)
    assert sk_rows.column_names == expected.column_names
    assert_same_rows(sk_rows, expected, what="skade vs input")
    # types as skade returns them
    for f in expected.schema:
        assert sk_rows.schema.field(f.name).type == f.type, f.name

    # projection, including nested columns, agrees too
    cols = ["addr", "id", "m", "tstz"]
    py_proj = tbl.scan(selected_fields=tuple(cols)).to_arrow()
    assert sorted(py_proj.column_names) == sorted(cols)
    assert_same_rows(py_proj, expected, cols, what="PyIceberg projection")
    sk_proj = skade.rows(TABLE, "--columns", ",".join(cols))
    assert sk_proj.column_names == cols
    assert_same_rows(sk_proj, expected, cols, what="skade projection")


def _json_form(col, v):
    """What skade's jsonl output holds for a pyarrow Python value."""
    if v is None:
        return None
    if col == "f":
        return "NaN" if v != v else struct.unpack("f", struct.pack("f", v))[0]
    if col == "d":
        return "NaN" if v != v else v
    if col == "dec":
        return str(v)
    if col in ("dt", "tm", "ts", "tstz"):
        return v.isoformat()
    if col == "u":
        return str(uuid.UUID(bytes=v))
    if col in ("bin", "fx"):
        return v.hex()
    if col in ("m", "mm"):
        return {k: x for k, x in v}
    return v


def test_jsonl_output_matches_input(skade, tmp_path):
    _create(skade)
    data = all_types_table(80, seed=3)
    _append(skade, tmp_path, data, "in")
    got = skade.jsonl("scan", TABLE)
    assert len(got) == data.num_rows
    by_id = {r["id"]: r for r in got}
    for row in data.to_pylist():
        g = by_id[row["id"]]
        assert list(g) == data.column_names
        for col, v in row.items():
            want = _json_form(col, v)
            have = g[col]
            if col == "f" and isinstance(have, float):
                have = struct.unpack("f", struct.pack("f", have))[0]
            if col == "tstz" and have is not None:
                have = dt.datetime.fromisoformat(have).astimezone(dt.timezone.utc).isoformat()
                want = dt.datetime.fromisoformat(want).astimezone(dt.timezone.utc).isoformat()
            assert have == want, (row["id"], col, have, want)


def test_required_nested_fields(skade, catalog, tmp_path):
    spec = "id:long!, addr:struct<city:string!,zip:int>, nums:list<long!>, kv:map<string,int!>"
    _create(skade, spec)
    addr_t = pa.struct([pa.field("city", pa.string(), nullable=False), pa.field("zip", pa.int32())])
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("addr", addr_t),
            pa.field("nums", pa.list_(pa.field("element", pa.int64(), nullable=False))),
            pa.field("kv", pa.map_(pa.string(), pa.field("value", pa.int32(), nullable=False))),
        ]
    )
    data = pa.table(
        {
            "id": [1, 2, 3],
            "addr": [{"city": "Oslo", "zip": 150}, None, {"city": "", "zip": None}],
            "nums": [[1, 2], None, []],
            "kv": [[("a", 1)], [], None],
        },
        schema=schema,
    )
    _append(skade, tmp_path, data, "in")
    tbl = catalog().load_table(TABLE)
    s = tbl.schema()
    assert s.find_field("id").required
    assert not s.find_field("addr").required
    assert s.find_field("addr.city").required
    assert not s.find_field("addr.zip").required
    assert s.find_field("nums").field_type.element_required
    assert s.find_field("kv").field_type.value_required
    assert_same_rows(tbl.scan().to_arrow(), data, what="PyIceberg")
    assert_same_rows(skade.rows(TABLE), data, what="skade")


def test_missing_optional_struct_with_required_child(skade, catalog, tmp_path):
    _create(skade, "id:long!, addr:struct<city:string,zip:int!>")
    data = pa.table({"id": pa.array([1, 2], pa.int64())})
    rc, out, err = skade("append", TABLE, write_parquet(data, tmp_path / "in.parquet"))
    assert rc == 0, err
    expected = [{"id": 1, "addr": None}, {"id": 2, "addr": None}]
    assert_same_rows(catalog().load_table(TABLE).scan().to_arrow(), expected, what="PyIceberg")


def test_input_columns_matched_by_name_and_converted(skade, catalog, tmp_path):
    """Shuffled column order, narrower types, ms timestamps, missing optional columns."""
    _create(skade, "id:long!, l:long, d:double, ts:timestamp, tstz:timestamptz, s:string, dt:date")
    data = pa.table(
        {
            "s": ["x", None, "z"],
            "tstz": pa.array([1_700_000_000_123, None, -1], pa.timestamp("ms", tz="UTC")),
            "l": pa.array([1, -2, None], pa.int32()),
            "id": pa.array([3, 1, 2], pa.int16()),
            "d": pa.array([1.5, None, -0.25], pa.float32()),
            "ts": pa.array([0, 86_400_000, None], pa.timestamp("ms")),
        }
    )
    _append(skade, tmp_path, data, "in")
    expected = [
        {"id": 3, "l": 1, "d": 1.5, "ts": dt.datetime(1970, 1, 1), "s": "x", "dt": None,
         "tstz": dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.timezone.utc)},
        {"id": 1, "l": -2, "d": None, "ts": dt.datetime(1970, 1, 2), "s": None, "dt": None, "tstz": None},
        {"id": 2, "l": None, "d": -0.25, "ts": None, "s": "z", "dt": None,
         "tstz": dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.timezone.utc)},
    ]
    cols = ["id", "l", "d", "ts", "tstz", "s", "dt"]
    assert_same_rows(catalog().load_table(TABLE).scan().to_arrow(), expected, cols, "PyIceberg")
    assert_same_rows(skade.rows(TABLE), expected, cols, "skade")


# --- partitioning ----------------------------------------------------------------------------

# (partition spec, {column: pool size} to keep the number of partitions small)
PARTITION_CASES = [
    ("s", {"s": 5}),
    ("i", {"i": 5}),
    ("identity(l)", {"l": 4}),
    ("b", {}),
    ("dt", {"dt": 5}),
    ("dec", {"dec": 4}),
    ("ts", {"ts": 4}),
    ("tstz", {"tstz": 4}),
    ("tm", {"tm": 3}),
    ("u", {"u": 3}),
    ("fx", {"fx": 3}),
    ("bin", {"bin": 3}),
    ("bucket(4,i)", {}),
    ("bucket(16,id)", {}),
    ("bucket(4,l)", {}),
    ("bucket(4,dec)", {}),
    ("bucket(4,dt)", {}),
    ("bucket(4,tm)", {}),
    ("bucket(4,ts)", {}),
    ("bucket(4,tstz)", {}),
    ("bucket(4,s)", {}),
    ("bucket(4,u)", {}),
    ("bucket(4,bin)", {}),
    ("bucket(4,fx)", {}),
    ("truncate(2,s)", {"s": 8}),
    ("truncate(1000,i)", {"i": 8}),
    ("truncate(10,l)", {"l": 8}),
    ("truncate(50,dec)", {"dec": 8}),
    ("truncate(3,bin)", {"bin": 6}),
    ("year(ts)", {"ts": 6}),
    ("month(ts)", {"ts": 6}),
    ("day(ts)", {"ts": 6}),
    ("hour(ts)", {"ts": 6}),
    ("year(tstz)", {"tstz": 6}),
    ("month(tstz)", {"tstz": 6}),
    ("day(tstz)", {"tstz": 6}),
    ("hour(tstz)", {"tstz": 6}),
    ("year(dt)", {"dt": 6}),
    ("month(dt)", {"dt": 6}),
    ("day(dt)", {"dt": 6}),
    ("day(tstz), bucket(4,id), truncate(3,s), b", {"tstz": 2, "s": 2}),
    ("year(ts), month(dt), i, hour(tstz), bucket(2,u)", {"ts": 2, "dt": 2, "i": 1, "tstz": 2}),
    ("bucket(3,l), truncate(100000,l)", {}),
]


def _parse_case(spec):
    """'bucket(4,i)' -> ('bucket[4]', 'i'); 's' -> ('identity', 's')."""
    out = []
    for part in [p.strip() for p in spec.split(", ") if p.strip()]:
        if "(" not in part:
            out.append(("identity", part))
            continue
        name, args = part[:-1].split("(", 1)
        args = [a.strip() for a in args.split(",")]
        if len(args) == 2:
            out.append((f"{name}[{args[0]}]", args[1]))
        else:
            out.append((name, args[0]))
    return out


_COMPARABLE = {"i", "l", "id", "dec", "dt", "tm", "ts", "tstz", "s"}


def _py_cmp(op, a, b):
    if a is None:
        return False
    return {"=": a == b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


_PY_OPS = {"=": EqualTo, "<": LessThan, "<=": LessThanOrEqual, ">": GreaterThan, ">=": GreaterThanOrEqual}


@pytest.mark.parametrize("spec,pools", PARTITION_CASES, ids=[c[0] for c in PARTITION_CASES])
def test_partitioned_by_transform(skade, catalog, tmp_path, spec, pools):
    _create(skade, partition=spec)
    data = all_types_table(60, seed=zlib.crc32(spec.encode()), null_frac=0.15, pools=pools)
    _append(skade, tmp_path, data, "in")
    tbl = catalog().load_table(TABLE)
    schema = tbl.schema()

    # the spec as PyIceberg reads it
    want = _parse_case(spec)
    got = [(str(f.transform), schema.find_column_name(f.source_id)) for f in tbl.spec().fields]
    assert got == want
    assert [f.field_id for f in tbl.spec().fields] == list(range(1000, 1000 + len(want)))

    # every data file holds exactly the rows whose transformed values are its partition tuple,
    # computed by PyIceberg's own transforms (the spec's hashing and value rules)
    import pyarrow.parquet as pq

    transforms = []
    for tname, col in want:
        ftype = schema.find_field(col).field_type
        transforms.append((col, str(ftype), parse_transform(tname).transform(ftype)))
    tasks = list(tbl.scan().plan_files())
    assert sum(t.file.record_count for t in tasks) == data.num_rows
    seen_partitions = set()
    for task in tasks:
        part = tuple(norm(v) for v in list(task.file.partition))
        assert part not in seen_partitions, f"two files for partition {part} in one append"
        seen_partitions.add(part)
        rows = pq.read_table(local_path(task.file.file_path)).to_pylist()
        assert len(rows) == task.file.record_count
        for r in rows:
            expect = tuple(norm(fn(to_internal(ty, r[col]))) for col, ty, fn in transforms)
            assert expect == part, f"row id={r['id']} in partition {part}, PyIceberg computes {expect}"

    assert_same_rows(tbl.scan().to_arrow(), data, what="PyIceberg")
    assert_same_rows(skade.rows(TABLE), data, what="skade")

    # filters on the source columns: PyIceberg prunes with skade's partition values, skade with
    # its own; both must still return exactly the matching rows
    rng = random.Random(spec)
    pyrows = data.to_pylist()
    for tname, col in want:
        ty = str(schema.find_field(col).field_type)
        # PyIceberg 0.12 finds no rows for `u == UUID(...)` on an identity(uuid) partition, on
        # its own tables too (checked): there only skade's filter is compared.
        pyiceberg_filters = not (tname == "identity" and ty == "uuid")
        values = [r[col] for r in pyrows if r[col] is not None]
        ops = ["=", rng.choice(["<", ">="])] if col in _COMPARABLE else ["="]
        if len(want) > 1:  # several fields: one predicate per field keeps the run short
            ops = ops[-1:]
        for op in ops:
            v = rng.choice(values)
            expected = [r for r in pyrows if _py_cmp(op, r[col], v)]
            where = f"{col} {op} {skade_literal(ty, v)}"
            py_expr = _PY_OPS[op](col, pyiceberg_literal(ty, v))
            if pyiceberg_filters:
                assert_same_rows(tbl.scan(row_filter=py_expr).to_arrow(), expected, what=f"PyIceberg {where}")
            assert_same_rows(skade.rows(TABLE, "--where", where), expected, what=f"skade {where}")


# --- snapshots and time travel ---------------------------------------------------------------


def test_time_travel_matches(skade, catalog, tmp_path):
    _create(skade, partition="bucket(4,id)")
    batches = [all_types_table(40, seed=10 + k, id_start=100 * k) for k in range(4)]
    for k, b in enumerate(batches):
        _append(skade, tmp_path, b, f"in{k}")
    snaps = skade.snapshots(TABLE)
    assert len(snaps) == 4
    tbl = catalog().load_table(TABLE)
    py_snaps = tbl.metadata.snapshots
    assert [s.snapshot_id for s in py_snaps] == [s["snapshot_id"] for s in snaps]
    assert [s.parent_snapshot_id for s in py_snaps] == [None] + [s.snapshot_id for s in py_snaps[:-1]]
    assert [s.sequence_number for s in py_snaps] == [1, 2, 3, 4]
    assert tbl.metadata.current_snapshot_id == py_snaps[-1].snapshot_id
    assert [e.snapshot_id for e in tbl.metadata.snapshot_log] == [s.snapshot_id for s in py_snaps]
    for k, s in enumerate(py_snaps):
        assert s.summary.operation.value == "append"
        assert int(s.summary["added-records"]) == batches[k].num_rows
        assert int(s.summary["total-records"]) == sum(b.num_rows for b in batches[: k + 1])
        expected = pa.concat_tables(batches[: k + 1])
        assert_same_rows(tbl.scan(snapshot_id=s.snapshot_id).to_arrow(), expected, what=f"PyIceberg @{k}")
        assert_same_rows(skade.rows(TABLE, "--snapshot", s.snapshot_id), expected, what=f"skade --snapshot @{k}")
        # as of the snapshot's own commit time (epoch ms) and as ISO 8601
        assert_same_rows(skade.rows(TABLE, "--as-of", s.timestamp_ms), expected, what=f"skade --as-of ms @{k}")
        iso = dt.datetime.fromtimestamp(s.timestamp_ms / 1000, dt.timezone.utc).isoformat()
        assert_same_rows(skade.rows(TABLE, "--as-of", iso), expected, what=f"skade --as-of {iso}")
    assert_same_rows(skade.rows(TABLE, "--ref", "main"), pa.concat_tables(batches), what="--ref main")


# --- filters ---------------------------------------------------------------------------------

_FILTER_COLS = ["i", "l", "d", "dec", "dt", "tm", "ts", "tstz", "s", "b", "u", "fx", "bin", "f"]
_EQ_ONLY = {"b", "u", "fx", "bin"}


def _leaf(rng, pyrows, ty_of):
    col = rng.choice(_FILTER_COLS)
    ty = ty_of[col]
    values = [r[col] for r in pyrows if r[col] is not None and r[col] == r[col]]  # no NaN
    kind = rng.random()
    if kind < 0.12:
        return (f"{col} is null", IsNull(col), lambda r, c=col: r[c] is None)
    if kind < 0.24:
        return (f"{col} is not null", NotNull(col), lambda r, c=col: r[c] is not None)
    if kind < 0.4:
        vs = rng.sample(values, min(3, len(values)))
        text = f"{col} in (" + ", ".join(skade_literal(ty, v) for v in vs) + ")"
        return (text, In(col, [pyiceberg_literal(ty, v) for v in vs]), lambda r, c=col, vs=vs: r[c] is not None and r[c] in vs)
    op = "=" if col in _EQ_ONLY else rng.choice(["=", "<", "<=", ">", ">="])
    v = rng.choice(values)
    return (
        f"{col} {op} {skade_literal(ty, v)}",
        _PY_OPS[op](col, pyiceberg_literal(ty, v)),
        lambda r, c=col, op=op, v=v: _py_cmp(op, r[c], v),
    )


def test_filters_match_pyiceberg(skade, catalog, tmp_path):
    _create(skade, partition="day(tstz)")
    batches = [all_types_table(100, seed=20 + k, id_start=1000 * k, pools={"tstz": 3, "s": 12}) for k in range(3)]
    for k, b in enumerate(batches):
        _append(skade, tmp_path, b, f"in{k}")
    data = pa.concat_tables(batches)
    pyrows = data.to_pylist()
    tbl = catalog().load_table(TABLE)
    ty_of = {f.name: str(f.field_type) for f in tbl.schema().fields}
    rng = random.Random(7)
    nonempty = 0
    for n in range(24):
        a = _leaf(rng, pyrows, ty_of)
        if n % 3 == 0:
            text, pexpr, fn = a
        else:
            b = _leaf(rng, pyrows, ty_of)
            if n % 3 == 1:
                text, pexpr, fn = (f"({a[0]}) and ({b[0]})", And(a[1], b[1]), lambda r, a=a, b=b: a[2](r) and b[2](r))
            else:
                text, pexpr, fn = (f"({a[0]}) or ({b[0]})", Or(a[1], b[1]), lambda r, a=a, b=b: a[2](r) or b[2](r))
        expected = [r for r in pyrows if fn(r)]
        nonempty += bool(expected)
        assert_same_rows(tbl.scan(row_filter=pexpr).to_arrow(), expected, what=f"PyIceberg {text}")
        assert_same_rows(skade.rows(TABLE, "--where", text), expected, what=f"skade {text}")
    assert nonempty >= 8


def test_pyiceberg_lists_and_loads_every_table(skade, catalog, tmp_path):
    skade.ok("create-namespace", "a")
    skade.ok("create-namespace", "b")
    skade.ok("create", "a.one", "--schema", "id:long!, s:string")
    skade.ok("create", "a.two", "--schema", "x:int", "--partition", "x")
    skade.ok("create", "b.three", "--schema", "id:long!", "--identifier", "id", "--property", "owner=me")
    cat = catalog()
    assert sorted(cat.list_namespaces()) == [("a",), ("b",)]
    assert sorted(cat.list_tables("a")) == [("a", "one"), ("a", "two")]
    assert cat.list_tables("b") == [("b", "three")]
    three = cat.load_table("b.three")
    assert three.schema().identifier_field_names() == {"id"}
    assert three.properties.get("owner") == "me"
    assert three.scan().to_arrow().num_rows == 0
    assert three.metadata.format_version == 2
    # a table PyIceberg loaded from skade is the one skade describes
    out = skade.ok("describe", "b.three")
    assert three.metadata.table_uuid.hex in out.replace("-", "")
    assert str(local_path(three.metadata.location)) in out
