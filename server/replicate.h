/* replicate.h - cluster mode: every request, routed to the nodes holding its namespace
 * SPDX-License-Identifier: MIT
 *
 * Only used when cluster mode is on. The loop thread hands each request (its connection
 * suspended) to mem_srv_repl_dispatch, which decides where it is served: here (local runs
 * on the loop thread: the caller serves it as in single-node mode, and hands the write it
 * produces to mem_srv_repl_write instead of the store), at a holder of its namespace
 * (relayed by server/forward.c on the loop), or by every node (GET /v1/namespaces merged),
 * or by cluster/ itself (/v1/cluster...); the answered cases end with done on the loop.
 */
#ifndef MEM_SERVER_REPLICATE_H
#define MEM_SERVER_REPLICATE_H

#include <stdbool.h>

#include <uv.h>

#include "api/api.h"
#include "cluster/cluster.h"

/* The header of a request relayed by another node (its node id); such a request is never
 * relayed again. */
#define MEM_SRV_REPL_FORWARDED "X-Mnemod-Forwarded"

typedef struct mem_srv_repl mem_srv_repl_t;

typedef struct mem_srv_repl_hdrs {
    const char *authorization; /* sent on when the request is relayed; NULL when none */
    const char *forwarded;     /* X-Mnemod-Forwarded, NULL when none */
    const char *request_id;
} mem_srv_repl_hdrs_t;

typedef void (*mem_srv_repl_done_fn)(void *ud);
/* Serve the request here. query / body: replacements with min_seq cut out (the callee
 * frees them), NULL when unchanged. Loop thread. */
typedef void (*mem_srv_repl_local_fn)(void *ud, char *query, char *body, size_t body_len);

/* Loop thread. 0, or -1 when out of memory. */
int mem_srv_repl_new(uv_loop_t *loop, mem_cluster_t *cl, const mem_api_ctx_t *api,
                     const mem_cfg_t *cfg, mem_srv_repl_t **out);
/* Loop thread, once no request is in flight: close its handles (freed as the loop runs). */
void mem_srv_repl_free(mem_srv_repl_t *rp);

/* Loop thread: route req. Exactly one of local(ud, ...) or, once resp holds the complete
 * answer, done(ud) runs later on the loop thread (never inside this call); req's strings
 * stay valid until then. 0, or -1 when out of memory (nothing started). */
int mem_srv_repl_dispatch(mem_srv_repl_t *rp, const mem_api_req_t *req,
                          const mem_srv_repl_hdrs_t *h, mem_api_resp_t *resp,
                          mem_srv_repl_local_fn local, mem_srv_repl_done_fn done, void *ud);
/* Loop thread: resp->pending goes through the cluster log; never blocks. 0: done(ud) runs
 * later on the loop thread with resp filled from the local apply ("log_seq" added to a 2xx
 * answer). -1: refused at once (over the NATS max_payload, NATS unreachable, too many
 * pending): resp holds the error. */
int mem_srv_repl_write(mem_srv_repl_t *rp, mem_api_resp_t *resp, mem_srv_repl_done_fn done,
                       void *ud);

#endif
