/* config.c - settings: defaults < config file < environment < command-line flags (SPEC 7)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. One table lists every setting once: its long flag (which is also its config-file
 * key), its environment variable, the default shown by --help, and a setter that parses
 * and range-checks a string. The four sources are applied in order of precedence, lowest
 * first, through the same setters, so a value means the same thing wherever it comes from
 * and a later source simply overwrites. Every failure is MEM_EINVAL with one line that
 * names the flag and the variable.
 */
#include "config/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/embed.h"
#include "core/timefmt.h"
#include "core/vec.h"

#ifndef MNEMOD_VERSION
#define MNEMOD_VERSION "0.0.0-unknown"
#endif

#define WHY_LEN 160

typedef int (*setter_fn)(mem_cfg_t *cfg, const char *val, char *why, size_t why_len);

typedef struct opt {
    const char *flag; /* long flag and config-file key; NULL = environment only */
    const char *env;  /* NULL = no environment variable */
    const char *arg;  /* placeholder in --help */
    const char *def;  /* default as --help shows it */
    const char *help;
    setter_fn set;
    int is_bool; /* "--flag" alone means true */
} opt_t;

/* ---- value helpers ------------------------------------------------------------------ */

/* `"value"` for messages: at most 48 bytes of it, control bytes shown as '?'. */
static void quote(char *dst, size_t n, const char *val)
{
    size_t len = strlen(val), o = 0;
    if (n < 8) return;
    dst[o++] = '"';
    for (size_t i = 0; i < len && i < 48 && o + 6 < n; i++)
        dst[o++] = (unsigned char)val[i] < 0x20 || val[i] == 0x7f ? '?' : val[i];
    if (len > 48 && o + 5 < n) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o++] = '"';
    dst[o] = '\0';
}

static int why_set(char *why, size_t n, const char *val, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* why = "\"val\" " + formatted reason; returns -1 for `return why_set(...)`. */
static int why_set(char *why, size_t n, const char *val, const char *fmt, ...)
{
    char q[64] = "";
    size_t used = 0;
    if (val) {
        quote(q, sizeof(q), val);
        used = (size_t)snprintf(why, n, "%s ", q);
        if (used >= n) used = n - 1;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + used, n - used, fmt, ap);
    va_end(ap);
    return -1;
}

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

/* A plain decimal: [+-]digits[.digits][e[+-]digits] or [+-].digits...; no hex, no inf/nan. */
static int parse_double(const char *val, double *out)
{
    const char *p = val;
    int digits = 0;
    if (*p == '+' || *p == '-') p++;
    while (isdigit((unsigned char)*p))
        p++, digits++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            digits++;
    if (!digits) return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return -1;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p) return -1;
    errno = 0;
    double v = strtod(val, NULL);
    if (errno == ERANGE || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* Digits only, value in [lo, hi]. */
static int parse_uint(const char *val, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out)
{
    unsigned long long v = 0;
    if (!*val) return -1;
    for (const char *p = val; *p; p++) {
        if (!isdigit((unsigned char)*p)) return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (ULLONG_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int range_uint(const char *val, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out, char *why, size_t n)
{
    if (parse_uint(val, lo, hi, out) == 0) return 0;
    if (parse_uint(val, 0, ULLONG_MAX, out) != 0)
        return why_set(why, n, val, "is not a positive integer");
    return why_set(why, n, val, "is outside %llu..%llu", lo, hi);
}

static int range_double(const char *val, double lo, double hi, double *out, char *why, size_t n)
{
    double v;
    if (parse_double(val, &v) != 0) return why_set(why, n, val, "is not a number");
    if (v < lo || v > hi) return why_set(why, n, val, "is outside [%g, %g]", lo, hi);
    *out = v;
    return 0;
}

static int duration(const char *val, double bare_unit_s, int positive, double *out, char *why,
                    size_t n)
{
    mem_err_t e = {0};
    double v;
    if (mem_time_parse_duration_z(val, bare_unit_s, NULL, &v, &e) != MEM_OK)
        return why_set(why, n, val, "is not a duration: %s", e.msg);
    if (positive && v <= 0) return why_set(why, n, val, "must be a duration greater than 0");
    *out = v;
    return 0;
}

static int size_value(const char *val, int nonzero, size_t *out, char *why, size_t n)
{
    mem_err_t e = {0};
    size_t v;
    if (mem_time_parse_size_z(val, NULL, &v, &e) != MEM_OK)
        return why_set(why, n, val, "is not a size: %s", e.msg);
    if (nonzero && v == 0) return why_set(why, n, val, "must be a size greater than 0");
    *out = v;
    return 0;
}

static int bool_word(const char *val, bool *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (ieq(val, yes[i])) {
            *out = true;
            return 0;
        }
        if (ieq(val, no[i])) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

/* ---- setters -------------------------------------------------------------------------- */

/* The setters that only parse one value into one field, by kind: an integer in [lo, hi], a
 * number in [lo, hi], a duration (a bare number counts in bare_unit_s seconds; positive: 0
 * is refused), a size (nonzero: 0 is refused). */
#define SET_UINT(name, field, lo, hi, type)                                                        \
    static int name(mem_cfg_t *cfg, const char *val, char *why, size_t n)                          \
    {                                                                                              \
        unsigned long long v;                                                                      \
        if (range_uint(val, lo, hi, &v, why, n) != 0) return -1;                                   \
        cfg->field = (type)v;                                                                      \
        return 0;                                                                                  \
    }
#define SET_DOUBLE(name, field, lo, hi)                                                            \
    static int name(mem_cfg_t *cfg, const char *val, char *why, size_t n)                          \
    {                                                                                              \
        return range_double(val, lo, hi, &cfg->field, why, n);                                     \
    }
#define SET_DURATION(name, field, bare_unit_s, positive)                                           \
    static int name(mem_cfg_t *cfg, const char *val, char *why, size_t n)                          \
    {                                                                                              \
        return duration(val, bare_unit_s, positive, &cfg->field, why, n);                          \
    }
#define SET_SIZE(name, field, nonzero)                                                             \
    static int name(mem_cfg_t *cfg, const char *val, char *why, size_t n)                          \
    {                                                                                              \
        return size_value(val, nonzero, &cfg->field, why, n);                                      \
    }

static int set_listen(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    const char *host, *port;
    size_t host_len;
    if (val[0] == '[') {
        const char *close = strchr(val, ']');
        if (!close || close == val + 1 || close[1] != ':')
            return why_set(why, n, val, "is not [IPv6]:port");
        host = val + 1;
        host_len = (size_t)(close - host);
        port = close + 2;
    } else {
        const char *colon = strrchr(val, ':');
        if (!colon) return why_set(why, n, val, "is not host:port, [IPv6]:port or :port");
        host = val;
        host_len = (size_t)(colon - val);
        port = colon + 1;
    }
    for (size_t i = 0; i < host_len; i++)
        if (isspace((unsigned char)host[i]) || iscntrl((unsigned char)host[i]) || host[i] == '[' ||
            host[i] == ']' || host[i] == '/')
            return why_set(why, n, val, "has an invalid host");
    if (val[0] != '[' && memchr(host, ':', host_len))
        return why_set(why, n, val, "has an IPv6 address without brackets (write [::1]:6636)");
    unsigned long long p;
    if (parse_uint(port, 0, 65535, &p) != 0)
        return why_set(why, n, val, "has no valid port (0..65535)");
    if (host_len >= sizeof(cfg->listen_host))
        return why_set(why, n, val, "has a host longer than %zu bytes",
                       sizeof(cfg->listen_host) - 1);
    if (host_len == 0) {
        strcpy(cfg->listen_host, "0.0.0.0");
    } else {
        memcpy(cfg->listen_host, host, host_len);
        cfg->listen_host[host_len] = '\0';
    }
    /* the listener binds an address, never a looked-up name (no DNS at start-up) */
    unsigned char addr[sizeof(struct in6_addr)];
    if (strcmp(cfg->listen_host, "localhost") != 0 &&
        inet_pton(AF_INET, cfg->listen_host, addr) != 1 &&
        inet_pton(AF_INET6, cfg->listen_host, addr) != 1)
        return why_set(why, n, val,
                       "has a host that is not an IP address or localhost (e.g. 127.0.0.1:6636, "
                       "[::1]:6636, 0.0.0.0:6636)");
    cfg->listen_port = (int)p;
    return 0;
}

static int set_path(char *dst, size_t cap, const char *val, char *why, size_t n)
{
    if (!*val) return why_set(why, n, NULL, "empty path");
    if (strlen(val) >= cap) return why_set(why, n, NULL, "path longer than %zu bytes", cap - 1);
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

static int set_data(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    return set_path(cfg->data_path, sizeof(cfg->data_path), val, why, n);
}

static int set_config(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    return set_path(cfg->config_path, sizeof(cfg->config_path), val, why, n);
}

SET_DURATION(set_half_life, decay.half_life_s, 86400.0, 0)
SET_DURATION(set_decay_offset, decay.offset_s, 1.0, 0)
SET_DOUBLE(set_recency_bias, decay.recency_bias, 0.0, 1.0)
static int set_decay(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    static const char *const kinds =
        "is not a decay (exponential, linear, gaussian, none or weibull:SHAPE)";
    mem_decay_kind_t kind;
    if (strncmp(val, "weibull", 7) == 0) {
        double shape;
        if (val[7] != ':' || parse_double(val + 8, &shape) != 0)
            return why_set(why, n, val, "needs a shape: weibull:SHAPE, e.g. weibull:1.5");
        if (!(shape > 0.0 && shape <= 10.0))
            return why_set(why, n, val, "has a weibull shape outside (0, 10]");
        cfg->decay.kind = MEM_DECAY_WEIBULL;
        cfg->decay.shape = shape;
        return 0;
    }
    if (mem_decay_kind_parse(val, &kind) != 0 || kind == MEM_DECAY_WEIBULL)
        return why_set(why, n, val, "%s", kinds);
    cfg->decay.kind = kind;
    cfg->decay.shape = 1.0;
    return 0;
}

SET_UINT(set_embed_dim, embed_dim, 1, MEM_EMBED_DIM_MAX, size_t)
SET_DOUBLE(set_coherence_threshold, coherence_threshold, -1.0, 1.0)
SET_DOUBLE(set_coherence_weight, coherence_weight, 0.0, 1.0)
static int set_match(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    static const char *const names[] = {"auto", "vector", "text", "hybrid"};
    for (int i = 0; i < 4; i++)
        if (strcmp(val, names[i]) == 0) {
            cfg->match = (mem_cfg_match_t)i;
            return 0;
        }
    snprintf(why, n, "expected auto, vector, text or hybrid");
    return -1;
}

static int set_text_weight(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (strcmp(val, "auto") == 0) {
        cfg->text_weight = -1.0;
        return 0;
    }
    return range_double(val, 0.0, 1.0, &cfg->text_weight, why, n);
}

SET_DOUBLE(set_bm25_k1, lex.k1, 0.0, 10.0)
SET_DOUBLE(set_bm25_b, lex.b, 0.0, 1.0)
SET_DOUBLE(set_text_grams, lex.gram_weight, 0.0, 1.0)
/* A key ends up in an HTTP header (compared, or sent): printable ASCII without spaces,
 * shorter than cap. what names it in messages ("the API key"). */
static int check_key(const char *key, size_t len, size_t cap, const char *what, char *why, size_t n)
{
    if (len == 0) return why_set(why, n, NULL, "%s is empty", what);
    if (len >= cap) return why_set(why, n, NULL, "%s is longer than %zu bytes", what, cap - 1);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)key[i] <= 0x20 || (unsigned char)key[i] >= 0x7f)
            return why_set(why, n, NULL, "%s must be printable ASCII without spaces (byte %zu)",
                           what, i + 1);
    return 0;
}

static int set_key(char *dst, size_t cap, const char *what, const char *val, char *why, size_t n)
{
    size_t len = strlen(val);
    if (check_key(val, len, cap, what, why, n) != 0) return -1;
    memcpy(dst, val, len + 1);
    return 0;
}

/* Read a key from path into dst (cap bytes); the trailing newline is ignored. */
static int set_key_file(char *dst, size_t cap, const char *what, const char *val, char *why,
                        size_t n)
{
    char buf[1100];
    FILE *f = fopen(val, "rb");
    if (!f) return why_set(why, n, val, "cannot be read: %s", strerror(errno));
    size_t want = cap + 8 < sizeof(buf) ? cap + 8 : sizeof(buf);
    size_t len = fread(buf, 1, want - 1, f);
    int read_err = ferror(f), more = !read_err && fgetc(f) != EOF;
    fclose(f);
    if (read_err) return why_set(why, n, val, "cannot be read");
    if (more) return why_set(why, n, val, "is too long for %s", what);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        len--;
    buf[len] = '\0';
    if (check_key(buf, len, cap, what, why, n) != 0) return -1;
    memcpy(dst, buf, len + 1);
    return 0;
}

static int set_api_key(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    return set_key(cfg->api_key, sizeof(cfg->api_key), "the API key", val, why, n);
}

static int set_api_key_file(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    return set_key_file(cfg->api_key, sizeof(cfg->api_key), "the API key", val, why, n);
}

static int set_metrics_public(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (bool_word(val, &cfg->metrics_public) != 0)
        return why_set(why, n, val, "is not a boolean (1, 0, true, false, yes, no, on, off)");
    return 0;
}

SET_SIZE(set_max_body, max_body, 1)
SET_SIZE(set_max_import_body, max_import_body, 1)
SET_SIZE(set_max_body_memory, max_body_memory, 0)
SET_SIZE(set_inline_max_body, inline_max_body, 0)
SET_SIZE(set_text_cache, text_cache, 0)
SET_SIZE(set_inline_max_write_body, inline_max_write_body, 0)

static int set_connection_memory(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    size_t v;
    if (size_value(val, 1, &v, why, n) != 0) return -1;
    if (v < MEM_CFG_CONNECTION_MEMORY_MIN || v > MEM_CFG_CONNECTION_MEMORY_MAX)
        return why_set(why, n, val, "must be a size from 4KiB to 1MiB");
    cfg->connection_memory = v;
    return 0;
}
SET_UINT(set_max_batch, max_batch, 1, 1000000, size_t)
SET_UINT(set_threads, threads, 1, 1024, int)
SET_UINT(set_worker_spin_us, worker_spin_us, 0, 10000, size_t)
SET_UINT(set_loop_spin_us, loop_spin_us, 0, 10000, size_t)
SET_UINT(set_group_wait_us, group_wait_us, 0, 100000, size_t)
SET_UINT(set_max_connections, max_connections, 1, 1000000, size_t)
SET_UINT(set_max_connections_per_ip, max_connections_per_ip, 0, 1000000, size_t)
SET_UINT(set_max_queue, max_queue, 1, 10000000, size_t)
SET_UINT(set_max_namespaces, max_namespaces, 1, 10000000, size_t)
SET_UINT(set_scan_helpers, scan_helpers, 0, 64, size_t)
SET_UINT(set_scan_split_min, scan_split_min, 0, 1ull << 40, size_t)
SET_UINT(set_inline_scan_budget, inline_scan_budget, 0, 1ull << 40, size_t)

SET_DURATION(set_max_future_skew, max_future_skew_s, 1.0, 0)
/* libmicrohttpd counts the idle timeout in whole seconds, and 0 there means no timeout at
 * all: a fraction is rounded up here (250ms is 1s), so no value > 0 can switch it off. */
static int set_idle_timeout(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    double v;
    if (duration(val, 1.0, 1, &v, why, n) != 0) return -1;
    if (v > MEM_CFG_TIMEOUT_MAX_S) return why_set(why, n, val, "must be at most 7d");
    cfg->idle_timeout_s = ceil(v);
    return 0;
}

static int set_request_timeout(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    double v;
    if (duration(val, 1.0, 1, &v, why, n) != 0) return -1;
    if (v > MEM_CFG_TIMEOUT_MAX_S) return why_set(why, n, val, "must be at most 7d");
    cfg->request_timeout_s = v;
    return 0;
}
static int set_graph_wait(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    double v;
    int rc = duration(val, 1.0, 0, &v, why, n);
    if (rc) return rc;
    if (v > 3600) return why_set(why, n, val, "must be at most 1h");
    cfg->graph_wait_s = v;
    return 0;
}

/* val is one of two words: *is_first says which. */
static int one_of_two(const char *val, const char *first, const char *second, bool *is_first,
                      char *why, size_t n)
{
    if (strcmp(val, first) != 0 && strcmp(val, second) != 0)
        return why_set(why, n, val, "is not %s or %s", first, second);
    *is_first = strcmp(val, first) == 0;
    return 0;
}

static int set_sync(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    return one_of_two(val, "full", "normal", &cfg->sync_full, why, n);
}

static int set_log_level(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcmp(val, names[i]) == 0) {
            cfg->log_level = (mem_log_level_t)i;
            return 0;
        }
    if (strcmp(val, "warning") == 0) {
        cfg->log_level = MEM_LOG_WARN;
        return 0;
    }
    return why_set(why, n, val, "is not debug, info, warn or error");
}

static int set_log_format(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    bool text = true;
    if (one_of_two(val, "text", "json", &text, why, n) != 0) return -1;
    cfg->log_json = !text;
    return 0;
}

static int set_simd(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    mem_vec_isa_t isa;
    if (strcmp(val, "auto") == 0) {
        cfg->simd[0] = '\0';
        return 0;
    }
    if (mem_vec_isa_parse(val, &isa) != 0)
        return why_set(why, n, val, "is not auto, scalar, avx2, avx512 or neon");
    if (!mem_vec_ops_for(isa)) return why_set(why, n, val, "is not supported by this CPU or build");
    snprintf(cfg->simd, sizeof(cfg->simd), "%s", val);
    return 0;
}

/* ---- embedder (SPEC 6) ---- */

/* "builtin", or "openai:BASE_URL" with an http(s) URL that has a host and no query,
 * fragment, white space or control bytes; trailing slashes are dropped (the path
 * "/embeddings" is appended to it). */
static int set_embedder(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (strcmp(val, "builtin") == 0) {
        cfg->embedder = MEM_CFG_EMBEDDER_BUILTIN;
        cfg->embedder_url[0] = '\0';
        return 0;
    }
    if (strncmp(val, "openai:", 7) != 0)
        return why_set(why, n, val, "is not builtin or openai:BASE_URL");
    const char *url = val + 7;
    size_t len = strlen(url);
    size_t scheme = strncmp(url, "http://", 7) == 0 ? 7 : strncmp(url, "https://", 8) == 0 ? 8 : 0;
    if (!scheme)
        return why_set(why, n, val,
                       "needs an http:// or https:// base URL (openai:http://127.0.0.1:11434/v1)");
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f)
            return why_set(why, n, val, "has a URL with white space or non-ASCII bytes");
    if (strpbrk(url, "?#"))
        return why_set(why, n, val, "has a URL with a query or fragment (give the base URL)");
    while (len > scheme && url[len - 1] == '/')
        len--;
    if (len == scheme || url[scheme] == '/')
        return why_set(why, n, val, "has a URL without a host");
    if (len >= sizeof(cfg->embedder_url))
        return why_set(why, n, NULL, "has a URL longer than %zu bytes",
                       sizeof(cfg->embedder_url) - 1);
    memcpy(cfg->embedder_url, url, len);
    cfg->embedder_url[len] = '\0';
    cfg->embedder = MEM_CFG_EMBEDDER_OPENAI;
    return 0;
}

static int set_embedder_model(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    size_t len = strlen(val);
    if (len == 0) return why_set(why, n, NULL, "the model name is empty");
    if (len >= sizeof(cfg->embedder_model))
        return why_set(why, n, NULL, "the model name is longer than %zu bytes",
                       sizeof(cfg->embedder_model) - 1);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)val[i] <= 0x20 || (unsigned char)val[i] >= 0x7f)
            return why_set(why, n, val, "must be printable ASCII without spaces");
    memcpy(cfg->embedder_model, val, len + 1);
    return 0;
}

static int set_embedder_key(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    return set_key(cfg->embedder_key, sizeof(cfg->embedder_key), "the embedder key", val, why, n);
}

static int set_embedder_key_file(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    return set_key_file(cfg->embedder_key, sizeof(cfg->embedder_key), "the embedder key", val, why,
                        n);
}

static int set_embedder_timeout(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    double v;
    if (duration(val, 1.0, 1, &v, why, n) != 0) return -1;
    if (v > MEM_CFG_EMBEDDER_TIMEOUT_MAX)
        return why_set(why, n, val, "is longer than %gs", MEM_CFG_EMBEDDER_TIMEOUT_MAX);
    cfg->embedder_timeout_s = v;
    return 0;
}

SET_UINT(set_embedder_batch, embedder_batch, 1, MEM_CFG_EMBEDDER_BATCH_MAX, size_t)
/* ---- the edge (SPEC 9) ---- */

static void trim(const char **s, size_t *len);

/* Each comma-separated entry of val through check(entry, len): 0 or -1 with why set. */
static int each_entry(const char *val, int (*check)(const char *e, size_t n, char *why, size_t wn),
                      char *why, size_t n)
{
    const char *p = val;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        trim(&p, &len);
        if (len == 0) return why_set(why, n, val, "has an empty entry");
        if (check(p, len, why, n) != 0) return -1;
        if (!c) return 0;
        p = c + 1;
    }
}

static bool host_chars(const char *s, size_t n)
{
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '.' && c != '-' && c != '_' && c != ':' && c != '[' && c != ']')
            return false;
    }
    return true;
}

static int check_origin(const char *e, size_t len, char *why, size_t n)
{
    char q[300];
    snprintf(q, sizeof(q), "%.*s", (int)(len < 200 ? len : 200), e);
    if (len == 1 && e[0] == '*') return 0;
    size_t skip = len > 7 && strncasecmp(e, "http://", 7) == 0    ? 7
                  : len > 8 && strncasecmp(e, "https://", 8) == 0 ? 8
                                                                  : 0;
    if (!skip || !host_chars(e + skip, len - skip))
        return why_set(why, n, q,
                       "is not an origin (*, http://host[:port] or https://host[:port])");
    return 0;
}

/* name, name:port, [IPv6] or [IPv6]:port: the forms the Host check matches an entry as */
static bool host_entry_ok(const char *e, size_t len)
{
    if (!host_chars(e, len)) return false;
    const char *end = e + len, *rest;
    if (e[0] == '[') {
        const char *close = memchr(e, ']', len);
        if (!close || close == e + 1 || memchr(e + 1, '[', len - 1) ||
            memchr(close + 1, ']', (size_t)(end - close - 1)))
            return false;
        rest = close + 1;
    } else {
        if (memchr(e, '[', len) || memchr(e, ']', len)) return false;
        rest = memchr(e, ':', len);
        if (!rest) return true;
        if (rest == e) return false;
    }
    if (rest == end) return true;
    if (*rest != ':' || end - rest < 2 || end - rest > 6) return false;
    char digits[8];
    unsigned long long port;
    snprintf(digits, sizeof(digits), "%.*s", (int)(end - rest - 1), rest + 1);
    return parse_uint(digits, 0, 65535, &port) == 0;
}

static int check_host(const char *e, size_t len, char *why, size_t n)
{
    char q[300];
    snprintf(q, sizeof(q), "%.*s", (int)(len < 200 ? len : 200), e);
    if (!host_entry_ok(e, len))
        return why_set(why, n, q, "is not a host name (name, name:port, [IPv6] or [IPv6]:port)");
    return 0;
}

static int set_allowed_origins(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (strlen(val) >= sizeof(cfg->allowed_origins)) return why_set(why, n, NULL, "is too long");
    if (each_entry(val, check_origin, why, n) != 0) return -1;
    snprintf(cfg->allowed_origins, sizeof(cfg->allowed_origins), "%s", val);
    return 0;
}

static int set_allowed_hosts(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (strlen(val) >= sizeof(cfg->allowed_hosts)) return why_set(why, n, NULL, "is too long");
    if (each_entry(val, check_host, why, n) != 0) return -1;
    snprintf(cfg->allowed_hosts, sizeof(cfg->allowed_hosts), "%s", val);
    return 0;
}

static int set_keys_file(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (strlen(val) >= sizeof(cfg->keys_path)) return why_set(why, n, NULL, "is too long");
    snprintf(cfg->keys_path, sizeof(cfg->keys_path), "%s", val);
    return 0;
}

/* ---- cluster mode ---- */

static int set_nats_url(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (strlen(val) >= sizeof(cfg->nats_url)) return why_set(why, n, NULL, "is too long");
    for (const char *p = val; *p; p++)
        if (isspace((unsigned char)*p)) return why_set(why, n, val, "contains white space");
    if (strncmp(val, "nats://", 7) != 0 && strncmp(val, "tls://", 6) != 0)
        return why_set(why, n, val, "is not a comma-separated list of nats:// URLs");
    snprintf(cfg->nats_url, sizeof(cfg->nats_url), "%s", val);
    return 0;
}

static int set_node_id(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    size_t len = strlen(val);
    if (len < 1 || len >= sizeof(cfg->node_id))
        return why_set(why, n, val, "must be 1..63 characters");
    for (const char *p = val; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
            return why_set(why, n, val, "may only contain A-Z a-z 0-9 _ -");
    snprintf(cfg->node_id, sizeof(cfg->node_id), "%s", val);
    return 0;
}

SET_UINT(set_streams, streams, 1, 256, size_t)
SET_UINT(set_replicas, replicas, 1, 5, int)
static int set_advertise(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (strlen(val) >= sizeof(cfg->advertise)) return why_set(why, n, NULL, "is too long");
    const char *colon = strrchr(val, ':');
    if (*val && (!colon || colon == val || !colon[1]))
        return why_set(why, n, val, "is not host:port");
    snprintf(cfg->advertise, sizeof(cfg->advertise), "%s", val);
    return 0;
}

SET_UINT(set_ns_replicas, ns_replicas, 1, 7, size_t)
SET_UINT(set_max_lag, max_lag, 1, 1ull << 40, size_t)
SET_UINT(set_max_moves, max_moves, 1, 64, size_t)
SET_UINT(set_publishers, publishers, 1, MEM_CFG_PUBLISHERS_MAX, size_t)
SET_SIZE(set_max_relay_answer, max_relay_answer, 1)
SET_DURATION(set_cluster_write_timeout, cluster_write_timeout_s, 1.0, 1)
/* Relayed requests time out in whole milliseconds of an int: a fraction is rounded up (a
 * value under 1 ms was 0, which the relay took as its 30 s default) and 7d is the most. */
static int set_forward_timeout(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    double v;
    if (duration(val, 1.0, 1, &v, why, n) != 0) return -1;
    if (v > MEM_CFG_TIMEOUT_MAX_S) return why_set(why, n, val, "must be at most 7d");
    cfg->forward_timeout_s = ceil(v * 1000.0) / 1000.0;
    return 0;
}
SET_DURATION(set_node_dead_after, node_dead_after_s, 1.0, 1)
SET_DURATION(set_trim_interval, trim_interval_s, 1.0, 0)
SET_SIZE(set_trim_bytes, trim_bytes, 0)
static int set_rebalance(mem_cfg_t *cfg, const char *val, char *why, size_t n)
{
    if (bool_word(val, &cfg->rebalance) != 0)
        return why_set(why, n, val, "is not a boolean (1, 0, true, false, yes, no, on, off)");
    return 0;
}

/* ---- the table ---------------------------------------------------------------------------- */

#undef SET_UINT
#undef SET_DOUBLE
#undef SET_DURATION
#undef SET_SIZE

static const opt_t opts[] = {
    {"config", "MNEMOD_CONFIG", "FILE", "none", "read `key = value` settings from FILE", set_config,
     0},
    {"listen", "MNEMOD_LISTEN", "ADDR", "127.0.0.1:6636",
     "host:port, [IPv6]:port, or :port (all IPv4 interfaces); port 0 picks a free one", set_listen,
     0},
    {"data", "MNEMOD_DATA", "PATH", "./mnemod.db", "SQLite database file", set_data, 0},
    {"half-life", "MEMU_RECENCY_HALF_LIFE", "DUR", "0",
     "default recency half-life; a bare number is DAYS, or 90d, 36h...; 0 disables decay",
     set_half_life, 0},
    {"recency-bias", "MNEMOD_RECENCY_BIAS", "X", "1.0", "weight of decay in [0, 1]",
     set_recency_bias, 0},
    {"decay", "MNEMOD_DECAY", "KIND", "exponential",
     "exponential, linear, gaussian, none or weibull:SHAPE (shape in (0, 10])", set_decay, 0},
    {"decay-offset", "MNEMOD_DECAY_OFFSET", "DUR", "0",
     "grace period before decay starts (bare number = seconds)", set_decay_offset, 0},
    {"embed-dim", "MNEMOD_EMBED_DIM", "N", "256", "built-in embedder dimension, 1..4096",
     set_embed_dim, 0},
    {"embedder", "MNEMOD_EMBEDDER", "KIND", "builtin",
     "builtin (hashed lexical), or openai:BASE_URL (an OpenAI-compatible /embeddings API)",
     set_embedder, 0},
    {"embedder-model", "MNEMOD_EMBEDDER_MODEL", "NAME", "none",
     "model sent to the provider (required with openai:); recorded by each namespace",
     set_embedder_model, 0},
    {NULL, "MNEMOD_EMBEDDER_KEY", "KEY", "none",
     "the provider's key itself, sent as Authorization: Bearer KEY", set_embedder_key, 0},
    {"embedder-key-file", "MNEMOD_EMBEDDER_KEY_FILE", "FILE", "none",
     "read the provider's key from FILE (trailing newline ignored)", set_embedder_key_file, 0},
    {"embedder-timeout", "MNEMOD_EMBEDDER_TIMEOUT", "DUR", "30s",
     "budget of one request's provider calls, retries included (then 504)", set_embedder_timeout,
     0},
    {"embedder-batch", "MNEMOD_EMBEDDER_BATCH", "N", "64", "texts per provider call, 1..2048",
     set_embedder_batch, 0},
    {"match", "MNEMOD_MATCH", "MODE", "auto",
     "match of a text query: auto (hybrid for built-in and provider vectors, text for client "
     "vectors), vector, text or hybrid",
     set_match, 0},
    {"text-weight", "MNEMOD_TEXT_WEIGHT", "X", "auto",
     "hybrid's share of text relevance in [0, 1]; auto: 0.9 with built-in vectors, 0.5 with a "
     "provider's",
     set_text_weight, 0},
    {"bm25-k1", "MNEMOD_BM25_K1", "X", "0.9", "BM25 term-frequency saturation, in [0, 10]",
     set_bm25_k1, 0},
    {"bm25-b", "MNEMOD_BM25_B", "X", "0.4", "BM25 length normalisation, in [0, 1]", set_bm25_b, 0},
    {"text-grams", "MNEMOD_TEXT_GRAMS", "X", "0",
     "weight in [0, 1] of a character-trigram field in text relevance; 0 keeps none",
     set_text_grams, 0},
    {"coherence-threshold", "MNEMOD_COHERENCE_THRESHOLD", "X", "0.55",
     "cosine for a coherence edge, in [-1, 1]", set_coherence_threshold, 0},
    {"coherence-weight", "MNEMOD_COHERENCE_WEIGHT", "X", "0.0",
     "default weight of the coherence gate, in [0, 1]", set_coherence_weight, 0},
    {NULL, "MNEMOD_API_KEY", "KEY", "none",
     "API key itself (every /v1 call then needs Authorization: Bearer KEY)", set_api_key, 0},
    {"api-key-file", "MNEMOD_API_KEY_FILE", "FILE", "none",
     "read the API key from FILE (trailing newline ignored)", set_api_key_file, 0},
    {"keys-file", "MNEMOD_KEYS_FILE", "FILE", "none",
     "scoped keys: lines KEY ROLE NAMESPACE_GLOB (read, write, admin); re-read on SIGHUP",
     set_keys_file, 0},
    {"metrics-public", "MNEMOD_METRICS_PUBLIC", "BOOL", "0", "serve /metrics without an admin key",
     set_metrics_public, 1},
    {"allowed-origins", "MNEMOD_ALLOWED_ORIGINS", "LIST", "none",
     "browser origins allowed to call (comma-separated, * for all); others get 403",
     set_allowed_origins, 0},
    {"allowed-hosts", "MNEMOD_ALLOWED_HOSTS", "LIST", "none",
     "Host names accepted beside the listen address, localhost and loopback (name[:port],...)",
     set_allowed_hosts, 0},
    {"max-body", "MNEMOD_MAX_BODY", "SIZE", "16MiB", "largest request body (B, KiB, MiB, GiB)",
     set_max_body, 0},
    {"max-import-body", "MNEMOD_MAX_IMPORT_BODY", "SIZE", "4GiB",
     "largest POST .../import body (read as a stream, never buffered whole)", set_max_import_body,
     0},
    {"max-body-memory", "MNEMOD_MAX_BODY_MEMORY", "SIZE", "256MiB",
     "memory for request bodies being received or served, all connections together; a body "
     "that would go over it gets 503 (0: no bound)",
     set_max_body_memory, 0},
    {"max-batch", "MNEMOD_MAX_BATCH", "N", "1000", "most segments in one insert", set_max_batch, 0},
    {"max-future-skew", "MNEMOD_MAX_FUTURE_SKEW", "DUR", "300s",
     "how far ahead of the server clock a timestamp may be", set_max_future_skew, 0},
    {"threads", "MNEMOD_THREADS", "N", "max(4, CPUs)",
     "request worker threads (decode, handlers, scans, encode), 1..1024", set_threads, 0},
    {"worker-spin-us", "MNEMOD_WORKER_SPIN_US", "N", "50",
     "microseconds an idle worker watches for the next request before it sleeps, 0..10000",
     set_worker_spin_us, 0},
    {"loop-spin-us", "MNEMOD_LOOP_SPIN_US", "N", "200",
     "microseconds the event loop polls for the next request before it sleeps, 0..10000",
     set_loop_spin_us, 0},
    {"group-wait-us", "MNEMOD_GROUP_WAIT_US", "N", "250",
     "microseconds the writer waits to fill a group commit under concurrency, 0..100000; 0 "
     "never",
     set_group_wait_us, 0},
    {"sync", "MNEMOD_SYNC", "MODE", "full",
     "full, or normal (faster; the last commits may be lost on power loss)", set_sync, 0},
    {"max-connections", "MNEMOD_MAX_CONNECTIONS", "N", "1024", "concurrent HTTP connections",
     set_max_connections, 0},
    {"max-connections-per-ip", "MNEMOD_MAX_CONNECTIONS_PER_IP", "N", "0",
     "concurrent connections from one client address, more are closed at once (0: no limit)",
     set_max_connections_per_ip, 0},
    {"idle-timeout", "MNEMOD_IDLE_TIMEOUT", "DUR", "30s",
     "close a connection idle this long (whole seconds, rounded up; at most 7d)", set_idle_timeout,
     0},
    {"request-timeout", "MNEMOD_REQUEST_TIMEOUT", "DUR", "30s",
     "drop a request not received in full by then (at most 7d)", set_request_timeout, 0},
    {"graph-wait", "MNEMOD_GRAPH_WAIT", "DUR", "10s",
     "how long a read that needs the coherence graph waits for it to catch up (then 503)",
     set_graph_wait, 0},
    {"max-queue", "MNEMOD_MAX_QUEUE", "N", "1024",
     "requests in progress (on a worker, the writer, the embedder) before 503, 1..10000000",
     set_max_queue, 0},
    {"max-namespaces", "MNEMOD_MAX_NAMESPACES", "N", "10000", "most namespaces", set_max_namespaces,
     0},
    {"log-level", "MNEMOD_LOG_LEVEL", "LEVEL", "info", "debug, info, warn or error", set_log_level,
     0},
    {"log-format", "MNEMOD_LOG_FORMAT", "FMT", "text", "text (key=value lines) or json, on stderr",
     set_log_format, 0},
    {"simd", "MNEMOD_SIMD", "ISA", "auto", "force a scan kernel: scalar, avx2, avx512, neon",
     set_simd, 0},
    {"scan-helpers", "MNEMOD_SCAN_HELPERS", "N", "CPUs - 1",
     "threads a large retrieve is split across when idle, 0..64", set_scan_helpers, 0},
    {"scan-split-min", "MNEMOD_SCAN_SPLIT_MIN", "N", "1048576",
     "split a retrieve when visible rows x dim >= N; 0 never splits", set_scan_split_min, 0},
    {"inline-scan-budget", "MNEMOD_INLINE_SCAN_BUDGET", "N", "4194304",
     "answer a retrieve on the event loop when its scan reads <= N rows x (dim + 128); 0 never",
     set_inline_scan_budget, 0},
    {"inline-max-body", "MNEMOD_INLINE_MAX_BODY", "SIZE", "64KiB",
     "largest retrieve body answered on the event loop", set_inline_max_body, 0},
    {"text-cache", "MNEMOD_TEXT_CACHE", "SIZE", "64MiB",
     "memory for the texts of recent retrieve hits (answered without SQLite); 0 = none",
     set_text_cache, 0},
    {"inline-max-write-body", "MNEMOD_INLINE_MAX_WRITE_BODY", "SIZE", "16KiB",
     "largest insert body decoded on the event loop; 0 decodes every one on the pool",
     set_inline_max_write_body, 0},
    {"connection-memory", "MNEMOD_CONNECTION_MEMORY", "SIZE", "16KiB",
     "memory of a connection's HTTP buffers (4KiB..1MiB): a request head must fit in about "
     "this, minus 1KiB (431 beyond)",
     set_connection_memory, 0},
    {"nats-url", "MNEMOD_NATS_URL", "URLS", "none",
     "cluster mode: comma-separated NATS JetStream servers (nats://host:4222,...)", set_nats_url,
     0},
    {"node-id", "MNEMOD_NODE_ID", "ID", "none",
     "cluster mode: this node's unique id ([A-Za-z0-9_-], required)", set_node_id, 0},
    {"advertise", "MNEMOD_ADVERTISE", "HOST:PORT", "listen address",
     "cluster mode: the address other nodes forward requests to (0.0.0.0 and [::] of the listen "
     "address taken as 127.0.0.1 and [::1])",
     set_advertise, 0},
    {"namespace-replicas", "MNEMOD_NAMESPACE_REPLICAS", "N", "2",
     "cluster mode: nodes each namespace is placed on, 1..7", set_ns_replicas, 0},
    {"streams", "MNEMOD_STREAMS", "N", "4",
     "cluster mode: JetStream streams the namespaces hash onto (same on every node)", set_streams,
     0},
    {"stream-replicas", "MNEMOD_REPLICAS", "N", "3",
     "cluster mode: NATS servers holding each stream and bucket, 1..5", set_replicas, 0},
    {"cluster-write-timeout", "MNEMOD_CLUSTER_WRITE_TIMEOUT", "DUR", "15s",
     "cluster mode: a write not logged by then answers 503, one logged but not applied here 504",
     set_cluster_write_timeout, 0},
    {"forward-timeout", "MNEMOD_FORWARD_TIMEOUT", "DUR", "30s",
     "cluster mode: a request relayed to another node unanswered by then answers 503",
     set_forward_timeout, 0},
    {"node-dead-after", "MNEMOD_NODE_DEAD_AFTER", "DUR", "5m",
     "cluster mode: a node silent this long has its namespaces placed elsewhere",
     set_node_dead_after, 0},
    {"log-trim-interval", "MNEMOD_LOG_TRIM_INTERVAL", "DUR", "1h",
     "cluster mode: snapshot and trim the log this often (0 = by size only)", set_trim_interval, 0},
    {"log-trim-size", "MNEMOD_LOG_TRIM_SIZE", "SIZE", "1GiB",
     "cluster mode: snapshot and trim when a stream holds more (0 = by interval only)",
     set_trim_bytes, 0},
    {"max-lag", "MNEMOD_MAX_LAG", "N", "10000",
     "cluster mode: records behind the log before /healthz answers 503", set_max_lag, 0},
    {"rebalance", "MNEMOD_REBALANCE", "BOOL", "1",
     "cluster mode: move namespaces when nodes join, drain or die", set_rebalance, 0},
    {"max-moves", "MNEMOD_MAX_MOVES", "N", "2", "cluster mode: namespace moves running at once",
     set_max_moves, 0},
    {"cluster-publishers", "MNEMOD_CLUSTER_PUBLISHERS", "N", "4",
     "cluster mode: threads publishing write records, each waiting for one acknowledgement, "
     "1..64",
     set_publishers, 0},
    {"max-relay-answer", "MNEMOD_MAX_RELAY_ANSWER", "SIZE", "1GiB",
     "cluster mode: largest answer relayed from another node, held whole in memory (then 413)",
     set_max_relay_answer, 0},
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

static const opt_t *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (opts[i].flag && strlen(opts[i].flag) == len && memcmp(opts[i].flag, name, len) == 0)
            return &opts[i];
    return NULL;
}

/* ---- applying one value ------------------------------------------------------------------ */

static void trim(const char **s, size_t *len)
{
    while (*len > 0 && isspace((unsigned char)**s))
        (*s)++, (*len)--;
    while (*len > 0 && isspace((unsigned char)(*s)[*len - 1]))
        (*len)--;
}

/* where: "" for flags and the environment, "FILE:LINE: " for the config file. */
static int apply(mem_cfg_t *cfg, const opt_t *o, const char *val, size_t len, const char *where,
                 mem_err_t *err)
{
    char buf[MEM_CFG_VALUE_MAX], why[WHY_LEN] = "";
    trim(&val, &len);
    if (len >= sizeof(buf))
        return mem_err_field(err, MEM_EINVAL, o->flag ? o->flag : o->env,
                             "%sinvalid value for %s%s: longer than %zu bytes", where,
                             o->flag ? "--" : "", o->flag ? o->flag : o->env, sizeof(buf) - 1);
    memcpy(buf, val, len);
    buf[len] = '\0';
    if (o->set(cfg, buf, why, sizeof(why)) == 0) return MEM_OK;
    if (o->flag && o->env)
        return mem_err_field(err, MEM_EINVAL, o->flag, "%sinvalid value for --%s (%s): %s", where,
                             o->flag, o->env, why);
    if (o->flag)
        return mem_err_field(err, MEM_EINVAL, o->flag, "%sinvalid value for --%s: %s", where,
                             o->flag, why);
    return mem_err_field(err, MEM_EINVAL, o->env, "%sinvalid value for %s: %s", where, o->env, why);
}

/* ---- config file ------------------------------------------------------------------------ */

static int load_file(mem_cfg_t *cfg, const char *path, mem_err_t *err)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char where[96];
    int rc = MEM_OK;
    FILE *f = fopen(path, "rb");
    if (!f)
        return mem_err_field(err, MEM_EINVAL, "config", "cannot read config file %s: %s", path,
                             strerror(errno));
    char *text = malloc(MEM_CFG_FILE_MAX + 1);
    if (!text) {
        fclose(f);
        return mem_err_set(err, MEM_ENOMEM, "out of memory reading config file %s", path);
    }
    size_t len = fread(text, 1, MEM_CFG_FILE_MAX + 1, f);
    if (ferror(f)) {
        rc = mem_err_field(err, MEM_EINVAL, "config", "cannot read config file %s", path);
        goto out;
    }
    if (len > MEM_CFG_FILE_MAX) {
        rc = mem_err_field(err, MEM_EINVAL, "config", "config file %s is larger than 1 MiB", path);
        goto out;
    }
    size_t pos = 0;
    for (int lineno = 1; pos < len; lineno++) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        snprintf(where, sizeof(where), "%.60s:%d: ", base, lineno);
        if (memchr(line, '\0', ll)) {
            rc = mem_err_field(err, MEM_EINVAL, "config", "%sNUL byte in config file", where);
            goto out;
        }
        trim(&line, &ll);
        if (ll == 0 || line[0] == '#') continue;
        const char *eq = memchr(line, '=', ll);
        if (!eq) {
            rc = mem_err_field(err, MEM_EINVAL, "config", "%sexpected key = value", where);
            goto out;
        }
        const char *key = line, *val = eq + 1;
        size_t kl = (size_t)(eq - line), vl = ll - kl - 1;
        trim(&key, &kl);
        trim(&val, &vl);
        /* An inline comment starts at a '#' preceded by whitespace, outside quotes. */
        if (vl > 0 && val[0] != '"' && val[0] != '\'')
            for (size_t i = 1; i < vl; i++)
                if (val[i] == '#' && isspace((unsigned char)val[i - 1])) {
                    vl = i;
                    trim(&val, &vl);
                    break;
                }
        if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
            val++;
            vl -= 2;
        }
        const opt_t *o = find_flag(key, kl);
        if (!o || (kl == 6 && memcmp(key, "config", 6) == 0)) {
            char k[64];
            snprintf(k, sizeof(k), "%.*s", (int)(kl < 48 ? kl : 48), key);
            rc = mem_err_field(err, MEM_EINVAL, "config",
                               o ? "%s\"%s\" cannot be set inside a config file"
                                 : "%sunknown key \"%s\" (keys are the long flag names, see "
                                   "mnemod --help)",
                               where, k);
            goto out;
        }
        if (vl == 0) {
            rc = mem_err_field(err, MEM_EINVAL, o->flag, "%sempty value for %s", where, o->flag);
            goto out;
        }
        if ((rc = apply(cfg, o, val, vl, where, err)) != MEM_OK) goto out;
    }
out:
    free(text);
    fclose(f);
    return rc;
}

/* ---- environment -------------------------------------------------------------------------- */

static const char *env_get(char *const *env, const char *name)
{
    size_t n = strlen(name);
    if (!env) return NULL;
    for (char *const *e = env; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

static int check_env_names(char *const *env, mem_err_t *err)
{
    if (!env) return MEM_OK;
    for (char *const *e = env; *e; e++) {
        if (strncmp(*e, "MNEMOD_", 7) != 0) continue;
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
        /* The client commands' settings (cli/) live in the same shell as the server's. */
        static const char *const client_env[] = {"MNEMOD_URL", "MNEMOD_NAMESPACE",
                                                 "MNEMOD_RETRIES"};
        int known = 0;
        for (size_t i = 0; i < sizeof(client_env) / sizeof(client_env[0]) && !known; i++)
            known = strlen(client_env[i]) == n && memcmp(client_env[i], *e, n) == 0;
        for (size_t i = 0; i < N_OPTS && !known; i++)
            known = opts[i].env && strlen(opts[i].env) == n && memcmp(opts[i].env, *e, n) == 0;
        if (!known)
            return mem_err_set(err, MEM_EINVAL,
                               "unknown environment variable %.*s (see mnemod --help)",
                               (int)(n < 64 ? n : 64), *e);
    }
    return MEM_OK;
}

/* ---- command line ------------------------------------------------------------------------ */

/* Decode argv[*i] (and maybe argv[*i + 1]) into an option and its value; advances *i.
 * Returns MEM_OK, or MEM_EINVAL for an unknown flag, a missing value or a stray word. */
static int next_flag(int argc, char *const *argv, int *i, const opt_t **o_out, const char **val_out,
                     mem_err_t *err)
{
    const char *arg = argv[*i];
    if (arg[0] == '-' && arg[1] != '-' && arg[1] != '\0')
        return mem_err_set(err, MEM_EINVAL, "unknown flag %.64s (see mnemod --help)", arg);
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
        char q[64];
        quote(q, sizeof(q), arg);
        return mem_err_set(err, MEM_EINVAL, "unexpected argument %s (see mnemod --help)", q);
    }
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t nl = eq ? (size_t)(eq - name) : strlen(name);
    const opt_t *o = find_flag(name, nl);
    if (!o)
        return mem_err_set(err, MEM_EINVAL, "unknown flag --%.*s (see mnemod --help)",
                           (int)(nl < 64 ? nl : 64), name);
    (*i)++;
    if (eq) {
        *val_out = eq + 1;
    } else if (o->is_bool) {
        bool ignored;
        if (*i < argc && bool_word(argv[*i], &ignored) == 0)
            *val_out = argv[(*i)++];
        else
            *val_out = "true";
    } else {
        if (*i >= argc || strncmp(argv[*i], "--", 2) == 0)
            return mem_err_field(err, MEM_EINVAL, o->flag,
                                 "missing value for --%s (use --%s VALUE or --%s=VALUE)", o->flag,
                                 o->flag, o->flag);
        *val_out = argv[(*i)++];
    }
    *o_out = o;
    return MEM_OK;
}

/* ---- public ------------------------------------------------------------------------------ */

void mem_cfg_defaults(mem_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    strcpy(cfg->listen_host, "127.0.0.1");
    cfg->listen_port = 6636;
    strcpy(cfg->data_path, "./mnemod.db");
    cfg->decay.kind = MEM_DECAY_EXPONENTIAL;
    cfg->decay.half_life_s = 0.0;
    cfg->decay.shape = 1.0;
    cfg->decay.offset_s = 0.0;
    cfg->decay.recency_bias = 1.0;
    cfg->embed_dim = MEM_EMBED_DIM_DEFAULT;
    cfg->coherence_threshold = 0.55;
    cfg->coherence_weight = 0.0;
    cfg->match = MEM_CFG_MATCH_AUTO;
    cfg->text_weight = -1.0;
    cfg->lex = MEM_LEXPARAMS_DEFAULTS;
    cfg->metrics_public = false;
    cfg->max_body = 16u << 20;
    cfg->max_import_body = (size_t)4 << 30;
    cfg->max_body_memory = (size_t)256 << 20;
    cfg->max_batch = 1000;
    cfg->max_future_skew_s = 300.0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->threads = ncpu > 4 ? (ncpu > 1024 ? 1024 : (int)ncpu) : 4;
    cfg->sync_full = true;
    cfg->max_connections = 1024;
    cfg->idle_timeout_s = 30.0;
    cfg->request_timeout_s = 30.0;
    cfg->graph_wait_s = 10.0;
    cfg->max_queue = 1024;
    cfg->max_namespaces = 10000;
    cfg->log_level = MEM_LOG_INFO;
    cfg->log_json = false;
    cfg->streams = 4;
    cfg->replicas = 3;
    cfg->ns_replicas = 2;
    cfg->cluster_write_timeout_s = 15.0;
    cfg->forward_timeout_s = 30.0;
    cfg->node_dead_after_s = 300.0;
    cfg->trim_interval_s = 3600.0;
    cfg->trim_bytes = (size_t)1 << 30;
    cfg->max_lag = 10000;
    cfg->rebalance = true;
    cfg->max_moves = 2;
    cfg->publishers = 4;
    cfg->max_relay_answer = (size_t)1 << 30;
    cfg->scan_helpers = ncpu > 1 ? (ncpu > 65 ? 64 : (size_t)ncpu - 1) : 0;
    cfg->scan_split_min = 1u << 20;
    cfg->worker_spin_us = 50;
    cfg->loop_spin_us = 200;
    cfg->group_wait_us = 250;
    cfg->inline_scan_budget = 4u << 20;
    cfg->inline_max_body = 64u << 10;
    cfg->text_cache = (size_t)64 << 20;
    cfg->inline_max_write_body = 16u << 10;
    cfg->connection_memory = 16u << 10;
    cfg->embedder = MEM_CFG_EMBEDDER_BUILTIN;
    cfg->embedder_timeout_s = 30.0;
    cfg->embedder_batch = 64;
}

size_t mem_cfg_advertise(const mem_cfg_t *cfg, char *buf, size_t len)
{
    if (cfg->advertise[0]) return (size_t)snprintf(buf, len, "%s", cfg->advertise);
    const char *host = cfg->listen_host[0] ? cfg->listen_host : "0.0.0.0";
    unsigned char a4[sizeof(struct in_addr)], a6[sizeof(struct in6_addr)];
    bool v6 = inet_pton(AF_INET6, host, a6) == 1;
    if (v6) {
        static const unsigned char any6[sizeof(struct in6_addr)] = {0};
        if (memcmp(a6, any6, sizeof(a6)) == 0) host = "::1";
    } else if (inet_pton(AF_INET, host, a4) == 1 && a4[0] == 0 && a4[1] == 0 && a4[2] == 0 &&
               a4[3] == 0) {
        host = "127.0.0.1";
    }
    return (size_t)snprintf(buf, len, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "",
                            cfg->listen_port);
}

size_t mem_cfg_help(char *buf, size_t len)
{
    size_t used = 0;
#define OUT(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(buf ? buf + (used < len ? used : len) : NULL,                            \
                          buf && used < len ? len - used : 0, __VA_ARGS__);                        \
        used += w_ > 0 ? (size_t)w_ : 0;                                                           \
    } while (0)
    OUT("Usage: mnemod [--config FILE] [--FLAG VALUE | --FLAG=VALUE]...\n"
        "       mnemod backup [--data FILE] OUT      online copy of a (running) database\n"
        "       mnemod restore [--data FILE] IN      replace a stopped server's database\n"
        "       mnemod --check [--data FILE]         full integrity check (exit 0 ok, 1 problems)\n"
        "       mnemod ns|add|get|forget|search|list|export|import|compact ...\n"
        "                                            client of a running server (mnemod help)\n"
        "Agent-memory server with temporal decay, coherence gating and compaction.\n\n"
        "Precedence: flag > environment > config file (key = value, keys are the flag\n"
        "names) > default. Durations: seconds or 90d, 36h, 15m, 30s, 2w. Sizes: bytes or\n"
        "KiB, MiB, GiB (KB, MB, GB are powers of 1000).\n\n");
    for (size_t i = 0; i < N_OPTS; i++) {
        const opt_t *o = &opts[i];
        char lhs[64];
        if (o->flag)
            snprintf(lhs, sizeof(lhs), "--%s %s", o->flag, o->arg);
        else
            snprintf(lhs, sizeof(lhs), "(env only)");
        OUT("  %-26s %-27s default %s\n      %s\n", lhs, o->env ? o->env : "", o->def, o->help);
    }
    OUT("  --help, -h\n      print this help and exit\n");
    OUT("  --version, -V\n      print the version and exit\n");
#undef OUT
    return used;
}

void mem_cfg_describe_each(const mem_cfg_t *cfg,
                           void (*fn)(void *ud, const char *key, const char *value), void *ud)
{
    static const char *const levels[] = {"debug", "info", "warn", "error"};
    char v[4200];
#define PAIR(key, ...)                                                                             \
    do {                                                                                           \
        snprintf(v, sizeof(v), __VA_ARGS__);                                                       \
        fn(ud, key, v);                                                                            \
    } while (0)
    bool v6 = strchr(cfg->listen_host, ':') != NULL;
    PAIR("listen", "%s%s%s:%d", v6 ? "[" : "", cfg->listen_host, v6 ? "]" : "", cfg->listen_port);
    PAIR("data", "%s", cfg->data_path);
    PAIR("config", "%s", cfg->config_path[0] ? cfg->config_path : "none");
    PAIR("half_life_s", "%g", cfg->decay.half_life_s);
    if (cfg->decay.kind == MEM_DECAY_WEIBULL)
        PAIR("decay", "weibull:%g", cfg->decay.shape);
    else
        PAIR("decay", "%s", mem_decay_kind_name(cfg->decay.kind));
    PAIR("decay_offset_s", "%g", cfg->decay.offset_s);
    PAIR("recency_bias", "%g", cfg->decay.recency_bias);
    PAIR("embed_dim", "%zu", cfg->embed_dim);
    PAIR("coherence_threshold", "%g", cfg->coherence_threshold);
    PAIR("coherence_weight", "%g", cfg->coherence_weight);
    PAIR("auth", "%s", cfg->api_key[0] || cfg->keys_path[0] ? "on" : "off");
    PAIR("keys_file", "%s", cfg->keys_path[0] ? cfg->keys_path : "none");
    PAIR("allowed_origins", "%s", cfg->allowed_origins[0] ? cfg->allowed_origins : "none");
    PAIR("allowed_hosts", "%s", cfg->allowed_hosts[0] ? cfg->allowed_hosts : "none");
    PAIR("metrics_public", "%d", cfg->metrics_public ? 1 : 0);
    PAIR("max_body", "%zu", cfg->max_body);
    PAIR("max_body_memory", "%zu", cfg->max_body_memory);
    PAIR("max_batch", "%zu", cfg->max_batch);
    PAIR("max_future_skew_s", "%g", cfg->max_future_skew_s);
    PAIR("threads", "%d", cfg->threads);
    PAIR("worker_spin_us", "%zu", cfg->worker_spin_us);
    PAIR("loop_spin_us", "%zu", cfg->loop_spin_us);
    PAIR("group_wait_us", "%zu", cfg->group_wait_us);
    PAIR("sync", "%s", cfg->sync_full ? "full" : "normal");
    PAIR("max_connections", "%zu", cfg->max_connections);
    PAIR("max_connections_per_ip", "%zu", cfg->max_connections_per_ip);
    PAIR("idle_timeout_s", "%g", cfg->idle_timeout_s);
    PAIR("request_timeout_s", "%g", cfg->request_timeout_s);
    PAIR("graph_wait_s", "%g", cfg->graph_wait_s);
    PAIR("max_queue", "%zu", cfg->max_queue);
    PAIR("max_namespaces", "%zu", cfg->max_namespaces);
    PAIR("log_level", "%s", (unsigned)cfg->log_level < 4 ? levels[cfg->log_level] : "info");
    PAIR("log_format", "%s", cfg->log_json ? "json" : "text");
    PAIR("simd", "%s", cfg->simd[0] ? cfg->simd : "auto");
    PAIR("scan_helpers", "%zu", cfg->scan_helpers);
    PAIR("scan_split_min", "%zu", cfg->scan_split_min);
    PAIR("inline_scan_budget", "%zu", cfg->inline_scan_budget);
    PAIR("inline_max_body", "%zu", cfg->inline_max_body);
    PAIR("text_cache", "%zu", cfg->text_cache);
    PAIR("inline_max_write_body", "%zu", cfg->inline_max_write_body);
    PAIR("connection_memory", "%zu", cfg->connection_memory);
    /* The provider's key is never written, only whether one is set. */
    if (cfg->embedder == MEM_CFG_EMBEDDER_OPENAI) {
        PAIR("embedder", "openai:%s", cfg->embedder_url);
        PAIR("embedder_model", "%s", cfg->embedder_model);
        PAIR("embedder_key", "%s", cfg->embedder_key[0] ? "on" : "off");
        PAIR("embedder_timeout_s", "%g", cfg->embedder_timeout_s);
        PAIR("embedder_batch", "%zu", cfg->embedder_batch);
    } else {
        PAIR("embedder", "builtin");
    }
    if (cfg->nats_url[0]) { /* cluster mode only */
        PAIR("nats_url", "%s", cfg->nats_url);
        PAIR("node_id", "%s", cfg->node_id);
        mem_cfg_advertise(cfg, v, sizeof(v));
        fn(ud, "advertise", v);
        PAIR("namespace_replicas", "%zu", cfg->ns_replicas);
        PAIR("streams", "%zu", cfg->streams);
        PAIR("stream_replicas", "%d", cfg->replicas);
        PAIR("cluster_write_timeout_s", "%g", cfg->cluster_write_timeout_s);
        PAIR("forward_timeout_s", "%g", cfg->forward_timeout_s);
        PAIR("node_dead_after_s", "%g", cfg->node_dead_after_s);
        PAIR("log_trim_interval_s", "%g", cfg->trim_interval_s);
        PAIR("log_trim_size", "%zu", cfg->trim_bytes);
        PAIR("max_lag", "%zu", cfg->max_lag);
        PAIR("rebalance", "%d", cfg->rebalance ? 1 : 0);
        PAIR("max_moves", "%zu", cfg->max_moves);
        PAIR("cluster_publishers", "%zu", cfg->publishers);
        PAIR("max_relay_answer", "%zu", cfg->max_relay_answer);
    }
#undef PAIR
}

struct describe_buf {
    char *buf;
    size_t len, used;
};

static void describe_append(void *ud, const char *key, const char *value)
{
    struct describe_buf *d = ud;
    int n = snprintf(d->used < d->len ? d->buf + d->used : NULL,
                     d->used < d->len ? d->len - d->used : 0, "%s%s=%s", d->used ? " " : "", key,
                     value);
    if (n > 0) d->used += (size_t)n;
}

size_t mem_cfg_describe(const mem_cfg_t *cfg, char *buf, size_t len)
{
    struct describe_buf d = {buf, len, 0};
    if (buf && len) buf[0] = '\0';
    mem_cfg_describe_each(cfg, describe_append, &d);
    return d.used;
}

int mem_cfg_load(mem_cfg_t *cfg, int argc, char *const *argv, char *const *env, char *out_text,
                 size_t out_len, mem_err_t *err)
{
    const opt_t *o;
    const char *val;
    int rc;
    mem_cfg_defaults(cfg);
    if (out_text && out_len) out_text[0] = '\0';
    /* --help / --version win over everything else on the line, even over mistakes. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (out_text) mem_cfg_help(out_text, out_len);
            return MEM_CFG_EXIT_OK;
        }
        if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
            if (out_text) snprintf(out_text, out_len, "mnemod %s\n", MNEMOD_VERSION);
            return MEM_CFG_EXIT_OK;
        }
    }
    /* Pass 1: every flag must be known and complete before anything is read. */
    const char *config_path = NULL;
    for (int i = 1; i < argc;) {
        if ((rc = next_flag(argc, argv, &i, &o, &val, err)) != MEM_OK) return rc;
        if (o->set == set_config) config_path = val;
    }
    if ((rc = check_env_names(env, err)) != MEM_OK) return rc;
    if (env_get(env, "MNEMOD_API_KEY") && *env_get(env, "MNEMOD_API_KEY") &&
        env_get(env, "MNEMOD_API_KEY_FILE") && *env_get(env, "MNEMOD_API_KEY_FILE"))
        return mem_err_set(err, MEM_EINVAL,
                           "set only one of MNEMOD_API_KEY and MNEMOD_API_KEY_FILE");
    if (env_get(env, "MNEMOD_EMBEDDER_KEY") && *env_get(env, "MNEMOD_EMBEDDER_KEY") &&
        env_get(env, "MNEMOD_EMBEDDER_KEY_FILE") && *env_get(env, "MNEMOD_EMBEDDER_KEY_FILE"))
        return mem_err_set(err, MEM_EINVAL,
                           "set only one of MNEMOD_EMBEDDER_KEY and MNEMOD_EMBEDDER_KEY_FILE");
    if (!config_path) {
        config_path = env_get(env, "MNEMOD_CONFIG");
        if (config_path && !*config_path) config_path = NULL;
    }
    if (config_path) {
        if ((rc = apply(cfg, &opts[0], config_path, strlen(config_path), "", err)) != MEM_OK)
            return rc;
        if ((rc = load_file(cfg, cfg->config_path, err)) != MEM_OK) return rc;
    }
    /* Environment: an empty variable counts as unset. */
    for (size_t i = 0; i < N_OPTS; i++) {
        const char *v = opts[i].env ? env_get(env, opts[i].env) : NULL;
        if (v && *v && opts[i].set != set_config &&
            (rc = apply(cfg, &opts[i], v, strlen(v), "", err)) != MEM_OK)
            return rc;
    }
    /* Pass 2: flags, in order; a repeated flag's last value wins. */
    for (int i = 1; i < argc;) {
        if ((rc = next_flag(argc, argv, &i, &o, &val, err)) != MEM_OK) return rc;
        if (o->set != set_config && (rc = apply(cfg, o, val, strlen(val), "", err)) != MEM_OK)
            return rc;
    }
    if (cfg->nats_url[0] && !cfg->node_id[0])
        return mem_err_set(
            err, MEM_EINVAL,
            "--node-id (MNEMOD_NODE_ID) is required with --nats-url (MNEMOD_NATS_URL)");
    /* the other nodes reach this one at its advertised address, fixed before it listens */
    if (cfg->nats_url[0] && cfg->listen_port == 0 && !cfg->advertise[0])
        return mem_err_field(err, MEM_EINVAL, "advertise",
                             "--listen with port 0 needs --advertise (MNEMOD_ADVERTISE) with "
                             "--nats-url: the other nodes could not reach a port chosen at start");
    if (cfg->embedder == MEM_CFG_EMBEDDER_OPENAI && !cfg->embedder_model[0])
        return mem_err_field(err, MEM_EINVAL, "embedder-model",
                             "--embedder-model (MNEMOD_EMBEDDER_MODEL) is required with "
                             "--embedder openai:%.64s",
                             cfg->embedder_url);
    /* Provider settings without a provider are a mistake, not something to ignore. */
    if (cfg->embedder == MEM_CFG_EMBEDDER_BUILTIN && cfg->embedder_model[0])
        return mem_err_field(err, MEM_EINVAL, "embedder-model",
                             "--embedder-model is set but --embedder is builtin (set --embedder "
                             "openai:BASE_URL)");
    if (cfg->embedder == MEM_CFG_EMBEDDER_BUILTIN && cfg->embedder_key[0])
        return mem_err_field(err, MEM_EINVAL, "embedder-key-file",
                             "an embedder key (MNEMOD_EMBEDDER_KEY or --embedder-key-file) is set "
                             "but --embedder is builtin");
    return MEM_CFG_RUN;
}
