"""`bifrost query` prints every graph value as JSON: nodes, edges and paths as objects,
maps, lists, nulls and strings as such; each line parses with json.loads and equals
what the falkordb Python client returns for the same query."""
from __future__ import annotations

import json

import pytest
from falkordb import Edge, FalkorDB, Node, Path


def as_json(v):
    """A falkordb-py value in the shape bifrost prints."""
    if isinstance(v, Node):
        return {"id": v.id, "labels": v.labels or [], "properties": as_json(v.properties)}
    if isinstance(v, Edge):
        src = v.src_node.id if isinstance(v.src_node, Node) else v.src_node
        dst = v.dest_node.id if isinstance(v.dest_node, Node) else v.dest_node
        return {"id": v.id, "type": v.relation, "src": src, "dst": dst, "properties": as_json(v.properties)}
    if isinstance(v, Path):
        return {"nodes": [as_json(n) for n in v.nodes()], "edges": [as_json(e) for e in v.edges()]}
    if isinstance(v, dict):
        return {k: as_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [as_json(x) for x in v]
    return v


@pytest.fixture
def graph(graph_server):
    db = FalkorDB(unix_socket_path=str(graph_server.socket), socket_timeout=120)
    g = db.select_graph("g")
    g.query("CREATE (a:Person {name: 'Ada \"the\" Countess', tags: ['x', 'ÿ', '☃'], born: 1815, score: 2.5}),"
            " (b:Person:Admin {name: 'Bo\\\\B', nested_nums: [1, 2.5, -3]}),"
            " (c {note: 'no label'}),"
            " (a)-[:KNOWS {since: 1833, how: ['letters', 'salons']}]->(b),"
            " (b)-[:REPORTS_TO]->(c), (a)-[:KNOWS {since: 1840}]->(c)")
    yield graph_server, g
    db.connection.close()


QUERIES = [
    "MATCH (p)-[r]->(q) RETURN p, r, q ORDER BY id(r)",
    "MATCH path = (a:Person {born: 1815})-[*1..2]->(b) RETURN path, length(path) AS hops ORDER BY hops, id(b)",
    "MATCH (n) RETURN n, labels(n) AS labels, properties(n) AS props ORDER BY id(n)",
    "MATCH (a)-[r]->(b) RETURN [a, r, b] AS triple, {from: a, via: r} AS m ORDER BY id(r)",
    "MATCH path = (a)-[*2]->(c) RETURN [path, path] AS paths, {p: path} AS wrapped",
    "RETURN {a: 1, b: [1, 'two', null, 2.5, true, false], c: {d: 'é \"q\" \\\\ ☃ \U0001F600', e: []}} AS m,"
    " null AS nothing, [] AS empty, \"it's\" AS quote, 'say \\'hi\\'' AS quoted, \"tab\\there\" AS tab,"
    " -9223372036854775807 AS big,"
    " 1e300 AS huge, 0.1 AS tenth, [[[[[[[[1]]]]]]]] AS deep",
    "RETURN point({latitude: 59.5, longitude: 18.25}) AS where",
    "MATCH (n:Nobody) RETURN n",
]


@pytest.mark.parametrize("cypher", QUERIES)
def test_query_prints_graph_values_as_the_python_client_reads_them(bifrost, graph, cypher):
    server, g = graph
    code, out, err = bifrost("query", "--graph", server.url, "--graph-name", "g", cypher)
    assert code == 0, err
    got = [json.loads(line) for line in out.splitlines()]
    result = g.ro_query(cypher)
    want = [dict(zip(result.header_names(), map(as_json, row))) for row in result.result_set] \
        if hasattr(result, "header_names") else \
        [{h[1]: as_json(v) for h, v in zip(result.header, row)} for row in result.result_set]
    assert got == want
    assert "<value of type" not in out
