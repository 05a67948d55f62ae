// The end-to-end harness: a warehouse built with the skade CLI (a raw → clean → daily pipeline
// with --actor/--input and several snapshots) plus the OpenLineage events of a real Spark run,
// served by a real `skade serve` on a free loopback port, and the map opened in Debian's
// headless chromium through playwright-core.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import type { MapProbe } from "../src/components/probe.js";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const SKADE_BIN = process.env.SKADE_BIN ?? join(REPO, "build/bin/skade");
export const WEB_ROOT = join(REPO, "web/dist");
export const ARTIFACTS = join(REPO, "build/test-artifacts");
export const SPARK_EVENTS = process.env.SKADE_SPARK_EVENTS ?? "/work/shared/data/openlineage-spark/ol-rest.jsonl";
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const API = "/api/skade/v1";

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A warehouse folder and the skade CLI on it. */
export class Warehouse {
  readonly root = mkdtempSync(join(tmpdir(), "skade-e2e-"));
  readonly path = join(this.root, "wh");
  private files = 0;

  skade(...args: string[]): string {
    return execFileSync(SKADE_BIN, ["--warehouse", this.path, ...args], { encoding: "utf8", timeout: 60_000 });
  }

  /** Writes a CSV file and returns its path. */
  csv(text: string): string {
    const file = join(this.root, `data-${++this.files}.csv`);
    writeFileSync(file, text);
    return file;
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The pipeline: kafka:orders → raw.orders → clean.orders → mart.daily, and shop.orders for Spark. */
export function buildPipeline(): Warehouse {
  const w = new Warehouse();
  w.skade("init");
  for (const ns of ["raw", "clean", "mart", "shop"]) w.skade("create-namespace", ns);
  w.skade("create", "raw.orders", "--schema", "id:long!, customer_id:long, amount:double", "--identifier", "id");
  const ingest = (text: string, verb = "append"): string =>
    w.skade(verb, "raw.orders", w.csv(text), "--actor", "ingest", "--input", "kafka:orders");
  ingest("id,customer_id,amount\n1,10,12.5\n2,11,3\n");
  ingest("id,customer_id,amount\n3,10,4\n4,12,7.25\n");
  ingest("id,customer_id,amount\n3,10,4.5\n5,13,1.1\n", "upsert");
  w.skade("create", "clean.orders", "--schema", "id:long!, customer_id:long, amount:double");
  w.skade(
    "append",
    "clean.orders",
    w.csv("id,customer_id,amount\n1,10,12.5\n2,11,3\n3,10,4.5\n"),
    "--actor",
    "cleaner",
  );
  w.skade(
    "append",
    "clean.orders",
    w.csv("id,customer_id,amount\n4,12,7.25\n5,13,1.1\n"),
    "--actor",
    "cleaner",
    "--input",
    "raw.orders",
  );
  w.skade("create", "mart.daily", "--schema", "customer_id:long, total:double");
  w.skade(
    "append",
    "mart.daily",
    w.csv("customer_id,total\n10,17\n11,3\n"),
    "--actor",
    "rollup",
    "--input",
    "clean.orders",
  );
  w.skade(
    "append",
    "mart.daily",
    w.csv("customer_id,total\n12,7.25\n13,1.1\n"),
    "--actor",
    "rollup",
    "--input",
    "clean.orders",
  );
  w.skade("create", "shop.orders", "--schema", "id:long!, customer_id:long, amount:double");
  w.skade(
    "append",
    "shop.orders",
    w.csv("id,customer_id,amount\n1,10,12.5\n"),
    "--actor",
    "publish",
    "--input",
    "clean.orders",
  );
  w.skade("create", "shop.customers", "--schema", "id:long!, name:string");
  w.skade(
    "append",
    "shop.customers",
    w.csv("id,name\n10,ada\n11,bo\n"),
    "--actor",
    "crm-sync",
    "--input",
    "postgres:crm.customers",
  );
  return w;
}

/** A running `skade serve`; `url` is its base URL. */
export class Server {
  private constructor(
    readonly url: string,
    private readonly proc: ChildProcess,
    private readonly stderr: string[],
  ) {}

  static async start(w: Warehouse): Promise<Server> {
    const proc = spawn(SKADE_BIN, ["--warehouse", w.path, "serve", "--listen", "127.0.0.1:0", "--web-root", WEB_ROOT], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const stderr: string[] = [];
    proc.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    const first = await new Promise<string>((resolve, reject) => {
      lines.once("line", resolve);
      proc.once("exit", (code) => reject(new Error(`skade serve exited ${code}: ${stderr.join("")}`)));
    });
    const m = /http:\/\/([^/\s]+)\//.exec(first);
    if (!m) throw new Error(`skade serve did not start: ${first}`);
    return new Server(`http://${m[1]}`, proc, stderr);
  }

  async json<T>(path: string, params: Record<string, string | number> = {}): Promise<T> {
    const q = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
    const r = await fetch(`${this.url}${API}${path}${q ? `?${q}` : ""}`);
    if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as T;
  }

  /** POSTs the Spark run's events, their warehouse path replaced by this warehouse's. */
  async ingestSpark(w: Warehouse): Promise<void> {
    const events = readFileSync(SPARK_EVENTS, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l.replaceAll("/data/wh", w.path)) as unknown);
    await this.postEvents(events);
  }

  /** POSTs OpenLineage RunEvents as one batch. */
  async postEvents(events: unknown[]): Promise<void> {
    const r = await fetch(`${this.url}/api/v1/lineage/batch`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(events),
    });
    if (r.status !== 201) throw new Error(`lineage batch: ${r.status} ${await r.text()}`);
  }

  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null> {
    if (this.proc.exitCode !== null) return Promise.resolve(this.proc.exitCode);
    return new Promise((resolve) => {
      this.proc.once("exit", (code) => resolve(code));
      this.proc.kill("SIGTERM");
    });
  }

  log(): string {
    return this.stderr.join("");
  }
}

/** Ends what a test file started: the browser, the server (which must exit 0), the warehouse. */
export async function closeAll(browser?: Browser, server?: Server, warehouse?: Warehouse): Promise<void> {
  await browser?.close();
  const code = await server?.stop();
  if (server && code !== 0) throw new Error(`skade serve exited ${code}: ${server.log()}`);
  warehouse?.remove();
}

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--ignore-gpu-blocklist"],
  });
}

/** Opens the map (with an optional `#hash`) at 1280×800 and waits until it has drawn. */
export async function openMap(browser: Browser, server: Server, hash = ""): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("response", (r) => {
    if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
  });
  (page as Page & { errors?: string[] }).errors = errors;
  await page.goto(`${server.url}/${hash}`);
  await waitDrawn(page);
  return page;
}

/** Waits for the map to have loaded and drawn (and its camera to rest). */
export async function waitDrawn(page: Page, atLeast = 1): Promise<void> {
  await page.waitForFunction((n) => {
    const p = (window as unknown as { __skadeMap?: MapProbe }).__skadeMap;
    return p !== undefined && p.loaded() && p.drawn() >= n;
  }, atLeast);
  await sleep(400);
}

type Probe = {
  state: ReturnType<MapProbe["state"]>;
  nodes: ReturnType<MapProbe["nodes"]>;
  edges: ReturnType<MapProbe["edges"]>;
  lanes: ReturnType<MapProbe["lanes"]>;
  drawn: number;
};

/** What the map shows now, through its test hook. */
export function probe(page: Page): Promise<Probe> {
  return page.evaluate(() => {
    const p = (window as unknown as { __skadeMap: MapProbe }).__skadeMap;
    return { state: p.state(), nodes: p.nodes(), edges: p.edges(), lanes: p.lanes(), drawn: p.drawn() };
  });
}

/** Clicks a drawn node where the page shows it. */
export async function clickNode(page: Page, id: string, modifiers: "Shift"[] = []): Promise<void> {
  const node = (await probe(page)).nodes.find((n) => n.id === id);
  if (!node) throw new Error(`${id} is not drawn`);
  await page.mouse.move(node.x, node.y);
  for (const m of modifiers) await page.keyboard.down(m);
  await page.mouse.click(node.x, node.y);
  for (const m of modifiers) await page.keyboard.up(m);
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}
