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
    return out;
}

int mem_store__log_prepare(mem_store_t *st, mem_err_t *err)
{
    int rc = mem_store__exec(st->db,
                             "CREATE TABLE IF NOT EXISTS applied_log("
                             "stream TEXT PRIMARY KEY, seq INTEGER NOT NULL)",
                             err);
    return rc == MEM_OK ? load(st, err) : rc;
}

int mem_store__log_check(mem_store_t *st, mem_store_op_t *op)
{
    op->log_skipped = false;
    if (strlen(op->log_stream) >= sizeof(st->logpos[0].stream))
        return mem_err_set(&op->err, MEM_EINVAL, "log stream name too long");
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

int mem_store__log_write(mem_store_t *st, mem_store_op_t *op, mem_err_t *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v3(st->db,
                                "INSERT INTO applied_log(stream, seq) VALUES(?, ?)"
                                " ON CONFLICT(stream) DO UPDATE SET seq = excluded.seq",
                                -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, st->db, rc, "prepare applied_log");
    sqlite3_bind_text(s, 1, op->log_stream, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (int64_t)op->log_seq);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return mem_store__err_sqlite(err, st->db, rc, "write applied_log");
    pthread_mutex_lock(&st->q_mu);
    rc = set_pos(st, op->log_stream, op->log_seq);
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
