/* embedding.c - the server side of a remote embedder: open, probe, jobs, metrics, logs
 * SPDX-License-Identifier: MIT
 */
#include "server/embedding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/log.h"
#include "server/metrics.h"
#include "storage/store.h"

struct mem_srv_emb {
    mem_emb_t *client;
    const mem_cfg_t *cfg;
    char id[MEM_STORE_EMBEDDER_MAX + 1]; /* "openai:MODEL", what namespaces record */
};

static size_t provider_dim(void *ud)
{
    return mem_emb_dim(ud);
}

/* A message as a log value: its double quotes become single ones. */
static void log_safe(char *dst, size_t n, const char *msg)
{
    snprintf(dst, n, "%s", msg);
    for (char *p = dst; *p; p++)
        if (*p == '"') *p = '\'';
}

static void on_probe(int rc, size_t dim, const mem_err_t *err, void *ud)
{
    mem_srv_emb_t *e = ud;
    char msg[sizeof(err->msg)];
    if (rc == MEM_OK) {
        mem_srv_log(MEM_LOG_INFO, "embedder_ready", "url=%s model=%s dim=%zu", e->cfg->embedder_url,
                    e->cfg->embedder_model, dim);
    } else if (rc != MEM_EBUSY) { /* the first answer to a request will set the dimension */
        log_safe(msg, sizeof(msg), err->msg);
        mem_srv_log(MEM_LOG_WARN, "embedder_unavailable", "url=%s model=%s code=%s msg=\"%s\"",
                    e->cfg->embedder_url, e->cfg->embedder_model, mem_err_wire(rc), msg);
    }
}

int mem_srv_emb_open(uv_loop_t *loop, const mem_cfg_t *cfg, mem_api_ctx_t *api, mem_srv_emb_t **out)
{
    *out = NULL;
    if (cfg->embedder != MEM_CFG_EMBEDDER_OPENAI) return 0;
    mem_srv_emb_t *e = calloc(1, sizeof(*e));
    if (!e) {
        mem_srv_log_fail("embedder_failed", "cannot set up the embedder: out of memory");
        return -1;
    }
    mem_emb_opts_t eo = {.url = cfg->embedder_url,
                         .model = cfg->embedder_model,
                         .key = cfg->embedder_key,
                         .timeout_s = cfg->embedder_timeout_s,
                         .batch = cfg->embedder_batch};
    mem_err_t err;
    mem_err_clear(&err);
    if (mem_emb_open(loop, &eo, &e->client, &err) != MEM_OK) {
        mem_srv_log_fail("embedder_failed", "cannot set up the embedder: %s", err.msg);
        free(e);
        return -1;
    }
    e->cfg = cfg;
    snprintf(e->id, sizeof(e->id), "openai:%s", cfg->embedder_model);
    api->embedder_id = e->id;
    api->embedder_remote = true;
    api->embedder_dim = provider_dim;
    api->embedder_ud = e->client;
    mem_emb_probe(e->client, on_probe, e);
    *out = e;
    return 0;
}

void mem_srv_emb_prepare(mem_srv_emb_t *e, const mem_api_ctx_t *api, mem_api_resp_t *resp,
                         mem_emb_job_t **job)
{
    mem_err_t err;
    mem_err_clear(&err);
    const mem_api_embed_t *em = resp->embed;
    int rc = e ? mem_emb_job_new(e->client, em->texts, em->lens, em->n, job, &err)
               : mem_err_set(&err, MEM_EEMBED, "embedder: no provider is configured");
    if (rc != MEM_OK) {
        *job = NULL;
        mem_api_resume(api, resp, NULL, 0, &err);
    }
}

void mem_srv_emb_start(mem_srv_emb_t *e, mem_emb_job_t *job, mem_emb_done_fn done, void *ud)
{
    if (mem_emb_job_start(job, done, ud) != MEM_OK) done(job, ud); /* shutting down */
}

void mem_srv_emb_resume(const mem_api_ctx_t *api, mem_api_resp_t *resp, mem_emb_job_t **job,
                        const char *req_id)
{
    const float *vecs = NULL;
    size_t dim = 0, calls = 0, retries = 0;
    double secs = 0;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_emb_job_result(*job, &vecs, &dim, &err);
    mem_emb_job_counts(*job, &calls, &retries, &secs);
    mem_srv_metrics_observe_embedder(rc, calls, retries, secs);
    if (rc != MEM_OK && rc != MEM_EBUSY) {
        char msg[sizeof(err.msg)];
        log_safe(msg, sizeof(msg), err.msg);
        mem_srv_log(MEM_LOG_WARN, "embedder_failed",
                    "id=%s code=%s calls=%zu seconds=%.3f msg=\"%s\"", req_id, mem_err_wire(rc),
                    calls, secs, msg);
    }
    mem_api_resume(api, resp, vecs, dim, rc == MEM_OK ? NULL : &err);
    mem_emb_job_free(*job);
    *job = NULL;
}

void mem_srv_emb_cancel_all(mem_srv_emb_t *e)
{
    if (e) mem_emb_cancel_all(e->client);
}

void mem_srv_emb_close(mem_srv_emb_t *e)
{
    if (!e) return;
    mem_emb_close(e->client);
    free(e);
}
