// The graph as of a time: only the nodes and edges that existed then.
import type { Millis } from "../api/types.js";
import type { MapModel, MapNode } from "./map-model.js";

export function asOf(model: MapModel, t: Millis): MapModel {
  const nodes = new Map<string, MapNode>();
  for (const [k, n] of model.nodes) {
    if (n.first_seen_ms > t) continue;
    const dropped = n.dropped_ms !== null && n.dropped_ms <= t ? n.dropped_ms : null;
    const writes = n.write_times_ms.filter((w) => w <= t);
    nodes.set(k, {
      ...n,
      dropped_ms: dropped,
      write_times_ms: writes,
      last_write_ms:
        writes.length > 0
          ? writes[writes.length - 1]
          : n.last_write_ms !== null && n.last_write_ms <= t
            ? n.last_write_ms
            : null,
    });
  }
  const edges = model.edges.filter((e) => e.first_ms <= t && nodes.has(e.from) && nodes.has(e.to));
  const columns = new Map([...model.columns].filter(([k]) => nodes.has(k)));
  return { ...model, nodes, edges, columns };
}

/** The earliest and latest time the model knows of, for the time slider; null when empty. */
export function timeRange(model: MapModel): { min: Millis; max: Millis } | null {
  let min = Infinity;
  let max = -Infinity;
  for (const n of model.nodes.values()) {
    min = Math.min(min, n.first_seen_ms);
    max = Math.max(max, n.first_seen_ms, n.last_write_ms ?? -Infinity, n.dropped_ms ?? -Infinity);
  }
  for (const e of model.edges) max = Math.max(max, e.last_ms);
  return Number.isFinite(min) ? { min, max } : null;
}

/**
 * The moments the graph changed (a node first seen, written or dropped, an edge first drawn),
 * distinct and ascending: the stops of the time slider, so that every change can be stepped
 * to however long the history is.
 */
export function timeSteps(model: MapModel): Millis[] {
  const times = new Set<Millis>();
  for (const n of model.nodes.values()) {
    times.add(n.first_seen_ms);
    for (const w of n.write_times_ms) times.add(w);
    if (n.last_write_ms !== null) times.add(n.last_write_ms);
    if (n.dropped_ms !== null) times.add(n.dropped_ms);
  }
  for (const e of model.edges) times.add(e.first_ms);
  return [...times].sort((a, b) => a - b);
}

/** The slider stop showing time `t`: the last step at or before it (0 before the first). */
export function stepAt(steps: readonly Millis[], t: Millis): number {
  let at = 0;
  for (let i = 0; i < steps.length && steps[i] <= t; i++) at = i;
  return at;
}
