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


# ---------------------------------------------------------------- patch

def seg_path(ns, sid):
    return "/v1/namespaces/%s/segments/%s" % (ns, urllib.parse.quote(sid, safe=""))


def patch(srv, ns, sid, body, **kw):
    return srv.call("PATCH", seg_path(ns, sid), body, **kw)


@h.test
def test_patch_metadata_and_source():
    srv = h.shared()
    ns = fresh_ns(srv)
    h.expect_ok(srv.insert(ns, {"id": "a/b", "embedding": [1, 0, 0, 0, 0, 0, 0, 0], "text": "t",
                                "source": "s1", "metadata": {"x": 1}, "timestamp": 1767225600}), 201)
    before = h.expect_ok(srv.seg(ns, "a%2Fb", embedding=True), 200)
    got = h.expect_ok(patch(srv, ns, "a/b", {"metadata": {"user": "ana", "n": {"k": [1, 2]}}}), 200)
    h.eq(got["metadata"], {"user": "ana", "n": {"k": [1, 2]}}, "metadata replaced")
    h.eq(got["source"], "s1", "source kept")
    for k in ("id", "seq", "timestamp", "text", "supersedes", "superseded_by", "archived"):
        h.eq(got[k], before[k], "patch keeps %s" % k)
    got = h.expect_ok(patch(srv, ns, "a/b", {"source": "s2"}), 200)
    h.eq(got["source"], "s2", "source replaced")
    h.eq(got["metadata"], {"user": "ana", "n": {"k": [1, 2]}}, "metadata kept")
    got = h.expect_ok(patch(srv, ns, "a/b", {"metadata": None, "source": None}), 200)
    h.check("metadata" not in got and "source" not in got, "null clears both: %r" % got)
    h.expect_ok(patch(srv, ns, "a/b", {"metadata": {"v": 2}, "source": "s3"}), 200)
    again = h.expect_ok(patch(srv, ns, "a/b", {"metadata": {"v": 2}, "source": "s3"}), 200)
    h.eq(again["metadata"], {"v": 2}, "a repeated patch is a no-op")
    after = h.expect_ok(srv.seg(ns, "a%2Fb", embedding=True), 200)
    h.eq(after["embedding"], before["embedding"], "embedding untouched")
    # the source filter of retrieve and listing follow the new source
    r = h.expect_ok(srv.retrieve(ns, {"embedding": [1, 0, 0, 0, 0, 0, 0, 0], "source": "s3"}), 200)
    h.eq([x["id"] for x in r["results"]], ["a/b"], "retrieve by the new source")
    r = h.expect_ok(srv.retrieve(ns, {"embedding": [1, 0, 0, 0, 0, 0, 0, 0], "source": "s1"}), 200)
    h.eq(r["results"], [], "not by the old one")
    ids, _ = list_all(srv, ns, source="s3")
    h.eq(ids, ["a/b"], "listing by the new source")
    # durable: a restart keeps it
    own = h.Server().start()
    try:
        n2 = fresh_ns(own)
        h.expect_ok(own.insert(n2, {"id": "x", "embedding": [0, 1, 0, 0, 0, 0, 0, 0]}), 201)
        h.expect_ok(patch(own, n2, "x", {"metadata": {"kept": True}, "source": "src"}), 200)
        own.restart()
        got = h.expect_ok(own.seg(n2, "x"), 200)
        h.eq((got.get("metadata"), got.get("source")), ({"kept": True}, "src"), "after a restart")
        r = h.expect_ok(own.retrieve(n2, {"embedding": [0, 1, 0, 0, 0, 0, 0, 0], "source": "src"}), 200)
        h.eq(len(r["results"]), 1, "source index rebuilt at start-up")
    finally:
        own.stop()
        own.cleanup()


@h.test
def test_patch_bad_input():
    srv = h.shared()
    ns = fresh_ns(srv)
    h.expect_ok(srv.insert(ns, {"id": "p", "embedding": [1, 0, 0, 0, 0, 0, 0, 0], "text": "t",
                                "metadata": {"m": 1}, "source": "s"}), 201)
    before = h.expect_ok(srv.seg(ns, "p"), 200)
    cases = [
        ({"text": "new"}, "text"), ({"embedding": [1] * 8}, "embedding"),
        ({"timestamp": 1767225600}, "timestamp"), ({"metadata": {"a": 1}, "id": "q"}, "id"),
        ({"supersedes": []}, "supersedes"), ({"metadata": [1]}, "metadata"),
        ({"metadata": "x"}, "metadata"), ({"source": ""}, "source"), ({"source": 3}, "source"),
        ({"source": "x" * 257}, "source"), ({}, "metadata"), ({"metdata": {}}, "metdata"),
    ]
    for body, field in cases:
        err = h.expect_error(patch(srv, ns, "p", body), 400, "invalid_field", "patch %r" % body)
        h.eq(err.get("field"), field, "field of %r" % body)
    h.expect_error(patch(srv, ns, "p", b"{nope"), 400, "invalid_json")
    h.expect_error(patch(srv, ns, "p", b"[1]"), 400, "invalid_field")
    h.expect_error(patch(srv, ns, "p", {"metadata": {}}, headers={"Content-Type": "text/plain"}),
                   415, "unsupported_media_type")
    h.expect_error(patch(srv, ns, "missing", {"metadata": {}}), 404, "not_found")
    h.expect_error(patch(srv, "nope", "p", {"metadata": {}}), 404, "not_found")
    h.eq(h.expect_ok(srv.seg(ns, "p"), 200), before, "nothing written")


# ---------------------------------------------------------------- metadata filters

def flatten(meta, prefix=""):
    """{path: [values]} as the server sees metadata: dotted paths, array elements under the
    array's path, objects and arrays present as containers."""
    out = {}

    def put(path, v):
        out.setdefault(path, []).append(v)

    def walk(path, v):
        if isinstance(v, dict):
            put(path, CONTAINER)
            for k, x in v.items():
                walk(path + "." + k if path else k, x)
        elif isinstance(v, list):
            put(path, CONTAINER)
            for x in v:
                walk(path, x)
        else:
            put(path, v)

    for k, v in (meta or {}).items():
        walk(k, v)
    return out


CONTAINER = object()


def same(a, b):
    if a is CONTAINER or b is CONTAINER:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return type(a) == type(b) and a == b


def cmp_ok(x, op, v):
    num = lambda z: isinstance(z, (int, float)) and not isinstance(z, bool)  # noqa: E731
    if num(x) and num(v):
        a, b = float(x), float(v)
    elif isinstance(x, str) and isinstance(v, str):
        a, b = x.encode(), v.encode()
    else:
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def matches(meta, flt):
    fl = flatten(meta)
    for path, cond in flt.items():
        vals = fl.get(path, [])
        ops = cond if isinstance(cond, dict) else {"$eq": cond}
        for op, arg in ops.items():
            if op == "$eq":
                ok = any(same(x, arg) for x in vals)
            elif op == "$ne":
                ok = not any(same(x, arg) for x in vals)
            elif op == "$in":
                ok = any(same(x, a) for x in vals for a in arg)
            elif op == "$nin":
                ok = not any(same(x, a) for x in vals for a in arg)
            elif op == "$exists":
                ok = bool(vals) == arg
            else:
                ok = any(cmp_ok(x, op, arg) for x in vals)
            if not ok:
                return False
    return True


USERS = ["ana", "bob", "cy", "dee"]


def random_meta(rng, i):
    m = {}
    if rng.random() < 0.9:
        m["user"] = USERS[0] if rng.random() < 0.04 else rng.choice(USERS[1:])
    if rng.random() < 0.7:
        m["priority"] = rng.randrange(5) if rng.random() < 0.8 else rng.randrange(5) + 0.5
    if rng.random() < 0.5:
        m["tags"] = rng.sample(["red", "green", "blue", "x"], rng.randrange(3))
    if rng.random() < 0.4:
        m["project"] = {"name": rng.choice(["apollo", "zeus"]), "year": 2020 + rng.randrange(6)}
    if rng.random() < 0.1:
        m["flag"] = rng.random() < 0.5
    if rng.random() < 0.05:
        m["nothing"] = None
    return m or None


FILTERS = [
    {"user": "ana"},                                   # selective: candidates only
    {"user": {"$ne": "ana"}},                          # broad: the masked scan
    {"priority": {"$gte": 2, "$lt": 4}},
    {"tags": "red"},
    {"tags": {"$in": ["blue", "x"]}, "user": {"$nin": ["bob"]}},
    {"project.name": "zeus", "project.year": {"$gt": 2022}},
    {"project": {"$exists": True}},
    {"project": {"$exists": False}, "flag": {"$ne": True}},
    {"user": {"$gt": "b", "$lte": "cy"}},
    {"nothing": None},
    {"priority": 2.5},
    {"user": "nobody"},
    {"tags": {"$in": []}},
]


@h.test
def test_filtered_top_k_equals_brute_force():
    srv = h.shared()
    rng = random.Random(SEED + 10)
    ns = fresh_ns(srv)
    t0 = 1767225600000
    segs = fill(srv, ns, 1500, rng, t0_ms=t0, step_ms=3600000, batch=500,
                extra=lambda i: {"metadata": random_meta(rng, i)} if True else {})
    local = []
    for i, s in enumerate(segs):
        local.append({"id": s["id"], "seq": i + 1, "ts": t0 + i * 3600000, "vec": h.unit(s["embedding"]),
                      "source": s["source"], "meta": s.get("metadata")})
    origin = t0 + 1600 * 3600000
    decays = [("exponential", 0.0), ("exponential", 5 * 86400.0), ("gaussian", 20 * 86400.0),
              ("linear", 10 * 86400.0)]
    checked = 0
    for flt in FILTERS:
        eligible = [x for x in local if matches(x["meta"], flt)]
        for kind, hl in decays:
            q = h.rand_vec(rng, DIM)
            k = rng.choice([1, 5, 10, 40])
            req = {"embedding": q, "k": k, "decay": kind, "half_life": hl,
                   "origin": origin / 1000.0, "filter": flt}
            got = h.expect_ok(srv.retrieve(ns, req), 200, "filter %r" % flt)
            _, want = h.reference(eligible, q, k=k, half_life_s=hl, decay=kind, origin_ms=origin,
                                  graph=({}, 0, 0))
            h.match_results(got["results"], want, k, what="filter %r %s" % (flt, kind))
            h.check(got["scanned"] <= max(len(eligible), 0) or len(eligible) * 16 > len(local),
                    "a selective filter scores only its rows: scanned %d of %d eligible"
                    % (got["scanned"], len(eligible)))
            checked += 1
    # a selective filter reads only its candidates
    sel = [x for x in local if matches(x["meta"], {"user": "ana"})]
    h.check(0 < len(sel) * 16 <= len(local), "the selective case is selective (%d)" % len(sel))
    got = h.expect_ok(srv.retrieve(ns, {"embedding": h.rand_vec(rng, DIM), "k": 5,
                                        "filter": {"user": "ana"}}), 200)
    h.eq(got["scanned"], len(sel), "scanned == matching rows")
    # with source, since and include flags too; results carry their metadata
    got = h.expect_ok(srv.retrieve(ns, {"embedding": h.rand_vec(rng, DIM), "k": 1000,
                                        "filter": {"tags": "green"}, "source": "src1",
                                        "since": (t0 + 100 * 3600000) / 1000.0}), 200)
    want = {x["id"] for x in local if matches(x["meta"], {"tags": "green"}) and
            x["source"] == "src1" and x["ts"] >= t0 + 100 * 3600000}
    h.eq({r["id"] for r in got["results"]}, want, "filter + source + since")
    for r in got["results"]:
        h.check("green" in r["metadata"]["tags"], "metadata returned")
    h.check(checked >= 40, "cases")


@h.test
def test_filter_follows_patch_delete_and_restart():
    own = h.Server().start()
    try:
        ns = fresh_ns(own)
        v = [1, 0, 0, 0, 0, 0, 0, 0]
        for i in range(40):
            h.expect_ok(own.insert(ns, {"id": "m%d" % i, "embedding": v,
                                        "metadata": {"user": "ana" if i < 3 else "bob", "i": i}}), 201)
        ids = lambda r: sorted(x["id"] for x in r["results"])  # noqa: E731
        r = h.expect_ok(own.retrieve(ns, {"embedding": v, "k": 100, "filter": {"user": "ana"}}), 200)
        h.eq(ids(r), ["m0", "m1", "m2"], "before")
        h.expect_ok(own.call("PATCH", "/v1/namespaces/%s/segments/m1" % ns,
                             {"metadata": {"user": "bob"}}), 200)
        h.expect_ok(own.call("PATCH", "/v1/namespaces/%s/segments/m30" % ns,
                             {"metadata": {"user": "ana", "nested": {"k": [1, 2]}}}), 200)
        h.expect_ok(own.delete("/v1/namespaces/%s/segments/m2" % ns), 200)
        r = h.expect_ok(own.retrieve(ns, {"embedding": v, "k": 100, "filter": {"user": "ana"}}), 200)
        h.eq(ids(r), ["m0", "m30"], "after patch and delete")
        r = h.expect_ok(own.retrieve(ns, {"embedding": v, "k": 100, "filter": {"nested.k": 2}}), 200)
        h.eq(ids(r), ["m30"], "nested array element")
        r = h.expect_ok(own.retrieve(ns, {"embedding": v, "k": 100, "filter": {"i": {"$lt": 2}}}), 200)
        h.eq(ids(r), ["m0"], "a patch replaces every key: m1 has no i any more")
        own.restart()
        r = h.expect_ok(own.retrieve(ns, {"embedding": v, "k": 100, "filter": {"user": "ana"}}), 200)
        h.eq(ids(r), ["m0", "m30"], "after a restart")
        r = h.expect_ok(own.retrieve(ns, {"embedding": v, "k": 100, "filter": {"nested.k": 2}}), 200)
        h.eq(ids(r), ["m30"], "nested after a restart")
    finally:
        own.stop()
        own.cleanup()


@h.test
def test_filter_bad_input():
    srv = h.shared()
    ns = fresh_ns(srv)
    h.expect_ok(srv.insert(ns, {"id": "f", "embedding": [1, 0, 0, 0, 0, 0, 0, 0],
                                "metadata": {"user": "ana"}}), 201)
    q = [1, 0, 0, 0, 0, 0, 0, 0]
    cases = [
        ([1], "filter"), ("user", "filter"), ({"user": {"$regex": "a"}}, "filter.user.$regex"),
        ({"$or": [{"a": 1}]}, "filter.$or"), ({"user": ["ana"]}, "filter.user"),
        ({"user": {}}, "filter.user"), ({"user": {"name": "x"}}, "filter.user.name"),
        ({"p": {"$in": "ana"}}, "filter.p.$in"), ({"p": {"$in": [{"a": 1}]}}, "filter.p.$in"),
        ({"p": {"$gt": True}}, "filter.p.$gt"), ({"p": {"$gte": None}}, "filter.p.$gte"),
        ({"p": {"$exists": 1}}, "filter.p.$exists"), ({"p": {"$eq": [1]}}, "filter.p.$eq"),
        ({"a..b": 1}, "filter.a..b"), ({".a": 1}, "filter..a"), ({"": 1}, "filter."),
        ({"p": {"$in": list(range(1025))}}, "filter.p.$in"),
        ({"k%d" % i: 1 for i in range(65)}, "filter"),
    ]
    for flt, field in cases:
        err = h.expect_error(srv.retrieve(ns, {"embedding": q, "filter": flt}), 400, "invalid_field",
                             "filter %r" % (flt,))
        h.eq(err.get("field"), field, "field of %r" % (flt,))
    r = h.expect_ok(srv.retrieve(ns, {"embedding": q, "filter": None}), 200)
    h.eq(len(r["results"]), 1, "null filter is no filter")
    r = h.expect_ok(srv.retrieve(ns, {"embedding": q, "filter": {}}), 200)
    h.eq(len(r["results"]), 1, "empty filter matches everything")


if __name__ == "__main__":
    h.main()
