// The side panel of a selected node: impact (downstream) and provenance (upstream) lists with a
// CSV export, then the node's drill-down.
import type { ApiClient } from "../api/client.js";
import type { ImpactDirection } from "../api/types.js";
import type { ColumnRow } from "../model/columns.js";
import type { MapModel } from "../model/map-model.js";
import { downstream, upstream } from "../model/traverse.js";
import type { Trace } from "../model/url-state.js";
import { renderDetail } from "./detail-view.js";
import { clear, el, formatTime } from "./dom.js";

function impactList(
  api: ApiClient,
  model: MapModel,
  key: string,
  direction: ImpactDirection,
  depth: number,
  trace: Trace | null,
  onTrace: (trace: Trace | null) => void,
): HTMLElement {
  const reached = direction === "downstream" ? downstream(model, key, depth) : upstream(model, key, depth);
  const csv = el("a", { href: api.impactCsvUrl(key, direction, depth), download: `${key}-${direction}.csv` }, "CSV");
  const mine: Trace = direction === "downstream" ? "down" : "up";
  const on = trace === mine;
  const toggle = el(
    "button",
    { class: "trace", "data-trace": mine, "aria-pressed": String(on), title: "light only these on the map" },
    on ? "untrace" : "trace",
  );
  toggle.addEventListener("click", () => onTrace(on ? null : mine));
  return el(
    "section",
    {},
    el("h3", {}, `${direction === "downstream" ? "Impact" : "Provenance"} (${reached.length}) `, toggle, " ", csv),
    el(
      "ol",
      { class: "impact" },
      ...reached.map((r) => {
        const n = model.nodes.get(r.key);
        return el(
          "li",
          { "data-key": r.key },
          `${"·".repeat(r.depth)} ${r.key}`,
          el("span", { class: "muted" }, ` ${n?.last_writer ?? ""} ${formatTime(n?.last_write_ms ?? null)}`),
        );
      }),
    ),
  );
}

export function renderSidePanel(
  host: HTMLElement,
  api: ApiClient,
  model: MapModel,
  key: string | null,
  depth: number,
  columns: ColumnRow[],
  trace: Trace | null = null,
  onTrace: (trace: Trace | null) => void = () => undefined,
): void {
  clear(host);
  if (!key) {
    host.append(el("p", { class: "muted" }, "Select a dataset (click, search, or arrow keys)."));
    return;
  }
  const detail = el("div", {}, el("p", { class: "muted" }, "loading detail…"));
  host.append(
    el("h2", {}, key),
    impactList(api, model, key, "downstream", depth, trace, onTrace),
    impactList(api, model, key, "upstream", depth, trace, onTrace),
    detail,
  );
  api
    .node(key)
    .then((d) => renderDetail(detail, api, d, columns))
    .catch((e: unknown) => detail.replaceChildren(el("p", { class: "error" }, String(e))));
}
