"""test_openapi.py - api/openapi.json, the routes the server answers and the docs agree.

- GET /openapi.json serves exactly api/openapi.json, without a key;
- the document is well formed for our purposes: unique operationIds, every operation
  summarised with documented answers, every example valid against its schema, every wire
  error code of core/err.h listed, and tests/e2e/schema.py's validator rejects what it must;
- every documented path + method, called with a valid request on existing resources,
  answers one of the statuses documented for it (a 2xx when a 2xx is documented); the
  harness checks every answer of every e2e suite against the document (harness.py
  check_schema), this one included;
- every other method on a documented path answers 405 method_not_allowed, with an Allow
  header naming exactly the documented methods; paths next to the documented ones answer
  404 not_found for every method;
- the API tables of docs/api.md and README.md list exactly the documented operations.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
import schema  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# OPTIONS is not probed: every route answers it (204 with Allow; a CORS preflight from an
# allowed origin), as docs/operations.md says; test_edge covers it.
PROBE = ("GET", "PUT", "POST", "DELETE", "PATCH", "HEAD")
DIM = 4


def doc():
    return schema.api().doc


def operations(include_cluster=False):
    """[(template, METHOD, operation)] of the document."""
    out = []
    for t, item in sorted(doc()["paths"].items()):
        for m, op in item.items():
            if m in METHODS and (include_cluster or not op.get("x-mnemod-cluster-only")):
                out.append((t, m.upper(), op))
    return out


def documented_paths():
    return {t for t, _, _ in operations()}


def methods_of(template):
    return {m for t, m, _ in operations() if t == template}


_n = [0]


def fresh(srv):
    """A new namespace holding segments s1 and s2: (ns, id)."""
    _n[0] += 1
    ns = "oa%d" % _n[0]
    h.expect_ok(srv.put("/v1/namespaces/%s" % ns, {"dim": DIM}), 201, "create %s" % ns)
    h.expect_ok(srv.insert(ns, {"id": "s1", "text": "one", "embedding": [1.0, 0, 0, 0],
                                "metadata": {"k": 1}}), 201)
    h.expect_ok(srv.insert(ns, {"id": "s2", "text": "two", "embedding": [0, 1.0, 0, 0]}), 201)
    return ns, "s1"


def concrete(srv, template):
    ns, sid = fresh(srv)
    return template.replace("{ns}", ns).replace("{id}", sid)


def body_for(template, method):
    """A valid request body for a documented operation (None: no body)."""
    if method == "PUT" and template.endswith("{ns}"):
        return {"dim": DIM}
    if method == "PATCH":
        return {"metadata": {"k": 2}}
    if method != "POST":
        return None
    if template.endswith("/segments"):
        return {"id": "new1", "text": "new", "embedding": [0, 0, 1.0, 0]}
    if template.endswith("/retrieve"):
        return {"embedding": [1.0, 0, 0, 0], "k": 2}
    if template.endswith("/compact"):
        return {"target": 1}
    if template.endswith("/import"):
        return None
    if template == "/mcp":
        return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test_openapi", "version": "0"}}}
    return {}


def call(srv, method, path, body=None, template=""):
    hdrs = {"Accept": "application/json, text/event-stream"}
    if template.endswith("/import") and method == "POST":
        line = json.dumps({"id": "imp1", "embedding": [0, 0, 0, 1.0]}).encode() + b"\n"
        hdrs["Content-Type"] = "application/x-ndjson"
        return srv.call(method, path, line, headers=hdrs)
    if body is None and method in ("POST", "PUT", "PATCH"):
        return srv.call(method, path, b"{}", headers=hdrs)
    return srv.call(method, path, body, headers=hdrs)


@h.test
def test_served_document_is_the_file_and_needs_no_key():
    keyfile = os.path.join(h.tempfile.mkdtemp(prefix="mnemod-oa-"), "key")
    with open(keyfile, "w") as f:
        f.write("s3cret\n")
    srv = h.Server(["--api-key-file", keyfile]).start()
    try:
        st, hdr, body = srv.get("/openapi.json")
        h.eq(st, 200, "GET /openapi.json without a key")
        h.check(hdr.get("content-type", "").startswith("application/json"), "content type")
        with open(schema.DOC_PATH, encoding="utf-8") as f:
            h.eq(body, json.load(f), "served document")
        h.expect_error(srv.get("/v1/namespaces"), 401, "unauthorized", "a /v1 call still needs it")
        h.expect_error(srv.post("/openapi.json", {}), 405, "method_not_allowed")
    finally:
        srv.stop()
        srv.cleanup()


@h.test
def test_document_shape():
    d = doc()
    h.eq(d["openapi"], "3.1.0", "openapi version")
    ids = [op.get("operationId") for _, _, op in operations(include_cluster=True)]
    h.check(all(ids), "every operation has an operationId")
    h.eq(len(ids), len(set(ids)), "operationIds are unique")
    for t, m, op in operations(include_cluster=True):
        what = "%s %s" % (m, t)
        h.check(op.get("summary"), "%s has a summary" % what)
        codes = set(op.get("responses", {}))
        h.check(any(c.startswith("2") for c in codes), "%s documents a success" % what)
        h.check(any(c.startswith("4") for c in codes) or t == "/healthz",
                "%s documents its client errors" % what)
        for c in codes:
            h.check(re.fullmatch(r"[1-5][0-9][0-9]", c), "%s: response key %r" % (what, c))
        rb = op.get("requestBody")
        if rb:
            for mt, media in rb["content"].items():
                h.check("example" in media or "examples" in media,
                        "%s: request %s has an example" % (what, mt))
    for p in ("/healthz", "/metrics", "/openapi.json", "/v1/namespaces", "/v1/namespaces/{ns}",
              "/v1/namespaces/{ns}/segments", "/v1/namespaces/{ns}/segments/{id}",
              "/v1/namespaces/{ns}/retrieve", "/v1/namespaces/{ns}/compact", "/mcp"):
        h.check(p in d["paths"], "%s is documented" % p)
    h.eq(methods_of("/v1/namespaces/{ns}"), {"GET", "PUT", "DELETE"}, "methods of {ns}")


def _examples(node, where="#"):
    """Yield (where, schema, example) for every example next to a schema in the document."""
    if isinstance(node, dict):
        if "schema" in node and "example" in node:
            yield where, node["schema"], node["example"]
        if "schema" in node and isinstance(node.get("examples"), dict):
            for k, ex in node["examples"].items():
                yield "%s/examples/%s" % (where, k), node["schema"], ex["value"]
        for k, v in node.items():
            if k in ("example", "examples"):
                continue
            yield from _examples(v, "%s/%s" % (where, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _examples(v, "%s/%d" % (where, i))


@h.test
def test_every_example_is_valid():
    api = schema.api()
    n = 0
    for where, sch, ex in _examples(doc()["paths"]):
        if where.endswith("/parameters") or "/parameters/" in where and "/content" not in where:
            continue
        try:
            api.validate(sch, ex)
        except schema.SchemaError as e:
            raise h.Failure("example at %s: %s" % (where, e))
        n += 1
    for name, sch in doc()["components"]["schemas"].items():
        for i, ex in enumerate(sch.get("examples", [])):
            try:
                api.validate(sch, ex)
            except schema.SchemaError as e:
                raise h.Failure("components/schemas/%s examples[%d]: %s" % (name, i, e))
            n += 1
    for name, r in doc()["components"]["responses"].items():
        for mt, media in r.get("content", {}).items():
            if "example" in media:
                api.validate(media["schema"], media["example"])
                n += 1
    for name, p in doc()["components"]["parameters"].items():
        if "example" in p:
            api.validate(p["schema"], p["example"])
            n += 1
    h.check(n >= 30, "only %d examples checked" % n)


@h.test
def test_error_codes_of_the_server_are_documented():
    with open(os.path.join(ROOT, "core", "err.h"), encoding="utf-8") as f:
        wire = set(re.findall(r'X\(E[A-Z]+, -\d+, \d+, "([a-z_]+)"\)', f.read()))
    h.check(len(wire) >= 10, "read the wire codes of core/err.h")
    enum = set(doc()["components"]["schemas"]["Error"]["properties"]["error"]["properties"]
               ["code"]["enum"])
    h.check(wire <= enum, "undocumented wire codes: %s" % sorted(wire - enum))


@h.test
def test_validator_rejects_what_it_must():
    api = schema.api()
    bad = [
        ({"type": "integer"}, True), ({"type": "integer"}, 1.5), ({"type": "string"}, None),
        ({"type": ["string", "null"]}, 3), ({"enum": ["a"]}, "b"), ({"const": "2.0"}, "2"),
        ({"required": ["a"]}, {}), ({"additionalProperties": False}, {"x": 1}),
        ({"properties": {"a": {"type": "string"}}}, {"a": 1}),
        ({"items": {"type": "number"}}, [1, "x"]), ({"minItems": 1}, []),
        ({"maxLength": 2}, "abc"), ({"pattern": "^a$"}, "b"), ({"minimum": 0}, -1),
        ({"exclusiveMinimum": 0}, 0), ({"maximum": 1}, 2),
        ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, 3),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 1),
        ({"format": "date-time"}, "yesterday"), ({"minProperties": 1}, {}),
        ({"$ref": "#/components/schemas/Error"}, {"error": {"code": "nope", "message": "x"}}),
    ]
    for sch, v in bad:
        try:
            api.validate(sch, v)
        except schema.SchemaError:
            continue
        raise h.Failure("validator accepted %r against %r" % (v, sch))
    for sch, v in (({"type": "integer"}, 2.0), ({"oneOf": [{"type": "string"}, {"type": "null"}]}, None),
                   ({"$ref": "#/components/schemas/Error"}, {"error": {"code": "not_found", "message": "x"}})):
        api.validate(sch, v)
    try:
        api.validate({"uniqueItems": True}, [1])
        raise h.Failure("an unsupported keyword must be reported")
    except schema.SchemaError:
        pass
    try:
        h.check_schema("GET", "/v1/namespaces", 200, "application/json", b'{"namespaces": 3}')
        raise h.Failure("the harness accepted a wrong answer")
    except h.Failure as e:
        h.check("does not match" in str(e), str(e))


@h.test
def test_every_documented_operation_is_served():
    srv = h.shared()
    for template, method, op in operations():
        codes = set(op["responses"])
        path = concrete(srv, template)
        st, hdr, body = call(srv, method, path, body_for(template, method), template)
        what = "%s %s (documented %s)" % (method, path, sorted(codes))
        h.check(str(st) in codes, "%s: answered %s %s" % (what, st, h._short(body)))
        h.check(200 <= st < 300, "%s: answered %s, want the documented success" % (what, st))


@h.test
def test_cluster_routes_are_404_on_a_single_node():
    srv = h.shared()
    for template, method, op in operations(include_cluster=True):
        if not op.get("x-mnemod-cluster-only"):
            continue
        h.expect_error(call(srv, method, template, body_for(template, method)), 404, "not_found",
                       "%s %s" % (method, template))


@h.test
def test_undocumented_methods_are_405_with_allow():
    srv = h.shared()
    for template in sorted(documented_paths()):
        path = concrete(srv, template)
        want_allow = methods_of(template)
        for method in PROBE:
            if method in want_allow:
                continue
            st, hdr, body = call(srv, method, path)
            what = "%s %s" % (method, path)
            h.eq(st, 405, what)
            if method != "HEAD":
                h.expect_error((st, hdr, body), 405, "method_not_allowed", what)
            got = {m.strip() for m in hdr.get("allow", "").split(",") if m.strip()}
            h.eq(got, want_allow, "%s: Allow header" % what)


@h.test
def test_undocumented_paths_are_404():
    srv = h.shared()
    ns, sid = fresh(srv)
    api = schema.api()
    candidates = {"/", "/v1", "/v2/namespaces", "/V1/namespaces", "/v1/namespace",
                  "/healthz/", "/healthz/x", "/metrics/", "/metrics/x", "/metrics.txt",
                  "/mcp/", "/mcp/x", "/openapi.yaml", "/openapi.json/x", "/openapi",
                  "/v1/namespaces/%s/segment" % ns, "/v1/namespaces/%s/unknown" % ns,
                  "/v1/namespaces/%s/segments/%s/x" % (ns, sid),
                  "/v1/namespaces/%s/retrieve/x" % ns, "//healthz", "/v1//namespaces"}
    for template in documented_paths():
        path = template.replace("{ns}", ns).replace("{id}", sid)
        parts = path.strip("/").split("/")
        candidates.add(path + "/extra")
        if len(parts) > 1:
            candidates.add("/" + "/".join(parts[:-1]))
        if not template.split("/")[-1].startswith("{"):
            candidates.add("/" + "/".join(parts[:-1] + [parts[-1] + "z"]))
    checked = 0
    for path in sorted(candidates):
        t = api.match_path(path)
        if t is not None and t in documented_paths():
            continue
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            st, hdr, body = call(srv, method, path)
            h.expect_error((st, hdr, body), 404, "not_found", "%s %s" % (method, path))
        checked += 1
    h.check(checked >= 20, "only %d undocumented paths checked" % checked)


def doc_table(path):
    """{(METHOD, template)} from the markdown table rows `| `METHOD /path` | ... |`."""
    out = set()
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*`(GET|PUT|POST|DELETE|PATCH) (/[^`\s?]*)[^`]*`\s*\|", line)
            if m:
                out.add((m.group(1), m.group(2)))
    return out


@h.test
def test_docs_tables_match_the_document():
    want = {(m, t) for t, m, _ in operations(include_cluster=True)}
    api_md = doc_table("docs/api.md")
    h.eq(sorted(api_md - want), [], "docs/api.md rows not in api/openapi.json")
    h.eq(sorted(want - api_md), [], "operations of api/openapi.json missing in docs/api.md")
    readme = doc_table("README.md")
    h.eq(sorted(readme - want), [], "README.md rows not in api/openapi.json")


if __name__ == "__main__":
    h.main()
