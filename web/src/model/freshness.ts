// Freshness (docs/api.md, "Freshness rule"): stale when the time since the last write exceeds
// a multiple of the median interval between its recent writes.
import type { ApiFreshness, Millis } from "../api/types.js";
import type { MapNode } from "./map-model.js";

export const STALE_FACTOR = 3;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function freshness(
  node: Pick<MapNode, "write_times_ms" | "dropped_ms">,
  now: Millis,
  factor = STALE_FACTOR,
): ApiFreshness {
  const writes = [...node.write_times_ms].sort((a, b) => a - b);
  const last = writes.length > 0 ? writes[writes.length - 1] : null;
  if (node.dropped_ms !== null || writes.length < 3)
    return { state: "unknown", last_write_ms: last, median_interval_ms: null, stale_after_ms: null };
  const intervals = writes.slice(1).map((w, i) => w - writes[i]);
  const m = median(intervals);
  const staleAfter = (last as number) + factor * m;
  return {
    state: now > staleAfter ? "stale" : "fresh",
    last_write_ms: last,
    median_interval_ms: m,
    stale_after_ms: staleAfter,
  };
}
