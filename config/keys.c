/* keys.c - the scoped keys file: `KEY ROLE NAMESPACE_GLOB` lines
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. The file is read whole and parsed into one immutable table (one allocation:
 * the grants, then their strings), so a reload on SIGHUP builds a new table and swaps it
 * in, and a malformed file never replaces a good one. A key may appear on several lines
 * (one grant per line); what a request may do is decided in api/ from the grants of the
 * key it presents.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

#define KEYS_FILE_MAX (1024u * 1024u) /* bytes */

static int line_err(mem_err_t *err, const char *path, size_t line, const char *what)
{
    return mem_err_field(err, MEM_EINVAL, "keys-file", "invalid keys file %s, line %zu: %s", path,
                         line, what);
}

static bool glob_ok(const char *g, size_t n)
{
    if (n == 0 || n > 256) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)g[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-' || c == '*' || c == '?';
        if (!ok) return false;
    }
    return true;
}

static int parse_role(const char *s, size_t n, mem_cfg_role_t *role)
{
    if (n == 4 && memcmp(s, "read", 4) == 0)
        *role = MEM_CFG_ROLE_READ;
    else if (n == 5 && memcmp(s, "write", 5) == 0)
        *role = MEM_CFG_ROLE_WRITE;
    else if (n == 5 && memcmp(s, "admin", 5) == 0)
        *role = MEM_CFG_ROLE_ADMIN;
    else
        return -1;
    return 0;
}

/* Split s[0..n) into at most 4 whitespace-separated words. */
static size_t words(const char *s, size_t n, const char *w[4], size_t wl[4])
{
    size_t k = 0, i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i == n) break;
        size_t b = i;
        while (i < n && s[i] != ' ' && s[i] != '\t')
            i++;
        if (k < 4) {
            w[k] = s + b;
            wl[k] = i - b;
        }
        k++;
    }
    return k;
}

int mem_cfg_keys_parse(const char *text, size_t len, const char *path, mem_cfg_keys_t **out,
                       mem_err_t *err)
{
    /* pass 1: count grants and string bytes, and check every line */
    size_t n_grants = 0, bytes = 0, line = 0;
    for (size_t pos = 0; pos < len;) {
        const char *s = text + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl ? 1 : 0);
        line++;
        if (n && s[n - 1] == '\r') n--;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)s[i] < 0x20 && s[i] != '\t')
                return line_err(err, path, line, "control character");
        const char *w[4];
        size_t wl[4];
        size_t k = words(s, n, w, wl);
        if (k == 0 || w[0][0] == '#') continue;
        if (k != 3) return line_err(err, path, line, "expected KEY ROLE NAMESPACE_GLOB");
        mem_cfg_role_t role;
        if (wl[0] >= MEM_CFG_KEY_MAX) return line_err(err, path, line, "key longer than 511 bytes");
        for (size_t i = 0; i < wl[0]; i++)
            if ((unsigned char)w[0][i] >= 0x7f)
                return line_err(err, path, line, "key must be printable ASCII");
        if (parse_role(w[1], wl[1], &role) != 0)
            return line_err(err, path, line, "role must be read, write or admin");
        if (!glob_ok(w[2], wl[2]))
            return line_err(err, path, line,
                            "namespace glob may only hold A-Z a-z 0-9 _ . - * ? (1..256 bytes)");
        n_grants++;
        bytes += wl[0] + 1 + wl[2] + 1;
    }
    mem_cfg_keys_t *k = calloc(1, sizeof(*k) + n_grants * sizeof(mem_cfg_grant_t) + bytes);
    if (!k) return mem_err_set(err, MEM_ENOMEM, "out of memory reading the keys file");
    k->grants = (mem_cfg_grant_t *)(k + 1);
    char *strs = (char *)(k->grants + n_grants);
    /* pass 2: fill (the lines are known to be valid) */
    for (size_t pos = 0; pos < len;) {
        const char *s = text + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n && s[n - 1] == '\r') n--;
        const char *w[4];
        size_t wl[4];
        if (words(s, n, w, wl) != 3 || w[0][0] == '#') continue;
        mem_cfg_grant_t *g = &k->grants[k->n++];
        memcpy(strs, w[0], wl[0]);
        strs[wl[0]] = '\0';
        g->key = strs;
        g->key_len = wl[0];
        strs += wl[0] + 1;
        parse_role(w[1], wl[1], &g->role);
        memcpy(strs, w[2], wl[2]);
        strs[wl[2]] = '\0';
        g->glob = strs;
        strs += wl[2] + 1;
    }
    *out = k;
    return MEM_OK;
}

int mem_cfg_keys_load(const char *path, mem_cfg_keys_t **out, mem_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return mem_err_field(err, MEM_EINVAL, "keys-file", "invalid keys file %s: %s", path,
                             strerror(errno));
    char *buf = malloc(KEYS_FILE_MAX + 1);
    if (!buf) {
        fclose(f);
        return mem_err_set(err, MEM_ENOMEM, "out of memory reading the keys file");
    }
    size_t len = fread(buf, 1, KEYS_FILE_MAX + 1, f);
    int read_err = ferror(f);
    fclose(f);
    int rc;
    if (read_err)
        rc = mem_err_field(err, MEM_EINVAL, "keys-file", "invalid keys file %s: cannot be read",
                           path);
    else if (len > KEYS_FILE_MAX)
        rc = mem_err_field(err, MEM_EINVAL, "keys-file", "invalid keys file %s: over %u bytes",
                           path, KEYS_FILE_MAX);
    else
        rc = mem_cfg_keys_parse(buf, len, path, out, err);
    free(buf);
    return rc;
}

void mem_cfg_keys_free(mem_cfg_keys_t *keys)
{
    free(keys);
}
