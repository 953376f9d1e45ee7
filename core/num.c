/* num.c - correctly rounded decimal parsing and shortest printing (see num.h)
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Most numbers take the fast path (see "the fast path" below): up to 19 digits
 * read 8 bytes at a time, and for float32 one rounded double product, which is exact
 * enough except within a few ulps of a float32 halfway point; those and the rest take the
 * general path. It reads the first 19 significant digits into w, so the value is
 * w * 10^q (+ what later digits add). Eisel-Lemire multiplies w by a 128-bit
 * approximation of 5^q (core/num_tables.h) and rounds to the target precision directly;
 * it knows when the approximation could not decide. When it could not, or when digits
 * past the 19th mean w and w + 1 round differently, the guess (at most an ulp or two off)
 * is corrected by comparing the exact decimal with the halfway points on either side,
 * in big integers (the first 800 significant digits decide: a halfway point between two
 * doubles has at most 770, later nonzero digits only break a tie). float32 runs the same
 * code with its own precision, so it is rounded once, not through a double.
 *
 * Printing is Schubfach (Giulietti 2020): with g ~ 10^-k as a 126-bit number, three
 * products give the rounding interval's ends and the value scaled to about 17 digits
 * (9 for float32); one digit more or fewer is then picked from which candidates fall in
 * the interval. For subnormals so small that the scaled value has two digits the
 * published algorithm stops at two digits; a one-digit candidate is then tried with the
 * exact parser, so the answer is always the shortest.
 *
 * Right shifts of negative int64_t are arithmetic (gcc and clang, every target here); the
 * logarithm approximations rely on it and scripts/gen-num-tables.py checks them.
 */
#include "core/num.h"

#include <stdbool.h>
#include <string.h>

#include "core/num_tables.h"

__extension__ typedef unsigned __int128 u128;

/* ---- binary formats ---- */

typedef struct fmt {
    int mant_bits;            /* explicit significand bits */
    int min_exponent;         /* -bias: the biased exponent is power2 + bias */
    int inf_power;            /* biased exponent of infinity */
    int pow10_min, pow10_max; /* w * 10^q is 0 below, infinite above */
    int rte_min, rte_max;     /* q where w * 10^q can fall exactly halfway */
} fmt_t;

static const fmt_t F64 = {52, -1023, 0x7FF, -342, 308, -4, 23};
/* The hot path is inlined per format, so every field of F is a constant there. */
#define HOT static inline __attribute__((always_inline))
static const fmt_t F32 = {23, -127, 0xFF, -65, 38, -17, 10};

/* A value m * 2^e2 with m < 2^(mant_bits + 1): e2 is the subnormal exponent when m has no
 * hidden bit. inf marks infinity. */
typedef struct bin {
    uint64_t m;
    int e2;
    bool inf;
} bin_t;

HOT int e2_min(const fmt_t *F)
{
    return 1 + F->min_exponent - F->mant_bits;
}

static int e2_max(const fmt_t *F)
{
    return F->inf_power - 1 + F->min_exponent - F->mant_bits;
}

HOT uint64_t to_bits(const fmt_t *F, bin_t b)
{
    uint64_t hidden = UINT64_C(1) << F->mant_bits;
    if (b.inf) return (uint64_t)F->inf_power << F->mant_bits;
    if (b.m < hidden) return b.m; /* subnormal or zero */
    uint64_t biased = (uint64_t)(b.e2 - F->min_exponent + F->mant_bits);
    return (biased << F->mant_bits) | (b.m - hidden);
}

HOT uint64_t mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((u128)a * b) >> 64);
}

/* ---- Eisel-Lemire ---- */

/* floor(log2(10^q)) + 63 for q in [-342, 308]. */
HOT int el_power(int q)
{
    return ((217706 * q) >> 16) + 63;
}

/* w * 10^q rounded to F, ties to even. *sure is false when the 128-bit product could not
 * decide the rounding: the result may then be one unit off either way. */
HOT bin_t el_round(const fmt_t *F, int64_t q, uint64_t w, bool *sure)
{
    bin_t r = {0, e2_min(F), false};
    *sure = true;
    if (w == 0 || q < F->pow10_min) return r;
    if (q > F->pow10_max) {
        r.inf = true;
        return r;
    }
    int lz = __builtin_clzll(w);
    w <<= lz;
    const uint64_t *p5 = mem_num__pow5[q - MEM_NUM__POW5_QMIN];
    u128 first = (u128)w * p5[0];
    uint64_t hi = (uint64_t)(first >> 64), lo = (uint64_t)first;
    uint64_t mask = UINT64_MAX >> (F->mant_bits + 3);
    if ((hi & mask) == mask) { /* the low word of 5^q may carry into the bits that count */
        uint64_t second_hi = mulhi(w, p5[1]);
        lo += second_hi;
        if (second_hi > lo) hi++;
    }
    /* The truncated product is below the true one by less than w: a low word of all ones
     * may hide a carry. For q in [-27, 55] the products are exact enough never to matter. */
    if (lo == UINT64_MAX && (q < -27 || q > 55)) *sure = false;
    int upperbit = (int)(hi >> 63);
    int shift = upperbit + 64 - F->mant_bits - 3;
    uint64_t m = hi >> shift;
    int p2 = el_power((int)q) + upperbit - lz - F->min_exponent; /* biased exponent */
    uint64_t hidden = UINT64_C(1) << F->mant_bits;
    if (p2 <= 0) { /* subnormal: shift out the bits below the smallest exponent */
        if (-p2 + 1 >= 64) return r;
        m >>= -p2 + 1;
        m += m & 1;
        m >>= 1;
        r.m = m; /* m == hidden: rounded up to the smallest normal, same e2 */
        return r;
    }
    /* Exactly halfway (only possible when 5^q is exact in 64 bits): round to even. */
    if (lo <= 1 && q >= F->rte_min && q <= F->rte_max && (m & 3) == 1 && (m << shift) == hi)
        m &= ~(uint64_t)1;
    m += m & 1;
    m >>= 1;
    if (m >= 2 * hidden) {
        m = hidden;
        p2++;
    }
    if (p2 >= F->inf_power) {
        r.inf = true;
        return r;
    }
    r.m = m;
    r.e2 = p2 + F->min_exponent - F->mant_bits;
    return r;
}

/* ---- exact comparison in big integers ---- */

#define BIG_LIMBS  160 /* 5120 bits: the largest operand is below 2700 bits */
#define MAX_DIGITS 800 /* significant digits that decide a rounding (see DESIGN) */

typedef struct big {
    uint32_t l[BIG_LIMBS]; /* little-endian limbs */
    int n;                 /* limbs in use; no leading zero limb */
} big_t;

static void big_set(big_t *b, uint64_t v)
{
    b->n = 0;
    while (v) {
        b->l[b->n++] = (uint32_t)v;
        v >>= 32;
    }
}

/* b = b * m + add. Saturates at BIG_LIMBS, which the operand bounds never reach. */
static void big_muladd(big_t *b, uint32_t m, uint32_t add)
{
    uint64_t carry = add;
    for (int i = 0; i < b->n; i++) {
        uint64_t t = (uint64_t)b->l[i] * m + carry;
        b->l[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && b->n < BIG_LIMBS) b->l[b->n++] = (uint32_t)carry;
}

static void big_mul_pow5(big_t *b, int64_t e)
{
    for (; e >= 13; e -= 13)
        big_muladd(b, 1220703125u, 0); /* 5^13 */
    static const uint32_t P5[13] = {1,     5,      25,      125,     625,      3125,     15625,
                                    78125, 390625, 1953125, 9765625, 48828125, 244140625};
    if (e > 0) big_muladd(b, P5[e], 0);
}

static void big_shl(big_t *b, int64_t bits)
{
    if (b->n == 0 || bits <= 0) return;
    /* the operand bounds keep every result below BIG_LIMBS; clamping only keeps memory safe */
    int64_t words = bits / 32;
    int rem = (int)(bits % 32);
    if (words > BIG_LIMBS - 1 - b->n) words = BIG_LIMBS - 1 - b->n;
    if (words < 0) words = 0;
    uint32_t carry = 0;
    int n = b->n;
    if (rem) {
        for (int i = 0; i < n; i++) {
            uint32_t v = b->l[i];
            b->l[i] = (v << rem) | carry;
            carry = v >> (32 - rem);
        }
        if (carry && n < BIG_LIMBS) b->l[n++] = carry;
    }
    if (n + words > BIG_LIMBS) words = BIG_LIMBS - n;
    memmove(b->l + words, b->l, (size_t)n * sizeof(uint32_t));
    memset(b->l, 0, (size_t)words * sizeof(uint32_t));
    b->n = n + (int)words;
}

static int big_cmp(const big_t *a, const big_t *b)
{
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int i = a->n; i-- > 0;)
        if (a->l[i] != b->l[i]) return a->l[i] < b->l[i] ? -1 : 1;
    return 0;
}

/* The significant digits of a decimal: those of ip[0..il) then fp[0..fl), times 10^e. */
typedef struct digits {
    const char *ip, *fp;
    size_t il, fl;
    int64_t e;
} digits_t;

/* D = the first MAX_DIGITS significant digits, the value is D * 10^*e10 plus something
 * in [0, 10^*e10) that is nonzero exactly when *sticky. */
static void big_digits(const digits_t *d, big_t *D, int64_t *e10, bool *sticky)
{
    big_set(D, 0);
    *sticky = false;
    int64_t taken = 0, last_place = 0;
    uint32_t chunk = 0, chunk_mul = 1;
    for (size_t i = 0; i < d->il + d->fl; i++) {
        unsigned dig = (unsigned)((i < d->il ? d->ip[i] : d->fp[i - d->il]) - '0');
        int64_t place = i < d->il ? (int64_t)(d->il - 1 - i) : -(int64_t)(i - d->il + 1);
        if (taken == 0 && dig == 0) continue;
        if (taken == MAX_DIGITS) {
            if (dig) *sticky = true;
            continue;
        }
        chunk = chunk * 10 + dig;
        chunk_mul *= 10;
        if (chunk_mul == 1000000000u) {
            big_muladd(D, chunk_mul, chunk);
            chunk = 0;
            chunk_mul = 1;
        }
        taken++;
        last_place = place;
    }
    if (chunk_mul > 1) big_muladd(D, chunk_mul, chunk);
    *e10 = d->e + last_place;
}

/* Sign of D * 10^e10 (+ sticky) - M * 2^e2. */
static int cmp_dec_bin(const big_t *D, int64_t e10, bool sticky, uint64_t M, int64_t e2)
{
    big_t X = *D, Y;
    big_set(&Y, M);
    int64_t ex = 0, ey = e2;
    if (e10 >= 0) {
        big_mul_pow5(&X, e10);
        ex = e10;
    } else {
        big_mul_pow5(&Y, -e10);
        ey -= e10;
    }
    if (ex > ey)
        big_shl(&X, ex - ey);
    else
        big_shl(&Y, ey - ex);
    int c = big_cmp(&X, &Y);
    return c == 0 && sticky ? 1 : c;
}

/* Move guess to the correctly rounded value of the decimal: compare with the halfway
 * points above and below until it sits between them (ties to the even significand). */
static bin_t slow_round(const fmt_t *F, const digits_t *d, bin_t b)
{
    big_t D;
    int64_t e10;
    bool sticky;
    big_digits(d, &D, &e10, &sticky);
    if (D.n == 0) return (bin_t){0, e2_min(F), false};
    uint64_t hidden = UINT64_C(1) << F->mant_bits;
    if (b.inf) b = (bin_t){2 * hidden - 1, e2_max(F), false};
    for (int step = 0; step < 8; step++) {
        int c = cmp_dec_bin(&D, e10, sticky, 2 * b.m + 1, (int64_t)b.e2 - 1);
        if (c > 0 || (c == 0 && (b.m & 1))) { /* up */
            if (++b.m == 2 * hidden) {
                b.m = hidden;
                if (++b.e2 > e2_max(F)) return (bin_t){0, 0, true};
            }
            continue;
        }
        if (b.m == 0) break;
        bool narrow = b.m == hidden && b.e2 > e2_min(F); /* the gap below is half as wide */
        c = narrow ? cmp_dec_bin(&D, e10, sticky, 4 * b.m - 1, (int64_t)b.e2 - 2)
                   : cmp_dec_bin(&D, e10, sticky, 2 * b.m - 1, (int64_t)b.e2 - 1);
        if (c < 0 || (c == 0 && (b.m & 1))) { /* down */
            if (narrow) {
                b.m = 2 * hidden - 1;
                b.e2--;
            } else {
                b.m--;
            }
            continue;
        }
        break;
    }
    return b;
}

/* ---- parsing ---- */

HOT bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Exponents beyond this magnitude saturate: no number that fits in memory can bring such
 * a value back into range. */
#define EXP_SATURATE INT64_C(100000000000000000)

/* The value of the 8 ASCII digits at p, or false when they are not all digits: one
 * 64-bit load, a check of every byte, and three multiplications that combine pairs, then
 * quadruples (the usual SWAR reduction). */
HOT bool eight_digits(const char *p, uint64_t *out)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v); /* the first digit in the low byte */
#endif
    if (((v & UINT64_C(0xF0F0F0F0F0F0F0F0)) |
         (((v + UINT64_C(0x0606060606060606)) & UINT64_C(0xF0F0F0F0F0F0F0F0)) >> 4)) !=
        UINT64_C(0x3333333333333333))
        return false;
    v -= UINT64_C(0x3030303030303030);
    v = v * 10 + (v >> 8); /* bytes 0, 2, 4, 6: two-digit numbers */
    const uint64_t mask = UINT64_C(0x000000FF000000FF);
    v = ((v & mask) * UINT64_C(0x000F424000000064) +           /* 100 + 10^6 << 32 */
         ((v >> 16) & mask) * UINT64_C(0x0000271000000001)) >> /* 1 + 10^4 << 32 */
        32;
    *out = v;
    return true;
}

HOT bool eight_zeros(const char *p)
{
    return memcmp(p, "00000000", 8) == 0;
}

HOT int parse(const fmt_t *F, const char *s, size_t len, uint64_t *bits, size_t *used)
{
    const char *p = s, *end = s + len;
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    if (p == end || !is_digit(*p)) return MEM_EINVAL;
    /* One pass: the grammar, and the first 19 significant digits into w, so that
     * w * 10^q (q before the exponent) approximates the value. */
    digits_t d = {p, NULL, 0, 0, 0};
    uint64_t w = 0, x;
    int nd = 0;
    int64_t q = 0;
    bool truncated = false;
    if (*p == '0') {
        p++;
    } else {
        while (end - p >= 8 && nd <= 11 && eight_digits(p, &x)) {
            w = w * 100000000 + x;
            nd += 8;
            p += 8;
        }
        for (; p < end && is_digit(*p); p++) {
            if (nd < 19) {
                w = w * 10 + (unsigned)(*p - '0');
                nd++;
            } else {
                q++;
                truncated |= *p != '0';
            }
        }
    }
    d.il = (size_t)(p - d.ip);
    if (p < end && *p == '.') {
        d.fp = ++p;
        if (nd == 0) { /* "0.000ddd": the zeros only move the point */
            while (end - p >= 8 && eight_zeros(p)) {
                p += 8;
                q -= 8;
            }
            for (; p < end && *p == '0'; p++)
                q--;
        }
        while (end - p >= 8 && nd <= 11 && eight_digits(p, &x)) {
            w = w * 100000000 + x;
            nd += 8;
            q -= 8;
            p += 8;
        }
        for (; p < end && is_digit(*p); p++) {
            if (nd < 19) {
                w = w * 10 + (unsigned)(*p - '0');
                nd++;
                q--;
            } else {
                truncated |= *p != '0';
            }
        }
        d.fl = (size_t)(p - d.fp);
        if (d.fl == 0) return MEM_EINVAL;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p == end || !is_digit(*p)) return MEM_EINVAL;
        int64_t e = 0;
        for (; p < end && is_digit(*p); p++)
            if (e < EXP_SATURATE) e = e * 10 + (*p - '0');
        d.e = eneg ? -e : e;
    }
    q += d.e;
    bool sure, sure1 = true;
    bin_t b = el_round(F, q, w, &sure);
    if (truncated) { /* the value lies in [w, w + 1) * 10^q */
        bin_t b1 = el_round(F, q, w + 1, &sure1);
        if (b1.inf != b.inf || b1.m != b.m || b1.e2 != b.e2) sure = false;
    }
    if (!sure || !sure1) b = slow_round(F, &d, b);
    *used = (size_t)(p - s);
    if (b.inf) return MEM_ELIMIT;
    uint64_t out = to_bits(F, b);
    if (neg) out |= UINT64_C(1) << (F == &F64 ? 63 : 31);
    *bits = out;
    return MEM_OK;
}

/* ---- the fast path ---- */

/* What nearly every number in a body looks like: at most 19 significant digits, fewer than
 * 8 zeros between the point and the first of them, at most 23 digits on either side of the
 * point, an exponent of at most 4 digits, and FAST_AHEAD readable bytes wherever a run of
 * digits starts (so the last number of an input goes the general way). fast_scan reads
 * such a number (its value is w * 10^q exactly) with every byte of a run classified at
 * once, 8 bytes to a word, the words independently of each other, so that the end of the
 * run (on which the next number's start depends) is known after one load, not one load
 * per 8 digits. Anything else, valid or not, makes it give up, and parse() reads the
 * number from its start. */
#define FAST_AHEAD 24

static const uint64_t POW10_U64[20] = {1,
                                       10,
                                       100,
                                       1000,
                                       10000,
                                       100000,
                                       1000000,
                                       10000000,
                                       100000000,
                                       1000000000,
                                       10000000000,
                                       100000000000,
                                       1000000000000,
                                       10000000000000,
                                       100000000000000,
                                       1000000000000000,
                                       10000000000000000,
                                       100000000000000000,
                                       1000000000000000000,
                                       10000000000000000000u};
/* 10^0..10^22 are exact doubles (5^22 < 2^53). */
static const double POW10_F64[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

HOT uint64_t load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v); /* the first byte in the low byte */
#endif
    return v;
}

/* How many of the 8 bytes of v (the first in the low byte) are digits before the first
 * that is not. Each byte is tested on its own (no carry crosses bytes: the sums stay below
 * 0x100): bit 7 of a byte of ge0 says byte >= '0' (for bytes below 0x80), of gt9 that it
 * is above '9'. */
HOT int leading_digits(uint64_t v)
{
    const uint64_t high = UINT64_C(0x8080808080808080), lo = v & ~high;
    uint64_t ge0 = lo + UINT64_C(0x5050505050505050), gt9 = lo + UINT64_C(0x4646464646464646);
    uint64_t stop = (v | gt9 | ~ge0) & high;
    return stop ? __builtin_ctzll(stop) >> 3 : 8;
}

/* The value of the first n (0..8) bytes of v, all digits: shifted to the top, where the
 * zero bytes behind them read as leading zeros, and combined by the usual SWAR reduction
 * (pairs, then quadruples, then the two halves). No branch: n == 0 shifts everything out
 * in two steps of 32. */
HOT uint64_t digits_value(uint64_t v, int n)
{
    /* the borrow of a byte below '0' only reaches the bytes after it, which are shifted out */
    int half = 4 * (8 - n);
    uint64_t x = ((v - UINT64_C(0x3030303030303030)) << half) << half;
    x = x * 10 + (x >> 8); /* bytes 0, 2, 4, 6: two-digit numbers */
    const uint64_t mask = UINT64_C(0x000000FF000000FF);
    return ((x & mask) * UINT64_C(0x000F424000000064) +           /* 100 + 10^6 << 32 */
            ((x >> 16) & mask) * UINT64_C(0x0000271000000001)) >> /* 1 + 10^4 << 32 */
           32;
}

HOT int clamp8(int n)
{
    return n < 0 ? 0 : n > 8 ? 8 : n;
}

/* The run of digits at p (FAST_AHEAD bytes readable): its length (below 24, or false),
 * and in *val its value when it has at most 19 digits after its first `zeros`. Within the
 * first two words the length picks the digits by selects, not branches (it varies from
 * number to number, and a mispredicted branch costs more than the arithmetic); the third
 * word is read only for runs of 16 digits or more, which a client writes all or none of. */
HOT bool digit_run(const char *p, int zeros, int *len, uint64_t *val)
{
    uint64_t v0 = load8(p), v1 = load8(p + 8);
    int n0 = leading_digits(v0), n1 = leading_digits(v1);
    if (n0 + n1 < 16) { /* no more than 15 digits: two words */
        int n = n0 < 8 ? n0 : 8 + n1, l1 = clamp8(n - 8);
        if (n - zeros > 19) return false;
        *len = n;
        *val = digits_value(v0, n < 8 ? n : 8) * POW10_U64[l1] + digits_value(v1, l1);
        return true;
    }
    uint64_t v2 = load8(p + 16);
    int n2 = leading_digits(v2), n = 16 + n2;
    if (n == 24 || n - zeros > 19) return false;
    *len = n;
    /* leading zeros keep every partial value below the final one, which is below 10^19 */
    *val = (digits_value(v0, 8) * 100000000 + digits_value(v1, 8)) * POW10_U64[n2] +
           digits_value(v2, n2);
    return true;
}

/* Zeros at the start of v (the first byte in the low byte), up to 8. */
HOT int leading_zeros(uint64_t v)
{
    uint64_t other = v ^ UINT64_C(0x3030303030303030); /* '0' bytes become 0 */
    return other ? __builtin_ctzll(other) >> 3 : 8;
}

/* The common number at s, or false for parse() to read. */
HOT bool fast_scan(const char *s, const char *end, bool *neg, uint64_t *w, int64_t *q,
                   const char **stop)
{
    const char *p = s;
    *neg = end - p > 0 && *p == '-';
    p += *neg;
    if (end - p < FAST_AHEAD) return false;
    int n_int = 0, n_frac;
    uint64_t ip = 0, fp;
    if (*p == '0') {
        p++;
    } else if (!digit_run(p, 0, &n_int, &ip) || n_int == 0) {
        return false;
    } else {
        p += n_int;
    }
    int64_t e10 = 0;
    if (*p == '.') {
        p++;
        if (end - p < FAST_AHEAD) return false;
        /* after "0." the zeros are not significant: only the digits after them count */
        int zeros = n_int == 0 ? leading_zeros(load8(p)) : 0;
        if (zeros == 8 || !digit_run(p, zeros - n_int, &n_frac, &fp) || n_frac == 0) return false;
        p += n_frac;
        ip = n_int ? ip * POW10_U64[n_frac] + fp : fp; /* n_int + n_frac <= 19 */
        e10 = -n_frac;
    }
    if ((*p | 0x20) == 'e') { /* p < end: a run stopped short of its FAST_AHEAD bytes */
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        int e = 0, k = 0;
        for (; p < end && is_digit(*p); p++, k++) {
            if (k == 4) return false;
            e = e * 10 + (*p - '0');
        }
        if (k == 0) return false;
        e10 += eneg ? -e : e;
    }
    *w = ip;
    *q = e10;
    *stop = p;
    return true;
}

/* The float32 nearest to w * 10^q (w != 0), or false when the fast ways cannot tell.
 *
 * For |q| <= 22, in doubles: d = (double)w * 10^q, with (double)w, the power (exact for
 * q >= 0, rounded for q < 0) and the product each rounded once, so d is within 3 units
 * of its last place of the exact value (three relative errors of at most 2^-53 each, and
 * an ulp is at least 2^-53 of the value). Rounding d to float32 then gives the correctly
 * rounded float unless a halfway point between two floats lies between d and the exact
 * value: such a point is a double with 28 zero bits after its 25th significant bit, so d
 * would be within 3 ulps of that pattern, which is tested (with room to spare: +-8). The
 * range keeps every such value above the normal float32 minimum; one that rounds beyond
 * the maximum gives infinity and is left to the general path.
 *
 * Otherwise Eisel-Lemire, which decides all but a few hard cases. */
#define FAST_F32_SLACK 8

static const double POW10_PM22[45] = {1e-22, 1e-21, 1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14,
                                      1e-13, 1e-12, 1e-11, 1e-10, 1e-9,  1e-8,  1e-7,  1e-6,  1e-5,
                                      1e-4,  1e-3,  1e-2,  1e-1,  1e0,   1e1,   1e2,   1e3,   1e4,
                                      1e5,   1e6,   1e7,   1e8,   1e9,   1e10,  1e11,  1e12,  1e13,
                                      1e14,  1e15,  1e16,  1e17,  1e18,  1e19,  1e20,  1e21,  1e22};

HOT bool fast_f32(uint64_t w, int64_t q, uint32_t *bits)
{
    if (q >= -22 && q <= 22) {
        double d = (double)w * POW10_PM22[q + 22];
        uint64_t db;
        memcpy(&db, &d, sizeof(db));
        const uint64_t below = (UINT64_C(1) << 29) - 1; /* double bits under a float's ulp */
        const uint64_t half = UINT64_C(1) << 28;
        if ((db & below) - (half - FAST_F32_SLACK) > 2 * FAST_F32_SLACK) {
            float f = (float)d;
            uint32_t fb;
            memcpy(&fb, &f, sizeof(fb));
            if ((fb & 0x7f800000u) != 0x7f800000u) {
                *bits = fb;
                return true;
            }
        }
    }
    bool sure;
    bin_t b = el_round(&F32, q, w, &sure);
    if (!sure || b.inf) return false;
    *bits = (uint32_t)to_bits(&F32, b);
    return true;
}

HOT bool fast_f64(uint64_t w, int64_t q, uint64_t *bits)
{
    if (w <= (UINT64_C(1) << 53) && q >= -22 && q <= 22) {
        double d = q < 0 ? (double)w / POW10_F64[-q] : (double)w * POW10_F64[q];
        memcpy(bits, &d, sizeof(*bits));
        return true;
    }
    bool sure;
    bin_t b = el_round(&F64, q, w, &sure);
    if (!sure || b.inf) return false;
    *bits = to_bits(&F64, b);
    return true;
}

/* The general path, out of line so that the fast one keeps its registers. */
static __attribute__((noinline)) int parse_f64_slow(const char *s, size_t len, double *out,
                                                    size_t *used)
{
    uint64_t bits;
    size_t n;
    int rc = parse(&F64, s, len, &bits, &n);
    if (rc == MEM_ELIMIT) *used = n;
    if (rc != MEM_OK) return rc;
    memcpy(out, &bits, sizeof(*out));
    *used = n;
    return MEM_OK;
}

static __attribute__((noinline)) int parse_f32_slow(const char *s, size_t len, float *out,
                                                    size_t *used)
{
    uint64_t bits;
    size_t n;
    int rc = parse(&F32, s, len, &bits, &n);
    if (rc == MEM_ELIMIT) *used = n;
    if (rc != MEM_OK) return rc;
    uint32_t b32 = (uint32_t)bits;
    memcpy(out, &b32, sizeof(*out));
    *used = n;
    return MEM_OK;
}

int mem_num_parse_f64(const char *s, size_t len, double *out, size_t *used)
{
    bool neg;
    uint64_t w, fb;
    int64_t q;
    const char *stop;
    if (!fast_scan(s, s + len, &neg, &w, &q, &stop)) return parse_f64_slow(s, len, out, used);
    if (w == 0)
        fb = 0;
    else if (!fast_f64(w, q, &fb))
        return parse_f64_slow(s, len, out, used);
    fb |= (uint64_t)neg << 63;
    memcpy(out, &fb, sizeof(*out));
    *used = (size_t)(stop - s);
    return MEM_OK;
}

int mem_num_parse_f32(const char *s, size_t len, float *out, size_t *used)
{
    bool neg;
    uint64_t w;
    int64_t q;
    uint32_t fb;
    const char *stop;
    if (!fast_scan(s, s + len, &neg, &w, &q, &stop)) return parse_f32_slow(s, len, out, used);
    if (w == 0)
        fb = 0;
    else if (!fast_f32(w, q, &fb))
        return parse_f32_slow(s, len, out, used);
    fb |= (uint32_t)neg << 31;
    memcpy(out, &fb, sizeof(*out));
    *used = (size_t)(stop - s);
    return MEM_OK;
}

HOT bool json_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int mem_num_parse_f32_list(const char *s, size_t len, float *out, size_t max, size_t *count,
                           size_t *used, bool *long_integer)
{
    const char *p = s, *end = s + len;
    size_t n = 0;
    *long_integer = false;
    int rc = MEM_OK;
    for (;;) {
        if (n == max) {
            rc = MEM_ELIMIT;
            break;
        }
        bool neg;
        uint64_t w;
        int64_t q;
        uint32_t fb = 0;
        const char *stop;
        if (fast_scan(p, end, &neg, &w, &q, &stop) && (w == 0 || fast_f32(w, q, &fb))) {
            fb |= (uint32_t)neg << 31;
            memcpy(&out[n], &fb, sizeof(fb));
        } else {
            size_t u;
            rc = parse_f32_slow(p, (size_t)(end - p), &out[n], &u);
            if (rc != MEM_OK) break;
            stop = p + u;
        }
        if (stop - p >= 19 + (*p == '-')) { /* 19 digits or more: an integer? (or '.', 'e') */
            const char *d = p + (*p == '-');
            while (d < stop && is_digit(*d))
                d++;
            if (d == stop) *long_integer = true;
        }
        n++;
        p = stop;
        if (p < end && *p == ',') { /* "1,2" and "1, 2" first: what clients write */
            p++;
            if (p < end && *p == ' ') p++;
        } else {
            while (p < end && json_ws(*p))
                p++;
            if (p == end || *p != ',') break;
            p++;
        }
        while (p < end && json_ws(*p))
            p++;
    }
    *count = n;
    *used = (size_t)(p - s);
    return rc;
}

/* w * 10^q (w without a limit on its digits being exact) rounded to F. */
static bin_t dec_round(const fmt_t *F, uint64_t w, int64_t q)
{
    bool sure;
    bin_t b = el_round(F, q, w, &sure);
    if (sure) return b;
    char buf[24];
    int n = 0;
    for (uint64_t v = w; v; v /= 10)
        n++;
    for (int i = n; i-- > 0; w /= 10)
        buf[i] = (char)('0' + w % 10);
    digits_t d = {buf, NULL, (size_t)n, 0, q};
    return slow_round(F, &d, b);
}

/* ---- Schubfach ---- */

static int flog10pow2(int e) /* floor(log10(2^e)) */
{
    return (int)(((int64_t)e * INT64_C(661971961083)) >> 41);
}

static int flog10_three_quarters_pow2(int e) /* floor(log10(3/4 2^e)) */
{
    return (int)(((int64_t)e * INT64_C(661971961083) - INT64_C(274743187321)) >> 41);
}

static int flog2pow10(int e) /* floor(log2(10^e)) */
{
    return (int)(((int64_t)e * INT64_C(913124641741)) >> 38);
}

#define MASK63 ((UINT64_C(1) << 63) - 1)
#define MASK32 ((UINT64_C(1) << 32) - 1)

/* Round to odd of g * cp / 2^127, g = g1 2^63 + g0 (the paper's figure 11). */
static uint64_t rop_f64(uint64_t g1, uint64_t g0, uint64_t cp)
{
    uint64_t x1 = mulhi(g0, cp);
    u128 y = (u128)g1 * cp;
    uint64_t y0 = (uint64_t)y, y1 = (uint64_t)(y >> 64);
    uint64_t z = (y0 >> 1) + x1;
    uint64_t vbp = y1 + (z >> 63);
    return vbp | (((z & MASK63) + MASK63) >> 63);
}

/* Round to odd of g * cp / 2^95. */
static uint64_t rop_f32(uint64_t g, uint64_t cp)
{
    uint64_t x1 = mulhi(g, cp);
    uint64_t vbp = x1 >> 31;
    return vbp | (((x1 & MASK32) + MASK32) >> 32);
}

/* The decimal f * 10^e for c * 2^q (c >= 1). is_f64 picks the precision; dk is -1 when c
 * was scaled by 10 (tiny subnormals). */
static void to_decimal(bool is_f64, int q, uint64_t c, int dk, uint64_t *f, int *e)
{
    uint64_t c_min = is_f64 ? UINT64_C(1) << 52 : UINT64_C(1) << 23;
    int q_min = is_f64 ? -1074 : -149;
    uint64_t out = c & 1;
    uint64_t cb = c << 2, cbr = cb + 2, cbl;
    int k;
    if (c != c_min || q == q_min) { /* regular spacing */
        cbl = cb - 2;
        k = flog10pow2(q);
    } else { /* at a power of two the gap below is half as wide */
        cbl = cb - 1;
        k = flog10_three_quarters_pow2(q);
    }
    const uint64_t *g = mem_num__g[k - MEM_NUM__G_KMIN];
    uint64_t vb, vbl, vbr;
    if (is_f64) {
        int h = q + flog2pow10(-k) + 2;
        vb = rop_f64(g[0], g[1], cb << h);
        vbl = rop_f64(g[0], g[1], cbl << h);
        vbr = rop_f64(g[0], g[1], cbr << h);
    } else {
        int h = q + flog2pow10(-k) + 33;
        uint64_t g32 = g[0] + 1;
        vb = rop_f32(g32, cb << h);
        vbl = rop_f32(g32, cbl << h);
        vbr = rop_f32(g32, cbr << h);
    }
    uint64_t s = vb >> 2;
    if (s >= 100) { /* one digit fewer: is exactly one of 10 floor(s / 10), + 10 inside? */
        uint64_t sp10 = 10 * (s / 10), tp10 = sp10 + 10;
        bool upin = vbl + out <= sp10 << 2;
        bool wpin = (tp10 << 2) + out <= vbr;
        if (upin != wpin) {
            *f = upin ? sp10 : tp10;
            *e = k;
            return;
        }
    }
    uint64_t t = s + 1;
    bool uin = vbl + out <= s << 2;
    bool win = (t << 2) + out <= vbr;
    if (uin != win) {
        *f = uin ? s : t;
        *e = k + dk;
        return;
    }
    /* both inside: the closer to v, ties to even */
    uint64_t mid = (s + t) << 1;
    *f = vb < mid || (vb == mid && (s & 1) == 0) ? s : t;
    *e = k + dk;
}

/* Decimal digits of f >= 1: floor(log10(2) * bit length) (1233 / 4096 approximates log10(2)
 * closely enough for 64 bits) is the count or one less. */
static int count_digits(uint64_t f)
{
    int t = ((64 - __builtin_clzll(f | 1)) * 1233) >> 12;
    return t + (f >= POW10_U64[t]);
}

static bool same_value(const fmt_t *F, uint64_t w, int64_t q, uint64_t bits)
{
    return to_bits(F, dec_round(F, w, q)) == bits;
}

/* bits (positive, finite, nonzero) -> shortest f * 10^e. */
static void shortest(const fmt_t *F, uint64_t bits, uint64_t *fo, int *eo)
{
    bool is_f64 = F == &F64;
    int p = F->mant_bits + 1, q_min = e2_min(F);
    uint64_t t = bits & ((UINT64_C(1) << F->mant_bits) - 1);
    int bq = (int)(bits >> F->mant_bits);
    uint64_t f;
    int e;
    if (bq != 0) {
        int mq = -q_min + 1 - bq;
        uint64_t c = (UINT64_C(1) << F->mant_bits) | t;
        if (mq > 0 && mq < p && ((c >> mq) << mq) == c) { /* an integer below 2^p */
            f = c >> mq;
            e = 0;
        } else {
            to_decimal(is_f64, -mq, c, 0, &f, &e);
        }
    } else if (t < (is_f64 ? 3u : 8u)) {
        to_decimal(is_f64, q_min, 10 * t, -1, &f, &e);
    } else {
        to_decimal(is_f64, q_min, t, 0, &f, &e);
    }
    while (f % 10 == 0) {
        f /= 10;
        e++;
    }
    if (bq == 0 && f >= 10 && f < 100) { /* tiny subnormal: is there a one-digit answer? */
        uint64_t lo = f / 10, hi = lo + 1;
        bool lo_ok = same_value(F, lo, e + 1, bits), hi_ok = same_value(F, hi, e + 1, bits);
        if (lo_ok && hi_ok) { /* keep the closer: compare 2v with (lo + hi) 10^(e+1) */
            big_t D;
            big_set(&D, lo + hi);
            uint64_t m = bq ? (UINT64_C(1) << F->mant_bits) | t : t;
            int e2 = bq ? bq + F->min_exponent - F->mant_bits : q_min;
            int c = cmp_dec_bin(&D, e + 1, false, 2 * m, e2);
            lo_ok = c > 0 || (c == 0 && (lo & 1) == 0);
            hi_ok = !lo_ok;
        }
        if (lo_ok || hi_ok) {
            f = lo_ok ? lo : hi;
            e++;
            while (f % 10 == 0) {
                f /= 10;
                e++;
            }
        }
    }
    *fo = f;
    *eo = e;
}

void mem_num_shortest_f64(double x, uint64_t *digits, int *exp10)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    shortest(&F64, bits & MASK63, digits, exp10);
}

void mem_num_shortest_f32(float x, uint32_t *digits, int *exp10)
{
    uint32_t b32;
    memcpy(&b32, &x, sizeof(b32));
    uint64_t f;
    shortest(&F32, b32 & 0x7fffffffu, &f, exp10);
    *digits = (uint32_t)f;
}

/* ---- printing ---- */

static const char DIGIT_PAIRS[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* The n digits of f at out[0..n), two at a time from the right (32-bit divisions once f
 * fits: a float32's digits always do). */
static void put_digits(uint64_t f, int n, char *out)
{
    char *o = out + n;
    while (f > UINT32_MAX) {
        uint64_t q = f / 100;
        o -= 2;
        memcpy(o, DIGIT_PAIRS + 2 * (f - q * 100), 2);
        f = q;
    }
    uint32_t g = (uint32_t)f;
    while (g >= 100) {
        uint32_t q = g / 100;
        o -= 2;
        memcpy(o, DIGIT_PAIRS + 2 * (g - q * 100), 2);
        g = q;
    }
    if (g >= 10) {
        o -= 2;
        memcpy(o, DIGIT_PAIRS + 2 * g, 2);
    } else {
        *--o = (char)('0' + g);
    }
}

static char *put_zeros(char *o, int n)
{
    for (int i = 0; i < n; i++)
        *o++ = '0';
    return o;
}

/* f * 10^e in the JSON real style of num.h, the digits written once where they go (a '.'
 * is made room for by moving the few digits after it). */
static size_t fmt_decimal(bool neg, uint64_t f, int e, char *out)
{
    int n = count_digits(f);
    int x = n - 1 + e; /* exponent of the leading digit */
    char *o = out;
    if (neg) *o++ = '-';
    if (e >= 0 && x < 15) { /* integral: plain, with ".0" */
        put_digits(f, n, o);
        o = put_zeros(o + n, e);
        *o++ = '.';
        *o++ = '0';
    } else if (x < -4 || x >= n) { /* %g's exponent form */
        put_digits(f, n, o + 1);
        o[0] = o[1];
        if (n > 1) {
            o[1] = '.';
            o += n + 1;
        } else {
            o += 1;
        }
        *o++ = 'e';
        *o++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100) *o++ = (char)('0' + ax / 100);
        memcpy(o, DIGIT_PAIRS + 2 * (ax % 100), 2);
        o += 2;
    } else if (x >= 0) { /* ddd.ddd; an integer of 16 or 17 digits gets ".0" */
        put_digits(f, n, o);
        if (x + 1 < n) {
            memmove(o + x + 2, o + x + 1, (size_t)(n - x - 1));
            o[x + 1] = '.';
            o += n + 1;
        } else {
            o += n;
            *o++ = '.';
            *o++ = '0';
        }
    } else { /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        o = put_zeros(o, -x - 1);
        put_digits(f, n, o);
        o += n;
    }
    *o = '\0';
    return (size_t)(o - out);
}

static size_t fmt_special(uint64_t mag_bits, bool neg, char *out)
{
    if (mag_bits == 0) {
        memcpy(out, neg ? "-0.0" : "0.0", neg ? 5 : 4);
        return neg ? 4 : 3;
    }
    memcpy(out, "null", 5);
    return 4;
}

size_t mem_num_fmt_f64(double x, char out[MEM_NUM_FMT_MAX])
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    bool neg = bits >> 63;
    uint64_t mag = bits & MASK63;
    if (mag == 0 || (mag >> 52) == 0x7FF) return fmt_special(mag == 0 ? 0 : 1, neg, out);
    uint64_t f;
    int e;
    shortest(&F64, mag, &f, &e);
    return fmt_decimal(neg, f, e, out);
}

size_t mem_num_fmt_f32(float x, char out[MEM_NUM_FMT_MAX])
{
    uint32_t b32;
    memcpy(&b32, &x, sizeof(b32));
    bool neg = b32 >> 31;
    uint32_t mag = b32 & 0x7fffffffu;
    if (mag == 0 || (mag >> 23) == 0xFF) return fmt_special(mag == 0 ? 0 : 1, neg, out);
    uint64_t f;
    int e;
    shortest(&F32, mag, &f, &e);
    return fmt_decimal(neg, f, e, out);
}

double mem_num_f32_to_f64_shortest(float x)
{
    uint32_t b32;
    memcpy(&b32, &x, sizeof(b32));
    uint32_t mag = b32 & 0x7fffffffu;
    if (mag == 0 || (mag >> 23) == 0xFF) return (double)x;
    uint64_t f;
    int e;
    shortest(&F32, mag, &f, &e);
    uint64_t bits = to_bits(&F64, dec_round(&F64, f, e));
    if (b32 >> 31) bits |= UINT64_C(1) << 63;
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}
