import assert from "node:assert/strict";
import { test } from "node:test";
import { fromGraph } from "../src/model/map-model.js";
import { search } from "../src/model/search.js";
import { displayGraph } from "../src/model/display.js";
import { navigate } from "../src/model/navigation.js";
import { warehouseGraph } from "./fixtures/warehouse-graph.js";

const model = fromGraph(warehouseGraph);

test("search finds names first, then jobs, then systems", () => {
  assert.deepEqual(
    search(model, "orders").map((h) => h.key),
    ["kafka:orders", "clean.orders", "raw.orders"], // "orders" is kafka:orders's whole name
  );
  const byJob = search(model, "daily-mart");
  assert.deepEqual(
    byJob.map((h) => [h.key, h.field]),
    [
      ["clean.orders", "job"],
      ["mart.daily", "job"],
    ],
  );
  assert.deepEqual(
    search(model, "SPARK").map((h) => h.key),
    ["spark:gold.revenue", "clean.orders", "raw.customers"],
  );
  assert.deepEqual(search(model, "  "), []);
});

test("arrow keys follow edges right and left and step through a lane", () => {
  const g = displayGraph(model);
  assert.equal(navigate(g, null, "ArrowRight"), "clean.orders");
  assert.equal(navigate(g, "raw.orders", "ArrowRight"), "clean.orders");
  assert.equal(navigate(g, "clean.orders", "ArrowLeft"), "raw.orders");
  assert.equal(navigate(g, "mart.daily", "ArrowRight"), "mart.daily");
  assert.equal(navigate(g, "raw.tmp", "ArrowDown"), "clean.orders");
  assert.equal(navigate(g, "clean.orders", "ArrowUp"), "raw.tmp");
});
