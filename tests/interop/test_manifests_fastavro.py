"""fastavro decodes every manifest list and manifest skade writes: field ids, Iceberg header
metadata, deflate codec, and contents that agree with the data files."""
from __future__ import annotations

import json
import os
import struct

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from skade_util import ALL_TYPES_SPEC, all_types_table, current_metadata, local_path, write_parquet

MANIFEST_FILE_IDS = {
    "manifest_path": 500, "manifest_length": 501, "partition_spec_id": 502, "content": 517,
    "sequence_number": 515, "min_sequence_number": 516, "added_snapshot_id": 503,
    "added_files_count": 504, "existing_files_count": 505, "deleted_files_count": 506,
    "added_rows_count": 512, "existing_rows_count": 513, "deleted_rows_count": 514,
    "partitions": 507, "key_metadata": 519,
}
MANIFEST_FILE_REQUIRED = set(MANIFEST_FILE_IDS) - {"partitions", "key_metadata"}
FIELD_SUMMARY_IDS = {"contains_null": 509, "contains_nan": 518, "lower_bound": 510, "upper_bound": 511}
MANIFEST_ENTRY_IDS = {"status": 0, "snapshot_id": 1, "sequence_number": 3, "file_sequence_number": 4, "data_file": 2}
DATA_FILE_IDS = {
    "content": 134, "file_path": 100, "file_format": 101, "partition": 102, "record_count": 103,
    "file_size_in_bytes": 104, "column_sizes": 108, "value_counts": 109, "null_value_counts": 110,
    "nan_value_counts": 137, "lower_bounds": 125, "upper_bounds": 128, "key_metadata": 131,
    "split_offsets": 132, "equality_ids": 135, "sort_order_id": 140, "referenced_data_file": 143,
}
DATA_FILE_REQUIRED = {"content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes"}
# map key/value ids and list element ids inside data_file
DATA_FILE_MAP_IDS = {
    "column_sizes": (117, 118), "value_counts": (119, 120), "null_value_counts": (121, 122),
    "nan_value_counts": (138, 139), "lower_bounds": (126, 127), "upper_bounds": (129, 130),
}
DATA_FILE_LIST_IDS = {"split_offsets": 133, "equality_ids": 136}


def _unwrap(t):
    """The non-null branch of an optional union."""
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        assert len(rest) == 1, t
        return rest[0]
    return t


def _fields(record_schema):
    return {f["name"]: f for f in record_schema["fields"]}


def _check_ids(fields, ids, required, what):
    for name, f in fields.items():
        assert name in ids, f"{what}: unexpected field {name}"
        assert f.get("field-id") == ids[name], f"{what}.{name}: field-id {f.get('field-id')} != {ids[name]}"
    missing = required - set(fields)
    assert not missing, f"{what}: required fields missing: {missing}"
    for name in set(fields) - required:
        assert isinstance(fields[name]["type"], list) and "null" in fields[name]["type"], f"{what}.{name} should be optional"
    for name in required & set(fields):
        assert not (isinstance(fields[name]["type"], list) and "null" in fields[name]["type"]), f"{what}.{name} should be required"


def _read(path):
    with open(path, "rb") as fh:
        r = fastavro.reader(fh)
        return r.codec, dict(r.metadata), r.writer_schema, list(r)


def _make_table(skade, tmp_path, name, partition=None, appends=3):
    skade("create-namespace", "db")
    args = ["create", name, "--schema", ALL_TYPES_SPEC]
    if partition:
        args += ["--partition", partition]
    skade.ok(*args)
    for k in range(appends):
        data = all_types_table(40, seed=60 + k, id_start=100 * k, pools={"tstz": 2, "s": 2, "dec": 2, "ts": 2, "dt": 2, "i": 2, "u": 2, "fx": 2, "tm": 2, "bin": 2})
        skade.ok("append", name, write_parquet(data, tmp_path / f"{name}-{k}.parquet"))


@pytest.mark.parametrize(
    "partition",
    [None, "day(tstz), bucket(4,id), truncate(1,s), dec, hour(ts), month(dt), truncate(10,i), u, fx, b, tm, bin"],
    ids=["unpartitioned", "many-transforms"],
)
def test_fastavro_decodes_every_manifest(skade, tmp_path, warehouse, partition):
    table = "db.t"
    _make_table(skade, tmp_path, table, partition)
    meta_path, meta = current_metadata(warehouse, table)
    assert meta["format-version"] == 2
    schema = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
    specs = {s["spec-id"]: s for s in meta["partition-specs"]}
    spec = specs[meta["default-spec-id"]]
    field_types = {f["id"]: f["type"] for f in schema["fields"]}

    avro_seen = set()
    snapshots = meta["snapshots"]
    assert len(snapshots) == 3
    by_id = {s["snapshot-id"]: s for s in snapshots}
    for snap in snapshots:
        ml_path = local_path(snap["manifest-list"])
        avro_seen.add(ml_path)
        codec, hdr, wschema, manifests = _read(ml_path)
        assert codec == "deflate"
        assert hdr["snapshot-id"] == str(snap["snapshot-id"])
        assert hdr["parent-snapshot-id"] == str(snap.get("parent-snapshot-id", "null"))
        assert hdr["sequence-number"] == str(snap["sequence-number"])
        assert hdr["format-version"] == "2"
        assert wschema["name"] == "manifest_file"
        mf = _fields(wschema)
        _check_ids(mf, MANIFEST_FILE_IDS, MANIFEST_FILE_REQUIRED, "manifest_file")
        if "partitions" in mf:
            arr = _unwrap(mf["partitions"]["type"])
            assert arr["type"] == "array" and arr["element-id"] == 508
            _check_ids(_fields(arr["items"]), FIELD_SUMMARY_IDS, {"contains_null"}, "field_summary")

        # a fast append keeps every earlier manifest: all rows of the snapshot are listed
        assert sum(m["added_rows_count"] + m["existing_rows_count"] for m in manifests) == int(snap["summary"]["total-records"])
        assert any(m["added_snapshot_id"] == snap["snapshot-id"] for m in manifests)
        for m in manifests:
            mpath = local_path(m["manifest_path"])
            avro_seen.add(mpath)
            assert m["manifest_length"] == os.path.getsize(mpath)
            assert m["partition_spec_id"] == spec["spec-id"]
            assert m["content"] == 0
            added_snap = by_id[m["added_snapshot_id"]]
            assert m["sequence_number"] == added_snap["sequence-number"]
            assert m["min_sequence_number"] <= m["sequence_number"]
            _check_manifest(m, mpath, schema, spec, field_types)

    # every Avro file in the metadata folder is one of the referenced ones
    on_disk = {p for p in (meta_path.parent).glob("*.avro")}
    assert on_disk == avro_seen


def _check_manifest(m, mpath, schema, spec, field_types):
    codec, hdr, wschema, entries = _read(mpath)
    assert codec == "deflate"
    for key in ("schema", "partition-spec", "partition-spec-id", "format-version", "content"):
        assert key in hdr, f"manifest header lacks {key}: {sorted(hdr)}"
    assert hdr["format-version"] == "2"
    assert hdr["content"] == "data"
    assert hdr["partition-spec-id"] == str(spec["spec-id"])
    hdr_schema = json.loads(hdr["schema"])
    assert hdr_schema["type"] == "struct"
    assert hdr_schema["fields"] == schema["fields"]
    hdr_spec = json.loads(hdr["partition-spec"])
    hdr_spec_fields = hdr_spec["fields"] if isinstance(hdr_spec, dict) else hdr_spec
    assert hdr_spec_fields == spec["fields"]

    assert wschema["name"] == "manifest_entry"
    me = _fields(wschema)
    _check_ids(me, MANIFEST_ENTRY_IDS, {"status", "data_file"}, "manifest_entry")
    df = _fields(me["data_file"]["type"])
    _check_ids(df, DATA_FILE_IDS, DATA_FILE_REQUIRED, "data_file")
    for name, (kid, vid) in DATA_FILE_MAP_IDS.items():
        if name in df:
            arr = _unwrap(df[name]["type"])
            assert arr["type"] == "array" and arr.get("logicalType") == "map", name
            kv = _fields(arr["items"])
            assert (kv["key"]["field-id"], kv["value"]["field-id"]) == (kid, vid), name
    for name, eid in DATA_FILE_LIST_IDS.items():
        if name in df:
            assert _unwrap(df[name]["type"])["element-id"] == eid, name
    part_fields = df["partition"]["type"]["fields"]
    assert [(f["name"], f["field-id"]) for f in part_fields] == [(f["name"], f["field-id"]) for f in spec["fields"]]

    added = [e for e in entries if e["status"] == 1]
    assert len(added) == m["added_files_count"]
    assert sum(e["data_file"]["record_count"] for e in added) == m["added_rows_count"]
    assert sum(e["data_file"]["record_count"] for e in entries if e["status"] == 0) == m["existing_rows_count"]
    for e in entries:
        assert e["status"] in (0, 1)
        d = e["data_file"]
        if e["status"] == 1:
            assert e["snapshot_id"] in (None, m["added_snapshot_id"])
            assert e["sequence_number"] in (None, m["sequence_number"])
        assert d["content"] == 0
        assert d["file_format"] == "PARQUET"
        path = local_path(d["file_path"])
        assert d["file_size_in_bytes"] == os.path.getsize(path)
        t = pq.read_table(path)
        assert d["record_count"] == t.num_rows
        _check_metrics(d, t, schema)
        if m.get("partitions") is not None:
            for k, pf in enumerate(spec["fields"]):
                summ = m["partitions"][k]
                if d["partition"][pf["name"]] is None:
                    assert summ["contains_null"], pf["name"]


def _check_metrics(d, t: pa.Table, schema):
    """value/null counts and long/int/string bounds match the file's data."""
    counts = {kv["key"]: kv["value"] for kv in d["value_counts"] or []}
    nulls = {kv["key"]: kv["value"] for kv in d["null_value_counts"] or []}
    lower = {kv["key"]: kv["value"] for kv in d["lower_bounds"] or []}
    upper = {kv["key"]: kv["value"] for kv in d["upper_bounds"] or []}
    for f in schema["fields"]:
        if not isinstance(f["type"], str):
            continue
        col = t.column(f["name"])
        fid = f["id"]
        if fid in counts:
            assert counts[fid] == t.num_rows, f["name"]
        if fid in nulls:
            assert nulls[fid] == col.null_count, f["name"]
        values = [v for v in col.to_pylist() if v is not None]
        if not values:
            assert fid not in lower and fid not in upper, f["name"]
            continue
        if f["type"] == "long":
            assert struct.unpack("<q", lower[fid])[0] == min(values), f["name"]
            assert struct.unpack("<q", upper[fid])[0] == max(values), f["name"]
        elif f["type"] == "int":
            assert struct.unpack("<i", lower[fid])[0] == min(values), f["name"]
            assert struct.unpack("<i", upper[fid])[0] == max(values), f["name"]
        elif f["type"] == "string" and fid in lower:
            enc = [v.encode() for v in values]  # bounds compare as UTF-8 bytes, may be truncated
            assert lower[fid] <= min(enc) and min(enc).startswith(lower[fid][:1]), f["name"]
            assert upper[fid] >= max(enc), f["name"]
            lower[fid].decode(), upper[fid].decode()  # valid UTF-8 even when truncated
        elif f["type"] == "boolean" and fid in lower:
            assert lower[fid] == bytes([min(values)]) and upper[fid] == bytes([max(values)]), f["name"]


def test_manifest_list_parent_and_sequence_chain(skade, tmp_path, warehouse):
    _make_table(skade, tmp_path, "db.c", appends=4)
    _, meta = current_metadata(warehouse, "db.c")
    seqs, parents = [], []
    for snap in meta["snapshots"]:
        _, hdr, _, manifests = _read(local_path(snap["manifest-list"]))
        seqs.append(int(hdr["sequence-number"]))
        parents.append(hdr["parent-snapshot-id"])
        assert len(manifests) == seqs[-1]  # one new manifest per append, the old ones kept
        assert sorted(m["sequence_number"] for m in manifests) == list(range(1, seqs[-1] + 1))
    assert seqs == [1, 2, 3, 4]
    ids = [str(s["snapshot-id"]) for s in meta["snapshots"]]
    assert parents == ["null"] + ids[:-1]
    assert meta["last-sequence-number"] == 4
