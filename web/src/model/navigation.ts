// Keyboard navigation over the drawn graph: right/left follow edges down/up, up/down step
// through the lane.
import type { DisplayGraph } from "./display.js";

export type NavKey = "ArrowRight" | "ArrowLeft" | "ArrowUp" | "ArrowDown";

export function navigate(graph: DisplayGraph, current: string | null, key: NavKey): string | null {
  if (graph.nodes.length === 0) return null;
  const at = graph.nodes.find((n) => n.id === current);
  if (!at) return graph.nodes[0].id;
  if (key === "ArrowRight" || key === "ArrowLeft") {
    const next = graph.edges
      .filter((e) => (key === "ArrowRight" ? e.from : e.to) === at.id)
      .map((e) => (key === "ArrowRight" ? e.to : e.from))
      .sort();
    return next[0] ?? at.id;
  }
  const lane = graph.nodes.filter((n) => n.lane === at.lane);
  const i = lane.indexOf(at) + (key === "ArrowDown" ? 1 : -1);
  return lane[(i + lane.length) % lane.length].id;
}
