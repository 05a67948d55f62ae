// What the map draws: nodes, or namespace groups standing for many nodes, and the edges between
// them. A lane with more nodes than the threshold shows each namespace as one group node
// until the group is expanded.
import { edgeId, lanesOf, type MapModel } from "./map-model.js";

export interface DisplayNode {
  id: string;
  label: string;
  lane: string;
  /** The dataset keys it stands for: one for a node, all members for a group. */
  members: string[];
  group: boolean;
}

export interface DisplayEdge {
  id: string;
  from: string;
  to: string;
  /** The model edges it stands for. */
  edges: string[];
}

export interface DisplayGraph {
  nodes: DisplayNode[];
  edges: DisplayEdge[];
}

export const COLLAPSE_THRESHOLD = 60;

/** A node's label: its name, a path name (`/data/wh/shop/gold_rest`) cut to its last two parts. */
export function shortLabel(name: string): string {
  const parts = name.split("/").filter((p) => p !== "");
  return parts.length > 2 ? `…/${parts.slice(-2).join("/")}` : name;
}

export function groupId(system: string, namespace: string): string {
  return `group:${system}:${namespace}`;
}

export interface DisplayOptions {
  /** Only these keys (focus mode); all when absent. */
  visible?: ReadonlySet<string>;
  threshold?: number;
  /** Group ids the user opened. */
  expanded?: ReadonlySet<string>;
}

export function displayGraph(model: MapModel, options: DisplayOptions = {}): DisplayGraph {
  const threshold = options.threshold ?? COLLAPSE_THRESHOLD;
  const idOf = new Map<string, string>();
  const nodes: DisplayNode[] = [];
  for (const lane of lanesOf(model)) {
    const keys = lane.keys.filter((k) => !options.visible || options.visible.has(k));
    const byNamespace = new Map<string, string[]>();
    for (const k of keys) {
      const ns = model.nodes.get(k)?.namespace ?? "";
      byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), k]);
    }
    for (const [ns, members] of byNamespace) {
      const gid = groupId(lane.system, ns);
      if (keys.length > threshold && members.length > 1 && !options.expanded?.has(gid)) {
        members.forEach((k) => idOf.set(k, gid));
        nodes.push({ id: gid, label: `${ns} (${members.length})`, lane: lane.system, members, group: true });
      } else {
        for (const k of members) {
          idOf.set(k, k);
          nodes.push({
            id: k,
            label: shortLabel(model.nodes.get(k)?.name ?? k),
            lane: lane.system,
            members: [k],
            group: false,
          });
        }
      }
    }
  }
  const edges = new Map<string, DisplayEdge>();
  for (const e of model.edges) {
    const from = idOf.get(e.from);
    const to = idOf.get(e.to);
    if (from === undefined || to === undefined || from === to) continue;
    const id = `${from}\u0000${to}`;
    const d = edges.get(id) ?? { id, from, to, edges: [] };
    d.edges.push(edgeId(e));
    edges.set(id, d);
  }
  return { nodes, edges: [...edges.values()] };
}
