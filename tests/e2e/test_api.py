"""test_api.py - every endpoint of SPEC section 3, exact shapes and statuses, and retrieval
scores checked against the SPEC section 4 formula computed here in Python."""

import json
import math
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, near, expect_error, expect_ok  # noqa: E402

SEED = int(os.environ.get("MEM_TEST_SEED", "20260906"))
_ns_counter = [0]


def fresh_ns(prefix="api"):
    _ns_counter[0] += 1
    return "%s_%d_%d" % (prefix, os.getpid() % 10000, _ns_counter[0])


def S():
    return h.shared()


def rng_for(name):
    return random.Random("%d:%s" % (SEED, name))


def make_corpus(srv, ns, rng, n, dim, t_first_ms, t_last_ms, sources=None, batch=50,
                ts_as_number=False, ties=False):
    """Insert n segments with explicit ids, raw (non-unit) embeddings and non-decreasing
    timestamps; return the reference rows (dicts id, seq, ts, vec, source)."""
    ts = sorted(rng.randint(t_first_ms, t_last_ms) for _ in range(n))
    if ts_as_number:   # multiples of 250 ms are exact in binary: no truncation question
        ts = [t - t % 250 for t in ts]
    if ties:
        for i in range(1, n, 3):
            ts[i] = ts[i - 1]
    rows, pending = [], []
    for i in range(n):
        raw = [x * rng.uniform(0.1, 10.0) for x in h.rand_vec(rng, dim)]
        seg = {"id": "%s-%d" % (ns, i), "embedding": raw,
               "timestamp": ts[i] / 1000.0 if ts_as_number else h.rfc3339_ms(ts[i])}
        src = None
        if sources:
            src = rng.choice(sources)
            if src is not None:
                seg["source"] = src
        pending.append(seg)
        rows.append({"id": seg["id"], "ts": ts[i], "vec": h.unit(raw), "source": src})
    seqs = []
    for i in range(0, n, batch):
        body = expect_ok(srv.insert(ns, {"segments": pending[i:i + batch]}), 201, "corpus insert")
        seqs += [r["seq"] for r in body["inserted"]]
    eq(len(seqs), n, "inserted count")
    for r, s in zip(rows, seqs):
        r["seq"] = s
    return rows


def check_stats_shape(st, ns):
    for f in ("name", "count", "superseded", "archived", "dim", "oldest", "newest",
              "graph_edges", "max_degree"):
        check(f in st, "stats field %r missing: %s" % (f, st))
    eq(st["name"], ns, "stats name")
    for f in ("count", "superseded", "archived", "dim", "graph_edges", "max_degree"):
        check(isinstance(st[f], int) and not isinstance(st[f], bool) and st[f] >= 0,
              "stats %s is not a non-negative integer: %r" % (f, st[f]))


def retrieve_ok(srv, ns, req, what="retrieve"):
    body = expect_ok(srv.retrieve(ns, req), 200, what)
    eq(body.get("namespace"), ns, "%s: namespace" % what)
    check(isinstance(body.get("took_ms"), (int, float)) and body["took_ms"] >= 0, "took_ms")
    check(isinstance(body.get("scanned"), int) and body["scanned"] >= 0, "scanned")
    check(isinstance(body.get("kernel"), str) and body["kernel"], "kernel")
    check(isinstance(body.get("results"), list), "results is a list")
    check(body["scanned"] >= len(body["results"]), "scanned >= number of results")
    return body


# ------------------------------------------------------------------ basics

@test
def test_healthz():
    st, hdr, body = S().get("/healthz")
    eq(st, 200, "status")
    eq(body, {"status": "ok"}, "body")
    check("application/json" in hdr.get("content-type", ""), "healthz content-type json")


METRIC_LINE = re.compile(
    r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"'
    r'(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*,?)?\})?'
    r' ([-+]?([0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?|NaN|[+-]?Inf))( -?[0-9]+)?$')


@test
def test_metrics_prometheus_text():
    srv = S()
    ns = fresh_ns("metrics")
    expect_ok(srv.insert(ns, {"embedding": [1, 0, 0]}), 201)
    body = retrieve_ok(srv, ns, {"embedding": [1, 0, 0]})
    expect_error(srv.seg(ns, "nope"), 404, "not_found")
    st, hdr, text = srv.get("/metrics")
    eq(st, 200, "metrics status")
    check(hdr.get("content-type", "").startswith("text/plain"), "metrics content-type text/plain: %r"
          % hdr.get("content-type"))
    check(isinstance(text, str) and text.strip(), "metrics body not empty")
    samples = 0
    for ln in text.splitlines():
        if not ln.strip() or ln.startswith("#"):
            if ln.startswith("#"):
                check(re.match(r"^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* ", ln) or
                      not ln.startswith("# HELP") and not ln.startswith("# TYPE"),
                      "bad comment line %r" % ln)
            continue
        check(METRIC_LINE.match(ln), "metrics line does not parse: %r" % ln)
        samples += 1
    check(samples > 0, "no samples")
    check(re.search(r"request", text), "no request counter in metrics")
    check(re.search(r"_bucket\{[^}]*le=", text), "no latency histogram buckets in metrics")
    check(ns in text, "segments per namespace: %s not in metrics" % ns)
    check(re.search(r'\{[^}]*="404"[^}]*\}', text), "requests by status: no 404 label after a 404")
    check(re.search(r'\{[^}]*="201"[^}]*\}', text), "requests by status: no 201 label after an insert")
    check(body["kernel"] in text, "kernel %r not in metrics" % body["kernel"])


@test
def test_namespace_create_list_stats_drop():
    srv = S()
    ns = fresh_ns("nsl")
    r = srv.put("/v1/namespaces/" + ns, {"dim": 8})
    eq(r[0], 201, "create status")
    eq(srv.put("/v1/namespaces/" + ns, {"dim": 8})[0], 200, "create again, same dim")
    expect_error(srv.put("/v1/namespaces/" + ns, {"dim": 9}), 409, "namespace_exists")
    st = expect_ok(srv.ns_stats(ns))
    check_stats_shape(st, ns)
    eq((st["count"], st["superseded"], st["archived"], st["dim"], st["graph_edges"],
        st["max_degree"]), (0, 0, 0, 8, 0, 0), "empty stats")
    # the dimension is fixed by the explicit create
    expect_error(srv.insert(ns, {"embedding": [1, 2, 3]}), 400, "dimension_mismatch")
    t0 = h.now_ms() - 10 * 86400000
    e = [1, 0, 0, 0, 0, 0, 0, 0]
    expect_ok(srv.insert(ns, {"segments": [{"id": "a", "embedding": e, "timestamp": h.rfc3339_ms(t0)},
                                           {"id": "b", "embedding": e,
                                            "timestamp": h.rfc3339_ms(t0 + 5000)}]}), 201)
    st = expect_ok(srv.ns_stats(ns))
    check_stats_shape(st, ns)
    eq(st["count"], 2, "count")
    eq(st["oldest"], h.rfc3339_ms(t0), "oldest")
    eq(st["newest"], h.rfc3339_ms(t0 + 5000), "newest")
    eq((st["graph_edges"], st["max_degree"]), (1, 1), "graph of two equal vectors")
    lst = expect_ok(srv.get("/v1/namespaces"))
    check(isinstance(lst.get("namespaces"), list), "namespaces list")
    mine = [x for x in lst["namespaces"] if x.get("name") == ns]
    eq(len(mine), 1, "namespace listed once")
    check_stats_shape(mine[0], ns)
    eq(mine[0]["count"], 2, "listed count")
    eq(mine[0]["dim"], 8, "listed dim")
    d = expect_ok(srv.delete("/v1/namespaces/" + ns))
    eq(d, {"deleted": ns}, "drop body")
    expect_error(srv.ns_stats(ns), 404, "not_found")
    expect_error(srv.delete("/v1/namespaces/" + ns), 404, "not_found")
    lst = expect_ok(srv.get("/v1/namespaces"))
    check(all(x.get("name") != ns for x in lst["namespaces"]), "dropped namespace still listed")


@test
def test_namespace_recreate_restarts_seq():
    srv = S()
    ns = fresh_ns("recreate")
    t0 = h.now_ms() - 86400000
    b = expect_ok(srv.insert(ns, {"segments": [{"embedding": [1, 2], "timestamp": h.rfc3339_ms(t0)},
                                               {"embedding": [2, 1], "timestamp": h.rfc3339_ms(t0)}]}),
                  201)
    eq([x["seq"] for x in b["inserted"]], [1, 2], "first seqs")
    expect_ok(srv.delete("/v1/namespaces/" + ns))
    # re-created with another dimension and an older timestamp: a fresh namespace
    b = expect_ok(srv.insert(ns, {"id": "x", "embedding": [1, 2, 3],
                                  "timestamp": h.rfc3339_ms(t0 - 86400000)}), 201)
    eq(b["inserted"][0]["seq"], 1, "seq restarts at 1")
    st = expect_ok(srv.ns_stats(ns))
    eq((st["count"], st["dim"]), (1, 3), "re-created stats")
    expect_error(srv.seg(ns, b["inserted"][0]["id"] + "nope"), 404, "not_found")


@test
def test_namespace_names_valid_edges():
    srv = S()
    for name in ["a" * 64, "_x", "A.b-c_9", "0", "x..y"]:
        st = srv.put("/v1/namespaces/" + name, {"dim": 2})
        check(st[0] in (200, 201), "valid name %r refused: %r" % (name, st))
        expect_ok(srv.ns_stats(name), 200, "stats of %r" % name)
        expect_ok(srv.delete("/v1/namespaces/" + name), 200, "drop %r" % name)


# ------------------------------------------------------------------ insert

@test
def test_insert_single_shape():
    srv = S()
    ns = fresh_ns("ins")
    ts = h.now_ms() - 3600 * 1000
    r = srv.insert(ns, {"id": "m1", "text": "hello", "embedding": [3, 4], "timestamp": h.rfc3339_ms(ts),
                        "source": "hermes", "metadata": {"k": [1, "two", {"three": None}], "n": 1.5}})
    body = expect_ok(r, 201)
    check("application/json" in r[1].get("content-type", ""), "content-type json")
    eq(list(body.keys()), ["inserted"], "body keys")
    eq(len(body["inserted"]), 1, "one record")
    rec = body["inserted"][0]
    eq(sorted(rec.keys()), ["id", "seq", "timestamp"], "record keys")
    eq(rec, {"id": "m1", "seq": 1, "timestamp": h.rfc3339_ms(ts)}, "record")
    g = expect_ok(srv.seg(ns, "m1"))
    eq(g.get("id"), "m1", "get id")
    eq(g.get("seq"), 1, "get seq")
    eq(g.get("timestamp"), h.rfc3339_ms(ts), "get timestamp")
    eq(g.get("text"), "hello", "get text")
    eq(g.get("source"), "hermes", "get source")
    eq(g.get("metadata"), {"k": [1, "two", {"three": None}], "n": 1.5}, "metadata verbatim")
    check("embedding" not in g, "embedding only with ?embedding=true")
    g = expect_ok(srv.get("/v1/namespaces/%s/segments/m1?embedding=false" % ns))
    check("embedding" not in g, "?embedding=false")
    g = expect_ok(srv.seg(ns, "m1", embedding=True))
    emb = g.get("embedding")
    check(isinstance(emb, list) and len(emb) == 2, "embedding returned")
    near(emb[0], 0.6, 1e-6, "unit vector x")
    near(emb[1], 0.8, 1e-6, "unit vector y")
    near(math.sqrt(sum(x * x for x in emb)), 1.0, 1e-6, "norm")


@test
def test_insert_batch_shape_and_seq():
    srv = S()
    ns = fresh_ns("batch")
    t0 = h.now_ms() - 86400000
    segs = [{"id": "b%d" % i, "embedding": [1, i, 2], "timestamp": h.rfc3339_ms(t0 + i * 1000)}
            for i in range(5)]
    body = expect_ok(srv.insert(ns, {"segments": segs}), 201)
    eq([r["id"] for r in body["inserted"]], ["b%d" % i for i in range(5)], "ids in order")
    eq([r["timestamp"] for r in body["inserted"]], [s["timestamp"] for s in segs], "timestamps echoed")
    seqs = [r["seq"] for r in body["inserted"]]
    eq(seqs, [1, 2, 3, 4, 5], "seq strictly increasing from 1")
    body = expect_ok(srv.insert(ns, {"embedding": [0, 0, 1], "timestamp": h.rfc3339_ms(t0 + 9000)}), 201)
    eq(body["inserted"][0]["seq"], 6, "next seq")
    eq(expect_ok(srv.ns_stats(ns))["count"], 6, "count")


@test
def test_generated_ids_are_uuid7():
    srv = S()
    ns = fresh_ns("uuid")
    before = h.now_ms()
    ids = []
    for i in range(3):
        b = expect_ok(srv.insert(ns, {"embedding": [1, i + 1]}), 201)
        ids.append(b["inserted"][0]["id"])
    b = expect_ok(srv.insert(ns, {"segments": [{"embedding": [1, 5]}, {"id": None, "embedding": [1, 6]}]}), 201)
    ids += [r["id"] for r in b["inserted"]]      # README: "id": null means absent
    after = h.now_ms()
    eq(len(set(ids)), 5, "generated ids are unique")
    prev = 0
    for sid in ids:
        check(h.UUID7.match(sid), "generated id %r is not a UUIDv7" % sid)
        ms = int(sid.replace("-", "")[:12], 16)
        check(before - 2000 <= ms <= after + 2000, "UUIDv7 time %d outside [%d, %d]" % (ms, before, after))
        check(ms >= prev, "UUIDv7 times go back")
        prev = ms
        expect_ok(srv.seg(ns, sid), 200, "get generated id")


@test
def test_idempotent_retry_and_duplicate_id():
    srv = S()
    ns = fresh_ns("idem")
    ts = h.rfc3339_ms(h.now_ms() - 7200 * 1000)
    seg = {"id": "r1", "text": "t", "embedding": [1, 2, 3], "timestamp": ts, "source": "s",
           "metadata": {"a": 1}}
    first = expect_ok(srv.insert(ns, seg), 201)
    expect_ok(srv.insert(ns, {"id": "r2", "embedding": [3, 2, 1], "timestamp": ts}), 201)
    again = srv.insert(ns, seg)
    eq(again[0], 200, "retry status")
    eq(again[2], first, "retry answers the stored record in the same shape")
    # same direction, other scale: the normalised embedding is identical
    seg2 = dict(seg, embedding=[2, 4, 6])
    eq(srv.insert(ns, seg2)[2], first, "scaled embedding is the same normalised content")
    eq(expect_ok(srv.ns_stats(ns))["count"], 2, "nothing written by the retry")
    for change in ({"text": "u"}, {"embedding": [1, 2, 4]}, {"source": "other"},
                   {"metadata": {"a": 2}}, {"timestamp": h.rfc3339_ms(h.now_ms() - 3600 * 1000)}):
        bad = dict(seg)
        bad.update(change)
        expect_error(srv.insert(ns, bad), 409, "duplicate_id", "changed %s" % list(change))
    # a segment stored without a timestamp retried without one is identical
    b = expect_ok(srv.insert(ns, {"id": "r3", "embedding": [1, 1, 1]}), 201)
    eq(srv.insert(ns, {"id": "r3", "embedding": [1, 1, 1]})[0:3:2], (200, b), "retry without timestamp")
    st = expect_ok(srv.ns_stats(ns))
    eq(st["count"], 3, "count after conflicts")


@test
def test_batch_retry_skips_stored_members():
    srv = S()
    ns = fresh_ns("bretry")
    t0 = h.now_ms() - 86400000
    a = {"id": "a", "embedding": [1, 0], "timestamp": h.rfc3339_ms(t0)}
    b = {"id": "b", "embedding": [0, 1], "timestamp": h.rfc3339_ms(t0 + 1)}
    c = {"id": "c", "embedding": [1, 1], "timestamp": h.rfc3339_ms(t0 + 2)}
    first = expect_ok(srv.insert(ns, {"segments": [a, b]}), 201)
    r = srv.insert(ns, {"segments": [a, b, c]})
    body = expect_ok(r, 201, "batch with a new member")
    got = {x["id"]: x for x in body["inserted"]}
    check("c" in got, "new member reported")
    eq(got["c"]["seq"], 3, "new member seq")
    for x in first["inserted"]:
        if x["id"] in got:
            eq(got[x["id"]], x, "skipped member reported as stored")
    eq(expect_ok(srv.ns_stats(ns))["count"], 3, "count")
    r = srv.insert(ns, {"segments": [a, b, c]})
    eq(r[0], 200, "all members stored: 200")
    eq(sorted(x["seq"] for x in r[2]["inserted"]), [1, 2, 3], "stored records")


@test
def test_batch_atomic():
    srv = S()
    ns = fresh_ns("atomic")
    t0 = h.now_ms() - 86400000
    expect_ok(srv.insert(ns, {"id": "base", "embedding": [1, 0, 0], "timestamp": h.rfc3339_ms(t0)}), 201)
    good = lambda i: {"id": "g%d" % i, "embedding": [1, i, 0], "timestamp": h.rfc3339_ms(t0 + i)}
    ts3 = h.rfc3339_ms(t0 + 3)
    bads = [
        ({"id": "bad", "embedding": [1, 0], "timestamp": ts3}, 400, "dimension_mismatch"),
        ({"id": "bad", "embedding": [0, 0, 0], "timestamp": ts3}, 400, "invalid_field"),
        ({"id": "bad", "embedding": [1, 0, 0], "timestamp": h.rfc3339_ms(t0 + 2)}, 409,
         "non_monotonic_timestamp"),
        ({"id": "base", "embedding": [0, 1, 0], "timestamp": ts3}, 409, "duplicate_id"),
        ({"id": "bad", "embedding": [1, 0, 0], "timestamp": ts3, "supersedes": ["nope"]}, 400, "unknown_id"),
        ({"id": "bad", "embedding": [1, 0, 0], "timestamp": ts3, "bogus": 1}, 400, "invalid_field"),
        # the same id twice in one batch (README decision: duplicate_id)
        ({"id": "g1", "embedding": [1, 0, 0], "timestamp": ts3}, 409, "duplicate_id"),
    ]
    for bad, st, code in bads:
        batch = {"segments": [good(1), good(2), good(3), bad]}
        if st is None:
            r = srv.insert(ns, batch)
            check((r[0], (r[2] or {}).get("error", {}).get("code")) in ((409, "duplicate_id"), (400, "invalid_field")),
                  "in-batch duplicate id: %r %s" % (r[0], r[2]))
            code = "in-batch duplicate"
        else:
            expect_error(srv.insert(ns, batch), st, code, "batch with %s" % code)
        s = expect_ok(srv.ns_stats(ns))
        eq(s["count"], 1, "nothing written after a rejected batch (%s)" % code)
        eq(s["newest"], h.rfc3339_ms(t0), "clock unchanged (%s)" % code)
        for i in (1, 2, 3):
            expect_error(srv.seg(ns, "g%d" % i), 404, "not_found")
    # the same batch without the bad member goes through
    b = expect_ok(srv.insert(ns, {"segments": [good(1), good(2), good(3)]}), 201)
    eq([x["seq"] for x in b["inserted"]], [2, 3, 4], "seqs after rejected batches")


@test
def test_monotonic_timestamps():
    srv = S()
    ns = fresh_ns("mono")
    t = h.now_ms() - 5 * 86400000
    expect_ok(srv.insert(ns, {"id": "a", "embedding": [1, 0], "timestamp": h.rfc3339_ms(t)}), 201)
    err = expect_error(srv.insert(ns, {"id": "b", "embedding": [1, 0],
                                       "timestamp": h.rfc3339_ms(t - 1)}), 409, "non_monotonic_timestamp")
    text = json.dumps(err)
    check(h.rfc3339_ms(t) in err["message"] and h.rfc3339_ms(t - 1) in err["message"],
          "409 message names both timestamps as RFC 3339: %s" % text)
    check("last_timestamp" in err, "409 body has last_timestamp: %s" % text)
    eq(err["last_timestamp"], h.rfc3339_ms(t), "last_timestamp")
    # ties are legal, singly and within a batch
    expect_ok(srv.insert(ns, {"id": "c", "embedding": [1, 0], "timestamp": h.rfc3339_ms(t)}), 201)
    b = expect_ok(srv.insert(ns, {"segments": [{"id": "d%d" % i, "embedding": [1, i],
                                                "timestamp": h.rfc3339_ms(t + 1000)} for i in range(4)]}), 201)
    eq([x["seq"] for x in b["inserted"]], [3, 4, 5, 6], "seqs of a tie batch")
    # decreasing within one batch
    expect_error(srv.insert(ns, {"segments": [
        {"id": "e1", "embedding": [1, 0], "timestamp": h.rfc3339_ms(t + 5000)},
        {"id": "e2", "embedding": [1, 0], "timestamp": h.rfc3339_ms(t + 4000)}]}),
        409, "non_monotonic_timestamp")
    expect_error(srv.seg(ns, "e1"), 404, "not_found")
    # milliseconds matter: 1 ms older than newest is rejected
    expect_error(srv.insert(ns, {"id": "f", "embedding": [1, 0], "timestamp": h.rfc3339_ms(t + 999)}),
                 409, "non_monotonic_timestamp")
    st = expect_ok(srv.ns_stats(ns))
    eq((st["count"], st["newest"]), (6, h.rfc3339_ms(t + 1000)), "stats")
    # an import names both timestamps the same way: older than the namespace's newest, and
    # older than an earlier line
    def imp(*stamps):
        body = "".join(json.dumps({"embedding": [1, 0], "timestamp": h.rfc3339_ms(x)}) + "\n"
                       for x in stamps)
        return srv.call("POST", "/v1/namespaces/%s/import" % ns, raw=body.encode(),
                        headers={"Content-Type": "application/x-ndjson"})
    for stamps, newest, older in (((t + 999,), t + 1000, t + 999),
                                  ((t + 3000, t + 2000), t + 3000, t + 2000)):
        err = expect_error(imp(*stamps), 409, "non_monotonic_timestamp", "import %r" % (stamps,))
        check(h.rfc3339_ms(newest) in err["message"] and h.rfc3339_ms(older) in err["message"],
              "import 409 message names both timestamps as RFC 3339: %s" % err["message"])
    eq(expect_ok(srv.ns_stats(ns))["count"], 6, "nothing imported")


@test
def test_delete_newest_keeps_clock():
    srv = S()
    ns = fresh_ns("clock")
    t = h.now_ms() - 86400000
    expect_ok(srv.insert(ns, {"id": "a", "embedding": [1, 0], "timestamp": h.rfc3339_ms(t)}), 201)
    expect_ok(srv.insert(ns, {"id": "b", "embedding": [0, 1], "timestamp": h.rfc3339_ms(t + 60000)}), 201)
    eq(expect_ok(srv.delete("/v1/namespaces/%s/segments/b" % ns)), {"deleted": "b"}, "delete body")
    expect_error(srv.insert(ns, {"id": "c", "embedding": [1, 1], "timestamp": h.rfc3339_ms(t + 30000)}),
                 409, "non_monotonic_timestamp")
    b = expect_ok(srv.insert(ns, {"id": "c", "embedding": [1, 1], "timestamp": h.rfc3339_ms(t + 60000)}), 201)
    eq(b["inserted"][0]["seq"], 3, "seq never reused after delete")


@test
def test_missing_timestamp_is_now():
    srv = S()
    ns = fresh_ns("now")
    before = h.now_ms()
    b = expect_ok(srv.insert(ns, {"embedding": [1, 0]}), 201)
    after = h.now_ms()
    ts = h.parse_ts(b["inserted"][0]["timestamp"])
    check(before - 1000 <= ts <= after + 1000, "missing timestamp %d is not now [%d, %d]" % (ts, before, after))
    # never below the namespace's newest (a newest slightly in the future)
    fut = h.now_ms() + 120 * 1000
    expect_ok(srv.insert(ns, {"embedding": [1, 1], "timestamp": h.rfc3339_ms(fut)}), 201)
    b = expect_ok(srv.insert(ns, {"embedding": [0, 1]}), 201)
    check(h.parse_ts(b["inserted"][0]["timestamp"]) >= fut, "now is clamped to the newest")
    b = expect_ok(srv.insert(ns, {"segments": [{"embedding": [0, 1]}, {"embedding": [1, 3]}]}), 201)
    tss = [h.parse_ts(x["timestamp"]) for x in b["inserted"]]
    check(tss[0] >= fut and tss[1] >= tss[0], "batch without timestamps stays monotonic")


@test
def test_timestamp_in_future():
    srv = S()
    ns = fresh_ns("future")
    expect_ok(srv.insert(ns, {"id": "a", "embedding": [1, 0]}), 201)
    for secs in (3600, 400, 10 * 365 * 86400):
        expect_error(srv.insert(ns, {"embedding": [1, 0], "timestamp": (h.now_ms() + secs * 1000) / 1000.0}),
                     400, "timestamp_in_future", "%d s ahead" % secs)
    expect_ok(srv.insert(ns, {"embedding": [1, 0], "timestamp": h.rfc3339_ms(h.now_ms() + 60000)}), 201,
              "60 s ahead is within the default skew")
    eq(expect_ok(srv.ns_stats(ns))["count"], 2, "count")
    # a configured skew
    s2 = h.shared(["--max-future-skew", "10s"], key="skew10")
    expect_error(s2.insert(ns, {"embedding": [1, 0], "timestamp": h.rfc3339_ms(h.now_ms() + 60000)}), 400,
                 "timestamp_in_future", "60 s with a 10 s skew")
    expect_ok(s2.insert(ns, {"embedding": [1, 0], "timestamp": h.rfc3339_ms(h.now_ms() + 2000)}), 201)


@test
def test_timestamp_formats():
    srv = S()
    cases = [
        ("2026-01-31T09:30:00Z", "2026-01-31T09:30:00.000Z"),
        ("2026-01-31T11:30:00+02:00", "2026-01-31T09:30:00.000Z"),
        ("2026-01-31T04:30:00-05:00", "2026-01-31T09:30:00.000Z"),
        ("2026-01-31T09:30:00.5Z", "2026-01-31T09:30:00.500Z"),
        ("2026-01-31T09:30:00.1239Z", "2026-01-31T09:30:00.123Z"),       # truncated, not rounded
        ("2026-01-31T09:30:00.999999+00:00", "2026-01-31T09:30:00.999Z"),
        (1769851801, "2026-01-31T09:30:01.000Z"),
        (1769851801.25, "2026-01-31T09:30:01.250Z"),
        (1769851801.9999, "2026-01-31T09:30:01.999Z"),
        ("2026-02-01T00:15:00+00:30", "2026-01-31T23:45:00.000Z"),
        ("1969-07-20T20:17:40Z", "1969-07-20T20:17:40.000Z"),
        (-1.5, "1969-12-31T23:59:58.500Z"),
        (-1.0005, "1969-12-31T23:59:58.999Z"),              # README: truncated toward the past
        ("1969-12-31T23:59:59.9999Z", "1969-12-31T23:59:59.999Z"),
        ("2000-02-29T12:00:00Z", "2000-02-29T12:00:00.000Z"),
        ("2025-12-31T23:30:00-01:00", "2026-01-01T00:30:00.000Z"),
    ]
    for i, (given, want) in enumerate(cases):
        ns = fresh_ns("tsfmt")
        b = expect_ok(srv.insert(ns, {"id": "t%d" % i, "embedding": [1, i + 1], "timestamp": given}), 201,
                      "timestamp %r" % (given,))
        eq(b["inserted"][0]["timestamp"], want, "timestamp %r echoed" % (given,))
        eq(expect_ok(srv.seg(ns, "t%d" % i))["timestamp"], want, "stored timestamp %r" % (given,))


@test
def test_get_and_delete_segment():
    srv = S()
    ns = fresh_ns("getdel")
    expect_ok(srv.insert(ns, {"id": "x", "embedding": [1, 2, 2]}), 201)
    expect_ok(srv.insert(ns, {"id": "y", "embedding": [2, 1, 2]}), 201)
    g = expect_ok(srv.seg(ns, "x", embedding=True))
    for a, b in zip(g["embedding"], [1 / 3, 2 / 3, 2 / 3]):
        near(a, b, 1e-6, "unit embedding")
    expect_error(srv.seg(ns, "nope"), 404, "not_found")
    eq(expect_ok(srv.delete("/v1/namespaces/%s/segments/x" % ns)), {"deleted": "x"}, "delete")
    expect_error(srv.seg(ns, "x"), 404, "not_found")
    expect_error(srv.delete("/v1/namespaces/%s/segments/x" % ns), 404, "not_found")
    st = expect_ok(srv.ns_stats(ns))
    eq(st["count"], 1, "count after delete")
    res = retrieve_ok(srv, ns, {"embedding": [1, 2, 2], "k": 10})["results"]
    eq([r["id"] for r in res], ["y"], "deleted segment not retrieved")
    # an id with characters that need percent-encoding
    expect_ok(srv.insert(ns, {"id": "a b/c?d", "embedding": [1, 1, 1]}), 201)
    g = expect_ok(srv.get("/v1/namespaces/%s/segments/a%%20b%%2Fc%%3Fd" % ns))
    eq(g["id"], "a b/c?d", "percent-decoded id")


@test
def test_supersedes():
    srv = S()
    ns = fresh_ns("sup")
    t = h.now_ms() - 3 * 86400000
    expect_ok(srv.insert(ns, {"id": "old", "text": "pw alpha", "embedding": [1, 0.1, 0],
                              "timestamp": h.rfc3339_ms(t)}), 201)
    expect_ok(srv.insert(ns, {"id": "other", "embedding": [0, 0, 1], "timestamp": h.rfc3339_ms(t)}), 201)
    first = b = expect_ok(srv.insert(ns, {"id": "new", "text": "pw bravo", "embedding": [1, 0, 0.1],
                                          "timestamp": h.rfc3339_ms(t + 86400000), "supersedes": ["old"]}), 201)
    eq(b["inserted"][0]["seq"], 3, "seq")
    g = expect_ok(srv.seg(ns, "old"))
    eq(g.get("superseded_by"), "new", "superseded_by")
    g = expect_ok(srv.seg(ns, "new"))
    eq(g.get("supersedes"), ["old"], "supersedes stored")
    st = expect_ok(srv.ns_stats(ns))
    eq((st["count"], st["superseded"]), (3, 1), "count includes superseded")
    q = {"embedding": [1, 0, 0], "k": 10}
    ids = [r["id"] for r in retrieve_ok(srv, ns, q)["results"]]
    check("old" not in ids and "new" in ids, "superseded skipped: %s" % ids)
    ids = [r["id"] for r in retrieve_ok(srv, ns, dict(q, include_superseded=True))["results"]]
    check("old" in ids and "new" in ids, "include_superseded: %s" % ids)
    # the graph no longer counts the superseded one
    eq((st["graph_edges"], st["max_degree"]), (0, 0), "graph without the superseded")
    # unknown id: nothing written
    expect_error(srv.insert(ns, {"id": "z", "embedding": [0, 1, 0], "supersedes": ["ghost"]}), 400,
                 "unknown_id")
    expect_error(srv.seg(ns, "z"), 404, "not_found")
    # superseding earlier in the same batch
    b = expect_ok(srv.insert(ns, {"segments": [
        {"id": "p", "embedding": [0, 1, 1]},
        {"id": "q", "embedding": [0, 1, 1.1], "supersedes": ["p", "other"]}]}), 201)
    eq(expect_ok(srv.seg(ns, "p")).get("superseded_by"), "q", "superseded in the same batch")
    eq(expect_ok(srv.seg(ns, "other")).get("superseded_by"), "q", "superseded stored")
    eq(expect_ok(srv.ns_stats(ns))["superseded"], 3, "superseded count")
    # retrying the superseding insert is an idempotent 200, not an error about "old"
    retry = srv.insert(ns, {"id": "new", "text": "pw bravo", "embedding": [1, 0, 0.1],
                            "timestamp": h.rfc3339_ms(t + 86400000), "supersedes": ["old"]})
    eq(retry[0], 200, "retry of a superseding insert: %s" % (retry[2],))
    eq(retry[2], first, "retry answers the stored record")
    eq(expect_ok(srv.ns_stats(ns))["count"], 5, "nothing written by the retry")


# ------------------------------------------------------------------ retrieve: shapes

@test
def test_retrieve_shape_and_default_k():
    srv = S()
    ns = fresh_ns("rshape")
    rng = rng_for("rshape")
    t_end = h.now_ms() - 1000
    rows = make_corpus(srv, ns, rng, 15, 4, t_end - 30 * 86400000, t_end)
    expect_ok(srv.insert(ns, {"id": "meta", "text": "hello there", "embedding": [1, 1, 1, 1], "source": "hermes",
                              "metadata": {"x": [1, 2], "y": "z"}, "timestamp": h.rfc3339_ms(t_end)}), 201)
    body = retrieve_ok(srv, ns, {"embedding": [1, 1, 1, 1]})
    res = body["results"]
    eq(len(res), 10, "default k is 10")
    top = res[0]
    eq(top["id"], "meta", "exact match first")
    near(top["score"], 1.0, 1e-5, "cosine 1 with no decay")
    eq(top.get("text"), "hello there", "text")
    eq(top.get("source"), "hermes", "source")
    eq(top.get("metadata"), {"x": [1, 2], "y": "z"}, "metadata")
    eq(top.get("timestamp"), h.rfc3339_ms(t_end), "timestamp")
    for r in res:
        for f in ("similarity", "decay", "gate", "age_seconds"):
            check(f not in r, "%s only with explain" % f)
        check(h.RFC3339_MS.match(r["timestamp"]), "result timestamp format")
    # the default (half_life 0) reproduces plain cosine
    rows.append({"id": "meta", "seq": 16, "ts": t_end, "vec": h.unit([1, 1, 1, 1])})
    _, allr = h.reference(rows, [1, 1, 1, 1], origin_ms=h.now_ms())
    h.match_results(res, allr, 10, what="default retrieve")
    body = retrieve_ok(srv, ns, {"embedding": [1, 1, 1, 1], "k": 1000})
    eq(len(body["results"]), 16, "fewer results when fewer segments")
    for k in (1, 3, 16):
        eq(len(retrieve_ok(srv, ns, {"embedding": [1, 1, 1, 1], "k": k})["results"]), k, "k=%d" % k)


def _params_to_req(p):
    """Reference keyword params -> request fields."""
    req = {}
    if p.get("half_life_s"):
        req["half_life"] = p["half_life_s"]
    if "decay" in p:
        req["decay"] = {"weibull": {"shape": p["shape"]}} if p["decay"] == "weibull" else p["decay"]
    for f in ("recency_bias", "coherence_weight", "min_score"):
        if f in p:
            req[f] = p[f]
    if "offset_s" in p:
        req["offset"] = p["offset_s"]
    if "origin_ms" in p:
        req["origin"] = h.rfc3339_ms(p["origin_ms"])
    if p.get("since_ms") is not None:
        req["since"] = h.rfc3339_ms(p["since_ms"])
    if p.get("until_ms") is not None:
        req["until"] = h.rfc3339_ms(p["until_ms"])
    if p.get("source") is not None:
        req["source"] = p["source"]
    for f in ("include_superseded", "include_archived"):
        if p.get(f):
            req[f] = True
    return req


def compare(srv, ns, rows, q, params, k, what, graph=None, explain=False):
    req = _params_to_req(params)
    req.update({"embedding": q, "k": k})
    if explain:
        req["explain"] = True
    res = retrieve_ok(srv, ns, req, what)["results"]
    _, allr = h.reference(rows, q, k=k, graph=graph, **params)
    h.match_results(res, allr, k, what=what)
    if explain:
        by = {r["id"]: r for r in allr}
        for r in res:
            ref = by[r["id"]]
            near(r.get("similarity"), ref["sim"], 1e-5, "%s: similarity" % what)
            near(r.get("decay"), ref["decay"], 1e-5, "%s: decay" % what)
            near(r.get("gate"), ref["gate"], 1e-5, "%s: gate" % what)
            near(r.get("age_seconds"), ref["age"], max(1e-3, 1e-7 * ref["age"]), "%s: age_seconds" % what)
    return res


@test
def test_decay_families_randomized():
    srv = S()
    rng = rng_for("families")
    for trial in range(3):
        ns = fresh_ns("fam")
        dim = rng.choice([3, 8, 17])
        n = rng.randint(20, 60)
        t_end = h.now_ms() - 3600 * 1000
        rows = make_corpus(srv, ns, rng, n, dim, t_end - 120 * 86400000, t_end, ties=True)
        graph = h.graph_stats(rows)
        exact_gate = not h.near_threshold(rows)
        origin = t_end + rng.randint(0, 5 * 86400000)
        fams = [("exponential", 1.0), ("linear", 1.0), ("gaussian", 1.0), ("none", 1.0),
                ("weibull", 0.5), ("weibull", 1.0), ("weibull", 1.5), ("weibull", 3.0), ("weibull", 10.0)]
        for fam, shape in fams:
            for hl_days in (0.5, 7, 30, 90):
                q = h.rand_vec(rng, dim)
                p = {"decay": fam, "shape": shape, "half_life_s": hl_days * 86400.0,
                     "origin_ms": origin}
                k = rng.choice([1, 5, 10, n])
                compare(srv, ns, rows, q, p, k, "%s(%g) hl=%gd k=%d trial %d" % (fam, shape, hl_days, k, trial),
                        graph=graph, explain=(hl_days == 7 and exact_gate))


@test
def test_weibull_shape_one_equals_exponential():
    srv = S()
    ns = fresh_ns("weib1")
    rng = rng_for("weib1")
    t_end = h.now_ms() - 1000
    make_corpus(srv, ns, rng, 30, 5, t_end - 50 * 86400000, t_end)
    q = h.rand_vec(rng, 5)
    base = {"embedding": q, "k": 30, "half_life": "10d", "origin": h.rfc3339_ms(t_end)}
    a = retrieve_ok(srv, ns, dict(base, decay="exponential"))["results"]
    b = retrieve_ok(srv, ns, dict(base, decay={"weibull": {"shape": 1}}))["results"]
    eq([r["id"] for r in a], [r["id"] for r in b], "weibull shape 1 == exponential ids")
    for x, y in zip(a, b):
        near(x["score"], y["score"], 1e-6, "weibull shape 1 == exponential score")


@test
def test_half_life_forms():
    srv = S()
    ns = fresh_ns("hlform")
    rng = rng_for("hlform")
    t_end = h.now_ms() - 1000
    rows = make_corpus(srv, ns, rng, 40, 6, t_end - 60 * 86400000, t_end)
    q = h.rand_vec(rng, 6)
    origin = h.rfc3339_ms(t_end)
    forms = [
        (864000, 864000.0), (864000.0, 864000.0), ("10d", 864000.0), ("240h", 864000.0),
        ("14400m", 864000.0), ("864000s", 864000.0), ({"half_life_days": 10}, 864000.0),
        ({"half_life_days": 2.5}, 216000.0), ("2w", 14 * 86400.0), ("36h", 36 * 3600.0),
        ("90d", 90 * 86400.0), (0, 0.0), ("0s", 0.0),
    ]
    for given, secs in forms:
        req = {"embedding": q, "k": 40, "origin": origin, "explain": True}
        if isinstance(given, dict):
            req.update(given)
        else:
            req["half_life"] = given
        res = retrieve_ok(srv, ns, req, "half_life %r" % (given,))["results"]
        _, allr = h.reference(rows, q, k=40, half_life_s=secs, origin_ms=t_end, graph=({}, 0, 0))
        h.match_results(res, allr, 40, what="half_life %r" % (given,))
    expect_error(srv.retrieve(ns, {"embedding": q, "half_life": "10d", "half_life_days": 10}), 400,
                 "invalid_field", "both half_life and half_life_days")


@test
def test_recency_bias():
    srv = S()
    ns = fresh_ns("rbias")
    rng = rng_for("rbias")
    t_end = h.now_ms() - 1000
    rows = make_corpus(srv, ns, rng, 30, 5, t_end - 60 * 86400000, t_end)
    for rb in (0.0, 0.25, 0.5, 1.0):
        q = h.rand_vec(rng, 5)
        compare(srv, ns, rows, q, {"half_life_s": 5 * 86400.0, "recency_bias": rb, "origin_ms": t_end}, 30,
                "recency_bias %g" % rb)
    # recency_bias 0: decay has no effect at all -> plain cosine
    q = h.rand_vec(rng, 5)
    a = retrieve_ok(srv, ns, {"embedding": q, "k": 30, "half_life": "1d", "recency_bias": 0})["results"]
    b = retrieve_ok(srv, ns, {"embedding": q, "k": 30})["results"]
    eq([(r["id"], round(r["score"], 5)) for r in a], [(r["id"], round(r["score"], 5)) for r in b],
       "recency_bias 0 is plain cosine")


@test
def test_origin_two_sided_and_offset():
    srv = S()
    ns = fresh_ns("origin")
    rng = rng_for("origin")
    t_end = h.now_ms() - 1000
    t0 = t_end - 100 * 86400000
    rows = make_corpus(srv, ns, rng, 50, 4, t0, t_end)
    mid = t0 + 50 * 86400000
    for fam in ("exponential", "linear", "gaussian"):
        for off in (0.0, 3 * 86400.0, 200 * 86400.0):
            q = h.rand_vec(rng, 4)
            compare(srv, ns, rows, q, {"decay": fam, "half_life_s": 10 * 86400.0, "origin_ms": mid,
                                       "offset_s": off}, rng.choice([5, 50]),
                    "origin mid %s offset %g" % (fam, off), graph=({}, 0, 0))
    # memories after the origin are kept (only as_of cuts them) and decay by |origin - ts|
    q = [1, 0, 0, 0]
    res = retrieve_ok(srv, ns, {"embedding": q, "k": 50, "origin": h.rfc3339_ms(mid), "half_life": "10d",
                                "explain": True})["results"]
    eq(len(res), 50, "no cut at origin")
    later = [r for r in res if h.parse_ts(r["timestamp"]) > mid]
    check(later, "corpus has memories after the origin")
    for r in later:
        age = (h.parse_ts(r["timestamp"]) - mid) / 1000.0
        near(r["age_seconds"], age, max(1e-3, 1e-7 * age), "two-sided age")
    # offset strings
    for off, secs in (("7d", 7 * 86400.0), ("36h", 36 * 3600.0), (3600, 3600.0), ("0s", 0.0)):
        q = h.rand_vec(rng, 4)
        req = {"embedding": q, "k": 50, "origin": h.rfc3339_ms(mid), "half_life": "10d", "offset": off}
        res = retrieve_ok(srv, ns, req)["results"]
        _, allr = h.reference(rows, q, k=50, half_life_s=864000.0, origin_ms=mid, offset_s=secs,
                              graph=({}, 0, 0))
        h.match_results(res, allr, 50, what="offset %r" % (off,))


@test
def test_default_origin_is_now():
    srv = S()
    ns = fresh_ns("orignow")
    rng = rng_for("orignow")
    t_end = h.now_ms() - 1000
    rows = make_corpus(srv, ns, rng, 20, 4, t_end - 40 * 86400000, t_end)
    q = h.rand_vec(rng, 4)
    res = retrieve_ok(srv, ns, {"embedding": q, "k": 20, "half_life": "30d"})["results"]
    _, allr = h.reference(rows, q, k=20, half_life_s=30 * 86400.0, origin_ms=h.now_ms(), graph=({}, 0, 0))
    h.match_results(res, allr, 20, tol=1e-4, what="origin now")


@test
def test_since_until_inclusive_and_source():
    srv = S()
    ns = fresh_ns("filters")
    rng = rng_for("filters")
    t_end = h.now_ms() - 1000
    rows = make_corpus(srv, ns, rng, 60, 5, t_end - 30 * 86400000, t_end, sources=["hermes", "iris", None])
    tss = sorted(r["ts"] for r in rows)
    for _ in range(6):
        a, b = sorted(rng.sample(tss, 2))
        q = h.rand_vec(rng, 5)
        res = compare(srv, ns, rows, q, {"since_ms": a, "until_ms": b, "origin_ms": t_end,
                                         "half_life_s": 86400.0 * 7}, 60, "since/until", graph=({}, 0, 0))
        got = {r["id"] for r in res}
        for r in rows:
            if r["ts"] in (a, b):
                check(r["id"] in got, "inclusive bounds: %s at a bound missing" % r["id"])
    for src in ("hermes", "iris"):
        q = h.rand_vec(rng, 5)
        res = compare(srv, ns, rows, q, {"source": src, "origin_ms": t_end}, 60, "source %s" % src,
                      graph=({}, 0, 0))
        check(all(r.get("source") == src for r in res), "source filter")
    res = retrieve_ok(srv, ns, {"embedding": [1, 0, 0, 0, 0], "source": "nobody"})["results"]
    eq(res, [], "unknown source matches nothing")
    # since only / until only, also as Unix seconds
    q = h.rand_vec(rng, 5)
    res = retrieve_ok(srv, ns, {"embedding": q, "k": 60, "since": tss[30] / 1000.0})["results"]
    eq(sorted(r["id"] for r in res), sorted(r["id"] for r in rows if r["ts"] >= tss[30]), "since only")
    res = retrieve_ok(srv, ns, {"embedding": q, "k": 60, "until": h.rfc3339_ms(tss[10])})["results"]
    eq(sorted(r["id"] for r in res), sorted(r["id"] for r in rows if r["ts"] <= tss[10]), "until only")


@test
def test_as_of():
    srv = S()
    ns = fresh_ns("asof")
    rng = rng_for("asof")
    t_end = h.now_ms() - 1000
    rows = make_corpus(srv, ns, rng, 40, 4, t_end - 40 * 86400000, t_end)
    T = sorted(r["ts"] for r in rows)[20]
    q = h.rand_vec(rng, 4)
    req = {"embedding": q, "k": 40, "as_of": h.rfc3339_ms(T), "half_life": "5d", "explain": True}
    res = retrieve_ok(srv, ns, req)["results"]
    _, allr = h.reference(rows, q, k=40, half_life_s=5 * 86400.0, origin_ms=T, until_ms=T, graph=({}, 0, 0))
    h.match_results(res, allr, 40, what="as_of")
    check(all(h.parse_ts(r["timestamp"]) <= T for r in res), "as_of excludes later memories")
    # an explicit until overrides the as_of cut; an explicit origin overrides the decay origin
    req2 = {"embedding": q, "k": 40, "as_of": h.rfc3339_ms(T), "until": h.rfc3339_ms(t_end), "half_life": "5d"}
    res = retrieve_ok(srv, ns, req2)["results"]
    _, allr = h.reference(rows, q, k=40, half_life_s=5 * 86400.0, origin_ms=T, until_ms=t_end, graph=({}, 0, 0))
    h.match_results(res, allr, 40, what="as_of + until")
    req3 = {"embedding": q, "k": 40, "as_of": h.rfc3339_ms(T), "origin": h.rfc3339_ms(t_end), "half_life": "5d"}
    res = retrieve_ok(srv, ns, req3)["results"]
    _, allr = h.reference(rows, q, k=40, half_life_s=5 * 86400.0, origin_ms=t_end, until_ms=T, graph=({}, 0, 0))
    h.match_results(res, allr, 40, what="as_of + origin")


@test
def test_min_score_and_negative_similarities():
    srv = S()
    ns = fresh_ns("minscore")
    rng = rng_for("minscore")
    t_end = h.now_ms() - 1000
    rows = make_corpus(srv, ns, rng, 40, 3, t_end - 10 * 86400000, t_end)
    q = h.rand_vec(rng, 3)
    # every segment matches: negatives are returned, ranked below every positive
    res = compare(srv, ns, rows, q, {"origin_ms": t_end, "half_life_s": 86400.0 * 3}, 40, "all, negatives",
                  graph=({}, 0, 0))
    scores = [r["score"] for r in res]
    check(any(s < 0 for s in scores) and any(s > 0 for s in scores), "corpus has both signs")
    first_neg = next(i for i, s in enumerate(scores) if s < 0)
    check(all(s < 0 for s in scores[first_neg:]), "negatives after every positive")
    for ms in (0.0, 0.2, 0.5, -0.3):
        compare(srv, ns, rows, q, {"origin_ms": t_end, "half_life_s": 86400.0 * 3, "min_score": ms}, 40,
                "min_score %g" % ms, graph=({}, 0, 0))
    # min_score keeps score >= min_score: an exact score is kept
    expect_ok(srv.insert(ns, {"id": "exact", "embedding": [0, 0, 1], "timestamp": h.rfc3339_ms(t_end)}), 201)
    res = retrieve_ok(srv, ns, {"embedding": [0, 0, 1], "min_score": 1.0})["results"]
    check(any(r["id"] == "exact" for r in res), "score == min_score kept: %s" % res)
    # the opposite direction: a negative score under plain cosine
    res = retrieve_ok(srv, ns, {"embedding": [0, 0, -1], "k": 1000})["results"]
    eq(res[-1]["id"], "exact", "the opposite vector ranks last")
    near(res[-1]["score"], -1.0, 1e-5, "score -1")


@test
def test_tie_order_newer_seq_first():
    srv = S()
    ns = fresh_ns("ties")
    t = h.now_ms() - 86400000
    segs = [{"id": "t%d" % i, "embedding": [1, 2, 3], "timestamp": h.rfc3339_ms(t)} for i in range(6)]
    segs.append({"id": "lower", "embedding": [1, 2, 2.5], "timestamp": h.rfc3339_ms(t)})
    expect_ok(srv.insert(ns, {"segments": segs}), 201)
    res = retrieve_ok(srv, ns, {"embedding": [1, 2, 3], "k": 7, "half_life": "1d"})["results"]
    eq([r["id"] for r in res], ["t5", "t4", "t3", "t2", "t1", "t0", "lower"], "ties by seq descending")
    eq([r["seq"] for r in res[:6]], [6, 5, 4, 3, 2, 1], "seqs")
    res = retrieve_ok(srv, ns, {"embedding": [1, 2, 3], "k": 2})["results"]
    eq([r["id"] for r in res], ["t5", "t4"], "top-2 of a tie keeps the newest")


@test
def test_explain_fields():
    srv = S()
    ns = fresh_ns("explain")
    t = h.now_ms() - 10 * 86400000
    expect_ok(srv.insert(ns, {"segments": [
        {"id": "a", "embedding": [1, 0, 0], "timestamp": h.rfc3339_ms(t)},
        {"id": "b", "embedding": [1, 0.2, 0], "timestamp": h.rfc3339_ms(t + 86400000)},
        {"id": "c", "embedding": [0, 0, 1], "timestamp": h.rfc3339_ms(t + 2 * 86400000)}]}), 201)
    origin = t + 4 * 86400000
    res = retrieve_ok(srv, ns, {"embedding": [1, 0, 0], "half_life": "2d", "origin": h.rfc3339_ms(origin),
                                "offset": "1d", "explain": True, "coherence_weight": 0.5})["results"]
    by = {r["id"]: r for r in res}
    eq(sorted(by), ["a", "b", "c"], "all returned")
    ra = by["a"]
    near(ra["similarity"], 1.0, 1e-6, "similarity")
    near(ra["age_seconds"], 4 * 86400.0, 1e-3, "age_seconds before the offset")
    near(ra["decay"], 0.5 ** 1.5, 1e-6, "decay uses the age after the offset")
    near(ra["gate"], 1.0, 1e-6, "gate of a and b (one edge each)")
    near(ra["score"], 1.0 * (0.5 * 0.5 ** 1.5 + 0.5 * 1.0), 1e-5, "score")
    near(by["c"]["gate"], 0.0, 1e-9, "isolated gate")
    near(by["c"]["similarity"], 0.0, 1e-6, "orthogonal similarity")


@test
def test_coherence_weight_randomized():
    srv = S()
    rng = rng_for("coherence")
    for trial in range(3):
        ns = fresh_ns("coh")
        dim = 4
        t_end = h.now_ms() - 1000
        for _ in range(5):
            # clustered vectors so that the graph has structure
            centers = [h.rand_vec(rng, dim) for _ in range(3)]
            raws = []
            for i in range(35):
                c = rng.choice(centers)
                raws.append([x + rng.gauss(0, 0.6) for x in c])
            rows = [{"id": "c%d" % i, "vec": h.unit(v)} for i, v in enumerate(raws)]
            if not h.near_threshold(rows):
                break
        tss = sorted(rng.randint(t_end - 20 * 86400000, t_end) for _ in raws)
        segs = [{"id": "c%d" % i, "embedding": v, "timestamp": h.rfc3339_ms(tss[i])} for i, v in enumerate(raws)]
        b = expect_ok(srv.insert(ns, {"segments": segs}), 201)
        for r, ins, ts in zip(rows, b["inserted"], tss):
            r["seq"], r["ts"] = ins["seq"], ts
        deg, edges, maxd = h.graph_stats(rows)
        st = expect_ok(srv.ns_stats(ns))
        eq((st["graph_edges"], st["max_degree"]), (edges, maxd), "graph stats trial %d" % trial)
        check(edges > 0, "clustered corpus has edges")
        for w in (0.0, 0.3, 1.0):
            q = h.rand_vec(rng, dim)
            compare(srv, ns, rows, q, {"coherence_weight": w, "half_life_s": 7 * 86400.0, "origin_ms": t_end},
                    35, "coherence_weight %g trial %d" % (w, trial), explain=True)
        # supersede and delete change the graph incrementally
        expect_ok(srv.insert(ns, {"id": "sup", "embedding": raws[0], "timestamp": h.rfc3339_ms(t_end),
                                  "supersedes": ["c1", "c2"]}), 201)
        rows[1]["superseded"] = rows[2]["superseded"] = True
        rows.append({"id": "sup", "seq": 36, "ts": t_end, "vec": h.unit(raws[0])})
        expect_ok(srv.delete("/v1/namespaces/%s/segments/c3" % ns))
        rows = [r for r in rows if r["id"] != "c3"]
        deg, edges, maxd = h.graph_stats(rows)
        st = expect_ok(srv.ns_stats(ns))
        eq((st["graph_edges"], st["max_degree"]), (edges, maxd), "graph after supersede+delete %d" % trial)
        q = h.rand_vec(rng, dim)
        compare(srv, ns, rows, q, {"coherence_weight": 0.4, "half_life_s": 7 * 86400.0, "origin_ms": t_end,
                                   "include_superseded": True}, 36, "coherence with superseded", explain=True)


@test
def test_larger_corpus_pruning_is_exact():
    srv = S()
    ns = fresh_ns("big")
    rng = rng_for("big")
    t_end = h.now_ms() - 1000
    rows = make_corpus(srv, ns, rng, 1500, 16, t_end - 365 * 86400000, t_end, batch=500,
                       ts_as_number=True)
    none = ({}, 0, 0)
    for fam, hl in (("exponential", 3.0), ("gaussian", 10.0), ("linear", 1.0), ("exponential", 60.0)):
        for origin in (t_end, t_end - 200 * 86400000):
            q = h.rand_vec(rng, 16)
            req = {"embedding": q, "k": 10, "decay": fam, "half_life": "%gd" % hl, "origin": h.rfc3339_ms(origin)}
            body = retrieve_ok(srv, ns, req)
            _, allr = h.reference(rows, q, k=10, decay=fam, half_life_s=hl * 86400.0, origin_ms=origin, graph=none)
            h.match_results(body["results"], allr, 10, what="big %s %gd" % (fam, hl))
            check(body["scanned"] <= 1500, "scanned <= count")


@test
def test_ties_across_blocks_never_dropped():
    """Equal scores across time blocks: the newer seq wins even when pruning is on."""
    srv = S()
    ns = fresh_ns("tieblocks")
    n = 4000
    t_mid = h.now_ms() - 100 * 86400000
    # timestamps symmetric around t_mid: pairs (t_mid - x, t_mid + x) decay the same from origin t_mid
    offs = sorted(set(range(0, 2 * n, 2)))[:n // 2]
    tss = sorted([t_mid - o * 1000 for o in offs] + [t_mid + o * 1000 for o in offs])
    segs = [{"id": "z%d" % i, "embedding": [1, 0, 0], "timestamp": tss[i] / 1000.0} for i in range(n)]
    for i in range(0, n, 1000):
        expect_ok(srv.insert(ns, {"segments": segs[i:i + 1000]}), 201)
    rows = [{"id": s["id"], "seq": i + 1, "ts": tss[i], "vec": h.unit([1, 0, 0])} for i, s in enumerate(segs)]
    for fam in ("exponential", "gaussian", "linear"):
        for k in (1, 7, 50):
            req = {"embedding": [1, 0, 0], "k": k, "origin": h.rfc3339_ms(t_mid), "half_life": "1h", "decay": fam}
            res = retrieve_ok(srv, ns, req)["results"]
            top, allr = h.reference(rows, [1, 0, 0], k=k, decay=fam, half_life_s=3600.0, origin_ms=t_mid,
                                    graph=({}, 0, 0))
            eq([r["id"] for r in res], [r["id"] for r in top], "%s k=%d: ties by newer seq" % (fam, k))
    # every score equal (no decay): the k newest seqs, whatever the block order
    res = retrieve_ok(srv, ns, {"embedding": [1, 0, 0], "k": 5, "origin": h.rfc3339_ms(t_mid)})["results"]
    eq([r["seq"] for r in res], [n, n - 1, n - 2, n - 3, n - 4], "all ties: newest seqs")
    res = retrieve_ok(srv, ns, {"embedding": [1, 0, 0], "k": 5, "half_life": "1d", "decay": "none"})["results"]
    eq([r["seq"] for r in res], [n, n - 1, n - 2, n - 3, n - 4], "decay none: newest seqs")


@test
def test_pruning_exact_on_near_ties_and_negative_scores():
    """Thousands of near-duplicates of the query (similarities 1e-4 apart): quantised
    pre-filters and block bounds must still return the exact top K. With the opposite
    query every score is negative, decay makes old memories rank first, and nothing may
    be pruned."""
    srv = S()
    ns = fresh_ns("neartie")
    rng = rng_for("neartie")
    dim, n = 32, 3000
    q = h.unit(h.rand_vec(rng, dim))
    t_end = h.now_ms() - 1000
    tss = sorted(rng.randint(t_end - 200 * 86400000, t_end) for _ in range(n))
    rows, segs = [], []
    for i in range(n):
        raw = [x + rng.gauss(0, 0.03) for x in q]
        segs.append({"id": "n%d" % i, "embedding": raw, "timestamp": h.rfc3339_ms(tss[i])})
        rows.append({"id": "n%d" % i, "seq": i + 1, "ts": tss[i], "vec": h.unit(raw)})
    for i in range(0, n, 1000):
        expect_ok(srv.insert(ns, {"segments": segs[i:i + 1000]}), 201)
    none = ({}, 0, 0)
    for sign in (1, -1):
        qq = [sign * x for x in q]
        for params in ({}, {"half_life_s": 30 * 86400.0}, {"half_life_s": 2 * 86400.0, "decay": "gaussian"},
                       {"half_life_s": 400 * 86400.0, "recency_bias": 0.3},
                       {"half_life_s": 10 * 86400.0, "origin_ms": t_end - 100 * 86400000}):
            p = dict(params)
            p.setdefault("origin_ms", t_end)
            for k in (1, 10, 100):
                req = _params_to_req(p)
                req.update({"embedding": qq, "k": k})
                res = retrieve_ok(srv, ns, req)["results"]
                _, allr = h.reference(rows, qq, k=k, graph=none, **p)
                h.match_results(res, allr, k, what="near ties sign %d %s k=%d" % (sign, params, k))


@test
def test_large_corpus_coherence_exact():
    """Gate bounds in the pruned scan: a clustered corpus with a wide range of degrees,
    coherence weight and decay together, compared with the reference."""
    srv = S()
    ns = fresh_ns("bigcoh")
    rng = rng_for("bigcoh")
    dim, n = 6, 1500
    centers = [h.rand_vec(rng, dim) for _ in range(6)]
    spreads = [0.2, 0.4, 0.7, 1.0, 1.5, 3.0]
    t_end = h.now_ms() - 1000
    tss = sorted(rng.randint(t_end - 90 * 86400000, t_end) for _ in range(n))
    rows, segs = [], []
    for i in range(n):
        c = rng.randrange(6)
        raw = [x + rng.gauss(0, spreads[c]) for x in centers[c]]
        segs.append({"id": "c%d" % i, "embedding": raw, "timestamp": h.rfc3339_ms(tss[i])})
        rows.append({"id": "c%d" % i, "seq": i + 1, "ts": tss[i], "vec": h.unit(raw)})
    for i in range(0, n, 500):
        expect_ok(srv.insert(ns, {"segments": segs[i:i + 500]}), 201)
    graph = h.graph_stats(rows)
    st = expect_ok(srv.ns_stats(ns))
    eq((st["graph_edges"], st["max_degree"]), graph[1:], "graph of the large corpus")
    for w in (0.3, 0.7, 1.0):
        for params in ({"half_life_s": 7 * 86400.0}, {"half_life_s": 60 * 86400.0, "decay": "linear"}, {}):
            q = h.rand_vec(rng, dim)
            p = dict(params, coherence_weight=w, origin_ms=t_end)
            for k in (10, 50):
                req = _params_to_req(p)
                req.update({"embedding": q, "k": k})
                res = retrieve_ok(srv, ns, req)["results"]
                _, allr = h.reference(rows, q, k=k, graph=graph, **p)
                h.match_results(res, allr, k, what="coherence %g %s k=%d" % (w, params, k))


# ------------------------------------------------------------------ built-in embedder

@test
def test_text_only_insert_and_query():
    srv = S()
    ns = fresh_ns("text")
    docs = ["the wifi password is hunter2", "the staging database runs on host db-3",
            "alice prefers tea over coffee", "the quarterly report is due on friday"]
    for i, d in enumerate(docs):
        expect_ok(srv.insert(ns, {"id": "d%d" % i, "text": d}), 201)
    st = expect_ok(srv.ns_stats(ns))
    eq(st["dim"], 256, "text-only namespace takes MNEMOD_EMBED_DIM (256)")
    g = expect_ok(srv.seg(ns, "d0", embedding=True))
    eq(len(g["embedding"]), 256, "embedding length")
    near(math.sqrt(sum(x * x for x in g["embedding"])), 1.0, 1e-5, "unit norm")
    for i, d in enumerate(docs):
        res = retrieve_ok(srv, ns, {"query": d, "k": 4, "match": "vector"})["results"]
        eq(res[0]["id"], "d%d" % i, "a text is its own nearest neighbour")
        near(res[0]["score"], 1.0, 1e-5, "identical text scores 1")
        # the default for built-in vectors is hybrid: the same text still ranks first
        out = retrieve_ok(srv, ns, {"query": d, "k": 4})
        eq(out["match"], "hybrid", "default match of a text query (built-in vectors)")
        eq(out["results"][0]["id"], "d%d" % i, "hybrid: a text is its own best match")
    res = retrieve_ok(srv, ns, {"query": "what is the wifi password", "k": 1})["results"]
    eq(res[0]["id"], "d0", "lexical query")
    # deterministic: the same text embeds the same way in another namespace
    ns2 = fresh_ns("text")
    expect_ok(srv.insert(ns2, {"id": "x", "text": docs[0]}), 201)
    g2 = expect_ok(srv.seg(ns2, "x", embedding=True))
    eq(g2["embedding"], g["embedding"], "deterministic embedder")
    # text with an explicit embedding keeps the embedding
    ns3 = fresh_ns("text")
    expect_ok(srv.insert(ns3, {"id": "y", "text": docs[0], "embedding": [1, 0, 0]}), 201)
    eq(expect_ok(srv.ns_stats(ns3))["dim"], 3, "explicit embedding wins")


@test
def test_text_dimension_mismatch():
    srv = S()
    ns = fresh_ns("tdim")
    expect_ok(srv.put("/v1/namespaces/" + ns, {"dim": 8}), 201)
    expect_error(srv.insert(ns, {"text": "no vector here"}), 400, "dimension_mismatch")
    expect_ok(srv.insert(ns, {"embedding": [1] * 8}), 201)
    # vectors that cannot be made from text: a text query matches by text, vectors are refused
    out = expect_ok(srv.retrieve(ns, {"query": "anything"}))
    eq(out["match"], "text", "a text query on client vectors of another dimension")
    eq(out["results"], [], "no text stored: nothing matches")
    for m in ("vector", "hybrid"):
        expect_error(srv.retrieve(ns, {"query": "anything", "match": m}), 400,
                     "dimension_mismatch")
    eq(expect_ok(srv.ns_stats(ns))["count"], 1, "count")
    s2 = h.shared(["--embed-dim", "16"], key="dim16")
    ns2 = fresh_ns("tdim")
    expect_ok(s2.insert(ns2, {"text": "configured embedder dimension"}), 201)
    eq(expect_ok(s2.ns_stats(ns2))["dim"], 16, "--embed-dim")


@test
def test_missing_namespace_404():
    srv = S()
    ns = fresh_ns("ghost")
    expect_error(srv.retrieve(ns, {"embedding": [1, 0]}), 404, "not_found", "retrieve")
    expect_error(srv.ns_stats(ns), 404, "not_found", "stats")
    expect_error(srv.seg(ns, "x"), 404, "not_found", "get segment")
    expect_error(srv.delete("/v1/namespaces/%s/segments/x" % ns), 404, "not_found", "delete segment")
    expect_error(srv.delete("/v1/namespaces/" + ns), 404, "not_found", "drop")
    expect_error(srv.compact(ns, {"target": 1}), 404, "not_found", "compact")
    expect_error(srv.retrieve(ns, {"query": "x"}), 404, "not_found", "retrieve by text")
    lst = expect_ok(srv.get("/v1/namespaces"))
    check(all(x["name"] != ns for x in lst["namespaces"]), "a 404 does not create the namespace")


@test
def test_content_type_variants_accepted():
    srv = S()
    ns = fresh_ns("ctype")
    expect_ok(srv.insert(ns, {"embedding": [1, 0]}, headers={"Content-Type": "application/json; charset=utf-8"}),
              201, "json with charset")
    expect_ok(srv.insert(ns, {"embedding": [1, 1]}, headers={"Content-Type": "Application/JSON"}),
              201, "media type in any letter case")
    # a body without a Content-Type is refused (a page's form or fetch cannot plant memories)
    expect_error(srv.insert(ns, {"embedding": [1, 2]}, headers={"Content-Type": None}), 415,
                 "unsupported_media_type", "no content type")
    eq(expect_ok(srv.ns_stats(ns))["count"], 2, "count")


# ------------------------------------------------------------------ limits and isolation

@test
def test_accepted_limits():
    """The largest legal values are accepted (the rejections are in test_bad_input)."""
    srv = S()
    ns = fresh_ns("limits")
    big = fresh_ns("dim4096")
    expect_ok(srv.insert(big, {"id": "x", "embedding": [0.5] * 4096}), 201, "dim 4096")
    eq(expect_ok(srv.ns_stats(big))["dim"], 4096, "dim 4096 stored")
    sid = "i" * 128
    expect_ok(srv.insert(ns, {"id": sid, "embedding": [1, 0]}), 201, "id of 128 bytes")
    eq(expect_ok(srv.seg(ns, sid))["id"], sid, "128-byte id")
    sid2 = "\u00e9" * 64          # 128 bytes of UTF-8
    expect_ok(srv.insert(ns, {"id": sid2, "embedding": [1, 1]}), 201, "id of 128 UTF-8 bytes")
    text = "abcdefgh" * (1024 * 128)   # exactly 1 MiB
    expect_ok(srv.insert(ns, {"id": "t", "text": text, "embedding": [0, 1]}), 201, "text of exactly 1 MiB")
    eq(len(expect_ok(srv.seg(ns, "t"))["text"]), 1024 * 1024, "1 MiB text stored")
    utf = "\u00e9\u4e2d\U0001F600 \"quoted\" \\ \n\t"
    expect_ok(srv.insert(ns, {"id": "u", "text": utf, "embedding": [1, 2], "source": utf,
                              "metadata": {utf: [utf, 1e-300, -0.0, 12345678901234]}}), 201, "unicode")
    g = expect_ok(srv.seg(ns, "u"))
    eq((g["text"], g["source"]), (utf, utf), "unicode text and source round-trip")
    eq(list(g["metadata"].keys()), [utf], "unicode metadata key")
    eq(g["metadata"][utf][0], utf, "unicode metadata value")
    eq(g["metadata"][utf][3], 12345678901234, "large integer in metadata")
    batch = [{"embedding": [1, i + 1]} for i in range(1000)]
    b = expect_ok(srv.insert(ns, {"segments": batch}), 201, "a batch of 1000")
    eq(len(b["inserted"]), 1000, "1000 inserted")
    res = retrieve_ok(srv, ns, {"embedding": [1, 0], "k": 1000})["results"]
    eq(len(res), 1000, "k = 1000")
    for extra in ({"recency_bias": 0}, {"recency_bias": 1}, {"coherence_weight": 0}, {"coherence_weight": 1},
                  {"decay": {"weibull": {"shape": 10}}, "half_life": 60}, {"decay": "none", "half_life": "1d"},
                  {"min_score": -1}, {"offset": 0}, {"half_life_days": 0.5},
                  {"decay": "weibull:1.5", "half_life": "1500ms"}):          # README: both accepted
        req = {"embedding": [1, 0], "k": 3}
        req.update(extra)
        retrieve_ok(srv, ns, req, "legal %s" % extra)


@test
def test_namespace_isolation():
    """Two namespaces holding identical vectors never see each other's segments or graph."""
    srv = S()
    a, b = fresh_ns("iso"), fresh_ns("iso")
    t = h.now_ms() - 86400000
    segs = [{"id": "s%d" % i, "embedding": [1, i * 0.1, 0], "timestamp": h.rfc3339_ms(t + i)} for i in range(5)]
    expect_ok(srv.insert(a, {"segments": segs}), 201)
    expect_ok(srv.insert(b, {"segments": segs[:2]}), 201)
    expect_ok(srv.insert(b, {"id": "only-b", "embedding": [0, 0, 1], "timestamp": h.rfc3339_ms(t + 10)}), 201)
    ra = retrieve_ok(srv, a, {"embedding": [1, 0, 0], "k": 100})["results"]
    rb = retrieve_ok(srv, b, {"embedding": [1, 0, 0], "k": 100})["results"]
    eq(sorted(r["id"] for r in ra), ["s0", "s1", "s2", "s3", "s4"], "namespace a")
    eq(sorted(r["id"] for r in rb), ["only-b", "s0", "s1"], "namespace b")
    eq([r["seq"] for r in sorted(rb, key=lambda r: r["seq"])], [1, 2, 3], "own seq")
    sa, sb = expect_ok(srv.ns_stats(a)), expect_ok(srv.ns_stats(b))
    eq((sa["graph_edges"], sa["max_degree"]), (10, 4), "graph of a")
    eq((sb["graph_edges"], sb["max_degree"]), (1, 1), "graph of b")
    expect_error(srv.seg(b, "s4"), 404, "not_found", "a's segment from b")
    expect_ok(srv.delete("/v1/namespaces/%s/segments/s0" % b))
    expect_ok(srv.seg(a, "s0"), 200, "deleting in b leaves a alone")
    # supersedes cannot reach across namespaces
    expect_error(srv.insert(b, {"id": "x", "embedding": [1, 0, 0], "supersedes": ["s3"]}), 400, "unknown_id")
    # clocks are per namespace
    expect_ok(srv.insert(b, {"embedding": [1, 0, 0], "timestamp": h.rfc3339_ms(t + 20)}), 201)
    expect_ok(srv.insert(a, {"embedding": [1, 0, 0], "timestamp": h.rfc3339_ms(t + 5)}), 201,
              "a's clock is not moved by b")
    expect_ok(srv.delete("/v1/namespaces/" + a))
    eq(expect_ok(srv.ns_stats(b))["count"], 3, "dropping a leaves b")


@test
def test_405_carries_allow():
    """RFC 9110: a 405 response MUST list the allowed methods in Allow."""
    srv = S()
    ns = fresh_ns("allow")
    expect_ok(srv.insert(ns, {"id": "a", "embedding": [1, 0]}), 201)
    for method, path, must in (("PATCH", "/v1/namespaces/" + ns, {"GET", "PUT", "DELETE"}),
                               ("GET", "/v1/namespaces/%s/retrieve" % ns, {"POST"}),
                               ("PUT", "/v1/namespaces/%s/segments/a" % ns, {"GET", "DELETE"}),
                               ("POST", "/healthz", {"GET"})):
        r = srv.call(method, path, {} if method in ("PATCH", "PUT", "POST") else None)
        expect_error(r, 405, "method_not_allowed", "%s %s" % (method, path))
        allow = {m.strip().upper() for m in r[1].get("allow", "").split(",") if m.strip()}
        check(must <= allow, "%s %s: Allow %r lacks %s" % (method, path, r[1].get("allow"), must - allow))


# ------------------------------------------------------------------ the README scenario

@test
def test_memu_password_scenario():
    """Three memories a few days apart: the wifi password set, rotated, rotated again.
    Plain cosine picks the best wording; a half-life makes the newest answer win."""
    srv = S()
    ns = fresh_ns("memu")
    day = 86400000
    now = h.now_ms()
    c = lambda cs: [cs, math.sqrt(1 - cs * cs), 0, 0]
    mems = [("pw-1", "the wifi password is alpha1", c(0.95), now - 9 * day),
            ("pw-2", "wifi password rotated to bravo2", [0.85, 0, math.sqrt(1 - 0.85 ** 2), 0], now - 5 * day),
            ("pw-3", "new wifi password: charlie3", [0.80, 0, 0, 0.6], now - 1 * day)]
    for sid, text, emb, ts in mems:
        expect_ok(srv.insert(ns, {"id": sid, "text": text, "embedding": emb, "timestamp": h.rfc3339_ms(ts)}), 201)
    q = {"embedding": [1, 0, 0, 0], "k": 3, "origin": h.rfc3339_ms(now)}
    top = lambda req: retrieve_ok(srv, ns, req)["results"]
    r = top(q)
    eq([x["id"] for x in r], ["pw-1", "pw-2", "pw-3"], "plain cosine (no half-life)")
    near(r[0]["score"], 0.95, 1e-5, "cosine")
    r = top(dict(q, half_life="2d"))
    eq(r[0]["id"], "pw-3", "half_life 2d: the newest password wins")
    near(r[0]["score"], 0.8 * 0.5 ** 0.5, 1e-5, "score of pw-3")
    near(r[2]["score"], 0.95 * 0.5 ** 4.5, 1e-5, "score of pw-1")
    r = top(dict(q, half_life_days=90))
    eq(r[0]["id"], "pw-1", "half_life 90 days: the best wording still wins")
    r = top(dict(q, half_life="2d", as_of=h.rfc3339_ms(now - 6 * day)))
    eq([x["id"] for x in r], ["pw-1"], "as_of 6 days ago only knew the first password")
    # supersession instead of decay
    expect_ok(srv.insert(ns, {"id": "pw-4", "text": "wifi password is delta4", "embedding": c(0.7),
                              "timestamp": h.rfc3339_ms(now - 1000), "supersedes": ["pw-1", "pw-2", "pw-3"]}), 201)
    r = top(q)
    eq([x["id"] for x in r], ["pw-4"], "superseded memories are skipped")


if __name__ == "__main__":
    h.main()
