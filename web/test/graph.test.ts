import assert from "node:assert/strict";
import { test } from "node:test";
import { adjacency, fromGraph, lanesOf } from "../src/model/map-model.js";
import { displayGraph, shortLabel } from "../src/model/display.js";
import { warehouseGraph } from "./fixtures/warehouse-graph.js";

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

test("a path name is labelled by its last two parts", () => {
  assert.equal(shortLabel("/data/wh/shop/gold_rest"), "…/shop/gold_rest");
  assert.equal(shortLabel("shop/gold_rest"), "shop/gold_rest");
  assert.equal(shortLabel("clean.orders"), "clean.orders");
});
