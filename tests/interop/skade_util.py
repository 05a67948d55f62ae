"""Shared helpers for the interop tests: running skade, random data, row normalisation.

Imported by the test modules (pytest puts this folder on sys.path).
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import os
import random
import re
import signal
import sqlite3
import subprocess
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq

SKADE_BIN = os.environ.get("SKADE_BIN", "/work/main/build/bin/skade")

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_TZ = dt.datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_DATE = dt.date(1970, 1, 1)


# --- running skade ---------------------------------------------------------------------------


class Skade:
    """Runs the skade binary against one warehouse; every call returns (rc, stdout, stderr)."""

    def __init__(self, warehouse: Path, binary: str = SKADE_BIN):
        self.warehouse = Path(warehouse)
        self.binary = binary

    def __call__(self, *args, timeout: float = 120, env=None, input: bytes | None = None):
        """`input`: bytes for standard input (else the test's is inherited)."""
        cmd = [self.binary, "--warehouse", str(self.warehouse), *[str(a) for a in args]]
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env, input=input)
        # undecodable bytes stay visible (as \xNN) instead of failing the test in the runner
        return (p.returncode, p.stdout.decode("utf-8", "backslashreplace"),
                p.stderr.decode("utf-8", "backslashreplace"))

    def ok(self, *args, **kw) -> str:
        """Runs and asserts exit 0 with nothing on stderr; returns stdout."""
        rc, out, err = self(*args, **kw)
        assert rc == 0, f"skade {' '.join(map(str, args))} -> rc={rc}\nstdout={out}\nstderr={err}"
        assert err.strip() == "", f"skade {' '.join(map(str, args))} wrote to stderr: {err}"
        return out

    def rows(self, table: str, *args, tmpdir: Path | None = None) -> pa.Table:
        """Scans through `--format parquet --output` and reads the result with pyarrow."""
        tmpdir = Path(tmpdir or self.warehouse.parent)
        out = tmpdir / f"scan-{uuid.uuid4().hex}.parquet"
        self.ok("scan", table, *args, "--format", "parquet", "--output", out)
        t = pq.read_table(out)
        out.unlink()
        return t

    def jsonl(self, *args) -> list[dict]:
        out = self.ok(*args, "--format", "jsonl")
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def snapshots(self, table: str) -> list[dict]:
        return self.jsonl("snapshots", table)

    def log(self, *args) -> list[dict]:
        return self.jsonl("log", *args)


def open_catalog(warehouse: Path):
    from pyiceberg.catalog.sql import SqlCatalog

    wh = Path(warehouse)
    return SqlCatalog("skade", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")


def catalog_row(warehouse: Path, table: str):
    ns, name = table.rsplit(".", 1)
    con = sqlite3.connect(Path(warehouse) / "catalog.db")
    try:
        return con.execute(
            "select metadata_location, previous_metadata_location from iceberg_tables "
            "where catalog_name='skade' and table_namespace=? and table_name=?",
            (ns, name),
        ).fetchone()
    finally:
        con.close()


def commit_log_rows(warehouse: Path) -> list[tuple]:
    con = sqlite3.connect(Path(warehouse) / "catalog.db")
    try:
        return con.execute(
            "select commit_seq, table_namespace, table_name, action, snapshot_id, operation, engine "
            "from skade_commit_log order by commit_seq"
        ).fetchall()
    finally:
        con.close()


def local_path(location: str) -> Path:
    """file:///a/b -> /a/b ; plain paths unchanged. No percent-decoding: partition folders are
    named with the escaped value (as Java and PyIceberg do), the URI path is the file's name."""
    if location.startswith("file:"):
        return Path(urlparse(location).path)
    return Path(location)


def current_metadata(warehouse: Path, table: str) -> tuple[Path, dict]:
    row = catalog_row(warehouse, table)
    assert row is not None, f"{table} not in catalog"
    p = local_path(row[0])
    return p, json.loads(p.read_text())


def tree_listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under root with (size, mtime_ns): to show that nothing was written."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            st = p.stat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


# --- normalising rows ------------------------------------------------------------------------


def norm(v):
    """A canonical Python value, so rows from pyarrow, PyIceberg and JSON compare equal."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else v
    if isinstance(v, uuid.UUID):
        return v.bytes
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, decimal.Decimal):
        return v
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return v.astimezone(UTC)
        return v
    if isinstance(v, dict):
        return tuple(sorted((k, norm(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(e, tuple) and len(e) == 2 for e in v) and isinstance(v, list):
            # pyarrow renders a map as a list of (key, value) tuples
            return ("map",) + tuple(sorted(((norm(k), norm(x)) for k, x in v), key=repr))
        return tuple(norm(e) for e in v)
    return v


def norm_rows(rows, columns=None) -> list:
    if isinstance(rows, pa.Table):
        rows = rows.to_pylist()
    out = []
    for r in rows:
        cols = columns or list(r.keys())
        out.append(tuple((c, norm(r[c])) for c in cols))
    return sorted(out, key=repr)


def pyiceberg_filter(text: str) -> str:
    """A skade filter as PyIceberg's parser takes it: it has no `not between`, the same as
    `not (x between ...)`."""
    return re.sub(r"(\w+) not between ('[^']*'|-?\d+) and ('[^']*'|-?\d+)", r"not (\1 between \2 and \3)", text)


def assert_same_rows(actual, expected, columns=None, what=""):
    a = norm_rows(actual, columns)
    e = norm_rows(expected, columns)
    if a != e:
        missing = [r for r in e if r not in a][:5]
        extra = [r for r in a if r not in e][:5]
        raise AssertionError(
            f"{what}: {len(a)} rows vs expected {len(e)}; missing (first 5) {missing}; "
            f"unexpected (first 5) {extra}"
        )


# --- random data -----------------------------------------------------------------------------

ALL_TYPES_SPEC = (
    "id:long!, b:boolean, i:int, l:long, f:float, d:double, dec:decimal(10,2), dt:date, "
    "tm:time, ts:timestamp, tstz:timestamptz, s:string, req:string!, u:uuid, bin:binary, "
    "fx:fixed(5), tags:list<string>, addr:struct<city:string,zip:int>, m:map<string,long>, "
    "deep:struct<inner:struct<x:double>,xs:list<struct<a:int,b:string>>>, "
    "mm:map<string,list<int>>"
)

# Iceberg type strings PyIceberg prints for the columns above, and whether they are required.
ALL_TYPES_ICEBERG = {
    "id": ("long", True),
    "b": ("boolean", False),
    "i": ("int", False),
    "l": ("long", False),
    "f": ("float", False),
    "d": ("double", False),
    "dec": ("decimal(10, 2)", False),
    "dt": ("date", False),
    "tm": ("time", False),
    "ts": ("timestamp", False),
    "tstz": ("timestamptz", False),
    "s": ("string", False),
    "req": ("string", True),
    "u": ("uuid", False),
    "bin": ("binary", False),
    "fx": ("fixed[5]", False),
}

ADDR_T = pa.struct([("city", pa.string()), ("zip", pa.int32())])
DEEP_T = pa.struct(
    [
        ("inner", pa.struct([("x", pa.float64())])),
        ("xs", pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())]))),
    ]
)

ALL_TYPES_ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("b", pa.bool_()),
        pa.field("i", pa.int32()),
        pa.field("l", pa.int64()),
        pa.field("f", pa.float32()),
        pa.field("d", pa.float64()),
        pa.field("dec", pa.decimal128(10, 2)),
        pa.field("dt", pa.date32()),
        pa.field("tm", pa.time64("us")),
        pa.field("ts", pa.timestamp("us")),
        pa.field("tstz", pa.timestamp("us", tz="UTC")),
        pa.field("s", pa.string()),
        pa.field("req", pa.string(), nullable=False),
        pa.field("u", pa.binary(16)),
        pa.field("bin", pa.binary()),
        pa.field("fx", pa.binary(5)),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("addr", ADDR_T),
        pa.field("m", pa.map_(pa.string(), pa.int64())),
        pa.field("deep", DEEP_T),
        pa.field("mm", pa.map_(pa.string(), pa.list_(pa.int32()))),
    ]
)

_EDGE_TS = [
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
    dt.datetime(1970, 1, 1),
    dt.datetime(1900, 1, 1, 0, 0, 0, 1),
    dt.datetime(2024, 2, 29, 23, 0, 0),
    dt.datetime(1969, 1, 1),
    dt.datetime(2038, 1, 19, 3, 14, 8),
]
_EDGE_DATES = [dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(1900, 3, 1), dt.date(2024, 2, 29)]
_ALPHABET = "abcxyzÅæø€😀 _-"


def _rand_str(rng, maxlen=8):
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, maxlen)))


def random_value(rng: random.Random, col: str):
    r = rng.random
    if col == "b":
        return r() < 0.5
    if col == "i":
        return rng.choice([rng.randint(-(2**31), 2**31 - 1), rng.randint(-1000, 1000), -(2**31), 2**31 - 1, 0, -1])
    if col in ("l", "id"):
        return rng.choice([rng.randint(-(2**63), 2**63 - 1), rng.randint(-10**6, 10**6), -1, 0])
    if col == "f":
        return rng.choice([float(rng.randint(-1000, 1000)) / 4, 0.0, -0.5, 3.5e20, float("nan")]) if r() < 0.9 else float(rng.randint(-5, 5))
    if col == "d":
        return rng.choice([rng.uniform(-1e6, 1e6), 0.0, -1e-300, 1e300, float(rng.randint(-100, 100))])
    if col == "dec":
        return decimal.Decimal(rng.randint(-9999999999, 9999999999)).scaleb(-2)
    if col == "dt":
        return rng.choice(_EDGE_DATES + [EPOCH_DATE + dt.timedelta(days=rng.randint(-40000, 30000))])
    if col == "tm":
        us = rng.choice([0, 86400 * 10**6 - 1, rng.randint(0, 86400 * 10**6 - 1)])
        return (dt.datetime(2000, 1, 1) + dt.timedelta(microseconds=us)).time()
    if col == "ts":
        return rng.choice(_EDGE_TS + [EPOCH + dt.timedelta(microseconds=rng.randint(-3 * 10**15, 3 * 10**15))])
    if col == "tstz":
        v = random_value(rng, "ts")
        return v.replace(tzinfo=UTC)
    if col in ("s", "req"):
        return _rand_str(rng)
    if col == "u":
        return uuid.UUID(int=rng.getrandbits(128)).bytes
    if col == "bin":
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 6)))
    if col == "fx":
        return bytes(rng.getrandbits(8) for _ in range(5))
    if col == "tags":
        return [None if r() < 0.1 else _rand_str(rng, 4) for _ in range(rng.randint(0, 3))]
    if col == "addr":
        return {"city": None if r() < 0.2 else _rand_str(rng, 5), "zip": None if r() < 0.2 else rng.randint(0, 99999)}
    if col == "m":
        return [(f"k{j}", None if r() < 0.1 else rng.randint(-100, 100)) for j in range(rng.randint(0, 3))]
    if col == "deep":
        return {
            "inner": None if r() < 0.2 else {"x": None if r() < 0.2 else rng.uniform(-1, 1)},
            # never null: PyIceberg 0.12 reads a null list<struct> inside a struct as [] (its
            # quirk, checked on skade's file with pyarrow), so a null here would not compare
            "xs": [{"a": rng.randint(0, 9), "b": _rand_str(rng, 3)} for _ in range(rng.randint(0, 2))],
        }
    if col == "mm":
        return [(f"q{j}", None if r() < 0.2 else [rng.randint(0, 5) for _ in range(rng.randint(0, 2))]) for j in range(rng.randint(0, 2))]
    raise KeyError(col)


def all_types_table(n: int, seed: int, null_frac: float = 0.15, id_start: int = 0, pools: dict | None = None) -> pa.Table:
    """n random rows of every type, nulls in every optional column.

    pools: {column: k} draws that column from k fixed random values (few partitions)."""
    rng = random.Random(seed)
    pool_values = {}
    for col, k in (pools or {}).items():
        prng = random.Random(f"{seed}-{col}")
        pool_values[col] = [random_value(prng, col) for _ in range(k)]
    cols = {f.name: [] for f in ALL_TYPES_ARROW}
    for row in range(n):
        for f in ALL_TYPES_ARROW:
            if f.name == "id":
                cols["id"].append(id_start + row)
            elif f.nullable and rng.random() < null_frac:
                cols[f.name].append(None)
            elif f.name in pool_values:
                cols[f.name].append(rng.choice(pool_values[f.name]))
            else:
                cols[f.name].append(random_value(rng, f.name))
    return pa.table({f.name: pa.array(cols[f.name], f.type) for f in ALL_TYPES_ARROW}, schema=ALL_TYPES_ARROW)


def write_parquet(table: pa.Table, path: Path, **kw) -> Path:
    pq.write_table(table, path, **kw)
    return path


# --- Iceberg internal representations (for PyIceberg transforms) -----------------------------


def to_internal(iceberg_type: str, v):
    """A pyarrow Python value as PyIceberg's transforms expect it."""
    if v is None:
        return None
    if iceberg_type == "date":
        return (v - EPOCH_DATE).days
    if iceberg_type == "time":
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 10**6 + v.microsecond
    if iceberg_type == "timestamp":
        return (v - EPOCH) // dt.timedelta(microseconds=1)
    if iceberg_type == "timestamptz":
        return (v - EPOCH_TZ) // dt.timedelta(microseconds=1)
    if iceberg_type == "uuid":
        return uuid.UUID(bytes=v) if isinstance(v, bytes) else v
    return v


def skade_literal(iceberg_type: str, v) -> str:
    """The text of a skade filter literal for a pyarrow Python value."""
    if iceberg_type in ("int", "long", "float", "double"):
        return repr(v)
    if iceberg_type == "boolean":
        return "true" if v else "false"
    if iceberg_type.startswith("decimal"):
        return str(v)
    if iceberg_type in ("binary",) or iceberg_type.startswith("fixed"):
        return "'0x" + v.hex() + "'"
    if iceberg_type == "uuid":
        return "'" + str(uuid.UUID(bytes=v)) + "'"
    if iceberg_type in ("date", "time", "timestamp", "timestamptz"):
        return "'" + v.isoformat() + "'"
    return "'" + str(v).replace("'", "''") + "'"


def pyiceberg_literal(iceberg_type: str, v):
    if iceberg_type in ("date", "time", "timestamp", "timestamptz"):
        return v.isoformat()
    if iceberg_type == "uuid":
        return uuid.UUID(bytes=v)
    return v


class Served:
    """A running `skade serve`; `.url` is its base URL."""

    def __init__(self, warehouse: Path, *args: str, listen: str = "127.0.0.1:0", binary: str = SKADE_BIN):
        self.warehouse = warehouse
        self.proc = subprocess.Popen([str(binary), "--warehouse", str(warehouse), "serve", "--listen", listen,
                                      *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://([^/]+)/", line)
        if not m:
            self.proc.kill()
            raise AssertionError(f"serve did not start: {line!r} {self.proc.stderr.read()!r}")
        self.url = f"http://{m.group(1)}"

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
