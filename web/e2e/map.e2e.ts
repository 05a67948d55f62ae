// The system map in a real browser against a real `skade serve`: lanes and nodes as /graph has
// them, the drill-down with an older snapshot's rows, the impact trace, a path, a commit by
// another process appearing live, a deep link surviving a reload, and the time slider.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { ApiGraph, ApiImpact, ApiNodeDetail, Cell } from "../src/api/types.js";
import {
  buildPipeline,
  clickNode,
  closeAll,
  launch,
  openMap,
  probe,
  screenshot,
  Server,
  sleep,
  waitDrawn,
  type Warehouse,
} from "./harness.js";
import type { MapProbe } from "../src/components/probe.js";

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const edgeSet = (edges: { from: string; to: string }[]): string[] =>
  sorted(new Set(edges.filter((e) => e.from !== e.to).map((e) => `${e.from} -> ${e.to}`)));

async function pageErrors(page: Page): Promise<string[]> {
  await sleep(0);
  return (page as Page & { errors?: string[] }).errors ?? [];
}

/** The rows of a table route's answer (`preview`, `partitions`; NDJSON: header, rows, end). */
async function tableRows(server: Server, table: string, route: string, query: string): Promise<Cell[][]> {
  const [ns, name] = [table.slice(0, table.lastIndexOf(".")), table.slice(table.lastIndexOf(".") + 1)];
  const r = await fetch(`${server.url}/api/skade/v1/tables/${ns}/${name}/${route}?${query}`);
  assert.equal(r.status, 200);
  const lines = (await r.text()).split("\n").filter((l) => l !== "");
  return lines.slice(1, -1).map((l) => JSON.parse(l) as Cell[]);
}

const cellText = (c: Cell): string => (c === null ? "null" : typeof c === "object" ? JSON.stringify(c) : String(c));

describe("the system map on a warehouse with a pipeline and a Spark run", () => {
  let warehouse: Warehouse;
  let server: Server;
  let browser: Browser;
  let graph: ApiGraph;

  before(async () => {
    warehouse = buildPipeline();
    server = await Server.start(warehouse);
    await server.ingestSpark(warehouse);
    graph = await server.json<ApiGraph>("/graph");
    browser = await launch();
  });

  after(() => closeAll(browser, server, warehouse));

  test("a lane per system and every node of /graph, each inside its lane", async () => {
    const page = await openMap(browser, server);
    const shown = await probe(page);
    const systems = [...new Set(graph.nodes.map((n) => n.system))];
    const expectedLanes = ["skade", ...systems.filter((s) => s !== "skade").sort()];
    assert.deepEqual(
      shown.lanes.map((l) => l.system),
      expectedLanes,
    );
    assert.deepEqual(sorted(shown.nodes.map((n) => n.id)), sorted(graph.nodes.map((n) => n.key)));
    assert.deepEqual(edgeSet(shown.edges), edgeSet(graph.edges));
    // lanes follow each other without overlapping; each node lies inside its own lane's band
    for (let i = 1; i < shown.lanes.length; i++) assert.ok(shown.lanes[i].top >= shown.lanes[i - 1].bottom - 0.5);
    const box = await page.locator(".map").boundingBox();
    assert.ok(box);
    for (const n of shown.nodes) {
      const system = graph.nodes.find((g) => g.key === n.id)?.system;
      const lane = shown.lanes.find((l) => l.system === system);
      assert.ok(lane && n.y > lane.top && n.y < lane.bottom, `${n.id} at y=${n.y} outside lane ${system}`);
      assert.ok(n.x > box.x && n.x < box.x + box.width && n.y > box.y && n.y < box.y + box.height, `${n.id} off map`);
    }
    assert.equal(await page.locator("header .counts").textContent(), `${graph.nodes.length} datasets`);
    // the pipelines ran seconds apart, once: no cadence to fall behind, so nothing is stale
    assert.deepEqual(
      shown.nodes.filter((n) => n.look === "stale").map((n) => n.id),
      [],
    );
    for (const n of graph.nodes) {
      const detail = await server.json<ApiNodeDetail>("/node", { key: n.key });
      assert.notEqual(detail.freshness.state, "stale", `${n.key} is stale by /node`);
    }
    assert.equal(await page.locator("header .status").textContent(), "open");
    await screenshot(page, "e2e-1-lanes");
    // the other theme (key t) redraws in its colours; the labels take the theme's text colour
    const theme = await page.evaluate(() => document.documentElement.dataset.theme);
    await page.locator(".map").focus();
    await page.keyboard.press("t");
    await page.waitForFunction((t) => document.documentElement.dataset.theme !== t, theme);
    await sleep(200);
    await screenshot(page, "e2e-1-lanes-other-theme");
    assert.deepEqual(await pageErrors(page), []);
    await page.close();
  });

  test("both renderers draw the same map; a drag pans it, a wheel zooms it, a click still hits its node", async () => {
    const drawnBy: Record<string, Awaited<ReturnType<typeof probe>>> = {};
    for (const renderer of ["canvas", "webgl"]) {
      const page = await openMap(browser, server, `?renderer=${renderer}`);
      assert.equal(
        await page.evaluate(() => (window as unknown as { __skadeMap: MapProbe }).__skadeMap.renderer()),
        renderer,
      );
      const before = await probe(page);
      drawnBy[renderer] = before;
      const at = (p: typeof before, id: string): { x: number; y: number } => {
        const n = p.nodes.find((m) => m.id === id);
        assert.ok(n, `${id} drawn by ${renderer}`);
        return n;
      };
      // a drag from empty map space moves every node by the drag
      const box = await page.locator(".map .stage").boundingBox();
      assert.ok(box);
      const free = { x: box.x + 12, y: box.y + box.height - 12 };
      await page.mouse.move(free.x, free.y);
      await page.mouse.down();
      for (let s = 1; s <= 5; s++) await page.mouse.move(free.x + 12 * s, free.y - 8 * s);
      await page.mouse.up();
      // (sigma's inertia runs on for a while after the release)
      await sleep(1000);
      const panned = await probe(page);
      const a = at(before, "raw.orders");
      const b = at(panned, "raw.orders");
      // (sigma carries a drag on with inertia: as far at least, the same way)
      const [dx, dy] = [b.x - a.x, b.y - a.y];
      const exact = Math.abs(dx - 60) < 2 && Math.abs(dy + 40) < 2;
      const carried = renderer === "webgl" && dx > 58 && Math.abs(dx / dy + 1.5) < 0.1;
      assert.ok(exact || carried, `${renderer} panned by (60, -40): (${dx}, ${dy})`);
      assert.equal(panned.state.selected, null, "a drag selects nothing");
      // a wheel notch in at a node keeps that node under the pointer and spreads the others
      await page.mouse.move(b.x, b.y);
      await page.mouse.wheel(0, -120);
      await sleep(1000);
      const zoomed = await probe(page);
      const c = at(zoomed, "raw.orders");
      assert.ok(Math.abs(c.x - b.x) < 6 && Math.abs(c.y - b.y) < 6, `${renderer} zoomed about the pointer`);
      const spread = (p: typeof before): number => Math.abs(at(p, "clean.orders").x - at(p, "raw.orders").x);
      assert.ok(spread(zoomed) > spread(panned) * 1.3, `${renderer} zoomed in: ${spread(panned)} -> ${spread(zoomed)}`);
      await clickNode(page, "clean.orders");
      await page.locator(".panel h2", { hasText: "clean.orders" }).waitFor();
      assert.equal((await probe(page)).state.selected, "clean.orders");
      await screenshot(page, `e2e-1-renderer-${renderer}`);
      assert.deepEqual(await pageErrors(page), []);
      await page.close();
    }
    // the same nodes, edges and lanes, in the same order on the page
    const [canvas, webgl] = [drawnBy.canvas, drawnBy.webgl];
    assert.deepEqual(sorted(canvas.nodes.map((n) => n.id)), sorted(webgl.nodes.map((n) => n.id)));
    assert.deepEqual(edgeSet(canvas.edges), edgeSet(webgl.edges));
    assert.deepEqual(
      canvas.lanes.map((l) => l.system),
      webgl.lanes.map((l) => l.system),
    );
    const order = (p: typeof canvas, axis: "x" | "y"): string[] =>
      [...p.nodes].sort((m, n) => m[axis] - n[axis] || (m.id < n.id ? -1 : 1)).map((n) => n.id);
    assert.deepEqual(order(canvas, "x"), order(webgl, "x"));
    assert.deepEqual(order(canvas, "y"), order(webgl, "y"));
  });

  test("a click opens the drill-down; an older snapshot shows that snapshot's rows", async () => {
    const page = await openMap(browser, server);
    const key = "raw.orders";
    const detail = await server.json<ApiNodeDetail>("/node", { key });
    const table = detail.table;
    assert.ok(table && table.snapshots.length >= 3);
    await clickNode(page, key);
    await page.locator(".panel h2", { hasText: key }).waitFor();
    assert.equal((await probe(page)).state.selected, key);
    assert.match(page.url(), /#sel=raw\.orders/);
    // schema: every field by name and type, after the table's format version
    await page.locator(".panel h3", { hasText: "Schema" }).waitFor();
    await page.locator(".panel p", { hasText: `Iceberg format v${table.format_version}` }).waitFor();
    const schemaRows = page.locator(".panel h3:text-is('Schema') + table tr");
    assert.equal(await schemaRows.count(), table.schema.fields.length + 1);
    for (const [i, f] of table.schema.fields.entries()) {
      const cells = await schemaRows
        .nth(i + 1)
        .locator("td")
        .allTextContents();
      assert.deepEqual(cells.slice(1, 3), [f.name, f.type]);
    }
    // the snapshot timeline: one entry per snapshot
    assert.equal(await page.locator(".panel ol.snapshots li").count(), table.snapshots.length);
    // an older snapshot's preview
    const older = table.snapshots[0];
    assert.notEqual(older.snapshot_id, table.current_snapshot_id);
    await page.getByLabel("snapshot to preview").selectOption(older.snapshot_id);
    await page.getByRole("button", { name: "Preview" }).click();
    await page.locator(".panel .rows-area .rows").first().waitFor();
    const expected = await tableRows(server, key, "preview", `snapshot=${older.snapshot_id}&limit=100`);
    assert.equal(expected.length, Number(older.total_records));
    const rows = page.locator(".panel .rows-area").first().locator("tbody tr");
    assert.equal(await rows.count(), expected.length);
    const shownRows = await Promise.all(expected.map((_, i) => rows.nth(i).locator("td").allTextContents()));
    assert.deepEqual(sorted(shownRows.map((r) => r.join("|"))), sorted(expected.map((r) => r.map(cellText).join("|"))));
    // the current snapshot's files summed per partition, as /partitions gives them
    await page.getByRole("button", { name: "Show partitions" }).click();
    const partitions = page.locator(".panel h3:text-is('Partitions') ~ .rows-area").first();
    await partitions.locator(".rows").waitFor();
    const sums = await tableRows(server, key, "partitions", `snapshot=${table.current_snapshot_id ?? ""}`);
    assert.ok(sums.length >= 1 && Number(sums[0][2]) === Number(table.snapshots.at(-1)?.total_records));
    const shownSums = partitions.locator("tbody tr");
    assert.equal(await shownSums.count(), sums.length);
    assert.deepEqual(await shownSums.first().locator("td").allTextContents(), sums[0].map(cellText));
    await page.locator(".panel .rows-area").first().scrollIntoViewIfNeeded();
    await screenshot(page, "e2e-2-drilldown");
    assert.deepEqual(await pageErrors(page), []);
    await page.close();
  });
  test("the impact trace lights exactly the downstream set /impact returns", async () => {
    const key = "raw.orders";
    const impact = await server.json<ApiImpact>("/impact", { key, direction: "downstream" });
    const downstream = sorted(impact.entries.map((e) => e.key));
    assert.ok(downstream.length >= 4, JSON.stringify(downstream));
    const page = await openMap(browser, server);
    await clickNode(page, key);
    await page.locator(".panel button.trace[data-trace='down']").click();
    await page.waitForFunction(() => location.hash.includes("trace=down"));
    const shown = await probe(page);
    assert.equal(shown.state.trace, "down");
    const look = (l: string): string[] => sorted(shown.nodes.filter((n) => n.look === l).map((n) => n.id));
    assert.deepEqual(look("highlight"), downstream);
    assert.deepEqual(look("selected"), [key]);
    assert.deepEqual(
      look("dim"),
      sorted(graph.nodes.map((n) => n.key).filter((k) => k !== key && !downstream.includes(k))),
    );
    // the lit edges are those among the traced set, and none leads into it from outside
    const traced = new Set([key, ...downstream]);
    const hot = shown.edges.filter((e) => e.hot);
    assert.deepEqual(edgeSet(hot), edgeSet(shown.edges.filter((e) => traced.has(e.from) && traced.has(e.to))));
    assert.ok(!hot.some((e) => e.from === "kafka:orders"));
    // the side panel's impact list is the same set
    const listed = await page
      .locator(".panel section")
      .first()
      .locator("li[data-key]")
      .evaluateAll((lis) => lis.map((li) => li.getAttribute("data-key") ?? ""));
    assert.deepEqual(sorted(listed), downstream);
    await screenshot(page, "e2e-3-impact");
    assert.deepEqual(await pageErrors(page), []);
    await page.close();
  });

  test("the path between two selected nodes is lit, across lanes", async () => {
    const gold = graph.nodes.find((n) => n.key.endsWith("/shop/gold_rest"));
    assert.ok(gold);
    const chain = ["kafka:orders", "raw.orders", "clean.orders", "shop.orders", gold.key];
    const page = await openMap(browser, server);
    await clickNode(page, chain[0]);
    await clickNode(page, gold.key, ["Shift"]);
    await page.waitForFunction(() => location.hash.includes("to="));
    const shown = await probe(page);
    assert.deepEqual(shown.state.path, [chain[0], gold.key]);
    const lit = sorted(shown.nodes.filter((n) => n.look === "highlight" || n.look === "selected").map((n) => n.id));
    assert.deepEqual(lit, sorted(chain));
    const pathEdges = chain.slice(1).map((to, i) => ({ from: chain[i], to }));
    assert.deepEqual(edgeSet(shown.edges.filter((e) => e.hot)), edgeSet(pathEdges));
    assert.ok(shown.nodes.filter((n) => !chain.includes(n.id)).every((n) => n.look === "dim"));
    await screenshot(page, "e2e-4-path");
    // Escape clears the path and the selection
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !location.hash.includes("to="));
    assert.ok((await probe(page)).edges.every((e) => !e.hot));
    assert.deepEqual(await pageErrors(page), []);
    await page.close();
  });

  test("a deep link (selection, focus, depth, time) survives a reload", async () => {
    const later = graph.edges.find((e) => e.from === "clean.orders" && e.to === "shop.orders");
    assert.ok(later);
    const t = later.first_ms - 1;
    const hash = `#sel=clean.orders&focus=clean.orders&up=1&down=2&t=${new Date(t).toISOString()}`;
    // the server's answer for the same view: the graph as of t, focused
    const focused = await server.json<ApiGraph>("/graph", { focus: "clean.orders", up: 1, down: 2, until: t + 1 });
    const expected = sorted(focused.nodes.map((n) => n.key));
    assert.ok(expected.includes("mart.daily") && !expected.includes("shop.orders"), JSON.stringify(expected));
    const page = await openMap(browser, server, hash);
    const first = await probe(page);
    assert.deepEqual(first.state, {
      selected: "clean.orders",
      focus: "clean.orders",
      up: 1,
      down: 2,
      time: t,
      path: null,
      trace: null,
      systems: [],
    });
    assert.deepEqual(sorted(first.nodes.map((n) => n.id)), expected);
    assert.deepEqual(edgeSet(first.edges), edgeSet(focused.edges));
    const counts = await page.locator("header .counts").textContent();
    await page.locator(".panel h2", { hasText: "clean.orders" }).waitFor();
    await page.reload();
    await waitDrawn(page);
    const again = await probe(page);
    assert.equal(page.url().slice(page.url().indexOf("#")), hash);
    assert.deepEqual(again.state, first.state);
    assert.deepEqual(
      again.nodes.map((n) => [n.id, n.look, Math.round(n.x), Math.round(n.y)]),
      first.nodes.map((n) => [n.id, n.look, Math.round(n.x), Math.round(n.y)]),
    );
    assert.equal(await page.locator("header .counts").textContent(), counts);
    assert.equal(await page.locator(".panel h2").textContent(), "clean.orders");
    assert.equal(
      await page.locator("header .slider .muted").textContent(),
      new Date(t)
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, "Z"),
    );
    await screenshot(page, "e2e-6-deep-link");
    assert.deepEqual(await pageErrors(page), []);
    await page.close();
  });

  test("the time slider set before an edge was drawn hides that edge", async () => {
    const newest = [...graph.edges].sort((a, b) => b.first_ms - a.first_ms)[0];
    const page = await openMap(browser, server);
    const slider = page.getByLabel("graph as of");
    await slider.focus();
    let time: number | null = null;
    for (let i = 0; i < 100 && (time === null || time >= newest.first_ms); i++) {
      await page.keyboard.press("ArrowLeft");
      time = await page.evaluate(() => (window as unknown as { __skadeMap: MapProbe }).__skadeMap.state().time);
    }
    assert.ok(time !== null && time < newest.first_ms);
    await waitDrawn(page, 2);
    const shown = await probe(page);
    assert.ok(
      !shown.edges.some((e) => e.from === newest.from && e.to === newest.to),
      `${newest.from} -> ${newest.to} drawn`,
    );
    const then = await server.json<ApiGraph>("/graph", { until: time + 1 });
    assert.deepEqual(edgeSet(shown.edges), edgeSet(then.edges));
    assert.deepEqual(sorted(shown.nodes.map((n) => n.id)), sorted(then.nodes.map((n) => n.key)));
    await screenshot(page, "e2e-7-time-slider");
    // back to now: the edge is drawn again
    await page.keyboard.press("End");
    await page.waitForFunction(
      ([from, to]) =>
        (window as unknown as { __skadeMap: MapProbe }).__skadeMap.edges().some((e) => e.from === from && e.to === to),
      [newest.from, newest.to],
    );
    assert.equal((await probe(page)).state.time, null);
    assert.deepEqual(await pageErrors(page), []);
    await page.close();
  });
});

describe("the system map follows commits made by another process", () => {
  let warehouse: Warehouse;
  let server: Server;
  let browser: Browser;

  before(async () => {
    warehouse = buildPipeline();
    server = await Server.start(warehouse);
    browser = await launch();
  });

  after(() => closeAll(browser, server, warehouse));

  const within = (page: Page, ms: number, check: string): Promise<unknown> =>
    page.waitForFunction(check, undefined, { timeout: ms, polling: 20 });

  test("a CLI commit pulses its node, a new table appears with its edge, each within 1 s", async () => {
    const page = await openMap(browser, server);
    await page.waitForFunction(() => document.querySelector("header .status")?.textContent === "open");
    const before = await probe(page);
    assert.ok(before.nodes.every((n) => n.look !== "pulse"));
    const hook = "window.__skadeMap";

    warehouse.skade(
      "append",
      "mart.daily",
      warehouse.csv("customer_id,total\n14,2\n"),
      "--actor",
      "rollup",
      "--input",
      "clean.orders",
    );
    let t0 = Date.now();
    await within(page, 1000, `${hook}.nodes().some((n) => n.id === "mart.daily" && n.look === "pulse")`);
    const pulsed = Date.now() - t0;
    await screenshot(page, "e2e-5-live-pulse");

    warehouse.skade("create", "mart.weekly", "--schema", "customer_id:long, total:double");
    t0 = Date.now();
    await within(page, 1000, `${hook}.nodes().some((n) => n.id === "mart.weekly")`);
    const appeared = Date.now() - t0;

    warehouse.skade(
      "append",
      "mart.weekly",
      warehouse.csv("customer_id,total\n10,17\n"),
      "--actor",
      "weekly",
      "--input",
      "mart.daily",
    );
    t0 = Date.now();
    await within(page, 1000, `${hook}.edges().some((e) => e.from === "mart.daily" && e.to === "mart.weekly")`);
    const linked = Date.now() - t0;
    await waitDrawn(page, before.drawn + 1);
    const after = await probe(page);
    const weekly = after.nodes.find((n) => n.id === "mart.weekly");
    const lane = after.lanes.find((l) => l.system === "skade");
    assert.ok(weekly && lane && weekly.y > lane.top && weekly.y < lane.bottom);
    await screenshot(page, "e2e-5-live-new-node");
    // the side panel of the new table shows its snapshot
    await clickNode(page, "mart.weekly");
    await page.locator(".panel ol.snapshots li").first().waitFor();
    assert.equal(await page.locator(".panel ol.snapshots li").count(), 1);
    assert.deepEqual(await pageErrors(page), []);
    console.log(`live: pulse ${pulsed} ms, new node ${appeared} ms, new edge ${linked} ms`);
    await page.close();
  });
});
