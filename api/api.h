/* api.h - the HTTP API of SPEC sections 3, 8 and 9 as transport-neutral steps
 * SPDX-License-Identifier: MIT
 *
 * server/ turns an MHD request into a mem_api_req_t and drives it step by step; every
 * step returns what server/ does next (mem_api_next_t):
 *
 *   head in (loop thread)  mem_api_begin   routing, /healthz, Host, Origin and CORS
 *                                          preflights, keys, Content-Type, loading/draining
 *     -> REPLY: send resp; BODY: read the body (at most resp->max_body bytes), then WORK
 *   WORK (pool thread)     mem_api_work    the handler, or the answer to a finished write
 *     -> REPLY; WRITE: submit resp->pending to the store's writer (or the cluster log),
 *        then WORK again; WAIT (cluster mode): wait until this node applied resp->wait_seq
 *        for resp->wait_ns (mem_api_wait_failed if it did not), then WORK again
 *
 *     -> EMBED (a remote embedder, SPEC 6): the handler waits for vectors made from text
 *        (resp->embed, decoded and checked everything else): server/ has them embedded
 *        without holding a worker or the loop, then calls mem_api_resume on a worker with
 *        the vectors or the provider's failure, and asks mem_api_next_of what comes next
 *
 * A new asynchronous step (a streamed body, an async cluster wait) is one more
 * mem_api_next_t value and one more case in server/'s step switch. Nothing here touches
 * uv or MHD.
 */
#ifndef MEM_API_API_H
#define MEM_API_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "storage/store.h"

/* The edge settings and keys (edge.c): origins, hosts, the keys table. Loop thread only. */
typedef struct mem_api_edge mem_api_edge_t;

/* Build from the settings and the port actually bound (own origins). Takes keys (may be
 * NULL). MEM_OK, MEM_EINVAL (an --allowed-hosts entry), MEM_ENOMEM. */
int mem_api_edge_new(const mem_cfg_t *cfg, int port, mem_cfg_keys_t *keys, mem_api_edge_t **out,
                     mem_err_t *err);
/* Swap in a re-read keys table (SIGHUP), freeing the old one; takes keys. */
void mem_api_edge_set_keys(mem_api_edge_t *e, mem_cfg_keys_t *keys);
void mem_api_edge_free(mem_api_edge_t *e);

/* What server/ provides to the routes it does not own (called on pool threads). */
typedef struct mem_api_hooks {
    void *ud;
    /* GET /metrics: Prometheus text (malloc'd, NULL on ENOMEM); st NULL while loading. */
    char *(*metrics)(void *ud, mem_store_t *st, size_t *len);
    /* Cluster mode only (NULL otherwise, and the cluster routes are 404): GET /v1/cluster
     * (malloc'd JSON), POST /v1/cluster/snapshot. */
    char *(*cluster_status)(void *ud, size_t *len);
    int (*cluster_snapshot)(void *ud, bool trim, char **body, mem_err_t *err);
    /* POST /v1/cluster/move, POST /v1/cluster/nodes/{node}/drain, DELETE
     * /v1/cluster/nodes/{node}: the malloc'd JSON answer, or err. */
    int (*cluster_move)(void *ud, const char *ns, const char *from, const char *to, char **body,
                        mem_err_t *err);
    int (*cluster_drain)(void *ud, const char *node, bool drain, char **body, mem_err_t *err);
    int (*cluster_forget)(void *ud, const char *node, char **body, mem_err_t *err);
    /* /healthz: false when this node must get no traffic (why says it); any thread, the
     * loop's included: it must not block. NULL: always healthy. */
    bool (*cluster_healthy)(void *ud, char *why, size_t cap);
} mem_api_hooks_t;

typedef struct mem_api_ctx {
    mem_store_t *store; /* NULL while loading; set by the loop thread before it begins any
                         * request that uses it */
    const mem_cfg_t *cfg;
    const mem_vec_ops_t *ops;
    int64_t (*now_ms)(void); /* server clock, injectable for tests */
    /* The embedder of text sent without an embedding (SPEC 6). embedder_id is what a
     * namespace records ("builtin", "openai:MODEL"; NULL means the built-in one). When
     * embedder_remote, vectors come through resp->embed, and embedder_dim(embedder_ud)
     * gives the provider's dimension, 0 until it is known (any thread). */
    const char *embedder_id;
    bool embedder_remote;
    size_t (*embedder_dim)(void *ud);
    void *embedder_ud;
    mem_api_hooks_t hooks;
    mem_api_edge_t *edge; /* NULL: no Host, Origin or key checks (tests) */
    const mem_log_t *log; /* the server's logger (NULL: none) */
    bool draining;        /* loop thread: shutting down, 503 */
} mem_api_ctx_t;

/* One request header as received (name and value are not NUL-terminated). */
typedef struct mem_api_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} mem_api_header_t;

typedef struct mem_api_req {
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* raw path, still percent-encoded, no query string */
    const char *query;        /* raw query string after '?', "" when none */
    const char *content_type; /* NULL when absent */
    const char *body;         /* body_len bytes, not NUL-terminated */
    size_t body_len;
    const mem_api_header_t *headers; /* every request header, in arrival order */
    size_t n_headers;
    bool body_expected; /* the head announces a body (Content-Length > 0, or chunked) */
} mem_api_req_t;

/* A streamed response body (an export): server/ calls mem_api_stream_fill on a worker
 * thread whenever it needs more bytes (one call at a time, any thread), and frees it once
 * the response is over (complete or not). */
typedef struct mem_api_stream mem_api_stream_t;
/* Up to cap bytes of the body into buf: > 0 bytes, 0 at the end, -1 on a failure (the
 * response is then cut short: the client sees a broken chunked transfer). */
long mem_api_stream_fill(mem_api_stream_t *s, char *buf, size_t cap);
void mem_api_stream_free(mem_api_stream_t *s); /* NULL-safe */
/* Texts a handler needs embedded before it can go on (resp->embed). */
typedef struct mem_api_embed {
    const char *const *texts; /* n texts, lens[i] bytes each (not NUL-terminated) */
    const size_t *lens;
    size_t n;
} mem_api_embed_t;

typedef enum mem_api_next {
    MEM_API_REPLY, /* resp is complete: send it */
    MEM_API_BODY,  /* read the body (resp->max_body at most, else 413), then WORK */
    MEM_API_WORK,  /* run mem_api_work on a pool thread */
    MEM_API_WRITE, /* submit resp->pending, then WORK */
    MEM_API_WAIT,  /* cluster mode: wait for resp->wait_seq on resp->wait_ns, then WORK */
    MEM_API_EMBED, /* embed resp->embed, mem_api_resume, then mem_api_next_of */
} mem_api_next_t;

typedef struct mem_api_resp {
    int status;
    char *body; /* malloc'd, freed with mem_api_resp_deinit */
    size_t body_len;
    const char *content_type;   /* static */
    int retry_after_s;          /* > 0: send Retry-After */
    const char *allow;          /* static; non-NULL: send "Allow: <this>" (405 answers) */
    const char *const *headers; /* static name, value, ..., NULL: more headers to send */
    double scanned_fraction;    /* retrieve: segments scored / stored (for metrics), else 0 */
    char route[48];             /* route label for metrics: "retrieve", "segments", ... */
    size_t max_body;            /* set by mem_api_begin: the largest body this route takes */
    char wait_ns[MEM_STORE_NS_MAX + 1]; /* MEM_API_WAIT */
    uint64_t wait_seq;
    /* A write to submit, owned by the response until mem_api_resp_deinit. */
    mem_store_op_t *pending;
    /* status 2xx with a streamed body instead of body (content_type set): taken over by
     * server/, which frees it with mem_api_stream_free. */
    mem_api_stream_t *stream;
    /* Texts to embed before mem_api_resume, owned by the response (NULL: none). */
    const mem_api_embed_t *embed;
    void *_state; /* handler state kept between handle and finish */
} mem_api_resp_t;

/* An import (POST /v1/namespaces/{ns}/import): its body arrives in pieces and is never
 * held whole. server/ calls, on worker threads and one call at a time:
 * mem_api_import_begin once the headers are in (NULL: resp holds the error, to be answered
 * at once), mem_api_import_feed per piece of body, mem_api_import_end at its end (fills resp
 * with the error, or sets resp->pending like a write; the import must then stay alive until
 * the response is finished), and mem_api_import_free when the request is over. */
typedef struct mem_api_import mem_api_import_t;
/* Is this request an import (the route only; the rest is checked by _begin)? */
bool mem_api_is_import(const char *method, const char *path);
/* The checks that need neither the body nor the store (route, name, Content-Type, mode):
 * any thread, the event loop's included. false: resp holds the error, to answer at once. */
bool mem_api_import_precheck(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                             mem_api_resp_t *resp);
mem_api_import_t *mem_api_import_begin(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                       mem_api_resp_t *resp);
/* false once the import failed: the rest of the body may be dropped. */
bool mem_api_import_feed(mem_api_import_t *imp, const char *data, size_t len);
void mem_api_import_end(mem_api_import_t *imp, mem_api_resp_t *resp);
void mem_api_import_free(mem_api_import_t *imp); /* NULL-safe */

/* Loop thread, once the head is in (req->body is not there yet). */
mem_api_next_t mem_api_begin(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                             mem_api_resp_t *resp);
/* Loop thread, once the body is in (before the first mem_api_work or mem_api_work_inline):
 * the request has arrived whole, the answer's took_ms counts from now. The first step does
 * it too when the caller did not; later calls change nothing. */
void mem_api_body_complete(mem_api_resp_t *resp);
/* Pool thread: the next step (req->body is complete; req may be NULL after a WRITE). */
mem_api_next_t mem_api_work(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                            mem_api_resp_t *resp);
/* How a read tried on the event loop went (mem_api_work_inline). */
typedef enum mem_api_inline {
    MEM_API_INLINE_ANSWERED = 0, /* resp and the next step are final, as a worker's */
    MEM_API_INLINE_ROUTE,        /* not a read that is tried there: nothing was done */
    MEM_API_INLINE_LOCKED,       /* a write holds the namespace exclusively */
    MEM_API_INLINE_GRAPH,        /* it needs the coherence graph, which is behind */
    MEM_API_INLINE_BUDGET,       /* its scan needs more than the budget */
    MEM_API_INLINE_SQLITE,       /* the file was busy */
    MEM_API_INLINE_EMBEDDER,     /* its text goes to the remote embedder */
    MEM_API_INLINE_COUNT
} mem_api_inline_t;

/* Loop thread, instead of mem_api_work for the first WORK step of a retrieve or of a GET of
 * one segment: the same
 * step, run without ever waiting (storage's _try calls: the namespace's shared lock only
 * tried, no graph wait, no provider call, the scan bounded by work_budget vector
 * components). *why ANSWERED: its result is the step's, exactly what a worker would have
 * given. Otherwise resp is as it was and MEM_API_WORK says: run mem_api_work on a worker.
 * A single node only (a cluster-mode request may wait for min_seq). */
mem_api_next_t mem_api_work_inline(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                   mem_api_resp_t *resp, size_t work_budget, mem_api_inline_t *why);
/* Loop thread, instead of mem_api_work for the first WORK step of an insert (POST
 * .../segments): the body's parse and decode, the terms and vector codes, and the write
 * record, made without ever waiting (the namespace's shared lock only tried, no provider
 * call: a text to embed remotely ends the step with MEM_API_EMBED as on a worker). *why
 * ANSWERED: resp and the next step (WRITE, EMBED or REPLY with an error) are exactly what a
 * worker would have given. Otherwise resp is as it was and MEM_API_WORK says: run
 * mem_api_work on a worker. A single node only. */
mem_api_next_t mem_api_write_inline(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                    mem_api_resp_t *resp, mem_api_inline_t *why);
/* A finished write whose answer is a small, bounded encode (an insert of at most
 * MEM_API_ACK_INLINE_SEGMENTS segments, a delete, a namespace created or dropped, an import's
 * counts, or any failure): its mem_api_work step needs no worker, the loop may run it. */
#define MEM_API_ACK_INLINE_SEGMENTS 16
bool mem_api_ack_small(const mem_api_resp_t *resp);
/* What comes after a handler ran or resumed: EMBED (resp->embed), WRITE (resp->pending) or
 * REPLY. */
mem_api_next_t mem_api_next_of(mem_api_resp_t *resp);
/* The MEM_API_WAIT did not succeed in time: resp becomes the 503. */
void mem_api_wait_failed(mem_api_resp_t *resp);

/* Cluster mode: what a request acts on, from the route mem_api_begin found (call it once
 * the body is in: an MCP tools/call names its namespace in the body). */
typedef enum mem_api_scope {
    MEM_API_SCOPE_NODE, /* this node's own (health, metrics, the cluster routes, MCP
                         * handshakes, errors already answered): served here */
    MEM_API_SCOPE_NS,   /* one namespace (target.ns): served by a node holding it */
    MEM_API_SCOPE_LIST, /* GET /v1/namespaces: every node's list, merged */
} mem_api_scope_t;

typedef struct mem_api_target {
    mem_api_scope_t scope;
    char ns[MEM_STORE_NS_MAX + 1];
    bool write;  /* it changes the namespace: a holder that takes writes serves it */
    bool create; /* it may create the namespace (PUT, POST segments, import, memory_insert) */
    int rc;      /* MEM_OK, or MEM_ENOMEM: the body naming the target could not be read, so the
                  * answer is that 503 (scope NODE), not the request served here */
} mem_api_target_t;

/* Any thread; resp is the one mem_api_begin answered with MEM_API_BODY. */
void mem_api_target(const mem_api_req_t *req, const mem_api_resp_t *resp, mem_api_target_t *out);
/* Cluster mode, a worker: keep in a 200 {"namespaces": [...]} answer only the namespaces
 * live_pos says this node holds (it answers true and sets *pos to this copy's position),
 * each given "log_seq": *pos. Anything else is left as it is. MEM_OK, or MEM_ENOMEM with
 * resp made the 503 error (never the unfiltered list). */
int mem_api_listing_filter(mem_api_resp_t *resp,
                           bool (*live_pos)(void *ud, const char *name, uint64_t *pos), void *ud);
/* Cluster mode, a worker: merge the listings of the other nodes (bodies[i] of lens[i] bytes)
 * into resp's own 200 listing: one entry per name, the copy with the highest log_seq,
 * sorted by name. A listing missing (NULL) or unreadable makes resp the 503 unavailable
 * error with Retry-After (MEM_EBUSY), out of memory the 503 out-of-memory one
 * (MEM_ENOMEM): the answer is the whole listing or an error. A non-200 resp is left as it
 * is (MEM_OK). */
int mem_api_listing_merge(mem_api_resp_t *resp, char *const *bodies, const size_t *lens, size_t n);
/* Headers to add to the answer beside the fields above (CORS, Vary); views valid until
 * mem_api_resp_deinit. Returns how many were written to out (at most max). */
size_t mem_api_resp_headers(const mem_api_resp_t *resp, mem_api_header_t *out, size_t max);

/* The whole request at once, for tests and fuzzers with the body in req: begin and work
 * until a reply or a write (resp->pending set). */
void mem_api_handle(const mem_api_ctx_t *ctx, const mem_api_req_t *req, mem_api_resp_t *resp);
/* The pending op is done: fill the response from its result (mem_api_work). */
void mem_api_finish(const mem_api_ctx_t *ctx, mem_api_resp_t *resp);
/* Any thread but the loop: the texts of resp->embed are embedded. On success err is NULL
 * or holds MEM_OK and vecs holds resp->embed->n vectors of dim floats each, in order
 * (borrowed for the call); otherwise err says why (MEM_EEMBED, MEM_EEMBEDTIME, MEM_EBUSY
 * when shutting down...). Clears resp->embed, then fills resp or sets resp->pending. */
void mem_api_resume(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, const float *vecs, size_t dim,
                    const mem_err_t *err);
/* An error response (also used by server/ for 413, 415, 503, 401...). */
void mem_api_error(mem_api_resp_t *resp, const mem_err_t *err);
void mem_api_resp_deinit(mem_api_resp_t *resp);

#endif
