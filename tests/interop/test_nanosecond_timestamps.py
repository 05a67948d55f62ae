"""Format v3's nanosecond timestamps (`timestamp_ns`, `timestamptz_ns`): skade keeps every digit
through appends of Parquet and text, filters, partition transforms, upserts and compaction, and
PyIceberg reads the same instants from skade's files and the same partition values from its
manifests (PyIceberg's own day and bucket transforms of the rows agree)."""
from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.transforms import BucketTransform, DayTransform
from pyiceberg.types import TimestampNanoType, TimestamptzNanoType

from skade_util import current_metadata, local_path, write_parquet

T = "ns.events"
BASE = 1_510_871_468_000_000_000  # 2017-11-16T22:31:08Z in nanoseconds


def rows(ids) -> pa.Table:
    """Hours and days apart, each with nanoseconds that microseconds cannot hold (some before 1970)."""
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "at": pa.array([BASE + i * 3_600_000_000_007 + i for i in ids], pa.timestamp("ns")),
                     "at_tz": pa.array([BASE - i * 86_399_999_999_999 * 300 - 1 for i in ids],
                                       pa.timestamp("ns", "UTC"))})


def instants(table: pa.Table) -> dict[int, tuple[int, int]]:
    """id -> (at, at_tz) as nanoseconds since the epoch, as the table's own unit holds them."""
    assert table.schema.field("at").type == pa.timestamp("ns"), table.schema
    assert table.schema.field("at_tz").type == pa.timestamp("ns", "UTC"), table.schema
    ids = table.column("id").to_pylist()
    at = table.column("at").cast(pa.int64()).to_pylist()
    at_tz = table.column("at_tz").cast(pa.int64()).to_pylist()
    return {i: (a, z) for i, a, z in zip(ids, at, at_tz)}


def parse_ns(text: str) -> int:
    """'YYYY-MM-DDTHH:MM:SS[.f...][+00:00]' as nanoseconds since the epoch (Python's datetime stops at µs)."""
    text = text.removesuffix("+00:00")
    whole, _, fraction = text.partition(".")
    seconds = dt.datetime.fromisoformat(whole).replace(tzinfo=dt.timezone.utc).timestamp()
    return int(seconds) * 1_000_000_000 + int(fraction.ljust(9, "0") or 0)


def days_since_epoch(v) -> int:
    return (v - dt.date(1970, 1, 1)).days if isinstance(v, dt.date) else v


def test_nanosecond_timestamps_round_trip(skade, catalog, tmp_path):
    skade.ok("create-namespace", "ns")
    rc, _, err = skade("create", "ns.old", "--schema", "id:long!, at:timestamp_ns")
    assert rc != 0 and "column 'at' of type timestamp_ns needs format version 3" in err, err
    skade.ok("create", "ns.old", "--schema", "id:long!, s:struct<a:int>")
    rc, _, err = skade("alter", "ns.old", "add-column", "s.at", "timestamptz_ns")
    assert rc != 0 and "column 's.at' of type timestamptz_ns needs format version 3" in err, err
    skade.ok("create", T, "--schema", "id:long!, at:timestamp_ns, at_tz:timestamptz_ns", "--identifier", "id",
             "--partition", "day(at), bucket(4,at_tz)", "--property", "format-version=3")
    first = rows(list(range(40)))
    skade.ok("append", T, write_parquet(first, tmp_path / "a.parquet"))
    text = tmp_path / "b.jsonl"
    text.write_text(json.dumps({"id": 100, "at": "2017-11-16T22:31:08.123456789",
                                "at_tz": "2017-11-16T23:31:08.000000001+01:00"}) + "\n")
    skade.ok("append", T, text)
    want = instants(first) | {100: (BASE + 123_456_789, BASE + 1)}
    assert instants(skade.rows(T)) == want
    assert instants(catalog().load_table(T).scan().to_arrow()) == want

    # Literals with nine digits compare to the nanosecond, and output keeps them.
    (hit,) = skade.jsonl("scan", T, "--where", "at = '2017-11-16T22:31:08.123456789'")
    assert hit == {"id": 100, "at": "2017-11-16T22:31:08.123456789", "at_tz": "2017-11-16T22:31:08.000000001+00:00"}
    assert not skade.jsonl("scan", T, "--where", "at = '2017-11-16T22:31:08.123456788'")
    later = skade.jsonl("scan", T, "--where", "at > '2017-11-16T22:31:08.123456788'", "--columns", "id")
    assert sorted(r["id"] for r in later) == sorted(i for i, (a, _) in want.items() if a > BASE + 123_456_788)

    # The partition of each data file, as PyIceberg reads skade's manifests, is PyIceberg's own
    # transform of the file's rows.
    table = catalog().load_table(T)
    names = [f.name for f in table.spec().fields]
    day, bucket = DayTransform().transform(TimestampNanoType()), BucketTransform(4).transform(TimestamptzNanoType())
    files = table.inspect.files().select(["content", "file_path", "partition"]).to_pylist()
    files = [f for f in files if f["content"] == 0]
    assert len(files) > 2, files
    bounds = {r["file_path"]: r for r in skade.jsonl("files", T, "--bounds", "at,at_tz")}
    for f in files:
        held = instants(pq.read_table(local_path(f["file_path"])))
        expected = {(day(a), bucket(z)) for a, z in held.values()}
        assert len(expected) == 1, (f["file_path"], expected)
        theirs = (days_since_epoch(f["partition"][names[0]]), f["partition"][names[1]])
        assert theirs == expected.pop(), f
        # The file's bounds keep the nanoseconds too.
        mine = bounds[str(local_path(f["file_path"]))]
        for col, k in (("at", 0), ("at_tz", 1)):
            lower, upper = (parse_ns(mine[f"{col}.{end}"]) for end in ("lower", "upper"))
            assert (lower, upper) == (min(v[k] for v in held.values()), max(v[k] for v in held.values())), mine

    # An upsert and a compaction keep every digit.
    text.write_text(json.dumps({"id": 5, "at": "1969-12-31T23:59:59.999999999", "at_tz": "2262-04-11T23:47:16Z"}) + "\n")
    skade.ok("upsert", T, text)
    want[5] = (-1, 9_223_372_036_000_000_000)
    assert instants(skade.rows(T)) == want
    skade.ok("compact", T)
    assert instants(skade.rows(T)) == want
    assert instants(catalog().load_table(T).scan().to_arrow()) == want


def test_identity_partition_on_nanoseconds(skade, warehouse, tmp_path):
    """An identity partition on a `timestamp_ns` column: the manifest's partition field is Avro's
    `timestamp-nanos` (as Java and PyIceberg write it), fastavro reads each file's value to the
    nanosecond, and a filter on one instant reads that partition's file only. (PyIceberg 0.12
    cannot read such a manifest back: its Avro reader knows `timestamp-micros` only.)"""
    import fastavro

    skade.ok("create-namespace", "ns")
    skade.ok("create", "ns.byat", "--schema", "id:long!, at:timestamp_ns", "--partition", "at",
             "--property", "format-version=3")
    instants_ns = [BASE + 123_456_789, BASE + 123_456_790, -1]
    data = pa.table({"id": pa.array([0, 1, 2], pa.int64()), "at": pa.array(instants_ns, pa.timestamp("ns"))})
    skade.ok("append", "ns.byat", write_parquet(data, tmp_path / "a.parquet"))
    _, md = current_metadata(warehouse, "ns.byat")
    snapshot = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    with open(local_path(snapshot["manifest-list"]), "rb") as f:
        (manifest,) = [m["manifest_path"] for m in fastavro.reader(f)]
    with open(local_path(manifest), "rb") as f:
        reader = fastavro.reader(f)
        entries = list(reader)
        data_file = next(fl for fl in reader.writer_schema["fields"] if fl["name"] == "data_file")["type"]
    partition = next(fl for fl in data_file["fields"] if fl["name"] == "partition")["type"]
    (at_type,) = [t for t in partition["fields"][0]["type"] if t != "null"]
    assert at_type["logicalType"] == "timestamp-nanos" and at_type["adjust-to-utc"] is False, at_type
    assert sorted(e["data_file"]["partition"]["at"] for e in entries) == sorted(instants_ns)
    rc, out, err = skade("scan", "ns.byat", "--where", "at = '2017-11-16T22:31:08.12345679'", "--format", "jsonl",
                         "--stats")
    assert rc == 0 and [json.loads(line)["id"] for line in out.splitlines()] == [1], (out, err)
    assert "files 3 -> 1 (partition pruned 2" in err, err
