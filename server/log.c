/* log.c - one-line logs on stderr
 * SPDX-License-Identifier: MIT
 *
 * A line is written with one write(2) so lines from different threads never interleave.
 */
#include "server/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static mem_log_level_t min_level = MEM_LOG_INFO;
static bool as_json;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void mem_srv_log_setup(mem_log_level_t level, bool json)
{
    min_level = level;
    as_json = json;
}

bool mem_srv_log_enabled(mem_log_level_t level)
{
    return level >= min_level;
}

/* Turn `a=1 b="x y"` into `"a":"1","b":"x y"`. */
static size_t kv_to_json(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    const char *p = in;
    while (*p && o + 8 < cap) {
        while (*p == ' ')
            p++;
        if (!*p) break;
        const char *eq = strchr(p, '=');
        if (!eq) break;
        o += (size_t)snprintf(out + o, cap - o, ",\"%.*s\":\"", (int)(eq - p), p);
        p = eq + 1;
        bool quoted = *p == '"';
        if (quoted) p++;
        while (*p && o + 4 < cap && (quoted ? *p != '"' : *p != ' ')) {
            if (*p == '\\' || (*p == '"' && !quoted)) out[o++] = '\\';
            out[o++] = *p++;
        }
        if (quoted && *p == '"') p++;
        out[o++] = '"';
    }
    out[o < cap ? o : cap - 1] = '\0';
    return o;
}

void mem_srv_log(mem_log_level_t level, const char *event, const char *fmt, ...)
{
    if (level < min_level) return;
    char kv[1024], line[2200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kv, sizeof(kv), fmt, ap);
    va_end(ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[80];
    snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)(ts.tv_nsec / 1000000));
    int n;
    if (as_json) {
        char fields[1100];
        kv_to_json(kv, fields, sizeof(fields));
        n = snprintf(line, sizeof(line), "{\"ts\":\"%s\",\"level\":\"%s\",\"event\":\"%s\"%s}\n",
                     when, level_names[level], event, fields);
    } else {
        n = snprintf(line, sizeof(line), "ts=%s level=%s event=%s%s%s\n", when, level_names[level],
                     event, kv[0] ? " " : "", kv);
    }
    if (n > (int)sizeof(line) - 1) { /* truncated: keep the line a line */
        n = (int)sizeof(line) - 1;
        line[n - 1] = '\n';
    }
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}
