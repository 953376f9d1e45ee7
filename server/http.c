/* http.c - checks of the request head that libmicrohttpd 0.9.75 leaves to its users
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. MHD's strings all point into its read buffer, laid out exactly as the head was
 * received, with each separator it consumed overwritten by NUL: the space after the
 * method, the space before the version, every CR and LF of a line end, the colon of a
 * header. So walking the buffer from the method to the end of the head, string by string,
 * must meet exactly those NULs (and the spaces MHD skips after a colon) and nothing else;
 * any other byte in between is a byte MHD hid from us (a NUL inside a string, extra
 * spaces, a folded header line moved elsewhere) and the request is refused. The query
 * part of the target is rewritten in place by MHD's argument parser, so the target is
 * only measured, never read, here: the URI callback copied it before that.
 */
#include "server/http.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Skip the NULs of a line end followed by another line: one (LF) or two (CRLF). */
static bool line_end(const char **pos, const char *end)
{
    const char *p = *pos;
    size_t n = 0;
    while (p < end && *p == '\0' && n < 2)
        p++, n++;
    *pos = p;
    return n >= 1;
}

static int bad(mem_err_t *err, const char *what)
{
    return mem_err_set(err, MEM_EBADREQ, "malformed request: %s", what);
}

static bool names_equal(const mem_api_header_t *h, const char *name)
{
    size_t n = strlen(name);
    return h->name_len == n && strncasecmp(h->name, name, n) == 0;
}

const char *mem_srv_http_header(const mem_api_header_t *hs, size_t n, const char *name, size_t *len)
{
    for (size_t i = 0; i < n; i++)
        if (names_equal(&hs[i], name)) {
            if (len) *len = hs[i].value_len;
            return hs[i].value;
        }
    return NULL;
}

/* value without leading/trailing spaces and tabs equals want, case-insensitively */
static bool value_is(const mem_api_header_t *h, const char *want)
{
    const char *v = h->value;
    size_t n = h->value_len;
    while (n && (*v == ' ' || *v == '\t'))
        v++, n--;
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    return n == strlen(want) && strncasecmp(v, want, n) == 0;
}

static int check_layout(const mem_srv_head_t *h, mem_err_t *err)
{
    const char *p = h->start, *end = h->start + h->size;
    if (!h->method || h->method != p || !h->target || !h->target_at || !h->version)
        return bad(err, "request line");
    size_t ml = strlen(h->method);
    if (ml == 0 || (size_t)(end - p) < ml + 1) return bad(err, "request line");
    for (size_t i = 0; i < ml; i++)
        if (!is_tchar((unsigned char)h->method[i])) return bad(err, "method");
    p += ml;
    if (*p++ != '\0' || h->target_at != p)
        return bad(err, "request line (one space after the method)");
    for (size_t i = 0; i < h->target_len; i++) {
        unsigned char c = (unsigned char)h->target[i];
        if (c <= 0x20 || c >= 0x7F) return bad(err, "request target (byte outside visible ASCII)");
    }
    if (h->target_len == 0) return bad(err, "empty request target");
    p += h->target_len;
    /* a NUL inside the target ended the string before the version's separator */
    if (p >= end || *p++ != '\0' || h->version != p)
        return bad(err, "request target (NUL byte or space)");
    p += strlen(h->version);
    if (p > end) return bad(err, "request line end");
    if (h->n_headers > 0 && !line_end(&p, end)) return bad(err, "request line end");
    for (size_t i = 0; i < h->n_headers; i++) {
        const mem_api_header_t *hd = &h->headers[i];
        if (hd->name != p || hd->name_len == 0 || (size_t)(end - p) < hd->name_len + 1)
            return bad(err, "header line (folded, or NUL byte)");
        for (size_t j = 0; j < hd->name_len; j++)
            if (!is_tchar((unsigned char)hd->name[j])) return bad(err, "header name");
        p += hd->name_len;
        if (*p++ != '\0') return bad(err, "header name");
        while (p < hd->value && (*p == ' ' || *p == '\t'))
            p++;
        if (p != hd->value || (size_t)(end - p) < hd->value_len)
            return bad(err, "header value position");
        for (size_t j = 0; j < hd->value_len; j++) {
            unsigned char c = (unsigned char)hd->value[j];
            if ((c < 0x20 && c != '\t') || c == 0x7F)
                return bad(err, "header value (control byte)");
        }
        p += hd->value_len;
        if (i + 1 < h->n_headers && !line_end(&p, end)) return bad(err, "header value (NUL byte)");
    }
    /* the last line's end and the empty line: two to four NULs, and nothing else */
    size_t nuls = (size_t)(end - p);
    if (nuls < 2 || nuls > 4) return bad(err, "header section");
    for (size_t i = 0; i < nuls; i++)
        if (p[i] != '\0') return bad(err, "header section (NUL byte)");
    return MEM_OK;
}

int mem_srv_http_check(const mem_srv_head_t *h, mem_err_t *err)
{
    int rc = check_layout(h, err);
    if (rc != MEM_OK) return rc;
    const mem_api_header_t *cl = NULL, *te = NULL;
    size_t n_host = 0, n_te = 0;
    for (size_t i = 0; i < h->n_headers; i++) {
        const mem_api_header_t *hd = &h->headers[i];
        if (names_equal(hd, "Host")) {
            n_host++;
        } else if (names_equal(hd, "Content-Length")) {
            if (cl && (cl->value_len != hd->value_len ||
                       memcmp(cl->value, hd->value, hd->value_len) != 0))
                return bad(err, "conflicting Content-Length headers");
            cl = hd;
        } else if (names_equal(hd, "Transfer-Encoding")) {
            te = hd;
            n_te++;
        } else if (names_equal(hd, "Expect")) {
            if (!value_is(hd, "100-continue"))
                return mem_err_set(err, MEM_EEXPECT,
                                   "expectation not supported (only Expect: 100-continue)");
        }
    }
    if (n_host > 1) return bad(err, "more than one Host header");
    if (te && cl) return bad(err, "both Transfer-Encoding and Content-Length");
    /* MHD skips the spaces before a value but keeps those after it, and decodes a chunked
     * body only when the value is exactly "chunked": "chunked " it would read until the
     * client closes, so that is refused here like any other coding */
    if (te && (n_te > 1 || te->value_len != 7 || strncasecmp(te->value, "chunked", 7) != 0))
        return mem_err_set(err, MEM_ENOTIMPL,
                           "transfer coding not supported (send Content-Length or "
                           "Transfer-Encoding: chunked)");
    return MEM_OK;
}
