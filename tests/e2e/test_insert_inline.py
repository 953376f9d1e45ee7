"""test_insert_inline.py - inserts decoded on the event loop give exactly the pool's answers.

Two servers get the same inserts in the same order: one decodes an insert with a small body
on its event loop and queues it for the writer from there (the default,
--inline-max-write-body 16KiB), one decodes every insert on a pool thread
(--inline-max-write-body 0). Good inserts and bad ones (malformed JSON, wrong dimension,
bad fields, duplicates, text for the built-in embedder) must get the same status and body
from both, both must then hold the same segments, and /metrics must say where each insert
was decoded. Concurrent inserts decoded on the loop are all acknowledged and all stored.
"""

import json
import os
import random
import re
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import check, eq, expect_ok  # noqa: E402

DIM = 16
T0 = 1700000000000


def decodes(srv):
    out = {}
    for (name, labels), v in h.metric_samples(srv).items():
        m = re.fullmatch(r'kind="insert_decode",where="(\w+)"', labels)
        if name == "mnemod_answers_total" and m:
            out[m.group(1)] = int(v)
    return out


def bodies(rng):
    """(name, bytes) in the order both servers get them: every kind of insert, good and bad."""
    out = []
    for i in range(60):
        seg = {"id": "s%d" % i, "embedding": h.rand_vec(rng, DIM),
               "timestamp": h.rfc3339_ms(T0 + i * 1000),
               "text": rng.choice(["alpha beta", "gamma", "deadline report", "travel"])}
        if rng.random() < 0.3:
            seg["metadata"] = {"user": rng.choice(["ana", "bo"]), "pri": rng.randint(0, 3)}
        if i > 5 and rng.random() < 0.2:
            seg["supersedes"] = ["s%d" % rng.randrange(i)]
        out.append(("good %d" % i, json.dumps(seg).encode()))
    out += [
        ("text only (built-in embedder: the namespace has another dim)",
         b'{"id":"t1","text":"embedded from its words","timestamp":"2026-01-02T03:04:05Z"}'),
        ("malformed JSON", b'{"id":"x1","embedding":[1,2'),
        ("not an object", b'[1,2,3]'),
        ("wrong dimension", json.dumps({"id": "x2", "embedding": [0.5] * (DIM + 1)}).encode()),
        ("zero vector", json.dumps({"id": "x3", "embedding": [0.0] * DIM}).encode()),
        ("bad timestamp", json.dumps({"id": "x4", "embedding": [0.1] * DIM,
                                      "timestamp": "yesterday"}).encode()),
        ("number too big", b'{"id":"x5","embedding":[' + b",".join([b"1e999"] * DIM) + b"]}"),
        ("unknown field", json.dumps({"id": "x6", "embedding": [0.1] * DIM, "colour": 1}).encode()),
        ("duplicate id", json.dumps({"id": "s1", "embedding": [0.1] * DIM}).encode()),
        ("supersedes a missing id", json.dumps({"id": "x7", "embedding": [0.2] * DIM,
                                                "supersedes": ["nope"]}).encode()),
        ("nothing to store", b'{}'),
        ("small batch", json.dumps({"segments": [
            {"id": "b%d" % j, "embedding": h.rand_vec(rng, DIM), "text": "batch member",
             "timestamp": h.rfc3339_ms(T0 + 100000 + j)}
            for j in range(5)]}).encode()),
        ("batch with a duplicate", json.dumps({"segments": [
            {"id": "b9", "embedding": h.rand_vec(rng, DIM)},
            {"id": "b9", "embedding": h.rand_vec(rng, DIM)}]}).encode()),
    ]
    return out


def strip(resp):
    st, _, body = resp
    if isinstance(body, dict):
        body.pop("took_ms", None)
    return st, body


@h.test
def test_inserts_decoded_on_the_loop_equal_the_pool():
    rng = random.Random(6101)
    loop = h.Server().start()
    pool = h.Server(["--inline-max-write-body", "0"]).start()
    for srv in (loop, pool):
        expect_ok(srv.put("/v1/namespaces/m", {"dim": DIM}), 201, "create")
    m0 = [decodes(s) for s in (loop, pool)]
    todo = bodies(rng)
    n_ok = 0
    for name, data in todo:
        got = [strip(s.post("/v1/namespaces/m/segments", data)) for s in (loop, pool)]
        if got[0] != got[1]:
            raise h.Failure("%s: the loop answered %r, the pool %r" % (name, got[0], got[1]))
        if name.startswith("good") or name == "small batch":
            eq(got[0][0], 201, "%s: %r" % (name, got[0]))
            n_ok += len(got[0][1]["inserted"])
        elif not name.startswith("text only"):
            check(400 <= got[0][0] < 500 and "error" in got[0][1], "%s: a 4xx error: %r" %
                  (name, got[0]))
    eq(n_ok, 65, "every good insert stored")
    m1 = [decodes(s) for s in (loop, pool)]
    on_loop = m1[0].get("loop", 0) - m0[0].get("loop", 0)
    on_pool = m1[0].get("pool", 0) - m0[0].get("pool", 0)
    # a try gives up only while the writer holds the namespace at that very instant
    check(on_loop >= len(todo) // 2, "most inserts decoded on the loop: %d of %d" %
          (on_loop, len(todo)))
    eq(on_loop + on_pool, len(todo), "every insert counted once")
    eq(m1[1].get("loop", 0) - m0[1].get("loop", 0), 0, "0 decodes nothing on the loop")
    eq(m1[1].get("pool", 0) - m0[1].get("pool", 0), len(todo), "0: every insert on the pool")
    # both hold the same segments, in the same order, with the same seqs
    pages = [s.get("/v1/namespaces/m/segments?limit=500&embedding=true&include_superseded=true") for s in (loop, pool)]
    eq(pages[0][0], 200, "list")
    eq(pages[0][2], pages[1][2], "the same segments")
    eq(len(pages[0][2]["segments"]), 65, "60 singles and a batch of 5")
    # a body over the limit is decoded on the pool, with the same answer
    big = {"id": "big", "embedding": h.rand_vec(rng, DIM), "text": "x" * 17000}
    before = decodes(loop)
    expect_ok(loop.insert("m", big), 201, "a 17 KB insert")
    after = decodes(loop)
    eq(after.get("pool", 0) - before.get("pool", 0), 1, "over 16 KiB: decoded on the pool")
    expect_ok(loop.seg("m", "big"), 200, "stored")
    for srv in (loop, pool):
        srv.stop()


@h.test
def test_concurrent_inserts_decoded_on_the_loop_are_all_stored():
    rng = random.Random(6102)
    srv = h.Server().start()
    expect_ok(srv.put("/v1/namespaces/c", {"dim": DIM}), 201, "create")
    vecs = {"w%d-%d" % (t, i): h.rand_vec(rng, DIM) for t in range(16) for i in range(25)}
    bad = []

    def writer(t):
        for i in range(25):
            sid = "w%d-%d" % (t, i)
            st, _, body = srv.insert("c", {"id": sid, "embedding": vecs[sid], "text": "w %d" % t})
            if st != 201:
                bad.append((sid, st, body))

    m0 = decodes(srv)
    ths = [threading.Thread(target=writer, args=(t,)) for t in range(16)]
    [t.start() for t in ths]
    [t.join() for t in ths]
    eq(bad, [], "every concurrent insert acknowledged")
    m1 = decodes(srv)
    eq(m1.get("loop", 0) + m1.get("pool", 0) - m0.get("loop", 0) - m0.get("pool", 0), 400,
       "400 decodes")
    check(m1.get("loop", 0) - m0.get("loop", 0) > 0, "decoded on the loop under concurrency")
    eq(srv.ns_stats("c")[2]["count"], 400, "every one stored")
    for sid in rng.sample(sorted(vecs), 20):
        st, _, got = srv.seg("c", sid, embedding=True)
        eq(st, 200, sid)
        for a, b in zip(got["embedding"], h.unit(vecs[sid])):
            h.near(a, b, 1e-5, sid)
    srv.stop()


if __name__ == "__main__":
    h.main()
