// Focus mode: one node and what lies within N hops up and down, with "N of M shown" counts.
import { adjacency, type MapModel } from "./map-model.js";
import { downstream, upstream } from "./traverse.js";

export interface FocusView {
  key: string;
  keys: Set<string>;
  shown: number;
  total: number;
  /** Per shown node with neighbours outside the view: how many inputs and outputs are hidden. */
  hidden: Map<string, { up: number; down: number }>;
}

export function focusView(model: MapModel, key: string, up: number, down: number): FocusView {
  const keys = new Set([key]);
  if (up > 0) upstream(model, key, up).forEach((r) => keys.add(r.key));
  if (down > 0) downstream(model, key, down).forEach((r) => keys.add(r.key));
  const adj = adjacency(model);
  const hidden = new Map<string, { up: number; down: number }>();
  for (const k of keys) {
    const count = (list: string[] | undefined): number => (list ?? []).filter((n) => !keys.has(n)).length;
    const h = { up: count(adj.up.get(k)), down: count(adj.down.get(k)) };
    if (h.up > 0 || h.down > 0) hidden.set(k, h);
  }
  return { key, keys, shown: keys.size, total: model.nodes.size, hidden };
}

/** "3 of 40 shown". */
export function focusLabel(view: Pick<FocusView, "shown" | "total">): string {
  return `${view.shown} of ${view.total} shown`;
}
