/* fuzz_ndjson.c - libFuzzer target: the NDJSON line decoder of POST .../import
 * SPDX-License-Identifier: MIT
 *
 * Byte 0 picks the namespace (an existing one of dim 3, or a new one) and how the body is
 * cut into pieces (the server hands it over as it arrives); the rest is the body. Reads hit
 * the fake store of tests/unit/api_fake.h. Beyond "no crash, no leak": a refused import names
 * a 1-based line no later than the body's last, with a 4xx status; an accepted one spills
 * records that read back, twice, with ids of 1..128 bytes, the import's one dimension, unit
 * finite vectors, non-decreasing given timestamps and lines in increasing order.
 */
#include <math.h>

#include "tests/unit/api_fake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(c, ...)                                                                         \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz check failed at %s:%d: ", __FILE__, __LINE__);                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            __builtin_trap();                                                                      \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        ctx_init();
        init = 1;
    }
    if (size < 1) return 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1, piece = 1 + (data[0] >> 1) * 7;
    mem_api_req_t req = {.method = "POST",
                         .path = data[0] & 1 ? "/v1/namespaces/mem/import"
                                             : "/v1/namespaces/fresh/import",
                         .query = "",
                         .content_type = "application/x-ndjson"};
    mem_api_resp_t r;
    memset(&r, 0, sizeof(r));
    mem_api_import_t *imp = mem_api_import_begin(&test_ctx, &req, &r);
    FUZZ_CHECK(imp != NULL, "begin refused a well-formed request (status %d)", r.status);
    for (size_t off = 0; off < len; off += piece)
        if (!mem_api_import_feed(imp, body + off, len - off < piece ? len - off : piece)) break;
    mem_api_import_end(imp, &r);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += body[i] == '\n';
    if (!r.pending) {
        FUZZ_CHECK(r.status >= 400 && r.status < 500, "status %d", r.status);
        json_t *j = json_loadb(r.body, r.body_len, 0, NULL);
        json_t *e = json_object_get(j, "error");
        json_t *ln = json_object_get(e, "line");
        FUZZ_CHECK(e != NULL, "no error body");
        if (ln)
            FUZZ_CHECK(json_integer_value(ln) >= 1 && (size_t)json_integer_value(ln) <= lines,
                       "line %lld of %zu", (long long)json_integer_value(ln), lines);
        json_decref(j);
    } else {
        mem_store_op_t *op = r.pending;
        FUZZ_CHECK(op->kind == MEM_STORE_OP_IMPORT && op->import, "not an import op");
        mem_store_import_src_t *src = op->import;
        FUZZ_CHECK(src->dim >= 1 && src->dim <= 4096, "dim %zu", src->dim);
        if (data[0] & 1) FUZZ_CHECK(src->dim == 3, "the namespace's dim, got %zu", src->dim);
        for (int pass = 0; pass < 2; pass++) {
            FUZZ_CHECK(src->rewind(src->ud) == MEM_OK, "rewind");
            mem_store_seg_in_t seg;
            bool archived;
            uint64_t line, prev = 0;
            int64_t last_ts = INT64_MIN;
            int rc;
            size_t n = 0;
            while ((rc = src->next(src->ud, &seg, &archived, &line)) == 1) {
                size_t idl = strnlen(seg.id, sizeof(seg.id));
                FUZZ_CHECK(idl >= 1 && idl <= MEM_STORE_ID_MAX, "id length %zu", idl);
                FUZZ_CHECK(line > prev && line <= lines, "line %llu after %llu",
                           (unsigned long long)line, (unsigned long long)prev);
                prev = line;
                double s2 = 0;
                for (size_t i = 0; i < src->dim; i++) {
                    FUZZ_CHECK(isfinite(seg.vec[i]), "non-finite component");
                    s2 += (double)seg.vec[i] * (double)seg.vec[i];
                }
                FUZZ_CHECK(fabs(s2 - 1.0) < 1e-3, "norm^2 %g", s2);
                if (seg.ts_given) {
                    FUZZ_CHECK(seg.ts_ms >= last_ts, "timestamps go back");
                    last_ts = seg.ts_ms;
                }
                FUZZ_CHECK(!seg.text || seg.text_len <= MEM_API_MAX_TEXT, "text length");
                FUZZ_CHECK(src->has_id_before(src->ud, seg.id, line + 1), "id map");
                n++;
            }
            FUZZ_CHECK(rc == 0 && n >= 1, "read back: rc %d, %zu records", rc, n);
        }
    }
    mem_api_resp_deinit(&r);
    mem_api_import_free(imp);
    return 0;
}
