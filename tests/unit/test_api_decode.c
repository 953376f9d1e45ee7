/* test_api_decode.c - request decoding: bad input (exact status, code, field) and good
 * requests decoded into the right structs
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "tests/unit/api_fake.h"

#define SEGS "/v1/namespaces/mem/segments"
#define RETR "/v1/namespaces/mem/retrieve"
#define COMP "/v1/namespaces/mem/compact"
#define E3   "\"embedding\":[1,0,0]"

typedef struct bad_case {
    const char *method, *path, *body;
    int status;
    const char *code, *field; /* field NULL: none expected; "*": any */
} bad_case_t;

static const bad_case_t BAD[] = {
    /* malformed bodies */
    {"POST", SEGS, "{\"embedding\":[1,2,3]", 400, "invalid_json", NULL},
    {"POST", SEGS, "", 400, "invalid_json", NULL},
    {"POST", SEGS, "[1,2,3]", 400, "invalid_field", NULL},
    {"POST", SEGS, "\"text\"", 400, "invalid_json",
     NULL}, /* jansson: top level must be a container */
    {"POST", RETR, "{\"k\":1,\"k\":2," E3 "}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"text\":\"\xff\xfe\"," E3 "}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"text\":\"a\\u0000b\"," E3 "}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[1e400,0,0]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[1,0,0]} trailing", 400, "invalid_json", NULL},
    {"POST", RETR, "{\"k\":99999999999999999999999," E3 "}", 400, "invalid_json", NULL},
    /* unknown fields, named */
    {"POST", SEGS, "{\"embeding\":[1,0,0]}", 400, "invalid_field", "embeding"},
    {"POST", RETR, "{" E3 ",\"half_lfe\":\"9d\"}", 400, "invalid_field", "half_lfe"},
    {"POST", COMP, "{\"target\":1,\"dryrun\":true}", 400, "invalid_field", "dryrun"},
    {"POST", SEGS, "{\"segments\":[{" E3 "},{" E3 ",\"foo\":1}]}", 400, "invalid_field",
     "segments[1].foo"},
    {"POST", SEGS, "{\"segments\":[{" E3 "}],\"text\":\"x\"}", 400, "invalid_field", "text"},
    /* embeddings */
    {"POST", SEGS, "{\"embedding\":\"1,0,0\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":[1,\"0\",0]}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":[1,null,0]}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":[1,0]}", 400, "dimension_mismatch", "embedding"},
    {"POST", SEGS, "{\"embedding\":[1,0,0,0]}", 400, "dimension_mismatch", "embedding"},
    {"POST", SEGS, "{\"embedding\":[]}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":[0,0,0]}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":[0.0,-0.0,0e10]}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":[1e300,0,0]}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":[3.5e38,1,0]}", 400, "invalid_field", "embedding"},
    /* embeddings as base64 of little-endian float32 */
    {"POST", SEGS, "{\"embedding\":\"AACAPwAAAAAAAAAA!\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAPwAAAAAAAAA\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAPwAA AAAAAAA\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAPwAAAAAAAA==\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAPwA=\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAPwAAAAB=\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACA=wAAAAA=\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAPwAAAAA-\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AADAfwAAgD8AAAAA\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAfwAAgD8AAAAA\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AAAAAAAAAAAAAAAA\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAPwAAAAA=\"}", 400, "dimension_mismatch", "embedding"},
    {"POST", SEGS, "{\"embedding\":\"AACAPwAAAAAAAAAAAAAAAA==\"}", 400, "dimension_mismatch",
     "embedding"},
    {"POST", SEGS, "{\"segments\":[{" E3 "},{\"embedding\":\"AACAPwA=\"}]}", 400, "invalid_field",
     "segments[1].embedding"},
    {"POST", RETR, "{\"embedding\":\"AACAPwAAAAA=\"}", 400, "dimension_mismatch", "embedding"},
    {"POST", RETR, "{\"embedding\":\"AACAPw\"}", 400, "invalid_field", "embedding"},
    {"POST", COMP, "{\"target\":1,\"context\":[\"AACAPwA=\"]}", 400, "invalid_field", "context[0]"},
    {"POST", SEGS, "{\"embedding\":true}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":{\"0\":1}}", 400, "invalid_field", "embedding"},
    /* arrays the fast number path hands back to the JSON one keep their errors */
    {"POST", SEGS, "{\"embedding\":[1,0,0,]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[1 0 0]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[01,0,0]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[1.,0,0]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[.5,0,0]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[NaN,0,0]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[Infinity,0,0]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[-Infinity,0,0]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[1e39,0,0]}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"embedding\":[1,0,99999999999999999999]}", 400, "invalid_json", NULL},
    {"POST", SEGS, "{\"embedding\":[1,[0],0]}", 400, "invalid_field", "embedding"},
    {"POST", RETR, "{\"embedding\":[1,0]}", 400, "dimension_mismatch", "embedding"},
    {"POST", RETR, "{\"embedding\":[0,0,0]}", 400, "invalid_field", "embedding"},
    /* insert fields */
    {"POST", SEGS, "{\"text\":\"hello world\"}", 400, "dimension_mismatch", "text"},
    {"POST", SEGS, "{\"source\":\"x\"}", 400, "invalid_field", "embedding"},
    {"POST", SEGS, "{\"text\":42}", 400, "invalid_field", "text"},
    {"POST", SEGS, "{" E3 ",\"timestamp\":\"2026-07-31T09:40:00Z\"}", 400, "timestamp_in_future",
     "timestamp"},
    {"POST", SEGS, "{" E3 ",\"timestamp\":1785490501}", 400, "timestamp_in_future", "timestamp"},
    {"POST", SEGS, "{" E3 ",\"timestamp\":\"2026-07-31T09:30:00\"}", 400, "invalid_field",
     "timestamp"},
    {"POST", SEGS, "{" E3 ",\"timestamp\":\"2026-02-30T09:30:00Z\"}", 400, "invalid_field",
     "timestamp"},
    {"POST", SEGS, "{" E3 ",\"timestamp\":1e20}", 400, "invalid_field", "timestamp"},
    {"POST", SEGS, "{" E3 ",\"timestamp\":true}", 400, "invalid_field", "timestamp"},
    {"POST", SEGS, "{" E3 ",\"id\":\"\"}", 400, "invalid_field", "id"},
    {"POST", SEGS, "{" E3 ",\"id\":7}", 400, "invalid_field", "id"},
    {"POST", SEGS, "{" E3 ",\"source\":[]}", 400, "invalid_field", "source"},
    {"POST", SEGS, "{" E3 ",\"metadata\":[1]}", 400, "invalid_field", "metadata"},
    {"POST", SEGS, "{" E3 ",\"metadata\":\"{}\"}", 400, "invalid_field", "metadata"},
    {"POST", SEGS, "{" E3 ",\"supersedes\":\"a\"}", 400, "invalid_field", "supersedes"},
    {"POST", SEGS, "{" E3 ",\"supersedes\":[\"a\",3]}", 400, "invalid_field", "supersedes[1]"},
    {"POST", SEGS, "{" E3 ",\"id\":\"me\",\"supersedes\":[\"me\"]}", 400, "invalid_field",
     "supersedes[0]"},
    {"POST", SEGS, "{\"segments\":[]}", 400, "invalid_field", "segments"},
    {"POST", SEGS, "{\"segments\":{}}", 400, "invalid_field", "segments"},
    {"POST", SEGS, "{\"segments\":[{" E3 "},7]}", 400, "invalid_field", "segments[1]"},
    {"POST", SEGS, "{\"segments\":[{" E3 ",\"id\":\"d\"},{" E3 ",\"id\":\"d\"}]}", 409,
     "duplicate_id", "segments[1].id"},
    {"POST", SEGS, "{\"segments\":[{" E3 "},{\"embedding\":[1,0]}]}", 400, "dimension_mismatch",
     "segments[1].embedding"},
    {"POST", SEGS,
     "{\"segments\":[{" E3 ",\"timestamp\":\"2026-07-30T00:00:00Z\"},{" E3
     ",\"timestamp\":\"2026-07-29T00:00:00Z\"}]}",
     409, "non_monotonic_timestamp", "segments[1].timestamp"},
    /* retrieve fields */
    {"POST", RETR, "{}", 400, "invalid_field", "query"},
    {"POST", RETR, "{" E3 ",\"query\":\"x\"}", 400, "invalid_field", "query"},
    {"POST", RETR, "{\"query\":\"\"}", 400, "invalid_field", "query"},
    /* client vectors of another dimension than the embedder's: a text query matches by
     * text unless it asks for vectors */
    {"POST", RETR, "{\"query\":\"hello\",\"match\":\"vector\"}", 400, "dimension_mismatch",
     "query"},
    {"POST", RETR, "{\"query\":\"hello\",\"match\":\"hybrid\"}", 400, "dimension_mismatch",
     "query"},
    {"POST", RETR, "{\"query\":\"hello\",\"match\":\"fuzzy\"}", 400, "invalid_field", "match"},
    {"POST", RETR, "{\"embedding\":[1,0,0],\"match\":\"text\"}", 400, "invalid_field", "match"},
    {"POST", RETR, "{" E3 ",\"k\":0}", 400, "invalid_field", "k"},
    {"POST", RETR, "{" E3 ",\"k\":1001}", 400, "invalid_field", "k"},
    {"POST", RETR, "{" E3 ",\"k\":\"10\"}", 400, "invalid_field", "k"},
    {"POST", RETR, "{" E3 ",\"k\":2.5}", 400, "invalid_field", "k"},
    {"POST", RETR, "{" E3 ",\"k\":-1}", 400, "invalid_field", "k"},
    {"POST", RETR, "{" E3 ",\"decay\":\"cubic\"}", 400, "invalid_field", "decay"},
    {"POST", RETR, "{" E3 ",\"decay\":\"weibull\"}", 400, "invalid_field", "decay"},
    {"POST", RETR, "{" E3 ",\"decay\":7}", 400, "invalid_field", "decay"},
    {"POST", RETR, "{" E3 ",\"decay\":{\"weibull\":{\"shape\":0}}}", 400, "invalid_field",
     "decay.weibull.shape"},
    {"POST", RETR, "{" E3 ",\"decay\":{\"weibull\":{\"shape\":10.5}}}", 400, "invalid_field",
     "decay.weibull.shape"},
    {"POST", RETR, "{" E3 ",\"decay\":{\"weibull\":{}}}", 400, "invalid_field",
     "decay.weibull.shape"},
    {"POST", RETR, "{" E3 ",\"decay\":{\"weibull\":{\"shape\":1,\"scale\":2}}}", 400,
     "invalid_field", "decay.weibull.scale"},
    {"POST", RETR, "{" E3 ",\"decay\":{\"gamma\":{}}}", 400, "invalid_field", "decay.gamma"},
    {"POST", RETR, "{" E3 ",\"half_life\":\"9d\",\"half_life_days\":9}", 400, "invalid_field",
     "half_life_days"},
    {"POST", RETR, "{" E3 ",\"half_life\":\"90x\"}", 400, "invalid_field", "half_life"},
    {"POST", RETR, "{" E3 ",\"half_life\":\"-5d\"}", 400, "invalid_field", "half_life"},
    {"POST", RETR, "{" E3 ",\"half_life\":-1}", 400, "invalid_field", "half_life"},
    {"POST", RETR, "{" E3 ",\"half_life\":[1]}", 400, "invalid_field", "half_life"},
    {"POST", RETR, "{" E3 ",\"half_life_days\":\"9\"}", 400, "invalid_field", "half_life_days"},
    {"POST", RETR, "{" E3 ",\"offset\":\"soon\"}", 400, "invalid_field", "offset"},
    {"POST", RETR, "{" E3 ",\"recency_bias\":1.5}", 400, "invalid_field", "recency_bias"},
    {"POST", RETR, "{" E3 ",\"recency_bias\":\"1\"}", 400, "invalid_field", "recency_bias"},
    {"POST", RETR, "{" E3 ",\"coherence_weight\":-0.1}", 400, "invalid_field", "coherence_weight"},
    {"POST", RETR, "{" E3 ",\"origin\":\"2026-07-31T09:30:00\"}", 400, "invalid_field", "origin"},
    {"POST", RETR, "{" E3 ",\"since\":\"yesterday\"}", 400, "invalid_field", "since"},
    {"POST", RETR, "{" E3 ",\"until\":\"2026-07-31 09:30:00Z\"}", 400, "invalid_field", "until"},
    {"POST", RETR, "{" E3 ",\"as_of\":{}}", 400, "invalid_field", "as_of"},
    {"POST", RETR, "{" E3 ",\"since\":\"2026-07-31T00:00:00Z\",\"until\":\"2026-07-30T00:00:00Z\"}",
     400, "invalid_field", "since"},
    {"POST", RETR, "{" E3 ",\"source\":\"\"}", 400, "invalid_field", "source"},
    {"POST", RETR, "{" E3 ",\"min_score\":\"high\"}", 400, "invalid_field", "min_score"},
    {"POST", RETR, "{" E3 ",\"include_archived\":\"yes\"}", 400, "invalid_field",
     "include_archived"},
    {"POST", RETR, "{" E3 ",\"include_superseded\":1}", 400, "invalid_field", "include_superseded"},
    {"POST", RETR, "{" E3 ",\"explain\":null,\"explain\":true}", 400, "invalid_json", NULL},
    {"POST", "/v1/namespaces/nope/retrieve", "{" E3 "}", 404, "not_found", NULL},
    /* compact fields */
    {"POST", COMP, "{}", 400, "invalid_field", "target"},
    {"POST", COMP, "{\"target\":1,\"ratio\":0.5}", 400, "invalid_field", "ratio"},
    {"POST", COMP, "{\"ratio\":0}", 400, "invalid_field", "ratio"},
    {"POST", COMP, "{\"ratio\":1.5}", 400, "invalid_field", "ratio"},
    {"POST", COMP, "{\"target\":-1}", 400, "invalid_field", "target"},
    {"POST", COMP, "{\"target\":1,\"policy\":\"bogus\"}", 400, "invalid_field", "policy"},
    {"POST", COMP, "{\"target\":1,\"weights\":{\"recency\":1,\"freq\":1}}", 400, "invalid_field",
     "weights.freq"},
    {"POST", COMP, "{\"target\":1,\"weights\":{\"recency\":-1}}", 400, "invalid_field",
     "weights.recency"},
    {"POST", COMP, "{\"target\":1,\"context\":[[1,0]]}", 400, "dimension_mismatch", "context[0]"},
    {"POST", COMP, "{\"target\":1,\"context\":[[0,0,0]]}", 400, "invalid_field", "context[0]"},
    {"POST", COMP, "{\"target\":1,\"context\":{}}", 400, "invalid_field", "context"},
    {"POST", COMP, "{\"target\":1,\"dry_run\":\"true\"}", 400, "invalid_field", "dry_run"},
    {"POST", COMP, "{\"target\":1,\"dedup_threshold\":3}", 400, "invalid_field", "dedup_threshold"},
    {"POST", "/v1/namespaces/nope/compact", "{\"target\":1}", 404, "not_found", NULL},
    /* namespace create */
    {"PUT", "/v1/namespaces/new", "{\"dim\":0}", 400, "invalid_field", "dim"},
    {"PUT", "/v1/namespaces/new", "{\"dim\":4097}", 400, "invalid_field", "dim"},
    {"PUT", "/v1/namespaces/new", "{\"dim\":\"384\"}", 400, "invalid_field", "dim"},
    {"PUT", "/v1/namespaces/new", "{\"dims\":384}", 400, "invalid_field", "dims"},
    {"PUT", "/v1/namespaces/new", "{\"dim\":", 400, "invalid_json", NULL},
};

static void test_bad_inputs(void **state)
{
    size_t n = sizeof(BAD) / sizeof(BAD[0]);
    assert_true(n >= 30);
    for (size_t i = 0; i < n; i++) {
        const bad_case_t *c = &BAD[i];
        mem_api_resp_t r;
        call(c->method, c->path, c->body, &r);
        if (r.status != c->status)
            fail_msg("case %zu (%s): expected %d, got %d %.*s", i, c->body, c->status, r.status,
                     (int)r.body_len, r.body ? r.body : "");
        check_error(&r, c->status, c->code, c->field);
        assert_null(r.pending);
        mem_api_resp_deinit(&r);
    }
}

/* Bodies built at run time: deep nesting, oversized text, batch over the limit. */
static void test_bad_large_inputs(void **state)
{
    size_t depth = 5000;
    char *deep = malloc(depth * 2 + 64);
    size_t o = (size_t)sprintf(deep, "{\"embedding\":[1,0,0],\"metadata\":{\"x\":");
    for (size_t i = 0; i < depth; i++)
        deep[o++] = '[';
    for (size_t i = 0; i < depth; i++)
        deep[o++] = ']';
    strcpy(deep + o, "}}");
    expect_error("POST", SEGS, deep, 400, "invalid_json", NULL);
    free(deep);

    size_t big = MEM_API_MAX_TEXT + 1;
    char *body = malloc(big + 64);
    o = (size_t)sprintf(body, "{\"embedding\":[1,0,0],\"text\":\"");
    memset(body + o, 'a', big);
    strcpy(body + o + big, "\"}");
    expect_error("POST", SEGS, body, 400, "invalid_field", "text");
    /* exactly 1 MiB is fine */
    strcpy(body + o + big - 1, "\"}");
    mem_api_resp_t r;
    call("POST", SEGS, body, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(r.pending);
    assert_int_equal(r.pending->segs[0].text_len, MEM_API_MAX_TEXT);
    mem_api_resp_deinit(&r);
    free(body);

    test_cfg.max_batch = 2;
    expect_error("POST", SEGS, "{\"segments\":[{" E3 "},{" E3 "},{" E3 "}]}", 400, "invalid_field",
                 "segments");
    test_cfg.max_batch = 1000;

    char id[200];
    memset(id, 'i', 129);
    id[129] = 0;
    char b2[300];
    snprintf(b2, sizeof(b2), "{" E3 ",\"id\":\"%s\"}", id);
    expect_error("POST", SEGS, b2, 400, "invalid_field", "id");
}

static void test_nonmonotonic_body_names_both(void **state)
{
    mem_api_resp_t r;
    call("POST", SEGS,
         "{\"segments\":[{" E3 ",\"timestamp\":\"2026-07-30T00:00:00Z\"},{" E3 "},{" E3
         ",\"timestamp\":\"2026-07-29T12:00:00.5+02:00\"}]}",
         &r);
    assert_body(&r, 409,
                "{\"error\":{\"code\":\"non_monotonic_timestamp\",\"message\":\"segments[2]."
                "timestamp: 2026-07-29T10:00:00.500Z is older than 2026-07-30T00:00:00.000Z "
                "earlier in the batch\",\"field\":\"segments[2].timestamp\",\"last_timestamp\":"
                "\"2026-07-30T00:00:00.000Z\",\"timestamp\":\"2026-07-29T10:00:00.500Z\"}}");
    mem_api_resp_deinit(&r);
}

/* what a text query does by default in a namespace of built-in vectors */
static const mem_api__text_match_t hybrid_dflt = {MEM_SCAN_MATCH_HYBRID, 0.9};

static json_t *load(const char *s)
{
    json_t *j = json_loads(s, 0, NULL);
    assert_non_null(j);
    return j;
}

static void test_decode_insert_single(void **state)
{
    mem_api__pool_t pool = {0};
    mem_err_t err;
    mem_api__insert_in_t in;
    json_t *j = load("{\"id\":\"m-1\",\"text\":\"hi\",\"embedding\":[3,4,0],\"timestamp\":"
                     "\"2026-07-31T11:30:00.1239+02:00\",\"source\":\"hermes\",\"metadata\":"
                     "{\"z\":1, \"a\": {\"b\": [1, 2]}},\"supersedes\":[\"m-0\",\"m-00\"]}");
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 3, &in, &err), MEM_OK);
    assert_int_equal(in.n_segs, 1);
    assert_false(in.batch);
    assert_int_equal(in.dim, 3);
    const mem_store_seg_in_t *s = &in.segs[0];
    assert_string_equal(s->id, "m-1");
    assert_int_equal(s->text_len, 2);
    assert_memory_equal(s->text, "hi", 2);
    assert_true(fabsf(s->vec[0] - 0.6f) < 1e-7f);
    assert_true(fabsf(s->vec[1] - 0.8f) < 1e-7f);
    assert_true(s->vec[2] == 0.0f);
    assert_true(s->ts_given);
    assert_int_equal(s->ts_ms, FAKE_NOW_MS + 123); /* truncated to the ms */
    assert_int_equal(s->source_len, 6);
    assert_memory_equal(s->source, "hermes", 6);
    assert_string_equal(s->metadata, "{\"z\":1,\"a\":{\"b\":[1,2]}}");
    assert_int_equal(s->metadata_len, strlen(s->metadata));
    assert_int_equal(s->n_supersedes, 2);
    assert_string_equal(s->supersedes[1], "m-00");
    json_decref(j);
    mem_api__pool_free(&pool);
}

/* An embedding as base64 of little-endian float32 decodes like the same numbers in an
 * array, wherever an embedding goes; a body's arrays of numbers arrive as vector nodes. */
static void test_decode_base64_embeddings(void **state)
{
    mem_api__pool_t pool = {0};
    mem_err_t err;
    json_t *j;
    /* [3, 4, 0] */
    const char *one = "{\"embedding\":\"AABAQAAAgEAAAAAA\"}";
    assert_int_equal(mem_api__parse_body(one, strlen(one), &j, &err), MEM_OK);
    mem_api__insert_in_t in;
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 3, &in, &err), MEM_OK);
    assert_true(in.segs[0].vec[0] == 0.6f && in.segs[0].vec[1] == 0.8f && in.segs[0].vec[2] == 0);
    json_decref(j);
    /* a batch mixing both forms */
    const char *batch = "{\"segments\":[{\"embedding\":[3,4,0]},{\"embedding\":"
                        "\"AAAAPwAAgD4AAMC/\"}]}";
    assert_int_equal(mem_api__parse_body(batch, strlen(batch), &j, &err), MEM_OK);
    assert_true(mem_api__vec_node_get(
        json_object_get(json_array_get(json_object_get(j, "segments"), 0), "embedding"), NULL,
        &in.dim));
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 0, &in, &err), MEM_OK);
    assert_int_equal(in.dim, 3);
    float want[3] = {0.5f, 0.25f, -1.5f};
    assert_int_equal(mem_vec_normalize(want, 3), 0);
    assert_memory_equal(in.segs[1].vec, want, sizeof(want));
    json_decref(j);
    /* retrieve and compaction context */
    const char *ret = "{\"embedding\":\"AABAQAAAgEAAAAAA\",\"k\":3}";
    assert_int_equal(mem_api__parse_body(ret, strlen(ret), &j, &err), MEM_OK);
    mem_api__retrieve_in_t rin;
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 3, &hybrid_dflt, &rin, &err),
                     MEM_OK);
    assert_true(rin.q.scan.query[0] == 0.6f && rin.q.scan.query[1] == 0.8f);
    json_decref(j);
    const char *com = "{\"target\":1,\"context\":[[3,4,0],\"AABAQAAAgEAAAAAA\"]}";
    assert_int_equal(mem_api__parse_body(com, strlen(com), &j, &err), MEM_OK);
    mem_api__compact_in_t cin;
    assert_int_equal(mem_api__decode_compact(&test_ctx, &pool, j, 3, &cin, &err), MEM_OK);
    assert_int_equal(cin.req.n_context, 2);
    assert_memory_equal(cin.req.context, cin.req.context + 3, 3 * sizeof(float));
    json_decref(j);
    /* metadata keeps its arrays as JSON, even under a key named embedding */
    const char *meta = "{\"embedding\":[1,0,0],\"metadata\":{\"embedding\":[0.5,2]}}";
    assert_int_equal(mem_api__parse_body(meta, strlen(meta), &j, &err), MEM_OK);
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 3, &in, &err), MEM_OK);
    assert_string_equal(in.segs[0].metadata, "{\"embedding\":[0.5,2]}");
    json_decref(j);
    mem_api__pool_free(&pool);
}

static void test_decode_insert_generated_id_and_defaults(void **state)
{
    mem_api__pool_t pool = {0};
    mem_err_t err;
    mem_api__insert_in_t in;
    json_t *j = load("{\"embedding\":[0,2,0],\"text\":null,\"timestamp\":1785400000.25}");
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 0, &in, &err), MEM_OK);
    const mem_store_seg_in_t *s = &in.segs[0];
    assert_int_equal(in.dim, 3); /* new namespace: fixed by the embedding */
    assert_null(s->text);
    assert_null(s->source);
    assert_null(s->metadata);
    assert_int_equal(s->n_supersedes, 0);
    assert_int_equal(s->ts_ms, INT64_C(1785400000250));
    /* UUIDv7: 8-4-4-4-12, version 7, variant 10, first 48 bits = the timestamp's ms */
    assert_int_equal(strlen(s->id), 36);
    assert_int_equal(s->id[8], '-');
    assert_int_equal(s->id[14], '7');
    assert_true(strchr("89ab", s->id[19]) != NULL);
    char hex[13];
    snprintf(hex, sizeof(hex), "%012llx", (unsigned long long)INT64_C(1785400000250));
    assert_memory_equal(s->id, hex, 8);
    assert_memory_equal(s->id + 9, hex + 8, 4);
    json_decref(j);

    /* no timestamp: not given, id from the server clock; two ids differ */
    j = load("{\"segments\":[{\"embedding\":[1,1,1]},{\"embedding\":[1,1,1]}]}");
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 3, &in, &err), MEM_OK);
    assert_true(in.batch);
    assert_int_equal(in.n_segs, 2);
    assert_false(in.segs[0].ts_given);
    assert_string_not_equal(in.segs[0].id, in.segs[1].id);
    snprintf(hex, sizeof(hex), "%012llx", (unsigned long long)FAKE_NOW_MS);
    assert_memory_equal(in.segs[1].id, hex, 8);
    json_decref(j);
    mem_api__pool_free(&pool);
}

/* Generated ids take their random bits from a per-thread buffer refilled by getrandom:
 * across many refills they stay distinct, well formed, and every random bit varies. */
static int cmp_id(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static void test_uuid7_many(void **state)
{
    (void)state;
    enum { N = 3000 }; /* 10 random bytes an id: dozens of refills of the buffer */
    static char ids[N][37];
    unsigned char ones[16] = {0}, zeros[16] = {0};
    for (size_t i = 0; i < N; i++) {
        mem_api__uuid7(INT64_C(1785400000250), ids[i]); /* one ms: only the random part differs */
        assert_int_equal(strlen(ids[i]), 36);
        assert_int_equal(ids[i][14], '7');
        assert_non_null(strchr("89ab", ids[i][19]));
        assert_memory_equal(ids[i], "019fb221-fefa-7", 15); /* 1785400000250 = 0x19fb221fefa */
        for (size_t k = 0, h = 0; k < 36; k++) {            /* the bits of the hex digits 12..31 */
            if (ids[i][k] == '-') continue;
            char c = ids[i][k];
            unsigned v = (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
            if (h >= 12) {
                ones[h / 2] |= (unsigned char)(v << (h % 2 ? 0 : 4));
                zeros[h / 2] |= (unsigned char)((~v & 15u) << (h % 2 ? 0 : 4));
            }
            h++;
        }
    }
    qsort(ids, N, sizeof(ids[0]), cmp_id);
    for (size_t i = 1; i < N; i++)
        assert_string_not_equal(ids[i - 1], ids[i]);
    /* every bit after the version nibble and the variant's two bits took both values */
    for (size_t byte = 6; byte < 16; byte++) {
        unsigned char fixed = byte == 6 ? 0xF0 : byte == 8 ? 0xC0 : 0;
        assert_int_equal(ones[byte] | fixed, 0xFF);
        assert_int_equal(zeros[byte] | fixed, 0xFF);
    }
}

static void test_decode_insert_text_only(void **state)
{
    mem_api__pool_t pool = {0};
    mem_err_t err;
    mem_api__insert_in_t in;
    json_t *j = load("{\"text\":\"the quick brown fox\"}");
    /* a new namespace takes the embedder's dimension */
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 0, &in, &err), MEM_OK);
    assert_int_equal(in.dim, 256);
    double ss = 0;
    for (size_t i = 0; i < 256; i++)
        ss += (double)in.segs[0].vec[i] * in.segs[0].vec[i];
    assert_true(fabs(ss - 1.0) < 1e-5);
    /* deterministic: the same text gives the same vector */
    mem_api__insert_in_t in2;
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 256, &in2, &err), MEM_OK);
    assert_memory_equal(in.segs[0].vec, in2.segs[0].vec, 256 * sizeof(float));
    json_decref(j);
    /* nothing to embed */
    j = load("{\"text\":\"  !? \"}");
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 0, &in, &err), MEM_EINVAL);
    assert_string_equal(err.field, "text");
    json_decref(j);
    /* in a batch, the first member fixes the dimension of a new namespace */
    j = load("{\"segments\":[{\"text\":\"a b\"},{\"embedding\":[1,2,3]}]}");
    assert_int_equal(mem_api__decode_insert(&test_ctx, &pool, j, 0, &in, &err), MEM_EDIM);
    assert_string_equal(err.field, "segments[1].embedding");
    json_decref(j);
    mem_api__pool_free(&pool);
}

static void test_decode_retrieve_match(void **state)
{
    mem_api__pool_t pool = {0};
    mem_api__retrieve_in_t in;
    mem_err_t err;
    /* the default applies to a text query; the vector is made for hybrid */
    json_t *j = load("{\"query\":\"quick fox\"}");
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 256, &hybrid_dflt, &in, &err),
                     MEM_OK);
    assert_int_equal(in.q.scan.match, MEM_SCAN_MATCH_HYBRID);
    assert_true(in.q.scan.text_weight == 0.9);
    assert_non_null(in.q.scan.query);
    assert_int_equal(in.q.text_len, 9);
    assert_string_equal(in.q.text, "quick fox");
    json_decref(j);
    /* text match: no vector is made, so any dimension will do */
    j = load("{\"query\":\"quick fox\",\"match\":\"text\"}");
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 7, &hybrid_dflt, &in, &err),
                     MEM_OK);
    assert_int_equal(in.q.scan.match, MEM_SCAN_MATCH_TEXT);
    assert_null(in.q.scan.query);
    assert_false(in.embedded);
    assert_true(in.q.lex.k1 == 0.9 && in.q.lex.b == 0.4);
    json_decref(j);
    /* an embedding alone is vector match; asking text or hybrid of it is an error */
    j = load("{\"embedding\":[1,0,0]}");
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 3, &hybrid_dflt, &in, &err),
                     MEM_OK);
    assert_int_equal(in.q.scan.match, MEM_SCAN_MATCH_VECTOR);
    json_decref(j);
    const char *bad[] = {"{\"embedding\":[1,0,0],\"match\":\"text\"}",
                         "{\"embedding\":[1,0,0],\"match\":\"hybrid\"}",
                         "{\"query\":\"x\",\"match\":\"fuzzy\"}", "{\"query\":\"x\",\"match\":1}",
                         "{\"query\":\"\",\"match\":\"text\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = load(bad[i]);
        mem_err_clear(&err);
        assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 3, &hybrid_dflt, &in, &err),
                         MEM_EINVAL);
        assert_true(strcmp(err.field, "match") == 0 || strcmp(err.field, "query") == 0);
        json_decref(j);
    }
    mem_api__pool_free(&pool);
}

static void test_decode_retrieve_defaults(void **state)
{
    mem_api__pool_t pool = {0};
    mem_err_t err;
    mem_api__retrieve_in_t in;
    test_cfg.decay.half_life_s = 86400;
    test_cfg.decay.kind = MEM_DECAY_GAUSSIAN;
    test_cfg.coherence_weight = 0.25;
    json_t *j = load("{\"embedding\":[0,0,2]}");
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 3, &hybrid_dflt, &in, &err),
                     MEM_OK);
    const mem_scan_params_t *p = &in.q.scan;
    assert_int_equal(p->k, 10);
    assert_int_equal(in.q.q_dim, 3);
    assert_true(p->query[2] == 1.0f);
    assert_int_equal(p->origin_ms, FAKE_NOW_MS);
    assert_int_equal(p->decay.kind, MEM_DECAY_GAUSSIAN);
    assert_true(p->decay.half_life_s == 86400);
    assert_true(p->decay.recency_bias == 1.0);
    assert_true(p->coherence_weight == 0.25);
    assert_true(p->since_ms == INT64_MIN);
    assert_true(p->until_ms == INT64_MAX);
    assert_false(p->has_min_score);
    assert_false(p->include_superseded);
    assert_false(p->include_archived);
    assert_null(in.q.source);
    assert_true(in.q.record_access);
    assert_false(in.explain);
    json_decref(j);
    mem_api__pool_free(&pool);
}

static void test_decode_retrieve_everything(void **state)
{
    mem_api__pool_t pool = {0};
    mem_err_t err;
    mem_api__retrieve_in_t in;
    json_t *j = load("{\"embedding\":[1,0,0],\"k\":3,\"half_life\":\"36h\",\"recency_bias\":0.5,"
                     "\"decay\":{\"weibull\":{\"shape\":1.5}},\"origin\":\"2026-02-15T00:00:00Z\","
                     "\"offset\":\"2w\",\"coherence_weight\":0.4,\"since\":1700000000,"
                     "\"until\":\"2026-07-01T00:00:00Z\",\"source\":\"hermes\",\"min_score\":-0.2,"
                     "\"include_superseded\":true,\"include_archived\":true,\"explain\":true}");
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 3, &hybrid_dflt, &in, &err),
                     MEM_OK);
    const mem_scan_params_t *p = &in.q.scan;
    assert_int_equal(p->k, 3);
    assert_true(p->decay.half_life_s == 36 * 3600);
    assert_true(p->decay.recency_bias == 0.5);
    assert_int_equal(p->decay.kind, MEM_DECAY_WEIBULL);
    assert_true(p->decay.shape == 1.5);
    assert_int_equal(p->origin_ms, INT64_C(1771113600000));
    assert_true(p->decay.offset_s == 14 * 86400);
    assert_true(p->coherence_weight == 0.4);
    assert_int_equal(p->since_ms, INT64_C(1700000000000));
    assert_int_equal(p->until_ms, INT64_C(1782864000000));
    assert_int_equal(in.q.source_len, 6);
    assert_memory_equal(in.q.source, "hermes", 6);
    assert_true(p->has_min_score && p->min_score == -0.2);
    assert_true(p->include_superseded && p->include_archived && in.explain);
    json_decref(j);

    /* half_life_days, decay strings, as_of sets origin and until unless given */
    j = load("{\"embedding\":[1,0,0],\"half_life_days\":90,\"decay\":\"linear\","
             "\"as_of\":\"2026-02-15T00:00:00Z\"}");
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 3, &hybrid_dflt, &in, &err),
                     MEM_OK);
    assert_true(in.q.scan.decay.half_life_s == 90 * 86400.0);
    assert_int_equal(in.q.scan.decay.kind, MEM_DECAY_LINEAR);
    assert_int_equal(in.q.scan.origin_ms, INT64_C(1771113600000));
    assert_int_equal(in.q.scan.until_ms, INT64_C(1771113600000));
    json_decref(j);
    j = load("{\"embedding\":[1,0,0],\"as_of\":\"2026-02-15T00:00:00Z\",\"origin\":0,"
             "\"half_life\":120,\"decay\":\"none\"}");
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 3, &hybrid_dflt, &in, &err),
                     MEM_OK);
    assert_int_equal(in.q.scan.origin_ms, 0);
    assert_int_equal(in.q.scan.until_ms, INT64_C(1771113600000));
    assert_true(in.q.scan.decay.half_life_s == 120);
    assert_int_equal(in.q.scan.decay.kind, MEM_DECAY_NONE);
    json_decref(j);
    /* text query uses the embedder */
    j = load("{\"query\":\"quick fox\",\"decay\":\"gaussian\"}");
    assert_int_equal(mem_api__decode_retrieve(&test_ctx, &pool, j, 256, &hybrid_dflt, &in, &err),
                     MEM_OK);
    assert_int_equal(in.q.q_dim, 256);
    assert_int_equal(in.q.scan.decay.kind, MEM_DECAY_GAUSSIAN);
    json_decref(j);
    mem_api__pool_free(&pool);
}

static void test_decode_compact(void **state)
{
    mem_api__pool_t pool = {0};
    mem_err_t err;
    mem_api__compact_in_t in;
    json_t *j = load("{\"target\":180}");
    assert_int_equal(mem_api__decode_compact(&test_ctx, &pool, j, 3, &in, &err), MEM_OK);
    assert_true(in.req.has_target);
    assert_int_equal(in.req.target, 180);
    assert_int_equal(in.req.policy, MEM_COMPACT_DEFAULT);
    assert_true(in.req.alpha == 0.25 && in.req.beta == 0.35 && in.req.gamma == 0.40);
    assert_true(in.req.dedup_threshold == 0.02);
    assert_false(in.req.context_given);
    assert_false(in.dry_run || in.purge);
    json_decref(j);
    j = load("{\"ratio\":0.5,\"policy\":\"dedup_gated\",\"dry_run\":true,\"purge\":true,"
             "\"weights\":{\"frequency\":0.5},\"context\":[[0,3,4],[1,0,0]],"
             "\"dedup_threshold\":0.1}");
    assert_int_equal(mem_api__decode_compact(&test_ctx, &pool, j, 3, &in, &err), MEM_OK);
    assert_false(in.req.has_target);
    assert_true(in.req.ratio == 0.5);
    assert_int_equal(in.req.policy, MEM_COMPACT_DEDUP_GATED);
    assert_true(in.dry_run && in.purge);
    assert_true(in.req.alpha == 0.25 && in.req.beta == 0.5 && in.req.gamma == 0.40);
    assert_true(in.req.context_given);
    assert_int_equal(in.req.n_context, 2);
    /* the store checks the vectors' size against the namespace it plans on */
    assert_int_equal(in.req.context_dim, 3);
    assert_true(fabsf(in.req.context[1] - 0.6f) < 1e-7f && in.req.context[3] == 1.0f);
    assert_true(in.req.dedup_threshold == 0.1);
    json_decref(j);
    /* an explicit empty context means "no context" */
    j = load("{\"target\":0,\"context\":[]}");
    assert_int_equal(mem_api__decode_compact(&test_ctx, &pool, j, 3, &in, &err), MEM_OK);
    assert_true(in.req.context_given);
    assert_int_equal(in.req.n_context, 0);
    assert_int_equal(in.req.target, 0);
    json_decref(j);
    mem_api__pool_free(&pool);
}

static void test_timestamps_and_durations(void **state)
{
    mem_err_t err;
    int64_t ms;
    double s;
    struct {
        const char *in;
        int64_t ms;
    } ok[] = {
        {"\"2026-07-31T09:30:00Z\"", FAKE_NOW_MS},
        {"\"2026-07-31T11:30:00+02:00\"", FAKE_NOW_MS},
        {"\"2026-07-31t04:00:00.999999-05:30\"", FAKE_NOW_MS + 999},
        {"\"2024-02-29T00:00:00Z\"", INT64_C(1709164800000)},
        {"\"1969-12-31T23:59:59.5Z\"", -500},
        {"1785490200", FAKE_NOW_MS},
        {"1785490200.123", FAKE_NOW_MS + 123},
        {"-0.5", -500},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        json_t *j = json_loads(ok[i].in, JSON_DECODE_ANY, NULL);
        assert_non_null(j);
        if (mem_api__decode_ts(j, "t", &ms, &err) != MEM_OK || ms != ok[i].ms)
            fail_msg("%s: got %lld", ok[i].in, (long long)ms);
        json_decref(j);
    }
    const char *bad[] = {"\"2026-07-31T09:30:00\"",
                         "\"2026-07-31\"",
                         "\"2023-02-29T00:00:00Z\"",
                         "\"2026-07-31T24:00:00Z\"",
                         "\"2026-07-31T09:30:00+2:00\"",
                         "\"2026-07-31T09:30:00Zjunk\"",
                         "\"\"",
                         "1e300",
                         "null",
                         "[]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *j = json_loads(bad[i], JSON_DECODE_ANY, NULL);
        assert_non_null(j);
        if (mem_api__decode_ts(j, "t", &ms, &err) != MEM_EINVAL) fail_msg("%s accepted", bad[i]);
        assert_string_equal(err.field, "t");
        json_decref(j);
    }
    char buf[32];
    mem_api__ts_format(FAKE_NOW_MS + 7, buf);
    assert_string_equal(buf, "2026-07-31T09:30:00.007Z");
    mem_api__ts_format(-1, buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");

    struct {
        const char *in;
        double s;
    } dur[] = {
        {"\"90d\"", 90 * 86400.0}, {"\"36h\"", 36 * 3600.0}, {"\"15m\"", 900}, {"\"30s\"", 30},
        {"\"2w\"", 14 * 86400.0},  {"\"1.5h\"", 5400},       {"0", 0},         {"12.5", 12.5}};
    for (size_t i = 0; i < sizeof(dur) / sizeof(dur[0]); i++) {
        json_t *j = json_loads(dur[i].in, JSON_DECODE_ANY, NULL);
        if (mem_api__decode_duration(j, "d", &s, &err) != MEM_OK || fabs(s - dur[i].s) > 1e-9)
            fail_msg("%s: got %g", dur[i].in, s);
        json_decref(j);
    }
    const char *dbad[] = {"\"90x\"", "\"d\"", "\"-1d\"", "-1", "\"\"", "true", "1e300"};
    for (size_t i = 0; i < sizeof(dbad) / sizeof(dbad[0]); i++) {
        json_t *j = json_loads(dbad[i], JSON_DECODE_ANY, NULL);
        if (mem_api__decode_duration(j, "d", &s, &err) != MEM_EINVAL)
            fail_msg("%s accepted", dbad[i]);
        json_decref(j);
    }
}

static int setup(void **state)
{
    ctx_init();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_bad_inputs, setup),
        cmocka_unit_test_setup(test_bad_large_inputs, setup),
        cmocka_unit_test_setup(test_nonmonotonic_body_names_both, setup),
        cmocka_unit_test_setup(test_decode_insert_single, setup),
        cmocka_unit_test_setup(test_decode_base64_embeddings, setup),
        cmocka_unit_test_setup(test_decode_insert_generated_id_and_defaults, setup),
        cmocka_unit_test(test_uuid7_many),
        cmocka_unit_test_setup(test_decode_insert_text_only, setup),
        cmocka_unit_test_setup(test_decode_retrieve_defaults, setup),
        cmocka_unit_test_setup(test_decode_retrieve_everything, setup),
        cmocka_unit_test_setup(test_decode_compact, setup),
        cmocka_unit_test_setup(test_timestamps_and_durations, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
