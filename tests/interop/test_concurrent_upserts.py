"""Two writer processes upsert overlapping keys of one table at once, 25 commits each: no error
reaches either writer, no update is lost (each key ends with the value of the last commit, in
commit order, that wrote it), no key is duplicated.

Writer W's n-th commit writes val 'W<n>' to a random 10 of the 30 shared keys (one of them twice
in the batch, the earlier copy 'W<n>-stale') and inserts a key of its own.

Also: an upsert lands while other processes keep appending rows it cannot conflict with."""
from __future__ import annotations

import random
import re
import subprocess
import threading
import time

import pyarrow as pa
import pytest

from skade_util import assert_same_rows, current_metadata, open_catalog, write_parquet

COMMITS = 25
KEYS = 30
T = "db.hot"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("grp", pa.string()),
                    pa.field("val", pa.string()), pa.field("n", pa.int32())])


class WriterErrors(AssertionError):
    """An upsert surfaced an error to its writer (the table itself was consistent)."""


def _row(id_, val, n):
    return {"id": id_, "grp": f"g{id_ % 3}", "val": val, "n": n}


def _batches(writer: str, seed: int):
    rng = random.Random(seed)
    out = []
    for n in range(COMMITS):
        keys = rng.sample(range(KEYS), 10)
        rows = [_row(k, f"{writer}{n}", n) for k in keys]
        rows.insert(rng.randrange(len(rows)), _row(keys[-1], f"{writer}{n}-stale", -1))  # earlier copy loses
        rows.append(_row(10_000 * (1 + "AB".index(writer)) + n, f"{writer}{n}", n))  # a key of its own
        out.append(rows)
    return out


def _writer(skade, files, results, spans):
    for f in files:
        t0 = time.monotonic()
        p = subprocess.run([skade.binary, "--warehouse", str(skade.warehouse), "upsert", T, str(f)],
                           capture_output=True, text=True, timeout=120)
        spans.append((t0, time.monotonic()))
        results.append((str(f), p.returncode, p.stdout, p.stderr))


@pytest.mark.parametrize("partition,equality", [
    pytest.param(None, False, id="unpartitioned_position_deletes"),
    pytest.param("grp", False, id="by_grp_position_deletes"),
    pytest.param(None, True, id="unpartitioned_equality_deletes_by_property"),
])
def test_two_processes_upsert_at_once(skade, warehouse, tmp_path, partition, equality):
    skade.ok("create-namespace", "db")
    args = ["create", T, "--schema", "id:long!, grp:string, val:string, n:int", "--identifier", "id"]
    if partition:
        args += ["--partition", partition]
    if equality:
        args += ["--property", "skade.write.upsert.equality-deletes=true"]
    skade.ok(*args)
    init = [_row(k, "init", 0) for k in range(KEYS)]
    skade.ok("append", T, write_parquet(pa.Table.from_pylist(init, schema=SCHEMA), tmp_path / "init.parquet"))

    batches = {"A": _batches("A", 1), "B": _batches("B", 2)}
    files = {w: [write_parquet(pa.Table.from_pylist(rows, schema=SCHEMA), tmp_path / f"{w}{n:02}.parquet")
                 for n, rows in enumerate(bs)] for w, bs in batches.items()}
    results = {"A": [], "B": []}
    spans = {"A": [], "B": []}
    threads = [threading.Thread(target=_writer, args=(skade, files[w], results[w], spans[w])) for w in "AB"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # each commit's snapshot and commit_seq; errors are checked last (WriterErrors), after the
    # table has been checked against the commits that did land
    commits = []  # (commit_seq, snapshot id, writer, n)
    errors = []
    for w in "AB":
        assert len(results[w]) == COMMITS
        for n, (f, rc, out, err) in enumerate(results[w]):
            if rc != 0 or err.strip():
                errors.append(f"upsert {f}: rc={rc} stderr={err.strip()}")
                continue
            m = re.search(r"snapshot (\d+), commit_seq (\d+)", out)
            assert m, out
            commits.append((int(m.group(2)), int(m.group(1)), w, n))
    commits.sort()
    assert len(commits) > COMMITS, errors

    # the commit order is the log's order, the snapshot sequence numbers' order, and one chain
    log = [r for r in skade.log("--table", T) if r["action"] == "commit"]
    assert [r["snapshot_id"] for r in log[1:]] == [c[1] for c in commits]
    assert [r["commit_seq"] for r in log[1:]] == [c[0] for c in commits]
    assert all(r["operation"] == "overwrite" and r["engine"] == "skade" for r in log[1:])
    _, meta = current_metadata(warehouse, T)
    by_id = {s["snapshot-id"]: s for s in meta["snapshots"]}
    assert len(by_id) == len(commits) + 1
    seqnums = [by_id[c[1]]["sequence-number"] for c in commits]
    assert seqnums == list(range(2, len(commits) + 2))
    chain, sid = [], meta["current-snapshot-id"]
    while sid is not None:
        chain.append(sid)
        sid = by_id[sid].get("parent-snapshot-id")
    assert list(reversed(chain))[1:] == [c[1] for c in commits]

    # the expected table: the batches applied in commit order, last row of a key winning
    final = {r["id"]: r for r in init}
    for _seq, _sid, w, n in commits:
        for r in batches[w][n]:
            final[r["id"]] = r
    got = skade.rows(T)
    ids = got.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "duplicate keys: " + str(sorted(i for i in set(ids) if ids.count(i) > 1))
    assert_same_rows(got, list(final.values()), what="skade after concurrent upserts")
    assert not any(v.endswith("-stale") for v in got.column("val").to_pylist())
    if not equality:  # position deletes only: PyIceberg reads it too
        assert_same_rows(open_catalog(warehouse).load_table(T).scan().to_arrow(), list(final.values()),
                         what="PyIceberg after concurrent upserts")

    # the writers really raced: many upserts ran while one of the other writer's was running (the
    # commit order may still be lopsided: a writer that loses a race recomputes and tries again)
    print("commit order by writer:", "".join(c[2] for c in commits))
    overlapping = sum(1 for w, o in ("AB", "BA") for a0, a1 in spans[w]
                      if any(b0 < a1 and a0 < b1 for b0, b1 in spans[o]))
    assert overlapping >= COMMITS // 2, f"writers did not overlap: {overlapping} of {2 * COMMITS} upserts"
    if errors:
        raise WriterErrors(f"{len(errors)} of {2 * COMMITS} upserts failed; first: {errors[0]}")


class UpsertGaveUp(AssertionError):
    """The upsert gave up on a conflict with the concurrent appends."""


def test_upsert_lands_under_a_stream_of_unrelated_appends(skade, warehouse, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", T, "--schema", "id:long!, grp:string, val:string, n:int", "--identifier", "id",
             "--partition", "grp", "--property", "write.target-file-size-bytes=20000")
    # a table big enough that reading it (an upsert reads every live file for its keys' rows)
    # takes many times as long as one append
    n_big = 200_000
    big = pa.table({"id": pa.array(range(n_big), pa.int64()), "grp": pa.array(["g0", "g1"] * (n_big // 2)),
                    "val": pa.array(["init"] * n_big), "n": pa.array([0] * n_big, pa.int32())}, schema=SCHEMA)
    skade.ok("append", T, write_parquet(big, tmp_path / "big.parquet"))
    ups = [_row(k, "U", 1) for k in range(0, n_big, 7001)]  # keys across every file
    up_file = write_parquet(pa.Table.from_pylist(ups, schema=SCHEMA), tmp_path / "ups.parquet")
    # appends of new keys to a partition the upsert does not touch
    stop = threading.Event()
    appended, append_errors = [], []

    def appender(w):
        n = 0
        while not stop.is_set() and n < 500:
            f = write_parquet(pa.Table.from_pylist([{"id": 10**7 * (w + 1) + n, "grp": "other", "val": "B", "n": n}],
                                                   schema=SCHEMA), tmp_path / f"app{w}-{n}.parquet")
            p = subprocess.run([skade.binary, "--warehouse", str(skade.warehouse), "append", T, str(f)],
                               capture_output=True, text=True, timeout=120)
            (appended if p.returncode == 0 else append_errors).append((n, p.stderr))
            n += 1
            time.sleep(0.02)  # a steady stream, with CPU left for the upsert

    threads = [threading.Thread(target=appender, args=(w,)) for w in range(2)]
    for th in threads:
        th.start()
    try:
        time.sleep(0.3)
        # the upsert yields the CPU to the appenders when both want it, so appends keep landing
        p = subprocess.run(["nice", "-n", "10", skade.binary, "--warehouse", str(skade.warehouse), "upsert", T,
                            str(up_file)], capture_output=True, text=True, timeout=300)
        rc, out, err = p.returncode, p.stdout, p.stderr
    finally:
        stop.set()
        for th in threads:
            th.join()
    assert not append_errors, append_errors[:3]
    if rc == 2 and "by a concurrent commit" in err:
        raise UpsertGaveUp(f"upsert while {len(appended)} appends landed: rc={rc} stderr={err}")
    assert rc == 0, f"upsert: rc={rc} stderr={err}"
    got = skade.rows(T, "--where", "val = 'U'")
    assert sorted(got.column("id").to_pylist()) == [r["id"] for r in ups]
