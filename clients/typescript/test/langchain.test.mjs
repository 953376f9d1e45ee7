// langchain.test.mjs - MnemodVectorStore (LangChain.js VectorStore) against the real binary.
// The embeddings are a small deterministic bag-of-words model, so every expected score can
// be recomputed here from the vectors LangChain hands the store.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Document } from "@langchain/core/documents";
import { Embeddings } from "@langchain/core/embeddings";

import { ApiError, MnemodClient } from "../dist/index.js";
import { MnemodVectorStore } from "../dist/langchain.js";
import { startServer } from "./server.mjs";

const DIM = 16;

/** Words hashed (FNV-1a) into 16 signed buckets, plus a small constant so no text maps to
 * the zero vector. */
class WordEmbeddings extends Embeddings {
  constructor() { super({}); this.calls = 0; }
  vector(text) {
    const v = new Array(DIM).fill(0);
    v[DIM - 1] = 0.05;
    for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
      let h = 2166136261;
      for (const ch of w) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
      v[h % (DIM - 1)] += (h & 0x10000) ? 1 : -1;
    }
    return v;
  }
  async embedDocuments(texts) { this.calls++; return texts.map((t) => this.vector(t)); }
  async embedQuery(text) { return this.vector(text); }
}

const unit = (v) => { const n = Math.hypot(...v); return v.map((x) => Math.fround(x / n)); };
const cos = (a, b) => unit(a).reduce((s, x, i) => s + x * unit(b)[i], 0);

describe("MnemodVectorStore", () => {
  let srv, client;
  const emb = new WordEmbeddings();
  before(async () => {
    srv = await startServer();
    client = new MnemodClient({ url: srv.url, apiKey: "" });
  });
  after(async () => assert.equal(await srv.stop(), 0, "mnemod exits 0 on SIGTERM"));

  const texts = [
    "the staging database password is hunter2",
    "team lunch moved to thursday",
    "deploy the api on friday after the review",
    "rotated: staging database password is now swordfish",
  ];
  const metas = [{ user: "ana", kind: "secret" }, { user: "bo", kind: "social" },
    { user: "ana", kind: "work" }, { user: "bo", kind: "secret" }];

  test("fromTexts, then similaritySearchWithScore scores like the formula", async () => {
    const store = await MnemodVectorStore.fromTexts(texts, metas, emb,
      { namespace: "lc_from_texts", client });
    assert.equal(store._vectorstoreType(), "mnemod");
    const st = await client.getNamespace("lc_from_texts");
    assert.deepEqual([st.count, st.dim], [4, DIM]);
    const q = "staging database password";
    const hits = await store.similaritySearchWithScore(q, 3);
    assert.equal(hits.length, 3);
    const want = texts.map((t, i) => ({ t, i, s: cos(emb.vector(q), emb.vector(t)) }))
      .sort((a, b) => b.s - a.s).slice(0, 3);
    assert.deepEqual(hits.map(([d]) => d.pageContent), want.map((w) => w.t));
    for (const [[doc, score], w] of hits.map((h, i) => [h, want[i]])) {
      assert.ok(Math.abs(score - w.s) < 1e-5, `${score} vs ${w.s}`);
      assert.ok(doc instanceof Document);
      assert.deepEqual(doc.metadata, metas[w.i]);
      assert.equal(typeof doc.id, "string");
      assert.equal((await client.getSegment("lc_from_texts", doc.id)).text, w.t);
    }
    const docs = await store.similaritySearch(q, 1);
    assert.equal(docs[0].pageContent, want[0].t);
    const viaRetriever = await store.asRetriever(2).invoke(q);
    assert.deepEqual(viaRetriever.map((d) => d.pageContent), want.slice(0, 2).map((w) => w.t));
  });

  test("addDocuments with ids, then delete", async () => {
    const store = new MnemodVectorStore(emb, { namespace: "lc_add", client, batchSize: 2 });
    const docs = texts.map((pageContent, i) => new Document({ pageContent, metadata: metas[i] }));
    const ids = await store.addDocuments(docs, { ids: ["a", "b", "c", "d"] });
    assert.deepEqual(ids, ["a", "b", "c", "d"]);
    const own = await store.addDocuments([new Document({ pageContent: "a document with an id",
      id: "own-id" }), new Document({ pageContent: "no id given" })]);
    assert.equal(own[0], "own-id");
    assert.match(own[1], /^[0-9a-f]{8}-[0-9a-f]{4}-7/, "server-made UUIDv7");
    assert.equal((await client.getNamespace("lc_add")).count, 6);
    assert.deepEqual((await client.getSegment("lc_add", "c")).metadata, metas[2]);
    await store.delete({ ids: ["a", "c", "never-there"] });
    for (const id of ["a", "c"]) {
      await assert.rejects(client.getSegment("lc_add", id),
        (e) => e instanceof ApiError && e.status === 404);
    }
    const left = await store.similaritySearch("staging database password", 10);
    assert.deepEqual(new Set(left.map((d) => d.id)), new Set(["b", "d", "own-id", own[1]]));
    await store.delete({ deleteAll: true });
    await assert.rejects(client.getNamespace("lc_add"), (e) => e.status === 404);
    await store.delete({ deleteAll: true }); // already gone: no error
  });

  test("retrieve defaults bring decay: the newer memory wins", async () => {
    const docs = [
      new Document({ pageContent: texts[0], metadata: { at: "2026-11-02T09:00:00Z" } }),
      new Document({ pageContent: texts[3], metadata: { at: "2026-11-28T09:00:00Z" } }),
    ];
    const plain = await MnemodVectorStore.fromDocuments(docs, emb,
      { namespace: "lc_decay", client, timestampKey: "at" });
    const seg = (await plain.similaritySearch("staging database password", 2))[0];
    assert.equal(seg.pageContent, texts[0], "plain cosine prefers the old wording");
    assert.equal((await client.getSegment("lc_decay", seg.id)).timestamp,
      "2026-11-02T09:00:00.000Z", "timestampKey sets the memory's time");
    const decayed = new MnemodVectorStore(emb, { namespace: "lc_decay", client,
      retrieve: { half_life: "7d", origin: "2026-11-30T00:00:00Z" } });
    const [[top, score]] = await decayed.similaritySearchWithScore("staging database password", 1);
    assert.equal(top.pageContent, texts[3]);
    const q = emb.vector("staging database password");
    const ageDays = (Date.parse("2026-11-30T00:00:00Z") - Date.parse("2026-11-28T09:00:00Z"))
      / 86400e3;
    assert.ok(Math.abs(score - cos(q, emb.vector(texts[3])) * 0.5 ** (ageDays / 7)) < 1e-5);
  });

  test("similaritySearch with metadata filters", async () => {
    const store = await MnemodVectorStore.fromTexts(texts, metas, emb,
      { namespace: "lc_filters", client });
    const q = "staging database password";
    const ana = await store.similaritySearchWithScore(q, 4, { user: "ana" });
    assert.deepEqual(new Set(ana.map(([d]) => d.metadata.user)), new Set(["ana"]));
    assert.equal(ana.length, 2);
    const want = [0, 2].map((i) => ({ t: texts[i], s: cos(emb.vector(q), emb.vector(texts[i])) }))
      .sort((a, b) => b.s - a.s);
    assert.deepEqual(ana.map(([d]) => d.pageContent), want.map((w) => w.t));
    ana.forEach(([, score], i) => assert.ok(Math.abs(score - want[i].s) < 1e-5));
    const secrets = await store.similaritySearch(q, 4, { kind: "secret", user: { $ne: "ana" } });
    assert.deepEqual(secrets.map((d) => d.pageContent), [texts[3]]);
    const viaRetriever = await store.asRetriever({ k: 4, filter: { kind: { $in: ["work"] } } })
      .invoke(q);
    assert.deepEqual(viaRetriever.map((d) => d.pageContent), [texts[2]]);
    await assert.rejects(store.similaritySearch(q, 2, { user: { $like: "a%" } }),
      (e) => e instanceof ApiError && e.status === 400);
  });

  test("the namespace is required", () => {
    assert.throws(() => new MnemodVectorStore(emb, {}), /namespace/);
  });
});
