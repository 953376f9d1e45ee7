/* store.c - open and close the store, the namespace registry and the read API
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Reads never touch the writer's connection: scans run on the in-memory index under
 * the namespace's shared lock, and the few columns that live only in SQLite (text, source,
 * metadata, supersedes) come from a pool of read-only connections, one per concurrent
 * reader, which WAL lets run beside the writer. Namespaces are refcounted so a drop (or a
 * reload after a failed group) never frees one a reader still holds.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "core/arena.h"
#include "storage/store_int.h"
#include "storage/textcache_int.h"

/* ---- registry ---- */

static size_t reg_lower_bound(const mem_store_t *st, const char *name)
{
    size_t lo = 0, hi = st->n_nss;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(st->nss[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

mem_store_ns_t *mem_store__reg_find(mem_store_t *st, const char *name)
{
    size_t i = reg_lower_bound(st, name);
    return i < st->n_nss && strcmp(st->nss[i]->name, name) == 0 ? st->nss[i] : NULL;
}

int mem_store__reg_add(mem_store_t *st, mem_store_ns_t *ns)
{
    pthread_rwlock_wrlock(&st->reg_lock);
    int rc = MEM_OK;
    if (st->n_nss == st->cap_nss) {
        size_t cap = st->cap_nss ? st->cap_nss * 2 : 16;
        mem_store_ns_t **a = realloc(st->nss, cap * sizeof(*a));
        if (!a) {
            rc = MEM_ENOMEM;
            goto out;
        }
        st->nss = a;
        st->cap_nss = cap;
    }
    size_t i = reg_lower_bound(st, ns->name);
    memmove(st->nss + i + 1, st->nss + i, (st->n_nss - i) * sizeof(*st->nss));
    st->nss[i] = ns;
    st->n_nss++;
out:
    pthread_rwlock_unlock(&st->reg_lock);
    return rc;
}

/* Unlist ns and drop the registry's reference. */
void mem_store__reg_remove(mem_store_t *st, mem_store_ns_t *ns)
{
    pthread_rwlock_wrlock(&st->reg_lock);
    size_t i = reg_lower_bound(st, ns->name);
    bool found = i < st->n_nss && st->nss[i] == ns;
    if (found) {
        memmove(st->nss + i, st->nss + i + 1, (st->n_nss - i - 1) * sizeof(*st->nss));
        st->n_nss--;
    }
    pthread_rwlock_unlock(&st->reg_lock);
    if (found) mem_store__ns_release(ns);
}

mem_store_ns_t *mem_store__ns_acquire(mem_store_t *st, const char *name)
{
    pthread_rwlock_rdlock(&st->reg_lock);
    mem_store_ns_t *ns = mem_store__reg_find(st, name);
    if (ns && __atomic_load_n(&ns->stale, __ATOMIC_ACQUIRE)) ns = NULL; /* see ns_missing */
    if (ns) __atomic_add_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL);
    pthread_rwlock_unlock(&st->reg_lock);
    return ns;
}

int mem_store__ns_missing(mem_store_t *st, const char *name, mem_err_t *err)
{
    pthread_rwlock_rdlock(&st->reg_lock);
    mem_store_ns_t *ns = mem_store__reg_find(st, name);
    bool stale = ns && __atomic_load_n(&ns->stale, __ATOMIC_ACQUIRE);
    int rc = stale ? __atomic_load_n(&ns->stale_rc, __ATOMIC_ACQUIRE) : MEM_ENOTFOUND;
    pthread_rwlock_unlock(&st->reg_lock);
    if (!stale) return mem_err_set(err, MEM_ENOTFOUND, "namespace not found: %s", name);
    rc = mem_err_set(err, rc,
                     "namespace %s is being reloaded after a failed write (%s); retry later", name,
                     rc == MEM_ENOMEM ? "out of memory" : "its stored state could not be read");
    if (err) err->retry_after_s = 1;
    return rc;
}

void mem_store__ns_release(mem_store_ns_t *ns)
{
    if (!ns || __atomic_sub_fetch(&ns->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    mem_index_free(ns->_idx);
    mem_lexidx_free(ns->_lex);
    mem_meta_free(ns->meta);
    pthread_rwlock_destroy(&ns->lock);
    pthread_mutex_destroy(&ns->acc_mu);
    mem_store__graph_free(&ns->g);
    free(ns->dirty);
    free(ns->recent);
    free(ns);
}

/* ---- the index of a namespace: views and the mutable handle (store_int.h) ---- */

const mem_index_t *mem_store__read_lock(mem_store_ns_t *ns)
{
    pthread_rwlock_rdlock(&ns->lock);
    return ns->_idx;
}

void mem_store__read_unlock(mem_store_ns_t *ns)
{
    pthread_rwlock_unlock(&ns->lock);
}

const mem_index_t *mem_store__writer_view(const mem_store__writer_t *w, const mem_store_ns_t *ns)
{
    (void)w; /* the token is the proof: only the writer thread holds one */
    return ns->_idx;
}

mem_index_t *mem_store__write_lock(mem_store__writer_t *w, mem_store_ns_t *ns)
{
    (void)w;
    pthread_rwlock_wrlock(&ns->lock);
    return ns->_idx;
}

void mem_store__write_unlock(mem_store__writer_t *w, mem_store_ns_t *ns)
{
    (void)w;
    pthread_rwlock_unlock(&ns->lock);
}

mem_index_t *mem_store__write_swap(mem_store__writer_t *w, mem_store_ns_t *ns, mem_index_t *fresh)
{
    (void)w;
    mem_index_t *old = ns->_idx;
    ns->_idx = fresh;
    return old;
}

const mem_index_t *mem_store__linker_view(const mem_store__linker_t *lk, const mem_store_ns_t *ns)
{
    (void)lk; /* the token and ns->g.busy are the proof: nothing swaps the index meanwhile */
    return ns->_idx;
}

mem_index_t *mem_store__linker_lock(mem_store__linker_t *lk, mem_store_ns_t *ns)
{
    (void)lk;
    pthread_rwlock_wrlock(&ns->lock);
    return ns->_idx;
}

void mem_store__linker_unlock(mem_store__linker_t *lk, mem_store_ns_t *ns)
{
    (void)lk;
    pthread_rwlock_unlock(&ns->lock);
}

mem_lexidx_t *mem_store__lex(mem_store_ns_t *ns)
{
    return ns->_lex;
}

mem_lexidx_t *mem_store__write_swap_lex(mem_store__writer_t *w, mem_store_ns_t *ns,
                                        mem_lexidx_t *fresh)
{
    (void)w;
    mem_lexidx_t *old = ns->_lex;
    ns->_lex = fresh;
    return old;
}

void mem_store__lex_flags(mem_store_ns_t *ns, size_t pos, uint8_t to)
{
    if (to & MEM_ROW_DELETED)
        mem_lexidx_remove(ns->_lex, pos);
    else
        mem_lexidx_set_active(ns->_lex, pos, to == 0);
}

#define TOK_POOL_MAX 64 /* tokenizers kept for reuse (about 70 KB each) */

mem_lextok_t *mem_store__tok_get(mem_store_t *st)
{
    mem_lextok_t *tk = NULL;
    pthread_mutex_lock(&st->tk_mu);
    if (st->n_tk) tk = st->tk_pool[--st->n_tk];
    pthread_mutex_unlock(&st->tk_mu);
    if (!tk) {
        mem_lextok_opts_t o = MEM_LEXTOK_DEFAULTS;
        if (mem_lextok_new(&o, &tk) != MEM_OK) return NULL;
    }
    return tk;
}

void mem_store__tok_put(mem_store_t *st, mem_lextok_t *tk)
{
    if (!tk) return;
    pthread_mutex_lock(&st->tk_mu);
    if (st->n_tk == st->cap_tk && st->cap_tk < TOK_POOL_MAX) {
        size_t cap = st->cap_tk ? st->cap_tk * 2 : 8;
        mem_lextok_t **p = realloc(st->tk_pool, cap * sizeof(*p));
        if (p) {
            st->tk_pool = p;
            st->cap_tk = cap;
        }
    }
    if (st->n_tk < st->cap_tk) {
        st->tk_pool[st->n_tk++] = tk;
        tk = NULL;
    }
    pthread_mutex_unlock(&st->tk_mu);
    mem_lextok_free(tk);
}

/* ---- read connections ---- */

static void rconn_free(mem_store_rconn_t *c)
{
    if (!c) return;
    sqlite3_finalize(c->get);
    sqlite3_finalize(c->fetch);
    for (size_t i = 0; i <= MEM_STORE__FETCH_IN_MAX; i++)
        sqlite3_finalize(c->fetch_in[i]);
    sqlite3_close(c->db);
    free(c);
}

/* A read connection whose lock waits give up after busy_ms (0: at once, SQLITE_BUSY). */
static int rconn_open(mem_store_t *st, int busy_ms, mem_store_rconn_t **out, mem_err_t *err)
{
    mem_store_rconn_t *c = calloc(1, sizeof(*c));
    if (!c) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    int rc = sqlite3_open_v2(st->path, &c->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(c->db, busy_ms);
        rc = sqlite3_prepare_v3(c->db,
                                "SELECT " MEM_STORE__SEGMENT_COLS " FROM segments"
                                " WHERE ns_id = ? AND id = ?",
                                -1, SQLITE_PREPARE_PERSISTENT, &c->get, NULL);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v3(c->db,
                                "SELECT seq, text, source, metadata FROM segments"
                                " WHERE ns_id = ?1 AND seq IN (SELECT value FROM json_each(?2))",
                                -1, SQLITE_PREPARE_PERSISTENT, &c->fetch, NULL);
    if (rc != SQLITE_OK) {
        rc = mem_store__err_sqlite(err, c->db, rc, "open read connection");
        rconn_free(c);
        return rc;
    }
    *out = c;
    return MEM_OK;
}

static int rconn_acquire(mem_store_t *st, mem_store_rconn_t **out, mem_err_t *err)
{
    pthread_mutex_lock(&st->pool_mu);
    mem_store_rconn_t *c = st->pool;
    if (c) st->pool = c->next;
    pthread_mutex_unlock(&st->pool_mu);
    if (c) {
        *out = c;
        return MEM_OK;
    }
    return rconn_open(st, 5000, out, err);
}

static void rconn_release(mem_store_t *st, mem_store_rconn_t *c)
{
    sqlite3_reset(c->get);
    sqlite3_reset(c->fetch);
    pthread_mutex_lock(&st->pool_mu);
    c->next = st->pool;
    st->pool = c;
    pthread_mutex_unlock(&st->pool_mu);
}

int mem_store__rconn_acquire(mem_store_t *st, mem_store_rconn_t **out, mem_err_t *err)
{
    return rconn_acquire(st, out, err);
}

void mem_store__rconn_release(mem_store_t *st, mem_store_rconn_t *c)
{
    rconn_release(st, c);
}

/* ---- open / close ---- */

/* sqlite3_wal_hook: after each commit, the pages the WAL holds (checkpointed once the
 * group's ops are answered, mem_store__wal_checkpoint). */
static int wal_hook(void *ud, sqlite3 *db, const char *name, int n_frames)
{
    (void)db;
    (void)name;
    mem_store_t *st = ud;
    st->wal_frames = n_frames;
    return SQLITE_OK;
}

/* One passive checkpoint on db: readers keep their snapshots and the writer goes on
 * appending; what a snapshot still needs is copied next time. */
static void checkpoint_on(mem_store_t *st, sqlite3 *db, int frames)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int n_log = 0, n_done = 0;
    sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, &n_log, &n_done);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (dt >= MEM_STORE__WAL_CKPT_LOG_S)
        mem_log(st->opts.log, MEM_LOG_INFO, "wal_checkpoint", "pages=%d copied=%d seconds=%.1f",
                frames >= 0 ? frames : n_log, n_done, dt);
}

/* The WAL hook counts every frame the log holds, and a passive checkpoint leaves them there:
 * under a steady stream of groups the checkpointer rarely catches up at the instant a group
 * begins, so the log seldom restarts and, once past the threshold, a pass is asked for after
 * every group, each copying the few pages the groups before it wrote. That is on purpose:
 * asking only once the log has grown by the threshold again made each pass copy a thousand
 * pages at once, and the commits that ran beside that copy and its fsync took longer (single
 * inserts at concurrency 32: mean commit 0.49-0.51 ms against 0.33-0.40, writer CPU 16-18 us
 * an insert against 13.5, 20.1-20.5k inserts/s against 21.3-22.8k, three turns each). */
void mem_store__wal_checkpoint(mem_store_t *st)
{
    if (st->wal_frames < MEM_STORE__WAL_CKPT_PAGES) return;
    int frames = st->wal_frames;
    st->wal_frames = 0;
    if (!st->ck_started) {
        checkpoint_on(st, st->db, frames);
        return;
    }
    pthread_mutex_lock(&st->ck_mu);
    st->ck_want = true;
    pthread_cond_signal(&st->ck_cv);
    pthread_mutex_unlock(&st->ck_mu);
}

static void *checkpointer_main(void *arg)
{
    mem_store_t *st = arg;
    for (;;) {
        pthread_mutex_lock(&st->ck_mu);
        while (!st->ck_want && !st->ck_stop)
            pthread_cond_wait(&st->ck_cv, &st->ck_mu);
        bool stop = st->ck_stop;
        st->ck_want = false;
        pthread_mutex_unlock(&st->ck_mu);
        if (stop) return NULL; /* the close checkpoints what is left */
        checkpoint_on(st, st->ck_db, -1);
    }
}

/* The checkpointer's connection, as durable as the writer's, and its thread. Failing to
 * start it is not an error: the writer then checkpoints in place, as it always could. */
static void checkpointer_start(mem_store_t *st)
{
    if (sqlite3_open_v2(st->path, &st->ck_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(st->ck_db,
                     st->opts.sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                     NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(st->ck_db);
        st->ck_db = NULL;
        return;
    }
    sqlite3_wal_autocheckpoint(st->ck_db, 0); /* it never commits; belt and braces */
    st->ck_want = st->ck_stop = false;
    if (pthread_create(&st->ck_thread, NULL, checkpointer_main, st) != 0) {
        sqlite3_close(st->ck_db);
        st->ck_db = NULL;
        return;
    }
    pthread_setname_np(st->ck_thread, "mnemod-walckpt");
    st->ck_started = true;
}

static void checkpointer_stop(mem_store_t *st)
{
    if (st->ck_started) {
        pthread_mutex_lock(&st->ck_mu);
        st->ck_stop = true;
        pthread_cond_signal(&st->ck_cv);
        pthread_mutex_unlock(&st->ck_mu);
        pthread_join(st->ck_thread, NULL);
        st->ck_started = false;
    }
    if (st->ck_db) sqlite3_close(st->ck_db);
    st->ck_db = NULL;
}

static int set_pragmas(mem_store_t *st, mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode=WAL", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *mode = (const char *)sqlite3_column_text(s, 0);
        rc = mode && strcmp(mode, "wal") == 0 ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, st->db, rc, "enable WAL");
    if ((rc = mem_store__exec(
             st->db, st->opts.sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
             err)) != MEM_OK)
        return rc;
    /* Checkpoints are asked for by the writer between groups, after their acknowledgements,
     * and run by the checkpointer thread on its own connection, never inside a commit
     * (SQLite's own autocheckpoint runs in COMMIT: a big import's answer would wait for its
     * whole WAL to be copied). The hook replaces the autocheckpoint. */
    sqlite3_wal_hook(st->db, wal_hook, st);
    return MEM_OK;
}

static int read_lsn(mem_store_t *st, mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "SELECT value FROM meta WHERE key='lsn'", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        st->lsn = sqlite3_column_int64(s, 0);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_CORRUPT;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? MEM_OK : mem_store__err_sqlite(err, st->db, rc, "read lsn");
}

/* SQLite says only "unable to open database file"; the usual causes, in words: the path
 * names a directory, or a directory that does not exist (the file is created, its
 * directory never is). */
static void open_failure_reason(const char *path, char *why, size_t cap)
{
    struct stat sb;
    why[0] = '\0';
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            snprintf(why, cap,
                     " (%.100s is a directory: name the database file in it, e.g. "
                     "%.100s/mnemod.db)",
                     path, path);
        return;
    }
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return;
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    if (stat(dir, &sb) != 0 && errno == ENOENT)
        snprintf(why, cap, " (the directory %.100s does not exist)", dir);
}

int mem_store_open(const mem_store_opts_t *opts, mem_store_t **out, mem_err_t *err)
{
    if (!opts || !opts->path || !*opts->path)
        return mem_err_set(err, MEM_EINVAL, "storage: no database path");
    mem_store_t *st = calloc(1, sizeof(*st));
    if (!st || !(st->path = strdup(opts->path))) {
        free(st);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    st->opts = *opts;
    st->opts.path = st->path;
    if (!st->opts.ops) st->opts.ops = mem_vec_ops();
    if (!st->opts.graph_wait_ms) st->opts.graph_wait_ms = MEM_STORE_GRAPH_WAIT_MS;
    if (!st->opts.graph_batch_pairs) st->opts.graph_batch_pairs = MEM_STORE_GRAPH_BATCH_PAIRS;
    st->max_page_count = opts->max_page_count;
    pthread_rwlock_init(&st->reg_lock, NULL);
    pthread_mutex_init(&st->q_mu, NULL);
    pthread_cond_init(&st->q_cv, NULL);
    pthread_cond_init(&st->done_cv, NULL);
    pthread_mutex_init(&st->pool_mu, NULL);
    pthread_mutex_init(&st->g_mu, NULL);
    pthread_cond_init(&st->g_cv, NULL);
    pthread_cond_init(&st->g_done_cv, NULL);
    pthread_mutex_init(&st->tk_mu, NULL);
    pthread_mutex_init(&st->ck_mu, NULL);
    pthread_cond_init(&st->ck_cv, NULL);

    /* synchronous=FULL: the WAL's frames are written in one call a commit (walbuf.c) */
    int rc = sqlite3_open_v2(st->path, &st->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             st->opts.sync_full ? mem_store__walbuf_vfs() : NULL);
    if (rc != SQLITE_OK) {
        char why[320];
        open_failure_reason(st->path, why, sizeof(why));
        rc = mem_err_set(err, mem_store__code_sqlite(rc), "cannot open database %s: %s%s", st->path,
                         st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc), why);
        goto fail;
    }
    sqlite3_extended_result_codes(st->db, 1);
    if (sqlite3_db_readonly(st->db, "main") == 1) {
        rc = mem_err_set(err, MEM_ESTORAGE, "database file %s is read-only", st->path);
        goto fail;
    }
    sqlite3_busy_timeout(st->db, 5000);
    if ((rc = mem_store__check(st->db, err)) != MEM_OK ||
        (rc = mem_store__check_ours(st->db, err)) != MEM_OK)
        goto fail;
    if ((rc = set_pragmas(st, err)) != MEM_OK || (rc = mem_store__migrate(st->db, err)) != MEM_OK ||
        (rc = read_lsn(st, err)) != MEM_OK || (rc = mem_store__load_all(st, err)) != MEM_OK ||
        (rc = mem_store__prepare_writer(st, err)) != MEM_OK)
        goto fail;
    if (mem_store__txc_new(st->opts.text_cache_bytes, &st->txc) != MEM_OK) {
        rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
        goto fail;
    }
    checkpointer_start(st);
    if ((rc = mem_store__scanpool_start(st->opts.scan_helpers, &st->scanpool, err)) != MEM_OK ||
        (rc = mem_store__writer_start(st, err)) != MEM_OK ||
        (rc = mem_store__linker_start(st, err)) != MEM_OK ||
        (rc = rconn_open(st, 0, &st->inline_conn, err)) != MEM_OK)
        goto fail;
    *out = st;
    return MEM_OK;
fail:
    mem_store_close(st);
    return rc;
}

void mem_store_close(mem_store_t *st)
{
    if (!st) return;
    mem_store__linker_stop(st); /* its last checkpoint goes to the writer, which writes it: */
    mem_store__writer_stop(st); /* drains the queue and flushes access statistics */
    checkpointer_stop(st);      /* before the last checkpoint below */
    mem_store__scanpool_stop(st->scanpool); /* no scan runs any more: join the helpers */
    st->scanpool = NULL;
    for (int i = 0; i < STMT_COUNT; i++)
        sqlite3_finalize(st->stmts[i]);
    while (st->pool) {
        mem_store_rconn_t *c = st->pool;
        st->pool = c->next;
        rconn_free(c);
    }
    rconn_free(st->inline_conn);
    mem_store__txc_free(st->txc);
    if (st->db) {
        sqlite3_exec(st->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
        sqlite3_close(st->db);
    }
    for (size_t i = 0; i < st->n_nss; i++)
        mem_store__ns_release(st->nss[i]);
    free(st->nss);
    mem_store__log_free(st);
    pthread_rwlock_destroy(&st->reg_lock);
    pthread_mutex_destroy(&st->q_mu);
    pthread_cond_destroy(&st->q_cv);
    pthread_cond_destroy(&st->done_cv);
    pthread_mutex_destroy(&st->g_mu);
    pthread_cond_destroy(&st->g_cv);
    pthread_cond_destroy(&st->g_done_cv);
    pthread_mutex_destroy(&st->pool_mu);
    for (size_t i = 0; i < st->n_tk; i++)
        mem_lextok_free(st->tk_pool[i]);
    free(st->tk_pool);
    pthread_mutex_destroy(&st->tk_mu);
    pthread_mutex_destroy(&st->ck_mu);
    pthread_cond_destroy(&st->ck_cv);
    free(st->path);
    free(st);
}

/* ---- stats ---- */

/* false (nothing filled) when only_try and a write holds the namespace. */
static bool fill_stats(mem_store_ns_t *ns, mem_store_ns_stats_t *o, bool only_try)
{
    const mem_index_t *idx;
    if (!only_try) {
        idx = mem_store__read_lock(ns);
    } else if (pthread_rwlock_tryrdlock(&ns->lock) == 0) {
        idx = ns->_idx;
    } else {
        return false;
    }
    memset(o, 0, sizeof(*o));
    snprintf(o->name, sizeof(o->name), "%s", ns->name);
    o->dim = ns->dim;
    /* committed state only: an open group's changes are not counted yet */
    o->count = ns->pub_active + ns->pub_superseded;
    o->superseded = ns->pub_superseded;
    o->archived = ns->pub_archived;
    o->coherence = ns->coherence;
    o->graph_edges = ns->pub_edges;
    o->max_degree = ns->pub_max_degree;
    memcpy(o->embedder, ns->pub_embedder, sizeof(o->embedder));
    o->empty = true;
    size_t first = 0, last = mem_index_visible(idx);
    while (first < last && (mem_index_flags(idx, first) & MEM_ROW_DELETED))
        first++;
    while (last > first && (mem_index_flags(idx, last - 1) & MEM_ROW_DELETED))
        last--;
    if (first < last) {
        o->empty = false;
        o->oldest_ms = mem_index_ts(idx, first);
        o->newest_ms = mem_index_ts(idx, last - 1);
    }
    mem_store__read_unlock(ns);
    return true;
}

int mem_store_ns_stats(mem_store_t *st, const char *ns_name, mem_store_ns_stats_t *out,
                       mem_err_t *err)
{
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    if (!ns) return mem_store__ns_missing(st, ns_name, err);
    fill_stats(ns, out, false);
    mem_store__ns_release(ns);
    return MEM_OK;
}

int mem_store_ns_stats_try(mem_store_t *st, const char *ns_name, mem_store_ns_stats_t *out,
                           bool *held, mem_err_t *err)
{
    *held = false;
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    if (!ns) return mem_store__ns_missing(st, ns_name, err);
    *held = !fill_stats(ns, out, true);
    mem_store__ns_release(ns);
    return MEM_OK;
}

/* mem_store__graph_wait for the namespace *nsp (a reference held), following it when it is
 * replaced meanwhile. A failed group's reload (or an import) puts a fresh copy in the
 * registry and marks the old one dropped, which ends the wait on it; but the linker never
 * works on a dropped copy, so its graph stays behind: the wait goes on, to the same
 * deadline, on whatever the registry holds under that name now (*nsp is swapped, the old
 * reference released). MEM_OK with the current copy's graph caught up, MEM_EBUSY, or the
 * error of a name gone meanwhile (then *nsp is NULL). */
static int graph_wait_current(mem_store_t *st, mem_store_ns_t **nsp, const struct timespec *dl,
                              mem_err_t *err)
{
    for (;;) {
        mem_store_ns_t *ns = *nsp;
        int rc = mem_store__graph_wait(st, ns, dl, err);
        if (rc != MEM_OK || !__atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE)) return rc;
        char name[MEM_STORE_NS_MAX + 1];
        memcpy(name, ns->name, sizeof(name));
        mem_store_ns_t *now = mem_store__ns_acquire(st, name);
        mem_store__ns_release(ns);
        *nsp = now;
        if (!now) return mem_store__ns_missing(st, name, err);
        if (now == ns) sched_yield(); /* marked, not yet unlisted: the writer is at it */
    }
}

int mem_store_ns_stats_exact(mem_store_t *st, const char *ns_name, mem_store_ns_stats_t *out,
                             mem_err_t *err)
{
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    if (!ns) return mem_store__ns_missing(st, ns_name, err);
    struct timespec dl;
    mem_store__graph_deadline(st, &dl);
    int rc = graph_wait_current(st, &ns, &dl, err);
    if (rc == MEM_OK) fill_stats(ns, out, false);
    mem_store__ns_release(ns);
    return rc;
}

static int ns_list(mem_store_t *st, bool exact, mem_store_ns_stats_t **out, size_t *n,
                   mem_err_t *err)
{
    pthread_rwlock_rdlock(&st->reg_lock);
    size_t cnt = st->n_nss;
    mem_store_ns_t **held = malloc((cnt ? cnt : 1) * sizeof(*held));
    mem_store_ns_stats_t *res = malloc((cnt ? cnt : 1) * sizeof(*res));
    if (!held || !res) {
        pthread_rwlock_unlock(&st->reg_lock);
        free(held);
        free(res);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < cnt; i++) {
        held[i] = st->nss[i];
        __atomic_add_fetch(&held[i]->refs, 1, __ATOMIC_ACQ_REL);
    }
    pthread_rwlock_unlock(&st->reg_lock);
    struct timespec dl; /* one deadline for the whole list */
    mem_store__graph_deadline(st, &dl);
    int rc = MEM_OK;
    size_t listed = 0;
    for (size_t i = 0; i < cnt; i++) {
        if (exact && rc == MEM_OK) {
            rc = graph_wait_current(st, &held[i], &dl, err);
            if (!held[i]) { /* dropped while the list waited: no longer listed */
                if (rc == MEM_ENOTFOUND) {
                    mem_err_clear(err);
                    rc = MEM_OK;
                }
                continue; /* else stale (being reloaded): the list fails with its error */
            }
        }
        fill_stats(held[i], &res[listed++], false);
        mem_store__ns_release(held[i]);
    }
    free(held);
    if (rc != MEM_OK) {
        free(res);
        return rc;
    }
    *out = res;
    *n = listed;
    return MEM_OK;
}

int mem_store_ns_list(mem_store_t *st, mem_store_ns_stats_t **out, size_t *n, mem_err_t *err)
{
    return ns_list(st, false, out, n, err);
}

int mem_store_ns_list_exact(mem_store_t *st, mem_store_ns_stats_t **out, size_t *n, mem_err_t *err)
{
    return ns_list(st, true, out, n, err);
}

/* ---- get ---- */

void mem_store_segment_free(mem_store_segment_t *seg)
{
    if (!seg) return;
    free(seg->id);
    free(seg->text);
    free(seg->source);
    free(seg->metadata);
    for (size_t i = 0; i < seg->n_supersedes; i++)
        free(seg->supersedes[i]);
    free(seg->supersedes);
    free(seg->superseded_by);
    free(seg->embedding);
    free(seg);
}

/* mem_store_get, or with busy != NULL its try (mem_store_get_try). */
static int get(mem_store_t *st, const char *ns_name, const char *id, bool with_embedding,
               bool *busy, mem_store_segment_t **out, mem_err_t *err)
{
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    if (!ns) return mem_store__ns_missing(st, ns_name, err);
    mem_store_rconn_t *c = NULL;
    mem_store_segment_t *seg = NULL;
    int rc = MEM_OK;
    if (busy) {
        if (__atomic_exchange_n(&st->inline_taken, true, __ATOMIC_ACQUIRE)) {
            *busy = true; /* another try holds the connection */
            goto out;
        }
        c = st->inline_conn;
    } else if ((rc = rconn_acquire(st, &c, err)) != MEM_OK) {
        goto out;
    }
    sqlite3_stmt *s = c->get;
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_text(s, 2, id, -1, SQLITE_STATIC);
    rc = sqlite3_step(s);
    if (busy && ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)) {
        *busy = true;
        rc = MEM_OK;
        goto out;
    }
    if (rc == SQLITE_DONE) {
        rc = mem_err_set(err, MEM_ENOTFOUND, "segment not found: %s", id);
        goto out;
    }
    if (rc != SQLITE_ROW) {
        rc = mem_store__err_sqlite(err, c->db, rc, "get segment");
        goto out;
    }
    if ((rc = mem_store__segment_read(s, ns->dim, with_embedding, &seg, err)) != MEM_OK) goto out;
    *out = seg;
    seg = NULL;
    rc = MEM_OK;
out:
    mem_store_segment_free(seg);
    if (c == st->inline_conn && c) {
        sqlite3_reset(c->get);
        sqlite3_clear_bindings(c->get);
        __atomic_store_n(&st->inline_taken, false, __ATOMIC_RELEASE);
    } else if (c) {
        rconn_release(st, c);
    }
    mem_store__ns_release(ns);
    return rc;
}

int mem_store_get(mem_store_t *st, const char *ns_name, const char *id, bool with_embedding,
                  mem_store_segment_t **out, mem_err_t *err)
{
    return get(st, ns_name, id, with_embedding, NULL, out, err);
}

int mem_store_get_try(mem_store_t *st, const char *ns_name, const char *id, bool with_embedding,
                      mem_store_segment_t **out, bool *busy, mem_err_t *err)
{
    *busy = false;
    return get(st, ns_name, id, with_embedding, busy, out, err);
}

/* ---- retrieve ---- */

/* A retrieve's answer: the results and every string they point to (ids, texts, sources,
 * metadata) come from one arena, which sits right before the array, so an answer of K hits
 * costs one or two allocations instead of four per hit, and one free. */
typedef struct results_box {
    mem_arena_t arena; /* the box itself is in its first block */
    mem_store_result_t res[];
} results_box_t;

static results_box_t *results_box_new(size_t k)
{
    mem_arena_t a;
    mem_arena_init(&a);
    results_box_t *b = mem_arena_alloc(&a, sizeof(*b) + k * sizeof(b->res[0]));
    if (!b) return NULL;
    b->arena = a;
    return b;
}

void mem_store_results_free(mem_store_result_t *res, size_t n)
{
    (void)n;
    if (!res) return;
    results_box_t *b = (results_box_t *)(void *)((char *)res - offsetof(results_box_t, res));
    mem_arena_t a = b->arena; /* freeing the arena frees the box that holds it */
    mem_arena_free(&a);
}

/* Column col of s's row as a NUL-terminated copy in a; NULL for SQL NULL (*oom untouched). */
static char *col_dup_in(mem_arena_t *a, sqlite3_stmt *s, int col, bool *oom)
{
    if (sqlite3_column_type(s, col) == SQLITE_NULL) return NULL;
    const char *t = (const char *)sqlite3_column_text(s, col);
    char *c = t ? mem_arena_strndup(a, t, (size_t)sqlite3_column_bytes(s, col)) : NULL;
    if (!c) *oom = true;
    return c;
}

/* The one statement that reads the texts of the hits, bound and not yet stepped: of n
 * parameters for up to MEM_STORE__FETCH_IN_MAX hits, else with the seqs as a JSON array in
 * *seqs (the caller frees it once the statement is reset). NULL when memory runs out. */
static char *seq_list(const mem_scan_hit_t *hits, size_t n);
static sqlite3_stmt *fetch_bind(mem_store_rconn_t *c, int64_t ns_id, const mem_scan_hit_t *hits,
                                size_t n, char **seqs)
{
    sqlite3_stmt *s = NULL;
    if (n <= MEM_STORE__FETCH_IN_MAX) {
        if (!c->fetch_in[n]) {
            char sql[128 + MEM_STORE__FETCH_IN_MAX * 6];
            int len = snprintf(sql, sizeof(sql),
                               "SELECT seq, text, source, metadata FROM segments"
                               " WHERE ns_id = ?1 AND seq IN (");
            for (size_t i = 0; i < n; i++)
                len += snprintf(sql + len, sizeof(sql) - (size_t)len, i ? ",?%zu" : "?%zu", i + 2);
            snprintf(sql + len, sizeof(sql) - (size_t)len, ")");
            sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &c->fetch_in[n], NULL);
        }
        if ((s = c->fetch_in[n])) {
            sqlite3_bind_int64(s, 1, ns_id);
            for (size_t i = 0; i < n; i++)
                sqlite3_bind_int64(s, (int)i + 2, (sqlite3_int64)hits[i].seq);
            return s;
        }
    }
    if (!(*seqs = seq_list(hits, n))) return NULL;
    sqlite3_bind_int64(c->fetch, 1, ns_id);
    sqlite3_bind_text(c->fetch, 2, *seqs, -1, SQLITE_STATIC);
    return c->fetch;
}

/* "[seq,seq,...]" of the hits, for json_each: the one statement that reads them all. */
static char *seq_list(const mem_scan_hit_t *hits, size_t n)
{
    char *b = malloc(n * 21 + 3), *p = b;
    if (!b) return NULL;
    *p++ = '[';
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, i ? ",%lld" : "%lld", (long long)hits[i].seq);
    *p++ = ']';
    *p = '\0';
    return b;
}

typedef struct seq_at {
    int64_t seq;
    size_t hit;
} seq_at_t;

static int cmp_seq_at(const void *a, const void *b)
{
    int64_t x = ((const seq_at_t *)a)->seq, y = ((const seq_at_t *)b)->seq;
    return x < y ? -1 : x > y;
}

/* The hit with this seq (order sorted by seq), or -1. */
static long hit_of(const seq_at_t *order, size_t n, int64_t seq)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (order[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && order[lo].seq == seq ? (long)order[lo].hit : -1;
}

/* Fill res[at[i]] (id, ts from memory already) with text, source, metadata of hits[i]:
 * stepping s, whose first row was read while the scan's view was held. max_bytes 0: no
 * limit. Else *over (and nothing more read) once bytes0 and the texts, sources and metadata
 * read so far exceed max_bytes. */
static int fill_texts(sqlite3 *db, sqlite3_stmt *s, int first, const mem_scan_hit_t *hits,
                      const size_t *at, size_t n, mem_arena_t *a, mem_store_result_t *res,
                      size_t max_bytes, size_t bytes0, bool *over, mem_err_t *err)
{
    seq_at_t order_s[64], *order = n <= 64 ? order_s : malloc(n * sizeof(*order));
    if (!order) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        order[i] = (seq_at_t){hits[i].seq, i};
    qsort(order, n, sizeof(*order), cmp_seq_at);
    int rc = MEM_OK, src = first;
    size_t found = 0, bytes = bytes0;
    for (; src == SQLITE_ROW; src = sqlite3_step(s)) {
        long i = hit_of(order, n, sqlite3_column_int64(s, 0));
        if (i < 0) continue;
        size_t h = at[i];
        if (max_bytes) {
            bytes += (size_t)sqlite3_column_bytes(s, 1) + (size_t)sqlite3_column_bytes(s, 2) +
                     (size_t)sqlite3_column_bytes(s, 3);
            if (bytes > max_bytes) {
                *over = true;
                break;
            }
        }
        bool oom = false;
        res[h].text = col_dup_in(a, s, 1, &oom);
        res[h].source = col_dup_in(a, s, 2, &oom);
        res[h].metadata = col_dup_in(a, s, 3, &oom);
        if (oom) {
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
            break;
        }
        found++;
    }
    if (over && *over) {
        /* the caller gives the answer up: nothing is wrong with it */
    } else if (rc == MEM_OK && src != SQLITE_DONE) {
        rc = mem_store__err_sqlite(err, db, src, "fetch results");
    } else if (rc == MEM_OK && found != n) {
        /* the snapshot was taken while the scan's view was held: every hit is in it */
        rc = mem_err_set(err, MEM_ECORRUPT, "storage: %zu of %zu results are missing from the file",
                         n - found, n);
    }
    if (order != order_s) free(order);
    return rc;
}

/* The graph covers every write acknowledged so far (no wait). A replaced (dropped) copy's
 * graph is never caught up: the waiting path follows the name (graph_wait_current). */
static bool graph_current(mem_store_t *st, mem_store_ns_t *ns)
{
    if (!ns->coherence) return true;
    pthread_mutex_lock(&st->g_mu); /* held for counter updates only, never across work */
    bool ok = ns->g.g_gen >= ns->g.w_gen && !__atomic_load_n(&ns->dropped, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&st->g_mu);
    return ok;
}

/* The query against ns: its dimension, and a coherence_weight where ns keeps no graph (a
 * configured default is dropped there, p's copy of it). */
static int query_fits(const mem_store_ns_t *ns, const mem_store_query_t *q, mem_scan_params_t *p,
                      mem_err_t *err)
{
    if (q->scan.match != MEM_SCAN_MATCH_TEXT && q->q_dim != ns->dim)
        return mem_err_field(err, MEM_EDIM, "embedding", "embedding: expected %zu floats, got %zu",
                             ns->dim, q->q_dim);
    if (!ns->coherence && p->coherence_weight > 0) {
        if (q->coherence_weight_given)
            return mem_err_field(err, MEM_EINVAL, "coherence_weight",
                                 "coherence_weight: namespace %s keeps no coherence graph "
                                 "(created with \"coherence\": false)",
                                 ns->name);
        p->coherence_weight = 0; /* a configured default, meaningless here */
    }
    return MEM_OK;
}

/* mem_store_retrieve, or with why != NULL its try (mem_store_retrieve_try): then nothing
 * here waits, and *why says when it gave up before doing anything the caller can see. */
/* *again (when the texts' snapshot may hold a patch that memory, which the scan read, does not
 * show yet: the caller runs it again once the patch is published) */
static int retrieve(mem_store_t *st, const char *ns_name, const mem_store_query_t *q,
                    size_t work_budget, mem_store_try_t *why, mem_store_result_t **out, size_t *n,
                    size_t *scanned, const char **kernel, bool *again, mem_err_t *err)
{
    *again = false;
    if (why) *why = MEM_STORE_TRY_DONE;
    if (q->scan.k < 1 || q->scan.k > MEM_SCAN_MAX_K)
        return mem_err_field(err, MEM_EINVAL, "k", "k: must be in 1..%d", MEM_SCAN_MAX_K);
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    if (!ns) return mem_store__ns_missing(st, ns_name, err);
    mem_store_rconn_t *c = NULL;
    mem_scan_hit_t *hits = NULL;
    results_box_t *box = NULL; /* res and its strings, the scratch arrays too */
    mem_store_result_t *res = NULL;
    /* the hits whose texts the cache lacks (miss, at their res index miss_at); found[i]: it
     * had res[i]'s */
    mem_scan_hit_t *miss = NULL;
    size_t *miss_at = NULL, n_miss = 0, cached_bytes = 0;
    bool *found = NULL;
    mem_store__txc_ticket_t ticket = 0;
    char *seqs = NULL;
    sqlite3_stmt *fetch = NULL; /* the texts' statement, bound (fetch_bind) */
    size_t n_hits = 0, n_scanned = 0, n_res = 0;
    int rc = MEM_OK;
    mem_scan_params_t p = q->scan;
    bool text = q->scan.match != MEM_SCAN_MATCH_VECTOR;
    mem_lextok_t *tk = NULL;
    mem_lexq_t lq = {0};
    if ((rc = query_fits(ns, q, &p, err)) != MEM_OK) goto out;
    if (p.coherence_weight > 0 || q->need_gates) {
        if (why) {
            if (!graph_current(st, ns)) {
                *why = MEM_STORE_TRY_GRAPH;
                goto out;
            }
        } else {
            struct timespec dl;
            mem_store__graph_deadline(st, &dl);
            const mem_store_ns_t *arrived = ns; /* compared, never read: we hold both */
            if ((rc = graph_wait_current(st, &ns, &dl, err)) != MEM_OK) goto out;
            if (ns != arrived && (rc = query_fits(ns, q, &p, err)) != MEM_OK) goto out;
        }
    }
    if (text && !(tk = mem_store__tok_get(st))) {
        rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
        goto out;
    }
    if ((box = results_box_new(q->scan.k))) {
        res = box->res;
        hits = mem_arena_alloc(&box->arena, q->scan.k * sizeof(*hits));
        miss = mem_arena_alloc(&box->arena,
                               q->scan.k * (sizeof(*miss) + sizeof(*miss_at) + sizeof(*found)));
    }
    if (!hits || !res || !miss) {
        rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
        goto out;
    }
    if (why) {
        if (__atomic_load_n(&ns->last_scan_work, __ATOMIC_RELAXED) > work_budget) {
            *why = MEM_STORE_TRY_BUDGET; /* the last one did not fit: do not start this one */
            goto out;
        }
        if (__atomic_exchange_n(&st->inline_taken, true, __ATOMIC_ACQUIRE)) {
            *why = MEM_STORE_TRY_SQLITE; /* another try holds the connection */
            goto out;
        }
        c = st->inline_conn;
    } else if ((rc = rconn_acquire(st, &c, err)) != MEM_OK) {
        goto out;
    }

    const mem_index_t *idx;
    if (why) {
        if (pthread_rwlock_tryrdlock(&ns->lock) != 0) { /* a write holds it: never wait */
            *why = MEM_STORE_TRY_LOCKED;
            goto out;
        }
        idx = ns->_idx;
    } else {
        idx = mem_store__read_lock(ns);
    }
    bool skip = false;
    if (text) { /* weighed by the statistics of this moment, under the lock */
        p.lex = ns->_lex;
        p.text = &lq;
        if (mem_lexq_prepare(&lq, ns->_lex, tk, q->text, q->text_len, &q->lex) != MEM_OK) {
            mem_store__read_unlock(ns);
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
            goto out;
        }
    }
    p.source = -1;
    if (q->source) {
        p.source = mem_index_source_find(idx, q->source, q->source_len);
        skip = p.source == 0; /* no segment carries that source */
    }
    uint64_t *fmask = NULL;
    size_t *cand = NULL, n_cand = 0;
    int plan = 0;
    if (!skip && q->filter &&
        (plan = mem_store__meta_plan(ns, idx, q->filter, &p, &fmask, &cand, &n_cand, err)) < 0) {
        mem_store__read_unlock(ns);
        rc = plan;
        goto out;
    }
    bool within = true;
    if (why) p.work_budget = work_budget; /* and never split: no helper is waited for */
    if (!skip && plan == 1)
        within = mem_scan_rows(idx, st->opts.ops, &p, cand, n_cand, hits, &n_hits, &n_scanned);
    else if (!skip && why)
        within = mem_scan_run(idx, st->opts.ops, &p, hits, &n_hits, &n_scanned);
    else if (!skip)
        mem_store__scan(st, idx, &p, hits, &n_hits, &n_scanned);
    if (!skip)
        __atomic_store_n(&ns->last_scan_work,
                         within ? n_scanned * (ns->dim + MEM_SCAN_ROW_WORK) : SIZE_MAX,
                         __ATOMIC_RELAXED);
    /* id, timestamp and seq come from memory; the rest from one SQLite snapshot pinned now,
     * while the view is held: a delete applies to memory before its commit, so every hit is
     * still in that snapshot even if it is deleted right after the unlock. */
    bool oom = false;
    for (size_t i = 0; within && i < n_hits && !oom; i++) {
        res[i].hit = hits[i];
        res[i].ts_ms = mem_index_ts(idx, hits[i].pos);
        const char *id = mem_index_id(idx, hits[i].pos);
        oom = !(res[i].id = mem_arena_strndup(&box->arena, id, strlen(id)));
        n_res = i + 1;
    }
    /* What the cache holds comes from it, copied under the view; only the rest from SQLite
     * (a patch drops its entry before it writes, and until its group has settled no reader
     * adds one: textcache_int.h). */
    if (within && !oom && n_hits) {
        miss_at = (size_t *)(miss + q->scan.k);
        found = (bool *)(miss_at + q->scan.k);
        if (mem_store__txc_get(st->txc, ns->ns_id, &box->arena, res, n_hits, found, &cached_bytes,
                               &ticket) != MEM_OK)
            oom = true;
        for (size_t i = 0; i < n_hits; i++)
            if (!found[i]) {
                miss[n_miss] = hits[i];
                miss_at[n_miss++] = i;
            }
    }
    int first = SQLITE_DONE;
    if (within && !oom && n_miss) {
        if ((fetch = fetch_bind(c, ns->ns_id, miss, n_miss, &seqs)))
            first = sqlite3_step(fetch); /* takes the read snapshot */
        else
            oom = true;
    }
    /* A try gives up here on a busy file (busy timeout 0): nothing is recorded yet. Access
     * counts once the fetch has its snapshot, so a retrieve tried and rerun counts once. */
    bool busy = why && (first == SQLITE_BUSY || first == SQLITE_LOCKED ||
                        (first & 0xff) == SQLITE_BUSY || (first & 0xff) == SQLITE_LOCKED);
    /* A patch commits its row while memory keeps the old values until the group is published
     * (writer.c): a snapshot pinned meanwhile could answer a hit chosen by the old metadata or
     * source with the new ones. Then nothing is recorded and the whole retrieve runs again.
     * Only a filter or a source chooses hits by those values: other retrieves never wait. */
    if (!busy && first == SQLITE_ROW && (q->filter || q->source) &&
        __atomic_load_n(&ns->patch_unpublished, __ATOMIC_SEQ_CST))
        *again = true;
    busy |= why && *again; /* a try hands it to the pool, which may wait */
    /* A try reads the texts here, before anything is recorded, and gives up on an answer
     * over MEM_STORE_TRY_MAX_TEXT: what the loop fetches and encodes stays small whatever
     * k and the texts' sizes (the view is held that long, no longer than the cap). */
    bool big = why && cached_bytes > MEM_STORE_TRY_MAX_TEXT, filled = false;
    int fill_rc = MEM_OK;
    if (why && within && !busy && !oom && !big && first == SQLITE_ROW) {
        fill_rc = fill_texts(c->db, fetch, first, miss, miss_at, n_miss, &box->arena, res,
                             MEM_STORE_TRY_MAX_TEXT, cached_bytes, &big, err);
        filled = true;
    }
    if (within && !busy && !*again && !big && q->record_access && !skip && !oom &&
        (first == SQLITE_ROW || first == SQLITE_DONE))
        mem_store__record_access(ns, idx, p.match == MEM_SCAN_MATCH_TEXT ? NULL : p.query, hits,
                                 n_hits);
    mem_store__read_unlock(ns);
    free(fmask);
    free(cand);
    if (!within || busy || big) {
        *why = busy ? MEM_STORE_TRY_SQLITE : MEM_STORE_TRY_BUDGET;
        goto out;
    }
    if (*again) goto out;
    if (oom) {
        rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
        goto out;
    }
    if (n_miss && first != SQLITE_ROW && first != SQLITE_DONE) {
        rc = mem_store__err_sqlite(err, c->db, first, "fetch results");
        goto out;
    }
    if (filled ? (rc = fill_rc) != MEM_OK
               : n_miss && (rc = fill_texts(c->db, fetch, first, miss, miss_at, n_miss, &box->arena,
                                            res, 0, 0, NULL, err)) != MEM_OK)
        goto out;
    if (n_miss) mem_store__txc_put(st->txc, ticket, ns->ns_id, res, found, n_hits);
    *out = res;
    res = NULL;
    *n = n_res;
    if (scanned) *scanned = n_scanned;
    if (kernel) *kernel = st->opts.ops->name;
out:
    mem_lexq_deinit(&lq);
    mem_store__tok_put(st, tk);
    mem_store_results_free(res, n_res); /* hits and miss with it */
    if (c && fetch) {
        sqlite3_reset(fetch);
        sqlite3_clear_bindings(fetch);
    }
    if (c) {
        if (c == st->inline_conn)
            __atomic_store_n(&st->inline_taken, false, __ATOMIC_RELEASE);
        else
            rconn_release(st, c);
    }
    free(seqs);
    mem_store__ns_release(ns);
    return rc;
}

int mem_store_retrieve(mem_store_t *st, const char *ns_name, const mem_store_query_t *q,
                       mem_store_result_t **out, size_t *n, size_t *scanned, const char **kernel,
                       mem_err_t *err)
{
    bool again;
    int rc;
    /* a patch published within about a commit: wait for it in small steps */
    while ((rc = retrieve(st, ns_name, q, 0, NULL, out, n, scanned, kernel, &again, err)) ==
               MEM_OK &&
           again) {
        struct timespec pause = {0, 100 * 1000};
        nanosleep(&pause, NULL);
    }
    return rc;
}

int mem_store_retrieve_try(mem_store_t *st, const char *ns_name, const mem_store_query_t *q,
                           size_t work_budget, mem_store_try_t *why, mem_store_result_t **out,
                           size_t *n, size_t *scanned, const char **kernel, mem_err_t *err)
{
    bool again;
    return retrieve(st, ns_name, q, work_budget ? work_budget : 1, why, out, n, scanned, kernel,
                    &again, err);
}

/* ---- compaction plan ---- */

void mem_store_ids_free(char **ids, size_t n)
{
    if (!ids) return;
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
}

/* The compaction's context vectors against a namespace of dimension dim. */
static int context_fits(const mem_store_compact_req_t *req, size_t dim, mem_err_t *err)
{
    if (req->context_given && req->n_context && req->context_dim != dim)
        return mem_err_field(err, MEM_EDIM, "context", "context: expected %zu floats, got %zu", dim,
                             req->context_dim);
    return MEM_OK;
}

int mem_store_compact_plan(mem_store_t *st, const char *ns_name, const mem_store_compact_req_t *req,
                           char ***evict_ids, size_t *n_evict, size_t *before, mem_err_t *err)
{
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    if (!ns) return mem_store__ns_missing(st, ns_name, err);
    size_t dim = ns->dim, n = 0, n_ctx = 0;
    float *vecs = NULL, *ctx = NULL;
    const float **vptr = NULL;
    uint64_t *tick = NULL;
    uint32_t *access = NULL;
    uint8_t *keep = NULL;
    char **ids = NULL, **ev = NULL;
    size_t n_ev = 0;
    int rc = MEM_OK;
    if ((rc = context_fits(req, dim, err)) != MEM_OK) goto out;
    if (!req->has_target && !(req->ratio > 0 && req->ratio <= 1)) {
        rc = mem_err_field(err, MEM_EINVAL, "ratio", "ratio: must be in (0, 1]");
        goto out;
    }
    struct timespec dl; /* a compaction is a read that depends on the graph (SPEC section 5) */
    mem_store__graph_deadline(st, &dl);
    if ((rc = graph_wait_current(st, &ns, &dl, err)) != MEM_OK) goto out;
    if (ns->dim != dim) { /* an import of another dimension replaced it meanwhile */
        dim = ns->dim;
        if ((rc = context_fits(req, dim, err)) != MEM_OK) goto out;
    }

    const mem_index_t *idx = mem_store__read_lock(ns);
    mem_index_counts_t counts;
    mem_index_counts(idx, &counts);
    size_t cap = counts.n_active;
    vecs = malloc((cap ? cap : 1) * dim * sizeof(float));
    tick = malloc((cap ? cap : 1) * sizeof(*tick));
    access = malloc((cap ? cap : 1) * sizeof(*access));
    ids = calloc(cap ? cap : 1, sizeof(*ids));
    bool oom = !vecs || !tick || !access || !ids;
    for (size_t pos = 0, vis = mem_index_visible(idx); !oom && pos < vis && n < cap; pos++) {
        if (mem_index_flags(idx, pos) != 0) continue;
        memcpy(vecs + n * dim, mem_index_vec(idx, pos), dim * sizeof(float));
        tick[n] = mem_index_access_tick(idx, pos);
        access[n] = mem_index_access_count(idx, pos);
        if (!(ids[n] = strdup(mem_index_id(idx, pos)))) oom = true;
        n++;
    }
    mem_store__read_unlock(ns);
    if (!req->context_given && mem_store__recent_queries(ns, &ctx, &n_ctx) != MEM_OK) oom = true;
    if (oom) {
        rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
        goto out;
    }
    size_t target = req->has_target ? req->target : (size_t)floor(req->ratio * (double)n);
    if (target < n) {
        vptr = malloc(n * sizeof(*vptr));
        keep = calloc(n, 1);
        if (!vptr || !keep) {
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            vptr[i] = vecs + i * dim;
        mem_compact_input_t in = {
            .n = n,
            .dim = dim,
            .vecs = vptr,
            .tick = tick,
            .access = access,
            .context = req->context_given ? req->context : ctx,
            .n_context = req->context_given ? req->n_context : n_ctx,
            .alpha = req->alpha,
            .beta = req->beta,
            .gamma = req->gamma,
            .dedup_threshold = req->dedup_threshold,
        };
        if ((rc = mem_compact_plan(req->policy, &in, target, keep, err)) != MEM_OK) goto out;
        ev = calloc(n, sizeof(*ev));
        if (!ev) {
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            if (!keep[i]) {
                ev[n_ev++] = ids[i];
                ids[i] = NULL;
            }
    }
    *evict_ids = ev;
    *n_evict = n_ev;
    *before = n;
    ev = NULL;
    n_ev = 0;
out:
    mem_store_ids_free(ev, n_ev);
    mem_store_ids_free(ids, n);
    free(vecs);
    free(vptr);
    free(tick);
    free(access);
    free(keep);
    free(ctx);
    mem_store__ns_release(ns);
    return rc;
}

/* ---- metrics ---- */

void mem_store_get_metrics(mem_store_t *st, mem_store_metrics_t *out)
{
    pthread_mutex_lock(&st->q_mu);
    *out = st->m;
    out->queue_depth = st->q_len;
    pthread_mutex_unlock(&st->q_mu);
    pthread_rwlock_rdlock(&st->reg_lock);
    out->n_namespaces = st->n_nss;
    pthread_rwlock_unlock(&st->reg_lock);
    mem_store__scanpool_counts(st->scanpool, &out->scans_split, &out->scan_parts_helped);
    pthread_mutex_lock(&st->g_mu);
    out->graph_batches = st->g_batches;
    out->graph_rows = st->g_rows_done;
    out->graph_seconds = st->g_seconds;
    pthread_mutex_unlock(&st->g_mu);
    out->graph_behind = mem_store__graph_behind(st);
    mem_store__txc_stats_t tc;
    mem_store__txc_stats(st->txc, &tc);
    out->text_cache_hits = tc.hits;
    out->text_cache_misses = tc.misses;
    out->text_cache_evictions = tc.evictions;
    out->text_cache_entries = tc.entries;
    out->text_cache_bytes = tc.bytes;
}

void mem_store_set_max_page_count(mem_store_t *st, uint32_t pages)
{
    __atomic_store_n(&st->max_page_count, pages, __ATOMIC_RELEASE);
    pthread_mutex_lock(&st->q_mu);
    pthread_cond_signal(&st->q_cv);
    pthread_mutex_unlock(&st->q_mu);
}
