// A small read-only hook for end-to-end tests and tools: `window.__skadeMap` tells what the map
// shows (drawn nodes with their looks and page positions, edges, lanes) and the view state.
import type { ViewState } from "../model/url-state.js";
import type { DrawnLabel, DrawnLane, DrawnNode } from "./map-view.js";

export interface MapProbe {
  /** The graph and commit log have loaded. */
  loaded(): boolean;
  /** How many layouts have been drawn. */
  drawn(): number;
  state(): ViewState;
  nodes(): DrawnNode[];
  edges(): { id: string; from: string; to: string; hot: boolean }[];
  lanes(): DrawnLane[];
  /** The names standing, or null where the renderer does not tell. */
  labels(): DrawnLabel[] | null;
  /** Which renderer draws the map (render/renderer.ts). */
  renderer(): string;
  /** How long the renderer's recent frames took to draw on the main thread (ms, oldest first). */
  drawMs(): number[];
}

export function exposeProbe(probe: MapProbe): void {
  (window as unknown as { __skadeMap: MapProbe }).__skadeMap = probe;
}
