// A table of preview or changelog rows; `_change_type` cells are coloured by kind.
import type { Cell, Rows } from "../api/types.js";
import { el } from "./dom.js";

function text(cell: Cell): string {
  if (cell === null) return "null";
  return typeof cell === "object" ? JSON.stringify(cell) : String(cell);
}

export function rowsTable(rows: Rows): HTMLElement {
  const names = rows.header.columns.map((c) => c.name);
  const changeAt = names.indexOf("_change_type");
  const head = el("tr", {}, ...rows.header.columns.map((c) => el("th", { title: c.type }, c.name)));
  const body = rows.rows.map((r) =>
    el(
      "tr",
      changeAt >= 0 ? { class: `change-${String(r[changeAt]).toLowerCase()}` } : {},
      ...r.map((cell, i) => el("td", i === changeAt ? { class: "change-type" } : {}, text(cell))),
    ),
  );
  return el(
    "div",
    { class: "rows" },
    el("table", {}, el("thead", {}, head), el("tbody", {}, ...body)),
    el("p", { class: "muted" }, `${rows.rows.length} rows${rows.truncated ? " (more not shown)" : ""}`),
  );
}
