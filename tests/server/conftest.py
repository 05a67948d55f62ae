"""Fixtures for the server tests: a fresh warehouse served by `skade serve` on a free
loopback port, stopped (SIGTERM, clean exit asserted) after the test."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "interop"))

from skade_util import SKADE_BIN, Skade  # noqa: E402


class Served:
    """A running `skade serve`; `.url` is its base URL."""

    def __init__(self, warehouse: Path, *args: str):
        self.warehouse = warehouse
        self.proc = subprocess.Popen([SKADE_BIN, "--warehouse", str(warehouse), "serve", "--listen", "127.0.0.1:0",
                                      *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://([^/]+)/", line)
        if not m:
            self.proc.kill()
            raise AssertionError(f"serve did not start: {line!r} {self.proc.stderr.read()!r}")
        self.url = f"http://{m.group(1)}"

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.fixture
def warehouse(tmp_path) -> Path:
    wh = tmp_path / "wh"
    Skade(wh).ok("init")
    return wh


@pytest.fixture
def skade(warehouse) -> Skade:
    return Skade(warehouse)


@pytest.fixture
def served(warehouse):
    s = Served(warehouse)
    yield s
    assert s.stop() == 0, s.proc.stderr.read()


@pytest.fixture
def rest(served, warehouse):
    """PyIceberg's RestCatalog on the server (a fresh client per call)."""
    from pyiceberg.catalog import load_catalog

    return lambda **props: load_catalog("rest", type="rest", uri=served.url, warehouse=f"file://{warehouse}", **props)
