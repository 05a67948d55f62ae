// The time slider: the graph as of a moment between its first and newest event; the right end is now.
import type { Millis } from "../api/types.js";
import { el, formatTime } from "./dom.js";

export function timeSlider(onChange: (t: Millis | null) => void): {
  element: HTMLElement;
  setRange(range: { min: Millis; max: Millis } | null, value: Millis | null): void;
} {
  const input = el("input", { type: "range", min: "0", max: "1000", value: "1000", "aria-label": "graph as of" });
  const label = el("span", { class: "muted" }, "now");
  let range: { min: Millis; max: Millis } | null = null;
  const timeOf = (v: number): Millis | null =>
    range === null || v >= 1000 ? null : Math.round(range.min + ((range.max - range.min) * v) / 1000);
  input.addEventListener("input", () => {
    const t = timeOf(Number(input.value));
    label.textContent = t === null ? "now" : formatTime(t);
    onChange(t);
  });
  return {
    element: el("label", { class: "slider" }, "as of ", input, label),
    setRange(r, value) {
      range = r;
      input.disabled = r === null;
      const v = r === null || value === null || r.max === r.min ? 1000 : ((value - r.min) / (r.max - r.min)) * 1000;
      input.value = String(Math.max(0, Math.min(1000, Math.round(v))));
      label.textContent = value === null ? "now" : formatTime(value);
    },
  };
}
