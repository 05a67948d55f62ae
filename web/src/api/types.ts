// The shapes of docs/api.md, the contract with `skade serve`. Field names follow the wire.

/** Milliseconds since the Unix epoch. */
export type Millis = number;
/** A 64-bit snapshot id as a decimal string (a JS number would lose its low digits). */
export type SnapshotId = string;
export type RunState = "START" | "RUNNING" | "COMPLETE" | "ABORT" | "FAIL" | "OTHER";
export type NodeKind = "table" | "dataset";

export interface ApiColumn {
  name: string;
  type: string;
}

export interface ApiNode {
  key: string;
  system: string;
  name: string;
  namespace: string;
  kind: NodeKind;
  first_seen_ms: Millis;
  dropped_ms: Millis | null;
  latest_snapshot: SnapshotId | null;
  last_write_ms: Millis | null;
  last_writer: string;
  write_times_ms: Millis[];
  row_count: number | null;
  run_state: RunState | null;
  columns: ApiColumn[] | null;
  /** Jobs that read this dataset and wrote it back (MERGE): in-place updates, not edges. */
  updated_in_place_by: string[];
}

export interface ApiEdge {
  from: string;
  to: string;
  job: string;
  actor: string;
  count: number;
  first_ms: Millis;
  last_ms: Millis;
  run_ids: string[];
  run_state: RunState | null;
}

export type TransformationType = "DIRECT" | "INDIRECT";

export interface ApiColumnInput {
  from: string;
  column: string;
  type: TransformationType;
  subtype: string;
  masking: boolean;
}

export interface ApiColumnLineage {
  to: string;
  column: string;
  job: string;
  inputs: ApiColumnInput[];
}

export interface ApiSystemCount {
  system: string;
  total: number;
  shown: number;
}

export interface ApiFocus {
  key: string;
  up: number;
  down: number;
  shown: number;
  total: number;
  hidden: Record<string, { up: number; down: number }>;
}

export interface ApiGraph {
  /** `commit_seq`: the newest commit the graph was folded at, where the event stream resumes. */
  window: { since_ms: Millis | null; until_ms: Millis | null; generated_ms: Millis; commit_seq: number };
  systems: ApiSystemCount[];
  nodes: ApiNode[];
  edges: ApiEdge[];
  column_lineage: ApiColumnLineage[];
  focus: ApiFocus | null;
  /** With `collapse`: the groups standing for the nodes not returned, and the edges between what stands. */
  groups?: ApiGroup[];
  group_edges?: ApiGroupEdge[];
}

/** A group of the collapsed graph: a whole system (`group:kafka`) or one namespace of it (`group:kafka:NS`). */
export interface ApiGroup {
  id: string;
  level: "system" | "namespace";
  system: string;
  namespace: string | null;
  members: number;
  namespaces: number;
  last_write_ms: Millis | null;
  failed: number;
}

/** An edge of the collapsed graph: `count` edges of the full graph between what stands at its ends. */
export interface ApiGroupEdge {
  from: string;
  to: string;
  count: number;
}

export interface GraphQuery {
  since?: Millis;
  until?: Millis;
  systems?: string[];
  focus?: string;
  up?: number;
  down?: number;
  columns?: boolean;
  /** The collapsed form: groups per system (or namespace) with member counts, `expand`ed groups opened. */
  collapse?: "system" | "namespace";
  expand?: string[];
}

export interface ApiSchemaField {
  id: number;
  name: string;
  type: string;
  required: boolean;
  doc: string | null;
}

export interface ApiSnapshot {
  snapshot_id: SnapshotId;
  parent_snapshot_id: SnapshotId | null;
  sequence_number: number;
  timestamp_ms: Millis;
  operation: string;
  summary: Record<string, string>;
  added_records: number | null;
  total_records: number | null;
  schema_id: number | null;
}

export interface ApiTableDetail {
  format_version: number;
  location: string;
  current_snapshot_id: SnapshotId | null;
  schema: { schema_id: number; identifier_field_ids: number[]; fields: ApiSchemaField[] };
  partition_spec: {
    spec_id: number;
    fields: { field_id: number; source_id: number; name: string; transform: string }[];
  };
  properties: Record<string, string>;
  snapshots: ApiSnapshot[];
  refs: Record<string, { snapshot_id: SnapshotId; type: "branch" | "tag" }>;
}

export type FreshnessState = "fresh" | "stale" | "unknown";

export interface ApiFreshness {
  state: FreshnessState;
  last_write_ms: Millis | null;
  median_interval_ms: Millis | null;
  stale_after_ms: Millis | null;
}

export interface ApiWriter {
  actor: string;
  job: string;
  operation: string;
  run_id: string | null;
  event_id: string;
  commit_seq: number | null;
  ts_ms: Millis;
  run_state: RunState;
}

export interface ApiNodeDetail {
  node: ApiNode;
  latest_writer: ApiWriter | null;
  freshness: ApiFreshness;
  table: ApiTableDetail | null;
}

export type ImpactDirection = "downstream" | "upstream";

export interface ApiImpactEntry {
  key: string;
  system: string;
  name: string;
  depth: number;
  last_writer: string;
  last_write_ms: Millis | null;
}

export interface ApiImpact {
  key: string;
  direction: ImpactDirection;
  depth: number;
  entries: ApiImpactEntry[];
}

/** A cell of a preview or changelog row (docs/api.md, "Values"). */
export type Cell = null | boolean | number | string | Cell[] | { [field: string]: Cell };

export interface RowsHeader {
  columns: ApiColumn[];
  snapshot_id?: SnapshotId;
  from_snapshot_id?: SnapshotId;
  to_snapshot_id?: SnapshotId;
}

export interface Rows {
  header: RowsHeader;
  rows: Cell[][];
  truncated: boolean;
}

export interface PartitionsQuery {
  snapshot?: SnapshotId;
  limit?: number;
}

export interface PreviewQuery {
  snapshot?: SnapshotId;
  limit?: number;
  columns?: string[];
  where?: string;
}

export interface ChangesQuery {
  from: SnapshotId;
  to?: SnapshotId;
  computeUpdates?: boolean;
  net?: boolean;
  limit?: number;
  columns?: string[];
  where?: string;
}

export type CommitAction = "create" | "commit" | "drop" | "rename";

export interface ApiCommit {
  commit_seq: number;
  table: string;
  action: CommitAction;
  snapshot_id: SnapshotId | null;
  operation: string;
  engine: string;
  committed_at_ms: Millis;
  actor: string;
}

export interface ApiCommits {
  commits: ApiCommit[];
  /** Oldest first the next `from_seq`; newest first the next `until_seq`. */
  next_seq: number;
}

export interface CommitsQuery {
  /** The first commit_seq (inclusive). */
  fromSeq?: number;
  /** Only commits below this commit_seq (exclusive). */
  untilSeq?: number;
  order?: "asc" | "desc";
  table?: string;
  limit?: number;
}

export interface ApiDatasetRef {
  key: string;
  system: string;
  name: string;
  namespace: string;
  snapshot_id: SnapshotId | null;
  row_count?: number | null;
  columns?: ApiColumn[] | null;
}

export interface ApiLineageEvent {
  event_id: string;
  actor: string;
  operation: string;
  ts_ms: Millis;
  commit_seq: number | null;
  run_id: string | null;
  job: { namespace: string; name: string } | null;
  run_state: RunState;
  inputs: ApiDatasetRef[];
  outputs: ApiDatasetRef[];
  column_lineage: ApiColumnLineage[];
}

export type LiveEvent =
  { kind: "commit"; seq: number; data: ApiCommit } | { kind: "lineage"; seq: number; data: ApiLineageEvent };

export interface ApiErrorBody {
  error: { message: string; type: string; code: number };
}
