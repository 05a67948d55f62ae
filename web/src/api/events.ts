import { API_BASE } from "./client.js";
import type { ApiCommit, ApiLineageEvent, LiveEvent } from "./types.js";

export type StreamState = "connecting" | "open" | "reconnecting" | "closed";

export interface Subscription {
  close(): void;
  /** The id of the last event received: where a new connection resumes. */
  lastSeq(): number | null;
}

export interface SubscribeOptions {
  table?: string;
  kinds?: ("commit" | "lineage")[];
  /** Resume after this commit_seq (e.g. the graph's newest) instead of from now. */
  sinceSeq?: number;
  onEvent(event: LiveEvent): void;
  onState(state: StreamState): void;
  base?: string;
  /** How long to wait before opening a new connection after the server closed one. */
  retryMs?: number;
}

/** A live event from an SSE message, or null for a kind this client does not know. */
export function parseLiveEvent(kind: string, id: string, data: string): LiveEvent | null {
  if (!/^\d+$/.test(id)) return null;
  const seq = Number(id);
  if (kind === "commit") return { kind, seq, data: JSON.parse(data) as ApiCommit };
  if (kind === "lineage") return { kind, seq, data: JSON.parse(data) as ApiLineageEvent };
  return null;
}

export function eventsUrl(
  base: string,
  table: string | undefined,
  kinds: string[] | undefined,
  sinceSeq: number | null,
): string {
  const q = new URLSearchParams();
  if (table) q.set("table", table);
  if (kinds) q.set("kind", kinds.join(","));
  if (sinceSeq !== null) q.set("since_seq", String(sinceSeq));
  const text = q.toString();
  return `${base}/events${text ? `?${text}` : ""}`;
}

/**
 * Subscribes to `/events`. The browser's EventSource reconnects by itself with Last-Event-ID;
 * when the server closes the stream for good (an error status), a new EventSource resumes from
 * the last id seen through `since_seq`.
 */
export function subscribeEvents(options: SubscribeOptions): Subscription {
  const base = options.base ?? API_BASE;
  let last: number | null = options.sinceSeq ?? null;
  let source: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  const onMessage = (e: MessageEvent<string>): void => {
    const event = parseLiveEvent(e.type, e.lastEventId, e.data);
    if (!event) return;
    last = event.seq;
    options.onEvent(event);
  };

  const open = (): void => {
    options.onState(last === null ? "connecting" : "reconnecting");
    const es = new EventSource(eventsUrl(base, options.table, options.kinds, last));
    source = es;
    es.addEventListener("open", () => options.onState("open"));
    es.addEventListener("commit", onMessage);
    es.addEventListener("lineage", onMessage);
    es.addEventListener("error", () => {
      if (closed) return;
      if (es.readyState === EventSource.CONNECTING) {
        options.onState("reconnecting");
        return;
      }
      es.close();
      options.onState("reconnecting");
      timer = setTimeout(open, options.retryMs ?? 3000);
    });
  };

  open();
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      source?.close();
      options.onState("closed");
    },
    lastSeq: () => last,
  };
}
