/* compact_novelty.c - novelty: the project's own retention policy, the default
 * SPDX-License-Identifier: MIT
 *
 * Spend the budget on what is new, keep what is still useful, and keep the latest version
 * of a restated fact:
 *
 *   1. Heads and echoes. Walk the memories in time order. A memory within dedup_threshold
 *      of its predecessor (1 - cos <= dedup_threshold, default 0.02) is an echo: it repeats
 *      what was just said. Every other memory (and the first) is a head: it brought
 *      something new, e.g. a regime shift.
 *   2. Restatements. A head that a newer head restates (cos >= MEM_COMPACT_RESTATE_COS,
 *      0.8) is outdated: the newer one carries the current version (a rotated password,
 *      a moved host). It is ranked with the echoes.
 *   3. Budget. Current heads first, ordered by the caller's importance
 *      alpha*recency + beta*frequency + gamma*coherence (as coherence_weighted). The rest
 *      of the budget goes to echoes and outdated heads by what they are still good for,
 *      beta*frequency + gamma*coherence (being read, matching the context); among equals
 *      the newest. Final ties: the lower index.
 *
 * With no echoes and no restatements this is exactly coherence_weighted. Cost:
 * O(n*dim + n*n_context*dim + H^2*dim) with H heads (the restatement check); everything in
 * double, cosines clamped, deterministic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/compact_int.h"
#include "core/err.h"

static double dot_d(const float *a, const float *b, size_t dim)
{
    double s0 = 0.0, s1 = 0.0;
    size_t d = 0;
    for (; d + 2 <= dim; d += 2) {
        s0 += (double)a[d] * (double)b[d];
        s1 += (double)a[d + 1] * (double)b[d + 1];
    }
    if (d < dim)
        s0 += (double)a[d] * (double)b[d];
    return s0 + s1;
}

int mem_compact__novelty(const mem_compact_input_t *in, size_t target, uint8_t *keep)
{
    size_t n = in->n;
    double *rec = malloc(n * sizeof(double));
    double *score = malloc(n * sizeof(double));
    double *inv_norm = malloc(n * sizeof(double));
    uint8_t *tier = malloc(n);
    size_t *heads = malloc(n * sizeof(size_t));
    int rc = MEM_ENOMEM;
    if (!rec || !score || !inv_norm || !tier || !heads)
        goto out;

    /* 1. heads and echoes */
    size_t n_heads = 0;
    for (size_t i = 0; i < n; i++) {
        int echo = i > 0 && 1.0 - mem_compact__cos(in->vecs[i - 1], in->vecs[i], in->dim) <=
                                in->dedup_threshold;
        tier[i] = echo ? 1 : 0;
        if (!echo)
            heads[n_heads++] = i;
        double nn = dot_d(in->vecs[i], in->vecs[i], in->dim);
        inv_norm[i] = nn > 0.0 ? 1.0 / sqrt(nn) : 0.0;
    }
    /* 2. outdated heads: restated by a newer head */
    for (size_t a = 0; a < n_heads; a++) {
        size_t ha = heads[a];
        for (size_t b = a + 1; b < n_heads; b++) {
            size_t hb = heads[b];
            double c = dot_d(in->vecs[ha], in->vecs[hb], in->dim) * inv_norm[ha] * inv_norm[hb];
            if (c >= MEM_COMPACT_RESTATE_COS) {
                tier[ha] = 1;
                break;
            }
        }
    }
    /* 3. current heads by importance; the rest by beta*freq + gamma*coh, then newest */
    double *freq = score, *coh = inv_norm; /* reuse: score is written last */
    mem_compact__recency(in, rec);
    mem_compact__coherence(in, coh);
    mem_compact__frequency(in, freq);
    for (size_t i = 0; i < n; i++)
        score[i] = tier[i] == 0 ? in->alpha * rec[i] + in->beta * freq[i] + in->gamma * coh[i]
                                : in->beta * freq[i] + in->gamma * coh[i];
    rc = mem_compact__keep_ranked2(n, tier, score, rec, target, keep);
out:
    free(rec);
    free(score);
    free(inv_norm);
    free(tier);
    free(heads);
    return rc;
}
