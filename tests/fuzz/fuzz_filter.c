/* fuzz_filter.c - libFuzzer target: the retrieve "filter" decoder and its evaluation
 * SPDX-License-Identifier: MIT
 *
 * The input is a JSON document given as a filter. Beyond "no crash, no leak": a decoded
 * filter has 1..MEM_META_MAX_CONDS conditions (or none for {}), paths of 1..MEM_META_MAX_PATH
 * bytes not starting with '$', operands of the kinds each operator takes; evaluated over a
 * fixed small index, mem_meta_eval agrees with the brute force mem_meta_match_pairs on every
 * seq; an error names a field under "filter" with a 400 status.
 */
#include "api/api_int.h"
#include "core/meta.h"
#include "tests/fuzz/fuzz_common.h"

#define N_ROWS 6
static mem_meta_t *meta;
static const mem_meta_pair_t ROWS[N_ROWS][3] = {
    {{"user", 4, {.type = MEM_META_STR, .str = "ana", .len = 3}},
     {"p", 1, {.type = MEM_META_NUM, .num = 2}},
     {"a.b", 3, {.type = MEM_META_BOOL, .b = true}}},
    {{"user", 4, {.type = MEM_META_STR, .str = "bob", .len = 3}},
     {"tags", 4, {.type = MEM_META_CONTAINER}},
     {"tags", 4, {.type = MEM_META_STR, .str = "x", .len = 1}}},
    {{"p", 1, {.type = MEM_META_NUM, .num = -1.5}},
     {"n", 1, {.type = MEM_META_NULL}},
     {"a", 1, {.type = MEM_META_CONTAINER}}},
    {{"user", 4, {.type = MEM_META_STR, .str = "", .len = 0}}},
    {{"p", 1, {.type = MEM_META_NUM, .num = 1e300}}},
    {{"tags", 4, {.type = MEM_META_STR, .str = "y", .len = 1}}},
};
static const size_t ROW_N[N_ROWS] = {3, 3, 3, 1, 1, 1};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    if (mem_meta_new(&meta) != MEM_OK) abort();
    for (int i = 0; i < N_ROWS; i++)
        if (mem_meta_set(meta, i + 1, ROWS[i], ROW_N[i]) != MEM_OK) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *j =
        json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
    if (!j) return 0;
    mem_api__pool_t pool = {0};
    mem_err_t err;
    mem_err_clear(&err);
    const mem_meta_filter_t *f = NULL;
    int rc = mem_api__decode_filter(&pool, j, &f, &err);
    if (rc == MEM_OK) {
        FUZZ_CHECK(f != NULL && f->n_conds <= MEM_META_MAX_CONDS, "conditions");
        for (size_t k = 0; k < f->n_conds; k++) {
            const mem_meta_cond_t *c = &f->conds[k];
            FUZZ_CHECK(c->path_len >= 1 && c->path_len <= MEM_META_MAX_PATH, "path length");
            FUZZ_CHECK(c->path[0] != '$', "operator as a path");
            FUZZ_CHECK(c->op <= MEM_META_EXISTS, "op %d", (int)c->op);
            if (c->op == MEM_META_IN || c->op == MEM_META_NIN)
                FUZZ_CHECK(c->n_vals <= MEM_META_MAX_IN, "in size");
            else
                FUZZ_CHECK(c->n_vals == 1, "n_vals %zu", c->n_vals);
            if (c->op >= MEM_META_GT && c->op <= MEM_META_LTE)
                FUZZ_CHECK(c->vals[0].type == MEM_META_NUM || c->vals[0].type == MEM_META_STR,
                           "range operand type");
        }
        uint64_t *bits = NULL;
        size_t n = 0;
        FUZZ_CHECK(mem_meta_eval(meta, f, N_ROWS, &bits, &n) == MEM_OK, "eval");
        size_t cnt = 0;
        for (int s = 1; s <= N_ROWS; s++) {
            bool want = mem_meta_match_pairs(ROWS[s - 1], ROW_N[s - 1], f);
            bool got = bits[0] >> s & 1;
            FUZZ_CHECK(want == got, "seq %d: eval %d, brute force %d", s, got, want);
            cnt += want;
        }
        FUZZ_CHECK(cnt == n && !(bits[0] & 1), "count");
        free(bits);
    } else {
        FUZZ_CHECK(rc == MEM_EINVAL || rc == MEM_ENOMEM, "rc %d", rc);
        FUZZ_CHECK(err.msg[0] && err.code == rc, "error without message");
        if (rc == MEM_EINVAL)
            FUZZ_CHECK(strncmp(err.field, "filter", 6) == 0, "field %s", err.field);
    }
    mem_api__pool_free(&pool);
    json_decref(j);
    return 0;
}
