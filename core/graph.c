/* graph.c - incremental and bulk maintenance of coherence-graph degrees
 * SPDX-License-Identifier: MIT
 *
 * An edge is mem_vec_dot_f64_scalar(a, b) >= threshold (a double dot in one fixed order,
 * the same on every kernel): the kernel's f32 dot ops->dot_rows decides every pair it puts
 * clearly on one side of the threshold, and a pair within a rigorous rounding window of it
 * is scored again by the reference (the edge rule, below). So the graph does not depend on
 * MNEMOD_SIMD, and rebuild (each pair once, upper triangle) agrees exactly with link and
 * unlink (one row against all others). Ties are common with the built-in embedder: its
 * count vectors make many pairs' cosines equal to each other, and a threshold at one of
 * them used to give one edge more or less depending on the kernel's summation order.
 *
 * Rebuild: the batch search (below) of every active row at once, against no other member.
 *
 * The tcd figures (5000 x 128, rows normalised in double and stored as float, 0.55):
 * 590 313 edges, max degree 249, mean gate 0.948294.
 *
 * Link/unlink: one pass over every block collects the neighbours (the only allocation),
 * then the change is applied without any failure point: degrees, graph_edges, and
 * max_degree through the index's degree histogram (core/index_int.h), O(degree) per call
 * instead of a recount over all rows.
 */
#include "core/graph.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/index_int.h"

#define CHUNK_BYTES  (24 * 1024)
#define TILE_BYTES   (256 * 1024) /* batch rows scored against each chunk (find) */
#define I8_CHUNK_MAX 64           /* rows per int8 tile: one keep word per batch row */

static int cmp_pos(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- the edge rule ----
 *
 * An edge is ref(a, b) >= threshold, ref = mem_vec_dot_f64_scalar (double, left to right),
 * whatever the kernel. The kernel's f32 dot f decides alone when it is far enough from
 * the threshold; a pair inside the window gets ref. The window: with e the exact dot,
 *   |f - e| <= gamma_n * sum |a_i b_i| <= (n + 1) * 2^-24 * |a||b|   (any summation order,
 *              with or without FMA: each term meets at most n - 1 additions, n <= 4096)
 *   |ref - e| <= (n - 1) * 2^-53 * |a||b|    (the products are exact in double)
 * so W = 2 * (n + 4) * FLT_EPSILON * Na * Nb + 1e-30 (Na >= |a|, Nb >= |b|, the stored
 * norm bounds; the 1e-30 covers f32 underflow, at most n * 2^-150) exceeds |f - e| +
 * |ref - e| with room to spare, and |f - t| > W implies (f >= t) == (ref >= t). The cut
 * points are rounded outward to float, lo < t - W and hi > t + W: f < lo is no edge,
 * f >= hi an edge, anything between is decided by ref. A pair is therefore an edge on
 * every kernel exactly when ref says so, and rebuild, link and unlink agree with each
 * other (ref(a, b) == ref(b, a): the products commute, the order is fixed). */
typedef struct cut {
    float lo, hi;
} cut_t;

static cut_t edge_cut(double threshold, size_t dim, float na, float nb)
{
    double w = 2.0 * (double)(dim + 4) * (double)FLT_EPSILON * (double)na * (double)nb;
    w = w * (1.0 + 1e-6) + 1e-30;
    if (!(w < (double)HUGE_VALF)) w = (double)INFINITY; /* also NaN (0 * inf) */
    cut_t c = {nextafterf((float)(threshold - w), -HUGE_VALF),
               nextafterf((float)(threshold + w), HUGE_VALF)};
    return c;
}

/* The rule for the pair (a, b) whose kernel score is f. */
static inline bool edge_of(float f, const cut_t *c, const float *a, const float *b, size_t dim,
                           double threshold)
{
    return f >= c->hi || (f >= c->lo && mem_vec_dot_f64_scalar(a, b, dim) >= threshold);
}

/* The largest norm bound among the first n_rows rows of blk (all of them, or with
 * linked_only the members). */
static float block_norm(const mem_index_block_t *blk, size_t n_rows, bool linked_only)
{
    float m = 0.0f;
    for (size_t r = 0; r < n_rows; r++)
        if ((blk->linked[r] || !linked_only) && !(blk->norm[r] <= m)) m = blk->norm[r];
    return m;
}

static int collect_neighbours(const mem_index_t *idx, size_t pos, double threshold,
                              const mem_vec_ops_t *ops, size_t **out, size_t *n_out)
{
    float scores[MEM_INDEX_BLOCK_ROWS];
    size_t *nb = NULL, n = 0, cap = 0;
    const size_t dim = idx->dim;
    const float *q = mem_index__vec(idx, pos);
    const float nq = MEM_INDEX_ROW(idx, pos, norm);
    for (size_t b = 0; b < idx->n_blocks; b++) {
        const mem_index_block_t *blk = idx->blocks[b];
        cut_t c = edge_cut(threshold, dim, nq, block_norm(blk, blk->n_rows, true));
        ops->dot_rows(q, blk->vecs, blk->n_rows, dim, idx->stride, scores);
        for (size_t r = 0; r < blk->n_rows; r++) {
            size_t other = b * MEM_INDEX_BLOCK_ROWS + r;
            if (other == pos || !blk->linked[r] || !(scores[r] >= c.lo)) continue;
            if (!edge_of(scores[r], &c, q, blk->vecs + r * idx->stride, dim, threshold)) continue;
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                size_t *g = realloc(nb, ncap * sizeof(*g));
                if (!g) {
                    free(nb);
                    return MEM_ENOMEM;
                }
                nb = g;
                cap = ncap;
            }
            nb[n++] = other;
        }
    }
    *out = nb;
    *n_out = n;
    return MEM_OK;
}

static int adjust(mem_index_t *idx, size_t pos, double threshold, const mem_vec_ops_t *ops,
                  int link, mem_graph_touch_fn touched, void *ud)
{
    if (pos >= idx->n_rows) return MEM_OK;
    /* link: an active row that is not linked yet; unlink: a linked row */
    bool linked = MEM_INDEX_ROW(idx, pos, linked) != 0;
    if (link ? (linked || MEM_INDEX_ROW(idx, pos, flags) != 0) : !linked) return MEM_OK;
    size_t *nb = NULL, n = 0;
    int rc = collect_neighbours(idx, pos, threshold, ops, &nb, &n);
    if (rc != MEM_OK) return rc;
    /* After a link the largest degree is at most max(old max + 1, n). */
    size_t need = link ? ((size_t)idx->max_degree + 1 > n ? (size_t)idx->max_degree + 1 : n) : 0;
    if (link && (rc = mem_index__hist_reserve(idx, need)) != MEM_OK) {
        free(nb);
        return rc;
    }
    /* Nothing below can fail. */
    for (size_t i = 0; i < n; i++) {
        uint32_t d = MEM_INDEX_ROW(idx, nb[i], degree);
        mem_index__deg_set(idx, nb[i], link ? d + 1 : (d ? d - 1 : 0));
        if (touched) touched(ud, nb[i]);
    }
    if (link) {
        MEM_INDEX_ROW(idx, pos, linked) = 1;
        idx->n_linked++;
        mem_index__deg_set(idx, pos, (uint32_t)n);
    } else {
        mem_index__deg_set(idx, pos, 0);
        MEM_INDEX_ROW(idx, pos, linked) = 0;
        idx->n_linked--;
    }
    if (touched) touched(ud, pos);
    if (link)
        idx->graph_edges += n;
    else
        idx->graph_edges = idx->graph_edges >= n ? idx->graph_edges - n : 0;
    free(nb);
    if (!idx->_deg_hist)
        mem_index_recount_graph(idx); /* no histogram (it failed to allocate): the slow path */
    return MEM_OK;
}

int mem_graph_link(mem_index_t *idx, size_t pos, double threshold, const mem_vec_ops_t *ops,
                   mem_graph_touch_fn touched, void *ud)
{
    return adjust(idx, pos, threshold, ops, 1, touched, ud);
}

int mem_graph_unlink(mem_index_t *idx, size_t pos, double threshold, const mem_vec_ops_t *ops,
                     mem_graph_touch_fn touched, void *ud)
{
    return adjust(idx, pos, threshold, ops, 0, touched, ud);
}

/* ---- batches ----
 *
 * find: the batch's active rows S (sorted) against every block, as a blocked matrix
 * product. The rows of S are taken in tiles that stay in L2 (256 KB of their codes: 680 rows
 * at dim 384 in int8, 170 in f32) while the blocks stream by, so each block is read from
 * memory once per tile; each block is cut into chunks of at most 64 rows that stay in L1,
 * and one call of ops->tile_i8 scores the whole tile against a chunk (its kernel keeps
 * 4 tile rows x 2 chunk rows of integer dots in registers) and hands back one keep word per
 * tile row. A pair (s, x) is an edge by the edge rule, x active, x != s; x
 * in S counts once (x > s), and a row of S in an earlier tile is no longer scored at all
 * (it met this tile's rows as the lower of the pair), which halves the work inside a big
 * batch. The other rows' counts go to one array over all positions, the delta takes its
 * non-zero entries.
 *
 * The int8 skip. Rows carry their sketch (index.h): x = sx * cx + ex with ||ex|| <= errx,
 * and so does s (codes cs, scale ss, residual es). With s' = ss * cs,
 *   s.x = ss * sx * (cs.cx) + s'.ex + es.x <= ss*sx*(cs.cx) + ||s'|| * errx + errs * ||x||
 * and the f32 kernel returns f with |f - s.x| <= (dim + 4) * FLT_EPSILON * ||s|| * ||x||
 * (any summation order). ||s|| and ||x|| are not assumed to be 1: every row carries an
 * upper bound on its norm (index_int.h, computed in double when it is appended), per
 * block M = max ||x||. So
 *   f <= ss*sx*I + E * errx + (errs + gamma * ||s||) * M,  E >= ||s'|| (rounded up)
 * which is dot_rows_i8 with err_scale = E and slack = (errs + gamma*||s||) * M plus
 * 1e-5 * (1 + E * (M + 1)) for the float arithmetic of the bound itself (a few roundings of
 * values of size <= E * (M + 1)). A pair with ub < threshold has f < threshold, and since
 * the gamma term also exceeds |ref - s.x| (double), ref < threshold: no edge, no f32 dot.
 * The same terms bound f and ref from below (|f - ss*sx*I| <= E * errx + slack): a pair
 * with lb = ss*sx*I - E * errx - slack >= threshold is an edge by the rule without its f32
 * dot (the tile kernel's sure bits). The others get the f32 dot (dot_rows on one row is
 * bit-equal to its place in a full pass, the kernel contract), or one full f32 pass over
 * the chunk when the sketch keeps more than a quarter of it, and then the edge rule. The
 * bound's own float roundings differ between kernels, so the keep and sure bits may too,
 * but every bit any kernel sets is one the rule agrees with: the edges do not differ.
 *
 * apply: the batch's rows get their count (link) or 0 (unlink); the others gain or lose
 * theirs; graph_edges and max_degree follow through the histogram, as in adjust().
 */

static int delta_push(mem_graph_delta_t *d, size_t pos, uint32_t count)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        size_t *p = realloc(d->pos, cap * sizeof(*p));
        if (!p) return MEM_ENOMEM;
        d->pos = p;
        uint32_t *c = realloc(d->count, cap * sizeof(*c));
        if (!c) return MEM_ENOMEM;
        d->count = c;
        d->cap = cap;
    }
    d->pos[d->n] = pos;
    d->count[d->n] = count;
    d->n++;
    return MEM_OK;
}

void mem_graph_delta_free(mem_graph_delta_t *d)
{
    if (!d) return;
    free(d->pos);
    free(d->count);
    memset(d, 0, sizeof(*d));
}

typedef struct q8set {
    int8_t *codes; /* n * stride, zero-padded */
    float *scale, *err_scale;
    double *coef; /* errs + gamma * ||s|| (rounded up) */
} q8set_t;

static void q8set_free(q8set_t *q)
{
    free(q->codes);
    free(q->scale);
    free(q->err_scale);
    free(q->coef);
}

/* The sketches of the batch rows as queries. false when it cannot be used. */
static bool q8set_init(q8set_t *q, const mem_index_t *idx, const size_t *set, size_t n)
{
    size_t stride = idx->stride, dim = idx->dim;
    double gamma = (double)(dim + 4) * (double)FLT_EPSILON;
    q->codes = malloc(n * stride);
    q->scale = malloc(n * sizeof(float));
    q->err_scale = malloc(n * sizeof(float));
    q->coef = malloc(n * sizeof(double));
    if (!q->codes || !q->scale || !q->err_scale || !q->coef) return false;
    for (size_t k = 0; k < n; k++) {
        const mem_index_block_t *blk = mem_index__block_of(idx, set[k]);
        size_t r = set[k] % MEM_INDEX_BLOCK_ROWS;
        const uint8_t *u = blk->q8 + r * stride;
        int8_t *c = q->codes + k * stride;
        double c2 = 0.0;
        for (size_t i = 0; i < dim; i++) {
            c[i] = (int8_t)((int)u[i] - 128);
            c2 += (double)c[i] * (double)c[i];
        }
        memset(c + dim, 0, stride - dim);
        q->scale[k] = blk->q8_scale[r];
        q->err_scale[k] =
            nextafterf((float)((double)blk->q8_scale[r] * sqrt(c2) * (1.0 + 1e-6)), HUGE_VALF);
        double ns = (double)blk->norm[r];
        q->coef[k] = ((double)blk->q8_err[r] + gamma * ns) * (1.0 + 1e-6);
        if (!isfinite(q->err_scale[k]) || !isfinite(q->coef[k]) || !isfinite(q->scale[k]))
            return false;
    }
    return true;
}

/* The int8 pre-filter of a tile through ops (its tile kernel, or one dot_rows_i8 pass per
 * query when it has none): keep[i] bit j unless the upper bound of pair (i, j) is below
 * the threshold, sure[i] bit j when its lower bound is not (the tile kernel only). */
static void tile_keep(const mem_vec_ops_t *ops, const int8_t *q, size_t n_q, size_t stride,
                      const uint8_t *rows, size_t n_rows, const float *q_scale, const float *q_err,
                      const float *q_slack, const float *row_scale, const float *row_err,
                      float threshold, uint64_t *keep, uint64_t *sure)
{
    if (ops->tile_i8) {
        ops->tile_i8(q, n_q, stride, rows, n_rows, stride, stride, q_scale, q_err, q_slack,
                     row_scale, row_err, threshold, keep, sure);
        return;
    }
    memset(sure, 0, n_q * sizeof(*sure));
    float ub[I8_CHUNK_MAX];
    for (size_t i = 0; i < n_q; i++) {
        ops->dot_rows_i8(q + i * stride, rows, n_rows, stride, stride, q_scale[i], row_scale,
                         row_err, q_err[i], q_slack[i], ub);
        uint64_t k = 0;
        for (size_t j = 0; j < n_rows; j++)
            k |= (uint64_t) !(ub[j] < threshold) << j; /* NaN keeps */
        keep[i] = k;
    }
}

/* An edge between batch row k (at ps) and the active row at base + row of the block: the
 * counts (a pair inside the batch once, a row never with itself). */
static inline void pair(size_t base, size_t row, size_t ps, size_t k, const int32_t *slot,
                        uint32_t *cnt, uint32_t *oth, uint64_t *internal)
{
    size_t p = base + row;
    if (p == ps) return;
    int32_t sx = slot[row];
    if (sx >= 0) {
        if (p > ps) { /* a pair inside the batch: once */
            cnt[k]++;
            cnt[sx]++;
            (*internal)++;
        }
    } else {
        oth[p]++;
        cnt[k]++;
    }
}

/* set: sorted, unique rows below limit, joining the graph (link: not linked) or leaving it
 * (unlink: linked). The other members are the linked rows below limit, less excl (sorted,
 * unique: rows leaving at the same time). Reads vectors, sketches and graph fields only,
 * through the block table as it is loaded now (index_int.h: rows may be appended). */
static int find_set(const mem_index_t *idx, size_t limit, const size_t *set, size_t n_set,
                    const size_t *excl, size_t n_excl, double threshold, const mem_vec_ops_t *ops,
                    int unlink, mem_graph_delta_t *out)
{
    memset(out, 0, sizeof(*out));
    out->unlink = unlink;
    if (n_set == 0) return MEM_OK;
    int rc = MEM_OK;
    const size_t dim = idx->dim, stride = idx->stride;
    const size_t nb = (limit + MEM_INDEX_BLOCK_ROWS - 1) / MEM_INDEX_BLOCK_ROWS;
    mem_index_block_t *const *blocks = mem_index__blocks(idx);
    uint32_t *cnt = calloc(n_set, sizeof(*cnt));
    uint32_t *oth = calloc(limit ? limit : 1, sizeof(*oth)); /* counts of the other rows */
    double *m_blk = malloc(nb * sizeof(*m_blk));
    float *n_s = malloc(n_set * sizeof(*n_s)); /* the batch rows' norm bounds */
    q8set_t q8 = {0};
    if (!cnt || !oth || !m_blk || !n_s) {
        rc = MEM_ENOMEM;
        goto fail;
    }
    for (size_t k = 0; k < n_set && rc == MEM_OK; k++)
        rc = delta_push(out, set[k], 0);
    if (rc != MEM_OK) goto fail;
    out->n_set = n_set;
    bool use_i8 = ops->dot_rows_i8 && n_set >= MEM_GRAPH_I8_MIN && blocks[0]->q8 &&
                  q8set_init(&q8, idx, set, n_set);
    /* the int8 bounds are compared in float, with the threshold as float holds it: twice the
     * distance between the two goes into each query's slack, so a bound below thr_f is still
     * below the threshold and one at or above thr_f still above it */
    const float thr_f = (float)threshold;
    const double thr_gap = 2.0 * fabs(threshold - (double)thr_f);
    for (size_t b = 0; b < nb; b++) { /* M per block: the largest norm of its rows */
        size_t nr = limit - b * MEM_INDEX_BLOCK_ROWS;
        if (nr > MEM_INDEX_BLOCK_ROWS) nr = MEM_INDEX_BLOCK_ROWS;
        /* members, and (link) the joining rows */
        m_blk[b] = (double)block_norm(blocks[b], nr, unlink != 0);
    }
    for (size_t k = 0; k < n_set; k++)
        n_s[k] = MEM_INDEX_ROW(idx, set[k], norm);
    size_t q_bytes = (use_i8 ? 1 : sizeof(float)) * stride;
    size_t chunk = CHUNK_BYTES / q_bytes;
    if (chunk < 8) chunk = 8;
    if (chunk > I8_CHUNK_MAX) chunk = I8_CHUNK_MAX; /* one keep word per query */
    /* the batch's rows are taken in tiles that stay in L2 while the blocks stream by */
    size_t tile = TILE_BYTES / q_bytes;
    if (tile < 8) tile = 8;
    if (tile > n_set) tile = n_set;
    uint64_t *keep = use_i8 ? malloc(2 * tile * sizeof(*keep)) : NULL;
    uint64_t *sure = keep ? keep + tile : NULL;
    float *slk = use_i8 ? malloc(tile * sizeof(*slk)) : NULL;
    cut_t *cuts = malloc(tile * sizeof(*cuts));
    if ((use_i8 && (!keep || !slk)) || !cuts) {
        free(keep);
        free(slk);
        free(cuts);
        rc = MEM_ENOMEM;
        goto fail;
    }

    int32_t slot[MEM_INDEX_BLOCK_ROWS];
    uint8_t act[MEM_INDEX_BLOCK_ROWS];
    float sc[MEM_INDEX_BLOCK_ROWS];
    uint32_t cand[MEM_INDEX_BLOCK_ROWS];
    uint64_t internal = 0, external = 0;
    for (size_t t0 = 0; t0 < n_set; t0 += tile) {
        size_t t1 = t0 + tile < n_set ? t0 + tile : n_set;
        size_t si = 0, xi = 0;
        for (size_t b = 0; b < nb; b++) {
            const mem_index_block_t *blk = blocks[b];
            size_t base = b * MEM_INDEX_BLOCK_ROWS, nr = limit - base, n_act = 0;
            if (nr > MEM_INDEX_BLOCK_ROWS) nr = MEM_INDEX_BLOCK_ROWS;
            for (size_t r = 0; r < nr; r++) {
                slot[r] = -1;
                act[r] = blk->linked[r];
            }
            for (; xi < n_excl && excl[xi] < base + nr; xi++)
                act[excl[xi] - base] = 0;
            for (; si < n_set && set[si] < base + nr; si++) {
                slot[set[si] - base] = (int32_t)si;
                /* joining (link) or leaving (unlink: linked anyway); a batch row of an
                 * earlier tile already met this tile's rows (as the lower of the pair) */
                act[set[si] - base] = si >= t0;
            }
            for (size_t r = 0; r < nr; r++)
                n_act += act[r];
            if (!n_act) continue;
            for (size_t k = t0; k < t1; k++)
                cuts[k - t0] = edge_cut(threshold, dim, n_s[k], (float)m_blk[b]);
            bool i8 = use_i8 && isfinite(m_blk[b]);
            for (size_t k = t0; i8 && k < t1; k++) {
                double sl = q8.coef[k] * m_blk[b] +
                            1e-5 * (1.0 + (double)q8.err_scale[k] * (m_blk[b] + 1.0)) + thr_gap;
                slk[k - t0] = nextafterf((float)sl, HUGE_VALF);
            }
            for (size_t c0 = 0; c0 < nr; c0 += chunk) {
                size_t m = c0 + chunk < nr ? chunk : nr - c0;
                const float *rows = blk->vecs + c0 * stride;
                uint64_t am = 0;
                size_t k_end = t0; /* rows of the tile from k_end on meet nothing here */
                for (size_t r = 0; r < m; r++) {
                    am |= (uint64_t)act[c0 + r] << r;
                    /* a member from outside the batch meets every tile row; a batch row
                     * only the tile rows before it (a pair inside the batch counts once) */
                    size_t k_r = !act[c0 + r] ? t0 : slot[c0 + r] < 0 ? t1 : (size_t)slot[c0 + r];
                    k_end = k_r > k_end ? k_r : k_end;
                }
                if (k_end > t1) k_end = t1;
                if (!am || k_end == t0) continue;
                if (i8)
                    tile_keep(ops, q8.codes + t0 * stride, k_end - t0, stride,
                              blk->q8 + c0 * stride, m, q8.scale + t0, q8.err_scale + t0, slk,
                              blk->q8_scale + c0, blk->q8_err + c0, thr_f, keep, sure);
                for (size_t k = t0; k < k_end; k++) {
                    size_t ps = set[k], nc = 0;
                    const float *q = mem_index__vec(idx, ps);
                    const cut_t *cut = &cuts[k - t0];
                    if (i8) {
                        /* sure: an edge by the lower bound, no f32 dot; the rest of the
                         * kept pairs get theirs */
                        uint64_t w = keep[k - t0] & am, u = sure[k - t0] & w;
                        if (!w) continue;
                        for (; u; u &= u - 1)
                            pair(base, c0 + (size_t)__builtin_ctzll(u), ps, k, slot, cnt, oth,
                                 &internal);
                        for (w &= ~sure[k - t0]; w; w &= w - 1)
                            cand[nc++] = (uint32_t)__builtin_ctzll(w);
                        if (!nc) continue;
                        if (nc * 4 > m) {
                            ops->dot_rows(q, rows, m, dim, stride, sc);
                        } else if (ops->dot_rows_at) {
                            float at[I8_CHUNK_MAX];
                            ops->dot_rows_at(q, rows, cand, nc, dim, stride, at);
                            for (size_t i = 0; i < nc; i++)
                                sc[cand[i]] = at[i];
                        } else {
                            for (size_t i = 0; i < nc; i++)
                                ops->dot_rows(q, rows + (size_t)cand[i] * stride, 1, dim, stride,
                                              &sc[cand[i]]);
                        }
                    } else {
                        ops->dot_rows(q, rows, m, dim, stride, sc);
                        for (size_t r = 0; r < m; r++) {
                            cand[nc] = (uint32_t)r;
                            nc += act[c0 + r] & (uint32_t)(sc[r] >= cut->lo);
                        }
                    }
                    for (size_t i = 0; i < nc; i++) {
                        size_t r = cand[i], row = c0 + r;
                        if (act[row] && edge_of(sc[r], cut, q, rows + r * stride, dim, threshold))
                            pair(base, row, ps, k, slot, cnt, oth, &internal);
                    }
                }
            }
        }
    }
    free(keep);
    free(slk);
    free(cuts);
    for (size_t p = 0; p < limit && rc == MEM_OK; p++)
        if (oth[p]) {
            rc = delta_push(out, p, oth[p]);
            external += oth[p];
            if (oth[p] > out->max_other) out->max_other = oth[p];
        }
    if (rc != MEM_OK) goto fail;
    for (size_t k = 0; k < n_set; k++) {
        out->count[k] = cnt[k];
        if (cnt[k] > out->max_set) out->max_set = cnt[k];
    }
    out->edges = internal + external;
    free(cnt);
    free(oth);
    free(m_blk);
    free(n_s);
    q8set_free(&q8);
    return MEM_OK;
fail:
    free(cnt);
    free(oth);
    free(m_blk);
    free(n_s);
    q8set_free(&q8);
    mem_graph_delta_free(out);
    out->unlink = unlink;
    return rc;
}

/* The batch search with every active row in the batch and every linked row left out: the
 * graph of the active rows, each pair scored once (tiles: a row meets the rows after it). */
int mem_graph_rebuild(mem_index_t *idx, double threshold, const mem_vec_ops_t *ops)
{
    size_t n = idx->n_rows, n_set = 0, n_excl = 0;
    size_t *set = calloc(n ? n : 1, sizeof(*set));
    size_t *excl = calloc(n ? n : 1, sizeof(*excl));
    mem_graph_delta_t d = {0};
    int rc = set && excl ? MEM_OK : MEM_ENOMEM;
    for (size_t p = 0; rc == MEM_OK && p < n; p++) {
        if (MEM_INDEX_ROW(idx, p, flags) == 0) set[n_set++] = p;
        if (MEM_INDEX_ROW(idx, p, linked)) excl[n_excl++] = p;
    }
    if (rc == MEM_OK) rc = find_set(idx, n, set, n_set, excl, n_excl, threshold, ops, 0, &d);
    if (rc == MEM_OK) { /* nothing below can fail */
        for (size_t p = 0; p < n; p++) {
            MEM_INDEX_ROW(idx, p, degree) = 0;
            MEM_INDEX_ROW(idx, p, linked) = 0;
        }
        for (size_t k = 0; k < d.n_set; k++) {
            MEM_INDEX_ROW(idx, d.pos[k], degree) = d.count[k];
            MEM_INDEX_ROW(idx, d.pos[k], linked) = 1;
        }
        mem_index_recount_graph(idx);
    }
    mem_graph_delta_free(&d);
    free(set);
    free(excl);
    return rc;
}

int mem_graph_link_find(const mem_index_t *idx, size_t first_pos, size_t n_new, double threshold,
                        const mem_vec_ops_t *ops, mem_graph_delta_t *out)
{
    memset(out, 0, sizeof(*out));
    if (first_pos >= idx->n_rows) return MEM_OK;
    if (n_new > idx->n_rows - first_pos) n_new = idx->n_rows - first_pos;
    size_t *set = malloc((n_new ? n_new : 1) * sizeof(*set)), n = 0;
    if (!set) return MEM_ENOMEM;
    for (size_t p = first_pos; p < first_pos + n_new; p++)
        if (MEM_INDEX_ROW(idx, p, flags) == 0 && !MEM_INDEX_ROW(idx, p, linked)) set[n++] = p;
    int rc = find_set(idx, idx->n_rows, set, n, NULL, 0, threshold, ops, 0, out);
    free(set);
    return rc;
}

/* rows[0..n) below limit that can take the step (link: not linked; unlink: linked), sorted
 * and unique, into a new array *out (*n_out of them). */
static int select_rows(const mem_index_t *idx, size_t limit, const size_t *rows, size_t n,
                       int unlink, size_t **out, size_t *n_out)
{
    mem_index_block_t *const *blocks = mem_index__blocks(idx);
    size_t *set = malloc((n ? n : 1) * sizeof(*set)), k = 0;
    if (!set) return MEM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (rows[i] >= limit) continue;
        uint8_t l = blocks[rows[i] / MEM_INDEX_BLOCK_ROWS]->linked[rows[i] % MEM_INDEX_BLOCK_ROWS];
        if ((l != 0) == (unlink != 0)) set[k++] = rows[i];
    }
    qsort(set, k, sizeof(*set), cmp_pos);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || set[i] != set[i - 1]) set[u++] = set[i];
    *out = set;
    *n_out = u;
    return MEM_OK;
}

static int find_rows(const mem_index_t *idx, const size_t *rows, size_t n, double threshold,
                     const mem_vec_ops_t *ops, int unlink, mem_graph_delta_t *out)
{
    memset(out, 0, sizeof(*out));
    out->unlink = unlink;
    size_t *set, u;
    int rc = select_rows(idx, idx->n_rows, rows, n, unlink, &set, &u);
    if (rc != MEM_OK) return rc;
    rc = find_set(idx, idx->n_rows, set, u, NULL, 0, threshold, ops, unlink, out);
    free(set);
    return rc;
}

int mem_graph_link_set_find(const mem_index_t *idx, const size_t *rows, size_t n, double threshold,
                            const mem_vec_ops_t *ops, mem_graph_delta_t *out)
{
    return find_rows(idx, rows, n, threshold, ops, 0, out);
}

int mem_graph_unlink_find(const mem_index_t *idx, const size_t *rows, size_t n, double threshold,
                          const mem_vec_ops_t *ops, mem_graph_delta_t *out)
{
    return find_rows(idx, rows, n, threshold, ops, 1, out);
}

int mem_graph_change_find(const mem_index_t *idx, const mem_graph_change_t *ch, double threshold,
                          const mem_vec_ops_t *ops, mem_graph_delta_t *d_unlink,
                          mem_graph_delta_t *d_link)
{
    memset(d_unlink, 0, sizeof(*d_unlink));
    memset(d_link, 0, sizeof(*d_link));
    d_unlink->unlink = 1;
    size_t *uset = NULL, *lset = NULL, nu = 0, nl = 0;
    int rc = select_rows(idx, ch->n_rows, ch->unlink, ch->n_unlink, 1, &uset, &nu);
    if (rc == MEM_OK) rc = select_rows(idx, ch->n_rows, ch->link, ch->n_link, 0, &lset, &nl);
    if (rc == MEM_OK && nu)
        rc = find_set(idx, ch->n_rows, uset, nu, NULL, 0, threshold, ops, 1, d_unlink);
    /* the joining rows meet the members that stay */
    if (rc == MEM_OK && nl)
        rc = find_set(idx, ch->n_rows, lset, nl, uset, nu, threshold, ops, 0, d_link);
    free(uset);
    free(lset);
    if (rc != MEM_OK) {
        mem_graph_delta_free(d_unlink);
        mem_graph_delta_free(d_link);
    }
    return rc;
}

int mem_graph_apply(mem_index_t *idx, const mem_graph_delta_t *d, mem_graph_touch_fn touched,
                    void *ud)
{
    if (!d->n) return MEM_OK;
    if (!d->unlink) {
        size_t need = (size_t)idx->max_degree + d->max_other;
        if (d->max_set > need) need = d->max_set;
        int rc = mem_index__hist_reserve(idx, need);
        if (rc != MEM_OK) return rc;
    }
    /* Nothing below can fail. */
    for (size_t i = 0; i < d->n; i++) {
        size_t pos = d->pos[i];
        uint32_t c = d->count[i], v;
        if (i < d->n_set) {
            v = d->unlink ? 0 : c;
            if (!d->unlink && !MEM_INDEX_ROW(idx, pos, linked)) { /* joins, then takes v */
                MEM_INDEX_ROW(idx, pos, linked) = 1;
                idx->n_linked++;
            }
        } else {
            uint32_t d0 = MEM_INDEX_ROW(idx, pos, degree);
            v = d->unlink ? (d0 >= c ? d0 - c : 0) : d0 + c;
        }
        mem_index__deg_set(idx, pos, v);
        if (d->unlink && i < d->n_set && MEM_INDEX_ROW(idx, pos, linked)) { /* leaves at 0 */
            MEM_INDEX_ROW(idx, pos, linked) = 0;
            idx->n_linked--;
        }
        if (touched) touched(ud, pos);
    }
    if (!d->unlink)
        idx->graph_edges += d->edges;
    else
        idx->graph_edges = idx->graph_edges >= d->edges ? idx->graph_edges - d->edges : 0;
    if (!idx->_deg_hist) mem_index_recount_graph(idx);
    return MEM_OK;
}

int mem_graph_link_batch(mem_index_t *idx, size_t first_pos, size_t n_new, double threshold,
                         const mem_vec_ops_t *ops, mem_graph_touch_fn touched, void *ud)
{
    mem_graph_delta_t d;
    int rc = mem_graph_link_find(idx, first_pos, n_new, threshold, ops, &d);
    if (rc == MEM_OK) rc = mem_graph_apply(idx, &d, touched, ud);
    mem_graph_delta_free(&d);
    return rc;
}

int mem_graph_unlink_batch(mem_index_t *idx, const size_t *rows, size_t n, double threshold,
                           const mem_vec_ops_t *ops, mem_graph_touch_fn touched, void *ud)
{
    mem_graph_delta_t d;
    int rc = mem_graph_unlink_find(idx, rows, n, threshold, ops, &d);
    if (rc == MEM_OK) rc = mem_graph_apply(idx, &d, touched, ud);
    mem_graph_delta_free(&d);
    return rc;
}
