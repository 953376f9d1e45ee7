/* assets.h - the static files compiled into the binary (the web console at /console)
 * SPDX-License-Identifier: MIT
 *
 * The table is generated at build time by scripts/embed-assets.c from api/console/ (see
 * mk/console.mk); the bytes are read-only for the life of the process.
 */
#ifndef MEM_API_ASSETS_H
#define MEM_API_ASSETS_H

#include <stddef.h>

typedef struct mem_api_asset {
    const char *name;         /* base name: "index.html", "app.js" */
    const char *content_type; /* from the extension */
    const unsigned char *data;
    size_t len; /* bytes */
} mem_api_asset_t;

extern const mem_api_asset_t mem_api_assets[];
extern const size_t mem_api_n_assets;

/* The asset called name (len bytes, not NUL-terminated), or NULL. */
const mem_api_asset_t *mem_api_asset_find(const char *name, size_t len);

#endif
