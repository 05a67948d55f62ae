"""The standing hostile suite: what a careless or hostile user does to the CLI.

Every case asserts the exit code, a one-line message naming the problem, and that nothing
outside the warehouse changed (the file tree beside it is the same before and after).
Names and deeply nested inputs come from generators, so each rule is tried in every position.
"""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from skade_util import SKADE_BIN, Skade

MAX_NAME_BYTES = 200  # skade/catalog/names.h
MAX_TYPE_DEPTH = 32  # skade/common/nesting.h
MAX_JSON_DEPTH = 128


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder below `root` with its size and modification time."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def outside(warehouse):
    """The folder around the warehouse, with a bystander file; checked unchanged after the test."""
    root = warehouse.parent
    (root / "bystander").mkdir()
    (root / "bystander" / "keep.txt").write_text("precious\n")
    before = {k: v for k, v in tree(root).items() if not k.startswith(warehouse.name)}
    yield root
    after = {k: v for k, v in tree(root).items() if not k.startswith(warehouse.name)
             and not k.startswith("scratch")}
    before = {k: v for k, v in before.items() if not k.startswith("scratch")}
    assert after == before, "files outside the warehouse changed"


def one_line_error(rc_err, rc: int | tuple[int, ...], *words: str):
    """Asserts a failure with exit code `rc`, one line on stderr, containing `words`."""
    code, _out, err = rc_err
    codes = rc if isinstance(rc, tuple) else (rc,)
    assert code in codes, f"rc={code}, stderr={err!r}"
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got {lines!r}"
    for w in words:
        assert w.lower() in lines[0].lower(), f"{w!r} not in {lines[0]!r}"
    return lines[0]


def hostile_names() -> list[tuple[str, str]]:
    """(label, name part) pairs no namespace or table may be called."""
    parts = {
        "dotdot": "..", "traversal-start": "../esc", "traversal-middle": "a/../../esc",
        "traversal-end": "a/..", "slash": "a/b", "backslash": "a\\b", "absolute": "/tmp/esc",
        "control": "a\x01b", "newline": "a\nb", "tab": "a\tb", "delete": "a\x7fb",
        "too-long": "x" * (MAX_NAME_BYTES + 1), "bad-utf8": "a\udcffb", "c1-control": "a\u0085b",
    }
    return list(parts.items())


@pytest.mark.parametrize("label,bad", hostile_names(), ids=[n for n, _ in hostile_names()])
@pytest.mark.parametrize("where", ["namespace", "table"])
def test_hostile_names_are_refused_everywhere(skade, warehouse, outside, label, bad, where):
    skade.ok("create-namespace", "db")
    arg = bad.encode("utf-8", "surrogateescape")
    table = (b"db." + arg) if where == "table" else (arg + b".t")
    cmds = [["create", table, "--schema", "a:int"]]
    if where == "namespace":
        cmds.append(["create-namespace", arg])
    skade.ok("create", "db.src", "--schema", "a:int")
    cmds.append(["rename", "db.src", table])
    for cmd in cmds:
        p = subprocess.run([SKADE_BIN, "--warehouse", str(warehouse), *cmd], capture_output=True)
        err = p.stderr.decode("utf-8", "backslashreplace")
        assert p.returncode == 2 and len(err.strip().splitlines()) == 1, (cmd, p.returncode, err)
        assert "invalid" in err or "must be namespace.name" in err, err
    # nothing was made for the hostile name, and the tables that exist are intact
    assert skade.ok("tables", "--format", "csv").split() == ["table", "db.src"]


@pytest.mark.parametrize("name", ["søren", "表", "a-b_c", "x" * MAX_NAME_BYTES, "emoji😀"])
def test_unicode_and_long_names_are_kept_inside_the_warehouse(skade, warehouse, outside, name):
    skade.ok("create-namespace", "db")
    out = skade.ok("create", f"db.{name}", "--schema", "a:int")
    location = Path(out.strip().split(" at ", 1)[1])
    assert location.resolve().is_relative_to(warehouse.resolve())
    assert location.name == name


def test_reserved_namespaces(skade, outside):
    one_line_error(skade("create-namespace", "catalog"), 2, "reserved")
    one_line_error(skade("create-namespace", "_skade"), 2, "reserved")
    one_line_error(skade("create", "_skade.x", "--schema", "a:int"), 2, "reserved")


def test_symlink_out_of_the_warehouse_is_not_written_through(skade, warehouse, outside):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "a:int")
    target = outside / "scratch"
    target.mkdir()
    (warehouse / "db.db" / "t" / "data").symlink_to(target, target_is_directory=True)
    csv = outside / "scratch-in.csv"
    csv.write_text("a\n1\n")
    one_line_error(skade("append", "db.t", csv), 2, "refusing to write", "outside")
    assert list(target.iterdir()) == []
    csv.unlink()


def test_rename_then_recreate_gets_its_own_folder_and_orphans_spare_the_other(skade, warehouse, tmp_path, outside):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.r", "--schema", "a:int")
    src = tmp_path / "scratch-r.csv"
    src.write_text("a\n1\n2\n")
    skade.ok("append", "db.r", src)
    skade.ok("rename", "db.r", "db.r2")
    out = skade.ok("create", "db.r", "--schema", "a:int")
    new_location = Path(out.strip().split(" at ", 1)[1])
    assert new_location != warehouse / "db.db" / "r"
    before = tree(warehouse / "db.db" / "r")
    skade.ok("orphans", "db.r", "--older-than", "2999-01-01", "--delete")
    skade.ok("orphans", "db.r2", "--older-than", "2999-01-01", "--delete")
    assert tree(warehouse / "db.db" / "r") == before
    assert "(2 rows)" in skade.ok("scan", "db.r2")


def test_missing_or_uninitialised_warehouse_is_not_created(tmp_path, outside):
    typo = tmp_path / "scratch-typo"
    s = Skade(typo)
    for cmd in (["tables"], ["namespaces"], ["scan", "db.t"], ["create-namespace", "x"]):
        one_line_error(s(*cmd), 2, "does not exist", "skade init")
    assert not typo.exists()
    typo.mkdir()
    one_line_error(s("tables"), 2, "has no catalog", "skade init")
    assert list(typo.iterdir()) == []


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage", "foreign-sqlite"])
def test_damaged_catalog_is_an_error_never_reinitialised(skade, warehouse, outside, damage):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "a:int")
    path = warehouse / "catalog.db"
    for extra in ("catalog.db-wal", "catalog.db-shm"):
        (warehouse / extra).unlink(missing_ok=True)
    if damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:60])
    elif damage == "garbage":
        path.write_bytes(b"not a database at all\n" * 10)
    else:
        path.unlink()
        con = sqlite3.connect(path)
        con.execute("create table unrelated (x int)")
        con.commit()
        con.close()
    damaged = path.read_bytes()
    for cmd in (["tables"], ["create-namespace", "y"], ["init"]):
        one_line_error(skade(*cmd), 2, "catalog")
    assert path.read_bytes() == damaged, "the damaged catalog was rewritten"


def write_rows(tmp_path: Path, name: str, n: int) -> Path:
    p = tmp_path / f"scratch-{name}.csv"
    p.write_text("id,d\n" + "".join(f"{i},{i}.25\n" for i in range(n)))
    return p


@pytest.fixture
def table(skade, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.o", "--schema", "id:long, d:decimal(10,2)")
    skade.ok("append", "db.o", write_rows(tmp_path, "a", 3))
    skade.ok("append", "db.o", write_rows(tmp_path, "b", 2))
    return "db.o"


def data_files(warehouse: Path) -> list[Path]:
    return sorted((warehouse / "db.db" / "o" / "data").glob("*.parquet"))


def test_output_inside_the_warehouse_is_refused(skade, warehouse, table, outside):
    victim = data_files(warehouse)[0]
    before = victim.read_bytes()
    for fmt in ("parquet", "csv", "jsonl"):
        one_line_error(skade("scan", table, "--format", fmt, "--output", victim), 2, "inside the warehouse")
        one_line_error(skade("changes", table, "--from", "0", "--format", fmt, "--output", victim), 2,
                       "inside the warehouse")
    assert victim.read_bytes() == before
    assert "(5 rows)" in skade.ok("scan", table)


def test_data_file_changed_after_commit_is_reported(skade, warehouse, table, outside):
    victim = data_files(warehouse)[0]
    pq.write_table(pq.read_table(victim).slice(0, 1), victim)
    line = one_line_error(skade("scan", table), 2, victim.name, "manifest")
    assert "rows" in line
    one_line_error(skade("scan", table, "--format", "none"), 2, victim.name)


def test_write_on_a_missing_manifest_is_refused(skade, warehouse, table, tmp_path, outside):
    manifests = [m for m in (warehouse / "db.db" / "o" / "metadata").glob("*.avro") if not m.name.startswith("snap-")]
    manifests[0].unlink()
    meta_before = skade.ok("describe", table).splitlines()[2]
    for cmd in (["append", table, write_rows(tmp_path, "c", 1)], ["overwrite", table, write_rows(tmp_path, "d", 1)]):
        one_line_error(skade(*cmd), 2, manifests[0].name)
    assert skade.ok("describe", table).splitlines()[2] == meta_before


def test_failed_multi_file_append_leaves_no_files(skade, warehouse, table, tmp_path, outside):
    before = data_files(warehouse)
    bad = tmp_path / "scratch-bad.csv"
    bad.write_text("id,d\n1,1.505\n")
    one_line_error(skade("append", table, write_rows(tmp_path, "e", 2), write_rows(tmp_path, "f", 2), bad), 2,
                   "1.505")
    assert data_files(warehouse) == before


def test_double_to_decimal_is_refused_like_text(skade, table, tmp_path, outside):
    lossy = tmp_path / "scratch-lossy.parquet"
    pq.write_table(pa.table({"id": pa.array([9], pa.int64()), "d": pa.array([2.999])}), lossy)
    one_line_error(skade("append", table, lossy), 2, "2.999", "decimal(10,2)")
    exact = tmp_path / "scratch-exact.parquet"
    pq.write_table(pa.table({"id": pa.array([10, 11], pa.int64()), "d": pa.array([1.1, 2.5])}), exact)
    skade.ok("append", table, exact)
    out = skade.ok("scan", table, "--where", "id >= 10", "--format", "csv")
    assert out.split()[1:] == ["10,1.10", "11,2.50"]


def nested_type(depth: int) -> str:
    return "list<" * depth + "int" + ">" * depth


@pytest.mark.parametrize("depth,ok", [(MAX_TYPE_DEPTH, True), (MAX_TYPE_DEPTH + 1, False), (16000, False)])
def test_schema_depth_limit(skade, outside, depth, ok):
    skade.ok("create-namespace", "db")
    res = skade("create", "db.deep", "--schema", f"a:{nested_type(depth)}")
    if ok:
        assert res[0] == 0, res
    else:
        one_line_error(res, 2, f"deeper than {MAX_TYPE_DEPTH}")


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH + 1, 30000])
def test_jsonl_depth_limit(skade, table, tmp_path, outside, depth):
    p = tmp_path / "scratch-deep.jsonl"
    p.write_text('{"id":1,"zz":' + "[" * depth + "]" * depth + "}\n")
    res = skade("append", table, p)
    if depth <= MAX_JSON_DEPTH - 1:
        assert "deeper" not in res[2], res  # within the limit: read (or refused for another reason)
    else:
        one_line_error(res, 2, "line 1", f"deeper than {MAX_JSON_DEPTH}")


def test_metadata_json_depth_limit(skade, warehouse, table, outside):
    con = sqlite3.connect(warehouse / "catalog.db")
    (loc,) = con.execute("select metadata_location from iceberg_tables where table_name='o'").fetchone()
    con.close()
    meta = Path(loc.replace("file://", ""))
    doc = json.loads(meta.read_text())
    doc["properties"]["deep"] = "x"
    text = json.dumps(doc).replace('"deep": "x"', '"deep": ' + "[" * 5000 + "]" * 5000)
    meta.write_text(text)
    one_line_error(skade("scan", table), 2, meta.name, "deeper than")


def test_openlineage_event_depth_limit(skade, tmp_path, outside):
    p = tmp_path / "scratch-ol.jsonl"
    p.write_text('{"eventTime":"2026-01-01T00:00:00Z","x":' + "[" * 10000 + "]" * 10000 + "}\n")
    rc, out, err = skade("lineage", "ingest", p)
    assert rc == 2 and "line 1" in err and "deeper than" in err, err


@pytest.mark.parametrize("cmd", [["scan", "db.o"], ["tables"], ["snapshots", "db.o"], ["log"]])
def test_full_disk_on_stdout(skade, warehouse, table, outside, cmd):
    with open("/dev/full", "w") as full:
        p = subprocess.run([SKADE_BIN, "--warehouse", str(warehouse), *cmd], stdout=full, stderr=subprocess.PIPE)
    err = p.stderr.decode()
    assert p.returncode == 2 and "No space left on device" in err and len(err.strip().splitlines()) == 1, err


def test_closed_stdout_and_broken_pipe(skade, warehouse, tmp_path, outside):
    p = subprocess.run(f"'{SKADE_BIN}' --warehouse '{warehouse}' tables >&-", shell=True, capture_output=True)
    assert p.returncode == 2 and b"standard output is closed" in p.stderr
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.big", "--schema", "id:long, d:decimal(10,2)")
    skade.ok("append", "db.big", write_rows(tmp_path, "big", 200000))
    proc = subprocess.Popen([SKADE_BIN, "--warehouse", str(warehouse), "scan", "db.big", "--format", "csv"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 2 and "Broken pipe" in err and len(err.strip().splitlines()) == 1, err


def test_changes_after_compact_and_expire(skade, table, outside):
    skade.ok("compact", table)
    skade.ok("expire", table, "--retain-last", "1")
    one_line_error(skade("changes", table, "--from", "0", "--format", "csv"), 2, "expired", "--from")
    current = skade.ok("snapshots", table, "--format", "csv").splitlines()[-1].split(",")[0]
    out = skade.ok("changes", table, "--from", current, "--format", "csv")
    assert out.splitlines() == ["id,d,_change_type,_change_ordinal,_commit_snapshot_id"]


def test_lineage_ingest_of_a_directory(skade, tmp_path, outside):
    one_line_error(skade("lineage", "ingest", tmp_path), 2, "is a directory")


def test_lineage_flush_to_a_refusing_endpoint_keeps_the_events(skade, table, tmp_path, outside):
    got: list[int] = []
    answer = {"code": 404}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            got.append(answer["code"])
            self.send_response(answer["code"])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        skade.ok("config", "set", "lineage.openlineage.url", f"http://127.0.0.1:{server.server_address[1]}")
        one_line_error(skade("lineage", "flush"), 2, "404")
        refused = len(got)
        answer["code"] = 201
        skade.ok("lineage", "flush")
        delivered = got[refused:]
        assert len(delivered) >= 3 and all(c == 201 for c in delivered)  # create + 2 appends, resent
        before = len(got)
        skade.ok("lineage", "flush")
        assert len(got) == before  # and not again
    finally:
        server.shutdown()
        server.server_close()


def test_watch_of_a_missing_table(skade, outside):
    for args in (["watch", "db.nope"], ["watch", "db.nope", "--changes"]):
        one_line_error(skade(*args, timeout=10), 2, "db.nope", "does not exist")


def test_watch_changes_follows_a_rename_and_names_the_engine(skade, warehouse, table, tmp_path, outside):
    proc = subprocess.Popen([SKADE_BIN, "--warehouse", str(warehouse), "watch", table, "--changes"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1)
        skade.ok("rename", table, "db.o2")
        skade.ok("append", "db.o2", write_rows(tmp_path, "g", 1))
        lines = []
        deadline = time.time() + 20
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(json.loads(line))
            if "cursor" in lines[-1]:
                break
        commit = lines[-1]
        assert commit["table"] == "db.o2" and commit["engine"] == "skade", lines
        log = json.loads(skade.ok("log", "--format", "jsonl").strip().splitlines()[-1])
        assert log["commit_seq"] == commit["commit_seq"] and log["committed_at"] == commit["committed_at"]
        assert [r["_change_type"] for r in lines[:-1]] == ["INSERT"]
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("args,words", [
    (["frobnicate"], ["unknown command 'frobnicate'"]),
    (["scan", "db.o", "--limit", "-1"], ["--limit", ">= 0", "-1"]),
    (["compact", "db.o", "--target-file-size", "0"], ["--target-file-size", ">= 1"]),
    (["scan", "db.o", "--snapshot", "99999999999999999999"], ["99999999999999999999", "out of range"]),
    (["scan"], ["TABLE"]),
])
def test_usage_errors_are_one_line(skade, table, outside, args, words):
    one_line_error(skade(*args), 1, *words)


def test_largest_valid_count_is_accepted(skade, table, outside):
    assert skade.ok("expire", table, "--retain-last", "9223372036854775807").startswith("expired 0 snapshots")


def test_csv_header_naming_a_column_twice(skade, table, tmp_path, outside):
    p = tmp_path / "scratch-dup.csv"
    p.write_text("id,id\n1,2\n")
    one_line_error(skade("append", table, p), 2, "'id' appears twice")


def test_rows_are_counted_from_one_in_every_format(skade, table, tmp_path, outside):
    csv = tmp_path / "scratch-rows.csv"
    csv.write_text("id,d\n1,1.00\n2,oops\n")
    jsonl = tmp_path / "scratch-rows.jsonl"
    jsonl.write_text('{"id":1,"d":"1.00"}\n{"id":2,"d":"oops"}\n')
    for p in (csv, jsonl):
        one_line_error(skade("append", table, p), 2, "row 2", "oops")


def test_cells_larger_than_a_read_block(skade, tmp_path, outside):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.wide", "--schema", "id:long, s:string")
    big = "x" * (6 << 20)
    csv = tmp_path / "scratch-wide.csv"
    csv.write_text(f"id,s\n1,{big}\n2,small\n")
    jsonl = tmp_path / "scratch-wide.jsonl"
    jsonl.write_text(json.dumps({"id": 3, "s": big}) + "\n")
    skade.ok("append", "db.wide", csv)
    skade.ok("append", "db.wide", jsonl)
    assert "3 rows" in skade.ok("scan", "db.wide", "--format", "none")


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs: a disk that fills up (mounting needs root, which CI and the set-up have)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], check=True)
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(path: Path, leave: int = 0) -> None:
    """Writes `path` until the disk is full, then gives back `leave` bytes."""
    # Unbuffered: a buffered file keeps what the last write could not place and raises
    # again when closed, depending on how the free space divides into chunks.
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass
    if leave:
        path.write_bytes(path.read_bytes()[:-leave])


def test_full_disk_names_the_reason_and_loses_nothing(small_disk, tmp_path):
    s = Skade(small_disk / "wh")
    s.ok("init")
    s.ok("create-namespace", "db")
    s.ok("create", "db.t", "--schema", "id:long, s:string")
    first = tmp_path / "scratch-first.csv"
    first.write_text("id,s\n1,a\n2,b\n")
    s.ok("append", "db.t", first)
    filler = small_disk / "filler"
    fill(filler, leave=200_000)
    big = tmp_path / "scratch-big.csv"
    big.write_text("id,s\n" + "".join(f"{i},{os.urandom(60).hex()}\n" for i in range(20000)))  # incompressible
    rc, _, err = s("append", "db.t", big)
    assert rc == 2 and "No space left on device" in err and len(err.strip().splitlines()) == 1, err
    out = small_disk / "out.csv"
    filler.unlink()
    s.ok("append", "db.t", big)  # room again
    fill(filler)
    rc, _, err = s("scan", "db.t", "--format", "csv", "--output", out)
    assert rc == 2 and "No space left on device" in err, err
    filler.unlink()
    assert "20002 rows" in s.ok("scan", "db.t", "--format", "none")
