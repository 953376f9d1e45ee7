#!/usr/bin/env python3
"""cluster bench: namespaces placed on replica groups, on loopback.

Usage: run.py BUILD_DIR/mnemod [results.json]

Three nats-server (JetStream, stream replicas 3) and six mnemod nodes with two nodes per
namespace, then:
- capacity: NS namespaces of PER_NS segments written through random nodes; segments each
  node stores (its own listing) against the total stored once;
- write throughput: WRITERS concurrent clients append batches of BATCH, each to a namespace
  of its own, for SECONDS: all through node 1, then spread over the six nodes; and, as the
  single-machine reference, the same load on one mnemod alone (cluster mode, one node);
- forwarding: the same retrieves sent to a holder of the namespace and to a node that does
  not hold it (relayed), sequentially, p50 / p95 of each;
- move: a namespace of MOVE_N segments moved to another node while a writer keeps
  appending to it through random nodes: time to switch, the longest gap between two
  acknowledged writes around the switch, and the count on every new holder against every
  acknowledged write.
Env: BENCH_CLUSTER_DIM (64), BENCH_CLUSTER_MOVE_N (100000), BENCH_CLUSTER_SECONDS (10),
BENCH_CLUSTER_WRITERS (12). Measures only; never fails the build."""
import http.client
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "cluster"))
import natscluster  # noqa: E402

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/release/mnemod")
OUT = sys.argv[2] if len(sys.argv) > 2 else "bench/results/cluster.json"
DIM = int(os.environ.get("BENCH_CLUSTER_DIM", "64"))
MOVE_N = int(os.environ.get("BENCH_CLUSTER_MOVE_N", "100000"))
SECONDS = float(os.environ.get("BENCH_CLUSTER_SECONDS", "10"))
WRITERS = int(os.environ.get("BENCH_CLUSTER_WRITERS", "12"))
NODES = 6
NS = 60
PER_NS = 1000
BATCH = 100
LOCAL = {"X-Mnemod-Forwarded": "bench"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Conn:
    """One keep-alive connection to a node (a client's)."""

    def __init__(self, port):
        self.port = port
        self.c = None

    def call(self, method, path, body=None, headers=None, timeout=60):
        data = body if isinstance(body, bytes) else (
            json.dumps(body).encode() if body is not None else None)
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        for attempt in range(2):
            try:
                if self.c is None:
                    self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
                self.c.request(method, path, body=data, headers=h)
                r = self.c.getresponse()
                payload = r.read()
                return r.status, json.loads(payload) if payload else None
            except (OSError, http.client.HTTPException):
                self.c = None
                if attempt:
                    return None, None
        return None, None


class Node:
    def __init__(self, name, nats_url, tmp, env=None):
        self.name, self.port = name, free_port()
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        e = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOD_", "MEMU_"))}
        e.update({"MNEMOD_NATS_URL": nats_url, "MNEMOD_NODE_ID": name,
                  "MNEMOD_REPLICAS": "3", "MNEMOD_NAMESPACE_REPLICAS": "2",
                  "MNEMOD_LOG_LEVEL": "warn", "MNEMOD_LOG_TRIM_INTERVAL": "0",
                  "MNEMOD_LOG_TRIM_SIZE": "256MiB"})
        e.update(env or {})
        self.log = open(os.path.join(self.dir, "log"), "ab")
        self.proc = subprocess.Popen([BIN, "--listen", "127.0.0.1:%d" % self.port, "--data",
                                      os.path.join(self.dir, "m.db")], env=e,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        self.conn = Conn(self.port)

    def wait(self, timeout=90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st, _ = Conn(self.port).call("GET", "/healthz", timeout=2)
            if st == 200:
                return
            time.sleep(0.1)
        raise RuntimeError("node %s did not start" % self.name)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


def vec(rng):
    return [round(rng.uniform(-1, 1), 4) for _ in range(DIM)]


# The load generator must cost far less than the server: vectors are drawn once, and a
# batch body is assembled from their JSON text (ids and timestamps differ per segment).
_POOL = None


def pool():
    global _POOL
    if _POOL is None:
        prng = random.Random(42)
        _POOL = [json.dumps(vec(prng)) for _ in range(1009)]
    return _POOL


def batch_body(prefix, k0, n, base_ms=None):
    p = pool()
    if base_ms is None:
        items = ['{"id":"%s%d","embedding":%s}' % (prefix, k0 + j, p[(k0 + j) % len(p)])
                 for j in range(n)]
    else:
        items = ['{"id":"%s%d","embedding":%s,"timestamp":%.3f}'
                 % (prefix, k0 + j, p[(k0 + j) % len(p)], (base_ms + k0 + j) / 1000.0)
                 for j in range(n)]
    return ('{"segments":[' + ",".join(items) + "]}").encode()


def status(node):
    return node.conn.call("GET", "/v1/cluster")[1]


def wait_settled(nodes, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ok = True
        lasts, applied = {}, []
        for n in nodes:
            b = status(n)
            if not b:
                ok = False
                break
            for s in b["streams"]:
                lasts[s["name"]] = max(lasts.get(s["name"], 0), s["last_seq"])
            applied.append({s["name"]: s["applied_seq"] for s in b["streams"]})
            if any(x.get("join") or (n.name in x["nodes"] and x["state"] != "live")
                   for x in b["namespaces"]):
                ok = False
        if ok and all(a.get(k, 0) >= v for a in applied for k, v in lasts.items()):
            return True
        time.sleep(0.5)
    return False


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None


def throughput(targets, names, seconds, seed):
    """WRITERS clients, client i appends to names[i] through targets[i % len(targets)]."""
    stop = time.monotonic() + seconds
    counts, errors, lat = [0] * len(names), [0] * len(names), []
    lock = threading.Lock()

    def client(i):
        conn = Conn(targets[i % len(targets)].port)
        k = 0
        base = int(time.time() * 1000)
        while time.monotonic() < stop:
            body = batch_body("t%d-%d-" % (seed, i), k, BATCH, base)
            t0 = time.monotonic()
            st, _ = conn.call("POST", "/v1/namespaces/%s/segments" % names[i], body)
            if st in (200, 201):
                counts[i] += BATCH
                with lock:
                    lat.append(time.monotonic() - t0)
                k += BATCH
            else:
                errors[i] += 1
                time.sleep(0.05)

    t0 = time.monotonic()
    ts = [threading.Thread(target=client, args=(i,)) for i in range(len(names))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dt = time.monotonic() - t0
    return {"segments": sum(counts), "seconds": round(dt, 2),
            "segments_per_s": round(sum(counts) / dt, 1), "errors": sum(errors),
            "batch_p50_ms": round(1000 * pct(lat, 0.5), 1) if lat else None,
            "batch_p95_ms": round(1000 * pct(lat, 0.95), 1) if lat else None}


def main():
    if not shutil.which("nats-server") and not os.path.exists("/usr/sbin/nats-server"):
        print("cluster bench: nats-server is not installed")
        return 0
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-cluster-")
    nats = natscluster.NatsCluster(3)
    nodes = []
    res = {"nodes": NODES, "namespace_replicas": 2, "stream_replicas": 3, "dim": DIM,
           "machine": {"cpu": platform.processor() or platform.machine(),
                       "cores": os.cpu_count(), "kernel": platform.release()}}
    rng = random.Random(1)
    try:
        nats.start_all()
        for i in range(NODES):
            nodes.append(Node("n%d" % (i + 1), nats.url(i % 3), tmp))
        for n in nodes:
            n.wait()
        time.sleep(2)  # every node has seen every heartbeat: placement spreads over all six

        # ---- capacity ----
        t0 = time.monotonic()
        names = ["cap%02d" % i for i in range(NS)]
        for b in range(PER_NS // BATCH):
            for ns in names:
                st, body = rng.choice(nodes).conn.call(
                    "POST", "/v1/namespaces/%s/segments" % ns,
                    batch_body(ns + "-", b * BATCH, BATCH))
                if st not in (200, 201):
                    raise RuntimeError("capacity insert: %r %r" % (st, body))
        wait_settled(nodes)
        per_node = {}
        for n in nodes:
            st, body = n.conn.call("GET", "/v1/namespaces", headers=LOCAL)
            per_node[n.name] = sum(x["count"] for x in body["namespaces"])
        total = NS * PER_NS
        res["capacity"] = {
            "namespaces": NS, "segments_total": total, "stored_per_node": per_node,
            "total_over_max_node": round(total / max(per_node.values()), 2),
            "total_over_mean_node": round(total / statistics.mean(per_node.values()), 2),
            "load_seconds": round(time.monotonic() - t0, 1)}
        print("capacity: %d segments in %d namespaces; per node %r; total / largest node %.2f"
              % (total, NS, per_node, res["capacity"]["total_over_max_node"]))

        # ---- write throughput ----
        wnames = ["w%02d" % i for i in range(WRITERS)]
        for ns in wnames:  # placed and created before the clock starts
            rng.choice(nodes).conn.call("PUT", "/v1/namespaces/" + ns, {"dim": DIM})
        wait_settled(nodes)
        one = throughput([nodes[0]], wnames, SECONDS, 100)
        wait_settled(nodes)
        spread = throughput(nodes, wnames, SECONDS, 200)
        wait_settled(nodes)
        res["writes_through_one_node"] = one
        res["writes_spread"] = spread
        res["spread_over_one_node"] = round(spread["segments_per_s"] / one["segments_per_s"], 2)
        print("writes: through one node %.0f segments/s, spread over %d nodes %.0f segments/s "
              "(%.2fx)" % (one["segments_per_s"], NODES, spread["segments_per_s"],
                           res["spread_over_one_node"]))

        # ---- forwarding ----
        ns = names[0]
        e = [x for x in status(nodes[0])["namespaces"] if x["name"] == ns][0]
        holder = [n for n in nodes if n.name == e["nodes"][0]][0]
        other = [n for n in nodes if n.name not in e["nodes"]][0]
        qs = [{"embedding": vec(rng), "k": 10} for _ in range(50)]
        direct, relayed = [], []
        for rep in range(8):
            for q in qs:
                for target, out in ((holder, direct), (other, relayed)):
                    t0 = time.perf_counter()
                    st, body = target.conn.call("POST", "/v1/namespaces/%s/retrieve" % ns, q)
                    out.append(time.perf_counter() - t0)
                    if st != 200:
                        raise RuntimeError("retrieve: %r %r" % (st, body))
        res["forwarding"] = {
            "namespace_segments": PER_NS, "requests": len(direct),
            "holder_p50_us": round(1e6 * pct(direct, 0.5)),
            "holder_p95_us": round(1e6 * pct(direct, 0.95)),
            "relayed_p50_us": round(1e6 * pct(relayed, 0.5)),
            "relayed_p95_us": round(1e6 * pct(relayed, 0.95)),
            "added_p50_us": round(1e6 * (pct(relayed, 0.5) - pct(direct, 0.5)))}
        print("forwarding: retrieve p50 %d us on the holder, %d us through a non-holder (+%d us)"
              % (res["forwarding"]["holder_p50_us"], res["forwarding"]["relayed_p50_us"],
                 res["forwarding"]["added_p50_us"]))

        # ---- a move of a large namespace under write load ----
        t0 = time.monotonic()
        big = "big"
        base = int(time.time() * 1000) - 10 * MOVE_N
        k = 0
        while k < MOVE_N:
            n_b = min(1000, MOVE_N - k)
            st, body = rng.choice(nodes).conn.call("POST", "/v1/namespaces/big/segments",
                                                   batch_body("big-", k, n_b, base), timeout=300)
            if st not in (200, 201):
                raise RuntimeError("preload: %r %r" % (st, body))
            k += n_b
        wait_settled(nodes, timeout=600)
        load_s = time.monotonic() - t0
        acked, ack_times, errors = [], [], [0]
        stop = [False]

        def writer():
            wrng = random.Random(9)
            conns = [Conn(n.port) for n in nodes]
            j = MOVE_N
            while not stop[0]:
                body = batch_body("big-", j, 20, base)
                while True:
                    st, _ = wrng.choice(conns).call("POST", "/v1/namespaces/big/segments", body)
                    if st in (200, 201):
                        acked.extend("big-%d" % (j + i) for i in range(20))
                        ack_times.append(time.monotonic())
                        break
                    errors[0] += 1
                    time.sleep(0.02)
                j += 20
                time.sleep(0.01)

        wt = threading.Thread(target=writer)
        wt.start()
        time.sleep(2)
        e = [x for x in status(nodes[0])["namespaces"] if x["name"] == big][0]
        src = e["nodes"][0]
        dst = [n.name for n in nodes if n.name not in e["nodes"]][0]
        t_move = time.monotonic()
        st, body = nodes[0].conn.call("POST", "/v1/cluster/move",
                                      {"namespace": big, "from": src, "to": dst})
        if st != 200:
            raise RuntimeError("move: %r %r" % (st, body))
        while True:
            e = [x for x in status(nodes[0])["namespaces"] if x["name"] == big][0]
            if dst in e["nodes"] and src not in e["nodes"] and not e.get("join"):
                break
            if time.monotonic() - t_move > 600:
                raise RuntimeError("the move did not finish")
            time.sleep(0.05)
        t_switch = time.monotonic()
        time.sleep(3)
        stop[0] = True
        wt.join()
        wait_settled(nodes)
        gaps = [b - a for a, b in zip(ack_times, ack_times[1:])]
        around = [b - a for a, b in zip(ack_times, ack_times[1:]) if b >= t_switch - 5 and
                  a <= t_switch + 5]
        counts = {}
        for n in nodes:
            if n.name in e["nodes"]:
                st, body = n.conn.call("GET", "/v1/namespaces/" + big, headers=LOCAL)
                counts[n.name] = body["count"] if st == 200 else None
        missing = 0
        for sid in acked[:: max(1, len(acked) // 200)] + acked[-50:]:
            for n in nodes:
                if n.name in e["nodes"]:
                    st, _ = n.conn.call("GET", "/v1/namespaces/big/segments/" + sid,
                                        headers=LOCAL)
                    missing += st != 200
        res["move"] = {
            "segments_before": MOVE_N, "load_seconds": round(load_s, 1),
            "from": src, "to": dst, "switch_seconds": round(t_switch - t_move, 2),
            "writes_acked_during": len(acked), "write_errors": errors[0],
            "max_gap_s": round(max(gaps), 3) if gaps else None,
            "max_gap_around_switch_s": round(max(around), 3) if around else None,
            "counts_on_holders": counts, "expected_count": MOVE_N + len(acked),
            "sampled_ids_missing": missing}
        print("move: %d segments moved %s -> %s in %.1f s under load; %d writes acknowledged "
              "meanwhile, longest gap between acks %.3f s (around the switch %.3f s); counts on "
              "the holders %r, expected %d; sampled ids missing %d"
              % (MOVE_N, src, dst, t_switch - t_move, len(acked) // 20,
                 res["move"]["max_gap_s"] or 0, res["move"]["max_gap_around_switch_s"] or 0,
                 counts, MOVE_N + len(acked), missing))
        for n in nodes:
            n.stop()
        nodes = []

        # ---- the single-machine reference: one mnemod alone ----
        solo = Node("solo", nats.url(0), tmp, env={"MNEMOD_NAMESPACE_REPLICAS": "1"})
        nodes = [solo]
        solo.wait()
        for ns in wnames:
            solo.conn.call("PUT", "/v1/namespaces/s" + ns, {"dim": DIM})
        single = throughput([solo], ["s" + x for x in wnames], SECONDS, 300)
        res["writes_single_node"] = single
        res["spread_over_single_node"] = round(spread["segments_per_s"] /
                                               single["segments_per_s"], 2)
        print("writes: one mnemod alone %.0f segments/s; six nodes spread %.2fx that"
              % (single["segments_per_s"], res["spread_over_single_node"]))
    finally:
        for n in nodes:
            n.stop()
        nats.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(OUT) or ".", exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print("results in %s" % OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
