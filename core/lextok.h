/* lextok.h - the tokenizer of the lexical index (SPEC section 6)
 * SPDX-License-Identifier: MIT
 *
 * Turns UTF-8 text into index terms, the same way for stored text and for queries:
 *
 * 1. Characters. The text is read as UTF-8 (an invalid byte is a separator). Each
 *    character is mapped to its compatibility decomposition with Unicode case folding
 *    (NFKD + casefold, utf8proc), and default-ignorable characters (soft hyphen, zero-width
 *    joiners) are dropped: "Ｃａｆé", "CAFÉ" and "café" all read "cafe" + accent. A term is
 *    stored composed again (NFKC).
 * 2. Words. A word is a maximal run of letters, digits and combining marks (Unicode general
 *    categories L, N and M). Everything else separates words: spaces, punctuation (also
 *    "'" in "don't", "." in "3.5", "-" in "e-mail", "_"), symbols, controls.
 *    Han ideographs, Hiragana and Katakana have no spaces between words: each of those
 *    characters is a word of its own.
 * 3. Accents. A combining mark that follows a Latin or Greek letter is dropped ("résumé"
 *    reads "resume", "naïve" "naive", "Αθήνα" "αθηνα"); in other scripts marks stay (they
 *    are parts of letters in Devanagari, Arabic, Hebrew; "й" is not "и").
 * 4. Length. A word longer than MEM_LEXTOK_MAX_BYTES bytes (after steps 1-3) keeps its first
 *    MEM_LEXTOK_MAX_BYTES bytes (cut at a character boundary); the rest of it is dropped.
 *    Long runs are hashes, base64 or URLs, whose prefix identifies them well enough.
 * 5. Stop words (when opts.stopwords): the English stop-word list of NLTK, its 153 words
 *    without an apostrophe ("i", "me", "my", "the", "is", "don", "t", ... see lextok.c),
 *    is removed. Checked before stemming, on the folded word.
 * 6. Stemming (when opts.stem): the Snowball English stemmer (Porter2, libstemmer) reduces
 *    each remaining word to its stem: "running", "runs" -> "run"; "memories" -> "memori".
 *    Words without letters (numbers) pass unchanged.
 *
 * Empty text, or text with no word, gives no terms (not an error). Changing any of these
 * rules changes the terms: MEM_LEXTOK_VERSION names the rules.
 *
 * A tokenizer is not thread-safe (the stemmer keeps state): one per thread, or a lock.
 */
#ifndef MEM_CORE_LEXTOK_H
#define MEM_CORE_LEXTOK_H

#include <stdbool.h>
#include <stddef.h>

#define MEM_LEXTOK_VERSION   1
#define MEM_LEXTOK_MAX_BYTES 64 /* bytes of a term, before stemming */

typedef struct mem_lextok_opts {
    bool stopwords; /* drop the English stop words */
    bool stem;      /* Snowball English stemming */
} mem_lextok_opts_t;

/* The measured defaults (docs/retrieval.md): stop words and stemming on. */
#define MEM_LEXTOK_DEFAULTS ((mem_lextok_opts_t){.stopwords = true, .stem = true})

typedef struct mem_lextok mem_lextok_t;

/* MEM_OK or MEM_ENOMEM. */
int mem_lextok_new(const mem_lextok_opts_t *opts, mem_lextok_t **out);
void mem_lextok_free(mem_lextok_t *tk);

/* Called once per term in text order (duplicates included). term[0..len) is valid until the
 * callback returns (not NUL-terminated; 1..MEM_LEXTOK_MAX_BYTES bytes, more is impossible
 * but a stem is never longer than its word). A non-zero return stops the run and is
 * returned by mem_lextok_run. */
typedef int (*mem_lextok_fn)(const char *term, size_t len, void *ud);

/* Tokenise text[0..len) (any bytes; NULL with len 0 is empty text). Returns MEM_OK, the
 * callback's non-zero value, or MEM_ENOMEM (the stemmer failed to allocate). */
int mem_lextok_run(mem_lextok_t *tk, const char *text, size_t len, mem_lextok_fn fn, void *ud);

/* 1 when the folded word w[0..len) is in the stop-word list. */
bool mem_lextok_is_stopword(const char *w, size_t len);

#endif
