/* http.h - the request head as libmicrohttpd parsed it, and the checks MHD leaves to us
 * SPDX-License-Identifier: MIT
 *
 * libmicrohttpd 0.9.75 parses the request head in place: it overwrites separators with NUL
 * bytes and hands out C strings that point into its read buffer. So a NUL byte a client
 * sends inside the request line or a header value silently cuts that string short
 * ("DELETE /v1/namespaces/x\0/segments/y" reaches the application as a DELETE of namespace
 * x), it takes the first of two conflicting Content-Length headers and reads the rest as
 * the next request, it treats any Transfer-Encoding but "chunked" as a body of unknown
 * length that never ends, and it ignores an Expect it does not know. mem_srv_http_check
 * catches all of these from the strings' positions, before anything else sees the request.
 */
#ifndef MEM_SERVER_HTTP_H
#define MEM_SERVER_HTTP_H

#include <stddef.h>

#include "api/api.h"
#include "core/err.h"

typedef struct mem_srv_head {
    const char *start;     /* first byte of the head in MHD's buffer (the method) */
    size_t size;           /* bytes of the head, request line to empty line included */
    const char *method;    /* == start */
    const char *target;    /* copy of the request target (path and query) as received */
    size_t target_len;     /* its length when the URI callback ran */
    const char *target_at; /* where MHD's buffer holds it (MHD rewrites the query there) */
    const char *version;
    const mem_api_header_t *headers; /* MHD's header strings, in arrival order */
    size_t n_headers;
} mem_srv_head_t;

/* Check that the head holds no byte MHD's strings hide (NUL anywhere, whitespace MHD
 * skipped), that every header name is a token and every value free of control bytes, and
 * the framing rules: at most one Host, Content-Length values that agree, Transfer-Encoding
 * "chunked" alone and never with Content-Length, Expect only "100-continue".
 * MEM_OK, or err filled with MEM_EBADREQ (400), MEM_ENOTIMPL (501, an unknown transfer
 * coding) or MEM_EEXPECT (417). Pure: no MHD call, no allocation. */
int mem_srv_http_check(const mem_srv_head_t *h, mem_err_t *err);

/* Case-insensitive header lookup in a list (NULL when absent; *len gets the length). */
const char *mem_srv_http_header(const mem_api_header_t *hs, size_t n, const char *name,
                                size_t *len);

#endif
