// Saves docs/system-map.png: the e2e warehouse (pipeline + Spark run) in the dark theme with
// clean.orders selected. `npm run screenshot` (needs build/bin/skade and web/dist).
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { buildPipeline, clickNode, launch, openMap, REPO, screenshot, Server, sleep, waitDrawn } from "./harness.js";

const warehouse = buildPipeline();
const server = await Server.start(warehouse);
try {
  await server.ingestSpark(warehouse);
  const browser = await launch();
  const page = await openMap(browser, server);
  await page.evaluate(() => localStorage.setItem("skade-theme", "dark"));
  await page.reload();
  await waitDrawn(page);
  await clickNode(page, "clean.orders");
  await page.locator(".panel h3", { hasText: "Schema" }).waitFor();
  await sleep(500);
  const file = await screenshot(page, "system-map");
  copyFileSync(file, join(REPO, "docs/system-map.png"));
  await browser.close();
} finally {
  await server.stop();
  warehouse.remove();
}
