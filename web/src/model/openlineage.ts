// OpenLineage RunEvents (a file of them, as Spark's file transport writes) read into lineage
// events, naming datasets as skade's ingest does: a table of this warehouse by its catalog
// name, anything else as `system:name`.
import type { ApiColumnInput, ApiColumnLineage, ApiDatasetRef, ApiLineageEvent, RunState } from "../api/types.js";

interface OlField {
  name: string;
  type?: string;
}

interface OlInputField {
  namespace: string;
  name: string;
  field: string;
  transformations?: { type?: string; subtype?: string; masking?: boolean }[];
}

interface OlDataset {
  namespace: string;
  name: string;
  facets?: {
    symlinks?: { identifiers?: { namespace: string; name: string; type?: string }[] };
    version?: { datasetVersion?: string };
    schema?: { fields?: OlField[] };
    columnLineage?: { fields?: Record<string, { inputFields?: OlInputField[] }>; dataset?: OlInputField[] };
  };
  outputFacets?: { outputStatistics?: { rowCount?: number } };
}

export interface OlRunEvent {
  eventType?: RunState;
  eventTime: string;
  run: {
    runId: string;
    facets?: { parent?: { run?: { runId?: string }; job?: { namespace?: string; name?: string } } };
  };
  job: { namespace: string; name: string };
  inputs?: OlDataset[];
  outputs?: OlDataset[];
}

export interface NamingOptions {
  /** Catalog namespaces whose `TABLE` symlinks name tables of this warehouse (`file:/wh`, a REST catalog's uri). */
  warehouseCatalogs: readonly string[];
}

/** The system kind of an OpenLineage namespace, as skade's SystemKindOf gives it. */
export function systemKindOf(ns: string): string {
  if (ns.startsWith("arn:aws:glue:")) return "glue";
  const scheme = ns.indexOf("://");
  if (scheme > 0) return ns.slice(0, scheme);
  const colon = ns.indexOf(":");
  return colon > 0 ? ns.slice(0, colon) : ns;
}

type Naming = Pick<ApiDatasetRef, "key" | "system" | "name" | "namespace">;

export function datasetName(d: Pick<OlDataset, "namespace" | "name" | "facets">, options: NamingOptions): Naming {
  const symlink = d.facets?.symlinks?.identifiers?.find(
    (i) => (i.type ?? "TABLE") === "TABLE" && options.warehouseCatalogs.includes(i.namespace),
  );
  if (symlink) {
    const dot = symlink.name.lastIndexOf(".");
    return {
      key: symlink.name,
      system: "skade",
      name: symlink.name,
      namespace: symlink.name.slice(0, Math.max(dot, 0)),
    };
  }
  const system = systemKindOf(d.namespace);
  return { key: `${system}:${d.name}`, system, name: d.name, namespace: d.namespace };
}

function inputsOf(fields: OlInputField[], naming: Map<string, string>, options: NamingOptions): ApiColumnInput[] {
  return fields.flatMap((f) => {
    const from = naming.get(`${f.namespace}\u0000${f.name}`) ?? datasetName(f, options).key;
    const ts = f.transformations && f.transformations.length > 0 ? f.transformations : [{}];
    return ts.map((t) => ({
      from,
      column: f.field,
      type: t.type === "INDIRECT" ? ("INDIRECT" as const) : ("DIRECT" as const),
      subtype: t.subtype ?? "",
      masking: t.masking ?? false,
    }));
  });
}

function columnLineage(
  out: OlDataset,
  to: string,
  job: string,
  naming: Map<string, string>,
  options: NamingOptions,
): ApiColumnLineage[] {
  const facet = out.facets?.columnLineage;
  if (!facet) return [];
  const entries = Object.entries(facet.fields ?? {}).map(([column, f]) => ({
    to,
    column,
    job,
    inputs: inputsOf(f.inputFields ?? [], naming, options),
  }));
  if (facet.dataset && facet.dataset.length > 0)
    entries.push({ to, column: "*", job, inputs: inputsOf(facet.dataset, naming, options) });
  return entries.sort((a, b) => a.column.localeCompare(b.column));
}

/** A lineage event of one RunEvent; null for one that names no dataset. */
export function runEventToLineage(ev: OlRunEvent, options: NamingOptions): ApiLineageEvent | null {
  const inputs = ev.inputs ?? [];
  const outputs = ev.outputs ?? [];
  if (inputs.length === 0 && outputs.length === 0) return null;
  const naming = new Map<string, string>();
  const ref = (d: OlDataset, output: boolean): ApiDatasetRef => {
    const n = datasetName(d, options);
    naming.set(`${d.namespace}\u0000${d.name}`, n.key);
    const base = { ...n, snapshot_id: d.facets?.version?.datasetVersion ?? null };
    if (!output) return base;
    const fields = d.facets?.schema?.fields;
    return {
      ...base,
      row_count: d.outputFacets?.outputStatistics?.rowCount ?? null,
      columns: fields ? fields.map((f) => ({ name: f.name, type: f.type ?? "" })) : null,
    };
  };
  const ins = inputs.map((d) => ref(d, false));
  const outs = outputs.map((d) => ref(d, true));
  const runState = ev.eventType ?? "OTHER";
  return {
    event_id: `${ev.run.runId}:${runState}:${ev.eventTime}`,
    actor: ev.job.name,
    operation: "external",
    ts_ms: Date.parse(ev.eventTime),
    commit_seq: null,
    run_id: ev.run.runId,
    job: { namespace: ev.job.namespace, name: ev.job.name },
    run_state: runState,
    inputs: ins,
    outputs: outs,
    column_lineage: outputs.flatMap((d, i) => columnLineage(d, outs[i].key, ev.job.name, naming, options)),
  };
}

interface RecentRun {
  runId: string;
  job: { namespace: string; name: string };
  inputs: Set<string>;
  outputs: Set<string>;
}

/** Whether a job is Spark's pseudo-job closing each SQL statement (`<app>.command_result`). */
function isCommandResult(name: string): boolean {
  return name === "command_result" || name.endsWith(".command_result");
}

/**
 * The lineage events of RunEvents in order, as skade's ingest gives them: Spark's closing
 * `command_result` event takes the run id and job of the latest run of its parent run that shares
 * an output with it (else an input), or its parent's, so it adds no edges of its own.
 */
export function runEventsToLineage(events: readonly OlRunEvent[], options: NamingOptions): ApiLineageEvent[] {
  const recent = new Map<string, RecentRun[]>();
  const out: ApiLineageEvent[] = [];
  for (const ev of events) {
    const e = runEventToLineage(ev, options);
    if (!e) continue;
    const parent = ev.run.facets?.parent;
    const parentRun = parent?.run?.runId;
    const parentJob = parent?.job;
    if (parentRun && parentJob?.namespace && parentJob.name) {
      const runs = recent.get(parentRun) ?? [];
      recent.set(parentRun, runs);
      if (!isCommandResult(ev.job.name)) {
        const at = runs.findIndex((r) => r.runId === ev.run.runId);
        const run =
          at >= 0
            ? runs.splice(at, 1)[0]
            : { runId: ev.run.runId, job: ev.job, inputs: new Set<string>(), outputs: new Set<string>() };
        for (const d of e.inputs) run.inputs.add(d.key);
        for (const d of e.outputs) run.outputs.add(d.key);
        runs.push(run);
      } else {
        const byOutputs = e.outputs.length > 0;
        const mine = byOutputs ? e.outputs : e.inputs;
        const closed = [...runs].reverse().find((r) => mine.some((d) => (byOutputs ? r.outputs : r.inputs).has(d.key)));
        const job = closed ? closed.job : { namespace: parentJob.namespace, name: parentJob.name };
        out.push({
          ...e,
          run_id: closed ? closed.runId : parentRun,
          job,
          actor: job.name,
          column_lineage: e.column_lineage.map((c) => ({ ...c, job: job.name })),
        });
        continue;
      }
    }
    out.push(e);
  }
  return out;
}

/** The RunEvents of a JSON-lines text; a line that is not a RunEvent is an error naming its number. */
export function parseRunEvents(text: string): OlRunEvent[] {
  return text
    .split("\n")
    .map((line, i) => ({ line: line.trim(), number: i + 1 }))
    .filter((l) => l.line !== "")
    .map(({ line, number }) => {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new Error(`line ${number}: not JSON`);
      }
      if (
        typeof value !== "object" ||
        value === null ||
        !("run" in value) ||
        !("job" in value) ||
        !("eventTime" in value)
      )
        throw new Error(`line ${number}: not an OpenLineage RunEvent (needs eventTime, run and job)`);
      return value as OlRunEvent;
    });
}
