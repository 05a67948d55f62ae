import assert from "node:assert/strict";
import { test } from "node:test";
import { freshness } from "../src/model/freshness.js";

const H = 3_600_000;

test("fresh within three median intervals of the last write, stale after", () => {
  const node = { write_times_ms: [0, H, 2 * H, 3 * H, 10 * H], dropped_ms: null };
  // intervals 1,1,1,7 h: median 1 h, so stale after 10 h + 3 h
  const at = freshness(node, 12 * H);
  assert.deepEqual(at, { state: "fresh", last_write_ms: 10 * H, median_interval_ms: H, stale_after_ms: 13 * H });
  assert.equal(freshness(node, 13 * H).state, "fresh");
  assert.equal(freshness(node, 13 * H + 1).state, "stale");
});

test("the median of an even count of intervals is the mean of the middle two", () => {
  const f = freshness({ write_times_ms: [0, H, 3 * H], dropped_ms: null }, 3 * H);
  assert.equal(f.median_interval_ms, 1.5 * H);
  assert.equal(f.stale_after_ms, 3 * H + 4.5 * H);
});

test("write times in any order give the same answer", () => {
  const a = freshness({ write_times_ms: [2 * H, 0, H], dropped_ms: null }, 10 * H);
  assert.equal(a.state, "stale");
  assert.equal(a.last_write_ms, 2 * H);
});

test("fewer than two intervals, or a dropped node, is unknown", () => {
  assert.equal(freshness({ write_times_ms: [0, H], dropped_ms: null }, 100 * H).state, "unknown");
  assert.equal(freshness({ write_times_ms: [], dropped_ms: null }, 0).last_write_ms, null);
  assert.equal(freshness({ write_times_ms: [0, H, 2 * H], dropped_ms: 3 * H }, 100 * H).state, "unknown");
});
