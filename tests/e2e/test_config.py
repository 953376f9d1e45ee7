"""test_config.py - SPEC section 7 end to end: --help/--version, invalid configuration (exit
2, one line naming the key), precedence flag > env > config file > default observed through
retrieve scores, and bearer-token authentication (401 unauthorized)."""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402
from harness import test, eq, check, near, expect_error, expect_ok  # noqa: E402

DAY = 86400000
FLAGS = ["--listen", "--data", "--half-life", "--recency-bias", "--decay", "--decay-offset", "--embed-dim",
         "--coherence-threshold", "--coherence-weight", "--api-key-file", "--max-body", "--max-batch",
         "--max-future-skew", "--threads", "--sync", "--max-connections", "--idle-timeout",
         "--request-timeout", "--max-queue", "--max-namespaces", "--log-level", "--config"]
ENVS = ["MNEMOD_LISTEN", "MNEMOD_DATA", "MEMU_RECENCY_HALF_LIFE", "MNEMOD_RECENCY_BIAS", "MNEMOD_DECAY",
        "MNEMOD_DECAY_OFFSET", "MNEMOD_EMBED_DIM", "MNEMOD_COHERENCE_THRESHOLD", "MNEMOD_COHERENCE_WEIGHT",
        "MNEMOD_API_KEY", "MNEMOD_MAX_BODY", "MNEMOD_MAX_BATCH", "MNEMOD_MAX_FUTURE_SKEW", "MNEMOD_THREADS",
        "MNEMOD_SYNC", "MNEMOD_MAX_CONNECTIONS", "MNEMOD_IDLE_TIMEOUT", "MNEMOD_REQUEST_TIMEOUT",
        "MNEMOD_MAX_QUEUE", "MNEMOD_MAX_NAMESPACES", "MNEMOD_LOG_LEVEL"]


def run(args, env=None, timeout=15):
    e = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOD_") and not k.startswith("MEMU_")}
    e.update(env or {})
    try:
        p = subprocess.run([h.BINARY] + args, stdin=subprocess.DEVNULL, capture_output=True, env=e,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise h.Failure("mnemod %s did not exit within %d s (started with a bad configuration?)"
                        % (" ".join(args), timeout))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


@test
def test_version_and_help():
    rc, out, err = run(["--version"])
    eq(rc, 0, "--version exit status")
    check(re.search(r"\d+\.\d+", out + err), "--version prints a version: %r" % (out + err))
    rc, out, err = run(["--help"])
    eq(rc, 0, "--help exit status")
    text = out + err
    for f in FLAGS:
        check(f in text, "--help lists %s" % f)
    for e in ENVS:
        check(e in text, "--help names %s" % e)


@test
def test_invalid_configuration_exits_2_with_one_line():
    d = tempfile.mkdtemp(prefix="mnemod-cfg-")
    base = ["--listen", "127.0.0.1:%d" % h.free_port(), "--data", os.path.join(d, "x.db")]
    unknown_key = os.path.join(d, "unknown.conf")
    with open(unknown_key, "w") as f:
        f.write("# comment\nhalf-life = 90d\nhalf-lfe = 3\n")
    bad_value = os.path.join(d, "badvalue.conf")
    with open(bad_value, "w") as f:
        f.write("recency-bias = 7\n")
    cases = [
        (["--bogus-flag", "1"], {}, "bogus-flag"),
        (["--half-life", "abc"], {}, "half-life"),
        (["--half-life", "-3d"], {}, "half-life"),
        (["--recency-bias", "2"], {}, "recency-bias"),
        (["--decay", "cubic"], {}, "decay"),
        (["--decay", "weibull:11"], {}, "decay"),
        (["--coherence-threshold", "1.5"], {}, "coherence-threshold"),
        (["--coherence-weight", "-0.1"], {}, "coherence-weight"),
        (["--max-body", "12XB"], {}, "max-body"),
        (["--max-batch", "many"], {}, "max-batch"),
        (["--embed-dim", "0"], {}, "embed-dim"),
        (["--embed-dim", "4097"], {}, "embed-dim"),
        (["--sync", "sometimes"], {}, "sync"),
        (["--idle-timeout", "5x"], {}, "idle-timeout"),
        (["--idle-timeout", "0"], {}, "idle-timeout"),
        (["--idle-timeout", "8d"], {}, "idle-timeout"),
        ([], {"MNEMOD_REQUEST_TIMEOUT": "1000w"}, "MNEMOD_REQUEST_TIMEOUT"),
        # what the listener and the Host check cannot use is refused here too, not later
        (["--listen", "mem.example:7000"], {}, "listen"),
        (["--listen", "999.1.1.1:7000"], {}, "listen"),
        (["--allowed-hosts", "a:b:c"], {}, "allowed-hosts"),
        (["--allowed-hosts", "mem.example:99999"], {}, "allowed-hosts"),
        ([], {"MNEMOD_ALLOWED_HOSTS": "ok.example,[::1"}, "MNEMOD_ALLOWED_HOSTS"),
        ([], {"MNEMOD_DECAY": "cubic"}, "MNEMOD_DECAY"),
        ([], {"MEMU_RECENCY_HALF_LIFE": "soon"}, "MEMU_RECENCY_HALF_LIFE"),
        ([], {"MNEMOD_MAX_BODY": "-1"}, "MNEMOD_MAX_BODY"),
        (["--worker-spin-us", "10001"], {}, "worker-spin-us"),
        ([], {"MNEMOD_WORKER_SPIN_US": "-1"}, "MNEMOD_WORKER_SPIN_US"),
        (["--config", unknown_key], {}, "half-lfe"),
        (["--config", bad_value], {}, "recency-bias"),
        (["--config", os.path.join(d, "missing.conf")], {}, "missing.conf"),
    ]
    for args, env, key in cases:
        rc, out, err = run(base + args, env)
        what = "%s %s" % (" ".join(args), env)
        eq(rc, 2, "exit status for %s (stderr %r)" % (what, err[-300:]))
        lines = [ln for ln in err.splitlines() if ln.strip()]
        eq(len(lines), 1, "one line on stderr for %s: %r" % (what, lines))
        check(key.lower() in lines[0].lower() or key.lower().replace("mnemod_", "").replace("_", "-")
              in lines[0].lower(), "the line names %s: %r" % (key, lines[0]))


@test
def test_data_path_that_cannot_be_a_database_says_why():
    """--data names the database file: a directory, or a file in a directory that does not
    exist, stops start-up with a line that says so (not only SQLite's "unable to open")."""
    d = tempfile.mkdtemp(prefix="mnemod-data-")
    for path, says in ((d, "is a directory"),
                       (os.path.join(d, "missing", "m.db"), "does not exist")):
        rc, _, err = run(["--listen", "127.0.0.1:%d" % h.free_port(), "--data", path])
        check(rc != 0, "start-up with --data %s fails (rc %r)" % (path, rc))
        fail = [ln for ln in err.splitlines() if "open_failed" in ln]
        eq(len(fail), 1, "one open_failed line for --data %s: %r" % (path, err[-400:]))
        check(says in fail[0] and path in fail[0], "the line says %r: %r" % (says, fail[0]))
    check(not os.path.exists(os.path.join(d, "missing")), "no directory created")


def decay_probe(srv, origin_ms, ts_ms, extra=None):
    """Insert one segment at ts into a fresh namespace; retrieve with explain from origin."""
    ns = "probe"
    srv.delete("/v1/namespaces/" + ns)
    expect_ok(srv.insert(ns, {"id": "p", "embedding": [1, 0], "timestamp": h.rfc3339_ms(ts_ms)}), 201)
    req = {"embedding": [1, 0], "origin": h.rfc3339_ms(origin_ms), "explain": True}
    req.update(extra or {})
    r = expect_ok(srv.retrieve(ns, req))["results"]
    eq(len(r), 1, "probe result")
    return r[0]


@test
def test_precedence_flag_env_file_default():
    d = tempfile.mkdtemp(prefix="mnemod-cfg-")
    conf = os.path.join(d, "mnemod.conf")
    with open(conf, "w") as f:
        f.write("# defaults for the e2e test\nhalf-life = 10d\n\nrecency-bias = 1.0\n")
    origin = h.now_ms() - DAY
    ts = origin - 10 * DAY
    cases = [
        ([], {}, 1.0, "default: no decay"),
        (["--config", conf], {}, 0.5, "config file 10d"),
        (["--config", conf], {"MEMU_RECENCY_HALF_LIFE": "2"}, 0.5 ** 5, "env bare number is days"),
        (["--config", conf], {"MEMU_RECENCY_HALF_LIFE": "5d"}, 0.25, "env duration"),
        (["--config", conf, "--half-life", "240h"], {"MEMU_RECENCY_HALF_LIFE": "2"}, 0.5 ** 1, "flag wins"),
        (["--half-life", "5"], {}, 0.25, "flag bare number is days"),
    ]
    for args, env, want, what in cases:
        srv = h.Server(args, env).start()
        try:
            r = decay_probe(srv, origin, ts)
            near(r["decay"], want, 1e-6, what)
            near(r["score"], want, 1e-5, what + " (score)")
            # a per-request field overrides the configured default
            r = decay_probe(srv, origin, ts, {"half_life": "20d"})
            near(r["decay"], 0.5 ** 0.5, 1e-6, what + " overridden per request")
            srv.stop()
        finally:
            srv.cleanup()


@test
def test_precedence_on_limits_and_listen():
    d = tempfile.mkdtemp(prefix="mnemod-cfg-")
    conf = os.path.join(d, "mnemod.conf")
    with open(conf, "w") as f:
        f.write("listen = 127.0.0.1:1\nmax-batch = 2\nsync = normal\n")
    for args, env, limit in ((["--config", conf], {}, 2),
                             (["--config", conf], {"MNEMOD_MAX_BATCH": "3"}, 3),
                             (["--config", conf, "--max-batch", "5"], {"MNEMOD_MAX_BATCH": "3"}, 5),
                             (["--config", conf], {"MNEMOD_CONFIG": "/nonexistent"}, 2)):
        srv = h.Server(args, env).start()       # --listen (flag) beats the file's listen
        try:
            ns = "lim"
            ok = {"segments": [{"embedding": [1, i + 1]} for i in range(limit)]}
            expect_ok(srv.insert(ns, ok), 201, "a batch of %d with limit %d" % (limit, limit))
            over = {"segments": [{"embedding": [1, i + 1]} for i in range(limit + 1)]}
            expect_error(srv.insert(ns, over), 400, "invalid_field", "a batch of %d" % (limit + 1))
            srv.restart()                        # sync = normal still keeps what was committed at SIGTERM
            eq(expect_ok(srv.ns_stats(ns))["count"], limit, "data after a clean restart")
            srv.stop()
        finally:
            srv.cleanup()


@test
def test_configured_decay_defaults():
    srv = h.Server(["--decay", "gaussian", "--recency-bias", "0.5", "--decay-offset", "1d", "--half-life", "2"],
                   {"MNEMOD_COHERENCE_WEIGHT": "0"}).start()
    try:
        origin = h.now_ms() - DAY
        r = decay_probe(srv, origin, origin - 3 * DAY)
        near(r["decay"], 0.5, 1e-6, "gaussian at one half-life after the offset")
        near(r["score"], 0.75, 1e-5, "recency_bias 0.5")
        r = decay_probe(srv, origin, origin - 3 * DAY, {"decay": "linear", "recency_bias": 1, "offset": 0})
        near(r["decay"], 1 - 1.5 / 2, 1e-6, "per-request family, bias and offset")
        srv.stop()
    finally:
        srv.cleanup()
    srv = h.Server([], {"MNEMOD_DECAY": "weibull:2", "MEMU_RECENCY_HALF_LIFE": "1d"}).start()
    try:
        origin = h.now_ms() - DAY
        r = decay_probe(srv, origin, origin - 2 * DAY)
        near(r["decay"], 0.5 ** 4, 1e-6, "weibull:2 from the environment")
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_api_key_env():
    srv = h.Server([], {"MNEMOD_API_KEY": "s3cret-key"}).start()
    try:
        good = {"Authorization": "Bearer s3cret-key"}
        for hdrs in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-key"},
                     {"Authorization": "Basic czNjcmV0LWtleQ=="}, {"Authorization": "Bearer s3cret-ke"},
                     {"Authorization": "Bearer s3cret-keyy"}):
            r = srv.get("/v1/namespaces", headers=hdrs)
            expect_error(r, 401, "unauthorized", "GET /v1/namespaces with %s" % hdrs)
            check(r[1].get("www-authenticate", "").startswith("Bearer"), "WWW-Authenticate: Bearer")
            expect_error(srv.insert("authns", {"embedding": [1, 0]}, headers=hdrs), 401, "unauthorized")
            expect_error(srv.get("/metrics", headers=hdrs), 401, "unauthorized", "metrics behind the key")
        eq(srv.get("/healthz")[0], 200, "/healthz is open")
        expect_ok(srv.get("/v1/namespaces", headers=good), 200, "the right key")
        expect_error(srv.get("/v1/namespaces/authns", headers=good), 404,
                     "not_found", "nothing written without the key")
        expect_ok(srv.insert("authns", {"embedding": [1, 0]}, headers=good), 201, "insert with the key")
        eq(srv.get("/metrics", headers=good)[0], 200, "metrics with the key")
        srv.stop()
    finally:
        srv.cleanup()
    srv = h.Server([], {"MNEMOD_API_KEY": "k2", "MNEMOD_METRICS_PUBLIC": "1"}).start()
    try:
        eq(srv.get("/metrics")[0], 200, "MNEMOD_METRICS_PUBLIC=1")
        expect_error(srv.get("/v1/namespaces"), 401, "unauthorized", "/v1 still needs the key")
        srv.stop()
    finally:
        srv.cleanup()


@test
def test_api_key_file_trailing_newline():
    d = tempfile.mkdtemp(prefix="mnemod-key-")
    kf = os.path.join(d, "key")
    with open(kf, "w") as f:
        f.write("file-key-123\n")
    srv = h.Server(["--api-key-file", kf]).start()
    try:
        expect_ok(srv.get("/v1/namespaces", headers={"Authorization": "Bearer file-key-123"}), 200,
                  "key from file, newline ignored")
        expect_error(srv.get("/v1/namespaces"), 401, "unauthorized")
        srv.stop()
    finally:
        srv.cleanup()



def insert_burst(srv, embedding_of, want):
    """8 threads insert 10 segments each at once into namespace "spin": segment s<t>-<i> has
    embedding_of(t * 10 + i); every one must be answered 201."""
    import threading
    errors = []

    def writer(t):
        for i in range(10):
            r = srv.insert("spin", {"id": "s%d-%d" % (t, i), "embedding": embedding_of(t * 10 + i)})
            if r[0] != 201:
                errors.append(r)

    ths = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    [t.start() for t in ths]
    [t.join() for t in ths]
    eq(errors, [], "inserts of the burst (%s)" % want)


@test
def test_worker_spin_us():
    """--worker-spin-us / MNEMOD_WORKER_SPIN_US: at both ends of its range the server takes
    it (the start-up line shows it), answers a concurrent burst of inserts and retrieves
    exactly, and drains on SIGTERM."""
    for args, env, want in ((["--worker-spin-us", "0"], {}, "0"),
                            ([], {"MNEMOD_WORKER_SPIN_US": "10000"}, "10000")):
        srv = h.Server(args + ["--threads", "2"], env).start()
        try:
            insert_burst(srv, lambda n: [1, n + 1], want)
            res = expect_ok(srv.retrieve("spin", {"embedding": [0, 1], "k": 100}))["results"]
            eq(sorted(x["id"] for x in res), sorted("s%d-%d" % (t, i) for t in range(8) for i in range(10)),
               "every segment of the burst retrieved (%s)" % want)
            srv.stop()
            with open(srv.log_path) as f:
                check("worker_spin_us=%s" % want in f.read(), "the start-up line shows worker_spin_us=%s" % want)
        finally:
            srv.cleanup()


def _cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _spins(srv):
    """mnemod_loop_spins_total by outcome (caught, ran_out, preempted)."""
    st, _, text = srv.get("/metrics")
    eq(st, 200, "metrics")
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r'^mnemod_loop_spins_total\{outcome="(\w+)"\} (\d+)$', text, re.M)}


@test
def test_loop_spin_us():
    """--loop-spin-us / MNEMOD_LOOP_SPIN_US: off, and at the top of its range (the loop then
    polls through every gap of a back-to-back client), the server answers retrieves one by
    one on a kept-alive connection (on the event loop) and a concurrent burst of inserts (the
    pool's and the writer's completions) exactly, handles SIGHUP while it polls, does not poll
    for a client whose requests come further apart than the spin (at most 2 spins that run
    out, then one every 16 answers: mnemod_loop_spins_total counts them), spends (next to) no
    CPU once its client is gone, and drains on SIGTERM. Off, it never spins."""
    import http.client
    import math

    def direction(n):  # 80 directions 4.5 degrees apart: each segment its own nearest
        return [math.cos(n * math.pi / 40), math.sin(n * math.pi / 40)]

    for args, env, want in ((["--loop-spin-us", "0"], {}, "0"),
                            ([], {"MNEMOD_LOOP_SPIN_US": "10000"}, "10000")):
        srv = h.Server(args + ["--threads", "2"], env).start()
        try:
            insert_burst(srv, direction, want)
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
            for i in range(200):
                if i == 100:
                    srv.proc.send_signal(h.signal.SIGHUP)
                t, j = divmod(i % 80, 10)
                body = json.dumps({"embedding": direction(t * 10 + j), "k": 1, "decay": "none"}).encode()
                conn.request("POST", "/v1/namespaces/spin/retrieve", body=body,
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                got = json.loads(r.read())
                eq(r.status, 200, "retrieve %d (%s)" % (i, want))
                eq([x["id"] for x in got["results"]], ["s%d-%d" % (t, j)], "retrieve %d (%s)" % (i, want))
            s0 = _spins(srv)
            eq(sorted(s0), ["caught", "preempted", "ran_out"], "the spin outcomes (%s)" % want)
            if want == "0":
                eq(sum(s0.values()), 0, "no spin at --loop-spin-us 0")
            else:  # a spin at least every 16 answers, whatever the machine's load
                check(sum(s0.values()) >= 200 // 16, "spins after 200 answers: %s" % s0)
            # a client slower than the spin (a request every 20 ms): the loop sleeps between
            # them instead of polling 10 ms after each (that would be 0.6 CPU-s here)
            c0 = _cpu_s(srv.proc.pid)
            for i in range(60):
                time.sleep(0.02)
                conn.request("GET", "/v1/namespaces/spin/segments/s1-1")
                r = conn.getresponse()
                r.read()
                eq(r.status, 200, "GET %d (%s)" % (i, want))
            sparse = _cpu_s(srv.proc.pid) - c0
            check(sparse < 0.15, "60 requests 20 ms apart cost %.2f CPU-s (%s)" % (sparse, want))
            s1 = _spins(srv)
            idle_spins = s1["ran_out"] + s1["preempted"] - s0["ran_out"] - s0["preempted"]
            # credit 2 at most, then a probe every 16 answers (61 with the metrics scrape);
            # 2 more for a loop that was itself late by the spin's length once or twice
            check(idle_spins <= (0 if want == "0" else 2 + 61 // 16 + 2),
                  "spins that caught nothing for a client slower than the spin: %d (%s)"
                  % (idle_spins, want))
            conn.close()
            time.sleep(0.3)
            c0 = _cpu_s(srv.proc.pid)
            time.sleep(1.0)
            idle = _cpu_s(srv.proc.pid) - c0
            check(idle < 0.2, "an idle server spent %.2f CPU-s in 1 s (%s)" % (idle, want))
            srv.stop()
            with open(srv.log_path) as f:
                log = f.read()
            check("loop_spin_us=%s" % want in log, "the start-up line shows loop_spin_us=%s" % want)
            check("sighup" in log, "SIGHUP was handled while the loop polled (%s)" % want)
        finally:
            srv.cleanup()


if __name__ == "__main__":
    h.main()
