/* compact_novelty.c - novelty: the project's own retention policy, the default
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "core/compact_int.h"
#include "core/err.h"

#define RESTATE_COS 0.8

int mem_compact__novelty(const mem_compact_input_t *in, size_t target, uint8_t *keep)
{
    size_t n = in->n;
    double *rec = malloc(n * sizeof(double));
    double *score = malloc(n * sizeof(double));
    uint8_t *tier = malloc(n);
    size_t *heads = malloc(n * sizeof(size_t));
    int rc = MEM_ENOMEM;
    if (!rec || !score || !tier || !heads)
        goto out;
    size_t n_heads = 0;
    for (size_t i = 0; i < n; i++) {
        int echo = i > 0 &&
                   1.0 - mem_compact__cos(in->vecs[i - 1], in->vecs[i], in->dim) <= in->dedup_threshold;
        tier[i] = echo ? 1 : 0;
        if (!echo)
            heads[n_heads++] = i;
    }
    for (size_t a = 0; a < n_heads; a++)
        for (size_t b = a + 1; b < n_heads; b++)
            if (mem_compact__cos(in->vecs[heads[a]], in->vecs[heads[b]], in->dim) >= RESTATE_COS) {
                tier[heads[a]] = 1;
                break;
            }
    mem_compact__recency(in, rec);
    if ((rc = mem_compact__importance(in, rec, score)) != MEM_OK)
        goto out;
    rc = mem_compact__keep_ranked(n, tier, score, target, keep);
out:
    free(rec);
    free(score);
    free(tier);
    free(heads);
    return rc;
}
