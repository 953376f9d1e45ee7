/* remove.c - the writer's delete and compaction ops: rows that leave
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A delete and a compaction's evictions change flags (under the exclusive lock,
 * mem_store__leave) and write their rows; the coherence graph follows in the background
 * (linker.c), as for every other change: no graph work here. A compaction applies a plan made
 * earlier on a worker (mem_store_compact_plan): ids that are gone or no longer active by now are
 * skipped.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "storage/writer_int.h"

/* Write the rows that left: deleted (purge) or archived. A deleted row of a namespace with a
 * graph leaves its vector in graph_gone until the graph has let go of it (linker.c). */
static int write_left(mem_store__writer_t *w, mem_store_ns_t *ns, const int64_t *seqs, size_t n,
                      bool purge, mem_err_t *err)
{
    int rc = MEM_OK;
    for (size_t i = 0; i < n && rc == MEM_OK; i++) {
        if (purge && ns->coherence) {
            sqlite3_stmt *g = w->st->stmts[STMT_GONE_SAVE];
            sqlite3_bind_int64(g, 1, ns->ns_id);
            sqlite3_bind_int64(g, 2, seqs[i]);
            if ((rc = mem_store__step_done(w->st, g, "delete segment", err)) != MEM_OK) break;
        }
        sqlite3_stmt *s = w->st->stmts[purge ? STMT_SEG_DELETE : STMT_SEG_ARCHIVE];
        sqlite3_bind_int64(s, 1, ns->ns_id);
        sqlite3_bind_int64(s, 2, seqs[i]);
        rc = mem_store__step_done(w->st, s, purge ? "delete segment" : "archive segment", err);
    }
    return rc;
}

int mem_store__op_delete(mem_store__writer_t *w, mem_store_op_t *op)
{
    mem_store_ns_t *ns = mem_store__reg_find(w->st, op->ns);
    if (!ns) return mem_err_set(&op->err, MEM_ENOTFOUND, "namespace not found: %s", op->ns);
    long pos = mem_index_find(mem_store__writer_view(w, ns), op->id, strlen(op->id));
    if (pos < 0) return mem_err_set(&op->err, MEM_ENOTFOUND, "segment not found: %s", op->id);
    int rc = mem_store__group_touch(w, ns);
    if (rc != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
    size_t row = (size_t)pos, n_left = 0;
    int64_t seq;
    if ((rc = mem_store__leave(w, ns, &row, 1, MEM_ROW_DELETED, &seq, &n_left, &op->err)) !=
            MEM_OK ||
        (rc = write_left(w, ns, &seq, n_left, true, &op->err)) != MEM_OK ||
        (n_left && (rc = mem_store__supersede_forget(w, ns, seq, op->id, &op->err)) != MEM_OK) ||
        (rc = mem_store__supersede_release(w, ns, &seq, n_left, &op->err)) != MEM_OK)
        return rc;
    mem_store__lsn_advance(w, 1);
    return MEM_OK;
}

int mem_store__op_compact(mem_store__writer_t *w, mem_store_op_t *op)
{
    mem_store_ns_t *ns = mem_store__reg_find(w->st, op->ns);
    if (!ns) return mem_err_set(&op->err, MEM_ENOTFOUND, "namespace not found: %s", op->ns);
    int rc = mem_store__group_touch(w, ns);
    if (rc != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
    op->n_applied = 0;
    const mem_index_t *view = mem_store__writer_view(w, ns);
    size_t cap = op->n_evict ? op->n_evict : 1, n = 0, m = 0;
    size_t *rows = malloc(cap * sizeof(*rows));
    int64_t *seqs = malloc(cap * sizeof(*seqs));
    if (!rows || !seqs) {
        free(rows);
        free(seqs);
        return mem_err_set(&op->err, MEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < op->n_evict; i++) {
        const char *id = op->evict_ids[i];
        long pos = mem_index_find(view, id, strlen(id));
        if (pos < 0 || mem_index_flags(view, (size_t)pos) != 0)
            continue; /* gone or no longer active since the plan */
        rows[n++] = (size_t)pos;
    }
    /* every evicted row leaves at once */
    rc = mem_store__leave(w, ns, rows, n, op->purge ? MEM_ROW_DELETED : MEM_ROW_ARCHIVED, seqs, &m,
                          &op->err);
    free(rows);
    if (rc == MEM_OK) rc = write_left(w, ns, seqs, m, op->purge, &op->err);
    if (rc == MEM_OK && op->purge) rc = mem_store__supersede_release(w, ns, seqs, m, &op->err);
    free(seqs);
    if (rc != MEM_OK) return rc;
    op->n_applied = m;
    if (op->n_applied) mem_store__lsn_advance(w, 1);
    return MEM_OK;
}
