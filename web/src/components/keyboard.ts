// Keyboard navigation: arrows move the selection, `/` searches, `f` toggles focus, `+`/`-`
// change its depth, `p` marks a path end, `i` traces the
// selection's impact, `t` switches the theme, Escape clears.
import type { NavKey } from "../model/navigation.js";

export interface KeyActions {
  move(key: NavKey): void;
  search(): void;
  toggleFocus(): void;
  depth(delta: number): void;
  pathEnd(): void;
  trace(): void;
  theme(): void;
  clear(): void;
}

export function bindKeys(actions: KeyActions): void {
  document.addEventListener("keydown", (e) => {
    const target = e.target as HTMLElement | null;
    if (target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    if (e.key === "ArrowRight" || e.key === "ArrowLeft" || e.key === "ArrowUp" || e.key === "ArrowDown")
      actions.move(e.key);
    else if (e.key === "/") actions.search();
    else if (e.key === "f") actions.toggleFocus();
    else if (e.key === "+" || e.key === "=") actions.depth(1);
    else if (e.key === "-") actions.depth(-1);
    else if (e.key === "p") actions.pathEnd();
    else if (e.key === "i") actions.trace();
    else if (e.key === "t") actions.theme();
    else if (e.key === "Escape") actions.clear();
    else return;
    e.preventDefault();
  });
}
