/* replicate.h - cluster mode: every request, routed to the nodes holding its namespace
 * SPDX-License-Identifier: MIT
 *
 * Only used when cluster mode is on. The loop thread hands each request (its connection
 * suspended) to mem_srv_repl_dispatch, which serves it here (handlers on the libuv pool,
 * writes through cluster/ without holding a pool thread), relays it to a holder of its
 * namespace (server/forward.c, on the loop), or merges answers from every node (GET
 * /v1/namespaces), then calls done on the loop thread.
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

/* Loop thread. 0, or -1 when out of memory. */
int mem_srv_repl_new(uv_loop_t *loop, mem_cluster_t *cl, const mem_api_ctx_t *api,
                     const mem_cfg_t *cfg, mem_srv_repl_t **out);
/* Loop thread, once no request is in flight: close its handles (freed as the loop runs). */
void mem_srv_repl_free(mem_srv_repl_t *rp);

/* Loop thread: serve req. resp gets the complete answer, then done(ud) runs on the loop
 * thread, later (never inside this call); req's strings stay valid until then. 0, or -1
 * when out of memory (nothing started, done never called). */
int mem_srv_repl_dispatch(mem_srv_repl_t *rp, const mem_api_req_t *req,
                          const mem_srv_repl_hdrs_t *h, mem_api_resp_t *resp,
                          mem_srv_repl_done_fn done, void *ud);

#endif
