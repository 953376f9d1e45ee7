/* lextok.c - Unicode words, folded, stop words out, Snowball stems
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. One pass over the text, one character at a time, no allocation: ASCII (almost all
 * of the bytes agents send) takes a table-free fast path; any other character goes through
 * utf8proc_decompose_char (NFKD + casefold in one call, at most a few dozen code points out)
 * and its pieces are classified by general category. The word being built lives in a fixed
 * buffer of code points (a megabyte without a space costs nothing extra); at its end the
 * marks are put in canonical order and the word is composed again (NFC), so a term is the
 * NFKC + casefold form of the word minus the folded accents, then cut at
 * MEM_LEXTOK_MAX_BYTES. libstemmer's stemmer keeps its own buffer, and a small cache of
 * recent stems (the stemmer costs more than all the rest), hence one tokenizer per thread.
 */
#include "core/lextok.h"

#include <libstemmer.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/err.h"

/* Stems of recent words, direct-mapped by a hash of the word: natural text repeats its
 * words, and the stemmer costs more than the rest of the tokenizer together. */
#define STEM_CACHE_SLOTS 1024
#define STEM_CACHE_WORD  24 /* longer words are stemmed every time */

typedef struct stem_slot {
    uint8_t word_len, stem_len; /* word_len 0: empty */
    char word[STEM_CACHE_WORD], stem[STEM_CACHE_WORD];
} stem_slot_t;

/* The stop words by hash, open addressing: a word's check is one hash and about one
 * comparison instead of a binary search's eight (it ran for every word of every text). */
#define STOP_SLOTS 256 /* a power of two, well above the list's 153 words */

struct mem_lextok {
    mem_lextok_opts_t opts;
    struct sb_stemmer *stemmer;    /* NULL when !opts.stem */
    uint8_t stop_slot[STOP_SLOTS]; /* 1 + an index in STOPWORDS, 0 = empty */
    stem_slot_t cache[STEM_CACHE_SLOTS];
};

/* NLTK's English stop words (nltk_data corpora/stopwords/english) without the 26 forms that
 * hold an apostrophe ("don't", "you're": the tokenizer splits those into words listed here).
 * Sorted by memcmp order for the binary search. */
static const char *const STOPWORDS[] = {
    "a",          "about",   "above",   "after",      "again", "against", "ain",       "all",
    "am",         "an",      "and",     "any",        "are",   "aren",    "as",        "at",
    "be",         "because", "been",    "before",     "being", "below",   "between",   "both",
    "but",        "by",      "can",     "couldn",     "d",     "did",     "didn",      "do",
    "does",       "doesn",   "doing",   "don",        "down",  "during",  "each",      "few",
    "for",        "from",    "further", "had",        "hadn",  "has",     "hasn",      "have",
    "haven",      "having",  "he",      "her",        "here",  "hers",    "herself",   "him",
    "himself",    "his",     "how",     "i",          "if",    "in",      "into",      "is",
    "isn",        "it",      "its",     "itself",     "just",  "ll",      "m",         "ma",
    "me",         "mightn",  "more",    "most",       "mustn", "my",      "myself",    "needn",
    "no",         "nor",     "not",     "now",        "o",     "of",      "off",       "on",
    "once",       "only",    "or",      "other",      "our",   "ours",    "ourselves", "out",
    "over",       "own",     "re",      "s",          "same",  "shan",    "she",       "should",
    "shouldn",    "so",      "some",    "such",       "t",     "than",    "that",      "the",
    "their",      "theirs",  "them",    "themselves", "then",  "there",   "these",     "they",
    "this",       "those",   "through", "to",         "too",   "under",   "until",     "up",
    "ve",         "very",    "was",     "wasn",       "we",    "were",    "weren",     "what",
    "when",       "where",   "which",   "while",      "who",   "whom",    "why",       "will",
    "with",       "won",     "wouldn",  "y",          "you",   "your",    "yours",     "yourself",
    "yourselves",
};
#define N_STOPWORDS (sizeof(STOPWORDS) / sizeof(STOPWORDS[0]))

#define STOPWORD_MAX 10 /* bytes of the longest, "yourselves" */
_Static_assert(N_STOPWORDS < STOP_SLOTS && STOP_SLOTS <= 256, "a free slot ends every probe");

/* memcmp order of a[0..alen) against the NUL-terminated b (words hold no NUL) */
static int word_cmp(const char *a, size_t alen, const char *b)
{
    for (size_t i = 0; i < alen; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (y == 0) return 1;
        if (x != y) return x < y ? -1 : 1;
    }
    return b[alen] ? -1 : 0;
}

bool mem_lextok_is_stopword(const char *w, size_t len)
{
    if (len == 0 || len > STOPWORD_MAX) return false;
    size_t lo = 0, hi = N_STOPWORDS;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = word_cmp(w, len, STOPWORDS[mid]);
        if (c == 0) return true;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

static size_t stop_hash(const char *w, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)w[i]) * 16777619u;
    return (size_t)(h ^ (h >> 8)) & (STOP_SLOTS - 1);
}

/* mem_lextok_is_stopword by the tokenizer's hash table (the same answer, checked by tests). */
static bool is_stop(const mem_lextok_t *tk, const char *w, size_t len)
{
    if (len == 0 || len > STOPWORD_MAX) return false;
    for (size_t i = stop_hash(w, len);; i = (i + 1) & (STOP_SLOTS - 1)) {
        unsigned k = tk->stop_slot[i];
        if (k == 0) return false;
        if (word_cmp(w, len, STOPWORDS[k - 1]) == 0) return true;
    }
}

int mem_lextok_new(const mem_lextok_opts_t *opts, mem_lextok_t **out)
{
    mem_lextok_t *tk = calloc(1, sizeof(*tk));
    if (!tk) return MEM_ENOMEM;
    tk->opts = *opts;
    for (size_t k = 0; k < N_STOPWORDS; k++) {
        size_t i = stop_hash(STOPWORDS[k], strlen(STOPWORDS[k]));
        while (tk->stop_slot[i])
            i = (i + 1) & (STOP_SLOTS - 1);
        tk->stop_slot[i] = (uint8_t)(k + 1);
    }
    if (opts->stem) {
        tk->stemmer = sb_stemmer_new("english", "UTF_8");
        if (!tk->stemmer) {
            free(tk);
            return MEM_ENOMEM;
        }
    }
    *out = tk;
    return MEM_OK;
}

void mem_lextok_free(mem_lextok_t *tk)
{
    if (!tk) return;
    sb_stemmer_delete(tk->stemmer);
    free(tk);
}

/* ---- the word being built ------------------------------------------------------------- */

#define WORD_MAX_CPS 256 /* code points kept of one word before composition and the byte cut */

typedef struct word {
    utf8proc_int32_t cp[WORD_MAX_CPS];
    size_t n;
    bool ascii;      /* every code point is ASCII: no reordering, no composition */
    bool full;       /* the cap was reached: the rest of this run is dropped */
    bool has_letter; /* a stemmer has something to do */
    bool latin;      /* the last base character is a Latin or Greek letter: drop marks */
} word_t;

typedef struct run {
    mem_lextok_t *tk;
    mem_lextok_fn fn;
    void *ud;
    word_t w;
    char bytes[MEM_LEXTOK_MAX_BYTES];
} run_t;

/* Canonical order of combining marks (stable sort by combining class within each run of
 * non-starters), so that equivalent spellings give the same term. */
static void canonical_order(utf8proc_int32_t *cp, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int cc = utf8proc_get_property(cp[i])->combining_class;
        if (cc == 0) continue;
        size_t j = i;
        utf8proc_int32_t x = cp[i];
        while (j > 0) {
            int pc = utf8proc_get_property(cp[j - 1])->combining_class;
            if (pc <= cc) break;
            cp[j] = cp[j - 1];
            j--;
        }
        cp[j] = x;
    }
}

/* The word as UTF-8 in NFKC form, cut at MEM_LEXTOK_MAX_BYTES on a character boundary. */
static size_t encode_word(run_t *r)
{
    word_t *w = &r->w;
    size_t n = w->n, len = 0;
    if (!w->ascii) {
        canonical_order(w->cp, n);
        utf8proc_ssize_t m = utf8proc_normalize_utf32(w->cp, (utf8proc_ssize_t)n,
                                                      UTF8PROC_COMPOSE | UTF8PROC_STABLE);
        if (m >= 0) n = (size_t)m;
    }
    for (size_t i = 0; i < n; i++) {
        utf8proc_uint8_t b[4];
        utf8proc_ssize_t k = utf8proc_encode_char(w->cp[i], b);
        if (len + (size_t)k > MEM_LEXTOK_MAX_BYTES) break;
        memcpy(r->bytes + len, b, (size_t)k);
        len += (size_t)k;
    }
    return len;
}

static uint32_t hash_word(const char *w, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)w[i]) * 16777619u;
    return h ^ (h >> 15);
}

static int stem_and_emit(run_t *r, size_t len)
{
    mem_lextok_t *tk = r->tk;
    stem_slot_t *slot = NULL;
    if (len < STEM_CACHE_WORD) {
        slot = &tk->cache[hash_word(r->bytes, len) & (STEM_CACHE_SLOTS - 1)];
        if (slot->word_len == len && memcmp(slot->word, r->bytes, len) == 0)
            return r->fn(slot->stem, slot->stem_len, r->ud);
    }
    const sb_symbol *s = sb_stemmer_stem(tk->stemmer, (const sb_symbol *)r->bytes, (int)len);
    if (!s) return MEM_ENOMEM;
    int n = sb_stemmer_length(tk->stemmer);
    if (n <= 0) return r->fn(r->bytes, len, r->ud); /* never for a non-empty word */
    if (slot && (size_t)n < STEM_CACHE_WORD) {
        slot->word_len = (uint8_t)len;
        memcpy(slot->word, r->bytes, len);
        slot->stem_len = (uint8_t)n;
        memcpy(slot->stem, s, (size_t)n);
    }
    return r->fn((const char *)s, (size_t)n, r->ud);
}

static int flush(run_t *r)
{
    word_t *w = &r->w;
    int rc = 0;
    size_t len = w->n ? encode_word(r) : 0;
    if (len > 0 && !(r->tk->opts.stopwords && is_stop(r->tk, r->bytes, len))) {
        if (r->tk->stemmer && w->has_letter) {
            rc = stem_and_emit(r, len);
        } else {
            rc = r->fn(r->bytes, len, r->ud);
        }
    }
    w->n = 0;
    w->ascii = true;
    w->full = false;
    w->has_letter = false;
    w->latin = false;
    return rc;
}

static void push_cp(word_t *w, utf8proc_int32_t c)
{
    if (w->n == WORD_MAX_CPS) {
        w->full = true;
        return;
    }
    if (w->full) return;
    w->cp[w->n++] = c;
    if (c >= 0x80) w->ascii = false;
}

/* Latin and Greek letters lose their accents (as search engines fold them: "resume" finds
 * "résumé", Greek tonos is dropped); other scripts keep their marks. */
static bool folds_marks(int32_t c)
{
    return c < 0x250 || (c >= 0x370 && c <= 0x3FF) || (c >= 0x1E00 && c <= 0x1FFF) ||
           (c >= 0x2C60 && c <= 0x2C7F) || (c >= 0xA720 && c <= 0xA7FF) ||
           (c >= 0xAB30 && c <= 0xAB6F);
}

/* Scripts written without spaces between words whose characters are words of their own. */
static bool is_ideographic(int32_t c)
{
    return (c >= 0x3040 && c <= 0x30FF) || /* Hiragana, Katakana */
           (c >= 0x31F0 && c <= 0x31FF) || /* Katakana phonetic extensions */
           (c >= 0x3400 && c <= 0x4DBF) || /* CJK extension A */
           (c >= 0x4E00 && c <= 0x9FFF) || /* CJK unified ideographs */
           (c >= 0xF900 && c <= 0xFAFF) || /* CJK compatibility ideographs */
           (c >= 0x20000 && c <= 0x3134F); /* CJK extensions B-G, compatibility supplement */
}

enum char_class { CH_SEP, CH_WORD, CH_LETTER, CH_MARK };

static enum char_class classify(int32_t c)
{
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
        return CH_LETTER;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
        return CH_WORD;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
        return CH_MARK;
    default:
        return CH_SEP;
    }
}

/* One code point of the decomposition of a source character (src_folds: that character's
 * marks are dropped). */
static int piece(run_t *r, int32_t d, bool src_folds)
{
    word_t *w = &r->w;
    enum char_class k = classify(d);
    int rc;
    if (k == CH_SEP) return flush(r);
    if (k == CH_MARK) {
        if (w->n == 0 || w->latin) return 0; /* no base, or an accent to fold */
    } else if (is_ideographic(d)) {
        if ((rc = flush(r)) != 0) return rc;
        push_cp(w, d);
        w->has_letter = true;
        return flush(r);
    } else {
        w->latin = src_folds;
        if (k == CH_LETTER) w->has_letter = true;
    }
    push_cp(w, d);
    return 0;
}

#define DECOMP_MAX 32 /* code points of one character's decomposition (the longest is 18) */

int mem_lextok_run(mem_lextok_t *tk, const char *text, size_t len, mem_lextok_fn fn, void *ud)
{
    run_t r = {.tk = tk, .fn = fn, .ud = ud, .w.ascii = true};
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    int rc;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) { /* ASCII: letters and digits are word bytes, the rest separates */
            i++;
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
                push_cp(&r.w, c);
                r.w.latin = true;
                r.w.has_letter |= c >= 'a';
            } else if (c >= 'A' && c <= 'Z') {
                push_cp(&r.w, c - 'A' + 'a');
                r.w.latin = true;
                r.w.has_letter = true;
            } else if ((rc = flush(&r)) != 0) {
                return rc;
            }
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate(s + i, (utf8proc_ssize_t)(len - i), &cp);
        if (n <= 0) { /* invalid UTF-8: the byte separates */
            i++;
            if ((rc = flush(&r)) != 0) return rc;
            continue;
        }
        i += (size_t)n;
        utf8proc_int32_t d[DECOMP_MAX];
        utf8proc_ssize_t nd = utf8proc_decompose_char(
            cp, d, DECOMP_MAX,
            UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE, NULL);
        if (nd < 0 || nd > DECOMP_MAX) {
            if ((rc = flush(&r)) != 0) return rc;
            continue;
        }
        bool src_folds = folds_marks(cp);
        for (utf8proc_ssize_t j = 0; j < nd; j++)
            if ((rc = piece(&r, d[j], src_folds)) != 0) return rc;
    }
    return flush(&r);
}
