// The map's renderer: what the app asks of it, and which one draws (render/renderer.ts).
import type { Layout } from "../layout/protocol.js";
import type { DisplayGraph } from "../model/display.js";
import type { Look, Looks } from "../model/looks.js";
import { CanvasView } from "../render/canvas-view.js";
import { chooseRenderer, webglRenderer, type RendererKind } from "../render/renderer.js";
import { SigmaView } from "../render/sigma-view.js";

/** A drawn node as the page shows it: client coordinates (CSS pixels) and its look. */
export interface DrawnNode {
  id: string;
  label: string;
  x: number;
  y: number;
  look: Look;
}

/** A lane band as the page shows it: its client y range. */
export interface DrawnLane {
  system: string;
  top: number;
  bottom: number;
}

/** A name as the page shows it: its box in client coordinates. */
export interface DrawnLabel {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface MapView {
  /** Draws `display` at `layout` with `looks`. */
  show(display: DisplayGraph, layout: Layout, looks: Looks): void;
  /** New looks for the drawn graph. */
  repaint(looks: Looks): void;
  /** The drawn nodes where the page shows them (the test hook, and tools). */
  drawnNodes(): DrawnNode[];
  drawnEdges(): { id: string; from: string; to: string; hot: boolean }[];
  drawnLanes(): DrawnLane[];
  /** Moves the camera to a node when it is not in view (a node in view stays where it is). */
  reveal(id: string): void;
  /** The names standing at rest, or null where the renderer does not tell (sigma). */
  drawnLabels(): DrawnLabel[] | null;
  /** How long its recent frames took to draw on the main thread, oldest first (ms). */
  drawTimes(): number[];
}

export function createMapView(
  container: HTMLElement,
  onSelect: (id: string | null, extend: boolean) => void,
): { view: MapView; kind: RendererKind } {
  const kind = chooseRenderer(new URLSearchParams(location.search).get("renderer"), webglRenderer());
  const view = kind === "canvas" ? new CanvasView(container, onSelect) : new SigmaView(container, onSelect);
  return { view, kind };
}
