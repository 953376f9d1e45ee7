/* err.h - error codes and the error detail every fallible call may fill
 * SPDX-License-Identifier: MIT
 *
 * One X-macro maps each code to its HTTP status and SPEC wire name, so api/ turns any
 * error into its JSON body in one function. A mem_err_t has fixed buffers so reporting
 * an out-of-memory condition never allocates.
 */
#ifndef MEM_CORE_ERR_H
#define MEM_CORE_ERR_H

#include <stdint.h>

/* name, code, http status, wire code (SPEC section 3) */
#define MEM_ERR_MAP(X)                                                                             \
    X(EINVAL, -1, 400, "invalid_field")                                                            \
    X(EJSON, -2, 400, "invalid_json")                                                              \
    X(EDIM, -3, 400, "dimension_mismatch")                                                         \
    X(EFUTURE, -4, 400, "timestamp_in_future")                                                     \
    X(EUNKNOWNID, -5, 400, "unknown_id")                                                           \
    X(EUNAUTH, -6, 401, "unauthorized")                                                            \
    X(ENOTFOUND, -7, 404, "not_found")                                                             \
    X(EMETHOD, -8, 405, "method_not_allowed")                                                      \
    X(ENONMONO, -9, 409, "non_monotonic_timestamp")                                                \
    X(EDUPID, -10, 409, "duplicate_id")                                                            \
    X(EEXISTS, -11, 409, "namespace_exists")                                                       \
    X(ETOOBIG, -12, 413, "payload_too_large")                                                      \
    X(EMEDIA, -13, 415, "unsupported_media_type")                                                  \
    X(EBUSY, -14, 503, "unavailable")                                                              \
    X(ENOMEM, -15, 503, "unavailable")                                                             \
    X(EFULL, -16, 507, "insufficient_storage")                                                     \
    X(ESTORAGE, -17, 500, "internal")                                                              \
    X(ECORRUPT, -18, 500, "internal")                                                              \
    X(ELIMIT, -19, 400, "invalid_field")                                                           \
    X(EMISMATCH, -20, 409, "embedder_mismatch")                                                    \
    X(EEMBED, -21, 502, "embedder_error")                                                          \
    X(EEMBEDTIME, -22, 504, "embedder_timeout")                                                    \
    X(EBADREQ, -40, 400, "bad_request")                                                            \
    X(EFORBIDDEN, -41, 403, "forbidden")                                                           \
    X(EORIGIN, -42, 403, "forbidden_origin")                                                       \
    X(EHOST, -43, 403, "forbidden_host")                                                           \
    X(EEXPECT, -44, 417, "expectation_failed")                                                     \
    X(ENOTIMPL, -45, 501, "not_implemented")                                                       \
    X(ECONFLICT, -46, 409, "write_conflict")                                                       \
    X(EMISDIRECTED, -47, 421, "misdirected")                                                       \
    X(EWRITETIME, -48, 504, "write_timeout")

enum mem_err_code {
    MEM_OK = 0,
#define MEM_ERR_ENUM(name, code, status, wire) MEM_##name = (code),
    MEM_ERR_MAP(MEM_ERR_ENUM)
#undef MEM_ERR_ENUM
};

typedef struct mem_err {
    int code;          /* MEM_OK or a MEM_E* code */
    char msg[192];     /* lowercase, no final period, names the field */
    char field[64];    /* the request field at fault, "" when none */
    int64_t last_ms;   /* ENONMONO: the namespace's newest timestamp (Unix ms) */
    int64_t given_ms;  /* ENONMONO: the rejected timestamp (Unix ms) */
    int retry_after_s; /* EBUSY: seconds for the Retry-After header, 0 = unset */
    uint64_t line;     /* an import: the 1-based NDJSON line at fault, 0 = none */
} mem_err_t;

/* Record code and message in err (may be NULL) and return code. */
int mem_err_set(mem_err_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, also naming the field at fault. */
int mem_err_field(mem_err_t *err, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void mem_err_clear(mem_err_t *err);
int mem_err_http_status(int code);  /* 500 for unknown codes */
const char *mem_err_wire(int code); /* SPEC wire code, "internal" for unknown */
const char *mem_err_name(int code); /* "EINVAL", for logs */

#endif
