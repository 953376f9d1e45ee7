/* timefmt.h - RFC 3339 timestamps, Unix seconds, durations and sizes (SPEC sections 3, 7)
 * SPDX-License-Identifier: MIT
 *
 * Pure parsing and formatting: no clock, no locale, no allocation. Inputs are (ptr, len)
 * slices that need not end in NUL; the *_z variants take a NUL-terminated string.
 *
 * Every parser takes `field` (may be NULL): on error err->msg reads "FIELD: reason" and
 * err->field is FIELD; with field == NULL err->msg is the bare reason, so a caller such as
 * config/ can wrap it in its own sentence. Out-params are written only on success.
 *
 * Time range: 0000-01-01T00:00:00.000Z .. 9999-12-31T23:59:59.999Z (what RFC 3339 can
 * write). Anything outside is MEM_EINVAL.
 */
#ifndef MEM_CORE_TIMEFMT_H
#define MEM_CORE_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define MEM_TIME_MIN_MS (-62167219200000LL) /* 0000-01-01T00:00:00.000Z */
#define MEM_TIME_MAX_MS 253402300799999LL   /* 9999-12-31T23:59:59.999Z */
/* "YYYY-MM-DDTHH:MM:SS.mmmZ" plus the NUL. */
#define MEM_TIME_RFC3339_BUFSZ 25
/* Longest accepted duration: 10000 Julian years, in seconds. */
#define MEM_TIME_MAX_DURATION_S 315576000000.0

/* RFC 3339 date-time with a zone: "2026-07-31T09:30:00Z", "2026-07-31T11:30:00+02:00",
 * "2026-07-31t09:30:00.123456z". The 'T' and 'Z' may be lowercase; fractional seconds may
 * have any number of digits and are truncated to the millisecond (toward the past, also
 * before 1970). Offsets are -23:59..+23:59 ("-00:00" is accepted as UTC). Rejected: no
 * zone, a space instead of 'T', out-of-range fields (month 13, Feb 29 of a common year,
 * hour 24, second 60: leap seconds cannot be represented in Unix time), a sign or more
 * than four digits in the year, trailing bytes, a result outside the time range. */
int mem_time_parse_rfc3339(const char *s, size_t len, const char *field, int64_t *out_ms,
                           mem_err_t *err);
int mem_time_parse_rfc3339_z(const char *s, const char *field, int64_t *out_ms, mem_err_t *err);

/* Unix seconds (fractions allowed, negative = before 1970) to Unix ms. The value is first
 * rounded to the microsecond (a double cannot hold a decimal fraction such as .123
 * exactly), then truncated toward the past to the millisecond. NaN, infinities and values
 * outside the time range are MEM_EINVAL. */
int mem_time_from_unix_s(double secs, const char *field, int64_t *out_ms, mem_err_t *err);

/* Format Unix ms as "YYYY-MM-DDTHH:MM:SS.mmmZ" into buf (cap >= MEM_TIME_RFC3339_BUFSZ).
 * Returns the length written (24), or 0 when cap is too small or ms is outside the time
 * range (buf then holds "" if cap > 0). */
size_t mem_time_format_rfc3339(int64_t ms, char *buf, size_t cap);

/* Duration: a non-negative decimal number with an optional unit: "90d", "36h", "15m",
 * "30s", "2w", "1.5h", "250ms", "0". Spaces between the number and the unit are allowed.
 * A bare number is multiplied by bare_unit_s (1 for seconds, 86400 where SPEC says a bare
 * number means days). Units: ms, s, m, h, d, w (case-sensitive; m is minutes). Rejected:
 * empty, negative, exponents, unknown units, results above MEM_TIME_MAX_DURATION_S. */
int mem_time_parse_duration(const char *s, size_t len, double bare_unit_s, const char *field,
                            double *out_s, mem_err_t *err);
int mem_time_parse_duration_z(const char *s, double bare_unit_s, const char *field, double *out_s,
                              mem_err_t *err);
/* Check a duration given as a JSON number of seconds: finite, >= 0, <= the maximum. */
int mem_time_check_duration_s(double secs, const char *field, double *out_s, mem_err_t *err);

/* Size in bytes: a non-negative decimal number with an optional unit (case-insensitive,
 * optional spaces before it): B; K, KiB, M, MiB, G, GiB, T, TiB (powers of 1024);
 * KB, MB, GB, TB (powers of 1000, as the SI prefix says). "16MiB", "1.5 GiB", "4096".
 * A fractional result is truncated to whole bytes. Rejected: empty, negative, unknown
 * units, a bare fraction of a byte ("0.5"), values above SIZE_MAX. Zero is accepted here;
 * callers that need > 0 check it. */
int mem_time_parse_size(const char *s, size_t len, const char *field, size_t *out, mem_err_t *err);
int mem_time_parse_size_z(const char *s, const char *field, size_t *out, mem_err_t *err);

#endif
