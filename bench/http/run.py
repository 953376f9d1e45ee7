#!/usr/bin/env python3
"""http bench (BENCH.md section 4): the real mnemod on loopback, loaded with wrk.

Usage: run.py BUILD_DIR/mnemod [results.json]. Env: HTTP_N (segments, default 100000),
HTTP_DIM (384), HTTP_SECONDS (per wrk run, default 8).
"""
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/release/mnemod"
OUT = sys.argv[2] if len(sys.argv) > 2 else "bench/results/http.json"
N = int(os.environ.get("HTTP_N", "100000"))
DIM = int(os.environ.get("HTTP_DIM", "384"))
SECS = int(os.environ.get("HTTP_SECONDS", "8"))
HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def unit(rng, centre=None, noise=0.3):
    v = [rng.gauss(0, 1) for _ in range(DIM)]
    if centre:
        v = [c + noise * x for c, x in zip(centre, v)]
    n = sum(x * x for x in v) ** 0.5
    return [round(x / n, 6) for x in v]


def call(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request(method, path, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def wrk(port, conns, files, paths, weights=None, threads=2):
    env = dict(os.environ, MNEMOD_BODIES=",".join(files), MNEMOD_PATHS=",".join(paths),
               MNEMOD_WEIGHTS=",".join(str(w) for w in (weights or [1] * len(files))))
    cmd = ["wrk", "-t", str(min(threads, conns)), "-c", str(conns), "-d", f"{SECS}s",
           "--timeout", "10s", "-s", os.path.join(HERE, "post.lua"), f"http://127.0.0.1:{port}"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=SECS + 60).stdout
    for line in out.splitlines():
        if line.startswith("WRKJSON "):
            return json.loads(line[8:])
    raise RuntimeError("wrk printed no result:\n" + out)


def main():
    if not shutil.which("wrk"):
        print("http bench: wrk is not installed (make bench installs it)")
        return 0
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-http-")
    port = free_port()
    log = open(os.path.join(tmp, "server.log"), "w")
    srv = subprocess.Popen([BIN, "--listen", f"127.0.0.1:{port}", "--data",
                            os.path.join(tmp, "bench.db"), "--log-level", "warn"],
                           stdout=log, stderr=log)
    res = {"n": N, "dim": DIM, "seconds_per_run": SECS}
    try:
        for _ in range(200):
            try:
                if call(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.05)
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
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            while True:
                with lock:
                    if not todo:
                        break
                    i = todo.pop()
                c.request("POST", "/v1/namespaces/bench/segments", body=bodies[i % n_bodies],
                          headers={"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                if r.status != 201:
                    bad.append(r.status)
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
            st, data = call(port, "POST", "/v1/namespaces/bench/retrieve",
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
        srv.terminate()
        try:
            res["shutdown_status"] = srv.wait(timeout=60)
        except subprocess.TimeoutExpired:
            srv.kill()
            res["shutdown_status"] = "killed"
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    try:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")]
    except OSError:
        cpu = ["unknown"]
    res["machine"] = {"cpu": cpu[0] if cpu else "unknown", "cores": os.cpu_count()}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(res, f, indent=2)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
