/* embedder.h - embedding providers: an OpenAI-compatible POST BASE_URL/embeddings client
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. One mem_emb_t owns libcurl's multi handle and drives it from the libuv loop the
 * way curl's multi-uv.c example does: curl tells us which sockets to watch (a uv_poll_t
 * each) and when to call it back (one uv_timer_t); nothing ever blocks, so a provider that
 * hangs holds neither the loop nor a worker thread. A job embeds the n texts of one request
 * in ceil(n / batch) calls, at most MEM_EMB_PARALLEL of them in flight at once; a 429 or
 * 5xx answer (or a connection that fails) is retried with exponential backoff, honouring
 * Retry-After, until the job's deadline (its start + the timeout). The work is split by
 * thread: request bodies are encoded where the job is made (a worker), the transfers run
 * on the loop, and the answers are decoded where the result is asked for (a worker), so
 * the loop never touches a large JSON document.
 *
 * The provider's dimension is learned from its first answer (a one-text probe at start-up,
 * or the first request's); every later answer must have it, or the job fails.
 *
 * Failures: an error status, a malformed answer, a wrong count or dimension, an answer
 * over MEM_EMB_MAX_ANSWER, an unreachable provider: MEM_EEMBED (502 embedder_error); no
 * answer before the deadline: MEM_EEMBEDTIME (504 embedder_timeout); cancelled at shutdown:
 * MEM_EBUSY. Messages name the provider's status and its own words, or curl's reason; they
 * never contain the key.
 *
 * Owner: the embedder module. server/ is its only user; it includes no project module but
 * core/ and config/.
 */
#ifndef MEM_EMBEDDER_EMBEDDER_H
#define MEM_EMBEDDER_EMBEDDER_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "core/err.h"

#define MEM_EMB_PARALLEL     4   /* calls of one job in flight at once */
#define MEM_EMB_MAX_ATTEMPTS 8   /* per call, retries of 429/5xx/connection failures included */
#define MEM_EMB_BACKOFF_MS   250 /* first retry delay; doubles per attempt, at most 8 s */
/* Largest answer accepted for a call of n texts: n floats of the widest dimension written
 * with 24 characters each, plus 1 MiB of envelope. */
#define MEM_EMB_MAX_ANSWER(n) ((size_t)(n)*4096u * 24u + (1u << 20))

typedef struct mem_emb mem_emb_t;
typedef struct mem_emb_job mem_emb_job_t;

typedef struct mem_emb_opts {
    const char *url;   /* base URL, no trailing '/': calls go to url + "/embeddings" */
    const char *model; /* sent as "model" */
    const char *key;   /* sent as "Authorization: Bearer KEY"; NULL or "" for none */
    double timeout_s;  /* a job's budget, from its start, retries included */
    size_t batch;      /* texts per call, >= 1 */
} mem_emb_opts_t;

/* Loop thread, before any job: set up curl and the handles on loop. Copies opts.
 * MEM_OK, MEM_ENOMEM, MEM_EINVAL (opts). */
int mem_emb_open(uv_loop_t *loop, const mem_emb_opts_t *opts, mem_emb_t **out, mem_err_t *err);
/* Loop thread: fail every job still running with MEM_EBUSY ("shutting down"), their done
 * callbacks included (they run before this returns); no job may start afterwards. */
void mem_emb_cancel_all(mem_emb_t *e);
/* Loop thread, after every job was freed or cancelled: release curl and close the handles
 * (uv_close: the loop must run once more before uv_loop_close). NULL-safe. */
void mem_emb_close(mem_emb_t *e);
/* The provider's dimension, 0 until an answer taught it. Any thread. */
size_t mem_emb_dim(mem_emb_t *e);

/* Any thread (encodes the call bodies: keep large jobs off the loop). The n texts (lens[i]
 * bytes each, valid UTF-8) are borrowed until mem_emb_job_free. MEM_OK, MEM_ENOMEM,
 * MEM_EINVAL (n == 0). */
int mem_emb_job_new(mem_emb_t *e, const char *const *texts, const size_t *lens, size_t n,
                    mem_emb_job_t **out, mem_err_t *err);
/* Called on the loop thread once every call has answered, or the job has failed. */
typedef void (*mem_emb_done_fn)(mem_emb_job_t *job, void *ud);
/* Loop thread: start the calls (the deadline counts from now). MEM_OK: done runs exactly
 * once, on the loop thread; normally later, from a socket or timer callback, but already
 * within this call when not even the first call could be set up (out of memory). MEM_EBUSY
 * (shutting down): done is never called, and mem_emb_job_result reports the same. */
int mem_emb_job_start(mem_emb_job_t *job, mem_emb_done_fn done, void *ud);
/* After done, any thread (decodes the answers): MEM_OK with *vecs = n vectors of *dim floats
 * (owned by the job), or the job's failure with err set. The first successful answer fixes
 * the provider's dimension. */
int mem_emb_job_result(mem_emb_job_t *job, const float **vecs, size_t *dim, mem_err_t *err);
/* After done: calls made (retries included), retries, and seconds from start to done. */
void mem_emb_job_counts(const mem_emb_job_t *job, size_t *calls, size_t *retries, double *seconds);
/* Any thread, after done, or before start. NULL-safe. */
void mem_emb_job_free(mem_emb_job_t *job);

/* Loop thread: embed one short text to learn the provider's dimension; done(rc, dim, err,
 * ud) runs on the loop thread (rc MEM_OK with the dimension, or the failure). */
typedef void (*mem_emb_probe_fn)(int rc, size_t dim, const mem_err_t *err, void *ud);
void mem_emb_probe(mem_emb_t *e, mem_emb_probe_fn done, void *ud);

/* ---- the wire protocol (pure: no I/O; wire.c) ---- */

/* The body of one call: {"model":model,"input":[texts...]}. malloc'd (*len bytes, NUL
 * terminated); NULL on ENOMEM or when a text is not valid UTF-8. */
char *mem_emb_encode(const char *model, const char *const *texts, const size_t *lens, size_t n,
                     size_t *len);
/* Decode the answer to a call of n inputs: {"data":[{"index":i,"embedding":E},...]} where E
 * is an array of numbers or the base64 of little-endian float32s; entries may come in any
 * order ("index" names each one's input; without any "index" the order is the inputs').
 * want_dim 0 accepts any dimension in 1..4096 shared by all. MEM_OK with *vecs (n * *dim
 * floats in input order, malloc'd); MEM_EEMBED naming the problem (or MEM_ENOMEM). */
int mem_emb_decode(const char *body, size_t len, size_t n, size_t want_dim, float **vecs,
                   size_t *dim, mem_err_t *err);
/* The provider's own words in an error answer ("error.message", "error", "message" or
 * "detail"; else the first line of a non-JSON answer), made printable ASCII and cut to
 * cap - 1 bytes; "" when there are none. */
void mem_emb_error_text(const char *body, size_t len, char *out, size_t cap);

/* Seconds a Retry-After header value asks for (delay-seconds, or an HTTP date against
 * now_s, through curl_getdate); -1 when it is neither. provider.c. */
double mem_emb_retry_after(const char *value, double now_s);

#endif
