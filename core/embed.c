/* embed.c - deterministic lexical embedder: hashed words and character trigrams
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. The "hashing trick": each feature (a word, or a trigram of a word) is hashed
 * once; the low bits pick a bucket, the top bit a sign (+1/-1), and the feature's weight
 * is added there. Signs make collisions cancel on average instead of piling up, so the dot
 * product of two vectors is an unbiased estimate of the dot product of their exact sparse
 * count vectors. Words give exact-term matches; trigrams give partial credit to related
 * forms ("rotate"/"rotated"/"rotation") and to typos. Words and trigrams are hashed with
 * different seeds so the word "abc" and the trigram "abc" are different features.
 *
 * Counts are accumulated in out[] itself (small integers and halves, exact in float up to
 * 2^24), then normalised in double by mem_vec_normalize.
 */
#include "core/embed.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/vec.h"

#define SEED_WORD      0xcbf29ce484222325ULL /* FNV-1a offset basis */
#define SEED_TRIGRAM   0x84222325cbf29ce4ULL
#define FNV_PRIME      0x100000001b3ULL
#define WEIGHT_WORD    1.0f
#define WEIGHT_TRIGRAM 0.5f

static bool is_word_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

/* splitmix64 finaliser: FNV-1a's low bits are weak for short keys. */
static uint64_t mix(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

static void add_feature(float *out, size_t dim, uint64_t h, float w, bool signed_hash)
{
    h = mix(h);
    float sign = (signed_hash && (h >> 63)) ? -1.0f : 1.0f;
    out[(h & 0x7fffffffffffffffULL) % dim] += sign * w;
}

/* Byte i of "^word$" (n = word length, i in 0..n+1). */
static unsigned char padded(const unsigned char *w, size_t n, size_t i)
{
    if (i == 0) return '^';
    if (i == n + 1) return '$';
    return lower(w[i - 1]);
}

static void add_word(float *out, size_t dim, const unsigned char *w, size_t n, bool signed_hash)
{
    uint64_t h = SEED_WORD;
    for (size_t i = 0; i < n; i++)
        h = (h ^ lower(w[i])) * FNV_PRIME;
    add_feature(out, dim, h, WEIGHT_WORD, signed_hash);
    /* "^word$" has n + 2 bytes, hence n trigrams (one, "^a$", for a 1-byte word). */
    for (size_t i = 0; i < n; i++) {
        uint64_t t = SEED_TRIGRAM;
        for (size_t j = 0; j < 3; j++)
            t = (t ^ padded(w, n, i + j)) * FNV_PRIME;
        add_feature(out, dim, t, WEIGHT_TRIGRAM, signed_hash);
    }
}

/* Returns the number of words seen. */
static size_t accumulate(const unsigned char *s, size_t len, float *out, size_t dim,
                         bool signed_hash)
{
    size_t words = 0, i = 0;
    memset(out, 0, dim * sizeof(*out));
    while (i < len) {
        while (i < len && !is_word_byte(s[i]))
            i++;
        size_t start = i;
        while (i < len && is_word_byte(s[i]))
            i++;
        if (i > start) {
            add_word(out, dim, s + start, i - start, signed_hash);
            words++;
        }
    }
    return words;
}

int mem_embed_text(const char *text, size_t len, float *out, size_t dim, mem_err_t *err)
{
    if (dim < 1 || dim > MEM_EMBED_DIM_MAX)
        return mem_err_set(err, MEM_EINVAL, "embed dim %zu outside 1..%d", dim, MEM_EMBED_DIM_MAX);
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len && !is_word_byte(s[i]))
        i++;
    if (!text || i == len)
        return mem_err_field(err, MEM_EINVAL, "text",
                             "text: nothing to embed (no letters or digits)");
    accumulate(s, len, out, dim, true);
    if (mem_vec_normalize(out, dim) != 0) {
        /* The signed features cancelled exactly: unsigned counts cannot. */
        accumulate(s, len, out, dim, false);
        if (mem_vec_normalize(out, dim) != 0)
            return mem_err_field(err, MEM_EINVAL, "text", "text: cannot be embedded");
    }
    return MEM_OK;
}
