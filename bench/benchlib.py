"""benchlib.py - what the bench drivers share: start a mnemod, wait for its health, talk
HTTP to it, drive wrk and bench/latency_inproc, and write the results file.

A driver in bench/<suite>/ imports it with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import benchlib
Python stdlib only, like the drivers."""
import http.client
import json
import os
import platform
import random
import subprocess
import socket
import struct
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
POST_LUA = os.path.join(HERE, "http", "post.lua")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def pct(xs, p):
    """The p-quantile (0..1) of xs, nearest rank; None when xs is empty."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None


def median(xs):
    return pct(xs, 0.5)


def machine(**extra):
    """The machine a result was measured on: CPU model, cores, kernel, and what extra adds."""
    try:
        cpu = [ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
               if ln.startswith("model name")]
    except OSError:
        cpu = []
    m = {"cpu": cpu[0] if cpu else (platform.processor() or platform.machine() or "unknown"),
         "cores": os.cpu_count(), "kernel": platform.release()}
    m.update(extra)
    return m


def write_results(out, res, indent=2):
    """res as indented JSON to out (its folder made when missing)."""
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=indent)
        f.write("\n")


def cpu_s(pid):
    """user + system CPU seconds process pid (every thread) has used."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Conn:
    """One keep-alive connection to a server, as one client holds it. timeout applies to
    the connection when it is (re)opened."""

    def __init__(self, port, timeout=60):
        self.port, self.timeout, self.c = port, timeout, None

    def request(self, method, path, body=None, headers=None, timeout=None):
        """(status, raw body). body: bytes, or anything json.dumps takes. A failed
        connection is dropped (the next request opens a new one) and the error raised."""
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        try:
            if self.c is None:
                self.c = http.client.HTTPConnection("127.0.0.1", self.port,
                                                    timeout=timeout or self.timeout)
            self.c.request(method, path, body=data, headers=h)
            r = self.c.getresponse()
            return r.status, r.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise

    def call(self, method, path, body=None, headers=None, timeout=None):
        """(status, parsed JSON body or None); tried twice when the connection fails (a
        keep-alive connection the server closed), then (None, None)."""
        for _ in range(2):
            try:
                st, payload = self.request(method, path, body, headers, timeout)
                return st, json.loads(payload) if payload else None
            except (OSError, http.client.HTTPException):
                pass
        return None, None

    def close(self):
        if self.c:
            self.c.close()
        self.c = None


class Server:
    """One mnemod on a free loopback port with its data file in dir (made when missing),
    its output in dir/log. env: variables to set; clean_env: start from the environment
    without MNEMOD_* and MEMU_* (a cluster node's settings must be the bench's own)."""

    def __init__(self, binary, dir, args=(), env=None, clean_env=False, name="mnemod",
                 conn_timeout=60):
        self.name, self.port, self.dir = name, free_port(), dir
        os.makedirs(dir, exist_ok=True)
        e = dict(os.environ)
        if clean_env:
            e = {k: v for k, v in e.items() if not k.startswith(("MNEMOD_", "MEMU_"))}
        e.update(env or {})
        self.log = open(os.path.join(dir, "log"), "ab")
        self.proc = subprocess.Popen([binary, "--listen", "127.0.0.1:%d" % self.port, "--data",
                                      os.path.join(dir, "m.db")] + list(args), env=e,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        self.conn = Conn(self.port, conn_timeout)

    @property
    def pid(self):
        return self.proc.pid

    def wait(self, timeout=90):
        """Until /healthz answers 200; RuntimeError after timeout seconds or if it exits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if Conn(self.port).call("GET", "/healthz", timeout=2)[0] == 200:
                return self
            time.sleep(0.05)
        raise RuntimeError("%s did not start (see %s)" % (self.name,
                                                        os.path.join(self.dir, "log")))

    def call(self, method, path, body=None, headers=None):
        """On the server's own keep-alive connection: (status, raw body)."""
        return self.conn.request(method, path, body, headers)

    def stop(self, timeout=60):
        """SIGTERM, then SIGKILL after timeout seconds: the exit status, or "killed"."""
        self.conn.close()
        status = self.proc.poll()
        if status is None:
            self.proc.terminate()
            try:
                status = self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                status = "killed"
        if not self.log.closed:
            self.log.close()
        return status


def cluster_settled(nodes, timeout=300, interval=0.5):
    """Every node has applied every stream to its end and holds its namespaces live, no
    join pending (GET /v1/cluster on each). False after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lasts, applied, ok = {}, [], True
        for n in nodes:
            b = n.conn.call("GET", "/v1/cluster")[1]
            if not b:
                ok = False
                break
            for s in b["streams"]:
                lasts[s["name"]] = max(lasts.get(s["name"], 0), s["last_seq"])
            applied.append({s["name"]: s["applied_seq"] for s in b["streams"]})
            ok = ok and not any(x.get("join") or (n.name in x["nodes"] and x["state"] != "live")
                                for x in b["namespaces"])
        if ok and all(a.get(k, 0) >= v for a in applied for k, v in lasts.items()):
            return True
        time.sleep(interval)
    return False


class VectorPool:
    """size random vectors of dim, drawn once, kept as JSON text: a batch body is assembled
    from them so that the load generator costs far less than the server."""

    def __init__(self, dim, size=1009, seed=42):
        prng = random.Random(seed)
        self.json = [json.dumps([round(prng.uniform(-1, 1), 4) for _ in range(dim)])
                     for _ in range(size)]

    def batch_body(self, prefix, k0, n, base_ms=None):
        """{"segments": [...]} of n segments with ids prefix+k0.. (and timestamps base_ms+k
        milliseconds when given)."""
        p = self.json
        if base_ms is None:
            items = ['{"id":"%s%d","embedding":%s}' % (prefix, k0 + j, p[(k0 + j) % len(p)])
                     for j in range(n)]
        else:
            items = ['{"id":"%s%d","embedding":%s,"timestamp":%.3f}'
                     % (prefix, k0 + j, p[(k0 + j) % len(p)], (base_ms + k0 + j) / 1000.0)
                     for j in range(n)]
        return ('{"segments":[' + ",".join(items) + "]}").encode()


def wrk(port, conns, seconds, files, paths, weights=None, threads=2, extra=(), cpus=None,
        env=None):
    """wrk with bench/http/post.lua: POSTs the bodies in files to paths (picked by weights),
    conns connections for seconds; the dict post.lua prints (rps, p50_us, p99_us, errors).
    cpus: a set of CPU numbers wrk (every thread of it) is confined to; None: any.
    env: more environment for post.lua (MNEMOD_TOOK_FILE, say)."""
    env = dict(os.environ, MNEMOD_BODIES=",".join(files), MNEMOD_PATHS=",".join(paths),
               MNEMOD_WEIGHTS=",".join(str(w) for w in (weights or [1] * len(files))),
               **(env or {}))
    cmd = (["wrk", "-t", str(min(threads, conns)), "-c", str(conns), "-d", "%ds" % seconds] +
           list(extra) + ["-s", POST_LUA, "http://127.0.0.1:%d" % port])
    pin = None
    if cpus is not None:
        pin = lambda: os.sched_setaffinity(0, cpus)  # noqa: E731 (in the child, before exec)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=seconds + 60,
                         preexec_fn=pin).stdout
    for line in out.splitlines():
        if line.startswith("WRKJSON "):
            return json.loads(line[8:])
    raise RuntimeError("wrk printed no result:\n" + out)


def thread_affinities(pid):
    """{thread id: set of CPUs it may run on} for every thread of process pid."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            out[int(tid)] = os.sched_getaffinity(int(tid))
        except OSError:  # the thread ended meanwhile
            pass
    return out


class Inproc:
    """bench/latency_inproc (built under build_dir): builds mnemod's core index for a corpus
    (args: ["tcd"] or ["scale", N, DIM]), dumps the corpus to a fresh folder under tmp, then
    answers commands: run REPS (scan p50), ids Q (exact top K of query Q), quit."""

    def __init__(self, build_dir, args, tmp):
        self.dir = tempfile.mkdtemp(dir=tmp)
        self.p = subprocess.Popen([os.path.join(build_dir, "bench", "latency_inproc")] +
                                  list(args) + [self.dir], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
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

    def close(self, timeout=60):
        try:
            self.cmd("quit")
        except (BrokenPipeError, OSError):
            pass
        self.p.wait(timeout=timeout)

    def rows(self):
        """(index, float32 bytes, Unix-ms timestamp) of every row."""
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
