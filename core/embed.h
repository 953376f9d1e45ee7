/* embed.h - the built-in deterministic lexical embedder (SPEC section 6)
 * SPDX-License-Identifier: MIT
 *
 * Feature hashing of word counts and character-trigram counts into `dim` buckets with a
 * signed hash, L2-normalised. Lexical, not semantic: "car" and "automobile" share nothing,
 * "rotate the password" and "password rotated" share a lot. It exists so that curl users
 * with no model at hand get useful retrieval; the vectors are stable across runs, hosts
 * and versions of this file's MEM_EMBED_VERSION (a change of the features bumps it).
 */
#ifndef MEM_CORE_EMBED_H
#define MEM_CORE_EMBED_H

#include <stddef.h>

#include "core/err.h"

#define MEM_EMBED_VERSION 1
/* What a namespace whose vectors this embedder made records as its embedder; a change of
 * the features that makes old vectors incomparable changes it too ("builtin:2"). */
#define MEM_EMBED_NAME        "builtin"
#define MEM_EMBED_DIM_MAX     4096
#define MEM_EMBED_DIM_DEFAULT 256

/* Embed text[0..len) (need not end in NUL; any bytes) into out[0..dim), a unit vector.
 *
 * Tokens: maximal runs of word bytes, where a word byte is an ASCII letter or digit or any
 * byte >= 0x80 (so UTF-8 multi-byte characters stay inside their word: "café", "東京"),
 * ASCII letters lowercased. Everything else (spaces, punctuation, controls, NUL) separates.
 * Features per token: the word itself (weight 1) and the byte trigrams of "^word$" (weight
 * 0.5 each; "^" and "$" mark the word's edges, so "^ca" differs from "ca" inside a word).
 * Each feature is hashed (FNV-1a 64 + a 64-bit finaliser) to a bucket and a sign.
 *
 * Returns MEM_OK, or MEM_EINVAL (out untouched) when dim is outside 1..MEM_EMBED_DIM_MAX,
 * or when the text holds no word byte: "text: nothing to embed (no letters or digits)".
 * A zero vector is never returned: should the signed features cancel exactly (possible
 * with tiny dims), the unsigned counts are used instead. No allocation; O(len) time. */
int mem_embed_text(const char *text, size_t len, float *out, size_t dim, mem_err_t *err);

#endif
