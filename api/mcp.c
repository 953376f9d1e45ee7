/* mcp.c - POST /mcp: the Model Context Protocol over streamable HTTP (SPEC section 8)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. One JSON-RPC 2.0 message per POST, answered with application/json (no SSE, no
 * sessions). A tools/call runs the same handler as the REST endpoint with the tool's
 * arguments (minus "namespace") as the body, so validation, messages and writes are
 * identical; writes go through resp->pending like REST writes, and mem_api__mcp_wrap turns
 * the REST answer into a tool result once it is final. Every JSON-RPC answer, errors
 * included, is an HTTP 200: MCP clients do not read JSON-RPC errors carried by a 4xx.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#ifndef MNEMOD_VERSION
#define MNEMOD_VERSION "0.0.0"
#endif

/* Newest first. */
static const char *const PROTOCOL_VERSIONS[] = {"2025-11-25", "2025-06-18", "2025-03-26", NULL};

#define TS_SCHEMA                                                                                  \
    "{\"type\":[\"string\",\"number\"],\"description\":\"RFC 3339 with a zone, or Unix "           \
    "seconds\"}"
#define DUR_SCHEMA                                                                                 \
    "{\"type\":[\"string\",\"number\"],\"description\":\"seconds, or \\\"90d\\\", \\\"36h\\\", "   \
    "\\\"15m\\\", \\\"30s\\\", \\\"2w\\\"\"}"
#define NS_SCHEMA                                                                                  \
    "\"namespace\":{\"type\":\"string\",\"description\":\"memory namespace (default "              \
    "\\\"default\\\")\",\"pattern\":\"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$\"}"
#define VEC_SCHEMA                                                                                 \
    "{\"oneOf\":[{\"type\":\"array\",\"items\":{\"type\":\"number\"}},{\"type\":\"string\","       \
    "\"description\":\"base64 of little-endian float32\"}]}"

static const char TOOLS_JSON[] =
    "["
    "{\"name\":\"memory_insert\",\"title\":\"Remember\",\"description\":\"Store a memory "
    "segment (text, optional embedding, timestamp, source, metadata, supersedes). Text "
    "without an embedding is embedded by the server's embedder.\",\"inputSchema\":"
    "{\"type\":\"object\",\"properties\":{" NS_SCHEMA ","
    "\"text\":{\"type\":\"string\"},\"embedding\":" VEC_SCHEMA ",\"id\":{\"type\":\"string\"},"
    "\"timestamp\":" TS_SCHEMA ",\"source\":{\"type\":\"string\"},\"metadata\":{\"type\":"
    "\"object\"},\"supersedes\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
    "\"required\":[\"text\"],\"additionalProperties\":false}},"
    "{\"name\":\"memory_retrieve\",\"title\":\"Recall\",\"description\":\"Top-K memories for a "
    "query, scored by similarity, temporal decay and coherence.\",\"inputSchema\":{\"type\":"
    "\"object\",\"properties\":{" NS_SCHEMA
    ",\"query\":{\"type\":\"string\"},\"embedding\":" VEC_SCHEMA
    ",\"k\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000},\"half_life\":" DUR_SCHEMA
    ",\"half_life_days\":{\"type\":\"number\",\"minimum\":0},\"recency_bias\":{\"type\":"
    "\"number\",\"minimum\":0,\"maximum\":1},\"decay\":{\"oneOf\":[{\"type\":\"string\",\"enum\":"
    "[\"exponential\",\"linear\",\"gaussian\",\"none\"]},{\"type\":\"object\"}]},"
    "\"origin\":" TS_SCHEMA ",\"offset\":" DUR_SCHEMA
    ",\"coherence_weight\":{\"type\":\"number\",\"minimum\":0,"
    "\"maximum\":1},\"since\":" TS_SCHEMA ",\"until\":" TS_SCHEMA ",\"as_of\":" TS_SCHEMA
    ",\"source\":{\"type\":\"string\"},\"min_score\":{\"type\":\"number\"},"
    "\"include_superseded\":{\"type\":\"boolean\"},\"include_archived\":{\"type\":\"boolean\"},"
    "\"explain\":{\"type\":\"boolean\"}},\"additionalProperties\":false}},"
    "{\"name\":\"memory_compact\",\"title\":\"Compact\",\"description\":\"Shrink a namespace to "
    "a budget (target count or ratio) with a retention policy; evicted memories are "
    "archived.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{" NS_SCHEMA
    ",\"target\":{\"type\":\"integer\",\"minimum\":0},\"ratio\":{\"type\":\"number\","
    "\"exclusiveMinimum\":0,\"maximum\":1},\"policy\":{\"type\":\"string\"},\"dry_run\":"
    "{\"type\":\"boolean\"},\"purge\":{\"type\":\"boolean\"},\"weights\":{\"type\":\"object\"},"
    "\"context\":{\"type\":\"array\",\"items\":" VEC_SCHEMA "},\"dedup_threshold\":{\"type\":"
    "\"number\"}},\"additionalProperties\":false}},"
    "{\"name\":\"memory_forget\",\"title\":\"Forget\",\"description\":\"Delete one memory "
    "segment for good (hard "
    "delete).\",\"inputSchema\":{\"type\":\"object\",\"properties\":{" NS_SCHEMA
    ",\"id\":{\"type\":\"string\"}},\"required\":[\"id\"],\"additionalProperties\":false}}"
    "]";

static void send_empty(mem_api_resp_t *resp, int status)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    resp->status = status;
    resp->content_type = NULL;
}

static void rpc_send(mem_api_resp_t *resp, json_t *id, const char *key, json_t *value)
{
    json_t *o = json_object();
    if (!o || json_object_set_new(o, "jsonrpc", json_string("2.0")) ||
        json_object_set(o, "id", id ? id : json_null()) || json_object_set_new(o, key, value)) {
        json_decref(o);
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    mem_api__send_json(resp, 200, o);
    resp->retry_after_s = 0;
    resp->allow = NULL;
}

static void rpc_error(mem_api_resp_t *resp, json_t *id, int code, const char *msg)
{
    rpc_send(resp, id, "error", json_pack("{s:i,s:s}", "code", code, "message", msg));
}

void mem_api__mcp_wrap(mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    json_t *id = st ? st->rpc_id : NULL;
    bool is_error = resp->status >= 400;
    json_t *result = json_object(), *content = json_array(), *item = json_object();
    json_t *structured = NULL;
    if (resp->body &&
        mem_api__json_parse(resp->body, resp->body_len, NULL, NULL, &structured, NULL) != MEM_OK)
        structured = NULL;
    /* A tool error's text is the REST error's message (SPEC section 8); the whole error
     * body still travels as structuredContent. */
    const char *msg = NULL;
    if (is_error && structured)
        msg = json_string_value(json_object_get(json_object_get(structured, "error"), "message"));
    json_t *text =
        msg ? json_string(msg) : json_stringn(resp->body ? resp->body : "", resp->body_len);
    if (!result || !content || !item || json_object_set_new(item, "type", json_string("text")) ||
        json_object_set_new(item, "text", text) || json_array_append(content, item) ||
        json_object_set(result, "content", content) ||
        (structured && json_object_set(result, "structuredContent", structured)) ||
        json_object_set_new(result, "isError", json_boolean(is_error))) {
        json_decref(result);
        result = NULL;
    }
    json_decref(structured);
    json_decref(item);
    json_decref(content);
    if (!result) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    rpc_send(resp, id, "result", result);
}

static const char *negotiate(const json_t *params)
{
    const json_t *v = json_is_object(params) ? json_object_get(params, "protocolVersion") : NULL;
    const char *want = json_string_value(v);
    for (const char *const *p = PROTOCOL_VERSIONS; want && *p; p++)
        if (strcmp(*p, want) == 0) return *p;
    return PROTOCOL_VERSIONS[0];
}

static void tool_error(mem_api_resp_t *resp, const mem_err_t *err)
{
    mem_api_error(resp, err);
    mem_api__mcp_wrap(resp);
}

static void tools_call(const mem_api_ctx_t *ctx, mem_api_resp_t *resp, json_t *id,
                       const json_t *params)
{
    mem_api__state_t *st = mem_api__state(resp);
    mem_err_t err;
    mem_err_clear(&err);
    if (!st) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    const char *name = json_string_value(json_object_get(params, "name"));
    if (!json_is_object(params) || !name) {
        rpc_error(resp, id, -32602, "tools/call: params.name is required");
        return;
    }
    bool ins = strcmp(name, "memory_insert") == 0, ret = strcmp(name, "memory_retrieve") == 0,
         com = strcmp(name, "memory_compact") == 0, forget = strcmp(name, "memory_forget") == 0;
    if (!ins && !ret && !com && !forget) {
        char msg[160];
        snprintf(msg, sizeof(msg), "unknown tool: %.100s", name);
        rpc_error(resp, id, -32602, msg);
        return;
    }
    st->mcp = true;
    st->rpc_id = json_incref(id);
    const json_t *a = json_object_get(params, "arguments");
    if (a && !json_is_null(a) && !json_is_object(a)) {
        mem_err_field(&err, MEM_EINVAL, "arguments", "arguments: expected an object");
        tool_error(resp, &err);
        return;
    }
    json_t *args = a && json_is_object(a) ? json_copy((json_t *)a) : json_object();
    if (!args) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    char ns[MEM_STORE_NS_MAX + 1] = "default";
    const json_t *nsv = json_object_get(args, "namespace");
    if (nsv && !json_is_null(nsv)) {
        const char *s = json_string_value(nsv);
        size_t l = json_string_length(nsv);
        if (!s || mem_api__check_ns(s, l, &err) != MEM_OK) {
            if (!s) mem_err_field(&err, MEM_EINVAL, "namespace", "namespace: expected a string");
            json_decref(args);
            tool_error(resp, &err);
            return;
        }
        memcpy(ns, s, l);
        ns[l] = '\0';
    }
    json_object_del(args, "namespace");
    bool wrapped = false; /* tool_error already produced the tool result */
    if (ins) {
        if (json_object_get(args, "segments")) {
            mem_err_field(&err, MEM_EINVAL, "segments", "unknown field: segments");
            tool_error(resp, &err);
            wrapped = true;
        } else {
            mem_api__seg_insert(ctx, ns, args, resp);
        }
    } else if (ret) {
        mem_api__retrieve(ctx, ns, args, resp);
    } else if (com) {
        mem_api__compact(ctx, ns, args, resp);
    } else {
        static const char *const K[] = {"id", NULL};
        const json_t *idv = json_object_get(args, "id");
        size_t l = json_string_length(idv);
        if (mem_api__check_keys(args, K, "", &err) != MEM_OK) {
            tool_error(resp, &err);
            wrapped = true;
        } else if (!json_is_string(idv) || l == 0 || l > MEM_STORE_ID_MAX) {
            mem_err_field(&err, MEM_EINVAL, "id", "id: expected a string of 1 to %d bytes",
                          MEM_STORE_ID_MAX);
            tool_error(resp, &err);
            wrapped = true;
        } else {
            mem_api__seg_delete(ctx, ns, json_string_value(idv), resp);
        }
    }
    json_decref(args);
    if (!wrapped && !resp->pending && !resp->embed) mem_api__mcp_wrap(resp);
}

void mem_api__mcp(const mem_api_ctx_t *ctx, const mem_api_req_t *req, mem_api_resp_t *resp)
{
    static const char *const VEC_PATHS[] = MEM_API_VEC_PATHS_MCP;
    mem_err_t err;
    mem_err_clear(&err);
    json_t *root = NULL;
    int rc = req->body_len
                 ? mem_api__json_parse(req->body, req->body_len, VEC_PATHS, NULL, &root, &err)
                 : MEM_EJSON;
    if (rc == MEM_ENOMEM) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    if (rc != MEM_OK) {
        char msg[200];
        snprintf(msg, sizeof(msg), "Parse error: %.150s", req->body_len ? err.msg : "empty body");
        rpc_error(resp, NULL, -32700, msg);
        return;
    }
    json_t *id = json_object_get(root, "id");
    const json_t *method = json_object_get(root, "method");
    if (json_is_array(root)) {
        rpc_error(resp, NULL, -32600, "Invalid Request: batches are not supported");
        goto out;
    }
    if (!json_is_object(root) || !json_is_string(json_object_get(root, "jsonrpc")) ||
        strcmp(json_string_value(json_object_get(root, "jsonrpc")), "2.0") != 0) {
        rpc_error(resp, NULL, -32600, "Invalid Request: expected a JSON-RPC 2.0 object");
        goto out;
    }
    if (!method) {
        /* a response to a server request (we send none) or garbage */
        if (json_object_get(root, "result") || json_object_get(root, "error"))
            send_empty(resp, 202);
        else
            rpc_error(resp, id, -32600, "Invalid Request: method is required");
        goto out;
    }
    if (!json_is_string(method)) {
        rpc_error(resp, id, -32600, "Invalid Request: method must be a string");
        goto out;
    }
    if (!id) { /* notification: nothing to answer */
        send_empty(resp, 202);
        goto out;
    }
    if (!json_is_string(id) && !json_is_integer(id)) {
        rpc_error(resp, NULL, -32600, "Invalid Request: id must be a string or an integer");
        goto out;
    }
    const char *m = json_string_value(method);
    const json_t *params = json_object_get(root, "params");
    if (strcmp(m, "initialize") == 0) {
        rpc_send(resp, id, "result",
                 json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s},s:s}", "protocolVersion",
                           negotiate(params), "capabilities", "tools", "listChanged", 0,
                           "serverInfo", "name", "mnemod", "version", MNEMOD_VERSION,
                           "instructions",
                           "Agent memory: memory_insert stores, memory_retrieve recalls with "
                           "temporal decay, memory_compact shrinks, memory_forget deletes."));
    } else if (strcmp(m, "ping") == 0) {
        rpc_send(resp, id, "result", json_object());
    } else if (strcmp(m, "tools/list") == 0) {
        json_t *tools = json_loads(TOOLS_JSON, 0, NULL);
        rpc_send(resp, id, "result", tools ? json_pack("{s:o}", "tools", tools) : NULL);
    } else if (strcmp(m, "tools/call") == 0) {
        tools_call(ctx, resp, id, params);
    } else {
        char msg[160];
        snprintf(msg, sizeof(msg), "Method not found: %.100s", m);
        rpc_error(resp, id, -32601, msg);
    }
out:
    json_decref(root);
}
