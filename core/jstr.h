/* jstr.h - one escape of a JSON string (RFC 8259 section 7) decoded to UTF-8
 * SPDX-License-Identifier: MIT
 *
 * Owned by core/; used by api/json.c (request bodies) and storage/meta.c (the object keys
 * SQLite's json_tree spells as JSON text), so both read an escape the same way. Strict:
 * \u0000 and a surrogate without its other half are refused, so what comes out is valid
 * UTF-8 without NUL bytes. Pure: no allocation, nothing written on a refusal.
 */
#ifndef MEM_CORE_JSTR_H
#define MEM_CORE_JSTR_H

#include <stddef.h>

/* Bytes one escape can decode to (a surrogate pair: one 4-byte character). */
#define MEM_JSTR_UTF8_MAX 4

typedef enum mem_jstr_bad {
    MEM_JSTR_ESCAPE,    /* not one of \" \\ \/ \b \f \n \r \t \uXXXX, or cut short */
    MEM_JSTR_SURROGATE, /* a \u surrogate without its other half */
    MEM_JSTR_NUL,       /* \u0000 */
} mem_jstr_bad_t;

/* The escape at p (p[0] is the backslash, p < end) into out (room for MEM_JSTR_UTF8_MAX
 * bytes, never more than the escape's own length written): returns how many bytes of p it
 * spans (2, 6 or 12) with *n_out the bytes written; 0 when it is refused, *why saying why. */
size_t mem_jstr_unescape(const char *p, const char *end, char *out, size_t *n_out,
                         mem_jstr_bad_t *why);

/* s (NUL-terminated) copied to out as valid UTF-8: every byte that does not start a
 * complete, valid sequence becomes '?'; stops at the first character that would leave
 * fewer than 5 bytes of out (cap >= 5), and NUL-terminates. Returns the bytes written. */
size_t mem_jstr_sanitize(const char *s, char *out, size_t cap);

#endif
