/* arena.h - a per-request arena: bump allocation in growing blocks, freed in one go
 * SPDX-License-Identifier: MIT
 *
 * Everything tied to one request (decoded segments, vectors, strings, the pending write)
 * comes from its arena and goes with it when the request is over: no per-object free,
 * no leak on an early error return [h2o h2o_mem_pool_t]. An arena is used by one thread at
 * a time (a request's steps run one after another, on whichever thread). Generic: this
 * header includes only the C library.
 */
#ifndef MEM_CORE_ARENA_H
#define MEM_CORE_ARENA_H

#include <stddef.h>

typedef struct mem_arena_block mem_arena_block_t;

typedef struct mem_arena {
    mem_arena_block_t *head; /* the block allocations come from; older ones follow */
    size_t used;             /* bytes handed out from head */
    size_t total;            /* bytes of every block, for limits and tests */
} mem_arena_t;

/* A zeroed arena is an empty one; _init is for clarity. */
void mem_arena_init(mem_arena_t *a);
/* size bytes, zeroed, aligned for any type; NULL on ENOMEM or overflow. size 0 gives a
 * unique non-NULL pointer. */
void *mem_arena_alloc(mem_arena_t *a, size_t size);
/* A NUL-terminated copy of s[0..len) (s may be NULL when len is 0). */
char *mem_arena_strndup(mem_arena_t *a, const char *s, size_t len);
/* Free every block; the arena is empty and usable again. NULL-safe. */
void mem_arena_free(mem_arena_t *a);

#endif
