#!/usr/bin/env python3
"""skade benchmarks: scan and append, skade vs PyIceberg (and pyarrow for scans).

skade's side runs in the C++ drivers (build/bin/scan_bench, build/bin/append_bench),
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
                    [--only scan|append] [--rounds 5] [--commits 200] [--rows 1000000]
"""
from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
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
COUNTRIES = ["SE", "NO", "DK", "FI"]
# Same write settings on both sides (these are also both engines' defaults).
PROPERTIES = {
    "write.parquet.compression-codec": "zstd",
    "write.parquet.compression-level": "1",
    "write.parquet.row-group-limit": "1048576",
    "write.target-file-size-bytes": "536870912",
}
SCAN_ARMS = [  # (name, columns or None, filter or None)
    ("full", None, None),
    ("projection", ["id", "price"], None),
    ("projection_filter", ["id", "price"], "country = 'SE'"),
]
TARGETS = {
    "scan_vs_pyiceberg": 1.5,   # skade rows/s >= 1.5x PyIceberg, every arm
    "scan_full_vs_pyarrow": 0.8,  # skade rows/s >= 0.8x pyarrow, full scan
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

def bench_scan(a, build_dir: Path, data_dir: Path, src: Path) -> dict:
    load_start = list(os.getloadavg())
    wh = data_dir / "scan-warehouse"
    shutil.rmtree(wh, ignore_errors=True)
    table_name = "bench.scan"
    setup = run_driver(build_dir, "scan_bench", "setup", "--warehouse", str(wh), "--table", table_name,
                       "--schema", SKADE_SCHEMA, "--partition", PARTITION, "--source", str(src),
                       *prop_args())
    files = [f["path"].removeprefix("file://") for f in setup["files"]]
    print(f"scan table: {setup['rows']} rows in {len(files)} files written by skade "
          f"({setup['append_s']:.2f} s)", file=sys.stderr)

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

    def pyarrow_scan(cols, flt):
        # The same files, read directly (no hive partition discovery: the
        # country column is in the files).
        kw = {"partitioning": None}
        if cols:
            kw["columns"] = cols
        if flt:
            kw["filters"] = [("country", "=", "SE")]
        return pq.read_table(files, **kw)

    def skade_scan(cols, flt, warmup):
        args = ["scan", "--warehouse", str(wh), "--table", table_name,
                "--warmup", str(warmup), "--reps", "1"]
        if cols:
            args += ["--columns", ",".join(cols)]
        if flt:
            args += ["--filter", flt]
        return run_driver(build_dir, "scan_bench", *args)

    arms = {}
    for arm, cols, flt in SCAN_ARMS:
        # Warm-up of every engine (page cache, imports, thread pools).
        skade_scan(cols, flt, 1)
        expect = pyiceberg_scan(cols, flt)
        pyarrow_scan(cols, flt)
        times = {"skade": [], "pyiceberg": [], "pyarrow": []}
        for _ in range(a.rounds):
            s = skade_scan(cols, flt, 1)
            times["skade"].append(s["times_s"][0])
            t, out_i = timed(lambda: pyiceberg_scan(cols, flt))
            times["pyiceberg"].append(t)
            t, out_a = timed(lambda: pyarrow_scan(cols, flt))
            times["pyarrow"].append(t)
            rows = {"skade": s["rows"], "pyiceberg": out_i.num_rows, "pyarrow": out_a.num_rows}
            if len(set(rows.values())) != 1 or s["columns"] != out_i.num_columns:
                sys.exit(f"scan arm {arm}: engines disagree: rows {rows}, columns skade "
                         f"{s['columns']} pyiceberg {out_i.num_columns}")
        out_rows = s["rows"]
        ratio_i = [ti / ts for ts, ti in zip(times["skade"], times["pyiceberg"])]
        ratio_a = [ta / ts for ts, ta in zip(times["skade"], times["pyarrow"])]
        engines = {}
        for e, ts in times.items():
            med = statistics.median(ts)
            engines[e] = {"times_s": ts, "median_s": med, "rows_per_s": out_rows / med,
                          "input_rows_per_s": total_rows / med}
        arms[arm] = {
            "columns": cols or [c[0] for c in COLUMNS],
            "filter": flt,
            "rows_returned": out_rows,
            "skade_plan": s["stats"],
            "engines": engines,
            "ratio_skade_vs_pyiceberg": spread(ratio_i),
            "ratio_skade_vs_pyarrow": spread(ratio_a),
        }

    met = {
        "skade >= 1.5x pyiceberg rows/s, every arm": all(
            v["ratio_skade_vs_pyiceberg"]["median"] >= TARGETS["scan_vs_pyiceberg"] for v in arms.values()),
        "skade >= 0.8x pyarrow rows/s, full scan": (
            arms["full"]["ratio_skade_vs_pyarrow"]["median"] >= TARGETS["scan_full_vs_pyarrow"]),
    }
    print(f"\nSCAN  ({total_rows} rows x {len(COLUMNS)} cols, {len(files)} files; median of {a.rounds} "
          "interleaved rounds, warm cache)")
    print(f"{'arm':<18} {'skade':>16} {'pyiceberg':>16} {'pyarrow':>16}   "
          f"{'skade/pyiceberg':>22} {'skade/pyarrow':>22}")
    for arm, v in arms.items():
        e = v["engines"]
        ri, ra = v["ratio_skade_vs_pyiceberg"], v["ratio_skade_vs_pyarrow"]
        print(f"{arm:<18} {fmt_rate(e['skade']['rows_per_s'])} {fmt_rate(e['pyiceberg']['rows_per_s'])} "
              f"{fmt_rate(e['pyarrow']['rows_per_s'])}   "
              f"{ri['median']:6.2f}x [{ri['min']:.2f}-{ri['max']:.2f}]  "
              f"{ra['median']:6.2f}x [{ra['min']:.2f}-{ra['max']:.2f}]")
    print("rows/s = rows returned / median wall time (projection_filter returns the SE rows)")
    for k, ok in met.items():
        print(f"  target {k}: {'MET' if ok else 'NOT MET'}")
    return {
        "benchmark": "scan",
        "machine": {**machine_info(build_dir), "loadavg_1_5_15_at_start": load_start},
        "protocol": {"rounds": a.rounds, "warmup": 1, "cache": "warm", "interleaved": True,
                     "threads": "defaults: skade parquet use_threads (Arrow CPU pool), PyIceberg default "
                                "executor, pyarrow use_threads=True",
                     "skade_timing": "Table::NewScan().Select().Filter() + Plan + Read->ToTable(), table "
                                     "loaded outside the timing",
                     "pyiceberg_timing": "table.scan(selected_fields, row_filter).to_arrow(), table loaded "
                                         "outside the timing",
                     "pyarrow_timing": "pq.read_table(the 4 data files, columns, filters, partitioning=None)",
                     "ratio": "per-round time(peer)/time(skade) = rows/s(skade)/rows/s(peer); median [min-max]"},
        "data": {"rows": total_rows, "columns": len(COLUMNS), "files": len(files), "seed": SEED,
                 "schema": SKADE_SCHEMA, "partition": PARTITION, "properties": PROPERTIES,
                 "bytes": sum(f["bytes"] for f in setup["files"])},
        "arms": arms,
        "targets": {"skade_vs_pyiceberg_min": TARGETS["scan_vs_pyiceberg"],
                    "skade_vs_pyarrow_full_min": TARGETS["scan_full_vs_pyarrow"]},
        "targets_met": met,
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
        # Round 0 is the warm-up of both engines (not reported).
        for r in range(a.rounds + 1):
            name = f"big_{label}_{r}"
            s = run_driver(build_dir, "append_bench", *sk_args("big", name, partitioned))
            t_py = py_create(name, partitioned)
            t, _ = timed(lambda: t_py.append(data))
            if r > 0:
                times["skade"].append(s["append_s"])
                times["pyiceberg"].append(t)
            else:
                files_sk = s["files"]
                files_py = t_py.inspect.files().num_rows
        ratio = [tp / ts for ts, tp in zip(times["skade"], times["pyiceberg"])]
        eng = {e: {"times_s": ts, "median_s": statistics.median(ts), "rows_per_s": rows / statistics.median(ts)}
               for e, ts in times.items()}
        variants[label] = {"partition": PARTITION if partitioned else None,
                           "files": {"skade": files_sk, "pyiceberg": files_py},
                           "engines": eng, "ratio_skade_vs_pyiceberg": spread(ratio)}

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
    print(f"{'variant':<16} {'skade':>16} {'pyiceberg':>16}   {'skade/pyiceberg':>22}")
    for label, v in variants.items():
        e, rr = v["engines"], v["ratio_skade_vs_pyiceberg"]
        print(f"{label:<16} {fmt_rate(e['skade']['rows_per_s'])} {fmt_rate(e['pyiceberg']['rows_per_s'])}   "
              f"{rr['median']:6.2f}x [{rr['min']:.2f}-{rr['max']:.2f}]")
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--data-dir", default=None, help="generated data (default <build-dir>/bench-data)")
    ap.add_argument("--results-dir", default=str(REPO / "bench" / "results"))
    ap.add_argument("--only", choices=["scan", "append"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--rows", type=int, default=1_000_000)
    a = ap.parse_args()
    build_dir = Path(a.build_dir).resolve()
    data_dir = Path(a.data_dir).resolve() if a.data_dir else build_dir / "bench-data"
    results_dir = Path(a.results_dir).resolve()
    for exe in ("scan_bench", "append_bench"):
        if not (build_dir / "bin" / exe).exists():
            sys.exit(f"{build_dir}/bin/{exe} is missing: build first (make build; needs libbenchmark-dev)")
    warnings.filterwarnings("ignore")
    src = source_file(data_dir, a.rows)
    t0 = time.perf_counter()
    if a.only in (None, "scan"):
        doc = bench_scan(a, build_dir, data_dir, src)
        print(f"wrote {write_result(results_dir, 'scan', doc)}")
    if a.only in (None, "append"):
        doc = bench_append(a, build_dir, data_dir, src)
        print(f"wrote {write_result(results_dir, 'append', doc)}")
    print(f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
