/* timefmt.c - RFC 3339 timestamps, Unix seconds, durations and sizes
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Calendar arithmetic uses Howard Hinnant's days_from_civil / civil_from_days
 * (proleptic Gregorian, exact for every year, no tables, no libc time functions, which are
 * locale-, zone- and range-dependent). Numbers are parsed by hand so that no locale can
 * change the decimal point and no exponent or hex form sneaks in.
 */
#include "core/timefmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define MS_PER_DAY 86400000LL

static int time_fail(mem_err_t *err, const char *field, const char *reason)
{
    if (field) return mem_err_field(err, MEM_EINVAL, field, "%s: %s", field, reason);
    return mem_err_set(err, MEM_EINVAL, "%s", reason);
}

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                   /* [0, 399] */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y_out, int *m_out, int *d_out)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y_out = y + (m <= 2);
    *m_out = m;
    *d_out = d;
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* Exactly n ASCII digits at s[*pos]; advances *pos. */
static bool take_digits(const char *s, size_t len, size_t *pos, int n, int *out)
{
    int v = 0;
    if (*pos + (size_t)n > len) return false;
    for (int i = 0; i < n; i++) {
        char c = s[*pos + (size_t)i];
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    *pos += (size_t)n;
    *out = v;
    return true;
}

static bool take_char(const char *s, size_t len, size_t *pos, char c)
{
    if (*pos < len && s[*pos] == c) {
        (*pos)++;
        return true;
    }
    return false;
}

int mem_time_parse_rfc3339(const char *s, size_t len, const char *field, int64_t *out_ms,
                           mem_err_t *err)
{
    static const char *const shape = "not an RFC 3339 timestamp (expected "
                                     "YYYY-MM-DDTHH:MM:SS[.frac]Z or +hh:mm)";
    size_t pos = 0;
    int year, mon, day, hour, min, sec, ms = 0;
    if (!s) return time_fail(err, field, shape);
    if (!take_digits(s, len, &pos, 4, &year) || !take_char(s, len, &pos, '-') ||
        !take_digits(s, len, &pos, 2, &mon) || !take_char(s, len, &pos, '-') ||
        !take_digits(s, len, &pos, 2, &day))
        return time_fail(err, field, shape);
    if (pos == len) return time_fail(err, field, "a date without a time of day (add THH:MM:SSZ)");
    if (!take_char(s, len, &pos, 'T') && !take_char(s, len, &pos, 't'))
        return time_fail(err, field, shape);
    if (!take_digits(s, len, &pos, 2, &hour) || !take_char(s, len, &pos, ':') ||
        !take_digits(s, len, &pos, 2, &min) || !take_char(s, len, &pos, ':') ||
        !take_digits(s, len, &pos, 2, &sec))
        return time_fail(err, field, shape);
    if (take_char(s, len, &pos, '.')) {
        size_t start = pos;
        while (pos < len && s[pos] >= '0' && s[pos] <= '9') {
            if (pos - start < 3) ms = ms * 10 + (s[pos] - '0');
            pos++;
        }
        if (pos == start)
            return time_fail(err, field, "no digits after the decimal point of the seconds");
        for (size_t n = pos - start; n < 3; n++)
            ms *= 10;
    }
    int offset_min = 0;
    if (pos == len) return time_fail(err, field, "no zone or offset (add Z for UTC, or +hh:mm)");
    if (s[pos] == 'Z' || s[pos] == 'z') {
        pos++;
    } else if (s[pos] == '+' || s[pos] == '-') {
        int sign = s[pos] == '-' ? -1 : 1, oh, om;
        pos++;
        if (!take_digits(s, len, &pos, 2, &oh) || !take_char(s, len, &pos, ':') ||
            !take_digits(s, len, &pos, 2, &om))
            return time_fail(err, field, "malformed offset (expected +hh:mm or -hh:mm)");
        if (oh > 23 || om > 59)
            return time_fail(err, field, "offset out of range (at most +-23:59)");
        offset_min = sign * (oh * 60 + om);
    } else {
        return time_fail(err, field, shape);
    }
    if (pos != len) return time_fail(err, field, "unexpected characters after the zone");
    if (mon < 1 || mon > 12) return time_fail(err, field, "month out of range (01-12)");
    if (day < 1 || day > days_in_month(year, mon))
        return time_fail(err, field, "day out of range for its month");
    if (hour > 23) return time_fail(err, field, "hour out of range (00-23)");
    if (min > 59) return time_fail(err, field, "minute out of range (00-59)");
    if (sec > 59)
        return time_fail(err, field,
                         "second out of range (00-59; leap seconds are not "
                         "representable)");
    int64_t t = days_from_civil(year, mon, day) * MS_PER_DAY +
                ((int64_t)hour * 3600 + min * 60 + sec) * 1000 + ms - (int64_t)offset_min * 60000;
    if (t < MEM_TIME_MIN_MS || t > MEM_TIME_MAX_MS)
        return time_fail(err, field, "out of range (years 0000-9999 in UTC)");
    *out_ms = t;
    return MEM_OK;
}

int mem_time_parse_rfc3339_z(const char *s, const char *field, int64_t *out_ms, mem_err_t *err)
{
    return mem_time_parse_rfc3339(s, s ? strlen(s) : 0, field, out_ms, err);
}

int mem_time_from_unix_s(double secs, const char *field, int64_t *out_ms, mem_err_t *err)
{
    if (!isfinite(secs)) return time_fail(err, field, "not a finite number of seconds");
    /* Range check before any conversion to an integer (which would be undefined). */
    if (secs < (double)MEM_TIME_MIN_MS / 1000.0 - 1.0 ||
        secs > (double)MEM_TIME_MAX_MS / 1000.0 + 1.0)
        return time_fail(err, field, "out of range (years 0000-9999 in UTC)");
    double us = nearbyint(secs * 1e6);
    double ms = floor(us / 1000.0);
    if (ms < (double)MEM_TIME_MIN_MS || ms > (double)MEM_TIME_MAX_MS)
        return time_fail(err, field, "out of range (years 0000-9999 in UTC)");
    *out_ms = (int64_t)ms;
    return MEM_OK;
}

/* v as exactly width decimal digits (v < 10^width), zero-padded; returns the end. */
static char *put_digits(char *o, unsigned v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return o + width;
}

size_t mem_time_format_rfc3339(int64_t ms, char *buf, size_t cap)
{
    if (cap > 0) buf[0] = '\0';
    if (cap < MEM_TIME_RFC3339_BUFSZ || ms < MEM_TIME_MIN_MS || ms > MEM_TIME_MAX_MS) return 0;
    int64_t days = ms / MS_PER_DAY, rem = ms % MS_PER_DAY;
    if (rem < 0) {
        rem += MS_PER_DAY;
        days -= 1;
    }
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int sod = (int)(rem / 1000), milli = (int)(rem % 1000);
    /* digit by digit: this runs for every timestamp of every answer, and snprintf's format
     * parsing was most of its cost; the range check above keeps y in 0..9999 */
    char *o = buf;
    o = put_digits(o, (unsigned)y, 4);
    *o++ = '-';
    o = put_digits(o, (unsigned)m, 2);
    *o++ = '-';
    o = put_digits(o, (unsigned)d, 2);
    *o++ = 'T';
    o = put_digits(o, (unsigned)(sod / 3600), 2);
    *o++ = ':';
    o = put_digits(o, (unsigned)(sod / 60 % 60), 2);
    *o++ = ':';
    o = put_digits(o, (unsigned)(sod % 60), 2);
    *o++ = '.';
    o = put_digits(o, (unsigned)milli, 3);
    *o++ = 'Z';
    *o = '\0';
    return (size_t)(o - buf);
}

/* A decimal number: digits, optionally '.' and at least one digit ("12", "1.5"; not ".5",
 * "5.", "1e3"). The integer part goes to ip (overflow flags values past UINT64_MAX), the
 * first 9 fraction digits to fnum / fden (later digits are ignored: truncation). */
typedef struct num {
    uint64_t ip;
    uint64_t fnum, fden;
    bool overflow;
} num_t;

static bool take_number(const char *s, size_t len, size_t *pos, num_t *n)
{
    size_t start = *pos;
    int ndig = 0;
    n->ip = 0;
    n->fnum = 0;
    n->fden = 1;
    n->overflow = false;
    while (*pos < len && s[*pos] >= '0' && s[*pos] <= '9') {
        uint64_t d = (uint64_t)(s[*pos] - '0');
        if (n->ip > UINT64_MAX / 10 || (n->ip == UINT64_MAX / 10 && d > UINT64_MAX % 10))
            n->overflow = true;
        else
            n->ip = n->ip * 10 + d;
        (*pos)++;
        ndig++;
    }
    if (ndig == 0) return false;
    if (*pos < len && s[*pos] == '.') {
        (*pos)++;
        size_t fstart = *pos;
        while (*pos < len && s[*pos] >= '0' && s[*pos] <= '9') {
            if (*pos - fstart < 9) {
                n->fnum = n->fnum * 10 + (uint64_t)(s[*pos] - '0');
                n->fden *= 10;
            }
            (*pos)++;
        }
        if (*pos == fstart) {
            *pos = start;
            return false;
        }
    }
    return true;
}

static void skip_spaces(const char *s, size_t len, size_t *pos)
{
    while (*pos < len && (s[*pos] == ' ' || s[*pos] == '\t'))
        (*pos)++;
}

static bool unit_eq(const char *s, size_t len, const char *unit, bool icase)
{
    size_t n = strlen(unit);
    if (len != n) return false;
    for (size_t i = 0; i < n; i++) {
        char a = s[i], b = unit[i];
        if (icase) {
            a = (a >= 'A' && a <= 'Z') ? (char)(a - 'A' + 'a') : a;
            b = (b >= 'A' && b <= 'Z') ? (char)(b - 'A' + 'a') : b;
        }
        if (a != b) return false;
    }
    return true;
}

int mem_time_parse_duration(const char *s, size_t len, double bare_unit_s, const char *field,
                            double *out_s, mem_err_t *err)
{
    static const struct {
        const char *name;
        double secs;
    } units[] = {{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 604800}};
    size_t pos = 0;
    num_t n;
    if (!s || len == 0)
        return time_fail(err, field, "empty duration (expected seconds or e.g. 90d, 36h, 15m)");
    if (s[0] == '-') return time_fail(err, field, "a duration cannot be negative");
    if (!take_number(s, len, &pos, &n))
        return time_fail(err, field,
                         "not a duration (expected a number with an optional unit ms, s, m, "
                         "h, d or w, e.g. 90d)");
    double unit = bare_unit_s;
    skip_spaces(s, len, &pos);
    if (pos < len) {
        size_t i;
        for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (unit_eq(s + pos, len - pos, units[i].name, false)) break;
        if (i == sizeof(units) / sizeof(units[0]))
            return time_fail(err, field, "unknown duration unit (use ms, s, m, h, d or w)");
        unit = units[i].secs;
    }
    double v = ((double)n.ip + (double)n.fnum / (double)n.fden) * unit;
    if (n.overflow || !isfinite(v) || v > MEM_TIME_MAX_DURATION_S)
        return time_fail(err, field, "duration too large (at most 10000 years)");
    *out_s = v;
    return MEM_OK;
}

int mem_time_parse_duration_z(const char *s, double bare_unit_s, const char *field, double *out_s,
                              mem_err_t *err)
{
    return mem_time_parse_duration(s, s ? strlen(s) : 0, bare_unit_s, field, out_s, err);
}

int mem_time_check_duration_s(double secs, const char *field, double *out_s, mem_err_t *err)
{
    if (!isfinite(secs)) return time_fail(err, field, "not a finite number of seconds");
    if (secs < 0) return time_fail(err, field, "a duration cannot be negative");
    if (secs > MEM_TIME_MAX_DURATION_S)
        return time_fail(err, field, "duration too large (at most 10000 years)");
    *out_s = secs;
    return MEM_OK;
}

int mem_time_parse_size(const char *s, size_t len, const char *field, size_t *out, mem_err_t *err)
{
    static const struct {
        const char *name;
        uint64_t mult;
    } units[] = {
        {"b", 1},
        {"k", 1ULL << 10},
        {"kib", 1ULL << 10},
        {"m", 1ULL << 20},
        {"mib", 1ULL << 20},
        {"g", 1ULL << 30},
        {"gib", 1ULL << 30},
        {"t", 1ULL << 40},
        {"tib", 1ULL << 40},
        {"kb", 1000ULL},
        {"mb", 1000000ULL},
        {"gb", 1000000000ULL},
        {"tb", 1000000000000ULL},
    };
    size_t pos = 0;
    num_t n;
    if (!s || len == 0) return time_fail(err, field, "empty size (expected bytes or e.g. 16MiB)");
    if (s[0] == '-') return time_fail(err, field, "a size cannot be negative");
    if (!take_number(s, len, &pos, &n))
        return time_fail(err, field,
                         "not a size (expected a number with an optional unit B, KiB, MiB, "
                         "GiB, TiB, KB, MB, GB or TB)");
    uint64_t mult = 1;
    skip_spaces(s, len, &pos);
    if (pos < len) {
        size_t i;
        for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (unit_eq(s + pos, len - pos, units[i].name, true)) break;
        if (i == sizeof(units) / sizeof(units[0]))
            return time_fail(err, field,
                             "unknown size unit (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
        mult = units[i].mult;
    } else if (n.fnum != 0) {
        return time_fail(err, field, "a size in bytes must be a whole number");
    }
    u128 total = (u128)n.ip * mult + (u128)n.fnum * mult / n.fden;
    if (n.overflow || total > (u128)SIZE_MAX) return time_fail(err, field, "size too large");
    *out = (size_t)total;
    return MEM_OK;
}

int mem_time_parse_size_z(const char *s, const char *field, size_t *out, mem_err_t *err)
{
    return mem_time_parse_size(s, s ? strlen(s) : 0, field, out, err);
}
