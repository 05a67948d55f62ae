"""Regenerates the seed corpus in tests/fuzz/corpus/avro_container/.

Needs fastavro with cramjam (snappy) and backports.zstd or Python 3.14 (zstandard):
    python tests/fuzz/make_avro_corpus.py
avro_test.cc checks the decoded contents of the sink_*.avro files, so keep make_sink_records
in step with it.
"""
import io
import json
import os
import zlib

import fastavro

try:
    from compression import zstd  # Python 3.14
except ImportError:
    from backports import zstd

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "avro_container")
SYNC = bytes(range(16))

SINK_SCHEMA = {
    "type": "record", "name": "sink", "namespace": "skade.test", "fields": [
        {"name": "b", "type": "boolean", "field-id": 1},
        {"name": "i", "type": "int", "field-id": 2},
        {"name": "l", "type": "long", "field-id": 3},
        {"name": "f", "type": "float", "field-id": 4},
        {"name": "d", "type": "double", "field-id": 5},
        {"name": "s", "type": "string", "field-id": 6},
        {"name": "raw", "type": "bytes", "field-id": 7},
        {"name": "opt", "type": ["null", "string"], "default": None, "field-id": 8},
        {"name": "fx", "type": {"type": "fixed", "name": "fixed_4", "size": 4}, "field-id": 9},
        {"name": "color", "type": {"type": "enum", "name": "color",
                                   "symbols": ["RED", "GREEN", "BLUE"]}, "field-id": 10},
        {"name": "ints", "type": {"type": "array", "items": "int", "element-id": 12},
         "field-id": 11},
        {"name": "props", "type": {"type": "map", "values": "long", "key-id": 14,
                                   "value-id": 15}, "field-id": 13},
        {"name": "sizes", "type": ["null", {
            "type": "array", "logicalType": "map", "items": {
                "type": "record", "name": "k117_v118", "fields": [
                    {"name": "key", "type": "int", "field-id": 117},
                    {"name": "value", "type": "long", "field-id": 118}]}}],
         "default": None, "field-id": 16},
        {"name": "nested", "type": {"type": "record", "name": "r17", "fields": [
            {"name": "x", "type": "fixed_4", "field-id": 18},
            {"name": "day", "type": {"type": "int", "logicalType": "date"}, "field-id": 19},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros",
                                    "adjust-to-utc": True}, "field-id": 21}]},
         "field-id": 17},
        {"name": "dec", "type": {"type": "fixed", "name": "decimal_9_2", "size": 4,
                                 "logicalType": "decimal", "precision": 9, "scale": 2},
         "field-id": 20},
    ]}


def make_sink_records(n):
    out = []
    for i in range(n):
        out.append({
            "b": i % 2 == 0, "i": i * 1000 - 5, "l": -(1 << 40) * i, "f": i + 0.5, "d": i / 4,
            "s": f"row-{i}", "raw": bytes([i, 0, 255]),
            "opt": None if i % 3 == 0 else f"opt{i}",
            "fx": b"\x00\x01\x02" + bytes([i]), "color": ["RED", "GREEN", "BLUE"][i % 3],
            "ints": list(range(i)), "props": {f"k{j}": j * j for j in range(i % 4)},
            "sizes": None if i % 2 else [{"key": j, "value": j * 10} for j in range(i)],
            "nested": {"x": b"abcd", "day": 19000 + i, "ts": 1_700_000_000_000_000 + i},
            "dec": (i * 12345).to_bytes(4, "big", signed=True),
        })
    return out


def fastavro_file(schema, records, codec, **kw):
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema, _write_hint=False), records, codec=codec,
                    sync_marker=SYNC, metadata={"iceberg.note": "seed"}, **kw)
    return buf.getvalue()


def zz(n):
    """Avro long: zigzag varint."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def bts(b):
    return zz(len(b)) + b


def container(schema_json, blocks, codec=b"null", meta_negative=False):
    """Hand-assembled container; blocks are (count, payload) pairs."""
    entries = bts(b"avro.schema") + bts(schema_json) + bts(b"avro.codec") + bts(codec)
    meta = (zz(-2) + zz(len(entries)) if meta_negative else zz(2)) + entries + zz(0)
    out = b"Obj\x01" + meta + SYNC
    for count, payload in blocks:
        out += zz(count) + bts(payload) + SYNC
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    files = {}
    sink = make_sink_records(7)
    for codec in ["null", "deflate", "snappy", "zstandard"]:
        files[f"sink_{codec}.avro"] = fastavro_file(SINK_SCHEMA, sink, codec, sync_interval=300)
    files["sink_empty.avro"] = fastavro_file(SINK_SCHEMA, [], "null")
    files["long_zstandard.avro"] = fastavro_file("long", list(range(-50, 50, 3)), "zstandard")
    files["union_snappy.avro"] = fastavro_file(
        ["null", "string", "long", "double"], [None, "x", 5, 2.5, None, "", -1], "snappy")

    # Negative block counts (with byte sizes) in the header, an array and a map.
    arr = zz(-3) + zz(3) + zz(1) + zz(2) + zz(3) + zz(1) + zz(4) + zz(0)
    entries = bts(b"k1") + bts(b"v") + bts(b"k2") + bts(b"")
    mp = zz(-2) + zz(len(entries)) + entries + zz(0)
    schema = json.dumps({"type": "record", "name": "nb", "fields": [
        {"name": "a", "type": {"type": "array", "items": "int"}},
        {"name": "m", "type": {"type": "map", "values": "string"}}]}).encode()
    files["negative_blocks_null.avro"] = container(schema, [(1, arr + mp), (1, arr + mp)],
                                                   meta_negative=True)

    # Hostile inputs: each must be rejected quickly, without a huge allocation.
    files["bomb_zstandard.avro"] = container(b'"bytes"', [(1, zstd.compress(bytes(64 << 20)))],
                                             codec=b"zstandard")
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    files["bomb_deflate.avro"] = container(
        b'"bytes"', [(1, deflater.compress(bytes(8 << 20)) + deflater.flush())], codec=b"deflate")
    files["huge_count_null.avro"] = container(b'"null"', [(1 << 60, b"")])
    files["huge_array_null.avro"] = container(b'{"type":"array","items":"null"}',
                                              [(1, zz(1 << 60) + zz(0))])
    deep = '"int"'
    for _ in range(200):
        deep = '{"type":"array","items":%s}' % deep
    files["deep_schema_null.avro"] = container(deep.encode(), [])

    good = files["sink_deflate.avro"]
    files["truncated_deflate.avro"] = good[: len(good) - 100]
    garbled = bytearray(files["sink_snappy.avro"])
    for pos in range(len(garbled) - 60, len(garbled) - 20, 7):
        garbled[pos] ^= 0x5A
    files["garbled_snappy.avro"] = bytes(garbled)
    files["bad_magic.avro"] = b"Obj\x02" + good[4:]
    files["unknown_codec.avro"] = files["sink_null.avro"].replace(b"\x08null", b"\x08lzma", 1)

    for name, data in sorted(files.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
