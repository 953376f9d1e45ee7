/* replicate.h - cluster mode glue between the HTTP layer and cluster/ (issue 7)
 * SPDX-License-Identifier: MIT
 *
 * Only called when cluster mode is on. Runs on worker threads (it blocks).
 */
#ifndef MEM_SERVER_REPLICATE_H
#define MEM_SERVER_REPLICATE_H

#include <stdbool.h>

#include "api/api.h"
#include "cluster/cluster.h"

/* Before routing: answers GET /v1/cluster; takes "min_seq" out of the query string or the
 * JSON body of a /v1/namespaces/{ns}... request and waits until this node applied that far
 * (503 after 5 s). May point req->query / req->body at new malloc'd strings, recorded in
 * *owned_query / *owned_body for the caller to free. true: resp is complete. */
bool mem_srv_repl_before(mem_cluster_t *cl, mem_api_req_t *req, char **owned_query,
                         char **owned_body, mem_api_resp_t *resp);
/* resp->pending is set: replicate it through the log, fill the response from the local
 * apply (mem_api_finish) and add "log_seq" to a 2xx JSON answer. */
void mem_srv_repl_write(mem_cluster_t *cl, const mem_api_ctx_t *ctx, mem_api_resp_t *resp);

#endif
