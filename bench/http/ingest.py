#!/usr/bin/env python3
"""ingest over HTTP: acknowledged 1000 x 384 batches into an empty namespace and into one
holding 100k, durable single inserts at concurrency 32 into the 100k one, and the coherence
graph's catch-up rate beside them (acknowledgements never wait for the graph).

Usage: ingest.py BUILD_DIR/mnemod [results.json]. Env: INGEST_N (the big namespace,
default 100000), INGEST_BATCHES (timed batches per phase, default 20), INGEST_CLIENTS
(connections sending batches, default 2: one parses while the other's batch is written),
INGEST_SECONDS (the single-insert run, default 8), INGEST_GRAPH_WAIT (seconds to wait for
the graph to catch up at the end, default 120), INGEST_LOG (copy the server's log there),
INGEST_ONLY=single (load the 100k and run only the single inserts, about 15 s),
INGEST_SINGLE_HOOK (a shell command run while wrk runs, with $MNEMOD_PID set: e.g.
"perf stat -p $MNEMOD_PID sleep 6", to look into the single inserts).

Bodies are JSON with float arrays (what most clients send; "%.8g" each, about 8.3 MB a
batch); the 100k load goes in base64 bodies, which are cheaper to make. Vectors are random
Gaussian directions: a pool of 1000 rotated by each of the 384 offsets, so every segment is
distinct and the graph is sparse, as for unrelated memories. The server runs durable
(synchronous=FULL, the default). The machine's load average is recorded with the figures.
"""
import base64
import http.client
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/release/mnemod"
OUT = sys.argv[2] if len(sys.argv) > 2 else "bench/results/ingest_http.json"
DIM = 384
BATCH = 1000
BIG_N = int(os.environ.get("INGEST_N", "100000")) // BATCH * BATCH
BATCHES = int(os.environ.get("INGEST_BATCHES", "20"))
CLIENTS = int(os.environ.get("INGEST_CLIENTS", "2"))
SECS = int(os.environ.get("INGEST_SECONDS", "8"))
GRAPH_WAIT = float(os.environ.get("INGEST_GRAPH_WAIT", "120"))
ONLY = os.environ.get("INGEST_ONLY", "")
HOOK = os.environ.get("INGEST_SINGLE_HOOK", "")


class Vectors:
    """Distinct unit vectors, cheaply: pool[j] rotated by k places, for j < 1000, k < 384."""

    def __init__(self, seed):
        rng = random.Random(seed)
        self.pool = []
        for _ in range(1000):
            v = [rng.gauss(0, 1) for _ in range(DIM)]
            n = sum(x * x for x in v) ** 0.5
            self.pool.append([x / n for x in v])
        self.text = [["%.8g" % x for x in v] for v in self.pool]
        self.raw = [struct.pack("<%df" % DIM, *v) for v in self.pool]
        self.i = 0

    def next_json(self):
        j, k = self.i % 1000, (self.i // 1000) % DIM
        self.i += 1
        t = self.text[j]
        return "[" + ",".join(t[k:] + t[:k]) + "]"

    def next_b64(self):
        j, k = self.i % 1000, (self.i // 1000) % DIM
        self.i += 1
        r = self.raw[j]
        return '"' + base64.b64encode(r[4 * k:] + r[:4 * k]).decode() + '"'


def body(vecs, b64, tag):
    segs = []
    for i in range(BATCH):
        e = vecs.next_b64() if b64 else vecs.next_json()
        segs.append('{"text":"memory %s-%d","embedding":%s}' % (tag, i, e))
    return ('{"segments":[' + ",".join(segs) + "]}").encode()


def send_batches(port, ns, bodies, clients):
    """Send every body (each client waits for its 201 before its next); acked segments/s,
    batch latencies (s) and the error count."""
    lock = threading.Lock()
    todo = list(range(len(bodies)))
    lat, bad = [], []

    def loader():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        while True:
            with lock:
                if not todo:
                    break
                i = todo.pop(0)
            t = time.perf_counter()
            c.request("POST", f"/v1/namespaces/{ns}/segments", body=bodies[i],
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            with lock:
                lat.append(time.perf_counter() - t)
                if r.status != 201:
                    bad.append(r.status)
        c.close()

    t0 = time.perf_counter()
    ths = [threading.Thread(target=loader) for _ in range(clients)]
    [t.start() for t in ths]
    [t.join() for t in ths]
    dt = time.perf_counter() - t0
    lat.sort()
    return len(bodies) * BATCH / dt, lat, len(bad)


def metrics(port):
    out = {}
    for line in benchlib.Conn(port).request("GET", "/metrics")[1].decode().splitlines():
        if line.startswith(("mnemod_graph_", "mnemod_writer_ops_total", "mnemod_fsyncs_total",
                            "mnemod_commit_duration_seconds_sum", "mnemod_group_waits_total")) \
                and " " in line:
            k, v = line.split(" ", 1)
            out[k] = float(v)
    return out


def graph_rate(m0, m1):
    rows = m1.get("mnemod_graph_rows_total", 0) - m0.get("mnemod_graph_rows_total", 0)
    secs = m1.get("mnemod_graph_seconds_total", 0) - m0.get("mnemod_graph_seconds_total", 0)
    return round(rows / secs) if secs > 0 else 0


def thread_cpu_s(pid):
    """CPU seconds of each of pid's threads, summed by thread name (mnemod names its
    threads: the event loop is the process's own name, then mnemod-writer, -worker, ...)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                st = f.read()
        except OSError:
            continue  # the thread ended meanwhile
        name = st[st.index("(") + 1:st.rindex(")")]
        fields = st.rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        out[name] = out.get(name, 0) + ticks / os.sysconf("SC_CLK_TCK")
    return out


def load():
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def phase(srv, ns, bodies, clients):
    port = srv.port
    m0, l0, c0 = metrics(port), load(), benchlib.cpu_s(srv.pid)
    rate, lat, bad = send_batches(port, ns, bodies, clients)
    m1, c1 = metrics(port), benchlib.cpu_s(srv.pid)
    g = (m1.get("mnemod_graph_seconds_total", 0) - m0.get("mnemod_graph_seconds_total", 0))
    return {"acked_per_s": round(rate), "batch_p50_ms": round(lat[len(lat) // 2] * 1e3, 1),
            # the server's CPU per 1000 segments, every thread (the graph's too, when it ran)
            "server_cpu_ms_per_batch": round((c1 - c0) * 1e3 / len(bodies), 1),
            "graph_busy_s": round(g, 2),
            "batch_p95_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.95))] * 1e3, 1),
            "errors": bad, "clients": clients, "graph_rows_per_s": graph_rate(m0, m1),
            "load_before": l0, "load_after": load()}


def main():
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-ingest-")
    srv = benchlib.Server(BIN, tmp, ["--log-level", "warn"], conn_timeout=300)
    port = srv.port
    res = {"dim": DIM, "batch": BATCH, "batches_per_phase": BATCHES, "n": BIG_N,
           "body": "JSON float arrays (%.8g)", "durable": "synchronous=FULL"}
    try:
        srv.wait()
        vecs = Vectors(20261201)
        timed = [body(vecs, False, f"t{b}") for b in range(BATCHES if ONLY != "single" else 1)]
        res["body_bytes"] = len(timed[0])

        if ONLY != "single":
            res["empty"] = phase(srv, "empty", timed, CLIENTS)
            res["empty_1_client"] = phase(srv, "empty1", timed, 1)
            print(f"into an empty namespace: {res['empty']['acked_per_s']:,} segments/s "
                  f"acknowledged ({CLIENTS} clients; batch p50 {res['empty']['batch_p50_ms']} ms); "
                  f"one client "
                  f"{res['empty_1_client']['acked_per_s']:,}/s (p50 "
                  f"{res['empty_1_client']['batch_p50_ms']} ms)")

        t0 = time.perf_counter()
        done = 0
        while done < BIG_N:  # the 100k, in base64 bodies made as they go
            chunk = [body(vecs, True, f"l{done + b * BATCH}")
                     for b in range(min(10, (BIG_N - done) // BATCH))]
            send_batches(port, "big", chunk, CLIENTS)
            done += len(chunk) * BATCH
        res["load"] = {"segments": BIG_N, "seconds": round(time.perf_counter() - t0, 1)}

        if ONLY != "single":
            res["full"] = phase(srv, "big", timed, CLIENTS)
            print(f"into one holding {BIG_N:,}: {res['full']['acked_per_s']:,} segments/s "
                  f"acknowledged (batch p50 {res['full']['batch_p50_ms']} ms)")

        if shutil.which("wrk"):
            m0, l0, c0 = metrics(port), load(), benchlib.cpu_s(srv.pid)
            t0 = thread_cpu_s(srv.pid)
            hook = None
            if HOOK:
                hook = subprocess.Popen(["sh", "-c", "sleep 1; " + HOOK],
                                        env=dict(os.environ, MNEMOD_PID=str(srv.pid)))
            r = benchlib.wrk(port, 32, SECS, [f"parts:{DIM}"], ["/v1/namespaces/big/segments"],
                             extra=["--timeout", "10s"])
            m1, c1, t1 = metrics(port), benchlib.cpu_s(srv.pid), thread_cpu_s(srv.pid)
            if hook:
                hook.wait()
            n = max(r["requests"], 1)
            d = {k: m1.get(k, 0) - m0.get(k, 0) for k in m1}
            commits = max(d.get("mnemod_fsyncs_total", 0), 1)
            r.update({"graph_rows_per_s": graph_rate(m0, m1), "load_before": l0,
                      # the writer's groups: records per commit, mean commit (its fsync)
                      "writes_per_commit": round(d.get("mnemod_writer_ops_total", 0) / commits,
                                                 1),
                      "commit_mean_ms": round(d.get("mnemod_commit_duration_seconds_sum", 0) *
                                              1e3 / commits, 3),
                      "group_waits_deadline": d.get('mnemod_group_waits_total{ended="deadline"}',
                                                    0),
                      "load_after": load(),
                      "server_cpu_us_per_insert": round((c1 - c0) * 1e6 / n, 1),
                      # per thread name: where the CPU of an insert goes (the graph's
                      # linking runs beside the burst and is not on the path)
                      "thread_cpu_us_per_insert": {
                          k: round((t1.get(k, 0) - t0.get(k, 0)) * 1e6 / n, 1)
                          for k in sorted(t1)}})
            res["single_c32"] = r
            print(f"single inserts, concurrency 32, into {BIG_N:,}: {r['rps']:,.0f}/s "
                  f"acknowledged (p50 {r['p50_us']} us, p99 {r['p99_us']} us, errors "
                  f"{r['errors']}; {r['writes_per_commit']} a commit of "
                  f"{r['commit_mean_ms']} ms; server CPU per insert {r['server_cpu_us_per_insert']} us: "
                  + ", ".join(f"{k} {v}" for k, v in r["thread_cpu_us_per_insert"].items()) + ")")
        else:
            print("single inserts: wrk is not installed (make bench installs it)")

        m0, t0 = metrics(port), time.perf_counter()
        while metrics(port).get("mnemod_graph_behind", 0) > 0 and \
                time.perf_counter() - t0 < GRAPH_WAIT:
            time.sleep(0.5)
        m1 = metrics(port)
        res["graph"] = {"rows_per_s": graph_rate(m0, m1),
                        "caught_up": m1.get("mnemod_graph_behind", 0) == 0,
                        "waited_s": round(time.perf_counter() - t0, 1),
                        "rows_total": int(m1.get("mnemod_graph_rows_total", 0)),
                        "seconds_total": round(m1.get("mnemod_graph_seconds_total", 0), 1)}
        print(f"graph catch-up: {res['graph']['rows_per_s']:,} rows/s; "
              f"{'caught up' if res['graph']['caught_up'] else 'still behind'} "
              f"{res['graph']['waited_s']} s after the last ack")
        res["targets"] = {
            "empty_acked_per_s": res.get("empty", {}).get("acked_per_s"), "empty_goal": 20000,
            "full_acked_per_s": res.get("full", {}).get("acked_per_s"), "full_goal": 15000,
            "single_c32_per_s": round(res.get("single_c32", {}).get("rps", 0)),
            "single_c32_goal": 10000, "graph_rows_per_s": res["graph"]["rows_per_s"]}
    finally:
        res["shutdown_status"] = srv.stop(timeout=120)
        if os.environ.get("INGEST_LOG"):  # the server's log, to look into a run
            shutil.copy(os.path.join(tmp, "log"), os.environ["INGEST_LOG"])
        shutil.rmtree(tmp, ignore_errors=True)
    res["machine"] = benchlib.machine()
    benchlib.write_results(OUT, res)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
