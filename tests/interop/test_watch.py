"""`skade watch` in one process sees commits made by other processes (skade and PyIceberg).

The watcher blocks on inotify (no polling loop); lines must arrive promptly, once, in order.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time

import pyarrow as pa
import pyarrow.parquet as pq


def _start(skade, *args):
    proc = subprocess.Popen([skade.binary, "--warehouse", str(skade.warehouse), "watch", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.pending = b""  # bytes read from the pipe that do not yet end a line
    return proc


def _read_lines(proc, count, timeout=10.0):
    """Up to `count` JSON lines, reading the pipe's fd directly (no hidden buffering)."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    lines, deadline = [], time.monotonic() + timeout
    while len(lines) < count:
        while b"\n" in proc.pending and len(lines) < count:
            line, proc.pending = proc.pending.split(b"\n", 1)
            lines.append(json.loads(line))
        if len(lines) >= count or time.monotonic() >= deadline:
            break
        if sel.select(timeout=max(0.0, deadline - time.monotonic())):
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            proc.pending += chunk
    return lines


def _stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_watch_sees_commits_from_other_processes(skade, catalog, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!, v:string")
    watcher = _start(skade)
    try:
        time.sleep(0.5)  # let it set up its watch
        pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}), tmp_path / "a.parquet")
        started = time.monotonic()
        skade.ok("append", "db.t", str(tmp_path / "a.parquet"))
        first = _read_lines(watcher, 1)
        assert len(first) == 1, "no line from watch"
        assert first[0]["engine"] == "skade" and first[0]["operation"] == "append"
        assert time.monotonic() - started < 5
        table = catalog().load_table("db.t")
        table.append(pa.table({"id": pa.array([2], pa.int64()), "v": ["b"]}, schema=table.schema().as_arrow()))
        second = _read_lines(watcher, 1)
        assert len(second) == 1 and second[0]["engine"] == "external"
        assert second[0]["commit_seq"] > first[0]["commit_seq"]
        for i in range(5):
            skade.ok("append", "db.t", str(tmp_path / "a.parquet"))
        rest = _read_lines(watcher, 5)
        seqs = [first[0]["commit_seq"], second[0]["commit_seq"]] + [r["commit_seq"] for r in rest]
        assert seqs == sorted(seqs) and len(set(seqs)) == 7
        assert _read_lines(watcher, 1, timeout=0.5) == []  # nothing twice
    finally:
        _stop(watcher)


def test_watch_replays_and_prints_changes(skade, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!, v:string", "--identifier", "id")
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}), tmp_path / "a.parquet")
    skade.ok("append", "db.t", str(tmp_path / "a.parquet"))
    watcher = _start(skade, "db.t", "--from-seq", "1", "--changes")
    try:
        # A commit's change rows come first, then its commit line with the cursor.
        lines = _read_lines(watcher, 3)
        assert [l.get("_change_type") or l.get("action") for l in lines] == ["INSERT", "INSERT", "commit"]
        assert lines[2]["operation"] == "append" and lines[2]["cursor"].endswith(":%d" % lines[2]["snapshot_id"])
        pq.write_table(pa.table({"id": pa.array([2], pa.int64()), "v": ["c"]}), tmp_path / "u.parquet")
        skade.ok("upsert", "db.t", str(tmp_path / "u.parquet"))
        more = _read_lines(watcher, 3)
        assert more[2]["operation"] == "overwrite"
        assert sorted((r["_change_type"], r["v"]) for r in more[:2]) == [("DELETE", "b"), ("INSERT", "c")]
    finally:
        _stop(watcher)


def test_watch_bad_arguments(skade):
    rc, _, err = skade("watch", "--format", "csv")
    assert rc == 2 and "jsonl" in err
    rc, _, err = skade("watch", "nodot")
    assert rc == 2 and "namespace.name" in err


def test_watch_cursor_arguments(skade):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long")
    rc, _, err = skade("watch", "db.t", "--changes", "--from-cursor", "garbage")
    assert rc == 2 and "SEQ:SNAPSHOT" in err
    rc, _, err = skade("watch", "--from-cursor", "1:2")
    assert rc == 2 and "needs TABLE and --changes" in err
    rc, _, err = skade("watch", "db.t", "--changes", "--from-cursor", "1:2", "--from-seq", "3")
    assert rc == 1 and "excludes" in err
    rc, _, err = skade("watch", "db.t", "--changes", "--from-cursor", "0:12345", timeout=10)
    assert rc == 2 and "12345" in err and "history" in err
    rc, _, err = skade("watch", "db.nope", "--changes", timeout=10)
    assert rc == 2 and "db.nope" in err
