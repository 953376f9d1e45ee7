/* textcache_int.h - the answer texts cache: text, source and metadata of recent hits
 * SPDX-License-Identifier: MIT
 *
 * Owns: the store's cache of the columns a retrieve answers with besides what the index
 * holds (text, source, metadata), keyed by (namespace id, seq), bounded by
 * opts.text_cache_bytes (least recently answered entries go first). A retrieve copies what
 * it finds here under the scan's view and reads only the rest from SQLite; the store's
 * retrieve (store.c) and the writer's patch (patch.c, writer.c) are its only users.
 *
 * Exactness. A seq names one row for the life of a namespace id (seqs and namespace ids are
 * never reused; a row that was never committed was never answered, so never cached), and the
 * only write that changes these columns of an existing row is a patch. Entries come only
 * from rows a reader read from a committed SQLite snapshot; a reader may add them only if
 * no patch was in progress when it took its snapshot and none finished since:
 *   - reader: mem_store__txc_get (under the view, before the SQLite snapshot is taken)
 *     returns a ticket; mem_store__txc_put with that ticket adds nothing if a patch began
 *     (mem_store__txc_forget) or settled (mem_store__txc_settled) in between;
 *   - writer: mem_store__txc_forget before it writes a patch (drops the entry, marks a
 *     change in progress), mem_store__txc_settled once its group committed or rolled back.
 * Rows deleted, compacted away or in a dropped namespace are never answered again: their
 * entries only wait for eviction. A restart starts empty (nothing to rebuild).
 *
 * Threads: every call takes the cache's own mutex (a leaf, held for copies of the entries
 * at hand, never across SQLite or another lock). A NULL cache (text_cache_bytes 0) finds
 * nothing and keeps nothing.
 */
#ifndef MEM_STORAGE_TEXTCACHE_INT_H
#define MEM_STORAGE_TEXTCACHE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "storage/store.h"

typedef struct mem_store__txc mem_store__txc_t;

/* The cache's charge per entry besides its three strings' bytes (header, bucket slot). */
#define MEM_STORE__TXC_ENTRY_BYTES 64

/* A cache of at most max_bytes (entries and their overhead); max_bytes 0: *out = NULL (no
 * cache). MEM_OK or MEM_ENOMEM. */
int mem_store__txc_new(size_t max_bytes, mem_store__txc_t **out);
void mem_store__txc_free(mem_store__txc_t *c); /* NULL-safe */

/* What a reader was allowed to add when it looked (see put). */
typedef uint64_t mem_store__txc_ticket_t;

/* For each res[i] (its hit's seq in res[i].hit.seq) cached for namespace ns_id: copies of
 * text, source and metadata into res[i] (from a; NULL for a NULL column) and found[i]
 * true; else found[i] false and res[i] untouched. *bytes: the strings' bytes copied.
 * *ticket: for put, taken before the caller's SQLite snapshot. MEM_OK or MEM_ENOMEM (then
 * found[] says which entries were filled in full). */
int mem_store__txc_get(mem_store__txc_t *c, int64_t ns_id, mem_arena_t *a, mem_store_result_t *res,
                       size_t n, bool *found, size_t *bytes, mem_store__txc_ticket_t *ticket);
/* Add res[i] for every i with found[i] false, as read from a snapshot taken after ticket
 * was issued: nothing when a patch began or settled since (the snapshot may predate it).
 * Allocation failures leave entries out; the cache stays exact. */
void mem_store__txc_put(mem_store__txc_t *c, mem_store__txc_ticket_t ticket, int64_t ns_id,
                        const mem_store_result_t *res, const bool *found, size_t n);
/* Writer thread, before it changes text, source or metadata of row seq: drop its entry and
 * refuse additions until mem_store__txc_settled. */
void mem_store__txc_forget(mem_store__txc_t *c, int64_t ns_id, int64_t seq);
/* Writer thread, once the group of a forget committed or rolled back. Cheap when no
 * forget came since the last call. */
void mem_store__txc_settled(mem_store__txc_t *c);

typedef struct mem_store__txc_stats {
    size_t entries, bytes, max_bytes;
    uint64_t hits, misses, evictions;
} mem_store__txc_stats_t;
void mem_store__txc_stats(mem_store__txc_t *c, mem_store__txc_stats_t *out);

#endif
