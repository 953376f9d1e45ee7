/* compact.c - retention plans: validation, dispatch, names and the shared measures
 * SPDX-License-Identifier: MIT
 *
 * One file per policy (compact_coherence.c, compact_dedup.c, compact_structural.c,
 * compact_keyframe.c, compact_novelty.c); this file holds what they share. Everything
 * is computed in double and every ranking is a total order (ties to the lower index), so a
 * plan is deterministic and independent of the SIMD kernel in use.
 */
#include "core/compact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/compact_int.h"
#include "core/err.h"

static const char *const policy_names[MEM_COMPACT_POLICY_COUNT] = {
    [MEM_COMPACT_COHERENCE_WEIGHTED] = "coherence_weighted",
    [MEM_COMPACT_DEDUP_GATED] = "dedup_gated",
    [MEM_COMPACT_STRUCTURAL_TIME] = "structural_time",
    [MEM_COMPACT_STRUCTURAL_KEYFRAME] = "structural_keyframe",
    [MEM_COMPACT_NOVELTY] = "novelty",
};

int mem_compact_policy_parse(const char *name, mem_compact_policy_t *out)
{
    if (!name) return -1;
    for (int p = 0; p < MEM_COMPACT_POLICY_COUNT; p++)
        if (strcmp(name, policy_names[p]) == 0) {
            *out = (mem_compact_policy_t)p;
            return 0;
        }
    return -1;
}

const char *mem_compact_policy_name(mem_compact_policy_t policy)
{
    return (unsigned)policy < MEM_COMPACT_POLICY_COUNT ? policy_names[policy] : NULL;
}

double mem_compact__cos(const float *a, const float *b, size_t dim)
{
    double ab = 0.0, aa = 0.0, bb = 0.0;
    for (size_t d = 0; d < dim; d++) {
        ab += (double)a[d] * (double)b[d];
        aa += (double)a[d] * (double)a[d];
        bb += (double)b[d] * (double)b[d];
    }
    if (!(aa > 0.0) || !(bb > 0.0)) return 0.0;
    double c = ab / (sqrt(aa) * sqrt(bb));
    return c > 1.0 ? 1.0 : c < -1.0 ? -1.0 : c;
}

void mem_compact__coherence(const mem_compact_input_t *in, double *coh)
{
    for (size_t i = 0; i < in->n; i++) {
        double best = 0.0; /* max(0, ...), and 0 without context */
        for (size_t k = 0; k < in->n_context; k++) {
            double c = mem_compact__cos(in->vecs[i], in->context + k * in->dim, in->dim);
            if (c > best) best = c;
        }
        coh[i] = best;
    }
}

void mem_compact__recency(const mem_compact_input_t *in, double *rec)
{
    uint64_t lo = in->tick[0], hi = in->tick[0];
    for (size_t i = 1; i < in->n; i++) {
        if (in->tick[i] < lo) lo = in->tick[i];
        if (in->tick[i] > hi) hi = in->tick[i];
    }
    double span = hi - lo > 1 ? (double)(hi - lo) : 1.0;
    for (size_t i = 0; i < in->n; i++)
        rec[i] = (double)(in->tick[i] - lo) / span;
}

void mem_compact__frequency(const mem_compact_input_t *in, double *freq)
{
    uint32_t hi = 0;
    for (size_t i = 0; i < in->n; i++)
        if (in->access[i] > hi) hi = in->access[i];
    double div = hi > 1 ? (double)hi : 1.0;
    for (size_t i = 0; i < in->n; i++)
        freq[i] = (double)in->access[i] / div;
}

double mem_compact__structural_time(const mem_compact_input_t *in, const double *coh, double *t)
{
    t[0] = 0.0;
    for (size_t i = 1; i < in->n; i++) {
        const float *a = in->vecs[i - 1], *b = in->vecs[i];
        double ss = 0.0;
        for (size_t d = 0; d < in->dim; d++) {
            double x = (double)b[d] - (double)a[d];
            ss += x * x;
        }
        double drop = coh[i - 1] - coh[i];
        t[i] = t[i - 1] + sqrt(ss) + (drop > 0.0 ? drop : 0.0);
    }
    return t[in->n - 1];
}

typedef struct rank_item {
    double score, score2;
    size_t idx;
    uint8_t tier;
} rank_item_t;

static int rank_cmp(const void *pa, const void *pb)
{
    const rank_item_t *a = pa, *b = pb;
    if (a->tier != b->tier) return a->tier < b->tier ? -1 : 1;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->score2 != b->score2) return a->score2 > b->score2 ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

int mem_compact__keep_ranked(size_t n, const uint8_t *tier, const double *score, size_t target,
                             uint8_t *keep)
{
    return mem_compact__keep_ranked2(n, tier, score, NULL, target, keep);
}

int mem_compact__keep_ranked2(size_t n, const uint8_t *tier, const double *score,
                              const double *score2, size_t target, uint8_t *keep)
{
    rank_item_t *items = malloc(n * sizeof(*items));
    if (!items) return MEM_ENOMEM;
    for (size_t i = 0; i < n; i++)
        items[i] = (rank_item_t){score[i], score2 ? score2[i] : 0.0, i, tier ? tier[i] : 0};
    qsort(items, n, sizeof(*items), rank_cmp);
    memset(keep, 0, n);
    for (size_t r = 0; r < target && r < n; r++)
        keep[items[r].idx] = 1;
    free(items);
    return MEM_OK;
}

int mem_compact__importance(const mem_compact_input_t *in, const double *rec, double *score)
{
    double *freq = malloc(in->n * sizeof(double));
    double *coh = malloc(in->n * sizeof(double));
    if (!freq || !coh) {
        free(freq);
        free(coh);
        return MEM_ENOMEM;
    }
    mem_compact__frequency(in, freq);
    mem_compact__coherence(in, coh);
    for (size_t i = 0; i < in->n; i++)
        score[i] = in->alpha * rec[i] + in->beta * freq[i] + in->gamma * coh[i];
    free(freq);
    free(coh);
    return MEM_OK;
}

typedef int (*plan_fn)(const mem_compact_input_t *in, size_t target, uint8_t *keep);

static const plan_fn plans[MEM_COMPACT_POLICY_COUNT] = {
    [MEM_COMPACT_COHERENCE_WEIGHTED] = mem_compact__coherence_weighted,
    [MEM_COMPACT_DEDUP_GATED] = mem_compact__dedup_gated,
    [MEM_COMPACT_STRUCTURAL_TIME] = mem_compact__structural_time_plan,
    [MEM_COMPACT_STRUCTURAL_KEYFRAME] = mem_compact__keyframe,
    [MEM_COMPACT_NOVELTY] = mem_compact__novelty,
};

static int weight_ok(double w)
{
    return isfinite(w) && w >= 0.0;
}

int mem_compact_plan(mem_compact_policy_t policy, const mem_compact_input_t *in, size_t target,
                     uint8_t *keep, mem_err_t *err)
{
    if ((unsigned)policy >= MEM_COMPACT_POLICY_COUNT)
        return mem_err_field(err, MEM_EINVAL, "policy", "policy: unknown");
    if (!in || (in->n && !keep)) return mem_err_set(err, MEM_EINVAL, "compact: missing input");
    if (in->n == 0) return MEM_OK;
    if (in->dim == 0 || !in->vecs || !in->tick || !in->access)
        return mem_err_set(err, MEM_EINVAL, "compact: missing vectors, ticks or access counts");
    if (in->n_context && !in->context)
        return mem_err_field(err, MEM_EINVAL, "context", "context: missing vectors");
    if (!weight_ok(in->alpha) || !weight_ok(in->beta) || !weight_ok(in->gamma))
        return mem_err_field(err, MEM_EINVAL, "weights",
                             "weights: must be finite and non-negative");
    if (!isfinite(in->dedup_threshold) || in->dedup_threshold < 0.0 || in->dedup_threshold > 2.0)
        return mem_err_field(err, MEM_EINVAL, "dedup_threshold",
                             "dedup_threshold: must be in [0, 2]");
    if (target >= in->n) {
        memset(keep, 1, in->n);
        return MEM_OK;
    }
    if (target == 0) {
        memset(keep, 0, in->n);
        return MEM_OK;
    }
    int rc = plans[policy](in, target, keep);
    if (rc != MEM_OK) return mem_err_set(err, rc, "compact: out of memory");
    return MEM_OK;
}
