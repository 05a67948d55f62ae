"""Two writer processes append to one table at once, 50 commits each: every commit lands."""
from __future__ import annotations

import subprocess
import threading

import pyarrow as pa

from skade_util import assert_same_rows, commit_log_rows, current_metadata, open_catalog, write_parquet

COMMITS = 50
TABLE = "db.events"


def _writer(skade, files, results):
    """One loop of sequential `skade append` processes; records (rc, stdout, stderr) of each."""
    for f in files:
        p = subprocess.run(
            [skade.binary, "--warehouse", str(skade.warehouse), "append", TABLE, str(f)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        results.append((str(f), p.returncode, p.stdout, p.stderr))


def test_two_processes_append_at_once(skade, warehouse, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", TABLE, "--schema", "id:long!, writer:string, n:int", "--partition", "writer")
    # writer a feeds CSV files, writer b Parquet files; every file has distinct ids
    files_a, files_b = [], []
    for k in range(COMMITS):
        fa = tmp_path / f"a{k:02}.csv"
        fa.write_text("id,writer,n\n" + "".join(f"{k * 10 + j},a,{k}\n" for j in range(3)))
        files_a.append(fa)
        tb = pa.table({"id": pa.array([100000 + k * 10 + j for j in range(2)], pa.int64()), "writer": ["b", "b"],
                       "n": pa.array([k, k], pa.int32())})
        files_b.append(write_parquet(tb, tmp_path / f"b{k:02}.parquet"))
    log_before = commit_log_rows(warehouse)

    res_a, res_b = [], []
    threads = [threading.Thread(target=_writer, args=(skade, files_a, res_a)),
               threading.Thread(target=_writer, args=(skade, files_b, res_b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    for f, rc, out, err in res_a + res_b:
        assert rc == 0, f"append {f}: rc={rc} stderr={err}"
        assert err.strip() == "", f"append {f} wrote to stderr: {err}"
        assert out.startswith("appended "), out
    assert len(res_a) == len(res_b) == COMMITS

    # 100 snapshots in one linear chain, none lost
    _, meta = current_metadata(warehouse, TABLE)
    snaps = meta["snapshots"]
    assert len(snaps) == 2 * COMMITS
    by_id = {s["snapshot-id"]: s for s in snaps}
    chain = []
    sid = meta["current-snapshot-id"]
    while sid is not None:
        chain.append(sid)
        sid = by_id[sid].get("parent-snapshot-id")
    assert len(chain) == 2 * COMMITS, "some snapshots are not ancestors of the current one"
    assert sorted(s["sequence-number"] for s in snaps) == list(range(1, 2 * COMMITS + 1))
    assert meta["last-sequence-number"] == 2 * COMMITS
    assert int(by_id[meta["current-snapshot-id"]]["summary"]["total-records"]) == COMMITS * 5
    assert len(skade.snapshots(TABLE)) == 2 * COMMITS

    # all rows of all 100 files
    expected = [{"id": k * 10 + j, "writer": "a", "n": k} for k in range(COMMITS) for j in range(3)]
    expected += [{"id": 100000 + k * 10 + j, "writer": "b", "n": k} for k in range(COMMITS) for j in range(2)]
    assert_same_rows(skade.rows(TABLE), expected, what="skade")
    assert_same_rows(open_catalog(warehouse).load_table(TABLE).scan().to_arrow(), expected, what="PyIceberg")

    # the commit log: one row per commit, commit_seq strictly increasing, every snapshot once
    # (rows of _skade.lineage_events, which each writer appends its lineage to, are not this table's)
    log = [r for r in commit_log_rows(warehouse)[len(log_before):] if r[1] != "_skade"]
    seqs = [r[0] for r in log]
    assert all(b > a for a, b in zip(seqs, seqs[1:]))
    commits = [r for r in log if r[3] == "commit"]
    assert len(commits) == 2 * COMMITS
    assert {r[4] for r in commits} == set(by_id)
    assert all(r[5] == "append" and r[6] == "skade" for r in commits)
    # the log's order is the commit order: each snapshot's parent committed just before it
    order = [r[4] for r in commits]
    assert order == list(reversed(chain))
    cli_log = skade.log("--table", TABLE)
    cli_seqs = [r["commit_seq"] for r in cli_log]
    assert cli_seqs == sorted(set(cli_seqs))
    assert [r["snapshot_id"] for r in cli_log if r["action"] == "commit"] == order

    # the two writers really raced: their commits interleave (a's add 3 rows, b's add 2)
    writers = "".join("a" if by_id[s]["summary"]["added-records"] == "3" else "b" for s in order)
    switches = sum(1 for x, y in zip(writers, writers[1:]) if x != y)
    print("commit order by writer:", writers)
    assert switches >= 5, f"writers did not overlap: {writers}"
