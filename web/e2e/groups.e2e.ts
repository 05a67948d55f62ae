// A map of more datasets than the collapse threshold in a real browser against a real `skade
// serve`: it opens with one group for a system of many namespaces and one for a big namespace;
// a click opens a system into its namespaces and a namespace into its datasets in place; a search
// hit inside a closed group opens the groups it stands in.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import type { ApiGraph } from "../src/api/types.js";
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

/** kafka: 70 brokers of 2 topics each; each broker's pair feeds one s3 object of one bucket. */
function events(): unknown[] {
  const t0 = Date.parse("2026-11-30T00:00:00Z");
  return Array.from({ length: NAMESPACES }, (_, i) => {
    const broker = `kafka://broker-${String(i).padStart(2, "0")}:9092`;
    return {
      eventType: "COMPLETE",
      eventTime: new Date(t0 + i * 1000).toISOString(),
      producer: "https://github.com/skade/web/e2e/groups.e2e.ts",
      schemaURL: "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
      run: { runId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}` },
      job: { namespace: "etl", name: `copy_${i}` },
      inputs: [0, 1].map((t) => ({ namespace: broker, name: `topic_${i}_${t}` })),
      outputs: [{ namespace: "s3://bucket", name: `out/part_${i}` }],
    };
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
