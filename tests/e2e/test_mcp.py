"""test_mcp.py - a scripted MCP (JSON-RPC 2.0 over streamable HTTP) session on POST /mcp,
SPEC section 8."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, expect_ok  # noqa: E402
import schema  # noqa: E402

ACCEPT = "application/json, text/event-stream"
TOOLS = {"memory_insert", "memory_retrieve", "memory_list", "memory_compact", "memory_forget"}
_tool_schemas = {}


class Session:
    def __init__(self, srv):
        self.srv = srv
        self.sid = None
        self.next_id = 1

    def post(self, msg):
        hdrs = {"Accept": ACCEPT, "MCP-Protocol-Version": "2025-06-18"}
        if self.sid:
            hdrs["Mcp-Session-Id"] = self.sid
        return self.srv.call("POST", "/mcp", msg, headers=hdrs)

    def rpc(self, method, params=None, status=200):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.next_id += 1
        st, hdr, body = self.post(msg)
        eq(st, status, "%s: HTTP status (body %s)" % (method, body))
        check(hdr.get("content-type", "").startswith("application/json"),
              "%s: response content-type %r" % (method, hdr.get("content-type")))
        check(isinstance(body, dict), "%s: JSON object body" % method)
        eq(body.get("jsonrpc"), "2.0", "%s: jsonrpc" % method)
        eq(body.get("id"), msg["id"], "%s: id echoed" % method)
        check(("result" in body) != ("error" in body), "%s: exactly one of result/error" % method)
        return body, hdr

    def initialize(self, version="2025-06-18"):
        body, hdr = self.rpc("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "mnemod-e2e", "version": "1.0"}})
        if hdr.get("mcp-session-id"):
            self.sid = hdr["mcp-session-id"]
        return body

    def call_tool(self, name, args):
        body, _ = self.rpc("tools/call", {"name": name, "arguments": args})
        check("result" in body, "tools/call %s: result (got %s)" % (name, body))
        res = body["result"]
        # every structured result conforms to the tool's outputSchema (its success or error form)
        if not _tool_schemas:
            lst, _ = self.rpc("tools/list", {})
            _tool_schemas.update({t["name"]: t for t in lst["result"]["tools"]})
        if name in _tool_schemas and "structuredContent" in res:
            try:
                schema.api().validate(_tool_schemas[name]["outputSchema"], res["structuredContent"])
            except schema.SchemaError as e:
                raise h.Failure("%s: structuredContent does not match its outputSchema: %s" % (name, e))
        return res


def tool_json(result, what):
    """The tool result carries the REST JSON as text content and as structuredContent."""
    check(isinstance(result.get("content"), list) and result["content"], "%s: content list" % what)
    c = result["content"][0]
    eq(c.get("type"), "text", "%s: content type" % what)
    parsed = json.loads(c["text"])
    eq(result.get("structuredContent"), parsed, "%s: structuredContent equals the text content" % what)
    return parsed


def S():
    return h.shared()


@test
def test_mcp_initialize_and_notifications():
    srv = S()
    s = Session(srv)
    body = s.initialize("2025-06-18")
    res = body["result"]
    eq(res.get("protocolVersion"), "2025-06-18", "protocolVersion echoed")
    check(isinstance(res.get("serverInfo"), dict) and res["serverInfo"].get("name"), "serverInfo.name")
    check(isinstance(res.get("capabilities"), dict) and "tools" in res["capabilities"], "capabilities.tools")
    st, _, _ = s.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    eq(st, 202, "a notification is 202 Accepted")
    # 2025-03-26 is supported too
    res = Session(srv).initialize("2025-03-26")["result"]
    eq(res.get("protocolVersion"), "2025-03-26", "2025-03-26 echoed")
    # an unsupported (older) version gets the newest supported one
    res = Session(srv).initialize("2024-11-05")["result"]
    v = res.get("protocolVersion")
    check(isinstance(v, str) and v >= "2025-06-18", "unsupported version answered with the newest: %r" % v)


@test
def test_mcp_tools_list():
    s = Session(S())
    s.initialize()
    body, _ = s.rpc("tools/list", {})
    tools = body["result"].get("tools")
    check(isinstance(tools, list), "tools list")
    by = {t.get("name"): t for t in tools}
    eq(set(by), TOOLS, "the five tools")
    api = schema.api()
    ops = {"memory_insert": ("SegmentIn", "Inserted"), "memory_retrieve": ("RetrieveRequest", "RetrieveResponse"),
           "memory_list": (None, "SegmentList"), "memory_compact": ("CompactRequest", "CompactResponse"),
           "memory_forget": (None, "Deleted")}

    def resolved(name):
        return _resolve(api, {"$ref": "#/components/schemas/%s" % name})

    for name, (inp, out) in ops.items():
        t = by[name]
        osch = t.get("outputSchema")
        eq(osch.get("type"), "object", "%s: outputSchema object" % name)
        eq(osch.get("anyOf"), [resolved(out), resolved("Error")],
           "%s: outputSchema is api/openapi.json's answer or error" % name)
        if inp:
            want = resolved(inp)
            want["properties"].pop("min_seq", None)
            want.pop("examples", None)
            got = dict(t["inputSchema"], properties=dict(t["inputSchema"]["properties"]))
            got["properties"].pop("namespace")
            eq(got, want, "%s: inputSchema is api/openapi.json's request body + namespace" % name)
        ann = t.get("annotations", {})
        eq(ann.get("readOnlyHint"), name in ("memory_retrieve", "memory_list"), "%s readOnlyHint" % name)
        eq(ann.get("destructiveHint"), name in ("memory_forget", "memory_compact"), "%s destructiveHint" % name)
    for p in ("filter", "match"):
        check(p in by["memory_retrieve"]["inputSchema"]["properties"], "memory_retrieve takes %s" % p)
    for p in ("limit", "after", "since", "until", "source", "include_archived"):
        check(p in by["memory_list"]["inputSchema"]["properties"], "memory_list takes %s" % p)
    for name, t in by.items():
        check(isinstance(t.get("description"), str) and t["description"], "%s: description" % name)
        sch = t.get("inputSchema")
        check(isinstance(sch, dict) and sch.get("type") == "object", "%s: inputSchema object" % name)
        check(isinstance(sch.get("properties"), dict), "%s: inputSchema.properties" % name)
        check("namespace" in sch["properties"], "%s: namespace property" % name)
    props = by["memory_retrieve"]["inputSchema"]["properties"]
    for p in ("query", "embedding", "k", "half_life", "recency_bias", "decay", "origin", "coherence_weight",
              "since", "until"):
        check(p in props, "memory_retrieve exposes %s" % p)
    for p in ("text", "embedding", "timestamp", "source", "metadata", "supersedes"):
        check(p in by["memory_insert"]["inputSchema"]["properties"], "memory_insert exposes %s" % p)
    for p in ("target", "ratio", "policy", "dry_run"):
        check(p in by["memory_compact"]["inputSchema"]["properties"], "memory_compact exposes %s" % p)
    check("id" in by["memory_forget"]["inputSchema"]["properties"], "memory_forget exposes id")


def _resolve(api, node):
    if isinstance(node, dict):
        if "$ref" in node:
            out = _resolve(api, api.resolve({"$ref": node["$ref"]}))
            out.update({k: _resolve(api, v) for k, v in node.items() if k != "$ref"})
            return out
        return {k: _resolve(api, v) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(api, v) for v in node]
    return node


@test
def test_mcp_list_and_filter():
    s = Session(S())
    s.initialize()
    ns = "mcplist"
    for i in range(5):
        res = s.call_tool("memory_insert", {"namespace": ns, "id": "l%d" % i, "text": "note number %d" % i,
                                            "metadata": {"user": "ana" if i < 2 else "bob"}})
        check(not res.get("isError"), "insert %d: %s" % (i, res))
    page = s.call_tool("memory_list", {"namespace": ns, "limit": 3})
    data = tool_json(page, "memory_list")
    eq([x["id"] for x in data["segments"]], ["l0", "l1", "l2"], "first page")
    nxt = s.call_tool("memory_list", {"namespace": ns, "after": data["next"], "limit": 3})
    eq([x["id"] for x in tool_json(nxt, "next page")["segments"]], ["l3", "l4"], "second page")
    r = s.call_tool("memory_retrieve", {"namespace": ns, "query": "note number", "k": 10,
                                        "filter": {"user": "ana"}})
    eq(sorted(x["id"] for x in tool_json(r, "filtered")["results"]), ["l0", "l1"], "filter")
    bad = s.call_tool("memory_list", {"namespace": ns, "limit": 0})
    check(bad.get("isError"), "a bad limit is a tool error")
    bad = s.call_tool("memory_list", {"namespace": ns, "bogus": 1})
    check(bad.get("isError"), "an unknown argument is a tool error")
    # a source as long as the REST listing takes (256 bytes), with a space and a '+'
    long = s.call_tool("memory_list", {"namespace": ns, "source": "a b+" + "x" * 252})
    check(not long.get("isError"), "a 256-byte source: %r" % long)
    bad = s.call_tool("memory_list", {"namespace": ns, "source": "x" * 257})
    check(bad.get("isError"), "a 257-byte source is a tool error")
    bad = s.call_tool("memory_list", {"namespace": ns, "since": "nan"})
    check(bad.get("isError"), "since NaN is a tool error")
    eq(bad["structuredContent"]["error"]["code"], "invalid_field", "since NaN: its code (not 503)")
    bad = s.call_tool("memory_retrieve", {"namespace": ns, "query": "x", "filter": {"u": {"$bad": 1}}})
    check(bad.get("isError"), "a bad filter is a tool error")


@test
def test_mcp_insert_retrieve_compact_forget():
    srv = S()
    s = Session(srv)
    s.initialize()
    s.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    ns = "mcp_ns"
    ids = []
    for text in ("the wifi password is hunter2", "the build server is ci-7", "bob likes green tea"):
        r = s.call_tool("memory_insert", {"namespace": ns, "text": text, "source": "mcp"})
        check(not r.get("isError"), "insert is not an error: %s" % r)
        data = tool_json(r, "memory_insert")
        check(isinstance(data.get("inserted"), list) and len(data["inserted"]) == 1, "inserted record")
        ids.append(data["inserted"][0]["id"])
    # the REST side sees them
    st = expect_ok(srv.ns_stats(ns))
    eq(st["count"], 3, "REST count after MCP inserts")
    r = s.call_tool("memory_retrieve", {"namespace": ns, "query": "what is the wifi password", "k": 2,
                                        "half_life": "30d", "recency_bias": 1, "decay": "gaussian"})
    check(not r.get("isError"), "retrieve is not an error: %s" % r)
    data = tool_json(r, "memory_retrieve")
    eq(data.get("namespace"), ns, "namespace")
    check(data["results"] and data["results"][0]["id"] == ids[0], "retrieve finds the inserted memory: %s" % data)
    eq(data["results"][0].get("text"), "the wifi password is hunter2", "text")
    # by embedding, with explain-free REST-shaped results
    vec = expect_ok(srv.seg(ns, ids[1], embedding=True))["embedding"]
    r = s.call_tool("memory_retrieve", {"namespace": ns, "embedding": vec, "k": 1})
    eq(tool_json(r, "retrieve by embedding")["results"][0]["id"], ids[1], "retrieve by embedding")
    # the same JSON as the REST answer (modulo timing)
    rest = expect_ok(srv.retrieve(ns, {"query": "what is the wifi password", "k": 2, "half_life": "30d",
                                       "recency_bias": 1, "decay": "gaussian"}))
    eq([x["id"] for x in data["results"]], [x["id"] for x in rest["results"]], "MCP and REST agree")
    # compact dry run
    r = s.call_tool("memory_compact", {"namespace": ns, "target": 2, "dry_run": True})
    check(not r.get("isError"), "compact is not an error: %s" % r)
    data = tool_json(r, "memory_compact")
    eq((data.get("before"), data.get("after"), len(data.get("evicted", []))), (3, 2, 1), "compact dry run")
    eq(expect_ok(srv.ns_stats(ns))["archived"], 0, "dry run archived nothing")
    # forget
    r = s.call_tool("memory_forget", {"namespace": ns, "id": ids[0]})
    check(not r.get("isError"), "forget is not an error: %s" % r)
    h.expect_error(srv.seg(ns, ids[0]), 404, "not_found", "forgotten segment")
    r = s.call_tool("memory_retrieve", {"namespace": ns, "query": "wifi password", "k": 10})
    check(all(x["id"] != ids[0] for x in tool_json(r, "retrieve")["results"]), "forgotten is not retrieved")


@test
def test_mcp_tool_arguments_are_honoured():
    """Every documented tool argument reaches the REST semantics."""
    srv = S()
    s = Session(srv)
    s.initialize()
    ns = "mcp_args"
    t = h.now_ms() - 10 * 86400000
    r = s.call_tool("memory_insert", {"namespace": ns, "text": "first", "embedding": [1, 0, 0],
                                      "timestamp": h.rfc3339_ms(t), "source": "agent-a", "metadata": {"n": 1}})
    check(not r.get("isError"), "insert with every field: %s" % r)
    first = tool_json(r, "insert")["inserted"][0]
    eq(first["timestamp"], h.rfc3339_ms(t), "timestamp honoured")
    r = s.call_tool("memory_insert", {"namespace": ns, "text": "second", "embedding": [1, 0.1, 0],
                                      "timestamp": h.rfc3339_ms(t + 86400000), "supersedes": [first["id"]]})
    check(not r.get("isError"), "insert with supersedes: %s" % r)
    g = expect_ok(srv.seg(ns, first["id"]))
    eq((g.get("source"), g.get("metadata")), ("agent-a", {"n": 1}), "source and metadata")
    check(g.get("superseded_by"), "supersedes honoured")
    for i in range(5):
        s.call_tool("memory_insert", {"namespace": ns, "text": "m%d" % i, "embedding": [1, i, 1],
                                      "timestamp": h.rfc3339_ms(t + (2 + i) * 86400000)})
    args = {"embedding": [1, 0.5, 0.5], "k": 4, "half_life": "2d", "recency_bias": 0.8, "decay": "gaussian",
            "origin": h.rfc3339_ms(t + 3 * 86400000), "coherence_weight": 0.3,
            "since": h.rfc3339_ms(t + 86400000), "until": h.rfc3339_ms(t + 5 * 86400000)}
    r = s.call_tool("memory_retrieve", dict(args, namespace=ns))
    check(not r.get("isError"), "retrieve with every argument: %s" % r)
    got = tool_json(r, "retrieve")["results"]
    rest = expect_ok(srv.retrieve(ns, args))["results"]
    eq([(x["id"], x["seq"]) for x in got], [(x["id"], x["seq"]) for x in rest], "MCP == REST with every argument")
    for a, b in zip(got, rest):
        h.near(a["score"], b["score"], 1e-12, "same score")
    r = s.call_tool("memory_compact", {"namespace": ns, "ratio": 0.5, "policy": "coherence_weighted",
                                       "dry_run": True})
    eq(tool_json(r, "compact").get("policy"), "coherence_weighted", "policy honoured")


@test
def test_mcp_default_namespace():
    srv = S()
    s = Session(srv)
    s.initialize()
    r = s.call_tool("memory_insert", {"text": "stored without a namespace"})
    check(not r.get("isError"), "insert without namespace: %s" % r)
    sid = tool_json(r, "insert")["inserted"][0]["id"]
    g = expect_ok(srv.seg("default", sid), 200, "the default namespace is 'default'")
    eq(g.get("text"), "stored without a namespace", "text")


@test
def test_mcp_invalid_input_is_tool_error():
    srv = S()
    s = Session(srv)
    s.initialize()
    ns = "mcp_err"
    s.call_tool("memory_insert", {"namespace": ns, "text": "something to find"})
    for args, rest_path, rest_body in [
        ({"namespace": ns, "query": "x", "k": 0}, "/v1/namespaces/%s/retrieve" % ns, {"query": "x", "k": 0}),
        ({"namespace": ns, "query": "x", "decay": "cubic"}, "/v1/namespaces/%s/retrieve" % ns,
         {"query": "x", "decay": "cubic"}),
        ({"namespace": ns, "query": "x", "half_life": "9x"}, "/v1/namespaces/%s/retrieve" % ns,
         {"query": "x", "half_life": "9x"}),
        ({"namespace": "mcp_nowhere", "query": "x"}, "/v1/namespaces/mcp_nowhere/retrieve", {"query": "x"}),
    ]:
        r = s.call_tool("memory_retrieve", args)
        eq(r.get("isError"), True, "isError for %s" % args)
        text = r["content"][0]["text"]
        st, _, rest = srv.post(rest_path, rest_body)
        check(400 <= st < 500, "REST rejects it too")
        msg = rest["error"]["message"]
        try:    # the REST error body as text, or a plain sentence containing the message
            carried = json.loads(text)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            carried = text
        check(msg == carried or msg in carried, "the tool error carries the REST message %r: %r" % (msg, text))
    r = s.call_tool("memory_insert", {"namespace": ns, "text": "x", "embedding": "nope"})
    eq(r.get("isError"), True, "bad insert input")
    r = s.call_tool("memory_forget", {"namespace": ns, "id": "ghost"})
    eq(r.get("isError"), True, "forget unknown id")
    r = s.call_tool("memory_compact", {"namespace": ns, "ratio": 7})
    eq(r.get("isError"), True, "compact bad ratio")
    eq(expect_ok(srv.ns_stats(ns))["count"], 1, "nothing written by the bad calls")


@test
def test_mcp_protocol_errors():
    srv = S()
    s = Session(srv)
    s.initialize()
    body, _ = s.rpc("no/such/method", {})
    eq(body.get("error", {}).get("code"), -32601, "unknown method")
    body, _ = s.rpc("tools/call", {"name": "memory_teleport", "arguments": {}})
    check(("error" in body) or body.get("result", {}).get("isError") is True, "unknown tool is an error")
    st, _, _ = srv.get("/mcp", headers={"Accept": "text/event-stream"})
    eq(st, 405, "GET /mcp")
    st, _, body = srv.post("/mcp", b"{not json", headers={"Accept": ACCEPT})
    check(st in (200, 400), "malformed JSON-RPC status %r" % st)
    check(isinstance(body, dict) and body.get("error", {}).get("code") == -32700, "parse error -32700: %s" % body)
    # an MCP-Protocol-Version header names a version this server speaks, or it is a 400
    # (the transport's rule); without the header a request is served as before
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    for bad in ("1999-01-01", "2025-06-18x", "latest"):
        st, _, body = srv.post("/mcp", ping, headers={"Accept": ACCEPT,
                                                      "MCP-Protocol-Version": bad})
        h.expect_error((st, None, body), 400, "invalid_field", "MCP-Protocol-Version %s" % bad)
        check(bad in body["error"]["message"], "the 400 names the version: %s" % body)
    for good in ("2025-11-25", "2025-06-18", "2025-03-26", None):
        st, _, body = srv.post("/mcp", ping, headers={"Accept": ACCEPT,
                                                      "MCP-Protocol-Version": good})
        eq((st, body.get("result")), (200, {}), "ping with MCP-Protocol-Version %s" % good)
    # initialize is where the version is negotiated: a newer client's header (one this server
    # does not speak yet) gets the newest supported version in the answer, not a 400
    init = {"jsonrpc": "2.0", "id": 10, "method": "initialize",
            "params": {"protocolVersion": "2099-01-01", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    for hdr in ("2099-01-01", "2025-06-18"):
        st, _, body = srv.post("/mcp", init, headers={"Accept": ACCEPT,
                                                      "MCP-Protocol-Version": hdr})
        eq((st, body.get("result", {}).get("protocolVersion")), (200, "2025-11-25"),
           "initialize with MCP-Protocol-Version %s: %s" % (hdr, body))
    # a session, when the server uses them, ends with DELETE /mcp
    if s.sid:
        st, _, _ = srv.call("DELETE", "/mcp", headers={"Mcp-Session-Id": s.sid})
        check(st in (200, 202, 204), "DELETE /mcp ends the session: %r" % st)
    # the server still serves REST after all this
    eq(srv.get("/healthz")[0], 200, "healthz")


@test
def test_mcp_jsonrpc_details():
    srv = S()
    s = Session(srv)
    s.initialize()
    # ping: an empty result (MCP base protocol)
    body, _ = s.rpc("ping")
    eq(body.get("result"), {}, "ping answers {}")
    # string ids are echoed as strings
    st, _, body = s.post({"jsonrpc": "2.0", "id": "abc-1", "method": "tools/list"})
    eq((st, body.get("id")), (200, "abc-1"), "string id echoed")
    # a client response (to a server request) is accepted like a notification
    st, _, _ = s.post({"jsonrpc": "2.0", "id": 99, "result": {}})
    eq(st, 202, "a JSON-RPC response from the client is 202")
    # not JSON-RPC 2.0: Invalid Request
    st, _, body = s.post({"id": 7, "method": "tools/list"})
    check(st in (200, 400), "missing jsonrpc: status %r" % st)
    eq(body.get("error", {}).get("code"), -32600, "missing jsonrpc is -32600: %s" % body)
    # tools/call with arguments that are not an object: invalid params or a tool error
    body, _ = s.rpc("tools/call", {"name": "memory_retrieve", "arguments": [1, 2]})
    check(body.get("error", {}).get("code") == -32602 or body.get("result", {}).get("isError") is True,
          "non-object arguments: %s" % body)


if __name__ == "__main__":
    h.main()
