/* replicate.c - cluster mode: routing each request to the nodes holding its namespace
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. api/'s router says what a request acts on (mem_api_target): a namespace (a
 * /v1/namespaces/{ns}... route, or an MCP tools/call naming one), the namespace listing, or
 * this node's own (health, metrics, the cluster routes: served here). For a namespace,
 * cluster/ says where it goes from its in-memory map: here, to a holder (relayed on the
 * loop by forward.c, with the caller's Authorization and request id, and the query and
 * body exactly as received, min_seq included, for the holder to honour), or, when the map
 * has no entry yet, to one of cluster/'s resolver threads, which reads (or, for a creating
 * write, makes) the entry in JetStream, and then routes again: none of the server's
 * threads waits for NATS. A relayed request that could not even be sent goes to the
 * next holder; one answered 421 (the holder's map differs: a move just switched) is routed
 * again after a fresh read of the entry.
 *
 * Served here, the request runs its steps as in single-node mode (api/ takes min_seq out
 * and asks for a MEM_API_WAIT, which cluster/ ends from a thread of its own); its write comes
 * back through mem_srv_repl_write, handed to cluster/ from the loop and answered from
 * cluster/'s callback through an async handle: no pool thread waits for NATS or the log.
 *
 * GET /v1/namespaces asks every other live node for its own list (a relayed listing
 * answers with the namespaces live on that node only) and merges them with this node's.
 * A node that does not answer its list makes the listing a 503 naming it: a list without
 * that node's namespaces would look whole.
 *
 * An answer made here keeps resp's api/ state (its CORS headers are the caller's); only
 * status, body and the few headers a holder sent are replaced. JSON is api/'s: errors go
 * through mem_api_error, the listing's filter and merge are api/ calls.
 */
#include "server/replicate.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/forward.h"
#include "server/http.h"

#define MIN_SEQ_WAIT_MS 5000
#define MAX_HOPS        3 /* route attempts of one request (next holder, fresh map) */
#define MAX_PEERS       MEM_CLUSTER_NODES_MAX /* every other node of the table */

struct mem_srv_repl {
    uv_loop_t *loop;
    mem_cluster_t *cl;
    const mem_api_ctx_t *api;
    const mem_cfg_t *cfg;
    mem_srv_fwd_t *fwd;
    uv_async_t async;
    pthread_mutex_t mu;
    struct wreq *done_head; /* mu: writes answered on a cluster thread */
    struct sreq *wait_head; /* mu: min_seq waits ended on a cluster thread */
    struct rreq *res_head;  /* mu: placement reads done on a cluster thread */
};

enum work { W_LIST_LOCAL, W_MERGE };

typedef struct rreq {
    mem_srv_repl_t *rp;
    mem_api_req_t req;
    mem_api_resp_t *resp;
    mem_srv_repl_fn local, done;
    void *ud;
    char auth[1024];
    char req_id[64];
    bool has_auth, forwarded;
    mem_api_target_t target;
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
    int list_rc;        /* MEM_OK, or why the merged listing cannot be whole */
    char list_err[600]; /* the first peer that did not answer its listing, and why */
    struct rreq *next_done;
    struct rreq *next_resolved; /* the rp's res_head list */
} rreq_t;

/* A write handed over by mem_srv_repl_write. */
typedef struct wreq {
    struct mem_srv_repl *rp;
    mem_api_resp_t *resp;
    mem_srv_repl_fn done;
    void *ud;
    struct wreq *next_done;
    int rc; /* the cluster's answer, kept for the loop thread to encode */
    uint64_t log_seq;
    mem_err_t err;
} wreq_t;

/* A min_seq wait handed over by mem_srv_repl_wait. */
typedef struct sreq {
    struct mem_srv_repl *rp;
    mem_srv_repl_waited_fn done;
    void *ud;
    bool reached;
    struct sreq *next_done;
} sreq_t;

typedef struct peer_call {
    rreq_t *r;
    size_t slot;
    char addr[300];
} peer_call_t;

static void route(rreq_t *r);
static void queue(rreq_t *r, int kind);
static void resolve(rreq_t *r);
static void resolved(rreq_t *r);

/* ---- answers ---- */

static void rreq_free(rreq_t *r)
{
    for (size_t i = 0; i <= MAX_PEERS; i++)
        free(r->bodies[i]);
    free(r);
}

static void finish(rreq_t *r)
{
    r->done(r->ud);
    rreq_free(r);
}

/* Served here: the caller takes over. */
static void go_local(rreq_t *r)
{
    mem_srv_repl_fn local = r->local;
    void *ud = r->ud;
    rreq_free(r);
    local(ud);
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
    r->resp->allow = NULL;
    mem_api_error(r->resp, &err);
    snprintf(r->resp->route, sizeof(r->resp->route), "cluster");
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

/* A cluster or store thread (the store's writer among them): the replicated write is
 * done. Only its result is kept here; the answer is encoded on the loop thread (on_async),
 * never on the writer, where it would hold up every write queued behind it. */
static void on_written(mem_store_op_t *op, int rc, uint64_t log_seq, const mem_err_t *err, void *ud)
{
    wreq_t *r = ud;
    mem_srv_repl_t *rp = r->rp;
    r->rc = rc;
    r->log_seq = log_seq;
    if (err)
        r->err = *err;
    else
        mem_err_clear(&r->err);
    pthread_mutex_lock(&rp->mu);
    r->next_done = rp->done_head;
    rp->done_head = r;
    pthread_mutex_unlock(&rp->mu);
    uv_async_send(&rp->async);
}

/* Loop thread: a write's answer is small (ids, seqs, counts); encode it and hand it on. */
static void answer_written(wreq_t *r)
{
    if (r->rc == MEM_CLUSTER_CONFLICT) { /* 409 write_conflict, with the cluster's message */
        char route[sizeof(r->resp->route)];
        snprintf(route, sizeof(route), "%s", r->resp->route);
        mem_err_t e = r->err;
        e.code = MEM_ECONFLICT;
        e.field[0] = '\0';
        mem_api_error(r->resp, &e);
        snprintf(r->resp->route, sizeof(r->resp->route), "%s", route);
    } else {
        mem_api_finish(r->rp->api, r->resp);
        add_log_seq(r->resp, r->log_seq);
    }
}

static void on_async(uv_async_t *h)
{
    mem_srv_repl_t *rp = h->data;
    pthread_mutex_lock(&rp->mu);
    wreq_t *list = rp->done_head;
    sreq_t *waits = rp->wait_head;
    rreq_t *res = rp->res_head;
    rp->done_head = NULL;
    rp->wait_head = NULL;
    rp->res_head = NULL;
    pthread_mutex_unlock(&rp->mu);
    while (list) {
        wreq_t *r = list;
        list = r->next_done;
        answer_written(r);
        r->done(r->ud);
        free(r);
    }
    while (waits) {
        sreq_t *w = waits;
        waits = w->next_done;
        w->done(w->ud, w->reached);
        free(w);
    }
    while (res) {
        rreq_t *r = res;
        res = r->next_resolved;
        resolved(r);
    }
}

int mem_srv_repl_write(mem_srv_repl_t *rp, mem_api_resp_t *resp, mem_srv_repl_fn done, void *ud)
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
    if (rc == MEM_EBUSY && err.retry_after_s <= 0) err.retry_after_s = 1;
    mem_api_error(resp, &err); /* resp->route stays the write's */
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
    if (res->status == 0 && res->too_big) {
        char msg[600];
        snprintf(msg, sizeof(msg),
                 "the answer of %.60s is over --max-relay-answer (%zu bytes): send the request "
                 "there",
                 r->addr, r->rp->cfg->max_relay_answer);
        fail(r, MEM_ETOOBIG, NULL, msg);
        finish(r);
        return;
    }
    if (res->status == 0) {
        if (!res->sent && r->hops < MAX_HOPS) { /* never reached it: the next holder */
            snprintf(r->avoid, sizeof(r->avoid), "%s", r->addr);
            route(r);
            return;
        }
        char msg[600];
        snprintf(msg, sizeof(msg),
                 "the node holding namespace %s (%.100s) did not answer: %.100s%s", r->target.ns,
                 r->addr, res->error,
                 r->target.write ? "; the write may have been applied: read before sending it "
                                   "again"
                                 : "");
        /* a write that reached the holder may be applied: not a 503, which clients retry
         * (an insert without ids would be stored twice) */
        fail(r, r->target.write ? MEM_EWRITETIME : MEM_EBUSY, NULL, msg);
        finish(r);
        return;
    }
    if (res->status == 421 && r->hops < MAX_HOPS) { /* its map differs: read ours afresh */
        r->target.create = false;
        resolve(r);
        return;
    }
    mem_api_resp_t *resp = r->resp;
    free(resp->body);
    resp->allow = NULL;
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
        .timeout_ms = (int)ceil(r->rp->cfg->forward_timeout_s * 1000.0),
    };
    if (mem_srv_fwd_start(r->rp->fwd, &q, on_forwarded, r) != 0) {
        fail(r, MEM_ENOMEM, NULL, "out of memory");
        finish(r);
    }
}

/* ---- work on the pool ---- */

/* A namespace of this node's own listing, as a relayed listing shows it: live here, with
 * its position here ("log_seq": the merge keeps the freshest copy's figures, and a client
 * may pass it as min_seq). */
static bool live_pos(void *ud, const char *name, uint64_t *pos)
{
    mem_cluster_t *cl = ud;
    *pos = mem_cluster_position(cl, name);
    return *pos || mem_cluster_serves(cl, name);
}

static void work_cb(uv_work_t *w)
{
    rreq_t *r = w->data;
    mem_srv_repl_t *rp = r->rp;
    switch (r->work_kind) {
    case W_MERGE:
        mem_api_listing_merge(r->resp, r->bodies + 1, r->lens + 1, r->n_peers);
        return;
    case W_LIST_LOCAL:
        mem_api_work(rp->api, &r->req, r->resp); /* a listing: answered at once */
        mem_api_listing_filter(r->resp, live_pos, rp->cl);
        return;
    }
}

/* A listing missing a live node's namespaces would look complete: it is an error instead
 * (503 with Retry-After; a node that is down for good leaves the live set). */
static void list_fail(rreq_t *r, int code, const char *msg)
{
    if (r->list_rc != MEM_OK) return; /* the first one says it */
    r->list_rc = code;
    snprintf(r->list_err, sizeof(r->list_err), "%s", msg);
}

static void list_step(rreq_t *r)
{
    if (!r->local_done || r->n_answers < r->n_peers) return;
    if (r->list_rc != MEM_OK && r->resp->status == 200) { /* else the local error answers */
        fail(r, r->list_rc, NULL, r->list_err);
        finish(r);
        return;
    }
    if (r->forwarded || r->n_peers == 0) {
        finish(r);
        return;
    }
    queue(r, W_MERGE);
}

/* ---- placement reads (on the cluster's resolver threads: they wait for NATS) ---- */

/* A resolver thread: the entry was read; the loop thread goes on (on_async, resolved). */
static void on_resolved(void *ud, int rc, const mem_err_t *err)
{
    rreq_t *r = ud;
    mem_srv_repl_t *rp = r->rp;
    r->resolve_rc = rc;
    r->resolve_err = *err;
    pthread_mutex_lock(&rp->mu);
    r->next_resolved = rp->res_head;
    rp->res_head = r;
    pthread_mutex_unlock(&rp->mu);
    uv_async_send(&rp->async);
}

static void resolve(rreq_t *r)
{
    int rc = mem_cluster_resolve_start(r->rp->cl, r->target.ns, r->target.create && !r->forwarded,
                                       on_resolved, r);
    if (rc != MEM_OK) {
        fail(r, rc, NULL, rc == MEM_ENOMEM ? "out of memory" : "the server is shutting down");
        finish(r);
    }
}

/* Loop thread: what the placement read says. */
static void resolved(rreq_t *r)
{
    r->hops++;
    if (r->resolve_rc == MEM_OK) {
        route(r);
    } else if (r->resolve_rc == MEM_ENOTFOUND) {
        if (r->forwarded) {
            fail(r, MEM_EMISDIRECTED, NULL,
                 "this node does not hold the namespace (placement changed)");
            finish(r);
        } else if (r->target.write && !r->target.create) { /* nothing to delete or compact */
            char msg[120];
            snprintf(msg, sizeof(msg), "namespace not found: %s", r->target.ns);
            fail(r, MEM_ENOTFOUND, NULL, msg);
            finish(r);
        } else {
            go_local(r); /* no such namespace anywhere: api/ answers here (404); r is gone */
        }
    } else {
        fail(r, r->resolve_rc, NULL, r->resolve_err.msg);
        finish(r);
    }
}

static void after_work(uv_work_t *w, int status)
{
    rreq_t *r = w->data;
    switch (r->work_kind) {
    case W_LIST_LOCAL:
        r->local_done = true;
        list_step(r);
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
        mem_cluster_route(r->rp->cl, r->target.ns, r->target.write, r->forwarded, r->avoid, r->addr,
                          sizeof(r->addr), why, sizeof(why));
    if (r->hops >= MAX_HOPS && where != MEM_CLUSTER_LOCAL) {
        char msg[260];
        snprintf(msg, sizeof(msg), "%s (after %d routing attempts)",
                 why[0] ? why : "the namespace's placement keeps changing", MAX_HOPS);
        fail(r, MEM_EBUSY, NULL, msg);
        finish(r);
        return;
    }
    switch (where) {
    case MEM_CLUSTER_LOCAL:
        go_local(r);
        return;
    case MEM_CLUSTER_FORWARD:
        r->hops++;
        forward(r);
        return;
    case MEM_CLUSTER_RESOLVE:
        resolve(r);
        return;
    case MEM_CLUSTER_MISDIRECTED:
        fail(r, MEM_EMISDIRECTED, NULL, why);
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
    } else {
        char msg[600];
        if (res->status)
            snprintf(msg, sizeof(msg), "namespace listing incomplete: node %s answered %d",
                     pc->addr, res->status);
        else
            snprintf(msg, sizeof(msg), "namespace listing incomplete: node %s did not answer (%s)",
                     pc->addr, res->error[0] ? res->error : "no answer");
        list_fail(r, MEM_EBUSY, msg);
    }
    free(pc);
    r->n_answers++;
    list_step(r);
}

static void list_all(rreq_t *r)
{
    char(*addrs)[300] = r->forwarded ? NULL : malloc(MAX_PEERS * sizeof(*addrs));
    if (!r->forwarded && !addrs) list_fail(r, MEM_ENOMEM, "out of memory");
    size_t n = addrs ? mem_cluster_peers(r->rp->cl, addrs, MAX_PEERS) : 0;
    for (size_t i = 0; i < n; i++) {
        peer_call_t *pc = malloc(sizeof(*pc));
        if (!pc) {
            list_fail(r, MEM_ENOMEM, "out of memory");
            break;
        }
        pc->r = r;
        pc->slot = r->n_peers + 1;
        snprintf(pc->addr, sizeof(pc->addr), "%s", addrs[i]);
        mem_srv_fwd_req_t q = {
            .addr = addrs[i],
            .method = "GET",
            .path = r->req.path,
            .query = r->req.query,
            .authorization = r->has_auth ? r->auth : NULL,
            .request_id = r->req_id[0] ? r->req_id : NULL,
            .forwarded_by = r->rp->cfg->node_id,
            .timeout_ms = (int)ceil(r->rp->cfg->forward_timeout_s * 1000.0),
        };
        if (mem_srv_fwd_start(r->rp->fwd, &q, on_peer_list, pc) != 0) {
            free(pc);
            list_fail(r, MEM_ENOMEM, "out of memory");
            break;
        }
        r->n_peers++;
    }
    free(addrs);
    queue(r, W_LIST_LOCAL);
}

int mem_srv_repl_dispatch(mem_srv_repl_t *rp, const mem_api_req_t *req, const char *request_id,
                          mem_api_resp_t *resp, mem_srv_repl_fn local, mem_srv_repl_fn done,
                          void *ud)
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
    size_t len = 0;
    const char *v = mem_srv_http_header(req->headers, req->n_headers, "Authorization", &len);
    if (v && len < sizeof(r->auth)) {
        memcpy(r->auth, v, len);
        r->auth[len] = '\0';
        r->has_auth = true;
    }
    if (request_id) snprintf(r->req_id, sizeof(r->req_id), "%s", request_id);
    v = mem_srv_http_header(req->headers, req->n_headers, MEM_SRV_REPL_FORWARDED, &len);
    r->forwarded = v && len > 0;
    mem_api_target(req, resp, &r->target);
    if (r->target.rc != MEM_OK) {
        fail(r, r->target.rc, NULL, "out of memory");
        finish(r);
        return 0;
    }
    switch (r->target.scope) {
    case MEM_API_SCOPE_LIST:
        list_all(r);
        break;
    case MEM_API_SCOPE_NS:
        route(r);
        break;
    case MEM_API_SCOPE_NODE:
        go_local(r);
        break;
    }
    return 0;
}

/* A cluster thread: the wait ended; the loop thread goes on (on_async). */
static void on_waited(void *ud, bool reached)
{
    sreq_t *w = ud;
    mem_srv_repl_t *rp = w->rp;
    w->reached = reached;
    pthread_mutex_lock(&rp->mu);
    w->next_done = rp->wait_head;
    rp->wait_head = w;
    pthread_mutex_unlock(&rp->mu);
    uv_async_send(&rp->async);
}

int mem_srv_repl_wait(mem_srv_repl_t *rp, const char *ns, uint64_t seq, mem_srv_repl_waited_fn done,
                      void *ud)
{
    sreq_t *w = calloc(1, sizeof(*w));
    if (!w) return -1;
    w->rp = rp;
    w->done = done;
    w->ud = ud;
    if (mem_cluster_wait_start(rp->cl, ns, seq, MIN_SEQ_WAIT_MS, on_waited, w) != MEM_OK) {
        free(w);
        return -1;
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
    if (mem_srv_fwd_new(loop, cfg->max_relay_answer, &rp->fwd) != 0) {
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
