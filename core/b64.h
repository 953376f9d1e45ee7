/* b64.h - base64 (RFC 4648 section 4: standard alphabet, padded) and float32 vectors in it
 * SPDX-License-Identifier: MIT
 *
 * The vector form is what OpenAI's embeddings API returns with encoding_format "base64":
 * the little-endian bytes of each float32, one after the other, base64-encoded. Decoding
 * is strict, so a damaged string is refused rather than read as other numbers: the length
 * is a multiple of 4, only A-Z a-z 0-9 + / appear, '=' only as the last one or two
 * characters, and the bits that padding leaves unused are zero. Whitespace is not
 * skipped. Decoding is one table look-up per symbol; a refused string is scanned again,
 * symbol by symbol, only to name what is wrong. Pure functions: no allocation, any host byte
 * order; on an error the out-parameters are untouched and dst holds nothing meaningful.
 */
#ifndef MEM_CORE_B64_H
#define MEM_CORE_B64_H

#include <stddef.h>

#include "core/err.h"

/* Characters of the base64 of n bytes. */
#define MEM_B64_LEN(n) (((n) + 2) / 3 * 4)

/* Write the base64 of src[0..len) into dst (room for MEM_B64_LEN(len), no NUL added).
 * Returns the number of characters written. */
size_t mem_b64_encode(const void *src, size_t len, char *dst);

/* Decode s[0..len) into dst (room for len / 4 * 3 bytes); *n_out gets the byte count.
 * MEM_EINVAL for a malformed string; err->msg reads "FIELD: reason" and names the
 * offending offset (err->field is FIELD when field is not NULL). */
int mem_b64_decode(const char *s, size_t len, void *dst, size_t *n_out, const char *field,
                   mem_err_t *err);

/* Base64 of n float32 as little-endian bytes into dst (room for MEM_B64_LEN(4 * n)). */
size_t mem_b64_encode_f32le(const float *v, size_t n, char *dst);

/* Decode base64 of little-endian float32 into dst (room for max floats); *n_out gets the
 * count. MEM_EINVAL for a malformed string, a byte count that is not a multiple of 4 or
 * more than max floats; values are not checked (NaN and infinities come through). */
int mem_b64_decode_f32le(const char *s, size_t len, float *dst, size_t max, size_t *n_out,
                         const char *field, mem_err_t *err);

#endif
