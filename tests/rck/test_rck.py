"""Apache Iceberg's REST Compatibility Kit (catalog tests) against `skade serve`.

Starts `skade serve --listen 127.0.0.1:PORT` on a fresh `skade init` warehouse, runs
tests/rck/run_rck.sh against it (one JVM, RESTCompatibilityKitCatalogTests) and asserts that
every test in reference_passes.txt (the tests Iceberg's reference server passes) passed.

Tests listed in expected_failures.txt, each with its reason (a deliberate difference of
skade's, e.g. names with '/' are refused everywhere), are not required. A missing skade binary
or missing RCK jars is a failure, never a skip.
Environment: SKADE_BIN (the skade binary), RCK_TIMEOUT (seconds for the RCK run, default 1200),
RCK_REPORT_DIR (keep the JUnit XML reports and console.log there; default: a temp folder removed
after the test).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from rck_report import read_name_list, read_results  # noqa: E402
from wait_ready import ready  # noqa: E402

SKADE_BIN = os.environ.get("SKADE_BIN", str(ROOT / "build" / "bin" / "skade"))
RCK_LIB = ROOT / ".deps" / "rck" / "lib"
RCK_TIMEOUT = float(os.environ.get("RCK_TIMEOUT", "1200"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"({path} unreadable)"


@pytest.fixture
def workdir():
    d = Path(tempfile.mkdtemp(prefix="skade-rck.", dir="/tmp"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def server(workdir):
    """(uri, warehouse, log path) of a `skade serve` on a fresh warehouse; stopped afterwards."""
    assert os.path.isfile(SKADE_BIN) and os.access(SKADE_BIN, os.X_OK), (
        f"skade binary not found or not executable at {SKADE_BIN} (set SKADE_BIN or build it)"
    )
    assert RCK_LIB.is_dir() and any(RCK_LIB.glob("iceberg-open-api-*-tests.jar")), (
        f"RCK jars missing in {RCK_LIB}: run scripts/setup.sh (or scripts/setup_java.sh)"
    )
    wh = workdir / "wh"
    init = subprocess.run([SKADE_BIN, "--warehouse", str(wh), "init"], capture_output=True, text=True,
                          timeout=60)
    assert init.returncode == 0, f"skade init -> rc={init.returncode}\n{init.stdout}\n{init.stderr}"

    port = free_port()
    uri = f"http://127.0.0.1:{port}/"
    log = workdir / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            # The kit places some tables under file:/tmp/<namespace>/, outside the warehouse:
            # the operator's --allow-location opt-in admits them.
            [SKADE_BIN, "--warehouse", str(wh), "serve", "--listen", f"127.0.0.1:{port}", "--allow-location", "/tmp"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        assert ready(uri, timeout=60, pid=proc.pid), (
            f"skade serve did not answer GET /v1/config on {uri} "
            f"(rc={proc.poll()})\n{tail(log)}"
        )
        yield uri, wh, log, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_rck_catalog_tests_pass_like_the_reference_server(server, workdir):
    uri, wh, log, proc = server
    reports = Path(os.environ.get("RCK_REPORT_DIR") or workdir / "reports")
    run = subprocess.run([str(HERE / "run_rck.sh"), uri, f"file://{wh}", str(reports)],
                         capture_output=True, text=True, timeout=RCK_TIMEOUT)
    output = run.stdout + run.stderr
    print(output)  # shown by pytest on failure (and with -s): failed tests and the summary line
    # 0: all failures expected; 1: some unexpected failure. Anything else: the run did not complete.
    assert run.returncode in (0, 1), f"run_rck.sh -> rc={run.returncode}\n{output}"
    assert proc.poll() is None, f"skade serve exited during the RCK run (rc={proc.poll()})\n{tail(log)}"

    results = read_results(reports)
    assert results.total > 0, f"the RCK reports hold no test\n{output}"
    required = read_name_list(HERE / "reference_passes.txt")
    assert required, "reference_passes.txt is empty"
    deviations = set(read_name_list(HERE / "expected_failures.txt"))
    required = [name for name in required if name not in deviations]
    missing = [name for name in required if name not in results.passed]
    details = "\n".join(
        f"  {name}: {results.failed.get(name, 'skipped' if name in results.skipped else 'did not run')}"
        for name in missing)
    assert not missing, (
        f"{len(missing)} of the {len(required)} RCK catalog tests the Iceberg reference server passes "
        f"did not pass against skade serve ({results.summary()}):\n{details}\n"
        f"reports: {reports}\nserver log tail:\n{tail(log)}"
    )
