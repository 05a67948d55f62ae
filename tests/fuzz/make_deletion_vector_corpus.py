"""Regenerates the seed corpus in tests/fuzz/corpus/deletion_vector/.

Blobs built with pyroaring (the library PyIceberg reads deletion vectors with), so the seeds
hold its array, bitmap and run containers as another writer lays them out:
    .venv/bin/python tests/fuzz/make_deletion_vector_corpus.py
`blob_*` files are whole blobs (length, magic, bitmaps, CRC); `body_*` files are a row-count
selector byte, a spare byte and the bitmaps alone, which the target wraps in a valid blob.
"""
import os
import struct
import zlib

from pyroaring import BitMap

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "deletion_vector")
MAGIC = b"\xd1\xd3\x39\x64"


def bitmaps(positions, runs):
    """The 64-bit layout: a count, then each 32-bit key and its portable roaring bitmap."""
    by_key = {}
    for p in sorted(positions):
        by_key.setdefault(p >> 32, []).append(p & 0xFFFFFFFF)
    out = struct.pack("<Q", len(by_key))
    for key, low in sorted(by_key.items()):
        bm = BitMap(low)
        if runs:
            bm.run_optimize()
        out += struct.pack("<I", key) + bm.serialize()
    return out


def blob(body):
    body = MAGIC + body
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = {
        "empty": ([], False, 0),
        "array": ([0, 3, 7, 99], False, 1),
        "bitmap": (range(0, 60000, 2), False, 2),
        "runs": (list(range(10, 5000)) + list(range(70000, 70100)), True, 3),
        "many_containers": ([k * 65536 + 5 for k in range(12)], True, 4),
        "past_2_32": ([1, (1 << 32) + 5, (1 << 32) + 69999], False, 5),
    }
    for name, (positions, runs, selector) in cases.items():
        body = bitmaps(positions, runs)
        with open(os.path.join(OUT, f"blob_{name}.bin"), "wb") as f:
            f.write(blob(body))
        with open(os.path.join(OUT, f"body_{name}.bin"), "wb") as f:
            f.write(bytes([selector, 0]) + body)


if __name__ == "__main__":
    main()
