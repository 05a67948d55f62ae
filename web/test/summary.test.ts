import assert from "node:assert/strict";
import { test } from "node:test";
import type { ApiEdge, ApiGraph, ApiGroup, ApiNode } from "../src/api/types.js";
import { displayGraph, LARGE_MAP, nodeLikeGroups, summaryGraph, type DisplayGraph } from "../src/model/display.js";
import { looks } from "../src/model/looks.js";
import { EMPTY_MODEL, fromGraph } from "../src/model/map-model.js";
import { edge, node, T0 } from "./fixtures/warehouse-graph.js";

/** kafka topics (20 brokers) feed skade tables (40 namespaces), two jobs each; three spark outputs. */
function largeGraph(tables: number): ApiGraph {
  const nodes: ApiNode[] = [];
  const edges: ApiEdge[] = [];
  for (let i = 0; i < tables; i++) {
    const table = `ns${i % 40}.t${i}`;
    const topic = `kafka:topic_${i}`;
    nodes.push(node(table, T0, [T0 + i]), node(topic, T0, [], { namespace: `kafka://broker-${i % 20}:9092` }));
    edges.push(edge(topic, table, "ingest", T0, T0), edge(topic, table, "backfill", T0, T0));
  }
  for (let s = 0; s < 3; s++) {
    nodes.push(node(`spark:/out/${s}`, T0, [T0]));
    edges.push(edge(`ns${s}.t${s}`, `spark:/out/${s}`, "report", T0, T0));
  }
  nodes.sort((a, b) => (a.key < b.key ? -1 : 1));
  return {
    window: { since_ms: null, until_ms: null, generated_ms: T0, commit_seq: 1 },
    systems: [],
    nodes,
    edges,
    column_lineage: [],
    focus: null,
  };
}

/**
 * What `/graph?collapse=system&expand=...` answers for `g` (docs/api.md): each node stands as its
 * system's group, its namespace's group in an expanded system, or itself in an expanded namespace.
 */
function collapsed(g: ApiGraph, expand: ReadonlySet<string> = new Set()): ApiGraph {
  const standsAs = new Map<string, string>();
  const groups = new Map<string, ApiGroup>();
  const namespaces = new Map<string, Set<string>>();
  for (const n of g.nodes) {
    const system = `group:${n.system}`;
    const ns = `${system}:${n.namespace}`;
    const id = !expand.has(system) ? system : !expand.has(ns) ? ns : n.key;
    standsAs.set(n.key, id);
    if (id === n.key) continue;
    const group = groups.get(id) ?? {
      id,
      level: id === system ? "system" : "namespace",
      system: n.system,
      namespace: id === system ? null : n.namespace,
      members: 0,
      namespaces: 0,
      last_write_ms: null,
      failed: 0,
    };
    const seen = namespaces.get(id) ?? new Set<string>();
    seen.add(n.namespace);
    namespaces.set(id, seen);
    group.members++;
    group.namespaces = seen.size;
    groups.set(id, group);
  }
  const counts = new Map<string, number>();
  const edges: ApiEdge[] = [];
  for (const e of g.edges) {
    const [a, b] = [standsAs.get(e.from), standsAs.get(e.to)];
    if (a === e.from && b === e.to) edges.push(e);
    else if (a !== b) counts.set(`${a}|${b}`, (counts.get(`${a}|${b}`) ?? 0) + 1);
  }
  return {
    ...g,
    nodes: g.nodes.filter((n) => standsAs.get(n.key) === n.key),
    edges,
    groups: [...groups.values()],
    group_edges: [...counts].map(([k, count]) => ({ from: k.split("|")[0], to: k.split("|")[1], count })),
  };
}

const drawing = (d: DisplayGraph): unknown => ({
  // in any order within a lane (the drawn shape compares ids as sets); lanes in order
  lanes: [...new Set(d.nodes.map((n) => n.lane))],
  nodes: d.nodes.map((n) => [n.id, n.label, n.lane, n.group, n.level]).sort(),
  edges: d.edges.map((e) => [e.id, e.weight]).sort(),
});

test("a large map's summary draws what the whole graph draws: every system one group, the same edges", () => {
  const g = largeGraph(1600);
  assert.ok(g.nodes.length > LARGE_MAP);
  const whole = displayGraph(fromGraph(g));
  // every system is one group, the three-node spark lane too
  assert.deepEqual(
    whole.nodes.map((n) => n.id),
    ["group:skade", "group:kafka", "group:spark"],
  );
  assert.equal(whole.nodes[0].label, "skade (1600 in 40 namespaces)");
  const summary = summaryGraph(collapsed(g));
  assert.ok(summary);
  assert.deepEqual(drawing(summary), drawing(whole));
  // two jobs per topic: the kafka -> skade edge stands for 3,200 edges
  assert.equal(whole.edges.find((e) => e.from === "group:kafka")?.weight, 3200);
  // a summary group has no members yet: it looks normal, not dropped
  assert.deepEqual([...looks(EMPTY_MODEL, summary, null, null, T0).nodes.values()], ["normal", "normal", "normal"]);
  // opened, a system shows its namespaces (or its nodes, under the threshold)
  const userOpened = new Set(["group:skade", "group:spark", "group:skade:ns3"]);
  const opened = displayGraph(fromGraph(g), { expanded: userOpened });
  assert.equal(opened.nodes.filter((n) => n.level === "namespace" && n.lane === "skade").length, 39);
  assert.deepEqual(
    opened.nodes.filter((n) => n.lane === "spark").map((n) => n.id),
    ["spark:/out/0", "spark:/out/1", "spark:/out/2"],
  );
  // the same from the server: the groups opened, then the namespace groups drawn as nodes too
  const first = collapsed(g, userOpened);
  const more = nodeLikeGroups(first);
  assert.deepEqual(more, ["group:spark:spark://host"]);
  const fetched = summaryGraph(collapsed(g, new Set([...userOpened, ...more])));
  assert.ok(fetched);
  assert.deepEqual(drawing(fetched), drawing(opened));
});

test("a map that is not large is drawn from the whole graph, as before", () => {
  const g = largeGraph(1000);
  assert.equal(summaryGraph(collapsed(g)), null);
  const whole = displayGraph(fromGraph(g));
  assert.ok(whole.nodes.some((n) => n.level === "namespace"));
  assert.ok(whole.nodes.some((n) => n.id === "spark:/out/0"));
  // and focus on a large map shows nodes, not groups
  const focus = displayGraph(fromGraph(largeGraph(1600)), { visible: new Set(["ns0.t0", "kafka:topic_0"]) });
  assert.deepEqual(focus.nodes.map((n) => n.id).sort(), ["kafka:topic_0", "ns0.t0"]);
});
