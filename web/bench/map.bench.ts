// The system map's performance benchmark, measured in Debian's headless chromium against a real
// `skade serve` (the e2e harness): a generated layered lineage graph (sources → staging → marts,
// namespaces of 20 datasets, 5 systems) POSTed as OpenLineage RunEvents, then first render and
// layout, pan/zoom frame times, the impact trace, and a 10x graph opening collapsed and expanding
// one namespace. Writes bench/results/map.json (repo root) and prints the figures against the
// issue's targets. Timings are reported, never asserted.
// Usage: cd web && npm run bench   (SKADE_BIN, CHROMIUM as for the e2e tests)
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import type { MapProbe } from "../src/components/probe.js";
import { CHROMIUM, launch, REPO, Server, sleep, Warehouse } from "../e2e/harness.js";

const RESULTS = join(REPO, "bench/results/map.json");
const NS_SIZE = 20;
const INPUTS_PER_OUTPUT = 5;
const OPEN_10K_TIMEOUT_MS = Number(process.env.MAP_BENCH_10K_TIMEOUT_MS ?? 60_000);

class Skip10k extends Error {}

/** Both renderers, the one the app chooses in headless chromium (canvas: software WebGL) first. */
const RENDERERS = ["canvas", "webgl"] as const;

interface PanZoom {
  frames: number;
  p50: number;
  p95: number;
  max: number;
  /** Frames the renderer drew, and how long drawing took on the main thread. */
  draws: number;
  draw_p50: number;
  draw_p95: number;
}

/** The 5 systems, the layers their datasets stand in, and each one's share of the datasets. */
const SYSTEMS = [
  { system: "kafka", scheme: "kafka", layers: [0] },
  { system: "postgres", scheme: "postgres", layers: [0] },
  { system: "s3", scheme: "s3", layers: [1] },
  { system: "bigquery", scheme: "bigquery", layers: [2, 3] },
  { system: "snowflake", scheme: "snowflake", layers: [4, 5] },
] as const;

interface Dataset {
  namespace: string;
  name: string;
  system: string;
  layer: number;
}

interface Generated {
  datasets: Dataset[];
  edges: [number, number][];
  events: unknown[];
}

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `n` datasets (n/5 per system; a system of two layers splits them), namespaces of 20; every
 * non-source dataset is written by one job reading 5 distinct datasets of earlier layers (mostly
 * the layer just before, one in four further back), so there are 3n edges when sources are 2n/5.
 */
export function generate(n: number, seed = 7): Generated {
  const rand = prng(seed);
  const datasets: Dataset[] = [];
  const perSystem = n / SYSTEMS.length;
  for (const s of SYSTEMS) {
    for (let i = 0; i < perSystem; i++) {
      const layer = s.layers[Math.floor((i * s.layers.length) / perSystem)];
      const ns = Math.floor(i / NS_SIZE);
      datasets.push({
        namespace: `${s.scheme}://${s.system}-${String(ns).padStart(3, "0")}.example:1234`,
        name: `${s.system}_l${layer}_ns${ns}.table_${String(i).padStart(5, "0")}`,
        system: s.system,
        layer,
      });
    }
  }
  const byLayer = new Map<number, number[]>();
  datasets.forEach((d, i) => byLayer.set(d.layer, [...(byLayer.get(d.layer) ?? []), i]));
  // the sources are used round-robin first so that none stands alone
  const sources = byLayer.get(0) ?? [];
  let nextSource = 0;
  const edges: [number, number][] = [];
  const events: unknown[] = [];
  const t0 = Date.parse("2026-11-30T00:00:00Z");
  datasets.forEach((d, out) => {
    if (d.layer === 0) return;
    const inputs = new Set<number>();
    while (inputs.size < INPUTS_PER_OUTPUT) {
      let pick: number;
      if (d.layer === 1 && nextSource < sources.length) pick = sources[nextSource++];
      else {
        const back = rand() < 0.75 ? 1 : 1 + Math.floor(rand() * d.layer);
        const pool = byLayer.get(Math.max(0, d.layer - back)) ?? sources;
        pick = pool[Math.floor(rand() * pool.length)];
      }
      inputs.add(pick);
    }
    for (const i of inputs) edges.push([i, out]);
    const ref = (x: Dataset): { namespace: string; name: string } => ({ namespace: x.namespace, name: x.name });
    events.push({
      eventType: "COMPLETE",
      eventTime: new Date(t0 + out * 1000).toISOString(),
      producer: "https://github.com/skade/bench/map.bench.ts",
      schemaURL: "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
      run: { runId: uuid(rand) },
      job: { namespace: `etl-${d.system}`, name: `build_${d.name}` },
      inputs: [...inputs].map((i) => ref(datasets[i])),
      outputs: [ref(d)],
    });
  });
  return { datasets, edges, events };
}

function uuid(rand: () => number): string {
  const h = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16));
  h[12] = "4";
  h[16] = "89ab"[Math.floor(rand() * 4)];
  const s = h.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/** Downstream of dataset `from` to `maxDepth`: how many it reaches and the deepest depth. */
function reach(g: Generated, from: number, maxDepth: number): { reached: number; deepest: number } {
  const down = new Map<number, number[]>();
  for (const [a, b] of g.edges) down.set(a, [...(down.get(a) ?? []), b]);
  const seen = new Set([from]);
  let frontier = [from];
  let deepest = 0;
  for (let depth = 1; depth <= maxDepth && frontier.length > 0; depth++) {
    const next: number[] = [];
    for (const k of frontier)
      for (const d of down.get(k) ?? [])
        if (!seen.has(d)) {
          seen.add(d);
          next.push(d);
        }
    if (next.length > 0) deepest = depth;
    frontier = next;
  }
  return { reached: seen.size - 1, deepest };
}

async function ingest(server: Server, events: unknown[]): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < events.length; i += 500) {
    const r = await fetch(`${server.url}/api/v1/lineage/batch`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(events.slice(i, i + 500)),
    });
    if (r.status !== 201) throw new Error(`lineage batch: ${r.status} ${await r.text()}`);
  }
  return performance.now() - start;
}

/** Records, in the page, when each `skade:layout-done` mark was made and when the next frame came. */
const INIT = (): void => {
  const w = window as unknown as { __bench: { painted: number[]; downs: number[] } };
  w.__bench = { painted: [], downs: [] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if (e.name === "skade:layout-done") requestAnimationFrame(() => w.__bench.painted.push(performance.now()));
  }).observe({ entryTypes: ["mark"] });
  addEventListener("mousedown", (e) => w.__bench.downs.push(e.timeStamp), true);
};

interface Opened {
  page: Page;
  /** The whole graph's `/graph` request from the page (the browser asks for br; see the report). */
  graphFetchMs: number;
  graphFetchBytes: number;
  /** The collapsed graph's request before it (`collapse=system`). */
  summaryFetchMs: number;
  summaryFetchBytes: number;
  /** When the whole graph had loaded and was drawn (a large map draws its summary first). */
  wholeGraphMs: number;
  layoutDoneMs: number;
  firstFrameMs: number;
  drawnNodes: number;
  drawnEdges: number;
  groups: number;
  webgl: string;
  /** Which renderer drew the map (the app's choice, or `renderer`). */
  renderer: string;
}

/** Opens the map; `renderer` ("webgl", "canvas") overrides the app's choice of renderer. */
async function openMap(browser: Browser, server: Server, timeout = 120_000, renderer?: string): Promise<Opened> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // tsx keeps function names with a `__name` helper, which code passed to the page also calls
  await page.addInitScript({ content: "window.__name = (f) => f;" });
  await page.addInitScript(INIT);
  await page.goto(`${server.url}/${renderer ? `?renderer=${renderer}` : ""}`);
  await page.waitForFunction(
    () => {
      const w = window as unknown as { __skadeMap?: MapProbe; __bench: { painted: number[] } };
      return w.__skadeMap !== undefined && w.__skadeMap.drawn() >= 1 && w.__bench.painted.length >= 1;
    },
    undefined,
    { timeout },
  );
  // the whole graph loaded too (a large map's first frame is its summary's)
  await page.waitForFunction(() => performance.getEntriesByName("skade:whole-graph").length > 0, undefined, {
    timeout,
  });
  await sleep(200);
  if (errors.length > 0) throw new Error(`page errors: ${errors.join("; ")}`);
  const r = await page.evaluate(() => {
    const w = window as unknown as { __skadeMap: MapProbe; __bench: { painted: number[] } };
    const mark = performance.getEntriesByName("skade:layout-done")[0];
    const nodes = w.__skadeMap.nodes();
    const gl =
      document.createElement("canvas").getContext("webgl2") ?? document.createElement("canvas").getContext("webgl");
    let renderer = gl ? "webgl" : "none";
    if (gl) {
      const info = gl.getExtension("WEBGL_debug_renderer_info");
      renderer = String(info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
    }
    const graphs = performance
      .getEntriesByType("resource")
      .filter((r) => r.name.includes("/api/skade/v1/graph")) as PerformanceResourceTiming[];
    const summary = graphs.find((r) => r.name.includes("collapse="));
    const graph = graphs.find((r) => !r.name.includes("collapse="));
    return {
      graphFetchMs: graph ? graph.responseEnd - graph.startTime : NaN,
      graphFetchBytes: graph ? graph.decodedBodySize : NaN,
      summaryFetchMs: summary ? summary.responseEnd - summary.startTime : NaN,
      summaryFetchBytes: summary ? summary.decodedBodySize : NaN,
      wholeGraphMs: performance.getEntriesByName("skade:whole-graph")[0].startTime,
      layoutDoneMs: mark.startTime,
      firstFrameMs: w.__bench.painted[0],
      drawnNodes: nodes.length,
      drawnEdges: w.__skadeMap.edges().length,
      groups: nodes.filter((n) => n.id.startsWith("group:")).length,
      webgl: renderer,
      renderer: w.__skadeMap.renderer(),
    };
  });
  return { page, ...r };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Drags and wheels over the map for `ms`, collecting requestAnimationFrame deltas. */
async function panZoom(page: Page, ms = 5000): Promise<PanZoom> {
  const drawsBefore = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __framing: boolean };
    w.__frames = [];
    w.__framing = true;
    let last = performance.now();
    const tick = (now: number): void => {
      w.__frames.push(now - last);
      last = now;
      if (w.__framing) requestAnimationFrame(tick);
    };
    requestAnimationFrame((now) => {
      last = now;
      requestAnimationFrame(tick);
    });
    return (window as unknown as { __skadeMap?: MapProbe }).__skadeMap?.drawMs().length ?? 0;
  });
  const box = await page.locator(".map .stage").boundingBox();
  if (!box) throw new Error("no map stage");
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end; i++) {
    // a drag of 200 px in 10 steps, then two wheel notches in and out at the pointer
    const dx = i % 2 === 0 ? 200 : -200;
    const dy = i % 3 === 0 ? 60 : -40;
    await page.mouse.move(cx - dx / 2, cy - dy / 2);
    await page.mouse.down();
    for (let s = 1; s <= 10; s++) await page.mouse.move(cx - dx / 2 + (dx * s) / 10, cy - dy / 2 + (dy * s) / 10);
    await page.mouse.up();
    for (let s = 0; s < 2; s++) {
      await page.mouse.wheel(0, i % 2 === 0 ? -120 : 120);
      await sleep(16);
    }
  }
  const { frames, draws } = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __framing: boolean; __skadeMap?: MapProbe };
    w.__framing = false;
    return { frames: w.__frames, draws: w.__skadeMap?.drawMs() ?? [] };
  });
  const sorted = [...frames].sort((a, b) => a - b);
  // the renderer's own share of each frame (main thread), the rest is the browser's raster and compositing
  const drawn = draws.slice(Math.min(drawsBefore, draws.length)).sort((a, b) => a - b);
  return {
    frames: frames.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    max: sorted.at(-1) ?? NaN,
    draws: drawn.length,
    draw_p50: percentile(drawn, 50),
    draw_p95: percentile(drawn, 95),
  };
}

/** Selects `key` (through the address), then times the `i` key's impact trace until it is drawn. */
async function impactTrace(page: Page, key: string): Promise<{ appliedMs: number; paintedMs: number; lit: number }> {
  await page.evaluate((k) => {
    location.hash = `#sel=${encodeURIComponent(k)}`;
  }, key);
  await page.waitForFunction((k) => {
    const p = (window as unknown as { __skadeMap: MapProbe }).__skadeMap;
    return p.state().selected === k;
  }, key);
  await sleep(300);
  return page.evaluate(
    () =>
      new Promise<{ appliedMs: number; paintedMs: number; lit: number }>((resolve) => {
        const p = (window as unknown as { __skadeMap: MapProbe }).__skadeMap;
        const t0 = performance.now();
        document.dispatchEvent(new KeyboardEvent("keydown", { key: "i", bubbles: true }));
        const applied = performance.now() - t0;
        if (p.state().trace !== "down") throw new Error("the trace did not start");
        const lit = p.nodes().filter((n) => n.look === "highlight").length;
        requestAnimationFrame(() => resolve({ appliedMs: applied, paintedMs: performance.now() - t0, lit }));
      }),
  );
}

/** What a system group's id looks like (`group:kafka`); a namespace group's is `group:kafka:ns`. */
const SYSTEM_GROUP = "^group:[^:]+$";
const NAMESPACE_GROUP = "^group:[^:]+:";

/**
 * Clicks a group node whose id matches `pattern` (a system or a namespace) and times it from the
 * mouse-down until the expanded layout's next frame.
 */
async function expandGroup(
  page: Page,
  pattern: string,
  timeout = 120_000,
): Promise<{
  ms: number;
  to_layout_request_ms: number;
  layout_ms: number;
  draw_ms: number;
  group: string;
  nodesAfter: number;
  edgesAfter: number;
}> {
  const before = await page.evaluate((pattern) => {
    const w = window as unknown as { __skadeMap: MapProbe; __bench: { painted: number[] } };
    const box = document.querySelector(".map .stage")?.getBoundingClientRect();
    const match = new RegExp(pattern);
    const inView = w.__skadeMap
      .nodes()
      .filter((n) => match.test(n.id) && box && n.x > box.left + 20 && n.x < box.right - 20)
      .filter((n) => box && n.y > box.top + 20 && n.y < box.bottom - 20);
    const groups = w.__skadeMap
      .nodes()
      .filter((n) => n.id.startsWith("group:"))
      .map((n) => n.id);
    return { drawn: w.__skadeMap.drawn(), painted: w.__bench.painted.length, group: inView[0], groups };
  }, pattern);
  if (!before.group) throw new Error(`no group node ${pattern} in view`);
  await page.mouse.move(before.group.x, before.group.y);
  await page.mouse.click(before.group.x, before.group.y);
  // expanded: a layout after the click has been drawn (the group sigma hit is the one that went)
  await page.waitForFunction(
    (n) => {
      const w = window as unknown as { __bench: { painted: number[] } };
      return (
        w.__bench.painted.length > n &&
        w.__bench.painted.length === performance.getEntriesByName("skade:layout-done").length
      );
    },
    before.painted,
    { timeout },
  );
  return page.evaluate(
    ({ groups }) => {
      const w = window as unknown as { __skadeMap: MapProbe; __bench: { painted: number[]; downs: number[] } };
      const nodes = w.__skadeMap.nodes();
      const ids = new Set(nodes.map((x) => x.id));
      const gone = groups.filter((g) => !ids.has(g));
      if (gone.length !== 1) throw new Error(`expected one group to expand, not ${gone.length}`);
      const down = w.__bench.downs.at(-1) ?? NaN;
      const ms = (w.__bench.painted.at(-1) ?? NaN) - down;
      // where it went: the click to the layout request (main thread), the layout (worker), drawing
      const last = (name: string): number => performance.getEntriesByName(name).at(-1)?.startTime ?? NaN;
      const split = {
        to_layout_request_ms: last("skade:layout-asked") - down,
        layout_ms: last("skade:layout-laid") - last("skade:layout-asked"),
        draw_ms: (w.__bench.painted.at(-1) ?? NaN) - last("skade:layout-laid"),
      };
      return { ms, ...split, group: gone[0], nodesAfter: nodes.length, edgesAfter: w.__skadeMap.edges().length };
    },
    { groups: before.groups },
  );
}

/**
 * Opens every group of the map by clicking it (the camera keeps the whole map in view as it
 * grows), so that every dataset and edge is drawn; how many are drawn then.
 */
async function openAll(
  page: Page,
  timeout = 120_000,
): Promise<{ nodes: number; edges: number; groupsLeft: number; missed: string[] }> {
  const end = Date.now() + timeout;
  const missed: string[] = [];
  while (Date.now() < end) {
    const at = await page.evaluate((missed) => {
      const w = window as unknown as { __skadeMap: MapProbe; __bench: { painted: number[] } };
      const box = document.querySelector(".map .stage")?.getBoundingClientRect();
      const group = w.__skadeMap
        .nodes()
        .find(
          (n) =>
            n.id.startsWith("group:") &&
            !missed.includes(n.id) &&
            box &&
            n.x > box.left &&
            n.x < box.right &&
            n.y > box.top &&
            n.y < box.bottom,
        );
      return { group, painted: w.__bench.painted.length };
    }, missed);
    if (!at.group) break;
    await page.mouse.move(at.group.x, at.group.y);
    await page.mouse.click(at.group.x, at.group.y);
    // a click that opened nothing (another node under the pointer) is not tried again
    const opened = await page
      .waitForFunction(
        (n) => (window as unknown as { __bench: { painted: number[] } }).__bench.painted.length > n,
        at.painted,
        { timeout: 15_000 },
      )
      .then(() => true)
      .catch(() => false);
    if (!opened) missed.push(at.group.id);
  }
  await page.keyboard.press("Escape");
  await sleep(500);
  const drawn = await page.evaluate(() => {
    const p = (window as unknown as { __skadeMap: MapProbe }).__skadeMap;
    const nodes = p.nodes();
    return {
      nodes: nodes.length,
      edges: p.edges().length,
      groupsLeft: nodes.filter((n) => n.id.startsWith("group:")).length,
    };
  });
  return { ...drawn, missed };
}

/**
 * The floor of the pan/zoom figure on this machine: the same drags and wheels over the map of an
 * empty warehouse (each renderer's canvases with nothing on them) and over a blank page (no
 * canvas at all).
 */
async function panZoomFloor(browser: Browser): Promise<Record<string, unknown>> {
  const w0 = new Warehouse();
  w0.skade("init");
  const s0 = await Server.start(w0);
  try {
    const emptyMap: Record<string, unknown> = {};
    for (const renderer of RENDERERS) {
      const empty = await openMap(browser, s0, undefined, renderer);
      emptyMap[renderer] = await panZoom(empty.page);
      await empty.page.close();
    }
    const blank = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await blank.setContent('<div class="map"><div class="stage" style="width:1280px;height:800px"></div></div>');
    await blank.evaluate("window.__name = (f) => f;");
    const blankPage = await panZoom(blank);
    await blank.close();
    return { empty_map: emptyMap, blank_page: blankPage };
  } finally {
    await s0.stop();
    w0.remove();
  }
}

const verdict = (value: number, target: number): "met" | "not met" => (value < target ? "met" : "not met");

async function main(): Promise<void> {
  const load = { before: loadavg(), cpus: cpus().length };
  const chromiumVersion = execFileSync(CHROMIUM, ["--version"], { encoding: "utf8" }).trim();
  const browser = await launch();
  const results: Record<string, unknown> = {};
  try {
    // 1,000 datasets / 3,000 edges
    const small = generate(1000);
    const w1 = new Warehouse();
    w1.skade("init");
    const s1 = await Server.start(w1);
    try {
      const ingestMs = await ingest(s1, small.events);
      const opened = await openMap(browser, s1);
      const pan = await panZoom(opened.page);
      // the other renderer on the same map, for comparison
      const pans: Record<string, PanZoom> = { [opened.renderer]: pan };
      for (const renderer of RENDERERS.filter((r) => r !== opened.renderer)) {
        const other = await openMap(browser, s1, undefined, renderer);
        pans[renderer] = await panZoom(other.page);
        await other.page.close();
      }
      // and with every group open: all 1,000 datasets and their edges drawn
      const allOpen: Record<string, unknown> = {};
      for (const renderer of RENDERERS) {
        const page = (await openMap(browser, s1, undefined, renderer)).page;
        const drawn = await openAll(page);
        allOpen[renderer] = { drawn, ...(await panZoom(page)) };
        await page.close();
      }
      const source = small.datasets.findIndex((d) => d.layer === 0);
      const graphNodes = await s1.json<{ nodes: { key: string; name: string }[] }>("/graph");
      const key = graphNodes.nodes.find((n) => n.name === small.datasets[source].name)?.key;
      if (!key) throw new Error("the source dataset is not in /graph");
      const trace = await impactTrace(opened.page, key);
      results.graph_1k = {
        datasets: small.datasets.length,
        edges: small.edges.length,
        run_events: small.events.length,
        ingest_ms: ingestMs,
        drawn_nodes: opened.drawnNodes,
        drawn_groups: opened.groups,
        drawn_edges: opened.drawnEdges,
        graph_fetch_in_page_ms: opened.graphFetchMs,
        graph_bytes: opened.graphFetchBytes,
        summary_fetch_in_page_ms: opened.summaryFetchMs,
        summary_bytes: opened.summaryFetchBytes,
        whole_graph_loaded_ms: opened.wholeGraphMs,
        first_render_layout_done_ms: opened.layoutDoneMs,
        first_frame_after_layout_ms: opened.firstFrameMs,
        renderer: opened.renderer,
        pan_zoom: pan,
        pan_zoom_by_renderer: pans,
        pan_zoom_all_open: allOpen,
        impact_trace: { source: key, ...trace, ...reach(small, source, 5) },
      };
      results.webgl_renderer = opened.webgl;
      await opened.page.close();
      results.pan_zoom_floor = await panZoomFloor(browser);
    } finally {
      await s1.stop();
      w1.remove();
    }
    // 10,000 datasets / 30,000 edges
    const big = generate(10000);
    const w2 = new Warehouse();
    w2.skade("init");
    const s2 = await Server.start(w2);
    try {
      const ingestMs = await ingest(s2, big.events);
      let opened: Opened;
      try {
        opened = await openMap(browser, s2, OPEN_10K_TIMEOUT_MS);
      } catch (e) {
        // the map did not draw in time: record how far it got (graph loaded or not) and go on
        const pages = browser.contexts().flatMap((c) => c.pages());
        const stuck = pages.at(-1);
        // the page may be gone too (the renderer can run out of memory on 10k)
        const loaded = stuck
          ? await stuck
              .evaluate(() => (window as unknown as { __skadeMap?: MapProbe }).__skadeMap?.loaded() ?? false)
              .catch(() => false)
          : false;
        await stuck?.close().catch(() => undefined);
        results.graph_10k = {
          datasets: big.datasets.length,
          edges: big.edges.length,
          run_events: big.events.length,
          ingest_ms: ingestMs,
          opened: false,
          graph_loaded: loaded,
          gave_up_after_ms: OPEN_10K_TIMEOUT_MS,
          error: String(e).split("\n")[0],
        };
        throw new Skip10k();
      }
      // the map opens with one group per system; a system opens into its namespaces, then one
      // namespace into its datasets (the issue's figure)
      const expandSystem = opened.groups > 0 ? await expandGroup(opened.page, SYSTEM_GROUP, OPEN_10K_TIMEOUT_MS) : null;
      const expand = await expandGroup(opened.page, NAMESPACE_GROUP, OPEN_10K_TIMEOUT_MS);
      results.graph_10k = {
        opened: true,
        datasets: big.datasets.length,
        edges: big.edges.length,
        run_events: big.events.length,
        ingest_ms: ingestMs,
        opened_collapsed: opened.groups > 0,
        drawn_nodes: opened.drawnNodes,
        drawn_groups: opened.groups,
        drawn_edges: opened.drawnEdges,
        graph_fetch_in_page_ms: opened.graphFetchMs,
        graph_bytes: opened.graphFetchBytes,
        summary_fetch_in_page_ms: opened.summaryFetchMs,
        summary_bytes: opened.summaryFetchBytes,
        whole_graph_loaded_ms: opened.wholeGraphMs,
        first_render_layout_done_ms: opened.layoutDoneMs,
        first_frame_after_layout_ms: opened.firstFrameMs,
        renderer: opened.renderer,
        expand_system: expandSystem,
        expand_namespace: expand,
      };
      await opened.page.close();
    } catch (e) {
      if (!(e instanceof Skip10k)) throw e;
    } finally {
      await s2.stop();
      w2.remove();
    }
  } finally {
    await browser.close();
  }
  const g1 = results.graph_1k as {
    first_frame_after_layout_ms: number;
    renderer: string;
    pan_zoom: { p95: number };
    pan_zoom_by_renderer: Record<string, PanZoom>;
    pan_zoom_all_open: Record<string, PanZoom & { drawn: unknown }>;
    impact_trace: { paintedMs: number };
  };
  const g10 = results.graph_10k as {
    opened: boolean;
    opened_collapsed?: boolean;
    expand_namespace?: { ms: number };
    first_frame_after_layout_ms?: number;
  };
  const floor = results.pan_zoom_floor as { empty_map: Record<string, PanZoom>; blank_page: PanZoom };
  const targets = {
    first_render_layout_1k: {
      value_ms: g1.first_frame_after_layout_ms,
      target_ms: 1500,
      result: verdict(g1.first_frame_after_layout_ms, 1500),
    },
    // the issue's map: 1,000 datasets and 3,000 edges drawn (every group open), with the
    // renderer the app chose; as it opens (namespace groups) per renderer beside it
    pan_zoom_frame_p95_1k: {
      value_ms: g1.pan_zoom_all_open[g1.renderer].p95,
      target_ms: 20,
      result: verdict(g1.pan_zoom_all_open[g1.renderer].p95, 20),
      renderer: g1.renderer,
      p95_as_opened_by_renderer_ms: Object.fromEntries(
        Object.entries(g1.pan_zoom_by_renderer).map(([r, p]) => [r, p.p95]),
      ),
      // with every group open: every dataset and edge drawn
      p95_all_open_by_renderer_ms: Object.fromEntries(
        Object.entries(g1.pan_zoom_all_open).map(([r, p]) => [r, { p95: p.p95, drawn: p.drawn }]),
      ),
      // the same gestures with nothing to draw: what this browser and machine allow at best
      floor_empty_map_p95_ms: Object.fromEntries(Object.entries(floor.empty_map).map(([r, p]) => [r, p.p95])),
      floor_blank_page_p95_ms: floor.blank_page.p95,
    },
    impact_trace_1k: {
      value_ms: g1.impact_trace.paintedMs,
      target_ms: 50,
      result: verdict(g1.impact_trace.paintedMs, 50),
    },
    expand_namespace_10k: {
      value_ms: g10.expand_namespace?.ms ?? NaN,
      target_ms: 500,
      opened: g10.opened,
      opened_collapsed: g10.opened_collapsed ?? false,
      result:
        g10.opened && g10.opened_collapsed && g10.expand_namespace
          ? verdict(g10.expand_namespace.ms, 500)
          : `not met (the map did not open within ${OPEN_10K_TIMEOUT_MS / 1000} s)`,
    },
  };
  const out = {
    when: new Date().toISOString(),
    browser: chromiumVersion,
    headless: true,
    viewport: "1280x800",
    rendering:
      "headless chromium without a GPU: WebGL is software-rendered (SwiftShader through ANGLE, " +
      "--use-angle=swiftshader --enable-unsafe-swiftshader), so the map draws with Canvas 2D (web/src/render/renderer.ts); " +
      "the WebGL (sigma) figures are the same gestures with ?renderer=webgl; frame times are not a GPU desktop's",
    machine: { cpus: load.cpus, loadavg_before: load.before, loadavg_after: loadavg() },
    timings: "from navigation start (performance.timeOrigin) unless stated; reported, never asserted",
    ...results,
    targets,
    marquez_on_deep_graphs: marquezNote(),
  };
  mkdirSync(join(REPO, "bench/results"), { recursive: true });
  writeFileSync(RESULTS, JSON.stringify(out, null, 2) + "\n");
  print(out, targets);
}

/** What /work/shared/docs/lineage-facts.md says Marquez documents about deep graphs. */
function marquezNote(): string {
  try {
    const text = readFileSync("/work/shared/docs/lineage-facts.md", "utf8");
    const depth = /GET `\/api\/v1\/lineage\?nodeId=&depth=` \| `depth` defaults to \*\*20\*\*/.test(text);
    return depth
      ? "lineage-facts.md: Marquez's GET /api/v1/lineage takes depth= (default 20) and its UI has a depth input and a " +
          "'Full Graph' toggle (off shows only the selected node's paths, PR #2569); users report large, cluttered " +
          "graphs (marquez#2014, #2558). It documents no render or layout timings for deep graphs: unknown."
      : "unknown (not in lineage-facts.md)";
  } catch {
    return "unknown (lineage-facts.md not found)";
  }
}

function print(
  out: Record<string, unknown>,
  targets: Record<string, { value_ms: number; target_ms: number; result: string }>,
): void {
  const f = (x: number): string => `${x.toFixed(1)} ms`;
  const g1 = out.graph_1k as {
    drawn_nodes: number;
    drawn_groups: number;
    graph_fetch_in_page_ms: number;
    renderer: string;
    pan_zoom: { frames: number; p50: number };
    pan_zoom_by_renderer: Record<string, PanZoom>;
    pan_zoom_all_open: Record<(typeof RENDERERS)[number], PanZoom & { drawn: unknown }>;
  };
  const g10 = out.graph_10k as {
    opened: boolean;
    graph_loaded?: boolean;
    drawn_nodes?: number;
    drawn_groups?: number;
    first_frame_after_layout_ms?: number;
    whole_graph_loaded_ms?: number;
    summary_bytes?: number;
    graph_bytes?: number;
  };
  console.log(
    `map bench (${out.browser}, ${out.viewport}; ${String(out.rendering)}; WebGL renderer: ${String(out.webgl_renderer)})`,
  );
  const m = out.machine as { cpus: number; loadavg_before: number[] };
  console.log(`machine: ${m.cpus} cpus, load average before ${m.loadavg_before.map((x) => x.toFixed(2)).join(" ")}`);
  console.log(
    `1k graph opens with ${g1.drawn_nodes} drawn nodes (${g1.drawn_groups} namespace groups); /graph took ${f(g1.graph_fetch_in_page_ms)} of it`,
  );
  console.log(`pan/zoom (${g1.renderer}): ${g1.pan_zoom.frames} frames, p50 ${f(g1.pan_zoom.p50)}`);
  const all = g1.pan_zoom_all_open;
  for (const r of RENDERERS)
    console.log(
      `pan/zoom with every group open (${JSON.stringify(all[r].drawn)}), ${r}: p50 ${f(all[r].p50)} p95 ${f(all[r].p95)}; ` +
        `draw p50 ${f(all[r].draw_p50)} p95 ${f(all[r].draw_p95)}`,
    );
  for (const [r, p] of Object.entries(g1.pan_zoom_by_renderer))
    console.log(
      `pan/zoom with ${r}: ${p.frames} frames, p50 ${f(p.p50)} p95 ${f(p.p95)}; ` +
        `${p.draws} drawn, draw p50 ${f(p.draw_p50)} p95 ${f(p.draw_p95)}`,
    );
  const floor = out.pan_zoom_floor as { empty_map: Record<string, PanZoom>; blank_page: PanZoom };
  for (const [r, p] of Object.entries(floor.empty_map))
    console.log(`pan/zoom floor: empty map with ${r} p50 ${f(p.p50)} p95 ${f(p.p95)}`);
  console.log(`pan/zoom floor: blank page p50 ${f(floor.blank_page.p50)} p95 ${f(floor.blank_page.p95)}`);
  if (g10.opened)
    console.log(
      `10k graph opens with ${g10.drawn_nodes} drawn nodes (${g10.drawn_groups} groups) in ${f(g10.first_frame_after_layout_ms ?? NaN)} ` +
        `from its summary (${g10.summary_bytes} bytes); the whole graph (${g10.graph_bytes} bytes) is there at ${f(g10.whole_graph_loaded_ms ?? NaN)}`,
    );
  else
    console.log(
      `10k graph: not drawn within ${OPEN_10K_TIMEOUT_MS / 1000} s (graph loaded: ${String(g10.graph_loaded)})`,
    );
  for (const [name, t] of Object.entries(targets))
    console.log(`${name.padEnd(28)} ${f(t.value_ms).padStart(12)}  target < ${t.target_ms} ms: ${t.result}`);
  console.log(`Marquez: ${String(out.marquez_on_deep_graphs)}`);
  console.log(`written to ${RESULTS}`);
}

if (process.env.MAP_BENCH_IMPORT === undefined)
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
