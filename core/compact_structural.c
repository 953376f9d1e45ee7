/* compact_structural.c - structural_time: the published negative result (BENCH.md section 2)
 * SPDX-License-Identifier: MIT
 *
 * As coherence_weighted, but recency is the cumulative structural time (see
 * mem_compact__structural_time) divided by its total (all 0 when the total is 0).
 */
#include <stdlib.h>

#include "core/compact_int.h"
#include "core/err.h"

int mem_compact__structural_time_plan(const mem_compact_input_t *in, size_t target, uint8_t *keep)
{
    double *coh = malloc(in->n * sizeof(double));
    double *rec = malloc(in->n * sizeof(double));
    double *score = malloc(in->n * sizeof(double));
    int rc = MEM_ENOMEM;
    if (!coh || !rec || !score) goto out;
    mem_compact__coherence(in, coh);
    double total = mem_compact__structural_time(in, coh, rec);
    for (size_t i = 0; i < in->n; i++)
        rec[i] = total > 0.0 ? rec[i] / total : 0.0;
    if ((rc = mem_compact__importance(in, rec, score)) != MEM_OK) goto out;
    rc = mem_compact__keep_ranked(in->n, NULL, score, target, keep);
out:
    free(coh);
    free(rec);
    free(score);
    return rc;
}
