/* cluster.c - the API's cluster-mode pieces: the admin routes that move namespaces and
 * nodes, and what a request acts on (mem_api_target) for server/ to route it
 * SPDX-License-Identifier: MIT
 *
 * The work itself is server/'s (the hooks); this file decodes the bodies and says, from the
 * route the router found, which namespace a request belongs to, so that the routing
 * decision of the cluster is taken from the one router and never from a second parser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/api_int.h"

static mem_api_next_t admin_answer(mem_api_resp_t *resp, int rc, char *body, mem_err_t *err)
{
    if (rc != MEM_OK) {
        free(body);
        if (err->code == MEM_OK) err->code = rc ? rc : MEM_EBUSY;
        if (err->code == MEM_EBUSY && err->retry_after_s <= 0) err->retry_after_s = 1;
        mem_api_error(resp, err);
        return MEM_API_REPLY;
    }
    free(resp->body);
    resp->body = body;
    resp->body_len = body ? strlen(body) : 0;
    resp->status = 200;
    resp->content_type = "application/json";
    return MEM_API_REPLY;
}

/* The optional JSON object body of an admin route; NULL with *out unset when empty. */
static int admin_body(const mem_api_req_t *req, json_t **out, mem_err_t *err)
{
    *out = NULL;
    if (!req->body_len) return MEM_OK;
    return mem_api__parse_body(req->body, req->body_len, out, err);
}

/* A string member of o: NULL (err set) when missing or not a string. */
static const char *admin_str(const json_t *o, const char *key, mem_err_t *err)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_string(v) && json_string_length(v) > 0 && json_string_length(v) < 256)
        return json_string_value(v);
    mem_err_field(err, MEM_EINVAL, key, "%s: expected a non-empty string", key);
    return NULL;
}

static int admin_move(const mem_api_hooks_t *h, const json_t *in, char **body, mem_err_t *err)
{
    static const char *const K[] = {"namespace", "from", "to", NULL};
    if (!in)
        return mem_err_set(err, MEM_EINVAL,
                           "body: {\"namespace\": NAME, \"from\": NODE, \"to\": NODE} expected");
    int rc = mem_api__check_keys(in, K, "", err);
    if (rc != MEM_OK) return rc;
    const char *ns = admin_str(in, "namespace", err);
    if (!ns) return err->code;
    const char *from = admin_str(in, "from", err);
    if (!from) return err->code;
    const char *to = admin_str(in, "to", err);
    if (!to) return err->code;
    rc = mem_api__check_ns(ns, strlen(ns), err);
    if (rc != MEM_OK) return rc;
    return h->cluster_move(h->ud, ns, from, to, body, err);
}

static int admin_drain(const mem_api_hooks_t *h, const char *node, const json_t *in, char **body,
                       mem_err_t *err)
{
    static const char *const K[] = {"drain", NULL};
    if (in) {
        int rc = mem_api__check_keys(in, K, "", err);
        if (rc != MEM_OK) return rc;
    }
    const json_t *d = json_object_get(in, "drain");
    if (d && !json_is_boolean(d))
        return mem_err_field(err, MEM_EINVAL, "drain", "drain: expected true or false");
    return h->cluster_drain(h->ud, node, !d || json_is_true(d), body, err);
}

mem_api_next_t mem_api__cluster_admin(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                      mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    const mem_api__route_t *r = &st->route;
    const mem_api_hooks_t *h = &ctx->hooks;
    mem_err_t err;
    mem_err_clear(&err);
    json_t *in = NULL;
    char *body = NULL;
    int rc = admin_body(req, &in, &err);
    if (rc == MEM_OK && (!h->cluster_move || !h->cluster_drain || !h->cluster_forget))
        rc = mem_err_set(&err, MEM_ENOTFOUND, "no such endpoint: %s (not in cluster mode)",
                         req->path);
    else if (rc == MEM_OK && r->kind == MEM_API_R_CLUSTER_MOVE)
        rc = admin_move(h, in, &body, &err);
    else if (rc == MEM_OK && r->kind == MEM_API_R_CLUSTER_DRAIN)
        rc = admin_drain(h, r->id, in, &body, &err);
    else if (rc == MEM_OK && in) /* DELETE /v1/cluster/nodes/{node} */
        rc = mem_err_set(&err, MEM_EINVAL, "body: this route takes none");
    else if (rc == MEM_OK)
        rc = h->cluster_forget(h->ud, r->id, &body, &err);
    json_decref(in);
    return admin_answer(resp, rc, body, &err);
}

/* MCP: the namespace a tools/call acts on ("default" when it names none). */
static void mcp_target(const mem_api_req_t *req, mem_api_target_t *out)
{
    /* our parser, not json_loadb: jansson's can write past a string it is reading when an
     * allocation fails (the closing quote is dropped and the copy runs on) */
    json_t *o = NULL;
    if (mem_api__json_parse(req->body, req->body_len, NULL, NULL, &o, NULL) == MEM_ENOMEM) {
        out->rc = MEM_ENOMEM; /* where it goes is unknown: not served here by default */
        return;
    }
    const char *method = json_string_value(json_object_get(o, "method"));
    if (method && strcmp(method, "tools/call") == 0) {
        const json_t *params = json_object_get(o, "params");
        const char *tool = json_string_value(json_object_get(params, "name"));
        const json_t *v = json_object_get(json_object_get(params, "arguments"), "namespace");
        const char *name = json_is_string(v) ? json_string_value(v) : v ? NULL : "default";
        mem_err_t err;
        if (tool && name && mem_api__check_ns(name, strlen(name), &err) == MEM_OK) {
            snprintf(out->ns, sizeof(out->ns), "%s", name);
            out->scope = MEM_API_SCOPE_NS;
            out->create = strcmp(tool, "memory_insert") == 0;
            out->write = out->create || strcmp(tool, "memory_compact") == 0 ||
                         strcmp(tool, "memory_forget") == 0;
        }
    }
    json_decref(o); /* anything else: this node answers (and reports what is wrong) */
}

void mem_api_target(const mem_api_req_t *req, const mem_api_resp_t *resp, mem_api_target_t *out)
{
    memset(out, 0, sizeof(*out));
    out->scope = MEM_API_SCOPE_NODE;
    const mem_api__state_t *st = resp->_state;
    if (!st || st->phase != MEM_API__PH_BODY) return; /* answered already, or not begun */
    const mem_api__route_t *r = &st->route;
    const char *m = req->method ? req->method : "";
    bool get = strcmp(m, "GET") == 0;
    switch (r->kind) {
    case MEM_API_R_NAMESPACES:
        out->scope = MEM_API_SCOPE_LIST;
        return;
    case MEM_API_R_MCP:
        mcp_target(req, out);
        return;
    case MEM_API_R_NS:
        out->create = strcmp(m, "PUT") == 0;
        out->write = !get;
        break;
    case MEM_API_R_SEGMENTS:
        out->create = out->write = !get;
        break;
    case MEM_API_R_SEGMENT:
        out->write = !get;
        break;
    case MEM_API_R_RETRIEVE:
    case MEM_API_R_EXPORT:
        break;
    case MEM_API_R_COMPACT:
        out->write = true;
        break;
    case MEM_API_R_IMPORT:
        out->create = out->write = true;
        break;
    default:
        return;
    }
    snprintf(out->ns, sizeof(out->ns), "%s", r->ns);
    out->scope = MEM_API_SCOPE_NS;
}

/* ---- GET /v1/namespaces across nodes ---- */

static bool listing_body(mem_api_resp_t *resp, json_t *o)
{
    /* our writer: jansson's json_dumps drops a key's text when an allocation fails there
     * and returns the rest as if whole */
    char *body = o ? mem_api__dump(o) : NULL;
    if (!body) return false;
    free(resp->body);
    resp->body = body;
    resp->body_len = strlen(body);
    resp->content_type = "application/json";
    return true;
}

/* A listing that cannot be made whole is an error, never a shorter list. */
static int listing_fail(mem_api_resp_t *resp, int code, const char *msg)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_err_set(&err, code, "%s", msg);
    if (code == MEM_EBUSY) err.retry_after_s = 1;
    resp->allow = NULL;
    mem_api_error(resp, &err);
    return code;
}

int mem_api_listing_filter(mem_api_resp_t *resp,
                           bool (*live_pos)(void *ud, const char *name, uint64_t *pos), void *ud)
{
    if (resp->status != 200 || !resp->body) return MEM_OK;
    json_t *o = NULL; /* ours: a failure is no memory */
    mem_api__json_parse(resp->body, resp->body_len, NULL, NULL, &o, NULL);
    json_t *arr = json_object_get(o, "namespaces");
    if (o && !json_is_array(arr)) {
        json_decref(o);
        return MEM_OK;
    }
    json_t *keep = o ? json_array() : NULL, *v;
    bool ok = keep != NULL;
    size_t i;
    json_array_foreach(arr, i, v)
    {
        if (!ok) break;
        const char *name = json_string_value(json_object_get(v, "name"));
        uint64_t pos = 0;
        if (!name || !live_pos(ud, name, &pos)) continue;
        ok = json_object_set_new(v, "log_seq", json_integer((json_int_t)pos)) == 0 &&
             json_array_append(keep, v) == 0;
    }
    if (ok) {
        ok = json_object_set_new(o, "namespaces", keep) == 0; /* takes keep, even on failure */
        keep = NULL;
    }
    json_decref(keep);
    ok = ok && listing_body(resp, o);
    json_decref(o);
    return ok ? MEM_OK : listing_fail(resp, MEM_ENOMEM, "out of memory");
}

static int cmp_name(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "name"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "name"));
    return strcmp(x ? x : "", y ? y : "");
}

int mem_api_listing_merge(mem_api_resp_t *resp, char *const *bodies, const size_t *lens, size_t n)
{
    if (resp->status != 200) return MEM_OK; /* the local error (auth, method) is the answer */
    json_t *seen = json_object();
    int rc = seen ? MEM_OK : MEM_ENOMEM;
    for (size_t s = 0; s <= n && rc == MEM_OK; s++) {
        const char *b = s == 0 ? resp->body : bodies[s - 1];
        size_t l = s == 0 ? resp->body_len : lens[s - 1];
        /* our parser: jansson's reports some failed allocations as a syntax error (and a
         * node's listing is not unreadable for want of memory here) */
        json_t *o = NULL, *v;
        int prc = b ? mem_api__json_parse(b, l, NULL, NULL, &o, NULL) : MEM_EBUSY;
        json_t *arr = json_object_get(o, "namespaces");
        if (!json_is_array(arr)) {
            rc = prc == MEM_ENOMEM ? MEM_ENOMEM : MEM_EBUSY; /* no answer, or not a listing */
            json_decref(o);
            break;
        }
        size_t i;
        json_array_foreach(arr, i, v)
        {
            const char *name = json_string_value(json_object_get(v, "name"));
            if (!name) continue;
            json_int_t pos = json_integer_value(json_object_get(v, "log_seq"));
            json_t *prev = json_object_get(seen, name);
            if (prev && json_integer_value(json_object_get(prev, "log_seq")) >= pos) continue;
            if (json_object_set(seen, name, v) != 0) {
                rc = MEM_ENOMEM;
                break;
            }
        }
        json_decref(o);
    }
    size_t cnt = json_object_size(seen), k = 0;
    json_t **items = rc == MEM_OK ? malloc((cnt ? cnt : 1) * sizeof(*items)) : NULL;
    json_t *sorted = items ? json_array() : NULL;
    if (rc == MEM_OK && !sorted) rc = MEM_ENOMEM;
    if (rc == MEM_OK) {
        const char *key;
        json_t *v;
        json_object_foreach(seen, key, v)
        {
            items[k++] = v;
        }
        qsort(items, k, sizeof(*items), cmp_name);
        for (size_t i = 0; i < k && rc == MEM_OK; i++)
            if (json_array_append(sorted, items[i]) != 0) rc = MEM_ENOMEM;
        json_t *out = rc == MEM_OK ? json_pack("{s:O}", "namespaces", sorted) : NULL;
        if (rc == MEM_OK && !listing_body(resp, out)) rc = MEM_ENOMEM;
        json_decref(out);
    }
    free(items);
    json_decref(sorted);
    json_decref(seen);
    if (rc == MEM_EBUSY)
        return listing_fail(resp, rc,
                            "namespace listing incomplete: a node's listing could not "
                            "be read");
    return rc == MEM_OK ? MEM_OK : listing_fail(resp, rc, "out of memory");
}
