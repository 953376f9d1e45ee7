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
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "cluster"))
sys.path.insert(0, os.path.join(HERE, ".."))
import benchlib  # noqa: E402
import natscluster  # noqa: E402
from benchlib import Conn, pct  # noqa: E402

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


def node(name, nats_url, tmp, env=None):
    """A cluster node, its settings the bench's own (none from the caller's environment)."""
    e = {"MNEMOD_NATS_URL": nats_url, "MNEMOD_NODE_ID": name, "MNEMOD_REPLICAS": "3",
         "MNEMOD_NAMESPACE_REPLICAS": "2", "MNEMOD_LOG_LEVEL": "warn",
         "MNEMOD_LOG_TRIM_INTERVAL": "0", "MNEMOD_LOG_TRIM_SIZE": "256MiB"}
    e.update(env or {})
    return benchlib.Server(BIN, os.path.join(tmp, name), env=e, clean_env=True, name=name)


def vec(rng):
    return [round(rng.uniform(-1, 1), 4) for _ in range(DIM)]


# The load generator must cost far less than the server (see benchlib.VectorPool).
_POOL = None


def batch_body(prefix, k0, n, base_ms=None):
    global _POOL
    if _POOL is None:
        _POOL = benchlib.VectorPool(DIM)
    return _POOL.batch_body(prefix, k0, n, base_ms)


def status(n):
    return n.conn.call("GET", "/v1/cluster")[1]


def wait_settled(nodes, timeout=300):
    return benchlib.cluster_settled(nodes, timeout)


# Per namespace, the timestamp (ms) its next segment may have: a client stamps segment k
# base + k, which runs ahead of the clock when a client writes more than a segment a
# millisecond, and a namespace's timestamps must never go back (409) in the next run.
_NEXT_MS = {}


def throughput(targets, names, seconds, seed):
    """WRITERS clients, client i appends to names[i] through targets[i % len(targets)]."""
    stop = time.monotonic() + seconds
    counts, errors, lat = [0] * len(names), [0] * len(names), []
    lock = threading.Lock()

    def client(i):
        conn = Conn(targets[i % len(targets)].port)
        k = 0
        base = max(int(time.time() * 1000), _NEXT_MS.get(names[i], 0))
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
        _NEXT_MS[names[i]] = base + k

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
           "machine": benchlib.machine()}
    rng = random.Random(1)
    try:
        nats.start_all()
        for i in range(NODES):
            nodes.append(node("n%d" % (i + 1), nats.url(i % 3), tmp))
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
        solo = node("solo", nats.url(0), tmp, env={"MNEMOD_NAMESPACE_REPLICAS": "1"})
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
    benchlib.write_results(OUT, res)
    print("results in %s" % OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
