/* test_api_mcp.c - POST /mcp: JSON-RPC framing, initialize, tools/list, tools/call
 * SPDX-License-Identifier: MIT
 */
#include "tests/unit/api_fake.h"

static void mcp(const char *body, mem_api_resp_t *r)
{
    call("POST", "/mcp", body, r);
}

/* The JSON-RPC answer: HTTP 200, jsonrpc 2.0, the given id (a JSON literal). */
static json_t *rpc(const mem_api_resp_t *r, const char *want_id)
{
    if (r->status != 200)
        fail_msg("status %d: %.*s", r->status, (int)r->body_len, r->body ? r->body : "");
    assert_string_equal(r->content_type, "application/json");
    json_t *j = resp_json(r);
    assert_string_equal(json_string_value(json_object_get(j, "jsonrpc")), "2.0");
    char *id = json_dumps(json_object_get(j, "id"), JSON_ENCODE_ANY);
    assert_string_equal(id, want_id);
    free(id);
    return j;
}

static void expect_rpc_error(const char *body, const char *want_id, int code)
{
    mem_api_resp_t r;
    mcp(body, &r);
    json_t *j = rpc(&r, want_id);
    json_t *e = json_object_get(j, "error");
    if (!e || json_integer_value(json_object_get(e, "code")) != code)
        fail_msg("want error %d: %.*s", code, (int)r.body_len, r.body);
    assert_true(json_string_length(json_object_get(e, "message")) > 0);
    assert_null(json_object_get(j, "result"));
    json_decref(j);
    mem_api_resp_deinit(&r);
}

static void test_initialize_negotiates(void **state)
{
    static const struct {
        const char *asked, *got;
    } V[] = {{"\"2025-06-18\"", "2025-06-18"}, {"\"2025-03-26\"", "2025-03-26"},
             {"\"2025-11-25\"", "2025-11-25"}, {"\"2024-11-05\"", "2025-11-25"},
             {"\"2099-01-01\"", "2025-11-25"}, {"7", "2025-11-25"}};
    for (size_t i = 0; i < sizeof(V) / sizeof(V[0]); i++) {
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                 "\"protocolVersion\":%s,\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
                 "\"version\":\"1\"}}}",
                 V[i].asked);
        mem_api_resp_t r;
        mcp(body, &r);
        json_t *j = rpc(&r, "1");
        json_t *res = json_object_get(j, "result");
        assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")), V[i].got);
        assert_true(json_is_object(json_object_get(json_object_get(res, "capabilities"), "tools")));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")),
            "mnemod");
        json_decref(j);
        mem_api_resp_deinit(&r);
    }
    /* no params at all: the newest */
    mem_api_resp_t r;
    mcp("{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":\"initialize\"}", &r);
    json_t *j = rpc(&r, "\"s-1\"");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(j, "result"), "protocolVersion")),
        "2025-11-25");
    json_decref(j);
    mem_api_resp_deinit(&r);
}

static void test_notifications_and_responses_are_202(void **state)
{
    const char *bodies[] = {
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"memory_forget\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}",
    };
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        mem_api_resp_t r;
        mcp(bodies[i], &r);
        assert_int_equal(r.status, 202);
        assert_int_equal(r.body_len, 0);
        assert_null(r.pending); /* a notification never writes */
        mem_api_resp_deinit(&r);
    }
}

static void test_rpc_errors(void **state)
{
    expect_rpc_error("{\"jsonrpc\":\"2.0\",\"id\":1,", "null", -32700);
    expect_rpc_error("", "null", -32700);
    expect_rpc_error("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "null", -32600);
    expect_rpc_error("{\"id\":1,\"method\":\"ping\"}", "null", -32600);
    expect_rpc_error("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "null", -32600);
    expect_rpc_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", "1", -32600);
    expect_rpc_error("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", "null", -32600);
    expect_rpc_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}", "2", -32601);
    expect_rpc_error("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/lst\"}", "\"x\"",
                     -32601);
    expect_rpc_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
                     "\"memory_nope\",\"arguments\":{}}}",
                     "3", -32602);
    expect_rpc_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\"}", "3", -32602);
    /* ping works */
    mem_api_resp_t r;
    mcp("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}", &r);
    assert_body(&r, 200, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}");
    mem_api_resp_deinit(&r);
    /* transport-level: GET is 405, a non-JSON content type 415 */
    call("GET", "/mcp", NULL, &r);
    check_error(&r, 405, "method_not_allowed", NULL);
    mem_api_resp_deinit(&r);
    call_ct("POST", "/mcp", NULL, "text/plain", "{}", &r);
    check_error(&r, 415, "unsupported_media_type", NULL);
    mem_api_resp_deinit(&r);
}

static void test_tools_list(void **state)
{
    mem_api_resp_t r;
    mcp("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{}}", &r);
    json_t *j = rpc(&r, "1");
    json_t *tools = json_object_get(json_object_get(j, "result"), "tools");
    assert_int_equal(json_array_size(tools), 5);
    const char *names[] = {"memory_insert", "memory_retrieve", "memory_list", "memory_compact",
                           "memory_forget"};
    for (size_t i = 0; i < 5; i++) {
        json_t *t = json_array_get(tools, i);
        assert_string_equal(json_string_value(json_object_get(t, "name")), names[i]);
        assert_true(json_string_length(json_object_get(t, "description")) > 10);
        json_t *schema = json_object_get(t, "inputSchema");
        assert_string_equal(json_string_value(json_object_get(schema, "type")), "object");
        json_t *props = json_object_get(schema, "properties");
        assert_non_null(json_object_get(props, "namespace"));
    }
    json_t *rp =
        json_object_get(json_object_get(json_array_get(tools, 1), "inputSchema"), "properties");
    const char *want[] = {"query",        "embedding", "k",      "half_life",
                          "recency_bias", "decay",     "origin", "coherence_weight",
                          "since",        "until"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!json_object_get(rp, want[i])) fail_msg("memory_retrieve schema lacks %s", want[i]);
    json_decref(j);
    mem_api_resp_deinit(&r);
}

/* The tool result: isError as given; on success the text is the REST JSON and equals
 * structuredContent, on error the text is the REST message. */
static json_t *tool_result(const mem_api_resp_t *r, const char *want_id, bool is_error)
{
    json_t *j = rpc(r, want_id);
    json_t *res = json_object_get(j, "result");
    if (!res || json_is_true(json_object_get(res, "isError")) != is_error)
        fail_msg("want isError=%d: %.*s", is_error, (int)r->body_len, r->body);
    json_t *content = json_object_get(res, "content");
    assert_int_equal(json_array_size(content), 1);
    json_t *c0 = json_array_get(content, 0);
    assert_string_equal(json_string_value(json_object_get(c0, "type")), "text");
    const char *text_s = json_string_value(json_object_get(c0, "text"));
    assert_non_null(text_s);
    json_t *sc = json_object_get(res, "structuredContent");
    json_t *text = NULL;
    if (is_error) {
        /* the text is the REST message; the REST error body rides in structuredContent */
        const char *msg =
            json_string_value(json_object_get(json_object_get(sc, "error"), "message"));
        assert_non_null(msg);
        assert_string_equal(text_s, msg);
    } else {
        text = json_loads(text_s, 0, NULL);
        assert_non_null(text);
        assert_true(json_equal(sc, text));
    }
    json_decref(text);
    return j;
}

static void test_tools_call_retrieve(void **state)
{
    mem_api_resp_t r;
    mcp("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"memory_retrieve\",\"arguments\":{\"namespace\":\"mem\",\"embedding\":[1,0,0],\"k\":1,"
        "\"half_life\":\"90d\"}}}",
        &r);
    json_t *j = tool_result(&r, "4", false);
    assert_int_equal(fake.n_retrieve, 1);
    assert_true(fake.q.scan.decay.half_life_s == 90 * 86400.0);
    json_t *sc = json_object_get(json_object_get(j, "result"), "structuredContent");
    assert_string_equal(json_string_value(json_object_get(sc, "namespace")), "mem");
    assert_int_equal(json_array_size(json_object_get(sc, "results")), 1);
    json_decref(j);
    mem_api_resp_deinit(&r);
    /* default namespace is "default": the fake has none, so a tool error with not_found */
    mcp("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"memory_retrieve\",\"arguments\":{\"query\":\"x\"}}}",
        &r);
    j = tool_result(&r, "5", true);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(json_object_get(j, "result"), "structuredContent"),
                            "error"),
            "code")),
        "not_found");
    json_decref(j);
    mem_api_resp_deinit(&r);
}

static void test_tools_call_invalid_input_is_tool_error(void **state)
{
    const char *bodies[] = {
        "{\"namespace\":\"mem\",\"embedding\":[1,0,0],\"k\":0}",
        "{\"namespace\":\"mem\",\"embedding\":[1,0,0],\"bogus\":1}",
        "{\"namespace\":\"..\",\"embedding\":[1,0,0]}",
        "{\"namespace\":5,\"embedding\":[1,0,0]}",
        "{\"namespace\":\"mem\",\"embedding\":[1,0]}",
    };
    const char *codes[] = {"invalid_field", "invalid_field", "invalid_field", "invalid_field",
                           "dimension_mismatch"};
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        char body[512];
        snprintf(body, sizeof(body),
                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
                 "\"memory_retrieve\",\"arguments\":%s}}",
                 bodies[i]);
        mem_api_resp_t r;
        mcp(body, &r);
        assert_null(r.allow);
        json_t *j = tool_result(&r, "7", true);
        json_t *e = json_object_get(
            json_object_get(json_object_get(j, "result"), "structuredContent"), "error");
        if (strcmp(json_string_value(json_object_get(e, "code")), codes[i]) != 0)
            fail_msg("case %zu: %s", i, json_string_value(json_object_get(e, "message")));
        json_decref(j);
        mem_api_resp_deinit(&r);
    }
    mem_api_resp_t r;
    mcp("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"memory_forget\",\"arguments\":{\"namespace\":\"mem\"}}}",
        &r);
    json_decref(tool_result(&r, "8", true));
    assert_null(r.pending);
    mem_api_resp_deinit(&r);
    mcp("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"memory_insert\",\"arguments\":{\"segments\":[]}}}",
        &r);
    json_decref(tool_result(&r, "8", true));
    mem_api_resp_deinit(&r);
    mcp("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"memory_insert\",\"arguments\":[1]}}",
        &r);
    json_decref(tool_result(&r, "8", true));
    mem_api_resp_deinit(&r);
}

static void test_tools_call_writes_go_pending(void **state)
{
    mem_api_resp_t r;
    mcp("{\"jsonrpc\":\"2.0\",\"id\":\"w1\",\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"memory_insert\",\"arguments\":{\"namespace\":\"text\",\"text\":\"buy milk\","
        "\"source\":\"chat\"}}}",
        &r);
    mem_store_op_t *op = submitted(&r);
    assert_null(r.body);
    assert_int_equal(op->kind, MEM_STORE_OP_INSERT);
    assert_string_equal(op->ns, "text");
    assert_int_equal(op->dim, 256);
    assert_int_equal(op->n_segs, 1);
    op->outs[0] = (mem_store_seg_out_t){.seq = 3, .ts_ms = FAKE_NOW_MS};
    op->created = true;
    op->rc = MEM_OK;
    mem_api_finish(&test_ctx, &r);
    json_t *j = tool_result(&r, "\"w1\"", false);
    json_t *sc = json_object_get(json_object_get(j, "result"), "structuredContent");
    json_t *ins = json_array_get(json_object_get(sc, "inserted"), 0);
    assert_int_equal(json_integer_value(json_object_get(ins, "seq")), 3);
    assert_string_equal(json_string_value(json_object_get(ins, "id")), op->segs[0].id);
    json_decref(j);
    mem_api_resp_deinit(&r);

    /* a writer error is a tool error in an HTTP 200 */
    mcp("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"memory_forget\",\"arguments\":{\"id\":\"zz\"}}}",
        &r);
    submitted(&r);
    assert_string_equal(r.pending->ns, "default");
    assert_string_equal(r.pending->id, "zz");
    r.pending->rc = MEM_ENOTFOUND;
    mem_err_set(&r.pending->err, MEM_ENOTFOUND, "segment zz not found");
    mem_api_finish(&test_ctx, &r);
    json_decref(tool_result(&r, "2", true));
    mem_api_resp_deinit(&r);

    /* compact: planned in handle, evictions submitted */
    mcp("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"memory_compact\",\"arguments\":{\"namespace\":\"mem\",\"target\":4}}}",
        &r);
    submitted(&r);
    assert_int_equal(r.pending->n_evict, 1);
    r.pending->rc = MEM_OK;
    r.pending->n_applied = 1;
    mem_api_finish(&test_ctx, &r);
    j = tool_result(&r, "3", false);
    sc = json_object_get(json_object_get(j, "result"), "structuredContent");
    assert_int_equal(json_integer_value(json_object_get(sc, "after")), 4);
    json_decref(j);
    mem_api_resp_deinit(&r);
}

static int setup(void **state)
{
    ctx_init();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_initialize_negotiates, setup),
        cmocka_unit_test_setup(test_notifications_and_responses_are_202, setup),
        cmocka_unit_test_setup(test_rpc_errors, setup),
        cmocka_unit_test_setup(test_tools_list, setup),
        cmocka_unit_test_setup(test_tools_call_retrieve, setup),
        cmocka_unit_test_setup(test_tools_call_invalid_input_is_tool_error, setup),
        cmocka_unit_test_setup(test_tools_call_writes_go_pending, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
