import { ApiError, errorOf } from "./errors.js";
import { readRows, RowsReader } from "./ndjson.js";
import type {
  ApiCommits,
  ApiGraph,
  ApiImpact,
  ApiNodeDetail,
  Cell,
  ChangesQuery,
  CommitsQuery,
  GraphQuery,
  ImpactDirection,
  PartitionsQuery,
  PreviewQuery,
  Rows,
  RowsHeader,
} from "./types.js";

export const API_BASE = "/api/skade/v1";

type Params = Record<string, string | number | boolean | undefined>;

function query(params: Params): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : "";
}

/** `/tables/{namespace}/{table}` of a table key `ns.table` (namespace levels joined by %1F). */
export function tablePath(key: string): string {
  const dot = key.lastIndexOf(".");
  if (dot <= 0 || key.includes(":"))
    throw new ApiError(`${key} is not a table of this warehouse`, "BadRequestException", 400);
  const ns = key.slice(0, dot).split(".").map(encodeURIComponent).join("%1F");
  return `/tables/${ns}/${encodeURIComponent(key.slice(dot + 1))}`;
}

/** The typed client of docs/api.md. */
export class ApiClient {
  constructor(
    private readonly base: string = API_BASE,
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  graph(q: GraphQuery = {}): Promise<ApiGraph> {
    return this.json<ApiGraph>(
      "/graph" +
        query({
          since: q.since,
          until: q.until,
          systems: q.systems?.join(","),
          focus: q.focus,
          up: q.up,
          down: q.down,
          columns: q.columns,
          collapse: q.collapse,
          expand: q.expand?.join(","),
        }),
    );
  }

  node(key: string): Promise<ApiNodeDetail> {
    return this.json<ApiNodeDetail>("/node" + query({ key }));
  }

  impact(key: string, direction: ImpactDirection, depth = 0): Promise<ApiImpact> {
    return this.json<ApiImpact>("/impact" + query({ key, direction, depth }));
  }

  /** The address of the CSV form of an impact list, for a download link. */
  impactCsvUrl(key: string, direction: ImpactDirection, depth = 0): string {
    return this.base + "/impact" + query({ key, direction, depth, format: "csv" });
  }

  commits(q: CommitsQuery = {}): Promise<ApiCommits> {
    const params = { from_seq: q.fromSeq, until_seq: q.untilSeq, order: q.order, table: q.table, limit: q.limit };
    return this.json<ApiCommits>("/commits" + query(params));
  }

  preview(table: string, q: PreviewQuery = {}, onRow?: (row: Cell[], header: RowsHeader) => void): Promise<Rows> {
    const params = { snapshot: q.snapshot, limit: q.limit, columns: q.columns?.join(","), where: q.where };
    return this.rows(tablePath(table) + "/preview" + query(params), onRow);
  }

  /** A snapshot's files summed per partition (`skade partitions`), in the rows form. */
  partitions(table: string, q: PartitionsQuery = {}): Promise<Rows> {
    return this.rows(tablePath(table) + "/partitions" + query({ snapshot: q.snapshot, limit: q.limit }));
  }

  changes(table: string, q: ChangesQuery, onRow?: (row: Cell[], header: RowsHeader) => void): Promise<Rows> {
    const params = {
      from: q.from,
      to: q.to,
      compute_updates: q.computeUpdates,
      net: q.net,
      limit: q.limit,
      columns: q.columns?.join(","),
      where: q.where,
    };
    return this.rows(tablePath(table) + "/changes" + query(params), onRow);
  }

  private async get(path: string, accept: string): Promise<Response> {
    let response: Response;
    try {
      response = await this.fetcher(this.base + path, { headers: { Accept: accept } });
    } catch (e) {
      throw new ApiError(`cannot reach the server: ${String(e)}`, "ServerError", 0);
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  private async json<T>(path: string): Promise<T> {
    const response = await this.get(path, "application/json");
    return (await response.json()) as T;
  }

  private async rows(path: string, onRow?: (row: Cell[], header: RowsHeader) => void): Promise<Rows> {
    const response = await this.get(path, "application/x-ndjson");
    if (!response.body) throw new ApiError("the response has no body", "ServerError", 500);
    return readRows(response.body, new RowsReader(onRow));
  }
}
