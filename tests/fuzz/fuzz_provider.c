/* fuzz_provider.c - libFuzzer target: an embedding provider's answers (embedder/wire.c)
 * SPDX-License-Identifier: MIT
 *
 * Byte 0 sets the number of inputs asked for (1..8), byte 1 the expected dimension (0 = any,
 * else 1..255); the rest is the answer body. Properties beyond "no crash": an accepted
 * answer has the expected (or a valid) dimension and only finite floats; the out-params
 * are untouched on error; the provider's error words are printable ASCII within the
 * buffer; a Retry-After value never yields a negative delay other than -1; request bodies
 * built from the same bytes are either refused (not UTF-8) or valid JSON.
 */
#include <math.h>

#include <jansson.h>

#include "embedder/embedder.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    size_t n = (size_t)(data[0] % 8) + 1, want = data[1];
    const uint8_t *in = data + 2;
    size_t len = size - 2;
    char *body = fuzz_dup(in, len, 0);
    float *vecs = (float *)(uintptr_t)0x1;
    size_t dim = 77;
    mem_err_t err;
    mem_err_clear(&err);
    int rc = mem_emb_decode(body, len, n, want, &vecs, &dim, &err);
    if (rc == MEM_OK) {
        FUZZ_CHECK(dim >= 1 && dim <= 4096, "dim %zu", dim);
        FUZZ_CHECK(!want || dim == want, "dim %zu, want %zu", dim, want);
        for (size_t i = 0; i < n * dim; i++)
            FUZZ_CHECK(isfinite(vecs[i]), "vecs[%zu] not finite", i);
        free(vecs);
    } else {
        FUZZ_CHECK(rc == MEM_EEMBED || rc == MEM_ENOMEM, "rc %d", rc);
        FUZZ_CHECK(vecs == (float *)(uintptr_t)0x1 && dim == 77, "out-params written on error");
        FUZZ_CHECK(err.code == rc && err.msg[0], "no message for rc %d", rc);
    }
    char words[48];
    mem_emb_error_text(body, len, words, sizeof(words));
    size_t wl = strnlen(words, sizeof(words));
    FUZZ_CHECK(wl < sizeof(words), "error text not terminated");
    for (size_t i = 0; i < wl; i++)
        FUZZ_CHECK(words[i] >= 0x20 && words[i] < 0x7f, "error text byte %zu", i);
    char *z = fuzz_dup(in, len < 64 ? len : 64, 1);
    double ra = mem_emb_retry_after(z, 1.7e9);
    FUZZ_CHECK(ra == -1 || ra >= 0, "retry after %g", ra);
    free(z);
    /* the same bytes as texts of a request body */
    const char *texts[2] = {body, body + len / 2};
    size_t lens[2] = {len / 2, len - len / 2};
    size_t blen = 0;
    char *req = mem_emb_encode("model", texts, lens, 2, &blen);
    if (req) {
        json_t *j = json_loadb(req, blen, JSON_ALLOW_NUL, NULL); /* "\u0000" is valid JSON */
        FUZZ_CHECK(j && json_array_size(json_object_get(j, "input")) == 2, "bad request body");
        json_decref(j);
        free(req);
    }
    free(body);
    return 0;
}
