import assert from "node:assert/strict";
import { test } from "node:test";
import { fromGraph } from "../src/model/map-model.js";
import { applyLiveEvent } from "../src/model/live.js";
import { parseLiveEvent } from "../src/api/events.js";
import type { ApiCommit, ApiLineageEvent } from "../src/api/types.js";
import { HOUR, T0, warehouseGraph } from "./fixtures/warehouse-graph.js";

const model = fromGraph(warehouseGraph);
const NOW = T0 + 10 * HOUR;

function commit(extra: Partial<ApiCommit>): ApiCommit {
  return {
    commit_seq: 50,
    table: "clean.orders",
    action: "commit",
    snapshot_id: "777",
    operation: "append",
    engine: "skade",
    committed_at_ms: NOW,
    actor: "nightly-clean",
    ...extra,
  };
}

function lineage(extra: Partial<ApiLineageEvent>): ApiLineageEvent {
  return {
    event_id: "e-1",
    actor: "nightly-clean",
    operation: "append",
    ts_ms: NOW,
    commit_seq: 50,
    run_id: null,
    job: null,
    run_state: "COMPLETE",
    inputs: [{ key: "raw.orders", system: "skade", name: "raw.orders", namespace: "raw", snapshot_id: "12" }],
    outputs: [
      {
        key: "clean.orders",
        system: "skade",
        name: "clean.orders",
        namespace: "clean",
        snapshot_id: "777",
        row_count: 950,
        columns: null,
      },
    ],
    column_lineage: [],
    ...extra,
  };
}

test("a commit pulses its node and moves it to the new snapshot", () => {
  const next = applyLiveEvent(model, { kind: "commit", seq: 50, data: commit({}) }, NOW);
  const n = next.nodes.get("clean.orders");
  assert.equal(n?.pulse_ms, NOW);
  assert.equal(n?.latest_snapshot, "777");
  assert.equal(next.last_seq, 50);
  assert.equal(model.nodes.get("clean.orders")?.pulse_ms, null, "the old model is left as it was");
});

test("a drop greys the node out and keeps it; a new table appears on create", () => {
  const dropped = applyLiveEvent(
    model,
    { kind: "commit", seq: 51, data: commit({ action: "drop", snapshot_id: null, committed_at_ms: NOW }) },
    NOW,
  );
  assert.equal(dropped.nodes.get("clean.orders")?.dropped_ms, NOW);
  assert.equal(dropped.nodes.get("clean.orders")?.latest_snapshot, model.nodes.get("clean.orders")?.latest_snapshot);
  const created = applyLiveEvent(
    model,
    { kind: "commit", seq: 52, data: commit({ table: "mart.weekly", action: "create" }) },
    NOW,
  );
  assert.equal(created.nodes.get("mart.weekly")?.namespace, "mart");
  assert.equal(created.nodes.size, model.nodes.size + 1);
});

test("a lineage event on a known edge counts it and records the write", () => {
  const next = applyLiveEvent(model, { kind: "lineage", seq: 50, data: lineage({}) }, NOW);
  assert.equal(next.edges.length, model.edges.length);
  const e = next.edges.find((x) => x.from === "raw.orders" && x.to === "clean.orders");
  assert.equal(e?.count, 3);
  assert.equal(e?.last_ms, NOW);
  assert.deepEqual(e?.run_ids, ["nightly-clean-run", "e-1"]);
  const n = next.nodes.get("clean.orders");
  assert.equal(n?.row_count, 950);
  assert.equal(n?.last_write_ms, NOW);
  assert.equal(n?.write_times_ms.at(-1), NOW);
  assert.equal(n?.pulse_ms, NOW);
});

test("a lineage event naming a new dataset adds it and its edge; a failed run marks without writing", () => {
  const failed = lineage({
    event_id: "e-2",
    actor: "spark.export",
    run_id: "run-9",
    job: { namespace: "spark", name: "spark.export" },
    run_state: "FAIL",
    inputs: [{ key: "mart.daily", system: "skade", name: "mart.daily", namespace: "mart", snapshot_id: null }],
    outputs: [
      { key: "s3:exports/daily", system: "s3", name: "exports/daily", namespace: "s3://bucket", snapshot_id: null },
    ],
  });
  const next = applyLiveEvent(model, { kind: "lineage", seq: 53, data: failed }, NOW);
  const n = next.nodes.get("s3:exports/daily");
  assert.equal(n?.kind, "dataset");
  assert.equal(n?.run_state, "FAIL");
  assert.equal(n?.last_write_ms, null);
  assert.deepEqual(n?.write_times_ms, []);
  const e = next.edges.find((x) => x.to === "s3:exports/daily");
  assert.deepEqual([e?.from, e?.job, e?.run_state, e?.run_ids], ["mart.daily", "spark.export", "FAIL", ["run-9"]]);
});

test("SSE messages parse into live events by kind and id", () => {
  const ev = parseLiveEvent("commit", "50", JSON.stringify(commit({})));
  assert.equal(ev?.kind, "commit");
  assert.equal(ev?.seq, 50);
  assert.equal(parseLiveEvent("commit", "", "{}"), null);
  assert.equal(parseLiveEvent("other", "3", "{}"), null);
});
