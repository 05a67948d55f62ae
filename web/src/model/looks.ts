// How each drawn node looks, from the selection (its whole lineage, or with a trace only its
// impact or provenance), the path, freshness, run state and live pulses.
import type { Millis } from "../api/types.js";
import type { DisplayGraph } from "./display.js";
import { freshness } from "./freshness.js";
import type { MapModel } from "./map-model.js";
import { downstream, pathBetween, upstream } from "./traverse.js";
import type { Trace } from "./url-state.js";

export type Look = "normal" | "selected" | "highlight" | "dim" | "stale" | "failed" | "dropped" | "pulse";

export const PULSE_MS = 4000;

export interface Looks {
  nodes: Map<string, Look>;
  /** Display edge ids on the highlighted path or lineage of the selection. */
  hotEdges: Set<string>;
}

export function looks(
  model: MapModel,
  display: DisplayGraph,
  selected: string | null,
  pathEnds: [string, string] | null,
  now: Millis,
  trace: Trace | null = null,
): Looks {
  const lit = new Set<string>();
  if (pathEnds) pathBetween(model, pathEnds[0], pathEnds[1]).forEach((k) => lit.add(k));
  else if (selected) {
    lit.add(selected);
    if (trace !== "up") downstream(model, selected).forEach((r) => lit.add(r.key));
    if (trace !== "down") upstream(model, selected).forEach((r) => lit.add(r.key));
  }
  const nodes = new Map<string, Look>();
  for (const d of display.nodes) {
    const members = d.members.map((k) => model.nodes.get(k)).filter((n) => n !== undefined);
    let look: Look = "normal";
    if (members.some((n) => n.pulse_ms !== null && now - n.pulse_ms < PULSE_MS)) look = "pulse";
    // (a group of the server's collapsed graph has no members yet: normal)
    else if (members.length > 0 && members.every((n) => n.dropped_ms !== null)) look = "dropped";
    else if (members.some((n) => n.run_state === "FAIL")) look = "failed";
    else if (members.some((n) => freshness(n, now).state === "stale")) look = "stale";
    if (selected !== null && d.members.includes(selected)) look = "selected";
    else if (lit.size > 0 && look !== "pulse") look = d.members.some((k) => lit.has(k)) ? "highlight" : "dim";
    nodes.set(d.id, look);
  }
  const hotEdges = new Set<string>();
  const litDisplay = new Set(display.nodes.filter((d) => d.members.some((k) => lit.has(k))).map((d) => d.id));
  for (const e of display.edges) if (litDisplay.has(e.from) && litDisplay.has(e.to)) hotEdges.add(e.id);
  return { nodes, hotEdges };
}
