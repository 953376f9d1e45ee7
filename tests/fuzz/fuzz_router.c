/* fuzz_router.c - libFuzzer target: mem_api__route, the namespace rule, the media check
 * SPDX-License-Identifier: MIT
 *
 * Byte 0 picks the method; the rest (up to a NUL) is the raw path. An accepted route must
 * carry a namespace that passes the SPEC section 2 rule and an id of 1..128 bytes; the
 * namespace checker must agree with a plain reimplementation of the rule.
 */
#include <ctype.h>
#include <stdbool.h>

#include "api/api_int.h"
#include "tests/fuzz/fuzz_common.h"

static bool ns_rule(const char *s, size_t n)
{
    if (n < 1 || n > 64) return false;
    if (!(isalnum((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const METHODS[] = {"GET",  "POST",    "PUT", "DELETE", "PATCH",
                                          "HEAD", "OPTIONS", "get", ""};
    if (size < 1) return 0;
    const char *method = METHODS[data[0] % (sizeof(METHODS) / sizeof(METHODS[0]))];
    char *path = fuzz_dup(data + 1, size - 1, 1);
    mem_api__route_t r;
    memset(&r, 0xa5, sizeof(r));
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_api__route(method, path, &r, &err);
    FUZZ_CHECK(rc == MEM_OK || rc == MEM_ENOTFOUND || rc == MEM_EMETHOD || rc == MEM_EINVAL,
               "unexpected rc %d", rc);
    if (rc == MEM_OK) {
        FUZZ_CHECK(r.label && r.label[0], "route without label");
        bool has_ns = (r.kind >= MEM_API_R_NS && r.kind <= MEM_API_R_COMPACT) ||
                      r.kind == MEM_API_R_EXPORT || r.kind == MEM_API_R_IMPORT;
        if (r.kind == MEM_API_R_CONSOLE) /* a file name, never a path */
            FUZZ_CHECK(strnlen(r.id, sizeof(r.id)) < sizeof(r.id) && !strchr(r.id, '/'),
                       "console file name %s (path %s)", r.id, path);
        if (has_ns) {
            size_t n = strnlen(r.ns, sizeof(r.ns));
            FUZZ_CHECK(n < sizeof(r.ns), "ns not terminated");
            FUZZ_CHECK(ns_rule(r.ns, n), "accepted namespace %s breaks the rule (path %s)", r.ns,
                       path);
            FUZZ_CHECK(mem_api__check_ns(r.ns, n, NULL) == MEM_OK, "check_ns rejects routed ns");
        }
        if (r.kind == MEM_API_R_SEGMENT) {
            size_t n = strnlen(r.id, sizeof(r.id));
            FUZZ_CHECK(n >= 1 && n <= MEM_STORE_ID_MAX, "id length %zu", n);
        }
    } else {
        FUZZ_CHECK(err.code == rc && err.msg[0], "error %d without message", rc);
        if (rc == MEM_EMETHOD) FUZZ_CHECK(r.allow && r.allow[0], "405 without Allow");
    }
    /* the namespace rule on the raw bytes (length-delimited, may hold NULs) */
    char *raw = fuzz_dup(data + 1, size - 1, 0);
    int nrc = mem_api__check_ns(raw, size - 1, NULL);
    FUZZ_CHECK((nrc == MEM_OK) == ns_rule(raw, size - 1), "check_ns disagrees with the rule");
    (void)mem_api__json_media(path);
    free(raw);
    free(path);
    return 0;
}
