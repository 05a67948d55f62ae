// Search by dataset name, system or job: exact matches first, then prefixes, then substrings.
import type { MapModel } from "./map-model.js";

export interface SearchHit {
  key: string;
  /** What matched: the name, the system, or the job writing or reading it. */
  field: "name" | "system" | "job";
  text: string;
}

function rank(text: string, q: string): number {
  const t = text.toLowerCase();
  if (t === q) return 0;
  if (t.startsWith(q)) return 1;
  if (t.split(/[./:_\s-]/).some((part) => part.startsWith(q))) return 2;
  return t.includes(q) ? 3 : -1;
}

export function search(model: MapModel, query: string, limit = 20): SearchHit[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const best = new Map<string, { hit: SearchHit; score: number }>();
  const offer = (key: string, field: SearchHit["field"], text: string, fieldCost: number): void => {
    const r = rank(text, q);
    if (r < 0) return;
    const score = r * 3 + fieldCost;
    const current = best.get(key);
    if (!current || score < current.score) best.set(key, { hit: { key, field, text }, score });
  };
  for (const n of model.nodes.values()) {
    offer(n.key, "name", n.name, 0);
    offer(n.key, "system", n.system, 2);
  }
  for (const e of model.edges) {
    offer(e.to, "job", e.job, 1);
    offer(e.from, "job", e.job, 1);
  }
  return [...best.values()]
    .sort((a, b) => a.score - b.score || a.hit.key.localeCompare(b.hit.key))
    .slice(0, limit)
    .map((b) => b.hit);
}
