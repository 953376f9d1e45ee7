/* store_int.h - internals shared by the files of storage/ (not a public API)
 * SPDX-License-Identifier: MIT
 *
 * Locks, outermost first (never taken in the other order):
 *   st->reg_lock (rwlock: the namespace registry)  -- only ever held briefly, leaf-like
 *   ns->lock     (rwlock: the index; writer exclusive, scans shared)
 *   ns->acc_mu   (mutex: dirty access list, recent queries)
 * st->q_mu (queue), st->pool_mu (read connections) and st->ck_mu (the WAL checkpointer) are
 * leaf locks.
 *
 * The index of a namespace (core/index.h: a const pointer is a read view, a mutable one
 * changes it) is reached only through the calls below, which tie each kind of access to
 * the lock or the thread it needs:
 *   - any thread: mem_store__read_lock() gives a read view under the shared lock;
 *   - the writer thread, through its token (mem_store__writer_t, storage/writer_int.h,
 *     which only the writer's files include): mem_store__writer_view() reads without the
 *     lock, since the writer is the only thread that ever holds a mutable handle, and
 *     mem_store__write_lock() gives the mutable handle under the exclusive lock;
 *   - start-up and reload build an index no other thread can see yet and hand it to
 *     mem_store__ns_new, which takes it.
 */
#ifndef MEM_STORAGE_STORE_INT_H
#define MEM_STORAGE_STORE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <sqlite3.h>

#include "core/index.h"
#include "core/lexidx.h"
#include "core/lextok.h"
#include "core/meta.h"
#include "storage/store.h"

#define MEM_STORE__SCHEMA_VERSION 7
#define MEM_STORE__RECENT_QUERIES 20
#define MEM_STORE__FLUSH_MS       1000 /* access statistics reach SQLite at least this often */
#define MEM_STORE__WAL_CKPT_PAGES 1000 /* the WAL is checkpointed at this many pages */
#define MEM_STORE__WAL_CKPT_LOG_S 2.0  /* a checkpoint that took this long is logged */
/* The writer's WAL writes are gathered up to this many bytes a system call (walbuf.c). */
#define MEM_STORE__WALBUF_BYTES (256u * 1024u)
/* Group commit under concurrency: when the last group held at least GATHER_MIN ops and
 * fewer are queued now, the writer waits up to opts.group_wait_us for as many as it had
 * (gather in writer.c). */
#define MEM_STORE__GATHER_MIN 4

/* The coherence graph's bookkeeping for one namespace (storage/linker.c). The graph's own
 * data (degrees, links, edge counts) lives in the index, owned by the linker thread: it
 * changes them under the exclusive lock and reads them, and the rows' vectors and seqs,
 * without it (core/index.h: the graph owner). */
typedef struct mem_store_graph {
    /* under st->g_mu */
    uint64_t w_gen; /* published changes the graph must cover (one per publish) */
    uint64_t g_gen; /* the changes it covers */
    size_t *pend;   /* published rows whose flags changed, not decided yet */
    size_t n_pend, cap_pend;
    bool queued;                 /* in the linker's queue (which holds a reference) */
    struct mem_store_ns *q_next; /* next in the linker's queue: an intrusive list */
    bool busy;                   /* the linker, or a vacuum, works on it */
    bool rescan;                 /* a change list was lost: the next batch decides every row */
    /* the linker thread only (or whoever holds busy) */
    size_t g_rows;     /* rows the linker has taken; those above are new */
    uint64_t *buckets; /* seq / MEM_STORE__GRAPH_BUCKET touched since the checkpoint */
    size_t n_buckets, cap_buckets;
    int64_t *gone; /* deleted rows out of the graph: their graph_gone rows can go */
    size_t n_gone, cap_gone;
    bool ckpt_all; /* a note was lost: the next checkpoint writes every bucket */
    /* the stored graph was made under another edge rule or threshold (load.c): not loaded;
     * the next checkpoint replaces it whole and records the current ones */
    bool restamp;
    /* the writer thread only: this group's flag changes, handed over at publish */
    size_t *w_flagged;
    size_t n_w_flagged, cap_w_flagged;
    bool w_changed; /* the group appended rows or changed flags */
    /* the writer thread only: rows this group's inserts supersede, flagged when the group is
     * published (with the rows that supersede them) or before an op that reads flags */
    size_t *w_later;
    size_t n_w_later, cap_w_later;
    /* the writer thread only: this group's patches of the index's source and the metadata
     * values, made visible with the group (mem_store__patch_later) */
    struct mem_store__patch_later *w_patches;
    size_t n_w_patches, cap_w_patches;
} mem_store_graph_t;

/* A patch waiting for its group to be published: the row's new source and/or metadata
 * values (pairs pointing into text; both owned). */
typedef struct mem_store__patch_later {
    size_t pos;
    int64_t seq;
    int source; /* the interned source, or -1: unchanged */
    bool meta;  /* the metadata values change to pairs[0..n_pairs) */
    mem_meta_pair_t *pairs;
    size_t n_pairs;
    char *text;
} mem_store__patch_later_t;

#define MEM_STORE__GRAPH_BUCKET 256  /* segments per graph_blocks row, by seq */
#define MEM_STORE__GRAPH_BATCH  8192 /* rows the linker links at most in one batch */
/* A batch takes at least this many rows, whatever opts.graph_batch_pairs says. */
#define MEM_STORE__GRAPH_MIN_ROWS 64
#define MEM_STORE__GRAPH_CKPT_MS  1000 /* the graph reaches SQLite at least this often */
#define MEM_STORE__SETTLE_ROUNDS  8    /* mem_store_settle: checkpoint tries before it fails */
/* A linker with work that has not stirred for this long is starved: it competes again. */
#define MEM_STORE__GRAPH_STARVE_MS 2000

typedef struct mem_store_ns {
    char name[MEM_STORE_NS_MAX + 1];
    int64_t ns_id; /* namespaces.id; immutable */
    size_t dim;    /* immutable */
    /* immutable: which namespace of this name it is (namespaces.incarnation; 0 for one
     * created before schema 7), the same on every node of a cluster */
    uint64_t incarnation;
    int64_t created_ms; /* immutable: namespaces.created_ms (0 when NULL) */
    int refs;           /* atomic; the registry holds one */
    /* atomic: rows x dim its last retrieve scored, either path: when that is over a try's
     * budget, the next try goes to the pool without scanning (queries of a namespace tend
     * to cost alike; any pooled one that fits lets the tries start again) */
    size_t last_scan_work;
    pthread_rwlock_t lock;
    mem_index_t *_idx;  /* private: only through the calls below (read_lock, writer_view...) */
    mem_lexidx_t *_lex; /* private: the lexical index at _idx's positions, same lock, same
                           rules (mem_store__lex) */
    mem_meta_t *meta;   /* metadata value index (by seq): guarded by lock, changed by the writer */
    int64_t last_seq;   /* writer thread only */
    int64_t last_ts_ms; /* writer thread only; INT64_MIN when nothing was ever stored */
    bool dropped;       /* writer thread only */
    char embedder[MEM_STORE_EMBEDDER_MAX + 1];     /* writer thread only; "" = none recorded */
    char pub_embedder[MEM_STORE_EMBEDDER_MAX + 1]; /* committed value, guarded by lock */
    /* committed counts for stats, guarded by lock; set at load and at each publish */
    size_t pub_active, pub_superseded, pub_archived;
    uint64_t pub_edges;      /* set by the linker, under lock */
    uint32_t pub_max_degree; /* set by the linker, under lock */
    bool in_group;           /* writer thread only: listed in the group's touched namespaces */
    /* atomic: a group holding a patch of this namespace commits and has not published it
     * yet, so a reader's SQLite snapshot may be ahead of memory (set by the writer before
     * COMMIT, cleared once memory is published or reloaded) */
    bool patch_unpublished;
    bool comes_back;     /* writer thread only: a failed group's drop is undone (reload_touched) */
    bool meta_dirty;     /* writer thread only: last_seq/last_ts_ms/clock to write at group end */
    bool coherence;      /* immutable: keeps a coherence graph */
    mem_store_graph_t g; /* the graph's bookkeeping (linker.c) */
    /* guarded by acc_mu */
    pthread_mutex_t acc_mu;
    size_t *dirty; /* positions whose access statistics changed */
    size_t n_dirty, cap_dirty;
    float *recent; /* RECENT_QUERIES * dim floats, ring */
    size_t n_recent, recent_head;
    bool recent_dirty; /* changed since it was last written (namespaces.recent) */
    /* atomic, set by the writer: a failed group left this memory unlike SQLite and its reload
     * failed (stale_rc, written before the flag); readers are refused until the writer
     * reloads it (writer.c) */
    bool stale;
    int stale_rc;
} mem_store_ns_t;

/* A segment prepared before it was queued (prep.c): made as the writer would make them. */
struct mem_store_seg_prep {
    size_t dim;  /* the vector's: a prep of another dim is ignored */
    uint8_t *q8; /* dim codes, q8_scale and q8_err: mem_vec_quantize_u8 of the vector */
    float q8_scale, q8_err;
    bool has_doc; /* the text's terms (segments with text only) */
    mem_lexdoc_t doc;
};

/* The writer's token (storage/writer_int.h): it exists on the writer thread only. */
typedef struct mem_store__writer mem_store__writer_t;
/* The linker's token (linker.c): it exists on the linker thread only. */
typedef struct mem_store__linker mem_store__linker_t;

/* Any thread: take ns->lock shared and return the read view (valid until the unlock). */
const mem_index_t *mem_store__read_lock(mem_store_ns_t *ns);
void mem_store__read_unlock(mem_store_ns_t *ns);
/* Writer thread: the read view without the lock (valid until the writer changes it). */
const mem_index_t *mem_store__writer_view(const mem_store__writer_t *w, const mem_store_ns_t *ns);
/* Writer thread: take ns->lock exclusively and return the mutable handle; every change to
 * an index that others can see goes between these two. */
mem_index_t *mem_store__write_lock(mem_store__writer_t *w, mem_store_ns_t *ns);
void mem_store__write_unlock(mem_store__writer_t *w, mem_store_ns_t *ns);
/* Writer thread, between write_lock and write_unlock: install fresh (taken) in place of the
 * current index, which is returned (free it after the unlock). */
mem_index_t *mem_store__write_swap(mem_store__writer_t *w, mem_store_ns_t *ns, mem_index_t *fresh);
/* Linker thread, holding ns->g.busy: the view without the lock (it changes only the graph
 * fields, and reads only those and the rows' immutable ones below g.g_rows), and the
 * mutable handle under the exclusive lock, for the graph fields only. */
const mem_index_t *mem_store__linker_view(const mem_store__linker_t *lk, const mem_store_ns_t *ns);
mem_index_t *mem_store__linker_lock(mem_store__linker_t *lk, mem_store_ns_t *ns);
void mem_store__linker_unlock(mem_store__linker_t *lk, mem_store_ns_t *ns);
/* The lexical index of ns, under the same rules as the index beside it: read it where a
 * view of the index may be read, change it where the mutable handle may be used. */
mem_lexidx_t *mem_store__lex(mem_store_ns_t *ns);
/* Like write_swap, for the lexical index. */
mem_lexidx_t *mem_store__write_swap_lex(mem_store__writer_t *w, mem_store_ns_t *ns,
                                        mem_lexidx_t *fresh);
/* A row of ns changed its flags to `to` (mem_index_set_flags): the lexical index follows. */
void mem_store__lex_flags(mem_store_ns_t *ns, size_t pos, uint8_t to);
/* A tokenizer (core/lextok.h, the index's options) lent for one call, from the store's
 * pool; NULL when out of memory. Any thread. */
mem_lextok_t *mem_store__tok_get(mem_store_t *st);
void mem_store__tok_put(mem_store_t *st, mem_lextok_t *tk);

typedef struct mem_store__scanpool mem_store__scanpool_t;

/* A retrieve of at most this many hits reads their texts with a statement of as many
 * parameters (seq IN (?2, ..., ?n+1)), prepared on the connection's first such answer;
 * a larger one sends the seqs as one JSON array (json_each), which costs about twice as
 * much for ten rows (parsing the array, a virtual table). */
#define MEM_STORE__FETCH_IN_MAX 32

typedef struct mem_store_rconn {
    sqlite3 *db;
    sqlite3_stmt *get;   /* by (ns_id, id) */
    sqlite3_stmt *fetch; /* by (ns_id, seq), the seqs as a JSON array */
    sqlite3_stmt *fetch_in[MEM_STORE__FETCH_IN_MAX + 1]; /* [n]: by n seqs, NULL until used */
    struct mem_store_rconn *next;
} mem_store_rconn_t;

enum mem_store__stmt {
    STMT_SEG_INSERT,
    STMT_SEG_BY_SEQ, /* content for idempotency checks */
    STMT_SEG_SUPERSEDE,
    STMT_SEG_DELETE,
    STMT_SEG_ARCHIVE,
    STMT_SEG_ACCESS,
    STMT_SEG_PATCH, /* patch.c */
    STMT_META_TREE, /* meta.c */
    STMT_NS_INSERT,
    STMT_NS_UPDATE,
    STMT_NS_CLOCK,
    STMT_NS_DELETE,
    STMT_NS_DELETE_SEGS,
    STMT_NS_EMBEDDER,
    STMT_META_LSN,
    STMT_SUP_INSERT,     /* (ns_id, target_seq, by_seq) */
    STMT_SUP_TARGETS,    /* targets of by_seq */
    STMT_SUP_DEL_BY,     /* the pairs of a superseder */
    STMT_SUP_DEL_TARGET, /* the pairs of a target */
    STMT_SUP_LATEST,     /* id of a target's latest remaining superseder */
    STMT_SUP_BY,         /* superseders of target_seq */
    STMT_SEG_SUPS_GET,   /* a row's supersedes blob */
    STMT_SEG_SUPS_SET,
    STMT_SUP_DEL_NS,
    STMT_NS_RECENT, /* the recent queries blob */
    STMT_GONE_SAVE, /* a deleted row's vector, kept until the graph lets go */
    STMT_GONE_DROP,
    STMT_GONE_DEL_NS,
    STMT_GBLK_PUT, /* a graph bucket */
    STMT_GBLK_DEL,
    STMT_GBLK_DEL_NS,
    STMT_NS_GRAPH_STAMP, /* the rule and threshold the stored graph was made with */
    STMT_SAVEPOINT,
    STMT_RELEASE,
    STMT_ROLLBACK_TO,
    STMT_COUNT
};

struct mem_store {
    mem_store_opts_t opts;
    char *path;
    sqlite3 *db; /* the writer's connection: writer thread only once it runs */
    sqlite3_stmt *stmts[STMT_COUNT];
    int64_t lsn;    /* writer thread only */
    int wal_frames; /* writer thread only (its commits' WAL hook): pages in the WAL */

    /* the WAL checkpointer (store.c): its own connection and thread, so copying the WAL
     * into the database file (and its fsync) never holds up the writer's next group */
    sqlite3 *ck_db;        /* the checkpointer's connection; NULL: the writer checkpoints */
    pthread_mutex_t ck_mu; /* leaf */
    pthread_cond_t ck_cv;
    bool ck_want, ck_stop; /* under ck_mu */
    pthread_t ck_thread;
    bool ck_started;

    /* registry: sorted by name */
    pthread_rwlock_t reg_lock;
    mem_store_ns_t **nss;
    size_t n_nss, cap_nss;
    size_t n_stale; /* writer thread only: registered namespaces marked stale */

    /* write queue */
    pthread_mutex_t q_mu;
    pthread_cond_t q_cv;    /* wakes the writer */
    pthread_cond_t done_cv; /* wakes mem_store_sync */
    mem_store_op_t *q_head, *q_tail;
    size_t q_len;
    size_t q_gather; /* under q_mu: the writer gathers a group; wake it at this many ops */
    uint64_t n_submitted, n_completed; /* under q_mu */
    uint64_t sync_req, sync_done;      /* under q_mu */
    bool stop;
    pthread_t writer;
    bool writer_started;
    uint32_t max_page_count;     /* atomic: wanted */
    uint32_t applied_page_count; /* writer thread only */
    uint32_t tried_page_count;   /* writer thread only: the last one tried (a failed try
                                    waits for work before the next) */

    /* read connections */
    pthread_mutex_t pool_mu;
    mem_store_rconn_t *pool;
    /* the read connection of the reads tried on the event loop (mem_store_retrieve_try):
     * busy timeout 0, taken by whoever sets inline_taken (atomic), never waited for */
    mem_store_rconn_t *inline_conn;
    bool inline_taken;
    /* the answers' texts kept in memory (textcache.c): its own leaf mutex; NULL when
     * opts.text_cache_bytes is 0 */
    struct mem_store__txc *txc;

    /* metrics, under q_mu */
    mem_store_metrics_t m;

    /* cluster log positions (applied.c), under q_mu; changed by the writer only */
    struct mem_store_logpos {
        char stream[64];
        uint64_t seq;
    } * logpos;
    size_t n_logpos;
    /* per-namespace chain positions (applied.c), sorted by name, under q_mu; writer only */
    struct mem_store_nspos {
        char ns[MEM_STORE_NS_MAX + 1];
        uint64_t seq;
    } * nspos;
    size_t n_nspos, cap_nspos;

    /* tokenizers lent to retrieves (mem_store__tok_get), under tk_mu */
    pthread_mutex_t tk_mu;
    mem_lextok_t **tk_pool;
    size_t n_tk, cap_tk;
    /* parallel scan helpers (scanpool.c); NULL when none */
    mem_store__scanpool_t *scanpool;

    /* the coherence graph's linker thread (linker.c) */
    pthread_mutex_t g_mu;              /* leaf: the queue and every namespace's mem_store_graph_t */
    pthread_cond_t g_cv;               /* wakes the linker */
    pthread_cond_t g_done_cv;          /* wakes reads waiting for a graph */
    mem_store_ns_t *g_qhead, *g_qtail; /* namespaces with graph work, one reference each */
    size_t g_qn;
    bool g_stop;
    uint64_t ckpt_req, ckpt_done; /* under g_mu: mem_store_settle asks for a checkpoint now */
    bool g_paused;                /* under g_mu: test hook, the linker takes no batch */
    pthread_t linker;
    bool linker_started;
    uint64_t g_batches, g_rows_done; /* metrics, under g_mu */
    double g_seconds;
    /* the linker's CPU policy (linker.c), under g_mu */
    int g_tid;          /* the linker thread's id while it runs, else 0 */
    int g_nice;         /* its nice value: the process's + 10, at most 19 */
    bool g_can_idle;    /* it may run SCHED_IDLE: it can also leave it again */
    bool g_idle;        /* it runs SCHED_IDLE now */
    unsigned g_waiters; /* reads (and settles) waiting for a graph to catch up */
    double g_stirred_s; /* CLOCK_MONOTONIC s: the linker last took work or finished a batch */
    /* checkpoints of the graph handed to the writer (linker.c makes them, the writer
     * writes them in its next group); under q_mu */
    struct mem_store__ckpt *ckpt_head;
};

/* scanpool.c */
/* Start n_helpers scan helper threads (capped at MEM_STORE_SCAN_HELPERS_MAX). *out is NULL
 * when n_helpers is 0 or no thread could be started (scans then stay whole). */
int mem_store__scanpool_start(size_t n_helpers, mem_store__scanpool_t **out, mem_err_t *err);
/* Stop and join every helper; no scan may be running. NULL-safe. */
void mem_store__scanpool_stop(mem_store__scanpool_t *pool);
void mem_store__scanpool_counts(mem_store__scanpool_t *pool, uint64_t *split, uint64_t *helped);
/* The helpers running (fewer than asked when memory ran out at the start; 0 for NULL). */
size_t mem_store__scanpool_size(const mem_store__scanpool_t *pool);
/* Shared lock of idx's namespace held: mem_scan_run, split across idle helpers when it pays
 * (st->opts.scan_split_min); same answer. */
void mem_store__scan(mem_store_t *st, const mem_index_t *idx, const mem_scan_params_t *p,
                     mem_scan_hit_t *hits, size_t *n_hits, size_t *n_scanned);

/* schema.c */
int mem_store__check(sqlite3 *db, mem_err_t *err);
/* walbuf.c: the name of the VFS the writer's connection opens with under synchronous=FULL
 * (the default one, its WAL writes gathered until a sync); NULL when it could not be set
 * up (the default VFS is then used as is). */
const char *mem_store__walbuf_vfs(void);
/* Refuse (MEM_EINVAL) a database that is neither empty nor mnemod's: nothing is written. */
int mem_store__check_ours(sqlite3 *db, mem_err_t *err);
int mem_store__migrate(sqlite3 *db, mem_err_t *err);
/* The MEM_E* code of an SQLite result: FULL, NOMEM (a failed allocation is a 503, not a
 * storage error), CORRUPT/NOTADB, else ESTORAGE. */
int mem_store__code_sqlite(int rc);
int mem_store__err_sqlite(mem_err_t *err, sqlite3 *db, int rc, const char *what);
int mem_store__exec(sqlite3 *db, const char *sql, mem_err_t *err);

/* load.c */
int mem_store__load_all(mem_store_t *st, mem_err_t *err);
/* Load one namespace row by name from db. *out = NULL when it does not exist. */
int mem_store__load_ns(mem_store_t *st, sqlite3 *db, const char *name, mem_store_ns_t **out,
                       mem_err_t *err);
/* A namespace holding idx and lex (taken, also on failure; NULL = new empty ones, lex with
 * the trigram field when grams). */
int mem_store__ns_new(const char *name, int64_t ns_id, size_t dim, mem_index_t *idx,
                      mem_lexidx_t *lex, bool grams, mem_store_ns_t **out);
/* idx is ns's mutable handle (write-locked, or ns not shared yet): make its current state
 * the committed one (visibility and the counts stats show). */
void mem_store__ns_publish(mem_store_ns_t *ns, mem_index_t *idx);

/* store.c */
/* A read-only connection of the pool (one per concurrent reader); give it back when done,
 * with every statement prepared on it finalized or reset. */
int mem_store__rconn_acquire(mem_store_t *st, mem_store_rconn_t **out, mem_err_t *err);
void mem_store__rconn_release(mem_store_t *st, mem_store_rconn_t *c);
/* A reference to a namespace for a reader; NULL when there is none, or while it is stale
 * (then mem_store__ns_missing says so). */
mem_store_ns_t *mem_store__ns_acquire(mem_store_t *st, const char *name);
void mem_store__ns_release(mem_store_ns_t *ns);
/* Why acquire gave NULL: MEM_ENOTFOUND, or the stale namespace's error with retry_after_s. */
int mem_store__ns_missing(mem_store_t *st, const char *name, mem_err_t *err);
/* Writer thread only: registry edits (take reg_lock exclusively). */
mem_store_ns_t *mem_store__reg_find(mem_store_t *st, const char *name); /* no ref taken */
int mem_store__reg_add(mem_store_t *st, mem_store_ns_t *ns);
void mem_store__reg_remove(mem_store_t *st, mem_store_ns_t *ns);

/* applied.c: cluster log positions (store.h, struct mem_store_op, log_*) */
int mem_store__log_prepare(mem_store_t *st, mem_err_t *err); /* table + load, at open */
/* Before exec: 0 apply, 1 skip (already applied), or MEM_EBUSY (gap; op->err set). */
int mem_store__log_check(mem_store_t *st, mem_store_op_t *op);
/* In the op's savepoint, after exec (success or client error): store the position. */
int mem_store__log_write(mem_store_t *st, mem_store_op_t *op, mem_err_t *err);
void mem_store__log_reload(mem_store_t *st); /* after a rolled-back group */
/* Writer, in the op's savepoint: set ns's chain position (NS_IMPORT), or forget it. */
int mem_store__log_ns_set(mem_store_t *st, const char *ns, uint64_t seq, mem_err_t *err);
int mem_store__log_ns_forget(mem_store_t *st, const char *ns, mem_err_t *err);

void mem_store__log_free(mem_store_t *st);

/* list.c */
/* Columns for mem_store__segment_read, in this order. */
#define MEM_STORE__SEGMENT_COLS                                                                    \
    "id, seq, ts_ms, text, source, metadata, supersedes, superseded_by, archived, embedding"
/* The current row of s (MEM_STORE__SEGMENT_COLS from column 0) as a new segment of a
 * namespace of dim floats; the embedding only when with_embedding. MEM_OK, MEM_ENOMEM,
 * MEM_ECORRUPT (a stored embedding of the wrong size). */
int mem_store__segment_read(sqlite3_stmt *s, size_t dim, bool with_embedding,
                            mem_store_segment_t **out, mem_err_t *err);
/* Column col of the current row of s as a malloc'd string; NULL for SQL NULL, and NULL with
 * *oom set when memory runs out. */
char *mem_store__col_dup(sqlite3_stmt *s, int col, bool *oom);

/* meta.c: the metadata value index of a namespace (core/meta.h) */
/* Start-up (or reload), ns not shared yet: every segment's metadata from db into ns->meta. */
int mem_store__meta_load(mem_store_ns_t *ns, sqlite3 *db, mem_err_t *err);
/* A filter matching at most 1 / MEM_STORE__FILTER_SELECTIVE of a namespace's visible rows
 * is answered by scoring exactly those rows (their vectors only); a broader one runs the
 * full pruned scan with a row mask. Either gives the exact filtered top K. */
#define MEM_STORE__FILTER_SELECTIVE 16
/* Reader, view = ns's read view (shared lock held): plan filter f for p over the visible
 * rows. Returns 1 with *cand (malloc'd, ascending positions, *n_cand of them, maybe 0) to
 * score only those, or 2 with p->row_mask set to *mask (malloc'd) for the full scan; the
 * caller frees both. MEM_ENOMEM on failure. */
int mem_store__meta_plan(const mem_store_ns_t *ns, const mem_index_t *view,
                         const mem_meta_filter_t *f, mem_scan_params_t *p, uint64_t **mask,
                         size_t **cand, size_t *n_cand, mem_err_t *err);

/* access.c: access statistics (counted in memory by readers, written by the writer) and
 * the namespace's recent retrieve queries */
/* view is ns's read view (shared lock held): count one access of each hit, remember the
 * query (dim floats) among the recent ones. */
void mem_store__record_access(mem_store_ns_t *ns, const mem_index_t *view, const float *query,
                              const mem_scan_hit_t *hits, size_t n);
/* The recent queries, oldest first: *out (n * dim floats, malloc'd; NULL when n is 0).
 * MEM_OK or MEM_ENOMEM. */
int mem_store__recent_queries(mem_store_ns_t *ns, float **out, size_t *n);
/* Writer thread: write the access statistics and recent queries gathered so far (one
 * transaction); what a failed flush took stays dirty for the next one. closing: the last
 * flush, tried a few times (access.c), then logged as access_flush_failed. */
void mem_store__flush_access(mem_store__writer_t *w, bool closing);
/* Writer thread, between groups (after their ops are answered): when the WAL holds
 * MEM_STORE__WAL_CKPT_PAGES or more, have it checkpointed: by the checkpointer thread,
 * which it wakes, or in place when that thread could not be started (store.c). */
void mem_store__wal_checkpoint(mem_store_t *st);

/* A checkpoint of one namespace's graph, made by the linker, written by the writer. */
typedef struct mem_store__ckpt {
    struct mem_store__ckpt *next;
    mem_store_ns_t *ns;   /* one reference; skipped when it is no longer the live namespace */
    uint64_t *bucket;     /* first seq / MEM_STORE__GRAPH_BUCKET */
    unsigned char **blob; /* its (seq i64, degree u32) pairs, little-endian; NULL: empty */
    size_t *blob_len;
    size_t n_buckets;
    int64_t *gone; /* graph_gone rows to drop */
    size_t n_gone;
    bool restamp; /* first drop every stored bucket of ns; then record MEM_GRAPH_RULE and the
                     threshold as the stored graph's (its buckets are all in this one) */
} mem_store__ckpt_t;

/* linker.c: the coherence graph, kept up in the background */
int mem_store__linker_start(mem_store_t *st, mem_err_t *err);
/* Stop and join the linker; its last checkpoint is queued for the writer. NULL-safe. */
void mem_store__linker_stop(mem_store_t *st);
/* A loaded namespace (start-up, reload): queue the graph work its load found (ns->g). */
void mem_store__graph_adopt(mem_store_t *st, mem_store_ns_t *ns);
/* Writer thread, at a publish of ns: hand over the group's changes (ns->g.w_*). */
void mem_store__graph_publish(mem_store_t *st, mem_store_ns_t *ns);
void mem_store__ckpt_free(mem_store__ckpt_t *c); /* NULL-safe; one checkpoint */
/* writer.c: queue checkpoints (a list, taken) for the writer's next group. Any thread. */
void mem_store__ckpt_submit(mem_store_t *st, mem_store__ckpt_t *list);
/* Wait until ns's graph covers every change published before the call, until deadline
 * (CLOCK_REALTIME; mem_store__graph_deadline: now + opts.graph_wait_ms): MEM_OK, or MEM_EBUSY
 * with err (retry_after_s) set. A namespace without a graph is always covered. Any thread
 * but the writer and the linker. */
int mem_store__graph_wait(mem_store_t *st, mem_store_ns_t *ns, const struct timespec *deadline,
                          mem_err_t *err);
void mem_store__graph_deadline(const mem_store_t *st, struct timespec *out);
/* Free the bookkeeping of a namespace that is going away. */
void mem_store__graph_free(mem_store_graph_t *g);
/* The patches waiting in g (w_patches) freed, none left; the array is kept. */
void mem_store__graph_patches_free(mem_store_graph_t *g);
size_t mem_store__graph_behind(mem_store_t *st); /* namespaces not caught up */
/* Test hook: while paused, the linker takes no batch (reads that need the graph time out). */
void mem_store__linker_pause(mem_store_t *st, bool paused);

/* writer.c */
int mem_store__writer_start(mem_store_t *st, mem_err_t *err);
void mem_store__writer_stop(mem_store_t *st);
int mem_store__prepare_writer(mem_store_t *st, mem_err_t *err);

/* writer_thread.c: the calling thread is a store's writer from now on (writer_main). */
void mem_store__mark_writer_thread(void);

#endif
