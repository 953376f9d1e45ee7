/* fuzz_decode.c - libFuzzer target: the JSON request decoders of api/ (no store)
 * SPDX-License-Identifier: MIT
 *
 * Byte 0 picks the decoder (insert, retrieve, compact, namespace create), byte 1 the
 * namespace's dimension (0 = does not exist); the rest is the body. Beyond "no crash, no
 * leak": a decoded request respects every limit of SPEC section 3 (vectors are unit and
 * finite, dim 1..4096, batch within max-batch, ids 1..128 bytes, text <= 1 MiB, timestamps
 * non-decreasing in a batch and not in the future, k 1..1000, weights in range), and an
 * error carries a message and an HTTP status below 500.
 */
#include <math.h>

#include "api/api_int.h"
#include "core/vec.h"
#include "tests/fuzz/fuzz_common.h"

#define NOW_MS INT64_C(1785490200000) /* 2026-07-31T09:30:00Z */

static mem_cfg_t cfg;
static mem_api_ctx_t ctx;

static int64_t fixed_now(void)
{
    return NOW_MS;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    mem_cfg_defaults(&cfg);
    cfg.embed_dim = 16;
    cfg.max_batch = 64;
    mem_vec_init(mem_vec_best_isa());
    ctx.cfg = &cfg;
    ctx.ops = mem_vec_ops();
    ctx.now_ms = fixed_now;
    return 0;
}

static void check_unit(const float *v, size_t dim, const char *what)
{
    FUZZ_CHECK(v != NULL, "%s: no vector", what);
    double s = 0;
    for (size_t i = 0; i < dim; i++) {
        FUZZ_CHECK(isfinite(v[i]), "%s: non-finite component %zu", what, i);
        s += (double)v[i] * (double)v[i];
    }
    FUZZ_CHECK(fabs(s - 1.0) < 1e-3, "%s: norm^2 %g after normalisation", what, s);
}

static void check_err(int rc, const mem_err_t *err)
{
    FUZZ_CHECK(rc < 0 && err->code == rc, "rc %d, err.code %d", rc, err->code);
    FUZZ_CHECK(err->msg[0] != '\0', "error %d without a message", rc);
    int st = mem_err_http_status(rc);
    FUZZ_CHECK(st >= 400 && (st < 500 || rc == MEM_ENOMEM), "client input gave status %d: %s", st,
               err->msg);
    json_t *e = mem_api__enc_error(err);
    FUZZ_CHECK(e != NULL, "error body not encodable");
    char *txt = json_dumps(e, JSON_COMPACT);
    FUZZ_CHECK(txt != NULL, "error body not serialisable");
    json_t *back = json_loads(txt, 0, NULL);
    FUZZ_CHECK(back && json_is_object(json_object_get(back, "error")), "bad error body %s", txt);
    json_decref(back);
    free(txt);
    json_decref(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t DIMS[] = {0, 1, 3, 8, 16, 4096, 2, 5};
    if (size < 2) return 0;
    int which = data[0] % 4;
    size_t ns_dim = DIMS[data[1] % (sizeof(DIMS) / sizeof(DIMS[0]))];
    char *body = fuzz_dup(data + 2, size - 2, 0);
    mem_err_t err;
    mem_err_clear(&err);
    json_t *root = NULL;
    mem_api__pool_t pool = {0};
    int rc = mem_api__parse_body(body, size - 2, &root, &err);
    if (rc != MEM_OK) {
        FUZZ_CHECK(rc == MEM_EJSON || rc == MEM_EINVAL, "parse gave %d",
                   rc); /* EINVAL: not an object */
        check_err(rc, &err);
        goto out;
    }
    switch (which) {
    case 0: {
        mem_api__insert_in_t in;
        memset(&in, 0, sizeof(in));
        rc = mem_api__decode_insert(&ctx, &pool, root, ns_dim, &in, &err);
        if (rc != MEM_OK) break;
        FUZZ_CHECK(in.n_segs >= 1 && in.n_segs <= cfg.max_batch, "batch of %zu", in.n_segs);
        FUZZ_CHECK(in.dim >= 1 && in.dim <= MEM_API_MAX_DIM, "dim %zu", in.dim);
        FUZZ_CHECK(ns_dim == 0 || in.dim == ns_dim, "dim %zu in a namespace of %zu", in.dim,
                   ns_dim);
        int64_t last = INT64_MIN;
        for (size_t i = 0; i < in.n_segs; i++) {
            const mem_store_seg_in_t *s = &in.segs[i];
            size_t idl = strnlen(s->id, sizeof(s->id));
            FUZZ_CHECK(idl >= 1 && idl <= MEM_STORE_ID_MAX, "id length %zu", idl);
            check_unit(s->vec, in.dim, "segment vector");
            FUZZ_CHECK(!s->text || s->text_len <= MEM_API_MAX_TEXT, "text of %zu", s->text_len);
            FUZZ_CHECK(!s->source || s->source_len <= MEM_API_MAX_SOURCE, "source %zu",
                       s->source_len);
            if (s->metadata) {
                json_t *m = json_loadb(s->metadata, s->metadata_len, 0, NULL);
                FUZZ_CHECK(m && json_is_object(m), "metadata is not an object: %.*s",
                           (int)s->metadata_len, s->metadata);
                json_decref(m);
            }
            for (size_t j = 0; j < s->n_supersedes; j++) {
                size_t l = strlen(s->supersedes[j]);
                FUZZ_CHECK(l >= 1 && l <= MEM_STORE_ID_MAX, "supersedes id of %zu", l);
            }
            if (s->ts_given) {
                FUZZ_CHECK(s->ts_ms >= last, "batch timestamps go backwards");
                FUZZ_CHECK(s->ts_ms <= NOW_MS + (int64_t)(cfg.max_future_skew_s * 1000.0),
                           "timestamp in the future accepted");
                last = s->ts_ms;
            }
        }
        break;
    }
    case 1: {
        mem_api__retrieve_in_t in;
        memset(&in, 0, sizeof(in));
        /* the default match of a text query varies with the namespace, as in the server */
        mem_api__text_match_t dflt = {(mem_scan_match_t)(ns_dim % 3), 0.9};
        rc = mem_api__decode_retrieve(&ctx, &pool, root, ns_dim, &dflt, &in, &err);
        if (rc != MEM_OK) break;
        const mem_scan_params_t *p = &in.q.scan;
        FUZZ_CHECK(p->k >= 1 && p->k <= MEM_SCAN_MAX_K, "k %zu", p->k);
        FUZZ_CHECK(p->match <= MEM_SCAN_MATCH_HYBRID, "match %d", (int)p->match);
        if (p->match != MEM_SCAN_MATCH_VECTOR)
            FUZZ_CHECK(in.q.text && in.q.text_len > 0, "text match without a query text");
        if (p->match == MEM_SCAN_MATCH_TEXT) {
            FUZZ_CHECK(!p->query && in.q.q_dim == 0, "text match with a vector");
        } else {
            FUZZ_CHECK(in.q.q_dim >= 1 && in.q.q_dim <= MEM_API_MAX_DIM, "q_dim %zu", in.q.q_dim);
            check_unit(p->query, in.q.q_dim, "query");
        }
        FUZZ_CHECK(p->decay.recency_bias >= 0 && p->decay.recency_bias <= 1, "recency_bias");
        FUZZ_CHECK(p->coherence_weight >= 0 && p->coherence_weight <= 1, "coherence_weight");
        FUZZ_CHECK(p->decay.half_life_s >= 0 && isfinite(p->decay.half_life_s), "half_life");
        FUZZ_CHECK(p->decay.offset_s >= 0 && isfinite(p->decay.offset_s), "offset");
        FUZZ_CHECK(!p->has_min_score || isfinite(p->min_score), "min_score");
        if (p->decay.kind == MEM_DECAY_WEIBULL)
            FUZZ_CHECK(p->decay.shape > 0 && p->decay.shape <= 10, "shape %g", p->decay.shape);
        break;
    }
    case 2: {
        mem_api__compact_in_t in;
        memset(&in, 0, sizeof(in));
        rc = mem_api__decode_compact(&ctx, &pool, root, ns_dim, &in, &err);
        if (rc != MEM_OK) break;
        const mem_store_compact_req_t *r = &in.req;
        FUZZ_CHECK(r->has_target || (r->ratio > 0 && r->ratio <= 1), "ratio %g", r->ratio);
        FUZZ_CHECK(isfinite(r->alpha) && r->alpha >= 0 && isfinite(r->beta) && r->beta >= 0 &&
                       isfinite(r->gamma) && r->gamma >= 0,
                   "weights");
        FUZZ_CHECK(isfinite(r->dedup_threshold) && r->dedup_threshold >= 0, "dedup_threshold");
        if (r->context_given && r->n_context) {
            size_t d = r->context_dim ? r->context_dim : ns_dim;
            FUZZ_CHECK(r->n_context <= MEM_API_MAX_CONTEXT, "context of %zu", r->n_context);
            for (size_t i = 0; d && i < r->n_context; i++)
                check_unit(r->context + i * d, d, "context vector");
        }
        break;
    }
    default: {
        size_t dim = 0;
        bool coherence;
        rc = mem_api__decode_ns_create(&ctx, root, &dim, &coherence, &err);
        if (rc == MEM_OK) FUZZ_CHECK(dim >= 1 && dim <= MEM_API_MAX_DIM, "dim %zu", dim);
        break;
    }
    }
    if (rc != MEM_OK) check_err(rc, &err);
out:
    json_decref(root);
    mem_api__pool_free(&pool);
    free(body);
    return 0;
}
