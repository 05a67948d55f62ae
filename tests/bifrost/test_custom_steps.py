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


def ipc_stream(table: pa.Table, as_is: bool = False) -> bytes:
    """pyarrow's stream of one batch of the rows, as the host sends them (a batch even when
    there are no rows): of a fresh copy of them, or of `table`'s own (maybe sliced) arrays."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        if as_is and table.num_rows:
            writer.write_table(table)
        else:
            writer.write_batch(pa.RecordBatch.from_pylist(table.to_pylist(), schema=table.schema))
    return sink.getvalue().to_pybytes()


def call_guest(module: Path, stream: bytes) -> bytes:
    """Runs a guest as the host does (wasmtime, here from Python), its reply's bytes."""
    import wasmtime
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    exports = wasmtime.Instance(store, wasmtime.Module.from_file(engine, str(module)), []).exports(store)
    memory = exports["memory"]
    at = exports["bifrost_alloc"](store, len(stream))
    memory.write(store, stream, at)
    packed = exports["bifrost_transform"](store, at, len(stream)) & (2**64 - 1)
    assert packed, bytes(memory.read(store, exports["bifrost_error"](store), None)).split(b"\0")[0]
    return bytes(memory.read(store, packed >> 32, (packed >> 32) + (packed & 0xFFFFFFFF)))


def framing(stream: bytes):
    """Each message's (type, metadata size, body) as pyarrow reads them, after checking the
    8-byte framing: continuation marker, metadata and body sizes multiples of 8, and the
    end-of-stream marker as the last 8 bytes."""
    import struct
    reader = pa.ipc.MessageReader.open_stream(pa.py_buffer(stream))
    out, pos = [], 0
    while True:
        try:
            m = reader.read_next_message()
        except StopIteration:
            break
        marker, size = struct.unpack_from("<Ii", stream, pos)
        body = m.body.to_pybytes() if m.body is not None else b""
        assert marker == 0xFFFFFFFF and (8 + size) % 8 == 0 and len(body) % 8 == 0, (pos, size, len(body))
        out.append((m.type, body))
        pos += 8 + size + len(body)
    assert stream[pos:] == struct.pack("<Ii", 0xFFFFFFFF, 0)
    return out


def test_wasm_guests_write_the_streams_pyarrow_writes(workdir):
    """The example guest's reply and the benchmark guest's echo, read by pyarrow: the
    expected tables, validated in full, framed on 8 bytes, and with bodies byte for byte
    those of pyarrow's own encoding of the same batch (buffers, bitmaps, padding)."""
    rows = accounts(random.Random(24), list(range(1, 61))).select(["id", "friends"])
    reply = call_guest(clang_wasm(EXAMPLE_GUEST, workdir / "friend_edges.wasm"), ipc_stream(rows))
    got = pa.ipc.open_stream(reply).read_all()
    got.validate(full=True)
    expected = derived_edges(rows)
    assert got.num_rows > 20 and got.equals(expected)
    assert [body for _, body in framing(reply)] == [body for _, body in framing(ipc_stream(expected))]

    rng = random.Random(25)
    every_type = pa.table({
        "i": pa.array([rng.choice([None, rng.randrange(-2**31, 2**31)]) for _ in range(37)], pa.int32()),
        "l": pa.array([rng.choice([None, rng.randrange(-2**63, 2**63)]) for _ in range(37)], pa.int64()),
        "d": pa.array([rng.choice([None, rng.random() * 1e6, -0.0]) for _ in range(37)], pa.float64()),
        "b": pa.array([rng.choice([None, True, False]) for _ in range(37)], pa.bool_()),
        "s": pa.array([rng.choice([None, "", "Åsgard", "x" * rng.randrange(40)]) for _ in range(37)]),
        "k": pa.array(range(37), pa.int64()),  # no nulls: no validity bitmap written
    })
    identity = clang_wasm(REPO / "bench" / "guests" / "identity.c", workdir / "identity.wasm")
    for table in (every_type, every_type.slice(3, 20), every_type.slice(0, 0)):
        # pyarrow writes a sliced string column's data whole: the guest writes what is used
        echo = call_guest(identity, ipc_stream(table, as_is=True))
        back = pa.ipc.open_stream(echo).read_all()
        back.validate(full=True)
        assert back.equals(table), table.num_rows
        assert framing(echo) == framing(ipc_stream(table)), table.num_rows


def test_guest_ipc_reader_survives_corrupt_streams(workdir):
    """arrow_ipc_guest.h's reader, built for the host under ASan and UBSan, on 20000
    corruptions each of pyarrow's stream of the five types and the example guest's reply:
    no read outside a stream, what reads writes again, and both kinds of outcome occur."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "no C compiler"
    fuzz = workdir / "guest_ipc_fuzz"
    r = subprocess.run([cc, "-std=c11", "-O1", "-g", "-Wall", "-Werror", "-fsanitize=address,undefined",
                        "-fno-sanitize-recover=all", "-fno-sanitize=alignment", "-I", str(GUEST_HEADER_DIR),
                        "-o", str(fuzz), str(HERE / "guest_ipc_fuzz.c")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rng = random.Random(26)
    five = pa.table({
        "i": pa.array([rng.choice([None, 7, -7]) for _ in range(19)], pa.int32()),
        "l": pa.array([rng.choice([None, 2**40]) for _ in range(19)], pa.int64()),
        "d": pa.array([rng.choice([None, 0.5]) for _ in range(19)], pa.float64()),
        "b": pa.array([rng.choice([None, True, False]) for _ in range(19)], pa.bool_()),
        "s": pa.array([rng.choice([None, "", "Åsgard"]) for _ in range(19)]),
    })
    seeds = [workdir / "five.arrows", workdir / "reply.arrows"]
    seeds[0].write_bytes(ipc_stream(five))
    rows = accounts(random.Random(27), list(range(1, 11))).select(["id", "friends"])
    seeds[1].write_bytes(call_guest(clang_wasm(EXAMPLE_GUEST, workdir / "friend_edges.wasm"), ipc_stream(rows)))
    r = subprocess.run([str(fuzz), "20000", *map(str, seeds)], capture_output=True, text=True, timeout=300,
                       env={"ASAN_OPTIONS": "detect_leaks=0"})
    assert r.returncode == 0, r.stderr[-3000:]
    for line in r.stdout.splitlines():
        read, refused = (int(w) for w in line.split(": ")[1].replace(" read,", "").replace(" refused", "").split())
        assert read > 0 and refused > 0, line


HOSTILE = {
    "trap": "__builtin_trap();",
    "loop": "for (volatile int i = 0;; ++i) {}",
    "hog": "for (;;) { size_t end = __builtin_wasm_memory_size(0) * 65536;"
           " __builtin_wasm_memory_grow(0, 16); *(volatile char*)end = 1; }",
    "garbage": "return ((uint64_t)0x7fff0000u << 32) | 4096;",
    "not_a_stream": "uint32_t* p = bf_alloc(64); p[0] = 7; return bf_done(p, 64);",
    # the right shape with `dst` as a string
    "wrong_schema": """
      static const int64_t src[1] = {1}; static const int32_t offsets[2] = {0, 1};
      ai_column c[2] = {bf_column("src", AI_INT64, src, 0), bf_column("dst", AI_UTF8, offsets, 0)};
      c[1].data = "9"; return bf_reply(c, 2, 1);""",
    # a well-formed reply of two rows cut 16 bytes into its end-of-stream marker and body
    "truncated": """
      static const int64_t v[2] = {1, 2}; ai_column c[1] = {bf_column("src", AI_INT64, v, 0)};
      uint64_t r = bf_reply(c, 1, 2); return r - 16;""",
    # a well-formed reply whose values buffer then points 1 MiB past the start of its body
    "outside_body": """
      static const int64_t v[2] = {1, 2}; ai_column c[1] = {bf_column("src", AI_INT64, v, 0)};
      uint64_t r = bf_reply(c, 1, 2); const uint8_t* p = (const uint8_t*)(uintptr_t)(r >> 32);
      uint32_t pos = 0; int eos; ai_message m;
      ai_next_message(p, (uint32_t)r, &pos, &m, &eos); ai_next_message(p, (uint32_t)r, &pos, &m, &eos);
      uint32_t buffers = ai_get_ref(&m.fb, m.header, AI_BATCH_BUFFERS);
      int64_t far = 1 << 20; memcpy((uint8_t*)m.fb.p + buffers + 4 + 16 * 1, &far, 8); return r;""",
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
    ("not_a_stream", {}, "the guest's reply is not an Arrow IPC stream: Invalid flatbuffers message."),
    ("truncated", {}, "the guest's reply is not an Arrow IPC stream: Expected to be able to read 16 bytes "
                      "for message body, got 8"),
    ("outside_body", {}, "the guest's reply is not an Arrow IPC stream: Read out of bounds "
                         "(offset = 1048576, size = 16) in file of size 16"),
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
