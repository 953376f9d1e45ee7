/* replicate.c - cluster mode glue between the HTTP layer and cluster/
 * SPDX-License-Identifier: MIT
 *
 * api/ routes every request (the cluster routes and min_seq included) and asks for a
 * MEM_API_WAIT or MEM_API_WRITE step; these are those steps in cluster mode.
 */
#include "server/replicate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SEQ_WAIT_MS 5000

int mem_srv_repl_wait(mem_cluster_t *cl, const char *ns, uint64_t seq)
{
    return mem_cluster_wait(cl, ns, seq, MIN_SEQ_WAIT_MS);
}

void mem_srv_repl_write(mem_cluster_t *cl, const mem_api_ctx_t *ctx, mem_api_resp_t *resp)
{
    mem_store_op_t *op = resp->pending;
    uint64_t log_seq = 0;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_cluster_write(cl, op, &log_seq, &err);
    if (rc == MEM_CLUSTER_CONFLICT) { /* 409 write_conflict, with the cluster's message */
        err.code = MEM_ECONFLICT;
        err.field[0] = '\0';
        mem_api_error(resp, &err);
        return;
    }
    mem_api_finish(ctx, resp);
    if (log_seq && resp->status >= 200 && resp->status < 300 && resp->body && resp->body_len >= 2 &&
        resp->body[0] == '{' && strcmp(resp->route, "mcp") != 0) {
        char pre[48];
        int n = snprintf(pre, sizeof(pre), "{\"log_seq\":%llu%s", (unsigned long long)log_seq,
                         resp->body[1] == '}' ? "" : ",");
        char *b = malloc(resp->body_len + (size_t)n);
        if (b) {
            memcpy(b, pre, (size_t)n);
            memcpy(b + n, resp->body + 1, resp->body_len - 1);
            free(resp->body);
            resp->body = b;
            resp->body_len = resp->body_len - 1 + (size_t)n;
        }
    }
}
