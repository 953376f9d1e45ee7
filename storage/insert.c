/* insert.c - the writer's insert op: validate every member, then append, link, write
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Each op is validated completely against the in-memory state before anything is
 * changed, so a client error (bad timestamp, duplicate id, unknown supersedes target...)
 * leaves nothing to undo and fails only that op. An identical re-sent segment (same id,
 * same content) is not new: it answers with the stored record and writes nothing. The new
 * members are then appended under the exclusive lock (invisible to scans until the group
 * commits) and written; the coherence graph links them in the background (linker.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/timefmt.h"
#include "storage/writer_int.h"

typedef enum { SEG_NEW, SEG_STORED, SEG_IN_BATCH } seg_kind_t;

static bool bytes_eq(const char *a, size_t alen, const char *b, size_t blen)
{
    if (!a || !b) return !a && !b;
    return alen == blen && memcmp(a, b, alen) == 0;
}

static bool ids_eq(const char *const *a, size_t na, const char *const *b, size_t nb)
{
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0) return false;
    return true;
}

static bool same_given(const mem_store_seg_in_t *a, const mem_store_seg_in_t *b, size_t dim)
{
    return bytes_eq(a->text, a->text_len, b->text, b->text_len) &&
           bytes_eq(a->source, a->source_len, b->source, b->source_len) &&
           bytes_eq(a->metadata, a->metadata_len, b->metadata, b->metadata_len) &&
           memcmp(a->vec, b->vec, dim * sizeof(float)) == 0 &&
           ids_eq(a->supersedes, a->n_supersedes, b->supersedes, b->n_supersedes);
}

/* Compare a given segment with the stored row at seq. *same set on success. */
static int same_as_stored(mem_store_t *st, const mem_store_ns_t *ns, int64_t seq,
                          const mem_store_seg_in_t *in, bool *same, mem_err_t *err);

int mem_store__same_as_stored(mem_store_t *st, const mem_store_ns_t *ns, int64_t seq,
                              const mem_store_seg_in_t *in, bool *same, mem_err_t *err)
{
    return same_as_stored(st, ns, seq, in, same, err);
}

static int same_as_stored(mem_store_t *st, const mem_store_ns_t *ns, int64_t seq,
                          const mem_store_seg_in_t *in, bool *same, mem_err_t *err)
{
    sqlite3_stmt *s = st->stmts[STMT_SEG_BY_SEQ];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_int64(s, 2, seq);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        rc = mem_store__err_sqlite(err, st->db, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc,
                                   "read segment");
        sqlite3_reset(s);
        return rc;
    }
#define COL_TEXT(c)                                                                                \
    (sqlite3_column_type(s, c) == SQLITE_NULL  ? NULL                                              \
     : (const char *)sqlite3_column_blob(s, c) ? (const char *)sqlite3_column_blob(s, c)           \
                                               : "")
    bool eq = true;
    if (in->ts_given && sqlite3_column_int64(s, 0) != in->ts_ms) eq = false;
    if (eq && !bytes_eq(in->text, in->text_len, COL_TEXT(1), (size_t)sqlite3_column_bytes(s, 1)))
        eq = false;
    if (eq &&
        !bytes_eq(in->source, in->source_len, COL_TEXT(2), (size_t)sqlite3_column_bytes(s, 2)))
        eq = false;
    if (eq &&
        !bytes_eq(in->metadata, in->metadata_len, COL_TEXT(3), (size_t)sqlite3_column_bytes(s, 3)))
        eq = false;
#undef COL_TEXT
    if (eq) {
        size_t bytes = (size_t)sqlite3_column_bytes(s, 4);
        const void *blob = sqlite3_column_blob(s, 4);
        eq = bytes == ns->dim * sizeof(float) && blob && memcmp(blob, in->vec, bytes) == 0;
    }
    if (eq) {
        const char *blob = sqlite3_column_blob(s, 5);
        size_t len = blob ? (size_t)sqlite3_column_bytes(s, 5) : 0;
        size_t off = 0, k = 0;
        for (; off < len && k < in->n_supersedes; k++) {
            size_t l = strnlen(blob + off, len - off);
            if (strlen(in->supersedes[k]) != l || memcmp(blob + off, in->supersedes[k], l) != 0) {
                eq = false;
                break;
            }
            off += l + 1;
        }
        if (eq && (off < len || k < in->n_supersedes)) eq = false;
    }
    sqlite3_reset(s);
    *same = eq;
    return MEM_OK;
}

static void seg_field(char *buf, size_t len, const mem_store_op_t *op, size_t i, const char *name)
{
    if (op->batch || op->n_segs > 1)
        snprintf(buf, len, "segments[%zu].%s", i, name);
    else
        snprintf(buf, len, "%s", name);
}

/* The ids of one batch: an open-addressing map id -> first member with it, so the checks
 * of a batch cost O(n) (one probe per member and per supersedes target). */
typedef struct batch_ids {
    const mem_store_op_t *op;
    size_t *slots; /* member + 1, 0 = empty */
    size_t mask;
} batch_ids_t;

static uint64_t hash_id(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static int batch_ids_init(batch_ids_t *b, const mem_store_op_t *op)
{
    size_t cap = 16;
    while (cap < op->n_segs * 2)
        cap *= 2;
    b->op = op;
    b->mask = cap - 1;
    b->slots = calloc(cap, sizeof(*b->slots));
    return b->slots ? MEM_OK : MEM_ENOMEM;
}

/* The first member whose id is id, or SIZE_MAX; with add, member i is recorded when none is. */
static size_t batch_ids_first(batch_ids_t *b, const char *id, bool add, size_t i)
{
    for (size_t k = hash_id(id) & b->mask;; k = (k + 1) & b->mask) {
        size_t m = b->slots[k];
        if (m == 0) {
            if (add) b->slots[k] = i + 1;
            return SIZE_MAX;
        }
        if (strcmp(b->op->segs[m - 1].id, id) == 0) return m - 1;
    }
}

static int validate_members(mem_store__writer_t *w, mem_store_ns_t *ns, const mem_index_t *idx,
                            mem_store_op_t *op, batch_ids_t *ids, int64_t newest, seg_kind_t *kind,
                            size_t *ref, int64_t *ts)
{
    char field[64];
    mem_store_t *st = w->st;
    for (size_t i = 0; i < op->n_segs; i++) {
        const mem_store_seg_in_t *in = &op->segs[i];
        size_t id_len = strnlen(in->id, sizeof(in->id));
        if (id_len == 0 || id_len > MEM_STORE_ID_MAX) {
            seg_field(field, sizeof(field), op, i, "id");
            return mem_err_field(&op->err, MEM_EINVAL, field, "%s: must be 1..%d bytes", field,
                                 MEM_STORE_ID_MAX);
        }
        if (!in->vec) {
            seg_field(field, sizeof(field), op, i, "embedding");
            return mem_err_field(&op->err, MEM_EINVAL, field, "%s: missing", field);
        }
        /* the same id earlier in this batch */
        size_t j = batch_ids_first(ids, in->id, true, i);
        if (j != SIZE_MAX) {
            size_t first = kind[j] == SEG_IN_BATCH ? ref[j] : j;
            bool same = same_given(in, &op->segs[j], op->dim) &&
                        (!in->ts_given || kind[first] == SEG_STORED || in->ts_ms == ts[first]);
            if (same && kind[first] == SEG_STORED && in->ts_given) {
                int rc =
                    same_as_stored(st, ns, mem_index_seq(idx, ref[first]), in, &same, &op->err);
                if (rc != MEM_OK) return rc;
            }
            if (!same) {
                seg_field(field, sizeof(field), op, i, "id");
                return mem_err_field(&op->err, MEM_EDUPID, field,
                                     "%s: %s already exists with different content", field, in->id);
            }
            kind[i] = SEG_IN_BATCH;
            ref[i] = first;
            continue;
        }
        long pos = idx ? mem_index_find(idx, in->id, id_len) : -1;
        if (pos >= 0) {
            bool same = false;
            int rc = same_as_stored(st, ns, mem_index_seq(idx, (size_t)pos), in, &same, &op->err);
            if (rc != MEM_OK) return rc;
            if (!same) {
                seg_field(field, sizeof(field), op, i, "id");
                return mem_err_field(&op->err, MEM_EDUPID, field,
                                     "%s: %s already exists with different content", field, in->id);
            }
            kind[i] = SEG_STORED;
            ref[i] = (size_t)pos;
            continue;
        }
        int64_t t;
        if (in->ts_given) {
            if (in->ts_ms < newest) {
                char given_s[MEM_TIME_RFC3339_BUFSZ], newest_s[MEM_TIME_RFC3339_BUFSZ];
                mem_time_format_rfc3339(in->ts_ms, given_s, sizeof(given_s));
                mem_time_format_rfc3339(newest, newest_s, sizeof(newest_s));
                seg_field(field, sizeof(field), op, i, "timestamp");
                mem_err_field(&op->err, MEM_ENONMONO, field,
                              "%s: %s is older than the namespace's newest %s", field, given_s,
                              newest_s);
                op->err.last_ms = newest;
                op->err.given_ms = in->ts_ms;
                return MEM_ENONMONO;
            }
            t = in->ts_ms;
        } else {
            t = op->now_ms > newest ? op->now_ms : newest;
        }
        newest = t;
        for (size_t s = 0; s < in->n_supersedes; s++) {
            const char *target = in->supersedes[s];
            bool known = idx && mem_index_find(idx, target, strlen(target)) >= 0;
            if (!known) { /* earlier in this batch (a member never supersedes itself) */
                size_t first = batch_ids_first(ids, target, false, i);
                known = first != SIZE_MAX && first < i;
            }
            if (!known) {
                seg_field(field, sizeof(field), op, i, "supersedes");
                return mem_err_field(&op->err, MEM_EUNKNOWNID, field, "%s: unknown id %s", field,
                                     target);
            }
        }
        kind[i] = SEG_NEW;
        ts[i] = t;
    }
    return MEM_OK;
}

/* Check every member; fills kind[], ref[] (SEG_IN_BATCH: the earlier member; SEG_STORED: the
 * position) and ts[] (resolved timestamps of new members). Changes nothing. */
static int insert_validate(mem_store__writer_t *w, mem_store_ns_t *ns, mem_store_op_t *op,
                           seg_kind_t *kind, size_t *ref, int64_t *ts)
{
    const mem_index_t *idx = ns ? mem_store__writer_view(w, ns) : NULL;
    int64_t newest = ns ? ns->last_ts_ms : INT64_MIN;
    batch_ids_t ids;
    if (batch_ids_init(&ids, op) != MEM_OK)
        return mem_err_set(&op->err, MEM_ENOMEM, "out of memory");
    int rc = validate_members(w, ns, idx, op, &ids, newest, kind, ref, ts);
    free(ids.slots);
    return rc;
}

/* The supersedes ids as one blob, each NUL-terminated. */
static char *ids_blob(const char *const *ids, size_t n, size_t *len)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += strlen(ids[i]) + 1;
    char *b = malloc(total ? total : 1);
    if (!b) return NULL;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(ids[i]) + 1;
        memcpy(b + off, ids[i], l);
        off += l;
    }
    *len = total;
    return b;
}

static void bind_opt_text(sqlite3_stmt *s, int col, const char *p, size_t len)
{
    if (p)
        sqlite3_bind_text(s, col, p, (int)len, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, col);
}

static int insert_row_sql(mem_store__writer_t *w, mem_store_ns_t *ns, const mem_store_seg_in_t *in,
                          size_t pos, mem_err_t *err)
{
    mem_store_t *st = w->st;
    const mem_index_t *idx = mem_store__writer_view(w, ns);
    size_t blob_len = 0;
    char *blob = NULL;
    if (in->n_supersedes && !(blob = ids_blob(in->supersedes, in->n_supersedes, &blob_len)))
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    sqlite3_stmt *s = st->stmts[STMT_SEG_INSERT];
    sqlite3_bind_int64(s, 1, ns->ns_id);
    sqlite3_bind_int64(s, 2, mem_index_seq(idx, pos));
    sqlite3_bind_text(s, 3, in->id, (int)strlen(in->id), SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, mem_index_ts(idx, pos));
    bind_opt_text(s, 5, in->text, in->text_len);
    bind_opt_text(s, 6, in->source, in->source_len);
    bind_opt_text(s, 7, in->metadata, in->metadata_len);
    sqlite3_bind_blob(s, 8, in->vec, (int)(ns->dim * sizeof(float)), SQLITE_STATIC);
    if (blob)
        sqlite3_bind_blob(s, 9, blob, (int)blob_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 9);
    sqlite3_bind_int64(s, 10, (int64_t)mem_index_access_tick(idx, pos));
    int rc = mem_store__step_done(st, s, "insert segment", err);
    free(blob);
    return rc;
}

/* The texts of the new members of op into w->docs[i], without any lock held (those that
 * came prepared, prep.c, are not tokenised again). */
static int tokenise_new(mem_store__writer_t *w, const mem_store_op_t *op, const seg_kind_t *kind)
{
    if (op->n_segs > w->cap_docs) {
        mem_lexdoc_t *d = realloc(w->docs, op->n_segs * sizeof(*d));
        if (!d) return MEM_ENOMEM;
        memset(d + w->cap_docs, 0, (op->n_segs - w->cap_docs) * sizeof(*d));
        w->docs = d;
        w->cap_docs = op->n_segs;
    }
    mem_lextok_opts_t to = MEM_LEXTOK_DEFAULTS;
    for (size_t i = 0; i < op->n_segs; i++) {
        const mem_store_seg_in_t *in = &op->segs[i];
        if (kind[i] != SEG_NEW || !in->text || (in->prep && in->prep->has_doc)) continue;
        if (!w->tk && mem_lextok_new(&to, &w->tk) != MEM_OK) return MEM_ENOMEM;
        if (mem_lexdoc_build(&w->docs[i], w->tk, in->text, in->text_len, w->st->opts.text_grams) !=
            MEM_OK)
            return MEM_ENOMEM;
    }
    return MEM_OK;
}

/* The new members of an insert op (kind SEG_NEW), all at once:
 * 1. append every row under the lock (invisible to scans until COMMIT);
 * 2. write the rows;
 * 3. the superseded targets are set to leave the active set when the rows become visible
 *    (mem_store__supersede_later), then the supersede links are written.
 * The coherence graph follows in the background (linker.c). */
static int insert_new(mem_store__writer_t *w, mem_store_ns_t *ns, mem_store_op_t *op,
                      const seg_kind_t *kind, const int64_t *ts, size_t *n_inserted)
{
    mem_err_t *err = &op->err;
    const mem_index_t *view = mem_store__writer_view(w, ns);
    size_t first = mem_index_rows(view), n_new = 0, n_targets = 0;
    int rc = MEM_OK;
    *n_inserted = 0;
    if ((rc = tokenise_new(w, op, kind)) != MEM_OK) return mem_err_set(err, rc, "out of memory");
    mem_lexidx_t *lex = mem_store__lex(ns);

    mem_index_t *idx = mem_store__write_lock(w, ns);
    for (size_t i = 0; i < op->n_segs && rc == MEM_OK; i++) {
        if (kind[i] != SEG_NEW) continue;
        const mem_store_seg_in_t *in = &op->segs[i];
        size_t pos;
        int src = mem_index_source_intern(idx, in->source, in->source_len);
        const mem_store_seg_prep_t *pr = in->prep && in->prep->dim == ns->dim ? in->prep : NULL;
        if (src < 0)
            rc = src;
        else if (pr)
            rc = mem_index_append_coded(idx, in->id, strlen(in->id), ts[i], ns->last_seq + 1,
                                        in->vec, pr->q8, pr->q8_scale, pr->q8_err, (uint16_t)src, 0,
                                        &pos);
        else
            rc = mem_index_append(idx, in->id, strlen(in->id), ts[i], ns->last_seq + 1, in->vec,
                                  (uint16_t)src, 0, &pos);
        const mem_lexdoc_t *doc = !in->text                       ? NULL
                                  : in->prep && in->prep->has_doc ? &in->prep->doc
                                                                  : &w->docs[i];
        size_t lpos; /* ENOMEM fails the group: its namespaces are reloaded, both indexes */
        if (rc == MEM_OK) rc = mem_lexidx_append(lex, doc, true, &lpos);
        if (rc == MEM_OK) {
            ns->last_seq++;
            ns->last_ts_ms = ts[i];
            ns->meta_dirty = true;
            n_new++;
            n_targets += in->n_supersedes;
        }
    }
    mem_store__write_unlock(w, ns);
    if (rc != MEM_OK)
        return mem_err_set(err, rc == MEM_ELIMIT ? MEM_ENOMEM : rc,
                           rc == MEM_ELIMIT ? "source: too many distinct sources"
                                            : "out of memory");
    if (n_new) mem_store__note_append(w, ns); /* the linker links them (linker.c) */
    size_t pos = first;
    for (size_t i = 0; i < op->n_segs; i++) {
        if (kind[i] != SEG_NEW) continue;
        if ((rc = insert_row_sql(w, ns, &op->segs[i], pos, err)) != MEM_OK) return rc;
        if (op->segs[i].metadata &&
            (rc = mem_store__meta_flatten_set(w, ns, mem_index_seq(view, pos), op->segs[i].metadata,
                                              op->segs[i].metadata_len, err)) != MEM_OK)
            return rc;
        mem_store_seg_out_t *o = &op->outs[i];
        o->seq = mem_index_seq(view, pos);
        o->ts_ms = mem_index_ts(view, pos);
        o->existed = false;
        pos++;
        (*n_inserted)++;
    }
    if (!n_targets) return MEM_OK;

    size_t *tpos = malloc(n_targets * sizeof(*tpos)), k = 0;
    if (!tpos) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < op->n_segs && rc == MEM_OK; i++) {
        if (kind[i] != SEG_NEW) continue;
        for (size_t t = 0; t < op->segs[i].n_supersedes; t++) {
            const char *target = op->segs[i].supersedes[t];
            long p = mem_index_find(view, target, strlen(target));
            if (p < 0) {
                rc = mem_err_set(err, MEM_ESTORAGE, "supersedes: %s vanished", target);
                break;
            }
            tpos[k++] = (size_t)p;
        }
    }
    if (rc == MEM_OK) rc = mem_store__supersede_later(w, ns, tpos, k, err);
    k = 0;
    for (size_t i = 0; i < op->n_segs && rc == MEM_OK; i++) {
        if (kind[i] != SEG_NEW) continue;
        const mem_store_seg_in_t *in = &op->segs[i];
        for (size_t t = 0; t < in->n_supersedes && rc == MEM_OK; t++)
            rc = mem_store__supersede_record(w, ns, in->id, op->outs[i].seq,
                                             mem_index_seq(view, tpos[k++]), err);
    }
    free(tpos);
    return rc;
}

/* The namespace's first vectors made from text: remember which embedder made them. Inside
 * the op's savepoint; the in-memory copy is reverted by the reload of a failed group. */
static int record_embedder(mem_store__writer_t *w, mem_store_ns_t *ns, mem_store_op_t *op)
{
    sqlite3_stmt *s = w->st->stmts[STMT_NS_EMBEDDER];
    sqlite3_bind_text(s, 1, op->embedder, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, ns->ns_id);
    int rc = mem_store__step_done(w->st, s, "record embedder", &op->err);
    if (rc == MEM_OK) snprintf(ns->embedder, sizeof(ns->embedder), "%s", op->embedder);
    return rc;
}

int mem_store__op_insert(mem_store__writer_t *w, mem_store_op_t *op)
{
    if (!mem_store__name_ok(op->ns))
        return mem_err_field(&op->err, MEM_EINVAL, "namespace", "namespace: invalid name");
    if (op->n_segs == 0 || !op->segs || !op->outs)
        return mem_err_field(&op->err, MEM_EINVAL, "segments", "segments: empty batch");
    mem_store_ns_t *ns = mem_store__reg_find(w->st, op->ns);
    char field[64];
    if (ns && op->dim != ns->dim) {
        seg_field(field, sizeof(field), op, 0, "embedding");
        return mem_err_field(&op->err, MEM_EDIM, field, "embedding: expected %zu floats, got %zu",
                             ns->dim, op->dim);
    }
    if (!ns && (op->dim < 1 || op->dim > MEM_INDEX_DIM_MAX)) {
        seg_field(field, sizeof(field), op, 0, "embedding");
        return mem_err_field(&op->err, MEM_EINVAL, field,
                             "embedding: must have 1..4096 floats, got %zu", op->dim);
    }
    if (op->embedder && (!op->embedder[0] || strnlen(op->embedder, MEM_STORE_EMBEDDER_MAX + 1) >
                                                 MEM_STORE_EMBEDDER_MAX))
        return mem_err_set(&op->err, MEM_EINVAL, "embedder: 1 to %d bytes", MEM_STORE_EMBEDDER_MAX);
    if (ns && op->embedder && ns->embedder[0] && strcmp(ns->embedder, op->embedder) != 0) {
        seg_field(field, sizeof(field), op, 0, "text");
        return mem_err_field(&op->err, MEM_EMISMATCH, field,
                             "namespace %s holds vectors made by %.100s; text cannot be embedded "
                             "for it with %.100s (send an embedding)",
                             op->ns, ns->embedder, op->embedder);
    }
    seg_kind_t *kind = malloc(op->n_segs * sizeof(*kind));
    size_t *ref = malloc(op->n_segs * sizeof(*ref));
    int64_t *ts = malloc(op->n_segs * sizeof(*ts));
    int rc = MEM_OK;
    if (!kind || !ref || !ts) {
        rc = mem_err_set(&op->err, MEM_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = insert_validate(w, ns, op, kind, ref, ts)) != MEM_OK) goto out;
    bool any_new = false;
    for (size_t i = 0; i < op->n_segs; i++)
        any_new |= kind[i] == SEG_NEW;
    if (any_new) {
        if (!ns && (rc = mem_store__ns_create(w, op->ns, op->dim, true, op->now_ms,
                                              mem_store__incarnation(op), &ns, &op->err)) != MEM_OK)
            goto out;
        if ((rc = mem_store__group_touch(w, ns)) != MEM_OK) {
            rc = mem_err_set(&op->err, rc, "out of memory");
            goto out;
        }
    }
    op->created = false;
    if (any_new) {
        size_t n_ins = 0;
        rc = insert_new(w, ns, op, kind, ts, &n_ins);
        if (n_ins) {
            op->created = true;
            mem_store__lsn_advance(w, (int64_t)n_ins);
        }
        if (rc != MEM_OK) goto out;
        if (op->embedder && !ns->embedder[0] && (rc = record_embedder(w, ns, op)) != MEM_OK)
            goto out;
    }
    const mem_index_t *view = ns ? mem_store__writer_view(w, ns) : NULL;
    for (size_t i = 0; i < op->n_segs; i++) {
        mem_store_seg_out_t *o = &op->outs[i];
        if (kind[i] == SEG_STORED) {
            o->seq = mem_index_seq(view, ref[i]);
            o->ts_ms = mem_index_ts(view, ref[i]);
            o->existed = true;
        } else if (kind[i] == SEG_IN_BATCH) {
            *o = op->outs[ref[i]];
            o->existed = true;
        }
    }
out:
    free(kind);
    free(ref);
    free(ts);
    return rc;
}
