// A map of more datasets than the collapse threshold in a real browser against a real `skade
// serve`: it opens with one group for a system of many namespaces and one for a big namespace;
// a click opens a system into its namespaces and a namespace into its datasets in place; a search
// hit inside a closed group opens the groups it stands in. A map of thousands of datasets opens
// from the server's graph collapsed by system, and opens as the server's expanded graph does.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import type { ApiGraph } from "../src/api/types.js";
import type { MapProbe } from "../src/components/probe.js";
import {
  clickNode,
  closeAll,
  launch,
  openMap,
  probe,
  screenshot,
  Server,
  sleep,
  waitDrawn,
  Warehouse,
} from "./harness.js";

const NAMESPACES = 70; // more than the collapse threshold (60)

type Dataset = { namespace: string; name: string };

/** The i-th COMPLETE RunEvent of a test, a second after the one before. */
function runEvent(i: number, run: string, job: string, inputs: Dataset[], outputs: Dataset[]): unknown {
  return {
    eventType: "COMPLETE",
    eventTime: new Date(Date.parse("2026-11-30T00:00:00Z") + i * 1000).toISOString(),
    producer: "https://github.com/skade/web/e2e/groups.e2e.ts",
    schemaURL: "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    run: { runId: `00000000-0000-4000-${run}-${String(i).padStart(12, "0")}` },
    job: { namespace: "etl", name: job },
    inputs,
    outputs,
  };
}

/** kafka: 70 brokers of 2 topics each; each broker's pair feeds one s3 object of one bucket. */
function events(): unknown[] {
  return Array.from({ length: NAMESPACES }, (_, i) => {
    const broker = `kafka://broker-${String(i).padStart(2, "0")}:9092`;
    const topics = [0, 1].map((t) => ({ namespace: broker, name: `topic_${i}_${t}` }));
    return runEvent(i, "8000", `copy_${i}`, topics, [{ namespace: "s3://bucket", name: `out/part_${i}` }]);
  });
}

describe("a map of many namespaces opens collapsed and opens group by group", () => {
  let warehouse: Warehouse;
  let server: Server;
  let browser: Browser;
  let graph: ApiGraph;

  before(async () => {
    warehouse = new Warehouse();
    warehouse.skade("init");
    server = await Server.start(warehouse);
    await server.postEvents(events());
    graph = await server.json<ApiGraph>("/graph");
    browser = await launch();
  });

  after(() => closeAll(browser, server, warehouse));

  test("system and namespace groups open on click, in place, and a search hit opens its groups", async () => {
    const kafka = graph.nodes.filter((n) => n.system === "kafka");
    const s3 = graph.nodes.filter((n) => n.system === "s3");
    assert.equal(kafka.length, 2 * NAMESPACES);
    assert.equal(new Set(kafka.map((n) => n.namespace)).size, NAMESPACES);
    const bucket = `group:s3:${s3[0].namespace}`;

    const page = await openMap(browser, server);
    let shown = await probe(page);
    assert.deepEqual(shown.nodes.map((n) => n.id).sort(), ["group:kafka", bucket]);
    assert.deepEqual(
      shown.edges.map((e) => [e.from, e.to]),
      [["group:kafka", bucket]],
    );
    assert.equal(await page.locator("header .counts").textContent(), `${graph.nodes.length} datasets`);
    await screenshot(page, "e2e-groups-1-collapsed");

    // the system opens into its namespaces, each a group of its two topics
    await clickNode(page, "group:kafka");
    await waitDrawn(page, shown.drawn + 1);
    shown = await probe(page);
    const namespaces = [...new Set(kafka.map((n) => `group:kafka:${n.namespace}`))].sort();
    assert.deepEqual(
      shown.nodes
        .map((n) => n.id)
        .filter((id) => id.startsWith("group:kafka:"))
        .sort(),
      namespaces,
    );
    assert.ok(!shown.nodes.some((n) => n.id === "group:kafka"));
    assert.equal(shown.edges.length, NAMESPACES);
    await screenshot(page, "e2e-groups-2-system-open");

    // a namespace opens into its topics where it stood; every node keeps inside its lane
    const first = namespaces[0];
    await clickNode(page, first);
    await waitDrawn(page, shown.drawn + 1);
    shown = await probe(page);
    const members = kafka.filter((n) => `group:kafka:${n.namespace}` === first).map((n) => n.key);
    assert.equal(members.length, 2);
    for (const k of members)
      assert.ok(
        shown.nodes.some((n) => n.id === k),
        `${k} drawn`,
      );
    assert.ok(!shown.nodes.some((n) => n.id === first));
    assert.equal(shown.nodes.length, 1 + (NAMESPACES - 1) + 2);
    for (const n of shown.nodes) {
      const lane = shown.lanes.find((l) => l.system === (n.id.startsWith("group:s3") ? "s3" : "kafka"));
      assert.ok(lane && n.y > lane.top && n.y < lane.bottom, `${n.id} at y=${n.y} outside its lane`);
    }
    const spots = new Set(shown.nodes.map((n) => `${Math.round(n.x)},${Math.round(n.y)}`));
    assert.equal(spots.size, shown.nodes.length, "two nodes drawn on one spot");
    // no name runs into another or over another node (names that do not fit wait for a zoom)
    const labels = await page.evaluate(() => (window as unknown as { __skadeMap: MapProbe }).__skadeMap.labels());
    assert.ok(labels && labels.length >= 10, `names stand: ${labels?.length}`);
    for (const a of labels)
      for (const b of labels)
        assert.ok(
          a === b || a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y,
          `the names of ${a.id} and ${b.id} overlap`,
        );
    for (const l of labels)
      for (const n of shown.nodes)
        assert.ok(
          n.id === l.id || n.x < l.x || n.x > l.x + l.width || n.y < l.y || n.y > l.y + l.height,
          `the name of ${l.id} covers ${n.id}`,
        );
    await screenshot(page, "e2e-groups-3-namespace-open");

    // a search hit inside a closed group (the bucket) opens it and selects the dataset
    const target = s3.find((n) => n.name === "out/part_7");
    assert.ok(target);
    await page.locator("header input[type=search]").fill("part_7");
    await page.keyboard.press("Enter");
    await waitDrawn(page, shown.drawn + 1);
    shown = await probe(page);
    assert.equal(shown.state.selected, target.key);
    assert.ok(shown.nodes.some((n) => n.id === target.key && n.look === "selected"));
    assert.ok(!shown.nodes.some((n) => n.id === bucket));
    await sleep(200);
    await screenshot(page, "e2e-groups-4-search-opens");
    assert.deepEqual((page as typeof page & { errors?: string[] }).errors ?? [], []);
    await page.close();
  });
});

const BROKERS = 100;
const RUNS = 1600; // 3,200 datasets: more than LARGE_MAP

/** 1,600 runs: topic_i of one of 100 brokers → an object of one of 5 buckets. */
function largeEvents(): unknown[] {
  return Array.from({ length: RUNS }, (_, i) =>
    runEvent(
      i,
      "9000",
      `load_${i % 7}`,
      [{ namespace: `kafka://broker-${i % BROKERS}:9092`, name: `topic_${i}` }],
      [{ namespace: `s3://bucket-${i % 5}`, name: `out/${i}` }],
    ),
  );
}

describe("a map of thousands of datasets opens from the server's collapsed graph", () => {
  let warehouse: Warehouse;
  let server: Server;
  let browser: Browser;

  before(async () => {
    warehouse = new Warehouse();
    warehouse.skade("init");
    server = await Server.start(warehouse);
    await server.postEvents(largeEvents());
    browser = await launch();
  });

  after(() => closeAll(browser, server, warehouse));

  test("it draws the summary's groups first, then opens a system into the server's namespace groups", async () => {
    const summary = await server.json<ApiGraph>("/graph", { collapse: "system" });
    const groups = summary.groups ?? [];
    assert.deepEqual(groups.map((g) => [g.id, g.members, g.namespaces]).sort(), [
      ["group:kafka", RUNS, BROKERS],
      ["group:s3", RUNS, 5],
    ]);
    const page = await openMap(browser, server);
    // the collapsed graph was asked for first, the whole graph after it
    const asked = await page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .map((r) => r.name)
        .filter((u) => u.includes("/api/skade/v1/graph")),
    );
    assert.equal(asked.length, 2);
    assert.match(asked[0], /collapse=system/);
    assert.doesNotMatch(asked[1], /collapse/);
    let shown = await probe(page);
    assert.deepEqual(
      shown.nodes.map((n) => [n.id, n.label]).sort(),
      groups.map((g) => [g.id, `${g.system} (${g.members} in ${g.namespaces} namespaces)`]).sort(),
    );
    assert.deepEqual(
      shown.edges.map((e) => [e.from, e.to]),
      (summary.group_edges ?? []).map((e) => [e.from, e.to]),
    );
    assert.equal(await page.locator("header .counts").textContent(), `${2 * RUNS} datasets`);
    await screenshot(page, "e2e-groups-5-large-collapsed");

    await clickNode(page, "group:s3");
    await waitDrawn(page, shown.drawn + 1);
    shown = await probe(page);
    const opened = await server.json<ApiGraph>("/graph", { collapse: "system", expand: "group:s3" });
    const buckets = (opened.groups ?? []).filter((g) => g.system === "s3");
    assert.equal(buckets.length, 5);
    assert.deepEqual(
      shown.nodes
        .filter((n) => n.id.startsWith("group:s3:"))
        .map((n) => [n.id, n.label])
        .sort(),
      buckets.map((g) => [g.id, `${g.namespace} (${g.members})`]).sort(),
    );
    assert.ok(shown.nodes.some((n) => n.id === "group:kafka"));
    assert.deepEqual(
      shown.edges.map((e) => [e.from, e.to]).sort(),
      (opened.group_edges ?? []).map((e) => [e.from, e.to]).sort(),
    );
    await screenshot(page, "e2e-groups-6-large-system-open");
    assert.deepEqual((page as typeof page & { errors?: string[] }).errors ?? [], []);
    await page.close();
  });

  test("before the whole graph is there, opening a group fetches its members; the whole graph then redraws nothing", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    // the whole graph's request waits until the test lets it go
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await page.route(
      (url) => url.pathname.endsWith("/api/skade/v1/graph") && !url.searchParams.has("collapse"),
      async (route) => {
        await gate;
        await route.continue();
      },
    );
    await page.goto(`${server.url}/`);
    const map = (): Promise<{ loaded: boolean; drawn: number }> =>
      page.evaluate(() => {
        const p = (window as unknown as { __skadeMap: MapProbe }).__skadeMap;
        return { loaded: p.loaded(), drawn: p.drawn() };
      });
    await page.waitForFunction(() => (window as unknown as { __skadeMap?: MapProbe }).__skadeMap?.drawn() === 1);
    await sleep(300);
    assert.deepEqual(await map(), { loaded: false, drawn: 1 });
    await clickNode(page, "group:s3");
    await page.waitForFunction(() => (window as unknown as { __skadeMap: MapProbe }).__skadeMap.drawn() === 2);
    await sleep(300);
    assert.deepEqual(await map(), { loaded: false, drawn: 2 });
    const opened = await server.json<ApiGraph>("/graph", { collapse: "system", expand: "group:s3" });
    let shown = await probe(page);
    const ids = (p: typeof shown): string[] => p.nodes.map((n) => n.id).sort();
    assert.deepEqual(ids(shown), (opened.groups ?? []).map((g) => g.id).sort());
    const asked = await page.evaluate(() =>
      performance
        .getEntriesByType("resource")
        .map((r) => r.name)
        .filter((u) => u.includes("/api/skade/v1/graph")),
    );
    assert.ok(
      asked.some((u) => /collapse=system/.test(u) && /expand=group%3As3/.test(u)),
      asked.join(" "),
    );
    // the whole graph arrives: the same drawing, not laid out again
    release();
    await page.waitForFunction(() => (window as unknown as { __skadeMap: MapProbe }).__skadeMap.loaded());
    await sleep(400);
    assert.equal((await map()).drawn, 2);
    const after = await probe(page);
    assert.deepEqual(ids(after), ids(shown));
    // (the timeline under the map fills in and the map's height changes: the same layout, refitted)
    const order = (p: typeof shown, axis: "x" | "y"): string[] =>
      [...p.nodes].sort((m, n) => m[axis] - n[axis] || (m.id < n.id ? -1 : 1)).map((n) => n.id);
    assert.deepEqual(order(after, "x"), order(shown, "x"));
    assert.deepEqual(order(after, "y"), order(shown, "y"));
    // and a bucket opens in place from the whole graph
    await clickNode(page, "group:s3:s3://bucket-0");
    await waitDrawn(page, 3);
    shown = await probe(page);
    assert.equal(shown.nodes.filter((n) => n.id.startsWith("s3:")).length, RUNS / 5);
    await screenshot(page, "e2e-groups-7-large-members-fetched");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
