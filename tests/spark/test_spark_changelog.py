"""Iceberg's Spark changelog view (`create_changelog_view`) and `skade changes` agree, row for
row including _change_type, _change_ordinal and _commit_snapshot_id, on an append-only and a
copy-on-write history written by Spark and the skade CLI through `skade serve`: plain, with
updates computed from the identifier column, and with net changes. One Spark session."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from skade_util import assert_same_rows
from spark_peer import collect

MODES = {"plain": ([], ""), "updates": (["--compute-updates"], ", identifier_columns => array('id')"),
         "net": (["--net"], ", net_changes => true")}


def skade_changes(skade, table: str, start, end, flags: list[str], tmp: Path) -> list[dict]:
    out = tmp / f"changes-{uuid.uuid4().hex}.parquet"
    skade.ok("changes", table, "--from", start or 0, "--to", end, *flags, "--format", "parquet", "--output", out)
    return pq.read_table(out).to_pylist()


def spark_changes(spark, table: str, start, end, args: str) -> list[dict]:
    options = f"'end-snapshot-id', '{end}'" + (f", 'start-snapshot-id', '{start}'" if start else "")
    view = f"v_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CALL skade.system.create_changelog_view(table => '{table}', options => map({options}), "
              f"changelog_view => '{view}'{args})")
    return collect(spark, f"SELECT * FROM {view}")


def agree(spark, skade, table, start, end, mode, tmp) -> list[dict]:
    flags, args = MODES[mode]
    expected = spark_changes(spark, table, start, end, args)
    assert_same_rows(skade_changes(skade, table, start, end, flags, tmp), expected,
                     what=f"{table} {mode} ({start}, {end}]")
    return expected


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def histories(spark, skade, tmp_path_factory):
    """Two tables with their snapshot ids, oldest first."""
    tmp = tmp_path_factory.mktemp("cl")
    skade.ok("create-namespace", "cl")
    # append-only, both engines
    skade.ok("create", "cl.app", "--schema", "id:long!, v:string", "--identifier", "id")
    spark.sql("INSERT INTO cl.app VALUES (1, 'a'), (2, 'b')")
    skade.ok("append", "cl.app", jsonl(tmp / "a1.jsonl", [{"id": 3, "v": "c"}, {"id": 4, "v": "d"}]))
    spark.sql("INSERT INTO cl.app VALUES (5, 'e')")
    skade.ok("append", "cl.app", jsonl(tmp / "a2.jsonl", [{"id": 6, "v": "f"}]))
    spark.sql("INSERT INTO cl.app VALUES (7, 'g'), (8, 'h')")

    # copy-on-write: updates, deletes, a merge, rows inserted and deleted or restored in the range,
    # rows a later rewrite carries over
    skade.ok("create", "cl.cow", "--schema", "id:long!, v:string, n:int", "--identifier", "id")
    spark.sql("ALTER TABLE cl.cow SET TBLPROPERTIES ('write.delete.mode'='copy-on-write', "
              "'write.update.mode'='copy-on-write', 'write.merge.mode'='copy-on-write')")
    spark.sql("INSERT INTO cl.cow VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3), (4, 'd', 4), (5, 'e', 5), (6, 'f', 6)")
    spark.sql("INSERT INTO cl.cow VALUES (7, 'g', 7), (8, 'h', 8), (9, 'i', 9)")
    spark.sql("UPDATE cl.cow SET v = upper(v) WHERE id IN (2, 3)")
    spark.sql("DELETE FROM cl.cow WHERE id = 8")
    spark.sql("""MERGE INTO cl.cow t USING (SELECT * FROM VALUES (5, 'E', 50), (10, 'j', 10) AS s(id, v, n)) s
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    skade.ok("append", "cl.cow", jsonl(tmp / "c1.jsonl", [{"id": 11, "v": "k", "n": 11}]))
    spark.sql("DELETE FROM cl.cow WHERE id = 10")
    spark.sql("UPDATE cl.cow SET v = 'b' WHERE id = 2")
    snaps = {t: [s["snapshot_id"] for s in skade.snapshots(t)] for t in ("cl.app", "cl.cow")}
    assert len(snaps["cl.app"]) == 5 and len(snaps["cl.cow"]) == 8
    return snaps, tmp


def test_append_only_history(spark, skade, histories):
    snaps, tmp = histories
    s = snaps["cl.app"]
    for start, end in ((None, s[-1]), (s[0], s[-1]), (s[1], s[3])):
        for mode in MODES:
            rows = agree(spark, skade, "cl.app", start, end, mode, tmp)
            assert rows and {r["_change_type"] for r in rows} == {"INSERT"}
    # net keeps each insert's own snapshot and ordinal
    rows = agree(spark, skade, "cl.app", s[0], s[-1], "net", tmp)
    assert {r["_change_ordinal"] for r in rows} == {0, 1, 2, 3}
    assert {r["_commit_snapshot_id"] for r in rows} == set(s[1:])


def test_copy_on_write_history(spark, skade, histories):
    snaps, tmp = histories
    s = snaps["cl.cow"]
    for start, end in ((None, s[-1]), (s[0], s[-1]), (s[1], s[4]), (s[3], s[6])):
        for mode in MODES:
            agree(spark, skade, "cl.cow", start, end, mode, tmp)
    updates = agree(spark, skade, "cl.cow", s[0], s[-1], "updates", tmp)
    assert {r["_change_type"] for r in updates} == {"INSERT", "DELETE", "UPDATE_BEFORE", "UPDATE_AFTER"}
    net = agree(spark, skade, "cl.cow", s[0], s[-1], "net", tmp)
    by_id = {}
    for r in net:
        by_id.setdefault(r["id"], []).append((r["_change_type"], r["v"]))
    # 10 came and went, 2 went back to its value: neither is a net change
    assert 10 not in by_id and 2 not in by_id
    assert sorted(by_id[3]) == [("DELETE", "c"), ("INSERT", "C")]
    # 9 was inserted in the range and carried over by the rewrite that deleted 8: Spark stamps
    # the carried copy, not the first insert, and so does skade
    (nine,) = [r for r in net if r["id"] == 9]
    assert nine["_change_type"] == "INSERT" and nine["_commit_snapshot_id"] != s[1]
