/* import.c - POST .../import: NDJSON in, one all-or-nothing write record out
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. The body arrives in pieces (server/ hands them over as they come and never holds
 * the body whole). Each complete line is decoded exactly like a single-segment insert
 * (plus the export's "archived" and "embedder"), checked against the rules that need only
 * the import itself (one dimension, no id twice, timestamps never going back, one
 * embedder), and spilled in a compact
 * binary form to an unnamed temporary file; what stays in memory is the line being read and
 * one entry per id (for "no id twice" and for supersedes naming an earlier line). At the
 * end one IMPORT op goes to the writer, which reads the file twice (storage/import.c): all
 * rules against the namespace first, then the writes, in one savepoint. The first problem
 * anywhere names its 1-based line and nothing is written. A progress line is logged at
 * least every IMPORT_LOG_S seconds while the body is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/api_int.h"

#define MEM_API_MAX_IMPORT_LINE (4u * 1024u * 1024u) /* bytes of one NDJSON line */
#define IMPORT_LOG_S            2.0

typedef struct id_ent {
    uint64_t hash;
    size_t off; /* in ids: the NUL-terminated id */
    uint64_t line;
} id_ent_t;

struct mem_api_import {
    const mem_api_ctx_t *ctx;
    char ns[MEM_STORE_NS_MAX + 1];
    size_t dim; /* fixed by the namespace or the first line */
    FILE *spill;
    char *carry; /* the line being read */
    size_t carry_len, carry_cap;
    bool carry_too_long;
    uint64_t line;    /* lines seen */
    size_t n_records; /* lines spilled */
    bool failed;
    mem_err_t err;
    bool any_ts;
    int64_t last_ts;
    bool embedded; /* some line's vector was made from its text (the namespace records it) */
    /* the embedder lines name (an export's "embedder": what made the vectors), "" = none */
    char embedder[MEM_STORE_EMBEDDER_MAX + 1];
    /* ids: open addressing over ents, strings in ids */
    id_ent_t *ents;
    size_t cap_ents, n_ents;
    char *ids;
    size_t ids_len, ids_cap;
    double last_log;
    /* the reader of storage/ */
    mem_store_import_src_t src;
    char *rbuf;
    size_t rbuf_cap;
    float *rvec;
    const char **rsup;
    size_t rsup_cap;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* 0: added, 1: already there (*line_out = its line), -1: out of memory. */
static int id_add(mem_api_import_t *imp, const char *id, uint64_t line, uint64_t *line_out)
{
    size_t len = strlen(id);
    uint64_t h = fnv(id, len);
    if ((imp->n_ents + 1) * 2 > imp->cap_ents) {
        size_t cap = imp->cap_ents ? imp->cap_ents * 2 : 1024;
        id_ent_t *e = calloc(cap, sizeof(*e));
        if (!e) return -1;
        for (size_t i = 0; i < imp->cap_ents; i++) {
            if (!imp->ents[i].line) continue;
            size_t j = imp->ents[i].hash & (cap - 1);
            while (e[j].line)
                j = (j + 1) & (cap - 1);
            e[j] = imp->ents[i];
        }
        free(imp->ents);
        imp->ents = e;
        imp->cap_ents = cap;
    }
    size_t j = h & (imp->cap_ents - 1);
    for (; imp->ents[j].line; j = (j + 1) & (imp->cap_ents - 1))
        if (imp->ents[j].hash == h && strcmp(imp->ids + imp->ents[j].off, id) == 0) {
            *line_out = imp->ents[j].line;
            return 1;
        }
    if (imp->ids_len + len + 1 > imp->ids_cap) {
        size_t cap = imp->ids_cap ? imp->ids_cap * 2 : 65536;
        while (cap < imp->ids_len + len + 1)
            cap *= 2;
        char *p = realloc(imp->ids, cap);
        if (!p) return -1;
        imp->ids = p;
        imp->ids_cap = cap;
    }
    memcpy(imp->ids + imp->ids_len, id, len + 1);
    imp->ents[j] = (id_ent_t){h, imp->ids_len, line};
    imp->ids_len += len + 1;
    imp->n_ents++;
    return 0;
}

static bool has_id_before(void *ud, const char *id, uint64_t line)
{
    mem_api_import_t *imp = ud;
    if (!imp->cap_ents) return false;
    size_t len = strlen(id);
    uint64_t h = fnv(id, len);
    for (size_t j = h & (imp->cap_ents - 1); imp->ents[j].line; j = (j + 1) & (imp->cap_ents - 1))
        if (imp->ents[j].hash == h && strcmp(imp->ids + imp->ents[j].off, id) == 0)
            return imp->ents[j].line < line;
    return false;
}

/* ---- the spill file: one record per line ----
 * u64 line, u8 flags (1 timestamp given, 2 archived), i64 ts_ms, then str id, opt text,
 * opt source, opt metadata (str = u32 length + bytes; opt = u32 UINT32_MAX when absent),
 * u32 n_supersedes + n x str, dim x f32. Host byte order: the file never leaves the process. */

static bool put(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n;
}

static bool put_str(FILE *f, const char *s, size_t n, bool opt)
{
    uint32_t l = s ? (uint32_t)n : UINT32_MAX;
    if (!s && !opt) l = 0;
    return put(f, &l, 4) && (!s || put(f, s, n));
}

static bool spill(mem_api_import_t *imp, const mem_store_seg_in_t *s, bool archived)
{
    FILE *f = imp->spill;
    uint8_t flags = (uint8_t)((s->ts_given ? 1 : 0) | (archived ? 2 : 0));
    uint32_t n_sup = (uint32_t)s->n_supersedes;
    bool ok = put(f, &imp->line, 8) && put(f, &flags, 1) && put(f, &s->ts_ms, 8) &&
              put_str(f, s->id, strlen(s->id), false) && put_str(f, s->text, s->text_len, true) &&
              put_str(f, s->source, s->source_len, true) &&
              put_str(f, s->metadata, s->metadata_len, true) && put(f, &n_sup, 4);
    for (size_t k = 0; ok && k < s->n_supersedes; k++)
        ok = put_str(f, s->supersedes[k], strlen(s->supersedes[k]), false);
    return ok && put(f, s->vec, imp->dim * sizeof(float));
}

static int src_rewind(void *ud)
{
    mem_api_import_t *imp = ud;
    return fflush(imp->spill) == 0 && fseek(imp->spill, 0, SEEK_SET) == 0 ? MEM_OK : MEM_ESTORAGE;
}

/* Read a str into the reader buffer at *off (NUL-terminated); its offset or -1 (absent),
 * -2 on a read failure. */
static long get_str(mem_api_import_t *imp, size_t *off)
{
    uint32_t l;
    if (fread(&l, 1, 4, imp->spill) != 4) return -2;
    if (l == UINT32_MAX) return -1;
    if (*off + l + 1 > imp->rbuf_cap) {
        size_t cap = imp->rbuf_cap ? imp->rbuf_cap : 4096;
        while (cap < *off + l + 1)
            cap *= 2;
        char *p = realloc(imp->rbuf, cap);
        if (!p) return -2;
        imp->rbuf = p;
        imp->rbuf_cap = cap;
    }
    if (l && fread(imp->rbuf + *off, 1, l, imp->spill) != l) return -2;
    imp->rbuf[*off + l] = '\0';
    long at = (long)*off;
    *off += l + 1;
    return at;
}

static int src_next(void *ud, mem_store_seg_in_t *seg, bool *archived, uint64_t *line)
{
    mem_api_import_t *imp = ud;
    uint8_t flags;
    memset(seg, 0, sizeof(*seg));
    size_t got = fread(line, 1, 8, imp->spill);
    if (got == 0 && feof(imp->spill)) return 0;
    if (got != 8 || fread(&flags, 1, 1, imp->spill) != 1 ||
        fread(&seg->ts_ms, 1, 8, imp->spill) != 8)
        return MEM_ESTORAGE;
    seg->ts_given = flags & 1;
    *archived = (flags & 2) != 0;
    size_t off = 0;
    long at[4];
    for (int i = 0; i < 4; i++)
        if ((at[i] = get_str(imp, &off)) == -2) return MEM_ESTORAGE;
    uint32_t n_sup;
    if (at[0] < 0 || fread(&n_sup, 1, 4, imp->spill) != 4) return MEM_ESTORAGE;
    if (n_sup > imp->rsup_cap) {
        const char **p = realloc(imp->rsup, n_sup * sizeof(*p));
        if (!p) return MEM_ESTORAGE;
        imp->rsup = p;
        imp->rsup_cap = n_sup;
    }
    long sup_at[MEM_API_MAX_SUPERSEDES];
    if (n_sup > MEM_API_MAX_SUPERSEDES) return MEM_ESTORAGE;
    for (uint32_t k = 0; k < n_sup; k++)
        if ((sup_at[k] = get_str(imp, &off)) < 0) return MEM_ESTORAGE;
    if (fread(imp->rvec, sizeof(float), imp->dim, imp->spill) != imp->dim) return MEM_ESTORAGE;
    /* every string is in place: the buffer no longer moves */
    snprintf(seg->id, sizeof(seg->id), "%s", imp->rbuf + at[0]);
    if (at[1] >= 0) seg->text = imp->rbuf + at[1], seg->text_len = strlen(seg->text);
    if (at[2] >= 0) seg->source = imp->rbuf + at[2], seg->source_len = strlen(seg->source);
    if (at[3] >= 0) seg->metadata = imp->rbuf + at[3], seg->metadata_len = strlen(seg->metadata);
    for (uint32_t k = 0; k < n_sup; k++)
        imp->rsup[k] = imp->rbuf + sup_at[k];
    seg->supersedes = imp->rsup;
    seg->n_supersedes = n_sup;
    seg->vec = imp->rvec;
    return 1;
}

/* ---- reading the body ---- */

static void fail_at(mem_api_import_t *imp, const mem_err_t *e)
{
    imp->failed = true;
    imp->err = *e;
    imp->err.line = imp->line;
    char msg[sizeof(imp->err.msg) + 32];
    snprintf(msg, sizeof(msg), "line %llu: %s", (unsigned long long)imp->line, e->msg);
    memcpy(imp->err.msg, msg, sizeof(imp->err.msg) - 1);
    imp->err.msg[sizeof(imp->err.msg) - 1] = '\0';
}

static void fail_line(mem_api_import_t *imp, int code, const char *field, const char *what)
{
    mem_err_t e;
    mem_err_clear(&e);
    if (field)
        mem_err_field(&e, code, field, "%s", what);
    else
        mem_err_set(&e, code, "%s", what);
    fail_at(imp, &e);
}

static void one_line(mem_api_import_t *imp, const char *s, size_t len)
{
    imp->line++;
    if (len && s[len - 1] == '\r') len--;
    /* a UTF-8 byte order mark, which editors and Windows tools put before a file's text */
    if (imp->line == 1 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) s += 3, len -= 3;
    if (len == 0) return; /* a blank line (a trailing one, most often) holds no segment */
    static const char *const VEC_PATHS[] = MEM_API_VEC_PATHS_REST;
    json_t *o = NULL;
    mem_err_t pe;
    mem_err_clear(&pe);
    int prc = mem_api__json_parse(s, len, VEC_PATHS, NULL, &o, &pe);
    if (prc != MEM_OK) { /* "invalid JSON at line 1 column C: reason", or out of memory */
        fail_line(imp, prc, NULL, pe.msg);
        return;
    }
    mem_api__pool_t pool = {0};
    mem_err_t e;
    mem_err_clear(&e);
    bool archived = false;
    if (!json_is_object(o)) {
        fail_line(imp, MEM_EINVAL, NULL, "expected a JSON object (one segment per line)");
        goto out;
    }
    json_t *a = json_object_get(o, "archived");
    if (a && !json_is_null(a) && !json_is_boolean(a)) {
        fail_line(imp, MEM_EINVAL, "archived", "archived: expected true or false");
        goto out;
    }
    archived = json_is_true(a);
    json_object_del(o, "archived");
    json_t *en = json_object_get(o, "embedder");
    if (en && !json_is_null(en)) {
        const char *name = json_string_value(en);
        size_t el = name ? json_string_length(en) : 0;
        if (!name || el == 0 || el > MEM_STORE_EMBEDDER_MAX || strlen(name) != el) {
            char msg[96];
            snprintf(msg, sizeof(msg), "embedder: expected a string of 1 to %d bytes",
                     MEM_STORE_EMBEDDER_MAX);
            fail_line(imp, MEM_EINVAL, "embedder", msg);
            goto out;
        }
        if (!imp->embedder[0]) {
            memcpy(imp->embedder, name, el + 1);
        } else if (strcmp(imp->embedder, name) != 0) {
            char msg[160];
            snprintf(msg, sizeof(msg), "embedder: %.60s, but an earlier line names %.60s", name,
                     imp->embedder);
            fail_line(imp, MEM_EMISMATCH, "embedder", msg);
            goto out;
        }
    }
    json_object_del(o, "embedder");
    mem_store_seg_in_t seg;
    size_t dim = imp->dim;
    bool embedded = false;
    if (mem_api__decode_segment(imp->ctx, &pool, o, &dim, &seg, &embedded, &e) != MEM_OK) {
        fail_at(imp, &e);
        goto out;
    }
    imp->embedded |= embedded;
    imp->dim = dim;
    if (seg.ts_given) {
        if (imp->any_ts && seg.ts_ms < imp->last_ts) {
            char msg[160], given_s[32], last_s[32];
            mem_api__ts_format(seg.ts_ms, given_s);
            mem_api__ts_format(imp->last_ts, last_s);
            snprintf(msg, sizeof(msg), "timestamp: %s is older than %s of an earlier line", given_s,
                     last_s);
            fail_line(imp, MEM_ENONMONO, "timestamp", msg);
            imp->err.last_ms = imp->last_ts;
            imp->err.given_ms = seg.ts_ms;
            goto out;
        }
        imp->any_ts = true;
        imp->last_ts = seg.ts_ms;
    }
    uint64_t first = 0;
    int added = id_add(imp, seg.id, imp->line, &first);
    if (added != 0) {
        char msg[160];
        if (added < 0)
            fail_line(imp, MEM_ENOMEM, NULL, "out of memory");
        else {
            snprintf(msg, sizeof(msg), "id: %.80s is already on line %llu", seg.id,
                     (unsigned long long)first);
            fail_line(imp, MEM_EDUPID, "id", msg);
        }
        goto out;
    }
    if (!imp->rvec && !(imp->rvec = malloc(imp->dim * sizeof(float)))) {
        fail_line(imp, MEM_ENOMEM, NULL, "out of memory");
        goto out;
    }
    if (!spill(imp, &seg, archived)) {
        fail_line(imp, MEM_EFULL, NULL, "cannot stage the import (temporary file)");
        goto out;
    }
    imp->n_records++;
out:
    mem_api__pool_free(&pool);
    json_decref(o);
}

bool mem_api_is_import(const char *method, const char *path)
{
    static const char pre[] = "/v1/namespaces/";
    if (!method || !path || strcmp(method, "POST") != 0) return false;
    if (strncmp(path, pre, sizeof(pre) - 1) != 0) return false;
    const char *ns = path + sizeof(pre) - 1, *slash = strchr(ns, '/');
    return slash && slash > ns && strcmp(slash, "/import") == 0;
}

static bool ndjson_media(const char *ct)
{
    if (!ct) return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t l = strcspn(ct, ";");
    while (l && (ct[l - 1] == ' ' || ct[l - 1] == '\t'))
        l--;
    return l == 20 && strncasecmp(ct, "application/x-ndjson", 20) == 0;
}

bool mem_api_import_precheck(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                             mem_api_resp_t *resp)
{
    mem_api__route_t r;
    mem_err_t err;
    mem_err_clear(&err);
    resp->content_type = "application/json";
    snprintf(resp->route, sizeof(resp->route), "import");
    int rc = mem_api__route(req->method, req->path, &r, &err);
    if (rc == MEM_OK && r.kind != MEM_API_R_IMPORT)
        rc = mem_err_set(&err, MEM_ENOTFOUND, "no such endpoint");
    if (rc != MEM_OK) {
        if (rc == MEM_EMETHOD) resp->allow = r.allow;
        mem_api_error(resp, &err);
        return false;
    }
    if (req->query && *req->query) {
        size_t kl = strcspn(req->query, "=&"); /* the name alone, as every other route says */
        mem_api__fail(resp, MEM_EINVAL, "query", "unknown query parameter: %.*s",
                      (int)(kl > 64 ? 64 : kl), req->query);
        return false;
    }
    if (!ndjson_media(req->content_type)) {
        mem_api__fail(resp, MEM_EMEDIA, NULL,
                      "content type must be application/x-ndjson (one segment per line), got "
                      "%.100s",
                      req->content_type ? req->content_type : "none");
        return false;
    }
    return true;
}

mem_api_import_t *mem_api_import_begin(const mem_api_ctx_t *ctx, const mem_api_req_t *req,
                                       mem_api_resp_t *resp)
{
    if (!mem_api_import_precheck(ctx, req, resp)) return NULL;
    mem_api__route_t r;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_api__route(req->method, req->path, &r, &err);
    if (rc != MEM_OK) return NULL; /* checked above */
    mem_store_ns_stats_t s;
    size_t dim = 0;
    rc = mem_store_ns_stats(ctx->store, r.ns, &s, &err);
    if (rc == MEM_OK) {
        dim = s.dim;
    } else if (rc != MEM_ENOTFOUND) {
        mem_api__fail_call(resp, rc, &err);
        return NULL;
    }
    mem_api_import_t *imp = calloc(1, sizeof(*imp));
    if (!imp || !(imp->spill = tmpfile())) {
        free(imp);
        mem_api__fail(resp, MEM_ENOMEM, NULL, "cannot stage the import (temporary file)");
        return NULL;
    }
    imp->ctx = ctx;
    snprintf(imp->ns, sizeof(imp->ns), "%s", r.ns);
    imp->dim = dim;
    imp->last_log = now_s();
    imp->src = (mem_store_import_src_t){
        .ud = imp, .rewind = src_rewind, .next = src_next, .has_id_before = has_id_before};
    return imp;
}

bool mem_api_import_feed(mem_api_import_t *imp, const char *data, size_t len)
{
    size_t i = 0;
    while (!imp->failed && i < len) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (data + i)) : len - i;
        if (!imp->carry_too_long && imp->carry_len + n > MEM_API_MAX_IMPORT_LINE)
            imp->carry_too_long = true;
        if (!imp->carry_too_long) {
            if (imp->carry_len + n > imp->carry_cap) {
                size_t cap = imp->carry_cap ? imp->carry_cap : 65536;
                while (cap < imp->carry_len + n)
                    cap *= 2;
                char *p = realloc(imp->carry, cap);
                if (!p) {
                    fail_line(imp, MEM_ENOMEM, NULL, "out of memory");
                    break;
                }
                imp->carry = p;
                imp->carry_cap = cap;
            }
            if (n) memcpy(imp->carry + imp->carry_len, data + i, n);
            imp->carry_len += n;
        }
        i += n;
        if (!nl) break;
        i++; /* the newline */
        if (imp->carry_too_long) {
            imp->line++;
            char msg[96];
            snprintf(msg, sizeof(msg), "longer than %u bytes", MEM_API_MAX_IMPORT_LINE);
            fail_line(imp, MEM_EINVAL, NULL, msg);
            break;
        }
        one_line(imp, imp->carry, imp->carry_len);
        imp->carry_len = 0;
    }
    if (now_s() - imp->last_log >= IMPORT_LOG_S) {
        mem_log(imp->ctx->log, MEM_LOG_INFO, "import_reading", "ns=%s lines=%llu", imp->ns,
                (unsigned long long)imp->line);
        imp->last_log = now_s();
    }
    return !imp->failed;
}

void mem_api_import_end(mem_api_import_t *imp, mem_api_resp_t *resp)
{
    if (!imp->failed && (imp->carry_len || imp->carry_too_long)) { /* a last line without \n */
        if (imp->carry_too_long) {
            imp->line++;
            fail_line(imp, MEM_EINVAL, NULL, "line too long");
        } else {
            one_line(imp, imp->carry, imp->carry_len);
        }
        imp->carry_len = 0;
    }
    if (!imp->failed && imp->n_records == 0) {
        mem_api__fail(resp, MEM_EINVAL, NULL, "body: no segment to import");
        return;
    }
    if (imp->failed) {
        mem_api_error(resp, &imp->err);
        return;
    }
    const char *mine = mem_api__embedder_id(imp->ctx);
    if (imp->embedded && imp->embedder[0] && strcmp(imp->embedder, mine) != 0) {
        mem_api__fail(resp, MEM_EMISMATCH, "embedder",
                      "the lines' vectors were made by %.100s; text cannot be embedded for them "
                      "with %.100s (send an embedding)",
                      imp->embedder, mine);
        return;
    }
    mem_store_op_t *op =
        mem_api__new_op(imp->ctx, resp, MEM_API_P_IMPORT, MEM_STORE_OP_IMPORT, imp->ns);
    if (!op) return;
    imp->src.dim = imp->dim;
    op->import = &imp->src;
    op->dim = imp->dim;
    op->embedder = imp->embedder[0] ? imp->embedder : imp->embedded ? mine : NULL;
    resp->pending = op;
}

void mem_api_import_free(mem_api_import_t *imp)
{
    if (!imp) return;
    if (imp->spill) fclose(imp->spill);
    free(imp->carry);
    free(imp->ents);
    free(imp->ids);
    free(imp->rbuf);
    free(imp->rvec);
    free(imp->rsup);
    free(imp);
}
