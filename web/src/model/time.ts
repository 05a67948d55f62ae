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
