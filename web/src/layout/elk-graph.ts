// The ELK layered graph of what the map draws: left to right, nodes in lane order so that ELK's
// model-order option keeps each lane's nodes together within a layer.
import type { ElkNode } from "elkjs/lib/elk-api.js";
import type { DisplayGraph } from "../model/display.js";
import { NODE_HEIGHT, NODE_WIDTH } from "./protocol.js";

export const LAYERED_OPTIONS: Record<string, string> = {
  "elk.algorithm": "layered",
  "elk.direction": "RIGHT",
  "elk.edgeRouting": "POLYLINE",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.layered.spacing.nodeNodeBetweenLayers": "80",
  "elk.spacing.nodeNode": "24",
};

export function elkGraph(graph: DisplayGraph): ElkNode {
  return {
    id: "root",
    layoutOptions: LAYERED_OPTIONS,
    children: graph.nodes.map((n) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: graph.edges.map((e) => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  };
}
