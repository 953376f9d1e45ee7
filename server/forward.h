/* forward.h - relaying HTTP requests to other mnemod nodes, on the libuv loop (cluster mode)
 * SPDX-License-Identifier: MIT
 *
 * A small HTTP/1.1 client driven by the server's own loop: no thread waits for a peer.
 * Connections are kept alive and pooled per peer address. Loop thread only.
 */
#ifndef MEM_SERVER_FORWARD_H
#define MEM_SERVER_FORWARD_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

typedef struct mem_srv_fwd mem_srv_fwd_t;

typedef struct mem_srv_fwd_req {
    const char *addr;   /* peer "host:port" ([v6]:port) */
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* raw path */
    const char *query;  /* raw query without '?', "" or NULL for none */
    const char *content_type, *authorization, *request_id; /* NULL: not sent */
    const char *forwarded_by;                              /* X-Mnemod-Forwarded value */
    const char *body;
    size_t body_len;
    int timeout_ms;
} mem_srv_fwd_req_t;

typedef struct mem_srv_fwd_res {
    int status; /* 0: no answer (error says why) */
    bool sent;  /* the request was written to the peer (a write may have happened) */
    char *body; /* malloc'd; the callback takes it (or leaves it to be freed) */
    size_t body_len;
    char content_type[128];
    char allow[64];
    int retry_after_s; /* 0 when absent */
    bool too_big;      /* status 0: the answer was over the pool's max_answer */
    char error[160];
} mem_srv_fwd_res_t;

/* Loop thread. res is valid for the call; take res->body by setting it to NULL. */
typedef void (*mem_srv_fwd_cb)(void *ud, mem_srv_fwd_res_t *res);

/* max_answer: bytes of an answer (head included) read at most; a larger one ends the
 * request with status 0 and too_big. */
int mem_srv_fwd_new(uv_loop_t *loop, size_t max_answer, mem_srv_fwd_t **out);
/* Start a request; cb runs exactly once, on a later loop iteration. 0, or -1 (ENOMEM). */
int mem_srv_fwd_start(mem_srv_fwd_t *f, const mem_srv_fwd_req_t *req, mem_srv_fwd_cb cb, void *ud);
/* Close every connection; requests in flight fail (their callbacks run). The handles finish
 * closing as the loop runs; the pool frees itself then. NULL-safe. */
void mem_srv_fwd_free(mem_srv_fwd_t *f);

/* Parse a response head (status line + headers up to and including the blank line) in
 * buf[len]. Pure, for tests. Returns the head's length (> 0), 0 when incomplete, -1 when
 * malformed. *content_length is -1 when absent; *chunked set for Transfer-Encoding:
 * chunked; *close for Connection: close. */
long mem_srv_fwd_parse_head(const char *buf, size_t len, int *status, long long *content_length,
                            bool *chunked, bool *close, mem_srv_fwd_res_t *res);
/* Decode a chunked body in buf[len] into out (capacity >= len). Returns the bytes of buf
 * consumed when the terminating chunk and trailer are complete (> 0), 0 when more is
 * needed, -1 when malformed. *out_len: decoded length. */
long mem_srv_fwd_dechunk(const char *buf, size_t len, char *out, size_t *out_len);

#endif
