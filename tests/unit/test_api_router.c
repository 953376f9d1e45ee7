/* test_api_router.c - routing, content types, handlers over the fake store, the pending-op
 * round trip (handle -> writer -> finish), the embedder seam (handle -> provider -> resume),
 * encoders and the error map
 * SPDX-License-Identifier: MIT
 */
#include <math.h>

#include "tests/unit/api_fake.h"

typedef struct route_case {
    const char *method, *path;
    int rc;
    mem_api__route_kind_t kind;
    const char *ns, *id; /* expected when rc == MEM_OK */
} route_case_t;

static void test_route_table(void **state)
{
    static const route_case_t C[] = {
        {"GET", "/healthz", MEM_OK, MEM_API_R_HEALTHZ, "", ""},
        {"GET", "/v1/namespaces", MEM_OK, MEM_API_R_NAMESPACES, "", ""},
        {"GET", "/v1/namespaces/mem", MEM_OK, MEM_API_R_NS, "mem", ""},
        {"PUT", "/v1/namespaces/_a.b-c9", MEM_OK, MEM_API_R_NS, "_a.b-c9", ""},
        {"DELETE", "/v1/namespaces/A", MEM_OK, MEM_API_R_NS, "A", ""},
        {"POST", "/v1/namespaces/mem/segments", MEM_OK, MEM_API_R_SEGMENTS, "mem", ""},
        {"GET", "/v1/namespaces/mem/segments/abc", MEM_OK, MEM_API_R_SEGMENT, "mem", "abc"},
        {"DELETE", "/v1/namespaces/mem/segments/a%2Fb%20c", MEM_OK, MEM_API_R_SEGMENT, "mem",
         "a/b c"},
        {"GET", "/v1/namespaces/mem/segments/%e6%9d%b1", MEM_OK, MEM_API_R_SEGMENT, "mem",
         "\xe6\x9d\xb1"},
        {"POST", "/v1/namespaces/mem/retrieve", MEM_OK, MEM_API_R_RETRIEVE, "mem", ""},
        {"POST", "/v1/namespaces/mem/compact", MEM_OK, MEM_API_R_COMPACT, "mem", ""},
        {"POST", "/mcp", MEM_OK, MEM_API_R_MCP, "", ""},
        {"GET", "/openapi.json", MEM_OK, MEM_API_R_OPENAPI, "", ""},
        /* 404 */
        {"GET", "/", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "/v2/namespaces", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "/v1", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "/v1/namespace", MEM_ENOTFOUND, 0, NULL, NULL},
        {"POST", "/v1/namespaces/mem/search", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "/v1/namespaces/mem/segments/a/b", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "/healthz/x", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "/openapi.yaml", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "/openapi.json/x", MEM_ENOTFOUND, 0, NULL, NULL},
        {"GET", "/metrics", MEM_OK, MEM_API_R_METRICS, "", ""},
        {"GET", "/v1/cluster", MEM_OK, MEM_API_R_CLUSTER, "", ""},
        {"POST", "/v1/cluster/snapshot", MEM_OK, MEM_API_R_CLUSTER_SNAPSHOT, "", ""},
        {"POST", "/metrics", MEM_EMETHOD, 0, NULL, NULL},
        {"GET", "/v1/namespaces/a/b/c/d/e/f/g", MEM_ENOTFOUND, 0, NULL, NULL},
        /* 405 */
        {"POST", "/healthz", MEM_EMETHOD, 0, NULL, NULL},
        {"POST", "/v1/namespaces", MEM_EMETHOD, 0, NULL, NULL},
        {"POST", "/v1/namespaces/mem", MEM_EMETHOD, 0, NULL, NULL},
        {"PUT", "/v1/namespaces/mem/segments", MEM_EMETHOD, 0, NULL, NULL},
        {"PUT", "/v1/namespaces/mem/segments/x", MEM_EMETHOD, 0, NULL, NULL},
        {"GET", "/v1/namespaces/mem/retrieve", MEM_EMETHOD, 0, NULL, NULL},
        {"DELETE", "/v1/namespaces/mem/compact", MEM_EMETHOD, 0, NULL, NULL},
        {"GET", "/mcp", MEM_EMETHOD, 0, NULL, NULL},
        {"DELETE", "/mcp", MEM_EMETHOD, 0, NULL, NULL},
        {"POST", "/openapi.json", MEM_EMETHOD, 0, NULL, NULL},
        {"get", "/healthz", MEM_EMETHOD, 0, NULL, NULL},
        {"GETX", "/healthz", MEM_EMETHOD, 0, NULL, NULL},
        {"", "/healthz", MEM_EMETHOD, 0, NULL, NULL},
        /* bad names and ids: 400 */
        {"GET", "/v1/namespaces/.", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/..", MEM_EINVAL, 0, NULL, NULL},
        {"POST", "/v1/namespaces/../segments", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/%2F", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/a%2Fb", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/%61", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/-x", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/.x", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/a b", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/caf\xc3\xa9", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/", MEM_EINVAL, 0, NULL, NULL},
        {"POST", "/v1/namespaces//segments", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         MEM_EINVAL, 0, NULL, NULL}, /* 65 */
        {"GET", "/v1/namespaces/mem/segments/%00", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/mem/segments/%zz", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/mem/segments/abc%2", MEM_EINVAL, 0, NULL, NULL},
        {"GET", "/v1/namespaces/mem/segments/", MEM_EINVAL, 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(C) / sizeof(C[0]); i++) {
        mem_api__route_t r;
        mem_err_t err;
        mem_err_clear(&err);
        int rc = mem_api__route(C[i].method, C[i].path, &r, &err);
        if (rc != C[i].rc)
            fail_msg("%s %s: rc %d, want %d (%s)", C[i].method, C[i].path, rc, C[i].rc, err.msg);
        if (rc == MEM_OK) {
            assert_int_equal(r.kind, C[i].kind);
            assert_string_equal(r.ns, C[i].ns);
            assert_string_equal(r.id, C[i].id);
        } else if (rc == MEM_EINVAL) {
            assert_true(strcmp(err.field, "namespace") == 0 || strcmp(err.field, "id") == 0);
        }
    }
    /* 64 bytes is the longest name */
    char path[128] = "/v1/namespaces/";
    memset(path + 15, 'n', 64);
    mem_api__route_t r;
    assert_int_equal(mem_api__route("GET", path, &r, NULL), MEM_OK);
    assert_int_equal(strlen(r.ns), 64);
    /* an id of exactly 128 bytes after decoding is fine, 129 is not */
    char p2[512] = "/v1/namespaces/m/segments/";
    size_t o = strlen(p2);
    for (int i = 0; i < 128; i++, o += 3)
        memcpy(p2 + o, "%41", 3);
    p2[o] = 0;
    assert_int_equal(mem_api__route("GET", p2, &r, NULL), MEM_OK);
    assert_int_equal(strlen(r.id), 128);
    strcpy(p2 + o, "A");
    assert_int_equal(mem_api__route("GET", p2, &r, NULL), MEM_EINVAL);
}

static void test_handle_404_405_bodies(void **state)
{
    mem_api_resp_t r;
    call("PATCH", "/v1/namespaces/mem", NULL, &r);
    check_error(&r, 405, "method_not_allowed", NULL);
    assert_string_equal(r.allow, "GET, PUT, DELETE");
    assert_string_equal(r.route, "namespace");
    mem_api_resp_deinit(&r);
    call("GET", "/mcp", NULL, &r);
    check_error(&r, 405, "method_not_allowed", NULL);
    assert_string_equal(r.allow, "POST");
    mem_api_resp_deinit(&r);
    call("GET", "/nope", NULL, &r);
    check_error(&r, 404, "not_found", NULL);
    assert_null(r.allow);
    assert_string_equal(r.route, "unknown");
    mem_api_resp_deinit(&r);
    /* the route is checked before the body: a 404 wins over bad JSON */
    call("POST", "/v1/namespaces/mem/nope", "{", &r);
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
    call("GET", "/v1/namespaces/..", NULL, &r);
    check_error(&r, 400, "invalid_field", "namespace");
    mem_api_resp_deinit(&r);
    expect_error("GET", "/v1/namespaces/nope", NULL, 404, "not_found", NULL);
    expect_error("GET", "/v1/namespaces/mem/segments/zz", NULL, 404, "not_found", NULL);
}

static void test_content_type(void **state)
{
    static const char *body = "{\"embedding\":[1,0,0]}";
    const char *bad[] = {NULL, /* a body needs a Content-Type (SPEC section 9) */
                         "text/plain",
                         "application/x-www-form-urlencoded",
                         "application/jsonx",
                         "application/json-seq",
                         "multipart/form-data; boundary=x",
                         ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mem_api_resp_t r;
        call_ct("POST", "/v1/namespaces/mem/retrieve", NULL, bad[i], body, &r);
        check_error(&r, 415, "unsupported_media_type", NULL);
        mem_api_resp_deinit(&r);
    }
    const char *good[] = {"application/json", "application/json; charset=utf-8", "Application/JSON",
                          " application/json ;charset=UTF-8"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        mem_api_resp_t r;
        call_ct("POST", "/v1/namespaces/mem/retrieve", NULL, good[i], body, &r);
        if (r.status != 200)
            fail_msg("%s: %d %.*s", good[i] ? good[i] : "(none)", r.status, (int)r.body_len,
                     r.body);
        mem_api_resp_deinit(&r);
    }
    /* bodiless methods do not care */
    mem_api_resp_t r;
    call_ct("GET", "/v1/namespaces/mem", NULL, "text/plain", NULL, &r);
    assert_int_equal(r.status, 200);
    mem_api_resp_deinit(&r);
    /* 415 is checked before the JSON */
    call_ct("POST", "/v1/namespaces/mem/retrieve", NULL, "text/plain", "{", &r);
    check_error(&r, 415, "unsupported_media_type", NULL);
    mem_api_resp_deinit(&r);
}

static void test_query_strings(void **state)
{
    mem_api_resp_t r;
    call_ct("GET", "/v1/namespaces/mem/segments/a%2Fb", "embedding=true", NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(fake.with_embedding);
    body_has(&r, "\"embedding\":[0.6,0.8,0.0]");
    mem_api_resp_deinit(&r);
    call_ct("GET", "/v1/namespaces/mem/segments/a%2Fb", "embedding=false", NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_false(fake.with_embedding);
    assert_null(strstr(r.body, "\"embedding\""));
    mem_api_resp_deinit(&r);
    /* base64 of the little-endian float32 0.6f 0.8f 0.0f */
    call_ct("GET", "/v1/namespaces/mem/segments/a%2Fb", "embedding=base64", NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(fake.with_embedding);
    body_has(&r, "\"embedding\":\"mpkZP83MTD8AAAAA\"");
    mem_api_resp_deinit(&r);
    call_ct("GET", "/v1/namespaces/mem/segments/a%2Fb", "embedding", NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    body_has(&r, "\"embedding\":[0.6,0.8,0.0]");
    mem_api_resp_deinit(&r);
    call_ct("GET", "/v1/namespaces/mem/segments/a%2Fb", "embedding=BASE64", NULL, NULL, &r);
    check_error(&r, 400, "invalid_field", "embedding");
    mem_api_resp_deinit(&r);
    call_ct("GET", "/v1/namespaces/mem/segments/a%2Fb", "embedding=maybe", NULL, NULL, &r);
    check_error(&r, 400, "invalid_field", "embedding");
    mem_api_resp_deinit(&r);
    call_ct("GET", "/v1/namespaces/mem/segments/a%2Fb", "embeding=1", NULL, NULL, &r);
    check_error(&r, 400, "invalid_field", "query");
    mem_api_resp_deinit(&r);
    call_ct("GET", "/v1/namespaces", "limit=5", NULL, NULL, &r);
    check_error(&r, 400, "invalid_field", "query");
    mem_api_resp_deinit(&r);
}

static void test_reads(void **state)
{
    mem_api_resp_t r;
    call("GET", "/healthz", NULL, &r);
    assert_body(&r, 200, "{\"status\":\"ok\"}");
    mem_api_resp_deinit(&r);
    call("GET", "/openapi.json", NULL, &r); /* the compiled-in api/openapi.json */
    assert_int_equal(r.status, 200);
    assert_string_equal(r.content_type, "application/json");
    assert_int_equal(r.body_len, mem_api__openapi_json_len);
    json_t *doc = resp_json(&r);
    assert_string_equal(json_string_value(json_object_get(doc, "openapi")), "3.1.0");
    assert_non_null(json_object_get(json_object_get(doc, "paths"), "/openapi.json"));
    json_decref(doc);
    mem_api_resp_deinit(&r);
    call("GET", "/v1/namespaces/mem", NULL, &r);
    assert_body(&r, 200,
                "{\"name\":\"mem\",\"count\":5,\"superseded\":1,\"archived\":0,\"dim\":3,"
                "\"oldest\":\"2026-07-30T09:30:00.000Z\",\"newest\":\"2026-07-31T09:29:58.500Z\","
                "\"coherence\":true,\"graph_edges\":4,\"max_degree\":2,\"embedder\":null}");
    assert_string_equal(r.content_type, "application/json");
    mem_api_resp_deinit(&r);
    call("GET", "/v1/namespaces/empty", NULL, &r);
    assert_body(
        &r, 200,
        "{\"name\":\"empty\",\"count\":0,\"superseded\":1,\"archived\":0,\"dim\":3,"
        "\"oldest\":null,\"newest\":null,\"coherence\":true,\"graph_edges\":4,\"max_degree\":2,"
        "\"embedder\":null}");
    mem_api_resp_deinit(&r);
    call("GET", "/v1/namespaces", NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *j = resp_json(&r);
    json_t *arr = json_object_get(j, "namespaces");
    assert_int_equal(json_array_size(arr), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(arr, 2), "name")), "text");
    json_decref(j);
    mem_api_resp_deinit(&r);
    call("GET", "/v1/namespaces/mem/segments/a%2Fb", NULL, &r);
    assert_body(&r, 200,
                "{\"id\":\"a/b\",\"seq\":7,\"timestamp\":\"2026-07-31T09:29:58.500Z\",\"text\":"
                "\"hello\",\"source\":\"hermes\",\"metadata\":{\"b\":1,\"a\":[true,null]},"
                "\"supersedes\":[\"old\"],\"superseded_by\":null,\"archived\":false}");
    mem_api_resp_deinit(&r);
}

static void test_listing(void **state)
{
    mem_api_resp_t r;
    call_ct("GET", "/v1/namespaces/mem/segments", "limit=2", NULL, NULL, &r);
    json_t *j = resp_json(&r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(j, "segments")), 2);
    assert_non_null(json_string_value(json_object_get(j, "next")));
    char next[64]; /* a copy: j is released below and next is used after that */
    snprintf(next, sizeof(next), "%s", json_string_value(json_object_get(j, "next")));
    assert_int_equal(strlen(next), 56);
    char q[128];
    snprintf(q, sizeof(q), "after=%s&limit=10&include_archived&since=1785490190", next);
    json_decref(j);
    mem_api_resp_deinit(&r);
    assert_int_equal(fake_list_req.limit, 2);
    assert_int_equal(fake_list_req.after_seq, 0);
    call_ct("GET", "/v1/namespaces/mem/segments", q, NULL, NULL, &r);
    j = resp_json(&r);
    assert_int_equal(r.status, 200);
    assert_int_equal(fake_list_req.after_seq, 2); /* the cursor holds the last seq */
    assert_true(fake_list_req.resume);            /* and the namespace's incarnation */
    assert_true(fake_list_req.incarnation == fake_incarnation);
    assert_true(fake_list_req.created_known); /* and its creation time */
    assert_true(fake_list_req.created_ms == fake_created_ms);
    assert_true(fake_list_req.include_archived);
    assert_false(fake_list_req.include_superseded);
    assert_int_equal(fake_list_req.since_ms, INT64_C(1785490190000));
    assert_int_equal(json_array_size(json_object_get(j, "segments")), 3);
    assert_true(json_is_null(json_object_get(j, "next")));
    json_decref(j);
    mem_api_resp_deinit(&r);
    /* a cursor of another namespace, a mangled one, bad limits */
    snprintf(q, sizeof(q), "after=%s", next);
    call_ct("GET", "/v1/namespaces/text/segments", q, NULL, NULL, &r);
    check_error(&r, 400, "invalid_field", "after");
    mem_api_resp_deinit(&r);
    /* "mem" deleted and created again: the same name, another incarnation */
    uint64_t was = fake_incarnation;
    fake_incarnation = 0x77;
    call_ct("GET", "/v1/namespaces/mem/segments", q, NULL, NULL, &r);
    check_error(&r, 400, "invalid_field", "after");
    mem_api_resp_deinit(&r);
    fake_incarnation = was;
    /* a cursor with its creation time changed no longer checks */
    char bent[64];
    snprintf(bent, sizeof(bent), "%s", next);
    bent[47] = bent[47] == '0' ? '1' : '0';
    snprintf(q, sizeof(q), "after=%s", bent);
    call_ct("GET", "/v1/namespaces/mem/segments", q, NULL, NULL, &r);
    check_error(&r, 400, "invalid_field", "after");
    mem_api_resp_deinit(&r);
    /* the release before's cursor (40 digits: seq, incarnation, a check of namespace, seq and
     * incarnation) is taken, without a creation time */
    uint32_t h7 = 2166136261u;
    for (const char *p = "mem"; *p; p++)
        h7 = (h7 ^ (uint8_t)*p) * 16777619u;
    for (int i = 0; i < 8; i++)
        h7 = (h7 ^ (uint8_t)((uint64_t)2 >> (8 * i))) * 16777619u;
    for (int i = 0; i < 8; i++)
        h7 = (h7 ^ (uint8_t)(fake_incarnation >> (8 * i))) * 16777619u;
    snprintf(q, sizeof(q), "after=%016x%016llx%08lx", 2, (unsigned long long)fake_incarnation,
             (unsigned long)(h7 ^ 0x6d6e656du));
    call_ct("GET", "/v1/namespaces/mem/segments", q, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(fake_list_req.after_seq, 2);
    assert_true(fake_list_req.resume && fake_list_req.incarnation == fake_incarnation);
    assert_false(fake_list_req.created_known);
    mem_api_resp_deinit(&r);
    /* a cursor of an older release (seq and a check of namespace and seq) is refused by name */
    uint32_t h = 2166136261u;
    for (const char *p = "mem"; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint8_t)((uint64_t)2 >> (8 * i))) * 16777619u;
    snprintf(q, sizeof(q), "after=%016x%08lx", 2, (unsigned long)(h ^ 0x6d6e656du));
    call_ct("GET", "/v1/namespaces/mem/segments", q, NULL, NULL, &r);
    check_error(&r, 400, "invalid_field", "after");
    assert_non_null(strstr(r.body, "older mnemod"));
    mem_api_resp_deinit(&r);
    static const char *const BAD[][2] = {{"limit=0", "limit"},    {"limit=1001", "limit"},
                                         {"limit=1x", "limit"},   {"after=00", "after"},
                                         {"since=soon", "since"}, {"until=%zz", "until"},
                                         {"source=", "source"},   {"embedding=2", "embedding"},
                                         {"x=1", "query"},        {"limit=1&limit=2", "limit"},
                                         {"=1", "query"}};
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        call_ct("GET", "/v1/namespaces/mem/segments", BAD[i][0], NULL, NULL, &r);
        check_error(&r, 400, "invalid_field", BAD[i][1]);
        mem_api_resp_deinit(&r);
    }
    call_ct("GET", "/v1/namespaces/nope/segments", "", NULL, NULL, &r);
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
}

static void test_retrieve_answer(void **state)
{
    mem_api_resp_t r;
    call("POST", "/v1/namespaces/mem/retrieve",
         "{\"embedding\":[0,3,4],\"k\":5,\"source\":\"hermes\",\"explain\":true}", &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(fake.n_retrieve, 1);
    assert_int_equal(fake.q.scan.k, 5);
    assert_string_equal(fake.q.source, "hermes");
    assert_true(fake.q.scan.query[1] > 0.59f && fake.q.scan.query[1] < 0.61f);
    json_t *j = resp_json(&r);
    assert_true(json_is_real(json_object_get(j, "took_ms")));
    json_object_del(j, "took_ms");
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(
        s, "{\"namespace\":\"mem\",\"scanned\":5,\"kernel\":\"avx512\",\"match\":\"vector\","
           "\"results\":["
           "{\"id\":\"x1\",\"seq\":12,\"score\":0.8125,\"timestamp\":\"2026-07-31T09:09:25.500Z\","
           "\"text\":\"remember the milk\",\"source\":\"hermes\",\"metadata\":{\"k\":\"v\"},"
           "\"similarity\":0.875,\"decay\":0.5,\"gate\":0.25,\"age_seconds\":1234.5,"
           "\"vector_score\":0.875},"
           "{\"id\":\"x0\",\"seq\":3,\"score\":0.5,\"timestamp\":\"2026-07-31T09:30:00.000Z\","
           "\"similarity\":0.5,\"decay\":1.0,\"gate\":0.0,\"age_seconds\":0.0,"
           "\"vector_score\":0.5}]}");
    free(s);
    json_decref(j);
    mem_api_resp_deinit(&r);
    /* without explain: no explanation fields */
    call("POST", "/v1/namespaces/mem/retrieve", "{\"embedding\":[0,3,4],\"k\":1}", &r);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "similarity"));
    assert_null(strstr(r.body, "age_seconds"));
    body_has(&r, "\"score\":0.8125");
    mem_api_resp_deinit(&r);
}

/* Play the writer: the op is final, then finish. */
static void writer_done(mem_api_resp_t *r, int rc)
{
    submitted(r);
    r->pending->rc = rc;
    mem_api_finish(&test_ctx, r);
}

static void test_insert_round_trip(void **state)
{
    mem_api_resp_t r;
    call("POST", "/v1/namespaces/fresh/segments",
         "{\"segments\":[{\"id\":\"a\",\"embedding\":[1,0],\"timestamp\":1785490000},"
         "{\"id\":\"b\",\"embedding\":[0,1],\"supersedes\":[\"a\"]}]}",
         &r);
    assert_int_equal(r.status, 0);
    assert_null(r.body);
    mem_store_op_t *op = submitted(&r);
    assert_int_equal(op->kind, MEM_STORE_OP_INSERT);
    assert_string_equal(op->ns, "fresh");
    assert_int_equal(op->dim, 2);
    assert_int_equal(op->n_segs, 2);
    assert_int_equal(op->now_ms, FAKE_NOW_MS);
    assert_non_null(op->outs);
    assert_string_equal(op->segs[1].supersedes[0], "a");
    assert_string_equal(r.route, "segments");
    op->outs[0] = (mem_store_seg_out_t){.seq = 1, .ts_ms = INT64_C(1785490000000)};
    op->outs[1] = (mem_store_seg_out_t){.seq = 2, .ts_ms = FAKE_NOW_MS};
    op->created = true;
    writer_done(&r, MEM_OK);
    assert_body(
        &r, 201,
        "{\"inserted\":[{\"id\":\"a\",\"seq\":1,\"timestamp\":\"2026-07-31T09:26:40.000Z\"},"
        "{\"id\":\"b\",\"seq\":2,\"timestamp\":\"2026-07-31T09:30:00.000Z\"}]}");
    mem_api_resp_deinit(&r);

    /* idempotent retry: nothing new is 200 */
    call("POST", "/v1/namespaces/mem/segments", "{\"id\":\"a\",\"embedding\":[1,0,0]}", &r);
    submitted(&r);
    r.pending->outs[0] = (mem_store_seg_out_t){.seq = 9, .ts_ms = FAKE_NOW_MS, .existed = true};
    writer_done(&r, MEM_OK);
    assert_body(
        &r, 200,
        "{\"inserted\":[{\"id\":\"a\",\"seq\":9,\"timestamp\":\"2026-07-31T09:30:00.000Z\"}]}");
    mem_api_resp_deinit(&r);

    /* the writer's errors become their SPEC bodies */
    call("POST", "/v1/namespaces/mem/segments",
         "{\"embedding\":[1,0,0],\"timestamp\":\"2026-07-01T00:00:00Z\"}", &r);
    submitted(&r);
    mem_err_field(&r.pending->err, MEM_ENONMONO, "timestamp", "timestamp: older than newest");
    r.pending->err.last_ms = FAKE_NOW_MS;
    r.pending->err.given_ms = INT64_C(1782864000000);
    writer_done(&r, MEM_ENONMONO);
    assert_body(&r, 409,
                "{\"error\":{\"code\":\"non_monotonic_timestamp\",\"message\":\"timestamp: older "
                "than newest\",\"field\":\"timestamp\",\"last_timestamp\":"
                "\"2026-07-31T09:30:00.000Z\",\"timestamp\":\"2026-07-01T00:00:00.000Z\"}}");
    mem_api_resp_deinit(&r);
    static const struct {
        int rc, status;
        const char *code;
    } E[] = {{MEM_EDUPID, 409, "duplicate_id"},     {MEM_EUNKNOWNID, 400, "unknown_id"},
             {MEM_EDIM, 400, "dimension_mismatch"}, {MEM_EFULL, 507, "insufficient_storage"},
             {MEM_EBUSY, 503, "unavailable"},       {MEM_ESTORAGE, 500, "internal"},
             {MEM_ELIMIT, 400, "invalid_field"},    {MEM_EMISMATCH, 409, "embedder_mismatch"},
             {MEM_EWRITETIME, 504, "write_timeout"}};
    for (size_t i = 0; i < sizeof(E) / sizeof(E[0]); i++) {
        call("POST", "/v1/namespaces/mem/segments", "{\"embedding\":[1,0,0]}", &r);
        writer_done(&r, E[i].rc); /* err left empty: the code alone must do */
        check_error(&r, E[i].status, E[i].code, NULL);
        if (E[i].rc == MEM_EBUSY) assert_int_equal(r.retry_after_s, 1);
        if (E[i].rc == MEM_EWRITETIME) assert_int_equal(r.retry_after_s, 0); /* not a retry */
        mem_api_resp_deinit(&r);
    }
}

static void test_namespace_writes(void **state)
{
    mem_api_resp_t r;
    call("PUT", "/v1/namespaces/new", "{\"dim\":384}", &r);
    submitted(&r);
    assert_int_equal(r.pending->kind, MEM_STORE_OP_NS_CREATE);
    assert_int_equal(r.pending->dim, 384);
    r.pending->created = true;
    writer_done(&r, MEM_OK);
    assert_body(&r, 201, "{\"name\":\"new\",\"dim\":384}");
    mem_api_resp_deinit(&r);
    call("PUT", "/v1/namespaces/new", NULL, &r); /* no body: the embedder's dimension */
    submitted(&r);
    assert_int_equal(r.pending->dim, 256);
    writer_done(&r, MEM_OK);
    assert_body(&r, 200, "{\"name\":\"new\",\"dim\":256}");
    mem_api_resp_deinit(&r);
    call("PUT", "/v1/namespaces/new", "{\"dim\":3}", &r);
    submitted(&r);
    mem_err_set(&r.pending->err, MEM_EEXISTS, "namespace new exists with dim 384");
    writer_done(&r, MEM_EEXISTS);
    assert_body(&r, 409,
                "{\"error\":{\"code\":\"namespace_exists\",\"message\":\"namespace new exists "
                "with dim 384\"}}");
    mem_api_resp_deinit(&r);
    call("DELETE", "/v1/namespaces/mem", NULL, &r);
    submitted(&r);
    assert_int_equal(r.pending->kind, MEM_STORE_OP_NS_DROP);
    writer_done(&r, MEM_OK);
    assert_body(&r, 200, "{\"deleted\":\"mem\"}");
    mem_api_resp_deinit(&r);
    call("DELETE", "/v1/namespaces/gone", NULL, &r);
    writer_done(&r, MEM_ENOTFOUND);
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
    call("DELETE", "/v1/namespaces/mem/segments/a%2Fb", NULL, &r);
    submitted(&r);
    assert_int_equal(r.pending->kind, MEM_STORE_OP_DELETE);
    assert_string_equal(r.pending->id, "a/b");
    writer_done(&r, MEM_OK);
    assert_body(&r, 200, "{\"deleted\":\"a/b\"}");
    mem_api_resp_deinit(&r);
}

static void test_compact_flow(void **state)
{
    mem_api_resp_t r;
    call("POST", "/v1/namespaces/mem/compact", "{\"target\":2,\"purge\":true}", &r);
    submitted(&r);
    assert_int_equal(fake.n_plan, 1);
    assert_true(fake.creq.has_target && fake.creq.target == 2);
    mem_store_op_t *op = submitted(&r);
    assert_int_equal(op->kind, MEM_STORE_OP_COMPACT);
    assert_int_equal(op->n_evict, 3);
    assert_string_equal(op->evict_ids[2], "s2");
    assert_true(op->purge);
    op->n_applied = 3;
    writer_done(&r, MEM_OK);
    json_t *j = resp_json(&r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_real(json_object_get(j, "took_ms")));
    json_object_del(j, "took_ms");
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"before\":5,\"after\":2,\"policy\":\"novelty\",\"evicted\":[\"s0\","
                           "\"s1\",\"s2\"]}");
    free(s);
    json_decref(j);
    mem_api_resp_deinit(&r);
    /* dry run: planned, answered at once, nothing submitted */
    call("POST", "/v1/namespaces/mem/compact",
         "{\"ratio\":0.8,\"dry_run\":true,\"policy\":\"structural_time\"}", &r);
    assert_null(r.pending);
    assert_int_equal(r.status, 200);
    body_has(&r, "\"before\":5,\"after\":4,\"policy\":\"structural_time\","
                 "\"evicted\":[\"s0\"]");
    mem_api_resp_deinit(&r);
    /* target >= active count: no-op */
    call("POST", "/v1/namespaces/mem/compact", "{\"target\":10}", &r);
    assert_null(r.pending);
    assert_int_equal(r.status, 200);
    assert_non_null(
        strstr(r.body, "\"before\":5,\"after\":5,\"policy\":\"novelty\",\"evicted\":[]"));
    mem_api_resp_deinit(&r);
}

static void test_error_map(void **state)
{
    static const struct {
        int code, status;
        const char *wire;
    } E[] = {{MEM_EINVAL, 400, "invalid_field"},          {MEM_EJSON, 400, "invalid_json"},
             {MEM_EUNAUTH, 401, "unauthorized"},          {MEM_ETOOBIG, 413, "payload_too_large"},
             {MEM_EMEDIA, 415, "unsupported_media_type"}, {MEM_ENOMEM, 503, "unavailable"},
             {MEM_EFULL, 507, "insufficient_storage"},    {MEM_ECORRUPT, 500, "internal"}};
    for (size_t i = 0; i < sizeof(E) / sizeof(E[0]); i++) {
        mem_api_resp_t r = {0};
        mem_err_t err;
        mem_err_clear(&err);
        mem_err_set(&err, E[i].code, "something went wrong");
        mem_api_error(&r, &err);
        check_error(&r, E[i].status, E[i].wire, NULL);
        mem_api_resp_deinit(&r);
    }
    mem_api_resp_t r = {0};
    mem_err_t err;
    mem_err_clear(&err);
    mem_err_field(&err, MEM_EBUSY, NULL, "queue full");
    err.retry_after_s = 7;
    mem_api_error(&r, &err);
    assert_body(&r, 503, "{\"error\":{\"code\":\"unavailable\",\"message\":\"queue full\"}}");
    assert_int_equal(r.retry_after_s, 7);
    /* a second error replaces the first body without leaking it */
    mem_api__fail(&r, MEM_EINVAL, "k", "k: \"quoted\" and \\ escaped");
    assert_body(&r, 400,
                "{\"error\":{\"code\":\"invalid_field\",\"message\":\"k: \\\"quoted\\\" "
                "and \\\\ escaped\",\"field\":\"k\"}}");
    mem_api_resp_deinit(&r);
    mem_api_resp_deinit(&r); /* twice is harmless */
    mem_api_resp_deinit(NULL);
}

/* /metrics while loading: the pool thread renders the store as the loop thread saw it at
 * mem_api_begin, never ctx->store, which the loop thread publishes at any moment. */
static int metrics_calls;
static mem_store_t *metrics_store_seen;

static char *metrics_probe(void *ud, mem_store_t *st, size_t *len)
{
    metrics_calls++;
    metrics_store_seen = st;
    char *text = strdup(st ? "mnemod_ready 1\n" : "mnemod_ready 0\n");
    *len = text ? strlen(text) : 0;
    return text;
}

static void test_metrics_uses_the_store_seen_at_begin(void **state)
{
    test_ctx.hooks.metrics = metrics_probe;
    mem_store_t *loaded = test_ctx.store;
    for (int loading = 1; loading >= 0; loading--) {
        metrics_calls = 0;
        test_ctx.store = loading ? NULL : loaded;
        mem_api_req_t req = {.method = "GET", .path = "/metrics", .query = ""};
        mem_api_resp_t r;
        memset(&r, 0, sizeof(r));
        mem_api_next_t next = mem_api_begin(&test_ctx, &req, &r);
        /* the loop thread publishes (or, at shutdown, clears) the store meanwhile */
        test_ctx.store = loading ? loaded : NULL;
        while (next == MEM_API_BODY || next == MEM_API_WORK)
            next = mem_api_work(&test_ctx, &req, &r);
        assert_int_equal(next, MEM_API_REPLY);
        assert_int_equal(r.status, 200);
        assert_int_equal(metrics_calls, 1);
        assert_ptr_equal(metrics_store_seen, loading ? NULL : loaded);
        assert_memory_equal(r.body, loading ? "mnemod_ready 0\n" : "mnemod_ready 1\n", r.body_len);
        mem_api_resp_deinit(&r);
    }
    test_ctx.store = loaded;
    test_ctx.hooks.metrics = NULL;
}

static void test_dump_shortest_reals(void **state)
{
    json_t *j = json_loads("{\"a\":0.1,\"b\":[1234567.891,1e-7,100000.0,-0.0,1e300,0.83,7,-12],"
                           "\"s\":\"x\\\"1.50\\\\\",\"t\":2.5e-300,\"u\":[1.0,-1.5E3]}",
                           0, NULL);
    assert_non_null(j);
    char *s = mem_api__dump(j);
    assert_string_equal(s, "{\"a\":0.1,\"b\":[1234567.891,1e-07,100000.0,-0.0,1e+300,0.83,7,-12],"
                           "\"s\":\"x\\\"1.50\\\\\",\"t\":2.5e-300,\"u\":[1.0,-1500.0]}");
    /* and it reads back as the same values */
    json_t *back = json_loads(s, 0, NULL);
    assert_true(json_equal(j, back));
    json_decref(back);
    free(s);
    json_decref(j);
    /* metadata is stored in that form, so it comes back as sent */
    mem_api_resp_t r;
    call("POST", "/v1/namespaces/mem/segments",
         "{\"embedding\":[1,0,0],\"metadata\":{\"price\":19.99,\"n\":3,\"tags\":[\"a\"]}}", &r);
    submitted(&r);
    assert_string_equal(r.pending->segs[0].metadata, "{\"price\":19.99,\"n\":3,\"tags\":[\"a\"]}");
    mem_api_resp_deinit(&r);
}

static int setup(void **state)
{
    ctx_init();
    return 0;
}

static size_t remote_dim_value;
static size_t remote_dim(void *ud)
{
    return *(size_t *)ud;
}

/* Switch the test context to a remote embedder "openai:m" whose dimension is *dim. */
static void use_remote(size_t dim)
{
    remote_dim_value = dim;
    test_ctx.embedder_id = "openai:m";
    test_ctx.embedder_remote = true;
    test_ctx.embedder_dim = remote_dim;
    test_ctx.embedder_ud = &remote_dim_value;
}

static void use_builtin(void)
{
    test_ctx.embedder_id = NULL;
    test_ctx.embedder_remote = false;
    test_ctx.embedder_dim = NULL;
    test_ctx.embedder_ud = NULL;
}

/* The embedder seam (SPEC 6): a text a remote embedder must embed makes the handler stop
 * with resp->embed (nothing pending, nothing answered); mem_api_resume goes on with the
 * vectors, or answers the provider's failure. */
static void test_embed_seam_insert(void **state)
{
    mem_api_resp_t r;
    use_remote(0); /* dimension not known yet */
    call("POST", "/v1/namespaces/fresh/segments",
         "{\"segments\":[{\"id\":\"a\",\"text\":\"alpha\"},{\"id\":\"b\",\"embedding\":[0,2]},"
         "{\"id\":\"c\",\"text\":\"gamma delta\",\"metadata\":{\"k\":1}}]}",
         &r);
    assert_int_equal(r.status, 0);
    assert_null(r.body);
    assert_null(r.pending);
    waits_embed(&r);
    assert_int_equal(r.embed->n, 2);
    assert_int_equal(r.embed->lens[0], 5);
    assert_memory_equal(r.embed->texts[0], "alpha", 5);
    assert_int_equal(r.embed->lens[1], 11);
    assert_memory_equal(r.embed->texts[1], "gamma delta", 11);
    float vecs[4] = {3, 4, 0, -5};
    mem_api_resume(&test_ctx, &r, vecs, 2, NULL);
    assert_null(r.embed);
    mem_store_op_t *op = submitted(&r);
    assert_int_equal(op->kind, MEM_STORE_OP_INSERT);
    assert_int_equal(op->dim, 2);
    assert_int_equal(op->n_segs, 3);
    assert_string_equal(op->embedder, "openai:m");
    assert_true(fabsf(op->segs[0].vec[0] - 0.6f) < 1e-6f &&
                fabsf(op->segs[0].vec[1] - 0.8f) < 1e-6f);
    assert_true(fabsf(op->segs[1].vec[1] - 1.0f) < 1e-6f);
    assert_true(fabsf(op->segs[2].vec[1] + 1.0f) < 1e-6f);
    assert_string_equal(op->segs[2].metadata, "{\"k\":1}");
    for (int i = 0; i < 3; i++)
        op->outs[i] = (mem_store_seg_out_t){.seq = i + 1, .ts_ms = FAKE_NOW_MS};
    op->created = true;
    writer_done(&r, MEM_OK);
    assert_int_equal(r.status, 201);
    mem_api_resp_deinit(&r);

    /* the provider's failure is the answer; nothing is submitted */
    call("POST", "/v1/namespaces/fresh/segments", "{\"text\":\"x\"}", &r);
    waits_embed(&r);
    mem_err_t e;
    mem_err_clear(&e);
    mem_err_set(&e, MEM_EEMBEDTIME, "embedder: no answer from the provider within 2s");
    mem_api_resume(&test_ctx, &r, NULL, 0, &e);
    assert_null(r.pending);
    check_error(&r, 504, "embedder_timeout", NULL);
    mem_api_resp_deinit(&r);
    call("POST", "/v1/namespaces/fresh/segments", "{\"text\":\"x\"}", &r);
    mem_err_set(&e, MEM_EEMBED, "embedder: the provider answered 500");
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, NULL, 0, &e);
    check_error(&r, 502, "embedder_error", NULL);
    mem_api_resp_deinit(&r);
    /* a zero vector from the provider is its failure */
    call("POST", "/v1/namespaces/fresh/segments", "{\"text\":\"x\"}", &r);
    float zero[2] = {0, 0};
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, zero, 2, NULL);
    check_error(&r, 502, "embedder_error", "text");
    mem_api_resp_deinit(&r);

    /* dimensions: the answer must fit the namespace ("mem" has dim 3) and the batch */
    call("POST", "/v1/namespaces/mem/segments", "{\"text\":\"x\"}", &r);
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, vecs, 2, NULL);
    check_error(&r, 400, "dimension_mismatch", "text");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/namespaces/fresh/segments",
         "{\"segments\":[{\"embedding\":[1,2,3]},{\"text\":\"x\"}]}", &r);
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, vecs, 2, NULL);
    check_error(&r, 400, "dimension_mismatch", "segments[1].text");
    mem_api_resp_deinit(&r);
    /* once the provider's dimension is known, a mismatch is found before any call */
    use_remote(2);
    expect_error("POST", "/v1/namespaces/mem/segments", "{\"text\":\"x\"}", 400,
                 "dimension_mismatch", "text");
    call("POST", "/v1/namespaces/mem/segments", "{\"text\":\"x\"}", &r);
    assert_null(r.embed);
    mem_api_resp_deinit(&r);
    expect_error("POST", "/v1/namespaces/fresh/segments",
                 "{\"segments\":[{\"embedding\":[1,2,3]},{\"text\":\"x\"}]}", 400,
                 "dimension_mismatch", "segments[1].text");
    expect_error("POST", "/v1/namespaces/fresh/segments", "{\"text\":\"\"}", 400, "invalid_field",
                 "text");
    /* a namespace whose vectors another embedder made: 409 before any call... */
    expect_error("POST", "/v1/namespaces/text/segments",
                 "{\"segments\":[{\"embedding\":[1,2]},{\"text\":\"x\"}]}", 409,
                 "embedder_mismatch", "segments[1].text");
    use_remote(0);
    expect_error("POST", "/v1/namespaces/text/segments", "{\"text\":\"x\",\"bogus\":1}", 409,
                 "embedder_mismatch", "text");
    use_remote(2);
    call("POST", "/v1/namespaces/text/segments", "{\"text\":\"x\"}", &r);
    assert_null(r.embed);
    check_error(&r, 409, "embedder_mismatch", "text");
    body_has(&r, "builtin");
    body_has(&r, "openai:m");
    mem_api_resp_deinit(&r);
    /* ...but a client embedding of its dimension is always accepted */
    static char body[4096];
    size_t o = (size_t)snprintf(body, sizeof(body), "{\"embedding\":[1");
    for (int i = 1; i < 256; i++)
        o += (size_t)snprintf(body + o, sizeof(body) - o, ",0");
    snprintf(body + o, sizeof(body) - o, "],\"text\":\"kept as is\"}");
    call("POST", "/v1/namespaces/text/segments", body, &r);
    assert_null(r.embed);
    submitted(&r);
    assert_null(r.pending->embedder);
    mem_api_resp_deinit(&r);

    /* the namespace's own embedder answering another dimension than it made them with is
     * the provider's failure (a model changed under its name), not the client's */
    use_remote(0);
    test_ctx.embedder_id = "builtin"; /* what "text" recorded */
    call("POST", "/v1/namespaces/text/segments", "{\"text\":\"x\"}", &r);
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, vecs, 2, NULL);
    check_error(&r, 502, "embedder_error", "text");
    assert_null(r.pending);
    mem_api_resp_deinit(&r);
    call("POST", "/v1/namespaces/text/retrieve", "{\"query\":\"x\"}", &r);
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, vecs, 2, NULL);
    check_error(&r, 502, "embedder_error", "query");
    mem_api_resp_deinit(&r);

    /* the built-in embedder names itself on the op, and is refused by a provider's namespace */
    use_builtin();
    call("POST", "/v1/namespaces/text/segments", "{\"text\":\"hello world\"}", &r);
    assert_null(r.embed);
    submitted(&r);
    assert_string_equal(r.pending->embedder, "builtin");
    assert_int_equal(r.pending->dim, 256);
    mem_api_resp_deinit(&r);
    call("POST", "/v1/namespaces/mem/segments", "{\"embedding\":[1,0,0]}", &r);
    submitted(&r);
    assert_null(r.pending->embedder);
    mem_api_resp_deinit(&r);
}

static void test_embed_seam_retrieve_mcp_put(void **state)
{
    mem_api_resp_t r;
    use_remote(0);
    /* mem holds client vectors: a text query matches by text unless it asks for vectors */
    call("POST", "/v1/namespaces/mem/retrieve", "{\"query\":\"milk\",\"k\":3}", &r);
    assert_null(r.embed);
    assert_int_equal(r.status, 200);
    assert_int_equal(fake.n_retrieve, 1);
    assert_int_equal(fake.q.scan.match, MEM_SCAN_MATCH_TEXT);
    assert_int_equal(fake.q.text_len, 4);
    mem_api_resp_deinit(&r);
    fake.n_retrieve = 0;
    call("POST", "/v1/namespaces/mem/retrieve", "{\"query\":\"milk\",\"k\":3,\"match\":\"vector\"}",
         &r);
    assert_int_equal(fake.n_retrieve, 0);
    waits_embed(&r);
    assert_int_equal(r.embed->n, 1);
    assert_memory_equal(r.embed->texts[0], "milk", 4);
    float q[3] = {0, 3, 4};
    mem_api_resume(&test_ctx, &r, q, 3, NULL);
    assert_int_equal(r.status, 200);
    assert_int_equal(fake.n_retrieve, 1);
    assert_int_equal(fake.q.scan.k, 3);
    assert_true(fabsf(fake.query[2] - 0.8f) < 1e-6f);
    body_has(&r, "\"results\":[");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/namespaces/mem/retrieve", "{\"query\":\"milk\",\"match\":\"hybrid\"}", &r);
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, q, 2, NULL);
    check_error(&r, 400, "dimension_mismatch", "query");
    mem_api_resp_deinit(&r);
    expect_error("POST", "/v1/namespaces/text/retrieve", "{\"query\":\"milk\"}", 409,
                 "embedder_mismatch", "query");
    expect_error("POST", "/v1/namespaces/nope/retrieve", "{\"query\":\"milk\"}", 404, "not_found",
                 NULL);
    /* an embedding needs no provider */
    call("POST", "/v1/namespaces/mem/retrieve", "{\"embedding\":[1,0,0]}", &r);
    assert_null(r.embed);
    assert_int_equal(r.status, 200);
    mem_api_resp_deinit(&r);

    /* MCP: the same seam; the tool result is wrapped once the answer is final */
    call("POST", "/mcp",
         "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"memory_retrieve\",\"arguments\":{\"namespace\":\"mem\",\"query\":\"milk\","
         "\"match\":\"vector\"}}}",
         &r);
    waits_embed(&r);
    assert_null(r.body);
    mem_api_resume(&test_ctx, &r, q, 3, NULL);
    assert_int_equal(r.status, 200);
    body_has(&r, "\"isError\":false");
    body_has(&r, "\"id\":7");
    mem_api_resp_deinit(&r);
    call("POST", "/mcp",
         "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"memory_insert\",\"arguments\":{\"namespace\":\"fresh\",\"text\":\"milk\"}}}",
         &r);
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, q, 3, NULL);
    submitted(&r);
    assert_string_equal(r.pending->embedder, "openai:m");
    r.pending->outs[0] = (mem_store_seg_out_t){.seq = 1, .ts_ms = FAKE_NOW_MS};
    r.pending->created = true;
    writer_done(&r, MEM_OK);
    assert_int_equal(r.status, 200);
    body_has(&r, "\"isError\":false");
    mem_api_resp_deinit(&r);
    call("POST", "/mcp",
         "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":"
         "\"memory_insert\",\"arguments\":{\"text\":\"milk\"}}}",
         &r);
    mem_err_t e;
    mem_err_clear(&e);
    mem_err_set(&e, MEM_EEMBED, "embedder: the provider answered 401 Unauthorized");
    waits_embed(&r);
    mem_api_resume(&test_ctx, &r, NULL, 0, &e);
    assert_int_equal(r.status, 200);
    body_has(&r, "\"isError\":true");
    body_has(&r, "401 Unauthorized");
    body_has(&r, "embedder_error");
    mem_api_resp_deinit(&r);

    /* PUT without a dimension asks the provider for it when it is not known yet */
    call("PUT", "/v1/namespaces/new", NULL, &r);
    assert_null(r.pending);
    waits_embed(&r);
    assert_int_equal(r.embed->n, 1);
    mem_api_resume(&test_ctx, &r, q, 3, NULL);
    submitted(&r);
    assert_int_equal(r.pending->kind, MEM_STORE_OP_NS_CREATE);
    assert_int_equal(r.pending->dim, 3);
    mem_api_resp_deinit(&r);
    use_remote(768);
    call("PUT", "/v1/namespaces/new", NULL, &r);
    assert_null(r.embed);
    submitted(&r);
    assert_int_equal(r.pending->dim, 768);
    mem_api_resp_deinit(&r);
    use_builtin();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_route_table, setup),
        cmocka_unit_test_setup(test_handle_404_405_bodies, setup),
        cmocka_unit_test_setup(test_content_type, setup),
        cmocka_unit_test_setup(test_query_strings, setup),
        cmocka_unit_test_setup(test_reads, setup),
        cmocka_unit_test_setup(test_listing, setup),
        cmocka_unit_test_setup(test_retrieve_answer, setup),
        cmocka_unit_test_setup(test_insert_round_trip, setup),
        cmocka_unit_test_setup(test_namespace_writes, setup),
        cmocka_unit_test_setup(test_compact_flow, setup),
        cmocka_unit_test_setup(test_error_map, setup),
        cmocka_unit_test_setup(test_metrics_uses_the_store_seen_at_begin, setup),
        cmocka_unit_test_setup(test_dump_shortest_reals, setup),
        cmocka_unit_test_setup(test_embed_seam_insert, setup),
        cmocka_unit_test_setup(test_embed_seam_retrieve_mcp_put, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
