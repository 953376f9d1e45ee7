"""test_text.py - text retrieval over HTTP and MCP: match modes and their defaults, explain,
text scores equal to a BM25 reference under every write kind (insert, supersede, delete,
archive, purge) and across a restart, the text/vector rules for client vectors (SPEC 6)."""

import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, near, expect_ok, expect_error  # noqa: E402

K1, B = 0.9, 0.4
# words the tokenizer keeps as they are (no stop word, the stemmer leaves them alone)
VOCAB = ["alpha", "beta", "gamma", "delta", "kappa", "omega", "sigma", "zeta"]


def S(args=(), key="default"):
    return h.shared(args, key=key)


def fresh_ns(prefix):
    fresh_ns.n += 1
    return "%s_%d_%d" % (prefix, os.getpid(), fresh_ns.n)


fresh_ns.n = 0


def bm25_ref(docs, query):
    """text(d) of lexidx.h (words only) for docs {id: text} (the active ones), query words."""
    toks = {i: t.split() for i, t in docs.items()}
    n = len(toks)
    avg = (sum(len(t) for t in toks.values()) / n) if n and sum(len(t) for t in toks.values()) else 1.0
    q = list(dict.fromkeys(query.split()))
    idf = {}
    for w in q:
        df = sum(1 for t in toks.values() if w in t)
        idf[w] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    s_idf = sum(idf.values())
    out = {}
    for i, t in toks.items():
        s, any_word = 0.0, False
        for w in q:
            tf = t.count(w)
            if tf:
                any_word = True
                s += idf[w] / s_idf * tf / (tf + K1 * (1 - B + B * len(t) / avg))
        if any_word:
            out[i] = min(s, 1.0)
    return out


def text_scores(srv, ns, query, **extra):
    req = {"query": query, "k": 1000, "match": "text", "explain": True}
    req.update(extra)
    out = expect_ok(srv.retrieve(ns, req))
    eq(out["match"], "text", "match echoed")
    for r in out["results"]:
        check("vector_score" not in r, "text match: no vector_score")
        near(r["similarity"], r["text_score"], 1e-6, "text match: similarity is the text score")
    return {r["id"]: r["text_score"] for r in out["results"]}, out


def same_scores(got, want, what):
    eq(sorted(got), sorted(want), "%s: the segments that match" % what)
    for k, v in want.items():
        near(got[k], v, 1e-9, "%s: text_score of %s" % (what, k))


@test
def test_text_scores_equal_bm25_under_every_write_kind():
    srv = S()
    ns = fresh_ns("bm25")
    rng = random.Random(20261201)
    active = {}
    for i in range(40):
        t = " ".join(rng.choice(VOCAB[: 2 + i % 6]) for _ in range(1 + rng.randrange(9)))
        expect_ok(srv.insert(ns, {"id": "d%d" % i, "text": t}), 201)
        active["d%d" % i] = t
    queries = ["alpha", "beta gamma", "zeta omega alpha", "kappa kappa sigma", "nothing here"]

    def check_all(what):
        for q in queries:
            got, _ = text_scores(srv, ns, q)
            same_scores(got, bm25_ref(active, q), "%s, query %r" % (what, q))

    check_all("after inserts")
    # supersede: the old segment leaves the statistics (and the default answers)
    expect_ok(srv.insert(ns, {"id": "d40", "text": "zeta zeta", "supersedes": ["d3", "d4"]}), 201)
    active.pop("d3"), active.pop("d4")
    active["d40"] = "zeta zeta"
    check_all("after a supersede")
    got, _ = text_scores(srv, ns, "alpha", include_superseded=True)
    check(set(got) >= set(bm25_ref(active, "alpha")), "include_superseded adds, keeps the rest")
    # delete
    expect_ok(srv.delete("/v1/namespaces/%s/segments/d7" % ns))
    active.pop("d7")
    check_all("after a delete")
    # deleting the superseder gives its targets back to the active set (and the statistics)
    expect_ok(srv.delete("/v1/namespaces/%s/segments/d40" % ns))
    listed = expect_ok(srv.get("/v1/namespaces/%s/segments?limit=1000" % ns))["segments"]
    active = {x["id"]: x["text"] for x in listed}
    check("d3" in active and "d4" in active and "d40" not in active, "targets rejoin")
    check_all("after deleting a superseder")
    # compaction: archive, then purge
    out = expect_ok(srv.compact(ns, {"target": 30}))
    for i in out["evicted"]:
        active.pop(i)
    check_all("after an archiving compaction")
    out = expect_ok(srv.compact(ns, {"target": 25, "purge": True}))
    for i in out["evicted"]:
        active.pop(i)
    check_all("after a purge")
    # export, then import into an empty namespace (archived lines stay archived): the same
    # statistics, so the same text scores
    conn = h.http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    conn.request("GET", "/v1/namespaces/%s/export" % ns)
    data = conn.getresponse().read()
    conn.close()
    ns2 = fresh_ns("bm25imp")
    expect_ok(srv.call("POST", "/v1/namespaces/%s/import" % ns2, data,
                       headers={"Content-Type": "application/x-ndjson"}), 201)
    for q in queries:
        same_scores(text_scores(srv, ns2, q)[0], text_scores(srv, ns, q)[0],
                    "imported copy, query %r" % q)
    # filters select, they do not change a segment's score
    got_all, _ = text_scores(srv, ns, "beta gamma")
    some = sorted(got_all)[: len(got_all) // 2]
    if some:
        srv2_ts = expect_ok(srv.seg(ns, some[-1]))["timestamp"]
        got, _ = text_scores(srv, ns, "beta gamma", until=srv2_ts)
        for k, v in got.items():
            near(v, got_all[k], 1e-12, "until filter keeps %s's score" % k)
    # min_score keeps exactly the segments at or above it
    # (a cut between two scores: a score is the float-rounded similarity times the decay)
    ref = bm25_ref(active, "zeta omega alpha")
    vals = sorted(set(ref.values()))
    check(len(vals) >= 2, "distinct scores to cut between")
    cut = (vals[len(vals) // 2 - 1] + vals[len(vals) // 2]) / 2
    got, _ = text_scores(srv, ns, "zeta omega alpha", min_score=cut)
    eq(sorted(got), sorted(k for k, v in ref.items() if v >= cut), "min_score")


@test
def test_restart_keeps_identical_answers():
    srv = h.Server().start()
    try:
        ns = fresh_ns("restart")
        texts = ["the staging database password is hunter2",
                 "rotated: the staging database password is now swordfish",
                 "team lunch moved to thursday", "passwords are rotated every ninety days",
                 "the wifi at the office is slow"]
        for i, t in enumerate(texts):
            expect_ok(srv.insert(ns, {"id": "t%d" % i, "text": t}), 201)
        expect_ok(srv.insert(ns, {"id": "t5", "text": "database moved to host db-7",
                                  "supersedes": ["t2"]}), 201)
        expect_ok(srv.delete("/v1/namespaces/%s/segments/t4" % ns))
        reqs = [{"query": "staging password", "explain": True},
                {"query": "staging password", "match": "text", "explain": True},
                {"query": "rotate the passwords", "match": "hybrid", "explain": True,
                 "half_life": "30d"},
                {"query": "lunch", "match": "vector", "explain": True}]

        def answers():
            out = []
            for r in reqs:
                a = expect_ok(srv.retrieve(ns, dict(r, origin="2026-12-01T00:00:00Z")))
                a.pop("took_ms")
                out.append(a)
            return out

        before = answers()
        eq(before[0]["match"], "hybrid", "default match with built-in vectors")
        eq([r["id"] for r in before[1]["results"]][:2], ["t0", "t1"],
           "text: the two password segments first (the shorter one ahead)")
        check(all("text_score" in r and "vector_score" in r for r in before[0]["results"]),
              "hybrid explain has both parts")
        for r in before[0]["results"]:
            near(r["similarity"], 0.9 * r["text_score"] + 0.1 * max(0.0, r["vector_score"]),
                 1e-6, "hybrid similarity is the documented fusion")
        # stemming: "rotate the passwords" finds "rotated" and "passwords"
        check(before[2]["results"][0]["id"] in ("t1", "t3"), "stems match")
        srv.restart()
        eq(answers(), before, "identical answers after a restart")
    finally:
        srv.stop()
        srv.cleanup()


def export_lines(srv, ns):
    conn = h.http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    try:
        conn.request("GET", "/v1/namespaces/%s/export" % ns)
        r = conn.getresponse()
        data = r.read()
        h.check_schema("GET", "/v1/namespaces/%s/export" % ns, r.status,
                       r.getheader("content-type"), data)
    finally:
        conn.close()
    eq(r.status, 200, "export")
    return [h.json.loads(x) for x in data.splitlines()]


def import_lines(srv, ns, lines):
    body = "".join(h.json.dumps(x) + "\n" for x in lines).encode()
    return srv.call("POST", "/v1/namespaces/%s/import" % ns, body,
                    headers={"Content-Type": "application/x-ndjson"})


@test
def test_export_import_keeps_the_answers():
    """A copy made by export and import answers every text query as the original does (its
    default match too: the export carries the embedder that made the vectors), also after a
    supersede, an archiving compaction and a delete, and both keep their answers across a
    restart."""
    srv = h.Server().start()
    try:
        ns, copy = fresh_ns("exp"), fresh_ns("exp_copy")
        words = ["cats", "dogs", "birds", "fish", "cats", "dogs cats", "owls", "cats fish"]
        expect_ok(srv.insert(ns, {"segments": [
            {"id": "s%d" % i, "text": "memory %d about %s" % (i, w),
             "timestamp": 1760000000 + i * 60} for i, w in enumerate(words)]}), 201)
        expect_ok(srv.insert(ns, {"id": "s8", "text": "replaces the first cats memory",
                                  "supersedes": ["s0"], "timestamp": 1760000600}), 201)
        expect_ok(srv.delete("/v1/namespaces/%s/segments/s6" % ns))
        expect_ok(srv.compact(ns, {"target": 5, "policy": "coherence_weighted", "context": []}))
        lines = export_lines(srv, ns)
        check(any(x["archived"] for x in lines), "the compaction archived a segment")
        eq({x.get("embedder") for x in lines}, {"builtin"}, "lines name the embedder")
        eq(expect_ok(import_lines(srv, copy, lines), 201), {"imported": 8, "skipped": 0},
           "import")
        eq(export_lines(srv, copy), lines, "export, import, export: the same lines")
        reqs = [{"query": "memory about cats"}, {"query": "cats fish", "match": "text"},
                {"query": "dogs", "match": "hybrid", "include_archived": True},
                {"query": "first cats", "include_superseded": True},
                {"query": "birds", "match": "vector"}]

        def answers(name):
            out = []
            for r in reqs:
                a = expect_ok(srv.retrieve(name, dict(r, k=10, half_life="1d", explain=True,
                                                      origin=1760000700)))
                a.pop("took_ms"), a.pop("namespace")
                for x in a["results"]:
                    x.pop("seq")  # an import numbers its segments anew
                out.append(a)
            return out

        want = answers(ns)
        eq(want[0]["match"], "hybrid", "default match with built-in vectors")
        eq(answers(copy), want, "the copy answers as the original")
        stats = [expect_ok(srv.get("/v1/namespaces/%s" % n)) for n in (ns, copy)]
        eq(stats[1]["embedder"], stats[0]["embedder"], "the copy records the embedder")
        srv.restart()
        eq(answers(ns), want, "the original after a restart")
        eq(answers(copy), want, "the copy after a restart")
        # the embedder a line names: a string, one per import, the namespace's own
        bad = dict(lines[0], id="x0", embedder=7)
        err = expect_error(import_lines(srv, fresh_ns("exp_bad"), [bad]), 400, "invalid_field")
        eq((err.get("field"), err.get("line")), ("embedder", 1), "names the field and line")
        two = [dict(lines[1], id="y1"), dict(lines[2], id="y2", embedder="openai:m")]
        err = expect_error(import_lines(srv, fresh_ns("exp_two"), two), 409, "embedder_mismatch")
        eq(err.get("line"), 2, "names the line")
        other = [dict(x, id="z%d" % i, embedder="openai:m", supersedes=[])
                 for i, x in enumerate(lines)]
        expect_error(import_lines(srv, ns, other), 409, "embedder_mismatch", "another embedder")
        eq(len(export_lines(srv, ns)), len(lines), "nothing written")
        text_only = [{"id": "t0", "text": "embedded here"}, dict(lines[1], embedder="openai:m")]
        expect_error(import_lines(srv, fresh_ns("exp_mix"), text_only), 409, "embedder_mismatch",
                     "text embedded here for vectors of another embedder")
    finally:
        srv.stop()
        srv.cleanup()


@test
def test_text_match_rules():
    srv = S()
    ns = fresh_ns("rules")
    expect_ok(srv.insert(ns, {"segments": [
        {"id": "a", "text": "Résumé sent to the Berlin office"},
        {"id": "b", "text": "the office plants need water"},
        {"id": "c", "embedding": [0.5] * 256}]}), 201)
    # accents and case fold; only segments holding a query word match; text-less ones never
    got, _ = text_scores(srv, ns, "resume BERLIN")
    eq(list(got), ["a"], "folded words match")
    got, _ = text_scores(srv, ns, "office")
    eq(sorted(got), ["a", "b"], "office")
    # a query of stop words only holds no word: nothing matches by text
    got, _ = text_scores(srv, ns, "what is the")
    eq(got, {}, "stop words only")
    # hybrid ranks every segment (the cosine part), text ones first for a text query
    out = expect_ok(srv.retrieve(ns, {"query": "office water", "match": "hybrid", "k": 3}))
    eq(out["results"][0]["id"], "b", "hybrid: the best text match first")
    eq(len(out["results"]), 3, "hybrid: every segment is a candidate")
    # an embedding alone is vector match; text or hybrid need a query
    out = expect_ok(srv.retrieve(ns, {"embedding": [0.5] * 256, "k": 1}))
    eq(out["match"], "vector", "embedding: vector")
    expect_error(srv.retrieve(ns, {"embedding": [0.5] * 256, "match": "text"}), 400,
                 "invalid_field")
    expect_error(srv.retrieve(ns, {"query": "office", "match": "semantic"}), 400,
                 "invalid_field")


@test
def test_client_vectors_of_another_dimension():
    srv = S()
    ns = fresh_ns("client")
    expect_ok(srv.insert(ns, {"segments": [
        {"id": "x", "text": "kubernetes upgrade planned for june", "embedding": [1, 0, 0]},
        {"id": "y", "text": "buy oat milk", "embedding": [0, 1, 0]}]}), 201)
    out = expect_ok(srv.retrieve(ns, {"query": "kubernetes upgrade", "explain": True}))
    eq(out["match"], "text", "client vectors: a text query matches by text")
    eq([r["id"] for r in out["results"]], ["x"], "text match on client vectors")
    for m in ("vector", "hybrid"):
        expect_error(srv.retrieve(ns, {"query": "kubernetes", "match": m}), 400,
                     "dimension_mismatch")
    expect_error(srv.insert(ns, {"text": "no vector for me"}), 400, "dimension_mismatch")
    # a text-only insert there is refused for its dimension only once its fields are valid:
    # a typo or a bad value is named first, as anywhere else
    for bad, field in (({"text": "t", "txet": 1}, "txet"), ({"text": "t", "id": ""}, "id"),
                       ({"text": "t", "timestamp": "2026-01-01T00:00:00"}, "timestamp"),
                       ({"text": "t", "metadata": [1]}, "metadata"),
                       ({"text": "t", "supersedes": "x"}, "supersedes"),
                       ({"segments": [{"text": "t"}] * 1001}, "segments"),
                       ({"segments": [{"text": "t", "source": ""}]}, "segments[0].source")):
        err = expect_error(srv.insert(ns, bad), 400, "invalid_field", "insert %s" % field)
        eq(err.get("field"), field, "the field named for %s" % field)
    out = expect_ok(srv.retrieve(ns, {"embedding": [1, 0, 0], "k": 1}))
    eq(out["results"][0]["id"], "x", "vector match still works")


@test
def test_configured_match():
    srv = S(["--match", "text", "--bm25-k1", "1.2", "--bm25-b", "0.75"], key="text")
    ns = fresh_ns("cfg")
    expect_ok(srv.insert(ns, {"id": "a", "text": "alpha beta"}), 201)
    expect_ok(srv.insert(ns, {"id": "b", "text": "alpha alpha gamma delta"}), 201)
    out = expect_ok(srv.retrieve(ns, {"query": "alpha beta", "explain": True}))
    eq(out["match"], "text", "--match text")
    # k1 1.2, b 0.75 by hand (lexidx.h): both words df 1 and 2 of N 2
    avg = 3.0
    idf_a, idf_b = math.log(1 + 0.5 / 2.5), math.log(1 + 1.5 / 1.5)
    s = idf_a + idf_b

    def sat(tf, dl):
        return tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avg))

    want = {"a": idf_a / s * sat(1, 2) + idf_b / s * sat(1, 2), "b": idf_a / s * sat(2, 4)}
    got = {r["id"]: r["text_score"] for r in out["results"]}
    same_scores(got, want, "configured BM25")
    srv2 = S(["--match", "hybrid", "--text-weight", "0.5"], key="hybrid05")
    expect_ok(srv2.insert(ns, {"id": "a", "text": "alpha beta"}), 201)
    out = expect_ok(srv2.retrieve(ns, {"query": "alpha", "explain": True}))
    r = out["results"][0]
    near(r["similarity"], 0.5 * r["text_score"] + 0.5 * max(0.0, r["vector_score"]), 1e-6,
         "--text-weight 0.5")


@test
def test_mcp_text_retrieve():
    srv = S()
    ns = fresh_ns("mcp")
    hdrs = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}

    def call(i, name, args):
        st, _, body = srv.call("POST", "/mcp", {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                               "params": {"name": name, "arguments": args}},
                               headers=hdrs)
        eq(st, 200, "mcp status")
        res = body["result"]
        check(not res.get("isError"), "tool error: %s" % res)
        return res["structuredContent"]

    srv.call("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "e2e", "version": "1"}}},
             headers=hdrs)
    call(2, "memory_insert", {"namespace": ns, "text": "the deploy key lives in the vault"})
    call(3, "memory_insert", {"namespace": ns, "text": "standup moved to ten"})
    out = call(4, "memory_retrieve", {"namespace": ns, "query": "where is the deploy key",
                                      "match": "text", "explain": True})
    eq(out["match"], "text", "mcp match")
    eq(len(out["results"]), 1, "mcp: one text match")
    check(out["results"][0]["text_score"] > 0, "mcp explain text_score")
    out = call(5, "memory_retrieve", {"namespace": ns, "query": "deploy key"})
    eq(out["match"], "hybrid", "mcp default match (built-in vectors)")
    check(out["results"][0]["text"].startswith("the deploy key"), "mcp: best first")


if __name__ == "__main__":
    h.main()
