"""test_numbers.py - numbers in and out: embeddings as JSON arrays or base64 float32, the
float32 each decimal rounds to, and numbers written back as their shortest decimals."""

import base64
import http.client
import json
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, expect_ok, expect_error  # noqa: E402

DIM = 8


def S():
    return h.shared()


def b64(v):
    """What OpenAI's encoding_format "base64" sends: little-endian float32 bytes."""
    return base64.b64encode(struct.pack("<%df" % len(v), *v)).decode()


def unb64(s):
    raw = base64.b64decode(s, validate=True)
    return list(struct.unpack("<%df" % (len(raw) // 4), raw))


def text_call(srv, method, path, body=None):
    """(status, raw body bytes): the numbers exactly as the server wrote them."""
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    try:
        data = json.dumps(body).encode() if body is not None else None
        c.request(method, path, body=data,
                  headers={"Content-Type": "application/json"} if data else {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def vecs(seed, n):
    rng = random.Random(seed)
    return [h.rand_vec(rng, DIM) for _ in range(n)]


@test
def test_base64_insert_equals_array_insert():
    srv = S()
    vs = vecs(1, 20)
    ts = h.now_ms() - 3600 * 1000
    for ns, form in (("num-arr", lambda v: v), ("num-b64", lambda v: b64([h.f32(x) for x in v]))):
        segs = [{"id": "s%d" % i, "embedding": form(v), "text": "t%d" % i,
                 "timestamp": h.rfc3339_ms(ts + i * 1000)} for i, v in enumerate(vs)]
        expect_ok(srv.insert(ns, {"segments": segs}), 201, "insert " + ns)
    # the stored unit vectors are identical, bit for bit, whichever form carried them
    for i in (0, 7, 19):
        _, _, a = srv.get("/v1/namespaces/num-arr/segments/s%d?embedding=base64" % i)
        _, _, b = srv.get("/v1/namespaces/num-b64/segments/s%d?embedding=base64" % i)
        check(isinstance(a.get("embedding"), str), "?embedding=base64 answers a string")
        eq(a["embedding"], b["embedding"], "segment s%d: stored vectors" % i)
    # and answers are identical: same ids, order, scores, for array and base64 queries
    q = vecs(2, 1)[0]
    qf = [h.f32(x) for x in q]
    answers = []
    origin = h.rfc3339_ms(ts + 3600 * 1000)
    for ns in ("num-arr", "num-b64"):
        for query in (qf, b64(qf)):
            st, _, body = srv.retrieve(ns, {"embedding": query, "k": 10, "half_life": "1h",
                                            "origin": origin, "explain": True})
            expect_ok((st, None, body), 200, "retrieve " + ns)
            answers.append([(r["id"], r["score"], r["similarity"], r["decay"])
                            for r in body["results"]])
    for a in answers[1:]:
        eq(a, answers[0], "retrieve answers across forms")
    eq(len(answers[0]), 10, "k results")


@test
def test_embedding_base64_output():
    srv = S()
    v = [3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 12.0]
    expect_ok(srv.insert("num-out", {"id": "a", "embedding": v}), 201)
    _, _, arr = srv.get("/v1/namespaces/num-out/segments/a?embedding=true")
    _, _, enc = srv.get("/v1/namespaces/num-out/segments/a?embedding=base64")
    eq(unb64(enc["embedding"]), [h.f32(x) for x in arr["embedding"]], "base64 = array")
    # the array holds each float32's shortest decimal: it reads back as the same float32
    # and no shorter decimal would
    st, raw = text_call(srv, "GET", "/v1/namespaces/num-out/segments/a?embedding=true")
    eq(st, 200)
    text = raw.decode()
    lst = text[text.index('"embedding":[') + 13:]
    lst = lst[:lst.index("]")].split(",")
    want = h.unit(v)
    for tok, w in zip(lst, want):
        eq(h.f32(float(tok)), w, "component %s" % tok)
        digits = tok.replace("-", "").replace(".", "").lstrip("0").split("e")[0]
        check(len(digits.rstrip("0")) <= 9, "at most 9 digits: %s" % tok)
    check("0.23076923" in text and "0.9230769" in text, "3/13 and 12/13 as float32: %s" % text)
    # the listing offers the same forms
    _, _, page = srv.get("/v1/namespaces/num-out/segments?embedding=base64")
    eq(page["segments"][0]["embedding"], enc["embedding"], "listing, base64")
    _, _, page = srv.get("/v1/namespaces/num-out/segments?embedding=true")
    eq(page["segments"][0]["embedding"], arr["embedding"], "listing, array")
    expect_error(srv.get("/v1/namespaces/num-out/segments?embedding=yes"), 400, "invalid_field")
    # no embedding unless asked; a bad value is refused
    _, _, plain = srv.get("/v1/namespaces/num-out/segments/a")
    check("embedding" not in plain, "no embedding by default")
    expect_error(srv.get("/v1/namespaces/num-out/segments/a?embedding=b64"), 400, "invalid_field")


@test
def test_malformed_base64_refused():
    srv = S()
    expect_ok(srv.insert("num-bad", {"id": "x", "embedding": [1.0] * DIM}), 201)
    good = b64([0.5] * DIM)
    check("/" in good, "the test string uses '/'")
    cases = [good[:-1], good + "A", good[:8] + "*" + good[9:], good[:8] + " " + good[9:],
             good[:-4] + "AA==", good.replace("/", "_"), "",
             base64.b64encode(b"\x00" * (4 * DIM - 1)).decode(),
             base64.b64encode(b"\x00" * 6).decode(), b64([float("nan")] + [1.0] * (DIM - 1)),
             b64([float("inf")] + [1.0] * (DIM - 1)), b64([0.0] * DIM)]
    for bad in cases:
        r = srv.insert("num-bad", {"embedding": bad})
        expect_error(r, 400, "invalid_field", "insert %r" % bad[:30])
        eq(r[2]["error"].get("field"), "embedding", "field named")
    r = srv.insert("num-bad", {"segments": [{"embedding": good}, {"embedding": good[:-2]}]})
    expect_error(r, 400, "invalid_field")
    eq(r[2]["error"].get("field"), "segments[1].embedding", "batch field named")
    r = srv.insert("num-bad", {"embedding": b64([0.5] * (DIM - 1))})
    expect_error(r, 400, "dimension_mismatch")
    r = srv.retrieve("num-bad", {"embedding": good + "="})
    expect_error(r, 400, "invalid_field")
    eq(r[2]["error"].get("field"), "embedding")
    r = srv.compact("num-bad", {"target": 1, "dry_run": True, "context": [good, "!!!!"]})
    expect_error(r, 400, "invalid_field")
    eq(r[2]["error"].get("field"), "context[1]")
    expect_ok(srv.compact("num-bad", {"target": 1, "dry_run": True, "context": [good]}))
    # nothing was written by any refused request
    _, _, st = srv.ns_stats("num-bad")
    eq(st["count"], 1, "only the first segment is stored")


@test
def test_mcp_base64_embeddings():
    srv = S()
    hdrs = {"Accept": "application/json, text/event-stream"}

    def tool(name, args, rid):
        st, _, body = srv.call("POST", "/mcp", {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                                "params": {"name": name, "arguments": args}},
                               headers=hdrs)
        eq(st, 200)
        return body["result"]

    v = [h.f32(x) for x in vecs(3, 1)[0]]
    res = tool("memory_insert", {"namespace": "num-mcp", "id": "m", "text": "x",
                                 "embedding": b64(v)}, 1)
    check(not res["isError"], "insert with base64: %s" % res)
    res = tool("memory_retrieve", {"namespace": "num-mcp", "embedding": b64(v), "k": 1}, 2)
    check(not res["isError"], "retrieve with base64")
    eq(res["structuredContent"]["results"][0]["id"], "m")
    h.near(res["structuredContent"]["results"][0]["score"], 1.0, 1e-6)
    res = tool("memory_retrieve", {"namespace": "num-mcp", "embedding": v, "k": 1}, 3)
    h.near(res["structuredContent"]["results"][0]["score"], 1.0, 1e-6)
    res = tool("memory_insert", {"namespace": "num-mcp", "text": "y", "embedding": "AAA"}, 4)
    check(res["isError"], "malformed base64 is a tool error")
    eq(res["structuredContent"]["error"]["code"], "invalid_field")
    eq(res["structuredContent"]["error"]["field"], "embedding")


@test
def test_numbers_written_shortest():
    """Scores and explain parts are doubles written once as their shortest decimal."""
    srv = S()
    rng = random.Random(9)
    ts = h.now_ms() - 86400 * 1000
    segs = [{"embedding": h.rand_vec(rng, DIM), "timestamp": h.rfc3339_ms(ts + i * 60000)}
            for i in range(50)]
    expect_ok(srv.insert("num-fmt", {"segments": segs}), 201)
    st, raw = text_call(srv, "POST", "/v1/namespaces/num-fmt/retrieve",
                        {"embedding": h.rand_vec(rng, DIM), "k": 20, "half_life": "5h",
                         "explain": True})
    eq(st, 200)
    body = json.loads(raw)
    text = raw.decode()
    for r in body["results"]:
        for key in ("score", "decay", "gate", "age_seconds", "similarity"):
            x = r[key]
            if isinstance(x, float) and 1e-4 <= abs(x) < 1e15:
                # Python's repr is the shortest round-trip decimal, in the same form here
                check('"%s":%s' % (key, repr(x)) in text,
                      "%s=%r not written as its shortest form" % (key, x))
        # similarity is a float32: its decimal has at most 9 significant digits
        sim = repr(r["similarity"]).lstrip("-0.").replace(".", "").split("e")[0]
        check(len(sim) <= 9, "similarity %r has float32 precision" % r["similarity"])


@test
def test_float32_rounding_of_inputs():
    """Each decimal becomes the float32 nearest to it (ties to even), not the float32
    nearest to the double nearest to it."""
    srv = S()
    # 1 + 2^-24 (halfway between 1 and the next float32) plus a hair: the float32 is
    # 1 + 2^-23; rounding through a double would lose the hair and give 1.0.
    trap = "1.0000000596046447755"
    body = ('{"id":"t","embedding":[%s,0,0,0,0,0,0,0]}' % trap).encode()
    expect_ok(srv.insert("num-round", body), 201)
    _, _, seg = srv.get("/v1/namespaces/num-round/segments/t?embedding=base64")
    eq(unb64(seg["embedding"])[0], 1.0, "a one-hot vector normalises to 1")
    body = ('{"id":"u","embedding":[%s,%s,0,0,0,0,0,0]}' % (trap, "1")).encode()
    expect_ok(srv.insert("num-round", body), 201)
    _, _, seg = srv.get("/v1/namespaces/num-round/segments/u?embedding=base64")
    a = 1.0 + 2 ** -23
    n = math.sqrt(a * a + 1.0)
    eq(unb64(seg["embedding"])[:2], [h.f32(a / n), h.f32(1.0 / n)], "normalised from 1+2^-23")
    # numbers beyond float32 are refused, those that round into it are not
    expect_error(srv.insert("num-round", b'{"embedding":[3.5e38,1,0,0,0,0,0,0]}'), 400,
                 "invalid_field")
    expect_ok(srv.insert("num-round", b'{"embedding":[3.4028235e38,0,0,0,0,0,0,1]}'), 201)
    expect_error(srv.insert("num-round", b'{"embedding":[1e400,1,0,0,0,0,0,0]}'), 400,
                 "invalid_json")
    expect_error(srv.insert("num-round", b'{"embedding":[NaN,1,0,0,0,0,0,0]}'), 400,
                 "invalid_json")


def export_raw(srv, ns, query=""):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    try:
        c.request("GET", "/v1/namespaces/%s/export%s" % (ns, query))
        r = c.getresponse()
        data = r.read()
        h.check_schema("GET", "/v1/namespaces/%s/export" % ns, r.status,
                       r.getheader("Content-Type"), data)
        return r.status, data
    finally:
        c.close()


@test
def test_export_import_base64():
    """An export with ?embedding=base64 carries the same vectors, bit for bit, and imports
    into an empty namespace as the same segments with the same answers."""
    srv = S()
    vs = vecs(4, 30)
    ts = h.now_ms() - 7200 * 1000
    segs = [{"id": "e%d" % i, "embedding": v, "text": "t%d" % i,
             "timestamp": h.rfc3339_ms(ts + i * 1000)} for i, v in enumerate(vs)]
    expect_ok(srv.insert("num-exp", {"segments": segs}), 201)
    st, arr = export_raw(srv, "num-exp")
    eq(st, 200)
    st, enc = export_raw(srv, "num-exp", "?embedding=base64")
    eq(st, 200)
    a = [json.loads(x) for x in arr.splitlines()]
    b = [json.loads(x) for x in enc.splitlines()]
    eq(len(b), 30, "one line per segment")
    for x, y in zip(a, b):
        check(isinstance(y["embedding"], str), "base64 line")
        eq(unb64(y["embedding"]), [h.f32(z) for z in x["embedding"]], "same vector")
        eq({k: v for k, v in x.items() if k != "embedding"},
           {k: v for k, v in y.items() if k != "embedding"}, "same line otherwise")
    check(len(enc) < len(arr), "base64 lines are shorter")
    st, _, body = srv.call("POST", "/v1/namespaces/num-imp/import", enc,
                           headers={"Content-Type": "application/x-ndjson"})
    eq(st, 201, "import of a base64 export: %s" % body)
    eq(body.get("imported"), 30)
    st, enc2 = export_raw(srv, "num-imp", "?embedding=base64")
    eq(enc2, enc, "re-export of the import is identical")
    q = vs[3]
    origin = h.rfc3339_ms(ts + 3600 * 1000)
    ans = [srv.retrieve(ns, {"embedding": q, "k": 5, "half_life": "1h", "origin": origin})[2]
           ["results"] for ns in ("num-exp", "num-imp")]
    eq([(r["id"], r["score"]) for r in ans[1]], [(r["id"], r["score"]) for r in ans[0]],
       "same answers")
    # the export refuses to leave the vectors out; a bad value is refused
    expect_error(srv.get("/v1/namespaces/num-exp/export?embedding=false"), 400, "invalid_field")
    expect_error(srv.get("/v1/namespaces/num-exp/export?embedding=b64"), 400, "invalid_field")
    # an import line with a malformed base64 embedding names its line and field
    bad = enc.splitlines()[0].decode().replace('"embedding":"', '"embedding":"!')
    st, _, body = srv.call("POST", "/v1/namespaces/num-imp2/import",
                           (bad + "\n").encode(),
                           headers={"Content-Type": "application/x-ndjson"})
    eq(st, 400, "bad base64 line: %s" % body)
    eq(body["error"]["code"], "invalid_field")
    eq(body["error"].get("line"), 1)
    # import lines are parsed like request bodies: each number rounded once to float32
    line = '{"id":"t","embedding":[1.0000000596046447755,1,0,0,0,0,0,0]}\n'
    expect_ok(srv.call("POST", "/v1/namespaces/num-imp3/import", line.encode(),
                       headers={"Content-Type": "application/x-ndjson"}), 201)
    _, _, seg = srv.get("/v1/namespaces/num-imp3/segments/t?embedding=base64")
    a1 = 1.0 + 2 ** -23
    n = math.sqrt(a1 * a1 + 1.0)
    eq(unb64(seg["embedding"])[:2], [h.f32(a1 / n), h.f32(1.0 / n)], "import rounds once")


if __name__ == "__main__":
    h.main()
