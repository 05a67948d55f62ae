"""A pyarrow.flight DoExchange service for Bifröst's `custom` steps, run by the tests and
the benchmark as a process of its own:

  flight_service.py --port P [--transform friend_edges|identity] [--die-at-batch N]
                    [--wrong-schema] [--ready-file F]

friend_edges: rows (id, friends "3, 7,12") -> (src, dst, rank) edges, computed with
pyarrow.compute batch by batch; identity: the rows back unchanged. --die-at-batch makes
the process exit while it reads the Nth batch of a call (a service dying mid-round);
--wrong-schema answers with `dst` as a string.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as flight

EDGES = pa.schema([pa.field("src", pa.int64(), nullable=False), pa.field("dst", pa.int64(), nullable=False),
                   pa.field("rank", pa.int64())])


def friend_edges(batch: pa.RecordBatch) -> pa.RecordBatch:
    ids = batch.column("id")
    lists = pc.split_pattern(batch.column("friends"), ",")
    flat = pc.utf8_trim_whitespace(pc.list_flatten(lists))
    parents = pc.list_parent_indices(lists)
    # rank: the entry's place in its row's list, counting non-empty entries from 1
    keep = pc.not_equal(flat, "")
    flat, parents = flat.filter(keep), parents.filter(keep)
    ranks, last, n = [], None, 0
    for p in parents.to_pylist():
        n = n + 1 if p == last else 1
        last = p
        ranks.append(n)
    src = pc.take(ids, parents)
    keep = pc.is_valid(src)
    return pa.RecordBatch.from_arrays(
        [src.filter(keep), pc.cast(flat, pa.int64()).filter(keep), pa.array(ranks, pa.int64()).filter(keep)],
        schema=EDGES)


class Service(flight.FlightServerBase):
    def __init__(self, location, transform: str, die_at: int | None, wrong: bool):
        super().__init__(location)
        self.transform, self.die_at, self.wrong = transform, die_at, wrong

    def do_exchange(self, context, descriptor, reader, writer):
        started = False
        for n, chunk in enumerate(reader, start=1):
            if self.die_at is not None and n >= self.die_at:
                os._exit(3)
            batch = chunk.data
            out = friend_edges(batch) if self.transform == "friend_edges" else batch
            if self.wrong:
                out = out.set_column(1, pa.field("dst", pa.string()), pc.cast(out.column(1), pa.string()))
            if not started:
                writer.begin(out.schema)
                started = True
            writer.write_batch(out)
        if not started:
            writer.begin(EDGES if self.transform == "friend_edges" else reader.schema)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--transform", default="friend_edges", choices=["friend_edges", "identity"])
    ap.add_argument("--die-at-batch", type=int)
    ap.add_argument("--wrong-schema", action="store_true")
    ap.add_argument("--ready-file")
    a = ap.parse_args()
    server = Service(f"grpc://127.0.0.1:{a.port}", a.transform, a.die_at_batch, a.wrong_schema)
    if a.ready_file:
        Path(a.ready_file).write_text("ready")
    server.serve()


if __name__ == "__main__":
    main()
