"""A ChangeStream consumer (`skade watch TABLE --changes`) killed with SIGKILL at random
moments while other processes keep committing (skade and PyIceberg), and resumed from the cursor of the last
commit line it printed, sees every change exactly once and in order: the same changes
`skade changes` reads over the whole range.
"""
from __future__ import annotations

import json
import os
import random
import re
import selectors
import signal
import subprocess
import threading
import time
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq


def _parquet(path, ids, tag):
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}{i}" for i in ids]}), path)
    return str(path)


def _consume(skade, cursor, seconds):
    """Runs the consumer from `cursor` for `seconds`, then SIGKILLs it. Returns the commits
    it completed: (snapshot_id, cursor, rows) for each commit line, in order."""
    proc = subprocess.Popen([skade.binary, "--warehouse", str(skade.warehouse), "watch", "db.t",
                             "--changes", "--from-cursor", cursor],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf, rows, commits = b"", [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            obj = json.loads(line)
            if "_change_type" in obj:
                rows.append(obj)
            else:  # the commit line closes its rows
                commits.append((obj["snapshot_id"], obj["cursor"], rows))
                rows = []
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    err = proc.stderr.read().decode()
    assert "error" not in err.lower(), err
    return commits  # rows after the last commit line are lost with the process, as a crash would


def _key(row):
    return (row["_change_type"], row["id"], row["v"])


def test_killed_consumer_resumes_exactly_once_in_order(skade, catalog, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!, v:string", "--identifier", "id")
    out = skade.ok("append", "db.t", _parquet(tmp_path / "s.parquet", [1, 2, 3], "s"))
    snap, seq = re.search(r"snapshot (-?\d+), commit_seq (\d+)", out).groups()
    start = f"{seq}:{snap}"

    rng = random.Random(42)  # the writer's; the consumer's timing has its own
    chaos = random.Random(7)
    done = threading.Event()
    killed = threading.Semaphore(0)  # a release per consumer killed

    def writer():
        table = catalog().load_table("db.t")
        for i in range(40):
            if i % 5 == 4:  # the consumer dies at least once per 5 commits, however fast these are
                killed.acquire(timeout=30)
            kind = rng.choice(["append", "append", "upsert", "delete", "pyiceberg"])
            f = tmp_path / f"w{i}.parquet"
            if kind == "pyiceberg":  # another engine through the same catalog
                table.refresh()
                ids = [rng.randrange(100, 200) for _ in range(2)]
                table.append(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"p{i}-{x}" for x in ids]},
                                      schema=table.schema().as_arrow()))
            elif kind == "append":
                skade.ok("append", "db.t", _parquet(f, [rng.randrange(100) for _ in range(3)], f"a{i}-"))
            elif kind == "upsert":
                skade.ok("upsert", "db.t", _parquet(f, sorted({rng.randrange(30) for _ in range(3)}), f"u{i}-"))
            else:
                skade.ok("delete", "db.t", "--where", f"id < {rng.randrange(20)}")
        done.set()

    t = threading.Thread(target=writer)
    t.start()
    cursor, delivered, kills = start, defaultdict(list), 0
    order = []
    try:
        while True:
            finished = done.is_set()
            commits = _consume(skade, cursor, 2.0 if finished else chaos.uniform(0.05, 0.8))
            kills += 1
            killed.release()
            for snapshot_id, c, rows in commits:
                assert snapshot_id not in delivered, f"snapshot {snapshot_id} delivered twice"
                order.append(snapshot_id)
                delivered[snapshot_id] = sorted(_key(r) for r in rows)
                cursor = c
            if finished and not commits:
                break
    finally:
        t.join()
    assert kills > 5

    expected = defaultdict(list)
    expected_order = []
    for line in skade.ok("changes", "db.t", "--from", snap, "--format", "jsonl").splitlines():
        row = json.loads(line)
        sid = row["_commit_snapshot_id"]
        if not expected_order or expected_order[-1] != sid:
            expected_order.append(sid)
        expected[sid].append(_key(row))
    assert len(expected_order) >= 25, expected_order
    # Every snapshot with changes came once, in commit order, with exactly its rows.
    assert [s for s in order if delivered[s]] == expected_order
    assert {s: r for s, r in delivered.items() if r} == {s: sorted(r) for s, r in expected.items()}
