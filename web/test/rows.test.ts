import assert from "node:assert/strict";
import { test } from "node:test";
import { RowsReader, splitLines } from "../src/api/ndjson.js";
import { ApiError } from "../src/api/errors.js";

test("lines split at newlines, keeping the unfinished tail", () => {
  assert.deepEqual(splitLines('{"a":1}\n[1]\n[2'), { lines: ['{"a":1}', "[1]"], rest: "[2" });
});

test("a changes stream folds into its header, rows and end", () => {
  const seen: number[] = [];
  const r = new RowsReader((row) => seen.push(row[0] as number));
  r.push('{"columns":[{"name":"id","type":"long"},{"name":"_change_type","type":"string"}],"from_snapshot_id":"1"}');
  r.push('[7,"DELETE"]');
  r.push('[7,"INSERT"]');
  r.push('{"end":{"rows":2,"truncated":true}}');
  const rows = r.finish();
  assert.deepEqual(seen, [7, 7]);
  assert.equal(rows.header.from_snapshot_id, "1");
  assert.equal(rows.truncated, true);
  assert.deepEqual(rows.rows[1], [7, "INSERT"]);
});

test("an error line, a row before the header, or a missing end fail with ApiError", () => {
  const r = new RowsReader();
  assert.throws(() => r.push("[1]"), ApiError);
  r.push('{"columns":[]}');
  assert.throws(() => r.push('{"error":{"message":"disk","type":"ServerError","code":500}}'), /disk/);
  assert.throws(() => r.finish(), /ended early/);
});
