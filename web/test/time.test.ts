import assert from "node:assert/strict";
import { test } from "node:test";
import { fromGraph } from "../src/model/map-model.js";
import { asOf, stepAt, timeRange, timeSteps } from "../src/model/time.js";
import { HOUR, T0, warehouseGraph } from "./fixtures/warehouse-graph.js";

const model = fromGraph(warehouseGraph);

test("the graph as of a time holds only the nodes and edges that existed then", () => {
  const early = asOf(model, T0 + 1.5 * HOUR);
  assert.deepEqual([...early.nodes.keys()], ["clean.orders", "kafka:orders", "raw.customers", "raw.orders"]);
  assert.deepEqual(
    early.edges.map((e) => `${e.from}>${e.to}`),
    ["kafka:orders>raw.orders", "raw.orders>clean.orders"],
  );
  const orders = early.nodes.get("raw.orders");
  assert.deepEqual(orders?.write_times_ms, [T0, T0 + HOUR]);
  assert.equal(orders?.last_write_ms, T0 + HOUR);
});

test("a node dropped later is live before its drop and dropped after it", () => {
  assert.equal(asOf(model, T0 + 4 * HOUR).nodes.get("raw.tmp")?.dropped_ms, null);
  assert.equal(asOf(model, T0 + 5 * HOUR).nodes.get("raw.tmp")?.dropped_ms, T0 + 5 * HOUR);
  assert.equal(asOf(model, T0 - 1).nodes.size, 0);
});

test("the time range spans first sight to the newest write or drop", () => {
  assert.deepEqual(timeRange(model), { min: T0, max: T0 + 9 * HOUR });
  assert.equal(timeRange(asOf(model, T0 - 1)), null);
});

test("the slider's stops are the moments the graph changed, each once", () => {
  const steps = timeSteps(model);
  assert.deepEqual(
    steps,
    [...new Set(steps)].sort((a, b) => a - b),
  );
  assert.equal(steps[0], T0);
  assert.equal(steps.at(-1), T0 + 9 * HOUR);
  for (const e of model.edges) assert.ok(steps.includes(e.first_ms));
  assert.equal(stepAt(steps, T0 - 1), 0);
  assert.equal(stepAt(steps, T0 + 9 * HOUR + 1), steps.length - 1);
  const i = stepAt(steps, steps[3] + 1);
  assert.equal(steps[i], steps[3]);
});
