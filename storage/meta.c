/* meta.c - segments' metadata into the namespace's value index (core/meta.h)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Metadata is stored as JSON text; storage/ never parses JSON itself. SQLite's own
 * json_tree() flattens it (every node with its full key and type), here turned into the
 * (path, value) pairs of core/meta.h: "$.a.b" becomes "a.b", array indexes are dropped (an
 * element counts under its array's path), a quoted key loses its quotes, objects and arrays
 * become CONTAINER values. The same statement serves the writer (one segment at a time,
 * inside its transaction) and the start-up load (one query per namespace), so the index
 * rebuilt at start-up equals the one maintained by the writes.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/jstr.h"
#include "storage/writer_int.h"

/* "$.a[0].\"b.c\"" -> "a.b.c" into out (cap bytes); length, or -1 (root or too long). */
static long path_of(const char *fk, size_t len, char *out, size_t cap)
{
    size_t i = 0, o = 0;
    if (len == 0 || fk[0] != '$') return -1;
    i = 1;
    while (i < len) {
        char c = fk[i];
        if (c == '[') { /* an array index: elements count under the array's path */
            while (i < len && fk[i] != ']')
                i++;
            i++;
            continue;
        }
        if (c == '.') {
            if (o) {
                if (o + 1 >= cap) return -1;
                out[o++] = '.';
            }
            i++;
            if (i < len && fk[i] == '"') { /* a quoted key */
                i++;
                while (i < len && fk[i] != '"') {
                    if (fk[i] == '\\') { /* json_tree spells a key as the JSON text does */
                        char u[MEM_JSTR_UTF8_MAX];
                        mem_jstr_bad_t why;
                        size_t w, used = mem_jstr_unescape(fk + i, fk + len, u, &w, &why);
                        if (!used || o + w >= cap) return -1;
                        memcpy(out + o, u, w);
                        o += w;
                        i += used;
                        continue;
                    }
                    if (o + 1 >= cap) return -1;
                    out[o++] = fk[i++];
                }
                i++;
            }
            continue;
        }
        if (o + 1 >= cap) return -1;
        out[o++] = c;
        i++;
    }
    return o ? (long)o : -1;
}

typedef struct pairbuf {
    mem_meta_pair_t *pairs;
    size_t n, cap;
    char *text; /* paths and strings of the pairs, copied: the statement's row goes away */
    size_t text_len, text_cap;
} pairbuf_t;

static void pairbuf_free(pairbuf_t *b)
{
    free(b->pairs);
    free(b->text);
}

/* Append the current json_tree row (columns first: fullkey, first + 1: type, first + 2:
 * atom) to b. Rows that are the root yield nothing. MEM_OK or MEM_ENOMEM. */
static int pairbuf_add(pairbuf_t *b, sqlite3_stmt *s, int first)
{
    char path[MEM_META_MAX_PATH + 1];
    const char *fk = (const char *)sqlite3_column_text(s, first);
    long pl = fk ? path_of(fk, (size_t)sqlite3_column_bytes(s, first), path, sizeof(path)) : -1;
    if (pl < 0) return MEM_OK; /* the root object, or a path too long to filter on */
    const char *type = (const char *)sqlite3_column_text(s, first + 1);
    mem_meta_val_t v = {.type = MEM_META_NULL};
    const char *str = NULL;
    size_t str_len = 0;
    if (!type) return MEM_OK;
    if (strcmp(type, "object") == 0 || strcmp(type, "array") == 0) {
        v.type = MEM_META_CONTAINER;
    } else if (strcmp(type, "true") == 0 || strcmp(type, "false") == 0) {
        v.type = MEM_META_BOOL;
        v.b = type[0] == 't';
    } else if (strcmp(type, "integer") == 0 || strcmp(type, "real") == 0) {
        v.type = MEM_META_NUM;
        v.num = sqlite3_column_double(s, first + 2);
    } else if (strcmp(type, "text") == 0) {
        v.type = MEM_META_STR;
        str = (const char *)sqlite3_column_text(s, first + 2);
        str_len = (size_t)sqlite3_column_bytes(s, first + 2);
        if (!str) str = "";
    }
    size_t need = b->text_len + (size_t)pl + str_len;
    if (need > b->text_cap) {
        size_t cap = b->text_cap ? b->text_cap : 256;
        while (cap < need)
            cap *= 2;
        char *t = realloc(b->text, cap);
        if (!t) return MEM_ENOMEM;
        /* re-point the pairs already taken at the moved text */
        for (size_t i = 0; i < b->n; i++) {
            b->pairs[i].path = t + (b->pairs[i].path - b->text);
            if (b->pairs[i].val.type == MEM_META_STR)
                b->pairs[i].val.str = t + (b->pairs[i].val.str - b->text);
        }
        b->text = t;
        b->text_cap = cap;
    }
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        mem_meta_pair_t *p = realloc(b->pairs, cap * sizeof(*p));
        if (!p) return MEM_ENOMEM;
        b->pairs = p;
        b->cap = cap;
    }
    char *dst = b->text + b->text_len;
    memcpy(dst, path, (size_t)pl);
    if (str_len) memcpy(dst + pl, str, str_len);
    b->text_len = need;
    mem_meta_pair_t *p = &b->pairs[b->n++];
    p->path = dst;
    p->path_len = (size_t)pl;
    p->val = v;
    if (v.type == MEM_META_STR) {
        p->val.str = dst + pl;
        p->val.len = str_len;
    }
    return MEM_OK;
}

/* json's (path, value) pairs into b (nothing for NULL). MEM_OK, MEM_ENOMEM, MEM_ESTORAGE. */
static int flatten(mem_store_t *st, const char *json, size_t len, pairbuf_t *b, mem_err_t *err)
{
    int rc = MEM_OK;
    if (json) {
        sqlite3_stmt *s = st->stmts[STMT_META_TREE];
        sqlite3_bind_text(s, 1, json, (int)len, SQLITE_STATIC);
        int src;
        while ((src = sqlite3_step(s)) == SQLITE_ROW && rc == MEM_OK)
            rc = pairbuf_add(b, s, 0);
        if (rc == MEM_OK && src != SQLITE_DONE && src != SQLITE_ROW)
            rc = mem_store__err_sqlite(err, st->db, src, "index metadata");
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        if (rc == MEM_ENOMEM) rc = mem_err_set(err, rc, "out of memory");
    }
    return rc;
}

int mem_store__meta_flatten_later(mem_store__writer_t *w, const char *json, size_t len,
                                  mem_store__patch_later_t *p, mem_err_t *err)
{
    pairbuf_t b = {0};
    int rc = flatten(w->st, json, len, &b, err);
    if (rc != MEM_OK) {
        pairbuf_free(&b);
        return rc;
    }
    p->meta = true;
    p->pairs = b.pairs;
    p->n_pairs = b.n;
    p->text = b.text;
    return MEM_OK;
}

int mem_store__meta_flatten_set(mem_store__writer_t *w, mem_store_ns_t *ns, int64_t seq,
                                const char *json, size_t len, mem_err_t *err)
{
    pairbuf_t b = {0};
    int rc = flatten(w->st, json, len, &b, err);
    if (rc == MEM_OK) {
        mem_store__write_lock(w, ns); /* the meta index is guarded like the index */
        rc = mem_meta_set(ns->meta, seq, b.pairs, b.n);
        mem_store__write_unlock(w, ns);
        if (rc != MEM_OK) rc = mem_err_set(err, rc, "out of memory");
    }
    pairbuf_free(&b);
    return rc;
}

int mem_store__meta_load(mem_store_ns_t *ns, sqlite3 *db, mem_err_t *err)
{
    static const char sql[] = "SELECT s.seq, j.fullkey, j.type, j.atom FROM segments s,"
                              " json_tree(s.metadata) j WHERE s.ns_id = ?1"
                              " AND s.metadata IS NOT NULL ORDER BY s.seq";
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return mem_store__err_sqlite(err, db, rc, "load metadata");
    sqlite3_bind_int64(s, 1, ns->ns_id);
    pairbuf_t b = {0};
    int64_t cur = 0;
    rc = MEM_OK;
    int src = SQLITE_DONE;
    while (rc == MEM_OK && (src = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(s, 0);
        if (seq != cur) {
            if (cur && b.n && mem_meta_set(ns->meta, cur, b.pairs, b.n) != MEM_OK) rc = MEM_ENOMEM;
            b.n = b.text_len = 0;
            cur = seq;
        }
        if (rc == MEM_OK) rc = pairbuf_add(&b, s, 1);
    }
    if (rc == MEM_OK && src != SQLITE_DONE) {
        rc = mem_store__err_sqlite(err, db, src, "load metadata");
    } else if (rc == MEM_OK && cur && b.n && mem_meta_set(ns->meta, cur, b.pairs, b.n) != MEM_OK) {
        rc = MEM_ENOMEM;
    }
    if (rc == MEM_ENOMEM) rc = mem_err_set(err, rc, "out of memory loading metadata");
    pairbuf_free(&b);
    sqlite3_finalize(s);
    return rc;
}

int mem_store__meta_plan(const mem_store_ns_t *ns, const mem_index_t *idx,
                         const mem_meta_filter_t *f, mem_scan_params_t *p, uint64_t **mask,
                         size_t **cand, size_t *n_cand, mem_err_t *err)
{
    /* the candidate rows are scored by their vectors: text and hybrid take the masked scan */
    size_t div = p->match == MEM_SCAN_MATCH_VECTOR ? MEM_STORE__FILTER_SELECTIVE : 0;
    int rc = mem_meta_plan(ns->meta, idx, f, div, p, mask, cand, n_cand);
    return rc < 0 ? mem_err_set(err, rc, "out of memory") : rc;
}
