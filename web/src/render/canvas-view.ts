// The map drawn with Canvas 2D: for browsers whose WebGL is rendered in software (renderer.ts).
// Each frame draws only what is in view, every edge of a style as one path, every node of a look
// as one path; while the camera moves, names and arrowheads of short edges wait for it to rest
// (level of detail), and at rest a name stands only where it overlaps no other name and no node
// (labels.ts); the hovered node's name always stands.
import { NODE_WIDTH, type Layout } from "../layout/protocol.js";
import type { DisplayGraph } from "../model/display.js";
import type { Look, Looks } from "../model/looks.js";
import { color } from "../components/theme.js";
import type { DrawnLabel, DrawnLane, DrawnNode, MapView } from "../components/map-view.js";
import { centreOn, DEFAULT_CAMERA, frameOf, panBy, zoomAt, type Box, type Camera, type Frame } from "./camera.js";
import { FrameTimes } from "./frame-times.js";
import { placeLabels, type LabelBox, type Rect } from "./labels.js";
import { baseSize, lookColours, lookSize, paintLanes } from "./style.js";

/** How long after the last drag or wheel step the camera counts as resting. */
const REST_MS = 120;
/** A press that moves less than this is a click, not a drag. */
const CLICK_SLOP = 4;
const LABEL_FONT = "12px system-ui, sans-serif";
const LABEL_HEIGHT = 14;
const LABEL_PRIORITY: Record<Look, number> = {
  selected: 5,
  pulse: 4,
  highlight: 4,
  failed: 3,
  stale: 2,
  normal: 1,
  dropped: 0,
  dim: 0,
};

interface Drag {
  pointer: number;
  x: number;
  y: number;
  camera: Camera;
  moved: boolean;
}

export class CanvasView implements MapView {
  private readonly canvas: HTMLCanvasElement;
  private readonly stage: HTMLDivElement;
  private display: DisplayGraph = { nodes: [], edges: [] };
  private layout: Layout = { positions: {}, lanes: [] };
  private looks: Looks = { nodes: new Map(), hotEdges: new Set() };
  private index = new Map<string, number>();
  private box: Box = { minX: 0, minY: 0, maxX: 1, maxY: 1 };
  private camera: Camera = DEFAULT_CAMERA;
  private colours = lookColours();
  private readonly widths = new Map<string, number>();
  private requested = false;
  private moving = false;
  private restTimer: ReturnType<typeof setTimeout> | null = null;
  private animation: { from: Camera; to: Camera; start: number; ms: number } | null = null;
  private drag: Drag | null = null;
  private hovered: string | null = null;
  /** Screen positions (stage pixels) and radii of the drawn nodes, in display order, of the last frame. */
  private sx = new Float64Array(0);
  private sy = new Float64Array(0);
  private radius = new Float64Array(0);
  private readonly times = new FrameTimes();
  /** The names standing after the last frame at rest (stage pixels). */
  private labels: LabelBox[] = [];

  constructor(
    private readonly container: HTMLElement,
    private readonly onSelect: (id: string | null, extend: boolean) => void,
  ) {
    this.canvas = document.createElement("canvas");
    this.canvas.className = "lanes";
    this.stage = document.createElement("div");
    this.stage.className = "stage";
    container.append(this.canvas, this.stage);
    this.stage.addEventListener("pointerdown", (e) => this.press(e));
    this.stage.addEventListener("pointermove", (e) => this.move(e));
    this.stage.addEventListener("pointerup", (e) => this.release(e));
    this.stage.addEventListener("pointercancel", () => (this.drag = null));
    this.stage.addEventListener("pointerleave", () => this.hover(null));
    this.stage.addEventListener("wheel", (e) => this.wheel(e), { passive: false });
    new ResizeObserver(() => this.schedule()).observe(container);
  }

  show(display: DisplayGraph, layout: Layout, looks: Looks): void {
    this.display = display;
    this.layout = layout;
    this.looks = looks;
    this.index = new Map(display.nodes.map((n, i) => [n.id, i]));
    // the frame holds the labels too: they stand right of their nodes, up to a node's width
    const xs = display.nodes.map((n) => layout.positions[n.id]?.x ?? 0);
    const ys = layout.lanes.flatMap((l) => [l.top, l.bottom]);
    this.box =
      xs.length > 0
        ? { minX: Math.min(...xs), maxX: Math.max(...xs) + NODE_WIDTH, minY: Math.min(...ys), maxY: Math.max(...ys) }
        : { minX: 0, minY: 0, maxX: 1, maxY: 1 };
    this.repaint(looks);
  }

  repaint(looks: Looks): void {
    this.looks = looks;
    // the theme may have changed with the looks
    this.colours = lookColours();
    this.schedule();
  }

  drawnNodes(): DrawnNode[] {
    const box = this.stage.getBoundingClientRect();
    const f = this.frame();
    return this.display.nodes.map((n) => {
      const p = this.layout.positions[n.id] ?? { x: 0, y: 0 };
      return {
        id: n.id,
        label: n.label,
        x: box.left + p.x * f.scale + f.offsetX,
        y: box.top + p.y * f.scale + f.offsetY,
        look: this.looks.nodes.get(n.id) ?? "normal",
      };
    });
  }

  drawnEdges(): { id: string; from: string; to: string; hot: boolean }[] {
    return this.display.edges.map((e) => ({ id: e.id, from: e.from, to: e.to, hot: this.looks.hotEdges.has(e.id) }));
  }

  drawnLanes(): DrawnLane[] {
    const box = this.stage.getBoundingClientRect();
    const f = this.frame();
    return this.layout.lanes.map((l) => ({
      system: l.system,
      top: box.top + l.top * f.scale + f.offsetY,
      bottom: box.top + l.bottom * f.scale + f.offsetY,
    }));
  }

  reveal(id: string): void {
    const p = this.layout.positions[id];
    if (!p || !this.index.has(id)) return;
    const f = this.frame();
    const x = p.x * f.scale + f.offsetX;
    const y = p.y * f.scale + f.offsetY;
    const margin = 40;
    const { clientWidth: width, clientHeight: height } = this.stage;
    if (x >= margin && x <= width - margin && y >= margin && y <= height - margin) return;
    this.animation = {
      from: this.camera,
      to: centreOn(this.camera, this.box, p.x, p.y),
      start: performance.now(),
      ms: 300,
    };
    this.schedule();
  }

  drawnLabels(): DrawnLabel[] {
    const box = this.stage.getBoundingClientRect();
    return this.labels.map((l) => ({
      id: l.id,
      x: box.left + l.x,
      y: box.top + l.y,
      width: l.width,
      height: l.height,
    }));
  }

  drawTimes(): number[] {
    return this.times.recent();
  }

  private frame(camera = this.camera): Frame {
    return frameOf(this.box, { width: this.stage.clientWidth, height: this.stage.clientHeight }, camera);
  }

  private schedule(): void {
    if (this.requested) return;
    this.requested = true;
    requestAnimationFrame((now) => {
      this.requested = false;
      this.step(now);
      const start = performance.now();
      this.draw();
      this.times.record(performance.now() - start);
    });
  }

  /** The camera is moving: names wait until it has rested for REST_MS. */
  private moved(): void {
    this.moving = true;
    if (this.restTimer) clearTimeout(this.restTimer);
    this.restTimer = setTimeout(() => {
      this.moving = false;
      this.schedule();
    }, REST_MS);
    this.schedule();
  }

  private step(now: number): void {
    const a = this.animation;
    if (!a) return;
    const t = Math.min(1, (now - a.start) / a.ms);
    const ease = t * (2 - t);
    this.camera = {
      x: a.from.x + (a.to.x - a.from.x) * ease,
      y: a.from.y + (a.to.y - a.from.y) * ease,
      ratio: a.from.ratio + (a.to.ratio - a.from.ratio) * ease,
    };
    if (t >= 1) this.animation = null;
    this.moved();
  }

  private press(e: PointerEvent): void {
    if (e.button !== 0) return;
    this.stage.setPointerCapture(e.pointerId);
    this.animation = null;
    this.drag = { pointer: e.pointerId, x: e.clientX, y: e.clientY, camera: this.camera, moved: false };
  }

  private move(e: PointerEvent): void {
    const d = this.drag;
    if (!d || d.pointer !== e.pointerId) {
      this.hover(this.hit(e));
      return;
    }
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < CLICK_SLOP) return;
    d.moved = true;
    this.camera = panBy(d.camera, this.box, this.frame(d.camera), dx, dy);
    this.moved();
  }

  private release(e: PointerEvent): void {
    const d = this.drag;
    if (!d || d.pointer !== e.pointerId) return;
    this.drag = null;
    if (!d.moved) this.onSelect(this.hit(e), e.shiftKey);
  }

  private wheel(e: WheelEvent): void {
    e.preventDefault();
    const r = this.stage.getBoundingClientRect();
    const view = { width: r.width, height: r.height };
    // one notch (120) zooms by 1.7, as sigma does; a touchpad's small steps by as much in sum
    const factor = Math.pow(1.7, -e.deltaY / 120);
    this.animation = null;
    this.camera = zoomAt(this.camera, this.box, view, e.clientX - r.left, e.clientY - r.top, factor);
    this.moved();
  }

  private hover(id: string | null): void {
    if (id === this.hovered) return;
    this.hovered = id;
    this.stage.style.cursor = id ? "pointer" : "";
    this.schedule();
  }

  /** The topmost drawn node under a pointer (within its radius and 2 px), or null. */
  private hit(e: MouseEvent): string | null {
    const r = this.stage.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    let best: string | null = null;
    let bestDistance = Infinity;
    this.display.nodes.forEach((n, i) => {
      const d = Math.hypot(this.sx[i] - x, this.sy[i] - y);
      if (d <= this.radius[i] + 2 && d < bestDistance) {
        best = n.id;
        bestDistance = d;
      }
    });
    return best;
  }

  private labelWidth(ctx: CanvasRenderingContext2D, label: string): number {
    let w = this.widths.get(label);
    if (w === undefined) {
      w = ctx.measureText(label).width;
      this.widths.set(label, w);
    }
    return w;
  }

  private draw(): void {
    const dpr = window.devicePixelRatio || 1;
    const cssWidth = this.container.clientWidth;
    const cssHeight = this.container.clientHeight;
    // resizing a canvas reallocates and clears it: only when the map's size changed
    const width = Math.round(cssWidth * dpr);
    const height = Math.round(cssHeight * dpr);
    if (this.canvas.width !== width) this.canvas.width = width;
    if (this.canvas.height !== height) this.canvas.height = height;
    // (a style set even to its value invalidates the page's style: only on a change)
    if (this.canvas.style.width !== `${cssWidth}px`) this.canvas.style.width = `${cssWidth}px`;
    if (this.canvas.style.height !== `${cssHeight}px`) this.canvas.style.height = `${cssHeight}px`;
    // a CPU-backed canvas: where WebGL is software-rendered an "accelerated" 2D canvas is too
    const ctx = this.canvas.getContext("2d", { willReadFrequently: true });
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    const left = this.stage.offsetLeft;
    const top = this.stage.offsetTop;
    const w = this.stage.clientWidth;
    const h = this.stage.clientHeight;
    const f = this.frame();
    paintLanes(ctx, this.layout.lanes, (y) => top + y * f.scale + f.offsetY, cssWidth);

    const nodes = this.display.nodes;
    if (this.sx.length !== nodes.length) {
      this.sx = new Float64Array(nodes.length);
      this.sy = new Float64Array(nodes.length);
      this.radius = new Float64Array(nodes.length);
    }
    // sigma's sizes: screen pixels, growing with the square root of the zoom
    const grow = Math.min(3, Math.max(0.5, Math.sqrt(f.scale / f.fitScale)));
    nodes.forEach((n, i) => {
      const p = this.layout.positions[n.id] ?? { x: 0, y: 0 };
      this.sx[i] = p.x * f.scale + f.offsetX;
      this.sy[i] = p.y * f.scale + f.offsetY;
      this.radius[i] = lookSize(this.looks.nodes.get(n.id) ?? "normal", baseSize(n)) * grow;
    });
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, w, h);
    ctx.clip();
    ctx.translate(left, top);
    this.drawEdges(ctx, false, w, h);
    this.drawEdges(ctx, true, w, h);
    this.drawNodes(ctx, w, h);
    if (!this.moving) this.drawLabels(ctx, w, h);
    else this.labels = [];
    this.drawHovered(ctx);
    ctx.restore();
  }

  /** Every edge of one style (hot or not) in view: one stroked path of lines, one filled path of arrowheads. */
  private drawEdges(ctx: CanvasRenderingContext2D, hot: boolean, w: number, h: number): void {
    const lines = new Path2D();
    const heads = new Path2D();
    const head = hot ? 9 : 6;
    const half = hot ? 4.5 : 3;
    let any = false;
    for (const e of this.display.edges) {
      if (this.looks.hotEdges.has(e.id) !== hot) continue;
      const a = this.index.get(e.from);
      const b = this.index.get(e.to);
      if (a === undefined || b === undefined) continue;
      const x0 = this.sx[a];
      const y0 = this.sy[a];
      const x1 = this.sx[b];
      const y1 = this.sy[b];
      // out of view when its bounding box misses the view
      if (Math.max(x0, x1) < 0 || Math.min(x0, x1) > w || Math.max(y0, y1) < 0 || Math.min(y0, y1) > h) continue;
      any = true;
      lines.moveTo(x0, y0);
      lines.lineTo(x1, y1);
      const length = Math.hypot(x1 - x0, y1 - y0);
      // an arrowhead on an edge shorter than a few heads is noise, and while moving only hot ones
      if (length < 4 * head || (this.moving && !hot)) continue;
      const ux = (x1 - x0) / length;
      const uy = (y1 - y0) / length;
      const tipX = x1 - ux * (this.radius[b] + 1);
      const tipY = y1 - uy * (this.radius[b] + 1);
      heads.moveTo(tipX, tipY);
      heads.lineTo(tipX - ux * head - uy * half, tipY - uy * head + ux * half);
      heads.lineTo(tipX - ux * head + uy * half, tipY - uy * head - ux * half);
      heads.closePath();
    }
    if (!any) return;
    const c = color(hot ? "edge-hot" : "edge");
    ctx.strokeStyle = c;
    ctx.fillStyle = c;
    ctx.lineWidth = hot ? 2.5 : 1;
    ctx.stroke(lines);
    ctx.fill(heads);
  }

  /** The nodes in view, one filled path per look. */
  private drawNodes(ctx: CanvasRenderingContext2D, w: number, h: number): void {
    const paths = new Map<Look, Path2D>();
    this.display.nodes.forEach((n, i) => {
      const x = this.sx[i];
      const y = this.sy[i];
      const r = this.radius[i];
      if (x + r < 0 || x - r > w || y + r < 0 || y - r > h) return;
      const look = this.looks.nodes.get(n.id) ?? "normal";
      let path = paths.get(look);
      if (!path) paths.set(look, (path = new Path2D()));
      path.moveTo(x + r, y);
      path.arc(x, y, r, 0, 2 * Math.PI);
    });
    // the selection and what it lights are drawn last, over the rest
    const order: Look[] = ["dim", "dropped", "normal", "stale", "failed", "highlight", "pulse", "selected"];
    for (const look of order) {
      const path = paths.get(look);
      if (!path) continue;
      ctx.fillStyle = this.colours[look];
      ctx.fill(path);
    }
  }

  /** The names in view that overlap no name of a higher priority. */
  private drawLabels(ctx: CanvasRenderingContext2D, w: number, h: number): void {
    ctx.font = LABEL_FONT;
    ctx.textBaseline = "middle";
    const boxes: LabelBox[] = [];
    const discs: Rect[] = [];
    const at = new Map<string, number>();
    this.display.nodes.forEach((n, i) => {
      const r = this.radius[i];
      if (this.sx[i] + r >= 0 && this.sx[i] - r <= w && this.sy[i] + r >= 0 && this.sy[i] - r <= h)
        discs.push({ x: this.sx[i] - r, y: this.sy[i] - r, width: 2 * r, height: 2 * r });
      if (n.id === this.hovered) return;
      const x = this.sx[i] + this.radius[i] + 3;
      const y = this.sy[i] - LABEL_HEIGHT / 2;
      const width = this.labelWidth(ctx, n.label);
      if (x > w || x + width < 0 || y > h || y + LABEL_HEIGHT < 0) return;
      const look = this.looks.nodes.get(n.id) ?? "normal";
      boxes.push({
        id: n.id,
        x,
        y,
        width,
        height: LABEL_HEIGHT,
        priority: LABEL_PRIORITY[look] * 2 + (n.group ? 1 : 0),
      });
      at.set(n.id, i);
    });
    const fg = color("fg");
    const muted = color("muted");
    const placed = placeLabels(boxes, discs);
    this.labels = boxes.filter((b) => placed.has(b.id));
    for (const id of placed) {
      const i = at.get(id) ?? 0;
      const look = this.looks.nodes.get(id) ?? "normal";
      ctx.fillStyle = look === "dim" || look === "dropped" ? muted : fg;
      ctx.fillText(this.display.nodes[i].label, this.sx[i] + this.radius[i] + 3, this.sy[i]);
    }
  }

  /** The hovered node's name in a light box, over everything (as sigma draws it). */
  private drawHovered(ctx: CanvasRenderingContext2D): void {
    const i = this.hovered === null ? undefined : this.index.get(this.hovered);
    if (i === undefined) return;
    ctx.font = LABEL_FONT;
    ctx.textBaseline = "middle";
    const label = this.display.nodes[i].label;
    const x = this.sx[i];
    const y = this.sy[i];
    const r = this.radius[i];
    const width = this.labelWidth(ctx, label);
    ctx.fillStyle = "#ffffff";
    ctx.shadowColor = "rgba(0, 0, 0, 0.4)";
    ctx.shadowBlur = 6;
    ctx.beginPath();
    ctx.roundRect(x - r - 2, y - LABEL_HEIGHT / 2 - 3, 2 * r + width + 12, LABEL_HEIGHT + 6, 4);
    ctx.fill();
    ctx.shadowBlur = 0;
    ctx.fillStyle = this.colours[this.looks.nodes.get(this.hovered ?? "") ?? "normal"];
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fill();
    ctx.fillStyle = "#1f2328";
    ctx.fillText(label, x + r + 3, y);
  }
}
