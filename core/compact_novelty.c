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
 * O(n*dim + n*n_context*dim) in double plus the restatement check, H^2/2 dot products
 * over the H heads on the SIMD kernel (decided exactly, see mark_outdated). Every
 * decision is the double-precision rule with clamped cosines: deterministic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/compact_int.h"
#include "core/err.h"
#include "core/vec.h"

static double dot_d(const float *a, const float *b, size_t dim)
{
    double s0 = 0.0, s1 = 0.0;
    size_t d = 0;
    for (; d + 2 <= dim; d += 2) {
        s0 += (double)a[d] * (double)b[d];
        s1 += (double)a[d + 1] * (double)b[d + 1];
    }
    if (d < dim) s0 += (double)a[d] * (double)b[d];
    return s0 + s1;
}

/* tier[h] = 1 for every head h that a newer head restates (cos >= MEM_COMPACT_RESTATE_COS).
 * The O(H^2) pass runs on the process's SIMD kernel (float dot of a head against a tile of
 * newer heads); a float cosine within `guard` of the threshold is decided again in double
 * with mem_compact__cos, so the outcome is exactly the double-precision rule whatever the
 * kernel. (|float dot - exact| <= dim * 2^-24 * |a||b| for any summation order.) */
static int mark_outdated(const mem_compact_input_t *in, const size_t *heads, size_t n_heads,
                         const double *inv_norm, uint8_t *tier)
{
    enum { TILE = 256 };
    const size_t dim = in->dim;
    const mem_vec_ops_t *ops = mem_vec_ops();
    const double thr = MEM_COMPACT_RESTATE_COS;
    const double guard = (double)dim * 1.2e-7 + 1e-6;
    float *tile = malloc(TILE * dim * sizeof(float));
    float scores[TILE];
    if (!tile) return MEM_ENOMEM;
    for (size_t j0 = 1; j0 < n_heads; j0 += TILE) {
        size_t j1 = j0 + TILE < n_heads ? j0 + TILE : n_heads;
        for (size_t j = j0; j < j1; j++)
            memcpy(tile + (j - j0) * dim, in->vecs[heads[j]], dim * sizeof(float));
        for (size_t a = 0; a + 1 < j1; a++) {
            size_t ha = heads[a];
            if (tier[ha]) continue; /* already known to be outdated */
            size_t b0 = a + 1 > j0 ? a + 1 : j0;
            ops->dot_rows(in->vecs[ha], tile + (b0 - j0) * dim, j1 - b0, dim, dim, scores);
            for (size_t b = b0; b < j1; b++) {
                double c = (double)scores[b - b0] * inv_norm[ha] * inv_norm[heads[b]];
                if (c < thr - guard) continue;
                if (c >= thr + guard ||
                    mem_compact__cos(in->vecs[ha], in->vecs[heads[b]], dim) >= thr) {
                    tier[ha] = 1;
                    break;
                }
            }
        }
    }
    free(tile);
    return MEM_OK;
}

int mem_compact__novelty(const mem_compact_input_t *in, size_t target, uint8_t *keep)
{
    size_t n = in->n;
    double *rec = malloc(n * sizeof(double));
    double *score = malloc(n * sizeof(double));
    double *inv_norm = calloc(n, sizeof(double));
    uint8_t *tier = malloc(n);
    size_t *heads = calloc(n, sizeof(size_t));
    int rc = MEM_ENOMEM;
    if (!rec || !score || !inv_norm || !tier || !heads) goto out;

    /* 1. heads and echoes */
    size_t n_heads = 0;
    for (size_t i = 0; i < n; i++) {
        int echo = i > 0 && 1.0 - mem_compact__cos(in->vecs[i - 1], in->vecs[i], in->dim) <=
                                in->dedup_threshold;
        tier[i] = echo ? 1 : 0;
        if (!echo) heads[n_heads++] = i;
        double nn = dot_d(in->vecs[i], in->vecs[i], in->dim);
        inv_norm[i] = nn > 0.0 ? 1.0 / sqrt(nn) : 0.0;
    }
    /* 2. outdated heads: restated by a newer head */
    if ((rc = mark_outdated(in, heads, n_heads, inv_norm, tier)) != MEM_OK) goto out;
    /* 3. current heads by importance; the rest by beta*freq + gamma*coh, then newest */
    double *freq = score, *coh = inv_norm; /* reuse: score is written last */
    mem_compact__recency(in, rec);
    mem_compact__coherence(in, coh);
    mem_compact__frequency(in, freq);
    for (size_t i = 0; i < n; i++) {
        score[i] = tier[i] == 0 ? in->alpha * rec[i] + in->beta * freq[i] + in->gamma * coh[i]
                                : in->beta * freq[i] + in->gamma * coh[i];
        if (tier[i] == 0) rec[i] = 0.0; /* second key: newest first among the rest only */
    }
    rc = mem_compact__keep_ranked2(n, tier, score, rec, target, keep);
out:
    free(rec);
    free(score);
    free(inv_norm);
    free(tier);
    free(heads);
    return rc;
}
