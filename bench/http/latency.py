#!/usr/bin/env python3
"""latency bench: what HTTP adds to one retrieve, next to the in-process scan, same run.

Usage: latency.py BUILD_DIR [results.json]. Env: LATENCY_ROUNDS (default 5),
LATENCY_SECONDS (per wrk run, default 3), LATENCY_SCALE_N (default 100000, 0 skips it),
LATENCY_PIN_CPU (below), LATENCY_SERVER_ARGS (more mnemod options, space-separated).

Two corpora, each loaded into the real mnemod over HTTP (base64 embeddings) and into the
same core index in process (bench/latency_inproc.c, from the same rows):
- tcd: 5000 x 128, temporal (half-life 300000 s, origin 1e6 s), K = 10, its 200 queries;
- scale: N x 384 clustered (the scale suite's corpus), 30-day half-life, K = 10.
Reads are timed once the background coherence graph has caught up with the load (the
namespace's stats wait for it). In rounds, so that both sides see the same machine load: the in-process scan p50
(mem_scan_run, one thread); the server's own took_ms p50 (queries sent one by one on a
keep-alive connection, bodies as a JSON client writes them: float32 widened to double,
shortest repr); and the keep-alive round trip p50 from a C client (wrk, one connection),
with the p50 of the took_ms the server put in those same answers (post.lua reads them).
Reported: the medians over rounds and the ratios the targets are about,
took_ms / in-process and round trip - in-process, for both clients; the goals are checked on
wrk's requests (one C client, both figures from the same requests) and the Python client's
took_ms is reported beside them: its own work between two requests, on the CPU the loop
runs on, evicts what the scan had cached (below). Writes bench/results/latency.json.

Each round measures took_ms and the round trip three times: as is (every process and thread
wherever the scheduler puts it), then "pinned": the server's event-loop thread (its main
thread; the pool, writer and linker threads stay free), wrk and this driver's own client
confined to one CPU (LATENCY_PIN_CPU, default 0; "none" skips it), then "apart": the loop
thread on that CPU and the clients on another. On a VM a halted vCPU takes 150-400 us to
wake, which the unpinned round trip pays whenever the answer or the next request lands on a
sleeping CPU; on one shared CPU the client and the loop hand the core to each other and
nothing sleeps, so the pinned figures are the server's own CPU cost plus the kernel's
loopback, without the machine's wake-ups. A loopback answer wakes its client with the
kernel's sync hint, which puts it on the loop's CPU when the loop is the only task there, so
"as is" usually shares the CPU too: the client's work between requests (this driver's Python
above all) then evicts what the scan had cached. "apart" keeps the client off that CPU, and
shows the server's cost when the client has a core of its own. All three are reported; the
goals are checked on "as is" and "pinned", and for tcd whether both hold on the same requests.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import benchlib  # noqa: E402
from benchlib import median  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build/release"
OUT = sys.argv[2] if len(sys.argv) > 2 else "bench/results/latency.json"
ROUNDS = int(os.environ.get("LATENCY_ROUNDS", "5"))
SECS = int(os.environ.get("LATENCY_SECONDS", "3"))
SCALE_N = int(os.environ.get("LATENCY_SCALE_N", "100000"))
PIN_CPU = os.environ.get("LATENCY_PIN_CPU", "0")
PIN_CPU = None if PIN_CPU == "none" else int(PIN_CPU)


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


def wrk_p50(port, ns, files, tmp, cpus=None):
    """wrk's round trip p50 (us), its requests/s, and the p50 (us) of the took_ms the server
    put in those same answers."""
    took_file = os.path.join(tmp, "wrk-took")
    r = benchlib.wrk(port, 1, SECS, files, ["/v1/namespaces/%s/retrieve" % ns], threads=1,
                     extra=["--latency"], cpus=cpus, env={"MNEMOD_TOOK_FILE": took_file})
    if r["errors"]:
        raise RuntimeError("wrk: %d errors" % r["errors"])
    took = []
    for f in os.listdir(tmp):
        if f.startswith("wrk-took."):
            with open(os.path.join(tmp, f)) as h:
                took += [float(x) * 1000.0 for x in h if x.strip()]
            os.unlink(os.path.join(tmp, f))
    if len(took) < r["requests"] // 2:
        raise RuntimeError("wrk: took_ms read from %d of %d answers" % (len(took), r["requests"]))
    return r["p50_us"], r["rps"], median(took)


class Pinned:
    """with Pinned(srv, cpu): the server's loop thread (its main thread) and this driver on
    CPU cpu (with client_cpu: the driver on that CPU instead); afterwards both as they were.
    A server thread started meanwhile inherits the loop's CPU: it is set free again on the
    way out and counted in self.inherited."""

    def __init__(self, srv, cpu, client_cpu=None):
        self.srv, self.cpus, self.inherited = srv, {cpu}, 0
        self.client = {cpu if client_cpu is None else client_cpu}

    def __enter__(self):
        self.before = benchlib.thread_affinities(self.srv.pid)
        self.own = os.sched_getaffinity(0)
        os.sched_setaffinity(self.srv.pid, self.cpus)  # the thread whose id is the pid
        os.sched_setaffinity(0, self.client)
        return self

    def __exit__(self, *exc):
        os.sched_setaffinity(0, self.own)
        free = self.before.get(self.srv.pid, self.own)
        for tid, cpus in benchlib.thread_affinities(self.srv.pid).items():
            if tid == self.srv.pid or (tid not in self.before and cpus == self.cpus):
                self.inherited += tid != self.srv.pid
                try:
                    os.sched_setaffinity(tid, self.before.get(tid, free))
                except OSError:
                    pass
        return False


def floor_p50(port, cpus=None):
    """The transport alone: wrk's keep-alive round trip p50 (us) on GET /healthz, which the
    server answers on the request's head (no body, no work), one connection."""
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus is not None else None
    out = subprocess.run(["wrk", "-t", "1", "-c", "1", "-d", "%ds" % SECS, "--latency",
                          "http://127.0.0.1:%d/healthz" % port], capture_output=True, text=True,
                         timeout=SECS + 60, preexec_fn=pin).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "50%":
            scale = {"us": 1, "ms": 1000, "s": 1000000}
            unit = f[1].lstrip("0123456789.")
            return round(float(f[1][:-len(unit)]) * scale[unit], 1) if unit in scale else None
    return None


def http_pass(srv, name, bs, files, tmp, cpus=None):
    """took_ms p50 with this driver as the client, then wrk's round trip p50, its requests/s
    and the took_ms p50 of wrk's requests, with the client on cpus."""
    tk = took_p50(srv, name, bs)
    rt, rps, wtk = (wrk_p50(srv.port, name, files, tmp, cpus) if shutil.which("wrk")
                    else (None, None, None))
    return tk, rt, rps, wtk


def suite(name, srv, inp, tmp, reps, with_floor=False):
    # a fresh connection: building the in-process index can take longer than the server's
    # idle timeout, which then closes the one kept alive since the previous suite
    srv.conn.close()
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
    rounds, inherited = [], 0
    pin = pin_cpu()
    for r in range(ROUNDS):
        ip = inp.run(reps)["p50_us"]
        passes = {"": http_pass(srv, name, bs, files, tmp)}
        if pin is not None:
            with Pinned(srv, pin) as p:
                passes["pinned_"] = http_pass(srv, name, bs, files, tmp, {pin})
            inherited += p.inherited
            other = other_cpu(pin)
            if other is not None:
                with Pinned(srv, pin, other) as p:
                    passes["apart_"] = http_pass(srv, name, bs, files, tmp, {other})
                inherited += p.inherited
        ip2 = inp.run(reps)["p50_us"]
        inproc = (ip + ip2) / 2  # measured on both sides of the HTTP runs
        rd = {"inprocess_p50_us": round(inproc, 2)}
        for pre, (tk, rt, rps, wtk) in passes.items():
            rd.update({pre + "took_ms_p50_us": round(tk, 2), pre + "roundtrip_p50_us": rt,
                       pre + "roundtrip_rps": rps, pre + "took_ratio": round(tk / inproc, 3),
                       pre + "roundtrip_minus_inprocess_us":
                           round(rt - inproc, 1) if rt else None,
                       pre + "wrk_took_ms_p50_us": round(wtk, 2) if wtk else None,
                       pre + "wrk_took_ratio": round(wtk / inproc, 3) if wtk else None})
        rounds.append(rd)
    floor = {}
    if with_floor and shutil.which("wrk"):  # once, after the rounds
        floor["floor_p50_us"] = floor_p50(srv.port)
        if pin is not None:
            with Pinned(srv, pin) as p:
                floor["pinned_floor_p50_us"] = floor_p50(srv.port, {pin})
            inherited += p.inherited
    res = {"n": inp.params["n"], "dim": inp.params["dim"], "queries": inp.params["queries"],
           "k": inp.params["k"], "half_life_s": inp.params["half_life_s"],
           "load_seconds": round(load_s, 2), "graph_wait_seconds": round(graph_s, 2),
           "same_ids_query0": same, "pinned_cpu": pin,
           "pinned_threads_inherited": inherited, "rounds": rounds, **floor}
    for key in rounds[0]:
        if key == "inprocess_p50_us" or key.endswith(("took_ms_p50_us", "roundtrip_p50_us",
                                                      "took_ratio", "minus_inprocess_us")):
            vals = [x[key] for x in rounds if x[key] is not None]
            res[key] = median(vals) if vals else None
    return res


def pin_cpu():
    """The CPU of the pinned pass, or None: asked to skip it, or this process may not use
    that CPU (or only it, where pinning measures nothing new)."""
    own = os.sched_getaffinity(0)
    if PIN_CPU is None or PIN_CPU not in own or len(own) < 2:
        return None
    return PIN_CPU


def other_cpu(pin):
    """A CPU of this process's other than pin, for the pass with the client apart, or None."""
    rest = sorted(os.sched_getaffinity(0) - {pin})
    return rest[0] if rest else None


def goals(r, took_max, rt_max):
    """The goals, checked on every pass: took_ms with this driver as the client, and took_ms
    and the round trip of wrk's requests (one C client, the same requests for both)."""
    g = {"took_ratio_max": took_max}
    if rt_max is not None:
        g["roundtrip_minus_inprocess_max_us"] = rt_max
    for pre in ("", "pinned_", "apart_"):
        if r.get(pre + "took_ratio") is None:
            continue
        g[pre + "took_met"] = r[pre + "took_ratio"] <= took_max
        wtk = r.get(pre + "wrk_took_ratio")
        g[pre + "wrk_took_met"] = wtk is not None and wtk <= took_max
        if rt_max is not None:
            rt = r.get(pre + "roundtrip_minus_inprocess_us")
            g[pre + "roundtrip_met"] = rt is not None and rt <= rt_max
            g[pre + "wrk_both_met"] = g[pre + "wrk_took_met"] and g[pre + "roundtrip_met"]
    return g


def main():
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-latency-")
    res = {"rounds": ROUNDS, "wrk_seconds": SECS}
    srv = None
    try:
        srv = benchlib.Server(os.path.join(BUILD, "mnemod"), tmp, ["--log-level", "warn"] +
                              os.environ.get("LATENCY_SERVER_ARGS", "").split(),
                              conn_timeout=600).wait(timeout=20)
        t = benchlib.Inproc(BUILD, ["tcd"], tmp)
        res["tcd_temporal"] = suite("tcd", srv, t, tmp, reps=5, with_floor=True)
        t.close()
        r = res["tcd_temporal"]
        r["goals"] = goals(r, 2.0, 50)
        if SCALE_N:
            s = benchlib.Inproc(BUILD, ["scale", str(SCALE_N), "384"], tmp)
            res["scale_384_30d"] = suite("scale", srv, s, tmp, reps=3)
            s.close()
            r = res["scale_384_30d"]
            r["goals"] = goals(r, 1.5, None)
    finally:
        if srv:
            res["shutdown_status"] = srv.stop(timeout=120)
        shutil.rmtree(tmp, ignore_errors=True)
    res["machine"] = benchlib.machine()
    for name in ("tcd_temporal", "scale_384_30d"):
        r = res.get(name)
        if not r:
            continue
        for pre, label in (("", "as is"), ("pinned_", "pinned"), ("apart_", "apart")):
            if r.get(pre + "took_ratio") is None:
                continue
            print("%-13s %-6s in-process p50 %8.1f us | took_ms p50 %8.1f us (%.2fx, goal <= "
                  "%.1fx) | wrk: took_ms p50 %s us (%sx), round trip p50 %s us (in-process + "
                  "%s us%s) | same ids: %s" % (
                      name, label, r["inprocess_p50_us"], r[pre + "took_ms_p50_us"],
                      r[pre + "took_ratio"], r["goals"]["took_ratio_max"],
                      r[pre + "wrk_took_ms_p50_us"], r[pre + "wrk_took_ratio"],
                      r[pre + "roundtrip_p50_us"], r[pre + "roundtrip_minus_inprocess_us"],
                      ", goal <= 50" if name == "tcd_temporal" else "", r["same_ids_query0"]))
        if r.get("floor_p50_us") is not None:
            print("%-13s transport floor (GET /healthz round trip p50): as is %s us, pinned %s us"
                  % (name, r["floor_p50_us"], r.get("pinned_floor_p50_us")))
    benchlib.write_results(OUT, res)
    print("wrote %s" % OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
