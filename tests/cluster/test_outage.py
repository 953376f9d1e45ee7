#!/usr/bin/env python3
"""test_outage.py - writes never starve reads, and oversized writes are refused at once.

Usage: python3 tests/cluster/test_outage.py build/release/mnemod

One nats-server (JetStream, its default max_payload of 1 MB) and one mnemod node with 4
worker threads and --cluster-write-timeout 3s.
- 8 reads with a min_seq the node has not reached wait (then 503 with Retry-After) without
  holding the 4 workers: 20 retrieves on the same node answer meanwhile, every one of them
  before the first of those reads is answered.
- NATS frozen (SIGSTOP: connected, silent): 12 concurrent writes wait for the log; while
  they are all still pending, retrieves on the same node keep answering (every one of them
  before the first write is answered). A write whose record went to the log unanswered then
  answers 504 write_timeout without Retry-After (the woken log may store it: a client must
  not send it again); the ones queued behind it, never sent, 503 with Retry-After, and they
  are not stored.
- NATS frozen again: 8 reads of namespaces the node has no entry for wait for their
  placement reads; namespace listings on the same node answer meanwhile, every one before
  the first of those reads is answered (503).
- NATS killed: /healthz turns 503 "stale" with the reason, writes are refused at once with
  503, reads keep answering; NATS back: healthy again, writes work, every write
  acknowledged before the outage is still there.
- A 1000 x 384 batch and a 1 MiB text are over the NATS max_payload: 413 naming the limit,
  nothing written; a 200 x 384 batch is fine.
- A second node listening on [::] advertises [::1]:PORT (not the unspecified address), and
  the first relays a namespace placed on it there.
Orderings are asserted, durations only printed."""
import os
import random
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import clusterlib as cx  # noqa: E402
from clusterlib import call, check  # noqa: E402

DIM = 8


def main():
    if len(sys.argv) < 2:
        print("usage: test_outage.py path/to/mnemod", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    rng = random.Random(3)
    cl = cx.Cluster(sys.argv[1], n_nats=1, stream_replicas=1, max_payload=None,
                    env={"MNEMOD_NAMESPACE_REPLICAS": "1", "MNEMOD_CLUSTER_WRITE_TIMEOUT": "3s",
                         "MNEMOD_THREADS": "4", "MNEMOD_LOG_LEVEL": "warn"})
    try:
        cl.start_nats()
        a = cl.add("solo")
        acked = []
        for i in range(20):
            sid = "seg-%03d" % i
            st, _, body = call(a, "POST", "/v1/namespaces/mem/segments",
                               {"id": sid, "embedding": cx.vec(rng, DIM)})
            check(st == 201, "insert: %r %r" % (st, body))
            acked.append(sid)
        q = {"embedding": [1.0] + [0.0] * (DIM - 1), "k": 5}

        # ---- reads waiting for a min_seq must not hold the threads other reads need ----
        st, _, body = call(a, "POST", "/v1/namespaces/mem/segments",
                           {"id": "seg-last", "embedding": cx.vec(rng, DIM)})
        check(st == 201 and body.get("log_seq"), "insert: %r %r" % (st, body))
        acked.append("seg-last")
        ahead = body["log_seq"] + 1000000  # a position the log never reaches here
        waited = {}

        def wait_read(i):
            st, hdr, body = call(a, "GET", "/v1/namespaces/mem?min_seq=%d" % ahead, timeout=60)
            waited[i] = (time.monotonic(), st, hdr.get("retry-after"), body)

        waiters = [threading.Thread(target=wait_read, args=(i,)) for i in range(8)]
        for t in waiters:
            t.start()

        def waiting():
            # the node counts the reads waiting; a node whose workers wait does not (and its
            # status, served by a worker, answers only once some waits are over)
            st, _, body = call(a, "GET", "/v1/cluster", timeout=30)
            return st == 200 and body["counters"].get("pending_reads", 8) >= 8

        cl.wait("the 8 reads waiting for min_seq", waiting, step=0.02)
        reads = []
        for _ in range(20):
            r0 = time.monotonic()
            st, _, body = call(a, "POST", "/v1/namespaces/mem/retrieve", q, timeout=30)
            reads.append(time.monotonic() - r0)
            check(st == 200 and len(body["results"]) == 5, "retrieve beside min_seq waits: %r %r"
                  % (st, body))
        t_reads_done = time.monotonic()
        for t in waiters:
            t.join(60)
        check(len(waited) == 8 and min(x[0] for x in waited.values()) >= t_reads_done,
              "a min_seq read was answered before the other reads were done: they waited for "
              "the workers those held")
        for i, (_, st, ra, body) in sorted(waited.items()):
            check(st == 503 and ra and "min_seq" in body["error"]["message"],
                  "min_seq read %d: %r (Retry-After %r) %r" % (i, st, ra, body))
        st, _, body = call(a, "GET", "/v1/namespaces/mem?min_seq=%d" % (ahead - 1000000))
        check(st == 200 and body["count"] == len(acked), "min_seq reached: %r %r" % (st, body))
        lat = sorted(reads)
        print("8 reads waiting for an unreached min_seq; 20 retrieves answered meanwhile (median "
              "%.1f ms, max %.1f ms), all before any of them; they then answered 503 + "
              "Retry-After" % (1000 * lat[len(lat) // 2], 1000 * lat[-1]))

        # ---- NATS frozen: pending writes must not hold the threads reads need ----
        nats_pid = cl.nats.procs[0].pid
        os.kill(nats_pid, signal.SIGSTOP)
        results = {}
        answered = []

        def write(i):
            st, hdr, body = call(a, "POST", "/v1/namespaces/mem/segments",
                                 {"id": "frozen-%d" % i, "embedding": cx.vec(random.Random(i), DIM)},
                                 timeout=60)
            answered.append(time.monotonic())
            results[i] = (st, hdr.get("retry-after"), body)

        writes0 = cl.status("solo")["counters"]["writes"]
        writers = [threading.Thread(target=write, args=(i,)) for i in range(12)]
        t_w = time.monotonic()
        for t in writers:
            t.start()
        # the writes are in (the node counts each as it queues it for the log), each waiting
        # for the log: the retrieves below run while all 12 are pending
        cl.wait("the 12 writes queued for the frozen log",
                lambda: cl.status("solo")["counters"]["writes"] >= writes0 + 12, step=0.02)
        reads = []
        for _ in range(20):
            r0 = time.monotonic()
            st, _, body = call(a, "POST", "/v1/namespaces/mem/retrieve", q, timeout=30)
            reads.append((time.monotonic() - r0, st))
            check(st == 200 and len(body["results"]) == 5, "retrieve while NATS is frozen: %r %r"
                  % (st, body))
        t_reads_done = time.monotonic()
        for t in writers:
            t.join(60)
        check(not answered or min(answered) >= t_reads_done,
              "a write was answered before the reads were done: they did not wait for the log")
        # a write whose record went to the log unanswered may be stored: 504 write_timeout,
        # no Retry-After (not to be sent again); one that never got that far (queued behind
        # it, the namespace's last sequence unreadable): 503 + Retry-After, nothing written
        unconfirmed = set()
        for i, (st, ra, body) in sorted(results.items()):
            if st == 504:
                check(ra is None and body["error"]["code"] == "write_timeout"
                      and "read before sending it again" in body["error"]["message"],
                      "write %d with NATS frozen: %r (Retry-After %r) %r" % (i, st, ra, body))
                unconfirmed.add(i)
            else:
                check(st == 503 and ra and "nothing was written" in body["error"]["message"],
                      "write %d with NATS frozen: %r (Retry-After %r) %r" % (i, st, ra, body))
        check(unconfirmed, "no write reached the frozen log: %r" % results)
        os.kill(nats_pid, signal.SIGCONT)
        lat = sorted(x[0] for x in reads)
        print("NATS frozen: 12 writes pending; 20 retrieves on the same node answered meanwhile "
              "(median %.1f ms, max %.1f ms), all before any write; the first of them answered "
              "after %.1f s" % (1000 * lat[len(lat) // 2], 1000 * lat[-1],
                                                  min(answered) - t_w))
        cl.wait("writes working again", lambda: call(
            a, "POST", "/v1/namespaces/mem/segments",
            {"id": "after-freeze", "embedding": cx.vec(rng, DIM)})[0] == 201, timeout=60)
        acked.append("after-freeze")
        # what the woken log did with them: a 503's write is not there, a 504's may be (its
        # record went out under one message id on every attempt: stored once at most)
        stored = 0
        for i in range(12):
            st = call(a, "GET", "/v1/namespaces/mem/segments/frozen-%d" % i)[0]
            want = (200, 404) if i in unconfirmed else (404,)
            check(st in want, "frozen write %d (%s) after the log woke: %r"
                  % (i, "504" if i in unconfirmed else "503", st))
            stored += st == 200
        print("%d of the frozen writes answered 504 write_timeout, the rest 503 (nothing "
              "written); the woken log stored %d of the 504s" % (len(unconfirmed), stored))

        # ---- NATS frozen: placement reads must not hold the threads listings need ----
        os.kill(nats_pid, signal.SIGSTOP)
        looked = {}

        def unknown(i):  # a namespace this node has no entry for: its placement is read
            st, _, body = call(a, "GET", "/v1/namespaces/unknown-%d" % i, timeout=60)
            looked[i] = (time.monotonic(), st, body)

        lookers = [threading.Thread(target=unknown, args=(i,)) for i in range(8)]
        for t in lookers:
            t.start()

        def resolving():
            # the node counts the placement reads under way; a node that reads them on its
            # own pool does not
            st, _, body = call(a, "GET", "/v1/cluster", timeout=30)
            return st == 200 and body["counters"].get("pending_resolves", 8) >= 8

        cl.wait("the 8 placement reads waiting for the frozen NATS", resolving, step=0.02)
        for _ in range(5):
            st, _, body = call(a, "GET", "/v1/namespaces", timeout=30)
            check(st == 200 and "mem" in [x["name"] for x in body["namespaces"]],
                  "the namespace listing while placement reads wait: %r %r" % (st, body))
        t_lists_done = time.monotonic()
        for t in lookers:
            t.join(60)
        check(len(looked) == 8 and min(x[0] for x in looked.values()) >= t_lists_done,
              "a placement read was answered before the listings were done: they waited for "
              "the threads those held")
        for i, (_, st, body) in sorted(looked.items()):
            check(st == 503, "unknown namespace %d with NATS frozen: %r %r" % (i, st, body))
        os.kill(nats_pid, signal.SIGCONT)
        print("NATS frozen: 8 placement reads of unknown namespaces pending; 5 namespace "
              "listings answered meanwhile, all before any of them; they then answered 503")
        cl.wait("writes working again", lambda: call(
            a, "POST", "/v1/namespaces/mem/segments",
            {"id": "after-freeze-2", "embedding": cx.vec(rng, DIM)})[0] == 201, timeout=60)
        acked.append("after-freeze-2")

        # ---- NATS gone: honest health, prompt refusals, reads go on ----
        cl.nats.kill(0)
        t_k = time.monotonic()
        body = cl.wait("/healthz stale", lambda: (lambda r: r[0] == 503 and r[2])(
            call(a, "GET", "/healthz")), timeout=30, step=0.1)
        check(body.get("status") == "stale" and "NATS" in body.get("reason", ""),
              "healthz without NATS: %r" % (body,))
        st, _, cbody = call(a, "GET", "/v1/cluster")
        check(st == 200 and cbody["healthy"] is False and "NATS" in cbody["reason"],
              "/v1/cluster without NATS: %r" % (cbody,))
        w0 = time.monotonic()
        st, hdr, body = call(a, "POST", "/v1/namespaces/mem/segments",
                             {"id": "refused", "embedding": cx.vec(rng, DIM)})
        refuse_s = time.monotonic() - w0
        check(st == 503 and hdr.get("retry-after"), "write without NATS: %r %r" % (st, body))
        st, _, body = call(a, "POST", "/v1/namespaces/mem/retrieve", q)
        check(st == 200, "read without NATS: %r" % st)
        print("NATS killed: /healthz 503 stale after %.1f s (%s); a write refused in %.0f ms; "
              "reads answer" % (time.monotonic() - t_k, body and cbody["reason"],
                                1000 * refuse_s))
        cl.nats.start(0)
        cl.nats.wait_port(0)
        cl.wait("healthy again", lambda: call(a, "GET", "/healthz")[0] == 200, timeout=60)
        cl.wait("writes after the outage", lambda: call(
            a, "POST", "/v1/namespaces/mem/segments",
            {"id": "after-outage", "embedding": cx.vec(rng, DIM)})[0] == 201, timeout=60)
        acked.append("after-outage")
        for sid in acked:
            st, _, body = call(a, "GET", "/v1/namespaces/mem/segments/" + sid)
            check(st == 200, "acknowledged %s missing after the outage: %r" % (sid, st))
        st, _, body = call(a, "GET", "/v1/namespaces/mem/segments/refused")
        check(st == 404, "the refused write was stored: %r" % st)
        print("NATS back: healthy, writes work, all %d acknowledged writes present, the refused "
              "one absent" % len(acked))

        # ---- payload limits ----
        big = {"segments": [{"id": "b-%04d" % i,
                             "embedding": [round(x, 4) for x in cx.vec(rng, 384)]}
                            for i in range(1000)]}
        w0 = time.monotonic()
        st, _, body = call(a, "POST", "/v1/namespaces/wide/segments", big)
        big_s = time.monotonic() - w0
        check(st == 413 and "max_payload" in body["error"]["message"],
              "1000 x 384 batch: %r %r" % (st, body))
        msg = body["error"]["message"]
        st, _, body = call(a, "POST", "/v1/namespaces/wide/segments",
                           {"id": "long", "text": "x" * (1 << 20), "embedding": cx.vec(rng, 384)})
        check(st == 413 and "max_payload" in body["error"]["message"],
              "1 MiB text: %r %r" % (st, body))
        st, _, body = call(a, "GET", "/v1/namespaces/wide")
        check(st == 404, "an oversized write left something behind: %r %r" % (st, body))
        small = {"segments": big["segments"][:200]}
        st, _, body = call(a, "POST", "/v1/namespaces/wide/segments", small)
        check(st == 201 and len(body["inserted"]) == 200, "200 x 384 batch: %r" % st)
        print("payload limit: a 1000 x 384 batch answered 413 in %.0f ms (%r); a 1 MiB text "
              "413; a 200 x 384 batch stored" % (1000 * big_s, msg[:120]))

        # ---- a node listening on [::] advertises an address its peers can reach ----
        b = cl.add("six", host="::")
        want = "[::1]:%d" % b.port
        check(cl.status("six")["address"] == want,
              "a node on [::]:PORT advertises %s: %r" % (want, cl.status("six")["address"]))
        seen = cl.wait("solo sees six", lambda: [n for n in cl.status("solo")["nodes"]
                                                 if n["id"] == "six" and n["alive"]])
        check(seen[0]["address"] == want, "solo's view of six: %r" % (seen[0],))
        relayed = None
        for i in range(12):  # a namespace placed on six, written and read through solo
            ns = "six-%d" % i
            st, _, body = call(a, "POST", "/v1/namespaces/%s/segments" % ns,
                               {"id": "s", "embedding": cx.vec(rng, DIM)})
            check(st == 201, "write to %s through solo: %r %r" % (ns, st, body))
            p = cl.wait("the placement of " + ns, lambda: cl.placement(ns, "solo"))
            if p["nodes"] == ["six"]:
                relayed = ns
                break
        check(relayed, "no namespace was placed on six")
        st, _, body = call(a, "GET", "/v1/namespaces/%s/segments/s" % relayed)
        check(st == 200 and body["id"] == "s", "read relayed to six: %r %r" % (st, body))
        print("a node on [::]:%d advertises %s; solo relays %s to it" % (b.port, want, relayed))
        b.stop()
        a.stop()
        print("PASS outage test in %.1f s" % (time.monotonic() - t0))
        return 0
    except cx.Failure as e:
        print("FAIL %s" % e)
        print(cl.logs(30))
        return 1
    finally:
        try:
            os.kill(cl.nats.procs[0].pid, signal.SIGCONT)
        except Exception:
            pass
        cl.cleanup()


if __name__ == "__main__":
    sys.exit(main())
