"""A Parquet drop folder as a source: each file is applied once (the ledger keeps the
names done), the graph equals the oracle over every file, cdc is refused."""
from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq

from graph_util import actual_graph, assert_same_graph, expected_graph, write_mapping
from tables import MAPPING, transfers


def mapping_for(drop, mode="incremental"):
    t = {**MAPPING["tables"][3], "table": "drop.transfers", "source": f"parquet:{drop}", "mode": mode}
    return {"graph": "g", "tables": [t]}


def test_drop_folder_applies_each_file_once(bifrost, workdir):
    drop = workdir / "drop"
    (drop / "drop.transfers").mkdir(parents=True)
    rng = random.Random(3)
    files = [transfers(rng, 1, 30, [1, 2, 3]), transfers(rng, 100, 20, [2, 3, 4])]
    for i, t in enumerate(files):
        pq.write_table(t, drop / "drop.transfers" / f"part-{i}.parquet")
    m = mapping_for(drop)
    mapping = write_mapping(workdir / "m.yaml", m)
    out = bifrost.ok("build", "--mapping", mapping)
    assert "rows read: 50," in out, out
    files.append(transfers(rng, 500, 10, [1, 5]))
    pq.write_table(files[-1], drop / "drop.transfers" / "part-2.parquet")
    out = bifrost.ok("build", "--mapping", mapping)
    assert "rows read: 10," in out, out  # only the new file
    out = bifrost.ok("build", "--mapping", mapping)
    assert "tables unchanged: 1" in out, out
    assert_same_graph(expected_graph(m, {"drop.transfers": pa.concat_tables(files)}),
                      actual_graph(bifrost, m, "--mapping", mapping))


def test_drop_folder_refuses_cdc_and_names_missing_folders(bifrost, workdir):
    drop = workdir / "drop"
    (drop / "drop.other").mkdir(parents=True)
    rc, _, err = bifrost("validate", "--mapping", write_mapping(workdir / "m.yaml", mapping_for(drop, "cdc")))
    assert rc == 2 and "has no changelog" in err, err
    rc, _, err = bifrost("validate", "--mapping", write_mapping(workdir / "m2.yaml", mapping_for(drop)))
    assert rc == 2 and "drop.transfers does not exist (tables in" in err and "drop.other" in err, err
