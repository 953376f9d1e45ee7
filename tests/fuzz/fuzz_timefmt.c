/* fuzz_timefmt.c - libFuzzer target: RFC 3339, Unix seconds, durations, sizes (core/timefmt.h)
 * SPDX-License-Identifier: MIT
 *
 * Byte 0 picks the parser; the rest is its input slice. Properties beyond "no crash":
 * every accepted timestamp is in range and formats to a string that parses back to the
 * same millisecond; every accepted duration is finite, >= 0 and <= the maximum; the slice
 * and NUL-terminated variants agree when the input has no NUL; out-params are untouched
 * on error.
 */
#include <math.h>

#include "api/api_int.h"
#include "core/timefmt.h"
#include "tests/fuzz/fuzz_common.h"

#define SENTINEL_MS INT64_C(0x5a5a5a5a5a5a5a5a)

static void roundtrip(int64_t ms)
{
    char buf[MEM_TIME_RFC3339_BUFSZ];
    size_t n = mem_time_format_rfc3339(ms, buf, sizeof(buf));
    FUZZ_CHECK(n == 24, "format of %lld gave %zu chars", (long long)ms, n);
    int64_t back = SENTINEL_MS;
    mem_err_t err;
    int rc = mem_time_parse_rfc3339(buf, n, "t", &back, &err);
    FUZZ_CHECK(rc == MEM_OK && back == ms, "%s does not parse back to %lld (rc %d, got %lld)", buf,
               (long long)ms, rc, (long long)back);
    char api[32];
    mem_api__ts_format(ms, api);
    FUZZ_CHECK(strcmp(api, buf) == 0, "api and core formats differ: %s vs %s", api, buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int which = data[0] % 6;
    const uint8_t *in = data + 1;
    size_t len = size - 1;
    char *s = fuzz_dup(in, len, 0);
    char *z = fuzz_dup(in, len, 1);
    int has_nul = memchr(in, 0, len) != NULL;
    mem_err_t err;
    mem_err_clear(&err);
    switch (which) {
    case 0: { /* RFC 3339 */
        int64_t ms = SENTINEL_MS, mz = SENTINEL_MS;
        int rc = mem_time_parse_rfc3339(s, len, (which & 1) ? NULL : "timestamp", &ms, &err);
        if (rc == MEM_OK) {
            FUZZ_CHECK(ms >= MEM_TIME_MIN_MS && ms <= MEM_TIME_MAX_MS, "out of range %lld",
                       (long long)ms);
            roundtrip(ms);
        } else {
            FUZZ_CHECK(ms == SENTINEL_MS, "out-param written on error");
            FUZZ_CHECK(err.code == rc && err.msg[0], "error without a message");
        }
        if (!has_nul) {
            int rz = mem_time_parse_rfc3339_z(z, "timestamp", &mz, NULL);
            FUZZ_CHECK(rz == rc && (rc != MEM_OK || mz == ms), "slice and _z disagree");
        }
        int64_t am = SENTINEL_MS;
        int ra = mem_api__rfc3339_parse(s, len, &am);
        FUZZ_CHECK((ra == 0) == (rc == MEM_OK) && (ra != 0 || am == ms),
                   "api and core RFC 3339 parsers disagree on %.*s", (int)len, s);
        break;
    }
    case 1: { /* Unix seconds from 8 raw bytes */
        double secs;
        if (len < sizeof(secs)) break;
        memcpy(&secs, in, sizeof(secs));
        int64_t ms = SENTINEL_MS;
        int rc = mem_time_from_unix_s(secs, "timestamp", &ms, &err);
        if (rc == MEM_OK) {
            FUZZ_CHECK(isfinite(secs), "non-finite accepted");
            FUZZ_CHECK(ms >= MEM_TIME_MIN_MS && ms <= MEM_TIME_MAX_MS, "out of range");
            FUZZ_CHECK(fabs((double)ms / 1000.0 - secs) <= 0.0011 + fabs(secs) * 1e-15,
                       "%.17g s became %lld ms", secs, (long long)ms);
            roundtrip(ms);
        } else {
            FUZZ_CHECK(ms == SENTINEL_MS, "out-param written on error");
        }
        break;
    }
    case 2:
    case 3: { /* durations, bare unit seconds or days */
        double bare = which == 2 ? 1.0 : 86400.0, d = -1.0, dz = -1.0;
        int rc = mem_time_parse_duration(s, len, bare, "half_life", &d, &err);
        if (rc == MEM_OK)
            FUZZ_CHECK(isfinite(d) && d >= 0.0 && d <= MEM_TIME_MAX_DURATION_S,
                       "duration %.*s gave %g", (int)len, s, d);
        else
            FUZZ_CHECK(d == -1.0, "out-param written on error");
        if (!has_nul) {
            int rz = mem_time_parse_duration_z(z, bare, NULL, &dz, NULL);
            FUZZ_CHECK(rz == rc && (rc != MEM_OK || dz == d), "slice and _z disagree");
        }
        double secs;
        if (len >= sizeof(secs)) {
            memcpy(&secs, in, sizeof(secs));
            double o = -1.0;
            rc = mem_time_check_duration_s(secs, "offset", &o, NULL);
            if (rc == MEM_OK)
                FUZZ_CHECK(isfinite(o) && o >= 0.0 && o <= MEM_TIME_MAX_DURATION_S, "check %g", o);
        }
        break;
    }
    case 4: { /* sizes */
        size_t n = 12345, nz = 12345;
        int rc = mem_time_parse_size(s, len, "max-body", &n, &err);
        if (rc != MEM_OK) FUZZ_CHECK(n == 12345, "out-param written on error");
        if (!has_nul) {
            int rz = mem_time_parse_size_z(z, "max-body", &nz, NULL);
            FUZZ_CHECK(rz == rc && (rc != MEM_OK || nz == n), "slice and _z disagree");
        }
        break;
    }
    default: { /* format any int64 */
        int64_t ms;
        if (len < sizeof(ms)) break;
        memcpy(&ms, in, sizeof(ms));
        char buf[MEM_TIME_RFC3339_BUFSZ];
        size_t cap = (size_t)(in[len - 1] % (MEM_TIME_RFC3339_BUFSZ + 1));
        size_t n = mem_time_format_rfc3339(ms, buf, cap);
        if (ms >= MEM_TIME_MIN_MS && ms <= MEM_TIME_MAX_MS && cap >= MEM_TIME_RFC3339_BUFSZ)
            roundtrip(ms);
        else
            FUZZ_CHECK(n == 0 && (cap == 0 || buf[0] == '\0'), "format out of range gave %zu", n);
        break;
    }
    }
    free(s);
    free(z);
    return 0;
}
