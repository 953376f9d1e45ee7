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
    void *_state; /* handler state kept between handle and finish */
} mem_api_resp_t;

/* Route and run the request. Fills resp completely, or sets resp->pending. */
void mem_api_handle(const mem_api_ctx_t *ctx, const mem_api_req_t *req, mem_api_resp_t *resp);
/* The pending op is done: fill the response from its result. */
void mem_api_finish(const mem_api_ctx_t *ctx, mem_api_resp_t *resp);
/* An error response (also used by server/ for 413, 415, 503, 401...). */
void mem_api_error(mem_api_resp_t *resp, const mem_err_t *err);
void mem_api_resp_deinit(mem_api_resp_t *resp);

#endif
