"""test_console_route.py - GET /console serves the web console compiled into the binary.

Every file of api/console/ comes back byte for byte with its content type and the policy
headers; nothing else is served (no other name, no path, no other method); the files load
nothing from elsewhere (no CDN, no inline script); the page needs no key while /v1 does.
"""

import http.client
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CONSOLE = os.path.join(ROOT, "api", "console")
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}


def files():
    return sorted(f for f in os.listdir(CONSOLE) if os.path.splitext(f)[1] in TYPES)


def raw_get(srv, path):
    """GET outside Server.call: the console is not part of the API that call() checks
    every answer against (api/openapi.json)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def read(name):
    with open(os.path.join(CONSOLE, name), "rb") as f:
        return f.read()


@h.test
def test_every_file_is_served_as_it_is():
    srv = h.shared()
    names = files()
    for want in ("index.html", "api.js", "app.js", "style.css"):
        h.check(want in names, "api/console/ has %s" % want)
    for name in names:
        st, hdr, data = raw_get(srv, "/console/" + name)
        h.eq(st, 200, name)
        h.eq(data, read(name), "%s byte for byte" % name)
        h.eq(hdr.get("content-type"), TYPES[os.path.splitext(name)[1]], name)
        h.eq(hdr.get("x-content-type-options"), "nosniff", name)
        h.eq(hdr.get("cache-control"), "no-cache", name)
        csp = hdr.get("content-security-policy") or ""
        for part in ("default-src 'none'", "script-src 'self'", "connect-src 'self'",
                     "frame-ancestors 'none'"):
            h.check(part in csp, "%s: CSP has %s: %r" % (name, part, csp))
    index = read("index.html")
    for path in ("/console", "/console/", "/console/?ns=agent"):
        st, _, data = raw_get(srv, path)
        h.eq((st, data), (200, index), path + " is index.html")


@h.test
def test_nothing_else_is_served():
    srv = h.shared()
    for path in ("/console/nope.js", "/console/a/b", "/console/..%2Fapi.js", "/console/%2e%2e",
                 "/consolex", "/console/API.JS", "/console/api.js/", "/console/index.html%00"):
        h.expect_error(srv.call("GET", path), 404, "not_found", path)
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        resp = srv.call(method, "/console", body={} if method in ("POST", "PUT") else None)
        h.expect_error(resp, 405, "method_not_allowed", method)
        h.eq(resp[1].get("allow"), "GET", "Allow header")
    h.expect_ok(srv.get("/v1/namespaces"))  # and the server is fine


@h.test
def test_no_key_for_the_page_but_for_the_api():
    srv = h.shared(env={"MNEMOD_API_KEY": "console-key"}, key="auth")
    st, _, _ = raw_get(srv, "/console/app.js")
    h.eq(st, 200, "the console's files need no key")
    h.expect_error(srv.get("/v1/namespaces"), 401, "unauthorized")
    h.expect_ok(srv.get("/v1/namespaces", headers={"Authorization": "Bearer console-key"}))


@h.test
def test_the_files_load_nothing_from_elsewhere():
    html = read("index.html").decode("utf-8")
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    h.check(refs, "index.html links its files")
    for ref in refs:
        h.check(ref.startswith("/console/"), "index.html links %r" % ref)
    h.check(not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "no inline script")
    h.check(" style=" not in html, "no inline style (the policy forbids it)")
    for name in files():
        if not name.endswith(".js"):
            continue
        text = read(name).decode("utf-8")
        for spec in re.findall(r'^\s*import\b[^"\']*["\']([^"\']+)["\']', text, re.M):
            h.check(spec.startswith("./"), "%s imports %r" % (name, spec))
        h.check("fetch(" not in text or name == "api.js",
                "%s: every request goes through api.js" % name)
        h.check(not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text),
                "%s names no other origin" % name)


if __name__ == "__main__":
    h.main()
