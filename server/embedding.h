/* embedding.h - the server side of a remote embedder (--embedder openai:URL)
 * SPDX-License-Identifier: MIT
 *
 * One request's provider job travels worker -> loop -> worker: the worker that ran the
 * handler encodes the calls (mem_srv_emb_prepare), the loop starts them and waits without
 * holding a thread (mem_srv_emb_start), and a second worker decodes the answers and lets
 * the handler go on (mem_srv_emb_resume). With the built-in embedder there is no
 * mem_srv_emb_t (NULL) and handlers never wait. Owner: server/.
 */
#ifndef MEM_SERVER_EMBEDDING_H
#define MEM_SERVER_EMBEDDING_H

#include <uv.h>

#include "api/api.h"
#include "config/config.h"
#include "embedder/embedder.h"

typedef struct mem_srv_emb mem_srv_emb_t;

/* Loop thread, before serving. --embedder openai:URL: open the provider client on loop,
 * point api at it (embedder_id, embedder_remote, embedder_dim) and start the dimension
 * probe; builtin: *out = NULL. 0, or -1 after printing why to stderr. */
int mem_srv_emb_open(uv_loop_t *loop, const mem_cfg_t *cfg, mem_api_ctx_t *api,
                     mem_srv_emb_t **out);
/* Worker: resp waits for embeddings (resp->embed). Encode its calls into *job; when that
 * fails, resp is resumed with the error at once and *job stays NULL. */
void mem_srv_emb_prepare(mem_srv_emb_t *e, const mem_api_ctx_t *api, mem_api_resp_t *resp,
                         mem_emb_job_t **job);
/* Loop thread: start job; done(job, ud) runs on the loop once it is over (at once when it
 * cannot start because the server is shutting down). */
void mem_srv_emb_start(mem_srv_emb_t *e, mem_emb_job_t *job, mem_emb_done_fn done, void *ud);
/* Worker, after done: count the job, log a failure, resume resp with the vectors or the
 * failure, and free *job (set to NULL). req_id names the request in the log. */
void mem_srv_emb_resume(const mem_api_ctx_t *api, mem_api_resp_t *resp, mem_emb_job_t **job,
                        const char *req_id);
/* Loop thread, at SIGTERM: every job still waiting ends with MEM_EBUSY (503). NULL-safe. */
void mem_srv_emb_cancel_all(mem_srv_emb_t *e);
/* Loop thread, once no request is in flight: release the client; its handles close on the
 * loop's next turns. NULL-safe. */
void mem_srv_emb_close(mem_srv_emb_t *e);

#endif
