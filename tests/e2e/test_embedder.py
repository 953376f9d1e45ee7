"""test_embedder.py - text embedded by an OpenAI-compatible provider (--embedder openai:URL).

A local stand-in provider (fake_provider.py) speaks the wire protocol; the tests drive the
real binary against it: single and batch inserts (one call per --embedder-batch texts), the
bearer key, retrieval by query, MCP, every failure mode (timeout, 429 and 5xx with retries,
garbage, wrong dimension, wrong count, error statuses, an unreachable provider) with
nothing written, the namespace's embedder record across restarts (409 embedder_mismatch),
and that a provider that hangs blocks neither other requests nor shutdown.
"""

import json
import os
import socket
import tempfile
import threading
import time

import harness as h
from fake_provider import FakeProvider, unit, vector

DIM = 8
P = None  # the stand-in, started once for the file


def provider():
    global P
    if P is None:
        P = FakeProvider(dim=DIM).start()
    P.script([])
    P.release()
    return P


def server(model="m1", batch=64, timeout="5s", extra=(), env=None, datadir=None, prov=None):
    p = prov or provider()
    args = ["--embedder", "openai:%s" % p.base_url, "--embedder-model", model,
            "--embedder-batch", str(batch), "--embedder-timeout", timeout] + list(extra)
    srv = h.Server(args, env=env, datadir=datadir).start()
    wait_probe(p)
    return srv


def wait_probe(p, timeout=30.0):
    """The start-up dimension probe has been answered (so later counts are the tests')."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.calls(probes=True) and p.in_flight() == 0:
            return
        time.sleep(0.02)


def count(srv, ns):
    st, _, body = srv.get("/v1/namespaces/" + ns)
    return body["count"] if st == 200 else None


def stored_vec(srv, ns, sid):
    body = h.expect_ok(srv.get("/v1/namespaces/%s/segments/%s?embedding=true" % (ns, sid)))
    return body["embedding"]


def assert_close(got, want, what):
    h.eq(len(got), len(want), what + " length")
    for a, b in zip(got, want):
        h.near(a, b, 1e-6, what)


@h.test
def test_single_insert_key_and_retrieve():
    p = provider()
    keyfile = os.path.join(tempfile.mkdtemp(prefix="mnemod-key-"), "key")
    with open(keyfile, "w") as f:
        f.write("sk-stand-in-123\n")
    srv = server(extra=["--embedder-key-file", keyfile])
    p.reset_calls()
    r = h.expect_ok(srv.insert("notes", {"id": "pw", "text": "the staging password is hunter2"}),
                    201)
    h.eq(r["inserted"][0]["id"], "pw")
    calls = p.calls()
    h.eq(len(calls), 1, "calls for one text")
    h.eq(calls[0]["model"], "m1")
    h.eq(calls[0]["inputs"], ["the staging password is hunter2"])
    h.eq(calls[0]["auth"], "Bearer sk-stand-in-123")
    h.eq(calls[0]["path"], "/v1/embeddings")
    h.eq(calls[0]["content_type"], "application/json")
    log = srv.log_tail(200)
    h.check("event=embedder_ready" in log and "dim=%d" % DIM in log, "probe logged")
    h.check("embedder_key=on" in log and "sk-stand-in-123" not in log, "the key is never logged")
    assert_close(stored_vec(srv, "notes", "pw"),
                 unit(vector("the staging password is hunter2", DIM)), "stored vector")
    stats = h.expect_ok(srv.get("/v1/namespaces/notes"))
    h.eq(stats["embedder"], "openai:m1")
    h.eq(stats["dim"], DIM)
    listed = h.expect_ok(srv.get("/v1/namespaces"))["namespaces"]
    h.eq([n["embedder"] for n in listed if n["name"] == "notes"], ["openai:m1"])
    h.expect_ok(srv.insert("notes", {"id": "lunch", "text": "team lunch moved to thursday"}), 201)
    p.reset_calls()
    res = h.expect_ok(srv.retrieve("notes", {"query": "staging password", "k": 2,
                                             "explain": True, "match": "vector"}))
    h.eq(p.calls()[0]["inputs"], ["staging password"])
    h.eq(res["results"][0]["id"], "pw")
    want = h.dot(unit(vector("staging password", DIM)),
                 unit(vector("the staging password is hunter2", DIM)))
    h.near(res["results"][0]["similarity"], want, 1e-5, "similarity")
    # by default a provider's namespace blends text and vectors evenly (the query is embedded)
    p.reset_calls()
    res = h.expect_ok(srv.retrieve("notes", {"query": "staging password", "k": 2,
                                             "explain": True}))
    h.eq(res["match"], "hybrid", "default match with a provider's vectors")
    h.eq(p.calls()[0]["inputs"], ["staging password"])
    r0 = res["results"][0]
    h.near(r0["similarity"], 0.5 * r0["text_score"] + 0.5 * max(0.0, r0["vector_score"]), 1e-6,
           "hybrid 0.5")
    h.near(r0["vector_score"], want, 1e-5, "vector part")
    # a retrieve with an embedding, and a client embedding at insert, need no call
    p.reset_calls()
    h.expect_ok(srv.retrieve("notes", {"embedding": vector("lunch", DIM)}))
    h.expect_ok(srv.insert("notes", {"id": "mine", "text": "kept", "embedding": [1] * DIM}), 201)
    h.eq(p.calls(), [], "calls without text to embed")
    # PUT without a body takes the provider's dimension
    h.eq(h.expect_ok(srv.put("/v1/namespaces/fresh"), 201)["dim"], DIM)
    srv.stop()


@h.test
def test_batch_calls_and_order():
    p = provider()
    srv = server(batch=3)
    for n in (1, 3, 4, 10):
        p.reset_calls()
        texts = ["batch %d text %d about topic%d" % (n, i, i % 4) for i in range(n)]
        segs = [{"id": "b%d-%d" % (n, i), "text": t} for i, t in enumerate(texts)]
        h.expect_ok(srv.insert("batch", {"segments": segs}), 201)
        calls = p.calls()
        h.eq(len(calls), (n + 2) // 3, "calls for %d texts" % n)
        h.eq(sorted(len(c["inputs"]) for c in calls),
             sorted([3] * (n // 3) + ([n % 3] if n % 3 else [])), "texts per call")
        h.eq(sorted(t for c in calls for t in c["inputs"]), sorted(texts), "texts sent")
        for i, t in enumerate(texts):
            assert_close(stored_vec(srv, "batch", "b%d-%d" % (n, i)), unit(vector(t, DIM)),
                         "segment %d of %d" % (i, n))
    # client embeddings and texts in one batch: only the texts go out, in their places
    p.reset_calls()
    segs = [{"id": "m0", "text": "alpha"}, {"id": "m1", "embedding": [0.5] * DIM},
            {"id": "m2", "text": "gamma"}]
    h.expect_ok(srv.insert("batch", {"segments": segs}), 201)
    h.eq([c["inputs"] for c in p.calls()], [["alpha", "gamma"]])
    assert_close(stored_vec(srv, "batch", "m2"), unit(vector("gamma", DIM)), "m2")
    assert_close(stored_vec(srv, "batch", "m1"), unit([0.5] * DIM), "m1")
    # answers out of order, without index, or in base64 land in the right places
    for action in ("shuffle", "noindex", "base64"):
        p.script([action])
        segs = [{"id": "%s%d" % (action, i), "text": "word%d %s" % (i, action)} for i in range(3)]
        h.expect_ok(srv.insert("batch", {"segments": segs}), 201)
        for i in range(3):
            assert_close(stored_vec(srv, "batch", "%s%d" % (action, i)),
                         unit(vector("word%d %s" % (i, action), DIM)), action)
    srv.stop()


@h.test
def test_retries_429_and_5xx():
    p = provider()
    srv = server(timeout="10s")
    p.reset_calls()
    p.script(["status:429:0", "status:429", "ok"])
    t0 = time.monotonic()
    h.expect_ok(srv.insert("retry", {"id": "a", "text": "rate limited once"}), 201)
    h.eq([c["action"] for c in p.calls()], ["status:429:0", "status:429", "ok"])
    h.check(time.monotonic() - t0 < 9, "retries fit in the timeout")
    p.reset_calls()
    p.script(["status:500", "status:503", "ok"])
    h.expect_ok(srv.insert("retry", {"id": "b", "text": "flaky provider"}), 201)
    h.eq(len(p.calls()), 3)
    # Retry-After beyond the timeout: give up at once with the provider's status
    p.reset_calls()
    p.script(["status:429:3600"])
    err = h.expect_error(srv.insert("retry", {"id": "c", "text": "never"}), 502,
                         "embedder_error")
    h.check("429" in err["message"], err["message"])
    h.eq(len(p.calls()), 1)
    h.eq(count(srv, "retry"), 2)
    st, _, text = srv.get("/metrics")
    h.eq(st, 200)
    metric = {}
    for line in text.splitlines():
        if line.startswith("mnemod_embedder_"):
            k, _, v = line.rpartition(" ")
            metric[k] = float(v)
    h.eq(metric.get("mnemod_embedder_retries_total"), 4.0, "retries counted")
    h.eq(metric.get("mnemod_embedder_calls_total"), 7.0, "calls counted (3 + 3 + 1)")
    h.eq(metric.get('mnemod_embedder_requests_total{result="ok"}'), 2.0)
    h.eq(metric.get('mnemod_embedder_requests_total{result="embedder_error"}'), 1.0)
    h.eq(metric.get("mnemod_embedder_duration_seconds_count"), 3.0)
    srv.stop()


@h.test
def test_failures_write_nothing():
    p = provider()
    srv = server(timeout="1500ms")
    h.expect_ok(srv.insert("f", {"id": "keep", "text": "already here"}), 201)
    cases = [
        (["status:503"], "status:503", 502, "embedder_error", "503"),
        (["status:401"], "ok", 502, "embedder_error", "401"),
        (["status:400"], "ok", 502, "embedder_error", "stand-in says 400"),
        (["garbage"], "ok", 502, "embedder_error", "not JSON"),
        (["dim:5"], "ok", 502, "embedder_error", "5 floats"),
        (["count:-1"], "ok", 502, "embedder_error", "1 embeddings for 2 inputs"),
        (["hang"], "ok", 504, "embedder_timeout", "1.5s"),
    ]
    for script, default, status, code, needle in cases:
        p.script(script, default=default)
        body = {"segments": [{"id": "x1", "text": "first text"}, {"id": "x2", "text": "second"}]}
        t0 = time.monotonic()
        err = h.expect_error(srv.insert("f", body), status, code, str(script))
        h.check(needle in err["message"], "%s: %r lacks %r" % (script, err["message"], needle))
        h.check(time.monotonic() - t0 < 10, "%s answered within the timeout" % script)
        p.release()
        p.script([])
        h.eq(count(srv, "f"), 1, "nothing written after %s" % script)
        h.eq(srv.seg("f", "x1")[0], 404)
    # the same failures for a text query, and the namespace is unchanged
    p.script(["garbage"])
    h.expect_error(srv.retrieve("f", {"query": "here"}), 502, "embedder_error")
    p.script(["hang"])
    h.expect_error(srv.retrieve("f", {"query": "here"}), 504, "embedder_timeout")
    p.release()
    p.script([])
    h.expect_ok(srv.retrieve("f", {"query": "here"}))
    srv.stop()


@h.test
def test_unreachable_provider():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    srv = h.Server(["--embedder", "openai:http://127.0.0.1:%d/v1" % port, "--embedder-model",
                    "m1", "--embedder-timeout", "1s"]).start()
    err = h.expect_error(srv.insert("u", {"text": "nobody home"}), 502, "embedder_error")
    h.check("cannot reach" in err["message"], err["message"])
    log = srv.log_tail(200)
    h.check("event=embedder_unavailable" in log and "cannot reach" in log, "probe failure logged")
    h.check("event=embedder_failed" in log and "code=embedder_error" in log, "failure logged")
    h.eq(srv.get("/v1/namespaces/u")[0], 404)
    # the dimension is unknown: PUT without a dimension asks the provider, and says so
    h.expect_error(srv.put("/v1/namespaces/u"), 502, "embedder_error")
    h.eq(h.expect_ok(srv.put("/v1/namespaces/u", {"dim": 4}), 201)["dim"], 4)
    h.expect_ok(srv.insert("u", {"embedding": [1, 2, 3, 4]}), 201)
    srv.stop()


@h.test
def test_dimensions():
    p = provider()
    srv = server()
    h.expect_ok(srv.put("/v1/namespaces/four", {"dim": 4}), 201)
    p.reset_calls()
    h.expect_error(srv.insert("four", {"text": "too wide"}), 400, "dimension_mismatch")
    h.expect_error(srv.retrieve("four", {"query": "too wide", "match": "vector"}), 400,
                   "dimension_mismatch")
    # without a match, a query of a namespace whose vectors cannot be made from text is text
    h.eq(h.expect_ok(srv.retrieve("four", {"query": "too wide"}))["match"], "text", "text")
    h.eq(p.calls(), [], "the known dimension is checked before any call")
    h.expect_ok(srv.insert("four", {"text": "client vector", "embedding": [1, 0, 0, 0]}), 201)
    h.expect_error(srv.insert("new", {"segments": [{"embedding": [1, 2, 3]}, {"text": "x"}]}),
                   400, "dimension_mismatch")
    srv.stop()


@h.test
def test_embedder_mismatch_across_restarts():
    p = provider()
    srv = server(model="m1")
    h.expect_ok(srv.insert("rec", {"id": "a", "text": "made by m1"}), 201)
    h.expect_ok(srv.insert("client", {"id": "c", "embedding": [1] * DIM}), 201)
    srv.stop()
    # the same model after a restart: still recorded, still accepted
    srv = server(model="m1", datadir=srv.dir)
    h.eq(h.expect_ok(srv.get("/v1/namespaces/rec"))["embedder"], "openai:m1")
    h.eq(h.expect_ok(srv.get("/v1/namespaces/client"))["embedder"], None)
    h.expect_ok(srv.insert("rec", {"id": "b", "text": "m1 again"}), 201)
    srv.stop()
    # another model: text is refused for it, client vectors of its dimension are not
    srv = server(model="m2", datadir=srv.dir)
    p.reset_calls()
    err = h.expect_error(srv.insert("rec", {"id": "x", "text": "made by m2"}), 409,
                         "embedder_mismatch")
    h.check("openai:m1" in err["message"] and "openai:m2" in err["message"], err["message"])
    h.expect_error(srv.insert("rec", {"segments": [{"id": "y", "text": "m2"}]}), 409,
                   "embedder_mismatch")
    h.expect_error(srv.retrieve("rec", {"query": "made"}), 409, "embedder_mismatch")
    h.eq(p.calls(), [], "a mismatch is found before any call")
    h.expect_ok(srv.insert("rec", {"id": "z", "text": "mine", "embedding": [0.5] * DIM}), 201)
    h.expect_ok(srv.retrieve("rec", {"embedding": [0.5] * DIM}))
    h.eq(count(srv, "rec"), 3)
    # a namespace with client vectors only records m2 at its first embedded text
    h.expect_ok(srv.insert("client", {"id": "t", "text": "first text"}), 201)
    h.eq(h.expect_ok(srv.get("/v1/namespaces/client"))["embedder"], "openai:m2")
    srv.stop()
    # the built-in embedder: the provider's namespaces refuse its text, its own record it
    srv = h.Server(["--embed-dim", str(DIM)], datadir=srv.dir).start()
    h.expect_error(srv.insert("rec", {"text": "builtin"}), 409, "embedder_mismatch")
    h.expect_ok(srv.insert("local", {"text": "builtin text"}), 201)
    h.eq(h.expect_ok(srv.get("/v1/namespaces/local"))["embedder"], "builtin")
    srv.stop()
    srv = server(model="m1", datadir=srv.dir)
    h.expect_error(srv.insert("local", {"text": "provider"}), 409, "embedder_mismatch")
    srv.stop()


@h.test
def test_mcp_uses_the_provider():
    p = provider()
    srv = server()

    def tool(name, args):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": args}}
        st, _, res = srv.call("POST", "/mcp", body)
        h.eq(st, 200)
        return res["result"]

    p.reset_calls()
    r = tool("memory_insert", {"namespace": "m", "text": "the cat sat on the mat"})
    h.eq(r["isError"], False, json.dumps(r))
    h.eq(p.calls()[0]["inputs"], ["the cat sat on the mat"])
    tool("memory_insert", {"namespace": "m", "text": "dogs bark at night"})
    r = tool("memory_retrieve", {"namespace": "m", "query": "cat mat", "k": 1})
    h.eq(r["isError"], False, json.dumps(r))
    h.eq(r["structuredContent"]["results"][0]["text"], "the cat sat on the mat")
    p.script(["status:400"])
    r = tool("memory_insert", {"namespace": "m", "text": "refused"})
    h.eq(r["isError"], True)
    h.eq(r["structuredContent"]["error"]["code"], "embedder_error")
    h.check("400" in r["content"][0]["text"], r["content"][0]["text"])
    h.eq(count(srv, "m"), 2)
    srv.stop()


@h.test
def test_slow_provider_blocks_nothing():
    p = provider()
    # one worker thread: a provider call that held it would stall the retrieve below
    srv = server(timeout="60s", extra=["--threads", "1"])
    h.expect_ok(srv.insert("s", {"id": "a", "embedding": [1] * DIM}), 201)
    p.script(["hang"])
    out = {}

    def slow_insert():
        out["resp"] = srv.insert("s", {"id": "slow", "text": "waits for the provider"})

    t = threading.Thread(target=slow_insert)
    t.start()
    deadline = time.monotonic() + 10
    while p.in_flight() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    h.eq(p.in_flight(), 1, "the provider call is pending")
    # the provider stays stuck until released: these answer only if nothing waits on it
    for _ in range(3):
        h.expect_ok(srv.call("GET", "/healthz", timeout=5))
        res = h.expect_ok(srv.call("POST", "/v1/namespaces/s/retrieve",
                                   {"embedding": [1] * DIM}, timeout=5))
        h.eq(res["results"][0]["id"], "a")
        h.expect_ok(srv.call("POST", "/v1/namespaces/s/segments",
                             {"embedding": [1] + [0] * (DIM - 1)}, timeout=5), 201)
    h.eq(p.in_flight(), 1, "still pending")
    h.check(t.is_alive(), "the slow insert is still waiting")
    p.script([])
    p.release()  # the hung call answers 503; the retry succeeds
    t.join(30)
    h.expect_ok(out["resp"], 201)
    srv.stop()


@h.test
def test_sigterm_while_a_call_is_pending():
    p = provider()
    srv = server(timeout="60s")
    p.script(["hang"])
    out = {}

    def slow_insert():
        out["resp"] = srv.insert("t", {"id": "never", "text": "waits for the provider"})

    th = threading.Thread(target=slow_insert)
    th.start()
    deadline = time.monotonic() + 10
    while p.in_flight() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    h.eq(p.in_flight(), 1)
    t0 = time.monotonic()
    srv.stop(timeout=10)  # exit status 0 asserted
    h.check(time.monotonic() - t0 < 10, "shut down without waiting for the provider")
    th.join(10)
    resp = out.get("resp")
    h.check(resp is not None, "the waiting request was answered")
    h.expect_error(resp, 503, "unavailable")
    p.release()
    p.script([])
    srv = server(datadir=srv.dir)
    h.eq(srv.get("/v1/namespaces/t")[0], 404, "nothing written")
    srv.stop()


if __name__ == "__main__":
    try:
        h.main()
    finally:
        if P is not None:
            P.stop()
