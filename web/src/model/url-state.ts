// The view's state in the address (after `#`), so a link opens the same view.
import type { Millis } from "../api/types.js";

export type Trace = "down" | "up";

export interface ViewState {
  selected: string | null;
  focus: string | null;
  up: number;
  down: number;
  /** The time slider: the graph as of this time; null is now. */
  time: Millis | null;
  /** The two ends of a highlighted path. */
  path: [string, string] | null;
  /** An impact (down) or provenance (up) trace of the selection: only that side is lit. */
  trace: Trace | null;
  systems: string[];
}

export const DEFAULT_STATE: ViewState = {
  selected: null,
  focus: null,
  up: 1,
  down: 1,
  time: null,
  path: null,
  trace: null,
  systems: [],
};

export function encodeState(state: ViewState): string {
  const q = new URLSearchParams();
  if (state.selected) q.set("sel", state.selected);
  if (state.focus) q.set("focus", state.focus);
  if (state.up !== DEFAULT_STATE.up) q.set("up", String(state.up));
  if (state.down !== DEFAULT_STATE.down) q.set("down", String(state.down));
  if (state.time !== null) q.set("t", new Date(state.time).toISOString());
  if (state.path) {
    q.set("from", state.path[0]);
    q.set("to", state.path[1]);
  }
  if (state.trace) q.set("trace", state.trace);
  if (state.systems.length > 0) q.set("systems", state.systems.join(","));
  return q.toString();
}

function depth(text: string | null, fallback: number): number {
  const n = text === null ? NaN : Number(text);
  return Number.isInteger(n) && n >= 0 && n <= 99 ? n : fallback;
}

/** The state a hash gives; what is missing or malformed keeps its default. */
export function decodeState(hash: string): ViewState {
  const q = new URLSearchParams(hash.startsWith("#") ? hash.slice(1) : hash);
  const t = q.get("t");
  const time = t === null ? NaN : Date.parse(t);
  const from = q.get("from");
  const to = q.get("to");
  const trace = q.get("trace");
  return {
    selected: q.get("sel") || null,
    focus: q.get("focus") || null,
    up: depth(q.get("up"), DEFAULT_STATE.up),
    down: depth(q.get("down"), DEFAULT_STATE.down),
    time: Number.isFinite(time) ? time : null,
    path: from && to ? [from, to] : null,
    trace: trace === "down" || trace === "up" ? trace : null,
    systems: (q.get("systems") ?? "").split(",").filter((s) => s !== ""),
  };
}
