"""Spark on Iceberg's JDBC catalog straight on skade's catalog.db, with the settings README gives
(spark_peer.jdbc_catalog_conf: `jdbc.init-catalog-tables=false`, `cache-enabled=false`): a live
session sees every skade CLI commit on its next query and its own commits land on top of them,
it leaves no read transaction open on the catalog (a WAL checkpoint completes), and its commits
are skade commits in the log. One Spark session."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from skade_util import assert_same_rows
from spark_peer import collect

SPARK_CATALOG = "jdbc"


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def checkpoint(warehouse: Path) -> tuple[int, int, int]:
    """PRAGMA wal_checkpoint(TRUNCATE): (busy, wal frames, frames checkpointed); busy is 1 when a
    reader or writer of another connection kept it from finishing."""
    con = sqlite3.connect(warehouse / "catalog.db", timeout=30)
    try:
        return con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        con.close()


def test_live_jdbc_session_stays_current(spark, skade, warehouse, tmp_path):
    skade.ok("create-namespace", "j")
    skade.ok("create", "j.t", "--schema", "id:long!, v:string", "--identifier", "id")
    skade.ok("append", "j.t", jsonl(tmp_path / "a0.jsonl", [{"id": 0, "v": "cli"}]))
    expected = [{"id": 0, "v": "cli"}]
    assert collect(spark, "SELECT * FROM j.t") == expected
    for k in range(1, 5):
        # a CLI commit is seen by the session's next query, without REFRESH TABLE
        skade.ok("append", "j.t", jsonl(tmp_path / f"a{k}.jsonl", [{"id": k, "v": "cli"}]))
        expected.append({"id": k, "v": "cli"})
        assert_same_rows(collect(spark, "SELECT * FROM j.t"), expected, what=f"spark after CLI append {k}")
        # and the session's own commit lands on top of it
        spark.sql(f"INSERT INTO j.t VALUES ({k * 100}, 'spark')")
        expected.append({"id": k * 100, "v": "spark"})
        assert_same_rows(skade.rows("j.t"), expected, what=f"skade after Spark insert {k}")
        skade.ok("delete", "j.t", "--where", f"id = {k * 100}")
        expected.pop()
        spark.sql(f"UPDATE j.t SET v = 'spark-{k}' WHERE id = {k}")
        expected[-1] = {"id": k, "v": f"spark-{k}"}
        assert_same_rows(skade.rows("j.t"), expected, what=f"skade after Spark update {k}")
        # nothing of the session (nor of skade serve) holds a read transaction on the catalog
        busy, _, _ = checkpoint(warehouse)
        assert busy == 0, "a connection keeps an old snapshot of catalog.db open"

    spark.sql("CREATE TABLE j.ctas USING iceberg AS SELECT v, count(*) AS n FROM j.t GROUP BY v")
    assert_same_rows(skade.rows("j.ctas"), collect(spark, "SELECT * FROM j.ctas"), what="ctas")

    # Spark's commits are ordinary skade commits: `skade log` names the engine from the snapshot
    # summary and fills snapshot and operation (the catalog's triggers log them blank)
    snaps = collect(spark, "SELECT snapshot_id, operation, summary['engine-name'] AS engine FROM j.t.snapshots")
    log = [r for r in skade.log("--table", "j.t") if r["action"] == "commit"]
    assert {r["snapshot_id"]: (r["operation"], r["engine"]) for r in log} == {
        s["snapshot_id"]: (s["operation"], "spark" if s["engine"] == "spark" else "skade") for s in snaps}
    assert sum(1 for r in log if r["engine"] == "spark") == 8  # 4 inserts, 4 updates
    seqs = [r["commit_seq"] for r in log]
    assert seqs == sorted(set(seqs))
    (ctas,) = collect(spark, "SELECT snapshot_id, operation FROM j.ctas.snapshots")
    assert [(r["snapshot_id"], r["operation"], r["engine"]) for r in skade.log("--table", "j.ctas")] == [
        (ctas["snapshot_id"], ctas["operation"], "spark")]
