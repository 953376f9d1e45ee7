/* lexidx.c - term dictionaries, word postings with per-block maxima, exact statistics, BM25
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Words: a term's postings are one array of (row offset in its block | tf << 8),
 * in position order (rows are appended in order), plus one "piece" per block it occurs
 * in: where its postings of that block start, and the largest tf and smallest row length
 * in them. BM25's term score tf / (tf + k1 * (1 - b + b * dl / avgdl)) grows with tf and
 * shrinks with dl, in floating point too (rounding is monotone), so the score at (max tf,
 * min dl) bounds every posting of the piece, whatever avgdl, k1 and b are when the query
 * runs: the bounds never go stale, a removed row only makes them looser until a vacuum.
 *
 * Trigrams have no postings: a row is a candidate only through a query word, so its
 * trigram score is computed for the candidates that can still enter, from the row's own
 * (term, tf) list and a small hash of the query's trigrams. Their bound is global: per
 * trigram the largest tf and smallest row length anywhere. That saves most of the memory
 * (trigrams are five times as many as words) and keeps a query's cost that of its words.
 *
 * Every path sums the words in query order, then the trigrams in query order, with the
 * same expressions (reference, block scorer, bounds), so the block scorer equals the
 * reference bit for bit and a bound is never below a score it bounds (floating-point
 * addition is monotone in each operand).
 */
#include "core/lexidx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

#define ROWS MEM_LEXIDX_BLOCK_ROWS
#define NF   MEM_LEXIDX_N_FIELDS
_Static_assert(MEM_LEXIDX_BLOCK_ROWS <= 256, "a posting keeps the row offset in 8 bits");

#define TF_MAX  UINT16_MAX /* term frequencies count up to 65535 */
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
    uint32_t max_tf, min_dl; /* over every row ever appended: the trigram bound */
    uint32_t n_post, cap_post;
    uint32_t *post; /* words only */
    uint32_t n_pieces, cap_pieces;
    lex_piece_t *pieces; /* words only */
} lex_term_t;

typedef struct lex_dict {
    lex_term_t *terms;
    size_t n_terms, cap_terms;
    char *names;
    size_t n_names, cap_names;
    uint64_t *slots; /* hash << 32 | (term id + 1); 0 = empty. The hash spares most probes
                        a look at the term itself (a cache miss each). */
    size_t cap_slots;
    uint64_t total_len; /* over the counted rows */
    size_t n_postings;  /* (term, row) pairs, holes included */
} lex_dict_t;

typedef struct lex_rows { /* one field of one block */
    uint32_t dl[ROWS];
    uint32_t start[ROWS + 1]; /* row r's terms: fterm/ftf[start[r] .. start[r + 1]) */
    uint32_t n_fwd, cap_fwd;
    uint32_t *fterm;
    uint16_t *ftf;
} lex_rows_t;

typedef struct lex_block {
    uint8_t state[ROWS]; /* enum row_state bits */
    uint32_t n_rows;
    lex_rows_t f[NF];
} lex_block_t;

struct mem_lexidx {
    bool grams; /* the trigram field is kept */
    lex_block_t **blocks;
    size_t n_blocks, cap_blocks;
    size_t n_rows, n_published;
    uint64_t n_docs;
    lex_dict_t d[NF];
    uint32_t *scratch[NF]; /* append: a doc's term ids per field */
    size_t cap_scratch[NF];
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

static int doc_slots_grow(mem_lexdoc_field_t *d)
{
    size_t cap = d->_cap_slots ? d->_cap_slots * 2 : 64;
    uint32_t *s = calloc(cap, sizeof(*s));
    if (!s) return MEM_ENOMEM;
    for (size_t i = 0; i < d->n_terms; i++) {
        size_t j = hash_term(d->_bytes + d->_off[i], d->_off[i + 1] - d->_off[i]) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(d->_slots);
    d->_slots = s;
    d->_cap_slots = cap;
    return MEM_OK;
}

/* Count term t (len bytes) times more in d. */
static int doc_add_n(mem_lexdoc_field_t *d, const char *t, size_t len, uint32_t times)
{
    d->len = d->len > UINT32_MAX - times ? UINT32_MAX : d->len + times;
    if ((d->n_terms + 1) * 2 > d->_cap_slots && doc_slots_grow(d) != MEM_OK) return MEM_ENOMEM;
    size_t mask = d->_cap_slots - 1;
    size_t j = hash_term(t, len) & mask;
    for (; d->_slots[j]; j = (j + 1) & mask) {
        uint32_t i = d->_slots[j] - 1;
        if (d->_off[i + 1] - d->_off[i] == len && memcmp(d->_bytes + d->_off[i], t, len) == 0) {
            d->_tf[i] = d->_tf[i] > TF_MAX - times ? TF_MAX : d->_tf[i] + times;
            return MEM_OK;
        }
    }
    size_t used = d->n_terms ? d->_off[d->n_terms] : 0;
    if (used + len > UINT32_MAX ||
        grow((void **)&d->_bytes, &d->_cap_bytes, used + len, 1, 256) != MEM_OK ||
        grow((void **)&d->_off, &d->_cap_off, d->n_terms + 2, sizeof(uint32_t), 32) != MEM_OK ||
        grow((void **)&d->_tf, &d->_cap_tf, d->n_terms + 1, sizeof(uint32_t), 32) != MEM_OK)
        return MEM_ENOMEM;
    memcpy(d->_bytes + used, t, len);
    d->_off[d->n_terms] = (uint32_t)used;
    d->_off[d->n_terms + 1] = (uint32_t)(used + len);
    d->_tf[d->n_terms] = times > TF_MAX ? TF_MAX : times;
    d->_slots[j] = (uint32_t)(++d->n_terms);
    return MEM_OK;
}

static int doc_add_word(const char *t, size_t len, void *ud)
{
    mem_lexdoc_t *doc = ud;
    return doc_add_n(&doc->f[MEM_LEXIDX_WORDS], t, len, 1);
}

/* Bytes of the UTF-8 sequence that starts with lead byte c (terms are valid UTF-8). */
static size_t utf8_len(unsigned char c)
{
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

typedef int (*gram_fn)(const char *g, size_t len, void *ud);

/* The trigrams of "^word$", over code points, in order. */
static int each_gram(const char *w, size_t len, gram_fn fn, void *ud)
{
    size_t cut[MEM_LEXTOK_MAX_BYTES + 3], n = 0; /* code point boundaries of "^word$" */
    char buf[MEM_LEXTOK_MAX_BYTES + 2];
    if (len > MEM_LEXTOK_MAX_BYTES) len = MEM_LEXTOK_MAX_BYTES;
    buf[0] = '^';
    memcpy(buf + 1, w, len);
    buf[len + 1] = '$';
    size_t total = len + 2;
    for (size_t i = 0; i < total;
         i += (i == 0 || i == total - 1) ? 1 : utf8_len((unsigned char)buf[i]))
        cut[n++] = i;
    cut[n] = total;
    for (size_t i = 0; i + 3 <= n; i++) {
        int rc = fn(buf + cut[i], cut[i + 3] - cut[i], ud);
        if (rc) return rc;
    }
    return 0;
}

typedef struct gram_add {
    mem_lexdoc_field_t *f;
    uint32_t times;
} gram_add_t;

static int gram_add_fn(const char *g, size_t len, void *ud)
{
    gram_add_t *ga = ud;
    return doc_add_n(ga->f, g, len, ga->times);
}

static void field_reset(mem_lexdoc_field_t *f)
{
    f->n_terms = 0;
    f->len = 0;
    if (f->_cap_slots > 1024) { /* after a long text: do not clear a big table per row */
        free(f->_slots);
        f->_slots = NULL;
        f->_cap_slots = 0;
    }
    if (f->_slots) memset(f->_slots, 0, f->_cap_slots * sizeof(*f->_slots));
}

int mem_lexdoc_build(mem_lexdoc_t *doc, mem_lextok_t *tk, const char *text, size_t len, bool grams)
{
    for (int f = 0; f < NF; f++)
        field_reset(&doc->f[f]);
    if (mem_lextok_run(tk, text, len, doc_add_word, doc) != 0) return MEM_ENOMEM;
    if (!grams) return MEM_OK;
    const mem_lexdoc_field_t *w = &doc->f[MEM_LEXIDX_WORDS];
    gram_add_t ga = {.f = &doc->f[MEM_LEXIDX_GRAMS]};
    for (size_t i = 0; i < w->n_terms; i++) {
        ga.times = w->_tf[i];
        if (each_gram(w->_bytes + w->_off[i], w->_off[i + 1] - w->_off[i], gram_add_fn, &ga) != 0)
            return MEM_ENOMEM;
    }
    return MEM_OK;
}

void mem_lexdoc_deinit(mem_lexdoc_t *doc)
{
    if (!doc) return;
    for (int i = 0; i < NF; i++) {
        mem_lexdoc_field_t *f = &doc->f[i];
        free(f->_bytes);
        free(f->_off);
        free(f->_tf);
        free(f->_slots);
    }
    memset(doc, 0, sizeof(*doc));
}

/* ---- the dictionaries --------------------------------------------------------------- */

#define SLOT_ID(s)  ((uint32_t)((s)&0xffffffffu) - 1u)
#define SLOT_TAG(s) ((uint32_t)((s) >> 32))

static uint32_t term_find_h(const lex_dict_t *d, const char *t, size_t len, uint64_t h)
{
    if (!d->cap_slots) return NO_TERM;
    size_t mask = d->cap_slots - 1;
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t j = h & mask; d->slots[j]; j = (j + 1) & mask) {
        if (SLOT_TAG(d->slots[j]) != tag) continue;
        const lex_term_t *te = &d->terms[SLOT_ID(d->slots[j])];
        if (te->name_len == len && memcmp(d->names + te->name_off, t, len) == 0)
            return SLOT_ID(d->slots[j]);
    }
    return NO_TERM;
}

static uint32_t term_find(const lex_dict_t *d, const char *t, size_t len)
{
    return term_find_h(d, t, len, hash_term(t, len));
}

static void slot_put(uint64_t *slots, size_t cap, uint64_t h, uint32_t id)
{
    size_t j = h & (cap - 1);
    while (slots[j])
        j = (j + 1) & (cap - 1);
    slots[j] = (h & 0xffffffff00000000ull) | ((uint64_t)id + 1);
}

static int slots_grow(lex_dict_t *d)
{
    size_t cap = d->cap_slots ? d->cap_slots * 2 : 1024;
    uint64_t *s = calloc(cap, sizeof(*s));
    if (!s) return MEM_ENOMEM;
    for (size_t i = 0; i < d->n_terms; i++) {
        const lex_term_t *te = &d->terms[i];
        slot_put(s, cap, hash_term(d->names + te->name_off, te->name_len), (uint32_t)i);
    }
    free(d->slots);
    d->slots = s;
    d->cap_slots = cap;
    return MEM_OK;
}

/* The id of t, added (with no postings) when new. MEM_OK or MEM_ENOMEM. */
static int term_intern(lex_dict_t *d, const char *t, size_t len, uint32_t *id)
{
    uint64_t h = hash_term(t, len);
    uint32_t f = term_find_h(d, t, len, h);
    if (f != NO_TERM) {
        *id = f;
        return MEM_OK;
    }
    if (len > 255 || d->n_terms >= NO_TERM - 1 || d->n_names + len > UINT32_MAX) return MEM_ENOMEM;
    if ((d->n_terms + 1) * 2 > d->cap_slots && slots_grow(d) != MEM_OK) return MEM_ENOMEM;
    if (grow((void **)&d->terms, &d->cap_terms, d->n_terms + 1, sizeof(lex_term_t), 256) !=
            MEM_OK ||
        grow((void **)&d->names, &d->cap_names, d->n_names + len, 1, 4096) != MEM_OK)
        return MEM_ENOMEM;
    lex_term_t *te = &d->terms[d->n_terms];
    memset(te, 0, sizeof(*te));
    te->name_off = (uint32_t)d->n_names;
    te->name_len = (uint8_t)len;
    memcpy(d->names + d->n_names, t, len);
    d->n_names += len;
    slot_put(d->slots, d->cap_slots, h, (uint32_t)d->n_terms);
    *id = (uint32_t)d->n_terms++;
    return MEM_OK;
}

static void dict_free(lex_dict_t *d)
{
    for (size_t i = 0; i < d->n_terms; i++) {
        free(d->terms[i].post);
        free(d->terms[i].pieces);
    }
    free(d->terms);
    free(d->names);
    free(d->slots);
}

/* ---- the index ---------------------------------------------------------------------- */

int mem_lexidx_new(bool grams, mem_lexidx_t **out)
{
    mem_lexidx_t *lx = calloc(1, sizeof(*lx));
    if (!lx) return MEM_ENOMEM;
    lx->grams = grams;
    *out = lx;
    return MEM_OK;
}

void mem_lexidx_free(mem_lexidx_t *lx)
{
    if (!lx) return;
    for (size_t b = 0; b < lx->n_blocks; b++) {
        for (int f = 0; f < NF; f++) {
            free(lx->blocks[b]->f[f].fterm);
            free(lx->blocks[b]->f[f].ftf);
        }
        free(lx->blocks[b]);
    }
    free(lx->blocks);
    for (int f = 0; f < NF; f++) {
        dict_free(&lx->d[f]);
        free(lx->scratch[f]);
    }
    free(lx);
}

void mem_lexidx_get_stats(const mem_lexidx_t *lx, mem_lexidx_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    size_t bytes =
        sizeof(*lx) + lx->cap_blocks * sizeof(*lx->blocks) + lx->n_blocks * sizeof(lex_block_t);
    for (int f = 0; f < NF; f++) {
        const lex_dict_t *d = &lx->d[f];
        bytes += d->cap_terms * sizeof(*d->terms) + d->cap_names + d->cap_slots * sizeof(uint64_t) +
                 lx->cap_scratch[f] * sizeof(uint32_t);
        for (size_t b = 0; b < lx->n_blocks; b++)
            bytes += lx->blocks[b]->f[f].cap_fwd * (sizeof(uint32_t) + sizeof(uint16_t));
        for (size_t i = 0; i < d->n_terms; i++)
            bytes += d->terms[i].cap_post * sizeof(uint32_t) +
                     d->terms[i].cap_pieces * sizeof(lex_piece_t);
        out->total_len[f] = d->total_len;
        out->n_terms[f] = d->n_terms;
        out->n_postings[f] = d->n_postings;
    }
    out->n_rows = lx->n_rows;
    out->n_published = lx->n_published;
    out->n_docs = lx->n_docs;
    out->bytes = bytes;
}

bool mem_lexidx_has_grams(const mem_lexidx_t *lx)
{
    return lx->grams;
}

uint32_t mem_lexidx_df(const mem_lexidx_t *lx, int field, const char *term, size_t len)
{
    if (field < 0 || field >= NF) return 0;
    uint32_t id = term_find(&lx->d[field], term, len);
    return id == NO_TERM ? 0 : lx->d[field].terms[id].df;
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
    bool want =
        pos < lx->n_published && (st & ROW_ACTIVE) && (st & ROW_TEXT) && !(st & ROW_DELETED);
    bool have = (st & ROW_COUNTED) != 0;
    if (want == have) return;
    for (int f = 0; f < NF; f++) {
        const lex_rows_t *rows = &blk->f[f];
        lex_dict_t *d = &lx->d[f];
        for (uint32_t e = rows->start[r]; e < rows->start[r + 1]; e++) {
            lex_term_t *te = &d->terms[rows->fterm[e]];
            te->df = want ? te->df + 1 : te->df - 1;
        }
        d->total_len = want ? d->total_len + rows->dl[r] : d->total_len - rows->dl[r];
    }
    lx->n_docs = want ? lx->n_docs + 1 : lx->n_docs - 1;
    blk->state[r] = want ? (uint8_t)(st | ROW_COUNTED) : (uint8_t)(st & ~ROW_COUNTED);
}

/* One field of a row to append, by term ids. */
typedef struct row_field {
    const uint32_t *ids, *tfs;
    size_t n;
    uint32_t dl;
} row_field_t;

/* Reserve room for one more row's field in block b. */
static int reserve_field(mem_lexidx_t *lx, lex_rows_t *rows, int f, const row_field_t *rf, size_t b)
{
    size_t need = (size_t)rows->n_fwd + rf->n;
    if (need > UINT32_MAX) return MEM_ENOMEM;
    if (need > rows->cap_fwd) {
        size_t c = rows->cap_fwd ? rows->cap_fwd : 64;
        while (c < need)
            c *= 2;
        uint32_t *t = realloc(rows->fterm, c * sizeof(*t));
        if (!t) return MEM_ENOMEM;
        rows->fterm = t;
        uint16_t *q = realloc(rows->ftf, c * sizeof(*q));
        if (!q) return MEM_ENOMEM; /* fterm is only larger than needed */
        rows->ftf = q;
        rows->cap_fwd = (uint32_t)c;
    }
    if (f != MEM_LEXIDX_WORDS) return MEM_OK;
    for (size_t i = 0; i < rf->n; i++) {
        lex_term_t *te = &lx->d[f].terms[rf->ids[i]];
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
    return MEM_OK;
}

static void write_field(mem_lexidx_t *lx, lex_rows_t *rows, int f, const row_field_t *rf, size_t b,
                        size_t r)
{
    lex_dict_t *d = &lx->d[f];
    rows->dl[r] = rf->dl;
    rows->start[r] = rows->n_fwd;
    for (size_t i = 0; i < rf->n; i++) {
        lex_term_t *te = &d->terms[rf->ids[i]];
        uint32_t tf = rf->tfs[i] > TF_MAX ? TF_MAX : rf->tfs[i];
        if (te->df == 0 && te->n_post == 0 && te->max_tf == 0) te->min_dl = rf->dl;
        if (tf > te->max_tf) te->max_tf = tf;
        if (rf->dl < te->min_dl) te->min_dl = rf->dl;
        if (f == MEM_LEXIDX_WORDS) {
            if (te->n_pieces == 0 || te->pieces[te->n_pieces - 1].block != b)
                te->pieces[te->n_pieces++] = (lex_piece_t){
                    .block = (uint32_t)b, .start = te->n_post, .max_tf = tf, .min_dl = rf->dl};
            lex_piece_t *pc = &te->pieces[te->n_pieces - 1];
            if (tf > pc->max_tf) pc->max_tf = tf;
            if (rf->dl < pc->min_dl) pc->min_dl = rf->dl;
            te->post[te->n_post++] = (uint32_t)r | tf << 8;
        }
        rows->fterm[rows->n_fwd] = rf->ids[i];
        rows->ftf[rows->n_fwd++] = (uint16_t)tf;
    }
    rows->start[r + 1] = rows->n_fwd;
    d->n_postings += rf->n;
}

/* A full block gets no more rows: give back what its doubling arrays hold beyond need. */
static void seal_block(lex_block_t *blk)
{
    for (int f = 0; f < NF; f++) {
        lex_rows_t *rows = &blk->f[f];
        if (rows->n_fwd == 0 || rows->n_fwd == rows->cap_fwd) continue;
        uint32_t *t = realloc(rows->fterm, rows->n_fwd * sizeof(*t));
        uint16_t *q = realloc(rows->ftf, rows->n_fwd * sizeof(*q));
        if (t) rows->fterm = t;
        if (q) rows->ftf = q;
        if (t && q) rows->cap_fwd = rows->n_fwd; /* else keep the old (larger) capacity */
    }
}

/* Append a row, everything reserved first so a failure leaves the index as it was. */
static int append_row(mem_lexidx_t *lx, const row_field_t *rf, uint8_t state, size_t *pos)
{
    size_t p = lx->n_rows, b = p / ROWS, r = p % ROWS;
    if (p >= (size_t)UINT32_MAX - 1) return MEM_ENOMEM;
    if (b == lx->n_blocks) {
        if (grow((void **)&lx->blocks, &lx->cap_blocks, lx->n_blocks + 1, sizeof(*lx->blocks),
                 16) != MEM_OK)
            return MEM_ENOMEM;
        lex_block_t *nb = calloc(1, sizeof(*nb));
        if (!nb) return MEM_ENOMEM;
        lx->blocks[lx->n_blocks++] = nb;
    }
    lex_block_t *blk = lx->blocks[b];
    for (int f = 0; f < NF; f++)
        if (reserve_field(lx, &blk->f[f], f, &rf[f], b) != MEM_OK) return MEM_ENOMEM;
    for (int f = 0; f < NF; f++)
        write_field(lx, &blk->f[f], f, &rf[f], b, r);
    blk->state[r] = state;
    blk->n_rows++;
    lx->n_rows++;
    if (blk->n_rows == ROWS) seal_block(blk);
    *pos = p;
    return MEM_OK;
}

int mem_lexidx_append(mem_lexidx_t *lx, const mem_lexdoc_t *doc, bool active, size_t *pos)
{
    row_field_t rf[NF] = {{0}};
    for (int f = 0; f < (lx->grams ? NF : 1) && doc; f++) {
        const mem_lexdoc_field_t *df = &doc->f[f];
        if (grow((void **)&lx->scratch[f], &lx->cap_scratch[f], df->n_terms + 1, sizeof(uint32_t),
                 64) != MEM_OK)
            return MEM_ENOMEM;
        for (size_t i = 0; i < df->n_terms; i++)
            if (term_intern(&lx->d[f], df->_bytes + df->_off[i], df->_off[i + 1] - df->_off[i],
                            &lx->scratch[f][i]) != MEM_OK)
                return MEM_ENOMEM; /* new terms may stay in the dictionary, without postings */
        rf[f] =
            (row_field_t){.ids = lx->scratch[f], .tfs = df->_tf, .n = df->n_terms, .dl = df->len};
    }
    uint8_t state = (uint8_t)((active ? ROW_ACTIVE : 0) | (doc ? ROW_TEXT : 0));
    return append_row(lx, rf, state, pos);
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
    uint32_t *remap[NF] = {NULL}, *ids[NF] = {NULL}, *tfs[NF] = {NULL};
    size_t cap_ids[NF] = {0}, cap_tfs[NF] = {0};
    if (mem_lexidx_new(old->grams, &lx) != MEM_OK) goto out;
    for (int f = 0; f < NF; f++) {
        const lex_dict_t *d = &old->d[f];
        remap[f] = malloc((d->n_terms + 1) * sizeof(uint32_t));
        if (!remap[f]) goto out;
        for (size_t i = 0; i < d->n_terms; i++)
            remap[f][i] = NO_TERM;
        /* terms still used by a kept row, in their old order */
        for (size_t b = 0; b < old->n_blocks; b++) {
            const lex_block_t *blk = old->blocks[b];
            const lex_rows_t *rows = &blk->f[f];
            for (uint32_t r = 0; r < blk->n_rows; r++) {
                if (blk->state[r] & ROW_DELETED) continue;
                for (uint32_t e = rows->start[r]; e < rows->start[r + 1]; e++)
                    remap[f][rows->fterm[e]] = 0;
            }
        }
        for (size_t i = 0; i < d->n_terms; i++) {
            if (remap[f][i] == NO_TERM) continue;
            const lex_term_t *te = &d->terms[i];
            if (term_intern(&lx->d[f], d->names + te->name_off, te->name_len, &remap[f][i]) !=
                MEM_OK)
                goto out;
        }
    }
    for (size_t b = 0; b < old->n_blocks; b++) {
        const lex_block_t *blk = old->blocks[b];
        for (uint32_t r = 0; r < blk->n_rows; r++) {
            uint8_t st = blk->state[r];
            if (st & ROW_DELETED) continue;
            row_field_t rf[NF];
            for (int f = 0; f < NF; f++) {
                const lex_rows_t *rows = &blk->f[f];
                size_t n = rows->start[r + 1] - rows->start[r];
                if (grow((void **)&ids[f], &cap_ids[f], n + 1, sizeof(uint32_t), 64) != MEM_OK ||
                    grow((void **)&tfs[f], &cap_tfs[f], n + 1, sizeof(uint32_t), 64) != MEM_OK)
                    goto out;
                for (size_t e = 0; e < n; e++) {
                    ids[f][e] = remap[f][rows->fterm[rows->start[r] + e]];
                    tfs[f][e] = rows->ftf[rows->start[r] + e];
                }
                rf[f] = (row_field_t){.ids = ids[f], .tfs = tfs[f], .n = n, .dl = rows->dl[r]};
            }
            size_t pos;
            if (append_row(lx, rf, st & (uint8_t)(ROW_ACTIVE | ROW_TEXT), &pos) != MEM_OK) goto out;
        }
    }
    mem_lexidx_publish(lx, lx->n_rows);
    *out = lx;
    lx = NULL;
    rc = MEM_OK;
out:
    mem_lexidx_free(lx);
    for (int f = 0; f < NF; f++) {
        free(remap[f]);
        free(ids[f]);
        free(tfs[f]);
    }
    return rc;
}

/* ---- queries ------------------------------------------------------------------------ */

typedef struct query_run {
    mem_lexdoc_t terms; /* the distinct query terms per field, in order of appearance */
} query_run_t;

static int query_add_word(const char *t, size_t len, void *ud)
{
    query_run_t *qr = ud;
    mem_lexdoc_field_t *w = &qr->terms.f[MEM_LEXIDX_WORDS];
    if (w->n_terms >= MEM_LEXIDX_QUERY_TERMS) return 0;
    return doc_add_n(w, t, len, 1);
}

static int query_add_gram(const char *g, size_t len, void *ud)
{
    mem_lexdoc_field_t *gf = ud;
    if (gf->n_terms >= MEM_LEXIDX_QUERY_TERMS) return 0;
    return doc_add_n(gf, g, len, 1);
}

/* The one expression every path uses for a term's share of text(d). */
static inline double term_score(const mem_lexq_field_t *qf, size_t i, uint32_t tf, uint32_t dl)
{
    double x = (double)tf;
    return qf->w[i] * (x / (x + qf->sat_a + qf->sat_c * (double)dl));
}

static int prepare_field(mem_lexq_field_t *qf, const mem_lexidx_t *lx, const lex_dict_t *d,
                         const mem_lexdoc_field_t *terms, double weight,
                         const mem_lexparams_t *params)
{
    qf->n = terms->n_terms;
    qf->term = malloc((qf->n + 1) * sizeof(*qf->term));
    qf->w = malloc((qf->n + 1) * sizeof(*qf->w));
    if (!qf->term || !qf->w) return MEM_ENOMEM;
    double n_docs = (double)lx->n_docs, sum = 0.0;
    for (size_t i = 0; i < qf->n; i++) {
        qf->term[i] =
            term_find(d, terms->_bytes + terms->_off[i], terms->_off[i + 1] - terms->_off[i]);
        double df = qf->term[i] == NO_TERM ? 0.0 : (double)d->terms[qf->term[i]].df;
        qf->w[i] = log(1.0 + (n_docs - df + 0.5) / (df + 0.5));
        sum += qf->w[i];
    }
    for (size_t i = 0; i < qf->n; i++)
        qf->w[i] = weight * qf->w[i] / sum;
    double avgdl = (lx->n_docs > 0 && d->total_len > 0) ? (double)d->total_len / n_docs : 1.0;
    qf->sat_a = params->k1 * (1.0 - params->b);
    qf->sat_c = params->k1 * params->b / avgdl;
    return MEM_OK;
}

/* The trigram lookup of a query: term id -> index in the gram field, and the bound. */
static int prepare_grams(mem_lexq_t *q, const mem_lexidx_t *lx)
{
    const mem_lexq_field_t *g = &q->f[MEM_LEXIDX_GRAMS];
    size_t cap = 16;
    while (cap < 2 * g->n)
        cap *= 2;
    q->_gram_key = malloc(cap * sizeof(*q->_gram_key));
    q->_gram_idx = malloc(cap * sizeof(*q->_gram_idx));
    if (!q->_gram_key || !q->_gram_idx) return MEM_ENOMEM;
    for (size_t j = 0; j < cap; j++)
        q->_gram_key[j] = NO_TERM;
    q->_gram_cap = cap;
    q->gram_bound = 0.0;
    for (size_t i = 0; i < g->n; i++) {
        uint32_t t = g->term[i];
        if (t == NO_TERM) continue;
        size_t j = (t * 2654435761u) & (cap - 1);
        while (q->_gram_key[j] != NO_TERM)
            j = (j + 1) & (cap - 1);
        q->_gram_key[j] = t;
        q->_gram_idx[j] = (uint32_t)i;
        const lex_term_t *te = &lx->d[MEM_LEXIDX_GRAMS].terms[t];
        q->gram_bound += term_score(g, i, te->max_tf, te->min_dl);
    }
    return MEM_OK;
}

int mem_lexq_prepare(mem_lexq_t *q, const mem_lexidx_t *lx, mem_lextok_t *tk, const char *text,
                     size_t len, const mem_lexparams_t *params)
{
    memset(q, 0, sizeof(*q));
    q->params = *params;
    query_run_t qr = {0};
    int rc = MEM_ENOMEM;
    if (mem_lextok_run(tk, text, len, query_add_word, &qr) != 0) goto out;
    const mem_lexdoc_field_t *w = &qr.terms.f[MEM_LEXIDX_WORDS];
    mem_lexdoc_field_t *g = &qr.terms.f[MEM_LEXIDX_GRAMS];
    double gw = lx->grams ? params->gram_weight : 0.0;
    if (gw > 0.0)
        for (size_t i = 0; i < w->n_terms; i++)
            if (each_gram(w->_bytes + w->_off[i], w->_off[i + 1] - w->_off[i], query_add_gram, g) !=
                0)
                goto out;
    double weight[NF] = {1.0 - gw, gw};
    for (int f = 0; f < NF; f++)
        if (prepare_field(&q->f[f], lx, &lx->d[f], &qr.terms.f[f], weight[f], params) != MEM_OK)
            goto out;
    if (prepare_grams(q, lx) != MEM_OK) goto out;
    rc = MEM_OK;
out:
    mem_lexdoc_deinit(&qr.terms);
    return rc;
}

void mem_lexq_deinit(mem_lexq_t *q)
{
    if (!q) return;
    for (int f = 0; f < NF; f++) {
        free(q->f[f].term);
        free(q->f[f].w);
    }
    free(q->_gram_key);
    free(q->_gram_idx);
    memset(q, 0, sizeof(*q));
}

size_t mem_lexq_known_terms(const mem_lexq_t *q)
{
    size_t n = 0;
    for (size_t i = 0; i < q->f[MEM_LEXIDX_WORDS].n; i++)
        n += q->f[MEM_LEXIDX_WORDS].term[i] != NO_TERM;
    return n;
}

/* The trigram part of row r of blk, summed in query order; part has room for the query's
 * trigrams (MEM_LEXIDX_QUERY_TERMS). */
static double gram_part(const mem_lexq_t *q, const lex_block_t *blk, size_t r, double *part)
{
    const mem_lexq_field_t *g = &q->f[MEM_LEXIDX_GRAMS];
    if (g->n == 0) return 0.0;
    memset(part, 0, g->n * sizeof(*part));
    const lex_rows_t *rows = &blk->f[MEM_LEXIDX_GRAMS];
    size_t mask = q->_gram_cap - 1;
    for (uint32_t e = rows->start[r]; e < rows->start[r + 1]; e++) {
        uint32_t t = rows->fterm[e];
        for (size_t j = (t * 2654435761u) & mask; q->_gram_key[j] != NO_TERM; j = (j + 1) & mask)
            if (q->_gram_key[j] == t) {
                uint32_t i = q->_gram_idx[j];
                part[i] = term_score(g, i, rows->ftf[e], rows->dl[r]);
                break;
            }
    }
    double s = 0.0;
    for (size_t i = 0; i < g->n; i++)
        s += part[i];
    return s;
}

/* words + trigrams, never above 1 (the weights sum to 1, their rounding may not) */
static double finish(double words, double grams)
{
    double s = words + grams;
    return s < 1.0 ? s : 1.0;
}

double mem_lexidx_score_row(const mem_lexidx_t *lx, const mem_lexq_t *q, size_t pos)
{
    if (pos >= lx->n_rows) return 0.0;
    const lex_block_t *blk = block_of(lx, pos);
    size_t r = pos % ROWS;
    const mem_lexq_field_t *qw = &q->f[MEM_LEXIDX_WORDS];
    const lex_rows_t *rows = &blk->f[MEM_LEXIDX_WORDS];
    double s = 0.0;
    bool any = false;
    for (size_t i = 0; i < qw->n; i++) {
        if (qw->term[i] == NO_TERM) continue;
        for (uint32_t e = rows->start[r]; e < rows->start[r + 1]; e++)
            if (rows->fterm[e] == qw->term[i]) {
                s = any ? s + term_score(qw, i, rows->ftf[e], rows->dl[r])
                        : term_score(qw, i, rows->ftf[e], rows->dl[r]);
                any = true;
                break;
            }
    }
    if (!any) return 0.0; /* a candidate holds a query word */
    double part[MEM_LEXIDX_QUERY_TERMS];
    return finish(s, gram_part(q, blk, r, part));
}

void mem_lexidx_block_bounds(const mem_lexidx_t *lx, const mem_lexq_t *q, double *ub,
                             size_t n_blocks)
{
    const mem_lexq_field_t *qw = &q->f[MEM_LEXIDX_WORDS];
    for (size_t b = 0; b < n_blocks; b++)
        ub[b] = -1.0; /* no query word in the block (yet) */
    for (size_t i = 0; i < qw->n; i++) {
        if (qw->term[i] == NO_TERM) continue;
        const lex_term_t *te = &lx->d[MEM_LEXIDX_WORDS].terms[qw->term[i]];
        for (uint32_t k = 0; k < te->n_pieces; k++) {
            const lex_piece_t *pc = &te->pieces[k];
            if (pc->block >= n_blocks) continue;
            double x = term_score(qw, i, pc->max_tf, pc->min_dl);
            ub[pc->block] = ub[pc->block] < 0.0 ? x : ub[pc->block] + x;
        }
    }
    for (size_t b = 0; b < n_blocks; b++)
        ub[b] = ub[b] < 0.0 ? 0.0 : finish(ub[b], q->gram_bound);
}

/* The piece of te in block b (its postings end at *end), or NULL. */
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

void mem_lexidx_score_block(const mem_lexidx_t *lx, const mem_lexq_t *q, size_t b, double need,
                            uint32_t *rows, size_t *n, double *scores)
{
    uint64_t seen[(ROWS + 63) / 64] = {0};
    *n = 0;
    if (b >= lx->n_blocks) return;
    const lex_block_t *blk = lx->blocks[b];
    const mem_lexq_field_t *qw = &q->f[MEM_LEXIDX_WORDS];
    const uint32_t *dl = blk->f[MEM_LEXIDX_WORDS].dl;
    for (size_t i = 0; i < qw->n; i++) {
        if (qw->term[i] == NO_TERM) continue;
        const lex_term_t *te = &lx->d[MEM_LEXIDX_WORDS].terms[qw->term[i]];
        uint32_t end;
        const lex_piece_t *pc = find_piece(te, (uint32_t)b, &end);
        if (!pc) continue;
        for (uint32_t k = pc->start; k < end; k++) {
            uint32_t r = te->post[k] & 0xffu, tf = te->post[k] >> 8;
            double s = term_score(qw, i, tf, dl[r]);
            if (seen[r / 64] >> (r % 64) & 1) {
                scores[r] += s;
            } else {
                seen[r / 64] |= 1ull << (r % 64);
                scores[r] = s; /* the reference's first term, bit for bit */
            }
        }
    }
    double part[MEM_LEXIDX_QUERY_TERMS];
    for (size_t w = 0; w < (ROWS + 63) / 64; w++)
        for (uint64_t m = seen[w]; m; m &= m - 1) {
            uint32_t r = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(m));
            /* the trigrams cannot lift this row to need: skip their cost */
            if (finish(scores[r], q->gram_bound) < need) continue;
            scores[r] = finish(scores[r], gram_part(q, blk, r, part));
            rows[(*n)++] = r;
        }
}
