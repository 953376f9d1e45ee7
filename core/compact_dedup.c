/* compact_dedup.c - dedup_gated (BENCH.md section 2)
 * SPDX-License-Identifier: MIT
 *
 * As coherence_weighted, but recency is a step counter walked in time order: 0 at the
 * first memory, +1 only when 1 - cos(previous, current) > dedup_threshold, divided by its
 * maximum (all 0 when the maximum is 0).
 */
#include <stdlib.h>

#include "core/compact_int.h"
#include "core/err.h"

int mem_compact__dedup_gated(const mem_compact_input_t *in, size_t target, uint8_t *keep)
{
    double *rec = malloc(in->n * sizeof(double));
    double *score = malloc(in->n * sizeof(double));
    int rc = MEM_ENOMEM;
    if (!rec || !score) goto out;
    size_t steps = 0;
    rec[0] = 0.0;
    for (size_t i = 1; i < in->n; i++) {
        if (1.0 - mem_compact__cos(in->vecs[i - 1], in->vecs[i], in->dim) > in->dedup_threshold)
            steps++;
        rec[i] = (double)steps;
    }
    for (size_t i = 0; i < in->n; i++)
        rec[i] = steps ? rec[i] / (double)steps : 0.0;
    if ((rc = mem_compact__importance(in, rec, score)) != MEM_OK) goto out;
    rc = mem_compact__keep_ranked(in->n, NULL, score, target, keep);
out:
    free(rec);
    free(score);
    return rc;
}
