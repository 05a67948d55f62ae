// The view model of the system map: nodes keyed by dataset key, edges, lanes per system.
import type { ApiColumnLineage, ApiEdge, ApiGraph, ApiNode, Millis } from "../api/types.js";

export interface MapNode extends ApiNode {
  /** When a live commit last touched it (the map pulses it), else null. */
  pulse_ms: Millis | null;
  /** The run of the last write this model applied (absent for a node loaded from /graph). */
  last_write_run?: string;
}

export type MapEdge = ApiEdge;

export interface Lane {
  system: string;
  /** Node keys of the lane, sorted. */
  keys: string[];
}

export interface MapModel {
  nodes: ReadonlyMap<string, MapNode>;
  edges: readonly MapEdge[];
  /** Column lineage per output dataset key. */
  columns: ReadonlyMap<string, readonly ApiColumnLineage[]>;
  /** The newest commit_seq applied, where a live subscription resumes. */
  last_seq: number | null;
}

export const EMPTY_MODEL: MapModel = { nodes: new Map(), edges: [], columns: new Map(), last_seq: null };

export function edgeId(e: Pick<ApiEdge, "from" | "to" | "job">): string {
  return `${e.from}\u0000${e.to}\u0000${e.job}`;
}

function byKey<T>(entries: [string, T][]): Map<string, T> {
  return new Map(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The view model of a `/graph` answer. */
export function fromGraph(graph: ApiGraph): MapModel {
  const nodes = byKey(graph.nodes.map((n): [string, MapNode] => [n.key, { ...n, pulse_ms: null }]));
  const columns = new Map<string, ApiColumnLineage[]>();
  for (const c of graph.column_lineage) {
    const list = columns.get(c.to);
    if (list) list.push(c);
    else columns.set(c.to, [c]);
  }
  return { nodes, edges: graph.edges, columns, last_seq: null };
}

/** The order of the lanes: skade first, then by name. */
export function bySystem(a: string, b: string): number {
  return a === "skade" ? (b === "skade" ? 0 : -1) : b === "skade" ? 1 : a.localeCompare(b);
}

/** One lane per system, skade first, then by name; each lane's keys sorted. */
export function lanesOf(model: Pick<MapModel, "nodes">): Lane[] {
  const lanes = new Map<string, string[]>();
  for (const n of model.nodes.values()) {
    const keys = lanes.get(n.system);
    if (keys) keys.push(n.key);
    else lanes.set(n.system, [n.key]);
  }
  return [...lanes.entries()]
    .sort(([a], [b]) => bySystem(a, b))
    .map(([system, keys]) => ({ system, keys: keys.sort() }));
}

export interface Adjacency {
  up: Map<string, string[]>;
  down: Map<string, string[]>;
}

// A model's edges are never changed in place (a live event makes a new list): one adjacency each.
const adjacencies = new WeakMap<readonly MapEdge[], Adjacency>();

/** Every node key's inputs and outputs (distinct, sorted), self-reads left out. */
export function adjacency(model: Pick<MapModel, "edges">): Adjacency {
  const known = adjacencies.get(model.edges);
  if (known) return known;
  const up = new Map<string, Set<string>>();
  const down = new Map<string, Set<string>>();
  const add = (m: Map<string, Set<string>>, k: string, v: string): void => {
    const s = m.get(k) ?? new Set<string>();
    s.add(v);
    m.set(k, s);
  };
  for (const e of model.edges) {
    if (e.from === e.to) continue;
    add(down, e.from, e.to);
    add(up, e.to, e.from);
  }
  const sorted = (m: Map<string, Set<string>>): Map<string, string[]> =>
    new Map([...m].map(([k, s]) => [k, [...s].sort()]));
  const built = { up: sorted(up), down: sorted(down) };
  adjacencies.set(model.edges, built);
  return built;
}
