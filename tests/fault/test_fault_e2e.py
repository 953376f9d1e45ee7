#!/usr/bin/env python3
"""test_fault_e2e.py - the real daemon under allocation failures (part of `make fault`)

Runs against build/fault/mnemod (tests/fault/fault_alloc.c linked in): MEM_FAULT_EVERY=K
makes every Kth allocation of mnemod's own code fail while armed, and each SIGUSR2 toggles
arming. Each round starts the faults, sends a mixed workload (inserts, batches, import,
retrieve, reads, listing, patch, delete, compaction, MCP, metrics), stops the faults and
then checks that:

  - every answer under faults was either the normal one or a clean 503 `unavailable` (JSON
    error body, Retry-After), never a 500, a dropped connection or a malformed body;
  - what the server holds equals what it acknowledged: every acknowledged write is there
    and every acknowledged delete is gone; a write answered 503 is all there or not at all
    (a batch or an import never half);
  - retrieval is exact again (the scalar reference over what is listed);
  - the daemon stops cleanly (exit 0, so LeakSanitizer found nothing), reports that faults
    were injected, and a restart on the same file shows the same data.

A second test starts the daemon with the Nth start-up allocation failing, for N spread
over the whole start-up: it either comes up and serves, or exits non-zero with a message;
never a crash or a sanitizer report.

    python3 tests/fault/test_fault_e2e.py build/fault/mnemod [filter]

FAULT_E2E_EVERY (the rounds' K, default 3,7,19,61), FAULT_E2E_STEPS (requests a round,
default 150) and FAULT_E2E_STARTS (start-ups with a random allocation failing, besides the
first few, default 14) bound the run (`make fault-quick`, and so `make test`, sets them
with FAULT_QUICK_E2E).
"""

import http.client
import json
import os
import random
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import harness as h  # noqa: E402

DIM = 8
ROUNDS = [int(k) for k in os.environ.get("FAULT_E2E_EVERY", "3,7,19,61").split(",")]
STEPS = int(os.environ.get("FAULT_E2E_STEPS", "150"))
STARTS = int(os.environ.get("FAULT_E2E_STARTS", "14"))
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer")


def seed():
    return int(os.environ.get("MEM_TEST_SEED", "20260731"))


def sanitizer_clean(srv):
    with open(srv.log_path, "rb") as f:
        log = f.read().decode("utf-8", "replace")
    m = SANITIZER.search(log)
    h.check(m is None, "sanitizer report in the log:\n%s" % log[max(0, m.start() - 200):][:4000]
            if m else "")
    return log


def fault_stats(log):
    m = re.findall(r"mnemod-fault: counted=(\d+) failed=(\d+)", log)
    h.check(m, "no mnemod-fault stats line: is this the fault build (FLAVOR=fault)?")
    return int(m[-1][0]), int(m[-1][1])


def toggle(srv, want):
    """SIGUSR2, then wait until the daemon logged the new state."""
    word = "mnemod-fault: armed" if want else "mnemod-fault: disarmed"
    before = open(srv.log_path, "rb").read().decode("utf-8", "replace").count(word + "\n")
    srv.proc.send_signal(signal.SIGUSR2)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if open(srv.log_path, "rb").read().decode("utf-8", "replace").count(word + "\n") > before:
            return
        time.sleep(0.02)
    raise h.Failure("the daemon did not log %r after SIGUSR2" % word)


class Workload:
    """Requests under faults, and what the server acknowledged."""

    def __init__(self, srv, ns, rng):
        self.srv, self.ns, self.rng = srv, ns, rng
        self.vec = {}         # id -> unit vector (everything ever sent)
        self.acked = set()    # ids whose insert was acknowledged
        self.unknown = []     # lists of ids of writes answered 503 (all or nothing)
        self.deleted = set()  # ids whose delete was acknowledged
        self.meta = {}        # id -> metadata last acknowledged
        self.answers = {"ok": 0, "503": 0}
        self.n = 0

    def call(self, method, path, body=None, ok=(200,), raw=None, headers=None):
        what = "%s %s" % (method, path)
        try:
            st, hdr, payload = self.srv.call(method, path, body, raw=raw, headers=headers)
        except (OSError, http.client.HTTPException) as e:
            raise h.Failure("%s under faults: no answer (%s: %s); log:\n%s"
                            % (what, type(e).__name__, e, self.srv.log_tail(20)))
        if st == 503:
            err = h.expect_error((st, hdr, payload), 503, "unavailable", what)
            h.check(hdr.get("retry-after", "").isdigit(), "%s: 503 without Retry-After" % what)
            h.check(err.get("message"), what)
            self.answers["503"] += 1
            return st, None
        if st not in ok:
            raise h.Failure("%s under faults: status %r, want %r or 503; body %s"
                            % (what, st, ok, h._short(payload)))
        self.answers["ok"] += 1
        return st, payload

    def new_seg(self):
        self.n += 1
        sid = "s%05d" % self.n
        v = h.unit(h.rand_vec(self.rng, DIM))
        self.vec[sid] = v
        seg = {"id": sid, "embedding": v, "text": "memory number %d" % self.n,
               "source": self.rng.choice(["chat", "mail"]),
               "metadata": {"n": self.n, "tags": ["t%d" % (self.n % 5)], "x": 0.5 + self.n}}
        return sid, seg

    def base(self):
        return "/v1/namespaces/%s" % self.ns

    def step(self):
        op = self.rng.randrange(13)
        b = self.base()
        live = sorted(self.acked - self.deleted)
        if op in (0, 1):
            sid, seg = self.new_seg()
            st, body = self.call("POST", b + "/segments", seg, ok=(201,))
            if st == 201:
                h.eq([x["id"] for x in body["inserted"]], [sid], "inserted ids")
                self.acked.add(sid)
                self.meta[sid] = seg["metadata"]
            else:
                self.unknown.append([sid])
        elif op == 2:
            segs = [self.new_seg() for _ in range(3)]
            st, body = self.call("POST", b + "/segments", {"segments": [s for _, s in segs]},
                                 ok=(201,))
            ids = [sid for sid, _ in segs]
            if st == 201:
                h.eq([x["id"] for x in body["inserted"]], ids, "batch ids")
                self.acked.update(ids)
                self.meta.update({sid: s["metadata"] for sid, s in segs})
            else:
                self.unknown.append(ids)
        elif op == 3:
            segs = [self.new_seg() for _ in range(2)]
            nd = "".join(json.dumps(s) + "\n" for _, s in segs).encode()
            st, body = self.call("POST", b + "/import", raw=nd, ok=(201,),
                                 headers={"Content-Type": "application/x-ndjson"})
            ids = [sid for sid, _ in segs]
            if st == 201:
                h.eq(body.get("imported"), 2, "imported")
                self.acked.update(ids)
                self.meta.update({sid: s["metadata"] for sid, s in segs})
            else:
                self.unknown.append(ids)
        elif op in (4, 5):
            q = h.rand_vec(self.rng, DIM)
            st, body = self.call("POST", b + "/retrieve", {"embedding": q, "k": 5})
            if st == 200:
                h.check(len(body["results"]) <= 5, "k")
        elif op == 6 and live:
            sid = self.rng.choice(live)
            st, body = self.call("GET", b + "/segments/" + sid)
            if st == 200:
                h.eq(body["id"], sid, "get id")
                h.eq(body.get("metadata"), self.meta[sid], "get metadata of %s" % sid)
        elif op == 7:
            self.call("GET", b + "/segments?limit=7")
        elif op == 8 and live:
            sid = self.rng.choice(live)
            meta = {"patched": self.n}
            st, body = self.call("PATCH", b + "/segments/" + sid, {"metadata": meta})
            if st == 200:
                self.meta[sid] = meta
            else:  # a 503 patch: any of the values sent since the last known one
                old = self.meta[sid]
                self.meta[sid] = (old if isinstance(old, tuple) else (old,)) + (meta,)
        elif op == 9 and len(live) > 30:
            sid = self.rng.choice(live)
            st, _ = self.call("DELETE", b + "/segments/" + sid)
            if st == 200:
                self.deleted.add(sid)
            else:
                self.deleted.add(sid)   # unknown: neither side may assume it
                self.unknown.append(["-" + sid])
        elif op == 10:
            self.call("POST", b + "/compact", {"target": 5, "dry_run": True})
        elif op == 11:
            rpc = {"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                   "params": {"name": "memory_retrieve",
                              "arguments": {"namespace": self.ns, "embedding":
                                            h.rand_vec(self.rng, DIM), "k": 3}}}
            st, body = self.call("POST", "/mcp", rpc)
            if st == 200:
                h.eq(body.get("id"), self.n, "mcp id")
                res = body.get("result")
                h.check(isinstance(res, dict) or "error" in body, "mcp answer %r" % body)
                if isinstance(res, dict) and res.get("isError"):
                    code = res["structuredContent"]["error"]["code"]
                    h.eq(code, "unavailable", "mcp tool error under faults")
                    self.answers["503"] += 1
        else:
            path = self.rng.choice(["/healthz", "/metrics", "/v1/namespaces", b])
            self.call("GET", path)


def wait_served(srv, ns):
    """Faults off: a namespace whose reload failed under them is refused (a clean 503) until
    the writer's next try reloads it; wait for that before checking what it holds."""
    deadline = time.monotonic() + 30
    while True:
        st, hdr, payload = srv.get("/v1/namespaces/" + ns)
        if st == 200:
            return
        h.expect_error((st, hdr, payload), 503, "unavailable", "stats while it recovers")
        h.check(time.monotonic() < deadline, "namespace %s still refused 30 s after the faults"
                % ns)
        time.sleep(0.1)


def list_all(srv, ns):
    out, after = [], None
    while True:
        q = "/v1/namespaces/%s/segments?limit=1000&include_superseded=true" % ns
        if after:
            q += "&after=" + after
        body = h.expect_ok(srv.get(q), 200, "list")
        out += body["segments"]
        after = body.get("next")
        if not after:
            return out


def verify(srv, w):
    """After the faults: the data equals the acknowledgements, retrieval is exact."""
    segs = list_all(srv, w.ns)
    have = {s["id"]: s for s in segs}
    h.eq(len(have), len(segs), "listed ids are unique")
    unknown_ids = {i for group in w.unknown for i in group}
    for sid in w.acked - w.deleted:
        h.check(sid in have, "acknowledged insert %s is missing" % sid)
    for sid in w.deleted:
        if "-" + sid not in unknown_ids:
            h.check(sid not in have, "acknowledged delete %s is still there" % sid)
    for group in w.unknown:
        if group[0].startswith("-"):
            continue
        present = [sid in have for sid in group]
        h.check(all(present) or not any(present),
                "a write answered 503 is half there: %r -> %r" % (group, present))
    for sid, s in have.items():
        h.check(sid in w.vec, "unknown segment %s" % sid)
        h.eq(s.get("text"), "memory number %d" % int(sid[1:]), "text of %s" % sid)
        m = w.meta.get(sid)
        if isinstance(m, tuple):
            h.check(s.get("metadata") in m, "metadata of %s: %r not in %r" % (sid, s.get("metadata"), m))
        elif m is not None:
            h.eq(s.get("metadata"), m, "metadata of %s" % sid)
    # retrieval is exact over what is there
    rows = [{"id": s["id"], "seq": s["seq"], "ts": h.parse_ts(s["timestamp"]),
             "vec": w.vec[s["id"]]} for s in segs]
    for _ in range(5):
        q = h.rand_vec(w.rng, DIM)
        body = h.expect_ok(srv.retrieve(w.ns, {"embedding": q, "k": 1000}), 200, "retrieve")
        _, allr = h.reference(rows, q, k=1000, origin_ms=h.now_ms())
        h.match_results(body["results"], allr, 1000, what="retrieve after faults")
    st = h.expect_ok(srv.ns_stats(w.ns), 200, "stats")
    h.eq(st["count"], len(segs), "count after faults")
    return sorted((s["id"], s["seq"], json.dumps(s.get("metadata"), sort_keys=True)) for s in segs)


@h.test
def test_requests_under_faults_then_recovery():
    rng = random.Random(seed())
    srv = h.Server(env={"MEM_FAULT_EVERY": str(ROUNDS[0])}).start()
    ns = "faults"
    h.expect_ok(srv.put("/v1/namespaces/" + ns, {"dim": DIM}), 201, "create")
    w = Workload(srv, ns, rng)
    for _ in range(40):   # a baseline, no faults yet
        sid, seg = w.new_seg()
        h.expect_ok(srv.insert(ns, seg), 201, "baseline insert")
        w.acked.add(sid)
        w.meta[sid] = seg["metadata"]
    total_503 = 0
    for k in ROUNDS:
        # the daemon reads MEM_FAULT_EVERY once; other rounds restart it with another K
        if k != ROUNDS[0]:
            srv.stop()
            sanitizer_clean(srv)
            srv.env["MEM_FAULT_EVERY"] = str(k)
            srv.start()
        toggle(srv, True)
        w.answers = {"ok": 0, "503": 0}
        for _ in range(STEPS):
            w.step()
        toggle(srv, False)
        wait_served(srv, ns)
        total_503 += w.answers["503"]
        print("  every %d: %d normal answers, %d clean 503" % (k, w.answers["ok"], w.answers["503"]))
        snapshot = verify(srv, w)
        # a failed delete left the segment either way: settle it now that faults are off
        for group in w.unknown:
            if group[0].startswith("-"):
                sid = group[0][1:]
                w.deleted.add(sid)
                st, _, _ = srv.delete("/v1/namespaces/%s/segments/%s" % (ns, sid))
                h.check(st in (200, 404), "settling delete of %s: %r" % (sid, st))
        w.unknown = [g for g in w.unknown if not g[0].startswith("-")]
        for group in w.unknown:   # settled: what is there now counts as acknowledged
            have = {s["id"] for s in list_all(srv, ns)}
            if group[0] in have:
                w.acked.update(group)
        w.unknown = []
        for sid, m in list(w.meta.items()):
            if isinstance(m, tuple):
                st, _, body = srv.get("/v1/namespaces/%s/segments/%s" % (ns, sid))
                if st == 200:
                    w.meta[sid] = body.get("metadata")
    h.check(total_503 > 0, "no request saw an injected failure: the faults did not reach requests")
    snapshot = verify(srv, w)
    srv.stop()
    log = sanitizer_clean(srv)
    counted, failed = fault_stats(log)
    h.check(failed > 0, "no allocation failed (counted %d)" % counted)
    print("  last round: %d allocations counted, %d failed" % (counted, failed))
    # the file holds exactly what was acknowledged
    srv.env.pop("MEM_FAULT_EVERY", None)
    srv.start()
    h.eq(verify(srv, w), snapshot, "the data after a restart")
    srv.stop()
    sanitizer_clean(srv)
    srv.cleanup()


@h.test
def test_start_up_under_faults():
    rng = random.Random(seed() + 1)
    base = h.Server()
    base.start()
    h.expect_ok(base.put("/v1/namespaces/boot", {"dim": DIM}), 201, "create")
    for i in range(30):
        h.expect_ok(base.insert("boot", {"id": "b%d" % i, "embedding": h.rand_vec(rng, DIM),
                                         "text": "boot %d" % i, "metadata": {"i": i}}), 201,
                    "insert")
    base.stop()
    # how many allocations a start-up makes (armed from the first one, none failing)
    probe = h.Server(datadir=base.dir, env={"MEM_FAULT_AT": "1000000000",
                                            "MEM_FAULT_ARMED": "1"})
    probe.log_path = os.path.join(base.dir, "stderr-probe.log")
    probe.start()
    probe.stop()
    total, _ = fault_stats(sanitizer_clean(probe))
    h.check(total > 10, "start-up counted %d allocations" % total)
    ns = sorted(set([1, 2, 3, 5, 8, 13] + [rng.randrange(1, total + 1) for _ in range(STARTS)]))
    came_up = refused = 0
    for n in ns:
        srv = h.Server(datadir=base.dir, env={"MEM_FAULT_AT": str(n), "MEM_FAULT_ARMED": "1"})
        srv.log_path = os.path.join(base.dir, "stderr-%d.log" % n)
        srv.spawn()
        deadline = time.monotonic() + h.START_TIMEOUT
        up = False
        while time.monotonic() < deadline and srv.proc.poll() is None:
            try:
                st, _, _ = srv.call("GET", "/healthz", timeout=2.0)
                if st == 200:
                    up = True
                    break
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.05)
        if up:
            came_up += 1
            # N past the start-up (their count varies a little) fails a request instead: a
            # clean 503, and only once
            r = srv.get("/v1/namespaces/boot")
            if r[0] == 503:
                h.expect_error(r, 503, "unavailable", "stats after start N=%d" % n)
                r = srv.get("/v1/namespaces/boot")
            body = h.expect_ok(r, 200, "stats after start N=%d" % n)
            h.eq(body["count"], 30, "count after a start-up with allocation %d failing" % n)
            srv.stop()
        else:
            h.check(srv.proc.poll() is not None, "N=%d: neither up nor exited" % n)
            rc = srv.proc.returncode
            h.check(rc not in (0, -6, 134) and rc > 0,
                    "N=%d: start-up failed with exit status %r; log:\n%s" % (n, rc, srv.log_tail()))
            msg = [ln for ln in srv.log_tail(40).splitlines() if "mnemod-fault" not in ln]
            h.check(msg, "N=%d: exited %r without a message" % (n, rc))
            refused += 1
            srv.proc = None
        sanitizer_clean(srv)
    print("  %d start-up allocations; %d failures tried: %d came up, %d refused cleanly"
          % (total, len(ns), came_up, refused))
    # and the file is intact
    final = h.Server(datadir=base.dir).start()
    h.eq(h.expect_ok(final.get("/v1/namespaces/boot"), 200, "stats")["count"], 30, "count")
    final.stop()
    sanitizer_clean(final)
    base.cleanup()


if __name__ == "__main__":
    h.main()
