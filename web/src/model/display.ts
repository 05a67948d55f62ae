// What the map draws: nodes, or groups standing for many nodes, and the edges between them. A
// lane with more nodes than the threshold shows each namespace as one group node until the group
// is expanded; a lane with more namespaces than that too (a map of thousands of datasets) starts
// as one group for the whole system, which expands into its namespaces.
import type { ApiGraph } from "../api/types.js";
import { bySystem, lanesOf, type MapModel } from "./map-model.js";

export type GroupLevel = "system" | "namespace";

export interface DisplayNode {
  id: string;
  label: string;
  lane: string;
  /** The dataset keys it stands for: one for a node, all members for a group. */
  members: string[];
  group: boolean;
  /** What a group stands for; null for a node. */
  level: GroupLevel | null;
}

export interface DisplayEdge {
  id: string;
  from: string;
  to: string;
  /** How many model edges it stands for. */
  weight: number;
}

export interface DisplayGraph {
  nodes: DisplayNode[];
  edges: DisplayEdge[];
}

export const COLLAPSE_THRESHOLD = 60;

/**
 * Above this many datasets every system starts as one group (its small lanes too), and the map
 * opens from the server's collapsed graph while the whole graph loads (summaryGraph below).
 */
export const LARGE_MAP = 3000;

/** A node's label: its name, a path name (`/data/wh/shop/gold_rest`) cut to its last two parts. */
export function shortLabel(name: string): string {
  const parts = name.split("/").filter((p) => p !== "");
  return parts.length > 2 ? `…/${parts.slice(-2).join("/")}` : name;
}

export function groupId(system: string, namespace: string): string {
  return `group:${system}:${namespace}`;
}

export function systemGroupId(system: string): string {
  return `group:${system}`;
}

/** The groups to expand so that `key` is drawn as a node (outermost first). */
export function groupsOf(model: MapModel, key: string): string[] {
  const n = model.nodes.get(key);
  return n ? [systemGroupId(n.system), groupId(n.system, n.namespace)] : [];
}

export interface DisplayOptions {
  /** Only these keys (focus mode); all when absent. */
  visible?: ReadonlySet<string>;
  threshold?: number;
  /** Group ids the user opened. */
  expanded?: ReadonlySet<string>;
}

function systemGroup(system: string, members: string[], count: number, namespaces: number): DisplayNode {
  const label = `${system} (${count} in ${namespaces} namespaces)`;
  return { id: systemGroupId(system), label, lane: system, members, group: true, level: "system" };
}

export function displayGraph(model: MapModel, options: DisplayOptions = {}): DisplayGraph {
  const threshold = options.threshold ?? COLLAPSE_THRESHOLD;
  const large = (options.visible ? options.visible.size : model.nodes.size) > LARGE_MAP;
  const idOf = new Map<string, string>();
  const nodes: DisplayNode[] = [];
  const node = (k: string, lane: string): DisplayNode => ({
    id: k,
    label: shortLabel(model.nodes.get(k)?.name ?? k),
    lane,
    members: [k],
    group: false,
    level: null,
  });
  for (const lane of lanesOf(model)) {
    const keys = options.visible ? lane.keys.filter((k) => options.visible?.has(k)) : lane.keys;
    const sid = systemGroupId(lane.system);
    if (large && keys.length > 0 && !options.expanded?.has(sid)) {
      keys.forEach((k) => idOf.set(k, sid));
      const namespaces = new Set(keys.map((k) => model.nodes.get(k)?.namespace ?? ""));
      nodes.push(systemGroup(lane.system, keys, keys.length, namespaces.size));
      continue;
    }
    if (keys.length <= threshold) {
      for (const k of keys) {
        idOf.set(k, k);
        nodes.push(node(k, lane.system));
      }
      continue;
    }
    const byNamespace = new Map<string, string[]>();
    for (const k of keys) {
      const ns = model.nodes.get(k)?.namespace ?? "";
      const list = byNamespace.get(ns);
      if (list) list.push(k);
      else byNamespace.set(ns, [k]);
    }
    if (byNamespace.size > threshold && !options.expanded?.has(sid)) {
      keys.forEach((k) => idOf.set(k, sid));
      nodes.push(systemGroup(lane.system, keys, keys.length, byNamespace.size));
      continue;
    }
    for (const [ns, members] of byNamespace) {
      const gid = groupId(lane.system, ns);
      if (members.length > 1 && !options.expanded?.has(gid)) {
        members.forEach((k) => idOf.set(k, gid));
        const label = `${ns} (${members.length})`;
        nodes.push({ id: gid, label, lane: lane.system, members, group: true, level: "namespace" });
      } else
        for (const k of members) {
          idOf.set(k, k);
          nodes.push(node(k, lane.system));
        }
    }
  }
  const edges = new Map<string, DisplayEdge>();
  for (const e of model.edges) {
    const from = idOf.get(e.from);
    const to = idOf.get(e.to);
    if (from === undefined || to === undefined || from === to) continue;
    const id = `${from}\u0000${to}`;
    const d = edges.get(id);
    if (d) d.weight++;
    else edges.set(id, { id, from, to, weight: 1 });
  }
  return { nodes, edges: [...edges.values()] };
}

/**
 * What a large map draws from the server's collapsed graph (`/graph?collapse=system`, with the
 * groups opened so far in `expand`) before the whole graph is there: the same groups, nodes,
 * labels and edges as displayGraph of the whole graph with those groups opened, so the map is
 * not laid out again when it arrives. Its groups' members are not known yet (empty); null when
 * the map is not large (the whole graph is drawn as it is).
 */
export function summaryGraph(
  summary: Pick<ApiGraph, "groups" | "group_edges" | "nodes" | "edges">,
): DisplayGraph | null {
  const groups = summary.groups ?? [];
  if (groups.reduce((sum, g) => sum + g.members, 0) + summary.nodes.length <= LARGE_MAP) return null;
  const lanes = [...new Set([...groups.map((g) => g.system), ...summary.nodes.map((n) => n.system)])].sort(bySystem);
  const nodes: DisplayNode[] = [];
  for (const lane of lanes) {
    for (const g of groups.filter((x) => x.system === lane))
      nodes.push(
        g.level === "system"
          ? systemGroup(g.system, [], g.members, g.namespaces)
          : { id: g.id, label: `${g.namespace} (${g.members})`, lane, members: [], group: true, level: "namespace" },
      );
    for (const n of summary.nodes.filter((x) => x.system === lane))
      nodes.push({ id: n.key, label: shortLabel(n.name), lane, members: [n.key], group: false, level: null });
  }
  // the whole graph's edges between shown nodes are one per job: one drawn edge per pair
  const edges = new Map<string, DisplayEdge>();
  const add = (from: string, to: string, count: number): void => {
    const id = `${from}\u0000${to}`;
    const d = edges.get(id);
    if (d) d.weight += count;
    else edges.set(id, { id, from, to, weight: count });
  };
  for (const e of summary.edges) if (e.from !== e.to) add(e.from, e.to, 1);
  for (const e of summary.group_edges ?? []) add(e.from, e.to, e.count);
  return { nodes, edges: [...edges.values()] };
}

/**
 * The namespace groups of the collapsed graph that displayGraph would draw as nodes (in an opened
 * system of at most `threshold` datasets all of them, else those of one dataset): to open too.
 */
export function nodeLikeGroups(summary: Pick<ApiGraph, "groups" | "nodes">, threshold = COLLAPSE_THRESHOLD): string[] {
  const groups = (summary.groups ?? []).filter((g) => g.level === "namespace");
  const inSystem = new Map<string, number>();
  for (const g of groups) inSystem.set(g.system, (inSystem.get(g.system) ?? 0) + g.members);
  for (const n of summary.nodes) inSystem.set(n.system, (inSystem.get(n.system) ?? 0) + 1);
  return groups.filter((g) => g.members === 1 || (inSystem.get(g.system) ?? 0) <= threshold).map((g) => g.id);
}
