/* meta.h - metadata values of a namespace's segments, their inverted index, and filters
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. A segment's metadata (a JSON object) reaches core/ flattened by storage/ into
 * pairs (path, value): "a.b" for nested objects, every element of an array under the
 * array's own path, and one CONTAINER value at the path of each object or array (so
 * $exists sees them). The index keeps, per distinct (path, value), the sorted list of seqs
 * holding it (postings), and per seq the values it holds, so a change or a removal takes
 * the seq out of exactly its postings: postings are always exact. A filter (an AND of
 * conditions, each on one path) is evaluated on postings only, never on vectors: each
 * condition becomes a bitset over seqs (a negative one, $ne / $nin / $exists:false, is the
 * complement of its positive form), and the filter is their AND. The caller turns that into
 * either a short list of candidate rows (a selective filter: score only those) or a row mask
 * for the full scan.
 *
 * Matching a condition against the values V a segment holds at its path:
 *   $eq v   some x in V equals v (same type; numbers by value)   bare value: the same
 *   $ne v   no x in V equals v (so a segment without the path matches)
 *   $in S   some x in V is in S;  $nin S: none is
 *   $gt/$gte/$lt/$lte v   some x in V of v's kind (number or string) compares so;
 *           strings compare bytewise (UTF-8 code point order)
 *   $exists b   V is non-empty (b true) / empty (b false)
 * Not thread-safe: storage/ guards it with the namespace's lock.
 */
#ifndef MEM_CORE_META_H
#define MEM_CORE_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/index.h"
#include "core/scan.h"

typedef enum mem_meta_type {
    MEM_META_NULL,
    MEM_META_BOOL,
    MEM_META_NUM,
    MEM_META_STR,
    MEM_META_CONTAINER, /* an object or array at this path (never equal to a filter value) */
} mem_meta_type_t;

typedef struct mem_meta_val {
    mem_meta_type_t type;
    bool b;          /* BOOL */
    double num;      /* NUM */
    const char *str; /* STR: len bytes (borrowed) */
    size_t len;
} mem_meta_val_t;

typedef struct mem_meta_pair {
    const char *path; /* path_len bytes, "a.b" (borrowed) */
    size_t path_len;
    mem_meta_val_t val;
} mem_meta_pair_t;

typedef enum mem_meta_op {
    MEM_META_EQ,
    MEM_META_NE,
    MEM_META_IN,
    MEM_META_NIN,
    MEM_META_GT,
    MEM_META_GTE,
    MEM_META_LT,
    MEM_META_LTE,
    MEM_META_EXISTS,
} mem_meta_op_t;

typedef struct mem_meta_cond {
    const char *path;
    size_t path_len;
    mem_meta_op_t op;
    const mem_meta_val_t *vals; /* 1 (EXISTS: vals[0].b), or n_vals for IN / NIN */
    size_t n_vals;
} mem_meta_cond_t;

typedef struct mem_meta_filter {
    const mem_meta_cond_t *conds; /* all must hold */
    size_t n_conds;
} mem_meta_filter_t;

#define MEM_META_MAX_CONDS 64
#define MEM_META_MAX_IN    1024 /* values of one $in / $nin */
#define MEM_META_MAX_PATH  256  /* bytes of a path */

typedef struct mem_meta mem_meta_t;

int mem_meta_new(mem_meta_t **out); /* MEM_OK, MEM_ENOMEM */
void mem_meta_free(mem_meta_t *m);  /* NULL-safe */
/* Make pairs the values of seq (> 0), replacing what it held. MEM_OK, MEM_ENOMEM (then seq
 * holds nothing). */
int mem_meta_set(mem_meta_t *m, int64_t seq, const mem_meta_pair_t *pairs, size_t n);
/* seq holds no value any more. */
void mem_meta_clear(mem_meta_t *m, int64_t seq);
/* Number of (path, value) entries held, for stats and tests. */
size_t mem_meta_count(const mem_meta_t *m);

/* The seqs in 1..max_seq matching f, as a bitset of (max_seq / 64 + 1) words (bit s of word
 * s / 64): *out malloc'd, freed by the caller; *n_match its number of bits set.
 * MEM_OK, MEM_ENOMEM. */
int mem_meta_eval(const mem_meta_t *m, const mem_meta_filter_t *f, int64_t max_seq, uint64_t **out,
                  size_t *n_match);
/* The reference: does the list of pairs (one segment's) match f? A plain loop over the
 * pairs, used by tests as the oracle of mem_meta_eval. */
bool mem_meta_match_pairs(const mem_meta_pair_t *pairs, size_t n, const mem_meta_filter_t *f);

/* Plan f over the visible rows of idx (the namespace whose values m holds; shared lock held
 * by the caller). When at most 1 / selective_div of the rows match: returns 1 with *cand
 * (malloc'd, ascending positions of the matching rows, *n_cand of them, maybe 0) so that only
 * they are scored (mem_scan_rows); else returns 2 with a row mask (malloc'd, in *mask and
 * p->row_mask) for the full scan (mem_scan_run); selective_div 0 always gives the mask. The
 * caller frees both. MEM_ENOMEM. */
int mem_meta_plan(const mem_meta_t *m, const mem_index_t *idx, const mem_meta_filter_t *f,
                  size_t selective_div, mem_scan_params_t *p, uint64_t **mask, size_t **cand,
                  size_t *n_cand);

#endif
