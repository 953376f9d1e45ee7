/* segments.c - insert, get and forget segments (SPEC sections 2, 3)
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"

void mem_api__seg_insert(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                         mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_ns_stats_t s;
    size_t ns_dim = 0;
    int rc = mem_store_ns_stats(ctx->store, ns, &s, &err);
    if (rc == MEM_OK) {
        ns_dim = s.dim;
    } else if (rc != MEM_ENOTFOUND) {
        if (err.code == MEM_OK) err.code = rc;
        mem_api_error(resp, &err);
        return;
    }
    mem_err_clear(&err);
    mem_api__state_t *st = mem_api__state(resp);
    if (!st) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    mem_api__insert_in_t in;
    if ((rc = mem_api__decode_insert(ctx, &st->pool, root, ns_dim, &in, &err)) != MEM_OK) {
        mem_api_error(resp, &err);
        return;
    }
    mem_store_op_t *op = mem_api__new_op(ctx, resp, MEM_API_P_INSERT, MEM_STORE_OP_INSERT, ns);
    if (!op) return;
    op->outs = mem_api__palloc(&st->pool, in.n_segs * sizeof(*op->outs));
    if (!op->outs) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    op->segs = in.segs;
    op->n_segs = in.n_segs;
    op->dim = in.dim;
    op->batch = in.batch;
    resp->pending = op;
}

void mem_api__seg_get(const mem_api_ctx_t *ctx, const char *ns, const char *id,
                      mem_api__emb_form_t form, mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_segment_t *seg = NULL;
    int rc = mem_store_get(ctx->store, ns, id, form != MEM_API_EMB_NONE, &seg, &err);
    if (rc != MEM_OK) {
        if (err.code == MEM_OK) err.code = rc;
        mem_api_error(resp, &err);
        return;
    }
    json_t *o = mem_api__enc_segment_form(seg, form);
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
