/* num.h - decimal <-> binary floating point: correctly rounded parsing, shortest printing
 * SPDX-License-Identifier: MIT
 *
 * Pure functions: no allocation, no locale, no errno. Inputs are (ptr, len) slices that
 * need not end in NUL.
 *
 * Parsing rounds the exact decimal value to the nearest float32 or double, ties to even,
 * in one step (a float32 is never rounded to the nearest double first, which would round
 * twice): for up to 19 significant digits a double product known to lie within 3 ulps of
 * the value (float32, where that decides it) or Eisel-Lemire with 128-bit powers of five,
 * and an exact big-integer comparison with the halfway point when more digits leave the
 * result in doubt. Printing gives the shortest decimal that reads back as the same value
 * (Schubfach), so a float32 prints as at most 9 digits and a double as at most 17.
 */
#ifndef MEM_CORE_NUM_H
#define MEM_CORE_NUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Room for the longest mem_num_fmt_* output ("-1.2345678901234567e-308") and the NUL. */
#define MEM_NUM_FMT_MAX 32

/* Parse the JSON number (RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) that
 * starts at s: the longest prefix of s[0..len) that is one. On MEM_OK, *out is the value
 * correctly rounded to the type (underflow gives a signed zero) and *used its length in
 * bytes, so "01" parses as 0 with *used == 1 and the caller sees the stray "1". MEM_EINVAL:
 * no number starts at s ("", "-", "+1", ".5", "1.", "1e+", "NaN", "Infinity"). MEM_ELIMIT:
 * a well-formed number whose magnitude rounds to infinity ("1e39" as float32, "1e309"):
 * *used is set, *out is not. */
int mem_num_parse_f32(const char *s, size_t len, float *out, size_t *used);
int mem_num_parse_f64(const char *s, size_t len, double *out, size_t *used);

/* Parse a list of JSON numbers separated by commas, with JSON whitespace (space, tab, CR,
 * LF) around the commas, from s[0..len) into out[0..max), as mem_num_parse_f32 parses each
 * (an array's body: "1.5, -2e-3,0"). s must start at a number. *count: the numbers parsed
 * into out; *used: the bytes read, up to the first byte after the last number and the
 * whitespace behind it that is not a comma (so s[*used] is what ends the list: ']' in an
 * array). MEM_OK: the list ended there. MEM_EINVAL: no number where one was expected (at
 * s + *used); MEM_ELIMIT: a number beyond float32 (at s + *used), or a comma after max
 * numbers. *long_integer: some number was an integer of 19 digits or more, which a JSON
 * reader with 64-bit integers must check (it may be out of its range). */
int mem_num_parse_f32_list(const char *s, size_t len, float *out, size_t max, size_t *count,
                           size_t *used, bool *long_integer);

/* The shortest decimal digits * 10^exp10 that reads back as |x| (x finite and nonzero),
 * the closest to |x| among those of that length (ties to an even last digit); digits has
 * no trailing zeros. */
void mem_num_shortest_f64(double x, uint64_t *digits, int *exp10);
void mem_num_shortest_f32(float x, uint32_t *digits, int *exp10);

/* Print finite x as its shortest round-trip decimal, in the form a JSON encoder writes a
 * real: integral values below 1e15 in plain form with ".0" ("3.0", "-0.0", "100000.0"),
 * others like printf's %g at exactly that many digits ("0.1", "1e-07", "1.5e+300",
 * "123.456"), and always with a '.' or an exponent so it reads back as a real. Writes a
 * NUL-terminated string into out and returns its length; NaN and infinities (which JSON
 * cannot hold) write "null" and return 4. A float32 prints its own shortest digits (0.1f
 * prints "0.1", not "0.10000000149011612"). */
size_t mem_num_fmt_f64(double x, char out[MEM_NUM_FMT_MAX]);
size_t mem_num_fmt_f32(float x, char out[MEM_NUM_FMT_MAX]);

/* The double nearest to the shortest decimal of x: 0.1f gives the double 0.1, so a float
 * carried as a double prints as the float would. NaN and infinities pass through. */
double mem_num_f32_to_f64_shortest(float x);

#endif
