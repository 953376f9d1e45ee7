"""test_ops.py - operations (issue 6): one-line logs in text and JSON, X-Request-Id, and the
sd_notify protocol (READY=1 once loaded, STOPPING=1 on drain) over $NOTIFY_SOCKET."""

import json
import os
import re
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, expect_ok  # noqa: E402

E3 = [1.0, 0.0, 0.0]


def log_lines(srv):
    with open(srv.log_path, "rb") as f:
        return [ln for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]


@test
def test_text_logs_are_key_value_lines():
    srv = h.Server(args=["--log-level", "debug"]).start()
    try:
        expect_ok(srv.insert("ops", {"embedding": E3}), 201)
        st, hd, _ = srv.get("/v1/namespaces/ops", headers={"X-Request-Id": "trace-text-1"})
        eq(st, 200)
    finally:
        srv.stop()
    lines = log_lines(srv)
    check(lines, "no log lines")
    for ln in lines:
        check(re.match(r"^ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(debug|info|warn|error) "
                       r"event=[a-z_]+( |$)", ln), "not a key=value log line: %r" % ln)
    events = [re.search(r"event=([a-z_]+)", ln).group(1) for ln in lines]
    for want in ("listening", "ready", "draining", "stopped"):
        check(want in events, "no %s event in %r" % (want, events))
    check(any("id=trace-text-1" in ln and "event=request" in ln for ln in lines),
          "the request line does not carry the request id")


@test
def test_json_logs_parse_line_by_line():
    srv = h.Server(args=["--log-format", "json", "--log-level", "debug"]).start()
    try:
        st, hd, _ = srv.get("/v1/namespaces", headers={"X-Request-Id": "trace-json-1"})
        eq(st, 200)
        srv.post("/v1/namespaces/ops/retrieve", {"embedding": E3})  # a 404, logged too
    finally:
        srv.stop()
    objs = []
    for ln in log_lines(srv):
        try:
            objs.append(json.loads(ln))
        except ValueError:
            raise h.Failure("log line is not JSON: %r" % ln)
    for o in objs:
        for key in ("ts", "level", "event"):
            check(key in o, "JSON log line without %s: %r" % (key, o))
    reqs = [o for o in objs if o["event"] == "request"]
    check(any(o.get("id") == "trace-json-1" and o.get("status") == "200" for o in reqs),
          "no request line for trace-json-1: %r" % reqs)
    check(any(o.get("status") == "404" for o in reqs), "the 404 was not logged: %r" % reqs)


@test
def test_request_id_is_echoed_or_generated():
    srv = h.shared()
    st, hd, _ = srv.get("/healthz", headers={"X-Request-Id": "abc-123"})
    eq(st, 200)
    eq(hd.get("x-request-id"), "abc-123", "echoed request id")
    st, hd, _ = srv.get("/v1/namespaces")
    check(re.fullmatch(r"[0-9a-f]{16}", hd.get("x-request-id", "")),
          "generated request id: %r" % hd.get("x-request-id"))
    other = srv.get("/v1/namespaces")[1].get("x-request-id")
    check(other != hd.get("x-request-id"), "two requests got the same generated id")
    # An id with a space or a quote is not echoed (it would break logs and headers).
    st, hd, _ = srv.get("/healthz", headers={"X-Request-Id": 'bad "id" here'})
    check(re.fullmatch(r"[0-9a-f]{16}", hd.get("x-request-id", "")),
          "unclean id must be replaced: %r" % hd.get("x-request-id"))
    # Errors carry one too.
    st, hd, body = srv.get("/v1/namespaces/nope-ops", headers={"X-Request-Id": "err-1"})
    eq(st, 404)
    eq(hd.get("x-request-id"), "err-1")


@test
def test_sd_notify_ready_and_stopping():
    d = tempfile.mkdtemp(prefix="mnemod-notify-")
    path = os.path.join(d, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(30)
    try:
        srv = h.Server(env={"NOTIFY_SOCKET": path})
        srv.start()
        msg = sock.recv(256).decode()
        eq(msg, "READY=1", "first notification")
        # READY comes once the store is loaded: health is ok by now.
        eq(srv.get("/healthz")[0], 200)
        srv.stop()
        msg = sock.recv(256).decode()
        eq(msg, "STOPPING=1", "notification on SIGTERM")
    finally:
        sock.close()
        os.unlink(path)
        os.rmdir(d)


if __name__ == "__main__":
    h.main()
