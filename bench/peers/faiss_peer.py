#!/usr/bin/python3
"""faiss_peer.py DIR - FAISS (Debian's python3-faiss) on a corpus of bench/peers, one thread.

Prints one JSON object: per variant the per-query p50/p95 in us and recall@K against the
exact decayed answer (mnemod's, truth.json). Variants:
- flat_ip: IndexFlatIP, exact cosine top K (no decay: what a plain vector store answers);
- flat_ip_rerank_100 / _1000: the cosine top 100 / 1000, re-scored with the decay, top K;
- bruteforce_decay: every row's cosine (one BLAS matrix-vector product) times its decay,
  top K: the exact decayed answer, computed the way a FAISS user without decay support
  would.
"""
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

try:
    import faiss
    import numpy as np
except ImportError as e:
    print(json.dumps({"error": "faiss not installed (%s); make bench installs python3-faiss" % e}))
    sys.exit(0)


def timed(fn, queries, reps):
    ns, out = [], None
    for r in range(reps):
        res = []
        for q in queries:
            t0 = time.perf_counter_ns()
            ids = fn(q)
            ns.append(time.perf_counter_ns() - t0)
            res.append(ids)
        out = res
    ns.sort()
    return {"p50_us": round(ns[len(ns) // 2] / 1e3, 2),
            "p95_us": round(ns[int(len(ns) * 0.95)] / 1e3, 2)}, out


def main():
    d = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    p, rows, qbuf, ts, truth = common.load(d)
    n, dim, k = p["n"], p["dim"], p["k"]
    faiss.omp_set_num_threads(1)
    x = np.frombuffer(rows, dtype="<f4").reshape(n, dim).copy()
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    qs = np.frombuffer(qbuf, dtype="<f4").reshape(p["queries"], dim).copy()
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    w = np.array(common.decay_weights(p, ts), dtype=np.float64)
    index = faiss.IndexFlatIP(dim)
    t0 = time.perf_counter()
    index.add(x)
    build_s = time.perf_counter() - t0
    prefix = p["id_prefix"]

    def names(ids):
        return ["%s%d" % (prefix, i) for i in ids]

    def flat(q):
        _, ids = index.search(q[None, :], k)
        return names(ids[0])

    def rerank(kk):
        def f(q):
            sims, ids = index.search(q[None, :], kk)
            s = sims[0].astype(np.float64) * w[ids[0]]
            top = np.argsort(-s, kind="stable")[:k]
            return names(ids[0][top])
        return f

    def brute(q):
        s = (x @ q).astype(np.float64) * w
        top = np.argpartition(-s, k)[:k]
        return names(top[np.argsort(-s[top], kind="stable")])

    out = {"peer": "faiss", "version": faiss.__version__, "threads": 1,
           "build_s": round(build_s, 3), "variants": {}}
    for name, fn in (("flat_ip", flat), ("flat_ip_rerank_100", rerank(min(100, n))),
                     ("flat_ip_rerank_1000", rerank(min(1000, n))), ("bruteforce_decay", brute)):
        st, ids = timed(fn, qs, reps)
        st["recall_at_k"] = round(common.recall(ids, truth), 4)
        out["variants"][name] = st
    print(json.dumps(out))


if __name__ == "__main__":
    main()
