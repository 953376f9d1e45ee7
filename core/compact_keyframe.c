/* compact_keyframe.c - structural_keyframe, the published "B2" (BENCH.md section 2)
 * SPDX-License-Identifier: MIT
 *
 * Walk the memories in time order; the structural time from i-1 to i is
 * |v_i - v_{i-1}|_2 + max(0, coh_{i-1} - coh_i) (double), cumulative T_i, total T. For a
 * budget B = target, level j (0..B-1) is T*j/(B-1) and picks the index whose T_i is
 * nearest (ties: the earliest index, also across a plateau of equal T_i). The picks are
 * sorted and de-duplicated, the first and the last index forced in; too many: the earliest
 * are dropped; too few: topped up by beta*frequency + gamma*coherence (no recency), ties
 * to the lower index. T = 0: evenly spaced, i.e. the same rule with T_i = i.
 *
 * B < 2: the published code keeps everything; a plan must keep exactly min(target, n), so
 * "everything" goes through the same "too many: drop the earliest" rule: B = 1 keeps the
 * newest memory. (B = 0 and B >= n never reach this file: mem_compact_plan handles them.)
 */
#include <stdlib.h>
#include <string.h>

#include "core/compact_int.h"
#include "core/err.h"

/* First index i with t[i] >= x, or n. t is non-decreasing. */
static size_t lower_bound(const double *t, size_t n, double x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The earliest index whose t is nearest to level (ties between the value below and the
 * value above go to the one below: it is earlier). */
static size_t nearest(const double *t, size_t n, double level)
{
    size_t hi = lower_bound(t, n, level);
    if (hi == 0) return 0;
    if (hi == n) return lower_bound(t, n, t[n - 1]);
    double d_lo = level - t[hi - 1], d_hi = t[hi] - level;
    return d_lo <= d_hi ? lower_bound(t, n, t[hi - 1]) : hi;
}

int mem_compact__keyframe(const mem_compact_input_t *in, size_t target, uint8_t *keep)
{
    size_t n = in->n, B = target;
    double *coh = malloc(n * sizeof(double));
    double *t = malloc(n * sizeof(double));
    double *score = malloc(n * sizeof(double));
    uint8_t *tier = malloc(n);
    int rc = MEM_ENOMEM;
    if (!coh || !t || !score || !tier) goto out;
    mem_compact__coherence(in, coh);
    double total = mem_compact__structural_time(in, coh, t);

    memset(tier, 1, n); /* 0 = keyframe, 1 = candidate for the top-up */
    if (B < 2) {
        memset(tier, 0, n);
    } else {
        if (!(total > 0.0)) { /* no structural time at all: space evenly */
            for (size_t i = 0; i < n; i++)
                t[i] = (double)i;
            total = (double)(n - 1);
        }
        for (size_t j = 0; j < B; j++)
            tier[nearest(t, n, total * (double)j / (double)(B - 1))] = 0;
        tier[0] = 0;
        tier[n - 1] = 0;
    }
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += tier[i] == 0;
    for (size_t i = 0; i < n && count > B; i++) /* too many: drop the earliest */
        if (tier[i] == 0) {
            tier[i] = 1;
            count--;
        }
    double *freq = t; /* t is no longer needed */
    mem_compact__frequency(in, freq);
    for (size_t i = 0; i < n; i++)
        score[i] = in->beta * freq[i] + in->gamma * coh[i];
    /* Keyframes first (tier 0, exactly `count` <= B of them), then the best of the rest.
     * Dropped keyframes (tier 1 again) compete in the top-up like any other memory. */
    rc = mem_compact__keep_ranked(n, tier, score, target, keep);
out:
    free(coh);
    free(t);
    free(score);
    free(tier);
    return rc;
}
