"""Fixtures for the Spark tests, all module-scoped (one JVM session per module): a fresh
warehouse, `skade serve` on it (free loopback port, stopped after the module, clean exit
asserted) and a SparkSession on the warehouse, stopped after the module.

A module picks its session with module attributes:
  SPARK_CATALOG = "rest" (default: through `skade serve`) or "jdbc" (Iceberg's JDBC catalog on catalog.db)
  SPARK_OPENLINEAGE = True   openlineage-spark posts its events to the server (default False)
  SPARK_CONF = {...}         extra Spark settings
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "interop"))
sys.path.insert(0, str(HERE))

from skade_util import Served, Skade  # noqa: E402
from spark_peer import spark_session  # noqa: E402


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    wh = tmp_path_factory.mktemp("spark") / "wh"
    Skade(wh).ok("init")
    return wh


@pytest.fixture(scope="module")
def skade(warehouse) -> Skade:
    return Skade(warehouse)


@pytest.fixture(scope="module")
def served(warehouse):
    s = Served(warehouse)
    yield s
    assert s.stop() == 0, s.proc.stderr.read()


@pytest.fixture(scope="module")
def spark(request, warehouse, served):
    kind = getattr(request.module, "SPARK_CATALOG", "rest")
    if kind not in ("rest", "jdbc"):
        raise ValueError(f"SPARK_CATALOG must be 'rest' or 'jdbc', not {kind!r}")
    session = spark_session(
        warehouse,
        rest_uri=served.url if kind == "rest" else None,
        jdbc_catalog=warehouse / "catalog.db" if kind == "jdbc" else None,
        openlineage_url=served.url if getattr(request.module, "SPARK_OPENLINEAGE", False) else None,
        app_name=request.module.__name__.rsplit(".", 1)[-1],
        conf=getattr(request.module, "SPARK_CONF", None),
    )
    yield session
    session.stop()
