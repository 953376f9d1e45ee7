/* replicate.c - cluster mode glue between the HTTP layer and cluster/ (issue 7)
 * SPDX-License-Identifier: MIT
 */
#include "server/replicate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define MIN_SEQ_WAIT_MS 5000

static void answer(mem_api_resp_t *resp, int status, char *body, const char *route)
{
    resp->status = status;
    resp->body = body;
    resp->body_len = body ? strlen(body) : 0;
    resp->content_type = "application/json";
    snprintf(resp->route, sizeof(resp->route), "%s", route);
}

static void fail(mem_api_resp_t *resp, int code, const char *field, const char *msg)
{
    mem_err_t err;
    mem_err_clear(&err);
    if (field)
        mem_err_field(&err, code, field, "%s", msg);
    else
        mem_err_set(&err, code, "%s", msg);
    if (code == MEM_EBUSY) err.retry_after_s = 1;
    mem_api_error(resp, &err);
    if (code == MEM_EBUSY) resp->retry_after_s = 1;
    snprintf(resp->route, sizeof(resp->route), "cluster");
}

/* "/v1/namespaces/NAME[/...]": NAME (raw) into ns. */
static bool path_ns(const char *path, char *ns, size_t cap)
{
    static const char pre[] = "/v1/namespaces/";
    if (strncmp(path, pre, sizeof(pre) - 1) != 0) return false;
    const char *p = path + sizeof(pre) - 1, *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n == 0 || n >= cap) return false;
    memcpy(ns, p, n);
    ns[n] = '\0';
    return true;
}

static int parse_seq(const char *s, size_t n, unsigned long long *out)
{
    unsigned long long v = 0;
    if (n == 0 || n > 19) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (unsigned long long)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Take min_seq=N out of the query. 1 found, 0 absent, -1 invalid. */
static int query_min_seq(const char *q, char **rest, unsigned long long *seq)
{
    *rest = NULL;
    size_t len = strlen(q);
    char *out = malloc(len + 1);
    if (!out) return -1;
    size_t o = 0;
    int found = 0;
    for (const char *p = q; *p;) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        if (n >= 8 && strncmp(p, "min_seq=", 8) == 0) {
            if (parse_seq(p + 8, n - 8, seq) != 0) {
                free(out);
                return -1;
            }
            found = 1;
        } else if (n) {
            if (o) out[o++] = '&';
            memcpy(out + o, p, n);
            o += n;
        }
        p += n + (amp ? 1 : 0);
    }
    out[o] = '\0';
    *rest = out;
    return found;
}

/* Take "min_seq" out of a JSON object body. 1 found, 0 absent, -1 invalid. */
static int body_min_seq(const char *body, size_t len, char **rest, unsigned long long *seq)
{
    *rest = NULL;
    bool has = false;
    for (size_t i = 0; i + 9 <= len && !has; i++)
        has = body[i] == '"' && memcmp(body + i, "\"min_seq\"", 9) == 0;
    if (!has) return 0;
    json_t *root = json_loadb(body, len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return 0; /* api/ reports the malformed body */
    }
    json_t *v = json_object_get(root, "min_seq");
    if (!v) {
        json_decref(root);
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        json_decref(root);
        return -1;
    }
    *seq = (unsigned long long)json_integer_value(v);
    json_object_del(root, "min_seq");
    *rest = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return *rest ? 1 : -1;
}

bool mem_srv_repl_before(mem_cluster_t *cl, mem_api_req_t *req, char **owned_query,
                         char **owned_body, mem_api_resp_t *resp)
{
    if (strcmp(req->path, "/v1/cluster") == 0) {
        if (strcmp(req->method, "GET") != 0) {
            fail(resp, MEM_EMETHOD, NULL, "method not allowed on /v1/cluster (GET)");
            resp->allow = "GET";
            return true;
        }
        size_t len = 0;
        char *body = mem_cluster_status_json(cl, &len);
        if (!body)
            fail(resp, MEM_ENOMEM, NULL, "out of memory");
        else
            answer(resp, 200, body, "cluster");
        return true;
    }
    if (strcmp(req->path, "/v1/cluster/snapshot") == 0) {
        if (strcmp(req->method, "POST") != 0) {
            fail(resp, MEM_EMETHOD, NULL, "method not allowed on /v1/cluster/snapshot (POST)");
            resp->allow = "POST";
            return true;
        }
        bool trim = false;
        if (req->body_len) {
            json_error_t je;
            json_t *o = json_loadb(req->body, req->body_len, 0, &je);
            json_t *t = json_object_get(o, "trim");
            if (!json_is_object(o) || json_object_size(o) > (t ? 1u : 0u) ||
                (t && !json_is_boolean(t))) {
                json_decref(o);
                fail(resp, MEM_EINVAL, "trim", "body: {\"trim\": true|false} expected");
                return true;
            }
            trim = json_is_true(t);
            json_decref(o);
        }
        char *body = NULL;
        mem_err_t err;
        mem_err_clear(&err);
        if (mem_cluster_snapshot(cl, trim, &body, &err) != MEM_OK) {
            fail(resp, err.code ? err.code : MEM_EBUSY, NULL, err.msg);
            return true;
        }
        answer(resp, 200, body, "cluster");
        return true;
    }
    char ns[MEM_STORE_NS_MAX + 1];
    if (!path_ns(req->path, ns, sizeof(ns))) return false;
    unsigned long long seq = 0;
    int found = 0;
    if (req->query && strstr(req->query, "min_seq=")) {
        found = query_min_seq(req->query, owned_query, &seq);
        if (found < 0) {
            fail(resp, MEM_EINVAL, "min_seq", "min_seq: must be a non-negative integer");
            return true;
        }
        if (*owned_query) req->query = *owned_query;
    }
    if (!found && req->body_len && strcmp(req->method, "POST") == 0) {
        found = body_min_seq(req->body, req->body_len, owned_body, &seq);
        if (found < 0) {
            fail(resp, MEM_EINVAL, "min_seq", "min_seq: must be a non-negative integer");
            return true;
        }
        if (*owned_body) {
            req->body = *owned_body;
            req->body_len = strlen(*owned_body);
        }
    }
    if (found && mem_cluster_wait(cl, ns, seq, MIN_SEQ_WAIT_MS) != MEM_OK) {
        char msg[160];
        snprintf(msg, sizeof(msg), "this node has not applied the log up to min_seq %llu yet", seq);
        fail(resp, MEM_EBUSY, NULL, msg);
        return true;
    }
    return false;
}

void mem_srv_repl_write(mem_cluster_t *cl, const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_store_op_t *op = resp->pending;
    uint64_t log_seq = 0;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_cluster_write(cl, op, &log_seq, &err);
    if (rc == MEM_CLUSTER_CONFLICT) {
        json_t *o =
            json_pack("{s:{s:s,s:s}}", "error", "code", "write_conflict", "message", err.msg);
        char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        char route[sizeof(resp->route)];
        snprintf(route, sizeof(route), "%s", resp->route);
        answer(resp, 409, body, route);
        return;
    }
    mem_api_finish(ctx, resp);
    if (log_seq && resp->status >= 200 && resp->status < 300 && resp->body && resp->body_len >= 2 &&
        resp->body[0] == '{' && strcmp(resp->route, "mcp") != 0) {
        char pre[48];
        int n = snprintf(pre, sizeof(pre), "{\"log_seq\":%llu%s", (unsigned long long)log_seq,
                         resp->body[1] == '}' ? "" : ",");
        char *b = malloc(resp->body_len + (size_t)n);
        if (b) {
            memcpy(b, pre, (size_t)n);
            memcpy(b + n, resp->body + 1, resp->body_len - 1);
            free(resp->body);
            resp->body = b;
            resp->body_len = resp->body_len - 1 + (size_t)n;
        }
    }
}
