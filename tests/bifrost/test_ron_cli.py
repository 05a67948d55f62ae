"""RON at the command line: bad RON is one line naming file:line:column and exit 2,
`convert` goes both ways, `infer --format ron` gives a mapping that validates, and a
mapping in the seed system's dialect builds the same graph as its YAML twin."""
from __future__ import annotations

import random

import pyarrow.compute as pc

from graph_util import actual_graph, append, assert_same_graph, expected_graph, write_mapping
from tables import MAPPING, create_tables, people, read_tables


def test_bad_ron_is_one_line_with_line_and_column(bifrost, workdir):
    cases = {
        '(graph: "g",\n tables: [\n  (table: "db.people" mode: Full)])': "bad.ron:3:23: expected ',' or ')' after field 'table', found 'mode'",
        '(graph: "g", tables: [(table: "db.people", table: "x")])': "bad.ron:1:44: field 'table' is given twice",
        '(graph: "g", tables: [(table: db.people)])': "bad.ron:1:33: expected ',' or ')' after field 'table', found '.'",
        '(graph: "g", tables: [(table: "db.people", mode: Sometimes, pipeline: [Node(label: "P")])])':
            "bad.ron:1: mode 'sometimes' of table 'db.people' is not one of full, incremental, cdc",
    }
    for text, why in cases.items():
        f = workdir / "bad.ron"
        f.write_text(text)
        for cmd in (("validate", "--mapping", f), ("convert", f, "--to", "yaml")):
            rc, out, err = bifrost(*cmd)
            assert rc == 2 and err.startswith("bifrost: error: ") and why in err, (cmd, text, err)
            assert len(err.strip().splitlines()) == 1, err
    rc, out, err = bifrost("validate", "--mapping", f)
    assert "unknown step 'node'" in err, err  # every problem, in the one line
    rc, out, err = bifrost("convert", workdir / "missing.ron", "--to", "ron")
    assert rc == 2 and "mapping file" in err and "cannot be read" in err, err
    rc, out, err = bifrost("convert", f, "--to", "toml")
    assert rc == 2 and "--to must be yaml or ron, not 'toml'" in err, err


def test_seed_dialect_builds_the_same_graph_as_yaml(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    append(skade, "db.people", people(random.Random(41), list(range(1, 31)), [1, 2, 3]), workdir)
    seed = workdir / "seed.ron"
    seed.write_text('''#![enable(implicit_some)]
// as the seed system wrote it: enum variants, Option wrappers, a structured filter
MappingSpec(
    graph: "g",
    tables: [
        TableMapping(
            table: "db.people",
            mode: Cdc,
            filter: Some((column: "id", le: 20)),
            columns: None,
            pipeline: [
                Vertex(label: "Person", id_column: "id", properties: ["name", "level"], rename: {"name": "full_name"}),
                FkEdges(type: "MANAGED_BY", src: Endpoint(label: "Person", column: "id"),
                        dst: Endpoint(label: "Person", column: "manager_id")),
            ],
        ),
    ],
)
''')
    out = bifrost.ok("build", "--mapping", seed)
    assert "rows read: 20," in out, out
    twin = {"graph": "g", "tables": [{"table": "db.people", "mode": "cdc", "filter": '"id" <= 20', "pipeline": [
        {"vertex": {"label": "Person", "id_column": "id", "properties": ["name", "level"],
                    "rename": {"name": "full_name"}}},
        {"fk_edges": {"type": "MANAGED_BY", "src": {"column": "id", "label": "Person"},
                      "dst": {"column": "manager_id", "label": "Person"}}}]}]}
    table = read_tables(skade, ["db.people"])["db.people"]
    kept = table.filter(pc.less_equal(table["id"], 20))
    assert_same_graph(expected_graph(twin, {"db.people": kept}), actual_graph(bifrost, twin, "--mapping", seed))
    # the YAML it converts to is the twin's
    yaml_twin = write_mapping(workdir / "twin.yaml", twin)
    assert bifrost.ok("convert", seed, "--to", "yaml") == bifrost.ok("convert", yaml_twin, "--to", "yaml")


def test_infer_as_ron_validates_and_converts(skade, bifrost, workdir):
    skade.ok("create", "db.orders", "--schema", "id:long!, customer_id:long, total:double, meta:struct<a:int>",
             "--identifier", "id")
    ron = bifrost.ok("infer", "db.orders", "--format", "ron")
    assert "// unmapped: meta (struct<" in ron and "Vertex(label: \"Order\"" in ron, ron
    f = workdir / "inferred.ron"
    f.write_text(ron)
    assert "mapping ok" in bifrost.ok("validate", "--mapping", f)
    yaml = bifrost.ok("infer", "db.orders")
    (workdir / "inferred.yaml").write_text(yaml)
    assert bifrost.ok("convert", f, "--to", "yaml") == bifrost.ok("convert", workdir / "inferred.yaml", "--to", "yaml")
    rc, out, err = bifrost("infer", "db.orders", "--format", "xml")
    assert rc == 2 and "--format must be yaml or ron, not 'xml'" in err, err


def test_the_oracle_mapping_round_trips_through_convert(bifrost, workdir):
    f = write_mapping(workdir / "m.yaml", MAPPING)  # write_mapping checks YAML -> RON -> YAML
    ron = workdir / "m.ron"
    ron.write_text(bifrost.ok("convert", f, "--to", "ron"))
    again = workdir / "again.ron"
    (workdir / "back.yaml").write_text(bifrost.ok("convert", ron, "--to", "yaml"))
    again.write_text(bifrost.ok("convert", workdir / "back.yaml", "--to", "ron"))
    assert again.read_text() == ron.read_text()
