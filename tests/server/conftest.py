"""Fixtures for the server tests: a fresh warehouse served by `skade serve` on a free
loopback port, stopped (SIGTERM, clean exit asserted) after the test."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "interop"))

from skade_util import SKADE_BIN, Served, Skade  # noqa: E402,F401


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
