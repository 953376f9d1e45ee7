"""test_edge.py - the HTTP edge against hostile clients: a connection that cannot stall
the loop, request timeouts from the first byte, request framing, log lines that cannot be
forged, MCP names that cannot break the encoder.

Raw sockets throughout: these are the bytes a client library would never send.
"""

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import harness as h
from harness import check, eq, expect_error, expect_ok, test

E3 = [1.0, 0.0, 0.0]


def connect(srv, timeout=10.0):
    return socket.create_connection(("127.0.0.1", srv.port), timeout=timeout)


def read_all(sock, seconds):
    """Read until the server closes, or seconds pass. (bytes, closed)."""
    sock.settimeout(0.2)
    buf = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            b = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return buf, True
        if not b:
            return buf, True
        buf += b
    return buf, False


def responses(buf):
    """Status codes of every HTTP response in buf, in order."""
    return [int(m) for m in re.findall(rb"HTTP/1\.[01] (\d{3}) ", buf)]


def body_of(buf):
    head, _, rest = buf.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return json.loads(rest[:int(m.group(1))]) if m else None


def raw_exchange(srv, data, seconds=5.0):
    s = connect(srv)
    try:
        s.sendall(data)
        return read_all(s, seconds)
    finally:
        s.close()


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def answers_quickly(srv, what):
    """/healthz, a /v1 read, /metrics and /mcp all answer within a few seconds."""
    t0 = time.monotonic()
    expect_ok(srv.get("/healthz", timeout=5), 200, "healthz " + what)
    expect_ok(srv.get("/v1/namespaces", timeout=5), 200, "namespaces " + what)
    st, _, _ = srv.get("/metrics", timeout=5)
    eq(st, 200, "metrics " + what)
    st, _, body = srv.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=5)
    eq(st, 200, "mcp " + what)
    check(time.monotonic() - t0 < 5, "answers took %.1f s %s" % (time.monotonic() - t0, what))


CHUNKED_HEAD = (b"POST /v1/namespaces/edge/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")


@test
def test_stall_long_chunk_size_line_does_not_stall_the_loop():
    """A chunk-size line longer than MHD's read buffer (chunk extension or leading zeros)
    must not make the loop spin: other requests are served, the process stays near idle,
    the connection is dropped at --request-timeout and SIGTERM exits at once."""
    srv = h.Server(["--request-timeout", "2s", "--idle-timeout", "60s"]).start()
    try:
        for line in (b"13;" + b"x" * 40000, b"0" * 40000):
            bad = connect(srv)
            bad.sendall(CHUNKED_HEAD + line)
            time.sleep(0.3)
            cpu0, t0 = cpu_seconds(srv.proc.pid), time.monotonic()
            answers_quickly(srv, "while a chunked upload is stuck")
            time.sleep(1.0)
            used = cpu_seconds(srv.proc.pid) - cpu0
            wall = time.monotonic() - t0
            check(used < 0.5 * wall, "the server used %.2f s of CPU in %.2f s: it spins" % (used, wall))
            _, closed = read_all(bad, 8.0)
            check(closed, "the stuck upload was not dropped after --request-timeout")
            bad.close()
        # And shutdown is not delayed by such a connection.
        bad = connect(srv)
        bad.sendall(CHUNKED_HEAD + b"13;" + b"x" * 40000)
        time.sleep(0.3)
        t0 = time.monotonic()
        srv.stop(timeout=10)
        check(time.monotonic() - t0 < 3, "SIGTERM took %.1f s with a stuck upload" % (time.monotonic() - t0))
        bad.close()
    finally:
        srv.cleanup()


@test
def test_keepalive_second_request_has_the_request_timeout():
    """The second request on a kept-alive connection, trickled a byte at a time (each byte
    well within the idle timeout), is dropped at --request-timeout from its first byte."""
    srv = h.shared(["--request-timeout", "2s", "--idle-timeout", "60s"], key="timeouts")
    s = connect(srv)
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        buf = b""
        while b"\r\n\r\n" not in buf or not buf.endswith(b"}"):
            buf += s.recv(4096)
        eq(responses(buf), [200], "first request on the connection")
        # the request line itself never completes: only its first byte can start the clock
        slow = b"GET /v1/namespaces?pad=" + b"a" * 200
        t0 = time.monotonic()
        closed = False
        for i in range(len(slow)):
            try:
                s.sendall(slow[i:i + 1])
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.1)
            if time.monotonic() - t0 > 12:
                break
            s.settimeout(0.001)
            try:
                if s.recv(1) == b"":
                    closed = True
                    break
            except socket.timeout:
                pass
            except ConnectionResetError:
                closed = True
                break
        took = time.monotonic() - t0
        check(closed, "a trickled second request kept the connection open for %.1f s" % took)
        check(took < 8, "dropped after %.1f s, want about --request-timeout (2 s)" % took)
    finally:
        s.close()
    expect_ok(srv.get("/healthz"), 200, "server still answers")


@test
def test_connections_per_client_address():
    """--max-connections-per-ip: one address holds at most that many connections; one more
    is closed at once without an answer (the slot stays free for others), the ones it has
    keep working, and a slot given back can be taken again."""
    srv = h.shared(["--max-connections-per-ip", "2"], key="per_ip")
    get = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    def ask(sock):
        sock.sendall(get)
        buf = b""
        while not (b"\r\n\r\n" in buf and buf.endswith(b"}")):
            b = sock.recv(4096)
            if not b:
                return None
            buf += b
        return responses(buf)

    def open_one():
        """A connection that answers: a close (the harness's own start-up check, say) is
        counted until the server's next pass sees it."""
        deadline = time.monotonic() + 5
        while True:
            c = connect(srv)
            try:
                if ask(c) == [200]:
                    return c
            except (BrokenPipeError, ConnectionResetError):
                pass
            c.close()
            check(time.monotonic() < deadline, "no connection answered")
            time.sleep(0.05)

    a = open_one()
    b = open_one()
    try:
        extra = connect(srv)
        try:
            try:
                extra.sendall(get)
            except (BrokenPipeError, ConnectionResetError):
                pass
            buf, closed = read_all(extra, 5.0)
            check(closed, "a third connection from the same address stayed open")
            eq(buf, b"", "the third connection got no answer")
        finally:
            extra.close()
        eq(ask(a), [200], "the first connection still works")
        b.close()
        open_one().close()  # a connection after one was given back
    finally:
        a.close()
        b.close()


@test
def test_keepalive_idle_connection_keeps_its_idle_timeout():
    """An idle kept-alive connection that sends nothing is not cut by the request timeout:
    a request sent after longer than --request-timeout of silence is answered."""
    srv = h.shared(["--request-timeout", "2s", "--idle-timeout", "60s"], key="timeouts")
    s = connect(srv)
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(3.5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        buf, _ = read_all(s, 5)
        eq(responses(buf), [200, 200], "both requests on the kept-alive connection")
    finally:
        s.close()


def setup_ns(srv, ns):
    srv.delete("/v1/namespaces/%s" % ns)
    expect_ok(srv.put("/v1/namespaces/%s" % ns, {"dim": 3}), 201)
    expect_ok(srv.insert(ns, {"id": "keep", "embedding": E3}), 201)


def ns_count(srv, ns):
    st, _, body = srv.get("/v1/namespaces/%s" % ns)
    return body["count"] if st == 200 else None


@test
def test_framing_conflicting_content_length_is_400_and_never_smuggles():
    srv = h.shared()
    setup_ns(srv, "frame")
    smuggled = b"DELETE /v1/namespaces/frame HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    req = (b"POST /v1/namespaces/frame/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: %d\r\n\r\n{}"
           % (2 + len(smuggled))) + smuggled
    buf, closed = raw_exchange(srv, req)
    eq(responses(buf), [400], "conflicting Content-Length: one 400 and nothing else")
    eq(body_of(buf)["error"]["code"], "bad_request", "error code")
    check(closed, "the connection is closed after a framing error")
    eq(ns_count(srv, "frame"), 1, "the smuggled DELETE did not run")
    # Identical repeated values are one length (RFC 9110): accepted.
    body = json.dumps({"embedding": E3}).encode()
    req = (b"POST /v1/namespaces/frame/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
           b"Content-Type: application/json\r\nContent-Length: %d\r\nContent-Length: %d\r\n\r\n"
           % (len(body), len(body))) + body
    buf, _ = raw_exchange(srv, req)
    eq(responses(buf), [200], "identical Content-Length headers")
    # Transfer-Encoding with Content-Length is refused too.
    req = (b"POST /v1/namespaces/frame/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"0\r\n\r\n" + smuggled)
    buf, _ = raw_exchange(srv, req)
    eq(responses(buf), [400], "Content-Length with Transfer-Encoding")
    eq(ns_count(srv, "frame"), 1, "nothing smuggled through TE + CL")


@test
def test_framing_nul_in_the_request_is_400():
    srv = h.shared()
    setup_ns(srv, "nul")
    for target in (b"/v1/namespaces/nul\x00/segments/keep", b"/v1/namespaces/nul\x00",
                   b"/v1/namespaces/nul/segments/keep\x00x", b"/v1/namespaces/nul?x=\x00"):
        buf, _ = raw_exchange(srv, b"DELETE " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        eq(responses(buf), [400], "NUL in %r" % target)
        eq(body_of(buf)["error"]["code"], "bad_request", "error code for %r" % target)
        eq(ns_count(srv, "nul"), 1, "the namespace survives %r" % target)
    # In a header value, and in a header name
    for hdr in (b"Content-Type: application/json\x00text/plain", b"X-A\x00b: c",
                b"Host: 127.0.0.1\x00.evil.example"):
        buf, _ = raw_exchange(srv, b"DELETE /v1/namespaces/nul/segments/keep HTTP/1.1\r\n"
                              b"Host: 127.0.0.1\r\n" + hdr + b"\r\n\r\n")
        eq(responses(buf), [400], "NUL in header %r" % hdr)
    eq(ns_count(srv, "nul"), 1, "the segment survives")
    # Other bytes MHD would pass on quietly: a space or control byte in the target, a folded
    # header line, a space before the colon.
    for bad in (b"GET /v1/namespaces /x HTTP/1.1\r\nHost: a\r\n\r\n",
                b"GET /v1/names\x01paces HTTP/1.1\r\nHost: a\r\n\r\n",
                b"GET /v1/namespaces HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n",
                b"GET /v1/namespaces HTTP/1.1\r\nHost : a\r\n\r\n",
                b"GET /v1/namespaces HTTP/1.1\r\nHost: a\r\nX-B: a\rb\r\n\r\n",
                b"GET /v1/namespaces HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"):
        buf, _ = raw_exchange(srv, bad)
        st = responses(buf)
        check(st in ([400],), "malformed head %r answered %r" % (bad, st))
    # A clean request on the same server still works, LF-only line ends included.
    buf, _ = raw_exchange(srv, b"GET /v1/namespaces/nul HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n")
    eq(responses(buf), [200], "bare-LF request")


@test
def test_framing_transfer_encoding_and_expect():
    srv = h.shared()
    setup_ns(srv, "te")
    # "chunked " and "chunked\t": the HTTP library decodes only an exact "chunked" and would
    # read such a body until the client closes, so they are refused at once too
    for te in (b"identity", b"gzip, chunked", b"gzip", b"chunked, identity", b"chunked ",
               b"chunked\t", b"Chunked  "):
        t0 = time.monotonic()
        buf, _ = raw_exchange(srv, b"POST /v1/namespaces/te/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              b"Content-Type: application/json\r\nTransfer-Encoding: " + te +
                              b"\r\n\r\n2\r\n{}\r\n0\r\n\r\n", seconds=4)
        eq(responses(buf), [501], "Transfer-Encoding: %r" % te)
        eq(body_of(buf)["error"]["code"], "not_implemented", "code for %r" % te)
        check(time.monotonic() - t0 < 3, "the 501 for %r was not prompt" % te)
    # chunked itself works, in any letter case
    body = json.dumps({"embedding": E3}).encode()
    buf, _ = raw_exchange(srv, b"POST /v1/namespaces/te/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Connection: close\r\nContent-Type: application/json\r\n"
                          b"Transfer-Encoding: Chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
    eq(responses(buf), [200], "a chunked upload")
    buf, closed = raw_exchange(srv, b"POST /v1/namespaces/te/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               b"Content-Type: application/json\r\nExpect: foo\r\n"
                               b"Content-Length: %d\r\n\r\n" % len(body))
    eq(responses(buf), [417], "Expect: foo")
    eq(body_of(buf)["error"]["code"], "expectation_failed", "417 code")
    s = connect(srv)
    try:
        s.sendall(b"POST /v1/namespaces/te/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                  b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body))
        first = s.recv(4096)
        check(first.startswith(b"HTTP/1.1 100"), "100 Continue first: %r" % first[:40])
        s.sendall(body)
        buf, _ = read_all(s, 5)
        eq(responses(buf), [200], "the body after 100 Continue")
    finally:
        s.close()


@test
def test_slow_reader_gets_the_whole_export():
    """A client that reads a large export slowly but steadily gets all of it: --idle-timeout
    closes a connection whose client stopped reading, not one on a slow link. (MHD counts
    idle from its last write, and a socket with MiBs of send buffer reported writable only
    once half of it had drained: at this reader's pace, seconds without a write.)"""
    srv = h.Server(["--idle-timeout", "1s"]).start()
    try:
        text = "slow reader " * 170  # about 2 KB
        for b in range(4):
            segs = [{"id": "s%d-%d" % (b, i), "text": "%s %d %d" % (text, b, i)} for i in range(500)]
            expect_ok(srv.post("/v1/namespaces/slow/segments", {"segments": segs}), 201, "fill")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
        s.settimeout(10)
        s.connect(("127.0.0.1", srv.port))
        try:
            s.sendall(b"GET /v1/namespaces/slow/export HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            buf = b""
            deadline = time.monotonic() + 90
            while not buf.endswith(b"\r\n0\r\n\r\n") and time.monotonic() < deadline:
                try:
                    b = s.recv(16384)
                except (socket.timeout, ConnectionResetError):
                    break
                if not b:
                    break
                buf += b
                time.sleep(0.03)  # about half a MB a second
        finally:
            s.close()
        check(buf.endswith(b"\r\n0\r\n\r\n"), "the export was cut after %d bytes" % len(buf))
        check(len(buf) > 4000000, "the export is a few MB: %d bytes" % len(buf))
        head, _, body = buf.partition(b"\r\n\r\n")
        # undo the chunked framing and count the lines
        data, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            n = int(size_line.split(b";")[0], 16)
            if n == 0:
                break
            data, rest = data + rest[:n], rest[n + 2:]
        eq(len(data.splitlines()), 2000, "every segment in the export")
    finally:
        srv.stop()


def log_lines(srv):
    with open(srv.log_path, "rb") as f:
        return f.read().split(b"\n")[:-1]


HOSTILE_TARGETS = [b'/v1/namespaces/a"b', b"/v1/namespaces/x\\y", b"/v1/\xff\xfe",
                   b"/v1/\x01\x7f", b"/v1/\xc3\xa9t\xc3\xa9", b'/"},"level":"error","x":{"a":"']


@test
def test_logs_escape_every_value_json():
    srv = h.Server(["--log-format", "json", "--log-level", "debug"]).start()
    try:
        for t in HOSTILE_TARGETS:
            raw_exchange(srv, b"GET " + t + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 3)
        # a request MHD itself refuses (it logs through the same logger)
        raw_exchange(srv, b"GET / HTTP/1.1\r\nHost: a\r\nBad header line\r\n\r\n", 2)
    finally:
        srv.stop()
    n_req = 0
    paths = []
    for ln in log_lines(srv):
        try:
            o = json.loads(ln.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise h.Failure("log line is not UTF-8 JSON: %r" % ln)
        check(isinstance(o, dict) and "event" in o and "ts" in o, "not a log object: %r" % ln)
        check(o.get("level") in ("debug", "info", "warn", "error"), "level forged: %r" % ln)
        if o["event"] == "request" and o.get("path") != "/healthz":
            n_req += 1
            paths.append(o.get("path"))
    eq(n_req, len(HOSTILE_TARGETS), "one request line per request")
    check('/v1/namespaces/a"b' in paths, "a quote survives as a quote: %r" % paths)
    check("/v1/\\xff\\xfe" in paths, "invalid UTF-8 is spelled \\xNN: %r" % paths)
    check("/v1/\u00e9t\u00e9" in paths or "/v1/\xe9t\xe9" in paths or "/v1/\\xc3\\xa9t\\xc3\\xa9" in paths,
          "UTF-8 path: %r" % paths)


TEXT_ITEM = re.compile(rb' ([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|[^ "]+)')


@test
def test_logs_escape_every_value_text():
    srv = h.Server(["--log-level", "debug"]).start()
    try:
        for t in HOSTILE_TARGETS:
            raw_exchange(srv, b"GET " + t + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 3)
    finally:
        srv.stop()
    n_req = 0
    for ln in log_lines(srv):
        m = re.match(rb"^ts=\S+ level=(debug|info|warn|error) event=[a-z_]+", ln)
        check(m, "not a log line (forged?): %r" % ln)
        rest = ln[m.end():]
        items = TEXT_ITEM.findall(rest)
        check(b"".join(b" " + k + b"=" + v for k, v in items) == rest,
              "line does not split into key=value items: %r" % ln)
        check(all(0x20 <= c < 0x7f for c in ln.replace(b"\xc3\xa9", b"")), "raw control or non-ASCII byte: %r" % ln)
        if b"event=request" in ln and b"path=/healthz " not in ln:
            n_req += 1
            keys = [k for k, _ in items]
            eq(keys.count(b"status"), 1, "one status per request line: %r" % ln)
    eq(n_req, len(HOSTILE_TARGETS), "one request line per request")


def json_log_only(what, data):
    """Every non-empty stderr line is one JSON log object; returns them."""
    objs = []
    for ln in data.split(b"\n"):
        if not ln.strip():
            continue
        try:
            o = json.loads(ln.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise h.Failure("%s: a stderr line that is not JSON: %r" % (what, ln))
        check(isinstance(o, dict) and "event" in o and "ts" in o and
              o.get("level") in ("debug", "info", "warn", "error"), "%s: not a log object: %r" % (what, ln))
        objs.append(o)
    return objs


@test
def test_logs_json_holds_for_every_line():
    """--log-format json: every line on stderr parses as JSON, from every part of the server
    (requests, the HTTP library, the store's import progress, export, shutdown) and for every
    failure that ends a start or a command (configuration, keys file, data file, listen,
    backup and --check), with the format given by flag or environment."""
    import tempfile
    import shutil
    srv = h.Server(["--log-format", "json", "--log-level", "debug"]).start()
    try:
        expect_ok(srv.insert("logsrc", {"segments": [{"id": "s%d" % i, "embedding": [1.0, i, 0.5],
                                                       "text": "memory %d" % i} for i in range(20)]}), 201)
        st, _, dump = srv.call("GET", "/v1/namespaces/logsrc/export")
        eq(st, 200, "export")
        data = dump if isinstance(dump, bytes) else dump.encode() if isinstance(dump, str) else \
            b"".join(json.dumps(o).encode() + b"\n" for o in (dump if isinstance(dump, list) else [dump]))
        st, _, _ = srv.call("POST", "/v1/namespaces/logdst/import", data,
                            headers={"Content-Type": "application/x-ndjson"})
        eq(st, 201, "import")
        expect_ok(srv.compact("logdst", {"target": 5}), 200)
        raw_exchange(srv, b"GET / HTTP/1.1\r\nHost: a\r\nBad header line\r\n\r\n", 2)
    finally:
        srv.stop()
    with open(srv.log_path, "rb") as f:
        events = {o["event"] for o in json_log_only("a served run", f.read())}
    for want in ("config", "ready", "request", "http", "import_applied"):
        check(want in events, "a %r line in the JSON log: %r" % (want, sorted(events)))

    d = tempfile.mkdtemp(prefix="mnemod-logjson-")
    busy = socket.socket()
    try:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        junk = os.path.join(d, "junk.db")
        with open(junk, "wb") as f:
            f.write(b"not a database " * 5000)
        keys = os.path.join(d, "keys")
        with open(keys, "w") as f:
            f.write("k1 write * extra\n")
        db = os.path.join(d, "x.db")
        srv_args = ["--listen", "127.0.0.1:0", "--data", db]
        cases = [
            ("a bad flag value", srv_args + ["--log-format", "json", "--max-batch", "0"], {}),
            ("a bad flag value before the format", srv_args + ["--max-batch", "0", "--log-format=json"], {}),
            ("an unknown flag, the format from the environment", srv_args + ["--no-such-flag", "1"],
             {"MNEMOD_LOG_FORMAT": "json"}),
            ("a bad keys file", srv_args + ["--log-format", "json", "--keys-file", keys], {}),
            ("a file that is not a database",
             ["--listen", "127.0.0.1:0", "--data", junk, "--log-format", "json"], {}),
            ("a port in use", ["--listen", "127.0.0.1:%d" % busy.getsockname()[1], "--data", db,
                               "--log-format", "json"], {}),
            ("backup of a file that is not a database",
             ["backup", "--data", junk, "--log-format", "json", os.path.join(d, "out.db")], {}),
            ("backup without its path", ["backup", "--log-format", "json"], {}),
            ("--check of a file that is not a database", ["--check", "--data", junk, "--log-format", "json"], {}),
        ]
        for what, args, env in cases:
            p = subprocess.run([h.BINARY] + args, capture_output=True, timeout=30, env=h.clean_env(env))
            check(p.returncode != 0, "%s: exit status %d" % (what, p.returncode))
            objs = json_log_only(what, p.stderr)
            check(any(o["level"] == "error" for o in objs), "%s: an error line: %r" % (what, p.stderr))
        # Without a JSON format, a configuration error stays the plain usage line.
        p = subprocess.run([h.BINARY] + srv_args + ["--max-batch", "0"], capture_output=True, timeout=30,
                           env=h.clean_env({}))
        eq(p.returncode, 2, "text: exit status")
        check(p.stderr.startswith(b"mnemod: ") and b"--max-batch" in p.stderr, "text: %r" % p.stderr)
    finally:
        busy.close()
        shutil.rmtree(d, ignore_errors=True)


@test
def test_mcp_long_non_ascii_names_are_rpc_errors():
    """A method or tool name of many multi-byte characters is quoted in the error message
    cut at a character boundary: a JSON-RPC error in an HTTP 200, never a 503."""
    srv = h.shared()
    name = "\u00e9" * 60 + "\u20ac" * 20  # 180 bytes of UTF-8
    for pad in range(4):  # shift the characters across any fixed cut
        st, _, body = srv.post("/mcp", {"jsonrpc": "2.0", "id": 7, "method": "x" * pad + name})
        eq(st, 200, "HTTP status for a long non-ASCII method (pad %d)" % pad)
        check(isinstance(body, dict) and "error" in body, "a JSON-RPC error: %r" % body)
        eq(body["error"]["code"], -32601, "unknown method code")
        st, _, body = srv.post("/mcp", {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                        "params": {"name": "y" * pad + name, "arguments": {}}})
        eq(st, 200, "HTTP status for a long non-ASCII tool name (pad %d)" % pad)
        check(isinstance(body, dict) and "error" in body, "a JSON-RPC error: %r" % body)
        eq(body["error"]["code"], -32602, "unknown tool code")


# ---------------------------------------------------------------- the edge: browsers, hosts, keys

EVIL = "https://evil.example"
APP = "https://app.example.com"


def edge_server():
    return h.shared(["--allowed-origins", APP, "--allowed-hosts", "mem.example.com,other:8080"],
                    key="edge")


def http(srv, method, path, body=None, headers=None, host=None):
    """One request on a raw socket with exactly these headers (plus Host, Content-Length).
    (status, {header: value}, parsed body)."""
    hdrs = {"Host": host if host is not None else "127.0.0.1:%d" % srv.port,
            "Connection": "close"}
    hdrs.update(headers or {})
    data = body.encode() if isinstance(body, str) else (body or b"")
    lines = ["%s %s HTTP/1.1" % (method, path)]
    for k, v in hdrs.items():
        if v is not None:
            lines.append("%s: %s" % (k, v))
    if data or method in ("POST", "PUT"):
        lines.append("Content-Length: %d" % len(data))
    return srv.raw(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)


@test
def test_cross_site_page_requests_cannot_purge_or_plant():
    """What a web page can send without a preflight (a form post, a no-cors fetch: text/plain,
    urlencoded, no Content-Type, a foreign Origin) neither purges nor plants memories."""
    srv = edge_server()
    setup_ns(srv, "victim")
    purge = json.dumps({"target": 0, "purge": True})
    plant = json.dumps({"id": "planted", "embedding": E3})
    attempts = [
        ({"Content-Type": "text/plain", "Origin": EVIL}, 403, "forbidden_origin"),
        ({"Content-Type": "text/plain;charset=UTF-8"}, 415, "unsupported_media_type"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"),
        ({"Content-Type": "multipart/form-data; boundary=x"}, 415, "unsupported_media_type"),
        ({}, 415, "unsupported_media_type"),
        ({"Content-Type": "application/json", "Origin": EVIL}, 403, "forbidden_origin"),
        ({"Content-Type": "application/json", "Origin": "null"}, 403, "forbidden_origin"),
    ]
    for hdrs, status, code in attempts:
        expect_error(http(srv, "POST", "/v1/namespaces/victim/compact", purge, hdrs), status, code,
                     "compact purge with %r" % hdrs)
        expect_error(http(srv, "POST", "/v1/namespaces/victim/segments", plant, hdrs), status, code,
                     "insert with %r" % hdrs)
    # a request the browser marks as another site's (Sec-Fetch-Site) but that carries no
    # Origin (a tool replaying one, a subresource load) is refused the same way
    for site in ("cross-site", "same-site", "Cross-Site"):
        for hdrs in ({"Content-Type": "application/json", "Sec-Fetch-Site": site},
                     {"Content-Type": "application/json", "Sec-Fetch-Site": site,
                      "Sec-Fetch-Mode": "navigate"}):
            expect_error(http(srv, "POST", "/v1/namespaces/victim/compact", purge, hdrs), 403,
                         "forbidden_origin", "compact purge with %r" % hdrs)
            expect_error(http(srv, "POST", "/v1/namespaces/victim/segments", plant, hdrs), 403,
                         "forbidden_origin", "insert with %r" % hdrs)
        expect_error(http(srv, "DELETE", "/v1/namespaces/victim", None, {"Sec-Fetch-Site": site}),
                     403, "forbidden_origin", "namespace delete from %s" % site)
        expect_error(http(srv, "GET", "/v1/namespaces/victim/export", None,
                          {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "no-cors"}),
                     403, "forbidden_origin", "an export loaded as a subresource from %s" % site)
    eq(ns_count(srv, "victim"), 1, "nothing purged")
    expect_error(srv.seg("victim", "planted"), 404, "not_found", "nothing planted")
    # a link followed from another site opens a page (GET, navigate); the server's own pages
    # and tools without browser headers are not affected
    for path in ("/console", "/v1/namespaces/victim"):
        st, _, _ = http(srv, "GET", path, None, {"Sec-Fetch-Site": "cross-site",
                                                 "Sec-Fetch-Mode": "navigate"})
        eq(st, 200, "GET %s followed from a link on another site" % path)
    for site in ("same-origin", "none"):
        st, _, _ = http(srv, "POST", "/v1/namespaces/victim/retrieve",
                        json.dumps({"embedding": E3}),
                        {"Content-Type": "application/json", "Sec-Fetch-Site": site})
        eq(st, 200, "retrieve with Sec-Fetch-Site: %s" % site)
    # the same requests from the allowed origin, as JSON, work (and carry CORS headers)
    st, hd, _ = http(srv, "POST", "/v1/namespaces/victim/segments", plant,
                     {"Content-Type": "application/json", "Origin": APP})
    eq(st, 201, "insert from the allowed origin")
    eq(hd.get("access-control-allow-origin"), APP, "CORS header for the allowed origin")
    eq(hd.get("vary"), "Origin", "Vary: Origin")
    # an empty body needs no Content-Type
    st, _, _ = http(srv, "DELETE", "/v1/namespaces/victim/segments/planted")
    eq(st, 200, "DELETE without a body or Content-Type")


@test
def test_mcp_and_metrics_refuse_foreign_origins():
    srv = edge_server()
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    for origin in (EVIL, "http://localhost:1", "http://127.0.0.1:%d.evil.example" % srv.port):
        expect_error(http(srv, "POST", "/mcp", ping, {"Content-Type": "application/json",
                                                      "Origin": origin}),
                     403, "forbidden_origin", "/mcp from %s" % origin)
        expect_error(http(srv, "GET", "/metrics", None, {"Origin": origin}), 403,
                     "forbidden_origin", "/metrics from %s" % origin)
        expect_error(http(srv, "GET", "/v1/namespaces", None, {"Origin": origin}), 403,
                     "forbidden_origin", "/v1 from %s" % origin)
    for origin in (APP, "http://localhost:%d" % srv.port, "http://127.0.0.1:%d" % srv.port):
        st, hd, body = http(srv, "POST", "/mcp", ping, {"Content-Type": "application/json",
                                                         "Origin": origin})
        eq(st, 200, "/mcp from %s" % origin)
        eq(hd.get("access-control-allow-origin"), origin, "CORS on /mcp")
    # a same-origin request through an allowed host name
    st, _, _ = http(srv, "GET", "/v1/namespaces", None,
                    {"Origin": "http://mem.example.com:%d" % srv.port},
                    host="mem.example.com:%d" % srv.port)
    eq(st, 200, "same-origin request through an allowed host name")


@test
def test_preflights():
    srv = edge_server()
    s = connect(srv)
    try:
        # preflight then the request, kept alive on one connection, as a browser does
        s.sendall(b"OPTIONS /v1/namespaces/victim/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Origin: " + APP.encode() + b"\r\nAccess-Control-Request-Method: POST\r\n"
                  b"Access-Control-Request-Headers: content-type, authorization\r\n\r\n")
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += s.recv(4096)
        head = buf.split(b"\r\n\r\n")[0].decode("latin-1").lower()
        eq(responses(buf), [204], "preflight status")
        check("access-control-allow-origin: " + APP in head, "preflight allow-origin: %s" % head)
        check("access-control-allow-methods: post" in head, "preflight methods: %s" % head)
        check("access-control-allow-headers: content-type, authorization" in head,
              "preflight headers: %s" % head)
        check("access-control-max-age:" in head, "preflight max-age")
        body = json.dumps({"embedding": E3}).encode()
        s.sendall(b"POST /v1/namespaces/victim/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Origin: " + APP.encode() + b"\r\nContent-Type: application/json\r\n"
                  b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        rest, _ = read_all(s, 5)
        eq(responses(rest), [200], "the request after its preflight, same connection")
    finally:
        s.close()
    expect_error(http(srv, "OPTIONS", "/v1/namespaces/victim/compact", None,
                      {"Origin": EVIL, "Access-Control-Request-Method": "POST"}),
                 403, "forbidden_origin", "a refused preflight")
    st, hd, _ = http(srv, "OPTIONS", "/v1/namespaces/victim", None, {})
    eq(st, 204, "plain OPTIONS")
    eq(hd.get("allow"), "GET, PUT, DELETE", "Allow of a plain OPTIONS")


@test
def test_host_rebinding():
    srv = edge_server()
    for host, status in (("evil.example", 403), ("evil.example:%d" % srv.port, 403),
                         ("127.0.0.1.evil.example", 403), ("other:8081", 403), ("other", 403),
                         ("localhost:%d" % srv.port, 200), ("127.0.0.1", 200),
                         ("[::1]:%d" % srv.port, 200), ("127.1.2.3:1", 200),
                         ("MEM.example.com", 200), ("mem.example.com:1234", 200),
                         ("other:8080", 200)):
        st, _, body = http(srv, "GET", "/v1/namespaces", host=host)
        eq(st, status, "Host %s" % host)
        if status == 403:
            eq(body["error"]["code"], "forbidden_host", "code for Host %s" % host)
    # /healthz is exempt, also without any Host (HTTP/1.0)
    st, _, _ = http(srv, "GET", "/healthz", host="10.1.2.3")
    eq(st, 200, "/healthz with another Host")
    r = srv.raw(b"GET /healthz HTTP/1.0\r\n\r\n")
    eq(r[0], 200, "/healthz without a Host")
    r = srv.raw(b"GET /v1/namespaces HTTP/1.0\r\n\r\n")
    expect_error(r, 400, "bad_request", "no Host")


@test
def test_any_host_on_a_public_listen_without_a_list():
    """--listen on all interfaces with no --allowed-hosts: any Host (a LAN server)."""
    import subprocess
    srv = h.Server()
    srv.port = h.free_port()
    srv.proc = subprocess.Popen([h.BINARY, "--listen", "0.0.0.0:%d" % srv.port, "--data", srv.db],
                                stdin=subprocess.DEVNULL, stdout=open(srv.log_path, "ab"),
                                stderr=subprocess.STDOUT, env=h.clean_env({}))
    try:
        srv.wait_healthy()
        st, _, _ = http(srv, "GET", "/v1/namespaces", host="my-box.lan:%d" % srv.port)
        eq(st, 200, "any Host on a public listen address without a list")
        # A page whose name was re-pointed at this server (DNS rebinding) sends its own
        # name as Host and Origin: same-origin with itself, which must not let it plant
        # or read memories when every Host is accepted (the Docker image's default)
        evil = "evil.example:%d" % srv.port
        for method, path, body in (("POST", "/v1/namespaces/rb/segments", '{"text":"planted"}'),
                                   ("GET", "/v1/namespaces", None),
                                   ("POST", "/mcp", '{"jsonrpc":"2.0","id":1,"method":"ping"}')):
            hd = {"Origin": "http://" + evil}
            if body:
                hd["Content-Type"] = "application/json"
            expect_error(http(srv, method, path, body, hd, host=evil), 403, "forbidden_origin",
                         "rebinding page: %s %s" % (method, path))
        # a same-origin GET carries no Origin, only Sec-Fetch-Site: it must not read either
        expect_error(http(srv, "GET", "/v1/namespaces", None, {"Sec-Fetch-Site": "same-origin"},
                          host=evil), 403, "forbidden_origin", "rebinding page: a same-origin GET")
        expect_error(srv.get("/v1/namespaces/rb"), 404, "not_found", "nothing planted")
        # a typed address (Sec-Fetch-Site: none) and clients without Sec-Fetch-* still pass
        st, _, _ = http(srv, "GET", "/v1/namespaces", None, {"Sec-Fetch-Site": "none"}, host=evil)
        eq(st, 200, "a navigation the user typed")
        # the console reached by address still works: an address cannot be re-pointed
        own = "127.0.0.1:%d" % srv.port
        st, _, _ = http(srv, "POST", "/v1/namespaces/rb/segments", '{"text":"mine"}',
                        {"Origin": "http://" + own, "Content-Type": "application/json"},
                        host=own)
        eq(st, 201, "same-origin by address")
        expect_error(srv.raw(b"GET /v1/namespaces HTTP/1.0\r\n\r\n"), 400, "bad_request",
                     "still no Host at all")
    finally:
        srv.stop()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def keyed(srv, key, method, path, body=None):
    hdrs = {"Authorization": "Bearer " + key} if key else {}
    if body is not None:
        hdrs["Content-Type"] = "application/json"
        body = json.dumps(body)
    return http(srv, method, path, body, hdrs)


@test
def test_scoped_keys_roles_globs_and_reload():
    import tempfile
    d = tempfile.mkdtemp(prefix="mnemod-keys-")
    kf = os.path.join(d, "keys")
    write(kf, "# reader of team-*\nreadkey read team-*\n\nwritekey write team-a\n"
              "writekey read sh?red\nadminkey admin *\n")
    srv = h.Server(["--keys-file", kf], env={"MNEMOD_API_KEY": "masterkey"}).start()
    try:
        E = {"embedding": E3}
        eq(keyed(srv, "adminkey", "PUT", "/v1/namespaces/team-a", {"dim": 3})[0], 201, "admin PUT")
        eq(keyed(srv, "masterkey", "PUT", "/v1/namespaces/other", {"dim": 3})[0], 201,
           "MNEMOD_API_KEY is admin on *")
        expect_error(keyed(srv, None, "GET", "/v1/namespaces/team-a"), 401, "unauthorized", "no key")
        expect_error(keyed(srv, "wrong", "GET", "/v1/namespaces/team-a"), 401, "unauthorized",
                     "wrong key")
        eq(keyed(srv, "readkey", "GET", "/v1/namespaces/team-a")[0], 200, "read in glob")
        expect_error(keyed(srv, "readkey", "GET", "/v1/namespaces/other"), 403, "forbidden",
                     "read outside the glob")
        expect_error(keyed(srv, "readkey", "POST", "/v1/namespaces/team-a/segments", E), 403,
                     "forbidden", "read key inserting")
        eq(keyed(srv, "writekey", "POST", "/v1/namespaces/team-a/segments", E)[0], 201,
           "write key inserting")
        eq(keyed(srv, "writekey", "POST", "/v1/namespaces/shared/segments", E)[0], 403,
           "write key on its read-only glob")
        eq(keyed(srv, "adminkey", "PUT", "/v1/namespaces/shared", {"dim": 3})[0], 201, "admin")
        eq(keyed(srv, "writekey", "GET", "/v1/namespaces/shared")[0], 200, "? glob")
        expect_error(keyed(srv, "writekey", "DELETE", "/v1/namespaces/team-a"), 403, "forbidden",
                     "write key dropping a namespace")
        expect_error(keyed(srv, "writekey", "POST", "/v1/namespaces/team-a/compact",
                           {"target": 0, "purge": True}), 403, "forbidden", "write key compacting")
        # a write key may create a namespace implicitly by inserting into it
        write(kf, "writekey write team-*\nadminkey admin *\nreadkey read team-*\n")
        srv.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if keyed(srv, "writekey", "POST", "/v1/namespaces/team-new/segments", E)[0] == 201:
                break
            time.sleep(0.1)
        eq(keyed(srv, "adminkey", "GET", "/v1/namespaces/team-new")[2]["count"], 1,
           "the write key created team-new by inserting")
        st, _, body = keyed(srv, "readkey", "GET", "/v1/namespaces")
        eq(st, 200, "listing")
        eq(sorted(n["name"] for n in body["namespaces"]), ["team-a", "team-new"],
           "listing shows only the namespaces the key covers")
        st, _, body = keyed(srv, "adminkey", "GET", "/v1/namespaces")
        eq(sorted(n["name"] for n in body["namespaces"]), ["other", "shared", "team-a", "team-new"],
           "admin on * sees every namespace")
        # /metrics needs admin
        expect_error(keyed(srv, "readkey", "GET", "/metrics"), 403, "forbidden", "metrics, read key")
        eq(keyed(srv, "adminkey", "GET", "/metrics")[0], 200, "metrics, admin key")
        # MCP tools need the role of their REST call
        def tool(key, name, args):
            st, _, body = keyed(srv, key, "POST", "/mcp", {"jsonrpc": "2.0", "id": 3,
                                                            "method": "tools/call",
                                                            "params": {"name": name,
                                                                       "arguments": args}})
            eq(st, 200, "MCP %s" % name)
            return body["result"]
        res = tool("readkey", "memory_insert", {"namespace": "team-a", "embedding": E3})
        check(res["isError"] and res["structuredContent"]["error"]["code"] == "forbidden",
              "read key cannot insert through MCP: %r" % res)
        check(not tool("readkey", "memory_retrieve", {"namespace": "team-a", "embedding": E3})["isError"],
              "read key retrieves through MCP")
        res = tool("readkey", "memory_list", {"namespace": "team-a"})
        check(not res["isError"] and len(res["structuredContent"]["segments"]) == 1,
              "read key lists through MCP (the listing is a read): %r" % res)
        res = tool("readkey", "memory_forget", {"namespace": "team-a", "id": "x"})
        check(res["isError"] and res["structuredContent"]["error"]["code"] == "forbidden",
              "read key cannot forget through MCP: %r" % res)
        res = tool("writekey", "memory_compact", {"namespace": "team-a", "target": 0})
        check(res["isError"], "write key cannot compact through MCP")
        # a malformed file on SIGHUP keeps the keys in force and logs an error
        write(kf, "writekey write team-*\nthis line is wrong\n")
        srv.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "keys_reload_failed" not in srv.log_tail(50):
            time.sleep(0.1)
        check("keys_reload_failed" in srv.log_tail(50) and "line 2" in srv.log_tail(50),
              "the failed reload is logged with its line: %s" % srv.log_tail(5))
        eq(keyed(srv, "adminkey", "GET", "/v1/namespaces/team-a")[0], 200, "old keys kept")
        # a new key works after a good reload, a removed one does not
        write(kf, "newkey read team-a\n")
        srv.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if keyed(srv, "newkey", "GET", "/v1/namespaces/team-a")[0] == 200:
                break
            time.sleep(0.1)
        eq(keyed(srv, "newkey", "GET", "/v1/namespaces/team-a")[0], 200, "new key after reload")
        expect_error(keyed(srv, "adminkey", "GET", "/v1/namespaces/team-a"), 401, "unauthorized",
                     "removed key after reload")
        eq(keyed(srv, "masterkey", "GET", "/v1/namespaces/team-a")[0], 200, "MNEMOD_API_KEY stays")
        check("masterkey" not in open(srv.log_path, errors="replace").read()
              and "newkey" not in open(srv.log_path, errors="replace").read(),
              "keys are never logged")
    finally:
        srv.stop()


@test
def test_keys_file_errors_stop_start_up():
    import subprocess
    import tempfile
    d = tempfile.mkdtemp(prefix="mnemod-keys-")
    for text, want in (("k1 read *\nk2 superuser *\n", "line 2"),
                       ("k1 read\n", "line 1"),
                       ("# ok\n\nk1 read a/b\n", "line 3"),
                       ("k1 write * extra\n", "line 1")):
        kf = os.path.join(d, "keys")
        write(kf, text)
        p = subprocess.run([h.BINARY, "--keys-file", kf, "--listen", "127.0.0.1:0", "--data",
                            os.path.join(d, "x.db")], capture_output=True, timeout=20,
                           env=h.clean_env({}))
        eq(p.returncode, 2, "exit status for %r" % text)
        err = p.stderr.decode()
        check(want in err and "keys" in err and len(err.strip().splitlines()) == 1,
              "one line naming %s: %r" % (want, err))
    p = subprocess.run([h.BINARY, "--keys-file", os.path.join(d, "missing")], capture_output=True,
                       timeout=20, env=h.clean_env({}))
    eq(p.returncode, 2, "a missing keys file")
    for flag, val in (("--allowed-origins", "evil.example"), ("--allowed-origins", "http://a,,"),
                      ("--allowed-hosts", "a/b")):
        p = subprocess.run([h.BINARY, flag, val], capture_output=True, timeout=20,
                           env=h.clean_env({}))
        eq(p.returncode, 2, "%s %s" % (flag, val))
        check(flag in p.stderr.decode(), "names the flag: %r" % p.stderr)
    out = subprocess.run([h.BINARY, "--help"], capture_output=True, timeout=20).stdout.decode()
    for flag in ("--keys-file", "--allowed-origins", "--allowed-hosts", "MNEMOD_KEYS_FILE",
                 "MNEMOD_ALLOWED_ORIGINS", "MNEMOD_ALLOWED_HOSTS"):
        check(flag in out, "--help lists %s" % flag)


if __name__ == "__main__":
    h.main()
