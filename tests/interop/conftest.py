"""Fixtures for the interop tests: a fresh warehouse per test, the skade runner, PyIceberg.

A missing peer (skade binary, PyIceberg, fastavro, pyarrow) is a failure, never a skip.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from skade_util import SKADE_BIN, Skade, open_catalog  # noqa: E402


@pytest.fixture(scope="session")
def skade_bin() -> str:
    assert os.path.isfile(SKADE_BIN) and os.access(SKADE_BIN, os.X_OK), (
        f"skade binary not found or not executable at {SKADE_BIN} (set SKADE_BIN or build it)"
    )
    return SKADE_BIN


@pytest.fixture
def warehouse(tmp_path, skade_bin) -> Path:
    """A fresh, initialised warehouse folder."""
    wh = tmp_path / "wh"
    s = Skade(wh, skade_bin)
    s.ok("init")
    assert (wh / "catalog.db").is_file()
    return wh


@pytest.fixture
def skade(warehouse, skade_bin) -> Skade:
    """skade(*args) -> (rc, stdout, stderr) against the test's warehouse; .ok(), .rows(), ..."""
    return Skade(warehouse, skade_bin)


@pytest.fixture
def catalog(warehouse):
    """PyIceberg's SqlCatalog on the same catalog.db (a fresh instance per call)."""
    return lambda: open_catalog(warehouse)
