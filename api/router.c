/* router.c - method + raw path -> handler; content type; finish and teardown
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Paths are matched on the raw, still percent-encoded path split at '/'. A
 * namespace is checked against its name rule on those raw bytes, so "%2F", "." and ".."
 * can never name one. A segment id is percent-decoded (ids may hold any byte but NUL).
 * Order of checks: unknown path 404, wrong method 405 (with Allow), bad name 400,
 * Content-Type 415, then the handler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api_int.h"

int mem_api__check_ns(const char *name, size_t len, mem_err_t *err)
{
    if (len == 0) return mem_err_field(err, MEM_EINVAL, "namespace", "namespace: empty name");
    if (len > MEM_STORE_NS_MAX)
        return mem_err_field(err, MEM_EINVAL, "namespace", "namespace: longer than %d bytes",
                             MEM_STORE_NS_MAX);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || (i > 0 && (c == '.' || c == '-'));
        if (!ok)
            return mem_err_field(err, MEM_EINVAL, "namespace",
                                 "namespace: invalid name (use [A-Za-z0-9_][A-Za-z0-9_.-]{0,63})");
    }
    return MEM_OK;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decode s[0..len) into out (room for cap bytes + NUL). Length or -1. */
static long pct_decode(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= len || (hi = hexval(s[i + 1])) < 0 || (lo = hexval(s[i + 2])) < 0)
                return -1;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (c == '\0' || o >= cap) return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return (long)o;
}

static bool method_is(const char *m, const char *want)
{
    return m && strcmp(m, want) == 0;
}

int mem_api__route(const char *method, const char *path, mem_api__route_t *out, mem_err_t *err)
{
    memset(out, 0, sizeof(*out));
    if (!path) path = "";
    /* split into at most 6 parts */
    const char *part[6];
    size_t plen[6], n = 0;
    const char *p = path;
    if (*p != '/') goto notfound;
    while (*p == '/') {
        p++;
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (n == 6) goto notfound;
        part[n] = p;
        plen[n++] = l;
        p += l;
    }
#define PART_IS(i, s) (plen[i] == sizeof(s) - 1 && memcmp(part[i], s, sizeof(s) - 1) == 0)
    const char *allow;
    if (n == 1 && PART_IS(0, "healthz")) {
        out->kind = MEM_API_R_HEALTHZ, out->label = "healthz", allow = "GET";
    } else if (n == 1 && PART_IS(0, "openapi.json")) {
        out->kind = MEM_API_R_OPENAPI, out->label = "openapi", allow = "GET";
    } else if (n == 1 && PART_IS(0, "mcp")) {
        out->kind = MEM_API_R_MCP, out->label = "mcp", allow = "POST";
    } else if (n <= 2 && PART_IS(0, "console")) {
        /* a file name, matched as it is against the embedded ones (never a path) */
        if (n == 2 && plen[1] > MEM_STORE_ID_MAX) goto notfound;
        out->kind = MEM_API_R_CONSOLE, out->label = "console", allow = "GET";
        if (n == 2) memcpy(out->id, part[1], plen[1]);
    } else if (n >= 2 && PART_IS(0, "v1") && PART_IS(1, "namespaces")) {
        if (n == 2) {
            out->kind = MEM_API_R_NAMESPACES, out->label = "namespaces", allow = "GET";
        } else if (n == 3) {
            out->kind = MEM_API_R_NS, out->label = "namespace", allow = "GET, PUT, DELETE";
        } else if (n == 4 && PART_IS(3, "segments")) {
            out->kind = MEM_API_R_SEGMENTS, out->label = "segments", allow = "GET, POST";
        } else if (n == 5 && PART_IS(3, "segments")) {
            out->kind = MEM_API_R_SEGMENT, out->label = "segment", allow = "GET, PATCH, DELETE";
        } else if (n == 4 && PART_IS(3, "retrieve")) {
            out->kind = MEM_API_R_RETRIEVE, out->label = "retrieve", allow = "POST";
        } else if (n == 4 && PART_IS(3, "import")) {
            out->kind = MEM_API_R_IMPORT, out->label = "import", allow = "POST";
        } else if (n == 4 && PART_IS(3, "export")) {
            out->kind = MEM_API_R_EXPORT, out->label = "export", allow = "GET";
        } else if (n == 4 && PART_IS(3, "compact")) {
            out->kind = MEM_API_R_COMPACT, out->label = "compact", allow = "POST";
        } else {
            goto notfound;
        }
    } else {
        goto notfound;
    }
#undef PART_IS
    out->allow = allow;
    /* method: HEAD is not served (a JSON API); the allow list is exact */
    bool ok = false;
    const char *a = allow;
    size_t ml = method ? strlen(method) : 0;
    while (*a) {
        const char *e = strchr(a, ',');
        size_t l = e ? (size_t)(e - a) : strlen(a);
        if (ml && l == ml && memcmp(a, method, l) == 0) ok = true;
        a += l;
        while (*a == ',' || *a == ' ')
            a++;
    }
    if (!ok)
        return mem_err_set(err, MEM_EMETHOD, "method %s not allowed here; allowed: %s",
                           method && *method ? method : "(none)", allow);
    if ((out->kind >= MEM_API_R_NS && out->kind <= MEM_API_R_COMPACT) ||
        out->kind == MEM_API_R_EXPORT || out->kind == MEM_API_R_IMPORT) {
        int rc = mem_api__check_ns(part[2], plen[2], err);
        if (rc != MEM_OK) return rc;
        memcpy(out->ns, part[2], plen[2]);
        out->ns[plen[2]] = '\0';
    }
    if (out->kind == MEM_API_R_SEGMENT) {
        long l = pct_decode(part[4], plen[4], out->id, MEM_STORE_ID_MAX);
        if (l < 0)
            return mem_err_field(err, MEM_EINVAL, "id",
                                 "id: invalid percent-encoding, NUL byte or longer than %d bytes",
                                 MEM_STORE_ID_MAX);
        if (l == 0) return mem_err_field(err, MEM_EINVAL, "id", "id: empty");
    }
    return MEM_OK;
notfound:
    out->label = "unknown";
    return mem_err_set(err, MEM_ENOTFOUND, "no such endpoint: %.120s", path);
}

bool mem_api__json_media(const char *ct)
{
    if (!ct) return true;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t l = strcspn(ct, ";");
    while (l && (ct[l - 1] == ' ' || ct[l - 1] == '\t'))
        l--;
    return l == 16 && strncasecmp(ct, "application/json", 16) == 0;
}

/* Query string of GET segment: only embedding=true|false|1|0|base64. */
static int parse_query(const char *q, mem_api__emb_form_t *form, mem_err_t *err)
{
    *form = MEM_API_EMB_NONE;
    if (!q) return MEM_OK;
    while (*q) {
        size_t l = strcspn(q, "&");
        const char *eq = memchr(q, '=', l);
        size_t kl = eq ? (size_t)(eq - q) : l;
        const char *v = eq ? eq + 1 : q + l;
        size_t vl = (size_t)(q + l - v);
        if (kl == 9 && memcmp(q, "embedding", 9) == 0) {
            int rc = mem_api__decode_emb_form(eq ? v : NULL, vl, form, err);
            if (rc != MEM_OK) return rc;
        } else if (kl > 0) {
            return mem_err_field(err, MEM_EINVAL, "query", "unknown query parameter: %.*s",
                                 (int)(kl > 64 ? 64 : kl), q);
        }
        q += l;
        if (*q == '&') q++;
    }
    return MEM_OK;
}

static bool reject_query(const char *q, mem_api_resp_t *resp)
{
    if (!q || !*q) return false;
    size_t kl = strcspn(q, "=&");
    mem_api__fail(resp, MEM_EINVAL, "query", "unknown query parameter: %.*s",
                  (int)(kl > 64 ? 64 : kl), q);
    return true;
}

void mem_api_handle(const mem_api_ctx_t *ctx, const mem_api_req_t *req, mem_api_resp_t *resp)
{
    mem_api__route_t r;
    mem_err_t err;
    mem_err_clear(&err);
    resp->content_type = "application/json";
    mem_api__state_t *st = mem_api__state(resp);
    if (!st) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    st->t0_s = mem_api__mono_s();
    int rc = mem_api__route(req->method, req->path, &r, &err);
    snprintf(resp->route, sizeof(resp->route), "%s", r.label ? r.label : "unknown");
    if (rc != MEM_OK) {
        if (rc == MEM_EMETHOD) resp->allow = r.allow;
        mem_api_error(resp, &err);
        return;
    }
    if (r.kind == MEM_API_R_IMPORT) { /* the whole body at once: server/ streams it instead */
        mem_api_import_t *imp = mem_api_import_begin(ctx, req, resp);
        if (!imp) return;
        st->import = imp;
        mem_api_import_feed(imp, req->body, req->body_len);
        mem_api_import_end(imp, resp);
        return;
    }
    bool has_body = method_is(req->method, "POST") || method_is(req->method, "PUT") ||
                    method_is(req->method, "PATCH");
    if (has_body && !mem_api__json_media(req->content_type)) {
        mem_api__fail(resp, MEM_EMEDIA, NULL, "content type must be application/json, got %.100s",
                      req->content_type);
        return;
    }
    if (r.kind == MEM_API_R_MCP) {
        mem_api__mcp(ctx, req, resp);
        return;
    }
    if (r.kind == MEM_API_R_CONSOLE) {
        mem_api__console(r.id, resp);
        return;
    }
    if (r.kind == MEM_API_R_SEGMENT && method_is(req->method, "GET")) {
        mem_api__emb_form_t form;
        if ((rc = parse_query(req->query, &form, &err)) != MEM_OK) {
            mem_api_error(resp, &err);
            return;
        }
        mem_api__seg_get(ctx, r.ns, r.id, form, resp);
        return;
    }
    if (r.kind == MEM_API_R_SEGMENTS && method_is(req->method, "GET")) {
        mem_api__seg_list(ctx, r.ns, req->query, resp);
        return;
    }
    if (reject_query(req->query, resp)) return;
    json_t *root = NULL;
    /* PUT namespace accepts an empty body (default dimension). */
    if (has_body && !(r.kind == MEM_API_R_NS && req->body_len == 0)) {
        if ((rc = mem_api__parse_body(req->body, req->body_len, &root, &err)) != MEM_OK) {
            mem_api_error(resp, &err);
            return;
        }
    }
    switch (r.kind) {
    case MEM_API_R_HEALTHZ:
        mem_api__send_json(resp, 200, json_pack("{s:s}", "status", "ok"));
        break;
    case MEM_API_R_NAMESPACES:
        mem_api__ns_list(ctx, resp);
        break;
    case MEM_API_R_NS:
        if (method_is(req->method, "GET"))
            mem_api__ns_get(ctx, r.ns, resp);
        else if (method_is(req->method, "PUT"))
            mem_api__ns_create(ctx, r.ns, root, resp);
        else
            mem_api__ns_drop(ctx, r.ns, resp);
        break;
    case MEM_API_R_SEGMENTS:
        mem_api__seg_insert(ctx, r.ns, root, resp);
        break;
    case MEM_API_R_SEGMENT:
        if (method_is(req->method, "PATCH"))
            mem_api__seg_patch(ctx, r.ns, r.id, root, resp);
        else
            mem_api__seg_delete(ctx, r.ns, r.id, resp);
        break;
    case MEM_API_R_RETRIEVE:
        mem_api__retrieve(ctx, r.ns, root, resp);
        break;
    case MEM_API_R_COMPACT:
        mem_api__compact(ctx, r.ns, root, resp);
        break;
    case MEM_API_R_OPENAPI:
        mem_api__openapi(resp);
        break;
    case MEM_API_R_EXPORT:
        mem_api__export(ctx, r.ns, resp);
        break;
    case MEM_API_R_IMPORT:
        break;
    case MEM_API_R_MCP:
    case MEM_API_R_CONSOLE:
        break;
    }
    json_decref(root);
}

void mem_api_finish(const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    if (!st || !resp->pending) {
        mem_api__fail(resp, MEM_ESTORAGE, NULL, "internal error: nothing pending");
        return;
    }
    mem_api__finish_rest(ctx, resp);
    if (st->mcp) mem_api__mcp_wrap(resp);
}

void mem_api_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, const float *vecs, size_t dim,
                    const mem_err_t *err)
{
    mem_api__state_t *st = resp->_state;
    resp->embed = NULL;
    if (!st || st->wait == MEM_API_W_NONE) {
        mem_api__fail(resp, MEM_ESTORAGE, NULL, "internal error: nothing waits for embeddings");
        return;
    }
    mem_api__wait_kind_t wait = st->wait;
    st->wait = MEM_API_W_NONE;
    if (err && err->code != MEM_OK) {
        mem_api_error(resp, err);
    } else if (!vecs || dim == 0 || dim > MEM_API_MAX_DIM) {
        mem_api__fail(resp, MEM_EEMBED, NULL, "the embedder answered %zu floats per vector", dim);
    } else if (wait == MEM_API_W_INSERT) {
        mem_api__seg_insert_resume(ctx, resp, vecs, dim);
    } else if (wait == MEM_API_W_RETRIEVE) {
        mem_api__retrieve_resume(ctx, resp, vecs, dim);
    } else {
        mem_api__ns_create_resume(ctx, resp, dim);
    }
    if (st->mcp && !resp->pending) mem_api__mcp_wrap(resp);
}

void mem_api_resp_deinit(mem_api_resp_t *resp)
{
    if (!resp) return;
    mem_api_stream_free(resp->stream);
    resp->stream = NULL;
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    mem_api__state_t *st = resp->_state;
    if (st) {
        if (st->plan_ids) mem_store_ids_free(st->plan_ids, st->n_plan);
        mem_api_import_free(st->import);
        json_decref(st->rpc_id);
        mem_api__pool_free(&st->pool);
        free(st);
    }
    resp->_state = NULL;
    resp->pending = NULL; /* it lived in the pool */
    resp->embed = NULL;
}
