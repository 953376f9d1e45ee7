"""test_crash_cycles.py - crash consistency: concurrent writes, SIGKILL, restart, verify (issue 5).

Each cycle runs, against one mnemod process and one database file:
  - two writers on a server-clock namespace (single and batch inserts, inserts that
    supersede one of their own earlier segments, hard deletes of their own segments),
  - one writer on an explicit-timestamp namespace (single and batch inserts, plus batches
    that are invalid on purpose: a timestamp going backwards inside the batch),
  - one compactor looping POST .../compact (archive, ratio 0.9) on the server-clock
    namespace, so a compaction is usually in flight,
then SIGKILLs the server at a random moment, restarts it on the same file and checks:
  1. every acknowledged insert is present with the seq and timestamp it was acknowledged
     with; every acknowledged delete is absent; a rejected request wrote nothing;
  2. no unacknowledged batch is half present; nothing is present that was never sent;
  3. supersession and archiving are what the acknowledged operations say (an insert in
     flight with `supersedes` is all or nothing, including the mark);
  4. the monotonic rule: seq unique, timestamps non-decreasing in seq order, and the next
     insert gets a larger seq and a timestamp >= the newest (also after deleting it);
  5. the graph: stats graph_edges / max_degree and every explain gate equal a rebuild in
     Python from the stored unit vectors (GET ?embedding=true) at the threshold;
  6. retrieve equals the scalar reference of SPEC section 4 (harness.reference) for a few
     queries with decay, coherence weight, filters and include_* flags;
  7. every namespace of earlier cycles is exactly as it was verified (stats and listing).
Every other cycle runs with --sync normal (SIGKILL is a process crash, not a power loss,
so nothing acknowledged may be lost in that mode either).

CRASH_CYCLES (default 20) and CRASH_SEED set the cycle count and the seed;
both are printed.
"""

import http.client
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, near, expect_ok  # noqa: E402

SEED = int(os.environ.get("CRASH_SEED", str(int(time.time()) % 1000000)))
CYCLES = int(os.environ.get("CRASH_CYCLES", "30"))
DIM = 8
THRESHOLD = 0.55
EPS = 2e-6          # cosines within EPS of the threshold may fall either way (float32 sums)
HOUR = 3600000
h.TEST_TIMEOUT = max(h.TEST_TIMEOUT, 60 + 20 * CYCLES)


class Client:
    """A keep-alive connection that reports None when the server is gone."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def call(self, method, path, body=None):
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            hdrs = {}
            data = None
            if body is not None:
                data = json.dumps(body)
                hdrs["Content-Type"] = "application/json"
            self.conn.request(method, path, body=data, headers=hdrs)
            r = self.conn.getresponse()
            raw = r.read()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = raw
            return r.status, parsed
        except (OSError, http.client.HTTPException):
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return None, None

    def close(self):
        if self.conn is not None:
            self.conn.close()


class Worker(threading.Thread):
    """Runs one stream of operations until stopped or the server dies. Every operation is
    logged before it is sent: [kind, payload, status or None, response body]."""

    def __init__(self, port, ns, tag, rng, explicit_ts=None, compactor=False, dropper=False, cap=400):
        super().__init__(daemon=True)
        self.port, self.ns, self.tag, self.rng = port, ns, tag, rng
        self.ts = explicit_ts
        self.compactor = compactor
        self.dropper = dropper
        self.cap = cap
        self.log = []
        self.stop = threading.Event()
        self.n = 0
        self.plain = []          # own acked ids that neither supersede nor are superseded/deleted
        self.unexpected = []

    def new_seg(self, advance=True):
        sid = "%s-%d" % (self.tag, self.n)
        self.n += 1
        s = {"id": sid, "embedding": h.rand_vec(self.rng, DIM), "source": self.rng.choice(["a", "b"])}
        if self.rng.random() < 0.3:
            s["text"] = "memory %s" % sid
        if self.ts is not None:
            if advance and self.rng.random() < 0.7:
                self.ts += self.rng.randint(0, 90000)
            s["timestamp"] = h.rfc3339_ms(self.ts)
        return s

    def run(self):
        c = Client(self.port)
        try:
            while not self.stop.is_set() and self.n < self.cap:
                if self.compactor:
                    if not self.compact(c):
                        return
                    time.sleep(self.rng.uniform(0.0, 0.05))
                elif self.dropper:
                    if not self.drop_step(c):
                        return
                elif not self.step(c):
                    return
                else:
                    time.sleep(self.rng.uniform(0.0, 0.008))
        finally:
            c.close()

    def compact(self, c):
        req = {"ratio": 0.9}
        entry = ["cmp", req, None, None]
        self.log.append(entry)
        st, body = c.call("POST", "/v1/namespaces/%s/compact" % self.ns, req)
        entry[2], entry[3] = st, body
        if st is None:
            return False
        if st not in (200, 404):
            self.unexpected.append("compact: %s %s" % (st, body))
        self.n += 1
        return True

    def drop_step(self, c):
        """Insert small batches into the namespace and drop it now and then."""
        if self.rng.random() < 0.25:
            entry = ["drop", None, None, None]
            self.log.append(entry)
            st, body = c.call("DELETE", "/v1/namespaces/%s" % self.ns)
            entry[2], entry[3] = st, body
            if st is None:
                return False
            if st not in (200, 404):
                self.unexpected.append("drop: %s %s" % (st, body))
            return True
        segs = [self.new_seg() for _ in range(self.rng.randint(1, 5))]
        entry = ["ins", segs, None, None]
        self.log.append(entry)
        st, resp = c.call("POST", "/v1/namespaces/%s/segments" % self.ns, {"segments": segs})
        entry[2], entry[3] = st, resp
        if st is None:
            return False
        if st not in (201, 503):
            self.unexpected.append("insert: %s %s" % (st, resp))
        return True

    def step(self, c):
        r = self.rng.random()
        path = "/v1/namespaces/%s/segments" % self.ns
        if self.ts is None and r < 0.12 and self.plain:
            sid = self.plain.pop(self.rng.randrange(len(self.plain)))
            entry = ["del", sid, None, None]
            self.log.append(entry)
            st, body = c.call("DELETE", "%s/%s" % (path, sid))
            entry[2], entry[3] = st, body
            if st is None:
                return False
            if st != 200:
                self.unexpected.append("delete %s: %s %s" % (sid, st, body))
            return True
        bad = False
        if self.ts is None and r < 0.25 and self.plain:
            target = self.plain.pop(self.rng.randrange(len(self.plain)))
            s = self.new_seg()
            s["supersedes"] = [target]
            segs = [s]
            body = s
        else:
            size = 1 if self.rng.random() < 0.5 else self.rng.randint(2, 16)
            segs = [self.new_seg() for _ in range(size)]
            if self.ts is not None and size >= 3 and self.rng.random() < 0.15:
                # invalid on purpose: one timestamp goes backwards inside the batch
                i = self.rng.randrange(1, size)
                segs[i]["timestamp"] = h.rfc3339_ms(h.parse_ts(segs[i - 1]["timestamp"]) - 1000)
                bad = True
            body = segs[0] if size == 1 and self.rng.random() < 0.5 else {"segments": segs}
        entry = ["ins", segs, None, None]
        self.log.append(entry)
        st, resp = c.call("POST", path, body)
        entry[2], entry[3] = st, resp
        if st is None:
            return False
        if bad:
            if st != 409:
                self.unexpected.append("bad batch answered %s %s" % (st, resp))
            return True
        if st == 201:
            for s in segs:
                if "supersedes" not in s:
                    self.plain.append(s["id"])
        elif st != 503:
            self.unexpected.append("insert: %s %s" % (st, resp))
        return True


# ------------------------------------------------------------------ verification

def fetch(srv, ns, ids):
    """{id: GET body with embedding} of the ids that exist."""
    out = {}
    c = Client(srv.port)
    try:
        for sid in ids:
            st, body = c.call("GET", "/v1/namespaces/%s/segments/%s?embedding=true" % (ns, sid))
            check(st in (200, 404), "GET %s/%s: status %s %s" % (ns, sid, st, body))
            if st == 200:
                out[sid] = body
    finally:
        c.close()
    return out


def rows_of(present):
    return [{"id": sid, "seq": g["seq"], "ts": h.parse_ts(g["timestamp"]), "vec": g["embedding"],
             "source": g.get("source"), "superseded": g.get("superseded_by") is not None,
             "archived": bool(g.get("archived"))} for sid, g in present.items()]


def graph_bounds(rows):
    """Degrees at threshold+EPS (fewest edges) and threshold-EPS (most edges)."""
    act = [r for r in rows if not r["superseded"] and not r["archived"]]
    lo = {r["id"]: 0 for r in act}
    hi = dict(lo)
    e_lo = e_hi = 0
    for i in range(len(act)):
        vi = act[i]["vec"]
        for j in range(i + 1, len(act)):
            c = h.dot(vi, act[j]["vec"])
            if c >= THRESHOLD - EPS:
                hi[act[i]["id"]] += 1
                hi[act[j]["id"]] += 1
                e_hi += 1
                if c >= THRESHOLD + EPS:
                    lo[act[i]["id"]] += 1
                    lo[act[j]["id"]] += 1
                    e_lo += 1
    return lo, hi, e_lo, e_hi


def verify_ns(srv, ns, workers, what, stats_out):
    """Checks 1-6 for one namespace. Returns a dict of counters."""
    log = [e for w in workers for e in w.log]
    sent = {}
    for kind, payload, st, body in log:
        if kind == "ins":
            for s in payload:
                sent[s["id"]] = s
    present = fetch(srv, ns, sorted(sent))
    ns_st, _, stats = srv.ns_stats(ns)
    if ns_st == 404:
        check(not present, "%s: segments readable but the namespace is gone" % what)
    n = {"acked": 0, "absent_ok": 0, "unacked": 0, "deleted": 0, "superseded": 0, "archived": 0}
    acked_max_seq, acked_max_ts = 0, None
    inflight_cmp = False
    evicted = set()
    superseder = {}     # target id -> id of the present segment that supersedes it
    deleted_acked = set()
    for kind, payload, st, body in log:
        if kind == "del":
            if st == 200:
                deleted_acked.add(payload)
                n["deleted"] += 1
            continue
        if kind == "cmp":
            if st is None:
                inflight_cmp = True
            elif st == 200:
                evicted.update(body["evicted"])
            continue
    for kind, payload, st, body in log:
        if kind != "ins":
            continue
        ids = [s["id"] for s in payload]
        have = [i in present for i in ids]
        if st is None:
            n["unacked"] += 1
            # a batch is atomic; a later acked delete may have removed a member only if the
            # insert was acked, which it was not
            check(all(have) or not any(have), "%s: unacknowledged batch half present: %s %s"
                  % (what, ids, have))
        elif st in (200, 201):
            recs = {r["id"]: r for r in body["inserted"]}
            for s in payload:
                sid = s["id"]
                r = recs.get(sid)
                check(r is not None, "%s: %s missing from the insert answer" % (what, sid))
                acked_max_seq = max(acked_max_seq, r["seq"])
                ts = h.parse_ts(r["timestamp"])
                acked_max_ts = ts if acked_max_ts is None else max(acked_max_ts, ts)
                if sid in deleted_acked:
                    check(sid not in present, "%s: acknowledged delete of %s undone" % (what, sid))
                    continue
                if sid not in present:
                    if any(e[0] == "del" and e[1] == sid for e in log):
                        n["absent_ok"] += 1    # its delete was in flight
                        continue
                    raise h.Failure("%s: acknowledged insert %s lost" % (what, sid))
                g = present[sid]
                eq((g["seq"], g["timestamp"]), (r["seq"], r["timestamp"]),
                   "%s: seq/timestamp of acknowledged %s" % (what, sid))
                n["acked"] += 1
        else:
            check(not any(have), "%s: rejected insert (%s) is present: %s" % (what, st, ids))
        for s in payload:
            if s["id"] in present and "supersedes" in s:
                superseder[s["supersedes"][0]] = s["id"]
    # contents, supersession, archiving
    for sid, g in present.items():
        s = sent[sid]
        eq(g.get("source"), s.get("source"), "%s: source of %s" % (what, sid))
        eq(g.get("text"), s.get("text"), "%s: text of %s" % (what, sid))
        want_vec = h.unit(s["embedding"])
        for a, b in zip(g["embedding"], want_vec):
            near(a, b, 1e-6, "%s: embedding of %s" % (what, sid))
        eq(g.get("superseded_by"), superseder.get(sid), "%s: superseded_by of %s" % (what, sid))
        if g.get("superseded_by"):
            n["superseded"] += 1
        if g.get("archived"):
            n["archived"] += 1
            check(sid in evicted or inflight_cmp,
                  "%s: %s archived but no compaction evicted it" % (what, sid))
        elif sid in evicted:
            check(g.get("superseded_by") is not None,
                  "%s: %s evicted by an acknowledged compaction but active" % (what, sid))
    # monotonic rule
    rows = rows_of(present)
    rows.sort(key=lambda r: r["seq"])
    seqs = [r["seq"] for r in rows]
    eq(len(set(seqs)), len(seqs), "%s: seq unique" % what)
    for a, b in zip(rows, rows[1:]):
        check(a["ts"] <= b["ts"], "%s: timestamps out of order: %s (seq %d) > %s (seq %d)"
              % (what, a["ts"], a["seq"], b["ts"], b["seq"]))
    if ns_st == 404:
        return n, rows
    expect_ok((ns_st, None, stats), 200, "%s: stats" % what)
    # stats
    eq(stats["count"], sum(1 for r in rows if not r["archived"]), "%s: stats count" % what)
    eq(stats["archived"], sum(1 for r in rows if r["archived"]), "%s: stats archived" % what)
    eq(stats["superseded"], sum(1 for r in rows if r["superseded"] and not r["archived"]),
       "%s: stats superseded" % what)
    # graph
    lo, hi, e_lo, e_hi = graph_bounds(rows)
    check(e_lo <= stats["graph_edges"] <= e_hi, "%s: graph_edges %d, rebuild gives %d..%d"
          % (what, stats["graph_edges"], e_lo, e_hi))
    maxd = stats["max_degree"]
    check(max(lo.values(), default=0) <= maxd <= max(hi.values(), default=0),
          "%s: max_degree %d, rebuild gives %d..%d" % (what, maxd, max(lo.values(), default=0),
                                                      max(hi.values(), default=0)))
    exact = e_lo == e_hi
    active = [r for r in rows if not r["superseded"] and not r["archived"]]
    if active:
        check(len(active) <= 1000, "%s: too many active segments for one listing" % what)
        q = h.rand_vec(random.Random(len(rows)), DIM)
        body = expect_ok(srv.retrieve(ns, {"embedding": q, "k": 1000, "explain": True}), 200,
                         "%s: explain listing" % what)
        eq(len(body["results"]), len(active), "%s: explain listing covers the active segments" % what)
        for res in body["results"]:
            sid = res["id"]
            g = res["gate"]
            if maxd == 0:
                eq(g, 0, "%s: gate of %s with max_degree 0" % (what, sid))
                continue
            lo_g, hi_g = lo[sid] / maxd, hi[sid] / maxd
            check(lo_g - 1e-6 <= g <= hi_g + 1e-6, "%s: gate of %s is %r, rebuild gives %r..%r"
                  % (what, sid, g, lo_g, hi_g))
    # retrieve == scalar reference
    graph = None
    if exact:
        graph = (lo, e_lo, max(lo.values(), default=0))
    newest = max((r["ts"] for r in rows), default=h.now_ms())
    oldest = min((r["ts"] for r in rows), default=newest)
    rng = random.Random(len(rows) * 7919 + seqs[-1] if seqs else 1)
    queries = [
        (dict(k=20), {}),
        (dict(k=15, half_life="1h", include_superseded=True, coherence_weight=0.3,
              origin=h.rfc3339_ms(newest + 60000)),
         dict(half_life_s=3600.0, include_superseded=True, coherence_weight=0.3,
              origin_ms=newest + 60000)),
        (dict(k=25, half_life="30m", decay="gaussian", recency_bias=0.5, include_archived=True,
              since=h.rfc3339_ms((oldest + newest) // 2), source="a", coherence_weight=0.5,
              origin=h.rfc3339_ms(newest)),
         dict(half_life_s=1800.0, decay="gaussian", recency_bias=0.5, include_archived=True,
              since_ms=(oldest + newest) // 2, source="a", coherence_weight=0.5, origin_ms=newest)),
    ]
    checked = 0
    for req, ref_kw in queries:
        if ref_kw.get("coherence_weight") and not exact:
            continue            # a pair at the threshold: gates are only known within bounds
        qv = h.rand_vec(rng, DIM)
        req = dict(req, embedding=qv, explain=True)
        if "origin" not in req:
            req["origin"] = h.rfc3339_ms(newest)
            ref_kw = dict(ref_kw, origin_ms=newest)
        body = expect_ok(srv.retrieve(ns, req), 200, "%s: retrieve" % what)
        top, allr = h.reference(rows, qv, k=req["k"], threshold=THRESHOLD, graph=graph or
                                (lo, e_lo, max(lo.values(), default=0)), **ref_kw)
        h.match_results(body["results"], allr, req["k"], tol=1e-5, what="%s: retrieve %s" % (what, req))
        checked += 1
    n["queries"] = checked
    n["graph_exact"] = exact
    n["active"] = len(active)
    stats_out.update(stats)
    # the monotonic rule goes on: a new insert is later in seq and time
    b = expect_ok(srv.insert(ns, {"id": "after-%s" % what.replace(" ", "_"),
                                  "embedding": h.rand_vec(rng, DIM)}), 201, "%s: insert after restart" % what)
    rec = b["inserted"][0]
    check(rec["seq"] > max(seqs + [acked_max_seq]), "%s: seq %d after the crash is not above %d"
          % (what, rec["seq"], max(seqs + [acked_max_seq])))
    newest_all = max([newest] + ([acked_max_ts] if acked_max_ts is not None else []))
    check(h.parse_ts(rec["timestamp"]) >= newest_all, "%s: clock went back after the crash" % what)
    return n, rows


def verify_drops(srv, ns, worker, what):
    """Inserts and namespace drops: after the last acknowledged drop only later batches
    count; the one in flight at the kill is all or nothing; a namespace re-created after a
    drop starts at seq 1."""
    log = worker.log
    last_drop = max([i for i, e in enumerate(log) if e[0] == "drop" and e[2] in (200, 404)], default=-1)
    for i, e in enumerate(log):
        if e[0] != "ins" or e[2] != 201:
            continue
        j = i - 1
        while j >= 0 and log[j][0] == "ins" and log[j][2] == 503:
            j -= 1
        if j < 0 or log[j][0] == "drop":
            eq(min(r["seq"] for r in e[3]["inserted"]), 1, "%s: first seq of a new namespace" % what)
    inflight = log[-1] if log and log[-1][2] is None else None
    expect = []
    for e in log[last_drop + 1:]:
        if e[0] == "ins" and e[2] == 201:
            expect.extend(s["id"] for s in e[1])
    ids = [s["id"] for e in log if e[0] == "ins" for s in e[1]]
    present = set(fetch(srv, ns, ids))
    if inflight is not None and inflight[0] == "drop" and not present:
        return len(expect), 1          # the drop in flight was applied
    missing = [i for i in expect if i not in present]
    check(not missing, "%s: acknowledged after the last drop but missing: %s" % (what, missing[:5]))
    extra = present - set(expect)
    if inflight is not None and inflight[0] == "ins":
        batch = {s["id"] for s in inflight[1]}
        check(not extra or extra == batch, "%s: in-flight batch half present or stale ids: %s"
              % (what, sorted(extra)[:5]))
    else:
        check(not extra, "%s: ids from before an acknowledged drop are back: %s" % (what, sorted(extra)[:5]))
    st, _, stats = srv.ns_stats(ns)
    if present:
        eq(expect_ok((st, None, stats), 200, "%s: stats" % what)["count"], len(present), "%s: count" % what)
    return len(expect), sum(1 for e in log if e[0] == "drop" and e[2] == 200)


def snapshot(srv, ns):
    st, _, stats = srv.ns_stats(ns)
    if st == 404:
        return None
    body = expect_ok(srv.retrieve(ns, {"embedding": [1.0] + [0.0] * (DIM - 1), "k": 1000,
                                       "include_superseded": True, "include_archived": True}), 200)
    return stats, sorted((r["id"], r["seq"], r["timestamp"]) for r in body["results"])


@test
def test_crash_cycles():
    print("crash cycles: seed %d (CRASH_SEED), %d cycles (CRASH_CYCLES)" % (SEED, CYCLES))
    rng = random.Random(SEED)
    srv = h.Server().start()
    done = {}           # ns -> snapshot after its verification
    totals = {"acked": 0, "unacked": 0, "deleted": 0, "superseded": 0, "archived": 0, "queries": 0,
              "inflight_cmp": 0, "graph_exact": 0, "absent_ok": 0, "drops": 0, "drop_acked": 0}
    t_start = time.monotonic()
    try:
        for c in range(CYCLES):
            live, hist = "cc%d_live" % c, "cc%d_hist" % c
            base = h.now_ms() - 48 * HOUR
            ws = [Worker(srv.port, live, "c%dw0" % c, random.Random(rng.random())),
                  Worker(srv.port, live, "c%dw1" % c, random.Random(rng.random())),
                  Worker(srv.port, hist, "c%dh" % c, random.Random(rng.random()), explicit_ts=base),
                  Worker(srv.port, live, "c%dk" % c, random.Random(rng.random()), compactor=True,
                         cap=10 ** 6),
                  Worker(srv.port, "cc%d_drop" % c, "c%dd" % c, random.Random(rng.random()),
                         dropper=True, cap=10 ** 6)]
            for w in ws:
                w.start()
            time.sleep(rng.uniform(0.1, 1.0))
            srv.kill9()
            for w in ws:
                w.join(40)
                check(not w.is_alive(), "cycle %d: worker stuck after SIGKILL" % c)
                check(not w.unexpected, "cycle %d: unexpected answers before the kill: %s"
                      % (c, w.unexpected[:3]))
            if ws[3].log and ws[3].log[-1][2] is None:
                totals["inflight_cmp"] += 1
            # verified before anything else reads the namespace; odd cycles restart (and then
            # run) with --sync normal: a process crash must not lose an acknowledged write in
            # either mode (only a power loss may, with normal)
            srv.args = ["--sync", "normal"] if c % 2 else []
            srv.start()
            n_ok, n_drops = verify_drops(srv, "cc%d_drop" % c, ws[4], "cycle %d drop" % c)
            totals["drops"] += n_drops
            totals["drop_acked"] += n_ok
            # 7. earlier cycles untouched
            for ns, snap in done.items():
                eq(snapshot(srv, ns), snap, "cycle %d: %s changed after a restart" % (c, ns))
            for ns, workers in ((live, [ws[0], ws[1], ws[3]]), (hist, [ws[2]])):
                stats = {}
                n, rows = verify_ns(srv, ns, workers, "cycle %d %s" % (c, ns), stats)
                for k in totals:
                    if k in n:
                        totals[k] += int(n[k])
                done[ns] = snapshot(srv, ns)
        elapsed = time.monotonic() - t_start
        check(totals["acked"] > 0, "nothing was acknowledged in any cycle")
        print("crash cycles: %d cycles (half with --sync normal) in %.0f s, seed %d: %d acknowledged segments present, "
              "%d unacknowledged requests all-or-nothing, %d acknowledged deletes absent "
              "(%d more absent with their delete in flight), %d superseded and %d archived checked, "
              "a compaction in flight at %d kills, graph exact in %d/%d namespaces (bounds "
              "otherwise), %d retrieves equal to the scalar reference, monotonic seq/clock "
              "after every restart, %d acknowledged namespace drops and %d segments inserted after "
              "them exact, %d earlier namespaces unchanged"
              % (CYCLES, elapsed, SEED, totals["acked"], totals["unacked"], totals["deleted"],
                 totals["absent_ok"], totals["superseded"], totals["archived"],
                 totals["inflight_cmp"], totals["graph_exact"], 2 * CYCLES, totals["queries"],
                 totals["drops"], totals["drop_acked"], len(done)))
        srv.stop()
    finally:
        srv.cleanup()


if __name__ == "__main__":
    h.main()
