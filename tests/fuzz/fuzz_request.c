/* fuzz_request.c - libFuzzer target: whole requests through mem_api_handle over a real store
 * SPDX-License-Identifier: MIT
 *
 * An input is up to 8 requests separated by NUL bytes. Each request is a first line
 * "METHOD /path[?query] [content-type]" and the body after it. Writes are submitted to the
 * real SQLite-backed store (in a temporary directory, synchronous=NORMAL) and finished on
 * the writer thread exactly as server/ does, so a sequence can create a namespace, insert,
 * supersede, retrieve, compact and delete. The store is reopened from scratch every
 * RESET_EVERY inputs to bound its size (and that reload is itself exercised).
 *
 * Findings: a crash, a leak, a sanitizer report, any 5xx, a status outside
 * SPEC section 3, a body that is not JSON, or an error body without code and message.
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api/api.h"
#include "core/vec.h"
#include "storage/store.h"
#include "tests/fuzz/fuzz_common.h"

#define NOW_MS      INT64_C(1785490200000) /* 2026-07-31T09:30:00Z */
#define RESET_EVERY 500
#define MAX_REQS    8

static mem_cfg_t cfg;
static mem_api_ctx_t ctx;
static mem_store_t *store;
static char dir[64], path[96];
static unsigned long runs;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool done;

static int64_t fixed_now(void)
{
    return NOW_MS;
}

static void rm_files(void)
{
    static const char *const SUFFIX[] = {"", "-wal", "-shm", "-journal"};
    char p[128];
    for (size_t i = 0; i < sizeof(SUFFIX) / sizeof(SUFFIX[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", path, SUFFIX[i]);
        unlink(p);
    }
}

static void open_store(void)
{
    mem_store_opts_t o = {
        .path = path,
        .sync_full = false,
        .coherence_threshold = (float)cfg.coherence_threshold,
        .max_namespaces = cfg.max_namespaces,
        .max_queue = cfg.max_queue,
        .ops = mem_vec_ops(),
    };
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_store_open(&o, &store, &err);
    FUZZ_CHECK(rc == MEM_OK, "cannot open the store %s: %s", path, err.msg);
    ctx.store = store;
}

static void cleanup(void)
{
    mem_store_close(store);
    store = NULL;
    rm_files();
    rmdir(dir);
}

/* What server/ renders for GET /metrics is not the API's business: any Prometheus text. */
static char *fuzz_metrics(void *ud, mem_store_t *st, size_t *len)
{
    (void)ud;
    (void)st;
    char *text = strdup("mnemod_up 1\n");
    *len = text ? strlen(text) : 0;
    return text;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    mem_cfg_defaults(&cfg);
    cfg.embed_dim = 16;
    cfg.max_batch = 64;
    cfg.max_namespaces = 8;
    mem_vec_init(mem_vec_best_isa());
    ctx.cfg = &cfg;
    ctx.ops = mem_vec_ops();
    ctx.now_ms = fixed_now;
    ctx.hooks.metrics = fuzz_metrics;
    /* tmpfs when there is one: the target commits on every write */
    snprintf(dir, sizeof(dir), "%s/mnemod-fuzz-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    FUZZ_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof(path), "%s/fuzz.db", dir);
    open_store();
    atexit(cleanup);
    return 0;
}

static void on_done(mem_store_op_t *op, void *ud)
{
    (void)ud; /* the answer is encoded back on the fuzzing thread, as server/ does */
    pthread_mutex_lock(&mu);
    done = true;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

static bool known_status(int st)
{
    /* no 503: the writer is idle and ASan aborts rather than return NULL, so "unavailable"
     * here can only be a client request mapped to the wrong status */
    static const int OK[] = {200, 201, 202, 400, 401, 404, 405, 409, 413, 415};
    for (size_t i = 0; i < sizeof(OK) / sizeof(OK[0]); i++)
        if (st == OK[i]) return true;
    return false;
}

static void one(const char *req_txt, size_t len)
{
    const char *nl = memchr(req_txt, '\n', len);
    size_t ll = nl ? (size_t)(nl - req_txt) : len;
    char line[512];
    if (ll >= sizeof(line)) return;
    memcpy(line, req_txt, ll);
    line[ll] = '\0';
    char *method = line, *target = strchr(line, ' ');
    if (!target) return;
    *target++ = '\0';
    char *ctype = strchr(target, ' ');
    if (ctype) *ctype++ = '\0';
    char *query = strchr(target, '?');
    if (query) *query++ = '\0';
    const char *body = nl ? nl + 1 : req_txt + len;
    size_t blen = nl ? len - ll - 1 : 0;
    char *b = fuzz_dup((const uint8_t *)body, blen, 0);

    mem_api_req_t req = {.method = method,
                         .path = target,
                         .query = query ? query : "",
                         .content_type = ctype ? ctype : (blen ? "application/json" : NULL),
                         .body = b,
                         .body_len = blen};
    mem_api_resp_t resp;
    memset(&resp, 0, sizeof(resp));
    mem_api_handle(&ctx, &req, &resp);
    if (resp.pending) {
        done = false;
        int rc = mem_store_submit(store, resp.pending, on_done, &resp);
        FUZZ_CHECK(rc == MEM_OK, "submit gave %d with an idle writer", rc);
        pthread_mutex_lock(&mu);
        while (!done)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        mem_api_finish(&ctx, &resp);
    }
    FUZZ_CHECK(known_status(resp.status), "status %d for %s %s: %.*s", resp.status, method, target,
               (int)(resp.body_len < 300 ? resp.body_len : 300), resp.body ? resp.body : "");
    bool json_answer =
        !resp.content_type || strncmp(resp.content_type, "application/json", 16) == 0;
    if (!json_answer) {
        /* only the console's static files and the Prometheus text of /metrics answer in
         * another type, and only with 200 */
        bool console = strncmp(target, "/console", 8) == 0;
        bool metrics =
            strcmp(target, "/metrics") == 0 && strncmp(resp.content_type, "text/plain", 10) == 0;
        FUZZ_CHECK(resp.status == 200 && (console || metrics) && resp.body_len,
                   "status %d, %s for %s %s", resp.status, resp.content_type, method, target);
    } else if (resp.status != 202) {
        FUZZ_CHECK(resp.body && resp.body_len, "status %d without a body", resp.status);
        json_error_t je;
        json_t *j = json_loadb(resp.body, resp.body_len, 0, &je);
        FUZZ_CHECK(j != NULL, "response is not JSON (%s): %.*s", je.text,
                   (int)(resp.body_len < 300 ? resp.body_len : 300), resp.body);
        if (resp.status >= 400 && strcmp(target, "/mcp") != 0) {
            json_t *e = json_object_get(j, "error");
            FUZZ_CHECK(json_is_string(json_object_get(e, "code")) &&
                           json_is_string(json_object_get(e, "message")),
                       "error body without code/message: %.*s", (int)resp.body_len, resp.body);
        }
        json_decref(j);
    }
    mem_api_resp_deinit(&resp);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (++runs % RESET_EVERY == 0) {
        mem_store_close(store);
        rm_files();
        open_store();
    }
    const char *p = (const char *)data, *end = p + size;
    for (int n = 0; n < MAX_REQS && p < end; n++) {
        const char *z = memchr(p, '\0', (size_t)(end - p));
        size_t len = z ? (size_t)(z - p) : (size_t)(end - p);
        one(p, len);
        p += len + 1;
    }
    return 0;
}
