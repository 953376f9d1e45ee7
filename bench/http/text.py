"""text.py - text over HTTP: text-only batch inserts, and the lexical index's rebuild at a restart.

    python3 bench/http/text.py build/release/mnemod bench/results/text_http.json

Starts the server (built-in embedder, default settings, `--sync full`) on a free loopback
port with a fresh data file, then:
1. inserts N text-only segments in 1000-segment batches (`{"segments":[{"text":...}]}`, no
   ids, no timestamps, no embeddings: the server embeds each text with the built-in
   embedder, tokenises it and indexes its words), from CLIENTS connections; the bodies are
   encoded before the clock starts. The texts are the memdev corpus' user turns (median 184
   bytes), cycled. First into a namespace without a coherence graph (the write path
   alone), then into a default one (its graph is linked in the background; that CPU is
   counted until the server idles); then, for comparison, batches of the built-in
   embedder's vectors sent by the client with no text (no text work at all). Besides the
   wall-clock rate, each run reports the server's CPU seconds (user + system, every
   thread): on a shared machine the wall clock mostly measures the other jobs.
2. stops the server (SIGTERM) and starts it again on the same file: the time until
   /healthz answers 200 is the restart (SQLite read, vector index, lexical index rebuilt
   from the stored texts, graph); the server logs the text part of each namespace's load.
   A text query then answers exactly as before the restart.
Env: BENCH_TEXT_N (default 100000), BENCH_TEXT_CLIENTS (default 2), BENCH_TEXT_GRAPH=0 leaves
the default namespace out (the restart then reloads the one without a graph).
"""

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402
from benchlib import cpu_s, free_port  # noqa: E402

N = int(os.environ.get("BENCH_TEXT_N", "100000"))
CLIENTS = int(os.environ.get("BENCH_TEXT_CLIENTS", "2"))
GRAPH = os.environ.get("BENCH_TEXT_GRAPH", "1") != "0"
BATCH = 1000
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "data", "memdev", "corpus.jsonl")


def call(port, method, path, body=None, timeout=600):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


class Server:
    def __init__(self, binary, data):
        self.binary, self.data, self.proc, self.port = binary, data, None, None
        self.log_path = data + ".log"

    def start(self):
        self.port = free_port()
        log = open(self.log_path, "ab")
        t0 = time.monotonic()
        self.proc = subprocess.Popen([self.binary, "--listen", "127.0.0.1:%d" % self.port,
                                      "--data", self.data], stdout=log, stderr=log)
        log.close()
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("mnemod exited; log in " + self.log_path)
            try:
                if call(self.port, "GET", "/healthz", timeout=2)[0] == 200:
                    return time.monotonic() - t0
            except OSError:
                pass
            time.sleep(0.01)

    def stop(self):
        self.proc.terminate()
        return self.proc.wait(120)

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


def settle(pid, quiet=0.02, step=1.0, limit=600):
    """Wait until the server uses less than quiet CPU seconds per step (the graph's linker
    caught up); returns the seconds waited."""
    t0 = time.monotonic()
    last = cpu_s(pid)
    while time.monotonic() - t0 < limit:
        time.sleep(step)
        now = cpu_s(pid)
        if now - last < quiet * step:
            break
        last = now
    return time.monotonic() - t0


def measured_load(srv, ns, bodies, n, what):
    c0 = cpu_s(srv.proc.pid)
    dt, bad = load(srv.port, ns, bodies)
    n -= len(bad) * BATCH  # a failed batch stores nothing
    c1 = cpu_s(srv.proc.pid)
    settle(srv.proc.pid)
    c2 = cpu_s(srv.proc.pid)
    r = {"stored": n, "seconds": round(dt, 2), "segments_per_s": round(n / dt), "errors": len(bad),
         "server_cpu_s": round(c1 - c0, 2), "segments_per_cpu_s": round(n / max(c1 - c0, 1e-9)),
         "server_cpu_s_until_idle": round(c2 - c0, 2)}
    if bad:
        r["first_error"] = "%d %s" % (bad[0][0], bad[0][1].decode("utf-8", "replace"))
        print("  first error: " + r["first_error"])
    print("%-34s %7.0f segments/s wall, %7.0f per server CPU-second (%.1f CPU-s; %.1f until "
          "idle), %d errors" % (what, n / dt, r["segments_per_cpu_s"], c1 - c0, c2 - c0, len(bad)))
    return r


def load(port, ns, bodies):
    todo = list(range(len(bodies)))
    lock = threading.Lock()
    bad = []

    def loader():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        while True:
            with lock:
                if not todo:
                    break
                i = todo.pop(0)
            c.request("POST", "/v1/namespaces/%s/segments" % ns, body=bodies[i],
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            body = r.read()
            if r.status != 201:
                bad.append((r.status, body[:200]))
        c.close()

    t0 = time.perf_counter()
    ths = [threading.Thread(target=loader) for _ in range(CLIENTS)]
    [t.start() for t in ths]
    [t.join() for t in ths]
    return time.perf_counter() - t0, bad


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/release/mnemod"
    out = sys.argv[2] if len(sys.argv) > 2 else "bench/results/text_http.json"
    texts = [json.loads(x)["text"] for x in open(CORPUS, encoding="utf-8")]
    # a few pasted documents are not memories; a turn without a letter or digit ("?", an
    # emoji) is refused by the built-in embedder and would fail its whole batch
    texts = [t for t in texts if len(t) <= 4000 and any(c.isalnum() for c in t)]
    batches = N // BATCH
    bodies = [json.dumps({"segments": [{"text": texts[(b * BATCH + i) % len(texts)]}
                                       for i in range(BATCH)]}).encode()
              for b in range(batches)]
    tmp = tempfile.mkdtemp(prefix="mnemod-bench-text-")
    res = {"n": batches * BATCH, "batch": BATCH, "clients": CLIENTS,
           "body_mb": round(sum(map(len, bodies)) / 1e6, 1)}
    srv = Server(binary, os.path.join(tmp, "m.db"))
    try:
        srv.start()
        # a namespace without a coherence graph: the write path alone (HTTP, JSON, the
        # built-in embedder, tokeniser and lexical index, SQLite); then the default one,
        # whose graph is linked in the background (its CPU counted until the server idles)
        st, _ = call(srv.port, "PUT", "/v1/namespaces/nograph",
                     json.dumps({"dim": 256, "coherence": False}).encode())
        res["text_insert_no_graph"] = measured_load(srv, "nograph", bodies, res["n"],
                                                    "text-only, no graph")
        text_ns = "nograph"
        if GRAPH:
            res["text_insert"] = measured_load(srv, "text", bodies, res["n"],
                                               "text-only, default namespace")
            text_ns = "text"
        # the same segments' vectors, sent by the client without text: no text work at all
        st, data = call(srv.port, "GET",
                        "/v1/namespaces/%s/segments?limit=1000&embedding=true" % text_ns)
        vecs = [s["embedding"] for s in json.loads(data)["segments"]]
        vbodies = [json.dumps({"segments": [{"embedding": vecs[(b * 7 + i) % len(vecs)]}
                                            for i in range(BATCH)]}).encode()
                   for b in range(batches)]
        st, _ = call(srv.port, "PUT", "/v1/namespaces/vectors",
                     json.dumps({"dim": 256, "coherence": False}).encode())
        res["vector_insert_no_graph"] = measured_load(srv, "vectors", vbodies, res["n"],
                                                      "vectors only (no text), no graph")
        if GRAPH:
            call(srv.port, "DELETE", "/v1/namespaces/nograph")
        st, _ = call(srv.port, "DELETE", "/v1/namespaces/vectors")
        q = json.dumps({"query": "tips on styling vintage jeans", "k": 10, "match": "text",
                        "explain": True}).encode()
        before = json.loads(call(srv.port, "POST", "/v1/namespaces/%s/retrieve" % text_ns, q)[1])
        res["stop_status"] = srv.stop()
        res["restart_seconds"] = round(srv.start(), 2)
        after = json.loads(call(srv.port, "POST", "/v1/namespaces/%s/retrieve" % text_ns, q)[1])
        same = [r["id"] for r in before["results"]] == [r["id"] for r in after["results"]] and \
            [r["score"] for r in before["results"]] == [r["score"] for r in after["results"]]
        res["same_answer_after_restart"] = same
        m = re.findall(r'msg="namespace loaded" ns=' + text_ns + r' segments=(\d+) seconds=([0-9.]+) '
                       r'cpu_seconds=([0-9.]+) text_seconds=([0-9.]+)', srv.log())
        if m:
            res["load_text_ns"] = {"segments": int(m[-1][0]), "seconds": float(m[-1][1]),
                                   "cpu_seconds": float(m[-1][2]),
                                   "text_seconds": float(m[-1][3])}
        print("restart: healthy after %.2f s (%s); the same text answer: %s"
              % (res["restart_seconds"], res.get("load_text_ns", "no load line"), same))
        res["stop_status_2"] = srv.stop()
    finally:
        if srv.proc and srv.proc.poll() is None:
            srv.proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    res["machine"] = benchlib.machine(loadavg=open("/proc/loadavg").read().split()[:3])
    benchlib.write_results(out, res, indent=1)
    print("wrote " + out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
