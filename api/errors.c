/* errors.c - mem_err_t -> the error body and status of SPEC section 3
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "core/jstr.h"

/* Error text may quote client bytes (an id, a path) or be cut mid-character by the fixed
 * buffer; jansson refuses invalid UTF-8, which would turn a 400 into a 503. Replace every
 * byte that does not start a complete, valid sequence with '?'. */
json_t *mem_api__text(const char *s)
{
    char out[256];
    mem_jstr_sanitize(s, out, sizeof(out));
    return json_string(out);
}

int mem_api__utf8_prefix(const char *s, size_t max)
{
    return mem_api__utf8_prefix_n(s, strnlen(s, max + 1), max);
}

int mem_api__utf8_prefix_n(const char *s, size_t len, size_t max)
{
    size_t n = len;
    if (n <= max) return (int)n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) /* s[n] continues a character */
        n--;
    return (int)n;
}

json_t *mem_api__enc_error(const mem_err_t *err)
{
    json_t *e = json_object(), *root = json_object();
    if (!e || !root) goto fail;
    const char *msg = err->msg[0] ? err->msg : mem_err_wire(err->code);
    if (json_object_set_new(e, "code", json_string(mem_err_wire(err->code))) ||
        json_object_set_new(e, "message", mem_api__text(msg)))
        goto fail;
    if (err->field[0] && json_object_set_new(e, "field", mem_api__text(err->field))) goto fail;
    if (err->line && json_object_set_new(e, "line", json_integer((json_int_t)err->line))) goto fail;
    if (err->code == MEM_ENONMONO &&
        (json_object_set_new(e, "last_timestamp", mem_api__enc_ts(err->last_ms)) ||
         json_object_set_new(e, "timestamp", mem_api__enc_ts(err->given_ms))))
        goto fail;
    if (json_object_set_new(root, "error", e)) goto fail_root; /* set_new released e */
    return root;
fail:
    json_decref(e);
fail_root:
    json_decref(root);
    return NULL;
}

/* A static body for when even the error cannot be encoded (out of memory). */
static const char OOM_BODY[] =
    "{\"error\":{\"code\":\"unavailable\",\"message\":\"out of memory\"}}";

void mem_api_error(mem_api_resp_t *resp, const mem_err_t *err)
{
    mem_err_t fallback;
    if (!err || err->code == MEM_OK) {
        mem_err_clear(&fallback);
        fallback.code = MEM_ESTORAGE;
        snprintf(fallback.msg, sizeof(fallback.msg), "internal error");
        err = &fallback;
    }
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    resp->status = mem_err_http_status(err->code);
    resp->content_type = "application/json";
    if (err->code == MEM_EBUSY || err->code == MEM_ENOMEM)
        resp->retry_after_s = err->retry_after_s > 0 ? err->retry_after_s : 1;
    json_t *body = mem_api__enc_error(err);
    char *s = body ? mem_api__dump(body) : NULL;
    json_decref(body);
    if (!s) {
        s = malloc(sizeof(OOM_BODY));
        if (s) memcpy(s, OOM_BODY, sizeof(OOM_BODY));
        resp->status = 503;
        resp->retry_after_s = 1;
    }
    resp->body = s;
    resp->body_len = s ? strlen(s) : 0;
}

void mem_api__fail(mem_api_resp_t *resp, int code, const char *field, const char *fmt, ...)
{
    mem_err_t err;
    mem_err_clear(&err);
    err.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
    va_end(ap);
    if (field) snprintf(err.field, sizeof(err.field), "%s", field);
    mem_api_error(resp, &err);
}
