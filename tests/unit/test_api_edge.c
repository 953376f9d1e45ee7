/* test_api_edge.c - SPEC section 9 in api/: Host, Origin and CORS, Content-Type, scoped keys
 * (roles, globs, listing, MCP tools, /metrics), and the order of the checks
 * SPDX-License-Identifier: MIT
 */
#include "tests/unit/api_fake.h"

#define MAX_H 8

typedef struct hreq {
    mem_api_header_t h[MAX_H];
    size_t n;
} hreq_t;

static void add(hreq_t *hr, const char *name, const char *value)
{
    assert_true(hr->n < MAX_H);
    hr->h[hr->n++] = (mem_api_header_t){name, strlen(name), value, strlen(value)};
}

static char *metrics_text(void *ud, mem_store_t *st, size_t *len)
{
    *len = 8;
    return strdup("metrics\n");
}

static const char KEYS[] = "# team keys\n"
                           "kr read me*\n"
                           "\n"
                           "kw write mem\n"
                           "kw read t?xt\n"
                           "ka admin *\n";

static int setup_edge(const char *origins, const char *hosts, const char *listen, bool keys)
{
    ctx_init();
    snprintf(test_cfg.listen_host, sizeof(test_cfg.listen_host), "%s", listen);
    test_cfg.listen_port = 6636;
    snprintf(test_cfg.allowed_origins, sizeof(test_cfg.allowed_origins), "%s", origins);
    snprintf(test_cfg.allowed_hosts, sizeof(test_cfg.allowed_hosts), "%s", hosts);
    mem_cfg_keys_t *k = NULL;
    mem_err_t err;
    mem_err_clear(&err);
    if (keys) {
        snprintf(test_cfg.api_key, sizeof(test_cfg.api_key), "master");
        assert_int_equal(mem_cfg_keys_parse(KEYS, strlen(KEYS), "keys", &k, &err), MEM_OK);
    }
    assert_int_equal(mem_api_edge_new(&test_cfg, 6636, k, &test_ctx.edge, &err), MEM_OK);
    test_ctx.hooks.metrics = metrics_text;
    return 0;
}

static int teardown_edge(void **state)
{
    mem_api_edge_free(test_ctx.edge);
    test_ctx.edge = NULL;
    test_ctx.hooks.metrics = NULL;
    return 0;
}

static int setup_lists(void **state)
{
    return setup_edge("https://app.example.com, http://Tool.Example:8080",
                      "mem.example.com, other:8080", "127.0.0.1", false);
}

static int setup_plain(void **state)
{
    ctx_init(); /* no edge: the Content-Type rule holds without one */
    test_ctx.edge = NULL;
    return 0;
}

static int setup_keys(void **state)
{
    return setup_edge("", "", "127.0.0.1", true);
}

/* One request with the given headers (Host 127.0.0.1 unless hr has one). */
static void run(const char *method, const char *path, const char *body, hreq_t *hr,
                mem_api_resp_t *resp)
{
    bool has_host = false, has_ct = false;
    for (size_t i = 0; i < hr->n; i++) {
        if (strcasecmp(hr->h[i].name, "Host") == 0) has_host = true;
        if (strcasecmp(hr->h[i].name, "Content-Type") == 0) has_ct = true;
    }
    if (!has_host) add(hr, "Host", "127.0.0.1:6636");
    const char *ct = NULL;
    for (size_t i = 0; i < hr->n; i++)
        if (strcasecmp(hr->h[i].name, "Content-Type") == 0) ct = hr->h[i].value;
    if (!has_ct && body) ct = "application/json";
    memset(resp, 0, sizeof(*resp));
    mem_api_req_t req = {.method = method,
                         .path = path,
                         .query = "",
                         .content_type = ct,
                         .body = body ? body : "",
                         .body_len = body ? strlen(body) : 0,
                         .headers = hr->h,
                         .n_headers = hr->n};
    mem_api_handle(&test_ctx, &req, resp);
}

static const char *resp_header(const mem_api_resp_t *resp, const char *name)
{
    mem_api_header_t h[16];
    size_t n = mem_api_resp_headers(resp, h, 16);
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(h[i].name, name) == 0) return h[i].value;
    return NULL;
}

static void host_case(const char *host, int status)
{
    hreq_t hr = {0};
    if (host)
        add(&hr, "Host", host);
    else
        add(&hr, "X-None", "1"); /* keep run() from adding one */
    mem_api_resp_t r;
    memset(&r, 0, sizeof(r));
    mem_api_req_t req = {.method = "GET",
                         .path = "/v1/namespaces/mem",
                         .query = "",
                         .headers = hr.h,
                         .n_headers = hr.n};
    mem_api_handle(&test_ctx, &req, &r);
    if (r.status != status)
        fail_msg("Host %s: %d, want %d: %.*s", host ? host : "(none)", r.status, status,
                 (int)r.body_len, r.body);
    if (status == 403) check_error(&r, 403, "forbidden_host", NULL);
    if (status == 400) check_error(&r, 400, "bad_request", NULL);
    mem_api_resp_deinit(&r);
}

static void test_host(void **state)
{
    host_case(NULL, 400);
    host_case("", 400);
    host_case("evil.example", 403);
    host_case("evil.example:6636", 403);
    host_case("127.0.0.1.evil.example", 403);
    host_case("localhost.evil.example", 403);
    host_case("localhost", 200);
    host_case("LOCALHOST:6636", 200);
    host_case("127.0.0.1:6636", 200);
    host_case("127.9.9.9:1", 200);
    host_case("[::1]:6636", 200);
    host_case("[::1]", 200);
    host_case("mem.example.com", 200);
    host_case("MEM.example.com:9999", 200);
    host_case("other:8080", 200);
    host_case("other:8081", 403);
    host_case("other", 403);
    host_case("a:b:c", 403);
    /* /healthz is exempt, even without a Host */
    hreq_t hr = {0};
    add(&hr, "X", "y");
    mem_api_resp_t r;
    memset(&r, 0, sizeof(r));
    mem_api_req_t req = {
        .method = "GET", .path = "/healthz", .query = "", .headers = hr.h, .n_headers = hr.n};
    mem_api_handle(&test_ctx, &req, &r);
    assert_int_equal(r.status, 200);
    mem_api_resp_deinit(&r);
}

static void test_host_any_on_a_public_listen(void **state)
{
    teardown_edge(state);
    setup_edge("", "", "0.0.0.0", false);
    host_case("anything.example:1234", 200);
    host_case(NULL, 400);
    /* Every Host passes, so a name's same-origin request proves nothing: a rebinding page
     * (its name re-pointed here) is same-origin with itself. Addresses cannot be
     * re-pointed, and the listen host and localhost are this server's. */
    const char *same[][3] = {{"evil.example:6636", "http://evil.example:6636", "403"},
                             {"my-box.lan", "https://my-box.lan", "403"},
                             {"192.168.1.5:6636", "http://192.168.1.5:6636", "200"},
                             {"[fd00::1]:6636", "http://[fd00::1]:6636", "200"},
                             {"0.0.0.0:6636", "http://0.0.0.0:6636", "200"},
                             {"localhost:6636", "http://localhost:6636", "200"}};
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        hreq_t hs = {0};
        add(&hs, "Host", same[i][0]);
        add(&hs, "Origin", same[i][1]);
        mem_api_resp_t r;
        run("POST", "/v1/namespaces/mem/retrieve", "{\"embedding\":[1,0,0]}", &hs, &r);
        if (r.status != atoi(same[i][2]))
            fail_msg("Host %s Origin %s: %d", same[i][0], same[i][1], r.status);
        if (r.status == 403) check_error(&r, 403, "forbidden_origin", NULL);
        mem_api_resp_deinit(&r);
        /* the same page's GET carries no Origin, only Sec-Fetch-Site: same-origin */
        hreq_t hg = {0};
        add(&hg, "Host", same[i][0]);
        add(&hg, "Sec-Fetch-Site", "same-origin");
        run("GET", "/v1/namespaces", NULL, &hg, &r);
        if (r.status != atoi(same[i][2]))
            fail_msg("Host %s, a same-origin GET: %d", same[i][0], r.status);
        mem_api_resp_deinit(&r);
    }
    teardown_edge(state);
    setup_edge("", "only.example", "0.0.0.0", false); /* a list makes it strict again */
    host_case("anything.example", 403);
    host_case("only.example:80", 200);
    host_case("0.0.0.0:6636", 200); /* the listen address itself */
    /* a listed name is this server's: its same-origin requests pass again */
    hreq_t hl = {0};
    add(&hl, "Host", "only.example");
    add(&hl, "Origin", "http://only.example");
    mem_api_resp_t rl;
    run("GET", "/v1/namespaces", NULL, &hl, &rl);
    assert_int_equal(rl.status, 200);
    mem_api_resp_deinit(&rl);
}

static void origin_case(const char *origin, int status, bool cors)
{
    hreq_t hr = {0};
    add(&hr, "Origin", origin);
    mem_api_resp_t r;
    run("POST", "/v1/namespaces/mem/retrieve", "{\"embedding\":[1,0,0]}", &hr, &r);
    if (r.status != status)
        fail_msg("Origin %s: %d, want %d: %.*s", origin, r.status, status, (int)r.body_len, r.body);
    if (status == 403) check_error(&r, 403, "forbidden_origin", NULL);
    const char *acao = resp_header(&r, "Access-Control-Allow-Origin");
    if (cors) {
        assert_non_null(acao);
        assert_string_equal(acao, origin);
    } else {
        assert_null(acao);
    }
    assert_string_equal(resp_header(&r, "Vary"), "Origin");
    mem_api_resp_deinit(&r);
}

static void test_origin_and_cors(void **state)
{
    origin_case("https://app.example.com", 200, true);
    origin_case("https://APP.example.com", 200, true);
    origin_case("http://tool.example:8080", 200, true);
    origin_case("http://localhost:6636", 200, true); /* the server's own */
    origin_case("http://127.0.0.1:6636", 200, true);
    origin_case("http://localhost:6637", 403, false);
    origin_case("https://evil.example", 403, false);
    origin_case("https://app.example.com.evil.example", 403, false);
    origin_case("null", 403, false);
    /* no Origin: no CORS headers at all */
    hreq_t hr = {0};
    mem_api_resp_t r;
    run("POST", "/v1/namespaces/mem/retrieve", "{\"embedding\":[1,0,0]}", &hr, &r);
    assert_int_equal(r.status, 200);
    assert_null(resp_header(&r, "Vary"));
    mem_api_resp_deinit(&r);
    /* same-origin through an allowed host name: the Origin names the accepted Host */
    const char *same[][3] = {{"mem.example.com:6636", "http://mem.example.com:6636", "200"},
                             {"mem.example.com:6636", "http://mem.example.com:6637", "403"},
                             {"mem.example.com", "https://MEM.example.com", "200"},
                             {"evil.example", "http://evil.example", "403"}};
    for (size_t i = 0; i < 4; i++) {
        hreq_t hs = {0};
        add(&hs, "Host", same[i][0]);
        add(&hs, "Origin", same[i][1]);
        run("GET", "/v1/namespaces", NULL, &hs, &r);
        if (r.status != atoi(same[i][2]))
            fail_msg("Host %s Origin %s: %d", same[i][0], same[i][1], r.status);
        mem_api_resp_deinit(&r);
    }
    /* /mcp and /metrics refuse foreign origins alike */
    const char *paths[][2] = {{"POST", "/mcp"}, {"GET", "/metrics"}, {"GET", "/v1/namespaces"}};
    for (size_t i = 0; i < 3; i++) {
        hreq_t h2 = {0};
        add(&h2, "Origin", "https://evil.example");
        run(paths[i][0], paths[i][1], paths[i][0][0] == 'P' ? "{}" : NULL, &h2, &r);
        check_error(&r, 403, "forbidden_origin", NULL);
        mem_api_resp_deinit(&r);
    }
}

static void test_any_origin(void **state)
{
    teardown_edge(state);
    setup_edge("*", "", "127.0.0.1", false);
    origin_case("https://whatever.example", 200, true);
    origin_case("null", 200, true);
}

static void test_preflight(void **state)
{
    hreq_t hr = {0};
    add(&hr, "Origin", "https://app.example.com");
    add(&hr, "Access-Control-Request-Method", "POST");
    add(&hr, "Access-Control-Request-Headers", "content-type, authorization, x-stainless-os");
    mem_api_resp_t r;
    run("OPTIONS", "/v1/namespaces/mem/retrieve", NULL, &hr, &r);
    assert_int_equal(r.status, 204);
    assert_int_equal(r.body_len, 0);
    assert_string_equal(resp_header(&r, "Access-Control-Allow-Origin"), "https://app.example.com");
    assert_string_equal(resp_header(&r, "Access-Control-Allow-Methods"), "POST");
    assert_string_equal(resp_header(&r, "Access-Control-Allow-Headers"),
                        "content-type, authorization, x-stainless-os");
    assert_non_null(resp_header(&r, "Access-Control-Max-Age"));
    mem_api_resp_deinit(&r);
    /* refused */
    hreq_t h2 = {0};
    add(&h2, "Origin", "https://evil.example");
    add(&h2, "Access-Control-Request-Method", "POST");
    run("OPTIONS", "/v1/namespaces/mem/compact", NULL, &h2, &r);
    check_error(&r, 403, "forbidden_origin", NULL);
    assert_null(resp_header(&r, "Access-Control-Allow-Origin"));
    mem_api_resp_deinit(&r);
    /* unknown path */
    hreq_t h3 = {0};
    add(&h3, "Origin", "https://app.example.com");
    add(&h3, "Access-Control-Request-Method", "GET");
    run("OPTIONS", "/nope", NULL, &h3, &r);
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
    /* a plain OPTIONS answers Allow */
    hreq_t h4 = {0};
    run("OPTIONS", "/v1/namespaces/mem", NULL, &h4, &r);
    assert_int_equal(r.status, 204);
    assert_string_equal(r.allow, "GET, PUT, DELETE");
    mem_api_resp_deinit(&r);
}

static void test_content_type_required(void **state)
{
    static const char *body = "{\"embedding\":[1,0,0]}";
    const char *bad[] = {NULL,
                         "text/plain",
                         "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x",
                         "application/jsonx",
                         ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mem_api_resp_t r;
        call_ct("POST", "/v1/namespaces/mem/compact", NULL, bad[i], body, &r);
        check_error(&r, 415, "unsupported_media_type", NULL);
        assert_null(r.pending);
        mem_api_resp_deinit(&r);
    }
    /* announced but not yet read: the head alone decides */
    mem_api_resp_t r;
    memset(&r, 0, sizeof(r));
    mem_api_req_t req = {.method = "POST",
                         .path = "/v1/namespaces/mem/segments",
                         .query = "",
                         .body = "",
                         .body_expected = true};
    assert_int_equal(mem_api_begin(&test_ctx, &req, &r), MEM_API_REPLY);
    check_error(&r, 415, "unsupported_media_type", NULL);
    mem_api_resp_deinit(&r);
    /* an empty body needs none */
    call_ct("PUT", "/v1/namespaces/newns", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 0); /* pending: a create */
    assert_non_null(r.pending);
    mem_api_resp_deinit(&r);
    call_ct("DELETE", "/v1/namespaces/mem/segments/x", NULL, NULL, NULL, &r);
    assert_non_null(r.pending);
    mem_api_resp_deinit(&r);
}

static int key_status(const char *key, const char *method, const char *path, const char *body)
{
    hreq_t hr = {0};
    char auth[128];
    if (key) {
        snprintf(auth, sizeof(auth), "Bearer %s", key);
        add(&hr, "Authorization", auth);
    }
    mem_api_resp_t r;
    run(method, path, body, &hr, &r);
    int st = r.pending ? 202 : r.status; /* 202 here: a write was queued */
    if (st == 401) check_error(&r, 401, "unauthorized", NULL);
    if (st == 403) check_error(&r, 403, "forbidden", NULL);
    mem_api_resp_deinit(&r);
    return st;
}

static void test_keys_roles_and_globs(void **state)
{
    static const char *E = "{\"embedding\":[1,0,0]}";
    assert_int_equal(key_status(NULL, "GET", "/v1/namespaces/mem", NULL), 401);
    assert_int_equal(key_status("nope", "GET", "/v1/namespaces/mem", NULL), 401);
    assert_int_equal(key_status("kr2", "GET", "/v1/namespaces/mem", NULL), 401);
    assert_int_equal(key_status("k", "GET", "/v1/namespaces/mem", NULL), 401);
    /* read key on me* */
    assert_int_equal(key_status("kr", "GET", "/v1/namespaces/mem", NULL), 200);
    assert_int_equal(key_status("kr", "POST", "/v1/namespaces/mem/retrieve", E), 200);
    assert_int_equal(key_status("kr", "GET", "/v1/namespaces/text", NULL), 403);
    assert_int_equal(key_status("kr", "POST", "/v1/namespaces/mem/segments", E), 403);
    assert_int_equal(key_status("kr", "DELETE", "/v1/namespaces/mem/segments/x", NULL), 403);
    assert_int_equal(key_status("kr", "PUT", "/v1/namespaces/mem", "{\"dim\":3}"), 403);
    assert_int_equal(key_status("kr", "POST", "/v1/namespaces/mem/compact", "{\"target\":1}"), 403);
    /* write key on mem (and read on t?xt) */
    assert_int_equal(key_status("kw", "POST", "/v1/namespaces/mem/segments", E), 202);
    assert_int_equal(key_status("kw", "POST", "/v1/namespaces/memx/segments", E), 403);
    assert_int_equal(key_status("kw", "DELETE", "/v1/namespaces/mem/segments/x", NULL), 202);
    assert_int_equal(key_status("kw", "GET", "/v1/namespaces/text", NULL), 200);
    assert_int_equal(key_status("kw", "POST", "/v1/namespaces/text/segments", E), 403);
    assert_int_equal(key_status("kw", "PUT", "/v1/namespaces/mem", "{\"dim\":3}"), 403);
    assert_int_equal(key_status("kw", "DELETE", "/v1/namespaces/mem", NULL), 403);
    assert_int_equal(key_status("kw", "POST", "/v1/namespaces/mem/compact", "{\"target\":1}"), 403);
    /* a write key creates a namespace implicitly by inserting into it */
    assert_int_equal(key_status("kw", "POST", "/v1/namespaces/mem/segments", E), 202);
    /* admin, and the API key as admin on * */
    assert_int_equal(key_status("ka", "PUT", "/v1/namespaces/zz", "{\"dim\":3}"), 202);
    assert_int_equal(key_status("ka", "DELETE", "/v1/namespaces/mem", NULL), 202);
    assert_int_equal(key_status("master", "DELETE", "/v1/namespaces/mem", NULL), 202);
    assert_int_equal(key_status("master", "POST", "/v1/namespaces/mem/compact", "{\"target\":1}"),
                     202);
    /* /metrics needs admin unless public; /healthz and /openapi.json no key */
    assert_int_equal(key_status("kr", "GET", "/metrics", NULL), 403);
    assert_int_equal(key_status(NULL, "GET", "/metrics", NULL), 401);
    assert_int_equal(key_status("ka", "GET", "/metrics", NULL), 200);
    assert_int_equal(key_status(NULL, "GET", "/healthz", NULL), 200);
    assert_int_equal(key_status(NULL, "GET", "/openapi.json", NULL), 200);
    assert_true(mem_api__glob_match("t?xt", "text"));
    assert_false(mem_api__glob_match("t?xt", "txt"));
    assert_true(mem_api__glob_match("*", ""));
    assert_true(mem_api__glob_match("a*b*c", "aXbYbc"));
    assert_false(mem_api__glob_match("a*b*c", "aXbYbd"));
}

static void test_keys_listing_is_filtered(void **state)
{
    struct {
        const char *key, *want;
    } C[] = {
        {"kr", "[\"mem\"]"}, {"kw", "[\"mem\",\"text\"]"}, {"ka", "[\"empty\",\"mem\",\"text\"]"}};
    for (size_t i = 0; i < 3; i++) {
        hreq_t hr = {0};
        char auth[64];
        snprintf(auth, sizeof(auth), "Bearer %s", C[i].key);
        add(&hr, "Authorization", auth);
        mem_api_resp_t r;
        run("GET", "/v1/namespaces", NULL, &hr, &r);
        assert_int_equal(r.status, 200);
        json_t *j = resp_json(&r), *names = json_array();
        json_t *v;
        size_t k;
        json_array_foreach(json_object_get(j, "namespaces"), k, v)
            json_array_append(names, json_object_get(v, "name"));
        char *got = json_dumps(names, JSON_COMPACT);
        if (strcmp(got, C[i].want) != 0) fail_msg("%s lists %s, want %s", C[i].key, got, C[i].want);
        free(got);
        json_decref(names);
        json_decref(j);
        mem_api_resp_deinit(&r);
    }
}

static void mcp_call(const char *key, const char *tool, const char *args, bool want_error)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":%s}}",
             tool, args);
    hreq_t hr = {0};
    char auth[64];
    snprintf(auth, sizeof(auth), "Bearer %s", key);
    add(&hr, "Authorization", auth);
    mem_api_resp_t r;
    run("POST", "/mcp", body, &hr, &r);
    if (r.pending) { /* a write: it was allowed */
        assert_false(want_error);
        mem_api_resp_deinit(&r);
        return;
    }
    assert_int_equal(r.status, 200);
    json_t *j = resp_json(&r);
    json_t *res = json_object_get(j, "result");
    assert_non_null(res);
    bool is_err = json_is_true(json_object_get(res, "isError"));
    if (is_err != want_error) fail_msg("%s %s %s: %.*s", key, tool, args, (int)r.body_len, r.body);
    if (want_error) {
        const char *code = json_string_value(json_object_get(
            json_object_get(json_object_get(res, "structuredContent"), "error"), "code"));
        assert_string_equal(code, "forbidden");
    }
    json_decref(j);
    mem_api_resp_deinit(&r);
}

static void test_keys_mcp_tools(void **state)
{
    static const char *E = "{\"namespace\":\"mem\",\"embedding\":[1,0,0]}";
    mcp_call("kr", "memory_retrieve", E, false);
    mcp_call("kr", "memory_insert", E, true);
    mcp_call("kr", "memory_forget", "{\"namespace\":\"mem\",\"id\":\"x\"}", true);
    mcp_call("kr", "memory_retrieve", "{\"namespace\":\"text\",\"query\":\"hi\"}", true);
    mcp_call("kw", "memory_insert", E, false);
    mcp_call("kw", "memory_forget", "{\"namespace\":\"mem\",\"id\":\"x\"}", false);
    mcp_call("kw", "memory_compact", "{\"namespace\":\"mem\",\"target\":1}", true);
    mcp_call("ka", "memory_compact", "{\"namespace\":\"mem\",\"target\":1,\"dry_run\":true}",
             false);
    /* the default namespace is "default": not covered by kr's me* */
    mcp_call("kr", "memory_retrieve", "{\"embedding\":[1,0,0]}", true);
    /* initialize needs a valid key, nothing more */
    hreq_t hr = {0};
    add(&hr, "Authorization", "Bearer kr");
    mem_api_resp_t r;
    run("POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &hr, &r);
    assert_int_equal(r.status, 200);
    mem_api_resp_deinit(&r);
    hreq_t h2 = {0};
    run("POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &h2, &r);
    check_error(&r, 401, "unauthorized", NULL);
    mem_api_resp_deinit(&r);
}

/* Host and Origin come before routing and keys; keys before Content-Type and the body. */
static void test_check_order(void **state)
{
    hreq_t hr = {0};
    add(&hr, "Host", "evil.example");
    add(&hr, "Origin", "https://evil.example");
    mem_api_resp_t r;
    run("POST", "/nope", "{", &hr, &r);
    check_error(&r, 403, "forbidden_host", NULL);
    mem_api_resp_deinit(&r);
    hreq_t h2 = {0};
    add(&h2, "Origin", "https://evil.example");
    add(&h2, "Content-Type", "text/plain");
    run("POST", "/v1/namespaces/mem/compact", "{", &h2, &r);
    check_error(&r, 403, "forbidden_origin", NULL);
    mem_api_resp_deinit(&r);
    hreq_t h3 = {0};
    add(&h3, "Content-Type", "text/plain");
    run("POST", "/v1/namespaces/mem/compact", "{", &h3, &r);
    check_error(&r, 401, "unauthorized", NULL);
    mem_api_resp_deinit(&r);
    /* an unknown path is a 401 without a valid key, a 404 with one */
    assert_int_equal(key_status(NULL, "GET", "/favicon.ico", NULL), 401);
    assert_int_equal(key_status("kr", "GET", "/favicon.ico", NULL), 404);
    assert_int_equal(key_status(NULL, "PATCH", "/v1/namespaces/mem", NULL), 401);
    assert_int_equal(key_status("kr", "PATCH", "/v1/namespaces/mem", NULL), 405);
    hreq_t h4 = {0};
    add(&h4, "Content-Type", "text/plain");
    add(&h4, "Authorization", "Bearer ka");
    run("POST", "/v1/namespaces/mem/compact", "{", &h4, &r);
    check_error(&r, 415, "unsupported_media_type", NULL);
    mem_api_resp_deinit(&r);
}

static void test_loading_and_draining(void **state)
{
    hreq_t hr = {0};
    mem_api_resp_t r;
    mem_store_t *st = test_ctx.store;
    test_ctx.store = NULL;
    run("GET", "/healthz", NULL, &hr, &r);
    assert_int_equal(r.status, 503);
    mem_api_resp_deinit(&r);
    hreq_t h2 = {0};
    run("GET", "/v1/namespaces", NULL, &h2, &r);
    check_error(&r, 503, "unavailable", NULL);
    assert_true(r.retry_after_s > 0);
    mem_api_resp_deinit(&r);
    hreq_t h3 = {0};
    run("GET", "/metrics", NULL, &h3, &r); /* served while loading */
    assert_int_equal(r.status, 200);
    mem_api_resp_deinit(&r);
    test_ctx.store = st;
    test_ctx.draining = true;
    hreq_t h4 = {0};
    run("GET", "/healthz", NULL, &h4, &r);
    assert_int_equal(r.status, 503);
    mem_api_resp_deinit(&r);
    hreq_t h5 = {0};
    run("GET", "/v1/namespaces", NULL, &h5, &r);
    check_error(&r, 503, "unavailable", NULL);
    mem_api_resp_deinit(&r);
    test_ctx.draining = false;
}

static char *cluster_json(void *ud, size_t *len)
{
    *len = 12;
    return strdup("{\"node\":\"x\"}");
}

static int snapshot_json(void *ud, bool trim, char **body, mem_err_t *err)
{
    *body = strdup(trim ? "{\"trim\":1}" : "{\"trim\":0}");
    return MEM_OK;
}

/* Cluster mode: its routes, and min_seq from the query or the body as a WAIT step. */
static void test_cluster_routes_and_min_seq(void **state)
{
    mem_api_resp_t r;
    call("GET", "/v1/cluster", NULL, &r); /* not in cluster mode: no such route */
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
    call("POST", "/v1/namespaces/mem/retrieve", "{\"embedding\":[1,0,0],\"min_seq\":3}", &r);
    check_error(&r, 400, "invalid_field", "min_seq");
    mem_api_resp_deinit(&r);
    test_ctx.hooks.cluster_status = cluster_json;
    test_ctx.hooks.cluster_snapshot = snapshot_json;
    call("GET", "/v1/cluster", NULL, &r);
    assert_body(&r, 200, "{\"node\":\"x\"}");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/snapshot", "{\"trim\":true}", &r);
    assert_body(&r, 200, "{\"trim\":1}");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/snapshot", "{\"trim\":1}", &r);
    check_error(&r, 400, "invalid_field", "trim");
    mem_api_resp_deinit(&r);
    /* min_seq in the body: a WAIT step, then the handler without the key */
    memset(&r, 0, sizeof(r));
    static const char *B = "{\"embedding\":[1,0,0],\"min_seq\":7}";
    mem_api_req_t req = {.method = "POST",
                         .path = "/v1/namespaces/mem/retrieve",
                         .query = "",
                         .content_type = "application/json",
                         .body = B,
                         .body_len = strlen(B)};
    next_is(mem_api_begin(&test_ctx, &req, &r), MEM_API_BODY, &r);
    next_is(mem_api_work(&test_ctx, &req, &r), MEM_API_WAIT, &r);
    assert_string_equal(r.wait_ns, "mem");
    assert_int_equal(r.wait_seq, 7);
    assert_int_equal(mem_api_work(&test_ctx, &req, &r), MEM_API_REPLY);
    assert_int_equal(r.status, 200);
    mem_api_resp_deinit(&r);
    /* in the query, taken out before the handler reads it */
    memset(&r, 0, sizeof(r));
    mem_api_req_t q = {.method = "GET", .path = "/v1/namespaces/mem", .query = "min_seq=12"};
    next_is(mem_api_begin(&test_ctx, &q, &r), MEM_API_BODY, &r);
    next_is(mem_api_work(&test_ctx, &q, &r), MEM_API_WAIT, &r);
    assert_int_equal(r.wait_seq, 12);
    mem_api_wait_failed(&r);
    check_error(&r, 503, "unavailable", NULL);
    mem_api_resp_deinit(&r);
    /* duplicate keys are refused, never collapsed */
    call("POST", "/v1/namespaces/mem/retrieve",
         "{\"embedding\":[1,0,0],\"min_seq\":1,\"min_seq\":2}", &r);
    check_error(&r, 400, "invalid_json", NULL);
    mem_api_resp_deinit(&r);
    memset(&r, 0, sizeof(r));
    mem_api_req_t q2 = {.method = "GET", .path = "/v1/namespaces/mem", .query = "min_seq=x"};
    assert_int_equal(mem_api_begin(&test_ctx, &q2, &r), MEM_API_REPLY);
    check_error(&r, 400, "invalid_field", "min_seq");
    mem_api_resp_deinit(&r);
    test_ctx.hooks.cluster_status = NULL;
    test_ctx.hooks.cluster_snapshot = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_host, setup_lists, teardown_edge),
        cmocka_unit_test_setup_teardown(test_host_any_on_a_public_listen, setup_lists,
                                        teardown_edge),
        cmocka_unit_test_setup_teardown(test_origin_and_cors, setup_lists, teardown_edge),
        cmocka_unit_test_setup_teardown(test_any_origin, setup_lists, teardown_edge),
        cmocka_unit_test_setup_teardown(test_preflight, setup_lists, teardown_edge),
        cmocka_unit_test_setup_teardown(test_content_type_required, setup_plain, teardown_edge),
        cmocka_unit_test_setup_teardown(test_keys_roles_and_globs, setup_keys, teardown_edge),
        cmocka_unit_test_setup_teardown(test_keys_listing_is_filtered, setup_keys, teardown_edge),
        cmocka_unit_test_setup_teardown(test_keys_mcp_tools, setup_keys, teardown_edge),
        cmocka_unit_test_setup_teardown(test_check_order, setup_keys, teardown_edge),
        cmocka_unit_test_setup_teardown(test_loading_and_draining, setup_lists, teardown_edge),
        cmocka_unit_test_setup_teardown(test_cluster_routes_and_min_seq, setup_plain,
                                        teardown_edge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
