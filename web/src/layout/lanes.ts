// Lanes from a layered layout: ELK places layers left to right; each system's nodes are moved
// together into a horizontal band of their own, keeping ELK's x and their vertical order.
import type { DisplayGraph } from "../model/display.js";
import { NODE_HEIGHT, type LaneBand, type Layout, type Point } from "./protocol.js";

export const LANE_GAP = 48;

export function bandLanes(graph: DisplayGraph, placed: Record<string, Point>): Layout {
  const order: string[] = [];
  for (const n of graph.nodes) if (!order.includes(n.lane)) order.push(n.lane);
  const positions: Record<string, Point> = {};
  const lanes: LaneBand[] = [];
  let top = 0;
  for (const system of order) {
    const members = graph.nodes.filter((n) => n.lane === system && placed[n.id]);
    if (members.length === 0) continue;
    const ys = members.map((n) => placed[n.id].y);
    const minY = Math.min(...ys);
    const height = Math.max(...ys) - minY + NODE_HEIGHT;
    for (const n of members) positions[n.id] = { x: placed[n.id].x, y: top + LANE_GAP / 2 + placed[n.id].y - minY };
    lanes.push({ system, top, bottom: top + height + LANE_GAP });
    top += height + LANE_GAP;
  }
  return { positions, lanes };
}
