/* jsoncut.c - take one top-level member out of a JSON object body, byte-exact otherwise
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Cluster mode reads "min_seq" from a request body before api/ decodes it. Parsing
 * and re-serialising the body would change it (a duplicate key collapses into one, numbers
 * are re-printed) before decode.c could judge it, so the member is cut out of the text
 * instead: every other byte reaches api/ unchanged. A scanner that only finds member
 * boundaries suffices; whatever it cannot make sense of is passed through untouched for
 * api/ to reject. Pure: no allocation, no I/O.
 */
#include "cluster/jsoncut.h"

#include <string.h>

static size_t skip_ws(const char *s, size_t len, size_t i)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* s[i] == '"': the index after the closing quote, or 0 when unterminated. */
static size_t skip_string(const char *s, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        if (s[i] == '\\') {
            i++;
            continue;
        }
        if (s[i] == '"') return i + 1;
    }
    return 0;
}

/* One JSON value from s[i]: the index after it, or 0 when malformed (shallow checks only:
 * api/ validates everything; this only has to find where the value ends). */
static size_t skip_value(const char *s, size_t len, size_t i)
{
    if (i >= len) return 0;
    if (s[i] == '"') return skip_string(s, len, i);
    if (s[i] == '{' || s[i] == '[') {
        size_t depth = 0;
        for (; i < len; i++) {
            char c = s[i];
            if (c == '"') {
                size_t e = skip_string(s, len, i);
                if (!e) return 0;
                i = e - 1;
            } else if (c == '{' || c == '[') {
                if (++depth > 10000) return 0;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) return i + 1;
            }
        }
        return 0;
    }
    size_t start = i;
    while (i < len && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' &&
           s[i] != '\n' && s[i] != '\r')
        i++;
    return i > start ? i : 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Does the string token s[a..b) (quotes included) decode to key? Escapes are decoded for
 * ASCII code points (\u005f is "_"); any other escape makes the answer no. */
static bool key_is(const char *s, size_t a, size_t b, const char *key)
{
    size_t k = 0, klen = strlen(key);
    for (size_t i = a + 1; i + 1 < b; i++) {
        char c = s[i];
        if (c == '\\') {
            if (i + 1 >= b - 1) return false;
            char e = s[++i];
            if (e == 'u') {
                if (i + 4 >= b - 1) return false;
                int v = 0;
                for (int d = 1; d <= 4; d++) {
                    int h = hexval(s[i + (size_t)d]);
                    if (h < 0) return false;
                    v = v * 16 + h;
                }
                if (v == 0 || v > 0x7f) return false;
                c = (char)v;
                i += 4;
            } else if (e == '"' || e == '\\' || e == '/') {
                c = e;
            } else {
                return false; /* \n, \t...: not in any key we look for */
            }
        }
        if (k >= klen || key[k] != c) return false;
        k++;
    }
    return k == klen;
}

int mem_cluster_json_cut(const char *s, size_t len, const char *key, char *out, size_t *out_len,
                         size_t *val_off, size_t *val_len)
{
    size_t i = skip_ws(s, len, 0);
    if (i >= len || s[i] != '{') return MEM_CLUSTER_JSON_ABSENT;
    i = skip_ws(s, len, i + 1);
    if (i < len && s[i] == '}') return MEM_CLUSTER_JSON_ABSENT;
    int found = 0;
    size_t cut_a = 0, cut_b = 0, v_a = 0, v_b = 0;
    size_t prev_end = 0; /* after the previous member's value, 0 for the first member */
    for (;;) {
        if (i >= len || s[i] != '"') return MEM_CLUSTER_JSON_ABSENT;
        size_t ka = i, kb = skip_string(s, len, i);
        if (!kb) return MEM_CLUSTER_JSON_ABSENT;
        i = skip_ws(s, len, kb);
        if (i >= len || s[i] != ':') return MEM_CLUSTER_JSON_ABSENT;
        size_t va = skip_ws(s, len, i + 1);
        size_t vb = skip_value(s, len, va);
        if (!vb) return MEM_CLUSTER_JSON_ABSENT;
        i = skip_ws(s, len, vb);
        if (i >= len) return MEM_CLUSTER_JSON_ABSENT;
        bool last = s[i] == '}';
        if (!last && s[i] != ',') return MEM_CLUSTER_JSON_ABSENT;
        if (key_is(s, ka, kb, key)) {
            if (found) return MEM_CLUSTER_JSON_DUPLICATE;
            found = 1;
            v_a = va;
            v_b = vb;
            if (!last) { /* "k": v, -> cut through the comma and the blanks after it */
                cut_a = ka;
                cut_b = skip_ws(s, len, i + 1);
            } else if (prev_end) { /* , "k": v} -> cut from the previous member's end */
                cut_a = prev_end;
                cut_b = vb;
            } else { /* the only member */
                cut_a = ka;
                cut_b = vb;
            }
        }
        prev_end = vb;
        if (last) break;
        i = skip_ws(s, len, i + 1);
    }
    if (!found) return MEM_CLUSTER_JSON_ABSENT;
    memcpy(out, s, cut_a);
    memcpy(out + cut_a, s + cut_b, len - cut_b);
    *out_len = cut_a + (len - cut_b);
    *val_off = v_a;
    *val_len = v_b - v_a;
    return MEM_CLUSTER_JSON_FOUND;
}

int mem_cluster_json_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 19) return -1;
    if (len > 1 && s[0] == '0') return -1; /* JSON has no leading zeros */
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}
