/* api.h - the HTTP API of SPEC section 3 as transport-neutral handlers
 * SPDX-License-Identifier: MIT
 *
 * server/ turns an MHD request into a mem_api_req_t and calls mem_api_handle on a worker
 * thread. A handler that needs a write returns with resp->pending set: server/ submits
 * that op to the store and, once it is done, calls mem_api_finish (any thread but the
 * loop) to fill the response. Nothing here touches uv or MHD.
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
} mem_api_ctx_t;

typedef struct mem_api_req {
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* raw path, still percent-encoded, no query string */
    const char *query;        /* raw query string after '?', "" when none */
    const char *content_type; /* NULL when absent */
    const char *body;         /* body_len bytes, not NUL-terminated */
    size_t body_len;
} mem_api_req_t;

/* A streamed response body (an export): server/ calls mem_api_stream_fill on a worker
 * thread whenever it needs more bytes (one call at a time, any thread), and frees it once
 * the response is over (complete or not). */
typedef struct mem_api_stream mem_api_stream_t;
/* Up to cap bytes of the body into buf: > 0 bytes, 0 at the end, -1 on a failure (the
 * response is then cut short: the client sees a broken chunked transfer). */
long mem_api_stream_fill(mem_api_stream_t *s, char *buf, size_t cap);
void mem_api_stream_free(mem_api_stream_t *s); /* NULL-safe */

typedef struct mem_api_resp {
    int status;
    char *body; /* malloc'd, freed with mem_api_resp_deinit */
    size_t body_len;
    const char *content_type; /* static */
    int retry_after_s;        /* > 0: send Retry-After */
    const char *allow;        /* static; non-NULL: send "Allow: <this>" (405 answers) */
    double scanned_fraction;  /* retrieve: segments scored / stored (for metrics), else 0 */
    char route[48];           /* route label for metrics: "retrieve", "segments", ... */
    /* A write to submit, owned by the response until mem_api_resp_deinit. */
    mem_store_op_t *pending;
    /* status 2xx with a streamed body instead of body (content_type set): taken over by
     * server/, which frees it with mem_api_stream_free. */
    mem_api_stream_t *stream;
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
/* An error response (also used by server/ for 413, 415, 503, 401...). */
void mem_api_error(mem_api_resp_t *resp, const mem_err_t *err);
void mem_api_resp_deinit(mem_api_resp_t *resp);

#endif
