/* console.c - GET /console: the web console's static files, served from the binary
 * SPDX-License-Identifier: MIT
 *
 * The console is plain ES modules that speak only the public REST API (from the browser,
 * with the user's key), so serving it needs no store and no key: /console and /console/
 * are index.html, /console/NAME one of the embedded files, anything else 404. The policy
 * headers keep the page to its own origin: scripts, styles and requests from 'self' only.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/assets.h"

static const char *const console_headers[] = {
    "Cache-Control",
    "no-cache",
    "X-Content-Type-Options",
    "nosniff",
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "Referrer-Policy",
    "no-referrer",
    NULL,
};

const mem_api_asset_t *mem_api_asset_find(const char *name, size_t len)
{
    for (size_t i = 0; i < mem_api_n_assets; i++)
        if (strlen(mem_api_assets[i].name) == len && memcmp(mem_api_assets[i].name, name, len) == 0)
            return &mem_api_assets[i];
    return NULL;
}

void mem_api__console(const char *name, mem_api_resp_t *resp)
{
    if (!*name) name = "index.html";
    const mem_api_asset_t *a = mem_api_asset_find(name, strlen(name));
    if (!a) {
        mem_api__fail(resp, MEM_ENOTFOUND, NULL, "no such console file: %.64s", name);
        return;
    }
    char *body = malloc(a->len ? a->len : 1);
    if (!body) {
        mem_api__fail(resp, MEM_ENOMEM, NULL, "out of memory");
        return;
    }
    memcpy(body, a->data, a->len);
    free(resp->body);
    resp->body = body;
    resp->body_len = a->len;
    resp->status = 200;
    resp->content_type = a->content_type;
    resp->headers = console_headers;
}
