"""Fields inside structs as columns and in filters: `scan --columns o.i.x` outputs `o` cut
down to what was named (as PyIceberg's `selected_fields` does) and reads only the Parquet
columns of those fields, across renames, added and dropped struct fields; a struct, list or
map column takes `is null` / `is not null` in scans, deletes and changes."""
from __future__ import annotations

import json
import os

import pytest

from skade_util import assert_same_rows

TABLE = "db.nest"

# Three files: one before `o.z` was added and `o.y` renamed to `o.yy`, one after, and one
# after `o.i.w` was dropped. Nulls at every level.
FILES = [
    ['{"id": 1, "o": {"i": {"x": 1, "w": "a"}, "y": "p", "l": [1, 2]}, "m": {"k": 1}, "tags": ["t"]}',
     '{"id": 2, "o": null, "m": null, "tags": null}',
     '{"id": 3, "o": {"i": null, "y": null, "l": null}, "m": {}, "tags": []}',
     '{"id": 4, "o": {"i": {"x": null, "w": null}, "y": "q", "l": []}, "m": {"a": null}, "tags": [null]}'],
    ['{"id": 5, "o": {"i": {"x": 5, "w": "e"}, "yy": "p", "l": [5], "z": 50}, "m": {"k": 5}, "tags": ["u"]}',
     '{"id": 6, "o": {"i": null, "yy": null, "l": null, "z": null}, "m": null, "tags": null}'],
    ['{"id": 7, "o": {"i": {"x": 7}, "yy": "r", "l": null, "z": 70}, "m": {}, "tags": ["v", "w"]}',
     '{"id": 8, "o": null}'],
]
CHANGES = [("add-column", "o.z", "long", "rename-column", "o.y", "yy"), ("drop-column", "o.i.w")]


@pytest.fixture
def nest(skade, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", TABLE, "--schema",
             "id:long!, o:struct<i:struct<x:int,w:string>,y:string,l:list<int>>, m:map<string,long>, tags:list<string>")
    for n, lines in enumerate(FILES):
        if n:
            skade.ok("alter", TABLE, *CHANGES[n - 1])
        f = tmp_path / f"in{n}.jsonl"
        f.write_text("".join(line + "\n" for line in lines))
        skade.ok("append", TABLE, f)
    return TABLE


def decode_leaves(skade, tmp_path, *args, what="decode") -> dict[int, int]:
    """Parquet leaves each row group's decode tasks (or streams) read (SKADE_SCAN_TRACE), by unit."""
    trace = tmp_path / f"trace-{len(list(tmp_path.iterdir()))}.jsonl"
    rc, out, err = skade("scan", TABLE, *args, "--format", "none", env={**os.environ, "SKADE_SCAN_TRACE": str(trace)})
    assert rc == 0, err
    leaves: dict[int, int] = {}
    for line in trace.read_text().splitlines():
        span = json.loads(line)
        if span["what"] == what:
            leaves[span["unit"]] = leaves.get(span["unit"], 0) + span["columns"]
    return leaves


@pytest.mark.parametrize("columns", [
    "o.i.x", "o.yy,id", "id,o.i,o.z", "o.z", "o.l", "o,o.i.x", "m,o.i.x,tags", "o.i.x,o.yy,o.z,o.l",
])
def test_nested_columns_as_pyiceberg_selects_them(skade, catalog, nest, columns):
    names = columns.split(",")
    tops = list(dict.fromkeys(n.split(".")[0] for n in names))
    got = skade.rows(nest, "--columns", columns)
    assert got.column_names == tops  # in the order first named
    want = catalog().load_table(nest).scan(selected_fields=tuple(names)).to_arrow()
    assert sorted(want.column_names) == sorted(tops)
    assert got.num_rows == 8
    assert_same_rows(got, want, columns=tops, what=f"--columns {columns}")
    for top in tops:  # the same struct type, fields and order, as PyIceberg's
        assert got.schema.field(top).type.equals(want.schema.field(top).type, check_metadata=False), top


def test_nested_columns_read_only_the_named_leaves(skade, tmp_path, nest):
    # o is read as x, y, l in the first file and x, yy, l, z in the others: the dropped o.i.w,
    # which the first two files hold, is not read
    assert sorted(decode_leaves(skade, tmp_path, "--columns", "o").values()) == [3, 4, 4]
    assert sorted(decode_leaves(skade, tmp_path, "--columns", "o.i.x").values()) == [1, 1, 1]
    # the first file predates o.z: one of o's leaves is read there for o's own nulls
    assert sorted(decode_leaves(skade, tmp_path, "--columns", "o.z").values()) == [1, 1, 1]
    # a filter on another field of the same struct reads that field too, and only it
    assert sorted(decode_leaves(skade, tmp_path, "--columns", "o.i.x", "--where", "o.yy is null").values()) == [2, 2, 2]
    # a row group read a batch at a time (here: under --limit) reads the same leaves
    assert set(decode_leaves(skade, tmp_path, "--columns", "o.i.x", "--limit", "1", what="stream").values()) == {1}
    rows = skade.jsonl("scan", TABLE, "--columns", "o.i.x", "--limit", "2")
    assert len(rows) == 2 and all(r["o"] is None or list(r["o"]) == ["i"] for r in rows), rows


@pytest.mark.parametrize("columns, where", [
    ("o.i.x", "o.yy = 'p'"),
    ("id,o.z", "o.i.x > 1 or o.yy is null"),
    ("o.l", "o.i.x is not null"),
])
def test_nested_columns_with_a_filter_on_other_fields(skade, catalog, nest, columns, where):
    names = columns.split(",")
    tops = list(dict.fromkeys(n.split(".")[0] for n in names))
    got = skade.rows(nest, "--columns", columns, "--where", where)
    want = catalog().load_table(nest).scan(row_filter=where, selected_fields=tuple(names)).to_arrow()
    assert got.num_rows > 0
    assert_same_rows(got, want, columns=tops, what=f"--columns {columns} --where {where}")


def test_columns_named_twice_once_and_paths_that_are_not_columns(skade, nest):
    rows = skade.jsonl("scan", nest, "--columns", "id,o.i.x,id,o.i")
    assert [list(r) for r in rows] == [["id", "o"]] * 8
    assert {r["id"]: r["o"] for r in rows}[1] == {"i": {"x": 1}}
    for bad in ("o.nope", "tags.element", "m.key", "o.i.w", "o.y"):  # w was dropped, y renamed
        rc, out, err = skade("scan", nest, "--columns", f"id,{bad}")
        assert rc != 0 and out == ""
        assert f"unknown column '{bad}'" in err and "(columns: id, o, m, tags)" in err, err


PREDICATES = {
    "o is null": lambda r: r["o"] is None,
    "o is not null": lambda r: r["o"] is not None,
    "o.i is null": lambda r: r["o"] is None or r["o"]["i"] is None,
    "not (o.i is null)": lambda r: r["o"] is not None and r["o"]["i"] is not None,
    "o.i.x is null": lambda r: r["o"] is None or r["o"]["i"] is None or r["o"]["i"]["x"] is None,
    "o.l is null": lambda r: r["o"] is None or r["o"]["l"] is None,
    "tags is null": lambda r: r["tags"] is None,
    "m is not null": lambda r: r["m"] is not None,
    "o is null or tags is null": lambda r: r["o"] is None or r["tags"] is None,
    "o is not null and m is null": lambda r: r["o"] is not None and r["m"] is None,
}


def test_is_null_on_structs_lists_and_maps(skade, catalog, nest):
    rows = catalog().load_table(nest).scan().to_arrow().to_pylist()
    assert len(rows) == 8
    for where, pred in PREDICATES.items():
        got = skade.jsonl("scan", nest, "--columns", "id", "--where", where)
        want = sorted(r["id"] for r in rows if pred(r))
        assert sorted(r["id"] for r in got) == want, where
        assert 0 < len(want) < 8, where  # each predicate splits the rows
        if "tags" not in where and "m " not in where and "o.l" not in where:  # PyIceberg projects no list or map
            py = catalog().load_table(nest).scan(row_filter=where, selected_fields=("id",)).to_arrow()
            assert sorted(py.column("id").to_pylist()) == want, f"PyIceberg: {where}"
    for where in ("o = 1", "tags in ('t')", "m != 'x'"):
        rc, _, err = skade("scan", nest, "--where", where)
        assert rc != 0 and "takes only 'is null' and 'is not null'" in err, (where, err)


def test_delete_and_changes_by_struct_nulls(skade, catalog, nest):
    before = catalog().load_table(nest).scan().to_arrow().to_pylist()
    snap = skade.snapshots(nest)[-1]["snapshot_id"]
    skade.ok("delete", nest, "--where", "o.i is null or tags is null")
    want = [r for r in before if not (PREDICATES["o.i is null"](r) or r["tags"] is None)]
    assert sorted(r["id"] for r in want) == [1, 4, 5, 7]
    assert_same_rows(catalog().load_table(nest).scan().to_arrow(), want, what="PyIceberg after the delete")
    assert_same_rows(skade.rows(nest), want, what="skade after the delete")
    changes = skade.jsonl("changes", nest, "--from", snap, "--columns", "o.i.x,id,o.i.x")
    assert sorted((c["id"], json.dumps(c["o"]), c["_change_type"]) for c in changes) == [
        (2, "null", "DELETE"), (3, '{"i": null}', "DELETE"), (6, '{"i": null}', "DELETE"), (8, "null", "DELETE")]
    assert all(list(c)[:2] == ["o", "id"] for c in changes)


def test_fields_inside_lists_and_maps_evolve(skade, catalog, tmp_path):
    """A list's element and a map's value widen and become optional, structs inside them take
    added, renamed and dropped fields, as Iceberg allows; what cannot change is refused by name.
    Old files read with the new types, by skade and by PyIceberg."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.ev", "--schema",
             "id:long!, l:list<int>, m:map<string,float>, ls:list<struct<a:int,b:string>>, mv:map<int,struct<q:int>>")
    first = tmp_path / "a.jsonl"
    first.write_text('{"id": 1, "l": [1, null], "m": {"a": 1.5}, "ls": [{"a": 1, "b": "x"}, null], "mv": {"7": {"q": 3}}}\n')
    skade.ok("append", "db.ev", first)
    skade.ok("alter", "db.ev", "widen-column", "l.element", "long", "widen-column", "m.value", "double",
             "widen-column", "ls.element.a", "long", "add-column", "ls.element.c", "string",
             "rename-column", "ls.element.b", "bb", "add-column", "mv.value.r", "long")
    skade.ok("alter", "db.ev", "drop-column", "ls.element.a")
    assert "ls    list<struct<bb:string,c:string>>" in skade.ok("describe", "db.ev")
    second = tmp_path / "b.jsonl"
    second.write_text('{"id": 2, "l": [3000000000], "m": {"b": 1e300}, "ls": [{"bb": "y", "c": "z"}], '
                      '"mv": {"8": {"q": 4, "r": 5}}}\n')
    skade.ok("append", "db.ev", second)
    want = [
        {"id": 1, "l": [1, None], "m": [("a", 1.5)], "ls": [{"bb": "x", "c": None}, None], "mv": [(7, {"q": 3, "r": None})]},
        {"id": 2, "l": [3000000000], "m": [("b", 1e300)], "ls": [{"bb": "y", "c": "z"}], "mv": [(8, {"q": 4, "r": 5})]},
    ]
    assert_same_rows(skade.rows("db.ev"), want, what="skade")
    assert_same_rows(catalog().load_table("db.ev").scan().to_arrow(), want, what="PyIceberg")
    for change, message in [
        (("widen-column", "mv.key", "long"), "cannot change 'mv.key': a map's keys stay as they are"),
        (("set-optional", "mv.key"), "cannot change 'mv.key': a map's keys stay as they are"),
        (("add-column", "l.x", "int"), "'l' is a list: it holds only its element ('l.element'), so 'l.x' cannot be added"),
        (("widen-column", "l.elem", "long"), "so 'l.elem' cannot be changed"),
        (("rename-column", "l.element", "e"), "cannot rename 'l.element': a list holds only its element"),
        (("drop-column", "m.value"), "cannot drop 'm.value': a map holds only its key and value ('m.key', 'm.value')"),
        (("widen-column", "l.element", "int"), "cannot change 'l.element' from long to int"),
        (("add-column", "id.x", "int"), "no struct, list or map column holds 'id.x'"),
    ]:
        rc, _, err = skade("alter", "db.ev", *change)
        assert rc != 0 and message in err, (change, err)
    assert_same_rows(catalog().load_table("db.ev").scan().to_arrow(), want, what="PyIceberg after the refusals")
