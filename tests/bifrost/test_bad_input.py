"""Bad input gets one clear line naming the problem and a non-zero exit; nothing is
applied and the ledger does not move."""
from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

from graph_util import append, free_port, write_mapping
from tables import MAPPING, create_tables, people, populate


def people_only(**table_overrides):
    t = {**MAPPING["tables"][0], **table_overrides}
    return {"graph": "g", "tables": [t]}


def fails(bifrost, *args, rc=2):
    code, out, err = bifrost(*args)
    assert code == rc, f"rc={code}\nstdout={out}\nstderr={err}"
    lines = err.strip().splitlines()
    # data/runtime errors: one line per problem, no stack trace; usage errors: one line
    assert lines and all(l.startswith("bifrost: error: ") for l in lines), err
    if rc == 1:
        assert len(lines) == 1, err
    return err


@pytest.mark.parametrize("text, needles", [
    ("graph: g\ntables: [\n", ["m.yaml:", "not valid YAML"]),
    ("graph: g\n", ["needs 'tables:'"]),
    ("graph: g\ntables:\n  - table: db.people\n    mode: sometimes\n    pipeline:\n      - vertex: {label: P, id_column: id}\n",
     ["m.yaml:4", "mode 'sometimes'", "full, incremental, cdc"]),
    ("graph: g\ntables:\n  - table: db.people\n    pipeline:\n      - vertx: {label: P, id_column: id}\n",
     ["unknown step 'vertx'", "vertex, edge, fk_edges, custom"]),
    ("graph: g\ntables:\n  - table: db.people\n    colour: red\n    pipeline:\n      - vertex: {label: P, id_column: id}\n",
     ["unknown key 'colour'", "allowed:"]),
    ("graph: g\ntables:\n  - table: db.people\n    pipeline:\n      - vertex: {label: P}\n",
     ["needs 'id_column' or 'id_columns'"]),
    ("graph: g\ntables:\n  - table: db.people\n    pipeline:\n"
     "      - vertex: {label: P, id_column: id, properties: [name], rename: {name: id}}\n",
     ["vertex 'P': columns 'id' and 'name' both become property 'id' (a key); rename one"]),
    ("graph: g\ntables:\n  - table: db.people\n    pipeline:\n"
     "      - vertex: {label: P, id_column: id, properties: [name, score], rename: {score: name}}\n",
     ["columns 'name' and 'score' both become property 'name'; rename one"]),
])
def test_bad_mapping_files(skade, bifrost, workdir, text, needles):
    create_tables(skade, ["db.people"])
    m = workdir / "m.yaml"
    m.write_text(text)
    err = fails(bifrost, "validate", "--mapping", m)
    for n in needles:
        assert n in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_unknown_table_column_and_step_list_what_exists(skade, bifrost, workdir):
    create_tables(skade, ["db.people", "db.projects"])
    m = write_mapping(workdir / "m.yaml", {"graph": "g", "tables": [
        {"table": "db.nobody", "pipeline": [{"vertex": {"label": "X", "id_column": "id"}}]},
        {"table": "db.people", "pipeline": [
            {"vertex": {"label": "Person", "id_column": "id", "properties": ["nmae"]}},
            {"custom": {"name": "enrich"}}]},
    ]})
    err = fails(bifrost, "validate", "--mapping", m)
    assert "table 'db.nobody' not found (tables: db.people, db.projects)" in err, err
    assert "column 'nmae' is not in the table (columns: id, name," in err, err
    assert "custom step 'enrich' is not registered" in err, err


def test_unstorable_column_type_is_refused_at_compile(skade, bifrost, workdir):
    skade.ok("create", "db.odd", "--schema", "id:long!, attrs:map<string,string>, blob:binary")
    m = write_mapping(workdir / "m.yaml", {"graph": "g", "tables": [
        {"table": "db.odd", "pipeline": [{"vertex": {"label": "Odd", "id_column": "id", "properties": ["attrs", "blob"]}}]}]})
    err = fails(bifrost, "validate", "--mapping", m)
    assert "'attrs' has type map<string, string>" in err or "'attrs' has type map" in err, err
    assert "'blob' has type binary" in err, err


def test_empty_read_is_refused_and_names_the_table(skade, bifrost, workdir):
    create_tables(skade, ["db.people", "db.projects"])
    m = write_mapping(workdir / "m.yaml", people_only())
    err = fails(bifrost, "build", "--mapping", m)
    assert "table 'db.people': empty read refused" in err, err
    assert "tables: db.people, db.projects" in err, err
    # nothing was recorded: the ledger has no cursor for it
    assert json.loads(bifrost.ok("state", "show", "--mapping", m)) == {}
    # explicitly allowed: an empty table is a successful (empty) build
    ok = write_mapping(workdir / "ok.yaml", people_only(allow_empty=True))
    out = bifrost.ok("build", "--mapping", ok)
    assert "tables empty: 1" in out, out


def test_unreachable_graph_server(skade, bifrost, workdir):
    create_tables(skade)
    populate(skade, workdir, n_people=5)
    m = write_mapping(workdir / "m.yaml", MAPPING)
    err = fails(bifrost, "build", "--mapping", m, "--graph", f"redis://127.0.0.1:{free_port()}")
    assert "cannot connect to graph server redis://127.0.0.1:" in err, err
    err = fails(bifrost, "build", "--mapping", m, "--graph", "http://nowhere")
    assert "is not redis://HOST:PORT" in err, err
    # `run` retries an unreachable server, but a bad address does not heal by waiting
    err = fails(bifrost, "run", "--mapping", m, "--graph", "http://nowhere")
    assert "is not redis://HOST:PORT" in err, err


def test_nan_value_is_refused_naming_the_property(skade, bifrost, workdir):
    create_tables(skade, ["db.people"])
    data = people(random.Random(1), [1, 2], [])
    data = data.set_column(data.schema.get_field_index("score"), "score", pa.array([1.0, float("nan")]))
    append(skade, "db.people", data, workdir)
    m = write_mapping(workdir / "m.yaml", people_only())
    err = fails(bifrost, "build", "--mapping", m)
    assert "property 'score' holds NaN" in err, err
    assert json.loads(bifrost.ok("state", "show", "--mapping", m)) == {}


def test_usage_errors_exit_1(bifrost):
    assert "--mapping is required (run bifrost build --help)" in fails(bifrost, "build", rc=1)
    err = fails(bifrost, "frobnicate", rc=1)
    assert err.strip() == "bifrost: error: unknown command 'frobnicate' (run bifrost --help)", err
    err = fails(bifrost, "state", "frob", rc=1)
    assert "unknown command 'frob' (run bifrost state --help)" in err, err
    assert "a command is required" in fails(bifrost, rc=1)
    assert "--rebuild" in fails(bifrost, "run", "--rebuild", "--mapping", "m.yaml", rc=1)


@pytest.mark.parametrize("value, needle", [("0s", "must be at least 1ms"), ("nan", "is not like"), ("inf", "is not like"),
                                           ("-1s", "is not like"), ("5 s", "is not like"), ("1e400s", "is not like")])
def test_bad_durations_are_named(bifrost, workdir, value, needle):
    m = write_mapping(workdir / "m.yaml", MAPPING)
    err = fails(bifrost, "build", "--mapping", m, "--lease", value, rc=1)
    assert f"--lease: duration '{value}' {needle}" in err, err


# Every numeric option of every command: each refuses values that make no sense, as a
# usage error naming the option and what it accepts, before anything runs.
NUMERIC_OPTIONS = [
    (("run",), "--rounds", ["-1", "0", "x", "1.5", "99999999999999999999"], "is not a whole number from 1 to"),
    (("run",), "--interval", ["-1s", "0s", "0"], "duration"),
    (("run",), "--max-backoff", ["-5s", "0ms"], "duration"),
    (("run",), "--lease", ["-1m", "0m"], "duration"),
    (("build",), "--lease", ["-1s", "0s"], "duration"),
] + [((cmd,), "--timeout", ["-1s", "0s", "soon"], "duration")
     for cmd in ("build", "run", "query", "state show")]


@pytest.mark.parametrize("command, option, values, needle", NUMERIC_OPTIONS)
def test_numeric_options_refuse_values_that_make_no_sense(bifrost, workdir, command, option, values, needle):
    m = write_mapping(workdir / "m.yaml", MAPPING)
    args = [*command[0].split(), "--mapping", m]
    if command[0] == "query":
        args.append("RETURN 1")
    for v in values:
        err = fails(bifrost, *args, f"{option}={v}", rc=1)
        assert f"{option}: " in err and needle in err, err
        if needle == "duration":
            assert "500ms, 5s or 1m" in err or "at least 1ms" in err, err


def test_missing_warehouse_and_mapping_file(bifrost, workdir):
    err = fails(bifrost, "validate", "--mapping", workdir / "none.yaml")
    assert "mapping file" in err and "none.yaml" in err, err
    other = type(bifrost)(workdir / "nowhere", bifrost.binary)
    m = write_mapping(workdir / "m.yaml", MAPPING)
    err = fails(other, "validate", "--mapping", m)
    assert "no warehouse at" in err, err


def _nested(style: str, depth: int) -> str:
    """A mapping-file text whose collections nest `depth` levels (the root map is 1)."""
    if style == "flow sequences":
        return "graph: g\ntables: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"
    if style == "flow maps":
        return "graph: g\ntables:\n  - table: db.people\n    x: " + "{a: " * (depth - 3) + "1" + "}" * (depth - 3) + "\n"
    return "".join("  " * i + "a:\n" for i in range(depth))  # block maps


@pytest.mark.parametrize("style", ["flow sequences", "flow maps", "block maps"])
def test_mapping_nesting_is_limited_to_64_levels(skade, bifrost, workdir, style):
    create_tables(skade, ["db.people"])
    m = workdir / "m.yaml"
    m.write_text(_nested(style, 64))  # at the limit: parsed, then refused for what it says
    err = fails(bifrost, "validate", "--mapping", m)
    assert "nested deeper" not in err and "not valid YAML" not in err, err
    m.write_text(_nested(style, 65))
    err = fails(bifrost, "validate", "--mapping", m)
    assert "m.yaml:" in err and "nested deeper than 64 levels" in err, err
    assert len(err.strip().splitlines()) == 1, err
    m.write_text("graph: g\ntables: " + "[" * 200000)  # far past it: no stack overflow, same line
    err = fails(bifrost, "validate", "--mapping", m)
    assert "nested deeper than 64 levels" in err, err
