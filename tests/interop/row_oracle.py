"""A Python model of skade's row-level commands, for the row-level interop tests.

The oracle keeps the table as a list of dicts. Each row also carries `_spec`, the partition
spec it was written under: a dynamic overwrite replaces only files of the current spec whose
partition it touches (as Java's ReplacePartitions does), so rows written under an older spec
survive it. Copy-on-write rewrites keep a file's spec.
"""
from __future__ import annotations

import copy
import csv
import datetime as dt
import decimal
import json
import random
import re
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import LongType, StringType, TimestampType

from skade_util import EPOCH, current_metadata, local_path, skade_literal

# The table of the row-level sequences; `id` is its identifier field.
SCHEMA = "id:long!, grp:string, k:long, v:int, s:string, ts:timestamp, amt:decimal(9,2)"
COLUMNS = ["id", "grp", "k", "v", "s", "ts", "amt"]
TYPES = {"id": "long", "grp": "string", "k": "long", "v": "int", "s": "string", "ts": "timestamp",
         "amt": "decimal(9,2)"}
ARROW = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("grp", pa.string()),
    pa.field("k", pa.int64()),
    pa.field("v", pa.int32()),
    pa.field("s", pa.string()),
    pa.field("ts", pa.timestamp("us")),
    pa.field("amt", pa.decimal128(9, 2)),
])
GROUPS = ["a", "b", "c", "d"]
DAY0 = dt.datetime(2024, 3, 1)

_ICEBERG_TYPES = {"long": LongType(), "string": StringType(), "timestamp": TimestampType()}


def _internal(ty, v):
    if v is None:
        return None
    if ty == "timestamp":
        return (v - EPOCH) // dt.timedelta(microseconds=1)
    return v


def transform_fn(spec_field: str):
    """'grp' | 'bucket(4,k)' | 'day(ts)' -> (source column, python function of the value)."""
    m = re.fullmatch(r"\s*bucket\((\d+),\s*(\w+)\)\s*", spec_field)
    if m:
        col = m.group(2)
        f = BucketTransform(int(m.group(1))).transform(_ICEBERG_TYPES[TYPES[col]])
        return col, lambda v: f(_internal(TYPES[col], v))
    m = re.fullmatch(r"\s*day\((\w+)\)\s*", spec_field)
    if m:
        col = m.group(1)
        f = DayTransform().transform(_ICEBERG_TYPES[TYPES[col]])
        return col, lambda v: f(_internal(TYPES[col], v))
    col = spec_field.strip()
    return col, IdentityTransform().transform(_ICEBERG_TYPES.get(TYPES[col], StringType()))


class Oracle:
    def __init__(self, identifier=("id",), spec_fields=()):
        self.rows: list[dict] = []
        self.identifier = tuple(identifier)
        self.spec_id = 0
        self.spec_fields = list(spec_fields)

    def key(self, r):
        return tuple(r[c] for c in self.identifier)

    def partition(self, r):
        out = []
        for f in self.spec_fields:
            col, fn = transform_fn(f)
            out.append(fn(r.get(col)))
        return tuple(out)

    def visible(self):
        return copy.deepcopy([{c: v for c, v in r.items() if c != "_spec"} for r in self.rows])

    # -- operations ---------------------------------------------------------------------------
    def append(self, new):
        self.rows += [dict(r, _spec=self.spec_id) for r in new]

    def delete_where(self, pred):
        self.rows = [r for r in self.rows if not pred(r)]

    def delete_keys(self, keys):
        ks = {tuple(k[c] for c in self.identifier) for k in keys}
        self.rows = [r for r in self.rows if self.key(r) not in ks]

    def upsert(self, new):
        last = {}
        for r in new:
            last[self.key(r)] = r  # last row of a key wins (dict keeps first-insertion order)
        self.delete_keys(list(last.values()))
        self.append(list(last.values()))

    def overwrite_where(self, pred, new):
        self.delete_where(pred)
        self.append(new)

    def overwrite_dynamic(self, new):
        if not self.spec_fields:
            self.rows = []
        else:
            touched = {self.partition(r) for r in new}
            self.rows = [r for r in self.rows
                         if not (r["_spec"] == self.spec_id and self.partition(r) in touched)]
        self.append(new)

    def evolve_spec(self, spec_fields):
        self.spec_id += 1
        self.spec_fields = list(spec_fields)


# --- random rows and filters -----------------------------------------------------------------


class RowGen:
    def __init__(self, rng: random.Random, id_start=0, k_range=40):
        self.rng = rng
        self.next_id = id_start
        self.k_range = k_range

    def row(self, id_=None):
        r = self.rng
        if id_ is None:
            id_ = self.next_id
            self.next_id += 1
        return {
            "id": id_,
            "grp": None if r.random() < 0.1 else r.choice(GROUPS),
            "k": None if r.random() < 0.1 else r.randint(-self.k_range, self.k_range),
            "v": None if r.random() < 0.15 else r.randint(-1000, 1000),
            "s": None if r.random() < 0.15 else "".join(r.choice("xyzå€ ") for _ in range(r.randint(0, 5))),
            "ts": None if r.random() < 0.1 else DAY0 + dt.timedelta(minutes=r.randint(0, 4 * 24 * 60 - 1),
                                                                     microseconds=r.randint(0, 10**6 - 1)),
            "amt": None if r.random() < 0.1 else decimal.Decimal(r.randint(-10**6, 10**6)).scaleb(-2),
        }

    def fresh(self, n):
        return [self.row() for _ in range(n)]

    def upsert_batch(self, existing_ids, n, dup=3):
        """n rows: about half replace existing keys, the rest new; `dup` keys repeated."""
        ids = []
        pool = sorted(existing_ids)
        for _ in range(n):
            if pool and self.rng.random() < 0.5:
                ids.append(self.rng.choice(pool))
            else:
                ids.append(self.next_id)
                self.next_id += 1
        rows = [self.row(i) for i in ids]
        for _ in range(dup):  # duplicates of keys in the batch, in random places: last one wins
            if rows:
                src = self.rng.choice(rows)
                rows.insert(self.rng.randrange(len(rows) + 1), self.row(src["id"]))
        return rows


def _cmp(op, a, b):
    if a is None:
        return False
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "=": a == b, "!=": a != b}[op]


def random_filter(rng: random.Random, rows: list[dict], depth=0):
    """(skade filter text, PyIceberg filter text, python predicate) over the current rows.

    Null never matches a comparison (no `not`, so no three-valued subtleties)."""
    kind = rng.choice(["cmp", "cmp", "in", "null", "combo"] if depth == 0 else ["cmp", "in", "null"])
    if kind == "combo":
        a = random_filter(rng, rows, 1)
        b = random_filter(rng, rows, 1)
        op = rng.choice(["and", "or"])
        if op == "and":
            return f"({a[0]}) and ({b[0]})", f"({a[1]}) and ({b[1]})", lambda r: a[2](r) and b[2](r)
        return f"({a[0]}) or ({b[0]})", f"({a[1]}) or ({b[1]})", lambda r: a[2](r) or b[2](r)
    if kind == "null":
        col = rng.choice(["s", "v", "grp"])
        return f"{col} is null", f"{col} is null", lambda r: r[col] is None
    if kind == "in":
        vals = rng.sample(GROUPS, 2)
        lit = ", ".join(f"'{v}'" for v in vals)
        return f"grp in ({lit})", f"grp in ({lit})", lambda r: r["grp"] in vals
    col = rng.choice(["v", "k", "ts", "amt", "grp", "id"])
    present = [r[col] for r in rows if r[col] is not None]
    if not present:
        present = [RowGen(rng).row(0)[col] or 0]
    val = rng.choice(present)
    op = rng.choice(["<", "<=", ">", ">=", "="] if col != "grp" else ["="])
    lit = skade_literal(TYPES[col], val)
    return f"{col} {op} {lit}", f"{col} {op} {lit}", lambda r: _cmp(op, r[col], val)


# --- files -----------------------------------------------------------------------------------


def rows_table(rows, schema=ARROW) -> pa.Table:
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)


def write_rows(rows, path: Path, schema=ARROW) -> Path:
    pq.write_table(rows_table(rows, schema), path)
    return path


def write_keys(keys: list[dict], path_base: Path, fmt: str, columns=("id",)) -> Path:
    if fmt == "parquet":
        p = path_base.with_suffix(".parquet")
        pq.write_table(pa.table({c: pa.array([k[c] for k in keys], pa.int64()) for c in columns}), p)
    elif fmt == "csv":
        p = path_base.with_suffix(".csv")
        with open(p, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(columns)
            for k in keys:
                w.writerow([k[c] for c in columns])
    else:
        p = path_base.with_suffix(".jsonl")
        p.write_text("".join(json.dumps({c: k[c] for c in columns}) + "\n" for k in keys))
    return p


# --- manifests -------------------------------------------------------------------------------


def live_entries(warehouse: Path, table: str, snapshot_id=None) -> list[dict]:
    """The live (added/existing) manifest entries of a snapshot (default: the current one),
    each {'content': 0|1|2, 'spec_id', 'partition', 'equality_ids', 'file_path', 'record_count'}."""
    _, meta = current_metadata(warehouse, table)
    sid = snapshot_id if snapshot_id is not None else meta.get("current-snapshot-id")
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == sid)
    out = []
    with open(local_path(snap["manifest-list"]), "rb") as fh:
        manifests = list(fastavro.reader(fh))
    for m in manifests:
        with open(local_path(m["manifest_path"]), "rb") as fh:
            for e in fastavro.reader(fh):
                if e["status"] == 2:
                    continue
                d = e["data_file"]
                out.append({"content": d["content"], "spec_id": m["partition_spec_id"], "partition": d["partition"],
                            "equality_ids": d.get("equality_ids"), "file_path": d["file_path"],
                            "record_count": d["record_count"]})
    return out
