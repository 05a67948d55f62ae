// Column lineage per node: each of its columns and the input columns it came from.
import type { ApiColumnInput } from "../api/types.js";
import type { MapModel } from "./map-model.js";

export interface ColumnRow {
  column: string;
  type: string | null;
  inputs: ApiColumnInput[];
  job: string | null;
}

/** The node's columns (schema order), then lineage-only columns, then dataset-wide (`*`) inputs. */
export function columnsOf(model: MapModel, key: string): ColumnRow[] {
  const schema = model.nodes.get(key)?.columns ?? [];
  const lineage = model.columns.get(key) ?? [];
  const rows: ColumnRow[] = schema.map((c) => ({ column: c.name, type: c.type, inputs: [], job: null }));
  for (const entry of lineage) {
    let row = rows.find((r) => r.column === entry.column);
    if (!row) {
      row = { column: entry.column, type: null, inputs: [], job: null };
      rows.push(row);
    }
    row.inputs.push(...entry.inputs);
    row.job = entry.job;
  }
  return rows.sort((a, b) => Number(a.column === "*") - Number(b.column === "*"));
}

/** The output columns elsewhere that read `key`'s `column`: what a change to it touches. */
export function columnConsumers(model: MapModel, key: string, column: string): { key: string; column: string }[] {
  const out: { key: string; column: string }[] = [];
  for (const [to, entries] of model.columns)
    for (const e of entries)
      if (e.inputs.some((i) => i.from === key && i.column === column)) out.push({ key: to, column: e.column });
  return out;
}
