"""Row filters on dictionary-encoded string columns (`skade scan --where`).

skade keeps a column chunk that is dictionary-encoded throughout as a dictionary while it
filters (each predicate is evaluated once per dictionary entry) and makes only the rows that
pass dense. These tests check the rows against a three-valued (SQL) oracle and against
PyIceberg's scan of the same table, on a table with several row groups, nulls, a row group
whose string column is all null (an empty dictionary), a chunk that falls back from
dictionary to plain pages midway (the dense path), and filters with every operator under
and/or/not, projecting the filter columns or not.
"""
from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq

from skade_util import assert_same_rows, current_metadata, local_path, pyiceberg_filter

T = "d.t"
GROUP_ROWS = 6000  # write.parquet.row-group-limit: four row groups in one file
ROWS = 4 * GROUP_ROWS
CATS = [f"c{k:02d}" for k in range(12)] + ["", "C00", "é-ü"]
NOTES = ["alpha", "bravo", "charlie", "delta", "echo"]
SCHEMA = pa.schema([("id", pa.int64(), False), ("cat", pa.string()), ("note", pa.string()),
                    ("v", pa.int32())])


def _rows(rng: random.Random) -> list[dict]:
    rows = []
    for i in range(ROWS):
        group = i // GROUP_ROWS
        if group == 1:
            cat = None  # the whole chunk null: a dictionary with no entries
        elif group == 2:
            cat = rng.choice(CATS[:2])  # two entries, no nulls
        else:
            cat = None if rng.random() < 0.15 else rng.choice(CATS)
        # note: few values, except in the second half of the first row group, where 3000
        # distinct 400-byte values outgrow the dictionary page (1 MiB) and the writer falls
        # back to plain pages: a mixed chunk, read dense.
        if group == 0 and i >= GROUP_ROWS // 2:
            note = f"unique {i:06d} " + "x" * 386
        else:
            note = None if rng.random() < 0.1 else rng.choice(NOTES)
        v = None if rng.random() < 0.1 else rng.randrange(-50, 50)
        rows.append({"id": i, "cat": cat, "note": note, "v": v})
    return rows


# --- filters: text (skade and PyIceberg parse the same) and a three-valued oracle ---------


def _cmp(op, a, b):
    if a is None:
        return None
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _lit(v):
    return str(v) if isinstance(v, int) else "'" + v.replace("'", "''") + "'"


def _atom(rng: random.Random, rows: list[dict]):
    col = rng.choice(["cat", "cat", "cat", "note", "v"])
    pool = {"cat": CATS + ["zz", "c05x"], "note": NOTES + ["unique 001234 " + "x" * 386, "b"],
            "v": [-60, -10, 0, 3, 49, 99]}[col]
    kind = rng.choice(["cmp", "cmp", "in", "notin", "null", "notnull", "between", "notbetween"] +
                      (["like", "notlike"] if col != "v" else []))
    if kind in ("like", "notlike"):  # a prefix of a value, `not like` unknown on a null as `like`
        word = rng.choice(pool)
        prefix = word[:rng.randint(0, len(word))]
        negated = kind == "notlike"
        text = f"{col} {'not like' if negated else 'like'} {_lit(prefix + '%')}"
        return text, lambda r: None if r[col] is None else r[col].startswith(prefix) != negated
    if kind in ("between", "notbetween"):
        lo, hi = sorted(rng.sample(pool, 2))
        negated = kind == "notbetween"
        text = f"{col} {'not between' if negated else 'between'} {_lit(lo)} and {_lit(hi)}"
        return text, lambda r: None if r[col] is None else (lo <= r[col] <= hi) != negated
    if kind == "null":
        return f"{col} is null", lambda r: r[col] is None
    if kind == "notnull":
        return f"{col} is not null", lambda r: r[col] is not None
    if kind in ("in", "notin"):
        vals = rng.sample(pool, rng.randint(1, 3))
        text = f"{col} {'in' if kind == 'in' else 'not in'} ({', '.join(map(_lit, vals))})"
        if kind == "in":
            return text, lambda r: None if r[col] is None else r[col] in vals
        return text, lambda r: None if r[col] is None else r[col] not in vals
    op = rng.choice(["=", "!=", "<", "<=", ">", ">="])
    val = rng.choice(pool)
    return f"{col} {op} {_lit(val)}", lambda r: _cmp(op, r[col], val)


def _filter(rng: random.Random, rows: list[dict], depth: int):
    kind = rng.choice(["atom"] if depth == 0 else ["atom", "and", "or", "not"])
    if kind == "atom":
        return _atom(rng, rows)
    if kind == "not":
        text, f = _filter(rng, rows, depth - 1)
        return f"not ({text})", lambda r: None if f(r) is None else not f(r)
    (ta, fa), (tb, fb) = _filter(rng, rows, depth - 1), _filter(rng, rows, depth - 1)
    decides = kind == "or"  # Kleene: one true decides an or, one false an and

    def kleene(r):
        a, b = fa(r), fb(r)
        if a is decides or b is decides:
            return decides
        return None if a is None or b is None else not decides
    return f"({ta}) {kind} ({tb})", kleene


def _table(skade, tmp_path) -> list[dict]:
    rows = _rows(random.Random(13))
    src = tmp_path / "src.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), src)
    skade.ok("create-namespace", "d")
    skade.ok("create", T, "--schema", "id:long!, cat:string, note:string, v:int",
             "--property", f"write.parquet.row-group-limit={GROUP_ROWS}")
    skade.ok("append", T, src)
    return rows


def _data_files(warehouse) -> list:
    _, meta = current_metadata(warehouse, T)
    return sorted((local_path(meta["location"]) / "data").rglob("*.parquet"))


def test_filters_on_dictionary_columns_match_oracle_and_pyiceberg(skade, catalog, warehouse, tmp_path):
    rows = _table(skade, tmp_path)
    # The shapes under test: several row groups, string chunks with a dictionary, an
    # all-null chunk, a chunk with more distinct bytes than a dictionary page holds.
    (f,) = _data_files(warehouse)
    md = pq.ParquetFile(f).metadata
    assert md.num_row_groups == 4
    names = [md.schema.column(c).name for c in range(md.num_columns)]
    cat, note = names.index("cat"), names.index("note")
    assert all(md.row_group(g).column(cat).has_dictionary_page for g in range(4))
    assert md.row_group(1).column(cat).statistics.null_count == GROUP_ROWS
    assert md.row_group(0).column(note).total_uncompressed_size > (1 << 20)

    tbl = catalog().load_table(T)
    rng = random.Random(2026)
    partial = 0
    for k in range(24):
        text, pred = _filter(rng, rows, 3 if k % 3 else 1)
        expected = [r for r in rows if pred(r) is True]
        partial += 0 < len(expected) < len(rows)
        got = skade.rows(T, "--where", text, tmpdir=tmp_path)
        assert got.schema.field("cat").type == pa.string(), text  # made dense, not a dictionary
        assert_same_rows(got, expected, what=f"skade --where {text}")
        # Filter columns not projected: they are only filtered on, never made dense.
        got = skade.rows(T, "--where", text, "--columns", "id,v", tmpdir=tmp_path)
        assert_same_rows(got, [{"id": r["id"], "v": r["v"]} for r in expected],
                         what=f"skade --columns id,v --where {text}")
        # PyIceberg 0.12 reads `x not in (...)` as true for a null x (two-valued), so it is
        # compared where the filter's columns are not null: there both logics agree.
        guarded = f"({pyiceberg_filter(text)}) and cat is not null and note is not null and v is not null"
        theirs = tbl.scan(row_filter=guarded).to_arrow()
        assert_same_rows(theirs, [r for r in expected if None not in r.values()],
                         what=f"PyIceberg row_filter {guarded}")
    assert partial >= 16
