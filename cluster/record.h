/* record.h - a write op as a replicated log record (binary, little-endian hosts)
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_CLUSTER_RECORD_H
#define MEM_CLUSTER_RECORD_H

#include <stddef.h>

#include "storage/store.h"

#define MEM_CLUSTER_MSGID_MAX 96

typedef struct mem_cluster_rec {
    mem_store_op_t op; /* first: a done callback gets &rec->op */
    char msgid[MEM_CLUSTER_MSGID_MAX];
    unsigned char *buf; /* the payload copy strings point into */
    mem_store_seg_in_t *segs;
    mem_store_seg_out_t *outs;
    float *vecs;
    const char **ptrs; /* supersedes lists and evict ids */
    /* IMPORT: segs[op.n_segs] read back through import (op.import points here) */
    mem_store_import_src_t import;
    bool *archived;
    uint64_t *lines;
    size_t n_import, cursor;
    size_t *id_slots, cap_slots; /* open addressing over segs by id: index + 1, 0 empty */
} mem_cluster_rec_t;

/* The exact length mem_cluster_rec_encode will produce for op and a msgid of that length
 * (an IMPORT is read through op->import for it: not on the loop thread). */
size_t mem_cluster_rec_size(const mem_store_op_t *op, size_t msgid_len);
/* Encode op (every input the writer reads, nothing it computes) and msgid. malloc'd; NULL
 * when out of memory, when an IMPORT's staged segments cannot be read, or op is a local
 * kind (NS_IMPORT, NS_FORGET). */
unsigned char *mem_cluster_rec_encode(const mem_store_op_t *op, const char *msgid, size_t *len);
/* The record in buf: MEM_OK (*out the caller's), MEM_EINVAL (not a well-formed record) or
 * MEM_ENOMEM (nothing is known about buf: try again, never take it for a bad record). */
int mem_cluster_rec_read(const void *buf, size_t len, mem_cluster_rec_t **out);
/* mem_cluster_rec_read's record, or NULL (malformed or out of memory). */
mem_cluster_rec_t *mem_cluster_rec_decode(const void *buf, size_t len);
void mem_cluster_rec_free(mem_cluster_rec_t *r);

#endif
