#!/usr/bin/env python3
"""gen-num-tables.py - write core/num_tables.h, the powers of ten of core/num.c.

Usage: python3 scripts/gen-num-tables.py [--check]   (--check: fail if the file differs)

Two tables, both computed here with exact integers and checked before they are written:

- mem_num__pow5[q] for q in [-342, 308]: 5^q as a 128-bit significand, the table of
  Eisel-Lemire decimal-to-binary conversion (Lemire, "Number Parsing at a Gigabyte per
  Second", 2021, appendix B): for q >= 0, 5^q normalised to [2^127, 2^128) and truncated;
  for q < 0, 2^b / 5^-q rounded up (one bit more for q >= -27, where the quotient is used
  exactly), then truncated to 128 bits.
- mem_num__g[k] for k in [-324, 292]: g = floor(10^-k * 2^-r) + 1 with 2^125 <= g < 2^126,
  r = floor(log2(10^-k)) - 125, split into two 63-bit halves, the table of the Schubfach
  shortest binary-to-decimal conversion (Giulietti, "The Schubfach way to render doubles",
  2020, appendix). float32 uses the upper half plus one.

The integer approximations of logarithms core/num.c uses are verified here over the
whole range where they are used.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "core", "num_tables.h")

POW5_QMIN, POW5_QMAX = -342, 308
G_KMIN, G_KMAX = -324, 292
Q_MIN_F64, Q_MAX_F64 = -1074, 971  # binary exponents of doubles (and floats, a subset)


def flog10pow2(e):  # floor(log10(2^e))
    return (e * 661971961083) >> 41


def flog10three_quarters_pow2(e):  # floor(log10(3/4 * 2^e))
    return (e * 661971961083 - 274743187321) >> 41


def flog2pow10(e):  # floor(log2(10^e))
    return (e * 913124641741) >> 38


def el_power(q):  # floor(log2(10^q)) + 63, as Eisel-Lemire uses it
    return (((152170 + 65536) * q) >> 16) + 63


def floor_log10_frac(num, den):  # floor(log10(num/den)) for positive integers
    k = len(str(num // den)) - 1 if num >= den else -1
    while 10 ** (k + 1) * den <= num if k + 1 >= 0 else num * 10 ** -(k + 1) >= den:
        k += 1
    while not (10 ** k * den <= num if k >= 0 else num * 10 ** -k >= den):
        k -= 1
    return k


def floor_log2_frac(num, den):  # floor(log2(num/den))
    k = num.bit_length() - den.bit_length()
    while (num >= den << (k + 1)) if k + 1 >= 0 else (num << -(k + 1)) >= den:
        k += 1
    while not ((num >= den << k) if k >= 0 else (num << -k) >= den):
        k -= 1
    return k


def check_logs():
    for e in range(Q_MIN_F64, Q_MAX_F64 + 1):
        n, d = (2 ** e, 1) if e >= 0 else (1, 2 ** -e)
        assert flog10pow2(e) == floor_log10_frac(n, d), e
        assert flog10three_quarters_pow2(e) == floor_log10_frac(3 * n, 4 * d), e
    for e in range(-G_KMAX, -G_KMIN + 1):
        n, d = (10 ** e, 1) if e >= 0 else (1, 10 ** -e)
        assert flog2pow10(e) == floor_log2_frac(n, d), e
    for q in range(POW5_QMIN, POW5_QMAX + 1):
        n, d = (10 ** q, 1) if q >= 0 else (1, 10 ** -q)
        assert el_power(q) == floor_log2_frac(n, d) + 63, q


def pow5_entry(q):
    if q >= 0:
        p = 5 ** q
        while p < 1 << 127:
            p <<= 1
        while p >= 1 << 128:
            p >>= 1
        return p
    p5 = 5 ** -q
    z = 0
    while (1 << z) < p5:
        z += 1
    if q >= -27:
        c = (1 << (z + 127)) // p5 + 1
    else:
        c = (1 << (2 * z + 128)) // p5 + 1
        while c >= 1 << 128:
            c >>= 1
    assert 1 << 127 <= c < 1 << 128, q
    return c


def g_entry(k):
    r = flog2pow10(-k) - 125
    # g = floor(10^-k * 2^-r) + 1, exactly
    if k <= 0:
        num, den = 10 ** -k, 1
    else:
        num, den = 1, 10 ** k
    if r <= 0:
        num <<= -r
    else:
        den <<= r
    g = num // den + 1
    assert 1 << 125 <= g < 1 << 126, k
    # (g - 1) 2^r <= 10^-k < g 2^r
    lhs_ok = (g - 1) * den <= num < g * den
    assert lhs_ok, k
    return g


def render():
    check_logs()
    out = []
    w = out.append
    w("/* num_tables.h - powers of ten for core/num.c (scripts/gen-num-tables.py writes it: do")
    w(" * not edit)")
    w(" * SPDX-License-Identifier: MIT")
    w(" *")
    w(" * mem_num__pow5: 5^q, q in [-342, 308], 128-bit significands (high, low) for")
    w(" * Eisel-Lemire parsing. mem_num__g: g(k) = floor(10^-k 2^-r) + 1 in [2^125, 2^126),")
    w(" * k in [-324, 292], as two 63-bit halves (high, low) for Schubfach formatting. Only")
    w(" * core/num.c includes this file.")
    w(" */")
    w("#ifndef MEM_CORE_NUM_TABLES_H")
    w("#define MEM_CORE_NUM_TABLES_H")
    w("")
    w("#include <stdint.h>")
    w("")
    w(f"#define MEM_NUM__POW5_QMIN ({POW5_QMIN})")
    w(f"#define MEM_NUM__POW5_QMAX {POW5_QMAX}")
    w(f"#define MEM_NUM__G_KMIN    ({G_KMIN})")
    w(f"#define MEM_NUM__G_KMAX    {G_KMAX}")
    w("")
    w(f"static const uint64_t mem_num__pow5[{POW5_QMAX - POW5_QMIN + 1}][2] = {{")
    for q in range(POW5_QMIN, POW5_QMAX + 1):
        c = pow5_entry(q)
        w(f"    {{0x{c >> 64:016x}u, 0x{c & (2**64 - 1):016x}u}}, /* 5^{q} */")
    w("};")
    w("")
    w(f"static const uint64_t mem_num__g[{G_KMAX - G_KMIN + 1}][2] = {{")
    for k in range(G_KMIN, G_KMAX + 1):
        g = g_entry(k)
        w(f"    {{0x{g >> 63:016x}u, 0x{g & (2**63 - 1):016x}u}}, /* k = {k} */")
    w("};")
    w("")
    w("#endif")
    return "\n".join(out) + "\n"


def main():
    text = render()
    try:  # keep `make format-check` clean whatever the layout above
        text = subprocess.run(["clang-format", "--assume-filename=" + OUT], input=text,
                              capture_output=True, text=True, check=True, cwd=ROOT).stdout
    except (OSError, subprocess.CalledProcessError):
        pass
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            if f.read() != text:
                print(f"{OUT} is out of date: run python3 scripts/gen-num-tables.py")
                return 1
        print(f"{OUT} is up to date")
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
