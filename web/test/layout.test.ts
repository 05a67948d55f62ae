import assert from "node:assert/strict";
import { test } from "node:test";
import ELK from "elkjs/lib/elk.bundled.js";
import { fromGraph } from "../src/model/map-model.js";
import { displayGraph } from "../src/model/display.js";
import { elkGraph, layoutEdges } from "../src/layout/elk-graph.js";
import { bandLanes } from "../src/layout/lanes.js";
import { NODE_HEIGHT, type Point } from "../src/layout/protocol.js";
import { warehouseGraph } from "./fixtures/warehouse-graph.js";

test("ELK's layered layout runs left to right and each system gets a band of its own", async () => {
  const graph = displayGraph(fromGraph(warehouseGraph));
  const laid = await new ELK().layout(elkGraph(graph));
  const placed: Record<string, Point> = {};
  for (const c of laid.children ?? []) placed[c.id] = { x: c.x ?? 0, y: c.y ?? 0 };
  const { positions, lanes } = bandLanes(graph, placed);

  for (const e of graph.edges) assert.ok(positions[e.from].x < positions[e.to].x, `${e.from} left of ${e.to}`);
  assert.deepEqual(
    lanes.map((l) => l.system),
    ["skade", "kafka", "spark"],
  );
  for (const n of graph.nodes) {
    const lane = lanes.find((l) => l.system === n.lane);
    const y = positions[n.id].y;
    assert.ok(lane && y >= lane.top && y + NODE_HEIGHT <= lane.bottom, `${n.id} inside the ${n.lane} lane`);
  }
  for (let i = 1; i < lanes.length; i++) assert.ok(lanes[i].top >= lanes[i - 1].bottom);
});

test("ELK lays out each node's three heaviest inputs; the display keeps every edge", () => {
  const edge = (from: string, to: string, n: number) => ({
    id: `${from}>${to}`,
    from,
    to,
    weight: n,
  });
  const node = (id: string) => ({ id, label: id, lane: "skade", members: [id], group: false, level: null });
  const graph = {
    nodes: ["a", "b", "c", "d", "e", "x"].map(node),
    edges: [
      edge("a", "x", 1),
      edge("b", "x", 5),
      edge("c", "x", 2),
      edge("d", "x", 2),
      edge("e", "x", 1),
      edge("a", "b", 1),
    ],
  };
  assert.deepEqual(
    layoutEdges(graph).map((e) => e.id),
    ["b>x", "c>x", "d>x", "a>b"],
  );
  assert.equal(elkGraph(graph).edges?.length, 4);
  assert.equal(graph.edges.length, 6);
});
