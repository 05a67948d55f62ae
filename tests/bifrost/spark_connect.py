"""A real Spark Connect server (Spark 4.0 from .deps/spark4, scripts/setup_spark_connect.sh)
whose default catalog `wh` is Iceberg's REST catalog on a `skade serve` (skade_util.Served
on a port chosen up front), and a TCP relay
in front of it that a test can take down and bring back. Used by the Spark Connect
tests and bench."""
from __future__ import annotations

import glob
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from graph_util import ROOT, free_port, relay_bytes

SPARK_HOME = Path(os.environ.get("BIFROST_SPARK_HOME", str(
    next(iter(glob.glob(str(ROOT / ".deps/spark4/venv/lib/python3*/site-packages/pyspark"))), ""))))
ICEBERG_JAR = ROOT / ".deps/spark4/jars/iceberg-spark-runtime-4.0_2.13-1.10.1.jar"


def wait_port(port: int, timeout: float, proc: subprocess.Popen, what: str, log: Path):
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert proc.poll() is None, f"{what} exited ({proc.returncode}): {log.read_text()[-3000:]}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{what} did not listen on {port} within {timeout} s: {log.read_text()[-3000:]}")


class SparkConnectServer:
    """Spark's SparkConnectServer on a free loopback port; its event log (plain JSON, one
    file) records each query's physical plan."""

    def __init__(self, workdir: Path, catalog_port: int, warehouse: Path):
        assert (SPARK_HOME / "bin" / "spark-submit").exists(), \
            f"Spark 4 missing at {SPARK_HOME}: run scripts/setup_spark_connect.sh"
        assert ICEBERG_JAR.exists(), f"{ICEBERG_JAR} missing: run scripts/setup_spark_connect.sh"
        self.port = free_port()
        self.events = workdir / "events"
        self.events.mkdir(parents=True, exist_ok=True)
        self.log = workdir / "spark-connect.log"
        conf = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
            "spark.sql.catalog.wh": "org.apache.iceberg.spark.SparkCatalog",
            "spark.sql.catalog.wh.type": "rest",
            "spark.sql.catalog.wh.uri": f"http://127.0.0.1:{catalog_port}",
            "spark.sql.catalog.wh.warehouse": f"file://{warehouse}",
            # see each skade commit on the next query
            "spark.sql.catalog.wh.cache-enabled": "false",
            "spark.sql.defaultCatalog": "wh",
            "spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file://{self.events}",
            "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false",
        }
        args = [str(SPARK_HOME / "bin" / "spark-submit"), "--class",
                "org.apache.spark.sql.connect.service.SparkConnectServer", "--master", "local[2]",
                "--driver-memory", "2g", "--jars", str(ICEBERG_JAR)]
        for k, v in conf.items():
            args += ["--conf", f"{k}={v}"]
        env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
        env.pop("PYSPARK_PYTHON", None)
        # its own process group: stop() ends the JVM that spark-submit starts as well
        self.proc = subprocess.Popen(args + ["spark-internal"], stdout=self.log.open("w"), stderr=subprocess.STDOUT,
                                     env=env, start_new_session=True)
        wait_port(self.port, 240, self.proc, "Spark Connect server", self.log)
        self.url = f"sc://127.0.0.1:{self.port}"

    def scans(self) -> list[str]:
        """The physical plans of the queries run so far (one per SQL execution)."""
        plans = []
        for f in self.events.iterdir():
            for line in f.read_text(errors="replace").splitlines():
                if 'SparkListenerSQLExecutionStart"' in line:
                    plans.append(json.loads(line).get("physicalPlanDescription", ""))
        return plans

    def scans_of(self, table: str, since: int, timeout: float = 20) -> list[dict]:
        """spark_scans of the plans after the first `since`, waited for a little: Spark's
        listener bus writes the event log behind the queries."""
        deadline = time.time() + timeout
        while not (found := spark_scans(self.scans()[since:], table)) and time.time() < deadline:
            time.sleep(0.2)
        return found

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)


class Relay:
    """A TCP relay from a loopback port to the Spark Connect server; down() refuses new
    connections and cuts the open ones, up() listens on the same port again."""

    def __init__(self, target_port: int):
        self.target = target_port
        self.port = free_port()
        self.listener = None
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.up()

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def up(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(16)
        self.listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.conns += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=relay_bytes, args=(a, b), daemon=True).start()

    def down(self):
        # shutdown, not just close: close() does not wake a thread blocked in accept()
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        with self.lock:
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
            self.conns.clear()


def spark_scans(plans: list[str], table: str) -> list[dict]:
    """The scans of `table` (e.g. `wh.db.people`) in the plans: the columns each read and
    the filters pushed into it, from the plan's `(n) BatchScan` sections."""
    found = []
    pattern = rf"\(\d+\) BatchScan {re.escape(table)}\nOutput \[\d+\]: \[([^\]]*)\]\n{re.escape(table)} .*?\[filters=(.*), groupedBy="
    for plan in plans:
        for cols, filters in re.findall(pattern, plan):
            found.append({"columns": sorted(c.split("#")[0] for c in cols.split(", ")), "filters": filters})
    return found
