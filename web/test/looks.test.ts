import assert from "node:assert/strict";
import { test } from "node:test";
import { fromGraph } from "../src/model/map-model.js";
import { displayGraph } from "../src/model/display.js";
import { looks } from "../src/model/looks.js";
import { HOUR, T0, warehouseGraph } from "./fixtures/warehouse-graph.js";

const model = fromGraph(warehouseGraph);
const display = displayGraph(model);

test("with nothing selected: failed runs, stale and dropped tables stand out", () => {
  const l = looks(model, display, null, null, T0 + 10 * HOUR);
  assert.equal(l.nodes.get("spark:gold.revenue"), "failed");
  assert.equal(l.nodes.get("raw.tmp"), "dropped");
  // mart.daily wrote half-hourly until T0 + 4 h: stale after T0 + 5.5 h
  assert.equal(l.nodes.get("mart.daily"), "stale");
  assert.equal(l.nodes.get("raw.orders"), "normal");
  assert.equal(l.hotEdges.size, 0);
});

test("a selection lights its lineage and dims the rest; a path lights only the path", () => {
  const l = looks(model, display, "mart.daily", null, T0 + 10 * HOUR);
  assert.equal(l.nodes.get("mart.daily"), "selected");
  assert.equal(l.nodes.get("kafka:orders"), "highlight");
  assert.equal(l.nodes.get("raw.customers"), "dim");
  const p = looks(model, display, null, ["raw.orders", "spark:gold.revenue"], T0 + 10 * HOUR);
  assert.deepEqual(
    [...p.nodes].filter(([, look]) => look === "highlight").map(([k]) => k),
    ["clean.orders", "raw.orders", "spark:gold.revenue"],
  );
  assert.equal(p.hotEdges.size, 2);
});

test("an impact trace lights only what lies downstream, a provenance trace only upstream", () => {
  const down = looks(model, display, "raw.orders", null, T0 + 10 * HOUR, "down");
  const lit = (l: typeof down): string[] => [...l.nodes].filter(([, look]) => look === "highlight").map(([k]) => k);
  assert.ok(lit(down).includes("clean.orders"));
  assert.ok(!lit(down).includes("kafka:orders"));
  const up = looks(model, display, "raw.orders", null, T0 + 10 * HOUR, "up");
  assert.deepEqual(lit(up), ["kafka:orders"]);
});
