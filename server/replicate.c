/* replicate.c - cluster mode: routing each request to the nodes holding its namespace
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A request is classified by its path: a namespace route (/v1/namespaces/{ns}...,
 * or an MCP tools/call naming a namespace), the namespace listing, the cluster routes
 * (/v1/cluster...), or anything else (served here). For a namespace, cluster/ says where
 * it goes from its in-memory map: here, to a holder (relayed on the loop by forward.c,
 * with the caller's Authorization and request id, and min_seq left in the request for the
 * holder to honour), or, when the map has no entry yet, to a worker that reads (or, for a
 * creating write, makes) the entry in JetStream and routes again. A relayed request that
 * could not even be sent goes to the next holder; one answered 421 (the holder's map
 * differs: a move just switched) is routed again after a fresh read of the entry.
 *
 * Served here: min_seq is cut out of the query or the body text (jsoncut.c: every other
 * byte is left for api/ to judge), a read that asks for a position not reached yet waits
 * on a worker (at most MIN_SEQ_WAIT_MS), then the caller serves the request as in
 * single-node mode; its write comes back through mem_srv_repl_write, handed to cluster/
 * from the loop and answered from cluster/'s callback through an async handle: no pool
 * thread waits for NATS.
 *
 * GET /v1/namespaces asks every other live node for its own list (a relayed listing
 * answers with the namespaces live on that node only) and merges them with this node's.
 */
#include "server/replicate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cluster/jsoncut.h"
#include "server/forward.h"

#define MIN_SEQ_WAIT_MS 5000
#define MAX_HOPS        3 /* route attempts of one request (next holder, fresh map) */
#define MAX_PEERS       64

struct mem_srv_repl {
    uv_loop_t *loop;
    mem_cluster_t *cl;
    const mem_api_ctx_t *api;
    const mem_cfg_t *cfg;
    mem_srv_fwd_t *fwd;
    uv_async_t async;
    pthread_mutex_t mu;
    struct wreq *done_head; /* mu: writes answered on a cluster thread */
};

enum kind { K_LOCAL, K_NS, K_LIST, K_ADMIN };
enum work { W_WAIT, W_RESOLVE, W_ADMIN, W_LIST_LOCAL, W_MERGE };

typedef struct rreq {
    mem_srv_repl_t *rp;
    mem_api_req_t req; /* query and body may point to own_query / own_body */
    char *own_query, *own_body;
    mem_api_resp_t *resp;
    mem_srv_repl_local_fn local;
    mem_srv_repl_done_fn done;
    void *ud;
    bool waited_ok; /* W_WAIT: min_seq reached */
    char auth[1024];
    char req_id[64];
    bool has_auth, forwarded;
    int kind;
    char ns[MEM_STORE_NS_MAX + 1];
    bool write, create;
    bool has_min_seq;
    uint64_t min_seq;
    uv_work_t work;
    int work_kind;
    int resolve_rc;
    mem_err_t resolve_err;
    char addr[300], avoid[300];
    int hops;
    /* listing */
    size_t n_peers, n_answers;
    char *bodies[MAX_PEERS + 1];
    size_t lens[MAX_PEERS + 1];
    bool local_done;
    struct rreq *next_done;
} rreq_t;

/* A write handed over by mem_srv_repl_write. */
typedef struct wreq {
    struct mem_srv_repl *rp;
    mem_api_resp_t *resp;
    mem_srv_repl_done_fn done;
    void *ud;
    struct wreq *next_done;
} wreq_t;

typedef struct peer_call {
    rreq_t *r;
    size_t slot;
} peer_call_t;

static void route(rreq_t *r);
static void queue(rreq_t *r, int kind);

/* ---- answers ---- */

static void rreq_free(rreq_t *r)
{
    free(r->own_query);
    free(r->own_body);
    for (size_t i = 0; i <= MAX_PEERS; i++)
        free(r->bodies[i]);
    free(r);
}

static void finish(rreq_t *r)
{
    r->done(r->ud);
    rreq_free(r);
}

/* Served here: the caller takes over (with the min_seq-free query and body). */
static void go_local(rreq_t *r)
{
    char *q = r->own_query, *b = r->own_body;
    size_t blen = r->req.body_len;
    r->own_query = r->own_body = NULL;
    mem_srv_repl_local_fn local = r->local;
    void *ud = r->ud;
    rreq_free(r);
    local(ud, q, b, blen);
}

static void set_body(mem_api_resp_t *resp, int status, char *body, const char *route)
{
    mem_api_resp_deinit(resp);
    memset(resp, 0, sizeof(*resp));
    resp->status = status;
    resp->body = body;
    resp->body_len = body ? strlen(body) : 0;
    resp->content_type = "application/json";
    snprintf(resp->route, sizeof(resp->route), "%s", route);
}

static void fail(rreq_t *r, int code, const char *field, const char *msg)
{
    mem_err_t err;
    mem_err_clear(&err);
    if (field)
        mem_err_field(&err, code, field, "%s", msg);
    else
        mem_err_set(&err, code, "%s", msg);
    if (code == MEM_EBUSY) err.retry_after_s = 1;
    mem_api_resp_deinit(r->resp);
    memset(r->resp, 0, sizeof(*r->resp));
    mem_api_error(r->resp, &err);
    if (code == MEM_EBUSY) r->resp->retry_after_s = 1;
    snprintf(r->resp->route, sizeof(r->resp->route), "cluster");
}

static void answer_code(rreq_t *r, int status, const char *code, const char *msg)
{
    json_t *o = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    set_body(r->resp, status, body, "cluster");
}

/* ---- classification ---- */

static bool ns_name_ok(const char *p, size_t n)
{
    if (n == 0 || n > MEM_STORE_NS_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || (i > 0 && (c == '.' || c == '-'));
        if (!ok) return false;
    }
    return true;
}

/* MCP: the namespace a tools/call acts on ("default" when absent), and whether it writes. */
static bool mcp_namespace(const char *body, size_t len, char *ns, size_t cap, bool *write,
                          bool *create)
{
    json_t *o = json_loadb(body, len, 0, NULL);
    bool found = false;
    const char *method = json_string_value(json_object_get(o, "method"));
    if (method && strcmp(method, "tools/call") == 0) {
        json_t *params = json_object_get(o, "params");
        const char *tool = json_string_value(json_object_get(params, "name"));
        json_t *args = json_object_get(params, "arguments");
        json_t *v = json_object_get(args, "namespace");
        const char *name = json_is_string(v) ? json_string_value(v) : v ? NULL : "default";
        if (tool && name && ns_name_ok(name, strlen(name))) {
            snprintf(ns, cap, "%s", name);
            *write = strcmp(tool, "memory_retrieve") != 0;
            *create = strcmp(tool, "memory_insert") == 0;
            found = true;
        }
    }
    json_decref(o);
    return found;
}

static void classify(rreq_t *r)
{
    const char *path = r->req.path, *m = r->req.method;
    static const char pre[] = "/v1/namespaces";
    r->kind = K_LOCAL;
    if (strcmp(path, "/v1/cluster") == 0 || strncmp(path, "/v1/cluster/", 12) == 0) {
        r->kind = K_ADMIN;
        return;
    }
    if (strcmp(path, "/mcp") == 0 && strcmp(m, "POST") == 0) {
        if (mcp_namespace(r->req.body, r->req.body_len, r->ns, sizeof(r->ns), &r->write,
                          &r->create))
            r->kind = K_NS; /* memory_insert may create its namespace */
        return;
    }
    if (strncmp(path, pre, sizeof(pre) - 1) != 0) return;
    const char *p = path + sizeof(pre) - 1;
    if (*p == '\0') {
        if (strcmp(m, "GET") == 0) r->kind = K_LIST;
        return;
    }
    if (*p != '/') return;
    p++;
    const char *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (!ns_name_ok(p, n)) return; /* api/ answers 400 */
    memcpy(r->ns, p, n);
    r->ns[n] = '\0';
    r->kind = K_NS;
    const char *rest = e ? e : "";
    bool post = strcmp(m, "POST") == 0;
    r->write = strcmp(m, "GET") != 0 && !(post && strcmp(rest, "/retrieve") == 0);
    r->create = (strcmp(m, "PUT") == 0 && !*rest) ||
                (post && (strcmp(rest, "/segments") == 0 || strcmp(rest, "/import") == 0));
}

/* Take min_seq out of the query ("min_seq=N") or a POST body; false: answered 400. */
static bool take_min_seq(rreq_t *r)
{
    const char *q = r->req.query ? r->req.query : "";
    if (strstr(q, "min_seq=")) {
        size_t len = strlen(q);
        char *out = malloc(len + 1);
        if (!out) {
            fail(r, MEM_ENOMEM, NULL, "out of memory");
            return false;
        }
        size_t o = 0;
        for (const char *p = q; *p;) {
            const char *amp = strchr(p, '&');
            size_t n = amp ? (size_t)(amp - p) : strlen(p);
            if (n >= 8 && strncmp(p, "min_seq=", 8) == 0) {
                if (r->has_min_seq || mem_cluster_json_u64(p + 8, n - 8, &r->min_seq) != 0) {
                    free(out);
                    fail(r, MEM_EINVAL, "min_seq", "min_seq: must be one non-negative integer");
                    return false;
                }
                r->has_min_seq = true;
            } else if (n) {
                if (o) out[o++] = '&';
                memcpy(out + o, p, n);
                o += n;
            }
            p += n + (amp ? 1 : 0);
        }
        out[o] = '\0';
        r->own_query = out;
        r->req.query = out;
    }
    if (!r->has_min_seq && r->req.body_len && strcmp(r->req.method, "POST") == 0) {
        char *out = malloc(r->req.body_len);
        if (!out) {
            fail(r, MEM_ENOMEM, NULL, "out of memory");
            return false;
        }
        size_t out_len = 0, voff = 0, vlen = 0;
        int f = mem_cluster_json_cut(r->req.body, r->req.body_len, "min_seq", out, &out_len, &voff,
                                     &vlen);
        if (f == MEM_CLUSTER_JSON_DUPLICATE ||
            (f == MEM_CLUSTER_JSON_FOUND &&
             mem_cluster_json_u64(r->req.body + voff, vlen, &r->min_seq) != 0)) {
            free(out);
            fail(r, MEM_EINVAL, "min_seq", "min_seq: must be one non-negative integer");
            return false;
        }
        if (f == MEM_CLUSTER_JSON_FOUND) {
            r->has_min_seq = true;
            r->own_body = out;
            r->req.body = out;
            r->req.body_len = out_len;
        } else {
            free(out);
        }
    }
    return true;
}

/* ---- writes ---- */

static void add_log_seq(mem_api_resp_t *resp, uint64_t log_seq)
{
    if (!log_seq || resp->status < 200 || resp->status >= 300 || !resp->body ||
        resp->body_len < 2 || resp->body[0] != '{' || strcmp(resp->route, "mcp") == 0)
        return;
    char pre[48];
    int n = snprintf(pre, sizeof(pre), "{\"log_seq\":%llu%s", (unsigned long long)log_seq,
                     resp->body[1] == '}' ? "" : ",");
    char *b = malloc(resp->body_len + (size_t)n);
    if (!b) return;
    memcpy(b, pre, (size_t)n);
    memcpy(b + n, resp->body + 1, resp->body_len - 1);
    free(resp->body);
    resp->body = b;
    resp->body_len = resp->body_len - 1 + (size_t)n;
}

/* A cluster or store thread: the replicated write is answered. */
static void on_written(mem_store_op_t *op, int rc, uint64_t log_seq, const mem_err_t *err, void *ud)
{
    wreq_t *r = ud;
    mem_srv_repl_t *rp = r->rp;
    if (rc == MEM_CLUSTER_CONFLICT) {
        char route[sizeof(r->resp->route)];
        snprintf(route, sizeof(route), "%s", r->resp->route);
        json_t *o =
            json_pack("{s:{s:s,s:s}}", "error", "code", "write_conflict", "message", err->msg);
        char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        set_body(r->resp, 409, body, route);
    } else {
        mem_api_finish(rp->api, r->resp);
        add_log_seq(r->resp, log_seq);
    }
    pthread_mutex_lock(&rp->mu);
    r->next_done = rp->done_head;
    rp->done_head = r;
    pthread_mutex_unlock(&rp->mu);
    uv_async_send(&rp->async);
}

static void on_async(uv_async_t *h)
{
    mem_srv_repl_t *rp = h->data;
    pthread_mutex_lock(&rp->mu);
    wreq_t *list = rp->done_head;
    rp->done_head = NULL;
    pthread_mutex_unlock(&rp->mu);
    while (list) {
        wreq_t *r = list;
        list = r->next_done;
        r->done(r->ud);
        free(r);
    }
}

int mem_srv_repl_write(mem_srv_repl_t *rp, mem_api_resp_t *resp, mem_srv_repl_done_fn done,
                       void *ud)
{
    mem_err_t err;
    mem_err_clear(&err);
    wreq_t *r = calloc(1, sizeof(*r));
    int rc = r ? MEM_OK : mem_err_set(&err, MEM_ENOMEM, "out of memory");
    if (r) {
        r->rp = rp;
        r->resp = resp;
        r->done = done;
        r->ud = ud;
        rc = mem_cluster_write(rp->cl, resp->pending, on_written, r, &err);
        if (rc == MEM_OK) return 0;
        free(r);
    }
    char route[sizeof(resp->route)];
    snprintf(route, sizeof(route), "%s", resp->route);
    mem_api_resp_deinit(resp);
    memset(resp, 0, sizeof(*resp));
    mem_api_error(resp, &err);
    if (rc == MEM_EBUSY) resp->retry_after_s = err.retry_after_s ? err.retry_after_s : 1;
    snprintf(resp->route, sizeof(resp->route), "%s", route[0] ? route : "cluster");
    return -1;
}

/* ---- relaying ---- */

static const char *static_ctype(const char *ct)
{
    if (strncmp(ct, "application/x-ndjson", 20) == 0) return "application/x-ndjson";
    if (strncmp(ct, "text/plain", 10) == 0) return "text/plain; charset=utf-8";
    return "application/json";
}

static void on_forwarded(void *ud, mem_srv_fwd_res_t *res)
{
    rreq_t *r = ud;
    if (res->status == 0) {
        if (!res->sent && r->hops < MAX_HOPS) { /* never reached it: the next holder */
            snprintf(r->avoid, sizeof(r->avoid), "%s", r->addr);
            route(r);
            return;
        }
        char msg[400];
        snprintf(msg, sizeof(msg),
                 "the node holding namespace %s (%.100s) did not answer: %.100s%s", r->ns, r->addr,
                 res->error, r->write ? "; the write may have been applied: retry it" : "");
        fail(r, MEM_EBUSY, NULL, msg);
        finish(r);
        return;
    }
    if (res->status == 421 && r->hops < MAX_HOPS) { /* its map differs: read ours afresh */
        r->create = false;
        queue(r, W_RESOLVE);
        return;
    }
    mem_api_resp_t *resp = r->resp;
    mem_api_resp_deinit(resp);
    memset(resp, 0, sizeof(*resp));
    resp->status = res->status;
    resp->body = res->body;
    resp->body_len = res->body_len;
    res->body = NULL;
    resp->content_type = res->content_type[0] ? static_ctype(res->content_type) : NULL;
    resp->retry_after_s = res->retry_after_s;
    if (res->allow[0]) { /* Allow values are fixed strings in api/: keep ours static */
        static const char *const known[] = {
            "GET", "POST", "GET, PUT, DELETE", "GET, DELETE", "GET, PATCH, DELETE", "DELETE"};
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            if (strcmp(res->allow, known[i]) == 0) resp->allow = known[i];
    }
    snprintf(resp->route, sizeof(resp->route), "forwarded");
    finish(r);
}

static void forward(rreq_t *r)
{
    mem_srv_fwd_req_t q = {
        .addr = r->addr,
        .method = r->req.method,
        .path = r->req.path,
        .query = r->req.query,
        .content_type = r->req.content_type,
        .authorization = r->has_auth ? r->auth : NULL,
        .request_id = r->req_id[0] ? r->req_id : NULL,
        .forwarded_by = r->rp->cfg->node_id,
        .body = r->req.body,
        .body_len = r->req.body_len,
        .timeout_ms = (int)(r->rp->cfg->forward_timeout_s * 1000.0),
    };
    if (mem_srv_fwd_start(r->rp->fwd, &q, on_forwarded, r) != 0) {
        fail(r, MEM_ENOMEM, NULL, "out of memory");
        finish(r);
    }
}

/* ---- work on the pool ---- */

static int admin(rreq_t *r)
{
    mem_cluster_t *cl = r->rp->cl;
    const char *path = r->req.path, *m = r->req.method;
    mem_err_t err;
    mem_err_clear(&err);
    char *body = NULL;
    int rc = MEM_OK;
    json_t *in = NULL;
    if (r->req.body_len) {
        in = json_loadb(r->req.body, r->req.body_len, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(in)) {
            json_decref(in);
            fail(r, MEM_EINVAL, NULL, "body: a JSON object expected");
            return 0;
        }
    }
#define ALLOW(method)                                                                              \
    do {                                                                                           \
        if (strcmp(m, method) != 0) {                                                              \
            fail(r, MEM_EMETHOD, NULL, "method not allowed here; allowed: " method);               \
            r->resp->allow = method;                                                               \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
    if (strcmp(path, "/v1/cluster") == 0) {
        ALLOW("GET");
        size_t len = 0;
        body = mem_cluster_status_json(cl, &len);
        rc = body ? MEM_OK : mem_err_set(&err, MEM_ENOMEM, "out of memory");
    } else if (strcmp(path, "/v1/cluster/snapshot") == 0) {
        ALLOW("POST");
        json_t *t = json_object_get(in, "trim");
        if (in && (json_object_size(in) > (t ? 1u : 0u) || (t && !json_is_boolean(t)))) {
            fail(r, MEM_EINVAL, "trim", "body: {\"trim\": true|false} expected");
            goto out;
        }
        rc = mem_cluster_snapshot(cl, json_is_true(t), &body, &err);
    } else if (strcmp(path, "/v1/cluster/move") == 0) {
        ALLOW("POST");
        const char *ns = json_string_value(json_object_get(in, "namespace"));
        const char *from = json_string_value(json_object_get(in, "from"));
        const char *to = json_string_value(json_object_get(in, "to"));
        if (!ns || !from || !to || json_object_size(in) != 3) {
            fail(r, MEM_EINVAL, NULL,
                 "body: {\"namespace\": NAME, \"from\": NODE, \"to\": NODE} expected");
            goto out;
        }
        rc = mem_cluster_move(cl, ns, from, to, &body, &err);
    } else if (strncmp(path, "/v1/cluster/nodes/", 18) == 0) {
        char id[64];
        const char *p = path + 18, *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        bool drain = e && strcmp(e, "/drain") == 0;
        if (n == 0 || n >= sizeof(id) || (e && !drain)) {
            fail(r, MEM_ENOTFOUND, NULL, "no such cluster route");
            goto out;
        }
        memcpy(id, p, n);
        id[n] = '\0';
        if (drain) {
            ALLOW("POST");
            json_t *d = json_object_get(in, "drain");
            if (in && (json_object_size(in) > (d ? 1u : 0u) || (d && !json_is_boolean(d)))) {
                fail(r, MEM_EINVAL, "drain", "body: {\"drain\": true|false} expected");
                goto out;
            }
            rc = mem_cluster_drain(cl, id, !d || json_is_true(d), &body, &err);
        } else {
            ALLOW("DELETE");
            rc = mem_cluster_forget_node(cl, id, &body, &err);
        }
    } else {
        fail(r, MEM_ENOTFOUND, NULL, "no such cluster route");
        goto out;
    }
#undef ALLOW
    if (rc == MEM_OK)
        set_body(r->resp, 200, body, "cluster");
    else {
        free(body);
        fail(r, err.code ? err.code : rc, err.field[0] ? err.field : NULL, err.msg);
    }
out:
    json_decref(in);
    return 0;
}

/* Keep only the namespaces live on this node in a {"namespaces": [...]} answer, each with
 * its position here ("log_seq": the merge keeps the freshest copy's figures, and a client
 * may pass it as min_seq). */
static void filter_local(rreq_t *r)
{
    mem_api_resp_t *resp = r->resp;
    if (resp->status != 200 || !resp->body) return;
    json_t *o = json_loadb(resp->body, resp->body_len, 0, NULL);
    json_t *arr = json_object_get(o, "namespaces");
    if (!json_is_array(arr)) {
        json_decref(o);
        return;
    }
    json_t *keep = json_array(), *v;
    size_t i;
    json_array_foreach(arr, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        uint64_t pos = name ? mem_cluster_position(r->rp->cl, name) : 0;
        if (!pos && !(name && mem_cluster_serves(r->rp->cl, name))) continue;
        json_object_set_new(v, "log_seq", json_integer((json_int_t)pos));
        json_array_append(keep, v);
    }
    json_object_set_new(o, "namespaces", keep);
    char *body = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!body) return;
    free(resp->body);
    resp->body = body;
    resp->body_len = strlen(body);
}

static int cmp_name(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "name"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "name"));
    return strcmp(x ? x : "", y ? y : "");
}

/* Merge the local answer (r->resp) with the peers' (r->bodies): one entry per name, from
 * the copy applied furthest (holders may lag each other by a few records). */
static void merge(rreq_t *r)
{
    mem_api_resp_t *resp = r->resp;
    if (resp->status != 200) return; /* the local error (auth, method) is the answer */
    json_t *seen = json_object(), *all = json_array();
    for (size_t s = 0; s <= r->n_peers; s++) {
        const char *b = s == 0 ? resp->body : r->bodies[s];
        size_t l = s == 0 ? resp->body_len : r->lens[s];
        if (!b) continue;
        json_t *o = json_loadb(b, l, 0, NULL), *v;
        json_t *arr = json_object_get(o, "namespaces");
        size_t i;
        json_array_foreach(arr, i, v)
        {
            const char *name = json_string_value(json_object_get(v, "name"));
            if (!name) continue;
            json_int_t pos = json_integer_value(json_object_get(v, "log_seq"));
            json_t *prev = json_object_get(seen, name);
            if (prev && json_integer_value(json_object_get(prev, "log_seq")) >= pos) continue;
            json_object_set(seen, name, v);
        }
        json_decref(o);
    }
    const char *key;
    json_t *v;
    json_object_foreach(seen, key, v)
    {
        json_array_append(all, v);
    }
    size_t n = json_array_size(all);
    json_t **items = malloc((n ? n : 1) * sizeof(*items));
    json_t *sorted = json_array();
    if (items) {
        for (size_t i = 0; i < n; i++)
            items[i] = json_array_get(all, i);
        qsort(items, n, sizeof(*items), cmp_name);
        for (size_t i = 0; i < n; i++)
            json_array_append(sorted, items[i]);
        free(items);
    }
    json_t *out = json_pack("{s:o}", "namespaces", sorted);
    char *body = out ? json_dumps(out, JSON_COMPACT) : NULL;
    json_decref(out);
    json_decref(all);
    json_decref(seen);
    if (body) set_body(resp, 200, body, "namespaces");
}

static void work_cb(uv_work_t *w)
{
    rreq_t *r = w->data;
    mem_srv_repl_t *rp = r->rp;
    switch (r->work_kind) {
    case W_RESOLVE:
        mem_err_clear(&r->resolve_err);
        r->resolve_rc =
            mem_cluster_resolve(rp->cl, r->ns, r->create && !r->forwarded, &r->resolve_err);
        return;
    case W_ADMIN:
        admin(r);
        return;
    case W_MERGE:
        merge(r);
        return;
    case W_LIST_LOCAL:
        mem_api_handle(rp->api, &r->req, r->resp);
        filter_local(r);
        return;
    case W_WAIT:
        r->waited_ok = mem_cluster_wait(rp->cl, r->ns, r->min_seq, MIN_SEQ_WAIT_MS) == MEM_OK;
        return;
    }
}

static void list_step(rreq_t *r)
{
    if (!r->local_done || r->n_answers < r->n_peers) return;
    if (r->forwarded || r->n_peers == 0) {
        finish(r);
        return;
    }
    queue(r, W_MERGE);
}

static void after_work(uv_work_t *w, int status)
{
    rreq_t *r = w->data;
    switch (r->work_kind) {
    case W_RESOLVE:
        r->hops++;
        if (r->resolve_rc == MEM_OK) {
            route(r);
        } else if (r->resolve_rc == MEM_ENOTFOUND) {
            if (r->forwarded) {
                answer_code(r, 421, "misdirected",
                            "this node does not hold the namespace (placement changed)");
                finish(r);
            } else if (r->write && !r->create) { /* nothing to delete or compact anywhere */
                char msg[120];
                snprintf(msg, sizeof(msg), "namespace not found: %s", r->ns);
                fail(r, MEM_ENOTFOUND, NULL, msg);
                finish(r);
            } else {
                go_local(r); /* no such namespace anywhere: api/ answers here (404); r is gone */
            }
        } else {
            fail(r, r->resolve_rc, NULL, r->resolve_err.msg);
            finish(r);
        }
        return;
    case W_LIST_LOCAL:
        r->local_done = true;
        list_step(r);
        return;
    case W_WAIT:
        if (r->waited_ok) {
            go_local(r);
            return;
        }
        char msg[160];
        snprintf(msg, sizeof(msg), "this node has not applied namespace %s up to min_seq %llu yet",
                 r->ns, (unsigned long long)r->min_seq);
        fail(r, MEM_EBUSY, NULL, msg);
        finish(r);
        return;
    default:
        finish(r);
        return;
    }
}

static void queue(rreq_t *r, int kind)
{
    r->work_kind = kind;
    r->work.data = r;
    int rc = uv_queue_work(r->rp->loop, &r->work, work_cb, after_work);
    if (rc != 0) {
        char msg[160];
        snprintf(msg, sizeof(msg), "could not queue the request: %s", uv_strerror(rc));
        fail(r, MEM_EBUSY, NULL, msg);
        finish(r);
    }
}

/* ---- routing ---- */

static void route(rreq_t *r)
{
    char why[200] = "";
    mem_cluster_route_t where =
        mem_cluster_route(r->rp->cl, r->ns, r->write, r->forwarded, r->avoid, r->addr,
                          sizeof(r->addr), why, sizeof(why));
    if (r->hops >= MAX_HOPS && where != MEM_CLUSTER_LOCAL) {
        fail(r, MEM_EBUSY, NULL, why[0] ? why : "the namespace's placement keeps changing");
        finish(r);
        return;
    }
    switch (where) {
    case MEM_CLUSTER_LOCAL:
        if (!take_min_seq(r)) {
            finish(r);
            return;
        }
        if (r->has_min_seq && !mem_cluster_reached(r->rp->cl, r->ns, r->min_seq))
            queue(r, W_WAIT);
        else
            go_local(r);
        return;
    case MEM_CLUSTER_FORWARD:
        r->hops++;
        forward(r);
        return;
    case MEM_CLUSTER_RESOLVE:
        queue(r, W_RESOLVE);
        return;
    case MEM_CLUSTER_MISDIRECTED:
        answer_code(r, 421, "misdirected", why);
        finish(r);
        return;
    case MEM_CLUSTER_UNAVAILABLE:
        fail(r, MEM_EBUSY, NULL, why);
        finish(r);
        return;
    }
}

static void on_peer_list(void *ud, mem_srv_fwd_res_t *res)
{
    peer_call_t *pc = ud;
    rreq_t *r = pc->r;
    if (res->status == 200) {
        r->bodies[pc->slot] = res->body;
        r->lens[pc->slot] = res->body_len;
        res->body = NULL;
    }
    free(pc);
    r->n_answers++;
    list_step(r);
}

static void list_all(rreq_t *r)
{
    char(*addrs)[300] = malloc(MAX_PEERS * sizeof(*addrs));
    size_t n = addrs && !r->forwarded ? mem_cluster_peers(r->rp->cl, addrs, MAX_PEERS) : 0;
    for (size_t i = 0; i < n; i++) {
        peer_call_t *pc = malloc(sizeof(*pc));
        if (!pc) break;
        pc->r = r;
        pc->slot = r->n_peers + 1;
        mem_srv_fwd_req_t q = {
            .addr = addrs[i],
            .method = "GET",
            .path = r->req.path,
            .query = r->req.query,
            .authorization = r->has_auth ? r->auth : NULL,
            .request_id = r->req_id[0] ? r->req_id : NULL,
            .forwarded_by = r->rp->cfg->node_id,
            .timeout_ms = (int)(r->rp->cfg->forward_timeout_s * 1000.0),
        };
        if (mem_srv_fwd_start(r->rp->fwd, &q, on_peer_list, pc) != 0) {
            free(pc);
            break;
        }
        r->n_peers++;
    }
    free(addrs);
    queue(r, W_LIST_LOCAL);
}

int mem_srv_repl_dispatch(mem_srv_repl_t *rp, const mem_api_req_t *req,
                          const mem_srv_repl_hdrs_t *h, mem_api_resp_t *resp,
                          mem_srv_repl_local_fn local, mem_srv_repl_done_fn done, void *ud)
{
    rreq_t *r = calloc(1, sizeof(*r));
    if (!r) return -1;
    r->rp = rp;
    r->req = *req;
    if (!r->req.query) r->req.query = "";
    r->resp = resp;
    r->local = local;
    r->done = done;
    r->ud = ud;
    if (h->authorization && strlen(h->authorization) < sizeof(r->auth)) {
        snprintf(r->auth, sizeof(r->auth), "%s", h->authorization);
        r->has_auth = true;
    }
    if (h->request_id) snprintf(r->req_id, sizeof(r->req_id), "%s", h->request_id);
    r->forwarded = h->forwarded && *h->forwarded;
    classify(r);
    switch (r->kind) {
    case K_ADMIN:
        queue(r, W_ADMIN);
        break;
    case K_LIST:
        list_all(r);
        break;
    case K_NS:
        route(r);
        break;
    default:
        go_local(r);
        break;
    }
    return 0;
}

/* ---- lifetime ---- */

int mem_srv_repl_new(uv_loop_t *loop, mem_cluster_t *cl, const mem_api_ctx_t *api,
                     const mem_cfg_t *cfg, mem_srv_repl_t **out)
{
    mem_srv_repl_t *rp = calloc(1, sizeof(*rp));
    if (!rp) return -1;
    rp->loop = loop;
    rp->cl = cl;
    rp->api = api;
    rp->cfg = cfg;
    if (mem_srv_fwd_new(loop, &rp->fwd) != 0) {
        free(rp);
        return -1;
    }
    pthread_mutex_init(&rp->mu, NULL);
    uv_async_init(loop, &rp->async, on_async);
    rp->async.data = rp;
    *out = rp;
    return 0;
}

static void on_closed(uv_handle_t *h)
{
    mem_srv_repl_t *rp = h->data;
    pthread_mutex_destroy(&rp->mu);
    free(rp);
}

void mem_srv_repl_free(mem_srv_repl_t *rp)
{
    if (!rp) return;
    mem_srv_fwd_free(rp->fwd);
    uv_close((uv_handle_t *)&rp->async, on_closed);
}
