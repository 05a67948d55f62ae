import assert from "node:assert/strict";
import { test } from "node:test";
import { fromGraph } from "../src/model/map-model.js";
import { downstream, path, pathBetween, upstream } from "../src/model/traverse.js";
import { focusLabel, focusView } from "../src/model/focus.js";
import { warehouseGraph } from "./fixtures/warehouse-graph.js";

const model = fromGraph(warehouseGraph);

test("impact: everything derived from a dataset, nearest first, cut at a depth", () => {
  assert.deepEqual(downstream(model, "kafka:orders"), [
    { key: "raw.orders", depth: 1 },
    { key: "clean.orders", depth: 2 },
    { key: "raw.tmp", depth: 2 },
    { key: "mart.daily", depth: 3 },
    { key: "spark:gold.revenue", depth: 3 },
  ]);
  assert.deepEqual(
    downstream(model, "kafka:orders", 2).map((r) => r.key),
    ["raw.orders", "clean.orders", "raw.tmp"],
  );
  assert.deepEqual(downstream(model, "mart.daily"), []);
});

test("provenance: everything a dataset was derived from", () => {
  assert.deepEqual(upstream(model, "spark:gold.revenue"), [
    { key: "clean.orders", depth: 1 },
    { key: "raw.customers", depth: 1 },
    { key: "raw.orders", depth: 2 },
    { key: "kafka:orders", depth: 3 },
  ]);
  assert.deepEqual(upstream(model, "spark:gold.revenue", 1).length, 2);
});

test("a cycle (a MERGE reading its own target, or a loop) ends the walk", () => {
  const looped = fromGraph({
    ...warehouseGraph,
    edges: [...warehouseGraph.edges, { ...warehouseGraph.edges[0], from: "mart.daily", to: "raw.orders" }],
  });
  const keys = downstream(looped, "raw.orders").map((r) => r.key);
  assert.equal(new Set(keys).size, keys.length);
  assert.ok(!keys.includes("raw.orders"));
});

test("the path between two nodes follows the data, in either pick order", () => {
  assert.deepEqual(path(model, "kafka:orders", "spark:gold.revenue"), [
    "kafka:orders",
    "raw.orders",
    "clean.orders",
    "spark:gold.revenue",
  ]);
  assert.deepEqual(path(model, "spark:gold.revenue", "kafka:orders"), []);
  assert.deepEqual(pathBetween(model, "spark:gold.revenue", "raw.orders"), [
    "raw.orders",
    "clean.orders",
    "spark:gold.revenue",
  ]);
  assert.deepEqual(path(model, "mart.daily", "raw.customers"), []);
});

test("focus mode keeps N hops up and down and counts what it hides", () => {
  const view = focusView(model, "clean.orders", 1, 1);
  assert.deepEqual([...view.keys].sort(), ["clean.orders", "mart.daily", "raw.orders", "spark:gold.revenue"]);
  assert.equal(focusLabel(view), "4 of 7 shown");
  assert.deepEqual(view.hidden.get("raw.orders"), { up: 1, down: 1 }); // kafka:orders, raw.tmp
  assert.deepEqual(view.hidden.get("spark:gold.revenue"), { up: 1, down: 0 }); // raw.customers
  assert.equal(view.hidden.has("clean.orders"), false);

  const deeper = focusView(model, "clean.orders", 2, 0);
  assert.deepEqual([...deeper.keys].sort(), ["clean.orders", "kafka:orders", "raw.orders"]);
  assert.equal(deeper.hidden.get("clean.orders")?.down, 2);
});
