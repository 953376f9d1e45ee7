/* compact.h - retention policies: which memories to keep under a budget (SPEC section 5)
 * SPDX-License-Identifier: MIT
 *
 * A plan is pure: it reads vectors, ticks and access counts of the memories being
 * compacted (in time order) and marks which to keep. Ties go to the lower (older) index.
 * Wire names: "coherence_weighted", "dedup_gated", "structural_time",
 * "structural_keyframe", "novelty" (the default; see core/compact_novelty.c). Every
 * quantity is computed in double from the given vectors, so a plan does not depend on the
 * SIMD kernel in use and is deterministic.
 */
#ifndef MEM_CORE_COMPACT_H
#define MEM_CORE_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

typedef enum mem_compact_policy {
    MEM_COMPACT_COHERENCE_WEIGHTED = 0,
    MEM_COMPACT_DEDUP_GATED,
    MEM_COMPACT_STRUCTURAL_TIME,
    MEM_COMPACT_STRUCTURAL_KEYFRAME,
    MEM_COMPACT_NOVELTY, /* "novelty": the project's own policy, the default */
    MEM_COMPACT_POLICY_COUNT
} mem_compact_policy_t;

#define MEM_COMPACT_DEFAULT MEM_COMPACT_NOVELTY

/* novelty: a head restated by a newer head with cos >= this is outdated. */
#define MEM_COMPACT_RESTATE_COS 0.8

typedef struct mem_compact_input {
    size_t n; /* memories, in time order */
    size_t dim;
    const float *const *vecs; /* n pointers to dim floats (unit vectors) */
    const uint64_t *tick;     /* logical clock of insert or last access */
    const uint32_t *access;   /* access counts */
    const float *context;     /* n_context * dim floats, may be NULL when n_context == 0 */
    size_t n_context;
    double alpha, beta, gamma; /* recency, frequency, coherence weights */
    double dedup_threshold;    /* dedup_gated: 1 - cos above this is a new step */
} mem_compact_input_t;

/* Mark keep[i] = 1 for the memories to keep (exactly min(target, n) of them), 0 for the
 * rest. MEM_OK, MEM_ENOMEM, MEM_EINVAL. */
int mem_compact_plan(mem_compact_policy_t policy, const mem_compact_input_t *in, size_t target,
                     uint8_t *keep, mem_err_t *err);
/* Parse a policy name; 0 or -1. */
int mem_compact_policy_parse(const char *name, mem_compact_policy_t *out);
const char *mem_compact_policy_name(mem_compact_policy_t policy);

#endif
