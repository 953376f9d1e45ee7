#!/usr/bin/env python3
"""test_cluster.py - mnemod cluster mode on a three-server NATS JetStream cluster (issue 7).

Usage: python3 tests/cluster/test_cluster.py build/release/mnemod

Three nats-server processes (JetStream, replicas 3) and three mnemod nodes on loopback, each
with its own ports and data directory, started and stopped by PID. Two writers append
segments in batches through two different nodes while a third thread checks read-your-
writes across nodes (write on A, read on B with min_seq) and a reader checks that reads keep
answering. Mid-write the test SIGKILLs the NATS server leading the first writer's stream,
and separately mnemod node C; both are restarted and must converge. Every batch that got a
2xx must be present exactly once, in order (seq 1..N in write order), on every node, and all
nodes must hold the same (namespace, seq, id) lists. The write outage is measured and
printed. Stdlib only; no timing assertions (outages are reported, not asserted)."""
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import harness  # noqa: E402
import natscluster  # noqa: E402

DIM = 8
BATCH = 100
PER_WRITER = int(os.environ.get("CLUSTER_TEST_SEGMENTS", "5000"))  # x2 writers
WINDOW = 500  # ms of timestamps fetched per retrieve when listing a namespace
DEADLINE_S = 240


class Failure(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def vec(rng):
    v = [rng.uniform(-1, 1) for _ in range(DIM)]
    v[0] += 2.0
    return v


def call(node, method, path, body=None, timeout=60.0):
    try:
        return node.call(method, path, body, timeout=timeout)
    except Exception as e:  # connection refused/reset while a node is down
        return None, {}, repr(e)


class Writer(threading.Thread):
    """Appends PER_WRITER segments to ns through nodes[0] in batches; retries a batch until it
    gets a 2xx (the retry is idempotent: same ids, same content), on the next node when the
    current one stops answering."""

    def __init__(self, name, nodes, ns, base_ms, seed):
        super().__init__(name=name, daemon=True)
        self.nodes, self.ns, self.base_ms = nodes, ns, base_ms
        self.node = nodes[0]
        self.switches = []       # (batch, from port, to port): fail-over to the next node
        self.rng = random.Random(seed)
        self.acked = []          # ids in write order, of batches that got a 2xx
        self.progress = 0        # batches done
        self.failures = 0        # non-2xx answers or connection errors
        self.fail_codes = {}
        self.outages = []        # (first failure start, next success end) in monotonic s
        self.max_gap = 0.0       # longest time between two consecutive 2xx answers
        self.log_seqs = []
        self.latencies = []      # seconds per 2xx batch
        self.error = None

    def run(self):
        try:
            self._run()
        except Exception as e:  # reported by the main thread
            self.error = e

    def _run(self):
        last_ok = time.monotonic()
        n_batches = PER_WRITER // BATCH
        for b in range(n_batches):
            segs = []
            for i in range(BATCH):
                k = b * BATCH + i
                segs.append({"id": "%s-%06d" % (self.ns, k), "embedding": vec(self.rng),
                             "timestamp": (self.base_ms + k) / 1000.0, "source": self.ns})
            fail_start = None
            deadline = time.monotonic() + 120
            while True:
                t0 = time.monotonic()
                node = self.node
                st, _, body = call(node, "POST", "/v1/namespaces/%s/segments" % self.ns,
                                   {"segments": segs})
                t1 = time.monotonic()
                if st in (200, 201):
                    self.latencies.append(t1 - t0)
                    self.max_gap = max(self.max_gap, t1 - last_ok)
                    last_ok = t1
                    if fail_start is not None:
                        self.outages.append((fail_start, t1))
                    got = [r["id"] for r in body["inserted"]]
                    check(got == [s["id"] for s in segs], "inserted ids differ from the batch")
                    self.acked.extend(got)
                    self.log_seqs.append(body["log_seq"])
                    break
                self.failures += 1
                if self.failures <= 3:
                    print("  %s: batch %d answered %r %s" % (self.name, b, st, str(body)[:160]))
                key = st if st is not None else "conn"
                self.fail_codes[key] = self.fail_codes.get(key, 0) + 1
                # 503: nothing written; 504 write_timeout: perhaps written. Either way the
                # same batch again (same ids) is safe: an identical segment is stored once
                check(st in (None, 503, 504), "batch %d: unexpected answer %r %r" % (b, st, body))
                if st == 504:
                    check(body["error"]["code"] == "write_timeout", "batch %d: %r" % (b, body))
                if st is None and len(self.nodes) > 1:  # the node is gone: use the next one
                    self.node = self.nodes[(self.nodes.index(node) + 1) % len(self.nodes)]
                    self.switches.append((b, node.port, self.node.port))
                if fail_start is None:
                    fail_start = t0
                check(time.monotonic() < deadline, "batch %d: no 2xx for 120 s" % b)
                time.sleep(0.05)
            self.progress = b + 1


class RywChecker(threading.Thread):
    """Write one segment on A, read it on B with min_seq: must always be visible."""

    def __init__(self, a, b):
        super().__init__(name="ryw", daemon=True)
        self.a, self.b = a, b
        self.stop = False
        self.checked = 0
        self.skipped = 0
        self.error = None
        self.rng = random.Random(7)
        self.not_yet = 0  # reads answered 503: B had not applied the write within 5 s

    def read(self, method, path, body=None):
        """A read on B with min_seq: a 503 is B saying it has not applied the write yet (it
        waits 5 s for it; a NATS leader election, or a loaded machine, can take longer), so
        it is asked again, for up to 60 s; any other answer is the one checked."""
        deadline = time.monotonic() + 60
        while True:
            st, hdr, got = call(self.b, method, path, body)
            if st != 503 or time.monotonic() > deadline:
                return st, hdr, got
            self.not_yet += 1
            time.sleep(0.05)

    def run(self):
        i = 0
        try:
            while not self.stop:
                sid = "r-%05d" % i
                i += 1
                st, _, body = call(self.a, "POST", "/v1/namespaces/ryw/segments",
                                   {"id": sid, "embedding": vec(self.rng)})
                if st not in (200, 201):
                    self.skipped += 1      # the log is down: nothing to check
                    time.sleep(0.05)
                    continue
                seq = body["log_seq"]
                st, _, got = self.read("GET", "/v1/namespaces/ryw/segments/%s?min_seq=%d"
                                       % (sid, seq))
                check(st == 200 and got.get("id") == sid,
                      "read-your-writes: %s (log_seq %d) on B: %r %r" % (sid, seq, st, got))
                st, _, got = self.read("POST", "/v1/namespaces/ryw/retrieve",
                                       {"embedding": [1.0] + [0.0] * (DIM - 1), "k": 1000,
                                        "min_seq": seq})
                check(st == 200 and sid in [r["id"] for r in got["results"]],
                      "read-your-writes (retrieve): %s missing on B: %r" % (sid, st))
                self.checked += 1
        except Exception as e:
            self.error = e


class Reader(threading.Thread):
    """Reads keep answering on the live nodes while the log is disturbed."""

    def __init__(self, nodes, namespaces):
        super().__init__(name="reader", daemon=True)
        self.nodes, self.namespaces = nodes, namespaces
        self.stop = False
        self.ok = 0
        self.bad = []

    def run(self):
        i = 0
        while not self.stop:
            node = self.nodes[i % len(self.nodes)]
            ns = self.namespaces[i % len(self.namespaces)]
            i += 1
            st, _, body = call(node, "POST", "/v1/namespaces/%s/retrieve" % ns,
                               {"embedding": [1.0] + [0.0] * (DIM - 1), "k": 5}, timeout=10)
            if st == 200 or (st == 404 and self.ok == 0):
                self.ok += 1
            else:
                self.bad.append((ns, st, str(body)[:200]))
            time.sleep(0.01)


def list_ns(node, ns, base_ms, n):
    """(seq, id) of every segment of ns, through retrieve windows over the timestamps."""
    out = {}
    for lo in range(0, n, WINDOW):
        since = (base_ms + lo) / 1000.0
        until = (base_ms + min(n, lo + WINDOW) - 1) / 1000.0
        st, _, body = call(node, "POST", "/v1/namespaces/%s/retrieve" % ns,
                           {"embedding": [1.0] + [0.0] * (DIM - 1), "k": 1000, "since": since,
                            "until": until})
        check(st == 200, "listing %s on %s: %r %r" % (ns, node.port, st, body))
        for r in body["results"]:
            check(r["id"] not in out, "%s: id %s listed twice" % (ns, r["id"]))
            out[r["id"]] = r["seq"]
    return sorted((s, i) for i, s in out.items())


def wait_caught_up(nodes, timeout=60):
    """Every node's applied position reaches every stream's last sequence."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lasts, applied = {}, []
        for n in nodes:
            st, _, body = call(n, "GET", "/v1/cluster")
            if st != 200:
                break
            for s in body["streams"]:
                lasts[s["name"]] = max(lasts.get(s["name"], 0), s["last_seq"])
            applied.append({s["name"]: s["applied_seq"] for s in body["streams"]})
        else:
            if all(a.get(k, 0) >= v for a in applied for k, v in lasts.items()):
                return
        time.sleep(0.25)
    raise Failure("nodes did not catch up within %d s" % timeout)


def leader_of(node, ns):
    st, _, body = call(node, "GET", "/v1/cluster")
    check(st == 200, "GET /v1/cluster: %r" % st)
    stream = [x for x in body["namespaces"] if x["name"] == ns][0]["stream"]
    leader = [s for s in body["streams"] if s["name"] == stream][0]["leader"]
    return stream, leader


def main():
    if len(sys.argv) < 2:
        print("usage: test_cluster.py path/to/mnemod", file=sys.stderr)
        return 2
    harness.BINARY = os.path.abspath(sys.argv[1])
    t_start = time.monotonic()
    nats = natscluster.NatsCluster()
    nodes = []
    try:
        nats.start_all()
        for i, name in enumerate("ABC"):
            env = {"MNEMOD_NATS_URL": nats.url(i), "MNEMOD_NODE_ID": "node-" + name,
                   "MNEMOD_STREAMS": "4", "MNEMOD_REPLICAS": "3", "MNEMOD_LOG_LEVEL": "warn",
                   "MNEMOD_NAMESPACE_REPLICAS": "3"}
            nodes.append(harness.Server(env=env).start(timeout=90))
        a, b, c = nodes
        print("cluster: 3 nats-server (JetStream R3) + 3 mnemod up in %.1f s"
              % (time.monotonic() - t_start))

        base = int(time.time() * 1000) - 3600 * 1000
        # create both namespaces first so the leader lookup works
        for ns, node in (("w1", a), ("w2", c)):
            st, _, body = call(node, "PUT", "/v1/namespaces/" + ns, {"dim": DIM})
            check(st in (200, 201), "create %s: %r %r" % (ns, st, body))
        w1 = Writer("w1", [a], "w1", base, 1)
        w2 = Writer("w2", [c, b], "w2", base, 2)  # through C, fails over to B
        ryw = RywChecker(a, b)
        reader = Reader([a, b], ["w1", "w2"])
        for t in (w1, w2, ryw, reader):
            t.start()

        n_batches = PER_WRITER // BATCH

        def wait_progress(w, frac):
            while w.progress < n_batches * frac:
                check(w1.error is None and w2.error is None, "writer failed: %r %r"
                      % (w1.error, w2.error))
                check(time.monotonic() - t_start < DEADLINE_S, "test deadline")
                time.sleep(0.01)

        wait_progress(w2, 0.25)
        c.kill9()
        print("killed mnemod node C (SIGKILL; writer w2 was writing through it) at %d/%d batches"
              % (w2.progress, n_batches))

        wait_progress(w1, 0.4)
        stream, leader = leader_of(a, "w1")
        li = nats.index_of(leader)
        t_kill = time.monotonic()
        nats.kill(li)
        print("killed nats-server %s (leader of %s, the stream of w1) at %d/%d batches"
              % (leader, stream, w1.progress, n_batches))

        wait_progress(w1, 0.7)
        nats.start(li)
        nats.wait_port(li)
        print("restarted nats-server %s (%.1f s after its kill)" % (leader, time.monotonic() - t_kill))

        for w in (w1, w2):
            w.join(DEADLINE_S)
            check(not w.is_alive(), "writer %s did not finish" % w.name)
            check(w.error is None, "writer %s: %r" % (w.name, w.error))
        ryw.stop = True
        reader.stop = True
        ryw.join(60)
        reader.join(30)
        check(ryw.error is None, "read-your-writes: %r" % (ryw.error,))
        check(ryw.checked > 0, "read-your-writes never checked")
        check(not reader.bad, "reads failed on live nodes: %r" % reader.bad[:5])

        for w in (w1, w2):
            gaps = [e - s for s, e in w.outages]
            lat = sorted(w.latencies)
            print("writer %s via %s: %d segments acked in batches of %d (median %.1f ms a "
                  "batch), %d failed attempts %r, longest write outage %.2f s, longest gap "
                  "between 2xx %.2f s%s"
                  % (w.name, "A" if w is w1 else "C then B", len(w.acked), BATCH,
                     1000 * lat[len(lat) // 2], w.failures, w.fail_codes,
                     max(gaps) if gaps else 0.0, w.max_gap,
                     ", failed over at batch %d" % w.switches[0][0] if w.switches else ""))
            check(w.log_seqs == sorted(w.log_seqs) and len(set(w.log_seqs)) == len(w.log_seqs),
                  "%s: log_seq not strictly increasing" % w.name)
        print("read-your-writes across nodes: %d checked (write on A, read on B with min_seq), "
              "%d writes refused during outages, %d reads answered 503 (not applied yet) and "
              "asked again" % (ryw.checked, ryw.skipped, ryw.not_yet))
        print("reads during the run: %d answered, %d failed" % (reader.ok, len(reader.bad)))

        # node C rejoins from its applied positions
        t0 = time.monotonic()
        c.start(timeout=90)
        wait_caught_up(nodes)
        print("node C rejoined and caught up in %.1f s" % (time.monotonic() - t0))

        # exactly once, in order, identical everywhere
        expect = {}
        for w in (w1, w2):
            expect[w.ns] = [(i + 1, sid) for i, sid in enumerate(w.acked)]
        for node, name in zip(nodes, "ABC"):
            for ns, want in expect.items():
                got = list_ns(node, ns, base, PER_WRITER)
                check(got == want, "node %s, %s: %d segments, want %d (first difference at %r)"
                      % (name, ns, len(got), len(want),
                         next(((g, w) for g, w in zip(got, want) if g != w), None)))
                st, _, stats = call(node, "GET", "/v1/namespaces/" + ns)
                check(st == 200 and stats["count"] == len(want), "node %s %s count %r"
                      % (name, ns, stats))
        ryw_lists = []
        for node in nodes:
            st, _, body = call(node, "POST", "/v1/namespaces/ryw/retrieve",
                               {"embedding": [1.0] + [0.0] * (DIM - 1), "k": 1000})
            check(st == 200, "ryw list: %r" % st)
            ryw_lists.append(sorted((r["seq"], r["id"]) for r in body["results"]))
        check(ryw_lists[0] == ryw_lists[1] == ryw_lists[2], "ryw namespace differs across nodes")
        print("convergence: %d + %d + %d (namespace, seq, id) identical on A, B, C; every 2xx "
              "write present exactly once, in write order"
              % (len(expect["w1"]), len(expect["w2"]), len(ryw_lists[0])))

        # two nodes writing the same namespace at once: ordered by the log, never interleaved
        # out of order; a write that loses the expected-sequence race too often is a 409
        shared = {"A": [], "B": []}
        conflicts = {"A": 0, "B": 0}
        unavailable = {"A": 0, "B": 0}
        shared_errors = []

        def shared_writer(node, name):
            try:
                shared_writes(node, name)
            except Exception as e:  # reported by the main thread
                shared_errors.append(e)

        def shared_writes(node, name):
            rng = random.Random(name)
            for i in range(40):
                sid = "s%s-%03d" % (name, i)
                seg = {"id": sid, "embedding": vec(rng)}
                # a 503 (Retry-After) is the cluster's "not now": the first writes of a new
                # namespace race its placement and its holders' catch-up (a node that has
                # not seen it live answers 503 no live node holds it), and NATS may be
                # electing a leader; the same segment again is idempotent (200 if an earlier
                # try was applied after all)
                deadline = time.monotonic() + 60
                while True:
                    st, _, body = call(node, "POST", "/v1/namespaces/shared/segments", seg)
                    if st not in (None, 503, 504):  # 504 write_timeout: perhaps written
                        break
                    unavailable[name] += 1
                    check(time.monotonic() < deadline, "shared %s: no answer but 503 for 60 s: "
                          "%r %r" % (sid, st, body))
                    time.sleep(0.05)
                if st == 409:
                    check(body["error"]["code"] == "write_conflict", "shared: %r" % body)
                    conflicts[name] += 1
                    continue
                check(st in (200, 201), "shared %s: %r %r" % (sid, st, body))
                shared[name].append((body["inserted"][0]["seq"], sid, body["log_seq"]))

        ts = [threading.Thread(target=shared_writer, args=(n, name)) for n, name in ((a, "A"), (b, "B"))]
        for t in ts:
            t.start()
        for t in ts:
            t.join(180)
        check(not any(t.is_alive() for t in ts), "a shared writer did not finish")
        check(not shared_errors, "shared writer: %r" % shared_errors)
        wait_caught_up(nodes)
        for name in "AB":
            seqs = [x[0] for x in shared[name]]
            check(seqs == sorted(seqs), "shared: %s's writes out of order: %r" % (name, seqs))
        want = sorted((x[0], x[1]) for name in "AB" for x in shared[name])
        check([x[0] for x in want] == list(range(1, len(want) + 1)), "shared: seqs not 1..N")
        top = max(x[2] for name in "AB" for x in shared[name])
        for node, name in zip(nodes, "ABC"):
            deadline = time.monotonic() + 60
            while True:  # 503: not applied up to top within 5 s yet, asked again
                st, _, body = call(node, "POST", "/v1/namespaces/shared/retrieve",
                                   {"embedding": [1.0] + [0.0] * (DIM - 1), "k": 1000,
                                    "min_seq": top})
                if st != 503 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            check(st == 200, "shared on %s: %r %r" % (name, st, body))
            got = sorted((r["seq"], r["id"]) for r in body["results"])
            check(got == want, "shared namespace differs on %s: %d rows, want %d; first "
                  "difference %r" % (name, len(got), len(want),
                                     next(((g, w) for g, w in zip(got, want) if g != w), None)))
        # the monotonic-timestamp rule holds cluster-wide: B refuses what is older than A's
        st, _, body = call(b, "POST", "/v1/namespaces/shared/segments",
                           {"id": "old", "embedding": vec(random.Random(3)), "timestamp": 1000})
        check(st == 409 and body["error"]["code"] == "non_monotonic_timestamp",
              "an old timestamp through B: %r %r" % (st, body))
        retried = sum(call(n, "GET", "/v1/cluster")[2]["counters"]["conflicts"] for n in (a, b))
        print("same namespace written through A and B at once: %d + %d writes acked, %d + %d "
              "answered 409 write_conflict, %d + %d tries answered 503 (retried), %d stale "
              "expected sequences retried, one order on every node"
              % (len(shared["A"]), len(shared["B"]), conflicts["A"], conflicts["B"],
                 unavailable["A"], unavailable["B"], retried))

        # metrics export the lag
        st, _, text = call(a, "GET", "/metrics")
        check(st == 200 and "mnemod_cluster_stream_lag{" in text, "metrics lack the lag")

        # snapshot + trim; more writes; node C restarted with an empty data file restores the
        # snapshots of its namespaces and replays the log after them, then answers like A
        msgs0 = sum(x["messages"] for x in call(a, "GET", "/v1/cluster")[2]["streams"])
        st, _, snap = call(a, "POST", "/v1/cluster/snapshot", {"trim": True})
        check(st == 200 and snap.get("trimmed_below"), "snapshot + trim: %r %r" % (st, snap))
        rng = random.Random(11)
        extra = []
        for bi in range(3):
            segs = []
            for i in range(BATCH):
                k = PER_WRITER + bi * BATCH + i
                segs.append({"id": "w1-%06d" % k, "embedding": vec(rng),
                             "timestamp": (base + k) / 1000.0})
            st, _, body = call(a, "POST", "/v1/namespaces/w1/segments", {"segments": segs})
            check(st == 201, "write after the snapshot: %r %r" % (st, body))
            extra.extend(s["id"] for s in segs)
        expect["w1"] = expect["w1"] + [(len(expect["w1"]) + i + 1, sid)
                                       for i, sid in enumerate(extra)]
        deadline = time.monotonic() + 20
        while True:  # each namespace keeps its last record: count what is left
            st, _, body = call(a, "GET", "/v1/cluster")
            msgs = sum(x["messages"] for x in body["streams"])
            if msgs < msgs0:
                break
            check(time.monotonic() < deadline, "streams not trimmed: %d records" % msgs)
            time.sleep(0.2)
        c.stop()
        for f in os.listdir(c.dir):
            if f.startswith("mnemod.db"):
                os.unlink(os.path.join(c.dir, f))
        t0 = time.monotonic()
        c.start(timeout=90)
        wait_caught_up(nodes)
        st, _, cs = call(c, "GET", "/v1/cluster")
        check(cs["counters"]["bootstraps"] >= 1, "node C did not restore a snapshot: %r"
              % cs["counters"])
        for ns, want in expect.items():
            got = list_ns(c, ns, base, len(want))
            check(got == want, "node C, %s: %d segments, want %d" % (ns, len(got), len(want)))
        qrng = random.Random(13)
        for q in range(10):
            ns = ("w1", "w2", "shared")[q % 3]
            req = {"embedding": vec(qrng), "k": 10, "explain": True}
            ra = call(a, "POST", "/v1/namespaces/%s/retrieve" % ns, req)[2]["results"]
            rc = call(c, "POST", "/v1/namespaces/%s/retrieve" % ns, req)[2]["results"]
            check([(r["id"], r["seq"], round(r["score"], 6)) for r in ra] ==
                  [(r["id"], r["seq"], round(r["score"], 6)) for r in rc],
                  "top-K differs between A and the re-bootstrapped node C on %s" % ns)
        print("snapshots of the namespaces, log trimmed below %r (%d records left of %d); node C "
              "restarted with an empty data file restored %d snapshot(s) + replayed %d later "
              "segments in %.1f s, same lists and same top-10 as A"
              % (snap["trimmed_below"], msgs, msgs0, cs["counters"]["bootstraps"], len(extra),
                 time.monotonic() - t0))

        if os.environ.get("CLUSTER_TEST_VERBOSE"):
            for n, name in zip(nodes, "ABCD"):
                print("--- node %s log:\n%s" % (name, "\n".join(
                    l for l in n.log_tail(400).splitlines() if "healthz" not in l)))
        for n in nodes:
            n.stop()
        print("PASS cluster test in %.1f s" % (time.monotonic() - t_start))
        return 0
    except Failure as e:
        print("FAIL %s" % e)
        for n, name in zip(nodes, "ABC"):
            print("--- node %s log:\n%s" % (name, n.log_tail(60)))
        return 1
    finally:
        for n in nodes:
            n.cleanup()
        nats.cleanup()


if __name__ == "__main__":
    sys.exit(main())
