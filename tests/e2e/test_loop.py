"""test_loop.py - the event loop and the request pool under many clients at once: whatever
they mix (a large answer, a drain in their middle), the others are served, every answer is
right, no request is lost and no acknowledged write either.

    python3 tests/e2e/test_loop.py build/release/mnemod [filter ...]
"""
import http.client
import json
import random
import threading
import time

import harness as h
from harness import check, eq, expect_ok, test

SEED = int(h.os.environ.get("MEM_TEST_SEED", "20260906"))


def keepalive(srv):
    return http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)


def call(conn, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    return r.status, r.read()


@test
def test_loop_large_answer_does_not_stall_others():
    """A retrieve with a tiny body but a large answer (k=300 segments of 60 KiB text: 18 MB
    to fetch and encode) is made off the loop: meanwhile a probe on another connection waits
    for none of it. Measured against the big retrieve itself (no absolute time): a loop that
    fetched and encoded the answer would hold every probe for most of each retrieve."""
    srv = h.Server().start()
    rng = random.Random(SEED + 1)
    text = "x" * (60 * 1024)
    n = 300
    expect_ok(srv.put("/v1/namespaces/big", {"dim": 4}), 201, "create")
    for b in range(0, n, 100):
        segs = [{"id": "s%d" % i, "text": "%s %d" % (text, i), "embedding": h.rand_vec(rng, 4)}
                for i in range(b, b + 100)]
        expect_ok(srv.insert("big", {"segments": segs}), 201, "batch")
    stop = threading.Event()
    probes = []  # (start, end) of each probe

    def prober():
        pc = keepalive(srv)
        try:
            while not stop.is_set():
                t = time.monotonic()
                st, _ = call(pc, "GET", "/healthz")
                probes.append((t, time.monotonic(), st))
                time.sleep(0.002)
        finally:
            pc.close()

    th = threading.Thread(target=prober, daemon=True)
    th.start()
    conn = keepalive(srv)
    spans = []
    bodies = []
    try:
        for i in range(5):
            t = time.monotonic()
            st, body = call(conn, "POST", "/v1/namespaces/big/retrieve",
                            {"embedding": h.rand_vec(rng, 4), "k": n})
            spans.append((t, time.monotonic()))
            eq(st, 200, "big retrieve %d" % i)
            bodies.append(body)  # parsed after the probes: an 18 MB parse holds the GIL
    finally:
        conn.close()
        stop.set()
        th.join(60)
    for i, body in enumerate(bodies):
        eq(len(json.loads(body)["results"]), n, "big retrieve %d: results" % i)
    check(all(p[2] == 200 for p in probes), "every probe answered 200")
    # per big retrieve: the longest probe that overlapped it, against the retrieve's own time;
    # the median of the five, so that one preemption of a loaded machine decides nothing
    ratios = []
    for a, b in spans:
        during = [e - s for s, e, _ in probes if s < b and e > a]
        check(during, "probes ran during the big retrieve")
        ratios.append(max(during) / (b - a))
    ratio = sorted(ratios)[len(ratios) // 2]
    print("longest probe / big retrieve, per retrieve: %s" % " ".join("%.2f" % r for r in ratios))
    check(ratio < 0.5, "probes waited %.0f%% of a big retrieve's time (median of %s): the loop "
          "was held by it" % (ratio * 100, ["%.2f" % r for r in ratios]))
    srv.stop()


class Client:
    """One keep-alive connection; a request whose connection breaks answers None."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def call(self, method, path, body=None, raw=None):
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
            hdrs = {"Content-Type": "application/json"} if data is not None else {}
            self.conn.request(method, path, body=data, headers=hdrs)
            r = self.conn.getresponse()
            payload = r.read()
            if (r.getheader("Connection") or "").lower() == "close":
                self.close()
            try:
                return r.status, json.loads(payload) if payload else None
            except ValueError:
                return r.status, payload
        except (OSError, http.client.HTTPException):
            self.close()
            return None, None

    def close(self):
        if self.conn is not None:
            self.conn.close()
        self.conn = None


class Mix(threading.Thread):
    """Keep-alive client mixing single inserts, deletes, retrieves, exports, compactions (of
    namespace `scratch`) and bad bodies until the server goes away. Records what was
    acknowledged, and checks each retrieve against what was surely visible during it."""

    def __init__(self, port, wid, book, dim):
        super().__init__(daemon=True)
        self.port, self.wid, self.book, self.dim = port, wid, book, dim
        self.rng = random.Random(SEED * 31 + wid)
        self.errors = []
        self.ops = 0
        self.checked = 0  # retrieves checked against a non-empty visible set

    def err(self, msg):
        self.errors.append(msg)

    def run(self):
        c = Client(self.port)
        b = self.book
        mine = []
        n = 0
        down = 0
        while down < 3 and self.ops < 5000:
            n += 1
            r = self.rng.random()
            if r < 0.30:
                sid = "w%d-%d" % (self.wid, n)
                v = h.rand_vec(self.rng, self.dim)
                with b["mu"]:
                    b["sent"][sid] = h.unit(v)
                st, body = c.call("POST", "/v1/namespaces/mix/segments",
                                  {"id": sid, "embedding": v, "text": "mix %s" % sid})
                if st == 201:
                    with b["mu"]:
                        b["acked"][sid] = time.monotonic()
                    mine.append(sid)
                elif st not in (None, 503):
                    self.err("insert %s: %s %s" % (sid, st, body))
            elif r < 0.40 and mine:
                sid = mine.pop(self.rng.randrange(len(mine)))
                with b["mu"]:
                    b["deleting"][sid] = time.monotonic()
                st, body = c.call("DELETE", "/v1/namespaces/mix/segments/" + sid)
                if st == 200:
                    with b["mu"]:
                        b["deleted"][sid] = time.monotonic()
                elif st not in (None, 503):
                    self.err("delete %s: %s %s" % (sid, st, body))
            elif r < 0.45:
                segs = [{"id": "x%d-%d-%d" % (self.wid, n, i), "embedding": h.rand_vec(self.rng, self.dim)}
                        for i in range(20)]
                st, body = c.call("POST", "/v1/namespaces/scratch/segments", {"segments": segs})
                if st not in (None, 201, 503):
                    self.err("batch: %s %s" % (st, body))
                st, body = c.call("POST", "/v1/namespaces/scratch/compact", {"target": 30})
                if st not in (None, 200, 503):
                    self.err("compact: %s %s" % (st, body))
            elif r < 0.48:
                st, body = c.call("GET", "/v1/namespaces/scratch/export")
                if st not in (None, 200, 404, 503):
                    self.err("export: %s" % st)
            elif r < 0.55:
                bad = self.rng.choice([b'{"embedding":[1,', b'{"embedding":[1,2,3]}', b'[]',
                                       b'{"embedding":"%%%"}', b'{"k":0,"embedding":[1,0,0,0,0,0,0,0]}'])
                st, body = c.call("POST", "/v1/namespaces/mix/retrieve", raw=bad)
                if st is not None and st != 503 and not (
                        400 <= st < 500 and isinstance(body, dict) and "error" in body):
                    self.err("bad body %r: %s %s" % (bad, st, body))
            else:
                q = h.unit(h.rand_vec(self.rng, self.dim))
                k = self.rng.choice([1, 4, 16])
                t0 = time.monotonic()
                st, body = c.call("POST", "/v1/namespaces/mix/retrieve", {"embedding": q, "k": k})
                t1 = time.monotonic()
                if st == 200:
                    self.check_retrieve(q, k, body["results"], t0, t1)
                elif st not in (None, 404, 503):
                    self.err("retrieve: %s %s" % (st, body))
            self.ops += 1
            down = down + 1 if st is None else 0
        c.close()

    def check_retrieve(self, q, k, got, t0, t1):
        b = self.book
        with b["mu"]:
            sent = dict(b["sent"])
            # surely visible: acknowledged before the request began, never deleted before its end
            sure = [sid for sid, t in b["acked"].items() if t < t0 and
                    not (sid in b["deleting"] and b["deleting"][sid] < t1)]
            gone = {sid for sid, t in b["deleted"].items() if t < t0}  # acknowledged before
        self.checked += bool(sure)
        scores = []
        for g in got:
            sid = g["id"]
            if sid not in sent or sid in gone:
                self.err("retrieve returned %s (never sent or deleted before)" % sid)
                return
            want = h.dot(q, sent[sid])
            if abs(g["score"] - want) > 1e-5:
                self.err("retrieve score of %s: %r, want %r" % (sid, g["score"], want))
            scores.append(g["score"])
        if scores != sorted(scores, reverse=True):
            self.err("retrieve results out of order: %r" % scores)
        ids = {g["id"] for g in got}
        floor = scores[-1] if len(scores) == k else -2.0
        for sid in sure:
            if sid not in ids and h.dot(q, sent[sid]) > floor + 1e-5:
                self.err("retrieve missed %s (score %.6f > k-th %.6f), visible all along"
                         % (sid, h.dot(q, sent[sid]), floor))
                return


@test
def test_loop_superseding_insert_never_hides_both_versions():
    """Chains of segments, each insert superseding the chain's previous one, while readers
    retrieve (by vector and by text) and read the stats: every answer holds exactly one
    version of every chain, never the old one gone before the new one is there, and the
    stats count as many active segments as there are chains."""
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 3)
        n, dim, gens = 20, 8, 15
        first = [{"id": "c%d-0" % i, "text": "chain link %d" % i, "embedding": h.rand_vec(rng, dim)}
                 for i in range(n)]
        expect_ok(srv.insert("sup", {"segments": first}), 201, "first versions")
        stop = threading.Event()
        bad = []
        reads = [0, 0, 0]

        def chain_of(r):
            return r["id"].split("-")[0]

        def reader(kind):
            conn = keepalive(srv)
            rr = random.Random(SEED + 4 + kind)
            try:
                while not stop.is_set():
                    if kind == 2:
                        st, body = call(conn, "GET", "/v1/namespaces/sup")
                        b = json.loads(body)
                        if st != 200 or b["count"] - b["superseded"] != n:
                            bad.append(("stats", st, b))
                    else:
                        req = {"embedding": h.rand_vec(rr, dim), "k": 100} if kind == 0 else \
                            {"query": "chain link", "match": "text", "k": 100}
                        st, body = call(conn, "POST", "/v1/namespaces/sup/retrieve", req)
                        res = json.loads(body).get("results", []) if st == 200 else []
                        chains = sorted(chain_of(r) for r in res)
                        if st != 200 or chains != sorted("c%d" % i for i in range(n)):
                            bad.append((kind, st, [r["id"] for r in res]))
                    reads[kind] += 1
            finally:
                conn.close()

        threads = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(3)]
        for t in threads:
            t.start()
        conn = keepalive(srv)
        try:
            for g in range(1, gens + 1):
                for i in range(n):
                    seg = {"id": "c%d-%d" % (i, g), "text": "chain link %d" % i,
                           "embedding": h.rand_vec(rng, dim), "supersedes": ["c%d-%d" % (i, g - 1)]}
                    st, body = call(conn, "POST", "/v1/namespaces/sup/segments", seg)
                    eq(st, 201, "superseding insert %s: %s" % (seg["id"], body[:200]))
        finally:
            conn.close()
            stop.set()
            for t in threads:
                t.join(60)
        check(min(reads) > 0, "every reader read (%s)" % reads)
        check(not bad, "%d of %d reads saw a chain with no version or two: %s"
              % (len(bad), sum(reads), bad[:3]))
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_loop_patch_never_answers_a_filter_with_other_values():
    """Patches flip segments' metadata and source between two values while readers retrieve
    filtered by one of them: every result carries the values its filter asked for, never a
    segment chosen by values that were not committed yet, nor one answered with values
    committed after the scan chose it."""
    srv = h.Server().start()
    try:
        rng = random.Random(SEED + 5)
        n, dim = 20, 8
        segs = [{"id": "p%d" % i, "embedding": h.rand_vec(rng, dim), "source": "bob",
                 "metadata": {"user": "bob"}} for i in range(n)]
        expect_ok(srv.insert("pat", {"segments": segs}), 201, "segments")
        stop = threading.Event()
        bad = []
        reads = [0, 0]

        def reader(kind):
            conn = keepalive(srv)
            rr = random.Random(SEED + 6 + kind)
            try:
                while not stop.is_set():
                    req = {"embedding": h.rand_vec(rr, dim), "k": 100}
                    if kind == 0:
                        req["filter"] = {"user": "ana"}
                    else:
                        req["source"] = "ana"
                    st, body = call(conn, "POST", "/v1/namespaces/pat/retrieve", req)
                    eq(st, 200, "retrieve")
                    for r in json.loads(body)["results"]:
                        got = r.get("metadata", {}).get("user") if kind == 0 else r.get("source")
                        if got != "ana":
                            bad.append((kind, r["id"], got))
                    reads[kind] += 1
            finally:
                conn.close()

        threads = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(2)]
        for t in threads:
            t.start()
        conn = keepalive(srv)
        try:
            for g in range(300):
                user = "ana" if (g // n) % 2 == 0 else "bob"
                st, body = call(conn, "PATCH", "/v1/namespaces/pat/segments/p%d" % (g % n),
                                {"metadata": {"user": user}, "source": user})
                eq(st, 200, "patch %d: %s" % (g, body[:200]))
        finally:
            conn.close()
            stop.set()
            for t in threads:
                t.join(60)
        check(min(reads) > 0, "every reader read (%s)" % reads)
        check(not bad, "%d results of %d reads carried other values than their filter's: %s"
              % (len(bad), sum(reads), bad[:5]))
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_loop_mixed_clients_then_sigterm():
    """Twelve keep-alive clients mix single inserts, deletes, retrieves (each checked
    against what was surely visible while it ran), batch inserts, compactions, exports and
    bad bodies; SIGTERM in their middle drains: exit 0, every bad body was a JSON 4xx, every
    acknowledged insert is there after a restart and every acknowledged delete is gone, and
    retrieves then equal the brute-force reference."""
    dim = 8
    srv = h.Server(["--threads", "4"]).start()
    try:
        expect_ok(srv.put("/v1/namespaces/mix", {"dim": dim}), 201, "create mix")
        expect_ok(srv.put("/v1/namespaces/scratch", {"dim": dim}), 201, "create scratch")
        book = {"mu": threading.Lock(), "sent": {}, "acked": {}, "deleting": {}, "deleted": {}}
        clients = [Mix(srv.port, i, book, dim) for i in range(12)]
        for c in clients:
            c.start()
        # SIGTERM in the middle of it all, once the clients got through some load (at least
        # 2.5 s; a slow machine takes longer to reach the counts asserted below)
        t0 = time.monotonic()
        while time.monotonic() < t0 + 120 and (
                time.monotonic() < t0 + 2.5 or sum(c.ops for c in clients) <= 200
                or sum(c.checked for c in clients) <= 50):
            time.sleep(0.05)
        srv.stop()  # exit 0 within the bound
        for c in clients:
            c.join(60)
            check(not c.is_alive(), "a client is stuck after the drain")
        errors = [e for c in clients for e in c.errors]
        check(not errors, "%d wrong answers, first: %s" % (len(errors), errors[:3]))
        check(sum(c.ops for c in clients) > 200, "the clients got through some load")
        check(sum(c.checked for c in clients) > 50, "retrieves were checked during the load")
        srv.start()
        st, _, body = srv.get("/v1/namespaces/mix/segments?limit=1000&embedding=true")
        present = {}
        while True:
            expect_ok((st, None, body), 200, "list")
            for g in body["segments"]:
                present[g["id"]] = g
            if not body.get("next"):
                break
            st, _, body = srv.get("/v1/namespaces/mix/segments?limit=1000&embedding=true&after=" + body["next"])
        acked, deleted = set(book["acked"]), book["deleted"]
        lost = [sid for sid in acked - set(book["deleting"]) if sid not in present]
        check(not lost, "acknowledged inserts lost: %s" % lost[:5])
        back = [sid for sid in deleted if sid in present]
        check(not back, "acknowledged deletes came back: %s" % back[:5])
        check(set(present) <= set(book["sent"]), "only what was sent is stored")
        check(len(acked) > 20, "some inserts were acknowledged (%d)" % len(acked))
        segs = [{"id": sid, "seq": g["seq"], "ts": 0, "vec": g["embedding"]} for sid, g in present.items()]
        rng = random.Random(SEED + 2)
        for i in range(10):
            q = h.rand_vec(rng, dim)
            want, everything = h.reference(segs, q, k=10, origin_ms=0, graph=({}, 0, 0))
            st, _, body = srv.retrieve("mix", {"embedding": q, "k": 10})
            eq(st, 200, "retrieve after restart")
            h.match_results(body["results"], everything, 10, what="retrieve %d after restart" % i)
        srv.stop()
    finally:
        srv.cleanup()


if __name__ == "__main__":
    h.main()
