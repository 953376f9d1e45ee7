/* fuzz_api.c - libFuzzer target: any bytes as a request body (or path) to the API
 * SPDX-License-Identifier: MIT
 *
 * The first input byte picks the endpoint; the rest is the body (or, for the router case,
 * the path). Reads hit the in-memory fake store of tests/unit/api_fake.h; a pending write
 * is finished with a random outcome. Nothing may crash, leak or answer 500.
 */
#include "tests/unit/api_fake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        ctx_init();
        init = 1;
    }
    if (size < 1) return 0;
    static const struct {
        const char *method, *path;
    } EP[] = {{"POST", "/v1/namespaces/mem/segments"},
              {"POST", "/v1/namespaces/fresh/segments"},
              {"POST", "/v1/namespaces/mem/retrieve"},
              {"POST", "/v1/namespaces/text/retrieve"},
              {"POST", "/v1/namespaces/mem/compact"},
              {"PUT", "/v1/namespaces/new"},
              {"POST", "/mcp"},
              {"GET", NULL}};
    size_t which = data[0] % (sizeof(EP) / sizeof(EP[0]));
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    char path[512];
    mem_api_resp_t r;
    memset(&r, 0, sizeof(r));
    mem_api_req_t req = {.method = EP[which].method, .path = EP[which].path, .query = ""};
    if (!EP[which].path) { /* the router: the bytes are the path */
        size_t l = len < sizeof(path) - 1 ? len : sizeof(path) - 1;
        memcpy(path, body, l);
        path[l] = '\0';
        req.path = path;
    } else {
        req.content_type = "application/json";
        req.body = body;
        req.body_len = len;
    }
    mem_api_handle(&test_ctx, &req, &r);
    if (r.pending) {
        mem_store_op_t *op = r.pending;
        op->rc = (data[0] & 0x80) ? MEM_OK : MEM_EDUPID;
        op->created = data[0] & 0x40;
        for (size_t i = 0; op->outs && i < op->n_segs; i++)
            op->outs[i] = (mem_store_seg_out_t){.seq = (int64_t)i + 1, .ts_ms = FAKE_NOW_MS};
        op->n_applied = op->n_evict;
        mem_api_finish(&test_ctx, &r);
    }
    if (r.status >= 500 && r.status != 503) __builtin_trap();
    if (r.status != 202 && (!r.body || r.body_len == 0)) __builtin_trap();
    mem_api_resp_deinit(&r);
    return 0;
}
