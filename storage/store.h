/* store.h - the durable store: namespaces, segments, the single writer, start-up reload
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. SQLite (WAL) holds every segment; each namespace also lives in memory as a
 * core/ index (vectors in time order, degrees, flags, access statistics) guarded by a
 * read-write lock: scans hold it shared; the writer (rows, flags) and the coherence graph's
 * linker thread (degrees, linker.c) hold it exclusively and briefly.
 * All writes are records (mem_store_op_t) executed by one writer thread: it takes every
 * queued op, validates each against the in-memory state, writes it inside one
 * transaction (group commit), applies it to memory, commits, then publishes the new rows
 * (n_visible) and calls each op's done callback. A client error in one op fails that op
 * only; a storage error (disk full, I/O) rolls the whole group back, reloads the touched
 * namespaces from SQLite and fails every op of the group. Each applied record advances the
 * namespace's seq and the store's lsn in the same transaction as its rows.
 *
 * Threads: mem_store_open/close on the main thread; mem_store_submit from any thread;
 * every read call from any thread (they may block briefly on SQLite reads and locks, so
 * never call them from the event-loop thread, except the _try ones made for it).
 *
 * Visibility: new rows reach scans and stats only after COMMIT; the stats' counts are those
 * of the last commit, their graph figures (edges, max degree) and the rows' degrees those of
 * the graph as far as the linker has caught up, in the background (the calls that need the
 * graph wait for it: see opts.graph_wait_ms). Flag changes of a running group (supersede,
 * delete, archive) reach scans as the op runs, a few milliseconds before its COMMIT; if the
 * group then fails, the namespace is reloaded from SQLite. Access statistics are counted in memory
 * at once and reach SQLite within about a second (a crash may lose the last second of them).
 */
#ifndef MEM_STORAGE_STORE_H
#define MEM_STORAGE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/compact.h"
#include "core/err.h"
#include "core/log.h"
#include "core/meta.h"
#include "core/scan.h"
#include "core/vec.h"

#define MEM_STORE_NS_MAX 64  /* bytes of a namespace name */
#define MEM_STORE_ID_MAX 128 /* bytes of a segment id */
/* Bytes of a namespace's embedder record ("builtin", "openai:MODEL"). */
#define MEM_STORE_EMBEDDER_MAX 300

typedef struct mem_store mem_store_t;

typedef struct mem_store_opts {
    const char *path;           /* SQLite file */
    bool sync_full;             /* synchronous=FULL (else NORMAL) */
    double coherence_threshold; /* edge when cos >= this (as given: not rounded to float) */
    size_t max_namespaces;      /* creating one more is MEM_ELIMIT */
    size_t max_queue;           /* queued write ops beyond this: MEM_EBUSY */
    const mem_vec_ops_t *ops;   /* kernels for graph maintenance and scans */
    uint32_t max_page_count;    /* test hook: PRAGMA max_page_count when > 0 (disk-full tests) */
    const mem_log_t *log;       /* the server's logger, borrowed (NULL: no lines) */
    /* Parallel scan (storage/scanpool.c): scan_helpers threads of the store's own (0 = none,
     * at most MEM_STORE_SCAN_HELPERS_MAX). A retrieve is split across the calling thread and
     * the helpers idle at that moment (never waiting for one) when n_visible * dim >=
     * scan_split_min; 0 never splits. Results are the same either way. A helper that has
     * gone to sleep (none ran a part in the last ~50 us) is woken only when n_visible * dim
     * >= scan_split_min_cold (0 = 64 x scan_split_min). */
    size_t scan_helpers;
    size_t scan_split_min;
    size_t scan_split_min_cold;
    /* A read that needs the coherence graph (mem_store_ns_stats_exact, a retrieve with
     * coherence_weight > 0 or need_gates, a compaction plan) waits at most this long for the
     * graph to cover every write acknowledged before it, then fails with MEM_EBUSY.
     * 0: MEM_STORE_GRAPH_WAIT_MS. */
    uint32_t graph_wait_ms;
    /* The graph's linker scores at most this many row pairs per batch (each row it links or
     * unlinks against every row of its namespace), so it stops and shows progress within
     * seconds at any size. 0: MEM_STORE_GRAPH_BATCH_PAIRS (about a second of one core). */
    size_t graph_batch_pairs;
    /* Lexical index (core/lexidx.h), one per namespace, rebuilt from the stored texts at
     * open and after a failed group: keep its trigram field too (for a configured
     * gram_weight > 0; it costs about as much memory again as the words). */
    bool text_grams;
    /* Group commit: when the writer's last group held 4 ops or more and fewer are queued
     * when it starts the next, it waits up to this long for as many as it had, so that one
     * commit (one fdatasync) serves more of them; a lone writer's groups of one never wait,
     * nor does a sync or a close. 0 never waits. */
    uint32_t group_wait_us;
    /* A retrieve's hits keep their text, source and metadata in memory up to about this many
     * bytes in all (storage/textcache_int.h: the least recently answered go first), so a
     * repeated answer reads none of them from SQLite; a hit not kept is read from SQLite as
     * before. Answers are the same either way. 0: none kept. */
    size_t text_cache_bytes;
} mem_store_opts_t;

#define MEM_STORE_SCAN_HELPERS_MAX  64
#define MEM_STORE_GRAPH_BATCH_PAIRS ((size_t)1 << 27) /* opts.graph_batch_pairs */
#define MEM_STORE_GRAPH_WAIT_MS     10000             /* the default graph wait (--graph-wait) */

/* Open (create) the file, check it (PRAGMA quick_check), migrate the schema, load every
 * namespace into memory and start the writer. MEM_OK, MEM_ECORRUPT, MEM_ESTORAGE, ENOMEM. */
int mem_store_open(const mem_store_opts_t *opts, mem_store_t **out, mem_err_t *err);
/* Drain the write queue, stop the writer, checkpoint the WAL and close. NULL-safe. */
void mem_store_close(mem_store_t *st);

/* ---- writes: records executed by the writer thread ---- */

typedef enum mem_store_op_kind {
    MEM_STORE_OP_NS_CREATE,
    MEM_STORE_OP_NS_DROP,
    MEM_STORE_OP_INSERT,
    MEM_STORE_OP_DELETE,
    MEM_STORE_OP_COMPACT,
    MEM_STORE_OP_PATCH,  /* storage/patch.c */
    MEM_STORE_OP_IMPORT, /* storage/import.c; never a cluster log record */
    /* Cluster placement (storage/nssnap.c), local to one node, never log records:
     * NS_IMPORT replaces namespace ns with the copy in import_path (made by
     * mem_store_ns_export on another node) and sets its chain position to log_seq;
     * NS_FORGET drops ns here and forgets its chain position (it moved to other nodes). */
    MEM_STORE_OP_NS_IMPORT,
    MEM_STORE_OP_NS_FORGET,
} mem_store_op_kind_t;

/* What the writer makes of a segment as it appends it, made beforehand on the request's own
 * thread (mem_store_prepare): the terms of its text and the int8 codes of its vector. */
typedef struct mem_store_seg_prep mem_store_seg_prep_t;

typedef struct mem_store_seg_in {
    char id[MEM_STORE_ID_MAX + 1]; /* given or generated (UUIDv7) by the caller */
    bool ts_given;                 /* false: the writer uses max(now_ms, namespace newest) */
    int64_t ts_ms;                 /* Unix ms, when ts_given */
    const char *text;              /* NULL when absent; text_len bytes, UTF-8 */
    size_t text_len;
    const float *vec;   /* dim floats, already L2-normalised */
    const char *source; /* NULL when absent */
    size_t source_len;
    const char *metadata; /* compact JSON object text, NULL when absent */
    size_t metadata_len;
    const char *const *supersedes; /* n_supersedes NUL-terminated ids */
    size_t n_supersedes;
    const mem_store_seg_prep_t *prep; /* NULL: the writer makes them itself */
} mem_store_seg_in_t;

typedef struct mem_store_seg_out {
    int64_t seq;
    int64_t ts_ms;
    bool existed; /* an identical segment was already stored: nothing written */
} mem_store_seg_out_t;

/* IMPORT: the segments, read twice by the writer (every rule checked over all of them first,
 * then applied), so an import never sits in memory whole. */
typedef struct mem_store_import_src {
    void *ud;
    size_t dim;              /* floats per vector of every segment */
    int (*rewind)(void *ud); /* back to the first segment: MEM_OK or an error */
    /* 1 with the next segment (its strings and vector valid until the next call), its
     * archived flag and its 1-based line; 0 at the end; < 0 on a read failure. */
    int (*next)(void *ud, mem_store_seg_in_t *seg, bool *archived, uint64_t *line);
    /* Does the import hold id on a line before line? */
    bool (*has_id_before)(void *ud, const char *id, uint64_t line);
} mem_store_import_src_t;

typedef struct mem_store_op mem_store_op_t;
/* Called on the writer thread once op->rc and the outputs are final. */
typedef void (*mem_store_done_fn)(mem_store_op_t *op, void *ud);

struct mem_store_op {
    mem_store_op_kind_t kind;
    char ns[MEM_STORE_NS_MAX + 1];
    size_t dim;     /* NS_CREATE: the dimension; INSERT: floats per vector */
    bool no_graph;  /* NS_CREATE: the namespace keeps no coherence graph ("coherence": false) */
    int64_t now_ms; /* server clock when submitted */
    /* INSERT: segs[n_segs] in ingest order; outs[n_segs] filled by the writer. */
    const mem_store_seg_in_t *segs;
    mem_store_seg_out_t *outs;
    size_t n_segs;
    bool batch; /* INSERT: came as {"segments":[...]}: error fields read "segments[i].x"
                   (also when n_segs > 1); else "x" */
    /* INSERT: the embedder that made at least one segment's vector from its text
     * ("builtin", "openai:MODEL"; at most MEM_STORE_EMBEDDER_MAX bytes), NULL when every
     * vector was given by the client. The namespace records it at its first such insert;
     * an insert naming another embedder than the recorded one fails with MEM_EMISMATCH
     * (field "text"), writing nothing. IMPORT: the same, or the embedder the lines name
     * (an export's: what made their vectors); another than the recorded one fails with
     * MEM_EMISMATCH (field "embedder", line 1). */
    const char *embedder;
    /* DELETE: the id. */
    char id[MEM_STORE_ID_MAX + 1];
    /* COMPACT: ids to evict (those no longer active are skipped), archive or purge. */
    const char *const *evict_ids;
    size_t n_evict;
    bool purge;
    /* PATCH (id above): replace the metadata and/or the source of one segment; NULL clears.
     * Text, embedding and timestamp never change. */
    bool patch_metadata, patch_source;
    const char *metadata; /* compact JSON object text, metadata_len bytes, or NULL */
    size_t metadata_len;
    const char *source; /* source_len bytes, or NULL */
    size_t source_len;
    /* IMPORT: the source (all-or-nothing: one op, one savepoint) and its counts */
    mem_store_import_src_t *import;
    size_t n_imported, n_skipped;
    /* results */
    int rc; /* MEM_OK or MEM_E*, details in err */
    mem_err_t err;
    bool created;     /* NS_CREATE: created now (201) rather than existing (200);
                         INSERT: at least one segment was new (201) */
    size_t n_applied; /* COMPACT: ids actually evicted */
    /* private: owned by the store while queued */
    mem_store_done_fn _done;
    void *_ud;
    mem_store_op_t *_next;
    /* Cluster log (issue 7; leave NULL/0 in single-node mode). An op that is a replicated
     * log record names its stream and its sequence there. The writer then stores
     * (log_stream, log_seq) in the table applied_log inside the op's own savepoint, so the
     * position commits atomically with the record's rows; it is stored even when the op
     * fails with a client error (a deterministic outcome every replica shares). An op whose
     * log_seq is at or below the stored position is skipped: rc MEM_OK, log_skipped set,
     * nothing written (idempotent replay). An op whose log_seq is not the stored position
     * + 1 (when a position is stored) fails with MEM_EBUSY "log gap", writing nothing. */
    const char *log_stream; /* NUL-terminated, at most 63 bytes */
    uint64_t log_seq;
    bool log_skipped; /* result */
    /* Per-namespace chains (cluster placement: a node applies only some namespaces of a
     * stream, so stream positions are not dense here). With log_chain set, the record is the
     * one after log_prev in its namespace's chain (the namespace's previous record, 0 for
     * none): it is skipped (log_skipped) when the namespace's chain position is >= log_seq,
     * fails with MEM_EBUSY "log gap" (writing nothing) when log_prev is above that position,
     * else it is applied and the position becomes log_seq, in the op's savepoint. The stream
     * position then only grows (max), and no dense gap check applies. */
    bool log_chain;
    uint64_t log_prev;
    const char *import_path; /* NS_IMPORT: the namespace copy to load */
};

/* Prepared segments (mem_store_prepare): one allocation for a whole insert op. */
typedef struct mem_store_prep mem_store_prep_t;
/* Tokenise the text and quantise the vector of segs[0..n) (each vec final: dim floats,
 * normalised) as the writer would, and point each segs[i].prep at the result, so the one
 * writer thread only copies them in: the work spreads over the threads that decode
 * requests. *out owns them all; free it with mem_store_prep_free once the op is done.
 * MEM_OK, or MEM_ENOMEM with nothing set (the writer then makes them itself). Any thread. */
int mem_store_prepare(mem_store_t *st, mem_store_seg_in_t *segs, size_t n, size_t dim,
                      mem_store_prep_t **out);
void mem_store_prep_free(mem_store_prep_t *p); /* NULL-safe */

/* Queue op; the caller leaves op (and everything it points to) alone until done runs.
 * MEM_OK, or MEM_EBUSY when max_queue ops are waiting (done is then not called). */
int mem_store_submit(mem_store_t *st, mem_store_op_t *op, mem_store_done_fn done, void *ud);
/* Is the calling thread a store's writer (in a done callback, say)? The writer only hands
 * results back: whatever encodes an answer checks this and refuses to run there. */
bool mem_store_on_writer_thread(void);

/* Cluster log: the applied position of stream (0 when none). Any thread. */
uint64_t mem_store_log_applied(mem_store_t *st, const char *stream);
/* Cluster placement: the chain position of namespace ns (0 when none). Any thread. */
uint64_t mem_store_log_ns_applied(mem_store_t *st, const char *ns);
/* Call fn for every namespace with a chain position (under the store's queue lock: fn must
 * not call into the store). Any thread. */
void mem_store_log_ns_each(mem_store_t *st, void (*fn)(const char *ns, uint64_t seq, void *ud),
                           void *ud);
/* Cluster placement: write namespace ns alone (its row, its segments and every other row of
 * it, plus its chain position, all as of one committed transaction) to the new SQLite file
 * dest_path, which must not exist, on a connection of its own (the writer is not held).
 * *pos is that chain position; *bytes the file's size. MEM_OK, MEM_ENOTFOUND (no such
 * namespace here), MEM_ENOMEM, MEM_ESTORAGE, MEM_EFULL; on failure no file is left at
 * dest_path. Any thread but the event loop. */
int mem_store_ns_export(mem_store_t *st, const char *ns, const char *dest_path, uint64_t *pos,
                        uint64_t *bytes, mem_err_t *err);
/* Cluster snapshot: write a consistent copy of the whole database (segments, namespaces and
 * applied_log, as of one committed transaction) to dest_path, which must not exist
 * (VACUUM INTO on a connection of its own). Any thread but the event loop. */
int mem_store_snapshot(mem_store_t *st, const char *dest_path, mem_err_t *err);

/* ---- reads: any thread but the event loop ---- */

typedef struct mem_store_ns_stats {
    char name[MEM_STORE_NS_MAX + 1];
    size_t dim;
    uint64_t count;      /* stored, not archived (superseded included) */
    uint64_t superseded; /* superseded and not archived */
    uint64_t archived;
    bool empty; /* no stored segment: oldest/newest are meaningless */
    int64_t oldest_ms, newest_ms;
    bool coherence;       /* keeps a coherence graph */
    uint64_t graph_edges; /* exact only from mem_store_ns_stats_exact */
    uint32_t max_degree;
    /* The embedder recorded at the namespace's first insert of a vector made from text
     * ("builtin", "openai:MODEL"); "" while none was (client vectors only, or empty). */
    char embedder[MEM_STORE_EMBEDDER_MAX + 1];
} mem_store_ns_stats_t;

/* MEM_OK or MEM_ENOTFOUND. Does not wait for the coherence graph: graph_edges and max_degree
 * are those of the graph as far as it has caught up. */
int mem_store_ns_stats(mem_store_t *st, const char *ns, mem_store_ns_stats_t *out, mem_err_t *err);
/* The same for the event-loop thread: never waits; *held (nothing filled) when a write holds
 * the namespace exclusively. */
int mem_store_ns_stats_try(mem_store_t *st, const char *ns, mem_store_ns_stats_t *out, bool *held,
                           mem_err_t *err);
/* The same, exact: first waits until the graph covers every write acknowledged before the
 * call (at most opts.graph_wait_ms; then MEM_EBUSY, err->retry_after_s set). */
int mem_store_ns_stats_exact(mem_store_t *st, const char *ns, mem_store_ns_stats_t *out,
                             mem_err_t *err);
/* All namespaces by name; *out is malloc'd, the caller frees it. The _exact one waits for
 * each graph as mem_store_ns_stats_exact does (one deadline for the whole list). */
int mem_store_ns_list(mem_store_t *st, mem_store_ns_stats_t **out, size_t *n, mem_err_t *err);
int mem_store_ns_list_exact(mem_store_t *st, mem_store_ns_stats_t **out, size_t *n, mem_err_t *err);

typedef struct mem_store_segment {
    char *id;
    int64_t seq, ts_ms;
    char *text;     /* NULL when absent */
    char *source;   /* NULL when absent */
    char *metadata; /* JSON object text, NULL when absent */
    char **supersedes;
    size_t n_supersedes;
    char *superseded_by; /* NULL when not superseded */
    bool archived;
    float *embedding; /* dim floats, only when asked */
    size_t dim;
} mem_store_segment_t;

/* MEM_OK, MEM_ENOTFOUND (namespace or id). *out freed with mem_store_segment_free. */
int mem_store_get(mem_store_t *st, const char *ns, const char *id, bool with_embedding,
                  mem_store_segment_t **out, mem_err_t *err);
/* The same for the event-loop thread, through the try connection (busy timeout 0): *busy
 * (nothing out) when the file was busy or the connection in use; then call mem_store_get on
 * a worker. */
int mem_store_get_try(mem_store_t *st, const char *ns, const char *id, bool with_embedding,
                      mem_store_segment_t **out, bool *busy, mem_err_t *err);
void mem_store_segment_free(mem_store_segment_t *seg);

/* Which namespace of its name a listing page was read from (a cursor carries it). */
typedef struct mem_store_ns_ident {
    uint64_t incarnation; /* namespaces.incarnation; 0: none recorded (an older mnemod made or
                             copied the namespace) */
    int64_t created_ms;   /* namespaces.created_ms: in a cluster the creating record's clock,
                             the same on every holder; 0 when the row has none */
} mem_store_ns_ident_t;

typedef struct mem_store_list_req {
    int64_t after_seq;    /* only segments with seq > after_seq (0: from the start) */
    bool resume;          /* after_seq comes from a page of the namespace incarnation */
    uint64_t incarnation; /* with resume: the incarnation that page was listed from */
    bool created_known;   /* with resume: created_ms is that page's namespace's too */
    int64_t created_ms;
    size_t limit;               /* 1..MEM_STORE_LIST_MAX */
    int64_t since_ms, until_ms; /* inclusive; INT64_MIN / INT64_MAX when absent */
    const char *source;         /* NULL: any source; else only segments with this one */
    bool include_superseded, include_archived;
    bool with_embedding;
} mem_store_list_req_t;

#define MEM_STORE_LIST_MAX 1000

/* One page of the committed segments of ns in seq order: those after req->after_seq that
 * pass the filters, at most req->limit; *more is set when a further one passes them too.
 * *out (an array of *n segments) is freed with mem_store_segments_free; *ident is the
 * namespace's (the same on every node of a cluster, and different for a namespace of the
 * same name created after this one was deleted). The page is read in one SQLite snapshot, so
 * a concurrent write is either wholly in it or not at all. With req->resume, another
 * namespace than the page's is MEM_EINVAL (field "after"): seqs start again in a new
 * namespace, so the old cursor would page through it as if it went on. Incarnations tell
 * when both are recorded; when one is 0 (a namespace an older mnemod made or copied: during
 * a rolling upgrade some holders have its incarnation and others not) the creation times
 * tell, when req has one. MEM_OK, MEM_ENOTFOUND, MEM_EINVAL (limit, after), MEM_ENOMEM,
 * MEM_ESTORAGE. */
int mem_store_list(mem_store_t *st, const char *ns, const mem_store_list_req_t *req,
                   mem_store_segment_t ***out, size_t *n, bool *more, mem_store_ns_ident_t *ident,
                   mem_err_t *err);
void mem_store_segments_free(mem_store_segment_t **segs, size_t n);

/* Export: every stored segment of ns (archived and superseded included) in seq order, with
 * its embedding, read from one consistent snapshot taken at open (writes committed later are
 * not in it), one row at a time. A handle is used by one thread at a time (any thread but the
 * event loop). */
typedef struct mem_store_export mem_store_export_t;
/* MEM_OK, MEM_ENOTFOUND, MEM_ENOMEM, MEM_ESTORAGE. */
int mem_store_export_open(mem_store_t *st, const char *ns, mem_store_export_t **out,
                          mem_err_t *err);
/* 1 with *seg (free with mem_store_segment_free), 0 at the end, or < 0 (err set). */
int mem_store_export_next(mem_store_export_t *x, mem_store_segment_t **seg, mem_err_t *err);
size_t mem_store_export_dim(const mem_store_export_t *x);
/* The embedder the namespace recorded (mem_store_ns_stats_t.embedder) in the snapshot, NULL
 * when none: an import records it again, so the copy's text queries match the same way. */
const char *mem_store_export_embedder(const mem_store_export_t *x);
void mem_store_export_close(mem_store_export_t *x); /* NULL-safe */

typedef struct mem_store_query {
    mem_scan_params_t scan; /* scan.query has q_dim floats, normalised; scan.source ignored;
                               scan.lex and scan.text are the store's */
    size_t q_dim;           /* MEM_EDIM when it differs from the namespace's (vector, hybrid) */
    /* text, hybrid match (scan.match): the query text, tokenised and weighed against the
     * namespace's lexical index under its lock */
    const char *text;
    size_t text_len;
    mem_lexparams_t lex;
    const char *source; /* NULL: any source; else only segments with this source */
    size_t source_len;
    bool record_access;          /* count an access for each returned segment, remember the query */
    bool need_gates;             /* the hits' gates are shown (explain): wait for the graph */
    bool coherence_weight_given; /* the caller asked for scan.coherence_weight itself: > 0 on
                                    a namespace without a graph is MEM_EINVAL; a configured
                                    default is taken as 0 there */
    const mem_meta_filter_t *filter; /* NULL, or a metadata filter (core/meta.h) */
} mem_store_query_t;

typedef struct mem_store_result {
    mem_scan_hit_t hit;
    char *id;
    int64_t ts_ms;
    char *text;     /* NULL when absent */
    char *source;   /* NULL when absent */
    char *metadata; /* NULL when absent */
} mem_store_result_t;

/* Top-K of SPEC section 4. With coherence_weight > 0 or need_gates, first waits for the
 * graph as mem_store_ns_stats_exact does. Every hit comes with its text, source and
 * metadata: copied from the texts cache (opts.text_cache_bytes) while the scan's view is
 * held, and those it lacks read in one statement from one SQLite snapshot taken while the
 * view is held, so a segment deleted meanwhile never drops out of the answer.
 * MEM_OK, MEM_ENOTFOUND, MEM_EDIM, MEM_EINVAL, MEM_EBUSY, MEM_ENOMEM.
 * *out freed with mem_store_results_free; *kernel names the ISA used (static string). */
int mem_store_retrieve(mem_store_t *st, const char *ns, const mem_store_query_t *q,
                       mem_store_result_t **out, size_t *n, size_t *scanned, const char **kernel,
                       mem_err_t *err);
void mem_store_results_free(mem_store_result_t *res, size_t n);

/* The most text, source and metadata bytes a try reads for its answer (and the loop then
 * encodes): a larger answer is made on a worker. 256 KiB take well under a millisecond. */
#define MEM_STORE_TRY_MAX_TEXT (256u * 1024u)

/* Why a try gave up (mem_store_retrieve_try). */
typedef enum mem_store_try {
    MEM_STORE_TRY_DONE = 0, /* it ran: its rc and results are mem_store_retrieve's */
    MEM_STORE_TRY_LOCKED,   /* a write holds the namespace exclusively */
    MEM_STORE_TRY_GRAPH,    /* the read needs the coherence graph, which is behind */
    MEM_STORE_TRY_BUDGET,   /* the scan needs more than the work budget, or the answer's
                               texts more than MEM_STORE_TRY_MAX_TEXT */
    MEM_STORE_TRY_SQLITE,   /* the file was busy (or the try connection in use) */
    MEM_STORE_TRY_COUNT
} mem_store_try_t;

/* mem_store_retrieve for the event-loop thread: the same answer, or nothing, and it never
 * waits. The namespace's shared lock is only tried (*why LOCKED when a write holds it);
 * a read that needs the graph runs only if it is current (GRAPH); the scan never splits
 * across helpers and stops past work_budget vector components (core/scan.h: BUDGET; a
 * namespace whose last retrieve scored more gives up at once, without scanning); the
 * texts come through the store's own try connection, whose busy timeout is 0 (SQLITE).
 * In a WAL file a reader waits on no writer; a page missing from that connection's cache
 * is read from the file (the OS page cache as a rule; a cold disk is the one wait left).
 * The mutexes it takes (registry, read-connection pool, tokenizers, access counters,
 * graph counters) guard a few memory writes each, never I/O.
 * *why DONE: rc and results are final. Else MEM_OK with nothing out and nothing recorded
 * (access counts included): run mem_store_retrieve on a worker instead. One try at a
 * time holds the connection; a concurrent one gives up (SQLITE). */
int mem_store_retrieve_try(mem_store_t *st, const char *ns, const mem_store_query_t *q,
                           size_t work_budget, mem_store_try_t *why, mem_store_result_t **out,
                           size_t *n, size_t *scanned, const char **kernel, mem_err_t *err);

typedef struct mem_store_compact_req {
    mem_compact_policy_t policy;
    bool has_target;
    size_t target;
    double ratio; /* when !has_target: target = floor(ratio * active) */
    double alpha, beta, gamma, dedup_threshold;
    bool context_given;   /* false: the namespace's last 20 retrieve queries */
    const float *context; /* n_context * dim floats when context_given */
    size_t n_context;
    size_t context_dim; /* floats per context vector: must be the namespace's dim (the
                           namespace planned on, which may have been re-created since the
                           vectors were decoded), else MEM_EDIM */
} mem_store_compact_req_t;

/* Plan a compaction over the namespace's active segments (shared lock only), after waiting
 * for the graph as mem_store_ns_stats_exact does.
 * *evict_ids is malloc'd (array and strings), freed with mem_store_ids_free.
 * *before = active count. MEM_OK, MEM_ENOTFOUND, MEM_EDIM (context), MEM_ENOMEM. */
int mem_store_compact_plan(mem_store_t *st, const char *ns, const mem_store_compact_req_t *req,
                           char ***evict_ids, size_t *n_evict, size_t *before, mem_err_t *err);
void mem_store_ids_free(char **ids, size_t n);

typedef struct mem_store_metrics {
    uint64_t commits;           /* transactions committed (each one fsync with sync=full) */
    uint64_t op_commits;        /* those of them that held ops (not graph checkpoints alone) */
    uint64_t ops;               /* ops executed */
    double commit_seconds_sum;  /* time inside COMMIT */
    uint64_t commit_buckets[8]; /* commits <= 0.5, 1, 2, 5, 10, 25, 50, 100 ms (cumulative) */
    size_t queue_depth;         /* ops waiting now */
    size_t n_namespaces;
    uint64_t scans_split;       /* retrieves split across helper threads */
    uint64_t scan_parts_helped; /* parts of those run by a helper (the rest by the caller) */
    uint64_t graph_batches;     /* batches the graph's linker applied */
    uint64_t graph_rows;        /* rows it linked or unlinked */
    double graph_seconds;       /* time it spent on them */
    size_t graph_behind;        /* namespaces whose graph has not caught up yet */
    /* the answers' texts cache (opts.text_cache_bytes): hits answered from memory, hits read
     * from SQLite, entries pushed out to make room, and what it holds now */
    uint64_t text_cache_hits, text_cache_misses, text_cache_evictions;
    size_t text_cache_entries, text_cache_bytes;
    uint64_t group_waits;         /* groups the writer waited for (opts.group_wait_us) */
    uint64_t group_wait_timeouts; /* of those, the ones it started at the deadline */
} mem_store_metrics_t;
void mem_store_get_metrics(mem_store_t *st, mem_store_metrics_t *out);

/* Test hook: change the writer's PRAGMA max_page_count (0 = SQLite's default maximum);
 * applied before the next group commit. Any thread. */
void mem_store_set_max_page_count(mem_store_t *st, uint32_t pages);
/* Wait until every op queued so far has completed and the access statistics gathered so far
 * are written to SQLite. Any thread but the writer's (never from a done callback). */
void mem_store_sync(mem_store_t *st);
/* mem_store_sync, then wait until every coherence graph has caught up with those writes and
 * its checkpoint is written (and vacuums have run). A checkpoint that fails (out of memory, a
 * full disk) is tried again a few times; MEM_ESTORAGE when the graph is still behind or a
 * change unwritten then. For tests and tools; any thread but the writer's. */
int mem_store_settle(mem_store_t *st, mem_err_t *err);

/* ---- backup, restore, check (storage/backup.c): for `mnemod backup|restore|--check`,
 * each on a connection of its own, so they work from another process beside a server ---- */

/* Copy the database at db_path to out_path with the SQLite online backup API: one
 * consistent snapshot, taken while a server keeps writing (WAL: it is not blocked). The
 * copy is written to out_path.tmp-PID, made a single self-contained file (journal_mode
 * DELETE), fsync'ed and renamed over out_path (an existing file there is replaced only by
 * a complete copy). MEM_OK, MEM_ENOTFOUND (no db_path), MEM_EINVAL (out_path is db_path),
 * MEM_ECORRUPT, MEM_EFULL, MEM_EBUSY, MEM_ESTORAGE. */
int mem_store_backup(const char *db_path, const char *out_path, mem_err_t *err);
/* Replace the content of db_path (created when absent) with the backup in_path. in_path
 * must pass PRAGMA integrity_check and hold a mnemod schema this binary knows; db_path must
 * not be open anywhere (a running server): MEM_EBUSY, and nothing is touched. The copy runs
 * in one transaction of db_path under an exclusive lock, any old WAL of db_path is folded
 * in and removed first; a db_path SQLite cannot read at all is replaced whole.
 * MEM_OK, MEM_ENOTFOUND (no in_path), MEM_EINVAL (not a mnemod database / same file),
 * MEM_ECORRUPT (in_path fails the check), MEM_EBUSY, MEM_EFULL, MEM_ESTORAGE. */
int mem_store_restore(const char *db_path, const char *in_path, mem_err_t *err);
/* Called once per problem line of the integrity check. */
typedef void (*mem_store_check_fn)(const char *problem, void *ud);
/* PRAGMA integrity_check (full) on db_path: *n_problems = 0 when it answers "ok", else the
 * number of problem lines, each handed to fn (may be NULL); an unreadable header counts as
 * one problem. MEM_OK when the check ran; MEM_ENOTFOUND, MEM_ESTORAGE when it could not. */
int mem_store_check(const char *db_path, mem_store_check_fn fn, void *ud, size_t *n_problems,
                    mem_err_t *err);

#endif
