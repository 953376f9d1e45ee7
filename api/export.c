/* export.c - GET .../export: every stored segment as one NDJSON line, streamed
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. The handler opens the store's export (one snapshot, taken now) and hands server/
 * a stream; each fill encodes lines until the chunk is full, keeping at most one line that
 * did not fit, so memory stays bounded by the chunk and the largest line whatever the
 * namespace's size. A line is the segment as GET .../segments/{id}?embedding=true shows it,
 * less seq and superseded_by, with text, source and metadata null when absent, plus the
 * embedder the namespace recorded (when it did: the import records it again, so the copy's
 * default match and embedder checks are the original's): the insert object that
 * POST .../import accepts as it is. ?embedding=base64 writes each vector as the base64 of
 * its little-endian float32 (about a third of the text, and no decimal parsing on import).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

struct mem_api_stream {
    mem_store_export_t *x;
    const mem_log_t *log; /* the server's (ctx->log) */
    char *line;           /* encoded, with its newline; line_off bytes of it already handed out */
    size_t line_len, line_off;
    bool eof, failed;
    mem_api__emb_form_t form; /* the vectors as arrays or base64 */
};

void mem_api_stream_free(mem_api_stream_t *s)
{
    if (!s) return;
    mem_store_export_close(s->x);
    free(s->line);
    free(s);
}

static char *encode_line(const mem_store_segment_t *seg, mem_api__emb_form_t form,
                         const char *embedder, size_t *len)
{
    json_t *o = mem_api__enc_segment_form(seg, form);
    if (!o) return NULL;
    if (embedder && json_object_set_new(o, "embedder", json_string(embedder)) != 0) {
        json_decref(o);
        return NULL;
    }
    json_object_del(o, "seq");
    json_object_del(o, "superseded_by");
    static const char *const NULLABLE[] = {"text", "source", "metadata"};
    bool ok = true;
    for (size_t i = 0; ok && i < 3; i++)
        if (!json_object_get(o, NULLABLE[i]))
            ok = json_object_set_new(o, NULLABLE[i], json_null()) == 0;
    char *s = ok ? mem_api__dump(o) : NULL;
    json_decref(o);
    if (!s) return NULL;
    size_t l = strlen(s);
    char *line = realloc(s, l + 2);
    if (!line) {
        free(s);
        return NULL;
    }
    line[l] = '\n';
    line[l + 1] = '\0';
    *len = l + 1;
    return line;
}

long mem_api_stream_fill(mem_api_stream_t *s, char *buf, size_t cap)
{
    size_t o = 0;
    while (o < cap && !s->failed) {
        if (s->line_off < s->line_len) {
            size_t n = s->line_len - s->line_off;
            if (n > cap - o) n = cap - o;
            memcpy(buf + o, s->line + s->line_off, n);
            s->line_off += n;
            o += n;
            continue;
        }
        if (s->eof) break;
        mem_store_segment_t *seg = NULL;
        mem_err_t err;
        mem_err_clear(&err);
        int rc = mem_store_export_next(s->x, &seg, &err);
        if (rc == 0) {
            s->eof = true;
            break;
        }
        free(s->line);
        s->line = NULL;
        s->line_len = s->line_off = 0;
        if (rc < 0 ||
            !(s->line = encode_line(seg, s->form, mem_store_export_embedder(s->x), &s->line_len))) {
            mem_log(s->log, MEM_LOG_ERROR, "export_failed", "err=%s",
                    rc < 0 ? err.msg : "out of memory");
            s->failed = true;
        }
        mem_store_segment_free(seg);
    }
    if (o > 0) return (long)o;
    return s->failed ? -1 : 0;
}

void mem_api__export(const mem_api_ctx_t *ctx, const char *ns, mem_api__emb_form_t form,
                     mem_api_resp_t *resp)
{
    mem_err_t err;
    mem_err_clear(&err);
    mem_api_stream_t *s = calloc(1, sizeof(*s));
    if (!s) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    s->log = ctx->log;
    s->form = form;
    int rc = mem_store_export_open(ctx->store, ns, &s->x, &err);
    if (rc != MEM_OK) {
        free(s);
        mem_api__fail_call(resp, rc, &err);
        return;
    }
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    resp->status = 200;
    resp->content_type = "application/x-ndjson";
    resp->stream = s;
}
