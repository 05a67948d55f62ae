"""Out-of-process `custom` steps: an Arrow Flight service (pyarrow.flight, started here as
a process of its own) and WASM guests (built here from C with Debian's clang). The
transform both run derives FRIEND edges from a comma-separated `friends` column; the
oracle derives them with plain Python string handling and builds the expected graph from
them, so neither the service nor the guest is trusted for the answer."""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from graph_util import Running, actual_graph, append, assert_same_graph, expected_graph, free_port, write_mapping

HERE = Path(__file__).parent
REPO = HERE.parent.parent
EXAMPLE_GUEST = REPO / "examples" / "wasm" / "friend_edges.c"
GUEST_HEADER_DIR = REPO / "examples" / "wasm"
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("friends", pa.string()), ("score", pa.float64())])
EDGE_SCHEMA = "src:long!, dst:long!, rank:long"


# --- the oracle ------------------------------------------------------------------------------


def accounts(rng: random.Random, ids) -> pa.Table:
    """Friends lists with blanks, empty entries, nulls and ids no row holds (placeholders)."""
    rows = []
    for i in ids:
        friends = [str(rng.choice(ids + [900, 901])) for _ in range(rng.randrange(0, 5))]
        text = rng.choice([", ", ",", " ,  "]).join(friends)
        if rng.random() < 0.2:
            text += ",,"
        rows.append({"id": i, "name": rng.choice(["Ann", "Bo", None]), "friends": rng.choice([text, text, None]),
                     "score": rng.random()})
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def derived_edges(table: pa.Table) -> pa.Table:
    out = []
    for r in table.to_pylist():
        if r["friends"] is None:
            continue
        entries = [e.strip() for e in r["friends"].split(",")]
        for rank, friend in enumerate((e for e in entries if e), start=1):
            out.append({"src": r["id"], "dst": int(friend), "rank": rank})
    return pa.Table.from_pylist(out, schema=pa.schema([("src", pa.int64()), ("dst", pa.int64()), ("rank", pa.int64())]))


ORACLE_MAPPING = {"graph": "g", "tables": [
    {"table": "db.accounts", "pipeline": [{"vertex": {"label": "Account", "id_column": "id", "properties": ["name"]}}]},
    {"table": "derived", "pipeline": [{"edge": {"type": "FRIEND", "src": {"label": "Account", "column": "src"},
                                                "dst": {"label": "Account", "column": "dst"}, "properties": ["rank"]}}]},
]}


def oracle(rows: pa.Table):
    return expected_graph(ORACLE_MAPPING, {"db.accounts": rows, "derived": derived_edges(rows)})


def mapping(runner: dict, mode: str = "full", columns=("id", "friends"), schema: str = EDGE_SCHEMA) -> dict:
    step = {"name": "friend_edges", **runner, "schema": schema,
            "output": [{"edge": {"type": "FRIEND", "src": {"label": "Account", "column": "src"},
                                 "dst": {"label": "Account", "column": "dst"}, "properties": ["rank"]}}]}
    if columns:
        step["columns"] = list(columns)
    return {"graph": "g", "tables": [{"table": "db.accounts", "mode": mode, "pipeline": [
        {"vertex": {"label": "Account", "id_column": "id", "properties": ["name"]}},
        {"custom": step}]}]}


def make_accounts(skade):
    skade.ok("create", "db.accounts", "--schema", "id:long!, name:string, friends:string, score:double",
             "--identifier", "id")


def fails(bifrost, *args) -> str:
    """A refused command: exit 2, each line of stderr one error, no crash."""
    code, out, err = bifrost(*args, timeout=120)
    assert code == 2, f"rc={code}\nstdout={out}\nstderr={err}"
    assert all(line.startswith("bifrost: error: ") for line in err.strip().splitlines()), err
    return out + err


# --- Flight ----------------------------------------------------------------------------------


class FlightService:
    """tests/bifrost/flight_service.py on a fixed port, restartable with other options."""

    def __init__(self, workdir: Path):
        self.port = free_port()
        self.workdir = workdir
        self.proc = None

    @property
    def endpoint(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def start(self, *options):
        ready = self.workdir / f"flight-ready-{time.time_ns()}"
        self.proc = subprocess.Popen([sys.executable, str(HERE / "flight_service.py"), "--port", str(self.port),
                                      "--ready-file", str(ready), *options])
        deadline = time.time() + 30
        while not ready.exists():
            assert self.proc.poll() is None, f"the Flight service exited ({self.proc.returncode})"
            assert time.time() < deadline, "the Flight service did not start"
            time.sleep(0.05)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait(10)


@pytest.fixture
def service(workdir):
    s = FlightService(workdir)
    yield s
    s.stop()


def flight(service, **settings) -> dict:
    return {"flight": {"endpoint": service.endpoint, "connect_timeout_ms": 2000, "call_timeout_ms": 30000,
                       **settings}}


def test_flight_step_builds_the_oracle_graph(skade, bifrost, workdir, service):
    make_accounts(skade)
    rows = accounts(random.Random(11), list(range(1, 41)))
    append(skade, "db.accounts", rows, workdir)
    service.start()
    m = write_mapping(workdir / "m.yaml", mapping(flight(service, batch_rows=7)))
    # the step's columns join the derived projection; `score` is never read
    assert "1 vertex step(s), 0 edge step(s), 1 custom step(s); reads id, name, friends" in \
        bifrost.ok("validate", "--mapping", m)
    whole = write_mapping(workdir / "whole.yaml", mapping(flight(service), columns=()))
    assert "reads all columns" in bifrost.ok("validate", "--mapping", whole)
    out = bifrost.ok("build", "--mapping", m)
    assert "tables failed: 0" in out, out
    assert_same_graph(oracle(rows), actual_graph(bifrost, ORACLE_MAPPING, "--mapping", m))


def test_flight_service_dying_mid_round_fails_it_and_the_next_round_catches_up(skade, bifrost, workdir, service):
    make_accounts(skade)
    rng = random.Random(12)
    first = accounts(rng, list(range(1, 21)))
    append(skade, "db.accounts", first, workdir)
    service.start()
    m = write_mapping(workdir / "m.yaml", mapping(flight(service, batch_rows=4, retries=1), mode="incremental"))
    bifrost.ok("build", "--mapping", m)
    cursor = json.loads(bifrost.ok("state", "show", "--mapping", m))
    second = accounts(rng, list(range(21, 61)))
    append(skade, "db.accounts", second, workdir)

    service.stop()
    service.start("--die-at-batch", "3")  # dies on the third of ten batches
    err = fails(bifrost, "build", "--mapping", m)
    assert f"custom step 'friend_edges' of table db.accounts: Flight service at {service.endpoint} failed " \
           "(2 attempts): cannot connect within 2000 ms" in err, err
    assert json.loads(bifrost.ok("state", "show", "--mapping", m)) == cursor  # no cursor advance
    assert_same_graph(oracle(first), actual_graph(bifrost, ORACLE_MAPPING, "--mapping", m))

    service.stop()
    err = fails(bifrost, "build", "--mapping", m)  # down: refused within the connect timeout
    assert "cannot connect within 2000 ms" in err, err
    service.start()
    bifrost.ok("build", "--mapping", m)
    assert_same_graph(oracle(pa.concat_tables([first, second])), actual_graph(bifrost, ORACLE_MAPPING, "--mapping", m))


def test_flight_reply_with_the_wrong_schema_fails_the_round(skade, bifrost, workdir, service):
    make_accounts(skade)
    append(skade, "db.accounts", accounts(random.Random(13), list(range(1, 11))), workdir)
    service.start("--wrong-schema")
    m = write_mapping(workdir / "m.yaml", mapping(flight(service)))
    err = fails(bifrost, "build", "--mapping", m)
    assert "the reply's columns (src: int64 not null, dst: string, rank: int64) are not the declared schema " \
           "(src: int64 not null, dst: int64 not null, rank: int64)" in err, err
    assert json.loads(bifrost.ok("state", "show", "--mapping", m)) == {}


def test_custom_step_settings_are_checked_when_the_mapping_is(skade, bifrost, workdir):
    make_accounts(skade)
    bad = mapping({"flight": {"endpiont": "grpc://127.0.0.1:1", "retries": "many"}}, schema="src:long!, dst:long!")
    bad["tables"][0]["pipeline"][1]["custom"]["columns"] = ["id", "nope"]
    err = fails(bifrost, "validate", "--mapping", write_mapping(workdir / "bad.yaml", bad))
    assert "flight setting 'endpoint' is missing" in err, err
    assert "unknown flight setting 'endpiont'" in err, err
    assert "flight setting 'retries' is 'many', not a whole number from 0 to 10" in err, err
    assert "custom step 'friend_edges' column 'nope' is not in the table" in err, err
    # the output binds to the declared reply, which has no `rank`
    assert "property column 'rank' is not in custom step 'friend_edges' reply (columns: src, dst)" in err, err
    err = fails(bifrost, "validate", "--mapping", write_mapping(workdir / "w.yaml", mapping(
        {"wasm": {"module": str(workdir / "missing.wasm")}})))
    assert f"WASM module '{workdir / 'missing.wasm'}' cannot be read" in err, err


# --- WASM ------------------------------------------------------------------------------------


def clang_wasm(source: Path, out: Path, *flags) -> Path:
    clang = shutil.which("clang")
    assert clang, "clang missing: run scripts/setup.sh"
    r = subprocess.run([clang, "--target=wasm32", "-O2", "-nostdlib", "-Wall", "-Werror", "-Wl,--no-entry", *flags,
                        "-I", str(GUEST_HEADER_DIR), "-o", str(out), str(source)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def wasm(module: Path, **limits) -> dict:
    return {"wasm": {"module": str(module), **limits}}


def test_wasm_example_guest_builds_and_gives_the_oracle_graph(skade, bifrost, workdir):
    make_accounts(skade)
    rows = accounts(random.Random(21), list(range(1, 81)))
    append(skade, "db.accounts", rows, workdir)
    guest = clang_wasm(EXAMPLE_GUEST, workdir / "friend_edges.wasm")
    m = write_mapping(workdir / "m.yaml", mapping(wasm(guest, fuel=10**9, timeout_ms=20000, memory_mb=32)))
    out = bifrost.ok("build", "--mapping", m)
    assert "tables failed: 0" in out, out
    assert_same_graph(oracle(rows), actual_graph(bifrost, ORACLE_MAPPING, "--mapping", m))


HOSTILE = {
    "trap": "__builtin_trap();",
    "loop": "for (volatile int i = 0;; ++i) {}",
    "hog": "for (;;) { size_t end = __builtin_wasm_memory_size(0) * 65536;"
           " __builtin_wasm_memory_grow(0, 16); *(volatile char*)end = 1; }",
    "garbage": "return ((uint64_t)0x7fff0000u << 32) | 4096;",
    "not_a_batch": "uint32_t* p = bf_alloc(64); p[0] = 7; return ((uint64_t)(uintptr_t)p << 32) | 64;",
    # the right shape with `dst` as a string
    "wrong_schema": """
      bf_header* h = bf_reply(2, 1); uint8_t* v; int64_t* src = bf_reply_column(h, 0, "src", BF_INT64, &v);
      src[0] = 1; v[0] = 1; bf_column* c = (bf_column*)(h + 1) + 1; c->type = BF_UTF8; c->name_len = 3;
      char* n = bf_section(h, 3, &c->name_off); n[0] = 'd'; n[1] = 's'; n[2] = 't';
      uint8_t* cv = bf_section(h, 1, &c->valid_off); cv[0] = 1;
      uint32_t* off = bf_section(h, 8, &c->values_off); off[0] = 0; off[1] = 1;
      char* d = bf_section(h, 1, &c->data_off); d[0] = '9'; c->data_len = 1; return bf_done(h);""",
}


def hostile_guest(workdir: Path, kind: str) -> Path:
    src = workdir / f"{kind}.c"
    src.write_text('#include "bifrost_guest.h"\n'
                   '__attribute__((export_name("bifrost_transform")))\n'
                   "uint64_t bifrost_transform(uint32_t ptr, uint32_t len) {\n"
                   f"  {HOSTILE.get(kind, '')}\n"
                   "  return 0;\n}\n")
    # "huge" asks for 64 MiB of memory before it runs at all
    flags = ["-Wl,--initial-memory=67108864"] if kind == "huge" else []
    return clang_wasm(src, workdir / f"{kind}.wasm", *flags)


@pytest.mark.parametrize("kind,limits,message", [
    ("trap", {}, "the guest trapped in bifrost_transform: wasm trap: wasm `unreachable` instruction executed "
                 "(memory in use: 0.1 of the 256 MiB limit)"),
    ("loop", {"fuel": 10**6}, "the guest ran out of fuel (1000000) in bifrost_transform"),
    ("loop", {"timeout_ms": 300}, "the guest ran past its time limit (300 ms) in bifrost_transform"),
    ("hog", {"memory_mb": 8}, "the guest trapped in bifrost_transform: wasm trap: out of bounds memory access "
                              "(memory in use: 7.1 of the 8 MiB limit)"),
    ("huge", {"memory_mb": 16}, "the guest cannot start: memory minimum size of 1024 pages exceeds memory limits"),
    ("garbage", {}, "the guest's reply (4096 bytes at 2147418112) lies outside its memory"),
    ("not_a_batch", {}, "the guest's reply is not a batch: wrong magic number"),
    ("wrong_schema", {}, "the reply's columns (src: int64, dst: string) are not the declared schema "
                         "(src: int64 not null, dst: int64 not null, rank: int64)"),
])
def test_hostile_guest_fails_the_round_with_a_clear_error(skade, bifrost, workdir, kind, limits, message):
    make_accounts(skade)
    append(skade, "db.accounts", accounts(random.Random(22), list(range(1, 11))), workdir)
    guest = hostile_guest(workdir, kind)
    m = write_mapping(workdir / "m.yaml", mapping(wasm(guest, **{"timeout_ms": 60000, **limits})))
    err = fails(bifrost, "build", "--mapping", m)
    assert f"bifrost: error: custom step 'friend_edges' of table db.accounts: {message}" in err, err
    assert json.loads(bifrost.ok("state", "show", "--mapping", m)) == {}


def test_bifrost_run_keeps_running_past_a_hostile_guest(skade, bifrost, workdir):
    """A looping guest fails every round within its time limit; the good table beside it
    keeps syncing and the process stays up."""
    make_accounts(skade)
    skade.ok("create", "db.mirror", "--schema", "id:long!, name:string, friends:string, score:double",
             "--identifier", "id")
    rows = accounts(random.Random(23), list(range(1, 21)))
    append(skade, "db.accounts", rows, workdir)
    append(skade, "db.mirror", rows, workdir)
    good = clang_wasm(EXAMPLE_GUEST, workdir / "friend_edges.wasm")
    m = mapping(wasm(good))
    bad = mapping(wasm(hostile_guest(workdir, "loop"), timeout_ms=200))["tables"][0]
    bad["table"] = "db.mirror"
    bad["pipeline"] = bad["pipeline"][1:]
    m["tables"].append(bad)
    path = write_mapping(workdir / "m.yaml", m)
    run = Running(bifrost, "--mapping", path, "--interval", "100ms", "--max-backoff", "200ms")
    try:
        run.wait_for(lambda: len(run.rounds()) >= 3, 60, "three rounds")
        assert "1 synced" in run.rounds()[0] and "1 failed" in run.rounds()[0], run.rounds()
        assert any("the guest ran past its time limit (200 ms)" in e for e in run.errors), run.errors[-3:]
        assert run.proc.poll() is None
    finally:
        assert run.stop() == 0, run.errors[-5:]
    assert_same_graph(oracle(rows), actual_graph(bifrost, ORACLE_MAPPING, "--mapping", path))
