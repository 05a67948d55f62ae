"""Scans and appends of data much larger than README's memory bound stay under it.

One table of 5M rows with two 240-byte strings a row (about 2.5 GB decoded, small on disk
because the strings repeat): 3M rows appended by skade from a Parquet file, 2M rows in a
file PyIceberg adds whose row groups hold 1M rows (~500 MB decoded each, more than the
bound alone). Each command runs as a child process; its peak RSS (the kernel's ru_maxrss
of the child) must stay under the bound README states, and its output must be complete.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from skade_util import Skade, open_catalog

README = Path(__file__).resolve().parents[2] / "README.md"
PEAK_RSS = Path(__file__).resolve().parents[2] / "scripts" / "peak_rss.py"
SKADE_ROWS, ADDED_ROWS, CSV_ROWS = 3_000_000, 2_000_000, 1_200_000
POOL = pa.array([f"{i:04d}" * 60 for i in range(2000)])  # 240-byte strings


def readme_bound_mib() -> int:
    m = re.search(r"peak memory \(RSS\) under (\d+) MiB", README.read_text())
    assert m, "README states no memory bound ('peak memory (RSS) under N MiB')"
    return int(m.group(1))


def run_measured(cmd: list[str], stdout=subprocess.DEVNULL, consume=None, env=None) -> tuple[int, float, bytes]:
    """Runs cmd; returns (exit code, peak RSS in MiB, stderr). `consume` reads stdout.

    Measured by scripts/peak_rss.py: a child forked from this (large) process would count
    its memory too."""
    with tempfile.NamedTemporaryFile("r") as rss:
        p = subprocess.Popen([sys.executable, "-S", str(PEAK_RSS), rss.name, *cmd], stdout=stdout,
                             stderr=subprocess.PIPE, env=env)
        if consume:
            consume(p.stdout)
        err = p.stderr.read()
        p.wait()
        return p.returncode, int(rss.read() or 0) / 1024, err


def rows(first: int, n: int) -> pa.Table:
    ids = pa.array(range(first, first + n), pa.int64())

    def strings(mult: int):
        idx = pc.cast(pc.bit_wise_and(pc.multiply(ids, mult), 1023), pa.int32())
        return pa.DictionaryArray.from_arrays(idx, POOL)

    return pa.table({"id": ids, "k": pc.cast(pc.bit_wise_and(ids, 1023), pa.int32()),
                     "s1": strings(7919), "s2": strings(104729)})


def expected_s1(i: int) -> str:
    return POOL[(i * 7919) & 1023].as_py()


@pytest.fixture(scope="module")
def big(tmp_path_factory, skade_bin):
    root = tmp_path_factory.mktemp("bounded")
    wh = root / "wh"
    s = Skade(wh, skade_bin)
    s.ok("init")
    s.ok("create-namespace", "m")
    s.ok("create", "m.wide", "--schema", "id:long, k:int, s1:string, s2:string")
    bound = readme_bound_mib()
    src = root / "in.parquet"
    pq.write_table(rows(0, SKADE_ROWS), src, store_schema=False)
    rc, rss, err = run_measured([skade_bin, "--warehouse", str(wh), "append", "m.wide", str(src)])
    assert rc == 0, err
    added = root / "added.parquet"  # no field ids: PyIceberg's add_files maps columns by name
    pq.write_table(rows(SKADE_ROWS, ADDED_ROWS), added, row_group_size=1_000_000, store_schema=False)
    assert pq.ParquetFile(added).metadata.num_row_groups == 2
    open_catalog(wh).load_table("m.wide").add_files([str(added)])
    return s, root, bound, rss


def scan_cmd(s: Skade, *args) -> list[str]:
    return [s.binary, "--warehouse", str(s.warehouse), "scan", "m.wide", *args]


def test_parquet_append_stays_under_bound(big):
    _, _, bound, append_rss = big
    # 3M rows of ~500 decoded bytes each went in: 1.5 GB through the writer.
    assert append_rss < bound, f"append of a 1.5 GB (decoded) Parquet input peaked at {append_rss:.0f} MiB"


@pytest.fixture(scope="module")
def big_csv(big):
    """A CSV of CSV_ROWS rows (id, k, s1 of ~490 bytes) larger than the bound."""
    _, root, bound, _ = big
    ids = pa.array(range(CSV_ROWS), pa.int64())
    s1 = pc.binary_join_element_wise(pc.cast(ids, pa.string()), pa.scalar("x" * 480), "")
    path = root / "in.csv"
    pcsv.write_csv(pa.table({"id": ids, "k": pc.cast(pc.bit_wise_and(ids, 1023), pa.int32()), "s1": s1}), path)
    size_mib = path.stat().st_size / 2**20
    assert size_mib > bound, f"the CSV ({size_mib:.0f} MiB) should be larger than the bound"
    yield path, size_mib
    path.unlink()


def csv_row(i: int) -> dict:
    return {"id": i, "k": i & 1023, "s1": f"{i}" + "x" * 480}


def test_csv_append_stays_under_bound(big, big_csv):
    s, _, bound, _ = big
    path, size_mib = big_csv
    s.ok("create", "m.csv", "--schema", "id:long, k:int, s1:string")
    rc, rss, err = run_measured([s.binary, "--warehouse", str(s.warehouse), "append", "m.csv", str(path)])
    assert rc == 0, err
    assert rss < bound, f"append of a {size_mib:.0f} MiB CSV peaked at {rss:.0f} MiB (bound {bound} MiB)"
    out = s.ok("scan", "m.csv", "--where", f"id = {CSV_ROWS - 1}", "--format", "jsonl")
    assert json.loads(out) == csv_row(CSV_ROWS - 1)


@pytest.mark.parametrize("command", ["overwrite", "upsert"])
def test_csv_replacing_writes_stay_under_bound(big, big_csv, command):
    """overwrite writes its input as it reads it, as append does; upsert reads the input's
    keys first, then writes the rows they keep as it reads it again. Neither holds the CSV
    whole. The rows replaced go (ids 5 and 7), the others stay."""
    s, root, bound, _ = big
    path, size_mib = big_csv
    table = f"m.{command}"
    s.ok("create", table, "--schema", "id:long!, k:int, s1:string", "--identifier", "id")
    old = root / f"{command}-old.csv"
    old.write_text("id,k,s1\n5,0,old\n7,0,old\n" + "".join(f"{i},1,stays\n" for i in range(CSV_ROWS, CSV_ROWS + 3)))
    s.ok("append", table, str(old))
    args = [command, table, str(path)] + (["--where", f"id < {CSV_ROWS}"] if command == "overwrite" else [])
    said = []
    rc, rss, err = run_measured([s.binary, "--warehouse", str(s.warehouse), *args], stdout=subprocess.PIPE,
                                consume=lambda f: said.append(f.read().decode()))
    assert rc == 0, err
    assert f"{CSV_ROWS} rows added, 2 removed" in said[0]
    assert rss < bound, f"{command} from a {size_mib:.0f} MiB CSV peaked at {rss:.0f} MiB (bound {bound} MiB)"
    assert s.ok("scan", table, "--format", "none").strip() == f"{CSV_ROWS + 3} rows"
    rows = [json.loads(line) for line in s.ok("scan", table, "--where", "id in (5, 7)", "--format",
                                              "jsonl").splitlines()]
    assert sorted(rows, key=lambda r: r["id"]) == [csv_row(5), csv_row(7)]
    kept = s.ok("scan", table, "--where", f"id >= {CSV_ROWS}", "--columns", "s1", "--format", "csv")
    assert kept.split() == ["s1", "stays", "stays", "stays"]


KEY_ROWS = 3_000_000


def test_upsert_of_many_keys_stays_under_bound(big):
    """An upsert holds its keys while it matches them, in typed columns and hash tables
    of a few dozen bytes a key: 3M keys (half of them replacing rows, in an order unlike
    the table's) stay under the bound, which key texts in hash sets (about 300 bytes a
    key) did not."""
    s, root, bound, _ = big
    s.ok("create", "m.keys", "--schema", "id:long!, v:long", "--identifier", "id")
    base = root / "keys-base.parquet"
    ids = pa.array(range(KEY_ROWS), pa.int64())
    pq.write_table(pa.table({"id": ids, "v": ids}), base)
    s.ok("append", "m.keys", str(base))
    # ids KEY_ROWS/2 .. 3*KEY_ROWS/2, permuted by a multiplier coprime with KEY_ROWS.
    new = pa.array([(i * 7_919) % KEY_ROWS + KEY_ROWS // 2 for i in range(KEY_ROWS)], pa.int64())
    changes = root / "keys-changes.parquet"
    pq.write_table(pa.table({"id": new, "v": pc.negate(new)}), changes)
    said = []
    rc, rss, err = run_measured([s.binary, "--warehouse", str(s.warehouse), "upsert", "m.keys", str(changes)],
                                stdout=subprocess.PIPE, consume=lambda f: said.append(f.read().decode()))
    assert rc == 0, err
    assert f"{KEY_ROWS} rows added, {KEY_ROWS // 2} removed" in said[0]
    assert rss < bound, f"upsert of {KEY_ROWS} keys peaked at {rss:.0f} MiB (bound {bound} MiB)"
    assert s.ok("scan", "m.keys", "--format", "none").strip() == f"{KEY_ROWS * 3 // 2} rows"
    edge = KEY_ROWS // 2
    got = [json.loads(line) for line in s.ok("scan", "m.keys", "--where", f"id in ({edge - 1}, {edge}, 7)",
                                              "--format", "jsonl").splitlines()]
    assert sorted(got, key=lambda r: r["id"]) == [{"id": 7, "v": 7}, {"id": edge - 1, "v": edge - 1},
                                                 {"id": edge, "v": -edge}]
    base.unlink()
    changes.unlink()


def test_scan_table_stays_under_bound(big):
    """The table format prints blocks of rows as it reads: the whole 2.5 GB is never held."""
    s, _, bound, _ = big
    seen = {"lines": 0, "head": b"", "tail": b""}

    def consume(f):
        while chunk := f.read(1 << 20):
            seen["lines"] += chunk.count(b"\n")
            if len(seen["head"]) < 4096:
                seen["head"] += chunk[:4096]
            seen["tail"] = (seen["tail"] + chunk)[-4096:]

    rc, rss, err = run_measured(scan_cmd(s, "--format", "table"), stdout=subprocess.PIPE, consume=consume)
    assert rc == 0, err
    assert seen["lines"] == SKADE_ROWS + ADDED_ROWS + 3  # header, rule, rows, count
    head = seen["head"].decode().splitlines()
    assert head[0].split() == ["id", "k", "s1", "s2"]
    first = head[2].split()
    assert first[2] == expected_s1(int(first[0]))[:77] + "..."
    assert seen["tail"].decode().splitlines()[-1] == f"({SKADE_ROWS + ADDED_ROWS} rows)"
    assert rss < bound, f"scan --format table peaked at {rss:.0f} MiB (bound {bound} MiB)"


def test_scan_parquet_stays_under_bound(big):
    s, root, bound, _ = big
    out = root / "out.parquet"
    rc, rss, err = run_measured(scan_cmd(s, "--format", "parquet", "--output", str(out)))
    assert rc == 0, err
    assert rss < bound, f"scan --format parquet peaked at {rss:.0f} MiB (bound {bound} MiB)"
    f = pq.ParquetFile(out)
    assert f.metadata.num_rows == SKADE_ROWS + ADDED_ROWS
    # The output's row groups are closed by size, so the writer never buffers much; its
    # pages are compressed as a table's are.
    assert f.metadata.num_row_groups > 10
    assert {f.metadata.row_group(0).column(c).compression for c in range(f.metadata.num_columns)} == {"ZSTD"}
    ids = pq.read_table(out, columns=["id"])["id"]
    assert pc.min(ids).as_py() == 0 and pc.max(ids).as_py() == SKADE_ROWS + ADDED_ROWS - 1
    assert pc.count_distinct(ids).as_py() == SKADE_ROWS + ADDED_ROWS
    last = f.read_row_group(f.metadata.num_row_groups - 1)
    tail = last.slice(last.num_rows - 1).to_pylist()[0]
    assert tail["s1"] == expected_s1(tail["id"]) and tail["k"] == tail["id"] & 1023
    out.unlink()


WIDE_ROWS = 4_000_000
WIDE_ROW_GROUP = 500_000  # ~60 MiB decoded: under half the read-ahead budget of up to 4 workers


def wide_rows(n: int) -> pa.Table:
    """The benchmark's shape: 11 columns of numbers, timestamps and repeating strings, about
    170 bytes a row decoded (the 4M rows are ~680 MB)."""
    ids = pa.array(range(n), pa.int64())
    user = pc.cast(pc.bit_wise_and(pc.multiply(ids, 7919), 65535), pa.int32())
    frac = pc.divide(pc.cast(pc.bit_wise_and(pc.multiply(ids, 104729), 1023), pa.float64()), 1024.0)
    words = pa.array([f"order note {i}: shipped to warehouse {i % 7}" for i in range(1000)])
    return pa.table({
        "id": ids, "user_id": user, "quantity": pc.multiply(ids, 3),
        "price": pc.multiply(frac, 1000.0), "discount": frac, "score": pc.multiply(frac, 100.0),
        "name": pc.binary_join_element_wise("user_", pc.cast(user, pa.string()), ""),
        "category": pc.take(pa.array([f"category_{i}" for i in range(16)]), pc.bit_wise_and(ids, 15)),
        "comment": pc.take(words, pc.bit_wise_and(pc.multiply(ids, 31), 511)),
        "ts": pc.cast(pc.add(pc.multiply(ids, 1_000_000), 1_700_000_000_000_000), pa.timestamp("us", tz="UTC")),
        "country": pc.take(pa.array(["SE", "NO", "DK", "FI"]), pc.bit_wise_and(ids, 3)),
    })


@pytest.fixture(scope="module")
def wide(tmp_path_factory, skade_bin):
    root = tmp_path_factory.mktemp("wide")
    s = Skade(root / "wh", skade_bin)
    s.ok("init")
    s.ok("create-namespace", "b")
    s.ok("create", "b.wide", "--schema", "id:long, user_id:int, quantity:long, price:double, discount:double, "
         "score:double, name:string, category:string, comment:string, ts:timestamptz, country:string",
         "--property", f"write.parquet.row-group-limit={WIDE_ROW_GROUP}")
    src = root / "in.parquet"
    pq.write_table(wide_rows(WIDE_ROWS), src)
    s.ok("append", "b.wide", str(src))
    src.unlink()
    return s


def readme_bound_workers() -> int:
    m = re.search(r"with up to (\d+) worker threads", README.read_text())
    assert m, "README states no worker count for its memory bound ('with up to N worker threads')"
    return int(m.group(1))


@pytest.mark.parametrize("format", ["none", "parquet"])
@pytest.mark.parametrize("share", ["one", "some", "all"])
def test_scan_of_many_large_row_groups_stays_under_bound_on_any_core_count(wide, format, share):
    """Row groups each under half the read-ahead budget decode whole, several at once, on
    every worker: the budget must leave room for what each worker's allocator keeps, up to
    the worker count README names."""
    bound, most = readme_bound_mib(), readme_bound_workers()
    workers = {"one": 1, "some": max(1, most // 2), "all": most}[share]
    out_file = wide.warehouse.parent / f"out-{workers}.parquet"
    cmd = [wide.binary, "--warehouse", str(wide.warehouse), "scan", "b.wide", "--format", format]
    if format == "parquet":
        cmd += ["--output", str(out_file)]
    out = []
    rc, rss, err = run_measured(cmd, stdout=subprocess.PIPE, consume=lambda f: out.append(f.read()),
                                env={**os.environ, "SKADE_THREADS": str(workers)})
    assert rc == 0, err
    if format == "none":
        assert out[0].decode().strip() == f"{WIDE_ROWS} rows"
    else:
        assert pq.ParquetFile(out_file).metadata.num_rows == WIDE_ROWS
        out_file.unlink()
    assert rss < bound, f"scan --format {format} with {workers} workers peaked at {rss:.0f} MiB (bound {bound} MiB)"
