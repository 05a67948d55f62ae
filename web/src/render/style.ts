// What both renderers share: a look's colour and size, the lane bands, the gutter.
import type { LaneBand } from "../layout/protocol.js";
import type { DisplayNode } from "../model/display.js";
import type { Look } from "../model/looks.js";
import { color } from "../components/theme.js";

/** The width of the lane names' column left of the drawing (styles.css: .map .stage). */
export const GUTTER = 88;

/** The theme's colour of each look, read once per theme (getComputedStyle per node is slow). */
export function lookColours(): Record<Look, string> {
  return {
    normal: color("node"),
    selected: color("accent"),
    highlight: color("highlight"),
    dim: color("dim"),
    stale: color("stale"),
    failed: color("failed"),
    dropped: color("dim"),
    pulse: color("pulse"),
  };
}

/** A node's radius in pixels: systems and namespaces bigger than datasets. */
export function baseSize(n: Pick<DisplayNode, "level" | "group">): number {
  return n.level === "system" ? 12 : n.group ? 9 : 6;
}

export function lookSize(look: Look, size: number): number {
  return look === "selected" || look === "pulse" ? 10 : size;
}

/** Paints the lane bands and their names; `yOf` maps a graph y to the canvas. */
export function paintLanes(
  ctx: CanvasRenderingContext2D,
  lanes: readonly LaneBand[],
  yOf: (y: number) => number,
  width: number,
): void {
  ctx.font = "12px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  const lane = color("lane");
  const alt = color("lane-alt");
  const muted = color("muted");
  lanes.forEach((l, i) => {
    const a = yOf(l.top);
    const b = yOf(l.bottom);
    const top = Math.min(a, b);
    ctx.fillStyle = i % 2 === 0 ? lane : alt;
    ctx.fillRect(0, top, width, Math.abs(b - a));
    ctx.fillStyle = muted;
    ctx.fillText(l.system, 8, top + Math.abs(b - a) / 2, GUTTER - 12);
  });
}
