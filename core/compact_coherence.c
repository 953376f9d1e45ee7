/* compact_coherence.c - coherence_weighted: the published baseline (BENCH.md section 2)
 * SPDX-License-Identifier: MIT
 *
 * importance = alpha * recency + beta * frequency + gamma * coherence, with recency =
 * (tick - min_tick) / max(max_tick - min_tick, 1); keep the top `target`, ties to the
 * lower index.
 */
#include <stdlib.h>

#include "core/compact_int.h"
#include "core/err.h"

int mem_compact__coherence_weighted(const mem_compact_input_t *in, size_t target, uint8_t *keep)
{
    double *rec = malloc(in->n * sizeof(double));
    double *score = malloc(in->n * sizeof(double));
    int rc = MEM_ENOMEM;
    if (!rec || !score) goto out;
    mem_compact__recency(in, rec);
    if ((rc = mem_compact__importance(in, rec, score)) != MEM_OK) goto out;
    rc = mem_compact__keep_ranked(in->n, NULL, score, target, keep);
out:
    free(rec);
    free(score);
    return rc;
}
