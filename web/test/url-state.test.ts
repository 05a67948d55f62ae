import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_STATE, decodeState, encodeState, type ViewState } from "../src/model/url-state.js";

test("a view state survives the round trip through the address", () => {
  const state: ViewState = {
    selected: "spark:/data/wh/shop/gold rest",
    focus: "shop.orders",
    up: 2,
    down: 0,
    time: Date.parse("2026-12-01T10:30:17.029Z"),
    path: ["kafka:orders", "mart.daily"],
    trace: "down",
    systems: ["skade", "spark"],
  };
  const hash = encodeState(state);
  assert.deepEqual(decodeState(`#${hash}`), state);
  assert.deepEqual(decodeState(hash), state);
});

test("the default state is an empty hash, and an empty hash is the default state", () => {
  assert.equal(encodeState(DEFAULT_STATE), "");
  assert.deepEqual(decodeState(""), DEFAULT_STATE);
});

test("malformed parts fall back to their defaults", () => {
  const s = decodeState("#up=-1&down=x&t=yesterday&from=a&systems=,,&trace=sideways");
  assert.equal(s.trace, null);
  assert.equal(s.up, 1);
  assert.equal(s.down, 1);
  assert.equal(s.time, null);
  assert.equal(s.path, null);
  assert.deepEqual(s.systems, []);
});
