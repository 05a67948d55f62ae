"""The skade CLI end to end: catalog commands, listing formats, scan options, time travel,
file rolling by target size, and the demo."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
import time
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest

from skade_util import (
    all_types_table,
    assert_same_rows,
    catalog_row,
    current_metadata,
    local_path,
    open_catalog,
    write_parquet,
)


def _csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def _stats(out):
    m = re.search(r"files (\d+) -> (\d+) \(partition pruned (\d+), metrics pruned (\d+)\)", out)
    assert m, f"no plan statistics in {out!r}"
    return tuple(int(x) for x in m.groups())


@pytest.fixture
def orders(skade, tmp_path):
    """shop.orders partitioned by country with three appends (one per country)."""
    skade.ok("create-namespace", "shop")
    skade.ok("create", "shop.orders", "--schema", "id:long!, country:string, amount:decimal(9,2), ts:timestamptz",
             "--partition", "country")
    rows = []
    for k, country in enumerate(["SE", "NO", "DK"]):
        f = tmp_path / f"orders-{country}.csv"
        lines = ["id,country,amount,ts"]
        for j in range(10):
            i = k * 100 + j
            lines.append(f"{i},{country},{j}.50,2024-0{k + 1}-0{j % 9 + 1}T10:00:00Z")
            rows.append({"id": i, "country": country})
        f.write_text("\n".join(lines) + "\n")
        skade.ok("append", "shop.orders", f)
    return rows


# --- catalog commands ------------------------------------------------------------------------


def test_namespace_and_table_lifecycle(skade, warehouse, catalog, orders):
    assert skade.jsonl("namespaces") == [{"namespace": "shop"}]
    skade.ok("create-namespace", "other")
    assert sorted(r["namespace"] for r in _csv(skade.ok("namespaces", "--format", "csv"))) == ["other", "shop"]
    table_text = skade.ok("namespaces")
    assert "shop" in table_text and "other" in table_text

    # drop-namespace refuses a non-empty namespace and names its tables
    skade.ok("create", "shop.customers", "--schema", "id:long!, name:string")
    rc, out, err = skade("drop-namespace", "shop")
    assert rc == 2
    assert "shop.customers" in err and "shop.orders" in err, err
    assert len(err.strip().splitlines()) == 1
    assert {"namespace": "shop"} in skade.jsonl("namespaces")

    # tables, per namespace and all
    assert skade.jsonl("tables", "shop") == [{"table": "shop.customers"}, {"table": "shop.orders"}]
    assert skade.jsonl("tables", "other") == []
    # an empty listing says so as a table; as CSV it is the header alone
    assert skade.ok("tables", "other").splitlines() == ["table", "-----", "(none)"]
    assert skade.ok("tables", "other", "--format", "csv") == "table\n"
    # rename within and across namespaces: data follows, PyIceberg agrees
    before = skade.rows("shop.orders")
    skade.ok("rename", "shop.orders", "shop.sales")
    assert_same_rows(skade.rows("shop.sales"), before, what="renamed")
    rc, _, err = skade("scan", "shop.orders")
    assert rc == 2 and "shop.orders" in err
    skade.ok("rename", "shop.sales", "other.sales")
    assert_same_rows(catalog().load_table("other.sales").scan().to_arrow(), before, what="PyIceberg renamed")
    assert skade.jsonl("tables") == [{"table": "other.sales"}, {"table": "shop.customers"}]
    rc, _, err = skade("rename", "other.sales", "nope.sales")
    assert rc == 2 and "nope" in err
    rc, _, err = skade("rename", "other.sales", "shop.customers")
    assert rc == 2 and "shop.customers" in err

    # drop: gone from the catalog, its files stay; the name can be used again
    location = local_path(json.loads(local_path(catalog_row(warehouse, "other.sales")[0]).read_text())["location"])
    skade.ok("drop", "other.sales")
    assert skade.jsonl("tables", "other") == []
    assert any(location.rglob("*.parquet")), "drop removed the data files"
    rc, _, err = skade("describe", "other.sales")
    assert rc == 2 and "other.sales" in err
    assert not catalog().table_exists("other.sales")
    skade.ok("create", "other.sales", "--schema", "x:int")
    skade.ok("drop", "other.sales")
    skade.ok("drop-namespace", "other")
    assert skade.jsonl("namespaces") == [{"namespace": "shop"}]
    # the log recorded it all, in order
    actions = [(r["table"], r["action"]) for r in skade.log()]
    assert ("shop.sales", "rename") in actions and ("other.sales", "drop") in actions
    seqs = [r["commit_seq"] for r in skade.log()]
    assert seqs == list(range(1, len(seqs) + 1))


def test_listing_formats_agree(skade, warehouse, orders):
    for args in (["namespaces"], ["tables"], ["tables", "shop"], ["describe", "shop.orders"],
                 ["snapshots", "shop.orders"], ["log"], ["log", "--table", "shop.orders"], ["log", "--from", "3"]):
        as_json = skade.jsonl(*args)
        as_csv = _csv(skade.ok(*args, "--format", "csv"))
        assert as_json, args
        assert len(as_csv) == len(as_json), args
        for j, c in zip(as_json, as_csv):
            assert list(c) == list(j), args
            assert c == {k: "" if v is None else str(v) for k, v in j.items()}, args
        text = skade.ok(*args)  # the default table format shows the same header
        assert any(all(k in line.split() for k in as_json[0]) for line in text.splitlines()), (args, text)

    described = skade.jsonl("describe", "shop.orders")
    assert [(r["id"], r["name"], r["type"], r["required"]) for r in described] == [
        (1, "id", "long", "yes"), (2, "country", "string", "no"), (3, "amount", "decimal(9,2)", "no"),
        (4, "ts", "timestamptz", "no")]
    snaps = skade.snapshots("shop.orders")
    _, meta = current_metadata(warehouse, "shop.orders")
    assert [s["snapshot_id"] for s in snaps] == [s["snapshot-id"] for s in meta["snapshots"]]
    assert [s["total_records"] for s in snaps] == [10, 20, 30]
    assert [bool(s["current"]) for s in snaps] == [False, False, True]
    log = skade.log("--from", "3")
    assert log and all(r["commit_seq"] >= 3 for r in log)
    assert [r["snapshot_id"] for r in skade.log("--table", "shop.orders") if r["snapshot_id"]] == [s["snapshot_id"] for s in snaps]
    rc, _, err = skade("tables", "--format", "xml")
    assert rc in (1, 2) and "xml" in err


def test_alter_with_several_changes_is_one_schema_all_or_nothing(skade, warehouse, catalog, orders):
    _, before = current_metadata(warehouse, "shop.orders")
    # a failing change among good ones: nothing applies
    rc, out, err = skade("alter", "shop.orders", "add-column", "note", "string", "drop-column", "nope")
    assert rc == 2 and "nope" in err and out == "", err
    assert current_metadata(warehouse, "shop.orders")[1]["schemas"] == before["schemas"]
    out = skade.ok("alter", "shop.orders", "add-column", "note", "string", "rename-column", "amount", "total",
                   "add-column", "seen", "timestamptz")
    _, after = current_metadata(warehouse, "shop.orders")
    assert len(after["schemas"]) == len(before["schemas"]) + 1, "one new schema for the three changes"
    assert f"schema {after['current-schema-id']} is now current" in out
    t = catalog().load_table("shop.orders")
    assert [f.name for f in t.schema().fields] == ["id", "country", "total", "ts", "note", "seen"]
    assert t.scan().to_arrow().num_rows == skade.rows("shop.orders").num_rows
    for args, words in [
        (["add-column", "x", "int", "add-column"], "add-column takes 2 arguments"),
        (["drop-column"], "drop-column takes 1 argument"),
        (["add-column", "x", "int", "add-partition", "bucket(2,id)"], "a partition change is a commit of its own"),
        (["add-column", "x", "int", "add-column", "y", "int", "--after", "id"], "--after goes with a single add-column"),
        (["frob"], "unknown alter change 'frob'"),
        (["add-column", "x", "int!"], "a new column cannot be required ('!')"),
    ]:
        rc, out, err = skade("alter", "shop.orders", *args)
        assert rc == 2 and words in err and out == "", (args, err)
    assert current_metadata(warehouse, "shop.orders")[1]["schemas"] == after["schemas"]


# --- scan options ----------------------------------------------------------------------------


def test_scan_limit_formats_and_output(skade, tmp_path, orders):
    all_ids = {r["id"] for r in orders}
    got = skade.jsonl("scan", "shop.orders", "--limit", "7")
    assert len(got) == 7 and {r["id"] for r in got} <= all_ids
    assert skade.jsonl("scan", "shop.orders", "--limit", "0") == []
    assert len(skade.jsonl("scan", "shop.orders", "--limit", "1000")) == 30
    got = skade.jsonl("scan", "shop.orders", "--where", "country = 'NO'", "--limit", "4", "--columns", "id,country")
    assert len(got) == 4 and all(r["country"] == "NO" and list(r) == ["id", "country"] for r in got)

    # --format none prints only the row count
    out = skade.ok("scan", "shop.orders", "--format", "none")
    assert out.strip() == "30 rows"
    out = skade.ok("scan", "shop.orders", "--format", "none", "--where", "country = 'SE' and amount >= 5")
    assert out.strip() == "5 rows"

    # csv and jsonl and table carry the same rows
    js = skade.jsonl("scan", "shop.orders")
    cs = _csv(skade.ok("scan", "shop.orders", "--format", "csv"))
    assert sorted(int(r["id"]) for r in cs) == sorted(r["id"] for r in js)
    assert {(int(r["id"]), r["amount"]) for r in cs} == {(r["id"], str(r["amount"])) for r in js}
    text = skade.ok("scan", "shop.orders", "--format", "table")
    assert "(30 rows)" in text and "country" in text.splitlines()[0]

    # --output writes the file and nothing to stdout
    out_csv = tmp_path / "o.csv"
    assert skade.ok("scan", "shop.orders", "--format", "csv", "--output", out_csv).strip() == ""
    assert _csv(out_csv.read_text()) == cs
    out_pq = tmp_path / "o.parquet"
    skade.ok("scan", "shop.orders", "--format", "parquet", "--output", out_pq, "--limit", "3")
    import pyarrow.parquet as pq

    assert pq.read_table(out_pq).num_rows == 3


def test_text_exports_keep_scan_order_over_many_batches(skade, tmp_path):
    """CSV and JSON lines are formatted several batches at once: the rows still come in
    scan order, the same as the Parquet export's, to stdout and to --output files."""
    import pyarrow.parquet as pq

    skade.ok("create-namespace", "db")
    skade.ok("create", "db.many", "--schema", "id:long, s:string, x:double")
    n = 150_000
    for part in range(3):  # three files, each several scan batches
        ids = list(range(part * n, (part + 1) * n))
        rows = pa.table({"id": pa.array(ids, pa.int64()),
                         "s": pa.array([None if i % 97 == 0 else f'v{i % 1000},"q"' for i in ids]),
                         "x": pa.array([i / 7 for i in ids], pa.float64())})
        skade.ok("append", "db.many", write_parquet(rows, tmp_path / f"scratch-many-{part}.parquet"))
    out_pq = tmp_path / "many.parquet"
    skade.ok("scan", "db.many", "--format", "parquet", "--output", out_pq)
    want = pq.read_table(out_pq)
    assert sorted(want.column("id").to_pylist()) == list(range(3 * n))
    want_ids = want.column("id").to_pylist()
    want_s = want.column("s").to_pylist()

    out_csv, out_jsonl = tmp_path / "many.csv", tmp_path / "many.jsonl"
    skade.ok("scan", "db.many", "--format", "csv", "--output", out_csv)
    skade.ok("scan", "db.many", "--format", "jsonl", "--output", out_jsonl)
    for text in (out_csv.read_text(), skade.ok("scan", "db.many", "--format", "csv")):
        rows = _csv(text)
        assert [int(r["id"]) for r in rows] == want_ids
        assert [r["s"] or None for r in rows] == want_s
    lines = [json.loads(line) for line in out_jsonl.read_text().splitlines()]
    assert [r["id"] for r in lines] == want_ids and [r["s"] for r in lines] == want_s


def test_table_format_prints_as_it_reads(skade, tmp_path):
    """The table format aligns blocks of 10,000 rows as they come: one header, every row
    in scan order, a column widened from the block where a wider value first shows, and
    cells cut at 80 characters."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.wide", "--schema", "id:long, s:string")
    n = 25_000
    ids = list(range(n))
    # Short strings in the first block; from row 20,000 (the third block) longer ones.
    strs = [f"s{i % 7}" if i < 20_000 else "w" * 12 + str(i) if i != 24_000 else "x" * 300 for i in ids]
    skade.ok("append", "db.wide", write_parquet(pa.table({"id": pa.array(ids, pa.int64()), "s": strs}),
                                                tmp_path / "scratch-wide.parquet"))
    lines = skade.ok("scan", "db.wide", "--format", "table").splitlines()
    assert lines[0].split() == ["id", "s"] and set(lines[1].replace(" ", "")) == {"-"}
    assert lines[-1] == f"({n} rows)"
    body = lines[2:-1]
    assert len(body) == n and sum(1 for line in lines if line.split()[:2] == ["id", "s"]) == 1
    got = [line.split(maxsplit=1) for line in body]
    assert [int(i) for i, _ in got] == ids
    assert [v for _, v in got[:20_000]] == strs[:20_000]
    assert got[24_000][1] == "x" * 77 + "..."
    # The first block's width holds "id" for ids up to 9999; its column starts at 7 there
    # (5 digits + 2 spaces) from 10,000 on, in the block that first has them.
    assert body[9_999].index("s") == len("9999") + 2
    assert body[10_000].index("s") == len("10000") + 2


def test_table_format_counts_characters(skade, tmp_path):
    """Widths and cuts count characters, not UTF-8 bytes: a long cell of two-byte
    characters is cut whole, and the next column starts at the same character on every row."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.utf8", "--schema", "id:long, s:string, t:string")
    strs = ["plain", "æøå" * 10, "ø" * 100, "日本語"]
    skade.ok("append", "db.utf8", write_parquet(pa.table({"id": pa.array(range(4), pa.int64()), "s": strs,
                                                          "t": ["end"] * 4}), tmp_path / "scratch-utf8.parquet"))
    lines = skade.ok("scan", "db.utf8", "--format", "table").splitlines()
    body = {int(line.split()[0]): line for line in lines[2:-1]}
    assert body[2].split()[1] == "ø" * 77 + "..."
    assert body[1].split()[1] == "æøå" * 10
    # "id" is 2 wide, then 2 spaces, the cut cell's 80 characters and 2 spaces.
    assert {line.index("end") for line in body.values()} == {2 + 2 + 80 + 2}


def test_stats_show_pruning(skade, orders):
    out = skade.ok("scan", "shop.orders", "--stats", "--format", "none")
    assert _stats(out)[:2] == (3, 3)
    assert "30 rows" in out

    out = skade.ok("scan", "shop.orders", "--where", "country = 'DK'", "--stats", "--format", "none")
    total, planned, part_pruned, _ = _stats(out)
    assert (total, planned) == (3, 1) and part_pruned == 2
    assert "10 rows" in out
    m = re.search(r"rows (\d+) -> (\d+) planned", out)
    assert m and (int(m.group(1)), int(m.group(2))) == (30, 10)

    # column bounds prune too: ids of DK are 200..209
    out = skade.ok("scan", "shop.orders", "--where", "id >= 205", "--stats", "--format", "none")
    total, planned, _, metrics_pruned = _stats(out)
    assert (total, planned, metrics_pruned) == (3, 1, 2)
    assert "5 rows" in out
    # stats come with a normal scan too, on stderr so that the rows stay clean CSV
    rc, out, err = skade("scan", "shop.orders", "--where", "country = 'SE'", "--stats", "--format", "csv")
    assert rc == 0
    assert _stats(out + err)[:2] == (3, 1)
    rows = _csv(out)
    assert len(rows) == 10 and {r["country"] for r in rows} == {"SE"}


def test_stats_show_the_deletes_applied(skade, orders):
    out = skade.ok("scan", "shop.orders", "--stats", "--format", "none")
    assert "delete files 0 (rows deleted 0)" in out, out
    skade.ok("delete", "shop.orders", "--where", "id >= 205 and id < 208")
    out = skade.ok("scan", "shop.orders", "--stats", "--format", "none")
    assert "27 rows" in out, out
    m = re.search(r"delete files (\d+) \(rows deleted (\d+)\), returned (\d+)", out)
    assert m and (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (1, 3, 27), out
    # planning drops the files the filter rules out, with their deletes
    out = skade.ok("scan", "shop.orders", "--where", "country = 'SE'", "--stats", "--format", "none")
    assert "delete files 0 (rows deleted 0), returned 10" in out, out


def test_as_of_iso_timestamps(skade, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!")
    for k in range(3):
        f = tmp_path / f"{k}.csv"
        f.write_text("id\n" + "".join(f"{k * 10 + j}\n" for j in range(2)))
        skade.ok("append", "db.t", f)
        time.sleep(0.02)
    snaps = skade.snapshots("db.t")
    stamps = [dt.datetime.fromisoformat(s["timestamp"]) for s in snaps]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3

    def ids(*args):
        return sorted(r["id"] for r in skade.jsonl("scan", "db.t", *args))

    for k, ts in enumerate(stamps):
        want = sorted(i * 10 + j for i in range(k + 1) for j in range(2))
        utc = ts.astimezone(dt.timezone.utc)
        assert ids("--as-of", utc.isoformat()) == want
        assert ids("--as-of", utc.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z") == want
        plus2 = utc.astimezone(dt.timezone(dt.timedelta(hours=2)))
        assert ids("--as-of", plus2.isoformat()) == want
        # a moment later (before the next snapshot) still sees the same snapshot
        if k + 1 < len(stamps):
            mid = utc + (stamps[k + 1] - ts) / 2
            assert ids("--as-of", mid.isoformat()) == want
        assert ids("--snapshot", snaps[k]["snapshot_id"]) == want
    assert ids("--as-of", "2999-01-01T00:00:00Z") == ids()
    before = (stamps[0] - dt.timedelta(seconds=5)).replace(microsecond=0)
    rc, _, err = skade("scan", "db.t", "--as-of", before.isoformat())
    want_time = before.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    assert rc == 2 and f"no snapshot was current at {want_time}" in err, err


def test_target_file_size_rolls_files(skade, warehouse, tmp_path, catalog):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.big", "--schema", "id:long!, s:string, d:double",
             "--property", "write.target-file-size-bytes=65536")
    assert "write.target-file-size-bytes=65536" in skade.ok("describe", "db.big")
    assert catalog().load_table("db.big").properties["write.target-file-size-bytes"] == "65536"
    n = 60000
    import random

    rng = random.Random(3)
    data = pa.table({"id": pa.array(range(n), pa.int64()),
                     "s": ["".join(rng.choice("abcdefghij") for _ in range(12)) for _ in range(n)],
                     "d": [rng.random() for _ in range(n)]})
    out = skade.ok("append", "db.big", write_parquet(data, tmp_path / "big.parquet"))
    m = re.search(r"appended (\d+) rows in (\d+) files", out)
    assert m and int(m.group(1)) == n
    nfiles = int(m.group(2))
    assert nfiles >= 4, out

    # the manifests say the same
    _, meta = current_metadata(warehouse, "db.big")
    snap = meta["snapshots"][-1]
    assert int(snap["summary"]["added-data-files"]) == nfiles
    with open(local_path(snap["manifest-list"]), "rb") as fh:
        manifests = list(fastavro.reader(fh))
    entries = []
    for mf in manifests:
        with open(local_path(mf["manifest_path"]), "rb") as fh:
            entries += list(fastavro.reader(fh))
    assert len(entries) == nfiles
    assert sum(e["data_file"]["record_count"] for e in entries) == n
    sizes = [e["data_file"]["file_size_in_bytes"] for e in entries]
    assert max(sizes) < 4 * 65536, sizes
    # and the plan statistics
    total, planned, _, _ = _stats(skade.ok("scan", "db.big", "--stats", "--format", "none"))
    assert total == planned == nfiles
    # files are cut by size, so a narrow filter plans few of them (ids are ascending)
    total, planned, _, _ = _stats(skade.ok("scan", "db.big", "--where", "id < 100", "--stats", "--format", "none"))
    assert planned == 1 < total
    assert_same_rows(skade.rows("db.big", "--columns", "id"), data.select(["id"]), what="rows")


def test_demo_runs_and_prints_scans(skade, warehouse):
    rc, out, err = skade("demo")
    assert rc == 0, err
    assert "Traceback" not in err and "error" not in err.lower()
    assert out.count("== scan") >= 1 or out.count("==") >= 3
    assert re.search(r"\(\d+ rows\)", out)
    assert "time travel" in out.lower()
    assert "commit" in out.lower()
    # the tables it made are real Iceberg tables PyIceberg reads, same rows as skade
    cat = open_catalog(warehouse)
    tables = skade.jsonl("tables")
    assert len(tables) >= 3
    for t in tables:
        name = t["table"]
        assert_same_rows(cat.load_table(name).scan().to_arrow(), skade.rows(name), what=name)
    # and it runs again on the same warehouse
    rc, out2, err = skade("demo")
    assert rc == 0, err


# --- JSON lines and CSV input ----------------------------------------------------------------


def test_csv_and_jsonl_input_types_converted(skade, catalog, tmp_path):
    skade.ok("create-namespace", "db")
    spec = ("id:long!, ok:boolean, i:int, f:float, price:decimal(8,3), d:date, t:time, ts:timestamp, "
            "tz:timestamptz, s:string, u:uuid, tags:list<string>, addr:struct<city:string,zip:int>")
    skade.ok("create", "db.t", "--schema", spec)
    f = tmp_path / "in.jsonl"
    rows = [
        {"id": 1, "ok": True, "i": -5, "f": 1.5, "price": "12.345", "d": "2024-02-29", "t": "12:34:56.789",
         "ts": "2024-01-01T00:00:01", "tz": "2024-01-01T02:00:00+02:00", "s": "hé", "u": "f79c3e09-677c-4bbd-a479-3f349cb785e7",
         "tags": ["a", None], "addr": {"city": "Oslo", "zip": 150}},
        {"id": 2, "ok": None, "i": None, "f": None, "price": None, "d": None, "t": None, "ts": None, "tz": None,
         "s": None, "u": None, "tags": None, "addr": None},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    skade.ok("append", "db.t", f)
    c = tmp_path / "in.csv"
    c.write_text("s,id,ok,i,price,d,ts,tz\nx,3,false,7,-0.5,1969-12-31,1970-01-01T00:00:00,1970-01-01T00:00:00Z\n")
    skade.ok("append", "db.t", c)
    import uuid

    want = [
        {"id": 1, "ok": True, "i": -5, "f": 1.5, "price": Decimal("12.345"), "d": dt.date(2024, 2, 29),
         "t": dt.time(12, 34, 56, 789000), "ts": dt.datetime(2024, 1, 1, 0, 0, 1),
         "tz": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "s": "hé",
         "u": uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), "tags": ["a", None], "addr": {"city": "Oslo", "zip": 150}},
        {k: (2 if k == "id" else None) for k in rows[0]},
        {"id": 3, "ok": False, "i": 7, "f": None, "price": Decimal("-0.500"), "d": dt.date(1969, 12, 31), "t": None,
         "ts": dt.datetime(1970, 1, 1), "tz": dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc), "s": "x", "u": None,
         "tags": None, "addr": None},
    ]
    assert_same_rows(skade.rows("db.t"), want, what="skade")
    assert_same_rows(catalog().load_table("db.t").scan().to_arrow(), want, what="PyIceberg")


def test_csv_separators_tsv_and_delimiter(skade, catalog, tmp_path):
    """A .tsv file is tab-separated; --delimiter names another separator for append, upsert,
    overwrite and delete --keys; a header that holds another separator is refused naming the
    flag to give, instead of reading as one column."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.d", "--schema", "id:long!, name:string, amt:decimal(8,2)", "--identifier", "id")
    (tmp_path / "a.tsv").write_text('id\tname\tamt\n1\tx, y\t1.5\n2\t"q\tr"\t2\n')
    skade.ok("append", "db.d", tmp_path / "a.tsv")
    (tmp_path / "b.csv").write_text("id;name;amt\n3;z;3,5\n".replace("3,5", '"3.5"'))
    rc, _, err = skade("append", "db.d", tmp_path / "b.csv")
    assert rc == 2 and "b.csv: its header line holds no comma but ';': give --delimiter ';'" in err, err
    skade.ok("append", "db.d", tmp_path / "b.csv", "--delimiter", ";")
    (tmp_path / "c.txt.csv").write_text("id|name|amt\n1|one|10\n4|four|4\n")
    skade.ok("upsert", "db.d", tmp_path / "c.txt.csv", "--delimiter", "|")
    (tmp_path / "keys.csv").write_text("id\tname\n2\tignored\n")
    rc, _, err = skade("delete", "db.d", "--keys", tmp_path / "keys.csv")
    assert rc == 2 and "give --delimiter tab" in err, err
    skade.ok("delete", "db.d", "--keys", tmp_path / "keys.csv", "--delimiter", "tab")
    want = [{"id": 1, "name": "one", "amt": Decimal("10.00")}, {"id": 3, "name": "z", "amt": Decimal("3.50")},
            {"id": 4, "name": "four", "amt": Decimal("4.00")}]
    assert_same_rows(catalog().load_table("db.d").scan().to_arrow(), want, what="PyIceberg")
    (tmp_path / "o.tsv").write_text("id:name:amt\n5:five:5\n")
    skade.ok("overwrite", "db.d", tmp_path / "o.tsv", "--delimiter", ":", "--where", "id > 3")
    assert sorted(r["id"] for r in skade.jsonl("scan", "db.d")) == [1, 3, 5]
    for bad in (";;", '"', "\n"):
        rc, out, err = skade("append", "db.d", tmp_path / "b.csv", "--delimiter", bad)
        assert rc == 2 and out == "" and "--delimiter takes one character" in err, (bad, err)
    rc, _, err = skade("delete", "db.d", "--where", "id = 1", "--delimiter", ";")
    assert rc != 0 and "--delimiter requires --keys" in err, err
    assert sorted(r["id"] for r in skade.jsonl("scan", "db.d")) == [1, 3, 5]


def test_inputs_from_standard_input(skade, catalog, tmp_path):
    """`-` as a write's input is standard input, in the format --input-format names (which also
    reads files whatever their extension): append (JSON lines, Parquet), upsert (which reads its
    input twice), delete --keys and overwrite. Errors name "standard input"; `-` without a format,
    twice, or an unknown format is refused before anything is read; the copy skade keeps while it
    reads is gone after each command, failed or not."""
    import os

    import pyarrow.parquet as pq
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.s", "--schema", "id:long!, name:string", "--identifier", "id")
    spool = tmp_path / "spool"
    spool.mkdir()
    env = {**os.environ, "TMPDIR": str(spool)}

    def run(*args, data: bytes):
        rc, out, err = skade(*args, input=data, env=env)
        assert list(spool.iterdir()) == [], "the copy of standard input stayed"
        return rc, out, err

    assert run("append", "db.s", "-", "--input-format", "jsonl", data=b'{"id": 1, "name": "a"}\n{"id": 2}\n')[0] == 0
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array([3, 4], pa.int64()), "name": ["c", "d"]}), buf)
    assert run("append", "db.s", "-", "--input-format", "parquet", data=buf.getvalue())[0] == 0
    assert run("upsert", "db.s", "-", "--input-format", "csv", data=b"id,name\n2,b\n5,e\n")[0] == 0
    assert run("delete", "db.s", "--keys", "-", "--input-format", "tsv", data=b"id\n4\n")[0] == 0
    (tmp_path / "more.txt").write_text('{"id": 6, "name": "f"}\n')
    skade.ok("append", "db.s", tmp_path / "more.txt", "--input-format", "json")
    want = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}, {"id": 5, "name": "e"},
            {"id": 6, "name": "f"}]
    assert_same_rows(catalog().load_table("db.s").scan().to_arrow(), want, what="PyIceberg after stdin writes")
    assert run("overwrite", "db.s", "-", "--input-format", "csv", "--where", "id > 4",
               data=b"id,name\n7,g\n")[0] == 0
    assert sorted(r["id"] for r in skade.jsonl("scan", "db.s")) == [1, 2, 3, 7]

    for args, data, message in (
            (("append", "db.s", "-", "--input-format", "csv"), b"id,name\nx,y\n",
             "standard input: column 'id' row 1"),
            (("upsert", "db.s", "-", "--input-format", "csv"), b"id,name\n1,a,b\n", "standard input"),
            (("append", "db.s", "-"), b"", "'-' reads standard input, whose format --input-format names"),
            (("append", "db.s", "-", "-", "--input-format", "csv"), b"", "'-' (standard input) may be given once"),
            (("append", "db.s", "-", "--input-format", "xml"), b"", "--input-format takes one of parquet, csv")):
        rc, out, err = run(*args, data=data)
        assert rc != 0 and message in err and "stdin." not in err, (args, err)
    assert sorted(r["id"] for r in skade.jsonl("scan", "db.s")) == [1, 2, 3, 7]


def test_progress_on_a_terminal_names_each_input(skade, tmp_path):
    """On a terminal, `append` reports the rows written so far, naming each input by its path
    and standard input as "standard input" (not the copy skade reads)."""
    import os
    import pty
    import subprocess
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.p", "--schema", "id:long!, name:string")
    (tmp_path / "a.csv").write_text("id,name\n1,a\n2,b\n")
    leader, follower = pty.openpty()
    p = subprocess.run([skade.binary, "--warehouse", str(skade.warehouse), "append", "db.p", tmp_path / "a.csv", "-",
                        "--input-format", "csv"], input=b"id,name\n3,c\n", stdout=subprocess.PIPE,
                       stderr=follower, timeout=60)
    os.close(follower)
    err = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal's other end is gone: all was read
            break
        if not chunk:
            break
        err += chunk
    os.close(leader)
    text = err.decode()
    assert p.returncode == 0, text
    assert f"{tmp_path / 'a.csv'}: 2 rows written" in text and "standard input: 1 rows written" in text, text
    assert "stdin." not in text, text


def test_csv_record_of_another_width_is_placed(skade, tmp_path):
    """Arrow's parser names a record with too few or too many fields by its text only; the
    error gives its row and line, counting quoted line breaks and blank lines as Arrow reads
    them, in the first block and far into the file, with any separator. Nothing is written."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.w", "--schema", "id:long!, name:string, amt:double")
    cases = [
        ("first.csv", "id,name,amt\n8,h\n", (), 'row 1 (line 2) has 2 fields where the header has 3: 8,h'),
        ("quoted.csv", 'id,name,amt\n1,"two\nlines, one field",1\n\n2,"q""x",2,9\n', (),
         'row 2 (line 5) has 4 fields where the header has 3: 2,"q""x",2,9'),
        ("far.csv", "id,name,amt\n" + "".join(f"{i},n{i},{i}\n" for i in range(150000)) + "7,oops\n", (),
         "row 150001 (line 150002) has 2 fields where the header has 3: 7,oops"),
        ("semi.csv", "id;name;amt\r\n1;a;1\r\n2;b\r\n", ("--delimiter", ";"),
         "row 2 (line 3) has 2 fields where the header has 3: 2;b"),
    ]
    for name, text, flags, message in cases:
        (tmp_path / name).write_text(text)
        rc, out, err = skade("append", "db.w", tmp_path / name, *flags)
        assert rc == 2 and out == "" and f"{name}: {message}" in err, (name, err)
    assert skade.snapshots("db.w") == []


def test_csv_nulls_empty_strings_and_nan_round_trip(skade, catalog, tmp_path):
    """Only an unquoted empty field is a null string; "" is an empty string and "NA" or "null"
    are strings. In other columns an empty field and the usual missing-value spellings are
    null, while NaN and infinities stay float values. scan --format csv writes what append reads."""
    skade.ok("create-namespace", "db")
    spec = "id:long!, s:string, i:int, f:double, d:date"
    skade.ok("create", "db.c", "--schema", spec)
    f = tmp_path / "in.csv"
    f.write_text('id,s,i,f,d\n1,NA,NA,NaN,NA\n2,null,"",nan,""\n3,,,,\n4,"",7,1e5,2024-01-01\n'
                 '5,N/A,null,-Infinity,null\n6,"a,b",#N/A,inf,NULL\n')
    skade.ok("append", "db.c", f)
    nan, inf = float("nan"), float("inf")
    want = [(1, "NA", None, nan, None), (2, "null", None, nan, None), (3, None, None, None, None),
            (4, "", 7, 1e5, dt.date(2024, 1, 1)), (5, "N/A", None, -inf, None), (6, "a,b", None, inf, None)]

    def rows(t):
        got = sorted(zip(*(t.column(c).to_pylist() for c in ["id", "s", "i", "f", "d"])))
        return [tuple("nan" if isinstance(v, float) and v != v else v for v in r) for r in got]

    expect = [tuple("nan" if isinstance(v, float) and v != v else v for v in r) for r in want]
    assert rows(skade.rows("db.c")) == expect
    assert rows(catalog().load_table("db.c").scan().to_arrow()) == expect
    out = tmp_path / "out.csv"
    skade.ok("scan", "db.c", "--format", "csv", "--output", out)
    skade.ok("create", "db.c2", "--schema", spec)
    skade.ok("append", "db.c2", out)
    assert rows(skade.rows("db.c2")) == expect


def test_jsonl_output_of_nan_and_infinities_is_json(skade, tmp_path):
    """JSON has no NaN or infinities: scan --format jsonl writes them as strings, as the server does."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.nf", "--schema", "id:long!, f:float, d:double, xs:list<double>")
    inf, nan = float("inf"), float("nan")
    data = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()),
                     "f": pa.array([nan, inf, -inf, 1.5], pa.float32()),
                     "d": pa.array([nan, inf, -inf, 2.5], pa.float64()),
                     "xs": pa.array([[nan], [inf, 1.0], [-inf], []], pa.list_(pa.float64()))})
    skade.ok("append", "db.nf", write_parquet(data, tmp_path / "nf.parquet"))

    def strict(constant):
        raise AssertionError(f"{constant} is not JSON")

    out = skade.ok("scan", "db.nf", "--format", "jsonl")
    rows = sorted((json.loads(line, parse_constant=strict) for line in out.splitlines()), key=lambda r: r["id"])
    assert [(r["f"], r["d"], r["xs"]) for r in rows] == [
        ("NaN", "NaN", ["NaN"]), ("Infinity", "Infinity", ["Infinity", 1.0]), ("-Infinity", "-Infinity", ["-Infinity"]),
        (1.5, 2.5, [])]


def test_jsonl_non_finite_floats_append_and_round_trip(skade, catalog, tmp_path):
    """"NaN", "Infinity" and "-Infinity" (as scan --format jsonl writes them, or bare) are floats where the
    schema has a float (a column, list elements at any depth, map values, struct fields); in strings and
    map keys they stay strings."""
    import math
    import random
    import struct

    schema = ("id:long!, f:float, d:double, xs:list<list<double>>, m:map<string,float>, s:string, ls:list<string>, "
              "st:struct<a:double, b:string, in:struct<z:float>>")
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.nf", "--schema", schema)
    rnd = random.Random(7)
    words = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

    def f32(x: float) -> float:
        return struct.unpack("f", struct.pack("f", x))[0]

    def value():
        """(its JSON text, the float it reads as)"""
        word = rnd.choice(list(words) + ["num"])
        if word == "num":
            x = rnd.choice([rnd.uniform(-1e6, 1e6), 1.5e38, -3.0e-45, 0.0, float(rnd.randint(-99, 99))])
            return json.dumps(x), x
        return (json.dumps(word) if rnd.random() < 0.8 else word), words[word]

    lines, want = [], []
    for i in range(20000):  # about 2.5 MB: strings and numbers fall across the 64 KiB reads
        f, fv = value()
        d, dv = value()
        inner = [[value() for _ in range(rnd.randint(0, 3))] for _ in range(rnd.randint(0, 2))]
        m = {rnd.choice(list(words) + ["k"]) + str(j): value() for j in range(rnd.randint(0, 2))}
        s = rnd.choice(list(words) + ["x" * rnd.randint(0, 12), "NaN\\u0041", "Infinityy"])
        pad = " " * rnd.randint(0, 40)
        a, av = value()
        z, zv = value()
        st_text, st_want = "null", None
        if rnd.random() < 0.8:
            st_text = f'{{"b": {json.dumps(s)}, "in": {{"z": {z}}}, "a": {a}}}'
            st_want = {"a": av, "b": s, "in": {"z": f32(zv)}}
        lines.append(f'{{"id": {i},{pad}"f": {f}, "d":{d}, "xs": [{", ".join("[" + ", ".join(t for t, _ in xs) + "]" for xs in inner)}], '
                     f'"m": {{{", ".join(json.dumps(k) + ": " + t for k, (t, _) in m.items())}}}, '
                     f'"s": {json.dumps(s)}, "ls": [{json.dumps(s)}, "NaN"], "st": {st_text}}}')
        want.append((i, f32(fv), dv, [[v for _, v in xs] for xs in inner], sorted((k, f32(v)) for k, (_, v) in m.items()),
                     json.loads(json.dumps(s)), [json.loads(json.dumps(s)), "NaN"],
                     None if st_want is None else [st_want["a"], st_want["b"], st_want["in"]["z"]]))
    src = tmp_path / "nf.jsonl"
    src.write_text("\n".join(lines) + "\n")
    skade.ok("append", "db.nf", src)

    def norm(x):
        """Floats as text, so NaN equals NaN; float columns compared at float precision."""
        if isinstance(x, float):
            return repr(x) if not math.isfinite(x) else f"{x:.6g}"
        if isinstance(x, (list, tuple)):
            return [norm(v) for v in x]
        return x

    def got(table: pa.Table):
        out = []
        for r in sorted(table.to_pylist(), key=lambda r: r["id"]):
            st = r["st"] and [r["st"]["a"], r["st"]["b"], r["st"]["in"]["z"]]
            out.append(norm((r["id"], r["f"], r["d"], r["xs"], sorted(r["m"]) if r["m"] is not None else None,
                             r["s"], r["ls"], st)))
        return out

    expect = [norm(w) for w in want]
    assert got(catalog().load_table("db.nf").scan().to_arrow()) == expect
    # what scan --format jsonl writes appends back to the same rows
    out = tmp_path / "out.jsonl"
    skade.ok("scan", "db.nf", "--format", "jsonl", "--output", out)
    skade.ok("create", "db.nf2", "--schema", schema)
    skade.ok("append", "db.nf2", out)
    assert got(catalog().load_table("db.nf2").scan().to_arrow()) == expect


def test_json_array_document_appends_like_json_lines(skade, catalog, tmp_path):
    """A .json file holding one array of row objects (pretty-printed or not) appends as JSON lines do."""
    import math

    skade.ok("create-namespace", "db")
    skade.ok("create", "db.ja", "--schema", "id:long!, name:string, x:double, tags:list<string>, s:struct<a:int>")
    rows = [{"id": i, "name": ["a,]b", 'q"u[o}te', "multi\nline", None, "ü, ["][i % 5], "x": [1.5, "NaN", None][i % 3],
             "tags": [["[", "]"], [], None][i % 3], "s": [{"a": i}, None][i % 2]} for i in range(3000)]
    f = tmp_path / "rows.json"
    f.write_text(json.dumps(rows, indent=2))  # elements across many lines
    skade.ok("append", "db.ja", f)
    got = sorted(catalog().load_table("db.ja").scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert len(got) == len(rows)
    for g, r in zip(got, rows):
        want = dict(r, x=math.nan if r["x"] == "NaN" else r["x"])
        assert (g["id"], g["name"], g["tags"], g["s"]) == (want["id"], want["name"], want["tags"], want["s"]), g
        assert (g["x"] is None and want["x"] is None) or repr(g["x"]) == repr(want["x"]), g
    one_line = tmp_path / "one.json"
    one_line.write_text(" [" + ",".join(json.dumps({"id": 10_000 + i}) for i in range(3)) + "] \n")
    skade.ok("append", "db.ja", one_line)
    assert len(skade.rows("db.ja")) == len(rows) + 3

    snapshots = len(skade.snapshots("db.ja"))
    for text, message in (("[]", "the input files hold no rows"), ("", "the input files hold no rows"),
                          ('[{"id": 1}] {"id": 2}', "text after the JSON array that holds the rows"),
                          ('[{"id": 1},', "the JSON array that holds the rows is not closed"),
                          ("[1, 2]", "each row must be a JSON object, but one is a JSON number"),
                          ('[\n {"id": 1},\n {\n  "id": 2.5\n }\n]', "column 'id' row 2: value 2.5 does not fit type long"),
                          ('[{"id": 1}, {"id": 1e400}]', "column 'id' row 2: a number too large for type long (1e400)"),
                          ('{"id": 1}\n"two"\n', "each row must be a JSON object, but one is a JSON string")):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        rc, out, err = skade("append", "db.ja", bad)
        assert rc == 2 and message in err and err.count("\n") == 1, (text, rc, err)
    assert len(skade.snapshots("db.ja")) == snapshots


def test_jsonl_decimals_as_numbers_or_text(skade, catalog, tmp_path):
    """A JSON number for a decimal is read from its text, so no digit is lost to a double."""
    from decimal import Decimal

    skade.ok("create-namespace", "db")
    skade.ok("create", "db.d", "--schema", "id:long!, p:decimal(10,2), big:decimal(38,0), tiny:decimal(38,37)")
    f = tmp_path / "d.jsonl"
    f.write_text('{"id": 1, "p": 2, "big": 12345678901234567890123456789012345678, '
                 '"tiny": 0.1234567890123456789012345678901234567}\n'
                 '{"id": 2, "p": 2.5, "big": "-99999999999999999999999999999999999999", "tiny": "-1E-37"}\n'
                 '{"id": 3, "p": "3.25", "big": -1e2, "tiny": null}\n')
    skade.ok("append", "db.d", f)
    want = [{"id": 1, "p": Decimal("2.00"), "big": Decimal("12345678901234567890123456789012345678"),
             "tiny": Decimal("0.1234567890123456789012345678901234567")},
            {"id": 2, "p": Decimal("2.50"), "big": Decimal("-99999999999999999999999999999999999999"),
             "tiny": Decimal("-1E-37")},
            {"id": 3, "p": Decimal("3.25"), "big": Decimal("-100"), "tiny": None}]
    assert_same_rows(skade.rows("db.d"), want, what="skade")
    assert_same_rows(catalog().load_table("db.d").scan().to_arrow(), want, what="PyIceberg")


def test_jsonl_map_column_round_trip(skade, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.m", "--schema", "id:long!, m:map<string,long>")
    data = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()),
                     "m": pa.array([[("k", 5)], None, [("a", 1), ("b", -2)], []], pa.map_(pa.string(), pa.int64()))})
    skade.ok("append", "db.m", write_parquet(data, tmp_path / "m.parquet"))
    out = tmp_path / "m.jsonl"
    skade.ok("scan", "db.m", "--format", "jsonl", "--output", out)
    skade.ok("create", "db.m2", "--schema", "id:long!, m:map<string,long>")
    rc, _, err = skade("append", "db.m2", out)
    assert rc == 0, err
    assert_same_rows(skade.rows("db.m2"), data, what="round trip")


def test_jsonl_map_objects_with_nulls_and_mixed_numbers(skade, tmp_path):
    """A map's JSON object keeps every key, a null value too (README); whole numbers and
    fractions of one map are all doubles; a value of another JSON kind is refused by name."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.m", "--schema", "id:long!, m:map<string,double>")
    f = tmp_path / "m.jsonl"
    f.write_text('{"id": 1, "m": {"a": 1, "kept": null}}\n{"id": 2, "m": {"a": 2.5, "b": 3}}\n'
                 '{"id": 3, "m": {}}\n')
    skade.ok("append", "db.m", f)
    want = pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                     "m": pa.array([[("a", 1.0), ("kept", None)], [("a", 2.5), ("b", 3.0)], []],
                                   pa.map_(pa.string(), pa.float64()))})
    assert_same_rows(skade.rows("db.m"), want, what="maps from objects")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 4, "m": {"a": "x", "b": 1}}\n')
    rc, _, err = skade("append", "db.m", bad)
    assert rc == 2 and "column 'm.value' holds a JSON string where a number is expected" in err, err
    assert skade.rows("db.m").num_rows == 3


def test_jsonl_binary_round_trip(skade, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.b", "--schema", "id:long!, bin:binary, fx:fixed(2)")
    data = pa.table({"id": pa.array([1, 2], pa.int64()),
                     "bin": pa.array([b"\x00\x01", None], pa.binary()),
                     "fx": pa.array([b"\xff\x00", None], pa.binary(2))})
    skade.ok("append", "db.b", write_parquet(data, tmp_path / "b.parquet"))
    out = tmp_path / "b.jsonl"
    skade.ok("scan", "db.b", "--format", "jsonl", "--output", out)
    skade.ok("create", "db.b2", "--schema", "id:long!, bin:binary, fx:fixed(2)")
    rc, _, err = skade("append", "db.b2", out)
    assert rc == 0, err
    assert_same_rows(skade.rows("db.b2"), data, what="round trip")


def test_jsonl_round_trip_of_other_types(skade, tmp_path):
    """Everything but binary, fixed and maps survives scan --format jsonl -> append."""
    skade.ok("create-namespace", "db")
    spec = ("id:long!, b:boolean, i:int, l:long, f:float, d:double, dec:decimal(10,2), dt:date, tm:time, "
            "ts:timestamp, tstz:timestamptz, s:string, req:string!, u:uuid, tags:list<string>, "
            "addr:struct<city:string,zip:int>")
    cols = [c.split(":")[0].strip() for c in spec.split(", ")]
    skade.ok("create", "db.a", "--schema", spec)
    skade.ok("create", "db.b", "--schema", spec)
    data = all_types_table(50, seed=77).select(cols)
    # NaN has no JSON form
    f = pa.array([None if (v is not None and v != v) else v for v in data.column("f").to_pylist()], pa.float32())
    data = data.set_column(cols.index("f"), "f", f)
    skade.ok("append", "db.a", write_parquet(data, tmp_path / "a.parquet"))
    out = tmp_path / "a.jsonl"
    skade.ok("scan", "db.a", "--format", "jsonl", "--output", out)
    skade.ok("append", "db.b", out)
    assert_same_rows(skade.rows("db.b"), skade.rows("db.a"), what="jsonl round trip")


def test_table_properties_are_checked_where_they_are_set(skade, catalog):
    """A value skade could not use is refused when it is set (create --property, alter
    set-property), naming each, instead of the write falling back to a default; other keys
    pass as they are, and alter sets and removes them in one commit."""
    skade.ok("create-namespace", "db")
    rc, out, err = skade("create", "db.p", "--schema", "id:long!", "--property", "write.delete.mode=copy_on_write",
                         "--property", "write.target-file-size-bytes=512MB", "--property", "format-version=1",
                         "--property", "write.parquet.compression-codec=brotli")
    assert rc == 2 and out == "", err
    for part in ("write.delete.mode=copy_on_write: it takes merge-on-read, copy-on-write",
                 "write.target-file-size-bytes=512MB: it takes a positive whole number",
                 "format-version=1: it takes 2 or 3", "write.parquet.compression-codec=brotli: it takes zstd, snappy"):
        assert part in err, (part, err)
    rc, _, err = skade("describe", "db.p")
    assert rc != 0 and "does not exist" in err
    skade.ok("create", "db.p", "--schema", "id:long!", "--property", "format-version=2",
             "--property", "write.parquet.compression-codec=ZSTD", "--property", "team=core")
    skade.ok("alter", "db.p", "set-property", "commit.retry.num-retries=0", "unset-property", "team",
             "set-property", "x.y=a=b")
    props = catalog().load_table("db.p").properties
    assert props["commit.retry.num-retries"] == "0" and props["x.y"] == "a=b" and "team" not in props
    for args, message in [
        (("set-property", "write.parquet.row-group-limit=-1"), "it takes a positive whole number"),
        (("set-property", "skade.write.parquet.compression-min-saving-percent=101"), "from 0 to 100"),
        (("set-property", "format-version=4"), "format-version=4: it takes 2 or 3"),
        (("set-property", "novalue"), "alter set-property takes KEY=VALUE, not 'novalue'"),
        (("set-property", "a=1", "unset-property", "a"), "property a is both set and removed"),
        (("set-property", "a=1", "add-column", "x", "int"), "property changes are a commit of their own"),
    ]:
        rc, _, err = skade("alter", "db.p", *args)
        assert rc == 2 and message in err, (args, err)
    assert catalog().load_table("db.p").properties == props


def test_identifier_fields_set_and_unset_by_alter(skade, catalog, tmp_path):
    """A table made without identifier fields (here, or by another tool) gets them by alter,
    in the same commit as other schema changes, and upserts by them; Iceberg's rules for
    them are checked, and PyIceberg sees the same identifier fields."""
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.si", "--schema", "id:long, k:string!, f:double!, v:int")
    (tmp_path / "a.csv").write_text("id,k,f,v\n1,a,1,1\n2,b,2,2\n")
    skade.ok("append", "db.si", tmp_path / "a.csv")
    (tmp_path / "u.csv").write_text("id,k,f,v\n1,a,1,10\n")
    rc, _, err = skade("upsert", "db.si", tmp_path / "u.csv")
    assert rc == 2 and "has no identifier fields (give them with alter TABLE set-identifier COLS)" in err, err
    for cols, message in [("id", "identifier column 'id' must be required"),
                          ("f", "identifier column 'f' must be a non-floating primitive"),
                          ("zz", "identifier column 'zz' is not in the schema (columns: id, k, f, v)"),
                          ("k,k", "identifier column 'k' is named twice")]:
        rc, _, err = skade("alter", "db.si", "set-identifier", cols)
        assert rc == 2 and message in err, (cols, err)
    skade.ok("alter", "db.si", "set-identifier", "k", "add-column", "note", "string")
    assert catalog().load_table("db.si").schema().identifier_field_ids == [2]
    skade.ok("upsert", "db.si", tmp_path / "u.csv")
    assert sorted((r["k"], r["v"]) for r in skade.jsonl("scan", "db.si")) == [("a", 10), ("b", 2)]
    rc, _, err = skade("alter", "db.si", "drop-column", "k")
    assert rc == 2 and "cannot drop 'k': it is an identifier column" in err, err
    # unset and make optional in one commit; then upserts are refused again
    skade.ok("alter", "db.si", "set-optional", "k", "unset-identifier")
    assert catalog().load_table("db.si").schema().identifier_field_ids == []
    rc, _, err = skade("upsert", "db.si", tmp_path / "u.csv")
    assert rc == 2 and "has no identifier fields" in err, err
