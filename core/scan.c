/* scan.c - top-K retrieval: the scalar reference and the fast path
 * SPDX-License-Identifier: MIT
 */
#include "core/scan.h"

#include <string.h>

bool mem_scan_hit_before(const mem_scan_hit_t *a, const mem_scan_hit_t *b)
{
    if (a->score != b->score)
        return a->score > b->score;
    return a->seq > b->seq;
}

/* Keep hits[0..*n) sorted in result order, at most k long. */
static void topk_offer(mem_scan_hit_t *hits, size_t *n, size_t k, const mem_scan_hit_t *h)
{
    if (*n == k && !mem_scan_hit_before(h, &hits[k - 1]))
        return;
    size_t i = *n < k ? (*n)++ : k - 1;
    while (i > 0 && mem_scan_hit_before(h, &hits[i - 1])) {
        hits[i] = hits[i - 1];
        i--;
    }
    hits[i] = *h;
}

static bool row_selected(const mem_index_t *idx, const mem_scan_params_t *p, size_t pos)
{
    uint8_t f = MEM_INDEX_ROW(idx, pos, flags);
    if (f & MEM_ROW_DELETED)
        return false;
    if ((f & MEM_ROW_SUPERSEDED) && !p->include_superseded)
        return false;
    if ((f & MEM_ROW_ARCHIVED) && !p->include_archived)
        return false;
    int64_t ts = MEM_INDEX_ROW(idx, pos, ts_ms);
    if (ts < p->since_ms || ts > p->until_ms)
        return false;
    if (p->source >= 0 && MEM_INDEX_ROW(idx, pos, source) != p->source)
        return false;
    return true;
}

void mem_scan_reference(const mem_index_t *idx, const mem_scan_params_t *p, mem_scan_hit_t *hits,
                        size_t *n_hits, size_t *n_scanned)
{
    size_t n = 0, scanned = 0;
    for (size_t pos = 0; pos < idx->n_visible; pos++) {
        if (!row_selected(idx, p, pos))
            continue;
        scanned++;
        mem_scan_hit_t h;
        h.pos = pos;
        h.seq = MEM_INDEX_ROW(idx, pos, seq);
        h.sim = mem_vec_dot_f32_scalar(p->query, mem_index_vec(idx, pos), idx->dim);
        h.age_s = mem_decay_age_s(&p->decay, p->origin_ms, MEM_INDEX_ROW(idx, pos, ts_ms));
        h.decay = mem_decay_factor(&p->decay, h.age_s);
        double t = (1.0 - p->decay.recency_bias) + p->decay.recency_bias * h.decay;
        uint8_t f = MEM_INDEX_ROW(idx, pos, flags);
        h.gate = (f == 0 && idx->max_degree > 0)
                     ? (double)MEM_INDEX_ROW(idx, pos, degree) / (double)idx->max_degree
                     : 0.0;
        h.score = (double)h.sim * mem_decay_blend(t, h.gate, p->coherence_weight);
        if (p->has_min_score && !(h.score >= p->min_score))
            continue;
        topk_offer(hits, &n, p->k, &h);
    }
    *n_hits = n;
    *n_scanned = scanned;
}

void mem_scan_run(const mem_index_t *idx, const mem_vec_ops_t *ops, const mem_scan_params_t *p,
                  mem_scan_hit_t *hits, size_t *n_hits, size_t *n_scanned)
{
    /* Until the fused kernels land, the fast path is the reference. */
    (void)ops;
    mem_scan_reference(idx, p, hits, n_hits, n_scanned);
}
