"""`like 'prefix%'`, `between` and `is [not] nan` in `skade scan --where`: rows against an oracle
and against PyIceberg's scan of the same filter text, on tables whose files are pruned by a
truncate partition, by an identity partition, and by column metrics; pruning shown by --stats."""
from __future__ import annotations

import math
import random
import re

import pyarrow as pa
import pyarrow.parquet as pq

from skade_util import assert_same_rows, pyiceberg_filter

WORDS = ["apple", "apricot", "ap", "banana", "band", "b", "åsa", "åsna", "", "a%b", "a_b", "zeta"]
SCHEMA = pa.schema([("id", pa.int64(), False), ("name", pa.string()), ("tag", pa.string()), ("x", pa.float64())])


def _rows(n: int, rng: random.Random) -> list[dict]:
    rows = []
    for i in range(n):
        name = None if rng.random() < 0.1 else rng.choice(WORDS) + (str(rng.randint(0, 9)) if rng.random() < 0.5 else "")
        x = rng.choice([None, math.nan, rng.uniform(-5, 5), rng.uniform(-5, 5)])
        rows.append({"id": i, "name": name, "tag": rng.choice(WORDS[:6]), "x": x})
    return rows


def _filters(rng: random.Random) -> list[tuple[str, object]]:
    """(filter text, row -> True/False/None) in SQL's three-valued logic; `is nan` is never unknown."""
    out = []
    for prefix in ["ap", "apr", "a", "", "b", "ban", "å", "ås", "zz", "apple1"]:
        lit = prefix.replace("'", "''")
        out.append((f"name like '{lit}%'", lambda r, p=prefix: None if r["name"] is None else r["name"].startswith(p)))
        out.append((f"name not like '{lit}%'",
                    lambda r, p=prefix: None if r["name"] is None else not r["name"].startswith(p)))
        out.append((f"tag like '{lit}%'", lambda r, p=prefix: r["tag"].startswith(p)))
    for lo, hi in [("ap", "b"), ("apple", "apple5"), ("å", "åz"), ("c", "d")]:
        out.append((f"name between '{lo}' and '{hi}'",
                    lambda r, lo=lo, hi=hi: None if r["name"] is None else lo <= r["name"] <= hi))
        out.append((f"name not between '{lo}' and '{hi}'",
                    lambda r, lo=lo, hi=hi: None if r["name"] is None else not lo <= r["name"] <= hi))
    out.append(("id between 100 and 199", lambda r: 100 <= r["id"] <= 199))
    # patterns beyond a prefix (skade's own: PyIceberg's parser takes prefixes only)
    for pattern, rx in [("%an%", r".*an.*"), ("a_r%", r"a.r.*"), ("_", r"."), ("%\\_%", r".*_.*"), ("ås_%", r"ås..*"),
                        ("%a", r".*a"), ("b%n_", r"b.*n.")]:
        full = re.compile(rx, re.S)
        out.append((f"name like '{pattern}'",
                    lambda r, f=full: None if r["name"] is None else bool(f.fullmatch(r["name"]))))
        out.append((f"name not like '{pattern}'",
                    lambda r, f=full: None if r["name"] is None else not f.fullmatch(r["name"])))
    nan = lambda r: r["x"] is not None and math.isnan(r["x"])  # noqa: E731
    out.append(("x is nan", nan))
    out.append(("x is not nan", lambda r: not nan(r)))
    out.append(("not (x is nan) and name like 'a%'",
                lambda r: None if r["name"] is None else not nan(r) and r["name"].startswith("a")))
    out.append(("x is nan or tag like 'ba%'", lambda r: nan(r) or r["tag"].startswith("ba")))
    rng.shuffle(out)
    return out


def _same(got: pa.Table, expected: list[dict], what: str):
    # NaN != NaN: compare x as text
    def norm(rows):
        return [{**r, "x": repr(r["x"])} for r in rows]
    assert_same_rows(pa.Table.from_pylist(norm(got.to_pylist())), norm(expected), what=what)


def _stats(skade, table, where) -> dict:
    err = skade.ok("scan", table, "--where", where, "--format", "none", "--stats")
    m = re.search(r"files (\d+) -> (\d+) \(partition pruned (\d+), metrics pruned (\d+)\)", err)
    assert m, err
    return dict(zip(("files", "planned", "partition_pruned", "metrics_pruned"), map(int, m.groups())))


def test_like_between_and_nan_filters_match_oracle_and_pyiceberg(skade, catalog, tmp_path):
    rng = random.Random(11)
    rows = _rows(4000, rng)
    skade.ok("create-namespace", "f")
    tables = {"f.by_prefix": ["--partition", "truncate(2, name)"], "f.by_tag": ["--partition", "tag"],
              "f.plain": []}
    for name, spec in tables.items():
        skade.ok("create", name, "--schema", "id:long!, name:string, tag:string, x:double", *spec)
    # The unpartitioned table gets its rows in name order over eight files, so each file's
    # bounds are narrow and metrics can prune.
    by_name = sorted(rows, key=lambda r: (r["name"] is None, r["name"] or ""))
    for k in range(8):
        part = by_name[k * 500:(k + 1) * 500]
        src = tmp_path / f"in{k}.parquet"
        pq.write_table(pa.Table.from_pylist(part, schema=SCHEMA), src)
        skade.ok("append", "f.plain", src)
        if k == 0:
            src = tmp_path / "all.parquet"
            pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), src)
            skade.ok("append", "f.by_prefix", src)
            skade.ok("append", "f.by_tag", src)

    partial = 0
    for text, pred in _filters(random.Random(3)):
        expected = [r for r in rows if pred(r) is True]
        partial += 0 < len(expected) < len(rows)
        for table in tables:
            _same(skade.rows(table, "--where", text, tmpdir=tmp_path), expected, f"skade {table} --where {text}")
        if "nan" in text or re.search(r"like '[^']*(_|%[^']|\\\\)", text):
            # PyIceberg's parser takes like patterns that are prefixes only. It reads `x is nan`
            # through pyarrow, which takes a row group's min/max (they leave NaN out) as proof
            # that no NaN is there, and it drops nulls for `is not nan`, which Iceberg's
            # reference evaluator keeps (a null is not NaN).
            continue
        pytext = pyiceberg_filter(text)
        theirs = catalog().load_table("f.by_prefix").scan(row_filter=pytext).to_arrow()
        _same(theirs, expected, f"PyIceberg {pytext}")
    assert partial >= 20

    # the files the filters rule out are not read
    assert _stats(skade, "f.by_prefix", "name like 'ban%'")["partition_pruned"] > 0
    assert _stats(skade, "f.by_prefix", "name like 'bana%'")["partition_pruned"] > 0  # longer than the width
    assert _stats(skade, "f.by_prefix", "name not like 'ap%'")["partition_pruned"] > 0  # the 'ap' partition
    assert _stats(skade, "f.by_tag", "tag like 'ba%'")["partition_pruned"] > 0
    plain = _stats(skade, "f.plain", "name like 'zeta%'")
    assert plain["metrics_pruned"] >= 6 and plain["planned"] <= 2, plain
    assert _stats(skade, "f.plain", "name not like '%'")["metrics_pruned"] >= 6  # every name starts with ''


def test_nan_counts_are_written_and_prune_files(skade, catalog, tmp_path):
    """Parquet's statistics leave NaN out, so skade counts NaNs per float field as it writes:
    nan_value_counts for each float leaf (nested ones too), read by PyIceberg, pruning `is nan`."""
    skade.ok("create-namespace", "n")
    skade.ok("create", "n.t", "--schema", "id:long!, x:double, f:float, xs:list<double>, s:struct<a:float, b:string>")
    nan = math.nan
    batches = [
        [{"id": 1, "x": 1.0, "f": 2.0, "xs": [1.0], "s": {"a": 1.0, "b": "p"}},
         {"id": 2, "x": None, "f": None, "xs": None, "s": None}],                       # no NaN at all
        [{"id": 3, "x": nan, "f": nan, "xs": [nan, 2.0, nan], "s": {"a": nan, "b": None}},
         {"id": 4, "x": nan, "f": 1.0, "xs": [], "s": {"a": None, "b": "q"}}],           # x only NaN
        [{"id": 5, "x": 0.5, "f": None, "xs": [nan], "s": None},
         {"id": 6, "x": nan, "f": nan, "xs": [None, 3.0], "s": {"a": 2.0, "b": None}}],
    ]
    schema = pa.schema([("id", pa.int64(), False), ("x", pa.float64()), ("f", pa.float32()),
                        ("xs", pa.list_(pa.float64())), ("s", pa.struct([("a", pa.float32()), ("b", pa.string())]))])
    for k, b in enumerate(batches):
        src = tmp_path / f"n{k}.parquet"
        pq.write_table(pa.Table.from_pylist(b, schema=schema), src)
        skade.ok("append", "n.t", src)
    ids = {f.name: f.field_id for f in catalog().load_table("n.t").schema().fields}
    element = catalog().load_table("n.t").schema().find_field("xs.element").field_id
    struct_a = catalog().load_table("n.t").schema().find_field("s.a").field_id

    def count(rows, get):
        return sum(1 for r in rows for v in get(r) if v is not None and math.isnan(v))

    files = list(catalog().load_table("n.t").scan().plan_files())
    assert len(files) == 3
    by_first_id = {}
    for task in files:
        ids_in = pq.read_table(task.file.file_path.removeprefix("file://"), columns=["id"])["id"].to_pylist()
        by_first_id[min(ids_in)] = dict(task.file.nan_value_counts)
    for b in batches:
        want = {ids["x"]: count(b, lambda r: [r["x"]]), ids["f"]: count(b, lambda r: [r["f"]]),
                element: count(b, lambda r: r["xs"] or []), struct_a: count(b, lambda r: [(r["s"] or {}).get("a")])}
        assert by_first_id[b[0]["id"]] == want, (b, by_first_id)

    nan_x = _stats(skade, "n.t", "x is nan")
    assert nan_x["metrics_pruned"] == 1 and nan_x["planned"] == 2, nan_x  # the file without NaN
    not_nan_x = _stats(skade, "n.t", "x is not nan")
    assert not_nan_x["metrics_pruned"] == 1, not_nan_x  # the file whose x is NaN in every row
    assert sorted(skade.rows("n.t", "--where", "x is nan", tmpdir=tmp_path)["id"].to_pylist()) == [3, 4, 6]
    assert sorted(skade.rows("n.t", "--where", "f is not nan", tmpdir=tmp_path)["id"].to_pylist()) == [1, 2, 4, 5]
    # compaction carries the counts into the file it writes
    skade.ok("compact", "n.t")
    (task,) = catalog().load_table("n.t").scan().plan_files()
    assert dict(task.file.nan_value_counts) == {ids["x"]: 3, ids["f"]: 2, element: 3, struct_a: 1}
