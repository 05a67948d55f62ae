import assert from "node:assert/strict";
import { test } from "node:test";
import { BURST_MS, freshness } from "../src/model/freshness.js";

const H = 3_600_000;
const S = 1000;

test("fresh within three median gaps of the last write, stale after", () => {
  const node = { write_times_ms: [0, H, 2 * H, 3 * H, 10 * H], dropped_ms: null };
  // gaps 1,1,1,7 h: median 1 h, so stale after 10 h + 3 h
  const at = freshness(node, 12 * H);
  assert.deepEqual(at, { state: "fresh", last_write_ms: 10 * H, median_interval_ms: H, stale_after_ms: 13 * H });
  assert.equal(freshness(node, 13 * H).state, "fresh");
  assert.equal(freshness(node, 13 * H + 1).state, "stale");
});

test("the median of an even count of gaps is the mean of the middle two", () => {
  const f = freshness({ write_times_ms: [0, H, 3 * H, 4 * H, 6 * H], dropped_ms: null }, 6 * H);
  assert.equal(f.median_interval_ms, 1.5 * H);
  assert.equal(f.stale_after_ms, 6 * H + 4.5 * H);
});

test("write times in any order give the same answer", () => {
  const a = freshness({ write_times_ms: [3 * H, 0, 2 * H, H], dropped_ms: null }, 10 * H);
  assert.equal(a.state, "stale");
  assert.equal(a.last_write_ms, 3 * H);
  assert.deepEqual(a, freshness({ write_times_ms: [0, H, 2 * H, 3 * H], dropped_ms: null }, 10 * H));
});

test("a burst of writes is one write: a pipeline run seconds long is never stale", () => {
  // what the end-to-end pipelines do: several commits seconds apart, looked at much later
  const run = { write_times_ms: [0, 2 * S, 3 * S, 7 * S, 30 * S, 31 * S], dropped_ms: null };
  assert.deepEqual(freshness(run, 1000 * H), {
    state: "unknown",
    last_write_ms: 31 * S,
    median_interval_ms: null,
    stale_after_ms: null,
  });
  // hourly runs of a few commits each: the gaps inside the runs do not count
  const hourly = [0, H, 2 * H, 3 * H].flatMap((t) => [t, t + 5 * S, t + BURST_MS]);
  const f = freshness({ write_times_ms: hourly, dropped_ms: null }, 3 * H + BURST_MS);
  assert.equal(f.median_interval_ms, H - BURST_MS);
  assert.equal(f.state, "fresh");
  assert.equal(freshness({ write_times_ms: hourly, dropped_ms: null }, 7 * H).state, "stale");
});

test("fewer than three gaps between bursts, or a dropped node, is unknown", () => {
  assert.equal(freshness({ write_times_ms: [0, H, 2 * H], dropped_ms: null }, 100 * H).state, "unknown");
  assert.equal(freshness({ write_times_ms: [], dropped_ms: null }, 0).last_write_ms, null);
  assert.equal(freshness({ write_times_ms: [0, H, 2 * H, 3 * H], dropped_ms: 4 * H }, 100 * H).state, "unknown");
  assert.equal(freshness({ write_times_ms: [0, H, 2 * H, 3 * H], dropped_ms: null }, 100 * H).state, "stale");
});
