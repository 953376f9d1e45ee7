/* encode.c - results -> the JSON answers of SPEC section 3
 * SPDX-License-Identifier: MIT
 *
 * Every builder returns a new reference or NULL when an allocation failed (jansson's
 * *_set_new calls release their value even on failure, so a NULL anywhere propagates up
 * without leaking). Timestamps go out as RFC 3339 UTC with milliseconds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "core/b64.h"
#include "core/num.h"

json_t *mem_api__enc_ts(int64_t ms)
{
    char buf[32];
    mem_api__ts_format(ms, buf);
    return json_string(buf);
}

/* A float32 as the double nearest its shortest decimal (0.6f becomes 0.6, not
 * 0.600000024), so similarities print as the float would. */
static json_t *json_f32(float f)
{
    return json_real(mem_num_f32_to_f64_shortest(f));
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* set key = value (stolen); returns -1 on failure, which the caller turns into NULL */
static int set(json_t *obj, const char *key, json_t *value)
{
    return value ? json_object_set_new(obj, key, value) : -1;
}

/* set() for a child the caller built and holds in *child: the parent takes it, or jansson
 * frees it on failure; either way *child is NULL after, so the caller's cleanup skips it. */
static int give(json_t *obj, const char *key, json_t **child)
{
    json_t *c = *child;
    *child = NULL;
    return set(obj, key, c);
}

/* Stored metadata is a compact JSON object text written by this API; parse it back so it
 * is returned verbatim. Rows read back are untrusted: an unparsable one is skipped, but a
 * parse that ran out of memory fails the answer (never a 200 without the metadata). */
static int set_metadata(json_t *obj, const char *metadata)
{
    if (!metadata) return 0;
    json_t *m = NULL;
    int rc = mem_api__json_parse(metadata, strlen(metadata), NULL, NULL, &m, NULL);
    if (rc != MEM_OK) return rc == MEM_ENOMEM ? -1 : 0;
    return json_object_set_new(obj, "metadata", m);
}

json_t *mem_api__enc_stats(const mem_store_ns_stats_t *s)
{
    json_t *o = json_object();
    if (!o) return NULL;
    if (set(o, "name", json_string(s->name)) ||
        set(o, "count", json_integer((json_int_t)s->count)) ||
        set(o, "superseded", json_integer((json_int_t)s->superseded)) ||
        set(o, "archived", json_integer((json_int_t)s->archived)) ||
        set(o, "dim", json_integer((json_int_t)s->dim)) ||
        set(o, "oldest", s->empty ? json_null() : mem_api__enc_ts(s->oldest_ms)) ||
        set(o, "newest", s->empty ? json_null() : mem_api__enc_ts(s->newest_ms)) ||
        set(o, "coherence", json_boolean(s->coherence)) ||
        set(o, "graph_edges", json_integer((json_int_t)s->graph_edges)) ||
        set(o, "max_degree", json_integer((json_int_t)s->max_degree)) ||
        set(o, "embedder", s->embedder[0] ? json_string(s->embedder) : json_null())) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *mem_api__enc_segment(const mem_store_segment_t *seg)
{
    return mem_api__enc_segment_form(seg, MEM_API_EMB_ARRAY);
}

/* The base64 of v[0..n) as little-endian float32 (new reference, NULL on ENOMEM). */
static json_t *json_b64_f32(const float *v, size_t n)
{
    size_t len = MEM_B64_LEN(4 * n);
    char *buf = malloc(len + 1);
    if (!buf) return NULL;
    mem_b64_encode_f32le(v, n, buf);
    json_t *j = json_stringn_nocheck(buf, len);
    free(buf);
    return j;
}

json_t *mem_api__enc_segment_form(const mem_store_segment_t *seg, mem_api__emb_form_t form)
{
    json_t *o = json_object(), *sup = json_array();
    if (!o || !sup) goto fail;
    for (size_t i = 0; i < seg->n_supersedes; i++)
        if (json_array_append_new(sup, json_string(seg->supersedes[i]))) goto fail;
    if (set(o, "id", json_string(seg->id)) || set(o, "seq", json_integer(seg->seq)) ||
        set(o, "timestamp", mem_api__enc_ts(seg->ts_ms)) ||
        (seg->text && set(o, "text", json_string(seg->text))) ||
        (seg->source && set(o, "source", json_string(seg->source))) ||
        set_metadata(o, seg->metadata))
        goto fail;
    if (give(o, "supersedes", &sup)) goto fail;
    if (set(o, "superseded_by", str_or_null(seg->superseded_by)) ||
        set(o, "archived", json_boolean(seg->archived)))
        goto fail;
    if (seg->embedding && form != MEM_API_EMB_NONE &&
        set(o, "embedding",
            form == MEM_API_EMB_BASE64 ? json_b64_f32(seg->embedding, seg->dim)
                                       : mem_api__vec_node(seg->embedding, seg->dim)))
        goto fail;
    return o;
fail:
    json_decref(sup);
    json_decref(o);
    return NULL;
}

/* SPEC: age_seconds is |origin - ts| before the offset is taken off. */
static double age_before_offset(int64_t origin_ms, int64_t ts_ms)
{
    int64_t d = origin_ms - ts_ms;
    return (double)(d < 0 ? -d : d) / 1000.0;
}

static const char *match_name(mem_scan_match_t m)
{
    return m == MEM_SCAN_MATCH_TEXT ? "text" : m == MEM_SCAN_MATCH_HYBRID ? "hybrid" : "vector";
}

/* The answer as a tree: the reference mem_api__enc_results_text is tested against
 * (tests/unit/test_api_json.c), byte for byte. */
json_t *mem_api__enc_results(const char *ns, const mem_store_result_t *res, size_t n,
                             size_t scanned, const char *kernel, double took_ms, bool explain,
                             int64_t origin_ms, mem_scan_match_t match)
{
    json_t *o = json_object(), *arr = json_array();
    if (!o || !arr) goto fail;
    for (size_t i = 0; i < n; i++) {
        const mem_store_result_t *r = &res[i];
        json_t *h = json_object();
        if (!h || json_array_append_new(arr, h)) goto fail;
        if (set(h, "id", json_string(r->id)) || set(h, "seq", json_integer(r->hit.seq)) ||
            set(h, "score", json_real(r->hit.score)) ||
            set(h, "timestamp", mem_api__enc_ts(r->ts_ms)) ||
            (r->text && set(h, "text", json_string(r->text))) ||
            (r->source && set(h, "source", json_string(r->source))) || set_metadata(h, r->metadata))
            goto fail;
        if (explain &&
            (set(h, "similarity", json_f32(r->hit.sim)) ||
             set(h, "decay", json_real(r->hit.decay)) || set(h, "gate", json_real(r->hit.gate)) ||
             set(h, "age_seconds", json_real(age_before_offset(origin_ms, r->ts_ms))) ||
             (match != MEM_SCAN_MATCH_VECTOR &&
              set(h, "text_score", json_real(r->hit.text_score))) ||
             (match != MEM_SCAN_MATCH_TEXT &&
              set(h, "vector_score", json_f32((float)r->hit.vector_score)))))
            goto fail;
    }
    if (set(o, "namespace", json_string(ns)) || set(o, "took_ms", json_real(took_ms)) ||
        set(o, "scanned", json_integer((json_int_t)scanned)) ||
        set(o, "kernel", json_string(kernel ? kernel : "scalar")) ||
        set(o, "match", json_string(match_name(match))))
        goto fail;
    if (give(o, "results", &arr)) goto fail;
    return o;
fail:
    json_decref(arr);
    json_decref(o);
    return NULL;
}

/* A timestamp as mem_api__enc_ts writes it: quoted RFC 3339 ("" when out of range). */
static void jw_ts(mem_api__jw_t *w, int64_t ms)
{
    char buf[32];
    mem_api__ts_format(ms, buf);
    MEM_API_JW_LIT(w, "\"");
    mem_api__jw_raw(w, buf, strlen(buf));
    MEM_API_JW_LIT(w, "\"");
}

/* Stored metadata goes out as it parses (set_metadata): an unparsable text is left out,
 * and a parse that ran out of memory fails the answer. */
static void jw_metadata(mem_api__jw_t *w, const char *metadata)
{
    if (!metadata) return;
    json_t *m = NULL;
    int rc = mem_api__json_parse(metadata, strlen(metadata), NULL, NULL, &m, NULL);
    if (rc == MEM_ENOMEM) w->oom = true;
    if (rc != MEM_OK) return;
    MEM_API_JW_LIT(w, ",\"metadata\":");
    mem_api__jw_value(w, m);
    json_decref(m);
}

/* The same text as mem_api__dump(mem_api__enc_results(...)), written straight out: the
 * answer of every retrieve, where a json_t per field (and a hash insert per key) cost
 * more than the writing. */
char *mem_api__enc_results_text(const char *ns, const mem_store_result_t *res, size_t n,
                                size_t scanned, const char *kernel, double took_ms, bool explain,
                                int64_t origin_ms, mem_scan_match_t match, size_t *len)
{
    mem_api__jw_t w = {0};
    MEM_API_JW_LIT(&w, "{\"namespace\":");
    mem_api__jw_str(&w, ns);
    MEM_API_JW_LIT(&w, ",\"took_ms\":");
    mem_api__jw_f64(&w, took_ms);
    MEM_API_JW_LIT(&w, ",\"scanned\":");
    mem_api__jw_i64(&w, (int64_t)scanned);
    MEM_API_JW_LIT(&w, ",\"kernel\":");
    mem_api__jw_str(&w, kernel ? kernel : "scalar");
    MEM_API_JW_LIT(&w, ",\"match\":");
    mem_api__jw_str(&w, match_name(match));
    MEM_API_JW_LIT(&w, ",\"results\":[");
    for (size_t i = 0; i < n && !w.oom; i++) {
        const mem_store_result_t *r = &res[i];
        if (i) MEM_API_JW_LIT(&w, ",");
        MEM_API_JW_LIT(&w, "{\"id\":");
        mem_api__jw_str(&w, r->id);
        MEM_API_JW_LIT(&w, ",\"seq\":");
        mem_api__jw_i64(&w, r->hit.seq);
        MEM_API_JW_LIT(&w, ",\"score\":");
        mem_api__jw_f64(&w, r->hit.score);
        MEM_API_JW_LIT(&w, ",\"timestamp\":");
        jw_ts(&w, r->ts_ms);
        if (r->text) {
            MEM_API_JW_LIT(&w, ",\"text\":");
            mem_api__jw_str(&w, r->text);
        }
        if (r->source) {
            MEM_API_JW_LIT(&w, ",\"source\":");
            mem_api__jw_str(&w, r->source);
        }
        jw_metadata(&w, r->metadata);
        if (explain) {
            MEM_API_JW_LIT(&w, ",\"similarity\":");
            mem_api__jw_f64(&w, mem_num_f32_to_f64_shortest(r->hit.sim));
            MEM_API_JW_LIT(&w, ",\"decay\":");
            mem_api__jw_f64(&w, r->hit.decay);
            MEM_API_JW_LIT(&w, ",\"gate\":");
            mem_api__jw_f64(&w, r->hit.gate);
            MEM_API_JW_LIT(&w, ",\"age_seconds\":");
            mem_api__jw_f64(&w, age_before_offset(origin_ms, r->ts_ms));
            if (match != MEM_SCAN_MATCH_VECTOR) {
                MEM_API_JW_LIT(&w, ",\"text_score\":");
                mem_api__jw_f64(&w, r->hit.text_score);
            }
            if (match != MEM_SCAN_MATCH_TEXT) {
                MEM_API_JW_LIT(&w, ",\"vector_score\":");
                mem_api__jw_f64(&w, mem_num_f32_to_f64_shortest((float)r->hit.vector_score));
            }
        }
        MEM_API_JW_LIT(&w, "}");
    }
    MEM_API_JW_LIT(&w, "]}");
    return mem_api__jw_finish(&w, len);
}

json_t *mem_api__enc_inserted(const mem_store_op_t *op)
{
    json_t *o = json_object(), *arr = json_array();
    if (!o || !arr) goto fail;
    for (size_t i = 0; i < op->n_segs; i++) {
        json_t *h = json_object();
        if (!h || json_array_append_new(arr, h)) goto fail;
        if (set(h, "id", json_string(op->segs[i].id)) ||
            set(h, "seq", json_integer(op->outs[i].seq)) ||
            set(h, "timestamp", mem_api__enc_ts(op->outs[i].ts_ms)))
            goto fail;
    }
    if (give(o, "inserted", &arr)) goto fail;
    return o;
fail:
    json_decref(arr);
    json_decref(o);
    return NULL;
}

json_t *mem_api__enc_compact(size_t before, size_t after, mem_compact_policy_t policy,
                             char *const *ids, size_t n_ids, double took_ms)
{
    json_t *o = json_object(), *arr = json_array();
    if (!o || !arr) goto fail;
    for (size_t i = 0; i < n_ids; i++)
        if (json_array_append_new(arr, json_string(ids[i]))) goto fail;
    if (set(o, "before", json_integer((json_int_t)before)) ||
        set(o, "after", json_integer((json_int_t)after)) ||
        set(o, "policy", json_string(mem_compact_policy_name(policy))))
        goto fail;
    if (give(o, "evicted", &arr)) goto fail;
    if (set(o, "took_ms", json_real(took_ms))) goto fail;
    return o;
fail:
    json_decref(arr);
    json_decref(o);
    return NULL;
}

void mem_api__send_text(mem_api_resp_t *resp, int status, char *text, size_t len)
{
    if (!text) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    free(resp->body);
    resp->body = text;
    resp->body_len = len;
    resp->status = status;
    resp->content_type = "application/json";
}

void mem_api__send_json(mem_api_resp_t *resp, int status, json_t *obj)
{
    char *s = obj ? mem_api__dump(obj) : NULL;
    json_decref(obj);
    if (!s) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    free(resp->body);
    resp->body = s;
    resp->body_len = strlen(s);
    resp->status = status;
    resp->content_type = "application/json";
}
