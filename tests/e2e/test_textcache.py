"""test_textcache.py - retrieve answers are the same with the texts cache (--text-cache,
default) as without it (0, every text read from SQLite), through patches, deletes and a
restart, on the event loop and on the pool."""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, expect_ok  # noqa: E402

DIM = 16
NS = "tc"


def segments(rng):
    segs = []
    for i in range(60):
        s = {"id": "s%02d" % i, "embedding": h.rand_vec(rng, DIM),
             "timestamp": "2026-11-%02dT%02d:00:00Z" % (1 + i // 3, i % 3)}
        if i % 5:
            s["text"] = "note %d about the %s" % (i, ["garden", "budget", "trip"][i % 3])
        if i % 3 == 0:
            s["source"] = ["mail", "chat"][i % 2]
        if i % 4 == 1:
            s["metadata"] = {"n": i, "tag": "t%d" % (i % 3)}
        segs.append(s)
    return segs


def metric(srv, name):
    v = h.metric_samples(srv).get((name, ""))
    if v is None:
        raise h.Failure("no %s in /metrics" % name)
    return v


def answers(srv, queries):
    out = []
    for q in queries:
        for k in (1, 10, 60):
            st, _, body = srv.retrieve(NS, dict(q, k=k, include_superseded=True))
            eq(st, 200, "retrieve")
            out.append(body["results"])
    return out


@test
def test_answers_equal_without_cache_through_writes():
    rng = random.Random(7)
    segs = segments(rng)
    queries = [{"embedding": h.rand_vec(rng, DIM)} for _ in range(4)]
    cached = h.Server().start()                                    # inline reads, cache on
    plain = h.Server(args=["--text-cache", "0", "--inline-scan-budget", "0"]).start()
    try:
        for srv in (cached, plain):
            expect_ok(srv.insert(NS, {"segments": segs}), 201)
        for _ in range(2):  # the second round answers from the cache
            eq(answers(cached, queries), answers(plain, queries), "fresh")
        check(metric(cached, "mnemod_text_cache_hits_total") > 0, "no answer from the cache")
        check(metric(cached, "mnemod_text_cache_entries") > 0, "nothing cached")
        eq(metric(plain, "mnemod_text_cache_hits_total"), 0.0, "hits with --text-cache 0")
        eq(metric(plain, "mnemod_text_cache_bytes"), 0.0, "bytes with --text-cache 0")
        top = answers(cached, queries[:1])[1]  # ten hits the cache holds
        for i, r in enumerate(top[:6]):
            body = {"metadata": {"patched": i}} if i % 2 else {"source": "web%d" % i}
            if i == 4:
                body = {"metadata": None, "source": None}
            for srv in (cached, plain):
                st, _, _ = srv.call("PATCH", "/v1/namespaces/%s/segments/%s" % (NS, r["id"]),
                                    body)
                eq(st, 200, "patch")
        got = answers(cached, queries)
        eq(got, answers(plain, queries), "after patches")
        after = {r["id"]: r for r in got[1]}
        check(after[top[1]["id"]].get("metadata") == {"patched": 1}, "patched metadata shown")
        check(after[top[0]["id"]].get("source") == "web0", "patched source shown")
        check("metadata" not in after[top[4]["id"]] or after[top[4]["id"]]["metadata"] is None,
              "cleared metadata shown")
        for r in top[6:8]:
            for srv in (cached, plain):
                eq(srv.delete("/v1/namespaces/%s/segments/%s" % (NS, r["id"]))[0], 200, "delete")
        eq(answers(cached, queries), answers(plain, queries), "after deletes")
        cached.restart()
        eq(answers(cached, queries), answers(plain, queries), "after a restart")
        eq(answers(cached, queries), answers(plain, queries), "after a restart, cached")
    finally:
        cached.stop()
        plain.stop()


if __name__ == "__main__":
    h.main()
