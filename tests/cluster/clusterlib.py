"""clusterlib.py - helpers for the placement tests: a NATS JetStream cluster plus mnemod
nodes on loopback, and checks that read one holder at a time.

A request with the header X-Mnemod-Forwarded is answered by the node itself (never relayed):
that is how a test reads each holder's own copy. Python stdlib only."""
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

LOCAL = {"X-Mnemod-Forwarded": "test"}
WINDOW = 500  # ms of timestamps per retrieve when listing a namespace


class Failure(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def call(node, method, path, body=None, headers=None, timeout=60.0):
    try:
        return node.call(method, path, body, headers=headers, timeout=timeout)
    except Exception as e:  # connection refused/reset while a node is down
        return None, {}, repr(e)


def vec(rng, dim):
    v = [rng.uniform(-1, 1) for _ in range(dim)]
    v[0] += 2.0
    return v


class Cluster:
    """n_nats JetStream servers and named mnemod nodes; every process is stopped by PID."""

    def __init__(self, binary, n_nats=3, stream_replicas=3, env=None, max_payload="8MB"):
        harness.BINARY = os.path.abspath(binary)
        self.nats = natscluster.NatsCluster(n_nats, max_payload=max_payload)
        self.stream_replicas = stream_replicas
        self.env = dict(env or {})
        self.nodes = {}  # name -> harness.Server
        self.order = []

    def start_nats(self):
        self.nats.start_all()

    def node_env(self, name, extra=None):
        i = len(self.order) % self.nats.n
        env = {"MNEMOD_NATS_URL": self.nats.url(i), "MNEMOD_NODE_ID": name,
               "MNEMOD_REPLICAS": str(self.stream_replicas), "MNEMOD_LOG_LEVEL": "info"}
        env.update(self.env)
        env.update(extra or {})
        return env

    def add(self, name, extra_env=None, timeout=90, host="127.0.0.1"):
        srv = harness.Server(env=self.node_env(name, extra_env), host=host)
        self.nodes[name] = srv
        self.order.append(name)
        srv.start(timeout=timeout)
        return srv

    def live(self):
        return [n for n in self.order if self.nodes[n].alive()]

    def any(self, rng=random):
        return self.nodes[rng.choice(self.live())]

    def status(self, name=None):
        node = self.nodes[name] if name else self.any()
        st, _, body = call(node, "GET", "/v1/cluster")
        check(st == 200, "GET /v1/cluster on %s: %r %r" % (name, st, body))
        return body

    def placement(self, ns, name=None):
        for e in self.status(name)["namespaces"]:
            if e["name"] == ns:
                return e
        return None

    def wait(self, what, cond, timeout=60, step=0.25):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = cond()
                if last:
                    return last
            except Failure:
                pass
            time.sleep(step)
        raise Failure("timed out (%d s) waiting for %s (last %r)" % (timeout, what, last))

    def settled(self, names, namespaces):
        """Every node agrees on every namespace's placement, no move is running, and each
        holder has it live."""
        maps = {}
        for n in names:
            body = self.status(n)
            maps[n] = {e["name"]: e for e in body["namespaces"]}
        for ns in namespaces:
            seen = None
            for n in names:
                e = maps[n].get(ns)
                if not e or e.get("join"):
                    return False
                if seen is None:
                    seen = e["nodes"]
                elif e["nodes"] != seen:
                    return False
            for h in seen:
                if h in maps and maps[h][ns]["state"] != "live":
                    return False
        return True

    def caught_up(self):
        """Every live node has read every stream to its end (applied or passed over), as far
        as the nodes know it: each refreshes a stream's last_seq once a second, so the end is
        the highest last_seq or applied_seq any of them reports (right after a write, its
        origin may have applied a record no node's last_seq shows yet). A test that reads a
        given write on every holder waits for its log_seq instead (min_seq)."""
        lasts, applied = {}, []
        for n in self.live():
            body = self.status(n)
            for s in body["streams"]:
                lasts[s["name"]] = max(lasts.get(s["name"], 0), s["last_seq"], s["applied_seq"])
            applied.append({s["name"]: s["applied_seq"] for s in body["streams"]})
            if any(x["state"] != "live" for x in body["namespaces"]
                   if n in x["nodes"] and not x.get("join")):
                return False
        return all(a.get(k, 0) >= v for a in applied for k, v in lasts.items())

    def cleanup(self):
        for srv in self.nodes.values():
            srv.cleanup()
        self.nats.cleanup()

    def logs(self, n=20):
        return "\n".join("--- node %s:\n%s" % (k, v.log_tail(n)) for k, v in self.nodes.items())


def list_local(node, ns, base_ms, n, dim):
    """(seq, id) of every segment of ns on node itself (not relayed), by retrieve windows
    over the timestamps base_ms .. base_ms + n - 1."""
    out = {}
    q = [1.0] + [0.0] * (dim - 1)
    for lo in range(0, n, WINDOW):
        since = (base_ms + lo) / 1000.0
        until = (base_ms + min(n, lo + WINDOW) - 1) / 1000.0
        st, _, body = call(node, "POST", "/v1/namespaces/%s/retrieve" % ns,
                           {"embedding": q, "k": 1000, "since": since, "until": until},
                           headers=LOCAL)
        check(st == 200, "listing %s on port %s: %r %r" % (ns, node.port, st, body))
        for r in body["results"]:
            check(r["id"] not in out, "%s: id %s listed twice" % (ns, r["id"]))
            out[r["id"]] = r["seq"]
    return sorted((s, i) for i, s in out.items())


def check_holders(cl, ns, acked, base_ms, dim, rng, label):
    """Every acknowledged write of ns exactly once, in write order, on every holder, and the
    same top-10 answers on every holder."""
    cl.wait("every node caught up", cl.caught_up, timeout=60)
    e = cl.placement(ns)
    check(e and e["nodes"], "%s: no placement" % ns)
    want = [(i + 1, sid) for i, sid in enumerate(acked)]
    lists = {}
    for h in e["nodes"]:
        check(h in cl.nodes and cl.nodes[h].alive(), "%s: holder %s is not running" % (ns, h))
        got = list_local(cl.nodes[h], ns, base_ms, len(acked), dim)
        check(got == want, "%s on holder %s: %d segments, want %d (first difference %r)"
              % (label, h, len(got), len(want),
                 next(((g, w) for g, w in zip(got, want) if g != w), None)))
        lists[h] = got
    for _ in range(3):
        req = {"embedding": vec(rng, dim), "k": 10}
        answers = []
        for h in e["nodes"]:
            st, _, body = call(cl.nodes[h], "POST", "/v1/namespaces/%s/retrieve" % ns, req,
                               headers=LOCAL)
            check(st == 200, "%s top-10 on %s: %r" % (ns, h, st))
            answers.append([(r["id"], r["seq"], round(r["score"], 6)) for r in body["results"]])
        check(all(a == answers[0] for a in answers), "%s: top-10 differs across holders %r"
              % (ns, e["nodes"]))
    return e["nodes"]


class Writer(threading.Thread):
    """Appends batches to ns through random live nodes; retries a batch (same ids, same
    content: idempotent) until a 2xx; records acknowledged ids in order and the gaps."""

    def __init__(self, cl, ns, base_ms, dim, batch, n_batches, seed, pause=0.0, start=0):
        super().__init__(name="writer-" + ns, daemon=True)
        self.cl, self.ns, self.base_ms, self.dim = cl, ns, base_ms, dim
        self.start_at = start  # ids and timestamps continue from here
        self.batch, self.n_batches, self.pause = batch, n_batches, pause
        self.rng = random.Random(seed)
        self.acked, self.ack_times, self.failures = [], [], {}
        self.error = None
        self.stop = False
        self.progress = 0

    def run(self):
        try:
            for b in range(self.n_batches):
                if self.stop:
                    break
                k0 = self.start_at + b * self.batch
                segs = [{"id": "%s-%06d" % (self.ns, k0 + i),
                         "embedding": vec(self.rng, self.dim),
                         "timestamp": (self.base_ms + k0 + i) / 1000.0}
                        for i in range(self.batch)]
                deadline = time.monotonic() + 90
                while True:
                    node = self.cl.any(self.rng)
                    st, _, body = call(node, "POST", "/v1/namespaces/%s/segments" % self.ns,
                                       {"segments": segs}, timeout=30)
                    if st in (200, 201):
                        got = [r["id"] for r in body["inserted"]]
                        check(got == [s["id"] for s in segs], "inserted ids differ")
                        self.acked.extend(got)
                        self.ack_times.append(time.monotonic())
                        break
                    key = st if st is not None else "conn"
                    self.failures[key] = self.failures.get(key, 0) + 1
                    check(st in (None, 503, 504), "%s batch %d: unexpected %r %r"
                          % (self.ns, b, st, str(body)[:300]))
                    check(time.monotonic() < deadline, "%s batch %d: no 2xx in 90 s (%r %r)"
                          % (self.ns, b, st, str(body)[:200]))
                    time.sleep(0.05)
                self.progress = b + 1
                if self.pause:
                    time.sleep(self.pause)
        except Exception as e:
            self.error = e

    def max_gap(self, since=None, until=None):
        ts = [t for t in self.ack_times if (since is None or t >= since)
              and (until is None or t <= until)]
        return max((b - a for a, b in zip(ts, ts[1:])), default=0.0)
