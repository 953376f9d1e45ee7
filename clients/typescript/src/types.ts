/**
 * The request and response shapes of the mnemod REST API. Field names are the wire
 * names (snake_case), so a request object is exactly the JSON that is sent; a test
 * checks these against the server's `/openapi.json`.
 */

/** A timestamp in a request: RFC 3339 with a zone, Unix seconds, or a Date. */
export type Timestamp = string | number | Date;
/** A duration in a request: seconds, or a string with a unit ("90d", "36h", "15m"). */
export type Duration = string | number;
/** An embedding: numbers, or the base64 of little-endian float32 values. */
export type Embedding = number[] | Float32Array | string;
/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** GET /v1/namespaces/{ns}. */
export interface NamespaceStats {
  name: string;
  /** stored, not archived (superseded included) */
  count: number;
  superseded: number;
  archived: number;
  dim: number;
  /** null while empty */
  oldest: string | null;
  newest: string | null;
  graph_edges: number;
  max_degree: number;
  /** false: the namespace keeps no coherence graph */
  coherence?: boolean;
  /** which embedder made its vectors from text */
  embedder?: string;
  /** cluster mode, in listings: the log position the answering copy includes */
  log_seq?: number;
  [more: string]: unknown;
}

/** PUT /v1/namespaces/{ns}. `created` is false when it already existed with that dim. */
export interface NamespaceCreated {
  name: string;
  dim: number;
  created: boolean;
  /** cluster mode: the write's position in the log */
  log_seq?: number;
  [more: string]: unknown;
}

export interface CreateNamespaceRequest {
  dim: number;
  /** false: keep no coherence graph (coherence_weight > 0 is then refused) */
  coherence?: boolean;
}

/** One segment to insert (or one import line). At least `text` or `embedding`. */
export interface SegmentInput {
  id?: string;
  text?: string;
  embedding?: Embedding;
  timestamp?: Timestamp;
  source?: string;
  metadata?: Record<string, Json>;
  supersedes?: string[];
}

/** A stored segment as GET …/segments/{id} and the listing show it. */
export interface Segment {
  id: string;
  seq: number;
  timestamp: string;
  text?: string;
  source?: string;
  metadata?: Record<string, Json>;
  supersedes: string[];
  superseded_by: string | null;
  archived: boolean;
  /** with `embedding: true` (numbers) or `"base64"` */
  embedding?: number[] | string;
  [more: string]: unknown;
}

/** One line of an export. */
export interface ExportedSegment {
  id: string;
  timestamp: string;
  text?: string;
  embedding: number[] | string;
  source?: string;
  metadata?: Record<string, Json>;
  supersedes?: string[];
  archived?: boolean;
  /** the embedder that made the namespace's vectors from text (when it recorded one) */
  embedder?: string;
  [more: string]: unknown;
}

export interface Inserted {
  id: string;
  seq: number;
  timestamp: string;
}

/** POST …/segments. `created` is false for an identical retry (nothing written). */
export interface InsertResult {
  inserted: Inserted[];
  created: boolean;
  /** cluster mode: pass as `min_seq` to a retrieve to read your own writes */
  log_seq?: number;
}

export type DecayKind = "exponential" | "linear" | "gaussian" | "none";
export type Decay = DecayKind | { weibull: { shape: number } };
export type MatchMode = "vector" | "text" | "hybrid";
export type FilterOperators = {
  $eq?: Json; $ne?: Json; $in?: Json[]; $nin?: Json[];
  $gt?: Json; $gte?: Json; $lt?: Json; $lte?: Json; $exists?: boolean;
};
/** A metadata filter: `{"user": "ana", "priority": {"$gte": 2}, "a.b": {"$exists": true}}`. */
export type Filter = Record<string, Json | FilterOperators>;

/** POST …/retrieve: every field but the query is optional. */
export interface RetrieveRequest {
  query?: string;
  embedding?: Embedding;
  k?: number;
  half_life?: Duration;
  half_life_days?: number;
  recency_bias?: number;
  decay?: Decay;
  origin?: Timestamp;
  offset?: Duration;
  coherence_weight?: number;
  since?: Timestamp;
  until?: Timestamp;
  source?: string;
  as_of?: Timestamp;
  min_score?: number;
  include_superseded?: boolean;
  include_archived?: boolean;
  match?: MatchMode;
  filter?: Filter;
  explain?: boolean;
  /** cluster mode: wait until this node applied the log up to a write's `log_seq` */
  min_seq?: number;
}

/** One result; the score parts are there only with `explain: true`. */
export interface ScoredSegment {
  id: string;
  seq: number;
  score: number;
  timestamp: string;
  text?: string;
  source?: string;
  metadata?: Record<string, Json>;
  similarity?: number;
  decay?: number;
  gate?: number;
  age_seconds?: number;
  text_score?: number;
  vector_score?: number;
  [more: string]: unknown;
}

export interface RetrieveResult {
  namespace: string;
  took_ms: number;
  scanned: number;
  kernel: string;
  /** How the query matched: "vector", "text" or "hybrid". */
  match: MatchMode;
  results: ScoredSegment[];
  [more: string]: unknown;
}

/** POST …/compact. */
export interface CompactRequest {
  target?: number;
  ratio?: number;
  policy?: string;
  dry_run?: boolean;
  purge?: boolean;
  weights?: { recency?: number; frequency?: number; coherence?: number };
  context?: number[][];
  dedup_threshold?: number;
}

/** PATCH …/segments/{id}: `metadata: null` clears it. */
export interface SegmentPatch {
  metadata?: Record<string, Json> | null;
  source?: string;
}

/** POST /v1/cluster/snapshot (cluster mode only). */
export interface SnapshotRequest {
  trim?: boolean;
}

export interface CompactResult {
  before: number;
  after: number;
  policy: string;
  evicted: string[];
  took_ms: number;
  log_seq?: number;
  [more: string]: unknown;
}

/** GET …/segments query. */
export interface ListSegmentsRequest {
  limit?: number;
  after?: string;
  since?: Timestamp;
  until?: Timestamp;
  source?: string;
  include_superseded?: boolean;
  include_archived?: boolean;
  embedding?: boolean | "base64";
}

export interface SegmentPage {
  segments: Segment[];
  /** null on the last page */
  next: string | null;
}

export interface ImportResult {
  imported: number;
  skipped: number;
  log_seq?: number;
}

/** Given to an import's `onProgress` after each chunk is sent, and once with `done`. */
export interface ImportProgress {
  lines: number;
  bytes: number;
  done: boolean;
}
