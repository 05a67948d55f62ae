"""Airflow 3 asset events (AIP-82) from Bifröst, against a real Airflow (api-server,
scheduler and dag-processor on SQLite, started once for the module from
.deps/airflow/venv, which scripts/setup_airflow.sh installs): a DAG scheduled on the asset
of shop.orders gets a run after a round that changed the table and none after an idle
round; with Airflow's api-server down the round still succeeds, and the event, kept in the
ledger's outbox across a crash of bifrost, arrives once Airflow is back, exactly once; an
Airflow that takes the connection and never answers holds up no round (delivery has its
own thread), and a stop abandons the hanging request, the event kept for the next start."""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pyarrow as pa
import pytest

from graph_util import ROOT, Running, append, free_port, relay_bytes, write_mapping

AIRFLOW_VENV = ROOT / ".deps" / "airflow" / "venv"
ORDERS_URI = "skade://warehouse/shop.orders"

DAG = '''
import pendulum
from airflow.sdk import Asset, dag, task

orders = Asset(name="shop.orders", uri="%s")


@dag(dag_id="consume_orders", schedule=[orders], start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
     catchup=False)
def consume_orders():
    @task
    def show(*, triggering_asset_events=None):
        for event in triggering_asset_events[orders]:
            print(event.extra)

    show()


consume_orders()
''' % ORDERS_URI


class Airflow:
    """api-server + scheduler + dag-processor on a free loopback port, SQLite metadata,
    Simple auth manager with one admin whose password the test wrote."""

    def __init__(self):
        self.home = Path(tempfile.mkdtemp(prefix="af", dir="/tmp"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.user = "bifrost"
        self.password = secrets.token_hex(12)
        (self.home / "dags").mkdir()
        (self.home / "dags" / "consume_orders.py").write_text(DAG)
        (self.home / "passwords.json").write_text(json.dumps({self.user: self.password}))
        self.password_file = self.home / "password.txt"
        self.password_file.write_text(self.password + "\n")
        self.env = {**os.environ,
                    "AIRFLOW_HOME": str(self.home),
                    "AIRFLOW__CORE__DAGS_FOLDER": str(self.home / "dags"),
                    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                    "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
                    "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                    "AIRFLOW__CORE__PARALLELISM": "2",
                    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{self.home}/airflow.db",
                    "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{self.user}:admin",
                    "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(self.home / "passwords.json"),
                    "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.url}/execution/",
                    "AIRFLOW__API__BASE_URL": self.url,
                    "AIRFLOW__API__HOST": "127.0.0.1",
                    "AIRFLOW__API__PORT": str(self.port),
                    "AIRFLOW__API__WORKERS": "1",
                    # One secret for every component, so tokens outlive an api-server restart.
                    "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(16),
                    # Short-lived API tokens: bifrost has to renew them during the module.
                    "AIRFLOW__API_AUTH__JWT_EXPIRATION_TIME": "45",
                    "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "3",
                    "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "5",
                    "AIRFLOW__DAG_PROCESSOR__PARSING_PROCESSES": "1",
                    "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2",
                    "AIRFLOW__SCHEDULER__STANDALONE_DAG_PROCESSOR": "True",
                    "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING"}
        self.procs: dict[str, subprocess.Popen] = {}
        self.token = None
        self.started = time.time()
        migrate = subprocess.run([self.bin, "db", "migrate"], env=self.env, capture_output=True, text=True,
                                 timeout=600)
        assert migrate.returncode == 0, migrate.stdout[-2000:] + migrate.stderr[-2000:]
        for name in ("scheduler", "dag-processor"):
            self.start(name)
        self.start_api()
        self.wait_for(lambda: self.asset_id(ORDERS_URI) is not None, 240, "the DAG's asset to be registered")
        self.startup_seconds = time.time() - self.started

    @property
    def bin(self) -> str:
        return str(AIRFLOW_VENV / "bin" / "airflow")

    def start(self, name: str):
        log = open(self.home / f"{name}.log", "ab")
        # Its own process group: the components fork workers, stopped with them.
        self.procs[name] = subprocess.Popen([self.bin, name], env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def start_api(self):
        self.start("api-server")
        self.wait_for(self.healthy, 240, "the api-server")

    def stop(self, name: str):
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/monitor/health", timeout=5) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def wait_for(self, predicate, timeout: float, what: str):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            for name, p in self.procs.items():
                assert p.poll() is None, f"airflow {name} exited: {self.log_tail(name)}"
            time.sleep(1)
        raise AssertionError(f"timed out waiting for {what}: " +
                             " | ".join(self.log_tail(n) for n in self.procs))

    def log_tail(self, name: str) -> str:
        f = self.home / f"{name}.log"
        return f.read_text(errors="replace")[-1500:] if f.exists() else ""

    def api(self, method: str, path: str, body=None):
        renewed = False  # tokens live 45 s here: one may expire between two attempts
        for attempt in range(6):
            if self.token is None:
                req = urllib.request.Request(f"{self.url}/auth/token", method="POST",
                                             data=json.dumps({"username": self.user,
                                                              "password": self.password}).encode(),
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=120) as r:
                    self.token = json.load(r)["access_token"]
            req = urllib.request.Request(f"{self.url}{path}", method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Authorization": f"Bearer {self.token}",
                                                  "Content-Type": "application/json"})
            try:  # generous: an api-server on a busy 2-core machine can take long
                with urllib.request.urlopen(req, timeout=120) as r:
                    return json.load(r)
            except urllib.error.HTTPError as e:
                if e.code == 401 and not renewed:
                    renewed, self.token = True, None
                    continue
                # SQLite's "database is locked" while the scheduler writes: asked again
                if e.code >= 500 and attempt < 5:
                    time.sleep(1)
                    continue
                raise

    def asset_id(self, uri: str):
        try:
            got = self.api("GET", "/api/v2/assets?uri_pattern=" + urllib.parse.quote(uri, safe=""))
        except (urllib.error.URLError, OSError):
            return None
        ids = [a["id"] for a in got["assets"] if a["uri"] == uri]
        return ids[0] if ids else None

    def events(self, uri: str) -> list[dict]:
        got = self.api("GET", f"/api/v2/assets/events?asset_id={self.asset_id(uri)}&limit=100&order_by=timestamp")
        return got["asset_events"]

    def dag_runs(self, dag_id: str = "consume_orders") -> list[dict]:
        return self.api("GET", f"/api/v2/dags/{dag_id}/dagRuns?limit=100&order_by=id")["dag_runs"]

    def run_of(self, event_id: str, dag_id: str = "consume_orders"):
        """The DAG run that the event triggered, or None."""
        for run in reversed(self.dag_runs(dag_id)):
            path = f"/api/v2/dags/{dag_id}/dagRuns/{urllib.parse.quote(run['dag_run_id'])}/upstreamAssetEvents"
            if any((e.get("extra") or {}).get("bifrost_event_id") == event_id
                   for e in self.api("GET", path)["asset_events"]):
                return run
        return None

    def cleanup(self):
        for name in list(self.procs):
            self.stop(name)
        shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture(scope="module")
def airflow(binaries):
    assert (AIRFLOW_VENV / "bin" / "airflow").exists(), f"Airflow missing in {AIRFLOW_VENV}: run scripts/setup.sh"
    a = Airflow()
    print(f"airflow up in {a.startup_seconds:.1f} s")
    yield a
    a.cleanup()


ORDERS = pa.schema([("id", pa.int64()), ("customer_id", pa.int64()), ("amount", pa.float64())])


def orders(ids) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "customer_id": i % 3, "amount": i * 1.5} for i in ids], schema=ORDERS)


def shop(skade, with_customers: bool):
    skade.ok("create-namespace", "shop")
    skade.ok("create", "shop.orders", "--schema", "id:long!, customer_id:long, amount:double", "--identifier", "id")
    tables = [{"table": "shop.orders", "mode": "incremental", "pipeline": [
        {"vertex": {"label": "Order", "id_column": "id", "properties": ["amount"]}},
        {"fk_edges": {"type": "PLACED_BY", "src": {"column": "id", "label": "Order"},
                      "dst": {"column": "customer_id", "label": "Customer"}}}]}]
    if with_customers:
        skade.ok("create", "shop.customers", "--schema", "id:long!, name:string", "--identifier", "id")
        tables.append({"table": "shop.customers", "mode": "full", "pipeline": [
            {"vertex": {"label": "Customer", "id_column": "id", "properties": ["name"]}}]})
    return {"graph": "shop", "tables": tables}


def snapshot_of(bifrost, mapping, table, *state):
    out = bifrost.ok("state", "show", "--mapping", mapping, *state)
    return str(json.loads(out)[table]["snapshot_id"])


def airflow_flags(airflow):
    # a long timeout: the api-server on a busy 2-core machine can take many seconds
    return ["--airflow-url", airflow.url, "--airflow-user", airflow.user,
            "--airflow-password-file", airflow.password_file, "--airflow-timeout", "90s"]


def ours(events: list[dict]) -> list[dict]:
    return [e for e in events if "bifrost_event_id" in (e.get("extra") or {})]


def test_bad_airflow_flags_are_one_line_usage_errors(skade, bifrost, workdir):
    mapping = write_mapping(workdir / "m.yaml", shop(skade, False))
    pw = workdir / "pw"
    pw.write_text("secret\n")
    cases = [
        (["--airflow-url", "http://127.0.0.1:1", "--airflow-user", "u", "--airflow-password-file", workdir / "nope"],
         f"--airflow-password-file '{workdir / 'nope'}' cannot be read"),
        (["--airflow-url", "ftp://host/", "--airflow-token-file", pw], "is not an http:// or https:// URL"),
        (["--airflow-url", "http://", "--airflow-token-file", pw], "names no host"),
        (["--airflow-url", "http://h:99999"], "has a bad port"),
        (["--airflow-url", "http://h:8080", "--airflow-user", "u"], "--airflow-user needs --airflow-password-file"),
        (["--airflow-url", "http://h:8080", "--airflow-token-file", pw, "--airflow-user", "u",
          "--airflow-password-file", pw], "exclude each other"),
        (["--asset-prefix", "x-wh://a/"], "--asset-prefix needs --airflow-url"),
        (["--airflow-timeout", "20s"], "--airflow-timeout needs --airflow-url"),
        (["--airflow-url", "http://h:8080", "--airflow-timeout", "soon"], "--airflow-timeout"),
        (["--airflow-url", "http://h:8080", "--asset-prefix", "warehouse"], "is not a URI prefix"),
    ]
    for command in ("build", "run"):
        for flags, message in cases:
            rc, out, err = bifrost(command, "--mapping", mapping, *flags)
            assert rc == 1 and err.count("\n") == 1 and message in err, (command, flags, rc, out, err)
    # nothing ran: no cursor was stored
    assert json.loads(bifrost.ok("state", "show", "--mapping", mapping)) == {}


def test_a_round_that_changed_orders_triggers_the_dag_and_an_idle_round_does_not(airflow, skade, bifrost,
                                                                                  workdir):
    m = shop(skade, True)
    mapping = write_mapping(workdir / "m.yaml", m)
    append(skade, "shop.orders", orders(range(1, 6)), workdir)
    append(skade, "shop.customers", pa.Table.from_pylist([{"id": 1, "name": "Ada"}]), workdir)
    runs_before = len(airflow.dag_runs())
    events_before = len(airflow.events(ORDERS_URI))

    out = bifrost.ok("build", "--mapping", mapping, *airflow_flags(airflow))
    # orders' event was delivered; customers' asset has no DAG, so its event waits
    # without holding back orders'
    assert "airflow: 1 event(s) sent, 1 pending" in out, out
    snapshot = snapshot_of(bifrost, mapping, "shop.orders")
    events = airflow.events(ORDERS_URI)
    assert len(events) == events_before + 1, events
    extra = events[-1]["extra"]
    assert extra["table"] == "shop.orders" and extra["graph"] == "shop", extra
    assert extra["snapshot_id"] == snapshot and extra["previous_snapshot_id"] is None, extra
    assert (extra["rows_read"], extra["vertex_rows"], extra["edge_rows"]) == (5, 5, 5), extra
    airflow.wait_for(lambda: len(airflow.dag_runs()) == runs_before + 1, 120, "the asset-triggered DAG run")
    run = airflow.run_of(extra["bifrost_event_id"])
    assert run is not None and run["run_type"] == "asset_triggered", airflow.dag_runs()

    # idle: nothing changed, nothing is sent (customers' event still waits)
    rc, out, err = bifrost("build", "--mapping", mapping, *airflow_flags(airflow))
    assert rc == 0 and "tables unchanged: 2" in out and "0 event(s) sent, 1 pending" in out, out + err
    assert "Airflow has no asset 'skade://warehouse/shop.customers'" in err, err

    # a second change: a second event, carrying the snapshots it went between
    append(skade, "shop.orders", orders(range(6, 9)), workdir)
    out = bifrost.ok("build", "--mapping", mapping, *airflow_flags(airflow))
    assert "airflow: 1 event(s) sent, 1 pending" in out, out
    events = airflow.events(ORDERS_URI)
    assert len(events) == events_before + 2, events
    extra2 = events[-1]["extra"]
    assert extra2["previous_snapshot_id"] == snapshot, extra2
    assert extra2["snapshot_id"] == snapshot_of(bifrost, mapping, "shop.orders") != snapshot, extra2
    assert (extra2["rows_read"], extra2["vertex_rows"]) == (3, 3), extra2
    airflow.wait_for(lambda: len(airflow.dag_runs()) == runs_before + 2, 120, "the second DAG run")
    # the idle build queued no run of its own
    assert len(airflow.dag_runs()) == runs_before + 2


def metric(port: int, name: str) -> float:
    """A value from bifrost's /metrics; -1 while it is not served (yet)."""
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    except (urllib.error.URLError, OSError):
        return -1
    found = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(found.group(1)) if found else -1


def test_airflow_down_during_a_round_gets_the_event_once_it_is_back(airflow, skade, bifrost, workdir):
    m = shop(skade, False)
    mapping = write_mapping(workdir / "m.yaml", m)
    state = ["--state", f"file:{workdir / 'ledger.json'}"]
    append(skade, "shop.orders", orders(range(1, 4)), workdir)
    rc, out, err = bifrost("build", "--mapping", mapping, *state, *airflow_flags(airflow))
    # the outbox must start empty, or the pending count below counts this build's event too
    assert rc == 0 and "airflow: 1 event(s) sent, 0 pending" in out, out + err
    base_events = len(airflow.events(ORDERS_URI))

    airflow.stop("api-server")
    port = free_port()
    run = Running(bifrost, "--mapping", mapping, *state, "--interval", "1s", "--metrics-addr", f"127.0.0.1:{port}",
                  *airflow_flags(airflow))
    try:
        run.wait_for(lambda: len(run.rounds()) >= 1, 60, "a first (idle) round")
        append(skade, "shop.orders", orders(range(4, 8)), workdir)
        # the round succeeds although Airflow is down; the event waits in the ledger's outbox
        run.wait_for(lambda: any("1 synced, 0 idle, 0 busy, 0 failed" in r for r in run.rounds()), 60,
                     "the round of the append")
        run.wait_for(lambda: metric(port, "bifrost_airflow_event_failures_total") >= 2, 60, "failed deliveries")
        assert metric(port, "bifrost_airflow_events_pending") == 1
        assert metric(port, "bifrost_airflow_events_sent_total") == 0
        assert any("Airflow events: cannot connect" in e for e in run.errors), run.errors
        outbox = json.loads((workdir / "ledger.json").read_text())["$outbox"]["events"]
        assert len(outbox) == 1 and outbox[0]["event"]["extra"]["rows_read"] == 4, outbox
        event_id = outbox[0]["event"]["extra"]["bifrost_event_id"]
    finally:
        run.kill()  # a crash: only the ledger file remembers the event

    airflow.start_api()
    run = Running(bifrost, "--mapping", mapping, *state, "--interval", "1s", "--metrics-addr", f"127.0.0.1:{port}",
                  *airflow_flags(airflow))
    try:
        run.wait_for(lambda: metric(port, "bifrost_airflow_events_sent_total") == 1, 120, "the delivery")
        assert metric(port, "bifrost_airflow_events_pending") == 0
        n = len(run.rounds())
        run.wait_for(lambda: len(run.rounds()) >= n + 3, 60, "idle rounds after the delivery")
        assert metric(port, "bifrost_airflow_events_sent_total") == 1
        assert json.loads((workdir / "ledger.json").read_text())["$outbox"]["events"] == []
    finally:
        assert run.stop() == 0, run.errors
    # an idle build after it sends nothing either
    out = bifrost.ok("build", "--mapping", mapping, *state, *airflow_flags(airflow))
    assert "airflow:" not in out, out
    mine = [e for e in ours(airflow.events(ORDERS_URI)) if e["extra"]["bifrost_event_id"] == event_id]
    assert len(mine) == 1, mine
    assert len(airflow.events(ORDERS_URI)) == base_events + 1
    assert mine[0]["extra"]["rows_read"] == 4
    airflow.wait_for(lambda: airflow.run_of(event_id) is not None, 120, "the DAG run of the late event")
    assert airflow.run_of(event_id)["run_type"] == "asset_triggered"


def test_tokens_are_renewed_as_they_expire(airflow, skade, bifrost, workdir):
    """Tokens live 45 s here: a run that outlives one fetches another and keeps delivering."""
    mapping = write_mapping(workdir / "m.yaml", shop(skade, False))
    base = len(airflow.events(ORDERS_URI))
    port = free_port()
    run = Running(bifrost, "--mapping", mapping, "--interval", "1s", "--metrics-addr", f"127.0.0.1:{port}",
                  *airflow_flags(airflow))
    try:
        sent = 0
        for batch in range(3):
            append(skade, "shop.orders", orders(range(batch * 10 + 1, batch * 10 + 3)), workdir)
            sent += 1
            run.wait_for(lambda: metric(port, "bifrost_airflow_events_sent_total") == sent, 60, f"event {sent}")
            if batch < 2:
                time.sleep(10)  # across the token's renewal point (30 s before its expiry)
        assert metric(port, "bifrost_airflow_token_fetches_total") >= 2
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        assert run.stop() == 0, run.errors
    # each of the three once (an attempt that timed out on a slow api-server is looked up
    # before it is sent again)
    events = airflow.events(ORDERS_URI)
    assert len(events) == base + 3, events[base:]
    ids = [e["extra"]["bifrost_event_id"] for e in ours(events)]
    assert len(ids) == len(set(ids)), ids


class Blackhole:
    """A loopback port the test holds. At first it accepts connections and never answers
    (an api-server that hangs); after `forward(port)` it closes those and pipes new ones
    to the real Airflow."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.target = None
        self.held: list[socket.socket] = []
        self.received = 0  # bytes of requests that got no answer
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.target is None:
                self.held.append(conn)
                threading.Thread(target=self._swallow, args=(conn,), daemon=True).start()
            else:
                upstream = socket.create_connection(("127.0.0.1", self.target))
                for a, b in ((conn, upstream), (upstream, conn)):
                    threading.Thread(target=relay_bytes, args=(a, b), daemon=True).start()

    def _swallow(self, conn):
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            self.received += len(chunk)

    def forward(self, port: int):
        self.target = port
        for conn in self.held:
            conn.close()

    def close(self):
        self.sock.close()


def test_a_hanging_airflow_holds_up_no_round_and_gets_the_event_once_it_answers(airflow, skade, bifrost,
                                                                                  workdir):
    mapping = write_mapping(workdir / "m.yaml", shop(skade, False))
    ledger = workdir / "ledger.json"
    state = ["--state", f"file:{ledger}"]
    hole = Blackhole()
    # a timeout far beyond the test's waits: the request hangs for as long as the test looks
    flags = ["--airflow-url", hole.url, "--airflow-user", airflow.user,
             "--airflow-password-file", airflow.password_file, "--airflow-timeout", "600s"]
    base_events = len(airflow.events(ORDERS_URI))
    port = free_port()
    try:
        run = Running(bifrost, "--mapping", mapping, *state, "--interval", "300ms",
                      "--metrics-addr", f"127.0.0.1:{port}", *flags)
        try:
            run.wait_for(lambda: len(run.rounds()) >= 1, 60, "a first round")
            append(skade, "shop.orders", orders(range(1, 4)), workdir)
            run.wait_for(lambda: any("1 synced, 0 idle, 0 busy, 0 failed" in r for r in run.rounds()), 60,
                         "the round of the append")
            run.wait_for(lambda: hole.received > 0, 60, "a request to the hanging Airflow")
            hung_at = len(run.rounds())
            # rounds go on while the request hangs (no answer comes: the test never sends one)
            run.wait_for(lambda: len(run.rounds()) >= hung_at + 10, 60, "rounds while Airflow hangs")
            assert all(", retry in" not in r for r in run.rounds()[hung_at:]), run.rounds()
            append(skade, "shop.orders", orders(range(4, 6)), workdir)
            run.wait_for(lambda: len(json.loads(ledger.read_text())["$outbox"]["events"]) == 2, 60,
                         "the second round's event in the outbox")
            assert metric(port, "bifrost_airflow_events_sent_total") == 0
            # a stop while the request hangs: a clean exit, the request abandoned
            assert run.stop() == 0, run.errors
        finally:
            if run.proc.poll() is None:
                run.kill()
        outbox = json.loads(ledger.read_text())["$outbox"]["events"]
        assert [e["event"]["extra"]["rows_read"] for e in outbox] == [3, 2], outbox
        ids = [e["event"]["extra"]["bifrost_event_id"] for e in outbox]

        hole.forward(airflow.port)
        run = Running(bifrost, "--mapping", mapping, *state, "--interval", "300ms",
                      "--metrics-addr", f"127.0.0.1:{port}", *flags)
        try:
            run.wait_for(lambda: metric(port, "bifrost_airflow_events_sent_total") == 2, 120, "the deliveries")
            assert metric(port, "bifrost_airflow_events_pending") == 0
            assert json.loads(ledger.read_text())["$outbox"]["events"] == []
        finally:
            assert run.stop() == 0, run.errors
    finally:
        hole.close()
    events = airflow.events(ORDERS_URI)
    assert len(events) == base_events + 2, events[base_events:]
    # once each, in order
    assert [e["extra"]["bifrost_event_id"] for e in events[base_events:]] == ids
