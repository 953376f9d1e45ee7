// client.test.mjs - the TypeScript client against the real mnemod binary.
//   MNEMOD_BINARY=build/release/mnemod node --test clients/typescript/test/
// Every call goes over HTTP to a server started here; answers are checked against what
// the server must have done (values read back, scores recomputed from the formula, error
// codes and fields exact).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";

import {
  ApiError, MnemodClient, TransportError, VERSION, waitUntilReady,
} from "../dist/index.js";
import { startServer } from "./server.mjs";

const DAY = 86400;
const f32 = (x) => Math.fround(x);
const unit = (v) => { const n = Math.hypot(...v); return v.map((x) => f32(x / n)); };
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

async function rejects(p, status, code, field) {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError, `want ApiError, got ${e}`);
    assert.equal(e.status, status, e.message);
    assert.equal(e.code, code, e.message);
    if (field !== undefined) assert.equal(e.field, field);
    assert.ok(e.serverMessage.length > 0);
    return e;
  }
  assert.fail(`expected ${status} ${code}`);
}

describe("MnemodClient", () => {
  let srv, c;
  before(async () => {
    srv = await startServer();
    c = new MnemodClient({ url: srv.url, apiKey: "" });
    await waitUntilReady(c);
  });
  after(async () => assert.equal(await srv.stop(), 0, "mnemod exits 0 on SIGTERM"));

  test("health and metrics", async () => {
    assert.deepEqual(await c.health(), { status: "ok" });
    await c.insert("ts_metrics", { embedding: [1, 0] });
    assert.match(await c.metrics(), /mnemod_/);
    assert.equal(VERSION, "0.1.0");
  });

  test("namespace lifecycle", async () => {
    const ns = "ts_lifecycle";
    assert.deepEqual(await c.createNamespace(ns, { dim: 3 }), { name: ns, dim: 3, created: true });
    assert.equal((await c.createNamespace(ns, { dim: 3 })).created, false);
    await rejects(c.createNamespace(ns, { dim: 4 }), 409, "namespace_exists");
    let st = await c.getNamespace(ns);
    assert.equal(st.count, 0);
    assert.equal(st.oldest, null);
    await c.insert(ns, { embedding: [1, 0, 0], timestamp: "2026-01-01T00:00:00Z" });
    await c.insert(ns, { embedding: [1, 0.1, 0], timestamp: new Date("2026-01-02T00:00:00Z") });
    st = await c.getNamespace(ns);
    assert.deepEqual([st.count, st.oldest, st.newest, st.graph_edges, st.max_degree],
      [2, "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z", 1, 1]);
    assert.ok((await c.listNamespaces()).some((n) => n.name === ns && n.count === 2));
    await c.deleteNamespace(ns);
    await rejects(c.getNamespace(ns), 404, "not_found");
    await rejects(c.getNamespace("a/b"), 400, "invalid_field", "namespace");
  });

  test("insert, get, delete, identical retry, duplicate", async () => {
    const ns = "ts_segments";
    const seg = { id: "pw", text: "the staging password is hunter2", source: "ops",
      metadata: { user: "ana", n: [1, 2] }, timestamp: "2026-11-02T09:00:00Z" };
    const r = await c.insert(ns, seg);
    assert.deepEqual(r, { created: true,
      inserted: [{ id: "pw", seq: 1, timestamp: "2026-11-02T09:00:00.000Z" }] });
    const got = await c.getSegment(ns, "pw");
    assert.deepEqual(got, { id: "pw", seq: 1, timestamp: "2026-11-02T09:00:00.000Z",
      text: seg.text, source: "ops", metadata: seg.metadata, supersedes: [],
      superseded_by: null, archived: false });
    const withVec = await c.getSegment(ns, "pw", { embedding: true });
    assert.equal(withVec.embedding.length, 256);
    assert.ok(Math.abs(dot(withVec.embedding, withVec.embedding) - 1) < 1e-5);
    assert.equal((await c.insert(ns, seg)).created, false, "identical retry writes nothing");
    await rejects(c.insert(ns, { ...seg, text: "changed" }), 409, "duplicate_id");
    const odd = "a/b c?d#e%f&g=h+i";
    await c.insert(ns, { id: odd, text: "odd id" });
    assert.equal((await c.getSegment(ns, odd)).id, odd);
    await c.deleteSegment(ns, odd);
    await c.deleteSegment(ns, "pw");
    await rejects(c.getSegment(ns, "pw"), 404, "not_found");
    await rejects(c.deleteSegment(ns, "pw"), 404, "not_found");
  });

  test("base64 embeddings", async () => {
    const ns = "ts_base64";
    const b64 = Buffer.from(new Float32Array([0.6, 0.8, 0]).buffer).toString("base64");
    await c.insert(ns, { id: "b", embedding: b64 });
    const seg = await c.getSegment(ns, "b", { embedding: "base64" });
    assert.equal(typeof seg.embedding, "string");
    const bytes = Uint8Array.from(Buffer.from(seg.embedding, "base64")); // own, aligned buffer
    assert.deepEqual(Array.from(new Float32Array(bytes.buffer)), unit([0.6, 0.8, 0]));
    assert.deepEqual((await c.getSegment(ns, "b", { embedding: true })).embedding.map(f32),
      unit([0.6, 0.8, 0]));
    await rejects(c.insert(ns, { embedding: "not base64!" }), 400, "invalid_field", "embedding");
  });

  test("batch, supersedes, atomicity", async () => {
    const ns = "ts_batch";
    const r = await c.insertBatch(ns, [
      { id: "a", embedding: [1, 0], timestamp: 1_700_000_000 },
      { id: "b", embedding: new Float32Array([0, 1]), timestamp: 1_700_000_000.5 },
      { id: "c", embedding: [1, 1], supersedes: ["a"], timestamp: new Date(1_700_000_001_000) },
    ]);
    assert.deepEqual(r.inserted.map((i) => [i.id, i.seq]), [["a", 1], ["b", 2], ["c", 3]]);
    assert.equal(r.inserted[1].timestamp, "2023-11-14T22:13:20.500Z");
    assert.equal((await c.getSegment(ns, "a")).superseded_by, "c");
    let hits = await c.retrieve(ns, { embedding: [1, 0], k: 5 });
    assert.deepEqual(new Set(hits.results.map((h) => h.id)), new Set(["b", "c"]));
    hits = await c.retrieve(ns, { embedding: [1, 0], k: 5, include_superseded: true });
    assert.equal(hits.results[0].id, "a");
    await rejects(c.insertBatch(ns, [{ id: "d", embedding: [1, 0] },
      { id: "e", embedding: [1, 0, 0] }]), 400, "dimension_mismatch");
    assert.equal((await c.getNamespace(ns)).count, 3);
  });

  test("errors carry code, message, field and details", async () => {
    const ns = "ts_errors";
    await c.insert(ns, { embedding: [1, 0], timestamp: "2026-05-01T00:00:00Z" });
    const e = await rejects(c.insert(ns, { embedding: [1, 0], timestamp: "2026-04-01T00:00:00Z" }),
      409, "non_monotonic_timestamp");
    assert.equal(e.details.last_timestamp, "2026-05-01T00:00:00.000Z");
    assert.match(e.message, /^409 non_monotonic_timestamp: /);
    await rejects(c.retrieve(ns, { embedding: [1, 0], k: 0 }), 400, "invalid_field", "k");
    await rejects(c.insert(ns, { embedding: [1, 0], timestamp: "2999-01-01T00:00:00Z" }),
      400, "timestamp_in_future");
    await rejects(c.retrieve("ts_nowhere", { embedding: [1, 0] }), 404, "not_found");
    await rejects(c.request("POST", `/v1/namespaces/${ns}/segments`, { bogus: 1 }),
      400, "invalid_field", "bogus");
  });

  test("listing: pages, cursor, filters, iterator", async () => {
    const ns = "ts_listing";
    await c.insertBatch(ns, Array.from({ length: 7 }, (_, i) => ({ id: `s${i}`,
      embedding: [1, i / 10], source: i % 2 ? "odd" : "even", timestamp: 1_760_000_000 + i * 3600 })));
    await c.insert(ns, { id: "s7", embedding: [0, 1], supersedes: ["s0"],
      timestamp: 1_760_000_000 + 7 * 3600 });
    const page = await c.listSegments(ns, { limit: 3 });
    assert.deepEqual(page.segments.map((s) => s.id), ["s1", "s2", "s3"], "s0 is superseded");
    assert.equal(typeof page.next, "string");
    const page2 = await c.listSegments(ns, { limit: 3, after: page.next });
    assert.deepEqual(page2.segments.map((s) => s.id), ["s4", "s5", "s6"]);
    const all = [];
    for await (const s of c.iterSegments(ns, { pageSize: 2, include_superseded: true })) all.push(s);
    assert.deepEqual(all.map((s) => [s.id, s.seq]), Array.from({ length: 8 }, (_, i) => [`s${i}`, i + 1]));
    assert.equal(all[0].superseded_by, "s7");
    const odd = [];
    for await (const s of c.iterSegments(ns, { source: "odd" })) odd.push(s.id);
    assert.deepEqual(odd, ["s1", "s3", "s5"]);
    const win = await c.listSegments(ns, { since: new Date((1_760_000_000 + 2 * 3600) * 1000),
      until: 1_760_000_000 + 4 * 3600 });
    assert.deepEqual(win.segments.map((s) => s.id), ["s2", "s3", "s4"]);
    assert.equal(win.next, null);
    const vec = (await c.listSegments(ns, { limit: 1, embedding: true })).segments[0].embedding;
    assert.ok(Math.abs(dot(vec, vec) - 1) < 1e-5);
    await rejects(c.listSegments(ns, { limit: 0 }), 400, "invalid_field", "limit");
  });

  test("updateSegment (PATCH)", async () => {
    const ns = "ts_patch";
    await c.insert(ns, { id: "m", text: "a memory", source: "chat", metadata: { u: "ana" } });
    let seg = await c.updateSegment(ns, "m", { metadata: { u: "bo", tags: ["x"] } });
    assert.deepEqual([seg.metadata, seg.source], [{ u: "bo", tags: ["x"] }, "chat"]);
    seg = await c.updateSegment(ns, "m", { source: "ops" });
    assert.deepEqual([seg.metadata, seg.source], [{ u: "bo", tags: ["x"] }, "ops"]);
    seg = await c.updateSegment(ns, "m", { metadata: null });
    assert.equal(seg.metadata, undefined);
    assert.deepEqual(await c.getSegment(ns, "m"), seg);
    await rejects(c.request("PATCH", `/v1/namespaces/${ns}/segments/m`, { text: "x" }), 400,
      "invalid_field", "text");
    await rejects(c.updateSegment(ns, "nope", { source: "x" }), 404, "not_found");
  });

  test("metadata filters", async () => {
    const ns = "ts_filters";
    await c.insertBatch(ns, [
      { id: "a", embedding: [1, 0], metadata: { user: "ana", prio: 3, t: { k: 1 } } },
      { id: "b", embedding: [0.9, 0.1], metadata: { user: "bo", prio: 1 } },
      { id: "c", embedding: [0.8, 0.2], metadata: { user: "ana", prio: 1 } },
      { id: "d", embedding: [0.7, 0.3] }]);
    const ids = async (filter) => (await c.retrieve(ns, { embedding: [1, 0], filter }))
      .results.map((r) => r.id);
    assert.deepEqual(await ids({ user: "ana" }), ["a", "c"]);
    assert.deepEqual(await ids({ prio: { $gte: 2 } }), ["a"]);
    assert.deepEqual(await ids({ user: { $nin: ["ana"] }, prio: { $lte: 1 } }), ["b"]);
    assert.deepEqual(await ids({ "t.k": 1 }), ["a"]);
    assert.deepEqual(await ids({ user: { $exists: false } }), ["d"]);
    const e = await rejects(ids({ user: { $bogus: 1 } }), 400, "invalid_field");
    assert.match(e.field, /^filter/);
  });

  test("export and import", async () => {
    const ns = "ts_export", copy = "ts_export_copy";
    await c.insertBatch(ns, ["cats", "dogs", "birds", "fish", "cats"].map((w, i) => ({
      id: `s${i}`, text: `memory ${i} about ${w}`, metadata: { i }, timestamp: 1_760_000_000 + i * 60 })));
    await c.insert(ns, { id: "s5", text: "replaces s0", supersedes: ["s0"], timestamp: 1_760_000_400 });
    await c.compact(ns, { target: 4, policy: "coherence_weighted", context: [] });
    const lines = [];
    for await (const x of c.export(ns)) lines.push(x);
    assert.deepEqual(lines.map((x) => x.id), ["s0", "s1", "s2", "s3", "s4", "s5"]);
    assert.equal(lines.filter((x) => x.archived).length, 1);
    assert.deepEqual(lines[5].supersedes, ["s0"]);
    const seen = [];
    const res = await c.import(copy, lines, { onProgress: (p) => seen.push(p), chunkBytes: 2000 });
    assert.deepEqual(res, { imported: 6, skipped: 0 });
    assert.ok(seen.length > 2, "several chunks");
    assert.equal(seen.at(-1).done, true);
    assert.equal(seen.at(-1).lines, 6);
    const again = [];
    for await (const x of c.export(copy)) again.push(x);
    assert.deepEqual(again, lines, "export, import, export: the same");
    for (const f of ["count", "superseded", "archived", "graph_edges", "max_degree"]) {
      assert.equal((await c.getNamespace(copy))[f], (await c.getNamespace(ns))[f], f);
    }
    async function* raw() { for await (const l of c.exportLines(ns)) yield l; }
    assert.deepEqual(await c.import(copy, raw()), { imported: 0, skipped: 6 });
    const e = await rejects(c.import("ts_export_bad", [{ id: "ok", embedding: [1, 0] },
      '{"id":"bad","embedding":[1]}']), 400, "dimension_mismatch");
    assert.equal(e.details.line, 2);
    await rejects(c.getNamespace("ts_export_bad"), 404, "not_found");
  });

  test("retrieve scores follow the formula", async () => {
    const ns = "ts_scores";
    const origin = new Date("2026-03-01T00:00:00Z");
    const vecs = { old: [1, 0.2, 0], mid: [0.9, 0.4, 0.1], new: [0.5, 0.5, 0.5] };
    const ages = { old: 60, mid: 20, new: 1 };
    await c.insertBatch(ns, ["old", "mid", "new"].map((id) => ({ id, embedding: vecs[id],
      timestamp: new Date(origin.getTime() - ages[id] * DAY * 1000) })));
    const q = [1, 0.3, 0.05];
    const res = await c.retrieve(ns, { embedding: q, k: 3, half_life: "14d", origin,
      explain: true });
    assert.equal(res.namespace, ns);
    assert.equal(res.scanned, 3);
    const want = Object.fromEntries(Object.keys(vecs).map((id) =>
      [id, dot(unit(q), unit(vecs[id])) * 0.5 ** (ages[id] / 14)]));
    const order = Object.keys(want).sort((a, b) => want[b] - want[a]);
    assert.deepEqual(res.results.map((r) => r.id), order);
    for (const r of res.results) {
      assert.ok(Math.abs(r.score - want[r.id]) < 1e-5, `${r.id}: ${r.score} vs ${want[r.id]}`);
      assert.ok(Math.abs(r.decay - 0.5 ** (ages[r.id] / 14)) < 1e-5);
      assert.ok(Math.abs(r.age_seconds - ages[r.id] * DAY) < 0.1);
    }
    const past = await c.retrieve(ns, { embedding: q, k: 3, half_life_days: 14, explain: true,
      as_of: new Date(origin.getTime() - 10 * DAY * 1000) });
    assert.deepEqual(new Set(past.results.map((r) => r.id)), new Set(["old", "mid"]));
    for (const r of past.results) assert.ok(Math.abs(r.age_seconds - (ages[r.id] - 10) * DAY) < 0.1);
    const plain = await c.retrieve(ns, { embedding: q, k: 3, half_life: 14 * DAY,
      origin: origin.getTime() / 1000 });
    assert.deepEqual(plain.results.map((r) => r.id), order);
    assert.equal(plain.results[0].decay, undefined, "no parts without explain");
  });

  test("text query, source, as_of", async () => {
    const ns = "ts_text";
    await c.insertBatch(ns, [
      { id: "pw-old", text: "the staging database password is hunter2", source: "ops",
        timestamp: "2026-11-02T09:00:00Z" },
      { id: "lunch", text: "team lunch moved to thursday", timestamp: "2026-11-20T12:00:00Z" },
      { id: "pw-new", text: "rotated: staging database password is now swordfish", source: "ops",
        timestamp: "2026-11-28T09:00:00Z" }]);
    const q = "staging database password";
    assert.deepEqual((await c.retrieve(ns, { query: q, k: 2 })).results.map((r) => r.id),
      ["pw-old", "pw-new"]);
    assert.equal((await c.retrieve(ns, { query: q, k: 2, half_life: "7d",
      origin: "2026-11-30T00:00:00Z" })).results[0].id, "pw-new");
    assert.deepEqual(new Set((await c.retrieve(ns, { query: "lunch", source: "ops" })).results
      .map((r) => r.id)), new Set(["pw-old", "pw-new"]));
    assert.equal((await c.retrieve(ns, { query: q, k: 1, as_of: "2026-11-10T00:00:00Z" }))
      .results[0].id, "pw-old");
    for (const match of ["text", "vector", "hybrid"]) {
      const r = await c.retrieve(ns, { query: q, match, explain: true });
      assert.equal(r.match, match);
      if (match === "hybrid") {
        assert.equal(typeof r.results[0].text_score, "number");
        assert.equal(typeof r.results[0].vector_score, "number");
      }
    }
    await rejects(c.retrieve(ns, { query: q, match: "fuzzy" }), 400, "invalid_field", "match");
  });

  test("cluster routes outside cluster mode: 404 with the JSON code", async () => {
    for (const p of [c.clusterStatus(), c.clusterSnapshot({ trim: true })]) {
      const e = await rejects(p, 404, "not_found");
      assert.match(e.serverMessage, /not in cluster mode/);
    }
  });

  test("compact", async () => {
    const ns = "ts_compact";
    await c.insertBatch(ns, Array.from({ length: 10 }, (_, i) => ({ id: `s${i}`,
      embedding: [1, i / 10, (i % 3) / 5], timestamp: 1_750_000_000 + i * 60 })));
    const dry = await c.compact(ns, { target: 4, dry_run: true });
    assert.deepEqual([dry.before, dry.after, dry.evicted.length], [10, 4, 6]);
    assert.equal((await c.getNamespace(ns)).archived, 0);
    const done = await c.compact(ns, { ratio: 0.5, policy: "coherence_weighted", context: [] });
    assert.deepEqual([done.before, done.after, done.policy], [10, 5, "coherence_weighted"]);
    assert.equal((await c.getSegment(ns, done.evicted[0])).archived, true);
    await rejects(c.compact(ns, { target: 3, policy: "no_such_policy" }), 400, "invalid_field",
      "policy");
  });
});

describe("keys", () => {
  let srv;
  before(async () => { srv = await startServer({ env: { MNEMOD_API_KEY: "ts-s3cret" } }); });
  after(async () => assert.equal(await srv.stop(), 0));

  test("the key from the options or MNEMOD_API_KEY", async () => {
    await rejects(new MnemodClient({ url: srv.url, apiKey: "" }).listNamespaces(), 401,
      "unauthorized");
    await rejects(new MnemodClient({ url: srv.url, apiKey: "nope" }).listNamespaces(), 401,
      "unauthorized");
    assert.deepEqual(await new MnemodClient({ url: srv.url, apiKey: "ts-s3cret" })
      .listNamespaces(), []);
    const saved = { ...process.env };
    try {
      process.env.MNEMOD_API_KEY = "ts-s3cret";
      process.env.MNEMOD_URL = srv.url.replace("http://", "");
      const c = new MnemodClient();
      assert.equal(c.url, srv.url);
      await c.insert("keyed", { embedding: [1] });
      assert.equal((await c.getNamespace("keyed")).count, 1);
    } finally {
      process.env = saved;
    }
  });
});

describe("retries (a stand-in server that answers 503 on demand)", () => {
  function flaky(fail, retryAfter) {
    const seen = [];
    const s = createServer((req, res) => {
      seen.push(Date.now());
      if (seen.length <= fail) {
        res.writeHead(503, { "Content-Type": "application/json", "Retry-After": retryAfter });
        res.end('{"error":{"code":"unavailable","message":"the store is still loading"}}');
      } else {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end('{"namespaces":[]}');
      }
    });
    return new Promise((ok) => s.listen(0, "127.0.0.1", () =>
      ok({ url: `http://127.0.0.1:${s.address().port}`, seen, close: () => s.close() })));
  }

  test("Retry-After is honoured", async () => {
    const f = await flaky(2, "1");
    try {
      assert.deepEqual(await new MnemodClient({ url: f.url, retries: 3 }).listNamespaces(), []);
      assert.equal(f.seen.length, 3);
      assert.ok(f.seen[1] - f.seen[0] >= 950 && f.seen[2] - f.seen[1] >= 950, String(f.seen));
    } finally { f.close(); }
  });

  test("gives up after the retries, with the code", async () => {
    const f = await flaky(10, "0");
    try {
      const e = await rejects(new MnemodClient({ url: f.url, retries: 2 }).listNamespaces(), 503,
        "unavailable");
      assert.equal(e.retryAfter, 0);
      assert.equal(f.seen.length, 3);
      await rejects(new MnemodClient({ url: f.url, retries: 0 }).listNamespaces(), 503,
        "unavailable");
      assert.equal(f.seen.length, 4);
    } finally { f.close(); }
  });

  test("unreachable is a TransportError", async () => {
    await assert.rejects(new MnemodClient({ url: "http://127.0.0.1:1" }).listNamespaces(),
      (e) => e instanceof TransportError);
  });
});
