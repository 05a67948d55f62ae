// The time slider: the graph as of one of the moments it changed; the right end is now.
import type { Millis } from "../api/types.js";
import { stepAt } from "../model/time.js";
import { el, formatTime } from "./dom.js";

export function timeSlider(onChange: (t: Millis | null) => void): {
  element: HTMLElement;
  setSteps(steps: readonly Millis[], value: Millis | null): void;
} {
  const input = el("input", { type: "range", min: "0", max: "0", value: "0", step: "1", "aria-label": "graph as of" });
  const label = el("span", { class: "muted" }, "now");
  let steps: readonly Millis[] = [];
  const timeOf = (v: number): Millis | null => (v >= steps.length ? null : steps[v]);
  input.addEventListener("input", () => {
    const t = timeOf(Number(input.value));
    label.textContent = t === null ? "now" : formatTime(t);
    onChange(t);
  });
  return {
    element: el("label", { class: "slider" }, "as of ", input, label),
    setSteps(s, value) {
      steps = s;
      input.disabled = s.length === 0;
      input.max = String(s.length);
      input.value = String(value === null ? s.length : stepAt(s, value));
      label.textContent = value === null ? "now" : formatTime(value);
    },
  };
}
