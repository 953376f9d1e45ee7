/* wire.c - the OpenAI-compatible embeddings wire protocol: request bodies, answers
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Answers come from another program and are untrusted: every field is checked for
 * type and range before a float is copied, the count must equal the inputs', each input
 * must be answered exactly once, and one dimension must hold for all. The providers this
 * speaks to differ in small ways the decoder accepts: "index" may be absent (then the
 * order is the inputs'), entries may come in any order, and an embedding may be a JSON
 * array or the base64 of little-endian float32 values (what encoding_format "base64"
 * returns). Error answers carry their words in different places (OpenAI and LiteLLM
 * "error.message", Ollama and text-embeddings-inference "error", vLLM "message", FastAPI
 * servers "detail"); mem_emb_error_text looks in each.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/b64.h"
#include "embedder/embedder.h"

#define MAX_DIM 4096

/* jansson's text functions go on after a failed allocation: its parser drops the byte it
 * was saving and reads on (jansson issue #362), which gives other floats, a syntax error,
 * or, when the byte was a string's closing quote, a copy that runs past the string's
 * buffer; json_dumps drops a key's text and returns the rest as if whole. So while one of
 * them runs on this thread a failure is sticky: every later allocation of that call fails
 * too (the string copy's own buffer, so it never starts), and the call is out of memory
 * whatever it returned. A provider's answer never decodes to other floats, nor to a 502,
 * for want of memory, and no request goes out with a key missing. */
static __thread bool wire_json_in_text, wire_json_failed;
static json_malloc_t wire_prev_malloc = malloc;

static void *wire_json_malloc(size_t n)
{
    if (wire_json_in_text && wire_json_failed) return NULL;
    void *p = wire_prev_malloc(n);
    if (!p) wire_json_failed = true;
    return p;
}

/* Before main, while there is one thread: json_set_alloc_funcs is process-wide. The hook
 * chains to the allocator installed before it (cluster/json.c keeps one of its own the
 * same way, and either may come first). */
__attribute__((constructor)) static void wire_json_hook(void)
{
    json_malloc_t m = NULL;
    json_free_t f = NULL;
    json_get_alloc_funcs(&m, &f);
    if (m == wire_json_malloc) return;
    wire_prev_malloc = m ? m : malloc;
    json_set_alloc_funcs(wire_json_malloc, f ? f : free);
}

static void text_begin(void)
{
    wire_json_in_text = true;
    wire_json_failed = false;
}

/* Whether an allocation failed since text_begin. */
static bool text_end(void)
{
    bool failed = wire_json_failed;
    wire_json_in_text = wire_json_failed = false;
    return failed;
}

/* json_loadb that fails with *oom set when an allocation failed during the parse. */
static json_t *wire_parse(const char *body, size_t len, json_error_t *jerr, bool *oom)
{
    text_begin();
    json_t *root = json_loadb(body, len, 0, jerr);
    *oom = text_end();
    if (*oom) {
        json_decref(root);
        root = NULL;
    }
    return root;
}

char *mem_emb_encode(const char *model, const char *const *texts, const size_t *lens, size_t n,
                     size_t *len)
{
    json_t *root = json_object(), *input = json_array();
    char *out = NULL;
    if (!root || !input || json_object_set_new(root, "model", json_string(model))) goto out;
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_stringn(texts[i], lens[i]); /* NULL for invalid UTF-8 */
        if (!s || json_array_append_new(input, s)) goto out;
    }
    if (json_object_set(root, "input", input)) goto out;
    text_begin();
    out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (text_end()) { /* a key may be missing from what it returned */
        free(out);
        out = NULL;
    }
    if (out) *len = strlen(out);
out:
    json_decref(input);
    json_decref(root);
    return out;
}

/* Floats of one embedding into dst (up to MAX_DIM); *d its dimension. */
static int decode_vector(const json_t *e, size_t i, float *dst, size_t *d, mem_err_t *err)
{
    if (json_is_array(e)) {
        size_t m = json_array_size(e);
        if (m == 0 || m > MAX_DIM)
            return mem_err_set(err, MEM_EEMBED,
                               "embedder: the provider's answer has an embedding of %zu floats "
                               "(data[%zu]; 1 to %d expected)",
                               m, i, MAX_DIM);
        for (size_t k = 0; k < m; k++) {
            const json_t *x = json_array_get(e, k);
            double v = json_number_value(x);
            if (!json_is_number(x) || !isfinite(v) || fabs(v) > FLT_MAX)
                return mem_err_set(err, MEM_EEMBED,
                                   "embedder: the provider's answer has a value that is not a "
                                   "finite float (data[%zu].embedding[%zu])",
                                   i, k);
            dst[k] = (float)v;
        }
        *d = m;
        return MEM_OK;
    }
    if (json_is_string(e)) {
        size_t m = 0;
        if (mem_b64_decode_f32le(json_string_value(e), json_string_length(e), dst, MAX_DIM, &m,
                                 NULL, NULL) != MEM_OK ||
            m == 0)
            return mem_err_set(err, MEM_EEMBED,
                               "embedder: the provider's answer has an embedding that is not the "
                               "base64 of 1 to %d float32 values (data[%zu])",
                               MAX_DIM, i);
        for (size_t k = 0; k < m; k++)
            if (!isfinite(dst[k]))
                return mem_err_set(err, MEM_EEMBED,
                                   "embedder: the provider's answer has a value that is not a "
                                   "finite float (data[%zu].embedding[%zu])",
                                   i, k);
        *d = m;
        return MEM_OK;
    }
    return mem_err_set(err, MEM_EEMBED,
                       "embedder: the provider's answer has no embedding array (data[%zu])", i);
}

int mem_emb_decode(const char *body, size_t len, size_t n, size_t want_dim, float **vecs,
                   size_t *dim, mem_err_t *err)
{
    json_error_t jerr;
    bool oom;
    json_t *root = wire_parse(body, len, &jerr, &oom);
    float *all = NULL, *one = NULL;
    unsigned char *seen = NULL;
    int rc = MEM_OK;
    if (oom) return mem_err_set(err, MEM_ENOMEM, "embedder: out of memory reading the answer");
    if (!root) {
        return mem_err_set(err, MEM_EEMBED, "embedder: the provider's answer is not JSON (%.80s)",
                           jerr.text);
    }
    const json_t *data = json_object_get(root, "data");
    if (!json_is_array(data)) {
        rc = mem_err_set(err, MEM_EEMBED,
                         "embedder: the provider's answer has no \"data\" array of embeddings");
        goto out;
    }
    if (json_array_size(data) != n) {
        rc = mem_err_set(err, MEM_EEMBED,
                         "embedder: the provider answered %zu embeddings for %zu inputs",
                         json_array_size(data), n);
        goto out;
    }
    one = malloc(MAX_DIM * sizeof(float));
    seen = calloc(n ? n : 1, 1);
    if (!one || !seen) {
        rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
        goto out;
    }
    size_t d = want_dim;
    int indexed = -1; /* unknown until the first entry */
    for (size_t i = 0; i < n; i++) {
        const json_t *item = json_array_get(data, i);
        if (!json_is_object(item)) {
            rc = mem_err_set(err, MEM_EEMBED,
                             "embedder: the provider's answer has an entry that is not an object "
                             "(data[%zu])",
                             i);
            goto out;
        }
        const json_t *ix = json_object_get(item, "index");
        if (indexed < 0) indexed = ix != NULL;
        size_t slot = i;
        if ((ix != NULL) != (indexed == 1) ||
            (ix && (!json_is_integer(ix) || json_integer_value(ix) < 0 ||
                    (uint64_t)json_integer_value(ix) >= n))) {
            rc = mem_err_set(err, MEM_EEMBED,
                             "embedder: the provider's answer has a missing or invalid index "
                             "(data[%zu]; 0 to %zu expected)",
                             i, n ? n - 1 : 0);
            goto out;
        }
        if (ix) slot = (size_t)json_integer_value(ix);
        if (seen[slot]) {
            rc = mem_err_set(err, MEM_EEMBED, "embedder: the provider's answer has index %zu twice",
                             slot);
            goto out;
        }
        seen[slot] = 1;
        size_t m = 0;
        if ((rc = decode_vector(json_object_get(item, "embedding"), i, one, &m, err)) != MEM_OK)
            goto out;
        if (d && m != d) {
            rc = mem_err_set(err, MEM_EEMBED,
                             "embedder: the provider answered %zu floats per vector where %zu "
                             "were expected (data[%zu])",
                             m, d, i);
            goto out;
        }
        if (!all && !(all = malloc((n ? n : 1) * m * sizeof(float)))) {
            rc = mem_err_set(err, MEM_ENOMEM, "out of memory");
            goto out;
        }
        d = m;
        memcpy(all + slot * d, one, d * sizeof(float));
    }
    if (n == 0) {
        rc = mem_err_set(err, MEM_EEMBED, "embedder: nothing was asked");
        goto out;
    }
    *vecs = all;
    *dim = d;
    all = NULL;
out:
    free(all);
    free(one);
    free(seen);
    json_decref(root);
    return rc;
}

/* Copy s as printable ASCII (other bytes become '?', runs of white space one space). */
static void printable(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    bool space = false;
    for (size_t i = 0; i < len && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = o > 0;
            continue;
        }
        if (space && o + 2 < cap) out[o++] = ' ';
        space = false;
        out[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[o] = '\0';
}

void mem_emb_error_text(const char *body, size_t len, char *out, size_t cap)
{
    if (!cap) return;
    out[0] = '\0';
    bool oom = false;
    json_t *root = len ? wire_parse(body, len, NULL, &oom) : NULL;
    if (oom) {
        snprintf(out, cap, "(out of memory reading the answer)");
        return;
    }
    const json_t *e = json_object_get(root, "error");
    const json_t *m = json_object_get(e, "message");
    if (!json_is_string(m)) m = e;
    if (!json_is_string(m)) m = json_object_get(root, "message");
    if (!json_is_string(m)) m = json_object_get(root, "detail");
    if (json_is_string(m))
        printable(json_string_value(m), json_string_length(m), out, cap);
    else if (!root && len) { /* not JSON: a text/plain or HTML answer, its first line */
        const char *nl = memchr(body, '\n', len);
        printable(body, nl ? (size_t)(nl - body) : len, out, cap);
    }
    json_decref(root);
}
