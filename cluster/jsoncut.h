/* jsoncut.h - cut one top-level member out of a JSON object text (pure; see jsoncut.c)
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_CLUSTER_JSONCUT_H
#define MEM_CLUSTER_JSONCUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEM_CLUSTER_JSON_ABSENT    0  /* no such member, or not an object this scanner can read */
#define MEM_CLUSTER_JSON_FOUND     1  /* cut: out holds the rest, the value is s[val_off..+len) */
#define MEM_CLUSTER_JSON_DUPLICATE -1 /* the member appears twice */

/* Look for the top-level member key (escapes decoded, ASCII) in the JSON object s[len]. When
 * found once, write s without that member (and one adjoining comma) to out, which must hold
 * len bytes; every other byte is kept as it was. */
int mem_cluster_json_cut(const char *s, size_t len, const char *key, char *out, size_t *out_len,
                         size_t *val_off, size_t *val_len);
/* A JSON number token that is a non-negative integer below 10^19: 0 and *out, else -1. */
int mem_cluster_json_u64(const char *s, size_t len, uint64_t *out);

#endif
