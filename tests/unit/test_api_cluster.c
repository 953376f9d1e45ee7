/* test_api_cluster.c - api/'s cluster-mode pieces: what each request acts on
 * (mem_api_target, which cluster mode routes by), the node and move routes, and /healthz of
 * a stale node
 * SPDX-License-Identifier: MIT
 */
#include "tests/unit/api_fake.h"

static char *cluster_json(void *ud, size_t *len)
{
    *len = 2;
    return strdup("{}");
}

static int snapshot_json(void *ud, bool trim, char **body, mem_err_t *err)
{
    *body = strdup("{}");
    return MEM_OK;
}

static char got[3][128]; /* the last hook call's arguments */
static bool got_drain;

static int move_hook(void *ud, const char *ns, const char *from, const char *to, char **body,
                     mem_err_t *err)
{
    snprintf(got[0], sizeof(got[0]), "%s", ns);
    snprintf(got[1], sizeof(got[1]), "%s", from);
    snprintf(got[2], sizeof(got[2]), "%s", to);
    if (strcmp(to, "nowhere") == 0) return mem_err_set(err, MEM_ENOTFOUND, "no live node nowhere");
    *body = strdup("{\"moving\":true}");
    return MEM_OK;
}

static int drain_hook(void *ud, const char *node, bool drain, char **body, mem_err_t *err)
{
    snprintf(got[0], sizeof(got[0]), "%s", node);
    got_drain = drain;
    *body = strdup("{\"drain\":1}");
    return MEM_OK;
}

static int forget_hook(void *ud, const char *node, char **body, mem_err_t *err)
{
    snprintf(got[0], sizeof(got[0]), "%s", node);
    if (strcmp(node, "alive") == 0)
        return mem_err_set(err, MEM_EEXISTS, "node alive is running: stop it first");
    *body = strdup("{\"forgotten\":1}");
    return MEM_OK;
}

static bool stale;
static bool healthy_hook(void *ud, char *why, size_t cap)
{
    if (stale) snprintf(why, cap, "namespace mem needs a bootstrap");
    return !stale;
}

static void cluster_on(void)
{
    test_ctx.hooks.cluster_status = cluster_json;
    test_ctx.hooks.cluster_snapshot = snapshot_json;
    test_ctx.hooks.cluster_move = move_hook;
    test_ctx.hooks.cluster_drain = drain_hook;
    test_ctx.hooks.cluster_forget = forget_hook;
    test_ctx.hooks.cluster_healthy = healthy_hook;
}

static int setup(void **state)
{
    ctx_init();
    test_ctx.edge = NULL;
    memset(&test_ctx.hooks, 0, sizeof(test_ctx.hooks));
    stale = false;
    return 0;
}

/* Begin (and read the body of) one request, then ask what it acts on. */
static mem_api_next_t target_of(const char *method, const char *path, const char *body,
                                mem_api_target_t *t)
{
    mem_api_resp_t r;
    memset(&r, 0, sizeof(r));
    mem_api_req_t req = {.method = method,
                         .path = path,
                         .query = "",
                         .content_type = body ? "application/json" : NULL,
                         .body = body ? body : "",
                         .body_len = body ? strlen(body) : 0};
    mem_api_next_t next = mem_api_begin(&test_ctx, &req, &r);
    mem_api_target(&req, &r, t);
    mem_api_resp_deinit(&r);
    return next;
}

static void expect_target(const char *method, const char *path, const char *body,
                          mem_api_scope_t scope, const char *ns, bool write, bool create)
{
    mem_api_target_t t;
    target_of(method, path, body, &t);
    if (t.rc != MEM_OK) assert_int_equal(t.rc, MEM_OK); /* the body could not be read */
    if (t.scope != scope || strcmp(t.ns, ns) != 0 || t.write != write || t.create != create)
        fail_msg("%s %s: scope %d ns \"%s\" write %d create %d", method, path, (int)t.scope, t.ns,
                 t.write, t.create);
}

static void test_target_of_each_route(void **state)
{
    cluster_on();
    const mem_api_scope_t N = MEM_API_SCOPE_NS;
    expect_target("GET", "/v1/namespaces/mem", NULL, N, "mem", false, false);
    expect_target("PUT", "/v1/namespaces/mem", NULL, N, "mem", true, true);
    expect_target("DELETE", "/v1/namespaces/mem", NULL, N, "mem", true, false);
    expect_target("GET", "/v1/namespaces/mem/segments", NULL, N, "mem", false, false);
    expect_target("POST", "/v1/namespaces/mem/segments", "{}", N, "mem", true, true);
    expect_target("GET", "/v1/namespaces/mem/segments/s1", NULL, N, "mem", false, false);
    expect_target("PATCH", "/v1/namespaces/mem/segments/s1", "{}", N, "mem", true, false);
    expect_target("DELETE", "/v1/namespaces/mem/segments/s1", NULL, N, "mem", true, false);
    expect_target("POST", "/v1/namespaces/mem/retrieve", "{}", N, "mem", false, false);
    expect_target("POST", "/v1/namespaces/mem/compact", "{}", N, "mem", true, false);
    expect_target("GET", "/v1/namespaces/mem/export", NULL, N, "mem", false, false);
    expect_target("GET", "/v1/namespaces", NULL, MEM_API_SCOPE_LIST, "", false, false);
    /* this node's own */
    expect_target("GET", "/metrics", NULL, MEM_API_SCOPE_NODE, "", false, false);
    expect_target("GET", "/v1/cluster", NULL, MEM_API_SCOPE_NODE, "", false, false);
    expect_target("POST", "/v1/cluster/move", "{}", MEM_API_SCOPE_NODE, "", false, false);
    expect_target("GET", "/openapi.json", NULL, MEM_API_SCOPE_NODE, "", false, false);
    /* answered on the head already: nothing to route */
    mem_api_target_t t;
    assert_int_equal(target_of("GET", "/v1/namespaces/a%2Fb", NULL, &t), MEM_API_REPLY);
    assert_int_equal(t.scope, MEM_API_SCOPE_NODE);
    assert_int_equal(target_of("POST", "/v1/namespaces/mem", "{}", &t), MEM_API_REPLY); /* 405 */
    assert_int_equal(t.scope, MEM_API_SCOPE_NODE);
    assert_int_equal(target_of("GET", "/healthz", NULL, &t), MEM_API_REPLY);
    assert_int_equal(t.scope, MEM_API_SCOPE_NODE);
}

static void test_target_of_mcp_calls(void **state)
{
    cluster_on();
    const mem_api_scope_t N = MEM_API_SCOPE_NS, L = MEM_API_SCOPE_NODE;
#define CALL(tool, args)                                                                           \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" tool         \
    "\",\"arguments\":" args "}}"
    expect_target("POST", "/mcp", CALL("memory_insert", "{\"namespace\":\"a\"}"), N, "a", true,
                  true);
    expect_target("POST", "/mcp", CALL("memory_retrieve", "{\"namespace\":\"b\"}"), N, "b", false,
                  false);
    expect_target("POST", "/mcp", CALL("memory_list", "{\"namespace\":\"c\"}"), N, "c", false,
                  false);
    expect_target("POST", "/mcp", CALL("memory_compact", "{\"namespace\":\"d\"}"), N, "d", true,
                  false);
    expect_target("POST", "/mcp", CALL("memory_forget", "{\"namespace\":\"e\",\"id\":\"x\"}"), N,
                  "e", true, false);
    expect_target("POST", "/mcp", CALL("memory_retrieve", "{}"), N, "default", false, false);
    /* served here, where MCP reports what is wrong */
    expect_target("POST", "/mcp", CALL("memory_insert", "{\"namespace\":\"../x\"}"), L, "", false,
                  false);
    expect_target("POST", "/mcp", CALL("memory_insert", "{\"namespace\":7}"), L, "", false, false);
    expect_target("POST", "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", L, "",
                  false, false);
    expect_target("POST", "/mcp", "[" CALL("memory_insert", "{}") "]", L, "", false, false);
    expect_target("POST", "/mcp", "{\"method\":\"tools/call\",\"method\":\"tools/call\"}", L, "",
                  false, false);
#undef CALL
}

static void test_node_and_move_routes(void **state)
{
    mem_api_resp_t r;
    /* not in cluster mode: no such routes */
    call("POST", "/v1/cluster/move", "{\"namespace\":\"mem\",\"from\":\"a\",\"to\":\"b\"}", &r);
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
    call("DELETE", "/v1/cluster/nodes/a", NULL, &r);
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
    cluster_on();
    call("POST", "/v1/cluster/move", "{\"namespace\":\"mem\",\"from\":\"a\",\"to\":\"b\"}", &r);
    assert_body(&r, 200, "{\"moving\":true}");
    assert_string_equal(got[0], "mem");
    assert_string_equal(got[1], "a");
    assert_string_equal(got[2], "b");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/move", "{\"namespace\":\"mem\",\"from\":\"a\",\"to\":\"nowhere\"}",
         &r);
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/move", NULL, &r);
    check_error(&r, 400, "invalid_field", NULL);
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/move", "{\"namespace\":\"mem\",\"from\":\"a\"}", &r);
    check_error(&r, 400, "invalid_field", "to");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/move", "{\"namespace\":\"mem\",\"from\":\"a\",\"to\":\"b\",\"x\":1}",
         &r);
    check_error(&r, 400, "invalid_field", "x");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/move", "{\"namespace\":\"../m\",\"from\":\"a\",\"to\":\"b\"}", &r);
    check_error(&r, 400, "invalid_field", "namespace");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/move",
         "{\"namespace\":\"mem\",\"namespace\":\"x\",\"from\":\"a\",\"to\":\"b\"}", &r);
    check_error(&r, 400, "invalid_json", NULL);
    mem_api_resp_deinit(&r);
    call("GET", "/v1/cluster/move", NULL, &r);
    check_error(&r, 405, "method_not_allowed", NULL);
    assert_string_equal(r.allow, "POST");
    mem_api_resp_deinit(&r);
    /* drain: the body is optional, true by default */
    call("POST", "/v1/cluster/nodes/n-1/drain", NULL, &r);
    assert_body(&r, 200, "{\"drain\":1}");
    assert_string_equal(got[0], "n-1");
    assert_true(got_drain);
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/nodes/n_2/drain", "{\"drain\":false}", &r);
    assert_int_equal(r.status, 200);
    assert_false(got_drain);
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/nodes/n1/drain", "{\"drain\":\"yes\"}", &r);
    check_error(&r, 400, "invalid_field", "drain");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/nodes/n.1/drain", NULL, &r);
    check_error(&r, 400, "invalid_field", "node");
    mem_api_resp_deinit(&r);
    call("POST", "/v1/cluster/nodes/n1/undrain", NULL, &r);
    check_error(&r, 404, "not_found", NULL);
    mem_api_resp_deinit(&r);
    /* forget */
    call("DELETE", "/v1/cluster/nodes/gone", NULL, &r);
    assert_body(&r, 200, "{\"forgotten\":1}");
    assert_string_equal(got[0], "gone");
    mem_api_resp_deinit(&r);
    call("DELETE", "/v1/cluster/nodes/alive", NULL, &r);
    check_error(&r, 409, "namespace_exists", NULL);
    mem_api_resp_deinit(&r);
    call("DELETE", "/v1/cluster/nodes/gone", "{}", &r);
    check_error(&r, 400, "invalid_field", NULL);
    mem_api_resp_deinit(&r);
    call("DELETE",
         "/v1/cluster/nodes/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL,
         &r); /* 64 */
    check_error(&r, 400, "invalid_field", "node");
    mem_api_resp_deinit(&r);
}

static void test_health_of_a_stale_node(void **state)
{
    mem_api_resp_t r;
    cluster_on();
    call("GET", "/healthz", NULL, &r);
    assert_body(&r, 200, "{\"status\":\"ok\"}");
    mem_api_resp_deinit(&r);
    stale = true;
    call("GET", "/healthz", NULL, &r);
    assert_body(&r, 503, "{\"status\":\"stale\",\"reason\":\"namespace mem needs a bootstrap\"}");
    assert_true(r.retry_after_s > 0);
    mem_api_resp_deinit(&r);
    test_ctx.draining = true; /* draining says so first */
    call("GET", "/healthz", NULL, &r);
    assert_body(&r, 503, "{\"status\":\"draining\"}");
    mem_api_resp_deinit(&r);
    test_ctx.draining = false;
}

/* The address other nodes relay to (--advertise) passes the Host check beside the listed
 * --allowed-hosts. */
static void test_advertised_host_is_ours(void **state)
{
    snprintf(test_cfg.listen_host, sizeof(test_cfg.listen_host), "0.0.0.0");
    snprintf(test_cfg.allowed_hosts, sizeof(test_cfg.allowed_hosts), "mem.example.com");
    snprintf(test_cfg.advertise, sizeof(test_cfg.advertise), "node2.internal:7001");
    mem_err_t err;
    mem_err_clear(&err);
    assert_int_equal(mem_api_edge_new(&test_cfg, 7001, NULL, &test_ctx.edge, &err), MEM_OK);
    static const struct {
        const char *host;
        int status;
    } cases[] = {
        {"node2.internal:7001", 200},
        {"mem.example.com", 200},
        {"node2.internal:7002", 403},
        {"node3.internal:7001", 403},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mem_api_header_t h = {"Host", 4, cases[i].host, strlen(cases[i].host)};
        mem_api_req_t req = {
            .method = "GET", .path = "/openapi.json", .query = "", .headers = &h, .n_headers = 1};
        mem_api_resp_t r;
        memset(&r, 0, sizeof(r));
        mem_api_handle(&test_ctx, &req, &r);
        if (r.status != cases[i].status)
            fail_msg("Host %s: %d, expected %d", cases[i].host, r.status, cases[i].status);
        mem_api_resp_deinit(&r);
    }
    mem_api_edge_free(test_ctx.edge);
    test_ctx.edge = NULL;
    test_cfg.advertise[0] = test_cfg.allowed_hosts[0] = '\0';
}

/* A local 200 listing as GET /v1/namespaces made it. */
static void local_listing(mem_api_resp_t *r, const char *body)
{
    memset(r, 0, sizeof(*r));
    r->status = 200;
    r->body = strdup(body);
    r->body_len = strlen(body);
    r->content_type = "application/json";
}

/* The merged listing is whole or an error: each name once (the copy applied furthest),
 * sorted; a node's listing missing or unreadable makes it 503 unavailable with Retry-After,
 * never a shorter list; a local error stays the answer. */
static void test_listing_merge_whole_or_error(void **state)
{
    mem_api_resp_t r;
    char *bodies[2] = {strdup("{\"namespaces\":[{\"name\":\"c\",\"count\":1,\"log_seq\":7},"
                              "{\"name\":\"a\",\"count\":5,\"log_seq\":9}]}"),
                       strdup("{\"namespaces\":[{\"name\":\"b\",\"count\":2,\"log_seq\":3}]}")};
    size_t lens[2] = {strlen(bodies[0]), strlen(bodies[1])};
    local_listing(&r, "{\"namespaces\":[{\"name\":\"a\",\"count\":4,\"log_seq\":8}]}");
    assert_int_equal(mem_api_listing_merge(&r, bodies, lens, 2), MEM_OK);
    assert_body(&r, 200,
                "{\"namespaces\":[{\"name\":\"a\",\"count\":5,\"log_seq\":9},{\"name\":\"b\","
                "\"count\":2,\"log_seq\":3},{\"name\":\"c\",\"count\":1,\"log_seq\":7}]}");
    mem_api_resp_deinit(&r);
    /* a node that did not answer */
    char *missing[2] = {bodies[0], NULL};
    local_listing(&r, "{\"namespaces\":[]}");
    assert_int_equal(mem_api_listing_merge(&r, missing, lens, 2), MEM_EBUSY);
    check_error(&r, 503, "unavailable", NULL);
    assert_true(r.retry_after_s > 0);
    mem_api_resp_deinit(&r);
    /* a node whose answer is not a listing */
    static const char *bad[] = {"{\"namespaces\":[", "{\"error\":{}}", "[]", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *one[1] = {(char *)bad[i]};
        size_t len1[1] = {strlen(bad[i])};
        local_listing(&r, "{\"namespaces\":[]}");
        assert_int_equal(mem_api_listing_merge(&r, one, len1, 1), MEM_EBUSY);
        check_error(&r, 503, "unavailable", NULL);
        mem_api_resp_deinit(&r);
    }
    /* the local error (here a 401) is the answer whatever the others said */
    memset(&r, 0, sizeof(r));
    r.status = 401;
    r.body = strdup("{\"error\":{\"code\":\"unauthorized\",\"message\":\"key\"}}");
    r.body_len = strlen(r.body);
    assert_int_equal(mem_api_listing_merge(&r, missing, lens, 2), MEM_OK);
    assert_int_equal(r.status, 401);
    mem_api_resp_deinit(&r);
    free(bodies[0]);
    free(bodies[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_target_of_each_route, setup),
        cmocka_unit_test_setup(test_target_of_mcp_calls, setup),
        cmocka_unit_test_setup(test_node_and_move_routes, setup),
        cmocka_unit_test_setup(test_health_of_a_stale_node, setup),
        cmocka_unit_test_setup(test_advertised_host_is_ours, setup),
        cmocka_unit_test_setup(test_listing_merge_whole_or_error, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
