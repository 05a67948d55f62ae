"""Helpers for the Bifröst tests: running bifrost, a private graph server, and the
offline oracle that computes the expected graph from the tables."""
from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
BIFROST_BIN = os.environ.get("BIFROST_BIN", str(ROOT / "build" / "bin" / "bifrost"))
FALKORDB_MODULE = os.environ.get("BIFROST_FALKORDB_MODULE", str(ROOT / ".deps" / "falkordb" / "falkordb.so"))


class Bifrost:
    """Runs the bifrost binary against one warehouse; calls return (rc, stdout, stderr)."""

    def __init__(self, warehouse: Path, binary: str = BIFROST_BIN):
        self.warehouse = Path(warehouse)
        self.binary = binary

    def cmd(self, *args) -> list[str]:
        return [self.binary, "--warehouse", str(self.warehouse), *[str(a) for a in args]]

    def __call__(self, *args, timeout: float = 300):
        p = subprocess.run(self.cmd(*args), capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="backslashreplace"), p.stderr.decode(errors="backslashreplace")

    def ok(self, *args, **kw) -> str:
        rc, out, err = self(*args, **kw)
        assert rc == 0, f"bifrost {' '.join(map(str, args))} -> rc={rc}\nstdout={out}\nstderr={err}"
        return out

    def query(self, cypher: str, *graph_args) -> list[dict]:
        out = self.ok("query", *graph_args, cypher)
        return [json.loads(line) for line in out.splitlines() if line.strip()]


class GraphServer:
    """valkey-server with the FalkorDB module on a private unix socket (or a free
    loopback port), stopped by stop()."""

    def __init__(self, tcp: bool = False):
        self.dir = Path(tempfile.mkdtemp(prefix="bfg", dir="/tmp"))
        self.socket = self.dir / "s.sock"
        self.port = free_port() if tcp else 0
        self.proc = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}" if self.port else f"unix://{self.socket}"

    def start(self):
        args = [shutil.which("valkey-server") or "valkey-server", "--port", str(self.port),
                "--save", "", "--appendonly", "no", "--dir", str(self.dir),
                "--loadmodule", FALKORDB_MODULE]
        if not self.port:
            args[3:3] = ["--unixsocket", str(self.socket), "--unixsocketperm", "700"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.ping():
                return
            assert self.proc.poll() is None, "valkey-server with FalkorDB exited at start-up"
            time.sleep(0.05)
        raise AssertionError("graph server did not come up")

    def ping(self) -> bool:
        try:
            if self.port:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            else:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(0.5)
                s.connect(str(self.socket))
            s.sendall(b"PING\r\n")
            ok = s.recv(16).startswith(b"+PONG")
            s.close()
            return ok
        except OSError:
            return False

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def relay_bytes(src, dst):
    """Copies what `src` receives to `dst` until either end closes, then shuts both down."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# How write_mapping writes: as YAML or RON, and reading the warehouse's tables from
# the files or through a REST catalog (`rest` is the base URL of a `skade serve` of
# it). Set per test by the `mapping_variant` fixture (conftest.py).
VARIANT = {"format": "yaml", "rest": None}


def write_mapping(path: Path, mapping: dict) -> Path:
    """Writes the mapping in the test's variant (YAML is a superset of JSON: the dict is
    written as JSON; RON by to_ron, then as .ron) and checks that `bifrost convert`
    round-trips it: every mapping a test uses goes YAML -> RON -> YAML unchanged."""
    if VARIANT["rest"]:
        mapping = {**mapping, "tables": [
            t if "source" in t else {**t, "source": f"rest:{VARIANT['rest']}"} for t in mapping["tables"]]}
    if VARIANT["format"] == "ron":
        path = path.with_suffix(".ron")
        path.write_text(to_ron(mapping))
    else:
        path.write_text(json.dumps(mapping, indent=2))
    check_convert_round_trip(path)
    return path


def check_convert_round_trip(path: Path):
    def convert(f, to):
        p = subprocess.run([BIFROST_BIN, "convert", str(f), "--to", to], capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    rc, yaml_text, err = convert(path, "yaml")
    if rc != 0:
        return  # a mapping the test means to be refused: its own assertions say how
    rc, ron_text, err = convert(path, "ron")
    assert rc == 0, f"convert --to ron failed for a mapping that loads: {err}"
    ron_file = path.with_name(path.stem + ".roundtrip.ron")
    ron_file.write_text(ron_text)
    rc, back, err = convert(ron_file, "yaml")
    ron_file.unlink()
    assert rc == 0, f"the RON convert wrote does not load: {err}\n{ron_text}"
    assert back == yaml_text, f"YAML -> RON -> YAML changed the mapping:\n{yaml_text}\n{back}"


def to_ron(value, key: str | None = None) -> str:
    """The mapping as RON, spelled differently from bifrost's own writer (plain structs,
    `(vertex: (...))` steps, quoted modes), so the reader is tested on both styles."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[\n" + "".join(f"  {to_ron(v)},\n" for v in value) + "]"
    if isinstance(value, dict):
        if key == "rename":  # column names need not be identifiers: a RON map
            return "{" + ", ".join(f"{json.dumps(k)}: {to_ron(v)}" for k, v in value.items()) + "}"
        return "(" + ", ".join(f"{k}: {to_ron(v, k)}" for k, v in value.items()) + ")"
    raise TypeError(f"no RON for {value!r}")


def append(skade, table: str, data: pa.Table, tmpdir: Path):
    f = tmpdir / f"in-{time.time_ns()}.parquet"
    pq.write_table(data, f)
    skade.ok("append", table, f)
    f.unlink()


# --- the oracle ------------------------------------------------------------------------------


def _norm(v):
    """A table value as the graph stores it (see the sink's value rules)."""
    if v is None:
        return None
    if isinstance(v, float):
        return v
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if hasattr(v, "isoformat"):
        return v  # compared after parsing the graph's ISO text
    return v


def _step(step: dict):
    (kind, body), = step.items()
    return kind, body


def _one_or_many(body, one, many):
    if one in body:
        return [body[one]]
    return list(body.get(many, []))


def vertex_keys(mapping: dict) -> dict[str, list[str]]:
    keys = {}
    for t in mapping["tables"]:
        for step in t["pipeline"]:
            kind, body = _step(step)
            if kind == "vertex":
                rename = body.get("rename", {})
                keys[body["label"]] = [rename.get(c, c) for c in _one_or_many(body, "id_column", "id_columns")]
    return keys


def expected_graph(mapping: dict, tables: dict[str, pa.Table]):
    """Nodes {(label, key tuple): props} and edges {(type, src, dst, edge key): props}
    that a full build of `tables` must produce: last row wins per key, null
    properties are absent, a null endpoint is no edge, endpoints exist as vertices."""
    vkeys = vertex_keys(mapping)
    nodes: dict = {}
    edges: dict = {}

    def node(label, key_names, key_values):
        k = (label, tuple(key_values))
        props = nodes.setdefault(k, {})
        props.update(dict(zip(key_names, key_values)))
        return k

    for t in mapping["tables"]:
        rows = tables[t["table"]].to_pylist()
        for step in t["pipeline"]:
            kind, body = _step(step)
            rename = body.get("rename", {})
            if kind == "vertex":
                ids = _one_or_many(body, "id_column", "id_columns")
                for r in rows:
                    k = node(body["label"], [rename.get(c, c) for c in ids], [r[c] for c in ids])
                    for c in body.get("properties", []):
                        name = rename.get(c, c)
                        if r[c] is None:
                            nodes[k].pop(name, None)
                        else:
                            nodes[k][name] = _norm(r[c])
            else:
                src_cols = _one_or_many(body["src"], "column", "columns")
                dst_cols = _one_or_many(body["dst"], "column", "columns")
                key_cols = _one_or_many(body, "key_column", "key_columns")
                src_keys = _one_or_many(body["src"], "key", "keys") or vkeys.get(body["src"]["label"], ["id"])
                dst_keys = _one_or_many(body["dst"], "key", "keys") or vkeys.get(body["dst"]["label"], ["id"])
                for r in rows:
                    vals = [r[c] for c in src_cols + dst_cols + key_cols]
                    if any(v is None for v in vals):
                        continue
                    s = node(body["src"]["label"], src_keys, [r[c] for c in src_cols])
                    d = node(body["dst"]["label"], dst_keys, [r[c] for c in dst_cols])
                    ek = tuple(r[c] for c in key_cols)
                    props = {rename.get(c, c): r[c] for c in key_cols}
                    props.update({rename.get(c, c): _norm(r[c]) for c in body.get("properties", []) if r[c] is not None})
                    edges[(body["type"], s, d, ek)] = props
    return nodes, edges


def actual_graph(bifrost: Bifrost, mapping: dict, *graph_args):
    """The graph read back, in the oracle's shape."""
    vkeys = vertex_keys(mapping)
    edge_keys = {}
    for t in mapping["tables"]:
        for step in t["pipeline"]:
            kind, body = _step(step)
            if kind in ("edge", "fk_edges"):
                edge_keys[body["type"]] = [body.get("rename", {}).get(c, c)
                                           for c in _one_or_many(body, "key_column", "key_columns")]

    def key_of(labels, props):
        label = labels[0]
        return (label, tuple(props.get(k) for k in vkeys.get(label, ["id"])))

    nodes = {}
    for row in bifrost.query("MATCH (n) RETURN labels(n) AS l, properties(n) AS p", *graph_args):
        k = key_of(row["l"], row["p"])
        assert k not in nodes, f"duplicate vertex {k}"
        nodes[k] = row["p"]
    edges = {}
    q = "MATCH (a)-[e]->(b) RETURN type(e) AS t, labels(a) AS al, properties(a) AS a, labels(b) AS bl, properties(b) AS b, properties(e) AS p"
    for row in bifrost.query(q, *graph_args):
        ek = tuple(row["p"].get(k) for k in edge_keys.get(row["t"], []))
        k = (row["t"], key_of(row["al"], row["a"]), key_of(row["bl"], row["b"]), ek)
        assert k not in edges, f"duplicate edge {k}"
        edges[k] = row["p"]
    return nodes, edges


def _same_value(expected, actual) -> bool:
    if isinstance(expected, bool) or expected is None:
        return expected == actual
    if isinstance(expected, float):
        return isinstance(actual, (int, float)) and math.isclose(expected, actual, rel_tol=1e-13, abs_tol=1e-300)
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            _same_value(e, a) for e, a in zip(expected, actual))
    if hasattr(expected, "isoformat"):
        import datetime as dt
        if not isinstance(actual, str):
            return False
        parsed = (dt.datetime if isinstance(expected, dt.datetime) else dt.date).fromisoformat(actual)
        return parsed == expected
    return expected == actual


def assert_same_graph(expected, actual):
    for what, want, have in (("vertex", expected[0], actual[0]), ("edge", expected[1], actual[1])):
        assert set(want) == set(have), \
            f"{what} sets differ: missing {set(want) - set(have)}, extra {set(have) - set(want)}"
        for k, props in want.items():
            got = have[k]
            assert set(props) == set(got), f"{what} {k}: properties {sorted(got)} != expected {sorted(props)}"
            for name, v in props.items():
                assert _same_value(v, got[name]), f"{what} {k}.{name}: {got[name]!r} != expected {v!r}"


class Running:
    """A `bifrost run` in the background; its stdout lines are collected."""

    def __init__(self, bifrost: Bifrost, *args):
        import threading

        self.proc = subprocess.Popen(bifrost.cmd("run", *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.lines: list[str] = []
        self.errors: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, self.errors), daemon=True)]
        for r in self._readers:
            r.start()

    @staticmethod
    def _read(stream, into):
        for line in stream:
            into.append(line.rstrip("\n"))

    def rounds(self) -> list[str]:
        return [l for l in list(self.lines) if l.startswith("round ")]

    def wait_for(self, predicate, timeout: float, what: str):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            assert self.proc.poll() is None, f"bifrost run exited ({self.proc.returncode}) while waiting for {what}: " \
                                             f"{self.lines[-5:]} {self.errors[-5:]}"
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}: {self.lines[-5:]} {self.errors[-5:]}")

    def stop(self) -> int:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(30)
        for r in self._readers:
            r.join(5)
        return rc

    def kill(self):
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
