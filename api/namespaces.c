/* namespaces.c - list, stats, create and drop namespaces (SPEC section 3)
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/api_int.h"

static void store_fail(mem_api_resp_t *resp, int rc, mem_err_t *err)
{
    if (err->code == MEM_OK) err->code = rc;
    mem_api_error(resp, err);
}

void mem_api__ns_list(const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_store_ns_stats_t *list = NULL;
    size_t n = 0;
    int rc = mem_store_ns_list_exact(ctx->store, &list, &n, &err); /* graph stats are exact */
    if (rc != MEM_OK) {
        store_fail(resp, rc, &err);
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
        store_fail(resp, rc, &err);
        return;
    }
    mem_api__send_json(resp, 200, mem_api__enc_stats(&s));
}

static mem_store_op_t *new_op(const mem_api_ctx_t *ctx, mem_api_resp_t *resp,
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
        mem_api__state_t *st = mem_api__state(resp);
        if (!st) {
            mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
            return;
        }
        snprintf(st->ns, sizeof(st->ns), "%s", ns);
        st->no_graph = !coherence;
        st->wait = MEM_API_W_NS_CREATE;
        st->embed = (mem_api_embed_t){.texts = probe, .lens = probe_len, .n = 1};
        resp->embed = &st->embed;
        return;
    }
    mem_store_op_t *op = new_op(ctx, resp, MEM_API_P_NS_CREATE, MEM_STORE_OP_NS_CREATE, ns);
    if (!op) return;
    op->dim = dim;
    op->no_graph = !coherence;
    resp->pending = op;
}

void mem_api__ns_create_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, size_t dim)
{
    mem_api__state_t *st = resp->_state;
    mem_store_op_t *op = new_op(ctx, resp, MEM_API_P_NS_CREATE, MEM_STORE_OP_NS_CREATE, st->ns);
    if (!op) return;
    op->dim = dim;
    op->no_graph = st->no_graph;
    resp->pending = op;
}

void mem_api__ns_drop(const mem_api_ctx_t *ctx, const char *ns, mem_api_resp_t *resp)
{
    mem_store_op_t *op = new_op(ctx, resp, MEM_API_P_NS_DROP, MEM_STORE_OP_NS_DROP, ns);
    if (op) resp->pending = op;
}

mem_store_op_t *mem_api__new_op(const mem_api_ctx_t *ctx, mem_api_resp_t *resp,
                                mem_api__pending_kind_t kind, mem_store_op_kind_t op_kind,
                                const char *ns)
{
    return new_op(ctx, resp, kind, op_kind, ns);
}

void mem_api__finish_rest(const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    mem_store_op_t *op = resp->pending;
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
