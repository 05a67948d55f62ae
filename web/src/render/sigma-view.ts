// The map drawn by sigma.js (WebGL, smooth at thousands of nodes on a GPU) over a graphology
// graph, with lane bands drawn on a canvas beneath. What is highlighted, dimmed or stale is decided by the
// view model; this only paints it.
import Graph from "graphology";
import Sigma from "sigma";
import { drawDiscNodeHover } from "sigma/rendering";
import type { DisplayGraph } from "../model/display.js";
import { NODE_WIDTH, type Layout } from "../layout/protocol.js";
import type { DrawnLane, DrawnNode, MapView } from "../components/map-view.js";
import { color } from "../components/theme.js";
import type { Looks } from "../model/looks.js";
import { FrameTimes } from "./frame-times.js";
import { baseSize, lookColours, lookSize, paintLanes } from "./style.js";

interface NodeAttrs {
  x: number;
  y: number;
  size: number;
  label: string;
  color: string;
}

export class SigmaView implements MapView {
  private graph = new Graph<NodeAttrs>({ type: "directed", multi: false });
  private readonly sigma: Sigma<NodeAttrs>;
  private readonly lanes: HTMLCanvasElement;
  private readonly stage: HTMLDivElement;
  private layout: Layout | null = null;
  private looks: Looks | null = null;
  private colours = lookColours();
  private readonly times = new FrameTimes();

  constructor(
    private readonly container: HTMLElement,
    onSelect: (id: string | null, extend: boolean) => void,
  ) {
    this.lanes = document.createElement("canvas");
    this.lanes.className = "lanes";
    // sigma draws right of a gutter where the lane names stand, so no name covers a node
    this.stage = document.createElement("div");
    this.stage.className = "stage";
    container.append(this.lanes, this.stage);
    this.sigma = new Sigma(this.graph, this.stage, {
      defaultEdgeType: "arrow",
      renderEdgeLabels: false,
      labelRenderedSizeThreshold: 0,
      // level of detail: while the camera moves only the camera matrix changes (no re-layout, no
      // new geometry) and labels wait for it to rest; a label stands only where there is room
      hideLabelsOnMove: true,
      labelDensity: 4,
      labelGridCellSize: 60,
      labelColor: { color: color("fg") },
      stagePadding: 48,
      // the hovered or selected node's label stands in sigma's white box: dark text in either theme
      defaultDrawNodeHover: (ctx, data, settings) =>
        drawDiscNodeHover(ctx, data, { ...settings, labelColor: { color: "#1f2328" } }),
      nodeReducer: (id, attrs) => this.nodeLook(id, attrs),
      edgeReducer: (id, attrs) => {
        const hot = this.looks?.hotEdges.has(id) ?? false;
        return { ...attrs, color: color(hot ? "edge-hot" : "edge"), size: hot ? 2.5 : 1 };
      },
    });
    this.sigma.on("clickNode", ({ node, event }) => onSelect(node, event.original.shiftKey));
    // sigma reports a second click within its double-click time as a double click (and zooms):
    // on a node it is one more click, so quickly picking two nodes picks both
    this.sigma.on("doubleClickNode", ({ node, event }) => {
      event.preventSigmaDefault();
      onSelect(node, event.original.shiftKey);
    });
    this.sigma.on("clickStage", () => onSelect(null, false));
    let start = 0;
    this.sigma.on("beforeRender", () => (start = performance.now()));
    this.sigma.on("afterRender", () => {
      this.drawLanes();
      this.times.record(performance.now() - start);
    });
  }

  private nodeLook(id: string, attrs: NodeAttrs): NodeAttrs {
    const look = this.looks?.nodes.get(id) ?? "normal";
    return { ...attrs, color: this.colours[look], size: lookSize(look, attrs.size) };
  }

  /**
   * Draws `display` at `layout` with `looks`; ELK's y grows downwards, sigma's upwards. A new
   * graph handed to sigma is indexed once (clearing and refilling the drawn one made sigma index
   * it for every node and edge added, and again for each refresh).
   */
  show(display: DisplayGraph, layout: Layout, looks: Looks): void {
    this.layout = layout;
    this.looks = looks;
    this.colours = lookColours();
    const graph = new Graph<NodeAttrs>({ type: "directed", multi: false });
    for (const n of display.nodes) {
      const p = layout.positions[n.id] ?? { x: 0, y: 0 };
      graph.addNode(n.id, { x: p.x, y: -p.y, size: baseSize(n), label: n.label, color: color("node") });
    }
    for (const e of display.edges) graph.addDirectedEdgeWithKey(e.id, e.from, e.to);
    // the frame holds the labels too: they stand right of their nodes, up to a node's width
    const xs = display.nodes.map((n) => layout.positions[n.id]?.x ?? 0);
    const ys = layout.lanes.flatMap((l) => [-l.top, -l.bottom]);
    this.sigma.setCustomBBox(
      xs.length > 0
        ? { x: [Math.min(...xs), Math.max(...xs) + NODE_WIDTH], y: [Math.min(...ys), Math.max(...ys)] }
        : null,
    );
    this.labelColor();
    this.graph = graph;
    this.sigma.setGraph(graph);
  }

  /** New looks for the drawn graph: its nodes and edges are reduced again, not indexed again. */
  repaint(looks: Looks): void {
    this.looks = looks;
    this.colours = lookColours();
    if (this.labelColor()) return;
    this.sigma.refresh({
      partialGraph: { nodes: this.graph.nodes(), edges: this.graph.edges() },
      skipIndexation: true,
    });
  }

  /** Sets the theme's label colour when it changed (which refreshes everything); whether it did. */
  private labelColor(): boolean {
    const fg = color("fg");
    if (this.sigma.getSetting("labelColor").color === fg) return false;
    this.sigma.setSetting("labelColor", { color: fg });
    return true;
  }

  /** The drawn nodes where the page shows them (the test hook, and tools). */
  drawnNodes(): DrawnNode[] {
    const box = this.stage.getBoundingClientRect();
    return this.graph.mapNodes((id, attrs) => {
      const p = this.sigma.graphToViewport({ x: attrs.x, y: attrs.y });
      return {
        id,
        label: attrs.label,
        x: box.left + p.x,
        y: box.top + p.y,
        look: this.looks?.nodes.get(id) ?? "normal",
      };
    });
  }

  drawnEdges(): { id: string; from: string; to: string; hot: boolean }[] {
    return this.graph.mapEdges((id, _attrs, from, to) => ({
      id,
      from,
      to,
      hot: this.looks?.hotEdges.has(id) ?? false,
    }));
  }

  drawnLanes(): DrawnLane[] {
    const box = this.stage.getBoundingClientRect();
    return (this.layout?.lanes ?? []).map((lane) => {
      const a = this.sigma.graphToViewport({ x: 0, y: -lane.top }).y;
      const b = this.sigma.graphToViewport({ x: 0, y: -lane.bottom }).y;
      return { system: lane.system, top: box.top + Math.min(a, b), bottom: box.top + Math.max(a, b) };
    });
  }

  /** Moves the camera to a node when it is not in view (a node in view stays where it is). */
  reveal(id: string): void {
    if (!this.graph.hasNode(id)) return;
    const pos = this.sigma.getNodeDisplayData(id);
    if (!pos) return;
    const p = this.sigma.framedGraphToViewport(pos);
    const { width, height } = this.sigma.getDimensions();
    const margin = 40;
    if (p.x >= margin && p.x <= width - margin && p.y >= margin && p.y <= height - margin) return;
    void this.sigma.getCamera().animate({ x: pos.x, y: pos.y }, { duration: 300 });
  }

  drawnLabels(): null {
    return null;
  }

  drawTimes(): number[] {
    return this.times.recent();
  }

  private drawLanes(): void {
    const canvas = this.lanes;
    const width = this.container.clientWidth;
    const height = this.container.clientHeight;
    const offset = this.stage.offsetTop;
    // resizing a canvas reallocates and clears it: only when the map's size changed
    if (canvas.width !== width) canvas.width = width;
    if (canvas.height !== height) canvas.height = height;
    const ctx = canvas.getContext("2d");
    if (!ctx || !this.layout) return;
    ctx.clearRect(0, 0, width, height);
    paintLanes(ctx, this.layout.lanes, (y) => offset + this.sigma.graphToViewport({ x: 0, y: -y }).y, width);
  }
}
