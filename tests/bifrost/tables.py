"""The test warehouse: people (self-referencing manager, typed properties), projects
(composite key), assignments (junction onto the composite key), transfers (parallel
edges told apart by an edge key). Random but seeded; nulls included."""
from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa

from graph_util import append

UTC = dt.timezone.utc

SCHEMAS = {
    "db.people": ("id:long!, name:string, score:double, active:boolean, joined:timestamptz, born:date, "
                  "tags:list<string>, level:int, manager_id:long", "id"),
    "db.projects": ("org:string!, code:int!, title:string, budget:double", "org,code"),
    "db.assignments": ("person_id:long!, org:string!, code:int!, role:string, hours:double", "person_id,org,code"),
    "db.transfers": ("id:long!, src:long, dst:long, amount:double, memo:string", "id"),
}

MAPPING = {
    "graph": "g",
    "tables": [
        {"table": "db.people", "mode": "full", "pipeline": [
            {"vertex": {"label": "Person", "id_column": "id",
                        "properties": ["name", "score", "active", "joined", "born", "tags", "level"],
                        "rename": {"name": "full_name"}}},
            {"fk_edges": {"type": "MANAGED_BY", "src": {"column": "id", "label": "Person"},
                          "dst": {"column": "manager_id", "label": "Person"}}},
        ]},
        {"table": "db.projects", "mode": "full", "pipeline": [
            {"vertex": {"label": "Project", "id_columns": ["org", "code"], "properties": ["title", "budget"]}},
        ]},
        {"table": "db.assignments", "mode": "full", "pipeline": [
            {"edge": {"type": "ASSIGNED", "src": {"column": "person_id", "label": "Person"},
                      "dst": {"columns": ["org", "code"], "label": "Project"}, "properties": ["role", "hours"]}},
        ]},
        {"table": "db.transfers", "mode": "full", "pipeline": [
            {"edge": {"type": "TRANSFER", "src": {"column": "src", "label": "Person"},
                      "dst": {"column": "dst", "label": "Person"}, "key_column": "id",
                      "properties": ["amount", "memo"]}},
        ]},
    ],
}


def create_tables(skade, names=None):
    for name, (schema, ident) in SCHEMAS.items():
        if names is None or name in names:
            skade.ok("create", name, "--schema", schema, "--identifier", ident)


def people(rng: random.Random, ids, managers):
    rows = []
    for i in ids:
        rows.append({
            "id": i,
            "name": rng.choice(["Ada", "Bo \"B\"", "Cé\\l", "Dag\nny", None]),
            "score": rng.choice([None, 0.1, -2.5e-8, 1e300, rng.random() * 100]),
            "active": rng.choice([True, False, None]),
            "joined": rng.choice([None, dt.datetime(2024, 1, 2, 3, 4, 5, rng.randrange(1000000), tzinfo=UTC)]),
            "born": rng.choice([None, dt.date(1990, 1, 1) + dt.timedelta(days=rng.randrange(10000))]),
            "tags": rng.choice([None, [], ["a"], ["x", "y"]]),
            "level": rng.choice([None, rng.randrange(-5, 5)]),
            # self-reference; None is a root (no edge)
            "manager_id": rng.choice([None] + list(managers)) if managers else None,
        })
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("id", pa.int64()), ("name", pa.string()), ("score", pa.float64()), ("active", pa.bool_()),
        ("joined", pa.timestamp("us", tz="UTC")), ("born", pa.date32()), ("tags", pa.list_(pa.string())),
        ("level", pa.int32()), ("manager_id", pa.int64())]))


def projects(rng, keys):
    return pa.Table.from_pylist([
        {"org": org, "code": code, "title": rng.choice(["P", "Q", None]), "budget": rng.choice([None, 10.5, 2e6])}
        for org, code in keys],
        schema=pa.schema([("org", pa.string()), ("code", pa.int32()), ("title", pa.string()), ("budget", pa.float64())]))


def assignments(rng, pairs):
    return pa.Table.from_pylist([
        {"person_id": p, "org": org, "code": code, "role": rng.choice(["dev", "lead", None]), "hours": rng.random()}
        for p, (org, code) in pairs],
        schema=pa.schema([("person_id", pa.int64()), ("org", pa.string()), ("code", pa.int32()),
                          ("role", pa.string()), ("hours", pa.float64())]))


def transfers(rng, start, n, people_ids):
    rows = []
    for i in range(start, start + n):
        rows.append({"id": i, "src": rng.choice(people_ids + [None]), "dst": rng.choice(people_ids),
                     "amount": rng.random() * 1000, "memo": rng.choice(["rent", None])})
    return pa.Table.from_pylist(rows, schema=pa.schema([("id", pa.int64()), ("src", pa.int64()), ("dst", pa.int64()),
                                                        ("amount", pa.float64()), ("memo", pa.string())]))


def populate(skade, tmpdir, seed=7, n_people=60):
    rng = random.Random(seed)
    ids = list(range(1, n_people + 1))
    append(skade, "db.people", people(rng, ids, ids[: n_people // 3]), tmpdir)
    keys = [(org, code) for org in ("acme", "umbrella") for code in range(1, 6)]
    append(skade, "db.projects", projects(rng, keys), tmpdir)
    # some assignments point at people and projects that no table holds: placeholders
    pairs = {(rng.choice(ids + [999]), rng.choice(keys + [("ghost", 9)])) for _ in range(80)}
    append(skade, "db.assignments", assignments(rng, sorted(pairs)), tmpdir)
    # few people, many transfers: parallel edges between the same pair
    append(skade, "db.transfers", transfers(rng, 1, 120, ids[:6]), tmpdir)
    return rng


def read_tables(skade, names):
    return {n: skade.rows(n) for n in names}
