"""test_apisurf.py - listing, patch, metadata filters, export and import (docs/api.md).

Every answer also goes through the harness's check against api/openapi.json.
"""

import json
import os
import random
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

SEED = int(os.environ.get("MEM_TEST_SEED", "20260906"))
DIM = 8
_n = [0]


def fresh_ns(srv, dim=DIM):
    _n[0] += 1
    ns = "as%d" % _n[0]
    h.expect_ok(srv.put("/v1/namespaces/%s" % ns, {"dim": dim}), 201)
    return ns


def fill(srv, ns, n, rng, t0_ms=1767225600000, step_ms=60000, batch=200, extra=None):
    """Insert n segments s0..s{n-1} with increasing timestamps; returns their local copies."""
    segs = []
    for start in range(0, n, batch):
        body = []
        for i in range(start, min(n, start + batch)):
            v = h.rand_vec(rng, DIM)
            s = {"id": "s%d" % i, "embedding": v, "timestamp": (t0_ms + i * step_ms) / 1000.0,
                 "source": "src%d" % (i % 3), "text": "text %d" % i}
            if extra:
                s.update(extra(i))
            body.append(s)
        h.expect_ok(srv.insert(ns, {"segments": body}), 201)
        segs.extend(body)
    return segs


def list_page(srv, ns, **params):
    q = urllib.parse.urlencode(params)
    return srv.get("/v1/namespaces/%s/segments%s" % (ns, "?" + q if q else ""))


def list_all(srv, ns, limit=7, **params):
    ids, after, pages = [], None, 0
    while True:
        p = dict(params, limit=limit)
        if after:
            p["after"] = after
        body = h.expect_ok(list_page(srv, ns, **p), 200, "list page")
        h.check(len(body["segments"]) <= limit, "page larger than limit")
        ids.extend(s["id"] for s in body["segments"])
        pages += 1
        after = body["next"]
        if after is None:
            return ids, pages
        h.check(body["segments"], "a page with a next cursor is not empty")


# ---------------------------------------------------------------- listing

@h.test
def test_list_pages_in_seq_order():
    srv = h.shared()
    rng = random.Random(SEED)
    ns = fresh_ns(srv)
    segs = fill(srv, ns, 53, rng)
    body = h.expect_ok(list_page(srv, ns), 200)
    h.eq([s["id"] for s in body["segments"]], [s["id"] for s in segs], "default page (100)")
    h.eq(body["next"], None, "next after the last page")
    first = body["segments"][0]
    h.eq(first["seq"], 1, "seq of the first")
    h.check("embedding" not in first, "no vector unless asked")
    h.eq(first["source"], "src0", "source")
    h.eq(first["text"], "text 0", "text")
    ids, pages = list_all(srv, ns, limit=10)
    h.eq(ids, [s["id"] for s in segs], "all pages")
    h.eq(pages, 6, "pages of 10 for 53")
    ids, pages = list_all(srv, ns, limit=53)
    h.eq(pages, 1, "exactly one page when limit == count")
    body = h.expect_ok(list_page(srv, ns, limit=1, embedding="true"), 200)
    h.eq(len(body["segments"]), 1, "limit 1")
    emb = body["segments"][0]["embedding"]
    want = h.unit(segs[0]["embedding"])
    for a, b in zip(emb, want):
        h.near(a, b, 1e-6, "stored unit vector")
    seqs = [s["seq"] for s in h.expect_ok(list_page(srv, ns, limit=1000), 200)["segments"]]
    h.eq(seqs, sorted(seqs), "seq order")


@h.test
def test_list_filters():
    srv = h.shared()
    rng = random.Random(SEED + 1)
    ns = fresh_ns(srv)
    t0 = 1767225600000
    segs = fill(srv, ns, 30, rng, t0_ms=t0)
    # s29 supersedes s3; compact archives some
    h.expect_ok(srv.insert(ns, {"id": "new", "embedding": h.rand_vec(rng, DIM),
                                "timestamp": (t0 + 40 * 60000) / 1000.0, "supersedes": ["s3"]}), 201)
    arch = h.expect_ok(srv.compact(ns, {"target": 25, "policy": "structural_time"}), 200)["evicted"]
    h.check(arch, "compaction archived something")
    all_ids = [s["id"] for s in segs] + ["new"]
    ids, _ = list_all(srv, ns)
    h.eq(ids, [i for i in all_ids if i != "s3" and i not in arch], "defaults skip superseded and archived")
    ids, _ = list_all(srv, ns, include_superseded="true", include_archived="true")
    h.eq(ids, all_ids, "everything")
    ids, _ = list_all(srv, ns, include_superseded="true", include_archived="1")
    h.eq(ids, all_ids, "1 is true")
    ids, _ = list_all(srv, ns, include_archived="true")
    h.eq(ids, [i for i in all_ids if i != "s3"], "archived included")
    ids, _ = list_all(srv, ns, source="src1", include_superseded="true", include_archived="true")
    h.eq(ids, [s["id"] for s in segs if s["source"] == "src1"], "source")
    since = h.rfc3339_ms(t0 + 10 * 60000)
    until = h.rfc3339_ms(t0 + 20 * 60000)
    ids, _ = list_all(srv, ns, since=since, until=until, include_superseded="true",
                      include_archived="true")
    h.eq(ids, ["s%d" % i for i in range(10, 21)], "since/until inclusive (RFC 3339)")
    ids, _ = list_all(srv, ns, since="%.3f" % ((t0 + 25 * 60000) / 1000.0), include_archived="true",
                      include_superseded="true")
    h.eq(ids, ["s%d" % i for i in range(25, 30)] + ["new"], "since in Unix seconds")
    ids, _ = list_all(srv, ns, since="2026-01-01T00:10:00+00:00", until="2026-01-01T00:12:00Z",
                      include_archived="true", include_superseded="true")
    h.eq(ids, ["s10", "s11", "s12"], "offset with a literal +")
    ids, _ = list_all(srv, ns, source="nobody")
    h.eq(ids, [], "unknown source")


@h.test
def test_list_cursor_survives_concurrent_writes():
    srv = h.shared()
    rng = random.Random(SEED + 2)
    ns = fresh_ns(srv)
    t0 = 1767225600000
    fill(srv, ns, 120, rng, t0_ms=t0, step_ms=1000)
    stop = threading.Event()
    added, deleted, errors = [], [], []

    def writer():
        i, wr = 0, random.Random(SEED + 3)
        while not stop.is_set() and i < 400:
            try:
                sid = "w%d" % i
                st, _, b = srv.insert(ns, {"id": sid, "embedding": h.rand_vec(wr, DIM)})
                if st == 201:
                    added.append(sid)
                victim = "s%d" % wr.randrange(120)
                st, _, b = srv.delete("/v1/namespaces/%s/segments/%s" % (ns, victim))
                if st == 200:
                    deleted.append(victim)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))
                return
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    seen, after = [], None
    try:
        while True:
            p = {"limit": 9}
            if after:
                p["after"] = after
            body = h.expect_ok(list_page(srv, ns, **p), 200)
            seen.extend((s["seq"], s["id"]) for s in body["segments"])
            after = body["next"]
            if after is None:
                break
    finally:
        stop.set()
        t.join(60)
    h.eq(errors, [], "writer errors")
    seqs = [s for s, _ in seen]
    h.eq(seqs, sorted(set(seqs)), "strictly increasing seqs: no repeat, no step back")
    ids = {i for _, i in seen}
    for i in range(120):
        sid = "s%d" % i
        h.check(sid in ids or sid in deleted, "%s neither listed nor deleted" % sid)
    h.check(len(added) > 0, "the writer ran during the listing")


@h.test
def test_list_bad_input():
    srv = h.shared()
    rng = random.Random(SEED + 4)
    ns = fresh_ns(srv)
    fill(srv, ns, 5, rng)
    other = fresh_ns(srv)
    fill(srv, other, 5, rng)
    cur = h.expect_ok(list_page(srv, other, limit=2), 200)["next"]
    cases = [
        ({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"limit": "x"}, "limit"),
        ({"limit": ""}, "limit"), ({"limit": "-1"}, "limit"), ({"limit": "2.5"}, "limit"),
        ({"after": "zz"}, "after"), ({"after": cur}, "after"), ({"after": ""}, "after"),
        ({"after": cur[:-1] + ("0" if cur[-1] != "0" else "1")}, "after"),
        ({"since": "yesterday"}, "since"), ({"until": "2026-01-01T00:00:00"}, "until"),
        ({"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, "since"),
        ({"source": ""}, "source"), ({"include_archived": "maybe"}, "include_archived"),
        ({"include_superseded": "2"}, "include_superseded"), ({"embedding": "yes"}, "embedding"),
        ({"bogus": "1"}, "query"),
    ]
    for params, field in cases:
        err = h.expect_error(list_page(srv, ns, **params), 400, "invalid_field", "list %r" % params)
        h.eq(err.get("field"), field, "field of %r" % params)
    h.expect_error(srv.get("/v1/namespaces/%s/segments?limit=1&limit=2" % ns), 400,
                   "invalid_field", "limit twice")
    h.expect_error(srv.get("/v1/namespaces/%s/segments?since=%%zz" % ns), 400, "invalid_field",
                   "bad percent-encoding")
    h.expect_error(list_page(srv, "nope"), 404, "not_found", "unknown namespace")
    h.expect_error(srv.get("/v1/namespaces/%s/segments?limit=2" % "bad%2Fname"), 400,
                   "invalid_field", "bad name")
    ids, _ = list_all(srv, ns)
    h.eq(len(ids), 5, "nothing changed")


if __name__ == "__main__":
    h.main()
