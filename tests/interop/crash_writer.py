"""The writer of test_crash_safety: mixed commits on one table through the skade CLI, forever.

Run by the test in its own process group and killed with SIGKILL at a random moment. It keeps
a model of the table's rows (a dict id -> (part, v, note)), starting from <state>/model.json
(the rows the test verified after the previous kill), and journals every operation:

* before running op k it atomically replaces <state>/pending.json with
  {"k", "desc", "before", "after"}: the rows before and after op k, by the model;
* after op k exits it appends one line to <state>/ops.jsonl (a single O_APPEND write) with its
  exit status, output, the table's commit count in skade_commit_log and its current snapshot.

Ids are unique by construction: appends and overwrites use fresh ids (round * 10**6 + ...),
upserts reuse existing ids (and sometimes add one fresh id), deletes only remove rows.
On a failed command (rc != 0 or anything on stderr) the writer stops with exit code 3.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

PARTS = ["p0", "p1", "p2", "p3"]


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skade", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--kind", choices=["part", "bucket", "flat"], required=True)
    ap.add_argument("--round", type=int, required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--seed", type=int, required=True)
    return ap.parse_args()


def write_atomic(path: Path, data: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def rows_list(model: dict) -> list:
    return sorted([i, p, v, n] for i, (p, v, n) in model.items())


def catalog_state(warehouse: str, table: str):
    """(number of 'commit' rows of the table in skade_commit_log, current snapshot id)."""
    ns, name = table.rsplit(".", 1)
    con = sqlite3.connect(f"file:{warehouse}/catalog.db?mode=ro", uri=True, timeout=60)
    try:
        (n,) = con.execute(
            "select count(*) from skade_commit_log where table_namespace=? and table_name=? "
            "and action='commit'", (ns, name)).fetchone()
        (loc,) = con.execute(
            "select metadata_location from iceberg_tables where table_namespace=? and table_name=?",
            (ns, name)).fetchone()
    finally:
        con.close()
    path = loc[len("file://"):] if loc.startswith("file://") else loc
    with open(path) as f:
        meta = json.load(f)
    return n, meta.get("current-snapshot-id")


class Writer:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.state = Path(a.state)
        self.inputs = self.state / "inputs"
        self.inputs.mkdir(parents=True, exist_ok=True)
        self.model = {r[0]: (r[1], r[2], r[3]) for r in json.loads((self.state / "model.json").read_text())}
        self.next_id = a.round * 1_000_000
        self.k = 0
        self.ops_fd = os.open(self.state / "ops.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    # --- data ---------------------------------------------------------------------------

    def fresh_rows(self, n, part=None):
        out = {}
        for _ in range(n):
            self.next_id += 1
            out[self.next_id] = (part or self.rng.choice(PARTS), self.rng.randrange(100),
                                 "n%x" % self.rng.getrandbits(24))
        return out

    def input_file(self, rows: dict, allow_null_note=True) -> str:
        """rows as a CSV or Parquet file (nulls only in Parquet: CSV has no null string)."""
        self.k_file = getattr(self, "k_file", 0) + 1
        if self.rng.random() < 0.5:
            p = self.inputs / f"in-{self.k}-{self.k_file}.csv"
            p.write_text("id,part,v,note\n" + "".join(f"{i},{pt},{v},{n}\n" for i, (pt, v, n) in rows.items()))
            return str(p)
        import pyarrow as pa
        import pyarrow.parquet as pq

        if allow_null_note:
            for i in list(rows):
                if self.rng.random() < 0.2:
                    rows[i] = (rows[i][0], rows[i][1], None)
        p = self.inputs / f"in-{self.k}-{self.k_file}.parquet"
        pq.write_table(pa.table({
            "id": pa.array(list(rows), pa.int64()),
            "part": pa.array([r[0] for r in rows.values()], pa.string()),
            "v": pa.array([r[1] for r in rows.values()], pa.int32()),
            "note": pa.array([r[2] for r in rows.values()], pa.string()),
        }), p)
        return str(p)

    def keys_file(self, ids) -> str:
        self.k_file = getattr(self, "k_file", 0) + 1
        if self.rng.random() < 0.5:
            p = self.inputs / f"keys-{self.k}-{self.k_file}.csv"
            p.write_text("id\n" + "".join(f"{i}\n" for i in ids))
            return str(p)
        import pyarrow as pa
        import pyarrow.parquet as pq

        p = self.inputs / f"keys-{self.k}-{self.k_file}.parquet"
        pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64())}), p)
        return str(p)

    def random_filter(self):
        """(skade filter text, the same predicate on (id, part, v, note))."""
        r = self.rng
        kind = r.randrange(5)
        if kind == 0:
            k = r.randrange(5, 40)
            return f"v < {k}", lambda i, p, v, n: v < k
        if kind == 1:
            x = r.choice(PARTS)
            return f"part = '{x}'", lambda i, p, v, n: p == x
        if kind == 2:
            k, x = r.randrange(40, 100), r.choice(PARTS)
            return f"v >= {k} and part = '{x}'", lambda i, p, v, n: v >= k and p == x
        if kind == 3:
            xs, k = r.sample(PARTS, 2), r.randrange(10, 60)
            return (f"part in ('{xs[0]}', '{xs[1]}') and v < {k}",
                    lambda i, p, v, n: p in xs and v < k)
        ids = r.sample(sorted(self.model), min(3, len(self.model))) if self.model else [1]
        k = r.randrange(90, 100)
        return (f"id in ({', '.join(map(str, ids))}) or v > {k}",
                lambda i, p, v, n: i in ids or v > k)

    # --- operations: (description, argv, model after) --------------------------------------

    def op_append(self):
        new = self.fresh_rows(self.rng.randint(1, 6))
        f = self.input_file(new)
        after = dict(self.model)
        after.update(new)
        return f"append {Path(f).name}", ["append", self.a.table, f], after

    def op_delete_where(self):
        text, pred = self.random_filter()
        after = {i: r for i, r in self.model.items() if not pred(i, *r)}
        return f"delete --where {text}", ["delete", self.a.table, "--where", text], after

    def op_delete_keys(self):
        have = sorted(self.model)
        ids = self.rng.sample(have, min(len(have), self.rng.randint(1, 4)))
        ids.append(self.a.round * 1_000_000 + 999_999)  # a key no row has
        f = self.keys_file(ids)
        after = {i: r for i, r in self.model.items() if i not in ids}
        return f"delete --keys {Path(f).name} {ids}", ["delete", self.a.table, "--keys", f], after

    def op_upsert(self):
        have = sorted(self.model)
        ids = self.rng.sample(have, min(len(have), self.rng.randint(1, 4)))
        rows = {}
        for i in ids:
            p, v, n = self.model[i]
            if self.rng.random() < 0.3:
                p = self.rng.choice(PARTS)  # moves the row to another partition
            rows[i] = (p, self.rng.randrange(100), "u%x" % self.rng.getrandbits(20))
        if self.rng.random() < 0.4 or not rows:
            rows.update(self.fresh_rows(1))
        f = self.input_file(rows)
        after = dict(self.model)
        after.update(rows)
        return f"upsert {Path(f).name} {sorted(rows)}", ["upsert", self.a.table, f], after

    def op_overwrite_where(self):
        x = self.rng.choice(PARTS)
        new = self.fresh_rows(self.rng.randint(1, 4), part=x)
        f = self.input_file(new)
        after = {i: r for i, r in self.model.items() if r[0] != x}
        after.update(new)
        return (f"overwrite --where part = '{x}' {Path(f).name}",
                ["overwrite", self.a.table, f, "--where", f"part = '{x}'"], after)

    def op_overwrite_dynamic(self):
        new = self.fresh_rows(self.rng.randint(2, 6))
        f = self.input_file(new)
        if self.a.kind == "flat":
            after = {}
        elif self.a.kind == "part":
            parts = {r[0] for r in new.values()}
            after = {i: r for i, r in self.model.items() if r[0] not in parts}
        else:  # bucket(4, id)
            from pyiceberg.transforms import BucketTransform
            from pyiceberg.types import LongType

            b = BucketTransform(4).transform(LongType())
            buckets = {b(i) for i in new}
            after = {i: r for i, r in self.model.items() if b(i) not in buckets}
        after.update(new)
        return f"overwrite (dynamic) {Path(f).name}", ["overwrite", self.a.table, f], after

    def op_compact(self):
        return "compact", ["compact", self.a.table], dict(self.model)

    def op_rewrite_manifests(self):
        return "rewrite-manifests", ["rewrite-manifests", self.a.table], dict(self.model)

    def op_expire(self):
        return "expire --retain-last 5", ["expire", self.a.table, "--retain-last", "5"], dict(self.model)

    OPS = [("op_append", 30), ("op_delete_where", 12), ("op_delete_keys", 10), ("op_upsert", 15),
           ("op_overwrite_where", 7), ("op_overwrite_dynamic", 3), ("op_compact", 8),
           ("op_rewrite_manifests", 6), ("op_expire", 9)]

    def pick(self):
        if len(self.model) < 8:
            return self.op_append  # keep some rows around to delete and upsert
        names, weights = zip(*self.OPS)
        return getattr(self, self.rng.choices(names, weights)[0])

    def run(self):
        while True:
            desc, argv, after = self.pick()()
            write_atomic(self.state / "pending.json", json.dumps(
                {"k": self.k, "desc": desc, "before": rows_list(self.model), "after": rows_list(after)}))
            p = subprocess.run([self.a.skade, "--warehouse", self.a.warehouse, *argv], capture_output=True, text=True)
            commits, snap = catalog_state(self.a.warehouse, self.a.table)
            rec = {"k": self.k, "desc": desc, "argv": argv, "rc": p.returncode, "out": p.stdout, "err": p.stderr,
                   "commits": commits, "snapshot": snap, "rows": rows_list(after)}
            os.write(self.ops_fd, (json.dumps(rec) + "\n").encode())
            if p.returncode != 0 or p.stderr.strip():
                sys.exit(3)
            self.model = after
            self.k += 1


if __name__ == "__main__":
    Writer(parse_args()).run()
