/* cluster_int.h - internals shared by the files of cluster/ (not a public API)
 * SPDX-License-Identifier: MIT
 *
 * Locks: cl->mu is the only lock of the module: never held across a call into NATS, a
 * store submit or a caller's callback; the store's position getters (which take its leaf
 * queue lock briefly) may be called under it, never the other way round. Every field marked (mu) is
 * guarded by it. Condition variables that wait on it: cv (applies, generic), pub_cv (publishers),
 * cu_cv (the catch-up worker), waits_cv (the min_seq waits), res_cv (the resolvers), and each
 * stream's wake_cv.
 */
#ifndef MEM_CLUSTER_CLUSTER_INT_H
#define MEM_CLUSTER_CLUSTER_INT_H

#ifdef MNEMOD_HAVE_NATS

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nats/nats.h>

#include "cluster/cluster.h"
#include "cluster/json_int.h"
#include "cluster/placement.h"
#include "cluster/record.h"

#define CL_KV_NODES     "mnemod_nodes"        /* heartbeats: key = node id */
#define CL_KV_MAP       "mnemod_placement"    /* ns.<hex> entries, drain.<id>, lease */
#define CL_SNAP_STREAM  "MNEMOD_SNAP"         /* per-namespace snapshots */
#define CL_NODE_MAX     MEM_CLUSTER_NODES_MAX /* nodes a node keeps track of */
#define CL_NS_BUCKETS   4096
#define CL_HEARTBEAT_MS 1000  /* node registry heartbeat period */
#define CL_ALIVE_MS     5000  /* a node whose heartbeat is older is not routed to */
#define CL_LEASE_MS     10000 /* the maintenance lease (rebalance, trim), renewed each beat */
#define CL_IDLE_POLL_MS 250   /* a fetcher with no wake-up looks for new records this often */
#define CL_SUBJECT_MAX  (16 + 2 * 64 + 1)
#define CL_HINTS        1024 /* per stream: recent (sequence, namespace) pairs from wake-ups */

enum cl_ns_state {
    CL_NS_NONE,      /* not placed here: records are passed over */
    CL_NS_CATCHUP,   /* placed here, being brought up to date by the catch-up worker */
    CL_NS_BOOTSTRAP, /* placed here, waiting for a snapshot (records it needs were trimmed) */
    CL_NS_LIVE,      /* placed here and up to date: served, written, applied by the fetcher */
    CL_NS_LEAVING,   /* moved away: still applied until leave_at_ms, then forgotten */
};

typedef struct cl_job cl_job_t;
typedef struct mem_cluster mem_cluster_t;

typedef struct cl_ns {
    struct cl_ns *hnext; /* hash chain */
    char name[MEM_STORE_NS_MAX + 1];
    size_t stream;
    char subject[CL_SUBJECT_MAX];
    /* the placement map's entry (mu) */
    bool in_map;
    uint64_t map_rev;
    char nodes[MEM_CLUSTER_PLACE_MAX][64];
    size_t n_nodes;
    char join[64]; /* a node bootstrapping to take drop's place, "" when none */
    char drop[64];
    bool pinned; /* placed by hand (POST /v1/cluster/move): the rebalancer leaves it */
    uint64_t epoch;
    /* this node's copy (mu) */
    int state;
    uint64_t applied;   /* every record of the namespace at or below this is applied here */
    uint64_t submitted; /* the fetcher: highest record handed to the store */
    uint64_t last;      /* the subject's last sequence as far as known; valid if last_known */
    bool last_known;
    bool verified;        /* LIVE and nothing before the fetcher's position was missed: the
                             stream's position then counts for this namespace too */
    bool bootstrap_first; /* joining: start from a fresh snapshot rather than the log */
    bool cu_queued;       /* in the catch-up queue */
    bool cu_again;        /* asked for again while being caught up */
    struct cl_ns *cu_next;
    int64_t leave_at_ms;  /* LEAVING: forget it after this (mono ms) */
    int64_t retry_at_ms;  /* a failed catch-up is tried again after this (mono ms) */
    bool forgetting;      /* LEAVING: the forget op is with the store */
    int64_t switch_at_ms; /* join == me, LIVE: when the map switch was last tried */
    char why[200];        /* what the catch-up last failed on, for /v1/cluster */
    /* writes from this node, in order, one published at a time (mu) */
    cl_job_t *wq_head, *wq_tail;
    bool wbusy, wready;
    struct cl_ns *rnext; /* ready list */
} cl_ns_t;

typedef struct cl_stream {
    mem_cluster_t *cl;
    size_t idx;
    char name[32];         /* MNEMOD_<i> */
    char filter[32];       /* mnemod.<i>.* */
    char wake_subject[48]; /* mnemod.wake.<i> */
    natsSubscription *wake_sub;
    pthread_t fetcher;
    bool fetcher_started;
    pthread_cond_t wake_cv; /* with mu */
    bool wake;              /* mu */
    uint64_t applied;       /* mu: every record at or below was applied or passed over here */
    size_t n_inflight;      /* mu: records the fetcher handed to the store, not completed */
    uint64_t pass_pos;      /* mu: highest record passed over while others were in flight */
    uint64_t seen;          /* mu: the highest record the fetcher decided about */
    size_t unqueued;        /* mu: records it decided to apply, not yet in the store's queue */
    uint64_t last_seq, first_seq, msgs, bytes; /* mu: refreshed from JetStream */
    char leader[64];                           /* mu */
    bool broken;                               /* mu: an apply failed: restart the fetcher */
    uint64_t restarts;                         /* mu */
    uint64_t trimmed_below; /* mu: the floor of this node's last trim of it (0: none) */
    struct cl_hint {        /* mu: the origin's wake-up names each new record's namespace, */
        uint64_t seq;       /* so a record of a namespace not placed here is passed over */
        char ns[MEM_STORE_NS_MAX + 1]; /* without being read */
    } * hints;
    uint64_t hint_skips; /* mu */
} cl_stream_t;

typedef struct cl_node {
    char id[64];
    char addr[300];
    int64_t heartbeat_ms, started_ms; /* wall clock of the node's last beat, its start */
    bool ready;                       /* it serves requests (its store is open) */
    bool draining;                    /* marked for removal: placement avoids it */
    bool deleted;                     /* left the registry */
    uint64_t *applied;                /* k stream positions it reported (for trimming) */
    char health[160];                 /* "" when healthy */
} cl_node_t;

struct cl_job {
    mem_cluster_t *cl;
    mem_store_op_t *op;
    mem_cluster_done_fn done;
    void *ud;
    char msgid[MEM_CLUSTER_MSGID_MAX];
    cl_ns_t *ns;
    int64_t deadline_ms; /* mono */
    uint64_t seq;        /* acknowledged sequence */
    uint64_t prev;       /* the namespace's previous record, as JetStream checked it */
    bool acked, applied, waiting;
    bool dup;    /* JetStream had it already (a retried publish): the fetchers apply it */
    bool direct; /* mu: the origin's own apply is queued in the store */
    int rc;
    mem_err_t err;
    cl_job_t *next;  /* the namespace's queue */
    cl_job_t *wnext; /* the waiters list (acked, not applied) */
};

/* A read waiting for min_seq (mem_cluster_wait_start), in cl->seq_waits (mu). */
typedef struct cl_wait {
    struct cl_wait *next;
    char name[MEM_STORE_NS_MAX + 1];
    uint64_t seq;
    int64_t deadline_ms; /* mono */
    bool reached;
    mem_cluster_waited_fn fn;
    void *ud;
} cl_wait_t;

/* A placement read asked for by routing (mem_cluster_resolve_start), in cl->res_head (mu). */
typedef struct cl_resolve {
    struct cl_resolve *next;
    char name[MEM_STORE_NS_MAX + 1];
    bool create;
    mem_cluster_resolved_fn fn;
    void *ud;
} cl_resolve_t;

struct mem_cluster {
    const mem_cfg_t *cfg;
    mem_store_t *st;
    natsOptions *nopts;
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv_nodes, *kv_map;
    kvWatcher *w_nodes, *w_map;
    /* t_pub[0..cfg->publishers) publish write records, each waiting for one ack */
    pthread_t t_wnodes, t_wmap, t_maint, t_catchup, t_waits, t_pub[MEM_CFG_PUBLISHERS_MAX];
    bool s_wnodes, s_wmap, s_maint, s_catchup, s_waits, s_pub[MEM_CFG_PUBLISHERS_MAX];
    pthread_t t_res[MEM_CLUSTER_RESOLVERS]; /* read placement entries for routing */
    bool s_res[MEM_CLUSTER_RESOLVERS];
    natsSubscription *ctl_sub; /* mnemod.ctl.<node id>: requests from other nodes */
    size_t k;
    cl_stream_t *streams;
    pthread_mutex_t mu;
    pthread_cond_t cv, pub_cv, cu_cv, waits_cv, res_cv;
    bool stop;                  /* mu */
    bool map_loaded;            /* mu: the watcher delivered every existing entry */
    bool nodes_loaded;          /* mu */
    cl_ns_t *ht[CL_NS_BUCKETS]; /* mu */
    size_t n_ns;                /* mu */
    cl_node_t nodes[CL_NODE_MAX];
    int64_t node_limit_logged_ms;      /* mu: a node left out of a full table, last logged */
    size_t n_nodes;                    /* mu */
    cl_ns_t *ready_head, *ready_tail;  /* mu: namespaces with a write to publish */
    cl_ns_t *cu_head, *cu_tail;        /* mu: namespaces to catch up */
    cl_ns_t *cu_current;               /* mu: being caught up now */
    cl_job_t *waiters;                 /* mu */
    cl_wait_t *seq_waits;              /* mu: reads waiting for a min_seq */
    size_t n_seq_waits;                /* mu */
    cl_resolve_t *res_head, *res_tail; /* mu: placement reads queued for the resolvers */
    size_t n_resolves;                 /* mu: queued or being read */
    size_t n_jobs;                     /* mu: accepted and not completed */
    size_t max_payload;                /* the NATS server's, read at connect */
    int64_t disconnected_ms;           /* mu: mono ms since the connection is down, 0 when up */
    bool lease_mine;                   /* mu: this node runs rebalance and trim */
    uint64_t lease_rev;
    int64_t last_trim_ms, last_rebalance_ms; /* maint thread */
    uint64_t trim_wanted;                    /* mu: a trim was asked for (POST, size) */
    char advertise[300];
    int64_t started_ms;
    uint64_t boot;
    uint64_t msg_ctr;   /* atomic */
    uint64_t route_ctr; /* atomic: spreads reads over a namespace's holders */
    /* counters (mu) */
    uint64_t n_writes, n_conflicts, n_pub_retries, n_pub_failures, n_apply_timeouts, n_applied,
        n_apply_failures, n_too_big, n_catchups, n_bootstraps, n_snapshots, n_trims,
        n_moves_started, n_moves_done, n_forgotten;
};

/* util (cluster.c) */
int64_t mem_cluster__wall_ms(void);
int64_t mem_cluster__mono_ms(void);
void mem_cluster__sleep_ms(int ms);
void mem_cluster__deadline(struct timespec *ts, int ms);
void mem_cluster__log(const char *level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
size_t mem_cluster__stream_of(const mem_cluster_t *cl, const char *ns);
void mem_cluster__hex(const char *ns, char *out, size_t cap);
bool mem_cluster__connected(mem_cluster_t *cl);

/* namespaces (placemap.c), mu held */
cl_ns_t *mem_cluster__ns_find(mem_cluster_t *cl, const char *name);
cl_ns_t *mem_cluster__ns_get(mem_cluster_t *cl, const char *name); /* creates; NULL: ENOMEM */
bool mem_cluster__ns_holds(const mem_cluster_t *cl, const cl_ns_t *ns, const char *node);
void mem_cluster__ns_catchup(mem_cluster_t *cl, cl_ns_t *ns, const char *why); /* queue it */
/* Effective position: for a LIVE namespace the stream's position also covers it. */
uint64_t mem_cluster__ns_pos(const mem_cluster_t *cl, const cl_ns_t *ns);
const cl_node_t *mem_cluster__node_find(const mem_cluster_t *cl, const char *id);
bool mem_cluster__node_alive(const cl_node_t *n, int64_t now_wall);
/* Eligible nodes for placement: alive, ready, not draining. ids point into cl->nodes. */
size_t mem_cluster__eligible(mem_cluster_t *cl, const char **ids, size_t cap);

/* placement map (placemap.c), mu not held: they talk to NATS */
int mem_cluster__map_start(mem_cluster_t *cl, mem_err_t *err);
/* Authoritative entry of ns from the KV bucket (created with rendezvous placement when
 * create and absent). Updates the cache. MEM_OK, MEM_ENOTFOUND, MEM_EBUSY. */
int mem_cluster__map_fetch(mem_cluster_t *cl, const char *ns, bool create, mem_err_t *err);
/* Compare-and-set the entry of ns (the cached revision) to the given placement. */
int mem_cluster__map_put(mem_cluster_t *cl, const char *ns, const char *const *nodes, size_t n,
                         const char *join, const char *drop, bool pinned, uint64_t rev,
                         mem_err_t *err);
void mem_cluster__map_stop(mem_cluster_t *cl);
/* Maintenance lease: true when this node holds it (acquired or renewed now). */
bool mem_cluster__lease(mem_cluster_t *cl);

/* fetching and applying (fetch.c) */
natsStatus mem_cluster__stream_start(mem_cluster_t *cl, cl_stream_t *s);
void *mem_cluster__catchup_main(void *arg);
void mem_cluster__wake(mem_cluster_t *cl, cl_stream_t *s);
/* A record's Nats-Expected-Last-Subject-Sequence header: its predecessor in the namespace. */
uint64_t mem_cluster__prev_of(natsMsg *m);

/* The thread that answers min_seq waits, and the resolver threads (placemap.c). */
void *mem_cluster__waits_main(void *arg);
void *mem_cluster__resolver_main(void *arg);

/* writes (write.c) */
void *mem_cluster__pub_main(void *arg);
/* mu held: a record with msgid was applied here at seq (results in applied_op, NULL when
 * it was a replay). Completes the matching job; returns it for the caller to finish. */
cl_job_t *mem_cluster__job_applied(mem_cluster_t *cl, const char *msgid, uint64_t seq,
                                   const mem_store_op_t *applied_op);
/* Call the job's callback and free it (mu not held). */
void mem_cluster__job_finish(mem_cluster_t *cl, cl_job_t *j);
/* mu held: jobs whose deadline passed, unlinked; the caller finishes them. */
cl_job_t *mem_cluster__jobs_expired(mem_cluster_t *cl, int64_t now_mono);

/* snapshots and trimming (snap.c) */
int mem_cluster__snap_ensure_stream(mem_cluster_t *cl, mem_err_t *err);
/* Export ns here and publish it as its latest snapshot; *covered: the position it covers. */
int mem_cluster__snap_publish(mem_cluster_t *cl, const char *ns, uint64_t *covered, mem_err_t *err);
/* Fetch ns's latest snapshot into a local file and import it. *pos: its covered position.
 * MEM_ENOTFOUND when there is none. Blocks. */
int mem_cluster__snap_restore(mem_cluster_t *cl, const char *ns, uint64_t min_covered,
                              uint64_t *pos, mem_err_t *err);
/* The covered position of ns's latest snapshot, or MEM_ENOTFOUND. */
int mem_cluster__snap_covered(mem_cluster_t *cl, const char *ns, uint64_t *covered, mem_err_t *err);
/* Ask a holder of ns to publish a fresh snapshot covering at least min_covered. */
int mem_cluster__snap_request(mem_cluster_t *cl, const char *ns, uint64_t min_covered,
                              uint64_t *covered, mem_err_t *err);
int mem_cluster__ctl_start(mem_cluster_t *cl, mem_err_t *err);
/* Hand a local op (import, forget) to the store and wait for its result. */
int mem_cluster__run_local(mem_cluster_t *cl, mem_store_op_t *op, mem_err_t *err);
/* One trim cycle (lease holder): snapshot what needs it, purge each stream. JSON summary
 * (malloc'd) or NULL. */
char *mem_cluster__trim_cycle(mem_cluster_t *cl, mem_err_t *err);

/* moves (move.c) */
void mem_cluster__rebalance(mem_cluster_t *cl);      /* lease holder, maint thread */
void mem_cluster__placement_tick(mem_cluster_t *cl); /* every node: join, leave, switch */
/* The first record of subject at or after from, by the stream leader (authoritative):
 * *seq = 0 when none. -1 when JetStream does not answer. */
int mem_cluster__next_by_subject(mem_cluster_t *cl, const char *stream, const char *subject,
                                 uint64_t from, uint64_t *seq);

#endif /* MNEMOD_HAVE_NATS */
#endif
