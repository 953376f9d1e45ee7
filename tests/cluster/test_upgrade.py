#!/usr/bin/env python3
"""test_upgrade.py - a rolling upgrade: a namespace copy an older mnemod made, listing cursors
across it, and a real re-creation.

Usage: python3 tests/cluster/test_upgrade.py build/release/mnemod

One nats-server and two mnemod nodes A and B, each namespace on both. An older mnemod's
namespace copy (a snapshot) has no incarnation: the test plays the older node by taking the
snapshot A published, dropping its namespaces.incarnation column as an older release's
export lacks it, and publishing that as the namespace's latest snapshot (chunks and a
manifest in MNEMOD_SNAP, as a node does). B restarted with an empty data file after a trim
restores it, so B holds the namespace with incarnation 0 while A holds the one its creating
record gave it:
- a listing cursor made on either holder resumes on the other (same page), so nothing is
  refused while old and new copies live side by side;
- once the namespace is deleted and created again through the cluster, the old cursors of
  both holders are refused (400, field "after") on both, and the new ones resume on both.
Orderings and contents are asserted; durations are only printed."""
import json
import os
import random
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import clusterlib as cx  # noqa: E402
import natsclient  # noqa: E402
from clusterlib import LOCAL, call, check  # noqa: E402

DIM = 8
NS = "up"
SNAP = "MNEMOD_SNAP"


def fill(cl, node, prefix, rng):
    """NS made (PUT) and 10 segments in it through node; waits until both holders applied
    them. Returns the insert's log_seq."""
    st, _, body = call(node, "PUT", "/v1/namespaces/" + NS, {"dim": DIM})
    check(st in (200, 201), "create %s: %r %r" % (NS, st, body))
    st, _, body = call(node, "POST", "/v1/namespaces/%s/segments" % NS, {"segments": [
        {"id": "%s%d" % (prefix, i), "embedding": cx.vec(rng, DIM)} for i in range(10)]})
    check(st == 201 and body.get("log_seq"), "insert %s: %r %r" % (NS, st, body))
    seq = body["log_seq"]
    for n in cl.order:
        def applied(n=n):
            st, _, _ = call(cl.nodes[n], "GET", "/v1/namespaces/%s/segments?limit=1&min_seq=%d"
                            % (NS, seq), headers=LOCAL)
            return st == 200
        cl.wait("%s applied %s up to %d" % (n, NS, seq), applied, timeout=60)
    return seq


def page(node, after=None):
    """(status, body) of a 4-segment listing page of NS on node itself."""
    q = "limit=4" + ("&after=" + after if after else "")
    st, _, body = call(node, "GET", "/v1/namespaces/%s/segments?%s" % (NS, q), headers=LOCAL)
    return st, body


def ids(body):
    return [s["id"] for s in body["segments"]]


def play_older_snapshot(nc):
    """NS's latest snapshot, republished as an older mnemod writes it: its namespaces row
    without the incarnation column. Returns the manifest published."""
    hexns = NS.encode().hex()
    raw = nc.last(SNAP, "mnemod.snap.m." + hexns)
    check(raw is not None, "no snapshot of %s in %s" % (NS, SNAP))
    man = json.loads(raw)
    data = b"".join(nc.last(SNAP, "mnemod.snap.c.%s.%s.%d" % (hexns, man["id"], i)) or b""
                    for i in range(man["chunks"]))
    check(len(data) == man["bytes"], "snapshot of %s: %d bytes, manifest says %d"
          % (NS, len(data), man["bytes"]))
    fd, path = tempfile.mkstemp(suffix=".nssnap")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        db = sqlite3.connect(path)
        cols = [r[1] for r in db.execute("PRAGMA table_info(namespaces)")]
        check("incarnation" in cols and "created_ms" in cols,
              "this mnemod's snapshot has no incarnation to drop: %r" % cols)
        inc = db.execute("SELECT incarnation FROM namespaces").fetchone()[0]
        check(inc != 0, "the snapshot's namespace has incarnation 0 already")
        db.execute("ALTER TABLE namespaces DROP COLUMN incarnation")
        db.commit()
        db.execute("VACUUM")
        db.close()
        with open(path, "rb") as f:
            old = f.read()
    finally:
        os.unlink(path)
    sid = man["id"] + "-older"
    step = 256 * 1024  # well under the default max_payload of 1 MB
    chunks = [old[i:i + step] for i in range(0, len(old), step)]
    for i, c in enumerate(chunks):
        nc.publish("mnemod.snap.c.%s.%s.%d" % (hexns, sid, i), c)
    man2 = dict(man, id=sid, chunks=len(chunks), bytes=len(old), node="older")
    nc.publish("mnemod.snap.m." + hexns, json.dumps(man2).encode())
    back = json.loads(nc.last(SNAP, "mnemod.snap.m." + hexns))
    check(back["id"] == sid, "the older snapshot is not the latest: %r" % back)
    return man2


def main():
    if len(sys.argv) < 2:
        print("usage: test_upgrade.py path/to/mnemod", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    rng = random.Random(23)
    cl = cx.Cluster(sys.argv[1], n_nats=1, stream_replicas=1, max_payload=None,
                    env={"MNEMOD_NAMESPACE_REPLICAS": "2", "MNEMOD_LOG_LEVEL": "warn"})
    nc = None
    try:
        cl.start_nats()
        for name in ("A", "B"):
            cl.add(name)
        cl.wait("both nodes see both alive", lambda: all(
            sum(1 for x in cl.status(n)["nodes"] if x["alive"]) == 2 for n in cl.order))
        a, b = cl.nodes["A"], cl.nodes["B"]
        fill(cl, a, "u", rng)
        check(sorted(cl.placement(NS)["nodes"]) == ["A", "B"], "placement of %s: %r"
              % (NS, cl.placement(NS)))

        # ---- B down, the log trimmed: B's restart has to restore the snapshot ----
        b.stop()
        cl.wait("A sees B stopped", lambda: not any(
            x["alive"] for x in cl.status("A")["nodes"] if x["id"] == "B"))
        def trimmed():  # the nodes' positions and the stream's ends are refreshed each second
            st, _, snap = call(a, "POST", "/v1/cluster/snapshot", {"trim": True})
            check(st == 200, "snapshot + trim: %r %r" % (st, snap))
            return snap.get("trimmed_below")
        cl.wait("a trim of the log below %s's last record" % NS, trimmed, timeout=30, step=0.5)
        nc = natsclient.Nats(cl.nats.url(0))
        man = play_older_snapshot(nc)
        for f in os.listdir(b.dir):
            if f.startswith("mnemod.db"):
                os.unlink(os.path.join(b.dir, f))
        b.start(timeout=90)
        cl.wait("B has %s live" % NS, lambda: cl.settled(["A", "B"], [NS]), timeout=60)
        st, _, cs = call(b, "GET", "/v1/cluster")
        check(st == 200 and cs["counters"]["bootstraps"] >= 1,
              "B did not restore the snapshot: %r" % cs.get("counters"))

        # ---- the copies differ only in the incarnation: cursors cross them ----
        sa, pa = page(a)
        sb, pb = page(b)
        check(sa == 200 and sb == 200 and ids(pa) == ids(pb) == ["u0", "u1", "u2", "u3"],
              "first pages: A %r %r, B %r %r" % (sa, pa, sb, pb))
        check(pa["next"][16:32] != "0" * 16, "A's cursor names no incarnation: %s" % pa["next"])
        check(pb["next"][16:32] == "0" * 16, "B restored the older copy with an incarnation "
              "(the snapshot played was not used?): %s" % pb["next"])
        for src, cur in (("A", pa["next"]), ("B", pb["next"])):
            for n in ("A", "B"):
                st, body = page(cl.nodes[n], cur)
                check(st == 200 and ids(body) == ["u4", "u5", "u6", "u7"],
                      "%s's cursor on %s: %r %r" % (src, n, st, body))
        print("a copy without incarnation (snapshot %s) restored on B; the cursors of A and B "
              "resume on both" % man["id"])

        # ---- deleted and created again: the old cursors are refused everywhere ----
        st, _, body = call(a, "DELETE", "/v1/namespaces/" + NS)
        check(st == 200, "delete %s: %r %r" % (NS, st, body))
        fill(cl, a, "v", rng)
        for src, cur in (("A", pa["next"]), ("B", pb["next"])):
            for n in ("A", "B"):
                st, body = page(cl.nodes[n], cur)
                check(st == 400 and body["error"]["code"] == "invalid_field"
                      and body["error"].get("field") == "after",
                      "%s's old cursor on %s after %s was made again: %r %r" % (src, n, NS, st, body))
        sa, qa = page(a)
        sb, qb = page(b)
        check(sa == 200 and sb == 200 and ids(qa) == ids(qb) == ["v0", "v1", "v2", "v3"],
              "first pages again: %r %r" % (qa, qb))
        for src, cur in (("A", qa["next"]), ("B", qb["next"])):
            for n in ("A", "B"):
                st, body = page(cl.nodes[n], cur)
                check(st == 200 and ids(body) == ["v4", "v5", "v6", "v7"],
                      "%s's new cursor on %s: %r %r" % (src, n, st, body))
        print("%s deleted and created again: the old cursors of A and B refused on both, the "
              "new ones resume on both" % NS)
        for n in cl.order:
            if cl.nodes[n].alive():
                cl.nodes[n].stop()
        print("PASS upgrade test in %.1f s" % (time.monotonic() - t0))
        return 0
    except (cx.Failure, OSError) as e:
        print("FAIL %s" % e)
        print(cl.logs(30))
        return 1
    finally:
        if nc:
            nc.close()
        cl.cleanup()


if __name__ == "__main__":
    sys.exit(main())
