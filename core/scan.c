/* scan.c - top-K retrieval: the scalar reference and the fast path
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. mem_scan_reference scores every visible row with the scalar kernel and keeps a
 * sorted top-K: it is the oracle. mem_scan_run gives the same answer faster:
 *
 * 1. Blocks first. Every block (256 time-ordered rows) with a visible row and a time
 *    range meeting [since, until] gets an upper bound U on its scores:
 *      U = f_max * sim_max,  f_max = blend(t(age_min), gate_max, w)
 *    age_min is the age of the block's time point nearest to the origin (two-sided, so an
 *    origin in the past works), gate_max is 1 (the loose bound) and sim_max = |q| times
 *    a rounding margin. Decay, time weight and blend are monotone in their inputs, in
 *    floating point too, so no row's f exceeds f_max. Blocks are visited in order of U,
 *    newest first among equals.
 * 2. Pruning (SPEC section 4 "Early stop"). thr = max(K-th score once K rows are held,
 *    min_score). Once thr > 0 and a block's U < thr, no row of it (negative similarities
 *    give scores <= 0) can enter: it and every later block are skipped. Strict, so a tie
 *    that a newer seq would win is never dropped. With a coherence weight, a block the
 *    loose bound keeps but whose bound without any gate would prune gets its exact
 *    gate_max (max degree of its active rows) and is skipped if that still prunes it.
 * 3. One fused visit per block, everything on the stack (256 floats), no full score
 *    array: similarities, then select_ge keeps only the rows whose sim can reach
 *    thr / f_max, and only those are filtered (flags, time, source) and scored exactly
 *    (decay, gate, blend in double, the same expressions as the reference) into a
 *    bounded heap of K hits.
 * 4. The int8 pre-filter (when ops has dot_rows_i8, i.e. every x86 table). Each row also
 *    has an int8 sketch (index.h: codes, scale, residual norm). The query is quantised
 *    once; the sketch kernel gives, per row, ub >= the f32 similarity the exact kernel
 *    would return (the error bound is derived at prepare_q8), reading 4x fewer bytes
 *    (dim 128: 136 B/row instead of 512). Rows with ub < thr / f_max are dropped; the
 *    others get the exact f32 dot (dot_rows on one row, bit-equal to a full pass), so
 *    the answer is the one a full f32 scan gives. Before K hits exist, the first block
 *    bootstraps thr from the sketch's lower bounds (ub - 2 * error): K rows whose lower
 *    bound is >= c all score >= c * f_min, so nothing scoring below can enter. When the
 *    sketch leaves more than a quarter of a block, the block takes the plain f32 pass.
 *
 * Scores equal the reference's for equal similarities; with a SIMD kernel the
 * similarity can differ from the scalar one in the last bits (the kernel error bound).
 * `scanned` counts the selected rows of the visited blocks (sketch-scored or not).
 *
 * A work budget (p->work_budget) is checked before each block is entered, so the scan
 * never does more than the budget, and one that stops reports it (false) instead of a
 * partial top-K: the caller (a read answered on the event loop) runs it again, whole,
 * elsewhere. The reference path (parameters the bounds do not cover) reads every row, so
 * it fits only when the whole namespace does.
 */
#include "core/scan.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/index_int.h"

bool mem_scan_hit_before(const mem_scan_hit_t *a, const mem_scan_hit_t *b)
{
    if (a->score != b->score) return a->score > b->score;
    return a->seq > b->seq;
}

/* Keep hits[0..*n) sorted in result order, at most k long. */
static void topk_offer(mem_scan_hit_t *hits, size_t *n, size_t k, const mem_scan_hit_t *h)
{
    if (*n == k && !mem_scan_hit_before(h, &hits[k - 1])) return;
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
    if (f & MEM_ROW_DELETED) return false;
    if ((f & MEM_ROW_SUPERSEDED) && !p->include_superseded) return false;
    if ((f & MEM_ROW_ARCHIVED) && !p->include_archived) return false;
    int64_t ts = MEM_INDEX_ROW(idx, pos, ts_ms);
    if (ts < p->since_ms || ts > p->until_ms) return false;
    if (p->source >= 0 && MEM_INDEX_ROW(idx, pos, source) != p->source) return false;
    if (p->row_mask && !(p->row_mask[pos / 64] >> (pos % 64) & 1)) return false;
    return true;
}

/* The exact score of a selected row with similarity sim: shared by both paths. */
static void score_row(const mem_index_t *idx, const mem_scan_params_t *p, size_t pos, float sim,
                      mem_scan_hit_t *h)
{
    const mem_index_block_t *blk = mem_index__block_of(idx, pos);
    size_t r = pos % MEM_INDEX_BLOCK_ROWS;
    h->pos = pos;
    h->seq = blk->seq[r];
    h->sim = sim;
    h->age_s = mem_decay_age_s(&p->decay, p->origin_ms, blk->ts_ms[r]);
    h->decay = mem_decay_factor(&p->decay, h->age_s);
    double t = (1.0 - p->decay.recency_bias) + p->decay.recency_bias * h->decay;
    h->gate = (blk->flags[r] == 0 && idx->max_degree > 0)
                  ? (double)blk->degree[r] / (double)idx->max_degree
                  : 0.0;
    h->score = (double)h->sim * mem_decay_blend(t, h->gate, p->coherence_weight);
}

/* Hybrid sim: the documented fusion (scan.h), one expression for both paths. */
static float fuse(double text_weight, double text, float cos)
{
    double v = cos > 0.0f ? (cos < 1.0f ? (double)cos : 1.0) : 0.0; /* |cos| may round past 1 */
    return (float)(text_weight * text + (1.0 - text_weight) * v);
}

/* sim of a selected row by the scalar reference; false when the row is no candidate (text
 * match and no query term in the row). */
static bool reference_sim(const mem_index_t *idx, const mem_scan_params_t *p, size_t pos,
                          mem_scan_hit_t *h)
{
    double text = 0.0;
    float cos = 0.0f;
    if (p->match != MEM_SCAN_MATCH_VECTOR) text = mem_lexidx_score_row(p->lex, p->text, pos);
    if (p->match != MEM_SCAN_MATCH_TEXT)
        cos = mem_vec_dot_f32_scalar(p->query, mem_index__vec(idx, pos), idx->dim);
    float sim;
    switch (p->match) {
    case MEM_SCAN_MATCH_TEXT:
        if (!(text > 0.0)) return false;
        sim = (float)text;
        break;
    case MEM_SCAN_MATCH_HYBRID:
        sim = fuse(p->text_weight, text, cos);
        break;
    default:
        sim = cos;
    }
    score_row(idx, p, pos, sim, h);
    h->text_score = text;
    h->vector_score = (double)cos;
    return true;
}

void mem_scan_reference(const mem_index_t *idx, const mem_scan_params_t *p, mem_scan_hit_t *hits,
                        size_t *n_hits, size_t *n_scanned)
{
    size_t n = 0, scanned = 0;
    for (size_t pos = 0; pos < idx->n_visible; pos++) {
        if (!row_selected(idx, p, pos)) continue;
        mem_scan_hit_t h;
        if (!reference_sim(idx, p, pos, &h)) continue;
        scanned++;
        if (p->has_min_score && !(h.score >= p->min_score)) continue;
        topk_offer(hits, &n, p->k, &h);
    }
    *n_hits = n;
    *n_scanned = scanned;
}

/* ---- the fast path ---------------------------------------------------------------- */

/* Bounded heap of the K best hits; the root is the one that ranks last. */
typedef struct topk {
    mem_scan_hit_t *h;
    size_t n, k;
} topk_t;

static void heap_push(topk_t *t, const mem_scan_hit_t *x)
{
    size_t i;
    if (t->n < t->k) {
        i = t->n++;
        while (i > 0) {
            size_t parent = (i - 1) / 2;
            if (!mem_scan_hit_before(&t->h[parent], x)) break;
            t->h[i] = t->h[parent];
            i = parent;
        }
        t->h[i] = *x;
        return;
    }
    if (!mem_scan_hit_before(x, &t->h[0])) return;
    i = 0;
    for (;;) {
        size_t c = 2 * i + 1, worst = c;
        if (c >= t->n) break;
        if (c + 1 < t->n && mem_scan_hit_before(&t->h[c], &t->h[c + 1])) worst = c + 1;
        if (!mem_scan_hit_before(x, &t->h[worst])) break;
        t->h[i] = t->h[worst];
        i = worst;
    }
    t->h[i] = *x;
}

static int hit_cmp(const void *a, const void *b)
{
    const mem_scan_hit_t *x = a, *y = b;
    return mem_scan_hit_before(x, y) ? -1 : mem_scan_hit_before(y, x) ? 1 : 0;
}

static void sort_hits(mem_scan_hit_t *h, size_t n)
{
    if (n > 1) qsort(h, n, sizeof(*h), hit_cmp);
}

typedef struct scan_state {
    const mem_index_t *idx;
    const mem_scan_params_t *p;
    const mem_vec_ops_t *ops;
    mem_vec_select_ge_fn select_ge;
    topk_t top;
    double sim_max; /* >= every similarity the kernel can return */
    size_t scanned;
    size_t work;      /* components of the blocks entered (p->work_budget) */
    bool over_budget; /* a block would have taken work past p->work_budget: stopped */
    /* int8 sketch of the query (when ops has dot_rows_i8) */
    bool use_q8;
    float q8_scale, q8_err_scale, q8_slack;
    int8_t q8[4096];
} scan_state_t;

/* Current admission threshold: a row whose score is < thr cannot enter. */
static double current_thr(const scan_state_t *s)
{
    double thr = s->top.n == s->top.k ? s->top.h[0].score : -HUGE_VAL;
    if (s->p->has_min_score && s->p->min_score > thr) thr = s->p->min_score;
    return thr;
}

static size_t visible_in_block(const mem_index_t *idx, size_t b)
{
    size_t start = b * MEM_INDEX_BLOCK_ROWS;
    if (start >= idx->n_visible) return 0;
    size_t n = idx->n_visible - start;
    size_t in_blk = idx->blocks[b]->n_rows;
    return n < in_blk ? n : in_blk;
}

/* Charge rows rows of work before entering a block; false (and the scan stops) when that
 * would go past the budget. */
static bool take_work(scan_state_t *s, size_t rows)
{
    size_t per_row = s->idx->dim + MEM_SCAN_ROW_WORK;
    size_t cost = rows > SIZE_MAX / per_row ? SIZE_MAX : rows * per_row;
    if (s->over_budget) return false;
    if (s->p->work_budget && (s->work + cost > s->p->work_budget || s->work + cost < s->work)) {
        s->over_budget = true;
        return false;
    }
    s->work += cost;
    return true;
}

/* f_max of block b (before the sim factor), with the given gate bound. */
static double block_f_max(const scan_state_t *s, const mem_index_block_t *blk, double gate_max)
{
    const mem_scan_params_t *p = s->p;
    int64_t nearest = p->origin_ms < blk->ts_min   ? blk->ts_min
                      : p->origin_ms > blk->ts_max ? blk->ts_max
                                                   : p->origin_ms;
    double age = mem_decay_age_s(&p->decay, p->origin_ms, nearest);
    double d = mem_decay_factor(&p->decay, age);
    double t = (1.0 - p->decay.recency_bias) + p->decay.recency_bias * d;
    return mem_decay_blend(t, gate_max, p->coherence_weight);
}

/* max gate of the block's active rows; 1 (the loose bound) as soon as one row reaches
 * need, since the caller only asks whether the max stays below need. */
static double block_gate_max(const mem_index_t *idx, const mem_index_block_t *blk, size_t n,
                             double need)
{
    if (idx->max_degree == 0) return 0.0;
    double need_deg = need * (double)idx->max_degree;
    uint32_t m = 0;
    for (size_t r = 0; r < n; r++) {
        uint32_t d = blk->flags[r] == 0 ? blk->degree[r] : 0;
        if (d > m) {
            m = d;
            if ((double)m >= need_deg) return 1.0;
        }
    }
    return (double)m / (double)idx->max_degree;
}

/* 1 when every visible row of the block passes the filters (the common case). */
static bool block_all_selected(const mem_scan_params_t *p, const mem_index_block_t *blk, size_t n,
                               size_t base)
{
    if (p->source >= 0 || blk->ts_min < p->since_ms || blk->ts_max > p->until_ms) return false;
    if (p->row_mask) { /* base is a multiple of 64: whole words, then the tail's bits */
        const uint64_t *w = p->row_mask + base / 64;
        size_t full = n / 64;
        for (size_t i = 0; i < full; i++)
            if (w[i] != UINT64_MAX) return false;
        if (n % 64 && (w[full] | ~((UINT64_C(1) << (n % 64)) - 1)) != UINT64_MAX) return false;
    }
    uint64_t any = 0;
    size_t r = 0;
    for (; r + 8 <= n; r += 8) {
        uint64_t w;
        memcpy(&w, blk->flags + r, 8);
        any |= w;
    }
    for (; r < n; r++)
        any |= blk->flags[r];
    return any == 0;
}

static bool flags_selected(const mem_scan_params_t *p, uint8_t f)
{
    return !(f & MEM_ROW_DELETED) && (!(f & MEM_ROW_SUPERSEDED) || p->include_superseded) &&
           (!(f & MEM_ROW_ARCHIVED) || p->include_archived);
}

static bool blk_row_selected(const mem_scan_params_t *p, const mem_index_block_t *blk, size_t r,
                             size_t base)
{
    return flags_selected(p, blk->flags[r]) && blk->ts_ms[r] >= p->since_ms &&
           blk->ts_ms[r] <= p->until_ms &&
           (p->source < 0 || blk->source[r] == (uint16_t)p->source) &&
           (!p->row_mask || (p->row_mask[(base + r) / 64] >> ((base + r) % 64) & 1));
}

/* The largest float c with c <= x * (1 - 1e-12): sim < c guarantees sim * f < thr. */
static float cut_below(double x)
{
    x = x > 0 ? x * (1.0 - 1e-12) : x * (1.0 + 1e-12);
    if (x > (double)FLT_MAX) return HUGE_VALF;
    float c = (float)x;
    if ((double)c > x) c = nextafterf(c, -HUGE_VALF);
    return c;
}

/* f_min of a block: its farthest time point from the origin, and no gate. */
static double block_f_min(const scan_state_t *s, const mem_index_block_t *blk)
{
    const mem_scan_params_t *p = s->p;
    int64_t far =
        (p->origin_ms - blk->ts_min > blk->ts_max - p->origin_ms) ? blk->ts_min : blk->ts_max;
    double age = mem_decay_age_s(&p->decay, p->origin_ms, far);
    double d = mem_decay_factor(&p->decay, age);
    double t = (1.0 - p->decay.recency_bias) + p->decay.recency_bias * d;
    return mem_decay_blend(t, 0.0, p->coherence_weight);
}

/* While the heap is not yet full: a lower bound on the final K-th score from this block
 * alone. If at least K of its rows (all selected) have sim >= c > 0, each of them scores
 * >= c * f_min, so the K-th best score is >= L = c * f_min and a row whose upper bound is
 * below L cannot enter. c is found by bisection with select_ge (a count). 0 = no bound. */
static double bootstrap_thr(const scan_state_t *s, const mem_index_block_t *blk, const float *sims,
                            size_t n, uint32_t *scratch) /* sims: lower bounds on them do too */
{
    double f_min = block_f_min(s, blk);
    if (!(f_min > 0.0)) return 0.0;
    float lo = 0.0f, hi = (float)s->sim_max;
    if (s->select_ge(sims, n, FLT_MIN, scratch) < s->top.k) return 0.0;
    lo = FLT_MIN;
    for (int it = 0; it < 10; it++) {
        float mid = 0.5f * (lo + hi);
        if (s->select_ge(sims, n, mid, scratch) >= s->top.k)
            lo = mid;
        else
            hi = mid;
    }
    return (double)lo * f_min;
}

static void visit_block(scan_state_t *s, size_t b, double f_max)
{
    const mem_index_t *idx = s->idx;
    const mem_scan_params_t *p = s->p;
    const mem_index_block_t *blk = idx->blocks[b];
    size_t n = visible_in_block(idx, b);
    float sims[MEM_INDEX_BLOCK_ROWS];
    uint32_t cand[MEM_INDEX_BLOCK_ROWS];
    size_t base = b * MEM_INDEX_BLOCK_ROWS;
    bool all = block_all_selected(p, blk, n, base);

    if (all) {
        s->scanned += n;
    } else {
        size_t c = 0;
        for (size_t r = 0; r < n; r++)
            c += blk_row_selected(p, blk, r, base);
        if (c == 0) return;
        s->scanned += c;
    }
    double thr = current_thr(s);
    size_t n_cand;
    bool boot_ok = s->top.n < s->top.k && all && n >= s->top.k;
    float ub[MEM_INDEX_BLOCK_ROWS];
    bool have_ub = false;
    if (s->use_q8 && f_max > 0.0 && !(thr > 0.0) && boot_ok) {
        /* heap not full yet: bootstrap thr from the sketch's lower bounds
         * lb = approx - err >= f32 sim, i.e. ub - 2 * err (minus float slack) */
        s->ops->dot_rows_i8(s->q8, blk->q8, n, idx->stride, idx->stride, s->q8_scale, blk->q8_scale,
                            blk->q8_err, s->q8_err_scale, s->q8_slack, ub);
        have_ub = true;
        float lb[MEM_INDEX_BLOCK_ROWS];
        for (size_t r = 0; r < n; r++)
            lb[r] = ub[r] - 2.0f * (s->q8_err_scale * blk->q8_err[r] + s->q8_slack) - 1e-6f;
        double boot = bootstrap_thr(s, blk, lb, n, cand);
        thr = boot > thr ? boot : thr;
    }
    if (s->use_q8 && thr > 0.0 && f_max > 0.0) {
        /* int8 pre-filter: ub[r] >= the f32 sim of row r, so rows with ub < cut cannot
         * enter; only the others get the exact f32 dot (bit-equal to dot_rows'). */
        float cut = cut_below(thr / f_max);
        if (!have_ub)
            s->ops->dot_rows_i8(s->q8, blk->q8, n, idx->stride, idx->stride, s->q8_scale,
                                blk->q8_scale, blk->q8_err, s->q8_err_scale, s->q8_slack, ub);
        n_cand = s->select_ge(ub, n, cut, cand);
        if (n_cand * 4 <= n) {
            /* the candidates' f32 rows are far apart: ask for all of them first */
            size_t row_bytes = idx->dim * sizeof(float);
            for (size_t i = 0; i < n_cand; i++) {
                const char *row = (const char *)(blk->vecs + (size_t)cand[i] * idx->stride);
                for (size_t off = 0; off < row_bytes; off += 64)
                    __builtin_prefetch(row + off);
            }
            for (size_t i = 0; i < n_cand; i++)
                s->ops->dot_rows(p->query, blk->vecs + (size_t)cand[i] * idx->stride, 1, idx->dim,
                                 idx->stride, &sims[cand[i]]);
        } else { /* the sketch rules out too few: one full pass is cheaper */
            s->ops->dot_rows(p->query, blk->vecs, n, idx->dim, idx->stride, sims);
            n_cand = s->select_ge(sims, n, cut, cand);
        }
    } else {
        s->ops->dot_rows(p->query, blk->vecs, n, idx->dim, idx->stride, sims);
        if (s->top.n < s->top.k && all && n >= s->top.k && f_max > 0.0) {
            double boot = bootstrap_thr(s, blk, sims, n, cand);
            thr = boot > thr ? boot : thr;
        }
        if (thr > 0.0 && f_max > 0.0) {
            n_cand = s->select_ge(sims, n, cut_below(thr / f_max), cand);
        } else {
            for (size_t r = 0; r < n; r++)
                cand[r] = (uint32_t)r;
            n_cand = n;
        }
    }
    for (size_t i = 0; i < n_cand; i++) {
        size_t r = cand[i];
        if (thr > 0.0 && (double)sims[r] * f_max < thr * (1.0 - 1e-12))
            continue; /* thr has risen since the block started */
        if (!all && !blk_row_selected(p, blk, r, base)) continue;
        mem_scan_hit_t h;
        score_row(idx, p, base + r, sims[r], &h);
        h.text_score = 0.0;
        h.vector_score = (double)sims[r];
        if (p->has_min_score && !(h.score >= p->min_score)) continue;
        heap_push(&s->top, &h);
        thr = current_thr(s);
    }
}

/* Text and hybrid match: the block's candidates (rows holding a query word) get their text
 * score from the lexical index; hybrid adds every row's cosine, but once a K-th score
 * exists only for the rows whose text score leaves the cosine a chance to lift them in
 * (with a high text weight, that is the few rows with good text: the others skip the dot).
 * Same filters, same exact scoring and admission as visit_block. */
static void visit_text_block(scan_state_t *s, size_t b, double f_max)
{
    const mem_index_t *idx = s->idx;
    const mem_scan_params_t *p = s->p;
    const mem_index_block_t *blk = idx->blocks[b];
    size_t n = visible_in_block(idx, b), n_text;
    uint32_t rows[MEM_INDEX_BLOCK_ROWS];
    double text[MEM_INDEX_BLOCK_ROWS];
    bool hybrid = p->match == MEM_SCAN_MATCH_HYBRID;
    double thr = current_thr(s);
    /* text: sim = (float)text, so text < thr / f_max, less the float rounding, cannot enter */
    double need = (hybrid || !(thr > 0.0)) ? -HUGE_VAL
                  : f_max > 0.0            ? thr / f_max * (1.0 - 1e-6)
                                           : HUGE_VAL;
    mem_lexidx_score_block(p->lex, p->text, b, need, rows, &n_text, text);
    float cos[MEM_INDEX_BLOCK_ROWS];
    bool block_dots = false;
    double tw = p->text_weight, vec_ub = s->sim_max < 1.0 ? s->sim_max : 1.0;
    if (hybrid) { /* every row is a candidate: text 0 for those without a query word */
        double dense[MEM_INDEX_BLOCK_ROWS] = {0};
        for (size_t i = 0; i < n_text; i++)
            dense[rows[i]] = text[rows[i]];
        memcpy(text, dense, sizeof(dense));
        n_text = n;
        for (size_t r = 0; r < n; r++)
            rows[r] = (uint32_t)r;
        block_dots = !(thr > 0.0); /* no K-th score yet: any row may enter */
        if (block_dots) s->ops->dot_rows(p->query, blk->vecs, n, idx->dim, idx->stride, cos);
    }
    size_t base = b * MEM_INDEX_BLOCK_ROWS;
    for (size_t i = 0; i < n_text; i++) {
        size_t r = rows[i];
        if (r >= n || !blk_row_selected(p, blk, r, base)) continue; /* r >= n: not yet published */
        if (hybrid && !block_dots) {
            /* the best this row can reach with any cosine, float rounding included */
            double ub = (tw * text[r] + (1.0 - tw) * vec_ub) * (1.0 + 1e-6);
            if (thr > 0.0 && ub * f_max < thr) continue;
            s->ops->dot_rows(p->query, blk->vecs + r * idx->stride, 1, idx->dim, idx->stride,
                             &cos[r]);
        }
        s->scanned++;
        float sim = hybrid ? fuse(tw, text[r], cos[r]) : (float)text[r];
        if (thr > 0.0 && (double)sim * f_max < thr * (1.0 - 1e-12)) continue;
        mem_scan_hit_t h;
        score_row(idx, p, base + r, sim, &h);
        h.text_score = text[r];
        h.vector_score = hybrid ? (double)cos[r] : 0.0;
        if (p->has_min_score && !(h.score >= p->min_score)) continue;
        heap_push(&s->top, &h);
        thr = current_thr(s);
    }
}

/* Quantise the query for the int8 pre-filter. With q = sq*cq + eq and a row
 * x = sx*c + ex (codes and scales of mem_vec_quantize_i8),
 *   q.x = sq*sx*(cq.c) + (sq*cq).ex + eq.x
 * so |q.x - sq*sx*(cq.c)| <= ||sq*cq|| * ||ex|| + ||eq|| * ||x||, and the f32 kernel's
 * own result is within (dim + 4) * FLT_EPSILON * ||q|| * ||x|| of q.x. Rows are unit
 * vectors (||x|| <= 1.001 is generous); slack adds 1e-5 for the float arithmetic of the
 * bound itself. */
static void prepare_q8(scan_state_t *s)
{
    const mem_index_t *idx = s->idx;
    s->use_q8 = s->ops->dot_rows_i8 != NULL && idx->stride <= sizeof(s->q8) && idx->n_blocks > 0 &&
                idx->blocks[0]->q8 != NULL;
    if (!s->use_q8) return;
    float eq;
    mem_vec_quantize_i8(s->p->query, idx->dim, s->q8, &s->q8_scale, &eq);
    memset(s->q8 + idx->dim, 0, idx->stride - idx->dim);
    double c2 = 0.0;
    for (size_t i = 0; i < idx->dim; i++)
        c2 += (double)s->q8[i] * (double)s->q8[i];
    double qn = (double)s->q8_scale * sqrt(c2) * (1.0 + 1e-6);
    double gamma = (double)(idx->dim + 4) * (double)FLT_EPSILON * s->sim_max * 1.001;
    s->q8_err_scale = nextafterf((float)qn, HUGE_VALF);
    s->q8_slack = (float)((double)eq * 1.001 + gamma + 1e-5);
    if (!isfinite(s->q8_err_scale) || !isfinite(s->q8_slack)) s->use_q8 = false;
}

typedef struct block_ent {
    double bound;  /* f_max * sim_ub: no score of the block exceeds it */
    double f_max;  /* bound on f (time weight and gate blend) */
    double sim_ub; /* bound on sim */
    size_t b;
} block_ent_t;

static int ent_cmp(const void *x, const void *y)
{
    const block_ent_t *a = x, *b = y;
    if (a->bound != b->bound) return a->bound > b->bound ? -1 : 1;
    return a->b > b->b ? -1 : a->b < b->b ? 1 : 0;
}

static void sort_ents(block_ent_t *e, size_t n)
{
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            block_ent_t x = e[i];
            size_t j = i;
            while (j > 0 && ent_cmp(&x, &e[j - 1]) < 0) {
                e[j] = e[j - 1];
                j--;
            }
            e[j] = x;
        }
    } else {
        qsort(e, n, sizeof(*e), ent_cmp);
    }
}

#define SCAN_CHUNK 512

/* Visit a chunk of candidate blocks in bound order, pruning as SPEC section 4 says. */
static void visit_chunk(scan_state_t *s, block_ent_t *ents, size_t n)
{
    const mem_scan_params_t *p = s->p;
    if (s->over_budget) return;
    sort_ents(ents, n);
    for (size_t i = 0; i < n; i++) {
        double thr = current_thr(s);
        if (thr > 0.0 && ents[i].bound < thr)
            return; /* sorted: every later block is bounded lower still */
        const mem_index_block_t *blk = s->idx->blocks[ents[i].b];
        double f_max = ents[i].f_max;
        double sim_ub = ents[i].sim_ub;
        if (thr > 0.0 && p->coherence_weight > 0.0 && block_f_max(s, blk, 0.0) * sim_ub < thr) {
            /* only the gate keeps this block in: try its exact gate bound */
            /* prunable only if every gate stays below g_need */
            double w = p->coherence_weight;
            double g_need = (thr / sim_ub - block_f_max(s, blk, 0.0)) / w;
            double g = block_gate_max(s->idx, blk, visible_in_block(s->idx, ents[i].b), g_need);
            double tight = block_f_max(s, blk, g);
            if (tight * sim_ub < thr) continue;
            f_max = tight;
        }
        if (!take_work(s, visible_in_block(s->idx, ents[i].b))) return;
        if (p->match == MEM_SCAN_MATCH_VECTOR)
            visit_block(s, ents[i].b, f_max);
        else
            visit_text_block(s, ents[i].b, f_max);
    }
}

static bool params_prunable(const mem_scan_params_t *p)
{
    /* The bounds assume f and the fusion weights in [0, 1]; anything else takes the
     * reference path. */
    return p->decay.recency_bias >= 0.0 && p->decay.recency_bias <= 1.0 &&
           p->coherence_weight >= 0.0 && p->coherence_weight <= 1.0 && p->decay.offset_s >= 0.0 &&
           !isnan(p->decay.half_life_s) &&
           (p->match != MEM_SCAN_MATCH_HYBRID || (p->text_weight >= 0.0 && p->text_weight <= 1.0));
}

#define TEXT_UB_STACK 1024 /* blocks whose text bounds live on the stack (256k rows) */

/* Block bounds of a text or hybrid scan: ub = the lexical index's bound on text per block;
 * sim_ub = ub (text) or tw * ub + (1 - tw) * sim_max (hybrid), times a margin for the
 * rounding of sim to float. A text scan enters only blocks holding a query term. Returns
 * false when the bounds cannot be had (no memory): the caller takes the reference path. */
static bool text_collect(scan_state_t *s, size_t part, size_t n_parts)
{
    const mem_index_t *idx = s->idx;
    const mem_scan_params_t *p = s->p;
    size_t nb = (idx->n_visible + MEM_INDEX_BLOCK_ROWS - 1) / MEM_INDEX_BLOCK_ROWS;
    double stack_ub[TEXT_UB_STACK];
    double *ub = nb <= TEXT_UB_STACK ? stack_ub : malloc(nb * sizeof(*ub));
    if (!ub) return false;
    mem_lexidx_block_bounds(p->lex, p->text, ub, nb);
    bool hybrid = p->match == MEM_SCAN_MATCH_HYBRID;
    block_ent_t ents[SCAN_CHUNK];
    size_t n_ents = 0;
    for (size_t bi = nb; bi-- > 0 && !s->over_budget;) {
        if (bi % n_parts != part) continue;
        const mem_index_block_t *blk = idx->blocks[bi];
        if (blk->ts_max < p->since_ms || blk->ts_min > p->until_ms ||
            visible_in_block(idx, bi) == 0 || (!hybrid && !(ub[bi] > 0.0)))
            continue;
        double sim_ub =
            hybrid ? p->text_weight * ub[bi] + (1.0 - p->text_weight) * s->sim_max : ub[bi];
        ents[n_ents].b = bi;
        ents[n_ents].f_max = block_f_max(s, blk, 1.0);
        ents[n_ents].sim_ub = sim_ub * (1.0 + 1e-6);
        ents[n_ents].bound = ents[n_ents].f_max * ents[n_ents].sim_ub;
        if (++n_ents == SCAN_CHUNK) {
            visit_chunk(s, ents, n_ents);
            n_ents = 0;
        }
    }
    visit_chunk(s, ents, n_ents);
    if (ub != stack_ub) free(ub);
    return true;
}

/* The whole namespace through the reference (parameters the bounds do not cover): it reads
 * every visible row, so with a budget it runs only when all of them fit. */
static bool reference_within(const mem_index_t *idx, const mem_scan_params_t *p,
                             mem_scan_hit_t *hits, size_t *n_hits, size_t *n_scanned)
{
    *n_hits = 0;
    *n_scanned = 0;
    if (p->work_budget && idx->n_visible > p->work_budget / (idx->dim + MEM_SCAN_ROW_WORK))
        return false;
    mem_scan_reference(idx, p, hits, n_hits, n_scanned);
    return true;
}

bool mem_scan_run_part(const mem_index_t *idx, const mem_vec_ops_t *ops, const mem_scan_params_t *p,
                       size_t part, size_t n_parts, mem_scan_hit_t *hits, size_t *n_hits,
                       size_t *n_scanned)
{
    if (n_parts == 0) n_parts = 1;
    if (!params_prunable(p) || p->k == 0) {
        if (part == 0 && p->k > 0) return reference_within(idx, p, hits, n_hits, n_scanned);
        *n_hits = 0;
        *n_scanned = 0;
        return true;
    }
    scan_state_t s = {
        .idx = idx,
        .p = p,
        .ops = ops,
        .select_ge = ops->select_ge ? ops->select_ge : mem_vec_select_ge_scalar,
        .top = {.h = hits, .n = 0, .k = p->k},
    };
    double qq = 0.0;
    for (size_t i = 0; p->match != MEM_SCAN_MATCH_TEXT && i < idx->dim; i++)
        qq += (double)p->query[i] * (double)p->query[i];
    /* rows are unit vectors rounded to float; the kernel adds at most dim ulps */
    s.sim_max = sqrt(qq) * (1.0 + (double)(idx->dim + 4) * (double)FLT_EPSILON);
    if (p->match != MEM_SCAN_MATCH_VECTOR) {
        if (!text_collect(&s, part, n_parts)) {
            if (part == 0) return reference_within(idx, p, hits, n_hits, n_scanned);
            *n_hits = 0;
            *n_scanned = 0;
            return true;
        }
    } else {
        prepare_q8(&s);
        block_ent_t ents[SCAN_CHUNK];
        size_t n_ents = 0;
        size_t nb = (idx->n_visible + MEM_INDEX_BLOCK_ROWS - 1) / MEM_INDEX_BLOCK_ROWS;
        /* newest first, so with an origin at "now" the first chunk holds the best blocks */
        for (size_t bi = nb; bi-- > 0 && !s.over_budget;) {
            if (bi % n_parts != part) continue;
            const mem_index_block_t *blk = idx->blocks[bi];
            if (blk->ts_max < p->since_ms || blk->ts_min > p->until_ms ||
                visible_in_block(idx, bi) == 0)
                continue;
            ents[n_ents].b = bi;
            ents[n_ents].f_max = block_f_max(&s, blk, 1.0);
            ents[n_ents].sim_ub = s.sim_max;
            ents[n_ents].bound = ents[n_ents].f_max * s.sim_max;
            if (++n_ents == SCAN_CHUNK) {
                visit_chunk(&s, ents, n_ents);
                n_ents = 0;
            }
        }
        visit_chunk(&s, ents, n_ents);
    }
    *n_scanned = s.scanned;
    if (s.over_budget) {
        *n_hits = 0;
        return false;
    }
    sort_hits(hits, s.top.n);
    *n_hits = s.top.n;
    return true;
}

bool mem_scan_run(const mem_index_t *idx, const mem_vec_ops_t *ops, const mem_scan_params_t *p,
                  mem_scan_hit_t *hits, size_t *n_hits, size_t *n_scanned)
{
    return mem_scan_run_part(idx, ops, p, 0, 1, hits, n_hits, n_scanned);
}

/* Candidates of one block: ents[i].b is the block, first/count its slice of pos[]. */
typedef struct cand_ent {
    double bound, f_max;
    size_t b, first, count;
} cand_ent_t;

static int cand_cmp(const void *x, const void *y)
{
    const cand_ent_t *a = x, *b = y;
    if (a->bound != b->bound) return a->bound > b->bound ? -1 : 1;
    return a->b > b->b ? -1 : a->b < b->b ? 1 : 0;
}

bool mem_scan_rows(const mem_index_t *idx, const mem_vec_ops_t *ops, const mem_scan_params_t *p,
                   const size_t *pos, size_t n, mem_scan_hit_t *hits, size_t *n_hits,
                   size_t *n_scanned)
{
    scan_state_t s = {
        .idx = idx,
        .p = p,
        .ops = ops,
        .top = {.h = hits, .n = 0, .k = p->k},
    };
    *n_hits = *n_scanned = 0;
    if (p->k == 0 || n == 0) return true;
    if (p->match != MEM_SCAN_MATCH_VECTOR) {
        /* text relevance comes from the lexical index's blocks: the listed rows become a mask
         * (with any mask already given) for the full scan, which gives the same answer */
        uint64_t *m = calloc(idx->n_visible / 64 + 1, sizeof(*m));
        if (m) {
            for (size_t i = 0; i < n; i++)
                if (pos[i] < idx->n_visible &&
                    (!p->row_mask || (p->row_mask[pos[i] / 64] >> (pos[i] % 64) & 1)))
                    m[pos[i] / 64] |= UINT64_C(1) << (pos[i] % 64);
            mem_scan_params_t q = *p;
            q.row_mask = m;
            bool within = mem_scan_run(idx, ops, &q, hits, n_hits, n_scanned);
            free(m);
            return within;
        }
        return true; /* no memory for the mask: no hits, as before */
    }
    /* The scan's block bounds prune here too: candidates are grouped by block, blocks
     * visited in order of their bound, and once a bound is below the K-th score no later
     * block can enter (params_prunable as in the scan; otherwise every candidate is scored). */
    bool prunable = params_prunable(p);
    double qq = 0.0;
    for (size_t i = 0; i < idx->dim; i++)
        qq += (double)p->query[i] * (double)p->query[i];
    s.sim_max = sqrt(qq) * (1.0 + (double)(idx->dim + 4) * (double)FLT_EPSILON);
    size_t n_ents = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || pos[i] / MEM_INDEX_BLOCK_ROWS != pos[i - 1] / MEM_INDEX_BLOCK_ROWS) n_ents++;
    cand_ent_t *ents = malloc(n_ents * sizeof(*ents));
    if (!ents) { /* no room for the plan: score every candidate in order */
        prunable = false;
    } else {
        size_t e = 0;
        for (size_t i = 0; i < n; i++) {
            size_t b = pos[i] / MEM_INDEX_BLOCK_ROWS;
            if (i == 0 || b != pos[i - 1] / MEM_INDEX_BLOCK_ROWS) {
                ents[e].b = b;
                ents[e].first = i;
                ents[e].count = 0;
                ents[e].f_max = prunable ? block_f_max(&s, idx->blocks[b], 1.0) : 1.0;
                ents[e].bound = ents[e].f_max * s.sim_max;
                e++;
            }
            ents[e - 1].count++;
        }
        if (prunable) qsort(ents, n_ents, sizeof(*ents), cand_cmp);
    }
    size_t scanned = 0;
    for (size_t e = 0; e < (ents ? n_ents : 1); e++) {
        size_t first = ents ? ents[e].first : 0, count = ents ? ents[e].count : n;
        if (ents && prunable) {
            double thr = current_thr(&s);
            if (thr > 0.0 && ents[e].bound < thr) break; /* sorted: the rest is bounded lower */
        }
        if (!take_work(&s, count)) break;
        for (size_t i = first; i < first + count; i++) {
            size_t at = pos[i];
            if (at >= idx->n_visible || !row_selected(idx, p, at)) continue;
            scanned++;
            float sim;
            ops->dot_rows(p->query, mem_index_vec(idx, at), 1, idx->dim, idx->stride, &sim);
            mem_scan_hit_t h;
            score_row(idx, p, at, sim, &h);
            if (p->has_min_score && !(h.score >= p->min_score)) continue;
            heap_push(&s.top, &h);
        }
    }
    free(ents);
    *n_scanned = scanned;
    if (s.over_budget) return false; /* *n_hits stays 0 */
    sort_hits(hits, s.top.n);
    *n_hits = s.top.n;
    return true;
}

void mem_scan_merge(const mem_scan_hit_t *const *lists, const size_t *counts, size_t n_lists,
                    size_t k, mem_scan_hit_t *out, size_t *n_out)
{
    size_t n = 0;
    if (k == 0) {
        *n_out = 0;
        return;
    }
    for (size_t l = 0; l < n_lists; l++)
        for (size_t i = 0; i < counts[l]; i++) {
            if (n == k && !mem_scan_hit_before(&lists[l][i], &out[k - 1]))
                break; /* each list is sorted: the rest ranks lower still */
            topk_offer(out, &n, k, &lists[l][i]);
        }
    *n_out = n;
}
