"""test_durability.py - restart keeps everything; kill -9 in the middle of concurrent
inserts loses no acknowledged segment and leaves no half batch (issue 2); compaction end to
end with every policy, dry run, archive, purge and restart (issue 3)."""

import http.client
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, near, expect_error, expect_ok  # noqa: E402

SEED = int(os.environ.get("MEM_TEST_SEED", "20260906"))
DAY = 86400000
CRASH_BUDGET_S = float(os.environ.get("MEM_E2E_CRASH_SECONDS", "60"))
POLICIES = ["coherence_weighted", "dedup_gated", "structural_time", "structural_keyframe", None]


def listing(srv, ns, dim, **extra):
    """Every visible segment of ns via retrieve (k=1000, no decay), sorted by seq."""
    req = {"embedding": [1.0] + [0.0] * (dim - 1), "k": 1000}
    req.update(extra)
    body = expect_ok(srv.retrieve(ns, req), 200, "listing %s" % ns)
    return sorted(body["results"], key=lambda r: r["seq"])


def all_segments(srv, ns, ids):
    out = {}
    for sid in ids:
        st, _, body = srv.seg(ns, sid, embedding=True)
        if st == 200:
            out[sid] = body
        else:
            eq(st, 404, "GET %s/%s" % (ns, sid))
    return out


# ------------------------------------------------------------------ restart

@test
def test_restart_keeps_everything():
    srv = h.Server().start()
    try:
        rng = random.Random(SEED)
        t0 = h.now_ms() - 30 * DAY
        ids = {"r_a": [], "r_b": []}
        for ns, dim in (("r_a", 6), ("r_b", 3)):
            segs = []
            for i in range(40):
                sid = "%s-%d" % (ns, i)
                segs.append({"id": sid, "embedding": h.rand_vec(rng, dim), "timestamp": h.rfc3339_ms(t0 + i * 3600000),
                             "text": "memory %d of %s" % (i, ns), "source": "s%d" % (i % 3),
                             "metadata": {"i": i, "tags": ["a", "b"]}})
                ids[ns].append(sid)
            expect_ok(srv.insert(ns, {"segments": segs[:25]}), 201)
            for s in segs[25:]:
                expect_ok(srv.insert(ns, s), 201)
        expect_ok(srv.insert("r_a", {"id": "r_a-sup", "embedding": [1, 0, 0, 0, 0, 0],
                                     "timestamp": h.rfc3339_ms(t0 + 50 * 3600000),
                                     "supersedes": ["r_a-3", "r_a-4"]}), 201)
        ids["r_a"].append("r_a-sup")
        # delete the newest of r_b: its clock must survive the restart
        newest_b = h.rfc3339_ms(t0 + 39 * 3600000)
        expect_ok(srv.delete("/v1/namespaces/r_b/segments/r_b-39"))
        expect_ok(srv.put("/v1/namespaces/r_empty", {"dim": 7}), 201)
        expect_ok(srv.insert("r_dropped", {"embedding": [1, 2]}), 201)
        expect_ok(srv.delete("/v1/namespaces/r_dropped"), 200)
        expect_ok(srv.insert("r_text", {"id": "tx", "text": "restart me gently"}), 201)
        ids["r_text"] = ["tx"]

        def state():
            lst = sorted(expect_ok(srv.get("/v1/namespaces"))["namespaces"], key=lambda x: x["name"])
            segs = {ns: all_segments(srv, ns, v) for ns, v in ids.items()}
            lists = {"r_a": listing(srv, "r_a", 6, include_superseded=True),
                     "r_a_coh": expect_ok(srv.retrieve("r_a", {"embedding": [1, 0, 0, 0, 0, 0], "k": 1000,
                                                                "coherence_weight": 0.5, "explain": True}))["results"],
                     "r_b": listing(srv, "r_b", 3),
                     "r_text": expect_ok(srv.retrieve("r_text", {"query": "restart me gently"}))["results"]}
            return lst, segs, lists

        before = state()
        eq(len(before[1]["r_b"]), 39, "deleted segment gone")
        for cycle in range(2):
            srv.restart()
            after = state()
            eq([{k: v for k, v in x.items()} for x in after[0]], before[0], "namespace stats after restart %d" % cycle)
            eq(after[1], before[1], "every segment (with its embedding) after restart %d" % cycle)
            for ns in before[2]:
                eq([(r["id"], r["seq"], r["timestamp"]) for r in after[2][ns]],
                   [(r["id"], r["seq"], r["timestamp"]) for r in before[2][ns]], "listing of %s" % ns)
                for a, b in zip(after[2][ns], before[2][ns]):
                    near(a["score"], b["score"], 1e-6, "score after restart")
                    if "gate" in b:
                        near(a["gate"], b["gate"], 1e-9, "gate (persisted degrees) after restart")
        # the clock and the seq survive
        expect_error(srv.insert("r_b", {"id": "late", "embedding": [1, 1, 1],
                                        "timestamp": h.rfc3339_ms(t0 + 38 * 3600000 + 1)}), 409,
                     "non_monotonic_timestamp", "clock of a deleted newest survives restart")
        b = expect_ok(srv.insert("r_b", {"id": "late", "embedding": [1, 1, 1], "timestamp": newest_b}), 201)
        eq(b["inserted"][0]["seq"], 41, "seq continues after restart (40 inserted, one deleted)")
        expect_error(srv.ns_stats("r_dropped"), 404, "not_found", "a dropped namespace stays dropped")
        st = expect_ok(srv.ns_stats("r_empty"))
        eq((st["count"], st["dim"]), (0, 7), "empty namespace survives")
        expect_error(srv.insert("r_empty", {"embedding": [1, 2]}), 400, "dimension_mismatch")
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_readers_never_see_half_a_batch():
    """Retrieves running while batches are inserted see whole batches only, with seq
    contiguous from 1 (a batch is published at once)."""
    srv = h.Server().start()
    try:
        ns, dim, size, n_batches = "vis", 4, 10, 90
        v = [1.0, 0.5, 0.25, 0.125]
        stop = threading.Event()
        errors = []

        def write():
            try:
                for b in range(n_batches):
                    segs = [{"id": "b%d-%d" % (b, j), "embedding": v} for j in range(size)]
                    r = srv.insert(ns, {"segments": segs})
                    if r[0] != 201:
                        errors.append("insert %d: %s" % (r[0], r[2]))
                        return
            finally:
                stop.set()

        t = threading.Thread(target=write, daemon=True)
        t.start()
        reads = 0
        while not stop.is_set() or reads < 3:
            st, _, body = srv.retrieve(ns, {"embedding": v, "k": 1000})
            if st == 404:
                continue
            eq(st, 200, "retrieve during inserts")
            ids = [r["id"] for r in body["results"]]
            counts = {}
            for sid in ids:
                counts[sid.split("-")[0]] = counts.get(sid.split("-")[0], 0) + 1
            bad = {k: c for k, c in counts.items() if c != size}
            check(not bad, "a reader saw part of a batch: %s" % bad)
            seqs = sorted(r["seq"] for r in body["results"])
            eq(seqs, list(range(1, len(seqs) + 1)), "visible seqs are a prefix")
            reads += 1
        t.join(60)
        check(not errors, "inserts failed: %s" % errors)
        eq(expect_ok(srv.ns_stats(ns))["count"], n_batches * size, "all inserted")
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_graph_random_operations_match_a_rebuild():
    """Random inserts, batch inserts, deletes, supersedes and compactions: after each,
    graph_edges/max_degree equal a from-scratch Python computation over the active
    segments; the same after a restart; coherence scores use the live gate."""
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 6)
        dim, ns = 3, "graphops"
        centers = [h.rand_vec(rng, dim) for _ in range(3)]
        segs = {}          # id -> row
        order = []
        t = h.now_ms() - 30 * DAY
        n = 0

        def new_vec():
            while True:
                raw = [x + rng.gauss(0, 0.45) for x in rng.choice(centers)]
                u = h.unit(raw)
                if all(abs(h.dot(u, r["vec"]) - 0.55) > 1e-4 for r in segs.values()):
                    return raw, u

        def forget(sid):
            # a deleted superseder releases its targets that have no other one left
            del segs[sid]
            order.remove(sid)
            for r in segs.values():
                by = r.get("sup_by")
                if by and sid in by:
                    by.discard(sid)
                    r["superseded"] = bool(by)

        def check_graph(what):
            _, edges, maxd = h.graph_stats(list(segs.values()))
            st = expect_ok(srv.ns_stats(ns))
            eq((st["graph_edges"], st["max_degree"]), (edges, maxd), "graph after %s" % what)
            eq(st["count"], sum(1 for r in segs.values() if not r.get("archived")), "count after %s" % what)

        for step in range(120):
            op = rng.random()
            active = [i for i in order if not segs[i].get("superseded") and not segs[i].get("archived")]
            if op < 0.45 or len(active) < 5:
                k = 1 if rng.random() < 0.6 else rng.randint(2, 6)
                batch = []
                for _ in range(k):
                    raw, u = new_vec()
                    t += rng.randint(0, 3600000)
                    sid = "g%d" % n
                    n += 1
                    batch.append({"id": sid, "embedding": raw, "timestamp": h.rfc3339_ms(t)})
                    segs[sid] = {"id": sid, "vec": u, "ts": t}
                    order.append(sid)
                b = expect_ok(srv.insert(ns, {"segments": batch} if k > 1 else batch[0]), 201)
                for rec in b["inserted"]:
                    segs[rec["id"]]["seq"] = rec["seq"]
                what = "insert of %d" % k
            elif op < 0.65:
                sid = rng.choice(order)
                expect_ok(srv.delete("/v1/namespaces/%s/segments/%s" % (ns, sid)))
                forget(sid)
                what = "delete of %s" % sid
            elif op < 0.85:
                victims = rng.sample(active, rng.randint(1, 2))
                raw, u = new_vec()
                t += 1000
                sid = "g%d" % n
                n += 1
                b = expect_ok(srv.insert(ns, {"id": sid, "embedding": raw, "timestamp": h.rfc3339_ms(t),
                                              "supersedes": victims}), 201)
                for v in victims:
                    segs[v]["superseded"] = True
                    segs[v].setdefault("sup_by", set()).add(sid)
                segs[sid] = {"id": sid, "vec": u, "ts": t, "seq": b["inserted"][0]["seq"]}
                order.append(sid)
                what = "supersede of %s" % victims
            else:
                target = max(1, len(active) - rng.randint(1, 3))
                purge = rng.random() < 0.5
                body = expect_ok(srv.compact(ns, {"target": target, "purge": purge}), 200)
                for sid in body["evicted"]:
                    if purge:
                        forget(sid)
                    else:
                        segs[sid]["archived"] = True
                what = "compaction to %d (purge %s)" % (target, purge)
            check_graph("step %d, %s" % (step, what))
        q = h.rand_vec(rng, dim)
        req = {"embedding": q, "k": 1000, "coherence_weight": 0.6, "include_superseded": True,
               "include_archived": True, "origin": h.rfc3339_ms(t)}
        res = expect_ok(srv.retrieve(ns, req))["results"]
        _, allr = h.reference(list(segs.values()), q, k=1000, coherence_weight=0.6, include_superseded=True,
                              include_archived=True, origin_ms=t)
        h.match_results(res, allr, 1000, what="live gates after random operations")
        srv.restart()
        check_graph("restart")
        res = expect_ok(srv.retrieve(ns, req))["results"]
        h.match_results(res, allr, 1000, what="gates after restart")
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_healthz_ok_only_once_loaded():
    """While a large store loads, /v1 answers 503 unavailable (or nothing yet), never a
    404 for a namespace still loading; the first /healthz 200 sees every segment."""
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 8)
        dim, n = 8, 30000
        t0 = h.now_ms() - 100 * DAY
        for k in range(0, n, 1000):
            segs = [{"embedding": [rng.random() - 0.5 for _ in range(dim)], "timestamp": (t0 + i * 1000) / 1000.0}
                    for i in range(k, k + 1000)]
            expect_ok(srv.insert("big", {"segments": segs}), 201)
        srv.stop()
        srv.spawn()
        deadline = time.monotonic() + 120
        early = []
        while time.monotonic() < deadline:
            check(srv.proc.poll() is None, "mnemod exited during start-up:\n%s" % srv.log_tail())
            try:
                st, hdr, body = srv.ns_stats("big")
            except (OSError, http.client.HTTPException):
                time.sleep(0.005)
                continue
            if st == 503:
                expect_error((st, hdr, body), 503, "unavailable", "stats while loading")
                early.append(st)
                hs = srv.get("/healthz")[0]
                check(hs in (200, 503), "healthz while loading: %r" % hs)
                continue
            eq(st, 200, "stats during start-up: %s" % (body,))
            eq(body["count"], n, "the first answer sees every segment")
            break
        else:
            raise h.Failure("server never answered during start-up")
        expect_ok(srv.get("/healthz"), 200)
        eq(expect_ok(srv.ns_stats("big"))["count"], n, "count after load")
        srv.stop()
    finally:
        srv.cleanup()


# ------------------------------------------------------------------ crash

class Writer(threading.Thread):
    """Inserts into one namespace until stopped or the server goes away, recording what
    was attempted and what was acknowledged."""

    def __init__(self, port, ns, tag, rng, dim, ts_base=None, cap=400):
        super().__init__(daemon=True)
        self.port, self.ns, self.tag, self.rng, self.dim = port, ns, tag, rng, dim
        self.ts = ts_base          # None: no timestamps (server clock)
        self.cap = cap
        self.attempts = []         # (ids, acked records {id: (seq, ts)} or None)
        self.stop = threading.Event()
        self.errors = []

    def run(self):
        n = 0
        conn = None
        while not self.stop.is_set() and n < self.cap:
            size = 1 if self.rng.random() < 0.5 else self.rng.randint(2, 20)
            segs = []
            for _ in range(size):
                s = {"id": "%s-%d" % (self.tag, n), "embedding": h.rand_vec(self.rng, self.dim)}
                if self.ts is not None:
                    if self.rng.random() < 0.7:
                        self.ts += self.rng.randint(0, 5000)
                    s["timestamp"] = h.rfc3339_ms(self.ts)
                segs.append(s)
                n += 1
            body = segs[0] if size == 1 and self.rng.random() < 0.5 else {"segments": segs}
            ids = [s["id"] for s in segs]
            entry = [ids, None]
            self.attempts.append(entry)
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                conn.request("POST", "/v1/namespaces/%s/segments" % self.ns, body=json.dumps(body),
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                data = r.read()
                if r.status == 201:
                    recs = json.loads(data)["inserted"]
                    entry[1] = {x["id"]: (x["seq"], x["timestamp"]) for x in recs}
                elif r.status in (503, 504):  # unacknowledged (504, cluster mode's
                    time.sleep(0.05)          # write_timeout: perhaps stored, may show up)
                else:
                    self.errors.append("unexpected %d %s" % (r.status, data[:200]))
                    return
            except (OSError, http.client.HTTPException, ValueError):
                return      # the server was killed: this attempt is unacknowledged
        if conn is not None:
            conn.close()


class KeepAlive:
    """GETs over one keep-alive connection (thousands of lookups per cycle)."""

    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def get(self, path):
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        return r.status, json.loads(r.read() or b"null")

    def close(self):
        self.conn.close()


def verify_namespace(srv, ns, attempts, what):
    """Every acknowledged segment present with its seq and timestamp; no half batch; seq
    unique; timestamps non-decreasing in seq order; the stats count equals what is present
    (so nothing that was never sent). Returns (acknowledged, present, max seq, max ts)."""
    st, _, body = srv.ns_stats(ns)
    if st == 404:       # killed before its first commit: nothing may have been acknowledged
        check(all(recs is None for _, recs in attempts), "%s: namespace lost with acknowledged data" % what)
        return 0, 0, 0, None
    stats = expect_ok((st, _, body), 200, "%s: stats" % what)
    c = KeepAlive(srv.port)
    present = {}
    acked = 0
    try:
        for ids, recs in attempts:
            have = []
            for sid in ids:
                code, g = c.get("/v1/namespaces/%s/segments/%s" % (ns, sid))
                check(code in (200, 404), "%s: GET %s answered %d" % (what, sid, code))
                if code == 200:
                    present[sid] = (g["seq"], g["timestamp"])
                have.append(code == 200)
            check(all(have) or not any(have), "%s: half batch %s present %s" % (what, ids, have))
            if recs is not None:
                for sid in ids:
                    check(sid in present, "%s: acknowledged %s lost" % (what, sid))
                    eq(present[sid], recs[sid], "%s: seq/timestamp of acknowledged %s" % (what, sid))
                    acked += 1
    finally:
        c.close()
    eq(stats["count"], len(present), "%s: stats count equals the segments sent and present" % what)
    rows = sorted(present.values())
    seqs = [r[0] for r in rows]
    eq(len(set(seqs)), len(seqs), "%s: seq unique" % what)
    tss = [h.parse_ts(r[1]) for r in rows]
    check(all(a <= b for a, b in zip(tss, tss[1:])), "%s: timestamps monotonic in seq order" % what)
    if rows:
        eq(stats["newest"], rows[-1][1], "%s: stats newest" % what)
    return acked, len(rows), (seqs[-1] if seqs else 0), (tss[-1] if tss else None)


@test
def test_crash_kill9_during_concurrent_inserts():
    srv = h.Server().start()
    rng = random.Random(SEED + 1)
    dim = 8
    history = []          # (ns, attempts) over every cycle
    deadline = time.monotonic() + CRASH_BUDGET_S
    cycles = acked_total = in_flight = 0
    try:
        while cycles < 3 or (time.monotonic() < deadline and cycles < 12):
            c = cycles
            base = h.now_ms() - 20 * DAY
            writers = [Writer(srv.port, "crash%d_now" % c, "c%dn%d" % (c, i), random.Random(rng.random()), dim,
                              cap=10 ** 6) for i in range(2)]
            for i in range(3):
                writers.append(Writer(srv.port, "crash%d_t%d" % (c, i), "c%dt%d" % (c, i),
                                      random.Random(rng.random()), dim, ts_base=base + i * DAY, cap=10 ** 6))
            for w in writers:
                w.start()
            time.sleep(rng.uniform(0.1, 1.2))
            srv.kill9()
            for w in writers:
                w.join(40)
                check(not w.is_alive(), "writer thread stuck after kill -9")
                check(not w.errors, "writer errors before the kill: %s" % w.errors[:3])
                in_flight += sum(1 for _, recs in w.attempts if recs is None)
            srv.start()
            by_ns = {}
            for w in writers:
                by_ns.setdefault(w.ns, []).extend(w.attempts)
            for ns, attempts in by_ns.items():
                acked, n, max_seq, max_ts = verify_namespace(srv, ns, attempts, "cycle %d %s" % (c, ns))
                acked_total += acked
                if n == 0:
                    continue
                # the server goes on: a new segment gets a larger seq and a timestamp >= the newest
                b = expect_ok(srv.insert(ns, {"embedding": [1.0] * dim}), 201, "insert after restart")
                rec = b["inserted"][0]
                check(rec["seq"] > max_seq, "%s: seq goes on after the crash" % ns)
                check(h.parse_ts(rec["timestamp"]) >= max_ts, "%s: clock goes on after the crash" % ns)
                attempts.append(([rec["id"]], {rec["id"]: (rec["seq"], rec["timestamp"])}))
            history.extend(by_ns.items())
            cycles += 1
        check(acked_total > 0, "no insert was acknowledged at all")
        check(in_flight > 0, "no request was in flight at any kill")
        # a clean restart at the end: every namespace of every cycle is still intact
        srv.restart()
        for ns, attempts in history:
            verify_namespace(srv, ns, attempts, "final %s" % ns)
        print("crash: %d kill -9 cycles, %d acknowledged segments verified (seq, timestamp), %d requests in "
              "flight at a kill all-or-nothing, %d namespaces monotonic" % (cycles, acked_total, in_flight,
                                                                           len(history)))
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_sigterm_drains_in_flight_inserts():
    """SIGTERM while inserts are in flight: exit status 0, every 201 is on disk, the others
    got 503 or no connection at all (never a 5xx other than 503)."""
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 5)
        dim = 16
        writers = [Writer(srv.port, "drain%d" % i, "d%d" % i, random.Random(rng.random()), dim, cap=10 ** 6)
                   for i in range(4)]
        for w in writers:
            w.start()
        # SIGTERM once inserts are surely in flight: every writer had one acknowledged
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(
                any(e[1] for e in list(w.attempts)) or w.errors for w in writers):
            time.sleep(0.02)
        srv.stop()          # asserts exit status 0 within the bound
        for w in writers:
            w.join(40)
            check(not w.is_alive(), "writer stuck after SIGTERM")
            check(not w.errors, "statuses other than 201/503 during the drain: %s" % w.errors[:3])
        srv.start()
        total = 0
        for w in writers:
            acked, _, _, _ = verify_namespace(srv, w.ns, w.attempts, "after drain %s" % w.ns)
            total += acked
        check(total > 0, "some inserts were acknowledged before the drain")
        srv.stop()
    finally:
        srv.cleanup()


# ------------------------------------------------------------------ compaction

def clustered(rng, n, dim, n_centers=5, noise=0.5):
    for _ in range(10):
        centers = [h.rand_vec(rng, dim) for _ in range(n_centers)]
        raws = [[x + rng.gauss(0, noise) for x in rng.choice(centers)] for _ in range(n)]
        rows = [{"id": "m%d" % i, "vec": h.unit(v)} for i, v in enumerate(raws)]
        if not h.near_threshold(rows):
            return raws
    return raws


def load(srv, ns, raws, t0):
    segs = [{"id": "m%d" % i, "embedding": v, "timestamp": h.rfc3339_ms(t0 + i * 60000), "text": "memory %d" % i}
            for i, v in enumerate(raws)]
    expect_ok(srv.insert(ns, {"segments": segs}), 201)
    return [s["id"] for s in segs]


def graph_from_server(srv, ns, ids):
    rows = []
    for sid, g in all_segments(srv, ns, ids).items():
        rows.append({"id": sid, "vec": g["embedding"], "archived": bool(g.get("archived")),
                     "superseded": bool(g.get("superseded_by"))})
    _, edges, maxd = h.graph_stats(rows)
    return edges, maxd


def check_compact_body(body, before, target, policy):
    for f in ("before", "after", "policy", "evicted", "took_ms"):
        check(f in body, "compact response field %r missing: %s" % (f, body))
    eq(body["before"], before, "before")
    eq(body["after"], min(target, before), "after")
    check(isinstance(body["policy"], str) and body["policy"], "policy named")
    if policy is not None:
        eq(body["policy"], policy, "policy echoed")
    ev = body["evicted"]
    check(isinstance(ev, list) and all(isinstance(x, str) for x in ev), "evicted is a list of ids")
    eq(len(ev), before - body["after"], "evicted count")
    eq(len(set(ev)), len(ev), "evicted ids unique")
    check(isinstance(body["took_ms"], (int, float)) and body["took_ms"] >= 0, "took_ms")


@test
def test_compaction_every_policy_dry_run_archive_restart():
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 2)
        dim, n, target = 8, 60, 25
        raws = clustered(rng, n, dim)
        t0 = h.now_ms() - 10 * DAY
        names = {}
        for p in POLICIES:
            ns = "cmp_%s" % (p or "default")
            names[p] = ns
            ids = load(srv, ns, raws, t0)
        results = {}
        for p in POLICIES:
            ns = names[p]
            snap = (expect_ok(srv.ns_stats(ns)), all_segments(srv, ns, ids))
            edges, maxd = graph_from_server(srv, ns, ids)
            eq((snap[0]["graph_edges"], snap[0]["max_degree"]), (edges, maxd), "%s: graph before" % ns)
            check(edges > 0, "clustered corpus has edges")
            req = {"target": target, "dry_run": True}
            if p:
                req["policy"] = p
            dry = expect_ok(srv.compact(ns, req), 200, "dry run %s" % ns)
            check_compact_body(dry, n, target, p)
            check(set(dry["evicted"]) <= set(ids), "evicted ids are segments")
            eq((expect_ok(srv.ns_stats(ns)), all_segments(srv, ns, ids)), snap, "%s: dry run changes nothing" % ns)
            del req["dry_run"]
            real = expect_ok(srv.compact(ns, req), 200, "compact %s" % ns)
            check_compact_body(real, n, target, p)
            eq(real["evicted"], dry["evicted"], "%s: the dry run predicted the eviction (deterministic)" % ns)
            results[p] = set(real["evicted"])
            st = expect_ok(srv.ns_stats(ns))
            eq((st["count"], st["archived"]), (target, n - target), "%s: stats after compaction" % ns)
            segs = all_segments(srv, ns, ids)
            eq(len(segs), n, "%s: archived segments are kept" % ns)
            for sid, g in segs.items():
                eq(bool(g.get("archived")), sid in results[p], "%s: archived flag of %s" % (ns, sid))
            edges, maxd = graph_from_server(srv, ns, ids)
            eq((st["graph_edges"], st["max_degree"]), (edges, maxd), "%s: graph over active segments" % ns)
            got = {r["id"] for r in listing(srv, ns, dim)}
            eq(got, set(ids) - results[p], "%s: archived vanish from retrieve" % ns)
            got = {r["id"] for r in listing(srv, ns, dim, include_archived=True)}
            eq(got, set(ids), "%s: include_archived brings them back" % ns)
            # scores with the live gate: archived segments are inactive (gate 0, out of the graph)
            rows = [{"id": sid, "seq": g["seq"], "ts": h.parse_ts(g["timestamp"]), "vec": g["embedding"],
                     "archived": bool(g.get("archived"))} for sid, g in segs.items()]
            q = h.rand_vec(rng, dim)
            for inc in (False, True):
                res = expect_ok(srv.retrieve(ns, {"embedding": q, "k": 100, "coherence_weight": 0.5,
                                                  "include_archived": inc, "origin": h.rfc3339_ms(t0)}))["results"]
                _, allr = h.reference(rows, q, k=100, coherence_weight=0.5, include_archived=inc, origin_ms=t0)
                h.match_results(res, allr, 100, what="%s: coherence scores after compaction (archived %s)" % (ns, inc))
            # a second compaction to a larger target is a no-op
            noop = expect_ok(srv.compact(ns, {"target": n, "policy": p} if p else {"target": n}), 200)
            eq((noop["before"], noop["after"], noop["evicted"]), (target, target, []), "%s: target >= count" % ns)
        # with no accesses and no context, coherence_weighted keeps the newest
        eq(results["coherence_weighted"], {"m%d" % i for i in range(n - target)},
           "coherence_weighted without accesses evicts the oldest")
        # restart: same state
        before = {p: (expect_ok(srv.ns_stats(ns)), all_segments(srv, ns, ids)) for p, ns in names.items()}
        srv.restart()
        for p, ns in names.items():
            eq((expect_ok(srv.ns_stats(ns)), all_segments(srv, ns, ids)), before[p], "%s: same after restart" % ns)
            got = {r["id"] for r in listing(srv, ns, dim)}
            eq(got, set(ids) - results[p], "%s: archived stay archived after restart" % ns)
        # purge deletes for good
        ns = names[None]
        pr = expect_ok(srv.compact(ns, {"target": 10, "purge": True}), 200, "purge")
        check_compact_body(pr, target, 10, None)
        check(not (set(pr["evicted"]) & results[None]), "purge considers only active segments")
        for sid in pr["evicted"]:
            expect_error(srv.seg(ns, sid), 404, "not_found", "purged %s" % sid)
        st = expect_ok(srv.ns_stats(ns))
        eq((st["count"], st["archived"]), (10, n - target), "stats after purge")
        srv.restart()
        st2 = expect_ok(srv.ns_stats(ns))
        eq(st2, st, "purge survives restart")
        for sid in pr["evicted"]:
            expect_error(srv.seg(ns, sid), 404, "not_found", "purged %s after restart" % sid)
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_compaction_ratio_weights_context():
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 3)
        dim, n = 6, 41
        raws = clustered(rng, n, dim, n_centers=4)
        t0 = h.now_ms() - 5 * DAY
        ns = "cmp_ratio"
        ids = load(srv, ns, raws, t0)
        body = expect_ok(srv.compact(ns, {"ratio": 0.5, "policy": "coherence_weighted", "dry_run": True}), 200)
        eq(body["after"], 20, "ratio 0.5 of 41 -> floor 20")
        body = expect_ok(srv.compact(ns, {"ratio": 1, "dry_run": True}), 200)
        eq((body["after"], body["evicted"]), (41, []), "ratio 1 is a no-op")
        # coherence only, one context vector: keep the 15 most similar (ties: older first)
        ctx = h.rand_vec(rng, dim)
        cu = h.unit(ctx)
        vecs = {sid: g["embedding"] for sid, g in all_segments(srv, ns, ids).items()}
        coh = [(max(0.0, h.dot(cu, vecs["m%d" % i])), i) for i in range(n)]
        keep = sorted(coh, key=lambda x: (-x[0], x[1]))[:15]
        margin = sorted(coh, key=lambda x: (-x[0], x[1]))
        body = expect_ok(srv.compact(ns, {"target": 15, "policy": "coherence_weighted", "dry_run": True,
                                          "weights": {"recency": 0, "frequency": 0, "coherence": 1},
                                          "context": [ctx]}), 200)
        if abs(margin[14][0] - margin[15][0]) > 1e-5:
            eq(set(body["evicted"]), {"m%d" % i for i in range(n)} - {"m%d" % i for _, i in keep},
               "coherence-only eviction")
        # recency only with an explicit empty context: the oldest go
        body = expect_ok(srv.compact(ns, {"target": 30, "policy": "coherence_weighted", "context": [],
                                          "weights": {"recency": 1, "frequency": 0, "coherence": 0}}), 200)
        eq(set(body["evicted"]), {"m%d" % i for i in range(11)}, "recency-only eviction")
        # dedup_gated: near-duplicates share a recency step; all-zero weights tie -> older kept first
        body = expect_ok(srv.compact(ns, {"target": 5, "policy": "dedup_gated", "dry_run": True, "context": [],
                                          "weights": {"recency": 0, "frequency": 0, "coherence": 0}}), 200)
        active = ["m%d" % i for i in range(11, n)]
        eq(set(body["evicted"]), set(active[5:]), "all ties: the lower (older) positions are kept")
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_compaction_default_keeps_newer_restatement():
    """Issue 3: when a newer memory restates an older one with changed content (a rotated
    password, a moved host), the default policy keeps the newer one."""
    srv = h.Server().start()
    try:
        dim, topics = 16, 6
        t0 = h.now_ms() - 20 * DAY
        e = lambda i: [1.0 if j == i else 0.0 for j in range(dim)]
        segs = []
        for i in range(topics):                          # the first versions, one per topic
            segs.append({"id": "old%d" % i, "embedding": e(i), "text": "topic %d, version 1" % i})
        for i in range(topics):                          # later: each restated with a change
            v = [0.9 * a + 0.4359 * b for a, b in zip(e(i), e(i + 8))]
            segs.append({"id": "new%d" % i, "embedding": v, "text": "topic %d, version 2" % i})
        for k, sg in enumerate(segs):
            sg["timestamp"] = h.rfc3339_ms(t0 + k * DAY)
        expect_ok(srv.insert("restate", {"segments": segs}), 201)
        body = expect_ok(srv.compact("restate", {"target": topics, "dry_run": True}), 200)
        eq(sorted(body["evicted"]), sorted("old%d" % i for i in range(topics)),
           "the default policy (%s) keeps the newer restatements" % body.get("policy"))
        # the same with some accesses on the old versions: still the current versions stay
        for _ in range(3):
            expect_ok(srv.retrieve("restate", {"embedding": e(0), "k": 1}))
        body = expect_ok(srv.compact("restate", {"target": topics}), 200)
        check("new0" not in body["evicted"], "the current version of topic 0 is kept: %s" % body["evicted"])
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_compaction_access_statistics_and_default_context():
    """SPEC section 5 through coherence_weighted: frequency = accesses by retrieve, an access
    moves the recency tick, the default context is the last 20 retrieve queries, and an
    explicit empty context means none."""
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 7)
        dim, n = 8, 30
        t0 = h.now_ms() - 3 * DAY

        def fresh(ns):
            ids = load(srv, ns, [h.rand_vec(rng, dim) for _ in range(n)], t0)
            return ids, {sid: g["embedding"] for sid, g in all_segments(srv, ns, ids).items()}

        cw = lambda **w: {"recency": w.get("r", 0), "frequency": w.get("f", 0), "coherence": w.get("c", 0)}
        # frequency: accesses counted per returned segment
        ids, vec = fresh("acc_freq")
        for sid, times in (("m3", 5), ("m17", 3), ("m8", 1)):
            for _ in range(times):
                r = expect_ok(srv.retrieve("acc_freq", {"embedding": vec[sid], "k": 1}))["results"]
                eq(r[0]["id"], sid, "a segment's own vector finds it")
        body = expect_ok(srv.compact("acc_freq", {"target": 3, "policy": "coherence_weighted", "context": [],
                                                  "weights": cw(f=1), "dry_run": True}))
        eq(set(ids) - set(body["evicted"]), {"m3", "m17", "m8"}, "frequency keeps the accessed")
        body = expect_ok(srv.compact("acc_freq", {"target": 2, "policy": "coherence_weighted", "context": [],
                                                  "weights": cw(f=1), "dry_run": True}))
        eq(set(ids) - set(body["evicted"]), {"m3", "m17"}, "frequency ranks by access count")
        # recency: an access moves the tick past every insert
        ids, vec = fresh("acc_rec")
        expect_ok(srv.retrieve("acc_rec", {"embedding": vec["m0"], "k": 1}))
        body = expect_ok(srv.compact("acc_rec", {"target": 2, "policy": "coherence_weighted", "context": [],
                                                 "weights": cw(r=1), "dry_run": True}))
        eq(set(ids) - set(body["evicted"]), {"m0", "m%d" % (n - 1)}, "the accessed oldest counts as recent")
        # default context: the last 20 retrieve queries
        ids, vec = fresh("acc_ctx")
        qx = h.unit(h.rand_vec(rng, dim))
        early = sorted(ids, key=lambda sid: h.dot(qx, vec[sid]))[:5]     # least like qx
        for sid in early:                                               # 5 queries that will roll out
            expect_ok(srv.retrieve("acc_ctx", {"embedding": vec[sid], "k": 1}))
        for _ in range(20):
            expect_ok(srv.retrieve("acc_ctx", {"embedding": qx, "k": 1}))
        coh = sorted(((max(0.0, h.dot(qx, vec["m%d" % i])), i) for i in range(n)), key=lambda x: (-x[0], x[1]))
        target = 10
        body = expect_ok(srv.compact("acc_ctx", {"target": target, "policy": "coherence_weighted",
                                                 "weights": cw(c=1), "dry_run": True}))
        if abs(coh[target - 1][0] - coh[target][0]) > 1e-5:
            eq(set(ids) - set(body["evicted"]), {"m%d" % i for _, i in coh[:target]},
               "the default context is the last 20 queries")
        body = expect_ok(srv.compact("acc_ctx", {"target": target, "policy": "coherence_weighted", "context": [],
                                                 "weights": cw(c=1), "dry_run": True}))
        eq(set(ids) - set(body["evicted"]), {"m%d" % i for i in range(target)},
           "an explicit empty context: every importance 0, the older positions first")
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_compaction_concurrent_inserts_survive():
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 4)
        dim, n = 32, 3000
        ns = "cmp_conc"
        t0 = h.now_ms() - 30 * DAY
        for k in range(0, n, 500):
            segs = [{"id": "b%d" % i, "embedding": h.rand_vec(rng, dim), "timestamp": h.rfc3339_ms(t0 + i * 1000)}
                    for i in range(k, k + 500)]
            expect_ok(srv.insert(ns, {"segments": segs}), 201)
        w = Writer(srv.port, ns, "live", random.Random(7), dim, cap=300)
        w.start()
        body = expect_ok(srv.compact(ns, {"target": 1000}), 200, "compact while inserting")
        check(body["after"] <= 1000 or body["before"] > n, "compaction result")
        w.join(60)
        check(not w.errors, "inserts during compaction failed: %s" % w.errors[:3])
        acked = [(ids, recs) for ids, recs in w.attempts if recs is not None]
        check(acked, "some inserts were acknowledged during the compaction")
        for ids, recs in acked:
            for sid in ids:
                g = expect_ok(srv.seg(ns, sid), 200, "inserted during compaction: %s" % sid)
                eq((g["seq"], g["timestamp"]), recs[sid], "seq/timestamp of %s" % sid)
        srv.restart()
        for ids, recs in acked:
            for sid in ids:
                expect_ok(srv.seg(ns, sid), 200, "after restart: %s" % sid)
        srv.stop()
    finally:
        srv.cleanup()


if __name__ == "__main__":
    h.main()
