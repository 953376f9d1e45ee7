#!/usr/bin/env python3
"""cluster scale bench: write and read throughput of 1, 2 and 3 nodes against one server.

Usage: scale.py BUILD_DIR/mnemod [results.json]

In one run, on loopback, with the same load generator throughout:
- the reference: one mnemod in single-node mode (no NATS);
- then, for N = 1, 2, 3: three nats-server (JetStream, stream replicas 3) and N mnemod
  nodes, each namespace on min(2, N) of them.
Each setup gets the same two loads, each for SECONDS:
- writes: WRITERS clients, each appending batches of BATCH segments to a namespace of its
  own (created before the clock starts);
- reads: READERS clients sending retrieves (k 10) to READ_NS preloaded namespaces of
  READ_N segments each, a random namespace per request;
once all through node 1 (a namespace placed elsewhere is relayed by node 1) and once
spread (client i talks to node i mod N). Every figure is also given as a ratio to the
single server's. Measures only; never fails the build.
Env: BENCH_SCALE_SECONDS (8), BENCH_SCALE_WRITERS (6), BENCH_SCALE_READERS (6),
BENCH_SCALE_DIM (64)."""
import json
import os
import random
import shutil
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
OUT = sys.argv[2] if len(sys.argv) > 2 else "bench/results/cluster_scale.json"
SECONDS = float(os.environ.get("BENCH_SCALE_SECONDS", "8"))
WRITERS = int(os.environ.get("BENCH_SCALE_WRITERS", "6"))
READERS = int(os.environ.get("BENCH_SCALE_READERS", "6"))
DIM = int(os.environ.get("BENCH_SCALE_DIM", "64"))
BATCH = 50
READ_NS = 6
READ_N = 2000

_POOL = []


def pool():
    if not _POOL:
        _POOL.append(benchlib.VectorPool(DIM))
    return _POOL[0]


def batch_body(prefix, k0, n):
    return pool().batch_body(prefix, k0, n)


def node(name, tmp, nats_url=None, replicas=2):
    """A single server (nats_url None) or a cluster node, its settings the bench's own."""
    e = {"MNEMOD_LOG_LEVEL": "warn"}
    if nats_url:
        e.update({"MNEMOD_NATS_URL": nats_url, "MNEMOD_NODE_ID": name,
                  "MNEMOD_REPLICAS": "3", "MNEMOD_NAMESPACE_REPLICAS": str(replicas),
                  "MNEMOD_LOG_TRIM_INTERVAL": "0", "MNEMOD_LOG_TRIM_SIZE": "256MiB"})
    return benchlib.Server(BIN, os.path.join(tmp, name), env=e, clean_env=True, name=name)


def settled(nodes, timeout=120):
    """Every node has read every stream to its end and holds its namespaces live."""
    if len(nodes) == 1 and nodes[0].name == "single":
        return
    if not benchlib.cluster_settled(nodes, timeout, interval=0.3):
        raise RuntimeError("the cluster did not settle")


def graphs_done(nodes, timeout=120):
    """The coherence graphs are built in the background after writes: a listing answers
    once every graph caught up (on every node, for a merged one), so reads are not timed
    against the graph's own work."""
    deadline = time.monotonic() + timeout
    for n in nodes:
        while n.conn.call("GET", "/v1/namespaces", timeout=30)[0] != 200:
            if time.monotonic() > deadline:
                raise RuntimeError("the graphs did not catch up")
            time.sleep(0.2)


def load(targets, n_clients, fn):
    """n_clients threads, client i on targets[i % len(targets)], calling fn(conn, i, k) for
    SECONDS; fn answers the units done (0: failed)."""
    stop = time.monotonic() + SECONDS
    done, errors, lat = [0] * n_clients, [0] * n_clients, [[] for _ in range(n_clients)]

    def client(i):
        conn = Conn(targets[i % len(targets)].port)
        k = 0
        while time.monotonic() < stop:
            t0 = time.monotonic()
            n = fn(conn, i, k)
            if n:
                done[i] += n
                lat[i].append(time.monotonic() - t0)
            else:
                errors[i] += 1
                time.sleep(0.05)
            k += 1

    t0 = time.monotonic()
    ts = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dt = time.monotonic() - t0
    all_lat = [x for xs in lat for x in xs]
    return {"units": sum(done), "seconds": round(dt, 2), "per_s": round(sum(done) / dt, 1),
            "errors": sum(errors), "p50_ms": round(1000 * pct(all_lat, 0.5), 2) if all_lat else None,
            "p95_ms": round(1000 * pct(all_lat, 0.95), 2) if all_lat else None}


def measure(nodes, tag):
    """Writes then reads, through node 1 and spread over every node."""
    first = nodes[0]
    wnames = ["w%s%d" % (tag, i) for i in range(WRITERS)]
    rnames = ["r%s%d" % (tag, i) for i in range(READ_NS)]
    rng = random.Random(7)
    for i, ns in enumerate(wnames + rnames):  # placed and created before any clock starts
        st, body = nodes[i % len(nodes)].conn.call("PUT", "/v1/namespaces/" + ns, {"dim": DIM})
        if st not in (200, 201):
            raise RuntimeError("create %s: %r %r" % (ns, st, body))
    for ns in rnames:
        for k in range(0, READ_N, 500):
            st, body = rng.choice(nodes).conn.call("POST", "/v1/namespaces/%s/segments" % ns,
                                                   batch_body(ns + "-", k, 500))
            if st not in (200, 201):
                raise RuntimeError("preload %s: %r %r" % (ns, st, body))
    settled(nodes)
    graphs_done(nodes)
    out = {}
    for mode, targets in (("one_node", [first]), ("spread", nodes)):
        def write(conn, i, k, mode=mode):
            st, _ = conn.call("POST", "/v1/namespaces/%s/segments" % wnames[i],
                              batch_body("%s-%s-" % (mode, tag), k * BATCH, BATCH))
            return BATCH if st in (200, 201) else 0
        out["writes_" + mode] = load(targets, WRITERS, write)
        settled(nodes)
        graphs_done(nodes)
        qrng = [random.Random(100 + i) for i in range(READERS)]
        queries = [json.dumps({"embedding": json.loads(pool().json[j]), "k": 10}).encode()
                   for j in range(64)]

        def read(conn, i, k):
            r = qrng[i]
            st, _ = conn.call("POST", "/v1/namespaces/%s/retrieve" % r.choice(rnames),
                              r.choice(queries))
            return 1 if st == 200 else 0
        out["reads_" + mode] = load(targets, READERS, read)
    return out


def main():
    if not shutil.which("nats-server") and not os.path.exists("/usr/sbin/nats-server"):
        print("cluster scale bench: nats-server is not installed")
        return 0
    res = {"seconds": SECONDS, "writers": WRITERS, "batch": BATCH, "readers": READERS,
           "read_namespaces": READ_NS, "read_segments_each": READ_N, "dim": DIM,
           "stream_replicas": 3, "nats_servers": 3,
           "machine": benchlib.machine(load_avg_at_start=os.getloadavg())}
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-scale-")
    nodes, nats = [], None
    try:
        nodes = [node("single", tmp)]
        nodes[0].wait()
        single = measure(nodes, "s")
        nodes[0].stop()
        nodes = []
        res["single_server"] = single
        print("single server: writes %.0f segments/s, reads %.0f retrieves/s"
              % (single["writes_one_node"]["per_s"], single["reads_one_node"]["per_s"]))
        for n in (1, 2, 3):
            nats = natscluster.NatsCluster(3)
            nats.start_all()
            nodes = [node("n%d-%d" % (n, i + 1), tmp, nats.url(i % 3), replicas=min(2, n))
                     for i in range(n)]
            for x in nodes:
                x.wait()
            time.sleep(2)  # every node has seen every heartbeat: placement spreads over all
            got = measure(nodes, "c%d" % n)
            for k, v in got.items():
                base = single["writes_one_node" if k.startswith("writes") else "reads_one_node"]
                v["ratio_to_single"] = round(v["per_s"] / base["per_s"], 2) if base["per_s"] else None
            res["nodes_%d" % n] = dict(got, namespace_replicas=min(2, n))
            print("%d node(s), R=%d: writes one node %.0f/s (%.2fx), spread %.0f/s (%.2fx); "
                  "reads one node %.0f/s (%.2fx), spread %.0f/s (%.2fx)"
                  % (n, min(2, n), got["writes_one_node"]["per_s"],
                     got["writes_one_node"]["ratio_to_single"], got["writes_spread"]["per_s"],
                     got["writes_spread"]["ratio_to_single"], got["reads_one_node"]["per_s"],
                     got["reads_one_node"]["ratio_to_single"], got["reads_spread"]["per_s"],
                     got["reads_spread"]["ratio_to_single"]))
            for x in nodes:
                x.stop()
            nodes = []
            nats.cleanup()
            nats = None
    finally:
        for x in nodes:
            x.stop()
        if nats:
            nats.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    res["machine"]["load_avg_at_end"] = os.getloadavg()
    benchlib.write_results(OUT, res)
    print("results in %s" % OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
