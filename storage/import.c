/* import.c - the IMPORT write record: many segments, all or nothing
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. An import is one op in one savepoint of the writer's group, whatever its size; its
 * segments come from a source (api/ spills the parsed NDJSON to a temporary file) that is
 * read twice, so memory holds one batch at a time, never the import:
 * 1. check every rule over all of them against the namespace as it is now: dimension,
 *    identical re-sent segments (skipped), same id with other content (409), timestamps
 *    never older than the namespace's newest nor than the previous line's, supersedes naming
 *    a stored segment or an earlier line, the embedder that made the vectors (when the lines
 *    name one or some are embedded here) being the namespace's. The first problem names its line;
 * nothing has changed yet.
 * 2. apply them in batches of MEM_STORE__IMPORT_BATCH through the insert path (the same
 *    rows and supersedes as inserts, and, as for inserts, the coherence graph links them
 *    afterwards in the background: linker.c), then archive the lines exported archived.
 * Step 1 makes every later check pass, so a failure in step 2 can only be a storage
 * failure; it is reported as one, which rolls the whole group back and reloads the touched
 * namespaces from SQLite: no half import stays in memory or on disk.
 * A progress line is logged at least every MEM_STORE__IMPORT_LOG_S seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "core/timefmt.h"
#include "storage/writer_int.h"

#define MEM_STORE__IMPORT_BATCH 1000
#define MEM_STORE__IMPORT_LOG_S 2.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int at_line(mem_err_t *err, uint64_t line, int code, const char *field, const char *what)
{
    mem_err_field(err, code, field, "line %llu: %.160s", (unsigned long long)line, what);
    if (err) err->line = line;
    return code;
}

/* Step 1: check everything; *n_new counts the segments to insert. */
static int validate(mem_store__writer_t *w, mem_store_op_t *op, size_t *n_new, size_t *n_skip)
{
    mem_store_import_src_t *src = op->import;
    mem_store_ns_t *ns = mem_store__reg_find(w->st, op->ns);
    const mem_index_t *view = ns ? mem_store__writer_view(w, ns) : NULL;
    int64_t newest = ns ? ns->last_ts_ms : INT64_MIN;
    mem_store_seg_in_t seg;
    bool archived;
    uint64_t line = 0;
    int rc;
    char msg[160];
    if (ns && src->dim != ns->dim) {
        snprintf(msg, sizeof(msg), "embedding: expected %zu floats, got %zu", ns->dim, src->dim);
        return at_line(&op->err, 1, MEM_EDIM, "embedding", msg);
    }
    if (ns && op->embedder && ns->embedder[0] && strcmp(ns->embedder, op->embedder) != 0) {
        snprintf(msg, sizeof(msg),
                 "embedder: the namespace's vectors were made by %.50s, these by %.50s",
                 ns->embedder, op->embedder);
        return at_line(&op->err, 1, MEM_EMISMATCH, "embedder", msg);
    }
    if ((rc = src->rewind(src->ud)) != MEM_OK)
        return mem_err_set(&op->err, MEM_ESTORAGE, "import: cannot read the staged segments");
    double last_log = now_s();
    size_t seen = 0;
    while ((rc = src->next(src->ud, &seg, &archived, &line)) == 1) {
        seen++;
        if (now_s() - last_log >= MEM_STORE__IMPORT_LOG_S) {
            mem_log(w->st->opts.log, MEM_LOG_INFO, "import_checking", "ns=%s lines=%zu", op->ns,
                    seen);
            last_log = now_s();
        }
        long pos = view ? mem_index_find(view, seg.id, strlen(seg.id)) : -1;
        if (pos >= 0) {
            bool same = false;
            if ((rc = mem_store__same_as_stored(w->st, ns, mem_index_seq(view, (size_t)pos), &seg,
                                                &same, &op->err)) != MEM_OK)
                return rc;
            if (!same) {
                snprintf(msg, sizeof(msg), "id: %.100s already exists with different content",
                         seg.id);
                return at_line(&op->err, line, MEM_EDUPID, "id", msg);
            }
            (*n_skip)++;
            continue;
        }
        if (seg.ts_given) {
            if (seg.ts_ms < newest) {
                char given_s[MEM_TIME_RFC3339_BUFSZ], newest_s[MEM_TIME_RFC3339_BUFSZ];
                mem_time_format_rfc3339(seg.ts_ms, given_s, sizeof(given_s));
                mem_time_format_rfc3339(newest, newest_s, sizeof(newest_s));
                snprintf(msg, sizeof(msg),
                         "timestamp: %s is older than the namespace's (or the previous "
                         "line's) %s",
                         given_s, newest_s);
                at_line(&op->err, line, MEM_ENONMONO, "timestamp", msg);
                op->err.last_ms = newest;
                op->err.given_ms = seg.ts_ms;
                return MEM_ENONMONO;
            }
            newest = seg.ts_ms;
        } else if (op->now_ms > newest) {
            newest = op->now_ms;
        }
        for (size_t k = 0; k < seg.n_supersedes; k++) {
            const char *t = seg.supersedes[k];
            if ((view && mem_index_find(view, t, strlen(t)) >= 0) ||
                src->has_id_before(src->ud, t, line))
                continue;
            snprintf(msg, sizeof(msg), "supersedes: unknown id %.100s", t);
            return at_line(&op->err, line, MEM_EUNKNOWNID, "supersedes", msg);
        }
        (*n_new)++;
    }
    if (rc < 0)
        return mem_err_set(&op->err, MEM_ESTORAGE, "import: cannot read the staged segments");
    return MEM_OK;
}

/* One batch's copies: the source's strings live only until its next call. */
typedef struct batch {
    mem_store_seg_in_t segs[MEM_STORE__IMPORT_BATCH];
    mem_store_seg_out_t outs[MEM_STORE__IMPORT_BATCH];
    bool archived[MEM_STORE__IMPORT_BATCH];
    char *mem[MEM_STORE__IMPORT_BATCH]; /* one allocation per segment */
    size_t n;
} batch_t;

static void batch_clear(batch_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->mem[i]);
    b->n = 0;
}

static int batch_add(batch_t *b, const mem_store_seg_in_t *in, bool archived, size_t dim)
{
    size_t need = dim * sizeof(float) + in->text_len + in->source_len + in->metadata_len + 3 +
                  in->n_supersedes * sizeof(char *);
    for (size_t k = 0; k < in->n_supersedes; k++)
        need += strlen(in->supersedes[k]) + 1;
    char *m = malloc(need ? need : 1);
    if (!m) return MEM_ENOMEM;
    mem_store_seg_in_t *s = &b->segs[b->n];
    *s = *in;
    char *p = m;
    memcpy(p, in->vec, dim * sizeof(float)); /* first: float-aligned (malloc) */
    s->vec = (const float *)p;
    p += dim * sizeof(float);
    const char **sup = (const char **)(void *)p;
    p += in->n_supersedes * sizeof(char *);
#define COPY(field, len)                                                                           \
    if (in->field) {                                                                               \
        memcpy(p, in->field, in->len);                                                             \
        p[in->len] = '\0';                                                                         \
        s->field = p;                                                                              \
        p += in->len + 1;                                                                          \
    }
    COPY(text, text_len)
    COPY(source, source_len)
    COPY(metadata, metadata_len)
#undef COPY
    for (size_t k = 0; k < in->n_supersedes; k++) {
        size_t l = strlen(in->supersedes[k]) + 1;
        memcpy(p, in->supersedes[k], l);
        sup[k] = p;
        p += l;
    }
    s->supersedes = sup;
    b->archived[b->n] = archived;
    b->mem[b->n++] = m;
    return MEM_OK;
}

/* A failure once everything was checked: only storage can fail now; make it roll back the
 * whole group (and reload memory) rather than leave a half import in memory. */
static int apply_failed(mem_store_op_t *op, int rc, const mem_err_t *why)
{
    if (rc == MEM_ENOMEM || rc == MEM_EFULL || rc == MEM_ESTORAGE || rc == MEM_ECORRUPT) {
        op->err = *why;
        return rc;
    }
    return mem_err_set(&op->err, MEM_ESTORAGE, "import: applying a checked batch failed: %s",
                       why->msg);
}

static int apply_batch(mem_store__writer_t *w, mem_store_op_t *op, batch_t *b)
{
    mem_store_op_t sub;
    memset(&sub, 0, sizeof(sub));
    sub.kind = MEM_STORE_OP_INSERT;
    memcpy(sub.ns, op->ns, sizeof(sub.ns));
    sub.dim = op->import->dim;
    sub.now_ms = op->now_ms;
    sub.segs = b->segs;
    sub.outs = b->outs;
    sub.n_segs = b->n;
    sub.batch = true;
    sub.embedder = op->embedder;
    int rc = mem_store__op_insert(w, &sub);
    if (rc != MEM_OK) return apply_failed(op, rc, &sub.err);
    mem_store_ns_t *ns = mem_store__reg_find(w->st, op->ns);
    if (!ns) return mem_err_set(&op->err, MEM_ESTORAGE, "import: namespace vanished");
    const mem_index_t *view = mem_store__writer_view(w, ns);
    size_t rows[MEM_STORE__IMPORT_BATCH], n_rows = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (b->outs[i].existed) {
            op->n_skipped++;
            continue;
        }
        op->n_imported++;
        long pos = b->archived[i] ? mem_index_find(view, b->segs[i].id, strlen(b->segs[i].id)) : -1;
        if (pos >= 0) rows[n_rows++] = (size_t)pos;
    }
    if (n_rows == 0) return MEM_OK;
    int64_t seqs[MEM_STORE__IMPORT_BATCH];
    size_t m = 0;
    mem_err_t e;
    mem_err_clear(&e);
    if ((rc = mem_store__leave(w, ns, rows, n_rows, MEM_ROW_ARCHIVED, seqs, &m, &e)) != MEM_OK)
        return apply_failed(op, rc, &e);
    for (size_t i = 0; i < m; i++) {
        sqlite3_stmt *s = w->st->stmts[STMT_SEG_ARCHIVE];
        sqlite3_bind_int64(s, 1, ns->ns_id);
        sqlite3_bind_int64(s, 2, seqs[i]);
        if ((rc = mem_store__step_done(w->st, s, "archive imported segment", &e)) != MEM_OK)
            return apply_failed(op, rc, &e);
    }
    return MEM_OK;
}

int mem_store__op_import(mem_store__writer_t *w, mem_store_op_t *op)
{
    mem_store_import_src_t *src = op->import;
    op->n_imported = op->n_skipped = 0;
    op->created = false;
    if (!src || !mem_store__name_ok(op->ns))
        return mem_err_field(&op->err, MEM_EINVAL, "namespace", "namespace: invalid name");
    if (src->dim < 1 || src->dim > 4096)
        return at_line(&op->err, 1, MEM_EINVAL, "embedding", "embedding: 1..4096 floats");
    size_t n_new = 0, n_skip = 0;
    int rc = validate(w, op, &n_new, &n_skip);
    if (rc != MEM_OK) return rc;
    if (n_new == 0) {
        op->n_skipped = n_skip;
        return MEM_OK; /* every line was already stored identically: nothing to write */
    }
    batch_t *b = calloc(1, sizeof(*b));
    if (!b) return mem_err_set(&op->err, MEM_ENOMEM, "out of memory");
    if (src->rewind(src->ud) != MEM_OK) {
        free(b);
        return mem_err_set(&op->err, MEM_ESTORAGE, "import: cannot read the staged segments");
    }
    mem_store_seg_in_t seg;
    bool archived;
    uint64_t line;
    double t0 = now_s(), last_log = t0;
    while (rc == MEM_OK && (rc = src->next(src->ud, &seg, &archived, &line)) == 1) {
        rc = batch_add(b, &seg, archived, src->dim) == MEM_OK
                 ? MEM_OK
                 : mem_err_set(&op->err, MEM_ENOMEM, "out of memory");
        if (rc == MEM_OK && b->n == MEM_STORE__IMPORT_BATCH) {
            rc = apply_batch(w, op, b);
            batch_clear(b);
        }
        if (now_s() - last_log >= MEM_STORE__IMPORT_LOG_S) {
            mem_log(w->st->opts.log, MEM_LOG_INFO, "import_applying",
                    "ns=%s imported=%zu of=%zu seconds=%.1f", op->ns, op->n_imported, n_new,
                    now_s() - t0);
            last_log = now_s();
        }
    }
    if (rc < 0 && op->err.code == MEM_OK)
        mem_err_set(&op->err, MEM_ESTORAGE, "import: cannot read the staged segments");
    if (rc >= 0) rc = MEM_OK;
    if (rc == MEM_OK && b->n) rc = apply_batch(w, op, b);
    batch_clear(b);
    free(b);
    if (rc != MEM_OK) return rc;
    op->created = op->n_imported > 0;
    mem_log(w->st->opts.log, MEM_LOG_INFO, "import_applied",
            "ns=%s imported=%zu skipped=%zu seconds=%.1f", op->ns, op->n_imported, op->n_skipped,
            now_s() - t0);
    return MEM_OK;
}
