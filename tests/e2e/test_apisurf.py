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
def test_list_query_values_are_form_encoded():
    """Query values are form-encoded, as URL libraries and browsers write them: '+' is a space
    and %2B a '+' (a source "team a" sent by urlencode or URLSearchParams, as team+a, used to
    match nothing); the '+' of a timestamp's offset may still be sent as it is."""
    srv = h.shared()
    rng = random.Random(SEED + 12)
    ns = fresh_ns(srv)
    t0 = 1767225600
    for i, (sid, source) in enumerate((("a", "team a"), ("c", "c++"), ("p", "plain"))):
        h.expect_ok(srv.insert(ns, {"id": sid, "embedding": h.rand_vec(rng, DIM), "source": source,
                                    "timestamp": t0 + 60 * i}), 201)
    path = "/v1/namespaces/%s/segments?" % ns
    for q, want in (("source=team+a", ["a"]), ("source=team%20a", ["a"]), ("source=c%2B%2B", ["c"]),
                    ("source=c++", []), ("source=plain", ["p"]),
                    ("since=2026-01-01T00:01:00+00:00", ["c", "p"]),       # a '+' offset as it is
                    ("since=2026-01-01T00:01:00%2B00:00", ["c", "p"]),
                    ("until=2026-01-01T01:00:00+01:00&source=team+a", ["a"])):
        got = [s["id"] for s in h.expect_ok(srv.get(path + q), 200, q)["segments"]]
        h.eq(got, want, q)
    for source, want in (("team a", ["a"]), ("c++", ["c"])):  # what urlencode writes
        got = [s["id"] for s in h.expect_ok(list_page(srv, ns, source=source), 200)["segments"]]
        h.eq(got, want, "urlencode'd source %r" % source)
    h.expect_error(srv.get(path + "since=2026-01-01T00:01:00+"), 400, "invalid_field", "a bare +")


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
        # Unix seconds are a JSON number: not NaN, an infinity, hex or an overflow (each was
        # once 503 "out of memory" or read as hex)
        ({"since": "nan"}, "since"), ({"until": "inf"}, "until"), ({"since": "-infinity"}, "since"),
        ({"since": "1e400"}, "since"), ({"until": "0x10"}, "until"), ({"since": " 5"}, "since"),
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


@h.test
def test_list_cursor_of_a_deleted_namespace():
    """A cursor stays valid across a restart, but once its namespace is deleted it is refused,
    also when a namespace of the same name is created again (its seqs start over, so the
    cursor would page through it as if the old listing went on); an older release's cursor
    (seq and check only) is refused by name."""
    srv = h.shared()
    rng = random.Random(SEED + 9)
    ns = fresh_ns(srv)
    fill(srv, ns, 6, rng)
    cur = h.expect_ok(list_page(srv, ns, limit=2), 200)["next"]
    h.eq(len(cur), 40, "cursor length")
    page = h.expect_ok(list_page(srv, ns, limit=2, after=cur), 200)
    h.eq([s["id"] for s in page["segments"]], ["s2", "s3"], "the next page")
    h.expect_ok(srv.delete("/v1/namespaces/%s" % ns), 200)
    h.expect_ok(srv.put("/v1/namespaces/%s" % ns, {"dim": DIM}), 201)
    fill(srv, ns, 6, rng)
    err = h.expect_error(list_page(srv, ns, limit=2, after=cur), 400, "invalid_field",
                         "cursor of the deleted namespace")
    h.eq(err.get("field"), "after", "field")
    h.check("deleted" in err.get("message", ""), "the message says why: %r" % err)
    # the new namespace's own cursors work, from its first page on
    cur2 = h.expect_ok(list_page(srv, ns, limit=2), 200)["next"]
    h.check(cur2 != cur, "another cursor for another namespace")
    page = h.expect_ok(list_page(srv, ns, limit=4, after=cur2), 200)
    h.eq([s["id"] for s in page["segments"]], ["s2", "s3", "s4", "s5"], "the new namespace")
    # the 24-digit cursor of an older release: seq 2 and its check of (namespace, seq)
    hsh = 2166136261
    for c in ns.encode() + (2).to_bytes(8, "little"):
        hsh = ((hsh ^ c) * 16777619) & 0xffffffff
    old = "%016x%08x" % (2, hsh ^ 0x6d6e656d)
    err = h.expect_error(list_page(srv, ns, after=old), 400, "invalid_field", "older cursor")
    h.eq(err.get("field"), "after", "field of the older cursor")
    h.check("older mnemod" in err.get("message", ""), "the message says why: %r" % err)


@h.test
def test_list_cursor_survives_restart():
    """The incarnation a cursor names is stored: the cursor resumes after a restart."""
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 10)
        ns = fresh_ns(srv)
        fill(srv, ns, 5, rng)
        cur = h.expect_ok(list_page(srv, ns, limit=3), 200)["next"]
        srv.restart()
        page = h.expect_ok(list_page(srv, ns, limit=3, after=cur), 200)
        h.eq([s["id"] for s in page["segments"]], ["s3", "s4"], "after a restart")
        srv.stop()
    finally:
        srv.cleanup()


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
def test_filter_keys_with_escaped_characters():
    """Metadata keys holding characters JSON escapes (a quote, a backslash, a tab, a control
    character, one outside the BMP written either way) are matched by filters naming them,
    at the top level and nested, before and after a restart: they never matched."""
    own = h.Server().start()
    try:
        ns = fresh_ns(own)
        v = [1, 0, 0, 0, 0, 0, 0, 0]
        keys = ['a"b', "x\\y", "t\tab", "c\u0001", "emoji\U0001F600", "plain"]
        for i, k in enumerate(keys):
            h.expect_ok(own.insert(ns, {"id": "k%d" % i, "embedding": v,
                                        "metadata": {k: i, "n": {k: i}}}), 201)
        h.expect_ok(own.insert(ns, {"id": "other", "embedding": v, "metadata": {"ab": 0}}), 201)

        def check_all(what):
            for i, k in enumerate(keys):
                for f in ({k: i}, {"n." + k: i}, {k: {"$exists": True}}):
                    r = h.expect_ok(own.retrieve(ns, {"embedding": v, "k": 100, "filter": f}), 200)
                    h.eq([x["id"] for x in r["results"]], ["k%d" % i], "%s: filter %r" % (what, f))
            raw = b'{"embedding":[1,0,0,0,0,0,0,0],"filter":{"emoji\\ud83d\\ude00":4}}'
            r = h.expect_ok(own.retrieve(ns, raw), 200)
            h.eq([x["id"] for x in r["results"]], ["k4"], "%s: a surrogate pair" % what)

        check_all("stored")
        own.restart()
        check_all("after a restart")
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


# ---------------------------------------------------------------- export

def export(srv, ns, **kw):
    """(status, headers, raw bytes) of GET .../export: the harness checks each line against
    the document's ExportLine."""
    conn = h.http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    try:
        conn.request("GET", "/v1/namespaces/%s/export" % ns, headers=kw.get("headers", {}))
        r = conn.getresponse()
        data = r.read()
        hdr = {k.lower(): v for k, v in r.getheaders()}
        h.check_schema("GET", "/v1/namespaces/%s/export" % ns, r.status, hdr.get("content-type"),
                       data)
        return r.status, hdr, data
    finally:
        conn.close()


def lines_of(data):
    h.check(data.endswith(b"\n") or data == b"", "the body ends with a newline")
    return [json.loads(x) for x in data.decode("utf-8").split("\n") if x]


@h.test
def test_export_everything_in_seq_order():
    srv = h.shared()
    rng = random.Random(SEED + 20)
    ns = fresh_ns(srv)
    t0 = 1767225600000
    segs = fill(srv, ns, 40, rng, t0_ms=t0, extra=lambda i: {"metadata": {"i": i, "tags": ["a"]}} if i % 3 else {})
    h.expect_ok(srv.insert(ns, {"id": "new", "embedding": h.rand_vec(rng, DIM), "text": "sup",
                                "timestamp": (t0 + 50 * 60000) / 1000.0, "supersedes": ["s1", "s2"]}), 201)
    arch = h.expect_ok(srv.compact(ns, {"target": 30, "policy": "structural_time"}), 200)["evicted"]
    h.expect_ok(srv.delete("/v1/namespaces/%s/segments/s5" % ns), 200)
    st, hdr, data = export(srv, ns)
    h.eq(st, 200, "export")
    h.check(hdr.get("content-type", "").startswith("application/x-ndjson"), "content type")
    lines = lines_of(data)
    want_ids = [s["id"] for s in segs if s["id"] != "s5"] + ["new"]
    h.eq([x["id"] for x in lines], want_ids, "every stored segment, in seq order")
    by = {x["id"]: x for x in lines}
    for s in segs:
        if s["id"] == "s5":
            continue
        x = by[s["id"]]
        h.eq(set(x), {"id", "timestamp", "text", "embedding", "source", "metadata", "supersedes",
                      "archived"}, "keys of a line")
        h.eq(x["text"], s["text"], "text")
        h.eq(x["source"], s["source"], "source")
        h.eq(x["metadata"], s.get("metadata"), "metadata")
        h.eq(h.parse_ts(x["timestamp"]), int(round(s["timestamp"] * 1000)), "timestamp")
        for a, b in zip(x["embedding"], h.unit(s["embedding"])):
            h.near(a, b, 1e-6, "stored unit vector")
        h.eq(x["archived"], s["id"] in arch, "archived flag of %s" % s["id"])
    h.eq(by["new"]["supersedes"], ["s1", "s2"], "supersedes")
    h.expect_error(srv.get("/v1/namespaces/nope/export"), 404, "not_found")
    h.expect_error(srv.post("/v1/namespaces/%s/export" % ns, {}), 405, "method_not_allowed")
    empty = fresh_ns(srv)
    st, _, data = export(srv, empty)
    h.eq((st, data), (200, b""), "an empty namespace exports nothing")


@h.test
def test_export_is_one_snapshot_during_writes():
    srv = h.shared()
    rng = random.Random(SEED + 21)
    ns = fresh_ns(srv, dim=64)
    body = [{"id": "b%d" % i, "embedding": h.rand_vec(rng, 64), "text": "x" * 200}
            for i in range(3000)]
    for i in range(0, 3000, 500):
        h.expect_ok(srv.insert(ns, {"segments": body[i:i + 500]}), 201)
    stop = threading.Event()
    written = []

    def writer():
        wr = random.Random(SEED + 22)
        i = 0
        while not stop.is_set() and i < 2000:
            st, _, _ = srv.insert(ns, {"id": "w%d" % i, "embedding": h.rand_vec(wr, 64)})
            if st == 201:
                written.append("w%d" % i)
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        exports = []
        for _ in range(3):
            st, _, data = export(srv, ns)
            h.eq(st, 200, "export during writes")
            exports.append(lines_of(data))  # every line parses: no torn line
    finally:
        stop.set()
        t.join(60)
    h.check(written, "writes landed during the exports")
    for lines in exports:
        ids = [x["id"] for x in lines]
        h.eq(ids[:3000], ["b%d" % i for i in range(3000)], "the stored segments, in order")
        extra = ids[3000:]
        h.eq(extra, written[:len(extra)], "a prefix of the concurrent writes, nothing torn")


# ---------------------------------------------------------------- import

ND = {"Content-Type": "application/x-ndjson"}


def do_import(srv, ns, data, headers=ND, **kw):
    return srv.call("POST", "/v1/namespaces/%s/import" % ns, data, headers=headers, **kw)


def ndjson(objs):
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def stats_of(srv, ns):
    return h.expect_ok(srv.ns_stats(ns), 200)


@h.test
def test_export_import_round_trip():
    srv = h.shared()
    rng = random.Random(SEED + 30)
    src = fresh_ns(srv)
    t0 = 1767225600000
    segs = []
    for i in range(300):
        v = h.rand_vec(rng, DIM)
        if i % 7 == 0 and segs:  # near-duplicates: coherence edges
            v = [a + 0.05 * b for a, b in zip(segs[-1]["embedding"], h.rand_vec(rng, DIM))]
        s = {"id": "r%d" % i, "embedding": v, "timestamp": (t0 + i * 60000) / 1000.0,
             "text": "memory %d" % i if i % 5 else None, "source": "s%d" % (i % 4) if i % 3 else None,
             "metadata": random_meta(rng, i)}
        if i % 50 == 49:
            s["supersedes"] = ["r%d" % (i - 1)]
        segs.append({k: v for k, v in s.items() if v is not None})
    for i in range(0, 300, 100):
        h.expect_ok(srv.insert(src, {"segments": segs[i:i + 100]}), 201)
    h.expect_ok(srv.compact(src, {"target": 250, "policy": "coherence_weighted"}), 200)
    h.expect_ok(srv.delete("/v1/namespaces/%s/segments/r10" % src), 200)
    st, _, data = export(srv, src)
    h.eq(st, 200, "export")
    dst = "rt%d" % rng.randrange(10 ** 9)
    got = h.expect_ok(do_import(srv, dst, data), 201, "import")
    h.eq(got, {"imported": 299, "skipped": 0}, "counts")
    st, _, again = export(srv, dst)
    a, b = lines_of(data), lines_of(again)
    h.eq(len(a), len(b), "lines")
    for x, y in zip(a, b):
        ex, ey = x.pop("embedding"), y.pop("embedding")
        h.eq(x, y, "line %s" % x["id"])
        for p, q in zip(ex, ey):
            h.near(p, q, 1e-6, "embedding of %s" % x["id"])
    sa, sb = stats_of(srv, src), stats_of(srv, dst)
    for k in ("count", "superseded", "archived", "dim", "oldest", "newest", "graph_edges",
              "max_degree"):
        h.eq(sb[k], sa[k], "stats %s" % k)
    for i in range(6):
        q = h.rand_vec(rng, DIM)
        req = {"embedding": q, "k": 10, "half_life": "3d", "origin": (t0 + 400 * 60000) / 1000.0,
               "coherence_weight": 0.3 if i % 2 else 0.0, "include_archived": i == 5,
               "include_superseded": i == 4, "explain": True}
        if i == 3:
            req["filter"] = {"user": {"$in": ["bob", "cy"]}}
        ra = h.expect_ok(srv.retrieve(src, dict(req)), 200)["results"]
        rb = h.expect_ok(srv.retrieve(dst, dict(req)), 200)["results"]
        h.eq([r["id"] for r in rb], [r["id"] for r in ra], "same answers %d" % i)
        for x, y in zip(ra, rb):
            h.near(y["score"], x["score"], 1e-5, "score")
    # importing the same again skips everything and writes nothing
    got = h.expect_ok(do_import(srv, dst, data), 200, "re-import")
    h.eq(got, {"imported": 0, "skipped": 299}, "identical lines are skipped")


@h.test
def test_export_import_after_a_superseded_segment_is_deleted():
    """Deleting a superseded segment drops its id from its superseders' supersedes, so the
    export still imports (it named an id no line holds: unknown_id), and an id re-used by a
    later segment is never taken for the deleted one."""
    srv = h.shared()
    rng = random.Random(SEED + 31)
    src = fresh_ns(srv)
    v = lambda: h.rand_vec(rng, DIM)  # noqa: E731
    for s in ({"id": "a", "embedding": v()}, {"id": "x", "embedding": v()},
              {"id": "b", "embedding": v(), "supersedes": ["x", "a", "a"]},
              {"id": "c", "embedding": v(), "supersedes": ["a"]}):
        h.expect_ok(srv.insert(src, s), 201, "insert %s" % s["id"])
    h.expect_ok(srv.delete("/v1/namespaces/%s/segments/a" % src), 200)
    h.eq(h.expect_ok(srv.seg(src, "b"), 200)["supersedes"], ["x"], "b forgets a, keeps x")
    h.eq(h.expect_ok(srv.seg(src, "c"), 200)["supersedes"], [], "c forgets a")
    h.eq(h.expect_ok(srv.seg(src, "x"), 200)["superseded_by"], "b", "x stays superseded")
    h.expect_ok(srv.insert(src, {"id": "a", "embedding": v()}), 201, "a new a")
    h.eq(h.expect_ok(srv.seg(src, "a"), 200)["superseded_by"], None, "the new a is active")
    st, _, data = export(srv, src)
    h.eq(st, 200, "export")
    dst = "rd%d" % rng.randrange(10 ** 9)
    h.eq(h.expect_ok(do_import(srv, dst, data), 201, "import"), {"imported": 4, "skipped": 0})
    for sid in ("x", "b", "c", "a"):
        a = h.expect_ok(srv.seg(src, sid), 200)
        b = h.expect_ok(srv.seg(dst, sid), 200)
        for k in ("supersedes", "superseded_by", "archived", "timestamp"):
            h.eq(b[k], a[k], "%s of %s" % (k, sid))
    h.eq(h.expect_ok(do_import(srv, src, data), 200, "re-import into the source"),
         {"imported": 0, "skipped": 4})


@h.test
def test_import_bad_line_writes_nothing():
    srv = h.shared()
    rng = random.Random(SEED + 31)
    base = [{"id": "i%d" % i, "embedding": h.rand_vec(rng, DIM), "timestamp": 1767225600 + i,
             "metadata": {"n": i}} for i in range(30)]
    existing = fresh_ns(srv)
    h.expect_ok(srv.insert(existing, {"id": "old", "embedding": h.rand_vec(rng, DIM),
                                      "timestamp": 1767225600 + 10}), 201)
    bad_lines = [
        (b"{not json", "invalid_json", None),
        (b"[1, 2]", "invalid_field", None),
        (json.dumps({"id": "x", "embedding": [1, 2, 3]}).encode(), "dimension_mismatch", "embedding"),
        (json.dumps({"id": "x", "embedding": [1] * DIM, "bogus": 1}).encode(), "invalid_field", "bogus"),
        (json.dumps({"id": "x", "embedding": [1] * DIM, "archived": "yes"}).encode(), "invalid_field", "archived"),
        (json.dumps({"id": "i0", "embedding": [1] * DIM}).encode(), "duplicate_id", "id"),
        (json.dumps({"id": "x", "embedding": [1] * DIM, "timestamp": 1767225000}).encode(),
         "non_monotonic_timestamp", "timestamp"),
        (json.dumps({"id": "x", "embedding": [1] * DIM, "supersedes": ["nope"]}).encode(), "unknown_id",
         "supersedes"),
        (json.dumps({"id": "x", "embedding": [0] * DIM}).encode(), "invalid_field", "embedding"),
        # the embedding is read straight into float32: out of range, not numbers, a key twice
        (json.dumps({"id": "x", "embedding": [1] * (DIM - 1) + [3.5e38]}).encode(), "invalid_field",
         "embedding"),
        (json.dumps({"id": "x", "embedding": [1] * (DIM - 1) + ["1"]}).encode(), "invalid_field",
         "embedding"),
        (b'{"id": "x", "id": "y", "embedding": [' + b",".join([b"1"] * DIM) + b"]}", "invalid_json",
         None),
    ]
    n = 0
    for bad, code, field in bad_lines:
        for at in (0, 14, 29):
            n += 1
            if at == 0 and code in ("duplicate_id", "non_monotonic_timestamp"):
                continue  # the first line has no earlier line to repeat or to precede
            lines = [json.dumps(o).encode() for o in base]
            lines.insert(at, bad)
            data = b"\n".join(lines) + b"\n"
            ns = "bad%d" % n
            status = 409 if code in ("duplicate_id", "non_monotonic_timestamp") else 400
            err = h.expect_error(do_import(srv, ns, data), status, code, "%s at %d" % (code, at))
            # a first line of another dimension fixes the new namespace's: the next one is at fault
            want_line = 2 if code == "dimension_mismatch" and at == 0 else at + 1
            h.eq(err.get("line"), want_line, "line of %s at %d" % (code, at))
            if code == "invalid_json":  # named by its NDJSON line
                h.check(("line %d: invalid JSON at" % (at + 1)) in err.get("message", ""),
                        "message %r" % err.get("message"))
            if field:
                h.eq(err.get("field"), field, "field of %s" % code)
            h.expect_error(srv.ns_stats(ns), 404, "not_found", "nothing written for %s" % code)
    # into an existing namespace: a line older than its newest, or a different segment with a stored id
    for bad in ({"id": "y", "embedding": [1] * DIM, "timestamp": 1767225600 + 5},
                {"id": "old", "embedding": [1] * DIM, "timestamp": 1767225600 + 20}):
        data = ndjson([{"id": "ok1", "embedding": [1] * DIM, "timestamp": 1767225600 + 11}, bad])
        err = h.expect_error(do_import(srv, existing, data), 409,
                             {"non_monotonic_timestamp", "duplicate_id"}, "existing %r" % bad)
        h.eq(err.get("line"), 2, "line")
        h.eq(stats_of(srv, existing)["count"], 1, "nothing written")
    h.expect_error(do_import(srv, existing, b""), 400, "invalid_field", "empty body")
    h.expect_error(do_import(srv, existing, b"\n\n"), 400, "invalid_field", "blank lines only")
    # an unknown query parameter is named alone, as on every other route
    st, _, body = srv.call("POST", "/v1/namespaces/%s/import?bogus=1" % existing,
                           raw=b'{"embedding":[1,1]}\n', headers={"Content-Type": "application/x-ndjson"})
    err = h.expect_error((st, _, body), 400, "invalid_field", "query on an import")
    h.eq(err["message"], "unknown query parameter: bogus", "its message")
    h.expect_error(do_import(srv, existing, ndjson(base[:2]), headers={"Content-Type": "application/json"}),
                   415, "unsupported_media_type")
    h.expect_error(do_import(srv, existing, ndjson(base[:2]), headers={"Content-Type": None}),
                   415, "unsupported_media_type")
    h.expect_error(srv.call("GET", "/v1/namespaces/%s/import" % existing), 405, "method_not_allowed")
    h.expect_error(do_import(srv, "bad%2Fname", ndjson(base[:2])), 400, "invalid_field")
    h.eq(stats_of(srv, existing)["count"], 1, "still nothing written")


@h.test
def test_import_takes_a_file_that_starts_with_a_byte_order_mark():
    """Editors and Windows tools write UTF-8 files with a BOM: it is not part of line 1."""
    srv = h.shared()
    ns = fresh_ns(srv)
    data = b"\xef\xbb\xbf" + ndjson([{"id": "b%d" % i, "embedding": [1.0] * DIM,
                                       "timestamp": 1767225600 + i} for i in range(2)])
    h.eq(h.expect_ok(do_import(srv, ns, data), 201), {"imported": 2, "skipped": 0}, "imported")
    h.eq(h.expect_ok(srv.seg(ns, "b0"))["id"], "b0", "line 1's id has no BOM in it")
    # only at the very start: a BOM before another line is that line's JSON error
    err = h.expect_error(do_import(srv, fresh_ns(srv), ndjson([{"id": "c", "embedding": [1.0] * DIM}])
                                   + b"\xef\xbb\xbf{}\n"), 400, "invalid_json", "BOM on line 2")
    h.eq(err.get("line"), 2, "line of the misplaced BOM")


@h.test
def test_import_streams_past_max_body_and_stops_at_max_import_body():
    own = h.Server(["--max-body", "64KiB", "--max-import-body", "3MiB"]).start()
    try:
        rng = random.Random(SEED + 32)
        objs = [{"id": "big%d" % i, "embedding": [round(x, 5) for x in h.rand_vec(rng, 32)],
                 "text": "t" * 40, "timestamp": 1767225600 + i} for i in range(6000)]
        data = ndjson(objs)
        h.check(64 * 1024 < len(data) < 3 << 20, "body size %d" % len(data))
        got = h.expect_ok(do_import(own, "big", data), 201, "a streamed import")
        h.eq(got["imported"], 6000, "imported")
        h.eq(stats_of(own, "big")["count"], 6000, "count")
        more = ndjson([dict(o, id="more%d" % i, timestamp=1767300000 + i) for i, o in enumerate(objs)])
        more += ndjson([dict(o, id="again%d" % i, timestamp=1767400000 + i) for i, o in enumerate(objs)])
        h.check(len(more) > 3 << 20, "over the import limit")
        # chunked, no Content-Length: the limit is counted as the body streams in
        req = (b"POST /v1/namespaces/big2/import HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
               b"Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(0, len(more), 65536):
            part = more[i:i + 65536]
            req += b"%x\r\n" % len(part) + part + b"\r\n"
        req += b"0\r\n\r\n"
        st, _, body = own.raw(req, timeout=60)
        h.eq(st, 413, "over --max-import-body while streaming")
        h.expect_error(own.ns_stats("big2"), 404, "not_found", "nothing written")
        st, _, body = own.raw(h.raw_request("POST", "/v1/namespaces/big3/import", b"x" * (4 << 20),
                                            ctype="application/x-ndjson"), timeout=60)
        h.eq(st, 413, "announced too big: refused before the body")
        log = open(own.log_path, "rb").read().decode("utf-8", "replace")
        h.check("event=import_applied" in log, "the import logs its progress")
    finally:
        own.stop()
        own.cleanup()


if __name__ == "__main__":
    h.main()
