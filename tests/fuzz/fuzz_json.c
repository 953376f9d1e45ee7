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
