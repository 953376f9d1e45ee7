/* arena.c - bump allocation in blocks that double from 4 KiB to 64 KiB
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. Small requests fit in their first block; a large one (a 1000-segment batch of
 * 1536-float vectors) takes a few 64 KiB blocks, and any allocation over a quarter of a
 * block gets a block of its own, so a big vector never wastes the rest of a block. Every
 * allocation is zeroed as the API promises: a block of its own is calloc'ed (a large one
 * comes from the kernel already zero), a shared block is not, and each allocation from it
 * is zeroed when handed out, so the unused rest of a block (most of it, for a small
 * request) is never written.
 */
#include "core/arena.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_BLOCK 4096u
#define MAX_BLOCK   65536u
#define ALIGN       alignof(max_align_t)

struct mem_arena_block {
    mem_arena_block_t *next;
    size_t cap; /* payload bytes */
    max_align_t _payload[];
};

void mem_arena_init(mem_arena_t *a)
{
    a->head = NULL;
    a->used = 0;
    a->total = 0;
}

static mem_arena_block_t *new_block(mem_arena_t *a, size_t cap, bool zeroed)
{
    if (cap > SIZE_MAX - sizeof(mem_arena_block_t)) return NULL;
    mem_arena_block_t *b = zeroed ? calloc(1, sizeof(*b) + cap) : malloc(sizeof(*b) + cap);
    if (!b) return NULL;
    b->next = NULL;
    b->cap = cap;
    a->total += cap;
    return b;
}

void *mem_arena_alloc(mem_arena_t *a, size_t size)
{
    if (size == 0) size = 1;
    if (size > SIZE_MAX - ALIGN) return NULL;
    size_t need = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    mem_arena_block_t *h = a->head;
    if (h && h->cap - a->used >= need) {
        void *p = (char *)h->_payload + a->used;
        a->used += need;
        return memset(p, 0, size);
    }
    size_t next = h ? (h->cap < MAX_BLOCK ? h->cap * 2 : MAX_BLOCK) : FIRST_BLOCK;
    if (need > next / 4) { /* its own block, behind the current one, which stays open */
        mem_arena_block_t *b = new_block(a, need, true);
        if (!b) return NULL;
        if (h) {
            b->next = h->next;
            h->next = b;
        } else {
            a->head = b;
            a->used = need;
        }
        return b->_payload;
    }
    mem_arena_block_t *b = new_block(a, next, false);
    if (!b) return NULL;
    b->next = h;
    a->head = b;
    a->used = need;
    return memset(b->_payload, 0, size);
}

char *mem_arena_strndup(mem_arena_t *a, const char *s, size_t len)
{
    if (len == SIZE_MAX) return NULL;
    char *p = mem_arena_alloc(a, len + 1);
    if (p && len) memcpy(p, s, len);
    return p;
}

void mem_arena_free(mem_arena_t *a)
{
    if (!a) return;
    mem_arena_block_t *b = a->head;
    while (b) {
        mem_arena_block_t *next = b->next;
        free(b);
        b = next;
    }
    mem_arena_init(a);
}
