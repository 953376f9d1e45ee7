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
import json
import os
import shutil
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
    r = benchlib.wrk(port, 1, SECS, files, ["/v1/namespaces/%s/retrieve" % ns], threads=1,
                     extra=["--latency"])
    if r["errors"]:
        raise RuntimeError("wrk: %d errors" % r["errors"])
    return r["p50_us"], r["rps"]


def suite(name, srv, inp, tmp, reps):
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
        srv = benchlib.Server(os.path.join(BUILD, "mnemod"), tmp, ["--log-level", "warn"],
                              conn_timeout=600).wait(timeout=20)
        t = benchlib.Inproc(BUILD, ["tcd"], tmp)
        res["tcd_temporal"] = suite("tcd", srv, t, tmp, reps=5)
        t.close()
        r = res["tcd_temporal"]
        res["tcd_temporal"]["goals"] = {
            "took_ratio_max": 2.0, "took_met": r["took_ratio"] <= 2.0,
            "roundtrip_minus_inprocess_max_us": 50,
            "roundtrip_met": r["roundtrip_minus_inprocess_us"] is not None and
            r["roundtrip_minus_inprocess_us"] <= 50}
        if SCALE_N:
            s = benchlib.Inproc(BUILD, ["scale", str(SCALE_N), "384"], tmp)
            res["scale_384_30d"] = suite("scale", srv, s, tmp, reps=3)
            s.close()
            r = res["scale_384_30d"]
            r["goals"] = {"took_ratio_max": 1.5, "took_met": r["took_ratio"] <= 1.5}
    finally:
        if srv:
            res["shutdown_status"] = srv.stop(timeout=120)
        shutil.rmtree(tmp, ignore_errors=True)
    res["machine"] = benchlib.machine()
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
    benchlib.write_results(OUT, res)
    print("wrote %s" % OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
