/* applied.c - the cluster log's applied positions (issue 7), stored with the records' rows
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. In cluster mode every write is a record of a replicated log (one of K streams).
 * applied_log(stream, seq) holds, per stream, the sequence of the last record this node
 * applied; the writer updates it in the record's own savepoint, so a crash leaves the rows
 * and the position consistent and replay from position + 1 is exact. Positions are also
 * kept in memory (st->logpos, under q_mu) for the writer's skip/gap check and for readers.
 * The table is created on demand (IF NOT EXISTS), so single-node files are unaffected
 * until a cluster record is applied, and no schema version is needed.
 *
 * With placement a node applies only the namespaces placed on it, so it applies a sparse
 * subset of each stream and joins a namespace at a snapshot's position. Such records carry
 * log_chain: applied_ns(ns, seq) then holds, per namespace, a position such that every
 * record of that namespace at or below it is applied here; a record names its predecessor
 * in the namespace (log_prev), which must be at or below that position, so a missed record
 * is detected (a gap) rather than skipped over. The stream's row is then only a restart
 * hint: it grows to the highest record applied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "storage/store_int.h"

static struct mem_store_logpos *find(mem_store_t *st, const char *stream)
{
    for (size_t i = 0; i < st->n_logpos; i++)
        if (strcmp(st->logpos[i].stream, stream) == 0) return &st->logpos[i];
    return NULL;
}

static int set_pos(mem_store_t *st, const char *stream, uint64_t seq)
{
    struct mem_store_logpos *p = find(st, stream);
    if (!p) {
        struct mem_store_logpos *n = realloc(st->logpos, (st->n_logpos + 1) * sizeof(*n));
        if (!n) return MEM_ENOMEM;
        st->logpos = n;
        p = &n[st->n_logpos++];
        snprintf(p->stream, sizeof(p->stream), "%s", stream);
    }
    p->seq = seq;
    return MEM_OK;
}

/* ---- per-namespace chain positions: a sorted array (under q_mu) ---- */

static size_t ns_at(const mem_store_t *st, const char *ns, bool *found)
{
    size_t lo = 0, hi = st->n_nspos;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(st->nspos[mid].ns, ns);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static uint64_t ns_get(const mem_store_t *st, const char *ns)
{
    bool found;
    size_t i = ns_at(st, ns, &found);
    return found ? st->nspos[i].seq : 0;
}

static int ns_put(mem_store_t *st, const char *ns, uint64_t seq)
{
    bool found;
    size_t i = ns_at(st, ns, &found);
    if (found) {
        st->nspos[i].seq = seq;
        return MEM_OK;
    }
    if (strlen(ns) > MEM_STORE_NS_MAX) return MEM_EINVAL;
    if (st->n_nspos == st->cap_nspos) {
        size_t cap = st->cap_nspos ? st->cap_nspos * 2 : 64;
        struct mem_store_nspos *n = realloc(st->nspos, cap * sizeof(*n));
        if (!n) return MEM_ENOMEM;
        st->nspos = n;
        st->cap_nspos = cap;
    }
    memmove(&st->nspos[i + 1], &st->nspos[i], (st->n_nspos - i) * sizeof(st->nspos[0]));
    snprintf(st->nspos[i].ns, sizeof(st->nspos[i].ns), "%s", ns);
    st->nspos[i].seq = seq;
    st->n_nspos++;
    return MEM_OK;
}

static void ns_del(mem_store_t *st, const char *ns)
{
    bool found;
    size_t i = ns_at(st, ns, &found);
    if (!found) return;
    memmove(&st->nspos[i], &st->nspos[i + 1], (st->n_nspos - i - 1) * sizeof(st->nspos[0]));
    st->n_nspos--;
}

static int load_ns(mem_store_t *st, mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "SELECT ns, seq FROM applied_ns ORDER BY ns", -1, &s, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, st->db, rc, "read applied_ns");
    pthread_mutex_lock(&st->q_mu);
    st->n_nspos = 0;
    int out = MEM_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && out == MEM_OK) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        if (name && ns_put(st, name, (uint64_t)sqlite3_column_int64(s, 1)) == MEM_ENOMEM)
            out = mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    pthread_mutex_unlock(&st->q_mu);
    if (out == MEM_OK && rc != SQLITE_DONE)
        out = mem_store__err_sqlite(err, st->db, rc, "read applied_ns");
    sqlite3_finalize(s);
    return out;
}

static int load(mem_store_t *st, mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "SELECT stream, seq FROM applied_log", -1, &s, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, st->db, rc, "read applied_log");
    pthread_mutex_lock(&st->q_mu);
    st->n_logpos = 0;
    int out = MEM_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && out == MEM_OK) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        if (name && set_pos(st, name, (uint64_t)sqlite3_column_int64(s, 1)) != MEM_OK)
            out = mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    pthread_mutex_unlock(&st->q_mu);
    if (out == MEM_OK && rc != SQLITE_DONE)
        out = mem_store__err_sqlite(err, st->db, rc, "read applied_log");
    sqlite3_finalize(s);
    return out == MEM_OK ? load_ns(st, err) : out;
}

int mem_store__log_prepare(mem_store_t *st, mem_err_t *err)
{
    int rc = mem_store__exec(st->db,
                             "CREATE TABLE IF NOT EXISTS applied_log("
                             "stream TEXT PRIMARY KEY, seq INTEGER NOT NULL);"
                             "CREATE TABLE IF NOT EXISTS applied_ns("
                             "ns TEXT PRIMARY KEY, seq INTEGER NOT NULL)",
                             err);
    return rc == MEM_OK ? load(st, err) : rc;
}

int mem_store__log_check(mem_store_t *st, mem_store_op_t *op)
{
    op->log_skipped = false;
    if (strlen(op->log_stream) >= sizeof(st->logpos[0].stream))
        return mem_err_set(&op->err, MEM_EINVAL, "log stream name too long");
    if (op->log_chain) {
        pthread_mutex_lock(&st->q_mu);
        uint64_t at = ns_get(st, op->ns);
        pthread_mutex_unlock(&st->q_mu);
        if (op->log_seq <= at) {
            op->log_skipped = true;
            return 1;
        }
        if (op->log_prev > at) {
            mem_err_set(&op->err, MEM_EBUSY,
                        "log gap on %s: applied %llu, record %llu follows %llu", op->ns,
                        (unsigned long long)at, (unsigned long long)op->log_seq,
                        (unsigned long long)op->log_prev);
            op->err.retry_after_s = 1;
            return MEM_EBUSY;
        }
        return 0;
    }
    pthread_mutex_lock(&st->q_mu);
    struct mem_store_logpos *p = find(st, op->log_stream);
    uint64_t have = p ? p->seq : 0;
    pthread_mutex_unlock(&st->q_mu);
    if (op->log_seq <= have) {
        op->log_skipped = true;
        return 1;
    }
    if (have && op->log_seq != have + 1) {
        mem_err_set(&op->err, MEM_EBUSY, "log gap on %s: applied %llu, got %llu", op->log_stream,
                    (unsigned long long)have, (unsigned long long)op->log_seq);
        op->err.retry_after_s = 1;
        return MEM_EBUSY;
    }
    return 0;
}

static int exec_ns_pos(mem_store_t *st, const char *sql, const char *ns, uint64_t seq,
                       mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, st->db, rc, "prepare applied_ns");
    sqlite3_bind_text(s, 1, ns, -1, SQLITE_STATIC);
    if (sqlite3_bind_parameter_count(s) > 1) sqlite3_bind_int64(s, 2, (int64_t)seq);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? MEM_OK : mem_store__err_sqlite(err, st->db, rc, "write applied_ns");
}

int mem_store__log_ns_set(mem_store_t *st, const char *ns, uint64_t seq, mem_err_t *err)
{
    int rc = exec_ns_pos(st,
                         "INSERT INTO applied_ns(ns, seq) VALUES(?, ?)"
                         " ON CONFLICT(ns) DO UPDATE SET seq = excluded.seq",
                         ns, seq, err);
    if (rc != MEM_OK) return rc;
    pthread_mutex_lock(&st->q_mu);
    rc = ns_put(st, ns, seq);
    pthread_mutex_unlock(&st->q_mu);
    return rc == MEM_OK ? MEM_OK : mem_err_set(err, rc, "applied_ns: cannot record %s", ns);
}

int mem_store__log_ns_forget(mem_store_t *st, const char *ns, mem_err_t *err)
{
    int rc = exec_ns_pos(st, "DELETE FROM applied_ns WHERE ns = ?", ns, 0, err);
    if (rc != MEM_OK) return rc;
    pthread_mutex_lock(&st->q_mu);
    ns_del(st, ns);
    pthread_mutex_unlock(&st->q_mu);
    return MEM_OK;
}

int mem_store__log_write(mem_store_t *st, mem_store_op_t *op, mem_err_t *err)
{
    if (op->log_chain) {
        int rc = mem_store__log_ns_set(st, op->ns, op->log_seq, err);
        if (rc != MEM_OK) return rc;
    }
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v3(st->db,
                                "INSERT INTO applied_log(stream, seq) VALUES(?, ?)"
                                " ON CONFLICT(stream) DO UPDATE SET seq = max(seq, excluded.seq)",
                                -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, st->db, rc, "prepare applied_log");
    sqlite3_bind_text(s, 1, op->log_stream, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (int64_t)op->log_seq);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return mem_store__err_sqlite(err, st->db, rc, "write applied_log");
    pthread_mutex_lock(&st->q_mu);
    struct mem_store_logpos *p = find(st, op->log_stream);
    rc = set_pos(st, op->log_stream, p && p->seq > op->log_seq ? p->seq : op->log_seq);
    pthread_mutex_unlock(&st->q_mu);
    return rc == MEM_OK ? MEM_OK : mem_err_set(err, MEM_ENOMEM, "out of memory");
}

void mem_store__log_reload(mem_store_t *st)
{
    mem_err_t e;
    if (load(st, &e) != MEM_OK)
        mem_log(st->opts.log, MEM_LOG_ERROR, "store_reload_failed", "what=applied_log err=%s",
                e.msg);
}

void mem_store__log_free(mem_store_t *st)
{
    free(st->logpos);
    st->logpos = NULL;
    st->n_logpos = 0;
    free(st->nspos);
    st->nspos = NULL;
    st->n_nspos = st->cap_nspos = 0;
}

uint64_t mem_store_log_ns_applied(mem_store_t *st, const char *ns)
{
    pthread_mutex_lock(&st->q_mu);
    uint64_t seq = ns_get(st, ns);
    pthread_mutex_unlock(&st->q_mu);
    return seq;
}

void mem_store_log_ns_each(mem_store_t *st, void (*fn)(const char *ns, uint64_t seq, void *ud),
                           void *ud)
{
    pthread_mutex_lock(&st->q_mu);
    for (size_t i = 0; i < st->n_nspos; i++)
        fn(st->nspos[i].ns, st->nspos[i].seq, ud);
    pthread_mutex_unlock(&st->q_mu);
}

uint64_t mem_store_log_applied(mem_store_t *st, const char *stream)
{
    pthread_mutex_lock(&st->q_mu);
    struct mem_store_logpos *p = find(st, stream);
    uint64_t seq = p ? p->seq : 0;
    pthread_mutex_unlock(&st->q_mu);
    return seq;
}

int mem_store_snapshot(mem_store_t *st, const char *dest_path, mem_err_t *err)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(st->path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc != SQLITE_OK) {
        rc = mem_err_set(err, mem_store__code_sqlite(rc), "snapshot: cannot open %s: %s", st->path,
                         db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 5000);
    char *sql = sqlite3_mprintf("VACUUM INTO %Q", dest_path);
    if (!sql) {
        sqlite3_close(db);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    rc = mem_store__exec(db, sql, err);
    sqlite3_free(sql);
    sqlite3_close(db);
    return rc;
}
