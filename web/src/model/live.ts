// Applying lineage events and commits to the model: the live stream, and folding a list of
// events (a file of OpenLineage events) into a graph the same way.
import type { ApiCommit, ApiDatasetRef, ApiLineageEvent, LiveEvent, Millis, NodeKind } from "../api/types.js";
import { EMPTY_MODEL, edgeId, type MapEdge, type MapModel, type MapNode } from "./map-model.js";

export const MAX_WRITE_TIMES = 32;
export const MAX_RUN_IDS = 16;

function newNode(ref: Pick<ApiDatasetRef, "key" | "system" | "name" | "namespace">, ts: Millis): MapNode {
  const kind: NodeKind = ref.system === "skade" ? "table" : "dataset";
  return {
    key: ref.key,
    system: ref.system,
    name: ref.name,
    namespace: ref.namespace,
    kind,
    first_seen_ms: ts,
    dropped_ms: null,
    latest_snapshot: null,
    last_write_ms: null,
    last_writer: "",
    write_times_ms: [],
    row_count: null,
    run_state: null,
    columns: null,
    updated_in_place_by: [],
    pulse_ms: null,
  };
}

function appendCapped<T>(list: readonly T[], value: T, cap: number): T[] {
  return [...list, value].slice(-cap);
}

/** The model after one lineage event: its datasets appear, its outputs are written, its edges counted. */
export function applyLineageEvent(model: MapModel, e: ApiLineageEvent, now: Millis | null = null): MapModel {
  const nodes = new Map(model.nodes);
  const node = (ref: ApiDatasetRef): MapNode => nodes.get(ref.key) ?? newNode(ref, e.ts_ms);
  const written = e.run_state === "COMPLETE";
  for (const ref of e.inputs) {
    const n = node(ref);
    nodes.set(ref.key, n.latest_snapshot === null && ref.snapshot_id ? { ...n, latest_snapshot: ref.snapshot_id } : n);
  }
  const runId = e.run_id ?? e.event_id;
  for (const ref of e.outputs) {
    const n = node(ref);
    // One write per run: a second COMPLETE of a run (Spark's folded command_result) moves its time.
    const sameRun = written && n.last_write_run === runId && n.write_times_ms.length > 0;
    nodes.set(ref.key, {
      ...n,
      latest_snapshot: ref.snapshot_id ?? n.latest_snapshot,
      last_write_ms: written ? e.ts_ms : n.last_write_ms,
      last_writer: written ? e.actor : n.last_writer,
      write_times_ms: !written
        ? n.write_times_ms
        : sameRun
          ? [...n.write_times_ms.slice(0, -1), e.ts_ms]
          : appendCapped(n.write_times_ms, e.ts_ms, MAX_WRITE_TIMES),
      last_write_run: written ? runId : n.last_write_run,
      row_count: ref.row_count ?? n.row_count,
      run_state: e.run_state,
      columns: ref.columns ?? n.columns,
      dropped_ms: e.operation === "drop" ? e.ts_ms : n.dropped_ms,
      pulse_ms: now ?? n.pulse_ms,
    });
  }
  const job = e.job?.name ?? e.actor;
  const edges = [...model.edges];
  const index = new Map(edges.map((x, i) => [edgeId(x), i]));
  for (const input of e.inputs)
    for (const output of e.outputs) {
      if (input.key === output.key) {
        // Read and written back by one run: an in-place update, not a loop.
        const n = nodes.get(output.key) ?? node(output);
        if (!n.updated_in_place_by.includes(job))
          nodes.set(output.key, { ...n, updated_in_place_by: [...n.updated_in_place_by, job].sort() });
        continue;
      }
      const id = edgeId({ from: input.key, to: output.key, job });
      const at = index.get(id);
      const old: MapEdge =
        at === undefined
          ? {
              from: input.key,
              to: output.key,
              job,
              actor: e.actor,
              count: 0,
              first_ms: e.ts_ms,
              last_ms: e.ts_ms,
              run_ids: [],
              run_state: null,
            }
          : edges[at];
      const updated: MapEdge = {
        ...old,
        actor: e.actor,
        count: old.count + 1,
        last_ms: Math.max(old.last_ms, e.ts_ms),
        run_ids: old.run_ids.includes(runId) ? old.run_ids : appendCapped(old.run_ids, runId, MAX_RUN_IDS),
        run_state: e.run_state,
      };
      if (at === undefined) {
        index.set(id, edges.length);
        edges.push(updated);
      } else edges[at] = updated;
    }
  const columns = new Map(model.columns);
  for (const output of e.outputs) {
    const entries = e.column_lineage.filter((c) => c.to === output.key);
    if (entries.length > 0) columns.set(output.key, entries);
  }
  return { nodes, edges, columns, last_seq: e.commit_seq ?? model.last_seq };
}

/** The model after a commit: the table pulses and takes the new snapshot; a drop greys it out. */
export function applyCommit(model: MapModel, c: ApiCommit, now: Millis): MapModel {
  const existing = model.nodes.get(c.table);
  const dot = c.table.lastIndexOf(".");
  const base =
    existing ??
    newNode(
      { key: c.table, system: "skade", name: c.table, namespace: c.table.slice(0, Math.max(dot, 0)) },
      c.committed_at_ms,
    );
  const nodes = new Map(model.nodes);
  nodes.set(c.table, {
    ...base,
    latest_snapshot: c.snapshot_id ?? base.latest_snapshot,
    dropped_ms: c.action === "drop" ? c.committed_at_ms : c.action === "create" ? null : base.dropped_ms,
    pulse_ms: now,
  });
  return { ...model, nodes, last_seq: Math.max(model.last_seq ?? 0, c.commit_seq) };
}

export function applyLiveEvent(model: MapModel, event: LiveEvent, now: Millis): MapModel {
  return event.kind === "commit" ? applyCommit(model, event.data, now) : applyLineageEvent(model, event.data, now);
}

/** A graph folded from lineage events in time order, as the server folds `/graph`. */
export function foldEvents(events: readonly ApiLineageEvent[]): MapModel {
  const ordered = [...events].sort((a, b) => a.ts_ms - b.ts_ms);
  const folded = ordered.reduce((m, e) => applyLineageEvent(m, e), EMPTY_MODEL);
  return { ...folded, nodes: new Map([...folded.nodes].sort(([a], [b]) => (a < b ? -1 : 1))) };
}
