/* retrieve.c - POST /v1/namespaces/{ns}/retrieve (SPEC section 4)
 * SPDX-License-Identifier: MIT
 *
 * Runs on a worker thread: the scan happens inside mem_store_retrieve under the
 * namespace's shared lock. The namespace is looked up first so the query's dimension
 * can be checked with a clear message before anything is scanned.
 */
#include "api/api_int.h"

void mem_api__retrieve(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                       mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_api__state_t *st = mem_api__state(resp);
    if (!st) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    mem_store_ns_stats_t s;
    if (!mem_api__ns_stats(ctx, ns, &s, resp)) return;
    int rc;
    mem_api__retrieve_in_t in;
    if ((rc = mem_api__decode_retrieve(ctx, &st->pool, root, s.dim, &in, &err)) != MEM_OK) {
        mem_api_error(resp, &err);
        return;
    }
    mem_store_result_t *res = NULL;
    size_t n = 0, scanned = 0;
    const char *kernel = NULL;
    rc = mem_store_retrieve(ctx->store, ns, &in.q, &res, &n, &scanned, &kernel, &err);
    if (rc != MEM_OK) {
        if (err.code == MEM_OK) err.code = rc;
        mem_api_error(resp, &err);
        return;
    }
    json_t *o = mem_api__enc_results(ns, res, n, scanned, kernel, mem_api__took_ms(st->t0_s),
                                     in.explain, in.q.scan.origin_ms);
    resp->scanned_fraction = (double)scanned / (double)(s.count ? s.count : 1);
    mem_store_results_free(res, n);
    mem_api__send_json(resp, 200, o);
}
