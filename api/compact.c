/* compact.c - POST /v1/namespaces/{ns}/compact (SPEC section 5)
 * SPDX-License-Identifier: MIT
 *
 * The plan is computed here on the worker thread (shared lock only); unless it is a dry
 * run or evicts nothing, the evictions go to the writer as one COMPACT op, which skips
 * ids that stopped being active in between.
 */
#include "api/api_int.h"

void mem_api__compact(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                      mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_ns_stats_t s;
    mem_api__state_t *st = mem_api__handler_begin(ctx, resp, ns, &s, NULL);
    if (!st) return;
    int rc;
    mem_api__compact_in_t in;
    if ((rc = mem_api__decode_compact(ctx, &st->pool, root, s.dim, &in, &err)) != MEM_OK) {
        mem_api_error(resp, &err);
        return;
    }
    char **ids = NULL;
    size_t n = 0, before = 0;
    rc = mem_store_compact_plan(ctx->store, ns, &in.req, &ids, &n, &before, &err);
    if (rc != MEM_OK) {
        mem_api__fail_call(resp, rc, &err);
        return;
    }
    st->plan_ids = ids;
    st->n_plan = n;
    st->before = before;
    st->policy = in.req.policy;
    if (in.dry_run || n == 0) {
        mem_api__send_json(resp, 200,
                           mem_api__enc_compact(before, before - n, in.req.policy, ids, n,
                                                mem_api__took_ms(st->t0_s)));
        return;
    }
    mem_store_op_t *op = mem_api__new_op(ctx, resp, MEM_API_P_COMPACT, MEM_STORE_OP_COMPACT, ns);
    if (!op) return;
    op->evict_ids = (const char *const *)ids;
    op->n_evict = n;
    op->purge = in.purge;
    resp->pending = op;
}
