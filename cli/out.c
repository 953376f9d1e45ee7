/* out.c - what the CLI prints: errors, tables, times, sizes, the import progress
 * SPDX-License-Identifier: MIT
 *
 * Tables are for people: columns padded to their widest cell, the last (free text) column
 * cut to the terminal's width on a UTF-8 character boundary. --json output bypasses all
 * of this and prints the server's answer byte for byte.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_int.h"
#include "core/num.h"

int mem_cli__result(const mem_cli_resp_t *r, json_t **out)
{
    json_error_t jerr;
    json_t *j = r->len ? json_loadb(r->body, r->len, 0, &jerr) : NULL;
    if (r->status >= 200 && r->status < 300) {
        if (!j && r->len) {
            fprintf(stderr, "mnemod: the server's answer is not JSON: %s\n", jerr.text);
            return 1;
        }
        *out = j ? j : json_object();
        return 0;
    }
    const json_t *e = j ? json_object_get(j, "error") : NULL;
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *field = json_string_value(json_object_get(e, "field"));
    const json_t *line = json_object_get(e, "line");
    if (code) {
        fprintf(stderr, "mnemod: %ld %s: %s", r->status, code, msg ? msg : "");
        if (field && (!msg || !strstr(msg, field))) fprintf(stderr, " (field %s)", field);
        if (json_is_integer(line) && (!msg || strncmp(msg, "line ", 5) != 0))
            fprintf(stderr, " (line %lld)", (long long)json_integer_value(line));
        if (r->note[0]) fprintf(stderr, " (%s)", r->note);
        fputc('\n', stderr);
    } else {
        fprintf(stderr, "mnemod: HTTP %ld: %.200s%s%s%s\n", r->status, r->body ? r->body : "",
                r->note[0] ? " (" : "", r->note, r->note[0] ? ")" : "");
    }
    json_decref(j);
    return 1;
}

typedef struct dump_buf {
    char *p;
    size_t len, cap;
    bool failed;
} dump_buf_t;

static void dump_put(dump_buf_t *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void dump_value(dump_buf_t *b, const json_t *v)
{
    if (json_is_real(v)) {
        char num[MEM_NUM_FMT_MAX];
        size_t n = mem_num_fmt_f64(json_real_value(v), num);
        dump_put(b, num, n);
    } else if (json_is_array(v)) {
        dump_put(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) dump_put(b, ",", 1);
            dump_value(b, json_array_get(v, i));
        }
        dump_put(b, "]", 1);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *x;
        bool first = true;
        dump_put(b, "{", 1);
        json_object_foreach((json_t *)v, k, x)
        {
            if (!first) dump_put(b, ",", 1);
            first = false;
            json_t *key = json_string(k);
            char *ks = key ? json_dumps(key, JSON_ENCODE_ANY) : NULL;
            if (ks)
                dump_put(b, ks, strlen(ks));
            else
                b->failed = true;
            free(ks);
            json_decref(key);
            dump_put(b, ":", 1);
            dump_value(b, x);
        }
        dump_put(b, "}", 1);
    } else { /* strings, integers, true, false, null: jansson writes them exactly */
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        if (s)
            dump_put(b, s, strlen(s));
        else
            b->failed = true;
        free(s);
    }
}

char *mem_cli__dumps(const json_t *v)
{
    dump_buf_t b = {0};
    dump_value(&b, v);
    if (!b.failed && !b.p) dump_put(&b, "", 0);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

void mem_cli__print_raw(const mem_cli_resp_t *r)
{
    if (r->len) fwrite(r->body, 1, r->len, stdout);
    if (!r->len || r->body[r->len - 1] != '\n') fputc('\n', stdout);
}

void mem_cli__table_init(mem_cli_table_t *t, size_t n_cols, const char *const *head)
{
    memset(t, 0, sizeof(*t));
    t->n_cols = n_cols;
    for (size_t i = 0; i < n_cols; i++)
        t->head[i] = head[i];
}

int mem_cli__table_add(mem_cli_table_t *t, const char *const *cells)
{
    if ((t->n_rows + 1) * t->n_cols > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : t->n_cols * 32;
        char **c = realloc(t->cells, cap * sizeof(*c));
        if (!c) return -1;
        t->cells = c;
        t->cap = cap;
    }
    for (size_t i = 0; i < t->n_cols; i++) {
        char *s = strdup(cells[i] ? cells[i] : "-");
        if (!s) return -1;
        /* one row per line: control characters (newlines, tabs) print as spaces */
        for (char *p = s; *p; p++)
            if ((unsigned char)*p < 0x20) *p = ' ';
        t->cells[t->n_rows * t->n_cols + i] = s;
    }
    t->n_rows++;
    return 0;
}

/* Display width in characters (UTF-8 code points; continuation bytes do not count). */
static size_t u8_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Print s in at most max characters, cut on a code point boundary with "...". */
static void put_cut(FILE *f, const char *s, size_t max)
{
    size_t w = u8_width(s);
    if (w <= max) {
        fputs(s, f);
        return;
    }
    size_t keep = max > 3 ? max - 3 : 0, n = 0;
    const char *p = s;
    for (; *p; p++) {
        if (((unsigned char)*p & 0xC0) != 0x80) {
            if (n == keep) break;
            n++;
        }
    }
    fwrite(s, 1, (size_t)(p - s), f);
    fputs(max >= 3 ? "..." : "", f);
}

void mem_cli__table_print(const mem_cli_table_t *t, FILE *f, int width)
{
    size_t w[12] = {0}, used = 0;
    for (size_t i = 0; i < t->n_cols; i++) {
        w[i] = u8_width(t->head[i]);
        for (size_t r = 0; r < t->n_rows; r++) {
            size_t l = u8_width(t->cells[r * t->n_cols + i]);
            if (l > w[i]) w[i] = l;
        }
        if (i + 1 < t->n_cols) used += w[i] + 2;
    }
    size_t last = t->n_cols - 1;
    size_t room = width > 0 && (size_t)width > used + 10 ? (size_t)width - used : 10;
    if (width <= 0) room = w[last];
    for (size_t r = 0; r <= t->n_rows; r++) {
        for (size_t i = 0; i < t->n_cols; i++) {
            const char *s = r == 0 ? t->head[i] : t->cells[(r - 1) * t->n_cols + i];
            size_t pad = i < last ? w[i] - u8_width(s) : 0;
            if (i == last) {
                put_cut(f, s, room);
            } else if (t->right[i]) {
                fprintf(f, "%*s%s  ", (int)pad, "", s);
            } else {
                fprintf(f, "%s%*s  ", s, (int)pad, "");
            }
        }
        fputc('\n', f);
    }
}

void mem_cli__table_free(mem_cli_table_t *t)
{
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}

int mem_cli__term_width(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *cols = getenv("COLUMNS");
    int n = cols ? atoi(cols) : 0;
    return n > 0 ? n : 0; /* 0: not a terminal, do not cut */
}

void mem_cli__fmt_ts(const char *ts, char *buf, size_t cap)
{
    if (!ts) {
        snprintf(buf, cap, "-");
        return;
    }
    /* 2026-11-02T09:00:00.000Z -> 2026-11-02T09:00:00Z: to the second, still one word */
    if (strlen(ts) >= 19 && ts[10] == 'T')
        snprintf(buf, cap, "%.19sZ", ts);
    else
        snprintf(buf, cap, "%s", ts);
}

void mem_cli__fmt_age(double s, char *buf, size_t cap)
{
    if (s < 0) s = -s;
    if (s < 120)
        snprintf(buf, cap, "%.0fs", s);
    else if (s < 7200)
        snprintf(buf, cap, "%.0fm", s / 60);
    else if (s < 172800)
        snprintf(buf, cap, "%.1fh", s / 3600);
    else
        snprintf(buf, cap, "%.1fd", s / 86400);
}

void mem_cli__fmt_bytes(uint64_t n, char *buf, size_t cap)
{
    if (n < 1024)
        snprintf(buf, cap, "%llu B", (unsigned long long)n);
    else if (n < 1024 * 1024)
        snprintf(buf, cap, "%.1f KiB", (double)n / 1024);
    else if (n < 1024ull * 1024 * 1024)
        snprintf(buf, cap, "%.1f MiB", (double)n / (1024 * 1024));
    else
        snprintf(buf, cap, "%.2f GiB", (double)n / (1024.0 * 1024 * 1024));
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* On a terminal: one line redrawn in place (carriage return) at most 10 times a second,
 * with a bar when the input's size is known. Otherwise (a log, a pipe): a plain line at
 * most once a second, so a long import leaves a readable trail. */
void mem_cli__progress(mem_cli_upload_t *up, bool final)
{
    static double last;           /* one import per process */
    static uint64_t printed_sent; /* what the last plain line said */
    static bool printed;
    double now = mono_s();
    bool tty = up->ud && *(const bool *)up->ud;
    double every = tty ? 0.1 : 1.0;
    if (!final && now - last < every) return;
    /* a plain trail never repeats its last line (the final call after the last chunk) */
    if (!tty && printed && up->sent == printed_sent) return;
    last = now;
    printed = true;
    printed_sent = up->sent;
    char sent[32], total[32];
    mem_cli__fmt_bytes(up->sent, sent, sizeof(sent));
    mem_cli__fmt_bytes(up->total, total, sizeof(total));
    double pct = up->total ? 100.0 * (double)up->sent / (double)up->total : 0;
    if (pct > 100) pct = 100;
    if (tty) {
        fputs("\r\033[K", stderr);
        if (up->total) {
            enum { BAR = 30 };
            int fill = (int)(pct * BAR / 100);
            fputs("import [", stderr);
            for (int i = 0; i < BAR; i++)
                fputc(i < fill ? '#' : '.', stderr);
            fprintf(stderr, "] %3.0f%%  %llu lines  %s / %s", pct, (unsigned long long)up->lines,
                    sent, total);
        } else {
            fprintf(stderr, "import %llu lines  %s", (unsigned long long)up->lines, sent);
        }
        if (final) fputc('\n', stderr);
    } else if (up->total) {
        fprintf(stderr, "import: %llu lines, %s of %s sent (%.0f%%)\n",
                (unsigned long long)up->lines, sent, total, pct);
    } else {
        fprintf(stderr, "import: %llu lines, %s sent\n", (unsigned long long)up->lines, sent);
    }
    fflush(stderr);
}
