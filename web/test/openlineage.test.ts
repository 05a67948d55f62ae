import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { columnConsumers, columnsOf } from "../src/model/columns.js";
import { foldEvents } from "../src/model/live.js";
import { parseRunEvents, runEventToLineage, runEventsToLineage, systemKindOf } from "../src/model/openlineage.js";
import type { ApiLineageEvent } from "../src/api/types.js";

// Real events of Spark 3.5 + openlineage-spark 1.53 against a skade warehouse through its REST catalog.
const text = readFileSync(new URL("./fixtures/spark-ol-rest.jsonl", import.meta.url), "utf8");
const options = { warehouseCatalogs: ["http://localhost:8181"] };
const model = foldEvents(runEventsToLineage(parseRunEvents(text), options));

test("Spark's datasets are named by their REST catalog symlink as tables of the warehouse", () => {
  assert.deepEqual(
    [...model.nodes.keys()],
    ["shop.cow", "shop.customers", "shop.events", "shop.gold_rest", "shop.orders", "shop.orders_by_day"],
  );
  const gold = model.nodes.get("shop.gold_rest");
  assert.equal(gold?.system, "skade");
  assert.equal(gold?.namespace, "shop");
  assert.equal(gold?.row_count, 9);
  assert.deepEqual(
    gold?.columns?.map((c) => `${c.name}:${c.type}`),
    ["id:long", "name:string", "total:decimal(20,2)"],
  );
  assert.equal(model.nodes.get("shop.orders")?.latest_snapshot, "3975078493651090052");
});

test("edges come from inputs × outputs, once each; the MERGE target reading itself is an in-place update", () => {
  const pairs = model.edges.map((e) => `${e.from}>${e.to}`);
  assert.deepEqual([...pairs].sort(), [
    "shop.customers>shop.gold_rest",
    "shop.events>shop.cow",
    "shop.orders>shop.gold_rest",
    "shop.orders>shop.orders_by_day",
  ]);
  assert.ok(!model.edges.some((e) => e.job.endsWith("command_result")), "command_result folded into its run");
  assert.deepEqual(model.nodes.get("shop.cow")?.updated_in_place_by, ["skade_ol_rest.replace_data.skade_shop_cow"]);
  const ctas = model.edges.find(
    (e) => e.from === "shop.orders" && e.to === "shop.gold_rest" && e.job.includes("atomic_create"),
  );
  assert.equal(ctas?.run_state, "COMPLETE");
  assert.equal(ctas?.run_ids.length, 1);
});

test("column lineage per node from the columnLineage facet, transformation types kept", () => {
  const rows = columnsOf(model, "shop.gold_rest");
  assert.deepEqual(
    rows.map((r) => r.column),
    ["id", "name", "total", "*"],
  );
  const total = rows.find((r) => r.column === "total");
  assert.equal(total?.type, "decimal(20,2)");
  assert.deepEqual(total?.inputs, [
    { from: "shop.orders", column: "amount", type: "DIRECT", subtype: "AGGREGATION", masking: false },
  ]);
  const id = rows.find((r) => r.column === "id");
  assert.deepEqual(
    id?.inputs.map((i) => `${i.from}.${i.column} ${i.type}/${i.subtype}`),
    ["shop.customers.id DIRECT/IDENTITY"],
  );
  const wide = rows.find((r) => r.column === "*");
  assert.ok(wide?.inputs.every((i) => i.type === "INDIRECT" && i.subtype === "GROUP_BY"));
  // orders_by_day copies amount and filters on it (dataset-wide); gold_rest aggregates it
  assert.deepEqual(columnConsumers(model, "shop.orders", "amount"), [
    { key: "shop.orders_by_day", column: "*" },
    { key: "shop.orders_by_day", column: "amount" },
    { key: "shop.gold_rest", column: "total" },
  ]);
  const cow = columnsOf(model, "shop.cow").find((r) => r.column === "*");
  assert.deepEqual(
    cow?.inputs.map((i) => `${i.from}.${i.column} ${i.subtype}`),
    ["shop.events.id JOIN", "shop.events.id FILTER", "shop.cow.id JOIN", "shop.cow._file FILTER"],
  );
});

test("START and RUNNING events are not writes; only a completed run counts", () => {
  const byDay = model.nodes.get("shop.orders_by_day");
  // one COMPLETE of the append job; its command_result, folded into the same run, is no second write
  assert.equal(byDay?.write_times_ms.length, 1);
  assert.equal(byDay?.last_write_ms, Date.parse("2026-12-01T10:30:17.029Z"));
});

test("without the catalog named, the same datasets are `file:` datasets by location", () => {
  const plain = parseRunEvents(text)
    .map((e) => runEventToLineage(e, { warehouseCatalogs: [] }))
    .filter((e): e is ApiLineageEvent => e !== null);
  const keys = [...foldEvents(plain).nodes.keys()];
  assert.ok(keys.includes("file:/data/wh/shop.db/orders"));
  assert.ok(keys.every((k) => k.startsWith("file:")));
  assert.equal(systemKindOf("postgres://db:5432"), "postgres");
  assert.equal(systemKindOf("arn:aws:glue:eu-north-1:123"), "glue");
});

test("a line that is not a RunEvent is an error naming its line", () => {
  assert.throws(
    () => parseRunEvents('{"eventTime":"x","run":{},"job":{}}\n\n{"nope":1}'),
    /line 3: not an OpenLineage RunEvent/,
  );
  assert.throws(() => parseRunEvents("{"), /line 1: not JSON/);
});
