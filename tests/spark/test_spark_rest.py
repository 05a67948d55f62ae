"""Spark (pyspark 3.5.9, Iceberg's Spark runtime 1.10.1) through `skade serve`, Iceberg's REST
catalog: every Spark SQL write kind read back by `skade scan`, skade's writes read back by Spark,
time travel, Iceberg's Spark procedures, a long-lived session and concurrent writers.
One Spark session for the module (conftest.py)."""
from __future__ import annotations

import datetime as dt
import json
import threading
from decimal import Decimal
from pathlib import Path

from skade_util import assert_same_rows, current_metadata, local_path
from spark_peer import collect

UTC = dt.timezone.utc


def spark_values(rows: list[tuple]) -> str:
    """(id, cat, amount, d, ts, ok) tuples as a Spark SQL VALUES list."""
    out = []
    for i, cat, amount, d, ts, ok in rows:
        out.append(f"({i}, '{cat}', {amount}BD, DATE '{d}', TIMESTAMP '{ts}', {str(ok).lower()})")
    return ", ".join(out)


def sample_rows(ids) -> list[tuple]:
    return [(i, "abc"[i % 3], f"{i * 1.25:.2f}", f"2024-01-{1 + i % 28:02d}", f"2024-01-{1 + i % 28:02d} {i % 24:02d}:15:00",
             i % 2 == 0) for i in ids]


def jsonl_file(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def same(skade, spark, table: str, what: str, *skade_args, spark_sql: str | None = None):
    """skade scan and Spark's SELECT of `table` agree row for row (and are not both empty)."""
    expected = collect(spark, spark_sql or f"SELECT * FROM {table}")
    actual = skade.rows(table, *skade_args)
    assert_same_rows(actual, expected, what=what)
    return expected


def summary(warehouse: Path, table: str) -> dict:
    _, md = current_metadata(warehouse, table)
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    return snap["summary"]


def test_spark_writes_read_by_skade(spark, skade, warehouse):
    """INSERT, DELETE, UPDATE, MERGE in copy-on-write and merge-on-read, then CTAS: after each,
    `skade scan` equals Spark's SELECT; the commits are skade commits (log with engine spark and
    the snapshot, a lineage event each) and the tables get skade's location layout."""
    skade.ok("create-namespace", "shop")
    for mode in ("copy-on-write", "merge-on-read"):
        t = f"shop.w_{mode.replace('-', '_')}"
        spark.sql(f"""CREATE TABLE {t} (id bigint, cat string, amount decimal(10,2), d date, ts timestamp, ok boolean)
                      USING iceberg PARTITIONED BY (cat)
                      TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='{mode}',
                                     'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')""")
        assert local_path(current_metadata(warehouse, t)[1]["location"]) == warehouse / "shop.db" / t.split(".")[1]

        spark.sql(f"INSERT INTO {t} VALUES {spark_values(sample_rows(range(1, 31)))}")
        assert len(same(skade, spark, t, f"{mode}: insert")) == 30
        spark.sql(f"DELETE FROM {t} WHERE id % 5 = 0")
        assert len(same(skade, spark, t, f"{mode}: delete")) == 24
        spark.sql(f"UPDATE {t} SET amount = amount + 100, ok = NOT ok WHERE cat = 'b'")
        rows = same(skade, spark, t, f"{mode}: update")
        assert all(r["amount"] > 100 for r in rows if r["cat"] == "b")
        spark.sql(f"""MERGE INTO {t} t USING (SELECT * FROM VALUES {spark_values(sample_rows([2, 3, 40, 41]))}
                                              AS s(id, cat, amount, d, ts, ok)) s ON t.id = s.id
                      WHEN MATCHED AND s.id = 3 THEN DELETE
                      WHEN MATCHED THEN UPDATE SET amount = s.amount * 10
                      WHEN NOT MATCHED THEN INSERT *""")
        rows = same(skade, spark, t, f"{mode}: merge")
        by_id = {r["id"]: r for r in rows}
        assert 3 not in by_id and {40, 41} <= by_id.keys() and by_id[2]["amount"] == Decimal("25.00")

        deletes = int(summary(warehouse, t).get("total-position-deletes", "0"))
        assert (deletes > 0) == (mode == "merge-on-read"), f"{mode}: position deletes in the table: {deletes}"

        # every Spark commit is an ordinary skade commit
        spark_snaps = {r["snapshot_id"]: r["operation"] for r in collect(spark, f"SELECT * FROM {t}.snapshots")}
        log = [r for r in skade.log("--table", t) if r["action"] == "commit"]
        assert {r["snapshot_id"]: r["operation"] for r in log} == spark_snaps
        assert {r["engine"] for r in log} == {"spark"}
        seqs = [r["commit_seq"] for r in log]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        events = {e["commit_seq"]: e for e in skade.jsonl("lineage", "events", "--table", t)}
        for r in log:
            assert r["commit_seq"] in events, f"no lineage event for commit {r}"
            assert events[r["commit_seq"]]["outputs"][0]["snapshot_id"] == r["snapshot_id"]

    # CTAS: the table's first snapshot is logged with its id and operation
    spark.sql("""CREATE TABLE shop.by_cat USING iceberg AS
                 SELECT cat, count(*) AS n, sum(amount) AS total FROM shop.w_copy_on_write GROUP BY cat""")
    same(skade, spark, "shop.by_cat", "ctas")
    assert local_path(current_metadata(warehouse, "shop.by_cat")[1]["location"]) == warehouse / "shop.db" / "by_cat"
    (row,) = [r for r in skade.log("--table", "shop.by_cat") if r["snapshot_id"] is not None]
    (snap,) = collect(spark, "SELECT snapshot_id, operation FROM shop.by_cat.snapshots")
    assert (row["snapshot_id"], row["operation"], row["engine"]) == (snap["snapshot_id"], snap["operation"], "spark")

    # a location Spark asks for is kept
    asked = warehouse / "elsewhere" / "kept"
    spark.sql(f"CREATE TABLE shop.located (id bigint) USING iceberg LOCATION 'file://{asked}'")
    spark.sql("INSERT INTO shop.located VALUES (7)")
    assert local_path(current_metadata(warehouse, "shop.located")[1]["location"]) == asked
    assert same(skade, spark, "shop.located", "located") == [{"id": 7}]


def test_spark_reads_skade_writes(spark, skade, warehouse, tmp_path):
    """Tables the skade CLI wrote, with position deletes and with equality deletes (the table
    property), read by Spark row for row."""
    skade.ok("create-namespace", "cli")
    schema = "id:long!, name:string, amount:decimal(10,2), d:date, ts:timestamptz, ok:boolean, tags:list<string>"

    def rows(ids, tag):
        return [{"id": i, "name": f"n{i}-{tag}", "amount": f"{i}.{i % 100:02d}", "d": f"2024-02-{1 + i % 28:02d}",
                 "ts": f"2024-02-{1 + i % 28:02d}T{i % 24:02d}:30:00Z", "ok": i % 3 == 0, "tags": [tag, str(i)]}
                for i in ids]

    for t, props in (("cli.positional", []), ("cli.equality", ["--property", "skade.write.upsert.equality-deletes=true"])):
        skade.ok("create", t, "--schema", schema, "--identifier", "id", *props)
        skade.ok("append", t, jsonl_file(tmp_path / "a.jsonl", rows(range(1, 41), "a")))
        skade.ok("append", t, jsonl_file(tmp_path / "b.jsonl", rows(range(41, 61), "b")))
        skade.ok("delete", t, "--where", "id < 6 or ok")
        skade.ok("upsert", t, jsonl_file(tmp_path / "u.jsonl", rows([7, 8, 50, 70, 71], "u")))
        expected = same(skade, spark, t, f"{t}: skade's writes")
        assert {r["name"] for r in expected if r["id"] in (7, 8, 50, 70, 71)} == {"n7-u", "n8-u", "n50-u", "n70-u",
                                                                                  "n71-u"}
        kind = "total-equality-deletes" if props else "total-position-deletes"
        assert int(summary(warehouse, t).get(kind, "0")) > 0, f"{t}: no {kind} in {summary(warehouse, t)}"

    # Spark writes on top of skade's deletes, skade reads it back
    spark.sql("DELETE FROM cli.positional WHERE id > 55")
    spark.sql("INSERT INTO cli.positional VALUES (100, 'spark', 1.00BD, DATE '2024-03-01', "
              "TIMESTAMP '2024-03-01 00:00:00', true, array('s'))")
    same(skade, spark, "cli.positional", "spark on skade's table")


def test_time_travel_agrees(spark, skade, tmp_path):
    """By snapshot id and by timestamp, over a history written by both engines."""
    skade.ok("create-namespace", "tt")
    spark.sql("CREATE TABLE tt.h (id bigint, v string) USING iceberg")
    spark.sql("INSERT INTO tt.h VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    skade.ok("append", "tt.h", jsonl_file(tmp_path / "h.jsonl", [{"id": 4, "v": "d"}, {"id": 5, "v": "e"}]))
    spark.sql("DELETE FROM tt.h WHERE id = 2")
    skade.ok("delete", "tt.h", "--where", "id = 5")
    spark.sql("UPDATE tt.h SET v = 'z' WHERE id = 1")

    snaps = skade.snapshots("tt.h")
    assert len(snaps) == 5
    seen = set()
    for s in snaps:
        sid = s["snapshot_id"]
        rows = same(skade, spark, "tt.h", f"snapshot {sid}", "--snapshot", sid,
                    spark_sql=f"SELECT * FROM tt.h VERSION AS OF {sid}")
        seen.add(tuple(sorted((r["id"], r["v"]) for r in rows)))
        at = dt.datetime.fromisoformat(s["timestamp"]).astimezone(UTC)
        for when in (at, at + dt.timedelta(milliseconds=1)):
            ms = int(when.timestamp() * 1000)
            same(skade, spark, "tt.h", f"as of {when}", "--as-of", ms,
                 spark_sql=f"SELECT * FROM tt.h TIMESTAMP AS OF '{when.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}'")
    assert len(seen) == 5, "each snapshot has its own rows"


def test_procedures_through_server(spark, skade):
    """rewrite_data_files, rollback_to_snapshot and expire_snapshots commit through skade serve;
    skade reads every result."""
    skade.ok("create-namespace", "proc")
    spark.sql("CREATE TABLE proc.p (id bigint, v string) USING iceberg")
    for i in range(4):
        spark.sql(f"INSERT INTO proc.p VALUES ({i}, 'v{i}'), ({i + 10}, 'w{i}')")
    before = same(skade, spark, "proc.p", "before rewrite")
    (res,) = collect(spark, "CALL skade.system.rewrite_data_files(table => 'proc.p', options => map('min-input-files', '2'))")
    assert res["rewritten_data_files_count"] >= 4 and res["added_data_files_count"] == 1
    assert_same_rows(skade.rows("proc.p"), before, what="after rewrite")
    assert collect(spark, "SELECT count(*) AS n FROM proc.p.files") == [{"n": 1}]
    rewritten = skade.snapshots("proc.p")[-1]
    assert rewritten["operation"] == "replace"

    spark.sql("INSERT INTO proc.p VALUES (99, 'late')")
    collect(spark, f"CALL skade.system.rollback_to_snapshot('proc.p', {rewritten['snapshot_id']})")
    assert_same_rows(skade.rows("proc.p"), before, what="after rollback")
    current = [s for s in skade.snapshots("proc.p") if s["current"] == "*"]
    assert [s["snapshot_id"] for s in current] == [rewritten["snapshot_id"]]

    now = dt.datetime.now(UTC) + dt.timedelta(seconds=1)
    (res,) = collect(spark, f"CALL skade.system.expire_snapshots(table => 'proc.p', "
                            f"older_than => TIMESTAMP '{now.strftime('%Y-%m-%d %H:%M:%S')}', retain_last => 1)")
    assert res["deleted_data_files_count"] >= 4
    assert [s["snapshot_id"] for s in skade.snapshots("proc.p")] == [rewritten["snapshot_id"]]
    assert_same_rows(skade.rows("proc.p"), before, what="after expire")
    # snapshots name their engine; the rollback and the expiry add none and are logged under the
    # client, Iceberg's Java client
    engines = [r["engine"] for r in skade.log("--table", "proc.p") if r["action"] == "commit"]
    assert engines == ["spark"] * 6 + ["iceberg-java"] * 2


def test_live_session_sees_cli_commits(spark, skade, tmp_path):
    """A session that has read a table sees a skade CLI commit on its next query, and its next
    commit lands on top of it."""
    skade.ok("create-namespace", "live")
    skade.ok("create", "live.t", "--schema", "id:long!, v:string")
    skade.ok("append", "live.t", jsonl_file(tmp_path / "l1.jsonl", [{"id": 1, "v": "cli"}]))
    assert collect(spark, "SELECT * FROM live.t") == [{"id": 1, "v": "cli"}]
    for k in range(2, 5):
        skade.ok("append", "live.t", jsonl_file(tmp_path / f"l{k}.jsonl", [{"id": k, "v": "cli"}]))
        assert sorted(r["id"] for r in collect(spark, "SELECT id FROM live.t")) == list(range(1, k + 1))
        spark.sql(f"INSERT INTO live.t VALUES ({k * 100}, 'spark')")
        skade.ok("delete", "live.t", "--where", f"id = {k * 100}")
        assert sorted(r["id"] for r in collect(spark, "SELECT id FROM live.t")) == list(range(1, k + 1))
    same(skade, spark, "live.t", "live")


def test_concurrent_spark_and_cli_writers(spark, skade, tmp_path):
    """Spark INSERTs and skade CLI appends race on one table: every row of both lands once."""
    skade.ok("create-namespace", "race")
    spark.sql("CREATE TABLE race.t (id bigint, src string) USING iceberg")
    rounds, per = 8, 5
    errors = []

    def spark_writer():
        try:
            for k in range(rounds):
                spark.sql("INSERT INTO race.t VALUES " + ", ".join(f"({k * 100 + j}, 'spark')" for j in range(per)))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    def cli_writer():
        try:
            for k in range(rounds):
                f = jsonl_file(tmp_path / f"c{k}.jsonl", [{"id": 10_000 + k * 100 + j, "src": "cli"} for j in range(per)])
                skade.ok("append", "race.t", f)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=spark_writer), threading.Thread(target=cli_writer)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    expected = [{"id": k * 100 + j, "src": "spark"} for k in range(rounds) for j in range(per)]
    expected += [{"id": 10_000 + k * 100 + j, "src": "cli"} for k in range(rounds) for j in range(per)]
    assert_same_rows(skade.rows("race.t"), expected, what="skade after the race")
    assert_same_rows(collect(spark, "SELECT * FROM race.t"), expected, what="spark after the race")
    engines = [r["engine"] for r in skade.log("--table", "race.t") if r["action"] == "commit"]
    assert engines.count("spark") == rounds and engines.count("skade") == rounds



def test_metadata_tables_agree_with_spark(spark, skade, tmp_path):
    """`skade files`, `partitions`, `manifests` and `refs` list what Spark's metadata tables list
    for a table both engines wrote (Spark's merge-on-read deletes, skade's append and delete, a
    partition evolution, a tag), Spark's partition values included, at the tag too."""
    skade.ok("create-namespace", "meta")
    t = "meta.events"
    spark.sql(f"""CREATE TABLE {t} (id bigint, cat string, amount decimal(10,2), d date, ts timestamp, ok boolean)
                  USING iceberg PARTITIONED BY (days(ts), bucket(4, id))
                  TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO {t} VALUES {spark_values(sample_rows(range(1, 41)))}")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 0")
    spark.sql(f"ALTER TABLE {t} CREATE TAG before_evolution")
    spark.sql(f"ALTER TABLE {t} ADD PARTITION FIELD cat")
    spark.sql(f"ALTER TABLE {t} WRITE ORDERED BY cat DESC NULLS LAST, id")
    assert "sort order: cat desc nulls-last, id asc nulls-first" in skade.ok("describe", t)
    spark.sql(f"INSERT INTO {t} VALUES {spark_values(sample_rows(range(50, 60)))}")
    more = [{"id": i, "cat": "abc"[i % 3], "amount": f"{i}.50", "d": "2024-02-01", "ts": "2024-02-01T10:00:00Z",
             "ok": True} for i in (3, 55, 70)]
    skade.ok("append", t, jsonl_file(tmp_path / "more.jsonl", more))
    skade.ok("delete", t, "--where", "id = 55 or id = 12")
    (tag,) = collect(spark, f"SELECT snapshot_id FROM {t}.refs WHERE name = 'before_evolution'")

    def spark_partition(p):
        return {k: v.isoformat() if isinstance(v, dt.date) else v for k, v in p.items()}

    kinds = {0: "data", 1: "position_deletes", 2: "equality_deletes"}
    for select, version in (((), ""), (("--ref", "before_evolution"), f" VERSION AS OF {tag['snapshot_id']}")):
        mine = {r["file_path"]: r for r in skade.jsonl("files", t, *select)}
        theirs = collect(spark, f"SELECT * FROM {t}.files{version}")
        assert sorted(mine) == sorted(str(local_path(f["file_path"])) for f in theirs), select
        for f in theirs:
            m = mine[str(local_path(f["file_path"]))]
            assert (m["content"], m["spec_id"], m["record_count"], m["file_size_in_bytes"]) == \
                (kinds[f["content"]], f["spec_id"], f["record_count"], f["file_size_in_bytes"]), (m, f)
            # Spark's partition struct holds every spec's fields; skade's the file's spec's
            assert m["partition"] == {k: spark_partition(f["partition"])[k] for k in m["partition"]}, (m, f)
    assert {m["content"] for m in mine.values()} >= {"data", "position_deletes"}

    def key(partition):
        return json.dumps({k: v for k, v in partition.items() if v is not None}, sort_keys=True)
    counts = ("record_count", "file_count", "position_delete_record_count", "position_delete_file_count",
              "equality_delete_record_count", "equality_delete_file_count", "last_updated_snapshot_id")
    mine = {key(p["partition"]): tuple(p[c] for c in counts) for p in skade.jsonl("partitions", t)}
    theirs = {key(spark_partition(p["partition"])): tuple(p[c] for c in counts)
              for p in collect(spark, f"SELECT * FROM {t}.partitions")}
    assert mine == theirs

    mine = {r["path"]: r for r in skade.jsonl("manifests", t)}
    theirs = collect(spark, f"SELECT * FROM {t}.manifests")
    assert sorted(mine) == sorted(str(local_path(m["path"])) for m in theirs)
    for m in theirs:
        r = mine[str(local_path(m["path"]))]
        kind = "data" if m["content"] == 0 else "delete"
        assert (r["length"], r["partition_spec_id"], r["added_snapshot_id"], r["added_files_count"],
                r["existing_files_count"], r["deleted_files_count"]) == \
            (m["length"], m["partition_spec_id"], m["added_snapshot_id"], m[f"added_{kind}_files_count"],
             m[f"existing_{kind}_files_count"], m[f"deleted_{kind}_files_count"]), (r, m)

    assert {(r["name"], r["type"], r["snapshot_id"]) for r in skade.jsonl("refs", t)} == \
        {(r["name"], r["type"], r["snapshot_id"]) for r in collect(spark, f"SELECT * FROM {t}.refs")}


def test_format_v3_table_with_deletion_vectors(spark, skade, warehouse, tmp_path):
    """A format version 3 table made and written by Spark through `skade serve`: the server keeps
    its row lineage (next-row-id moves with each snapshot's added rows); Spark's merge-on-read
    deletes and updates write deletion vectors (bitmap, run and array containers, replaced as they
    grow), which `skade scan`, `files`, `changes` and PyIceberg read alike. Then skade writes the
    table: its deletes merge into Spark's vectors (one per data file), its appends get row ids
    after Spark's, and Spark reads every row with a distinct `_row_id`; skade's `_row_id`,
    `_last_updated_sequence_number`, `_file` and `_pos` are Spark's (the ids Spark's update kept
    in its files too), and skade's compaction keeps the ids. After an added column with a default (which Spark reads),
    Spark goes on writing it; Spark reads a fixed column's default too."""
    skade.ok("create-namespace", "v3")
    t = "v3.events"
    spark.sql(f"""CREATE TABLE {t} (id bigint, cat string, amount double) USING iceberg
                  TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read',
                                 'write.update.mode'='merge-on-read')""")
    spark.sql(f"""INSERT INTO {t} SELECT /*+ REPARTITION(1) */ id, concat('c', id % 5), id * 0.5
                  FROM range(0, 200000)""")
    # A third of the first 65,536 positions (a bitmap container), one run, and scattered rows.
    spark.sql(f"DELETE FROM {t} WHERE id < 65536 AND id % 3 = 0")
    spark.sql(f"DELETE FROM {t} WHERE id BETWEEN 100000 AND 150000")
    spark.sql(f"DELETE FROM {t} WHERE id % 1000 = 7")
    spark.sql(f"UPDATE {t} SET amount = -1 WHERE id % 20000 = 1")

    def agree(what: str):
        theirs = collect(spark, f"SELECT id, cat, amount FROM {t}")
        assert_same_rows(skade.rows(t), theirs, what=what)
        return theirs

    rows = agree("after Spark's deletes and update")
    assert 0 < len(rows) < 200000
    _, md = current_metadata(warehouse, t)
    assert md["format-version"] == 3
    assert md["next-row-id"] == sum(s["added-rows"] for s in md["snapshots"])
    assert md["next-row-id"] > 200000  # the update's rewritten rows got new ids

    files = skade.jsonl("files", t)
    dvs = [f for f in files if f["file_format"] == "PUFFIN"]
    assert dvs and all(f["content"] == "position_deletes" and f["referenced_data_file"] for f in dvs), files
    theirs = collect(spark, f"SELECT file_path, content_offset, content_size_in_bytes FROM {t}.delete_files")
    assert sorted((str(local_path(f["file_path"])), f["content_offset"], f["content_size_in_bytes"]) for f in theirs) \
        == sorted((f["file_path"], f["content_offset"], f["content_size_in_bytes"]) for f in dvs)

    from skade_util import open_catalog
    peer = open_catalog(warehouse).load_table(t).scan().to_arrow()
    assert_same_rows(skade.rows(t), peer.to_pylist(), what="PyIceberg's read of the v3 table")

    # The changes each Spark commit made, deletion vectors replacing the ones before them.
    first = min(md["snapshots"], key=lambda s: s["sequence-number"])["snapshot-id"]
    changes = skade.jsonl("changes", t, "--from", first)
    deleted = {c["id"] for c in changes if c["_change_type"] == "DELETE"}
    expected = {i for i in range(200000) if (i < 65536 and i % 3 == 0) or 100000 <= i <= 150000 or i % 1000 == 7}
    updated = {i for i in range(200000) if i % 20000 == 1} - expected
    assert deleted == expected | updated
    assert {c["id"] for c in changes if c["_change_type"] == "INSERT"} == updated

    def lineage_holds(what: str):
        _, now = current_metadata(warehouse, t)
        assert now["format-version"] == 3
        assert now["next-row-id"] == sum(s["added-rows"] for s in now["snapshots"]), what
        ids = collect(spark, f"SELECT count(*) AS n, count(DISTINCT _row_id) AS d, max(_row_id) AS m FROM {t}")[0]
        assert ids["n"] == ids["d"] and ids["m"] < now["next-row-id"], (what, ids)
        targets = [f["referenced_data_file"] for f in skade.jsonl("files", t) if f["content"] == "position_deletes"]
        assert len(targets) == len(set(targets)), (what, targets)
        return now

    lineage_holds("after Spark's writes")

    def ids_agree(what: str) -> dict:
        """Each row's id, sequence number, file and position, as Spark and skade read them."""
        columns = "id, _row_id, _last_updated_sequence_number, _file, _pos"

        def keyed(rows):
            return {r["id"]: (r["_row_id"], r["_last_updated_sequence_number"], str(local_path(r["_file"])), r["_pos"])
                    for r in rows}

        theirs = keyed(collect(spark, f"SELECT {columns} FROM {t}"))
        mine = keyed(skade.rows(t, "--columns", columns.replace(" ", "")).to_pylist())
        assert mine == theirs, what
        return {k: v[:2] for k, v in mine.items()}

    ids = ids_agree("row lineage after Spark's writes")
    kept = [i for i in updated if ids[i][0] < 200000]  # Spark's update wrote the rows' old ids into its file
    assert kept and ids[kept[0]][1] > ids[2][1], (ids[kept[0]], ids[2])  # updated later than row 2
    jsonl_file(tmp_path / "v3.jsonl", [{"id": 300000 + i, "cat": "skade", "amount": 1.5} for i in range(10)])
    skade.ok("append", t, tmp_path / "v3.jsonl")
    gone = {8, 70008, 170008, 300003}  # in Spark's first file (its vector grows) and in skade's
    skade.ok("delete", t, "--where", " OR ".join(f"id = {i}" for i in sorted(gone)))
    rows = agree("after skade's append and delete")
    assert {r["id"] for r in rows} >= {300000, 300009} and not gone & {r["id"] for r in rows}
    now = lineage_holds("after skade's append and delete")
    assert now["next-row-id"] == md["next-row-id"] + 10
    assert_same_rows(skade.rows(t), open_catalog(warehouse).load_table(t).scan().to_arrow().to_pylist(),
                     what="PyIceberg after skade's deletion vectors")
    ids = ids_agree("row lineage after skade's append and delete")
    skade.ok("compact", t)
    assert not [f for f in skade.jsonl("files", t) if f["content"] != "data"]
    agree("after skade's compaction")
    lineage_holds("after skade's compaction")
    assert ids_agree("row lineage after skade's compaction") == ids

    skade.ok("alter", t, "add-column", "note", "string", "--default", "n/a")
    assert collect(spark, f"SELECT DISTINCT note FROM {t}") == [{"note": "n/a"}]  # Spark reads the default
    before = current_metadata(warehouse, t)[1]["next-row-id"]
    spark.sql(f"INSERT INTO {t} VALUES (900000, 'late', 2.5, 'after alter')")
    after = lineage_holds("after Spark's insert")
    assert after["next-row-id"] == before + 1
    assert_same_rows(skade.rows(t, "--where", "id = 900000"),
                     [{"id": 900000, "cat": "late", "amount": 2.5, "note": "after alter"}], what="Spark after skade's alter")
    skade.ok("alter", t, "add-column", "tag", "fixed(2)", "--default", "0xcafe")  # Iceberg's JSON: lowercase hex
    assert collect(spark, f"SELECT DISTINCT hex(tag) AS h FROM {t}") == [{"h": "CAFE"}]


def test_skade_upgrades_a_spark_table_to_format_v3(spark, skade, warehouse):
    """A v2 table Spark wrote with merge-on-read position deletes, upgraded by `skade alter
    set-property format-version=3`: skade's next delete folds Spark's position deletes into a
    deletion vector, and Spark reads the table with every row id distinct and below next-row-id,
    then writes it on as v3."""
    skade.ok("create-namespace", "up")
    t = "up.events"
    spark.sql(f"""CREATE TABLE {t} (id bigint, cat string) USING iceberg
                  TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO {t} SELECT /*+ REPARTITION(1) */ id, concat('c', id % 3) FROM range(0, 1000)")
    spark.sql(f"DELETE FROM {t} WHERE id % 10 = 0")
    assert {f["file_format"] for f in skade.jsonl("files", t, "--content", "deletes")} == {"PARQUET"}
    skade.ok("alter", t, "set-property", "format-version=3")
    skade.ok("delete", t, "--where", "id = 1 or id = 999")
    (vector,) = [f for f in skade.jsonl("files", t, "--content", "deletes") if f["file_format"] == "PUFFIN"]
    assert vector["record_count"] == 100 + 2  # Spark's position deletes and skade's, in one vector
    theirs = collect(spark, f"SELECT id, cat FROM {t}")
    assert sorted(r["id"] for r in theirs) == [i for i in range(1000) if i % 10 and i not in (1, 999)]
    assert_same_rows(skade.rows(t), theirs, what="after the upgrade and skade's delete")
    _, md = current_metadata(warehouse, t)
    assert md["format-version"] == 3
    ids = collect(spark, f"SELECT count(DISTINCT _row_id) AS d, max(_row_id) AS m FROM {t}")[0]
    assert ids["d"] == len(theirs) and ids["m"] < md["next-row-id"], ids
    spark.sql(f"INSERT INTO {t} VALUES (5000, 'late')")
    spark.sql(f"DELETE FROM {t} WHERE id = 2")
    assert_same_rows(skade.rows(t), collect(spark, f"SELECT id, cat FROM {t}"), what="Spark writing on as v3")


def test_skade_upsert_keeps_row_ids_as_spark_merge_does(spark, skade, warehouse, tmp_path):
    """On a format v3 table Spark wrote, `skade upsert` hands each replaced row's `_row_id` to the
    row that replaces it, with the upsert's sequence number, and gives new keys ids after Spark's:
    Spark reads those ids from skade's files, and its own MERGE then keeps an id skade handed on."""
    skade.ok("create-namespace", "keep")
    t = "keep.people"
    spark.sql(f"""CREATE TABLE {t} (id bigint NOT NULL, name string) USING iceberg
                  TBLPROPERTIES ('format-version'='3', 'write.merge.mode'='merge-on-read')""")
    spark.sql(f"INSERT INTO {t} SELECT /*+ REPARTITION(2) */ id, concat('n', id) FROM range(0, 1000)")
    skade.ok("alter", t, "set-identifier", "id")
    columns = "id, name, _row_id, _last_updated_sequence_number"

    def read(what: str) -> dict:
        theirs = {r["id"]: r for r in collect(spark, f"SELECT {columns} FROM {t}")}
        mine = {r["id"]: r for r in skade.rows(t, "--columns", columns.replace(" ", "")).to_pylist()}
        assert mine == theirs, what
        return theirs

    before = read("before the upsert")
    next_id = current_metadata(warehouse, t)[1]["next-row-id"]
    replaced, new = [5, 500, 999], [1000, 1001]
    jsonl_file(tmp_path / "up.jsonl", [{"id": i, "name": f"up{i}"} for i in replaced + new])
    skade.ok("upsert", t, tmp_path / "up.jsonl")
    _, md = current_metadata(warehouse, t)
    seq = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])["sequence-number"]
    after = read("after skade's upsert")
    for i in replaced:
        assert after[i] == {"id": i, "name": f"up{i}", "_row_id": before[i]["_row_id"],
                            "_last_updated_sequence_number": seq}, (before[i], after[i])
    assert all(next_id <= after[i]["_row_id"] < md["next-row-id"] and after[i]["_last_updated_sequence_number"] == seq
               for i in new), after
    assert len({r["_row_id"] for r in after.values()}) == len(after) == 1002
    assert {i: r for i, r in after.items() if i not in replaced + new} == \
        {i: r for i, r in before.items() if i not in replaced}
    spark.sql(f"""MERGE INTO {t} AS t USING (SELECT 500L AS id, 'merged' AS name) AS s ON t.id = s.id
                  WHEN MATCHED THEN UPDATE SET t.name = s.name""")
    merged = read("after Spark's MERGE")
    assert merged[500]["_row_id"] == before[500]["_row_id"] and merged[500]["name"] == "merged"
