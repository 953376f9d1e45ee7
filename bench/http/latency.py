#!/usr/bin/env python3
"""latency bench: what HTTP adds to one retrieve, next to the in-process scan, same run.

Usage: latency.py BUILD_DIR [results.json]. Env: LATENCY_ROUNDS (default 5),
LATENCY_SECONDS (per wrk run, default 3), LATENCY_SCALE_N (default 100000, 0 skips it).

Two corpora, each loaded into the real mnemod over HTTP (base64 embeddings) and into the
same core index in process (bench/latency_inproc.c, from the same rows):
- tcd: 5000 x 128, temporal (half-life 300000 s, origin 1e6 s), K = 10, its 200 queries;
- scale: N x 384 clustered (the scale suite's corpus), 30-day half-life, K = 10.
Reads are timed once the background coherence graph has caught up with the load (the
namespace's stats wait for it). In rounds, so that both sides see the same machine load: the in-process scan p50
(mem_scan_run, one thread); the server's own took_ms p50 (queries sent one by one on a
keep-alive connection, bodies as a JSON client writes them: float32 widened to double,
shortest repr); and the keep-alive round trip p50 from a C client (wrk, one connection).
Reported: the medians over rounds and the ratios the targets are about,
took_ms / in-process and round trip - in-process. Writes bench/results/latency.json.
"""
import base64
import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build/release"
OUT = sys.argv[2] if len(sys.argv) > 2 else "bench/results/latency.json"
ROUNDS = int(os.environ.get("LATENCY_ROUNDS", "5"))
SECS = int(os.environ.get("LATENCY_SECONDS", "3"))
SCALE_N = int(os.environ.get("LATENCY_SCALE_N", "100000"))
HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


class Inproc:
    """bench/latency_inproc: builds the index, dumps the corpus, answers commands."""

    def __init__(self, args, tmp):
        self.dir = tempfile.mkdtemp(dir=tmp)
        self.p = subprocess.Popen([os.path.join(BUILD, "bench", "latency_inproc")] + args +
                                  [self.dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        if self.p.stdout.readline().strip() != "ready":
            raise RuntimeError("latency_inproc did not start")
        self.params = json.load(open(os.path.join(self.dir, "params.json")))

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def run(self, reps):
        return json.loads(self.cmd("run %d" % reps))

    def ids(self, q):
        return self.cmd("ids %d" % q).split()

    def close(self):
        try:
            self.cmd("quit")
        except (BrokenPipeError, OSError):
            pass
        self.p.wait(timeout=30)

    def rows(self):
        n, dim = self.params["n"], self.params["dim"]
        raw = open(os.path.join(self.dir, "corpus.f32"), "rb").read()
        ts = [int(x) for x in open(os.path.join(self.dir, "ts.txt"))]
        for i in range(n):
            yield i, raw[i * dim * 4:(i + 1) * dim * 4], ts[i]

    def queries(self):
        nq, dim = self.params["queries"], self.params["dim"]
        raw = open(os.path.join(self.dir, "queries.f32"), "rb").read()
        return [list(struct.unpack("<%df" % dim, raw[q * dim * 4:(q + 1) * dim * 4]))
                for q in range(nq)]


class Server:
    def __init__(self, tmp):
        self.port = free_port()
        self.log = open(os.path.join(tmp, "server.log"), "w")
        self.p = subprocess.Popen([os.path.join(BUILD, "mnemod"), "--listen",
                                   "127.0.0.1:%d" % self.port, "--data",
                                   os.path.join(tmp, "bench.db"), "--log-level", "warn"],
                                  stdout=self.log, stderr=self.log)
        self.conn = None
        for _ in range(400):
            try:
                if self.call("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                self.conn = None
            time.sleep(0.05)
        raise RuntimeError("mnemod did not come up")

    def call(self, method, path, body=None):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        self.conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        r = self.conn.getresponse()
        return r.status, r.read()

    def reconnect(self):
        if self.conn:
            self.conn.close()
        self.conn = None

    def stop(self):
        if self.conn:
            self.conn.close()
        self.p.terminate()
        try:
            return self.p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return "killed"
        finally:
            self.log.close()


def load(srv, ns, inp):
    """The rows as 1000-segment batches with base64 float32 embeddings."""
    t0 = time.perf_counter()
    batch = []
    prefix = inp.params["id_prefix"]

    def flush():
        body = json.dumps({"segments": batch}).encode()
        st, data = srv.call("POST", "/v1/namespaces/%s/segments" % ns, body)
        if st != 201:
            raise RuntimeError("load %s: %d %s" % (ns, st, data[:200]))
        batch.clear()

    for i, raw, ts_ms in inp.rows():
        batch.append({"id": "%s%d" % (prefix, i), "embedding": base64.b64encode(raw).decode(),
                      "timestamp": ts_ms / 1000.0})
        if len(batch) == 1000:
            flush()
    if batch:
        flush()
    return time.perf_counter() - t0


def wait_graph(srv, ns):
    """Acknowledged inserts are linked into the coherence graph in the background; the
    namespace's stats wait for it (503 after --graph-wait, then asked again). Reads are timed
    once it has caught up, not while the linker still competes for the cores."""
    t0 = time.perf_counter()
    while True:
        st, data = srv.call("GET", "/v1/namespaces/%s" % ns)
        if st == 200:
            return time.perf_counter() - t0
        if st != 503:
            raise RuntimeError("stats %s: %d %s" % (ns, st, data[:200]))


def bodies(inp):
    p = inp.params
    return [json.dumps({"embedding": q, "k": p["k"], "half_life": p["half_life_s"],
                        "origin": p["origin_ms"] / 1000.0}).encode() for q in inp.queries()]


def took_p50(srv, ns, bs):
    took = []
    for b in bs:
        st, data = srv.call("POST", "/v1/namespaces/%s/retrieve" % ns, b)
        if st != 200:
            raise RuntimeError("retrieve: %d %s" % (st, data[:200]))
        took.append(json.loads(data)["took_ms"] * 1000.0)
    return median(took)


def wrk_p50(port, ns, files):
    env = dict(os.environ, MNEMOD_BODIES=",".join(files),
               MNEMOD_PATHS="/v1/namespaces/%s/retrieve" % ns, MNEMOD_WEIGHTS="1")
    cmd = ["wrk", "-t", "1", "-c", "1", "-d", "%ds" % SECS, "--latency", "-s",
           os.path.join(HERE, "post.lua"), "http://127.0.0.1:%d" % port]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=SECS + 60).stdout
    for line in out.splitlines():
        if line.startswith("WRKJSON "):
            r = json.loads(line[8:])
            if r["errors"]:
                raise RuntimeError("wrk: %d errors" % r["errors"])
            return r["p50_us"], r["rps"]
    raise RuntimeError("wrk printed no result:\n" + out)


def suite(name, srv, inp, tmp, reps):
    # a fresh connection: building the in-process index can take longer than the server's
    # idle timeout, which then closes the one kept alive since the previous suite
    srv.reconnect()
    load_s = load(srv, name, inp)
    graph_s = wait_graph(srv, name)
    bs = bodies(inp)
    files = []
    for i, b in enumerate(bs[:50]):
        f = os.path.join(tmp, "%s-q%d.json" % (name, i))
        open(f, "wb").write(b)
        files.append(f)
    # same answers on both sides (ids of query 0, in order)
    st, data = srv.call("POST", "/v1/namespaces/%s/retrieve" % name, bs[0])
    http_ids = [r["id"] for r in json.loads(data)["results"]]
    same = http_ids == inp.ids(0)
    took_p50(srv, name, bs[:20])  # warm the server's caches and connection
    rounds = []
    for r in range(ROUNDS):
        ip = inp.run(reps)["p50_us"]
        tk = took_p50(srv, name, bs)
        rt, rps = wrk_p50(srv.port, name, files) if shutil.which("wrk") else (None, None)
        ip2 = inp.run(reps)["p50_us"]
        inproc = (ip + ip2) / 2  # measured on both sides of the HTTP runs
        rounds.append({"inprocess_p50_us": round(inproc, 2), "took_ms_p50_us": round(tk, 2),
                       "roundtrip_p50_us": rt, "roundtrip_rps": rps,
                       "took_ratio": round(tk / inproc, 3),
                       "roundtrip_minus_inprocess_us": round(rt - inproc, 1) if rt else None})
    res = {"n": inp.params["n"], "dim": inp.params["dim"], "queries": inp.params["queries"],
           "k": inp.params["k"], "half_life_s": inp.params["half_life_s"],
           "load_seconds": round(load_s, 2), "graph_wait_seconds": round(graph_s, 2),
           "same_ids_query0": same, "rounds": rounds}
    for key in ("inprocess_p50_us", "took_ms_p50_us", "roundtrip_p50_us", "took_ratio",
                "roundtrip_minus_inprocess_us"):
        vals = [x[key] for x in rounds if x[key] is not None]
        res[key] = median(vals)
    return res


def main():
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-latency-")
    res = {"rounds": ROUNDS, "wrk_seconds": SECS}
    srv = None
    try:
        srv = Server(tmp)
        t = Inproc(["tcd"], tmp)
        res["tcd_temporal"] = suite("tcd", srv, t, tmp, reps=5)
        t.close()
        r = res["tcd_temporal"]
        res["tcd_temporal"]["goals"] = {
            "took_ratio_max": 2.0, "took_met": r["took_ratio"] <= 2.0,
            "roundtrip_minus_inprocess_max_us": 50,
            "roundtrip_met": r["roundtrip_minus_inprocess_us"] is not None and
            r["roundtrip_minus_inprocess_us"] <= 50}
        if SCALE_N:
            s = Inproc(["scale", str(SCALE_N), "384"], tmp)
            res["scale_384_30d"] = suite("scale", srv, s, tmp, reps=3)
            s.close()
            r = res["scale_384_30d"]
            r["goals"] = {"took_ratio_max": 1.5, "took_met": r["took_ratio"] <= 1.5}
    finally:
        if srv:
            res["shutdown_status"] = srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    try:
        cpu = [ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
               if ln.startswith("model name")]
    except OSError:
        cpu = ["unknown"]
    res["machine"] = {"cpu": cpu[0] if cpu else "unknown", "cores": os.cpu_count()}
    for name in ("tcd_temporal", "scale_384_30d"):
        r = res.get(name)
        if not r:
            continue
        print("%-13s in-process p50 %8.1f us | took_ms p50 %8.1f us (%.2fx, goal <= %.1fx) | "
              "round trip p50 %s us (in-process + %s us%s) | same ids: %s" % (
                  name, r["inprocess_p50_us"], r["took_ms_p50_us"], r["took_ratio"],
                  r["goals"]["took_ratio_max"], r["roundtrip_p50_us"],
                  r["roundtrip_minus_inprocess_us"],
                  ", goal <= 50" if name == "tcd_temporal" else "", r["same_ids_query0"]))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(res, f, indent=2)
    print("wrote %s" % OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
