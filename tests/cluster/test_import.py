#!/usr/bin/env python3
"""test_import.py - NDJSON import in cluster mode: one log record, all or nothing on every holder.

Usage: python3 tests/cluster/test_import.py build/release/mnemod

One nats-server (its default max_payload of 1 MB) and three mnemod nodes, each namespace on
two of them, so one node holds nothing of it:
- an export of a namespace written through the cluster (supersedes, a compaction, a
  delete: archived lines) imported into a new namespace through the node that does not
  hold it: both holders store it, their exports are identical and equal to the source's;
- the same import again: everything skipped, nothing written twice;
- a bad line: 400 naming the line, nothing written on either holder;
- an import larger than max_payload as a record: 413 naming the limit, promptly, nothing
  written;
- a body with a duplicate key relayed by a non-holder: 400 invalid_json (the relay passes the
  bytes as they came).
- the merged namespace listing while a live node does not answer: 503 naming it, and whole
  again once that node has stopped;
- a non-holder restarted with --max-relay-answer 4KiB: an export relayed through it is 413
  naming the limit, a small answer is relayed whole, a write works with
  --cluster-publishers 1.
Orderings and contents are asserted; durations are only printed."""
import http.client
import json
import os
import random
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import clusterlib as cx  # noqa: E402
from clusterlib import LOCAL, call, check  # noqa: E402

DIM = 8
ND = {"Content-Type": "application/x-ndjson"}


def export(node, ns, min_seq=None):
    """The raw NDJSON export of ns as node itself holds it; with min_seq, once the node has
    applied ns up to that log sequence (the node waits up to 5 s, then answers 503)."""
    path = "/v1/namespaces/%s/export" % ns
    if min_seq is not None:
        path += "?min_seq=%d" % min_seq
    conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=60)
    try:
        conn.request("GET", path, headers=LOCAL)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def export_after(cl, node_name, ns, seq, timeout=60):
    """export(..., min_seq=seq) on node_name, asked again on 503 until it has applied seq: a
    holder that was not the write's origin applies the record when its fetcher reads it,
    which a listing of every node's stream positions cannot tell (they are refreshed once a
    second, so right after a write they may all still end before its record)."""
    got = {}

    def ready():
        got["v"] = export(cl.nodes[node_name], ns, min_seq=seq)
        return got["v"][0] != 503

    cl.wait("%s applied %s up to log_seq %d" % (node_name, ns, seq), ready, timeout=timeout)
    return got["v"]


def canon(data):
    """Export lines without what a new namespace assigns afresh (the per-namespace seq)."""
    out = []
    for line in data.splitlines():
        o = json.loads(line)
        o.pop("seq", None)
        out.append(json.dumps(o, sort_keys=True))
    return out


def count(node, ns):
    st, _, body = call(node, "GET", "/v1/namespaces/" + ns, headers=LOCAL)
    return body["count"] if st == 200 else None


def main():
    if len(sys.argv) < 2:
        print("usage: test_import.py path/to/mnemod", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    rng = random.Random(11)
    cl = cx.Cluster(sys.argv[1], n_nats=1, stream_replicas=1, max_payload=None,
                    env={"MNEMOD_NAMESPACE_REPLICAS": "2", "MNEMOD_LOG_LEVEL": "warn"})
    try:
        cl.start_nats()
        for name in ("A", "B", "C"):
            cl.add(name)
        cl.wait("every node sees every node alive", lambda: all(
            sum(1 for x in cl.status(n)["nodes"] if x["alive"]) == 3 for n in cl.order))
        a = cl.nodes["A"]

        # ---- a source namespace written through the cluster ----
        t_ms = 1767225600000
        segs = []
        for i in range(120):
            s = {"id": "s%d" % i, "embedding": cx.vec(rng, DIM), "timestamp": (t_ms + i * 1000) / 1e3,
                 "text": "memory %d" % i, "metadata": {"n": i}}
            if i % 30 == 29:
                s["supersedes"] = ["s%d" % (i - 1)]
            segs.append(s)
        for i in range(0, 120, 40):
            st, _, body = call(a, "POST", "/v1/namespaces/src/segments", {"segments": segs[i:i + 40]})
            check(st == 201, "source insert: %r %r" % (st, body))
        st, _, body = call(a, "POST", "/v1/namespaces/src/compact",
                           {"target": 100, "policy": "coherence_weighted"})
        check(st == 200, "compact: %r %r" % (st, body))
        st, _, body = call(a, "DELETE", "/v1/namespaces/src/segments/s10")
        check(st == 200 and body.get("log_seq"), "delete: %r %r" % (st, body))
        last_src = body["log_seq"]  # the last write of src: every holder has all once it has this
        cl.wait("caught up", cl.caught_up, timeout=60)
        st, data = export_after(cl, cl.placement("src")["nodes"][0], "src", last_src)
        check(st == 200 and data.count(b"\n") == 119, "export: %r, %d lines" % (st, data.count(b"\n")))
        check(b'"archived":true' in data, "the export has no archived line")

        # ---- a listing cursor is good on every holder, and not for a namespace made again ----
        def cursor_ns(label):
            """cur created, 10 segments, every holder has applied them: (holders, first page
            on the first holder, its cursor)."""
            st, _, body = call(a, "PUT", "/v1/namespaces/cur", {"dim": DIM})
            check(st in (200, 201), "create cur (%s): %r %r" % (label, st, body))
            st, _, body = call(a, "POST", "/v1/namespaces/cur/segments", {"segments": [
                {"id": "c%d" % i, "embedding": cx.vec(rng, DIM)} for i in range(10)]})
            check(st == 201 and body.get("log_seq"), "insert cur (%s): %r %r" % (label, st, body))
            hs = cl.placement("cur")["nodes"]
            for hn in hs:
                st, _ = export_after(cl, hn, "cur", body["log_seq"])
                check(st == 200, "cur on %s (%s): %r" % (hn, label, st))
            st, _, page = call(cl.nodes[hs[0]], "GET", "/v1/namespaces/cur/segments?limit=4",
                               headers=LOCAL)
            check(st == 200 and page["next"], "first page of cur on %s: %r %r" % (hs[0], st, page))
            return hs, page
        hs, page = cursor_ns("first")
        for hn in hs:  # each holder takes the cursor the first one made
            st, _, nxt = call(cl.nodes[hn], "GET", "/v1/namespaces/cur/segments?limit=4&after=" +
                              page["next"], headers=LOCAL)
            check(st == 200 and [x["id"] for x in nxt["segments"]] == ["c4", "c5", "c6", "c7"],
                  "the cursor of %s on %s: %r %r" % (hs[0], hn, st, nxt))
        st, _, body = call(a, "DELETE", "/v1/namespaces/cur")
        check(st == 200, "drop cur: %r %r" % (st, body))
        hs2, page2 = cursor_ns("again")
        for hn in hs2:
            st, _, err = call(cl.nodes[hn], "GET", "/v1/namespaces/cur/segments?limit=4&after=" +
                              page["next"], headers=LOCAL)
            check(st == 400 and err["error"].get("field") == "after",
                  "the old cursor on %s after cur was made again: %r %r" % (hn, st, err))
            st, _, nxt = call(cl.nodes[hn], "GET", "/v1/namespaces/cur/segments?limit=4&after=" +
                              page2["next"], headers=LOCAL)
            check(st == 200 and [x["id"] for x in nxt["segments"]] == ["c4", "c5", "c6", "c7"],
                  "the new cursor on %s: %r %r" % (hn, st, nxt))
        print("listing cursor: taken by every holder %r; refused by %r once cur was deleted and "
              "made again" % (hs, hs2))

        # ---- import through a node holding nothing of the target ----
        st, _, body = call(a, "PUT", "/v1/namespaces/dst", {"dim": DIM})
        check(st in (200, 201), "create dst: %r %r" % (st, body))
        holders = cl.placement("dst")["nodes"]
        other = [n for n in cl.order if n not in holders][0]
        w0 = time.monotonic()
        st, _, body = call(cl.nodes[other], "POST", "/v1/namespaces/dst/import", data, headers=ND)
        imp_s = time.monotonic() - w0
        check(st == 201 and body.get("imported") == 119 and body.get("skipped") == 0
              and body.get("log_seq"), "import through non-holder %s: %r %r" % (other, st, body))
        cl.wait("caught up", cl.caught_up, timeout=60)
        want = canon(data)
        for h in holders:  # the one that was not the import's origin applies it from the log
            st, got = export_after(cl, h, "dst", body["log_seq"])
            check(st == 200 and canon(got) == want,
                  "holder %s after the import: %r, %d lines, differs from the source" %
                  (h, st, got.count(b"\n")))
        st, _, body = call(cl.nodes[other], "GET", "/v1/namespaces/dst")
        check(st == 200 and body["count"] == count(cl.nodes[holders[0]], "dst"),
              "dst through the non-holder: %r %r" % (st, body))
        print("import: 119 lines (archived ones too) through non-holder %s in %.0f ms: both "
              "holders %s store it, exports identical to the source's" % (other, 1000 * imp_s,
                                                                         holders))

        # ---- the same import again: skipped ----
        st, _, body = call(cl.nodes[holders[1]], "POST", "/v1/namespaces/dst/import", data,
                           headers=ND)
        check(st in (200, 201) and body.get("imported") == 0 and body.get("skipped") == 119,
              "the same import again: %r %r" % (st, body))
        before = {h: count(cl.nodes[h], "dst") for h in holders}

        # ---- a bad line: nothing written anywhere ----
        lines = [json.dumps({"id": "new%d" % i, "embedding": cx.vec(rng, DIM)}) for i in range(10)]
        lines[6] = json.dumps({"id": "bad", "embedding": [1.0, 2.0]})
        st, _, body = call(cl.nodes[other], "POST", "/v1/namespaces/dst/import",
                           ("\n".join(lines) + "\n").encode(), headers=ND)
        check(st == 400 and body["error"].get("line") == 7, "bad line 7: %r %r" % (st, body))
        cl.wait("caught up", cl.caught_up, timeout=60)
        after = {h: count(cl.nodes[h], "dst") for h in holders}
        check(after == before, "a refused import wrote something: %r -> %r" % (before, after))
        print("import again: 119 skipped; a bad line 7: 400 naming it, nothing written on %r"
              % holders)

        # ---- larger than max_payload as one record: 413 at once ----
        big = b"".join(json.dumps({"id": "b%d" % i, "embedding": [round(x, 4) for x in
                                                                  cx.vec(rng, 384)]}).encode()
                       + b"\n" for i in range(1000))
        w0 = time.monotonic()
        st, _, body = call(a, "POST", "/v1/namespaces/wide/import", big, headers=ND)
        big_s = time.monotonic() - w0
        check(st == 413 and "max_payload" in body["error"]["message"],
              "a 1000 x 384 import: %r %r" % (st, body))
        e = cl.placement("wide")
        for n in cl.order:  # a holder answers itself; another node says it holds nothing
            st, _, _ = call(cl.nodes[n], "GET", "/v1/namespaces/wide/segments/b0", headers=LOCAL)
            check(st == 404 if e and n in e["nodes"] else st in (404, 421),
                  "an oversized import left b0 on %s: %r" % (n, st))
        print("a 1000 x 384 import (%d bytes of NDJSON): 413 in %.0f ms (%s)"
              % (len(big), 1000 * big_s, body["error"]["message"][:100]))

        # ---- a duplicate key relayed by a non-holder ----
        raw = b'{"embedding": %s, "k": 3, "k": 4}' % json.dumps(cx.vec(rng, DIM)).encode()
        st, _, body = call(cl.nodes[other], "POST", "/v1/namespaces/dst/retrieve", raw)
        check(st == 400 and body["error"]["code"] == "invalid_json",
              "a duplicate key through a non-holder: %r %r" % (st, body))
        st, _, body = call(cl.nodes[holders[0]], "POST", "/v1/namespaces/dst/retrieve", raw)
        check(st == 400 and body["error"]["code"] == "invalid_json",
              "a duplicate key on a holder: %r %r" % (st, body))
        print("a body with a duplicate key: 400 invalid_json through a non-holder and on a holder")

        # ---- the merged listing is whole or an error ----
        # a node whose advertised address answers nothing: while it counts as alive, the
        # listing through another node is 503 naming it (a list without its namespaces
        # would look whole); once it is gone, the listing is whole again
        hold = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # bound, never listening:
        hold.bind(("127.0.0.1", 0))                                 # refused, and no one
        dead = hold.getsockname()[1]                                # else gets the port
        cl.add("D", extra_env={"MNEMOD_ADVERTISE": "127.0.0.1:%d" % dead})
        cl.wait("A sees D alive", lambda: any(x["id"] == "D" and x["alive"]
                                              for x in cl.status("A")["nodes"]))
        st, hdrs, body = call(a, "GET", "/v1/namespaces")
        check(st == 503 and body["error"]["code"] == "unavailable"
              and ("127.0.0.1:%d" % dead) in body["error"]["message"],
              "listing with a node that does not answer: %r %r" % (st, body))
        check(int(hdrs.get("retry-after", "0")) >= 1, "Retry-After: %r" % hdrs)
        print("listing with a node that does not answer: 503 (%s)" % body["error"]["message"])
        cl.nodes["D"].stop()

        def whole():
            st, _, body = call(a, "GET", "/v1/namespaces")
            return st == 200 and {"src", "dst"} <= {x["name"] for x in body["namespaces"]}

        cl.wait("the listing is whole once D is gone", whole)
        hold.close()

        # ---- an answer over --max-relay-answer: 413 naming the holder, nothing cut short ----
        src_holders = cl.placement("src")["nodes"]
        r = [n for n in ("A", "B", "C") if n not in src_holders][0]
        node = cl.nodes[r]
        node.stop()
        node.env.update({"MNEMOD_MAX_RELAY_ANSWER": "4KiB", "MNEMOD_CLUSTER_PUBLISHERS": "1"})
        node.start(timeout=90)
        st, _, body = call(node, "GET", "/v1/namespaces/src/export")
        check(st == 413 and body["error"]["code"] == "payload_too_large"
              and "--max-relay-answer (4096 bytes)" in body["error"]["message"],
              "an export over --max-relay-answer through %s: %r %r" % (r, st, body))
        st, _, body = call(node, "GET", "/v1/namespaces/src/segments/s1")
        check(st == 200 and body["id"] == "s1", "a small answer relayed by %s: %r %r"
              % (r, st, body))
        st, _, body = call(node, "POST", "/v1/namespaces/fresh/segments",
                           {"id": "f", "embedding": cx.vec(rng, DIM)})
        check(st == 201, "a write through %s with --cluster-publishers 1: %r %r" % (r, st, body))
        print("an export over --max-relay-answer 4KiB through %s: 413 (%s); small answers "
              "relayed" % (r, body and "payload_too_large"))
        for n in cl.order:
            if cl.nodes[n].alive():
                cl.nodes[n].stop()
        print("PASS import test in %.1f s" % (time.monotonic() - t0))
        return 0
    except cx.Failure as e:
        print("FAIL %s" % e)
        print(cl.logs(30))
        return 1
    finally:
        cl.cleanup()


if __name__ == "__main__":
    sys.exit(main())
