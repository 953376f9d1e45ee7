/* test_core_lextok.c - the tokenizer: Unicode folding, separators, numbers, caps, stop words,
 * stems, empty and hostile input
 * SPDX-License-Identifier: MIT
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/err.h"
#include "core/lextok.h"
#include "tests/unit/test_util.h"

typedef struct collect {
    char out[4096]; /* terms joined by '|' */
    size_t len, n;
    size_t max_term;
    int stop_after; /* return 7 from the callback after this many terms (0 = never) */
} collect_t;

static int collect_fn(const char *t, size_t len, void *ud)
{
    collect_t *c = ud;
    assert_true(len >= 1 && len <= MEM_LEXTOK_MAX_BYTES);
    if (len > c->max_term) c->max_term = len;
    if (c->len + len + 2 < sizeof(c->out)) {
        if (c->n) c->out[c->len++] = '|';
        memcpy(c->out + c->len, t, len);
        c->len += len;
        c->out[c->len] = 0;
    }
    c->n++;
    return (c->stop_after && (int)c->n == c->stop_after) ? 7 : 0;
}

static void expect_terms(bool stopwords, bool stem, const char *text, const char *want)
{
    mem_lextok_t *tk;
    mem_lextok_opts_t o = {.stopwords = stopwords, .stem = stem};
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    collect_t c = {0};
    assert_int_equal(mem_lextok_run(tk, text, strlen(text), collect_fn, &c), MEM_OK);
    if (strcmp(c.out, want) != 0)
        fail_msg("text \"%s\": got \"%s\", want \"%s\"", text, c.out, want);
    mem_lextok_free(tk);
}

static void test_ascii_words_and_separators(void **state)
{
    expect_terms(false, false, "Hello, World!", "hello|world");
    expect_terms(false, false, "don't e-mail snake_case a.b 3.5 1,200 10:30",
                 "don|t|e|mail|snake|case|a|b|3|5|1|200|10|30");
    expect_terms(false, false, "  \t\n\r  ", "");
    expect_terms(false, false, "", "");
    expect_terms(false, false, "x", "x");
    expect_terms(false, false, "ABC123def", "abc123def");
    expect_terms(false, false, "tabs\tand\nnew\rlines\x01\x7f ctl", "tabs|and|new|lines|ctl");
    expect_terms(false, false, "#hashtag @user $100 50% a+b=c", "hashtag|user|100|50|a|b|c");
}

static void test_unicode_folding(void **state)
{
    /* case folding beyond ASCII, accents off Latin letters, NFKD compatibility forms */
    expect_terms(false, false, "CAFÉ Café café cafe\xcc\x81", "cafe|cafe|cafe|cafe");
    expect_terms(false, false, "Résumé naïve Ångström Straße", "resume|naive|angstrom|strasse");
    expect_terms(false, false, "\xef\xbc\xa3\xef\xbd\x81\xef\xbd\x86\xef\xbd\x85",
                 "cafe"); /* fullwidth */
    expect_terms(false, false, "\xef\xac\x81le x\xc2\xb2",
                 "file|x2");                                  /* ligature fi, superscript 2 */
    expect_terms(false, false, "ΑΘΗΝΑ Αθήνα", "αθηνα|αθηνα"); /* Greek tonos folds too */
    expect_terms(false, false, "МОСКВА москва", "москва|москва");
    /* soft hyphen and zero-width joiner are ignorable: they join, not split */
    expect_terms(false, false, "soft\xc2\xadhyphen zero\xe2\x80\x8dwidth", "softhyphen|zerowidth");
    /* no-break space, ideographic space and em dash separate */
    expect_terms(false, false,
                 "a\xc2\xa0"
                 "b\xe3\x80\x80"
                 "c\xe2\x80\x94"
                 "d",
                 "a|b|c|d");
    /* Devanagari keeps its vowel signs (combining marks of a non-Latin base) */
    expect_terms(false, false, "हिंदी", "हिंदी");
    /* a lone combining mark starts nothing */
    expect_terms(false, false,
                 "\xcc\x81"
                 "abc",
                 "abc");
}

static void test_ideographs_are_single_terms(void **state)
{
    expect_terms(false, false, "東京タワー", "東|京|タ|ワ|ー");
    expect_terms(false, false, "abc東京def", "abc|東|京|def");
    /* Hangul words are separated by spaces like Latin ones */
    expect_terms(false, false, "한국어 텍스트", "한국어|텍스트");
}

static void test_invalid_utf8_separates(void **state)
{
    expect_terms(false, false,
                 "ab\xff"
                 "cd\xc3"
                 "ef\xe2\x82"
                 "gh\xed\xa0\x80"
                 "ij",
                 "ab|cd|ef|gh|ij");
    /* an embedded NUL separates too */
    mem_lextok_t *tk;
    mem_lextok_opts_t o = {0};
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    collect_t c = {0};
    assert_int_equal(mem_lextok_run(tk, "ab\0cd", 5, collect_fn, &c), MEM_OK);
    assert_string_equal(c.out, "ab|cd");
    c = (collect_t){0};
    assert_int_equal(mem_lextok_run(tk, NULL, 0, collect_fn, &c), MEM_OK);
    assert_int_equal(c.n, 0);
    mem_lextok_free(tk);
}

static void test_long_words_are_cut(void **state)
{
    char text[600];
    memset(text, 'a', 500);
    memcpy(text + 500, " tail", 6);
    char want[MEM_LEXTOK_MAX_BYTES + 8];
    memset(want, 'a', MEM_LEXTOK_MAX_BYTES);
    memcpy(want + MEM_LEXTOK_MAX_BYTES, "|tail", 6);
    expect_terms(false, false, text, want);
    /* the cut falls on a character boundary: 2-byte characters, 64 bytes = 32 of them */
    char text2[512] = "";
    for (int i = 0; i < 100; i++)
        strcat(text2, "\xc3\xa9"); /* é, folds to e + mark: 1 byte each */
    strcat(text2, " ");
    for (int i = 0; i < 100; i++)
        strcat(text2, "\xd0\xb6"); /* ж: 2 bytes each, no decomposition */
    mem_lextok_t *tk;
    mem_lextok_opts_t o = {0};
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    collect_t c = {0};
    assert_int_equal(mem_lextok_run(tk, text2, strlen(text2), collect_fn, &c), MEM_OK);
    assert_int_equal(c.n, 2);
    char *bar = strchr(c.out, '|');
    assert_non_null(bar);
    assert_int_equal(bar - c.out, MEM_LEXTOK_MAX_BYTES);     /* 64 e's */
    assert_int_equal(strlen(bar + 1), MEM_LEXTOK_MAX_BYTES); /* 32 ж's, none split */
    mem_lextok_free(tk);
    /* a megabyte with no separator is one term */
    size_t big = 1u << 20;
    char *m = malloc(big);
    assert_non_null(m);
    memset(m, 'z', big);
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    c = (collect_t){0};
    assert_int_equal(mem_lextok_run(tk, m, big, collect_fn, &c), MEM_OK);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.max_term, MEM_LEXTOK_MAX_BYTES);
    mem_lextok_free(tk);
    free(m);
}

static void test_stopwords(void **state)
{
    /* the NLTK list, typed out independently of lextok.c's table */
    static const char *const nltk =
        "i me my myself we our ours ourselves you your yours yourself yourselves he him his "
        "himself she her hers herself it its itself they them their theirs themselves what "
        "which who whom this that these those am is are was were be been being have has had "
        "having do does did doing a an the and but if or because as until while of at by for "
        "with about against between into through during before after above below to from up "
        "down in out on off over under again further then once here there when where why how "
        "all any both each few more most other some such no nor not only own same so than too "
        "very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn "
        "hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn";
    size_t n = 0;
    for (const char *p = nltk; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!mem_lextok_is_stopword(p, len)) fail_msg("%.*s is not a stop word", (int)len, p);
        /* the tokenizer's own table agrees: the word alone, any case, gives no term, and one
         * letter more or less gives one (or is another stop word) */
        char buf[16], up[16];
        memcpy(buf, p, len);
        for (size_t i = 0; i < len; i++)
            up[i] = (char)(buf[i] - 'a' + 'A');
        up[len] = buf[len] = 0;
        expect_terms(true, false, buf, "");
        expect_terms(true, false, up, "");
        buf[len] = 'q', buf[len + 1] = 0; /* no stop word ends in q */
        expect_terms(true, false, buf, buf);
        if (len > 1) {
            buf[len - 1] = 0;
            expect_terms(true, false, buf, mem_lextok_is_stopword(buf, len - 1) ? "" : buf);
        }
        n++;
        p += len + (e ? 1 : 0);
    }
    assert_int_equal(n, 153);
    assert_false(mem_lextok_is_stopword("password", 8));
    assert_false(mem_lextok_is_stopword("", 0));
    assert_false(mem_lextok_is_stopword("th", 2));
    assert_false(mem_lextok_is_stopword("thee", 4));
    assert_false(mem_lextok_is_stopword("zzz", 3));
    expect_terms(true, false, "What is MY favourite colour? I don't know!",
                 "favourite|colour|know");
    expect_terms(true, false, "the THE The", "");
    /* stop words are matched after folding: "Ís" reads "is" */
    expect_terms(true, false, "Ís it", "");
}

static void test_stemming(void **state)
{
    expect_terms(false, true, "running runs ran runner", "run|run|ran|runner");
    expect_terms(false, true, "memories memory graduated graduation",
                 "memori|memori|graduat|graduat");
    expect_terms(true, true, "Which degree did I graduate with?", "degre|graduat");
    /* numbers pass through the stemmer unchanged */
    expect_terms(false, true, "2024 3rd 1990s", "2024|3rd|1990s");
    /* stop words are removed before stemming: "doing" is one, "does" too */
    expect_terms(true, true, "doing does dose", "dose");
}

static void test_callback_stops_the_run(void **state)
{
    mem_lextok_t *tk;
    mem_lextok_opts_t o = MEM_LEXTOK_DEFAULTS;
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    collect_t c = {.stop_after = 2};
    const char *t = "alpha beta gamma delta";
    assert_int_equal(mem_lextok_run(tk, t, strlen(t), collect_fn, &c), 7);
    assert_int_equal(c.n, 2);
    mem_lextok_free(tk);
    mem_lextok_free(NULL);
}

/* The stem cache is invisible: one tokenizer fed thousands of words (colliding in its
 * cache) gives the stems a fresh tokenizer gives for each word alone. */
static void test_stem_cache_is_transparent(void **state)
{
    uint64_t s = 20260910ull;
    static const char *const suffixes[] = {"", "s", "ing", "ed", "ation", "ness", "ly", "er"};
    mem_lextok_t *warm;
    mem_lextok_opts_t o = {.stopwords = false, .stem = true};
    assert_int_equal(mem_lextok_new(&o, &warm), MEM_OK);
    for (int i = 0; i < 5000; i++) {
        char w[64];
        size_t n = 2 + rng_next(&s) % (i % 3 ? 8 : 30);
        for (size_t j = 0; j < n; j++)
            w[j] = (char)('a' + rng_next(&s) % 6);
        w[n] = 0;
        strcat(w, suffixes[rng_next(&s) % 8]);
        collect_t a = {0}, b = {0};
        assert_int_equal(mem_lextok_run(warm, w, strlen(w), collect_fn, &a), MEM_OK);
        mem_lextok_t *fresh;
        assert_int_equal(mem_lextok_new(&o, &fresh), MEM_OK);
        assert_int_equal(mem_lextok_run(fresh, w, strlen(w), collect_fn, &b), MEM_OK);
        mem_lextok_free(fresh);
        if (strcmp(a.out, b.out) != 0) fail_msg("%s: cached %s, fresh %s", w, a.out, b.out);
    }
    mem_lextok_free(warm);
}

/* Random bytes, random UTF-8 and random mixes never crash, and every term respects the cap. */
static void test_random_input(void **state)
{
    const char *env = getenv("MEM_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : 20260907ull, s = seed;
    static const char *const pieces[] = {
        "a", "Z",        " ",           "\xc3\xa9", "\xcc\x81",         "\xe6\x9d\xb1",
        "'", "9",        "\xff",        "\xed\xa0", "\xf0\x9f\x98\x80", "\0",
        ".", "\xc2\xad", "\xef\xac\x81"};
    mem_lextok_t *tk;
    mem_lextok_opts_t o = MEM_LEXTOK_DEFAULTS;
    assert_int_equal(mem_lextok_new(&o, &tk), MEM_OK);
    char buf[2048];
    for (int it = 0; it < 2000; it++) {
        size_t len = 0, want = rng_next(&s) % 1800;
        bool raw = rng_next(&s) & 1;
        while (len < want) {
            if (raw) {
                buf[len++] = (char)rng_next(&s);
            } else {
                const char *p = pieces[rng_next(&s) % (sizeof(pieces) / sizeof(pieces[0]))];
                size_t pl = *p ? strlen(p) : 1;
                if (len + pl > sizeof(buf)) break;
                memcpy(buf + len, p, pl);
                len += pl;
            }
        }
        collect_t c = {0};
        if (mem_lextok_run(tk, buf, len, collect_fn, &c) != MEM_OK)
            fail_msg("seed %llu iteration %d", (unsigned long long)seed, it);
        assert_true(c.max_term <= MEM_LEXTOK_MAX_BYTES);
    }
    mem_lextok_free(tk);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_words_and_separators),
        cmocka_unit_test(test_unicode_folding),
        cmocka_unit_test(test_ideographs_are_single_terms),
        cmocka_unit_test(test_invalid_utf8_separates),
        cmocka_unit_test(test_long_words_are_cut),
        cmocka_unit_test(test_stopwords),
        cmocka_unit_test(test_stemming),
        cmocka_unit_test(test_callback_stops_the_run),
        cmocka_unit_test(test_stem_cache_is_transparent),
        cmocka_unit_test(test_random_input),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
