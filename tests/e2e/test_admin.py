"""test_admin.py - `mnemod backup`, `mnemod restore`, `mnemod --check` against the real binary.

A backup taken while a server runs under insert load must hold every segment acknowledged
before it started (and whole batches only); restored into a new file it must serve them; a
restore onto a file a running server holds is refused; --check tells a good file from a
corrupt one.
"""

import atexit
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as h  # noqa: E402

DIM = 8


def admin(*args, env=None, timeout=120):
    """Run `mnemod ARGS...` -> (exit status, stdout, stderr)."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([h.BINARY] + list(args), stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=timeout, env=e)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def tmpdir():
    d = tempfile.mkdtemp(prefix="mnemod-admin-")
    atexit.register(shutil.rmtree, d, True)
    return d


def wipe_page(path, obj):
    """Overwrite the root page of table/index obj with 0xff: a structural corruption."""
    c = sqlite3.connect(path)
    page, size = c.execute("SELECT rootpage, (SELECT page_size FROM pragma_page_size()) "
                           "FROM sqlite_master WHERE name=?", (obj,)).fetchone()
    c.close()
    with open(path, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(b"\xff" * size)


class Load:
    """Client threads inserting singles and batches; remembers what was acknowledged."""

    def __init__(self, srv, ns, threads=3):
        self.srv, self.ns = srv, ns
        self.lock = threading.Lock()
        self.sent = {}          # id -> text
        self.acked = []         # ids, in acknowledgement order
        self.batches = []       # lists of ids sent together
        self.errors = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(t,), daemon=True)
                        for t in range(threads)]

    def run(self, t):
        rng = random.Random(1000 + t)
        n = 0
        while not self.stop.is_set():
            n += 1
            size = 1 if n % 3 else rng.randint(2, 20)
            segs = []
            for j in range(size):
                sid = "t%d-%d-%d" % (t, n, j)
                segs.append({"id": sid, "text": "memory %s" % sid,
                             "embedding": h.rand_vec(rng, DIM)})
            with self.lock:
                for s in segs:
                    self.sent[s["id"]] = s["text"]
                if size > 1:
                    self.batches.append([s["id"] for s in segs])
            body = segs[0] if size == 1 else {"segments": segs}
            try:
                st, _, b = self.srv.insert(self.ns, body)
            except Exception as e:   # noqa: BLE001 - any transport error is a test failure
                self.errors.append("insert: %r" % (e,))
                return
            if st not in (200, 201):
                self.errors.append("insert: %s %s" % (st, h._short(b)))
                return
            with self.lock:
                self.acked.extend(s["id"] for s in segs)

    def acked_now(self):
        with self.lock:
            return list(self.acked)

    def start(self):
        for th in self.threads:
            th.start()

    def finish(self):
        self.stop.set()
        for th in self.threads:
            th.join(60)
        h.check(not self.errors, "load errors: %s" % self.errors[:3])


def ids_of(srv, ns, candidates):
    """The candidate ids the server holds (GET each)."""
    have = set()
    for sid in candidates:
        st, _, b = srv.seg(ns, sid)
        if st == 200:
            have.add(sid)
        else:
            h.eq(st, 404, "GET %s" % sid)
    return have


@h.test
def test_backup_under_load_then_restore_and_serve():
    srv = h.Server().start()
    h.expect_ok(srv.put("/v1/namespaces/agent", {"dim": DIM}), 201)
    load = Load(srv, "agent")
    load.start()
    deadline = time.monotonic() + 60
    while len(load.acked_now()) < 200 and time.monotonic() < deadline and not load.errors:
        time.sleep(0.02)
    before = set(load.acked_now())
    h.check(len(before) >= 200, "load did not get going: %d acked" % len(before))
    d = tmpdir()
    bak = os.path.join(d, "backup.db")
    rc, out, err = admin("backup", "--data", srv.db, bak)
    h.eq(rc, 0, "backup exit status (stderr %r)" % err)
    h.check(bak in out, "backup names its output: %r" % out)
    # the load keeps going after the backup: wait for an insert acknowledged after it
    after = len(load.acked_now())
    deadline = time.monotonic() + 60
    while len(load.acked_now()) <= after and time.monotonic() < deadline and not load.errors:
        time.sleep(0.02)
    load.finish()
    h.check(len(load.acked) > after, "inserts went on after the backup")
    h.eq(admin("--check", "--data", bak)[:2], (0, "ok\n"), "--check of the backup")

    # The running server's file cannot be restored over.
    rc, out, err = admin("restore", "--data", srv.db, bak)
    h.eq(rc, 1, "restore onto the running server's file")
    h.check("in use" in err, "restore names the reason: %r" % err)
    st, _, stats = srv.ns_stats("agent")
    h.eq(stats["count"], len(load.acked), "the running server lost nothing")
    srv.stop()

    # Restore into a new file and serve it.
    d2 = tmpdir()
    new = os.path.join(d2, "mnemod.db")
    rc, out, err = admin("restore", "--data", new, bak)
    h.eq(rc, 0, "restore into a new file (stderr %r)" % err)
    h.eq(admin("--check", "--data", new)[:2], (0, "ok\n"), "--check of the restored file")
    srv2 = h.Server(datadir=d2).start()
    have = ids_of(srv2, "agent", list(load.sent))
    missing = before - have
    h.check(not missing, "%d segments acknowledged before the backup are missing, e.g. %s"
            % (len(missing), sorted(missing)[:3]))
    h.check(have <= set(load.sent), "restored ids are all ids that were sent")
    for b in load.batches:
        n = sum(1 for sid in b if sid in have)
        h.check(n in (0, len(b)), "batch %s.. is %d/%d present" % (b[0], n, len(b)))
    st, _, stats = srv2.ns_stats("agent")
    h.eq(stats["count"], len(have), "count of the restored namespace")
    # Content came back verbatim, and the restored server takes new writes.
    sid = sorted(before)[0]
    st, _, seg = srv2.seg("agent", sid)
    h.eq(seg.get("text"), load.sent[sid], "text of %s" % sid)
    h.expect_ok(srv2.insert("agent", {"id": "after-restore", "text": "x",
                                      "embedding": [1.0] + [0.0] * (DIM - 1)}), 201)
    srv2.stop()


@h.test
def test_restore_replaces_after_stop():
    srv = h.Server().start()
    emb = [1.0] + [0.0] * (DIM - 1)
    h.expect_ok(srv.insert("n", {"id": "old", "text": "old", "embedding": emb}), 201)
    d = tmpdir()
    bak = os.path.join(d, "b.db")
    h.eq(admin("backup", "--data", srv.db, bak)[0], 0, "backup")
    h.expect_ok(srv.insert("n", {"id": "new", "text": "new", "embedding": emb}), 201)
    srv.stop()
    rc, out, err = admin("restore", "--data", srv.db, bak)
    h.eq(rc, 0, "restore after stop (stderr %r)" % err)
    srv.start()
    h.expect_ok(srv.seg("n", "old"))
    h.expect_error(srv.seg("n", "new"), 404, "not_found", "a write after the backup is gone")
    srv.stop()


@h.test
def test_restore_refuses_a_bad_backup():
    srv = h.Server().start()
    emb = [1.0] + [0.0] * (DIM - 1)
    for i in range(50):
        h.expect_ok(srv.insert("n", {"id": "s%d" % i, "embedding": emb}), 201)
    d = tmpdir()
    bak = os.path.join(d, "b.db")
    h.eq(admin("backup", "--data", srv.db, bak)[0], 0, "backup")
    srv.stop()
    wipe_page(bak, "sqlite_autoindex_segments_1")
    rc, out, err = admin("restore", "--data", srv.db, bak)
    h.eq(rc, 1, "restore of a corrupt backup")
    h.check("integrity check" in err, "names the integrity check: %r" % err)
    plain = os.path.join(d, "plain.db")
    c = sqlite3.connect(plain)
    c.execute("CREATE TABLE t(x)")
    c.commit()
    c.close()
    rc, out, err = admin("restore", "--data", srv.db, plain)
    h.eq(rc, 1, "restore of a non-mnemod database")
    h.check("not a mnemod database" in err, err)
    srv.start()
    st, _, stats = srv.ns_stats("n")
    h.eq(stats["count"], 50, "the refused restores left the database alone")
    srv.stop()


@h.test
def test_check_good_and_corrupt():
    srv = h.Server().start()
    emb = [1.0] + [0.0] * (DIM - 1)
    for i in range(30):
        h.expect_ok(srv.insert("n", {"id": "s%d" % i, "embedding": emb}), 201)
    h.eq(admin("--check", "--data", srv.db)[:2], (0, "ok\n"), "--check beside a running server")
    srv.stop()
    h.eq(admin("--check", "--data", srv.db)[:2], (0, "ok\n"), "--check of a stopped file")
    # The usual settings name the file: MNEMOD_DATA and a --config file.
    h.eq(admin("--check", env={"MNEMOD_DATA": srv.db})[:2], (0, "ok\n"), "MNEMOD_DATA")
    d = tmpdir()
    conf = os.path.join(d, "mnemod.conf")
    with open(conf, "w") as f:
        f.write("data = %s\n" % srv.db)
    h.eq(admin("--check", "--config", conf)[:2], (0, "ok\n"), "--config FILE")

    bad = os.path.join(d, "bad.db")
    h.eq(admin("backup", "--data", srv.db, bad)[0], 0, "backup")
    wipe_page(bad, "sqlite_autoindex_segments_1")
    rc, out, err = admin("--check", "--data", bad)
    h.eq(rc, 1, "--check of a corrupt file")
    h.check("Page" in out and "ok" != out.strip(), "the problems are printed: %r" % out)
    h.check("problem" in err, err)
    junk = os.path.join(d, "junk.db")
    with open(junk, "wb") as f:
        f.write(os.urandom(8192))
    rc, out, err = admin("--check", "--data", junk)
    h.eq(rc, 1, "--check of a file that is not a database")
    h.check("not a database" in out, out)
    rc, out, err = admin("--check", "--data", os.path.join(d, "missing.db"))
    h.eq(rc, 1, "--check of a missing file")
    h.check("missing.db" in err, err)
    # A server refuses the corrupt file at start with one clear line.
    d3 = tmpdir()
    shutil.copy(bad, os.path.join(d3, "mnemod.db"))
    s3 = h.Server(datadir=d3)
    try:
        s3.start(timeout=10)
        h.check(False, "a server started on a corrupt file")
    except h.Failure:
        pass
    s3.kill9()


@h.test
def test_usage_errors():
    d = tmpdir()
    db = os.path.join(d, "x.db")
    for args in (["backup", "--data", db], ["restore", "--data", db],
                 ["backup", "--data", db, "a", "b"], ["--check", "--data", db, "extra"],
                 ["backup", "--no-such-flag", "1", os.path.join(d, "o.db")]):
        rc, out, err = admin(*args)
        h.eq(rc, 2, "exit status of %s" % args)
        h.check(err.strip(), "an error line for %s" % args)
    rc, out, err = admin("backup", "--help")
    h.eq(rc, 0, "backup --help")
    h.check("mnemod restore" in out, out)
    h.check(not os.path.exists(db), "no database was created by a usage error")


if __name__ == "__main__":
    h.main()
