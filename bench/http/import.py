"""import.py - bulk import and export throughput over HTTP (POST/GET .../import|export).

    python3 bench/http/import.py build/release/mnemod bench/results/import.json

Starts the server on a free loopback port with a fresh data file, streams N segments of
dim 384 (a clustered corpus, metadata on every line, written to a file first) as one
chunked NDJSON body, then exports the namespace back. Reports lines/s
and MB/s of both, and the server's peak resident memory (VmHWM) before and after, so that
"bounded memory beyond the index" can be read off: the import adds its staging (one piece of
body, one entry per id) to the index it builds, not the body's size.
Env: BENCH_IMPORT_N (default 20000). The coherence graph is kept exact at every insert,
which costs O(n) per segment: at 1M segments that, not the import path, dominates.
"""

import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

N = int(os.environ.get("BENCH_IMPORT_N", "20000"))
DIM = 384


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def lines(n, rng):
    centers = [[rng.gauss(0, 1) for _ in range(DIM)] for _ in range(64)]
    t0 = 1767225600
    for i in range(n):
        c = centers[rng.randrange(64)]
        v = [round(x + rng.gauss(0, 0.6), 4) for x in c]
        o = {"id": "b%d" % i, "timestamp": t0 + i, "embedding": v, "text": "segment %d" % i,
             "metadata": {"user": "u%d" % (i % 50), "n": i}}
        yield (json.dumps(o, separators=(",", ":")) + "\n").encode()


def main():
    binary, out = sys.argv[1], sys.argv[2]
    d = tempfile.mkdtemp(prefix="mnemod-bench-import-")
    port = free_port()
    log = open(os.path.join(d, "log"), "wb")
    proc = subprocess.Popen([binary, "--listen", "127.0.0.1:%d" % port, "--data",
                             os.path.join(d, "m.db"), "--sync", "normal"],
                            stdout=log, stderr=log)
    try:
        for _ in range(200):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/healthz")
                if c.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.05)
        rss0 = vm_hwm_kib(proc.pid)
        rng = random.Random(42)
        sent = [0]
        # the body is written to a file first, so the timing is the server's, not the
        # generator's (it streams from the file: the client never holds it either)
        path = os.path.join(d, "body.ndjson")
        with open(path, "wb") as f:
            for ln in lines(N, rng):
                f.write(ln)

        def body():
            with open(path, "rb") as f:
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        return
                    sent[0] += len(b)
                    yield b

        c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
        t = time.monotonic()
        c.request("POST", "/v1/namespaces/bench/import", body=body(),
                  headers={"Content-Type": "application/x-ndjson"}, encode_chunked=True)
        r = c.getresponse()
        ans = r.read()
        t_imp = time.monotonic() - t
        ok = r.status == 201
        rss1 = vm_hwm_kib(proc.pid)
        t = time.monotonic()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
        c.request("GET", "/v1/namespaces/bench/export")
        r = c.getresponse()
        got = 0
        n_lines = 0
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            got += len(b)
            n_lines += b.count(b"\n")
        t_exp = time.monotonic() - t
        rss2 = vm_hwm_kib(proc.pid)
        res = {"n": N, "dim": DIM, "import_ok": ok, "import_answer": ans.decode()[:200],
               "import_seconds": round(t_imp, 2), "import_lines_per_s": round(N / t_imp),
               "import_mb_per_s": round(sent[0] / t_imp / 1e6, 1), "body_mb": round(sent[0] / 1e6, 1),
               "export_seconds": round(t_exp, 2), "export_lines": n_lines,
               "export_lines_per_s": round(n_lines / t_exp) if t_exp else 0,
               "export_mb_per_s": round(got / t_exp / 1e6, 1) if t_exp else 0,
               "rss_kib_start": rss0, "rss_kib_after_import": rss1, "rss_kib_after_export": rss2}
        print(json.dumps(res, indent=1))
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
