/* fuzz_json.c - libFuzzer target: api/json.c's reader and writer against jansson
 * SPDX-License-Identifier: MIT
 *
 * The input is a request body. The reader must accept exactly what json_loadb
 * (JSON_REJECT_DUPLICATES) accepts and build the same tree, embeddings as vector nodes of
 * the same numbers (tests/unit/json_oracle.h); what the writer makes of that tree must
 * read back, through jansson, as the same tree again. Numbers in the input also go through
 * core/num.h's parsers against strtof/strtod.
 */
#include <math.h>

#include "tests/fuzz/fuzz_common.h"
#include "tests/unit/json_oracle.h"
#include "tests/unit/num_oracle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    return 0;
}

/* mem_num_parse_f32_list at p reads what mem_num_parse_f32 reads one number at a time. */
static void check_list(const char *p, const char *end)
{
    float list[64];
    size_t n, used;
    bool long_integer;
    int rc = mem_num_parse_f32_list(p, (size_t)(end - p), list, 64, &n, &used, &long_integer);
    FUZZ_CHECK(used <= (size_t)(end - p) && n <= 64, "list: used %zu, n %zu", used, n);
    const char *q = p;
    bool saw_long = false;
    for (size_t i = 0; i < n; i++) {
        float one;
        size_t u;
        FUZZ_CHECK(mem_num_parse_f32(q, (size_t)(end - q), &one, &u) == MEM_OK,
                   "list: number %zu parsed alone fails", i);
        FUZZ_CHECK(memcmp(&one, &list[i], sizeof(one)) == 0, "list: number %zu differs", i);
        size_t digits = 0;
        while (digits < u && q[digits] >= '0' && q[digits] <= '9')
            digits++;
        if (*q == '-' && u > 1) {
            digits = 1;
            while (digits < u && q[digits] >= '0' && q[digits] <= '9')
                digits++;
        }
        if (digits == u && u - (*q == '-') >= 19) saw_long = true;
        q += u;
        while (q < end && strchr(" \t\r\n", *q) && *q)
            q++;
        if (i + 1 < n) {
            FUZZ_CHECK(q < end && *q == ',', "list: no comma after number %zu", i);
            q++;
            while (q < end && strchr(" \t\r\n", *q) && *q)
                q++;
        }
    }
    FUZZ_CHECK(saw_long == long_integer, "list: long_integer %d, expected %d", long_integer,
               saw_long);
    if (rc == MEM_OK) {
        FUZZ_CHECK(n > 0 && q == p + used, "list: stops at %zu, expected %zu", used,
                   (size_t)(q - p));
        FUZZ_CHECK(q == end || *q != ',', "list: stopped before a comma");
    } else {
        FUZZ_CHECK(rc == MEM_EINVAL || rc == MEM_ELIMIT, "list: rc %d", rc);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const REST[] = MEM_API_VEC_PATHS_REST;
    char *body = fuzz_dup(data, size, 0);
    const char *why = json_oracle_check(body, size);
    FUZZ_CHECK(why == NULL, "%s", why);
    json_t *mine = NULL;
    if (mem_api__json_parse(body, size, REST, "body", &mine, NULL) == MEM_OK) {
        char *text = mem_api__dump(mine);
        FUZZ_CHECK(text != NULL, "writer failed");
        json_t *back = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
        FUZZ_CHECK(back != NULL, "writer output does not parse: %.200s", text);
        FUZZ_CHECK(json_oracle_same(mine, back), "writer output reads back differently: %.200s",
                   text);
        json_decref(back);
        free(text);
        json_decref(mine);
    }
    /* number lists where arrays start (and at the start of the input) */
    check_list(body, body + size);
    int lists = 0;
    for (size_t i = 0; i < size && lists < 8; i++)
        if (body[i] == '[') {
            lists++;
            check_list(body + i + 1, body + size);
        }
    /* every maximal run of number characters, as core/num.h sees it */
    for (size_t i = 0; i < size;) {
        size_t j = i;
        while (j < size && j - i < 400 && strchr("0123456789+-.eE", body[j]) && body[j])
            j++;
        if (j > i) {
            why = num_oracle_check_parse(body + i, j - i);
            /* the oracle compares whole tokens only; a prefix that is a number is fine */
            size_t used = 0;
            double d;
            int rc = mem_num_parse_f64(body + i, j - i, &d, &used);
            if (rc == MEM_OK && used == j - i)
                FUZZ_CHECK(why == NULL, "%s: %.*s", why, (int)(j - i), body + i);
            i = j;
        } else {
            i++;
        }
    }
    free(body);
    return 0;
}
