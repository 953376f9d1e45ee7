/* backup.c - online backup, restore and the full integrity check (the admin commands)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. These run in the `mnemod backup|restore|--check` process, not in the server, and
 * talk to the database file through their own SQLite connection, so they work beside a
 * running server exactly as a second process would.
 *  - backup: one sqlite3_backup_step(-1) = one read transaction on the source, i.e. one
 *    consistent snapshot; in WAL mode a reader never blocks the server's writer, so inserts
 *    go on meanwhile. The copy goes to OUT.tmp-PID, is switched to journal_mode=DELETE (a
 *    single self-contained file), synced, renamed over OUT and the directory synced: OUT is
 *    either the old file or a complete backup, never half of one.
 *  - restore: IN must pass PRAGMA integrity_check and carry a mnemod schema this binary
 *    knows. The target must not be held by anyone: every SQLite connection (a server's
 *    included) keeps a shared lock on the file's lock bytes while open in WAL mode, so a
 *    probe for those locks, then an exclusive SQLite lock (locking_mode=EXCLUSIVE + BEGIN
 *    EXCLUSIVE, kept until the end) refuse with MEM_EBUSY instead of pulling the file from
 *    under a server. The pages are then copied with the backup API into the locked target,
 *    in one transaction of the target (a crash mid-restore leaves the old content), and the
 *    target's stale WAL is checkpointed away first, so nothing old is replayed over it.
 *  - check: PRAGMA integrity_check on a connection of its own; each problem row is handed
 *    to a callback.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "storage/store_int.h"

#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36 /* Linux; conflicts with locks held in this process too */
#endif

#define SQLITE_LOCK_BYTES 0x40000000L /* PENDING_BYTE: SQLite's lock range starts here */
#define SQLITE_LOCK_LEN   512L
#define SQLITE_SHM_DMS    128L /* the -shm byte every WAL connection read-locks */

/* sqlite3_open_v2 with flags (and NOMUTEX: one thread per connection here), extended result
 * codes on; a failure is "cannot <verb> <path>: <SQLite's reason>" with SQLite's code as ours
 * (mem_store__code_sqlite: MEM_ENOMEM for a failed allocation, else MEM_ESTORAGE). */
static int open_db(const char *path, int flags, const char *verb, sqlite3 **out, mem_err_t *err)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = mem_err_set(err, mem_store__code_sqlite(rc), "cannot %s %s: %s", verb, path,
                         db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return rc;
    }
    sqlite3_extended_result_codes(db, 1);
    *out = db;
    return MEM_OK;
}

static int open_existing(const char *path, sqlite3 **out, mem_err_t *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return mem_err_set(err, errno == ENOENT ? MEM_ENOTFOUND : MEM_ESTORAGE, "%s: %s", path,
                           strerror(errno));
    if (!S_ISREG(sb.st_mode)) return mem_err_set(err, MEM_EINVAL, "%s: not a regular file", path);
    sqlite3 *db = NULL;
    /* Read-write when allowed (a reader of a WAL file may need to write the -shm), else
     * read-only; never create. */
    int rc;
    if (open_db(path, SQLITE_OPEN_READWRITE, "open", &db, NULL) != MEM_OK &&
        (rc = open_db(path, SQLITE_OPEN_READONLY, "open", &db, err)) != MEM_OK)
        return rc;
    sqlite3_busy_timeout(db, 5000);
    *out = db;
    return MEM_OK;
}

static int corrupt_or(mem_err_t *err, sqlite3 *db, int rc, const char *path, const char *what)
{
    int prim = rc & 0xff;
    if (prim == SQLITE_NOTADB || prim == SQLITE_CORRUPT)
        return mem_err_set(err, MEM_ECORRUPT, "%s is corrupt or not an sqlite database (%s)", path,
                           sqlite3_errmsg(db));
    return mem_store__err_sqlite(err, db, rc, what);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int sync_dir_of(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* ---- integrity check ---- */

static int run_integrity(sqlite3 *db, const char *path, mem_store_check_fn fn, void *ud,
                         size_t *n_problems, mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    size_t n = 0;
    int rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL);
    if (rc != SQLITE_OK) {
        /* The header itself is bad: that is the (only) problem to report. */
        if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT) {
            if (fn) fn(sqlite3_errmsg(db), ud);
            *n_problems = 1;
            return MEM_OK;
        }
        return mem_store__err_sqlite(err, db, rc, "integrity_check");
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *msg = (const char *)sqlite3_column_text(s, 0);
        if (msg && strcmp(msg, "ok") == 0) continue;
        n++;
        if (fn) fn(msg ? msg : "(null)", ud);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT) {
            if (fn) fn(sqlite3_errmsg(db), ud);
            *n_problems = n + 1;
            return MEM_OK;
        }
        return mem_store__err_sqlite(err, db, rc, "integrity_check");
    }
    (void)path;
    *n_problems = n;
    return MEM_OK;
}

int mem_store_check(const char *db_path, mem_store_check_fn fn, void *ud, size_t *n_problems,
                    mem_err_t *err)
{
    sqlite3 *db = NULL;
    int rc = open_existing(db_path, &db, err);
    if (rc != MEM_OK) return rc;
    size_t n = 0;
    rc = run_integrity(db, db_path, fn, ud, &n, err);
    sqlite3_close(db);
    if (rc == MEM_OK && n_problems) *n_problems = n;
    return rc;
}

/* ---- backup ---- */

static int copy_pages(sqlite3 *dst, sqlite3 *src, const char *what, mem_err_t *err)
{
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    if (!b) return mem_store__err_sqlite(err, dst, sqlite3_errcode(dst), what);
    int rc;
    int tries = 0;
    /* -1: every page in one step, i.e. one read transaction on the source (one snapshot);
     * BUSY/LOCKED only while another connection recovers the WAL: wait a little. */
    while ((rc = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || rc == SQLITE_LOCKED) {
        if (++tries > 100) break;
        sqlite3_sleep(50);
    }
    int frc = sqlite3_backup_finish(b);
    if (rc == SQLITE_DONE) rc = frc;
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        int prim = rc & 0xff;
        if (prim == SQLITE_NOTADB || prim == SQLITE_CORRUPT)
            return mem_err_set(err, MEM_ECORRUPT, "%s: source is corrupt or not an sqlite database",
                               what);
        if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED)
            return mem_err_set(err, MEM_EBUSY, "%s: database stayed locked", what);
        if (prim == SQLITE_FULL) return mem_err_set(err, MEM_EFULL, "%s: disk full", what);
        return mem_err_set(err, mem_store__code_sqlite(rc), "%s: %s", what, sqlite3_errstr(rc));
    }
    return MEM_OK;
}

int mem_store_backup(const char *db_path, const char *out_path, mem_err_t *err)
{
    if (!db_path || !*db_path || !out_path || !*out_path)
        return mem_err_set(err, MEM_EINVAL, "backup: a database and an output path are needed");
    if (same_file(db_path, out_path))
        return mem_err_set(err, MEM_EINVAL, "backup: %s is the database itself", out_path);
    sqlite3 *src = NULL, *dst = NULL;
    int rc = open_existing(db_path, &src, err);
    if (rc != MEM_OK) return rc;
    size_t plen = strlen(out_path) + 32;
    char *tmp = malloc(plen);
    if (!tmp) {
        sqlite3_close(src);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    snprintf(tmp, plen, "%s.tmp-%ld", out_path, (long)getpid());
    unlink(tmp);
    if ((rc = open_db(tmp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "create", &dst, err)) !=
        MEM_OK)
        goto out;
    if ((rc = copy_pages(dst, src, "backup", err)) != MEM_OK) goto out;
    /* The copy carries the source's WAL flag: make it one self-contained file, and sync it. */
    if ((rc = mem_store__exec(dst, "PRAGMA journal_mode=DELETE", err)) != MEM_OK ||
        (rc = mem_store__exec(dst, "PRAGMA synchronous=FULL", err)) != MEM_OK)
        goto out;
    int orc = sqlite3_close(dst);
    dst = NULL;
    if (orc != SQLITE_OK) {
        rc = mem_err_set(err, MEM_ESTORAGE, "close %s: %s", tmp, sqlite3_errstr(orc));
        goto out;
    }
    int fd = open(tmp, O_RDONLY);
    if (fd < 0 || fsync(fd) != 0) {
        rc = mem_err_set(err, errno == ENOSPC ? MEM_EFULL : MEM_ESTORAGE, "sync %s: %s", tmp,
                         strerror(errno));
        if (fd >= 0) close(fd);
        goto out;
    }
    close(fd);
    if (rename(tmp, out_path) != 0) {
        rc = mem_err_set(err, MEM_ESTORAGE, "rename %s to %s: %s", tmp, out_path, strerror(errno));
        goto out;
    }
    sync_dir_of(out_path);
    rc = MEM_OK;
out:
    if (dst) sqlite3_close(dst);
    sqlite3_close(src);
    if (rc != MEM_OK) {
        unlink(tmp);
        char j[4200];
        snprintf(j, sizeof(j), "%s-journal", tmp);
        unlink(j);
    }
    free(tmp);
    return rc;
}

/* ---- restore ---- */

/* Does any process (this one included) hold a lock on the byte range of path? */
static int range_locked(const char *path, off_t start, off_t len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    struct flock fl;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = len;
    int held = 0;
    if (fcntl(fd, F_OFD_GETLK, &fl) == 0)
        held = fl.l_type != F_UNLCK;
    else if (fcntl(fd, F_GETLK, &fl) == 0) /* no OFD locks: other processes only */
        held = fl.l_type != F_UNLCK;
    close(fd);
    return held;
}

static int target_in_use(const char *path)
{
    char shm[4200];
    snprintf(shm, sizeof(shm), "%s-shm", path);
    return range_locked(path, SQLITE_LOCK_BYTES, SQLITE_LOCK_LEN) ||
           range_locked(shm, SQLITE_SHM_DMS, 1);
}

static int busy_error(mem_err_t *err, const char *path)
{
    return mem_err_set(err, MEM_EBUSY,
                       "%s is in use (a running mnemod holds it): stop the server first", path);
}

/* IN must be a sound mnemod database of a schema version this binary knows. */
static int validate_backup(const char *in_path, sqlite3 **out, mem_err_t *err)
{
    sqlite3 *db = NULL;
    int rc = open_existing(in_path, &db, err);
    if (rc != MEM_OK) return rc;
    size_t n = 0;
    char first[128] = "";
    sqlite3_stmt *s = NULL;
    if ((rc = run_integrity(db, in_path, NULL, NULL, &n, err)) != MEM_OK) goto fail;
    if (n) {
        /* Name the first problem. */
        if (sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &s, NULL) == SQLITE_OK &&
            sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            snprintf(first, sizeof(first), "%s", (const char *)sqlite3_column_text(s, 0));
        else
            snprintf(first, sizeof(first), "%s", sqlite3_errmsg(db));
        sqlite3_finalize(s);
        for (char *c = first; *c; c++)
            if (*c == '\n') *c = ' ';
        rc = mem_err_set(err, MEM_ECORRUPT, "%s fails the integrity check (%zu problem%s: %s)",
                         in_path, n, n == 1 ? "" : "s", first);
        goto fail;
    }
    int prc =
        sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &s, NULL);
    if (prc == SQLITE_OK) prc = sqlite3_step(s);
    if (prc != SQLITE_ROW && prc != SQLITE_DONE && (prc & 0xff) != SQLITE_ERROR) {
        /* out of memory or I/O: no verdict on the file (SQLITE_ERROR: no meta table) */
        rc = mem_store__err_sqlite(err, db, prc, "schema version");
        sqlite3_finalize(s);
        goto fail;
    }
    if (prc != SQLITE_ROW || sqlite3_column_type(s, 0) != SQLITE_INTEGER) {
        sqlite3_finalize(s);
        rc = mem_err_set(err, MEM_EINVAL, "%s is not a mnemod database (no schema version)",
                         in_path);
        goto fail;
    }
    sqlite3_int64 v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    if (v < 1 || v > MEM_STORE__SCHEMA_VERSION) {
        rc = mem_err_set(err, MEM_EINVAL, "%s has schema version %lld; this mnemod knows 1..%d",
                         in_path, (long long)v, MEM_STORE__SCHEMA_VERSION);
        goto fail;
    }
    *out = db;
    return MEM_OK;
fail:
    sqlite3_close(db);
    return rc;
}

/* Open the target and take SQLite's exclusive lock, kept until the connection closes.
 * A file SQLite cannot read as a database (garbage header) gets one retry after it and its
 * -wal/-shm are removed: restoring over a wrecked file is the point of a restore. */
static int lock_target(const char *path, sqlite3 **out, mem_err_t *err)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        sqlite3 *db = NULL;
        int rc = open_db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "open", &db, err);
        if (rc != MEM_OK) return rc;
        /* No busy wait: a holder is a server, it will not go away in a moment. */
        rc = sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT", NULL, NULL,
                          NULL);
        if (rc == SQLITE_OK) {
            *out = db;
            return MEM_OK;
        }
        int prim = rc & 0xff;
        if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED) {
            sqlite3_close(db);
            return busy_error(err, path);
        }
        if ((prim == SQLITE_NOTADB || prim == SQLITE_CORRUPT) && attempt == 0) {
            sqlite3_close(db);
            if (target_in_use(path)) return busy_error(err, path);
            char side[4200];
            snprintf(side, sizeof(side), "%s-wal", path);
            unlink(side);
            snprintf(side, sizeof(side), "%s-shm", path);
            unlink(side);
            snprintf(side, sizeof(side), "%s-journal", path);
            unlink(side);
            if (unlink(path) != 0 && errno != ENOENT)
                return mem_err_set(err, MEM_ESTORAGE, "remove %s: %s", path, strerror(errno));
            continue;
        }
        rc = corrupt_or(err, db, rc, path, "lock target");
        sqlite3_close(db);
        return rc;
    }
    return mem_err_set(err, MEM_ESTORAGE, "%s: cannot be opened as a database", path);
}

int mem_store_restore(const char *db_path, const char *in_path, mem_err_t *err)
{
    if (!db_path || !*db_path || !in_path || !*in_path)
        return mem_err_set(err, MEM_EINVAL, "restore: a database and an input path are needed");
    if (same_file(db_path, in_path))
        return mem_err_set(err, MEM_EINVAL, "restore: %s is the database itself", in_path);
    if (target_in_use(db_path)) return busy_error(err, db_path);
    sqlite3 *src = NULL, *dst = NULL;
    int rc = validate_backup(in_path, &src, err);
    if (rc != MEM_OK) return rc;
    if ((rc = lock_target(db_path, &dst, err)) != MEM_OK) goto out;
    /* Under the exclusive lock: fold any WAL left by a stopped server into the file and drop
     * it, so that the copy below is the whole truth. */
    if ((rc = mem_store__exec(dst, "PRAGMA journal_mode=DELETE", err)) != MEM_OK ||
        (rc = mem_store__exec(dst, "PRAGMA synchronous=FULL", err)) != MEM_OK)
        goto out;
    if ((rc = copy_pages(dst, src, "restore", err)) != MEM_OK) goto out;
    /* The restored file must itself pass the check before we say so. */
    size_t n = 0;
    if ((rc = run_integrity(dst, db_path, NULL, NULL, &n, err)) != MEM_OK) goto out;
    if (n)
        rc = mem_err_set(err, MEM_ECORRUPT, "%s fails the integrity check after the restore",
                         db_path);
out:
    if (dst && sqlite3_close(dst) != SQLITE_OK && rc == MEM_OK)
        rc = mem_err_set(err, MEM_ESTORAGE, "close %s", db_path);
    sqlite3_close(src);
    if (rc == MEM_OK) sync_dir_of(db_path);
    return rc;
}
