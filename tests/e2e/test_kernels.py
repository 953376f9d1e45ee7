"""test_kernels.py - the coherence graph does not depend on the SIMD kernel: the same ingest
under every MNEMOD_SIMD value this CPU runs gives the same graph stats, gates and
coherence-weighted answers, equal to a brute-force reference, also when the threshold sits
where the built-in embedder's count vectors tie."""

import base64
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, expect_ok  # noqa: E402

SEED = int(os.environ.get("MEM_TEST_SEED", "20261202"))
KERNELS = ("scalar", "avx2", "avx512", "neon")
# words the tokenizer keeps as they are, so texts differ only in which words and how often
VOCAB = ["alpha", "beta", "gamma", "delta", "kappa", "omega", "sigma", "zeta", "theta", "lambda"]
T0 = 1767225600000  # 2026-01-01T00:00:00Z: fixed times, so answers do not depend on the clock


def texts(rng, n):
    """Short texts over VOCAB, a word sometimes repeated, a quarter of them repeats."""
    out = []
    for i in range(n):
        if i > 3 and rng.random() < 0.25:
            out.append(rng.choice(out))
            continue
        words = [rng.choice(VOCAB) for _ in range(rng.randint(1, 4))]
        out.append(" ".join(words))
    return out


def ingest(srv, ns, docs):
    """Insert docs in batches of 50; returns {id: seq}."""
    seqs = {}
    for b in range(0, len(docs), 50):
        segs = [{"id": "s%d" % i, "text": docs[i], "timestamp": h.rfc3339_ms(T0 + i * 1000)}
                for i in range(b, min(b + 50, len(docs)))]
        body = expect_ok(srv.insert(ns, {"segments": segs}), 201)
        for s, ins in zip(segs, body["inserted"]):
            seqs[s["id"]] = ins["seq"]
    return seqs


def tie_threshold(ids, vecs):
    """The float32 cosine (in 0.3..0.95) that the most pairs share to within 1e-6: the
    threshold where a kernel's rounding decides edges if anything does."""
    cos = sorted(h.ref_dot(vecs[ids[a]], vecs[ids[b]])
                 for a in range(len(ids)) for b in range(a + 1, len(ids)))
    best, best_n, i = None, 0, 0
    while i < len(cos):
        j = i
        while j < len(cos) and cos[j] - cos[i] < 1e-6:
            j += 1
        c = cos[i + (j - i) // 2]
        if 0.3 < c < 0.95 and j - i > best_n:
            best, best_n = c, j - i
        i = j
    return h.f32(best), best_n


def available():
    """The MNEMOD_SIMD values this CPU runs: the server refuses the others at start-up."""
    out = []
    for k in KERNELS:
        srv = h.Server(env={"MNEMOD_SIMD": k})
        try:
            srv.start()
            out.append(k)
            srv.stop()
        except h.Failure:
            pass
        finally:
            srv.cleanup()
    return out


def run_kernel(kernel, docs, thr, query):
    """A fresh server with kernel and threshold thr, docs ingested: (stats, results, kernel)."""
    srv = h.Server(args=["--coherence-threshold", "%.9g" % thr], env={"MNEMOD_SIMD": kernel})
    try:
        srv.start()
        seqs = ingest(srv, "k", docs)
        st = expect_ok(srv.ns_stats("k"))
        body = expect_ok(srv.retrieve("k", {
            "embedding": query, "k": 200, "coherence_weight": 0.5, "recency_bias": 0.0, "match": "vector",
            "origin": h.rfc3339_ms(T0 + len(docs) * 1000), "explain": True}))
        vecs = h.export_vecs(srv, "k")
        srv.stop()
        return st, body, vecs, seqs
    finally:
        srv.cleanup()


@test
def test_every_kernel_same_graph_and_answers():
    """The same texts under every kernel, at the default threshold and at the count vectors'
    densest tie: identical graph_edges, max_degree, gates and answers, all equal to the
    brute force."""
    kernels = available()
    check("scalar" in kernels, "the scalar kernel always runs")
    rng = random.Random(SEED)
    docs = texts(rng, 240)
    # the vectors and the tie threshold, from a first scalar run
    st, _, vecs, seqs = run_kernel("scalar", docs, h.f32(0.55), [1.0] + [0.0] * 255)
    ids = ["s%d" % i for i in range(len(docs))]
    tie, n_tie = tie_threshold(ids, vecs)
    check(tie is not None and n_tie > 1, "the texts share cosines")
    q = base64.b64encode(struct.pack("<%df" % len(vecs["s1"]), *vecs["s1"])).decode()
    for thr in (h.f32(0.55), tie):
        deg, edges, maxd = h.graph_stats(vecs, thr)
        check(edges > 0, "the data has edges at %.9g" % thr)
        segs = [{"id": "s%d" % i, "seq": seqs["s%d" % i], "ts": T0 + i * 1000,
                 "vec": vecs["s%d" % i]} for i in range(len(docs))]
        _, want_all = h.reference(segs, vecs["s1"], k=200, recency_bias=0.0,
                                  origin_ms=T0 + len(docs) * 1000, coherence_weight=0.5,
                                  graph=(deg, edges, maxd))
        first = None
        for k in kernels:
            st, body, got_vecs, _ = run_kernel(k, docs, thr, q)
            what = "%s at %.9g" % (k, thr)
            eq(body["kernel"].split("+")[0][:len(k)], k, "%s: kernel used" % what)
            for i in ids:  # the same vectors on every kernel (the embedder is exact)
                eq(got_vecs[i], vecs[i], "%s: vector of %s" % (what, i))
            eq((st["graph_edges"], st["max_degree"]), (edges, maxd), "%s: graph stats" % what)
            res = body["results"]
            h.match_results(res, want_all, 200, tol=1e-6, what=what)
            for r in res:
                h.near(r["gate"], deg[r["id"]] / maxd, 1e-12, "%s: gate of %s" % (what, r["id"]))
            if first is None:
                first = res
                continue
            eq(len(res), len(first), "%s: number of results" % what)
            for a, b in zip(res, first):  # the same answer as the first kernel's
                if a["id"] != b["id"]:
                    check(abs(a["score"] - b["score"]) <= 1e-6,
                          "%s: %s where %s had %s" % (what, a["id"], kernels[0], b["id"]))
                else:
                    check(abs(a["score"] - b["score"]) <= 1e-6, "%s: score of %s" % (what, a["id"]))


if __name__ == "__main__":
    h.main()
