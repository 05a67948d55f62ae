"""Bad input to the row-level and evolution commands: exit 2, a message naming the problem, and
the table untouched (same metadata_location in the catalog, same snapshots, no file written)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from skade_util import catalog_row, current_metadata, tree_listing, write_parquet

ROWS = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "grp": ["a", "b", "a", None],
                 "v": pa.array([10, 20, None, 40], pa.int32()), "s": ["x", None, "z", "w"]})

# (id, table, argument list with {file}/{keys_no_id}/{null_id} placeholders, words the error names)
CASES = [
    ("delete_where_unknown_column", "db.e", ["delete", "{t}", "--where", "nope > 1"], ["unknown column", "nope"]),
    ("overwrite_where_unknown_column", "db.e", ["overwrite", "{t}", "{file}", "--where", "nope = 1"],
     ["unknown column", "nope"]),
    ("delete_where_bad_literal", "db.e", ["delete", "{t}", "--where", "v > 'abc'"], ["v"]),
    ("delete_where_syntax", "db.e", ["delete", "{t}", "--where", "v >"], ["end of input"]),
    ("delete_keys_missing_identifier", "db.e", ["delete", "{t}", "--keys", "{keys_no_id}"], ["identifier", "id"]),
    ("upsert_missing_identifier", "db.e", ["upsert", "{t}", "{keys_no_id}"], ["id"]),
    ("upsert_null_identifier", "db.e", ["upsert", "{t}", "{null_id}"], ["id"]),
    # A bad value past the keys: found while the rows are written, after the old rows' delete
    # files were: those go again, and the message names the file, row and column.
    ("upsert_bad_value_after_the_keys", "db.e", ["upsert", "{t}", "{bad_v}"], ["bad_v.csv", "row 3", "v"]),
    ("overwrite_bad_value", "db.e", ["overwrite", "{t}", "{bad_v}", "--where", "id = 1"], ["bad_v.csv", "row 3", "v"]),
    ("widen_string_to_int", "db.e", ["alter", "{t}", "widen-column", "s", "int"], ["s", "string", "int"]),
    ("narrow_long_to_int", "db.e", ["alter", "{t}", "widen-column", "id", "int"], ["id", "long", "int"]),
    ("drop_identifier_column", "db.e", ["alter", "{t}", "drop-column", "id"], ["id", "identifier"]),
    ("drop_partition_source_column", "db.e", ["alter", "{t}", "drop-column", "grp"], ["grp", "partition"]),
    ("set_optional_identifier", "db.e", ["alter", "{t}", "set-optional", "id"], ["id", "identifier"]),
    ("add_existing_column", "db.e", ["alter", "{t}", "add-column", "v", "long"], ["v"]),
    ("rename_unknown_column", "db.e", ["alter", "{t}", "rename-column", "nope", "x"], ["nope"]),
    ("drop_unknown_partition_field", "db.e", ["alter", "{t}", "drop-partition", "nope"], ["nope"]),
    ("upsert_without_identifier_fields", "db.noid", ["upsert", "{t}", "{file}"], ["identifier"]),
    ("delete_keys_without_identifier_fields", "db.noid", ["delete", "{t}", "--keys", "{file}"], ["identifier"]),
]


@pytest.mark.parametrize("table,args,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_row_level_input_leaves_table_unchanged(skade, warehouse, tmp_path, table, args, words):
    skade.ok("create-namespace", "db")
    skade.ok("create", "db.e", "--schema", "id:long!, grp:string, v:int, s:string", "--identifier", "id",
             "--partition", "grp")
    skade.ok("create", "db.noid", "--schema", "id:long!, grp:string, v:int, s:string")
    data = write_parquet(ROWS, tmp_path / "rows.parquet")
    for t in ("db.e", "db.noid"):
        skade.ok("append", t, data)
    skade.ok("delete", "db.e", "--where", "id = 4")  # a position delete file is there too
    files = {
        "file": str(data),
        "keys_no_id": str(write_parquet(ROWS.select(["grp", "v"]), tmp_path / "no_id.parquet")),
        "null_id": str(tmp_path / "null_id.jsonl"),
        "bad_v": str(tmp_path / "bad_v.csv"),
        "t": table,
    }
    (tmp_path / "bad_v.csv").write_text("id,grp,v,s\n1,a,5,p\n2,b,6,q\n3,a,seven,r\n")
    (tmp_path / "null_id.jsonl").write_text('{"id": 7, "grp": "a"}\n{"id": null, "grp": "b"}\n')

    row_before = catalog_row(warehouse, table)
    _, meta_before = current_metadata(warehouse, table)
    table_dir = warehouse / "db.db" / table.split(".")[1]
    files_before = tree_listing(table_dir)
    log_before = skade.log()
    scan_before = skade.rows(table)

    rc, out, err = skade(*[a.format(**files) for a in args])
    assert rc == 2, f"rc={rc} stdout={out} stderr={err}"
    assert err.startswith("skade: error: ") and err.count("\n") <= 1, err
    for w in words:
        assert w in err, f"error does not name {w!r}: {err}"

    assert catalog_row(warehouse, table) == row_before
    _, meta_after = current_metadata(warehouse, table)
    assert len(meta_after["snapshots"]) == len(meta_before["snapshots"])
    assert meta_after == meta_before
    assert tree_listing(table_dir) == files_before, "files were written or removed"
    assert skade.log() == log_before
    assert skade.rows(table).equals(scan_before)
