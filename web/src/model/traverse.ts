// Impact (downstream), provenance (upstream) and paths over the lineage edges.
import { adjacency, type MapModel } from "./map-model.js";

export interface Reached {
  key: string;
  depth: number;
}

function walk(start: string, next: Map<string, string[]>, maxDepth: number): Reached[] {
  const out: Reached[] = [];
  const seen = new Set([start]);
  let frontier = [start];
  for (let depth = 1; frontier.length > 0 && (maxDepth === 0 || depth <= maxDepth); depth++) {
    const following: string[] = [];
    for (const key of frontier)
      for (const k of next.get(key) ?? []) {
        if (seen.has(k)) continue;
        seen.add(k);
        out.push({ key: k, depth });
        following.push(k);
      }
    frontier = following;
  }
  return out;
}

/** Datasets derived (transitively) from `key`, nearest first; `maxDepth` 0 is unlimited. */
export function downstream(model: Pick<MapModel, "edges">, key: string, maxDepth = 0): Reached[] {
  return walk(key, adjacency(model).down, maxDepth);
}

/** Datasets `key` was derived from, nearest first. */
export function upstream(model: Pick<MapModel, "edges">, key: string, maxDepth = 0): Reached[] {
  return walk(key, adjacency(model).up, maxDepth);
}

/** A shortest chain of keys from `from` to `to` along the edges; empty when there is none. */
export function path(model: Pick<MapModel, "edges">, from: string, to: string): string[] {
  if (from === to) return [from];
  const { down } = adjacency(model);
  const previous = new Map<string, string>();
  let frontier = [from];
  const seen = new Set([from]);
  while (frontier.length > 0 && !seen.has(to)) {
    const following: string[] = [];
    for (const key of frontier)
      for (const k of down.get(key) ?? []) {
        if (seen.has(k)) continue;
        seen.add(k);
        previous.set(k, key);
        following.push(k);
      }
    frontier = following;
  }
  if (!seen.has(to)) return [];
  const chain = [to];
  while (chain[0] !== from) chain.unshift(previous.get(chain[0]) as string);
  return chain;
}

/** The path between two picked nodes in whichever direction the data flows. */
export function pathBetween(model: Pick<MapModel, "edges">, a: string, b: string): string[] {
  const forward = path(model, a, b);
  return forward.length > 0 ? forward : path(model, b, a);
}
