// Messages between the map and the layout worker.
import type { DisplayGraph } from "../model/display.js";

export interface LayoutRequest {
  id: number;
  /** What to lay out: the whole drawn graph, or with `splice` only an opened group's members. */
  graph: DisplayGraph;
  /** The drawn layout in which the members take the place of `group` (of lane `lane`). */
  splice?: { base: Layout; group: string; lane: string };
}

export interface Point {
  x: number;
  y: number;
}

export interface LaneBand {
  system: string;
  top: number;
  bottom: number;
}

export interface Layout {
  positions: Record<string, Point>;
  lanes: LaneBand[];
}

export type LayoutResponse = { id: number; layout: Layout } | { id: number; error: string };

export const NODE_WIDTH = 180;
export const NODE_HEIGHT = 36;
