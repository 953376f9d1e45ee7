/* fuzz_cluster.c - libFuzzer target: what cluster mode decodes from the network
 * SPDX-License-Identifier: MIT
 *
 * Byte 0 picks the decoder; the rest is its input:
 *   0 a log record (cluster/record.c): a decoded record re-encodes to bytes that decode to
 *     the same op, and its computed size is the encoder's length;
 *   1 (unused: was a decoder since removed; such inputs do nothing)
 *   2 a relayed answer's head and chunked body (server/forward.c): lengths stay inside the
 *     input, a head's status is a three-digit code;
 *   3 placement (cluster/placement.c) over node names from the input: distinct indexes in
 *     range, the least-loaded choice never picks a more loaded node over a less loaded one.
 */
#include "cluster/placement.c"
#include "cluster/record.c"
#include "server/forward.c"
#include "tests/fuzz/fuzz_common.h"

static void record(const uint8_t *in, size_t len)
{
    mem_cluster_rec_t *r = mem_cluster_rec_decode(in, len);
    if (!r) return;
    size_t n = 0;
    unsigned char *buf = mem_cluster_rec_encode(&r->op, r->msgid, &n);
    FUZZ_CHECK(buf != NULL, "a decoded record does not encode again");
    FUZZ_CHECK(mem_cluster_rec_size(&r->op, strlen(r->msgid)) == n, "size %zu != encoded %zu",
               mem_cluster_rec_size(&r->op, strlen(r->msgid)), n);
    mem_cluster_rec_t *b = mem_cluster_rec_decode(buf, n);
    FUZZ_CHECK(b != NULL, "a re-encoded record does not decode");
    FUZZ_CHECK(b->op.kind == r->op.kind && b->op.dim == r->op.dim && b->op.now_ms == r->op.now_ms &&
                   b->op.n_segs == r->op.n_segs && b->op.n_evict == r->op.n_evict &&
                   b->n_import == r->n_import && strcmp(b->op.ns, r->op.ns) == 0 &&
                   strcmp(b->msgid, r->msgid) == 0,
               "round trip changed the op");
    for (size_t i = 0; i < r->op.n_segs; i++)
        FUZZ_CHECK(strcmp(b->op.segs[i].id, r->op.segs[i].id) == 0 &&
                       b->op.segs[i].text_len == r->op.segs[i].text_len &&
                       (r->op.dim == 0 || memcmp(b->op.segs[i].vec, r->op.segs[i].vec,
                                                 r->op.dim * sizeof(float)) == 0),
                   "segment %zu changed", i);
    mem_cluster_rec_free(b);
    free(buf);
    mem_cluster_rec_free(r);
}

static void answer(const uint8_t *in, size_t len)
{
    char *s = fuzz_dup(in, len, 0);
    int status = 0;
    long long clen = 0;
    bool chunked = false, close = false;
    mem_srv_fwd_res_t res;
    memset(&res, 0, sizeof(res));
    long h = mem_srv_fwd_parse_head(s, len, &status, &clen, &chunked, &close, &res);
    FUZZ_CHECK(h <= (long)len, "head longer than the input");
    if (h > 0) FUZZ_CHECK(status >= 100 && status <= 999, "status %d", status);
    char *body = malloc(len ? len : 1);
    size_t blen = 0;
    long n = mem_srv_fwd_dechunk(s, len, body, &blen);
    FUZZ_CHECK(n <= (long)len && (n <= 0 || blen <= len), "chunked body out of range");
    free(body);
    free(s);
}

static void place(const uint8_t *in, size_t len)
{
    const char *names[16];
    char store[16][8];
    size_t loads[16], n = 0;
    for (size_t i = 0; i + 2 <= len && n < 16; i += 2, n++) {
        snprintf(store[n], sizeof(store[n]), "n%u", in[i]);
        names[n] = store[n];
        loads[n] = in[i + 1] % 8;
    }
    size_t r = len ? in[0] % 9 : 0, idx[MEM_CLUSTER_PLACE_MAX];
    size_t got = mem_cluster_place("ns", names, n, r, idx);
    for (size_t i = 0; i < got; i++) {
        FUZZ_CHECK(idx[i] < n, "index out of range");
        for (size_t k = 0; k < i; k++)
            FUZZ_CHECK(strcmp(names[idx[i]], names[idx[k]]) != 0, "a node twice");
    }
    got = mem_cluster_place_least("ns", names, loads, n, r, idx);
    for (size_t i = 0; i < got; i++) {
        FUZZ_CHECK(idx[i] < n, "index out of range");
        for (size_t k = 0; k < i; k++) {
            FUZZ_CHECK(strcmp(names[idx[i]], names[idx[k]]) != 0, "a node twice");
            FUZZ_CHECK(loads[idx[k]] <= loads[idx[i]], "a fuller node chosen first");
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const uint8_t *in = data + 1;
    size_t len = size - 1;
    switch (data[0] % 4) {
    case 0:
        record(in, len);
        break;
    case 1:
        break;
    case 2:
        answer(in, len);
        break;
    default:
        place(in, len);
        break;
    }
    return 0;
}
