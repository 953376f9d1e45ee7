/* list.c - segments in seq order, a page at a time (GET .../segments)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. SQLite is the truth for what is committed, and segments' primary key is
 * (ns_id, seq): a page is one range read "seq > after ORDER BY seq LIMIT limit + 1" on a
 * read-only connection, so it costs the rows it returns (plus the ones the filters skip),
 * never a scan of the namespace, and it sees one committed snapshot. A cursor is the last
 * seq returned: seqs only grow and are never reused within a namespace, so a page resumed
 * from it is exact however many segments were added or deleted meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "storage/store_int.h"

char *mem_store__col_dup(sqlite3_stmt *s, int col, bool *oom)
{
    if (sqlite3_column_type(s, col) == SQLITE_NULL) return NULL;
    const char *t = (const char *)sqlite3_column_text(s, col);
    size_t len = (size_t)sqlite3_column_bytes(s, col);
    char *c = t ? malloc(len + 1) : NULL;
    if (!c) {
        *oom = true;
        return NULL;
    }
    memcpy(c, t, len);
    c[len] = '\0';
    return c;
}

/* The supersedes blob (ids, each NUL-terminated) as a malloc'd array. */
static int blob_ids(const char *blob, size_t len, char ***out, size_t *n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < len; i++)
        cnt += blob[i] == '\0';
    *out = NULL;
    *n = 0;
    if (cnt == 0) return MEM_OK;
    char **ids = calloc(cnt, sizeof(*ids));
    if (!ids) return MEM_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < len && k < cnt; k++) {
        size_t l = strnlen(blob + i, len - i);
        if (!(ids[k] = malloc(l + 1))) {
            for (size_t j = 0; j < k; j++)
                free(ids[j]);
            free(ids);
            return MEM_ENOMEM;
        }
        memcpy(ids[k], blob + i, l);
        ids[k][l] = '\0';
        i += l + 1;
    }
    *out = ids;
    *n = k;
    return MEM_OK;
}

int mem_store__segment_read(sqlite3_stmt *s, size_t dim, bool with_embedding,
                            mem_store_segment_t **out, mem_err_t *err)
{
    bool oom = false;
    mem_store_segment_t *seg = calloc(1, sizeof(*seg));
    if (!seg) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    seg->id = mem_store__col_dup(s, 0, &oom);
    seg->seq = sqlite3_column_int64(s, 1);
    seg->ts_ms = sqlite3_column_int64(s, 2);
    seg->text = mem_store__col_dup(s, 3, &oom);
    seg->source = mem_store__col_dup(s, 4, &oom);
    seg->metadata = mem_store__col_dup(s, 5, &oom);
    if (sqlite3_column_type(s, 6) != SQLITE_NULL &&
        blob_ids(sqlite3_column_blob(s, 6), (size_t)sqlite3_column_bytes(s, 6), &seg->supersedes,
                 &seg->n_supersedes) != MEM_OK)
        oom = true;
    seg->superseded_by = mem_store__col_dup(s, 7, &oom);
    seg->archived = sqlite3_column_int(s, 8) != 0;
    seg->dim = dim;
    if (!oom && with_embedding) {
        size_t bytes = (size_t)sqlite3_column_bytes(s, 9);
        const void *blob = sqlite3_column_blob(s, 9);
        if (bytes != dim * sizeof(float) || !blob) {
            int rc = mem_err_set(err, MEM_ECORRUPT, "segment %s: stored embedding has %zu bytes",
                                 seg->id ? seg->id : "?", bytes);
            mem_store_segment_free(seg);
            return rc;
        }
        if ((seg->embedding = malloc(bytes)))
            memcpy(seg->embedding, blob, bytes);
        else
            oom = true;
    }
    if (oom || !seg->id) {
        mem_store_segment_free(seg);
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    }
    *out = seg;
    return MEM_OK;
}

void mem_store_segments_free(mem_store_segment_t **segs, size_t n)
{
    if (!segs) return;
    for (size_t i = 0; i < n; i++)
        mem_store_segment_free(segs[i]);
    free(segs);
}

static const char SQL_LIST[] =
    "SELECT " MEM_STORE__SEGMENT_COLS " FROM segments"
    " WHERE ns_id = ?1 AND seq > ?2 AND ts_ms >= ?3 AND ts_ms <= ?4"
    " AND (?5 IS NULL OR source = ?5) AND (?6 OR superseded_by IS NULL) AND (?7 OR archived = 0)"
    " ORDER BY seq LIMIT ?8";

/* Is ns the namespace the resumed page was listed from? Incarnations decide when both are
 * recorded. A namespace an older mnemod made or copied has none (0) on the nodes that got
 * it so and one on those that applied its creating record themselves, so during and after
 * a rolling upgrade the holders disagree; the creation time then decides: every version
 * stores it, every holder has the creating record's, and a namespace created again has a
 * later one. A cursor without a creation time (of the release before) compares the
 * incarnations as they are. */
static bool same_namespace(const mem_store_list_req_t *req, const mem_store_ns_t *ns)
{
    if (req->incarnation && ns->incarnation) return req->incarnation == ns->incarnation;
    if (req->created_known) return req->created_ms == ns->created_ms;
    return req->incarnation == ns->incarnation;
}

int mem_store_list(mem_store_t *st, const char *ns_name, const mem_store_list_req_t *req,
                   mem_store_segment_t ***out, size_t *n, bool *more, mem_store_ns_ident_t *ident,
                   mem_err_t *err)
{
    if (req->limit < 1 || req->limit > MEM_STORE_LIST_MAX)
        return mem_err_field(err, MEM_EINVAL, "limit", "limit: must be in 1..%d",
                             MEM_STORE_LIST_MAX);
    mem_store_ns_t *ns = mem_store__ns_acquire(st, ns_name);
    if (!ns) return mem_store__ns_missing(st, ns_name, err);
    /* the rows are read by this namespace's id: a namespace created after it under the same
     * name has another, so the check and the page are of one namespace */
    if (req->resume && !same_namespace(req, ns)) {
        mem_store__ns_release(ns);
        return mem_err_field(err, MEM_EINVAL, "after",
                             "after: a cursor of an earlier namespace %s, deleted since (start "
                             "the listing again without after)",
                             ns_name);
    }
    mem_store_rconn_t *c = NULL;
    sqlite3_stmt *s = NULL;
    mem_store_segment_t **segs = calloc(req->limit, sizeof(*segs));
    size_t got = 0;
    bool extra = false;
    int rc = segs ? MEM_OK : mem_err_set(err, MEM_ENOMEM, "out of memory");
    if (rc != MEM_OK || (rc = mem_store__rconn_acquire(st, &c, err)) != MEM_OK) goto out;
    int src = sqlite3_prepare_v2(c->db, SQL_LIST, -1, &s, NULL);
    if (src != SQLITE_OK) {
        rc = mem_store__err_sqlite(err, c->db, src, "list segments");
        goto out;
    }
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_int64(s, 2, req->after_seq);
    sqlite3_bind_int64(s, 3, req->since_ms);
    sqlite3_bind_int64(s, 4, req->until_ms);
    if (req->source)
        sqlite3_bind_text(s, 5, req->source, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 5);
    sqlite3_bind_int(s, 6, req->include_superseded);
    sqlite3_bind_int(s, 7, req->include_archived);
    sqlite3_bind_int64(s, 8, (int64_t)req->limit + 1);
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        if (got == req->limit) {
            extra = true;
            break;
        }
        if ((rc = mem_store__segment_read(s, ns->dim, req->with_embedding, &segs[got], err)) !=
            MEM_OK)
            goto out;
        got++;
    }
    if (src != SQLITE_ROW && src != SQLITE_DONE) {
        rc = mem_store__err_sqlite(err, c->db, src, "list segments");
        goto out;
    }
    *out = segs;
    *n = got;
    *more = extra;
    ident->incarnation = ns->incarnation;
    ident->created_ms = ns->created_ms;
    segs = NULL;
out:
    mem_store_segments_free(segs, got);
    sqlite3_finalize(s);
    if (c) mem_store__rconn_release(st, c);
    mem_store__ns_release(ns);
    return rc;
}
