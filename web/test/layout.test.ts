import assert from "node:assert/strict";
import { test } from "node:test";
import ELK from "elkjs/lib/elk.bundled.js";
import { fromGraph } from "../src/model/map-model.js";
import { displayGraph, type DisplayGraph } from "../src/model/display.js";
import { elkGraph, layoutEdges } from "../src/layout/elk-graph.js";
import { bandLanes } from "../src/layout/lanes.js";
import { NODE_HEIGHT, NODE_WIDTH, type Point } from "../src/layout/protocol.js";
import { openedGroup, spliceLayout } from "../src/layout/splice.js";
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

async function laidOut(graph: DisplayGraph): Promise<Record<string, Point>> {
  const laid = await new ELK().layout(elkGraph(graph));
  const placed: Record<string, Point> = {};
  for (const c of laid.children ?? []) placed[c.id] = { x: c.x ?? 0, y: c.y ?? 0 };
  return placed;
}

test("an opened group's members take its place; the rest moves right and down, nothing overlaps", async () => {
  const model = fromGraph(warehouseGraph);
  const closed = displayGraph(model, { threshold: 3 });
  const base = bandLanes(closed, await laidOut(closed));
  const open = displayGraph(model, { threshold: 3, expanded: new Set(["group:skade:raw"]) });
  const opened = openedGroup(closed, open);
  assert.ok(opened);
  assert.equal(opened.group, "group:skade:raw");
  assert.deepEqual(opened.members.nodes.map((n) => n.id).sort(), ["raw.customers", "raw.orders", "raw.tmp"]);
  // raw.orders -> raw.tmp lies inside the group; edges leaving it are not the block's
  assert.deepEqual(
    opened.members.edges.map((e) => [e.from, e.to]),
    [["raw.orders", "raw.tmp"]],
  );
  const block = await laidOut(opened.members);
  const spliced = spliceLayout(base, "group:skade:raw", "skade", block);

  // every node of the opened graph has a place, the group none
  assert.deepEqual(Object.keys(spliced.positions).sort(), open.nodes.map((n) => n.id).sort());
  // the block stands where the group stood, keeping ELK's shape
  const at = base.positions["group:skade:raw"];
  const minX = Math.min(...Object.values(block).map((p) => p.x));
  const minY = Math.min(...Object.values(block).map((p) => p.y));
  for (const [id, p] of Object.entries(block))
    assert.deepEqual(spliced.positions[id], { x: at.x + p.x - minX, y: at.y + p.y - minY });
  // no two nodes overlap, each node inside its lane, lanes one after another
  const boxes = Object.entries(spliced.positions);
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, p] = boxes[i];
      const [b, q] = boxes[j];
      const apart = Math.abs(p.x - q.x) >= NODE_WIDTH || Math.abs(p.y - q.y) >= NODE_HEIGHT;
      assert.ok(apart, `${a} overlaps ${b}`);
    }
  for (const n of open.nodes) {
    const lane = spliced.lanes.find((l) => l.system === n.lane);
    const y = spliced.positions[n.id].y;
    assert.ok(lane && y >= lane.top && y + NODE_HEIGHT <= lane.bottom, `${n.id} inside the ${n.lane} lane`);
  }
  for (let i = 1; i < spliced.lanes.length; i++) assert.ok(spliced.lanes[i].top >= spliced.lanes[i - 1].bottom);
  // what lay left of the group and above it in its lane, or in a lane above, did not move
  for (const [id, p] of Object.entries(base.positions))
    if (id !== "group:skade:raw" && p.x <= at.x && p.y <= at.y)
      assert.deepEqual(spliced.positions[id], p, `${id} moved`);

  // anything but one group opening is laid out afresh
  assert.equal(openedGroup(open, closed), null);
  assert.equal(openedGroup(closed, closed), null);
  const other = displayGraph(fromGraph({ ...warehouseGraph, nodes: warehouseGraph.nodes.slice(1) }), { threshold: 3 });
  assert.equal(openedGroup(closed, other), null);
});
