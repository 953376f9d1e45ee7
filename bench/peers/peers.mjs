// peers.mjs DIR [REPS] - usearch and hnswlib (pinned in package.json) on a corpus of
// bench/peers, one thread per query, the same measures as faiss_peer.py.
//
// Prints one JSON object: per peer and variant the per-query p50/p95 in us and recall@K
// against the exact decayed answer (mnemod's, truth.json). Neither library knows time, so
// "with decay" means what a user of one has to do: take the cosine top K' (100, 1000) and
// re-score those with the decay. Variants:
// - usearch exact: exactSearch (brute force, inner product) top K, and top K' re-ranked;
// - usearch hnsw:  an HNSW index (f32, connectivity 16, expansion 128/64), top K and K';
// - hnswlib hnsw:  HierarchicalNSW('ip', M 16, efConstruction 200, ef = max(K', 64)).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const versionOf = (pkg) =>
  JSON.parse(readFileSync(join(here, "node_modules", pkg, "package.json"), "utf8")).version;
const dir = process.argv[2];
const reps = Number(process.argv[3] || 3);

function load() {
  const p = JSON.parse(readFileSync(join(dir, "params.json"), "utf8"));
  const raw = readFileSync(join(dir, "corpus.f32"));
  const qraw = readFileSync(join(dir, "queries.f32"));
  const rows = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  const qs = new Float32Array(qraw.buffer.slice(qraw.byteOffset, qraw.byteOffset + qraw.length));
  const ts = readFileSync(join(dir, "ts.txt"), "utf8").trim().split("\n").map(Number);
  const truth = JSON.parse(readFileSync(join(dir, "truth.json"), "utf8"));
  return { p, rows, qs, ts, truth };
}

function normalise(m, dim) {
  for (let i = 0; i < m.length; i += dim) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += m[i + d] * m[i + d];
    const inv = 1 / Math.sqrt(s);
    for (let d = 0; d < dim; d++) m[i + d] *= inv;
  }
}

function recall(got, truth) {
  let hit = 0, all = 0;
  for (let q = 0; q < truth.length; q++) {
    const t = new Set(truth[q]);
    for (const id of got[q]) if (t.has(id)) hit++;
    all += truth[q].length;
  }
  return Math.round((hit / all) * 1e4) / 1e4;
}

function timed(fn, nq) {
  const ns = [];
  let out = [];
  for (let r = 0; r < reps; r++) {
    out = [];
    for (let q = 0; q < nq; q++) {
      const t0 = process.hrtime.bigint();
      const ids = fn(q);
      ns.push(Number(process.hrtime.bigint() - t0));
      out.push(ids);
    }
  }
  ns.sort((a, b) => a - b);
  return [{ p50_us: Math.round(ns[ns.length >> 1] / 10) / 100,
            p95_us: Math.round(ns[Math.floor(ns.length * 0.95)] / 10) / 100 }, out];
}

const { p, rows, qs, ts, truth } = load();
const { n, dim, k } = p;
normalise(rows, dim);
normalise(qs, dim);
const w = new Float64Array(n);
for (let i = 0; i < n; i++)
  w[i] = p.half_life_s > 0 ? Math.pow(0.5, Math.abs(p.origin_ms - ts[i]) / 1000 / p.half_life_s) : 1;
const nq = p.queries;
const name = (i) => p.id_prefix + i;
const query = (q) => qs.subarray(q * dim, (q + 1) * dim);
// exactSearch reads a view's buffer from its start: give it a copy of its own
const queryCopy = (q) => qs.slice(q * dim, (q + 1) * dim);

// candidates (ids, cosines) -> the decayed top k, as names
function decayTop(ids, sims) {
  const order = Array.from(ids.keys());
  const s = order.map((j) => sims[j] * w[ids[j]]);
  order.sort((a, b) => s[b] - s[a]);
  return order.slice(0, k).map((j) => name(ids[j]));
}

const out = { peers: {} };
const kprimes = [100, 1000].map((x) => Math.min(x, n));

function run(peer, variants) {
  const res = {};
  for (const [vname, fn] of Object.entries(variants)) {
    const [st, got] = timed(fn, nq);
    st.recall_at_k = recall(got, truth);
    res[vname] = st;
  }
  return res;
}

try {
  const usearch = require("usearch");
  const version = versionOf("usearch");
  const ex = {};
  const viaExact = (kk) => (q) => {
    const m = usearch.exactSearch(rows, queryCopy(q), dim, kk, "ip", 1);
    const ids = Array.from(m.keys, Number);
    return decayTop(ids, Array.from(m.distances, (d) => 1 - d));
  };
  ex.exact_ip = (q) => {
    const m = usearch.exactSearch(rows, queryCopy(q), dim, k, "ip", 1);
    return Array.from(m.keys, (x) => name(Number(x)));
  };
  for (const kk of kprimes) ex["exact_ip_rerank_" + kk] = viaExact(kk);
  const idx = new usearch.Index({ dimensions: dim, metric: "ip", quantization: "f32",
                                  connectivity: 16, expansion_add: 128, expansion_search: 64 });
  const keys = new BigUint64Array(n);
  for (let i = 0; i < n; i++) keys[i] = BigInt(i);
  const t0 = process.hrtime.bigint();
  idx.add(keys, rows, 0);
  const build_s = Number(process.hrtime.bigint() - t0) / 1e9;
  const viaHnsw = (kk) => (q) => {
    const m = idx.search(query(q), kk, 1);
    const ids = Array.from(m.keys, Number);
    return decayTop(ids, Array.from(m.distances, (d) => 1 - d));
  };
  ex.hnsw_ip = (q) => Array.from(idx.search(query(q), k, 1).keys, (x) => name(Number(x)));
  for (const kk of kprimes) ex["hnsw_ip_rerank_" + kk] = viaHnsw(kk);
  out.peers.usearch = { version, hnsw_build_s: Math.round(build_s * 1000) / 1000,
                        variants: run("usearch", ex) };
} catch (e) {
  out.peers.usearch = { error: String(e && e.message || e) };
}

try {
  const { HierarchicalNSW } = require("hnswlib-node");
  const version = versionOf("hnswlib-node");
  const h = new HierarchicalNSW("ip", dim);
  h.initIndex(n, 16, 200, 100);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) h.addPoint(Array.from(rows.subarray(i * dim, (i + 1) * dim)), i);
  const build_s = Number(process.hrtime.bigint() - t0) / 1e9;
  const ex = {};
  const via = (kk) => (q) => {
    h.setEf(Math.max(kk, 64));
    const r = h.searchKnn(Array.from(query(q)), kk);
    return decayTop(r.neighbors, r.distances.map((d) => 1 - d));
  };
  ex.hnsw_ip = (q) => {
    h.setEf(64);
    return h.searchKnn(Array.from(query(q)), k).neighbors.map(name);
  };
  for (const kk of kprimes) ex["hnsw_ip_rerank_" + kk] = via(kk);
  out.peers.hnswlib = { version, hnsw_build_s: Math.round(build_s * 1000) / 1000,
                        variants: run("hnswlib", ex) };
} catch (e) {
  out.peers.hnswlib = { error: String(e && e.message || e) };
}

console.log(JSON.stringify(out));
