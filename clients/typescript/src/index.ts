/**
 * mnemod: a client for the mnemod agent-memory server. One object, one method per REST
 * operation; no run-time dependencies beyond `fetch` (Node 18+, Deno, Bun, browsers).
 *
 * ```ts
 * import { MnemodClient } from "mnemod";
 * const c = new MnemodClient({ url: "http://127.0.0.1:6636" });
 * await c.insert("agent", { text: "the staging password is hunter2" });
 * const { results } = await c.retrieve("agent", { query: "staging password", half_life: "7d" });
 * ```
 *
 * A `503` answer is retried after its `Retry-After` (up to `retries` times); every other
 * error status throws an {@link ApiError} carrying the server's code and field.
 */

import { ApiError, MnemodError, TransportError, errorFromResponse } from "./errors.js";
import type {
  CompactRequest, CompactResult, CreateNamespaceRequest, Embedding, ExportedSegment,
  ImportProgress, ImportResult, InsertResult, ListSegmentsRequest, NamespaceCreated,
  NamespaceStats, RetrieveRequest, RetrieveResult, Segment, SegmentInput, SegmentPage,
  SegmentPatch, SnapshotRequest, Timestamp,
} from "./types.js";

export * from "./errors.js";
export type * from "./types.js";

export const DEFAULT_URL = "http://127.0.0.1:6636";
export const VERSION = "0.1.0";

export interface MnemodClientOptions {
  /** Server URL; default `MNEMOD_URL` (in Node), else `http://127.0.0.1:6636`. */
  url?: string;
  /** Bearer key; default `MNEMOD_API_KEY` (in Node). `""` sends none. */
  apiKey?: string;
  /** Milliseconds per request (0: no limit). Default 30000. */
  timeoutMs?: number;
  /** How many times a 503 is retried. Default 3. */
  retries?: number;
  /** Longest wait honoured from a Retry-After, in milliseconds. Default 30000. */
  maxRetryWaitMs?: number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | boolean | undefined>;

function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const v = p?.env?.[name];
  return v ? v : undefined;
}

function wireTimestamp(t: Timestamp): string | number {
  return t instanceof Date ? t.toISOString() : t;
}

function wireEmbedding(e: Embedding): number[] | string {
  return typeof e === "string" ? e : Array.from(e);
}

const TIMESTAMP_FIELDS = new Set(["timestamp", "origin", "since", "until", "as_of"]);

/** A request object in wire form: undefined dropped, Dates and Float32Arrays converted. */
function wire<T extends object>(obj: T): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined) continue;
    if (TIMESTAMP_FIELDS.has(k)) out[k] = wireTimestamp(v as Timestamp);
    else if (k === "embedding") out[k] = wireEmbedding(v as Embedding);
    else out[k] = v;
  }
  return out;
}

function retryAfterMs(h: string | null): number | undefined {
  if (!h) return undefined;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const when = Date.parse(h);
  return Number.isFinite(when) ? Math.max(0, when - Date.now()) : undefined;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function decode(resp: Response): Promise<unknown> {
  const text = await resp.text();
  if (!text) return null;
  if ((resp.headers.get("content-type") ?? "").includes("json")) {
    try { return JSON.parse(text); } catch { /* fall through: return the text */ }
  }
  return text;
}

/** A client of one mnemod server. */
export class MnemodClient {
  readonly url: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly maxRetryWaitMs: number;
  private readonly headers: Record<string, string>;
  private readonly fetchFn: typeof fetch;

  constructor(opts: MnemodClientOptions = {}) {
    let url = opts.url ?? env("MNEMOD_URL") ?? DEFAULT_URL;
    if (!url.includes("://")) url = "http://" + url;
    this.url = url.replace(/\/+$/, "");
    this.apiKey = opts.apiKey ?? env("MNEMOD_API_KEY") ?? "";
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.retries = opts.retries ?? 3;
    this.maxRetryWaitMs = opts.maxRetryWaitMs ?? 30_000;
    this.headers = { ...(opts.headers ?? {}) };
    const f = opts.fetch ?? globalThis.fetch;
    if (!f) throw new MnemodError("no fetch: pass options.fetch (Node 18+ has a global one)");
    this.fetchFn = f.bind(globalThis);
  }

  // ------------------------------------------------------------------ transport

  private headersFor(contentType?: string): Record<string, string> {
    const h: Record<string, string> = { Accept: "application/json", ...this.headers };
    if (this.apiKey) h.Authorization = `Bearer ${this.apiKey}`;
    if (contentType) h["Content-Type"] = contentType;
    return h;
  }

  private async send(method: string, path: string, body: BodyInit | undefined,
                     contentType: string | undefined, timeout: boolean): Promise<Response> {
    const init: RequestInit & { duplex?: "half" } = {
      method, headers: this.headersFor(body !== undefined ? contentType : undefined),
    };
    if (body !== undefined) {
      init.body = body;
      if (typeof ReadableStream !== "undefined" && body instanceof ReadableStream) {
        init.duplex = "half"; // a streamed request body (Node's fetch requires saying so)
      }
    }
    if (timeout && this.timeoutMs > 0) init.signal = AbortSignal.timeout(this.timeoutMs);
    try {
      return await this.fetchFn(this.url + path, init);
    } catch (e) {
      throw new TransportError(`${method} ${path}: ${(e as Error).message ?? e}`, { cause: e });
    }
  }

  /**
   * Send one request and return its decoded JSON, throwing {@link ApiError} for an error
   * status. `body`: an object (sent as JSON). The escape hatch for routes not wrapped here.
   */
  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.requestFull<T>(method, path, body)).body;
  }

  private async requestFull<T>(method: string, path: string, body?: unknown,
                               retry = true): Promise<{ status: number; body: T }> {
    const data = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      const resp = await this.send(method, path, data, "application/json", true);
      let parsed: unknown;
      try {
        parsed = await decode(resp);
      } catch (e) {
        throw new TransportError(`${method} ${path}: ${(e as Error).message}`, { cause: e });
      }
      if (resp.status < 400) return { status: resp.status, body: parsed as T };
      const wait = retryAfterMs(resp.headers.get("retry-after"));
      if (resp.status === 503 && retry && attempt < this.retries) {
        await sleep(Math.min(this.maxRetryWaitMs, wait ?? 500 * (attempt + 1)));
        continue;
      }
      throw errorFromResponse(resp.status, parsed, wait === undefined ? undefined : wait / 1000);
    }
  }

  private static nsPath(ns: string, rest = ""): string {
    return `/v1/namespaces/${encodeURIComponent(ns)}${rest}`;
  }

  private static query(q: Query): string {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) {
      if (v === undefined || (k === "embedding" && v === false)) continue;
      p.set(k, String(v));
    }
    const s = p.toString();
    return s ? "?" + s : "";
  }

  // ------------------------------------------------------------------ service

  /** GET /healthz: `{status: "ok"}`, or `loading` / `draining` (not retried). */
  async health(): Promise<{ status: string }> {
    const resp = await this.send("GET", "/healthz", undefined, undefined, true);
    const body = await decode(resp);
    if ((resp.status === 200 || resp.status === 503) && body && typeof body === "object") {
      return body as { status: string };
    }
    throw errorFromResponse(resp.status, body);
  }

  /** GET /metrics: the Prometheus text. */
  async metrics(): Promise<string> {
    return String(await this.request("GET", "/metrics"));
  }

  /** GET /openapi.json: the OpenAPI description the server answers with. */
  async openapi(): Promise<Record<string, unknown>> {
    return this.request("GET", "/openapi.json");
  }

  // ------------------------------------------------------------------ namespaces

  /** GET /v1/namespaces: every namespace (that the key covers) with its stats. */
  async listNamespaces(): Promise<NamespaceStats[]> {
    return (await this.request<{ namespaces: NamespaceStats[] }>("GET", "/v1/namespaces"))
      .namespaces;
  }

  /** PUT /v1/namespaces/{ns}. */
  async createNamespace(ns: string, req: CreateNamespaceRequest): Promise<NamespaceCreated> {
    const r = await this.requestFull<NamespaceCreated>("PUT", MnemodClient.nsPath(ns), wire(req));
    return { ...r.body, created: r.status === 201 };
  }

  /** GET /v1/namespaces/{ns}: its stats. */
  async getNamespace(ns: string): Promise<NamespaceStats> {
    return this.request("GET", MnemodClient.nsPath(ns));
  }

  /** DELETE /v1/namespaces/{ns}: drop it and everything in it. */
  async deleteNamespace(ns: string): Promise<void> {
    await this.request("DELETE", MnemodClient.nsPath(ns));
  }

  // ------------------------------------------------------------------ segments

  /** POST /v1/namespaces/{ns}/segments with one segment. */
  async insert(ns: string, segment: SegmentInput): Promise<InsertResult> {
    const r = await this.requestFull<Omit<InsertResult, "created">>(
      "POST", MnemodClient.nsPath(ns, "/segments"), wire(segment));
    return { ...r.body, created: r.status === 201 };
  }

  /** POST /v1/namespaces/{ns}/segments with `{segments: [...]}`: atomic, up to the server's
   * batch limit (1000 by default). */
  async insertBatch(ns: string, segments: SegmentInput[]): Promise<InsertResult> {
    const r = await this.requestFull<Omit<InsertResult, "created">>(
      "POST", MnemodClient.nsPath(ns, "/segments"), { segments: segments.map((s) => wire(s)) });
    return { ...r.body, created: r.status === 201 };
  }

  /** GET /v1/namespaces/{ns}/segments/{id}; `embedding: true` adds the stored unit vector
   * (`"base64"`: the same as base64 little-endian float32). */
  async getSegment(ns: string, id: string,
                   opts: { embedding?: boolean | "base64" } = {}): Promise<Segment> {
    return this.request("GET", MnemodClient.nsPath(ns, `/segments/${encodeURIComponent(id)}`) +
      MnemodClient.query({ embedding: opts.embedding }));
  }

  /** DELETE /v1/namespaces/{ns}/segments/{id}: forget it (hard delete). */
  async deleteSegment(ns: string, id: string): Promise<void> {
    await this.request("DELETE", MnemodClient.nsPath(ns, `/segments/${encodeURIComponent(id)}`));
  }

  /** PATCH /v1/namespaces/{ns}/segments/{id}: replace `metadata` (null clears it) and/or
   * `source`. Text, embedding and timestamp are immutable. */
  async updateSegment(ns: string, id: string,
                      patch: SegmentPatch): Promise<Segment> {
    return this.request("PATCH", MnemodClient.nsPath(ns, `/segments/${encodeURIComponent(id)}`),
      wire(patch));
  }

  /** GET /v1/namespaces/{ns}/segments: one page in seq order; pass `next` as `after`. */
  async listSegments(ns: string, req: ListSegmentsRequest = {}): Promise<SegmentPage> {
    const q: Query = {};
    for (const [k, v] of Object.entries(req)) {
      q[k] = v instanceof Date ? v.toISOString() : (v as Query[string]);
    }
    return this.request("GET", MnemodClient.nsPath(ns, "/segments") + MnemodClient.query(q));
  }

  /** Every segment of the listing, page after page. */
  async *iterSegments(ns: string, req: ListSegmentsRequest & { pageSize?: number } = {}):
    AsyncGenerator<Segment> {
    const { pageSize = 500, ...filters } = req;
    let after = filters.after;
    for (;;) {
      const page = await this.listSegments(ns, { ...filters, limit: pageSize, after });
      yield* page.segments;
      if (!page.next) return;
      after = page.next;
    }
  }

  // ------------------------------------------------------------------ retrieval

  /** POST /v1/namespaces/{ns}/retrieve: the scored top K for `query` text or `embedding`. */
  async retrieve(ns: string, req: RetrieveRequest): Promise<RetrieveResult> {
    return this.request("POST", MnemodClient.nsPath(ns, "/retrieve"), wire(req));
  }

  /** POST /v1/namespaces/{ns}/compact: shrink to `target` (or `ratio` of the active ones). */
  async compact(ns: string, req: CompactRequest): Promise<CompactResult> {
    return this.request("POST", MnemodClient.nsPath(ns, "/compact"), wire(req));
  }

  // ------------------------------------------------------------------ cluster

  /** GET /v1/cluster: nodes, streams, namespaces and counters (docs/cluster.md). A server
   * not in cluster mode answers 404 (an `ApiError` with code `not_found`). */
  async clusterStatus(): Promise<Record<string, unknown>> {
    return this.request("GET", "/v1/cluster");
  }

  /** POST /v1/cluster/snapshot: publish a snapshot and return its manifest; `trim` also
   * drops the stream records it covers. 404 when not in cluster mode. */
  async clusterSnapshot(req: SnapshotRequest = {}): Promise<Record<string, unknown>> {
    return this.request("POST", "/v1/cluster/snapshot", wire(req));
  }

  // ------------------------------------------------------------------ export / import

  /** GET /v1/namespaces/{ns}/export, streamed: each stored segment (archived and
   * superseded included) as its JSON object, in seq order, from one snapshot. */
  async *export(ns: string): AsyncGenerator<ExportedSegment> {
    for await (const line of this.exportLines(ns)) yield JSON.parse(line);
  }

  /** The export as raw NDJSON lines (without their newline). */
  async *exportLines(ns: string): AsyncGenerator<string> {
    let resp: Response;
    for (let attempt = 0; ; attempt++) {
      resp = await this.send("GET", MnemodClient.nsPath(ns, "/export"), undefined, undefined,
        false);
      if (resp.status < 400) break;
      const body = await decode(resp);
      const wait = retryAfterMs(resp.headers.get("retry-after"));
      if (resp.status === 503 && attempt < this.retries) {
        await sleep(Math.min(this.maxRetryWaitMs, wait ?? 500 * (attempt + 1)));
        continue;
      }
      throw errorFromResponse(resp.status, body, wait === undefined ? undefined : wait / 1000);
    }
    if (!resp.body) return;
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) yield line;
        }
      }
      buf += dec.decode();
      if (buf.trim()) yield buf;
    } catch (e) {
      throw e instanceof MnemodError ? e : new TransportError(`export ${ns}: ${e}`, { cause: e });
    } finally {
      reader.releaseLock();
    }
  }

  /**
   * POST /v1/namespaces/{ns}/import: bulk load, all or nothing. `source` yields insert
   * objects or NDJSON lines (an export's lines are accepted as they are). The body is
   * streamed in chunks of about `chunkBytes`; `onProgress` is called after each chunk and
   * once more with `done: true`. An error throws {@link ApiError} whose
   * `details.line` is the 1-based bad line.
   */
  async import(ns: string,
               source: Iterable<SegmentInput | ExportedSegment | string> |
                 AsyncIterable<SegmentInput | ExportedSegment | string>,
               opts: { onProgress?: (p: ImportProgress) => void; chunkBytes?: number } = {}):
    Promise<ImportResult> {
    const chunkBytes = opts.chunkBytes ?? 256 * 1024;
    const enc = new TextEncoder();
    const progress: ImportProgress = { lines: 0, bytes: 0, done: false };
    const it = (Symbol.asyncIterator in source
      ? (source as AsyncIterable<unknown>)[Symbol.asyncIterator]()
      : (source as Iterable<unknown>)[Symbol.iterator]()) as
      AsyncIterator<unknown> | Iterator<unknown>;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let parts: string[] = [];
        let size = 0;
        for (;;) {
          const { value, done } = await it.next();
          if (done) break;
          let line = typeof value === "string" ? value : JSON.stringify(wire(value as object));
          if (!line.trim()) continue;
          if (!line.endsWith("\n")) line += "\n";
          parts.push(line);
          size += line.length;
          progress.lines++;
          if (size >= chunkBytes) break;
        }
        if (parts.length) {
          const chunk = enc.encode(parts.join(""));
          parts = [];
          progress.bytes += chunk.byteLength;
          controller.enqueue(chunk);
          opts.onProgress?.({ ...progress });
        } else {
          controller.close();
        }
      },
    });
    const resp = await this.send("POST", MnemodClient.nsPath(ns, "/import"), stream,
      "application/x-ndjson", false);
    const body = await decode(resp);
    if (resp.status >= 400) {
      const wait = retryAfterMs(resp.headers.get("retry-after"));
      throw errorFromResponse(resp.status, body, wait === undefined ? undefined : wait / 1000);
    }
    opts.onProgress?.({ ...progress, done: true });
    return body as ImportResult;
  }
}

/** Poll /healthz until the server answers ok. */
export async function waitUntilReady(client: MnemodClient, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if ((await client.health()).status === "ok") return;
    } catch (e) {
      last = e;
    }
    await sleep(50);
  }
  throw new TransportError(`server not ready within ${timeoutMs} ms (${last})`);
}

export { ApiError };
