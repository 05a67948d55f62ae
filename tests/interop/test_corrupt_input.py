"""Bad input gets exit 2 (1 for bad usage) and a one-line message naming what was wrong;
nothing is written and nothing committed."""
from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from skade_util import catalog_row, commit_log_rows, current_metadata, local_path, tree_listing, write_parquet

TABLE = "db.t"


@pytest.fixture
def table(skade, warehouse, tmp_path):
    """db.t with two snapshots of data, partitioned so there are several files."""
    skade.ok("create-namespace", "db")
    skade.ok("create", TABLE, "--schema", "id:long!, name:string, amount:double, day:date", "--partition", "bucket(2,id)")
    for k in range(2):
        data = pa.table(
            {
                "id": pa.array(range(100 * k, 100 * k + 50), pa.int64()),
                "name": [f"n{i}" for i in range(50)],
                "amount": [i * 0.5 for i in range(50)],
                "day": pa.array([19000 + i for i in range(50)], pa.date32()),
            }
        )
        skade.ok("append", TABLE, write_parquet(data, tmp_path / f"in{k}.parquet"))
    return TABLE


def _files(warehouse):
    _, meta = current_metadata(warehouse, TABLE)
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    import fastavro

    ml = local_path(snap["manifest-list"])
    with open(ml, "rb") as fh:
        manifests = [local_path(m["manifest_path"]) for m in fastavro.reader(fh)]
    with open(manifests[0], "rb") as fh:
        data = [local_path(e["data_file"]["file_path"]) for e in fastavro.reader(fh)]
    meta_path = local_path(catalog_row(warehouse, TABLE)[0])
    return {"metadata": meta_path, "manifest-list": ml, "manifest": manifests[0], "parquet": data[0]}


def _truncate(p: Path):
    b = p.read_bytes()
    p.write_bytes(b[: len(b) // 2])


def _garble(p: Path):
    """Overwrite bytes in the middle of the file with deterministic noise (length unchanged)."""
    b = bytearray(p.read_bytes())
    rng = random.Random(1234)
    lo, hi = len(b) // 4, 3 * len(b) // 4
    for i in range(lo, hi):
        b[i] = rng.randrange(256)
    p.write_bytes(bytes(b))


def _garble_tail(p: Path):
    """Noise over the last third (Avro data blocks; the Parquet footer)."""
    b = bytearray(p.read_bytes())
    rng = random.Random(4321)
    for i in range(2 * len(b) // 3, len(b) - 1):
        b[i] = rng.randrange(256)
    p.write_bytes(bytes(b))


def _empty(p: Path):
    p.write_bytes(b"")


def _garble_head(p: Path):
    """XOR the bytes right after the leading magic: a Parquet file's first page header."""
    b = bytearray(p.read_bytes())
    for i in range(4, min(200, len(b) - 8)):
        b[i] ^= 0x5A
    p.write_bytes(bytes(b))


def _assert_clean_failure(rc, out, err, rc_want, names):
    assert rc == rc_want, f"rc={rc}, stdout={out!r}, stderr={err!r}"
    assert rc >= 0, f"killed by signal {-rc}"
    msg = err.rstrip("\n")
    assert msg, "no message on stderr"
    assert "\n" not in msg, f"message is not one line: {err!r}"
    assert msg.isprintable(), f"message has control characters: {err!r}"
    for bad in ("terminate", "Traceback", "Aborted", "what():", "core dumped", "Segmentation"):
        assert bad not in err, err
    assert any(n in msg for n in names), f"message does not name {names}: {msg!r}"


def _state(warehouse):
    return catalog_row(warehouse, TABLE), commit_log_rows(warehouse), tree_listing(warehouse / "db.db")


CORRUPTIONS = {
    "truncated": _truncate,
    "garbled": _garble,
    "garbled-tail": _garble_tail,
    "empty": _empty,
    "garbled-head": _garble_head,
}
# Middle-of-file noise lands in the Avro header's schema and the JSON; for Parquet the head
# (page headers) and the tail (footer) are the interesting places.
CASES = [
    (target, how)
    for target in ("metadata", "manifest-list", "manifest", "parquet")
    for how in CORRUPTIONS
    if (how == "garbled-head") == (target == "parquet") or how in ("truncated", "empty", "garbled-tail")
]


def _case_params():
    out = []
    for target, how in CASES:
        out.append(pytest.param(target, how, id=f"{target}-{how}"))
    return out


@pytest.mark.parametrize("target,how", _case_params())
def test_scan_of_corrupt_file(skade, warehouse, table, target, how):
    path = _files(warehouse)[target]
    CORRUPTIONS[how](path)
    before = _state(warehouse)
    rc, out, err = skade("scan", table)
    _assert_clean_failure(rc, out, err, 2, [str(path), path.name])
    assert _state(warehouse) == before, "scan of a corrupt table changed the warehouse"
    # a filtered, projected scan hits the same file (metadata, manifest list, manifest always;
    # the data file when its rows are wanted)
    rc, out, err = skade("scan", table, "--columns", "id", "--where", "id >= 0", "--format", "none")
    _assert_clean_failure(rc, out, err, 2, [str(path), path.name])
    assert _state(warehouse) == before


@pytest.mark.parametrize("target", ["metadata", "manifest-list"])
@pytest.mark.parametrize("how", ["truncated", "garbled"])
def test_append_to_corrupt_table_commits_nothing(skade, warehouse, table, tmp_path, target, how):
    """An append must read the current metadata and manifest list; it fails and commits nothing."""
    path = _files(warehouse)[target]
    CORRUPTIONS[how](path)
    row, log, _ = _state(warehouse)
    f = write_parquet(pa.table({"id": pa.array([999], pa.int64())}), tmp_path / "more.parquet")
    rc, out, err = skade("append", table, f)
    _assert_clean_failure(rc, out, err, 2, [str(path), path.name])
    assert catalog_row(warehouse, TABLE) == row
    assert commit_log_rows(warehouse) == log


def test_other_commands_on_corrupt_metadata(skade, warehouse, table):
    path = _files(warehouse)["metadata"]
    _garble(path)
    for args in (["describe", table], ["snapshots", table], ["scan", table, "--snapshot", "1"]):
        rc, out, err = skade(*args)
        _assert_clean_failure(rc, out, err, 2, [str(path), path.name])
    # the rest of the warehouse still works
    assert skade.jsonl("tables") == [{"table": TABLE}]


# --- CLI usage -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["scan", TABLE, "--bogus"],
        ["scan"],
        ["scan", TABLE, "--limit"],
        ["scan", TABLE, "--limit", "x"],
        ["scan", TABLE, "--snapshot", "1", "--as-of", "2024-01-01"],
        ["create", "db.x"],
        ["append", TABLE],
        ["frobnicate"],
        [],
        ["--no-such-global", "tables"],
    ],
    ids=lambda a: " ".join(a) or "no-command",
)
def test_usage_errors_exit_1(skade, table, warehouse, args):
    before = _state(warehouse)
    rc, out, err = skade(*args)
    assert rc == 1, (rc, out, err)
    assert err.strip(), "no message"
    assert "terminate" not in err and "Traceback" not in err
    assert _state(warehouse) == before


# --- bad append input ------------------------------------------------------------------------


def _snapshot_count(skade):
    return len(skade.snapshots(TABLE))


def _append_fails(skade, warehouse, table, path, names, contains=()):
    n = _snapshot_count(skade)
    row, log, _ = _state(warehouse)
    rc, out, err = skade("append", table, path)
    _assert_clean_failure(rc, out, err, 2, names)
    for c in contains:
        assert c in err, f"{c!r} not in {err!r}"
    assert _snapshot_count(skade) == n
    assert catalog_row(warehouse, TABLE) == row
    assert commit_log_rows(warehouse) == log
    return err


def test_csv_value_that_does_not_fit_names_column_and_row(skade, warehouse, table, tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("id,name,amount,day\n1,a,1.5,2024-01-01\n2,b,2.5,2024-01-02\nxx,c,3.5,2024-01-03\n")
    err = _append_fails(skade, warehouse, table, f, [f.name])
    assert "'id'" in err or '"id"' in err or "column id" in err, err
    assert "row 3" in err or "line 4" in err, err


def test_upsert_and_overwrite_word_a_bad_value_as_append_does(skade, warehouse, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", TABLE, "--schema", "id:long!, v:int", "--identifier", "id")
    f = tmp_path / "bad.csv"
    f.write_text("id,v\n1,2\n2,x\n")
    n, state = _snapshot_count(skade), _state(warehouse)[:2]
    want = f"skade: error: {f}: column 'v' row 2: value x does not fit type int"
    for command in ("append", "upsert", "overwrite"):
        rc, out, err = skade(command, TABLE, f)
        _assert_clean_failure(rc, out, err, 2, [str(f)])
        assert err.startswith(want), (command, err)
    assert _snapshot_count(skade) == n and _state(warehouse)[:2] == state


def test_csv_int_overflow_and_bad_date(skade, warehouse, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", TABLE, "--schema", "id:long!, small:int, day:date")
    f = tmp_path / "over.csv"
    f.write_text("id,small,day\n1,5,2024-01-01\n2,3000000000,2024-01-02\n")
    _append_fails(skade, warehouse, TABLE, f, [f.name], contains=["small"])
    f = tmp_path / "date.csv"
    f.write_text("id,small,day\n1,5,2024-01-01\n2,6,2024-13-45\n")
    _append_fails(skade, warehouse, TABLE, f, [f.name], contains=["day"])


def test_number_too_large_for_a_float_is_refused(skade, warehouse, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", TABLE, "--schema", "id:long!, f:float, d:double")
    for cells, column, value in (("1,1e39,1", "f", "1e39"), ("1,1,1e309", "d", "1e309")):
        f = tmp_path / f"big-{column}.csv"
        f.write_text(f"id,f,d\n0,1,1\n{cells}\n")
        _append_fails(skade, warehouse, TABLE, f, [f.name, f"column '{column}' row 2: value {value} does not fit"])
        j = tmp_path / f"big-{column}.jsonl"
        j.write_text(f'{{"id": 0, "f": 1, "d": 1}}\n\n{{"id": 1, "{column}": {value}}}\n')
        _append_fails(skade, warehouse, TABLE, j, [j.name, f"column '{column}' row 2: a number too large"])
    # JSON lines: too large for a double anywhere, in a list, or in a column that is no float at all
    skade.ok("create", "db.w", "--schema", "id:long!, xs:list<double>, s:string")
    for line, message in (('{"id": 1, "xs": [1, 2e400]}', "column 'xs' row 2: a number too large for type double (2e400)"),
                          ('{"id": 1e400}', "column 'id' row 2: a number too large for type long (1e400)"),
                          ('{"id": 1, "s": -1e999}', "column 's' row 2: a number too large for type string (-1e999)")):
        j = tmp_path / "big.jsonl"
        j.write_text('{"id": 0, "xs": [], "s": "a"}\n' + line + "\n")
        _append_fails(skade, warehouse, "db.w", j, [j.name, message])


def test_csv_null_in_required_column(skade, warehouse, table, tmp_path):
    f = tmp_path / "nulls.csv"
    f.write_text("id,name\n1,a\n,b\n")
    _append_fails(skade, warehouse, table, f, [f.name], contains=["'id'", "row 2"])


def test_input_column_not_in_table(skade, warehouse, table, tmp_path):
    f = tmp_path / "extra.csv"
    f.write_text("id,nmae\n1,a\n")
    _append_fails(skade, warehouse, table, f, [f.name], contains=["nmae", "id, name, amount, day"])


def test_unknown_extension(skade, warehouse, table, tmp_path):
    f = tmp_path / "data.txt"
    f.write_text("id,name\n1,a\n")
    _append_fails(skade, warehouse, table, f, [f.name])


@pytest.mark.parametrize("how", ["truncated", "garbled-tail", "not-parquet"])
def test_corrupt_parquet_input(skade, warehouse, table, tmp_path, how):
    f = write_parquet(pa.table({"id": pa.array(range(1000), pa.int64())}), tmp_path / "in.parquet")
    if how == "not-parquet":
        f.write_text("id\n1\n")
    else:
        CORRUPTIONS[how](f)
    _append_fails(skade, warehouse, table, f, [f.name])


def test_missing_input_file_commits_nothing_even_after_good_ones(skade, warehouse, table, tmp_path):
    good = write_parquet(pa.table({"id": pa.array([7001], pa.int64())}), tmp_path / "good.parquet")
    n = _snapshot_count(skade)
    rc, out, err = skade("append", table, good, tmp_path / "missing.csv")
    _assert_clean_failure(rc, out, err, 2, ["missing.csv"])
    assert _snapshot_count(skade) == n
    assert skade.ok("scan", table, "--where", "id = 7001", "--format", "none").startswith("0 rows")


def test_corrupt_jsonl_input(skade, warehouse, table, tmp_path):
    """A row that is not JSON is named by its row (counted from 1, blank lines skipped, as other
    input errors count them) with the parser's reason and its start; in a JSON array document too."""
    cases = [
        ("cut.jsonl", '{"id": 1, "name": "a"}\n{"id": 2, "name": \n', 'row 2 is not valid JSON', '{"id": 2, "name":'),
        ("blank.jsonl", '\n\n{"id": 1}\n\n{"id": 2} x\n', "row 2 is not valid JSON (Invalid value.)", '{"id": 2} x'),
        ("comma.json", '[{"id": 1},\n {"id": 2,}]', "row 2 is not valid JSON (Missing a name for object member.)",
         '{"id": 2,}'),
        ("text.jsonl", "# notes\nnot json\n", "row 1 is not valid JSON (Invalid value.)", "# notes"),
    ]
    for name, text, why, start in cases:
        f = tmp_path / name
        f.write_text(text)
        _append_fails(skade, warehouse, table, f, [f.name, why, start])


def test_jsonl_value_of_the_wrong_kind_names_column_and_type(skade, warehouse, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", TABLE, "--schema", "id:long!, price:decimal(10,2), ts:timestamptz, tags:list<string>")
    cases = [
        ("epoch", '{"id": 1, "ts": "2024-01-01T00:00:00Z"}\n{"id": 2, "ts": 1700000000}\n',
         ["column 'ts' holds a JSON number where a string is expected", "timestamptz"]),
        ("tags", '{"id": 1, "tags": "a,b"}\n', ["column 'tags'", "where an array is expected"]),
        ("text", '{"id": 1, "price": "1.00"}\n\n{"id": 2, "price": 3}\n{"id": 3, "price": "1.2.3"}\n',
         ["column 'price' row 3: value 1.2.3 does not fit", "decimal(10,2)"]),
        ("fraction", '{"id": 1}\n{"id": 2.5}\n', ["column 'id' row 2: value 2.5 does not fit type long"]),
        ("scale", '{"id": 1, "price": 2}\n{"id": 2, "price": 1.234}\n',
         ["column 'price' row 2", "value 1.234 does not fit", "decimal(10,2)"]),
    ]
    for name, text, words in cases:
        f = tmp_path / f"{name}.jsonl"
        f.write_text(text)
        _append_fails(skade, warehouse, TABLE, f, [f.name, *words])


# --- bad specs, filters, names ---------------------------------------------------------------


def _fails(skade, args, contains):
    rc, out, err = skade(*args)
    _assert_clean_failure(rc, out, err, 2, [contains[0]])
    for c in contains[1:]:
        assert c in err, f"{c!r} not in {err!r}"
    return err


def test_bad_schema_specs(skade, warehouse):
    skade.ok("create-namespace", "db")
    _fails(skade, ["create", "db.x", "--schema", "id:lung"], ["lung", "schema"])
    _fails(skade, ["create", "db.x", "--schema", "id long"], ["schema", "':'"])
    _fails(skade, ["create", "db.x", "--schema", "a:int, a:long"], ["'a'"])
    _fails(skade, ["create", "db.x", "--schema", "d:decimal(50,2)"], ["decimal", "schema"])
    _fails(skade, ["create", "db.x", "--schema", "l:list<string"], ["schema"])
    _fails(skade, ["create", "db.x", "--schema", ""], ["schema"])
    assert skade.jsonl("tables") == []


def test_bad_partition_specs(skade, warehouse):
    skade.ok("create-namespace", "db")
    s = "id:long!, name:string, ts:timestamptz"
    _fails(skade, ["create", "db.x", "--schema", s, "--partition", "day(nope)"], ["nope", "id, name, ts"])
    _fails(skade, ["create", "db.x", "--schema", s, "--partition", "nope"], ["nope", "id, name, ts"])
    _fails(skade, ["create", "db.x", "--schema", s, "--partition", "foo(id)"], ["foo"])
    _fails(skade, ["create", "db.x", "--schema", s, "--partition", "day(id)"], ["day", "id"])
    _fails(skade, ["create", "db.x", "--schema", s, "--partition", "bucket(x,id)"], ["bucket"])
    _fails(skade, ["create", "db.x", "--schema", s, "--partition", "bucket(0,id)"], ["bucket"])
    assert skade.jsonl("tables") == []
    rows = sqlite3.connect(warehouse / "catalog.db").execute("select count(*) from iceberg_tables").fetchone()
    assert rows == (0,)


def test_bad_where_and_names(skade, warehouse, table):
    _fails(skade, ["scan", table, "--where", "nope = 1"], ["nope", "id, name, amount, day"])
    _fails(skade, ["scan", table, "--where", "id = "], ["position"])
    _fails(skade, ["scan", table, "--where", "id = 'abc'"], ["abc", "id"])
    _fails(skade, ["scan", table, "--where", "day = '2024-13-01'"], ["2024-13-01"])
    _fails(skade, ["scan", table, "--columns", "id,zz"], ["zz", "id, name, amount, day"])
    _fails(skade, ["scan", "db.nope"], ["db.nope"])
    _fails(skade, ["scan", "nodot"], ["nodot"])
    _fails(skade, ["describe", "db.nope"], ["db.nope"])
    _fails(skade, ["drop", "db.nope"], ["db.nope"])
    _fails(skade, ["append", "db.nope", "x.csv"], ["db.nope"])
    _fails(skade, ["scan", table, "--snapshot", "123"], ["123"])
    _fails(skade, ["scan", table, "--ref", "nope"], ["nope"])
    _fails(skade, ["scan", table, "--as-of", "garbage"], ["garbage"])
    _fails(skade, ["scan", table, "--as-of", "2000-01-01T00:00:00Z"], ["snapshot"])
    _fails(skade, ["create", "db.t", "--schema", "a:int"], ["db.t", "exists"])
    _fails(skade, ["create", "nons.t", "--schema", "a:int"], ["nons"])
    _fails(skade, ["create-namespace", "db"], ["db", "exists"])
    _fails(skade, ["drop-namespace", "nope"], ["nope"])
