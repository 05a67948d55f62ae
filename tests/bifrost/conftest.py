"""Fixtures for the Bifröst tests: a fresh warehouse (short path: the embedded graph
server's unix socket lives under it), skade and bifrost runners, private graph servers.

A missing binary or graph server is a failure, never a skip.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "interop"))

import graph_util  # noqa: E402
from graph_util import BIFROST_BIN, FALKORDB_MODULE, Bifrost, GraphServer  # noqa: E402
from skade_util import SKADE_BIN, Served, Skade  # noqa: E402


@pytest.fixture(scope="session")
def binaries():
    for b in (SKADE_BIN, BIFROST_BIN):
        assert os.path.isfile(b) and os.access(b, os.X_OK), f"{b} not built (set SKADE_BIN / BIFROST_BIN)"
    assert os.path.isfile(FALKORDB_MODULE), f"FalkorDB module missing at {FALKORDB_MODULE}: run scripts/setup.sh"
    assert shutil.which("valkey-server"), "valkey-server missing: run scripts/setup.sh"


@pytest.fixture
def workdir(binaries):
    d = Path(tempfile.mkdtemp(prefix="bf", dir="/tmp"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def skade(workdir) -> Skade:
    s = Skade(workdir / "wh", SKADE_BIN)
    s.ok("init")
    s.ok("create-namespace", "db")
    return s


@pytest.fixture
def bifrost(skade) -> Bifrost:
    return Bifrost(skade.warehouse, BIFROST_BIN)


@pytest.fixture
def graph_server():
    g = GraphServer()
    yield g
    g.cleanup()


@pytest.fixture(params=["yaml", "ron", "rest"])
def mapping_variant(request, skade):
    """Runs a test three ways: YAML mappings, the same mappings as RON, and YAML
    mappings whose tables are read through `skade serve` (an Iceberg REST catalog) of
    the test's warehouse instead of from its folder. Modules opt in with
    `pytestmark = pytest.mark.usefixtures("mapping_variant")`."""
    served = None
    if request.param == "ron":
        graph_util.VARIANT["format"] = "ron"
    elif request.param == "rest":
        served = Served(skade.warehouse)
        graph_util.VARIANT["rest"] = served.url
    yield request.param
    graph_util.VARIANT.update(format="yaml", rest=None)
    if served:
        assert served.stop() == 0, served.proc.stderr.read()

