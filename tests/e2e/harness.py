"""harness.py - start the real mnemod binary and drive it over loopback HTTP.

Standard library only. Every wait is bounded: a server that does not come up, does not
answer, or does not stop in time is a test failure, never a hang.

    import harness as h
    @h.test
    def test_something():
        srv = h.shared()                      # one server per file, restarted if it died
        st, hdr, body = srv.call("GET", "/healthz")
        h.eq(st, 200)
    if __name__ == "__main__":
        h.main()

`python3 tests/e2e/test_X.py build/release/mnemod [filter ...]` runs the tests whose
name contains one of the filters (all when none) and ends with the line
`e2e test_X: N passed, M failed`; the exit status is non-zero on any failure.
"""

import atexit
import base64
import datetime as _dt
import http.client
import json
import math
import operator
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

import schema as _schema

BINARY = None          # set by main() from argv[1]
START_TIMEOUT = 20.0   # seconds for /healthz to answer 200
STOP_TIMEOUT = 20.0    # seconds for a SIGTERM'd server to exit
HTTP_TIMEOUT = 60.0    # seconds for one request
TEST_TIMEOUT = 240     # seconds for one test function

_servers = []          # every Server started, killed at exit
_tests = []
_shared = {}


class Failure(AssertionError):
    pass


# ---------------------------------------------------------------- assertions

def check(cond, msg="check failed"):
    if not cond:
        raise Failure(msg)


def eq(got, want, what=""):
    if got != want:
        raise Failure("%s: got %r, want %r" % (what or "value", got, want))


def near(got, want, tol=1e-5, what=""):
    if not isinstance(got, (int, float)) or isinstance(got, bool) or not math.isfinite(got) \
            or abs(got - want) > tol:
        raise Failure("%s: got %r, want %r (tol %g)" % (what or "value", got, want, tol))


def expect_error(resp, status, code, what=""):
    """resp = (status, headers, body): assert the SPEC error shape with this status/code.
    code may be a set of acceptable codes."""
    st, _, body = resp
    label = what or "request"
    if st != status:
        raise Failure("%s: status %r, want %r; body %s" % (label, st, status, _short(body)))
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        raise Failure("%s: body is not {\"error\":{...}}: %s" % (label, _short(body)))
    err = body["error"]
    codes = code if isinstance(code, (set, frozenset, tuple, list)) else {code}
    if err.get("code") not in codes:
        raise Failure("%s: error code %r, want %r; body %s" % (label, err.get("code"), code,
                                                                _short(body)))
    msg = err.get("message")
    if not isinstance(msg, str) or not msg:
        raise Failure("%s: error.message missing or empty: %s" % (label, _short(body)))
    return err


def expect_ok(resp, status=200, what=""):
    st, _, body = resp
    if st != status:
        raise Failure("%s: status %r, want %r; body %s" % (what or "request", st, status,
                                                           _short(body)))
    return body


def _short(body, n=400):
    s = body if isinstance(body, str) else json.dumps(body) if not isinstance(body, bytes) \
        else body[:n].decode("utf-8", "replace")
    return s if len(s) <= n else s[:n] + "..."


# ---------------------------------------------------------------- time helpers

RFC3339_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
DAY = 86400.0


def now_ms():
    return int(time.time() * 1000)


def rfc3339_ms(ms):
    """Unix ms -> the SPEC's response form, 2026-07-31T09:30:00.000Z."""
    d = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def parse_ts(s):
    """RFC 3339 (the server's response form) -> Unix ms."""
    check(isinstance(s, str) and RFC3339_MS.match(s), "timestamp %r is not RFC 3339 UTC ms" % (s,))
    d = _dt.datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=_dt.timezone.utc)
    return int(d.timestamp()) * 1000 + int(s[20:23])


# ---------------------------------------------------------------- vectors and the scalar reference

def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def unit(v):
    """L2-normalise in double, then round to float32 (what the server stores)."""
    n = math.sqrt(sum(x * x for x in v))
    return [f32(x / n) for x in v]


def dot(a, b):
    return sum(map(operator.mul, a, b))


def rand_vec(rng, dim):
    while True:
        v = [rng.gauss(0.0, 1.0) for _ in range(dim)]
        if sum(x * x for x in v) > 1e-6:
            return v


def decay_factor(kind, half_life_s, age_s, shape=1.0):
    if kind == "none" or half_life_s <= 0:
        return 1.0
    x = age_s / half_life_s
    if kind == "linear":
        return max(0.0, 1.0 - x / 2.0)
    if kind == "gaussian":
        return 0.5 ** (x * x)
    if kind == "weibull":
        return 0.5 ** (x ** shape)
    return 0.5 ** x


def ref_dot(a, b):
    """The cosine the coherence graph's edge rule uses: the float32 products in double,
    summed left to right (exactly what the server computes for a pair, on every kernel; not
    sum(), which compensates its rounding from Python 3.12 on)."""
    s = 0.0
    for x, y in zip(a, b):
        s += x * y
    return s


def graph_stats(segs, threshold=0.55):
    """The coherence graph of SPEC section 5 by brute force: ({id: degree}, edges, max degree).
    segs: segment dicts (id, vec, superseded, archived), whose active ones (neither superseded
    nor archived) are the graph, or {id: float32 vector} of the active segments (export_vecs).
    A pair is an edge when its ref_dot is >= threshold, the configured value itself: a
    threshold that float32 cannot hold (0.55) is not rounded to one (cos >= 0.55 holds for a
    cosine of 0.5500000037, below float32(0.55))."""
    if isinstance(segs, dict):
        ids = list(segs)
        vecs = [segs[i] for i in ids]
    else:
        act = [s for s in segs if not s.get("superseded") and not s.get("archived")]
        ids = [s["id"] for s in act]
        vecs = [s["vec"] for s in act]
    cnt = [0] * len(ids)
    edges = 0
    for i in range(len(ids)):
        a = vecs[i]
        for j in range(i + 1, len(ids)):
            if ref_dot(a, vecs[j]) >= threshold:
                cnt[i] += 1
                cnt[j] += 1
                edges += 1
    return dict(zip(ids, cnt)), edges, max(cnt) if cnt else 0


def export_vecs(srv, ns):
    """{id: float32 vector} of every segment of ns, bit-exact (the export's base64)."""
    st, _, body = srv.get("/v1/namespaces/%s/export?embedding=base64" % ns)
    eq(st, 200, "export of %s" % ns)
    out = {}
    for ln in body.splitlines() if isinstance(body, str) else [body]:
        rec = ln if isinstance(ln, dict) else json.loads(ln)
        raw = base64.b64decode(rec["embedding"])
        out[rec["id"]] = list(struct.unpack("<%df" % (len(raw) // 4), raw))
    return out


def near_threshold(segs, threshold=0.55, eps=1e-5):
    """True when some pair's cosine is too close to the edge threshold to compare exactly."""
    for i in range(len(segs)):
        for j in range(i + 1, len(segs)):
            if abs(dot(segs[i]["vec"], segs[j]["vec"]) - threshold) < eps:
                return True
    return False


def reference(segs, q, k=10, half_life_s=0.0, decay="exponential", shape=1.0, recency_bias=1.0,
              origin_ms=None, offset_s=0.0, coherence_weight=0.0, since_ms=None, until_ms=None,
              source=None, min_score=None, include_superseded=False, include_archived=False,
              threshold=0.55, graph=None):
    """SPEC section 4 as a plain loop (graph: a precomputed graph_stats() result). segs: dicts id, seq, ts (ms), vec (unit f32), source,
    superseded, archived. Returns the ordered list of dicts id, seq, score, sim, decay, gate, age."""
    q = unit(q)
    deg, _, maxd = graph if graph is not None else graph_stats(segs, threshold)
    out = []
    for s in segs:
        if s.get("superseded") and not include_superseded:
            continue
        if s.get("archived") and not include_archived:
            continue
        if since_ms is not None and s["ts"] < since_ms:
            continue
        if until_ms is not None and s["ts"] > until_ms:
            continue
        if source is not None and s.get("source") != source:
            continue
        sim = dot(q, s["vec"])
        raw_age = abs(origin_ms - s["ts"]) / 1000.0
        age = max(0.0, raw_age - offset_s)
        d = decay_factor(decay, half_life_s, age, shape)
        t = (1.0 - recency_bias) + recency_bias * d
        gate = (deg.get(s["id"], 0) / maxd) if (maxd > 0 and s["id"] in deg) else 0.0
        f = (1.0 - coherence_weight) * t + coherence_weight * gate
        score = sim * f
        if min_score is not None and score < min_score:
            continue
        out.append({"id": s["id"], "seq": s["seq"], "score": score, "sim": sim, "decay": d,
                    "gate": gate, "age": raw_age})
    out.sort(key=lambda r: (-r["score"], -r["seq"]))
    return out[:k], out


def match_results(got, want_all, k, tol=1e-5, what="retrieve"):
    """Compare a server result list with the reference. Exact ids and order, except that
    entries whose reference scores are within tol of each other may come in either order
    (float32 vs double sums); every returned score must be within tol of its reference."""
    by_id = {r["id"]: r for r in want_all}
    want = want_all[:k]
    eq(len(got), len(want), "%s: number of results" % what)
    seen = set()
    for i, (g, w) in enumerate(zip(got, want)):
        gid = g.get("id")
        check(gid in by_id, "%s: result %d id %r is not eligible" % (what, i, gid))
        check(gid not in seen, "%s: id %r returned twice" % (what, gid))
        seen.add(gid)
        ref = by_id[gid]
        near(g.get("score"), ref["score"], tol, "%s: score of %s" % (what, gid))
        eq(g.get("seq"), ref["seq"], "%s: seq of %s" % (what, gid))
        if gid != w["id"]:
            check(abs(ref["score"] - w["score"]) <= 2 * tol,
                  "%s: rank %d is %s (score %.7f), want %s (score %.7f)"
                  % (what, i, gid, ref["score"], w["id"], w["score"]))
    for i in range(1, len(got)):
        a, b = got[i - 1], got[i]
        check(a["score"] > b["score"] or (a["score"] == b["score"] and a["seq"] > b["seq"]) or
              abs(a["score"] - b["score"]) <= tol,
              "%s: results %d,%d out of order" % (what, i - 1, i))


# ---------------------------------------------------------------- HTTP

def metric_samples(srv):
    """Every sample of srv's /metrics as {(name, labels): value}, labels the text between the
    braces ("" for none)."""
    st, _, body = srv.get("/metrics")
    eq(st, 200, "metrics")
    text = body if isinstance(body, str) else body.decode()
    out = {}
    for m in re.finditer(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{([^}]*)\})? (\S+)$', text, re.M):
        out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _parse_body(ctype, data):
    if data and ctype and "json" in ctype.lower():
        try:
            return json.loads(data.decode("utf-8"))
        except ValueError:
            return data.decode("utf-8", "replace")
    if not data:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:
        return data.decode("utf-8", "replace")


def clean_env(extra):
    """The caller's environment without any MNEMOD_*/MEMU_* setting (a developer's exported
    API key must not change what the tests see), plus extra."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOD_", "MEMU_"))}
    env.update(extra or {})
    return env


class Server:
    """One mnemod process on a free loopback port with its own temporary data directory."""

    def __init__(self, args=(), env=None, datadir=None, host="127.0.0.1"):
        self.args = list(args)
        # the address listened on ("::" for every IPv6 interface); requests go to the
        # loopback address of its family
        self.host = host
        self.connect_host = {"::": "::1", "0.0.0.0": "127.0.0.1"}.get(host, host)
        self.env = dict(env or {})
        self.own_dir = datadir is None
        self.dir = datadir or tempfile.mkdtemp(prefix="mnemod-e2e-")
        self.db = os.path.join(self.dir, "mnemod.db")
        self.proc = None
        self.port = None
        self.log_path = os.path.join(self.dir, "stderr.log")
        _servers.append(self)

    # -- lifecycle
    def start(self, timeout=START_TIMEOUT):
        last = None
        for _ in range(3):          # a port taken between probe and bind: try another
            self.port = free_port()
            cmd = [BINARY, "--listen", self.listen_arg(), "--data", self.db] + self.args
            env = clean_env(self.env)
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         env=env)
            log.close()
            try:
                self.wait_healthy(timeout)
                return self
            except Failure as e:
                last = e
                if self.proc.poll() is None:
                    self.kill9()
                    raise
                self.proc = None
        raise last

    def spawn(self):
        """Start the process without waiting for it (same port as before when set)."""
        if self.port is None:
            self.port = free_port()
        cmd = [BINARY, "--listen", self.listen_arg(), "--data", self.db] + self.args
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     env=clean_env(self.env))
        log.close()
        return self

    def listen_arg(self):
        return ("[%s]:%d" if ":" in self.host else "%s:%d") % (self.host, self.port)

    def wait_healthy(self, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failure("mnemod exited with %s during start-up; log:\n%s"
                              % (self.proc.returncode, self.log_tail()))
            try:
                st, _, body = self.call("GET", "/healthz", timeout=2.0)
                if st == 200:
                    eq(body, {"status": "ok"}, "healthz body")
                    return
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.05)
        raise Failure("mnemod did not answer /healthz 200 within %.0f s; log:\n%s"
                      % (timeout, self.log_tail()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=STOP_TIMEOUT, expect_status=0):
        """SIGTERM; assert it exits with expect_status within timeout."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            raise Failure("mnemod did not exit within %.0f s of SIGTERM; log:\n%s"
                          % (timeout, self.log_tail()))
        self.proc = None
        if expect_status is not None and rc != expect_status:
            raise Failure("mnemod exited with %r after SIGTERM, want %r; log:\n%s"
                          % (rc, expect_status, self.log_tail()))
        return rc

    def kill9(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None

    def restart(self, timeout=START_TIMEOUT):
        """Graceful stop (exit 0 asserted) then start on the same data."""
        self.stop()
        return self.start(timeout)

    def cleanup(self):
        self.kill9()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, n=40):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
            return "\n".join(lines[-n:])
        except OSError:
            return "(no log)"

    # -- requests
    def call(self, method, path, body=None, headers=None, timeout=HTTP_TIMEOUT, raw=None):
        """JSON request -> (status, headers {lowercase: value}, parsed body).
        body: an object (sent as JSON) or bytes (sent as is); raw: bytes, same as bytes body."""
        conn = http.client.HTTPConnection(self.connect_host, self.port, timeout=timeout)
        try:
            hdrs = {}
            data = None
            if raw is not None:
                data = raw
            elif isinstance(body, (bytes, bytearray)):
                data = bytes(body)
            elif body is not None:
                data = json.dumps(body).encode("utf-8")
            if data is not None:
                hdrs["Content-Type"] = "application/json"
            if headers:
                for k, v in headers.items():
                    if v is None:
                        hdrs.pop(k, None)
                    else:
                        hdrs[k] = v
            conn.putrequest(method, path, skip_accept_encoding=True)
            for k, v in hdrs.items():
                conn.putheader(k, v)
            if data is not None or method in ("POST", "PUT"):
                conn.putheader("Content-Length", str(len(data or b"")))
            conn.endheaders()
            if data:
                conn.send(data)
            r = conn.getresponse()
            payload = r.read()
            h = {k.lower(): v for k, v in r.getheaders()}
            check_schema(method, path, r.status, h.get("content-type"), payload)
            return r.status, h, _parse_body(h.get("content-type"), payload)
        finally:
            conn.close()

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.call("POST", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.call("PUT", path, body, **kw)

    def delete(self, path, **kw):
        return self.call("DELETE", path, **kw)

    def raw(self, data, timeout=30.0, chunks=None, delay=0.0):
        """Send raw bytes on a fresh socket (optionally in chunks with a delay between them),
        read the answer until the server closes or the declared body is complete.
        Returns (status or None, headers, parsed body)."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        try:
            try:
                if chunks:
                    for c in chunks:
                        s.sendall(c)
                        if delay:
                            time.sleep(delay)
                else:
                    s.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                pass    # the server answered early (413...) and closed: read what it said
            buf = b""
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    b = s.recv(65536)
                except socket.timeout:
                    break
                except ConnectionResetError:
                    break
                if not b:
                    break
                buf += b
                head, sep, rest = buf.partition(b"\r\n\r\n")
                if sep:
                    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                    if m and len(rest) >= int(m.group(1)):
                        break
            return _parse_raw(buf)
        finally:
            s.close()

    # -- API shortcuts
    def ns_stats(self, ns):
        return self.get("/v1/namespaces/%s" % ns)

    def insert(self, ns, seg_or_batch, **kw):
        return self.post("/v1/namespaces/%s/segments" % ns, seg_or_batch, **kw)

    def retrieve(self, ns, req, **kw):
        return self.post("/v1/namespaces/%s/retrieve" % ns, req, **kw)

    def compact(self, ns, req, **kw):
        return self.post("/v1/namespaces/%s/compact" % ns, req, **kw)

    def seg(self, ns, sid, embedding=False):
        return self.get("/v1/namespaces/%s/segments/%s%s" % (ns, sid,
                                                            "?embedding=true" if embedding else ""))


def _parse_raw(buf):
    head, sep, rest = buf.partition(b"\r\n\r\n")
    if not sep:
        return None, {}, buf
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    status = int(m.group(1)) if m else None
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    if "content-length" in hdrs:
        rest = rest[:int(hdrs["content-length"])]
    elif hdrs.get("transfer-encoding", "").lower() == "chunked":
        out = b""
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            try:
                n = int(size_line.split(b";")[0], 16)
            except ValueError:
                break
            if n == 0:
                break
            out += rest[:n]
            rest = rest[n + 2:]
        rest = out
    return status, hdrs, _parse_body(hdrs.get("content-type"), rest)


def check_schema(method, path, status, ctype, payload):
    """Every answer a test receives through Server.call must be what api/openapi.json says:
    a documented status with a body valid against its schema (an undocumented path or method
    only an error body)."""
    try:
        _schema.api().check_response(method, path, status, ctype, payload)
    except _schema.SchemaError as e:
        raise Failure("response does not match api/openapi.json: %s" % e)


def raw_request(method, path, body=b"", ctype="application/json", extra=b""):
    """Build the bytes of one HTTP/1.1 request with Connection: close."""
    h = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" % (method, path)
    if ctype is not None:
        h += "Content-Type: %s\r\n" % ctype
    h += "Content-Length: %d\r\n" % len(body)
    return h.encode("latin-1") + extra + b"\r\n" + body


def shared(args=(), env=None, key="default"):
    """The file's shared server for this configuration, (re)started when not running."""
    srv = _shared.get(key)
    if srv is None or not srv.alive():
        if srv is not None:
            rc = srv.proc.poll() if srv.proc is not None else None
            print("NOTE shared server %r died (exit status %r); restarting. log tail:\n%s"
                  % (key, rc, srv.log_tail(20)), file=sys.stderr)
            srv.cleanup()
        srv = Server(args, env).start()
        _shared[key] = srv
    return srv


def _cleanup_all():
    for s in _servers:
        try:
            s.cleanup()
        except Exception:
            pass


atexit.register(_cleanup_all)


# ---------------------------------------------------------------- runner

def test(fn):
    _tests.append(fn)
    return fn


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout("test exceeded %d s" % TEST_TIMEOUT)


def main():
    global BINARY
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    if len(sys.argv) < 2:
        print("usage: %s path/to/mnemod [filter ...]" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    BINARY = os.path.abspath(sys.argv[1])
    filters = sys.argv[2:]
    passed = failed = 0
    signal.signal(signal.SIGALRM, _alarm)
    for fn in _tests:
        if filters and not any(f in fn.__name__ for f in filters):
            continue
        signal.alarm(TEST_TIMEOUT)
        try:
            fn()
            passed += 1
        except BaseException as e:   # noqa: B902 - a test failure of any kind is counted
            if isinstance(e, KeyboardInterrupt):
                raise
            failed += 1
            print("FAIL %s: %s" % (fn.__name__, e), file=sys.stderr)
            tb = traceback.format_exc().splitlines()
            print("\n".join("    " + ln for ln in tb[-8:]), file=sys.stderr)
            for key, srv in list(_shared.items()):
                if not srv.alive():
                    print("    shared server %r is down; log tail:\n%s" % (key, srv.log_tail(15)),
                          file=sys.stderr)
        finally:
            signal.alarm(0)
    # The shared servers stop like a real deployment: SIGTERM, exit status 0 within the bound
    # (under ASan this is also where LeakSanitizer reports).
    for key, srv in list(_shared.items()):
        if not srv.alive():
            continue
        try:
            srv.stop()
            passed += 1
        except Failure as e:
            failed += 1
            print("FAIL clean shutdown of shared server %r: %s" % (key, e), file=sys.stderr)
    _cleanup_all()
    print("e2e %s: %d passed, %d failed" % (name, passed, failed))
    sys.exit(1 if failed or not passed else 0)
