/* decode.c - request bodies -> plain structs (SPEC sections 2-5)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Every field is checked for type, then range, then copied into the request pool;
 * the first problem wins and names its field ("segments[2].embedding[7]"). Unknown keys are
 * errors. JSON null counts as "absent" for optional fields, so clients that serialise
 * unset options as null work. Embeddings are normalised here, so everything below api/
 * sees unit vectors.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "core/b64.h"
#include "core/num.h"

int mem_api__parse_body(const char *body, size_t len, json_t **out, mem_err_t *err)
{
    static const char *const VEC_PATHS[] = MEM_API_VEC_PATHS_REST;
    if (!body || len == 0)
        return mem_err_set(err, MEM_EJSON, "body: empty, expected a JSON object");
    json_t *root;
    int rc = mem_api__json_parse(body, len, VEC_PATHS, "body", &root, err);
    if (rc != MEM_OK) return rc;
    if (!json_is_object(root)) { /* well-formed JSON of the wrong shape */
        json_decref(root);
        return mem_err_set(err, MEM_EINVAL, "body: expected a JSON object");
    }
    *out = root;
    return MEM_OK;
}

static void fname(char *buf, size_t cap, const char *prefix, const char *name)
{
    snprintf(buf, cap, "%s%s", prefix, name);
}

int mem_api__check_keys(const json_t *obj, const char *const *allowed, const char *prefix,
                        mem_err_t *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, key) == 0;
        if (!ok) {
            char f[64];
            snprintf(f, sizeof(f), "%s%.40s", prefix, key);
            return mem_err_field(err, MEM_EINVAL, f, "unknown field: %s", f);
        }
    }
    return MEM_OK;
}

/* The levels of objects and arrays of v (0 for a scalar), counted up to limit + 1. */
static size_t json_depth(const json_t *v, size_t limit)
{
    if (!json_is_object(v) && !json_is_array(v)) return 0;
    if (limit == 0) return 1;
    size_t deepest = 0;
    if (json_is_object(v)) {
        const char *key;
        json_t *c;
        json_object_foreach((json_t *)v, key, c)
        {
            size_t d = json_depth(c, limit - 1);
            if (d > deepest) deepest = d;
            if (deepest >= limit) break;
        }
    } else {
        for (size_t i = 0; i < json_array_size(v) && deepest < limit; i++) {
            size_t d = json_depth(json_array_get(v, i), limit - 1);
            if (d > deepest) deepest = d;
        }
    }
    return deepest + 1;
}

int mem_api__check_meta_depth(const json_t *v, const char *f, mem_err_t *err)
{
    if (json_depth(v, MEM_API_MAX_META_DEPTH) > MEM_API_MAX_META_DEPTH)
        return mem_err_field(err, MEM_EINVAL, f, "%s: nested deeper than %d levels", f,
                             MEM_API_MAX_META_DEPTH);
    return MEM_OK;
}

/* JSON null or missing: absent. */
static const json_t *opt(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return v && !json_is_null(v) ? v : NULL;
}

static int get_int(const json_t *v, const char *field, int64_t lo, int64_t hi, int64_t *out,
                   mem_err_t *err)
{
    int64_t x;
    if (json_is_integer(v)) {
        x = (int64_t)json_integer_value(v);
    } else if (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v) &&
               fabs(json_real_value(v)) < 9.0e15) {
        x = (int64_t)json_real_value(v);
    } else {
        return mem_err_field(err, MEM_EINVAL, field, "%s: expected an integer in %lld..%lld", field,
                             (long long)lo, (long long)hi);
    }
    if (x < lo || x > hi)
        return mem_err_field(err, MEM_EINVAL, field, "%s: must be in %lld..%lld", field,
                             (long long)lo, (long long)hi);
    *out = x;
    return MEM_OK;
}

/* A number in [lo, hi] (lo excluded when lo_open). */
static int get_num(const json_t *v, const char *field, double lo, double hi, bool lo_open,
                   double *out, mem_err_t *err)
{
    if (!json_is_number(v))
        return mem_err_field(err, MEM_EINVAL, field, "%s: expected a number", field);
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi || (lo_open && x == lo))
        return mem_err_field(err, MEM_EINVAL, field, "%s: must be in %s%g, %g]", field,
                             lo_open ? "(" : "[", lo, hi);
    *out = x;
    return MEM_OK;
}

static int get_bool(const json_t *v, const char *field, bool *out, mem_err_t *err)
{
    if (!json_is_boolean(v))
        return mem_err_field(err, MEM_EINVAL, field, "%s: expected true or false", field);
    *out = json_is_true(v);
    return MEM_OK;
}

/* A string of 1..max bytes. */
static int get_str(const json_t *v, const char *field, size_t max, const char **s, size_t *len,
                   mem_err_t *err)
{
    if (!json_is_string(v))
        return mem_err_field(err, MEM_EINVAL, field, "%s: expected a string", field);
    size_t l = json_string_length(v);
    if (l == 0) return mem_err_field(err, MEM_EINVAL, field, "%s: empty string", field);
    if (l > max)
        return mem_err_field(err, MEM_EINVAL, field, "%s: longer than %zu bytes", field, max);
    *s = json_string_value(v);
    *len = l;
    return MEM_OK;
}

/* v[0..n) are finite floats and not all zero: normalise into a pool copy. */
static int finish_vec(mem_api__pool_t *pool, float *v, size_t n, const char *field, size_t want_dim,
                      float **vec, size_t *dim, mem_err_t *err)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return mem_err_field(err, MEM_EINVAL, field, "%s[%zu]: not a finite float", field, i);
    if (want_dim && n != want_dim)
        return mem_err_field(err, MEM_EDIM, field, "%s: expected %zu floats, got %zu", field,
                             want_dim, n);
    if (mem_vec_normalize(v, n) != 0)
        return mem_err_field(err, MEM_EINVAL, field, "%s: zero vector cannot be normalised", field);
    *vec = v;
    *dim = n;
    return MEM_OK;
}

int mem_api__decode_vec(mem_api__pool_t *pool, const json_t *arr, const char *field,
                        size_t want_dim, float **vec, size_t *dim, mem_err_t *err)
{
    size_t n;
    float *v;
    if (mem_api__vec_node_get(arr, NULL, &n)) { /* parsed straight to float32 by the reader */
        if (n == 0 || n > MEM_API_MAX_DIM)
            return mem_err_field(err, MEM_EINVAL, field, "%s: expected 1 to %d numbers, got %zu",
                                 field, MEM_API_MAX_DIM, n);
        if (want_dim && n != want_dim)
            return mem_err_field(err, MEM_EDIM, field, "%s: expected %zu floats, got %zu", field,
                                 want_dim, n);
        if (!(v = mem_api__palloc(pool, n * sizeof(float))))
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        mem_api__vec_node_get(arr, v, &n);
        return finish_vec(pool, v, n, field, want_dim, vec, dim, err);
    }
    if (json_is_string(arr)) { /* base64 of little-endian float32 */
        size_t len = json_string_length(arr);
        if (len == 0)
            return mem_err_field(err, MEM_EINVAL, field,
                                 "%s: empty string, expected base64 of 1 to %d float32", field,
                                 MEM_API_MAX_DIM);
        if (len > MEM_B64_LEN(4 * MEM_API_MAX_DIM))
            return mem_err_field(err, MEM_EINVAL, field, "%s: base64 holds more than %d float32",
                                 field, MEM_API_MAX_DIM);
        if (!(v = mem_api__palloc(pool, (len / 4 * 3 / 4 + 1) * sizeof(float))))
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        int rc =
            mem_b64_decode_f32le(json_string_value(arr), len, v, MEM_API_MAX_DIM, &n, field, err);
        if (rc != MEM_OK) return rc;
        if (n == 0)
            return mem_err_field(err, MEM_EINVAL, field, "%s: base64 holds no float32", field);
        return finish_vec(pool, v, n, field, want_dim, vec, dim, err);
    }
    if (!json_is_array(arr))
        return mem_err_field(err, MEM_EINVAL, field,
                             "%s: expected an array of numbers or a base64 string", field);
    n = json_array_size(arr);
    if (n == 0 || n > MEM_API_MAX_DIM)
        return mem_err_field(err, MEM_EINVAL, field, "%s: expected 1 to %d numbers, got %zu", field,
                             MEM_API_MAX_DIM, n);
    /* Element types first: an array of arrays is a wrong type, not a wrong size. A number
     * is a float when it rounds to a finite float32 (3.4028235e38 does, 3.5e38 does not). */
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(arr, i); /* borrowed */
        if (!json_is_number(x) || !isfinite((float)json_number_value(x)))
            return mem_err_field(err, MEM_EINVAL, field, "%s[%zu]: not a finite float", field, i);
    }
    if (want_dim && n != want_dim)
        return mem_err_field(err, MEM_EDIM, field, "%s: expected %zu floats, got %zu", field,
                             want_dim, n);
    if (!(v = mem_api__palloc(pool, n * sizeof(float))))
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        v[i] = (float)json_number_value(json_array_get(arr, i));
    return finish_vec(pool, v, n, field, want_dim, vec, dim, err);
}

int mem_api__decode_emb_form(const char *v, size_t len, mem_api__emb_form_t *out, mem_err_t *err)
{
    if (!v || (len == 4 && memcmp(v, "true", 4) == 0) || (len == 1 && *v == '1'))
        *out = MEM_API_EMB_ARRAY;
    else if ((len == 5 && memcmp(v, "false", 5) == 0) || (len == 1 && *v == '0'))
        *out = MEM_API_EMB_NONE;
    else if (len == 6 && memcmp(v, "base64", 6) == 0)
        *out = MEM_API_EMB_BASE64;
    else
        return mem_err_field(err, MEM_EINVAL, "embedding",
                             "embedding: expected true, false or base64");
    return MEM_OK;
}

/* Embed text with the built-in embedder into a pool vector of cfg->embed_dim floats. */
static int embed_text(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const char *text, size_t len,
                      const char *field, size_t want_dim, float **vec, size_t *dim, mem_err_t *err)
{
    size_t edim = ctx->cfg->embed_dim;
    if (want_dim && want_dim != edim)
        return mem_err_field(err, MEM_EDIM, field,
                             "%s: the built-in embedder makes %zu floats but the namespace has "
                             "dim %zu; send an embedding",
                             field, edim, want_dim);
    float *v = mem_api__palloc(pool, edim * sizeof(float));
    if (!v) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    if (mem_api__embed(text, len, v, edim) != MEM_OK)
        return mem_err_field(err, MEM_EINVAL, field,
                             "%s: nothing to embed (no words); send an embedding", field);
    *vec = v;
    *dim = edim;
    return MEM_OK;
}

/* ---- insert ---- */

static const char *const SEG_KEYS[] = {"id",     "text",     "embedding",  "timestamp",
                                       "source", "metadata", "supersedes", NULL};

/* A remote embedder will make the vector of this text: check what can be checked now (the
 * provider's dimension, once known, against the one fixed so far). */
static int defer_text(const mem_api_ctx_t *ctx, size_t len, const char *field, size_t *dim,
                      mem_err_t *err)
{
    size_t edim = mem_api__embedder_dim(ctx);
    if (len == 0)
        return mem_err_field(err, MEM_EINVAL, field,
                             "%s: an empty text cannot be embedded; send an embedding", field);
    if (*dim && edim && *dim != edim)
        return mem_err_field(err, MEM_EDIM, field,
                             "%s: the embedder (%.100s) makes %zu floats but the namespace has "
                             "dim %zu; send an embedding",
                             field, mem_api__embedder_id(ctx), edim, *dim);
    if (edim) *dim = edim;
    return MEM_OK;
}

/* *deferred: the vector awaits a remote embedder (seg->vec stays NULL). */
static int decode_seg(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *o,
                      const char *prefix, size_t *dim, mem_store_seg_in_t *seg, bool *embedded,
                      bool *deferred, mem_err_t *err)
{
    char f[64];
    const json_t *v;
    int rc;
    size_t l;
    const char *s;
    *deferred = false;
    if ((rc = mem_api__check_keys(o, SEG_KEYS, prefix, err)) != MEM_OK) return rc;
    if ((v = opt(o, "id"))) {
        fname(f, sizeof(f), prefix, "id");
        if ((rc = get_str(v, f, MEM_STORE_ID_MAX, &s, &l, err)) != MEM_OK) return rc;
        memcpy(seg->id, s, l);
        seg->id[l] = '\0';
    }
    if ((v = opt(o, "text"))) {
        fname(f, sizeof(f), prefix, "text");
        if (!json_is_string(v))
            return mem_err_field(err, MEM_EINVAL, f, "%s: expected a string", f);
        l = json_string_length(v);
        if (l > MEM_API_MAX_TEXT)
            return mem_err_field(err, MEM_EINVAL, f, "%s: longer than 1 MiB (%zu bytes)", f, l);
        if (!(seg->text = mem_api__pstrndup(pool, json_string_value(v), l)))
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        seg->text_len = l;
    }
    if ((v = opt(o, "timestamp"))) {
        fname(f, sizeof(f), prefix, "timestamp");
        if ((rc = mem_api__decode_ts(v, f, &seg->ts_ms, err)) != MEM_OK) return rc;
        int64_t now = ctx->now_ms();
        double limit = (double)now + ctx->cfg->max_future_skew_s * 1000.0;
        if ((double)seg->ts_ms > limit) {
            char a[32], b[32];
            mem_api__ts_format(seg->ts_ms, a);
            mem_api__ts_format(now, b);
            return mem_err_field(err, MEM_EFUTURE, f,
                                 "%s: %s is more than %gs ahead of the server clock (%s)", f, a,
                                 ctx->cfg->max_future_skew_s, b);
        }
        seg->ts_given = true;
    }
    if (!seg->id[0]) mem_api__uuid7(seg->ts_given ? seg->ts_ms : ctx->now_ms(), seg->id);
    if ((v = opt(o, "source"))) {
        fname(f, sizeof(f), prefix, "source");
        if ((rc = get_str(v, f, MEM_API_MAX_SOURCE, &s, &l, err)) != MEM_OK) return rc;
        if (!(seg->source = mem_api__pstrndup(pool, s, l)))
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        seg->source_len = l;
    }
    if ((v = opt(o, "metadata"))) {
        fname(f, sizeof(f), prefix, "metadata");
        if (!json_is_object(v))
            return mem_err_field(err, MEM_EINVAL, f, "%s: expected a JSON object", f);
        if ((rc = mem_api__check_meta_depth(v, f, err)) != MEM_OK) return rc;
        char *m = mem_api__dump(v);
        if (!m) return mem_err_set(err, MEM_ENOMEM, "out of memory");
        l = strlen(m);
        seg->metadata = mem_api__pstrndup(pool, m, l);
        free(m);
        if (!seg->metadata) return mem_err_set(err, MEM_ENOMEM, "out of memory");
        seg->metadata_len = l;
    }
    if ((v = opt(o, "supersedes"))) {
        fname(f, sizeof(f), prefix, "supersedes");
        if (!json_is_array(v))
            return mem_err_field(err, MEM_EINVAL, f, "%s: expected an array of ids", f);
        size_t ns = json_array_size(v);
        if (ns > MEM_API_MAX_SUPERSEDES)
            return mem_err_field(err, MEM_EINVAL, f, "%s: more than %d ids", f,
                                 MEM_API_MAX_SUPERSEDES);
        const char **ids = mem_api__palloc(pool, (ns ? ns : 1) * sizeof(char *));
        if (!ids) return mem_err_set(err, MEM_ENOMEM, "out of memory");
        for (size_t i = 0; i < ns; i++) {
            char fi[96];
            snprintf(fi, sizeof(fi), "%s[%zu]", f, i);
            if ((rc = get_str(json_array_get(v, i), fi, MEM_STORE_ID_MAX, &s, &l, err)) != MEM_OK)
                return rc;
            if (l == strlen(seg->id) && memcmp(s, seg->id, l) == 0)
                return mem_err_field(err, MEM_EINVAL, fi, "%s: a segment cannot supersede itself",
                                     fi);
            if (!(ids[i] = mem_api__pstrndup(pool, s, l)))
                return mem_err_set(err, MEM_ENOMEM, "out of memory");
        }
        seg->supersedes = ids;
        seg->n_supersedes = ns;
    }
    /* the vector last: a text's vector may not fit the namespace (dimension_mismatch), which
     * is only worth saying once every field of the segment is valid */
    float *vec = NULL;
    size_t n = 0;
    if ((v = opt(o, "embedding"))) {
        fname(f, sizeof(f), prefix, "embedding");
        if ((rc = mem_api__decode_vec(pool, v, f, *dim, &vec, &n, err)) != MEM_OK) return rc;
        *dim = n;
    } else if (seg->text && ctx->embedder_remote) {
        fname(f, sizeof(f), prefix, "text");
        if ((rc = defer_text(ctx, seg->text_len, f, dim, err)) != MEM_OK) return rc;
        *embedded = *deferred = true;
    } else if (seg->text) {
        fname(f, sizeof(f), prefix, "text");
        if ((rc = embed_text(ctx, pool, seg->text, seg->text_len, f, *dim, &vec, &n, err)) !=
            MEM_OK)
            return rc;
        *dim = n;
        *embedded = true;
    } else {
        fname(f, sizeof(f), prefix, "embedding");
        return mem_err_field(err, MEM_EINVAL, f, "%s: one of embedding or text is required", f);
    }
    seg->vec = vec;
    return MEM_OK;
}

int mem_api__decode_segment(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *o,
                            size_t *dim, mem_store_seg_in_t *seg, bool *embedded, mem_err_t *err)
{
    bool deferred = false;
    memset(seg, 0, sizeof(*seg));
    *embedded = false;
    int rc = decode_seg(ctx, pool, o, "", dim, seg, embedded, &deferred, err);
    if (rc == MEM_OK && deferred)
        return mem_err_field(err, MEM_EINVAL, "embedding",
                             "embedding: required here (the embedder is remote: embed the text, or "
                             "insert such segments in batches)");
    return rc;
}

static int cmp_idx_by_id(const void *a, const void *b, void *segs)
{
    const mem_store_seg_in_t *s = segs;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(s[i].id, s[j].id);
    return c ? c : (i < j ? -1 : i > j);
}

/* qsort has no context argument in C11: a small insertion-merge sort of indices. */
static void sort_idx(size_t *idx, size_t *tmp, size_t n, const mem_store_seg_in_t *segs)
{
    if (n < 2) return;
    size_t h = n / 2;
    sort_idx(idx, tmp, h, segs);
    sort_idx(idx + h, tmp, n - h, segs);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n)
        tmp[o++] = cmp_idx_by_id(&idx[i], &idx[j], (void *)segs) <= 0 ? idx[i++] : idx[j++];
    while (i < h)
        tmp[o++] = idx[i++];
    while (j < n)
        tmp[o++] = idx[j++];
    memcpy(idx, tmp, n * sizeof(size_t));
}

int mem_api__decode_insert(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *root,
                           size_t ns_dim, mem_api__insert_in_t *out, mem_err_t *err)
{
    static const char *const BATCH_KEYS[] = {"segments", NULL};
    const json_t *arr = json_object_get(root, "segments");
    bool batch = arr != NULL;
    size_t n = 1;
    int rc;
    if (batch) {
        if ((rc = mem_api__check_keys(root, BATCH_KEYS, "", err)) != MEM_OK) return rc;
        if (!json_is_array(arr))
            return mem_err_field(err, MEM_EINVAL, "segments",
                                 "segments: expected an array of segment objects");
        n = json_array_size(arr);
        if (n == 0) return mem_err_field(err, MEM_EINVAL, "segments", "segments: empty batch");
        if (n > ctx->cfg->max_batch)
            return mem_err_field(err, MEM_EINVAL, "segments",
                                 "segments: batch of %zu exceeds the maximum of %zu", n,
                                 ctx->cfg->max_batch);
    }
    mem_store_seg_in_t *segs = mem_api__palloc(pool, n * sizeof(*segs));
    size_t *embed_idx = ctx->embedder_remote ? mem_api__palloc(pool, n * sizeof(size_t)) : NULL;
    if (!segs || (ctx->embedder_remote && !embed_idx))
        return mem_err_set(err, MEM_ENOMEM, "out of memory");
    size_t dim = ns_dim, n_embed = 0, first_embedded = 0;
    bool embedded = false;
    for (size_t i = 0; i < n; i++) {
        const json_t *o = batch ? json_array_get(arr, i) : root;
        char prefix[32] = "";
        if (batch) {
            snprintf(prefix, sizeof(prefix), "segments[%zu].", i);
            if (!json_is_object(o)) {
                char f[32];
                snprintf(f, sizeof(f), "segments[%zu]", i);
                return mem_err_field(err, MEM_EINVAL, f, "%s: expected an object", f);
            }
        }
        bool deferred = false, was_embedded = embedded;
        if ((rc = decode_seg(ctx, pool, o, prefix, &dim, &segs[i], &embedded, &deferred, err)) !=
            MEM_OK)
            return rc;
        if (deferred) embed_idx[n_embed++] = i;
        if (embedded && !was_embedded) first_embedded = i;
        /* timestamps given in a batch must not go backwards (ties allowed) */
        for (size_t j = i; j-- > 0 && segs[i].ts_given;) {
            if (!segs[j].ts_given) continue;
            if (segs[i].ts_ms < segs[j].ts_ms) {
                char f[48], a[32], b[32];
                snprintf(f, sizeof(f), "segments[%zu].timestamp", i);
                mem_api__ts_format(segs[i].ts_ms, a);
                mem_api__ts_format(segs[j].ts_ms, b);
                rc = mem_err_field(err, MEM_ENONMONO, f,
                                   "%s: %s is older than %s earlier in the batch", f, a, b);
                if (err) {
                    err->last_ms = segs[j].ts_ms;
                    err->given_ms = segs[i].ts_ms;
                }
                return rc;
            }
            break;
        }
    }
    if (n > 1) { /* the same id twice in one batch is a client mistake */
        size_t *idx = mem_api__palloc(pool, 2 * n * sizeof(size_t));
        if (!idx) return mem_err_set(err, MEM_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
        sort_idx(idx, idx + n, n, segs);
        for (size_t i = 1; i < n; i++)
            if (strcmp(segs[idx[i]].id, segs[idx[i - 1]].id) == 0) {
                char f[48];
                snprintf(f, sizeof(f), "segments[%zu].id", idx[i]);
                return mem_err_field(err, MEM_EDUPID, f, "%s: same id as segments[%zu]", f,
                                     idx[i - 1]);
            }
    }
    out->segs = segs;
    out->n_segs = n;
    out->dim = dim;
    out->batch = batch;
    out->embedded = embedded;
    out->first_embedded = first_embedded;
    out->embed_idx = embed_idx;
    out->n_embed = n_embed;
    return MEM_OK;
}

/* ---- retrieve ---- */

static int decode_decay(const json_t *v, mem_decay_t *d, mem_err_t *err)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strncmp(s, "weibull:", 8) == 0) {
            /* the shape is a JSON number, as in {"weibull":{"shape":1.5}} (strtod would take
             * hex, leading spaces, "nan" and "inf") */
            size_t sl = strlen(s + 8), used = 0;
            double shape = 0;
            if (mem_num_parse_f64(s + 8, sl, &shape, &used) != MEM_OK || used != sl ||
                !(shape > 0 && shape <= 10))
                return mem_err_field(err, MEM_EINVAL, "decay",
                                     "decay: weibull shape must be in (0, 10]");
            d->kind = MEM_DECAY_WEIBULL;
            d->shape = shape;
            return MEM_OK;
        }
        mem_decay_kind_t k;
        if (strcmp(s, "weibull") == 0 || mem_decay_kind_parse(s, &k) != 0)
            return mem_err_field(err, MEM_EINVAL, "decay",
                                 "decay: expected \"exponential\", \"linear\", \"gaussian\", "
                                 "\"none\" or {\"weibull\":{\"shape\":1.5}}");
        d->kind = k;
        return MEM_OK;
    }
    if (json_is_object(v)) {
        static const char *const K1[] = {"weibull", NULL}, *const K2[] = {"shape", NULL};
        int rc;
        if ((rc = mem_api__check_keys(v, K1, "decay.", err)) != MEM_OK) return rc;
        const json_t *w = json_object_get(v, "weibull");
        if (!json_is_object(w))
            return mem_err_field(err, MEM_EINVAL, "decay.weibull",
                                 "decay.weibull: expected {\"shape\": number}");
        if ((rc = mem_api__check_keys(w, K2, "decay.weibull.", err)) != MEM_OK) return rc;
        const json_t *sh = json_object_get(w, "shape");
        double shape;
        if (!sh)
            return mem_err_field(err, MEM_EINVAL, "decay.weibull.shape",
                                 "decay.weibull.shape: required");
        if ((rc = get_num(sh, "decay.weibull.shape", 0, 10, true, &shape, err)) != MEM_OK)
            return rc;
        d->kind = MEM_DECAY_WEIBULL;
        d->shape = shape;
        return MEM_OK;
    }
    return mem_err_field(err, MEM_EINVAL, "decay",
                         "decay: expected a string or {\"weibull\":{\"shape\":1.5}}");
}

static const char *const RETRIEVE_KEYS[] = {"embedding",
                                            "query",
                                            "k",
                                            "half_life",
                                            "half_life_days",
                                            "recency_bias",
                                            "decay",
                                            "origin",
                                            "offset",
                                            "coherence_weight",
                                            "since",
                                            "until",
                                            "source",
                                            "as_of",
                                            "min_score",
                                            "include_superseded",
                                            "include_archived",
                                            "explain",
                                            "match",
                                            "filter",
                                            NULL};

static int decode_match(const json_t *v, mem_scan_match_t *out, mem_err_t *err)
{
    const char *s = json_string_value(v);
    if (s && strcmp(s, "vector") == 0)
        *out = MEM_SCAN_MATCH_VECTOR;
    else if (s && strcmp(s, "text") == 0)
        *out = MEM_SCAN_MATCH_TEXT;
    else if (s && strcmp(s, "hybrid") == 0)
        *out = MEM_SCAN_MATCH_HYBRID;
    else
        return mem_err_field(err, MEM_EINVAL, "match",
                             "match: expected \"vector\", \"text\" or \"hybrid\"");
    return MEM_OK;
}

int mem_api__decode_retrieve(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *root,
                             size_t ns_dim, const mem_api__text_match_t *dflt,
                             mem_api__retrieve_in_t *out, mem_err_t *err)
{
    int rc;
    const json_t *v;
    int64_t i64;
    double x;
    mem_api__retrieve_in_t r;
    memset(&r, 0, sizeof(r));
    mem_scan_params_t *p = &r.q.scan;
    p->k = 10;
    p->decay = ctx->cfg->decay;
    p->coherence_weight = ctx->cfg->coherence_weight;
    p->since_ms = INT64_MIN;
    p->until_ms = INT64_MAX;
    p->source = -1;
    r.q.record_access = true;
    if ((rc = mem_api__check_keys(root, RETRIEVE_KEYS, "", err)) != MEM_OK) return rc;
    const json_t *emb = opt(root, "embedding"), *query = opt(root, "query");
    float *vec = NULL;
    size_t n = 0;
    if (emb && query)
        return mem_err_field(err, MEM_EINVAL, "query", "query: give query or embedding, not both");
    mem_scan_match_t match = emb ? MEM_SCAN_MATCH_VECTOR : dflt->match;
    if ((v = opt(root, "match"))) {
        if ((rc = decode_match(v, &match, err)) != MEM_OK) return rc;
        if (emb && match != MEM_SCAN_MATCH_VECTOR)
            return mem_err_field(err, MEM_EINVAL, "match",
                                 "match: text and hybrid match need a query (text)");
    }
    p->match = match;
    p->text_weight = dflt->text_weight;
    r.q.lex = ctx->cfg->lex;
    if (emb) {
        if ((rc = mem_api__decode_vec(pool, emb, "embedding", ns_dim, &vec, &n, err)) != MEM_OK)
            return rc;
    } else if (query) {
        const char *s;
        size_t l;
        if ((rc = get_str(query, "query", MEM_API_MAX_TEXT, &s, &l, err)) != MEM_OK) return rc;
        if (l == 0) return mem_err_field(err, MEM_EINVAL, "query", "query: empty");
        if (!(r.q.text = mem_api__pstrndup(pool, s, l)))
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        r.q.text_len = l;
        r.embedded = match != MEM_SCAN_MATCH_TEXT;
        if (!r.embedded) {
            /* text match: no vector (the namespace's may not be made from text at all) */
        } else if (ctx->embedder_remote) {
            size_t want = ns_dim;
            if ((rc = defer_text(ctx, l, "query", &want, err)) != MEM_OK) return rc;
            if (!(r.query_text = mem_api__pstrndup(pool, s, l)))
                return mem_err_set(err, MEM_ENOMEM, "out of memory");
            r.query_len = l;
        } else if ((rc = embed_text(ctx, pool, s, l, "query", ns_dim, &vec, &n, err)) != MEM_OK) {
            return rc;
        }
    } else {
        return mem_err_field(err, MEM_EINVAL, "query",
                             "query: one of query or embedding is required");
    }
    p->query = vec;
    r.q.q_dim = n;
    if ((v = opt(root, "k"))) {
        if ((rc = get_int(v, "k", 1, MEM_SCAN_MAX_K, &i64, err)) != MEM_OK) return rc;
        p->k = (size_t)i64;
    }
    const json_t *hl = opt(root, "half_life"), *hld = opt(root, "half_life_days");
    if (hl && hld)
        return mem_err_field(err, MEM_EINVAL, "half_life_days",
                             "half_life_days: give half_life or half_life_days, not both");
    if (hl &&
        (rc = mem_api__decode_duration(hl, "half_life", &p->decay.half_life_s, err)) != MEM_OK)
        return rc;
    if (hld) {
        if ((rc = get_num(hld, "half_life_days", 0, 1e6, false, &x, err)) != MEM_OK) return rc;
        p->decay.half_life_s = x * 86400.0;
    }
    if ((v = opt(root, "decay")) && (rc = decode_decay(v, &p->decay, err)) != MEM_OK) return rc;
    if ((v = opt(root, "recency_bias"))) {
        if ((rc = get_num(v, "recency_bias", 0, 1, false, &p->decay.recency_bias, err)) != MEM_OK)
            return rc;
    }
    if ((v = opt(root, "coherence_weight"))) {
        r.q.coherence_weight_given = true;
        if ((rc = get_num(v, "coherence_weight", 0, 1, false, &p->coherence_weight, err)) != MEM_OK)
            return rc;
    }
    if ((v = opt(root, "offset")) &&
        (rc = mem_api__decode_duration(v, "offset", &p->decay.offset_s, err)) != MEM_OK)
        return rc;
    bool has_origin = false, has_until = false;
    p->origin_ms = ctx->now_ms();
    if ((v = opt(root, "origin"))) {
        if ((rc = mem_api__decode_ts(v, "origin", &p->origin_ms, err)) != MEM_OK) return rc;
        has_origin = true;
    }
    if ((v = opt(root, "since")) &&
        (rc = mem_api__decode_ts(v, "since", &p->since_ms, err)) != MEM_OK)
        return rc;
    if ((v = opt(root, "until"))) {
        if ((rc = mem_api__decode_ts(v, "until", &p->until_ms, err)) != MEM_OK) return rc;
        has_until = true;
    }
    if ((v = opt(root, "as_of"))) {
        int64_t t;
        if ((rc = mem_api__decode_ts(v, "as_of", &t, err)) != MEM_OK) return rc;
        if (!has_origin) p->origin_ms = t;
        if (!has_until) p->until_ms = t;
    }
    if (p->since_ms != INT64_MIN && p->until_ms != INT64_MAX && p->since_ms > p->until_ms)
        return mem_err_field(err, MEM_EINVAL, "since", "since: later than until");
    if ((v = opt(root, "source"))) {
        const char *s;
        size_t l;
        if ((rc = get_str(v, "source", MEM_API_MAX_SOURCE, &s, &l, err)) != MEM_OK) return rc;
        if (!(r.q.source = mem_api__pstrndup(pool, s, l)))
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        r.q.source_len = l;
    }
    if ((v = opt(root, "min_score"))) {
        if ((rc = get_num(v, "min_score", -DBL_MAX, DBL_MAX, false, &p->min_score, err)) != MEM_OK)
            return rc;
        p->has_min_score = true;
    }
    if ((v = opt(root, "include_superseded")) &&
        (rc = get_bool(v, "include_superseded", &p->include_superseded, err)) != MEM_OK)
        return rc;
    if ((v = opt(root, "include_archived")) &&
        (rc = get_bool(v, "include_archived", &p->include_archived, err)) != MEM_OK)
        return rc;
    if ((v = opt(root, "explain")) && (rc = get_bool(v, "explain", &r.explain, err)) != MEM_OK)
        return rc;
    if ((v = opt(root, "filter")) &&
        (rc = mem_api__decode_filter(pool, v, &r.q.filter, err)) != MEM_OK)
        return rc;
    *out = r;
    return MEM_OK;
}

/* ---- compact ---- */

static const char *const COMPACT_KEYS[] = {
    "target", "ratio", "policy", "dry_run", "purge", "weights", "context", "dedup_threshold", NULL};

int mem_api__decode_compact(const mem_api_ctx_t *ctx, mem_api__pool_t *pool, const json_t *root,
                            size_t ns_dim, mem_api__compact_in_t *out, mem_err_t *err)
{
    int rc;
    const json_t *v;
    mem_api__compact_in_t c;
    memset(&c, 0, sizeof(c));
    c.req.policy = MEM_COMPACT_DEFAULT;
    c.req.alpha = 0.25;
    c.req.beta = 0.35;
    c.req.gamma = 0.40;
    c.req.dedup_threshold = 0.02;
    if ((rc = mem_api__check_keys(root, COMPACT_KEYS, "", err)) != MEM_OK) return rc;
    const json_t *t = opt(root, "target"), *ra = opt(root, "ratio");
    if (t && ra)
        return mem_err_field(err, MEM_EINVAL, "ratio", "ratio: give target or ratio, not both");
    if (!t && !ra)
        return mem_err_field(err, MEM_EINVAL, "target",
                             "target: one of target or ratio is required");
    if (t) {
        int64_t x;
        if ((rc = get_int(t, "target", 0, INT64_C(1) << 52, &x, err)) != MEM_OK) return rc;
        c.req.has_target = true;
        c.req.target = (size_t)x;
    } else if ((rc = get_num(ra, "ratio", 0, 1, true, &c.req.ratio, err)) != MEM_OK) {
        return rc;
    }
    if ((v = opt(root, "policy"))) {
        if (!json_is_string(v) ||
            mem_compact_policy_parse(json_string_value(v), &c.req.policy) != 0) {
            char names[160] = "";
            size_t o = 0;
            for (int i = 0; i < MEM_COMPACT_POLICY_COUNT && o < sizeof(names); i++)
                o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", i ? ", " : "",
                                      mem_compact_policy_name((mem_compact_policy_t)i));
            return mem_err_field(err, MEM_EINVAL, "policy", "policy: expected one of %s", names);
        }
    }
    if ((v = opt(root, "dry_run")) && (rc = get_bool(v, "dry_run", &c.dry_run, err)) != MEM_OK)
        return rc;
    if ((v = opt(root, "purge")) && (rc = get_bool(v, "purge", &c.purge, err)) != MEM_OK) return rc;
    if ((v = opt(root, "weights"))) {
        static const char *const WK[] = {"recency", "frequency", "coherence", NULL};
        if (!json_is_object(v))
            return mem_err_field(err, MEM_EINVAL, "weights",
                                 "weights: expected {\"recency\",\"frequency\",\"coherence\"}");
        if ((rc = mem_api__check_keys(v, WK, "weights.", err)) != MEM_OK) return rc;
        const json_t *w;
        if ((w = opt(v, "recency")) &&
            (rc = get_num(w, "weights.recency", 0, 1e6, false, &c.req.alpha, err)) != MEM_OK)
            return rc;
        if ((w = opt(v, "frequency")) &&
            (rc = get_num(w, "weights.frequency", 0, 1e6, false, &c.req.beta, err)) != MEM_OK)
            return rc;
        if ((w = opt(v, "coherence")) &&
            (rc = get_num(w, "weights.coherence", 0, 1e6, false, &c.req.gamma, err)) != MEM_OK)
            return rc;
    }
    if ((v = opt(root, "dedup_threshold")) &&
        (rc = get_num(v, "dedup_threshold", 0, 2, false, &c.req.dedup_threshold, err)) != MEM_OK)
        return rc;
    if ((v = opt(root, "context"))) {
        if (!json_is_array(v))
            return mem_err_field(err, MEM_EINVAL, "context",
                                 "context: expected an array of embeddings");
        size_t n = json_array_size(v);
        if (n > MEM_API_MAX_CONTEXT)
            return mem_err_field(err, MEM_EINVAL, "context", "context: more than %d vectors",
                                 MEM_API_MAX_CONTEXT);
        size_t dim = ns_dim;
        float *all = NULL;
        for (size_t i = 0; i < n; i++) {
            char f[32];
            float *vec;
            size_t d;
            snprintf(f, sizeof(f), "context[%zu]", i);
            if ((rc = mem_api__decode_vec(pool, json_array_get(v, i), f, dim, &vec, &d, err)) !=
                MEM_OK)
                return rc;
            if (!all && !(all = mem_api__palloc(pool, n * d * sizeof(float))))
                return mem_err_set(err, MEM_ENOMEM, "out of memory");
            dim = d;
            memcpy(all + i * d, vec, d * sizeof(float));
        }
        c.req.context_given = true;
        c.req.context = all;
        c.req.n_context = n;
        c.req.context_dim = dim; /* checked again by the store against the namespace it finds */
    }
    *out = c;
    return MEM_OK;
}

int mem_api__decode_ns_create(const mem_api_ctx_t *ctx, const json_t *root, size_t *dim,
                              bool *coherence, mem_err_t *err)
{
    static const char *const K[] = {"dim", "coherence", NULL};
    int rc;
    *dim = mem_api__embedder_dim(ctx);
    *coherence = true;
    if (!root) return MEM_OK;
    if ((rc = mem_api__check_keys(root, K, "", err)) != MEM_OK) return rc;
    const json_t *v = opt(root, "dim");
    if (v) {
        int64_t x;
        if ((rc = get_int(v, "dim", 1, MEM_API_MAX_DIM, &x, err)) != MEM_OK) return rc;
        *dim = (size_t)x;
    }
    if ((v = opt(root, "coherence")) && (rc = get_bool(v, "coherence", coherence, err)) != MEM_OK)
        return rc;
    return MEM_OK;
}
