// Freshness (docs/api.md, "Freshness rule"): stale when the time since the last write exceeds a
// multiple of its usual cadence, the median gap between its recent writes. Writes within a
// minute of each other are one burst (a pipeline run, a backfill), not a cadence; with fewer
// than three gaps between bursts the cadence is not known and the node is never stale.
import type { ApiFreshness, Millis } from "../api/types.js";
import type { MapNode } from "./map-model.js";

export const STALE_FACTOR = 3;
/** Gaps up to this long are inside a burst of writes. */
export const BURST_MS = 60_000;
/** How many gaps between bursts a cadence needs. */
export const MIN_GAPS = 3;

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
  const gaps = writes
    .slice(1)
    .map((w, i) => w - writes[i])
    .filter((g) => g > BURST_MS);
  if (node.dropped_ms !== null || last === null || gaps.length < MIN_GAPS)
    return { state: "unknown", last_write_ms: last, median_interval_ms: null, stale_after_ms: null };
  const m = median(gaps);
  const staleAfter = last + factor * m;
  return {
    state: now > staleAfter ? "stale" : "fresh",
    last_write_ms: last,
    median_interval_ms: m,
    stale_after_ms: staleAfter,
  };
}
