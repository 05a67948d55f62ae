// The Canvas 2D map's camera: plain functions from a bounding box, a viewport and a camera to
// the affine map graph -> screen (screen = graph * scale + offset). The camera is held relative
// to the box (as sigma holds it): a new layout with a bigger box is framed the same way, and the
// default camera fits the box with a padding.

export interface Box {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

export interface Size {
  width: number;
  height: number;
}

/** Where the camera looks (graph units of the box's longest side, from its centre) and how far: ratio 1 fits. */
export interface Camera {
  x: number;
  y: number;
  ratio: number;
}

export interface Frame {
  scale: number;
  offsetX: number;
  offsetY: number;
  /** The scale at which the box fits (ratio 1). */
  fitScale: number;
}

export const DEFAULT_CAMERA: Camera = { x: 0, y: 0, ratio: 1 };
export const MIN_RATIO = 1 / 40;
export const MAX_RATIO = 8;

const extent = (box: Box): number => Math.max(box.maxX - box.minX, box.maxY - box.minY, 1);

export function frameOf(box: Box, view: Size, camera: Camera, padding = 48): Frame {
  const w = Math.max(box.maxX - box.minX, 1);
  const h = Math.max(box.maxY - box.minY, 1);
  const fitScale = Math.min(Math.max(view.width - 2 * padding, 1) / w, Math.max(view.height - 2 * padding, 1) / h);
  const scale = fitScale / camera.ratio;
  const e = extent(box);
  const cx = (box.minX + box.maxX) / 2 + camera.x * e;
  const cy = (box.minY + box.maxY) / 2 + camera.y * e;
  return { scale, offsetX: view.width / 2 - cx * scale, offsetY: view.height / 2 - cy * scale, fitScale };
}

export function toScreen(f: Frame, x: number, y: number): { x: number; y: number } {
  return { x: x * f.scale + f.offsetX, y: y * f.scale + f.offsetY };
}

export function toGraph(f: Frame, x: number, y: number): { x: number; y: number } {
  return { x: (x - f.offsetX) / f.scale, y: (y - f.offsetY) / f.scale };
}

/** The camera moved by a drag of (dx, dy) screen pixels: what was under the pointer stays under it. */
export function panBy(camera: Camera, box: Box, f: Frame, dx: number, dy: number): Camera {
  const e = extent(box);
  return { ...camera, x: camera.x - dx / f.scale / e, y: camera.y - dy / f.scale / e };
}

/** The camera zoomed by `factor` (> 1 in) about screen point (px, py), which stays where it is. */
export function zoomAt(camera: Camera, box: Box, view: Size, px: number, py: number, factor: number): Camera {
  const before = frameOf(box, view, camera);
  const ratio = Math.min(MAX_RATIO, Math.max(MIN_RATIO, camera.ratio / factor));
  const anchor = toGraph(before, px, py);
  const scale = before.fitScale / ratio;
  // the new centre puts `anchor` at (px, py) again
  const cx = anchor.x - (px - view.width / 2) / scale;
  const cy = anchor.y - (py - view.height / 2) / scale;
  const e = extent(box);
  return { x: (cx - (box.minX + box.maxX) / 2) / e, y: (cy - (box.minY + box.maxY) / 2) / e, ratio };
}

/** The camera centred on graph point (x, y), at the same zoom. */
export function centreOn(camera: Camera, box: Box, x: number, y: number): Camera {
  const e = extent(box);
  return { ratio: camera.ratio, x: (x - (box.minX + box.maxX) / 2) / e, y: (y - (box.minY + box.maxY) / 2) / e };
}
