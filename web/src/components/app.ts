// The system map app: loads the graph, lays it out in the worker, draws it, follows the live
// stream, and keeps its view in the address.
import { ApiClient } from "../api/client.js";
import { subscribeEvents, type StreamState } from "../api/events.js";
import type { ApiCommit, ApiGraph } from "../api/types.js";
import { LayoutClient } from "../layout/layout-client.js";
import type { Layout } from "../layout/protocol.js";
import { openedGroup } from "../layout/splice.js";
import { columnsOf } from "../model/columns.js";
import { displayGraph, groupsOf, nodeLikeGroups, summaryGraph, type DisplayGraph } from "../model/display.js";
import { focusLabel, focusView } from "../model/focus.js";
import { applyLiveEvent, foldEvents } from "../model/live.js";
import { looks, PULSE_MS, type Looks } from "../model/looks.js";
import { EMPTY_MODEL, fromGraph, type MapModel } from "../model/map-model.js";
import { navigate } from "../model/navigation.js";
import { parseRunEvents, runEventsToLineage } from "../model/openlineage.js";
import { search } from "../model/search.js";
import { asOf, timeSteps } from "../model/time.js";
import { timeline } from "../model/timeline.js";
import { decodeState, encodeState, type ViewState } from "../model/url-state.js";
import { el } from "./dom.js";
import { bindKeys } from "./keyboard.js";
import { createMapView } from "./map-view.js";
import { exposeProbe } from "./probe.js";
import { searchBox } from "./search-box.js";
import { renderSidePanel } from "./side-panel.js";
import { applyTheme, initialTheme, toggleTheme } from "./theme.js";
import { timeSlider } from "./time-slider.js";
import { renderTimeline } from "./timeline-view.js";

/** The newest `keep` commits, oldest first: the live stream resumes after the newest one. */
async function recentCommits(api: ApiClient, keep: number): Promise<ApiCommit[]> {
  const log = await api.commits({ order: "desc", limit: keep });
  return log.commits.reverse();
}

export function startApp(root: HTMLElement): void {
  applyTheme(initialTheme());
  const api = new ApiClient();
  const layouts = new LayoutClient();
  let model: MapModel = EMPTY_MODEL;
  let commits: ApiCommit[] = [];
  let state: ViewState = decodeState(location.hash);
  let display: DisplayGraph = { nodes: [], edges: [] };
  let drawnShape = "";
  /** The display graph drawn last and its layout. */
  let laid: { graph: DisplayGraph; layout: Layout; shape: string } | null = null;
  let drawnPanel = "";
  let drawnTimeline: [MapModel, ApiCommit[], number | null] | null = null;
  // the slider's stops change only with the model (a map of 10,000 datasets has 40,000 times)
  let steps: { of: MapModel | null; steps: number[] } = { of: null, steps: [] };
  let stream: StreamState = "connecting";
  let pathStart: string | null = null;
  const expanded = new Set<string>();
  /** A large map's collapsed graph from the server, drawn until the whole graph is there. */
  let summary: { graph: DisplayGraph; datasets: number } | null = null;
  let summaryAsks = 0;

  const status = el("span", { class: "status" });
  const counts = el("span", { class: "counts" });
  const mapHost = el("div", { class: "map", tabindex: "0" });
  const panel = el("aside", { class: "panel" });
  const timelineHost = el("div", { class: "timeline-host" });
  const slider = timeSlider((t) => setState({ ...state, time: t }));
  const fileInput = el("input", { type: "file", accept: ".jsonl,.json", "aria-label": "open OpenLineage events" });
  const catalogs = el("input", {
    type: "text",
    placeholder: "warehouse catalogs (comma-separated)",
    "aria-label": "warehouse catalogs",
  });
  const themeButton = el("button", { title: "theme (t)" }, "◐");
  const box = searchBox(
    (q) => search(model, q),
    (key) => select(key),
  );
  root.append(
    el("header", {}, el("h1", {}, "skade"), box, slider.element, themeButton, counts, status),
    el("main", {}, mapHost, panel),
    el("footer", {}, timelineHost, el("label", { class: "open" }, "open OpenLineage file ", fileInput, catalogs)),
  );
  const { view: map, kind: renderer } = createMapView(mapHost, (id, extend) =>
    extend && id ? extendPath(id) : select(id),
  );
  let drawn = 0;
  let loaded = false;
  let pulseTimer: ReturnType<typeof setTimeout> | null = null;
  exposeProbe({
    loaded: () => loaded,
    drawn: () => drawn,
    state: () => state,
    nodes: () => map.drawnNodes(),
    edges: () => map.drawnEdges(),
    lanes: () => map.drawnLanes(),
    labels: () => map.drawnLabels(),
    renderer: () => renderer,
    drawMs: () => map.drawTimes(),
  });

  /** A shift-click (or `p` on the selection) picks the other end of a path from the selection. */
  function extendPath(key: string): void {
    const from = state.selected;
    if (from && from !== key) setState({ ...state, path: [from, key] });
    else select(key);
  }

  function setState(next: ViewState): void {
    state = next;
    history.replaceState(null, "", `#${encodeState(state)}`);
    render();
  }

  function select(key: string | null): void {
    const group = key ? display.nodes.find((n) => n.id === key && n.group) : undefined;
    if (group) {
      expanded.add(group.id);
      // before the whole graph is there, the server sends the opened group's members
      if (summary) loadSummary().catch(() => undefined);
      render();
      return;
    }
    // a dataset inside a collapsed group (a search hit, a deep link) opens its groups
    if (key && !display.nodes.some((n) => n.id === key)) groupsOf(model, key).forEach((g) => expanded.add(g));
    setState({ ...state, selected: key, path: null, trace: key === state.selected ? state.trace : null });
    if (key) map.reveal(key);
  }

  function render(): void {
    const view = state.time === null ? model : asOf(model, state.time);
    const focus =
      state.focus && view.nodes.has(state.focus) ? focusView(view, state.focus, state.up, state.down) : null;
    display = summary ? summary.graph : displayGraph(view, { visible: focus?.keys, expanded });
    counts.textContent = focus ? focusLabel(focus) : `${summary ? summary.datasets : view.nodes.size} datasets`;
    status.textContent = stream;
    status.dataset.state = stream;
    // the same nodes and edges in another order are the same drawing (the whole graph after its summary)
    const shape = JSON.stringify([display.nodes.map((n) => n.id).sort(), display.edges.map((e) => e.id).sort()]);
    const now = Date.now();
    const looksOf = (shown: DisplayGraph): Looks => looks(view, shown, state.selected, state.path, now, state.trace);
    if (shape !== drawnShape) {
      drawnShape = shape;
      const shown = display;
      // a group opened on the drawn map: only its members are laid out, in its place
      const opened = laid ? openedGroup(laid.graph, shown) : null;
      const splice =
        laid && opened ? { base: laid.layout, group: opened.group, lane: opened.members.nodes[0].lane } : undefined;
      // for benchmarks: the layout's share of an expand (layout-asked to layout-laid)
      performance.mark("skade:layout-asked");
      void layouts.layout(opened ? opened.members : shown, splice).then((layout) => {
        if (!layout) return;
        performance.mark("skade:layout-laid");
        laid = { graph: shown, layout, shape };
        const first = drawn === 0;
        map.show(shown, layout, looksOf(shown));
        if (first && state.selected) map.reveal(state.selected);
        drawn++;
        // for benchmarks and tools: when each layout has been drawn (web/bench/map.bench.ts)
        performance.mark("skade:layout-done", { detail: { drawn, nodes: shown.nodes.length } });
      });
    } else {
      // the whole graph drawn as its summary was: its groups (with their members) are the ones
      // the next group opened in place is looked up in
      if (laid && laid.shape === shape) laid = { ...laid, graph: display };
      map.repaint(looksOf(display));
    }
    // the panel (and a preview or changes table open in it) is redrawn only when what it shows changed
    const node = state.selected ? view.nodes.get(state.selected) : undefined;
    const panelShape = JSON.stringify([
      state.selected,
      state.trace,
      state.time,
      node?.latest_snapshot,
      node?.last_write_ms,
      node?.dropped_ms,
      view.edges.length,
    ]);
    if (panelShape !== drawnPanel) {
      drawnPanel = panelShape;
      renderSidePanel(
        panel,
        api,
        view,
        state.selected,
        0,
        state.selected ? columnsOf(view, state.selected) : [],
        state.trace,
        (trace) => setState({ ...state, trace, path: null }),
      );
    }
    // the timeline is redrawn only when the model, the commits or the time changed
    const timelineOf = drawnTimeline;
    if (!timelineOf || timelineOf[0] !== model || timelineOf[1] !== commits || timelineOf[2] !== state.time) {
      drawnTimeline = [model, commits, state.time];
      renderTimeline(timelineHost, timeline(view, commits), (key) => select(key));
    }
    if (steps.of !== model) steps = { of: model, steps: timeSteps(model) };
    slider.setSteps(steps.steps, state.time);
    // a pulse fades: paint once more when the newest one is over
    const pulses = [...view.nodes.values()].map((n) => n.pulse_ms ?? -Infinity);
    const fade = Math.max(...pulses, -Infinity) + PULSE_MS - now;
    if (pulseTimer) clearTimeout(pulseTimer);
    pulseTimer = fade > 0 ? setTimeout(render, fade + 50) : null;
  }

  const shownSystems = (): string[] | undefined => (state.systems.length > 0 ? state.systems : undefined);

  /**
   * A large map's collapsed graph with the groups opened so far (and the namespace groups it
   * draws as nodes), drawn while the whole graph loads; nothing for a map that is not large.
   */
  async function loadSummary(): Promise<void> {
    // only the newest answer is drawn (two quick clicks ask twice)
    const asked = ++summaryAsks;
    const ask = (expand: string[]): Promise<ApiGraph> =>
      api.graph({
        systems: shownSystems(),
        collapse: "system",
        expand: expand.length > 0 ? expand : undefined,
        columns: false,
      });
    let answer = await ask([...expanded]);
    const more = nodeLikeGroups(answer).filter((id) => !expanded.has(id));
    if (more.length > 0) answer = await ask([...expanded, ...more]);
    const graph = summaryGraph(answer);
    if (!graph || loaded || state.focus || asked !== summaryAsks) return;
    summary = { graph, datasets: answer.systems.reduce((sum, s) => sum + s.total, 0) };
    render();
  }

  /**
   * The graph collapsed by system first (small whatever the map's size): a large map draws it at
   * once, then the whole graph, which everything but opening groups needs. (One after the other:
   * the server folds the events once for both.)
   */
  function loadGraph(): void {
    loadSummary()
      // without its summary a map still opens, from the whole graph (which reports any error)
      .catch(() => undefined)
      .finally(() => loadWholeGraph(shownSystems()));
  }

  function loadWholeGraph(systems: string[] | undefined): void {
    Promise.all([api.graph({ systems }), recentCommits(api, 500)])
      .then(([graph, log]) => {
        summary = null;
        model = fromGraph(graph);
        commits = log;
        // a deep link's selection is drawn as itself, not as the group it stands in
        if (state.selected) groupsOf(model, state.selected).forEach((g) => expanded.add(g));
        // the stream resumes after the commit the graph was folded at: what the graph holds is not
        // replayed (the commit log could have been read before the graph's fold delivered events)
        const since = graph.window.commit_seq;
        subscribeEvents({
          sinceSeq: since,
          onState: (s) => {
            stream = s;
            status.textContent = s;
            status.dataset.state = s;
          },
          onEvent: (event) => {
            if (event.kind === "commit") commits = [...commits, event.data].slice(-500);
            model = applyLiveEvent(model, event, Date.now());
            render();
          },
        });
        loaded = true;
        render();
        // for benchmarks: when the whole graph is there (a large map drew its summary before)
        performance.mark("skade:whole-graph");
      })
      .catch((e: unknown) => {
        status.textContent = `no server: ${String(e)}`;
        render();
      });
  }

  fileInput.addEventListener("change", () => {
    const file = fileInput.files?.[0];
    if (!file) return;
    void file.text().then((text) => {
      const options = {
        warehouseCatalogs: catalogs.value
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== ""),
      };
      try {
        model = foldEvents(runEventsToLineage(parseRunEvents(text), options));
        summary = null;
        commits = [];
        render();
      } catch (e) {
        status.textContent = String(e);
      }
    });
  });
  themeButton.addEventListener("click", () => {
    toggleTheme();
    render();
  });
  window.addEventListener("hashchange", () => {
    state = decodeState(location.hash);
    render();
  });
  bindKeys({
    move: (key) => select(navigate(display, state.selected, key)),
    search: () => box.querySelector("input")?.focus(),
    toggleFocus: () => setState({ ...state, focus: state.focus ? null : state.selected }),
    depth: (delta) => setState({ ...state, up: Math.max(0, state.up + delta), down: Math.max(0, state.down + delta) }),
    pathEnd: () => {
      if (!state.selected) return;
      if (pathStart && pathStart !== state.selected) {
        setState({ ...state, path: [pathStart, state.selected] });
        pathStart = null;
      } else pathStart = state.selected;
    },
    trace: () => {
      if (state.selected) setState({ ...state, trace: state.trace === "down" ? null : "down", path: null });
    },
    theme: () => {
      toggleTheme();
      render();
    },
    clear: () => setState({ ...state, selected: null, path: null }),
  });
  loadGraph();
}
