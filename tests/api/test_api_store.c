/* test_api_store.c - the API end to end over the real store: handle -> submit -> finish
 * SPDX-License-Identifier: MIT
 *
 * Built by mk/api.mk only when storage/ is in the tree (as build/<flavor>/tests/unit/
 * test_api_store, so scripts/run-tests.sh runs it). Plays server/: mem_api_handle, then for
 * a pending write mem_store_submit and, once the done callback ran, mem_api_finish.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// clang-format off
#include <cmocka.h>
// clang-format on
#include <jansson.h>

#include "api/api.h"

#define NOW_MS INT64_C(1785490200000) /* 2026-07-31T09:30:00.000Z */

static char dir[64], dbpath[128];
static mem_store_t *st;
static mem_cfg_t cfg;
static mem_api_ctx_t ctx;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done_count;

static int64_t now_ms(void)
{
    return NOW_MS;
}

static void on_done(mem_store_op_t *op, void *ud)
{
    pthread_mutex_lock(&mu);
    done_count++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

/* One request through the API and, for writes, the store's writer. */
static void run(const char *method, const char *path, const char *query, const char *body,
                mem_api_resp_t *r)
{
    memset(r, 0, sizeof(*r));
    mem_api_req_t req = {.method = method,
                         .path = path,
                         .query = query ? query : "",
                         .content_type = "application/json",
                         .body = body,
                         .body_len = body ? strlen(body) : 0};
    mem_api_handle(&ctx, &req, r);
    if (!r->pending) return;
    pthread_mutex_lock(&mu);
    int before = done_count;
    pthread_mutex_unlock(&mu);
    assert_int_equal(mem_store_submit(st, r->pending, on_done, NULL), MEM_OK);
    pthread_mutex_lock(&mu);
    while (done_count == before)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    mem_api_finish(&ctx, r);
}

/* Run, check the status, return the body as JSON (new reference). */
static json_t *expect(const char *method, const char *path, const char *body, int status)
{
    mem_api_resp_t r;
    run(method, path, NULL, body, &r);
    if (r.status != status)
        fail_msg("%s %s %s: want %d, got %d %.*s", method, path, body ? body : "", status, r.status,
                 (int)r.body_len, r.body ? r.body : "");
    json_t *j = json_loadb(r.body, r.body_len, 0, NULL);
    assert_non_null(j);
    mem_api_resp_deinit(&r);
    return j;
}

static const char *err_code(json_t *j)
{
    return json_string_value(json_object_get(json_object_get(j, "error"), "code"));
}

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/mnemod-api-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
    mem_store_opts_t o = {.path = dbpath,
                          .sync_full = false,
                          .coherence_threshold = 0.55f,
                          .max_namespaces = 100,
                          .max_queue = 1000,
                          .ops = mem_vec_ops()};
    mem_err_t err;
    mem_err_clear(&err);
    if (mem_store_open(&o, &st, &err) != MEM_OK) fail_msg("open: %s", err.msg);
    memset(&cfg, 0, sizeof(cfg));
    cfg.decay.kind = MEM_DECAY_EXPONENTIAL;
    cfg.decay.recency_bias = 1.0;
    cfg.decay.shape = 1.5;
    cfg.embed_dim = 256;
    cfg.max_batch = 1000;
    cfg.max_future_skew_s = 300;
    ctx = (mem_api_ctx_t){.store = st, .cfg = &cfg, .ops = mem_vec_ops(), .now_ms = now_ms};
    return 0;
}

static int teardown(void **state)
{
    mem_store_close(st);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#define NS "/v1/namespaces/notes"

static void test_session(void **state)
{
    json_t *j;
    j = expect("PUT", NS, "{\"dim\":3}", 201);
    json_decref(j);
    json_decref(expect("PUT", NS, "{\"dim\":3}", 200));
    j = expect("PUT", NS, "{\"dim\":4}", 409);
    assert_string_equal(err_code(j), "namespace_exists");
    json_decref(j);

    /* three memories a few days apart */
    j = expect("POST", NS "/segments",
               "{\"segments\":["
               "{\"id\":\"old\",\"text\":\"the wifi password is hunter2\",\"embedding\":[1,0,0],"
               "\"timestamp\":\"2026-07-01T09:00:00Z\",\"source\":\"chat\"},"
               "{\"id\":\"mid\",\"text\":\"wifi password rotated\",\"embedding\":[0.9,0.1,0],"
               "\"timestamp\":\"2026-07-20T09:00:00Z\",\"metadata\":{\"by\":\"ops\"}},"
               "{\"id\":\"new\",\"text\":\"the new wifi password is swordfish\","
               "\"embedding\":[0.8,0.2,0],\"timestamp\":\"2026-07-30T09:00:00Z\","
               "\"supersedes\":[\"old\"]}]}",
               201);
    json_t *ins = json_object_get(j, "inserted");
    assert_int_equal(json_array_size(ins), 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ins, 0), "seq")), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ins, 2), "timestamp")),
                        "2026-07-30T09:00:00.000Z");
    json_decref(j);
    /* idempotent retry */
    j = expect("POST", NS "/segments",
               "{\"id\":\"mid\",\"text\":\"wifi password rotated\",\"embedding\":[0.9,0.1,0],"
               "\"timestamp\":\"2026-07-20T09:00:00Z\",\"metadata\":{\"by\":\"ops\"}}",
               200);
    assert_int_equal(json_integer_value(
                         json_object_get(json_array_get(json_object_get(j, "inserted"), 0), "seq")),
                     2);
    json_decref(j);
    j = expect("POST", NS "/segments", "{\"id\":\"mid\",\"embedding\":[0,1,0]}", 409);
    assert_string_equal(err_code(j), "duplicate_id");
    json_decref(j);
    j = expect("POST", NS "/segments",
               "{\"embedding\":[0,1,0],\"timestamp\":\"2026-07-02T00:00:00Z\"}", 409);
    assert_string_equal(err_code(j), "non_monotonic_timestamp");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(j, "error"), "last_timestamp")),
        "2026-07-30T09:00:00.000Z");
    json_decref(j);
    j = expect("POST", NS "/segments", "{\"embedding\":[0,1,0],\"supersedes\":[\"nope\"]}", 400);
    assert_string_equal(err_code(j), "unknown_id");
    json_decref(j);

    /* reads */
    j = expect("GET", NS "/segments/new", NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "text")),
                        "the new wifi password is swordfish");
    json_decref(j);
    j = expect("GET", NS "/segments/old", NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "superseded_by")), "new");
    json_decref(j);
    j = expect("GET", NS, NULL, 200);
    assert_int_equal(json_integer_value(json_object_get(j, "count")), 3);
    assert_int_equal(json_integer_value(json_object_get(j, "superseded")), 1);
    json_decref(j);

    /* plain cosine: "mid" is closest to [1,0,0]; "old" is superseded and skipped */
    j = expect("POST", NS "/retrieve", "{\"embedding\":[1,0,0],\"k\":2}", 200);
    json_t *res = json_object_get(j, "results");
    assert_int_equal(json_array_size(res), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "id")), "mid");
    json_decref(j);
    /* a one-day half-life prefers the newest */
    j = expect("POST", NS "/retrieve",
               "{\"embedding\":[1,0,0],\"k\":3,\"half_life\":\"1d\",\"explain\":true,"
               "\"include_superseded\":true}",
               200);
    res = json_object_get(j, "results");
    assert_int_equal(json_array_size(res), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "id")), "new");
    assert_non_null(json_object_get(json_array_get(res, 0), "age_seconds"));
    json_decref(j);
    /* as_of before the newest memory */
    j = expect("POST", NS "/retrieve", "{\"embedding\":[1,0,0],\"as_of\":\"2026-07-25T00:00:00Z\"}",
               200);
    res = json_object_get(j, "results");
    assert_int_equal(json_array_size(res), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "id")), "mid");
    json_decref(j);
    j = expect("POST", "/v1/namespaces/nope/retrieve", "{\"embedding\":[1,0,0]}", 404);
    json_decref(j);

    /* text only: a new namespace gets the embedder's dimension */
    json_decref(
        expect("POST", "/v1/namespaces/t/segments", "{\"text\":\"buy oat milk on friday\"}", 201));
    json_decref(
        expect("POST", "/v1/namespaces/t/segments", "{\"text\":\"call the dentist\"}", 201));
    j = expect("POST", "/v1/namespaces/t/retrieve", "{\"query\":\"milk\",\"k\":1}", 200);
    res = json_object_get(j, "results");
    assert_string_equal(json_string_value(json_object_get(json_array_get(res, 0), "text")),
                        "buy oat milk on friday");
    json_decref(j);
    j = expect("GET", "/v1/namespaces/t", NULL, 200);
    assert_int_equal(json_integer_value(json_object_get(j, "dim")), 256);
    json_decref(j);
    j = expect("POST", "/v1/namespaces/t/segments", "{\"embedding\":[1,0,0]}", 400);
    assert_string_equal(err_code(j), "dimension_mismatch");
    json_decref(j);

    /* compaction: active = mid, new */
    j = expect("POST", NS "/compact", "{\"target\":1,\"dry_run\":true}", 200);
    assert_int_equal(json_integer_value(json_object_get(j, "before")), 2);
    assert_int_equal(json_array_size(json_object_get(j, "evicted")), 1);
    json_decref(j);
    j = expect("POST", NS "/compact", "{\"target\":1}", 200);
    assert_int_equal(json_integer_value(json_object_get(j, "after")), 1);
    json_decref(j);
    j = expect("GET", NS, NULL, 200);
    assert_int_equal(json_integer_value(json_object_get(j, "archived")), 1);
    json_decref(j);

    /* forget and drop */
    j = expect("DELETE", NS "/segments/new", NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "deleted")), "new");
    json_decref(j);
    json_decref(expect("GET", NS "/segments/new", NULL, 404));
    json_decref(expect("GET", "/v1/namespaces", NULL, 200));
    j = expect("DELETE", NS, NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "deleted")), "notes");
    json_decref(j);
    json_decref(expect("GET", NS, NULL, 404));
}

/* The MCP result of j, which must not be a tool error (printed when it is). */
static json_t *tool_ok(json_t *j)
{
    json_t *res = json_object_get(j, "result");
    if (!json_is_false(json_object_get(res, "isError"))) {
        char *s = json_dumps(j, JSON_COMPACT), msg[600];
        snprintf(msg, sizeof(msg), "%s", s ? s : "?");
        free(s);
        fail_msg("tool error: %s", msg);
    }
    return res;
}

static void test_mcp_over_store(void **state)
{
    json_t *j = expect("POST", "/mcp",
                       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                       "\"name\":\"memory_insert\",\"arguments\":{\"text\":\"the cat is called "
                       "Miso\"}}}",
                       200);
    json_t *res = tool_ok(j);
    assert_non_null(json_object_get(json_object_get(res, "structuredContent"), "inserted"));
    json_decref(j);
    j = expect("POST", "/mcp",
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
               "\"name\":\"memory_retrieve\",\"arguments\":{\"query\":\"cat name\"}}}",
               200);
    res = json_object_get(tool_ok(j), "structuredContent");
    assert_string_equal(json_string_value(json_object_get(res, "namespace")), "default");
    assert_int_equal(json_array_size(json_object_get(res, "results")), 1);
    json_decref(j);
    j = expect("POST", "/mcp",
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
               "\"name\":\"memory_forget\",\"arguments\":{\"id\":\"nope\"}}}",
               200);
    assert_true(json_is_true(json_object_get(json_object_get(j, "result"), "isError")));
    json_decref(j);
}

/* The writer only hands results back: an answer encoded in its done callback (where a
 * server that encoded there would hold up every queued write) is refused, and the same op's
 * answer encoded on another thread afterwards is the real one. */
static mem_api_resp_t *on_writer_resp;
static int on_writer_status;
static bool on_writer_seen;

static void finish_on_writer(mem_store_op_t *op, void *ud)
{
    bool seen = mem_store_on_writer_thread(); /* asserted on the test's thread */
    mem_api_finish(&ctx, on_writer_resp);
    pthread_mutex_lock(&mu);
    on_writer_seen = seen;
    on_writer_status = on_writer_resp->status;
    done_count++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

static void test_answers_are_encoded_off_the_writer(void **state)
{
    assert_false(mem_store_on_writer_thread());
    json_decref(expect("PUT", "/v1/namespaces/w", "{\"dim\":3}", 201));
    mem_api_resp_t r;
    memset(&r, 0, sizeof(r));
    const char *body = "{\"id\":\"x\",\"embedding\":[1,0,0]}";
    mem_api_req_t req = {.method = "POST",
                         .path = "/v1/namespaces/w/segments",
                         .query = "",
                         .content_type = "application/json",
                         .body = body,
                         .body_len = strlen(body)};
    mem_api_handle(&ctx, &req, &r);
    assert_non_null(r.pending);
    on_writer_resp = &r;
    pthread_mutex_lock(&mu);
    int before = done_count;
    pthread_mutex_unlock(&mu);
    assert_int_equal(mem_store_submit(st, r.pending, finish_on_writer, NULL), MEM_OK);
    pthread_mutex_lock(&mu);
    while (done_count == before)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    assert_true(on_writer_seen);
    assert_int_equal(on_writer_status, 500);
    assert_non_null(strstr(r.body, "encoded on the writer"));
    mem_api_resp_deinit(&r);
    /* the write itself went through; a retry answers it from this thread */
    json_t *j = expect("POST", "/v1/namespaces/w/segments", body, 200);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mcp_over_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answers_are_encoded_off_the_writer, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
