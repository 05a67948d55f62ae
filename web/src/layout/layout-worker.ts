// The layout Web Worker: ELK's layered algorithm off the main thread, then lanes per system (or
// an opened group's members put in its place).
import ELK from "elkjs/lib/elk.bundled.js";
import type { DisplayNode } from "../model/display.js";
import { elkGraph } from "./elk-graph.js";
import { bandLanes } from "./lanes.js";
import { spliceLayout } from "./splice.js";
import type { LayoutRequest, LayoutResponse, Point } from "./protocol.js";

interface WorkerScope {
  onmessage: ((event: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutResponse): void;
}

const scope = self as unknown as WorkerScope;
const elk = new ELK();

// ELK's first layout pays for compiling its code: a two-node one while the map fetches its graph
const node = (id: string): DisplayNode => ({ id, label: id, lane: "", members: [id], group: false, level: null });
void elk.layout(elkGraph({ nodes: [node("a"), node("b")], edges: [{ id: "e", from: "a", to: "b", weight: 1 }] }));

scope.onmessage = (event) => {
  const { id, graph, splice } = event.data;
  elk
    .layout(elkGraph(graph))
    .then((laid) => {
      const placed: Record<string, Point> = {};
      for (const c of laid.children ?? []) placed[c.id] = { x: c.x ?? 0, y: c.y ?? 0 };
      const layout = splice ? spliceLayout(splice.base, splice.group, splice.lane, placed) : bandLanes(graph, placed);
      scope.postMessage({ id, layout });
    })
    .catch((e: unknown) => scope.postMessage({ id, error: String(e) }));
};
