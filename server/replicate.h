/* replicate.h - cluster mode: every request, routed to the nodes holding its namespace
 * SPDX-License-Identifier: MIT
 *
 * Only used when cluster mode is on. api/ routes and checks each request on its head
 * (key, Host, Content-Type); once the body is in, the loop thread hands it to
 * mem_srv_repl_dispatch, which decides from api/'s mem_api_target where it is served: here
 * (the caller runs its steps as in single-node mode, and hands the write a step produces
 * to mem_srv_repl_write instead of the store), at a holder of its namespace (relayed by
 * server/forward.c on the loop), or by every node (GET /v1/namespaces, merged).
 */
#ifndef MEM_SERVER_REPLICATE_H
#define MEM_SERVER_REPLICATE_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "api/api.h"
#include "cluster/cluster.h"

/* The header of a request relayed by another node (its node id); such a request is never
 * relayed again. */
#define MEM_SRV_REPL_FORWARDED "X-Mnemod-Forwarded"

typedef struct mem_srv_repl mem_srv_repl_t;

/* Loop thread: the request goes on (local) or is answered (done). */
typedef void (*mem_srv_repl_fn)(void *ud);

/* Loop thread. 0, or -1 when out of memory. */
int mem_srv_repl_new(uv_loop_t *loop, mem_cluster_t *cl, const mem_api_ctx_t *api,
                     const mem_cfg_t *cfg, mem_srv_repl_t **out);
/* Loop thread, once no request is in flight: close its handles (freed as the loop runs). */
void mem_srv_repl_free(mem_srv_repl_t *rp);

/* Loop thread, the body in and mem_api_begin having asked for it: route req. Exactly one
 * of local(ud) (serve it here: run its MEM_API_WORK step) or, once resp holds the complete
 * answer, done(ud) runs later on the loop thread (never inside this call); req's strings
 * stay valid until then. 0, or -1 when out of memory (nothing started). */
int mem_srv_repl_dispatch(mem_srv_repl_t *rp, const mem_api_req_t *req, const char *request_id,
                          mem_api_resp_t *resp, mem_srv_repl_fn local, mem_srv_repl_fn done,
                          void *ud);
/* Loop thread: resp->pending goes through the cluster log; never blocks. 0: done(ud) runs
 * later on the loop thread with resp filled from the local apply ("log_seq" added to a 2xx
 * answer). -1: refused at once (over the NATS max_payload, NATS unreachable, too many
 * pending): resp holds the error. */
int mem_srv_repl_write(mem_srv_repl_t *rp, mem_api_resp_t *resp, mem_srv_repl_fn done, void *ud);
/* Loop thread (MEM_API_WAIT): wait, holding no thread, until this node applied the log up to
 * seq for ns (min_seq; at most 5 s). 0: done(ud, reached) runs later on the loop thread;
 * -1: could not start (out of memory, closing). */
typedef void (*mem_srv_repl_waited_fn)(void *ud, bool reached);
int mem_srv_repl_wait(mem_srv_repl_t *rp, const char *ns, uint64_t seq, mem_srv_repl_waited_fn done,
                      void *ud);

#endif
