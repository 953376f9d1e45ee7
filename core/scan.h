/* scan.h - scored top-K retrieval over an index (SPEC section 4)
 * SPDX-License-Identifier: MIT
 *
 * score = sim * ((1 - w) * t + w * gate), t = (1 - rb) + rb * decay(age), gate =
 * degree / max_degree. Results are ordered by score descending, ties by seq descending.
 * mem_scan_reference is the oracle: a plain scalar loop over every visible row, no
 * pruning. mem_scan_run must return the same ids with scores within 1e-5.
 */
#ifndef MEM_CORE_SCAN_H
#define MEM_CORE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/decay.h"
#include "core/index.h"
#include "core/vec.h"

#define MEM_SCAN_MAX_K 1000

typedef struct mem_scan_params {
    const float *query;      /* dim floats, L2-normalised */
    size_t k;                /* 1..MEM_SCAN_MAX_K */
    int64_t origin_ms;       /* decay counts from here (Unix ms) */
    mem_decay_t decay;       /* family, half-life, shape, offset, recency bias */
    double coherence_weight; /* [0, 1] */
    int64_t since_ms;        /* inclusive; INT64_MIN when absent */
    int64_t until_ms;        /* inclusive; INT64_MAX when absent */
    int source;              /* -1 any, else the interned source id that must match (0 = none) */
    bool has_min_score;
    double min_score;
    bool include_superseded;
    bool include_archived;
} mem_scan_params_t;

typedef struct mem_scan_hit {
    size_t pos; /* position in the index */
    int64_t seq;
    double score;
    float sim;
    double decay; /* d */
    double gate;
    double age_s;
} mem_scan_hit_t;

/* Fill hits (room for p->k) with the top-K in result order; *n_hits results,
 * *n_scanned rows scored. Reads only rows < idx->n_visible. Never fails. */
void mem_scan_reference(const mem_index_t *idx, const mem_scan_params_t *p, mem_scan_hit_t *hits,
                        size_t *n_hits, size_t *n_scanned);
/* Same answer, fast: ops' kernels, fused decay/gate/top-K, block pruning. */
void mem_scan_run(const mem_index_t *idx, const mem_vec_ops_t *ops, const mem_scan_params_t *p,
                  mem_scan_hit_t *hits, size_t *n_hits, size_t *n_scanned);
/* Result order: 1 when a ranks before b. */
bool mem_scan_hit_before(const mem_scan_hit_t *a, const mem_scan_hit_t *b);

#endif
