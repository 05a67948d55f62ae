// The timeline view's data: a bar per commit (skade) or write (other systems) in a lane per system.
import type { ApiCommit, Millis } from "../api/types.js";
import { lanesOf, type MapModel } from "./map-model.js";

export interface Bar {
  t: Millis;
  key: string;
  label: string;
}

export interface TimelineLane {
  system: string;
  bars: Bar[];
}

export function timeline(model: MapModel, commits: readonly ApiCommit[]): TimelineLane[] {
  return lanesOf(model).map(({ system, keys }) => {
    const bars: Bar[] =
      system === "skade"
        ? commits.map((c) => ({
            t: c.committed_at_ms,
            key: c.table,
            label: `${c.table} ${c.action} ${c.operation}`.trim(),
          }))
        : keys.flatMap((k) =>
            (model.nodes.get(k)?.write_times_ms ?? []).map((t) => ({ t, key: k, label: `${k} write` })),
          );
    return { system, bars: bars.sort((a, b) => a.t - b.t) };
  });
}
