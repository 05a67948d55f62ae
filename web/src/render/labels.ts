// Which labels stand: level of detail for the map's names. Labels are placed in priority order
// (the selection and what it lights first, then groups, then the rest), and one that would overlap
// a label already standing is left out, so no two names are ever drawn over each other (an opened
// namespace's grid of datasets had its names run into their neighbours'). A spatial hash of cells
// keeps this linear in the labels in view. Obstacles (the nodes' discs) always stand: a name that
// would run over another node is left out too.

export interface LabelBox {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Higher stands first. */
  priority: number;
}

const CELL = 64;

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The ids of the labels that stand. */
export function placeLabels(boxes: readonly LabelBox[], obstacles: readonly Rect[] = [], gap = 2): Set<string> {
  const order = [...boxes].sort((a, b) => b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const cells = new Map<string, Rect[]>();
  const placed = new Set<string>();
  const cell = (v: number): number => Math.floor(v / CELL);
  const occupy = (box: Rect): void => {
    for (let cx = cell(box.x); cx <= cell(box.x + box.width); cx++)
      for (let cy = cell(box.y); cy <= cell(box.y + box.height); cy++) {
        const key = `${cx},${cy}`;
        const list = cells.get(key);
        if (list) list.push(box);
        else cells.set(key, [box]);
      }
  };
  obstacles.forEach(occupy);
  const overlaps = (a: Rect, b: Rect): boolean =>
    a.x < b.x + b.width + gap && b.x < a.x + a.width + gap && a.y < b.y + b.height + gap && b.y < a.y + a.height + gap;
  for (const box of order) {
    let free = true;
    // a neighbour within `gap` may stand in the next cell over
    for (let cx = cell(box.x - gap); cx <= cell(box.x + box.width + gap) && free; cx++)
      for (let cy = cell(box.y - gap); cy <= cell(box.y + box.height + gap) && free; cy++)
        for (const other of cells.get(`${cx},${cy}`) ?? [])
          if (overlaps(box, other)) {
            free = false;
            break;
          }
    if (!free) continue;
    placed.add(box.id);
    occupy(box);
  }
  return placed;
}
