// Messages between the map and the layout worker.
import type { DisplayGraph } from "../model/display.js";

export interface LayoutRequest {
  id: number;
  graph: DisplayGraph;
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
