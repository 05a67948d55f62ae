"""Lineage through the skade CLI: one event per commit on every write path, stored in the Iceberg
table `_skade.lineage_events` (read here by PyIceberg too), caught up after a crash, queried as a
graph, and OpenLineage RunEvents ingested with per-line errors."""
from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess

import pyarrow as pa

from skade_util import open_catalog, write_parquet

SEQ = re.compile(r"commit_seq (\d+)")


def _seq(out: str) -> int:
    return int(SEQ.search(out).group(1))


def _events(skade, *args) -> list[dict]:
    out = skade.ok("lineage", "events", "--format", "jsonl", *args)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _logged_events(warehouse) -> dict[int, dict]:
    """The events stored in the commit log itself, by commit_seq."""
    con = sqlite3.connect(warehouse / "catalog.db")
    try:
        rows = con.execute("select commit_seq, lineage_event from skade_commit_log "
                           "where lineage_event is not null order by commit_seq").fetchall()
    finally:
        con.close()
    return {seq: json.loads(text) for seq, text in rows}


def _rows(tmp_path, name, ids, values):
    return write_parquet(pa.table({"id": pa.array(ids, pa.int64()), "v": values}), tmp_path / name)


def test_every_write_path_emits_one_event(skade, warehouse, tmp_path):
    skade.ok("create-namespace", "db")
    seqs, expected = [], []

    def write(operation, *args, actor="tester", inputs=()):
        out = skade.ok(*args, "--actor", actor, *[a for i in inputs for a in ("--input", i)])
        seqs.append(_seq(out) if SEQ.search(out) else None)
        expected.append((operation, actor, list(inputs)))
        return out

    write("create", "create", "db.t", "--schema", "id:long!, v:string", "--identifier", "id")
    write("create", "create", "db.src", "--schema", "id:long!, v:string")
    out = skade.ok("append", "db.src", _rows(tmp_path, "s.parquet", [9], ["s"]))
    src_snapshot = int(re.search(r"snapshot (\d+)", out).group(1))
    expected.append(("append", os.environ.get("SKADE_ACTOR") or "", []))
    seqs.append(_seq(out))
    write("append", "append", "db.t", _rows(tmp_path, "a.parquet", [1, 2, 3], ["a", "b", "c"]), actor="loader",
          inputs=("spark:landing.events", f"db.src@{src_snapshot}"))
    write("upsert", "upsert", "db.t", _rows(tmp_path, "u.parquet", [2], ["B"]))
    write("overwrite", "overwrite", "db.t", _rows(tmp_path, "o.parquet", [3], ["C"]), "--where", "id = 3")
    write("delete", "delete", "db.t", "--where", "id = 1")
    write("schema_change", "alter", "db.t", "add-column", "note", "string")
    write("maintenance", "compact", "db.t")
    write("maintenance", "expire", "db.t", "--retain-last", "1", "--older-than", "2999-01-01T00:00:00Z")
    write("rename", "rename", "db.t", "db.t2")
    write("drop", "drop", "db.t2")

    events = _events(skade)
    events = [e for e in events if e["outputs"][0]["table"] in ("db.t", "db.t2", "db.src")]
    assert [e["operation"] for e in events] == [op for op, _, _ in expected]
    logged = _logged_events(warehouse)
    for e, (op, actor, inputs), seq in zip(events, expected, seqs):
        if actor:
            assert e["actor"] == actor, e
        assert logged[e["commit_seq"]] == e, "the stored event is the one minted in the commit's log row"
        if seq is not None:
            assert e["commit_seq"] == seq, (op, e)
        keys = [(i["system"]["kind"] + ":" if "system" in i else "") + i["table"] +
                (f"@{i['snapshot_id']}" if "snapshot_id" in i else "") for i in e["inputs"]]
        if op == "rename":
            assert keys == ["db.t"] + list(inputs) and e["outputs"][0]["table"] == "db.t2"
        else:
            assert keys == list(inputs), (op, e)
    assert len({e["event_id"] for e in events}) == len(events)
    # outputs carry the snapshot each write committed
    snaps = {s["snapshot_id"] for s in skade.jsonl("snapshots", "db.src")}
    assert events[2]["outputs"][0]["snapshot_id"] in snaps


def test_pyiceberg_reads_lineage_events_and_writing_them_emits_nothing(skade, warehouse, tmp_path):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!, v:string")
    for k in range(3):
        skade.ok("append", "db.t", _rows(tmp_path, f"a{k}.parquet", [k], ["x"]), "--actor", "etl")
    # events wait in the commit log until a batch is full or someone asks for them
    assert "_skade" not in [n[0] for n in open_catalog(warehouse).list_namespaces()]
    skade.ok("lineage", "flush")
    ours = _events(skade)
    assert [e["operation"] for e in ours] == ["create", "append", "append", "append"]

    table = open_catalog(warehouse).load_table("_skade.lineage_events")
    assert [f.transform.__class__.__name__ for f in table.spec().fields] == ["DayTransform"]
    rows = table.scan().to_arrow().to_pylist()
    assert sorted(r["event_id"] for r in rows) == sorted(e["event_id"] for e in ours)
    by_id = {r["event_id"]: r for r in rows}
    for e in ours:
        r = by_id[e["event_id"]]
        assert json.loads(r["event"]) == e
        assert r["operation"] == e["operation"] and r["actor"] == e["actor"] and r["commit_seq"] == e["commit_seq"]
        assert json.loads(r["outputs"]) == e["outputs"]
        assert int(r["event_time"].timestamp() * 1000) == e["ts"]

    # Another engine appending to the lineage table: no lineage about lineage, no duplicates.
    log_before = _logged_events(warehouse)
    table.append(pa.Table.from_pylist(rows[:1], schema=table.schema().as_arrow()))
    skade.ok("append", "db.t", _rows(tmp_path, "b.parquet", [9], ["y"]))
    skade.ok("lineage", "flush")
    after = _logged_events(warehouse)
    assert len(after) == len(log_before) + 1, "only the skade append minted an event"
    assert len(_events(skade)) == len(ours) + 1
    assert all(e["outputs"][0]["table"] != "_skade.lineage_events" for e in _events(skade))


def test_crash_between_commit_and_sink_flush_loses_nothing(skade, warehouse, tmp_path):
    skade.ok("config", "set", "lineage.batch_size", "1")
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!, v:string")
    env = dict(os.environ, SKADE_TEST_KILL_BEFORE_LINEAGE_FLUSH="1")
    rc, _, _ = skade("append", "db.t", _rows(tmp_path, "a.parquet", [1], ["a"]), env=env)
    assert rc == -9, "the test hook kills the process after the commit"
    seq = max(_logged_events(warehouse))
    assert _logged_events(warehouse)[seq]["operation"] == "append"
    assert seq in _logged_events(warehouse), "the event is durable with its commit"
    stored = open_catalog(warehouse).load_table("_skade.lineage_events").scan().to_arrow()
    assert seq not in stored.column("commit_seq").to_pylist(), "the sink never flushed it"
    # the next process to open the warehouse delivers it (a full batch of 1 is waiting) ...
    skade.ok("tables")
    stored = open_catalog(warehouse).load_table("_skade.lineage_events").scan().to_arrow()
    assert stored.column("commit_seq").to_pylist().count(seq) == 1
    # ... exactly once, however often delivery is asked for
    skade.ok("lineage", "flush")
    appended = [e for e in _events(skade) if e["operation"] == "append"]
    assert [e["commit_seq"] for e in appended] == [seq]
    stored = open_catalog(warehouse).load_table("_skade.lineage_events").scan().to_arrow()
    assert stored.column("commit_seq").to_pylist().count(seq) == 1


def _spark_event(run_id, event_time, inputs, outputs, event_type="COMPLETE"):
    return {"eventType": event_type, "eventTime": event_time,
            "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id}, "job": {"namespace": "spark-prod", "name": "revenue_app.insert.gold_revenue"},
            "inputs": inputs, "outputs": outputs}


def test_ingest_reports_each_bad_line_and_keeps_the_good_ones(skade, warehouse, tmp_path):
    good1 = _spark_event("0190c0de-0000-7000-8000-000000000001", "2026-01-01T00:00:00Z",
                         [{"namespace": "s3://landing", "name": "events"}],
                         [{"namespace": "hive://metastore:9083", "name": "gold.events"}])
    good2 = _spark_event("0190c0de-0000-7000-8000-000000000002", "2026-01-02T00:00:00Z",
                         [{"namespace": "hive://metastore:9083", "name": "gold.events"}],
                         [{"namespace": "hive://metastore:9083", "name": "gold.revenue"}])
    missing_job = dict(good1)
    del missing_job["job"]
    wrong_type = json.loads(json.dumps(good1))
    wrong_type["run"]["runId"] = 12345
    huge = json.loads(json.dumps(good1))
    huge["outputs"][0]["name"] = "x" * 200_000
    lines = [json.dumps(good1), "{not json", json.dumps(missing_job), "", json.dumps(wrong_type),
             json.dumps(huge), "[1, 2, 3]", json.dumps(good2)]
    f = tmp_path / "events.jsonl"
    f.write_text("\n".join(lines) + "\n")
    rc, out, err = skade("lineage", "ingest", f)
    assert rc == 2
    errors = [line for line in err.splitlines() if line]
    assert [int(re.search(r"line (\d+):", e).group(1)) for e in errors[:-1]] == [2, 3, 5, 6, 7]
    assert "not valid JSON" in errors[0] and "missing job" in errors[1]
    assert "run.runId must be a string" in errors[2] and "longer than" in errors[3]
    assert "ingested 2 events" in out
    events = _events(skade)
    assert [e["run_id"] for e in events] == [good1["run"]["runId"], good2["run"]["runId"]]
    assert events[0]["inputs"] == [{"table": "events", "system": {"kind": "s3", "instance": "s3://landing"}}]
    assert json.loads(events[0]["raw"]) == good1, "the raw payload is kept"
    # ingesting again (good lines only, from stdin) adds nothing: deduplicated by event_id
    p = subprocess.run([skade.binary, "--warehouse", str(warehouse), "lineage", "ingest", "-"],
                       input=(json.dumps(good1) + "\n" + json.dumps(good2) + "\n").encode(), capture_output=True)
    assert p.returncode == 0, p.stderr
    assert len(_events(skade)) == 2


def test_multi_hop_graph_with_an_ingested_spark_job(skade, warehouse, tmp_path):
    for ns in ("raw", "clean", "mart"):
        skade.ok("create-namespace", ns)
    for t in ("raw.orders", "clean.orders", "mart.daily"):
        skade.ok("create", t, "--schema", "id:long!, v:string")
    data = _rows(tmp_path, "d.parquet", [1, 2], ["a", "b"])
    skade.ok("append", "raw.orders", data, "--actor", "loader", "--input", "kafka:orders")
    skade.ok("append", "clean.orders", data, "--actor", "cleaner", "--input", "raw.orders")
    skade.ok("append", "mart.daily", data, "--actor", "aggregator", "--input", "clean.orders")
    spark = _spark_event("0190c0de-0000-7000-8000-0000000000aa", "2026-02-01T00:00:00Z",
                         [{"namespace": "file", "name": f"{warehouse.resolve()}/mart.db/daily"}],
                         [{"namespace": "spark", "name": "gold.revenue"}])
    f = tmp_path / "spark.jsonl"
    f.write_text(json.dumps(spark) + "\n")
    skade.ok("lineage", "ingest", f)

    def names(*args):
        return [(r["dataset"], r["depth"]) for r in skade.jsonl("lineage", *args)]

    assert names("downstream", "raw.orders", "--depth", "1") == [("clean.orders", 1)]
    assert names("downstream", "raw.orders", "--depth", "2") == [("clean.orders", 1), ("mart.daily", 2)]
    assert names("downstream", "raw.orders") == [("clean.orders", 1), ("mart.daily", 2), ("spark:gold.revenue", 3)]
    assert names("upstream", "spark:gold.revenue", "--depth", "2") == [("mart.daily", 1), ("clean.orders", 2)]
    assert names("upstream", "spark:gold.revenue") == [("mart.daily", 1), ("clean.orders", 2), ("raw.orders", 3),
                                                       ("kafka:orders", 4)]
    graph = json.loads(skade.ok("lineage", "graph"))
    assert {n["key"] for n in graph["nodes"]} == {"kafka:orders", "raw.orders", "clean.orders", "mart.daily",
                                                  "spark:gold.revenue"}
    edges = {(e["from"], e["to"], e["job"]) for e in graph["edges"]}
    assert edges == {("kafka:orders", "raw.orders", "loader"), ("raw.orders", "clean.orders", "cleaner"),
                     ("clean.orders", "mart.daily", "aggregator"),
                     ("mart.daily", "spark:gold.revenue", "revenue_app.insert.gold_revenue")}
    spark_only = json.loads(skade.ok("lineage", "graph", "--system", "spark"))
    assert {(e["from"], e["to"]) for e in spark_only["edges"]} == {("mart.daily", "spark:gold.revenue")}
    dot = skade.ok("lineage", "graph", "--format", "dot")
    assert dot.startswith("digraph lineage") and dot.count("->") == 4
    mermaid = skade.ok("lineage", "graph", "--format", "mermaid")
    assert mermaid.startswith("flowchart LR") and mermaid.count("-->") == 4
    rc, _, err = skade("lineage", "downstream", "no.such")
    assert rc == 2 and "no.such is not in the lineage graph" in err
    rc, _, err = skade("lineage", "graph", "--format", "svg")
    assert rc == 2 and "svg" in err


def test_config_get_set_and_lineage_off(skade, warehouse, tmp_path):
    rc, _, err = skade("config", "get", "lineage.openlineage.url")
    assert rc == 2 and "not set" in err
    skade.ok("config", "set", "lineage.openlineage.url", "http://localhost:5000")
    assert skade.ok("config", "get", "lineage.openlineage.url").strip() == "http://localhost:5000"
    rc, _, err = skade("config", "set", "lineage.nope", "1")
    assert rc == 2 and "unknown setting 'lineage.nope'" in err
    rc, _, err = skade("config", "set", "lineage.enabled", "maybe")
    assert rc == 2 and "true or false" in err
    skade.ok("config", "set", "lineage.enabled", "false")
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.t", "--schema", "id:long!, v:string")
    skade.ok("append", "db.t", _rows(tmp_path, "a.parquet", [1], ["a"]))
    assert _logged_events(warehouse) == {}
    assert _events(skade) == []
    rc, _, err = skade("append", "db.t", _rows(tmp_path, "b.parquet", [2], ["b"]), "--input", "nodots")
    assert rc == 2 and "nodots" in err
