"""test_openapi.py - api/openapi.yaml and the routes the server answers are the same set.

The `paths:` section is read with a small indentation-based reader (no PyYAML). Then:
- every documented path + method, called with a valid request on existing resources,
  answers one of the statuses documented for it (a 2xx when a 2xx is documented): never
  a route 404 or a 405;
- every other method on a documented path answers 405 method_not_allowed, with an Allow
  header naming exactly the documented methods;
- paths next to the documented ones (one segment more, one less, a literal changed) and a
  few unrelated ones answer 404 not_found for every method.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SPEC = os.path.join(ROOT, "api", "openapi.yaml")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
PROBE = ("GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "HEAD")
DIM = 4


def read_paths(path):
    """{template: {METHOD: set of response codes (strings)}} from the paths: section."""
    out = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    in_paths = False
    cur_path = cur_method = None
    path_indent = method_indent = resp_indent = code_indent = None
    for raw in lines:
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        ind = len(raw) - len(raw.lstrip(" "))
        text = raw.strip()
        if ind == 0:
            in_paths = text == "paths:"
            cur_path = cur_method = None
            continue
        if not in_paths:
            continue
        key = text.split(":", 1)[0].strip().strip("'\"")
        if path_indent is None:
            path_indent = ind
        if ind == path_indent:
            h.check(key.startswith("/") and text.endswith(":"), "bad path line %r" % raw)
            h.check(key not in out, "path %s listed twice" % key)
            cur_path, cur_method, method_indent = key, None, None
            out[cur_path] = {}
            continue
        if cur_path is None:
            continue
        if method_indent is None and ind > path_indent:
            method_indent = ind
        if ind == method_indent:
            cur_method = key.upper() if key in METHODS else None
            resp_indent = None
            if cur_method:
                h.check(cur_method not in out[cur_path], "%s %s twice" % (cur_method, cur_path))
                out[cur_path][cur_method] = set()
            continue
        if cur_method is None:
            continue
        if key == "responses" and ind > method_indent:
            resp_indent, code_indent = ind, None
            continue
        if resp_indent is not None:
            if ind <= resp_indent:
                resp_indent = None
                continue
            if code_indent is None:
                code_indent = ind
            if ind == code_indent:      # direct children of responses: are status codes
                h.check(re.fullmatch(r"[1-5][0-9][0-9]|default", key),
                        "%s %s: response key %r" % (cur_method, cur_path, key))
                out[cur_path][cur_method].add(key)
    return out


def matches(template, path):
    t, p = template.strip("/").split("/"), path.strip("/").split("/")
    if len(t) != len(p) or path.endswith("/") and path != "/":
        return False
    return all((a.startswith("{") and a.endswith("}") and b) or a == b for a, b in zip(t, p))


_n = [0]


def fresh(srv):
    """A new namespace holding segment s1: (ns, id)."""
    _n[0] += 1
    ns = "oa%d" % _n[0]
    h.expect_ok(srv.put("/v1/namespaces/%s" % ns, {"dim": DIM}), 201, "create %s" % ns)
    h.expect_ok(srv.insert(ns, {"id": "s1", "text": "one", "embedding": [1.0, 0, 0, 0]}), 201)
    h.expect_ok(srv.insert(ns, {"id": "s2", "text": "two", "embedding": [0, 1.0, 0, 0]}), 201)
    return ns, "s1"


def concrete(srv, template):
    ns, sid = fresh(srv)
    return template.replace("{ns}", ns).replace("{id}", sid)


def body_for(template, method):
    """A valid request body for a documented operation (None: no body)."""
    if method == "PUT" and template.endswith("{ns}"):
        return {"dim": DIM}
    if method != "POST":
        return None
    if template.endswith("/segments"):
        return {"id": "new1", "text": "new", "embedding": [0, 0, 1.0, 0]}
    if template.endswith("/retrieve"):
        return {"embedding": [1.0, 0, 0, 0], "k": 2}
    if template.endswith("/compact"):
        return {"target": 1}
    if template == "/mcp":
        return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test_openapi", "version": "0"}}}
    return {}


def call(srv, method, path, body=None):
    hdrs = {"Accept": "application/json, text/event-stream"}
    if body is None and method in ("POST", "PUT", "PATCH"):
        return srv.call(method, path, b"{}", headers=hdrs)
    return srv.call(method, path, body, headers=hdrs)


def allowed(ops):
    """Methods the server serves on a path: those documented with something but a 405."""
    return {m for m, codes in ops.items() if codes - {"405"}}


@h.test
def test_reader_sees_the_spec():
    paths = read_paths(SPEC)
    for p in ("/healthz", "/metrics", "/v1/namespaces", "/v1/namespaces/{ns}",
              "/v1/namespaces/{ns}/segments", "/v1/namespaces/{ns}/segments/{id}",
              "/v1/namespaces/{ns}/retrieve", "/v1/namespaces/{ns}/compact", "/mcp"):
        h.check(p in paths, "%s is documented" % p)
    h.eq(set(paths["/v1/namespaces/{ns}"]), {"GET", "PUT", "DELETE"}, "methods of {ns}")
    h.check("201" in paths["/v1/namespaces/{ns}/segments"]["POST"], "insert documents 201")
    for p, ops in paths.items():
        h.check(ops, "%s has at least one method" % p)
        for m, codes in ops.items():
            h.check(codes, "%s %s documents its responses" % (m, p))


@h.test
def test_every_documented_operation_is_served():
    srv = h.shared()
    paths = read_paths(SPEC)
    for template, ops in sorted(paths.items()):
        for method, codes in sorted(ops.items()):
            path = concrete(srv, template)
            st, hdr, body = call(srv, method, path, body_for(template, method))
            what = "%s %s (documented %s)" % (method, path, sorted(codes))
            h.check(str(st) in codes, "%s: answered %s %s" % (what, st, h._short(body)))
            if any(c.startswith("2") for c in codes):
                h.check(200 <= st < 300, "%s: answered %s, want the documented success" % (what, st))
            if st == 405:
                h.check(method not in allowed(ops), what)


@h.test
def test_undocumented_methods_are_405_with_allow():
    srv = h.shared()
    paths = read_paths(SPEC)
    for template, ops in sorted(paths.items()):
        path = concrete(srv, template)
        want_allow = allowed(ops)
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
    paths = read_paths(SPEC)
    ns, sid = fresh(srv)
    candidates = {"/", "/v1", "/v2/namespaces", "/V1/namespaces", "/v1/namespace",
                  "/healthz/", "/healthz/x", "/metrics/", "/metrics/x", "/metrics.txt",
                  "/mcp/", "/mcp/x", "/openapi.yaml", "/v1/namespaces/%s/segment" % ns,
                  "/v1/namespaces/%s/unknown" % ns, "/v1/namespaces/%s/segments/%s/x" % (ns, sid),
                  "/v1/namespaces/%s/retrieve/x" % ns, "//healthz", "/v1//namespaces"}
    for template in paths:
        path = template.replace("{ns}", ns).replace("{id}", sid)
        parts = path.strip("/").split("/")
        candidates.add(path + "/extra")
        if len(parts) > 1:
            candidates.add("/" + "/".join(parts[:-1]))
        if not template.split("/")[-1].startswith("{"):
            candidates.add("/" + "/".join(parts[:-1] + [parts[-1] + "z"]))
    checked = 0
    for path in sorted(candidates):
        if any(matches(t, path) for t in paths):
            continue
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            st, hdr, body = call(srv, method, path)
            h.expect_error((st, hdr, body), 404, "not_found", "%s %s" % (method, path))
        checked += 1
    h.check(checked >= 20, "only %d undocumented paths checked" % checked)


if __name__ == "__main__":
    h.main()
