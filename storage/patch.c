/* patch.c - the PATCH write record: a segment's metadata and/or source change
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Runs on the writer thread inside the group's transaction, like every write
 * record, so it is durable at the group's COMMIT, counted in the lsn, and (cluster mode)
 * stored with its log position in the same savepoint, which makes a replay a no-op. Setting
 * a value twice gives the same row, so the record is idempotent even without the position.
 * The in-memory index keeps a segment's interned source for the scan's source filter and
 * ns->meta its metadata values for filters: both change when the group is published, under
 * the exclusive lock (mem_store__patch_later), so a filtered scan never matches values SQLite
 * has not committed yet (and then answers with the old ones); a group that fails drops them
 * and reloads the namespace from SQLite (the namespace is touched first), so memory never
 * keeps what SQLite rolled back. The answers' texts cache
 * (textcache.c) drops the row's entry before the UPDATE and takes no new ones until the
 * group has committed or rolled back (run_group, writer.c).
 */
#include <string.h>

#include <sqlite3.h>

#include "storage/textcache_int.h"
#include "storage/writer_int.h"

int mem_store__op_patch(mem_store__writer_t *w, mem_store_op_t *op)
{
    mem_store_t *st = w->st;
    if (!op->patch_metadata && !op->patch_source)
        return mem_err_field(&op->err, MEM_EINVAL, "metadata", "body: give metadata and/or source");
    mem_store_ns_t *ns = mem_store__reg_find(st, op->ns);
    if (!ns) return mem_err_set(&op->err, MEM_ENOTFOUND, "namespace not found: %s", op->ns);
    const mem_index_t *view = mem_store__writer_view(w, ns);
    long pos = mem_index_find(view, op->id, strlen(op->id));
    if (pos < 0 || (size_t)pos >= mem_index_visible(view))
        return mem_err_set(&op->err, MEM_ENOTFOUND, "segment not found: %s", op->id);
    int64_t seq = mem_index_seq(view, (size_t)pos);
    int rc = mem_store__group_touch(w, ns);
    if (rc != MEM_OK) return mem_err_set(&op->err, rc, "out of memory");
    int src = 0;
    if (op->patch_source) {
        /* interning only adds to the table (an unused entry is harmless) */
        mem_index_t *idx = mem_store__write_lock(w, ns);
        src = mem_index_source_intern(idx, op->source, op->source_len);
        mem_store__write_unlock(w, ns);
        if (src < 0)
            return mem_err_field(&op->err, src == MEM_ELIMIT ? MEM_EINVAL : MEM_ENOMEM, "source",
                                 "source: %s",
                                 src == MEM_ELIMIT ? "too many distinct sources" : "out of memory");
    }
    /* before the row changes: no reader keeps or adds its texts until the group settled */
    mem_store__txc_forget(st->txc, ns->ns_id, seq);
    sqlite3_stmt *s = st->stmts[STMT_SEG_PATCH];
    sqlite3_bind_int(s, 1, op->patch_metadata);
    if (op->patch_metadata && op->metadata)
        sqlite3_bind_text(s, 2, op->metadata, (int)op->metadata_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 2);
    sqlite3_bind_int(s, 3, op->patch_source);
    if (op->patch_source && op->source)
        sqlite3_bind_text(s, 4, op->source, (int)op->source_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 4);
    sqlite3_bind_int64(s, 5, ns->ns_id);
    sqlite3_bind_int64(s, 6, seq);
    if ((rc = mem_store__step_done(st, s, "patch segment", &op->err)) != MEM_OK) return rc;
    mem_store__patch_later_t later = {.pos = (size_t)pos, .seq = seq, .source = -1};
    if (op->patch_source) later.source = src;
    if (op->patch_metadata && (rc = mem_store__meta_flatten_later(w, op->metadata, op->metadata_len,
                                                                  &later, &op->err)) != MEM_OK)
        return rc;
    if ((rc = mem_store__patch_later(w, ns, &later, &op->err)) != MEM_OK) return rc;
    mem_store__lsn_advance(w, 1);
    return MEM_OK;
}
