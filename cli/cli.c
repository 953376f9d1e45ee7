/* cli.c - the client commands: options, requests, and what each prints
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Each command declares the options it takes; one parser reads them (anywhere on
 * the line, --opt VALUE or --opt=VALUE, "--" ends them) and refuses any other, so a typo
 * fails like it does for the server's flags. Values are passed to the server as they were
 * written wherever the API already accepts that form (timestamps, durations): the server
 * is the one place that parses them, and its error names the field. Only a few forms made
 * for typing are translated here: a bare date for a timestamp, a bare number of days for
 * --half-life (as the server's own --half-life flag reads it), weibull:SHAPE for --decay.
 */
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_int.h"
#include "core/num.h"

#define DEFAULT_URL "http://127.0.0.1:6636"
#define DEFAULT_NS  "default"
#define MAX_OPTS    32
#define MAX_POS     8

typedef struct opt_val {
    const char *name;  /* without the dashes */
    const char *value; /* "" for a flag */
} opt_val_t;

typedef struct args {
    opt_val_t opt[MAX_OPTS];
    int n_opt;
    const char *pos[MAX_POS];
    int n_pos;
} args_t;

/* "name" takes a value, "name!" is a flag (no value). */
static const char *const global_opts[] = {"url",     "namespace", "json!", "api-key-file",
                                          "timeout", "retries",   NULL};

static const char usage[] =
    "Usage: mnemod COMMAND [OPTIONS]   (a client of a running server)\n"
    "  ns list                          namespaces with their stats\n"
    "  ns create NAME --dim N [--no-coherence]\n"
    "  ns stats [NAME]                  one namespace's stats\n"
    "  ns drop NAME --yes               delete a namespace and everything in it\n"
    "  add [TEXT | -] [--id ID] [--timestamp T] [--source S] [--metadata JSON]\n"
    "      [--supersedes ID,...] [--embedding JSON]      insert one segment (- or no TEXT:\n"
    "                                   read it from stdin)\n"
    "  get ID [--embedding]             one segment\n"
    "  forget ID                        delete one segment\n"
    "  patch ID [--metadata JSON] [--source S | --no-source]\n"
    "                                   change a segment's metadata (replaced; null\n"
    "                                   clears it) or source; prints the segment\n"
    "  search QUERY [-k N] [--half-life D] [--as-of T] [--match vector|text|hybrid]\n"
    "      [--decay KIND] [--recency-bias X] [--coherence-weight X] [--origin T]\n"
    "      [--offset D] [--since T] [--until T] [--source S] [--filter JSON]\n"
    "      [--min-score X] [--include-superseded] [--include-archived] [--embedding JSON]\n"
    "  list [--limit N] [--after CURSOR] [--all] [--since T] [--until T] [--source S]\n"
    "      [--include-superseded] [--include-archived]    segments in seq order\n"
    "  export [--force] [--quiet] > FILE  the namespace as NDJSON (--force: even to a\n"
    "                                   terminal; --quiet: no count on stderr)\n"
    "  import [--quiet] < FILE          bulk load NDJSON (all or nothing), with progress\n"
    "                                   on stderr (--quiet: none)\n"
    "  compact (--target N | --ratio X) [--policy P] [--dry-run] [--purge]\n"
    "Options of every command:\n"
    "  -n, --namespace NS   namespace (default $MNEMOD_NAMESPACE, else \"default\")\n"
    "  --url URL            server (default $MNEMOD_URL, else " DEFAULT_URL ")\n"
    "  --api-key-file FILE  read the key from FILE (default: $MNEMOD_API_KEY)\n"
    "  --json               print the server's JSON answer instead of a table\n"
    "  --timeout SECONDS    give up on a request after this long (default 60, 0 never,\n"
    "                       at most 86400; export and import are never cut short)\n"
    "  --retries N          retry a 503 answer N times after its Retry-After (default\n"
    "                       $MNEMOD_RETRIES, else 3; 0..100; a Retry-After over 30 s is not\n"
    "                       waited for)\n"
    "T is RFC 3339 (2026-11-30T09:00:00Z), a date (2026-11-30, midnight UTC), Unix seconds\n"
    "or \"now\"; D is a duration (90d, 36h, 15m, 30s, 2w); a bare --half-life number is days.\n"
    "KIND is exponential, linear, gaussian, none or weibull:SHAPE.\n"
    "Exit status: 0 done, 1 refused by the server or not reached, 2 usage error.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mnemod: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see mnemod help)\n", stderr);
    return 2;
}

static bool spec_has(const char *const *spec, const char *name, bool *is_flag)
{
    for (const char *const *s = spec; *s; s++) {
        size_t l = strlen(*s);
        if (l && (*s)[l - 1] == '!') {
            if (strlen(name) == l - 1 && strncmp(*s, name, l - 1) == 0) {
                *is_flag = true;
                return true;
            }
        } else if (strcmp(*s, name) == 0) {
            *is_flag = false;
            return true;
        }
    }
    return false;
}

static const char *short_opt(char c)
{
    switch (c) {
    case 'n':
        return "namespace";
    case 'k':
        return "k";
    case 'h':
        return "help";
    default:
        return NULL;
    }
}

/* argv[first..argc) against the command's spec plus the global options. */
static int parse(int argc, char **argv, int first, const char *const *spec, args_t *a)
{
    memset(a, 0, sizeof(*a));
    bool opts_done = false;
    for (int i = first; i < argc; i++) {
        const char *s = argv[i];
        if (opts_done || s[0] != '-' || strcmp(s, "-") == 0 ||
            (s[1] >= '0' && s[1] <= '9')) { /* "-" (stdin) and negative numbers are words */
            if (a->n_pos == MAX_POS) return usage_error("too many arguments: %s", s);
            a->pos[a->n_pos++] = s;
            continue;
        }
        if (strcmp(s, "--") == 0) {
            opts_done = true;
            continue;
        }
        char name[48];
        const char *value = NULL;
        if (s[1] != '-') {
            const char *l = s[2] == '\0' ? short_opt(s[1]) : NULL;
            if (!l) return usage_error("unknown option %s", s);
            snprintf(name, sizeof(name), "%s", l);
        } else {
            const char *eq = strchr(s + 2, '=');
            size_t l = eq ? (size_t)(eq - s - 2) : strlen(s + 2);
            if (l >= sizeof(name)) return usage_error("unknown option %s", s);
            memcpy(name, s + 2, l);
            name[l] = '\0';
            if (eq) value = eq + 1;
        }
        if (strcmp(name, "help") == 0) {
            fputs(usage, stdout);
            return -1;
        }
        bool flag = false;
        if (!spec_has(spec, name, &flag) && !spec_has(global_opts, name, &flag))
            return usage_error("unknown option %s", s);
        if (flag && value) return usage_error("option --%s takes no value", name);
        if (!flag && !value) {
            if (i + 1 >= argc) return usage_error("option --%s needs a value", name);
            value = argv[++i];
        }
        if (a->n_opt == MAX_OPTS) return usage_error("too many options at %s", s);
        /* keep our own copy of the name: argv holds "--name=value" */
        char *dup = strdup(name);
        if (!dup) return usage_error("out of memory at %s", s);
        a->opt[a->n_opt].name = dup;
        a->opt[a->n_opt].value = flag ? "" : value;
        a->n_opt++;
    }
    return 0;
}

static void args_free(args_t *a)
{
    for (int i = 0; i < a->n_opt; i++)
        free((char *)a->opt[i].name);
    a->n_opt = 0;
}

static const char *opt(const args_t *a, const char *name)
{
    const char *v = NULL; /* the last one wins, as for the server's flags */
    for (int i = 0; i < a->n_opt; i++)
        if (strcmp(a->opt[i].name, name) == 0) v = a->opt[i].value;
    return v;
}

/* ------------------------------------------------------------------ value forms */

/* A decimal number: what JSON writes, and the ".5", "5." and "+1" people type too. Not
 * what strtod also takes: hex ("0x10" asked for 16 results), "inf", leading spaces. */
static bool is_number(const char *s, double *out)
{
    char buf[72];
    const char *p = s[0] == '+' && s[1] != '-' && s[1] != '+' ? s + 1 : s;
    size_t len = strlen(p);
    if (len == 0 || len > 64) return false;
    bool neg = p[0] == '-';
    const char *digits = p + neg;
    /* "-.5" -> "-0.5", "5." -> "5.0"; a point with no digit beside it stays refused */
    bool lead = digits[0] == '.' && digits[1] >= '0' && digits[1] <= '9';
    bool trail = len >= 2 && p[len - 1] == '.' && p[len - 2] >= '0' && p[len - 2] <= '9';
    int n = snprintf(buf, sizeof(buf), "%s%s%s%s", neg ? "-" : "", lead ? "0" : "", digits,
                     trail ? "0" : "");
    size_t used;
    double v;
    if (n < 0 || mem_num_parse_f64(buf, (size_t)n, &v, &used) != MEM_OK || used != (size_t)n)
        return false;
    if (out) *out = v;
    return true;
}

/* An integer a JSON number can carry exactly (at most 2^53 in magnitude). */
static bool is_integer(const char *s, double *out)
{
    double d;
    if (!is_number(s, &d) || d != floor(d) || fabs(d) > 9007199254740992.0) return false;
    *out = d;
    return true;
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

/* A timestamp for the API: a number stays a number (Unix seconds), a bare date becomes
 * midnight UTC, "now" the client's clock, anything else goes as written. */
static json_t *timestamp_value(const char *s)
{
    double v;
    if (is_number(s, &v)) return json_real(v);
    if (strcmp(s, "now") == 0) {
        char buf[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
        return json_string(buf);
    }
    if (strlen(s) == 10 && all_digits(s, 4) && s[4] == '-' && all_digits(s + 5, 2) && s[7] == '-' &&
        all_digits(s + 8, 2)) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%sT00:00:00Z", s);
        return json_string(buf);
    }
    return json_string(s);
}

static json_t *duration_value(const char *s)
{
    double v;
    return is_number(s, &v) ? json_real(v) : json_string(s);
}

/* Parse a JSON option value (--metadata, --filter, --embedding). */
static int json_opt(const char *name, const char *text, json_t **out)
{
    json_error_t e;
    *out = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
    if (!*out) {
        fprintf(stderr, "mnemod: --%s: not valid JSON: %s\n", name, e.text);
        return 2;
    }
    return 0;
}

/* Set body[key] from the option of that name with the given conversion; returns 0 or the
 * exit status of a usage error. */
enum conv { AS_STRING, AS_NUMBER, AS_INT, AS_TIMESTAMP, AS_DURATION, AS_JSON, AS_TRUE };

static int put(json_t *body, const args_t *a, const char *name, const char *key, enum conv how)
{
    const char *v = opt(a, name);
    if (!v) return 0;
    json_t *j = NULL;
    double d;
    switch (how) {
    case AS_STRING:
        j = json_string(v);
        break;
    case AS_NUMBER:
        if (!is_number(v, &d)) return usage_error("--%s: expected a number, such as 0.5", name);
        j = json_real(d);
        break;
    case AS_INT:
        if (!is_integer(v, &d)) return usage_error("--%s: expected an integer", name);
        j = json_integer((json_int_t)d);
        break;
    case AS_TIMESTAMP:
        j = timestamp_value(v);
        break;
    case AS_DURATION:
        j = duration_value(v);
        break;
    case AS_JSON: {
        int rc = json_opt(name, v, &j);
        if (rc) return rc;
        break;
    }
    case AS_TRUE:
        j = json_true();
        break;
    }
    if (!j || json_object_set_new(body, key, j)) return usage_error("%s: out of memory", name);
    return 0;
}

/* ------------------------------------------------------------------ shared steps */

static char *ns_path(mem_cli_t *c, const char *ns, const char *rest)
{
    char *e = mem_cli__escape(c, ns);
    if (!e) return NULL;
    size_t l = strlen(e) + strlen(rest) + 32;
    char *p = malloc(l);
    if (p) snprintf(p, l, "/v1/namespaces/%s%s", e, rest);
    free(e);
    return p;
}

/* Call, then either print the raw answer (--json) or hand back the parsed JSON. Returns
 * 0 with *out set (NULL after printing --json), or the exit status. */
static int request(mem_cli_t *c, const char *method, const char *path, const json_t *body,
                   json_t **out)
{
    mem_cli_resp_t r;
    *out = NULL;
    if (!path) {
        fprintf(stderr, "mnemod: out of memory\n");
        return 1;
    }
    if (mem_cli__call(c, method, path, body, &r) != 0) {
        mem_cli__resp_free(&r);
        return 1;
    }
    json_t *j = NULL;
    int rc = mem_cli__result(&r, &j);
    if (rc == 0 && c->json) {
        mem_cli__print_raw(&r);
        json_decref(j);
        j = NULL;
    }
    mem_cli__resp_free(&r);
    *out = j;
    return rc;
}

/* request() on /v1/namespaces/{ns}{rest}. */
static int ns_request(mem_cli_t *c, const char *method, const char *ns, const char *rest,
                      const json_t *body, json_t **out)
{
    char *path = ns_path(c, ns, rest);
    int rc = request(c, method, path, body, out);
    free(path);
    return rc;
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* A number cell: integers as they are, reals with `decimals` digits (-1: shortest). */
static char *fmt_num(const json_t *v, int decimals)
{
    char buf[64];
    if (json_is_integer(v))
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v) && decimals < 0)
        snprintf(buf, sizeof(buf), "%g", json_real_value(v));
    else if (json_is_real(v))
        snprintf(buf, sizeof(buf), "%.*f", decimals, json_real_value(v));
    else
        return strdup("-");
    return strdup(buf);
}

/* ------------------------------------------------------------------ ns */

static const char *const stats_keys[] = {"count",  "superseded",  "archived",   "dim", "oldest",
                                         "newest", "graph_edges", "max_degree", NULL};

static void print_stats(const json_t *s)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v)
    {
        char *txt = json_is_string(v) ? strdup(json_string_value(v)) : mem_cli__dumps(v);
        printf("%-14s %s\n", k, txt ? txt : "?");
        free(txt);
    }
}

static int cmd_ns(mem_cli_t *c, const args_t *a, const char *ns)
{
    if (a->n_pos < 1) return usage_error("ns needs a subcommand: %s", "list|create|stats|drop");
    const char *sub = a->pos[0];
    json_t *j = NULL;
    int rc;
    if (strcmp(sub, "list") == 0) {
        if (a->n_pos != 1) return usage_error("ns list takes no argument (%s)", a->pos[1]);
        if ((rc = request(c, "GET", "/v1/namespaces", NULL, &j)) || !j) return rc;
        static const char *const head[] = {"NAME", "COUNT",  "SUPERSEDED", "ARCHIVED",
                                           "DIM",  "OLDEST", "NEWEST",     "EDGES"};
        mem_cli_table_t t;
        mem_cli__table_init(&t, 8, head);
        for (int i = 1; i <= 4; i++)
            t.right[i] = true;
        size_t i;
        json_t *n;
        json_array_foreach(json_object_get(j, "namespaces"), i, n)
        {
            char *cells[8] = {strdup(jstr(n, "name") ? jstr(n, "name") : "?")};
            for (int k = 0; k < 4; k++) /* count, superseded, archived, dim */
                cells[1 + k] = fmt_num(json_object_get(n, stats_keys[k]), -1);
            char o[40], w[40];
            mem_cli__fmt_ts(jstr(n, "oldest"), o, sizeof(o));
            mem_cli__fmt_ts(jstr(n, "newest"), w, sizeof(w));
            cells[5] = strdup(o);
            cells[6] = strdup(w);
            cells[7] = fmt_num(json_object_get(n, "graph_edges"), -1);
            rc = mem_cli__table_add(&t, (const char *const *)cells);
            for (int k = 0; k < 8; k++)
                free(cells[k]);
            if (rc) break;
        }
        mem_cli__table_print(&t, stdout, 0);
        mem_cli__table_free(&t);
        json_decref(j);
        return rc ? 1 : 0;
    }
    const char *name = a->n_pos >= 2 ? a->pos[1] : NULL;
    if (a->n_pos > 2) return usage_error("too many arguments: %s", a->pos[2]);
    if (strcmp(sub, "create") == 0) {
        if (!name) return usage_error("ns create needs a %s", "NAME");
        const char *dim = opt(a, "dim");
        if (!dim) return usage_error("ns create needs %s", "--dim N");
        json_t *body = json_object();
        if ((rc = put(body, a, "dim", "dim", AS_INT)) ||
            (opt(a, "no-coherence") && json_object_set_new(body, "coherence", json_false()) != 0)) {
            json_decref(body);
            return rc ? rc : 1;
        }
        rc = ns_request(c, "PUT", name, "", body, &j);
        json_decref(body);
        if (!rc && j) printf("namespace %s: dim %s\n", name, dim);
        json_decref(j);
        return rc;
    }
    if (strcmp(sub, "stats") == 0) {
        if ((rc = ns_request(c, "GET", name ? name : ns, "", NULL, &j)) || !j) return rc;
        print_stats(j);
        json_decref(j);
        return 0;
    }
    if (strcmp(sub, "drop") == 0) {
        if (!name) return usage_error("ns drop needs a %s", "NAME");
        if (!opt(a, "yes"))
            return usage_error("ns drop deletes %s and everything in it: add --yes", name);
        rc = ns_request(c, "DELETE", name, "", NULL, &j);
        if (!rc && j) printf("deleted namespace %s\n", name);
        json_decref(j);
        return rc;
    }
    return usage_error("unknown ns subcommand %s (list, create, stats, drop)", sub);
}

/* ------------------------------------------------------------------ add, get, forget */

static char *read_all(FILE *f)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                return NULL;
            }
            buf = b;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        len--; /* "echo text | mnemod add" must not store the newline */
    buf[len] = '\0';
    return buf;
}

static int cmd_add(mem_cli_t *c, const args_t *a, const char *ns)
{
    if (a->n_pos > 1) return usage_error("add takes one TEXT (quote it): %s", a->pos[1]);
    char *text = NULL;
    if (a->n_pos == 1 && strcmp(a->pos[0], "-") != 0) {
        text = strdup(a->pos[0]);
    } else if (a->n_pos == 1 || (!opt(a, "embedding") && !isatty(STDIN_FILENO))) {
        text = read_all(stdin);
        if (!text) {
            perror("mnemod: reading stdin");
            return 1;
        }
    } else if (!opt(a, "embedding")) {
        return usage_error("add needs %s", "a TEXT, - (stdin) or --embedding");
    }
    json_t *body = json_object(), *j = NULL;
    int rc = 0;
    if (text && json_object_set_new(body, "text", json_string(text)))
        rc = usage_error("%s: out of memory", "text");
    free(text);
    if (!rc) rc = put(body, a, "id", "id", AS_STRING);
    if (!rc) rc = put(body, a, "timestamp", "timestamp", AS_TIMESTAMP);
    if (!rc) rc = put(body, a, "source", "source", AS_STRING);
    if (!rc) rc = put(body, a, "metadata", "metadata", AS_JSON);
    if (!rc) rc = put(body, a, "embedding", "embedding", AS_JSON);
    const char *sup = opt(a, "supersedes");
    if (!rc && sup) {
        json_t *arr = json_array();
        char *copy = strdup(sup), *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok;
             tok = strtok_r(NULL, ",", &save))
            json_array_append_new(arr, json_string(tok));
        free(copy);
        json_object_set_new(body, "supersedes", arr);
    }
    if (rc) {
        json_decref(body);
        return rc;
    }
    rc = ns_request(c, "POST", ns, "/segments", body, &j);
    json_decref(body);
    if (!rc && j) {
        size_t i;
        json_t *h;
        json_array_foreach(json_object_get(j, "inserted"), i, h)
        {
            printf("%s  seq %lld  %s\n", jstr(h, "id"),
                   (long long)json_integer_value(json_object_get(h, "seq")), jstr(h, "timestamp"));
        }
    }
    json_decref(j);
    return rc;
}

static int cmd_get(mem_cli_t *c, const args_t *a, const char *ns, bool forget)
{
    if (a->n_pos != 1) return usage_error("%s needs exactly one ID", forget ? "forget" : "get");
    char *id = mem_cli__escape(c, a->pos[0]);
    if (!id) return 1;
    size_t l = strlen(id) + 32;
    char *rest = malloc(l);
    if (!rest) {
        free(id);
        return 1;
    }
    snprintf(rest, l, "/segments/%s%s", id,
             !forget && opt(a, "embedding") ? "?embedding=true" : "");
    free(id);
    json_t *j = NULL;
    int rc = ns_request(c, forget ? "DELETE" : "GET", ns, rest, NULL, &j);
    free(rest);
    if (!rc && j) {
        if (forget)
            printf("forgot %s\n", a->pos[0]);
        else
            print_stats(j);
    }
    json_decref(j);
    return rc;
}

/* PATCH one segment: its metadata (replaced, JSON null clears it) and/or its source. */
static int cmd_patch(mem_cli_t *c, const args_t *a, const char *ns)
{
    if (a->n_pos != 1) return usage_error("patch needs exactly one ID");
    if (opt(a, "source") && opt(a, "no-source"))
        return usage_error("patch takes --source or --no-source, not both");
    if (!opt(a, "metadata") && !opt(a, "source") && !opt(a, "no-source"))
        return usage_error("patch needs %s", "--metadata, --source or --no-source");
    json_t *body = json_object(), *j = NULL;
    int rc = body ? 0 : usage_error("%s: out of memory", "patch");
    if (!rc) rc = put(body, a, "metadata", "metadata", AS_JSON);
    if (!rc) rc = put(body, a, "source", "source", AS_STRING);
    if (!rc && opt(a, "no-source") && json_object_set_new(body, "source", json_null()))
        rc = usage_error("%s: out of memory", "source");
    char *id = rc ? NULL : mem_cli__escape(c, a->pos[0]);
    char *rest = NULL;
    if (!rc && id) {
        size_t l = strlen(id) + 16;
        if ((rest = malloc(l))) snprintf(rest, l, "/segments/%s", id);
    }
    if (!rc && !rest) {
        fprintf(stderr, "mnemod: out of memory\n");
        rc = 1;
    }
    if (!rc) rc = ns_request(c, "PATCH", ns, rest, body, &j);
    if (!rc && j) print_stats(j);
    free(id);
    free(rest);
    json_decref(body);
    json_decref(j);
    return rc;
}

/* ------------------------------------------------------------------ search */

static int cmd_search(mem_cli_t *c, const args_t *a, const char *ns)
{
    if (a->n_pos > 1) return usage_error("search takes one QUERY (quote it): %s", a->pos[1]);
    if (a->n_pos == 0 && !opt(a, "embedding"))
        return usage_error("search needs %s", "a QUERY or --embedding");
    json_t *body = json_object(), *j = NULL;
    int rc = 0;
    if (a->n_pos == 1) json_object_set_new(body, "query", json_string(a->pos[0]));
    const char *hl = opt(a, "half-life");
    double days;
    if (hl && is_number(hl, &days))
        rc = json_object_set_new(body, "half_life_days", json_real(days)) ? 2 : 0;
    else
        rc = put(body, a, "half-life", "half_life", AS_DURATION);
    const char *decay = opt(a, "decay");
    if (!rc && decay && strncmp(decay, "weibull:", 8) == 0) {
        double shape;
        if (!is_number(decay + 8, &shape)) {
            rc = usage_error("--decay %s: expected weibull:SHAPE", decay);
        } else {
            json_object_set_new(body, "decay", json_pack("{s:{s:f}}", "weibull", "shape", shape));
        }
    } else if (!rc) {
        rc = put(body, a, "decay", "decay", AS_STRING);
    }
    static const struct {
        const char *opt, *key;
        enum conv how;
    } fields[] = {{"embedding", "embedding", AS_JSON},
                  {"k", "k", AS_INT},
                  {"recency-bias", "recency_bias", AS_NUMBER},
                  {"coherence-weight", "coherence_weight", AS_NUMBER},
                  {"origin", "origin", AS_TIMESTAMP},
                  {"offset", "offset", AS_DURATION},
                  {"as-of", "as_of", AS_TIMESTAMP},
                  {"since", "since", AS_TIMESTAMP},
                  {"until", "until", AS_TIMESTAMP},
                  {"source", "source", AS_STRING},
                  {"match", "match", AS_STRING},
                  {"filter", "filter", AS_JSON},
                  {"min-score", "min_score", AS_NUMBER},
                  {"include-superseded", "include_superseded", AS_TRUE},
                  {"include-archived", "include_archived", AS_TRUE}};
    for (size_t i = 0; !rc && i < sizeof(fields) / sizeof(fields[0]); i++)
        rc = put(body, a, fields[i].opt, fields[i].key, fields[i].how);
    if (!rc && !c->json) json_object_set_new(body, "explain", json_true());
    if (rc) {
        json_decref(body);
        return rc;
    }
    rc = ns_request(c, "POST", ns, "/retrieve", body, &j);
    json_decref(body);
    if (rc || !j) return rc;
    /* Columns: the score and its parts; LEX and VEC (the text and vector relevance a
     * hybrid match blends into SIM) when the server sent them, GATE with a coherence
     * weight. */
    const json_t *results = json_object_get(j, "results");
    bool gate = opt(a, "coherence-weight") != NULL, parts = false;
    size_t i;
    json_t *h;
    json_array_foreach(results, i, h)
    {
        if (json_object_get(h, "text_score") || json_object_get(h, "vector_score")) parts = true;
    }
    enum { C_RANK, C_SCORE, C_SIM, C_LEX, C_VEC, C_DECAY, C_GATE, C_AGE, C_ID, C_TEXT, N_COLS };
    static const char *const names[N_COLS] = {"#",     "SCORE", "SIM", "LEX", "VEC",
                                              "DECAY", "GATE",  "AGE", "ID",  "TEXT"};
    static const char *const keys[N_COLS] = {NULL,           "score", "similarity", "text_score",
                                             "vector_score", "decay", "gate",       NULL,
                                             NULL,           NULL};
    int cols[N_COLS], n_cols = 0;
    for (int k = 0; k < N_COLS; k++)
        if (((k != C_LEX && k != C_VEC) || parts) && (k != C_GATE || gate)) cols[n_cols++] = k;
    const char *head[N_COLS];
    for (int k = 0; k < n_cols; k++)
        head[k] = names[cols[k]];
    mem_cli_table_t t;
    mem_cli__table_init(&t, (size_t)n_cols, head);
    for (int k = 0; k < n_cols; k++)
        t.right[k] = cols[k] <= C_AGE;
    json_array_foreach(results, i, h)
    {
        char rank[24], age[32];
        snprintf(rank, sizeof(rank), "%zu", i + 1);
        mem_cli__fmt_age(json_number_value(json_object_get(h, "age_seconds")), age, sizeof(age));
        char *owned[N_COLS] = {NULL};
        const char *cells[N_COLS];
        for (int k = 0; k < n_cols; k++) {
            int c_ = cols[k];
            if (c_ == C_RANK)
                cells[k] = rank;
            else if (c_ == C_AGE)
                cells[k] = age;
            else if (c_ == C_ID)
                cells[k] = jstr(h, "id");
            else if (c_ == C_TEXT)
                cells[k] = jstr(h, "text");
            else
                cells[k] = owned[k] = fmt_num(json_object_get(h, keys[c_]), 4);
        }
        rc = mem_cli__table_add(&t, cells);
        for (int k = 0; k < n_cols; k++)
            free(owned[k]);
        if (rc) break;
    }
    mem_cli__table_print(&t, stdout, mem_cli__term_width());
    const char *match = jstr(j, "match");
    fprintf(stderr, "%zu results%s%s%s, %lld scanned, %.2f ms\n", json_array_size(results),
            match ? " (" : "", match ? match : "", match ? " match)" : "",
            (long long)json_integer_value(json_object_get(j, "scanned")),
            json_number_value(json_object_get(j, "took_ms")));
    mem_cli__table_free(&t);
    json_decref(j);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------------ list */

static int append_query(char **q, size_t *len, mem_cli_t *c, const char *key, const char *value)
{
    char *e = mem_cli__escape(c, value);
    if (!e) return -1;
    size_t need = *len + strlen(key) + strlen(e) + 3;
    char *n = realloc(*q, need);
    if (!n) {
        free(e);
        return -1;
    }
    *q = n;
    *len += (size_t)snprintf(n + *len, need - *len, "%c%s=%s", *len ? '&' : '?', key, e);
    free(e);
    return 0;
}

static int cmd_list(mem_cli_t *c, const args_t *a, const char *ns)
{
    if (a->n_pos) return usage_error("list takes no argument (%s)", a->pos[0]);
    bool all = opt(a, "all") != NULL;
    const char *after = opt(a, "after");
    char *cursor = after ? strdup(after) : NULL;
    mem_cli_table_t t;
    static const char *const head[] = {"SEQ", "ID", "TIMESTAMP", "SOURCE", "FLAGS", "TEXT"};
    mem_cli__table_init(&t, 6, head);
    t.right[0] = true;
    int rc = 0;
    for (;;) {
        char *q = strdup("");
        size_t ql = 0;
        static const char *const passthru[] = {"limit", "since", "until", "source", NULL};
        for (const char *const *k = passthru; *k && q; k++) {
            const char *v = opt(a, *k);
            if (!v) continue;
            if (strcmp(*k, "since") == 0 || strcmp(*k, "until") == 0) {
                json_t *ts = timestamp_value(v);
                char *s = json_is_string(ts) ? strdup(json_string_value(ts))
                                             : json_dumps(ts, JSON_ENCODE_ANY);
                json_decref(ts);
                if (!s || append_query(&q, &ql, c, *k, s)) q = (free(q), NULL);
                free(s);
            } else if (append_query(&q, &ql, c, *k, v)) {
                q = (free(q), NULL);
            }
        }
        if (q && opt(a, "include-superseded") &&
            append_query(&q, &ql, c, "include_superseded", "true"))
            q = (free(q), NULL);
        if (q && opt(a, "include-archived") && append_query(&q, &ql, c, "include_archived", "true"))
            q = (free(q), NULL);
        if (q && cursor && append_query(&q, &ql, c, "after", cursor)) q = (free(q), NULL);
        if (!q) {
            rc = 1;
            break;
        }
        size_t rl = strlen(q) + 16;
        char *rest = malloc(rl);
        if (rest) snprintf(rest, rl, "/segments%s", q);
        free(q);
        json_t *j = NULL;
        rc = rest ? ns_request(c, "GET", ns, rest, NULL, &j) : 1;
        free(rest);
        if (rc) break;
        const json_t *page = j; /* NULL after --json printed it: parse for the cursor anyway */
        free(cursor);
        cursor = NULL;
        if (!page) break; /* --json: one page per call (use --after to continue) */
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(page, "segments"), i, s)
        {
            char seq[24], ts[40], flags[8];
            snprintf(seq, sizeof(seq), "%lld",
                     (long long)json_integer_value(json_object_get(s, "seq")));
            mem_cli__fmt_ts(jstr(s, "timestamp"), ts, sizeof(ts));
            snprintf(flags, sizeof(flags), "%s%s", jstr(s, "superseded_by") ? "S" : "",
                     json_is_true(json_object_get(s, "archived")) ? "A" : "");
            const char *cells[] = {seq,   jstr(s, "id"),  ts, jstr(s, "source"),
                                   flags, jstr(s, "text")};
            if (mem_cli__table_add(&t, cells)) {
                rc = 1;
                break;
            }
        }
        const char *next = jstr(page, "next");
        cursor = next ? strdup(next) : NULL;
        json_decref(j);
        if (rc || !cursor || !all) break;
    }
    if (!rc && !c->json) {
        mem_cli__table_print(&t, stdout, mem_cli__term_width());
        if (cursor) fprintf(stderr, "more: mnemod list --after %s (or --all)\n", cursor);
    }
    free(cursor);
    mem_cli__table_free(&t);
    return rc;
}

/* ------------------------------------------------------------------ export, import */

static int cmd_export(mem_cli_t *c, const args_t *a, const char *ns)
{
    if (a->n_pos) return usage_error("export takes no argument (%s); redirect stdout", a->pos[0]);
    if (isatty(STDOUT_FILENO) && !opt(a, "force"))
        return usage_error("export writes NDJSON: redirect it (%s), or add --force",
                           "mnemod export > FILE");
    char *path = ns_path(c, ns, "/export");
    if (!path) return 1;
    mem_cli_resp_t r;
    uint64_t lines = 0;
    int rc = mem_cli__download(c, path, stdout, &lines, &r);
    free(path);
    if (!rc) {
        json_t *j = NULL;
        if (r.status >= 200 && r.status < 300) {
            if (!opt(a, "quiet"))
                fprintf(stderr, "exported %llu segments from %s\n", (unsigned long long)lines, ns);
        } else {
            rc = mem_cli__result(&r, &j);
        }
        json_decref(j);
    }
    mem_cli__resp_free(&r);
    return rc;
}

static int cmd_import(mem_cli_t *c, const args_t *a, const char *ns)
{
    if (a->n_pos) return usage_error("import takes no argument (%s); redirect stdin", a->pos[0]);
    if (isatty(STDIN_FILENO))
        return usage_error("import reads NDJSON from stdin: %s", "mnemod import < FILE");
    bool tty = c->stderr_tty;
    mem_cli_upload_t up = {.in = stdin, .ud = &tty};
    if (!opt(a, "quiet")) up.progress = mem_cli__progress;
    char *path = ns_path(c, ns, "/import");
    if (!path) return 1;
    mem_cli_resp_t r;
    int rc = mem_cli__upload(c, path, "application/x-ndjson", &up, &r);
    free(path);
    json_t *j = NULL;
    if (!rc) rc = mem_cli__result(&r, &j);
    if (!rc && c->json) {
        mem_cli__print_raw(&r);
    } else if (!rc) {
        printf("imported %lld segments into %s (%lld identical ones skipped)\n",
               (long long)json_integer_value(json_object_get(j, "imported")), ns,
               (long long)json_integer_value(json_object_get(j, "skipped")));
    }
    json_decref(j);
    mem_cli__resp_free(&r);
    return rc;
}

/* ------------------------------------------------------------------ compact */

static int cmd_compact(mem_cli_t *c, const args_t *a, const char *ns)
{
    if (a->n_pos) return usage_error("compact takes no argument (%s)", a->pos[0]);
    if (!opt(a, "target") && !opt(a, "ratio"))
        return usage_error("compact needs %s", "--target N or --ratio X");
    json_t *body = json_object(), *j = NULL;
    int rc = put(body, a, "target", "target", AS_INT);
    if (!rc) rc = put(body, a, "ratio", "ratio", AS_NUMBER);
    if (!rc) rc = put(body, a, "policy", "policy", AS_STRING);
    if (!rc) rc = put(body, a, "dry-run", "dry_run", AS_TRUE);
    if (!rc) rc = put(body, a, "purge", "purge", AS_TRUE);
    if (rc) {
        json_decref(body);
        return rc;
    }
    rc = ns_request(c, "POST", ns, "/compact", body, &j);
    json_decref(body);
    if (!rc && j) {
        printf("%s%s: %lld -> %lld segments, %zu %s\n", opt(a, "dry-run") ? "dry run, " : "",
               jstr(j, "policy"), (long long)json_integer_value(json_object_get(j, "before")),
               (long long)json_integer_value(json_object_get(j, "after")),
               json_array_size(json_object_get(j, "evicted")),
               opt(a, "purge") ? "purged" : (opt(a, "dry-run") ? "would go" : "archived"));
        size_t i;
        json_t *id;
        json_array_foreach(json_object_get(j, "evicted"), i, id)
            printf("  %s\n", json_string_value(id));
    }
    json_decref(j);
    return rc;
}

/* ------------------------------------------------------------------ dispatch */

static const struct command {
    const char *name;
    const char *const opts[24];
} commands[] = {
    {"ns", {"dim", "no-coherence!", "yes!", NULL}},
    {"add", {"id", "timestamp", "source", "metadata", "supersedes", "embedding", NULL}},
    {"get", {"embedding!", NULL}},
    {"forget", {NULL}},
    {"patch", {"metadata", "source", "no-source!", NULL}},
    {"search",
     {"k", "half-life", "as-of", "match", "decay", "recency-bias", "coherence-weight", "origin",
      "offset", "since", "until", "source", "filter", "min-score", "include-superseded!",
      "include-archived!", "embedding", NULL}},
    {"list",
     {"limit", "after", "all!", "since", "until", "source", "include-superseded!",
      "include-archived!", NULL}},
    {"export", {"force!", "quiet!", NULL}},
    {"import", {"quiet!", NULL}},
    {"compact", {"target", "ratio", "policy", "dry-run!", "purge!", NULL}},
    {"help", {NULL}},
};

/* Index of the command word in argv: argv[1], or the first word after leading global
 * options (`mnemod -n agent search ...`); 0 when there is none. Only the client's own
 * global options are skipped, so no server flag's value can be taken for a command. */
static int command_index(int argc, char **argv)
{
    int i = 1;
    while (i < argc && argv[i][0] == '-') {
        const char *s = argv[i];
        bool flag = false;
        char name[48];
        const char *l = s[1] != '-' && s[2] == '\0' ? short_opt(s[1]) : NULL;
        if (l && strcmp(l, "namespace") == 0) {
            snprintf(name, sizeof(name), "%s", l);
        } else if (s[1] == '-') {
            size_t n = strcspn(s + 2, "=");
            if (n >= sizeof(name)) return 0;
            memcpy(name, s + 2, n);
            name[n] = '\0';
        } else {
            return 0;
        }
        if (!spec_has(global_opts, name, &flag)) return 0;
        i += flag || strchr(s, '=') ? 1 : 2;
    }
    if (i >= argc) return 0;
    for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
        if (strcmp(argv[i], commands[k].name) == 0) return i;
    return 0;
}

bool mem_cli_wants(int argc, char **argv)
{
    return command_index(argc, argv) > 0;
}

static int read_key_file(const char *path, char *key, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mnemod: --api-key-file %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t n = fread(key, 1, cap - 1, f);
    fclose(f);
    key[n] = '\0';
    while (n && (key[n - 1] == '\n' || key[n - 1] == '\r'))
        key[--n] = '\0';
    return 0;
}

int mem_cli_main(int argc, char **argv)
{
    int at = command_index(argc, argv);
    const struct command *cmd = NULL;
    for (size_t i = 0; at && i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(argv[at], commands[i].name) == 0) cmd = &commands[i];
    if (!cmd || strcmp(cmd->name, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    /* the options before the command word, then the command's own line */
    char **line = malloc(sizeof(char *) * (size_t)argc);
    if (!line) return 1;
    int n = 0;
    for (int i = 1; i < argc; i++)
        if (i != at) line[n++] = argv[i];
    args_t a;
    int rc = parse(n, line, 0, cmd->opts, &a);
    free(line);
    if (rc) {
        args_free(&a);
        return rc < 0 ? 0 : rc;
    }
    mem_cli_t c;
    memset(&c, 0, sizeof(c));
    c.timeout_s = 60;
    c.retries = MEM_CLI_RETRIES;
    const char *url = opt(&a, "url");
    if (!url || !*url) url = getenv("MNEMOD_URL");
    if (!url || !*url) url = DEFAULT_URL;
    if (strstr(url, "://"))
        snprintf(c.base, sizeof(c.base), "%s", url);
    else
        snprintf(c.base, sizeof(c.base), "http://%s", url);
    size_t bl = strlen(c.base);
    while (bl && c.base[bl - 1] == '/')
        c.base[--bl] = '\0';
    const char *keyfile = opt(&a, "api-key-file");
    const char *envkey = getenv("MNEMOD_API_KEY");
    if (keyfile)
        rc = read_key_file(keyfile, c.key, sizeof(c.key));
    else if (envkey)
        snprintf(c.key, sizeof(c.key), "%s", envkey);
    const char *ns = opt(&a, "namespace");
    if (!ns || !*ns) ns = getenv("MNEMOD_NAMESPACE");
    if (!ns || !*ns) ns = DEFAULT_NS;
    const char *timeout = opt(&a, "timeout");
    double t;
    if (!rc && timeout) {
        if (!is_number(timeout, &t) || t < 0 || t > MEM_CLI_TIMEOUT_MAX)
            rc = usage_error("--timeout %s: expected seconds from 0 to %d", timeout,
                             MEM_CLI_TIMEOUT_MAX);
        else
            c.timeout_s = (long)ceil(t);
    }
    /* --retries, else MNEMOD_RETRIES (empty: unset, like the others), else the default */
    const char *retries = opt(&a, "retries");
    const char *retries_from = "--retries";
    if (!retries) {
        retries = getenv("MNEMOD_RETRIES");
        retries_from = "MNEMOD_RETRIES";
        if (retries && !*retries) retries = NULL;
    }
    if (!rc && retries) {
        if (!is_number(retries, &t) || t < 0 || t > MEM_CLI_RETRIES_MAX || t != floor(t))
            rc = usage_error("%s %s: expected a whole number from 0 to %d", retries_from, retries,
                             MEM_CLI_RETRIES_MAX);
        else
            c.retries = (int)t;
    }
    c.json = opt(&a, "json") != NULL;
    c.stdout_tty = isatty(STDOUT_FILENO);
    c.stderr_tty = isatty(STDERR_FILENO);
    if (!rc) rc = mem_cli__http_open(&c);
    if (!rc) {
        const char *name = cmd->name;
        if (strcmp(name, "ns") == 0)
            rc = cmd_ns(&c, &a, ns);
        else if (strcmp(name, "add") == 0)
            rc = cmd_add(&c, &a, ns);
        else if (strcmp(name, "get") == 0)
            rc = cmd_get(&c, &a, ns, false);
        else if (strcmp(name, "forget") == 0)
            rc = cmd_get(&c, &a, ns, true);
        else if (strcmp(name, "patch") == 0)
            rc = cmd_patch(&c, &a, ns);
        else if (strcmp(name, "search") == 0)
            rc = cmd_search(&c, &a, ns);
        else if (strcmp(name, "list") == 0)
            rc = cmd_list(&c, &a, ns);
        else if (strcmp(name, "export") == 0)
            rc = cmd_export(&c, &a, ns);
        else if (strcmp(name, "import") == 0)
            rc = cmd_import(&c, &a, ns);
        else if (strcmp(name, "compact") == 0)
            rc = cmd_compact(&c, &a, ns);
        mem_cli__http_close(&c);
    }
    args_free(&a);
    if (fflush(stdout) != 0 && !rc) {
        perror("mnemod: stdout");
        rc = 1;
    }
    return rc;
}
