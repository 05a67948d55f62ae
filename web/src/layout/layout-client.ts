// Asks the layout worker for a layout; only the answer to the newest request is kept.
import type { DisplayGraph } from "../model/display.js";
import type { Layout, LayoutRequest, LayoutResponse } from "./protocol.js";

export class LayoutClient {
  private readonly worker = new Worker(new URL("./layout/layout-worker.js", import.meta.url), { type: "module" });
  private latest = 0;
  private pending = new Map<number, { resolve(l: Layout | null): void; reject(e: Error): void }>();

  constructor() {
    this.worker.onmessage = (event: MessageEvent<LayoutResponse>) => {
      const r = event.data;
      const waiting = this.pending.get(r.id);
      this.pending.delete(r.id);
      if (!waiting) return;
      if ("error" in r) waiting.reject(new Error(`layout failed: ${r.error}`));
      else waiting.resolve(r.id === this.latest ? r.layout : null);
    };
  }

  /**
   * The layout of `graph` (with `splice`: `splice.base` with the group replaced by `graph`, its
   * members), or null when a newer request overtook it.
   */
  layout(graph: DisplayGraph, splice?: LayoutRequest["splice"]): Promise<Layout | null> {
    const id = ++this.latest;
    const request: LayoutRequest = { id, graph, splice };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage(request);
    });
  }
}
