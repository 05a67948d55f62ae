// Opening a group in place: ELK lays out only the group's members, and that block takes the
// group's place in the drawn layout. Everything right of the group moves right, and everything
// below it in its lane and in the lanes under it moves down, by what the block needs beyond the
// group's own node, so nothing overlaps and the rest of the map keeps its shape. Laying out only
// the new block keeps an expand quick however big the rest of the map is.
import type { DisplayGraph } from "../model/display.js";
import type { Layout, Point } from "./protocol.js";

/** The layout change a drawn display graph -> the next one is: one group opened in place, or none. */
export interface Opened {
  group: string;
  /** The display graph of the group's members and the edges between them. */
  members: DisplayGraph;
}

/** Whether `next` is `drawn` with one group replaced by nodes of its lane, and which. */
export function openedGroup(drawn: DisplayGraph, next: DisplayGraph): Opened | null {
  const nextIds = new Set(next.nodes.map((n) => n.id));
  const gone = drawn.nodes.filter((n) => !nextIds.has(n.id));
  if (gone.length !== 1 || !gone[0].group) return null;
  const group = gone[0];
  const drawnIds = new Set(drawn.nodes.map((n) => n.id));
  const added = next.nodes.filter((n) => !drawnIds.has(n.id));
  const inGroup = new Set(group.members);
  if (added.length === 0 || added.some((n) => n.lane !== group.lane || !n.members.every((k) => inGroup.has(k))))
    return null;
  const ids = new Set(added.map((n) => n.id));
  const edges = next.edges.filter((e) => ids.has(e.from) && ids.has(e.to));
  return { group: group.id, members: { nodes: added, edges } };
}

/** `base` with `group` replaced by `block` (member positions from ELK, any origin). */
export function spliceLayout(base: Layout, group: string, lane: string, block: Record<string, Point>): Layout {
  const at = base.positions[group];
  const laneIndex = base.lanes.findIndex((l) => l.system === lane);
  const points = Object.values(block);
  if (!at || laneIndex < 0 || points.length === 0) return base;
  const minX = Math.min(...points.map((p) => p.x));
  const minY = Math.min(...points.map((p) => p.y));
  const dx = Math.max(...points.map((p) => p.x)) - minX;
  const dy = Math.max(...points.map((p) => p.y)) - minY;
  const lanes = base.lanes.map((l, i) => {
    if (i < laneIndex) return l;
    if (i === laneIndex) return { ...l, bottom: l.bottom + dy };
    return { ...l, top: l.top + dy, bottom: l.bottom + dy };
  });
  const positions: Record<string, Point> = {};
  for (const [id, p] of Object.entries(base.positions)) {
    if (id === group) continue;
    const inLane = p.y >= base.lanes[laneIndex].top && p.y < base.lanes[laneIndex].bottom;
    const below = inLane ? p.y > at.y : p.y >= base.lanes[laneIndex].bottom;
    positions[id] = { x: p.x > at.x ? p.x + dx : p.x, y: below ? p.y + dy : p.y };
  }
  for (const [id, p] of Object.entries(block)) positions[id] = { x: at.x + p.x - minX, y: at.y + p.y - minY };
  return { positions, lanes };
}
