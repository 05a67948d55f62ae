"""Bifröst reading its tables through a real Spark Connect server (`source: spark:sc://…`).

One Spark 4.0 Connect server per module; its Iceberg catalog is the REST catalog of a
`skade serve` on the test's warehouse (a fresh warehouse per test, served on the same
port). Spark's event log gives the physical plan of each query it ran: what was read
really went through Spark, with the mapping's projection and filter in it."""
from __future__ import annotations

import copy
import json
import random
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from graph_util import Running, actual_graph, append, assert_same_graph, expected_graph, free_port, write_mapping
from skade_util import SKADE_BIN, Served, Skade
from spark_connect import Relay, SparkConnectServer
from tables import MAPPING, SCHEMAS, create_tables, people, populate, read_tables, transfers


@pytest.fixture(scope="module")
def spark(binaries):
    base = Path(tempfile.mkdtemp(prefix="bfsc", dir="/tmp"))
    catalog_port = free_port()
    server = SparkConnectServer(base, catalog_port, base / "wh")
    yield SimpleNamespace(server=server, catalog_port=catalog_port, warehouse=base / "wh", url=server.url)
    server.stop()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def skade(spark):
    """Overrides conftest's: a fresh warehouse where Spark's catalog looks, served by skade."""
    shutil.rmtree(spark.warehouse, ignore_errors=True)
    s = Skade(spark.warehouse, SKADE_BIN)
    s.ok("init")
    s.ok("create-namespace", "db")
    served = Served(spark.warehouse, listen=f"127.0.0.1:{spark.catalog_port}")
    yield s
    assert served.stop() == 0, served.proc.stderr.read()


def through(mapping: dict, url: str, **overrides) -> dict:
    m = copy.deepcopy(mapping)
    for t in m["tables"]:
        t["source"] = f"spark:{url}"
        t.update(overrides)
    return m


def table_cursor(state: Path, table: str):
    return json.loads(state.read_text())[table]


def test_build_through_spark_matches_oracle(skade, bifrost, workdir, spark):
    create_tables(skade)
    populate(skade, workdir)
    m = through(MAPPING, spark.url)
    mapping = write_mapping(workdir / "m.yaml", m)
    before = len(spark.server.scans())
    out = bifrost.ok("build", "--mapping", mapping)
    assert "tables mapped: 4, tables empty: 0, tables unchanged: 0, tables failed: 0" in out, out
    assert out.count(f"(full read through Spark Connect {spark.url})") == 4, out

    expected = expected_graph(m, read_tables(skade, SCHEMAS))
    assert ("Person", (999,)) in expected[0], "no placeholder vertex from a dangling foreign key"
    assert_same_graph(expected, actual_graph(bifrost, m, "--mapping", mapping))
    # every table was scanned by Spark, through its Iceberg catalog
    for table in SCHEMAS:
        assert spark.server.scans_of(f"wh.{table}", before), (table, spark.server.scans()[before:])


def test_projection_and_filter_are_in_sparks_plan(skade, bifrost, workdir, spark):
    create_tables(skade, ["db.people"])
    append(skade, "db.people", people(random.Random(8), list(range(1, 31)), [1, 2]), workdir)
    m = {"graph": "g", "tables": [{"table": "db.people", "source": f"spark:{spark.url}", "filter": "id <= 10",
                                   "pipeline": [{"vertex": {"label": "Person", "id_column": "id",
                                                            "properties": ["name", "level"]}}]}]}
    mapping = write_mapping(workdir / "m.yaml", m)
    before = len(spark.server.scans())
    out = bifrost.ok("build", "--mapping", mapping)
    assert "rows read: 10," in out, out
    scans = spark.server.scans_of("wh.db.people", before)
    # Spark read only the columns the pipeline uses, with the filter pushed into the scan
    assert scans and all(s["columns"] == ["id", "level", "name"] for s in scans), scans
    assert all("id <= 10" in s["filters"] for s in scans), scans
    table = read_tables(skade, ["db.people"])["db.people"]
    kept = table.filter(pc.less_equal(table["id"], 10))
    assert_same_graph(expected_graph(m, {"db.people": kept}), actual_graph(bifrost, m, "--mapping", mapping))


def test_filter_with_quotes_backslashes_like_and_nan_selects_the_same_rows_in_spark(skade, bifrost, workdir, spark):
    """Spark SQL reads backslash escapes and joins adjacent string literals: the pushed filter
    must still mean what skade's does."""
    create_tables(skade, ["db.people"])
    generated = people(random.Random(12), list(range(1, 41)), [1, 2])
    rows = generated.to_pylist()
    rows[3]["name"], rows[4]["name"] = "O'Brien", "O'Bri\\en"
    append(skade, "db.people", pa.Table.from_pylist(rows, schema=generated.schema), workdir)
    flt = "(name = 'Cé\\l' or name like 'O''Br%' or name like 'Bo \"%') and not (score is nan) and id between 2 and 38"
    m = {"graph": "g", "tables": [{"table": "db.people", "source": f"spark:{spark.url}", "filter": flt,
                                   "pipeline": [{"vertex": {"label": "Person", "id_column": "id",
                                                            "properties": ["name", "level"]}}]}]}
    mapping = write_mapping(workdir / "m.yaml", m)
    want = [r for r in rows if 2 <= r["id"] <= 38 and r["name"] is not None
            and (r["name"] == "Cé\\l" or r["name"].startswith(("O'Br", 'Bo "')))]
    assert len(want) >= 4 and any(r["name"].startswith("O'") for r in want), want
    out = bifrost.ok("build", "--mapping", mapping)
    assert f"rows read: {len(want)}," in out, out
    table = read_tables(skade, ["db.people"])["db.people"]
    kept = table.filter(pc.is_in(table["id"], value_set=pa.array([r["id"] for r in want], pa.int64())))
    assert_same_graph(expected_graph(m, {"db.people": kept}), actual_graph(bifrost, m, "--mapping", mapping))


def test_incremental_and_cdc_rounds_pick_up_a_skade_commit(skade, bifrost, workdir, spark):
    create_tables(skade, ["db.people", "db.transfers"])
    rng = random.Random(31)
    ids = list(range(1, 21))
    append(skade, "db.people", people(rng, ids, ids[:5]), workdir)
    append(skade, "db.transfers", transfers(rng, 1, 30, ids[:6]), workdir)
    m = {"graph": "g", "tables": [
        {**MAPPING["tables"][0], "source": f"spark:{spark.url}", "mode": "cdc"},
        {**MAPPING["tables"][3], "source": f"spark:{spark.url}", "mode": "incremental"}]}
    mapping = write_mapping(workdir / "m.yaml", m)
    state = workdir / "state.json"
    bifrost.ok("build", "--mapping", mapping, "--state", f"file:{state}")
    first = {t: table_cursor(state, t) for t in ("db.people", "db.transfers")}

    append(skade, "db.people", people(rng, [21, 22, 23], [1, 22]), workdir)
    append(skade, "db.transfers", transfers(rng, 31, 7, [21, 2, 3]), workdir)
    out = bifrost.ok("build", "--mapping", mapping, "--state", f"file:{state}")
    assert "tables mapped: 2, tables empty: 0, tables unchanged: 0, tables failed: 0" in out, out
    assert "rows read: 10," in out, out  # 3 changes + 7 appends, nothing read again
    assert f"changes after snapshot {first['db.people']['snapshot_id']}" in out, out
    assert f"appends after snapshot {first['db.transfers']['snapshot_id']}" in out, out
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people", "db.transfers"])),
                      actual_graph(bifrost, m, "--mapping", mapping))
    for t in ("db.people", "db.transfers"):
        assert table_cursor(state, t) != first[t]
    out = bifrost.ok("build", "--mapping", mapping, "--state", f"file:{state}")
    assert "tables unchanged: 2" in out, out

    # skade's delete writes a delete file, which Iceberg's changelog scan refuses: the cdc
    # table fails with Spark's reason and keeps its cursor; the incremental one rescans
    cursor = table_cursor(state, "db.people")
    skade.ok("delete", "db.people", "--where", "id = 3")
    skade.ok("delete", "db.transfers", "--where", "id = 31")
    rc, out, err = bifrost("build", "--mapping", mapping, "--state", f"file:{state}")
    assert rc == 2 and "tables failed: 1" in out, (rc, out, err)
    assert "Delete files are currently not supported in changelog scans" in err, err
    assert f"full rescan through Spark Connect {spark.url}: rows were rewritten" in out, out
    assert table_cursor(state, "db.people") == cursor


def test_a_server_that_is_down_fails_the_round_and_keeps_the_cursor(skade, bifrost, workdir, spark):
    create_tables(skade, ["db.people"])
    rng = random.Random(41)
    append(skade, "db.people", people(rng, list(range(1, 11)), [1]), workdir)
    relay = Relay(spark.server.port)
    m = through({"graph": "g", "tables": [MAPPING["tables"][0]]}, relay.url, mode="cdc")
    mapping = write_mapping(workdir / "m.yaml", m)
    state = workdir / "state.json"
    run = Running(bifrost, "--mapping", mapping, "--state", f"file:{state}", "--interval", "300ms",
                  "--max-backoff", "600ms")
    try:
        run.wait_for(lambda: any("1 synced" in r for r in run.rounds()), 60, "the first round")
        cursor = table_cursor(state, "db.people")
        relay.down()
        append(skade, "db.people", people(rng, [11, 12], [1]), workdir)
        n = len(run.rounds())
        run.wait_for(lambda: any("1 failed" in r for r in run.rounds()[n:]), 60, "a failed round")
        assert any(f"Spark Connect server {relay.url} unreachable" in e for e in run.errors), run.errors
        assert table_cursor(state, "db.people") == cursor
        relay.up()
        n = len(run.rounds())
        run.wait_for(lambda: any("1 synced" in r for r in run.rounds()[n:]), 60, "the round after the server is back")
    finally:
        assert run.stop() == 0, run.errors
        relay.down()
    assert table_cursor(state, "db.people") != cursor
    assert_same_graph(expected_graph(m, read_tables(skade, ["db.people"])), actual_graph(bifrost, m, "--mapping", mapping))


def test_bad_spark_sources_are_refused(skade, bifrost, workdir, spark):
    create_tables(skade, ["db.people"])
    for source, err in [("spark:localhost", "Spark Connect address 'localhost' is not sc://HOST:PORT"),
                        ("spark:sc://127.0.0.1:notaport", "is not sc://HOST:PORT")]:
        m = {"graph": "g", "tables": [{**MAPPING["tables"][0], "source": source}]}
        rc, out, e = bifrost("validate", "--mapping", write_mapping(workdir / "bad.yaml", m))
        assert rc == 2 and err in e, (rc, out, e)
    m = through({"graph": "g", "tables": [MAPPING["tables"][0]]}, spark.url)
    m["tables"][0]["table"] = "db.nope"
    rc, out, e = bifrost("validate", "--mapping", write_mapping(workdir / "bad.yaml", m))
    assert rc != 0 and "db.nope" in e and "TABLE_OR_VIEW_NOT_FOUND" in e, (rc, out, e)
