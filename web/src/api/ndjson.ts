import { ApiError, isErrorBody } from "./errors.js";
import type { Cell, Rows, RowsHeader } from "./types.js";

/** Splits a growing text into complete lines; `rest` is the unfinished tail to prepend next time. */
export function splitLines(buffer: string): { lines: string[]; rest: string } {
  const parts = buffer.split("\n");
  const rest = parts.pop() ?? "";
  return { lines: parts.filter((l) => l.trim() !== ""), rest };
}

/** Folds the lines of a preview/changes stream (docs/api.md) into rows, in order. */
export class RowsReader {
  private header: RowsHeader | null = null;
  private readonly rows: Cell[][] = [];
  private ended: { rows: number; truncated: boolean } | null = null;

  constructor(private readonly onRow?: (row: Cell[], header: RowsHeader) => void) {}

  push(line: string): void {
    const value: unknown = JSON.parse(line);
    if (Array.isArray(value)) {
      if (!this.header) throw new ApiError("a row came before the header", "ServerError", 500);
      const row = value as Cell[];
      this.rows.push(row);
      this.onRow?.(row, this.header);
    } else if (isErrorBody(value)) {
      throw new ApiError(value.error.message, value.error.type, value.error.code);
    } else if (typeof value === "object" && value !== null && "end" in value) {
      this.ended = value.end as { rows: number; truncated: boolean };
    } else if (typeof value === "object" && value !== null && "columns" in value) {
      this.header = value as RowsHeader;
    } else {
      throw new ApiError(`unexpected line in a rows stream: ${line.slice(0, 80)}`, "ServerError", 500);
    }
  }

  finish(): Rows {
    if (!this.header || !this.ended) throw new ApiError("the rows stream ended early", "ServerError", 500);
    return { header: this.header, rows: this.rows, truncated: this.ended.truncated };
  }
}

/** Reads a streamed NDJSON body through a RowsReader as its bytes arrive. */
export async function readRows(body: ReadableStream<Uint8Array>, reader: RowsReader): Promise<Rows> {
  const decoder = new TextDecoder();
  const source = body.getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await source.read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    const { lines, rest } = splitLines(done ? buffer + "\n" : buffer);
    lines.forEach((l) => reader.push(l));
    buffer = rest;
    if (done) return reader.finish();
  }
}
