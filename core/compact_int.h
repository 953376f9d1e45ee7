/* compact_int.h - helpers shared by the retention policies (core/compact*.c)
 * SPDX-License-Identifier: MIT
 *
 * Every quantity a policy ranks on is computed in double: cosines are
 * dot / (|a|.|b|) clamped to [-1, 1] (BENCH.md section 2), so the plans do not depend on
 * the SIMD kernel chosen and reproduce the published figures bit for bit.
 */
#ifndef MEM_CORE_COMPACT_INT_H
#define MEM_CORE_COMPACT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/compact.h"

/* cos(a, b) in double, clamped to [-1, 1]; 0 when either vector is zero. */
double mem_compact__cos(const float *a, const float *b, size_t dim);
/* coh[i] = max(0, max cos(v_i, context_k)); all 0 without context. */
void mem_compact__coherence(const mem_compact_input_t *in, double *coh);
/* rec[i] = (tick_i - min) / max(max - min, 1) over the n memories. */
void mem_compact__recency(const mem_compact_input_t *in, double *rec);
/* freq[i] = access_i / max(max_access, 1). */
void mem_compact__frequency(const mem_compact_input_t *in, double *freq);
/* Structural time (keyframe, structural_time): t[0] = 0, t[i] = t[i-1] + |v_i - v_{i-1}|_2
 * + max(0, coh[i-1] - coh[i]), in double. Returns the total t[n-1]. */
double mem_compact__structural_time(const mem_compact_input_t *in, const double *coh, double *t);

/* score[i] = alpha * rec[i] + beta * frequency + gamma * coherence (that order, double).
 * MEM_OK or MEM_ENOMEM. */
int mem_compact__importance(const mem_compact_input_t *in, const double *rec, double *score);

/* Keep the memories of the first `target` positions of the ranking: a stable order by
 * rank key (tier ascending, then score descending, then index ascending). tier may be NULL
 * (all tier 0). keep[] is written for all n. MEM_OK or MEM_ENOMEM. */
int mem_compact__keep_ranked(size_t n, const uint8_t *tier, const double *score, size_t target,
                             uint8_t *keep);

/* The same with a second score that breaks ties of the first (descending), before the
 * index. score2 may be NULL. */
int mem_compact__keep_ranked2(size_t n, const uint8_t *tier, const double *score,
                              const double *score2, size_t target, uint8_t *keep);

/* One function per policy; 1 <= target < n on entry, input validated. */
int mem_compact__coherence_weighted(const mem_compact_input_t *in, size_t target, uint8_t *keep);
int mem_compact__dedup_gated(const mem_compact_input_t *in, size_t target, uint8_t *keep);
int mem_compact__structural_time_plan(const mem_compact_input_t *in, size_t target, uint8_t *keep);
int mem_compact__keyframe(const mem_compact_input_t *in, size_t target, uint8_t *keep);
int mem_compact__novelty(const mem_compact_input_t *in, size_t target, uint8_t *keep);

#endif
