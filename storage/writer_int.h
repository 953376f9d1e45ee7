/* writer_int.h - the writer's token and the calls its files share (writer thread only)
 * SPDX-License-Identifier: MIT
 *
 * The writer is split by job: writer.c (the queue, the thread, the group commit, namespace
 * create/drop), insert.c (insert validation and insert), remove.c (delete and compaction),
 * supersede.c (who supersedes whom), vacuum.c (dropping holes), access.c (writing access
 * statistics). The coherence graph is not the writer's: it notes which rows changed and the
 * linker thread (linker.c) follows. Only these files include this header: a
 * mem_store__writer_t exists on the writer thread alone, and holding one is what entitles a
 * function to the writer's unlocked view and to the mutable handle of an index for its own
 * fields (store_int.h). patch.c (the PATCH record), meta.c (the metadata value index of
 * inserts and patches), import.c (the IMPORT record) and nssnap.c (importing and forgetting
 * a whole namespace, for cluster placement) are writer files too.
 */
#ifndef MEM_STORAGE_WRITER_INT_H
#define MEM_STORAGE_WRITER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "storage/store_int.h"

struct mem_store__writer {
    mem_store_t *st;
    /* the group in progress: the namespaces its ops touched, one reference each */
    mem_store_ns_t **g_ns;
    size_t g_n, g_cap;
    int64_t lsn0;   /* st->lsn when the group began */
    bool lsn_dirty; /* st->lsn moved: write it at the group's end */
    /* insert: the new rows' texts, tokenised before the namespace is locked */
    mem_lextok_t *tk; /* NULL until the first text */
    mem_lexdoc_t *docs;
    size_t cap_docs;
    bool vacuum_again; /* a vacuum ran out of memory: mem_store__vacuum_again tries them */
};

/* writer.c */
/* Step a write statement to completion, then reset it for the next use. */
int mem_store__step_done(mem_store_t *st, sqlite3_stmt *s, const char *what, mem_err_t *err);
/* Add ns to the group (once; takes a reference). MEM_OK, MEM_ENOMEM. */
int mem_store__group_touch(mem_store__writer_t *w, mem_store_ns_t *ns);
/* n records applied: the store's log sequence moves on, written at the group's end. */
void mem_store__lsn_advance(mem_store__writer_t *w, int64_t n);
bool mem_store__name_ok(const char *name);
/* The incarnation of a namespace op creates: from its log position when it is a cluster log
 * record (every node that applies it derives the same), else random; never 0. */
uint64_t mem_store__incarnation(const mem_store_op_t *op);
/* Create the namespace row and its (empty) in-memory namespace, registered and in the group. */
int mem_store__ns_create(mem_store__writer_t *w, const char *name, size_t dim, bool coherence,
                         int64_t now_ms, uint64_t incarnation, mem_store_ns_t **out,
                         mem_err_t *err);

/* insert.c */
int mem_store__op_insert(mem_store__writer_t *w, mem_store_op_t *op);

/* remove.c */
int mem_store__op_delete(mem_store__writer_t *w, mem_store_op_t *op);
int mem_store__op_compact(mem_store__writer_t *w, mem_store_op_t *op);

/* writer.c: flag changes (the linker follows them: storage/linker.c) */
/* Rows were appended to ns in this group. */
void mem_store__note_append(mem_store__writer_t *w, mem_store_ns_t *ns);
/* rows[0..n) leave the active set, all at once (under the exclusive lock): each row's flags
 * become `flags | add` (MEM_ROW_DELETED when add is MEM_ROW_DELETED). Rows already deleted,
 * or whose flags would not change (a row listed twice), are skipped; *n_left (may be NULL)
 * counts the rows changed and seqs (room for n, may be NULL) gets their seqs. MEM_OK,
 * MEM_ENOMEM. */
int mem_store__leave(mem_store__writer_t *w, mem_store_ns_t *ns, const size_t *rows, size_t n,
                     uint8_t add, int64_t *seqs, size_t *n_left, mem_err_t *err);
/* rows[0..n) are superseded by rows this group appends: they leave the active set when the
 * group is published, under the same exclusive lock as those rows become visible (or before
 * a later op of the group that reads flags), so a scan never sees a target gone while its
 * superseder is not there yet. MEM_OK, MEM_ENOMEM. */
int mem_store__supersede_later(mem_store__writer_t *w, mem_store_ns_t *ns, const size_t *rows,
                               size_t n, mem_err_t *err);
/* rows[0..n) lose the flag bits drop (under the exclusive lock). MEM_OK, MEM_ENOMEM. */
int mem_store__rejoin(mem_store__writer_t *w, mem_store_ns_t *ns, const size_t *rows, size_t n,
                      uint8_t drop, mem_err_t *err);

/* supersede.c: the supersessions table */
/* The row by_seq (id by_id) supersedes the row target_seq: record it. */
int mem_store__supersede_record(mem_store__writer_t *w, mem_store_ns_t *ns, const char *by_id,
                                int64_t by_seq, int64_t target_seq, mem_err_t *err);
/* The row target_seq (whose id was id) is being deleted: the rows superseding it drop id from
 * their stored supersedes. Call before mem_store__supersede_release drops its pairs. MEM_OK,
 * MEM_ENOMEM, MEM_ESTORAGE. */
int mem_store__supersede_forget(mem_store__writer_t *w, mem_store_ns_t *ns, int64_t target_seq,
                                const char *id, mem_err_t *err);
/* The rows gone[0..n) were deleted: drop their pairs; a target left without a superseder is
 * superseded no more (and rejoins). */
int mem_store__supersede_release(mem_store__writer_t *w, mem_store_ns_t *ns, const int64_t *gone,
                                 size_t n_gone, mem_err_t *err);

/* meta.c: seq's metadata (JSON object text, NULL: none) flattened with SQLite's json_tree
 * and set in ns->meta under the exclusive lock. */
int mem_store__meta_flatten_set(mem_store__writer_t *w, mem_store_ns_t *ns, int64_t seq,
                                const char *json, size_t len, mem_err_t *err);

/* meta.c: the same flattened into p (p->meta, pairs and text set; nothing in ns changes) for
 * a patch that becomes visible with its group. MEM_OK, MEM_ENOMEM, MEM_ESTORAGE. */
int mem_store__meta_flatten_later(mem_store__writer_t *w, const char *json, size_t len,
                                  mem_store__patch_later_t *p, mem_err_t *err);

/* writer.c: a patch's change of ns's index (source) and metadata values, taken over (its pairs
 * and text are ns's now, freed on failure too): made visible when the group is published,
 * under the same exclusive lock as its rows, so a filtered scan never sees values that
 * SQLite has not committed (or before an op of the group that needs them). MEM_OK,
 * MEM_ENOMEM. */
int mem_store__patch_later(mem_store__writer_t *w, mem_store_ns_t *ns, mem_store__patch_later_t *p,
                           mem_err_t *err);

/* insert.c: is the segment in identical to the stored row at seq? (*same set on MEM_OK) */
int mem_store__same_as_stored(mem_store_t *st, const mem_store_ns_t *ns, int64_t seq,
                              const mem_store_seg_in_t *in, bool *same, mem_err_t *err);

/* import.c */
int mem_store__op_import(mem_store__writer_t *w, mem_store_op_t *op);

/* patch.c */
int mem_store__op_patch(mem_store__writer_t *w, mem_store_op_t *op);

/* nssnap.c: cluster placement (store.h, MEM_STORE_OP_NS_IMPORT / NS_FORGET) */
int mem_store__op_ns_import(mem_store__writer_t *w, mem_store_op_t *op);
int mem_store__op_ns_forget(mem_store__writer_t *w, mem_store_op_t *op);

/* vacuum.c */
/* After publish, outside any group: drop the namespace's holes when there are many. */
void mem_store__maybe_vacuum(mem_store__writer_t *w, mem_store_ns_t *ns);
/* Between groups, when a vacuum ran out of memory (w->vacuum_again): try every namespace
 * again rather than wait for its next write. */
void mem_store__vacuum_again(mem_store__writer_t *w);

#endif
