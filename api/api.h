/* api.h - the HTTP API of SPEC section 3 as transport-neutral handlers
 * SPDX-License-Identifier: MIT
 *
 * server/ turns an MHD request into a mem_api_req_t and calls mem_api_handle on a worker
 * thread. A handler that needs a write returns with resp->pending set: server/ submits
 * that op to the store and, once it is done, calls mem_api_finish (any thread but the
 * loop) to fill the response. Nothing here touches uv or MHD.
 *
 * Text embedded by a provider (SPEC 6): a handler that needs vectors made from text by a
 * remote embedder (ctx->embedder_remote) returns with resp->embed set instead, having
 * decoded and checked everything else. server/ has the texts embedded without holding a
 * worker or the loop while the provider answers, then calls mem_api_resume on a worker
 * with the vectors (or the provider's failure); the handler goes on from there and fills
 * the response or sets resp->pending, exactly as mem_api_handle would have.
 */
#ifndef MEM_API_API_H
#define MEM_API_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "storage/store.h"

typedef struct mem_api_ctx {
    mem_store_t *store;
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

/* Route and run the request. Fills resp completely, or sets resp->pending. */
void mem_api_handle(const mem_api_ctx_t *ctx, const mem_api_req_t *req, mem_api_resp_t *resp);
/* The pending op is done: fill the response from its result. */
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
