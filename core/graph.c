/* graph.c - incremental and bulk maintenance of coherence-graph degrees
 * SPDX-License-Identifier: MIT
 */
#include "core/graph.h"

#include <stdlib.h>

#include "core/err.h"

static int adjust(mem_index_t *idx, size_t pos, float threshold, const mem_vec_ops_t *ops,
                  int delta, mem_graph_touch_fn touched, void *ud)
{
    float *scores = malloc(MEM_INDEX_BLOCK_ROWS * sizeof(float));
    if (!scores)
        return MEM_ENOMEM;
    const float *q = mem_index_vec(idx, pos);
    uint32_t own = 0;
    for (size_t b = 0; b < idx->n_blocks; b++) {
        mem_index_block_t *blk = idx->blocks[b];
        ops->dot_rows(q, blk->vecs, blk->n_rows, idx->dim, idx->stride, scores);
        for (size_t r = 0; r < blk->n_rows; r++) {
            size_t other = b * MEM_INDEX_BLOCK_ROWS + r;
            if (other == pos || blk->flags[r] != 0 || !(scores[r] >= threshold))
                continue;
            own++;
            blk->degree[r] = (uint32_t)((int64_t)blk->degree[r] + delta);
            if (touched)
                touched(ud, other);
        }
    }
    free(scores);
    MEM_INDEX_ROW(idx, pos, degree) = delta > 0 ? own : 0;
    if (touched)
        touched(ud, pos);
    mem_index_recount_graph(idx);
    return MEM_OK;
}

int mem_graph_link(mem_index_t *idx, size_t pos, float threshold, const mem_vec_ops_t *ops,
                   mem_graph_touch_fn touched, void *ud)
{
    return adjust(idx, pos, threshold, ops, +1, touched, ud);
}

int mem_graph_unlink(mem_index_t *idx, size_t pos, float threshold, const mem_vec_ops_t *ops,
                     mem_graph_touch_fn touched, void *ud)
{
    return adjust(idx, pos, threshold, ops, -1, touched, ud);
}

int mem_graph_rebuild(mem_index_t *idx, float threshold, const mem_vec_ops_t *ops)
{
    float *scores = malloc(MEM_INDEX_BLOCK_ROWS * sizeof(float));
    if (!scores)
        return MEM_ENOMEM;
    for (size_t p = 0; p < idx->n_rows; p++)
        MEM_INDEX_ROW(idx, p, degree) = 0;
    for (size_t p = 0; p < idx->n_rows; p++) {
        if (MEM_INDEX_ROW(idx, p, flags) != 0)
            continue;
        const float *q = mem_index_vec(idx, p);
        for (size_t b = p / MEM_INDEX_BLOCK_ROWS; b < idx->n_blocks; b++) {
            mem_index_block_t *blk = idx->blocks[b];
            ops->dot_rows(q, blk->vecs, blk->n_rows, idx->dim, idx->stride, scores);
            for (size_t r = 0; r < blk->n_rows; r++) {
                size_t other = b * MEM_INDEX_BLOCK_ROWS + r;
                if (other <= p || blk->flags[r] != 0 || !(scores[r] >= threshold))
                    continue;
                blk->degree[r]++;
                MEM_INDEX_ROW(idx, p, degree)++;
            }
        }
    }
    free(scores);
    mem_index_recount_graph(idx);
    return MEM_OK;
}
