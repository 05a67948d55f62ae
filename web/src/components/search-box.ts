// The search box: datasets by name, system or job; Enter or a click selects the first hit.
import type { SearchHit } from "../model/search.js";
import { el } from "./dom.js";

export function searchBox(find: (q: string) => SearchHit[], onPick: (key: string) => void): HTMLElement {
  const input = el("input", {
    type: "search",
    placeholder: "search datasets, systems, jobs  ( / )",
    "aria-label": "search",
  });
  const list = el("ul", { class: "hits", role: "listbox" });
  let hits: SearchHit[] = [];
  const pick = (key: string): void => {
    list.replaceChildren();
    input.blur();
    onPick(key);
  };
  input.addEventListener("input", () => {
    hits = find(input.value);
    list.replaceChildren(
      ...hits.map((h) => {
        const li = el("li", { role: "option" }, h.key, el("span", { class: "muted" }, ` ${h.field}: ${h.text}`));
        li.addEventListener("click", () => pick(h.key));
        return li;
      }),
    );
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && hits.length > 0) pick(hits[0].key);
    if (e.key === "Escape") {
      input.value = "";
      list.replaceChildren();
      input.blur();
    }
  });
  return el("div", { class: "search" }, input, list);
}
