/* json_int.h - cluster/'s JSON texts with out of memory told apart (cluster/json.c)
 * SPDX-License-Identifier: MIT
 *
 * Shared by the files of cluster/ (and its unit test); needs no NATS. Any thread.
 */
#ifndef MEM_CLUSTER_JSON_INT_H
#define MEM_CLUSTER_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/err.h"

/* Chain the cluster's jansson allocator to the one installed now (done before main; a
 * test that installs its own allocator calls it again after). Idempotent. */
void mem_cluster__json_hook(void);
/* The JSON text buf: MEM_OK (*out a new reference), MEM_EINVAL (not JSON) or MEM_ENOMEM
 * (an allocation failed while it was read: nothing is known about the text, try again). */
int mem_cluster__json_parse(const void *buf, size_t len, json_t **out);
/* Compact text of j (malloc'd), or NULL when j is NULL or out of memory: never a text with
 * a part missing. */
char *mem_cluster__json_dump(const json_t *j);
/* A JSON string of the message s (NULL: ""), every byte that does not start a valid UTF-8
 * sequence as '?' and cut at 500 bytes: an error text cut mid-character by a fixed buffer
 * still goes out (json_string refuses it). NULL only when out of memory. */
json_t *mem_cluster__json_text(const char *s);
/* A new array of the n strings v, or NULL (out of memory, or a string that is not UTF-8):
 * never one with an element missing. */
json_t *mem_cluster__json_strings(const char *const *v, size_t n);
/* The placement map's entry text (placemap.c's DESIGN), every node in it, or NULL when out
 * of memory. join, drop: NULL or "" for none. */
char *mem_cluster__entry_json(const char *ns, size_t stream, const char *const *nodes, size_t n,
                              const char *join, const char *drop, bool pinned, uint64_t epoch);

#endif
