import assert from "node:assert/strict";
import { test } from "node:test";
import { adjacency, fromGraph, lanesOf } from "../src/model/map-model.js";
import { displayGraph, groupsOf, shortLabel } from "../src/model/display.js";
import { edge, node, T0, warehouseGraph } from "./fixtures/warehouse-graph.js";

test("a /graph answer becomes nodes by key, its edges, and one lane per system with skade first", () => {
  const model = fromGraph(warehouseGraph);
  assert.equal(model.nodes.size, 7);
  assert.equal(model.nodes.get("raw.orders")?.row_count, 1000);
  assert.equal(model.nodes.get("raw.orders")?.pulse_ms, null);
  assert.equal(model.edges.length, 6);
  assert.deepEqual(
    lanesOf(model).map((l) => [l.system, l.keys]),
    [
      ["skade", ["clean.orders", "mart.daily", "raw.customers", "raw.orders", "raw.tmp"]],
      ["kafka", ["kafka:orders"]],
      ["spark", ["spark:gold.revenue"]],
    ],
  );
  assert.equal(model.columns.get("clean.orders")?.[0].inputs[0].from, "raw.orders");
});

test("adjacency lists inputs and outputs once each and leaves self-reads out", () => {
  const model = fromGraph({
    ...warehouseGraph,
    edges: [...warehouseGraph.edges, { ...warehouseGraph.edges[0], from: "mart.daily", to: "mart.daily" }],
  });
  const { up, down } = adjacency(model);
  assert.deepEqual(up.get("spark:gold.revenue"), ["clean.orders", "raw.customers"]);
  assert.deepEqual(down.get("raw.orders"), ["clean.orders", "raw.tmp"]);
  assert.equal(down.get("mart.daily"), undefined);
});

test("a lane over the threshold collapses each namespace into a group, with edges rewired and merged", () => {
  const model = fromGraph(warehouseGraph);
  const collapsed = displayGraph(model, { threshold: 3 });
  const ids = collapsed.nodes.map((n) => n.id);
  // a namespace of one node stays a node
  assert.deepEqual(ids, ["clean.orders", "mart.daily", "group:skade:raw", "kafka:orders", "spark:gold.revenue"]);
  const raw = collapsed.nodes.find((n) => n.id === "group:skade:raw");
  assert.deepEqual(raw?.members, ["raw.customers", "raw.orders", "raw.tmp"]);
  assert.equal(raw?.label, "raw (3)");
  // raw.customers and raw.orders both feed spark/clean: one display edge per group pair
  const fromRaw = collapsed.edges.filter((e) => e.from === "group:skade:raw").map((e) => e.to);
  assert.deepEqual(fromRaw.sort(), ["clean.orders", "spark:gold.revenue"]);
  // raw.orders → raw.tmp is inside the group: not drawn
  assert.ok(!collapsed.edges.some((e) => e.from === e.to));

  const expanded = displayGraph(model, { threshold: 3, expanded: new Set(["group:skade:raw"]) });
  assert.ok(expanded.nodes.some((n) => n.id === "raw.orders"));
  assert.equal(displayGraph(model).nodes.length, 7);
});

test("a lane of more namespaces than the threshold starts as one system group, which opens into namespaces", () => {
  // kafka: 4 namespaces of 3 topics each, all feeding mart.daily; threshold 3
  const topics = [0, 1, 2, 3].flatMap((ns) =>
    [0, 1, 2].map((t) => node(`kafka:ns${ns}.t${t}`, T0, [], { namespace: `kafka://ns${ns}` })),
  );
  const model = fromGraph({
    ...warehouseGraph,
    nodes: [...topics, node("mart.daily", T0, [T0])],
    edges: topics.map((t) => edge(t.key, "mart.daily", "load", T0, T0)),
  });
  const closed = displayGraph(model, { threshold: 3 });
  assert.deepEqual(
    closed.nodes.map((n) => [n.id, n.level, n.members.length]),
    [
      ["mart.daily", null, 1],
      ["group:kafka", "system", 12],
    ],
  );
  assert.equal(closed.nodes[1].label, "kafka (12 in 4 namespaces)");
  // the 12 model edges are one display edge of weight 12
  assert.deepEqual(closed.edges, [
    { id: "group:kafka\u0000mart.daily", from: "group:kafka", to: "mart.daily", weight: 12 },
  ]);

  const system = displayGraph(model, { threshold: 3, expanded: new Set(["group:kafka"]) });
  assert.deepEqual(
    system.nodes.filter((n) => n.lane === "kafka").map((n) => [n.id, n.level]),
    [0, 1, 2, 3].map((ns) => [`group:kafka:kafka://ns${ns}`, "namespace"]),
  );
  assert.deepEqual(
    system.edges.map((e) => e.weight),
    [3, 3, 3, 3],
  );

  // a dataset's groups, outermost first, open it
  const groups = groupsOf(model, "kafka:ns2.t1");
  assert.deepEqual(groups, ["group:kafka", "group:kafka:kafka://ns2"]);
  const open = displayGraph(model, { threshold: 3, expanded: new Set(groups) });
  const kafka = open.nodes.filter((n) => n.lane === "kafka").map((n) => n.id);
  assert.deepEqual(kafka, [
    "group:kafka:kafka://ns0",
    "group:kafka:kafka://ns1",
    "kafka:ns2.t0",
    "kafka:ns2.t1",
    "kafka:ns2.t2",
    "group:kafka:kafka://ns3",
  ]);
  assert.equal(
    open.edges.reduce((sum, e) => sum + e.weight, 0),
    12,
  );
  assert.deepEqual(groupsOf(model, "no:such"), []);
});

test("a path name is labelled by its last two parts", () => {
  assert.equal(shortLabel("/data/wh/shop/gold_rest"), "…/shop/gold_rest");
  assert.equal(shortLabel("shop/gold_rest"), "shop/gold_rest");
  assert.equal(shortLabel("clean.orders"), "clean.orders");
});
