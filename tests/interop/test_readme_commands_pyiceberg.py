"""Every write command README gives, run as README runs it on a table with default properties;
after each one PyIceberg (0.12, which refuses equality deletes) loads the table and its rows
equal skade's scan, and the table holds no equality delete file.

The walk runs on the README's partitioning (day(ts), bucket(16,id)), on an unpartitioned table
and on one partitioned by its identifier only (bucket(4,id)): the last two are where skade used
to write equality deletes for upsert and delete --keys. Also: the opt-in table property
`skade.write.upsert.equality-deletes=true` writes equality deletes, skade reads them right, and
`skade compact` turns the table back into one every reader reads.

The README's partitioning also walks as a format version 3 table (`create --property
format-version=3`): its deletes are deletion vectors, one per data file at most, and its data
files' row ids (first_row_id and record count) never overlap and stay below next-row-id.
A v2 table upgraded by `alter set-property format-version=3` goes on the same way.
"""
from __future__ import annotations

import datetime as dt
import decimal
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from row_oracle import live_entries
from skade_util import assert_same_rows

T = "sales.orders"
SCHEMA = "id:long!, customer:string, ts:timestamptz, amount:decimal(10,2), tags:list<string>"
COLUMNS = ["id", "customer", "ts", "amount", "tags"]
ARROW = pa.schema([
    pa.field("id", pa.int64(), nullable=False), pa.field("customer", pa.string()),
    pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("amount", pa.decimal128(10, 2)),
    pa.field("tags", pa.list_(pa.string())),
])
UTC = dt.timezone.utc


class Orders:
    """Random orders with fresh ids (or chosen ones), in March 2024 around the README's dates."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.next_id = 1

    def row(self, id_=None, day=None):
        r = self.rng
        if id_ is None:
            id_, self.next_id = self.next_id, self.next_id + 1
        day = day if day is not None else r.randint(0, 3)
        return {
            "id": id_,
            "customer": r.choice(["ada", "bo", "cy", None]),
            "ts": dt.datetime(2024, 2, 28, r.randint(0, 23), r.randint(0, 59), tzinfo=UTC) + dt.timedelta(days=day),
            "amount": decimal.Decimal(r.randint(-5000, 50000)).scaleb(-2),
            "tags": r.choice([None, [], ["x"], ["y", None, "z"]]),
        }

    def rows(self, n, **kw):
        return [self.row(**kw) for _ in range(n)]


def write(rows, path, schema=ARROW):
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def write_keys_csv(ids, path):
    path.write_text("id\n" + "".join(f"{i}\n" for i in ids))
    return path


class Walk:
    def __init__(self, skade, catalog, warehouse, tmp_path, version=2):
        self.skade, self.catalog, self.warehouse, self.tmp = skade, catalog, warehouse, tmp_path
        self.version = version
        self.n = 0
        self.checked = []

    def file(self, stem):
        self.n += 1
        return self.tmp / f"{self.n:02}-{stem}"

    def check(self, what, ref=None, columns=None):
        """PyIceberg reads the table (or a branch) and agrees with skade, row for row."""
        args = ("--ref", ref) if ref else ()
        mine = self.skade.rows(T, *args)
        tbl = self.catalog().load_table(T)
        scan = tbl.scan(snapshot_id=tbl.metadata.refs[ref].snapshot_id) if ref else tbl.scan()
        theirs = scan.to_arrow()
        cols = columns or mine.column_names
        assert theirs.column_names == cols, what
        assert_same_rows(theirs, mine, cols, what=f"after {what}: PyIceberg vs skade")
        ids = mine.column("id").to_pylist()
        assert len(ids) == len(set(ids)), f"after {what}: duplicate ids"
        sid = tbl.metadata.refs[ref].snapshot_id if ref else None
        assert 2 not in {e["content"] for e in live_entries(self.warehouse, T, sid)}, \
            f"after {what}: equality delete files written with default properties"
        if self.version == 3:
            self.check_v3(what, ref)
        self.checked.append(what)
        return mine

    def check_v3(self, what, ref):
        tbl = self.catalog().load_table(T)
        assert tbl.metadata.format_version == 3, what
        files = self.skade.jsonl("files", T, *(("--ref", ref) if ref else ()))
        # Position delete files only from before an upgrade: v3 writes vectors.
        dvs = [f["referenced_data_file"] for f in files if f["file_format"] == "PUFFIN"]
        data = {f["file_path"] for f in files if f["content"] == "data"}
        assert len(dvs) == len(set(dvs)) and set(dvs) <= data, f"after {what}: deletion vectors {dvs}"
        # Files written before an upgrade have row ids from the first commit after it.
        spans = sorted((f["first_row_id"], f["first_row_id"] + f["record_count"]) for f in files
                       if f["content"] == "data" and f["first_row_id"] is not None)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), f"after {what}: row ids overlap: {spans}"
        assert not spans or spans[-1][1] <= tbl.metadata.next_row_id, what
        # Rows' ids (null only in files from before an upgrade, until the next commit) are distinct.
        lineage = self.skade.rows(T, *(("--ref", ref) if ref else ()), "--columns",
                                  "_row_id,_last_updated_sequence_number").to_pylist()
        ids = [r["_row_id"] for r in lineage if r["_row_id"] is not None]
        assert len(ids) == len(set(ids)) and all(0 <= i < tbl.metadata.next_row_id for i in ids), what
        assert all((r["_row_id"] is None) == (r["_last_updated_sequence_number"] is None) for r in lineage), what


@pytest.mark.parametrize("partition", [
    pytest.param("day(ts), bucket(16,id)", id="readme_partitioning"),
    pytest.param(None, id="unpartitioned"),
    pytest.param("bucket(4,id)", id="partitioned_by_identifier"),
    pytest.param("v3:day(ts), bucket(16,id)", id="readme_partitioning_format_v3"),
])
def test_pyiceberg_reads_after_every_readme_write_command(skade, catalog, warehouse, tmp_path, partition):
    gen = Orders(7)
    version = 3 if partition and partition.startswith("v3:") else 2
    partition = partition.removeprefix("v3:") if partition else partition
    w = Walk(skade, catalog, warehouse, tmp_path, version)
    skade.ok("create-namespace", "sales")
    create = ["create", T, "--schema", SCHEMA, "--identifier", "id", "--property", f"format-version={version}"]
    if partition:
        create += ["--partition", partition]
    skade.ok(*create)

    first = gen.rows(60)
    skade.ok("append", T, write(first[:30], w.file("orders.parquet")), write(first[30:], w.file("more.parquet")))
    w.check("append")

    skade.ok("delete", T, "--where", "amount < 0")
    rows = w.check("delete --where")
    assert all(r["amount"] >= 0 for r in rows.to_pylist())
    if version == 3:  # deletes of a table made v3 are vectors only, a write's in one Puffin file
        vectors = skade.jsonl("files", T, "--content", "deletes")
        assert {f["file_format"] for f in vectors} == {"PUFFIN"} and len({f["file_path"] for f in vectors}) == 1

    ids = rows.column("id").to_pylist()
    gone = ids[:4]
    skade.ok("delete", T, "--keys", write_keys_csv(gone + [10**6], w.file("keys.csv")))
    rows = w.check("delete --keys")
    assert not set(gone) & set(rows.column("id").to_pylist())

    live = rows.column("id").to_pylist()
    changes = [gen.row(id_=i) for i in live[:8]] + gen.rows(5)
    changes.insert(3, gen.row(id_=live[0]))  # a key twice: the last row wins
    skade.ok("upsert", T, write(changes, w.file("changes.parquet")))
    rows = w.check("upsert")
    assert len(rows) == len(live) + 5
    got = {r["id"]: r for r in rows.to_pylist()}
    assert got[live[0]]["amount"] == changes[3]["amount"]

    skade.ok("overwrite", T, write(gen.rows(6, day=2), w.file("day.parquet")), "--where", "ts >= '2024-03-01'")
    w.check("overwrite --where")

    skade.ok("overwrite", T, write(gen.rows(4, day=3), w.file("dyn.parquet")))
    w.check("overwrite (dynamic)")

    skade.ok("alter", T, "add-column", "note", "string", "--after", "amount")
    w.check("alter add-column")
    skade.ok("alter", T, "rename-column", "customer", "client")
    w.check("alter rename-column")
    skade.ok("alter", T, "add-partition", "bucket(8,client)")
    w.check("alter add-partition")
    later = pa.schema([f if f.name != "customer" else pa.field("client", pa.string()) for f in ARROW]
                      + [pa.field("note", pa.string())])

    def later_rows(rs):
        return [dict({("client" if k == "customer" else k): v for k, v in r.items()}, note="n") for r in rs]

    live = w.check("alter (again)").column("id").to_pylist()
    skade.ok("upsert", T, write(later_rows([gen.row(id_=i) for i in live[::3]] + gen.rows(3)), w.file("u2.parquet"),
                                later))
    w.check("upsert after evolution")
    skade.ok("delete", T, "--keys", write_keys_csv(live[1::5], w.file("keys2.csv")))
    w.check("delete --keys after evolution")
    # copy-on-write for one delete, set and unset by alter: no delete file is added
    skade.ok("alter", T, "set-property", "write.delete.mode=copy-on-write", "set-property", "owner=sales")
    assert catalog().load_table(T).properties["write.delete.mode"] == "copy-on-write"
    deletes_before = [e for e in live_entries(warehouse, T) if e["content"]]
    skade.ok("delete", T, "--where", f"id = {live[2]}")
    assert [e for e in live_entries(warehouse, T) if e["content"]] == deletes_before
    skade.ok("alter", T, "unset-property", "write.delete.mode")
    assert "write.delete.mode" not in catalog().load_table(T).properties
    before_compact = w.check("delete --where, copy-on-write by alter set-property")
    assert live[2] not in before_compact.column("id").to_pylist()

    skade.ok("compact", T, "--where", "ts >= '2024-03-01'")  # the files that may hold such rows, whole
    assert_same_rows(w.check("compact --where"), before_compact, before_compact.column_names,
                     what="compact --where changed rows")
    skade.ok("compact", T)
    after = w.check("compact")
    assert_same_rows(after, before_compact, after.column_names, what="compact changed rows")
    assert {e["content"] for e in live_entries(warehouse, T)} == {0}, "compact left delete files"

    skade.ok("append", T, write(later_rows(gen.rows(5)), w.file("a2.parquet"), later))
    w.check("append after compact")
    snaps = skade.ok("snapshots", T, "--format", "csv").strip().splitlines()
    assert len(snaps) > 10
    skade.ok("expire", T, "--older-than", "2999-01-01T00:00:00Z", "--retain-last", "3")
    w.check("expire")

    tbl = catalog().load_table(T)
    parent = tbl.metadata.snapshot_by_id(tbl.metadata.current_snapshot_id).parent_snapshot_id
    skade.ok("rollback", T, str(parent))
    rolled = w.check("rollback")
    assert_same_rows(rolled, before_compact, rolled.column_names, what="rollback to the compacted snapshot")

    skade.ok("tag", T, "create", "eod")
    skade.ok("branch", T, "create", "dev")
    skade.ok("append", T, write(later_rows(gen.rows(4)), w.file("x.parquet"), later), "--branch", "dev")
    w.check("append --branch dev", ref="dev")
    dev_ids = skade.rows(T, "--ref", "dev").column("id").to_pylist()
    skade.ok("upsert", T, write(later_rows([gen.row(id_=i) for i in dev_ids[:3]]), w.file("bu.parquet"), later),
             "--branch", "dev")
    w.check("upsert --branch dev", ref="dev")
    skade.ok("delete", T, "--keys", write_keys_csv(dev_ids[3:5], w.file("bk.csv")), "--branch", "dev")
    skade.ok("delete", T, "--where", "amount > 400", "--branch", "dev")
    dev = w.check("deletes --branch dev", ref="dev")
    main_before = w.check("main untouched by branch writes")
    assert_same_rows(main_before, rolled, main_before.column_names, what="branch writes changed main")
    skade.ok("branch", T, "fast-forward", "main", "--to", "dev")
    merged = w.check("fast-forward main to dev")
    assert_same_rows(merged, dev, merged.column_names, what="fast-forward")

    # and PyIceberg reads every snapshot that is left, as skade does
    tbl = catalog().load_table(T)
    for s in tbl.snapshots():
        theirs = tbl.scan(snapshot_id=s.snapshot_id).to_arrow()
        mine = skade.rows(T, "--snapshot", s.snapshot_id)
        assert_same_rows(theirs, mine, mine.column_names, what=f"snapshot {s.snapshot_id}")
    assert len(w.checked) >= 20


def test_equality_deletes_only_by_opt_in_and_compact_undoes_them(skade, catalog, warehouse, tmp_path):
    gen = Orders(9)
    skade.ok("create-namespace", "sales")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id",
             "--property", "skade.write.upsert.equality-deletes=true")
    base = gen.rows(40)
    skade.ok("append", T, write(base, tmp_path / "a.parquet"))
    changes = [gen.row(id_=i) for i in range(1, 11)] + gen.rows(3)
    skade.ok("upsert", T, write(changes, tmp_path / "u.parquet"))
    skade.ok("delete", T, "--keys", write_keys_csv([20, 21, 22], tmp_path / "k.csv"))
    contents = [e["content"] for e in live_entries(warehouse, T)]
    assert contents.count(2) == 2 and 1 not in contents, contents

    # skade reads them right: the model of upsert then delete
    want = {r["id"]: r for r in base}
    want.update({r["id"]: r for r in changes})
    for k in (20, 21, 22):
        del want[k]
    mine = skade.rows(T)
    assert_same_rows(mine, list(want.values()), COLUMNS, what="skade with equality deletes")
    assert_same_rows(skade.rows(T, "--where", "id <= 12"), [r for r in want.values() if r["id"] <= 12], COLUMNS,
                     what="skade filtered with equality deletes")

    # the README's warning is true: PyIceberg 0.12 refuses the table
    with pytest.raises(ValueError, match="equality deletes"):
        catalog().load_table(T).scan().to_arrow()

    # compact folds them in, after which PyIceberg reads it
    skade.ok("compact", T)
    assert {e["content"] for e in live_entries(warehouse, T)} == {0}
    assert_same_rows(catalog().load_table(T).scan().to_arrow(), list(want.values()), COLUMNS,
                     what="PyIceberg after compact")

    # a bad value is refused with one line: by create and alter, and, set by another tool,
    # by the write that reads it, which writes nothing
    for args in (("create", "sales.bad", "--schema", SCHEMA, "--property", "skade.write.upsert.equality-deletes=yes"),
                 ("alter", T, "set-property", "skade.write.upsert.equality-deletes=yes")):
        rc, out, err = skade(*args)
        assert rc == 2 and err.strip().count("\n") == 0, (args, err)
        assert "property skade.write.upsert.equality-deletes=yes: it takes true, false" in err, err
    skade.ok("create", "sales.bad", "--schema", SCHEMA, "--identifier", "id")
    skade.ok("append", "sales.bad", write(base[:3], tmp_path / "b.parquet"))
    with catalog().load_table("sales.bad").transaction() as tx:
        tx.set_properties({"skade.write.upsert.equality-deletes": "yes"})
    files = sorted(p.name for p in (warehouse / "sales.db" / "bad").rglob("*"))
    rc, out, err = skade("upsert", "sales.bad", write(base[:1], tmp_path / "b2.parquet"))
    assert rc == 2, (rc, out, err)
    assert err.strip().count("\n") == 0 and "skade.write.upsert.equality-deletes" in err and "'yes'" in err, err
    assert sorted(p.name for p in (warehouse / "sales.db" / "bad").rglob("*")) == files


def test_concurrent_deletes_keep_one_deletion_vector_per_file(skade, catalog, warehouse, tmp_path):
    """Format v3 allows one deletion vector per data file. Deletes of different rows of one file,
    run at once by separate processes, all land (a delete that lost the race reads again and
    merges the winner's vector into its own), and the table ends with one vector holding them all,
    which PyIceberg reads."""
    import subprocess

    gen = Orders(11)
    skade.ok("create-namespace", "sales")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id", "--property", "format-version=3")
    rows = gen.rows(500)
    skade.ok("append", T, write(rows, tmp_path / "all.parquet"))
    gone = [3, 77, 150, 222, 301, 499]
    procs = [subprocess.Popen([skade.binary, "--warehouse", str(warehouse), "delete", T, "--where", f"id = {i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in gone]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    files = skade.jsonl("files", T)
    vectors = [f for f in files if f["content"] == "position_deletes"]
    assert len(vectors) == 1 and vectors[0]["record_count"] == len(gone), files
    want = [r for r in rows if r["id"] not in gone]
    assert_same_rows(skade.rows(T), want, COLUMNS, what="skade after concurrent deletes")
    assert_same_rows(catalog().load_table(T).scan().to_arrow(), want, COLUMNS, what="PyIceberg after them")


def test_column_defaults_in_format_v3(skade, catalog, tmp_path):
    """`alter add-column ... --default V` on a v3 table: rows written before read as the default
    (initial-default) in skade and in PyIceberg, filters see it, writes without the column fill
    it in (write-default) while an explicit null stays null, and such a column may be required.
    JSON-lines rows fill in each key they leave out, at the top and inside structs. Binary and fixed
    defaults are given as filter literals are (0xCAFE, or text). Defaults are refused on v2 tables,
    for values that do not fit, and for struct, list and map columns."""
    skade.ok("create-namespace", "sales")
    t = "sales.accounts"
    skade.ok("create", t, "--schema", "id:long!, name:string", "--property", "format-version=3")
    (tmp_path / "a.csv").write_text("id,name\n1,ada\n2,bo\n")
    skade.ok("append", t, tmp_path / "a.csv")
    added = {"tier": ("int", "3", 3), "since": ("date!", "2024-03-01", dt.date(2024, 3, 1)),
             "active": ("boolean", "true", True), "credit": ("decimal(10,2)", "12.5", decimal.Decimal("12.50")),
             "seen": ("timestamptz", "2024-03-01 10:00:00", dt.datetime(2024, 3, 1, 10, tzinfo=UTC)),
             "note": ("string", "n/a", "n/a"), "tag": ("binary", "0xcafe", b"\xca\xfe"),
             "code": ("fixed(2)", "ok", b"ok")}
    for name, (type_, text, _) in added.items():
        skade.ok("alter", t, "add-column", name, type_, "--default", text)
    defaults = {name: value for name, (_, _, value) in added.items()}
    want = [{"id": 1, "name": "ada", **defaults}, {"id": 2, "name": "bo", **defaults}]
    columns = ["id", "name", *added]
    assert_same_rows(skade.rows(t), want, columns, what="skade: rows from before the columns")
    assert_same_rows(catalog().load_table(t).scan().to_arrow(), want, columns, what="PyIceberg: the same")
    assert_same_rows(skade.rows(t, "--where", "tier = 3 and note = 'n/a'"), want, columns, what="a filter on them")
    assert skade.rows(t, "--where", "tier is null").num_rows == 0

    (tmp_path / "b.csv").write_text("id,name,tier\n3,cy,\n")  # tier given, as null
    skade.ok("append", t, tmp_path / "b.csv")
    want.append({"id": 3, "name": "cy", **defaults, "tier": None})
    assert_same_rows(skade.rows(t), want, columns, what="skade: a write without the columns")
    assert_same_rows(catalog().load_table(t).scan().to_arrow(), want, columns, what="PyIceberg: the same")
    assert catalog().load_table(t).schema().find_field("since").required

    # JSON lines: a key a row leaves out is filled in, as a column the CSV lacks; a null stays null
    (tmp_path / "c.jsonl").write_text('{"id": 4, "name": "di", "tier": null}\n{"name": "ed", "id": 5, "note": "x"}\n')
    skade.ok("append", t, tmp_path / "c.jsonl")
    want += [{"id": 4, "name": "di", **defaults, "tier": None}, {"id": 5, "name": "ed", **defaults, "note": "x"}]
    assert_same_rows(skade.rows(t), want, columns, what="skade: JSON rows without the keys")
    assert_same_rows(catalog().load_table(t).scan().to_arrow(), want, columns, what="PyIceberg: the same")

    # a field inside a struct: rows before it read as its default, writes without it fill it in
    skade.ok("create", "sales.people", "--schema", "id:long!, addr:struct<city:string>", "--property",
             "format-version=3")
    (tmp_path / "p1.jsonl").write_text('{"id": 1, "addr": {"city": "Oslo"}}\n')
    skade.ok("append", "sales.people", tmp_path / "p1.jsonl")
    skade.ok("alter", "sales.people", "add-column", "addr.zip", "int", "--default", "150")
    later = pa.table({"id": pa.array([2, 3], pa.int64()),
                      "addr": pa.array([{"city": "Bergen"}, None], pa.struct([("city", pa.string())]))})
    pq.write_table(later, tmp_path / "p2.parquet")  # a struct without the new field
    skade.ok("append", "sales.people", tmp_path / "p2.parquet")
    (tmp_path / "p3.json").write_text('[{"id": 4, "addr": {"city": "Rome"}}, {"id": 5, "addr": {}},\n'
                                      ' {"id": 6, "addr": {"zip": null}}, {"id": 7}]')
    skade.ok("append", "sales.people", tmp_path / "p3.json")
    assert sorted(skade.rows("sales.people").to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "addr": {"city": "Oslo", "zip": 150}}, {"id": 2, "addr": {"city": "Bergen", "zip": 150}},
        {"id": 3, "addr": None}, {"id": 4, "addr": {"city": "Rome", "zip": 150}},
        {"id": 5, "addr": {"city": None, "zip": 150}}, {"id": 6, "addr": {"city": None, "zip": None}},
        {"id": 7, "addr": None}]

    skade.ok("create", "sales.old", "--schema", "id:long!")
    for table, args, message in (
            ("sales.old", ("x", "int", "--default", "1"), "column defaults need format version 3"),
            (t, ("x", "int", "--default", "many"), "cannot parse 'many' as int"),
            (t, ("x", "struct<a:int>", "--default", "1"), "defaults to columns of other types than struct<a:int>"),
            (t, ("x", "fixed(2)", "--default", "0x0a"), "cannot parse '0x0a' as fixed[2]"),
            (t, ("x", "int!"), "cannot be required"),
            (t, ("x", "int", "add-column", "y", "int", "--default", "1"), "--default goes with a single add-column")):
        rc, _, err = skade("alter", table, "add-column", *args)
        assert rc != 0 and message in err, (args, err)
    assert [f.name for f in catalog().load_table(t).schema().fields] == columns


def test_alter_upgrades_a_table_to_format_v3(skade, catalog, warehouse, tmp_path):
    """`alter set-property format-version=3` upgrades a v2 table in place: its position delete
    files stay valid, the next delete of such a data file writes a deletion vector holding the
    old positions too, the rows written before get row ids at the next commit, and PyIceberg
    reads the table after each step. A version is never lowered or unset."""
    gen = Orders(13)
    skade.ok("create-namespace", "sales")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id")
    rows = gen.rows(40)
    skade.ok("append", T, write(rows, tmp_path / "a.parquet"))
    skade.ok("delete", T, "--where", "id <= 3")
    assert [f["file_format"] for f in skade.jsonl("files", T, "--content", "deletes")] == ["PARQUET"]

    skade.ok("alter", T, "set-property", "format-version=3")
    assert "format:    Iceberg v3 (next row id 0)\n" in skade.ok("describe", T)
    tbl = catalog().load_table(T)
    assert tbl.metadata.format_version == 3 and tbl.metadata.next_row_id == 0
    w = Walk(skade, catalog, warehouse, tmp_path, 3)
    w.check("the upgrade")

    skade.ok("delete", T, "--where", "id = 10 or id = 11")
    files = skade.jsonl("files", T, "--content", "deletes")
    vector = next(f for f in files if f["file_format"] == "PUFFIN")
    assert vector["record_count"] == 5, files  # the 3 rows deleted in v2 and the 2 now
    mine = w.check("a delete after the upgrade")
    assert sorted(mine.column("id").to_pylist()) == [r["id"] for r in rows if r["id"] > 3 and r["id"] not in (10, 11)]
    assert catalog().load_table(T).metadata.next_row_id == 40  # the file written before got its row ids

    for args, message in ((("set-property", "format-version=2"), "a version cannot be lowered"),
                          (("unset-property", "format-version"), "format-version cannot be unset")):
        rc, _, err = skade("alter", T, *args)
        assert rc != 0 and message in err, (args, err)


def test_row_ids_survive_rewrites(skade, catalog, tmp_path):
    """`_row_id` and `_last_updated_sequence_number` read as columns of a v3 table: a row keeps
    both through `compact` (which writes them into its files; PyIceberg reads those files) and
    through a copy-on-write delete of other rows; a row an upsert replaces hands its id to the new
    row, which takes the upsert's sequence number, and a new key gets a new id (PyIceberg reads the
    upsert's files, which hold the ids). They are refused on v2 tables and in filters."""
    gen = Orders(19)
    skade.ok("create-namespace", "sales")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id", "--partition", "day(ts)",
             "--property", "format-version=3")
    rows = gen.rows(300)
    skade.ok("append", T, write(rows[:200], tmp_path / "a.parquet"))
    skade.ok("append", T, write(rows[200:], tmp_path / "b.parquet"))
    skade.ok("delete", T, "--where", "id <= 20")
    lineage = ["id", "_row_id", "_last_updated_sequence_number"]

    def ids():
        got = skade.rows(T, "--columns", ",".join(lineage)).to_pylist()
        return {r["id"]: (r["_row_id"], r["_last_updated_sequence_number"]) for r in got}

    before = ids()
    assert len(before) == 280 and len({v[0] for v in before.values()}) == 280
    assert {v[1] for v in before.values()} == {1, 2}  # the two appends' sequence numbers
    skade.ok("compact", T)
    assert ids() == before
    want = [r for r in rows if r["id"] > 20]
    assert_same_rows(catalog().load_table(T).scan().to_arrow(), want, COLUMNS, what="PyIceberg after compact")

    skade.ok("alter", T, "set-property", "write.delete.mode=copy-on-write")
    skade.ok("delete", T, "--where", "id = 25 or id = 250")
    after = ids()
    assert after == {k: v for k, v in before.items() if k not in (25, 250)}
    assert not [f for f in skade.jsonl("files", T) if f["content"] != "data"]  # rewritten, not deleted by vectors

    next_row_id = catalog().load_table(T).metadata.next_row_id
    changed, added = dict(rows[100], customer="zed"), dict(rows[101], id=10_000)
    skade.ok("upsert", T, write([added, changed], tmp_path / "u.parquet"))
    now = ids()
    seq = catalog().load_table(T).metadata.last_sequence_number
    assert now[changed["id"]] == (after[changed["id"]][0], seq)
    assert now[added["id"]][0] >= next_row_id and now[added["id"]][1] == seq
    assert {k: v for k, v in now.items() if k not in (changed["id"], added["id"])} == \
        {k: v for k, v in after.items() if k != changed["id"]}
    want = [r for r in want if r["id"] not in (25, 250, changed["id"])] + [changed, added]
    assert_same_rows(catalog().load_table(T).scan().to_arrow(), want, COLUMNS, what="PyIceberg after the upsert")

    skade.ok("create", "sales.old", "--schema", "id:long!")
    for table, args, message in (
            ("sales.old", ("--columns", "id,_row_id"), "_row_id is a column of format v3 tables (this table is v2)"),
            (T, ("--where", "_row_id = 1"), "unknown column '_row_id' in filter")):
        rc, _, err = skade("scan", table, *args)
        assert rc != 0 and message in err, (args, err)


@pytest.mark.parametrize("version", [2, 3])
def test_file_and_position_columns(skade, tmp_path, version):
    """`scan --columns ...,_file,_pos` gives each row's data file (as the manifest names it) and its
    position there, on v2 and v3 tables, through deletes, a filter and a limit: the row at that
    position of that file, read with pyarrow, is the row skade returned."""
    from skade_util import local_path
    gen = Orders(23)
    skade.ok("create-namespace", "sales")
    skade.ok("create", T, "--schema", SCHEMA, "--identifier", "id", "--partition", "day(ts)",
             "--property", f"format-version={version}")
    rows = gen.rows(400)
    skade.ok("append", T, write(rows[:250], tmp_path / "a.parquet"))
    skade.ok("append", T, write(rows[250:], tmp_path / "b.parquet"))
    skade.ok("delete", T, "--where", "id in (" + ",".join(str(i) for i in range(7, 401, 7)) + ")")
    files = {f["file_path"] for f in skade.jsonl("files", T, "--content", "data")}
    for args in ((), ("--where", "amount > 100 and id < 300"), ("--limit", "30")):
        got = skade.jsonl("scan", T, "--columns", "id,_file,_pos,amount", *args)
        assert got and all(r["id"] % 7 for r in got), args
        by_file = {}
        for r in got:
            by_file.setdefault(r["_file"], []).append(r)
        assert {local_path(f) for f in by_file} <= {local_path(f) for f in files}, args
        for f, hits in by_file.items():
            ids = pq.read_table(local_path(f), columns=["id"]).column("id").to_pylist()
            assert [ids[r["_pos"]] for r in hits] == [r["id"] for r in hits], (args, f)
            assert [r["_pos"] for r in hits] == sorted({r["_pos"] for r in hits}), (args, f)  # in file order
    rc, _, err = skade("scan", T, "--where", "_pos = 1")
    assert rc != 0 and "unknown column '_pos' in filter" in err, err


def test_a_broken_deletion_vector_is_named(skade, catalog, tmp_path):
    """One delete's vectors for several data files share one Puffin file. A vector whose Puffin
    file was cut short or flipped is an error naming the file and what is wrong; the scan returns
    no rows rather than rows the vector deletes."""
    gen = Orders(17)
    skade.ok("create-namespace", "sales")
    skade.ok("create", T, "--schema", SCHEMA, "--property", "format-version=3")
    rows = gen.rows(50)
    skade.ok("append", T, write(rows[:25], tmp_path / "a.parquet"), write(rows[25:], tmp_path / "b.parquet"))
    skade.ok("delete", T, "--where", "id < 5 or id > 47")
    vectors = skade.jsonl("files", T, "--content", "deletes")
    assert len(vectors) == 2 and len({v["file_path"] for v in vectors}) == 1, vectors
    assert_same_rows(catalog().load_table(T).scan().to_arrow(), [r for r in rows if 5 <= r["id"] <= 47], COLUMNS,
                     what="PyIceberg reads both vectors of one Puffin file")
    vector = min(vectors, key=lambda v: v["content_offset"])
    path = Path(vector["file_path"])
    good = path.read_bytes()

    def flipped(data: bytes, at: int) -> bytes:
        return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]

    for broken, message in ((good[: vector["content_offset"] + 6], "pass the file's end"),
                            (flipped(good, len(good) - 20), None),
                            (flipped(good, vector["content_offset"] + 8), "CRC-32 mismatch")):
        path.write_bytes(broken)
        rc, out, err = skade("scan", T, "--format", "csv")
        if message is None:  # the footer is not read: the manifest says where the blob lies
            assert rc == 0, err
            continue
        assert rc != 0 and len(out.splitlines()) <= 1, (rc, out)  # the header at most, no rows
        assert str(path) in err and message in err, err
    path.write_bytes(good)
    assert len(skade.rows(T)) == 43  # ids 1-4 and 48-50 deleted
