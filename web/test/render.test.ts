import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_CAMERA, frameOf, panBy, toGraph, toScreen, zoomAt, centreOn } from "../src/render/camera.js";
import { placeLabels, type LabelBox } from "../src/render/labels.js";
import { chooseRenderer } from "../src/render/renderer.js";

const box = { minX: 100, minY: -50, maxX: 900, maxY: 350 };
const view = { width: 1000, height: 600 };
const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) < 1e-6, `${what}: ${a} vs ${b}`);

test("the default camera fits the box inside the padding, centred", () => {
  const f = frameOf(box, view, DEFAULT_CAMERA, 50);
  // 800 x 400 into 900 x 500: the width binds
  close(f.scale, 900 / 800, "scale");
  const tl = toScreen(f, box.minX, box.minY);
  const br = toScreen(f, box.maxX, box.maxY);
  close(tl.x, 50, "left edge at the padding");
  close(br.x, 950, "right edge at the padding");
  close((tl.y + br.y) / 2, 300, "centred vertically");
  const back = toGraph(f, tl.x, tl.y);
  close(back.x, box.minX, "round trip x");
  close(back.y, box.minY, "round trip y");
});

test("a drag moves the map with the pointer, and a zoom keeps the point under the pointer", () => {
  const f = frameOf(box, view, DEFAULT_CAMERA);
  const under = toGraph(f, 300, 200);
  const panned = panBy(DEFAULT_CAMERA, box, f, 40, -25);
  const after = toScreen(frameOf(box, view, panned), under.x, under.y);
  close(after.x, 340, "dragged x");
  close(after.y, 175, "dragged y");

  const zoomed = zoomAt(panned, box, view, 700, 100, 1.7);
  const fz = frameOf(box, view, zoomed);
  close(fz.scale, frameOf(box, view, panned).scale * 1.7, "zoomed in by the factor");
  const anchor = toGraph(frameOf(box, view, panned), 700, 100);
  const still = toScreen(fz, anchor.x, anchor.y);
  close(still.x, 700, "anchor x stays");
  close(still.y, 100, "anchor y stays");

  // the zoom is bounded both ways
  let far = DEFAULT_CAMERA;
  for (let i = 0; i < 50; i++) far = zoomAt(far, box, view, 500, 300, 0.5);
  assert.ok(far.ratio <= 8 && far.ratio > 1, `zoomed out to a bounded ratio ${far.ratio}`);
});

test("centring on a point puts it in the middle of the view at the same zoom", () => {
  const cam = centreOn({ x: 0.3, y: -0.2, ratio: 0.5 }, box, 120, 300);
  const p = toScreen(frameOf(box, view, cam), 120, 300);
  close(p.x, 500, "x");
  close(p.y, 300, "y");
  assert.equal(cam.ratio, 0.5);
});

test("labels that would overlap a label of higher priority or a node do not stand", () => {
  const label = (id: string, x: number, y: number, priority: number, width = 100): LabelBox => ({
    id,
    x,
    y,
    width,
    height: 14,
    priority,
  });
  const boxes = [
    label("a", 0, 0, 1),
    label("b", 50, 5, 2), // overlaps a, wins by priority
    label("c", 200, 0, 1), // free
    label("d", 400, 0, 1), // runs over a node's disc
    label("e", 0, 30, 1), // below a, clear of it
    label("f", 301, 0, 1, 60), // clear of c by less than the gap
  ];
  const placed = placeLabels(boxes, [{ x: 450, y: 0, width: 12, height: 12 }]);
  assert.deepEqual([...placed].sort(), ["b", "c", "e"]);
  // across many cells of the spatial hash: a grid of labels wider than their spacing keeps every other one
  const grid: LabelBox[] = [];
  for (let i = 0; i < 20; i++) for (let j = 0; j < 10; j++) grid.push(label(`${i}-${j}`, i * 60, j * 20, 0));
  const kept = placeLabels(grid);
  for (const a of grid)
    for (const b of grid)
      if (a !== b && kept.has(a.id) && kept.has(b.id))
        assert.ok(a.y !== b.y || Math.abs(a.x - b.x) >= 100, `${a.id} and ${b.id} do not overlap`);
  assert.equal(kept.size, 10 * 10);
});

test("software WebGL (or none) draws with Canvas 2D, a GPU with WebGL, and the address can choose", () => {
  const swiftshader = "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)";
  assert.equal(chooseRenderer(null, swiftshader), "canvas");
  assert.equal(chooseRenderer(null, "llvmpipe (LLVM 15.0.6, 256 bits)"), "canvas");
  assert.equal(chooseRenderer(null, null), "canvas");
  assert.equal(chooseRenderer(null, "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0)"), "webgl");
  assert.equal(chooseRenderer("webgl", swiftshader), "webgl");
  assert.equal(chooseRenderer("canvas", "Apple M2"), "canvas");
  assert.equal(chooseRenderer("bogus", "Apple M2"), "webgl");
});
