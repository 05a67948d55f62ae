"""The viewer's warehouse API (docs/api.md) against a real `skade serve`: a warehouse built
with the skade CLI (pipelines with --actor/--input, several snapshots, a dropped table)
plus the Spark OpenLineage events of a real run (ol-rest.jsonl, with columnLineage)
POSTed to the server's OpenLineage receiver. Answers are checked against what the CLI
says about the same warehouse."""
from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import io
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import Served
from skade_util import Skade

SPARK_EVENTS = Path("/work/shared/data/openlineage-spark/ol-rest.jsonl")
API = "/api/skade/v1"


class Api:
    def __init__(self, served: Served):
        self.url = served.url

    def request(self, path: str, headers: dict | None = None):
        req = urllib.request.Request(self.url + API + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def json(self, path: str, **params):
        status, _, body = self.request(path + ("?" + urllib.parse.urlencode(params) if params else ""))
        assert status == 200, (path, params, status, body)
        return json.loads(body)

    def error(self, path: str, code: int, type_: str, headers: dict | None = None) -> str:
        status, hdrs, body = self.request(path, headers)
        assert status == code, (path, status, body)
        err = json.loads(body)["error"]
        assert err["type"] == type_ and err["code"] == code, (path, err)
        assert "\n" not in err["message"] and "/tmp" not in err["message"] and "/wh" not in err["message"], err
        return err["message"]

    def rows(self, path: str, **params):
        """(header, rows, end) of an NDJSON answer."""
        status, headers, body = self.request(path + "?" + urllib.parse.urlencode(params))
        assert status == 200, (path, params, status, body)
        assert headers["Content-Type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in body.decode().splitlines()]
        return lines[0], lines[1:-1], lines[-1]


def csv_file(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def ms(t: float) -> int:
    return int(t * 1000)


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    """The warehouse, the server on it, and what the building steps recorded."""
    root = tmp_path_factory.mktemp("api")
    warehouse = root / "wh"
    skade = Skade(warehouse)
    skade.ok("init")
    skade.ok("create-namespace", "shop")
    skade.ok("create", "shop.orders", "--schema", "id:long!, customer_id:long, amount:decimal(10,2)",
             "--identifier", "id", "--partition", "bucket(4,id)")
    skade.ok("append", "shop.orders", csv_file(root / "o1.csv", "id,customer_id,amount\n1,10,12.50\n2,11,\n"),
             "--actor", "nightly-load", "--input", "kafka:orders")
    skade.ok("append", "shop.orders", csv_file(root / "o2.csv", "id,customer_id,amount\n3,10,3.00\n4,12,7.25\n"),
             "--actor", "nightly-load", "--input", "kafka:orders")
    skade.ok("upsert", "shop.orders", csv_file(root / "o3.csv", "id,customer_id,amount\n3,10,4.00\n5,13,1.10\n"),
             "--actor", "nightly-load", "--input", "kafka:orders")
    time.sleep(0.05)
    middle = ms(time.time())
    time.sleep(0.05)
    skade.ok("create", "shop.daily", "--schema", "customer_id:long, total:decimal(20,2)")
    skade.ok("append", "shop.daily", csv_file(root / "d.csv", "customer_id,total\n10,16.50\n"),
             "--actor", "rollup", "--input", "shop.orders")
    skade.ok("create", "shop.tmp", "--schema", "id:long")
    skade.ok("append", "shop.tmp", csv_file(root / "t.csv", "id\n1\n"), "--actor", "scratch", "--input", "shop.daily")
    time.sleep(0.05)
    before_drop = ms(time.time())
    time.sleep(0.05)
    skade.ok("drop", "shop.tmp", "--actor", "cleanup")
    types_table(skade, root)

    served = Served(warehouse)
    # Spark's events name the tables by their location in the run's warehouse.
    events = [json.loads(line.replace("/data/wh", str(warehouse))) for line in SPARK_EVENTS.read_text().splitlines()]
    req = urllib.request.Request(served.url + "/api/v1/lineage/batch", data=json.dumps(events).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    assert urllib.request.urlopen(req, timeout=60).status == 201
    yield {"skade": skade, "api": Api(served), "warehouse": warehouse, "middle": middle,
           "before_drop": before_drop, "served": served}
    assert served.stop() == 0, served.proc.stderr.read()


BIG = 2**53 + 7
TYPES_SCHEMA = ("b:boolean, i:int, l:long, f:float, d:double, dec:decimal(10,2), dt:date, tm:time, ts:timestamp, "
                "tstz:timestamptz, s:string, u:uuid, bin:binary, fx:fixed(4), tags:list<string>, m:map<string,long>, "
                "st:struct<a:int,b:string>")
UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")


def types_table(skade: Skade, root: Path):
    skade.ok("create", "shop.types", "--schema", TYPES_SCHEMA)
    t = pa.table({
        "b": pa.array([True, None], pa.bool_()),
        "i": pa.array([-7, None], pa.int32()),
        "l": pa.array([BIG, 42], pa.int64()),
        "f": pa.array([float("nan"), 1.5], pa.float32()),
        "d": pa.array([float("inf"), -float("inf")], pa.float64()),
        "dec": pa.array([decimal.Decimal("12.50"), decimal.Decimal("-0.05")], pa.decimal128(10, 2)),
        "dt": pa.array([dt.date(2026, 12, 1), None], pa.date32()),
        "tm": pa.array([dt.time(10, 30, 0, 500000), None], pa.time64("us")),
        "ts": pa.array([dt.datetime(2026, 12, 1, 10, 30), None], pa.timestamp("us")),
        "tstz": pa.array([dt.datetime(2026, 12, 1, 10, 30, 0, 123000, tzinfo=dt.timezone.utc), None],
                         pa.timestamp("us", tz="UTC")),
        "s": pa.array(["h\u00e9\"llo\n", None]),
        "u": pa.array([UUID.bytes, None], pa.binary(16)),
        "bin": pa.array([b"\x00\xffab", None], pa.binary()),
        "fx": pa.array([b"abcd", None], pa.binary(4)),
        "tags": pa.array([["x", None, "y"], []], pa.list_(pa.string())),
        "m": pa.array([[("k", 1), ("z", BIG)], None], pa.map_(pa.string(), pa.int64())),
        "st": pa.array([{"a": 1, "b": "q"}, None], pa.struct([("a", pa.int32()), ("b", pa.string())])),
    })
    path = root / "types.parquet"
    pq.write_table(t, path)
    skade.ok("append", "shop.types", path, "--actor", "types-load")


def cli_graph(skade: Skade) -> dict:
    return json.loads(skade.ok("lineage", "graph", "--format", "json"))


# --- /graph --------------------------------------------------------------------------------


def test_graph_nodes_edges_and_systems_match_the_cli(wh):
    api, skade = wh["api"], wh["skade"]
    g = api.json("/graph")
    cli = cli_graph(skade)
    assert [n["key"] for n in g["nodes"]] == sorted(n["key"] for n in cli["nodes"])
    by_key = {n["key"]: n for n in g["nodes"]}
    for n in cli["nodes"]:
        mine = by_key[n["key"]]
        assert (mine["system"], mine["name"]) == (n["system"], n["name"])
        want = None if n["latest_snapshot"] is None else str(n["latest_snapshot"])
        assert mine["latest_snapshot"] == want, n
        assert mine["kind"] == ("table" if n["system"] == "skade" else "dataset")
    edges = sorted((e["from"], e["to"], e["job"], e["count"], e["last_ms"]) for e in cli["edges"])
    assert [(e["from"], e["to"], e["job"], e["count"], e["last_ms"]) for e in g["edges"]] == edges
    totals = {}
    for n in cli["nodes"]:
        totals[n["system"]] = totals.get(n["system"], 0) + 1
    assert g["systems"] == [{"system": s, "total": c, "shown": c} for s, c in sorted(totals.items())]
    assert g["focus"] is None and g["window"]["since_ms"] is None and g["window"]["until_ms"] is None

    orders = by_key["shop.orders"]
    snaps = skade.snapshots("shop.orders")
    assert orders["latest_snapshot"] == str(snaps[-1]["snapshot_id"]) and orders["row_count"] == 5
    assert orders["namespace"] == "shop" and orders["run_state"] == "COMPLETE"
    assert orders["last_writer"] == "nightly-load" and orders["dropped_ms"] is None
    assert orders["columns"] == [{"name": "id", "type": "long"}, {"name": "customer_id", "type": "long"},
                                 {"name": "amount", "type": "decimal(10,2)"}]
    # create + 3 writes by skade, each COMPLETE; Spark only read it
    assert len(orders["write_times_ms"]) == 4 and orders["write_times_ms"] == sorted(orders["write_times_ms"])
    assert orders["last_write_ms"] == orders["write_times_ms"][-1]
    tmp = by_key["shop.tmp"]
    assert tmp["dropped_ms"] is not None and tmp["dropped_ms"] > wh["before_drop"]
    kafka = by_key["kafka:orders"]
    assert kafka["last_write_ms"] is None and kafka["last_writer"] == "" and kafka["run_state"] is None
    assert kafka["write_times_ms"] == [] and kafka["row_count"] is None and kafka["namespace"] == "kafka"

    edge = next(e for e in g["edges"] if e["from"] == "kafka:orders")
    assert edge["count"] == 3 and edge["actor"] == "nightly-load" and len(edge["run_ids"]) == 3
    assert edge["first_ms"] <= edge["last_ms"] and edge["run_state"] == "COMPLETE"
    events = [json.loads(line) for line in skade.ok("lineage", "events", "--format", "jsonl").splitlines()]
    assert edge["run_ids"] == [e["event_id"] for e in events if e["inputs"] and e["inputs"][0]["table"] == "orders"]


def test_spark_output_has_its_column_lineage(wh):
    g = wh["api"].json("/graph")
    spark_out = next(n for n in g["nodes"] if n["name"].endswith("/shop/gold_rest"))
    assert spark_out["kind"] == "dataset" and spark_out["namespace"] == "file"
    assert spark_out["columns"] == [{"name": "id", "type": "long"}, {"name": "name", "type": "string"},
                                    {"name": "total", "type": "decimal(20,2)"}]
    assert spark_out["row_count"] == 9 and spark_out["run_state"] == "COMPLETE"
    entries = [c for c in g["column_lineage"] if c["to"] == spark_out["key"]]
    assert [c["column"] for c in entries] == ["*", "id", "name", "total"]
    total = next(c for c in entries if c["column"] == "total")
    assert total["job"] == "skade_ol_rest.atomic_create_table_as_select.shop_gold_rest"
    assert total["inputs"] == [{"from": "shop.orders", "column": "amount", "type": "DIRECT",
                                "subtype": "AGGREGATION", "masking": False}]
    star = entries[0]
    assert {(i["from"], i["column"], i["type"], i["subtype"]) for i in star["inputs"]} == {
        ("shop.customers", "id", "INDIRECT", "GROUP_BY"), ("shop.customers", "name", "INDIRECT", "GROUP_BY")}
    assert [(c["to"], c["column"]) for c in g["column_lineage"]] == sorted((c["to"], c["column"])
                                                                           for c in g["column_lineage"])
    # START/RUNNING events of the run are not writes
    run_edges = [e for e in g["edges"] if e["to"] == spark_out["key"]
                 and e["job"] == "skade_ol_rest.atomic_create_table_as_select.shop_gold_rest"]
    assert run_edges and all(e["run_state"] == "COMPLETE" for e in run_edges)

    lean = wh["api"].json("/graph", columns="false")
    assert lean["column_lineage"] == [] and all(n["columns"] is None for n in lean["nodes"])
    assert [n["key"] for n in lean["nodes"]] == [n["key"] for n in g["nodes"]]


def test_focus_counts_what_it_hides(wh):
    api = wh["api"]
    g = api.json("/graph")
    ins, outs = {}, {}
    for e in g["edges"]:
        outs.setdefault(e["from"], set()).add(e["to"])
        ins.setdefault(e["to"], set()).add(e["from"])
    f = api.json("/graph", focus="shop.orders")
    want = {"shop.orders"} | ins.get("shop.orders", set()) | outs.get("shop.orders", set())
    assert {n["key"] for n in f["nodes"]} == want
    assert f["focus"]["key"] == "shop.orders" and f["focus"]["up"] == 1 and f["focus"]["down"] == 1
    assert f["focus"]["shown"] == len(want) and f["focus"]["total"] == len(g["nodes"])
    hidden = {}
    for k in want:
        up = len(ins.get(k, set()) - want)
        down = len(outs.get(k, set()) - want)
        if up or down:
            hidden[k] = {"up": up, "down": down}
    assert f["focus"]["hidden"] == hidden and hidden["shop.daily"] == {"up": 0, "down": 1}
    assert all(e["from"] in want and e["to"] in want for e in f["edges"])
    shown = {s["system"]: s["shown"] for s in f["systems"]}
    assert shown["skade"] == sum(1 for n in f["nodes"] if n["system"] == "skade")

    two = api.json("/graph", focus="kafka:orders", up=0, down=2)
    assert {n["key"] for n in two["nodes"]} == {"kafka:orders", "shop.orders"} | outs["shop.orders"]
    alone = api.json("/graph", focus="shop.daily", up=0, down=0)
    assert [n["key"] for n in alone["nodes"]] == ["shop.daily"] and alone["edges"] == []
    assert alone["focus"]["hidden"] == {"shop.daily": {"up": 1, "down": 1}}


def collapsed_from(full: dict, stands_as) -> tuple[dict, dict]:
    """The groups ({id: members}) and group edges ({(from, to): count}) the full graph gives
    when each node stands as `stands_as(node)`, computed here from /graph's nodes and edges."""
    rep = {n["key"]: stands_as(n) for n in full["nodes"]}
    groups, edges = {}, {}
    for key, r in rep.items():
        if r != key:
            groups[r] = groups.get(r, 0) + 1
    for e in full["edges"]:
        a, b = rep[e["from"]], rep[e["to"]]
        if (a, b) != (e["from"], e["to"]) and a != b:
            edges[(a, b)] = edges.get((a, b), 0) + 1
    return groups, edges


def test_collapsed_graph_counts_equal_the_full_graphs(wh):
    api = wh["api"]
    full = api.json("/graph")
    by_system = api.json("/graph", collapse="system", columns="false")
    assert by_system["nodes"] == [] and by_system["edges"] == []
    groups, edges = collapsed_from(full, lambda n: f"group:{n['system']}")
    assert {g["id"]: g["members"] for g in by_system["groups"]} == groups
    assert {(e["from"], e["to"]): e["count"] for e in by_system["group_edges"]} == edges
    assert ("group:kafka", "group:skade") in edges  # kafka feeds shop.orders
    for g in by_system["groups"]:
        members = [n for n in full["nodes"] if n["system"] == g["system"]]
        assert g["level"] == "system" and g["namespace"] is None
        assert g["namespaces"] == len({n["namespace"] for n in members})
        writes = [n["last_write_ms"] for n in members if n["last_write_ms"] is not None]
        assert g["last_write_ms"] == (max(writes) if writes else None)
        assert g["failed"] == sum(1 for n in members if n["run_state"] == "FAIL")
    assert by_system["systems"] == [{**s, "shown": 0} for s in full["systems"]]

    # skade opened into its namespaces, and shop opened into its tables
    opened = api.json("/graph", collapse="system", expand="group:skade,group:skade:shop")

    def stands_as(n):
        if n["system"] != "skade":
            return f"group:{n['system']}"
        return n["key"] if n["namespace"] == "shop" else f"group:skade:{n['namespace']}"

    groups, edges = collapsed_from(full, stands_as)
    assert {g["id"]: g["members"] for g in opened["groups"]} == groups
    assert {(e["from"], e["to"]): e["count"] for e in opened["group_edges"]} == edges
    shop = [n for n in full["nodes"] if stands_as(n) == n["key"]]
    assert opened["nodes"] == shop and len(shop) >= 3
    keys = {n["key"] for n in shop}
    assert opened["edges"] == [e for e in full["edges"] if e["from"] in keys and e["to"] in keys]
    assert ("group:kafka", "shop.orders") in edges and ("shop.orders", "shop.daily") not in edges
    assert {s["system"]: s["shown"] for s in opened["systems"]}["skade"] == len(shop)

    by_namespace = api.json("/graph", collapse="namespace")
    groups, edges = collapsed_from(full, lambda n: f"group:{n['system']}:{n['namespace']}")
    assert {g["id"]: g["members"] for g in by_namespace["groups"]} == groups
    assert {(e["from"], e["to"]): e["count"] for e in by_namespace["group_edges"]} == edges
    assert all(g["level"] == "namespace" and g["namespaces"] == 1 for g in by_namespace["groups"])
    assert sum(groups.values()) == len(full["nodes"])

    bad = "BadRequestException"
    assert "sideways" in api.error("/graph?collapse=sideways", 400, bad)
    assert "collapse" in api.error("/graph?expand=group:skade", 400, bad)
    assert "focus" in api.error("/graph?collapse=system&focus=shop.orders", 400, bad)
    assert "group:nowhere" in api.error("/graph?collapse=system&expand=group:nowhere", 404, "NoSuchGroupException")


def test_systems_filter_keeps_edges_touching_them(wh):
    api = wh["api"]
    g = api.json("/graph", systems="kafka")
    assert [(e["from"], e["to"]) for e in g["edges"]] == [("kafka:orders", "shop.orders")]
    assert [n["key"] for n in g["nodes"]] == ["kafka:orders", "shop.orders"]
    full = api.json("/graph")
    assert {s["system"]: s["total"] for s in g["systems"]} == {s["system"]: s["total"] for s in full["systems"]}
    assert {s["system"]: s["shown"] for s in g["systems"]}["skade"] == 1


def test_until_shows_the_graph_as_it_was(wh):
    api = wh["api"]
    g = api.json("/graph", until=str(wh["middle"]))
    keys = {n["key"] for n in g["nodes"]}
    assert "shop.daily" not in keys and "shop.tmp" not in keys and "shop.orders" in keys
    assert all(e["last_ms"] < wh["middle"] for e in g["edges"])
    assert not any(e["to"] == "shop.daily" for e in g["edges"])
    assert g["window"]["until_ms"] == wh["middle"]
    before_drop = api.json("/graph", until=str(wh["before_drop"]))
    tmp = next(n for n in before_drop["nodes"] if n["key"] == "shop.tmp")
    assert tmp["dropped_ms"] is None
    # RFC 3339 works too; the Spark run (2026-12-01T10:30) lies before this
    spark_only = api.json("/graph", until="2026-12-01T10:30:17Z")
    assert {e["job"] for e in spark_only["edges"]} == {"skade_ol_rest.append_data.skade_shop_orders_by_day"}
    since = api.json("/graph", since=str(wh["middle"]))
    assert "kafka:orders" not in {n["key"] for n in since["nodes"]}


# --- /node ---------------------------------------------------------------------------------


def test_node_detail_of_a_table(wh):
    api, skade = wh["api"], wh["skade"]
    d = api.json("/node", key="shop.orders")
    graph_node = next(n for n in api.json("/graph")["nodes"] if n["key"] == "shop.orders")
    assert d["node"] == graph_node
    t = d["table"]
    assert t["format_version"] == 2 and t["location"].endswith("/shop.db/orders")
    assert t["schema"]["identifier_field_ids"] == [1]
    assert t["schema"]["fields"][0] == {"id": 1, "name": "id", "type": "long", "required": True, "doc": None}
    assert t["schema"]["fields"][2]["type"] == "decimal(10,2)"
    assert t["partition_spec"]["fields"] == [{"field_id": 1000, "source_id": 1, "name": "id_bucket",
                                              "transform": "bucket[4]"}]
    snaps = skade.snapshots("shop.orders")
    assert [s["snapshot_id"] for s in t["snapshots"]] == [str(s["snapshot_id"]) for s in snaps]
    assert all(isinstance(s["snapshot_id"], str) for s in t["snapshots"])
    assert t["snapshots"][0]["parent_snapshot_id"] is None
    assert t["snapshots"][1]["parent_snapshot_id"] == t["snapshots"][0]["snapshot_id"]
    assert [s["total_records"] for s in t["snapshots"]] == [s["total_records"] for s in snaps]
    assert t["snapshots"][0]["added_records"] == 2 and t["snapshots"][0]["operation"] == "append"
    assert t["current_snapshot_id"] == t["snapshots"][-1]["snapshot_id"]
    assert t["refs"] == {"main": {"snapshot_id": t["current_snapshot_id"], "type": "branch"}}
    w = d["latest_writer"]
    log = skade.log("--table", "shop.orders")
    assert w["actor"] == "nightly-load" and w["commit_seq"] == log[-1]["commit_seq"] and w["run_state"] == "COMPLETE"
    assert w["run_id"] is None and w["ts_ms"] == d["node"]["last_write_ms"]
    # 4 writes seconds apart are one burst: no cadence, so never stale
    times = d["node"]["write_times_ms"]
    assert len(times) == 4 and times[-1] - times[0] < 60_000
    assert d["freshness"] == {"state": "unknown", "last_write_ms": times[-1], "median_interval_ms": None,
                              "stale_after_ms": None}


def test_node_detail_of_a_dataset_and_a_dropped_table(wh):
    api = wh["api"]
    k = api.json("/node", key="kafka:orders")
    assert k["table"] is None and k["latest_writer"] is None
    assert k["freshness"] == {"state": "unknown", "last_write_ms": None, "median_interval_ms": None,
                              "stale_after_ms": None}
    tmp = api.json("/node", key="shop.tmp")
    assert tmp["table"] is None and tmp["node"]["dropped_ms"] is not None
    assert tmp["latest_writer"]["actor"] == "cleanup" and tmp["latest_writer"]["operation"] == "drop"
    assert tmp["freshness"]["state"] == "unknown"
    spark = next(n for n in api.json("/graph")["nodes"] if n["name"].endswith("/shop/gold_rest"))
    s = api.json("/node", key=spark["key"])
    assert s["latest_writer"]["run_id"] and s["latest_writer"]["job"] == s["latest_writer"]["actor"]


def run_event(name: str, t_ms: int, inputs=()):
    """A COMPLETE OpenLineage RunEvent writing postgres `name` at `t_ms`."""
    ds = lambda n: {"namespace": "postgres://db:5432", "name": n}  # noqa: E731
    return {"eventType": "COMPLETE", "eventTime": dt.datetime.fromtimestamp(t_ms / 1000, dt.timezone.utc).isoformat(),
            "producer": "https://example.com/test", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json",
            "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "etl", "name": f"load_{name}"},
            "inputs": [ds(i) for i in inputs], "outputs": [ds(name)]}


def post_events(served: Served, events: list):
    req = urllib.request.Request(served.url + "/api/v1/lineage/batch", data=json.dumps(events).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    assert urllib.request.urlopen(req, timeout=60).status == 201


def expected_freshness(times: list[int], now_ms: int) -> dict:
    """docs/api.md's rule, written out: the median gap between bursts (a minute apart or more)."""
    gaps = sorted(g for g in (b - a for a, b in zip(times, times[1:])) if g > 60_000)
    if len(gaps) < 3:
        return {"state": "unknown", "last_write_ms": times[-1] if times else None, "median_interval_ms": None,
                "stale_after_ms": None}
    mid = len(gaps) // 2
    median = gaps[mid] if len(gaps) % 2 else (gaps[mid - 1] + gaps[mid]) / 2
    after = times[-1] + 3 * median
    return {"state": "stale" if now_ms > after else "fresh", "last_write_ms": times[-1],
            "median_interval_ms": median, "stale_after_ms": after}


def test_freshness_follows_the_cadence_of_writes_and_the_fold_follows_commits(warehouse):
    H = 3_600_000
    now = ms(time.time())
    writes = {
        "hourly_stopped": [now - 14 * H + i * H for i in range(5)],        # last write 10 h ago: stale
        "hourly_running": [now - 4 * H - 1800_000 + i * H for i in range(5)],  # last 30 min ago: fresh
        "one_burst": [now - 100 * H + i * 2000 for i in range(6)],       # one run of 6 commits: unknown
        "runs_of_two": [t + d for t in (now - 3 * H, now - 2 * H, now - H, now - 60_000) for d in (0, 5000)],
        "twice": [now - 50 * H, now - 40 * H, now - 30 * H],            # two gaps: unknown
    }
    served = Served(warehouse)
    try:
        api = Api(served)
        post_events(served, [run_event(name, t) for name, times in writes.items() for t in times])
        graph = api.json("/graph")
        keys = {n["name"]: n["key"] for n in graph["nodes"]}
        states = {}
        for name, times in writes.items():
            d = api.json("/node", key=keys[name])
            assert d["node"]["write_times_ms"] == times, name
            assert d["freshness"] == expected_freshness(times, ms(time.time())), name
            states[name] = d["freshness"]["state"]
        assert states == {"hourly_stopped": "stale", "hourly_running": "fresh", "one_burst": "unknown",
                          "runs_of_two": "fresh", "twice": "unknown"}
        assert api.json("/node", key=keys["runs_of_two"])["freshness"]["median_interval_ms"] == H - 5000

        # the graph names the newest commit it was folded at: the event stream resumes after it
        newest = api.json("/commits", order="desc", limit=1)["commits"][0]["commit_seq"]
        assert graph["window"]["commit_seq"] == newest
        # the fold is kept while nothing is committed, and folded again after a commit
        again = api.json("/graph")
        assert {k: v for k, v in again.items() if k != "window"} == {k: v for k, v in graph.items() if k != "window"}
        post_events(served, [run_event("later", now, inputs=["hourly_running"])])
        after = api.json("/graph")
        assert {n["name"] for n in after["nodes"]} == set(writes) | {"later"}
        assert after["window"]["commit_seq"] > newest
        assert after["window"]["commit_seq"] == api.json("/commits", order="desc", limit=1)["commits"][0]["commit_seq"]
        later = next(n["key"] for n in after["nodes"] if n["name"] == "later")
        assert [(e["from"], e["to"]) for e in after["edges"]] == [(keys["hourly_running"], later)]
        assert [r["key"] for r in api.json("/impact", key=keys["hourly_running"])["entries"]] == [later]
    finally:
        assert served.stop() == 0


# --- /impact -------------------------------------------------------------------------------


@pytest.mark.parametrize("direction,key", [("downstream", "shop.orders"), ("downstream", "kafka:orders"),
                                           ("upstream", "shop.tmp"), ("upstream", "shop.cow")])
def test_impact_equals_the_cli(wh, direction, key):
    api, skade = wh["api"], wh["skade"]
    cli = skade.jsonl("lineage", direction, key)
    want = sorted(((r["depth"], r["dataset"]) for r in cli))
    j = api.json("/impact", key=key, direction=direction)
    assert j["key"] == key and j["direction"] == direction and j["depth"] == 0
    assert [(e["depth"], e["key"]) for e in j["entries"]] == want
    nodes = {n["key"]: n for n in api.json("/graph")["nodes"]}
    for e in j["entries"]:
        n = nodes[e["key"]]
        assert (e["system"], e["name"], e["last_writer"], e["last_write_ms"]) == (
            n["system"], n["name"], n["last_writer"], n["last_write_ms"])
    by_cli = {r["dataset"]: r for r in cli}
    assert all(by_cli[e["key"]]["system"] == e["system"] for e in j["entries"])
    one = api.json("/impact", key=key, direction=direction, depth=1)
    assert [(e["depth"], e["key"]) for e in one["entries"]] == sorted(
        (r["depth"], r["dataset"]) for r in skade.jsonl("lineage", direction, key, "--depth", "1"))

    for req in ({"format": "csv"}, {}):
        params = {"key": key, "direction": direction, **req}
        status, headers, body = api.request("/impact?" + urllib.parse.urlencode(params),
                                            {} if req else {"Accept": "text/csv"})
        assert status == 200 and headers["Content-Type"].startswith("text/csv")
        rows = list(csv.reader(io.StringIO(body.decode(), newline="")))
        assert rows[0] == ["key", "system", "name", "depth", "last_writer", "last_write"]
        assert rows[1:] == [[e["key"], e["system"], e["name"], str(e["depth"]), e["last_writer"],
                             "" if e["last_write_ms"] is None else
                             dt.datetime.fromtimestamp(e["last_write_ms"] / 1000, dt.timezone.utc)
                             .strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"] for e in j["entries"]]


# --- /tables/.../preview -------------------------------------------------------------------


def test_preview_at_an_older_snapshot_gives_its_rows(wh):
    api, skade = wh["api"], wh["skade"]
    snaps = skade.snapshots("shop.orders")
    for snap in snaps:
        header, rows, end = api.rows("/tables/shop/orders/preview", snapshot=snap["snapshot_id"])
        assert header["snapshot_id"] == str(snap["snapshot_id"])
        assert header["columns"] == [{"name": "id", "type": "long"}, {"name": "customer_id", "type": "long"},
                                     {"name": "amount", "type": "decimal(10,2)"}]
        cli = skade.jsonl("scan", "shop.orders", "--snapshot", snap["snapshot_id"])
        assert sorted(rows, key=str) == sorted(([r["id"], r["customer_id"], r["amount"]] for r in cli), key=str)
        assert end == {"end": {"rows": len(rows), "truncated": False}}
    _, current, _ = api.rows("/tables/shop/orders/preview")
    assert sorted(r[0] for r in current) == [1, 2, 3, 4, 5]
    assert [3, 10, "4.00"] in current and [2, 11, None] in current


def test_preview_limit_columns_and_where(wh):
    api = wh["api"]
    header, rows, end = api.rows("/tables/shop/orders/preview", limit=2)
    assert len(rows) == 2 and end == {"end": {"rows": 2, "truncated": True}}
    _, rows, end = api.rows("/tables/shop/orders/preview", limit=5)
    assert len(rows) == 5 and end["end"]["truncated"] is False
    _, rows, end = api.rows("/tables/shop/orders/preview", limit=0)
    assert rows == [] and end == {"end": {"rows": 0, "truncated": True}}
    header, rows, _ = api.rows("/tables/shop/orders/preview", columns="amount,id", where="amount > 3")
    assert [c["name"] for c in header["columns"]] == ["amount", "id"]
    assert sorted(rows, key=lambda r: r[1]) == [["12.50", 1], ["4.00", 3], ["7.25", 4]]
    header, rows, end = api.rows("/tables/shop/orders/preview", limit=10000)
    assert len(rows) == 5 and not end["end"]["truncated"]


def test_preview_value_encodings(wh):
    header, rows, end = wh["api"].rows("/tables/shop/types/preview")
    names = [c["name"] for c in header["columns"]]
    assert [c["type"] for c in header["columns"]][:6] == ["boolean", "int", "long", "float", "double",
                                                          "decimal(10,2)"]
    by_l = {r[names.index("l")]: dict(zip(names, r)) for r in rows}
    a, b = by_l[str(BIG)], by_l[42]
    assert a["b"] is True and a["i"] == -7 and b["b"] is None and b["i"] is None
    assert a["f"] == "NaN" and b["f"] == 1.5 and a["d"] == "Infinity" and b["d"] == "-Infinity"
    assert a["dec"] == "12.50" and b["dec"] == "-0.05"
    assert a["dt"] == "2026-12-01" and a["tm"].startswith("10:30:00.5")
    assert a["ts"].startswith("2026-12-01T10:30:00") and not a["ts"].endswith("Z")
    assert a["tstz"].startswith("2026-12-01T10:30:00.123") and a["tstz"].endswith("Z")
    assert a["s"] == "h\u00e9\"llo\n" and a["u"] == str(UUID)
    assert base64.b64decode(a["bin"]) == b"\x00\xffab" and base64.b64decode(a["fx"]) == b"abcd"
    assert a["tags"] == ["x", None, "y"] and b["tags"] == []
    assert a["m"] == [["k", 1], ["z", str(BIG)]] and b["m"] is None
    assert a["st"] == {"a": 1, "b": "q"} and b["st"] is None
    assert end == {"end": {"rows": 2, "truncated": False}}
    # a struct's field alone, and a filter on the struct's nulls
    header, rows, _ = wh["api"].rows("/tables/shop/types/preview", columns="l,st.b,l", where="st is not null")
    assert header["columns"] == [{"name": "l", "type": "long"}, {"name": "st", "type": "struct<b:string>"}]
    assert rows == [[str(BIG), {"b": "q"}]]


# --- /tables/.../changes -------------------------------------------------------------------


def as_cli_row(names: list[str], row: list) -> dict:
    d = dict(zip(names, row))
    d["_commit_snapshot_id"] = int(d["_commit_snapshot_id"])
    return d


@pytest.mark.parametrize("flags", [(), ("--compute-updates",), ("--net",)])
def test_changes_equal_the_cli(wh, flags):
    api, skade = wh["api"], wh["skade"]
    snaps = skade.snapshots("shop.orders")
    params = {"from": snaps[0]["snapshot_id"], "to": snaps[-1]["snapshot_id"]}
    if "--compute-updates" in flags:
        params["compute_updates"] = "true"
    if "--net" in flags:
        params["net"] = "true"
    header, rows, end = api.rows("/tables/shop/orders/changes", **params)
    names = [c["name"] for c in header["columns"]]
    assert names[-3:] == ["_change_type", "_change_ordinal", "_commit_snapshot_id"]
    assert header["columns"][-1] == {"name": "_commit_snapshot_id", "type": "long"}
    assert header["from_snapshot_id"] == str(snaps[0]["snapshot_id"])
    assert header["to_snapshot_id"] == str(snaps[-1]["snapshot_id"])
    assert all(isinstance(r[-1], str) for r in rows)
    cli = skade.jsonl("changes", "shop.orders", "--from", snaps[0]["snapshot_id"], "--to",
                      snaps[-1]["snapshot_id"], *flags)
    assert sorted((as_cli_row(names, r) for r in rows), key=str) == sorted(cli, key=str)
    assert end == {"end": {"rows": len(rows), "truncated": False}} and rows
    if "--compute-updates" in flags:
        assert {r[names.index("_change_type")] for r in rows} >= {"UPDATE_BEFORE", "UPDATE_AFTER"}


def test_changes_default_to_current_limit_and_columns(wh):
    api, skade = wh["api"], wh["skade"]
    snaps = skade.snapshots("shop.orders")
    header, rows, _ = api.rows("/tables/shop/orders/changes", **{"from": snaps[1]["snapshot_id"]})
    assert header["to_snapshot_id"] == str(snaps[-1]["snapshot_id"]) and len(rows) == 3
    _, rows, end = api.rows("/tables/shop/orders/changes", **{"from": snaps[0]["snapshot_id"], "limit": 1})
    assert len(rows) == 1 and end["end"]["truncated"] is True
    header, rows, _ = api.rows("/tables/shop/orders/changes",
                               **{"from": snaps[1]["snapshot_id"], "columns": "id", "where": "id = 3"})
    assert [c["name"] for c in header["columns"]] == ["id", "_change_type", "_change_ordinal", "_commit_snapshot_id"]
    assert sorted(r[1] for r in rows) == ["DELETE", "INSERT"]
    # Metadata columns: each change's row where its file held it, as the CLI gives them.
    params = {"from": snaps[1]["snapshot_id"], "columns": "id,_file,_pos", "where": "id = 3"}
    header, rows, _ = api.rows("/tables/shop/orders/changes", **params)
    assert header["columns"][:3] == [{"name": "id", "type": "long"}, {"name": "_file", "type": "string"},
                                     {"name": "_pos", "type": "long"}]
    cli = skade.jsonl("changes", "shop.orders", "--from", snaps[1]["snapshot_id"], "--columns", "id,_file,_pos",
                      "--where", "id = 3")
    assert sorted(tuple(r[:4]) for r in rows) == sorted((c["id"], c["_file"], c["_pos"], c["_change_type"]) for c in cli)
    assert len({r[1] for r in rows}) == 2  # the deleted row's file and the new row's


# --- /commits ------------------------------------------------------------------------------


def test_commits_page_through_the_log(wh):
    api, skade = wh["api"], wh["skade"]
    log = skade.log()
    seen, seq = [], 1
    while True:
        page = api.json("/commits", from_seq=seq, limit=3)
        assert len(page["commits"]) <= 3
        seen += page["commits"]
        if not page["commits"]:
            assert page["next_seq"] == seq
            break
        assert page["next_seq"] == page["commits"][-1]["commit_seq"] + 1
        seq = page["next_seq"]
    assert [c["commit_seq"] for c in seen] == [e["commit_seq"] for e in log]
    for c, e in zip(seen, log):
        assert (c["table"], c["action"], c["operation"], c["engine"]) == (e["table"], e["action"], e["operation"],
                                                                          e["engine"])
        assert c["snapshot_id"] == (None if e["snapshot_id"] is None else str(e["snapshot_id"]))
        assert isinstance(c["committed_at_ms"], int)
    orders = api.json("/commits", table="shop.orders")["commits"]
    assert [c["commit_seq"] for c in orders] == [e["commit_seq"] for e in skade.log("--table", "shop.orders")]
    assert [c["actor"] for c in orders][1:] == ["nightly-load"] * 3
    drop = next(c for c in seen if c["action"] == "drop")
    assert drop["table"] == "shop.tmp" and drop["actor"] == "cleanup" and drop["snapshot_id"] is None
    assert api.json("/commits", limit=0) == {"commits": [], "next_seq": 1}


def test_commits_newest_first_and_below_an_exclusive_until_seq(wh):
    api, skade = wh["api"], wh["skade"]
    seqs = [e["commit_seq"] for e in skade.log()]
    # newest first, paged back by until_seq
    seen, until = [], None
    while True:
        page = api.json("/commits", order="desc", limit=4, **({"until_seq": until} if until else {}))
        got = [c["commit_seq"] for c in page["commits"]]
        assert got == sorted(got, reverse=True) and len(got) <= 4
        seen += got
        if not got:
            assert page["next_seq"] == until
            break
        assert page["next_seq"] == got[-1]
        until = page["next_seq"]
    assert seen == seqs[::-1]
    assert [c["commit_seq"] for c in api.json("/commits", order="desc", limit=3)["commits"]] == seqs[::-1][:3]
    # until_seq is exclusive, from_seq inclusive, in either order
    a, b = seqs[1], seqs[5]
    asc = api.json("/commits", from_seq=a, until_seq=b)
    assert [c["commit_seq"] for c in asc["commits"]] == [s for s in seqs if a <= s < b]
    assert asc["next_seq"] == b
    desc = api.json("/commits", from_seq=a, until_seq=b, order="desc")
    assert [c["commit_seq"] for c in desc["commits"]] == [s for s in seqs if a <= s < b][::-1]
    assert desc["next_seq"] == a
    # the newest first entries are the same entries
    newest = api.json("/commits", order="desc", limit=1)["commits"][0]
    assert newest == api.json("/commits", from_seq=seqs[-1])["commits"][0]
    orders = [e["commit_seq"] for e in skade.log("--table", "shop.orders")]
    got = api.json("/commits", table="shop.orders", order="desc", until_seq=orders[-1])["commits"]
    assert [c["commit_seq"] for c in got] == orders[-2::-1]
    assert api.json("/commits", order="desc", until_seq=1) == {"commits": [], "next_seq": 1}


# --- errors --------------------------------------------------------------------------------


# --- /tables/.../partitions ----------------------------------------------------------------


def test_partitions_equal_the_cli_at_each_snapshot(wh):
    api, skade = wh["api"], wh["skade"]
    counts = ["spec_id", "record_count", "file_count", "total_data_file_size_in_bytes",
              "position_delete_record_count", "position_delete_file_count", "equality_delete_record_count",
              "equality_delete_file_count"]
    for snap in skade.snapshots("shop.orders"):
        header, rows, end = api.rows("/tables/shop/orders/partitions", snapshot=snap["snapshot_id"])
        assert header["snapshot_id"] == str(snap["snapshot_id"])
        names = [c["name"] for c in header["columns"]]
        assert names == ["partition", *counts, "last_updated_at", "last_updated_snapshot_id"]
        cli = skade.jsonl("partitions", "shop.orders", "--snapshot", snap["snapshot_id"])
        text = skade.ok("partitions", "shop.orders", "--snapshot", snap["snapshot_id"], "--format", "csv")
        assert [r[0] for r in rows] == [line.split(",")[0] for line in text.splitlines()[1:]]
        assert [r[1:9] for r in rows] == [[c[k] for k in counts] for c in cli]
        assert [r[10] for r in rows] == [str(c["last_updated_snapshot_id"]) for c in cli]
        assert [dt.datetime.fromisoformat(r[9]) for r in rows] == \
            [dt.datetime.fromisoformat(c["last_updated_at"]) for c in cli]
        assert all(r[9].endswith("Z") for r in rows)
        assert end == {"end": {"rows": len(rows), "truncated": False}}
    _, rows, _ = api.rows("/tables/shop/orders/partitions")
    assert sum(r[2] for r in rows) == 5  # the upsert replaced the one file holding id 3
    _, rows, end = api.rows("/tables/shop/orders/partitions", limit=1)
    assert len(rows) == 1 and end["end"]["truncated"] is True
    _, rows, end = api.rows("/tables/shop/daily/partitions")
    assert rows[0][0] == "" and rows[0][2] == 1  # unpartitioned: one row, no folder


def test_every_error_case(wh):
    api, skade = wh["api"], wh["skade"]
    snap = skade.snapshots("shop.orders")
    first, last = snap[0]["snapshot_id"], snap[-1]["snapshot_id"]
    bad = "BadRequestException"
    assert api.error("/impact?key=shop.orders&depth=x", 400, bad) == "depth must be a non-negative integer, got 'x'"
    cases = [("/graph?since=yesterday", "since"), ("/graph?until=2026-13-45", "until"), ("/graph?up=-1", "up"),
             ("/graph?down=x", "down"), ("/graph?columns=maybe", "columns"), ("/node", "key"), ("/node?key=", "key"),
             ("/impact", "key"), ("/impact?key=shop.orders&direction=sideways", "direction"),
             ("/impact?key=shop.orders&depth=-3", "depth"), ("/tables/shop/orders/preview?limit=10001", "limit"),
             ("/tables/shop/orders/preview?limit=-1", "limit"), ("/tables/shop/orders/preview?snapshot=abc", "snapshot"),
             ("/tables/shop/orders/preview?columns=id,nope", "nope"),
             ("/tables/shop/orders/preview?where=amount%20%3E", "filter"), ("/tables/shop/orders/changes", "from"),
             (f"/tables/shop/orders/changes?from={last}&to={first}", "ancestor"),
             (f"/tables/shop/orders/changes?from={first}&net=perhaps", "net"),
             (f"/tables/shop/orders/changes?from={first}&compute_updates=1", "compute_updates"),
             (f"/tables/shop/orders/changes?from={first}&limit=99999999999999999999", "limit"),
             ("/tables/shop/orders/changes?from=x", "from"), ("/commits?limit=10001", "limit"),
             ("/commits?from_seq=0", "from_seq"), ("/commits?table=nodot", "nodot"),
             ("/commits?until_seq=0", "until_seq"), ("/commits?order=sideways", "order"),
             ("/tables/shop/orders/partitions?limit=10001", "limit"),
             ("/tables/shop/orders/partitions?snapshot=abc", "snapshot")]
    for path, word in cases:
        msg = api.error(path, 400, bad)
        assert word in msg, (path, msg)
    assert "nope" in api.error("/tables/shop/orders/preview?columns=id,nope", 400, bad)
    assert "maybe" in api.error("/graph?columns=maybe", 400, bad)
    assert "yesterday" in api.error("/graph?since=yesterday", 400, bad)
    for path in ("/graph?focus=raw.missing", "/node?key=raw.missing", "/impact?key=spark:nowhere"):
        assert "raw.missing" in api.error(path, 404, "NoSuchNodeException") or "nowhere" in path
    for path in ("/tables/shop/nope/preview", "/tables/nope/orders/changes?from=1", "/tables/a%1Fb/c/preview",
                 "/tables/shop/nope/partitions"):
        api.error(path, 404, "NoSuchTableException")
    for path in ("/tables/shop/orders/preview?snapshot=123", "/tables/shop/orders/changes?from=123",
                 "/tables/shop/orders/partitions?snapshot=123",
                 f"/tables/shop/orders/changes?from={first}&to=456"):
        assert "12" in api.error(path, 404, "NoSuchSnapshotException") or "456" in path
    api.error("/impact?key=shop.orders&format=xml", 406, "NotAcceptableException")
    api.error("/impact?key=shop.orders", 406, "NotAcceptableException", {"Accept": "application/xml"})


def test_hostile_parameters_never_crash_the_server(wh):
    api = wh["api"]
    deep = "a." * 2000 + "b"
    huge = "9" * 400
    for path, code in ((f"/node?key={deep}", 404), (f"/graph?focus={deep}", 404), (f"/graph?up={huge}", 400),
                       (f"/graph?focus=shop.orders&up=9223372036854775807&down=9223372036854775807", 200),
                       (f"/impact?key=shop.orders&depth=9223372036854775807", 200),
                       (f"/tables/shop/orders/preview?snapshot={huge}", 400),
                       (f"/tables/shop/orders/preview?snapshot=-9223372036854775808", 404),
                       (f"/tables/shop/orders/preview?limit={huge}", 400),
                       (f"/tables/shop/orders/preview?where={'(' * 3000}", 400),
                       (f"/tables/shop/orders/preview?columns={',' * 3000}", 200),
                       (f"/tables/{'x' * 3000}/y/preview", 400), (f"/commits?from_seq={huge}", 400),
                       (f"/commits?from_seq=9223372036854775807", 200),
                       ("/tables/..%2F..%2Fetc/passwd/preview", 404), (f"/node?key={'x' * 20000}", 414)):
        status, _, body = api.request(path)
        assert status == code, (path[:120], status, body[:300])
        if status != 200:
            msg = json.loads(body)["error"]["message"]
            assert len(msg) < 600 and str(wh["warehouse"]) not in msg, (path[:120], msg)
    assert api.json("/graph")["nodes"]  # still serving


def test_rename_ends_the_old_name_and_derives_the_new(served, skade, tmp_path):
    api = Api(served)
    skade.ok("create-namespace", "r")
    skade.ok("create", "r.old", "--schema", "id:long")
    skade.ok("append", "r.old", csv_file(tmp_path / "r.csv", "id\n1\n"), "--actor", "loader")
    skade.ok("rename", "r.old", "r.new", "--actor", "ana")
    g = api.json("/graph")
    nodes = {n["key"]: n for n in g["nodes"]}
    assert nodes["r.old"]["dropped_ms"] is not None and nodes["r.new"]["dropped_ms"] is None
    assert [(e["from"], e["to"], e["actor"]) for e in g["edges"]] == [("r.old", "r.new", "ana")]
    assert api.json("/node", key="r.old")["table"] is None
    # the rename's event names no snapshot (as `skade lineage graph` shows); the table still has its own
    assert nodes["r.new"]["latest_snapshot"] is None and nodes["r.old"]["latest_snapshot"] is not None
    assert api.json("/node", key="r.new")["table"]["current_snapshot_id"] == nodes["r.old"]["latest_snapshot"]
    commits = api.json("/commits", table="r.new")["commits"]
    assert [(c["action"], c["actor"]) for c in commits] == [("rename", "ana")]
