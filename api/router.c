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
    } else if (n == 1 && PART_IS(0, "metrics")) {
        out->kind = MEM_API_R_METRICS, out->label = "metrics", allow = "GET";
    } else if (n == 2 && PART_IS(0, "v1") && PART_IS(1, "cluster")) {
        out->kind = MEM_API_R_CLUSTER, out->label = "cluster", allow = "GET";
    } else if (n == 3 && PART_IS(0, "v1") && PART_IS(1, "cluster") && PART_IS(2, "snapshot")) {
        out->kind = MEM_API_R_CLUSTER_SNAPSHOT, out->label = "cluster", allow = "POST";
    } else if (n == 3 && PART_IS(0, "v1") && PART_IS(1, "cluster") && PART_IS(2, "move")) {
        out->kind = MEM_API_R_CLUSTER_MOVE, out->label = "cluster", allow = "POST";
    } else if (n == 4 && PART_IS(0, "v1") && PART_IS(1, "cluster") && PART_IS(2, "nodes")) {
        out->kind = MEM_API_R_CLUSTER_NODE, out->label = "cluster", allow = "DELETE";
    } else if (n == 5 && PART_IS(0, "v1") && PART_IS(1, "cluster") && PART_IS(2, "nodes") &&
               PART_IS(4, "drain")) {
        out->kind = MEM_API_R_CLUSTER_DRAIN, out->label = "cluster", allow = "POST";
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
        } else if (n == 4 && PART_IS(3, "compact")) {
            out->kind = MEM_API_R_COMPACT, out->label = "compact", allow = "POST";
        } else if (n == 4 && PART_IS(3, "import")) {
            out->kind = MEM_API_R_IMPORT, out->label = "import", allow = "POST";
        } else if (n == 4 && PART_IS(3, "export")) {
            out->kind = MEM_API_R_EXPORT, out->label = "export", allow = "GET";
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
    if (out->kind == MEM_API_R_CLUSTER_NODE || out->kind == MEM_API_R_CLUSTER_DRAIN) {
        bool valid = plen[3] > 0 && plen[3] < 64; /* a node id: [A-Za-z0-9_-]{1,63} */
        for (size_t i = 0; valid && i < plen[3]; i++) {
            char c = part[3][i];
            valid = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
        }
        if (!valid)
            return mem_err_field(err, MEM_EINVAL, "node",
                                 "node: a node id is 1 to 63 of A-Z a-z 0-9 _ -");
        memcpy(out->id, part[3], plen[3]);
        out->id[plen[3]] = '\0';
    }
    return MEM_OK;
notfound:
    out->label = "unknown";
    return mem_err_set(err, MEM_ENOTFOUND, "no such endpoint: %.120s", path);
}

bool mem_api__media_is(const char *ct, size_t len, const char *want)
{
    if (!ct) return false;
    while (len && (*ct == ' ' || *ct == '\t'))
        ct++, len--;
    const char *semi = memchr(ct, ';', len);
    size_t l = semi ? (size_t)(semi - ct) : len;
    while (l && (ct[l - 1] == ' ' || ct[l - 1] == '\t'))
        l--;
    return l == strlen(want) && strncasecmp(ct, want, l) == 0;
}

bool mem_api__json_media(const char *ct)
{
    return ct && mem_api__media_is(ct, strlen(ct), "application/json");
}

/* Query string of GET segment: only embedding=true|false|1|0|base64. */
static int parse_query(const char *q, mem_api__emb_form_t *form, mem_err_t *err)
{
    *form = MEM_API_EMB_NONE;
    if (!q) return MEM_OK;
    bool seen = false;
    while (*q) {
        size_t l = strcspn(q, "&");
        const char *eq = memchr(q, '=', l);
        size_t kl = eq ? (size_t)(eq - q) : l;
        const char *v = eq ? eq + 1 : q + l;
        size_t vl = (size_t)(q + l - v);
        if (kl == 9 && memcmp(q, "embedding", 9) == 0) {
            if (seen) return mem_err_field(err, MEM_EINVAL, "embedding", "embedding: given twice");
            seen = true;
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

/* ---- the request, step by step ---- */

static mem_api_next_t reply_err(mem_api_resp_t *resp, const mem_err_t *err)
{
    mem_api_error(resp, err);
    return MEM_API_REPLY;
}

/* The role a request needs (SPEC section 9); NONE: no key needed. */
static mem_cfg_role_t route_role(const mem_api__route_t *r, const char *method,
                                 const mem_api_ctx_t *ctx)
{
    switch (r->kind) {
    case MEM_API_R_HEALTHZ:
    case MEM_API_R_OPENAPI:
    case MEM_API_R_CONSOLE: /* static files: the page asks for a key for its /v1 calls */
        return MEM_CFG_ROLE_NONE;
    case MEM_API_R_METRICS:
        return mem_api__edge_metrics_public(ctx->edge) ? MEM_CFG_ROLE_NONE : MEM_CFG_ROLE_ADMIN;
    case MEM_API_R_CLUSTER:
    case MEM_API_R_CLUSTER_SNAPSHOT:
    case MEM_API_R_CLUSTER_MOVE:
    case MEM_API_R_CLUSTER_NODE:
    case MEM_API_R_CLUSTER_DRAIN:
    case MEM_API_R_COMPACT:
    case MEM_API_R_IMPORT:
        return MEM_CFG_ROLE_ADMIN;
    case MEM_API_R_EXPORT:
        return MEM_CFG_ROLE_READ;
    case MEM_API_R_NS:
        return method_is(method, "GET") ? MEM_CFG_ROLE_READ : MEM_CFG_ROLE_ADMIN;
    case MEM_API_R_SEGMENTS:
        return method_is(method, "GET") ? MEM_CFG_ROLE_READ : MEM_CFG_ROLE_WRITE;
    case MEM_API_R_SEGMENT:
        return method_is(method, "GET") ? MEM_CFG_ROLE_READ : MEM_CFG_ROLE_WRITE;
    case MEM_API_R_NAMESPACES:
    case MEM_API_R_RETRIEVE:
    case MEM_API_R_MCP: /* each tool call then needs its REST call's role */
        return MEM_CFG_ROLE_READ;
    }
    return MEM_CFG_ROLE_ADMIN;
}

static bool route_has_ns(const mem_api__route_t *r)
{
    return (r->kind >= MEM_API_R_NS && r->kind <= MEM_API_R_COMPACT) ||
           r->kind == MEM_API_R_EXPORT || r->kind == MEM_API_R_IMPORT;
}

/* Routes that read or write the store: 503 while it loads. */
static bool route_needs_store(const mem_api__route_t *r)
{
    return r->kind != MEM_API_R_HEALTHZ && r->kind != MEM_API_R_OPENAPI &&
           r->kind != MEM_API_R_METRICS && r->kind != MEM_API_R_CONSOLE;
}

/* Take min_seq=N out of the query into st (cluster mode). */
static int take_min_seq_query(mem_api__state_t *st, const char *q, mem_err_t *err)
{
    if (!q || !strstr(q, "min_seq=")) return MEM_OK;
    size_t len = strlen(q);
    char *rest = mem_api__palloc(&st->pool, len + 1);
    if (!rest) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    size_t o = 0;
    for (const char *p = q; *p;) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        if (n >= 8 && strncmp(p, "min_seq=", 8) == 0) {
            uint64_t v = 0;
            if (n == 8 || n > 8 + 19) goto bad;
            for (size_t i = 8; i < n; i++) {
                if (p[i] < '0' || p[i] > '9') goto bad;
                v = v * 10 + (uint64_t)(p[i] - '0');
            }
            st->min_seq = v;
            st->has_min_seq = true;
        } else if (n) {
            if (o) rest[o++] = '&';
            memcpy(rest + o, p, n);
            o += n;
        }
        p += n + (amp ? 1 : 0);
    }
    rest[o] = '\0';
    st->query = rest;
    return MEM_OK;
bad:
    return mem_err_field(err, MEM_EINVAL, "min_seq", "min_seq: must be a non-negative integer");
}

static mem_api_next_t health(const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    bool ok = ctx->store && !ctx->draining;
    const char *status = ok ? "ok" : ctx->draining ? "draining" : "loading";
    char why[256] = "";
    if (ok && ctx->hooks.cluster_healthy &&
        !ctx->hooks.cluster_healthy(ctx->hooks.ud, why, sizeof(why))) {
        /* cluster mode: a stale node (a namespace to bootstrap, far behind, NATS gone) */
        mem_api__send_json(resp, 503, json_pack("{s:s,s:s}", "status", "stale", "reason", why));
        resp->retry_after_s = 1;
        return MEM_API_REPLY;
    }
    mem_api__send_json(resp, ok ? 200 : 503, json_pack("{s:s}", "status", status));
    if (!ok) resp->retry_after_s = 1;
    return MEM_API_REPLY;
}

/* A body's Content-Encoding, when given, is identity; otherwise MEM_EMEDIA in err. */
static bool body_identity(const mem_api_req_t *req, mem_err_t *err)
{
    size_t len;
    const char *v = mem_api__req_header_value(req, "Content-Encoding", &len);
    if (!v || len == 0 || (len == 8 && strncasecmp(v, "identity", 8) == 0)) return true;
    mem_err_set(err, MEM_EMEDIA,
                "content encoding %.*s is not supported: send the body uncompressed",
                mem_api__utf8_prefix_n(v, len, 64), v);
    return false;
}

/* OPTIONS on a known path: a CORS preflight (or a plain OPTIONS), 204 with what is allowed. */
static mem_api_next_t options(mem_api__state_t *st, const mem_api_req_t *req, mem_api_resp_t *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    resp->status = 204;
    resp->content_type = NULL;
    resp->allow = st->route.allow;
    size_t len;
    const char *want = mem_api__req_header(req, "Access-Control-Request-Headers", &len);
    st->preflight = st->origin && mem_api__req_header(req, "Access-Control-Request-Method", NULL);
    if (st->preflight && want && len < 1024) {
        bool ok = true; /* echo a plain list of header names, anything else gets ours */
        for (size_t i = 0; i < len && ok; i++) {
            unsigned char c = (unsigned char)want[i];
            ok = c == ',' || c == ' ' || c == '-' || c == '_' || (c >= '0' && c <= '9') ||
                 (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        }
        if (ok && !(st->allow_headers = mem_api__pstrndup(&st->pool, want, len))) {
            mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
            return MEM_API_REPLY;
        }
    }
    return MEM_API_REPLY;
}

mem_api_next_t mem_api_begin(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                             mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    resp->content_type = "application/json";
    resp->max_body = ctx->cfg ? ctx->cfg->max_body : 0;
    mem_api__state_t *st = mem_api__state(resp);
    if (!st) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return MEM_API_REPLY;
    }
    st->store = ctx->store; /* as the loop thread sees it now */
    mem_api__route_t *r = &st->route;
    int rc = mem_api__route(req->method, req->path, r, &err);
    /* a single node has no cluster routes at all: 404 whatever the node id or method */
    if ((rc == MEM_OK || rc == MEM_EINVAL || rc == MEM_EMETHOD) && !ctx->hooks.cluster_status &&
        (r->kind == MEM_API_R_CLUSTER || r->kind == MEM_API_R_CLUSTER_SNAPSHOT ||
         r->kind == MEM_API_R_CLUSTER_MOVE || r->kind == MEM_API_R_CLUSTER_NODE ||
         r->kind == MEM_API_R_CLUSTER_DRAIN))
        rc = mem_err_set(&err, MEM_ENOTFOUND, "no such endpoint: %s (not in cluster mode)",
                         req->path);
    snprintf(resp->route, sizeof(resp->route), "%s", r->label ? r->label : "unknown");
    if (rc == MEM_OK && r->kind == MEM_API_R_HEALTHZ) return health(ctx, resp);
    const mem_api_edge_t *e = ctx->edge;
    if (e) {
        bool has_origin;
        if (mem_api__edge_host(e, req, &err) != MEM_OK) return reply_err(resp, &err);
        if (mem_api__edge_origin(e, req, &has_origin, &err) != MEM_OK) {
            st->vary_origin = true;
            return reply_err(resp, &err);
        }
        st->vary_origin = has_origin;
        if (has_origin) {
            size_t len;
            const char *o = mem_api__req_header(req, "Origin", &len);
            st->origin = mem_api__pstrndup(&st->pool, o, len);
            if (!st->origin) { /* err may hold the route's 405 for an OPTIONS */
                mem_err_set(&err, MEM_ENOMEM, "out of memory");
                return reply_err(resp, &err);
            }
        }
    }
    if (method_is(req->method, "OPTIONS") && (rc == MEM_OK || rc == MEM_EMETHOD) &&
        r->kind != MEM_API_R_HEALTHZ)
        return options(st, req, resp);
    if (rc != MEM_OK) {
        /* without a valid key, an unknown path or method is a 401 like any other (the key
         * comes before what the server has), except on the routes that need no key */
        mem_err_t kerr;
        mem_err_clear(&kerr);
        bool open_route = rc == MEM_EMETHOD && route_role(r, "GET", ctx) == MEM_CFG_ROLE_NONE;
        if (mem_api__edge_auth_on(e) && !open_route &&
            mem_api__edge_auth(e, req, &st->pool, &st->auth, &kerr) != MEM_OK)
            return reply_err(resp, &kerr);
        if (rc == MEM_EMETHOD) resp->allow = r->allow;
        return reply_err(resp, &err);
    }
    if (ctx->draining) {
        mem_err_set(&err, MEM_EBUSY, "the server is shutting down");
        err.retry_after_s = 1;
        return reply_err(resp, &err);
    }
    mem_cfg_role_t need = route_role(r, req->method, ctx);
    if (need != MEM_CFG_ROLE_NONE) {
        if (mem_api__edge_auth(e, req, &st->pool, &st->auth, &err) != MEM_OK)
            return reply_err(resp, &err);
        if (mem_api__auth_check(&st->auth, need, route_has_ns(r) ? r->ns : NULL, &err) != MEM_OK)
            return reply_err(resp, &err);
    } else {
        st->auth.open = true;
    }
    /* mnemod reads bodies as sent: a compressed one would reach the JSON parser as bytes and
     * come back as a misleading invalid_json, so any coding but identity is named here. */
    if ((req->body_expected || req->body_len > 0) && !body_identity(req, &err))
        return reply_err(resp, &err);
    /* An import's body is NDJSON, possibly gigabytes: its own checks (Content-Type
     * application/x-ndjson, no query) run here, before any of it. In cluster mode an import
     * is one log record, so server/ buffers its body like any other (max-body). */
    if (r->kind == MEM_API_R_IMPORT) {
        if (!mem_api_import_precheck(ctx, req, resp)) return MEM_API_REPLY;
        if (ctx->cfg)
            resp->max_body = ctx->cfg->nats_url[0] ? ctx->cfg->max_body : ctx->cfg->max_import_body;
    }
    /* A body must say it is JSON (SPEC section 9): a form or a text/plain page post is
     * refused before its body is read. An empty body needs no Content-Type. */
    if (r->kind != MEM_API_R_IMPORT && (req->body_expected || req->body_len > 0) &&
        !mem_api__json_media(req->content_type)) {
        if (req->content_type)
            mem_err_set(&err, MEM_EMEDIA, "content type must be application/json, got %.*s",
                        mem_api__utf8_prefix(req->content_type, 100), req->content_type);
        else
            mem_err_set(&err, MEM_EMEDIA, "a request body needs Content-Type: application/json");
        return reply_err(resp, &err);
    }
    if (!ctx->store && route_needs_store(r)) {
        mem_err_set(&err, MEM_EBUSY, "the store is still loading");
        err.retry_after_s = 1;
        return reply_err(resp, &err);
    }
    st->query = req->query;
    if (ctx->hooks.cluster_status && route_has_ns(r) &&
        take_min_seq_query(st, req->query, &err) != MEM_OK)
        return reply_err(resp, &err);
    st->phase = MEM_API__PH_BODY;
    return MEM_API_BODY;
}

/* POST /v1/cluster/snapshot: an optional {"trim": bool}. */
static mem_api_next_t cluster_snapshot(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                       mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    bool trim = false;
    if (req->body_len) {
        json_t *o = NULL;
        if (mem_api__parse_body(req->body, req->body_len, &o, &err) != MEM_OK)
            return reply_err(resp, &err);
        static const char *const K[] = {"trim", NULL};
        const json_t *t = json_object_get(o, "trim");
        if (mem_api__check_keys(o, K, "", &err) != MEM_OK || (t && !json_is_boolean(t))) {
            if (err.code == MEM_OK)
                mem_err_field(&err, MEM_EINVAL, "trim", "trim: expected true or false");
            json_decref(o);
            return reply_err(resp, &err);
        }
        trim = json_is_true(t);
        json_decref(o);
    }
    char *body = NULL;
    if (ctx->hooks.cluster_snapshot(ctx->hooks.ud, trim, &body, &err) != MEM_OK) {
        if (err.code == MEM_OK) err.code = MEM_EBUSY;
        if (err.code == MEM_EBUSY) err.retry_after_s = 1;
        return reply_err(resp, &err);
    }
    free(resp->body);
    resp->body = body;
    resp->body_len = body ? strlen(body) : 0;
    resp->status = 200;
    resp->content_type = "application/json";
    return MEM_API_REPLY;
}

static mem_api_next_t raw_text(mem_api_resp_t *resp, char *text, size_t len, const char *ctype)
{
    if (!text) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return MEM_API_REPLY;
    }
    free(resp->body);
    resp->body = text;
    resp->body_len = len;
    resp->status = 200;
    resp->content_type = ctype;
    return MEM_API_REPLY;
}

/* The handler proper (worker thread), with the body parsed into st->root where it has one. */
static mem_api_next_t run_handler(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                  mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    mem_api__route_t *r = &st->route;
    const char *method = req->method;
    switch (r->kind) {
    case MEM_API_R_HEALTHZ:
        return health(ctx, resp);
    case MEM_API_R_OPENAPI:
        mem_api__openapi(resp);
        return MEM_API_REPLY;
    case MEM_API_R_CONSOLE:
        mem_api__console(r->id, resp);
        return MEM_API_REPLY;
    case MEM_API_R_METRICS: {
        size_t len = 0;
        char *text = ctx->hooks.metrics ? ctx->hooks.metrics(ctx->hooks.ud, st->store, &len) : NULL;
        return raw_text(resp, text, len, "text/plain; version=0.0.4; charset=utf-8");
    }
    case MEM_API_R_CLUSTER: {
        size_t len = 0;
        char *json = ctx->hooks.cluster_status(ctx->hooks.ud, &len);
        return raw_text(resp, json, len, "application/json");
    }
    case MEM_API_R_CLUSTER_SNAPSHOT:
        return cluster_snapshot(ctx, req, resp);
    case MEM_API_R_CLUSTER_MOVE:
    case MEM_API_R_CLUSTER_NODE:
    case MEM_API_R_CLUSTER_DRAIN:
        return mem_api__cluster_admin(ctx, req, resp);
    case MEM_API_R_MCP:
        mem_api__mcp(ctx, req, resp);
        break;
    case MEM_API_R_NAMESPACES:
        mem_api__ns_list(ctx, resp);
        break;
    case MEM_API_R_NS:
        if (method_is(method, "GET"))
            mem_api__ns_get(ctx, r->ns, resp);
        else if (method_is(method, "PUT"))
            mem_api__ns_create(ctx, r->ns, st->root, resp);
        else
            mem_api__ns_drop(ctx, r->ns, resp);
        break;
    case MEM_API_R_SEGMENTS:
        if (method_is(method, "GET"))
            mem_api__seg_list(ctx, r->ns, st->query, resp);
        else
            mem_api__seg_insert(ctx, r->ns, st->root, resp);
        break;
    case MEM_API_R_SEGMENT:
        if (method_is(method, "GET")) {
            mem_api__emb_form_t form;
            mem_err_t err;
            mem_err_clear(&err);
            if (parse_query(st->query, &form, &err) != MEM_OK) return reply_err(resp, &err);
            mem_api__seg_get(ctx, r->ns, r->id, form, resp);
        } else if (method_is(method, "PATCH")) {
            mem_api__seg_patch(ctx, r->ns, r->id, st->root, resp);
        } else {
            mem_api__seg_delete(ctx, r->ns, r->id, resp);
        }
        break;
    case MEM_API_R_RETRIEVE:
        mem_api__retrieve(ctx, r->ns, st->root, resp);
        break;
    case MEM_API_R_COMPACT:
        mem_api__compact(ctx, r->ns, st->root, resp);
        break;
    case MEM_API_R_EXPORT: { /* embedding=true (the default) or base64 */
        mem_api__emb_form_t form = MEM_API_EMB_ARRAY;
        mem_err_t err;
        mem_err_clear(&err);
        if (st->query && *st->query && parse_query(st->query, &form, &err) != MEM_OK)
            return reply_err(resp, &err);
        if (form == MEM_API_EMB_NONE) {
            mem_err_field(&err, MEM_EINVAL, "embedding",
                          "embedding: an export always carries the vectors (true or base64)");
            return reply_err(resp, &err);
        }
        mem_api__export(ctx, r->ns, form, resp);
        break;
    }
    case MEM_API_R_IMPORT: { /* the whole body at once (tests): server/ streams it instead */
        mem_api_import_t *imp = mem_api_import_begin(ctx, req, resp);
        if (!imp) return MEM_API_REPLY;
        st->import = imp;
        mem_api_import_feed(imp, req->body, req->body_len);
        mem_api_import_end(imp, resp);
        break;
    }
    }
    return mem_api_next_of(resp);
}

/* The body is in: parse it (where the route takes one), take a cluster-mode min_seq out of
 * it, then wait for that or run the handler. */
static mem_api_next_t body_in(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                              mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    mem_api__route_t *r = &st->route;
    mem_api_body_complete(resp); /* unless the caller did (mem_api_handle does not) */
    mem_err_t err;
    mem_err_clear(&err);
    bool takes_json = route_has_ns(r) && r->kind != MEM_API_R_IMPORT &&
                      (method_is(req->method, "POST") || method_is(req->method, "PUT") ||
                       method_is(req->method, "PATCH"));
    /* a query string only where one is read (SPEC section 3: unknown parameters are 400) */
    bool query_ok = ((r->kind == MEM_API_R_SEGMENT || r->kind == MEM_API_R_SEGMENTS) &&
                     method_is(req->method, "GET")) ||
                    r->kind == MEM_API_R_EXPORT /* embedding= */ || r->kind == MEM_API_R_MCP ||
                    r->kind == MEM_API_R_METRICS || r->kind == MEM_API_R_HEALTHZ ||
                    r->kind == MEM_API_R_CONSOLE ||
                    r->kind == MEM_API_R_IMPORT /* the import checks its own */;
    if (!query_ok && reject_query(st->query, resp)) return MEM_API_REPLY;
    /* PUT namespace accepts an empty body (default dimension). */
    if (takes_json && !(r->kind == MEM_API_R_NS && req->body_len == 0)) {
        if (mem_api__parse_body(req->body, req->body_len, &st->root, &err) != MEM_OK)
            return reply_err(resp, &err);
        json_t *ms = ctx->hooks.cluster_status ? json_object_get(st->root, "min_seq") : NULL;
        if (ms) {
            if (!json_is_integer(ms) || json_integer_value(ms) < 0) {
                mem_err_field(&err, MEM_EINVAL, "min_seq",
                              "min_seq: must be a non-negative integer");
                return reply_err(resp, &err);
            }
            st->min_seq = (uint64_t)json_integer_value(ms);
            st->has_min_seq = true;
            json_object_del(st->root, "min_seq");
        }
    }
    if (st->has_min_seq && ctx->hooks.cluster_status) {
        snprintf(resp->wait_ns, sizeof(resp->wait_ns), "%s", r->ns);
        resp->wait_seq = st->min_seq;
        st->phase = MEM_API__PH_WAITED;
        return MEM_API_WAIT;
    }
    return run_handler(ctx, req, resp);
}

void mem_api_body_complete(mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    if (!st || st->t0_set) return;
    st->t0_s = mem_api__mono_s();
    st->t0_set = true;
}

mem_api_next_t mem_api_work(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                            mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    if (!st) {
        mem_api__fail(resp, MEM_ESTORAGE, NULL, "internal error: request not begun");
        return MEM_API_REPLY;
    }
    switch (st->phase) {
    case MEM_API__PH_BODY:
        return body_in(ctx, req, resp);
    case MEM_API__PH_WAITED:
        st->phase = MEM_API__PH_BODY;
        return run_handler(ctx, req, resp);
    case MEM_API__PH_PENDING:
        st->phase = MEM_API__PH_DONE;
        if (!resp->pending) {
            mem_api__fail(resp, MEM_ESTORAGE, NULL, "internal error: nothing pending");
            return MEM_API_REPLY;
        }
        mem_api__finish_rest(ctx, resp);
        if (st->mcp) mem_api__mcp_wrap(resp);
        return MEM_API_REPLY;
    case MEM_API__PH_BEGUN:
    case MEM_API__PH_DONE:
        break;
    }
    mem_api__fail(resp, MEM_ESTORAGE, NULL, "internal error: no step to run");
    return MEM_API_REPLY;
}

bool mem_api_ack_small(const mem_api_resp_t *resp)
{
    const mem_api__state_t *st = resp->_state;
    const mem_store_op_t *op = resp->pending;
    if (!st || !op || st->phase != MEM_API__PH_PENDING) return false;
    if (op->rc != MEM_OK) return true; /* an error: one message */
    switch (st->kind) {
    case MEM_API_P_NS_CREATE:
    case MEM_API_P_NS_DROP:
    case MEM_API_P_DELETE:
    case MEM_API_P_IMPORT:
        return true;
    case MEM_API_P_INSERT:
        return op->n_segs <= MEM_API_ACK_INLINE_SEGMENTS;
    case MEM_API_P_PATCH:   /* reads the patched segment back from the file */
    case MEM_API_P_COMPACT: /* lists every evicted id */
    case MEM_API_P_NONE:
        break;
    }
    return false;
}

/* The first WORK step run on the event loop with storage's _try calls (see
 * mem_api_work_inline); a step that gave up is undone so that a worker runs it whole. */
static mem_api_next_t work_try(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                               mem_api_resp_t *resp, size_t work_budget, mem_api_inline_t *why)
{
    mem_api__state_t *st = resp->_state;
    st->inline_try = true;
    st->inline_budget = work_budget;
    st->inline_why = MEM_API_INLINE_ANSWERED;
    mem_api_next_t next = body_in(ctx, req, resp);
    st->inline_try = false;
    *why = st->inline_why;
    if (*why == MEM_API_INLINE_ANSWERED) return next;
    /* gave up before answering: the worker starts the step again from the body */
    json_decref(st->root);
    st->root = NULL;
    st->ns_exists = false;
    st->phase = MEM_API__PH_BODY;
    return MEM_API_WORK;
}

mem_api_next_t mem_api_work_inline(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                   mem_api_resp_t *resp, size_t work_budget, mem_api_inline_t *why)
{
    mem_api__state_t *st = resp->_state;
    *why = MEM_API_INLINE_ROUTE;
    bool read = st && (st->route.kind == MEM_API_R_RETRIEVE ||
                       (st->route.kind == MEM_API_R_SEGMENT && method_is(req->method, "GET")));
    if (!read || st->phase != MEM_API__PH_BODY || ctx->hooks.cluster_status || !st->store ||
        work_budget == 0)
        return MEM_API_WORK;
    return work_try(ctx, req, resp, work_budget, why);
}

mem_api_next_t mem_api_write_inline(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                    mem_api_resp_t *resp, mem_api_inline_t *why)
{
    mem_api__state_t *st = resp->_state;
    *why = MEM_API_INLINE_ROUTE;
    bool insert = st && st->route.kind == MEM_API_R_SEGMENTS && method_is(req->method, "POST");
    if (!insert || st->phase != MEM_API__PH_BODY || ctx->hooks.cluster_status || !st->store)
        return MEM_API_WORK;
    return work_try(ctx, req, resp, 0, why);
}

mem_api_next_t mem_api_next_of(mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    if (resp->embed) return MEM_API_EMBED;
    if (resp->pending && st) {
        st->phase = MEM_API__PH_PENDING;
        return MEM_API_WRITE;
    }
    return MEM_API_REPLY;
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
    if (resp->pending) st->phase = MEM_API__PH_PENDING; /* mem_api_finish is next */
}

void mem_api_wait_failed(mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_set(&err, MEM_EBUSY, "this node has not applied the log up to min_seq %llu yet",
                (unsigned long long)resp->wait_seq);
    err.retry_after_s = 1;
    mem_api_error(resp, &err);
}

void mem_api_handle(const mem_api_ctx_t *ctx, const mem_api_req_t *req, mem_api_resp_t *resp)
{
    mem_api_next_t next = mem_api_begin(ctx, req, resp);
    while (next == MEM_API_BODY || next == MEM_API_WORK || next == MEM_API_WAIT)
        next = mem_api_work(ctx, req, resp);
    /* REPLY, WRITE (resp->pending) or EMBED (resp->embed): the caller's to go on with */
}

void mem_api_finish(const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    if (!st || st->phase != MEM_API__PH_PENDING) {
        mem_api__fail(resp, MEM_ESTORAGE, NULL, "internal error: nothing pending");
        return;
    }
    mem_api_work(ctx, NULL, resp);
}

size_t mem_api_resp_headers(const mem_api_resp_t *resp, mem_api_header_t *out, size_t max)
{
    const mem_api__state_t *st = resp->_state;
    size_t n = 0;
#define ADD(k, v)                                                                                  \
    do {                                                                                           \
        if (n < max)                                                                               \
            out[n++] = (mem_api_header_t){                                                         \
                .name = k, .name_len = sizeof(k) - 1, .value = v, .value_len = strlen(v)};         \
    } while (0)
    if (!st) return 0;
    if (st->vary_origin) ADD("Vary", "Origin");
    if (st->origin && resp->status != 403) {
        ADD("Access-Control-Allow-Origin", st->origin);
        ADD("Access-Control-Expose-Headers", "Retry-After, X-Request-Id, Mcp-Session-Id, "
                                             "WWW-Authenticate");
        if (st->preflight) {
            ADD("Access-Control-Allow-Methods", st->route.allow ? st->route.allow : "GET");
            ADD("Access-Control-Allow-Headers",
                st->allow_headers ? st->allow_headers
                                  : "Authorization, Content-Type, X-Request-Id, Mcp-Session-Id, "
                                    "Mcp-Protocol-Version, Last-Event-ID");
            ADD("Access-Control-Max-Age", "600");
        }
    }
#undef ADD
    return n;
}

void mem_api_resp_deinit(mem_api_resp_t *resp)
{
    if (!resp) return;
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    mem_api_stream_free(resp->stream);
    resp->stream = NULL;
    mem_api__state_t *st = resp->_state;
    if (st) {
        if (st->plan_ids) mem_store_ids_free(st->plan_ids, st->n_plan);
        mem_api_import_free(st->import);
        mem_store_prep_free(st->prep);
        json_decref(st->rpc_id);
        json_decref(st->root);
        mem_api__pool_free(&st->pool);
        free(st);
    }
    resp->_state = NULL;
    resp->pending = NULL; /* it lived in the pool */
    resp->embed = NULL;
}
