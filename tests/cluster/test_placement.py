#!/usr/bin/env python3
"""test_placement.py - namespaces placed on replica groups: placement and routing, a holder
killed mid-write, a move under write load, a node added, a node drained and removed, and
the log trimmed automatically while a node is down (it re-bootstraps from snapshots).

Usage: python3 tests/cluster/test_placement.py build/release/mnemod

Three nats-server processes (JetStream, stream replicas 3) and four, then five mnemod nodes
on loopback with 2 nodes per namespace, an API key (relayed requests must carry it) and a
small --log-trim-size so the automatic trim runs during the test. Every check that involves
a kill, a move or a trim reads each holder's own copy (requests with X-Mnemod-Forwarded are
never relayed) and asserts that every acknowledged write is there exactly once, in write
order, and that all holders give the same top-10. Durations are printed, never asserted."""
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import clusterlib as cx  # noqa: E402
from clusterlib import LOCAL, call, check  # noqa: E402

DIM = 8
KEY = "test-key-0123456789"
AUTH = {"Authorization": "Bearer " + KEY}
AUTH_LOCAL = dict(AUTH, **LOCAL)


def main():
    if len(sys.argv) < 2:
        print("usage: test_placement.py path/to/mnemod", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    rng = random.Random(int(os.environ.get("CLUSTER_TEST_SEED", "1")))
    env = {"MNEMOD_NAMESPACE_REPLICAS": "2", "MNEMOD_API_KEY": KEY,
           "MNEMOD_CLUSTER_WRITE_TIMEOUT": "5s", "MNEMOD_LOG_TRIM_INTERVAL": "0",
           "MNEMOD_LOG_TRIM_SIZE": "64KiB", "MNEMOD_NODE_DEAD_AFTER": "10m",
           "MNEMOD_MAX_MOVES": "4", "MNEMOD_LOG_LEVEL": "info"}
    cl = cx.Cluster(sys.argv[1], env=env)

    def req(node, method, path, body=None, headers=None, timeout=60.0):
        h = dict(AUTH)
        h.update(headers or {})
        return call(node, method, path, body, headers=h, timeout=timeout)

    # the harness calls carry no key: give every Server call the key by default
    orig_call = cx.harness.Server.call

    def call_with_key(self, method, path, body=None, headers=None, **kw):
        h = dict(AUTH)
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        return orig_call(self, method, path, body, headers=h, **kw)

    cx.harness.Server.call = call_with_key
    try:
        cl.start_nats()
        for name in "ABCD":
            cl.add(name)
        print("cluster: 3 nats-server + 4 mnemod (2 nodes per namespace) up in %.1f s"
              % (time.monotonic() - t0))
        base = int(time.time() * 1000) - 3600 * 1000
        acked = {}

        # ---- placement and routing ----
        names = ["p%02d" % i for i in range(12)]
        for b in range(4):
            for ns in names:
                segs = [{"id": "%s-%06d" % (ns, b * 25 + i), "embedding": cx.vec(rng, DIM),
                         "timestamp": (base + b * 25 + i) / 1000.0} for i in range(25)]
                node = cl.any(rng)
                st, _, body = req(node, "POST", "/v1/namespaces/%s/segments" % ns,
                                  {"segments": segs})
                check(st == 201, "insert %s via %s: %r %r" % (ns, node.port, st, body))
                check(body["log_seq"] > 0, "no log_seq")
                acked.setdefault(ns, []).extend(s["id"] for s in segs)
        cl.wait("placement settled", lambda: cl.settled(cl.live(), names))
        cl.wait("every node caught up", cl.caught_up)
        held = {n: set() for n in cl.order}
        for ns in names:
            e = cl.placement(ns)
            check(len(e["nodes"]) == 2 and len(set(e["nodes"])) == 2,
                  "%s placed on %r" % (ns, e["nodes"]))
            for h in e["nodes"]:
                held[h].add(ns)
        total_local = 0
        for n in cl.order:
            st, _, body = req(cl.nodes[n], "GET", "/v1/namespaces", headers=LOCAL)
            check(st == 200, "local listing on %s: %r" % (n, st))
            mine = {x["name"]: x["count"] for x in body["namespaces"]}
            check(set(mine) == held[n], "node %s lists %r, holds %r" % (n, sorted(mine),
                                                                        sorted(held[n])))
            total_local += sum(mine.values())
            # a 503 (a node did not answer its part) is retried; a 200 must be whole
            deadline = time.monotonic() + 30
            while True:
                st, _, body = req(cl.nodes[n], "GET", "/v1/namespaces")
                if st != 503 or time.monotonic() > deadline:
                    break
                time.sleep(0.25)
            check(st == 200, "merged listing on %s: %r %r" % (n, st, body))
            merged = {x["name"]: x["count"] for x in body["namespaces"]}
            check(merged == {ns: 100 for ns in names}, "merged listing on %s: %r" % (n, merged))
        check(total_local == 2 * 100 * len(names), "stored %d segments, want %d"
              % (total_local, 2 * 100 * len(names)))
        per_node = {n: len(held[n]) for n in cl.order}
        print("placement: %d namespaces on 2 of 4 nodes each %r; every node lists exactly what "
              "it holds; merged listing complete on every node; %d segments stored for %d "
              "written" % (len(names), per_node, total_local, 100 * len(names)))
        # any node answers any namespace, like its holders
        for ns in names:
            e = cl.placement(ns)
            others = [n for n in cl.order if n not in e["nodes"]]
            q = {"embedding": cx.vec(rng, DIM), "k": 5}
            st1, _, a = req(cl.nodes[others[0]], "POST", "/v1/namespaces/%s/retrieve" % ns, q)
            st2, _, b = req(cl.nodes[e["nodes"][0]], "POST", "/v1/namespaces/%s/retrieve" % ns, q,
                            headers=LOCAL)
            check(st1 == 200 and st2 == 200, "%s: retrieve via %s %r, on holder %r"
                  % (ns, others[0], st1, st2))
            check([r["id"] for r in a["results"]] == [r["id"] for r in b["results"]],
                  "%s: relayed answer differs from the holder's" % ns)
            st, _, _ = call(cl.nodes[others[0]], "GET", "/v1/namespaces/" + ns,
                            headers={"Authorization": None})
            check(st == 401, "%s without the key through a non-holder: %r" % (ns, st))
            st, _, body = req(cl.nodes[others[0]], "GET", "/v1/namespaces/" + ns, headers=LOCAL)
            check(st == 421 and body["error"]["code"] == "misdirected",
                  "%s asked of a non-holder directly: %r %r" % (ns, st, body))
        # read-your-writes through non-holders with min_seq
        for i in range(10):
            ns = names[i % len(names)]
            holders = cl.placement(ns)["nodes"]
            w = cl.nodes[rng.choice(cl.order)]
            sid = "ryw-%d" % i
            st, _, body = req(w, "POST", "/v1/namespaces/%s/segments" % ns,
                              {"id": sid, "embedding": cx.vec(rng, DIM)})
            check(st == 201, "ryw insert: %r %r" % (st, body))
            acked[ns].append(None)  # not in the timestamp windows: counted separately
            r = cl.nodes[rng.choice([n for n in cl.order if n not in holders] or cl.order)]
            st, _, got = req(r, "GET", "/v1/namespaces/%s/segments/%s?min_seq=%d"
                             % (ns, sid, body["log_seq"]))
            check(st == 200 and got["id"] == sid, "ryw through a non-holder: %r %r" % (st, got))
        for ns in names:
            acked[ns] = [x for x in acked[ns] if x is not None]
        print("routing: every namespace answered through a non-holder as on its holder; "
              "the API key is relayed (401 without); 10/10 read-your-writes with min_seq "
              "through non-holders")

        # ---- a holder SIGKILLed mid-write ----
        w = cx.Writer(cl, "k1", base, DIM, 50, 24, seed=5, pause=0.02)
        w.start()
        cl.wait("k1 placed", lambda: cl.placement("k1"), timeout=30, step=0.05)
        while w.progress < 6:
            check(w.error is None, "writer: %r" % (w.error,))
            time.sleep(0.02)
        victim = cl.placement("k1")["nodes"][0]
        t_kill = time.monotonic()
        cl.nodes[victim].kill9()
        print("killed node %s (a holder of k1) at batch %d/24" % (victim, w.progress))
        w.join(240)
        check(not w.is_alive() and w.error is None, "writer k1: %r" % (w.error,))
        gap = w.max_gap(since=t_kill - 1)
        cl.nodes[victim].start(timeout=90)
        cl.wait("settled after the restart", lambda: cl.settled(cl.live(), names + ["k1"]),
                timeout=90)
        cx.check_holders(cl, "k1", w.acked, base, DIM, rng, "k1 after a holder kill")
        for ns in names:
            cx.check_holders(cl, ns, acked[ns], base, DIM, rng, ns)
        print("holder kill: 24 batches acknowledged (failed attempts %r, longest gap between "
              "acks %.2f s); %s restarted and caught up; every acknowledged write exactly once "
              "on both holders of every namespace, same top-10" % (w.failures, gap, victim))

        # ---- a move under write load ----
        mv_base = base + 100000
        pre = cx.Writer(cl, "mv", mv_base, DIM, 100, 20, seed=7)
        pre.run()
        check(pre.error is None, "preload mv: %r" % (pre.error,))
        w = cx.Writer(cl, "mv", mv_base, DIM, 50, 40, seed=8, pause=0.05, start=len(pre.acked))
        w.acked = list(pre.acked)
        e = cl.placement("mv")
        src = e["nodes"][0]
        dst = [n for n in cl.order if n not in e["nodes"]][0]
        st, _, body = req(cl.any(rng), "POST", "/v1/cluster/move",
                          {"namespace": "nope", "from": src, "to": dst})
        check(st == 404, "move of an unknown namespace: %r %r" % (st, body))
        st, _, body = req(cl.any(rng), "POST", "/v1/cluster/move",
                          {"namespace": "mv", "from": dst, "to": src})
        check(st == 400, "move from a non-holder: %r %r" % (st, body))
        st, _, body = req(cl.any(rng), "POST", "/v1/cluster/move", {"namespace": "mv"})
        check(st == 400, "move without from/to: %r %r" % (st, body))
        w.start()
        while w.progress < 5:
            time.sleep(0.02)
        t_move = time.monotonic()
        st, _, body = req(cl.any(rng), "POST", "/v1/cluster/move",
                          {"namespace": "mv", "from": src, "to": dst})
        check(st == 200 and body["join"] == dst, "move mv %s -> %s: %r %r" % (src, dst, st, body))
        st, _, body = req(cl.any(rng), "POST", "/v1/cluster/move",
                          {"namespace": "mv", "from": src, "to": dst})
        check(st in (409, 400), "a second move of mv while moving: %r %r" % (st, body))
        cl.wait("mv switched to %s" % dst,
                lambda: (lambda e: e and dst in e["nodes"] and src not in e["nodes"]
                         and not e.get("join"))(cl.placement("mv")), timeout=120, step=0.05)
        t_switched = time.monotonic()
        w.join(240)
        check(not w.is_alive() and w.error is None, "writer mv: %r" % (w.error,))
        cl.wait("mv settled", lambda: cl.settled(cl.live(), ["mv"]), timeout=60)
        cx.check_holders(cl, "mv", w.acked, mv_base, DIM, rng, "mv after the move")
        # the old holder forgets it after its grace period
        def forgot_mv():
            st, _, body = req(cl.nodes[src], "GET", "/v1/namespaces", headers=LOCAL)
            check(st == 200, "listing on %s: %r %r" % (src, st, body))  # retried by wait
            return "mv" not in [x["name"] for x in body["namespaces"]]
        cl.wait("%s forgot mv" % src, forgot_mv, timeout=60)
        print("move under load: mv (%d segments) moved %s -> %s in %.1f s while written; %d "
              "batches acknowledged meanwhile (failed attempts %r), longest gap between acks "
              "%.2f s; every acknowledged write exactly once on the new holders, same top-10; "
              "%s forgot it" % (len(w.acked), src, dst, t_switched - t_move, w.progress,
                                w.failures, w.max_gap(since=t_move), src))
        every = names + ["k1", "mv"]

        # ---- a node added: the rebalancer moves some namespaces onto it ----
        cl.add("E")
        t_add = time.monotonic()

        def e_holds():
            body = cl.status("E")
            return [x["name"] for x in body["namespaces"] if "E" in x["nodes"] and not
                    x.get("join")] if cl.settled(cl.live(), every) else None

        got = cl.wait("the rebalancer placing namespaces on E", e_holds, timeout=180, step=0.5)
        print("node added: E holds %d of %d namespaces after %.1f s of rebalancing (moves "
              "started on the lease holder: %d)" % (len(got), len(every),
                                                  time.monotonic() - t_add,
                                                  sum(cl.status(n)["counters"]["moves_started"]
                                                      for n in cl.live())))
        check(len(got) >= 1, "nothing moved to the new node")

        # ---- a node drained, stopped and removed ----
        st, _, body = req(cl.any(rng), "POST", "/v1/cluster/nodes/B/drain", {"drain": True})
        check(st == 200 and body["draining"] is True, "drain B: %r %r" % (st, body))
        t_drain = time.monotonic()
        cl.wait("B drained",
                lambda: cl.settled(cl.live(), every) and
                all("B" not in x["nodes"] for x in cl.status("A")["namespaces"]),
                timeout=240, step=0.5)
        st, _, body = req(cl.nodes["A"], "DELETE", "/v1/cluster/nodes/B")
        check(st == 409, "forget B while it runs: %r %r" % (st, body))
        cl.nodes["B"].stop()
        time.sleep(6)  # its heartbeat goes stale
        st, _, body = req(cl.nodes["A"], "DELETE", "/v1/cluster/nodes/B")
        check(st == 200, "forget B: %r %r" % (st, body))
        check("B" not in [n["id"] for n in cl.status("A")["nodes"]], "B still registered")
        print("node removed: B drained in %.1f s, stopped, forgotten" % (time.monotonic() - t_drain))
        for ns in names:
            cx.check_holders(cl, ns, acked[ns], base, DIM, rng, ns + " after the rebalancing")
        cx.check_holders(cl, "mv", w.acked, mv_base, DIM, rng, "mv after the rebalancing")

        # ---- the log trimmed while a node is down; it re-bootstraps from snapshots ----
        victim = "C"
        mine = [x["name"] for x in cl.status(victim)["namespaces"] if victim in x["nodes"]
                and x["name"] in names]
        check(mine, "C holds none of the p namespaces")
        streams_of = {ns: cl.placement(ns)["stream"] for ns in mine}
        cl.nodes[victim].stop()
        more = 0
        t_trim = time.monotonic()
        extra_base = int(time.time() * 1000)  # after the read-your-writes inserts ("now")
        for ns in names:
            acked.setdefault(ns + "+", [])
        first_new = {}  # stream -> log_seq of the first record written while C is down
        deadline = time.monotonic() + 180
        trimmed = []
        while not trimmed:
            check(time.monotonic() < deadline, "the log was not trimmed past C's needs")
            for ns in mine:
                k = len(acked[ns + "+"])
                segs = [{"id": "%s-x%06d" % (ns, k + i), "embedding": cx.vec(rng, DIM),
                         "timestamp": (extra_base + k + i) / 1000.0} for i in range(25)]
                st, _, body = req(cl.any(rng), "POST", "/v1/namespaces/%s/segments" % ns,
                                  {"segments": segs})
                check(st == 201, "write while C is down: %r %r" % (st, body))
                acked[ns + "+"].extend(s["id"] for s in segs)
                first_new.setdefault(streams_of[ns], body["log_seq"])
                more += 1
            floors = {}  # what the lease holder trimmed below (each namespace keeps its last)
            for n in cl.live():
                for x in cl.status(n)["streams"]:
                    floors[x["name"]] = max(floors.get(x["name"], 0), x.get("trimmed_below", 0))
            trimmed = [n for n, f in first_new.items() if floors.get(n, 0) > f]
            time.sleep(0.2)
        print("automatic trim: %d more writes while C was down; %s trimmed past records C "
              "needs after %.1f s" % (more, trimmed, time.monotonic() - t_trim))
        t_back = time.monotonic()
        cl.nodes[victim].spawn()
        seen_stale = False
        while True:
            st, _, body = call(cl.nodes[victim], "GET", "/healthz", timeout=5)
            if st == 503 and isinstance(body, dict) and body.get("status") == "stale":
                seen_stale = True
            if st == 200:
                break
            check(time.monotonic() - t_back < 120, "C not healthy within 120 s: %r" % (body,))
            time.sleep(0.05)
        cl.wait("C caught up", lambda: cl.settled(cl.live(), every), timeout=120)
        boots = cl.status(victim)["counters"]["bootstraps"]
        check(boots >= 1, "C did not restore any snapshot (bootstraps %d)" % boots)
        for ns in mine:
            both = acked[ns] + acked[ns + "+"]
            e = cl.placement(ns)
            for h in e["nodes"]:
                got = cx.list_local(cl.nodes[h], ns, base, 100, DIM) + \
                    cx.list_local(cl.nodes[h], ns, extra_base, len(acked[ns + "+"]), DIM)
                got_ids = [i for _, i in sorted(got)]
                check(got_ids == both, "%s on %s after the trim: %d segments, want %d"
                      % (ns, h, len(got_ids), len(both)))
        print("re-bootstrap: C came back in %.1f s after restoring %d namespace snapshot(s)%s; "
              "its namespaces hold every acknowledged write exactly once, like the other holder"
              % (time.monotonic() - t_back, boots,
                 " (/healthz said stale meanwhile)" if seen_stale else ""))
        for n in cl.live():
            cl.nodes[n].stop()
        print("PASS placement test in %.1f s" % (time.monotonic() - t0))
        return 0
    except cx.Failure as e:
        print("FAIL %s" % e)
        for n in cl.live():
            try:
                body = cl.status(n)
                print("status %s: streams %r; nodes %r; not live %r" % (
                    n, [(x["name"], x["first_seq"], x["last_seq"], x["applied_seq"],
                         x.get("trimmed_below")) for x in body["streams"]],
                    [(x["id"], x["applied"]) for x in body["nodes"]],
                    [(x["name"], x["state"], x.get("reason")) for x in body["namespaces"]
                     if x["state"] != "live"]))
            except Exception as e2:
                print("status %s: %r" % (n, e2))
        print(cl.logs(25))
        return 1
    finally:
        cx.harness.Server.call = orig_call
        cl.cleanup()


if __name__ == "__main__":
    sys.exit(main())
