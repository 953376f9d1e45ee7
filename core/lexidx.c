/* lexidx.c - term dictionary, block postings with per-block maxima, exact statistics, BM25
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A term's postings are one array of (row offset in its block | tf << 8), in
 * position order (rows are appended in order), plus one "piece" per block it occurs in:
 * where its postings of that block start, and the largest tf and smallest row length among
 * them. BM25's term score tf / (tf + k1 * (1 - b + b * dl / avgdl)) grows with tf and
 * shrinks with dl, in floating point too (rounding is monotone), so the score at (max tf,
 * min dl) bounds every posting of the piece, whatever avgdl and k1, b are when the query
 * runs: the bounds never go stale, a removed row only makes them looser until a vacuum.
 * Scores are summed over the query terms in query order everywhere (reference, block
 * scorer, bounds), so the block scorer equals the reference bit for bit and a bound is
 * never below a score it bounds (floating-point addition is monotone in each operand).
 */
#include "core/lexidx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

#define ROWS MEM_LEXIDX_BLOCK_ROWS
_Static_assert(MEM_LEXIDX_BLOCK_ROWS <= 256, "a posting keeps the row offset in 8 bits");

#define TF_MAX  ((1u << 24) - 1) /* a posting keeps tf in 24 bits; a 1 MiB text has fewer terms */
#define NO_TERM UINT32_MAX

enum row_state {
    ROW_ACTIVE = 1,  /* neither superseded nor archived */
    ROW_TEXT = 2,    /* the row has text (possibly without any term) */
    ROW_DELETED = 4, /* a hole */
    ROW_COUNTED = 8, /* in the statistics */
};

typedef struct lex_piece {
    uint32_t block;
    uint32_t start; /* first posting of this block in the term's array */
    uint32_t max_tf;
    uint32_t min_dl;
} lex_piece_t;

typedef struct lex_term {
    uint32_t df; /* counted rows holding the term */
    uint32_t name_off;
    uint8_t name_len;
    uint32_t n_post, cap_post;
    uint32_t *post;
    uint32_t n_pieces, cap_pieces;
    lex_piece_t *pieces;
} lex_term_t;

typedef struct lex_fwd {
    uint32_t term, tf;
} lex_fwd_t;

typedef struct lex_block {
    uint32_t dl[ROWS];
    uint32_t start[ROWS + 1]; /* row r's terms: fwd[start[r] .. start[r + 1]) */
    uint8_t state[ROWS];      /* enum row_state bits */
    uint32_t n_rows;
    uint32_t n_fwd, cap_fwd;
    lex_fwd_t *fwd;
} lex_block_t;

struct mem_lexidx {
    lex_block_t **blocks;
    size_t n_blocks, cap_blocks;
    size_t n_rows, n_published;
    uint64_t n_docs, total_len;
    size_t n_postings;
    lex_term_t *terms;
    size_t n_terms, cap_terms;
    char *names;
    size_t n_names, cap_names;
    uint32_t *slots; /* term id + 1, 0 = empty */
    size_t cap_slots;
    uint32_t *scratch; /* append: the doc's term ids */
    size_t cap_scratch;
};

static uint64_t hash_term(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, then a finaliser for the low bits */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 31;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 29;
    return h;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap) return MEM_OK;
    size_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    void *n = realloc(*p, c * elem);
    if (!n) return MEM_ENOMEM;
    *p = n;
    *cap = c;
    return MEM_OK;
}

/* ---- documents ---------------------------------------------------------------------- */

typedef struct doc_run {
    mem_lexdoc_t *doc;
    int rc;
} doc_run_t;

static int doc_slots_grow(mem_lexdoc_t *d)
{
    size_t cap = d->_cap_slots ? d->_cap_slots * 2 : 64;
    uint32_t *s = calloc(cap, sizeof(*s));
    if (!s) return MEM_ENOMEM;
    for (size_t i = 0; i < d->n_terms; i++) {
        const char *t = d->_bytes + d->_off[i];
        size_t j = hash_term(t, d->_off[i + 1] - d->_off[i]) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(d->_slots);
    d->_slots = s;
    d->_cap_slots = cap;
    return MEM_OK;
}

static int doc_add(const char *t, size_t len, void *ud)
{
    mem_lexdoc_t *d = ud;
    if ((d->n_terms + 1) * 2 > d->_cap_slots && doc_slots_grow(d) != MEM_OK) return MEM_ENOMEM;
    size_t mask = d->_cap_slots - 1;
    size_t j = hash_term(t, len) & mask;
    for (; d->_slots[j]; j = (j + 1) & mask) {
        uint32_t i = d->_slots[j] - 1;
        if (d->_off[i + 1] - d->_off[i] == len && memcmp(d->_bytes + d->_off[i], t, len) == 0) {
            if (d->_tf[i] < TF_MAX) d->_tf[i]++;
            if (d->len < UINT32_MAX) d->len++;
            return 0;
        }
    }
    size_t used = d->n_terms ? d->_off[d->n_terms] : 0;
    if (grow((void **)&d->_bytes, &d->_cap_bytes, used + len, 1, 256) != MEM_OK)
        return MEM_ENOMEM;
    size_t cap_off = d->_cap_terms; /* _off has one more entry than _tf */
    if (d->n_terms + 2 > d->_cap_terms) {
        if (grow((void **)&d->_tf, &cap_off, d->n_terms + 2, sizeof(uint32_t), 32) != MEM_OK)
            return MEM_ENOMEM;
        uint32_t *off = realloc(d->_off, cap_off * sizeof(uint32_t));
        if (!off) return MEM_ENOMEM;
        d->_off = off;
        d->_cap_terms = cap_off;
    }
    memcpy(d->_bytes + used, t, len);
    d->_off[d->n_terms] = (uint32_t)used;
    d->_off[d->n_terms + 1] = (uint32_t)(used + len);
    d->_tf[d->n_terms] = 1;
    d->_slots[j] = (uint32_t)(++d->n_terms);
    if (d->len < UINT32_MAX) d->len++;
    return 0;
}

int mem_lexdoc_build(mem_lexdoc_t *doc, mem_lextok_t *tk, const char *text, size_t len)
{
    doc->n_terms = 0;
    doc->len = 0;
    if (doc->_slots) memset(doc->_slots, 0, doc->_cap_slots * sizeof(*doc->_slots));
    int rc = mem_lextok_run(tk, text, len, doc_add, doc);
    return rc == 0 ? MEM_OK : MEM_ENOMEM;
}

void mem_lexdoc_deinit(mem_lexdoc_t *doc)
{
    if (!doc) return;
    free(doc->_bytes);
    free(doc->_off);
    free(doc->_tf);
    free(doc->_slots);
    memset(doc, 0, sizeof(*doc));
}

/* ---- the dictionary ----------------------------------------------------------------- */

static uint32_t term_find(const mem_lexidx_t *lx, const char *t, size_t len)
{
    if (!lx->cap_slots) return NO_TERM;
    size_t mask = lx->cap_slots - 1;
    for (size_t j = hash_term(t, len) & mask; lx->slots[j]; j = (j + 1) & mask) {
        const lex_term_t *te = &lx->terms[lx->slots[j] - 1];
        if (te->name_len == len && memcmp(lx->names + te->name_off, t, len) == 0)
            return lx->slots[j] - 1;
    }
    return NO_TERM;
}

static int slots_grow(mem_lexidx_t *lx)
{
    size_t cap = lx->cap_slots ? lx->cap_slots * 2 : 1024;
    uint32_t *s = calloc(cap, sizeof(*s));
    if (!s) return MEM_ENOMEM;
    for (size_t i = 0; i < lx->n_terms; i++) {
        const lex_term_t *te = &lx->terms[i];
        size_t j = hash_term(lx->names + te->name_off, te->name_len) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(lx->slots);
    lx->slots = s;
    lx->cap_slots = cap;
    return MEM_OK;
}

/* The id of t, added (with no postings) when new. MEM_OK or MEM_ENOMEM. */
static int term_intern(mem_lexidx_t *lx, const char *t, size_t len, uint32_t *id)
{
    uint32_t f = term_find(lx, t, len);
    if (f != NO_TERM) {
        *id = f;
        return MEM_OK;
    }
    if (len > 255 || lx->n_terms >= NO_TERM - 1 || lx->n_names + len > UINT32_MAX)
        return MEM_ENOMEM;
    if ((lx->n_terms + 1) * 2 > lx->cap_slots && slots_grow(lx) != MEM_OK) return MEM_ENOMEM;
    if (grow((void **)&lx->terms, &lx->cap_terms, lx->n_terms + 1, sizeof(lex_term_t), 256) !=
            MEM_OK ||
        grow((void **)&lx->names, &lx->cap_names, lx->n_names + len, 1, 4096) != MEM_OK)
        return MEM_ENOMEM;
    lex_term_t *te = &lx->terms[lx->n_terms];
    memset(te, 0, sizeof(*te));
    te->name_off = (uint32_t)lx->n_names;
    te->name_len = (uint8_t)len;
    memcpy(lx->names + lx->n_names, t, len);
    lx->n_names += len;
    size_t mask = lx->cap_slots - 1;
    size_t j = hash_term(t, len) & mask;
    while (lx->slots[j])
        j = (j + 1) & mask;
    lx->slots[j] = (uint32_t)lx->n_terms + 1;
    *id = (uint32_t)lx->n_terms++;
    return MEM_OK;
}

/* ---- the index ---------------------------------------------------------------------- */

int mem_lexidx_new(mem_lexidx_t **out)
{
    mem_lexidx_t *lx = calloc(1, sizeof(*lx));
    if (!lx) return MEM_ENOMEM;
    *out = lx;
    return MEM_OK;
}

void mem_lexidx_free(mem_lexidx_t *lx)
{
    if (!lx) return;
    for (size_t b = 0; b < lx->n_blocks; b++) {
        free(lx->blocks[b]->fwd);
        free(lx->blocks[b]);
    }
    free(lx->blocks);
    for (size_t i = 0; i < lx->n_terms; i++) {
        free(lx->terms[i].post);
        free(lx->terms[i].pieces);
    }
    free(lx->terms);
    free(lx->names);
    free(lx->slots);
    free(lx->scratch);
    free(lx);
}

void mem_lexidx_get_stats(const mem_lexidx_t *lx, mem_lexidx_stats_t *out)
{
    size_t bytes = sizeof(*lx) + lx->cap_blocks * sizeof(*lx->blocks) +
                   lx->cap_terms * sizeof(*lx->terms) + lx->cap_names +
                   lx->cap_slots * sizeof(*lx->slots) + lx->cap_scratch * sizeof(*lx->scratch);
    for (size_t b = 0; b < lx->n_blocks; b++)
        bytes += sizeof(lex_block_t) + lx->blocks[b]->cap_fwd * sizeof(lex_fwd_t);
    for (size_t i = 0; i < lx->n_terms; i++)
        bytes += lx->terms[i].cap_post * sizeof(uint32_t) +
                 lx->terms[i].cap_pieces * sizeof(lex_piece_t);
    *out = (mem_lexidx_stats_t){
        .n_rows = lx->n_rows,
        .n_published = lx->n_published,
        .n_docs = lx->n_docs,
        .total_len = lx->total_len,
        .n_terms = lx->n_terms,
        .n_postings = lx->n_postings,
        .bytes = bytes,
    };
}

uint32_t mem_lexidx_df(const mem_lexidx_t *lx, const char *term, size_t len)
{
    uint32_t id = term_find(lx, term, len);
    return id == NO_TERM ? 0 : lx->terms[id].df;
}

static lex_block_t *block_of(const mem_lexidx_t *lx, size_t pos)
{
    return lx->blocks[pos / ROWS];
}

/* Bring row pos in or out of the statistics according to its state. */
static void recount(mem_lexidx_t *lx, size_t pos)
{
    lex_block_t *blk = block_of(lx, pos);
    size_t r = pos % ROWS;
    uint8_t st = blk->state[r];
    bool want = pos < lx->n_published && (st & ROW_ACTIVE) && (st & ROW_TEXT) &&
                !(st & ROW_DELETED);
    bool have = (st & ROW_COUNTED) != 0;
    if (want == have) return;
    for (uint32_t e = blk->start[r]; e < blk->start[r + 1]; e++) {
        lex_term_t *te = &lx->terms[blk->fwd[e].term];
        te->df = want ? te->df + 1 : te->df - 1;
    }
    if (want) {
        lx->n_docs++;
        lx->total_len += blk->dl[r];
        blk->state[r] |= ROW_COUNTED;
    } else {
        lx->n_docs--;
        lx->total_len -= blk->dl[r];
        blk->state[r] &= (uint8_t)~ROW_COUNTED;
    }
}

/* Append a row from term ids (ids[i] seen tfs[i] times), everything reserved or not. */
static int append_ids(mem_lexidx_t *lx, const uint32_t *ids, const uint32_t *tfs, size_t n,
                      uint32_t dl, uint8_t state, size_t *pos)
{
    size_t p = lx->n_rows, b = p / ROWS, r = p % ROWS;
    if (p >= (size_t)UINT32_MAX - 1) return MEM_ENOMEM;
    /* reserve everything first, so a failure leaves the index as it was */
    if (b == lx->n_blocks) {
        if (grow((void **)&lx->blocks, &lx->cap_blocks, lx->n_blocks + 1, sizeof(*lx->blocks),
                 16) != MEM_OK)
            return MEM_ENOMEM;
        lex_block_t *nb = calloc(1, sizeof(*nb));
        if (!nb) return MEM_ENOMEM;
        lx->blocks[lx->n_blocks++] = nb;
    }
    lex_block_t *blk = lx->blocks[b];
    size_t cap_fwd = blk->cap_fwd;
    if (grow((void **)&blk->fwd, &cap_fwd, (size_t)blk->n_fwd + n, sizeof(lex_fwd_t), 64) !=
        MEM_OK)
        return MEM_ENOMEM;
    blk->cap_fwd = (uint32_t)cap_fwd;
    for (size_t i = 0; i < n; i++) {
        lex_term_t *te = &lx->terms[ids[i]];
        size_t cp = te->cap_post, cq = te->cap_pieces;
        bool new_piece = te->n_pieces == 0 || te->pieces[te->n_pieces - 1].block != b;
        if (grow((void **)&te->post, &cp, (size_t)te->n_post + 1, sizeof(uint32_t), 2) != MEM_OK)
            return MEM_ENOMEM;
        te->cap_post = (uint32_t)cp;
        if (new_piece && grow((void **)&te->pieces, &cq, (size_t)te->n_pieces + 1,
                              sizeof(lex_piece_t), 1) != MEM_OK)
            return MEM_ENOMEM;
        te->cap_pieces = (uint32_t)cq;
    }
    /* write */
    blk->dl[r] = dl;
    blk->state[r] = state;
    blk->start[r] = blk->n_fwd;
    for (size_t i = 0; i < n; i++) {
        lex_term_t *te = &lx->terms[ids[i]];
        uint32_t tf = tfs[i] > TF_MAX ? TF_MAX : tfs[i];
        if (te->n_pieces == 0 || te->pieces[te->n_pieces - 1].block != b)
            te->pieces[te->n_pieces++] = (lex_piece_t){
                .block = (uint32_t)b, .start = te->n_post, .max_tf = tf, .min_dl = dl};
        lex_piece_t *pc = &te->pieces[te->n_pieces - 1];
        if (tf > pc->max_tf) pc->max_tf = tf;
        if (dl < pc->min_dl) pc->min_dl = dl;
        te->post[te->n_post++] = (uint32_t)r | tf << 8;
        blk->fwd[blk->n_fwd++] = (lex_fwd_t){.term = ids[i], .tf = tf};
    }
    blk->start[r + 1] = blk->n_fwd;
    blk->n_rows++;
    lx->n_rows++;
    lx->n_postings += n;
    *pos = p;
    return MEM_OK;
}

int mem_lexidx_append(mem_lexidx_t *lx, const mem_lexdoc_t *doc, bool active, size_t *pos)
{
    size_t n = doc ? doc->n_terms : 0;
    if (grow((void **)&lx->scratch, &lx->cap_scratch, n + 1, sizeof(uint32_t), 64) != MEM_OK)
        return MEM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *t = doc->_bytes + doc->_off[i];
        if (term_intern(lx, t, doc->_off[i + 1] - doc->_off[i], &lx->scratch[i]) != MEM_OK)
            return MEM_ENOMEM; /* new terms may stay in the dictionary, without postings */
    }
    uint8_t state = (uint8_t)((active ? ROW_ACTIVE : 0) | (doc ? ROW_TEXT : 0));
    return append_ids(lx, lx->scratch, doc ? doc->_tf : NULL, n, doc ? doc->len : 0, state, pos);
}

void mem_lexidx_publish(mem_lexidx_t *lx, size_t n)
{
    if (n > lx->n_rows) n = lx->n_rows;
    size_t from = lx->n_published;
    if (n <= from) return;
    lx->n_published = n;
    for (size_t p = from; p < n; p++)
        recount(lx, p);
}

void mem_lexidx_set_active(mem_lexidx_t *lx, size_t pos, bool active)
{
    if (pos >= lx->n_rows) return;
    lex_block_t *blk = block_of(lx, pos);
    size_t r = pos % ROWS;
    if (active)
        blk->state[r] |= ROW_ACTIVE;
    else
        blk->state[r] &= (uint8_t)~ROW_ACTIVE;
    recount(lx, pos);
}

void mem_lexidx_remove(mem_lexidx_t *lx, size_t pos)
{
    if (pos >= lx->n_rows) return;
    block_of(lx, pos)->state[pos % ROWS] |= ROW_DELETED;
    recount(lx, pos);
}

int mem_lexidx_vacuum(const mem_lexidx_t *old, mem_lexidx_t **out)
{
    if (old->n_published != old->n_rows) return MEM_EINVAL;
    int rc = MEM_ENOMEM;
    mem_lexidx_t *lx = NULL;
    uint32_t *remap = NULL, *ids = NULL, *tfs = NULL;
    size_t cap_ids = 0, cap_tfs = 0;
    if (mem_lexidx_new(&lx) != MEM_OK) goto out;
    remap = malloc((old->n_terms + 1) * sizeof(*remap));
    if (!remap) goto out;
    for (size_t i = 0; i < old->n_terms; i++)
        remap[i] = NO_TERM;
    /* terms still used by a kept row, in their old order */
    for (size_t b = 0; b < old->n_blocks; b++) {
        const lex_block_t *blk = old->blocks[b];
        for (uint32_t r = 0; r < blk->n_rows; r++) {
            if (blk->state[r] & ROW_DELETED) continue;
            for (uint32_t e = blk->start[r]; e < blk->start[r + 1]; e++)
                remap[blk->fwd[e].term] = 0;
        }
    }
    for (size_t i = 0; i < old->n_terms; i++) {
        if (remap[i] == NO_TERM) continue;
        const lex_term_t *te = &old->terms[i];
        if (term_intern(lx, old->names + te->name_off, te->name_len, &remap[i]) != MEM_OK)
            goto out;
    }
    for (size_t b = 0; b < old->n_blocks; b++) {
        const lex_block_t *blk = old->blocks[b];
        for (uint32_t r = 0; r < blk->n_rows; r++) {
            uint8_t st = blk->state[r];
            if (st & ROW_DELETED) continue;
            size_t n = blk->start[r + 1] - blk->start[r];
            if (grow((void **)&ids, &cap_ids, n + 1, sizeof(*ids), 64) != MEM_OK ||
                grow((void **)&tfs, &cap_tfs, n + 1, sizeof(*tfs), 64) != MEM_OK)
                goto out;
            for (size_t e = 0; e < n; e++) {
                const lex_fwd_t *f = &blk->fwd[blk->start[r] + e];
                ids[e] = remap[f->term];
                tfs[e] = f->tf;
            }
            size_t pos;
            if (append_ids(lx, ids, tfs, n, blk->dl[r], st & (uint8_t)(ROW_ACTIVE | ROW_TEXT),
                           &pos) != MEM_OK)
                goto out;
        }
    }
    mem_lexidx_publish(lx, lx->n_rows);
    *out = lx;
    lx = NULL;
    rc = MEM_OK;
out:
    mem_lexidx_free(lx);
    free(remap);
    free(ids);
    free(tfs);
    return rc;
}

/* ---- queries ------------------------------------------------------------------------ */

typedef struct query_run {
    mem_lexq_t *q;
    const mem_lexidx_t *lx;
    char (*names)[MEM_LEXTOK_MAX_BYTES]; /* distinct unknown terms, to count them once */
    uint8_t *name_len;
    size_t n_unknown;
} query_run_t;

static int query_add(const char *t, size_t len, void *ud)
{
    query_run_t *qr = ud;
    mem_lexq_t *q = qr->q;
    if (q->n >= MEM_LEXIDX_QUERY_TERMS) return 0;
    uint32_t id = term_find(qr->lx, t, len);
    if (id != NO_TERM) {
        for (size_t i = 0; i < q->n; i++)
            if (q->term[i] == id) return 0;
    } else {
        for (size_t i = 0; i < qr->n_unknown; i++)
            if (qr->name_len[i] == len && memcmp(qr->names[i], t, len) == 0) return 0;
        memcpy(qr->names[qr->n_unknown], t, len);
        qr->name_len[qr->n_unknown++] = (uint8_t)len;
    }
    q->term[q->n++] = id;
    return 0;
}

int mem_lexq_prepare(mem_lexq_t *q, const mem_lexidx_t *lx, mem_lextok_t *tk, const char *text,
                     size_t len, const mem_bm25_t *params)
{
    memset(q, 0, sizeof(*q));
    q->params = *params;
    q->term = malloc(MEM_LEXIDX_QUERY_TERMS * sizeof(*q->term));
    q->w = malloc(MEM_LEXIDX_QUERY_TERMS * sizeof(*q->w));
    query_run_t qr = {.q = q, .lx = lx};
    qr.names = malloc(MEM_LEXIDX_QUERY_TERMS * sizeof(*qr.names));
    qr.name_len = malloc(MEM_LEXIDX_QUERY_TERMS);
    int rc = MEM_ENOMEM;
    if (!q->term || !q->w || !qr.names || !qr.name_len) goto out;
    if (mem_lextok_run(tk, text, len, query_add, &qr) != 0) goto out;
    double n_docs = (double)lx->n_docs, sum = 0.0;
    for (size_t i = 0; i < q->n; i++) {
        double df = q->term[i] == NO_TERM ? 0.0 : (double)lx->terms[q->term[i]].df;
        q->w[i] = log(1.0 + (n_docs - df + 0.5) / (df + 0.5));
        sum += q->w[i];
    }
    for (size_t i = 0; i < q->n; i++)
        q->w[i] /= sum;
    double avgdl = (lx->n_docs > 0 && lx->total_len > 0)
                       ? (double)lx->total_len / (double)lx->n_docs
                       : 1.0;
    q->sat_a = params->k1 * (1.0 - params->b);
    q->sat_c = params->k1 * params->b / avgdl;
    rc = MEM_OK;
out:
    free(qr.names);
    free(qr.name_len);
    if (rc != MEM_OK) mem_lexq_deinit(q);
    return rc;
}

void mem_lexq_deinit(mem_lexq_t *q)
{
    if (!q) return;
    free(q->term);
    free(q->w);
    memset(q, 0, sizeof(*q));
}

size_t mem_lexq_known_terms(const mem_lexq_t *q)
{
    size_t n = 0;
    for (size_t i = 0; i < q->n; i++)
        n += q->term[i] != NO_TERM;
    return n;
}

/* The one expression every path uses for a term's share of text(d). */
static inline double term_score(const mem_lexq_t *q, size_t i, uint32_t tf, uint32_t dl)
{
    double f = (double)tf;
    return q->w[i] * (f / (f + q->sat_a + q->sat_c * (double)dl));
}

double mem_lexidx_score_row(const mem_lexidx_t *lx, const mem_lexq_t *q, size_t pos)
{
    if (pos >= lx->n_rows) return 0.0;
    const lex_block_t *blk = block_of(lx, pos);
    size_t r = pos % ROWS;
    double s = 0.0;
    for (size_t i = 0; i < q->n; i++) {
        if (q->term[i] == NO_TERM) continue;
        for (uint32_t e = blk->start[r]; e < blk->start[r + 1]; e++)
            if (blk->fwd[e].term == q->term[i]) {
                s += term_score(q, i, blk->fwd[e].tf, blk->dl[r]);
                break;
            }
    }
    return s;
}

void mem_lexidx_block_bounds(const mem_lexidx_t *lx, const mem_lexq_t *q, double *ub,
                             size_t n_blocks)
{
    memset(ub, 0, n_blocks * sizeof(*ub));
    for (size_t i = 0; i < q->n; i++) {
        if (q->term[i] == NO_TERM) continue;
        const lex_term_t *te = &lx->terms[q->term[i]];
        for (uint32_t k = 0; k < te->n_pieces; k++) {
            const lex_piece_t *pc = &te->pieces[k];
            if (pc->block < n_blocks) ub[pc->block] += term_score(q, i, pc->max_tf, pc->min_dl);
        }
    }
}

/* The piece of te in block b, or NULL. */
static const lex_piece_t *find_piece(const lex_term_t *te, uint32_t b, uint32_t *end)
{
    uint32_t lo = 0, hi = te->n_pieces;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (te->pieces[mid].block < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == te->n_pieces || te->pieces[lo].block != b) return NULL;
    *end = lo + 1 < te->n_pieces ? te->pieces[lo + 1].start : te->n_post;
    return &te->pieces[lo];
}

void mem_lexidx_score_block(const mem_lexidx_t *lx, const mem_lexq_t *q, size_t b, uint32_t *rows,
                            size_t *n, double *scores)
{
    uint64_t seen[ROWS / 64 + 1] = {0};
    *n = 0;
    if (b >= lx->n_blocks) return;
    const lex_block_t *blk = lx->blocks[b];
    for (size_t i = 0; i < q->n; i++) {
        if (q->term[i] == NO_TERM) continue;
        const lex_term_t *te = &lx->terms[q->term[i]];
        uint32_t end;
        const lex_piece_t *pc = find_piece(te, (uint32_t)b, &end);
        if (!pc) continue;
        for (uint32_t k = pc->start; k < end; k++) {
            uint32_t r = te->post[k] & 0xffu, tf = te->post[k] >> 8;
            double s = term_score(q, i, tf, blk->dl[r]);
            if (seen[r / 64] >> (r % 64) & 1) {
                scores[r] += s;
            } else {
                seen[r / 64] |= 1ull << (r % 64);
                scores[r] = 0.0 + s; /* 0 + s: the reference's first addition, bit for bit */
            }
        }
    }
    for (size_t w = 0; w < ROWS / 64 + 1; w++)
        for (uint64_t m = seen[w]; m; m &= m - 1)
            rows[(*n)++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));
}
