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

/**
 * How many incoming edges of a node ELK lays out. Collapsed namespaces of a large map are joined
 * by thousands of edges (10,000 datasets with one system opened: 104 groups, 2,452 edges; with
 * every namespace a group: 500 and 17,000, which ELK's layered layout does not finish in a
 * minute); its heaviest few inputs place a node as well. Every edge is still drawn
 * (web/bench/map.bench.ts measures this).
 */
export const LAYOUT_MAX_INPUTS = 3;

/** The edges ELK lays out: per node its `maxInputs` heaviest inputs (most model edges), by id on ties. */
export function layoutEdges(graph: DisplayGraph, maxInputs = LAYOUT_MAX_INPUTS): DisplayGraph["edges"] {
  const inputs = new Map<string, DisplayGraph["edges"]>();
  for (const e of graph.edges) {
    const list = inputs.get(e.to);
    if (list) list.push(e);
    else inputs.set(e.to, [e]);
  }
  const kept = new Set<string>();
  for (const list of inputs.values()) {
    if (list.length > maxInputs) list.sort((a, b) => b.weight - a.weight || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const e of list.slice(0, maxInputs)) kept.add(e.id);
  }
  return graph.edges.filter((e) => kept.has(e.id));
}

export function elkGraph(graph: DisplayGraph): ElkNode {
  return {
    id: "root",
    layoutOptions: LAYERED_OPTIONS,
    children: graph.nodes.map((n) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: layoutEdges(graph).map((e) => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  };
}
