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

/* The tools. Their input and output schemas are taken from api/openapi.json (compiled in):
 * the arguments are the REST body's schema (or the listing's query parameters) plus
 * "namespace", the output is the REST answer's schema or the error body, so the MCP schemas
 * can never drift from the REST ones. */
typedef struct tool_def {
    const char *name, *title, *description;
    const char *input;  /* components/schemas entry of the arguments; NULL: built in build_input */
    const char *output; /* components/schemas entry of the success answer */
    bool read_only, destructive, idempotent;
} tool_def_t;

static const tool_def_t TOOLS[] = {
    {"memory_insert", "Remember",
     "Store a memory segment (text, optional embedding, timestamp, source, metadata, "
     "supersedes). Text without an embedding is embedded by the server's embedder.",
     "SegmentIn", "Inserted", false, false, true},
    {"memory_retrieve", "Recall",
     "Top-K memories for a query, scored by similarity, temporal decay and coherence; "
     "filter restricts them by metadata, match picks vector, text or hybrid relevance.",
     "RetrieveRequest", "RetrieveResponse", true, false, true},
    {"memory_list", "Browse",
     "List stored memories in insertion order, a page at a time (pass next as after), "
     "optionally by time range and source.",
     NULL, "SegmentList", true, false, true},
    {"memory_compact", "Compact",
     "Shrink a namespace to a budget (target count or ratio) with a retention policy; "
     "evicted memories are archived.",
     "CompactRequest", "CompactResponse", false, true, false},
    {"memory_forget", "Forget", "Delete one memory segment for good (hard delete).", NULL,
     "Deleted", false, true, true},
};
#define N_TOOLS (sizeof(TOOLS) / sizeof(TOOLS[0]))

/* A copy of node with every $ref of the document replaced by what it names. NULL on ENOMEM
 * (or a reference deeper than any the document holds). */
static json_t *inline_refs(const json_t *doc, const json_t *node, int depth)
{
    if (depth > 32) return NULL;
    if (json_is_object(node)) {
        const char *ref = json_string_value(json_object_get(node, "$ref"));
        if (ref && strncmp(ref, "#/components/schemas/", 21) == 0) {
            const json_t *target = json_object_get(
                json_object_get(json_object_get(doc, "components"), "schemas"), ref + 21);
            json_t *out = target ? inline_refs(doc, target, depth + 1) : NULL;
            const char *k;
            json_t *v;
            json_object_foreach((json_t *)node, k, v) /* siblings of $ref apply too (3.1) */
            {
                if (!out || strcmp(k, "$ref") == 0) continue;
                json_t *c = inline_refs(doc, v, depth + 1);
                if (!c || json_object_set_new(out, k, c)) {
                    json_decref(out);
                    out = NULL;
                }
            }
            return out;
        }
        json_t *out = json_object();
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)node, k, v)
        {
            json_t *c = out ? inline_refs(doc, v, depth + 1) : NULL;
            if (!c || json_object_set_new(out, k, c)) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    if (json_is_array(node)) {
        json_t *out = json_array();
        for (size_t i = 0; out && i < json_array_size(node); i++) {
            json_t *c = inline_refs(doc, json_array_get(node, i), depth + 1);
            if (!c || json_array_append_new(out, c)) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    return json_deep_copy(node);
}

static json_t *schema_of(const json_t *doc, const char *name)
{
    char ref[96];
    snprintf(ref, sizeof(ref), "#/components/schemas/%s", name);
    json_t *r = json_pack("{s:s}", "$ref", ref);
    json_t *out = r ? inline_refs(doc, r, 0) : NULL;
    json_decref(r);
    return out;
}

/* The listing's query parameters as tool arguments (JSON types instead of strings). */
static json_t *list_input(const json_t *doc)
{
    json_t *ts = schema_of(doc, "Timestamp");
    json_t *o = json_pack(
        "{s:s,s:{s:{s:s,s:i,s:i,s:i},s:{s:s,s:s},s:o,s:O,s:{s:s,s:i},s:{s:s},s:{s:s},s:{s:s}},"
        "s:b}",
        "type", "object", "properties", "limit", "type", "integer", "minimum", 1, "maximum",
        MEM_STORE_LIST_MAX, "default", 100, "after", "type", "string", "description",
        "the next cursor of the previous page", "since", ts ? json_incref(ts) : json_null(),
        "until", ts ? ts : json_null(), "source", "type", "string", "minLength", 1,
        "include_superseded", "type", "boolean", "include_archived", "type", "boolean", "embedding",
        "type", "boolean", "additionalProperties", 0);
    json_decref(ts);
    return o;
}

static json_t *build_input(const json_t *doc, const tool_def_t *t)
{
    json_t *in;
    if (t->input) {
        in = schema_of(doc, t->input);
        json_t *props = json_object_get(in, "properties");
        if (props) json_object_del(props, "min_seq"); /* cluster reads take it in REST only */
        json_object_del(in, "examples");
    } else if (strcmp(t->name, "memory_list") == 0) {
        in = list_input(doc);
    } else {
        in = json_pack("{s:s,s:{s:{s:s,s:i,s:i}},s:[s],s:b}", "type", "object", "properties", "id",
                       "type", "string", "minLength", 1, "maxLength", MEM_STORE_ID_MAX, "required",
                       "id", "additionalProperties", 0);
    }
    json_t *props = json_object_get(in, "properties");
    if (!props || json_object_set_new(
                      props, "namespace",
                      json_pack("{s:s,s:s,s:s,s:s}", "type", "string", "description",
                                "memory namespace (default \"default\")", "pattern",
                                "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$", "default", "default"))) {
        json_decref(in);
        return NULL;
    }
    return in;
}

/* The tools/list answer, built from the compiled-in OpenAPI document. NULL on ENOMEM. */
static json_t *tools_list(void)
{
    json_t *doc = NULL; /* our parser: jansson's may drop a byte when an allocation fails */
    mem_api__json_parse(mem_api__openapi_json, mem_api__openapi_json_len, NULL, NULL, &doc, NULL);
    json_t *arr = doc ? json_array() : NULL;
    for (size_t i = 0; arr && i < N_TOOLS; i++) {
        const tool_def_t *t = &TOOLS[i];
        json_t *in = build_input(doc, t), *ok = schema_of(doc, t->output),
               *err = schema_of(doc, "Error");
        json_t *tool =
            in && ok && err
                ? json_pack("{s:s,s:s,s:s,s:o,s:{s:s,s:[o,o]},s:{s:s,s:b,s:b,s:b,s:b}}", "name",
                            t->name, "title", t->title, "description", t->description,
                            "inputSchema", in, "outputSchema", "type", "object", "anyOf", ok, err,
                            "annotations", "title", t->title, "readOnlyHint", t->read_only,
                            "destructiveHint", t->destructive, "idempotentHint", t->idempotent,
                            "openWorldHint", 0)
                : NULL;
        if (!tool) {
            if (!(in && ok && err)) {
                json_decref(in);
                json_decref(ok);
                json_decref(err);
            }
            json_decref(arr);
            arr = NULL;
            break;
        }
        if (json_array_append_new(arr, tool)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    json_decref(doc);
    return arr;
}

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
    /* value is ours until json_object_set_new takes it (which it does even when failing) */
    bool failed = !o || json_object_set_new(o, "jsonrpc", json_string("2.0")) ||
                  json_object_set(o, "id", id ? id : json_null());
    if (failed) json_decref(value);
    if (failed || json_object_set_new(o, key, value)) {
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
    /* the message may quote client bytes (a name, a parser's excerpt of the body) */
    rpc_send(resp, id, "error",
             json_pack("{s:i,s:o}", "code", code, "message", mem_api__text(msg)));
}

void mem_api__mcp_wrap(mem_api_resp_t *resp)
{
    mem_api__state_t *st = resp->_state;
    json_t *id = st ? st->rpc_id : NULL;
    bool is_error = resp->status >= 400;
    json_t *result = json_object(), *content = json_array(), *item = json_object();
    json_t *structured = NULL;
    int parsed =
        resp->body ? mem_api__json_parse(resp->body, resp->body_len, NULL, NULL, &structured, NULL)
                   : MEM_OK;
    if (parsed != MEM_OK) structured = NULL;
    /* A tool error's text is the REST error's message (SPEC section 8); the whole error
     * body still travels as structuredContent. */
    const char *msg = NULL;
    if (is_error && structured)
        msg = json_string_value(json_object_get(json_object_get(structured, "error"), "message"));
    json_t *text =
        msg ? json_string(msg) : json_stringn(resp->body ? resp->body : "", resp->body_len);
    /* a body that could not be parsed for want of memory must not become a result without
     * its structuredContent; text is ours until json_object_set_new takes it */
    bool ok = parsed != MEM_ENOMEM && result && content && item &&
              !json_object_set_new(item, "type", json_string("text"));
    if (!ok) json_decref(text);
    if (!ok || json_object_set_new(item, "text", text) || json_array_append(content, item) ||
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

/* memory_list's arguments as the listing's query string (values percent-encoded). */
static int list_query(const json_t *args, char *q, size_t cap, mem_err_t *err)
{
    static const char *const K[] = {
        "limit",     "after", "since", "until", "source", "include_superseded", "include_archived",
        "embedding", NULL};
    int rc = mem_api__check_keys(args, K, "", err);
    if (rc != MEM_OK) return rc;
    size_t o = 0;
    q[0] = '\0';
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)args, key, v)
    {
        char val[3 * MEM_API_MAX_SOURCE + 1];
        if (json_is_null(v)) continue;
        if (json_is_boolean(v)) {
            snprintf(val, sizeof(val), "%s", json_is_true(v) ? "true" : "false");
        } else if (json_is_integer(v)) {
            snprintf(val, sizeof(val), "%lld", (long long)json_integer_value(v));
        } else if (json_is_real(v)) {
            snprintf(val, sizeof(val), "%.17g", json_real_value(v));
        } else if (json_is_string(v) && json_string_length(v) <= MEM_API_MAX_SOURCE) {
            const unsigned char *p = (const unsigned char *)json_string_value(v);
            size_t n = json_string_length(v), w = 0;
            for (size_t i = 0; i < n; i++)
                w += (size_t)snprintf(val + w, sizeof(val) - w, "%%%02X", p[i]);
        } else {
            return mem_err_field(err, MEM_EINVAL, key, "%s: expected a %s", key,
                                 strcmp(key, "limit") == 0 ? "number" : "short string or a number");
        }
        int n = snprintf(q + o, cap - o, "%s%s=%s", o ? "&" : "", key, val);
        if (n < 0 || (size_t)n >= cap - o)
            return mem_err_field(err, MEM_EINVAL, key, "%s: too long", key);
        o += (size_t)n;
    }
    return MEM_OK;
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
         com = strcmp(name, "memory_compact") == 0, forget = strcmp(name, "memory_forget") == 0,
         list = strcmp(name, "memory_list") == 0;
    if (!ins && !ret && !com && !forget && !list) {
        char msg[160];
        snprintf(msg, sizeof(msg), "unknown tool: %.*s", mem_api__utf8_prefix(name, 100), name);
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
    json_t *args = json_object();
    /* not json_copy: jansson's shallow copy ignores a failed insert and would hand over the
     * arguments without, say, "namespace" (the call would then run on "default") */
    const char *key;
    json_t *value;
    if (args && a && json_is_object(a))
        json_object_foreach((json_t *)a, key, value) if (json_object_set(args, key, value))
        {
            json_decref(args);
            args = NULL;
            break;
        }
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
    /* a tool needs the role of the REST call it makes (SPEC section 9) */
    mem_cfg_role_t need = ins      ? MEM_CFG_ROLE_WRITE
                          : ret    ? MEM_CFG_ROLE_READ
                          : list   ? MEM_CFG_ROLE_READ
                          : forget ? MEM_CFG_ROLE_WRITE
                                   : MEM_CFG_ROLE_ADMIN;
    if (mem_api__auth_check(&st->auth, need, ns, &err) != MEM_OK) {
        json_decref(args);
        tool_error(resp, &err);
        return;
    }
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
    } else if (list) {
        char q[1024];
        if (list_query(args, q, sizeof(q), &err) != MEM_OK) {
            tool_error(resp, &err);
            wrapped = true;
        } else {
            mem_api__seg_list(ctx, ns, q, resp);
        }
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

/* The streamable-HTTP transport: a request's MCP-Protocol-Version header, when it has one,
 * names a version this server speaks, else the answer is 400. Not asked of initialize,
 * where the version is negotiated (a newer client gets the newest one spoken here). */
static bool version_header_ok(const mem_api_req_t *req, mem_api_resp_t *resp)
{
    size_t len;
    const char *v = mem_api__req_header_value(req, "MCP-Protocol-Version", &len);
    if (!v) return true;
    for (const char *const *p = PROTOCOL_VERSIONS; *p; p++)
        if (strlen(*p) == len && memcmp(*p, v, len) == 0) return true;
    mem_api__fail(resp, MEM_EINVAL, "MCP-Protocol-Version",
                  "MCP-Protocol-Version: unsupported version \"%.*s\" (supported: 2025-11-25, "
                  "2025-06-18, 2025-03-26)",
                  mem_api__utf8_prefix_n(v, len, 40), v);
    return false;
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
    bool init = json_is_string(method) && strcmp(json_string_value(method), "initialize") == 0;
    if (!init && !version_header_ok(req, resp)) goto out;
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
                           "temporal decay (and metadata filters), memory_list browses, "
                           "memory_compact shrinks, memory_forget deletes."));
    } else if (strcmp(m, "ping") == 0) {
        rpc_send(resp, id, "result", json_object());
    } else if (strcmp(m, "tools/list") == 0) {
        json_t *tools = tools_list();
        rpc_send(resp, id, "result", tools ? json_pack("{s:o}", "tools", tools) : NULL);
    } else if (strcmp(m, "tools/call") == 0) {
        tools_call(ctx, resp, id, params);
    } else {
        char msg[160];
        snprintf(msg, sizeof(msg), "Method not found: %.*s", mem_api__utf8_prefix(m, 100), m);
        rpc_error(resp, id, -32601, msg);
    }
out:
    json_decref(root);
}
