/* retrieve.c - POST /v1/namespaces/{ns}/retrieve (SPEC section 4)
 * SPDX-License-Identifier: MIT
 *
 * Runs on a worker thread: the scan happens inside mem_store_retrieve under the
 * namespace's shared lock. The namespace is looked up first so the query's dimension
 * can be checked with a clear message before anything is scanned. A text query matches as
 * its "match" says, else as the namespace's kind of vectors says (mem_api__text_match);
 * where the namespace's vectors cannot be made from text (client vectors of another
 * dimension than the embedder's), the default falls back to text match while an explicit
 * vector or hybrid match is refused (400 dimension_mismatch); a namespace of another
 * embedder stays 409 embedder_mismatch unless the query asks for text match. A text query for a
 * remote embedder waits for its vector (resp->embed) and scans in mem_api__retrieve_resume.
 */
#include <string.h>

#include "api/api_int.h"

static void run_scan(const mem_api_ctx_t *ctx, const char *ns, const mem_store_ns_stats_t *s,
                     mem_api__retrieve_in_t *in, mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_result_t *res = NULL;
    size_t n = 0, scanned = 0;
    const char *kernel = NULL;
    in->q.need_gates = in->explain; /* explain shows each hit's gate: the graph must be current */
    int rc;
    if (st->inline_try) { /* on the event loop: it answers, or gives up having done nothing */
        mem_store_try_t why = MEM_STORE_TRY_DONE;
        rc = mem_store_retrieve_try(ctx->store, ns, &in->q, st->inline_budget, &why, &res, &n,
                                    &scanned, &kernel, &err);
        static const mem_api_inline_t of_try[MEM_STORE_TRY_COUNT] = {
            [MEM_STORE_TRY_DONE] = MEM_API_INLINE_ANSWERED,
            [MEM_STORE_TRY_LOCKED] = MEM_API_INLINE_LOCKED,
            [MEM_STORE_TRY_GRAPH] = MEM_API_INLINE_GRAPH,
            [MEM_STORE_TRY_BUDGET] = MEM_API_INLINE_BUDGET,
            [MEM_STORE_TRY_SQLITE] = MEM_API_INLINE_SQLITE,
        };
        if (why != MEM_STORE_TRY_DONE) {
            st->inline_why = of_try[why];
            return;
        }
    } else {
        rc = mem_store_retrieve(ctx->store, ns, &in->q, &res, &n, &scanned, &kernel, &err);
    }
    if (rc != MEM_OK) {
        mem_api__fail_call(resp, rc, &err);
        return;
    }
    size_t len = 0;
    char *text =
        mem_api__enc_results_text(ns, res, n, scanned, kernel, mem_api__took_ms(st->t0_s),
                                  in->explain, in->q.scan.origin_ms, in->q.scan.match, &len);
    resp->scanned_fraction = (double)scanned / (double)(s->count ? s->count : 1);
    mem_store_results_free(res, n);
    mem_api__send_text(resp, 200, text, len);
}

void mem_api__retrieve(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                       mem_api_resp_t *resp)
{
    mem_store_ns_stats_t stats;
    mem_err_t err;
    mem_err_clear(&err);
    mem_api__state_t *st = mem_api__handler_begin(ctx, resp, ns, &stats, NULL);
    if (!st) return;
    st->ns_stats = stats;
    st->ns_exists = true;
    int rc;
    mem_api__retrieve_in_t *in = mem_api__palloc(&st->pool, sizeof(*in));
    if (!in) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    mem_api__text_match_t dflt = mem_api__text_match(ctx, &st->ns_stats);
    bool text_query = json_string_length(json_object_get(root, "query")) > 0 &&
                      !json_object_get(root, "embedding");
    if (text_query) {
        const char *m = json_string_value(json_object_get(root, "match"));
        bool given = json_object_get(root, "match") != NULL;
        bool wants_vector =
            given ? !(m && strcmp(m, "text") == 0) : dflt.match != MEM_SCAN_MATCH_TEXT;
        /* a namespace of another embedder (or dimension): say so first, or match by text */
        if (wants_vector &&
            (rc = mem_api__embed_check(ctx, &st->ns_stats, "query", &err)) != MEM_OK) {
            if (rc != MEM_EDIM ||
                (given && m && (strcmp(m, "vector") == 0 || strcmp(m, "hybrid") == 0))) {
                mem_api_error(resp, &err);
                return;
            }
            mem_err_clear(&err);
            if (!given) dflt.match = MEM_SCAN_MATCH_TEXT;
        }
    }
    if ((rc = mem_api__decode_retrieve(ctx, &st->pool, root, st->ns_stats.dim, &dflt, in, &err)) !=
        MEM_OK) {
        mem_api_error(resp, &err);
        return;
    }
    if (!in->query_text) {
        run_scan(ctx, ns, &st->ns_stats, in, resp);
        return;
    }
    if (st->inline_try) { /* a provider call is never made from the event loop */
        st->inline_why = MEM_API_INLINE_EMBEDDER;
        return;
    }
    snprintf(st->ns, sizeof(st->ns), "%s", ns);
    st->ret = in;
    st->wait = MEM_API_W_RETRIEVE;
    st->embed = (mem_api_embed_t){.texts = &in->query_text, .lens = &in->query_len, .n = 1};
    resp->embed = &st->embed;
}

void mem_api__retrieve_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, const float *vecs,
                              size_t dim)
{
    mem_api__state_t *st = resp->_state;
    mem_api__retrieve_in_t *in = st->ret;
    const mem_store_ns_stats_t *s = &st->ns_stats;
    if (s->dim != dim) {
        bool same = s->embedder[0] && strcmp(s->embedder, mem_api__embedder_id(ctx)) == 0;
        mem_api__fail(resp, same ? MEM_EEMBED : MEM_EDIM, "query",
                      same ? "query: the embedder (%.100s) answered %zu floats per vector, but it "
                             "made the namespace's vectors with %zu"
                           : "query: the embedder (%.100s) makes %zu floats but the namespace "
                             "has dim %zu; send an embedding",
                      mem_api__embedder_id(ctx), dim, s->dim);
        return;
    }
    float *v = mem_api__palloc(&st->pool, dim * sizeof(float));
    if (!v) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    memcpy(v, vecs, dim * sizeof(float));
    if (mem_vec_normalize(v, dim) != 0) {
        mem_api__fail(resp, MEM_EEMBED, "query",
                      "query: the embedder (%.100s) answered a zero vector",
                      mem_api__embedder_id(ctx));
        return;
    }
    in->q.scan.query = v;
    in->q.q_dim = dim;
    run_scan(ctx, st->ns, s, in, resp);
}
