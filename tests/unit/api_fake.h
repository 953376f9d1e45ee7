/* api_fake.h - an in-memory stand-in for the storage read API, for api/ tests
 * SPDX-License-Identifier: MIT
 *
 * Included by exactly one test file per binary. The fakes are weak: the linker resolves the
 * api's calls to them and never pulls storage/ objects out of libmnemod.a for those names
 * (a defined weak symbol is not an undefined one), so the tests run the same before and
 * after storage/ is merged. Writes are not faked: a test plays the writer by filling the
 * pending op and calling mem_api_finish.
 *
 * Namespaces: "mem" (dim 3, segment "a" stored), "text" (dim 256, vectors made by the
 * built-in embedder), "empty" (dim 3, no segments). The clock is 2026-07-31T09:30:00Z.
 */
#ifndef MEM_TESTS_API_FAKE_H
#define MEM_TESTS_API_FAKE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// clang-format off
#include <cmocka.h>
// clang-format on
#include <jansson.h>

#include "api/api.h"
#include "api/api_int.h"

#pragma GCC diagnostic ignored "-Wunused-function"

#define FAKE_NOW_MS INT64_C(1785490200000) /* 2026-07-31T09:30:00.000Z */
#define WEAK        __attribute__((weak))

static const struct {
    const char *name;
    size_t dim;
    uint64_t count;
    const char *embedder;
} fake_ns[] = {{"empty", 3, 0, ""}, {"mem", 3, 5, ""}, {"text", 256, 2, "builtin"}};

static struct {
    int n_retrieve;
    mem_store_query_t q; /* q.scan.query points at query[] */
    float query[4];
    char source[64];
    int n_plan;
    mem_store_compact_req_t creq;
    size_t n_context_floats;
    bool with_embedding;
} fake;

static int fake_find(const char *ns)
{
    for (size_t i = 0; i < sizeof(fake_ns) / sizeof(fake_ns[0]); i++)
        if (strcmp(fake_ns[i].name, ns) == 0) return (int)i;
    return -1;
}

static void fake_stats(int i, mem_store_ns_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", fake_ns[i].name);
    out->dim = fake_ns[i].dim;
    out->count = fake_ns[i].count;
    out->empty = fake_ns[i].count == 0;
    out->oldest_ms = FAKE_NOW_MS - 86400000;
    out->newest_ms = FAKE_NOW_MS - 1500;
    out->superseded = 1;
    out->coherence = true;
    out->graph_edges = 4;
    out->max_degree = 2;
    snprintf(out->embedder, sizeof(out->embedder), "%s", fake_ns[i].embedder);
}

WEAK int mem_store_ns_stats(mem_store_t *st, const char *ns, mem_store_ns_stats_t *out,
                            mem_err_t *err)
{
    int i = fake_find(ns);
    if (i < 0) return mem_err_set(err, MEM_ENOTFOUND, "namespace %s not found", ns);
    fake_stats(i, out);
    return MEM_OK;
}

WEAK int mem_store_ns_list(mem_store_t *st, mem_store_ns_stats_t **out, size_t *n, mem_err_t *err)
{
    size_t k = sizeof(fake_ns) / sizeof(fake_ns[0]);
    mem_store_ns_stats_t *a = calloc(k, sizeof(*a));
    if (!a) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < k; i++)
        fake_stats((int)i, &a[i]);
    *out = a;
    *n = k;
    return MEM_OK;
}

/* The fake's graph is always current: the exact stats are the stats. */
WEAK int mem_store_ns_stats_exact(mem_store_t *st, const char *ns, mem_store_ns_stats_t *out,
                                  mem_err_t *err)
{
    return mem_store_ns_stats(st, ns, out, err);
}

/* Nothing ever holds the fake's namespaces. */
WEAK int mem_store_ns_stats_try(mem_store_t *st, const char *ns, mem_store_ns_stats_t *out,
                                bool *held, mem_err_t *err)
{
    *held = false;
    return mem_store_ns_stats(st, ns, out, err);
}

WEAK int mem_store_ns_list_exact(mem_store_t *st, mem_store_ns_stats_t **out, size_t *n,
                                 mem_err_t *err)
{
    return mem_store_ns_list(st, out, n, err);
}

WEAK int mem_store_get(mem_store_t *st, const char *ns, const char *id, bool with_embedding,
                       mem_store_segment_t **out, mem_err_t *err)
{
    static char *sup[] = {"old"};
    static float emb[3] = {0.6f, 0.8f, 0.0f};
    fake.with_embedding = with_embedding;
    if (fake_find(ns) < 0) return mem_err_set(err, MEM_ENOTFOUND, "namespace %s not found", ns);
    if (strcmp(ns, "mem") != 0 || strcmp(id, "a/b") != 0)
        return mem_err_set(err, MEM_ENOTFOUND, "segment %s not found", id);
    mem_store_segment_t *s = calloc(1, sizeof(*s));
    if (!s) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    s->id = "a/b";
    s->seq = 7;
    s->ts_ms = FAKE_NOW_MS - 1500;
    s->text = "hello";
    s->source = "hermes";
    s->metadata = "{\"b\":1,\"a\":[true,null]}";
    s->supersedes = sup;
    s->n_supersedes = 1;
    s->superseded_by = NULL;
    s->archived = false;
    s->embedding = with_embedding ? emb : NULL;
    s->dim = 3;
    *out = s;
    return MEM_OK;
}

/* The fake's file is never busy: a try is the get. */
WEAK int mem_store_get_try(mem_store_t *st, const char *ns, const char *id, bool with_embedding,
                           mem_store_segment_t **out, bool *busy, mem_err_t *err)
{
    *busy = false;
    return mem_store_get(st, ns, id, with_embedding, out, err);
}

WEAK void mem_store_segment_free(mem_store_segment_t *seg)
{
    free(seg);
}

/* The listing: "mem" holds segments seq 1..5 (ids s1..s5), of incarnation
 * fake_incarnation (a test changes it to play a namespace deleted and created again); the
 * request is recorded. */
static mem_store_list_req_t fake_list_req;
static uint64_t fake_incarnation = 0x1234abcd5678ef00ull;
static int64_t fake_created_ms = INT64_C(1785490000123);
WEAK int mem_store_list(mem_store_t *st, const char *ns, const mem_store_list_req_t *req,
                        mem_store_segment_t ***out, size_t *n, bool *more,
                        mem_store_ns_ident_t *ident, mem_err_t *err)
{
    static char ids[5][4] = {"s1", "s2", "s3", "s4", "s5"};
    if (fake_find(ns) < 0) return mem_err_set(err, MEM_ENOTFOUND, "namespace %s not found", ns);
    fake_list_req = *req;
    if (req->resume && req->incarnation != fake_incarnation)
        return mem_err_field(err, MEM_EINVAL, "after", "after: a cursor of an earlier namespace");
    mem_store_segment_t **segs = calloc(5, sizeof(*segs));
    if (!segs) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    size_t k = 0;
    for (int64_t seq = req->after_seq + 1; strcmp(ns, "mem") == 0 && seq <= 5; seq++) {
        if (k == req->limit) break;
        mem_store_segment_t *s = calloc(1, sizeof(*s));
        if (!s) {
            while (k)
                free(segs[--k]);
            free(segs);
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        }
        s->id = ids[seq - 1];
        s->seq = seq;
        s->ts_ms = FAKE_NOW_MS - 1000 * (6 - seq);
        s->dim = 3;
        segs[k++] = s;
    }
    *out = segs;
    *n = k;
    *more = k && segs[k - 1]->seq < 5;
    ident->incarnation = fake_incarnation;
    ident->created_ms = fake_created_ms;
    return MEM_OK;
}

WEAK void mem_store_segments_free(mem_store_segment_t **segs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(segs[i]);
    free(segs);
}

/* The export: no row (api/ tests drive the stream's end); strong storage/export.o stays out. */
WEAK int mem_store_export_open(mem_store_t *st, const char *ns, mem_store_export_t **out,
                               mem_err_t *err)
{
    if (fake_find(ns) < 0) return mem_err_set(err, MEM_ENOTFOUND, "namespace %s not found", ns);
    *out = (mem_store_export_t *)calloc(1, 16);
    return MEM_OK;
}

WEAK int mem_store_export_next(mem_store_export_t *x, mem_store_segment_t **seg, mem_err_t *err)
{
    return 0;
}

WEAK size_t mem_store_export_dim(const mem_store_export_t *x)
{
    return 3;
}

WEAK const char *mem_store_export_embedder(const mem_store_export_t *x)
{
    return NULL;
}

WEAK void mem_store_export_close(mem_store_export_t *x)
{
    free(x);
}

WEAK int mem_store_retrieve(mem_store_t *st, const char *ns, const mem_store_query_t *q,
                            mem_store_result_t **out, size_t *n, size_t *scanned,
                            const char **kernel, mem_err_t *err)
{
    int i = fake_find(ns);
    if (i < 0) return mem_err_set(err, MEM_ENOTFOUND, "namespace %s not found", ns);
    if (q->scan.match != MEM_SCAN_MATCH_TEXT && q->q_dim != fake_ns[i].dim)
        return mem_err_set(err, MEM_EDIM, "dimension");
    fake.n_retrieve++;
    fake.q = *q;
    if (q->scan.query) /* NULL for a text match */
        memcpy(fake.query, q->scan.query,
               sizeof(fake.query) < q->q_dim * sizeof(float) ? sizeof(fake.query)
                                                             : q->q_dim * sizeof(float));
    fake.q.scan.query = fake.query;
    snprintf(fake.source, sizeof(fake.source), "%.*s", (int)q->source_len,
             q->source ? q->source : "");
    fake.q.source = q->source ? fake.source : NULL;
    mem_store_result_t *r = calloc(2, sizeof(*r));
    if (!r) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    r[0].hit = (mem_scan_hit_t){.pos = 4,
                                .seq = 12,
                                .score = 0.8125,
                                .sim = 0.875f,
                                .vector_score = 0.875,
                                .decay = 0.5,
                                .gate = 0.25,
                                .age_s = 1234.5};
    r[0].id = "x1";
    r[0].ts_ms = FAKE_NOW_MS - 1234500;
    r[0].text = "remember the milk";
    r[0].source = "hermes";
    r[0].metadata = "{\"k\":\"v\"}";
    r[1].hit = (mem_scan_hit_t){.pos = 1,
                                .seq = 3,
                                .score = 0.5,
                                .sim = 0.5f,
                                .vector_score = 0.5,
                                .decay = 1,
                                .gate = 0,
                                .age_s = 0};
    r[1].id = "x0";
    r[1].ts_ms = FAKE_NOW_MS;
    size_t k = q->scan.k < 2 ? q->scan.k : 2;
    *out = r;
    *n = k;
    *scanned = 5;
    *kernel = "avx512";
    return MEM_OK;
}

/* The fake's scans never block: a try is the retrieve. */
WEAK int mem_store_retrieve_try(mem_store_t *st, const char *ns, const mem_store_query_t *q,
                                size_t work_budget, mem_store_try_t *why, mem_store_result_t **out,
                                size_t *n, size_t *scanned, const char **kernel, mem_err_t *err)
{
    *why = MEM_STORE_TRY_DONE;
    return mem_store_retrieve(st, ns, q, out, n, scanned, kernel, err);
}

WEAK void mem_store_results_free(mem_store_result_t *res, size_t n)
{
    free(res);
}

WEAK int mem_store_compact_plan(mem_store_t *st, const char *ns, const mem_store_compact_req_t *req,
                                char ***evict_ids, size_t *n_evict, size_t *before, mem_err_t *err)
{
    if (fake_find(ns) < 0) return mem_err_set(err, MEM_ENOTFOUND, "namespace %s not found", ns);
    fake.n_plan++;
    fake.creq = *req;
    fake.n_context_floats = req->n_context * 3;
    size_t active = 5;
    size_t target = req->has_target ? req->target : (size_t)(req->ratio * (double)active);
    size_t n = target >= active ? 0 : active - target;
    char **ids = n ? calloc(n, sizeof(char *)) : NULL;
    if (n && !ids) return mem_err_set(err, MEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!(ids[i] = malloc(8))) {
            while (i)
                free(ids[--i]);
            free(ids);
            return mem_err_set(err, MEM_ENOMEM, "out of memory");
        }
        snprintf(ids[i], 8, "s%zu", i);
    }
    *evict_ids = ids;
    *n_evict = n;
    *before = active;
    return MEM_OK;
}

WEAK void mem_store_ids_free(char **ids, size_t n)
{
    for (size_t i = 0; ids && i < n; i++)
        free(ids[i]);
    free(ids);
}

/* The fake prepares nothing: the op's segments go out with prep NULL, as an import's do. */
WEAK int mem_store_prepare(mem_store_t *st, mem_store_seg_in_t *segs, size_t n, size_t dim,
                           mem_store_prep_t **out)
{
    *out = NULL;
    return MEM_OK;
}

WEAK void mem_store_prep_free(mem_store_prep_t *p)
{
}

static const char *const fake_policies[] = {"coherence_weighted", "dedup_gated", "structural_time",
                                            "structural_keyframe", "novelty"};

WEAK int mem_compact_policy_parse(const char *name, mem_compact_policy_t *out)
{
    for (int i = 0; i < MEM_COMPACT_POLICY_COUNT; i++)
        if (strcmp(name, fake_policies[i]) == 0) {
            *out = (mem_compact_policy_t)i;
            return 0;
        }
    return -1;
}

WEAK const char *mem_compact_policy_name(mem_compact_policy_t policy)
{
    return (unsigned)policy < MEM_COMPACT_POLICY_COUNT ? fake_policies[policy] : "unknown";
}

/* ---- test context and helpers ---- */

static mem_cfg_t test_cfg;
static mem_api_ctx_t test_ctx;

static int64_t fake_now(void)
{
    return FAKE_NOW_MS;
}

static void ctx_init(void)
{
    memset(&test_cfg, 0, sizeof(test_cfg));
    test_cfg.decay.kind = MEM_DECAY_EXPONENTIAL;
    test_cfg.decay.half_life_s = 0;
    test_cfg.decay.shape = 1.5;
    test_cfg.decay.recency_bias = 1.0;
    test_cfg.embed_dim = 256;
    test_cfg.coherence_weight = 0.0;
    test_cfg.max_batch = 1000;
    test_cfg.max_future_skew_s = 300;
    test_cfg.max_body = 16u << 20;
    /* any non-NULL pointer: the store calls are the fakes above (NULL means "loading") */
    test_ctx.store = (mem_store_t *)&fake;
    test_ctx.cfg = &test_cfg;
    test_ctx.ops = mem_vec_ops();
    test_ctx.now_ms = fake_now;
    memset(&fake, 0, sizeof(fake));
}

/* Run one request; the caller deinits resp. */
static void call_ct(const char *method, const char *path, const char *query, const char *ct,
                    const char *body, mem_api_resp_t *resp)
{
    memset(resp, 0, sizeof(*resp));
    mem_api_req_t req = {.method = method,
                         .path = path,
                         .query = query ? query : "",
                         .content_type = ct,
                         .body = body,
                         .body_len = body ? strlen(body) : 0};
    mem_api_handle(&test_ctx, &req, resp);
}

static void call(const char *method, const char *path, const char *body, mem_api_resp_t *resp)
{
    call_ct(method, path, NULL, "application/json", body, resp);
}

/* The response body as JSON (new reference). */
static json_t *resp_json(const mem_api_resp_t *resp)
{
    assert_non_null(resp->body);
    json_error_t jerr;
    json_t *j = json_loadb(resp->body, resp->body_len, 0, &jerr);
    if (!j) fail_msg("response is not JSON: %.*s", (int)resp->body_len, resp->body);
    return j;
}

/* Assert an error answer: status, wire code, and field (NULL: no "field" key expected,
 * "*": any). */
static void check_error(const mem_api_resp_t *resp, int status, const char *code, const char *field)
{
    if (resp->status != status || !resp->body)
        fail_msg("expected %d %s, got %d: %.*s", status, code, resp->status, (int)resp->body_len,
                 resp->body ? resp->body : "");
    json_t *j = resp_json(resp);
    json_t *e = json_object_get(j, "error");
    assert_true(json_is_object(e));
    if (strcmp(json_string_value(json_object_get(e, "code")), code) != 0)
        fail_msg("expected code %s: %.*s", code, (int)resp->body_len, resp->body);
    assert_true(json_string_length(json_object_get(e, "message")) > 0);
    const json_t *f = json_object_get(e, "field");
    if (!field)
        assert_null(f);
    else if (strcmp(field, "*") != 0 && (!f || strcmp(json_string_value(f), field) != 0))
        fail_msg("expected field %s: %.*s", field, (int)resp->body_len, resp->body);
    json_decref(j);
}

static void expect_error(const char *method, const char *path, const char *body, int status,
                         const char *code, const char *field)
{
    mem_api_resp_t r;
    call(method, path, body, &r);
    check_error(&r, status, code, field);
    assert_null(r.pending); /* nothing is submitted for a bad request */
    mem_api_resp_deinit(&r);
}

/* The op a write request handed to the writer (the test then plays the writer). A request
 * answered at once instead (an error, an out-of-memory 503) fails with that answer. */
static mem_store_op_t *submitted(const mem_api_resp_t *resp)
{
    if (!resp->pending || resp->status != 0)
        fail_msg("nothing submitted: %d %.*s", resp->status, (int)resp->body_len,
                 resp->body ? resp->body : "");
    return resp->pending;
}

/* The handler stopped for a remote embedder (resp->embed), or fails with its answer. */
static void waits_embed(const mem_api_resp_t *resp)
{
    if (!resp->embed)
        fail_msg("not waiting for the embedder: %d %.*s", resp->status, (int)resp->body_len,
                 resp->body ? resp->body : "");
}

/* mem_api_begin or mem_api_work went on to the step want; an answer instead fails with its
 * status as the compared value (so make fault reads an out-of-memory 503 as one). */
static void next_is(mem_api_next_t got, mem_api_next_t want, const mem_api_resp_t *resp)
{
    if (got != want && got == MEM_API_REPLY) assert_int_equal(resp->status, 0);
    assert_int_equal(got, want);
}

/* The answer's body contains want, or fails showing it. */
static void body_has(const mem_api_resp_t *resp, const char *want)
{
    if (!resp->body || !strstr(resp->body, want))
        fail_msg("%d, body without %s: %.*s", resp->status, want, (int)resp->body_len,
                 resp->body ? resp->body : "");
}

static void assert_body(const mem_api_resp_t *resp, int status, const char *want)
{
    if (resp->status != status || !resp->body || strlen(want) != resp->body_len ||
        memcmp(want, resp->body, resp->body_len) != 0)
        fail_msg("expected %d %s\n     got %d %.*s", status, want, resp->status,
                 (int)resp->body_len, resp->body ? resp->body : "(null)");
}

#endif
