/* replicate.h - cluster mode glue between the HTTP layer and cluster/ (issue 7)
 * SPDX-License-Identifier: MIT
 *
 * Only called when cluster mode is on. Runs on worker threads (it blocks).
 */
#ifndef MEM_SERVER_REPLICATE_H
#define MEM_SERVER_REPLICATE_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"
#include "cluster/cluster.h"

/* Wait until this node applied the log up to seq for ns (min_seq; at most 5 s): MEM_OK,
 * or an error when it did not in time. Blocks: pool threads only. */
int mem_srv_repl_wait(mem_cluster_t *cl, const char *ns, uint64_t seq);
/* resp->pending is set: replicate it through the log, fill the response from the local
 * apply (mem_api_finish) and add "log_seq" to a 2xx JSON answer. */
void mem_srv_repl_write(mem_cluster_t *cl, const mem_api_ctx_t *ctx, mem_api_resp_t *resp);

#endif
