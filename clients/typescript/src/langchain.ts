/**
 * mnemod as a LangChain.js vector store: a namespace holds the documents, and searches
 * get mnemod's scoring (temporal decay, coherence, supersession) through `retrieve`
 * defaults given once.
 *
 * ```ts
 * import { MnemodVectorStore } from "mnemod/langchain";
 * const store = await MnemodVectorStore.fromTexts(["..."], [{ user: "ana" }], embeddings,
 *   { namespace: "agent", retrieve: { half_life: "7d" } });
 * const hits = await store.similaritySearchWithScore("staging password", 3, { user: "ana" });
 * ```
 *
 * Needs `@langchain/core` (a peer dependency; 0.3 or 1.x). The embeddings are LangChain's:
 * the store sends the vectors they make, so the namespace's dimension is theirs.
 */

import { Document, type DocumentInterface } from "@langchain/core/documents";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { VectorStore } from "@langchain/core/vectorstores";

import { ApiError } from "./errors.js";
import { MnemodClient, type MnemodClientOptions } from "./index.js";
import type { Filter, Json, RetrieveRequest, SegmentInput, Timestamp } from "./types.js";

/** Retrieve fields a store applies to every search (the query, k and filter come per call). */
export type MnemodSearchDefaults =
  Omit<RetrieveRequest, "query" | "embedding" | "k" | "filter" | "explain">;

export interface MnemodVectorStoreArgs {
  /** The namespace that holds this store's documents. */
  namespace: string;
  /** A client to share; otherwise one is made from `clientOptions`. */
  client?: MnemodClient;
  clientOptions?: MnemodClientOptions;
  /** Applied to every search: `{ half_life: "7d", decay: "gaussian", as_of: ... }`. */
  retrieve?: MnemodSearchDefaults;
  /** A metadata key whose value (RFC 3339, Unix seconds or Date) is the memory's
   * timestamp; without it, or when a document lacks it, the server's clock is used. */
  timestampKey?: string;
  /** Documents per insert request (the server's limit is 1000 by default). */
  batchSize?: number;
}

export class MnemodVectorStore extends VectorStore {
  declare FilterType: Filter;

  readonly client: MnemodClient;
  readonly namespace: string;
  readonly searchDefaults: MnemodSearchDefaults;
  private readonly timestampKey: string | undefined;
  private readonly batchSize: number;

  _vectorstoreType(): string {
    return "mnemod";
  }

  constructor(embeddings: EmbeddingsInterface, args: MnemodVectorStoreArgs) {
    super(embeddings, args);
    if (!args || !args.namespace) throw new Error("MnemodVectorStore: namespace is required");
    this.client = args.client ?? new MnemodClient(args.clientOptions);
    this.namespace = args.namespace;
    this.searchDefaults = { ...(args.retrieve ?? {}) };
    this.timestampKey = args.timestampKey;
    this.batchSize = Math.max(1, Math.min(args.batchSize ?? 500, 1000));
  }

  /** Insert documents with their vectors; returns their ids (given, the documents' own,
   * or made by the server). */
  async addVectors(vectors: number[][], documents: DocumentInterface[],
                   options?: { ids?: string[] }): Promise<string[]> {
    if (vectors.length !== documents.length) {
      throw new Error(`addVectors: ${vectors.length} vectors for ${documents.length} documents`);
    }
    const segments: SegmentInput[] = documents.map((doc, i) => {
      const seg: SegmentInput = { text: doc.pageContent, embedding: vectors[i] };
      const id = options?.ids?.[i] ?? doc.id;
      if (id) seg.id = id;
      const meta = doc.metadata ?? {};
      if (Object.keys(meta).length) seg.metadata = meta as Record<string, Json>;
      const ts = this.timestampKey ? meta[this.timestampKey] : undefined;
      if (ts !== undefined && ts !== null) seg.timestamp = ts as Timestamp;
      return seg;
    });
    const ids: string[] = [];
    for (let i = 0; i < segments.length; i += this.batchSize) {
      const r = await this.client.insertBatch(this.namespace, segments.slice(i, i + this.batchSize));
      for (const s of r.inserted) ids.push(s.id);
    }
    return ids;
  }

  async addDocuments(documents: DocumentInterface[], options?: { ids?: string[] }):
    Promise<string[]> {
    const vectors = await this.embeddings.embedDocuments(documents.map((d) => d.pageContent));
    return this.addVectors(vectors, documents, options);
  }

  /** The top k for a query vector, scored by mnemod (the store's retrieve defaults apply),
   * restricted to documents whose metadata matches `filter`. */
  async similaritySearchVectorWithScore(query: number[], k: number, filter?: this["FilterType"]):
    Promise<[DocumentInterface, number][]> {
    const req: RetrieveRequest = { ...this.searchDefaults, embedding: query, k };
    if (filter && Object.keys(filter).length) req.filter = filter;
    const res = await this.client.retrieve(this.namespace, req);
    return res.results.map((h) => [
      new Document({ pageContent: h.text ?? "", metadata: h.metadata ?? {}, id: h.id }),
      h.score,
    ]);
  }

  /** Delete documents by id (ids already gone are skipped), or the whole namespace with
   * `{ deleteAll: true }`. */
  override async delete(params?: { ids?: string[]; deleteAll?: boolean }): Promise<void> {
    const ignoreMissing = (e: unknown) => {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    };
    if (params?.deleteAll) {
      await this.client.deleteNamespace(this.namespace).catch(ignoreMissing);
      return;
    }
    for (const id of params?.ids ?? []) {
      await this.client.deleteSegment(this.namespace, id).catch(ignoreMissing);
    }
  }

  static override async fromTexts(texts: string[], metadatas: object[] | object,
                         embeddings: EmbeddingsInterface, args: MnemodVectorStoreArgs):
    Promise<MnemodVectorStore> {
    const docs = texts.map((pageContent, i) => new Document({
      pageContent,
      metadata: Array.isArray(metadatas) ? (metadatas[i] ?? {}) : metadatas,
    }));
    return MnemodVectorStore.fromDocuments(docs, embeddings, args);
  }

  static override async fromDocuments(docs: DocumentInterface[], embeddings: EmbeddingsInterface,
                             args: MnemodVectorStoreArgs): Promise<MnemodVectorStore> {
    const store = new MnemodVectorStore(embeddings, args);
    await store.addDocuments(docs);
    return store;
  }
}
