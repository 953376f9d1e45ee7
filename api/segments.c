/* segments.c - insert, get and forget segments (SPEC sections 2, 3)
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"

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

void mem_api__seg_insert(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                         mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_api__state_t *st = mem_api__state(resp);
    if (!st) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    size_t ns_dim = 0;
    int rc = mem_store_ns_stats(ctx->store, ns, &st->ns_stats, &err);
    if (rc == MEM_OK) {
        ns_dim = st->ns_stats.dim;
        st->ns_exists = true;
    } else if (rc != MEM_ENOTFOUND) {
        if (err.code == MEM_OK) err.code = rc;
        mem_api_error(resp, &err);
        return;
    }
    mem_err_clear(&err);
    char f[48];
    if (st->ns_exists && wants_embedding(root, f, sizeof(f)) &&
        (rc = mem_api__embed_check(ctx, &st->ns_stats, f, &err)) != MEM_OK) {
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

void mem_api__seg_get(const mem_api_ctx_t *ctx, const char *ns, const char *id, bool with_embedding,
                      mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_segment_t *seg = NULL;
    int rc = mem_store_get(ctx->store, ns, id, with_embedding, &seg, &err);
    if (rc != MEM_OK) {
        if (err.code == MEM_OK) err.code = rc;
        mem_api_error(resp, &err);
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
