"""Real openlineage-spark 1.53.0 events (data/openlineage-spark, recorded from a Spark run against a
skade warehouse through a REST catalog at http://localhost:8181) tie up with skade's tables: through
`skade lineage ingest --catalog-uri` and through `skade serve`'s receiver, datasets resolve to skade
tables in any layout, `command_result` pseudo-jobs fold into the job they close, the MERGE is an
in-place update rather than a self-edge, every edge appears once and column lineage is served."""
from __future__ import annotations

import json
import urllib.request
from collections import Counter
from pathlib import Path

from skade_util import Served

DATA = Path(__file__).parent / "data" / "openlineage-spark"
RECORDED_URI = "http://localhost:8181"
SKADE_TABLES = ("shop.orders", "shop.customers", "shop.events", "shop.cow")
SPARK_TABLES = ("shop.orders_by_day", "shop.gold_rest")  # created by Spark, laid out <wh>/shop/<table>
MERGE_JOB = "skade_ol_rest.replace_data.skade_shop_cow"


def _events(warehouse: Path, catalog_uri: str = RECORDED_URI) -> list[dict]:
    """The recorded REST-catalog events with the run's warehouse and catalog URI replaced by ours."""
    text = (DATA / "ol-rest.jsonl").read_text().replace("/data/wh", str(warehouse))
    return [json.loads(line.replace(RECORDED_URI, catalog_uri)) for line in text.splitlines() if line.strip()]


def _make_tables(skade) -> None:
    skade.ok("create-namespace", "shop")
    for t in SKADE_TABLES:
        skade.ok("create", t, "--schema", "id:long!, name:string")


def _lines(skade, *args) -> list[str]:
    return sorted(r["dataset"] for r in skade.jsonl("lineage", *args))


def _assert_tied_up(graph: dict) -> None:
    keys = [n["key"] for n in graph["nodes"]]
    assert len(keys) == len(set(keys)), keys
    assert set(keys) == set(SKADE_TABLES) | set(SPARK_TABLES), keys
    assert {n["system"] for n in graph["nodes"]} == {"skade"}
    edges = [(e["from"], e["to"], e["job"]) for e in graph["edges"]]
    assert len(edges) == len(set(edges)), Counter(edges)
    assert all(f != t for f, t, _ in edges), "a self-edge"
    assert not [j for _, _, j in edges if j.endswith("command_result")], edges
    assert sorted((f, t) for f, t, _ in edges) == [
        ("shop.customers", "shop.gold_rest"), ("shop.events", "shop.cow"),
        ("shop.orders", "shop.gold_rest"), ("shop.orders", "shop.orders_by_day")]


def test_ingest_with_catalog_uri_ties_spark_events_to_skade_tables(skade, warehouse, tmp_path):
    _make_tables(skade)
    events = tmp_path / "ol-rest.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in _events(warehouse, RECORDED_URI + "/")))

    # Without the catalog's URI, tables Spark laid out itself are unknown locations.
    other = tmp_path / "other"
    skade_other = type(skade)(other)
    skade_other.ok("init")
    _make_tables(skade_other)
    other_events = tmp_path / "other.jsonl"
    other_events.write_text("".join(json.dumps(e) + "\n" for e in _events(other)))
    skade_other.ok("lineage", "ingest", str(other_events))
    nodes = {n["key"] for n in json.loads(skade_other.ok("lineage", "graph", "--format", "json"))["nodes"]}
    assert f"file:{other}/shop/orders_by_day" in nodes and "shop.orders_by_day" not in nodes

    out = skade.ok("lineage", "ingest", str(events), "--catalog-uri", RECORDED_URI)
    assert out.startswith(f"ingested {len(_events(warehouse))} events"), out
    assert _lines(skade, "upstream", "shop.orders_by_day") == ["shop.orders"]
    assert _lines(skade, "upstream", "shop.gold_rest") == ["shop.customers", "shop.orders"]
    assert _lines(skade, "upstream", "shop.cow") == ["shop.events"]
    assert _lines(skade, "downstream", "shop.orders") == ["shop.gold_rest", "shop.orders_by_day"]
    assert _lines(skade, "downstream", "shop.cow") == []
    _assert_tied_up(json.loads(skade.ok("lineage", "graph", "--format", "json")))

    # Ingested again: the same events, nothing new (deduplicated by event id).
    before = len(skade.jsonl("lineage", "events"))
    skade.ok("lineage", "ingest", str(events), "--catalog-uri", RECORDED_URI)
    assert len(skade.jsonl("lineage", "events")) == before


def _post(url: str, event: dict) -> int:
    req = urllib.request.Request(url + "/api/v1/lineage", data=json.dumps(event).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return r.status


def _get(url: str, path: str) -> dict:
    with urllib.request.urlopen(url + path) as r:
        return json.loads(r.read())


def test_server_receiver_ties_spark_events_to_skade_tables(skade, warehouse):
    _make_tables(skade)
    served = Served(warehouse)
    try:
        for e in _events(warehouse, served.url):
            assert _post(served.url, e) == 201
        graph = _get(served.url, "/api/skade/v1/graph")
        _assert_tied_up(graph)
        by_key = {n["key"]: n for n in graph["nodes"]}
        assert by_key["shop.cow"]["updated_in_place_by"] == [MERGE_JOB]
        assert all(n["updated_in_place_by"] == [] for k, n in by_key.items() if k != "shop.cow")
        # One write per run: the folded command_result is not a second write.
        assert len(by_key["shop.gold_rest"]["write_times_ms"]) == 1
        assert by_key["shop.gold_rest"]["last_writer"] == "skade_ol_rest.atomic_create_table_as_select.shop_gold_rest"

        columns = {(c["to"], c["column"]): c for c in graph["column_lineage"]}
        assert {k for k in columns if k[0] == "shop.gold_rest"} == {
            ("shop.gold_rest", c) for c in ("id", "name", "total", "*")}
        total = columns[("shop.gold_rest", "total")]
        assert total["job"] == "skade_ol_rest.atomic_create_table_as_select.shop_gold_rest"
        assert total["inputs"] == [{"from": "shop.orders", "column": "amount", "type": "DIRECT",
                                    "subtype": "AGGREGATION", "masking": False}]
        assert columns[("shop.orders_by_day", "id")]["inputs"][0]["from"] == "shop.orders"
        merge_wide = {(i["from"], i["column"], i["subtype"]) for i in columns[("shop.cow", "*")]["inputs"]}
        assert ("shop.events", "id", "JOIN") in merge_wide and ("shop.cow", "id", "JOIN") in merge_wide
        assert {i["from"] for c in graph["column_lineage"] for i in c["inputs"]} <= set(SKADE_TABLES)

        # The same through the CLI on the events the receiver stored.
        assert _lines(skade, "upstream", "shop.gold_rest") == ["shop.customers", "shop.orders"]
        assert _lines(skade, "downstream", "shop.events") == ["shop.cow"]
    finally:
        assert served.stop() == 0


def test_server_takes_its_uri_with_a_trailing_slash_and_not_another_servers(skade, warehouse):
    _make_tables(skade)
    served = Served(warehouse)
    try:
        ctas = [e for e in _events(warehouse) if e["job"]["name"].endswith("create_table_as_select.shop_gold_rest")]
        mine, theirs = json.loads(json.dumps(ctas[-1])), json.loads(json.dumps(ctas[-1]))
        port = int(served.url.rsplit(":", 1)[1])
        for e, uri, job in ((mine, f"http://localhost:{port}/", "mine"), (theirs, f"http://localhost:{port + 1}", "theirs")):
            e["job"]["name"] = job
            e["run"]["runId"] = e["run"]["runId"][:-1] + ("1" if job == "mine" else "2")
            e["outputs"][0]["facets"]["symlinks"]["identifiers"][0]["namespace"] = uri
            assert _post(served.url, e) == 201
        outputs = {e["to"] for e in _get(served.url, "/api/skade/v1/graph")["edges"] if e["job"] == "mine"}
        assert outputs == {"shop.gold_rest"}
        theirs_out = {e["to"] for e in _get(served.url, "/api/skade/v1/graph")["edges"] if e["job"] == "theirs"}
        assert theirs_out == {f"file:{warehouse}/shop/gold_rest"}
    finally:
        assert served.stop() == 0


def test_jdbc_catalog_events_name_no_datasets_so_they_add_no_lineage(skade, warehouse):
    """Through Iceberg's JDBC catalog openlineage-spark 1.53.0 resolves no dataset (README, "Lineage"):
    its runs are stored, and the graph stays empty rather than filling with stray nodes."""
    _make_tables(skade)
    events = [json.loads(line) for line in (DATA / "ol-jdbc.jsonl").read_text().splitlines() if line.strip()]
    assert events and all(not e.get("inputs") and not e.get("outputs") for e in events)
    out = skade.ok("lineage", "ingest", str(DATA / "ol-jdbc.jsonl"))
    assert out.startswith(f"ingested {len(events)} events"), out
    spark_jobs = {e["actor"] for e in skade.jsonl("lineage", "events") if e["operation"] == "external"}
    # Each statement's closing command_result (no datasets either) is folded into the statement's run.
    assert spark_jobs == {e["job"]["name"] for e in events if not e["job"]["name"].endswith(".command_result")}
    graph = json.loads(skade.ok("lineage", "graph", "--format", "json"))
    assert graph["edges"] == [] and {n["system"] for n in graph["nodes"]} == {"skade"}


def test_server_restarted_before_each_command_result_still_folds_it(skade, warehouse):
    """The runs a `command_result` closes are kept beside the catalog's lineage inbox: a
    server restarted between a statement's events and its closing command_result folds
    it all the same, and events sent again after a restart are stored once."""
    _make_tables(skade)
    served = Served(warehouse)
    events = _events(warehouse, served.url)
    try:
        for e in events:
            if e["job"]["name"].endswith(".command_result"):
                assert served.stop() == 0
                served = Served(warehouse, listen=served.url.removeprefix("http://"))
            assert _post(served.url, e) == 201
        _assert_tied_up(_get(served.url, "/api/skade/v1/graph"))
        stored = len(skade.jsonl("lineage", "events"))
        assert served.stop() == 0
        served = Served(warehouse, listen=served.url.removeprefix("http://"))
        for e in events:
            assert _post(served.url, e) == 201
        _assert_tied_up(_get(served.url, "/api/skade/v1/graph"))
        assert len(skade.jsonl("lineage", "events")) == stored
    finally:
        assert served.stop() == 0
