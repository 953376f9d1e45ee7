#!/usr/bin/env python3
"""http bench: the real mnemod on loopback, loaded with wrk.

Usage: run.py BUILD_DIR/mnemod [results.json]. Env: HTTP_N (segments, default 100000),
HTTP_DIM (384), HTTP_SECONDS (per wrk run, default 8).
"""
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import benchlib  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/release/mnemod"
OUT = sys.argv[2] if len(sys.argv) > 2 else "bench/results/http.json"
N = int(os.environ.get("HTTP_N", "100000"))
DIM = int(os.environ.get("HTTP_DIM", "384"))
SECS = int(os.environ.get("HTTP_SECONDS", "8"))


def unit(rng, centre=None, noise=0.3):
    v = [rng.gauss(0, 1) for _ in range(DIM)]
    if centre:
        v = [c + noise * x for c, x in zip(centre, v)]
    n = sum(x * x for x in v) ** 0.5
    return [round(x / n, 6) for x in v]


def wrk(port, conns, files, paths, weights=None):
    return benchlib.wrk(port, conns, SECS, files, paths, weights, extra=["--timeout", "10s"])


def main():
    if not shutil.which("wrk"):
        print("http bench: wrk is not installed (make bench installs it)")
        return 0
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-http-")
    srv = benchlib.Server(BIN, tmp, ["--log-level", "warn"], conn_timeout=120)
    port = srv.port
    res = {"n": N, "dim": DIM, "seconds_per_run": SECS}
    try:
        srv.wait()
        rng = random.Random(42)
        centres = [unit(rng) for _ in range(64)]
        # Batch load: prebuilt 1000-segment bodies (no ids, no timestamps: the server
        # assigns both), sent by 2 client threads so the server's parse+commit is measured.
        n_bodies = 4
        bodies = []
        for b in range(n_bodies):
            segs = [{"embedding": unit(rng, centres[rng.randrange(64)]), "text": f"memory {b}-{i}"}
                    for i in range(1000)]
            bodies.append(json.dumps({"segments": segs}).encode())
        batches = N // 1000
        lock = threading.Lock()
        todo = list(range(batches))
        bad = []

        def loader():
            c = benchlib.Conn(port, timeout=300)
            while True:
                with lock:
                    if not todo:
                        break
                    i = todo.pop()
                st, _ = c.request("POST", "/v1/namespaces/bench/segments", bodies[i % n_bodies])
                if st != 201:
                    bad.append(st)
            c.close()

        t0 = time.perf_counter()
        ths = [threading.Thread(target=loader) for _ in range(2)]
        [t.start() for t in ths]
        [t.join() for t in ths]
        dt = time.perf_counter() - t0
        res["batch_insert"] = {"segments": batches * 1000, "seconds": round(dt, 3),
                               "segments_per_s": round(batches * 1000 / dt), "errors": len(bad)}
        print(f"batch insert  {batches * 1000} segments in {dt:.2f} s: "
              f"{batches * 1000 / dt:,.0f} segments/s ({len(bad)} errors)")

        qfiles = []
        for i in range(4):
            p = os.path.join(tmp, f"q{i}.json")
            with open(p, "w") as f:
                json.dump({"embedding": unit(rng, centres[rng.randrange(64)]), "k": 10}, f)
            qfiles.append(p)
        # In-process time as the server reports it (took_ms), for the overhead ratio.
        took = []
        for i in range(50):
            st, data = srv.call("POST", "/v1/namespaces/bench/retrieve",
                                open(qfiles[i % 4], "rb").read())
            took.append(json.loads(data)["took_ms"] * 1000.0)
        took.sort()
        inproc_p50 = took[len(took) // 2]
        res["inprocess_retrieve_p50_us"] = round(inproc_p50, 1)
        rpath = ["/v1/namespaces/bench/retrieve"] * 4
        for conns in (1, 16, 64):
            r = wrk(port, conns, qfiles, rpath)
            res[f"retrieve_c{conns}"] = r
            print(f"retrieve c={conns:<3} {r['rps']:>9,.0f} req/s  p50 {r['p50_us']:>7} us  "
                  f"p99 {r['p99_us']:>7} us  errors {r['errors']}")
        c16 = res["retrieve_c16"]["p50_us"]
        res["http_overhead_ratio_c1"] = round(res["retrieve_c1"]["p50_us"] / max(inproc_p50, 1e-9), 2)
        print(f"in-process retrieve p50 {inproc_p50:.0f} us; HTTP c=1 p50 / in-process = "
              f"{res['http_overhead_ratio_c1']}; c=16 p50 {c16} us "
              f"(goal <= 2x in-process + 100 us = {2 * inproc_p50 + 100:.0f} us)")

        single = f"random:{DIM}"  # post.lua draws a fresh random embedding per request
        r = wrk(port, 32, [single], ["/v1/namespaces/ins/segments"])
        res["single_insert_c32"] = r
        print(f"single insert c=32  {r['rps']:>9,.0f} segments/s  p50 {r['p50_us']} us  "
              f"p99 {r['p99_us']} us  errors {r['errors']}")
        r = wrk(port, 16, [qfiles[0], qfiles[1], single],
                ["/v1/namespaces/bench/retrieve", "/v1/namespaces/bench/retrieve",
                 "/v1/namespaces/bench/segments"], weights=[45, 45, 10])
        res["mixed_90_10_c16"] = r
        print(f"mixed 90/10 c=16    {r['rps']:>9,.0f} req/s  p50 {r['p50_us']} us  "
              f"p99 {r['p99_us']} us  errors {r['errors']}")
    finally:
        res["shutdown_status"] = srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    res["machine"] = benchlib.machine()
    benchlib.write_results(OUT, res)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
