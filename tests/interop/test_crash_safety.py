"""Crash safety: a writer doing mixed commits is SIGKILLed at random moments, 30 times over.

The writer (crash_writer.py, its own process group, killed as a group so an in-flight skade
dies too) runs appends, deletes by filter and by key, upserts, overwrites, compaction, manifest
rewrites and expiry on one table per round. Four tables take turns (partitioned by a column or
by bucket(id), or unpartitioned; merge-on-read and copy-on-write), each restarted on the same
warehouse so that any damage would accumulate. After every kill:

1. the table loads, every snapshot `skade snapshots` lists scans, and its rows are the rows
   the writer's model had when that snapshot was committed;
2. no metadata references a missing or partial file: from the catalog's current metadata file,
   every metadata-log file parses, every manifest list and manifest exists and reads fully with
   fastavro (manifest_length matches), and every data/delete file not DELETED exists with the
   size and record count its manifest entry gives;
3. `skade orphans` lists exactly the files under the table folder that nothing references
   (no snapshot's manifest list, manifest or data/delete file, no current or metadata-log
   metadata file): orphans and referenced files are disjoint;
4. the commit is atomic: the catalog's commit log holds either the writer's last journaled state
   or that plus exactly the in-flight operation, and the current rows are the model's rows
   before or after that operation accordingly; ids are unique; PyIceberg reads the same rows
   (unless the snapshot has live equality deletes, which PyIceberg cannot read).

Finally `orphans --delete` runs with a far-future cutoff on every table, and every snapshot
still scans with the same rows.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import fastavro
import pyarrow.parquet as pq

from skade_util import Skade, catalog_row, current_metadata, local_path

ROUNDS = 30
FAR_FUTURE = "2999-01-01T00:00:00+00:00"
WRITER = Path(__file__).with_name("crash_writer.py")
SCHEMA = "id:long!, part:string!, v:int!, note:string"

# name, writer kind, partition spec, write.delete.mode
TABLES = [
    ("db.part_mor", "part", "part", "merge-on-read"),
    ("db.bucket_cow", "bucket", "bucket(4, id)", "copy-on-write"),
    ("db.flat_mor", "flat", None, "merge-on-read"),
    ("db.part_cow", "part", "part", "copy-on-write"),
]


# --- catalog and files -----------------------------------------------------------------------


def commit_state(warehouse: Path, table: str) -> tuple[int, list[tuple]]:
    """(number of 'commit' rows of the table, all its log rows in order)."""
    ns, name = table.rsplit(".", 1)
    con = sqlite3.connect(f"file:{warehouse}/catalog.db?mode=ro", uri=True, timeout=60)
    try:
        rows = con.execute(
            "select commit_seq, action, snapshot_id, operation, previous_metadata_location, metadata_location, engine "
            "from skade_commit_log where table_namespace=? and table_name=? order by commit_seq", (ns, name)).fetchall()
    finally:
        con.close()
    return sum(1 for r in rows if r[1] == "commit"), rows


def read_avro(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        return list(fastavro.reader(f))


_parquet_checked: dict[Path, tuple[int, int]] = {}


def parquet_shape(path: Path) -> tuple[int, int]:
    """(size, row count) of a Parquet file; reading the footer fails on a partial file."""
    if path not in _parquet_checked:
        _parquet_checked[path] = (path.stat().st_size, pq.ParquetFile(path).metadata.num_rows)
    return _parquet_checked[path]


def walk_metadata(warehouse: Path, table: str):
    """Checks (2) and returns (metadata, referenced files, files that must exist, current has eq deletes)."""
    meta_path, meta = current_metadata(warehouse, table)
    row = catalog_row(warehouse, table)
    referenced = {meta_path}
    for e in meta.get("metadata-log", []):
        p = local_path(e["metadata-file"])
        referenced.add(p)
        assert p.is_file(), f"{table}: metadata-log file {p} is missing"
        json.loads(p.read_text())  # complete JSON
    if row[1]:
        assert local_path(row[1]).is_file(), f"{table}: previous_metadata_location {row[1]} is missing"
    required = set(referenced)
    current_eq_deletes = False
    for s in meta.get("snapshots", []):
        ml = local_path(s["manifest-list"])
        referenced.add(ml)
        required.add(ml)
        assert ml.is_file(), f"{table}: snapshot {s['snapshot-id']}: manifest list {ml} is missing"
        for m in read_avro(ml):
            mp = local_path(m["manifest_path"])
            referenced.add(mp)
            required.add(mp)
            assert mp.is_file(), f"{table}: snapshot {s['snapshot-id']}: manifest {mp} (in {ml.name}) is missing"
            assert mp.stat().st_size == m["manifest_length"], f"{table}: manifest {mp} has a wrong length"
            for e in read_avro(mp):
                df = e["data_file"]
                fp = local_path(df["file_path"])
                referenced.add(fp)
                if e["status"] == 2:
                    continue
                required.add(fp)
                assert fp.is_file(), (f"{table}: snapshot {s['snapshot-id']}: live {['data', 'position delete', 'equality delete'][df['content']]}"
                                      f" file {fp} (in manifest {mp.name}) is missing")
                size, nrows = parquet_shape(fp)
                assert size == df["file_size_in_bytes"], f"{table}: {fp}: size {size} != {df['file_size_in_bytes']}"
                assert nrows == df["record_count"], f"{table}: {fp}: {nrows} rows != record_count {df['record_count']}"
                if s["snapshot-id"] == meta.get("current-snapshot-id") and df["content"] == 2:
                    current_eq_deletes = True
    return meta, referenced, required, current_eq_deletes


def files_under(root: Path) -> set[Path]:
    return {Path(d) / f for d, _, fs in os.walk(root) for f in fs}


# --- rows ------------------------------------------------------------------------------------


def row_tuples(rows) -> list[tuple]:
    return sorted((r["id"], r["part"], r["v"], r["note"]) for r in rows)


def model_tuples(rows) -> list[tuple]:
    return sorted(tuple(r) for r in rows)


def scan_rows(skade, table: str, *args) -> list[tuple]:
    out = skade.ok("scan", table, *args, "--format", "jsonl")
    return row_tuples(json.loads(line) for line in out.splitlines() if line.strip())


def diff(a, b) -> str:
    sa, sb = set(a), set(b)
    return f"{len(a)} rows vs {len(b)} expected; unexpected {sorted(sa - sb)[:5]}; missing {sorted(sb - sa)[:5]}"


# --- the writer ------------------------------------------------------------------------------


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is left in the process group."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    deadline = time.monotonic() + 5
    while group_alive(proc.pid):
        assert time.monotonic() < deadline, "the killed writer's process group did not go away"
        time.sleep(0.01)


def read_ops(state: Path) -> list[dict]:
    ops = []
    p = state / "ops.jsonl"
    if p.exists():
        for line in p.read_text().splitlines():
            try:
                ops.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # cannot happen with one O_APPEND write per line, but a cut line is "not done"
    return ops


def writer_log(state: Path, ops: list[dict]) -> str:
    tail = "\n".join(f"  op {o['k']}: {o['desc']}: rc={o['rc']} out={o['out'].strip()!r} err={o['err'].strip()!r}"
                     for o in ops[-5:])
    out = (state / "writer.log").read_text() if (state / "writer.log").exists() else ""
    return f"last ops:\n{tail}\nwriter output:\n{out[-3000:]}"


# --- the test --------------------------------------------------------------------------------


class TableState:
    def __init__(self, name, kind):
        self.name, self.kind = name, kind
        self.model: list[tuple] = []  # the rows the table must have now
        self.by_snapshot: dict[int, list[tuple]] = {}  # rows of every snapshot the writer committed
        self.kills = 0
        self.pyiceberg_checks = 0  # current snapshots PyIceberg read (no live equality deletes)


def verify(skade, warehouse: Path, catalog, ts: TableState, what: str):
    t = ts.name
    # (1) the table loads and every snapshot scans, with the rows it had when committed
    skade.ok("describe", t)
    snaps = skade.snapshots(t)
    meta, referenced, required, eq_deletes = walk_metadata(warehouse, t)  # (2)
    assert sorted(s["snapshot_id"] for s in snaps) == sorted(s["snapshot-id"] for s in meta.get("snapshots", []))
    for s in snaps:
        sid = s["snapshot_id"]
        assert sid in ts.by_snapshot, f"{what}: {t}: snapshot {sid} was committed by no operation the writer ran"
        rows = scan_rows(skade, t, "--snapshot", sid)
        assert rows == ts.by_snapshot[sid], f"{what}: {t}: snapshot {sid} ({s['operation']}): {diff(rows, ts.by_snapshot[sid])}"
    cur = meta.get("current-snapshot-id")
    if cur is not None:
        skade.ok("scan", t, "--snapshot", cur, "--format", "none")

    # (4) the current rows: the model's, ids unique, and PyIceberg agrees
    rows = scan_rows(skade, t)
    assert rows == ts.model, f"{what}: {t}: current rows: {diff(rows, ts.model)}"
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)), f"{what}: {t}: duplicate ids"
    if cur is not None and not eq_deletes:
        got = row_tuples(catalog().load_table(t).scan().to_arrow().to_pylist())
        assert got == ts.model, f"{what}: {t}: PyIceberg reads {diff(got, ts.model)}"
        ts.pyiceberg_checks += 1

    # the catalog row and the commit log agree: the last commit is the current metadata
    _, log = commit_state(warehouse, t)
    meta_loc = catalog_row(warehouse, t)[0]
    assert log[-1][5] == meta_loc, f"{what}: {t}: last commit-log row is not the catalog's metadata"
    if cur is not None:
        assert log[-1][2] == cur, f"{what}: {t}: commit log says snapshot {log[-1][2]}, metadata {cur}"
    for a, b in zip(log, log[1:]):
        assert b[4] == a[5], f"{what}: {t}: commit log chain broken at commit_seq {b[0]}"

    # (3) orphans: exactly the unreferenced files under the table folder
    root = local_path(meta["location"])
    orphans = {Path(r["file"]) for r in skade.jsonl("orphans", t, "--older-than", FAR_FUTURE)}
    both = orphans & referenced
    assert not both, f"{what}: {t}: orphans lists referenced files: {sorted(map(str, both))[:5]}"
    on_disk = files_under(root)
    assert orphans == on_disk - referenced, (
        f"{what}: {t}: orphans misses {sorted(map(str, on_disk - referenced - orphans))[:5]}, "
        f"lists absent {sorted(map(str, orphans - on_disk))[:5]}")
    return meta, referenced, required, orphans


def run_round(rnd, rng, seed, skade, warehouse: Path, tmp_path: Path, ts: TableState):
    state = tmp_path / f"round-{rnd:02}"
    state.mkdir()
    (state / "model.json").write_text(json.dumps(ts.model))
    n0, _ = commit_state(warehouse, ts.name)
    with open(state / "writer.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, str(WRITER), "--skade", skade.binary, "--warehouse", str(warehouse), "--table", ts.name,
             "--kind", ts.kind, "--round", str(rnd + 1), "--state", str(state), "--seed", str(seed * 100 + rnd)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while commit_state(warehouse, ts.name)[0] == n0:
            assert proc.poll() is None, f"round {rnd}: writer exited (rc={proc.returncode}) before its first commit\n" + writer_log(state, read_ops(state))
            assert time.monotonic() < deadline, f"round {rnd}: no commit within 30 s\n" + writer_log(state, read_ops(state))
            time.sleep(0.01)
        time.sleep(rng.uniform(0.2, 1.5))
        alive = proc.poll() is None
    finally:
        kill_group(proc)
    ops = read_ops(state)
    assert alive, f"round {rnd}: writer stopped (rc={proc.returncode}) before the kill\n" + writer_log(state, ops)
    pending = json.loads((state / "pending.json").read_text())

    # replay the journal: every finished op committed at most once; remember each snapshot's rows
    prev = n0
    rows_before = ts.model
    for o in ops:
        assert o["rc"] == 0 and not o["err"].strip(), f"round {rnd}: op {o['desc']} failed\n" + writer_log(state, ops)
        assert o["commits"] in (prev, prev + 1), f"round {rnd}: op {o['desc']} made {o['commits'] - prev} commits"
        rows = model_tuples(o["rows"])
        if o["commits"] == prev + 1:
            assert ts.by_snapshot.setdefault(o["snapshot"], rows) == rows
        else:
            assert rows == rows_before, f"round {rnd}: op {o['desc']} changed the model but committed nothing:\n{o['out']}"
        prev, rows_before = o["commits"], rows
    # the in-flight op: committed or not, never half
    n1, _ = commit_state(warehouse, ts.name)
    _, meta = current_metadata(warehouse, ts.name)
    last_k = ops[-1]["k"] if ops else -1
    assert pending["k"] == last_k or model_tuples(pending["before"]) == rows_before, "writer journal inconsistent"
    if pending["k"] == last_k:
        assert n1 == prev, f"round {rnd}: {n1 - prev} commits after the writer's last finished op"
        ts.model = model_tuples(pending["after"])
        in_flight = f"after op {last_k} ({pending['desc']}) finished"
    else:
        assert pending["k"] == last_k + 1
        assert n1 in (prev, prev + 1), f"round {rnd}: {n1 - prev} commits by the killed op {pending['desc']}"
        committed = n1 == prev + 1
        ts.model = model_tuples(pending["after" if committed else "before"])
        if committed:
            assert ts.by_snapshot.setdefault(meta["current-snapshot-id"], ts.model) == ts.model
        in_flight = f"during op {pending['k']} ({pending['desc']}), {'committed' if committed else 'not committed'}"
    ts.kills += 1
    return f"round {rnd} ({ts.name}): {len(ops)} ops finished, killed {in_flight}"


def test_crash_safety(skade, warehouse, tmp_path, catalog):
    seed = int(os.environ.get("CRASH_SEED", random.randrange(1 << 30)))
    print(f"CRASH_SEED={seed}")
    rng = random.Random(seed)
    # a private copy of the binary: others rebuild build/bin/skade while this test runs
    binary = tmp_path / "skade"
    shutil.copy2(skade.binary, binary)
    skade = Skade(warehouse, str(binary))
    skade.ok("create-namespace", "db")
    states = []
    for name, kind, part, mode in TABLES:
        args = ["create", name, "--schema", SCHEMA, "--identifier", "id", "--property", f"write.delete.mode={mode}"]
        if part:
            args += ["--partition", part]
        skade.ok(*args)
        states.append(TableState(name, kind))

    started = time.monotonic()
    for rnd in range(ROUNDS):
        ts = states[rnd % len(states)]
        what = run_round(rnd, rng, seed, skade, warehouse, tmp_path, ts)
        print(what)
        verify(skade, warehouse, catalog, ts, what)
    print(f"{ROUNDS} kills in {time.monotonic() - started:.1f} s")

    # every orphan goes; nothing referenced goes with it
    for ts in states:
        deleted = {Path(r["file"]) for r in skade.jsonl("orphans", ts.name, "--older-than", FAR_FUTURE, "--delete")}
        kinds = {}
        for p in deleted:  # what the kills (and the trimmed metadata-log) left behind
            k = ("tmp" if p.name.endswith(".tmp") else "metadata.json" if p.name.endswith(".metadata.json")
                 else "manifest list" if p.name.startswith("snap-") else "manifest" if p.suffix == ".avro"
                 else "delete file" if "/deletes/" in str(p) else "data file")
            kinds[k] = kinds.get(k, 0) + 1
        meta, referenced, required, orphans = verify(skade, warehouse, catalog, ts, "after orphans --delete")
        assert not orphans, f"{ts.name}: orphans left after --delete: {sorted(map(str, orphans))[:5]}"
        on_disk = files_under(local_path(meta["location"]))
        assert required <= on_disk
        assert on_disk <= referenced, f"{ts.name}: unreferenced files left: {sorted(map(str, on_disk - referenced))[:5]}"
        assert not any(p.name.endswith(".tmp") for p in on_disk)
        print(f"{ts.name}: {ts.kills} kills, {len(ts.model)} rows, {len(meta.get('snapshots', []))} snapshots, "
              f"orphans deleted {kinds}, {ts.pyiceberg_checks} PyIceberg comparisons")
    assert sum(ts.pyiceberg_checks for ts in states) >= 10, "PyIceberg compared too few snapshots"
