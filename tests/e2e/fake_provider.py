"""fake_provider.py - a local stand-in for an OpenAI-compatible embeddings provider.

Standard library only. It speaks the wire protocol mnemod's `--embedder openai:BASE_URL`
speaks (`POST BASE_URL/embeddings` with `{"model", "input": [texts]}`, answered with
`{"data": [{"index", "embedding"}], ...}`), runs in a thread of the test process, and can be
told to misbehave the ways real providers do: hang, answer 429 or 5xx (with Retry-After),
garbage, the wrong dimension or the wrong count.

    p = FakeProvider(dim=8).start()
    srv = Server(["--embedder", "openai:%s" % p.base_url, "--embedder-model", "m1"]).start()
    p.script(["status:429", "ok"])   # the next answers, in order, then "ok" for good
    p.calls()                        # every call: model, inputs, headers

Vectors are deterministic: each lower-cased word of a text adds a signed one-hot in `dim`
buckets chosen by SHA-256 (so texts sharing words are similar), never all zeros.
"""

import base64
import hashlib
import http.server
import json
import math
import re
import struct
import threading


def vector(text, dim):
    v = [0.0] * dim
    for w in re.findall(r"[a-z0-9]+", text.lower()) or [text or "empty"]:
        h = hashlib.sha256(w.encode("utf-8")).digest()
        v[h[0] % dim] += 1.0 if h[1] & 1 else -1.0
        v[h[2] % dim] += 0.5
    if all(x == 0.0 for x in v):
        v[0] = 1.0
    return v


def unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [struct.unpack("f", struct.pack("f", x / n))[0] for x in v]


class FakeProvider:
    """Actions for script(): "ok", "hang" (answer only after release()), "status:N"
    (optionally "status:N:retry_after"), "garbage", "dim:N" (vectors of N floats),
    "count:-1" (one embedding too few), "base64" (embeddings as base64 float32),
    "shuffle" (entries in reverse order, with their index), "noindex" (no "index"),
    "slow:S" (answer after S seconds)."""

    def __init__(self, dim=8, path="/v1"):
        self.dim = dim
        self.path = path
        self._lock = threading.Lock()
        self._calls = []
        self._script = []
        self._default = "ok"
        self._release = threading.Event()
        self._in_flight = 0
        self._server = None
        self._thread = None

    # -- control
    def start(self):
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt, *args):
                pass

            def do_POST(self):
                owner._handle(self)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.release()
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self):
        return self._server.server_address[1]

    @property
    def base_url(self):
        return "http://127.0.0.1:%d%s" % (self.port, self.path)

    def script(self, actions, default="ok"):
        """The next answers, one action each, then `default` for every later one."""
        with self._lock:
            self._script = list(actions)
            self._default = default
            self._release.clear()

    def release(self):
        self._release.set()

    def calls(self, probes=False):
        """Every call so far (dicts: model, inputs, auth, path, action); the start-up
        dimension probe ("dimension probe") only when probes is true."""
        with self._lock:
            return [c for c in self._calls if probes or c["inputs"] != ["dimension probe"]]

    def reset_calls(self):
        with self._lock:
            self._calls = []

    def in_flight(self):
        with self._lock:
            return self._in_flight

    # -- serving
    def _next_action(self):
        with self._lock:
            return self._script.pop(0) if self._script else self._default

    def _handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length)
        try:
            req = json.loads(raw.decode("utf-8"))
        except ValueError:
            req = None
        inputs = req.get("input") if isinstance(req, dict) else None
        if isinstance(inputs, str):
            inputs = [inputs]
        action = self._next_action()
        with self._lock:
            self._calls.append({"model": req.get("model") if isinstance(req, dict) else None,
                                "inputs": inputs, "auth": h.headers.get("Authorization"),
                                "path": h.path, "action": action,
                                "content_type": h.headers.get("Content-Type")})
            self._in_flight += 1
        try:
            self._answer(h, action, req, inputs)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _send(self, h, status, body, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in headers:
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except OSError:
            pass  # the client gave up (a timeout test)

    def _answer(self, h, action, req, inputs):
        if h.path != self.path + "/embeddings":
            return self._send(h, 404, {"error": "404 page not found"})
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return self._send(h, 400, {"error": {"message": "'input' must be a list of strings",
                                                 "type": "invalid_request_error"}})
        kind, _, arg = action.partition(":")
        if kind == "hang":
            self._release.wait(120)
            return self._send(h, 503, {"error": {"message": "released"}})
        if kind == "slow":
            self._release.wait(float(arg))
        if kind == "status":
            code, _, ra = arg.partition(":")
            hdrs = [("Retry-After", ra)] if ra else []
            return self._send(h, int(code), {"error": {"message": "stand-in says %s" % code,
                                                       "type": "server_error"}}, hdrs)
        if kind == "garbage":
            return self._send(h, 200, b"{\"data\": [{\"embedding\": [0.1, 0.2,")
        dim = int(arg) if kind == "dim" else self.dim
        data = [{"object": "embedding", "index": i, "embedding": vector(t, dim)}
                for i, t in enumerate(inputs)]
        if kind == "count":
            data = data[:len(data) + int(arg)]
        if kind == "base64":
            for d in data:
                d["embedding"] = base64.b64encode(
                    struct.pack("<%df" % len(d["embedding"]), *d["embedding"])).decode("ascii")
        if kind == "shuffle":
            data.reverse()
        if kind == "noindex":
            for d in data:
                del d["index"]
        self._send(h, 200, {"object": "list", "data": data, "model": req.get("model"),
                            "usage": {"prompt_tokens": 1, "total_tokens": 1}})
