// The timeline: one row per system, a bar per commit or write at its time.
import type { TimelineLane } from "../model/timeline.js";
import { el } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

export function renderTimeline(host: HTMLElement, lanes: TimelineLane[], onPick: (key: string) => void): void {
  const times = lanes.flatMap((l) => l.bars.map((b) => b.t));
  if (times.length === 0) {
    host.replaceChildren(el("p", { class: "muted" }, "no commits yet"));
    return;
  }
  const min = Math.min(...times);
  const span = Math.max(Math.max(...times) - min, 1);
  const width = 1000;
  const rowHeight = 22;
  const root = svg("svg", { viewBox: `0 0 ${width + 80} ${lanes.length * rowHeight}`, class: "timeline", role: "img" });
  lanes.forEach((lane, i) => {
    const label = svg("text", { x: "0", y: String(i * rowHeight + 15), class: "lane-label" });
    label.textContent = lane.system;
    root.append(label);
    // bars closer than a pixel are one rect (a big map writes thousands): its title counts them
    const columns = new Map<number, { first: TimelineLane["bars"][number]; count: number }>();
    for (const bar of lane.bars) {
      const x = Math.round(((bar.t - min) / span) * width);
      const column = columns.get(x);
      if (column) column.count++;
      else columns.set(x, { first: bar, count: 1 });
    }
    for (const [x, { first: bar, count }] of columns) {
      const rect = svg("rect", {
        x: String(80 + x),
        y: String(i * rowHeight + 3),
        width: "3",
        height: String(rowHeight - 6),
        class: "bar",
      });
      const title = svg("title", {});
      const more = count > 1 ? ` (and ${count - 1} more)` : "";
      title.textContent = `${new Date(bar.t).toISOString()} ${bar.label}${more}`;
      rect.append(title);
      rect.addEventListener("click", () => onPick(bar.key));
      root.append(rect);
    }
  });
  host.replaceChildren(root);
}
