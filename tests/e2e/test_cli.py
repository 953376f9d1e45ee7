"""test_cli.py - the client commands (`mnemod ns|add|get|forget|patch|search|compact`) against a
running server.

Each command is run as a process the way a person would, and what it prints is checked
against what the REST API says about the same data: tables parsed back and compared
with the retrieve answer, --json compared with the API's own JSON, exit statuses exact
(0 done, 1 refused or unreachable, 2 usage).
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402


def cli(srv, *args, stdin=None, env=None, url=True, timeout=60):
    """Run `mnemod ARGS...` against srv -> (exit status, stdout, stderr)."""
    e = h.clean_env({"MNEMOD_URL": "http://127.0.0.1:%d" % srv.port} if url else {})
    e.pop("COLUMNS", None)
    e.update(env or {})
    p = subprocess.run([h.BINARY] + list(args), input=stdin if stdin is not None else b"",
                       capture_output=True, timeout=timeout, env=e)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


def ok(res, what=""):
    rc, out, err = res
    h.check(rc == 0, "%s: exit %d; stderr %s" % (what, rc, err))
    return out


def table(out):
    """A CLI table -> list of dicts keyed by the header words (the last column keeps its
    spaces)."""
    lines = [ln for ln in out.splitlines() if ln.strip()]
    head = lines[0].split()
    rows = []
    for ln in lines[1:]:
        parts = ln.split(None, len(head) - 1)
        if len(parts) < len(head) - 1:
            continue  # a footer line
        rows.append(dict(zip(head, parts)))
    return rows


PW = [("pw-old", "the staging database password is hunter2", "2026-11-02T09:00:00Z", "ops"),
      ("lunch", "team lunch moved to thursday", "2026-11-20T12:00:00Z", None),
      ("pw-new", "rotated: staging database password is now swordfish", "2026-11-28T09:00:00Z",
       "ops")]


def fill(srv, ns):
    for sid, text, ts, source in PW:
        args = ["add", "-n", ns, text, "--id", sid, "--timestamp", ts]
        if source:
            args += ["--source", source]
        out = ok(cli(srv, *args), "add " + sid)
        h.check(out.startswith(sid + "  seq "), "add prints the id and seq: %r" % out)


@h.test
def test_namespaces():
    srv = h.shared()
    out = ok(cli(srv, "ns", "create", "cli_ns", "--dim", "3"), "ns create")
    h.eq(out.strip(), "namespace cli_ns: dim 3")
    rc, out, err = cli(srv, "ns", "create", "cli_ns", "--dim", "4")
    h.eq(rc, 1, "409 exit status")
    h.check(err.startswith("mnemod: 409 namespace_exists: "), "409 message: %r" % err)
    ok(cli(srv, "add", "--namespace", "cli_ns", "--embedding", "[1,0,0]",
           "--timestamp", "2026-01-02"), "add vector")
    rows = {r["NAME"]: r for r in table(ok(cli(srv, "ns", "list"), "ns list"))}
    h.check("cli_ns" in rows, "ns list shows cli_ns: %r" % rows)
    h.eq((rows["cli_ns"]["COUNT"], rows["cli_ns"]["DIM"]), ("1", "3"), "ns list row")
    stats = dict(ln.split(None, 1) for ln in
                 ok(cli(srv, "ns", "stats", "cli_ns"), "ns stats").splitlines())
    api = h.expect_ok(srv.get("/v1/namespaces/cli_ns"))
    h.eq(stats["count"], str(api["count"]), "stats count")
    h.eq(stats["oldest"], "2026-01-02T00:00:00.000Z", "a bare date is midnight UTC")
    j = json.loads(ok(cli(srv, "ns", "stats", "-n", "cli_ns", "--json"), "stats --json"))
    h.eq(j, api, "--json is the API's answer")
    rc, _, err = cli(srv, "ns", "drop", "cli_ns")
    h.eq(rc, 2, "drop without --yes")
    h.check("--yes" in err, err)
    h.expect_ok(srv.get("/v1/namespaces/cli_ns"))
    h.eq(ok(cli(srv, "ns", "drop", "cli_ns", "--yes"), "drop").strip(), "deleted namespace cli_ns")
    h.expect_error(srv.get("/v1/namespaces/cli_ns"), 404, "not_found")
    rc, _, err = cli(srv, "ns", "stats", "cli_ns")
    h.eq(rc, 1, "stats of a dropped namespace")
    h.check(err.startswith("mnemod: 404 not_found: "), err)


@h.test
def test_add_get_forget():
    srv = h.shared()
    ns = "cli_add"
    out = ok(cli(srv, "-n", ns, "add", "--id", "piped", "--source", "stdin",
                 "--metadata", '{"user":"ana","tags":["a","b"]}',
                 stdin=b"read from stdin, with an accent: caf\xc3\xa9\n"), "add from stdin")
    h.check(out.startswith("piped  seq 1  "), out)
    seg = h.expect_ok(srv.get("/v1/namespaces/%s/segments/piped" % ns))
    h.eq(seg["text"], "read from stdin, with an accent: caf\u00e9", "trailing newline dropped")
    h.eq(seg["metadata"], {"user": "ana", "tags": ["a", "b"]}, "metadata")
    h.eq(seg["source"], "stdin", "source")
    ok(cli(srv, "-n", ns, "add", "-", "--id", "dash", stdin=b"dash means stdin"), "add -")
    ok(cli(srv, "-n", ns, "add", "the newer one", "--id", "newer", "--supersedes", "piped,dash"),
       "add --supersedes")
    h.eq(h.expect_ok(srv.get("/v1/namespaces/%s/segments/dash" % ns))["superseded_by"], "newer")
    got = dict(ln.split(None, 1) for ln in ok(cli(srv, "-n", ns, "get", "piped"), "get")
               .splitlines())
    h.eq(got["text"], seg["text"], "get text")
    h.eq(got["superseded_by"], "newer", "get superseded_by")
    j = json.loads(ok(cli(srv, "-n", ns, "get", "newer", "--embedding", "--json"), "get --json"))
    h.eq(j, h.expect_ok(srv.get("/v1/namespaces/%s/segments/newer?embedding=true" % ns)))
    odd = "a/b c?d%e"
    ok(cli(srv, "-n", ns, "add", "odd id", "--id", odd), "add odd id")
    h.eq(json.loads(ok(cli(srv, "-n", ns, "get", odd, "--json")))["id"], odd, "escaped id")
    h.eq(ok(cli(srv, "-n", ns, "forget", odd), "forget").strip(), "forgot " + odd)
    rc, _, err = cli(srv, "-n", ns, "get", odd)
    h.eq(rc, 1)
    h.check(err.startswith("mnemod: 404 not_found: "), err)
    # the server's checks reach the user with their code and field
    rc, _, err = cli(srv, "-n", ns, "add", "older", "--timestamp", "2020-01-01")
    h.eq(rc, 1)
    h.check(err.startswith("mnemod: 409 non_monotonic_timestamp: "), err)
    rc, _, err = cli(srv, "-n", ns, "add", "x", "--metadata", "{not json")
    h.eq(rc, 2, "bad --metadata is a usage error")
    h.check("--metadata" in err, err)
    rc, _, err = cli(srv, "-n", ns, "add", "x", "--metadata", "[1]")
    h.eq(rc, 1, "metadata that is not an object: the server refuses it")
    h.check("400 invalid_field" in err and "metadata" in err, err)
    h.eq(h.expect_ok(srv.get("/v1/namespaces/" + ns))["count"], 3, "nothing else written")


@h.test
def test_patch_and_numbers_as_sent():
    """`patch` changes a segment's metadata and source (the REST PATCH), and prints the
    segment; `get` prints the server's numbers as it sent them (0.1, not jansson's
    0.10000000000000001), and what is typed goes out as typed."""
    srv = h.shared()
    ns = "cli_patch"
    ok(cli(srv, "-n", ns, "add", "a memory to fix", "--id", "p1", "--source", "ops",
           "--metadata", '{"w":0.1,"v":[1.5,0.3]}'), "add")
    got = dict(ln.split(None, 1) for ln in ok(cli(srv, "-n", ns, "get", "p1"), "get").splitlines())
    h.eq(got["metadata"], '{"w":0.1,"v":[1.5,0.3]}', "metadata printed as the server sent it")
    vec = h.expect_ok(srv.get("/v1/namespaces/%s/segments/p1?embedding=true" % ns))["embedding"]
    got = dict(ln.split(None, 1) for ln in
               ok(cli(srv, "-n", ns, "get", "p1", "--embedding"), "get --embedding").splitlines())
    h.eq(json.loads(got["embedding"]), vec, "the vector")
    h.check(all(len(repr(x)) <= 12 for x in json.loads(got["embedding"])),
            "float32 components print in at most 9 digits: %s" % got["embedding"][:200])
    out = ok(cli(srv, "-n", ns, "patch", "p1", "--metadata", '{"user":"ana","p":0.7}'), "patch")
    got = dict(ln.split(None, 1) for ln in out.splitlines())
    h.eq(got["metadata"], '{"user":"ana","p":0.7}', "patch prints the segment")
    seg = h.expect_ok(srv.get("/v1/namespaces/%s/segments/p1" % ns))
    h.eq(seg["metadata"], {"user": "ana", "p": 0.7}, "metadata replaced")
    h.eq(seg["source"], "ops", "source kept")
    j = json.loads(ok(cli(srv, "-n", ns, "patch", "p1", "--source", "wiki", "--json"), "--json"))
    h.eq(j, h.expect_ok(srv.get("/v1/namespaces/%s/segments/p1" % ns)), "--json is the answer")
    h.eq(j["source"], "wiki", "source changed")
    ok(cli(srv, "-n", ns, "patch", "p1", "--no-source", "--metadata", "null"), "clear both")
    seg = h.expect_ok(srv.get("/v1/namespaces/%s/segments/p1" % ns))
    h.check("source" not in seg and "metadata" not in seg, "both cleared: %r" % seg)
    h.eq(seg["text"], "a memory to fix", "the text is immutable")
    for args in ([], ["--source", "a", "--no-source"], ["--metadata", "{bad"]):
        rc, _, err = cli(srv, "-n", ns, "patch", "p1", *args)
        h.eq(rc, 2, "usage error for %r" % args)
    rc, _, err = cli(srv, "-n", ns, "patch", "p1", "p2", "--source", "a")
    h.eq(rc, 2, "two ids")
    rc, _, err = cli(srv, "-n", ns, "patch", "nope", "--source", "a")
    h.eq(rc, 1, "unknown id")
    h.check(err.startswith("mnemod: 404 not_found: "), err)
    rc, _, err = cli(srv, "-n", ns, "patch", "p1", "--metadata", "[1]")
    h.eq(rc, 1, "metadata that is not an object")
    h.check("400 invalid_field" in err, err)


@h.test
def test_search_table_matches_the_api():
    srv = h.shared()
    ns = "cli_search"
    fill(srv, ns)
    q = "staging database password"
    cases = [
        (["-k", "3"], {"k": 3}),
        (["--half-life", "7", "--origin", "2026-11-30"],
         {"half_life_days": 7, "origin": "2026-11-30T00:00:00Z"}),
        (["--half-life", "36h", "--decay", "gaussian", "--origin", "2026-11-30T00:00:00Z"],
         {"half_life": "36h", "decay": "gaussian", "origin": "2026-11-30T00:00:00Z"}),
        (["--half-life", "10d", "--decay", "weibull:1.5", "--coherence-weight", "0.5",
          "--recency-bias", "0.8", "--origin", "1796000000"],
         {"half_life": "10d", "decay": {"weibull": {"shape": 1.5}}, "coherence_weight": 0.5,
          "recency_bias": 0.8, "origin": 1796000000}),
        (["--as-of", "2026-11-10"], {"as_of": "2026-11-10T00:00:00Z"}),
        (["--source", "ops", "--min-score", "0.72"], {"source": "ops", "min_score": 0.72}),
        # the forms people type beside JSON's
        (["--min-score", ".5", "--coherence-weight", "+.25", "--recency-bias", "1."],
         {"min_score": 0.5, "coherence_weight": 0.25, "recency_bias": 1.0}),
        (["--since", "2026-11-03", "--until", "2026-11-29"],
         {"since": "2026-11-03T00:00:00Z", "until": "2026-11-29T00:00:00Z"}),
        (["--match", "text"], {"match": "text"}),
        (["--match", "vector", "--half-life", "7d", "--origin", "2026-11-30"],
         {"match": "vector", "half_life": "7d", "origin": "2026-11-30T00:00:00Z"}),
        (["--match", "hybrid", "--filter", '{"kind": {"$ne": "x"}}'],
         {"match": "hybrid", "filter": {"kind": {"$ne": "x"}}}),
    ]
    for args, req in cases:
        out = ok(cli(srv, "search", "-n", ns, q, *args), "search %s" % args)
        rows = table(out)
        api = h.expect_ok(srv.retrieve(ns, dict(req, query=q, explain=True)))["results"]
        h.eq([r["ID"] for r in rows], [a["id"] for a in api], "order for %s" % args)
        for r, a in zip(rows, api):
            h.near(float(r["SCORE"]), a["score"], 6e-5, "score %s" % args)
            h.near(float(r["SIM"]), a["similarity"], 6e-5, "similarity %s" % args)
            h.near(float(r["DECAY"]), a["decay"], 6e-5, "decay %s" % args)
            if "coherence_weight" in req:
                h.near(float(r["GATE"]), a["gate"], 6e-5, "gate")
            parts = any("text_score" in x or "vector_score" in x for x in api)
            h.eq("LEX" in r and "VEC" in r, parts, "LEX and VEC columns when the server sends them")
            for col, key in (("LEX", "text_score"), ("VEC", "vector_score")):
                if key in a:
                    h.near(float(r[col]), a[key], 6e-5, "%s %s" % (key, args))
                elif parts:
                    h.eq(r[col], "-", "%s absent" % key)
            h.eq(r["TEXT"], a["text"], "text")
        summary = cli(srv, "search", "-n", ns, q, *args)[2]
        match = h.expect_ok(srv.retrieve(ns, dict(req, query=q)))["match"]
        h.check(summary.startswith("%d results (%s match), " % (len(api), match)), summary)
        j = json.loads(ok(cli(srv, "search", "-n", ns, q, "--json", *args)))
        want = h.expect_ok(srv.retrieve(ns, dict(req, query=q)))
        for d in (j, want):
            d.pop("took_ms")
        h.eq(j, want, "--json %s" % args)
    # the README story: the rotated password wins with a 7-day half-life
    rows = table(ok(cli(srv, "search", "-n", ns, q, "-k", "2", "--half-life", "7d",
                        "--origin", "2026-11-30")))
    h.eq([r["ID"] for r in rows], ["pw-new", "pw-old"])
    rc, _, err = cli(srv, "search", "-n", ns, q, "-k", "0")
    h.eq(rc, 1)
    h.check(err.startswith("mnemod: 400 invalid_field: ") and "k" in err, err)
    rc, _, err = cli(srv, "search", "-n", "cli_nowhere", q)
    h.eq(rc, 1)
    h.check("404 not_found" in err, err)


@h.test
def test_list_pages_like_the_api():
    srv = h.shared()
    ns = "cli_list"
    h.expect_ok(srv.insert(ns, {"segments": [
        {"id": "s%d" % i, "text": "memory number %d" % i, "source": "odd" if i % 2 else "even",
         "timestamp": 1_760_000_000 + i * 3600} for i in range(7)]}), 201)
    h.expect_ok(srv.insert(ns, {"id": "s7", "text": "replaces s0", "supersedes": ["s0"],
                                "timestamp": 1_760_000_000 + 7 * 3600}), 201)
    rc, out, err = cli(srv, "list", "-n", ns, "--limit", "3")
    h.eq(rc, 0, err)
    rows = table(out)
    h.eq([r["ID"] for r in rows], ["s1", "s2", "s3"], "first page (s0 is superseded)")
    h.eq([r["SEQ"] for r in rows], ["2", "3", "4"])
    h.eq(rows[0]["TIMESTAMP"], "2025-10-09T09:53:20Z", "timestamp column")
    h.eq(rows[0]["SOURCE"], "odd")
    api = h.expect_ok(srv.get("/v1/namespaces/%s/segments?limit=3" % ns))
    h.check(err.strip() == "more: mnemod list --after %s (or --all)" % api["next"], err)
    rc, out, err = cli(srv, "list", "-n", ns, "--limit", "3", "--after", api["next"])
    h.eq([r["ID"] for r in table(out)], ["s4", "s5", "s6"], "second page")
    rows = table(ok(cli(srv, "list", "-n", ns, "--all", "--limit", "2", "--include-superseded")))
    h.eq([r["ID"] for r in rows], ["s%d" % i for i in range(8)], "--all walks every page")
    h.eq(rows[0]["FLAGS"], "S", "superseded flag")
    rows = table(ok(cli(srv, "list", "-n", ns, "--all", "--source", "odd")))
    h.eq([r["ID"] for r in rows], ["s1", "s3", "s5"], "--source")
    rows = table(ok(cli(srv, "list", "-n", ns, "--since", str(1_760_000_000 + 2 * 3600),
                        "--until", "2025-10-09T12:53:20Z")))
    h.eq([r["ID"] for r in rows], ["s2", "s3", "s4"], "--since/--until")
    j = json.loads(ok(cli(srv, "list", "-n", ns, "--limit", "2", "--json")))
    h.eq(j, h.expect_ok(srv.get("/v1/namespaces/%s/segments?limit=2" % ns)), "--json")
    rc, _, err = cli(srv, "list", "-n", ns, "--limit", "0")
    h.eq(rc, 1)
    h.check("400 invalid_field" in err and "limit" in err, err)


def cli_pty(srv, *args, stdin_path=None, which="stderr"):
    """Run the CLI with its stderr (or stdout) on a pseudo-terminal: (status, the terminal's
    bytes, the other stream)."""
    import pty
    master, slave = pty.openpty()
    e = h.clean_env({"MNEMOD_URL": "http://127.0.0.1:%d" % srv.port})
    fin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        kw = {which: slave, "stdout" if which == "stderr" else "stderr": subprocess.PIPE}
        p = subprocess.Popen([h.BINARY] + list(args), stdin=fin, env=e, **kw)
        os.close(slave)
        got = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not chunk:
                break
            got += chunk
        other = (p.stdout if which == "stderr" else p.stderr).read()
        rc = p.wait(60)
    finally:
        os.close(master)
        if stdin_path:
            fin.close()
    return rc, got.decode("utf-8", "replace"), other.decode("utf-8")


@h.test
def test_export_import_with_progress():
    srv = h.shared()
    ns, copy = "cli_exp", "cli_exp_copy"
    h.expect_ok(srv.insert(ns, {"segments": [
        {"id": "e%03d" % i, "text": "exported memory number %d" % i, "metadata": {"i": i},
         "timestamp": 1_760_000_000 + i} for i in range(300)]}), 201)
    tmp = tempfile.mkdtemp(prefix="mnemod-cli-")
    path = os.path.join(tmp, "ns.ndjson")
    try:
        e = h.clean_env({"MNEMOD_URL": "http://127.0.0.1:%d" % srv.port})
        with open(path, "wb") as f:
            p = subprocess.run([h.BINARY, "export", "-n", ns], stdout=f, stderr=subprocess.PIPE,
                               env=e, timeout=60)
        h.eq(p.returncode, 0, p.stderr)
        h.eq(p.stderr.decode().strip(), "exported 300 segments from " + ns)
        with open(path, "rb") as f:
            data = f.read()
        st, _, body = srv.call("GET", "/v1/namespaces/%s/export" % ns)
        h.eq(st, 200)
        h.eq([json.loads(x) for x in data.splitlines()], body if isinstance(body, list) else
             [json.loads(x) for x in body.splitlines()], "the file is the API's export")
        # a terminal on stdout: refused, nothing sent there
        rc, term, err = cli_pty(srv, "export", "-n", ns, which="stdout")
        h.eq(rc, 2, "export to a terminal")
        h.check("redirect" in err, err)
        # import with stderr on a terminal: a progress bar redrawn in place
        rc, term, out = cli_pty(srv, "import", "-n", copy, stdin_path=path)
        h.eq(rc, 0, term)
        h.eq(out.strip(), "imported 300 segments into %s (0 identical ones skipped)" % copy)
        h.check("\r\x1b[K" in term, "redrawn in place: %r" % term[:200])
        last = term.rstrip("\r\n").split("\r\x1b[K")[-1]
        h.check(last.startswith("import [" + "#" * 30 + "] 100%  300 lines  "), repr(last))
        h.check(last.endswith(" / %.1f KiB" % (len(data) / 1024)), repr(last))
        h.eq(term.count("\n"), 1, "one line in the end")
        h.eq(h.expect_ok(srv.get("/v1/namespaces/" + copy))["count"], 300)
        # not a terminal: plain progress lines; the same file again is all skipped
        with open(path, "rb") as f:
            p = subprocess.run([h.BINARY, "import", "-n", copy], stdin=f, capture_output=True,
                               env=e, timeout=60)
        h.eq(p.returncode, 0, p.stderr)
        lines = p.stderr.decode().splitlines()
        h.check(lines and all(ln.startswith("import: ") for ln in lines), lines)
        h.eq(len(set(lines)), len(lines), "no line repeated")
        h.eq(lines[-1], "import: 300 lines, %.1f KiB of %.1f KiB sent (100%%)"
             % (len(data) / 1024, len(data) / 1024))
        h.check("\r" not in p.stderr.decode() and "\x1b" not in p.stderr.decode(), "no escapes")
        h.eq(p.stdout.decode().strip(),
             "imported 0 segments into %s (300 identical ones skipped)" % copy)
        # a pipe (size unknown: chunked), --json
        p = subprocess.run([h.BINARY, "import", "-n", "cli_exp_pipe", "--json"], input=data,
                           capture_output=True, env=e, timeout=60)
        h.eq(p.returncode, 0, p.stderr)
        h.eq(json.loads(p.stdout), {"imported": 300, "skipped": 0})
        lines = p.stderr.decode().splitlines()
        h.eq(lines[-1], "import: 300 lines, %.1f KiB sent" % (len(data) / 1024))
        h.eq(len(set(lines)), len(lines), "no line repeated")
        # one small chunk: one progress line, not the same line again when the answer comes
        one = data.splitlines(True)[0]
        p = subprocess.run([h.BINARY, "import", "-n", "cli_exp_one"], input=one,
                           capture_output=True, env=e, timeout=60)
        h.eq(p.returncode, 0, p.stderr)
        h.eq(p.stderr.decode().splitlines(),
             ["import: 1 lines, %.1f KiB sent" % (len(one) / 1024)])
        # all or nothing: the bad line is named, nothing written
        bad = b'{"id":"a","embedding":[1,0]}\n{"id":"b","embedding":[1]}\n'
        p = subprocess.run([h.BINARY, "import", "-n", "cli_exp_bad", "--quiet"], input=bad,
                           capture_output=True, env=e, timeout=60)
        h.eq(p.returncode, 1)
        err = p.stderr.decode()
        h.check(err.startswith("mnemod: 400 dimension_mismatch: line 2: "), err)
        h.eq(err.count("line 2"), 1, err)
        h.expect_error(srv.get("/v1/namespaces/cli_exp_bad"), 404, "not_found")
        # stdin a terminal: refused before anything is sent
        import pty
        master, slave = pty.openpty()
        try:
            p = subprocess.run([h.BINARY, "import", "-n", copy], stdin=slave,
                               capture_output=True, env=e, timeout=60)
        finally:
            os.close(master)
            os.close(slave)
        h.eq(p.returncode, 2, "import from a terminal")
        h.check(b"mnemod import < FILE" in p.stderr, p.stderr)
    finally:
        import shutil
        shutil.rmtree(tmp, True)


@h.test
def test_long_text_is_cut_to_the_terminal():
    srv = h.shared()
    ns = "cli_width"
    text = "\u00e9t\u00e9 " * 60  # multi-byte characters: cut on a character boundary
    ok(cli(srv, "add", "-n", ns, text, "--id", "long"))
    rc, out, _ = cli(srv, "search", "-n", ns, "\u00e9t\u00e9", env={"COLUMNS": "80"})
    h.eq(rc, 0)
    line = [ln for ln in out.splitlines() if "long" in ln][0]
    h.eq(len(line), 80, "row width on an 80-column terminal: %r" % line)
    h.check(line.endswith("..."), line)
    rc, out, _ = cli(srv, "search", "-n", ns, "\u00e9t\u00e9")
    h.check(text.strip() in out, "not cut when the width is unknown")


@h.test
def test_compact():
    srv = h.shared()
    ns = "cli_compact"
    h.expect_ok(srv.insert(ns, {"segments": [
        {"id": "s%d" % i, "embedding": [1, i / 10, (i % 3) / 5], "timestamp": 1_750_000_000 + i}
        for i in range(8)]}), 201)
    out = ok(cli(srv, "compact", "-n", ns, "--target", "3", "--dry-run"))
    h.check(out.startswith("dry run, "), out)
    h.check(": 8 -> 3 segments, 5 would go" in out, out)
    h.eq(h.expect_ok(srv.get("/v1/namespaces/" + ns))["archived"], 0, "dry run archives nothing")
    out = ok(cli(srv, "compact", "-n", ns, "--ratio", "0.5", "--policy", "coherence_weighted"))
    h.check(out.startswith("coherence_weighted: 8 -> 4 segments, 4 archived"), out)
    evicted = [ln.strip() for ln in out.splitlines()[1:]]
    h.eq(len(evicted), 4)
    for sid in evicted:
        h.eq(h.expect_ok(srv.get("/v1/namespaces/%s/segments/%s" % (ns, sid)))["archived"], True)
    rc, _, err = cli(srv, "compact", "-n", ns)
    h.eq(rc, 2)
    h.check("--target" in err, err)


@h.test
def test_key_and_url():
    srv = h.shared(env={"MNEMOD_API_KEY": "cli-s3cret"}, key="auth")
    rc, _, err = cli(srv, "ns", "list")
    h.eq(rc, 1)
    h.check(err.startswith("mnemod: 401 unauthorized: "), err)
    ok(cli(srv, "ns", "list", env={"MNEMOD_API_KEY": "cli-s3cret"}), "key from the environment")
    with tempfile.NamedTemporaryFile("w", suffix=".key", delete=False) as f:
        f.write("cli-s3cret\n")
    try:
        ok(cli(srv, "--api-key-file", f.name, "add", "-n", "k", "keyed"), "key from a file")
    finally:
        os.unlink(f.name)
    url = "http://127.0.0.1:%d" % srv.port
    out = ok(cli(srv, "ns", "list", "--url", url + "/", url=False,
                 env={"MNEMOD_API_KEY": "cli-s3cret"}), "--url")
    h.check(any(r["NAME"] == "k" for r in table(out)), out)
    out = ok(cli(srv, "ns", "list", "--url", "127.0.0.1:%d" % srv.port, url=False,
                 env={"MNEMOD_API_KEY": "cli-s3cret"}), "--url without a scheme")
    rc, _, err = cli(srv, "ns", "list", "--url", "http://127.0.0.1:1", url=False)
    h.eq(rc, 1, "unreachable")
    h.check(err.startswith("mnemod: GET http://127.0.0.1:1/v1/namespaces: "), err)


@h.test
def test_scoped_keys():
    tmp = tempfile.mkdtemp(prefix="mnemod-cli-keys-")
    path = os.path.join(tmp, "keys")
    with open(path, "w") as f:
        f.write("cli-reader read team_*\ncli-writer write team_*\n")
    srv = h.shared(env={"MNEMOD_KEYS_FILE": path}, key="scoped")
    try:
        w, r = {"MNEMOD_API_KEY": "cli-writer"}, {"MNEMOD_API_KEY": "cli-reader"}
        ok(cli(srv, "add", "-n", "team_a", "written with a write key", env=w), "write key adds")
        rc, _, err = cli(srv, "add", "-n", "team_a", "not with a read key", env=r)
        h.eq(rc, 1)
        h.check(err.startswith("mnemod: 403 forbidden: "), err)
        rc, _, err = cli(srv, "add", "-n", "other", "outside the glob", env=w)
        h.eq(rc, 1)
        h.check(err.startswith("mnemod: 403 forbidden: "), err)
        rows = table(ok(cli(srv, "search", "-n", "team_a", "written", env=r), "read key searches"))
        h.eq(len(rows), 1)
        rc, _, err = cli(srv, "ns", "drop", "team_a", "--yes", env=w)
        h.eq(rc, 1, "dropping needs admin")
        h.check("403 forbidden" in err, err)
    finally:
        import shutil
        shutil.rmtree(tmp, True)


@h.test
def test_usage_errors():
    srv = h.shared()
    for args, needle in [(["search"], "QUERY"), (["search", "q", "--bogus"], "--bogus"),
                         (["search", "q", "-k"], "needs a value"),
                         (["search", "q", "-k", "2.5"], "integer"),
                         (["search", "q", "--recency-bias", "lots"], "number"),
                         (["search", "q", "--include-archived=yes"], "takes no value"),
                         (["ns"], "subcommand"), (["ns", "rename", "x"], "rename"),
                         (["ns", "create", "x"], "--dim"), (["get"], "ID"),
                         (["add", "a", "b"], "one TEXT"), (["--timeout", "x", "ns", "list"],
                                                          "--timeout"),
                         # decimal numbers only: no hex, infinity, blanks, lone points
                         (["search", "q", "-k", "0x10"], "integer"),
                         (["search", "q", "-k", "1e300"], "integer"),
                         (["search", "q", "-k", " 5"], "integer"),
                         (["search", "q", "--recency-bias", "inf"], "number"),
                         (["search", "q", "--recency-bias", "0x1p-2"], "number, such as 0.5"),
                         (["search", "q", "--recency-bias", "-."], "number"),
                         (["search", "q", "--recency-bias", "."], "number"),
                         (["--timeout", "1e300", "ns", "list"], "from 0 to 86400"),
                         (["--timeout", "0x10", "ns", "list"], "--timeout")]:
        rc, out, err = cli(srv, *args)
        h.eq(rc, 2, "exit status of %s" % args)
        h.check(needle in err, "%s: %r" % (args, err))
        h.eq(out, "", "nothing on stdout for %s" % args)
    rc, out, _ = cli(srv, "help")
    h.eq(rc, 0)
    for word in ("ns list", "search QUERY", "export", "import", "MNEMOD_URL"):
        h.check(word in out, "help mentions %s" % word)
    h.eq(cli(srv, "search", "--help")[1], out, "--help of a command")
    # a server flag's value is never taken for a command word
    rc, _, err = cli(srv, "--log-level", "list")
    h.eq(rc, 2, "server flag with a bad value")
    h.check("log-level" in err, err)


@h.test
def test_server_ignores_the_client_settings():
    """MNEMOD_URL and MNEMOD_NAMESPACE are the CLI's: a server started in the same shell
    accepts them (any other unknown MNEMOD_* variable still stops it)."""
    srv = h.Server(env={"MNEMOD_URL": "http://example.invalid", "MNEMOD_NAMESPACE": "x"})
    srv.start()
    try:
        h.expect_ok(srv.get("/v1/namespaces"))
    finally:
        srv.stop()
    p = subprocess.run([h.BINARY, "--listen", "127.0.0.1:0", "--data", "/nonexistent/x.db"],
                       env=h.clean_env({"MNEMOD_URLS": "x"}), capture_output=True, timeout=30)
    h.eq(p.returncode, 2)
    h.check(b"MNEMOD_URLS" in p.stderr, p.stderr)


class Always503:
    """A loopback HTTP server that answers every request 503 unavailable with the given
    Retry-After (None: no header), counting the requests."""

    def __init__(self, retry_after):
        import http.server
        import threading
        outer = self
        self.retry_after = retry_after
        self.hits = 0

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.hits += 1
                body = json.dumps({"error": {"code": "unavailable",
                                             "message": "overloaded"}}).encode()
                self.send_response(503)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if outer.retry_after is not None:
                    self.send_header("Retry-After", str(outer.retry_after))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.HTTPServer(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@h.test
def test_retries_of_503():
    """A 503 is retried --retries times (default 3) after its Retry-After, then given back
    with a note; a Retry-After over 30 s is not waited for; a bad --retries is a usage
    error."""
    fake = Always503(0)
    try:
        url = "http://127.0.0.1:%d" % fake.port
        for args, tries, note in (([], 4, "(still 503 after 3 retries (--retries))"),
                                  (["--retries", "1"], 2, "(still 503 after 1 retry (--retries))"),
                                  (["--retries=0"], 1, None)):
            fake.hits = 0
            rc, out, err = cli(None, "ns", "list", "--url", url, *args, url=False)
            h.eq(rc, 1, "exit status with %s" % args)
            h.eq(fake.hits, tries, "requests sent with %s" % args)
            line = err.strip()
            h.check(line.startswith("mnemod: 503 unavailable: overloaded"), line)
            if note:
                h.check(line.endswith(note), "%s: %r" % (args, line))
            else:
                h.eq(line, "mnemod: 503 unavailable: overloaded", "no retry, no note")
        fake.hits = 0
        fake.retry_after = 31
        rc, _, err = cli(None, "ns", "list", "--url", url, url=False)
        h.eq((rc, fake.hits), (1, 1), "a Retry-After of 31 s is not waited for")
        h.check(err.strip().endswith("(not retried: Retry-After 31 s is longer than the 30 s a "
                                     "command waits)"), err)
        for bad in ("-1", "101", "2.5", "many"):
            rc, out, err = cli(None, "ns", "list", "--url", url, "--retries", bad, url=False)
            h.eq(rc, 2, "--retries %s" % bad)
            h.check("--retries %s: expected a whole number from 0 to 100" % bad in err, err)
    finally:
        fake.close()


@h.test
def test_retries_from_the_environment():
    """MNEMOD_RETRIES sets --retries' default; the flag wins over it; an empty value is
    unset; a bad value is a usage error naming the variable; a server started in the same
    shell ignores it."""
    fake = Always503(0)
    try:
        url = "http://127.0.0.1:%d" % fake.port
        for env, args, tries in (({"MNEMOD_RETRIES": "1"}, [], 2),
                                 ({"MNEMOD_RETRIES": "0"}, [], 1),
                                 ({"MNEMOD_RETRIES": "5"}, ["--retries", "2"], 3),
                                 ({"MNEMOD_RETRIES": ""}, [], 4)):
            fake.hits = 0
            rc, _, err = cli(None, "ns", "list", "--url", url, *args, env=env, url=False)
            h.eq((rc, fake.hits), (1, tries), "requests sent with %s %s" % (env, args))
            h.check(err.strip().startswith("mnemod: 503 unavailable: overloaded"), err)
        for bad in ("-1", "101", "2.5", "many"):
            fake.hits = 0
            rc, _, err = cli(None, "ns", "list", "--url", url, env={"MNEMOD_RETRIES": bad},
                             url=False)
            h.eq((rc, fake.hits), (2, 0), "MNEMOD_RETRIES=%s" % bad)
            h.check("MNEMOD_RETRIES %s: expected a whole number from 0 to 100" % bad in err,
                    err)
        # the flag's good value wins over a bad variable
        fake.hits = 0
        rc, _, err = cli(None, "ns", "list", "--url", url, "--retries", "0",
                         env={"MNEMOD_RETRIES": "many"}, url=False)
        h.eq((rc, fake.hits), (1, 1), "--retries 0 over MNEMOD_RETRIES=many")
    finally:
        fake.close()
    srv = h.Server(env={"MNEMOD_RETRIES": "7"})
    srv.start()
    try:
        h.expect_ok(srv.get("/v1/namespaces"))
    finally:
        srv.stop()


if __name__ == "__main__":
    h.main()
