"""import.py - bulk import and export throughput over HTTP (POST/GET .../import|export).

    python3 bench/http/import.py build/release/mnemod bench/results/import.json

Starts the server on a free loopback port with a fresh data file, streams N segments of
dim 384 (a clustered corpus, metadata on every line, written to a file first) as one
chunked NDJSON body, then exports the namespace back. Reports lines/s and MB/s of both,
the server's CPU seconds (on a shared machine the wall clock also counts other jobs), the
longest gap between the server's import progress lines, and the server's peak resident
memory (VmHWM) before and after, so that "bounded memory beyond the index" can be read
off: the import adds its staging (one piece of body, one entry per id) to the index it
builds, not the body's size. The coherence graph is not on the acknowledgement path: its
catch-up after the import is reported separately (rows linked per second by then).
Env: BENCH_IMPORT_N (default 20000); BENCH_IMPORT_EXPORT=0 skips the export.
The corpus has at most 4096 distinct vectors (64 centres x 64 noise draws, each line picks
one), so a body of 1M lines is written in seconds; parsing costs the same.
"""

import http.client
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402
from benchlib import cpu_s  # noqa: E402

N = int(os.environ.get("BENCH_IMPORT_N", "20000"))
DIM = 384


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def lines(n, rng):
    centers = [[rng.gauss(0, 1) for _ in range(DIM)] for _ in range(64)]
    noise = [[rng.gauss(0, 0.6) for _ in range(DIM)] for _ in range(64)]
    vecs = []
    for c in centers:
        for e in noise:
            vecs.append(json.dumps([round(x + y, 4) for x, y in zip(c, e)],
                                   separators=(",", ":")))
    t0 = 1767225600
    for i in range(n):
        meta = json.dumps({"user": "u%d" % (i % 50), "n": i}, separators=(",", ":"))
        yield ('{"id":"b%d","timestamp":%d,"embedding":%s,"text":"segment %d","metadata":%s}\n'
               % (i, t0 + i, vecs[rng.randrange(len(vecs))], i, meta)).encode()


class LogWatch(threading.Thread):
    """Timestamps the server's import progress lines as they appear in its log."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.times, self.stop = path, [], False

    def run(self):
        with open(self.path, "rb") as f:
            while not self.stop:
                ln = f.readline()
                if not ln:
                    time.sleep(0.2)
                    continue
                if b"import" in ln:
                    self.times.append((time.monotonic(), ln.decode(errors="replace").strip()))


def metric(port, name):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/metrics")
    for ln in c.getresponse().read().decode().splitlines():
        if ln.startswith(name + " "):
            return float(ln.split()[1])
    return 0.0


def main():
    binary, out = sys.argv[1], sys.argv[2]
    d = tempfile.mkdtemp(prefix="mnemod-bench-import-")
    srv = benchlib.Server(binary, d, ["--sync", "normal"])
    proc, port = srv.proc, srv.port
    try:
        srv.wait(timeout=20)
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

        watch = LogWatch(os.path.join(d, "log"))
        watch.start()
        cpu0 = cpu_s(proc.pid)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=24 * 3600)
        t = time.monotonic()
        c.request("POST", "/v1/namespaces/bench/import", body=body(),
                  headers={"Content-Type": "application/x-ndjson"}, encode_chunked=True)
        r = c.getresponse()
        ans = r.read()
        t_end = time.monotonic()
        t_imp = t_end - t
        cpu_imp = cpu_s(proc.pid) - cpu0
        ok = r.status == 201
        rss1 = vm_hwm_kib(proc.pid)
        marks = [(t, "request sent")] + [x for x in watch.times if x[0] <= t_end] + \
            [(t_end, "answered")]
        gap, after = max((b[0] - a[0], a[1]) for a, b in zip(marks, marks[1:]))
        g_rows0 = metric(port, "mnemod_graph_rows_total")
        g_s0 = metric(port, "mnemod_graph_seconds_total")
        t_exp, got, n_lines = 0.0, 0, 0
        if os.environ.get("BENCH_IMPORT_EXPORT", "1") != "0":
            t = time.monotonic()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=24 * 3600)
            c.request("GET", "/v1/namespaces/bench/export")
            r = c.getresponse()
            while True:
                b = r.read(1 << 20)
                if not b:
                    break
                got += len(b)
                n_lines += b.count(b"\n")
            t_exp = time.monotonic() - t
        else:
            time.sleep(30)  # the graph's catch-up rate, over 30 s
        rss2 = vm_hwm_kib(proc.pid)
        g_rows = metric(port, "mnemod_graph_rows_total") - g_rows0
        g_s = metric(port, "mnemod_graph_seconds_total") - g_s0
        watch.stop = True
        res = {"n": N, "dim": DIM, "import_ok": ok, "import_answer": ans.decode()[:200],
               "import_seconds": round(t_imp, 2), "import_lines_per_s": round(N / t_imp),
               "import_server_cpu_s": round(cpu_imp, 2),
               "import_lines_per_cpu_s": round(N / cpu_imp) if cpu_imp else 0,
               "import_mb_per_s": round(sent[0] / t_imp / 1e6, 1), "body_mb": round(sent[0] / 1e6, 1),
               "import_progress_lines": len(watch.times), "import_longest_silence_s": round(gap, 1),
               "import_longest_silence_after": after[:160],
               "load_average": round(os.getloadavg()[0], 1),
               "export_seconds": round(t_exp, 2), "export_lines": n_lines,
               "export_lines_per_s": round(n_lines / t_exp) if t_exp else 0,
               "export_mb_per_s": round(got / t_exp / 1e6, 1) if t_exp else 0,
               "graph_rows_per_s_after": round(g_rows / g_s) if g_s else 0,
               "rss_kib_start": rss0, "rss_kib_after_import": rss1, "rss_kib_after_export": rss2}
        print(json.dumps(res, indent=1))
        benchlib.write_results(out, res, indent=1)
    finally:
        srv.stop()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
