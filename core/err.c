/* err.c - error detail and the code -> status/wire-name map
 * SPDX-License-Identifier: MIT
 */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 4, 0))) static void
err_vset(mem_err_t *err, int code, const char *field, const char *fmt, va_list ap)
{
    /* the whole detail is reset, so an uninitialised mem_err_t is safe to fill */
    err->code = code;
    err->last_ms = err->given_ms = 0;
    err->retry_after_s = 0;
    err->line = 0;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
}

int mem_err_set(mem_err_t *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err_vset(err, code, NULL, fmt, ap);
        va_end(ap);
    }
    return code;
}

int mem_err_field(mem_err_t *err, int code, const char *field, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err_vset(err, code, field, fmt, ap);
        va_end(ap);
    }
    return code;
}

void mem_err_clear(mem_err_t *err)
{
    if (err) memset(err, 0, sizeof(*err));
}

int mem_err_http_status(int code)
{
    switch (code) {
#define MEM_ERR_STATUS(name, c, status, wire)                                                      \
    case c:                                                                                        \
        return status;
        MEM_ERR_MAP(MEM_ERR_STATUS)
#undef MEM_ERR_STATUS
    case MEM_OK:
        return 200;
    default:
        return 500;
    }
}

const char *mem_err_wire(int code)
{
    switch (code) {
#define MEM_ERR_WIRE(name, c, status, wire)                                                        \
    case c:                                                                                        \
        return wire;
        MEM_ERR_MAP(MEM_ERR_WIRE)
#undef MEM_ERR_WIRE
    default:
        return "internal";
    }
}

const char *mem_err_name(int code)
{
    switch (code) {
#define MEM_ERR_NAME(name, c, status, wire)                                                        \
    case c:                                                                                        \
        return #name;
        MEM_ERR_MAP(MEM_ERR_NAME)
#undef MEM_ERR_NAME
    case MEM_OK:
        return "OK";
    default:
        return "EUNKNOWN";
    }
}
