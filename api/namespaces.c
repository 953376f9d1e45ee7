/* namespaces.c - list, stats, create and drop namespaces (SPEC section 3)
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/api_int.h"

void mem_api__ns_list(const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_ns_stats_t *list = NULL;
    size_t n = 0;
    int rc = mem_store_ns_list_exact(ctx->store, &list, &n, &err); /* graph stats are exact */
    if (rc != MEM_OK) {
        mem_api__fail_call(resp, rc, &err);
        return;
    }
    const mem_api__state_t *st = resp->_state;
    json_t *o = json_object(), *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        /* a scoped key sees the namespaces its globs cover, nothing else */
        if (mem_api__auth_allows(st ? &st->auth : NULL, MEM_CFG_ROLE_READ, list[i].name) &&
            json_array_append_new(arr, mem_api__enc_stats(&list[i]))) {
            json_decref(arr);
            arr = NULL;
        }
    free(list);
    if (o && arr && json_object_set_new(o, "namespaces", arr) == 0) {
        mem_api__send_json(resp, 200, o);
        return;
    }
    if (!o) json_decref(arr);
    json_decref(o);
    mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
}

void mem_api__ns_get(const mem_api_ctx_t *ctx, const char *ns, mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_ns_stats_t s; /* graph_edges and max_degree: exact, after the graph caught up */
    int rc = mem_store_ns_stats_exact(ctx->store, ns, &s, &err);
    if (rc != MEM_OK) {
        mem_api__fail_call(resp, rc, &err);
        return;
    }
    mem_api__send_json(resp, 200, mem_api__enc_stats(&s));
}

void mem_api__ns_create(const mem_api_ctx_t *ctx, const char *ns, const json_t *root,
                        mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    size_t dim;
    bool coherence;
    int rc = mem_api__decode_ns_create(ctx, root, &dim, &coherence, &err);
    if (rc != MEM_OK) {
        mem_api_error(resp, &err);
        return;
    }
    if (dim == 0) { /* a provider whose dimension is not known yet: ask it */
        static const char *const probe[] = {"dimension probe"};
        static const size_t probe_len[] = {15};
        mem_api__state_t *st = mem_api__handler_begin(ctx, resp, NULL, NULL, NULL);
        if (!st) return;
        snprintf(st->ns, sizeof(st->ns), "%s", ns);
        st->no_graph = !coherence;
        st->wait = MEM_API_W_NS_CREATE;
        st->embed = (mem_api_embed_t){.texts = probe, .lens = probe_len, .n = 1};
        resp->embed = &st->embed;
        return;
    }
    mem_store_op_t *op =
        mem_api__new_op(ctx, resp, MEM_API_P_NS_CREATE, MEM_STORE_OP_NS_CREATE, ns);
    if (!op) return;
    op->dim = dim;
    op->no_graph = !coherence;
    resp->pending = op;
}

void mem_api__ns_create_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, size_t dim)
{
    mem_api__state_t *st = resp->_state;
    mem_store_op_t *op =
        mem_api__new_op(ctx, resp, MEM_API_P_NS_CREATE, MEM_STORE_OP_NS_CREATE, st->ns);
    if (!op) return;
    op->dim = dim;
    op->no_graph = st->no_graph;
    resp->pending = op;
}

void mem_api__ns_drop(const mem_api_ctx_t *ctx, const char *ns, mem_api_resp_t *resp)
{
    mem_store_op_t *op = mem_api__new_op(ctx, resp, MEM_API_P_NS_DROP, MEM_STORE_OP_NS_DROP, ns);
    if (op) resp->pending = op;
}
