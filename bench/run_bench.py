#!/usr/bin/env python3
"""skade benchmarks: scan, export, append, upsert, small files and CDC, skade vs PyIceberg (and pyarrow for scans).

skade's side runs in the C++ drivers (build/bin/scan_bench, append_bench, upsert_bench),
which time the C++ API with a steady clock and print JSON; the peers run here, in
the same run, on the same table / the same catalog kind, interleaved round by
round (skade, PyIceberg, pyarrow, skade, ...). Figures are printed and written to
bench/results/<name>.json.

Protocol (docs perf-anchors section 9): warm page cache; default thread counts on
both sides (Arrow's CPU pool = the machine's cores, PyIceberg's default executor);
one warm-up per engine, then --rounds interleaved rounds; the reported figure of
an engine is its median time, the reported ratio is the median of per-round
ratios with the min-max spread.

Usage: run_bench.py [--build-dir build] [--data-dir build/bench-data]
                    [--only scan|export|append|upsert|small-files|cdc] [--rounds 5] [--commits 200] [--rows 1000000]
                    [--small-files 300] [--small-file-rows 200]
                    [--scan-arms full,projection,...]
                    [--upsert-batches 10] [--upsert-batch-rows 10000]
                    [--upsert-update-fraction 0.1] [--pyiceberg-upsert-batches N]
"""
from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
SEED = 20240611

# One schema for both engines. skade's CLI schema language assigns ids 1..11 in
# this order; the PyIceberg schema below uses the same ids.
COLUMNS = [  # (name, skade type, arrow type)
    ("id", "long", pa.int64()),
    ("user_id", "int", pa.int32()),
    ("quantity", "long", pa.int64()),
    ("price", "double", pa.float64()),
    ("discount", "double", pa.float64()),
    ("score", "double", pa.float64()),
    ("name", "string", pa.string()),
    ("category", "string", pa.string()),
    ("comment", "string", pa.string()),
    ("ts", "timestamptz", pa.timestamp("us", tz="UTC")),
    ("country", "string", pa.string()),
]
SKADE_SCHEMA = ", ".join(f"{n}:{t}" for n, t, _ in COLUMNS)
PARTITION = "country"
# Compactions (main rolled back between them) and writes of the same rows per upsert arm;
# the first of each, a fresh process's, is reported apart and left out of the median.
COMPACT_ROUNDS = 4
# Scans per skade process in each upsert-scan round (their median is the round's figure).
UPSERT_SCAN_REPS = 3
COUNTRIES = ["SE", "NO", "DK", "FI"]
# Same write settings on both sides (these are also both engines' defaults).
PROPERTIES = {
    "write.parquet.compression-codec": "zstd",
    "write.parquet.compression-level": "1",
    "write.parquet.row-group-limit": "1048576",
    "write.target-file-size-bytes": "536870912",
}
SCAN_ARMS = [  # (name, columns or None, filter or None, the filter as pyarrow's `filters=`)
    ("full", None, None, None),
    ("projection", ["id", "price"], None, None),
    # The identity partition proves it: skade and PyIceberg drop the row filter per file.
    ("projection_filter", ["id", "price"], "country = 'SE'", [("country", "=", "SE")]),
    # Row filters on dictionary-encoded strings that no partition proves: one of the 16
    # categories (6.25% of rows), and a range selecting 12 of the 1000 comments (1.2%).
    ("string_eq_filter", ["id", "price"], "category = 'category_kilo'", [("category", "=", "category_kilo")]),
    ("string_range_filter", ["id", "price"], "comment >= 'order note 990'", [("comment", ">=", "order note 990")]),
    # 2% of the ids, clustered (ids ascend within each file): the row groups' statistics
    # cannot prune, the pages of the other projected columns can be skipped.
    ("id_range_filter", ["id", "price", "ts"], "id >= 500000 and id < 520000",
     [("id", ">=", 500000), ("id", "<", 520000)]),
]
TARGETS = {
    "scan_vs_pyiceberg": 1.5,   # skade rows/s >= 1.5x PyIceberg, every arm
    "scan_full_vs_pyarrow": 1.0,  # skade rows/s >= 1.0x pyarrow, full scan (issue 13)
    "append_big_vs_pyiceberg": 2.0,  # skade rows/s >= 2x PyIceberg, 1M-row append
    "commit_p50_vs_pyiceberg": 0.3,  # skade p50 latency <= 0.3x PyIceberg's
}


# ---------------------------------------------------------------- data

def generate(rows: int, path: Path) -> None:
    """Deterministic source data (seeded Arrow RNG), written once and cached."""
    def rand(k: int):
        return pc.random(rows, initializer=SEED + k)

    def ints(k: int, hi: int, typ):
        return pc.cast(pc.floor(pc.multiply(rand(k), hi)), typ)

    def pick(k: int, values: list[str]):
        return pc.take(pa.array(values), ints(k, len(values), pa.int32()))

    user_id = ints(1, 100_000, pa.int32())
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
             "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]
    comments = [f"order note {i}: {words[i % 16]} {words[(i * 7) % 16]} {words[(i * 13) % 16]} shipped"
                for i in range(1000)]
    ts0 = 1_700_000_000_000_000
    table = pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "user_id": user_id,
        "quantity": ints(2, 1_000_000, pa.int64()),
        "price": pc.round(pc.multiply(rand(3), 1000.0), 2),
        "discount": rand(4),
        "score": pc.multiply(rand(5), 100.0),
        "name": pc.binary_join_element_wise("user_", pc.cast(user_id, pa.string()), ""),
        "category": pick(6, [f"category_{w}" for w in words]),
        "comment": pick(7, comments),
        "ts": pc.cast(pc.add(ints(8, 365 * 86400 * 1_000_000, pa.int64()), ts0),
                      pa.timestamp("us", tz="UTC")),
        "country": pick(9, COUNTRIES),
    })
    assert table.schema.names == [c[0] for c in COLUMNS]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.rename(path)


def source_file(data_dir: Path, rows: int) -> Path:
    path = data_dir / f"source-{rows}-{SEED}.parquet"
    if not path.exists():
        t0 = time.perf_counter()
        generate(rows, path)
        print(f"generated {path} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return path


# ---------------------------------------------------------------- helpers

def run_driver(build_dir: Path, name: str, *args: str) -> dict:
    cmd = [str(build_dir / "bin" / name), *args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_timed(cmd: list[str]) -> tuple[float, str]:
    """Runs cmd to the end; returns (wall s of the whole process, stdout)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return wall, p.stdout


# A peer's scan in its own Python process, for its peak RSS (argv: warehouse, table,
# engine, columns or "", filter or "", pyarrow filters as JSON, data files...).
PEER_SCAN = """
import json, sys, pyarrow.parquet as pq
wh, table, engine, cols, flt, pa_filters, *files = sys.argv[1:]
cols = cols.split(",") if cols else None
if engine == "pyiceberg":
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("skade", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    kw = {"selected_fields": tuple(cols)} if cols else {}
    if flt:
        kw["row_filter"] = flt
    t = cat.load_table(table).scan(**kw).to_arrow()
else:
    t = pq.read_table(files, columns=cols, partitioning=None,
                      filters=[tuple(f) for f in json.loads(pa_filters)] or None)
print(t.num_rows)
"""


def peak_rss_mib(cmd: list[str]) -> float:
    """Peak RSS of cmd run to the end, through scripts/peak_rss.py (a child forked from
    this process, which holds the peers' data, would count that memory too)."""
    with tempfile.NamedTemporaryFile("r") as out:
        p = subprocess.run([sys.executable, "-S", str(REPO / "scripts" / "peak_rss.py"), out.name, *cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr.decode()}")
        return int(out.read()) / 1024


def prop_args() -> list[str]:
    out = []
    for k, v in PROPERTIES.items():
        out += ["--property", f"{k}={v}"]
    return out


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def quantile(xs: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def spread(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def after_first(times: list[float]) -> float:
    """The median of repeated timings without the first (a fresh process touching fresh memory)."""
    return statistics.median(times[1:] or times)


def sql_catalog(wh: Path):
    from pyiceberg.catalog.sql import SqlCatalog
    return SqlCatalog("skade", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")


def pyiceberg_schema():
    from pyiceberg.schema import Schema
    from pyiceberg.types import (DoubleType, IntegerType, LongType, NestedField, StringType,
                                 TimestamptzType)
    types = {"long": LongType(), "int": IntegerType(), "double": DoubleType(),
             "string": StringType(), "timestamptz": TimestamptzType()}
    return Schema(*[NestedField(i + 1, n, types[t], required=False) for i, (n, t, _) in enumerate(COLUMNS)])


def pyiceberg_spec(partitioned: bool):
    from pyiceberg.partitioning import PartitionField, PartitionSpec, UNPARTITIONED_PARTITION_SPEC
    from pyiceberg.transforms import IdentityTransform
    if not partitioned:
        return UNPARTITIONED_PARTITION_SPEC
    src = [c[0] for c in COLUMNS].index(PARTITION) + 1
    return PartitionSpec(PartitionField(source_id=src, field_id=1000, transform=IdentityTransform(),
                                        name=PARTITION))


def machine_info(build_dir: Path) -> dict:
    import pyiceberg
    cpu = platform.processor()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem_gib = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass

    def git(*a):
        p = subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True)
        return p.stdout.strip() if p.returncode == 0 else None

    build_type = None
    cache = build_dir / "CMakeCache.txt"
    if cache.exists():
        for line in cache.read_text().splitlines():
            if line.startswith("CMAKE_BUILD_TYPE:"):
                build_type = line.split("=", 1)[1]
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem_gib,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "pyarrow": pa.__version__,
        "pyiceberg": pyiceberg.__version__,
        "arrow_cpu_threads": pa.cpu_count(),
        "arrow_io_threads": pa.io_thread_count(),
        "skade_commit": git("rev-parse", "--short", "HEAD"),
        "skade_worktree_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "skade_build_type": build_type,
        "loadavg_1_5_15_at_end": list(os.getloadavg()),
    }


def write_result(results_dir: Path, name: str, doc: dict) -> Path:
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{name}.json"
    tmp = results_dir / f"{name}.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.rename(path)
    return path


def fmt_rate(r: float) -> str:
    return f"{r / 1e6:8.2f} M rows/s"


# ---------------------------------------------------------------- scan

def scan_driver(build_dir: Path, wh: Path, table_name: str, cols=None, flt=None) -> subprocess.Popen:
    """A `scan_bench scan` process that scans once per skade_scan call. One driver per arm,
    up for all its rounds, as the peers' Python process is: a scan in a fresh process pays
    for faulting in its heap and starting its threads, which PyIceberg's scans in this
    process paid once, before the first round."""
    cmd = [str(build_dir / "bin" / "scan_bench"), "scan", "--warehouse", str(wh), "--table", table_name]
    if cols:
        cmd += ["--columns", ",".join(cols)]
    if flt:
        cmd += ["--filter", flt]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def skade_scan(server: subprocess.Popen) -> dict:
    server.stdin.write("\n")
    server.stdin.flush()
    line = server.stdout.readline()
    if not line:
        sys.exit(f"scan_bench scan ended early ({server.wait()})")
    return json.loads(line)


def end_driver(server: subprocess.Popen) -> None:
    server.stdin.close()
    if server.wait() != 0:
        sys.exit(f"scan_bench scan failed ({server.returncode})")


def skade_scan_cmd(build_dir: Path, wh: Path, table_name: str, cols=None, flt=None, *extra: str) -> list[str]:
    cmd = [str(build_dir / "bin" / "skade"), "--warehouse", str(wh), "scan", table_name, "--format", "none", *extra]
    if cols:
        cmd += ["--columns", ",".join(cols)]
    if flt:
        cmd += ["--where", flt]
    return cmd


def cli_scan_timed(cmd: list[str]) -> tuple[float, int, float]:
    """The whole `skade scan --format none` process (start, catalog, plan, decode, count):
    wall seconds, rows counted, CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, out = run_timed(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, int(out.split()[0]), cpu


def cpu_timed(fn):
    """(wall s, fn's result, CPU seconds of every thread of this process): CPU is
    steadier than wall time under load."""
    c0 = time.process_time()
    t, out = timed(fn)
    return t, out, time.process_time() - c0


def scan_table(build_dir: Path, data_dir: Path, src: Path) -> tuple[Path, str, dict]:
    """The scan (and export) benchmarks' table, written afresh by skade: its warehouse,
    name and the scan_bench setup's report."""
    wh = data_dir / "scan-warehouse"
    shutil.rmtree(wh, ignore_errors=True)
    table_name = "bench.scan"
    setup = run_driver(build_dir, "scan_bench", "setup", "--warehouse", str(wh), "--table", table_name,
                       "--schema", SKADE_SCHEMA, "--partition", PARTITION, "--source", str(src),
                       *prop_args())
    print(f"scan table: {setup['rows']} rows in {len(setup['files'])} files written by skade "
          f"({setup['append_s']:.2f} s)", file=sys.stderr)
    return wh, table_name, setup


def bench_scan(a, build_dir: Path, data_dir: Path, src: Path) -> dict:
    load_start = list(os.getloadavg())
    wh, table_name, setup = scan_table(build_dir, data_dir, src)
    files = [f["path"].removeprefix("file://") for f in setup["files"]]

    catalog = sql_catalog(wh)
    tbl = catalog.load_table(table_name)
    total_rows = setup["rows"]

    def pyiceberg_scan(cols, flt):
        kw = {}
        if cols:
            kw["selected_fields"] = tuple(cols)
        if flt:
            kw["row_filter"] = flt
        return tbl.scan(**kw).to_arrow()

    def pyarrow_scan(cols, pa_filters):
        # The same files, read directly (no hive partition discovery: the
        # country column is in the files).
        kw = {"partitioning": None}
        if cols:
            kw["columns"] = cols
        if pa_filters:
            kw["filters"] = pa_filters
        return pq.read_table(files, **kw)

    def skade_server(cols, flt):
        return scan_driver(build_dir, wh, table_name, cols, flt)

    def cli_cmd(cols, flt):
        return skade_scan_cmd(build_dir, wh, table_name, cols, flt)

    def cli_scan(cols, flt):
        return cli_scan_timed(cli_cmd(cols, flt))

    def peer_rss(engine, cols, flt, pa_filters):
        return peak_rss_mib([sys.executable, "-c", PEER_SCAN, str(wh), table_name, engine,
                             ",".join(cols or []), flt or "", json.dumps(pa_filters or []), *files])

    # What every `skade scan` process costs before it reads a page: start, catalog, plan
    # (statistics prune every file), exit. With the zstd CPU below it bounds the process arms.
    floor_cmd = skade_scan_cmd(build_dir, wh, table_name, ["id"], "id < 0")
    floor_times = []
    for _ in range(1 + max(9, 2 * a.rounds)):
        t, floor_rows, _ = cli_scan_timed(floor_cmd)
        if floor_rows != 0:
            sys.exit(f"process floor: {' '.join(floor_cmd)} returned {floor_rows} rows")
        floor_times.append(t)
    process_floor = after_first(floor_times)
    cores = os.cpu_count() or 1

    arms = {}
    for arm, cols, flt, pa_filters in SCAN_ARMS:
        if a.scan_arms and arm not in a.scan_arms.split(","):
            continue
        # Warm-up of every engine (page cache, imports, thread pools); skade's first scan in
        # its process is kept as the cold figure.
        server = skade_server(cols, flt)
        cold = skade_scan(server)
        pyiceberg_scan(cols, flt)
        pyarrow_scan(cols, pa_filters)
        times = {"skade": [], "skade_cli": [], "pyiceberg": [], "pyarrow": [],
                 "pyiceberg_beside_cli": [], "pyarrow_beside_cli": []}
        cpu = {e: [] for e in times}
        zstd_cpu = []  # of skade's API scans

        def peers(suffix):
            t, out_i, c = cpu_timed(lambda: pyiceberg_scan(cols, flt))
            times["pyiceberg" + suffix].append(t)
            cpu["pyiceberg" + suffix].append(c)
            t, out_a, c = cpu_timed(lambda: pyarrow_scan(cols, pa_filters))
            times["pyarrow" + suffix].append(t)
            cpu["pyarrow" + suffix].append(c)
            return out_i, out_a

        def check(skade_rows, skade_columns, out_i, out_a):
            rows = {"skade": skade_rows, "pyiceberg": out_i.num_rows, "pyarrow": out_a.num_rows}
            if len(set(rows.values())) != 1 or skade_columns != out_i.num_columns:
                sys.exit(f"scan arm {arm}: engines disagree: rows {rows}, columns skade "
                         f"{skade_columns} pyiceberg {out_i.num_columns}")

        # Two passes of interleaved rounds. The driver keeps the memory of its scans, as the
        # peers' process does, and on this VM that leaves a fresh process (the skade scan pass)
        # with fresh pages to fault in, so the process pass runs once the driver has ended.
        for _ in range(a.rounds):
            s = skade_scan(server)
            times["skade"].append(s["time_s"])
            cpu["skade"].append(s["cpu_s"])
            zstd_cpu.append(s["zstd_decompress_s"])
            check(s["rows"], s["columns"], *peers(""))
        end_driver(server)
        cli_scan(cols, flt)
        for _ in range(a.rounds):
            t, cli_rows, c = cli_scan(cols, flt)
            times["skade_cli"].append(t)
            cpu["skade_cli"].append(c)
            check(cli_rows, s["columns"], *peers("_beside_cli"))
        out_rows = s["rows"]
        ratio_i = [ti / ts for ts, ti in zip(times["skade"], times["pyiceberg"])]
        ratio_a = [ta / ts for ts, ta in zip(times["skade"], times["pyarrow"])]
        ratio_ci = [ti / tc for tc, ti in zip(times["skade_cli"], times["pyiceberg_beside_cli"])]
        ratio_ca = [ta / tc for tc, ta in zip(times["skade_cli"], times["pyarrow_beside_cli"])]
        peak_rss = {"skade_cli": peak_rss_mib(cli_cmd(cols, flt)),
                    "pyiceberg": peer_rss("pyiceberg", cols, flt, pa_filters),
                    "pyarrow": peer_rss("pyarrow", cols, flt, pa_filters)}
        engines = {}
        for e, ts in times.items():
            med = statistics.median(ts)
            engines[e] = {"times_s": ts, "median_s": med, "rows_per_s": out_rows / med,
                          "input_rows_per_s": total_rows / med, "cpu_s": cpu[e],
                          "median_cpu_s": statistics.median(cpu[e])}
        zstd_med = statistics.median(zstd_cpu)
        zstd_wall = zstd_med / cores  # decompression spread perfectly over every core
        arms[arm] = {
            "columns": cols or [c[0] for c in COLUMNS],
            "filter": flt,
            "rows_returned": out_rows,
            "skade_plan": s["stats"],
            "skade_first_scan_in_process": {"time_s": cold["time_s"], "cpu_s": cold["cpu_s"]},
            "engines": engines,
            "skade_zstd_decompression": {
                "cpu_s": zstd_cpu, "median_cpu_s": zstd_med,
                "share_of_skade_cpu": zstd_med / engines["skade"]["median_cpu_s"],
                "pyiceberg_cpu_over_it": engines["pyiceberg"]["median_cpu_s"] / zstd_med},
            "bound": {
                "zstd_on_all_cores_s": zstd_wall,
                "api_max": engines["pyiceberg"]["median_s"] / zstd_wall,
                "process_max": engines["pyiceberg_beside_cli"]["median_s"] / (process_floor + zstd_wall)},
            "ratio_skade_vs_pyiceberg": spread(ratio_i),
            "ratio_skade_vs_pyarrow": spread(ratio_a),
            "ratio_skade_cli_process_vs_pyiceberg": spread(ratio_ci),
            "ratio_skade_cli_process_vs_pyarrow": spread(ratio_ca),
            "peak_rss_mib": peak_rss,
        }

    met = {
        "skade >= 1.5x pyiceberg rows/s, every arm": all(
            v["ratio_skade_vs_pyiceberg"]["median"] >= TARGETS["scan_vs_pyiceberg"] for v in arms.values()),
        "skade scan process >= 1.5x pyiceberg rows/s, every arm": all(
            v["ratio_skade_cli_process_vs_pyiceberg"]["median"] >= TARGETS["scan_vs_pyiceberg"]
            for v in arms.values()),
    }
    out_of_reach = [f"{arm} ({way}: at most {v['bound'][way + '_max']:.2f}x)"
                    for arm, v in arms.items() for way in ("api", "process")
                    if v["bound"][way + "_max"] < TARGETS["scan_vs_pyiceberg"]]
    if "full" in arms:
        met["skade >= 1.0x pyarrow rows/s, full scan"] = (
            arms["full"]["ratio_skade_vs_pyarrow"]["median"] >= TARGETS["scan_full_vs_pyarrow"])
        met["skade scan process >= 1.0x pyarrow rows/s, full scan"] = (
            arms["full"]["ratio_skade_cli_process_vs_pyarrow"]["median"] >= TARGETS["scan_full_vs_pyarrow"])
    print(f"\nSCAN  ({total_rows} rows x {len(COLUMNS)} cols, {len(files)} files; median of {a.rounds} "
          "interleaved rounds, warm cache)")
    print(f"{'arm':<18} {'skade':>16} {'pyiceberg':>16} {'pyarrow':>16}   "
          f"{'skade/pyiceberg':>22} {'skade/pyarrow':>22}")
    for arm, v in arms.items():
        e = v["engines"]
        ri, ra = v["ratio_skade_vs_pyiceberg"], v["ratio_skade_vs_pyarrow"]
        ci, ca = v["ratio_skade_cli_process_vs_pyiceberg"], v["ratio_skade_cli_process_vs_pyarrow"]
        print(f"{arm:<18} {fmt_rate(e['skade']['rows_per_s'])} {fmt_rate(e['pyiceberg']['rows_per_s'])} "
              f"{fmt_rate(e['pyarrow']['rows_per_s'])}   "
              f"{ri['median']:6.2f}x [{ri['min']:.2f}-{ri['max']:.2f}]  "
              f"{ra['median']:6.2f}x [{ra['min']:.2f}-{ra['max']:.2f}]")
        print(f"{'  skade scan process':<18} {fmt_rate(e['skade_cli']['rows_per_s'])} {'':>16} {'':>16}   "
              f"{ci['median']:6.2f}x [{ci['min']:.2f}-{ci['max']:.2f}]  "
              f"{ca['median']:6.2f}x [{ca['min']:.2f}-{ca['max']:.2f}]")
        c = {k: e[k]["median_cpu_s"] * 1000 for k in e}
        print(f"{'  CPU ms per scan':<18} skade {c['skade']:.0f}, skade scan process {c['skade_cli']:.0f}, "
              f"PyIceberg {c['pyiceberg']:.0f}, pyarrow {c['pyarrow']:.0f}")
        z = v["skade_zstd_decompression"]
        print(f"{'  zstd ms per scan':<18} skade {z['median_cpu_s'] * 1000:.0f} ({z['share_of_skade_cpu']:.0%} of its "
              f"CPU); PyIceberg's CPU over it {z['pyiceberg_cpu_over_it']:.2f}x")
        r = v["peak_rss_mib"]
        print(f"{'  peak RSS MiB':<18} skade scan {r['skade_cli']:.0f}, PyIceberg {r['pyiceberg']:.0f}, "
              f"pyarrow {r['pyarrow']:.0f}")
        b = v["bound"]
        print(f"{'  bound':<18} API <= {b['api_max']:.2f}x, process <= {b['process_max']:.2f}x (zstd on {cores} cores "
              f"{b['zstd_on_all_cores_s'] * 1000:.1f} ms, process floor {process_floor * 1000:.1f} ms)")
    print("rows/s = rows returned / median wall time (filter arms: the rows that pass)")
    for k, ok in met.items():
        print(f"  target {k}: {'MET' if ok else 'NOT MET'}")
    if out_of_reach:
        print(f"  {TARGETS['scan_vs_pyiceberg']}x PyIceberg out of reach here (zstd on every core, plus the "
              "process floor for the process): "
              + ", ".join(out_of_reach))
    return {
        "benchmark": "scan",
        "machine": {**machine_info(build_dir), "loadavg_1_5_15_at_start": load_start},
        "protocol": {"rounds": a.rounds, "warmup": 1, "cache": "warm", "interleaved": True,
                     "threads": "defaults: skade parquet use_threads (Arrow CPU pool), PyIceberg default "
                                "executor, pyarrow use_threads=True",
                     "skade_timing": "Table::NewScan().Select().Filter() + Plan + Read->ToTable(), table "
                                     "loaded outside the timing, one scan_bench scan process per arm "
                                     "for all its rounds (as the peers' process); its first, cold scan "
                                     "is the warm-up, reported as skade_first_scan_in_process",
                     "pyiceberg_timing": "table.scan(selected_fields, row_filter).to_arrow(), table loaded "
                                         "outside the timing",
                     "pyarrow_timing": "pq.read_table(the 4 data files, columns, filters, partitioning=None)",
                     "skade_cli_timing": "the whole `skade scan TABLE [--columns] [--where] --format none` "
                                         "process, start to exit",
                     "passes": "per arm, rounds of (skade API, PyIceberg, pyarrow) while the driver is up, then "
                               "rounds of (skade scan process, PyIceberg, pyarrow) after it ended "
                               "(pyiceberg_beside_cli, pyarrow_beside_cli); each ratio pairs a round's times",
                     "peak_rss": "ru_maxrss of one run of the skade scan process, and of a fresh Python "
                                 "process doing the arm's PyIceberg / pyarrow scan once (scripts/peak_rss.py)",
                     "ratio": "per-round time(peer)/time(skade) = rows/s(skade)/rows/s(peer); median [min-max]",
                     "cpu": "CPU seconds of all threads per scan: std::clock() in scan_bench, the child's "
                            "rusage for the skade scan process, time.process_time() for the peers",
                     "zstd": "skade_zstd_decompression: CPU seconds skade's API scans spent in zstd page "
                             "decompression (each page's thread CPU clock, TimeZstdDecompression). The peers "
                             "decompress the same pages, so pyiceberg_cpu_over_it is the CPU ratio skade would "
                             "reach if everything but decompression took no time: the ceiling of the CPU ratio",
                     "bound": "the best ratio any skade could reach here: PyIceberg's median time over skade's "
                              "zstd CPU spread over every core (api_max), and over that plus process_floor_s, "
                              "the median `skade scan --columns id --where 'id < 0'` process that reads no "
                              "page (process_max). A target above it is out of reach on this machine"},
        "process_floor_s": {"times_s": floor_times, "median_s": process_floor, "command": floor_cmd[1:]},
        "cores": cores,
        "targets_out_of_reach": out_of_reach,
        "data": {"rows": total_rows, "columns": len(COLUMNS), "files": len(files), "seed": SEED,
                 "schema": SKADE_SCHEMA, "partition": PARTITION, "properties": PROPERTIES,
                 "bytes": sum(f["bytes"] for f in setup["files"])},
        "arms": arms,
        "targets": {"skade_vs_pyiceberg_min": TARGETS["scan_vs_pyiceberg"],
                    "skade_vs_pyarrow_full_min": TARGETS["scan_full_vs_pyarrow"]},
        "targets_met": met,
    }


# ---------------------------------------------------------------- export

# A peer's export in its own Python process, for its peak RSS (argv: warehouse, table,
# format, output file).
PEER_EXPORT = """
import sys, pyarrow.csv as pcsv, pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
wh, table, fmt, out = sys.argv[1:]
t = SqlCatalog("skade", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}").load_table(table).scan().to_arrow()
if fmt == "parquet":
    pq.write_table(t, out, compression="zstd", compression_level=1)
else:
    pcsv.write_csv(t, out)
"""


def bench_export(a, build_dir: Path, data_dir: Path, src: Path) -> dict:
    """The whole table written out as a file: the `skade scan --format F --output FILE`
    process against PyIceberg's scan().to_arrow() plus pyarrow's writer in-process."""
    load_start = list(os.getloadavg())
    wh, table_name, setup = scan_table(build_dir, data_dir, src)
    tbl = sql_catalog(wh).load_table(table_name)
    out_dir = data_dir / "export-out"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)

    def skade_cmd(fmt: str, out: Path) -> list[str]:
        return [str(build_dir / "bin" / "skade"), "--warehouse", str(wh), "scan", table_name,
                "--format", fmt, "--output", str(out)]

    def peer(fmt: str, out: Path) -> None:
        t = tbl.scan().to_arrow()
        if fmt == "parquet":
            pq.write_table(t, out, compression="zstd", compression_level=1)
        else:
            pcsv.write_csv(t, out)

    def rows_in(fmt: str, out: Path) -> int:
        if fmt == "parquet":
            return pq.ParquetFile(out).metadata.num_rows
        return pcsv.read_csv(out).num_rows

    arms = {}
    for fmt in ("parquet", "csv"):
        sk_out, py_out = out_dir / f"skade.{fmt}", out_dir / f"pyiceberg.{fmt}"
        run_timed(skade_cmd(fmt, sk_out))  # warm-up of both
        peer(fmt, py_out)
        times = {"skade": [], "pyiceberg": []}
        for _ in range(a.rounds):
            t, _ = run_timed(skade_cmd(fmt, sk_out))
            times["skade"].append(t)
            t, _ = timed(lambda: peer(fmt, py_out))
            times["pyiceberg"].append(t)
        for who, out in (("skade", sk_out), ("pyiceberg", py_out)):
            if rows_in(fmt, out) != setup["rows"]:
                sys.exit(f"export {fmt}: {who} wrote {rows_in(fmt, out)} rows, expected {setup['rows']}")
        ratio = [tp / ts for ts, tp in zip(times["skade"], times["pyiceberg"])]
        arms[fmt] = {
            "engines": {e: {"times_s": ts, "median_s": statistics.median(ts),
                            "rows_per_s": setup["rows"] / statistics.median(ts)} for e, ts in times.items()},
            "bytes": {"skade": sk_out.stat().st_size, "pyiceberg": py_out.stat().st_size},
            "peak_rss_mib": {"skade": peak_rss_mib(skade_cmd(fmt, sk_out)),
                             "pyiceberg": peak_rss_mib([sys.executable, "-c", PEER_EXPORT, str(wh), table_name,
                                                        fmt, str(py_out)])},
            "ratio_skade_vs_pyiceberg": spread(ratio),
        }
    shutil.rmtree(out_dir, ignore_errors=True)
    print(f"\nEXPORT  ({setup['rows']} rows x {len(COLUMNS)} cols to one file; median of {a.rounds} "
          "interleaved rounds, warm cache)")
    print(f"{'format':<10} {'skade scan process':>20} {'pyiceberg+pyarrow':>20}   {'skade/pyiceberg':>22}   "
          f"{'MB skade / peer':>16}   {'peak RSS MiB':>14}")
    for fmt, v in arms.items():
        e, r, b, m = v["engines"], v["ratio_skade_vs_pyiceberg"], v["bytes"], v["peak_rss_mib"]
        print(f"{fmt:<10} {e['skade']['median_s']:>19.3f}s {e['pyiceberg']['median_s']:>19.3f}s   "
              f"{r['median']:6.2f}x [{r['min']:.2f}-{r['max']:.2f}]   "
              f"{b['skade'] / 1e6:7.1f} / {b['pyiceberg'] / 1e6:6.1f}   {m['skade']:5.0f} / {m['pyiceberg']:5.0f}")
    return {
        "benchmark": "export",
        "machine": {**machine_info(build_dir), "loadavg_1_5_15_at_start": load_start},
        "protocol": {"rounds": a.rounds, "warmup": 1, "cache": "warm", "interleaved": True,
                     "skade_timing": "the whole `skade scan TABLE --format F --output FILE` process, start to exit",
                     "pyiceberg_timing": "table.scan().to_arrow() then pq.write_table(zstd, level 1) or "
                                         "pyarrow.csv.write_csv, in-process, table loaded outside the timing",
                     "peak_rss": "ru_maxrss of one skade process, and of a fresh Python process doing the "
                                 "peer's export once (scripts/peak_rss.py)",
                     "ratio": "per-round time(peer)/time(skade); median [min-max]"},
        "data": {"rows": setup["rows"], "columns": len(COLUMNS), "files": len(setup["files"]), "seed": SEED,
                 "schema": SKADE_SCHEMA, "partition": PARTITION, "properties": PROPERTIES},
        "arms": arms,
    }


# ---------------------------------------------------------------- append

def bench_append(a, build_dir: Path, data_dir: Path, src: Path) -> dict:
    load_start = list(os.getloadavg())
    data = pq.read_table(src)
    rows = data.num_rows
    sk_wh = data_dir / "append-skade"
    pi_wh = data_dir / "append-pyiceberg"
    for d in (sk_wh, pi_wh):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    catalog = sql_catalog(pi_wh)  # a fresh SQLite SQL catalog, same kind as skade's
    catalog.create_namespace("bench")
    schema = pyiceberg_schema()

    def py_create(name: str, partitioned: bool):
        return catalog.create_table(f"bench.{name}", schema=schema, partition_spec=pyiceberg_spec(partitioned),
                                    properties=PROPERTIES)

    def sk_args(mode: str, name: str, partitioned: bool) -> list[str]:
        return [mode, "--warehouse", str(sk_wh), "--table", f"bench.{name}", "--schema", SKADE_SCHEMA,
                "--partition", PARTITION if partitioned else "", "--source", str(src), *prop_args()]

    variants = {}
    for label, partitioned in (("partitioned", True), ("unpartitioned", False)):
        times = {"skade": [], "pyiceberg": []}
        cpu = {"skade": [], "pyiceberg": []}  # CPU seconds, all threads (steadier than wall under load)
        load = []
        # Round 0 is the warm-up of both engines (not reported).
        for r in range(a.rounds + 1):
            name = f"big_{label}_{r}"
            s = run_driver(build_dir, "append_bench", *sk_args("big", name, partitioned))
            t_py = py_create(name, partitioned)
            c0 = time.process_time()
            t, _ = timed(lambda: t_py.append(data))
            c_py = time.process_time() - c0
            if r > 0:
                times["skade"].append(s["append_s"])
                times["pyiceberg"].append(t)
                cpu["skade"].append(s["append_cpu_s"])
                cpu["pyiceberg"].append(c_py)
                load.append(os.getloadavg()[0])
            else:
                files_sk = s["files"]
                files_py = t_py.inspect.files().num_rows
        ratio = [tp / ts for ts, tp in zip(times["skade"], times["pyiceberg"])]
        cpu_ratio = [cp / cs for cs, cp in zip(cpu["skade"], cpu["pyiceberg"])]
        eng = {e: {"times_s": ts, "median_s": statistics.median(ts), "rows_per_s": rows / statistics.median(ts),
                   "cpu_s": cpu[e], "median_cpu_s": statistics.median(cpu[e])}
               for e, ts in times.items()}
        variants[label] = {"partition": PARTITION if partitioned else None,
                           "files": {"skade": files_sk, "pyiceberg": files_py},
                           "engines": eng, "ratio_skade_vs_pyiceberg": spread(ratio),
                           "cpu_ratio_pyiceberg_vs_skade": spread(cpu_ratio), "loadavg_1m_per_round": load}

    # 200 single-row appends into a fresh (partitioned, like the scan table) table each.
    s = run_driver(build_dir, "append_bench", *sk_args("small", "small", True), "--commits", str(a.commits))
    sk_lat = s["latencies_s"]
    t_py = py_create("small", True)
    py_lat = []
    for i in range(a.commits):
        row = data.slice(i % rows, 1)
        t, _ = timed(lambda: t_py.append(row))
        py_lat.append(t)

    def lat(xs):
        return {"p50_ms": quantile(xs, 0.5) * 1e3, "p99_ms": quantile(xs, 0.99) * 1e3,
                "mean_ms": statistics.fmean(xs) * 1e3, "min_ms": min(xs) * 1e3, "max_ms": max(xs) * 1e3,
                "first10_median_ms": statistics.median(xs[:10]) * 1e3,
                "last10_median_ms": statistics.median(xs[-10:]) * 1e3,
                "latencies_ms": [round(x * 1e3, 3) for x in xs]}
    small = {"commits": a.commits, "partition": PARTITION,
             "engines": {"skade": lat(sk_lat), "pyiceberg": lat(py_lat)}}
    se, pe = small["engines"]["skade"], small["engines"]["pyiceberg"]
    small["p50_ratio_skade_vs_pyiceberg"] = se["p50_ms"] / pe["p50_ms"]
    small["p99_ratio_skade_vs_pyiceberg"] = se["p99_ms"] / pe["p99_ms"]

    met = {
        "skade >= 2x pyiceberg rows/s, 1M-row append (partitioned)":
            variants["partitioned"]["ratio_skade_vs_pyiceberg"]["median"] >= TARGETS["append_big_vs_pyiceberg"],
        "skade >= 2x pyiceberg rows/s, 1M-row append (unpartitioned)":
            variants["unpartitioned"]["ratio_skade_vs_pyiceberg"]["median"] >= TARGETS["append_big_vs_pyiceberg"],
        "skade p50 commit latency <= 0.3x pyiceberg": small["p50_ratio_skade_vs_pyiceberg"]
            <= TARGETS["commit_p50_vs_pyiceberg"],
    }

    print(f"\nAPPEND  ({rows} rows x 11 cols in one append; median of {a.rounds} interleaved rounds)")
    print(f"{'variant':<16} {'skade':>16} {'pyiceberg':>16}   {'skade/pyiceberg':>22}   CPU s skade / pyiceberg")
    for label, v in variants.items():
        e, rr = v["engines"], v["ratio_skade_vs_pyiceberg"]
        print(f"{label:<16} {fmt_rate(e['skade']['rows_per_s'])} {fmt_rate(e['pyiceberg']['rows_per_s'])}   "
              f"{rr['median']:6.2f}x [{rr['min']:.2f}-{rr['max']:.2f}]   "
              f"{e['skade']['median_cpu_s']:.2f} / {e['pyiceberg']['median_cpu_s']:.2f}")
    print(f"\nSINGLE-ROW COMMITS  ({a.commits} appends of 1 row each into a fresh partitioned table)")
    print(f"{'':<10} {'p50 ms':>9} {'p99 ms':>9} {'mean ms':>9} {'first10':>9} {'last10':>9}")
    for e, v in small["engines"].items():
        print(f"{e:<10} {v['p50_ms']:9.2f} {v['p99_ms']:9.2f} {v['mean_ms']:9.2f} "
              f"{v['first10_median_ms']:9.2f} {v['last10_median_ms']:9.2f}")
    print(f"skade/pyiceberg latency: p50 {small['p50_ratio_skade_vs_pyiceberg']:.2f}x, "
          f"p99 {small['p99_ratio_skade_vs_pyiceberg']:.2f}x")
    for k, ok in met.items():
        print(f"  target {k}: {'MET' if ok else 'NOT MET'}")
    return {
        "benchmark": "append",
        "machine": {**machine_info(build_dir), "loadavg_1_5_15_at_start": load_start},
        "protocol": {"rounds": a.rounds, "warmup_rounds": 1, "interleaved": True,
                     "catalog": "SQLite SQL catalog on both sides: skade's <wh>/catalog.db; PyIceberg "
                                "SqlCatalog on a fresh sqlite file",
                     "skade_timing": "Table::Append(arrow::Table) incl. Parquet write, manifests, metadata, "
                                     "catalog commit; source read into memory outside the timing",
                     "pyiceberg_timing": "table.append(pa.Table); source read into memory outside the timing",
                     "single_row": "each engine: fresh table, N sequential one-row appends (row i of the "
                                   "source), wall time per call; p50/p99 by linear interpolation"},
        "data": {"rows": rows, "columns": len(COLUMNS), "seed": SEED, "schema": SKADE_SCHEMA,
                 "properties": PROPERTIES},
        "big_append": variants,
        "single_row_commits": small,
        "targets": {"big_append_vs_pyiceberg_min": TARGETS["append_big_vs_pyiceberg"],
                    "commit_p50_vs_pyiceberg_max": TARGETS["commit_p50_vs_pyiceberg"]},
        "targets_met": met,
    }


# ---------------------------------------------------------------- upsert

UPSERT_KEY = "id"


def upsert_batches(data: pa.Table, n: int, batch_rows: int, update_fraction: float) -> tuple[list[pa.Table], list[int]]:
    """Deterministic upsert batches: each has round(batch_rows * update_fraction) rows
    that update existing keys (distinct across batches; quantity + 1 and a new
    comment, so every update really changes the row) and the rest new keys
    (rows >= the table's row count, other columns copied from random source
    rows), shuffled. Returns the batches and, per batch, its net quantity delta."""
    rows = data.num_rows
    n_upd = round(batch_rows * update_fraction)
    n_new = batch_rows - n_upd
    rng = random.Random(SEED + 17)
    upd_keys = rng.sample(range(rows), n * n_upd)  # source ids are 0..rows-1 = row index
    id_field = data.schema.field(UPSERT_KEY).with_nullable(False)
    out, deltas = [], []
    for b in range(n):
        old = data.take(pa.array(upd_keys[b * n_upd:(b + 1) * n_upd], pa.int64()))
        qi = old.schema.get_field_index("quantity")
        ci = old.schema.get_field_index("comment")
        upd = old.set_column(qi, "quantity", pc.add(old["quantity"], 1))
        upd = upd.set_column(ci, "comment", pa.array([f"upserted in batch {b}"] * n_upd, pa.string()))
        new = data.take(pa.array(rng.sample(range(rows), n_new), pa.int64()))
        new = new.set_column(0, id_field, pa.array(range(rows + b * n_new, rows + (b + 1) * n_new), pa.int64()))
        batch = pa.concat_tables([upd.cast(new.schema), new])
        perm = list(range(batch_rows))
        rng.shuffle(perm)
        batch = batch.take(pa.array(perm, pa.int64())).combine_chunks()
        out.append(batch)
        deltas.append(n_upd + pc.sum(new["quantity"]).as_py())
    return out, deltas


def bench_upsert(a, build_dir: Path, data_dir: Path, src: Path) -> dict:
    load_start = list(os.getloadavg())
    data = pq.read_table(src)
    data = data.cast(data.schema.set(0, data.schema.field(UPSERT_KEY).with_nullable(False)))
    rows = data.num_rows
    base_qsum = pc.sum(data["quantity"]).as_py()
    n_sk = a.upsert_batches
    n_py = min(a.pyiceberg_upsert_batches or n_sk, n_sk)
    batches, deltas = upsert_batches(data, n_sk, a.upsert_batch_rows, a.upsert_update_fraction)
    n_upd = round(a.upsert_batch_rows * a.upsert_update_fraction)
    n_new = a.upsert_batch_rows - n_upd
    batch_dir = data_dir / "upsert-batches"
    shutil.rmtree(batch_dir, ignore_errors=True)
    batch_dir.mkdir(parents=True)
    batch_files = []
    for b, t in enumerate(batches):
        f = batch_dir / f"batch-{b:03d}.parquet"
        pq.write_table(t, f, compression="zstd")
        batch_files.append(f)

    def expected(n: int) -> dict:
        return {"rows": rows + n * n_new, "quantity_sum": base_qsum + sum(deltas[:n])}

    from pyiceberg.schema import Schema
    py_schema = pyiceberg_schema()
    key_id = [c[0] for c in COLUMNS].index(UPSERT_KEY) + 1
    py_schema = Schema(*[f.model_copy(update={"required": True}) if f.field_id == key_id else f
                         for f in py_schema.fields], identifier_field_ids=[key_id])

    sk_wh = data_dir / "upsert-skade"
    pi_wh = data_dir / "upsert-pyiceberg"
    for d in (sk_wh, pi_wh):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    catalog = sql_catalog(pi_wh)
    catalog.create_namespace("bench")

    def sk(mode: str, name: str, *extra: str) -> dict:
        return run_driver(build_dir, "upsert_bench", mode, "--warehouse", str(sk_wh), "--table",
                          f"bench.{name}", *extra)

    def med_rate(ts: list[float]) -> dict:
        m = statistics.median(ts)
        return {"times_s": ts, "median_s": m, "min_s": min(ts), "max_s": max(ts),
                "rows_per_s": a.upsert_batch_rows / m}

    variants = {}
    py_arms = {}  # PyIceberg's table and upsert times per partitioning (shared by both delete kinds)
    # (label, partitioned, equality-delete property, format version): PyIceberg upserts once per
    # partitioning, in the v2 position-delete arm; the equality arm and the v3 arm (deletion
    # vectors; PyIceberg cannot write v3) are compared with those same figures.
    for label, partitioned, equality, version in (
            ("unpartitioned", False, False, 2), ("unpartitioned_equality", False, True, 2),
            ("unpartitioned_v3", False, False, 3),
            ("partitioned", True, False, 2), ("partitioned_equality", True, True, 2)):
        name = f"upsert_{label}"
        props = prop_args() + (["--property", "skade.write.upsert.equality-deletes=true"] if equality else [])
        if version == 3:
            props += ["--property", "format-version=3"]
        setup = sk("setup", name, "--schema", SKADE_SCHEMA, "--partition", PARTITION if partitioned else "",
                   "--identifier", UPSERT_KEY, "--source", str(src), *props)
        py_name = f"bench.upsert_{'partitioned' if partitioned else 'unpartitioned'}"
        run_py = not equality and version == 2
        if run_py:
            py_tbl = catalog.create_table(py_name, schema=py_schema,
                                          partition_spec=pyiceberg_spec(partitioned), properties=PROPERTIES)
            py_setup_s, _ = timed(lambda: py_tbl.append(data))
        else:
            py_setup_s = py_arms[partitioned]["setup_s"]
        print(f"upsert {label}: {rows} rows appended (skade {setup['append_s']:.2f} s, "
              f"pyiceberg {py_setup_s:.2f} s); {n_sk} skade / {n_py if run_py else 0} pyiceberg batches",
              file=sys.stderr)

        # Interleaved batch by batch: skade upsert b, PyIceberg upsert b (same rows).
        sk_runs, py_times, py_results = [], [], []
        if not run_py:
            py_times, py_results = py_arms[partitioned]["times"], py_arms[partitioned]["results"]
        for b in range(n_sk):
            sk_runs.append(sk("upsert", name, "--batch", str(batch_files[b])))
            if b < n_py and run_py:
                batch = batches[b]
                t, res = timed(lambda: py_tbl.upsert(batch, join_cols=[UPSERT_KEY]))
                py_times.append(t)
                py_results.append({"rows_updated": res.rows_updated, "rows_inserted": res.rows_inserted})
                if (res.rows_updated, res.rows_inserted) != (n_upd, n_new):
                    sys.exit(f"pyiceberg upsert batch {b}: updated {res.rows_updated} inserted "
                             f"{res.rows_inserted}, expected {n_upd}/{n_new}")
            print(f"  batch {b}: skade {sk_runs[-1]['upsert_s'] * 1e3:.0f} ms"
                  + (f", pyiceberg {py_times[-1] * 1e3:.0f} ms" if b < n_py and run_py else ""), file=sys.stderr)
        if run_py:
            py_arms[partitioned] = {"setup_s": py_setup_s, "times": py_times, "results": py_results}
        sk_times = [r["upsert_s"] for r in sk_runs]
        pre_snapshot = sk_runs[-1]["snapshot_id"]
        delete_kind = ("equality" if sk_runs[0]["added"]["equality_deletes"] else
                       ("deletion_vector" if version == 3 else "position") if sk_runs[0]["added"]["position_deletes"]
                       else "none")

        # Dirty pages of the setup and the upserts are written back first: the compaction's
        # commit (fsync) would otherwise pay for them.
        os.sync()
        compact = sk("compact", name, "--rounds", str(COMPACT_ROUNDS))
        if not compact["committed"]:
            sys.exit(f"upsert {label}: skade compact committed nothing")
        compact_s, compact_cpu_s = after_first(compact["times_s"]), after_first(compact["cpu_s"])

        # Full scans, interleaved: skade before compact (time travel to the last
        # upsert snapshot), skade after compact, PyIceberg (its copy-on-write table).
        # Each round's skade figure is the median of UPSERT_SCAN_REPS scans in one warm process
        # (PyIceberg's scans all run warm in this one): a fresh process's first touch of its
        # memory varies 2x on this VM (scan-notes, tenth session).
        def sk_scan(snapshot: int | None, warmup: int) -> dict:
            extra = ["--warmup", str(warmup), "--reps", str(UPSERT_SCAN_REPS)]
            if snapshot:
                extra += ["--snapshot", str(snapshot)]
            return sk("scan", name, *extra)

        py_scan_tbl = catalog.load_table(py_name)
        sk_scan(pre_snapshot, 1)
        sk_scan(None, 1)
        py_scan_tbl.scan().to_arrow()
        scans = {"skade_before_compact": [], "skade_after_compact": [], "pyiceberg": []}
        cpu = {"skade_before_compact": [], "skade_after_compact": []}
        for _ in range(a.rounds):
            before = sk_scan(pre_snapshot, 1)
            after = sk_scan(None, 1)
            cpu["skade_before_compact"].append(statistics.median(before["cpu_s"]))
            cpu["skade_after_compact"].append(statistics.median(after["cpu_s"]))
            t, out = timed(lambda: py_scan_tbl.scan().to_arrow())
            scans["skade_before_compact"].append(statistics.median(before["times_s"]))
            scans["skade_after_compact"].append(statistics.median(after["times_s"]))
            scans["pyiceberg"].append(t)
        py_check = {"rows": out.num_rows, "quantity_sum": pc.sum(out["quantity"]).as_py()}
        sk_check = {"rows": before["rows"], "quantity_sum": before["quantity_sum"]}
        for who, got, want in (("skade before compact", sk_check, expected(n_sk)),
                               ("skade after compact", {"rows": after["rows"], "quantity_sum": after["quantity_sum"]},
                                expected(n_sk)),
                               ("pyiceberg", py_check, expected(n_py))):
            if got != want:
                sys.exit(f"upsert {label}: {who} table has {got}, expected {want}")

        scan_eng = {}
        for e, ts in scans.items():
            m = statistics.median(ts)
            n_rows = expected(n_py if e == "pyiceberg" else n_sk)["rows"]
            scan_eng[e] = {"times_s": ts, "median_s": m, "rows": n_rows, "rows_per_s": n_rows / m}
        scan_eng["skade_before_compact"].update(data_files=before["data_files"], delete_files=before["delete_files"],
                                                rows_deleted_by_deletes=before["stats"]["rows_deleted"])
        scan_eng["skade_after_compact"].update(data_files=after["data_files"], delete_files=after["delete_files"])
        scan_eng["pyiceberg"]["data_files"] = py_scan_tbl.inspect.files().num_rows
        # The write half of a compaction on its own: the compacted rows written again.
        write = sk("write", name, "--rounds", str(COMPACT_ROUNDS))
        write_s, write_cpu_s = after_first(write["times_s"]), after_first(write["cpu_s"])
        for e, ts in cpu.items():
            scan_eng[e]["cpu_s"] = ts
            scan_eng[e]["median_cpu_s"] = statistics.median(ts)
        scan_plus_write = scan_eng["skade_after_compact"]["median_s"] + write_s
        cpu_scan_plus_write = scan_eng["skade_after_compact"]["median_cpu_s"] + write_cpu_s
        deletes_scan_plus_write = scan_eng["skade_before_compact"]["median_s"] + write_s
        slowdown = [b / a_ for b, a_ in zip(scans["skade_before_compact"], scans["skade_after_compact"])]
        cpu_slowdown = [b / a_ for b, a_ in zip(cpu["skade_before_compact"], cpu["skade_after_compact"])]
        # rows/s ratios (row counts differ when PyIceberg ran fewer batches).
        r_pre = [(expected(n_sk)["rows"] / ts) / (expected(n_py)["rows"] / tp)
                 for ts, tp in zip(scans["skade_before_compact"], scans["pyiceberg"])]
        r_post = [(expected(n_sk)["rows"] / ts) / (expected(n_py)["rows"] / tp)
                  for ts, tp in zip(scans["skade_after_compact"], scans["pyiceberg"])]
        up_ratio = [tp / ts for ts, tp in zip(sk_times[:n_py], py_times)]
        variants[label] = {
            "partition": PARTITION if partitioned else None,
            "skade_delete_kind": delete_kind,
            "setup_append_s": {"skade": setup["append_s"], "pyiceberg": py_setup_s},
            "upsert": {
                "skade": {**med_rate(sk_times), "batches": n_sk,
                          "files_added_per_batch": sk_runs[-1]["added"]},
                "pyiceberg": {**med_rate(py_times), "batches": n_py, "results": py_results[:1]},
                "ratio_skade_vs_pyiceberg": spread(up_ratio),
            },
            "equality_delete_property": equality,
            "format_version": version,
            "compact": {"skade_s": compact_s, "times_s": compact["times_s"],
                        "first_round_s": compact["times_s"][0], "snapshot_before": pre_snapshot,
                        "snapshot_after": compact["snapshot_id"], "rows_rewritten": compact["rows"],
                        "files_written": compact["files_added"],
                        "write_same_rows_s": write_s, "write_times_s": write["times_s"],
                        "scan_plus_write_s": scan_plus_write,
                        "compact_vs_scan_plus_write": compact_s / scan_plus_write,
                        "scan_with_deletes_plus_write_s": deletes_scan_plus_write,
                        "compact_vs_scan_with_deletes_plus_write": compact_s / deletes_scan_plus_write,
                        "cpu": {"compact_s": compact_cpu_s, "write_s": write_cpu_s,
                                "scan_plus_write_s": cpu_scan_plus_write,
                                "compact_vs_scan_plus_write": compact_cpu_s / cpu_scan_plus_write}},
            "scan": {
                "engines": scan_eng,
                "skade_slowdown_before_vs_after_compact": spread(slowdown),
                "skade_cpu_slowdown_before_vs_after_compact": spread(cpu_slowdown),
                "ratio_skade_before_compact_vs_pyiceberg": spread(r_pre),
                "ratio_skade_after_compact_vs_pyiceberg": spread(r_post),
            },
            "checks": {"expected_skade": expected(n_sk), "expected_pyiceberg": expected(n_py),
                       "skade": sk_check, "pyiceberg": py_check},
        }

    print(f"\nUPSERT  ({a.upsert_batch_rows}-row batches into a {rows}-row table, {n_upd} updates + {n_new} "
          f"inserts per batch; skade {n_sk} batches, PyIceberg {n_py}; median per batch, interleaved)")
    print(f"{'variant':<14} {'skade':>16} {'pyiceberg':>16}   {'skade/pyiceberg':>22}  deletes")
    for label, v in variants.items():
        u = v["upsert"]
        rr = u["ratio_skade_vs_pyiceberg"]
        print(f"{label:<14} {u['skade']['rows_per_s'] / 1e3:8.1f} k rows/s {u['pyiceberg']['rows_per_s'] / 1e3:8.1f} k rows/s   "
              f"{rr['median']:6.2f}x [{rr['min']:.2f}-{rr['max']:.2f}]  {v['skade_delete_kind']}")
    print(f"\nFULL SCAN AFTER THE UPSERTS  (median of {a.rounds} interleaved rounds, warm cache)")
    print(f"{'variant':<24} {'skade before':>13} {'skade after':>12} {'pyiceberg':>10}   "
          f"{'before/after compact':>24} {'compact s':>10} {'scan+write s':>13}")
    for label, v in variants.items():
        e, sd = v["scan"]["engines"], v["scan"]["skade_slowdown_before_vs_after_compact"]
        print(f"{label:<24} {e['skade_before_compact']['median_s']:11.3f} s {e['skade_after_compact']['median_s']:10.3f} s "
              f"{e['pyiceberg']['median_s']:8.3f} s   {sd['median']:10.2f}x [{sd['min']:.2f}-{sd['max']:.2f}] "
              f"{v['compact']['skade_s']:10.2f} {v['compact']['scan_plus_write_s']:13.2f}")
    print("CPU seconds: scan before/after compact, compact vs scan+write")
    for label, v in variants.items():
        c, cs = v["compact"]["cpu"], v["scan"]["skade_cpu_slowdown_before_vs_after_compact"]
        print(f"{label:<24} {cs['median']:6.2f}x [{cs['min']:.2f}-{cs['max']:.2f}]   compact {c['compact_s']:.2f} s vs "
              f"{c['scan_plus_write_s']:.2f} s ({c['compact_vs_scan_plus_write']:.2f}x)")
    met = {label: {"scan_slowdown_le_1_5": v["scan"]["skade_slowdown_before_vs_after_compact"]["median"] <= 1.5,
                   "compact_le_scan_plus_write": v["compact"]["compact_vs_scan_plus_write"] <= 1.0}
           for label, v in variants.items()}
    return {
        "benchmark": "upsert",
        "machine": {**machine_info(build_dir), "loadavg_1_5_15_at_start": load_start},
        "targets": {"scan_slowdown_before_vs_after_compact_max": 1.5,
                    "compact_vs_scan_plus_write_max": 1.0},
        "targets_met": met,
        "protocol": {
            "reading": (f"'10,000-row batches into a 1,000,000-row table (10% of keys updated per batch)' is read "
                        f"as: each batch has {a.upsert_batch_rows} rows whose keys are {a.upsert_update_fraction:.0%} "
                        f"existing keys ({n_upd} updates, distinct across batches, every update changes quantity "
                        f"and comment) and {1 - a.upsert_update_fraction:.0%} new keys ({n_new} inserts); "
                        "rows shuffled. The 10% applies to the batch's keys, as 10% of the table's keys per batch "
                        "(100,000) cannot fit a 10,000-row batch."),
            "batches": {"skade": n_sk, "pyiceberg": n_py},
            "interleaved": True,
            "upsert_order": "per batch b: skade upsert b (own process), then PyIceberg upsert b, same rows",
            "catalog": "SQLite SQL catalog on both sides (skade's <wh>/catalog.db; PyIceberg SqlCatalog)",
            "tables": "each engine its own table with the same 1M source rows (appended outside the timing), "
                      "id required and the identifier field",
            "skade_timing": "Table::Upsert(arrow::Table) incl. key matching, delete files, data files, commit; "
                            "table loaded and batch read into memory outside the timing",
            "pyiceberg_timing": "table.upsert(pa.Table, join_cols=['id']) (copy-on-write: matching rows' files "
                                "are rewritten, no delete files)",
            "rows_per_s": "batch rows / median time per batch",
            "ratio": "per-batch time(pyiceberg)/time(skade); median [min-max]",
            "scan": "full scan (all columns) to an Arrow table after the last upsert; skade before compaction "
                    "= time travel to the last upsert snapshot, after = current snapshot after "
                    "Table::Compact(nullopt); PyIceberg: table.scan().to_arrow(); one warm-up each, then "
                    f"{a.rounds} interleaved rounds; a skade round is one process: a warm-up scan, then the "
                    f"median of {UPSERT_SCAN_REPS}",
            "slowdown": "per-round scan time(skade before compact)/time(skade after compact); median [min-max]; "
                        "*cpu* figures: the same with the process's CPU seconds (user + system, all threads) "
                        "over the timed region, which do not count waiting for a core on a loaded machine",
            "variants": "*_equality arms set skade.write.upsert.equality-deletes=true on skade's table; "
                        "skade_delete_kind says what skade wrote (a partitioned table whose partition "
                        "source is not in the key gets position deletes even then); PyIceberg upserts "
                        "once per partitioning and both arms are compared with those figures",
            "compact_vs_scan_plus_write": f"Table::Compact time / (median full scan after compact + "
                                          f"DataWriter writing the same rows from memory, no commit); "
                                          f"both the median of {COMPACT_ROUNDS - 1} rounds after a first one "
                                          f"(the compactions each from the last upsert's snapshot, main rolled "
                                          f"back between them; first_round_s is the fresh process's first); "
                                          "compact_vs_scan_with_deletes_plus_write: the same with the scan "
                                          "before compact (the scan a compaction does, deletes applied); "
                                          "os.sync() runs before the compaction so its commit does not write "
                                          "back the earlier commands' files",
            "checks": "row count and sum(quantity) of every scanned table equal the expected values",
        },
        "data": {"rows": rows, "columns": len(COLUMNS), "seed": SEED, "schema": SKADE_SCHEMA,
                 "identifier": UPSERT_KEY, "batch_rows": a.upsert_batch_rows, "updates_per_batch": n_upd,
                 "inserts_per_batch": n_new, "properties": PROPERTIES},
        "variants": variants,
    }


def bench_small_files(a, build_dir: Path, data_dir: Path, src: Path) -> dict:
    """A table grown by many small commits, as a stream's appends grow one: each commit one
    data file and one manifest. Planning reads every manifest; a scan opens every file."""
    load_start = list(os.getloadavg())
    n, per = a.small_files, a.small_file_rows
    data = pq.read_table(src).slice(0, n * per)
    wh = data_dir / "small-files-warehouse"
    shutil.rmtree(wh, ignore_errors=True)
    table_name = "bench.small"
    skade = [str(build_dir / "bin" / "skade"), "--warehouse", str(wh)]
    for cmd in (["init"], ["create-namespace", "bench"],
                ["create", table_name, "--schema", SKADE_SCHEMA, *prop_args()]):
        run_timed(skade + cmd)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            f = Path(tmp) / f"{i:05d}.parquet"
            pq.write_table(data.slice(i * per, per), f)
            run_timed(skade + ["append", table_name, str(f)])
    print(f"small files: {n} commits of {per} rows by `skade append` ({time.perf_counter() - t0:.1f} s)",
          file=sys.stderr)

    catalog = sql_catalog(wh)
    tbl = catalog.load_table(table_name)
    plan_cmd = skade_scan_cmd(build_dir, wh, table_name, None, None, "--limit", "0")
    scan_cmd = skade_scan_cmd(build_dir, wh, table_name)

    def py_plan():
        return len(list(tbl.scan().plan_files()))

    def py_load_plan():
        return len(list(catalog.load_table(table_name).scan().plan_files()))

    def py_scan():
        return tbl.scan().to_arrow().num_rows

    # Metadata tables: the whole `skade files|partitions` process against PyIceberg's inspect
    # on the loaded table; both must list every file (and one unpartitioned partition).
    def skade_listing(what: str) -> float:
        wall, out = run_timed(skade + [what, table_name, "--format", "jsonl"])
        lines = out.splitlines()
        want = n if what == "files" else 1
        if len(lines) != want or (what == "partitions" and json.loads(lines[0])["file_count"] != n):
            sys.exit(f"small files: skade {what} listed {len(lines)} rows, expected {want}")
        return wall

    def py_inspect(what: str) -> float:
        t, listed = timed(lambda: getattr(tbl.inspect, what)())
        if listed.num_rows != (n if what == "files" else 1):
            sys.exit(f"small files: PyIceberg inspect.{what} listed {listed.num_rows} rows")
        return t

    server = scan_driver(build_dir, wh, table_name)
    cold = skade_scan(server)  # warm-ups: page cache, imports, thread pools
    for fn in (py_plan, py_load_plan, py_scan):
        fn()
    cli_scan_timed(plan_cmd)
    cli_scan_timed(scan_cmd)
    for what in ("files", "partitions"):
        skade_listing(what)
        py_inspect(what)
    series = {k: [] for k in ("skade_plan", "skade_scan", "skade_cli_plan", "skade_cli_scan",
                              "pyiceberg_plan", "pyiceberg_load_plan", "pyiceberg_scan", "skade_files",
                              "pyiceberg_inspect_files", "skade_partitions", "pyiceberg_inspect_partitions")}
    for _ in range(a.rounds):
        s = skade_scan(server)
        if s["rows"] != n * per:
            sys.exit(f"small files: skade scanned {s['rows']} rows, expected {n * per}")
        series["skade_plan"].append(s["plan_s"])
        series["skade_scan"].append(s["time_s"])
        t, planned = timed(py_plan)
        if planned != n:
            sys.exit(f"small files: PyIceberg planned {planned} files, expected {n}")
        series["pyiceberg_plan"].append(t)
        series["pyiceberg_load_plan"].append(timed(py_load_plan)[0])
        t, rows = timed(py_scan)
        if rows != n * per:
            sys.exit(f"small files: PyIceberg scanned {rows} rows, expected {n * per}")
        series["pyiceberg_scan"].append(t)
    end_driver(server)
    for _ in range(a.rounds):  # the processes once the driver's memory is gone (see bench_scan)
        wall, rows, _cpu = cli_scan_timed(plan_cmd)
        series["skade_cli_plan"].append(wall)
        wall, rows, _cpu = cli_scan_timed(scan_cmd)
        if rows != n * per:
            sys.exit(f"small files: skade scan counted {rows} rows, expected {n * per}")
        series["skade_cli_scan"].append(wall)
        for what in ("files", "partitions"):
            series[f"skade_{what}"].append(skade_listing(what))
            series[f"pyiceberg_inspect_{what}"].append(py_inspect(what))

    def ratio(peer: str, ours: str) -> dict:
        return spread([p / o for p, o in zip(series[peer], series[ours])])

    ratios = {
        "plan_api_vs_pyiceberg_plan_files": ratio("pyiceberg_plan", "skade_plan"),
        "plan_process_vs_pyiceberg_load_and_plan_files": ratio("pyiceberg_load_plan", "skade_cli_plan"),
        "scan_api_vs_pyiceberg": ratio("pyiceberg_scan", "skade_scan"),
        "scan_process_vs_pyiceberg": ratio("pyiceberg_scan", "skade_cli_scan"),
        "files_process_vs_pyiceberg_inspect": ratio("pyiceberg_inspect_files", "skade_files"),
        "partitions_process_vs_pyiceberg_inspect": ratio("pyiceberg_inspect_partitions", "skade_partitions"),
    }
    for name, r in ratios.items():
        print(f"small files {name}: {r['median']:.1f}x [{r['min']:.1f}-{r['max']:.1f}]")
    return {
        "machine": machine_info(build_dir),
        "load_average": {"start": load_start, "end": list(os.getloadavg())},
        "data": {"commits": n, "rows_per_commit": per, "rows": n * per, "schema": SKADE_SCHEMA,
                 "properties": PROPERTIES, "manifests": n, "data_files": n},
        "skade_first_scan_in_process": {"time_s": cold["time_s"], "plan_s": cold["plan_s"]},
        "seconds": {k: {"times_s": v, "median_s": statistics.median(v)} for k, v in series.items()},
        "ratios": ratios,
        "method": {
            "table": f"{n} `skade append` commits of {per} rows each (the scan source's first rows), "
                     "unpartitioned: one data file and one manifest per commit",
            "skade_plan": "TableScan::Plan() of the loaded table in a scan_bench process kept up (plan_s)",
            "skade_scan": "the whole scan to an Arrow table in that process (time_s)",
            "skade_cli_plan": "the whole `skade scan TABLE --format none --limit 0` process "
                              "(start, catalog, metadata, every manifest)",
            "skade_cli_scan": "the whole `skade scan TABLE --format none` process",
            "pyiceberg_plan": "list(table.scan().plan_files()) on a loaded table, in this process",
            "pyiceberg_load_plan": "catalog.load_table() then plan_files(): what the skade process does",
            "pyiceberg_scan": "table.scan().to_arrow() on a loaded table",
            "skade_files": "the whole `skade files TABLE --format jsonl` process (every manifest read, every "
                           "file printed)",
            "skade_partitions": "the whole `skade partitions TABLE --format jsonl` process",
            "pyiceberg_inspect_files": "table.inspect.files() on a loaded table, in this process",
            "pyiceberg_inspect_partitions": "table.inspect.partitions() on a loaded table, in this process",
            "rounds": f"one warm-up each, then {a.rounds} interleaved rounds (API arms beside the driver, "
                      "process arms after it ended); ratio = peer time / skade time per round",
        },
    }


def bench_cdc(a, build_dir: Path, data_dir: Path, src: Path) -> dict:
    """Commit-to-subscriber latency (in-process push, cross-process push, 100 ms poller) and
    changelog throughput against the difference of two full scans (PyIceberg + pyarrow joins)."""
    load_start = list(os.getloadavg())
    lat_wh = data_dir / "cdc-latency"
    shutil.rmtree(lat_wh, ignore_errors=True)
    lat_wh.mkdir(parents=True)
    latency = run_driver(build_dir, "cdc_bench", "latency", "--warehouse", str(lat_wh),
                         "--commits", str(a.cdc_commits))

    wh = data_dir / "cdc-changelog"
    shutil.rmtree(wh, ignore_errors=True)
    wh.mkdir(parents=True)
    setup = run_driver(build_dir, "cdc_bench", "changelog-setup", "--warehouse", str(wh), "--table",
                       "bench.changes", "--schema", SKADE_SCHEMA, "--partition", PARTITION,
                       "--source", str(src), "--changed-fraction", "0.1", *prop_args())
    table = sql_catalog(wh).load_table("bench.changes")

    # skade's rounds: one process, a warm-up read, then one timed read per round (the
    # peer's reads run warm in this process too); interleaved by running the driver
    # per round with its own warm-up.
    def skade_changelog():
        r = run_driver(build_dir, "cdc_bench", "changelog", "--warehouse", str(wh), "--table",
                       "bench.changes", "--from", str(setup["from"]), "--to", str(setup["to"]),
                       "--warmup", "1", "--reps", "1")
        r["seconds"] = r["times_s"][0]
        return r

    def scan_diff():
        before = table.scan(snapshot_id=setup["from"]).to_arrow()
        after = table.scan(snapshot_id=setup["to"]).to_arrow()
        keys = before.column_names
        return (before.join(after, keys=keys, join_type="left anti").num_rows,
                after.join(before, keys=keys, join_type="left anti").num_rows)

    skade_changelog()  # warm-up
    scan_diff()
    sk_times, peer_times, ratios = [], [], []
    for _ in range(a.rounds):
        r = skade_changelog()
        t, (deleted, inserted) = timed(scan_diff)
        # Both sides must find the same changes: updates are a DELETE and an INSERT each.
        assert r["by_type"] == {"DELETE": deleted, "INSERT": inserted}, (r, deleted, inserted)
        sk_times.append(r["seconds"])
        peer_times.append(t)
        ratios.append(t / r["seconds"])
    ratio = spread(ratios)
    push_p99 = latency["cross_process_push"]["p99_ms"]
    print(f"cdc latency p50/p99 ms: in-process {latency['in_process_push']['p50_ms']:.3f}/"
          f"{latency['in_process_push']['p99_ms']:.3f}, cross-process push "
          f"{latency['cross_process_push']['p50_ms']:.2f}/{push_p99:.2f}, 100 ms poller "
          f"{latency['cross_process_poll_100ms']['p50_ms']:.1f}/{latency['cross_process_poll_100ms']['p99_ms']:.1f}")
    print(f"changelog {setup['rows']} rows, 10% changed: skade {statistics.median(sk_times):.3f} s, "
          f"two scans + diff {statistics.median(peer_times):.3f} s, ratio {ratio['median']:.2f}x "
          f"[{ratio['min']:.2f}-{ratio['max']:.2f}]")
    return {
        "machine": machine_info(build_dir),
        "load_average": {"start": load_start, "end": list(os.getloadavg())},
        "targets": {"cross_process_p99_ms": 10, "changelog_ratio": 3.0},
        "met": {"cross_process_p99": push_p99 < 10, "changelog_ratio": ratio["median"] >= 3.0},
        "latency": latency,
        "changelog": {"rows": setup["rows"], "updated": setup["updated"], "deleted": setup["deleted"],
                      "skade_seconds": spread(sk_times), "scan_diff_seconds": spread(peer_times),
                      "ratio": ratio},
        "method": {
            "latency": f"{a.cdc_commits} single-row appends per arm, 2 ms apart; latency = time the "
                       "subscriber has the commit minus time the writer's post-commit hook saw it durable "
                       "(steady clock, shared by processes); arms: in-process CommitSubscription, a second "
                       "process woken by inotify on the catalog (CommitWatcher), a second process reading "
                       "the commit log every 100 ms",
            "changelog": "table of 1M rows partitioned by country; one upsert of 5% of ids (quantity + 1) "
                         "and one delete of another 5% by key (position deletes, so PyIceberg can read it); "
                         "skade: cdc::ReadChangelog(from, to) in its own process, one warm-up read then one timed "
                         "read per round; peer: "
                         "PyIceberg scans of both snapshots to Arrow, then pyarrow left-anti joins on all "
                         f"columns both ways; one warm-up each, then {a.rounds} interleaved rounds; both "
                         "sides' change counts checked equal",
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--data-dir", default=None, help="generated data (default <build-dir>/bench-data)")
    ap.add_argument("--results-dir", default=str(REPO / "bench" / "results"))
    ap.add_argument("--only", choices=["scan", "export", "append", "upsert", "small-files", "cdc"])
    ap.add_argument("--cdc-commits", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scan-arms", default=None,
                    help="comma-separated scan arms to run (default: all of " +
                         ", ".join(a[0] for a in SCAN_ARMS) + ")")
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--small-files", type=int, default=300, help="commits of the small-files table")
    ap.add_argument("--small-file-rows", type=int, default=200)
    ap.add_argument("--upsert-batches", type=int, default=10)
    ap.add_argument("--upsert-batch-rows", type=int, default=10_000)
    ap.add_argument("--upsert-update-fraction", type=float, default=0.1)
    ap.add_argument("--pyiceberg-upsert-batches", type=int, default=None,
                    help="fewer upsert batches for PyIceberg (default: as many as skade)")
    a = ap.parse_args()
    build_dir = Path(a.build_dir).resolve()
    data_dir = Path(a.data_dir).resolve() if a.data_dir else build_dir / "bench-data"
    results_dir = Path(a.results_dir).resolve()
    for exe in {"scan": ["scan_bench"], "export": ["scan_bench", "skade"], "append": ["append_bench"],
                "upsert": ["upsert_bench"], "small-files": ["scan_bench", "skade"],
                "cdc": ["cdc_bench"]}.get(a.only, ["scan_bench", "append_bench", "upsert_bench", "cdc_bench"]):
        if not (build_dir / "bin" / exe).exists():
            sys.exit(f"{build_dir}/bin/{exe} is missing: build first (make build; needs libbenchmark-dev)")
    warnings.filterwarnings("ignore")
    src = source_file(data_dir, a.rows)
    t0 = time.perf_counter()
    if a.only in (None, "scan"):
        doc = bench_scan(a, build_dir, data_dir, src)
        name = "scan" if a.rows == 1_000_000 else f"scan-{a.rows // 1_000_000}m"
        if a.scan_arms:  # a subset of the arms does not replace the full run's figures
            name += "-" + a.scan_arms.replace(",", "+")
        print(f"wrote {write_result(results_dir, name, doc)}")
    if a.only in (None, "export"):
        doc = bench_export(a, build_dir, data_dir, src)
        print(f"wrote {write_result(results_dir, 'export' if a.rows == 1_000_000 else f'export-{a.rows // 1_000_000}m', doc)}")
    if a.only in (None, "append"):
        doc = bench_append(a, build_dir, data_dir, src)
        print(f"wrote {write_result(results_dir, 'append', doc)}")
    if a.only in (None, "upsert"):
        doc = bench_upsert(a, build_dir, data_dir, src)
        print(f"wrote {write_result(results_dir, 'upsert', doc)}")
    if a.only in (None, "small-files"):
        doc = bench_small_files(a, build_dir, data_dir, src)
        print(f"wrote {write_result(results_dir, 'small-files', doc)}")
    if a.only in (None, "cdc"):
        doc = bench_cdc(a, build_dir, data_dir, src)
        print(f"wrote {write_result(results_dir, 'cdc', doc)}")
    print(f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
