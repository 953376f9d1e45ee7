/* segments.c - insert, get and forget segments (SPEC sections 2, 3)
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "core/num.h"

/* Queue the insert of in (every vector in place). */
static void submit_insert(const mem_api_ctx_t *ctx, const char *ns, mem_api__insert_in_t *in,
                          mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    mem_store_op_t *op = mem_api__new_op(ctx, resp, MEM_API_P_INSERT, MEM_STORE_OP_INSERT, ns);
    if (!op) return;
    op->outs = mem_api__palloc(&st->pool, in->n_segs * sizeof(*op->outs));
    if (!op->outs) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    /* tokenise and quantise here, on this worker, rather than on the one writer thread;
     * without the memory for it the writer does it itself */
    if (!st->prep) mem_store_prepare(ctx->store, in->segs, in->n_segs, in->dim, &st->prep);
    op->segs = in->segs;
    op->n_segs = in->n_segs;
    op->dim = in->dim;
    op->batch = in->batch;
    op->embedder = in->embedded ? mem_api__embedder_id(ctx) : NULL;
    resp->pending = op;
}

/* Field of the first segment whose vector is made from its text. */
static void text_field(const mem_api__insert_in_t *in, char *f, size_t n)
{
    if (in->batch)
        snprintf(f, n, "segments[%zu].text", in->first_embedded);
    else
        snprintf(f, n, "text");
}

/* Does the body ask for a vector made from text (a segment with text and no embedding)?
 * f names the first such text. Checked before decoding, so that a namespace of another
 * embedder answers embedder_mismatch whatever else the body holds. */
static bool wants_embedding(const json_t *root, char *f, size_t n)
{
    const json_t *arr = json_object_get(root, "segments");
    size_t k = json_is_array(arr) ? json_array_size(arr) : 1;
    for (size_t i = 0; i < k; i++) {
        const json_t *o = json_is_array(arr) ? json_array_get(arr, i) : root;
        if (json_is_object(o) && json_is_string(json_object_get(o, "text")) &&
            !json_object_get(o, "embedding")) {
            if (json_is_array(arr))
                snprintf(f, n, "segments[%zu].text", i);
            else
                snprintf(f, n, "text");
            return true;
        }
    }
    return false;
}

/* ---- listing ----
 * A cursor is the last seq of a page, the namespace's incarnation and a check of
 * (namespace, incarnation, seq), in hex: opaque to clients, stable while the namespace
 * changes (seqs only grow) and on every node of a cluster (the incarnation is replicated).
 * A cursor of another namespace or a mangled one is a clear 400 rather than a silently wrong
 * page, and so is one of a namespace deleted since, even when one of the same name was
 * created again (its seqs start over: mem_store_list compares the incarnations). The
 * cursors of older releases (24 digits: seq and a check without the incarnation) cannot
 * tell the namespace they were made in, so they are refused by name. */

#define CURSOR_LEN     40 /* 16 hex digits of seq, 16 of the incarnation, 8 of the check */
#define CURSOR_LEN_OLD 24 /* 16 hex digits of seq, 8 of a check of (namespace, seq) */

static uint32_t cursor_check(const char *ns, int64_t seq, const uint64_t *incarnation)
{
    uint32_t h = 2166136261u;
    for (const char *p = ns; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint8_t)((uint64_t)seq >> (8 * i))) * 16777619u;
    for (int i = 0; incarnation && i < 8; i++)
        h = (h ^ (uint8_t)(*incarnation >> (8 * i))) * 16777619u;
    return h ^ 0x6d6e656du;
}

static void cursor_make(const char *ns, int64_t seq, uint64_t incarnation, char out[CURSOR_LEN + 1])
{
    snprintf(out, CURSOR_LEN + 1, "%016llx%016llx%08lx", (unsigned long long)seq,
             (unsigned long long)incarnation, (unsigned long)cursor_check(ns, seq, &incarnation));
}

/* Hex digits s[0..n) as a number (n <= 16); false on any other character. */
static bool hex_val(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        v = v * 16 + (uint64_t)d;
    }
    *out = v;
    return true;
}

static int cursor_parse(const char *ns, const char *s, size_t len, mem_store_list_req_t *req,
                        mem_err_t *err)
{
    uint64_t seq = 0, inc = 0, chk = 0;
    if (len == CURSOR_LEN_OLD && hex_val(s, 16, &seq) && hex_val(s + 16, 8, &chk) &&
        seq <= INT64_MAX && chk == cursor_check(ns, (int64_t)seq, NULL))
        return mem_err_field(err, MEM_EINVAL, "after",
                             "after: a cursor of an older mnemod, which does not say which "
                             "namespace %s it was made in (start the listing again without "
                             "after)",
                             ns);
    if (len != CURSOR_LEN || !hex_val(s, 16, &seq) || !hex_val(s + 16, 16, &inc) ||
        !hex_val(s + 32, 8, &chk) || seq > INT64_MAX || chk != cursor_check(ns, (int64_t)seq, &inc))
        return mem_err_field(err, MEM_EINVAL, "after",
                             "after: not a cursor of this namespace (pass the \"next\" of a "
                             "previous page)");
    req->after_seq = (int64_t)seq;
    req->resume = true;
    req->incarnation = inc;
    return MEM_OK;
}

static int get_flag(const char *v, size_t vl, bool has_value, const char *field, bool *out,
                    mem_err_t *err)
{
    if (!has_value || (vl == 4 && memcmp(v, "true", 4) == 0) || (vl == 1 && *v == '1'))
        *out = true;
    else if ((vl == 5 && memcmp(v, "false", 5) == 0) || (vl == 1 && *v == '0'))
        *out = false;
    else
        return mem_err_field(err, MEM_EINVAL, field, "%s: expected true or false", field);
    return MEM_OK;
}

/* A query-string timestamp: Unix seconds, or RFC 3339 (percent-decoded already). */
static int get_query_ts(const char *v, size_t vl, const char *field, int64_t *ms, mem_err_t *err)
{
    if (vl == 0 || vl >= 64)
        return mem_err_field(err, MEM_EINVAL, field,
                             "%s: expected an RFC 3339 timestamp or Unix seconds", field);
    /* a '+' of an offset sent as it is arrives as a space (form encoding); no timestamp
     * holds a space, so it is that '+' */
    char ts[64];
    memcpy(ts, v, vl);
    for (size_t i = 0; i < vl; i++)
        if (ts[i] == ' ') ts[i] = '+';
    v = ts;
    /* Unix seconds are a JSON number, as in a body: strtod would also take "nan", "inf",
     * hex and leading spaces, and a non-finite double is no json_t at all */
    double secs;
    size_t used = 0;
    int nrc = mem_num_parse_f64(v, vl, &secs, &used);
    if (nrc == MEM_ELIMIT && used == vl)
        return mem_err_field(err, MEM_EINVAL, field, "%s: Unix seconds out of range", field);
    json_t *j = nrc == MEM_OK && used == vl ? json_real(secs) : json_stringn(v, vl);
    if (!j) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    int rc = mem_api__decode_ts(j, field, ms, err);
    json_decref(j);
    return rc;
}

void mem_api__seg_list(const mem_api_ctx_t *ctx, const char *ns, const char *query,
                       mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_list_req_t req = {.limit = 100, .since_ms = INT64_MIN, .until_ms = INT64_MAX};
    char source[MEM_API_MAX_SOURCE + 1];
    unsigned seen = 0;
    mem_api__emb_form_t form = MEM_API_EMB_NONE;
    int rc = MEM_OK;
    static const char *const KEYS[] = {
        "limit",     "after", "since", "until", "source", "include_superseded", "include_archived",
        "embedding", NULL};
    mem_api__query_t q;
    mem_api__query_init(&q, query);
    while (rc == MEM_OK && (rc = mem_api__query_next(&q, &err)) == 1) {
        rc = MEM_OK;
        int k = 0;
        while (KEYS[k] && strcmp(KEYS[k], q.key) != 0)
            k++;
        if (!KEYS[k]) {
            rc = mem_err_field(&err, MEM_EINVAL, "query", "unknown query parameter: %s", q.key);
            break;
        }
        if (seen & (1u << k)) {
            rc = mem_err_field(&err, MEM_EINVAL, KEYS[k], "%s: given twice", KEYS[k]);
            break;
        }
        seen |= 1u << k;
        const char *v = q.val;
        size_t vl = q.val_len;
        switch (k) {
        case 0: { /* limit */
            char *end;
            long long x = vl && vl < 8 ? strtoll(v, &end, 10) : 0;
            if (!vl || vl >= 8 || *end || x < 1 || x > MEM_STORE_LIST_MAX)
                rc = mem_err_field(&err, MEM_EINVAL, "limit", "limit: expected an integer in 1..%d",
                                   MEM_STORE_LIST_MAX);
            else
                req.limit = (size_t)x;
            break;
        }
        case 1:
            rc = cursor_parse(ns, v, vl, &req, &err);
            break;
        case 2:
            rc = get_query_ts(v, vl, "since", &req.since_ms, &err);
            break;
        case 3:
            rc = get_query_ts(v, vl, "until", &req.until_ms, &err);
            break;
        case 4:
            if (vl == 0 || vl > MEM_API_MAX_SOURCE || memchr(v, 0, vl)) {
                rc = mem_err_field(&err, MEM_EINVAL, "source", "source: expected 1 to %d bytes",
                                   MEM_API_MAX_SOURCE);
            } else {
                memcpy(source, v, vl);
                source[vl] = '\0';
                req.source = source;
            }
            break;
        case 5:
            rc = get_flag(v, vl, q.has_val, "include_superseded", &req.include_superseded, &err);
            break;
        case 6:
            rc = get_flag(v, vl, q.has_val, "include_archived", &req.include_archived, &err);
            break;
        case 7:
            rc = mem_api__decode_emb_form(q.has_val ? v : NULL, vl, &form, &err);
            req.with_embedding = form != MEM_API_EMB_NONE;
            break;
        }
    }
    if (rc == MEM_OK && req.since_ms > req.until_ms)
        rc = mem_err_field(&err, MEM_EINVAL, "since", "since: later than until");
    mem_store_segment_t **segs = NULL;
    size_t n = 0;
    bool more = false;
    uint64_t incarnation = 0;
    if (rc == MEM_OK)
        rc = mem_store_list(ctx->store, ns, &req, &segs, &n, &more, &incarnation, &err);
    if (rc != MEM_OK) {
        mem_api__fail_call(resp, rc, &err);
        return;
    }
    json_t *o = json_object(), *arr = json_array();
    bool ok = o && arr;
    for (size_t i = 0; ok && i < n; i++)
        ok = json_array_append_new(arr, mem_api__enc_segment_form(segs[i], form)) == 0;
    char cur[CURSOR_LEN + 1];
    if (more && n) cursor_make(ns, segs[n - 1]->seq, incarnation, cur);
    mem_store_segments_free(segs, n);
    if (ok) {
        ok = json_object_set_new(o, "segments", arr) == 0;
        arr = NULL;
    }
    if (ok) ok = json_object_set_new(o, "next", more && n ? json_string(cur) : json_null()) == 0;
    json_decref(arr);
    if (!ok) {
        json_decref(o);
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    mem_api__send_json(resp, 200, o);
}

void mem_api__seg_insert(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                         mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_ns_stats_t stats;
    bool exists;
    mem_api__state_t *st = mem_api__handler_begin(ctx, resp, ns, &stats, &exists);
    if (!st) return;
    st->ns_stats = stats;
    st->ns_exists = exists;
    size_t ns_dim = exists ? stats.dim : 0;
    int rc;
    char f[48];
    /* another embedder's namespace first; the dimension is checked where each text's vector
     * is made, after the segment's other fields (mem_api__decode_insert) */
    if (st->ns_exists && wants_embedding(root, f, sizeof(f)) &&
        (rc = mem_api__embedder_match(ctx, &st->ns_stats, f, &err)) != MEM_OK) {
        mem_api_error(resp, &err);
        return;
    }
    mem_api__insert_in_t *in = mem_api__palloc(&st->pool, sizeof(*in));
    if (!in) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    if ((rc = mem_api__decode_insert(ctx, &st->pool, root, ns_dim, in, &err)) != MEM_OK) {
        mem_api_error(resp, &err);
        return;
    }
    if (in->n_embed == 0) {
        submit_insert(ctx, ns, in, resp);
        return;
    }
    const char **texts = mem_api__palloc(&st->pool, in->n_embed * sizeof(char *));
    size_t *lens = mem_api__palloc(&st->pool, in->n_embed * sizeof(size_t));
    if (!texts || !lens) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    for (size_t i = 0; i < in->n_embed; i++) {
        texts[i] = in->segs[in->embed_idx[i]].text;
        lens[i] = in->segs[in->embed_idx[i]].text_len;
    }
    snprintf(st->ns, sizeof(st->ns), "%s", ns);
    st->ins = in;
    st->wait = MEM_API_W_INSERT;
    st->embed = (mem_api_embed_t){.texts = texts, .lens = lens, .n = in->n_embed};
    resp->embed = &st->embed;
}

void mem_api__seg_insert_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, const float *vecs,
                                size_t dim)
{
    mem_api__state_t *st = resp->_state;
    mem_api__insert_in_t *in = st->ins;
    char f[48];
    text_field(in, f, sizeof(f));
    const mem_store_ns_stats_t *s = st->ns_exists ? &st->ns_stats : NULL;
    if (s && s->dim != dim && s->embedder[0] &&
        strcmp(s->embedder, mem_api__embedder_id(ctx)) == 0) {
        mem_api__fail(resp, MEM_EEMBED, f,
                      "%s: the embedder (%.100s) answered %zu floats per vector, but it made "
                      "the namespace's vectors with %zu",
                      f, s->embedder, dim, s->dim);
        return;
    }
    if (in->dim && in->dim != dim) {
        mem_api__fail(resp, MEM_EDIM, f,
                      "%s: the embedder (%.100s) makes %zu floats but the %s has dim %zu; send "
                      "an embedding",
                      f, mem_api__embedder_id(ctx), dim, s ? "namespace" : "batch's embeddings",
                      in->dim);
        return;
    }
    for (size_t i = 0; i < in->n_embed; i++) {
        float *v = mem_api__palloc(&st->pool, dim * sizeof(float));
        if (!v) {
            mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
            return;
        }
        memcpy(v, vecs + i * dim, dim * sizeof(float));
        if (mem_vec_normalize(v, dim) != 0) {
            mem_api__fail(resp, MEM_EEMBED, f,
                          "the embedder (%.100s) answered a zero vector for input %zu",
                          mem_api__embedder_id(ctx), i);
            return;
        }
        in->segs[in->embed_idx[i]].vec = v;
    }
    in->dim = dim;
    submit_insert(ctx, st->ns, in, resp);
}

void mem_api__seg_get(const mem_api_ctx_t *ctx, const char *ns, const char *id,
                      mem_api__emb_form_t form, mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_segment_t *seg = NULL;
    mem_api__state_t *st = resp->_state;
    int rc;
    if (st && st->inline_try) { /* on the event loop: read it, or give up having done nothing */
        bool busy = false;
        rc = mem_store_get_try(ctx->store, ns, id, form != MEM_API_EMB_NONE, &seg, &busy, &err);
        if (busy) {
            st->inline_why = MEM_API_INLINE_SQLITE;
            return;
        }
    } else {
        rc = mem_store_get(ctx->store, ns, id, form != MEM_API_EMB_NONE, &seg, &err);
    }
    if (rc != MEM_OK) {
        mem_api__fail_call(resp, rc, &err);
        return;
    }
    json_t *o = mem_api__enc_segment_form(seg, form);
    mem_store_segment_free(seg);
    mem_api__send_json(resp, 200, o);
}

/* ---- patch ---- */

void mem_api__seg_patch(const mem_api_ctx_t *ctx, const char *ns, const char *id,
                        const json_t *root, mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_api__state_t *st = mem_api__handler_begin(ctx, resp, NULL, NULL, NULL);
    if (!st) return;
    const char *key;
    json_t *v;
    bool has_meta = false, has_source = false;
    const char *meta = NULL, *source = NULL;
    size_t meta_len = 0, source_len = 0;
    json_object_foreach((json_t *)root, key, v)
    {
        if (strcmp(key, "metadata") == 0) {
            has_meta = true;
            if (json_is_null(v)) continue;
            if (!json_is_object(v)) {
                mem_api__fail(resp, MEM_EINVAL, "metadata",
                              "metadata: expected a JSON object, or null to clear it");
                return;
            }
            mem_err_t derr;
            mem_err_clear(&derr);
            if (mem_api__check_meta_depth(v, "metadata", &derr) != MEM_OK) {
                mem_api_error(resp, &derr);
                return;
            }
            char *m = mem_api__dump(v);
            if (m) {
                meta_len = strlen(m);
                meta = mem_api__pstrndup(&st->pool, m, meta_len);
            }
            free(m);
            if (!meta) {
                mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
                return;
            }
        } else if (strcmp(key, "source") == 0) {
            has_source = true;
            if (json_is_null(v)) continue;
            size_t l = json_string_length(v);
            if (!json_is_string(v) || l == 0 || l > MEM_API_MAX_SOURCE) {
                mem_api__fail(resp, MEM_EINVAL, "source",
                              "source: expected a string of 1 to %d bytes, or null to clear it",
                              MEM_API_MAX_SOURCE);
                return;
            }
            if (!(source = mem_api__pstrndup(&st->pool, json_string_value(v), l))) {
                mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
                return;
            }
            source_len = l;
        } else if (strcmp(key, "text") == 0 || strcmp(key, "embedding") == 0 ||
                   strcmp(key, "timestamp") == 0) {
            mem_api__fail(resp, MEM_EINVAL, key,
                          "%s: immutable; to change what a memory says, insert a new segment "
                          "that supersedes this one",
                          key);
            return;
        } else {
            char f[48];
            snprintf(f, sizeof(f), "%.40s", key);
            mem_api__fail(resp, MEM_EINVAL, f, "unknown field: %s (a patch takes metadata, source)",
                          f);
            return;
        }
    }
    if (!has_meta && !has_source) {
        mem_api__fail(resp, MEM_EINVAL, "metadata", "body: give metadata and/or source");
        return;
    }
    mem_store_op_t *op = mem_api__new_op(ctx, resp, MEM_API_P_PATCH, MEM_STORE_OP_PATCH, ns);
    if (!op) return;
    snprintf(op->id, sizeof(op->id), "%s", id);
    op->patch_metadata = has_meta;
    op->metadata = meta;
    op->metadata_len = meta_len;
    op->patch_source = has_source;
    op->source = source;
    op->source_len = source_len;
    resp->pending = op;
}

void mem_api__seg_patched(const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_store_op_t *op = resp->pending;
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_segment_t *seg = NULL;
    int rc = mem_store_get(ctx->store, op->ns, op->id, false, &seg, &err);
    if (rc != MEM_OK) {
        mem_api__fail_call(resp, rc, &err);
        return;
    }
    json_t *o = mem_api__enc_segment(seg);
    mem_store_segment_free(seg);
    mem_api__send_json(resp, 200, o);
}

void mem_api__seg_delete(const mem_api_ctx_t *ctx, const char *ns, const char *id,
                         mem_api_resp_t *resp)
{
    mem_store_op_t *op = mem_api__new_op(ctx, resp, MEM_API_P_DELETE, MEM_STORE_OP_DELETE, ns);
    if (!op) return;
    snprintf(op->id, sizeof(op->id), "%s", id);
    resp->pending = op;
}
