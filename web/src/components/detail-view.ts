// The drill-down of a table: schema, partition spec, properties, the snapshot timeline, rows
// at a chosen snapshot, the changelog between two chosen snapshots, and a snapshot's files
// summed per partition.
import type { ApiClient } from "../api/client.js";
import type { ApiNodeDetail, ApiTableDetail, Rows } from "../api/types.js";
import type { ColumnRow } from "../model/columns.js";
import { clear, el, formatTime } from "./dom.js";
import { rowsTable } from "./rows-table.js";

function keyValues(entries: [string, string][]): HTMLElement {
  return el("table", { class: "kv" }, ...entries.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v))));
}

function snapshotPicker(table: ApiTableDetail, label: string, initial: string | null): HTMLSelectElement {
  const select = el("select", { "aria-label": label });
  for (const s of table.snapshots) {
    const option = el(
      "option",
      { value: s.snapshot_id },
      `${formatTime(s.timestamp_ms)} ${s.operation} ${s.snapshot_id}`,
    );
    option.selected = s.snapshot_id === initial;
    select.append(option);
  }
  return select;
}

function rowsArea(load: () => Promise<Rows>): { area: HTMLElement; run(): void } {
  const area = el("div", { class: "rows-area" });
  return {
    area,
    run() {
      area.replaceChildren(el("p", { class: "muted" }, "loading…"));
      load()
        .then((rows) => area.replaceChildren(rowsTable(rows)))
        .catch((e: unknown) => area.replaceChildren(el("p", { class: "error" }, String(e))));
    },
  };
}

function tableSections(api: ApiClient, key: string, t: ApiTableDetail): HTMLElement[] {
  const schema = el(
    "table",
    {},
    el("tr", {}, el("th", {}, "id"), el("th", {}, "name"), el("th", {}, "type"), el("th", {}, "required")),
    ...t.schema.fields.map((f) =>
      el(
        "tr",
        {},
        el("td", {}, String(f.id)),
        el("td", {}, f.name),
        el("td", {}, f.type),
        el("td", {}, f.required ? "yes" : ""),
      ),
    ),
  );
  const spec = t.partition_spec.fields.map((f): [string, string] => [f.name, `${f.transform}(${f.source_id})`]);
  const timeline = el(
    "ol",
    { class: "snapshots" },
    ...t.snapshots.map((s) =>
      el(
        "li",
        {},
        `${formatTime(s.timestamp_ms)} ${s.operation} +${s.added_records ?? "?"} = ${s.total_records ?? "?"} rows`,
        el("span", { class: "muted" }, ` ${s.snapshot_id}${s.parent_snapshot_id ? ` ← ${s.parent_snapshot_id}` : ""}`),
      ),
    ),
  );
  const at = snapshotPicker(t, "snapshot to preview", t.current_snapshot_id);
  const preview = rowsArea(() => api.preview(key, { snapshot: at.value, limit: 100 }));
  const layoutAt = snapshotPicker(t, "partitions at snapshot", t.current_snapshot_id);
  const partitions = rowsArea(() => api.partitions(key, { snapshot: layoutAt.value }));
  const from = snapshotPicker(t, "changes after", t.snapshots.at(-2)?.snapshot_id ?? null);
  const to = snapshotPicker(t, "changes up to", t.current_snapshot_id);
  const changes = rowsArea(() => api.changes(key, { from: from.value, to: to.value, limit: 1000 }));
  const button = (label: string, run: () => void): HTMLButtonElement => {
    const b = el("button", {}, label);
    b.addEventListener("click", run);
    return b;
  };
  return [
    el("p", { class: "muted" }, `Iceberg format v${t.format_version}`),
    el("h3", {}, "Schema"),
    schema,
    el("h3", {}, "Partition spec"),
    spec.length > 0 ? keyValues(spec) : el("p", { class: "muted" }, "unpartitioned"),
    el("h3", {}, "Properties"),
    Object.keys(t.properties).length > 0
      ? keyValues(Object.entries(t.properties))
      : el("p", { class: "muted" }, "none"),
    el("h3", {}, "Snapshots"),
    timeline,
    el("h3", {}, "Rows"),
    el("div", { class: "controls" }, at, button("Preview", preview.run)),
    preview.area,
    el("h3", {}, "Changes"),
    el("div", { class: "controls" }, from, to, button("Show changes", changes.run)),
    changes.area,
    el("h3", {}, "Partitions"),
    el("div", { class: "controls" }, layoutAt, button("Show partitions", partitions.run)),
    partitions.area,
  ];
}

/** Column lineage; a table's columns without any lineage are left to its schema below. */
function columnSection(columns: ColumnRow[], hasSchema: boolean): HTMLElement[] {
  const lineage = columns.some((c) => c.inputs.length > 0);
  if (columns.length === 0 || (!lineage && hasSchema)) return [];
  return [
    el("h3", {}, lineage ? "Column lineage" : "Columns"),
    el(
      "table",
      {},
      ...columns.map((c) =>
        el(
          "tr",
          {},
          el("td", {}, c.column),
          el("td", { class: "muted" }, c.type ?? ""),
          el("td", {}, c.inputs.map((i) => `${i.from}.${i.column} (${i.type} ${i.subtype})`.trim()).join(", ")),
        ),
      ),
    ),
  ];
}

export function renderDetail(host: HTMLElement, api: ApiClient, d: ApiNodeDetail, columns: ColumnRow[]): void {
  clear(host);
  const w = d.latest_writer;
  host.append(
    keyValues([
      ["system", d.node.system],
      ["namespace", d.node.namespace],
      ["rows", d.node.row_count === null ? "—" : String(d.node.row_count)],
      ["last write", `${formatTime(d.node.last_write_ms)} by ${d.node.last_writer || "—"}`],
      ...(d.node.updated_in_place_by.length > 0
        ? [["updated in place by", d.node.updated_in_place_by.join(", ")] as [string, string]]
        : []),
      [
        "freshness",
        `${d.freshness.state}${d.freshness.stale_after_ms ? ` (stale after ${formatTime(d.freshness.stale_after_ms)})` : ""}`,
      ],
      [
        "latest writer",
        w ? `${w.job} ${w.operation} ${w.run_state}${w.commit_seq !== null ? ` #${w.commit_seq}` : ""}` : "—",
      ],
    ]),
    ...columnSection(columns, d.table !== null),
    ...(d.table ? tableSections(api, d.node.key, d.table) : []),
  );
}
