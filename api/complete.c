/* complete.c - the pending write is done: its REST answer, in one place
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A handler that needs a write fills a store op from the request's arena
 * (mem_api__new_op) and returns; once the writer is done (or the cluster log has applied
 * it), mem_api_work runs mem_api__finish_rest on a pool thread, never on the writer: the
 * op's result becomes the REST body of its kind, or the error the writer recorded.
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/api_int.h"

mem_store_op_t *mem_api__new_op(const mem_api_ctx_t *ctx, mem_api_resp_t *resp,
                                mem_api__pending_kind_t kind, mem_store_op_kind_t op_kind,
                                const char *ns)
{
    mem_api__state_t *st = mem_api__state(resp);
    mem_store_op_t *op = st ? mem_api__palloc(&st->pool, sizeof(*op)) : NULL;
    if (!op) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    op->kind = op_kind;
    snprintf(op->ns, sizeof(op->ns), "%s", ns);
    op->now_ms = ctx->now_ms();
    st->kind = kind;
    return op;
}

void mem_api__finish_rest(const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    mem_store_op_t *op = resp->pending;
    if (mem_store_on_writer_thread()) { /* never hold up every other write with JSON */
        mem_api__fail(resp, MEM_ESTORAGE, NULL, "internal error: an answer encoded on the writer");
        return;
    }
    if (op->rc != MEM_OK) {
        mem_err_t err = op->err;
        if (err.code == MEM_OK) err.code = op->rc;
        mem_api_error(resp, &err);
        return;
    }
    json_t *o = NULL;
    int status = 200;
    switch (st->kind) {
    case MEM_API_P_NS_CREATE:
        status = op->created ? 201 : 200;
        o = json_pack("{s:s,s:I}", "name", op->ns, "dim", (json_int_t)op->dim);
        break;
    case MEM_API_P_NS_DROP:
        o = json_pack("{s:s}", "deleted", op->ns);
        break;
    case MEM_API_P_INSERT:
        status = op->created ? 201 : 200;
        o = mem_api__enc_inserted(op);
        break;
    case MEM_API_P_DELETE:
        o = json_pack("{s:s}", "deleted", op->id);
        break;
    case MEM_API_P_COMPACT: {
        size_t after = st->before >= op->n_applied ? st->before - op->n_applied : 0;
        o = mem_api__enc_compact(st->before, after, st->policy, st->plan_ids, st->n_plan,
                                 mem_api__took_ms(st->t0_s));
        break;
    }
    case MEM_API_P_PATCH:
        mem_api__seg_patched(ctx, resp);
        return;
    case MEM_API_P_IMPORT:
        status = op->created ? 201 : 200;
        o = json_pack("{s:I,s:I}", "imported", (json_int_t)op->n_imported, "skipped",
                      (json_int_t)op->n_skipped);
        break;
    case MEM_API_P_NONE:
        mem_api__fail(resp, MEM_ESTORAGE, NULL, "internal error: unknown pending op");
        return;
    }
    mem_api__send_json(resp, status, o);
}
